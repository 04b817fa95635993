//! Fusible edges whose fusion is always at least as good (docs/ilp.md,
//! rule 11, "Dominated edges"): the model fixes them fused, and every
//! clustering it starts from fuses them.
//!
//! A node `a` that streams nothing another node could fuse into it (each
//! of its arrays is a parameter or comes over an edge fixed apart) and
//! whose one array `V` only `b` reads can join `b`'s cluster in any legal
//! clustering: nothing follows `a` but `b`, and nothing `a` reads comes from
//! a cluster after `b`'s. The move saves `V`'s write and `b`'s read of it,
//! and costs at most one more read of each array `a` streams and every
//! shared read `a` took part in. Where the cost model weighs the saving at
//! least as much, no clustering with `a` apart from `b` is cheaper than
//! one with them together, so fixing `x_a_b = 0` keeps an optimum.

use super::cost::Weights;
use super::orders::OrderVars;
use super::greedy;
use afc_ir::cluster::Clustering;
use afc_ir::graph::{DepGraph, SIBLING_WINDOW};
use afc_ir::labelled::{Function, NodeId, NodeKind, VarId};
use afc_ir::lp::{Lp, LpVar};
use indexmap::IndexMap;

/// The fusible edges `a → b` of the model being built that can be fixed
/// fused with an optimum kept, in `fused_edges` order. `a` is a map, generate, reverse or
/// scan (a node whose output has its iteration's size), and with the
/// producers already fixed fused into it (its group, moved with it) it has
///
/// - one output, an array `V` not forced into memory, that only `b`
///   reads, and no other edge out;
/// - no fusible edge in from outside its group that is not fixed apart, so
///   moving the group leaves no fused edge behind;
/// - `b`'s iteration size, and every order `b` may read `V` in among
///   `a`'s possible orders (and so on up the group), so it can run as `b`
///   does;
/// - at most `SIBLING_WINDOW + 1` readers of each array the group streams,
///   so that the model counts those reads by groups exactly and the move
///   adds at most one each;
/// - a saving (`V`'s write, `b`'s read, the intermediate array, the
///   unfused edge) that the weights `w` put at no less than what the move
///   may cost: one read of each array the group streams from outside and
///   each sibling pair of its members that could share.
#[allow(clippy::too_many_arguments)]
pub fn always_fused(
    f: &Function,
    g: &DepGraph,
    lp: &Lp,
    fused_edges: &IndexMap<(NodeId, NodeId), LpVar>,
    fused_siblings: &IndexMap<(NodeId, NodeId), LpVar>,
    orders: &OrderVars,
    w: &Weights,
) -> Vec<(NodeId, NodeId)> {
    let open = |x: &LpVar| lp.vars[x.0].lo == 0.0;
    let mut fused_in: Vec<Vec<NodeId>> = vec![vec![]; g.len()];
    for ((p, c), x) in fused_edges {
        if open(x) {
            fused_in[c.0 as usize].push(*p);
        }
    }
    let mut pairs = vec![0usize; g.len()];
    for ((a, b), s) in fused_siblings {
        if open(s) {
            pairs[a.0 as usize] += 1;
            pairs[b.0 as usize] += 1;
        }
    }
    let mut streams: Vec<Vec<VarId>> = vec![vec![]; g.len()];
    for (v, readers) in &g.readers {
        for c in readers {
            streams[c.0 as usize].push(*v);
        }
    }
    // Per node whose out-edge is fixed: what its group risks when moved
    // (reads of what it streams from outside, sibling pairs). Producers
    // first.
    let producers = f.producers();
    let mut risk: Vec<Option<f64>> = vec![None; g.len()];
    let topo = petgraph::algo::toposort(&g.graph, None).unwrap_or_else(|_| afc_ir::ice::fail("cluster", "the dependency graph has a cycle", ""));
    for idx in topo {
        let a = g.graph[idx];
        let node = f.node(a);
        if !matches!(node.kind, NodeKind::Map(_) | NodeKind::Generate(_) | NodeKind::Reverse(_) | NodeKind::Scan(_)) {
            continue;
        }
        let Some(group) = fused_in[a.0 as usize].iter().map(|p| risk[p.0 as usize]).sum::<Option<f64>>() else { continue };
        let &[v] = node.outputs() else { continue };
        let Some(&[b]) = g.readers.get(&v).map(|r| r.as_slice()) else { continue };
        let Some(x) = fused_edges.get(&(a, b)) else { continue };
        if !open(x) || !f.var(v).ty.is_array() || g.forced_manifest.contains(&v) || g.graph.edges(idx).count() != 1 {
            continue;
        }
        if g.iteration[a.0 as usize] != g.iteration[b.0 as usize] {
            continue;
        }
        let domain = &orders.domain[a.0 as usize];
        if !orders.reads(f, g, v, b).iter().all(|k| domain.contains(k)) {
            continue;
        }
        // What the group's members before `a` read is theirs; `a`'s
        // fixed-fused inputs cost nothing wherever the group goes.
        let outside: Vec<VarId> = streams[a.0 as usize].iter().copied().filter(|p| producers[p.0 as usize].is_none_or(|pr| !fused_in[a.0 as usize].contains(&pr))).collect();
        let few = outside.iter().all(|p| g.readers[p].len() <= SIBLING_WINDOW + 1);
        let risked = outside.iter().map(|p| w.read(f, g, *p, a)).sum::<f64>() + w.pair * pairs[a.0 as usize] as f64 + group;
        let saved = w.write(f, g, v) + w.read(f, g, v, b) + w.edge;
        if few && saved >= risked {
            risk[a.0 as usize] = Some(risked);
        }
    }
    fused_edges.keys().filter(|(a, _)| risk[a.0 as usize].is_some()).copied().collect()
}

/// `c`, or where it leaves a dominated pair apart, greedy's merges with
/// the dominated pairs first: a clustering the model admits. (Greedy's
/// own clustering fuses every dominated pair: it tries each producer's
/// edge to its consumer while the producer is still alone, which is always
/// legal, since no edge into it can fuse; this is for any other start.)
pub fn respecting(f: &Function, g: &DepGraph, dominated: &[(NodeId, NodeId)], c: Clustering) -> Clustering {
    let of = c.cluster_of();
    if dominated.iter().all(|(a, b)| of[a] == of[b]) {
        return c;
    }
    guided(f, g, dominated, greedy::candidates(f, g))
}

/// Greedy's merges over `links`, the dominated pairs first: each of those
/// merges is legal on its own (the move of the proof, from a singleton),
/// and later merges never part them.
pub fn guided(f: &Function, g: &DepGraph, dominated: &[(NodeId, NodeId)], links: impl IntoIterator<Item = (NodeId, NodeId)>) -> Clustering {
    greedy::guided(f, g, dominated.iter().copied().chain(links))
}
