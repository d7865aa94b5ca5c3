#!/usr/bin/env bash
# The native peers, in one command: oneTBB's flow graph (hts-benchmarks/native/tbb_flow_graph.cpp) and
# Taskflow 4.1.0 (hts-benchmarks/native/taskflow_graph.cpp, headers vendored in native/taskflow/)
# against the empty-task JMH benchmarks (Empty{Independent,Chain,Tree,Dag}Benchmark) on the very same
# shapes, interleaved round by round, so that the ratio of HTS to native schedulers is re-measured
# by anyone on any Linux box:
#
#   bash hts-benchmarks/scripts/native-peer.sh                                  # about 30 min on 2 cores
#   WI=3 W=3 I=5 R=1 OUT=/tmp/np bash hts-benchmarks/scripts/native-peer.sh     # shorter: about 16 min
#   PEERS=tbb bash hts-benchmarks/scripts/native-peer.sh                        # one peer only
#
# Needs g++ (C++20 for Taskflow: g++ 11 or later), oneTBB's headers and library when PEERS has tbb
# (Debian/Ubuntu: apt-get install g++ libtbb-dev), a JDK 17 (java on the PATH or JAVA_HOME) and
# python3 (the summary). It checks them first and says what is missing. The normal Maven build never
# touches the C++; only this script compiles it. The two programs share their shape reader, command
# line, task bodies, timed loop and JSON report (native/peer_harness.hpp).
#
# What it does:
#   1. compiles each peer of PEERS into hts-benchmarks/target/native/ (tbb_flow_graph: $CXX $CXXFLAGS
#      ... $TBB_LIBS; taskflow_graph: $CXX $TF_CXXFLAGS -I hts-benchmarks/native, header-only) when
#      its binary is missing or older than its source, peer_harness.hpp or this script;
#   2. builds hts-benchmarks/target/benchmarks.jar (./mvnw -pl hts-benchmarks -am package -DskipTests);
#   3. exports each shape as its benchmark class builds it (io.hts.benchmarks.ShapeExport) into
#      $OUT/shapes/<shape>.shape, with $OUT/shapes/manifest.tsv naming the class of each;
#   4. for each of ROUNDS rounds and each shape: one JMH run of the METHODS of that shape's class, and
#      each peer's program on the same shape file, with the same thread count, warm-up and
#      iterations; odd rounds run JMH first and then the peers in PEERS order, even rounds the peers
#      in reverse order and JMH last (so slow drift of the machine hits all of them alike);
#   5. with CPU_WORK=1, after those rounds, CpuWorkBenchmark's 0.5 ms workloads (the seed's targets 1
#      and 2) the same way: CPU_ROUNDS rounds of its CPU_METHODS and of each peer with --work-ns on
#      the same shapes (10,000 independent tasks; the 5,000-task DAG, which is EmptyDagBenchmark's),
#      one run per iteration, the overhead over the ideal measured as CpuWorkBenchmark measures it;
#   6. prints, and writes to $OUT/summary.md and $OUT/summary.csv, the median ns per task of each
#      shape and contender (JMH methods, the baseline's when BASELINE_JAR is set, tbbFlowGraph,
#      taskflow) over all measurement iterations of all rounds, min and max, each round's median, and
#      every contender's median over Taskflow's and over TBB's; with CPU_WORK=1 also the median
#      overhead and efficiency of each contender on the 0.5 ms workloads.
#
# Knobs (environment variables):
#   ROUNDS=3              rounds of (JMH, peers) per shape
#   SHAPES="independent chain tree dag"   which shapes (ShapeExport's keys), in this order
#   PEERS="tbb taskflow"  which native peers run (contenders tbbFlowGraph and taskflow), in this order
#   THREADS=2             TBB: global_control and arena of THREADS threads (the caller being one);
#                         Taskflow: an executor of THREADS workers (its caller only waits, as JMH's
#                         thread does in HTS's scheduler); Java: -XX:ActiveProcessorCount=THREADS,
#                         since the benchmarks size their schedulers and ForkJoinPool by
#                         availableProcessors()
#   METHODS="hts htsNoProfiling completableFuture"   the EmptyTasksBenchmark methods JMH runs
#   WI=3 W=5 I=5 R=2      warm-up iterations, warm-up seconds, measurement iterations, seconds per
#                         iteration, for all sides (defaults: EmptyTasksBenchmark's @Warmup and
#                         @Measurement)
#   JVM_ARGS="-Xms3g -Xmx3g -XX:+AlwaysPreTouch"
#                         the forked JVM's flags (given to JMH's -jvmArgsAppend, which replaces the
#                         class's @Fork ones, so the default repeats them; the same for a baseline's
#                         jar, whatever its own @Fork said: the heap touched up front, so that no
#                         contender pays first-touch page faults in its measured iterations)
#   JMH_OPTS=""           more JMH arguments, e.g. "-prof gc"
#   BASELINE_JAR=""       the benchmarks.jar of an earlier revision (e.g. built in a worktree of it): its
#                         METHODS (and CPU_METHODS) run too, in every round right after this revision's,
#                         as contenders named <method>@baseline, and the summary gives each method's
#                         ratio to them
#   BASELINE_NAME=""      what to call that revision in settings.txt (a commit, say)
#   CPU_WORK=0            1: step 5 as well
#   CPU_SHAPES="independent dag"   CpuWorkBenchmark's shape parameter values to run
#   CPU_METHODS="hts"     the CpuWorkBenchmark methods JMH runs (hts completableFuture forkJoin)
#   CPU_WORK_US=500       the work of one task, in microseconds (JMH -p workMicros; peers --work-ns)
#   CPU_ROUNDS=$ROUNDS CPU_WI=3 CPU_I=5   rounds, warm-up and measurement iterations (one run each;
#                         CpuWorkBenchmark's defaults)
#   CPU_JVM_ARGS="-Xms2g -Xmx2g"   the forked JVM's flags for CpuWorkBenchmark
#   OUT=/tmp/native-peer-<UTC date and time>   where raw results, logs and the summary go
#   MVN_ARGS="-q"         extra Maven arguments for step 2 (e.g. "-q -o" offline)
#   SKIP_BUILD=0          1: reuse hts-benchmarks/target/benchmarks.jar as it is
#   BENCH_CP=""           a Java class path holding the benchmarks, JMH and their dependencies, used
#                         instead of benchmarks.jar (implies SKIP_BUILD=1): e.g. the device kit's
#                         .device/mods/hts-benchmarks/classes and .device/lib/*, on a machine with no
#                         Maven; BASELINE_JAR may be such a class path too
#   CXX=g++  CXXFLAGS="-std=c++17 -O2 -DNDEBUG -pthread"  TBB_LIBS="-ltbb"   the TBB peer's build
#   TF_CXXFLAGS="-std=c++20 -O2 -DNDEBUG -pthread"   the Taskflow peer's build (Taskflow 4 needs C++20)
#
# Raw results in $OUT/raw: round<N>-<shape>-jmh.json (JMH -rf json) and .txt (its output),
# round<N>-<shape>-<peer>.json (one JSON line) and .txt (its report), for <peer> tbb and taskflow;
# with CPU_WORK=1 the same as cpu-round<N>-<shape>-*; machine facts (with the oneTBB and Taskflow
# versions) in $OUT/machine.txt, the knobs used in $OUT/settings.txt: all small text files, to keep
# in docs/ (not so $OUT/shapes, 1-7 MB a shape, which ShapeExport rebuilds).
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MODULE=$(cd "$SCRIPT_DIR/.." && pwd)
ROOT=$(cd "$MODULE/.." && pwd)

ROUNDS=${ROUNDS:-3}
SHAPES=${SHAPES:-independent chain tree dag}
PEERS=${PEERS:-tbb taskflow}
THREADS=${THREADS:-2}
METHODS=${METHODS:-hts htsNoProfiling completableFuture}
WI=${WI:-3}; W=${W:-5}; I=${I:-5}; R=${R:-2}
JVM_ARGS=${JVM_ARGS:--Xms3g -Xmx3g -XX:+AlwaysPreTouch}
JMH_OPTS=${JMH_OPTS:-}
CPU_WORK=${CPU_WORK:-0}
CPU_SHAPES=${CPU_SHAPES:-independent dag}
CPU_METHODS=${CPU_METHODS:-hts}
CPU_WORK_US=${CPU_WORK_US:-500}
CPU_ROUNDS=${CPU_ROUNDS:-$ROUNDS}
CPU_WI=${CPU_WI:-3}; CPU_I=${CPU_I:-5}
CPU_JVM_ARGS=${CPU_JVM_ARGS:--Xms2g -Xmx2g}
OUT=${OUT:-/tmp/native-peer-$(date -u +%Y%m%d-%H%M%S)}
MVN_ARGS=${MVN_ARGS:--q}
SKIP_BUILD=${SKIP_BUILD:-0}
BASELINE_JAR=${BASELINE_JAR:-}
BASELINE_NAME=${BASELINE_NAME:-}
CXX=${CXX:-g++}
CXXFLAGS=${CXXFLAGS:--std=c++17 -O2 -DNDEBUG -pthread}
TBB_LIBS=${TBB_LIBS:--ltbb}
TF_CXXFLAGS=${TF_CXXFLAGS:--std=c++20 -O2 -DNDEBUG -pthread}

NATIVE=$MODULE/native
JAR=${BENCH_CP:-$MODULE/target/benchmarks.jar}
[[ -z ${BENCH_CP:-} ]] || SKIP_BUILD=1
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java

die() { echo "native-peer: $*" >&2; exit 1; }
say() { echo "[native-peer $(date -u +%H:%M:%S)] $*"; }

# A peer's program, its contender name in the summary, and what it is called in the log.
peer_program() { case $1 in tbb) echo tbb_flow_graph;; taskflow) echo taskflow_graph;; esac; }
peer_title() { case $1 in tbb) echo "oneTBB flow graph";; taskflow) echo "Taskflow";; esac; }
binary() { echo "$MODULE/target/native/$(peer_program "$1")"; }

# ---------------------------------------------------------------- what it needs
command -v "$CXX" >/dev/null || die "no C++ compiler '$CXX' (Debian/Ubuntu: apt-get install g++; or set CXX)"
[[ -n $PEERS ]] || die "PEERS is empty (known: tbb taskflow)"
for p in $PEERS; do
  case $p in
    tbb)
      echo '#include <oneapi/tbb/flow_graph.h>' | $CXX $CXXFLAGS -x c++ -E - >/dev/null 2>&1 \
        || die "oneTBB headers not found (oneapi/tbb/flow_graph.h) by '$CXX $CXXFLAGS' (Debian/Ubuntu: apt-get install libtbb-dev; elsewhere add -I<tbb>/include to CXXFLAGS; or leave tbb out of PEERS)";;
    taskflow)
      [[ -f $NATIVE/taskflow/taskflow.hpp ]] || die "no vendored Taskflow at $NATIVE/taskflow/taskflow.hpp"
      printf '#include <bit>\nint main() { return std::bit_width(1u) - 1; }\n' | $CXX $TF_CXXFLAGS -x c++ -fsyntax-only - 2>/dev/null \
        || die "'$CXX $TF_CXXFLAGS' does not compile C++20 (Taskflow 4 needs it: g++ 11 or later), or leave taskflow out of PEERS";;
    *) die "unknown peer '$p' in PEERS (known: tbb taskflow)";;
  esac
done
command -v "$JAVA" >/dev/null || die "no java ('$JAVA'); install a JDK 17 or set JAVA_HOME"
command -v python3 >/dev/null || die "no python3 (it writes the summary); apt-get install python3"
for s in $SHAPES; do
  case $s in independent|chain|tree|dag) ;; *) die "unknown shape '$s' in SHAPES (known: independent chain tree dag)";; esac
done
if [[ $CPU_WORK == 1 ]]; then
  for s in $CPU_SHAPES; do
    case $s in independent|dag) ;; *) die "unknown shape '$s' in CPU_SHAPES (known: independent dag)";; esac
  done
fi

# ---------------------------------------------------------------- 1. the native programs
for p in $PEERS; do
  program=$(peer_program "$p"); source=$NATIVE/$program.cpp; bin=$(binary "$p")
  if [[ ! -x $bin || $source -nt $bin || $NATIVE/peer_harness.hpp -nt $bin || ${BASH_SOURCE[0]} -nt $bin ]]; then
    say "compiling $source"
    mkdir -p "$(dirname "$bin")"
    case $p in
      # shellcheck disable=SC2086
      tbb) $CXX $CXXFLAGS -o "$bin" "$source" $TBB_LIBS \
             || die "compiling $source failed (is libtbb installed? Debian/Ubuntu: apt-get install libtbb-dev)";;
      # shellcheck disable=SC2086
      taskflow) $CXX $TF_CXXFLAGS -I "$NATIVE" -o "$bin" "$source" || die "compiling $source failed";;
    esac
  fi
done

# ---------------------------------------------------------------- 2. the benchmarks jar
if [[ $SKIP_BUILD != 1 ]]; then
  say "building $JAR"
  # shellcheck disable=SC2086
  (cd "$ROOT" && ./mvnw $MVN_ARGS -pl hts-benchmarks -am package -DskipTests -Djcstress.skip=true) \
    || die "the Maven build failed"
fi
# a jar, or a class path (BENCH_CP): every entry must exist
on_path() { local e; local IFS=:; for e in $1; do [[ -e $e ]] || return 1; done; }
on_path "$JAR" || die "no $JAR (run without SKIP_BUILD=1)"
[[ -z $BASELINE_JAR ]] || on_path "$BASELINE_JAR" || die "no BASELINE_JAR $BASELINE_JAR"

# ---------------------------------------------------------------- 3. the shapes
# an OUT used before: its earlier raw results and summary go, so that this run is judged on its own
rm -rf "$OUT/raw" "$OUT/summary.md" "$OUT/summary.csv" "$OUT/summary-cpu-work.csv"
mkdir -p "$OUT/shapes" "$OUT/raw"
# shellcheck disable=SC2086
"$JAVA" -cp "$JAR" io.hts.benchmarks.ShapeExport "$OUT/shapes" $SHAPES > "$OUT/shapes/manifest.tsv" \
  || die "exporting the shapes failed"
say "shapes: $(cut -f1,3,4,5 "$OUT/shapes/manifest.tsv" | tr '\t\n' ' ;')"
if [[ $CPU_WORK == 1 ]]; then
  # CpuWorkBenchmark's shapes: its dag is Shape.layered(100, 50, 3, 42), EmptyDagBenchmark's, exported
  # as such; its independent one is Shape.independent(10_000), written here (a header and 10,000 empty
  # predecessor lines, ShapeFile's format). Keep these in step with CpuWorkBenchmark.setUp().
  mkdir -p "$OUT/shapes/cpu"
  "$JAVA" -cp "$JAR" io.hts.benchmarks.ShapeExport "$OUT/shapes/cpu" dag > "$OUT/shapes/cpu/manifest.tsv" \
    || die "exporting the shapes failed"
  awk 'BEGIN { print "hts-shape 1 independent-10000 10000 0"; for (i = 0; i < 10000; i++) print "" }' \
    > "$OUT/shapes/cpu/independent.shape"
  printf 'independent\tio.hts.benchmarks.CpuWorkBenchmark\tindependent-10000\t10000\t0\t%s\n' \
    "$OUT/shapes/cpu/independent.shape" >> "$OUT/shapes/cpu/manifest.tsv"
fi

TF_VERSION=$(sed -n 's/^ *return "\([0-9.]*\)";.*/\1/p' "$NATIVE/taskflow/taskflow.hpp" | head -1)
{
  echo "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  for v in ROUNDS SHAPES PEERS THREADS METHODS WI W I R JVM_ARGS JMH_OPTS CXX CXXFLAGS TBB_LIBS TF_CXXFLAGS \
           BASELINE_JAR BASELINE_NAME CPU_WORK; do echo "$v=${!v}"; done
  if [[ $CPU_WORK == 1 ]]; then
    for v in CPU_SHAPES CPU_METHODS CPU_WORK_US CPU_ROUNDS CPU_WI CPU_I CPU_JVM_ARGS; do echo "$v=${!v}"; done
  fi
  echo "taskflow_version=$TF_VERSION (vendored: hts-benchmarks/native/taskflow)"
} > "$OUT/settings.txt"
{
  date -u; echo "nproc: $(nproc)"; lscpu; free -g
  "$JAVA" -version 2>&1; $CXX --version | head -1
  echo "oneTBB: $(grep -h 'define TBB_VERSION_\(MAJOR\|MINOR\) ' /usr/include/oneapi/tbb/version.h 2>/dev/null | awk '{print $3}' | paste -sd.)"
  echo "Taskflow: $TF_VERSION (vendored, hts-benchmarks/native/taskflow/README.md)"
} > "$OUT/machine.txt" 2>&1

# ---------------------------------------------------------------- 4. interleaved rounds
benchmark_class() { awk -F'\t' -v k="$1" '$1 == k {print $2}' "$OUT/shapes/manifest.tsv"; }
REVERSED_PEERS=$(echo $PEERS | tr ' ' '\n' | tac | paste -sd' ')

run_jmh() { # round shape [jar suffix]: this revision's jar, or with a suffix the baseline's
  local class file jar=${3:-$JAR} regex
  class=$(benchmark_class "$2")
  regex="($(echo $METHODS | tr ' ' '|'))"
  file=$OUT/raw/round$1-$2-jmh${4:-}
  say "round $1/$ROUNDS $2: JMH ${class##*.}.$regex${4:+ (baseline)}"
  # shellcheck disable=SC2086
  "$JAVA" -cp "$jar" org.openjdk.jmh.Main "^${class//./\\.}\\.$regex\$" -wi "$WI" -w "${W}s" -i "$I" -r "${R}s" \
      -jvmArgsAppend "$JVM_ARGS -XX:ActiveProcessorCount=$THREADS" $JMH_OPTS -rf json -rff "$file.json" \
      > "$file.txt" 2>&1 || die "JMH failed; see $file.txt"
  grep -E '^Empty' "$file.txt" | sed 's/^/    /' || true
  if [[ -n $BASELINE_JAR && -z ${4:-} ]]; then run_jmh "$1" "$2" "$BASELINE_JAR" -baseline; fi
}

run_peer() { # peer round shape
  local file=$OUT/raw/round$2-$3-$1
  say "round $2/$ROUNDS $3: $(peer_title "$1")"
  "$(binary "$1")" "$OUT/shapes/$3.shape" --threads "$THREADS" --warmup-iterations "$WI" --warmup-seconds "$W" \
      --iterations "$I" --iteration-seconds "$R" > "$file.json" 2> "$file.txt" \
      || die "the $(peer_title "$1") program failed; see $file.txt"
  tail -1 "$file.txt" | sed 's/^/    /' || true
}

for ((round = 1; round <= ROUNDS; round++)); do
  for shape in $SHAPES; do
    if ((round % 2 == 1)); then
      run_jmh "$round" "$shape"
      for p in $PEERS; do run_peer "$p" "$round" "$shape"; done
    else
      for p in $REVERSED_PEERS; do run_peer "$p" "$round" "$shape"; done
      run_jmh "$round" "$shape"
    fi
  done
done

# ---------------------------------------------------------------- 5. the 0.5 ms workloads
run_cpu_jmh() { # round shape [jar suffix]
  local file=$OUT/raw/cpu-round$1-$2-jmh${4:-} jar=${3:-$JAR} regex
  regex="($(echo $CPU_METHODS | tr ' ' '|'))"
  say "CPU work round $1/$CPU_ROUNDS $2: JMH CpuWorkBenchmark.$regex${4:+ (baseline)}"
  # shellcheck disable=SC2086
  "$JAVA" -cp "$jar" org.openjdk.jmh.Main "^io\\.hts\\.benchmarks\\.CpuWorkBenchmark\\.$regex\$" -p shape="$2" -p workMicros="$CPU_WORK_US" \
      -wi "$CPU_WI" -i "$CPU_I" -jvmArgsAppend "$CPU_JVM_ARGS -XX:ActiveProcessorCount=$THREADS" $JMH_OPTS \
      -rf json -rff "$file.json" > "$file.txt" 2>&1 || die "JMH failed; see $file.txt"
  grep -E '^CpuWork' "$file.txt" | sed 's/^/    /' || true
  if [[ -n $BASELINE_JAR && -z ${4:-} ]]; then run_cpu_jmh "$1" "$2" "$BASELINE_JAR" -baseline; fi
}

run_cpu_peer() { # peer round shape
  local file=$OUT/raw/cpu-round$2-$3-$1
  say "CPU work round $2/$CPU_ROUNDS $3: $(peer_title "$1") --work-ns $((CPU_WORK_US * 1000))"
  "$(binary "$1")" "$OUT/shapes/cpu/$3.shape" --threads "$THREADS" --warmup-iterations "$CPU_WI" \
      --iterations "$CPU_I" --work-ns $((CPU_WORK_US * 1000)) > "$file.json" 2> "$file.txt" \
      || die "the $(peer_title "$1") program failed; see $file.txt"
  tail -1 "$file.txt" | sed 's/^/    /' || true
}

if [[ $CPU_WORK == 1 ]]; then
  for ((round = 1; round <= CPU_ROUNDS; round++)); do
    for shape in $CPU_SHAPES; do
      if ((round % 2 == 1)); then
        run_cpu_jmh "$round" "$shape"
        for p in $PEERS; do run_cpu_peer "$p" "$round" "$shape"; done
      else
        for p in $REVERSED_PEERS; do run_cpu_peer "$p" "$round" "$shape"; done
        run_cpu_jmh "$round" "$shape"
      fi
    done
  done
fi

# ---------------------------------------------------------------- 6. the summary
python3 - "$OUT" "$SHAPES" "$METHODS" "$([[ -n $BASELINE_JAR ]] && echo 1 || echo 0)" "$PEERS" \
    "$([[ $CPU_WORK == 1 ]] && echo "$CPU_SHAPES" || echo)" "$CPU_METHODS" <<'PY'
import csv, glob, json, os, re, statistics, sys

out, shapes, methods, baseline = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4] == "1"
peers, cpu_shapes, cpu_methods = sys.argv[5].split(), sys.argv[6].split(), sys.argv[7].split()
PEER_CONTENDER = {"tbb": "tbbFlowGraph", "taskflow": "taskflow"}
PEER_LABEL = {"tbb": "TBB", "taskflow": "taskflow"}
# the peers against which ratios are given: Taskflow first, then TBB, as far as they ran
ratio_peers = [p for p in ("taskflow", "tbb") if p in peers]
if baseline:
    methods = [x for m in methods for x in (m, m + "@baseline")]
    cpu_methods = [x for m in cpu_methods for x in (m, m + "@baseline")]
peer_contenders = [PEER_CONTENDER[p] for p in peers]
contenders = methods + peer_contenders

def read_manifest(path):   # key, class, name, tasks, edges, file
    with open(path) as f:
        return {cols[0]: (cols[3], cols[4]) for cols in (line.rstrip("\n").split("\t") for line in f)}

manifest = read_manifest(os.path.join(out, "shapes", "manifest.tsv"))
cpu_manifest = read_manifest(os.path.join(out, "shapes", "cpu", "manifest.tsv")) if cpu_shapes else {}

scores, per_round = {}, {}   # (shape, contender) -> all iteration scores; -> [(round, median)]
cpu = {}                     # (shape, contender) -> {"overhead": [...], "efficiency": [...], "wall_ms": [...]}

def add(shape, contender, rnd, values):
    scores.setdefault((shape, contender), []).extend(values)
    per_round.setdefault((shape, contender), []).append((rnd, statistics.median(values)))

def peer_result(path, expected):
    with open(path) as f:
        result = json.loads(f.readline())
    if (str(result["tasks"]), str(result["edges"])) != expected:
        sys.exit(f"{path}: the {result['contender']} program read {result['tasks']} tasks and {result['edges']} "
                 f"edges, the export wrote {expected}")
    return result

def add_cpu(shape, contender, overheads, efficiencies, walls):
    entry = cpu.setdefault((shape, contender), {"overhead": [], "efficiency": [], "wall_ms": []})
    entry["overhead"] += overheads
    entry["efficiency"] += efficiencies
    entry["wall_ms"] += walls

for path in sorted(glob.glob(os.path.join(out, "raw", "*round*-*-*.json"))):
    m = re.match(r"(cpu-)?round(\d+)-(\w+)-(jmh|tbb|taskflow)(-baseline)?\.json$", os.path.basename(path))
    if not m:
        continue
    is_cpu, rnd, shape, kind = m.group(1) is not None, int(m.group(2)), m.group(3), m.group(4)
    suffix = "@baseline" if m.group(5) else ""
    if kind != "jmh":
        result = peer_result(path, (cpu_manifest if is_cpu else manifest)[shape])
        if is_cpu:
            add_cpu(shape, PEER_CONTENDER[kind], result["overhead"], result["efficiency"], result["wall_ms"])
        else:
            add(shape, PEER_CONTENDER[kind], rnd, result["ns_per_task"])
        continue
    with open(path) as f:
        results = json.load(f)
    for result in results:
        name = result["benchmark"].rsplit(".", 1)[1] + suffix
        if is_cpu:
            second = result["secondaryMetrics"]
            walls = [v for fork in second["wallMicros"]["rawData"] for v in fork]
            ideals = [v for fork in second["idealMicros"]["rawData"] for v in fork]
            per_core = [v for fork in second["workPerCoreMicros"]["rawData"] for v in fork]
            add_cpu(shape, name, [(w - i) / w for w, i in zip(walls, ideals)],
                    [p / w for w, p in zip(walls, per_core)], [w / 1000 for w in walls])
            continue
        assert result["primaryMetric"]["scoreUnit"] == "ns/op", result["primaryMetric"]["scoreUnit"]
        add(shape, name, rnd, [v for fork in result["primaryMetric"]["rawData"] for v in fork])

def fmt(x):
    return f"{x:.0f}" if x >= 10 else f"{x:.1f}"

def med(shape, contender):
    v = scores.get((shape, contender))
    return statistics.median(v) if v else None

lines = ["median ns per task over all measurement iterations of all rounds (min-max)", "",
         "| shape | " + " | ".join(contenders) + " |", "|---" * (1 + len(contenders)) + "|"]
rows, rounds_lines = [], []
for shape in shapes:
    cells = []
    for c in contenders:
        v = scores.get((shape, c))
        if not v:
            cells.append("—")
            continue
        m = statistics.median(v)
        cells.append(f"{fmt(m)} ({fmt(min(v))}-{fmt(max(v))})")
        ratios = {p: (m / med(shape, PEER_CONTENDER[p]) if med(shape, PEER_CONTENDER[p]) else None)
                  for p in ("tbb", "taskflow")}
        rows.append([shape, c, len(v), f"{m:.3f}", f"{min(v):.3f}", f"{max(v):.3f}",
                     f"{ratios['tbb']:.3f}" if ratios["tbb"] else "",
                     f"{ratios['taskflow']:.3f}" if ratios["taskflow"] else "",
                     " ".join(f"{x:.3f}" for _, x in sorted(per_round[(shape, c)]))])
        rounds_lines.append(f"| {shape} | {c} | " + " / ".join(fmt(x) for _, x in sorted(per_round[(shape, c)])) + " |")
    lines.append(f"| {shape} | " + " | ".join(cells) + " |")

if ratio_peers:
    ratio_cols = [(shape, p) for shape in shapes for p in ratio_peers]
    lines += ["", "ratio = contender's median / the peer's median (below 1: the contender is faster):", "",
              "| contender | " + " | ".join(f"{s} / {PEER_LABEL[p]}" for s, p in ratio_cols) + " |",
              "|---" * (1 + len(ratio_cols)) + "|"]
    for c in contenders:
        cells = []
        for shape, p in ratio_cols:
            mine, theirs = med(shape, c), med(shape, PEER_CONTENDER[p])
            cells.append("—" if c == PEER_CONTENDER[p] or not mine or not theirs else f"{mine / theirs:.2f}")
        lines.append(f"| {c} | " + " | ".join(cells) + " |")

if baseline:
    lines += ["", "this revision over the baseline (median / median; below 1: faster now):", "",
              "| shape | " + " | ".join(m for m in methods if not m.endswith("@baseline")) + " |",
              "|---" * (1 + len(methods) // 2) + "|"]
    for shape in shapes:
        cells = []
        for m in methods:
            if m.endswith("@baseline"):
                continue
            now, before = med(shape, m), med(shape, m + "@baseline")
            cells.append(f"{now / before:.2f}" if now and before else "—")
        lines.append(f"| {shape} | " + " | ".join(cells) + " |")
lines += ["", "each round's median (round 1 / 2 / ...):", "", "| shape | contender | per round |", "|---|---|---|"] + rounds_lines

cpu_rows = []
if cpu_shapes:
    cpu_contenders = cpu_methods + peer_contenders
    lines += ["", "tasks of real CPU work (CpuWorkBenchmark; peers with --work-ns), one run an iteration, over all "
              "measurement iterations of all rounds: median overhead = (wall - ideal) / wall, ideal = max(total work "
              "/ threads, critical path) by the durations the tasks measured (min-max); median efficiency = "
              "(total work / threads) / wall; median wall ms", "",
              "| shape | contender | overhead % | efficiency | wall ms |", "|---|---|---|---|---|"]
    for shape in cpu_shapes:
        for c in cpu_contenders:
            e = cpu.get((shape, c))
            if not e or not e["overhead"]:
                lines.append(f"| {shape} | {c} | — | — | — |")
                continue
            o, ef, wl = e["overhead"], e["efficiency"], e["wall_ms"]
            lines.append(f"| {shape} | {c} | {100 * statistics.median(o):.2f} ({100 * min(o):.2f}-{100 * max(o):.2f}) "
                         f"| {statistics.median(ef):.4f} | {statistics.median(wl):.0f} |")
            cpu_rows.append([shape, c, len(o), f"{statistics.median(o):.6f}", f"{min(o):.6f}", f"{max(o):.6f}",
                             f"{statistics.median(ef):.6f}", f"{statistics.median(wl):.3f}"])

with open(os.path.join(out, "summary.md"), "w") as f:
    f.write("\n".join(lines) + "\n")
with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["shape", "contender", "iterations", "median_ns_per_task", "min", "max", "ratio_to_tbb",
                "ratio_to_taskflow", "round_medians"])
    w.writerows(rows)
if cpu_rows:
    with open(os.path.join(out, "summary-cpu-work.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["shape", "contender", "iterations", "median_overhead", "min_overhead", "max_overhead",
                    "median_efficiency", "median_wall_ms"])
        w.writerows(cpu_rows)
print("\n".join(lines))
PY
say "raw results, logs and summary in $OUT"
