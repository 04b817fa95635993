#!/usr/bin/env bash
# check-install.sh — installs afc into a temporary prefix (make install-tree),
# then builds and runs the two example projects from copies outside the
# checkout, with only the installed tree on the PATH: examples/c-project
# (C99, pkg-config) and examples/cmake-project (C++17, find_package(afc)).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
make -s -C "$root" install-tree PREFIX="$prefix" > "$tmp/install.log"
echo "installed: $(cd "$prefix" && find . -type f -o -type l | sort | grep -v share/doc | tr '\n' ' ')"
export PATH="$prefix/bin:/usr/local/bin:/usr/bin:/bin"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
echo "afc: $(command -v afc)"
echo "pkg-config: $(pkg-config --modversion afc) $(pkg-config --cflags --libs afc | sed "s|$prefix|PREFIX|g")"

cp -r "$root/examples/c-project" "$tmp/c-project"
make -s -C "$tmp/c-project" > "$tmp/c.log" 2>&1 || { cat "$tmp/c.log"; exit 1; }
echo "== c-project"
"$tmp/c-project/softmax-demo"

cp -r "$root/examples/cmake-project" "$tmp/cmake-project"
cmake -S "$tmp/cmake-project" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" > "$tmp/cmake.log" 2>&1 || { cat "$tmp/cmake.log"; exit 1; }
cmake --build "$tmp/cmake-build" > "$tmp/cmake-build.log" 2>&1 || { cat "$tmp/cmake-build.log"; exit 1; }
echo "== cmake-project"
"$tmp/cmake-build/variance-demo"
# The shared runtime links too, found through the rpath pkg-config gives.
cc -std=c99 -Wall -I"$tmp/c-project" "$tmp/c-project/main.c" "$tmp/c-project/softmax.o" $(pkg-config --cflags --libs afc) -o "$tmp/shared-demo"
echo "== shared: $(ldd "$tmp/shared-demo" | grep -c "$prefix/lib/pkgconfig/../../lib/libafcrt.so.0") libafcrt.so from the prefix"
"$tmp/shared-demo" | tail -1
