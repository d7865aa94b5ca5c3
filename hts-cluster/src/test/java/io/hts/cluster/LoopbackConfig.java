package io.hts.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Hazelcast members for tests: TCP/IP join on 127.0.0.1 only, the ports given, multicast and
 * auto-detection off, no phone-home, joins without the default wait, a lost member noticed within
 * seconds.
 */
public final class LoopbackConfig {

    private LoopbackConfig() {}

    /** {@code n} ports free on 127.0.0.1 now. */
    public static List<Integer> freePorts(int n) {
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            List<Integer> ports = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                sockets.add(s);
                ports.add(s.getLocalPort());
            }
            return ports;
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        } finally {
            for (ServerSocket s : sockets) {
                try {
                    s.close();
                } catch (IOException ignored) {
                    // closing a probe
                }
            }
        }
    }

    /**
     * Starts {@code n} members of a new cluster named {@code prefix} and the first port, joined to
     * one another, in the order of their ports.
     */
    public static List<HazelcastInstance> startMembers(String prefix, int n) {
        List<Integer> ports = freePorts(n);
        String cluster = prefix + "-" + ports.get(0);
        List<HazelcastInstance> members = new CopyOnWriteArrayList<>();
        ports.parallelStream().forEach(p -> members.add(Hazelcast.newHazelcastInstance(member(cluster, p, ports))));
        List<HazelcastInstance> sorted = new ArrayList<>(members);
        sorted.sort(Comparator.comparingInt(
                m -> m.getCluster().getLocalMember().getAddress().getPort()));
        return sorted;
    }

    /**
     * A member of cluster {@code clusterName} listening on 127.0.0.1:{@code port} that joins the
     * members on {@code ports}.
     */
    public static Config member(String clusterName, int port, List<Integer> ports) {
        Config config = new Config();
        config.setClusterName(clusterName);
        config.setInstanceName(clusterName + "-" + port);
        config.setProperty("hazelcast.phone.home.enabled", "false");
        config.setProperty("hazelcast.logging.type", "slf4j");
        config.setProperty("hazelcast.shutdownhook.enabled", "false");
        config.setProperty("hazelcast.wait.seconds.before.join", "0");
        config.setProperty("hazelcast.max.wait.seconds.before.join", "0");
        config.setProperty("hazelcast.heartbeat.interval.seconds", "1");
        config.setProperty("hazelcast.max.no.heartbeat.seconds", "6");
        config.setProperty("hazelcast.partition.count", "31");
        config.setProperty("hazelcast.socket.bind.any", "false");
        NetworkConfig network = config.getNetworkConfig();
        network.setPort(port).setPortAutoIncrement(false);
        network.getInterfaces().setEnabled(true).addInterface("127.0.0.1");
        JoinConfig join = network.getJoin();
        join.getMulticastConfig().setEnabled(false);
        join.getAutoDetectionConfig().setEnabled(false);
        join.getTcpIpConfig().setEnabled(true).setConnectionTimeoutSeconds(2);
        for (int p : ports) {
            join.getTcpIpConfig().addMember("127.0.0.1:" + p);
        }
        return config;
    }
}
