package io.hts.autoconfigure.observation;

import io.hts.autoconfigure.HtsAutoConfiguration;
import io.hts.autoconfigure.HtsProperties;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * An {@link HtsRunObservations} listener (subscribed by {@link HtsAutoConfiguration} like every
 * {@code TaskListener} bean) when the application has an {@link ObservationRegistry}.
 */
@AutoConfiguration(
        before = HtsAutoConfiguration.class,
        afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass(ObservationRegistry.class)
@EnableConfigurationProperties(HtsProperties.class)
public final class HtsObservationAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(ObservationRegistry.class)
    HtsRunObservations htsRunObservations(ObservationRegistry registry, HtsProperties properties) {
        return new HtsRunObservations(registry, properties.getObservation().isTasks());
    }
}
