package io.hts.cluster;

import com.hazelcast.cluster.Member;
import io.hts.engine.cluster.ClusterMember;
import io.hts.engine.cluster.SliceServer;
import io.hts.engine.policy.DeviceHealth;
import java.util.Locale;

/**
 * A member's status as it travels in the statuses map: a line of text,
 * {@code cpuSlots;gpus;freeDeviceMemory;health;load}, so that reading it needs no class of HTS.
 */
final class MemberStatus {

    private MemberStatus() {}

    static String encode(SliceServer.Capacity capacity, DeviceHealth health, double load) {
        return capacity.cpuSlots() + ";" + capacity.gpus() + ";" + capacity.freeDeviceMemory() + ";" + health.name()
                + ";" + String.format(Locale.ROOT, "%.4f", load);
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
                    Double.parseDouble(f[4]));
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
