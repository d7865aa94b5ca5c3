package io.hts.cluster;

import com.hazelcast.cluster.Member;
import com.hazelcast.cluster.MembershipListener;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.HazelcastInstanceNotActiveException;
import com.hazelcast.core.IExecutorService;
import com.hazelcast.core.MemberLeftException;
import com.hazelcast.instance.BuildInfoProvider;
import com.hazelcast.map.IMap;
import com.hazelcast.spi.exception.TargetDisconnectedException;
import com.hazelcast.spi.exception.TargetNotMemberException;
import io.hts.engine.cluster.ClusterEngine;
import io.hts.engine.cluster.ClusterMember;
import io.hts.engine.cluster.MemberLostException;
import io.hts.engine.cluster.MembershipEvent;
import io.hts.engine.cluster.PayloadStore;
import io.hts.engine.cluster.SliceResult;
import io.hts.engine.cluster.SliceServer;
import io.hts.engine.cluster.SliceWork;
import io.hts.engine.cluster.SubmittedSlice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The engine's {@link ClusterEngine} over an embedded Hazelcast member that the application owns
 * (this class never shuts it down): slices go to members through an {@code IExecutorService}, a
 * member's capacity, health and load through a map of statuses that it refreshes every
 * {@code statusInterval}, large payloads through a map whose entries expire.
 *
 * <pre>{@code
 * HazelcastInstance hz = Hazelcast.newHazelcastInstance(config);
 * HazelcastClusterEngine engine = new HazelcastClusterEngine(hz);
 * Scheduler scheduler = Scheduler.builder().cluster(engine).build();
 * scheduler.register(sweep);                      // on every member
 * }</pre>
 *
 * <p><b>State.</b> {@code known} holds the last status of every member that serves HTS slices,
 * written by Hazelcast's event threads (entry and membership listeners) and by this member's own
 * publication, read by {@link #members()} without a remote call; a member is listed while it is in
 * the cluster and has a status. {@code server} is set once, by compare-and-set. Members that leave are
 * removed from the status map by every member that sees them leave (idempotent deletes).
 */
public final class HazelcastClusterEngine implements ClusterEngine, AutoCloseable {

    /** Where the engine is found by {@link SliceCall}s on this member: the instance's user context. */
    static final String USER_CONTEXT_KEY = HazelcastClusterEngine.class.getName();

    private final HazelcastInstance hz;
    private final HazelcastClusterOptions options;
    private final IExecutorService executor;
    private final IMap<String, String> statuses;
    private final HazelcastPayloadStore payloads;
    private final String localId;
    private final Map<String, ClusterMember> known = new ConcurrentHashMap<>();
    private final AtomicReference<@Nullable SliceServer> server = new AtomicReference<>();
    private final List<Consumer<MembershipEvent>> listeners = new CopyOnWriteArrayList<>();
    private final UUID statusListener;
    private final UUID membershipListener;
    private final ScheduledExecutorService publisher;
    private volatile boolean closed;

    /**
     * An engine with the default options.
     *
     * @param hz the member, running
     */
    public HazelcastClusterEngine(HazelcastInstance hz) {
        this(hz, HazelcastClusterOptions.defaults());
    }

    /**
     * An engine; reads the statuses the other members published (a blocking call, here only).
     *
     * @param hz the member, running
     * @param options the names of the structures and the status interval
     */
    public HazelcastClusterEngine(HazelcastInstance hz, HazelcastClusterOptions options) {
        this.hz = Objects.requireNonNull(hz, "hz");
        this.options = Objects.requireNonNull(options, "options");
        this.localId = hz.getCluster().getLocalMember().getUuid().toString();
        this.executor = hz.getExecutorService(options.executorName());
        this.statuses = hz.getMap(options.membersMap());
        this.payloads = new HazelcastPayloadStore(hz.getMap(options.payloadMap()), options.payloadTimeToLive());
        this.statusListener = statuses.addEntryListener(new MemberStatuses(this), true);
        this.membershipListener = hz.getCluster().addMembershipListener(new Membership());
        statuses.forEach(this::statusChanged);
        this.publisher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "hts-cluster-status");
            t.setDaemon(true);
            return t;
        });
    }

    @Override
    public String name() {
        return "hazelcast " + BuildInfoProvider.getBuildInfo().getVersion() + ", cluster '"
                + hz.getConfig().getClusterName() + "'";
    }

    @Override
    public ClusterMember localMember() {
        ClusterMember m = known.get(localId);
        return m != null ? m : MemberStatus.unpublished(hz.getCluster().getLocalMember());
    }

    @Override
    public List<ClusterMember> members() {
        List<ClusterMember> out = new ArrayList<>();
        for (Member m : hz.getCluster().getMembers()) {
            ClusterMember status = known.get(m.getUuid().toString());
            if (status != null) {
                out.add(status);
            }
        }
        return out;
    }

    @Override
    public SubmittedSlice submit(ClusterMember member, SliceWork work) {
        Member target = null;
        for (Member m : hz.getCluster().getMembers()) {
            if (m.getUuid().toString().equals(member.id())) {
                target = m;
            }
        }
        CompletableFuture<SliceResult> result = new CompletableFuture<>();
        Future<SliceReply> sent = null;
        if (target == null) {
            result.completeExceptionally(new MemberLostException(
                    member + " is not in cluster '" + hz.getConfig().getClusterName() + "' any more; " + work
                            + " goes elsewhere",
                    null));
        } else {
            try {
                sent = executor.submitToMember(new SliceCall(work), target);
                ((CompletionStage<SliceReply>) sent)
                        .whenComplete((reply, ex) -> answered(member, work, reply, ex, result));
            } catch (RejectedExecutionException | HazelcastInstanceNotActiveException ex) {
                result.completeExceptionally(ex);
            }
        }
        return new Submitted(member, result, sent);
    }

    private static void answered(
            ClusterMember member,
            SliceWork work,
            @Nullable SliceReply reply,
            @Nullable Throwable error,
            CompletableFuture<SliceResult> result) {
        if (error != null) {
            result.completeExceptionally(lostOr(member, work, error));
            return;
        }
        try {
            result.complete(Objects.requireNonNull(reply, "reply").resultOrThrow());
        } catch (RuntimeException ex) {
            result.completeExceptionally(ex);
        }
    }

    /** A member that left, or could not be reached, before it answered: MemberLostException; anything else as it is. */
    static Throwable lostOr(ClusterMember member, SliceWork work, Throwable error) {
        Throwable t = error;
        while ((t instanceof CompletionException || t instanceof ExecutionException)
                && !(t instanceof MemberLeftException)
                && t.getCause() != null) {
            t = t.getCause();
        }
        if (t instanceof MemberLeftException
                || t instanceof TargetNotMemberException
                || t instanceof TargetDisconnectedException
                || t instanceof HazelcastInstanceNotActiveException) {
            return new MemberLostException(member + " left before it answered " + work + " (" + t + ")", t);
        }
        return t;
    }

    @Override
    public Subscription onMembershipChange(Consumer<MembershipEvent> listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
        return () -> listeners.remove(listener);
    }

    @Override
    public void serve(SliceServer server) {
        Objects.requireNonNull(server, "server");
        if (!this.server.compareAndSet(null, server)) {
            throw new IllegalStateException("HTS's engine on " + localMember()
                    + " serves a scheduler already; build one scheduler per HazelcastClusterEngine");
        }
        hz.getUserContext().put(USER_CONTEXT_KEY, this);
        publish();
        long every = options.statusInterval().toMillis();
        publisher.scheduleWithFixedDelay(this::publish, every, every, TimeUnit.MILLISECONDS);
    }

    boolean serving() {
        return server.get() != null && !closed;
    }

    SliceServer server() {
        SliceServer s = server.get();
        if (s == null) {
            throw new IllegalStateException("no scheduler serves slices on " + localMember());
        }
        return s;
    }

    /** Publishes this member's status: capacity, health, load (also on this member at once). */
    private void publish() {
        SliceServer s = server.get();
        if (s == null || closed) {
            return;
        }
        try {
            String status = MemberStatus.encode(s.capacity(), s.health(), s.load(), s.loadByCoordinator());
            statusChanged(localId, status);
            statuses.setAsync(localId, status);
        } catch (RuntimeException ex) {
            // the member is shutting down: its statuses go with it
        }
    }

    /** Publishes this member's status now, on the publishing thread (after any publication under way there). */
    @Override
    public void serverChanged() {
        try {
            publisher.execute(this::publish);
        } catch (RejectedExecutionException ex) {
            // closed: the status is removed
        }
    }

    @Override
    public PayloadStore payloads() {
        return payloads;
    }

    /** The options this engine was made with. */
    public HazelcastClusterOptions options() {
        return options;
    }

    /**
     * Stops serving and publishing (the member is no longer listed), and unsubscribes; does not shut
     * down the Hazelcast member. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        publisher.shutdownNow();
        if (hz.getLifecycleService().isRunning()) {
            try {
                hz.getUserContext().remove(USER_CONTEXT_KEY, this);
                statuses.removeEntryListener(statusListener);
                hz.getCluster().removeMembershipListener(membershipListener);
                statuses.delete(localId);
            } catch (HazelcastInstanceNotActiveException ex) {
                // shut down meanwhile
            }
        }
    }

    /** A status was published or removed ({@code status} null). */
    void statusChanged(String id, @Nullable String status) {
        if (!hz.getLifecycleService().isRunning()) {
            return; // this member is shutting down: its view of the others goes with it
        }
        Member member = null;
        for (Member m : hz.getCluster().getMembers()) {
            if (m.getUuid().toString().equals(id)) {
                member = m;
            }
        }
        if (status == null || member == null) {
            ClusterMember gone = known.remove(id);
            if (gone != null) {
                announce(new MembershipEvent(MembershipEvent.Kind.LEFT, gone));
            }
            return;
        }
        ClusterMember now = MemberStatus.decode(member, status);
        if (known.put(id, now) == null) {
            announce(new MembershipEvent(MembershipEvent.Kind.JOINED, now));
        }
    }

    private void announce(MembershipEvent event) {
        for (Consumer<MembershipEvent> l : listeners) {
            try {
                l.accept(event);
            } catch (RuntimeException ex) {
                // a listener's failure is its own; the others still hear of the event
            }
        }
    }

    /** A member's address as people read it: {@code 127.0.0.1:5701}. */
    static String describe(Member m) {
        return "member " + m.getAddress().getHost() + ":" + m.getAddress().getPort() + " (" + m.getUuid() + ")";
    }

    @Override
    public String toString() {
        return "HazelcastClusterEngine[" + name() + ", " + known.size() + " members serving]";
    }

    /** Members leaving: their statuses go (each member deletes; the deletes are idempotent). */
    private final class Membership implements MembershipListener {

        @Override
        public void memberAdded(com.hazelcast.cluster.MembershipEvent event) {
            // listed once it publishes a status
        }

        @Override
        public void memberRemoved(com.hazelcast.cluster.MembershipEvent event) {
            String id = event.getMember().getUuid().toString();
            ClusterMember gone = known.remove(id);
            if (gone != null) {
                announce(new MembershipEvent(MembershipEvent.Kind.LEFT, gone));
            }
            try {
                statuses.removeAsync(id);
            } catch (RuntimeException ex) {
                // this member is shutting down too
            }
        }
    }

    /** A slice sent through the executor; cancelling it interrupts it on its member. */
    private record Submitted(
            ClusterMember member,
            CompletableFuture<SliceResult> answer,
            @Nullable Future<?> sent) implements SubmittedSlice {

        @Override
        public CompletionStage<SliceResult> result() {
            return answer;
        }

        @Override
        public void cancel() {
            if (sent != null) {
                sent.cancel(true);
            }
            answer.cancel(false);
        }
    }
}
