#!/bin/sh
# The anchors' scaling over workers on another machine (issue 11: a lent
# many-core one). `scaling.sh build DIR` builds afc's objects and the
# anchors' driver for x86-64-v3, statically linked (the other machine needs
# nothing installed), with a `run.sh` beside them; there, `DIR/run.sh OUT`
# times the seven programs at 1, 2, 4, 8 and 16 workers (WORKERS=…) into
# OUT (one .jsonl and .txt per worker count, plus machine.txt).
set -eu
[ "${1:-}" = build ] && [ -n "${2:-}" ] || { echo "usage: scaling.sh build DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
AFC_CPU=x86-64-v3 BENCH_CC="gcc -fopenmp -static" BENCH_CFLAGS="-O3 -march=x86-64-v3" "$here/build.sh" "$out" ilp fast
cat > "$out/run.sh" <<'RUN'
#!/bin/sh
set -eu
d=$(cd "$(dirname "$0")" && pwd)
o=${1:-.}
mkdir -p "$o"
{ nproc; lscpu | grep -E "Model name|Socket|Core|Thread|L3|NUMA node\(s\)"; } > "$o/machine.txt" 2>&1 || true
for t in ${WORKERS:-1 2 4 8 16}; do
  AFC_NUM_THREADS=$t "$d/ilp/bench_c" -n 20000000 -r 9 -i c_fused,c_tuned,afc -j "$o/ilp_$t.jsonl" > "$o/ilp_$t.txt"
  AFC_NUM_THREADS=$t "$d/fast/bench_c" -n 20000000 -r 9 -b blackscholes -i c_tuned,afc -j "$o/fast_$t.jsonl" > "$o/fast_$t.txt"
done
RUN
chmod +x "$out/run.sh"
echo "built $out: run $out/run.sh OUT there"
