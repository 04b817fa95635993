#!/bin/bash
# A differential campaign (difftest.py) for a given time, seed after seed,
# here or on another x86-64 machine with a C compiler and Python 3 but
# nothing else installed (docs/testing.md, "Campaigns"):
#
#   campaign.sh pack                 afc (stripped, gzipped) with the shared
#                                    libraries it needs that such a machine
#                                    lacks (CBC's, LAPACK's), and the
#                                    runtime library, into build/campaign/
#                                    (about 32 MB: carry that folder)
#   campaign.sh run SECONDS SEED COUNT JOBS [OUT]
#                                    seeds SEED, SEED+1, … of COUNT programs
#                                    each, JOBS batches at once, until
#                                    SECONDS have passed; a seed cut off by
#                                    the time counts for nothing. Uses $AFC
#                                    if set, else the packed afc when
#                                    build/campaign holds one, else
#                                    target/release/afc. Writes
#                                    OUT/machine.txt, OUT/campaign.log (one
#                                    "N passed, M failed" line per whole
#                                    seed) and the failing programs
#                                    (OUT/kept.tar.gz); OUT defaults to
#                                    $OUT, else build/campaign/out.
#
# The compiled code is for the machine it runs on (`--cpu native`): on an
# AVX-512 machine the tester checks 512-bit compaction and vector math
# that an AVX2 machine cannot run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$(dirname "$here")")
pack=$root/build/campaign
case "${1:-}" in
pack)
    set -e
    mkdir -p "$pack"
    strip -o "$pack/afc" "$root/target/release/afc"
    gzip -1 -f "$pack/afc"
    libs=$(mktemp -d)
    ldd "$root/target/release/afc" | awk '{print $3}' | grep -E 'Cbc|Cgl|Clp|CoinUtils|Osi|lapack|blas|gfortran|quadmath' | while read -r l; do cp -L "$l" "$libs/"; done
    tar -czf "$pack/libs.tar.gz" -C "$libs" .
    rm -rf "$libs"
    cp "$root/build/libafcrt.a" "$pack/"
    echo "packed $(cd "$root" && git rev-parse --short HEAD) into $pack ($(du -sh "$pack" | cut -f1))"
    ;;
run)
    [ $# -ge 5 ] || { echo "usage: campaign.sh run SECONDS SEED COUNT JOBS [OUT]" >&2; exit 2; }
    secs=$2 seed=$3 count=$4 jobs=$5
    out=${6:-${OUT:-$pack/out}}
    mkdir -p "$out"
    if [ -z "${AFC:-}" ] && [ -f "$pack/afc.gz" ]; then
        mkdir -p /tmp/afc-campaign/lib
        gzip -dc "$pack/afc.gz" > /tmp/afc-campaign/afc && chmod +x /tmp/afc-campaign/afc
        tar -xzf "$pack/libs.tar.gz" -C /tmp/afc-campaign/lib
        [ -f "$root/build/libafcrt.a" ] || cp "$pack/libafcrt.a" "$root/build/libafcrt.a"
        export LD_LIBRARY_PATH=/tmp/afc-campaign/lib AFC=/tmp/afc-campaign/afc
    fi
    afc=${AFC:-$root/target/release/afc}
    { date; nproc; lscpu | grep -E 'Model name'; grep -q avx512f /proc/cpuinfo && echo "AVX-512F"; cc --version | head -1; python3 --version; "$afc" --version; } > "$out/machine.txt" 2>&1 \
        || { echo "afc does not start here: $out/machine.txt" >&2; exit 1; }
    end=$(( $(date +%s) + secs ))
    while [ "$(date +%s)" -lt $end ]; do
        echo "== seed $seed $(date +%T)" >> "$out/campaign.log"
        timeout $(( end - $(date +%s) )) python3 -u "$here/difftest.py" --seed "$seed" --count "$count" --batch 40 --jobs "$jobs" --keep "$out/kept" >> "$out/campaign.log" 2>&1
        echo "== seed $seed exit $? $(date +%T)" >> "$out/campaign.log"
        seed=$((seed + 1))
    done
    if [ -d "$out/kept" ]; then tar -czf "$out/kept.tar.gz" -C "$out" kept && rm -rf "$out/kept"; fi
    grep -E "passed|FAIL" "$out/campaign.log" | awk '/passed/{p+=$1; f+=$3} /^FAIL/{print} END {print p " passed, " f " failed in whole seeds"}'
    ;;
*)
    echo "usage: campaign.sh pack | campaign.sh run SECONDS SEED COUNT JOBS [OUT]" >&2
    exit 2
    ;;
esac
