package io.hts.engine.run;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.hts.engine.graph.TaskCancelledException;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.II_Result;

/**
 * A task is cancelled just as its attempt starts on a worker: the worker publishes that its body
 * runs, then wins READY to RUNNING, then looks at the task's cancel request (r1); the canceller
 * records its request, then interrupts the body if it runs (r2). A body must never begin unaware:
 * the runner sees the request, or the canceller interrupts it (or both). (The body does not end
 * here, so a canceller that comes late still finds it running; the interrupt goes to a thread
 * object that never runs, so no actor thread keeps an interrupt.)
 */
@JCStressTest
@Outcome(
        id = {"1, 0", "0, 1", "1, 1"},
        expect = ACCEPTABLE,
        desc = "the body knows it was cancelled")
@Outcome(id = "0, 0", expect = FORBIDDEN, desc = "the body begins neither interrupted nor seeing the request")
@State
public class InterruptAgainstBeginStress {

    private final GraphRun run = StressTopologies.Idle.run(StressTopologies.Idle.ONE_TASK, 1);
    private final TaskExecution attempt = new TaskExecution(run, 0, 1);
    private final TaskCancelledException cause = new TaskCancelledException("cancelled");
    private final Thread body = new Thread(() -> {}, "never started");

    public InterruptAgainstBeginStress() {
        run.deps.tryReady(0);
    }

    /** The order of {@code Attempts.runOnCpu}: publish the body, READY to RUNNING, look at the request. */
    @Actor
    public void runner(II_Result r) {
        attempt.beginBody(body);
        run.deps.tryStart(0);
        r.r1 = run.propagation.taskCancelRequest(0) != null ? 1 : 0;
    }

    @Actor
    public void canceller(II_Result r) {
        run.propagation.request(0, cause);
        r.r2 = attempt.interrupt() ? 1 : 0;
    }
}
