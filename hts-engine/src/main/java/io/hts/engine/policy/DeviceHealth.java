package io.hts.engine.policy;

/** Whether a device can take work. */
public enum DeviceHealth {

    /** Working normally. */
    UP,

    /** Working, but impaired (e.g. cuBLAS missing, memory pool exhausted, circuit half-open). */
    DEGRADED,

    /** Not taking work; tasks with another body go elsewhere. */
    DOWN
}
