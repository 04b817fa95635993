//! The all-pairs ILP of papers/000 (Fig. 1.14): a fusion variable for every
//! pair of nodes that could share a cluster, concestor constraints for
//! pairs of different iteration sizes, the fusion-preventing-path
//! optimisation, and the paper's cost model (weights N², N and 1). Behind
//! `--ilp-model=pairs`: for small programs and to reproduce the paper; the
//! edge-local model (ilp.rs) is the default because this one grows
//! quadratically (DESIGN.md decision 5).

use super::{order_clusters, Groups};
use afc_ir::cluster::Clustering;
use afc_ir::graph::DepGraph;
use afc_ir::labelled::{Function, NodeId};
use afc_ir::lp::{Lp, LpVar};
use indexmap::IndexMap;

pub struct PairsModel {
    pub lp: Lp,
    /// `x_i_j` (1 = not fused) for the pairs that may fuse; other pairs are never fused.
    pub x: IndexMap<(NodeId, NodeId), LpVar>,
    /// `o_i`: the traversal order of node i.
    pub order: Vec<LpVar>,
}

fn key(a: NodeId, b: NodeId) -> (NodeId, NodeId) {
    (a.min(b), a.max(b))
}

/// Builds the model of papers/000 Fig. 1.14 for one function.
pub fn model(f: &Function, g: &DepGraph) -> PairsModel {
    let mut lp = Lp::default();
    let nodes: Vec<NodeId> = g.nodes().collect();
    let n = nodes.len() as f64;
    lp.comments.push(format!("clustering ILP of fn {} (all-pairs model of papers/000 Fig. 1.14)", f.name));
    for a in &nodes {
        lp.comments.push(format!("node {} = {} '{}'", a.0, f.node(*a).combinator(), f.node(*a).name));
    }
    let pi: Vec<LpVar> = nodes.iter().map(|a| lp.var(format!("pi_{}", a.0), 0.0, n, false)).collect();
    let p = |a: NodeId| pi[a.0 as usize];
    let reach = g.reach().unwrap_or_else(|e| afc_ir::ice::fail("cluster", &e, &afc_ir::graph::print(f, g, &g.sizes)));
    let possible = |a: NodeId, b: NodeId| !reach.preventing_path(a, b) && !reach.preventing_path(b, a);
    let sizes = &g.sizes;

    // Which pairs get a variable: possible, and (for different iteration
    // sizes) possible' — their concestors exist and could fuse with them.
    let mut x: IndexMap<(NodeId, NodeId), LpVar> = IndexMap::new();
    let mut conc: IndexMap<(NodeId, NodeId), (NodeId, NodeId)> = IndexMap::new();
    for (i, a) in nodes.iter().enumerate() {
        for b in &nodes[i + 1..] {
            let (a, b) = (*a, *b);
            let preventing = matches!(g.edge(a, b), Some(e) if !e.is_fusible()) || matches!(g.edge(b, a), Some(e) if !e.is_fusible());
            if preventing || !possible(a, b) {
                continue;
            }
            if sizes.of_node(a) != sizes.of_node(b) {
                let Some((ca, cb)) = sizes.concestors(a, b) else { continue };
                let ok = possible(ca, a) && possible(cb, b) && possible(ca, cb);
                if !ok {
                    continue;
                }
                conc.insert((a, b), (ca, cb));
            }
            x.insert((a, b), lp.binary(format!("x_{}_{}", a.0, b.0)));
        }
    }
    // Precedence: fused nodes share a position; an edge goes forward.
    for (&(a, b), &v) in &x {
        match (g.edge(a, b), g.edge(b, a)) {
            (Some(_), _) => {
                lp.row(format!("edge_lo_{}_{}", a.0, b.0), vec![(v, 1.0), (p(b), -1.0), (p(a), 1.0)], f64::NEG_INFINITY, 0.0);
                lp.row(format!("edge_hi_{}_{}", a.0, b.0), vec![(p(b), 1.0), (p(a), -1.0), (v, -n)], f64::NEG_INFINITY, 0.0);
            }
            (None, Some(_)) => {
                lp.row(format!("edge_lo_{}_{}", b.0, a.0), vec![(v, 1.0), (p(a), -1.0), (p(b), 1.0)], f64::NEG_INFINITY, 0.0);
                lp.row(format!("edge_hi_{}_{}", b.0, a.0), vec![(p(a), 1.0), (p(b), -1.0), (v, -n)], f64::NEG_INFINITY, 0.0);
            }
            (None, None) => {
                lp.row(format!("pair_lo_{}_{}", a.0, b.0), vec![(p(b), 1.0), (p(a), -1.0), (v, n)], 0.0, f64::INFINITY);
                lp.row(format!("pair_hi_{}_{}", a.0, b.0), vec![(p(b), 1.0), (p(a), -1.0), (v, -n)], f64::NEG_INFINITY, 0.0);
            }
        }
    }
    // An edge whose ends can never share a cluster (fusion-preventing, or
    // fusible but of unrelated sizes: no variable) goes strictly forward.
    for (a, b, e) in g.edges() {
        if !e.is_fusible() || !x.contains_key(&key(a, b)) {
            lp.row(format!("prevent_{}_{}", a.0, b.0), vec![(p(b), 1.0), (p(a), -1.0)], 1.0, f64::INFINITY);
        }
    }
    // Concestors: a and b are no more fused than each with its concestor
    // and the two concestors with each other.
    for (&(a, b), &(ca, cb)) in &conc {
        let v = x[&(a, b)];
        for (u, w) in [(a, ca), (b, cb), (ca, cb)] {
            if u == w || key(u, w) == (a, b) {
                continue;
            }
            match x.get(&key(u, w)) {
                Some(&xu) => lp.row(format!("conc_{}_{}_{}_{}", a.0, b.0, u.0, w.0), vec![(xu, 1.0), (v, -1.0)], f64::NEG_INFINITY, 0.0),
                // The pair can never fuse, so neither can a and b.
                None => lp.row(format!("conc_{}_{}_{}_{}", a.0, b.0, u.0, w.0), vec![(v, 1.0)], 1.0, 1.0),
            }
        }
    }
    // Traversal orders, as in the edge-local model: a fused edge needs the
    // producer's order to be the consumer's read order.
    let gcount = g.gathers() as f64;
    let big = gcount + 2.0;
    let order: Vec<LpVar> = nodes
        .iter()
        .map(|a| {
            let node = f.node(*a);
            let whole = node.outputs().iter().any(|v| g.forced_manifest.contains(v));
            let (lo, hi) = match node.fixed_order() {
                Some(o) => (o as f64, o as f64),
                None if f.may_take_label(*a) && !whole => (0.0, 1.0 + gcount),
                None => (0.0, 1.0),
            };
            lp.var(format!("o_{}", a.0), lo, hi, true)
        })
        .collect();
    for (a, b, e) in g.edges() {
        let Some(&v) = x.get(&key(a, b)) else { continue };
        let afc_ir::graph::EdgeKind::Fusible { order: label } = e.kind else { continue };
        let (oa, ob) = (order[a.0 as usize], order[b.0 as usize]);
        // o_a = read(b): o_b, 1 − o_b for a reverse, or a gather's label.
        let (terms, k): (Vec<(LpVar, f64)>, f64) = if label >= 2 {
            (vec![(oa, 1.0)], label as f64)
        } else if f.node(b).flips_order() {
            (vec![(oa, 1.0), (ob, 1.0)], 1.0)
        } else {
            (vec![(oa, 1.0), (ob, -1.0)], 0.0)
        };
        let mut lo = terms.clone();
        lo.push((v, big));
        let mut hi = terms;
        hi.push((v, -big));
        lp.row(format!("order_lo_{}_{}", a.0, b.0), lo, k, f64::INFINITY);
        lp.row(format!("order_hi_{}_{}", a.0, b.0), hi, f64::NEG_INFINITY, k);
    }
    // A node runs at a gather's label only to feed a fused consumer there;
    // a gather only with its index arrays from memory (o_a ≤ 1 + g·x).
    if gcount > 0.0 {
        let producers = f.producers();
        for a in &nodes {
            if !f.may_take_label(*a) {
                continue;
            }
            for ix in f.index_arrays_checked(*a) {
                if let Some(&v) = producers[ix.0 as usize].and_then(|p| x.get(&key(p, *a))) {
                    lp.row(format!("checked_{}_{}", a.0, ix.0), vec![(order[a.0 as usize], 1.0), (v, -gcount)], f64::NEG_INFINITY, 1.0);
                }
            }
            let outs: Vec<LpVar> = g.edges().filter(|(p, _, e)| *p == *a && e.is_fusible()).filter_map(|(p, q, _)| x.get(&key(p, q)).copied()).collect();
            let mut terms = vec![(order[a.0 as usize], 1.0)];
            terms.extend(outs.iter().map(|v| (*v, gcount)));
            lp.row(format!("feeds_{}", a.0), terms, f64::NEG_INFINITY, 1.0 + gcount * outs.len() as f64);
        }
    }
    // An array-producing node running at a gather's indices is not written
    // whole, so its array must be contracted (c = 0 forces order ≤ 1 below).

    // Contraction: c_i = 0 only if every consumer of i's array is fused with it.
    let mut c: IndexMap<NodeId, LpVar> = IndexMap::new();
    for a in &nodes {
        if f.var(f.node(*a).outputs()[0]).ty.is_array() {
            c.insert(*a, lp.binary(format!("c_{}", a.0)));
        }
    }
    for a in &nodes {
        if let Some(&ca) = c.get(a) {
            if gcount > 0.0 && f.may_take_label(*a) {
                // c_a = 1 (uncontracted) ⇒ o_a ≤ 1. Results are not forced
                // manifest in this model, so also bound their order.
                lp.row(format!("whole_{}", a.0), vec![(order[a.0 as usize], 1.0), (ca, gcount)], f64::NEG_INFINITY, 1.0 + gcount);
            }
        }
    }
    for (a, b, e) in g.edges() {
        if let Some(&ca) = c.get(&a) {
            match x.get(&key(a, b)) {
                Some(&v) if e.is_fusible() => lp.row(format!("contract_{}_{}", a.0, b.0), vec![(v, 1.0), (ca, -1.0)], f64::NEG_INFINITY, 0.0),
                _ => lp.row(format!("contract_{}_{}", a.0, b.0), vec![(ca, 1.0)], 1.0, f64::INFINITY),
            }
        }
    }
    // Objective (Fig. 1.12): N² for pairs joined by an edge or sharing an
    // input, 1 otherwise; N per uncontracted array.
    let shares = |a: NodeId, b: NodeId| {
        let ia = f.node(a).streamed_inputs();
        f.node(b).streamed_inputs().iter().any(|v| ia.contains(v))
    };
    let mut obj = vec![];
    for (&(a, b), &v) in &x {
        let w = if g.edge(a, b).is_some() || g.edge(b, a).is_some() || shares(a, b) { n * n } else { 1.0 };
        obj.push((v, w));
    }
    for v in c.values() {
        obj.push((*v, n));
    }
    lp.objective = obj;
    PairsModel { lp, x, order }
}

/// The most nodes a graph may have for the all-pairs model: it has a
/// variable per pair, so a chain of 2,000 maps took 5.8 GB (and 10,000
/// would take 150 GB); 500 take some 400 MB. Past it the clustering is
/// greedy's, and `--emit=ilp` refuses.
pub const MAX_NODES: usize = 500;

/// Solves the all-pairs model; clusters are the nodes joined by `x = 0`,
/// split into connected components (decision 8).
pub fn cluster(f: &Function, g: &DepGraph, cfg: &super::ClusterConfig) -> Clustering {
    if g.is_empty() {
        return Clustering::new(vec![], "ilp (pairs): empty");
    }
    if g.len() > MAX_NODES {
        let mut c = super::greedy::cluster(f, g);
        c.how = format!("ilp (pairs): greedy fallback: {} nodes, over {} for the all-pairs model (--ilp-model=edge clusters any size)", g.len(), MAX_NODES);
        return c;
    }
    let m = model(f, g);
    super::solve_checked(f, g, cfg, m.lp.clone(), "ilp (pairs)", None, |_| vec![], |_| None, |sol| {
        let mut groups = Groups::new(g.len());
        for (&(a, b), &v) in &m.x {
            if !sol.is_one(v) {
                groups.union(a.0 as usize, b.0 as usize);
            }
        }
        let orders: Vec<u32> = m.order.iter().map(|o| sol.get(*o).round() as u32).collect();
        let clusters = super::split_components(f, g, super::groups_of(&groups), &orders);
        let clusters = order_clusters(f, g, clusters)?;
        Some(Clustering { clusters, how: String::new(), orders })
    })
    .0
}
