package io.hts.sample;

import io.hts.engine.graph.TaskGraph;
import io.hts.sample.features.FeatureScenario;
import io.hts.sample.headline.IndependentScenario;
import io.hts.sample.headline.LayeredDagScenario;
import io.hts.sample.operators.OperatorScenario;
import io.hts.sample.sweep.SweepScenario;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The scenarios' graphs as {@code TaskGraph} beans: the starter registers them with the scheduler
 * by name, so {@code /actuator/hts} lists them and the dashboard can run them again.
 */
@Configuration(proxyBeanMethods = false)
class SampleGraphs {

    @Bean
    TaskGraph features(FeatureScenario scenario) {
        return scenario.graph();
    }

    @Bean
    TaskGraph sweep(SweepScenario scenario) {
        return scenario.graph();
    }

    @Bean
    TaskGraph operators(OperatorScenario scenario) {
        return scenario.graph();
    }

    @Bean
    TaskGraph independent(IndependentScenario scenario) {
        return scenario.graph();
    }

    @Bean
    TaskGraph layeredDag(LayeredDagScenario scenario) {
        return scenario.graph();
    }
}
