package io.hts.engine.run;

import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.timelimiter.TimeLimiter;
import io.hts.engine.exec.internal.ResourceDemand;
import io.hts.engine.exec.internal.ResourceLimiter;
import io.hts.engine.fault.FaultTolerance;
import io.hts.engine.fault.TimeLimitSpec;
import io.hts.engine.fault.internal.FaultResolution;
import io.hts.engine.graph.Device;
import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.GraphValidationException;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskBody;
import io.hts.engine.graph.TaskBuilder;
import io.hts.engine.graph.internal.CompiledGraph;
import io.hts.engine.policy.CostModel;
import io.hts.engine.run.internal.GraphExtension;
import io.hts.engine.run.internal.SchedulerExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A compiled graph bound to one scheduler: per task, what the hot path needs to know in one byte
 * of flags, and the resolved Resilience4j instances, resource demands and cost-model cells. Built
 * once per graph and scheduler (the second validation step: devices, resources, named
 * instances), shared by every run.
 *
 * <p>Also which tasks the scheduler's extension owns (the members of distributed groups), asked
 * once here ({@link GraphExtension#owns}) and kept in {@code owned}: null when it owns none (every
 * graph of a scheduler without a cluster), so the per-task path reads a null field and never asks
 * the extension; an owned task is never a {@link #CONTINUATION}.
 */
final class ExecutionPlan {

    static final int CPU = 1;
    static final int GPU = 2;
    static final int URGENT = 4;
    static final int RESOURCES = 8;
    static final int TIMED = 16;
    static final int RETRY = 32;
    /**
     * A GPU-only task without retries, time limit or resources whose predecessors are all GPU-only
     * tasks without retries or time limits (so a predecessor's failure is final and a time-out
     * still fails fast): it may be enqueued on the device as soon as they are enqueued,
     * ordered after their work by events, before they complete (see {@link GraphRun}).
     */
    static final int CHAINED = 64;
    /**
     * A task with a CPU body alone, one dependency, no resources and no urgency: when its
     * dependency succeeds on a worker, that worker may start it as its continuation, counting the
     * dependency in the same step (see {@link Placement#runsAsPlainCpu}); never a task an extension
     * owns (its attempts go to the extension). The sign bit of the byte.
     */
    static final int CONTINUATION = 128;

    final CompiledGraph graph;
    final byte[] flags;
    /** Every task's state word at a run's start, which each run copies ({@link DependencyManager#initialWords}). */
    final int[] initialWords;
    /**
     * Each task's CPU body (null for a barrier or a GPU-only task), in one dense array: a worker
     * starting a task reads one entry here instead of following the graph's task object to it.
     */
    private final TaskBody<?>[] cpuBodies;

    private final Retry @Nullable [] retries;
    /** The retries of GPU attempts where they differ from the CPU's (a device default). */
    private final Retry @Nullable [] gpuRetries;

    private final TimeLimiter @Nullable [] timeLimiters;
    private final TimeLimiter @Nullable [] gpuTimeLimiters;
    final ResourceDemand @Nullable [] demands;
    /** For dual-bodied tasks that declare GPU memory: their demand without it (for a CPU run). */
    private final ResourceDemand @Nullable [] cpuDemands;
    /** For tasks that declare GPU memory: that part of their demand alone, held as long as a result holding the memory. */
    private final ResourceDemand @Nullable [] gpuMemoryDemands;

    final CostModel.@Nullable Cell @Nullable [] costCells;
    final boolean anyRetry;
    /** The highest priority of an urgent root (priority above 0), or 0 when no root is urgent. */
    final int urgentRootPriority;

    final boolean anyChained;

    /** The extension's part of this graph (its distributed groups); null when it owns no task. */
    final @Nullable GraphExtension extension;
    /** Whether the extension owns each task; null when it owns none. */
    private final boolean @Nullable [] owned;

    /**
     * Makes the plan.
     *
     * @param schedulerExtension the scheduler's extension, or null: the tasks it owns run where it
     *     sends them (a distributed group's slice, on a member with a GPU for one with only a GPU
     *     body), so that this scheduler's lack of a GPU does not refuse them
     */
    ExecutionPlan(
            CompiledGraph graph,
            FaultTolerance faults,
            ResourceLimiter limiter,
            CostModel costs,
            boolean gpuBackend,
            @Nullable SchedulerExtension schedulerExtension) {
        this.graph = graph;
        int n = graph.size();
        this.initialWords = DependencyManager.initialWords(graph.topology());
        this.flags = new byte[n];
        this.cpuBodies = new TaskBody<?>[n];
        this.extension = schedulerExtension == null ? null : schedulerExtension.graph(graph);
        this.owned = ownedBy(extension, n);
        Retry[] r = null;
        Retry[] rg = null;
        TimeLimiter[] tl = null;
        TimeLimiter[] tlg = null;
        ResourceDemand[] rd = null;
        CostModel.Cell[] cells = null;
        List<String> gpuOnly = new ArrayList<>();
        FaultResolution resolution = new FaultResolution(faults);
        int urgentRoots = 0;
        for (int i = 0; i < n; i++) {
            Task<?> task = graph.task(i);
            int f = 0;
            boolean cpu = task.cpuBody() != null || task.isBarrier();
            boolean gpu = task.gpuBody() != null;
            cpuBodies[i] = task.cpuBody();
            if (cpu) {
                f |= CPU;
            }
            if (gpu && gpuBackend) {
                f |= GPU;
            }
            // a distributed member may run on another member's GPU: its GPU retry and time limit apply there
            boolean gpuAnywhere = gpu && (gpuBackend || owns(i));
            if (!cpu && !gpuAnywhere) {
                gpuOnly.add(task.name());
            }
            if (task.priority() > 0) {
                f |= URGENT;
                if (graph.topology().inDegree(i) == 0) {
                    urgentRoots = Math.max(urgentRoots, task.priority());
                }
            }
            if (!task.isBarrier()) {
                Retry retry = cpu ? resolution.retryFor(task, Device.CPU) : null;
                Retry gpuRetry = gpuAnywhere ? resolution.retryFor(task, Device.GPU) : null;
                r = store(r, i, retry, n, Retry[]::new);
                rg = store(rg, i, gpuRetry, n, Retry[]::new);
                if (retry != null || gpuRetry != null) {
                    f |= RETRY;
                }
                TimeLimiter limit = checked(task, cpu ? resolution.timeLimiterFor(task, Device.CPU) : null);
                TimeLimiter gpuLimit = checked(task, gpuAnywhere ? resolution.timeLimiterFor(task, Device.GPU) : null);
                tl = store(tl, i, limit, n, TimeLimiter[]::new);
                tlg = store(tlg, i, gpuLimit, n, TimeLimiter[]::new);
                if (limit != null || gpuLimit != null) {
                    f |= TIMED;
                }
            }
            // a distributed member with only a GPU body never runs on a scheduler without a GPU: its slices
            // take its resources on the members with GPUs, and this one need not declare them
            if (!task.resources().isEmpty() && (cpu || gpuBackend || !owns(i))) {
                if (rd == null) {
                    rd = new ResourceDemand[n];
                }
                try {
                    rd[i] = limiter.demand(task.resources(), "task '" + task.name() + "'");
                } catch (IllegalArgumentException ex) {
                    throw new GraphValidationException(
                            GraphValidationException.Problem.UNKNOWN_RESOURCE,
                            List.of(task.name()),
                            "graph '" + graph.name() + "': " + ex.getMessage());
                }
                f |= RESOURCES;
            }
            if ((f & CPU) != 0 && (f & GPU) != 0) {
                if (cells == null) {
                    cells = new CostModel.Cell[n];
                }
                cells[i] = costs.cell(task.statisticsName());
            }
            flags[i] = (byte) f;
        }
        if (!gpuOnly.isEmpty()) {
            throw new GraphValidationException(
                    GraphValidationException.Problem.NO_DEVICE,
                    gpuOnly,
                    "graph '" + graph.name() + "': " + describe(gpuOnly) + " only a GPU body, and this scheduler has"
                            + " no GPU backend; add a CPU body with bodies(cpu, gpu), or give the scheduler a GPU"
                            + " backend (module hts-gpu)");
        }
        this.retries = r;
        this.gpuRetries = rg;
        this.timeLimiters = tl;
        this.gpuTimeLimiters = tlg;
        this.demands = rd;
        ResourceDemand[] cd = null;
        ResourceDemand[] gd = null;
        if (rd != null) {
            for (int i = 0; i < n; i++) {
                Map<String, Long> amounts = graph.task(i).resources();
                if (rd[i] != null && amounts.containsKey(TaskBuilder.GPU_MEMORY)) {
                    Map<String, Long> rest = new java.util.LinkedHashMap<>(amounts);
                    rest.remove(TaskBuilder.GPU_MEMORY);
                    if (cd == null) {
                        cd = new ResourceDemand[n];
                        gd = new ResourceDemand[n];
                    }
                    String owner = "task '" + graph.name(i) + "'";
                    cd[i] = rest.isEmpty() ? null : limiter.demand(rest, owner);
                    gd[i] = limiter.demand(Map.of(TaskBuilder.GPU_MEMORY, amounts.get(TaskBuilder.GPU_MEMORY)), owner);
                }
            }
        }
        this.cpuDemands = cd;
        this.gpuMemoryDemands = gd;
        this.costCells = cells;
        this.anyRetry = r != null || rg != null;
        boolean chained = false;
        GraphTopology topology = graph.topology();
        this.urgentRootPriority = urgentRoots;
        for (int i = 0; i < n && gpuBackend; i++) {
            if (!gpuOnly(i) || has(i, TIMED | RESOURCES | RETRY) || topology.inDegree(i) == 0) {
                continue;
            }
            boolean all = true;
            for (int k = topology.predecessorStart(i), stop = topology.predecessorEnd(i); k < stop && all; k++) {
                int p = topology.predecessor(k);
                all = gpuOnly(p) && !has(p, TIMED | RETRY);
            }
            if (all) {
                flags[i] |= CHAINED;
                chained = true;
            }
        }
        this.anyChained = chained;
        for (int i = 0; i < n; i++) {
            if (has(i, CPU) && !has(i, GPU | RESOURCES | URGENT) && topology.inDegree(i) == 1 && !owns(i)) {
                flags[i] |= (byte) CONTINUATION;
            }
        }
    }

    /** A time limiter from an instance or a registry, checked against the accepted range of time limits. */
    private static @Nullable TimeLimiter checked(Task<?> task, @Nullable TimeLimiter limiter) {
        if (limiter == null) {
            return null;
        }
        String problem =
                TimeLimitSpec.rangeProblem(limiter.getTimeLimiterConfig().getTimeoutDuration());
        if (problem != null) {
            throw new GraphValidationException(
                    GraphValidationException.Problem.INVALID_SETTING,
                    List.of(task.name()),
                    "task '" + task.name() + "' of graph '" + task.graph().name() + "': time limiter '"
                            + limiter.getName() + "': " + problem);
        }
        return limiter;
    }

    /** Sets {@code array[i]}, allocating the array of {@code n} on the first non-null value; sparse arrays stay null. */
    private static <T> T @Nullable [] store(
            T @Nullable [] array, int i, @Nullable T value, int n, java.util.function.IntFunction<T[]> make) {
        if (value == null) {
            return array;
        }
        T[] out = array != null ? array : make.apply(n);
        out[i] = value;
        return out;
    }

    private static boolean @Nullable [] ownedBy(@Nullable GraphExtension extension, int n) {
        if (extension == null) {
            return null;
        }
        boolean[] owned = new boolean[n];
        for (int i = 0; i < n; i++) {
            owned[i] = extension.owns(i);
        }
        return owned;
    }

    /** Whether the scheduler's extension owns task {@code i} (its attempts go to the run's extension). */
    boolean owns(int i) {
        boolean[] o = owned;
        return o != null && o[i];
    }

    private boolean gpuOnly(int i) {
        return (flags[i] & (CPU | GPU)) == GPU;
    }

    boolean has(int i, int flag) {
        return (flags[i] & flag) != 0;
    }

    /** Task {@code i}'s CPU body, or null (a barrier, a GPU-only task). */
    @SuppressWarnings("unchecked")
    @Nullable
    TaskBody<Object> cpuBody(int i) {
        return (TaskBody<Object>) cpuBodies[i];
    }

    /**
     * The retry of a task's attempts on a device.
     *
     * @param i the task
     * @param device where the attempt ran
     * @return the retry, or {@code null}
     */
    @Nullable
    Retry retry(int i, Device device) {
        Retry[] from = device == Device.GPU ? gpuRetries : retries;
        return from == null ? null : from[i];
    }

    /**
     * The time limiter of a task's attempts on a device.
     *
     * @param i the task
     * @param device where the attempt runs
     * @return the limiter, or {@code null}
     */
    @Nullable
    TimeLimiter timeLimiter(int i, Device device) {
        TimeLimiter[] from = device == Device.GPU ? gpuTimeLimiters : timeLimiters;
        return from == null ? null : from[i];
    }

    /** The resources a task needs when it runs on the CPU although it declared GPU memory. */
    @Nullable
    ResourceDemand cpuDemand(int i) {
        return cpuDemands == null ? null : cpuDemands[i];
    }

    /** The GPU memory a task declares, as a demand of its own; null when it declares none. */
    @Nullable
    ResourceDemand gpuMemoryDemand(int i) {
        return gpuMemoryDemands == null ? null : gpuMemoryDemands[i];
    }

    @Nullable
    ResourceDemand demand(int i) {
        return demands == null ? null : demands[i];
    }

    CostModel.@Nullable Cell costCell(int i) {
        return costCells == null ? null : costCells[i];
    }

    /** The estimated cost of a task on a device: declared, else learned, else -1. */
    long estimate(int i, Device device) {
        long declared = graph.task(i).costNanos(device);
        if (declared >= 0) {
            return declared;
        }
        CostModel.Cell cell = costCell(i);
        return cell == null ? -1 : cell.estimate(device);
    }

    private static String describe(List<String> names) {
        int shown = Math.min(names.size(), 10);
        String list = String.join("', '", names.subList(0, shown));
        String more = names.size() > shown ? " and " + (names.size() - shown) + " more" : "";
        return (names.size() == 1 ? "task '" : "tasks '") + list + "'" + more + (names.size() == 1 ? " has" : " have");
    }
}
