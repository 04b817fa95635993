//! Traversal orders in the clustering ILP (docs/ilp.md, "Traversal
//! orders"): each node's possible orders, and one binary per node and
//! order, so that "these two agree on an order" is a row per order with no
//! big M.
//!
//! With one integer `o_a` per node and rows `−M·x ≤ o_a − read(b) ≤ M·x`
//! (M = gathers + 2), the relaxation sets every free order to a fraction
//! and pays `x = |Δo|/M`: fixing the orders at the optimum's raised the
//! bound of small random programs from 0.45 to 0.97 of the optimum. With
//! `w_a_k` (1 = node a runs in order k) the rows are
//! `|w_a_k − w_b_k'| ≤ x`, the strongest linear form of "equal or apart".

use afc_ir::graph::{DepGraph, EdgeKind};
use afc_ir::labelled::{Function, NodeId, VarId};
use afc_ir::lp::{Lp, LpVar};
use petgraph::visit::EdgeRef;

/// A node's order variables: `o_a` (its order, as before) and, where it
/// has a choice, one binary per possible order.
pub struct OrderVars {
    pub o: Vec<LpVar>,
    /// Each node's possible orders, increasing.
    pub domain: Vec<Vec<u32>>,
    /// `w_a_k` per possible order, for the nodes with more than one.
    ind: Vec<Vec<LpVar>>,
}

/// `[o = k]` (or `[read = k]`) as a linear expression: a sum of indicator
/// binaries plus a constant.
#[derive(Clone, Debug, Default)]
pub struct Is {
    pub terms: Vec<LpVar>,
    pub constant: f64,
}

/// Each node's possible traversal orders. 0 and 1 for any node with no
/// fixed order; a gather's label k ≥ 2 only for a node that may run at a
/// gather's indices (`Function::may_take_label`), whose output is not
/// forced into memory, and every edge out of which may carry label k: a
/// fusible edge, not fixed apart, that is gather k's source edge or goes
/// to a consumer (not a reverse) that may itself run at k. A node at a
/// label writes none of its arrays (they are not computed whole), so
/// every edge out of it is fused and read at that label
/// (`afc_ir::cluster::orders`): every legal clustering's orders lie in
/// these sets. `unfusable(a, b)` names the edges no legal clustering fuses.
pub fn domains(f: &Function, g: &DepGraph, unfusable: impl Fn(NodeId, NodeId) -> bool) -> Vec<Vec<u32>> {
    let n = g.len();
    let labelled = |a: NodeId| {
        let node = f.node(a);
        node.fixed_order().is_none() && f.may_take_label(a) && !node.outputs().iter().any(|v| g.forced_manifest.contains(v))
    };
    let mut labels: Vec<std::collections::BTreeSet<u32>> = vec![Default::default(); n];
    // Labels flow from a gather's source edge back through the producers
    // fused at the same label, each keeping those all its edges carry;
    // the graph is acyclic, so a pass per node in reverse topological
    // order settles them.
    let topo = petgraph::algo::toposort(&g.graph, None).unwrap_or_else(|_| afc_ir::ice::fail("cluster", "the dependency graph has a cycle", ""));
    for idx in topo.into_iter().rev() {
        let a = NodeId(idx.index() as u32);
        if !labelled(a) {
            continue;
        }
        let mut mine: Option<std::collections::BTreeSet<u32>> = None;
        for e in g.graph.edges(DepGraph::idx(a)) {
            let c = g.graph[e.target()];
            let through: std::collections::BTreeSet<u32> = match e.weight().kind {
                EdgeKind::Fusible { .. } if unfusable(a, c) => Default::default(),
                EdgeKind::Fusible { order } if order >= 2 => [order].into(),
                EdgeKind::Fusible { .. } if !f.node(c).flips_order() => labels[c.0 as usize].clone(),
                _ => Default::default(),
            };
            mine = Some(match mine {
                None => through,
                Some(m) => m.intersection(&through).copied().collect(),
            });
        }
        labels[a.0 as usize] = mine.unwrap_or_default();
    }
    g.nodes()
        .map(|a| match f.node(a).fixed_order() {
            Some(o) => vec![o as u32],
            None => [0, 1].into_iter().chain(labels[a.0 as usize].iter().copied()).collect(),
        })
        .collect()
}

impl OrderVars {
    /// `o_a` for every node, continuous (the indicators make it whole), and
    /// `w_a_k` binaries with `Σ_k w_a_k = 1` and `o_a = Σ_k k·w_a_k`
    /// (rows `order_one_a`, `order_of_a`) where a node has a choice.
    pub fn new(lp: &mut Lp, domain: Vec<Vec<u32>>) -> OrderVars {
        let mut o = vec![];
        let mut ind = vec![];
        for (a, dom) in domain.iter().enumerate() {
            let (lo, hi) = (dom[0] as f64, dom[dom.len() - 1] as f64);
            let oa = lp.var(format!("o_{}", a), lo, hi, dom.len() == 1);
            o.push(oa);
            if dom.len() == 1 {
                ind.push(vec![]);
                continue;
            }
            let w: Vec<LpVar> = dom.iter().map(|k| lp.binary(format!("w_{}_{}", a, k))).collect();
            lp.row(format!("order_one_{}", a), w.iter().map(|x| (*x, 1.0)).collect(), 1.0, 1.0);
            let mut of = vec![(oa, 1.0)];
            of.extend(dom.iter().zip(&w).filter(|(k, _)| **k != 0).map(|(k, x)| (*x, -(*k as f64))));
            lp.row(format!("order_of_{}", a), of, 0.0, 0.0);
            ind.push(w);
        }
        OrderVars { o, domain, ind }
    }

    /// Node `a`'s variables: `o_a` and its indicators.
    pub fn of(&self, a: usize) -> impl Iterator<Item = LpVar> + '_ {
        std::iter::once(self.o[a]).chain(self.ind[a].iter().copied())
    }

    /// Node `a`'s order indicators (none where it has one order).
    pub fn indicators(&self, a: usize) -> &[LpVar] {
        &self.ind[a]
    }

    /// `[o_a = k]`.
    pub fn is(&self, a: NodeId, k: u32) -> Is {
        let (dom, ind) = (&self.domain[a.0 as usize], &self.ind[a.0 as usize]);
        match dom.iter().position(|d| *d == k) {
            None => Is::default(),
            Some(_) if dom.len() == 1 => Is { terms: vec![], constant: 1.0 },
            Some(i) => Is { terms: vec![ind[i]], constant: 0.0 },
        }
    }

    /// `[o_a ≥ 2]`: node a runs at some gather's indices.
    pub fn at_label(&self, a: NodeId) -> Is {
        let mut e = Is::default();
        for k in self.domain[a.0 as usize].iter().filter(|k| **k >= 2) {
            let t = self.is(a, *k);
            e.terms.extend(t.terms);
            e.constant += t.constant;
        }
        e
    }

    /// The orders in which `c` may read `x`: a gather reads its source at
    /// its label, a reverse opposite to its own order, the rest in theirs.
    pub fn reads(&self, f: &Function, g: &DepGraph, x: VarId, c: NodeId) -> Vec<u32> {
        if let Some(l) = g.gathered_order(x, c) {
            vec![l]
        } else if f.node(c).flips_order() {
            // A reverse takes no label (it is not index-computable), so
            // these are all the orders it may read in (`agree` relies on it).
            debug_assert!(self.domain[c.0 as usize].iter().all(|k| *k <= 1));
            self.domain[c.0 as usize].iter().rev().filter(|k| **k <= 1).map(|k| 1 - k).collect()
        } else {
            self.domain[c.0 as usize].clone()
        }
    }

    /// `[c reads x in order k]`.
    pub fn reads_in(&self, f: &Function, g: &DepGraph, x: VarId, c: NodeId, k: u32) -> Is {
        if let Some(l) = g.gathered_order(x, c) {
            Is { terms: vec![], constant: if l == k { 1.0 } else { 0.0 } }
        } else if f.node(c).flips_order() {
            if k <= 1 {
                self.is(c, 1 - k)
            } else {
                Is::default()
            }
        } else {
            self.is(c, k)
        }
    }

    /// The values a clustering's orders give the variables.
    pub fn assign(&self, v: &mut [f64], orders: &[u32]) {
        for (a, o) in orders.iter().enumerate() {
            v[self.o[a].0] = *o as f64;
            for (k, w) in self.domain[a].iter().zip(&self.ind[a]) {
                v[w.0] = if k == o { 1.0 } else { 0.0 };
            }
        }
    }
}

/// Rows `|A_k − B_k| ≤ y` for every order k either side may take, where
/// `A_k`, `B_k` are `[left = k]`, `[right = k]`: with `y = 0` the two
/// agree. Returns false, with no rows, when they share no order (then
/// `y` is 1 in every legal clustering). `left` and `right` are all the
/// orders each side may take, so each side's `[· = k]` over them add up to
/// 1 (its node's indicators, `order_one`, or a constant): where the two
/// sides take two orders in all, the row for the second is the first's
/// negated, and only the first is stated. Half of a row that the
/// indicators' bounds already meet is left out: `A − B ≤ y` when B is the
/// constant 1 and A at most 1, or A the constant 0 and B at least 0
/// (`B − A ≤ y` likewise).
pub fn agree(lp: &mut Lp, name: &str, y: LpVar, left: &[u32], right: &[u32], side: impl Fn(bool, u32) -> Is) -> bool {
    if !left.iter().any(|k| right.contains(k)) {
        return false;
    }
    let mut ks: Vec<u32> = left.iter().chain(right).copied().collect();
    ks.sort_unstable();
    ks.dedup();
    if ks.len() == 2 {
        ks.truncate(1);
    }
    for k in ks {
        let (a, b) = (side(true, k), side(false, k));
        if a.terms.is_empty() && b.terms.is_empty() {
            continue; // both fixed: they agree on k (or share no order)
        }
        // A − B ≤ y and B − A ≤ y, constants to the right. A side's terms
        // are one node's indicators, at most 1 together.
        let mut diff: Vec<(LpVar, f64)> = a.terms.iter().map(|t| (*t, 1.0)).collect();
        diff.extend(b.terms.iter().map(|t| (*t, -1.0)));
        let c = a.constant - b.constant;
        let most = |i: &Is| if i.terms.is_empty() { 0.0 } else { 1.0 };
        if most(&a) > -c {
            let mut lo = diff.clone();
            lo.push((y, -1.0));
            lp.row(format!("{}_{}_lo", name, k), lo, f64::NEG_INFINITY, -c);
        }
        if most(&b) > c {
            let mut hi: Vec<(LpVar, f64)> = diff.iter().map(|(t, w)| (*t, -w)).collect();
            hi.push((y, -1.0));
            lp.row(format!("{}_{}_hi", name, k), hi, f64::NEG_INFINITY, c);
        }
    }
    true
}

/// The links whose fusion ties their ends' orders 0 and 1 (`Parity`),
/// with a tie to `ground` (node number `g.len()`) for each node of a
/// fixed order. Within a cluster, nodes joined by fused links of this
/// kind either all run at one gather's label (no reverse and no node of a
/// fixed order among them: a reverse reads at no label, and a link
/// carries a label unchanged) or all in orders 0 and 1, each link's ends
/// equal or opposite as it says; so along a closed walk of such links
/// whose parities add up odd, one link is apart (`separate::parity_cuts`).
/// A read at a gather's label ties nothing: the gather's source edge, or
/// a pair of readers one of which gathers the array, is left out.
pub fn parity_links(
    f: &Function,
    g: &DepGraph,
    lp: &Lp,
    orders: &OrderVars,
    fused_edges: &indexmap::IndexMap<(NodeId, NodeId), LpVar>,
    fused_siblings: &indexmap::IndexMap<(NodeId, NodeId), LpVar>,
) -> Vec<super::ilp::Parity> {
    use super::ilp::Parity;
    let ground = g.len();
    let free = |x: &LpVar| lp.vars[x.0].lo == 0.0;
    let mut out = vec![];
    for (a, dom) in orders.domain.iter().enumerate() {
        if let [k @ (0 | 1)] = dom.as_slice() {
            out.push(Parity { a, b: ground, link: None, odd: *k == 1 });
        }
    }
    for ((a, b), x) in fused_edges.iter().filter(|(_, x)| free(x)) {
        let e = g.edge(*a, *b).unwrap();
        if e.vars.iter().any(|v| g.gathered_order(*v, *b).is_some()) {
            continue;
        }
        out.push(Parity { a: a.0 as usize, b: b.0 as usize, link: Some(*x), odd: f.node(*b).flips_order() });
    }
    let sibs = g.siblings();
    for ((a, b), s) in fused_siblings.iter().filter(|(_, s)| free(s)) {
        let arr = sibs[&(*a, *b)][0];
        if g.gathered_order(arr, *a).is_some() || g.gathered_order(arr, *b).is_some() {
            continue;
        }
        out.push(Parity { a: a.0 as usize, b: b.0 as usize, link: Some(*s), odd: f.node(*a).flips_order() != f.node(*b).flips_order() });
    }
    out
}

/// A solution's orders with each cluster that may run either way turned
/// to run mostly left to right. The two directions of a cluster with no
/// node of a fixed order cost the same (every rule between its nodes is
/// "the same order", "the opposite order" or a gather's label, which
/// turning every 0 into 1 and back keeps, and clusters do not constrain
/// each other's orders), so the solver may return either; left to right
/// is what a reader of the loop IR expects, and what the model's integer
/// orders gave before the indicators made the two symmetric.
pub fn forward(f: &Function, clusters: &[Vec<NodeId>], mut orders: Vec<u32>) -> Vec<u32> {
    for members in clusters {
        if members.iter().any(|n| f.node(*n).fixed_order().is_some()) {
            continue;
        }
        let count = |o: u32| members.iter().filter(|n| orders[n.0 as usize] == o).count();
        let (zeros, ones) = (count(0), count(1));
        let first = members.iter().map(|n| orders[n.0 as usize]).find(|o| *o <= 1);
        if ones > zeros || (ones == zeros && first == Some(1)) {
            for n in members {
                let o = &mut orders[n.0 as usize];
                if *o <= 1 {
                    *o = 1 - *o;
                }
            }
        }
    }
    orders
}
