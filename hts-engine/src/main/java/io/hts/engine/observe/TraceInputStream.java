package io.hts.engine.observe;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * A run's Chrome trace as UTF-8 bytes, made as they are read ({@link ChromeTraceExporter.Chunks}):
 * a server streams a large trace to its client with a few kilobytes in memory, not the whole
 * trace. One reader at a time.
 */
final class TraceInputStream extends InputStream {

    /** Pieces are gathered until the buffer holds about this many characters. */
    private static final int FILL = 8192;

    private final ChromeTraceExporter.Chunks chunks;
    private final StringBuilder text = new StringBuilder(FILL + 512);
    private byte[] bytes = new byte[0];
    private int position;

    TraceInputStream(RunProfile profile) {
        this.chunks = new ChromeTraceExporter.Chunks(profile);
    }

    @Override
    public int read() throws IOException {
        if (!fill()) {
            return -1;
        }
        return bytes[position++] & 0xFF;
    }

    @Override
    public int read(byte[] into, int offset, int length) throws IOException {
        if (length == 0) {
            return 0;
        }
        if (!fill()) {
            return -1;
        }
        int n = Math.min(length, bytes.length - position);
        System.arraycopy(bytes, position, into, offset, n);
        position += n;
        return n;
    }

    /** Whether bytes are left to read, making the next ones when the last are used up. */
    private boolean fill() throws IOException {
        if (position < bytes.length) {
            return true;
        }
        text.setLength(0);
        while (text.length() < FILL && chunks.next(text)) {
            // gather pieces
        }
        bytes = text.toString().getBytes(StandardCharsets.UTF_8);
        position = 0;
        return bytes.length > 0;
    }
}
