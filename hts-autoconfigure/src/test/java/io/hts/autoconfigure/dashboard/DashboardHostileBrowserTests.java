package io.hts.autoconfigure.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.autoconfigure.support.HostileNamesApp;
import io.hts.autoconfigure.support.LocalHttp;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The dashboard in a real headless Chromium against what users do: names that are HTML (shown as
 * text, never run), a graph of no task, and the dashboard at a path mapping and base path of the
 * application's choosing, with and without a trailing slash.
 */
class DashboardHostileBrowserTests extends ChromiumTests {

    @AfterEach
    void noConsoleErrorsNorScripts() {
        assertThat(browser.consoleErrors()).as("the browser console's errors").isEmpty();
    }

    private static ConfigurableApplicationContext start(String... properties) {
        return new SpringApplicationBuilder(HostileNamesApp.class)
                .web(WebApplicationType.SERVLET)
                .properties("server.port=0", "server.address=127.0.0.1", "spring.main.banner-mode=off")
                .properties("hts.executor.threads=2", "hts.dashboard.enabled=true")
                .properties(properties)
                .run();
    }

    /** Leaves the dashboard before its application stops, so that its polls do not fail in the console. */
    private void leave() {
        browser.open("about:blank");
    }

    private void assertNoInjectedScriptRan() {
        assertThat(browser.script("return window.hts_xss"))
                .as("a name ran as HTML")
                .isNull();
        assertThat(browser.all("img[src=x]")).as("a name became an element").isEmpty();
    }

    @Test
    void namesThatAreHtmlAreShownAsTextOnEveryPageAndInTheTimelinesTooltip() throws Exception {
        try (ConfigurableApplicationContext context =
                start("management.endpoints.web.exposure.include=hts,htsevents,htsprofiler,htsdashboard")) {
            String base = "http://127.0.0.1:" + LocalHttp.port(context) + "/actuator/htsdashboard#";
            Scheduler scheduler = context.getBean(Scheduler.class);
            GraphRun run = scheduler.execute(scheduler.registeredGraphs().get(HostileNamesApp.HTML_GRAPH));
            DashboardPages.eventually(
                    () -> assertThat(scheduler.profiler().run(run.runId())).isPresent());
            browser.open(base + "/");
            DashboardPages.eventually(() -> assertThat(
                            browser.driver().findElement(By.tagName("main")).getText())
                    .contains(HostileNamesApp.HTML_GRAPH.substring(0, 20)));
            assertNoInjectedScriptRan();
            for (String route : new String[] {"/runs", "/statistics", "/events"}) {
                browser.open(base + route);
                DashboardPages.eventually(() -> assertThat(
                                browser.driver().findElement(By.tagName("main")).getText())
                        .contains("#" + run.runId()));
                assertNoInjectedScriptRan();
            }
            browser.open(base + "/runs/" + run.runId());
            DashboardPages.eventually(() -> assertThat(browser.driver()
                            .findElement(By.id("timeline-caption"))
                            .getAttribute("data-bars"))
                    .isEqualTo("2"));
            assertThat(browser.driver().findElement(By.id("tasks")).getText()).contains(HostileNamesApp.HTML_TASK);
            // hover the first task's bar: its tooltip names the task
            browser.script("const chart = echarts.getInstanceByDom(document.getElementById('timeline'));"
                    + "chart.dispatchAction({type: 'showTip', seriesIndex: 0, dataIndex: 0});");
            DashboardPages.eventually(() -> assertThat(
                            browser.driver().findElement(By.id("timeline")).getText())
                    .contains(HostileNamesApp.HTML_TASK));
            assertNoInjectedScriptRan();
            leave();
        }
    }

    @Test
    void aRunOfAGraphOfNoTaskHasItsPage() throws Exception {
        try (ConfigurableApplicationContext context =
                start("management.endpoints.web.exposure.include=hts,htsevents,htsprofiler,htsdashboard")) {
            String base = "http://127.0.0.1:" + LocalHttp.port(context) + "/actuator/htsdashboard#";
            Scheduler scheduler = context.getBean(Scheduler.class);
            GraphRun run = scheduler.execute(scheduler.registeredGraphs().get("empty"));
            DashboardPages.eventually(
                    () -> assertThat(scheduler.profiler().run(run.runId())).isPresent());
            browser.open(base + "/runs/" + run.runId());
            DashboardPages.eventually(() -> assertThat(
                            browser.driver().findElement(By.id("run-status")).getAttribute("data-status"))
                    .isEqualTo("SUCCEEDED"));
            DashboardPages.eventually(() -> assertThat(browser.driver()
                            .findElement(By.id("timeline-caption"))
                            .getAttribute("data-bars"))
                    .isEqualTo("0"));
            assertThat(browser.driver().findElement(By.id("dag")).getText()).isEqualTo("This graph has no task.");
            leave();
        }
    }

    @Test
    void atAPathMappingAndBasePathWithOrWithoutATrailingSlash() throws Exception {
        try (ConfigurableApplicationContext context = start(
                "management.endpoints.web.base-path=/ops",
                "management.endpoints.web.path-mapping.htsdashboard=ui/dashboard",
                "management.endpoints.web.path-mapping.hts=scheduler",
                "management.endpoints.web.exposure.include=hts,htsevents,htsprofiler,htsdashboard")) {
            for (String page : new String[] {"/ops/ui/dashboard", "/ops/ui/dashboard/"}) {
                browser.open("http://127.0.0.1:" + LocalHttp.port(context) + page + "#/");
                DashboardPages.eventually(() -> {
                    assertThat(browser.all("#devices tr")).as(page).hasSizeGreaterThan(1);
                    assertThat(browser.driver()
                                    .findElement(By.id("stream-status"))
                                    .getText())
                            .as(page)
                            .isEqualTo("events: live");
                });
                assertThat(browser.consoleErrors()).as(page).isEmpty();
            }
            leave();
        }
    }

    /** The events page opened after many runs shows the latest events, not the oldest the buffer holds. */
    @Test
    void theEventsPageOpenedLateShowsTheLatestEvents() throws Exception {
        try (ConfigurableApplicationContext context =
                start("management.endpoints.web.exposure.include=hts,htsevents,htsprofiler,htsdashboard")) {
            Scheduler scheduler = context.getBean(Scheduler.class);
            GraphRun first = scheduler.execute(scheduler.registeredGraphs().get("empty"));
            GraphRun last = first;
            for (int i = 0; i < 200; i++) { // two events a run: more than the page reads at first
                last = scheduler.execute(scheduler.registeredGraphs().get("empty"));
            }
            String rows = "#events tr.event[data-run='" + last.runId() + "']";
            browser.open("http://127.0.0.1:" + LocalHttp.port(context) + "/actuator/htsdashboard#/events");
            DashboardPages.eventually(() -> assertThat(browser.all(rows)).hasSize(2));
            assertThat(browser.all("#events tr.event[data-run='" + first.runId() + "']"))
                    .as("the oldest run's events, beyond the 200 newest")
                    .isEmpty();
            leave();
        }
    }

    /**
     * Endpoints the page reads but the application does not expose: the page names each one and the
     * property that adds it, and keeps saying so (not a notice that fades after a few seconds).
     */
    @Test
    void whatIsNotExposedIsNamedAndStaysNamed() throws Exception {
        try (ConfigurableApplicationContext context =
                start("management.endpoints.web.exposure.include=hts,htsdashboard")) {
            browser.open("http://127.0.0.1:" + LocalHttp.port(context) + "/actuator/htsdashboard#/runs");
            String exposure = " to management.endpoints.web.exposure.include";
            java.util.concurrent.Callable<Boolean> named = () -> {
                String notice = browser.driver().findElement(By.id("notice")).getText();
                return notice.contains("add htsprofiler" + exposure) && notice.contains("add htsevents" + exposure);
            };
            org.awaitility.Awaitility.await().atMost(DashboardPages.WAIT).until(named);
            // longer than an ordinary notice stays (12 s)
            org.awaitility.Awaitility.await()
                    .during(java.time.Duration.ofSeconds(14))
                    .atMost(java.time.Duration.ofSeconds(30))
                    .until(named);
            assertThat(browser.driver().findElement(By.id("stream-status")).getText())
                    .isEqualTo("events: closed");
            leave();
            assertThat(browser.consoleErrors()).allMatch(e -> e.contains("404"));
        }
    }
}
