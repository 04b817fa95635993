//! Root cuts (docs/ilp.md, "Root cuts"): rows every legal clustering
//! satisfies that the linear relaxation's optimum breaks, found by
//! shortest chains of links weighted by the relaxation's values, added
//! before the search in a few rounds. The model states the same rules
//! through positions, whose big M the relaxation satisfies with fractions;
//! these rows state them without one, for the chains the relaxation
//! actually leans on.

use super::ilp::Model;
use afc_ir::graph::{DepGraph, Reach};
use afc_ir::labelled::NodeId;
use afc_ir::lp::{LpVar, NoPoint, Row, Solver};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

/// Rounds of separation at most: each solves the relaxation once.
pub const ROUNDS: usize = 8;
/// Graphs of more nodes get no root cuts (shortest chains from every node:
/// n² distances).
pub const MAX_NODES: usize = 1000;
/// Models of more non-zeros get no root cuts (some 250 combinators).
pub const MAX_NNZ: usize = 16_800;
/// A row is added when the relaxation breaks it by more than this.
const EPS: f64 = 1e-4;
/// Pairs of ends tried per edge for convexity rows before only those with
/// one end at the edge are.
const PAIRS: usize = 4096;

/// Adds root cuts to the model's program: up to `ROUNDS` rounds of
/// "solve the relaxation, add the rows it breaks", each solve starting
/// from the last one's basis where the solver can. Returns the last
/// relaxation's optimum (None if none was solved): a lower bound on the
/// model's, and the warm start's guide; and whether the time limit cut
/// the rounds short (then the model and the guide depend on the machine).
/// A model past `MAX_NODES` or `MAX_NNZ` is not relaxed at all
/// (`cuts_apply`). Deterministic otherwise: the solver runs on one
/// thread and ties among chains are broken by node number.
pub fn strengthen(g: &DepGraph, reach: &Reach, m: &mut Model, solver: &dyn Solver, seconds: f64) -> (Option<Vec<f64>>, bool) {
    if !cuts_apply(g, &m.lp) {
        return (None, false);
    }
    let clock = std::time::Instant::now();
    let mut relaxation = solver.relaxation(&m.lp);
    let left = |clock: &std::time::Instant| seconds - clock.elapsed().as_secs_f64();
    let mut point = match relaxation.solve(left(&clock)) {
        Ok(p) => p,
        Err(e) => return (None, e == NoPoint::TimeLimit),
    };
    let mut seen = HashSet::new();
    for _ in 0..ROUNDS {
        let mut fresh = vec![];
        for row in cuts(g, reach, m, &point) {
            let mut key: Vec<(usize, i64)> = row.terms.iter().map(|(v, c)| (v.0, *c as i64)).collect();
            key.sort_unstable();
            if seen.insert((key, row.lo.to_bits())) {
                let name = format!("{}_{}", row.name, m.lp.rows.len() + fresh.len());
                fresh.push(Row { name, ..row });
            }
        }
        if fresh.is_empty() {
            break;
        }
        if left(&clock) <= 0.0 {
            return (Some(point), true);
        }
        relaxation.add_rows(&fresh);
        m.lp.rows.extend(fresh);
        match relaxation.solve(left(&clock)) {
            Ok(p) => point = p,
            Err(e) => return (Some(point), e == NoPoint::TimeLimit),
        }
    }
    (Some(point), false)
}

/// Whether a model gets root cuts. Past `MAX_NODES` the distances cost
/// n²; past `MAX_NNZ` a round costs as much as the first solve (0.5 s at
/// 400 combinators) for a bound and a rounding no better, and the first
/// solve itself is the slowest step of a clustering (2 s at 2,000
/// combinators) that another relaxation guides better (`ilp::warm_start`).
pub fn cuts_apply(g: &DepGraph, lp: &afc_ir::lp::Lp) -> bool {
    g.len() <= MAX_NODES && super::nnz(lp) <= MAX_NNZ
}

/// The rows a point of the relaxation breaks, each held by every legal
/// clustering (its values as `Model::assignment` gives them). A link is a
/// fusible edge or a sibling pair that may share (its `x` or `s`); a
/// clustering's link is 1 when its ends are in different clusters (or, for
/// a pair, read in different orders), so every chain of links between two
/// nodes in different clusters has a link at 1. With `d(a, b)` the
/// lightest chain between a and b under the point's values:
/// - **cycle** (`cut_cycle`): `x_uv ≤ Σ chain(u, v)` for a fusible edge
///   u → v: if u and v are apart, so is some link of any chain joining
///   them (an edge fixed apart has `x = 1`: `Σ chain ≥ 1`);
/// - **separation** (`cut_chain`): `Σ chain(a, b) ≥ 1` for a and b joined
///   by a path through a fusion-preventing edge, never in one cluster;
/// - **convexity** (`cut_convex`): `x_uv ≤ Σ chain(a, b)` for an edge u → v
///   on a path from a to b: a cluster holding a and b holds every node on
///   a path between them, so the edge is inside it and fused;
/// - **parity** (`cut_parity`): `Σ walk ≥ 1` over a closed walk of links
///   that tie orders, odd in all (`parity_cuts`);
/// - **order** (`cut_order`): `x_ab ≤ Σ walk` over a walk from b back to
///   a that may also follow the graph's edges forward (`order_cuts`).
pub fn cuts(g: &DepGraph, reach: &Reach, m: &Model, v: &[f64]) -> Vec<Row> {
    let n = g.len();
    let free = |x: LpVar| m.lp.vars[x.0].lo == 0.0;
    let mut adj: Vec<Vec<(usize, Option<LpVar>)>> = vec![vec![]; n];
    for ((a, b), x) in m.fused_edges.iter().chain(m.fused_siblings.iter()) {
        if free(*x) {
            adj[a.0 as usize].push((b.0 as usize, Some(*x)));
            adj[b.0 as usize].push((a.0 as usize, Some(*x)));
        }
    }
    let chains: Vec<Lightest> = (0..n).map(|a| Lightest::from(a, &adj, v)).collect();
    let mut ancestors = vec![fixedbitset::FixedBitSet::with_capacity(n); n];
    for (a, below) in reach.any.iter().enumerate() {
        for b in below.ones() {
            ancestors[b].insert(a);
        }
    }
    let mut rows = vec![];
    // The chain's links as `+1` terms.
    let chain = |a: usize, b: usize| -> Vec<(LpVar, f64)> { chains[a].links(b).into_iter().map(|x| (x, 1.0)).collect() };
    for (a, from) in chains.iter().enumerate() {
        for b in reach.preventing[a].ones() {
            // A separated node inside the chain has a lighter row over a
            // prefix of its links, which implies this one.
            if from.dist[b] < 1.0 - EPS && !from.passes(b, |m| reach.preventing[a].contains(m)) {
                rows.push(Row { name: format!("cut_chain_{}_{}", a, b), terms: chain(a, b), lo: 1.0, hi: f64::INFINITY });
            }
        }
    }
    // One row implies those whose links hold its links (from other starts).
    let sets: Vec<Vec<LpVar>> = rows
        .iter()
        .map(|r| {
            let mut set: Vec<LpVar> = r.terms.iter().map(|t| t.0).collect();
            set.sort();
            set
        })
        .collect();
    let keep = super::ilp::covering_rows(sets.iter().map(|s| s.as_slice()).collect());
    let mut keep = keep.into_iter();
    rows.retain(|_| keep.next().unwrap_or(true));
    for ((u, w), x) in &m.fused_edges {
        let (u, w) = (u.0 as usize, w.0 as usize);
        let fixed = !free(*x);
        let value = if fixed { 1.0 } else { v[x.0] };
        if value < EPS {
            continue;
        }
        // The lightest chain between a node reaching u (or u) and one w
        // reaches (or w), not separated already (those have cut_chain).
        // Every pair where there are few; past PAIRS, pairs with one end
        // at the edge (the work stays near linear on long programs).
        let mut best: Option<(f64, usize, usize)> = None;
        let (before, after) = (&ancestors[u], &reach.any[w]);
        let all = (before.count_ones(..) + 1) * (after.count_ones(..) + 1) <= PAIRS;
        let pairs = std::iter::once(u).chain(before.ones()).flat_map(|a| {
            let ends: Vec<usize> = if all || a == u { std::iter::once(w).chain(after.ones()).collect() } else { vec![w] };
            ends.into_iter().map(move |b| (a, b))
        });
        for (a, b) in pairs {
            if (a != u || b != w) && reach.preventing[a].contains(b) {
                continue;
            }
            {
                let d = chains[a].dist[b];
                if best.is_none_or(|(bd, _, _)| d < bd) {
                    best = Some((d, a, b));
                }
            }
        }
        let Some((d, a, b)) = best else { continue };
        if d >= value - EPS {
            continue;
        }
        let (name, mut terms, lo) = if (a, b) == (u, w) { ("cut_cycle", chain(a, b), 0.0) } else { ("cut_convex", chain(a, b), 0.0) };
        let lo = if fixed { 1.0 } else { lo };
        if !fixed {
            terms.push((*x, -1.0));
        }
        rows.push(Row { name: format!("{}_{}_{}", name, u, w), terms, lo, hi: f64::INFINITY });
    }
    rows.extend(parity_cuts(n, &m.parity, v));
    rows.extend(order_cuts(g, m, v));
    rows
}

/// Order rows (`cut_order`): positions never decrease along an edge, and
/// go strictly forward along a fusion-preventing edge or a fusible edge
/// left apart; fused links keep them equal. So for a strict edge a → b,
/// a walk from b back to a of graph edges taken forward and links taken
/// either way has a link apart whenever the edge is: `x_ab ≤ Σ walk`
/// (`1 ≤ Σ walk` for an edge that is never fused). The lightest such walk
/// weighs its edges nothing. It holds the cycle, convexity and separation
/// rows' chains as special cases, and more: a chain from b's side back to
/// a node that reaches a.
fn order_cuts(g: &DepGraph, m: &Model, v: &[f64]) -> Vec<Row> {
    let n = g.len();
    let free = |x: LpVar| m.lp.vars[x.0].lo == 0.0;
    let mut adj: Vec<Vec<(usize, Option<LpVar>)>> = vec![vec![]; n];
    for (a, b, _) in g.edges() {
        adj[a.0 as usize].push((b.0 as usize, None));
    }
    for ((a, b), x) in m.fused_edges.iter().chain(m.fused_siblings.iter()) {
        // A link fixed fused (rule 11) weighs nothing and is in no row.
        let link = if m.lp.vars[x.0].hi == 0.0 { None } else { Some(*x) };
        if free(*x) {
            adj[a.0 as usize].push((b.0 as usize, link));
            adj[b.0 as usize].push((a.0 as usize, link));
        }
    }
    let mut walks: Vec<Option<Lightest>> = (0..n).map(|_| None).collect();
    let mut rows = vec![];
    let mut seen: HashSet<Vec<LpVar>> = HashSet::new();
    for (a, b, _) in g.edges() {
        let (a, b) = (a.0 as usize, b.0 as usize);
        let x = m.fused_edges.get(&(NodeId(a as u32), NodeId(b as u32))).copied().filter(|x| free(*x));
        let value = x.map_or(1.0, |x| v[x.0]);
        if value < EPS {
            continue;
        }
        let walk = walks[b].get_or_insert_with(|| Lightest::from(b, &adj, v));
        if walk.dist[a] >= value - EPS {
            continue;
        }
        let mut set = walk.links(a);
        set.sort_unstable();
        if set.is_empty() || !seen.insert(set.clone()) {
            continue;
        }
        let mut terms: Vec<(LpVar, f64)> = set.into_iter().map(|l| (l, 1.0)).collect();
        let lo = match x {
            Some(x) => {
                terms.push((x, -1.0));
                0.0
            }
            None => 1.0,
        };
        rows.push(Row { name: format!("cut_order_{}_{}", a, b), terms, lo, hi: f64::INFINITY });
    }
    rows
}

/// Parity rows (`cut_parity`): `Σ links ≥ 1` over a closed walk of
/// order-tying links (`Model::parity`) whose parities add up odd — fused
/// all, they would put a node in order 0 and 1 at once. The lightest such
/// walk through each node is the lightest path from it to itself in the
/// graph's double cover (each node twice, once per parity so far;
/// `Lightest`, as the chain rows'). With orders at ½ every row that
/// compares two orders holds with its link at 0, so the relaxation fuses
/// such a walk for free: a map, its reverse and a map reading both, say.
/// (A walk through a node of fixed order is implied by the order rows
/// unless a node on it may run at a label; the ties to the ground cost
/// nothing to keep.)
fn parity_cuts(n: usize, links: &[super::ilp::Parity], v: &[f64]) -> Vec<Row> {
    let mut adj: Vec<Vec<(usize, Option<LpVar>)>> = vec![vec![]; 2 * (n + 1)];
    for l in links {
        for bit in 0..2 {
            let flip = bit ^ l.odd as usize;
            adj[2 * l.a + bit].push((2 * l.b + flip, l.link));
            adj[2 * l.b + bit].push((2 * l.a + flip, l.link));
        }
    }
    let mut rows = vec![];
    let mut seen: HashSet<Vec<LpVar>> = HashSet::new();
    for r in (0..=n).filter(|r| !adj[2 * r].is_empty()) {
        let walk = Lightest::from(2 * r, &adj, v);
        if walk.dist[2 * r + 1] >= 1.0 - EPS {
            continue;
        }
        let mut set = walk.links(2 * r + 1);
        set.sort_unstable();
        set.dedup();
        // An odd walk of links always fused would make the model
        // infeasible, which it is not: such a walk has no row.
        if set.is_empty() || !seen.insert(set.clone()) {
            continue;
        }
        let terms = set.iter().map(|x| (*x, 1.0)).collect();
        rows.push(Row { name: format!("cut_parity_{}", r), terms, lo: 1.0, hi: f64::INFINITY });
    }
    rows
}

/// Lightest chains of links from one node (Dijkstra; ties by node
/// number). A link without a variable (a parity walk's tie to the
/// ground) weighs nothing and is in no row. Only chains lighter than 1
/// are followed: every row asks for a chain lighter than a link's value,
/// at most 1, so a node no lighter chain reaches is left at infinity
/// (which prunes the search at the links the point keeps apart).
struct Lightest {
    dist: Vec<f64>,
    prev: Vec<Option<(usize, Option<LpVar>)>>,
}

impl Lightest {
    fn from(a: usize, adj: &[Vec<(usize, Option<LpVar>)>], v: &[f64]) -> Lightest {
        let n = adj.len();
        let mut dist = vec![f64::INFINITY; n];
        let mut prev = vec![None; n];
        let mut done = vec![false; n];
        dist[a] = 0.0;
        // Distances as ordered integers (values are in [0, 1]; 1e-9 steps).
        let key = |d: f64| (d * 1e9).round() as u64;
        let mut heap = BinaryHeap::from([Reverse((0u64, a))]);
        while let Some(Reverse((_, u))) = heap.pop() {
            if done[u] {
                continue;
            }
            done[u] = true;
            for &(w, x) in &adj[u] {
                let d = dist[u] + x.map_or(0.0, |x| v[x.0].max(0.0));
                if d < dist[w] - 1e-12 && d < 1.0 {
                    dist[w] = d;
                    prev[w] = Some((u, x));
                    heap.push(Reverse((key(d), w)));
                }
            }
        }
        Lightest { dist, prev }
    }

    /// Whether the lightest chain to `b` passes through a node (not its
    /// ends) for which `pred` holds.
    fn passes(&self, b: usize, pred: impl Fn(usize) -> bool) -> bool {
        let mut at = b;
        while let Some((u, _)) = self.prev[at] {
            if self.prev[u].is_some() && pred(u) {
                return true;
            }
            at = u;
        }
        false
    }

    /// The links of the lightest chain to `b`.
    fn links(&self, b: usize) -> Vec<LpVar> {
        let mut out = vec![];
        let mut at = b;
        while let Some((u, x)) = self.prev[at] {
            out.extend(x);
            at = u;
        }
        out
    }
}
