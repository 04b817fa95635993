//! Helpers shared by the integration tests: compiling source text through
//! the middle end, and a small deterministic random-program generator.

#![allow(dead_code)]

use afc::cluster::cost::CostModel;
use afc::cluster::{ClusterConfig, FusionMode, IlpModel};
use afc::pipeline::{self, Options, Stages};
use afc_ir::diag::SourceFile;

pub fn options(mode: FusionMode) -> Options {
    Options { cluster: ClusterConfig { mode, model: IlpModel::Edge, cost: CostModel::Traffic, nodes: None, time_limit: 20.0, solver: &afc_cluster_highs::Highs }, strategy: Default::default(), verify: true, verbose: false, notes: false, time_passes: false, lower: true }
}

pub fn compile(src: &str, mode: FusionMode) -> Stages {
    let file = SourceFile::new("test.acc", src);
    let opts = options(mode);
    let (p, _) = pipeline::front(&file, &opts).unwrap_or_else(|d| panic!("{}", afc_ir::diag::render_all(&d, &file)));
    pipeline::middle(&file, p, &opts).unwrap_or_else(|d| panic!("{}", afc_ir::diag::render_all(&d, &file)))
}

/// xorshift64*: deterministic and dependency-free.
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545F4914F6CDD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    pub fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() % 1_000_000) as f64 / 1e6 < p
    }
}

/// A random program of `n` combinators over two same-size inputs: maps of
/// one to three arrays of one size, filters (and filters of filters), folds
/// whose results later workers capture, generates, and random access into
/// earlier arrays.
pub fn random_program(rng: &mut Rng, n: usize) -> String {
    // Arrays grouped by size: the inputs' size, then one group per filter.
    let mut classes: Vec<Vec<String>> = vec![vec!["a0".into(), "a1".into()]];
    let mut scalars: Vec<String> = vec![];
    let mut lines = vec![];
    let mut made: Vec<String> = vec![];
    for i in 0..n {
        let name = format!("n{}", i);
        let cap = if !scalars.is_empty() && rng.chance(0.4) { format!(" + {}", scalars[rng.below(scalars.len())]) } else { String::new() };
        let idx = if !made.is_empty() && rng.chance(0.15) { format!(" + {}[0]", made[rng.below(made.len())]) } else { String::new() };
        let c = rng.below(classes.len());
        let arrays = classes[c].clone();
        match rng.below(14) {
            13 => {
                // An extern call: a barrier whose result has a size of its own.
                let a = arrays[rng.below(arrays.len())].clone();
                lines.push(format!("let {} = ext({});", name, a));
                classes.push(vec![name.clone()]);
                made.push(name);
            }
            12 => {
                // All pairs with an array of any size: a class of its own.
                let other = rng.below(classes.len());
                let b = classes[other][rng.below(classes[other].len())].clone();
                let a = arrays[rng.below(arrays.len())].clone();
                lines.push(format!("let {} = map(|p| p.0 - p.1, cross({}, {}));", name, a, b));
                classes.push(vec![name.clone()]);
                made.push(name);
            }
            10 | 11 => {
                // A gather of any array by indices computed from this size.
                let src_class = rng.below(classes.len());
                let src = classes[src_class][rng.below(classes[src_class].len())].clone();
                let a = arrays[rng.below(arrays.len())].clone();
                lines.push(format!("let {}i = map(|x| i64(abs(x)) % max(length({}), 1), {});", name, src, a));
                lines.push(format!("let {} = gather({}i, {});", name, name, src));
                classes[c].push(name.clone());
                made.push(name);
            }
            8 => {
                let a = arrays[rng.below(arrays.len())].clone();
                let comb = ["scanl", "scanr", "prescanl"][rng.below(3)];
                lines.push(format!("let {} = {}((+), 0.0, {});", name, comb, a));
                classes[c].push(name.clone());
                made.push(name);
            }
            9 => {
                let a = arrays[rng.below(arrays.len())].clone();
                lines.push(format!("let {} = reverse({});", name, a));
                classes[c].push(name.clone());
                made.push(name);
            }
            0..=2 => {
                let k = 1 + rng.below(3.min(arrays.len()));
                let mut ins = vec![];
                for _ in 0..k {
                    let a = arrays[rng.below(arrays.len())].clone();
                    if !ins.contains(&a) {
                        ins.push(a);
                    }
                }
                let ps: Vec<String> = (0..ins.len()).map(|j| format!("x{}", j)).collect();
                lines.push(format!("let {} = map(|{}| {}{}{}, {});", name, ps.join(", "), ps.join(" * "), cap, idx, ins.join(", ")));
                classes[c].push(name.clone());
                made.push(name);
            }
            3 | 4 => {
                let a = arrays[rng.below(arrays.len())].clone();
                lines.push(format!("let {} = filter(|x| x > 0.5{}, {});", name, cap, a));
                classes.push(vec![name.clone()]);
                made.push(name);
            }
            5 | 6 => {
                let a = arrays[rng.below(arrays.len())].clone();
                lines.push(format!("let {} = fold((+), 0.0, {});", name, a));
                scalars.push(name);
            }
            _ => {
                let a = arrays[rng.below(arrays.len())].clone();
                lines.push(format!("let {} = generate(length({}), |i| f64(i){}{});", name, a, cap, idx));
                classes[c].push(name.clone());
                made.push(name);
            }
        }
    }
    let mut results: Vec<String> = made.iter().filter(|_| rng.chance(0.4)).cloned().collect();
    if let Some(s) = scalars.last() {
        results.push(s.clone());
    }
    if results.is_empty() {
        results.push(made.last().cloned().unwrap_or_else(|| "a0".into()));
    }
    let types: Vec<&str> = results.iter().map(|r| if scalars.contains(r) { "f64" } else { "[f64]" }).collect();
    format!(
        "extern fn ext(xs: [f64]) -> [f64];\nexport fn f(a0: [f64], a1: [f64]) -> ({},) {{\n    {}\n    ({},)\n}}\n",
        types.join(", "),
        lines.join("\n    "),
        results.join(", ")
    )
}
