package io.hts.autoconfigure.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * One server-sent-event connection to a test's own server ({@code /actuator/htsevents/stream}),
 * opened through {@link LocalHttp}'s client and read line by line as the events arrive. Reads block
 * until the server sends or ends the stream: a test bounds them itself (e.g. {@code
 * assertTimeoutPreemptively}). A connection that is opened and never read is a client that does not
 * read.
 */
public final class EventStream implements AutoCloseable {

    /** The comment a stream sends first: the client is subscribed once it arrives. */
    public static final String SUBSCRIBED = ":subscribed";

    private final HttpResponse<Stream<String>> response;
    private final Iterator<String> lines;

    private EventStream(HttpResponse<Stream<String>> response) {
        this.response = response;
        this.lines = response.body().iterator();
    }

    /**
     * A GET of {@code path} on the server of port {@code port}, which must answer 200; its body is
     * not read yet.
     *
     * @param headers names and values, alternating (e.g. {@code "Last-Event-ID", "42"})
     */
    public static EventStream open(int port, String path, String... headers) throws Exception {
        HttpResponse<Stream<String>> response = LocalHttp.getLines(port, path, headers);
        if (response.statusCode() != 200) {
            response.body().close();
        }
        assertThat(response.statusCode()).as("status of the stream %s", path).isEqualTo(200);
        return new EventStream(response);
    }

    /** The response's Content-Type header, or "" without one. */
    public String contentType() {
        return response.headers().firstValue("Content-Type").orElse("");
    }

    /** Whether another line comes (blocks until one does or the server ends the stream). */
    public boolean hasNext() {
        return lines.hasNext();
    }

    /**
     * The next line of the body, without its line end.
     *
     * @throws java.util.NoSuchElementException when the server ended the stream
     */
    public String next() {
        return lines.next();
    }

    /**
     * Reads up to and including the first line {@code last} accepts.
     *
     * @return the lines read, in order, the one accepted last
     * @throws java.util.NoSuchElementException when the stream ends first
     */
    public List<String> readThrough(Predicate<String> last) {
        List<String> read = new ArrayList<>();
        String line;
        do {
            line = lines.next();
            read.add(line);
        } while (!last.test(line));
        return read;
    }

    /** Reads up to and including {@link #SUBSCRIBED}: from then on the client receives what is published. */
    public List<String> awaitSubscribed() {
        return readThrough(SUBSCRIBED::equals);
    }

    /** Reads every line until the server ends the stream. */
    public List<String> readToEnd() {
        List<String> read = new ArrayList<>();
        while (lines.hasNext()) {
            read.add(lines.next());
        }
        return read;
    }

    /** Closes the connection from this side. */
    @Override
    public void close() {
        response.body().close();
    }
}
