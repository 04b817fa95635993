//! The explicit fusion tree of a cluster (papers/001 §4.4): how its members
//! fuse, as Vertical (the first's arrays are consumed by the rest and not
//! kept), Diagonal (consumed and also written) and Horizontal (independent,
//! sharing only their inputs) nodes over leaf combinators, and `Loop`
//! nodes: the members that iterate over one more dimension, in a loop of
//! their own inside the iteration around them.

use crate::labelled::{Function, NodeId, VarId};
use crate::sizes::SizeId;
use std::fmt::Write;

#[derive(Clone, Debug, PartialEq)]
pub enum FusionTree {
    Leaf(NodeId),
    Vertical { via: Vec<VarId>, first: Box<FusionTree>, then: Box<FusionTree> },
    Diagonal { via: Vec<VarId>, first: Box<FusionTree>, then: Box<FusionTree> },
    Horizontal(Box<FusionTree>, Box<FusionTree>),
    /// An inner loop over a dimension of size `size`, run in every
    /// iteration of the level around it.
    Loop { size: SizeId, body: Box<FusionTree> },
}

impl FusionTree {
    pub fn leaves(&self) -> Vec<NodeId> {
        match self {
            FusionTree::Leaf(n) => vec![*n],
            FusionTree::Loop { body, .. } => body.leaves(),
            FusionTree::Vertical { first, then, .. } | FusionTree::Diagonal { first, then, .. } | FusionTree::Horizontal(first, then) => {
                let mut v = first.leaves();
                v.extend(then.leaves());
                v
            }
        }
    }
    /// (vertical, horizontal, diagonal) node counts, for structural tests.
    pub fn counts(&self) -> (usize, usize, usize) {
        match self {
            FusionTree::Leaf(_) => (0, 0, 0),
            FusionTree::Loop { body, .. } => body.counts(),
            FusionTree::Vertical { first, then, .. } | FusionTree::Diagonal { first, then, .. } | FusionTree::Horizontal(first, then) => {
                let (a, b) = (first.counts(), then.counts());
                let own = match self {
                    FusionTree::Vertical { .. } => (1, 0, 0),
                    FusionTree::Horizontal(..) => (0, 1, 0),
                    _ => (0, 0, 1),
                };
                (a.0 + b.0 + own.0, a.1 + b.1 + own.1, a.2 + b.2 + own.2)
            }
        }
    }
}

fn print_tree(f: &Function, t: &FusionTree, indent: usize, out: &mut String) {
    let pad = "  ".repeat(indent);
    let names = |vs: &[VarId]| vs.iter().map(|v| f.var(*v).name.clone()).collect::<Vec<_>>().join(", ");
    match t {
        FusionTree::Leaf(n) => {
            let _ = writeln!(out, "{}Leaf {} \"{}\"", pad, f.node(*n).combinator(), f.node(*n).name);
        }
        FusionTree::Vertical { via, first, then } => {
            let _ = writeln!(out, "{}Vertical [{}]", pad, names(via));
            print_tree(f, first, indent + 1, out);
            print_tree(f, then, indent + 1, out);
        }
        FusionTree::Diagonal { via, first, then } => {
            let _ = writeln!(out, "{}Diagonal [{}]", pad, names(via));
            print_tree(f, first, indent + 1, out);
            print_tree(f, then, indent + 1, out);
        }
        FusionTree::Loop { size, body } => {
            let _ = writeln!(out, "{}Loop n{}", pad, size.0);
            print_tree(f, body, indent + 1, out);
        }
        FusionTree::Horizontal(a, b) => {
            let _ = writeln!(out, "{}Horizontal", pad);
            print_tree(f, a, indent + 1, out);
            print_tree(f, b, indent + 1, out);
        }
    }
}

/// `--emit=fusion-tree`: one tree per cluster.
pub fn print(f: &Function, trees: &[FusionTree]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "fn {}", f.name);
    for (i, t) in trees.iter().enumerate() {
        let (v, h, d) = t.counts();
        let _ = writeln!(out, "cluster {}: vertical {} horizontal {} diagonal {}", i, v, h, d);
        print_tree(f, t, 1, &mut out);
    }
    out
}

/// Checks one cluster's fusion tree against the graph: its leaves are the
/// cluster's members, each once; every edge between members goes from an
/// earlier leaf to a later one; a Vertical or Diagonal node's `via` arrays
/// are made by a leaf of its first part and read by a leaf of the rest; a
/// Horizontal node's parts are independent (no edge from the first to the
/// second).
pub fn verify(f: &Function, g: &crate::graph::DepGraph, members: &[NodeId], tree: &FusionTree) -> Result<(), String> {
    let leaves = tree.leaves();
    let name = |n: NodeId| f.nodes.get(n.0 as usize).map(|x| x.name.clone()).unwrap_or_else(|| format!("#{}", n.0));
    let mut seen = std::collections::HashSet::new();
    for l in &leaves {
        if !members.contains(l) {
            return Err(format!("leaf '{}' is not a member of the cluster", name(*l)));
        }
        if !seen.insert(*l) {
            return Err(format!("leaf '{}' appears twice", name(*l)));
        }
    }
    if let Some(m) = members.iter().find(|m| !seen.contains(m)) {
        return Err(format!("member '{}' is not a leaf", name(*m)));
    }
    let pos = |n: NodeId| leaves.iter().position(|l| *l == n);
    for (a, b, _) in g.edges() {
        if let (Some(pa), Some(pb)) = (pos(a), pos(b)) {
            if pa >= pb {
                return Err(format!("edge '{}' -> '{}' goes backwards in the tree", name(a), name(b)));
            }
        }
    }
    fn walk(f: &Function, g: &crate::graph::DepGraph, t: &FusionTree, name: &dyn Fn(NodeId) -> String) -> Result<(), String> {
        match t {
            FusionTree::Leaf(_) => Ok(()),
            FusionTree::Loop { body, .. } => walk(f, g, body, name),
            FusionTree::Vertical { via, first, then } | FusionTree::Diagonal { via, first, then } => {
                let (fl, tl) = (first.leaves(), then.leaves());
                for v in via {
                    let carried = g.edges().any(|(a, b, e)| fl.contains(&a) && tl.contains(&b) && e.vars.contains(v));
                    if !carried {
                        let vname = f.vars.get(v.0 as usize).map(|x| x.name.as_str()).unwrap_or("?");
                        return Err(format!("'{}' is fused through, but no edge carries it from the first part to the rest", vname));
                    }
                }
                walk(f, g, first, name)?;
                walk(f, g, then, name)
            }
            FusionTree::Horizontal(first, then) => {
                let (fl, tl) = (first.leaves(), then.leaves());
                if let Some((a, b, _)) = g.edges().find(|(a, b, _)| fl.contains(a) && tl.contains(b)) {
                    return Err(format!("horizontal parts depend on each other: edge '{}' -> '{}'", name(a), name(b)));
                }
                walk(f, g, first, name)?;
                walk(f, g, then, name)
            }
        }
    }
    walk(f, g, tree, &name)
}
