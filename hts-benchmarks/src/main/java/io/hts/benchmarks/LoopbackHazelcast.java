package io.hts.benchmarks;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import io.hts.engine.cluster.ClusterEngine;
import io.hts.engine.cluster.ClusterMember;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Hazelcast members of the cluster benchmarks: embedded, on 127.0.0.1 only, joined over TCP/IP. */
public final class LoopbackHazelcast {

    private LoopbackHazelcast() {}

    /** A member on 127.0.0.1 only, TCP/IP join of {@code ports}, no multicast, no auto-detection. */
    public static Config member(String cluster, int port, List<Integer> ports) {
        Config config = new Config().setClusterName(cluster).setInstanceName(cluster + "-" + port);
        config.setProperty("hazelcast.phone.home.enabled", "false");
        config.setProperty("hazelcast.logging.type", "none");
        config.setProperty("hazelcast.shutdownhook.enabled", "false");
        config.setProperty("hazelcast.wait.seconds.before.join", "0");
        config.setProperty("hazelcast.socket.bind.any", "false");
        NetworkConfig network = config.getNetworkConfig().setPort(port).setPortAutoIncrement(false);
        network.getInterfaces().setEnabled(true).addInterface("127.0.0.1");
        JoinConfig join = network.getJoin();
        join.getMulticastConfig().setEnabled(false);
        join.getAutoDetectionConfig().setEnabled(false);
        join.getTcpIpConfig().setEnabled(true);
        ports.forEach(p -> join.getTcpIpConfig().addMember("127.0.0.1:" + p));
        return config;
    }

    /** {@code n} ports free on 127.0.0.1 now. */
    public static List<Integer> freePorts(int n) {
        List<Integer> ports = new ArrayList<>();
        List<ServerSocket> open = new ArrayList<>();
        try {
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                open.add(s);
                ports.add(s.getLocalPort());
            }
            for (ServerSocket s : open) {
                s.close();
            }
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        return ports;
    }

    /** Starts {@code n} members of one new cluster, on 127.0.0.1, at once. */
    public static List<HazelcastInstance> start(String name, int n) {
        List<Integer> ports = freePorts(n);
        String cluster = name + "-" + ports.get(0);
        List<HazelcastInstance> started = new ArrayList<>();
        ports.parallelStream()
                .map(p -> Hazelcast.newHazelcastInstance(member(cluster, p, ports)))
                .forEach(hz -> {
                    synchronized (started) {
                        started.add(hz);
                    }
                });
        return started;
    }

    /**
     * Waits, at most a minute, until the engine lists {@code n} members and every member has
     * published its status (with at least {@code gpus} GPUs in all).
     */
    public static void awaitMembers(ClusterEngine engine, int n, int gpus) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (engine.members().size() < n
                || engine.members().stream().mapToInt(ClusterMember::gpus).sum() < gpus) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only " + engine.members() + " of " + n + " members");
            }
            Thread.onSpinWait();
        }
    }
}
