#!/usr/bin/env bash
# Side-by-side JMH of two builds of the engine on one machine, at the same time: two JMH processes of
# each build, every process pinned by taskset to two physical cores of its own (so threads(2)
# everywhere, like the 2-core development box). Written for the lent GPU machine's 16 CPUs; runs on
# any Linux host with 8 or more cores.
#
# Before: unpack each build's benchmarks.jar (java -jar ... of hts-benchmarks/target/benchmarks.jar)
# into a folder of its own, keeping io/hts/** and META-INF/BenchmarkList and CompilerHints, e.g.
#   (mkdir -p .device/before && cd .device/before && unzip -q ../../before.jar 'io/hts/*' 'META-INF/Benchmark*' 'META-INF/CompilerHints')
# and build the device kit (../shared/gpu/device-kit.sh hts-engine hts-benchmarks) for the JRE and
# the other jars. Then, from the project root:
#   BENCH='io.hts.benchmarks.Empty(Chain|Tree|Independent|Dag)Benchmark.(hts|htsNoProfiling)$' \
#     OUT=/tmp/out bash hts-benchmarks/scripts/side-by-side.sh .device before after
# Results: $OUT/bench/<build>-<a|b>.json and .log; machine facts in $OUT/bench/machine.txt.
set -u
K=${1:-.device}; FIRST=${2:-before}; SECOND=${3:-after}
OUT=${OUT:-/tmp/side-by-side}
JRE=/tmp/hts-jre
if [[ ! -x $JRE/bin/java ]]; then
  if [[ -f $K/jre.txz ]]; then mkdir -p $JRE && tar -C $JRE --strip-components=1 -xJf "$K/jre.txz"; else JRE=${JAVA_HOME:?set JAVA_HOME}; fi
fi
LIB=$(ls "$K"/lib/*.jar | grep -v '/hts-' | grep -v 'jopt-simple-4' | tr '\n' ':')
mkdir -p "$OUT/bench"
{ date -u; nproc; lscpu; free -g; } > "$OUT/bench/machine.txt" 2>&1
# one logical CPU per physical core
mapfile -t CPUS < <(lscpu -p=CPU,CORE,SOCKET | grep -v '^#' | awk -F, '!seen[$2","$3]++ {print $1}')
if (( ${#CPUS[@]} < 8 )); then echo "needs 8 physical cores, found ${#CPUS[@]}" >&2; exit 2; fi
BENCH="${BENCH:-io.hts.benchmarks.Empty(Chain|Tree|Independent|Dag)Benchmark.(hts|htsNoProfiling)\$}"
run() { # build cores tag
  taskset -c "$2" "$JRE/bin/java" -Djmh.ignoreLock=true -cp "$K/$1:$LIB" org.openjdk.jmh.Main "$BENCH" ${JMH_ARGS:-} \
    -rf json -rff "$OUT/bench/$1-$3.json" > "$OUT/bench/$1-$3.log" 2>&1
}
run "$FIRST"  "${CPUS[0]},${CPUS[1]}" a &
run "$SECOND" "${CPUS[2]},${CPUS[3]}" a &
run "$SECOND" "${CPUS[4]},${CPUS[5]}" b &
run "$FIRST"  "${CPUS[6]},${CPUS[7]}" b &
wait
for f in "$OUT"/bench/*.log; do echo "== $f"; grep -E "^(Empty|Executor|Cpu|Idle|Memory|Resource)" "$f"; done
