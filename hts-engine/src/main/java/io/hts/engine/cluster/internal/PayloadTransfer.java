package io.hts.engine.cluster.internal;

import io.hts.engine.cluster.ClusterSettings;
import io.hts.engine.cluster.Payload;
import io.hts.engine.cluster.PayloadStore;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * Values into payloads and back, for both ends of a slice: encoded by the settings' codec, by value
 * up to {@code inlineBytes}, else stored in the engine's payload store under the writer's key.
 * Stateless; the futures complete on the store's threads, or at once for values carried inline.
 */
final class PayloadTransfer {

    private final ClusterSettings settings;
    private final PayloadStore store;

    PayloadTransfer(ClusterSettings settings, PayloadStore store) {
        this.settings = settings;
        this.store = store;
    }

    /**
     * Encodes a value; a large one is stored under {@code key} first.
     *
     * @return the payload once it can travel; failed when the value cannot be encoded or stored
     */
    CompletableFuture<Payload> send(@Nullable Object value, String key) {
        byte[] bytes;
        try {
            bytes = settings.codec().encode(value);
        } catch (RuntimeException ex) {
            return CompletableFuture.failedFuture(ex);
        } catch (StackOverflowError ex) {
            // a value nested too deeply for the codec: its slice must still answer, or its coordinator waits for ever
            return CompletableFuture.failedFuture(new IllegalArgumentException(
                    "a value of "
                            + (value == null ? "null" : value.getClass().getName()) + " cannot be encoded by "
                            + settings.codec()
                            + ": it is nested too deeply (the encoding overflowed the stack)",
                    ex));
        }
        if (bytes.length <= settings.inlineBytes()) {
            return CompletableFuture.completedFuture(Payload.byValue(bytes));
        }
        return store.put(key, bytes).toCompletableFuture().thenApply(v -> Payload.byReference(key, bytes.length));
    }

    /**
     * Decodes a payload, reading a stored one first; {@code deleteAfter}: the stored one is then
     * deleted (a result, read once).
     */
    CompletableFuture<@Nullable Object> receive(Payload payload, boolean deleteAfter) {
        byte[] bytes = payload.bytes();
        if (bytes != null) {
            try {
                return CompletableFuture.completedFuture(settings.codec().decode(bytes));
            } catch (RuntimeException | StackOverflowError ex) {
                return CompletableFuture.failedFuture(ex);
            }
        }
        String key = payload.reference();
        return store.get(key).toCompletableFuture().thenApply(stored -> {
            if (deleteAfter) {
                store.delete(key);
            }
            return settings.codec().decode(stored);
        });
    }

    /** Deletes a stored payload; nothing for one carried by value. */
    void delete(Payload payload) {
        String key = payload.reference();
        if (key != null) {
            store.delete(key);
        }
    }
}
