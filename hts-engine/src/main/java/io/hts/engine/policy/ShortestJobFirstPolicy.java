package io.hts.engine.policy;

/**
 * Latency first: ready tasks run in order of estimated cost, shortest first (after priority), and
 * each goes to the device where it is expected to finish first, as with {@link DefaultPolicy}.
 * Every CPU-ready task then passes through the pool's ordered lane, which costs more per task
 * than work-stealing order; choose it when waiting time of short tasks matters more than
 * throughput.
 */
public class ShortestJobFirstPolicy extends DefaultPolicy {

    @Override
    public String name() {
        return "shortest-job-first";
    }

    @Override
    public ReadyOrder readyOrder() {
        return ReadyOrder.SHORTEST_FIRST;
    }
}
