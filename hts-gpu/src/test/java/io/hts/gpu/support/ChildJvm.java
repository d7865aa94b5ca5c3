package io.hts.gpu.support;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Runs a main class in a JVM of its own, for a test whose scenario must not share the test JVM:
 * one that poisons the process's CUDA context (a sticky error), after which every later GPU test
 * in the same JVM would fail. The child is the {@code java} of {@code java.home}, with this JVM's
 * class path (the test class loader's entries too, so that it also works under a launcher that
 * loads the tests through a class loader of its own, as the JUnit console launcher of the GPU kit
 * does), its {@code java.library.path} (JCuda's natives) and its environment. Its output (standard
 * output and error together) is kept, and goes into the failure message when it fails.
 */
public final class ChildJvm {

    private ChildJvm() {}

    /**
     * How a child ended.
     *
     * @param exitCode its exit code, -1 when it was killed for running past its bound
     * @param timedOut whether it ran past its bound
     * @param output what it printed, standard output and error together
     */
    public record Result(int exitCode, boolean timedOut, String output) {}

    /**
     * Runs {@code mainClass} in a child JVM and waits for it, at most {@code limit}; a child still
     * running then is killed.
     *
     * @param mainClass a class with a {@code main} method, on this JVM's class path
     * @param limit how long to wait
     * @param args the program's arguments
     * @return how it ended
     * @throws IOException when the child cannot be started or its output cannot be read
     * @throws InterruptedException when interrupted while waiting
     */
    public static Result run(Class<?> mainClass, Duration limit, String... args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        String libraryPath = System.getProperty("java.library.path");
        if (libraryPath != null && !libraryPath.isEmpty()) {
            command.add("-Djava.library.path=" + libraryPath);
        }
        command.add("-cp");
        command.add(classPath(mainClass));
        command.add(mainClass.getName());
        command.addAll(List.of(args));
        Path log = Files.createTempFile("hts-child-jvm-", ".log");
        try {
            Process child = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            boolean ended = child.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS);
            if (!ended) {
                child.destroyForcibly();
                child.waitFor(10, TimeUnit.SECONDS);
            }
            String output = Files.readString(log, StandardCharsets.UTF_8);
            return new Result(ended ? child.exitValue() : -1, !ended, output);
        } finally {
            Files.deleteIfExists(log);
        }
    }

    /**
     * Runs {@code mainClass} in a child JVM and fails, with the child's output in the message, unless
     * it exits with 0 within {@code limit}.
     *
     * @param mainClass a class with a {@code main} method, on this JVM's class path
     * @param limit how long to wait
     * @param args the program's arguments
     * @return what the child printed
     * @throws IOException when the child cannot be started or its output cannot be read
     * @throws InterruptedException when interrupted while waiting
     */
    public static String runToSuccess(Class<?> mainClass, Duration limit, String... args)
            throws IOException, InterruptedException {
        Result r = run(mainClass, limit, args);
        if (r.timedOut()) {
            throw new AssertionError(mainClass.getName() + " in a child JVM did not end within " + limit
                    + " and was killed; its output:\n" + r.output());
        }
        if (r.exitCode() != 0) {
            throw new AssertionError(mainClass.getName() + " in a child JVM exited with " + r.exitCode()
                    + "; its output:\n" + r.output());
        }
        return r.output();
    }

    /**
     * {@code java.class.path} (the application class loader's), then the entries of the URL class
     * loaders between it and {@code mainClass}'s, parents first, as the JVM would search them.
     */
    static String classPath(Class<?> mainClass) {
        Set<String> entries = new LinkedHashSet<>();
        for (String e : System.getProperty("java.class.path", "").split(File.pathSeparator)) {
            if (!e.isEmpty()) {
                entries.add(e);
            }
        }
        List<ClassLoader> loaders = new ArrayList<>();
        for (ClassLoader l = mainClass.getClassLoader(); l != null; l = l.getParent()) {
            loaders.add(0, l);
        }
        for (ClassLoader l : loaders) {
            if (l instanceof URLClassLoader urls) {
                for (URL url : urls.getURLs()) {
                    entries.add(file(url));
                }
            }
        }
        return String.join(File.pathSeparator, entries);
    }

    private static String file(URL url) {
        try {
            return Path.of(url.toURI()).toString();
        } catch (URISyntaxException | IllegalArgumentException ex) {
            return url.getPath();
        }
    }
}
