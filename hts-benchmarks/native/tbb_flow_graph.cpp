// A native peer of the empty-task JMH benchmarks (EmptyIndependentBenchmark, EmptyChainBenchmark,
// EmptyTreeBenchmark, EmptyDagBenchmark): oneTBB's flow graph running the very same shape, exported
// by io.hts.benchmarks.ShapeExport as a file of predecessor lists (format: ShapeFile's class comment).
// Its sibling taskflow_graph.cpp runs the same shapes on Taskflow; the shape reader, command line,
// task bodies, timed loop and JSON report are both programs' peer_harness.hpp (read its comment for
// the two modes, empty tasks and --work-ns). Built and run by hts-benchmarks/scripts/native-peer.sh;
// by hand, from hts-benchmarks/native:
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
//   arena slot (tbb::this_task_arena::current_thread_index()); the harness sums, resets and checks
//   the counters after every run, inside the timed loop;
// - N threads (--threads, default 2): tbb::global_control(max_allowed_parallelism, N) and a
//   tbb::task_arena of N slots, the calling thread being one of them (it puts the roots and works
//   while it waits), so N - 1 TBB workers plus the caller.
//
// Output: the harness's, with "contender":"tbbFlowGraph", "peer":"tbb" and the oneTBB version.

#include "peer_harness.hpp"

#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/version.h>

#include <memory>
#include <vector>

namespace {

// The shape as a flow graph of continue_nodes, built once (inside the arena that runs it) and run many times.
class FlowGraphShape {
public:
    using Node = tbb::flow::continue_node<tbb::flow::continue_msg>;

    template <class MakeBody>
    FlowGraphShape(const peer::Shape& shape, MakeBody make_body) : roots_(shape.roots) {
        nodes_.reserve(static_cast<size_t>(shape.tasks));
        for (int i = 0; i < shape.tasks; i++) {
            nodes_.push_back(std::make_unique<Node>(graph_, [body = make_body(i)](const tbb::flow::continue_msg&) {
                body(tbb::this_task_arena::current_thread_index());
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

int run(const peer::Options& options) {
    peer::Harness h(options, "tbbFlowGraph");
    const peer::Shape& shape = h.shape();
    tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(options.threads));
    tbb::task_arena arena(options.threads);
    arena.initialize();
    std::unique_ptr<FlowGraphShape> graph;
    arena.execute([&] {
        h.build(arena.max_concurrency(),
                [&](auto make_body) { graph = std::make_unique<FlowGraphShape>(shape, make_body); });
    });
    std::fprintf(stderr, "oneTBB %s (runtime %s) flow graph, %s: %d tasks, %lld edges, %d roots; %d threads "
                 "(arena concurrency %d); built in %.1f ms\n",
                 TBB_VERSION_STRING, TBB_runtime_version(), shape.name.c_str(), shape.tasks, shape.edges,
                 static_cast<int>(shape.roots.size()), options.threads, arena.max_concurrency(), h.build_ms());
    arena.execute([&] { h.measure([&] { graph->run(); }); });
    h.report({{"peer", peer::json_string("tbb")},
              {"tbb_version", peer::json_string(TBB_VERSION_STRING)},
              {"tbb_runtime", peer::json_string(TBB_runtime_version())}});
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return peer::main(argc, argv, "tbb_flow_graph", run);
}
