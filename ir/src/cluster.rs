//! A clustering: the nodes of a function partitioned into clusters, listed
//! in execution order, each one loop nest. With its printer
//! (`--emit=clusters`, whose format LANGUAGE.md fixes) and the check that
//! every clustering passes before it is used (DESIGN.md decision 14).

use crate::graph::DepGraph;
use crate::labelled::{Function, NodeId, VarId};
use indexmap::IndexSet;
use std::collections::HashMap;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq)]
pub struct Clustering {
    /// Clusters in execution order; members in source order.
    pub clusters: Vec<Vec<NodeId>>,
    /// How it was found, for `-v` ("ilp: optimal", "greedy", …).
    pub how: String,
}

impl Clustering {
    pub fn cluster_of(&self) -> HashMap<NodeId, usize> {
        let mut m = HashMap::new();
        for (i, c) in self.clusters.iter().enumerate() {
            for n in c {
                m.insert(*n, i);
            }
        }
        m
    }

    /// Arrays written to memory: forced ones and those read outside their cluster.
    pub fn manifest(&self, f: &Function, g: &DepGraph) -> IndexSet<VarId> {
        let of = self.cluster_of();
        let mut m: IndexSet<VarId> = g.forced_manifest.iter().copied().collect();
        for (a, b, e) in g.edges() {
            if of[&a] != of[&b] {
                for v in &e.vars {
                    if f.var(*v).ty.is_array() {
                        m.insert(*v);
                    }
                }
            }
        }
        m
    }
}

/// `cluster N: NAME NAME …` lines per function (LANGUAGE.md).
pub fn print(f: &Function, c: &Clustering) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "fn {}", f.name);
    for (i, members) in c.clusters.iter().enumerate() {
        let names: Vec<&str> = members.iter().map(|n| f.node(*n).name.as_str()).collect();
        let _ = writeln!(out, "cluster {}: {}", i, names.join(" "));
    }
    out
}

/// Checks a clustering: every node in exactly one cluster, no
/// fusion-preventing edge inside a cluster, edges only forward in execution
/// order, one iteration size per cluster, and every cluster connected by
/// fused edges and shared reads.
pub fn verify(f: &Function, g: &DepGraph, c: &Clustering) -> Result<(), String> {
    let of = c.cluster_of();
    let total: usize = c.clusters.iter().map(|m| m.len()).sum();
    if total != g.len() || of.len() != g.len() {
        return Err("not every node is in exactly one cluster".into());
    }
    for (a, b, e) in g.edges() {
        let (ca, cb) = (of[&a], of[&b]);
        if ca > cb {
            return Err(format!("edge '{}' -> '{}' goes backwards (cluster {} to {})", f.node(a).name, f.node(b).name, ca, cb));
        }
        if ca == cb && !e.is_fusible() {
            return Err(format!("fusion-preventing edge '{}' -> '{}' inside cluster {}", f.node(a).name, f.node(b).name, ca));
        }
    }
    for (i, members) in c.clusters.iter().enumerate() {
        // papers/000 §1.3.6: iteration sizes may differ only down the
        // transducer forest, with every transducer on the way in the cluster.
        let sizes = &g.sizes;
        let root = members.iter().map(|n| sizes.of_node(*n)).min_by_key(|s| (sizes.depth(*s), s.0)).unwrap();
        for n in members {
            match sizes.path(sizes.of_node(*n), root) {
                None => return Err(format!("cluster {} mixes unrelated iteration sizes ('{}')", i, f.node(*n).name)),
                Some(ts) => {
                    if let Some(t) = ts.iter().find(|t| !members.contains(t)) {
                        return Err(format!(
                            "cluster {}: '{}' runs at the sub-rate of filter '{}', which is not in the cluster",
                            i,
                            f.node(*n).name,
                            f.node(*t).name
                        ));
                    }
                }
            }
        }
        // Connectivity through fused edges and shared reads.
        let set: IndexSet<NodeId> = members.iter().copied().collect();
        let mut seen: IndexSet<NodeId> = IndexSet::new();
        let mut stack = vec![members[0]];
        let sib = g.siblings();
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            for m in &set {
                let linked = g.edge(n, *m).is_some() || g.edge(*m, n).is_some() || sib.contains_key(&(n.min(*m), n.max(*m)));
                if linked && !seen.contains(m) {
                    stack.push(*m);
                }
            }
        }
        if seen.len() != set.len() {
            return Err(format!("cluster {} is not connected", i));
        }
    }
    Ok(())
}
