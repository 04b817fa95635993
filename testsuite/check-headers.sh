#!/usr/bin/env bash
# check-headers.sh FILE.acc… — the header afc writes for each program that
# compiles must compile warning-free as C99, C11 and C++17 under
# -Wall -Wextra -pedantic -Werror (docs/abi.md). Programs afc rejects are
# skipped: they are the diagnostics tests'.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
afc="${AFC:-$root/target/release/afc}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
n=0
for src in "$@"; do
  n=$((n + 1))
  h="$tmp/h$n.h"
  "$afc" "$src" --emit=header -o "$h" 2>/dev/null || continue
  printf '#include "h%d.h"\n' "$n" > "$tmp/use$n.c"
  cp "$tmp/use$n.c" "$tmp/use$n.cpp"
  for std in c99 c11; do
    cc -std=$std -Wall -Wextra -pedantic -Werror -I"$root/runtime-c" -fsyntax-only "$tmp/use$n.c" || { echo "FAIL: $src ($std)"; exit 1; }
  done
  c++ -std=c++17 -Wall -Wextra -pedantic -Werror -I"$root/runtime-c" -fsyntax-only "$tmp/use$n.cpp" || { echo "FAIL: $src (c++17)"; exit 1; }
  echo "ok: $src"
done
