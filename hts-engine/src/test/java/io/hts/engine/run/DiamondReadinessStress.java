package io.hts.engine.run;

import static org.openjdk.jcstress.annotations.Expect.ACCEPTABLE;
import static org.openjdk.jcstress.annotations.Expect.FORBIDDEN;

import io.hts.engine.graph.TaskState;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Arbiter;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZZZ_Result;

/**
 * The seed's diamond: the two predecessors of a task finish at once; exactly one of them makes it
 * READY (r1, r2), and it is READY afterwards (r3).
 */
@JCStressTest
@Outcome(
        id = {"true, false, true", "false, true, true"},
        expect = ACCEPTABLE,
        desc = "exactly one made it ready")
@Outcome(expect = FORBIDDEN, desc = "ready twice, or never")
@State
public class DiamondReadinessStress {

    private final DependencyManager deps = new DependencyManager(StressTopologies.DIAMOND);

    @Actor
    public void first(ZZZ_Result r) {
        r.r1 = deps.dependencyDone(2);
    }

    @Actor
    public void second(ZZZ_Result r) {
        r.r2 = deps.dependencyDone(2);
    }

    @Arbiter
    public void after(ZZZ_Result r) {
        r.r3 = deps.is(2, TaskState.READY) && deps.remaining(2) == 0;
    }
}
