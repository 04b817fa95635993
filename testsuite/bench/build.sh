#!/bin/sh
# build.sh OUT MODE… — builds ../shared/bench's driver with afc's objects,
# one driver per MODE under OUT/MODE/bench_c: `ilp`, `none` (--fusion=…),
# `fast` (--fusion=ilp --fast-math). Used by run.sh (`make bench`) and
# scaling.sh. AFC_CPU (afc's --cpu), AFC_FLAGS (more afc flags), BENCH_CC and BENCH_CFLAGS (the
# anchors' compiler and flags; default the anchors' own: -O3 -march=native)
# build for another machine.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$(dirname "$here")")
shared=${SHARED_BENCH:-$root/../shared/bench}
afc="$root/target/release/afc"
out=$1
shift
cpu=""
[ -n "${AFC_CPU:-}" ] && cpu="--cpu $AFC_CPU"
mkdir -p "$out/rt"
# The runtime's objects, so that each afc column is one relocatable object
# (the anchors' Makefile links only .o files).
(cd "$out/rt" && ar x "$root/build/libafcrt.a")
"$afc" "$here/anchors.acc" --emit=header -o "$out/anchors_afc.h"
cc -O2 -Wall -I"$root/runtime-c" -I"$shared/c" -I"$out" -c "$here/adapters.c" -o "$out/adapters.o"
for mode in "$@"; do
  case $mode in
    fast) flags="--fusion=ilp --fast-math" ;;
    *) flags="--fusion=$mode" ;;
  esac
  # shellcheck disable=SC2086
  "$afc" "$here/anchors.acc" -O3 $flags $cpu ${AFC_FLAGS:-} -o "$out/anchors_$mode.o"
  ld -r "$out/anchors_$mode.o" "$out/adapters.o" "$out/rt"/*.o -o "$out/afc_$mode.o"
  # (-fopenmp brings libgomp; a static link warns that it may dlopen)
  make -s -C "$shared" B="$out/$mode" AFC_OBJS="$out/afc_$mode.o" CC="${BENCH_CC:-gcc -fopenmp}" ${BENCH_CFLAGS:+"CFLAGS=$BENCH_CFLAGS"} >/dev/null
done
