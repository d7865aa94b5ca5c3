package io.hts.sample;

import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationListener;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * The sample application: HTS through {@code hts-spring-boot-starter} alone. It runs its scenarios
 * once ({@link SampleJobs}), prints a summary of what each did, and exits, without starting a web server
 * (no free port needed); with {@code --sample.keep-running=true} it stays up, with the dashboard at
 * {@code http://localhost:8080/actuator/htsdashboard} (the starter's, read-only).
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
        application().run(args);
    }

    /** The application as {@link #main} runs it: without a web server unless it keeps running. */
    static SpringApplication application() {
        SpringApplication app = new SpringApplication(HtsSampleApplication.class);
        app.addListeners((ApplicationListener<ApplicationEnvironmentPreparedEvent>) event -> {
            ConfigurableEnvironment environment = event.getEnvironment();
            if (!environment.getProperty("sample.keep-running", Boolean.class, false)) {
                // runs once and exits: no web server, so no free port is needed (a value set anywhere else wins)
                environment
                        .getPropertySources()
                        .addLast(new MapPropertySource(
                                "sample-runs-once", Map.of("spring.main.web-application-type", "none")));
            }
        });
        return app;
    }
}
