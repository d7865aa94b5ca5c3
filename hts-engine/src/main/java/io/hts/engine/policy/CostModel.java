package io.hts.engine.policy;

import io.hts.engine.graph.Device;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Learned task costs: an exponentially weighted moving average of measured durations per
 * statistics name (a task's name, or its group's) and device. Feeds the policies when a task
 * declares no estimate. It remembers at most {@value #MAX_NAMES} names, the least recently used
 * forgotten first. Thread-safe; of two samples recorded at the same moment one may be lost.
 */
public final class CostModel {

    /*
     * Callers (the scheduler's execution plans) look a cell up once per graph and keep it, so the
     * map, under this object's monitor, is off the hot path. Updates of a cell are deliberately
     * racy (a read and a write of a volatile double, no CAS loop): an estimate does not need every
     * sample, and the hot path must not contend on a lock or a CAS loop.
     */

    /** The most names remembered; the least recently used is forgotten beyond it. */
    public static final int MAX_NAMES = 10_000;

    private final Map<String, Cell> cells = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Cell> eldest) {
            return size() > MAX_NAMES;
        }
    };
    private final double weight;

    /** A model giving each new sample a weight of 0.2. */
    public CostModel() {
        this(0.2);
    }

    /**
     * A model with a given weight for new samples.
     *
     * @param weight between 0 (exclusive) and 1 (inclusive)
     */
    public CostModel(double weight) {
        if (!(weight > 0 && weight <= 1)) {
            throw new IllegalArgumentException("weight must be in (0, 1], was " + weight);
        }
        this.weight = weight;
    }

    /**
     * The cell for a name, created on first use; callers keep it to skip the lookup later.
     *
     * @param statisticsName the task's statistics name
     * @return its cell
     */
    public synchronized Cell cell(String statisticsName) {
        return cells.computeIfAbsent(statisticsName, n -> new Cell(weight));
    }

    /**
     * Records a measured duration.
     *
     * @param statisticsName the task's statistics name
     * @param device where it ran
     * @param nanos how long it took
     */
    public void record(String statisticsName, Device device, long nanos) {
        cell(statisticsName).record(device, nanos);
    }

    /**
     * The learned estimate.
     *
     * @param statisticsName the task's statistics name
     * @param device the device
     * @return nanoseconds, or -1 when nothing was learned
     */
    public synchronized long estimate(String statisticsName, Device device) {
        Cell c = cells.get(statisticsName);
        return c == null ? -1 : c.estimate(device);
    }

    /** Every learned estimate, by name and device. */
    public synchronized Map<String, Map<Device, Duration>> snapshot() {
        Map<String, Map<Device, Duration>> out = new LinkedHashMap<>();
        cells.forEach((name, cell) -> {
            Map<Device, Duration> m = new LinkedHashMap<>();
            for (Device d : Device.values()) {
                long e = cell.estimate(d);
                if (e >= 0) {
                    m.put(d, Duration.ofNanos(e));
                }
            }
            out.put(name, m);
        });
        return out;
    }

    /** The moving averages of one statistics name. */
    public static final class Cell {

        private final double weight;
        private volatile double cpu = -1;
        private volatile double gpu = -1;

        Cell(double weight) {
            this.weight = weight;
        }

        /**
         * Adds a sample.
         *
         * @param device where the task ran
         * @param nanos its duration
         */
        public void record(Device device, long nanos) {
            if (device == Device.CPU) {
                double c = cpu;
                cpu = c < 0 ? nanos : c + weight * (nanos - c);
            } else {
                double g = gpu;
                gpu = g < 0 ? nanos : g + weight * (nanos - g);
            }
        }

        /**
         * The current estimate.
         *
         * @param device the device
         * @return nanoseconds, or -1 when nothing was learned
         */
        public long estimate(Device device) {
            double v = device == Device.CPU ? cpu : gpu;
            return v < 0 ? -1 : (long) v;
        }
    }
}
