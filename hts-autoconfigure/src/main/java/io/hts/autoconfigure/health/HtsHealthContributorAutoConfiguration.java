package io.hts.autoconfigure.health;

import io.hts.autoconfigure.HtsAutoConfiguration;
import io.hts.autoconfigure.HtsProperties;
import io.hts.engine.run.Scheduler;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@code hts} health contributor, when Spring Boot's health support is on
 * the class path and there is a {@link Scheduler}; {@code management.health.hts.enabled=false}
 * turns it off, and a bean named {@code htsHealthIndicator} replaces it.
 */
@AutoConfiguration(after = HtsAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnEnabledHealthIndicator("hts")
public final class HtsHealthContributorAutoConfiguration {

    @Bean("htsHealthIndicator")
    @ConditionalOnMissingBean(name = "htsHealthIndicator")
    @ConditionalOnBean(Scheduler.class)
    HtsHealthIndicator htsHealthIndicator(Scheduler scheduler, ObjectProvider<HtsProperties> properties) {
        HtsProperties p = properties.getIfAvailable();
        return new HtsHealthIndicator(scheduler, p != null ? p.getCluster().getMinimumMembers() : 1);
    }
}
