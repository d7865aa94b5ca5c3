package io.hts.cluster;

import com.hazelcast.cluster.Member;
import io.hts.engine.cluster.ClusterMember;
import io.hts.engine.cluster.SliceServer;
import io.hts.engine.policy.DeviceHealth;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;

/**
 * A member's status as it travels in the statuses map: a line of text,
 * {@code cpuSlots;gpus;freeDeviceMemory;health;load;coordinator=load,...} (the load by the member
 * that sent the slices; a status without it, of an earlier HTS, reads as not broken down), so that
 * reading it needs no class of HTS.
 */
final class MemberStatus {

    private MemberStatus() {}

    static String encode(
            SliceServer.Capacity capacity, DeviceHealth health, double load, Map<String, Double> loadByCoordinator) {
        StringJoiner by = new StringJoiner(",");
        loadByCoordinator.forEach((coordinator, share) -> by.add(coordinator + "=" + decimal(share)));
        return capacity.cpuSlots() + ";" + capacity.gpus() + ";" + capacity.freeDeviceMemory() + ";" + health.name()
                + ";" + decimal(load) + ";" + by;
    }

    private static String decimal(double value) {
        return String.format(Locale.ROOT, "%.4f", value);
    }

    private static Map<String, Double> loadByCoordinator(String[] f) {
        if (f.length < 6 || f[5].isEmpty()) {
            return Map.of();
        }
        Map<String, Double> by = new HashMap<>();
        for (String entry : f[5].split(",")) {
            int eq = entry.lastIndexOf('=');
            by.put(entry.substring(0, eq), Double.parseDouble(entry.substring(eq + 1)));
        }
        return by;
    }

    /** The member with the status it published; a status it cannot read makes it DOWN (another HTS version). */
    static ClusterMember decode(Member member, String status) {
        String[] f = status.split(";");
        try {
            return new ClusterMember(
                    member.getUuid().toString(),
                    address(member),
                    member.localMember(),
                    Integer.parseInt(f[0]),
                    Integer.parseInt(f[1]),
                    Long.parseLong(f[2]),
                    DeviceHealth.valueOf(f[3]),
                    Double.parseDouble(f[4]),
                    loadByCoordinator(f));
        } catch (RuntimeException ex) {
            return new ClusterMember(
                    member.getUuid().toString(), address(member), member.localMember(), 1, 0, 0, DeviceHealth.DOWN, 0);
        }
    }

    /** A member that has not published a status (yet): listed nowhere, described for messages. */
    static ClusterMember unpublished(Member member) {
        return new ClusterMember(
                member.getUuid().toString(), address(member), member.localMember(), 1, 0, 0, DeviceHealth.DOWN, 0);
    }

    private static String address(Member m) {
        return m.getAddress().getHost() + ":" + m.getAddress().getPort();
    }
}
