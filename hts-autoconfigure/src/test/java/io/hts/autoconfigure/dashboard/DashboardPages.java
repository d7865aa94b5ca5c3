package io.hts.autoconfigure.dashboard;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import org.openqa.selenium.WebDriverException;

/** Waiting for what the dashboard shows: polled, bounded, never a sleep. */
final class DashboardPages {

    /** How long the page may take to show something (it polls every two seconds). */
    static final Duration WAIT = Duration.ofSeconds(30);

    private DashboardPages() {}

    /** Waits until the assertion holds; an element re-drawn while it was read counts as not yet. */
    static void eventually(Runnable assertion) {
        await().atMost(WAIT)
                .pollInterval(Duration.ofMillis(100))
                .ignoreExceptionsInstanceOf(WebDriverException.class)
                .untilAsserted(assertion::run);
    }

    /** Waits until the value can be read, and returns it. */
    static <T> T eventually(Callable<T> value) {
        AtomicReference<T> out = new AtomicReference<>();
        await().atMost(WAIT)
                .pollInterval(Duration.ofMillis(100))
                .ignoreExceptions()
                .until(() -> {
                    out.set(value.call());
                    return true;
                });
        return out.get();
    }
}
