package io.hts.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;

/**
 * The sample application: HTS through {@code hts-spring-boot-starter} alone. It runs its three
 * graphs once ({@link SampleJobs}), prints what each did, and exits; with
 * {@code --sample.keep-running=true} it stays up, with the dashboard at {@code http://localhost:8080/}.
 */
@SpringBootApplication
@EnableConfigurationProperties(SampleProperties.class)
public class HtsSampleApplication {

    /**
     * Starts the application.
     *
     * @param args Spring Boot arguments, e.g. {@code --hts.scheduler.policy=round-robin}
     */
    public static void main(String[] args) {
        SpringApplication.run(HtsSampleApplication.class, args);
    }
}
