package io.hts.engine.cluster.internal;

import io.hts.engine.cluster.ClusterEngine;
import io.hts.engine.cluster.ClusterSettings;
import io.hts.engine.run.internal.ExtensionFactory;
import io.hts.engine.run.internal.SchedulerExtension;
import io.hts.engine.run.internal.SchedulerHandle;

/**
 * The distribution as the kernel finds it: this module's provider of {@link ExtensionFactory}
 * ({@code provides} in {@code module-info}, {@code META-INF/services} on the class path), loaded
 * once when a scheduler is built with {@code SchedulerBuilder.cluster(...)}. Public with a public
 * constructor only because {@link java.util.ServiceLoader} needs them; stateless.
 */
public final class ClusterDistribution implements ExtensionFactory {

    /** Made by {@link java.util.ServiceLoader}. */
    public ClusterDistribution() {}

    @Override
    public SchedulerExtension create(SchedulerHandle scheduler, ClusterEngine engine, ClusterSettings settings) {
        return new ClusterLink(scheduler, engine, settings);
    }
}
