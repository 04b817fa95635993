#!/usr/bin/env python3
"""Compares two result listings (`name = value` or `name = [v, …]` lines),
from a compiled driver and from `afc --interpret`: integers exactly, floats
exactly unless --rtol is given (reassociated reductions need it). Results
are matched in order: the names are the header's and may differ between a
program and its oracle."""
import argparse
import math
import sys


def parse(path):
    with open(path) as f:
        return parse_text(f.read())


def parse_text(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or " = " not in line:
            continue
        name, val = line.split(" = ", 1)
        # A matrix: `RxC:[…]`; its shape is compared as one more element.
        shape = None
        if ":" in val and not val.startswith("["):
            shape, val = val.split(":", 1)
        if val.startswith("["):
            inner = val[1:-1].strip()
            xs = [x.strip() for x in inner.split(",")] if inner else []
            out.append((name, (["shape " + shape] if shape is not None else []) + xs))
        else:
            out.append((name, val.strip()))
    return out


def same(a, b, rtol):
    if a.startswith("shape ") or b.startswith("shape "):
        return a == b
    try:
        x, y = int(a), int(b)
        return x == y
    except ValueError:
        pass
    x, y = float(a), float(b)
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if rtol == 0:
        return x == y
    return x == y or abs(x - y) <= rtol * max(abs(x), abs(y), 1e-300)


def disagreements(e, g, rtol=0.0):
    """Where two parsed listings differ (an empty list when they agree)."""
    if len(e) != len(g):
        return ["different results: %s vs %s" % ([k for k, _ in e], [k for k, _ in g])]
    out = []
    for (k, ev), (_, gv) in zip(e, g):
        if isinstance(ev, list) != isinstance(gv, list) or (isinstance(ev, list) and len(ev) != len(gv)):
            out.append("%s: shapes differ: %s vs %s" % (k, ev, gv))
            continue
        pairs = zip(ev, gv) if isinstance(ev, list) else [(ev, gv)]
        for i, (x, y) in enumerate(pairs):
            if not same(x, y, rtol):
                out.append("%s[%d]: expected %s, got %s" % (k, i, x, y))
                break
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("expected")
    ap.add_argument("actual")
    ap.add_argument("--rtol", type=float, default=0.0)
    a = ap.parse_args()
    diff = disagreements(parse(a.expected), parse(a.actual), a.rtol)
    for line in diff:
        print(line)
    sys.exit(1 if diff else 0)


if __name__ == "__main__":
    main()
