package io.hts.gpu.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.hts.gpu.exec.GpuBackend;
import io.hts.gpu.exec.GpuSettings;
import io.hts.gpu.support.SimulatedCuda;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Discovery never throws: every way of having no GPU gives a reason. */
class GpuDiscoveryTests {

    @Test
    void missingJCudaNativesDriverOrDevicesEachGiveAReason() {
        assertThat(GpuDiscovery.discover(() -> {
                            throw new NoClassDefFoundError("jcuda/driver/JCudaDriver");
                        })
                        .reason())
                .startsWith("JCuda is not on the class path");
        assertThat(GpuDiscovery.discover(() -> {
                            throw new UnsatisfiedLinkError("libcuda.so.1: cannot open shared object file");
                        })
                        .reason())
                .contains("could not be loaded", "libcuda.so.1", "is an NVIDIA driver installed");
        assertThat(GpuDiscovery.discover(() -> {
                            throw new CudaException("cuInit(0)", 100, "CUDA_ERROR_NO_DEVICE");
                        })
                        .reason())
                .contains("refused to start", "CUDA_ERROR_NO_DEVICE");
        assertThat(GpuDiscovery.discover(() -> new SimulatedCuda(1 << 20).withDevices(0))
                        .reason())
                .isEqualTo("the CUDA driver reports no device");
    }

    /** JCuda's loading report is many lines; the reason keeps the linker error that says what is missing. */
    @Test
    void jcudasLoadingReportIsCutToTheLinkerError() {
        String report = "Error while loading native library \"JCudaDriver-12.6.0-linux-x86_64\"\n"
                + "Operating system name: Linux\n---(start of nested stack traces)---\n"
                + "java.lang.UnsatisfiedLinkError: no JCudaDriver-12.6.0-linux-x86_64 in java.library.path: /usr/lib\n"
                + "java.lang.UnsatisfiedLinkError: /tmp/libJCudaDriver.so: libcuda.so.1: cannot open shared object file\n"
                + "---(end of nested stack traces)---";
        String reason = GpuDiscovery.discover(() -> {
                    throw new UnsatisfiedLinkError(report);
                })
                .reason();
        assertThat(reason)
                .contains("/tmp/libJCudaDriver.so: libcuda.so.1: cannot open shared object file")
                .doesNotContain("\n")
                .doesNotContain("Operating system");
    }

    @Test
    void aWorkingDriverListsItsDevices() {
        GpuDiscovery.Result r = GpuDiscovery.discover(() -> new SimulatedCuda(1L << 30));
        assertThat(r.available()).isTrue();
        assertThat(r.devices()).hasSize(1);
        assertThat(r.describe())
                .isEqualTo("1 CUDA device(s), driver CUDA 13.0: [cuda:0 Simulated GPU (sm_90, 4 SMs, 1.0 GiB)]");
    }

    /** On a machine without a GPU (CI, the development box) the real discovery says why, and returns. */
    @Test
    void theRealDiscoveryNeverThrows() {
        GpuDiscovery.Result r = GpuDiscovery.discover();
        if (!r.available()) {
            assertThat(r.reason()).isNotBlank();
            assertThat(r.describe()).startsWith("GPU unavailable: ");
        }
    }

    private static final Path USR_LIB64 = Path.of("/usr/lib64");

    private static final Path MULTIARCH = Path.of("/usr/lib/x86_64-linux-gnu");

    private final AtomicInteger loads = new AtomicInteger();

    private SimulatedCuda load() {
        loads.incrementAndGet();
        return new SimulatedCuda(1L << 30);
    }

    @Test
    void withoutTheDriversLibraryJCudaIsNotLoadedAndTheReasonSaysWhereItWasLookedFor() {
        DriverLibrary none = new DriverLibrary(
                DriverLibrary.LINUX, List.of(Path.of("/opt/cuda/lib"), USR_LIB64), List.of(), p -> false);
        GpuDiscovery.Result r = GpuDiscovery.discover(none, this::load);
        assertThat(r.available()).isFalse();
        assertThat(r.reason())
                .isEqualTo("no NVIDIA driver: libcuda.so.1 was not found in /opt/cuda/lib, /usr/lib64"
                        + " nor in the dynamic linker's cache /etc/ld.so.cache; HTS runs tasks on the CPU");
        assertThat(loads).as("the loader").hasValue(0);

        DriverLibrary windows = new DriverLibrary(
                DriverLibrary.WINDOWS, List.of(Path.of("C:\\Windows\\System32")), List.of(), p -> false);
        assertThat(GpuDiscovery.discover(windows, this::load).reason())
                .isEqualTo(
                        "no NVIDIA driver: nvcuda.dll was not found in C:\\Windows\\System32; HTS runs tasks on the CPU");
        assertThat(loads).hasValue(0);
    }

    @Test
    void withTheDriversLibraryInADirectoryOrTheLinkersCacheJCudaIsLoaded() {
        DriverLibrary inDirectory = new DriverLibrary(
                DriverLibrary.LINUX,
                List.of(USR_LIB64, MULTIARCH),
                List.of(),
                p -> p.equals(MULTIARCH.resolve("libcuda.so.1")));
        assertThat(GpuDiscovery.discover(inDirectory, this::load).available()).isTrue();
        assertThat(loads).hasValue(1);

        Path cached = Path.of("/opt/nvidia/lib/libcuda.so.1");
        DriverLibrary inCache =
                new DriverLibrary(DriverLibrary.LINUX, List.of(USR_LIB64), List.of(cached), cached::equals);
        assertThat(GpuDiscovery.discover(inCache, this::load).available()).isTrue();
        assertThat(loads).hasValue(2);

        DriverLibrary unchecked = new DriverLibrary(null, List.of(), List.of(), p -> false);
        assertThat(GpuDiscovery.discover(unchecked, this::load).available()).isTrue();
        assertThat(loads)
                .as("elsewhere than Linux and Windows JCuda's loading decides")
                .hasValue(3);

        DriverLibrary failing = new DriverLibrary(DriverLibrary.LINUX, List.of(USR_LIB64), List.of(), p -> {
            throw new SecurityException("no file access");
        });
        assertThat(GpuDiscovery.discover(failing, this::load).available()).isTrue();
        assertThat(loads).as("a check that fails leaves it to JCuda's loading").hasValue(4);
    }

    /** As the dynamic linker searches: LD_LIBRARY_PATH first, then the standard directories (the H200's among them). */
    @Test
    void theLinuxDirectoriesAreTheLibraryPathsThenTheStandardOnes() {
        List<Path> dirs = DriverLibrary.linuxDirectories("/usr/local/cuda/lib64::/usr/lib64", "amd64");
        assertThat(dirs)
                .startsWith(Path.of("/usr/local/cuda/lib64"), USR_LIB64, MULTIARCH, Path.of("/lib/x86_64-linux-gnu"))
                .contains(
                        Path.of("/usr/lib"),
                        Path.of("/lib64"),
                        Path.of("/usr/local/cuda/compat"),
                        Path.of("/usr/lib/wsl/lib"))
                .doesNotHaveDuplicates();
        assertThat(DriverLibrary.linuxDirectories(null, "aarch64"))
                .startsWith(Path.of("/usr/lib/aarch64-linux-gnu"))
                .doesNotContain(MULTIARCH);
        assertThat(DriverLibrary.windowsDirectories(null, "C:\\cuda\\bin;;D:\\tools"))
                .containsExactly(Path.of("C:\\Windows\\System32"), Path.of("C:\\cuda\\bin"), Path.of("D:\\tools"));
    }

    @Test
    void theLinkersCacheListsTheLibrarysPaths(@TempDir Path dir) throws IOException {
        Path cache = dir.resolve("ld.so.cache");
        Files.write(
                cache,
                ("glibc-ld.so.cache1.1\u0001\u0002\0libcuda.so.1\0/usr/lib/x86_64-linux-gnu/libcuda.so.1\0"
                                + "libcuda.so\0/usr/lib/x86_64-linux-gnu/libcuda.so\0libxlibcuda.so.1.2\0"
                                + "/usr/lib/i386-linux-gnu/libcuda.so.1\0")
                        .getBytes(StandardCharsets.ISO_8859_1));
        assertThat(DriverLibrary.cachedPaths(cache, "libcuda.so.1"))
                .containsExactly(MULTIARCH.resolve("libcuda.so.1"), Path.of("/usr/lib/i386-linux-gnu/libcuda.so.1"));
        assertThat(DriverLibrary.cachedPaths(dir.resolve("missing"), "libcuda.so.1"))
                .isEmpty();
    }

    /** The parser on this machine's real glibc cache, which lists the C library. */
    @Test
    void theRealLinkersCacheIsRead() {
        assumeTrue(Files.exists(DriverLibrary.LINKER_CACHE), "a glibc linker cache");
        assertThat(DriverLibrary.cachedPaths(DriverLibrary.LINKER_CACHE, "libc.so.6"))
                .isNotEmpty()
                .allMatch(p -> p.isAbsolute() && p.endsWith("libc.so.6"));
    }

    /**
     * On a machine without the driver (this development machine, CI) the real discovery says so
     * and unpacks nothing of JCuda's into the temporary directory. JCuda writes its native library
     * there only when the file is not there yet, so the temporary directory is a fresh one for the
     * call (JCuda reads {@code java.io.tmpdir} each time it loads).
     */
    @Test
    void theRealDiscoveryWithoutADriverLeavesJCudaAlone(@TempDir Path tmp) throws IOException {
        assumeTrue(DriverLibrary.ofThisSystem().missing() != null, "a machine without libcuda.so.1");
        String tmpdir = System.getProperty("java.io.tmpdir");
        GpuDiscovery.Result r;
        List<String> before = jcudaFiles(tmp);
        System.setProperty("java.io.tmpdir", tmp.toString());
        try {
            r = GpuDiscovery.discover();
        } finally {
            System.setProperty("java.io.tmpdir", tmpdir);
        }
        assertThat(r.available()).isFalse();
        assertThat(r.reason())
                .startsWith("no NVIDIA driver: libcuda.so.1 was not found in ")
                .contains("/usr/lib64, /lib64, /usr/lib, /lib")
                .endsWith("; HTS runs tasks on the CPU");
        assertThat(jcudaFiles(tmp))
                .as("libJCuda* files in java.io.tmpdir")
                .isEqualTo(before)
                .isEmpty();
    }

    /** Without a driver the documented entry point gives no backend (its reason is logged once), and throws nothing. */
    @Test
    void startOnFirstDeviceWithoutADriverGivesNoBackend() {
        assumeTrue(DriverLibrary.ofThisSystem().missing() != null, "a machine without libcuda.so.1");
        assertThat(GpuBackend.startOnFirstDevice(total -> GpuSettings.defaults(total / 2)))
                .isEmpty();
    }

    private static List<String> jcudaFiles(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith("libJCuda"))
                    .sorted()
                    .toList();
        }
    }

    @Test
    void errorsAreClassifiedForTheScheduler() {
        assertThat(CudaErrorKind.of(2)).isEqualTo(CudaErrorKind.OUT_OF_MEMORY);
        assertThat(CudaErrorKind.of(2).isRetryable()).isTrue();
        assertThat(CudaErrorKind.of(700)).isEqualTo(CudaErrorKind.STICKY);
        assertThat(CudaErrorKind.of(719)).isEqualTo(CudaErrorKind.STICKY);
        assertThat(CudaErrorKind.of(214)).isEqualTo(CudaErrorKind.STICKY);
        assertThat(CudaErrorKind.of(100)).isEqualTo(CudaErrorKind.UNAVAILABLE);
        assertThat(CudaErrorKind.of(35)).isEqualTo(CudaErrorKind.UNAVAILABLE);
        assertThat(CudaErrorKind.of(1)).isEqualTo(CudaErrorKind.OTHER);
        assertThat(CudaErrorKind.of(700).isRetryable()).isFalse();
        CudaException e = new CudaException("cuMemAlloc(1024)", 2, "CUDA_ERROR_OUT_OF_MEMORY");
        assertThat(e).hasMessage("cuMemAlloc(1024) failed: CUDA_ERROR_OUT_OF_MEMORY (2)");
        assertThat(e.kind()).isEqualTo(CudaErrorKind.OUT_OF_MEMORY);
    }
}
