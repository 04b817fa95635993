//! Builds the fusion tree of each cluster from the clustering. Members are
//! taken in dependency order, rate by rate: at the cluster's root
//! iteration size, each member is combined with the tree of the members
//! after it (Vertical or Diagonal if those read its arrays, else
//! Horizontal); a filter carries the tree of the members that run at its
//! sub-rate, fused vertically (or diagonally) under it.

use afc_ir::cluster::Clustering;
use afc_ir::fusion::FusionTree;
use afc_ir::graph::DepGraph;
use afc_ir::labelled::{Function, NodeId, NodeKind, VarId};
use afc_ir::sizes::SizeId;
use indexmap::IndexSet;

pub fn trees(f: &Function, g: &DepGraph, c: &Clustering) -> Vec<FusionTree> {
    let manifest = c.manifest(f, g);
    c.clusters
        .iter()
        .map(|members| {
            // Node ids are a topological order: a node is made after its inputs.
            let mut ms = members.clone();
            ms.sort();
            let sizes = &g.sizes;
            let root = ms.iter().map(|n| sizes.of_node(*n)).min_by_key(|s| (sizes.depth(*s), s.0)).unwrap();
            level(f, g, &ms, root, &manifest)
        })
        .collect()
}

/// One item of a level: a member at the level's size, with (for a filter)
/// the tree of the members below it.
struct Item {
    node: NodeId,
    tree: FusionTree,
    nodes: Vec<NodeId>,
}

fn level(f: &Function, g: &DepGraph, ms: &[NodeId], size: SizeId, manifest: &IndexSet<VarId>) -> FusionTree {
    let sizes = &g.sizes;
    let mut items = vec![];
    for n in ms.iter().filter(|n| sizes.of_node(**n) == size) {
        let mut tree = FusionTree::Leaf(*n);
        let mut nodes = vec![*n];
        if let NodeKind::Filter { outputs, .. } = &f.node(*n).kind {
            let sub = sizes.of_array[&outputs[0]];
            let below: Vec<NodeId> = ms.iter().copied().filter(|m| sizes.path(sizes.of_node(*m), sub).is_some()).collect();
            if !below.is_empty() {
                let then = level(f, g, &below, sub, manifest);
                let via = reads_of(g, &[*n], &below);
                tree = combine(FusionTree::Leaf(*n), then, via, manifest);
                nodes.extend(below);
            }
        }
        items.push(Item { node: *n, tree, nodes });
    }
    items.sort_by_key(|i| i.node);
    chain(g, items, manifest)
}

fn chain(g: &DepGraph, mut items: Vec<Item>, manifest: &IndexSet<VarId>) -> FusionTree {
    let first = items.remove(0);
    if items.is_empty() {
        return first.tree;
    }
    let rest_nodes: Vec<NodeId> = items.iter().flat_map(|i| i.nodes.clone()).collect();
    let via = reads_of(g, &first.nodes, &rest_nodes);
    let rest = chain(g, items, manifest);
    combine(first.tree, rest, via, manifest)
}

fn combine(first: FusionTree, then: FusionTree, via: Vec<VarId>, manifest: &IndexSet<VarId>) -> FusionTree {
    if via.is_empty() {
        FusionTree::Horizontal(Box::new(first), Box::new(then))
    } else if via.iter().any(|v| manifest.contains(v)) {
        FusionTree::Diagonal { via, first: Box::new(first), then: Box::new(then) }
    } else {
        FusionTree::Vertical { via, first: Box::new(first), then: Box::new(then) }
    }
}

/// The arrays `from`'s nodes produce that `to`'s nodes stream.
fn reads_of(g: &DepGraph, from: &[NodeId], to: &[NodeId]) -> Vec<VarId> {
    let mut via = vec![];
    for a in from {
        for b in to {
            if let Some(e) = g.edge(*a, *b) {
                for v in &e.vars {
                    if !via.contains(v) {
                        via.push(*v);
                    }
                }
            }
        }
    }
    via
}
