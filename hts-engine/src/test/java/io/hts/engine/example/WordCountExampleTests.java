package io.hts.engine.example;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.support.DocExamples;
import org.junit.jupiter.api.Test;

/** The examples of docs/engine.md run and give what the page says. */
class WordCountExampleTests {

    @Test
    void theShardsCountEveryWordAndTheBarrierWaitsForThemAll() throws Exception {
        String printed = DocExamples.printedBy(args -> WordCountExample.countWords());
        assertThat(printed)
                .startsWith("{a=2, and=1, brown=1, dog=3, fox=3, jumps=1, lazy=2, over=1, quick=2, runs=1, sleeps=1,"
                        + " the=4}; 4 shards counted in run ");
    }

    @Test
    void aBodyRunsANestedGraphOnAPoolOfOneWorker() {
        assertThat(WordCountExample.nested()).isEqualTo(5050L);
    }
}
