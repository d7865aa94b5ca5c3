// A native peer of the empty-task JMH benchmarks (EmptyIndependentBenchmark, EmptyChainBenchmark,
// EmptyTreeBenchmark, EmptyDagBenchmark): Taskflow (https://github.com/taskflow/taskflow, 4.1.0,
// vendored unmodified in hts-benchmarks/native/taskflow/) running the very same shape, exported by
// io.hts.benchmarks.ShapeExport as a file of predecessor lists. The mirror of tbb_flow_graph.cpp:
// same command line, shape reader, task bodies, timed loop and JSON report (peer_harness.hpp; read
// its comment for the two modes, empty tasks and --work-ns). Built and run by
// hts-benchmarks/scripts/native-peer.sh; by hand, from hts-benchmarks/native (Taskflow 4 needs C++20):
//
//   g++ -std=c++20 -O2 -DNDEBUG -pthread -I . taskflow_graph.cpp -o taskflow_graph
//   ./taskflow_graph dag.shape --threads 2 --warmup-iterations 3 --warmup-seconds 5
//     --iterations 5 --iteration-seconds 2
//
// What it does, mirroring EmptyTasksBenchmark:
// - one tf::Task per task (Taskflow::emplace of a plain callable), one precede per dependency; the
//   taskflow is built once, then run many times with executor.run(taskflow).wait();
// - the body counts itself, as the Java tasks do with LongAdder.increment(): one relaxed fetch_add on
//   a 128-byte-padded counter of the running worker's own slot, the slot being
//   executor.this_worker_id(). That call is a lookup in an unordered_map keyed by std::thread::id
//   (Taskflow 4 keeps no thread-local worker pointer), so each thread makes it once and keeps the
//   answer in a thread_local: the per-task cost is then a TLS read, like TBB's
//   current_thread_index(), and not a hash lookup TBB's peer does not pay;
// - N threads (--threads, default 2): a tf::Executor of N workers. Unlike TBB's arena, where the
//   caller is one of the N slots and works while it waits, Taskflow's calling thread does not run
//   tasks while it blocks in wait(); so N workers is the fair match for JMH's N-thread scheduler
//   (Scheduler.builder().threads(N): JMH's thread, no worker of it, only puts the roots and waits in
//   GraphRun.await()), and for the TBB peer's N - 1 workers plus the working caller.
//
// Output: the harness's, with "contender":"taskflow", "peer":"taskflow" and the Taskflow version.

#include "peer_harness.hpp"

#include <taskflow/taskflow.hpp>

#include <vector>

namespace {

// The running thread's counter slot: executor.this_worker_id() + 1 (0 only for a thread that is no
// worker of the executor, which never runs a task here), asked once per thread.
thread_local int worker_slot = -1;

class TaskflowShape {
public:
    template <class MakeBody>
    TaskflowShape(const peer::Shape& shape, tf::Executor& executor, MakeBody make_body) : executor_(executor) {
        std::vector<tf::Task> tasks;
        tasks.reserve(static_cast<size_t>(shape.tasks));
        tf::Executor* ex = &executor_;
        for (int i = 0; i < shape.tasks; i++) {
            tasks.push_back(taskflow_.emplace([body = make_body(i), ex] {
                int slot = worker_slot;
                if (slot < 0) {
                    slot = worker_slot = ex->this_worker_id() + 1;
                }
                body(slot);
            }));
        }
        for (int i = 0; i < shape.tasks; i++) {
            for (int k = shape.pred_start[i]; k < shape.pred_start[i + 1]; k++) {
                tasks[static_cast<size_t>(shape.preds[k])].precede(tasks[static_cast<size_t>(i)]);
            }
        }
    }

    void run() { executor_.run(taskflow_).wait(); }

private:
    tf::Executor& executor_;
    tf::Taskflow taskflow_;
};

int run(const peer::Options& options) {
    peer::Harness h(options, "taskflow");
    const peer::Shape& shape = h.shape();
    tf::Executor executor(static_cast<size_t>(options.threads));
    std::unique_ptr<TaskflowShape> graph;
    h.build(static_cast<int>(executor.num_workers()) + 1,
            [&](auto make_body) { graph = std::make_unique<TaskflowShape>(shape, executor, make_body); });
    std::fprintf(stderr, "Taskflow %s, %s: %d tasks, %lld edges, %d roots; %zu worker threads (the caller only "
                 "waits); built in %.1f ms\n",
                 tf::version(), shape.name.c_str(), shape.tasks, shape.edges, static_cast<int>(shape.roots.size()),
                 executor.num_workers(), h.build_ms());
    h.measure([&] { graph->run(); });
    h.report({{"peer", peer::json_string("taskflow")}, {"taskflow_version", peer::json_string(tf::version())}});
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return peer::main(argc, argv, "taskflow_graph", run);
}
