#!/usr/bin/env bash
# make fuzz: coverage-guided fuzzing of the parser, the front end and the
# pipeline up to the loop IR and on through LLVM to an object file
# (cargo-fuzz / libFuzzer, nightly Rust), seeded
# with every .acc program of the test suite, then the differential tester
# at scale. AFC_FUZZ_SECONDS (per target, default 300), AFC_FUZZ_COUNT
# (differential programs, default 2000), AFC_FUZZ_JOBS (batches of them
# checked at once, default 1), AFC_FUZZ_SEED (default 1),
# AFC_FUZZ_TARGETS (default "parse typecheck pipeline codegen").
# A crash leaves its input in fuzz/artifacts/TARGET/; rerun it with
# `cargo +nightly fuzz run TARGET fuzz/artifacts/TARGET/crash-…`.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
seconds="${AFC_FUZZ_SECONDS:-300}"
count="${AFC_FUZZ_COUNT:-2000}"
seed="${AFC_FUZZ_SEED:-1}"
targets="${AFC_FUZZ_TARGETS:-parse typecheck pipeline codegen}"

# Tools, when missing: nightly Rust and cargo-fuzz.
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
cargo +nightly fuzz --version >/dev/null 2>&1 || cargo install cargo-fuzz --locked

cd "$root/fuzz"
triple="$(rustc +nightly -vV | sed -n 's/^host: //p')"
for t in $targets; do
  corpus="$root/fuzz/corpus/$t"
  mkdir -p "$corpus"
  # Seed corpus: the suite's programs (libFuzzer keeps what adds coverage).
  find "$root/testsuite" "$root/examples" -name '*.acc' -not -path '*/bench/*' | while read -r f; do
    cp "$f" "$corpus/seed-$(echo "$f" | md5sum | cut -c1-12).acc"
  done
  # The ILP solvers' C++ code is not instrumented (CBC never released a
  # few kilobytes it allocates once, which LeakSanitizer reported): the
  # pipeline and codegen targets, which run the ILP, do not check leaks.
  leaks=1
  case "$t" in pipeline | codegen) leaks=0 ;; esac
  echo "== fuzz $t for ${seconds} s"
  # Built by cargo-fuzz, run directly: under `cargo fuzz run` (cargo's
  # environment) the codegen target stopped at its first input with
  # "ASan runtime does not come first in initial library list".
  cargo +nightly fuzz build "$t" 2>&1 | grep -E "^error" || true
  mkdir -p "$root/fuzz/artifacts/$t"
  ASAN_OPTIONS="detect_leaks=$leaks" "$root/fuzz/target/$triple/release/$t" -artifact_prefix="$root/fuzz/artifacts/$t/" "$corpus" \
    -max_total_time="$seconds" -max_len=4096 -timeout=20 -rss_limit_mb=4096 -detect_leaks=$leaks -print_final_stats=1 2>&1 \
    | grep -E "^(stat::|==|INFO: (Loaded|seed)|#[0-9]+ +DONE)|panicked|ERROR|SUMMARY" || true
  if ls "$root/fuzz/artifacts/$t"/crash-* >/dev/null 2>&1; then
    echo "FAIL: $t crashed; inputs in fuzz/artifacts/$t/"
    exit 1
  fi
done

echo "== differential: $count programs from seed $seed"
cd "$root"
python3 testsuite/fuzz/difftest.py --seed "$seed" --count "$count"
