package io.hts.autoconfigure.actuate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import io.hts.autoconfigure.FeaturesApp;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Issue 15 item 13: a client that resumes with Last-Event-ID gets what it missed, and an open
 * stream does not hold up a graceful shutdown for its whole grace period.
 */
class HtsEventStreamLifecycleTests {

    private static ConfigurableApplicationContext start() {
        return new SpringApplicationBuilder(FeaturesApp.class)
                .properties(
                        "server.port=0",
                        "server.address=127.0.0.1",
                        "server.shutdown=graceful",
                        "spring.lifecycle.timeout-per-shutdown-phase=60s",
                        "management.endpoints.web.exposure.include=htsevents",
                        "spring.main.banner-mode=off")
                .run();
    }

    private static int port(ConfigurableApplicationContext context) {
        return ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    private static HttpResponse<Stream<String>> open(int port, String query, String lastEventId) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + "/actuator/htsevents/stream" + query))
                .GET();
        if (lastEventId != null) {
            request.header("Last-Event-ID", lastEventId);
        }
        HttpResponse<Stream<String>> response = HttpClient.newHttpClient()
                .sendAsync(request.build(), HttpResponse.BodyHandlers.ofLines())
                .get(20, TimeUnit.SECONDS);
        assertThat(response.statusCode()).isEqualTo(200);
        return response;
    }

    @Test
    void aResumingClientGetsTheEventsItMissedOnceAndInOrder() throws Exception {
        try (ConfigurableApplicationContext context = start()) {
            Scheduler scheduler = context.getBean(Scheduler.class);
            long before = scheduler.eventLog().orElseThrow().events(-1, Integer.MAX_VALUE, e -> true).stream()
                    .mapToLong(e -> e.sequence())
                    .max()
                    .orElse(0);
            GraphRun run = scheduler.execute(scheduler.registeredGraphs().get("features")); // missed while away
            HttpResponse<Stream<String>> response = open(port(context), "?runId=" + run.runId(), Long.toString(before));
            try (Stream<String> body = response.body()) {
                Iterator<String> lines = body.iterator();
                List<String> seen = new ArrayList<>();
                assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
                    String line;
                    do {
                        line = lines.next();
                        seen.add(line);
                    } while (!line.equals("event:RUN_SUCCEEDED"));
                });
                assertThat(seen).contains(":subscribed", "event:RUN_SUBMITTED");
                assertThat(seen.indexOf("event:RUN_SUBMITTED")).isLessThan(seen.indexOf("event:RUN_SUCCEEDED"));
                assertThat(seen.stream().filter(l -> l.equals("event:RUN_SUBMITTED")))
                        .hasSize(1);
            }
        }
    }

    @Test
    void anOpenStreamIsCompletedWhenTheApplicationStopsInsteadOfHoldingUpTheGracePeriod() throws Exception {
        ConfigurableApplicationContext context = start();
        HttpResponse<Stream<String>> response = open(port(context), "", null);
        Iterator<String> lines = response.body().iterator();
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            while (!lines.next().equals(":subscribed")) {
                // open once its first comment arrived
            }
        });
        CompletableFuture<Void> closed = CompletableFuture.runAsync(context::close);
        // the grace period is 60 s: a stream left open would hold the close (and this stream) that long
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
            while (lines.hasNext()) {
                lines.next();
            }
            closed.get();
        });
        assertThat(context.isActive()).isFalse();
    }
}
