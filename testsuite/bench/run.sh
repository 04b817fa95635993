#!/usr/bin/env bash
# make bench: afc -O3 fused and unfused against hand-fused C (gcc -O3
# -march=native), median times and ratios. Usage: run.sh [N] [RUNS]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="$root/build/bench"
mkdir -p "$out"
afc="$root/target/release/afc"
fns="normalizeInc dotp diag normalize2 singleLoop gathered crossDist"
for mode in ilp none; do
  suffix=$([ $mode = ilp ] && echo fused || echo unfused)
  "$afc" "$here/bench.acc" -O3 --fusion=$mode -o "$out/bench_$mode.o"
  args=()
  for f in $fns; do args+=(--redefine-sym "$f=${f}_$suffix"); done
  objcopy "${args[@]}" "$out/bench_$mode.o"
done
cc -O3 -march=native -std=c11 -I"$root/runtime-c" "$here/main.c" "$here/hand.c" "$out/bench_ilp.o" "$out/bench_none.o" \
  "$root/build/libafcrt.a" -lm -lpthread -o "$out/bench"
"$out/bench" "${1:-10000000}" "${2:-11}"
