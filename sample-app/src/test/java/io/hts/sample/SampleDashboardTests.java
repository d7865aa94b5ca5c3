package io.hts.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.hts.autoconfigure.support.LocalHttp;
import io.hts.engine.run.Scheduler;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;

/** The dashboard page, its run buttons' endpoint and the Actuator endpoints it reads, over HTTP. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "sample.run-jobs=false")
class SampleDashboardTests {

    @LocalServerPort
    int port;

    @Autowired
    Scheduler scheduler;

    private HttpResponse<String> send(String method, String path) throws Exception {
        return LocalHttp.send(port, method, path, null, null);
    }

    @Test
    void theDashboardRunsAGraphAndReadsItsProfile() throws Exception {
        HttpResponse<String> page = send("GET", "/");
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body()).contains("HTS dashboard", "actuator/htsevents/stream", "actuator/htsprofiler");
        HttpResponse<String> submitted = send("POST", "/sample/run/sweep");
        assertThat(submitted.statusCode()).isEqualTo(200);
        long runId = LocalHttp.json(submitted).get("runId").asLong();
        await().atMost(Duration.ofSeconds(60))
                .until(() -> scheduler.profiler().run(runId).isPresent());
        JsonNode profile = LocalHttp.json(send("GET", "/actuator/htsprofiler/" + runId));
        assertThat(profile.get("graph").asText()).isEqualTo("sweep");
        assertThat(profile.get("status").asText()).isEqualTo("SUCCEEDED");
        assertThat(send("GET", "/actuator/hts").statusCode()).isEqualTo(200);
        HttpResponse<String> unknown = send("POST", "/sample/run/nothing");
        assertThat(unknown.statusCode()).isEqualTo(404);
    }
}
