package io.hts.engine.run;

import io.hts.engine.policy.CpuFirstPolicy;
import io.hts.engine.policy.DefaultPolicy;
import io.hts.engine.policy.GpuFirstPolicy;
import io.hts.engine.policy.RoundRobinPolicy;
import io.hts.engine.policy.SchedulingPolicy;
import io.hts.engine.policy.ShortestJobFirstPolicy;

/**
 * A scheduler's policy, and whether it is exactly one of HTS's own classes, whose
 * {@code readyOrder} runs no user code: asked on every CPU placement, it is then called without the
 * guard user code needs ({@link UserCode}). Immutable: switching the policy publishes a new one.
 */
record ActivePolicy(SchedulingPolicy policy, boolean builtIn) {

    static ActivePolicy of(SchedulingPolicy p) {
        Class<?> c = p.getClass();
        return new ActivePolicy(
                p,
                c == DefaultPolicy.class
                        || c == CpuFirstPolicy.class
                        || c == GpuFirstPolicy.class
                        || c == RoundRobinPolicy.class
                        || c == ShortestJobFirstPolicy.class);
    }
}
