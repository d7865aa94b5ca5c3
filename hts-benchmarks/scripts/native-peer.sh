#!/usr/bin/env bash
# The native peer, in one command: oneTBB's flow graph (C++, hts-benchmarks/native/tbb_flow_graph.cpp)
# against the empty-task JMH benchmarks (Empty{Independent,Chain,Tree,Dag}Benchmark) on the very same
# shapes, interleaved round by round, so that the ratio of HTS to a native scheduler is re-measured
# by anyone on any Linux box:
#
#   bash hts-benchmarks/scripts/native-peer.sh                                  # about 22 min on 2 cores
#   WI=3 W=3 I=5 R=1 OUT=/tmp/np bash hts-benchmarks/scripts/native-peer.sh     # shorter: about 12 min
#
# Needs g++ and oneTBB's headers and library (Debian/Ubuntu: apt-get install g++ libtbb-dev), a JDK 17
# (java on the PATH or JAVA_HOME) and python3 (the summary). It checks them first and says what is
# missing. The normal Maven build never touches the C++; only this script compiles it.
#
# What it does:
#   1. compiles the C++ into hts-benchmarks/target/native/tbb_flow_graph ($CXX $CXXFLAGS ... -ltbb)
#      when the binary is missing or older than its source or this script;
#   2. builds hts-benchmarks/target/benchmarks.jar (./mvnw -pl hts-benchmarks -am package -DskipTests);
#   3. exports each shape as its benchmark class builds it (io.hts.benchmarks.ShapeExport) into
#      $OUT/shapes/<shape>.shape, with $OUT/shapes/manifest.tsv naming the class of each;
#   4. for each of ROUNDS rounds and each shape: one JMH run of the METHODS of that shape's class, and
#      the TBB program on the same shape file, with the same thread count, warm-up and iterations;
#      Java first in odd rounds, TBB first in even ones (so slow drift of the machine hits both);
#   5. prints, and writes to $OUT/summary.md and $OUT/summary.csv, the median ns per task of each
#      shape and contender over all measurement iterations of all rounds, min and max, each round's
#      median, and each contender's median over TBB's.
#
# Knobs (environment variables):
#   ROUNDS=3              rounds of (JMH, TBB) per shape
#   SHAPES="independent chain tree dag"   which shapes (ShapeExport's keys), in this order
#   THREADS=2             TBB: global_control and arena of THREADS threads (the caller being one);
#                         Java: -XX:ActiveProcessorCount=THREADS, since the benchmarks size their
#                         schedulers and ForkJoinPool by availableProcessors()
#   METHODS="hts htsNoProfiling completableFuture"   the EmptyTasksBenchmark methods JMH runs
#   WI=3 W=5 I=5 R=2      warm-up iterations, warm-up seconds, measurement iterations, seconds per
#                         iteration, for both sides (defaults: EmptyTasksBenchmark's @Warmup and
#                         @Measurement)
#   JVM_ARGS="-Xms3g -Xmx3g"   the forked JVM's flags (given to JMH's -jvmArgsAppend, which replaces
#                         the class's @Fork ones, so the default repeats them)
#   JMH_OPTS=""           more JMH arguments, e.g. "-prof gc"
#   BASELINE_JAR=""       the benchmarks.jar of an earlier revision (e.g. built in a worktree of it): its
#                         METHODS run too, in every round right after this revision's, as contenders
#                         named <method>@baseline, and the summary gives each method's ratio to them
#   BASELINE_NAME=""      what to call that revision in settings.txt (a commit, say)
#   OUT=/tmp/native-peer-<UTC date and time>   where raw results, logs and the summary go
#   MVN_ARGS="-q"         extra Maven arguments for step 2 (e.g. "-q -o" offline)
#   SKIP_BUILD=0          1: reuse hts-benchmarks/target/benchmarks.jar as it is
#   CXX=g++  CXXFLAGS="-std=c++17 -O2 -DNDEBUG -pthread"  TBB_LIBS="-ltbb"   the native build
#
# Raw results in $OUT/raw: round<N>-<shape>-jmh.json (JMH -rf json) and .txt (its output),
# round<N>-<shape>-tbb.json (one JSON line) and .txt (its report); machine facts in $OUT/machine.txt,
# the knobs used in $OUT/settings.txt: all small text files, to keep in docs/ (not so $OUT/shapes,
# 1-7 MB a shape, which ShapeExport rebuilds).
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MODULE=$(cd "$SCRIPT_DIR/.." && pwd)
ROOT=$(cd "$MODULE/.." && pwd)

ROUNDS=${ROUNDS:-3}
SHAPES=${SHAPES:-independent chain tree dag}
THREADS=${THREADS:-2}
METHODS=${METHODS:-hts htsNoProfiling completableFuture}
WI=${WI:-3}; W=${W:-5}; I=${I:-5}; R=${R:-2}
JVM_ARGS=${JVM_ARGS:--Xms3g -Xmx3g}
JMH_OPTS=${JMH_OPTS:-}
OUT=${OUT:-/tmp/native-peer-$(date -u +%Y%m%d-%H%M%S)}
MVN_ARGS=${MVN_ARGS:--q}
SKIP_BUILD=${SKIP_BUILD:-0}
BASELINE_JAR=${BASELINE_JAR:-}
BASELINE_NAME=${BASELINE_NAME:-}
CXX=${CXX:-g++}
CXXFLAGS=${CXXFLAGS:--std=c++17 -O2 -DNDEBUG -pthread}
TBB_LIBS=${TBB_LIBS:--ltbb}

SOURCE=$MODULE/native/tbb_flow_graph.cpp
BINARY=$MODULE/target/native/tbb_flow_graph
JAR=$MODULE/target/benchmarks.jar
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java

die() { echo "native-peer: $*" >&2; exit 1; }
say() { echo "[native-peer $(date -u +%H:%M:%S)] $*"; }

# ---------------------------------------------------------------- what it needs
command -v "$CXX" >/dev/null || die "no C++ compiler '$CXX' (Debian/Ubuntu: apt-get install g++; or set CXX)"
echo '#include <oneapi/tbb/flow_graph.h>' | $CXX $CXXFLAGS -x c++ -E - >/dev/null 2>&1 \
  || die "oneTBB headers not found (oneapi/tbb/flow_graph.h) by '$CXX $CXXFLAGS' (Debian/Ubuntu: apt-get install libtbb-dev; elsewhere add -I<tbb>/include to CXXFLAGS)"
command -v "$JAVA" >/dev/null || die "no java ('$JAVA'); install a JDK 17 or set JAVA_HOME"
command -v python3 >/dev/null || die "no python3 (it writes the summary); apt-get install python3"
for s in $SHAPES; do
  case $s in independent|chain|tree|dag) ;; *) die "unknown shape '$s' in SHAPES (known: independent chain tree dag)";; esac
done

# ---------------------------------------------------------------- 1. the native program
if [[ ! -x $BINARY || $SOURCE -nt $BINARY || ${BASH_SOURCE[0]} -nt $BINARY ]]; then
  say "compiling $SOURCE"
  mkdir -p "$(dirname "$BINARY")"
  # shellcheck disable=SC2086
  $CXX $CXXFLAGS -o "$BINARY" "$SOURCE" $TBB_LIBS \
    || die "compiling $SOURCE failed (is libtbb installed? Debian/Ubuntu: apt-get install libtbb-dev)"
fi

# ---------------------------------------------------------------- 2. the benchmarks jar
if [[ $SKIP_BUILD != 1 ]]; then
  say "building $JAR"
  # shellcheck disable=SC2086
  (cd "$ROOT" && ./mvnw $MVN_ARGS -pl hts-benchmarks -am package -DskipTests -Djcstress.skip=true) \
    || die "the Maven build failed"
fi
[[ -f $JAR ]] || die "no $JAR (run without SKIP_BUILD=1)"
[[ -z $BASELINE_JAR || -f $BASELINE_JAR ]] || die "no BASELINE_JAR $BASELINE_JAR"

# ---------------------------------------------------------------- 3. the shapes
mkdir -p "$OUT/shapes" "$OUT/raw"
# shellcheck disable=SC2086
"$JAVA" -cp "$JAR" io.hts.benchmarks.ShapeExport "$OUT/shapes" $SHAPES > "$OUT/shapes/manifest.tsv" \
  || die "exporting the shapes failed"
say "shapes: $(cut -f1,3,4,5 "$OUT/shapes/manifest.tsv" | tr '\t\n' ' ;')"

{
  echo "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
  for v in ROUNDS SHAPES THREADS METHODS WI W I R JVM_ARGS JMH_OPTS CXX CXXFLAGS TBB_LIBS BASELINE_JAR BASELINE_NAME; do echo "$v=${!v}"; done
} > "$OUT/settings.txt"
{
  date -u; echo "nproc: $(nproc)"; lscpu; free -g
  "$JAVA" -version 2>&1; $CXX --version | head -1
  echo "oneTBB: $(grep -h 'define TBB_VERSION_\(MAJOR\|MINOR\) ' /usr/include/oneapi/tbb/version.h 2>/dev/null | awk '{print $3}' | paste -sd.)"
} > "$OUT/machine.txt" 2>&1

# ---------------------------------------------------------------- 4. interleaved rounds
benchmark_class() { awk -F'\t' -v k="$1" '$1 == k {print $2}' "$OUT/shapes/manifest.tsv"; }
METHOD_REGEX="($(echo $METHODS | tr ' ' '|'))"

run_jmh() { # round shape [jar suffix]: this revision's jar, or with a suffix the baseline's
  local class file jar=${3:-$JAR}
  class=$(benchmark_class "$2")
  file=$OUT/raw/round$1-$2-jmh${4:-}
  say "round $1/$ROUNDS $2: JMH ${class##*.}.$METHOD_REGEX${4:+ (baseline)}"
  # shellcheck disable=SC2086
  "$JAVA" -jar "$jar" "^${class//./\\.}\\.$METHOD_REGEX\$" -wi "$WI" -w "${W}s" -i "$I" -r "${R}s" \
      -jvmArgsAppend "$JVM_ARGS -XX:ActiveProcessorCount=$THREADS" $JMH_OPTS -rf json -rff "$file.json" \
      > "$file.txt" 2>&1 || die "JMH failed; see $file.txt"
  grep -E '^Empty' "$file.txt" | sed 's/^/    /' || true
  if [[ -n $BASELINE_JAR && -z ${4:-} ]]; then run_jmh "$1" "$2" "$BASELINE_JAR" -baseline; fi
}

run_tbb() { # round shape
  local file=$OUT/raw/round$1-$2-tbb
  say "round $1/$ROUNDS $2: oneTBB flow graph"
  "$BINARY" "$OUT/shapes/$2.shape" --threads "$THREADS" --warmup-iterations "$WI" --warmup-seconds "$W" \
      --iterations "$I" --iteration-seconds "$R" > "$file.json" 2> "$file.txt" || die "the TBB program failed; see $file.txt"
  tail -1 "$file.txt" | sed 's/^/    /' || true
}

for ((round = 1; round <= ROUNDS; round++)); do
  for shape in $SHAPES; do
    if ((round % 2 == 1)); then run_jmh "$round" "$shape"; run_tbb "$round" "$shape"
    else run_tbb "$round" "$shape"; run_jmh "$round" "$shape"; fi
  done
done

# ---------------------------------------------------------------- 5. the summary
python3 - "$OUT" "$SHAPES" "$METHODS" "$([[ -n $BASELINE_JAR ]] && echo 1 || echo 0)" <<'PY'
import csv, glob, json, os, re, statistics, sys

out, shapes, methods, baseline = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4] == "1"
if baseline:
    methods = [x for m in methods for x in (m, m + "@baseline")]
contenders = methods + ["tbbFlowGraph"]
scores, per_round = {}, {}   # (shape, contender) -> all iteration scores; -> [(round, median)]
with open(os.path.join(out, "shapes", "manifest.tsv")) as f:   # key, class, name, tasks, edges, file
    manifest = {cols[0]: (cols[3], cols[4]) for cols in (line.rstrip("\n").split("\t") for line in f)}

def add(shape, contender, rnd, values):
    scores.setdefault((shape, contender), []).extend(values)
    per_round.setdefault((shape, contender), []).append((rnd, statistics.median(values)))

for path in sorted(glob.glob(os.path.join(out, "raw", "round*-*-*.json"))):
    m = re.match(r"round(\d+)-(\w+)-(jmh|tbb)(-baseline)?\.json$", os.path.basename(path))
    if not m:
        continue
    rnd, shape, kind, suffix = int(m.group(1)), m.group(2), m.group(3), "@baseline" if m.group(4) else ""
    with open(path) as f:
        if kind == "tbb":
            result = json.loads(f.readline())
            if (str(result["tasks"]), str(result["edges"])) != manifest[shape]:
                sys.exit(f"{path}: the TBB program read {result['tasks']} tasks and {result['edges']} edges, "
                         f"the export wrote {manifest[shape]}")
            add(shape, "tbbFlowGraph", rnd, result["ns_per_task"])
            continue
        for result in json.load(f):
            assert result["primaryMetric"]["scoreUnit"] == "ns/op", result["primaryMetric"]["scoreUnit"]
            values = [v for fork in result["primaryMetric"]["rawData"] for v in fork]
            add(shape, result["benchmark"].rsplit(".", 1)[1] + suffix, rnd, values)

def fmt(x):
    return f"{x:.0f}" if x >= 10 else f"{x:.1f}"

lines = ["median ns per task over all measurement iterations of all rounds (min-max); ratio = contender / oneTBB", "",
         "| shape | " + " | ".join(contenders) + " | " + " | ".join(c + " / TBB" for c in methods) + " |",
         "|---" * (1 + len(contenders) + len(methods)) + "|"]
rows, rounds_lines = [], []
for shape in shapes:
    cells, ratios = [], []
    tbb = scores.get((shape, "tbbFlowGraph"))
    tbb_median = statistics.median(tbb) if tbb else None
    for c in contenders:
        v = scores.get((shape, c))
        if not v:
            cells.append("—")
            continue
        med = statistics.median(v)
        cells.append(f"{fmt(med)} ({fmt(min(v))}-{fmt(max(v))})")
        ratio = med / tbb_median if tbb_median else None
        if c != "tbbFlowGraph":
            ratios.append(f"{ratio:.2f}" if ratio else "—")
        rows.append([shape, c, len(v), f"{med:.3f}", f"{min(v):.3f}", f"{max(v):.3f}",
                     f"{ratio:.3f}" if ratio else "",
                     " ".join(f"{m:.3f}" for _, m in sorted(per_round[(shape, c)]))])
        rounds_lines.append(f"| {shape} | {c} | " + " / ".join(fmt(m) for _, m in sorted(per_round[(shape, c)])) + " |")
    lines.append(f"| {shape} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
if baseline:
    lines += ["", "this revision over the baseline (median / median; below 1: faster now):", "",
              "| shape | " + " | ".join(m for m in methods if not m.endswith("@baseline")) + " |",
              "|---" * (1 + len(methods) // 2) + "|"]
    for shape in shapes:
        cells = []
        for m in methods:
            if m.endswith("@baseline"):
                continue
            now, before = scores.get((shape, m)), scores.get((shape, m + "@baseline"))
            cells.append(f"{statistics.median(now) / statistics.median(before):.2f}" if now and before else "—")
        lines.append(f"| {shape} | " + " | ".join(cells) + " |")
lines += ["", "each round's median (round 1 / 2 / ...):", "", "| shape | contender | per round |", "|---|---|---|"] + rounds_lines

with open(os.path.join(out, "summary.md"), "w") as f:
    f.write("\n".join(lines) + "\n")
with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["shape", "contender", "iterations", "median_ns_per_task", "min", "max", "ratio_to_tbb", "round_medians"])
    w.writerows(rows)
print("\n".join(lines))
PY
say "raw results, logs and summary in $OUT"
