package io.hts.engine.cluster;

import io.hts.engine.policy.DeviceHealth;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * A cluster in one JVM without a network, for the engine's tests: every member is a
 * {@link ClusterEngine} whose slices are handed to the target member's {@link SliceServer} on a
 * shared thread (the payloads still go through the codec and the store). A member can be told to
 * hold the slices it gets ({@link Member#hold}) and then be lost ({@link Member#lose}): what it held
 * fails with {@link MemberLostException}, as a real engine reports a member that left.
 */
public final class LoopbackCluster implements AutoCloseable {

    private final List<Member> members = new CopyOnWriteArrayList<>();
    private final Map<String, byte[]> store = new ConcurrentHashMap<>();
    private final ExecutorService delivery = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "loopback-delivery");
        t.setDaemon(true);
        return t;
    });
    private final PayloadStore payloads = new PayloadStore() {
        @Override
        public CompletionStage<Void> put(String key, byte[] bytes) {
            store.put(key, bytes);
            return CompletableFuture.runAsync(() -> {}, delivery);
        }

        @Override
        public CompletionStage<byte[]> get(String key) {
            byte[] b = store.get(key);
            return b == null
                    ? CompletableFuture.failedFuture(new NoSuchElementException("payload '" + key + "' is gone"))
                    : CompletableFuture.supplyAsync(() -> b, delivery);
        }

        @Override
        public void delete(String key) {
            store.remove(key);
        }
    };

    /** A new member (not serving until a scheduler is built with it). */
    public Member member(String id) {
        Member m = new Member(id);
        members.add(m);
        return m;
    }

    /** The payloads stored now. */
    public Map<String, byte[]> stored() {
        return Map.copyOf(store);
    }

    @Override
    public void close() {
        delivery.shutdownNow();
    }

    /** One member's engine. */
    public final class Member implements ClusterEngine {

        private final String id;
        private volatile SliceServer server;
        private volatile boolean lost;
        private volatile Predicate<SliceWork> hold = w -> false;
        private final List<Held> held = new CopyOnWriteArrayList<>();
        private final List<Consumer<MembershipEvent>> listeners = new CopyOnWriteArrayList<>();
        private final AtomicInteger served = new AtomicInteger();
        private final List<SliceWork> received = new CopyOnWriteArrayList<>();

        Member(String id) {
            this.id = id;
        }

        /** The slices this member was sent, held ones included. */
        public List<SliceWork> received() {
            return List.copyOf(received);
        }

        /** The slices it ran to the end. */
        public int served() {
            return served.get();
        }

        /** From now on, the slices {@code which} accepts wait here (for {@link #lose}, or {@link #release}). */
        public void hold(Predicate<SliceWork> which) {
            this.hold = which;
        }

        /** The slices it holds now. */
        public int holding() {
            return held.size();
        }

        /** Runs the held slices, and takes slices as they come again. */
        public void release() {
            hold = w -> false;
            for (Held h : held) {
                held.remove(h);
                run(h.work, h.answer);
            }
        }

        /** The member leaves: what it holds fails with MemberLostException, it gets nothing more. */
        public void lose() {
            lost = true;
            for (Held h : held) {
                held.remove(h);
                h.answer.completeExceptionally(new MemberLostException(this + " left", null));
            }
            for (Member m : members) {
                for (Consumer<MembershipEvent> l : m.listeners) {
                    l.accept(new MembershipEvent(MembershipEvent.Kind.LEFT, describe(false)));
                }
            }
        }

        @Override
        public String name() {
            return "loopback " + id;
        }

        @Override
        public ClusterMember localMember() {
            return describe(true);
        }

        private ClusterMember describe(boolean local) {
            SliceServer s = server;
            SliceServer.Capacity c = s == null ? new SliceServer.Capacity(1, 0, 0) : s.capacity();
            return new ClusterMember(
                    id,
                    "loopback/" + id,
                    local,
                    c.cpuSlots(),
                    c.gpus(),
                    c.freeDeviceMemory(),
                    s == null ? DeviceHealth.UP : s.health(),
                    s == null ? 0 : s.load(),
                    s == null ? Map.of() : s.loadByCoordinator());
        }

        @Override
        public List<ClusterMember> members() {
            List<ClusterMember> out = new ArrayList<>();
            for (Member m : members) {
                if (m.server != null && !m.lost) {
                    out.add(m.describe(m == this));
                }
            }
            return out;
        }

        @Override
        public SubmittedSlice submit(ClusterMember member, SliceWork work) {
            Member target = null;
            for (Member m : members) {
                if (m.id.equals(member.id())) {
                    target = m;
                }
            }
            CompletableFuture<SliceResult> answer = new CompletableFuture<>();
            if (target == null || target.lost || target.server == null) {
                answer.completeExceptionally(new MemberLostException(member + " is not a member", null));
            } else {
                target.received.add(work);
                if (target.hold.test(work)) {
                    target.held.add(new Held(work, answer));
                } else {
                    Member t = target;
                    delivery.execute(() -> t.run(work, answer));
                }
            }
            return new SubmittedSlice() {
                @Override
                public ClusterMember member() {
                    return member;
                }

                @Override
                public CompletionStage<SliceResult> result() {
                    return answer;
                }

                @Override
                public void cancel() {
                    answer.cancel(true);
                }
            };
        }

        private void run(SliceWork work, CompletableFuture<SliceResult> answer) {
            CompletableFuture<SliceResult> running = server.run(work).toCompletableFuture();
            answer.whenComplete((r, ex) -> {
                if (answer.isCancelled()) {
                    running.cancel(true);
                }
            });
            running.whenComplete((r, ex) -> {
                if (ex == null) {
                    served.incrementAndGet();
                    answer.complete(r);
                } else {
                    answer.completeExceptionally(ex);
                }
            });
        }

        @Override
        public Subscription onMembershipChange(Consumer<MembershipEvent> listener) {
            listeners.add(listener);
            return () -> listeners.remove(listener);
        }

        @Override
        public void serve(SliceServer server) {
            if (this.server != null) {
                throw new IllegalStateException(this + " serves already");
            }
            this.server = server;
        }

        @Override
        public PayloadStore payloads() {
            return payloads;
        }

        @Override
        public String toString() {
            return "member loopback/" + id;
        }
    }

    private record Held(SliceWork work, CompletableFuture<SliceResult> answer) {}
}
