package io.hts.engine.policy;

import io.hts.engine.graph.Device;
import java.util.List;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The state of every device the scheduler can use, as input to a {@link SchedulingPolicy}.
 *
 * @param devices one status per device the scheduler has
 */
public record SystemStatus(List<DeviceStatus> devices) {

    /**
     * A status of the given devices.
     *
     * @param devices the device statuses
     * @return the system status
     */
    public static SystemStatus of(DeviceStatus... devices) {
        return new SystemStatus(List.of(devices));
    }

    /**
     * The status of one device.
     *
     * @param device the device
     * @return its status, or {@code null} when the scheduler has no such device
     */
    public @Nullable DeviceStatus status(Device device) {
        for (DeviceStatus s : devices) {
            if (s.device() == device) {
                return s;
            }
        }
        return null;
    }

    /**
     * The status of one device.
     *
     * @param device the device
     * @return its status, if the scheduler has it
     */
    public Optional<DeviceStatus> find(Device device) {
        return Optional.ofNullable(status(device));
    }

    /**
     * Whether a device exists and can take work.
     *
     * @param device the device
     * @return whether it is usable
     */
    public boolean usable(Device device) {
        DeviceStatus s = status(device);
        return s != null && s.usable();
    }
}
