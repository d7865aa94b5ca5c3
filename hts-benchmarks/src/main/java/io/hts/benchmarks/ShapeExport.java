package io.hts.benchmarks;

import io.hts.benchmarks.workload.Shape;
import io.hts.benchmarks.workload.ShapeFile;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.openjdk.jmh.annotations.OperationsPerInvocation;

/**
 * Writes the shapes of the empty-task benchmarks as {@link ShapeFile}s for the native peers
 * ({@code hts-benchmarks/scripts/native-peer.sh}). Each shape is what its benchmark class's own
 * {@code shape()} returns, so the C++ programs run exactly the graph JMH runs; the export refuses a
 * shape whose size differs from the class's {@code @OperationsPerInvocation} (JMH's divisor for ns
 * per task).
 *
 * <p>Usage: {@code java -cp benchmarks.jar io.hts.benchmarks.ShapeExport DIR [KEY...]}, where a key
 * is a benchmark's name without {@code Empty} and {@code Benchmark}, lower case ({@code independent},
 * {@code chain}, {@code tree}, {@code dag}); all of them when none is given. Writes
 * {@code DIR/KEY.shape} for each and prints one tab-separated line a shape: key, benchmark class,
 * shape name, tasks, edges, file.
 */
public final class ShapeExport {

    /** The empty-task benchmarks whose shapes are exported, in the order they are run. */
    static final List<Class<? extends EmptyTasksBenchmark>> BENCHMARKS = List.of(
            EmptyIndependentBenchmark.class,
            EmptyChainBenchmark.class,
            EmptyTreeBenchmark.class,
            EmptyDagBenchmark.class);

    private ShapeExport() {}

    public static void main(String[] args) throws IOException {
        if (args.length == 0) {
            System.err.println("usage: ShapeExport DIR [" + String.join("|", keys()) + " ...]");
            System.exit(2);
        }
        List<Class<? extends EmptyTasksBenchmark>> chosen = new ArrayList<>();
        for (int a = 1; a < args.length; a++) {
            Class<? extends EmptyTasksBenchmark> benchmark = benchmark(args[a]);
            if (benchmark == null) {
                System.err.println("unknown shape '" + args[a] + "'; known: " + String.join(", ", keys()));
                System.exit(2);
            }
            chosen.add(benchmark);
        }
        export(Path.of(args[0]), chosen.isEmpty() ? BENCHMARKS : chosen, System.out);
    }

    /**
     * Writes the shapes of the given benchmarks into a folder.
     *
     * @param dir the folder (created when missing)
     * @param benchmarks the benchmark classes
     * @param manifest where the one line per shape goes
     * @throws IOException when writing fails
     */
    static void export(Path dir, List<Class<? extends EmptyTasksBenchmark>> benchmarks, PrintStream manifest)
            throws IOException {
        Files.createDirectories(dir);
        for (Class<? extends EmptyTasksBenchmark> benchmark : benchmarks) {
            Shape shape = shapeOf(benchmark);
            Path file = dir.resolve(key(benchmark) + ".shape");
            ShapeFile.write(shape, file);
            manifest.println(String.join(
                    "\t",
                    key(benchmark),
                    benchmark.getName(),
                    shape.name(),
                    Integer.toString(shape.size()),
                    Integer.toString(shape.edgeCount()),
                    file.toString()));
        }
    }

    /**
     * The shape a benchmark class runs, checked against the operations per invocation it declares.
     *
     * @param benchmark the class
     * @return its shape
     */
    static Shape shapeOf(Class<? extends EmptyTasksBenchmark> benchmark) {
        Shape shape;
        try {
            shape = benchmark.getDeclaredConstructor().newInstance().shape();
        } catch (InstantiationException
                | IllegalAccessException
                | InvocationTargetException
                | NoSuchMethodException e) {
            throw new IllegalStateException("cannot create " + benchmark.getName(), e);
        }
        checkSize(benchmark, shape);
        return shape;
    }

    /**
     * Refuses a shape whose size is not the operations per invocation a class declares.
     *
     * @param benchmark the class, annotated with {@link OperationsPerInvocation}
     * @param shape the shape it runs
     */
    static void checkSize(Class<?> benchmark, Shape shape) {
        OperationsPerInvocation declared = benchmark.getAnnotation(OperationsPerInvocation.class);
        if (declared == null || declared.value() != shape.size()) {
            throw new IllegalStateException(benchmark.getSimpleName() + " declares "
                    + (declared == null ? "no" : Integer.toString(declared.value()))
                    + " operations per invocation but its shape has " + shape.size() + " tasks");
        }
    }

    /** The short name of a benchmark: {@code EmptyChainBenchmark} is {@code chain}. */
    static String key(Class<? extends EmptyTasksBenchmark> benchmark) {
        String name = benchmark.getSimpleName();
        return name.substring("Empty".length(), name.length() - "Benchmark".length())
                .toLowerCase(Locale.ROOT);
    }

    /** The benchmark of a short name, or null. */
    static Class<? extends EmptyTasksBenchmark> benchmark(String key) {
        return BENCHMARKS.stream().filter(b -> key(b).equals(key)).findFirst().orElse(null);
    }

    private static List<String> keys() {
        return BENCHMARKS.stream().map(ShapeExport::key).toList();
    }
}
