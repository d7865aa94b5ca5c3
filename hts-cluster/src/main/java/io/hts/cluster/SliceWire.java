package io.hts.cluster;

import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import io.hts.engine.cluster.Payload;
import io.hts.engine.cluster.SliceResult;
import io.hts.engine.cluster.SliceWork;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The SPI's records on Hazelcast's wire, field by field: nothing of them goes through Java
 * serialization, so the only user classes a member decodes are the payloads' (through the
 * scheduler's codec and its allow-list).
 */
final class SliceWire {

    private SliceWire() {}

    static void writeWork(ObjectDataOutput out, SliceWork w) throws IOException {
        out.writeString(w.graph());
        out.writeString(w.fingerprint());
        out.writeString(w.group());
        out.writeInt(w.from());
        out.writeInt(w.to());
        out.writeString(w.coordinator());
        out.writeLong(w.runId());
        out.writeInt(w.attempt());
        out.writeLong(w.timeLimit() == null ? -1 : w.timeLimit().toNanos());
        out.writeInt(w.inputs().size());
        for (Map.Entry<String, Payload> e : w.inputs().entrySet()) {
            out.writeString(e.getKey());
            writePayload(out, e.getValue());
        }
        out.writeInt(w.skipped().size());
        for (int k : w.skipped()) {
            out.writeInt(k);
        }
    }

    static SliceWork readWork(ObjectDataInput in) throws IOException {
        String graph = in.readString();
        String fingerprint = in.readString();
        String group = in.readString();
        int from = in.readInt();
        int to = in.readInt();
        String coordinator = in.readString();
        long runId = in.readLong();
        int attempt = in.readInt();
        long limit = in.readLong();
        int n = in.readInt();
        Map<String, Payload> inputs = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            inputs.put(in.readString(), readPayload(in));
        }
        int skippedCount = in.readInt();
        Set<Integer> skipped = new HashSet<>();
        for (int i = 0; i < skippedCount; i++) {
            skipped.add(in.readInt());
        }
        return new SliceWork(
                graph,
                fingerprint,
                group,
                from,
                to,
                coordinator,
                runId,
                attempt,
                limit < 0 ? null : Duration.ofNanos(limit),
                inputs,
                skipped);
    }

    static void writeResult(ObjectDataOutput out, SliceResult r) throws IOException {
        out.writeString(r.member());
        writePayload(out, r.results());
        out.writeLong(r.bodyNanos());
        out.writeInt(r.gpuMembers());
        out.writeInt(r.failures().size());
        for (Map.Entry<Integer, SliceResult.RemoteFailure> e : r.failures().entrySet()) {
            SliceResult.RemoteFailure f = e.getValue();
            out.writeInt(e.getKey());
            out.writeString(f.task());
            out.writeString(f.exceptionClass());
            out.writeString(f.message());
            out.writeString(f.stackTrace());
        }
    }

    static SliceResult readResult(ObjectDataInput in) throws IOException {
        String member = in.readString();
        Payload results = readPayload(in);
        long bodyNanos = in.readLong();
        int gpuMembers = in.readInt();
        int n = in.readInt();
        Map<Integer, SliceResult.RemoteFailure> failures = new HashMap<>();
        for (int i = 0; i < n; i++) {
            failures.put(in.readInt(), new SliceResult.RemoteFailure(text(in), text(in), text(in), text(in)));
        }
        return new SliceResult(member, results, failures, bodyNanos, gpuMembers);
    }

    private static void writePayload(ObjectDataOutput out, Payload p) throws IOException {
        out.writeString(p.reference());
        out.writeInt(p.size());
        if (p.reference() == null) {
            out.writeByteArray(p.bytes());
        }
    }

    private static Payload readPayload(ObjectDataInput in) throws IOException {
        String reference = in.readString();
        int size = in.readInt();
        if (reference != null) {
            return Payload.byReference(reference, size);
        }
        byte[] bytes = in.readByteArray();
        return Payload.byValue(bytes == null ? new byte[0] : bytes);
    }

    static String text(ObjectDataInput in) throws IOException {
        @Nullable String s = in.readString();
        return s == null ? "" : s;
    }
}
