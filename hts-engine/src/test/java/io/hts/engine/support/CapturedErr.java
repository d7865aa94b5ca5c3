package io.hts.engine.support;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What the engine logs in a test (slf4j-simple writes to System.err): register with
 * {@code @RegisterExtension}; each test starts with an empty capture, and what it captured is
 * echoed to the real System.err afterwards.
 */
public final class CapturedErr implements BeforeEachCallback, AfterEachCallback {

    private final ByteArrayOutputStream captured = new ByteArrayOutputStream();
    private PrintStream original;

    @Override
    public void beforeEach(ExtensionContext context) {
        captured.reset();
        original = System.err;
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
    }

    @Override
    public void afterEach(ExtensionContext context) {
        System.setErr(original);
        original.print(text());
    }

    /** Everything captured so far in this test. */
    public String text() {
        return captured.toString(StandardCharsets.UTF_8);
    }

    /** How many times {@code what} was captured so far. */
    public int count(String what) {
        Matcher m = Pattern.compile(Pattern.quote(what)).matcher(text());
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }
}
