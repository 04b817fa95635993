#!/usr/bin/env python3
"""check-docs.py DOC.md… — every example in the docs compiles.

Each ```acc block is a whole program: afc compiles it to an object file and
a header. A ```c block right after it whose first line is
`#include "prog.h"` is its caller: it is compiled as C99 with -Wall -Wextra
-pedantic -Werror, linked with the program and the runtime, and run; it
must exit 0. Prints `ok: FILE:LINE` per example, `FAIL: …` and exits 1 on
the first failure."""
import os
import re
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
afc = os.environ.get("AFC", os.path.join(root, "target", "release", "afc"))
runtime = os.path.join(root, "build", "libafcrt.a")


def blocks(path):
    """(language, first line number, text) of each fenced block."""
    out, lang, start, buf = [], None, 0, []
    for i, line in enumerate(open(path, encoding="utf-8"), 1):
        m = re.match(r"^```(\S*)\s*$", line)
        if m and lang is None:
            lang, start, buf = m.group(1), i + 1, []
        elif line.startswith("```") and lang is not None:
            out.append((lang, start, "".join(buf)))
            lang = None
        elif lang is not None:
            buf.append(line)
    return out


def run(cmd, where):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print("FAIL: %s: %s\n%s%s" % (where, " ".join(cmd), p.stdout, p.stderr))
        sys.exit(1)
    return p.stdout


def main():
    n = 0
    with tempfile.TemporaryDirectory() as tmp:
        for doc in sys.argv[1:]:
            bs = blocks(doc)
            for k, (lang, line, text) in enumerate(bs):
                if lang != "acc":
                    continue
                where = "%s:%d" % (os.path.relpath(doc, root), line)
                d = os.path.join(tmp, "ex%d" % n)
                os.makedirs(d)
                n += 1
                src = os.path.join(d, "prog.acc")
                open(src, "w").write(text)
                run([afc, src, "-O2", "-o", os.path.join(d, "prog.o")], where)
                run([afc, src, "--emit=header", "-o", os.path.join(d, "prog.h")], where)
                nxt = bs[k + 1] if k + 1 < len(bs) else None
                if nxt and nxt[0] == "c" and nxt[2].startswith('#include "prog.h"'):
                    main_c = os.path.join(d, "main.c")
                    open(main_c, "w").write(nxt[2])
                    exe = os.path.join(d, "main")
                    run(["cc", "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-I" + d, "-I" + os.path.join(root, "runtime-c"),
                         main_c, os.path.join(d, "prog.o"), runtime, "-lgomp", "-lm", "-lpthread", "-o", exe], where)
                    out = run([exe], where + " (its C caller)")
                    print("ok: %s with its C caller: %s" % (where, out.strip().splitlines()[-1] if out.strip() else ""))
                else:
                    print("ok: %s" % where)
    print("%d examples" % n)


if __name__ == "__main__":
    main()
