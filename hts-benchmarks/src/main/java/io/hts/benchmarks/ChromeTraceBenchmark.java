package io.hts.benchmarks;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.observe.RunProfile;
import io.hts.engine.run.Scheduler;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The Chrome trace of a 1,000,000-task run (issue 15 item 12): built as one string, as
 * {@code RunProfile.toChromeTrace()} does, against streamed as UTF-8 bytes the way the profiler
 * endpoint serves it ({@code chromeTraceStream()}, drained into a sink that keeps nothing), in
 * the same run. Milliseconds per trace.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 2, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgs = "-Xmx4g")
public class ChromeTraceBenchmark {

    private RunProfile profile;

    @Setup(Level.Trial)
    public void setUp() {
        try (Scheduler s = Scheduler.builder().threads(2).build()) {
            TaskGraph g = TaskGraph.named("wide");
            for (int i = 0; i < 1_000_000; i++) {
                g.task("t" + i).cpu(ctx -> 1);
            }
            profile = s.execute(g).profile();
        }
    }

    /** The whole trace as one string, then its UTF-8 bytes (what a server would send). */
    @Benchmark
    public int asString() {
        return profile.toChromeTrace().getBytes(StandardCharsets.UTF_8).length;
    }

    /** The trace streamed: a few kilobytes in memory at a time. */
    @Benchmark
    public long streamed() throws IOException {
        try (InputStream in = profile.chromeTraceStream()) {
            return in.transferTo(OutputStream.nullOutputStream());
        }
    }
}
