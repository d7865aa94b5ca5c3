package io.hts.engine.observe;

import io.hts.engine.graph.Device;
import io.hts.engine.graph.GraphTopology;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskState;
import java.time.Instant;
import java.util.List;

/**
 * A run's profile made through {@link RunProfile}'s public constructor from timings a test chooses,
 * as the scheduler records them (absolute {@link System#nanoTime()} values, 0 for not started or
 * not ended): exact makespans, waits and durations without depending on a clock. Times are given
 * here in nanoseconds from the submission.
 */
final class RecordedRun {

    /** The submission, on the nanoTime clock. */
    static final long SUBMIT = 5_000_000_000L;

    private final GraphTopology topology;
    private final long[] start;
    private final long[] end;
    private final byte[] devices;
    private final int[] lanes;
    private final TaskState[] states;
    private int[] attempts;
    private TaskCauses causes = TaskCauses.NONE;
    private RunStatus status = RunStatus.SUCCEEDED;
    private long runId = 1;
    private int workers = 2;
    private long finish = -1;

    private RecordedRun(TaskGraph graph) {
        this.topology = graph.compile();
        int n = topology.size();
        this.start = new long[n];
        this.end = new long[n];
        this.devices = new byte[n];
        this.lanes = new int[n];
        this.states = new TaskState[n];
        java.util.Arrays.fill(states, TaskState.CREATED);
    }

    /** A run of {@code graph} in which no task has started yet. */
    static RecordedRun of(TaskGraph graph) {
        return new RecordedRun(graph);
    }

    /** Task {@code name} ran on {@code device}'s {@code lane} from {@code from} to {@code to} and succeeded. */
    RecordedRun ran(String name, Device device, int lane, long from, long to) {
        return ran(name, device, lane, from, to, TaskState.SUCCEEDED);
    }

    RecordedRun ran(String name, Device device, int lane, long from, long to, TaskState state) {
        return ran(index(name), device, lane, from, to, state);
    }

    /** Task {@code i} (by index) ran and succeeded. */
    RecordedRun ran(int i, Device device, int lane, long from, long to) {
        return ran(i, device, lane, from, to, TaskState.SUCCEEDED);
    }

    private RecordedRun ran(int i, Device device, int lane, long from, long to, TaskState state) {
        start[i] = SUBMIT + from;
        end[i] = SUBMIT + to;
        devices[i] = (byte) (device.ordinal() + 1);
        lanes[i] = lane;
        states[i] = state;
        return this;
    }

    RecordedRun attempts(String name, int count) {
        if (attempts == null) {
            attempts = new int[topology.size()];
        }
        attempts[index(name)] = count;
        return this;
    }

    RecordedRun causes(TaskCauses causes) {
        this.causes = causes;
        return this;
    }

    RecordedRun workers(int workers) {
        this.workers = workers;
        return this;
    }

    RecordedRun runId(long runId) {
        this.runId = runId;
        return this;
    }

    /** The run finished {@code at} nanoseconds after its submission with {@code status}. */
    RecordedRun finished(long at, RunStatus status) {
        this.finish = SUBMIT + at;
        this.status = status;
        return this;
    }

    /** The profile with per-task timings, as with profiling on. */
    RunProfile profile() {
        return make(true);
    }

    /** The same run's profile without per-task timings, as with profiling off. */
    RunProfile withoutTimings() {
        return make(false);
    }

    private RunProfile make(boolean timings) {
        return new RunProfile(
                runId,
                topology,
                finish < 0 ? RunStatus.RUNNING : status,
                "default",
                Instant.EPOCH,
                SUBMIT,
                finish,
                workers,
                timings ? start : null,
                timings ? end : null,
                timings ? devices : null,
                timings ? lanes : null,
                timings ? attempts : null,
                i -> states[i],
                causes,
                0,
                0,
                List.of());
    }

    private int index(String name) {
        for (int i = 0; i < topology.size(); i++) {
            if (topology.name(i).equals(name)) {
                return i;
            }
        }
        throw new IllegalArgumentException("no task " + name + " in " + topology);
    }
}
