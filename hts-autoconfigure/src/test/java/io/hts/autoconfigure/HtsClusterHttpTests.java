package io.hts.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import io.hts.autoconfigure.support.LocalHttp;
import io.hts.cluster.HazelcastClusterEngine;
import io.hts.cluster.LoopbackConfig;
import io.hts.engine.cluster.ClusterEngine;
import io.hts.engine.run.Scheduler;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;

/**
 * Over real HTTP: {@code /actuator/hts} lists the cluster's members (id, address, CPU slots, GPUs,
 * health, load, which one is this JVM) and {@code /actuator/health}'s {@code hts} reports the
 * cluster; the other member leaving makes the cluster DEGRADED under
 * {@code hts.cluster.minimum-members=2} (HTS stays UP), this application's own Hazelcast member
 * shutting down makes HTS DOWN (503).
 */
class HtsClusterHttpTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void theMembersShowUnderActuatorHtsAndHealthFollowsThemLeaving() throws Exception {
        List<Integer> ports = LoopbackConfig.freePorts(2);
        String cluster = "hts-http-" + ports.get(0);
        // the other member: an embedded Hazelcast member with a scheduler of one worker, no Spring
        HazelcastInstance other = Hazelcast.newHazelcastInstance(LoopbackConfig.member(cluster, ports.get(1), ports));
        Scheduler otherScheduler = Scheduler.builder()
                .threads(1)
                .cluster(new HazelcastClusterEngine(other))
                .build();
        try (ConfigurableApplicationContext app = LocalHttp.server(ClusterApp.class)
                .properties(
                        "hts.cluster.enabled=true",
                        "hts.cluster.minimum-members=2",
                        "hts.executor.threads=2",
                        "test.cluster.name=" + cluster,
                        "test.cluster.port=" + ports.get(0),
                        "test.cluster.ports=" + ports.get(0) + "," + ports.get(1),
                        "management.endpoints.web.exposure.include=hts,health",
                        "management.endpoint.health.show-details=always",
                        "management.endpoint.health.show-components=always")
                .run()) {
            ClusterEngine engine = app.getBean(ClusterEngine.class);
            await().atMost(WAIT).until(() -> engine.members().size() == 2);

            JsonNode listed = LocalHttp.getJson(app, "/actuator/hts").get("cluster");
            assertThat(listed.get("engine").asText()).contains("hazelcast 5.7.0", cluster);
            List<JsonNode> members = new ArrayList<>();
            listed.get("members").forEach(members::add);
            assertThat(members).hasSize(2);
            JsonNode local = members.stream()
                    .filter(m -> m.get("local").asBoolean())
                    .findFirst()
                    .orElseThrow();
            JsonNode remote = members.stream()
                    .filter(m -> !m.get("local").asBoolean())
                    .findFirst()
                    .orElseThrow();
            assertThat(local.get("id").asText()).isEqualTo(engine.localMember().id());
            assertThat(local.get("address").asText()).isEqualTo("127.0.0.1:" + ports.get(0));
            assertThat(local.get("cpuSlots").asInt()).isEqualTo(2);
            assertThat(remote.get("id").asText())
                    .isEqualTo(other.getCluster().getLocalMember().getUuid().toString());
            assertThat(remote.get("address").asText()).isEqualTo("127.0.0.1:" + ports.get(1));
            assertThat(remote.get("cpuSlots").asInt()).isEqualTo(1);
            for (JsonNode m : members) {
                assertThat(m.get("gpus").asInt()).isZero();
                assertThat(m.get("freeDeviceMemoryBytes").asLong()).isZero();
                assertThat(m.get("health").asText()).isEqualTo("UP");
                assertThat(m.get("load").asDouble()).isGreaterThanOrEqualTo(0);
            }
            JsonNode hts =
                    LocalHttp.getJson(app, "/actuator/health").get("components").get("hts");
            assertThat(hts.get("status").asText()).isEqualTo("UP");
            assertThat(hts.get("details").get("cluster").get("status").asText()).isEqualTo("UP");
            assertThat(hts.get("details").get("cluster").get("members").asInt()).isEqualTo(2);

            otherScheduler.close();
            other.shutdown();
            await().atMost(WAIT).until(() -> engine.members().size() == 1);
            JsonNode degraded =
                    LocalHttp.getJson(app, "/actuator/health").get("components").get("hts");
            assertThat(degraded.get("status").asText()).isEqualTo("UP");
            assertThat(degraded.get("details").get("cluster").get("status").asText())
                    .isEqualTo("DEGRADED");
            assertThat(degraded.get("details").get("cluster").get("reason").asText())
                    .isEqualTo("1 of at least 2 members (hts.cluster.minimum-members)");
            assertThat(LocalHttp.getJson(app, "/actuator/hts").get("cluster").get("members"))
                    .hasSize(1);

            app.getBean(HazelcastInstance.class).shutdown();
            HttpResponse<String> down = LocalHttp.get(app, "/actuator/health");
            assertThat(down.statusCode()).as(down.body()).isEqualTo(503);
            JsonNode downHts = LocalHttp.json(down).get("components").get("hts");
            assertThat(downHts.get("status").asText()).isEqualTo("DOWN");
            assertThat(downHts.get("details").get("cluster").get("status").asText())
                    .isEqualTo("DOWN");
            assertThat(downHts.get("details").get("cluster").get("reason").asText())
                    .startsWith("the cluster engine cannot list its members: ")
                    .contains("HazelcastInstanceNotActiveException");
            JsonNode gone = LocalHttp.getJson(app, "/actuator/hts").get("cluster");
            assertThat(gone.get("members")).isEmpty();
            assertThat(gone.get("error").asText()).contains("HazelcastInstanceNotActiveException");
        } finally {
            otherScheduler.close();
            other.shutdown();
        }
    }
}
