#!/usr/bin/env bash
# The kernel's regression gate: this revision's W1-W4 (the empty-task JMH benchmarks on the shapes
# independent, chain, tree, dag) against a named earlier revision and against the vendored native
# peers (Taskflow 4.1.0 and oneTBB's flow graph) in one run, as ratios; it fails when this revision
# is slower than the earlier one by more than a tolerance on any shape.
#
#   bash hts-benchmarks/scripts/kernel-gate.sh                       # against the revision in kernel-gate.baseline
#   BASELINE=HEAD~3 bash hts-benchmarks/scripts/kernel-gate.sh       # against any revision git knows
#   ROUNDS=3 WI=3 W=5 I=5 R=2 bash hts-benchmarks/scripts/kernel-gate.sh   # the full, quieter measurement
#
# Run it before landing a change to hts-engine's run or exec code (docs/benchmarks.md, "The kernel's
# regression gate"), on a machine doing nothing else: a ratio measured beside a compile is noise.
#
# What it does:
#   1. resolves BASELINE (default: the revision named in hts-benchmarks/scripts/kernel-gate.baseline)
#      to a commit and builds that revision's benchmarks.jar in a temporary git worktree, once: the
#      jar is kept as hts-benchmarks/target/baseline/benchmarks-<commit>.jar for later gates;
#   2. runs native-peer.sh (this revision's jar built by it) with BASELINE_JAR set, so every round runs
#      this revision's METHODS, the baseline's, Taskflow and oneTBB on the very same shapes;
#   3. reads its summary.csv and prints, per shape and method, this revision's median ns per task,
#      the baseline's, their ratio, and this revision's ratio to Taskflow and to oneTBB; writes the
#      same table to $OUT/gate.md;
#   4. exits 3 when a GATED method's ratio to the baseline exceeds 1 + TOLERANCE on any shape (naming
#      the shape, method and both figures), 4 when a gated figure of either revision is missing (a
#      method that did not run, no figures at all), 0 otherwise; 2 on a bad knob or a missing tool,
#      143 when stopped by a signal (the build or measurement it started is stopped with it).
#
# Knobs (environment variables), besides native-peer.sh's own (ROUNDS, WI, W, I, R, THREADS, PEERS,
# SHAPES, JVM_ARGS, MVN_ARGS, SKIP_BUILD, OUT):
#   BASELINE=<revision>      the earlier revision (a commit, tag or branch)
#   METHODS="hts htsNoProfiling completableFuture"   what runs on both revisions
#   GATED="hts htsNoProfiling"   the methods whose slow-down fails the gate
#   TOLERANCE=0.10           the slow-down allowed (0.10: 10 %), for run-to-run noise of the box
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MODULE=$(cd "$SCRIPT_DIR/.." && pwd)
ROOT=$(cd "$MODULE/.." && pwd)

die() { echo "kernel-gate: $*" >&2; exit 2; }

command -v python3 >/dev/null || die "no python3 (it reads the figures and gives the verdict); apt-get install python3"
command -v "${CXX:-g++}" >/dev/null \
  || die "no C++ compiler '${CXX:-g++}' (the native peers need one: apt-get install g++, or set CXX); nothing was built"

BASELINE=${BASELINE:-$(grep -v '^#' "$SCRIPT_DIR/kernel-gate.baseline" | head -1 | tr -d '[:space:]')}
[[ -n $BASELINE ]] || die "no BASELINE given and none in $SCRIPT_DIR/kernel-gate.baseline"
COMMIT=$(git -C "$ROOT" rev-parse --verify --quiet "$BASELINE^{commit}") \
  || die "BASELINE='$BASELINE' is not a revision of this repository (a commit, tag or branch)"
SHORT=${COMMIT:0:7}
export METHODS=${METHODS:-hts htsNoProfiling completableFuture}
GATED=${GATED:-hts htsNoProfiling}
TOLERANCE=${TOLERANCE:-0.10}
export OUT=${OUT:-/tmp/kernel-gate-$(date -u +%Y%m%d-%H%M%S)}
MVN_ARGS=${MVN_ARGS:--q}
for m in $GATED; do
  [[ " $METHODS " == *" $m "* ]] || die "GATED method '$m' is not among METHODS ($METHODS)"
done
python3 -c "import math, sys; t = float(sys.argv[1]); sys.exit(0 if math.isfinite(t) and t >= 0 else 1)" "$TOLERANCE" 2>/dev/null \
  || die "TOLERANCE='$TOLERANCE' is not a finite number of 0 or more (0.10 means 10 %)"

# A child (the baseline's build, the measurement) runs in a process group of its own, so that a gate
# stopped by a signal (timeout, kill, ^C) stops it too instead of leaving it running.
CHILD=""
stopped() {
  [[ -n $CHILD ]] && kill -TERM -- "-$CHILD" 2>/dev/null
  echo "kernel-gate: stopped by a signal; what it had started was stopped too" >&2
  exit 143
}
trap stopped TERM INT HUP
in_own_group() { # command...: runs it in a process group of its own and waits for it
  setsid "$@" &
  CHILD=$!
  local rc=0
  wait "$CHILD" || rc=$?
  CHILD=""
  return "$rc"
}

# 1. the baseline's jar, built once per commit
JAR_DIR=$MODULE/target/baseline
BASE_JAR=$JAR_DIR/benchmarks-$COMMIT.jar
if [[ ! -f $BASE_JAR ]]; then
  mkdir -p "$JAR_DIR"
  TREE=$(mktemp -d /tmp/kernel-gate-baseline-XXXXXX)
  trap 'git -C "$ROOT" worktree remove --force "$TREE" >/dev/null 2>&1 || rm -rf "$TREE"' EXIT
  echo "kernel-gate: building the benchmarks of $SHORT ($BASELINE) in $TREE" >&2
  git -C "$ROOT" worktree add --detach "$TREE" "$COMMIT" >/dev/null
  in_own_group bash -c 'cd "$1" && shift && exec ./mvnw -B -ntp "$@" -pl hts-benchmarks -am package -DskipTests -Djacoco.skip=true' \
      build "$TREE" $MVN_ARGS \
    || die "building $SHORT's benchmarks failed (see above)"
  cp "$TREE/hts-benchmarks/target/benchmarks.jar" "$BASE_JAR"
fi

# 2. one run of everything, side by side
BASELINE_JAR=$BASE_JAR BASELINE_NAME="$SHORT ($BASELINE)" in_own_group bash "$SCRIPT_DIR/native-peer.sh"

# 3 and 4. the ratios, and the verdict
python3 - "$OUT" "$METHODS" "$GATED" "$TOLERANCE" "$SHORT" "$(git -C "$ROOT" rev-parse --short HEAD)$([[ -n $(git -C "$ROOT" status --porcelain --untracked-files=no) ]] && echo ' with uncommitted changes')" <<'PY'
import csv, os, sys
out, methods, gated, tolerance, base, head = sys.argv[1], sys.argv[2].split(), set(sys.argv[3].split()), float(sys.argv[4]), sys.argv[5], sys.argv[6]
rows = {}
with open(os.path.join(out, "summary.csv")) as f:
    for r in csv.DictReader(f):
        if r.get("shape") and r.get("median_ns_per_task"):
            rows[(r["shape"], r["contender"])] = r
shapes = list(dict.fromkeys(s for s, _ in rows))
def fmt(x, digits=2):
    return "—" if x is None else f"{x:.{digits}f}"
lines = [f"this revision ({head}) against {base}, Taskflow and oneTBB, median ns per task; gate: a slow-down of more than {tolerance:.0%} over {base} on {', '.join(sorted(gated))}", "",
         "| shape | method | now | " + base + " | now / " + base + " | now / Taskflow | now / oneTBB | verdict |",
         "|---|---|---|---|---|---|---|---|"]
failures, missing = [], []
if not shapes:
    missing.append("no figures at all in " + os.path.join(out, "summary.csv"))
for shape in shapes:
    for m in methods:
        now, before = rows.get((shape, m)), rows.get((shape, m + "@baseline"))
        if now is None:
            if m in gated:
                missing.append(f"{shape} {m}: no figure of this revision (did it run? METHODS and GATED name it)")
            continue
        n = float(now["median_ns_per_task"])
        b = float(before["median_ns_per_task"]) if before else None
        ratio = n / b if b else None
        tf = float(now["ratio_to_taskflow"]) if now.get("ratio_to_taskflow") else None
        tbb = float(now["ratio_to_tbb"]) if now.get("ratio_to_tbb") else None
        verdict = ""
        if m in gated:
            if ratio is None:
                verdict = "no baseline figure"
                missing.append(f"{shape} {m}: no figure of the baseline ({base}) to compare with")
            elif ratio > 1 + tolerance:
                verdict = "REGRESSION"
                failures.append(f"{shape} {m}: {n:.1f} ns a task against {b:.1f} at {base} ({ratio:.2f}x)")
            else:
                verdict = "ok"
        lines.append(f"| {shape} | {m} | {fmt(n, 1)} | {fmt(b, 1)} | {fmt(ratio)} | {fmt(tf)} | {fmt(tbb)} | {verdict} |")
text = "\n".join(lines) + "\n"
with open(os.path.join(out, "gate.md"), "w") as f:
    f.write(text)
print(text)
if failures:
    print("kernel-gate: FAILED, slower than " + base + " beyond the tolerance:\n  " + "\n  ".join(failures), file=sys.stderr)
if missing:
    print("kernel-gate: FAILED, figures missing (no verdict on them):\n  " + "\n  ".join(missing), file=sys.stderr)
if failures:
    sys.exit(3)
if missing:
    sys.exit(4)
print(f"kernel-gate: passed (no gated method more than {tolerance:.0%} slower than {base}); figures in {out}")
PY
