package io.hts.engine.run;

import io.hts.engine.policy.SchedulingPolicy;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A scheduler's scheduling policy: the one placements use now, and the failures of the ones that
 * threw, counted and logged (the first at WARN, the rest at DEBUG).
 *
 * <p><b>Ordering.</b> Switching publishes a new immutable {@link ActivePolicy} by a volatile write,
 * so a placement reads the policy and whether it is built in at once; the failure count is an
 * atomic counter. Nothing here blocks or throws on the placement path.
 */
final class CurrentPolicy {

    private static final Logger log = LoggerFactory.getLogger(Scheduler.class);

    private volatile ActivePolicy active;
    private final AtomicLong failures = new AtomicLong();

    CurrentPolicy(SchedulingPolicy initial) {
        this.active = ActivePolicy.of(initial);
    }

    /** The policy, read once with whether it is one of HTS's own. */
    ActivePolicy get() {
        return active;
    }

    /** Tasks placed from now on use {@code policy}. */
    void set(SchedulingPolicy policy) {
        active = ActivePolicy.of(Objects.requireNonNull(policy, "policy"));
    }

    long failures() {
        return failures.get();
    }

    /** {@code policy} threw: counted and logged; never throws. */
    void failed(SchedulingPolicy policy, Throwable ex) {
        long n = failures.incrementAndGet();
        try {
            String name = policy.getClass().getName();
            if (n == 1) {
                log.warn(
                        "Scheduling policy {} threw; its tasks go to the CPU in the default order (further failures"
                                + " at DEBUG)",
                        name,
                        ex);
            } else {
                log.debug("Scheduling policy {} threw", name, ex);
            }
        } catch (Throwable ignored) {
            // a throwable whose printing throws: counted, and scheduling goes on
        }
    }
}
