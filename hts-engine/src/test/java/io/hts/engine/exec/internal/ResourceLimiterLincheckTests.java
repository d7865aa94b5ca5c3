package io.hts.engine.exec.internal;

import io.hts.engine.exec.internal.ResourceLimiter.Waiting;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import kotlin.Unit;
import kotlin.jvm.functions.Function1;
import kotlin.reflect.jvm.ReflectJvmMapping;
import org.jetbrains.lincheck.datastructures.DSLScenarioBuilder;
import org.jetbrains.lincheck.datastructures.DSLThreadScenario;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;

/**
 * Lincheck model checking of {@link ResourceLimiter}: every interleaving Lincheck explores must be
 * linearizable against the limiter run sequentially, and after it the invariants hold
 * ({@link #invariantsHold}).
 *
 * <p>Three kinds of demand share two resources: A = {x=2}, B = {x=1, y=1}, C = {y=2} (capacity 2
 * each). Each kind's operations form a non-parallel group, so one thread owns that kind's
 * bookkeeping (what it holds, its queued handles) and every operation is valid in every
 * interleaving: a release returns only what that thread was granted (taken at once, or claimed by
 * a cancel that lost to the grant: the caller then owns the demand). Continuations only count their
 * runs, so a grant's continuation running on another thread after the lock is not observed by any
 * operation's result; the validation checks it ran exactly once.
 *
 * <p>Starvation is exercised with small overtake limits: 1 (every skipped waiter starves at once)
 * and 2 (one overtake first). Random scenarios rarely line up a starving waiter, a waiter it
 * blocks and a race on both, so three scenarios are written out: a cancel against the grant of
 * the same waiter, and the withdrawal of a starving waiter against a release (each unblocks the
 * waiter behind it). Checking all of it takes about 30 s.
 */
@Param(name = "resource", gen = IntGen.class, conf = "0:1")
public class ResourceLimiterLincheckTests {

    private static final String[] RESOURCES = {"x", "y"};
    /** The overtake limit of the limiters the next check creates (set by each test before it). */
    private static volatile int maxOvertakes = 1;

    /** One queued acquisition and the runs of its continuation. */
    private static final class Queued {
        final Waiting handle;
        final AtomicInteger runs;

        Queued(Waiting handle, AtomicInteger runs) {
            this.handle = handle;
            this.runs = runs;
        }
    }

    private final ResourceLimiter limiter;
    private final ResourceDemand[] kinds;
    /** Per kind, touched only by that kind's thread: demands held, handles queued, next to cancel. */
    private final int[] held = new int[3];

    private final List<List<Queued>> queued = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
    private final int[] cancelled = new int[3];

    public ResourceLimiterLincheckTests() {
        Map<String, Long> caps = new LinkedHashMap<>();
        caps.put("x", 2L);
        caps.put("y", 2L);
        limiter = new ResourceLimiter(caps, maxOvertakes);
        Map<String, Long> b = new LinkedHashMap<>();
        b.put("x", 1L);
        b.put("y", 1L);
        kinds = new ResourceDemand[] {
            limiter.demand(Map.of("x", 2L), "A"), limiter.demand(b, "B"), limiter.demand(Map.of("y", 2L), "C")
        };
    }

    private boolean tryAcquire(int kind) {
        boolean taken = limiter.tryAcquire(kinds[kind]);
        held[kind] += taken ? 1 : 0;
        return taken;
    }

    /** True when taken at once; false when queued. */
    private boolean acquireOrWait(int kind) {
        AtomicInteger runs = new AtomicInteger();
        Waiting w = limiter.acquireOrWait(kinds[kind], runs::incrementAndGet);
        if (w == null) {
            held[kind]++;
            return true;
        }
        queued.get(kind).add(new Queued(w, runs));
        return false;
    }

    /** Withdraws the oldest queued handle of the kind: 1 withdrawn, 0 granted first (now held), -1 none. */
    private int cancel(int kind) {
        List<Queued> q = queued.get(kind);
        if (cancelled[kind] == q.size()) {
            return -1;
        }
        if (q.get(cancelled[kind]++).handle.cancel()) {
            return 1;
        }
        held[kind]++;
        return 0;
    }

    private boolean release(int kind) {
        if (held[kind] == 0) {
            return false;
        }
        held[kind]--;
        limiter.release(kinds[kind]);
        return true;
    }

    @Operation(nonParallelGroup = "A")
    public boolean tryAcquireA() {
        return tryAcquire(0);
    }

    @Operation(nonParallelGroup = "A")
    public boolean acquireOrWaitA() {
        return acquireOrWait(0);
    }

    @Operation(nonParallelGroup = "A")
    public int cancelA() {
        return cancel(0);
    }

    @Operation(nonParallelGroup = "A")
    public boolean releaseA() {
        return release(0);
    }

    @Operation(nonParallelGroup = "B")
    public boolean tryAcquireB() {
        return tryAcquire(1);
    }

    @Operation(nonParallelGroup = "B")
    public boolean acquireOrWaitB() {
        return acquireOrWait(1);
    }

    @Operation(nonParallelGroup = "B")
    public int cancelB() {
        return cancel(1);
    }

    @Operation(nonParallelGroup = "B")
    public boolean releaseB() {
        return release(1);
    }

    @Operation(nonParallelGroup = "C")
    public boolean tryAcquireC() {
        return tryAcquire(2);
    }

    @Operation(nonParallelGroup = "C")
    public boolean acquireOrWaitC() {
        return acquireOrWait(2);
    }

    @Operation(nonParallelGroup = "C")
    public int cancelC() {
        return cancel(2);
    }

    @Operation(nonParallelGroup = "C")
    public boolean releaseC() {
        return release(2);
    }

    @Operation
    public long available(@Param(name = "resource") int resource) {
        return limiter.available(RESOURCES[resource]);
    }

    @Operation
    public int waiting() {
        return limiter.waiting();
    }

    /**
     * The limiter's own invariants; each continuation ran once if granted and never otherwise;
     * what is taken of each resource is exactly what the threads hold plus the granted, unclaimed
     * waiters; the waiting count is the queued handles still waiting.
     */
    @Validate
    public void invariantsHold() {
        limiter.checkInvariants();
        long[] taken = new long[RESOURCES.length];
        int stillWaiting = 0;
        for (int k = 0; k < kinds.length; k++) {
            List<Queued> q = queued.get(k);
            for (int i = 0; i < q.size(); i++) {
                ResourceWaiter w = (ResourceWaiter) q.get(i).handle;
                int runs = q.get(i).runs.get();
                if (runs != (w.granted() ? 1 : 0)) {
                    throw new IllegalStateException(w + " ran its continuation " + runs + " times");
                }
                if (i >= cancelled[k] && w.granted()) {
                    add(taken, kinds[k], 1);
                }
                stillWaiting += !w.granted() && !w.cancelled() ? 1 : 0;
            }
            add(taken, kinds[k], held[k]);
        }
        for (int r = 0; r < RESOURCES.length; r++) {
            long used = limiter.capacity(RESOURCES[r]) - limiter.available(RESOURCES[r]);
            if (used != taken[r]) {
                throw new IllegalStateException(used + " of " + RESOURCES[r] + " taken but " + taken[r] + " held");
            }
        }
        if (limiter.waiting() != stillWaiting) {
            throw new IllegalStateException(limiter.waiting() + " waiting, " + stillWaiting + " handles waiting");
        }
    }

    private static void add(long[] taken, ResourceDemand d, int times) {
        for (int r = 0; r < RESOURCES.length; r++) {
            taken[r] += times * d.amount(RESOURCES[r]);
        }
    }

    /** A scenario operation, by method name (Lincheck's DSL takes Kotlin function references). */
    private static void op(DSLThreadScenario thread, String method) {
        try {
            thread.actor(Objects.requireNonNull(
                    ReflectJvmMapping.getKotlinFunction(ResourceLimiterLincheckTests.class.getMethod(method))));
        } catch (NoSuchMethodException ex) {
            throw new IllegalArgumentException(ex);
        }
    }

    /** A thread of a scenario: its operations, by method name. */
    private static Function1<DSLThreadScenario, Unit> thread(String[] methods) {
        return thread -> {
            for (String m : methods) {
                op(thread, m);
            }
            return Unit.INSTANCE;
        };
    }

    /** A scenario: the initial part, then one thread per array of the parallel part (no post part). */
    private static Function1<DSLScenarioBuilder, Unit> scenario(String[] initial, String[]... threads) {
        return b -> {
            b.initial(thread(initial));
            b.parallel(p -> {
                for (String[] t : threads) {
                    p.thread(thread(t));
                }
                return Unit.INSTANCE;
            });
            return Unit.INSTANCE;
        };
    }

    private static String[] ops(String... methods) {
        return methods;
    }

    private static ModelCheckingOptions options(int iterations) {
        return new ModelCheckingOptions()
                .threads(3)
                .actorsPerThread(2)
                .actorsBefore(3)
                .actorsAfter(1)
                .iterations(iterations)
                .invocationsPerIteration(100);
    }

    /**
     * Random scenarios, plus (with every skipped waiter starving at once) the races the grant pass
     * must get right: a cancel against the grant of the same waiter; the withdrawal of a starving
     * waiter against a release, each of which unblocks the waiter behind it.
     */
    @Test
    void modelCheckStarvingAfterOneSkip() {
        maxOvertakes = 1;
        String[] bStarves = ops("tryAcquireC", "tryAcquireA", "acquireOrWaitB", "releaseA");
        String[] bStarvesBlockingA = ops("tryAcquireC", "tryAcquireA", "acquireOrWaitB", "releaseA", "acquireOrWaitA");
        options(3)
                .addCustomScenario(scenario(ops("tryAcquireA", "acquireOrWaitB"), ops("releaseA"), ops("cancelB")))
                .addCustomScenario(
                        scenario(bStarves, ops("acquireOrWaitA"), ops("cancelB", "releaseB"), ops("releaseC")))
                .addCustomScenario(scenario(bStarvesBlockingA, ops("waiting"), ops("cancelB"), ops("releaseC")))
                .check(this.getClass());
    }

    @Test
    void modelCheckStarvingAfterTwoSkips() {
        maxOvertakes = 2;
        options(4).check(this.getClass());
    }
}
