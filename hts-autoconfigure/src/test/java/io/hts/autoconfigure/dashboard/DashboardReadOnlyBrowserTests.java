package io.hts.autoconfigure.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.autoconfigure.support.DashboardApp;
import io.hts.engine.run.GraphRun;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * The dashboard in a real headless Chromium while the hts endpoint is read-only (its default): it
 * shows everything and offers no action, not even for a run in progress.
 */
@SpringBootTest(
        classes = DashboardApp.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "server.address=127.0.0.1",
            "hts.dashboard.enabled=true",
            "management.endpoints.web.exposure.include=hts,htsevents,htsprofiler,htsdashboard"
        })
class DashboardReadOnlyBrowserTests extends BrowserTestBase {

    @Test
    void noActionIsOfferedWhileTheEndpointIsReadOnly() throws Exception {
        gate.close();
        GraphRun run = scheduler.submit(scheduler.registeredGraphs().get("gated"));
        try {
            browser.open(dashboard("/"));
            DashboardPages.eventually(
                    () -> assertThat(browser.all("#devices tr")).hasSizeGreaterThan(1));
            assertThat(browser.driver().findElement(By.id("access")).getText()).isEqualTo("read-only");
            assertThat(browser.all("#policy-select, button.action-policy, button.action-run"))
                    .isEmpty();
            browser.open(dashboard("/runs"));
            String row = "tr.run-row[data-run='" + run.runId() + "']";
            DashboardPages.eventually(
                    () -> assertThat(browser.script("return document.querySelector(arguments[0])?.dataset.status", row))
                            .isEqualTo("RUNNING"));
            assertThat(browser.all("button.action-cancel")).isEmpty();
            browser.screenshot("runs-read-only");
            browser.open(dashboard("/runs/" + run.runId()));
            DashboardPages.eventually(() -> assertThat(browser.all("#dag g.node[data-task=hold][data-state=RUNNING]"))
                    .hasSize(1));
            assertThat(browser.all("button.action-cancel, button.action-run")).isEmpty();
            assertThat(browser.all("#trace-download")).hasSize(1);
            browser.screenshot("run-in-progress-read-only");
        } finally {
            gate.open();
        }
        run.await();
        assertThat(browser.consoleErrors()).as("the browser console's errors").isEmpty();
    }
}
