//! Builds the fusion tree of each cluster from the clustering: members in
//! dependency order, each combined with the tree of the members after it.

use afc_ir::cluster::Clustering;
use afc_ir::fusion::FusionTree;
use afc_ir::graph::DepGraph;
use afc_ir::labelled::{Function, NodeId, VarId};
use indexmap::IndexSet;

pub fn trees(f: &Function, g: &DepGraph, c: &Clustering) -> Vec<FusionTree> {
    let manifest = c.manifest(f, g);
    c.clusters
        .iter()
        .map(|members| {
            // Node ids are a topological order: a node is made after its inputs.
            let mut ms = members.clone();
            ms.sort();
            tree(f, g, &ms, &manifest)
        })
        .collect()
}

fn tree(f: &Function, g: &DepGraph, ms: &[NodeId], manifest: &IndexSet<VarId>) -> FusionTree {
    if ms.len() == 1 {
        return FusionTree::Leaf(ms[0]);
    }
    let first = ms[0];
    let rest = tree(f, g, &ms[1..], manifest);
    let mut via: Vec<VarId> = vec![];
    for m in &ms[1..] {
        if let Some(e) = g.edge(first, *m) {
            for v in &e.vars {
                if !via.contains(v) {
                    via.push(*v);
                }
            }
        }
    }
    let leaf = Box::new(FusionTree::Leaf(first));
    if via.is_empty() {
        FusionTree::Horizontal(leaf, Box::new(rest))
    } else if via.iter().any(|v| manifest.contains(v)) {
        FusionTree::Diagonal { via, first: leaf, then: Box::new(rest) }
    } else {
        FusionTree::Vertical { via, first: leaf, then: Box::new(rest) }
    }
}
