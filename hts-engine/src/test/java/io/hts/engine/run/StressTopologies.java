package io.hts.engine.run;

import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.internal.CompiledGraph;

/** Small compiled graphs the jcstress tests of the run layer share (compiled once per JVM). */
final class StressTopologies {

    /** {@code a -> d, b -> d}: task 2 waits for tasks 0 and 1. */
    static final GraphTopology DIAMOND;

    /** One task, index 0. */
    static final GraphTopology SINGLE;

    /** {@code a -> b}: task 1 has one dependency, task 0. */
    static final GraphTopology PAIR;

    static {
        TaskGraph diamond = TaskGraph.named("diamond");
        var a = diamond.task("a").cpu(ctx -> 1);
        var b = diamond.task("b").cpu(ctx -> 2);
        diamond.task("d").after(a, b).cpu(ctx -> 3);
        DIAMOND = diamond.compile();
        TaskGraph single = TaskGraph.named("single");
        single.task("t").cpu(ctx -> 1);
        SINGLE = single.compile();
        TaskGraph pair = TaskGraph.named("pair");
        var first = pair.task("a").cpu(ctx -> 1);
        pair.task("b").after(first).cpu(ctx -> 2);
        PAIR = pair.compile();
    }

    private StressTopologies() {}

    /**
     * A scheduler for the tests that make runs and attempts of their own and drive them from the
     * actors: its one worker never runs their tasks. Made on first use, once per JVM.
     */
    static final class Idle {

        static final Scheduler SCHEDULER =
                Scheduler.builder().threads(1).threadNamePrefix("jcstress-hts-").build();

        /** The plan of a one-task graph on {@link #SCHEDULER}. */
        static final ExecutionPlan ONE_TASK;

        /** The plan of {@code a -> b} on {@link #SCHEDULER}. */
        static final ExecutionPlan PAIR;

        static {
            TaskGraph one = TaskGraph.named("one");
            one.task("t").cpu(ctx -> 1);
            ONE_TASK = plan(SCHEDULER, one);
            TaskGraph pair = TaskGraph.named("pair");
            var a = pair.task("a").cpu(ctx -> 1);
            pair.task("b").after(a).cpu(ctx -> 2);
            PAIR = plan(SCHEDULER, pair);
        }

        private Idle() {}

        /** A new run of {@code plan} on {@link #SCHEDULER}. */
        static GraphRun run(ExecutionPlan plan, long id) {
            return new GraphRun(SCHEDULER, plan, id, FailureMode.FAIL_FAST, false);
        }
    }

    /** The execution plan of {@code graph} on {@code scheduler} (compiled and bound as a run would be). */
    static ExecutionPlan plan(Scheduler scheduler, TaskGraph graph) {
        return scheduler.plan(CompiledGraph.of(graph));
    }

    /** A state manager over {@link #SINGLE} whose task is READY. */
    static DependencyManager readySingle() {
        DependencyManager deps = new DependencyManager(SINGLE);
        deps.tryReady(0);
        return deps;
    }
}
