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
    /// The traversal order of every node, when the clustering's maker chose
    /// them (the ILP); empty to let `orders` choose.
    pub orders: Vec<u8>,
}

impl Clustering {
    pub fn new(clusters: Vec<Vec<NodeId>>, how: impl Into<String>) -> Clustering {
        Clustering { clusters, how: how.into(), orders: vec![] }
    }
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

/// The traversal order of every node (0 = left to right, 1 = right to left;
/// papers/002 §3.3) such that each edge inside a cluster connects a
/// producer's output order to the same read order of its consumer, and
/// every node's required order holds; `Err` if no such orders exist.
/// Free components run left to right.
pub fn orders(f: &Function, g: &DepGraph, c: &Clustering) -> Result<Vec<u8>, String> {
    let of = c.cluster_of();
    let n = g.len();
    let flips = |a: usize| f.node(NodeId(a as u32)).flips_order() as u8;
    // Hard constraints: o_a ^ o_b = parity along a fused edge.
    let mut hard: Vec<Vec<(usize, u8)>> = vec![vec![]; n];
    for (a, b, e) in g.edges() {
        if of[&a] == of[&b] && e.is_fusible() {
            let parity = flips(b.0 as usize);
            hard[a.0 as usize].push((b.0 as usize, parity));
            hard[b.0 as usize].push((a.0 as usize, parity));
        }
    }
    let check = |order: &[u8]| -> Result<(), String> {
        for a in 0..n {
            for &(b, parity) in &hard[a] {
                if order[a] ^ parity != order[b] {
                    return Err(format!(
                        "'{}' and '{}' need opposite traversal orders in one cluster",
                        f.node(NodeId(a as u32)).name,
                        f.node(NodeId(b as u32)).name
                    ));
                }
            }
            let node = f.node(NodeId(a as u32));
            if let Some(req) = node.fixed_order() {
                if order[a] != req {
                    return Err(format!("'{}' must run {}", node.name, if req == 0 { "left to right" } else { "right to left" }));
                }
            }
        }
        Ok(())
    };
    if !c.orders.is_empty() {
        check(&c.orders)?;
        return Ok(c.orders.clone());
    }
    // Soft constraints: siblings in one cluster read in one order if they can.
    let mut soft: Vec<Vec<(usize, u8)>> = vec![vec![]; n];
    for (a, b) in g.siblings().keys() {
        let (a, b) = (a.0 as usize, b.0 as usize);
        if of[&NodeId(a as u32)] == of[&NodeId(b as u32)] {
            let parity = flips(a) ^ flips(b);
            soft[a].push((b, parity));
            soft[b].push((a, parity));
        }
    }
    let mut order: Vec<Option<u8>> = vec![None; n];
    let assign = |order: &mut Vec<Option<u8>>, s: usize, v: u8| -> Result<(), String> {
        order[s] = Some(v);
        let mut stack = vec![s];
        while let Some(a) = stack.pop() {
            for &(b, parity) in &hard[a] {
                let want = order[a].unwrap() ^ parity;
                match order[b] {
                    None => {
                        order[b] = Some(want);
                        stack.push(b);
                    }
                    Some(ob) if ob != want => {
                        return Err(format!(
                            "'{}' and '{}' need opposite traversal orders in one cluster",
                            f.node(NodeId(a as u32)).name,
                            f.node(NodeId(b as u32)).name
                        ))
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    };
    // Required orders first, then grow through shared reads, then the rest left to right.
    for s in 0..n {
        if order[s].is_none() {
            if let Some(req) = f.node(NodeId(s as u32)).fixed_order() {
                assign(&mut order, s, req)?;
            }
        }
    }
    loop {
        let next = (0..n).find_map(|a| {
            let oa = order[a]?;
            soft[a].iter().find(|(b, _)| order[*b].is_none()).map(|&(b, parity)| (b, oa ^ parity))
        });
        match next {
            Some((b, v)) => assign(&mut order, b, v)?,
            None => match (0..n).find(|a| order[*a].is_none()) {
                Some(a) => assign(&mut order, a, 0)?,
                None => break,
            },
        }
    }
    let order: Vec<u8> = order.into_iter().map(|o| o.unwrap()).collect();
    check(&order)?;
    Ok(order)
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
    let ord = orders(f, g, c)?;
    let read_order = |n: NodeId| ord[n.0 as usize] ^ f.node(n).flips_order() as u8;
    let sib = g.siblings();
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
        // Connectivity through fused edges and shared reads (two readers of
        // one array in one order).
        let set: IndexSet<NodeId> = members.iter().copied().collect();
        let mut seen: IndexSet<NodeId> = IndexSet::new();
        let mut stack = vec![members[0]];
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            for m in &set {
                let shared = sib.contains_key(&(n.min(*m), n.max(*m))) && read_order(n) == read_order(*m);
                let linked = g.edge(n, *m).is_some() || g.edge(*m, n).is_some() || shared;
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
