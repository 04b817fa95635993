//! The cost report (`--emit=cost`): per cluster and in total, the loops, the
//! array elements read and written, as expressions in the sizes (papers/001
//! Fig. 12: `2n0 + 2`), the intermediate arrays written to memory, and the
//! same traffic in bytes (each element weighs its type's size). The
//! clustering ILP's cost models (`--cost`) are computed from these counts
//! (afc::cluster::cost), so the report and the optimiser agree.
//!
//! Counting rules: an array streamed from memory counts its size once per
//! cluster and traversal order, however many members read it; an array
//! produced and consumed in one cluster costs nothing to read; a manifest
//! array counts its size in writes; a gather reads its source once per
//! gathered element; a worker's random access `xs[i]` one element per
//! iteration; a scalar a node computes (a fold's result, a filter's count)
//! counts one write, and one read per other cluster that uses it; a
//! scatter reads its destination once (the copy it starts from); a cross
//! reads one element of each argument per element it makes; an extern call
//! is no loop of afc's and is counted as reading each array argument once.

use crate::cluster::{orders, read_order, Clustering};
use crate::graph::DepGraph;
use crate::labelled::{Block, Function, Operand, Rhs, Stmt, VarId};
use crate::sizes::{SizeId, Sizes};
use indexmap::{IndexMap, IndexSet};
use std::fmt::{self, Write};

/// A polynomial in the sizes: Σ coefficient · (product of sizes) +
/// constant; a matrix's elements are the product of its two sizes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Expr {
    pub terms: IndexMap<Vec<SizeId>, i64>,
    pub constant: i64,
}

impl Expr {
    /// Adds `k` times the number of elements of `shape`.
    fn add_size(&mut self, shape: &[SizeId], k: i64) {
        let mut m = shape.to_vec();
        m.sort();
        *self.terms.entry(m).or_default() += k;
    }
    pub fn add(&mut self, o: &Expr) {
        for (s, k) in &o.terms {
            self.add_size(s, *k);
        }
        self.constant += o.constant;
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut terms: Vec<(Vec<SizeId>, i64)> = self.terms.iter().filter(|(_, k)| **k != 0).map(|(s, k)| (s.clone(), *k)).collect();
        terms.sort();
        let mono = |s: &[SizeId]| s.iter().map(|d| format!("n{}", d.0)).collect::<Vec<_>>().join("·");
        let mut parts: Vec<String> = terms.iter().map(|(s, k)| if *k == 1 { mono(s) } else { format!("{}{}", k, mono(s)) }).collect();
        if self.constant != 0 || parts.is_empty() {
            parts.push(self.constant.to_string());
        }
        write!(f, "{}", parts.join(" + "))
    }
}

#[derive(Clone, Debug, Default)]
pub struct ClusterCost {
    pub loops: usize,
    /// Elements read and written.
    pub reads: Expr,
    pub writes: Expr,
    /// The same traffic in bytes: each element weighs its type's size.
    pub read_bytes: Expr,
    pub write_bytes: Expr,
    pub intermediates: usize,
}

impl ClusterCost {
    fn read(&mut self, shape: &[SizeId], bytes: u64) {
        self.reads.add_size(shape, 1);
        self.read_bytes.add_size(shape, bytes as i64);
    }
    fn write(&mut self, shape: &[SizeId], bytes: u64) {
        self.writes.add_size(shape, 1);
        self.write_bytes.add_size(shape, bytes as i64);
    }
    fn add(&mut self, o: &ClusterCost) {
        self.loops += o.loops;
        self.reads.add(&o.reads);
        self.writes.add(&o.writes);
        self.read_bytes.add(&o.read_bytes);
        self.write_bytes.add(&o.write_bytes);
        self.intermediates += o.intermediates;
    }
}

fn indexed_arrays(b: &Block, out: &mut Vec<VarId>) {
    for s in &b.stmts {
        match s {
            Stmt::Assign { rhs: Rhs::Index(a, _), .. } => out.push(*a),
            Stmt::Assign { .. } => {}
            Stmt::If { then, els, .. } => {
                indexed_arrays(then, out);
                indexed_arrays(els, out);
            }
        }
    }
}

/// The cost of every cluster of a clustering, in execution order.
pub fn costs(f: &Function, g: &DepGraph, sizes: &Sizes, c: &Clustering) -> Vec<ClusterCost> {
    let manifest = c.manifest(f, g);
    let results: IndexSet<VarId> = f.results.iter().filter_map(|l| if let Operand::Var(v) = l.value { Some(v) } else { None }).collect();
    let ord = orders(f, g, c).unwrap_or_else(|_| vec![0; g.len()]);
    let producers = f.producers();
    let of = c.cluster_of();
    let size = |v: VarId| sizes.of_array[&v].clone();
    let bytes = |v: VarId| f.var(v).ty.prim().bytes();
    c.clusters
        .iter()
        .enumerate()
        .map(|(k, members)| {
            let call = members.iter().any(|n| f.node(*n).is_barrier());
            let mut cost = ClusterCost { loops: usize::from(!call), ..Default::default() };
            let mut streamed: IndexSet<(VarId, u32)> = IndexSet::new();
            let mut scalars_read: IndexSet<VarId> = IndexSet::new();
            for n in members {
                let node = f.node(*n);
                for x in node.streamed_inputs().iter().chain(node.gathered_inputs()) {
                    let inside = producers[x.0 as usize].map(|p| of[&p] == k).unwrap_or(false);
                    if !inside {
                        streamed.insert((*x, read_order(f, g, &ord, *x, *n)));
                    }
                }
                let mut ix = vec![];
                indexed_arrays(&node.lambda().body, &mut ix);
                for a in ix {
                    cost.read(sizes.node_shape(*n), bytes(a));
                }
                for v in node.uses_outside_stream() {
                    if !f.var(v).ty.is_array() {
                        if let Some(p) = producers[v.0 as usize] {
                            if of[&p] != k {
                                scalars_read.insert(v);
                            }
                        }
                    }
                }
                for o in node.outputs() {
                    if f.var(*o).ty.is_array() {
                        if manifest.contains(o) {
                            cost.write(&size(*o), bytes(*o));
                            if !results.contains(o) {
                                cost.intermediates += 1;
                            }
                        }
                    } else {
                        cost.writes.constant += 1;
                        cost.write_bytes.constant += bytes(*o) as i64;
                    }
                }
            }
            // At a gather's order, one element per gathered index.
            let at = |o: u32, own: Vec<SizeId>| match g.gather_label.iter().find(|(_, l)| **l == o) {
                Some((gn, _)) => size(f.node(*gn).outputs()[0]),
                None => own,
            };
            for (x, o) in &streamed {
                cost.read(&at(*o, size(*x)), bytes(*x));
            }
            for n in members {
                let node = f.node(*n);
                // Arrays read whole (not streamed): once, or once per
                // output element (a cross's arguments).
                let c = node.comb();
                for x in c.whole().iter().filter(|x| !c.streamed().contains(x)) {
                    if c.whole_read_per_element() {
                        cost.read(&at(ord[n.0 as usize], size(c.outputs()[0])), bytes(*x));
                    } else {
                        cost.read(&size(*x), bytes(*x));
                    }
                }
            }
            cost.reads.constant += scalars_read.len() as i64;
            cost.read_bytes.constant += scalars_read.iter().map(|v| bytes(*v) as i64).sum::<i64>();
            cost
        })
        .collect()
}

/// `--emit=cost`.
pub fn print(f: &Function, g: &DepGraph, sizes: &Sizes, c: &Clustering) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "fn {}", f.name);
    let line = |cc: &ClusterCost| {
        format!(
            "loops {}, reads {}, writes {}, intermediate arrays {}; bytes read {}, written {}",
            cc.loops, cc.reads, cc.writes, cc.intermediates, cc.read_bytes, cc.write_bytes
        )
    };
    let mut total = ClusterCost::default();
    for (i, (cc, members)) in costs(f, g, sizes, c).iter().zip(&c.clusters).enumerate() {
        let names: Vec<&str> = members.iter().map(|n| f.node(*n).name.as_str()).collect();
        let _ = writeln!(out, "cluster {} ({}): {}", i, names.join(" "), line(cc));
        total.add(cc);
    }
    let _ = writeln!(out, "total: {}", line(&total));
    out
}
