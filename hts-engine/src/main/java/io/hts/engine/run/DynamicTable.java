package io.hts.engine.run;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;

/**
 * An append-only table without a lock: the tasks added to one run while it runs, by position
 * ({@link DynamicTasks}).
 *
 * <p><b>Layout.</b> Chunks of 64, 128, 256, ... entries (chunk {@code k} holds {@code 64 << k}),
 * listed in a directory of {@value #CHUNKS} chunk references; position {@code p} lies in chunk
 * {@code floor(log2(p + 64)) - 6}. A chunk is never moved or copied, so an entry once written stays
 * where it is; at most twice the entries in use are allocated.
 *
 * <p><b>Invariants.</b> (1) A position is taken once: {@link #take()} is one
 * {@code getAndIncrement}; a position at or past {@link #CAPACITY} is refused (the counter may go on
 * past it; nothing is stored there). (2) A chunk is published once, by compare-and-set from null in
 * the directory: every thread that needs it uses the winner's array. (3) An entry is written once, by
 * the thread that took its position ({@link #set}), and never changes afterwards.
 *
 * <p><b>Memory ordering.</b> The directory's compare-and-set and reads are volatile; an entry is
 * written and read with volatile semantics, so what its writer did before {@link #set} (the entry's
 * construction) is visible to a reader that finds it, and a write of an entry followed by a volatile
 * read of another variable forms a Dekker pair with a writer of that variable that then reads the
 * entry (the stop of a run against an adder: see {@link DynamicTasks}). A reader may find a taken
 * position still empty ({@code null}): its writer has not got there yet; such a reader must not wait
 * for it, and the protocols that read the table say who then takes care of that entry.
 *
 * @param <E> what the table holds
 */
final class DynamicTable<E> {

    private static final VarHandle ENTRY = MethodHandles.arrayElementVarHandle(Object[].class);

    private static final int FIRST_BITS = 6;
    private static final int FIRST = 1 << FIRST_BITS;
    /** Directory entries: enough for every position below {@link #CAPACITY}. */
    static final int CHUNKS = 31 - FIRST_BITS;
    /** The most positions a table gives out. */
    static final int CAPACITY = 1 << 30;

    private final AtomicReferenceArray<Object @Nullable []> directory = new AtomicReferenceArray<>(CHUNKS);
    private final AtomicInteger taken = new AtomicInteger();

    /**
     * Takes the next position; its taker then {@link #set}s it.
     *
     * @return the position, or -1 when the table is full
     */
    int take() {
        int p = taken.getAndIncrement();
        return p >= 0 && p < CAPACITY ? p : -1;
    }

    /** Writes the entry at a position the caller took; once. */
    void set(int position, E entry) {
        int j = position + FIRST;
        int k = chunkOf(j);
        Object[] chunk = directory.get(k);
        if (chunk == null) {
            Object[] made = new Object[FIRST << k];
            chunk = directory.compareAndExchange(k, null, made);
            if (chunk == null) {
                chunk = made;
            }
        }
        ENTRY.setVolatile(chunk, j - (FIRST << k), entry);
    }

    /**
     * The entry at a position, or null when its taker has not written it yet (or the position was not taken).
     *
     * @param position from 0 to {@link #size()} - 1
     */
    @SuppressWarnings("unchecked")
    @Nullable
    E get(int position) {
        int j = position + FIRST;
        Object[] chunk = directory.get(chunkOf(j));
        return chunk == null ? null : (E) ENTRY.getVolatile(chunk, j - (FIRST << chunkOf(j)));
    }

    /** How many positions were taken (some may not be written yet). */
    int size() {
        return Math.min(Math.max(taken.get(), 0), CAPACITY);
    }

    private static int chunkOf(int j) {
        return 31 - Integer.numberOfLeadingZeros(j) - FIRST_BITS;
    }
}
