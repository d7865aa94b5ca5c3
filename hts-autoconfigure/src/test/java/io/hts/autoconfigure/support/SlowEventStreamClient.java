package io.hts.autoconfigure.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * An event-stream client that reads only when told to, over a socket with a 4 KiB receive buffer:
 * the server's writes to it block once the buffers fill. The one client of the endpoint tests that
 * does not go through {@link LocalHttp}'s, which can neither shrink its receive buffer nor leave
 * its socket unread; it speaks HTTP/1.1 itself and takes the chunked encoding off.
 */
public final class SlowEventStreamClient implements AutoCloseable {

    private final Socket socket = new Socket();
    private final InputStream in;

    /** Sends the GET of {@code path} and reads the response's head: 200, chunked. */
    public SlowEventStreamClient(int port, String path) throws IOException {
        socket.setReceiveBufferSize(4096);
        socket.connect(new InetSocketAddress("127.0.0.1", port), 10_000);
        OutputStream out = socket.getOutputStream();
        out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + port + "\r\nAccept: text/event-stream\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        in = socket.getInputStream();
        String status = line();
        assertThat(status).startsWith("HTTP/1.1 200");
        boolean chunked = false;
        for (String h; !(h = line()).isEmpty(); ) {
            chunked |= h.toLowerCase(Locale.ROOT).startsWith("transfer-encoding: chunked");
        }
        assertThat(chunked).as("an open-ended stream is chunked").isTrue();
    }

    private String line() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        for (int c; (c = in.read()) != '\n'; ) {
            if (c < 0) {
                throw new IOException("the server closed the connection");
            }
            if (c != '\r') {
                b.write(c);
            }
        }
        return b.toString(StandardCharsets.UTF_8);
    }

    /** The next chunk's payload (the chunked encoding taken off), or null at the end of the body. */
    public @Nullable String chunk() throws IOException {
        int size = Integer.parseInt(line().split(";")[0].trim(), 16);
        if (size == 0) {
            return null;
        }
        byte[] data = in.readNBytes(size);
        line();
        return new String(data, StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
