package io.hts.engine.exec;

import java.util.List;

/**
 * A read-only view of a scheduler's named resources ({@code SchedulerBuilder.resource(name,
 * capacity)}, GPU memory among them): what each holds and what is free now.
 */
public interface ResourceUsage {

    /** The resource names, in declaration order. */
    List<String> names();

    /**
     * The capacity of a resource.
     *
     * @param name the resource
     * @return its capacity
     * @throws IllegalArgumentException when the resource is unknown (the message lists the known ones)
     */
    long capacity(String name);

    /**
     * The amount of a resource free now.
     *
     * @param name the resource
     * @return the free amount
     * @throws IllegalArgumentException when the resource is unknown (the message lists the known ones)
     */
    long available(String name);

    /** How many tasks are waiting for resources now. */
    int waiting();
}
