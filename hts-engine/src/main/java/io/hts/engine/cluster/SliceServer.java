package io.hts.engine.cluster;

import io.hts.engine.policy.DeviceHealth;
import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * Runs the slices other members send to this one: the scheduler's side of
 * {@link ClusterEngine#serve}. Implemented by the engine; a cluster engine calls it.
 */
public interface SliceServer {

    /**
     * Starts a slice on this member's scheduler without waiting for it. The stage fails with
     * {@link GraphRefusedException} when this member lacks the graph or has another version of it;
     * cancelling the returned stage's {@code toCompletableFuture()} cancels the slice.
     *
     * @param work the slice
     * @return its result
     */
    CompletionStage<SliceResult> run(SliceWork work);

    /** The slices running here per CPU slot, 0 when idle; published as {@link ClusterMember#load()}. */
    double load();

    /**
     * {@link #load()} by the id of the member that sent the slices (none when idle); published as
     * {@link ClusterMember#loadByCoordinator()}.
     */
    Map<String, Double> loadByCoordinator();

    /**
     * Whether this member takes slices, published as {@link ClusterMember#health()}: {@code DOWN}
     * once its scheduler is shut down (it refuses slices then; the engine is told through
     * {@link ClusterEngine#serverChanged()}), else {@code UP}.
     */
    DeviceHealth health();

    /** This member's CPU workers, its GPUs that are not DOWN and their free memory, published with its membership. */
    Capacity capacity();

    /**
     * What a member offers.
     *
     * @param cpuSlots CPU workers
     * @param gpus GPUs
     * @param freeDeviceMemory free GPU memory, in bytes
     */
    record Capacity(int cpuSlots, int gpus, long freeDeviceMemory) {}
}
