package io.hts.engine.support;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The code examples of the repository's Markdown pages ({@code README.md} and {@code docs/*.md}),
 * each tied to the source file it is taken from by a comment on the line right before its fence:
 *
 * <pre>
 * &lt;!-- example: hts-engine/src/test/java/io/hts/engine/example/FeaturesExample.java --&gt;
 * ```java
 * </pre>
 *
 * <p>A page shows an example as written when the block's lines are consecutive lines of that file,
 * each indented by the same extra whitespace there (a method body shown without its class's
 * indentation), blank lines matching blank lines. The file lives in a module's test sources, so
 * that module's build compiles it, and its tests run it where that makes sense. Every
 * {@code java} block must name its file; a block in another language (YAML, say) is checked the
 * same way when it names one. Each module checks the examples taken from its own files
 * ({@link #assertShownAsWritten(String)}), so an example and the test that holds it change in one module.
 */
public final class DocExamples {

    private static final Pattern FENCE = Pattern.compile("^(\\s*)```(\\S*)\\s*$");
    private static final Pattern MARKER = Pattern.compile("^\\s*<!--\\s*example:\\s*(\\S+)\\s*-->\\s*$");

    private DocExamples() {}

    /**
     * One fenced block of a page.
     *
     * @param page the page, relative to the repository's root (e.g. {@code docs/engine.md})
     * @param line the fence's line number on the page (1-based)
     * @param language what follows the opening fence ({@code java}, {@code yaml}; empty for none)
     * @param source the file the block names, relative to the repository's root, or null
     * @param lines the block's lines, without the fence's own indentation
     */
    public record Block(
            String page,
            int line,
            String language,
            @Nullable String source,
            List<String> lines) {

        /** Where the block is, for messages: {@code docs/engine.md:12}. */
        public String where() {
            return page + ":" + line;
        }
    }

    /** The repository's root, seen from a module's directory (where Maven runs its tests). */
    public static Path root() {
        Path root = Path.of("..").toAbsolutePath().normalize();
        if (!Files.isRegularFile(root.resolve("README.md")) || !Files.isDirectory(root.resolve("docs"))) {
            throw new IllegalStateException("no README.md and docs/ in " + root + ": run from a module's directory");
        }
        return root;
    }

    /** {@code README.md} and every {@code docs/*.md}, relative to the root, in name order. */
    public static List<String> pages() {
        Path root = root();
        List<String> pages = new ArrayList<>();
        pages.add("README.md");
        try (Stream<Path> docs = Files.list(root.resolve("docs"))) {
            docs.filter(p -> p.getFileName().toString().endsWith(".md") && Files.isRegularFile(p))
                    .map(p -> "docs/" + p.getFileName())
                    .sorted()
                    .forEach(pages::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return pages;
    }

    /** Every fenced block of every page. */
    public static List<Block> blocks() {
        List<Block> blocks = new ArrayList<>();
        for (String page : pages()) {
            blocks.addAll(blocks(page, read(root().resolve(page))));
        }
        return blocks;
    }

    /**
     * The fenced blocks of one page's text.
     *
     * @param page the page's name, for {@link Block#page()}
     * @param text the page's text
     * @return its blocks, in order
     */
    public static List<Block> blocks(String page, String text) {
        List<String> lines = text.lines().toList();
        List<Block> blocks = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher open = FENCE.matcher(lines.get(i));
            if (!open.matches()) {
                continue;
            }
            String indent = open.group(1);
            int end = i + 1;
            while (end < lines.size() && !lines.get(end).strip().equals("```")) {
                end++;
            }
            List<String> body = new ArrayList<>();
            for (String l : lines.subList(i + 1, Math.min(end, lines.size()))) {
                body.add(l.startsWith(indent) ? l.substring(indent.length()) : l.stripLeading());
            }
            Matcher marker = i > 0 ? MARKER.matcher(lines.get(i - 1)) : null;
            String source = marker != null && marker.matches() ? marker.group(1) : null;
            blocks.add(new Block(page, i + 1, open.group(2), source, List.copyOf(body)));
            i = end;
        }
        return blocks;
    }

    /**
     * The {@code java} blocks that name no source file, or one that does not exist: one line each.
     */
    public static List<String> unsourced() {
        List<String> problems = new ArrayList<>();
        for (Block b : blocks()) {
            if (b.source() == null) {
                if (b.language().equals("java")) {
                    problems.add(b.where() + ": a java block without '<!-- example: PATH -->' on the line before it");
                }
            } else if (!Files.isRegularFile(root().resolve(b.source()))) {
                problems.add(b.where() + ": names " + b.source() + ", which does not exist");
            } else if (!b.source().matches("[a-z0-9-]+/src/test/(java|resources)/.+")) {
                problems.add(b.where() + ": names " + b.source()
                        + ", which is not in a module's test sources (src/test/java or src/test/resources)");
            }
        }
        return problems;
    }

    /**
     * The blocks taken from a module's files that do not show them as written: one message each,
     * naming the page, the file and the first line that differs.
     *
     * @param module the module's directory name, e.g. {@code hts-engine}
     * @return the problems; empty when every block of that module is shown as written
     */
    public static List<String> mismatches(String module) {
        List<String> problems = new ArrayList<>();
        for (Block b : examplesOf(module)) {
            List<String> source = read(root().resolve(b.source())).lines().toList();
            String problem = mismatch(b.lines(), source);
            if (problem != null) {
                problems.add(b.where() + " is not " + b.source() + " as written: " + problem);
            }
        }
        return problems;
    }

    /**
     * Fails when the pages show none of a module's examples, or one of them not as written
     * ({@link #mismatches}), naming each such block.
     *
     * @param module the module's directory name, e.g. {@code hts-engine}
     */
    public static void assertShownAsWritten(String module) {
        if (examplesOf(module).isEmpty()) {
            throw new AssertionError("no page shows an example of " + module + "/src/test");
        }
        List<String> problems = mismatches(module);
        if (!problems.isEmpty()) {
            throw new AssertionError(String.join("\n", problems));
        }
    }

    /** The blocks that name a file of this module. */
    public static List<Block> examplesOf(String module) {
        return blocks().stream()
                .filter(b -> b.source() != null && b.source().startsWith(module + "/"))
                .toList();
    }

    /**
     * Whether {@code block} is a run of consecutive lines of {@code source}, each with the same extra
     * indentation there.
     *
     * @return null when it is; else what differs, at the closest match
     */
    public static @Nullable String mismatch(List<String> block, List<String> source) {
        if (block.isEmpty() || block.stream().allMatch(String::isBlank)) {
            return "the block is empty";
        }
        String best = null;
        int bestMatched = -1;
        for (int start = 0; start < source.size(); start++) {
            String first = source.get(start);
            if (!first.endsWith(block.get(0)) || first.isBlank() != block.get(0).isBlank()) {
                continue;
            }
            String extra = first.substring(0, first.length() - block.get(0).length());
            if (!extra.isBlank()) {
                continue;
            }
            int k = 0;
            while (k < block.size()
                    && start + k < source.size()
                    && matches(block.get(k), source.get(start + k), extra)) {
                k++;
            }
            if (k == block.size()) {
                return null;
            }
            if (k > bestMatched) {
                bestMatched = k;
                best = "block line " + (k + 1) + " '" + block.get(k).strip() + "' is "
                        + (start + k < source.size()
                                ? "'" + source.get(start + k).strip() + "' at line " + (start + k + 1) + " of the file"
                                : "past the file's end");
            }
        }
        return best != null ? best : "its first line '" + block.get(0).strip() + "' is not in the file";
    }

    /** An example's {@code main}. */
    @FunctionalInterface
    public interface Main {
        void main(String[] args) throws Exception;
    }

    /**
     * Runs an example's {@code main} and returns what it printed to {@code System.out} (also
     * echoed there once it returned).
     *
     * @param main e.g. {@code FeaturesExample::main}
     * @return the printed text
     */
    public static String printedBy(Main main) throws Exception {
        PrintStream original = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            main.main(new String[0]);
        } finally {
            System.setOut(original);
        }
        String printed = out.toString(StandardCharsets.UTF_8);
        original.print(printed);
        return printed;
    }

    private static boolean matches(String shown, String written, String extra) {
        if (shown.isBlank()) {
            return written.isBlank();
        }
        return written.equals(extra + shown);
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
