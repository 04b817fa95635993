# afc — `make demo`, `make test`, `make bench`, `make install`, `make fuzz`.
# Each installs what it needs on a fresh Debian machine (LLVM 19, CBC, lit,
# libclang and cmake for HiGHS, and pkg-config, graphviz, valgrind for the
# tests) before building.

LLVM_PREFIX ?= /usr/lib/llvm-19
export LLVM_SYS_191_PREFIX := $(LLVM_PREFIX)
# bindgen (highs-sys, which builds HiGHS from source with cmake) loads libclang.
export LIBCLANG_PATH := $(LLVM_PREFIX)/lib
export PATH := $(LLVM_PREFIX)/bin:$(HOME)/.cargo/bin:$(PATH)

APT_PACKAGES := llvm-19-dev llvm-19-tools libpolly-19-dev libclang-19-dev coinor-libcbc-dev zlib1g-dev libzstd-dev g++ python3-pip cmake pkg-config graphviz valgrind
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PYTHON ?= python3
BUILD := build
AFC := target/release/afc
RUNTIME := $(BUILD)/libafcrt.a
# Differential testing: raise these locally for a longer run.
export AFC_FUZZ_SEED ?= 1
export AFC_FUZZ_COUNT ?= 60

# make install PREFIX=… [DESTDIR=…] (docs/install.md).
PREFIX ?= /usr/local
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)

.PHONY: all deps build demo test unit lit bench bench-ilp fuzz clean install install-tree

all: build

# Installs the system packages and lit only when they are missing.
deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	@$(PYTHON) -c "import lit" 2>/dev/null || $(PYTHON) -m pip install --quiet lit || $(PYTHON) -m pip install --quiet --break-system-packages lit
	@command -v cargo >/dev/null || { echo "cargo is required (https://rustup.rs)"; exit 1; }

build: deps
	cargo build --release --locked
	$(MAKE) -s -C runtime-c OUT=../$(BUILD)

demo: build
	./examples/demo.sh

unit: build
	cargo test --release --locked --workspace

lit: build
	$(PYTHON) testsuite/run-lit.py -sv testsuite

test: unit lit

bench: build
	./testsuite/bench/run.sh

# The clustering ILP's scaling on random programs of 25-400 combinators
# (docs/ilp.md), against the best known objectives (best-known.txt), from
# gen.py and then from mix.py, a generator afc was not tuned on;
# AFC_ILP_SIZES, AFC_ILP_SEEDS, AFC_ILP_FLAGS, AFC_ILP_BEST adjust it,
# AFC_ILP_GEN=gen or mix runs one.
bench-ilp: build
	@for g in $(or $(AFC_ILP_GEN),gen mix); do echo "== $$g.py"; AFC_ILP_GEN=$$g ./testsuite/bench/ilp/run.sh || exit 1; done

# Coverage-guided fuzzing and differential testing at scale (not part of
# `make test`): AFC_FUZZ_SECONDS per target, AFC_FUZZ_COUNT programs.
FUZZ_COUNT := $(if $(filter file,$(origin AFC_FUZZ_COUNT)),2000,$(AFC_FUZZ_COUNT))
fuzz: build
	AFC_FUZZ_COUNT=$(FUZZ_COUNT) ./testsuite/fuzz/run-fuzz.sh

install: build
	$(MAKE) -s install-tree

# Copies what `build` made; the install test (testsuite/install) uses it.
install-tree:
	@test -x $(AFC) -a -f $(RUNTIME) || { echo "run make build first"; exit 1; }
	d="$(DESTDIR)$(PREFIX)"; \
	install -d "$$d/bin" "$$d/include" "$$d/lib/pkgconfig" "$$d/lib/cmake/afc" "$$d/share/doc/afc" && \
	install -m 755 $(AFC) "$$d/bin/afc" && \
	install -m 644 runtime-c/afc.h "$$d/include/afc.h" && \
	install -m 644 $(RUNTIME) "$$d/lib/libafcrt.a" && \
	install -m 755 $(BUILD)/libafcrt.so.0 "$$d/lib/libafcrt.so.0" && \
	ln -sf libafcrt.so.0 "$$d/lib/libafcrt.so" && \
	sed -e 's|@VERSION@|$(VERSION)|' packaging/afc.pc.in > "$$d/lib/pkgconfig/afc.pc" && \
	install -m 644 packaging/afcConfig.cmake "$$d/lib/cmake/afc/afcConfig.cmake" && \
	sed -e 's|@VERSION@|$(VERSION)|' packaging/afcConfigVersion.cmake.in > "$$d/lib/cmake/afc/afcConfigVersion.cmake" && \
	install -m 644 README.md LICENSE LICENSE-MIT LICENSE-APACHE docs/*.md "$$d/share/doc/afc/" && \
	echo "installed afc $(VERSION) in $$d (it needs CBC's shared libraries at run time: docs/install.md)"

clean:
	cargo clean
	rm -rf $(BUILD)
