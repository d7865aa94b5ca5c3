package io.hts.autoconfigure.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.autoconfigure.support.DashboardApp;
import org.junit.jupiter.api.AfterEach;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * What the browser tests of the dashboard with write access granted share: one application (its
 * context cached for all of them), its event stream ending every 3 s so that the page must resume
 * it, and no browser console error left after any test.
 */
@SpringBootTest(
        classes = DashboardApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "server.address=127.0.0.1",
            "hts.dashboard.enabled=true",
            "management.endpoints.web.exposure.include=hts,htsevents,htsprofiler,htsdashboard",
            "management.endpoint.hts.access=unrestricted",
            "hts.events.stream-timeout=3s" // the event stream ends every 3 s: the page must resume it
        })
abstract class WritableDashboardBrowserTests extends BrowserTestBase {

    @AfterEach
    void noConsoleErrors() {
        gate.open(); // whatever a test left waiting
        assertThat(browser.consoleErrors()).as("the browser console's errors").isEmpty();
    }
}
