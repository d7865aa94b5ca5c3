package io.hts.engine.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.engine.graph.GraphValidationException;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.policy.DeviceHealth;
import java.io.Serializable;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The SPI's values, the fingerprint, the codec's allow-list and the group's distributed marker. */
class ClusterApiTests {

    record Point(int x, int y) implements Serializable {}

    @Test
    void theFingerprintIsTheSameForTheSameGraphAndChangesWithItsShape() {
        String one = GraphFingerprint.of(Sweeps.of(8, 2).graph);

        assertThat(GraphFingerprint.of(Sweeps.of(8, 2).graph)).isEqualTo(one).hasSize(32);
        assertThat(GraphFingerprint.of(Sweeps.of(8, 3).graph)).isNotEqualTo(one);
        assertThat(GraphFingerprint.of(Sweeps.of(9, 2).graph)).isNotEqualTo(one);
    }

    @Test
    void theDefaultCodecRefusesClassesOutsideItsAllowListNamingClassAndList() {
        JavaSerializationCodec codec = JavaSerializationCodec.defaults();
        byte[] point = codec.encode(new Point(1, 2));

        assertThat(codec.decode(codec.encode(List.of(1L, "two", Map.of("k", 3.0)))))
                .isEqualTo(List.of(1L, "two", Map.of("k", 3.0)));
        assertThat(codec.decode(codec.encode(new long[] {1, 2}))).isEqualTo(new long[] {1, 2});
        assertThatThrownBy(() -> codec.decode(point))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(Point.class.getName())
                .hasMessageContaining("java.lang.*")
                .hasMessageContaining("JavaSerializationCodec.allowing");
        assertThat(JavaSerializationCodec.allowing("io.hts.engine.cluster.*").decode(point))
                .isEqualTo(new Point(1, 2));
        assertThatThrownBy(() -> codec.decode(new byte[] {1, 2, 3}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("could not be decoded");
    }

    @Test
    void anAllowListPatternThatIsNotAnAllowanceIsRefused() {
        for (String bad : List.of("", "a.*;b.*", "!java.*", "maxdepth=5")) {
            assertThatThrownBy(() -> JavaSerializationCodec.allowing(bad))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'" + bad + "' is not accepted");
        }
        assertThat(JavaSerializationCodec.allowing("com.example.**").allowed()).endsWith("com.example.**");
    }

    @Test
    void aGroupIsDistributedOnlyBeforeItsGraphIsFrozenAndWithAPositiveSliceSize() {
        TaskGraph g = TaskGraph.named("g");
        var group = g.group("part", 3, (i, t) -> t.cpu(ctx -> i));

        assertThat(group.isDistributed()).isFalse();
        assertThat(group.sliceSize()).isEqualTo(-1);
        assertThatThrownBy(() -> group.distributed(0))
                .isInstanceOf(GraphValidationException.class)
                .hasMessageContaining("group 'part' of graph 'g': a slice size must be 1 or more, was 0");
        assertThat(group.distributed().sliceSize()).isZero();
        assertThat(group.distributed(5).sliceSize()).isEqualTo(5);
        assertThat(group).hasToString("group 'part' (3 tasks, distributed)");
        g.compile();
        assertThatThrownBy(group::distributed)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("frozen");
    }

    @Test
    void theSpiValuesCheckWhatTheyAreGiven() {
        assertThatThrownBy(() -> new SliceWork("g", "f", "part", 3, 3, "c", 1, 1, null, Map.of(), Set.of()))
                .hasMessageContaining(
                        "group 'part' of graph 'g': [from, to) must hold at least one member, was [3, 3)");
        assertThatThrownBy(() -> new SliceWork("g", "f", "part", 0, 3, "c", 1, 0, null, Map.of(), Set.of()))
                .hasMessageContaining("attempt counts from 1");
        assertThatThrownBy(() -> new SliceWork("g", "f", "part", 0, 3, "c", 1, 1, null, Map.of(), Set.of(3)))
                .hasMessageContaining("a member skipped must be in the slice, was 3");
        assertThatThrownBy(() -> new SliceWork("g", "f", "part", 0, 2, "c", 1, 1, null, Map.of(), Set.of(0, 1)))
                .hasMessageContaining("slice [0, 2) of group 'part': every member is skipped");
        assertThatThrownBy(() -> new SliceResult("m", Payload.byValue(new byte[0]), Map.of(), 0, -1))
                .hasMessageContaining("bodyNanos and gpuMembers must be 0 or more");
        assertThatThrownBy(() -> new ClusterMember("m", "h:1", false, 0, 0, 0, DeviceHealth.UP, 0))
                .hasMessageContaining("member m (h:1): cpuSlots must be 1 or more, was 0");
        assertThatThrownBy(() -> new ClusterMember("m", "h:1", false, 1, -1, 0, DeviceHealth.UP, 0))
                .hasMessageContaining("must be 0 or more");
        assertThatThrownBy(() -> new ClusterMember("m", "h:1", false, 1, 0, 0, DeviceHealth.UP, 1, Map.of("c", -0.5)))
                .hasMessageContaining("member m (h:1): the load of coordinator c must be 0 or more, was -0.5");
        ClusterMember busy = new ClusterMember("m", "h:1", false, 4, 0, 0, DeviceHealth.UP, 1.5, Map.of("a", 1.0));
        assertThat(busy.loadFromOthers("a")).isEqualTo(0.5);
        assertThat(busy.loadFromOthers("b")).isEqualTo(1.5);
        assertThat(new ClusterMember("m", "h:1", false, 4, 0, 0, DeviceHealth.UP, 0.25).loadByCoordinator())
                .isEmpty();
        assertThatThrownBy(() -> ClusterSettings.defaults().withInlineBytes(-1)).hasMessageContaining("inlineBytes");
        assertThatThrownBy(() -> ClusterSettings.defaults().withSliceAttempts(0))
                .hasMessageContaining("sliceAttempts");
        assertThatThrownBy(() -> new ClusterSettings(JavaSerializationCodec.defaults(), 1, Duration.ZERO, 0.1, 1))
                .hasMessageContaining("roundTrip");
        assertThatThrownBy(
                        () -> new ClusterSettings(JavaSerializationCodec.defaults(), 1, Duration.ofMillis(1), 1.5, 1))
                .hasMessageContaining("overhead");
        assertThat(Payload.byValue(new byte[] {1})).isEqualTo(Payload.byValue(new byte[] {1}));
        assertThat(Payload.byReference("k", 10))
                .hasToString("payload 'k' (10 bytes)")
                .isNotEqualTo(Payload.byValue(new byte[10]));
        assertThatThrownBy(() -> Payload.byReference("k", -1)).hasMessageContaining("payload 'k'");
        assertThat(new SliceWork("g", "f", "part", 0, 3, "c", 7, 2, null, Map.of(), Set.of()))
                .hasToString("slice [0, 3) of group 'part' of graph 'g' (run 7 of c, attempt 2)");
    }
}
