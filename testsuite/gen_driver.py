#!/usr/bin/env python3
"""Writes a C or C++ driver that calls one exported function of an afc
header with the given arguments (flattened parameter leaves, as for
`afc --interpret`) and prints its results in the interpreter's format.

  gen_driver.py [--lang c|c++] [--storage alloc|caller] [--loops N] [--entry NAME] -- HEADER FN ARG...

--storage caller passes output arrays with caller-provided room (the cube
of the largest input length: a cross of a cross fits; at least 289 times
it, and 2048: rows of 17 x 17 planes fit); --loops N calls the function N times (checking that
repeated calls with reused storage give the same answer); --entry NAME
writes `int NAME(void)` instead of `main`, without the includes and the
printing helpers (PREAMBLE), so that several drivers share one file (the
differential tester's batches)."""
import argparse
import re
import sys

CTYPES = {"bool": "bool", "int32_t": "i32", "int64_t": "i64", "float": "f32", "double": "f64"}


def parse_proto(header, fn):
    text = open(header).read()
    m = re.search(r"int\s+%s\s*\(([^)]*)\)\s*;" % re.escape(fn), text)
    if not m:
        sys.exit("no prototype for %s in %s" % (fn, header))
    params = []
    for p in m.group(1).split(","):
        p = p.strip()
        if p == "void" or not p:
            continue
        t, name = p.rsplit(None, 1)
        out = name.startswith("*") or t.endswith("*")
        name = name.lstrip("*")
        t = t.rstrip("*").strip()
        # Inputs are declared `const` (by value: the driver's own are not).
        t = re.sub(r"^const\s+", "", t)
        params.append((t, name, out))
    return params


def elem_of(t):
    m = re.match(r"afc_(\w+)_([123])d", t)
    return m.group(1) if m else None


def rank_of(t):
    m = re.match(r"afc_(\w+)_([123])d", t)
    return int(m.group(2)) if m else 0


def parse_array(v, rank):
    """An argument as `afc --interpret` takes it: `[..]`, nested lists one
    level per dimension, or `RxC:[..]` (shape, then elements row-major).
    Returns (shape, flat elements as strings)."""
    v = v.strip()
    if ":" in v:
        shape, data = v.split(":", 1)
        dims = [int(d) for d in shape.split("x")]
        inner = data.strip()[1:-1].strip()
        return dims, ([x for x in inner.split(",")] if inner else [])

    def nested(s, depth, shape, out):
        s = s.strip()
        if depth == rank:
            out.append(s)
            return
        inner = s[1:-1]
        items, level, start = [], 0, 0
        for i, c in enumerate(inner):
            if c == "[":
                level += 1
            elif c == "]":
                level -= 1
            elif c == "," and level == 0:
                items.append(inner[start:i])
                start = i + 1
        if inner.strip():
            items.append(inner[start:])
        if shape[depth] is None:
            shape[depth] = len(items)
        for it in items:
            nested(it, depth + 1, shape, out)

    shape, out = [None] * rank, []
    nested(v, 0, shape, out)
    return [d or 0 for d in shape], out


def c_elem(e):
    return {"bool": "bool", "i32": "int32_t", "i64": "int64_t", "f32": "float", "f64": "double"}[e]


def lit(v, e):
    v = v.strip()
    if e == "bool":
        return "true" if v in ("1", "true") else "false"
    if e == "f32":
        return "(float)%s" % fmt_float(v)
    if e == "f64":
        return fmt_float(v)
    if e == "i64":
        return "INT64_C(%s)" % v
    return "(int32_t)INT64_C(%s)" % v


def fmt_float(v):
    f = float(v)
    if f != f:
        return "NAN"
    if f in (float("inf"), float("-inf")):
        return "INFINITY" if f > 0 else "(-INFINITY)"
    return repr(f)


PREAMBLE = "\n".join([
    "#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n",
    "static inline void pf(double x) { if (x != x) printf(\"nan\"); else printf(\"%.17g\", x); }",
    "static inline void pf32(float x) { if (x != x) printf(\"nan\"); else printf(\"%.17g\", (double)x); }",
])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("header")
    ap.add_argument("fn")
    ap.add_argument("--lang", default="c")
    ap.add_argument("--storage", default="alloc")
    ap.add_argument("--loops", type=int, default=1)
    ap.add_argument("--entry")
    ap.add_argument("args", nargs="*")
    a = ap.parse_args()
    print(driver(a.header, a.fn, a.args, a.lang, a.storage, a.loops, a.entry))


def driver(header, fn, args, lang="c", storage="alloc", loops=1, entry=None):
    """The driver's text (see the module's doc)."""
    a = argparse.Namespace(header=header, fn=fn, args=args, lang=lang, storage=storage, loops=loops, entry=entry)
    params = parse_proto(a.header, a.fn)
    ins = [p for p in params if not p[2]]
    outs = [p for p in params if p[2]]
    if len(a.args) != len(ins):
        sys.exit("%s takes %d arguments, %d given" % (a.fn, len(ins), len(a.args)))
    L = []
    w = L.append
    if a.entry:
        w("int %s(void) {" % a.entry)
    else:
        w('#include "%s"' % a.header)
        w(PREAMBLE)
        w("int main(void) {")
    maxlen = 0
    call = []
    for (t, name, _), v in zip(ins, a.args):
        e = elem_of(t)
        if e:
            shape, vals = parse_array(v, rank_of(t))
            maxlen = max([maxlen, len(vals)] + shape)
            n = max(len(vals), 1)
            w("    static %s %s_d[%d] = {%s};" % (c_elem(e), name, n, ", ".join(lit(x, e) for x in vals) or "0"))
            w("    %s %s = {%s_d, {%s}};" % (t, name, name, ", ".join(str(d) for d in shape)))
        else:
            e = CTYPES[t]
            w("    %s %s = %s;" % (t, name, lit(v, e)))
        call.append(name)
    # Room for a cross of crosses of the inputs (n^3), or for rows of
    # 17 x 17 planes (289 n, n at least 4: a generate's size may be a
    # scalar argument), within reason.
    room = min(max(maxlen ** 3, 289 * max(maxlen, 4), 2048), max(maxlen, 1 << 16))
    w("    int rc = 0;")
    # Every call must release what it does not hand over, errors included.
    w("    int64_t live0 = afc_live_count();")
    leak = 'if (afc_live_count() != live0) { printf("LEAK: %lld blocks\\n", (long long)(afc_live_count() - live0)); return 99; }'
    w("    for (int rep = 0; rep < %d; rep++) {" % a.loops)
    for t, name, _ in outs:
        e = elem_of(t)
        if e:
            if a.storage == "caller":
                w("    static %s %s_room[%d];" % (c_elem(e), name, room))
                # Room for `room` elements: shape[0] = room, the others 1.
                w("    %s %s = {%s_room, {%s}};" % (t, name, name, ", ".join([str(room)] + ["1"] * (rank_of(t) - 1))))
            else:
                w("    %s %s = {NULL, {%s}};" % (t, name, ", ".join(["0"] * rank_of(t))))
        else:
            w("    %s %s = 0;" % (t, name))
        call.append("&" + name)
    w("    rc = %s(%s);" % (a.fn, ", ".join(call)))
    w("    if (rc != 0) { printf(\"error %%d %%s\\n\", rc, afc_last_error()); %s return 3; }" % leak)
    w("    if (rep + 1 == %d) {" % a.loops)
    for t, name, _ in outs:
        e = elem_of(t) or CTYPES[t]
        is_arr = elem_of(t) is not None
        pr = {"bool": 'printf("%d", (int)X)', "i32": 'printf("%d", (int)X)', "i64": 'printf("%lld", (long long)X)', "f32": "pf32(X)", "f64": "pf(X)"}[e]
        if is_arr:
            r = rank_of(t)
            count = " * ".join("%s.shape[%d]" % (name, d) for d in range(r))
            if r == 1:
                w('    printf("%s = [");' % name)
            else:
                # A matrix as the interpreter prints it: its shape, then its elements.
                w('    printf("%s = %s:[", %s);' % (name, "x".join(["%lld"] * r), ", ".join("(long long)%s.shape[%d]" % (name, d) for d in range(r))))
            w("    for (int64_t i = 0; i < %s; i++) { if (i) printf(\", \"); %s; }" % (count, pr.replace("X", "%s.data[i]" % name)))
            w('    printf("]\\n");')
        else:
            w('    printf("%s = "); %s; printf("\\n");' % (name, pr.replace("X", name)))
    w("    }")
    if a.storage != "caller":
        for t, name, _ in outs:
            if elem_of(t):
                w("    afc_free(%s.data);" % name)
    w("    }")
    w("    " + leak)
    w("    return rc;\n}")
    return "\n".join(L)


if __name__ == "__main__":
    main()
