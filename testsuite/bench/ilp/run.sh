#!/bin/sh
# `make bench-ilp`: the clustering ILP's scaling (issue 12). For random
# programs of 25-400 combinators (gen.py, seeded; AFC_ILP_GEN=mix: mix.py's,
# which afc was not tuned on), prints per program the
# wall time of `afc --emit=clusters` (process start included), how the
# solve ended (optimal, or best found with its gap), the objective over
# the greedy clustering's (its warm start) and over the best known
# (best-known.txt, found by long searches, gen.py's only; `new` marks an
# objective below it), and after each size a line against issue 12's
# goals (`=`): how many were proven optimal, how many met the goal (100
# combinators: proven within 0.2 s; 200: within 2 s; 400: a clustering
# within 3 s) and the slowest. Sizes and seeds: AFC_ILP_SIZES,
# AFC_ILP_SEEDS; extra afc flags: AFC_ILP_FLAGS; another table of best
# objectives: AFC_ILP_BEST.
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
afc="$root/target/release/afc"
sizes=${AFC_ILP_SIZES:-"25 50 100 200 300 400"}
seeds=${AFC_ILP_SEEDS:-"1 2 3"}
flags=${AFC_ILP_FLAGS:-}
gen=${AFC_ILP_GEN:-gen}
best_known=${AFC_ILP_BEST:-"$root/testsuite/bench/ilp/best-known.txt"}
[ "$gen" = gen ] || [ -n "${AFC_ILP_BEST:-}" ] || best_known=/dev/null
# The table holds objectives of the default cost model; another model (or
# the pairs model's, which is Robinson's) weighs clusterings otherwise.
case " $flags " in *--cost=traffic*|*"--cost traffic"*) ;; *--cost*) best_known=/dev/null ;; esac
case " $flags " in *pairs*) best_known=/dev/null ;; esac
[ -r "$best_known" ] || best_known=/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '%-6s %-5s %8s  %-10s %10s %10s  %s\n' size seed time status "obj/greedy" "obj/best" "how (afc -v)"
for n in $sizes; do
    # Issue 12's goal for this size, if it has one: seconds, and whether
    # the clustering must be proven optimal within them.
    case $n in
        100) goal=0.2 prove=yes ;;
        200) goal=2 prove=yes ;;
        400) goal=3 prove=no ;;
        *) goal="" prove=no ;;
    esac
    count=0 proven=0 met=0 slowest=0
    for s in $seeds; do
        python3 "$root/testsuite/bench/ilp/$gen.py" --nodes "$n" --seed "$s" > "$work/p.acc"
        start=$(date +%s.%N)
        # shellcheck disable=SC2086
        "$afc" "$work/p.acc" --emit=clusters -v $flags -o /dev/null 2> "$work/ilp.txt"
        end=$(date +%s.%N)
        line=$(grep 'afc: fn f:' "$work/ilp.txt" | head -1)
        how=$(echo "$line" | sed 's/^[^(]*(//; s/)$//')
        status=$(case "$how" in *optimal*) echo optimal;; *fallback*) echo greedy;; *) echo "best found";; esac)
        obj=$(echo "$how" | sed -n 's/.*objective \([0-9.e+]*\).*/\1/p')
        greedy=$(echo "$how" | sed -n 's/.*greedy \([0-9.e+]*\).*/\1/p')
        ratio=$(if [ -n "$obj" ] && [ -n "$greedy" ]; then awk "BEGIN { printf \"%.3f\", $obj / $greedy }"; else echo "-"; fi)
        best=$(awk -v n="$n" -v s="$s" '$1 == n && $2 == s { print $3; exit }' "$best_known")
        vs_best=$(if [ -n "$obj" ] && [ -n "$best" ]; then awk "BEGIN { printf \"%.3f%s\", $obj / $best, ($obj < $best - 0.5 ? \" new\" : \"\") }"; else echo "-"; fi)
        wall=$(awk "BEGIN { print $end - $start }")
        printf '%-6s %-5s %7.2fs  %-10s %10s %10s  %s\n' "$n" "$s" "$wall" "$status" "$ratio" "$vs_best" "$how"
        count=$((count + 1))
        [ "$status" = optimal ] && proven=$((proven + 1))
        if [ -n "$goal" ] && awk "BEGIN { exit !($wall <= $goal) }" && { [ "$prove" = no ] || [ "$status" = optimal ]; }; then
            met=$((met + 1))
        fi
        slowest=$(awk "BEGIN { print ($wall > $slowest) ? $wall : $slowest }")
    done
    summary="= $n: $proven of $count proven optimal"
    if [ "$prove" = yes ]; then
        summary="$summary, $met of them within $goal s (the goal)"
    elif [ -n "$goal" ]; then
        summary="$summary, $met clustered within $goal s (the goal)"
    fi
    printf '%s, slowest %.2f s\n' "$summary" "$slowest"
done
