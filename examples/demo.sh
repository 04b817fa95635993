#!/usr/bin/env bash
# make demo: compile examples/normalize.acc with afc, link it with a C
# program and run it, showing the clusters afc chose.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/build/demo"
mkdir -p "$out"
afc="$root/target/release/afc"
src="$root/examples/normalize.acc"
echo "== afc $src --emit=clusters"
"$afc" "$src" --emit=clusters
echo "== afc normalize.acc -O3 -o normalize.o; afc normalize.acc --emit=header -o normalize.h"
"$afc" "$src" -O3 -o "$out/normalize.o"
"$afc" "$src" --emit=header -o "$out/normalize.h"
echo "== cc main.c normalize.o libafcrt.a -lgomp -lm -lpthread"
cc -std=c99 -Wall -I"$root/runtime-c" -I"$out" "$root/examples/main.c" "$out/normalize.o" "$root/build/libafcrt.a" -lgomp -lm -lpthread -o "$out/demo"
echo "== ./demo"
"$out/demo"
