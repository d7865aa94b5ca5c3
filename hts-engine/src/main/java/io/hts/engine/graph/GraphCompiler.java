package io.hts.engine.graph;

import io.hts.engine.graph.internal.CompiledGraph;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Validates a graph and compiles it into a {@link CompiledGraph}. Every pass is iterative and
 * O(V + E), so a million-task chain compiles without deep recursion.
 *
 * <p>Also the one class of this package that knows the compiled form's type: {@link TaskGraph}
 * keeps its compiled form as an opaque object (made by {@link #compileForm}, read back by
 * {@link #topology} and by the bridge {@link #installBridge} installs), so that the public
 * {@code TaskGraph} and the internal {@code CompiledGraph} do not depend on each other both ways.
 */
final class GraphCompiler {

    private static final int MAX_REPORTED = 10;

    private GraphCompiler() {}

    /**
     * Installs the bridge by which {@link CompiledGraph#of} reads a graph's compiled form; called
     * once, by TaskGraph's class initialiser.
     */
    static void installBridge() {
        CompiledGraph.install(graph -> (CompiledGraph) graph.compiledForm());
    }

    /** {@link #compile}, typed for TaskGraph, which keeps the result without knowing its type. */
    static Object compileForm(TaskGraph graph, Task<?>[] tasks, Map<String, Object> byName) {
        return compile(graph, tasks, byName);
    }

    /** The shape of a compiled form {@link #compileForm} made. */
    static GraphTopology topology(Object compiledForm) {
        return ((CompiledGraph) compiledForm).topology();
    }

    static CompiledGraph compile(TaskGraph graph, Task<?>[] tasks, Map<String, Object> byName) {
        int n = tasks.length;
        int[] predecessorStart = new int[n + 1];
        int[] edges = new int[Math.max(16, n)];
        int edgeCount = 0;
        int[] mark = new int[n];
        List<String> problems = new ArrayList<>();
        List<String> offenders = new ArrayList<>();
        GraphValidationException.@Nullable Problem firstProblem = null;

        for (int i = 0; i < n; i++) {
            Task<?> task = tasks[i];
            predecessorStart[i] = edgeCount;
            int declared = task.declaredDependencyCount();
            for (int d = 0; d < declared; d++) {
                Object dep = task.declaredDependency(d);
                List<Task<?>> resolved = resolve(dep, byName);
                if (resolved == null) {
                    firstProblem = first(firstProblem, GraphValidationException.Problem.UNKNOWN_DEPENDENCY);
                    offenders.add(task.name());
                    problems.add("task '" + task.name() + "' depends on '" + dep + "', which is not a task, group"
                            + " or barrier of graph '" + graph.name() + "'");
                    continue;
                }
                for (Task<?> up : resolved) {
                    if (up.graph() != graph) {
                        firstProblem = first(firstProblem, GraphValidationException.Problem.FOREIGN_DEPENDENCY);
                        offenders.add(task.name());
                        problems.add("task '" + task.name() + "' depends on task '" + up.name() + "' of graph '"
                                + up.graph().name() + "'");
                        continue;
                    }
                    int p = up.index();
                    if (p == i) {
                        firstProblem = first(firstProblem, GraphValidationException.Problem.SELF_DEPENDENCY);
                        offenders.add(task.name());
                        problems.add("task '" + task.name() + "' depends on itself");
                        continue;
                    }
                    if (mark[p] != i + 1) {
                        mark[p] = i + 1;
                        if (edgeCount == edges.length) {
                            edges = Arrays.copyOf(edges, edges.length * 2);
                        }
                        edges[edgeCount++] = p;
                    }
                }
            }
        }
        predecessorStart[n] = edgeCount;
        if (firstProblem != null) {
            throw failure(firstProblem, offenders, problems, graph);
        }
        int[] predecessors = Arrays.copyOf(edges, edgeCount);
        for (int i = 0; i < n; i++) {
            if (predecessorStart[i + 1] - predecessorStart[i] > 1) {
                Arrays.sort(predecessors, predecessorStart[i], predecessorStart[i + 1]);
            }
        }

        int[] inDegree = new int[n];
        int[] successorStart = new int[n + 1];
        for (int i = 0; i < n; i++) {
            inDegree[i] = predecessorStart[i + 1] - predecessorStart[i];
            for (int k = predecessorStart[i]; k < predecessorStart[i + 1]; k++) {
                successorStart[predecessors[k] + 1]++;
            }
        }
        for (int i = 0; i < n; i++) {
            successorStart[i + 1] += successorStart[i];
        }
        int[] successors = new int[edgeCount];
        int[] fill = Arrays.copyOf(successorStart, n);
        for (int i = 0; i < n; i++) {
            for (int k = predecessorStart[i]; k < predecessorStart[i + 1]; k++) {
                successors[fill[predecessors[k]]++] = i;
            }
        }

        // Kahn's algorithm: the topological order, and cycle detection.
        int[] remaining = inDegree.clone();
        int[] order = new int[n];
        int head = 0;
        int tail = 0;
        int rootCount = 0;
        for (int i = 0; i < n; i++) {
            if (remaining[i] == 0) {
                order[tail++] = i;
                rootCount++;
            }
        }
        int[] roots = Arrays.copyOf(order, rootCount);
        while (head < tail) {
            int v = order[head++];
            for (int k = successorStart[v]; k < successorStart[v + 1]; k++) {
                int s = successors[k];
                if (--remaining[s] == 0) {
                    order[tail++] = s;
                }
            }
        }
        if (tail < n) {
            List<String> cycle = findCycle(tasks, remaining, predecessorStart, predecessors);
            throw new GraphValidationException(
                    GraphValidationException.Problem.CYCLE,
                    cycle,
                    "graph '" + graph.name() + "' has a cycle: " + String.join(" -> ", cycle) + " -> " + cycle.get(0)
                            + "; a task graph must be acyclic (remove one of these dependencies)");
        }
        return new CompiledGraph(
                graph,
                tasks,
                new GraphTopology(
                        graph.name(), tasks, successorStart, successors, predecessorStart, predecessors, roots, order));
    }

    /**
     * Finds one cycle among the tasks Kahn's algorithm could not order. Each of them has at least
     * one unordered predecessor (otherwise its counter would have reached zero), so walking from
     * any of them to an unordered predecessor must revisit a task; the walk between the two visits
     * is a cycle. Returned in dependency order (each task depends on the one before it).
     */
    private static List<String> findCycle(
            Task<?>[] tasks, int[] remaining, int[] predecessorStart, int[] predecessors) {
        int n = tasks.length;
        int start = 0;
        while (remaining[start] == 0) {
            start++;
        }
        int[] visitedAt = new int[n];
        Arrays.fill(visitedAt, -1);
        int[] path = new int[n];
        int length = 0;
        int v = start;
        while (visitedAt[v] < 0) {
            visitedAt[v] = length;
            path[length++] = v;
            int next = -1;
            for (int k = predecessorStart[v]; k < predecessorStart[v + 1]; k++) {
                if (remaining[predecessors[k]] > 0) {
                    next = predecessors[k];
                    break;
                }
            }
            v = next;
        }
        List<String> cycle = new ArrayList<>();
        for (int k = visitedAt[v]; k < length; k++) {
            cycle.add(tasks[path[k]].name());
        }
        Collections.reverse(cycle);
        return cycle;
    }

    private static @Nullable List<Task<?>> resolve(Object dependency, Map<String, Object> byName) {
        Object d = dependency instanceof String name ? byName.get(name) : dependency;
        if (d instanceof Task<?> t) {
            return List.of(t);
        }
        if (d instanceof Dependency dep) {
            return dep.tasks();
        }
        return null;
    }

    private static GraphValidationException.Problem first(
            GraphValidationException.@Nullable Problem current, GraphValidationException.Problem candidate) {
        return current != null ? current : candidate;
    }

    private static GraphValidationException failure(
            GraphValidationException.Problem problem, List<String> offenders, List<String> problems, TaskGraph graph) {
        StringBuilder sb = new StringBuilder("graph '").append(graph.name()).append("' is not valid: ");
        for (int i = 0; i < Math.min(problems.size(), MAX_REPORTED); i++) {
            sb.append(i == 0 ? "" : "; ").append(problems.get(i));
        }
        if (problems.size() > MAX_REPORTED) {
            sb.append("; and ").append(problems.size() - MAX_REPORTED).append(" more");
        }
        return new GraphValidationException(
                problem, offenders.stream().distinct().toList(), sb.toString());
    }
}
