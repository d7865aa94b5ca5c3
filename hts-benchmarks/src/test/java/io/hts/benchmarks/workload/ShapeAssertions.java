package io.hts.benchmarks.workload;

import static org.assertj.core.api.Assertions.assertThat;

/** Assertions comparing two shapes task by task. */
public final class ShapeAssertions {

    private ShapeAssertions() {}

    /** Same name, tasks, predecessors in order, successors and roots. */
    public static void assertSameGraph(Shape actual, Shape expected) {
        assertThat(actual.name()).isEqualTo(expected.name());
        assertThat(actual.size()).isEqualTo(expected.size());
        assertThat(actual.edgeCount()).isEqualTo(expected.edgeCount());
        assertThat(actual.rootCount()).isEqualTo(expected.rootCount());
        for (int r = 0; r < expected.rootCount(); r++) {
            assertThat(actual.root(r)).isEqualTo(expected.root(r));
        }
        for (int i = 0; i < expected.size(); i++) {
            assertThat(actual.predecessorCount(i)).isEqualTo(expected.predecessorCount(i));
            for (int k = 0; k < expected.predecessorCount(i); k++) {
                if (actual.predecessor(i, k) != expected.predecessor(i, k)) {
                    assertThat(actual.predecessor(i, k))
                            .as("%s task %d predecessor %d", expected.name(), i, k)
                            .isEqualTo(expected.predecessor(i, k));
                }
            }
            assertThat(actual.successorStart(i)).isEqualTo(expected.successorStart(i));
        }
        for (int s = 0; s < expected.edgeCount(); s++) {
            if (actual.successor(s) != expected.successor(s)) {
                assertThat(actual.successor(s))
                        .as("%s successor %d", expected.name(), s)
                        .isEqualTo(expected.successor(s));
            }
        }
    }
}
