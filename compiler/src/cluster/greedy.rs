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
/// the clustering stays legal.
pub fn guided(f: &Function, g: &DepGraph, candidates: impl IntoIterator<Item = (NodeId, NodeId)>) -> Clustering {
    let mut groups = Groups::new(g.len());
    for (a, b) in candidates {
        if groups.find(a.0 as usize) == groups.find(b.0 as usize) {
            continue;
        }
        let mut trial = groups.clone();
        trial.union(a.0 as usize, b.0 as usize);
        if let Some(clusters) = order_clusters(f, g, groups_of(&trial)) {
            let c = Clustering::new(clusters, "greedy");
            if verify(f, g, &c).is_ok() {
                groups = trial;
            }
        }
    }
    let clusters = order_clusters(f, g, groups_of(&groups)).expect("greedy keeps the clustering acyclic");
    Clustering::new(clusters, "greedy")
}
