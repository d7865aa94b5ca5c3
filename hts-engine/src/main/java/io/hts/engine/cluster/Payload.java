package io.hts.engine.cluster;

import java.util.Arrays;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * An encoded value as it travels: by value (its bytes) when it is small, else by reference (a key
 * of the {@link PayloadStore}). Exactly one of {@link #bytes()} and {@link #reference()} is set.
 */
public final class Payload {

    private final byte @Nullable [] bytes;
    private final @Nullable String reference;
    private final int size;

    private Payload(byte @Nullable [] bytes, @Nullable String reference, int size) {
        this.bytes = bytes;
        this.reference = reference;
        this.size = size;
    }

    /**
     * A payload carried by value.
     *
     * @param bytes the encoded value (not copied: do not change it afterwards)
     * @return the payload
     */
    public static Payload byValue(byte[] bytes) {
        return new Payload(Objects.requireNonNull(bytes, "bytes"), null, bytes.length);
    }

    /**
     * A payload carried by reference.
     *
     * @param key its key in the payload store
     * @param size its encoded size in bytes
     * @return the payload
     */
    public static Payload byReference(String key, int size) {
        Objects.requireNonNull(key, "key");
        if (size < 0) {
            throw new IllegalArgumentException("payload '" + key + "': size must be 0 or more, was " + size);
        }
        return new Payload(null, key, size);
    }

    /** The bytes of a payload by value, else {@code null}. */
    public byte @Nullable [] bytes() {
        return bytes;
    }

    /** The store key of a payload by reference, else {@code null}. */
    public @Nullable String reference() {
        return reference;
    }

    /** The encoded size in bytes. */
    public int size() {
        return size;
    }

    @Override
    public boolean equals(@Nullable Object o) {
        return o instanceof Payload p
                && size == p.size
                && Objects.equals(reference, p.reference)
                && Arrays.equals(bytes, p.bytes);
    }

    @Override
    public int hashCode() {
        return 31 * Objects.hashCode(reference) + Arrays.hashCode(bytes);
    }

    @Override
    public String toString() {
        return reference != null ? "payload '" + reference + "' (" + size + " bytes)" : "payload (" + size + " bytes)";
    }
}
