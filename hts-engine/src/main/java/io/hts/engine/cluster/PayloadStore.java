package io.hts.engine.cluster;

import java.util.concurrent.CompletionStage;

/**
 * Where payloads too large to travel by value wait for the member that reads them. Entries expire
 * after a time to live set by the implementation (a member that reads after it gets
 * {@link java.util.NoSuchElementException}); their writer deletes them when done with them. Keys
 * are chosen by the writer and are unique in the cluster.
 */
public interface PayloadStore {

    /**
     * Stores a payload.
     *
     * @param key its key
     * @param bytes the encoded value
     * @return completes once stored
     */
    CompletionStage<Void> put(String key, byte[] bytes);

    /**
     * Reads a payload.
     *
     * @param key its key
     * @return its bytes; fails with {@link java.util.NoSuchElementException} when it is absent or
     *     expired
     */
    CompletionStage<byte[]> get(String key);

    /**
     * Deletes a payload, without waiting; nothing happens when it is absent.
     *
     * @param key its key
     */
    void delete(String key);
}
