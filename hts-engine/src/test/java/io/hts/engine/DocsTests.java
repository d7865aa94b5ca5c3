package io.hts.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.support.DocExamples;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The repository's pages (README.md, docs/*.md): every Java example names the source file it is
 * taken from, and this module's examples are shown as written ({@link DocExamples}; hts-gpu and
 * hts-autoconfigure check theirs); the README links every page of docs/; relative links resolve.
 */
class DocsTests {

    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s#]+)(#[^)]*)?\\)");

    @Test
    void everyJavaExampleNamesTheSourceFileItIsTakenFrom() {
        assertThat(DocExamples.unsourced()).isEmpty();
        assertThat(DocExamples.blocks().stream().filter(b -> b.language().equals("java")))
                .as("the pages' java blocks")
                .hasSizeGreaterThan(5);
    }

    @Test
    void thePagesShowTheEnginesExamplesAsWritten() {
        DocExamples.assertShownAsWritten("hts-engine");
    }

    @Test
    void theReadmeLinksEveryPageOfDocs() throws IOException {
        String readme = Files.readString(DocExamples.root().resolve("README.md"));
        List<String> unlinked = DocExamples.pages().stream()
                .filter(p -> p.startsWith("docs/"))
                .filter(p -> !readme.contains("](" + p + ")"))
                .toList();
        assertThat(unlinked).as("pages of docs/ the README does not link").isEmpty();
    }

    @Test
    void everyRelativeLinkOfThePagesResolves() throws IOException {
        Path root = DocExamples.root();
        List<String> broken = new ArrayList<>();
        for (String page : DocExamples.pages()) {
            Matcher m = LINK.matcher(Files.readString(root.resolve(page)));
            while (m.find()) {
                String target = m.group(1);
                if (target.contains("://") || target.startsWith("mailto:")) {
                    continue;
                }
                if (!Files.exists(root.resolve(page).getParent().resolve(target))) {
                    broken.add(page + " -> " + target);
                }
            }
        }
        assertThat(broken).as("relative links to nothing").isEmpty();
    }

    /** The rule itself: consecutive lines, one extra indentation for all, blank lines as blank. */
    @Test
    void aBlockIsShownAsWrittenOnlyWhenItsLinesFollowEachOtherInTheFile() {
        List<String> file =
                List.of("class A {", "    void f() {", "        int a = 1;", "", "        int b = 2;", "    }", "}");
        assertThat(DocExamples.mismatch(List.of("int a = 1;", "", "int b = 2;"), file))
                .isNull();
        assertThat(DocExamples.mismatch(List.of("    void f() {", "        int a = 1;"), file))
                .isNull();
        assertThat(DocExamples.mismatch(List.of("int a = 1;", "int b = 2;"), file))
                .contains("block line 2 'int b = 2;' is '' at line 4");
        assertThat(DocExamples.mismatch(List.of("int a = 1;", "  int b = 2;"), file))
                .isNotNull();
        assertThat(DocExamples.mismatch(List.of("int c = 3;"), file)).contains("is not in the file");
        assertThat(DocExamples.mismatch(List.of("a = 1;"), file))
                .as("a line's end is not the line")
                .isNotNull();
    }

    @Test
    void aMarkerTiesTheNextBlockToItsFile() {
        String page = """
                Text.

                <!-- example: hts-engine/src/test/java/X.java -->
                ```java
                int a = 1;
                ```

                ```java
                int b = 2;
                ```
                - a list item:
                  <!-- example: hts-engine/src/test/resources/x.yml -->
                  ```yaml
                  hts:
                    a: 1
                  ```
                """;
        List<DocExamples.Block> blocks = DocExamples.blocks("page.md", page);
        assertThat(blocks).hasSize(3);
        assertThat(blocks.get(0).source()).isEqualTo("hts-engine/src/test/java/X.java");
        assertThat(blocks.get(0).lines()).containsExactly("int a = 1;");
        assertThat(blocks.get(0).where()).isEqualTo("page.md:4");
        assertThat(blocks.get(1).source()).isNull();
        assertThat(blocks.get(2).language()).isEqualTo("yaml");
        assertThat(blocks.get(2).source()).isEqualTo("hts-engine/src/test/resources/x.yml");
        assertThat(blocks.get(2).lines()).containsExactly("hts:", "  a: 1");
    }
}
