#!/usr/bin/env python3
"""Puts the anchors driver's JSON lines from the fused, the unfused and the
fast-math run side by side: median ms per implementation and afc's ratios
to c_fused and c_tuned, each against the C of the same process (the
driver's rule: compare ratios from one run, never absolute times across
runs). `fast/tuned` is afc --fast-math over the c_tuned of its own run.
Every column runs afc on one worker but the last three, from PARALLEL.jsonl
(afc on all N cores): its time, its ratio to that run's c_fused, and the
speed-up over one worker (the two runs' afc/c_fused ratios divided, since
times are compared within one process only).

usage: report.py FUSED.jsonl UNFUSED.jsonl FAST.jsonl [PARALLEL.jsonl N]"""
import json
import sys


def load(path):
    rows = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            rows.setdefault(r["bench"], {})[r["impl"]] = r
    return rows


def main():
    fused, unfused, fast = load(sys.argv[1]), load(sys.argv[2]), load(sys.argv[3])
    par = load(sys.argv[4]) if len(sys.argv) > 4 else {}
    cores = sys.argv[5] if len(sys.argv) > 5 else "N"
    order = ["normalize2", "normalizeInc", "filterMax", "quadtree", "singleLoop", "dotp", "blackscholes"]
    benches = [b for b in order if b in fused] + [b for b in fused if b not in order]
    head = ("benchmark", "c_unfused", "c_fused", "c_tuned", "io_floor", "afc", "afc/fused", "afc/tuned", "none/fused", "fast/tuned",
            "afc x%s" % cores, "x%s/fused" % cores, "speed-up", "check")
    print("%-13s %10s %9s %9s %9s %9s %10s %10s %11s %11s %9s %10s %9s  %s" % head)
    for b in benches:
        row = fused[b]
        med = lambda impl, rows=row: rows[impl]["med_ms"] if impl in rows else None
        cf, ct, afc = med("c_fused"), med("c_tuned"), med("afc")
        nrow = unfused.get(b, {})
        none = nrow.get("afc", {}).get("med_ms")
        ncf = nrow.get("c_fused", {}).get("med_ms")
        frow = fast.get(b, {})
        fafc = frow.get("afc", {}).get("med_ms")
        fct = frow.get("c_tuned", frow.get("c_fused", {})).get("med_ms")
        prow = par.get(b, {})
        pafc, pcf = prow.get("afc", {}).get("med_ms"), prow.get("c_fused", {}).get("med_ms")
        speedup = "%9.2f" % ((afc / cf) / (pafc / pcf)) if afc and cf and pafc and pcf else "%9s" % "-"
        checks = [r["check"] for r in (row.get("afc"), nrow.get("afc"), frow.get("afc"), prow.get("afc")) if r]
        fmt = lambda v: "%9.2f" % v if v is not None else "%9s" % "-"
        ratio = lambda a, c: "%10.2f" % (a / c) if a is not None and c else "%10s" % "-"
        print("%-13s %10s %9s %9s %9s %9s %s %s %s %s %s %s %s  %s" % (
            b, fmt(med("c_unfused")), fmt(cf), fmt(ct), fmt(med("io_floor")), fmt(afc),
            ratio(afc, cf), ratio(afc, ct), ratio(none, ncf).rjust(11), ratio(fafc, fct).rjust(11),
            fmt(pafc), ratio(pafc, pcf), speedup, ",".join(checks)))


if __name__ == "__main__":
    main()
