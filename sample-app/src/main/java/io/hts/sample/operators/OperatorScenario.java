package io.hts.sample.operators;

import io.hts.engine.graph.Device;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.policy.DeviceStatus;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import io.hts.sample.Format;
import io.hts.sample.SampleProperties;
import io.hts.sample.SampleScenario;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;

/**
 * Scenario (c) in the summary: the benchmark at {@code sample.operators.*}'s sizes, with the GPU
 * stages when the scheduler has a usable GPU ({@code scheduler.systemStatus()}), as a table of
 * operator and size by device.
 */
@Component
@Order(3)
public class OperatorScenario implements SampleScenario {

    private final SampleProperties.Operators settings;
    private final OperatorSuite suite;
    private final boolean gpu;

    OperatorScenario(SampleProperties properties, Scheduler scheduler) {
        this.settings = properties.operators();
        this.gpu = scheduler.systemStatus().usable(Device.GPU);
        String gpuName = scheduler
                .systemStatus()
                .find(Device.GPU)
                .map(DeviceStatus::detail)
                .orElse("GPU");
        this.suite = new OperatorSuite(settings, scheduler.parallelism(), gpu ? gpuName : null);
    }

    @Override
    public String label() {
        return "(c) operators";
    }

    @Override
    public String description() {
        return Format.of(
                "GEMM FP32 %s on the CPU (JVM BLAS in tiles)%s; AXPY of %s floats; all checked",
                sizes(settings.cpuGemmSizes()),
                gpu ? ", " + sizes(settings.gpuGemmSizes()) + " on the GPU (cuBLAS)" : ", no usable GPU",
                Format.count(settings.axpyLength()));
    }

    private static String sizes(List<Integer> sizes) {
        return sizes.size() <= 2
                ? sizes.stream().map(String::valueOf).collect(java.util.stream.Collectors.joining(", "))
                : sizes.get(0) + ".." + sizes.get(sizes.size() - 1);
    }

    @Override
    public TaskGraph graph() {
        return suite.graph();
    }

    @Override
    public List<String> results(GraphRun run) {
        OperatorReport report = run.result(suite.report());
        List<String> lines = new ArrayList<>();
        String cpu = "CPU " + report.cpuBlas() + " x" + report.workers();
        lines.add(Format.of("%-4s %10s  %20s  %20s", "op", "size", cpu, gpu ? "GPU" : "GPU (none usable)"));
        List<String> notes = new ArrayList<>();
        for (String operator : List.of("GEMM", "AXPY")) {
            TreeSet<Long> sizes = new TreeSet<>();
            report.measurements().stream()
                    .filter(m -> m.operator().equals(operator))
                    .forEach(m -> sizes.add(m.size()));
            for (long size : sizes) {
                lines.add(Format.of(
                        "%-4s %10s  %20s  %20s",
                        operator,
                        Format.count(size),
                        cell(report, operator, size, "CPU", notes),
                        cell(report, operator, size, "GPU", notes)));
            }
        }
        double worst = report.measurements().stream()
                .mapToDouble(Measurement::checkError)
                .max()
                .orElse(0);
        lines.add(Format.of(
                "check: %d sampled entries of each result against double-precision sums, worst at %s of"
                        + " tolerance: OK",
                Operands.SAMPLES, Format.percent(worst)));
        if (gpu) {
            lines.add("GPU: " + report.gpu());
        }
        lines.addAll(notes);
        return lines;
    }

    private static String cell(OperatorReport report, String operator, long size, String device, List<String> notes) {
        return report.measurements().stream()
                .filter(m -> m.operator().equals(operator)
                        && m.size() == size
                        && m.device().equals(device))
                .findFirst()
                .map(m -> {
                    if (m.unavailable() != null) {
                        String note = "not measured: " + m.unavailable();
                        if (!notes.contains(note)) {
                            notes.add(note);
                        }
                        return "not measured";
                    }
                    return Format.of("%,.1f %s", m.rate(), m.unit());
                })
                .orElse("-");
    }
}
