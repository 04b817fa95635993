//! A greedy clustering for comparison: take the fusible edges in source
//! order of their consumers, then the shared reads, and merge the two
//! clusters whenever the result is still legal. Like the heuristics of
//! papers/002 §5, it can miss the optimum.

use super::{groups_of, order_clusters, Groups};
use afc_ir::cluster::{verify, Clustering};
use afc_ir::graph::DepGraph;
use afc_ir::labelled::{Function, NodeId};

pub fn cluster(f: &Function, g: &DepGraph) -> Clustering {
    guided(f, g, candidates(f, g))
}

/// The links greedy tries, in its order: fusible edges by their
/// consumers' source position, then sibling pairs.
pub fn candidates(f: &Function, g: &DepGraph) -> Vec<(NodeId, NodeId)> {
    let mut candidates: Vec<(NodeId, NodeId)> = g.edges().filter(|(_, _, e)| e.is_fusible()).map(|(a, b, _)| (a, b)).collect();
    candidates.sort_by_key(|(a, b)| (f.node(*b).span.start, f.node(*a).span.start));
    candidates.extend(g.siblings().keys().copied());
    candidates
}

/// Merges the clusters of each pair of nodes in turn, keeping a merge when
/// the clustering stays legal. Each check verifies the whole clustering,
/// so on a graph of more than `BATCH_NODES` nodes the pairs are tried in
/// halves instead: all of them at once, and where that is illegal, each
/// half in turn, down to single pairs. A chain of thousands of fusible
/// maps is then one check, not thousands; where single pairs are reached
/// the merges are greedy's own (docs/ilp.md, "Large graphs").
pub fn guided(f: &Function, g: &DepGraph, candidates: impl IntoIterator<Item = (NodeId, NodeId)>) -> Clustering {
    let mut groups = Groups::new(g.len());
    let legal = |trial: &Groups| order_clusters(f, g, groups_of(trial)).is_some_and(|clusters| verify(f, g, &Clustering::new(clusters, "greedy")).is_ok());
    if g.len() <= BATCH_NODES {
        for (a, b) in candidates {
            if groups.find(a.0 as usize) == groups.find(b.0 as usize) {
                continue;
            }
            let mut trial = groups.clone();
            trial.union(a.0 as usize, b.0 as usize);
            if legal(&trial) {
                groups = trial;
            }
        }
    } else {
        let candidates: Vec<(NodeId, NodeId)> = candidates.into_iter().collect();
        merge_halves(&mut groups, &candidates, &legal);
    }
    let clusters = order_clusters(f, g, groups_of(&groups)).expect("greedy keeps the clustering acyclic");
    Clustering::new(clusters, "greedy")
}

/// The largest graph whose pairs greedy tries one at a time.
pub const BATCH_NODES: usize = 500;

/// Merges the pairs of `block` if the result is legal, else each half.
fn merge_halves(groups: &mut Groups, block: &[(NodeId, NodeId)], legal: &dyn Fn(&Groups) -> bool) {
    let mut trial = groups.clone();
    let mut merged = false;
    for (a, b) in block {
        if trial.find(a.0 as usize) != trial.find(b.0 as usize) {
            trial.union(a.0 as usize, b.0 as usize);
            merged = true;
        }
    }
    if !merged {
        return;
    }
    if legal(&trial) {
        *groups = trial;
    } else if block.len() > 1 {
        let (left, right) = block.split_at(block.len() / 2);
        merge_halves(groups, left, legal);
        merge_halves(groups, right, legal);
    }
}
