package io.hts.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Three JVMs on 127.0.0.1: this one coordinates, two more ({@link ClusterMemberMain}, started with
 * this JVM's java and class path) serve; one of them is killed (SIGKILL) while it runs its slices,
 * and the sweep still completes with every shard counted once, equal to a run on one JVM.
 */
class MultiJvmClusterTests {

    static final String GRAPH = "multi-jvm-sweep";
    static final int SHARDS = 240;
    static final int SLICE = 10;

    private static final Duration WAIT = Duration.ofSeconds(60);

    private final List<Process> processes = new ArrayList<>();
    private final List<String> output = new CopyOnWriteArrayList<>();
    private HazelcastInstance hz;
    private HazelcastClusterEngine engine;
    private Scheduler scheduler;

    @AfterEach
    void stop() throws InterruptedException, IOException {
        if (scheduler != null) {
            scheduler.shutdownNow();
            engine.close();
            scheduler.close();
        }
        if (hz != null) {
            hz.shutdown();
        }
        for (Process p : processes) {
            p.getOutputStream().close();
        }
        for (Process p : processes) {
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
    }

    private Process member(String cluster, int port, List<Integer> ports, String mode) throws IOException {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        Process p = new ProcessBuilder(
                        java,
                        "-Xmx256m",
                        "-XX:TieredStopAtLevel=1",
                        "-cp",
                        System.getProperty("java.class.path"),
                        ClusterMemberMain.class.getName(),
                        cluster,
                        String.valueOf(port),
                        ports.stream().map(String::valueOf).collect(Collectors.joining(",")),
                        mode)
                .redirectErrorStream(true)
                .start();
        processes.add(p);
        Thread reader = new Thread(
                () -> {
                    try (BufferedReader in =
                            new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                        for (String line; (line = in.readLine()) != null; ) {
                            output.add(mode + ": " + line);
                        }
                    } catch (IOException ex) {
                        // the member ended
                    }
                },
                "member-output-" + port);
        reader.setDaemon(true);
        reader.start();
        return p;
    }

    @Test
    void aSweepOverThreeJvmsSurvivesAKilledMemberWithEveryShardCountedOnce() throws Exception {
        List<Integer> ports = LoopbackConfig.freePorts(3);
        String cluster = "hts-multi-jvm-" + ports.get(0);
        member(cluster, ports.get(1), ports, "run");
        Process victim = member(cluster, ports.get(2), ports, "block");
        hz = Hazelcast.newHazelcastInstance(LoopbackConfig.member(cluster, ports.get(0), ports));
        engine = new HazelcastClusterEngine(hz);
        scheduler = Scheduler.builder().threads(2).cluster(engine).build();
        SweepGraph sweep = new SweepGraph(GRAPH, SHARDS, SLICE, i -> {});
        scheduler.register(sweep.graph);
        // A member is listed as soon as its scheduler serves, before it registers the graph (the
        // member that lacks a graph and is still sent slices is issue 38's); so the sweep waits for
        // both members to say they registered it ("SERVING", printed after register).
        await().atMost(WAIT)
                .alias("three members serving, the graph registered on each; output: " + output)
                .until(() -> engine.members().size() == 3
                        && output.stream().anyMatch(l -> l.startsWith("run: SERVING"))
                        && output.stream().anyMatch(l -> l.startsWith("block: SERVING")));

        GraphRun run = scheduler.submit(sweep.graph);
        await().atMost(WAIT)
                .alias("the blocking member entered a shard; output: " + output)
                .until(() -> output.stream().anyMatch(l -> l.startsWith("block: ENTERED")));
        victim.destroyForcibly();

        GraphRun done = run.await(WAIT.plusSeconds(30));

        assertThat(done.results(sweep.simulations)).isEqualTo(SweepGraph.expected(SHARDS));
        assertThat(output).anyMatch(l -> l.startsWith("run: ENTERED"));
        await().atMost(WAIT).until(() -> engine.members().size() == 2);
    }
}
