package io.hts.gpu.cuda;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The arguments of a kernel launch, in the kernel's parameter order: device pointers and scalars.
 * Built fluently: {@code KernelArguments.of().pointer(x).pointer(y).f32(2f).i64(n)}.
 */
public final class KernelArguments {

    /** An argument: its kind and value (a {@code Long}, {@code Integer}, {@code Float} or {@code Double}). */
    public record Argument(Kind kind, Number value) {}

    /** Argument kinds, as the kernel declares them. */
    public enum Kind {
        /** A device pointer ({@code float*} and the like). */
        POINTER,
        /** {@code int}. */
        I32,
        /** {@code long long} / {@code size_t}. */
        I64,
        /** {@code float}. */
        F32,
        /** {@code double}. */
        F64
    }

    private final List<Argument> arguments = new ArrayList<>();

    private KernelArguments() {}

    /** An empty argument list. */
    public static KernelArguments of() {
        return new KernelArguments();
    }

    /**
     * Adds a device pointer.
     *
     * @param address the device address
     * @return this
     */
    public KernelArguments pointer(long address) {
        arguments.add(new Argument(Kind.POINTER, address));
        return this;
    }

    /**
     * Adds an {@code int}.
     *
     * @param value the value
     * @return this
     */
    public KernelArguments i32(int value) {
        arguments.add(new Argument(Kind.I32, value));
        return this;
    }

    /**
     * Adds a {@code long long}.
     *
     * @param value the value
     * @return this
     */
    public KernelArguments i64(long value) {
        arguments.add(new Argument(Kind.I64, value));
        return this;
    }

    /**
     * Adds a {@code float}.
     *
     * @param value the value
     * @return this
     */
    public KernelArguments f32(float value) {
        arguments.add(new Argument(Kind.F32, value));
        return this;
    }

    /**
     * Adds a {@code double}.
     *
     * @param value the value
     * @return this
     */
    public KernelArguments f64(double value) {
        arguments.add(new Argument(Kind.F64, value));
        return this;
    }

    /** The arguments, in order. */
    public List<Argument> arguments() {
        return Collections.unmodifiableList(arguments);
    }
}
