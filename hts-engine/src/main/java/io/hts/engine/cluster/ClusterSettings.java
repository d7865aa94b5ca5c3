package io.hts.engine.cluster;

import java.time.Duration;
import java.util.Objects;

/**
 * How a scheduler distributes groups over its cluster engine.
 *
 * @param codec encodes the inputs and results of distributed groups
 * @param inlineBytes payloads up to this size travel by value, larger ones by reference through
 *     the {@link PayloadStore}
 * @param roundTrip the cost of one remote round trip, which slices must dwarf (0.8 ms measured on
 *     loopback; more between hosts)
 * @param overhead the share of a slice's time a round trip may take: a slice holds about
 *     {@code roundTrip / overhead} of work when the cost model knows the members' cost
 * @param sliceAttempts how many members a slice may be sent to, one after the other, when members
 *     are lost under it
 */
public record ClusterSettings(
        PayloadCodec codec, int inlineBytes, Duration roundTrip, double overhead, int sliceAttempts) {

    /** 64 KiB. */
    public static final int DEFAULT_INLINE_BYTES = 64 * 1024;

    /** Checks the values. */
    public ClusterSettings {
        Objects.requireNonNull(codec, "codec");
        Objects.requireNonNull(roundTrip, "roundTrip");
        if (inlineBytes < 0) {
            throw new IllegalArgumentException(
                    "cluster setting inlineBytes must be 0 or more (0: every payload by reference), was "
                            + inlineBytes);
        }
        if (roundTrip.isNegative() || roundTrip.isZero()) {
            throw new IllegalArgumentException("cluster setting roundTrip must be positive, was " + roundTrip);
        }
        if (!(overhead > 0 && overhead < 1)) {
            throw new IllegalArgumentException(
                    "cluster setting overhead must be a share between 0 and 1 (exclusive), e.g. 0.05; was " + overhead);
        }
        if (sliceAttempts < 1) {
            throw new IllegalArgumentException("cluster setting sliceAttempts must be 1 or more, was " + sliceAttempts);
        }
    }

    /** The defaults: Java serialization of the JDK's value types, 64 KiB inline, 0.8 ms, 5 %, 3 attempts. */
    public static ClusterSettings defaults() {
        return new ClusterSettings(
                JavaSerializationCodec.defaults(), DEFAULT_INLINE_BYTES, Duration.ofNanos(800_000), 0.05, 3);
    }

    /**
     * These settings with another codec.
     *
     * @param codec the codec
     * @return the settings
     */
    public ClusterSettings withCodec(PayloadCodec codec) {
        return new ClusterSettings(codec, inlineBytes, roundTrip, overhead, sliceAttempts);
    }

    /**
     * These settings with another inline limit.
     *
     * @param bytes the largest payload sent by value
     * @return the settings
     */
    public ClusterSettings withInlineBytes(int bytes) {
        return new ClusterSettings(codec, bytes, roundTrip, overhead, sliceAttempts);
    }

    /**
     * These settings with another number of attempts per slice.
     *
     * @param attempts members a slice may be sent to
     * @return the settings
     */
    public ClusterSettings withSliceAttempts(int attempts) {
        return new ClusterSettings(codec, inlineBytes, roundTrip, overhead, attempts);
    }
}
