package io.hts.autoconfigure.dashboard;

import io.hts.autoconfigure.support.Browser;
import io.hts.autoconfigure.support.DashboardApp;
import io.hts.engine.run.Scheduler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * What the dashboard's browser tests share: one Chromium for the class (started once the
 * application is up), the application's scheduler and gate, the dashboard's address. Skipped,
 * saying why, where Chromium is not installed (failed instead with HTS_BROWSER_TESTS=required).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(Browser.Condition.class)
abstract class BrowserTestBase {

    @LocalServerPort
    int port;

    @Autowired
    Scheduler scheduler;

    @Autowired
    DashboardApp.Gate gate;

    Browser browser;

    @BeforeAll
    void startTheBrowser() {
        browser = Browser.start();
    }

    @AfterAll
    void stopTheBrowser() {
        gate.open(); // whatever a test left waiting
        if (browser != null) {
            browser.close();
        }
    }

    /** The dashboard's page at a route ({@code /runs/12}). */
    String dashboard(String route) {
        return "http://127.0.0.1:" + port + "/actuator/htsdashboard#" + route;
    }
}
