package io.hts.autoconfigure.dashboard;

import static org.assertj.core.api.Assertions.assertThat;

import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import io.hts.autoconfigure.ClusterApp;
import io.hts.autoconfigure.support.LocalHttp;
import io.hts.cluster.HazelcastClusterEngine;
import io.hts.cluster.LoopbackConfig;
import io.hts.engine.run.GraphRun;
import io.hts.engine.run.Scheduler;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The overview page of a member of an HTS cluster, in a real headless Chromium: the members as
 * {@code /actuator/hts} lists them (this one marked, the other with its CPU slots), a run whose
 * slices went to the other member (its tasks there shown as on another member, on a timeline row
 * of their own), and the list following a member that leaves.
 */
class DashboardClusterBrowserTests extends ChromiumTests {

    @AfterEach
    void noConsoleErrors() {
        assertThat(browser.consoleErrors()).as("the browser console's errors").isEmpty();
    }

    @Test
    void theOverviewListsTheClustersMembersAndFollowsOneLeaving() throws Exception {
        List<Integer> ports = LoopbackConfig.freePorts(2);
        String cluster = "hts-dashboard-" + ports.get(0);
        HazelcastInstance other = Hazelcast.newHazelcastInstance(LoopbackConfig.member(cluster, ports.get(1), ports));
        Scheduler otherScheduler = Scheduler.builder()
                .threads(1)
                .cluster(new HazelcastClusterEngine(other))
                .build();
        otherScheduler.register(ClusterApp.Squares.counting(ports.get(1)).graph());
        try (ConfigurableApplicationContext app = LocalHttp.server(ClusterApp.class)
                .properties(
                        "hts.cluster.enabled=true",
                        "hts.executor.threads=2",
                        "hts.dashboard.enabled=true",
                        "test.cluster.name=" + cluster,
                        "test.cluster.port=" + ports.get(0),
                        "test.cluster.ports=" + ports.get(0) + "," + ports.get(1),
                        "management.endpoints.web.exposure.include=hts,htsevents,htsprofiler,htsdashboard")
                .run()) {
            browser.open("http://127.0.0.1:" + LocalHttp.port(app) + "/actuator/htsdashboard#/");

            List<String> rows = DashboardPages.eventually(
                    () -> { // read at once: the table is redrawn each poll
                        List<String> r = browser.all("#cluster tbody tr").stream()
                                .map(WebElement::getText)
                                .toList();
                        assertThat(r).hasSize(2);
                        return r;
                    });
            String local = rows.stream()
                    .filter(t -> t.contains("(this member)"))
                    .findFirst()
                    .orElseThrow();
            assertThat(local).contains("127.0.0.1:" + ports.get(0), "UP");
            String remote = rows.stream()
                    .filter(t -> !t.contains("(this member)"))
                    .findFirst()
                    .orElseThrow();
            assertThat(remote)
                    .contains("127.0.0.1:" + ports.get(1), "UP")
                    .contains(other.getCluster().getLocalMember().getUuid().toString());
            assertThat(browser.driver().findElement(By.id("cluster-engine")).getText())
                    .contains("hazelcast 5.7.0", cluster);
            browser.screenshot("cluster");

            // a run of the distributed graph: its slices sent to the other member show as such
            Scheduler scheduler = app.getBean(Scheduler.class);
            GraphRun run = scheduler.execute(scheduler.registeredGraphs().get("squares"));
            DashboardPages.eventually(
                    () -> assertThat(scheduler.profiler().run(run.runId())).isPresent());
            browser.open("http://127.0.0.1:" + LocalHttp.port(app) + "/actuator/htsdashboard#/runs/" + run.runId());
            DashboardPages.eventually(() -> assertThat(
                            browser.driver().findElement(By.id("tasks")).getText())
                    .contains("cpu on another member"));
            DashboardPages.eventually(() -> assertThat(browser.script("return echarts.getInstanceByDom("
                            + "document.getElementById('timeline')).getOption().yAxis[0].data"))
                    .asString()
                    .contains("other members", "cpu worker"));
            browser.screenshot("cluster-run");
            browser.open("http://127.0.0.1:" + LocalHttp.port(app) + "/actuator/htsdashboard#/");

            otherScheduler.close();
            other.shutdown();
            DashboardPages.eventually(() -> assertThat(browser.all("#cluster tbody tr"))
                    .singleElement()
                    .extracting(WebElement::getText)
                    .asString()
                    .contains("(this member)"));
            browser.open("about:blank"); // before the application stops: its polls must not fail
        } finally {
            otherScheduler.close();
            other.shutdown();
        }
    }
}
