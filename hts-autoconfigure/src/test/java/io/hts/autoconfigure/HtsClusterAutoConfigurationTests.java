package io.hts.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hazelcast.config.ClasspathYamlConfig;
import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.core.HazelcastInstance;
import io.hts.autoconfigure.health.HtsHealthContributorAutoConfiguration;
import io.hts.autoconfigure.health.HtsHealthIndicator;
import io.hts.cluster.HazelcastClusterEngine;
import io.hts.cluster.LoopbackConfig;
import io.hts.engine.cluster.ClusterEngine;
import io.hts.engine.cluster.ClusterMember;
import io.hts.engine.cluster.ClusterSettings;
import io.hts.engine.cluster.JavaSerializationCodec;
import io.hts.engine.cluster.PayloadCodec;
import io.hts.engine.cluster.PayloadStore;
import io.hts.engine.cluster.SliceServer;
import io.hts.engine.cluster.SliceWork;
import io.hts.engine.cluster.SubmittedSlice;
import io.hts.engine.policy.DeviceHealth;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.hazelcast.autoconfigure.HazelcastAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code hts.cluster.enabled=true} on the application's Hazelcast member (as Spring Boot makes it
 * from a {@code Config} bean): the engine, the scheduler's settings, two applications sharing a
 * sweep, one leaving; and the failures: no Hazelcast member, no hts-cluster, an engine of the
 * application's own. Members on 127.0.0.1 only (TCP/IP join, multicast and auto-detection off).
 */
class HtsClusterAutoConfigurationTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(
                    HazelcastAutoConfiguration.class,
                    HtsClusterAutoConfiguration.class,
                    HtsAutoConfiguration.class,
                    HtsHealthContributorAutoConfiguration.class))
            .withPropertyValues("hts.executor.threads=2");

    /** A runner for the member on {@code port} of a cluster of {@code ports}. */
    private ApplicationContextRunner member(String cluster, int port, List<Integer> ports) {
        return runner.withUserConfiguration(ClusterApp.Member.class)
                .withPropertyValues(
                        "hts.cluster.enabled=true",
                        "test.cluster.name=" + cluster,
                        "test.cluster.port=" + port,
                        "test.cluster.ports=" + ports.get(0) + "," + ports.get(1));
    }

    @Test
    void theEngineRunsOnTheApplicationsMemberWithTheClusterProperties() {
        List<Integer> ports = LoopbackConfig.freePorts(2);
        member("hts-ac-" + ports.get(0), ports.get(0), ports)
                .withPropertyValues(
                        "hts.cluster.inline-limit=1KB",
                        "hts.cluster.round-trip=2ms",
                        "hts.cluster.overhead=0.1",
                        "hts.cluster.slice-attempts=5",
                        "hts.cluster.allowed-classes=com.example.sweep.*,com.example.Point",
                        "hts.cluster.hazelcast.executor-name=my-slices",
                        "hts.cluster.hazelcast.status-interval=200ms",
                        "hts.cluster.hazelcast.payload-time-to-live=1m")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    HazelcastClusterEngine engine = context.getBean(HazelcastClusterEngine.class);
                    Scheduler scheduler = context.getBean(Scheduler.class);
                    assertThat(scheduler.cluster()).containsSame(engine);
                    assertThat(engine.options().executorName()).isEqualTo("my-slices");
                    assertThat(engine.options().statusInterval()).isEqualTo(Duration.ofMillis(200));
                    assertThat(engine.options().payloadTimeToLive()).isEqualTo(Duration.ofMinutes(1));
                    assertThat(engine.name())
                            .contains(context.getBean(HazelcastInstance.class)
                                    .getConfig()
                                    .getClusterName());
                    ClusterSettings settings = context.getBean(ClusterSettings.class);
                    assertThat(settings.inlineBytes()).isEqualTo(1024);
                    assertThat(settings.roundTrip()).isEqualTo(Duration.ofMillis(2));
                    assertThat(settings.overhead()).isEqualTo(0.1);
                    assertThat(settings.sliceAttempts()).isEqualTo(5);
                    assertThat(((JavaSerializationCodec) settings.codec()).allowed())
                            .containsAll(JavaSerializationCodec.DEFAULT_ALLOWED)
                            .contains("com.example.sweep.*", "com.example.Point");
                    assertThat(engine.members()).singleElement().satisfies(m -> {
                        assertThat(m.local()).isTrue();
                        assertThat(m.cpuSlots()).isEqualTo(2);
                        assertThat(m.address()).isEqualTo("127.0.0.1:" + ports.get(0));
                    });
                    ClusterApp.Squares squares = context.getBean(ClusterApp.Squares.class);
                    assertThat(scheduler.execute(squares.graph()).result(squares.total()))
                            .isEqualTo(ClusterApp.TOTAL);
                    Health health = context.getBean(HtsHealthIndicator.class).health();
                    assertThat(health.getStatus()).isEqualTo(Status.UP);
                    assertThat(health.getDetails().get("cluster"))
                            .isEqualTo(Map.of("status", "UP", "members", 1, "minimumMembers", 1));
                });
    }

    /**
     * Two applications of one cluster: a sweep submitted on one runs slices on both and totals as
     * one JVM would; the other leaving (its context closed) leaves one member, which the health
     * reports DEGRADED under {@code hts.cluster.minimum-members=2} while HTS stays UP, and a sweep
     * still completes on the member left.
     */
    @Test
    void twoApplicationsShareASweepAndOneLeaving() {
        List<Integer> ports = LoopbackConfig.freePorts(2);
        String cluster = "hts-ac-" + ports.get(0);
        member(cluster, ports.get(0), ports)
                .withPropertyValues("hts.cluster.minimum-members=2")
                .run(a -> {
                    Scheduler scheduler = a.getBean(Scheduler.class);
                    ClusterEngine engine = a.getBean(ClusterEngine.class);
                    HtsHealthIndicator health = a.getBean(HtsHealthIndicator.class);
                    ClusterApp.Squares squares = a.getBean(ClusterApp.Squares.class);
                    member(cluster, ports.get(1), ports).run(b -> {
                        await().atMost(WAIT).until(() -> engine.members().size() == 2);
                        assertThat(engine.members())
                                .filteredOn(ClusterMember::local)
                                .hasSize(1);
                        assertThat(health.health().getDetails().get("cluster"))
                                .isEqualTo(Map.of("status", "UP", "members", 2, "minimumMembers", 2));
                        int before = shardsOf(ports.get(1));
                        GraphRun run = scheduler.execute(squares.graph());
                        assertThat(run.result(squares.total())).isEqualTo(ClusterApp.TOTAL);
                        assertThat(shardsOf(ports.get(1)))
                                .as("shards the second application ran")
                                .isGreaterThan(before);
                    });
                    await().atMost(WAIT).until(() -> engine.members().size() == 1);
                    Health h = health.health();
                    assertThat(h.getStatus()).isEqualTo(Status.UP);
                    assertThat(h.getDetails().get("cluster"))
                            .isEqualTo(Map.of(
                                    "status",
                                    "DEGRADED",
                                    "members",
                                    1,
                                    "minimumMembers",
                                    2,
                                    "reason",
                                    "1 of at least 2 members (hts.cluster.minimum-members)"));
                    assertThat(scheduler.execute(squares.graph()).result(squares.total()))
                            .isEqualTo(ClusterApp.TOTAL);
                });
    }

    private static int shardsOf(int port) {
        return ClusterApp.SHARDS
                .getOrDefault(port, new java.util.concurrent.atomic.AtomicInteger())
                .get();
    }

    @Test
    void disabledByDefaultMakesNoEngine() {
        runner.run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(ClusterEngine.class);
            assertThat(context.getBean(Scheduler.class).cluster()).isEmpty();
            assertThat(context.getBean(HtsHealthIndicator.class).health().getDetails())
                    .doesNotContainKey("cluster");
        });
    }

    @Test
    void enabledWithoutAHazelcastInstanceFailsNamingTheProperty() {
        runner.withPropertyValues("hts.cluster.enabled=true").run(context -> {
            InvalidHtsPropertyException invalid = invalid(context.getStartupFailure());
            assertThat(invalid.property()).isEqualTo("hts.cluster.enabled");
            assertThat(invalid.accepted()).isEqualTo(HtsClusterAutoConfiguration.NEEDS + "; found none");
            FailureAnalysis report = new HtsFailureAnalyzer().analyze(context.getStartupFailure());
            assertThat(report.getDescription()).isEqualTo("Invalid value 'true' for property 'hts.cluster.enabled'.");
            assertThat(report.getAction()).contains("spring-boot-hazelcast");
        });
    }

    @Test
    void enabledWithoutHtsClusterOnTheClassPathFailsNamingTheProperty() {
        runner.withClassLoader(new FilteredClassLoader(HazelcastClusterEngine.class))
                .withPropertyValues("hts.cluster.enabled=true")
                .run(context -> {
                    InvalidHtsPropertyException invalid = invalid(context.getStartupFailure());
                    assertThat(invalid.property()).isEqualTo("hts.cluster.enabled");
                    assertThat(invalid.accepted()).contains("add io.hts:hts-cluster");
                });
    }

    /**
     * An application's engine and codec replace HTS's: no Hazelcast engine is made (no Hazelcast
     * member is needed), the scheduler runs on the application's engine with the codec.
     */
    @Test
    void theApplicationsEngineAndCodecWin() {
        runner.withUserConfiguration(OwnEngine.class)
                .withPropertyValues("hts.cluster.enabled=true", "hts.cluster.slice-attempts=7")
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean(HazelcastClusterEngine.class);
                    OneMember engine = context.getBean(OneMember.class);
                    assertThat(context.getBean(Scheduler.class).cluster()).containsSame(engine);
                    assertThat(engine.served).isNotNull();
                    ClusterSettings settings = context.getBean(ClusterSettings.class);
                    assertThat(settings.codec()).isSameAs(context.getBean(PayloadCodec.class));
                    assertThat(settings.sliceAttempts()).isEqualTo(7);
                });
    }

    /** docs/cluster.md's configuration for real hosts reads as it says (parsed only: no member starts). */
    @Test
    void theDocumentedHostConfigurationJoinsByTcpIpOnly() {
        Config config = new ClasspathYamlConfig("cluster/hazelcast-hosts.yaml");
        JoinConfig join = config.getNetworkConfig().getJoin();
        assertThat(join.getMulticastConfig().isEnabled()).isFalse();
        assertThat(join.getAutoDetectionConfig().isEnabled()).isFalse();
        assertThat(join.getTcpIpConfig().isEnabled()).isTrue();
        assertThat(join.getTcpIpConfig().getMembers())
                .containsExactly("10.0.4.11:5701", "10.0.4.12:5701", "10.0.4.13:5701");
        assertThat(config.getNetworkConfig().getInterfaces().getInterfaces()).containsExactly("10.0.4.*");
        assertThat(config.getNetworkConfig().isPortAutoIncrement()).isFalse();
        assertThat(config.getProperty("hazelcast.socket.bind.any")).isEqualTo("false");
        assertThat(config.getExecutorConfig("hts-slices").getPoolSize()).isEqualTo(16);
    }

    private static InvalidHtsPropertyException invalid(Throwable failure) {
        Throwable root = failure;
        while (root.getCause() != null && !(root instanceof InvalidHtsPropertyException)) {
            root = root.getCause();
        }
        assertThat(root).isInstanceOf(InvalidHtsPropertyException.class);
        return (InvalidHtsPropertyException) root;
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnEngine {

        @Bean
        OneMember ownEngine() {
            return new OneMember();
        }

        @Bean
        PayloadCodec ownCodec() {
            return JavaSerializationCodec.allowing("com.example.*");
        }
    }

    /** An engine of one member, this one, that sends nothing anywhere. */
    static final class OneMember implements ClusterEngine {

        private final ClusterMember local = new ClusterMember("local", "in-memory", true, 1, 0, 0, DeviceHealth.UP, 0);
        volatile SliceServer served;

        @Override
        public String name() {
            return "one member";
        }

        @Override
        public ClusterMember localMember() {
            return local;
        }

        @Override
        public List<ClusterMember> members() {
            return List.of(local);
        }

        @Override
        public SubmittedSlice submit(ClusterMember member, SliceWork work) {
            throw new UnsupportedOperationException("one member: slices run on the coordinator");
        }

        @Override
        public Subscription onMembershipChange(Consumer<io.hts.engine.cluster.MembershipEvent> listener) {
            return () -> {};
        }

        @Override
        public void serve(SliceServer server) {
            served = server;
        }

        @Override
        public PayloadStore payloads() {
            return new PayloadStore() {
                private final Map<String, byte[]> stored = new ConcurrentHashMap<>();

                @Override
                public CompletionStage<Void> put(String key, byte[] bytes) {
                    stored.put(key, bytes);
                    return CompletableFuture.completedFuture(null);
                }

                @Override
                public CompletionStage<byte[]> get(String key) {
                    return CompletableFuture.completedFuture(stored.get(key));
                }

                @Override
                public void delete(String key) {
                    stored.remove(key);
                }
            };
        }
    }
}
