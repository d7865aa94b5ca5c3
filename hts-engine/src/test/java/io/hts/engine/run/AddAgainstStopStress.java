package io.hts.engine.run;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.hts.engine.graph.TaskCancelledException;
import io.hts.engine.graph.TaskState;
import java.util.List;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZZI_Result;

/**
 * A task is added while the run stops: the add is refused (r1 false), or the task is added and
 * cancelled at once, by the stop's sweep or by its adder (r2), once. The run's count (r3) ends at
 * one: the adder's own running task, which this test holds in its place.
 */
@JCStressTest
@Outcome(id = "false, true, 1", expect = ACCEPTABLE, desc = "refused: the run was stopping")
@Outcome(id = "true, true, 1", expect = ACCEPTABLE, desc = "added, and cancelled at once")
@Outcome(expect = FORBIDDEN, desc = "added and left waiting, or counted twice")
@State
public class AddAgainstStopStress {

    private final GraphRun run = StressTopologies.Idle.run(StressTopologies.Idle.ONE_TASK, 1);
    private final DynamicTasks dynamic = DynamicTasks.of(run);
    /** A dependency that never ends on its own (its hold is never given back): the added task cannot reach the pool. */
    private final DynamicTask<Integer> blocker = dynamic.newTask("blocker", ctx -> 1, new int[0], 1);

    private final TaskCancelledException cause = new TaskCancelledException("stopped");
    private volatile DynamicTask<Integer> added;

    public AddAgainstStopStress() {
        run.state.reserve(); // the adder's own running task
    }

    @Actor
    public void stop() {
        run.propagation.stop(cause);
    }

    @Actor
    public void add(ZZI_Result r) {
        try {
            added = dynamic.add(null, "added", ctx -> 2, List.of(blocker));
            r.r1 = true;
        } catch (TaskCancelledException refused) {
            r.r1 = false;
        }
    }

    @Arbiter
    public void after(ZZI_Result r) {
        DynamicTask<Integer> t = added;
        r.r2 = t == null || t.state() == TaskState.CANCELLED;
        r.r3 = run.state.pending();
    }
}
