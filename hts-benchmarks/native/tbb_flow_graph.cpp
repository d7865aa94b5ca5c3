// The native peer of the empty-task JMH benchmarks (EmptyIndependentBenchmark, EmptyChainBenchmark,
// EmptyTreeBenchmark, EmptyDagBenchmark): oneTBB's flow graph running the very same shape, exported
// by io.hts.benchmarks.ShapeExport as a file of predecessor lists (format: ShapeFile's class comment).
// Built and run by hts-benchmarks/scripts/native-peer.sh; by hand:
//
//   g++ -std=c++17 -O2 -DNDEBUG -pthread tbb_flow_graph.cpp -ltbb -o tbb_flow_graph
//   ./tbb_flow_graph dag.shape --threads 2 --warmup-iterations 3 --warmup-seconds 5
//     --iterations 5 --iteration-seconds 2
//
// What it does, mirroring EmptyTasksBenchmark:
// - one tbb::flow::continue_node<continue_msg> per task (default policy: each node's body is a task
//   of its own), one make_edge per dependency; built once, then run many times: put a continue_msg
//   into every root, graph::wait_for_all();
// - the body counts itself, as the Java tasks do with LongAdder.increment(): one relaxed fetch_add
//   (a locked add on x86, like the LongAdder's CAS) on a 128-byte-padded counter of the thread's own
//   arena slot; after every run the counters are summed, reset and checked against the task count
//   (inside the timed loop, as the Java benchmark's verify()), so no body can be optimised away;
// - N threads (--threads, default 2): tbb::global_control(max_allowed_parallelism, N) and a
//   tbb::task_arena of N slots, the calling thread being one of them (it puts the roots and works
//   while it waits), so N - 1 TBB workers plus the caller;
// - measured like JMH's AverageTime mode: warm-up iterations, then measurement iterations of a fixed
//   time, each running the graph as many times as fit; an iteration's score is its elapsed time over
//   (runs x tasks), in ns per task. Reports the median, min and max over the measurement iterations.
//
// Output: human-readable lines on stderr, one JSON object on one line on stdout. Exit status 2 on a
// bad argument or shape file (the message names the file and line), 1 when a run miscounts.

#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/version.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

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

// Every task counts itself here, like the Java benchmarks' LongAdder: one padded cell per arena slot.
class TaskCounter {
public:
    explicit TaskCounter(int slots) : slots_(slots), cells_(new Cell[static_cast<size_t>(slots)]) {}

    void increment() {
        int slot = tbb::this_task_arena::current_thread_index();
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

// The shape as a flow graph of continue_nodes, built once (inside the arena that runs it) and run many times.
class FlowGraphShape {
public:
    using Node = tbb::flow::continue_node<tbb::flow::continue_msg>;

    FlowGraphShape(const Shape& shape, TaskCounter& counter) : roots_(shape.roots) {
        nodes_.reserve(static_cast<size_t>(shape.tasks));
        for (int i = 0; i < shape.tasks; i++) {
            nodes_.push_back(std::make_unique<Node>(graph_, [&counter](const tbb::flow::continue_msg&) {
                counter.increment();
                return tbb::flow::continue_msg();
            }));
        }
        for (int i = 0; i < shape.tasks; i++) {
            for (int k = shape.pred_start[i]; k < shape.pred_start[i + 1]; k++) {
                tbb::flow::make_edge(*nodes_[static_cast<size_t>(shape.preds[k])], *nodes_[static_cast<size_t>(i)]);
            }
        }
    }

    // One run; call from inside the arena the graph was built in.
    void run() {
        for (int root : roots_) {
            nodes_[static_cast<size_t>(root)]->try_put(tbb::flow::continue_msg());
        }
        graph_.wait_for_all();
    }

private:
    tbb::flow::graph graph_;               // declared first: destroyed after the nodes that refer to it
    std::vector<std::unique_ptr<Node>> nodes_;
    std::vector<int> roots_;
};

struct Options {
    std::string shape_file;
    int threads = 2;
    int warmup_iterations = 3;    // EmptyTasksBenchmark's @Warmup(iterations = 3, time = 5)
    double warmup_seconds = 5;
    int iterations = 5;           // and @Measurement(iterations = 5, time = 2)
    double iteration_seconds = 2;
};

Options parse_options(int argc, char** argv) {
    Options o;
    const char* usage = "usage: tbb_flow_graph SHAPE_FILE [--threads N] [--warmup-iterations N] "
                        "[--warmup-seconds S] [--iterations N] [--iteration-seconds S]";
    for (int a = 1; a < argc; a++) {
        std::string arg = argv[a];
        if (arg.rfind("--", 0) != 0) {
            if (!o.shape_file.empty()) {
                throw InputError(std::string("two shape files given\n") + usage);
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
    if (o.threads < 1 || o.warmup_iterations < 0 || o.iterations < 1 || o.warmup_seconds < 0 || o.iteration_seconds <= 0) {
        throw InputError("threads and iterations must be at least 1, times positive\n" + std::string(usage));
    }
    return o;
}

struct Iteration {
    double ns_per_task;
    long long runs;
};

// Runs the graph until the iteration's time is up; verifies every run's count.
Iteration measure(FlowGraphShape& graph, TaskCounter& counter, const Shape& shape, double seconds) {
    using Clock = std::chrono::steady_clock;
    auto start = Clock::now();
    auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    long long runs = 0;
    Clock::time_point now;
    do {
        graph.run();
        long long ran = counter.sum_then_reset();
        if (ran != shape.tasks) {
            std::fprintf(stderr, "ran %lld tasks, expected %d\n", ran, shape.tasks);
            std::exit(1);
        }
        runs++;
        now = Clock::now();
    } while (now < deadline);
    double ns = std::chrono::duration<double, std::nano>(now - start).count();
    return {ns / (static_cast<double>(runs) * shape.tasks), runs};
}

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
        }
        out += c;
    }
    return out + "\"";
}

std::string json_numbers(const std::vector<Iteration>& its, bool runs) {
    std::string out = "[";
    char buffer[64];
    for (size_t i = 0; i < its.size(); i++) {
        if (runs) {
            std::snprintf(buffer, sizeof buffer, "%s%lld", i ? "," : "", its[i].runs);
        } else {
            std::snprintf(buffer, sizeof buffer, "%s%.3f", i ? "," : "", its[i].ns_per_task);
        }
        out += buffer;
    }
    return out + "]";
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int run(const Options& o) {
    Shape shape = ShapeFileReader(o.shape_file).read();
    tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(o.threads));
    tbb::task_arena arena(o.threads);
    arena.initialize();
    TaskCounter counter(arena.max_concurrency());
    std::unique_ptr<FlowGraphShape> graph;
    auto build_start = std::chrono::steady_clock::now();
    arena.execute([&] { graph = std::make_unique<FlowGraphShape>(shape, counter); });
    double build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - build_start).count();
    std::fprintf(stderr, "oneTBB %s (runtime %s) flow graph, %s: %d tasks, %lld edges, %d roots; %d threads "
                 "(arena concurrency %d); built in %.1f ms\n",
                 TBB_VERSION_STRING, TBB_runtime_version(), shape.name.c_str(), shape.tasks, shape.edges,
                 static_cast<int>(shape.roots.size()), o.threads, arena.max_concurrency(), build_ms);

    std::vector<Iteration> warmup;
    std::vector<Iteration> measured;
    arena.execute([&] {
        for (int i = 0; i < o.warmup_iterations; i++) {
            warmup.push_back(measure(*graph, counter, shape, o.warmup_seconds));
            std::fprintf(stderr, "# Warmup Iteration %3d: %.3f ns/task (%lld runs)\n", i + 1,
                         warmup.back().ns_per_task, warmup.back().runs);
        }
        for (int i = 0; i < o.iterations; i++) {
            measured.push_back(measure(*graph, counter, shape, o.iteration_seconds));
            std::fprintf(stderr, "Iteration %3d: %.3f ns/task (%lld runs)\n", i + 1,
                         measured.back().ns_per_task, measured.back().runs);
        }
    });
    std::vector<double> scores;
    for (const Iteration& it : measured) {
        scores.push_back(it.ns_per_task);
    }
    double med = median(scores);
    double lo = *std::min_element(scores.begin(), scores.end());
    double hi = *std::max_element(scores.begin(), scores.end());
    std::fprintf(stderr, "%s: median %.3f ns/task (min %.3f, max %.3f) over %d iterations of %.1f s\n",
                 shape.name.c_str(), med, lo, hi, o.iterations, o.iteration_seconds);
    std::printf("{\"contender\":\"tbbFlowGraph\",\"tbb_version\":%s,\"tbb_runtime\":%s,\"shape\":%s,\"file\":%s,"
                "\"tasks\":%d,\"edges\":%lld,\"roots\":%d,\"threads\":%d,\"build_ms\":%.3f,"
                "\"warmup_iterations\":%d,\"warmup_seconds\":%g,\"iterations\":%d,\"iteration_seconds\":%g,"
                "\"warmup_ns_per_task\":%s,\"ns_per_task\":%s,\"runs\":%s,"
                "\"median\":%.3f,\"min\":%.3f,\"max\":%.3f}\n",
                json_string(TBB_VERSION_STRING).c_str(), json_string(TBB_runtime_version()).c_str(),
                json_string(shape.name).c_str(), json_string(o.shape_file).c_str(), shape.tasks, shape.edges,
                static_cast<int>(shape.roots.size()), o.threads, build_ms, o.warmup_iterations, o.warmup_seconds,
                o.iterations, o.iteration_seconds, json_numbers(warmup, false).c_str(),
                json_numbers(measured, false).c_str(), json_numbers(measured, true).c_str(), med, lo, hi);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(parse_options(argc, argv));
    } catch (const InputError& e) {
        std::fprintf(stderr, "tbb_flow_graph: %s\n", e.what());
        return 2;
    }
}
