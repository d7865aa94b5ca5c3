package io.hts.gpu.support;

import io.hts.gpu.cuda.CudaApi;
import io.hts.gpu.exec.GpuBackend;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A simulated device where the launcher sees an event complete only after a waiting caller (any
 * thread but a launcher, {@code hts-gpu-*}) has seen it, or 100 ms after the launcher first found
 * it so (a waiter assists for a bounded time and then blocks, leaving the rest to the launcher): a
 * waiter, not the launcher, is nearly always the first to find a task's work done, as when the
 * launcher sleeps through a long task on a real GPU.
 */
public final class WaiterFirstCuda {

    private WaiterFirstCuda() {}

    /** A GPU backend on device 0 of {@code sim} (4 streams, {@link SimulatedCuda#testSettings}) that sees it through the rule above. */
    public static GpuBackend backend(SimulatedCuda sim) {
        return sim.backendThrough(over(sim), 4);
    }

    /** {@code sim}, seen through the rule above. */
    public static CudaApi over(SimulatedCuda sim) {
        Set<Object> seen = ConcurrentHashMap.newKeySet(); // events a waiter saw complete since recorded
        Map<Object, Long> launcherFirst = new ConcurrentHashMap<>(); // when the launcher first found one so
        return (CudaApi) Proxy.newProxyInstance(
                CudaApi.class.getClassLoader(), new Class<?>[] {CudaApi.class}, (p, method, args) -> {
                    if (method.getName().equals("record")) {
                        seen.remove(args[0]);
                        launcherFirst.remove(args[0]);
                    }
                    Object r;
                    try {
                        r = method.invoke(sim, args);
                    } catch (InvocationTargetException ex) {
                        throw ex.getCause();
                    }
                    if (method.getName().equals("isComplete") && Boolean.TRUE.equals(r)) {
                        if (!Thread.currentThread().getName().startsWith("hts-gpu-")) {
                            seen.add(args[0]);
                            return true;
                        }
                        long first = launcherFirst.computeIfAbsent(args[0], e -> System.nanoTime());
                        return seen.contains(args[0]) || System.nanoTime() - first > TimeUnit.MILLISECONDS.toNanos(100);
                    }
                    return r;
                });
    }
}
