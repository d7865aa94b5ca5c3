package io.hts.gpu.device;

import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.exec.DeviceTask;
import io.hts.engine.graph.Device;
import io.hts.engine.policy.DeviceStatus;

/** Lends one backend to several schedulers in a test: closing a scheduler leaves it open. */
record Unclosed(DeviceBackend backend) implements DeviceBackend {

    @Override
    public Device device() {
        return backend.device();
    }

    @Override
    public String name() {
        return backend.name();
    }

    @Override
    public DeviceStatus status() {
        return backend.status();
    }

    @Override
    public void dispatch(DeviceTask task) {
        backend.dispatch(task);
    }

    @Override
    public boolean assist() {
        return backend.assist();
    }

    @Override
    public boolean isDeviceThread() {
        return backend.isDeviceThread();
    }

    @Override
    public void close() {}
}
