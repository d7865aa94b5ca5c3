package io.hts.gpu.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.cuda.CudaException;
import io.hts.gpu.cuda.Dim3;
import io.hts.gpu.cuda.KernelArguments;
import io.hts.gpu.support.SimulatedCuda;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class KernelCacheTests {

    private static final String K = "hts_test_k";

    private static final String J = "hts_test_j";

    private final SimulatedCuda cuda = new SimulatedCuda(1 << 20)
            .kernel(K, l -> l.memory(0).putFloat(0, -1f))
            .kernel(J, l -> {});

    private final KernelCache cache = new KernelCache(cuda, cuda.deviceInfo(0));

    /** PTX-ish text for the simulated driver: it only checks that a kernel's name is in its module's text. */
    private static String ptx(String tag) {
        return "// " + tag + "\n.visible .entry " + K + "()\n.visible .entry " + J + "()\n";
    }

    private KernelCache bounded(int maxModules) {
        return new KernelCache(cuda, cuda.deviceInfo(0), maxModules, (source, architecture) -> source);
    }

    /** Runs the kernel with a one-float buffer on a fresh stream and returns what it wrote there. */
    private float launch(Kernel kernel) {
        long out = cuda.allocate(4);
        CudaApi.Stream stream = cuda.createStream();
        cuda.launch(
                kernel.function(),
                Dim3.of(1),
                Dim3.of(1),
                0,
                stream,
                KernelArguments.of().pointer(out));
        return cuda.memoryAt(out).getFloat(0);
    }

    @Test
    void theBuiltInPtxShipsInTheJarWithEveryBuiltInKernel() {
        String ptx = KernelCache.builtinPtx();
        assertThat(ptx)
                .contains(
                        ".target sm_80",
                        ".visible .entry hts_axpy_f32",
                        ".visible .entry hts_scale_f32",
                        ".visible .entry hts_fill_f32",
                        ".visible .entry hts_sum_f32");
    }

    @Test
    void aKernelIsLoadedOncePerModuleAndNameAndReused() {
        Kernel a = cache.builtin("hts_axpy_f32");
        Kernel again = cache.builtin("hts_axpy_f32");
        Kernel other = cache.builtin("hts_fill_f32");
        assertThat(again).isSameAs(a);
        assertThat(other).isNotSameAs(a);
        assertThat(a.name()).isEqualTo("hts_axpy_f32");
        assertThat(a.device()).isZero();
        assertThat(cuda.modulesLoaded()).isOne();
    }

    @Test
    void anUnknownKernelNameIsTheDriversError() {
        assertThatThrownBy(() -> cache.builtin("no_such_kernel"))
                .isInstanceOf(CudaException.class)
                .hasMessageContaining("cuModuleGetFunction(no_such_kernel)")
                .hasMessageContaining("CUDA_ERROR_NOT_FOUND");
    }

    /** "Aa" and "BB" have the same hash code, so these texts have equal lengths and hash codes. */
    @Test
    void modulesWithCollidingLengthAndHashCodeGetTheirOwnKernels() {
        String a = ptx("Aa");
        String b = ptx("BB");
        assertThat(a).isNotEqualTo(b).hasSameSizeAs(b);
        assertThat(a.hashCode()).isEqualTo(b.hashCode());
        cuda.kernel(a, K, l -> l.memory(0).putFloat(0, 1f))
                .kernel(b, K, l -> l.memory(0).putFloat(0, 2f));

        Kernel fromA = cache.fromPtx(a, K);
        Kernel fromB = cache.fromPtx(b, K);
        assertThat(fromB).isNotSameAs(fromA);
        assertThat(launch(fromA)).isEqualTo(1f);
        assertThat(launch(fromB)).isEqualTo(2f);
        assertThat(cache.fromPtx(a, K)).isSameAs(fromA);
        assertThat(cache.fromPtx(b, K)).isSameAs(fromB);
        assertThat(cuda.modulesLoaded()).isEqualTo(2);
    }

    @Test
    void sourcesWithCollidingLengthAndHashCodeAreCompiledEachAndGetTheirOwnKernels() {
        String a = ptx("Aa");
        String b = ptx("BB");
        List<String> compiled = new ArrayList<>();
        KernelCache sources = new KernelCache(cuda, cuda.deviceInfo(0), 4, (source, architecture) -> {
            compiled.add(architecture);
            return source; // the simulated driver takes the source as its PTX
        });
        cuda.kernel(a, K, l -> l.memory(0).putFloat(0, 1f))
                .kernel(b, K, l -> l.memory(0).putFloat(0, 2f));

        assertThat(launch(sources.fromSource(a, K))).isEqualTo(1f);
        assertThat(launch(sources.fromSource(b, K))).isEqualTo(2f);
        assertThat(sources.fromSource(a, J)).isNotNull();
        assertThat(compiled).containsExactly("--gpu-architecture=compute_90", "--gpu-architecture=compute_90");
    }

    @Test
    void theBoundEvictsTheLeastRecentlyUsedModuleAndNeverTheBuiltInOne() {
        KernelCache small = bounded(2);
        Kernel fill = small.builtin("hts_fill_f32");
        Kernel one = small.fromPtx(ptx("one"), K);
        Kernel two = small.fromPtx(ptx("two"), K);
        assertThat(small.fromPtx(ptx("one"), J)).isNotNull(); // "one" is now more recently used than "two"

        Kernel three = small.fromSource(ptx("three"), K);
        assertThat(small.evictedModules()).isOne();
        assertThat(small.fromPtx(ptx("one"), K)).isSameAs(one);
        assertThat(small.fromSource(ptx("three"), K)).isSameAs(three);
        assertThat(cuda.modulesLoaded())
                .as("the built-in module, one, two, three")
                .isEqualTo(4);

        Kernel twoAgain = small.fromPtx(ptx("two"), K); // loaded anew, evicting "one"
        assertThat(twoAgain).isNotSameAs(two);
        assertThat(small.fromSource(ptx("three"), K)).isSameAs(three);
        assertThat(small.evictedModules()).isEqualTo(2);
        for (int i = 0; i < 10; i++) {
            small.fromPtx(ptx("more" + i), K);
        }
        assertThat(small.builtin("hts_fill_f32")).isSameAs(fill);
        assertThat(fill.isLoaded()).isTrue();
        assertThat(small.evictedModules()).isEqualTo(12);
        assertThat(cuda.modulesUnloaded()).as("eviction alone unloads nothing").isZero();
    }

    @Test
    void evictedModulesAreUnloadedOnlyByUnloadEvictedAndEverythingByClose() {
        KernelCache small = bounded(1);
        Kernel fill = small.builtin("hts_fill_f32");
        Kernel first = small.fromPtx(ptx("first"), K);
        Kernel second = small.fromPtx(ptx("second"), K); // evicts "first"
        assertThat(small.evictedModules()).isOne();
        assertThat(first.isLoaded()).isTrue();
        assertThat(launch(first))
                .as("work in flight may still use an evicted module")
                .isEqualTo(-1f);
        assertThat(cuda.modulesUnloaded()).isZero();

        assertThat(small.unloadEvicted()).isOne();
        assertThat(cuda.modulesUnloaded()).isOne();
        assertThat(small.evictedModules()).isZero();
        assertThat(small.unloadEvicted()).isZero();
        assertThat(first.isLoaded()).isFalse();
        assertThatThrownBy(first::function)
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("kernel " + K + " of cuda:0 can no longer be launched")
                .hasMessageContaining("look kernels up in each task body");
        assertThat(launch(second)).isEqualTo(-1f);

        Kernel firstAgain = small.fromPtx(ptx("first"), K); // loaded anew, evicting "second"
        assertThat(launch(firstAgain)).isEqualTo(-1f);
        small.close();
        assertThat(cuda.modulesUnloaded())
                .as("the built-in module, second (evicted), first again")
                .isEqualTo(cuda.modulesLoaded())
                .isEqualTo(4);
        assertThat(List.of(fill, second, firstAgain)).noneMatch(Kernel::isLoaded);
        assertThatThrownBy(() -> small.fromPtx(ptx("first"), K))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("closed");
        small.close();
        assertThat(cuda.modulesUnloaded()).isEqualTo(4);
    }

    /** What the cache's flag guards against: the driver refuses a function of an unloaded module. */
    @Test
    void theSimulatedDriverRefusesAFunctionOfAnUnloadedModule() {
        CudaApi.Module module = cuda.loadModule(ptx("raw"));
        CudaApi.Function function = cuda.function(module, K);
        cuda.unloadModule(module);
        assertThatThrownBy(() ->
                        cuda.launch(function, Dim3.of(1), Dim3.of(1), 0, cuda.createStream(), KernelArguments.of()))
                .isInstanceOf(CudaException.class)
                .hasMessageContaining("cuLaunchKernel(" + K + ")")
                .hasMessageContaining("CUDA_ERROR_INVALID_HANDLE");
        assertThatThrownBy(() -> cuda.unloadModule(module)).isInstanceOf(CudaException.class);
    }

    @Test
    void concurrentLookupsLoadEachModuleOnceAndReturnOneKernelPerTextAndName() throws Exception {
        int threads = 8;
        int texts = 6;
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Map<String, Kernel>> seen = new ArrayList<>();
        try {
            List<Future<Map<String, Kernel>>> results = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int offset = t;
                results.add(pool.submit(() -> {
                    start.await();
                    Map<String, Kernel> kernels = new HashMap<>();
                    for (int round = 0; round < 50; round++) {
                        for (int i = 0; i < texts; i++) {
                            String text = ptx("text" + (i + offset) % texts); // threads start on different texts
                            String name = round % 2 == 0 ? K : J;
                            Kernel k = cache.fromPtx(text, name);
                            Kernel before = kernels.putIfAbsent(text + name, k);
                            if (before != null && before != k) {
                                throw new AssertionError("two kernels for one text and name: " + before + ", " + k);
                            }
                        }
                    }
                    return kernels;
                }));
            }
            start.countDown();
            for (Future<Map<String, Kernel>> f : results) {
                seen.add(f.get(30, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(seen.get(0)).hasSize(2 * texts);
        for (Map<String, Kernel> kernels : seen) {
            assertThat(kernels.keySet()).isEqualTo(seen.get(0).keySet());
            kernels.forEach((key, k) -> assertThat(k).isSameAs(seen.get(0).get(key)));
        }
        assertThat(cuda.modulesLoaded()).isEqualTo(texts);
    }
}
