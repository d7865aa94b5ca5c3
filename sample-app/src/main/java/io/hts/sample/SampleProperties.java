package io.hts.sample;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * What the sample does at start-up.
 *
 * @param runJobs whether to run the three graphs at start-up
 * @param keepRunning whether to stay up afterwards (the dashboard and Actuator), instead of exiting
 */
@ConfigurationProperties("sample")
public record SampleProperties(boolean runJobs, boolean keepRunning) {}
