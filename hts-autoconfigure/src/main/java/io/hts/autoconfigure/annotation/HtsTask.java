package io.hts.autoconfigure.annotation;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Declares a bean method as a task of a named graph (the seed's {@code @task(device=..., priority=...)}).
 * The methods of one {@link #graph()}, across all beans, become one {@code TaskGraph} bean of that
 * name, registered with the scheduler, which can be injected and run like any other:
 *
 * <pre>{@code
 * @Component
 * class Features {
 *     @HtsTask(graph = "features")
 *     long[] load() { ... }
 *
 *     @HtsTask(graph = "features", after = "load", retries = 2, timeout = "5s")
 *     long total(long[] rows) { ... }          // bound to load's result
 * }
 *
 * GraphRun run = scheduler.execute(features);  // @Autowired TaskGraph features
 * }</pre>
 *
 * <p>Parameters: exactly one per {@link #after()} dependency, in the same order, each given that
 * task's result (its method's return type must be assignable to the parameter's, boxing allowed);
 * and, anywhere, a {@code TaskContext} (or, for GPU methods, {@code GpuTaskContext} or hts-gpu's
 * {@code GpuContext}). A task that only has to run after another, without its result, names it in
 * {@link #waitsFor()}. Wrong wiring (an unknown dependency, a parameter of the wrong type or
 * count, a name in both lists, a duplicate name, a cycle) fails start-up naming the method.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface HtsTask {

    /** The graph the task belongs to (the {@code TaskGraph} bean's name). */
    String graph();

    /** The task's name within the graph; by default the method's name. */
    String name() default "";

    /**
     * The tasks (by name, in this graph) whose results this one reads: exactly one parameter per
     * name, in this order.
     */
    String[] after() default {};

    /**
     * The tasks (by name, in this graph) this one runs after without reading their results: no
     * parameter for them. A name may not be in both {@link #after()} and this.
     */
    String[] waitsFor() default {};

    /** Where the task may run. */
    Placement device() default Placement.CPU;

    /** Priority: above 0 jumps the queue of ready tasks. */
    int priority() default 0;

    /** Retries after a failed attempt; -1 for the scheduler's default ({@code hts.tasks.default-retries}). */
    int retries() default -1;

    /** An attempt's time limit, e.g. {@code "500ms"} or {@code "PT5S"}; empty for the scheduler's default. */
    String timeout() default "";
}
