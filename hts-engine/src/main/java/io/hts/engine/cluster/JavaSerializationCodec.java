package io.hts.engine.cluster;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InvalidClassException;
import java.io.NotSerializableException;
import java.io.ObjectInputFilter;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.ObjectStreamClass;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The default {@link PayloadCodec}: Java serialization, decoding only the classes an allow-list
 * names (an {@link ObjectInputFilter}; every other class is refused before it is instantiated).
 *
 * <p>The default list allows the JDK's value types: {@code java.lang.*} (boxed primitives,
 * {@code String}), {@code java.util.*} (collections), {@code java.time.*}, {@code java.math.*},
 * arrays of primitives and of allowed classes. A graph exchanging its own types allows them with
 * {@link #allowing}: {@code JavaSerializationCodec.allowing("com.example.sweep.*")} (a package),
 * {@code "com.example.**"} (and its sub-packages) or a class name. Graphs of depth beyond
 * {@value #MAX_DEPTH} and streams of more than {@value #MAX_REFERENCES} objects are refused too.
 * Classes are resolved through the thread's context class loader first (Spring Boot's nested jars).
 *
 * <p>See {@link PayloadCodec} for the trust model: allow value types only, never classes whose
 * deserialization runs code.
 */
public final class JavaSerializationCodec implements PayloadCodec {

    /** The JDK's value types, allowed by every instance. */
    public static final List<String> DEFAULT_ALLOWED =
            List.of("java.lang.*", "java.util.*", "java.time.*", "java.math.*");

    static final int MAX_DEPTH = 64;
    static final int MAX_REFERENCES = 10_000_000;

    private final List<String> allowed;
    private final ObjectInputFilter filter;

    private JavaSerializationCodec(List<String> allowed) {
        this.allowed = List.copyOf(allowed);
        StringBuilder pattern = new StringBuilder("maxdepth=" + MAX_DEPTH + ";maxrefs=" + MAX_REFERENCES);
        for (String p : this.allowed) {
            pattern.append(';').append(p);
        }
        this.filter =
                ObjectInputFilter.Config.createFilter(pattern.append(";!*").toString());
    }

    /** A codec allowing {@link #DEFAULT_ALLOWED} only. */
    public static JavaSerializationCodec defaults() {
        return new JavaSerializationCodec(DEFAULT_ALLOWED);
    }

    /**
     * A codec allowing the JDK's value types and more.
     *
     * @param patterns packages ({@code com.example.*}), package trees ({@code com.example.**}) or
     *     class names, as {@link ObjectInputFilter.Config#createFilter} reads them
     * @return the codec
     * @throws IllegalArgumentException naming a pattern that is blank, holds a {@code ;}, or starts
     *     with {@code !} (only allowing is possible) or a limit ({@code maxdepth=})
     */
    public static JavaSerializationCodec allowing(String... patterns) {
        List<String> all = new ArrayList<>(DEFAULT_ALLOWED);
        for (String p : patterns) {
            Objects.requireNonNull(p, "pattern");
            if (p.isBlank() || p.contains(";") || p.startsWith("!") || p.contains("=")) {
                throw new IllegalArgumentException("codec allow-list pattern '" + p + "' is not accepted: give a"
                        + " package (com.example.*), a package tree (com.example.**) or a class name, one per"
                        + " pattern");
            }
            all.add(p.strip());
        }
        return new JavaSerializationCodec(all);
    }

    /** The allowed patterns, the defaults first. */
    public List<String> allowed() {
        return allowed;
    }

    @Override
    public byte[] encode(@Nullable Object value) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(value);
        } catch (NotSerializableException ex) {
            throw new IllegalArgumentException(
                    "a value of " + ex.getMessage() + " cannot be sent to another member: it is not Serializable;"
                            + " make it Serializable (a record implementing java.io.Serializable), or configure"
                            + " another PayloadCodec",
                    ex);
        } catch (IOException ex) {
            throw new IllegalArgumentException("a value of " + className(value) + " cannot be encoded: " + ex, ex);
        }
        return bytes.toByteArray();
    }

    @Override
    public @Nullable Object decode(byte[] bytes) {
        String[] refused = {null};
        try (ObjectInputStream in = new ContextObjectInputStream(new ByteArrayInputStream(bytes))) {
            in.setObjectInputFilter(info -> {
                ObjectInputFilter.Status status = filter.checkInput(info);
                if (status == ObjectInputFilter.Status.REJECTED && refused[0] == null) {
                    Class<?> c = info.serialClass();
                    refused[0] = c != null ? "class " + c.getName() : "a stream beyond the codec's limits";
                }
                return status;
            });
            return in.readObject();
        } catch (InvalidClassException ex) {
            throw new IllegalArgumentException(
                    "a payload was refused: " + (refused[0] != null ? refused[0] : ex.getMessage())
                            + " is not allowed; the codec allows " + allowed
                            + " (add the graph's value types with JavaSerializationCodec.allowing(...),"
                            + " hts.cluster.allowed-classes in Spring)",
                    ex);
        } catch (IOException | ClassNotFoundException ex) {
            throw new IllegalArgumentException("a payload could not be decoded: " + ex, ex);
        }
    }

    private static String className(@Nullable Object value) {
        return value == null ? "null" : value.getClass().getName();
    }

    @Override
    public String toString() {
        return "JavaSerializationCodec" + allowed;
    }

    /** Resolves classes through the thread's context class loader first. */
    private static final class ContextObjectInputStream extends ObjectInputStream {

        ContextObjectInputStream(ByteArrayInputStream in) throws IOException {
            super(in);
        }

        @Override
        protected Class<?> resolveClass(ObjectStreamClass desc) throws IOException, ClassNotFoundException {
            ClassLoader loader = Thread.currentThread().getContextClassLoader();
            if (loader != null) {
                try {
                    return Class.forName(desc.getName(), false, loader);
                } catch (ClassNotFoundException ex) {
                    // a JDK class or one of the engine's: the default resolution finds it
                }
            }
            return super.resolveClass(desc);
        }
    }
}
