package io.hts.engine.exec.internal;

import java.util.Arrays;

/**
 * Amounts of named resources one task needs while it runs, resolved against a
 * {@link ResourceLimiter} (names become indices once, so acquiring is array work).
 */
public final class ResourceDemand {

    private final ResourceLimiter limiter;
    final int[] indices;
    final long[] amounts;

    ResourceDemand(ResourceLimiter limiter, int[] indices, long[] amounts) {
        this.limiter = limiter;
        this.indices = indices;
        this.amounts = amounts;
    }

    /** The limiter this demand was resolved against. */
    public ResourceLimiter limiter() {
        return limiter;
    }

    /**
     * The amount of one resource this demand asks for.
     *
     * @param name the resource
     * @return the amount, 0 when not asked for
     */
    public long amount(String name) {
        int index = limiter.indexOf(name);
        for (int i = 0; i < indices.length; i++) {
            if (indices[i] == index) {
                return amounts[i];
            }
        }
        return 0;
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("{");
        for (int i = 0; i < indices.length; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(limiter.nameOf(indices[i])).append('=').append(amounts[i]);
        }
        return sb.append('}').toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ResourceDemand d
                && d.limiter == limiter
                && Arrays.equals(d.indices, indices)
                && Arrays.equals(d.amounts, amounts);
    }

    @Override
    public int hashCode() {
        return 31 * Arrays.hashCode(indices) + Arrays.hashCode(amounts);
    }
}
