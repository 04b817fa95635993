#!/usr/bin/env bash
# check-run.sh FILE.acc FN ARG... — compiles FILE under every fusion mode,
# calls FN from generated C and C++ drivers (afc-allocated and
# caller-provided outputs), and compares each run with the reference
# interpreter. Errors must agree too (both fail), and no call may leak. Set
# RTOL for a tolerance, LANGS / STORAGES to run fewer driver variants.
# Programs are compiled with --strict-fp (float folds in index order, so
# results are bitwise the interpreter's); STRICT=0 compiles them as users
# do, which needs inputs for which every reassociation is exact.
# A program calling extern fns: EXTERN_C=impl.c is linked into the drivers,
# and ORACLE=same.acc (the program with the externs written in .acc) is
# what the interpreter runs.
# Parallel nests are cut into chunks of one position (--parallel-grain 1,
# GRAIN= for another) and every driver runs with each worker count in
# THREADS (default "1 3"), so small arrays exercise the chunked code.
# MODES (default "none greedy ilp") names fewer fusion modes: a program of
# hundreds of loops unfused is minutes of LLVM's time.
# A loop IR file (.lir) as FILE is compiled once, as it stands (its fusion,
# strategies and grains are in it); ORACLE= names the .acc it was made from,
# which gives the header and what the interpreter runs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
afc="${AFC:-$root/target/release/afc}"
src="$1"; fn="$2"; shift 2
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
rtol=()
[ -n "${RTOL:-}" ] && rtol=(--rtol "$RTOL")
set +e
"$afc" "${ORACLE:-$src}" --interpret "$fn" -- "$@" > "$tmp/expected"
irc=$?
set -e
lir=0
case "$src" in *.lir) lir=1; [ -n "${ORACLE:-}" ] || { echo "check-run: a .lir needs ORACLE=the .acc it was made from" >&2; exit 2; } ;; esac
"$afc" "${ORACLE:-$src}" --emit=header -o "$tmp/prog.h"
ext=()
if [ -n "${EXTERN_C:-}" ]; then
  cc -std=c99 -Wall -I"$root/runtime-c" -c "$EXTERN_C" -o "$tmp/extern.o"
  ext=("$tmp/extern.o")
fi
# The drivers depend on the header only: compiled once, linked per mode.
for lang in ${LANGS:-c c++}; do
  for storage in ${STORAGES:-alloc caller}; do
    if [ $lang = c ]; then comp=(cc -std=c99 -x c); else comp=(c++ -std=c++17 -x c++); fi
    python3 "$here/gen_driver.py" --lang $lang --storage $storage --loops 2 -- "$tmp/prog.h" "$fn" "$@" > "$tmp/driver_${lang}_$storage.src"
    "${comp[@]}" -Wall -I"$root/runtime-c" -c "$tmp/driver_${lang}_$storage.src" -o "$tmp/driver_${lang}_$storage.o"
  done
done
modes=${MODES:-none greedy ilp}
[ $lir = 1 ] && modes=lir
for mode in $modes; do
  strict=(--strict-fp)
  [ "${STRICT:-1}" = 0 ] && strict=()
  if [ $lir = 1 ]; then
    "$afc" "$src" -O${OPT:-2} ${AFC_FLAGS:-} -o "$tmp/prog_$mode.o"
  else
    "$afc" "$src" --verify "${strict[@]}" --fusion=$mode -O${OPT:-2} --parallel-grain "${GRAIN:-1}" ${AFC_FLAGS:-} -o "$tmp/prog_$mode.o"
  fi
  for lang in ${LANGS:-c c++}; do
    for storage in ${STORAGES:-alloc caller}; do
      if [ $lang = c ]; then link=cc; else link=c++; fi
      "$link" "$tmp/driver_${lang}_$storage.o" "${ext[@]}" "$tmp/prog_$mode.o" "$root/build/libafcrt.a" -lgomp -lm -lpthread -o "$tmp/driver"
      for threads in ${THREADS:-1 3}; do
        set +e
        AFC_NUM_THREADS=$threads "$tmp/driver" > "$tmp/actual"
        rc=$?
        set -e
        what="$mode/$lang/$storage/$threads threads"
        if grep -q '^LEAK' "$tmp/actual"; then
          echo "FAIL $what: $(grep '^LEAK' "$tmp/actual")"; exit 1
        fi
        if [ $irc -ne 0 ] || [ $rc -ne 0 ]; then
          if [ $irc -eq 0 ] || [ $rc -eq 0 ]; then
            echo "FAIL $what: interpreter rc=$irc, compiled rc=$rc"; cat "$tmp/expected" "$tmp/actual"; exit 1
          fi
          continue
        fi
        # The same bytes agree under any tolerance; otherwise compare values.
        if ! cmp -s "$tmp/expected" "$tmp/actual" && ! python3 "$here/compare.py" "${rtol[@]}" "$tmp/expected" "$tmp/actual"; then
          echo "FAIL $what"; exit 1
        fi
      done
    done
  done
done
if [ $irc -ne 0 ]; then head -1 "$tmp/expected"; cat "$tmp/actual"; else echo "all modes agree"; fi
