#!/usr/bin/env python3
"""Random clustering problems unlike gen.py's (issue 12's "a generator not in
the repo" stands for programs afc was not tuned on).

Where gen.py draws maps over the last few arrays of one size forest, this
draws each program's own character — how far back a combinator reaches for
its inputs (long chains or wide sharing), how many inputs a map takes (up to
five), how many sizes there are — and combinators gen.py has none of: row
folds of generated matrices into vectors of another size, right and
exclusive scans, integer and boolean arrays, `select`, `force`, random
access `xs[i]`, `backpermute`, filters of filters. Some arrays that are read
are returned as well (forced manifest).

    mix.py --nodes 200 --seed 3 > prog.acc
"""
import itertools
import random

import gen  # its program text and command line, beside this file


class Pool:
    """What a program has drawn so far: its arrays by size, its scalars,
    which of them are read, and its lines."""

    def __init__(self, r, reach):
        self.r, self.reach = r, reach
        self.lines = []
        # Size classes: arrays of one size, each (name, type).
        self.classes = {
            "n": [("xs", "f64"), ("ys", "f64"), ("zs", "f64"), ("ks", "i64")],
            "m": [("ws", "f64")],
        }
        self.scalars = []
        self.used = set()
        self.count = 0
        self.names = itertools.count(1)

    def name(self, p):
        return "%s%d" % (p, next(self.names))

    def pick(self, cls, ty=None):
        """An array of size class `cls` (and type `ty`), among the last
        `reach` drawn; None if there is none."""
        pool = [a for a in self.classes[cls] if ty is None or a[1] == ty]
        if not pool:
            return None
        a = self.r.choice(pool[-self.reach:])
        self.used.add(a[0])
        return a

    def scalar(self):
        if self.scalars and self.r.random() < 0.5:
            s = self.r.choice(self.scalars)
            self.used.add(s)
            return s
        return "%d.0" % self.r.randint(1, 9)

    def emit(self, v, ty, cls, text, cost=1):
        """`let v = text;`, an array of class `cls` (None: not an array
        later combinators draw) counting `cost` combinators."""
        self.lines.append("let %s = %s;" % (v, text))
        if cls is not None:
            self.classes[cls].append((v, ty))
        self.count += cost


def as_f64(p, ty):
    return p if ty == "f64" else "f64(%s)" % p


def generate(nodes, seed):
    r = random.Random(seed * 7919 + 17)
    reach = r.choice([2, 4, 8, 1000])          # how far back inputs are drawn
    arity = r.choice([2, 3, 5])                # the most inputs of one map
    pool = Pool(r, reach)
    name, pick, scalar, emit = pool.name, pool.pick, pool.scalar, pool.emit
    classes, scalars, used, lines = pool.classes, pool.scalars, pool.used, pool.lines

    # Every parameter is read (the pool's reach may not go back to them).
    emit(name("m"), "f64", "n", "map(|a, b, c, d| a * b + c - f64(d), xs, ys, zs, ks)")
    emit(name("m"), "f64", "m", "map(|a| a * 2.0, ws)")
    while pool.count < nodes:
        cls = r.choice(list(classes))
        k = r.random()
        if k < 0.34:
            args = [pick(cls) for _ in range(r.randint(1, arity))]
            ps = ["a%d" % i for i in range(len(args))]
            terms = [as_f64(p, a[1]) for p, a in zip(ps, args)]
            body = " + ".join("%s * %s" % (t, scalar()) if r.random() < 0.5 else t for t in terms)
            if r.random() < 0.15:
                body = "select(%s > %s, %s, %s)" % (terms[0], scalar(), body, terms[-1])
            emit(name("m"), "f64", cls, "map(|%s| %s, %s)" % (", ".join(ps), body, ", ".join(a[0] for a in args)))
        elif k < 0.40:
            a = pick(cls)
            emit(name("b"), "bool", cls, "map(|a| %s > %s, %s)" % (as_f64("a", a[1]), scalar(), a[0]))
        elif k < 0.45:
            a = pick(cls)
            emit(name("k"), "i64", cls, "map(|a| i64(%s) %% 7, %s)" % (as_f64("a", a[1]), a[0]))
        elif k < 0.55:
            a = pick(cls)
            v = name("s")
            if a[1] == "bool":
                emit(v, "i64", None, "fold((+), 0, map(|b| i64(b), %s))" % a[0], 2)
                lines.append("let %s = f64(%s);" % (v + "f", v))
                v = v + "f"
            elif a[1] == "i64":
                emit(v, "i64", None, "fold(max, 0, %s)" % a[0])
                lines.append("let %s = f64(%s);" % (v + "f", v))
                v = v + "f"
            else:
                op, z = r.choice([("(+)", "0.0"), ("min", "inf"), ("max", "-inf")])
                emit(v, "f64", None, "fold(%s, %s, %s)" % (op, z, a[0]))
            scalars.append(v)
        elif k < 0.62 and len(classes) < 10:
            a = pick(cls, "f64")
            if a is None:
                continue
            v = name("flt")
            emit(v, "f64", None, "filter(|a| a > %s, %s)" % (scalar(), a[0]))
            classes["c" + v] = [(v, "f64")]
        elif k < 0.70:
            # From a parameter's size: a filter's array may be empty, and
            # no index reads an empty array.
            src = pick(r.choice(["n", "m"]), "f64")
            a = pick(cls)
            if src is None:
                continue
            if r.random() < 0.5:
                ix = name("ix")
                emit(ix, "i64", None, "map(|a| abs(i64(%s) %% max(length(%s), 1)), %s)" % (as_f64("a", a[1]), src[0], a[0]))
                emit(name("g"), "f64", cls, "gather(%s, %s)" % (ix, src[0]))
            else:
                emit(name("g"), "f64", cls, "backpermute(length(%s), |i| (i * 3) %% max(length(%s), 1), %s)" % (a[0], src[0], src[0]))
        elif k < 0.80:
            a = pick(cls, "f64")
            if a is None:
                continue
            kind = r.choice(["scanl", "scanr", "prescanl"])
            op, z = r.choice([("(+)", "0.0"), ("max", "-inf")])
            emit(name("p"), "f64", cls, "%s(%s, %s, %s)" % (kind, op, z, a[0]))
        elif k < 0.85:
            a = pick(cls)
            emit(name("r"), a[1], cls, "reverse(%s)" % a[0])
        elif k < 0.90:
            # A matrix over this size and "n", folded by rows into a vector
            # of this size: two nodes, and an edge between sizes.
            a, b = pick(cls, "f64"), pick("n", "f64")
            if a is None or b is None:
                continue
            mtx = name("mx")
            emit(mtx, "f64", None, "generate((length(%s), length(%s)), |i, j| %s[i] * %s[j])" % (a[0], b[0], a[0], b[0]))
            emit(name("rw"), "f64", cls, "fold((+), 0.0, %s)" % mtx)
        elif k < 0.94:
            a = pick(cls, "f64")
            if a is None:
                continue
            v = name("e")
            # An empty array (a filter's) has no element to read.
            lines.append("let %s = if length(%s) > 0 { %s[%d %% length(%s)] } else { 0.0 };" % (v, a[0], a[0], r.randint(0, 9), a[0]))
            scalars.append(v)
        else:
            a = pick(cls)
            emit(name("fc"), a[1], cls, "force(map(|a| a, %s))" % a[0])
    outs = [a for c in classes.values() for (a, _) in c if a not in used and a not in ("xs", "ys", "zs", "ks", "ws")]
    outs += [a for c in classes.values() for (a, _) in c[5:] if a in used and r.random() < 0.05]
    outs += [s for s in scalars if s not in used]
    types = {a: t for c in classes.values() for (a, t) in c}
    tys = [("f64" if o in scalars else "[%s]" % types[o]) for o in outs]
    return gen.function("generated by mix.py --nodes %d --seed %d (reach %d, arity %d)" % (nodes, seed, reach, arity),
                        "xs: [f64], ys: [f64], zs: [f64], ks: [i64], ws: [f64]", outs, tys, lines)


if __name__ == "__main__":
    gen.main(generate, __doc__)
