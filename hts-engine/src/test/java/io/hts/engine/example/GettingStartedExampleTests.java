package io.hts.engine.example;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.support.DocExamples;
import org.junit.jupiter.api.Test;

/** The plain-Java example of docs/getting-started.md runs and prints what the page says. */
class GettingStartedExampleTests {

    @Test
    void itPrintsTheSumTheProfileAndTheFailure() throws Exception {
        long expected = 0;
        for (long n = 1; n <= 1_000; n++) {
            expected += n * n;
        }
        String printed = DocExamples.printedBy(GettingStartedExample::main);
        assertThat(printed)
                .contains("sum of squares = " + expected)
                .contains("of graph 'squares': SUCCEEDED, 6 tasks, makespan ")
                .contains("divide failed after 1 attempt(s): java.lang.ArithmeticException: / by zero");
    }
}
