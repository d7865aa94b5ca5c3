package io.hts.autoconfigure.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import io.hts.autoconfigure.support.DashboardApp;
import io.hts.engine.graph.RunStatus;
import io.hts.engine.graph.Task;
import io.hts.engine.graph.TaskGraph;
import io.hts.engine.run.GraphRun;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.support.ui.Select;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * An adversarial review of the dashboard's issue 33 changes (items 6 to 9) in a real headless
 * Chromium: the Runs page's graph filter with hostile names and the back button, the live event
 * stream across reconnects, a run in progress's live figures until it ends (succeeds, fails, is
 * cancelled), the statistics' failed and cancelled counts, refused actions, XSS through names. The
 * three attacks broke a promise and were fixed: the runs filter in the address and a stream
 * refused once and reopened are tested here; an application restarted behind the same address is
 * tested over HTTP (HtsEndpointHttpEdgeTests: an id of another instance resumes from the start).
 */
@SpringBootTest(
        classes = {DashboardApp.class, DashboardReviewBreakBrowserTests.Extras.class},
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "server.address=127.0.0.1",
            "hts.dashboard.enabled=true",
            "management.endpoints.web.exposure.include=hts,htsevents,htsprofiler,htsdashboard",
            "management.endpoint.hts.access=unrestricted",
            "hts.events.stream-timeout=3s" // the event stream ends every 3 s: the page must resume it
        })
@org.springframework.test.annotation.DirtiesContext // its filter and apps must not outlive the class
class DashboardReviewBreakBrowserTests extends BrowserTestBase {

    /** A registered graph whose name is HTML and that cannot run here (a GPU-only task, no GPU). */
    static final String HTML_GPU_GRAPH = "<img src=x onerror=\"window.hts_xss=3\"> & 'gpu' \"only\"";

    /** While set, the event stream is answered 503 (a proxy in front of a restarting server, say). */
    static final AtomicBoolean REFUSE_STREAM = new AtomicBoolean();

    @Configuration(proxyBeanMethods = false)
    static class Extras {

        @Bean
        TaskGraph htmlGpuGraph() {
            TaskGraph g = TaskGraph.named(HTML_GPU_GRAPH);
            g.task("kernel").gpu(ctx -> 1);
            return g;
        }

        @Bean
        OncePerRequestFilter refuseTheStreamWhileAsked() {
            return new OncePerRequestFilter() {
                @Override
                protected void doFilterInternal(
                        HttpServletRequest request, HttpServletResponse response, FilterChain chain)
                        throws ServletException, IOException {
                    if (REFUSE_STREAM.get() && request.getRequestURI().endsWith("/htsevents/stream")) {
                        response.sendError(503, "restarting");
                        return;
                    }
                    chain.doFilter(request, response);
                }
            };
        }
    }

    @AfterEach
    void cleanUp() {
        gate.open(); // whatever a test left waiting
        REFUSE_STREAM.set(false);
        browser.consoleErrors(); // several attacks make the page's reads fail on purpose
        assertThat(browser.script("return window.hts_xss"))
                .as("a name ran as HTML")
                .isNull();
    }

    private String text(String css) {
        return browser.driver().findElement(By.cssSelector(css)).getText();
    }

    private String streamState() {
        return (String) browser.script("return document.getElementById('stream-status').dataset.state");
    }

    private GraphRun kept(GraphRun run) {
        DashboardPages.eventually(
                () -> assertThat(scheduler.profiler().run(run.runId())).isPresent());
        return run;
    }

    @SuppressWarnings("unchecked")
    private List<String> shownGraphs() {
        return (List<String>)
                browser.script("return [...document.querySelectorAll('tr.run-row')].map(r => r.cells[1].textContent)");
    }

    private String encoded(String name) {
        return (String) browser.script("return encodeURIComponent(arguments[0])", name);
    }

    // ------------------------------------------------------------------ 1. the graph filter

    /**
     * Held: graphs named with spaces, quotes, HTML, unicode, '&', '#', '?' and '=' are listed by
     * name, and {@code #/runs?graph=NAME} (encoded as the page encodes its links) selects and
     * filters to exactly that graph; a graph with no run is selected and shows "No run matches.";
     * the run page's graph link and the back button restore the filter of the link.
     */
    @Test
    void hostileGraphNamesFilterByLinkAndTheBackButtonRestoresIt() throws Exception {
        String[] names = {
            "two words", "say \"hi\" it's", "<i onmouseover=\"window.hts_xss=4\">h</i>", "\u00e9\u4e2d\ud83d\ude00",
            "a&graph=b", "x#y", "why?z=1", "a+b %41"
        };
        long[] ids = new long[names.length];
        for (int i = 0; i < names.length; i++) {
            TaskGraph g = TaskGraph.named(names[i]);
            g.task("t").cpu(ctx -> 1);
            ids[i] = kept(scheduler.execute(g)).runId();
        }
        openAfresh("/runs");
        for (int i = 0; i < names.length; i++) {
            String name = names[i];
            long id = ids[i];
            browser.open(dashboard("/runs?graph=" + encoded(name)));
            DashboardPages.eventually(() -> {
                assertThat(browser.script("return document.getElementById('filter-graph').value"))
                        .as(name)
                        .isEqualTo(name);
                assertThat(shownGraphs()).as(name).containsExactly(name);
                assertThat(browser.all("tr.run-row[data-run='" + id + "']")).hasSize(1);
            });
        }
        Select select = new Select(browser.driver().findElement(By.id("filter-graph")));
        assertThat(select.getOptions().stream()
                        .map(o -> o.getAttribute("value"))
                        .toList())
                .contains(names)
                .doesNotHaveDuplicates();
        // a graph with no run yet: selected, nothing shown
        browser.open(dashboard("/runs?graph=" + encoded("never ran &?=#")));
        DashboardPages.eventually(() -> {
            assertThat(browser.script("return document.getElementById('filter-graph').value"))
                    .isEqualTo("never ran &?=#");
            assertThat(text("#no-runs")).isEqualTo("No run matches.");
        });
        // the run's page links back to its graph's runs; back returns to the run, back again to the list
        browser.open(dashboard("/runs/" + ids[2]));
        DashboardPages.eventually(() -> assertThat(browser.all("main h1 a")).hasSize(1));
        browser.driver().findElement(By.cssSelector("main h1 a")).click();
        DashboardPages.eventually(() -> assertThat(shownGraphs()).containsExactly(names[2]));
        browser.driver().navigate().back();
        DashboardPages.eventually(() -> assertThat(browser.all("#run-status")).hasSize(1));
        browser.driver().navigate().back();
        DashboardPages.eventually(() -> {
            assertThat(browser.script("return document.getElementById('filter-graph').value"))
                    .isEqualTo("never ran &?=#");
            assertThat(text("#no-runs")).isEqualTo("No run matches.");
        });
    }

    /**
     * Broke before its fix: choosing a graph in the select did not change the page's address, so the back button
     * (or a copied link, or a reload) brings back the graph of the link the page was opened with,
     * not the one the user was looking at.
     */
    @Test
    void backFromARunRestoresTheGraphChosenInTheSelect() throws Exception {
        GraphRun quick = kept(scheduler.execute(scheduler.registeredGraphs().get("quick")));
        GraphRun failing = kept(scheduler.submit(scheduler.registeredGraphs().get("failing")));
        browser.open(dashboard("/runs?graph=quick"));
        DashboardPages.eventually(() -> assertThat(browser.all("tr.run-row[data-run='" + quick.runId() + "']"))
                .hasSize(1));
        new Select(browser.driver().findElement(By.id("filter-graph"))).selectByValue("failing");
        DashboardPages.eventually(() -> assertThat(shownGraphs()).isNotEmpty().allMatch("failing"::equals));
        browser.script("document.querySelector(\"tr.run-row[data-run='" + failing.runId() + "'] a\").click()");
        DashboardPages.eventually(() -> assertThat(browser.all("#run-status")).hasSize(1));
        browser.driver().navigate().back();
        DashboardPages.eventually(() -> {
            assertThat(browser.script("return document.getElementById('filter-graph').value"))
                    .as("the graph chosen before opening the run")
                    .isEqualTo("failing");
            assertThat(shownGraphs()).isNotEmpty().allMatch("failing"::equals);
        });
    }

    // ------------------------------------------------------------------ 2. the event stream

    /** Held: after events, a reconnect says "resumed after #N", N the sequence of the last event received. */
    @Test
    void aReconnectAfterEventsSaysResumedAfterTheLastOnesId() throws Exception {
        openAfresh("/events");
        DashboardPages.eventually(() -> assertThat(streamState()).isEqualTo("live"));
        GraphRun run = scheduler.execute(scheduler.registeredGraphs().get("quick"));
        DashboardPages.eventually(() -> assertThat(
                        browser.all("#events tr.event[data-type=RUN_SUCCEEDED][data-run='" + run.runId() + "']"))
                .hasSize(1));
        DashboardPages.eventually(() -> {
            assertThat(streamState()).isEqualTo("resumed");
            Object last = browser.script("return HTS.shared.stream.lastId"); // instance:sequence
            assertThat(last).isNotNull();
            String sequence = last.toString().substring(last.toString().lastIndexOf(':') + 1);
            assertThat(text("#stream-status")).isEqualTo("events: resumed after #" + sequence);
        });
    }

    /**
     * Broke before its fix: a reconnect the server (or a proxy in front of it) answers with an error status makes
     * the browser's EventSource give up for good (readyState CLOSED); the page says "events: closed"
     * and never opens the stream again, though the server is back at once and the page's polls
     * work: every later event is lost to it.
     */
    @Test
    void aReconnectRefusedOnceIsRetriedAndNoEventIsLost() throws Exception {
        openAfresh("/events");
        DashboardPages.eventually(() -> assertThat(streamState()).isEqualTo("live"));
        REFUSE_STREAM.set(true); // the next reconnect (the stream ends every 3 s) is answered 503
        DashboardPages.eventually(() -> assertThat(streamState()).isIn("closed", "reconnecting"));
        DashboardPages.eventually(() -> assertThat(streamState()).isEqualTo("closed"));
        REFUSE_STREAM.set(false); // the server is back
        GraphRun run = scheduler.execute(scheduler.registeredGraphs().get("quick"));
        DashboardPages.eventually(() -> {
            assertThat(browser.all("#events tr.event[data-type=RUN_SUCCEEDED][data-run='" + run.runId() + "']"))
                    .as("the run that ran after the server came back")
                    .hasSize(1);
            assertThat(streamState()).isIn("live", "resumed");
        });
    }

    // ------------------------------------------------------------------ 3. a run in progress

    /** Held: the run's page and the runs list show a time so far that grows while the run goes on. */
    @Test
    void aRunInProgressShowsATimeSoFarThatGrows() throws Exception {
        gate.close();
        GraphRun run = scheduler.submit(scheduler.registeredGraphs().get("gated"));
        try {
            browser.open(dashboard("/runs/" + run.runId()));
            String first = DashboardPages.eventually(() -> {
                assertThat(text("#card-makespan .label")).isEqualTo("makespan so far");
                return text("#card-makespan .value");
            });
            DashboardPages.eventually(
                    () -> assertThat(text("#card-makespan .value")).isNotEqualTo(first));
            browser.open(dashboard("/runs"));
            String cell = "tr.run-row[data-run='" + run.runId() + "'] td.makespan";
            String listed = DashboardPages.eventually(() -> {
                assertThat(text(cell)).endsWith(" so far");
                return text(cell);
            });
            DashboardPages.eventually(
                    () -> assertThat(text(cell)).endsWith(" so far").isNotEqualTo(listed));
        } finally {
            gate.open();
        }
        DashboardPages.eventually(() -> assertThat(text("tr.run-row[data-run='" + run.runId() + "'] td.makespan"))
                .doesNotContain("so far")
                .isNotEmpty());
    }

    /** Held: a run that fails while its page is watched ends with final figures: no "so far" left. */
    @Test
    void aRunThatFailsWhileWatchedEndsWithFinalFigures() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        TaskGraph g = TaskGraph.named("fails while watched");
        Task<Integer> first = g.task("first").cpu(ctx -> 1);
        Task<Integer> slow = g.task("slow").after(first).cpu(ctx -> {
            if (!release.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("never released");
            }
            throw new IllegalStateException("failed while watched");
        });
        g.task("after").after(slow).cpu(ctx -> ctx.input(slow) + 1);
        GraphRun run = scheduler.submit(g);
        try {
            browser.open(dashboard("/runs/" + run.runId()));
            DashboardPages.eventually(() -> {
                assertThat(text("#card-critical-path .label")).isEqualTo("critical path so far");
                assertThat(text("#tasks tr.task[data-task=slow] td:nth-child(6)"))
                        .endsWith(" so far");
            });
        } finally {
            release.countDown();
        }
        DashboardPages.eventually(() -> {
            assertThat(browser.driver().findElement(By.id("run-status")).getAttribute("data-status"))
                    .isEqualTo("FAILED");
            assertThat(text("main")).doesNotContain("so far");
            assertThat(text("#card-makespan .label")).isEqualTo("makespan");
        });
        browser.open(dashboard("/runs"));
        DashboardPages.eventually(() -> assertThat(text("tr.run-row[data-run='" + run.runId() + "'] td.makespan"))
                .isNotEmpty()
                .doesNotContain("so far"));
    }

    /**
     * Held: a run cancelled from its page while watched ends with final figures, its running task
     * grey (not red), and the statistics count that task as cancelled, in their own column.
     */
    @Test
    void aRunCancelledWhileWatchedIsFinalGreyAndCountedAsCancelled() throws Exception {
        gate.close();
        GraphRun run = scheduler.submit(scheduler.registeredGraphs().get("gated"));
        browser.open(dashboard("/runs/" + run.runId()));
        DashboardPages.eventually(() -> {
            assertThat(browser.all("#dag g.node[data-task=hold][data-state=RUNNING]"))
                    .hasSize(1);
            assertThat(browser.all("button.action-cancel")).hasSize(1);
        });
        browser.script("document.querySelector('button.action-cancel').click()");
        DashboardPages.eventually(() -> assertThat(run.status()).isEqualTo(RunStatus.CANCELLED));
        DashboardPages.eventually(() -> {
            assertThat(browser.driver().findElement(By.id("run-status")).getAttribute("data-status"))
                    .isEqualTo("CANCELLED");
            assertThat(text("main")).doesNotContain("so far");
        });
        String fill = (String) browser.script(
                "return document.querySelector('#dag g.node[data-task=hold] rect').getAttribute('fill')");
        assertThat(fill).as("hold, cancelled, in the legend's CANCELLED grey").isEqualTo("#8a8f96");
        browser.open(dashboard("/statistics"));
        String hold = "table.statistics[data-graph=gated] tr[data-name=hold]";
        DashboardPages.eventually(() -> assertThat(text(hold + " td.cancelled")).isNotEqualTo("0"));
        assertThat(browser.script(
                        "return getComputedStyle(document.querySelector(arguments[0])).color", hold + " td.cancelled"))
                .isNotEqualTo("rgb(208, 52, 58)");
        assertThat(DashboardPages.numbersUnderHeadersNotRightAligned(browser)).isEmpty();
    }

    // ------------------------------------------------------------------ 4. refused actions, XSS

    /**
     * Held: Run on a registered graph that cannot run here (a GPU-only task, no GPU) is refused
     * with a 400 whose reason the page shows; the graph's name, HTML, stays text.
     */
    @Test
    void aRunRefusedWith400ShowsTheServersReasonAndNoNameRunsAsHtml() throws Exception {
        openAfresh("/");
        String find =
                "return [...document.querySelectorAll('button.action-run')].find(b => b.dataset.graph === arguments[0])";
        DashboardPages.eventually(
                () -> assertThat(browser.script(find, HTML_GPU_GRAPH)).isNotNull());
        browser.script(find.replace("return ", "") + ".click()", HTML_GPU_GRAPH);
        DashboardPages.eventually(() -> assertThat(text("#notice .refused"))
                .startsWith("Run (graph " + HTML_GPU_GRAPH + ") refused: HTTP 400 Bad Request: graph '" + HTML_GPU_GRAPH
                        + "' cannot run on this scheduler"));
        assertThat(browser.all("img[src=x]")).isEmpty();
        // its link filters the runs by that name
        browser.open(dashboard("/runs?graph=" + encoded(HTML_GPU_GRAPH)));
        DashboardPages.eventually(() -> {
            assertThat(browser.script("return document.getElementById('filter-graph').value"))
                    .isEqualTo(HTML_GPU_GRAPH);
            assertThat(text("#no-runs")).isEqualTo("No run matches.");
        });
        browser.script("document.querySelector('#notice .refused button.close').click()");
    }
}
