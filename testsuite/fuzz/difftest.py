#!/usr/bin/env python3
"""Randomised differential testing: generates well-typed .acc programs of
the compiled subset (map, zip, unzip, generate, iota, fold, filter — nested,
fused and manifest — scanl, prescanl, scanr, reverse, force, gather,
backpermute, scatter, permute, cross; rank-2 and rank-3 generates (of a
shape tuple or of another array's shape, rows of up to 17), maps, row folds,
row scans, reverses, transposes, element reads and tuple-index gathers,
matrix parameters;
array-valued if; recursive functions on halves and filtered parts; extern
calls (Inputs/externs.c, with Inputs/externs.acc as
the interpreter's oracle), length, scalar
code with tuples, if, select, indexing, casts, built-ins) and random inputs,
then checks, as check-run.sh does, that every fusion mode, from C drivers with
afc-allocated and caller-provided outputs, agrees with the reference
interpreter, errors included (out-of-range indices, division by zero, size
mismatches, negative sizes).

  difftest.py [--seed S] [--count N] [--batch K] [--jobs J] [--keep DIR] [--only REGEX]

The seed and count default to AFC_FUZZ_SEED and AFC_FUZZ_COUNT. Programs
are checked K at a time (AFC_FUZZ_BATCH, default 10; `check_batch`): their
functions in one file, compiled once per fusion mode and called from one
driver, which costs a quarter of checking each alone; a program the batch
finds wrong is checked alone with check-run.sh, which reports it. J batches
are checked at once (AFC_FUZZ_JOBS, default 1), each by a process of its
own; programs and reports stay in order, so a seed gives the same run.
A batch that LLVM crashed on (afc warns and compiles it unoptimised, an
LLVM bug it survives: llvm/llvm-crash.acc) is checked as any other and
reported in a NOTE line and the final count.
--only REGEX checks only the programs whose source matches (say
'cross[(]' to hunt among the crosses, which are one program in twelve)."""
import argparse
import collections
import concurrent.futures
import os
import random
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CHECK = os.path.join(ROOT, "testsuite", "check-run.sh")
RUNTIME = os.path.join(ROOT, "runtime-c")
AFC = os.environ.get("AFC", os.path.join(ROOT, "target", "release", "afc"))
sys.path.insert(0, os.path.join(ROOT, "testsuite"))
import compare  # noqa: E402  (listings compared in process)
import gen_driver  # noqa: E402  (PREAMBLE, shared by a batch's drivers)

NUM = ["i32", "i64", "f32", "f64"]
ALL = NUM + ["bool"]


class Gen:
    def __init__(self, rng):
        self.uses_externs = False
        self.helpers = []
        self.r = rng
        self.n = 0

    def fresh(self, base):
        # Never a type's name: `i32` as a variable hides the cast `i32(x)`.
        self.n += 1
        while "%s%d" % (base, self.n) in ("i32", "i64", "f32", "f64"):
            self.n += 1
        return "%s%d" % (base, self.n)

    def lit(self, t, standalone=False):
        r = self.r
        if t == "bool":
            return r.choice(["true", "false"])
        if t in ("i32", "i64"):
            v = r.choice([0, 1, 2, 3, -1, 7, -5, 100, r.randint(-50, 50)])
            s = str(abs(v)) + (t if standalone or r.random() < 0.3 else "")
            return "(-%s)" % s if v < 0 else s
        v = r.choice(["0.5", "1.0", "2.0", "0.25", "3.5", "1.5e1", "10.0"])
        s = v + (t if standalone or r.random() < 0.3 else "")
        return "(-%s)" % s if r.random() < 0.3 else s

    def expr(self, t, env, arrays, depth):
        """A scalar expression of type t over env [(name, type)]; arrays
        [(name, elem type)] may be indexed and measured."""
        r = self.r
        vars_t = [n for n, ty in env if ty == t]
        if depth <= 0 or r.random() < 0.25:
            if vars_t and r.random() < 0.7:
                return r.choice(vars_t)
            if env and r.random() < 0.7:
                # Any variable, converted to t.
                n, u = r.choice(env)
                if t == "bool":
                    return n if u == "bool" else "(%s > %s)" % (n, self.lit(u, True))
                return "%s(%s)" % (t, n)
            return self.lit(t, standalone=not vars_t)
        d = depth - 1
        if t == "bool":
            k = r.randint(0, 3)
            if k == 0:
                u = r.choice(NUM)
                op = r.choice(["<", "<=", ">", ">=", "==", "!="])
                return "(%s %s %s)" % (self.expr(u, env, arrays, d), op, self.expr(u, env, arrays, d))
            if k == 1:
                return "(%s %s %s)" % (self.expr("bool", env, arrays, d), r.choice(["&&", "||", "^", "&", "|"]), self.expr("bool", env, arrays, d))
            if k == 2:
                return "!%s" % self.expr("bool", env, arrays, d)
            return self.expr("bool", env, arrays, 0)
        k = r.randint(0, 11)
        a = lambda: self.expr(t, env, arrays, d)
        if k <= 2:
            return "(%s %s %s)" % (a(), r.choice(["+", "-", "*"]), a())
        if k == 3:
            return "%s(%s, %s)" % (r.choice(["min", "max"]), a(), a())
        if k == 4:
            return "if %s { %s } else { %s }" % (self.expr("bool", env, arrays, d), a(), a())
        if k == 5:
            return "select(%s, %s, %s)" % (self.expr("bool", env, arrays, d), a(), a())
        if k == 6:
            u = r.choice(ALL)
            return "%s(%s)" % (t, self.expr(u, env, arrays, d))
        if k == 7:
            if t in ("f32", "f64"):
                return "%s(%s)" % (r.choice(["sqrt", "floor", "ceil", "round", "exp", "sin", "cos", "abs"]), a())
            return "(%s %s %s)" % (a(), r.choice(["/", "%", "<<", ">>", "&", "|", "^"]), a())
        if k == 8 and t in ("f32", "f64"):
            return "(%s / %s)" % (a(), a())
        if k == 9 and arrays:
            name, et = r.choice(arrays)
            if et == t:
                i = self.expr("i64", env, [], d)
                if r.random() < 0.8:
                    i = "(abs(%s) %% max(length(%s), 1))" % (i, name)
                return "%s[%s]" % (name, i)
        if k == 10 and t == "i64" and arrays:
            return "length(%s)" % r.choice(arrays)[0]
        if k == 11:
            v = self.fresh("v")
            return "{ let %s = %s; %s }" % (v, a(), self.expr(t, env + [(v, t)], arrays, d))
        return a()

    def program(self):
        r = self.r
        nparams = r.randint(1, 3)
        params = [("p%d" % i, r.choice(ALL)) for i in range(nparams)]
        scal = [("k", "i64")] if r.random() < 0.5 else []
        # Size classes: the parameters' size, a rigid generate size, and one
        # per filter; a map combines arrays of one class only.
        classes = {"n": list(params)}
        # How many input lengths multiply into a class's size (a cross adds
        # its arguments'); kept at most 3 so caller storage of n^3 suffices.
        power = {"n": 1, "k": 1}
        env = list(scal)
        lines = []
        folds = []

        def all_arrays():
            return [a for c in classes.values() for a in c]

        # Matrices and rank-3 arrays: (name, elem type, dims), a dim being
        # a size class's name or a small constant.
        mats = []
        if r.random() < 0.15:
            t = r.choice(ALL)
            mats.append(("pm", t, ["n", "pmc"]))
            params.append(("pm", "[%s]" % t))
        for _ in range(r.randint(2, 8)):
            k = r.random() * 1.25
            if k >= 1.0:
                cls = r.choice([c for c in classes if classes[c]])
                if k < 1.13:
                    self.matrix(lines, classes, power, mats, env, cls, all_arrays)
                elif k < 1.19:
                    self.array_if(lines, classes, power, env, cls, all_arrays)
                else:
                    self.recursion(lines, classes, power, env, cls)
                continue
            cls = r.choice([c for c in classes if classes[c]])
            arrays = classes[cls]
            if k < 0.3:
                ins = r.sample(arrays, r.randint(1, min(3, len(arrays))))
                ps = [self.fresh("x") for _ in ins]
                t = r.choice(ALL)
                wenv = env + list(zip(ps, [e for _, e in ins]))
                name = self.fresh("m")
                if r.random() < 0.25:
                    t2 = r.choice(ALL)
                    body = "(%s, %s)" % (self.expr(t, wenv, all_arrays(), 3), self.expr(t2, wenv, all_arrays(), 2))
                    a, b = self.fresh("u"), self.fresh("w")
                    lines.append("let (%s, %s) = unzip(map(|%s| %s, %s));" % (a, b, ", ".join(ps), body, ", ".join(n for n, _ in ins)))
                    arrays += [(a, t), (b, t2)]
                else:
                    lines.append("let %s = map(|%s| %s, %s);" % (name, ", ".join(ps), self.expr(t, wenv, all_arrays(), 3), ", ".join(n for n, _ in ins)))
                    arrays.append((name, t))
            elif k < 0.5:
                # A filter: a new size class below `cls`.
                name = self.fresh("f")
                newcls = "c" + name
                if len(arrays) >= 2 and r.random() < 0.3:
                    (a, ta), (b, tb) = r.sample(arrays, 2)
                    x = self.fresh("q")
                    pred = self.expr("bool", env + [(x + ".0", ta), (x + ".1", tb)], all_arrays(), 2)
                    u, w = self.fresh("u"), self.fresh("w")
                    lines.append("let (%s, %s) = unzip(filter(|%s| %s, zip(%s, %s)));" % (u, w, x, pred, a, b))
                    classes[newcls] = [(u, ta), (w, tb)]
                else:
                    src, et = r.choice(arrays)
                    x = self.fresh("q")
                    pred = self.expr("bool", env + [(x, et)], all_arrays(), 3)
                    lines.append("let %s = filter(|%s| %s, %s);" % (name, x, pred, src))
                    classes[newcls] = [(name, et)]
                power[newcls] = power[cls]
                if r.random() < 0.4:
                    ln = self.fresh("len")
                    lines.append("let %s = length(%s);" % (ln, classes[newcls][0][0]))
                    env.append((ln, "i64"))
            elif k < 0.65:
                src, et = r.choice(arrays)
                name = self.fresh("s")
                if et in NUM and r.random() < 0.6:
                    op = r.choice(["(+)", "(*)", "min", "max", "|a, b| a + b"])
                    if op == "(*)" and et in ("f32", "f64"):
                        op = "(+)"
                    lines.append("let %s = fold(%s, %s, %s);" % (name, op, self.lit(et, True), src))
                    env.append((name, et))
                elif len(arrays) >= 2 and r.random() < 0.5:
                    # A picking fold (an arg-max): keeps the state or the
                    # element whole, on a comparison of some components
                    # (docs/strategy.md, "Picking folds").
                    ins = r.sample(arrays, r.randint(2, min(3, len(arrays))))
                    p, q = self.fresh("p"), self.fresh("q")
                    wenv = env + [("%s.%d" % (v, j), t) for v in (p, q) for j, (_, t) in enumerate(ins)]
                    keys = [j for j, (_, t) in enumerate(ins) if t in NUM]
                    if keys and r.random() < 0.7:
                        j = r.choice(keys)
                        cond = "%s.%d %s %s.%d" % (q, j, r.choice([">", ">=", "<", "<="]), p, j)
                    else:
                        # A condition on one side only keeps the operator
                        # associative ("the last element that satisfies
                        # it", or "step while the state does"); one that
                        # compares the two sides freely may not be, and
                        # its result would depend on where chunks split.
                        side = r.choice([p, q])
                        cond = self.expr("bool", env + [(v, t) for v, t in wenv[len(env):] if v.startswith(side + ".")], [], 2)
                    if r.random() < 0.7:
                        body = "if %s { %s } else { %s }" % (cond, q, p)
                    else:
                        body = "(%s)" % ", ".join("select(%s, %s.%d, %s.%d)" % (cond, q, j, p, j) for j in range(len(ins)))
                    init = ", ".join(self.lit(t, True) for _, t in ins)
                    lines.append("let %s = fold(|%s, %s| %s, (%s), zip(%s));" % (name, p, q, body, init, ", ".join(v for v, _ in ins)))
                    env += [("%s.%d" % (name, j), t) for j, (_, t) in enumerate(ins)]
                else:
                    acc = r.choice(NUM)
                    a, x = self.fresh("a"), self.fresh("e")
                    wenv = env + [(a + ".0", acc), (a + ".1", "i64"), (x, et)]
                    body = "(%s, %s.1 + i64(%s))" % (self.expr(acc, wenv, all_arrays(), 3), a, x if et != "f32" and et != "f64" else "floor(%s)" % x)
                    lines.append("let %s = fold(|%s, %s| %s, (%s, 0), %s);" % (name, a, x, body, self.lit(acc, True), src))
                    env += [(name + ".0", acc), (name + ".1", "i64")]
                folds.append(name)
            elif k < 0.74:
                # Order-sensitive combinators.
                src, et = r.choice(arrays)
                name = self.fresh("o")
                kind = r.randint(0, 7)
                if kind <= 1 and et in NUM:
                    comb = r.choice(["scanl", "prescanl", "scanr"])
                    # "The last non-zero" is associative but not
                    # commutative, and has no identity afc knows: chunks
                    # combine in index order from their first elements.
                    # (Not `a - b`: not associative, so its result would
                    # depend on how the chunks split the array.)
                    last = "|a, b| if b == 0%s { a } else { b }" % et
                    op = r.choice(["(+)", "min", "max", last if et in ("i32", "i64") else "|a, b| a + b"])
                    lines.append("let %s = %s(%s, %s, %s);" % (name, comb, op, self.lit(et, True), src))
                    arrays.append((name, et))
                elif kind >= 6:
                    # All pairs with an array of any size: a new rigid size.
                    cls2 = r.choice([c for c in classes if classes[c]])
                    if power[cls] + power[cls2] > 3:
                        continue
                    b, tb = r.choice(classes[cls2])
                    u, w = self.fresh("u"), self.fresh("w")
                    lines.append("let (%s, %s) = unzip(cross(%s, %s));" % (u, w, src, b))
                    classes["x" + name] = [(u, et), (w, tb)]
                    power["x" + name] = power[cls] + power[cls2]
                elif kind == 2:
                    lines.append("let %s = reverse(%s);" % (name, src))
                    arrays.append((name, et))
                elif kind == 3 and r.random() < 0.5:
                    lines.append("let %s = force(%s);" % (name, src))
                    arrays.append((name, et))
                elif kind == 3 and r.random() < 0.3:
                    # A permute into an array of any size: the indices a
                    # function of the position (negative ones skipped).
                    cls2 = r.choice([c for c in classes if classes[c]])
                    dst, dt = r.choice(classes[cls2])
                    x, i = self.fresh("z"), self.fresh("i")
                    ix = self.expr("i64", env + [(i, "i64")], [], 2)
                    if r.random() < 0.85:
                        ix = "(abs(%s) %% max(length(%s), 1)) - 1" % (ix, dst)
                    op = "|o, v| o + v" if dt in NUM else "|o, v| o ^ v"
                    vals = self.fresh("vs")
                    lines.append("let %s = map(|%s| %s, %s);" % (vals, x, self.expr(dt, env + [(x, et)], [], 2), src))
                    lines.append("let %s = permute(%s, %s, |%s| %s, %s);" % (name, op, dst, i, ix, vals))
                    classes[cls2].append((name, dt))
                elif kind == 3:
                    # A scatter into an array of any size, from this size.
                    cls2 = r.choice([c for c in classes if classes[c]])
                    dst, dt = r.choice(classes[cls2])
                    x = self.fresh("z")
                    ix = self.fresh("ix")
                    if r.random() < 0.85:
                        lines.append("let %s = map(|%s| (abs(i64(%s)) %% max(length(%s), 1)) - 1, %s);" % (ix, x, x, dst, src))
                    else:
                        lines.append("let %s = map(|%s| i64(%s), %s);" % (ix, x, x, src))
                    vals = self.fresh("vs")
                    lines.append("let %s = map(|%s| %s, %s);" % (vals, x, self.expr(dt, env + [(x, et)], [], 2), src))
                    op = "|o, v| o + v" if dt in NUM else "|o, v| o ^ v"
                    lines.append("let %s = scatter(%s, %s, zip(%s, %s));" % (name, op, dst, ix, vals))
                    classes[cls2].append((name, dt))
                else:
                    # A gather from any array, driven by indices of this size.
                    cls2 = r.choice([c for c in classes if classes[c]])
                    s2, _ = r.choice(classes[cls2])
                    src2, et2 = r.choice(classes[cls2])
                    x = self.fresh("z")
                    ix = self.fresh("ix")
                    if r.random() < 0.85:
                        lines.append("let %s = map(|%s| (abs(i64(%s)) %% max(length(%s), 1)), %s);" % (ix, x, x, src2, src))
                    else:
                        lines.append("let %s = map(|%s| i64(%s), %s);" % (ix, x, x, src))
                    if r.random() < 0.7:
                        lines.append("let %s = gather(%s, %s);" % (name, ix, src2))
                    else:
                        i = self.fresh("i")
                        lines.append("let %s = backpermute(length(%s), |%s| (%s * 3 + 1) %% max(length(%s), 1), %s);" % (name, src, i, i, src2, src2))
                    arrays.append((ix, "i64"))
                    arrays.append((name, et2))
            elif k < 0.78:
                # An extern call (Inputs/externs.c; Inputs/externs.acc is the oracle).
                src, et = r.choice(arrays)
                name = self.fresh("e")
                self.uses_externs = True
                kind = r.randint(0, 2)
                if kind == 0:
                    n = r.choice(["0", "1", "length(%s) / 2" % src, "length(%s)" % src, "length(%s) + 1" % src] + (["k"] if scal else []))
                    lines.append("let %s = xf_take_%s(%s, %s);" % (name, et, src, n))
                elif kind == 1:
                    lines.append("let %s = xf_rev_%s(%s);" % (name, et, src))
                else:
                    c, n = self.fresh("ec"), self.fresh("en")
                    lines.append("let (%s, %s) = xf_count_%s(%s, %s);" % (c, n, et, src, self.lit(et, True)))
                    env += [(c, "i64"), (n, "i64")]
                    continue
                # A flexible size: reversing a parameter-sized array joins
                # its class (checked after the call); otherwise a class of
                # its own (it cannot join a rigid one).
                if kind == 1 and cls == "n":
                    arrays.append((name, et))
                else:
                    classes["e" + name] = [(name, et)]
                    power["e" + name] = power[cls]
            elif k < 0.82:
                name = self.fresh("g")
                t = r.choice(ALL)
                i = self.fresh("i")
                if scal and r.random() < 0.3:
                    lines.append("let %s = generate(k, |%s| %s);" % (name, i, self.expr(t, env + [(i, "i64")], all_arrays(), 3)))
                    classes.setdefault("k", []).append((name, t))
                else:
                    base = r.choice(arrays)[0]
                    if r.random() < 0.3:
                        lines.append("let %s = iota(length(%s));" % (name, base))
                        t = "i64"
                    else:
                        lines.append("let %s = generate(length(%s), |%s| %s);" % (name, base, i, self.expr(t, env + [(i, "i64")], all_arrays(), 3)))
                    arrays.append((name, t))
            elif k < 1.0:
                t = r.choice(ALL)
                name = self.fresh("c")
                lines.append("let %s = %s;" % (name, self.expr(t, env, all_arrays(), 3)))
                env.append((name, t))
        pool = [a for a in all_arrays() if a not in params]
        mat_types = {n: "[" * len(d) + t + "]" * len(d) for n, t, d in mats if n != "pm"}
        pool += [(n, None) for n in mat_types if r.random() < 0.6]
        outs = r.sample(pool, min(len(pool), r.randint(1, 3)))
        sc = [n for n, _ in env if n != "k"]
        if sc:
            outs += [(n, None) for n in r.sample(sc, min(len(sc), r.randint(0, 2)))]
        if not outs:
            outs = [(params[0][0], None)]
        arr_types = {n: t for n, t in all_arrays()}
        types = dict(arr_types)
        types.update({n: t for n, t in env})

        def ty_of(n):
            if n in mat_types:
                return mat_types[n]
            return "[%s]" % types[n] if n in arr_types else types[n]
        ret = [ty_of(n) for n, _ in outs]
        sig = ", ".join(["%s: [%s]" % p for p in params] + ["k: i64" for _ in scal])
        if len(outs) == 1:
            rt, rv = ret[0], outs[0][0]
        else:
            rt, rv = "(%s)" % ", ".join(ret), "(%s)" % ", ".join(n for n, _ in outs)
        src = "".join(self.helpers) + "export fn f(%s) -> %s {\n    %s\n    %s\n}\n" % (sig, rt, "\n    ".join(lines), rv)
        return src, params, scal

    def matrix(self, lines, classes, power, mats, env, cls, all_arrays):
        """A rank-2 or rank-3 step: a generate with a shape tuple, a map over
        matrices of one shape, a fold along rows, a transpose, an element
        read, or a gather with tuple indices."""
        r = self.r
        kind = r.randint(0, 9) if mats else 0
        name = self.fresh("M")
        if kind <= 1 and power[cls] <= 2:
            src, _ = r.choice(classes[cls])
            t = r.choice(ALL)
            rank3 = power[cls] == 1 and r.random() < 0.3
            # Rows of 17 run a row loop's unrolled trips (16 wide) and
            # their remainder; rank 3 with 17 in both inner dimensions,
            # a plane of 289.
            dims = [cls] + ([str(r.choice([1, 2, 17]))] if rank3 else []) + [str(r.choice([0, 1, 2, 3, 17]))]
            ix = [self.fresh("i") for _ in dims]
            shape = ", ".join(["length(%s)" % src] + dims[1:])
            body = self.expr(t, env + [(i, "i64") for i in ix], all_arrays(), 3)
            lines.append("let %s = generate((%s), |%s| %s);" % (name, shape, ", ".join(ix), body))
            mats.append((name, t, dims))
            return
        if not mats:
            return
        m, t, dims = r.choice(mats)
        if kind == 2:
            same = [x for x in mats if x[2] == dims and x[1] in NUM] if r.random() < 0.5 else [(m, t, dims)]
            ins = r.sample(same, min(len(same), r.randint(1, 2))) or [(m, t, dims)]
            xs = [self.fresh("x") for _ in ins]
            t2 = r.choice(ALL)
            body = self.expr(t2, env + [(x, e) for x, (_, e, _) in zip(xs, ins)], all_arrays(), 3)
            lines.append("let %s = map(|%s| %s, %s);" % (name, ", ".join(xs), body, ", ".join(n for n, _, _ in ins)))
            mats.append((name, t2, dims))
        elif kind == 3 and t in NUM:
            op = r.choice(["(+)", "min", "max"])
            lines.append("let %s = fold(%s, %s, %s);" % (name, op, self.lit(t, True), m))
            rest = dims[:-1]
            if len(rest) > 1:
                mats.append((name, t, rest))
            elif rest[0] in classes:
                classes[rest[0]].append((name, t))
            else:
                classes["r" + name] = [(name, t)]
                power["r" + name] = 1
        elif kind == 4 and len(dims) == 2:
            lines.append("let %s = transpose(%s);" % (name, m))
            mats.append((name, t, dims[::-1]))
        elif kind == 5 and len(dims) == 2:
            rr, cc, v = self.fresh("r"), self.fresh("c"), self.fresh("v")
            lines.append("let (%s, %s) = shape(%s);" % (rr, cc, m))
            env += [(rr, "i64"), (cc, "i64")]
            i = self.expr("i64", env, [], 2)
            lines.append("let %s = %s[abs(%s) %% max(%s, 1), (abs(%s) + 1) %% max(%s, 1)];" % (v, m, i, rr, i, cc))
            env.append((v, t))
        elif kind == 7 and t in NUM:
            # A scan along the rows (the innermost dimension).
            comb = r.choice(["scanl", "prescanl", "scanr"])
            op = r.choice(["(+)", "min", "max"] + (["|a, b| if b == 0%s { a } else { b }" % t] if t in ("i32", "i64") else []))
            lines.append("let %s = %s(%s, %s, %s);" % (name, comb, op, self.lit(t, True), m))
            mats.append((name, t, dims))
        elif kind == 8:
            lines.append("let %s = reverse(%s);" % (name, m))
            mats.append((name, t, dims))
        elif kind == 9:
            # A generate of another array's shape, reading it at the same
            # position (a fusion-preventing read of a complete array).
            ix = [self.fresh("i") for _ in dims]
            t2 = r.choice(ALL)
            here = "%s[%s]" % (m, ", ".join(ix))
            body = self.expr(t2, env + [(i, "i64") for i in ix] + [(here, t)], all_arrays(), 3)
            lines.append("let %s = generate(shape(%s), |%s| %s);" % (name, m, ", ".join(ix), body))
            mats.append((name, t2, dims))
        elif len(dims) == 2:
            src, et = r.choice(classes[cls])
            rr, cc, ix, x = self.fresh("r"), self.fresh("c"), self.fresh("ix"), self.fresh("z")
            lines.append("let (%s, %s) = shape(%s);" % (rr, cc, m))
            wrap = r.random() < 0.85
            i0 = "abs(i64(%s)) %% max(%s, 1)" % (x, rr) if wrap else "i64(%s)" % x
            i1 = "(abs(i64(%s)) + 1) %% max(%s, 1)" % (x, cc) if wrap else "0"
            lines.append("let %s = map(|%s| (%s, %s), %s);" % (ix, x, i0, i1, src))
            lines.append("let %s = gather(%s, %s);" % (name, ix, m))
            classes[cls].append((name, t))

    def array_if(self, lines, classes, power, env, cls, all_arrays):
        """An array-valued if: each branch its own clusters, the result of a
        size the branches need not agree on."""
        r = self.r
        src, et = r.choice(classes[cls])
        name = self.fresh("b")
        x = self.fresh("y")

        def branch():
            k = r.randint(0, 3)
            if k == 0:
                return src
            if k == 1:
                return "map(|%s| %s, %s)" % (x, self.expr(et, env + [(x, et)], all_arrays(), 2), src)
            if k == 2:
                return "filter(|%s| %s, %s)" % (x, self.expr("bool", env + [(x, et)], all_arrays(), 2), src)
            if et in NUM:
                s = self.fresh("bs")
                return "{ let %s = fold(max, %s, %s); map(|%s| %s - %s, %s) }" % (s, self.lit(et, True), src, x, x, s, src)
            return "reverse(%s)" % src
        cond = self.expr("bool", env + [("length(%s)" % src, "i64")], all_arrays(), 2)
        lines.append("let %s = if %s { %s } else { %s };" % (name, cond, branch(), branch()))
        classes["i" + name] = [(name, et)]
        power["i" + name] = power[cls]

    def recursion(self, lines, classes, power, env, cls):
        """A call of a generated recursive function: divide and conquer on
        halves, or recursion on a filtered part, at most 4 deep."""
        r = self.r
        src, et = r.choice(classes[cls])
        fn, x, xs = self.fresh("rec"), self.fresh("y"), self.fresh("xs")
        name = self.fresh("h")
        leaf = self.expr(et, [(x, et), ("d", "i64")], [], 2)
        if et in NUM and r.random() < 0.5:
            # A scalar result: sums of the parts' results.
            op = "+" if et != "bool" else "^"
            cond = self.expr("bool", [(x, et)], [], 2)
            self.helpers.append(
                "fn %s(%s: [%s], d: i64) -> %s {\n"
                "    if d <= 0 || length(%s) <= 1 { fold((+), %s, map(|%s| %s, %s)) }\n"
                "    else { %s(filter(|%s| %s, %s), d - 1) %s %s(filter(|%s| !%s, %s), d - 1) }\n}\n"
                % (fn, xs, et, et, xs, self.lit(et, True), x, leaf, xs,
                   fn, x, cond, xs, op, fn, x, cond, xs))
            lines.append("let %s = %s(%s, %d);" % (name, fn, src, r.randint(0, 4)))
            env.append((name, et))
            return
        self.helpers.append(
            "fn %s(%s: [%s], d: i64) -> [%s] {\n"
            "    if d <= 0 || length(%s) <= 1 { map(|%s| %s, %s) } else {\n"
            "        let h = length(%s) / 2;\n"
            "        let a = %s(generate(h, |i| %s[i]), d - 1);\n"
            "        let b = %s(generate(length(%s) - h, |i| %s[i + h]), d - 1);\n"
            "        generate(length(a) + length(b), |i| if i < length(a) { b[length(b) - 1 - i %% max(length(b), 1)] } else { a[i - length(a)] })\n"
            "    }\n}\n"
            % (fn, xs, et, et, xs, x, leaf, xs, xs, fn, xs, fn, xs, xs))
        lines.append("let %s = %s(%s, %d);" % (name, fn, src, r.randint(0, 4)))
        classes["h" + name] = [(name, et)]
        power["h" + name] = power[cls]

    def declarations(self):
        """The extern fns of Inputs/externs.c, declared."""
        out = []
        for t in ALL:
            out.append("extern fn xf_take_%s(xs: [%s], n: i64) -> [%s];" % (t, t, t))
            out.append("extern fn xf_rev_%s(xs: [%s]) -> [%s];" % (t, t, t))
            out.append("extern fn xf_count_%s(xs: [%s], v: %s) -> (i64, i64);" % (t, t, t))
        return "\n".join(out) + "\n"

    def inputs(self, params, scal):
        r = self.r
        n = r.choice([0, 1, 2, 3, 5, 8, 8, 17, 40])
        args = []
        for i, (_, t) in enumerate(params):
            m = n if not (i > 0 and r.random() < 0.05) else n + 1  # sometimes a size mismatch
            if t.startswith("["):
                # A matrix parameter: n rows, row-major; rows of 17
                # elements run a row loop's unrolled trips too.
                c = r.choice([0, 1, 2, 3, 17])
                args.append("%dx%d:[%s]" % (m, c, ",".join(self.value(t[1:-1]) for _ in range(m * c))))
            else:
                args.append("[%s]" % ",".join(self.value(t) for _ in range(m)))
        for _ in scal:
            args.append(str(r.choice([0, 1, 3, 4, -1]) if r.random() < 0.95 else -2))
        return args

    def value(self, t):
        r = self.r
        if t == "bool":
            return r.choice(["true", "false"])
        if t in ("i32", "i64"):
            return str(r.choice([0, 1, -1, 2, 5, -7, 13, r.randint(-1000, 1000)]))
        return repr(r.choice([0.0, 1.0, -1.5, 0.1, 2.5, 1e3, -0.0, r.uniform(-10, 10)]))


def flags(env, variant):
    """The compile flags of a check, by variant (0 to 8 in turn): parallel
    nests in chunks of one position (variant % 3 = 0), the same with a
    barrier between a two-pass nest's passes instead of the default
    look-back (1), or in chunks of 4096 positions (2), so that loops run
    whole unrolled trips (lanes, vector compaction) and their remainders;
    each of those at -O2, -O0 and -O3 (variant // 3; OPT, when set, fixes
    the level). At -O3 LLVM compiles the module in three parts where it
    has three functions (--codegen-units: the parts' objects joined),
    at -O2 in two where they have the work (afc's default)."""
    if variant % 3 == 1:
        env["AFC_FLAGS"] = (env.get("AFC_FLAGS", "") + " --two-pass=barrier").strip()
    env["GRAIN"] = "4096" if variant % 3 == 2 else "1"
    env.setdefault("OPT", OPT_LEVELS[variant // 3 % 3])
    if env["OPT"] == "3":
        env["AFC_FLAGS"] = (env.get("AFC_FLAGS", "") + " --codegen-units 3").strip()
    return env


# The LLVM pipelines the variants cycle through (-O0: afc's IR as emitted,
# none of LLVM's rewrites to hide or expose a fault in it).
OPT_LEVELS = ["2", "0", "3"]


def describe(variant):
    parts = {0: "", 1: ", --two-pass=barrier", 2: ", --parallel-grain 4096"}[variant % 3]
    opt = os.environ.get("OPT", OPT_LEVELS[variant // 3 % 3])
    return parts + ", -O" + opt + (", --codegen-units 3" if opt == "3" else "")


def check_one(tmp, i, g, src, args, variant):
    """Checks one program with check-run.sh; returns its report, or None."""
    # Run on 1, 2 and 7 workers.
    env = flags(dict(os.environ, LANGS="c", STORAGES="alloc caller", THREADS="1 2 7"), variant)
    if g.uses_externs:
        # The interpreter runs the externs' .acc versions instead.
        oracle = os.path.join(tmp, "p%d.oracle.acc" % i)
        open(oracle, "w").write(open(os.path.join(HERE, "Inputs", "externs.acc")).read() + src)
        src = g.declarations() + src
        env.update(EXTERN_C=os.path.join(HERE, "Inputs", "externs.c"), ORACLE=oracle)
    path = os.path.join(tmp, "p%d.acc" % i)
    open(path, "w").write(src)
    p = subprocess.run([CHECK, path, "f"] + args, capture_output=True, text=True, env=env)
    if p.returncode == 0:
        return None
    return (src, env.get("ORACLE"), p.stdout + p.stderr)


def batched(k):
    """The name of the k-th function of a batch: apart from every name
    the generator makes (f1, s2, …), which the drivers declare too."""
    return "batched%d" % k


def check_batch(tmp, batch, variant, crashes=None):
    """Checks several programs at once, as check-run.sh checks one: their
    functions (f renamed batched0, batched1, …, their helpers apart) in one file,
    compiled once per fusion mode, called from one C driver per storage on
    1, 2 and 7 workers, each function's output and status against the
    interpreter's. Returns the indices in `batch` that may fail, for
    check_one to confirm and report, and whether that is the whole batch
    because it could not be compiled or a driver did not finish. The
    fusion modes in which LLVM crashed (afc warns and compiles the batch
    unoptimised: an LLVM bug, not a mismatch) go to `crashes`."""
    srcs = []
    for k, (_, _, src, _) in enumerate(batch):
        src = re.sub(r"\b(rec\d+)\b", lambda m: "%s_%d" % (m.group(1), k), src)
        srcs.append(src.replace("export fn f(", "export fn %s(" % batched(k), 1))
    path = os.path.join(tmp, "batch.acc")
    header = os.path.join(tmp, "batch.h")
    externs = any(g.uses_externs for _, g, _, _ in batch)
    oracle, link = path, []
    if externs:
        # The externs declared once; the interpreter runs their .acc
        # versions (Inputs/externs.acc) instead, as check_one does.
        oracle = os.path.join(tmp, "batch.oracle.acc")
        open(oracle, "w").write(open(os.path.join(HERE, "Inputs", "externs.acc")).read() + "\n".join(srcs))
        srcs.insert(0, batch[0][1].declarations())
        link = [os.path.join(tmp, "externs.o")]
        if subprocess.run(["cc", "-std=c99", "-w", "-I" + RUNTIME, "-c", os.path.join(HERE, "Inputs", "externs.c"), "-o", link[0]]).returncode != 0:
            return set(range(len(batch))), True
    open(path, "w").write("\n".join(srcs))
    everything = set(range(len(batch)))
    expected = []
    for k, (_, _, _, args) in enumerate(batch):
        p = subprocess.run([AFC, oracle, "--interpret", batched(k), "--"] + args, capture_output=True, text=True)
        expected.append((p.returncode != 0, p.stdout))
    if subprocess.run([AFC, path, "--emit=header", "-o", header], capture_output=True).returncode != 0:
        return everything, True
    drivers = {}
    for storage in ("alloc", "caller"):
        parts = ['#include "%s"' % header, gen_driver.PREAMBLE]
        for k, (_, _, _, args) in enumerate(batch):
            try:
                parts.append(gen_driver.driver(header, batched(k), args, storage=storage, loops=2, entry="run%d" % k))
            except SystemExit:  # (a prototype it cannot read)
                return everything, True
        runs = ", ".join("run%d" % k for k in range(len(batch)))
        parts.append("int main(void) {\n    int (*runs[])(void) = {%s};\n"
                     "    for (int k = 0; k < %d; k++) {\n"
                     '        printf("@@ %%d\\n", k); fflush(stdout);\n'
                     "        int rc = runs[k]();\n"
                     '        printf("@@ rc %%d\\n", rc); fflush(stdout);\n'
                     "    }\n    return 0;\n}" % (runs, len(batch)))
        src = os.path.join(tmp, "driver_%s.c" % storage)
        open(src, "w").write("\n".join(parts))
        obj = src[:-2] + ".o"
        if subprocess.run(["cc", "-std=c99", "-w", "-I" + RUNTIME, "-c", src, "-o", obj]).returncode != 0:
            return everything, True
        drivers[storage] = obj
    env = flags(dict(os.environ), variant)
    extra = env.get("AFC_FLAGS", "").split()
    bad = set()
    for mode in ("none", "greedy", "ilp"):
        obj = os.path.join(tmp, "batch_%s.o" % mode)
        c = subprocess.run([AFC, path, "--verify", "--strict-fp", "--fusion=" + mode, "-O" + env["OPT"], "--parallel-grain", env["GRAIN"]] + extra + ["-o", obj], capture_output=True)
        if c.returncode != 0:
            return everything, True
        if crashes is not None and b"LLVM crashed" in c.stderr:
            crashes.append(mode)
        for storage, dobj in drivers.items():
            exe = os.path.join(tmp, "driver")
            if subprocess.run(["cc", dobj, obj] + link + [os.path.join(ROOT, "build", "libafcrt.a"), "-lgomp", "-lm", "-lpthread", "-o", exe]).returncode != 0:
                return everything, True
            for threads in ("1", "2", "7"):
                p = subprocess.run([exe], capture_output=True, text=True, env=dict(os.environ, AFC_NUM_THREADS=threads))
                got = {}
                k, lines = None, []
                for line in p.stdout.splitlines(True):
                    if line.startswith("@@ rc "):
                        got[k] = (int(line.split()[2]), "".join(lines))
                    elif line.startswith("@@ "):
                        k, lines = int(line.split()[1]), []
                    else:
                        lines.append(line)
                if p.returncode != 0 or len(got) != len(batch):
                    return everything, True
                for k, (rc, out) in got.items():
                    failed, want = expected[k]
                    if rc == 99 or "LEAK" in out:
                        bad.add(k)
                    elif failed or rc != 0:
                        if not (failed and rc != 0):
                            bad.add(k)
                    elif out != want and not same_values(want, out):
                        bad.add(k)
    return bad, False


def batch_job(batch, variant):
    """check_batch in a process of its own (--jobs), in a folder of its own."""
    with tempfile.TemporaryDirectory() as tmp:
        crashes = []
        return check_batch(tmp, batch, variant, crashes) + (crashes,)


def same_values(want, got):
    """compare.py's verdict on two listings that differ in their bytes."""
    return not compare.disagreements(compare.parse_text(want), compare.parse_text(got))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=int(os.environ.get("AFC_FUZZ_SEED", "1")))
    ap.add_argument("--count", type=int, default=int(os.environ.get("AFC_FUZZ_COUNT", "40")))
    ap.add_argument("--batch", type=int, default=int(os.environ.get("AFC_FUZZ_BATCH", "10")),
                    help="programs checked together (one compile and one driver for all; 1: each alone)")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("AFC_FUZZ_JOBS", "1")),
                    help="batches checked at once, each by a process of its own")
    ap.add_argument("--keep", help="keep failing programs here")
    def regex(text):
        try:
            return re.compile(text)
        except re.error as e:
            raise argparse.ArgumentTypeError("not a regular expression: %s" % e)

    ap.add_argument("--only", metavar="REGEX", type=regex,
                    help="check only the programs whose source matches (a hunt in one corner: "
                         "programs keep their numbers in the seed's sequence; COUNT is how many are checked)")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        def report(i, g, src, args, variant):
            nonlocal failures
            r = check_one(tmp, i, g, src, args, variant)
            if r is None:
                return False
            failures += 1
            full, oracle, out = r
            print("FAIL program %d (seed %d%s):\n%s\nargs: %s\n%s" % (i, a.seed, describe(variant), full, " ".join(args), out))
            if a.keep:
                os.makedirs(a.keep, exist_ok=True)
                open(os.path.join(a.keep, "fail%d.acc" % i), "w").write(full + "// args: " + " ".join(args) + "\n")
                if oracle:
                    open(os.path.join(a.keep, "fail%d.oracle.acc" % i), "w").write(open(oracle).read())
            return True

        pending, batches = [], 0
        # Batches being checked by other processes (--jobs), oldest first.
        pool = concurrent.futures.ProcessPoolExecutor(a.jobs) if a.jobs > 1 else None
        running = collections.deque()

        llvm_crashes = 0

        def settle(batch, variant, suspects, whole, crashes=()):
            nonlocal failures, llvm_crashes
            if crashes:
                # Not a mismatch: LLVM's bug, which afc survives (llvm/llvm-crash.acc).
                llvm_crashes += 1
                print("NOTE programs %d-%d (seed %d%s): LLVM crashed optimising them under --fusion=%s; afc compiled them unoptimised" % (batch[0][0], batch[-1][0], a.seed, describe(variant), ",".join(crashes)))
            found = [k for k in sorted(suspects) if report(*batch[k], variant)]
            alone = len(batch) > 1 and not found
            if whole and alone:
                # Every program passes alone, the batch does not: as much a bug.
                failures += 1
                print("FAIL programs %d-%d (seed %d): fail only as a batch\n%s" % (batch[0][0], batch[-1][0], a.seed, "\n".join(p[2] for p in batch)))
            elif not whole and len(batch) > 1:
                for k in sorted(suspects - set(found)):
                    failures += 1
                    i, _, src, args = batch[k]
                    print("FAIL program %d (seed %d): fails only in a batch of %d\n%s\nargs: %s" % (i, a.seed, len(batch), src, " ".join(args)))
            sys.stdout.flush()

        def flush():
            nonlocal pending, batches
            variant = batches % 9
            batches += 1
            if len(pending) <= 1:
                settle(pending, variant, set(range(len(pending))), False)
            elif pool:
                running.append((pool.submit(batch_job, pending, variant), pending, variant))
                while len(running) > 2 * a.jobs:
                    f, b, bar = running.popleft()
                    settle(b, bar, *f.result())
            else:
                crashes = []
                settle(pending, variant, *check_batch(tmp, pending, variant, crashes), crashes)
            pending = []

        i, checked = -1, 0
        while checked < a.count:
            i += 1
            g = Gen(rng)
            src, params, scal = g.program()
            args = g.inputs(params, scal)
            if a.only and not a.only.search(src):
                if i >= 1000 * (a.count + 1):
                    sys.exit("difftest.py: --only matched %d of %d programs; giving up" % (checked, i + 1))
                continue
            checked += 1
            if a.batch <= 1:
                report(i, g, src, args, i % 9)
                continue
            pending.append((i, g, src, args))
            if len(pending) >= a.batch:
                flush()
        if pending:
            flush()
        while running:
            f, b, bar = running.popleft()
            settle(b, bar, *f.result())
        # Before exit: a pool left to the interpreter's shutdown sometimes
        # wakes its closed pipe (OSError: Bad file descriptor).
        if pool:
            pool.shutdown()
    print("%d passed, %d failed%s" % (a.count - failures, failures, ", LLVM crashed on %d batches (handled)" % llvm_crashes if llvm_crashes else ""))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
