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
 * {@link InterruptAgainstBeginStress} for a continuation: the attempt of a task with one dependency
 * starts by counting that dependency and starting in one step (CREATED to RUNNING), after
 * publishing that its body runs, then looks at the task's cancel request (r1); the canceller
 * records its request, then interrupts the body if it runs (r2). A body must never begin unaware.
 */
@JCStressTest
@Outcome(
        id = {"1, 0", "0, 1", "1, 1"},
        expect = ACCEPTABLE,
        desc = "the body knows it was cancelled")
@Outcome(id = "0, 0", expect = FORBIDDEN, desc = "the body begins neither interrupted nor seeing the request")
@State
public class InterruptAgainstContinuationStartStress {

    private final GraphRun run = StressTopologies.Idle.run(StressTopologies.Idle.PAIR, 1);
    private final TaskExecution attempt = TaskExecution.countingDependency(run, 1);
    private final TaskCancelledException cause = new TaskCancelledException("cancelled");
    private final Thread body = new Thread(() -> {}, "never started");

    /** The order of {@code Attempts.runOnCpu} for such an attempt: publish the body, count and start, look. */
    @Actor
    public void runner(II_Result r) {
        attempt.beginBody(body);
        if (attempt.countsDependency()) {
            run.deps.dependencyDoneAndStart(1);
        }
        r.r1 = run.propagation.taskCancelRequest(1) != null ? 1 : 0;
    }

    @Actor
    public void canceller(II_Result r) {
        run.propagation.request(1, cause);
        r.r2 = attempt.interrupt() ? 1 : 0;
    }
}
