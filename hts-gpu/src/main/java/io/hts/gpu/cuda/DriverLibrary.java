package io.hts.gpu.cuda;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * Whether the NVIDIA driver's library ({@code libcuda.so.1} on Linux, {@code nvcuda.dll} on
 * Windows) is where the dynamic linker would find it, checked by looking at files only: nothing is
 * loaded, so a machine without a driver never unpacks JCuda's natives. On Linux the places are
 * {@code LD_LIBRARY_PATH}, the paths {@code /etc/ld.so.cache} lists for the library, and the
 * standard library directories; on Windows the system directory and {@code PATH}. Elsewhere
 * nothing is checked and JCuda's loading decides.
 */
final class DriverLibrary {

    static final String LINUX = "libcuda.so.1";
    static final String WINDOWS = "nvcuda.dll";
    static final Path LINKER_CACHE = Path.of("/etc/ld.so.cache");

    private final @Nullable String fileName;
    private final List<Path> directories;
    private final List<Path> cached;
    private final Predicate<Path> exists;

    /**
     * A check of the given places (tests pass their own, and a predicate for the file system).
     *
     * @param fileName the library's file name, {@code null} where nothing is checked
     * @param directories where to look for it, in the linker's order
     * @param cached the paths of it the linker's cache lists
     * @param exists whether a file exists (following links)
     */
    DriverLibrary(@Nullable String fileName, List<Path> directories, List<Path> cached, Predicate<Path> exists) {
        this.fileName = fileName;
        this.directories = List.copyOf(directories);
        this.cached = List.copyOf(cached);
        this.exists = exists;
    }

    /**
     * The check for this operating system, its environment and its linker cache; one that checks
     * nothing on other systems, or when the environment cannot be read.
     */
    static DriverLibrary ofThisSystem() {
        try {
            String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
            if (os.startsWith("linux")) {
                return new DriverLibrary(
                        LINUX,
                        linuxDirectories(System.getenv("LD_LIBRARY_PATH"), System.getProperty("os.arch", "")),
                        cachedPaths(LINKER_CACHE, LINUX),
                        Files::exists);
            }
            if (os.startsWith("windows")) {
                return new DriverLibrary(
                        WINDOWS,
                        windowsDirectories(System.getenv("SystemRoot"), System.getenv("PATH")),
                        List.of(),
                        Files::exists);
            }
        } catch (RuntimeException ex) {
            // e.g. a security manager refusing the environment: JCuda's loading decides
        }
        return new DriverLibrary(null, List.of(), List.of(), p -> true);
    }

    /**
     * Why there is no driver, or {@code null} when the library is there (or nothing is checked here).
     */
    @Nullable
    String missing() {
        if (fileName == null) {
            return null;
        }
        for (Path d : directories) {
            if (exists.test(d.resolve(fileName))) {
                return null;
            }
        }
        for (Path p : cached) {
            if (exists.test(p)) {
                return null;
            }
        }
        List<String> places = directories.stream().map(Path::toString).toList();
        return "no NVIDIA driver: " + fileName + " was not found in " + String.join(", ", places)
                + (fileName.equals(LINUX) ? " nor in the dynamic linker's cache " + LINKER_CACHE : "")
                + "; HTS runs tasks on the CPU";
    }

    /** {@code LD_LIBRARY_PATH}'s entries, then the standard and the usual NVIDIA directories. */
    static List<Path> linuxDirectories(@Nullable String libraryPath, String arch) {
        Set<String> dirs = new LinkedHashSet<>(entries(libraryPath, ":"));
        @Nullable
        String multiarch = switch (arch) {
            case "amd64", "x86_64" -> "x86_64-linux-gnu";
            case "aarch64", "arm64" -> "aarch64-linux-gnu";
            case "ppc64le" -> "powerpc64le-linux-gnu";
            default -> null;
        };
        if (multiarch != null) {
            dirs.add("/usr/lib/" + multiarch);
            dirs.add("/lib/" + multiarch);
        }
        dirs.addAll(List.of(
                "/usr/lib64",
                "/lib64",
                "/usr/lib",
                "/lib",
                "/usr/local/nvidia/lib64",
                "/usr/local/cuda/compat",
                "/usr/lib/wsl/lib"));
        return paths(dirs);
    }

    /** The system directory ({@code %SystemRoot%\System32}), then {@code PATH}'s entries. */
    static List<Path> windowsDirectories(@Nullable String systemRoot, @Nullable String path) {
        Set<String> dirs = new LinkedHashSet<>();
        String root = systemRoot == null || systemRoot.isBlank() ? "C:\\Windows" : systemRoot;
        dirs.add(root + "\\System32");
        dirs.addAll(entries(path, ";"));
        return paths(dirs);
    }

    private static List<String> entries(@Nullable String list, String separator) {
        List<String> entries = new ArrayList<>();
        if (list != null) {
            for (String e : list.split(separator)) {
                if (!e.isBlank()) {
                    entries.add(e.strip());
                }
            }
        }
        return entries;
    }

    private static List<Path> paths(Set<String> dirs) {
        List<Path> paths = new ArrayList<>();
        for (String d : dirs) {
            try {
                paths.add(Path.of(d));
            } catch (InvalidPathException ex) {
                // an entry that is no path cannot hold the library
            }
        }
        return paths;
    }

    /**
     * The absolute paths of {@code fileName} in glibc's linker cache, whose strings (each library's
     * soname and, apart, its path) are NUL-terminated. Empty when the cache cannot be read (musl,
     * no cache).
     */
    static List<Path> cachedPaths(Path cache, String fileName) {
        String strings;
        try {
            strings = new String(Files.readAllBytes(cache), StandardCharsets.ISO_8859_1);
        } catch (IOException | SecurityException ex) {
            return List.of();
        }
        String suffix = "/" + fileName + "\0";
        List<Path> found = new ArrayList<>();
        for (int at = strings.indexOf(suffix); at >= 0; at = strings.indexOf(suffix, at + 1)) {
            int start = strings.lastIndexOf('\0', at) + 1;
            if (strings.charAt(start) == '/') {
                try {
                    found.add(Path.of(strings.substring(start, at + suffix.length() - 1)));
                } catch (InvalidPathException ex) {
                    // not a path after all
                }
            }
        }
        return found;
    }
}
