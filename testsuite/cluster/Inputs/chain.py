"""A chain of N maps that each also read the parameter xs, folded:
chain.py N > prog.acc (testsuite/cluster/long-chain.test)."""
import sys

n = int(sys.argv[1])
print("export fn chain(xs: [f64]) -> f64 {")
print("  let a0 = map(|x| x + 1.0, xs);")
for i in range(1, n):
    print(f"  let a{i} = map(|x, y| x * 0.5 + y, a{i - 1}, xs);")
print(f"  fold(|a, b| a + b, 0.0, a{n - 1})")
print("}")
