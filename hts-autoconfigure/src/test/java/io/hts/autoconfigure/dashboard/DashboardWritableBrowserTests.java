package io.hts.autoconfigure.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.autoconfigure.support.DashboardApp;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.run.GraphRun;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.Select;

/**
 * The dashboard in a real headless Chromium, with write access granted
 * ({@code management.endpoint.hts.access=unrestricted}): a run started from the page appears live
 * and ends, its detail shows the DAG and the timeline, a failing task shows its error, cancel and
 * the policy switch work, the events page shows the failure. One application, one browser.
 */
class DashboardWritableBrowserTests extends WritableDashboardBrowserTests {

    @Test
    void everyPageLoadsWithoutAConsoleError() throws Exception {
        browser.open(dashboard("/"));
        DashboardPages.eventually(() -> assertThat(browser.all("#devices tr")).hasSizeGreaterThan(1));
        assertThat(browser.driver().findElement(By.id("access")).getText()).isEqualTo("actions allowed");
        assertThat(browser.all("button.action-run")).hasSize(3);
        DashboardPages.eventually(() -> assertThat(
                        browser.driver().findElement(By.id("stream-status")).getText())
                .matches("events: (live|resumed after #\\d+)"));
        browser.screenshot("overview");
        for (String route : new String[] {"/runs", "/statistics", "/events"}) {
            browser.open(dashboard(route));
            DashboardPages.eventually(() -> assertThat(browser.all("main h1")).isNotEmpty());
        }
        assertThat(browser.consoleErrors()).isEmpty();
        browser.open(dashboard("/runs/987654"));
        DashboardPages.eventually(() -> assertThat(
                        browser.driver().findElement(By.id("run-missing")).getText())
                .contains("not among the runs the profiler keeps"));
        // the browser logs the 404 of a run that is not there, and nothing else; its log may deliver
        // the entry late, so it is awaited here (else the next test's console check would see it)
        List<String> errors = new ArrayList<>();
        DashboardPages.eventually(() -> {
            errors.addAll(browser.consoleErrors());
            assertThat(errors).anyMatch(e -> e.contains("htsprofiler/987654") && e.contains("404"));
        });
        assertThat(errors).allMatch(e -> e.contains("htsprofiler/987654") && e.contains("404"));
    }

    @Test
    void aRunStartedFromThePageAppearsLiveEndsAndShowsItsGraphAndTimeline() throws Exception {
        gate.close();
        browser.open(dashboard("/"));
        DashboardPages.eventually(() ->
                assertThat(browser.all("button.action-run[data-graph=gated]")).hasSize(1));
        browser.driver()
                .findElement(By.cssSelector("button.action-run[data-graph=gated]"))
                .click();
        long runId = DashboardPages.eventually(() -> scheduler.activeRuns().stream()
                .filter(r -> r.graph().name().equals("gated"))
                .findFirst()
                .orElseThrow()
                .runId());
        browser.open(dashboard("/runs"));
        String row = "tr.run-row[data-run='" + runId + "']";
        DashboardPages.eventually(() -> {
            assertThat(browser.script("return document.querySelector(arguments[0])?.dataset.status", row))
                    .isEqualTo("RUNNING");
            assertThat(browser.script("return document.querySelector(arguments[0] + ' .bar')?.dataset.done", row))
                    .isEqualTo("5");
        });
        browser.screenshot("runs-in-progress");
        gate.open();
        DashboardPages.eventually(
                () -> assertThat(browser.script("return document.querySelector(arguments[0])?.dataset.status", row))
                        .isEqualTo("SUCCEEDED"));
        browser.driver().findElement(By.cssSelector(row + " a")).click();
        DashboardPages.eventually(() -> {
            assertThat(browser.all("#dag g.node")).hasSize(7);
            assertThat(browser.all("#dag g.node[data-state=SUCCEEDED]")).hasSize(7);
            assertThat(browser.all("#dag path.edge")).hasSize(4 + 4 + 1);
            assertThat(browser.driver().findElement(By.id("timeline-caption")).getAttribute("data-bars"))
                    .isEqualTo("7");
        });
        assertThat(Integer.parseInt(Objects.requireNonNull(
                        browser.driver().findElement(By.id("timeline-caption")).getAttribute("data-critical"))))
                .as("tasks of the critical path on the timeline")
                .isGreaterThanOrEqualTo(3);
        assertThat(browser.all("#dag g.node.critical")).hasSizeGreaterThanOrEqualTo(3);
        assertThat(browser.script("return document.querySelector('#timeline canvas') != null"))
                .isEqualTo(true);
        assertThat(browser.driver().findElement(By.id("trace-download")).getAttribute("href"))
                .endsWith("/actuator/htsprofiler/" + runId + "?format=trace");
        assertThat(browser.all("#open-perfetto")).hasSize(1);
        browser.screenshot("run-detail");
    }

    @Test
    void aFailingTaskShowsItsErrorAndStackTrace() throws Exception {
        GraphRun run = scheduler.submit(scheduler.registeredGraphs().get("failing"));
        DashboardPages.eventually(
                () -> assertThat(scheduler.profiler().run(run.runId())).isPresent());
        browser.open(dashboard("/runs/" + run.runId()));
        String boom = "#tasks tr.task[data-task=boom]";
        DashboardPages.eventually(() -> {
            assertThat(browser.driver()
                            .findElement(By.cssSelector(boom + " .cause"))
                            .getText())
                    .contains("IllegalStateException: " + DashboardApp.BOOM);
            assertThat(browser.driver()
                            .findElement(By.cssSelector(boom + " pre.stack"))
                            .getText())
                    .contains("at io.hts.autoconfigure.support.DashboardApp")
                    .contains("Caused by: java.io.IOException: short read at row 7");
        });
        assertThat(browser.all("#dag g.node[data-task=boom][data-state=FAILED]"))
                .hasSize(1);
        assertThat(browser.all("#dag g.node[data-task=child][data-state=CANCELLED]"))
                .hasSize(1);
        assertThat(browser.driver().findElement(By.id("run-status")).getAttribute("data-status"))
                .isEqualTo("FAILED");
        browser.screenshot("failed-run");
        browser.script("document.querySelector(arguments[0]).scrollIntoView({block: 'center'})", boom);
        browser.screenshot("failed-task-stack-trace");
        browser.open(dashboard("/events"));
        new Select(browser.driver().findElement(By.id("filter-type"))).selectByValue("problems");
        DashboardPages.eventually(
                () -> assertThat(browser.all("#events tr.event[data-type=TASK_FAILED][data-run='" + run.runId() + "']"))
                        .hasSize(1));
        browser.screenshot("events");
    }

    /**
     * The server ends the stream (its time-out) and the browser reconnects with Last-Event-ID: the
     * events of a run that ran while the page was disconnected are replayed, each shown once.
     */
    @Test
    void theEventsPageResumesAfterAReconnectWithoutLosingOrRepeatingEvents() throws Exception {
        browser.open(dashboard("/events"));
        DashboardPages.eventually(
                () -> assertThat(browser.script("return document.getElementById('stream-status').dataset.state"))
                        .isEqualTo("reconnecting"));
        GraphRun run = scheduler.execute(scheduler.registeredGraphs().get("quick")); // while disconnected
        String rows = "#events tr.event[data-run='" + run.runId() + "']";
        DashboardPages.eventually(() -> {
            assertThat(browser.script("return document.getElementById('stream-status').dataset.state"))
                    .isEqualTo("resumed");
            assertThat(browser.all(rows + "[data-type=RUN_SUBMITTED]")).hasSize(1);
            assertThat(browser.all(rows + "[data-type=RUN_SUCCEEDED]")).hasSize(1);
        });
        assertThat(browser.script("return new Set(HTS.shared.events.map(e => e.sequence)).size"
                        + " === HTS.shared.events.length"))
                .as("no event twice")
                .isEqualTo(true);
        browser.screenshot("events-resumed");
    }

    /**
     * Issue 33 item 7: the stream ends before any event reached the page (nothing ran): the header
     * says the stream resumed (not "resumed after #null"), and a run that ran while the page was
     * disconnected is shown once it has.
     */
    @Test
    void aReconnectBeforeAnyEventSaysResumedAndShowsWhatRanMeanwhile() throws Exception {
        DashboardPages.eventually(() -> assertThat(scheduler.activeRuns()).isEmpty()); // no event comes by itself
        openAfresh("/events");
        DashboardPages.eventually(
                () -> assertThat(browser.script("return document.getElementById('stream-status').dataset.state"))
                        .isEqualTo("reconnecting"));
        assertThat(browser.script("return HTS.shared.stream.lastId"))
                .as("no event reached the page")
                .isNull();
        GraphRun run = scheduler.execute(scheduler.registeredGraphs().get("quick")); // while disconnected
        String rows = "#events tr.event[data-run='" + run.runId() + "']";
        DashboardPages.eventually(() -> {
            assertThat(browser.driver().findElement(By.id("stream-status")).getText())
                    .isEqualTo("events: resumed");
            assertThat(browser.all(rows + "[data-type=RUN_SUCCEEDED]")).hasSize(1);
        });
        browser.screenshot("events-resumed-before-any-event");
    }

    /**
     * Issue 33 item 6: the runs page opened from a graph's link ({@code #/runs?graph=quick}) shows
     * that graph's runs only, its select names every graph (one option each) with that one chosen,
     * and choosing another shows the other's runs.
     */
    @Test
    void theRunsPageFiltersByTheGraphOfItsLink() throws Exception {
        GraphRun quick = scheduler.execute(scheduler.registeredGraphs().get("quick"));
        GraphRun failing = scheduler.submit(scheduler.registeredGraphs().get("failing"));
        DashboardPages.eventually(
                () -> assertThat(scheduler.profiler().run(failing.runId())).isPresent());
        browser.open(dashboard("/runs?graph=quick"));
        String graphs = "return [...document.querySelectorAll('tr.run-row')].map(r => r.cells[1].textContent)";
        DashboardPages.eventually(() -> {
            assertThat(browser.all("tr.run-row[data-run='" + quick.runId() + "']"))
                    .hasSize(1);
            assertThat(browser.script("return document.getElementById('filter-graph').value"))
                    .isEqualTo("quick");
        });
        assertThat(browser.all("tr.run-row[data-run='" + failing.runId() + "']"))
                .isEmpty();
        assertThat((List<?>) browser.script(graphs)).isNotEmpty().allMatch("quick"::equals);
        Select select = new Select(browser.driver().findElement(By.id("filter-graph")));
        assertThat(select.getOptions())
                .extracting(WebElement::getText)
                .contains("every graph", "failing", "gated", "quick")
                .doesNotHaveDuplicates();
        assertThat(browser.driver().findElement(By.id("filter-graph")).getText())
                .doesNotContain("[object");
        browser.screenshot("runs-of-one-graph");
        select.selectByValue("failing");
        DashboardPages.eventually(() -> {
            assertThat(browser.all("tr.run-row[data-run='" + failing.runId() + "']"))
                    .hasSize(1);
            assertThat((List<?>) browser.script(graphs)).allMatch("failing"::equals);
        });
    }

    @Test
    void cancelEndsARunInProgress() throws Exception {
        gate.close();
        GraphRun run = scheduler.submit(scheduler.registeredGraphs().get("gated"));
        browser.open(dashboard("/runs/" + run.runId()));
        DashboardPages.eventually(
                () -> assertThat(browser.all("button.action-cancel")).hasSize(1));
        DashboardPages.eventually(() -> assertThat(browser.all("#dag g.node[data-task=hold][data-state=RUNNING]"))
                .hasSize(1));
        browser.driver().findElement(By.cssSelector("button.action-cancel")).click();
        DashboardPages.eventually(() -> assertThat(run.status()).isEqualTo(RunStatus.CANCELLED));
        DashboardPages.eventually(() -> assertThat(
                        browser.driver().findElement(By.id("run-status")).getAttribute("data-status"))
                .isEqualTo("CANCELLED"));
        assertThat(browser.all("button.action-cancel")).isEmpty();
    }

    @Test
    void thePolicySwitchesFromTheOverview() {
        browser.open(dashboard("/"));
        DashboardPages.eventually(
                () -> assertThat(browser.all("#policy-select")).hasSize(1));
        try {
            new Select(browser.driver().findElement(By.id("policy-select"))).selectByValue("round-robin");
            browser.driver().findElement(By.cssSelector("button.action-policy")).click();
            DashboardPages.eventually(
                    () -> assertThat(scheduler.policy().name()).isEqualTo("round-robin"));
            DashboardPages.eventually(() -> assertThat(browser.driver()
                            .findElement(By.cssSelector("#card-policy .value"))
                            .getText())
                    .isEqualTo("round-robin"));
        } finally {
            scheduler.setPolicy(io.hts.engine.policy.PolicyType.DEFAULT.create());
        }
    }
}
