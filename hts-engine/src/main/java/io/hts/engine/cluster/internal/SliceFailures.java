package io.hts.engine.cluster.internal;

import io.hts.engine.cluster.SliceResult;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The failures of a slice's members as the worker sends them to their coordinator. The slice runs
 * on the worker as a group of its own, whose members are named by their place in the slice
 * ({@code k[1]} for {@code k[3]} of the slice that starts at 2): the texts the worker's engine
 * writes (a cancel, a refused GPU, a resource it lacks) quote those names, and are given the
 * group's names, {@code 'k[1]'} becoming {@code 'k[3]'}, in one pass (so a name is never translated
 * twice); what a member's body threw keeps its text as the user wrote it.
 *
 * <p>Thread-safe: bodies record what they throw, while the slice runs, in a synchronized identity
 * set; the texts are made once the slice's run has ended, after every body returned.
 */
final class SliceFailures {

    private final String group;
    private final int from;
    private final int size;
    private final Pattern local;
    private final Set<Throwable> thrownByBodies =
            Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));

    SliceFailures(String group, int from, int size) {
        this.group = group;
        this.from = from;
        this.size = size;
        this.local = Pattern.compile("'" + Pattern.quote(group) + "\\[(\\d{1,9})]'");
    }

    /** A member's body threw {@code thrown}: its text, and those of its causes and suppressed throwables, are the user's. */
    void thrownByBody(Throwable thrown) {
        Deque<Throwable> toMark = new ArrayDeque<>();
        toMark.push(thrown);
        while (!toMark.isEmpty()) {
            Throwable t = toMark.pop();
            if (thrownByBodies.add(t)) { // (a cycle of causes ends here)
                if (t.getCause() != null) {
                    toMark.push(t.getCause());
                }
                for (Throwable s : t.getSuppressed()) {
                    toMark.push(s);
                }
            }
        }
    }

    /** The failure of the group's member {@code task}, as text; {@code cause} null when none was recorded. */
    SliceResult.RemoteFailure of(String task, @Nullable Throwable cause) {
        if (cause == null) {
            return new SliceResult.RemoteFailure(task, "unknown", "", "");
        }
        StringWriter written = new StringWriter();
        cause.printStackTrace(new PrintWriter(written));
        String trace = written.toString();
        String message = cause.getMessage();
        if (message != null && !thrownByBodies.contains(cause)) {
            message = translate(message);
        }
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = cause; t != null && seen.add(t); t = t.getCause()) {
            if (!thrownByBodies.contains(t)) {
                String line = t.toString();
                String translated = translate(line);
                if (!translated.equals(line)) {
                    trace = trace.replace(line, translated);
                }
            }
        }
        return new SliceResult.RemoteFailure(task, cause.getClass().getName(), message == null ? "" : message, trace);
    }

    /** {@code text} with every quoted name of a member of the slice ({@code 'k[j]'}, j below its size) the group's. */
    String translate(String text) {
        Matcher m = local.matcher(text);
        if (!m.find()) {
            return text;
        }
        StringBuilder out = new StringBuilder(text.length() + 8);
        do {
            int j = Integer.parseInt(m.group(1));
            String name = j < size ? "'" + group + "[" + (from + j) + "]'" : m.group();
            m.appendReplacement(out, Matcher.quoteReplacement(name));
        } while (m.find());
        m.appendTail(out);
        return out.toString();
    }
}
