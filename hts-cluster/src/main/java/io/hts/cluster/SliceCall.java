package io.hts.cluster;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.HazelcastInstanceAware;
import com.hazelcast.nio.ObjectDataInput;
import com.hazelcast.nio.ObjectDataOutput;
import com.hazelcast.nio.serialization.DataSerializable;
import io.hts.engine.cluster.GraphRefusedException;
import io.hts.engine.cluster.MemberLostException;
import io.hts.engine.cluster.SliceResult;
import io.hts.engine.cluster.SliceWork;
import java.io.IOException;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * A slice on its way to a worker member, run there by Hazelcast's executor: it hands the slice to
 * the member's {@link HazelcastClusterEngine} (found in the instance's user context) and waits for
 * it on the executor's thread; the HTS scheduler's own workers never wait. An interrupt (the
 * coordinator cancelled the slice) cancels the slice's run.
 */
final class SliceCall implements Callable<SliceReply>, DataSerializable, HazelcastInstanceAware {

    private @Nullable SliceWork work;
    private transient @Nullable HazelcastInstance instance;

    /** For Hazelcast's deserialization. */
    SliceCall() {}

    SliceCall(SliceWork work) {
        this.work = work;
    }

    @Override
    public void setHazelcastInstance(HazelcastInstance instance) {
        this.instance = instance;
    }

    @Override
    public SliceReply call() throws InterruptedException {
        SliceWork w = work;
        HazelcastInstance hz = instance;
        Object engine = hz == null ? null : hz.getUserContext().get(HazelcastClusterEngine.USER_CONTEXT_KEY);
        String self = hz == null
                ? "a member"
                : HazelcastClusterEngine.describe(hz.getCluster().getLocalMember());
        if (!(engine instanceof HazelcastClusterEngine e) || !e.serving()) {
            return SliceReply.failure(SliceReply.Kind.UNAVAILABLE, w.graph(), self, self + " serves no HTS slices");
        }
        CompletableFuture<SliceResult> running = null;
        try {
            running = e.server().run(w).toCompletableFuture();
            return SliceReply.of(running.get());
        } catch (InterruptedException ex) {
            if (running != null) {
                running.cancel(true);
            }
            throw ex;
        } catch (ExecutionException | CompletionException ex) {
            Throwable cause = ex.getCause() != null ? ex.getCause() : ex;
            if (cause instanceof GraphRefusedException refused) {
                return SliceReply.failure(
                        SliceReply.Kind.REFUSED, refused.graph(), refused.member(), refused.getMessage());
            }
            if (cause instanceof MemberLostException unavailable) {
                return SliceReply.failure(SliceReply.Kind.UNAVAILABLE, w.graph(), self, unavailable.getMessage());
            }
            return SliceReply.failure(SliceReply.Kind.FAILED, w.graph(), self, w + " failed on " + self + ": " + cause);
        }
    }

    @Override
    public void writeData(ObjectDataOutput out) throws IOException {
        SliceWire.writeWork(out, work);
    }

    @Override
    public void readData(ObjectDataInput in) throws IOException {
        work = SliceWire.readWork(in);
    }
}
