package io.hts.engine.graph;

import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.timelimiter.TimeLimiter;
import io.hts.engine.fault.RetrySpec;
import io.hts.engine.fault.TimeLimitSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Declares one task: its dependencies and settings, then its body. The body call ({@link #cpu},
 * {@link #gpu} or {@link #bodies}) adds the task to the graph and returns its typed handle:
 *
 * <pre>{@code
 * Task<Table> load = graph.task("load").cpu(ctx -> Table.read(path));
 * Task<Report> merge = graph.task("merge").after(load).retries(2).timeout(Duration.ofSeconds(5))
 *         .cpu(ctx -> Report.of(ctx.input(load)));
 * }</pre>
 *
 * <p>Every setting is checked when it is made, with an exception naming the task; nothing is
 * added to the graph until the body call succeeds.
 */
public final class TaskBuilder {

    /**
     * The resource name for device memory in bytes ({@code resource(GPU_MEMORY, bytes)}): a GPU task
     * that declares it is dispatched once that much is free (and, with
     * {@code MemoryShortage.RUN_ON_CPU}, runs its CPU body instead of waiting).
     */
    public static final String GPU_MEMORY = "gpu-memory";

    private final TaskGraph graph;
    final String name;
    final @Nullable TaskGroup<?> group;
    final int groupIndex;
    final List<Object> deps = new ArrayList<>(2);
    int priority;

    @Nullable
    RetrySpec retry;

    @Nullable
    TimeLimitSpec timeLimit;

    long cpuCostNanos = -1;
    long gpuCostNanos = -1;
    int gpuOrdinal = -1;
    final Map<String, Long> resources = new LinkedHashMap<>(2);
    private boolean built;

    TaskBuilder(TaskGraph graph, String name, @Nullable TaskGroup<?> group, int groupIndex) {
        this.graph = graph;
        this.name = name;
        this.group = group;
        this.groupIndex = groupIndex;
    }

    /** The name the task will have. */
    public String name() {
        return name;
    }

    /**
     * Makes the task wait for other tasks, every member of groups, or barriers.
     *
     * @param dependencies what to wait for; all must belong to the same graph
     * @return this builder
     */
    public TaskBuilder after(Dependency... dependencies) {
        for (Dependency d : dependencies) {
            deps.add(Objects.requireNonNull(d, () -> "task '" + name + "': a dependency is null"));
        }
        return this;
    }

    /**
     * Makes the task wait for every task in a collection.
     *
     * @param dependencies tasks of the same graph
     * @return this builder
     */
    public TaskBuilder after(Iterable<? extends Dependency> dependencies) {
        for (Dependency d : dependencies) {
            deps.add(Objects.requireNonNull(d, () -> "task '" + name + "': a dependency is null"));
        }
        return this;
    }

    /**
     * Makes the task wait for tasks, groups or barriers named here, resolved when the graph is
     * first submitted (they may be declared later).
     *
     * @param names names in the same graph
     * @return this builder
     */
    public TaskBuilder after(String... names) {
        for (String n : names) {
            deps.add(Objects.requireNonNull(n, () -> "task '" + name + "': a dependency name is null"));
        }
        return this;
    }

    /**
     * The priority: tasks with a higher priority run before every queued task of lower priority.
     * 0 (the default) is normal work; positive priorities go through the pool's priority lane.
     *
     * @param priority 0 or more
     * @return this builder
     */
    public TaskBuilder priority(int priority) {
        if (priority < 0) {
            throw invalid("priority must be 0 (normal) or more (urgent), was " + priority);
        }
        this.priority = priority;
        return this;
    }

    /**
     * Pins the task's GPU attempts to one device of a host with several (its data lives there, or a
     * data-parallel split puts one part on each device). Without it the GPU backend places the task
     * on the device holding most of its inputs, or the least loaded one. A pinned task whose device
     * is down runs on the CPU if it has a CPU body, or fails.
     *
     * @param ordinal the CUDA device ordinal, 0 or more
     * @return this builder
     */
    public TaskBuilder onGpu(int ordinal) {
        if (ordinal < 0) {
            throw invalid("a GPU ordinal is 0 or more, was " + ordinal);
        }
        this.gpuOrdinal = ordinal;
        return this;
    }

    /**
     * A time limit per attempt. Past it the attempt fails with a {@code TimeoutException}, its
     * thread is interrupted, and the task is retried or fails (its descendants are cancelled). The
     * body keeps its resources until it really returns, and is reported as abandoned until then.
     *
     * @param timeout from 1 ms to {@link TimeLimitSpec#MAXIMUM} (100 years)
     * @return this builder
     * @throws GraphValidationException naming the task, the setting and the accepted range
     */
    public TaskBuilder timeout(Duration timeout) {
        Objects.requireNonNull(timeout, "timeout");
        String problem = TimeLimitSpec.rangeProblem(timeout);
        if (problem != null) {
            throw invalid(problem);
        }
        this.timeLimit = TimeLimitSpec.of(timeout);
        return this;
    }

    /**
     * A Resilience4j time limiter for every attempt.
     *
     * @param limiter the limiter
     * @return this builder
     */
    public TaskBuilder timeout(TimeLimiter limiter) {
        this.timeLimit = TimeLimitSpec.of(limiter);
        return this;
    }

    /**
     * A time limiter from the scheduler's {@code TimeLimiterRegistry}, by instance name.
     *
     * @param instanceName the name
     * @return this builder
     */
    public TaskBuilder timeLimiter(String instanceName) {
        checkInstanceName(instanceName, "time limiter", "TimeLimiterRegistry");
        this.timeLimit = TimeLimitSpec.named(instanceName);
        return this;
    }

    /**
     * No time limit, even when the scheduler has a default one.
     *
     * @return this builder
     */
    public TaskBuilder noTimeout() {
        this.timeLimit = TimeLimitSpec.none();
        return this;
    }

    /**
     * Retries after a failure, waiting the scheduler's default backoff before each.
     *
     * @param retries retries after the first attempt, from 0 to {@link RetrySpec#MAXIMUM_RETRIES}
     * @return this builder
     */
    public TaskBuilder retries(int retries) {
        checkRetries(retries);
        this.retry = RetrySpec.retries(retries, (IntervalFunction) null);
        return this;
    }

    /**
     * Retries after a failure with a fixed backoff. The task is re-queued after the backoff; no
     * thread waits.
     *
     * @param retries retries after the first attempt, from 0 to {@link RetrySpec#MAXIMUM_RETRIES}
     * @param backoff the wait before each retry, from 0 to {@link RetrySpec#MAXIMUM_BACKOFF} (100 years)
     * @return this builder
     * @throws GraphValidationException naming the task, the setting and the accepted range
     */
    public TaskBuilder retries(int retries, Duration backoff) {
        checkRetries(retries);
        String problem = RetrySpec.backoffProblem(Objects.requireNonNull(backoff, "backoff"));
        if (problem != null) {
            throw invalid(problem);
        }
        this.retry = RetrySpec.retries(retries, backoff);
        return this;
    }

    /**
     * Retries after a failure with any Resilience4j backoff, e.g.
     * {@code IntervalFunction.ofExponentialBackoff(Duration.ofMillis(10), 2)}.
     *
     * @param retries retries after the first attempt, from 0 to {@link RetrySpec#MAXIMUM_RETRIES}
     * @param backoff the wait before each retry
     * @return this builder
     */
    public TaskBuilder retries(int retries, IntervalFunction backoff) {
        checkRetries(retries);
        this.retry = RetrySpec.retries(retries, Objects.requireNonNull(backoff, "backoff"));
        return this;
    }

    /**
     * Retries as a Resilience4j configuration says (attempts, backoff, which exceptions retry).
     *
     * @param config the configuration
     * @return this builder
     */
    public TaskBuilder retry(RetryConfig config) {
        this.retry = RetrySpec.of(config);
        return this;
    }

    /**
     * Retries through a Resilience4j retry instance.
     *
     * @param retry the instance
     * @return this builder
     */
    public TaskBuilder retry(Retry retry) {
        this.retry = RetrySpec.of(retry);
        return this;
    }

    /**
     * Retries through an instance of the scheduler's {@code RetryRegistry}, by name.
     *
     * @param instanceName the name
     * @return this builder
     */
    public TaskBuilder retry(String instanceName) {
        checkInstanceName(instanceName, "retry", "RetryRegistry");
        this.retry = RetrySpec.named(instanceName);
        return this;
    }

    /**
     * The estimated cost on every device the task can run on, used by the policies instead of the
     * learned estimate.
     *
     * @param estimate 0 or more, at most {@code Long.MAX_VALUE} nanoseconds
     * @return this builder
     */
    public TaskBuilder cost(Duration estimate) {
        long nanos = checkCost(estimate);
        this.cpuCostNanos = nanos;
        this.gpuCostNanos = nanos;
        return this;
    }

    /**
     * The estimated cost on one device.
     *
     * @param device the device
     * @param estimate 0 or more, at most {@code Long.MAX_VALUE} nanoseconds
     * @return this builder
     */
    public TaskBuilder cost(Device device, Duration estimate) {
        long nanos = checkCost(estimate);
        if (device == Device.CPU) {
            this.cpuCostNanos = nanos;
        } else {
            this.gpuCostNanos = nanos;
        }
        return this;
    }

    /**
     * An amount of a named resource the task holds while it runs (e.g. {@code "io", 1} or
     * {@code "gpu-memory", bytes}). The task waits, without holding a thread, until the amount is
     * free. The scheduler must have the resource.
     *
     * @param resource the resource name
     * @param amount 1 or more, in the resource's unit
     * @return this builder
     */
    public TaskBuilder resource(String resource, long amount) {
        if (Objects.requireNonNull(resource, "resource").isBlank()) {
            throw invalid("a resource needs a name that is not blank (one the scheduler declares, such as \"io\"),"
                    + " was '" + resource + "'");
        }
        if (amount < 1) {
            throw invalid("amount of resource '" + resource + "' must be 1 or more, was " + amount);
        }
        long before = resources.getOrDefault(resource, 0L);
        if (before > Long.MAX_VALUE - amount) {
            throw invalid("amount of resource '" + resource + "' declared twice adds up past " + Long.MAX_VALUE + " ("
                    + before + " + " + amount + "); declare it once, with the amount the task needs");
        }
        resources.put(resource, before + amount);
        return this;
    }

    /**
     * Sets the CPU body and adds the task to the graph.
     *
     * @param body the CPU implementation
     * @param <T> the result type
     * @return the task
     */
    public <T extends @Nullable Object> Task<T> cpu(TaskBody<T> body) {
        if (body == null) {
            throw missingBody();
        }
        return build(body, null, false);
    }

    /**
     * Sets a GPU body only and adds the task to the graph. The task can run only where a GPU
     * backend is available.
     *
     * @param body the GPU implementation
     * @param <T> the result type
     * @return the task
     */
    public <T extends @Nullable Object> Task<T> gpu(GpuBody<T> body) {
        if (body == null) {
            throw missingBody();
        }
        return build(null, body, false);
    }

    /**
     * Sets both a CPU and a GPU body and adds the task to the graph: the scheduling policy picks
     * the device for each run. Both must compute the same result.
     *
     * @param cpu the CPU implementation
     * @param gpu the GPU implementation
     * @param <T> the result type
     * @return the task
     */
    public <T extends @Nullable Object> Task<T> bodies(TaskBody<T> cpu, GpuBody<T> gpu) {
        if (cpu == null || gpu == null) {
            throw missingBody();
        }
        return build(cpu, gpu, false);
    }

    <T extends @Nullable Object> Task<T> build(@Nullable TaskBody<T> cpu, @Nullable GpuBody<T> gpu, boolean barrier) {
        if (built) {
            throw new IllegalStateException("task '" + name + "' has already been added; a builder adds one task");
        }
        Task<T> task = graph.register(this, cpu, gpu, barrier);
        built = true;
        return task;
    }

    /** A blank instance name is refused here, naming the task, as every other setting is. */
    private void checkInstanceName(String instanceName, String kind, String registry) {
        if (Objects.requireNonNull(instanceName, "instanceName").isBlank()) {
            throw invalid("a " + kind + " instance name must not be blank: name an instance of the scheduler's "
                    + registry + " (such as \"hts-cpu\"), was '" + instanceName + "'");
        }
    }

    private void checkRetries(int retries) {
        String problem = RetrySpec.retriesProblem(retries);
        if (problem != null) {
            throw invalid(problem);
        }
    }

    /** Costs are kept in nanoseconds: from 0 to Long.MAX_VALUE ns (about 292 years). */
    private long checkCost(Duration estimate) {
        Objects.requireNonNull(estimate, "estimate");
        if (estimate.isNegative() || estimate.compareTo(LONGEST_COST) > 0) {
            throw invalid("estimated cost must be between 0 and " + LONGEST_COST.toDays()
                    + " days (the longest duration in nanoseconds), was " + estimate);
        }
        return estimate.toNanos();
    }

    private static final Duration LONGEST_COST = Duration.ofNanos(Long.MAX_VALUE);

    private GraphValidationException missingBody() {
        return new GraphValidationException(
                GraphValidationException.Problem.MISSING_BODY,
                List.of(name),
                "task '" + name + "' of graph '" + graph.name() + "' has no body: pass a CPU body to cpu(...),"
                        + " a GPU body to gpu(...), or both to bodies(...)");
    }

    private GraphValidationException invalid(String what) {
        return new GraphValidationException(
                GraphValidationException.Problem.INVALID_SETTING,
                List.of(name),
                "task '" + name + "' of graph '" + graph.name() + "': " + what);
    }
}
