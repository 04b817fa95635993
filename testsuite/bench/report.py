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

With --scaling, reads the folder that scaling.sh's run.sh wrote on a
many-core machine: afc's median ms on each worker count and its speed-up
over one worker, both as the two processes' times divided (`raw`) and as
their afc/c_fused ratios divided (`anchored`: c_fused runs on one worker
in both, so it stands for the machine's drift between the runs).

usage: report.py FUSED.jsonl UNFUSED.jsonl FAST.jsonl [PARALLEL.jsonl N]
       report.py --scaling DIR"""
import glob
import os
import json
import sys


def load(path):
    rows = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            rows.setdefault(r["bench"], {})[r["impl"]] = r
    return rows


def scaling(folder):
    runs = {}
    for path in glob.glob(os.path.join(folder, "*_*.jsonl")):
        mode, workers = os.path.basename(path)[:-len(".jsonl")].rsplit("_", 1)
        runs[(mode, int(workers))] = load(path)
    counts = sorted({w for _, w in runs})
    if 1 not in counts:
        sys.exit("report.py: %s holds no run on one worker" % folder)
    print("%-24s" % "afc, median ms" + "".join("%10s" % ("x%d" % w) for w in counts)
          + "   speed-up at " + ", ".join(str(w) for w in counts[1:]) + ": raw (anchored)")
    for mode in ("ilp", "fast"):
        base = runs.get((mode, 1), {})
        for b in base:
            med = lambda w, impl: runs.get((mode, w), {}).get(b, {}).get(impl, {}).get("med_ms")
            name = b + (" --fast-math" if mode == "fast" else "")
            times = "".join("%10.2f" % med(w, "afc") if med(w, "afc") else "%10s" % "-" for w in counts)
            ups = []
            anchor = "c_tuned" if mode == "fast" else "c_fused"
            for w in counts[1:]:
                a1, aw, c1, cw = med(1, "afc"), med(w, "afc"), med(1, anchor), med(w, anchor)
                ups.append("%.1f (%.1f)" % (a1 / aw, (a1 / c1) / (aw / cw)) if a1 and aw and c1 and cw else "-")
            checks = {runs[(mode, w)][b]["afc"]["check"] for w in counts if b in runs.get((mode, w), {})}
            print("%-24s%s   %s  %s" % (name, times, ", ".join(ups), ",".join(sorted(checks))))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--scaling":
        return scaling(sys.argv[2])
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
