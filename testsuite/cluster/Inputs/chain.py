"""A chain of N maps that each also read the parameter xs, folded:
chain.py N > prog.acc. With `split`, the fold is of the first half, and
the second half's maps use it, so a fusion-preventing edge cuts the chain
in two; with `computed`, the maps read t, a map of xs, instead of xs, so
every one of them has a fusible edge from t
(testsuite/cluster/long-chain.test)."""
import sys

n = int(sys.argv[1])
split = sys.argv[2:] == ["split"]
computed = sys.argv[2:] == ["computed"]
print("export fn chain(xs: [f64]) -> %s {" % ("[f64]" if split else "f64"))
print("  let a0 = map(|x| x + 1.0, xs);")
if computed:
    print("  let t = map(|x| x * 0.25, xs);")
if not split:
    for i in range(1, n):
        print(f"  let a{i} = map(|x, y| x * 0.5 + y, a{i - 1}, {'t' if computed else 'xs'});")
    print(f"  fold(|a, b| a + b, 0.0, a{n - 1})")
else:
    h = n // 2
    for i in range(1, h):
        print(f"  let a{i} = map(|x, y| x * 0.5 + y, a{i - 1}, xs);")
    print(f"  let s = fold(|a, b| a + b, 0.0, a{h - 1});")
    print(f"  let b0 = map(|x, y| x * s + y, a{h - 1}, xs);")
    for i in range(1, n - h):
        print(f"  let b{i} = map(|x, y| x * s + y, b{i - 1}, xs);")
    print(f"  b{n - h - 1}")
print("}")
