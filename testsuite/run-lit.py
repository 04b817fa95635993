#!/usr/bin/env python3
"""Runs LLVM's lit (installed from PyPI by `make deps`)."""
import lit.main

if __name__ == "__main__":
    lit.main.main()
