package io.hts.cluster;

import com.hazelcast.core.EntryEvent;
import com.hazelcast.map.listener.EntryAddedListener;
import com.hazelcast.map.listener.EntryEvictedListener;
import com.hazelcast.map.listener.EntryExpiredListener;
import com.hazelcast.map.listener.EntryRemovedListener;
import com.hazelcast.map.listener.EntryUpdatedListener;

/** The map of member statuses, heard on Hazelcast's event threads, passed on to the engine. */
final class MemberStatuses
        implements EntryAddedListener<String, String>,
                EntryUpdatedListener<String, String>,
                EntryRemovedListener<String, String>,
                EntryExpiredListener<String, String>,
                EntryEvictedListener<String, String> {

    private final HazelcastClusterEngine engine;

    MemberStatuses(HazelcastClusterEngine engine) {
        this.engine = engine;
    }

    @Override
    public void entryAdded(EntryEvent<String, String> event) {
        engine.statusChanged(event.getKey(), event.getValue());
    }

    @Override
    public void entryUpdated(EntryEvent<String, String> event) {
        engine.statusChanged(event.getKey(), event.getValue());
    }

    @Override
    public void entryRemoved(EntryEvent<String, String> event) {
        engine.statusChanged(event.getKey(), null);
    }

    @Override
    public void entryExpired(EntryEvent<String, String> event) {
        engine.statusChanged(event.getKey(), null);
    }

    @Override
    public void entryEvicted(EntryEvent<String, String> event) {
        engine.statusChanged(event.getKey(), null);
    }
}
