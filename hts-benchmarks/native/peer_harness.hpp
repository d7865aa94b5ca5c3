// What the native peers of the JMH task benchmarks share (tbb_flow_graph.cpp, taskflow_graph.cpp):
// the shape-file reader, the command line, the per-thread task counters, the task bodies, the timed
// loop and the one-line JSON report. Each peer only builds its library's graph from a Shape and
// says how to run it once; everything measured and reported is the same code for all of them.
//
// Command line (every peer):
//   PEER SHAPE_FILE [--threads N] [--warmup-iterations N] [--warmup-seconds S] [--iterations N]
//                   [--iteration-seconds S] [--work-ns NS]
//
// Two modes, each mirroring a JMH benchmark:
// - empty tasks (the default), EmptyTasksBenchmark: each body only counts itself (one relaxed
//   fetch_add on a 128-byte-padded counter of the running thread's own slot, like the Java tasks'
//   LongAdder.increment()); an iteration runs the graph as many times as fit in its time, and its
//   score is elapsed / (runs x tasks) in ns per task (JMH's AverageTime transposed). After every run
//   the counters are summed, reset and checked against the task count inside the timed loop, as the
//   Java benchmark's verify(), so no body can be optimised away.
// - --work-ns NS > 0, CpuWorkBenchmark (the seed's 0.5 ms workloads, NS = 500000): each body first
//   does NS of real CPU work, CpuWork's loop (Blackhole.consumeCPU's arithmetic) run for a token
//   count calibrated at start-up as CpuWork.tokensFor does (probe grown to 20 ms, median of seven
//   rates), and times it; every iteration is one run (SingleShotTime, batch 1, --iteration-seconds
//   ignored) and reports, from the durations the tasks measured in that very run, wall,
//   ideal = max(total work / threads, critical path), overhead = (wall - ideal) / wall and
//   efficiency = (total work / threads) / wall, as CpuWorkBenchmark.Outcome does.
//
// Output: human-readable lines on stderr, one JSON object on one line on stdout. Exit status 2 on a
// bad argument or shape file (the message names the file and line), 1 when a run miscounts.
#pragma once

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace peer {

// A bad argument or shape file: reported as is, exit status 2.
struct InputError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A DAG as the shape file lists it: the predecessors of task i are preds[pred_start[i] .. pred_start[i + 1]).
struct Shape {
    std::string name;
    int tasks = 0;
    long long edges = 0;
    std::vector<int> pred_start;
    std::vector<int> preds;
    std::vector<int> roots;
};

// Reads a shape file; refuses what io.hts.benchmarks.workload.ShapeFile refuses, naming the line.
class ShapeFileReader {
public:
    explicit ShapeFileReader(std::string path) : path_(std::move(path)) {}

    Shape read() {
        std::ifstream in(path_, std::ios::binary);
        if (!in) {
            throw InputError("cannot read shape file " + path_);
        }
        std::stringstream content;
        content << in.rdbuf();
        text_ = content.str();
        Shape shape;
        read_header(shape);
        shape.pred_start.assign(static_cast<size_t>(shape.tasks) + 1, 0);
        shape.preds.reserve(static_cast<size_t>(shape.edges));
        for (int task = 0; task < shape.tasks; task++) {
            std::string_view line;
            if (!next_line(line)) {
                fail("the file ends after " + std::to_string(task) + " of the header's "
                     + std::to_string(shape.tasks) + " task lines");
            }
            shape.pred_start[task] = static_cast<int>(shape.preds.size());
            read_predecessors(task, line, shape.preds);
            if (shape.pred_start[task] == static_cast<int>(shape.preds.size())) {
                shape.roots.push_back(task);
            }
        }
        shape.pred_start[shape.tasks] = static_cast<int>(shape.preds.size());
        std::string_view extra;
        if (next_line(extra)) {
            fail("more task lines than the header's " + std::to_string(shape.tasks));
        }
        if (static_cast<long long>(shape.preds.size()) != shape.edges) {
            line_ = 1;
            fail("the header declares " + std::to_string(shape.edges) + " edges, the task lines hold "
                 + std::to_string(shape.preds.size()));
        }
        return shape;
    }

private:
    std::string path_;
    std::string text_;
    size_t position_ = 0;
    long line_ = 0;

    [[noreturn]] void fail(const std::string& problem) const {
        throw InputError(path_ + ", line " + std::to_string(line_) + ": " + problem);
    }

    // The next line without its "\n" or "\r\n"; false at the end of the text.
    bool next_line(std::string_view& line) {
        line_++;
        if (position_ >= text_.size()) {
            return false;
        }
        size_t end = text_.find('\n', position_);
        size_t next = end == std::string::npos ? text_.size() : end + 1;
        if (end == std::string::npos) {
            end = text_.size();
        }
        if (end > position_ && text_[end - 1] == '\r') {
            end--;
        }
        line = std::string_view(text_).substr(position_, end - position_);
        position_ = next;
        return true;
    }

    int number(std::string_view token, const std::string& what) const {
        long long value = -1;
        bool digits = !token.empty() && token.size() <= 10
                      && std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; });
        if (digits) {
            std::from_chars(token.data(), token.data() + token.size(), value);
        }
        if (value < 0 || value > 2147483647LL) {
            fail("'" + std::string(token) + "' is not a valid " + what + " (a decimal number from 0 to 2147483647)");
        }
        return static_cast<int>(value);
    }

    static std::vector<std::string_view> words(std::string_view line) {
        std::vector<std::string_view> result;
        size_t start = 0;
        while (true) {
            size_t space = line.find(' ', start);
            result.push_back(line.substr(start, space == std::string_view::npos ? std::string_view::npos : space - start));
            if (space == std::string_view::npos) {
                return result;
            }
            start = space + 1;
        }
    }

    void read_header(Shape& shape) {
        std::string_view header;
        bool present = next_line(header);
        std::vector<std::string_view> w = present ? words(header) : std::vector<std::string_view>();
        if (w.size() != 5 || w[0] != "hts-shape" || w[2].empty()) {
            fail("expected 'hts-shape 1 <name> <tasks> <edges>', found "
                 + (present ? "'" + std::string(header) + "'" : std::string("an empty file")));
        }
        int version = number(w[1], "version");
        if (version != 1) {
            fail("format version " + std::to_string(version) + " (this reader reads 1)");
        }
        shape.name = std::string(w[2]);
        shape.tasks = number(w[3], "task count");
        shape.edges = number(w[4], "edge count");
    }

    void read_predecessors(int task, std::string_view line, std::vector<int>& preds) {
        if (line.empty()) {
            return;
        }
        size_t first = preds.size();
        for (std::string_view token : words(line)) {
            int p = number(token, "predecessor of task " + std::to_string(task));
            if (p >= task) {
                fail("predecessor " + std::to_string(p) + " of task " + std::to_string(task) + " is not before it");
            }
            preds.push_back(p);
        }
        std::vector<int> sorted(preds.begin() + static_cast<long>(first), preds.end());
        std::sort(sorted.begin(), sorted.end());
        auto twice = std::adjacent_find(sorted.begin(), sorted.end());
        if (twice != sorted.end()) {
            fail("task " + std::to_string(task) + " lists predecessor " + std::to_string(*twice) + " twice");
        }
    }
};

struct Options {
    std::string shape_file;
    int threads = 2;
    int warmup_iterations = 3;    // EmptyTasksBenchmark's @Warmup(iterations = 3, time = 5)
    double warmup_seconds = 5;
    int iterations = 5;           // and @Measurement(iterations = 5, time = 2)
    double iteration_seconds = 2;
    long long work_ns = 0;        // > 0: CpuWorkBenchmark's mode (its workMicros = 500: 500000)
};

inline Options parse_options(int argc, char** argv, const std::string& program) {
    Options o;
    const std::string usage = "usage: " + program + " SHAPE_FILE [--threads N] [--warmup-iterations N] "
                              "[--warmup-seconds S] [--iterations N] [--iteration-seconds S] [--work-ns NS]";
    for (int a = 1; a < argc; a++) {
        std::string arg = argv[a];
        if (arg.rfind("--", 0) != 0) {
            if (!o.shape_file.empty()) {
                throw InputError("two shape files given\n" + usage);
            }
            o.shape_file = arg;
            continue;
        }
        if (a + 1 >= argc) {
            throw InputError(arg + " needs a value\n" + usage);
        }
        std::string value = argv[++a];
        try {
            size_t used = 0;
            if (arg == "--threads") {
                o.threads = std::stoi(value, &used);
            } else if (arg == "--warmup-iterations") {
                o.warmup_iterations = std::stoi(value, &used);
            } else if (arg == "--warmup-seconds") {
                o.warmup_seconds = std::stod(value, &used);
            } else if (arg == "--iterations") {
                o.iterations = std::stoi(value, &used);
            } else if (arg == "--iteration-seconds") {
                o.iteration_seconds = std::stod(value, &used);
            } else if (arg == "--work-ns") {
                o.work_ns = std::stoll(value, &used);
            } else {
                throw InputError("unknown option " + arg + "\n" + usage);
            }
            if (used != value.size()) {
                throw std::invalid_argument(value);
            }
        } catch (const std::logic_error&) {
            throw InputError("bad value '" + value + "' for " + arg + "\n" + usage);
        }
    }
    if (o.shape_file.empty()) {
        throw InputError(usage);
    }
    if (o.threads < 1 || o.warmup_iterations < 0 || o.iterations < 1 || o.warmup_seconds < 0 || o.iteration_seconds <= 0
        || o.work_ns < 0) {
        throw InputError("threads and iterations must be at least 1, times positive, work not negative\n" + usage);
    }
    return o;
}

// Every task counts itself here, like the Java benchmarks' LongAdder: one padded cell per thread slot
// (the peer says which slot the running thread has).
class TaskCounter {
public:
    explicit TaskCounter(int slots) : slots_(slots), cells_(new Cell[static_cast<size_t>(slots)]) {}

    void increment(int slot) {
        cells_[static_cast<size_t>(slot)].count.fetch_add(1, std::memory_order_relaxed);
    }

    long long sum_then_reset() {
        long long sum = 0;
        for (int s = 0; s < slots_; s++) {
            sum += cells_[static_cast<size_t>(s)].count.exchange(0, std::memory_order_relaxed);
        }
        return sum;
    }

private:
    struct alignas(128) Cell {
        std::atomic<long long> count{0};
    };
    int slots_;
    std::unique_ptr<Cell[]> cells_;
};

// Real CPU work, io.hts.benchmarks.workload.CpuWork's: Blackhole.consumeCPU's loop, calibrated here.
struct CpuWork {
    static inline std::atomic<long long> sink{0};

    static void run(long long tokens) {
        long long t = sink.load(std::memory_order_relaxed);
        for (long long i = tokens; i > 0; i--) {
            t += (t * 0x5DEECE66DLL + 0xBLL + i) & 0xFFFFFFFFFFFFLL;
        }
        if (t == 42) {
            sink.fetch_add(t, std::memory_order_relaxed);
        }
    }

    static long long time(long long tokens) {
        auto t0 = std::chrono::steady_clock::now();
        run(tokens);
        return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    }

    // CpuWork.tokensFor: the probe grown until it runs 20 ms, then the median of seven rates.
    static long long tokens_for(long long ns) {
        long long probe = 1000;
        while (time(probe) < 20000000LL) {
            probe *= 2;
        }
        std::vector<double> per_nano;
        for (int i = 0; i < 7; i++) {
            per_nano.push_back(static_cast<double>(probe) / static_cast<double>(time(probe)));
        }
        std::sort(per_nano.begin(), per_nano.end());
        return std::max(1LL, std::llround(per_nano[3] * static_cast<double>(ns)));
    }

    // CpuWork.measure: median of nine runs.
    static long long measure(long long tokens) {
        std::vector<long long> t;
        for (int i = 0; i < 9; i++) {
            t.push_back(time(tokens));
        }
        std::sort(t.begin(), t.end());
        return t[4];
    }
};

// A task's body, given the slot of the thread running it: counts itself.
struct EmptyBody {
    TaskCounter* counter;
    void operator()(int slot) const { counter->increment(slot); }
};

// A task's body in --work-ns mode: does its work, records how long it took, counts itself.
struct WorkBody {
    TaskCounter* counter;
    long long tokens;
    long long* duration;
    void operator()(int slot) const {
        auto t0 = std::chrono::steady_clock::now();
        CpuWork::run(tokens);
        *duration = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
        counter->increment(slot);
    }
};

inline std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
        }
        out += c;
    }
    return out + "\"";
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// One peer's measurement: the shape, the bodies its graph runs, the timed loop and the report.
// Use: Harness h(options, "taskflow"); build the graph with h.build(...) (the peer's builder gets a
// make_body(task) to call once per task), time it with h.measure(run_once), then h.report(...).
class Harness {
public:
    struct Iteration {
        double ns_per_task;
        long long runs;
        double wall_ns = 0, work_per_core_ns = 0, ideal_ns = 0;   // --work-ns mode only
    };

    // Reads the shape and, in --work-ns mode, calibrates the work (before the peer starts its threads).
    Harness(Options options, std::string contender)
        : options_(std::move(options)), contender_(std::move(contender)),
          shape_(ShapeFileReader(options_.shape_file).read()) {
        if (options_.work_ns > 0) {
            tokens_ = CpuWork::tokens_for(options_.work_ns);
            one_task_ns_ = CpuWork::measure(tokens_);
            durations_.assign(static_cast<size_t>(shape_.tasks), 0);
            std::fprintf(stderr, "work: %lld tokens for %lld ns, one task measured at %lld ns\n", tokens_,
                         options_.work_ns, one_task_ns_);
        }
    }

    const Options& options() const { return options_; }
    const Shape& shape() const { return shape_; }

    // Calls build(make_body), make_body(task) giving the body of a task (a callable taking the running
    // thread's slot, 0 <= slot < slots); times the build. The counter is made here, with the slots.
    template <class Build>
    void build(int slots, Build&& build) {
        counter_ = std::make_unique<TaskCounter>(slots);
        auto start = std::chrono::steady_clock::now();
        if (options_.work_ns > 0) {
            build([this](int task) { return WorkBody{counter_.get(), tokens_, &durations_[static_cast<size_t>(task)]}; });
        } else {
            build([this](int) { return EmptyBody{counter_.get()}; });
        }
        build_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    }

    double build_ms() const { return build_ms_; }

    // The warm-up and measurement iterations; run_once() runs the graph once and returns when all ran.
    template <class RunOnce>
    void measure(RunOnce&& run_once) {
        for (int i = 0; i < options_.warmup_iterations; i++) {
            warmup_.push_back(iteration(run_once, options_.warmup_seconds));
            print("# Warmup Iteration", i + 1, warmup_.back());
        }
        for (int i = 0; i < options_.iterations; i++) {
            measured_.push_back(iteration(run_once, options_.iteration_seconds));
            print("Iteration", i + 1, measured_.back());
        }
    }

    // The summary line on stderr and the JSON line on stdout; peer_fields: ,"key":value pairs already
    // in JSON (the peer's name and library version), put after "contender".
    void report(const std::vector<std::pair<std::string, std::string>>& peer_fields) const {
        std::vector<double> scores;
        for (const Iteration& it : measured_) {
            scores.push_back(it.ns_per_task);
        }
        double med = median(scores);
        double lo = *std::min_element(scores.begin(), scores.end());
        double hi = *std::max_element(scores.begin(), scores.end());
        std::fprintf(stderr, "%s: median %.3f ns/task (min %.3f, max %.3f) over %d iterations%s\n", shape_.name.c_str(),
                     med, lo, hi, options_.iterations, work() ? "" : (" of " + seconds(options_.iteration_seconds)).c_str());
        std::string json = "{\"contender\":" + json_string(contender_);
        for (const auto& field : peer_fields) {
            json += "," + json_string(field.first) + ":" + field.second;
        }
        // the shape's name and file (any length) go in as strings; the fixed-size numbers after them
        json += ",\"shape\":" + json_string(shape_.name) + ",\"file\":" + json_string(options_.shape_file);
        char buffer[512];
        std::snprintf(buffer, sizeof buffer,
                      ",\"tasks\":%d,\"edges\":%lld,\"roots\":%d,\"threads\":%d,"
                      "\"build_ms\":%.3f,\"warmup_iterations\":%d,\"warmup_seconds\":%g,\"iterations\":%d,"
                      "\"iteration_seconds\":%g,\"work_ns\":%lld",
                      shape_.tasks,
                      shape_.edges, static_cast<int>(shape_.roots.size()), options_.threads, build_ms_,
                      options_.warmup_iterations, options_.warmup_seconds, options_.iterations,
                      options_.iteration_seconds, options_.work_ns);
        json += buffer;
        json += ",\"warmup_ns_per_task\":" + numbers(warmup_, [](const Iteration& it) { return it.ns_per_task; });
        json += ",\"ns_per_task\":" + numbers(measured_, [](const Iteration& it) { return it.ns_per_task; });
        json += ",\"runs\":" + numbers(measured_, [](const Iteration& it) { return static_cast<double>(it.runs); }, "%.0f");
        std::snprintf(buffer, sizeof buffer, ",\"median\":%.3f,\"min\":%.3f,\"max\":%.3f", med, lo, hi);
        json += buffer;
        if (work()) {
            std::vector<double> overheads, efficiencies;
            for (const Iteration& it : measured_) {
                overheads.push_back(overhead(it));
                efficiencies.push_back(efficiency(it));
            }
            json += ",\"work_tokens\":" + std::to_string(tokens_) + ",\"work_one_task_ns\":" + std::to_string(one_task_ns_);
            json += ",\"wall_ms\":" + numbers(measured_, [](const Iteration& it) { return it.wall_ns / 1e6; });
            json += ",\"work_per_core_ms\":" + numbers(measured_, [](const Iteration& it) { return it.work_per_core_ns / 1e6; });
            json += ",\"ideal_ms\":" + numbers(measured_, [](const Iteration& it) { return it.ideal_ns / 1e6; });
            json += ",\"overhead\":" + numbers(measured_, overhead, "%.6f");
            json += ",\"efficiency\":" + numbers(measured_, efficiency, "%.6f");
            std::snprintf(buffer, sizeof buffer, ",\"median_overhead\":%.6f,\"median_efficiency\":%.6f",
                          median(overheads), median(efficiencies));
            json += buffer;
            std::fprintf(stderr, "%s: median overhead %.3f %% over the ideal, median efficiency %.4f\n",
                         shape_.name.c_str(), 100 * median(overheads), median(efficiencies));
        }
        std::printf("%s}\n", json.c_str());
    }

private:
    Options options_;
    std::string contender_;
    Shape shape_;
    std::unique_ptr<TaskCounter> counter_;
    long long tokens_ = 0;
    long long one_task_ns_ = 0;
    std::vector<long long> durations_;   // --work-ns mode: what each task measured in the last run
    double build_ms_ = 0;
    std::vector<Iteration> warmup_;
    std::vector<Iteration> measured_;

    bool work() const { return options_.work_ns > 0; }

    static double overhead(const Iteration& it) { return (it.wall_ns - it.ideal_ns) / it.wall_ns; }
    static double efficiency(const Iteration& it) { return it.work_per_core_ns / it.wall_ns; }

    static std::string seconds(double s) {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%.1f s", s);
        return buffer;
    }

    template <class Get>
    static std::string numbers(const std::vector<Iteration>& its, Get get, const char* format = "%.3f") {
        std::string out = "[";
        char buffer[64];
        for (size_t i = 0; i < its.size(); i++) {
            std::snprintf(buffer, sizeof buffer, format, get(its[i]));
            out += (i ? "," : "") + std::string(buffer);
        }
        return out + "]";
    }

    void print(const char* what, int n, const Iteration& it) const {
        if (work()) {
            std::fprintf(stderr, "%s %3d: %.3f ms wall, %.3f ms ideal, overhead %.3f %%, efficiency %.4f\n", what, n,
                         it.wall_ns / 1e6, it.ideal_ns / 1e6, 100 * overhead(it), efficiency(it));
        } else {
            std::fprintf(stderr, "%s %3d: %.3f ns/task (%lld runs)\n", what, n, it.ns_per_task, it.runs);
        }
    }

    void verify() {
        long long ran = counter_->sum_then_reset();
        if (ran != shape_.tasks) {
            std::fprintf(stderr, "ran %lld tasks, expected %d\n", ran, shape_.tasks);
            std::exit(1);
        }
    }

    // Empty tasks: runs until the iteration's time is up, verifying every run's count. With work: one
    // run, its wall time against the ideal computed from the durations its tasks measured.
    template <class RunOnce>
    Iteration iteration(RunOnce& run_once, double seconds) {
        using Clock = std::chrono::steady_clock;
        auto start = Clock::now();
        if (work()) {
            run_once();
            double wall = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
            verify();
            return with_ideal(wall);
        }
        auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
        long long runs = 0;
        Clock::time_point now;
        do {
            run_once();
            verify();
            runs++;
            now = Clock::now();
        } while (now < deadline);
        double ns = std::chrono::duration<double, std::nano>(now - start).count();
        return {ns / (static_cast<double>(runs) * shape_.tasks), runs};
    }

    // CpuWorkBenchmark.measured: ideal = max(total work / threads, critical path by measured durations).
    Iteration with_ideal(double wall) const {
        double total = 0, critical = 0;
        std::vector<double> path(static_cast<size_t>(shape_.tasks));
        for (int i = 0; i < shape_.tasks; i++) {
            double d = static_cast<double>(durations_[static_cast<size_t>(i)]);
            double before = 0;
            for (int k = shape_.pred_start[i]; k < shape_.pred_start[i + 1]; k++) {
                before = std::max(before, path[static_cast<size_t>(shape_.preds[k])]);
            }
            path[static_cast<size_t>(i)] = before + d;
            critical = std::max(critical, before + d);
            total += d;
        }
        double per_core = total / options_.threads;
        Iteration it{wall / shape_.tasks, 1};
        it.wall_ns = wall;
        it.work_per_core_ns = per_core;
        it.ideal_ns = std::max(per_core, critical);
        return it;
    }
};

// main() of a peer: parses the command line, runs, turns an InputError into exit status 2.
template <class Run>
int main(int argc, char** argv, const char* program, Run&& run) {
    try {
        return run(parse_options(argc, argv, program));
    } catch (const InputError& e) {
        std::fprintf(stderr, "%s: %s\n", program, e.what());
        return 2;
    }
}

}  // namespace peer
