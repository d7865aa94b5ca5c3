package io.hts.cluster;

import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.DataSerializable;
import io.hts.engine.cluster.GraphRefusedException;
import io.hts.engine.cluster.MemberLostException;
import io.hts.engine.cluster.SliceResult;
import java.io.IOException;
import org.jspecify.annotations.Nullable;

/**
 * A worker's answer to a {@link SliceCall}: the result, or why there is none, as text (exceptions
 * are rebuilt on the coordinator as the SPI's own types, never deserialized).
 */
final class SliceReply implements DataSerializable {

    enum Kind {
        RESULT,
        /** The worker refused the graph: {@link GraphRefusedException}. */
        REFUSED,
        /** The worker cannot take slices (not serving, shutting down): the slice goes elsewhere. */
        UNAVAILABLE,
        /** The slice failed as a whole on the worker (its inputs could not be decoded, say). */
        FAILED
    }

    private Kind kind = Kind.FAILED;
    private @Nullable SliceResult result;
    private String graph = "";
    private String member = "";
    private String message = "";

    /** For Hazelcast's deserialization. */
    SliceReply() {}

    static SliceReply of(SliceResult result) {
        SliceReply r = new SliceReply();
        r.kind = Kind.RESULT;
        r.result = result;
        return r;
    }

    static SliceReply failure(Kind kind, String graph, String member, String message) {
        SliceReply r = new SliceReply();
        r.kind = kind;
        r.graph = graph;
        r.member = member;
        r.message = message;
        return r;
    }

    /** The result, or the failure as the SPI's exception. */
    SliceResult resultOrThrow() {
        return switch (kind) {
            case RESULT -> result;
            case REFUSED -> throw new GraphRefusedException(graph, member, message);
            case UNAVAILABLE -> throw new MemberLostException(message, null);
            case FAILED -> throw new IllegalStateException(message);
        };
    }

    @Override
    public void writeData(ObjectDataOutput out) throws IOException {
        out.writeInt(kind.ordinal());
        if (kind == Kind.RESULT) {
            SliceWire.writeResult(out, result);
        } else {
            out.writeString(graph);
            out.writeString(member);
            out.writeString(message);
        }
    }

    @Override
    public void readData(ObjectDataInput in) throws IOException {
        kind = Kind.values()[in.readInt()];
        if (kind == Kind.RESULT) {
            result = SliceWire.readResult(in);
        } else {
            graph = SliceWire.text(in);
            member = SliceWire.text(in);
            message = SliceWire.text(in);
        }
    }
}
