package io.hts.gpu.kernel;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.DeviceInfo;
import org.jspecify.annotations.Nullable;

/**
 * The kernels loaded on one device: HTS's built-in ones (PTX shipped in this jar, generated from
 * {@code hts-gpu/src/main/cuda/hts_kernels.cu}), users' PTX and users' CUDA C compiled by NVRTC.
 * Each distinct module text is loaded once; each kernel is looked up once. Calls that load must
 * run on a thread whose current context is the device's (the GPU backend's launcher thread).
 */
public final class KernelCache {

    /** The resource holding the built-in kernels' PTX. */
    public static final String BUILTIN_PTX = "/io/hts/gpu/kernel/hts_kernels.ptx";

    private final CudaApi api;
    private final DeviceInfo info;
    private final int device;
    private final Map<String, CudaApi.Module> modules = new ConcurrentHashMap<>();
    private final Map<String, Kernel> kernels = new ConcurrentHashMap<>();
    private final Map<String, String> compiled = new ConcurrentHashMap<>();
    private volatile @Nullable NvrtcCompiler nvrtc;

    /**
     * Creates an empty cache.
     *
     * @param api the CUDA API
     * @param info the device
     */
    public KernelCache(CudaApi api, DeviceInfo info) {
        this.api = api;
        this.info = info;
        this.device = info.ordinal();
    }

    /** The PTX of HTS's built-in kernels. */
    public static String builtinPtx() {
        try (InputStream in = KernelCache.class.getResourceAsStream(BUILTIN_PTX)) {
            if (in == null) {
                throw new IllegalStateException("the built-in kernels' PTX " + BUILTIN_PTX + " is missing from the jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        }
        catch (IOException ex) {
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
        return fromPtx(BUILTIN_PTX, () -> builtinPtx(), name);
    }

    /**
     * A kernel from PTX text.
     *
     * @param ptx the module's PTX
     * @param name the kernel's name
     * @return the kernel
     */
    public Kernel fromPtx(String ptx, String name) {
        return fromPtx(ptx, () -> ptx, name);
    }

    private Kernel fromPtx(String key, java.util.function.Supplier<String> ptx, String name) {
        String id = key.length() + ":" + key.hashCode() + ":" + name;
        Kernel k = kernels.get(id);
        if (k != null) {
            return k;
        }
        CudaApi.Module module = modules.computeIfAbsent(key, x -> api.loadModule(ptx.get()));
        return kernels.computeIfAbsent(id, x -> new Kernel(name, device, api.function(module, name)));
    }

    /**
     * A kernel from CUDA C source, compiled by NVRTC for this device once per distinct source.
     *
     * @param source CUDA C source declaring the kernel {@code extern "C" __global__}
     * @param name the kernel's name
     * @return the kernel
     * @throws IllegalStateException when NVRTC is unavailable, naming what is missing and how to fix it
     * @throws KernelCompilationException when the source does not compile (with NVRTC's log)
     */
    public Kernel fromSource(String source, String name) {
        String ptx = compiled.computeIfAbsent(source, s -> compiler().compile(s, "hts_user_kernel.cu",
                "--gpu-architecture=compute_" + info.computeMajor() + info.computeMinor()));
        return fromPtx(ptx, name);
    }

    private NvrtcCompiler compiler() {
        NvrtcCompiler c = nvrtc;
        if (c == null) {
            synchronized (this) {
                c = nvrtc;
                if (c == null) {
                    c = NvrtcCompiler.load();
                    nvrtc = c;
                }
            }
        }
        return c;
    }
}
