package io.hts.gpu.kernel;

import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.DeviceInfo;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The kernels loaded on one device: HTS's built-in ones (PTX shipped in this jar, generated from
 * {@code hts-gpu/src/main/cuda/hts_kernels.cu}), users' PTX and users' CUDA C compiled by NVRTC.
 *
 * <p>A text is loaded once and shared; at most {@code maxModules} user modules stay cached, the
 * least recently used evicted first (the built-in module is never evicted). A {@link Kernel} kept
 * from an evicted module that has since been unloaded fails at launch ({@link Kernel#function()})
 * instead of handing the driver a dangling handle.
 *
 * <p>Bodies look kernels up each time they launch one; a hit is cheap. Every call that loads or
 * unloads makes the device's context current on the calling thread first.
 */
public final class KernelCache implements AutoCloseable {

    /*
     * Invariants.
     *
     * - A user module is keyed by its full text (the PTX, or the CUDA C source of a compiled
     *   one), never by a hash of it: two different texts never share a module. A text has at most
     *   one module in the cache, and a module one Kernel per kernel name.
     * - At most maxModules user modules are in the cache; loading one more evicts the least
     *   recently used. The built-in module is not counted and never evicted.
     * - An evicted module leaves the cache at once but stays loaded, in the evicted list, until
     *   unloadEvicted() or close() unloads it: work launched from it may still be running on the
     *   device. A module is marked unloaded before cuModuleUnload, so that a Kernel of it kept by
     *   a caller fails at launch (Kernel.function()) instead of handing the driver a dangling
     *   handle.
     * - Hits read concurrent maps and write an access stamp (no lock, no allocation); loading,
     *   compiling, evicting and unloading hold the cache's lock, so concurrent lookups of one text
     *   load it once.
     */

    /** The resource holding the built-in kernels' PTX. */
    public static final String BUILTIN_PTX = "/io/hts/gpu/kernel/hts_kernels.ptx";

    /** How many user modules a cache keeps loaded unless told otherwise. */
    public static final int DEFAULT_MAX_MODULES = 64;

    /** Compiles CUDA C to PTX (NVRTC; tests pass their own). */
    @FunctionalInterface
    interface SourceCompiler {

        String compile(String source, String architecture);
    }

    /** Where a module's text came from. */
    enum Origin {
        BUILTIN("built-in module"),
        PTX("PTX module"),
        SOURCE("CUDA C module");

        final String description;

        Origin(String description) {
            this.description = description;
        }
    }

    /** A loaded module and its kernels. */
    static final class LoadedModule {

        final Origin origin;
        /** The text it is keyed by (the PTX or the CUDA C source; the resource name for the built-in one). */
        final String text;

        final CudaApi.Module module;
        final Map<String, Kernel> kernels = new ConcurrentHashMap<>();
        volatile long lastUse;
        /** Set, under the cache's lock, before the module is unloaded; never cleared. */
        volatile boolean unloaded;

        LoadedModule(Origin origin, String text, CudaApi.Module module) {
            this.origin = origin;
            this.text = text;
            this.module = module;
        }
    }

    private final CudaApi api;
    private final int device;
    private final String architecture;
    private final int maxModules;
    private final Map<String, LoadedModule> ptxModules = new ConcurrentHashMap<>();
    private final Map<String, LoadedModule> sourceModules = new ConcurrentHashMap<>();
    private final AtomicLong clock = new AtomicLong();
    /** Evicted modules not unloaded yet; guarded by this. */
    private final List<LoadedModule> evicted = new ArrayList<>();

    private volatile int evictedCount;
    private volatile @Nullable LoadedModule builtin;
    /** Guarded by this. */
    private boolean closed;
    /** Guarded by this; loaded on first use when none was given. */
    private @Nullable SourceCompiler compiler;

    /**
     * Creates an empty cache keeping at most {@link #DEFAULT_MAX_MODULES} user modules.
     *
     * @param api the CUDA API
     * @param info the device
     */
    public KernelCache(CudaApi api, DeviceInfo info) {
        this(api, info, DEFAULT_MAX_MODULES);
    }

    /**
     * Creates an empty cache.
     *
     * @param api the CUDA API
     * @param info the device
     * @param maxModules how many user modules (PTX texts and CUDA C sources) stay loaded, at least 1
     */
    public KernelCache(CudaApi api, DeviceInfo info, int maxModules) {
        this(api, info, maxModules, null);
    }

    KernelCache(CudaApi api, DeviceInfo info, int maxModules, @Nullable SourceCompiler compiler) {
        if (maxModules < 1) {
            throw new IllegalArgumentException("maxModules must be at least 1, was " + maxModules);
        }
        this.api = api;
        this.device = info.ordinal();
        this.architecture = "--gpu-architecture=compute_" + info.computeMajor() + info.computeMinor();
        this.maxModules = maxModules;
        this.compiler = compiler;
    }

    /** The PTX of HTS's built-in kernels. */
    public static String builtinPtx() {
        try (InputStream in = KernelCache.class.getResourceAsStream(BUILTIN_PTX)) {
            if (in == null) {
                throw new IllegalStateException(
                        "the built-in kernels' PTX " + BUILTIN_PTX + " is missing from the jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    /**
     * A built-in kernel ({@code hts_axpy_f32}, {@code hts_scale_f32}, {@code hts_fill_f32},
     * {@code hts_sum_f32}).
     *
     * @param name its name
     * @return the kernel
     */
    public Kernel builtin(String name) {
        LoadedModule m = builtin;
        Kernel k = m != null ? m.kernels.get(name) : null;
        return k != null ? k : load(Origin.BUILTIN, BUILTIN_PTX, name);
    }

    /**
     * A kernel from PTX text, loaded once per distinct text while the text stays in the cache.
     *
     * @param ptx the module's PTX
     * @param name the kernel's name
     * @return the kernel
     */
    public Kernel fromPtx(String ptx, String name) {
        return lookup(ptxModules, Origin.PTX, ptx, name);
    }

    /**
     * A kernel from CUDA C source, compiled by NVRTC for this device once per distinct source while
     * the source stays in the cache.
     *
     * @param source CUDA C source declaring the kernel {@code extern "C" __global__}
     * @param name the kernel's name
     * @return the kernel
     * @throws IllegalStateException when NVRTC is unavailable, naming what is missing and how to fix it
     * @throws KernelCompilationException when the source does not compile (with NVRTC's log)
     */
    public Kernel fromSource(String source, String name) {
        return lookup(sourceModules, Origin.SOURCE, source, name);
    }

    private Kernel lookup(Map<String, LoadedModule> modules, Origin origin, String text, String name) {
        LoadedModule m = modules.get(text);
        if (m != null) {
            Kernel k = m.kernels.get(name);
            if (k != null) {
                m.lastUse = clock.incrementAndGet();
                return k;
            }
        }
        return load(origin, text, name);
    }

    private synchronized Kernel load(Origin origin, String text, String name) {
        if (closed) {
            throw new IllegalStateException("the kernel cache of cuda:" + device + " is closed");
        }
        api.makeCurrent(device);
        LoadedModule m = origin == Origin.BUILTIN ? builtin : modules(origin).get(text);
        if (m == null) {
            String ptx = switch (origin) {
                case BUILTIN -> builtinPtx();
                case PTX -> text;
                case SOURCE -> compiler().compile(text, architecture);
            };
            m = new LoadedModule(origin, text, api.loadModule(ptx));
            if (origin == Origin.BUILTIN) {
                builtin = m;
            } else {
                modules(origin).put(text, m);
                evictBeyondBound(m);
            }
        }
        m.lastUse = clock.incrementAndGet();
        Kernel k = m.kernels.get(name);
        if (k == null) {
            k = new Kernel(name, device, api.function(m.module, name), m);
            m.kernels.put(name, k);
        }
        return k;
    }

    private Map<String, LoadedModule> modules(Origin origin) {
        return origin == Origin.SOURCE ? sourceModules : ptxModules;
    }

    /** Moves the least recently used user modules but {@code loaded} to the evicted list (under the lock). */
    private void evictBeyondBound(LoadedModule loaded) {
        while (ptxModules.size() + sourceModules.size() > maxModules) {
            LoadedModule lru = null;
            for (Map<String, LoadedModule> modules : List.of(ptxModules, sourceModules)) {
                for (LoadedModule m : modules.values()) {
                    if (m != loaded && (lru == null || m.lastUse < lru.lastUse)) {
                        lru = m;
                    }
                }
            }
            if (lru == null) {
                return;
            }
            modules(lru.origin).remove(lru.text);
            evicted.add(lru);
            evictedCount = evicted.size();
        }
    }

    private SourceCompiler compiler() {
        SourceCompiler c = compiler;
        if (c == null) {
            NvrtcCompiler nvrtc = NvrtcCompiler.load();
            c = (source, architecture) -> nvrtc.compile(source, "hts_user_kernel.cu", architecture);
            compiler = c;
        }
        return c;
    }

    /** Evicted modules waiting for {@link #unloadEvicted()}. */
    public int evictedModules() {
        return evictedCount;
    }

    /**
     * Unloads the modules evicted so far. Call it only when no work of the device is in flight (no
     * kernel of an evicted module can still run): the backend's launcher thread does, when idle.
     * Cheap when nothing was evicted (one volatile read).
     *
     * @return how many modules were unloaded
     * @throws io.hts.gpu.cuda.CudaException when the driver refuses an unload (after trying all)
     */
    public int unloadEvicted() {
        if (evictedCount == 0) {
            return 0;
        }
        synchronized (this) {
            List<LoadedModule> batch = List.copyOf(evicted);
            evicted.clear();
            evictedCount = 0;
            unload(batch);
            return batch.size();
        }
    }

    /**
     * Unloads every module, evicted or not, the built-in one included; later lookups throw. Call it
     * once no work of the device is in flight (the backend, closing, after its launcher stopped).
     * Idempotent.
     *
     * @throws io.hts.gpu.cuda.CudaException when the driver refuses an unload (after trying all)
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        List<LoadedModule> all = new ArrayList<>(evicted);
        all.addAll(ptxModules.values());
        all.addAll(sourceModules.values());
        LoadedModule b = builtin;
        if (b != null) {
            all.add(b);
        }
        evicted.clear();
        evictedCount = 0;
        ptxModules.clear();
        sourceModules.clear();
        builtin = null;
        unload(all);
    }

    /**
     * Marks each module unloaded, then unloads it; one refused unload does not stop the others
     * (under the lock).
     */
    private void unload(List<LoadedModule> modules) {
        if (modules.isEmpty()) {
            return;
        }
        for (LoadedModule m : modules) {
            m.unloaded = true;
        }
        api.makeCurrent(device);
        RuntimeException failure = null;
        for (LoadedModule m : modules) {
            try {
                api.unloadModule(m.module);
            } catch (RuntimeException ex) {
                if (failure == null) {
                    failure = ex;
                } else {
                    failure.addSuppressed(ex);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
