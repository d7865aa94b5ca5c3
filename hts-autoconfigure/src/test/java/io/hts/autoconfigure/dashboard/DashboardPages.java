package io.hts.autoconfigure.dashboard;

import static org.awaitility.Awaitility.await;

import io.hts.autoconfigure.support.Browser;
import java.time.Duration;
import java.util.List;
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

    /**
     * The columns of the page's tables whose cells are right-aligned (numbers) under a header that
     * is not, as "table: header"; empty when every such header is right-aligned too.
     */
    @SuppressWarnings("unchecked")
    static List<String> numbersUnderHeadersNotRightAligned(Browser browser) {
        return (List<String>) browser.script("""
                const out = [];
                const right = e => getComputedStyle(e).textAlign === 'right';
                document.querySelectorAll('table').forEach((t, n) => {
                  const heads = t.tHead ? [...t.tHead.rows[0].cells] : [];
                  heads.forEach((th, i) => {
                    const cells = [...t.tBodies[0].rows].map(r => r.cells[i]).filter(c => c);
                    if (cells.some(right) && !right(th)) out.push((t.id || t.className || 'table ' + n) + ': ' + th.textContent);
                  });
                });
                return out;""");
    }
}
