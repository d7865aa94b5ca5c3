package io.hts.cluster;

import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import io.hts.engine.run.Scheduler;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * A worker member in a JVM of its own, for {@link MultiJvmClusterTests}: joins the cluster, serves
 * the sweep, prints {@code SERVING} once its status is published and {@code ENTERED} when a shard
 * starts (with {@code block}, its shards then wait until the JVM is killed), and ends when its
 * standard input closes (the test's end).
 *
 * <p>Arguments: cluster name, own port, all ports (comma-separated), {@code block} or {@code run}.
 */
public final class ClusterMemberMain {

    private ClusterMemberMain() {}

    public static void main(String[] args) throws IOException, InterruptedException {
        String cluster = args[0];
        int port = Integer.parseInt(args[1]);
        List<Integer> ports =
                Arrays.stream(args[2].split(",")).map(Integer::valueOf).toList();
        boolean block = args[3].equals("block");
        HazelcastInstance hz = Hazelcast.newHazelcastInstance(LoopbackConfig.member(cluster, port, ports));
        HazelcastClusterEngine engine = new HazelcastClusterEngine(hz);
        Scheduler scheduler = Scheduler.builder().threads(2).cluster(engine).build();
        CountDownLatch killed = new CountDownLatch(1);
        scheduler.register(new SweepGraph(
                        MultiJvmClusterTests.GRAPH, MultiJvmClusterTests.SHARDS, MultiJvmClusterTests.SLICE, i -> {
                            System.out.println("ENTERED " + i);
                            if (block) {
                                try {
                                    killed.await();
                                } catch (InterruptedException ex) {
                                    Thread.currentThread().interrupt();
                                }
                            }
                        })
                .graph);
        System.out.println("SERVING " + engine.localMember().id());
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            while (in.readLine() != null) {
                // the test closes standard input to end the member
            }
        }
        scheduler.shutdownNow();
        engine.close();
        scheduler.close();
        hz.shutdown();
    }
}
