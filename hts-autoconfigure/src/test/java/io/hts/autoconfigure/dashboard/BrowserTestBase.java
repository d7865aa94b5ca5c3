package io.hts.autoconfigure.dashboard;

import io.hts.autoconfigure.support.DashboardApp;
import io.hts.engine.run.Scheduler;
import org.junit.jupiter.api.AfterAll;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * What the dashboard's browser tests of one running application share: one Chromium for the class
 * (started once the application is up), the application's scheduler and gate, the dashboard's
 * address.
 */
abstract class BrowserTestBase extends ChromiumTests {

    @LocalServerPort
    int port;

    @Autowired
    Scheduler scheduler;

    @Autowired
    DashboardApp.Gate gate;

    @AfterAll
    void openTheGate() {
        gate.open(); // whatever a test left waiting (before the browser closes)
    }

    /** The dashboard's page at a route ({@code /runs/12}). */
    String dashboard(String route) {
        return "http://127.0.0.1:" + port + "/actuator/htsdashboard#" + route;
    }

    /**
     * Opens the dashboard at a route as a new page, whose samples, events and event stream start
     * anew (opening a route of the page already open only changes its hash: the page keeps them).
     */
    void openAfresh(String route) {
        browser.open("about:blank");
        browser.open(dashboard(route));
    }
}
