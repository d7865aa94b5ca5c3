package io.hts.autoconfigure;

import io.hts.engine.policy.PolicyType;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.MemoryShortage;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.util.unit.DataSize;

/**
 * Configuration of HTS, under {@code hts.*}.
 */
@ConfigurationProperties("hts")
public class HtsProperties {

    private final Scheduler scheduler = new Scheduler();

    private final Executor executor = new Executor();

    private final Tasks tasks = new Tasks();

    private final Profiling profiling = new Profiling();

    private final Events events = new Events();

    @NestedConfigurationProperty
    private final GpuProperties gpu = new GpuProperties();

    @NestedConfigurationProperty
    private final ClusterProperties cluster = new ClusterProperties();

    private final Logging logging = new Logging();

    private final Observation observation = new Observation();

    private final Metrics metrics = new Metrics();

    private final Dashboard dashboard = new Dashboard();

    public Metrics getMetrics() {
        return this.metrics;
    }

    public Dashboard getDashboard() {
        return this.dashboard;
    }

    public Logging getLogging() {
        return this.logging;
    }

    public Observation getObservation() {
        return this.observation;
    }

    public Scheduler getScheduler() {
        return this.scheduler;
    }

    public Executor getExecutor() {
        return this.executor;
    }

    public Tasks getTasks() {
        return this.tasks;
    }

    public Profiling getProfiling() {
        return this.profiling;
    }

    public Events getEvents() {
        return this.events;
    }

    public GpuProperties getGpu() {
        return this.gpu;
    }

    public ClusterProperties getCluster() {
        return this.cluster;
    }

    /** How ready tasks are placed and what a run does on failure. */
    public static class Scheduler {

        /**
         * Policy that picks the device of tasks with CPU and GPU bodies: default (earliest
         * estimated finish), gpu-first, cpu-first, round-robin or shortest-job-first. A
         * SchedulingPolicy bean replaces it.
         */
        private PolicyType policy = PolicyType.DEFAULT;

        /**
         * What a run does when a task fails: fail-fast (nothing new starts) or continue
         * (independent branches finish).
         */
        private FailureMode failureMode = FailureMode.FAIL_FAST;

        /**
         * What a task with CPU and GPU bodies does when the GPU memory it declares is taken: wait
         * for it, or run-on-cpu.
         */
        private MemoryShortage memoryShortage = MemoryShortage.WAIT;

        /**
         * How long a run may finish no task before the watchdog logs what every unfinished task
         * waits on. Unset: no watchdog.
         */
        private @Nullable Duration stallTimeout;

        /**
         * How many runs that did not succeed are logged a minute, at most: a failed run at WARN
         * with its failed tasks and first cause, a cancelled run at INFO (logger
         * io.hts.engine.run.FailedRunLog). 0 logs none.
         */
        private int failedRunsLoggedPerMinute = 10;

        public int getFailedRunsLoggedPerMinute() {
            return this.failedRunsLoggedPerMinute;
        }

        public void setFailedRunsLoggedPerMinute(int failedRunsLoggedPerMinute) {
            this.failedRunsLoggedPerMinute = failedRunsLoggedPerMinute;
        }

        public PolicyType getPolicy() {
            return this.policy;
        }

        public void setPolicy(PolicyType policy) {
            this.policy = policy;
        }

        public FailureMode getFailureMode() {
            return this.failureMode;
        }

        public void setFailureMode(FailureMode failureMode) {
            this.failureMode = failureMode;
        }

        public MemoryShortage getMemoryShortage() {
            return this.memoryShortage;
        }

        public void setMemoryShortage(MemoryShortage memoryShortage) {
            this.memoryShortage = memoryShortage;
        }

        public @Nullable Duration getStallTimeout() {
            return this.stallTimeout;
        }

        public void setStallTimeout(@Nullable Duration stallTimeout) {
            this.stallTimeout = stallTimeout;
        }
    }

    /** HTS's own work-stealing pool for CPU tasks (not exposed as an Executor bean). */
    public static class Executor {

        /** Worker threads. Unset: the number of available processors. */
        private @Nullable Integer threads;

        /** Prefix of the worker threads' names. */
        private String threadNamePrefix = "hts-worker-";

        public @Nullable Integer getThreads() {
            return this.threads;
        }

        public void setThreads(@Nullable Integer threads) {
            this.threads = threads;
        }

        public String getThreadNamePrefix() {
            return this.threadNamePrefix;
        }

        public void setThreadNamePrefix(String threadNamePrefix) {
            this.threadNamePrefix = threadNamePrefix;
        }
    }

    /** Defaults for tasks that set none themselves. */
    public static class Tasks {

        /** Time limit of a task attempt. Unset: none. */
        private @Nullable Duration defaultTimeout;

        /** Retries after a failed attempt (0: none). */
        private int defaultRetries;

        /**
         * Wait before each retry: of the default retries, and of tasks that declare a retry count
         * without a backoff.
         */
        private Duration defaultBackoff = Duration.ofMillis(100);

        public @Nullable Duration getDefaultTimeout() {
            return this.defaultTimeout;
        }

        public void setDefaultTimeout(@Nullable Duration defaultTimeout) {
            this.defaultTimeout = defaultTimeout;
        }

        public int getDefaultRetries() {
            return this.defaultRetries;
        }

        public void setDefaultRetries(int defaultRetries) {
            this.defaultRetries = defaultRetries;
        }

        public Duration getDefaultBackoff() {
            return this.defaultBackoff;
        }

        public void setDefaultBackoff(Duration defaultBackoff) {
            this.defaultBackoff = defaultBackoff;
        }
    }

    /** Run profiles: per-task timings, critical paths, traces. */
    public static class Profiling {

        /** Whether to record per-task timings (about 20 bytes a task a run, one clock read a task). */
        private boolean enabled = true;

        /** How many recent run profiles to keep. */
        private int retainedRuns = 20;

        /**
         * How much memory the kept run profiles may hold together (their timings, and their graphs'
         * names and edges, never the tasks' bodies); older profiles go first, and a profile larger
         * than this is not kept.
         */
        private DataSize retainedSize = DataSize.ofMegabytes(64);

        public boolean isEnabled() {
            return this.enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public int getRetainedRuns() {
            return this.retainedRuns;
        }

        public void setRetainedRuns(int retainedRuns) {
            this.retainedRuns = retainedRuns;
        }

        public DataSize getRetainedSize() {
            return this.retainedSize;
        }

        public void setRetainedSize(DataSize retainedSize) {
            this.retainedSize = retainedSize;
        }
    }

    /** Task events. */
    public static class Events {

        /** How many recent events the ring buffer keeps. */
        private int bufferSize = 10_000;

        /** How long a connection to the live event stream (/actuator/htsevents/stream) stays open. */
        private Duration streamTimeout = Duration.ofMinutes(30);

        public int getBufferSize() {
            return this.bufferSize;
        }

        public void setBufferSize(int bufferSize) {
            this.bufferSize = bufferSize;
        }

        public Duration getStreamTimeout() {
            return this.streamTimeout;
        }

        public void setStreamTimeout(Duration streamTimeout) {
            this.streamTimeout = streamTimeout;
        }
    }

    /** What HTS adds to what tasks log. */
    public static class Logging {

        /**
         * Whether each task's body runs with hts.run, hts.graph and hts.task in the SLF4J MDC (use
         * them in a log pattern, e.g. %X{hts.task}); a few thread-local map operations a task.
         */
        private boolean mdc = true;

        public boolean isMdc() {
            return this.mdc;
        }

        public void setMdc(boolean mdc) {
            this.mdc = mdc;
        }
    }

    /** The hts.graph.run observation (with an ObservationRegistry, as Actuator defines). */
    public static class Observation {

        /**
         * Whether each task body is an observation of its own (hts.task, a child of its run's: a
         * span a task where tracing is set up). Off: bodies run with their run's observation current.
         */
        private boolean tasks;

        public boolean isTasks() {
            return this.tasks;
        }

        public void setTasks(boolean tasks) {
            this.tasks = tasks;
        }
    }

    /** HTS's Micrometer meters (with a MeterRegistry, as Actuator defines). */
    public static class Metrics {

        /**
         * Whether HTS registers its meters: hts.runs, hts.tasks, the pool's and the GPUs' gauges. Off:
         * none of them, and no per-run work to feed them.
         */
        private boolean enabled = true;

        public boolean isEnabled() {
            return this.enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }

    /** The dashboard: pages served with Actuator that read the hts endpoints. */
    public static class Dashboard {

        /**
         * Whether to serve the dashboard, the htsdashboard Actuator endpoint
         * (/actuator/htsdashboard), on the management server. It is exposed and secured like any
         * endpoint (add htsdashboard to management.endpoints.web.exposure.include), and reads hts,
         * htsprofiler and htsevents, which must be exposed too; its actions appear only when
         * management.endpoint.hts.access is unrestricted.
         */
        private boolean enabled;

        public boolean isEnabled() {
            return this.enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }
    }
}
