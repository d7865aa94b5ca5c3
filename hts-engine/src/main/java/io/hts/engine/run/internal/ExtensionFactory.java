package io.hts.engine.run.internal;

import io.hts.engine.cluster.ClusterEngine;
import io.hts.engine.cluster.ClusterSettings;

/**
 * Makes a scheduler's extension: the service the kernel loads (with {@link java.util.ServiceLoader},
 * from this module's own providers) when {@code SchedulerBuilder.cluster(engine, settings)} was
 * called, so that the kernel never names the class that distributes. Implementations are public,
 * with a public no-argument constructor, and stateless.
 */
public interface ExtensionFactory {

    /**
     * Called once per scheduler built with a cluster engine, on the thread that builds it, inside
     * the scheduler's constructor: the extension may keep {@code scheduler} but must not call it
     * before {@link SchedulerExtension#started()}.
     *
     * @param scheduler the kernel's view of the scheduler being built
     * @param engine the cluster engine given to the builder
     * @param settings the cluster settings given to the builder
     * @return the scheduler's extension
     */
    SchedulerExtension create(SchedulerHandle scheduler, ClusterEngine engine, ClusterSettings settings);
}
