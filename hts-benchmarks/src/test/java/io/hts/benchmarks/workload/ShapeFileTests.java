package io.hts.benchmarks.workload;

import static io.hts.benchmarks.workload.ShapeAssertions.assertSameGraph;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** The text form of a shape: what is written reads back as the same graph, and bad text is refused by line. */
class ShapeFileTests {

    private static final Shape[] SHAPES = {
        Shape.independent(1000),
        Shape.chain(1000),
        Shape.binaryTree(10),
        Shape.layered(100, 50, 3, 42),
        Shape.fromPredecessors("irregular", new int[][] {{}, {}, {1, 0}, {2}, {}, {4, 0, 3}})
    };

    @Test
    void writesOneHeaderAndOneLineOfPredecessorsPerTask() throws IOException {
        assertThat(text(Shape.binaryTree(2))).isEqualTo("hts-shape 1 tree-3 3 2\n\n0\n0\n");
        assertThat(text(Shape.chain(3))).isEqualTo("hts-shape 1 chain-3 3 2\n\n0\n1\n");
        assertThat(text(Shape.independent(2))).isEqualTo("hts-shape 1 independent-2 2 0\n\n\n");
        assertThat(text(SHAPES[4])).isEqualTo("hts-shape 1 irregular 6 6\n\n\n1 0\n2\n\n4 0 3\n");
    }

    @Test
    void headerCountsTasksAndEdges() throws IOException {
        assertThat(header(SHAPES[0])).isEqualTo("hts-shape 1 independent-1000 1000 0");
        assertThat(header(SHAPES[1])).isEqualTo("hts-shape 1 chain-1000 1000 999");
        assertThat(header(SHAPES[2])).isEqualTo("hts-shape 1 tree-1023 1023 1022");
        assertThat(header(SHAPES[3])).isEqualTo("hts-shape 1 dag-100x50 5000 " + 99 * 50 * 3);
    }

    /** Each of the shapes, named. */
    static Stream<Named<Shape>> shapes() {
        return Arrays.stream(SHAPES).map(shape -> Named.of(shape.name(), shape));
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void writesAHeaderAndOneLinePerTask(Shape shape) throws IOException {
        assertThat(text(shape).lines().count()).as(shape.name()).isEqualTo(shape.size() + 1L);
    }

    @ParameterizedTest
    @MethodSource("shapes")
    void readsBackTheSameGraph(Shape shape) throws IOException {
        Shape back = ShapeFile.read(new BufferedReader(new StringReader(text(shape))));
        assertSameGraph(back, shape);
    }

    @Test
    void roundTripsThroughAFile(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("dag.shape");
        ShapeFile.write(SHAPES[3], file);
        assertSameGraph(ShapeFile.read(file), SHAPES[3]);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
            empty file                  | ""                                        | 1 | found an empty file
            wrong magic                 | "hts-shap 1 x 1 0\\n\\n"                  | 1 | expected 'hts-shape 1 <name> <tasks> <edges>', found 'hts-shap 1 x 1 0'
            header of four words        | "hts-shape 1 x 1\\n\\n"                   | 1 | found 'hts-shape 1 x 1'
            other version               | "hts-shape 2 x 1 0\\n\\n"                 | 1 | format version 2 (this reader reads 1)
            negative task count         | "hts-shape 1 x -1 0\\n"                   | 1 | '-1' is not a valid task count
            too few task lines          | "hts-shape 1 x 3 1\\n\\n0\\n"             | 4 | the file ends after 2 of the header's 3 task lines
            too many task lines         | "hts-shape 1 x 2 1\\n\\n0\\n\\n"          | 4 | more task lines than the header's 2
            not a number                | "hts-shape 1 x 3 2\\n\\n0\\n0 x\\n"       | 4 | 'x' is not a valid predecessor of task 2
            trailing space              | "hts-shape 1 x 2 1\\n\\n0 \\n"            | 3 | '' is not a valid predecessor of task 1
            negative predecessor        | "hts-shape 1 x 2 1\\n\\n-1\\n"            | 3 | '-1' is not a valid predecessor of task 1
            predecessor after its task  | "hts-shape 1 x 3 2\\n\\n2\\n0\\n"         | 3 | predecessor 2 of task 1 is not before it
            predecessor is the task     | "hts-shape 1 x 2 1\\n\\n1\\n"             | 3 | predecessor 1 of task 1 is not before it
            predecessor listed twice    | "hts-shape 1 x 3 3\\n\\n0\\n1 0 1\\n"     | 4 | task 2 lists predecessor 1 twice
            edge count disagrees        | "hts-shape 1 x 3 3\\n\\n0\\n0\\n"         | 1 | the header declares 3 edges, the task lines hold 2
            """)
    void refusesMalformedTextNamingTheLine(String caseName, String escaped, int line, String problem) {
        String text = escaped.replace("\\n", "\n");
        assertThatThrownBy(() -> ShapeFile.read(new BufferedReader(new StringReader(text))))
                .as(caseName)
                .isInstanceOf(ShapeFile.MalformedException.class)
                .hasMessageStartingWith("line " + line + ": ")
                .hasMessageContaining(problem)
                .satisfies(e ->
                        assertThat(((ShapeFile.MalformedException) e).line()).isEqualTo(line));
    }

    @Test
    void readsWindowsLineEndings() throws IOException {
        String crlf = text(SHAPES[4]).replace("\n", "\r\n");
        assertSameGraph(ShapeFile.read(new BufferedReader(new StringReader(crlf))), SHAPES[4]);
    }

    @Test
    void namesTheFileAndLineOfAMalformedFile(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("bad.shape");
        Files.writeString(file, "hts-shape 1 x 3 2\n\n0\n5\n");
        assertThatThrownBy(() -> ShapeFile.read(file))
                .isInstanceOf(ShapeFile.MalformedException.class)
                .hasMessage(file + ", line 4: predecessor 5 of task 2 is not before it");
    }

    @Test
    void refusesANameThatIsNotOneWord() {
        Shape spaced = Shape.fromPredecessors("two words", new int[][] {{}});
        assertThatThrownBy(() -> ShapeFile.write(spaced, new StringWriter()))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'two words' is not one ASCII word");
    }

    @Test
    void fromPredecessorsRefusesAPredecessorNotBeforeItsTask() {
        assertThatThrownBy(() -> Shape.fromPredecessors("x", new int[][] {{}, {1}}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("dependency 1 of 1 is not before it");
    }

    private static String text(Shape shape) throws IOException {
        StringWriter out = new StringWriter();
        ShapeFile.write(shape, out);
        return out.toString();
    }

    private static String header(Shape shape) throws IOException {
        return text(shape).lines().findFirst().orElseThrow();
    }
}
