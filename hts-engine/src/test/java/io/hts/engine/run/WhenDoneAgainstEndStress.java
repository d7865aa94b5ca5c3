package io.hts.engine.run;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.hts.engine.graph.TaskState;
import java.util.concurrent.CompletableFuture;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZZ_Result;

/**
 * {@code run.whenDone(task)} races the task's end: afterwards the future is complete (r1) with the
 * task's result (r2). The watcher publishes itself then reads the state; the ender changes the
 * state then reads the watcher flag: a Dekker pair, so at least one of them completes it.
 */
@JCStressTest
@Outcome(id = "true, true", expect = ACCEPTABLE, desc = "completed with the result")
@Outcome(expect = FORBIDDEN, desc = "the completion was missed, or the result is wrong")
@State
public class WhenDoneAgainstEndStress {

    private final DependencyManager deps = StressTopologies.readySingle();
    private final TaskResults results = new TaskResults(StressTopologies.SINGLE, deps);
    /** Whose callbacks the watchers' completions are (its worker stays idle). */
    private final TaskWatchers watchers = new TaskWatchers(results, StressTopologies.Idle.SCHEDULER);

    private volatile CompletableFuture<Object> future;

    public WhenDoneAgainstEndStress() {
        deps.tryStart(0);
    }

    @Actor
    public void watch() {
        future = watchers.watch(0);
    }

    @Actor
    public void end() {
        results.store(0, 42);
        deps.tryEnd(0, TaskState.SUCCEEDED);
        watchers.ended(0);
    }

    @Arbiter
    public void after(ZZ_Result r) {
        CompletableFuture<Object> f = future;
        r.r1 = f.isDone();
        r.r2 = f.isDone() && Integer.valueOf(42).equals(f.getNow(null));
    }
}
