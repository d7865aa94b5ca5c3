package io.hts.engine.exec.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import org.jspecify.annotations.Nullable;

/**
 * A Chase-Lev work-stealing deque: one owner thread pushes and pops at the bottom, any number of
 * thief threads steal from the top.
 *
 * <h2>Implementation overview</h2>
 *
 * <p>The deque is a circular array indexed by two ever-increasing counters: {@code top} (the next
 * index a thief takes) and {@code bottom} (the next index the owner writes). The live elements are
 * {@code [top, bottom)}. This follows Chase and Lev, "Dynamic Circular Work-Stealing Deque" (SPAA
 * 2005), with the memory orderings of Lê, Pop, Cohen and Zappa Nardelli, "Correct and Efficient
 * Work-Stealing for Weak Memory Models" (PPoPP 2013), expressed with {@link VarHandle}s:
 *
 * <ul>
 *   <li><b>push</b> (owner): write the element with a plain store, then publish it with a
 *       <em>release</em> store of {@code bottom}. A thief that reads the new {@code bottom} with
 *       acquire (or stronger) semantics therefore sees the element. No CAS, no fence.
 *   <li><b>pop</b> (owner): when {@code top} (read with acquire) has reached {@code bottom}, the
 *       deque is empty and pop returns at once: no fence, no write (top only grows, and only the
 *       owner adds). Otherwise decrement {@code bottom} with a <em>volatile</em> store, then read
 *       {@code top} with a volatile load. The store-load order is the one place where the owner
 *       needs a full fence: it guarantees that a thief which read the old {@code top} will see the
 *       decremented {@code bottom} (and back off), or the owner sees the thief's increment of
 *       {@code top}. When more than one element remains the owner takes it without any atomic
 *       read-modify-write. Only the last element is contended: owner and thieves then race with a
 *       CAS on {@code top}, and exactly one of them wins.
 *   <li><b>steal</b> (thief): volatile load of {@code top}, then volatile load of {@code bottom}
 *       (sequentially consistent, pairing with the owner's store-load in pop), read the element
 *       with acquire, and claim it with a CAS of {@code top} from {@code t} to {@code t + 1}. A
 *       failed CAS means another thief (or the owner's last-element pop) claimed that index; the
 *       element read is then discarded and the steal retried.
 * </ul>
 *
 * <p><b>Growth.</b> When full, the owner copies {@code [top, bottom)} into an array twice the size
 * and publishes it with a release store before publishing any index that lives only in the new
 * array. The old array is not cleared, so a thief that still reads it finds the same element at
 * the same logical index and its CAS on {@code top} decides ownership as usual.
 *
 * <p><b>Releasing references.</b> A thief cannot clear the slot it stole (the owner may already
 * have reused the slot for a new element), so stolen slots keep a stale reference. The owner
 * clears them lazily: whenever it finds the deque empty, every index below {@code top} has been
 * claimed and its thief has already read the element, so {@code [cleared, top)} can be nulled.
 * Work is proportional to the number of steals. This keeps finished tasks (and the runs they
 * reference) collectable.
 *
 * <p>{@code top} and {@code bottom} live on separate cache lines (class-hierarchy padding, which
 * the JVM cannot reorder), so thieves CASing {@code top} do not invalidate the line the owner
 * writes on every push. The padding is 128 bytes, as the JDK's {@code @Contended}: x86 cores
 * prefetch cache lines in adjacent pairs.
 *
 * @param <E> the element type
 */
public final class WorkStealingDeque<E> extends DequeBottom {

    private static final int INITIAL_CAPACITY = 1 << 8;
    private static final int MAX_CAPACITY = 1 << 30;

    private static final VarHandle TOP;
    private static final VarHandle BOTTOM;
    private static final VarHandle ARRAY;
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(Object[].class);

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            TOP = lookup.findVarHandle(DequeTop.class, "top", long.class);
            BOTTOM = lookup.findVarHandle(DequeBottom.class, "bottom", long.class);
            ARRAY = lookup.findVarHandle(WorkStealingDeque.class, "array", Object[].class);
        } catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    /** The circular buffer; replaced only by the owner, read by thieves with acquire. */
    private Object[] array = new Object[INITIAL_CAPACITY];

    /** Owner-only: every index below this has had its slot nulled (or lives in a dropped array). */
    private long cleared;

    /**
     * Pushes an element at the bottom. Owner thread only.
     *
     * @param element the element
     * @return {@code true} when the deque was empty before this push (the empty to non-empty
     *     transition the pool uses to decide whether to wake an idle worker)
     */
    public boolean push(E element) {
        long b = bottom;
        long t = (long) TOP.getAcquire(this);
        Object[] a = array;
        long size = b - t;
        if (size >= a.length) {
            a = grow(a, t, b);
        }
        a[(int) b & (a.length - 1)] = element;
        BOTTOM.setRelease(this, b + 1);
        return size <= 0;
    }

    /**
     * Pops the most recently pushed element. Owner thread only.
     *
     * @return the element, or {@code null} when the deque is empty
     */
    @SuppressWarnings("unchecked")
    public @Nullable E pop() {
        long t0 = (long) TOP.getAcquire(this);
        if (t0 >= bottom) {
            // Empty, seen without a fence: top only grows and only the owner adds, so a deque that
            // looks empty to its owner is empty (ForkJoinPool checks the same way first).
            clearStolen(array, t0);
            return null;
        }
        long b = bottom - 1;
        Object[] a = array;
        BOTTOM.setVolatile(this, b);
        long t = (long) TOP.getVolatile(this);
        if (t > b) {
            // Empty: restore bottom, then drop the references thieves left behind.
            BOTTOM.setRelease(this, t);
            clearStolen(a, t);
            return null;
        }
        int i = (int) b & (a.length - 1);
        E element = (E) a[i];
        if (t == b) {
            // Last element: race the thieves for it.
            boolean won = TOP.compareAndSet(this, t, t + 1);
            BOTTOM.setRelease(this, t + 1);
            if (!won) {
                return null;
            }
        }
        a[i] = null;
        return element;
    }

    /**
     * Steals the oldest element. Any thread.
     *
     * @return the element, or {@code null} when the deque was observed empty
     */
    @SuppressWarnings("unchecked")
    public @Nullable E steal() {
        while (true) {
            long t = (long) TOP.getVolatile(this);
            long b = (long) BOTTOM.getVolatile(this);
            if (t >= b) {
                return null;
            }
            Object[] a = (Object[]) ARRAY.getAcquire(this);
            Object element = SLOT.getAcquire(a, (int) t & (a.length - 1));
            if (TOP.compareAndSet(this, t, t + 1)) {
                return (E) element;
            }
            Thread.onSpinWait();
        }
    }

    /** An estimate of the number of elements; exact only when no other thread is active. */
    public int size() {
        long n = (long) BOTTOM.getOpaque(this) - (long) TOP.getOpaque(this);
        return (int) Math.max(0, Math.min(n, Integer.MAX_VALUE));
    }

    /** Whether the deque looked empty at the moment of reading. */
    public boolean isEmpty() {
        return (long) BOTTOM.getVolatile(this) - (long) TOP.getVolatile(this) <= 0;
    }

    /** The current array length; exposed for tests of growth and clearing. */
    int capacity() {
        return array.length;
    }

    /** Counts slots that still hold a reference; exposed for tests of reference clearing. */
    int retainedSlots() {
        int n = 0;
        for (Object o : array) {
            if (o != null) {
                n++;
            }
        }
        return n;
    }

    private Object[] grow(Object[] old, long t, long b) {
        int newLength = old.length << 1;
        if (newLength > MAX_CAPACITY || newLength < 0) {
            throw new IllegalStateException("work-stealing deque exceeded " + MAX_CAPACITY + " queued tasks");
        }
        Object[] grown = new Object[newLength];
        int oldMask = old.length - 1;
        int newMask = newLength - 1;
        for (long i = t; i < b; i++) {
            grown[(int) i & newMask] = old[(int) i & oldMask];
        }
        ARRAY.setRelease(this, grown);
        cleared = t;
        return grown;
    }

    private void clearStolen(Object[] a, long t) {
        long from = cleared;
        if (from >= t) {
            return;
        }
        if (t - from >= a.length) {
            java.util.Arrays.fill(a, null);
        } else {
            int mask = a.length - 1;
            for (long i = from; i < t; i++) {
                a[(int) i & mask] = null;
            }
        }
        cleared = t;
    }
}

/** Padding before {@code top}. */
abstract class DequePadBeforeTop {
    long p00, p01, p02, p03, p04, p05, p06, p07, p08, p09, p0a, p0b, p0c, p0d, p0e, p0f;
}

/** The thieves' end, on its own cache line. */
abstract class DequeTop extends DequePadBeforeTop {
    /** Accessed only through {@code WorkStealingDeque.TOP}. */
    long top;
}

/** Padding between {@code top} and {@code bottom}. */
abstract class DequePadBetween extends DequeTop {
    long p10, p11, p12, p13, p14, p15, p16, p17, p18, p19, p1a, p1b, p1c, p1d, p1e, p1f;
}

/** The owner's end, on its own cache line. */
abstract class DequeBottom extends DequePadBetween {
    /** Written only by the owner; others access it through {@code WorkStealingDeque.BOTTOM}. */
    long bottom;

    long p20, p21, p22, p23, p24, p25, p26, p27, p28, p29, p2a, p2b, p2c, p2d, p2e, p2f;
}
