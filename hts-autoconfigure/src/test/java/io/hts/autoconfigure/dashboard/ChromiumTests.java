package io.hts.autoconfigure.dashboard;

import io.hts.autoconfigure.support.Browser;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * One headless Chromium for a test class, started before its first test and closed after its last;
 * the class is skipped, saying why, where Chromium is not installed (failed instead with
 * HTS_BROWSER_TESTS=required).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(Browser.Condition.class)
abstract class ChromiumTests {

    Browser browser;

    @BeforeAll
    void startTheBrowser() {
        browser = Browser.start();
    }

    @AfterAll
    void stopTheBrowser() {
        if (browser != null) {
            browser.close();
        }
    }
}
