package io.hts.engine.graph;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * N similar tasks made, connected, awaited and cancelled as one: the seed's batch dependencies,
 * batch results and batch cancel. Members are named {@code name[i]}.
 *
 * <pre>{@code
 * TaskGroup<Stats> shards = graph.group("shard", 16, (i, t) -> t.after(load)
 *         .cpu(ctx -> Stats.of(ctx.input(load).slice(i, 16))));
 * Task<Report> merge = graph.task("merge").after(shards).cpu(ctx -> Report.merge(ctx.inputs(shards)));
 * }</pre>
 *
 * <p>Depending on a group waits for every member; {@code ctx.inputs(group)} and
 * {@code run.results(group)} give the results in index order; {@code run.cancel(group)} cancels
 * every member and their descendants.
 *
 * @param <T> the members' result type
 */
public final class TaskGroup<T extends @Nullable Object> implements Dependency {

    private final TaskGraph graph;
    private final String name;
    private List<Task<T>> members = List.of();
    /** -1: runs where it is; 0: distributed, slices sized by the cost model; above 0: that slice size. */
    private volatile int sliceSize = -1;

    TaskGroup(TaskGraph graph, String name) {
        this.graph = graph;
        this.name = name;
    }

    /** The group's name; members are named {@code name[i]}. */
    public String name() {
        return name;
    }

    @Override
    public TaskGraph graph() {
        return graph;
    }

    /** The number of members. */
    public int size() {
        return members.size();
    }

    /**
     * One member.
     *
     * @param index from 0
     * @return the member
     */
    public Task<T> get(int index) {
        return members.get(index);
    }

    /** The members, in index order. */
    public List<Task<T>> members() {
        return members;
    }

    @Override
    @SuppressWarnings({"unchecked", "rawtypes"})
    public List<Task<?>> tasks() {
        return (List) members;
    }

    /**
     * Makes every member wait for more dependencies. Allowed until the graph is first submitted.
     *
     * @param dependencies tasks, groups or barriers of the same graph
     * @return this group
     */
    public TaskGroup<T> after(Dependency... dependencies) {
        for (Task<T> t : members) {
            t.after(dependencies);
        }
        return this;
    }

    /**
     * Marks the group as distributed: a scheduler built with a cluster engine
     * ({@code SchedulerBuilder.cluster}) runs its members in slices across the cluster's members,
     * sized from the cost model so that a remote round trip (about 0.8 ms on loopback, against about
     * 0.1 µs for a local dispatch) is a small share of a slice's work. Elsewhere it runs as any
     * group. Results land as the members' results: {@code ctx.inputs(group)} and
     * {@code run.results(group)} do not change.
     *
     * <p>What a distributed group's members need (docs/cluster.md): idempotent bodies (a slice whose
     * member is lost runs again elsewhere), inputs and results the scheduler's codec can encode, the
     * graph registered under its name on every member, and no dependency on one another. Members
     * with only a GPU body run on members with a GPU. Allowed until the graph is first submitted.
     *
     * @return this group
     */
    public TaskGroup<T> distributed() {
        graph.setSliceSize(this, 0);
        return this;
    }

    /**
     * Marks the group as distributed with a fixed slice size (see {@link #distributed()}).
     *
     * @param sliceSize members per slice, 1 or more
     * @return this group
     */
    public TaskGroup<T> distributed(int sliceSize) {
        if (sliceSize < 1) {
            throw new GraphValidationException(
                    GraphValidationException.Problem.INVALID_SETTING,
                    List.of(name),
                    "group '" + name + "' of graph '" + graph.name() + "': a slice size must be 1 or more, was "
                            + sliceSize + " (distributed() sizes slices from the cost model)");
        }
        graph.setSliceSize(this, sliceSize);
        return this;
    }

    /** Whether the group is distributed ({@link #distributed()}). */
    public boolean isDistributed() {
        return sliceSize >= 0;
    }

    /** The slice size it declares: 0 when the cost model sizes them, -1 when it is not distributed. */
    public int sliceSize() {
        return sliceSize;
    }

    void sliceSize(int size) {
        this.sliceSize = size;
    }

    void setMembers(List<Task<T>> members) {
        this.members = List.copyOf(members);
    }

    /**
     * Defines member {@code index} of a group.
     *
     * @param <T> the result type
     */
    @FunctionalInterface
    public interface Member<T extends @Nullable Object> {

        /**
         * Declares one member on the builder given.
         *
         * @param index the member's index, from 0
         * @param task the builder for member {@code index}; its body call must be returned
         * @return the task built by {@code task}
         */
        Task<T> define(int index, TaskBuilder task);
    }

    @Override
    public String toString() {
        return "group '" + name + "' (" + members.size() + " tasks" + (isDistributed() ? ", distributed" : "") + ")";
    }
}
