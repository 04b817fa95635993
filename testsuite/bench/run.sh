#!/usr/bin/env bash
# make bench: afc's object files against ../shared/bench's hand-written C.
#
#   1. the seven anchor programs (anchors.acc through adapters.c) in the
#      anchors' own timing driver, with --fusion=ilp, with --fusion=none, and
#      with --fusion=ilp --fast-math (against c_tuned, which is built with
#      -ffast-math for blackscholes), each run beside c_fused so ratios come
#      from one process;
#      and with --fusion=ilp on all cores (AFC_NUM_THREADS=nproc; the other
#      columns run afc on one worker);
#   2. on a machine of several cores, the yardstick for the speed-up
#      (headroom.c): blackscholes by afc and by c_fused's loop under OpenMP,
#      each on one worker and on all, interleaved in one process — on a
#      virtual machine a second core gains 1.2x to 1.9x from one minute to
#      the next;
#   3. the programs the anchors do not cover (extra.acc) against hand-fused
#      C written the way the anchors are (extra_hand.c).
#
# Usage: run.sh [N] [REPS]   (defaults 20000000 and 9, as the anchors' driver)
# SHARED_BENCH names the anchors' folder (default ../shared/bench).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
shared="${SHARED_BENCH:-$root/../shared/bench}"
n="${1:-20000000}"
reps="${2:-9}"
out="$root/build/bench"
afc="$root/target/release/afc"
if [ ! -f "$shared/c/anchors.h" ]; then
  echo "bench: the anchors are not at $shared (set SHARED_BENCH)" >&2
  exit 1
fi
mkdir -p "$out"
rm -f "$out"/*.jsonl
"$here/build.sh" "$out" ilp none fast
cores="$(nproc)"
echo "== anchors: n = $n, median of $reps, ms (ratios from one process each); afc on 1 worker, then on $cores"
AFC_NUM_THREADS=1 "$out/ilp/bench_c" -n "$n" -r "$reps" -j "$out/fused.jsonl" > "$out/fused.txt"
AFC_NUM_THREADS=1 "$out/none/bench_c" -n "$n" -r "$reps" -i c_unfused,c_fused,afc -j "$out/unfused.jsonl" > "$out/unfused.txt"
AFC_NUM_THREADS=1 "$out/fast/bench_c" -n "$n" -r "$reps" -i c_fused,c_tuned,afc -j "$out/fast.jsonl" > "$out/fast.txt"
AFC_NUM_THREADS="$cores" "$out/ilp/bench_c" -n "$n" -r "$reps" -i c_fused,c_tuned,afc -j "$out/parallel.jsonl" > "$out/parallel.txt"
python3 "$here/report.py" "$out/fused.jsonl" "$out/unfused.jsonl" "$out/fast.jsonl" "$out/parallel.jsonl" "$cores"

if [ "$cores" -gt 1 ]; then
  echo
  echo "== the machine's headroom: blackscholes, n = $n, median of $reps, one worker and $cores, interleaved"
  cc -O3 -march=native -fopenmp -std=c11 -I"$root/runtime-c" -I"$shared/c" "$here/headroom.c" \
    "$out/ilp/fused_blackscholes.o" "$out/afc_ilp.o" -lm -o "$out/headroom"
  "$out/headroom" "$n" "$reps" "$cores"
fi

echo
echo "== programs beyond the anchors: n = $n, median of $reps, ms"
for mode in ilp none; do
  suffix=$([ $mode = ilp ] && echo fused || echo unfused)
  "$afc" "$here/extra.acc" -O3 --fusion=$mode -o "$out/extra_$mode.o"
  args=()
  for f in diag gathered crossDist farthest heavyFold heavyScan; do args+=(--redefine-sym "$f=${f}_$suffix"); done
  objcopy "${args[@]}" "$out/extra_$mode.o"
done
# (-fno-math-errno: afc's sqrt sets no errno either, and gcc vectorises no
# sqrt that may.)
cc -O3 -march=native -fno-math-errno -std=c11 -I"$root/runtime-c" "$here/extra_main.c" "$here/extra_hand.c" "$out/extra_ilp.o" "$out/extra_none.o" \
  "$root/build/libafcrt.a" -lgomp -lm -lpthread -o "$out/extra"
AFC_NUM_THREADS=1 "$out/extra" "$n" "$reps"
