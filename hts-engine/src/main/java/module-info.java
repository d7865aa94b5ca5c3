/**
 * HTS's engine, a plain Java library: graphs of tasks ({@code io.hts.engine.graph}), the scheduler
 * that runs them ({@code io.hts.engine.run}), placement policies ({@code io.hts.engine.policy}),
 * fault tolerance through Resilience4j ({@code io.hts.engine.fault}), events and profiles
 * ({@code io.hts.engine.observe}), the device-backend SPI ({@code io.hts.engine.exec}) and the cluster SPI
 * ({@code io.hts.engine.cluster}, implemented by {@code hts-cluster}). These
 * packages are the API. Their {@code .internal} sub-packages (the work-stealing pool and resource
 * limiter, the compiled graph, the resolution of fault-tolerance declarations, the event bus, the
 * run kernel's extension hooks, and cluster distribution) are not exported. docs/api.md lists the
 * types a user needs.
 *
 * <p>Cluster distribution ({@code io.hts.engine.cluster.internal}) plugs into the run kernel
 * through the kernel's hooks ({@code io.hts.engine.run.internal}); the kernel finds it as a service
 * of this module ({@code uses} and {@code provides} below), so that it never depends on it.
 */
module io.hts.engine {
    requires transitive io.github.resilience4j.core;
    requires transitive io.github.resilience4j.retry;
    requires transitive io.github.resilience4j.timelimiter;
    requires transitive io.github.resilience4j.circuitbreaker;
    requires io.github.resilience4j.bulkhead;
    requires HdrHistogram;
    requires org.slf4j;
    requires static transitive org.jspecify;

    exports io.hts.engine.graph;
    exports io.hts.engine.run;
    exports io.hts.engine.policy;
    exports io.hts.engine.fault;
    exports io.hts.engine.observe;
    exports io.hts.engine.exec;
    exports io.hts.engine.cluster;

    uses io.hts.engine.run.internal.ExtensionFactory;

    provides io.hts.engine.run.internal.ExtensionFactory with
            io.hts.engine.cluster.internal.ClusterDistribution;
}
