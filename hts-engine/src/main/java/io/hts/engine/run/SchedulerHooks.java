package io.hts.engine.run;

import io.hts.engine.cluster.ClusterEngine;
import io.hts.engine.cluster.ClusterSettings;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.internal.ExtensionFactory;
import io.hts.engine.run.internal.SchedulerExtension;
import io.hts.engine.run.internal.SchedulerHandle;
import java.util.Iterator;
import java.util.ServiceLoader;
import java.util.concurrent.ScheduledExecutorService;
import org.jspecify.annotations.Nullable;

/**
 * The kernel's side of a scheduler's extension hooks ({@code io.hts.engine.run.internal}): loads
 * the extension's factory, and is the {@link SchedulerHandle} the extension gets. Made only for a
 * scheduler built with a cluster engine. Immutable; the factory, found once, is kept in a volatile
 * static field.
 */
final class SchedulerHooks implements SchedulerHandle {

    private final Scheduler scheduler;

    private SchedulerHooks(Scheduler scheduler) {
        this.scheduler = scheduler;
    }

    /** The factory, looked up the first time a scheduler with a cluster is built (a race loads it twice, harmlessly). */
    private static volatile @Nullable ExtensionFactory factory;

    /**
     * The extension of a scheduler being built with a cluster engine, from the module's own
     * provider of {@link ExtensionFactory} (the distribution), which the kernel does not name.
     */
    static SchedulerExtension install(Scheduler scheduler, ClusterEngine engine, ClusterSettings settings) {
        ExtensionFactory f = factory;
        if (f == null) {
            f = load();
            factory = f;
        }
        return f.create(new SchedulerHooks(scheduler), engine, settings);
    }

    private static ExtensionFactory load() {
        Iterator<ExtensionFactory> found = ServiceLoader.load(
                        ExtensionFactory.class, ExtensionFactory.class.getClassLoader())
                .iterator();
        if (!found.hasNext()) {
            throw new IllegalStateException("hts-engine provides no " + ExtensionFactory.class.getName()
                    + " (its module-info or META-INF/services lost it): a scheduler with a cluster cannot be built");
        }
        return found.next();
    }

    @Override
    public Scheduler scheduler() {
        return scheduler;
    }

    @Override
    public GraphRun submitOwed(TaskGraph graph, RunOptions options, long owedTo) {
        return scheduler.submitOwed(graph, options, owedTo);
    }

    @Override
    public ScheduledExecutorService timer() {
        return scheduler.timer();
    }
}
