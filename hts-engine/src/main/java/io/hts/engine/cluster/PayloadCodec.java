package io.hts.engine.cluster;

import org.jspecify.annotations.Nullable;

/**
 * Turns the inputs and results of distributed groups into bytes and back. The default,
 * {@link JavaSerializationCodec}, decodes only the classes its allow-list names.
 *
 * <p>Trust model: a member decodes what other members send it, so whoever can join the cluster can
 * make it decode bytes of their choosing. Run members on a trusted network only (Hazelcast's
 * community edition has neither TLS nor authentication), and keep the codec's allow-list to the
 * value types the graphs exchange.
 */
public interface PayloadCodec {

    /**
     * Encodes a value.
     *
     * @param value the value
     * @return its bytes
     * @throws IllegalArgumentException naming the value's class when it cannot be encoded
     */
    byte[] encode(@Nullable Object value);

    /**
     * Decodes a value.
     *
     * @param bytes what {@link #encode} gave on some member
     * @return the value
     * @throws IllegalArgumentException naming the class when it is refused, or when the bytes are
     *     not an encoded value
     */
    @Nullable
    Object decode(byte[] bytes);
}
