package io.hts.engine.policy;

import io.hts.engine.graph.Device;
import java.util.concurrent.atomic.AtomicLong;

/** Alternates over the usable devices a task has a body for, one task each in turn. */
public class RoundRobinPolicy implements SchedulingPolicy {

    private final AtomicLong turn = new AtomicLong();

    @Override
    public String name() {
        return "round-robin";
    }

    @Override
    public Device selectDevice(TaskInfo task, SystemStatus status) {
        Device[] all = Device.values();
        Device[] candidates = new Device[all.length];
        int n = 0;
        for (Device d : all) {
            if (task.canRunOn(d) && status.usable(d)) {
                candidates[n++] = d;
            }
        }
        if (n == 0) {
            return DefaultPolicy.fallback(task);
        }
        return candidates[(int) Math.floorMod(turn.getAndIncrement(), (long) n)];
    }
}
