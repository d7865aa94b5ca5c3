package io.hts.engine.cluster.internal;

import io.hts.engine.graph.ForwardingTaskContext;
import io.hts.engine.graph.GpuTaskContext;
import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskContext;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What a distributed group's member sees when it runs on a worker member: its own name and group index, and
 * the inputs the coordinator sent instead of results of this member's run. Checks reads as the
 * engine's own context does (a direct dependency only). Immutable.
 */
class SliceContext extends ForwardingTaskContext {

    private final TaskGraph graph;
    private final GraphTopology topology;
    private final Task<?> member;
    private final Map<String, @Nullable Object> inputs;

    SliceContext(TaskContext delegate, TaskGraph graph, Task<?> member, Map<String, @Nullable Object> inputs) {
        super(delegate);
        this.graph = graph;
        this.topology = graph.compile();
        this.member = member;
        this.inputs = inputs;
    }

    @Override
    public int groupIndex() {
        return member.groupIndex();
    }

    /** The member's own name ({@code k[3]}), not that of its place in the slice's run here ({@code k[1]}). */
    @Override
    public String taskName() {
        return member.name();
    }

    @Override
    public <U extends @Nullable Object> U input(Task<U> upstream) {
        if (upstream.graph() != graph || !topology.dependsOn(member.index(), upstream.index())) {
            throw new IllegalArgumentException("task '" + member.name() + "' reads the result of " + upstream
                    + ", which is not one of its direct dependencies " + topology.predecessorNames(member.index())
                    + "; declare it with after(...)");
        }
        return sent(upstream);
    }

    @Override
    public <U extends @Nullable Object> List<U> inputs(TaskGroup<U> upstream) {
        List<U> out = new ArrayList<>(upstream.size());
        for (Task<U> m : upstream.members()) {
            if (upstream.graph() != graph || !topology.dependsOn(member.index(), m.index())) {
                throw new IllegalArgumentException("task '" + member.name() + "' reads the results of " + upstream
                        + ", but its member '" + m.name() + "' is not a direct dependency; declare it with"
                        + " after(group)");
            }
            out.add(sent(m));
        }
        return out;
    }

    /**
     * The same for a GPU body: the device and the backend's own context are the worker's (read
     * inputs through this context: the backend's own, from {@link #unwrap}, reads this member's run).
     */
    static final class OnGpu extends SliceContext implements GpuTaskContext {

        private final GpuTaskContext gpu;

        OnGpu(GpuTaskContext delegate, TaskGraph graph, Task<?> member, Map<String, @Nullable Object> inputs) {
            super(delegate, graph, member, inputs);
            this.gpu = delegate;
        }

        @Override
        public int deviceOrdinal() {
            return gpu.deviceOrdinal();
        }

        @Override
        public <C> C unwrap(Class<C> type) {
            return type.isInstance(this) ? type.cast(this) : gpu.unwrap(type);
        }
    }

    @SuppressWarnings("unchecked")
    private <U extends @Nullable Object> U sent(Task<U> upstream) {
        if (!inputs.containsKey(upstream.name())) {
            throw new IllegalStateException("task '" + member.name() + "' on this member reads " + upstream
                    + ", which its coordinator did not send; this is a bug in HTS");
        }
        return (U) inputs.get(upstream.name());
    }
}
