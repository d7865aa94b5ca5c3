package io.hts.cluster;

import com.hazelcast.map.IMap;
import io.hts.engine.cluster.PayloadStore;
import java.time.Duration;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * Payloads in an {@code IMap} whose entries expire after a time to live (Hazelcast keeps a backup
 * on another member, so a payload outlives the member that stored it). Stateless apart from the map.
 */
final class HazelcastPayloadStore implements PayloadStore {

    private final IMap<String, byte[]> map;
    private final long ttlSeconds;

    HazelcastPayloadStore(IMap<String, byte[]> map, Duration timeToLive) {
        this.map = map;
        this.ttlSeconds = timeToLive.toSeconds();
    }

    @Override
    public CompletionStage<Void> put(String key, byte[] bytes) {
        return map.setAsync(key, bytes, ttlSeconds, TimeUnit.SECONDS);
    }

    @Override
    public CompletionStage<byte[]> get(String key) {
        return map.getAsync(key).thenApply(bytes -> {
            if (bytes == null) {
                throw new NoSuchElementException("payload '" + key + "' is not in map '" + map.getName()
                        + "': it expired (payloadTimeToLive) or its writer deleted it");
            }
            return bytes;
        });
    }

    @Override
    public void delete(String key) {
        map.removeAsync(key);
    }
}
