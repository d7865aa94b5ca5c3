package io.hts.benchmarks.workload;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * A {@link Shape} as a plain text file of predecessor lists: the form in which the native peers
 * ({@code hts-benchmarks/native/}: oneTBB's and Taskflow's, whose reader is {@code peer_harness.hpp})
 * receive the very graph the JMH benchmarks run. ASCII, every line ends with {@code '\n'} (the
 * reader also takes {@code "\r\n"}):
 *
 * <pre>
 * line 1:     hts-shape 1 &lt;name&gt; &lt;tasks&gt; &lt;edges&gt;
 * line i + 2: the predecessors of task i (counted from 0), in decimal, separated by one space,
 *             in the shape's order; empty for a task without dependencies
 * </pre>
 *
 * Exactly {@code <tasks>} task lines follow the header; every predecessor is smaller than its
 * task and listed once on its line, and the lines hold {@code <edges>} numbers in all. The reader
 * rejects anything else with a {@link MalformedException} that names the line.
 */
public final class ShapeFile {

    /** The header's first word. */
    public static final String MAGIC = "hts-shape";

    /** The format's version, the header's second word. */
    public static final int VERSION = 1;

    private ShapeFile() {}

    /**
     * Writes a shape to a file, replacing it.
     *
     * @param shape the shape
     * @param file the file
     * @throws IOException when writing fails
     */
    public static void write(Shape shape, Path file) throws IOException {
        try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
            write(shape, out);
        }
    }

    /**
     * Writes a shape.
     *
     * @param shape the shape; its name must be one word
     * @param out where to
     * @throws IOException when writing fails
     */
    public static void write(Shape shape, Writer out) throws IOException {
        String name = shape.name();
        if (name.isEmpty() || name.chars().anyMatch(c -> Character.isWhitespace(c) || c > 126)) {
            throw new IllegalArgumentException("shape name '" + name + "' is not one ASCII word");
        }
        out.write(MAGIC + " " + VERSION + " " + name + " " + shape.size() + " " + shape.edgeCount() + "\n");
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < shape.size(); i++) {
            line.setLength(0);
            for (int k = 0; k < shape.predecessorCount(i); k++) {
                if (k > 0) {
                    line.append(' ');
                }
                line.append(shape.predecessor(i, k));
            }
            line.append('\n');
            out.append(line);
        }
        out.flush();
    }

    /**
     * Reads a shape from a file.
     *
     * @param file the file
     * @return the shape
     * @throws MalformedException when the file does not follow the format (the message names the
     *     file and the line)
     * @throws IOException when reading fails
     */
    public static Shape read(Path file) throws IOException {
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.US_ASCII)) {
            return read(in);
        } catch (MalformedException e) {
            throw new MalformedException(e, file);
        }
    }

    /**
     * Reads a shape.
     *
     * @param in the text, from its header on
     * @return the shape
     * @throws MalformedException when the text does not follow the format
     * @throws IOException when reading fails
     */
    public static Shape read(BufferedReader in) throws IOException {
        String header = in.readLine();
        String[] words = header == null ? new String[0] : header.split(" ", -1);
        if (words.length != 5 || !words[0].equals(MAGIC) || words[2].isEmpty()) {
            throw new MalformedException(
                    "expected '" + MAGIC + " " + VERSION + " <name> <tasks> <edges>', found "
                            + (header == null ? "an empty file" : "'" + header + "'"),
                    1);
        }
        int version = number(words[1], "version", 1);
        if (version != VERSION) {
            throw new MalformedException("format version " + version + " (this reader reads " + VERSION + ")", 1);
        }
        int tasks = number(words[3], "task count", 1);
        int edges = number(words[4], "edge count", 1);
        int[][] predecessors = new int[tasks][];
        int edgesRead = 0;
        for (int i = 0; i < tasks; i++) {
            int lineNumber = i + 2;
            String line = in.readLine();
            if (line == null) {
                throw new MalformedException(
                        "the file ends after " + i + " of the header's " + tasks + " task lines", lineNumber);
            }
            predecessors[i] = predecessorsOf(i, line, lineNumber);
            edgesRead += predecessors[i].length;
        }
        String extra = in.readLine();
        if (extra != null) {
            throw new MalformedException("more task lines than the header's " + tasks, tasks + 2);
        }
        if (edgesRead != edges) {
            throw new MalformedException(
                    "the header declares " + edges + " edges, the task lines hold " + edgesRead, 1);
        }
        return Shape.fromPredecessors(words[2], predecessors);
    }

    private static int[] predecessorsOf(int task, String line, int lineNumber) throws MalformedException {
        if (line.isEmpty()) {
            return new int[0];
        }
        String[] tokens = line.split(" ", -1);
        int[] result = new int[tokens.length];
        String where = "predecessor of task " + task;
        for (int k = 0; k < tokens.length; k++) {
            int p = number(tokens[k], where, lineNumber);
            if (p >= task) {
                throw new MalformedException("predecessor " + p + " of task " + task + " is not before it", lineNumber);
            }
            result[k] = p;
        }
        int[] sorted = result.clone();
        Arrays.sort(sorted);
        for (int k = 1; k < sorted.length; k++) {
            if (sorted[k] == sorted[k - 1]) {
                throw new MalformedException("task " + task + " lists predecessor " + sorted[k] + " twice", lineNumber);
            }
        }
        return result;
    }

    private static int number(String token, String what, int lineNumber) throws MalformedException {
        boolean digits =
                !token.isEmpty() && token.length() <= 10 && token.chars().allMatch(c -> c >= '0' && c <= '9');
        long value = digits ? Long.parseLong(token) : -1;
        if (value < 0 || value > Integer.MAX_VALUE) {
            throw new MalformedException(
                    "'" + token + "' is not a valid " + what + " (a decimal number from 0 to " + Integer.MAX_VALUE
                            + ")",
                    lineNumber);
        }
        return (int) value;
    }

    /** A shape file that does not follow the format; the message starts with the offending line. */
    public static final class MalformedException extends IOException {

        private static final long serialVersionUID = 1L;

        private final int line;

        MalformedException(String problem, int line) {
            super("line " + line + ": " + problem);
            this.line = line;
        }

        private MalformedException(MalformedException problem, Path file) {
            super(file + ", " + problem.getMessage(), problem);
            this.line = problem.line;
        }

        /** The offending line, counted from 1 (the header). */
        public int line() {
            return line;
        }
    }
}
