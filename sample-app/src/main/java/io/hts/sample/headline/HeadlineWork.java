package io.hts.sample.headline;

import io.hts.sample.SampleProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The headline workloads' task body, calibrated once at start-up to {@code sample.headline.task-work}. */
@Configuration(proxyBeanMethods = false)
class HeadlineWork {

    @Bean
    CalibratedSpin calibratedSpin(SampleProperties properties) {
        return CalibratedSpin.calibrate(properties.headline().taskWork());
    }
}
