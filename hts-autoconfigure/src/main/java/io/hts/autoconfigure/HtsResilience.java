package io.hts.autoconfigure;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.core.Registry;
import io.github.resilience4j.retry.RetryRegistry;
import io.github.resilience4j.timelimiter.TimeLimiterRegistry;
import io.hts.engine.exec.DeviceBackend;
import io.hts.engine.fault.CircuitBreakingBackend;
import io.hts.engine.fault.FaultTolerance;
import io.hts.engine.fault.RetrySpec;
import io.hts.engine.fault.TimeLimitSpec;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The application's Resilience4j registries (resilience4j-spring-boot4 defines them from
 * {@code resilience4j.*}) as HTS uses them, or HTS's private defaults where there are none (no
 * registry bean is ever created):
 * <ul>
 * <li>tasks that declare no retry retry by the {@code hts-cpu} instance on the CPU and the
 * {@code hts-gpu} instance on the GPU when the application configures them, otherwise by
 * {@code hts.tasks.default-retries}; likewise time limiters and {@code hts.tasks.default-timeout};
 * a task naming an instance ({@code retry("my-instance")}) gets that one;</li>
 * <li>the GPU backend goes behind the {@code hts-gpu} circuit breaker of the application's registry,
 * or a private one from {@code hts.gpu.circuit-breaker.*}, and the {@code hts-gpu} bulkhead when the
 * application configures one.</li>
 * </ul>
 */
final class HtsResilience {

    /** The instance name for CPU attempts. */
    static final String CPU = "hts-cpu";

    /** The instance name for GPU attempts and the GPU backend. */
    static final String GPU = "hts-gpu";

    private final @Nullable RetryRegistry retries;
    private final @Nullable TimeLimiterRegistry timeLimiters;
    private final @Nullable CircuitBreakerRegistry circuitBreakers;
    private final @Nullable BulkheadRegistry bulkheads;

    HtsResilience(
            @Nullable RetryRegistry retries,
            @Nullable TimeLimiterRegistry timeLimiters,
            @Nullable CircuitBreakerRegistry circuitBreakers,
            @Nullable BulkheadRegistry bulkheads) {
        this.retries = retries;
        this.timeLimiters = timeLimiters;
        this.circuitBreakers = circuitBreakers;
        this.bulkheads = bulkheads;
    }

    FaultTolerance faultTolerance(HtsProperties.Tasks tasks) {
        Duration timeout = tasks.getDefaultTimeout(); // checked by HtsPropertiesValidator
        RetrySpec retry = tasks.getDefaultRetries() == 0
                ? RetrySpec.none()
                : RetrySpec.retries(tasks.getDefaultRetries(), tasks.getDefaultBackoff());
        TimeLimitSpec limit = timeout == null ? TimeLimitSpec.none() : TimeLimitSpec.of(timeout);
        return FaultTolerance.builder()
                .retryRegistry(retries)
                .timeLimiterRegistry(timeLimiters)
                .defaultBackoff(tasks.getDefaultBackoff()) // also for tasks that declare retries(n) without one
                .defaultRetry(configured(retries, CPU) ? RetrySpec.named(CPU) : retry)
                .gpuDefaultRetry(configured(retries, GPU) ? RetrySpec.named(GPU) : retry)
                .defaultTimeLimit(configured(timeLimiters, CPU) ? TimeLimitSpec.named(CPU) : limit)
                .gpuDefaultTimeLimit(configured(timeLimiters, GPU) ? TimeLimitSpec.named(GPU) : limit)
                .build();
    }

    DeviceBackend guard(DeviceBackend device, GpuProperties.CircuitBreaker settings) {
        if (!settings.isEnabled()) {
            return device;
        }
        CircuitBreaker breaker = circuitBreakers != null
                ? fromRegistry(circuitBreakers)
                : CircuitBreaker.of(GPU, privateConfig(settings));
        BulkheadRegistry b = bulkheads;
        Bulkhead bulkhead = b != null && configured(b, GPU) ? b.find(GPU).orElseGet(() -> b.bulkhead(GPU, GPU)) : null;
        return new CircuitBreakingBackend(
                device,
                breaker,
                bulkhead,
                settings.getWhenOpen() == GpuProperties.WhenOpen.WAIT
                        ? CircuitBreakingBackend.WhenOpen.WAIT
                        : CircuitBreakingBackend.WhenOpen.FAIL);
    }

    private static CircuitBreaker fromRegistry(CircuitBreakerRegistry registry) {
        return registry.find(GPU)
                .orElseGet(() -> registry.getConfiguration(GPU).isPresent()
                        ? registry.circuitBreaker(GPU, GPU)
                        : registry.circuitBreaker(GPU));
    }

    private static CircuitBreakerConfig privateConfig(GpuProperties.CircuitBreaker settings) {
        float threshold = settings.getFailureRateThreshold(); // these three checked by HtsPropertiesValidator
        Duration wait = settings.getWaitDurationInOpenState();
        return CircuitBreakerConfig.custom()
                .failureRateThreshold(threshold)
                .slidingWindowSize(settings.getSlidingWindowSize())
                .minimumNumberOfCalls(settings.getSlidingWindowSize())
                .waitDurationInOpenState(wait)
                .automaticTransitionFromOpenToHalfOpenEnabled(true)
                .build();
    }

    /** Whether the application configures an instance of that name (resilience4j.*.instances.NAME or created). */
    private static boolean configured(@Nullable Registry<?, ?> registry, String name) {
        return registry != null
                && (registry.find(name).isPresent()
                        || registry.getConfiguration(name).isPresent());
    }
}
