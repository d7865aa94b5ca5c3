package io.hts.engine.run;

import io.hts.engine.cluster.ClusterEngine;
import io.hts.engine.cluster.ClusterSettings;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.internal.ExtensionFactory;
import io.hts.engine.run.internal.SchedulerExtension;
import io.hts.engine.run.internal.SchedulerHandle;
import java.security.CodeSource;
import java.util.Iterator;
import java.util.Objects;
import java.util.ServiceConfigurationError;
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
     * The extension of a scheduler being built, from the module's own provider of
     * {@link ExtensionFactory} (the distribution), which the kernel does not name; null without a
     * cluster engine. When it cannot be made, {@code abandon} (the scheduler's shutdown) runs before
     * the error is thrown, so that a refused build leaves no thread behind.
     */
    static @Nullable SchedulerExtension install(
            Scheduler scheduler, @Nullable ClusterEngine engine, ClusterSettings settings, Runnable abandon) {
        if (engine == null) {
            return null;
        }
        try {
            ExtensionFactory f = factory;
            if (f == null) {
                f = load();
                factory = f;
            }
            return f.create(new SchedulerHooks(scheduler), engine, settings);
        } catch (RuntimeException | Error ex) {
            abandon.run();
            throw ex;
        }
    }

    /** Starts a scheduler's extension, the last step of its build; when that fails, it and the scheduler shut down. */
    static void start(@Nullable SchedulerExtension extension, Runnable abandon) {
        if (extension == null) {
            return;
        }
        try {
            extension.started(); // slices other members send may run from now on
        } catch (RuntimeException | Error ex) {
            try {
                extension.shutdown();
            } catch (RuntimeException second) {
                ex.addSuppressed(second);
            }
            abandon.run();
            throw ex;
        }
    }

    /** The file that lists the module's provider on the class path, and the provider it lists. */
    private static final String SERVICE_FILE = "META-INF/services/" + ExtensionFactory.class.getName();

    private static final String PROVIDER = "io.hts.engine.cluster.internal.ClusterDistribution";

    /**
     * This module's own provider: the first one from the same module and the same jar as the hook
     * types. Entries of other jars (a stale copy, another library) are passed over, even when they
     * cannot be loaded; without the module's own, the error names what to restore.
     */
    private static ExtensionFactory load() {
        Iterator<ExtensionFactory> found = ServiceLoader.load(
                        ExtensionFactory.class, ExtensionFactory.class.getClassLoader())
                .iterator();
        String passedOver = "";
        while (true) {
            ExtensionFactory candidate;
            try {
                if (!found.hasNext()) {
                    break;
                }
                candidate = found.next();
            } catch (ServiceConfigurationError ex) {
                passedOver += "; passed over: " + ex.getMessage();
                continue;
            }
            if (ours(candidate.getClass())) {
                return candidate;
            }
            passedOver += "; passed over " + candidate.getClass().getName() + " (not hts-engine's own)";
        }
        throw new IllegalStateException("hts-engine provides no " + ExtensionFactory.class.getName()
                + ", so a scheduler with a cluster cannot be built: its jar must list " + PROVIDER + " in "
                + SERVICE_FILE + " (on the class path) and its module-info must say 'provides "
                + ExtensionFactory.class.getName() + " with " + PROVIDER + "' (on the module path);"
                + " a repackaged (shaded) jar that dropped or replaced that file needs it restored" + passedOver);
    }

    private static boolean ours(Class<?> provider) {
        if (provider.getModule() != ExtensionFactory.class.getModule()) {
            return false;
        }
        CodeSource mine = ExtensionFactory.class.getProtectionDomain().getCodeSource();
        CodeSource theirs = provider.getProtectionDomain().getCodeSource();
        return mine == null || theirs == null || Objects.equals(mine.getLocation(), theirs.getLocation());
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
