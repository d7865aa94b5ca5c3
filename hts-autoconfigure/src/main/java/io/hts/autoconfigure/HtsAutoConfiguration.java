package io.hts.autoconfigure;

import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.retry.RetryRegistry;
import io.github.resilience4j.timelimiter.TimeLimiterRegistry;
import io.hts.autoconfigure.annotation.HtsTaskGraphRegistrar;
import io.hts.engine.cluster.ClusterEngine;
import io.hts.engine.cluster.ClusterSettings;
import io.hts.engine.cluster.PayloadCodec;
import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.observe.TaskListener;
import io.hts.engine.observe.TaskScope;
import io.hts.engine.policy.SchedulingPolicy;
import io.hts.engine.run.Scheduler;
import io.hts.engine.run.SchedulerBuilder;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.Map;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Auto-configuration of the HTS {@link Scheduler} from {@code hts.*}: the scheduling policy (a
 * user's {@link SchedulingPolicy} bean wins), the work-stealing pool (never exposed as an
 * {@code Executor} bean, so Spring Boot's own task executor stays), default retries and time
 * limits, the profiler and the event buffer; the application's {@link TaskGraph} beans are
 * registered by name and its {@link TaskListener} beans subscribed; a GPU {@link DeviceBackend}
 * bean, when there is one, becomes the scheduler's GPU backend behind a circuit breaker; a
 * {@link ClusterEngine} bean (made by {@link HtsClusterAutoConfiguration} with
 * {@code hts.cluster.enabled=true}, or the application's) the engine its distributed groups run on,
 * with the {@link ClusterSettings} of {@code hts.cluster.*}; the
 * application's Resilience4j registries, when present, provide the {@code hts-cpu} and
 * {@code hts-gpu} instances and those tasks name ({@link HtsResilience}); the application's
 * {@link SchedulerBuilderCustomizer} beans adjust the builder last, in order. Graceful shutdown
 * through {@link HtsSchedulerLifecycle}.
 */
@AutoConfiguration(
        afterName = {
            "io.github.resilience4j.springboot.retry.autoconfigure.RetryAutoConfiguration",
            "io.github.resilience4j.springboot.timelimiter.autoconfigure.TimeLimiterAutoConfiguration",
            "io.github.resilience4j.springboot.circuitbreaker.autoconfigure.CircuitBreakerAutoConfiguration",
            "io.github.resilience4j.springboot.bulkhead.autoconfigure.BulkheadAutoConfiguration"
        })
@EnableConfigurationProperties(HtsProperties.class)
public final class HtsAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    SchedulingPolicy htsSchedulingPolicy(HtsProperties properties) {
        return properties.getScheduler().getPolicy().create();
    }

    /**
     * Every hts.* property checked once at start-up, whatever the machine and whichever beans the
     * application replaces.
     */
    @Bean
    HtsPropertiesValidator.Checked htsCheckedProperties(HtsProperties properties, Environment environment) {
        return HtsPropertiesValidator.validate(properties, environment);
    }

    @Bean
    @ConditionalOnMissingBean
    Scheduler htsScheduler(
            HtsPropertiesValidator.Checked checked,
            SchedulingPolicy policy,
            ObjectProvider<TaskListener> listeners,
            ObjectProvider<TaskScope> scopes,
            ObjectProvider<DeviceBackend> gpu,
            ObjectProvider<ClusterEngine> cluster,
            ObjectProvider<ClusterSettings> clusterSettings,
            ObjectProvider<RetryRegistry> retryRegistry,
            ObjectProvider<TimeLimiterRegistry> timeLimiterRegistry,
            ObjectProvider<CircuitBreakerRegistry> circuitBreakerRegistry,
            ObjectProvider<BulkheadRegistry> bulkheadRegistry,
            ObjectProvider<SchedulerBuilderCustomizer> customizers,
            ListableBeanFactory beans) {
        HtsProperties properties = checked.properties();
        HtsProperties.Executor executor = properties.getExecutor();
        HtsProperties.Tasks tasks = properties.getTasks();
        HtsProperties.Profiling profiling = properties.getProfiling();
        Integer threads = executor.getThreads();
        HtsResilience resilience = new HtsResilience(
                retryRegistry.getIfUnique(),
                timeLimiterRegistry.getIfUnique(),
                circuitBreakerRegistry.getIfUnique(),
                bulkheadRegistry.getIfUnique());
        SchedulerBuilder builder = Scheduler.builder()
                .policy(policy)
                .failureMode(properties.getScheduler().getFailureMode())
                .memoryShortage(properties.getScheduler().getMemoryShortage())
                .stallTimeout(properties.getScheduler().getStallTimeout())
                .failedRunsLoggedPerMinute(properties.getScheduler().getFailedRunsLoggedPerMinute())
                .threadNamePrefix(executor.getThreadNamePrefix())
                .profiling(profiling.isEnabled())
                .logContext(properties.getLogging().isMdc())
                .retainedRuns(profiling.getRetainedRuns())
                .retainedProfileBytes(profiling.getRetainedSize().toBytes())
                .eventBufferSize(properties.getEvents().getBufferSize())
                .faultTolerance(resilience.faultTolerance(tasks));
        DeviceBackend device = gpu.getIfUnique();
        if (device != null) {
            builder.gpuBackend(resilience.guard(device, properties.getGpu().getCircuitBreaker()));
        }
        ClusterEngine engine = cluster.getIfUnique();
        if (engine != null) {
            builder.cluster(
                    engine,
                    clusterSettings.getIfUnique(() -> properties.getCluster().settings(null)));
        }
        if (threads != null) {
            builder.threads(threads);
        }
        listeners.orderedStream().forEach(builder::listener);
        scopes.orderedStream().forEach(builder::taskScope);
        customize(builder, customizers, beans); // last: what a customizer sets wins
        return builder.build();
    }

    /** Applies the customizers in order; one that throws fails the start, naming its bean. */
    private static void customize(
            SchedulerBuilder builder,
            ObjectProvider<SchedulerBuilderCustomizer> customizers,
            ListableBeanFactory beans) {
        Map<SchedulerBuilderCustomizer, String> names = new IdentityHashMap<>();
        beans.getBeansOfType(SchedulerBuilderCustomizer.class).forEach((name, c) -> names.put(c, name));
        customizers.orderedStream().forEach(c -> {
            try {
                c.customize(builder);
            } catch (RuntimeException ex) {
                throw new IllegalStateException(
                        "SchedulerBuilderCustomizer '"
                                + names.getOrDefault(c, c.getClass().getName())
                                + "' failed on the HTS scheduler's builder: " + ex.getMessage(),
                        ex);
            }
        });
    }

    /**
     * How the scheduler distributes groups over the application's {@link ClusterEngine}, from
     * {@code hts.cluster.*}; the application's {@link PayloadCodec} bean, when there is one, encodes
     * the payloads instead of Java serialization limited to {@code hts.cluster.allowed-classes}.
     */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(ClusterEngine.class)
    ClusterSettings htsClusterSettings(HtsPropertiesValidator.Checked checked, ObjectProvider<PayloadCodec> codec) {
        return checked.properties().getCluster().settings(codec.getIfUnique());
    }

    @Bean
    @ConditionalOnMissingBean
    HtsSchedulerLifecycle htsSchedulerLifecycle(Scheduler scheduler, Environment environment) {
        Duration phase = Binder.get(environment)
                .bind("spring.lifecycle.timeout-per-shutdown-phase", Duration.class)
                .orElse(Duration.ofSeconds(30));
        // leave a margin inside the phase for cancelling what is left and for the threads to end
        Duration drain = phase.compareTo(Duration.ofSeconds(2)) > 0 ? phase.minusSeconds(1) : phase.dividedBy(2);
        return new HtsSchedulerLifecycle(scheduler, phase, drain);
    }

    @Bean
    static HtsTaskGraphRegistrar htsTaskGraphRegistrar() {
        return new HtsTaskGraphRegistrar();
    }

    @Bean
    static SmartInitializingSingleton htsGraphRegistrar(
            ObjectProvider<Scheduler> scheduler, ObjectProvider<TaskGraph> graphs) {
        return () -> {
            Scheduler s = scheduler.getIfAvailable();
            if (s != null) {
                graphs.orderedStream().forEach(s::register);
            }
        };
    }
}
