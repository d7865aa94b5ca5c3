package io.hts.autoconfigure.actuate;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.autoconfigure.support.EventStream;
import io.hts.autoconfigure.support.HostileNamesApp;
import io.hts.autoconfigure.support.LocalHttp;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import tools.jackson.databind.JsonNode;

/**
 * What a user's own configuration and graphs do to the endpoints, over real HTTP: a registered
 * graph whose run cannot start, and the live stream under the path mapping the application gave
 * {@code htsevents}.
 */
@SpringBootTest(
        classes = HostileNamesApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "server.address=127.0.0.1",
            "management.endpoints.web.exposure.include=hts,htsevents,htsprofiler",
            "management.endpoints.web.path-mapping.htsevents=events",
            "management.endpoint.hts.access=unrestricted"
        })
class HostileInputHttpTests {

    @LocalServerPort
    int port;

    @Test
    void startingARunOfAGraphThatCannotRunHereIsA400NamingWhy() throws Exception {
        HttpResponse<String> post = LocalHttp.postJson(port, "/actuator/hts", "{\"run\": \"needs-gpu\"}");
        assertThat(post.statusCode()).as(post.body()).isEqualTo(400);
        JsonNode body = LocalHttp.json(post);
        assertThat(body.get("parameter").asText()).isEqualTo("run");
        assertThat(body.get("value").asText()).isEqualTo("needs-gpu");
        assertThat(body.get("detail").asText()).contains("needs-gpu", "kernel", "GPU");
    }

    @Test
    void theLiveStreamFollowsHtseventsPathMapping() throws Exception {
        assertThat(LocalHttp.get(port, "/actuator/events").statusCode()).isEqualTo(200);
        try (EventStream stream = EventStream.open(port, "/actuator/events/stream")) {
            assertThat(stream.contentType()).startsWith("text/event-stream");
            stream.awaitSubscribed();
        }
    }
}
