package io.hts.autoconfigure.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;

/**
 * The dashboard's figures in a real headless Chromium (issue 33, items 8 and 9): a run in progress
 * shows its time so far, and its partial figures say so; the statistics count a failed task; a
 * count of one is singular; a cancelled task is grey, not red like a failure, and legends say what
 * the colours mean; idle charts say what will appear on them; numbers are right-aligned under
 * right-aligned headers. The application of {@link WritableDashboardBrowserTests}.
 */
class DashboardFiguresBrowserTests extends WritableDashboardBrowserTests {

    private String text(String css) {
        return browser.driver().findElement(By.cssSelector(css)).getText();
    }

    private Object color(String css) {
        return browser.script("return getComputedStyle(document.querySelector(arguments[0])).color", css);
    }

    private GraphRun ranAndKept(GraphRun run) {
        DashboardPages.eventually(
                () -> assertThat(scheduler.profiler().run(run.runId())).isPresent());
        return run;
    }

    /**
     * Item 8: the runs list shows a run in progress's time so far; its page's critical path counts
     * the task running with its time so far (not 0), its workers' time counts that task's worker
     * busy (not 100 % idle), and each partial figure says "so far", until the run ends.
     */
    @Test
    void aRunInProgressShowsItsTimeSoFarAndItsPartialFiguresSaySo() throws Exception {
        gate.close();
        GraphRun run = scheduler.submit(scheduler.registeredGraphs().get("gated"));
        try {
            browser.open(dashboard("/runs"));
            String row = "tr.run-row[data-run='" + run.runId() + "']";
            DashboardPages.eventually(
                    () -> assertThat(text(row + " td.makespan")).matches("[0-9.]+ m?s so far"));
            browser.open(dashboard("/runs/" + run.runId()));
            DashboardPages.eventually(() -> {
                assertThat(browser.all("#dag g.node[data-task=hold][data-state=RUNNING]"))
                        .hasSize(1);
                assertThat(text("#card-critical-path .label")).isEqualTo("critical path so far");
                // load, a shard, and hold with its time so far
                assertThat(text("#card-critical-path .value")).endsWith("(3 tasks)");
                assertThat(text("#card-total-work .label")).isEqualTo("total work so far");
                assertThat(text("#tasks tr.task[data-task=hold] td:nth-child(6)"))
                        .endsWith(" so far");
                assertThat(text("#worker-time tbody tr:first-child td:last-child"))
                        .as("the work's share: hold keeps a worker busy")
                        .isNotEqualTo("0.0 %");
                assertThat(browser.all("#worker-time-so-far")).hasSize(1);
                assertThat(text("#timeline-caption")).contains(" so far");
            });
            browser.screenshot("run-in-progress-so-far");
        } finally {
            gate.open();
        }
        DashboardPages.eventually(() -> {
            assertThat(browser.driver().findElement(By.id("run-status")).getAttribute("data-status"))
                    .isEqualTo("SUCCEEDED");
            assertThat(text("#card-critical-path .label")).isEqualTo("critical path");
            assertThat(browser.all("#worker-time-so-far")).isEmpty();
        });
    }

    /** Item 9: the statistics count the failed task, as failed; its descendant, cancelled before it started, never ran. */
    @Test
    void theStatisticsCountAFailedTask() throws Exception {
        ranAndKept(scheduler.submit(scheduler.registeredGraphs().get("failing")));
        browser.open(dashboard("/statistics"));
        String boom = "table.statistics[data-graph=failing] tr[data-name=boom]";
        DashboardPages.eventually(
                () -> assertThat(text(boom + " td.failed")).isNotEqualTo("0").isEqualTo(text(boom + " td.count")));
        assertThat(text(boom + " td.cancelled")).isEqualTo("0");
        assertThat(browser.all("table.statistics[data-graph=failing] tr[data-name=child]"))
                .isEmpty();
        browser.screenshot("statistics-with-failures");
    }

    /** Item 9: "1 task", not "1 tasks". */
    @Test
    void aCountOfOneIsSingular() throws Exception {
        TaskGraph one = TaskGraph.named("one");
        one.task("only").cpu(ctx -> 1);
        GraphRun run = ranAndKept(scheduler.execute(one));
        browser.open(dashboard("/runs/" + run.runId()));
        DashboardPages.eventually(
                () -> assertThat(text("#timeline-caption")).startsWith("1 task on 1 lane; critical path: 1 task, "));
        assertThat(text("#card-critical-path .value")).endsWith("(1 task)");
        assertThat(browser.driver()
                        .findElement(By.cssSelector("main .progress"))
                        .getAttribute("title"))
                .isEqualTo("1 of 1 task done");
    }

    /**
     * Item 9: the task that a failure cancelled is not drawn red like the failure, on the run's
     * page nor on the events page; legends say what the colours mean.
     */
    @Test
    void aCancelledTaskIsNotRedLikeAFailureAndLegendsSaySo() throws Exception {
        GraphRun run = ranAndKept(scheduler.submit(scheduler.registeredGraphs().get("failing")));
        browser.open(dashboard("/runs/" + run.runId()));
        String boom = "#tasks tr.task[data-task=boom] .cause";
        String child = "#tasks tr.task[data-task=child] .cause";
        DashboardPages.eventually(() -> assertThat(browser.all(child)).hasSize(1));
        assertThat(color(child)).isNotEqualTo(color(boom));
        assertThat(browser.all("#timeline-legend [data-state=CANCELLED], #dag-legend [data-state=CANCELLED]"))
                .hasSize(2);
        browser.open(dashboard("/events"));
        String events = "#events tr.event[data-run='" + run.runId() + "']";
        DashboardPages.eventually(() -> {
            assertThat(browser.all(events + "[data-type=TASK_FAILED] .cause")).hasSize(1);
            assertThat(browser.all(events + "[data-type=TASK_CANCELLED] .cause"))
                    .hasSize(1);
        });
        assertThat(color(events + "[data-type=TASK_CANCELLED] .cause"))
                .isNotEqualTo(color(events + "[data-type=TASK_FAILED] .cause"));
        assertThat(text("#events-legend")).contains("cancelled", "failed");
        browser.screenshot("events-legend");
    }

    /** Item 9: while nothing runs, each chart of the overview says what will appear on it; a run in progress shows instead. */
    @Test
    void idleChartsSayWhatWillAppearOnThem() throws Exception {
        DashboardPages.eventually(() -> assertThat(scheduler.activeRuns()).isEmpty());
        openAfresh("/");
        String[] charts = {"#chart-busy", "#chart-executed", "#chart-runs"};
        DashboardPages.eventually(() -> {
            for (String chart : charts) {
                assertThat(browser.driver()
                                .findElement(By.cssSelector(chart + " .chart-idle"))
                                .isDisplayed())
                        .as(chart)
                        .isTrue();
                assertThat(text(chart + " .chart-idle")).as(chart).contains("will show here");
            }
        });
        browser.screenshot("overview-idle");
        gate.close();
        scheduler.submit(scheduler.registeredGraphs().get("gated"));
        DashboardPages.eventually(() -> {
            assertThat(browser.driver()
                            .findElement(By.cssSelector("#chart-runs .chart-idle"))
                            .isDisplayed())
                    .isFalse();
            assertThat(browser.driver()
                            .findElement(By.cssSelector("#chart-busy .chart-idle"))
                            .isDisplayed())
                    .isFalse();
        });
    }

    /** Item 9: on every page, a column of numbers is right-aligned under a right-aligned header. */
    @Test
    void numbersAreRightAlignedUnderRightAlignedHeadersOnEveryPage() throws Exception {
        GraphRun run = ranAndKept(scheduler.execute(scheduler.registeredGraphs().get("quick")));
        Map<String, String> drawn = Map.of(
                "/",
                "#devices tbody tr",
                "/runs",
                "tr.run-row",
                "/statistics",
                "table.statistics tbody tr",
                "/runs/" + run.runId(),
                "#worker-time tbody tr");
        for (Map.Entry<String, String> page : drawn.entrySet()) {
            browser.open(dashboard(page.getKey()));
            DashboardPages.eventually(
                    () -> assertThat(browser.all(page.getValue())).isNotEmpty());
            assertThat(DashboardPages.numbersUnderHeadersNotRightAligned(browser))
                    .as(page.getKey())
                    .isEmpty();
        }
    }
}
