package io.hts.engine.observe;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.Device;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.graph.TaskGroup;
import io.hts.engine.run.Scheduler;
import io.hts.engine.support.FakeGpuBackend;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The Chrome Trace Event JSON of a run: one process per device with its name, one named thread per
 * CPU worker and per GPU stream that ran a task, one complete event per task that ran.
 */
class ChromeTraceExporterTests {

    private static List<JsonNode> events(String trace, String phase) {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode e : JsonMapper.builder().build().readTree(trace).get("traceEvents")) {
            if (e.get("ph").asString().equals(phase)) {
                out.add(e);
            }
        }
        return out;
    }

    /** "pid/tid name" of each metadata event of a kind, tid "-" when it has none. */
    private static List<String> names(String trace, String kind) {
        return events(trace, "M").stream()
                .filter(e -> e.get("name").asString().equals(kind))
                .map(e -> e.get("pid").asInt() + "/"
                        + (e.has("tid") ? e.get("tid").asString() : "-") + " "
                        + e.get("args").get("name").asString())
                .toList();
    }

    @Test
    void eachDeviceIsAProcessAndEachWorkerAndStreamThatRanATaskANamedThread() {
        TaskGraph g = TaskGraph.named("mixed");
        Task<Integer> load = g.task("load").cpu(ctx -> 1);
        TaskGroup<Integer> kernels =
                g.group("kernel", 3, (i, t) -> t.after(load).gpu(ctx -> i));
        g.task("report").after(kernels).cpu(ctx -> 0);
        try (Scheduler s =
                Scheduler.builder().threads(2).gpuBackend(new FakeGpuBackend(2)).build()) {
            RunProfile p = s.execute(g).profile();
            String trace = p.toChromeTrace();
            Set<Integer> streams = p.tasks().stream()
                    .filter(t -> t.device() == Device.GPU)
                    .map(TaskTiming::lane)
                    .collect(Collectors.toCollection(TreeSet::new));
            assertThat(names(trace, "process_name")).containsExactly("1/- CPU (mixed)", "2/- GPU (mixed)");
            List<String> expectedThreads = new ArrayList<>(List.of("1/0 worker 0", "1/1 worker 1"));
            streams.forEach(lane -> expectedThreads.add("2/" + lane + " stream " + lane));
            assertThat(names(trace, "thread_name")).containsExactlyInAnyOrderElementsOf(expectedThreads);
            Map<String, String> placed = new TreeMap<>();
            for (JsonNode e : events(trace, "X")) {
                TaskTiming t = p.timing(e.get("args").get("index").asInt());
                assertThat(e.get("name").asString()).isEqualTo(t.taskName());
                assertThat(e.get("tid").asInt()).isEqualTo(t.lane());
                placed.put(
                        t.taskName(),
                        e.get("cat").asString() + "@" + e.get("pid").asInt());
            }
            assertThat(placed)
                    .containsExactlyInAnyOrderEntriesOf(Map.of(
                            "kernel[0]", "gpu@2",
                            "kernel[1]", "gpu@2",
                            "kernel[2]", "gpu@2",
                            "load", "cpu@1",
                            "report", "cpu@1"));
        }
    }

    @Test
    void aStreamPastTheSixtyFourthStillHasItsTasksEvent() {
        TaskGraph g = TaskGraph.named("wide-gpu");
        g.task("far").gpu(ctx -> 1);
        RunProfile p = RecordedRun.of(g)
                .ran("far", Device.GPU, 64, 0, 1_000)
                .finished(2_000, RunStatus.SUCCEEDED)
                .profile();
        List<JsonNode> tasks = events(p.toChromeTrace(), "X");
        assertThat(tasks).singleElement().satisfies(e -> {
            assertThat(e.get("pid").asInt()).isEqualTo(2);
            assertThat(e.get("tid").asInt()).isEqualTo(64);
        });
    }

    @Test
    void timesAreMicrosecondsWithThreeDecimals() {
        TaskGraph g = TaskGraph.named("short");
        Task<Integer> first = g.task("first").cpu(ctx -> 1);
        g.task("second").after(first).cpu(ctx -> 2);
        RunProfile p = RecordedRun.of(g)
                .runId(42)
                .ran("first", Device.CPU, 0, 100, 110)
                .ran("second", Device.CPU, 0, 1_100, 2_345)
                .finished(3_000, RunStatus.SUCCEEDED)
                .profile();
        String trace = p.toChromeTrace();
        assertThat(trace)
                .startsWith("{\"displayTimeUnit\":\"ms\",\"otherData\":{\"graph\":\"short\",\"run\":42,"
                        + "\"status\":\"SUCCEEDED\",\"policy\":\"default\"},\"traceEvents\":[")
                .contains("\"name\":\"first\",\"cat\":\"cpu\",\"ph\":\"X\",\"ts\":0.100,\"dur\":0.010,\"pid\":1,"
                        + "\"tid\":0,\"args\":{\"index\":0,\"state\":\"SUCCEEDED\",\"attempts\":1,"
                        + "\"waitMicros\":0.100}")
                .contains("\"ts\":1.100,\"dur\":1.245,")
                .contains("\"waitMicros\":0.990}")
                .endsWith("}]}");
    }
}
