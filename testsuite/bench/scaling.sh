#!/bin/sh
# The anchors' scaling over workers on another machine (issue 11: a lent
# many-core one). `scaling.sh build DIR` builds, for x86-64-v3 and statically
# linked (the other machine needs nothing installed), afc's objects with the
# anchors' driver, the headroom yardstick (headroom.c) and run/parallel.acc's
# determinism check, with a `run.sh` beside them. There, `DIR/run.sh OUT`
# (WORKERS="1 2 4 8 16", N=20000000 and REPS=9 by default; the first worker
# count must be 1):
#   1. checks that run/parallel.acc's functions give the same bits on every
#      worker count, around every chunk boundary, both two-pass schemes;
#   2. times blackscholes by afc and by C under OpenMP in afc's chunks,
#      interleaved in one process, on 1 worker and on each count;
#   3. times the seven programs on each count, beside c_fused (and c_tuned
#      on one worker), and blackscholes with --fast-math beside c_tuned;
# into OUT: machine.txt, parallel.txt, headroom.txt, and one .jsonl and .txt
# per mode and worker count, which report.py's scaling table reads.
set -eu
[ "${1:-}" = build ] && [ -n "${2:-}" ] || { echo "usage: scaling.sh build DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$(dirname "$here")")
shared=${SHARED_BENCH:-$root/../shared/bench}
afc="$root/target/release/afc"
out=$(mkdir -p "$2" && cd "$2" && pwd)
cc="gcc -fopenmp -static -O3 -march=x86-64-v3"
AFC_CPU=x86-64-v3 BENCH_CC="gcc -fopenmp -static" BENCH_CFLAGS="-O3 -march=x86-64-v3" "$here/build.sh" "$out" ilp fast
# (libgomp's static link warns that it may dlopen: it does not here)
$cc -std=c11 -I"$root/runtime-c" -I"$shared/c" "$here/headroom.c" "$out/ilp/fused_blackscholes.o" \
  "$out/afc_ilp.o" -lm -o "$out/headroom" 2>/dev/null
for scheme in look-back barrier; do
  "$afc" "$root/testsuite/run/parallel.acc" -O2 --cpu x86-64-v3 --parallel-grain 1000 --cache-size 32M \
    --two-pass=$scheme -o "$out/parallel_$scheme.o"
  "$afc" "$root/testsuite/run/parallel.acc" --emit=header -o "$out/parallel.h"
  $cc -std=c99 -I"$root/runtime-c" -include "$out/parallel.h" "$root/testsuite/run/Inputs/parallel.c" \
    "$out/parallel_$scheme.o" "$root/build/libafcrt.a" -lm -lpthread -o "$out/parallel_$scheme" 2>/dev/null
done
cat > "$out/run.sh" <<'RUN'
#!/bin/sh
set -eu
d=$(cd "$(dirname "$0")" && pwd)
o=${1:-.}
w=${WORKERS:-1 2 4 8 16}
n=${N:-20000000}
r=${REPS:-9}
mkdir -p "$o"
{ nproc; lscpu | grep -E "Model name|Socket|Core|Thread|L3|NUMA node\(s\)"; } > "$o/machine.txt" 2>&1 || true
for scheme in look-back barrier; do
  echo "$scheme: $(WORKERS="$w" "$d/parallel_$scheme" | tr '\n' ' ')" >> "$o/parallel.txt"
done
"$d/headroom" "$n" "$r" "$(echo ${w#1 } | tr ' ' ',')" > "$o/headroom.txt"
for t in $w; do
  impls=c_fused,afc
  [ "$t" = 1 ] && impls=c_fused,c_tuned,afc
  AFC_NUM_THREADS=$t "$d/ilp/bench_c" -n "$n" -r "$r" -i $impls -j "$o/ilp_$t.jsonl" > "$o/ilp_$t.txt"
  AFC_NUM_THREADS=$t "$d/fast/bench_c" -n "$n" -r "$r" -b blackscholes -i c_tuned,afc -j "$o/fast_$t.jsonl" > "$o/fast_$t.txt"
done
RUN
chmod +x "$out/run.sh"
echo "built $out: run $out/run.sh OUT there"
