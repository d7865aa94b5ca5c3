package io.hts.autoconfigure;

import java.time.Duration;

import io.hts.engine.policy.PolicyType;
import io.hts.engine.run.FailureMode;
import io.hts.engine.run.MemoryShortage;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

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

        /** Wait before each retry. */
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
    }

    /** Task events. */
    public static class Events {

        /** How many recent events the ring buffer keeps. */
        private int bufferSize = 10_000;

        public int getBufferSize() {
            return this.bufferSize;
        }

        public void setBufferSize(int bufferSize) {
            this.bufferSize = bufferSize;
        }
    }
}
