package io.hts.autoconfigure;

import com.hazelcast.core.HazelcastInstance;
import io.hts.cluster.HazelcastClusterEngine;
import io.hts.cluster.HazelcastClusterOptions;
import io.hts.engine.cluster.ClusterEngine;
import java.util.Map;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Auto-configuration of the cluster engine (module {@code hts-cluster}) when it and Hazelcast are
 * on the class path and {@code hts.cluster.enabled=true}: a {@link HazelcastClusterEngine} on the
 * application's {@link HazelcastInstance} bean (a member, such as Spring Boot's
 * {@code spring-boot-hazelcast} makes from a {@code Config} bean or {@code hazelcast.yaml}), with the
 * structure names and intervals of {@code hts.cluster.hazelcast.*}. The scheduler of
 * {@link HtsAutoConfiguration} picks the engine up with the settings of {@code hts.cluster.*}; an
 * application's own {@link ClusterEngine} bean replaces it.
 *
 * <p>The application owns the Hazelcast member: the engine is closed when the context closes (after
 * the scheduler, which depends on it), and leaves the member running for Spring to shut down. Without
 * a HazelcastInstance bean, or with a Hazelcast client where a member is needed, start-up fails naming
 * {@code hts.cluster.enabled} and what is missing.
 */
@AutoConfiguration(
        before = HtsAutoConfiguration.class,
        afterName = "org.springframework.boot.hazelcast.autoconfigure.HazelcastAutoConfiguration")
@ConditionalOnClass({HazelcastClusterEngine.class, HazelcastInstance.class})
@ConditionalOnBooleanProperty("hts.cluster.enabled")
@EnableConfigurationProperties(HtsProperties.class)
public final class HtsClusterAutoConfiguration {

    /** What {@code hts.cluster.enabled=true} needs, in the words of its errors. */
    static final String NEEDS = "false, or true with one HazelcastInstance bean that is a Hazelcast member: add"
            + " spring-boot-hazelcast and a Hazelcast configuration (a com.hazelcast.config.Config bean,"
            + " hazelcast.yaml, or spring.hazelcast.config)";

    @Bean
    @ConditionalOnMissingBean(ClusterEngine.class)
    HazelcastClusterEngine htsClusterEngine(
            HtsProperties properties,
            Environment environment,
            ObjectProvider<HazelcastInstance> instance,
            ListableBeanFactory beans) {
        HtsPropertiesValidator.validate(properties, environment); // bad values fail before any Hazelcast call
        HazelcastInstance hz = instance.getIfUnique();
        if (hz == null) {
            Map<String, HazelcastInstance> found = beans.getBeansOfType(HazelcastInstance.class);
            throw new InvalidHtsPropertyException(
                    "hts.cluster.enabled",
                    "true",
                    NEEDS + "; found " + (found.isEmpty() ? "none" : found.size() + ": " + found.keySet()));
        }
        ClusterProperties.Hazelcast names = properties.getCluster().getHazelcast();
        HazelcastClusterOptions options = new HazelcastClusterOptions(
                names.getExecutorName(),
                names.getMembersMap(),
                names.getPayloadMap(),
                names.getPayloadTimeToLive(),
                names.getStatusInterval());
        try {
            return new HazelcastClusterEngine(hz, options);
        } catch (UnsupportedOperationException ex) {
            throw new InvalidHtsPropertyException(
                    "hts.cluster.enabled",
                    "true",
                    NEEDS + "; the HazelcastInstance '" + hz.getName() + "' is a client (" + ex.getMessage() + ")",
                    ex);
        }
    }
}
