//! The edge-local clustering ILP (papers/002 §4.1 with the exact shared-read
//! cost of DESIGN.md decision 6); docs/ilp.md explains every constraint.
//!
//! Variables: `pi_N` (position of node N in the cluster order), `x_A_B`
//! (1 = the fusible edge A→B is not fused), `s_A_B` (1 = siblings A and B
//! do not share their reads), `m_V` (1 = array V is written to memory),
//! `r_V_K` (1 = the K-th reader of array V reads it from memory anew).

use super::cost::{may_share, CostModel, Weights};
use super::orders::{self, OrderVars};
use super::{order_clusters, Groups};
use afc_ir::cluster::{Clustering, Lists, Marks};
use afc_ir::graph::{DepGraph, Reach, SIBLING_WINDOW};
use afc_ir::labelled::{Function, NodeId, VarId};
use afc_ir::lp::{Lp, LpVar, Row};
use indexmap::IndexMap;

/// The model and how to read a clustering back from its solution.
pub struct Model {
    pub lp: Lp,
    /// `pi_N`: the position of node N's cluster in its part of the graph,
    /// constrained only for the nodes of `placed` (rows added lazily).
    pub pi: Vec<LpVar>,
    /// `pi` bound: the number of nodes of each node's part.
    span: Vec<f64>,
    /// Nodes whose position rows the model has (docs/ilp.md, "Lazy positions").
    placed: std::cell::RefCell<fixedbitset::FixedBitSet>,
    pub fused_edges: IndexMap<(NodeId, NodeId), LpVar>,
    pub fused_siblings: IndexMap<(NodeId, NodeId), LpVar>,
    pub manifest: IndexMap<VarId, LpVar>,
    /// `o_N`, the traversal order of node N, and its indicators.
    pub orders: OrderVars,
    /// Fusible edges whose ends share no traversal order (fixed apart).
    pub order_apart: indexmap::IndexSet<(NodeId, NodeId)>,
    /// The links that tie their ends' orders 0 and 1 together when they
    /// are fused (docs/ilp.md, "Root cuts", parity), and each one's
    /// parity: 1 where a fused link puts its ends in opposite orders.
    pub parity: Vec<Parity>,
    /// Fusible edges fixed fused: fusing them is always at least as good
    /// (dominance.rs; docs/ilp.md, rule 11).
    pub dominated: Vec<(NodeId, NodeId)>,
    /// Per part of the graph whose orders all mirror (no node of a fixed
    /// order), its first node, which the model keeps out of order 1
    /// (docs/ilp.md, rule 12); `assignment` mirrors a clustering that runs
    /// it in order 1.
    pub mirrored: Vec<NodeId>,
    /// Every `r_V_K` and what it is made of.
    pub reads: Vec<Read>,
    /// Separation rows left out as implied by others (docs/ilp.md, rule 8).
    pub implied: usize,
    /// Non-zeros without the separation rows: the size that decides
    /// whether the relaxation is solved (`RELAX_NNZ`).
    pub base: usize,
    /// `base` is within `RELAX_NNZ`: every part has its separation rows.
    pub relax: bool,
    /// The model's variables, counted apart from `lp`: `solve` moves the
    /// program out to the solver (copying it cost 30 ms at 10,000
    /// combinators, and as long again to free) and cuts and repairs go on.
    vars: usize,
    /// The graph's reachability, computed once for the model and what
    /// follows it (at 10,000 combinators a tenth of a second each time).
    pub reach: std::sync::Arc<Reach>,
}

/// A link between two nodes whose orders it ties when fused: an edge
/// into a consumer that reads in its own order (`odd`: a reverse, which
/// reads in the opposite one), or two readers sharing a read in their
/// own orders (`odd`: one of them a reverse). `a` or `b` may be
/// `ground`, a node standing for both fixed orders: a node of fixed
/// order k is tied to it by a link always fused, odd for k = 1.
#[derive(Clone, Copy, Debug)]
pub struct Parity {
    pub a: usize,
    pub b: usize,
    /// None: always fused (a tie to the ground).
    pub link: Option<LpVar>,
    pub odd: bool,
}

/// A later reader's `r_V_K` (docs/ilp.md, "Shared reads").
pub struct Read {
    pub r: LpVar,
    /// The reader's edge from V's producer (None: it always reads anew).
    pub f_k: Option<LpVar>,
    /// `s` with the earlier readers it may share with, in the form
    /// `r ≥ f_k − Σ (1 − s)` (readers past the sibling window).
    pub apart: Vec<LpVar>,
    /// Or, in the representative form, `y` per earlier reader.
    pub reps: Vec<Rep>,
}

/// `y_V_J_K`: reader K shares the read that reader J, the first of their
/// group, pays.
pub struct Rep {
    pub y: LpVar,
    /// `s_JK`.
    pub s: LpVar,
    /// J's `s` with the readers before it: J is the first of its group
    /// when it shares with none of them.
    pub earlier: Vec<LpVar>,
    /// J's edge from the producer (None: J reads anew if it reads).
    pub reads: Option<LpVar>,
    /// J is the first reader of a parameter: it always reads.
    pub always: bool,
}

impl Model {
    /// The values a clustering gives the model's variables: the cost of any
    /// clustering, optimal or not, under the same objective (used by
    /// exhaustive tests and to explain a choice).
    pub fn assignment(&self, f: &Function, g: &DepGraph, c: &Clustering) -> Vec<f64> {
        let of = c.cluster_of();
        let mut orders = afc_ir::cluster::orders(f, g, c).unwrap_or_else(|_| vec![0; g.len()]);
        let sibs = g.siblings();
        let mut v = vec![0.0; self.vars];
        // A cluster's position: how many clusters of its part of the graph
        // come before it (a cluster lies in one part: it is connected).
        let (part, _) = parts_of(g);
        // The mirror image of a part whose first node runs in order 1
        // (rule 12): the same clustering, at the same cost.
        let mut flip = vec![false; g.len()];
        for a in &self.mirrored {
            flip[part[a.0 as usize]] = orders[a.0 as usize] == 1;
        }
        for (n, o) in orders.iter_mut().enumerate() {
            if flip[part[n]] && *o <= 1 {
                *o = 1 - *o;
            }
        }
        let mut seen: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
        let mut position = vec![0.0; c.clusters.len()];
        for (i, members) in c.clusters.iter().enumerate() {
            let k = seen.entry(part[members[0].0 as usize]).or_default();
            position[i] = *k as f64;
            *k += 1;
        }
        for n in g.nodes() {
            v[self.pi[n.0 as usize].0] = position[of[&n]];
        }
        self.orders.assign(&mut v, &orders);
        let apart = |a: NodeId, b: NodeId| if of[&a] == of[&b] { 0.0 } else { 1.0 };
        for ((a, b), x) in &self.fused_edges {
            v[x.0] = apart(*a, *b);
        }
        // Siblings share a read only in one cluster and in one order.
        for ((a, b), s) in &self.fused_siblings {
            let x = sibs[&(*a, *b)][0];
            let same = afc_ir::cluster::read_order(f, g, &orders, x, *a) == afc_ir::cluster::read_order(f, g, &orders, x, *b);
            v[s.0] = if of[a] == of[b] && same { 0.0 } else { 1.0 };
        }
        let manifest = c.manifest(f, g);
        for (arr, m) in &self.manifest {
            v[m.0] = if manifest.contains(arr) { 1.0 } else { 0.0 };
        }
        for read in &self.reads {
            let fv = read.f_k.map(|x| v[x.0]).unwrap_or(1.0);
            let mut shared: f64 = read.apart.iter().map(|s| 1.0 - v[s.0]).sum();
            for p in &read.reps {
                // The first of the group, which reads from memory.
                let first = p.earlier.iter().all(|s| v[s.0] == 1.0);
                let reads = p.always || p.reads.is_none_or(|x| v[x.0] == 1.0);
                v[p.y.0] = if v[p.s.0] == 0.0 && first && reads { 1.0 } else { 0.0 };
                shared += v[p.y.0];
            }
            v[read.r.0] = (fv - shared).max(0.0);
        }
        v
    }

    /// The clustering a point of the model stands for: the components of
    /// its fused links, in an order that runs them (None: they depend on
    /// each other cyclically), each node in its order `o`.
    pub fn read(&self, f: &Function, g: &DepGraph, values: &[f64]) -> Option<Clustering> {
        let mut groups = Groups::new(g.len());
        for ((a, b), x) in self.fused_edges.iter().chain(self.fused_siblings.iter()) {
            if values[x.0] <= 0.5 {
                groups.union(a.0 as usize, b.0 as usize);
            }
        }
        let clusters = order_clusters(f, g, super::groups_of(&groups))?;
        let orders = orders::forward(f, &clusters, self.orders.o.iter().map(|o| values[o.0].round() as u32).collect());
        Some(Clustering { clusters, how: String::new(), orders })
    }

    /// The nodes each link and order indicator is about, for the windows
    /// (`super::windows`).
    pub fn locality(&self) -> super::windows::Locality {
        let mut near = super::windows::Locality::new(self.lp.vars.len());
        for ((a, b), x) in self.fused_edges.iter().chain(self.fused_siblings.iter()) {
            near.set(*x, a.0, b.0);
        }
        for a in 0..self.orders.o.len() {
            for w in self.orders.indicators(a) {
                near.set(*w, a as u32, a as u32);
            }
            near.set_position(self.pi[a], a as u32);
        }
        near
    }

    /// The objective of the arrays cost model over this model's variables:
    /// one per array written. Its relaxation guides the rounding of a
    /// model too large for root cuts (`warm_start`).
    pub fn arrays_written(&self) -> Vec<(LpVar, f64)> {
        self.manifest.values().map(|m| (*m, 1.0)).collect()
    }

    /// The lazy rows a solution violates (docs/ilp.md, "Lazy positions"): the
    /// model leaves out that clusters are convex and run in an acyclic
    /// order; a solution's clusters (the components of its fused links)
    /// that break it get the rows that cut it off, and every legal
    /// clustering satisfies them. Empty when the clustering is legal.
    pub fn cuts(&self, g: &DepGraph, reach: &Reach, v: &[f64]) -> Vec<Row> {
        let n = g.len();
        let fused = |x: LpVar| v[x.0] < 0.5;
        let mut adj: Vec<Vec<(usize, LpVar)>> = vec![vec![]; n];
        let mut groups = super::Groups::new(n);
        for ((a, b), x) in self.fused_edges.iter().chain(self.fused_siblings.iter()) {
            if fused(*x) {
                let (a, b) = (a.0 as usize, b.0 as usize);
                adj[a].push((b, *x));
                adj[b].push((a, *x));
                groups.union(a, b);
            }
        }
        let comp: Vec<usize> = (0..n).map(|i| groups.find(i)).collect();
        let mut members: IndexMap<usize, Vec<usize>> = IndexMap::new();
        for (i, c) in comp.iter().enumerate() {
            members.entry(*c).or_default().push(i);
        }
        let chains = Chains::new(&adj);
        let mut rows = vec![];
        let mut place = vec![];
        let mut seen = std::collections::HashSet::new();
        let mut cut = |rows: &mut Vec<Row>, name: String, terms: Vec<(LpVar, f64)>, lo: f64, hi: f64| {
            let mut key: Vec<(usize, i64)> = terms.iter().map(|(x, c)| (x.0, *c as i64)).collect();
            key.sort();
            if seen.insert((key, lo.to_bits(), hi.to_bits())) {
                rows.push(merged(name, terms, lo, hi));
            }
        };
        let all_on_path = |a: usize, b: usize| -> Vec<LpVar> {
            let (a, b) = (NodeId(a as u32), NodeId(b as u32));
            self.fused_edges.iter().filter(|((u, w), _)| reach.between(a, *u, b) && reach.between(a, *w, b)).map(|(_, x)| *x).collect()
        };
        for nodes in members.values().filter(|m| m.len() > 1) {
            // Separation: a pair a path through a fusion-preventing edge
            // joins is never in one cluster; some link of the chain that
            // joins them here is apart.
            for (i, &a) in nodes.iter().enumerate() {
                for &b in &nodes[i + 1..] {
                    let (na, nb) = (NodeId(a as u32), NodeId(b as u32));
                    if reach.preventing_path(na, nb) || reach.preventing_path(nb, na) {
                        let terms = chains.between(a, b).into_iter().map(|x| (x, 1.0)).collect();
                        cut(&mut rows, format!("lazy_chain_{}_{}", a, b), terms, 1.0, f64::INFINITY);
                    }
                }
            }
            // Convexity: a node on a path between two members joins them,
            // and so does every edge on such a path (an edge inside a
            // cluster is fused): x_e ≤ Σ chain(a, b). The pair for each
            // node w outside the cluster that a member reaches and that
            // reaches a member.
            let inside: std::collections::HashSet<usize> = nodes.iter().copied().collect();
            let mut pairs = indexmap::IndexSet::new();
            for &a in nodes {
                for w in reach.any[a].ones().filter(|w| !inside.contains(w)) {
                    if let Some(&b) = nodes.iter().find(|&&b| reach.any[w].contains(b)) {
                        pairs.insert((a, b));
                    }
                }
            }
            for (a, b) in pairs {
                if reach.preventing_path(NodeId(a as u32), NodeId(b as u32)) {
                    continue; // cut off by separation above
                }
                let chain = chains.between(a, b);
                for x in all_on_path(a, b) {
                    let mut terms = vec![(x, 1.0)];
                    terms.extend(chain.iter().map(|y| (*y, -1.0)));
                    cut(&mut rows, format!("lazy_path_{}_{}", a, b), terms, f64::NEG_INFINITY, 0.0);
                }
            }
        }
        // An edge inside a cluster is fused.
        for ((a, b), x) in &self.fused_edges {
            let (a, b) = (a.0 as usize, b.0 as usize);
            if comp[a] == comp[b] && !fused(*x) {
                let mut terms = vec![(*x, 1.0)];
                let (links, nodes) = chains.chain(a, b);
                place.extend(nodes);
                terms.extend(links.into_iter().map(|y| (y, -1.0)));
                cut(&mut rows, format!("lazy_edge_{}_{}", a, b), terms, f64::NEG_INFINITY, 0.0);
            }
        }
        if rows.is_empty() {
            rows = cycle_cuts(g, &comp, &chains, &self.fused_edges, &mut place);
        }
        rows.extend(self.place(g, place));
        rows
    }

    /// A legal clustering near an illegal solution, with its values: the
    /// solution's fused links merged one by one while the clustering stays
    /// legal (the greedy clustering's rule).
    pub fn repair(&self, f: &Function, g: &DepGraph, v: &[f64]) -> (Clustering, Vec<f64>) {
        let links: Vec<(NodeId, NodeId)> = self.fused_edges.iter().chain(self.fused_siblings.iter()).filter(|(_, x)| v[x.0] < 0.5).map(|(k, _)| *k).collect();
        let rest = super::greedy::candidates(f, g).into_iter().filter(|k| !links.contains(k));
        let c = super::dominance::guided(f, g, &self.dominated, links.iter().copied().chain(rest));
        let values = self.assignment(f, g, &c);
        (c, values)
    }

    /// Gives nodes positions (see `position_rows`).
    fn place(&self, g: &DepGraph, nodes: Vec<usize>) -> Vec<Row> {
        position_rows(g, &self.pi, &self.span, &self.fused_edges, &self.fused_siblings, &mut self.placed.borrow_mut(), nodes)
    }
}

/// The position rows (papers/002 (5)) of every edge and sibling pair
/// between placed nodes that `nodes` adds. Positions make "one cluster"
/// transitive among them, which no finite set of chain rows does: under
/// `--ilp-model=lazy` one violated edge or cycle places its nodes, and
/// every other way of making the same mistake through them is cut off at
/// once; the edge model places every node from the start.
fn position_rows(
    g: &DepGraph,
    pi: &[LpVar],
    span: &[f64],
    fused_edges: &IndexMap<(NodeId, NodeId), LpVar>,
    fused_siblings: &IndexMap<(NodeId, NodeId), LpVar>,
    placed: &mut fixedbitset::FixedBitSet,
    nodes: Vec<usize>,
) -> Vec<Row> {
    let new: std::collections::HashSet<usize> = nodes.into_iter().filter(|n| !placed.put(*n)).collect();
    let fresh = |a: usize, b: usize| placed.contains(a) && placed.contains(b) && (new.contains(&a) || new.contains(&b));
    let p = |a: NodeId| pi[a.0 as usize];
    let mut rows = vec![];
    for (a, b, e) in g.edges() {
        if a == b || !fresh(a.0 as usize, b.0 as usize) {
            continue;
        }
        let n = span[a.0 as usize];
        match fused_edges.get(&(a, b)) {
            // Fused edges share a position, unfused ones go forward.
            Some(x) => {
                rows.push(Row { name: format!("edge_lo_{}_{}", a.0, b.0), terms: vec![(*x, 1.0), (p(b), -1.0), (p(a), 1.0)], lo: f64::NEG_INFINITY, hi: 0.0 });
                rows.push(Row { name: format!("edge_hi_{}_{}", a.0, b.0), terms: vec![(p(b), 1.0), (p(a), -1.0), (*x, -n)], lo: f64::NEG_INFINITY, hi: 0.0 });
            }
            None if !e.is_fusible() => rows.push(Row { name: format!("prevent_{}_{}", a.0, b.0), terms: vec![(p(b), 1.0), (p(a), -1.0)], lo: 1.0, hi: f64::INFINITY }),
            None => {}
        }
    }
    // Siblings that share a read share a position.
    for ((a, b), s) in fused_siblings {
        if !fresh(a.0 as usize, b.0 as usize) {
            continue;
        }
        let n = span[a.0 as usize];
        rows.push(Row { name: format!("sib_lo_{}_{}", a.0, b.0), terms: vec![(p(*b), 1.0), (p(*a), -1.0), (*s, -n)], lo: f64::NEG_INFINITY, hi: 0.0 });
        rows.push(Row { name: format!("sib_hi_{}_{}", a.0, b.0), terms: vec![(p(*a), 1.0), (p(*b), -1.0), (*s, -n)], lo: f64::NEG_INFINITY, hi: 0.0 });
    }
    rows
}

/// A row with each variable's coefficients summed (a solver takes one
/// coefficient per variable and row).
fn merged(name: String, terms: Vec<(LpVar, f64)>, lo: f64, hi: f64) -> Row {
    let mut sum: IndexMap<LpVar, f64> = IndexMap::new();
    for (x, c) in terms {
        *sum.entry(x).or_default() += c;
    }
    Row { name, terms: sum.into_iter().filter(|(_, c)| *c != 0.0).collect(), lo, hi }
}

/// Each node's predecessor on a breadth-first search's tree, with the link.
type Prev = Vec<Option<(usize, LpVar)>>;

/// Shortest chains of links (fusible edges and sibling pairs, in either
/// direction) in a graph of links: a breadth-first search from each node
/// asked about, kept.
struct Chains<'a> {
    adj: &'a [Vec<(usize, LpVar)>],
    from: std::cell::RefCell<std::collections::HashMap<usize, Prev>>,
}

/// The breadth-first tree of links from `a`: each node's predecessor and
/// link into `prev`, which is cleared first (`Tree` is the same search for
/// the separation rows).
fn chain_tree(adj: &[Vec<(usize, LpVar)>], a: usize, prev: &mut Prev) {
    prev.clear();
    prev.resize(adj.len(), None);
    let mut queue = std::collections::VecDeque::from([a]);
    while let Some(u) = queue.pop_front() {
        for &(w, x) in &adj[u] {
            // Seen: the root, or given a predecessor.
            if w != a && prev[w].is_none() {
                prev[w] = Some((u, x));
                queue.push_back(w);
            }
        }
    }
}

/// The links of the chain from the root of `prev`'s tree to `b`, and its
/// nodes from `b` back to the root; no links when `b` is the root or out
/// of reach.
fn chain_to(prev: &Prev, b: usize) -> (Vec<LpVar>, Vec<usize>) {
    let (mut links, mut nodes) = (vec![], vec![b]);
    let mut v = b;
    while let Some((u, x)) = prev[v] {
        links.push(x);
        nodes.push(u);
        v = u;
    }
    (links, nodes)
}

impl<'a> Chains<'a> {
    fn new(adj: &'a [Vec<(usize, LpVar)>]) -> Self {
        Chains { adj, from: Default::default() }
    }

    /// The link variables of a shortest chain from `a` to `b`, and its
    /// nodes from `b` back to `a`; no links when `b` is `a` or out of reach.
    fn chain(&self, a: usize, b: usize) -> (Vec<LpVar>, Vec<usize>) {
        let mut from = self.from.borrow_mut();
        let prev = from.entry(a).or_insert_with(|| {
            let mut prev = vec![];
            chain_tree(self.adj, a, &mut prev);
            prev
        });
        chain_to(prev, b)
    }

    fn between(&self, a: usize, b: usize) -> Vec<LpVar> {
        self.chain(a, b).0
    }
}

/// Which of the covering rows `Σ set ≥ 1` (each set sorted) to keep, in
/// their order: a row whose set holds another's (or repeats it) is implied
/// by it, so it adds non-zeros to every linear program of the search and
/// nothing else. Rows are taken shortest first, so a row can only be
/// implied by one kept before it. Each kept set is filed under its rarest
/// variable (the one fewest sets hold): a set that holds it holds that
/// variable, so only the sets filed under its own variables are compared
/// with it, each by its members' marks, and the lists stay short where a
/// link lies on thousands of chains.
pub fn covering_rows(sets: Vec<&[LpVar]>) -> Vec<bool> {
    let vars = sets.iter().flat_map(|s| s.iter()).map(|x| x.0 + 1).max().unwrap_or(0);
    let mut holders = vec![0u32; vars];
    for x in sets.iter().flat_map(|s| s.iter()) {
        holders[x.0] += 1;
    }
    let mut order: Vec<usize> = (0..sets.len()).collect();
    order.sort_by_key(|&i| (sets[i].len(), i));
    let mut keep = vec![true; sets.len()];
    let mut filed: Vec<Vec<usize>> = vec![vec![]; vars];
    // `marked[x] == i`: variable x is in set i, the one being examined.
    let mut marked = vec![usize::MAX; vars];
    for i in order {
        for x in sets[i] {
            marked[x.0] = i;
        }
        let holds = |j: usize| sets[j].iter().all(|y| marked[y.0] == i);
        if sets[i].iter().any(|x| filed[x.0].iter().any(|&j| holds(j))) {
            keep[i] = false;
        } else if let Some(rarest) = sets[i].iter().min_by_key(|x| (holders[x.0], x.0)) {
            filed[rarest.0].push(i);
        }
    }
    keep
}

/// Rows against cycles among convex clusters: for a cycle of clusters
/// C1 → C2 → … → C1 through the edges e_i, with chains L_i of fused links
/// inside each cluster from where the cycle enters it to where it leaves,
/// `Σ x(L_i) + Σ (1 − x_e_i) ≥ 1` over the fusible e_i: with every chain
/// fused and every e_i apart, the clusters would wait for each other.
fn cycle_cuts(g: &DepGraph, comp: &[usize], chains: &Chains, fused_edges: &IndexMap<(NodeId, NodeId), LpVar>, place: &mut Vec<usize>) -> Vec<Row> {
    use petgraph::graph::{DiGraph, NodeIndex};
    let mut quotient: DiGraph<usize, (usize, usize)> = DiGraph::new();
    let mut index: IndexMap<usize, NodeIndex> = IndexMap::new();
    for c in comp {
        if !index.contains_key(c) {
            index.insert(*c, quotient.add_node(*c));
        }
    }
    for (a, b, _) in g.edges() {
        let (a, b) = (a.0 as usize, b.0 as usize);
        if comp[a] != comp[b] {
            quotient.add_edge(index[&comp[a]], index[&comp[b]], (a, b));
        }
    }
    let mut rows = vec![];
    for scc in petgraph::algo::tarjan_scc(&quotient).into_iter().filter(|s| s.len() > 1) {
        let within: std::collections::HashSet<NodeIndex> = scc.iter().copied().collect();
        // A shortest cycle through the component's first cluster: a
        // breadth-first search back to it inside the strongly connected set.
        let start = scc[0];
        let mut prev: std::collections::HashMap<NodeIndex, (NodeIndex, (usize, usize))> = Default::default();
        let mut queue = std::collections::VecDeque::from([start]);
        let mut closing = None;
        'search: while let Some(u) = queue.pop_front() {
            for e in quotient.edges(u) {
                use petgraph::visit::EdgeRef;
                let w = e.target();
                if w == start {
                    closing = Some((u, *e.weight()));
                    break 'search;
                }
                if within.contains(&w) && !prev.contains_key(&w) {
                    prev.insert(w, (u, *e.weight()));
                    queue.push_back(w);
                }
            }
        }
        let Some((last, closing)) = closing else { continue };
        let mut edges = vec![closing];
        let mut u = last;
        while u != start {
            let (p, e) = prev[&u];
            edges.push(e);
            u = p;
        }
        edges.reverse();
        // edges[i] leaves the cluster edges[i-1] entered.
        let mut terms: Vec<(LpVar, f64)> = vec![];
        let mut lo = 1.0;
        for (i, &(a, b)) in edges.iter().enumerate() {
            let entered = edges[(i + edges.len() - 1) % edges.len()].1;
            let (links, nodes) = chains.chain(entered, a);
            terms.extend(links.into_iter().map(|x| (x, 1.0)));
            place.extend(nodes);
            if let Some(x) = fused_edges.get(&(NodeId(a as u32), NodeId(b as u32))) {
                terms.push((*x, -1.0));
                lo -= 1.0;
            }
        }
        rows.push(merged(format!("lazy_cycle_{}", edges[0].0), terms, lo, f64::INFINITY));
    }
    rows
}

/// Builds the ILP of one function: the constraints of what may fuse, and
/// the objective of the cost model (cost.rs).
/// With `lazy` (`--ilp-model=lazy`) no node has position rows yet. With
/// `sized` (the default limits, under which a model past `RELAX_NNZ` is
/// neither relaxed nor searched whole) only the parts within the root
/// cuts' `MAX_NNZ` get separation rows.
pub fn model(f: &Function, g: &DepGraph, cost: CostModel, lazy: bool, sized: bool) -> Model {
    let mut lp = Lp::default();
    lp.comments.push(format!("clustering ILP of fn {} (edge-local model, docs/ilp.md)", f.name));
    for node in g.nodes() {
        lp.comments.push(format!("node {} = {} '{}'", node.0, f.node(node).combinator(), f.node(node).name));
    }
    // Positions only order the clusters of one connected part of the
    // graph (docs/ilp.md, "Independent parts"): a part of k nodes needs
    // positions 0..k, and k is the big M of its rows.
    let span = part_sizes(g);
    let pi: Vec<LpVar> = g.nodes().map(|a| lp.var(format!("pi_{}", a.0), 0.0, span[a.0 as usize], false)).collect();
    let reach = std::sync::Arc::new(g.reach().unwrap_or_else(|e| afc_ir::ice::fail("cluster", &e, &afc_ir::graph::print(f, g, &g.sizes))));

    // Edges: x = 0 fuses one; the position rows (`position_rows`, below or
    // lazily) order the clusters. A fusible edge whose ends are also joined
    // by a path through a preventing edge can never be fused: fixed at 1.
    let mut fused_edges = IndexMap::new();
    for (a, b, e) in g.edges() {
        if e.is_fusible() {
            let x = if reach.preventing_path(a, b) {
                lp.var(format!("x_{}_{}", a.0, b.0), 1.0, 1.0, true)
            } else {
                lp.binary(format!("x_{}_{}", a.0, b.0))
            };
            fused_edges.insert((a, b), x);
        }
    }
    // Siblings that may share their reads. Pairs joined by a
    // fusion-preventing path never can (papers/000 §1.4.5).
    let mut fused_siblings = IndexMap::new();
    for &(a, b) in g.siblings().keys() {
        if !may_share(g, &reach, a, b) {
            continue;
        }
        fused_siblings.insert((a, b), lp.binary(format!("s_{}_{}", a.0, b.0)));
    }

    // Traversal orders (papers/002 §4.2, docs/ilp.md "Traversal orders"):
    // a node produces its output in order 0, 1, or a gather's label when
    // it is evaluated at that gather's indices; a fused edge needs the
    // consumer's read order (its own; the opposite for a reverse; the label
    // for a gather's source) to be the producer's, and a shared read one
    // read order. One binary per node and possible order (orders.rs); an
    // edge or pair whose two sides share no order is apart (fixed at 1)
    // before the rows below are built from the fixed edges.
    let orders = OrderVars::new(&mut lp, orders::domains(f, g, |a, b| reach.preventing_path(a, b)));
    let mut order_apart = indexmap::IndexSet::new();
    for ((a, b), x) in &fused_edges {
        let arr = g.edge(*a, *b).unwrap().vars[0];
        let reads = orders.reads(f, g, arr, *b);
        let side = |producer: bool, k: u32| if producer { orders.is(*a, k) } else { orders.reads_in(f, g, arr, *b, k) };
        if !orders::agree(&mut lp, &format!("order_{}_{}", a.0, b.0), *x, &orders.domain[a.0 as usize], &reads, side) {
            lp.vars[x.0].lo = 1.0;
            order_apart.insert((*a, *b));
        }
    }
    {
        let sibs = g.siblings();
        for ((a, b), s) in &fused_siblings {
            let arr = sibs[&(*a, *b)][0];
            let (ra, rb) = (orders.reads(f, g, arr, *a), orders.reads(f, g, arr, *b));
            let side = |first: bool, k: u32| orders.reads_in(f, g, arr, if first { *a } else { *b }, k);
            if !orders::agree(&mut lp, &format!("sib_order_{}_{}", a.0, b.0), *s, &ra, &rb, side) {
                lp.vars[s.0].lo = 1.0;
            }
        }
    }
    let parity = orders::parity_links(f, g, &lp, &orders, &fused_edges, &fused_siblings);
    // Edges whose fusion is always at least as good under the cost model
    // (docs/ilp.md, rule 11): fixed fused before the rows below see them.
    let w = Weights::of(cost, f, g, &reach);
    let dominated = super::dominance::always_fused(f, g, &lp, &fused_edges, &fused_siblings, &orders, &w);
    for k in &dominated {
        lp.vars[fused_edges[k].0].hi = 0.0;
    }
    if !dominated.is_empty() {
        let names: Vec<String> = dominated.iter().map(|k| lp.vars[fused_edges[k].0].name.clone()).collect();
        lp.comments.push(format!("fused as dominating (docs/ilp.md, rule 11): {}", names.join(" ")));
    }
    let mirrored = mirror_fixings(f, g, &mut lp, &orders);
    let mut placed = fixedbitset::FixedBitSet::with_capacity(g.len());
    if !lazy {
        lp.rows.extend(position_rows(g, &pi, &span, &fused_edges, &fused_siblings, &mut placed, (0..g.len()).collect()));
    }

    // Convexity (docs/ilp.md, "path cuts"): nodes that share a position
    // share it with every node on a path between them, so every edge on
    // such a path is fused too: x_uv ≤ x_ab for a fused edge a→b, and
    // x_uv ≤ s_ab for siblings a, b with a path between them. Implied by
    // the position rows for integer solutions; they close most of the gap
    // of the relaxation, where positions may differ by fractions.
    // The fused edges on paths from a to b, in `fused_edges` order: those
    // leaving a or a node strictly between for one strictly between or b.
    // (The nodes between are a's descendants that are b's ancestors: one
    // intersection of bit sets, so a long chain costs its length, not the
    // graph's.)
    let mut leaving: Vec<Vec<(usize, usize)>> = vec![vec![]; g.len()];
    for (i, (u, v)) in fused_edges.keys().enumerate() {
        leaving[u.0 as usize].push((v.0 as usize, i));
    }
    // None past `PATH_NODES` nodes between a and b: see there.
    let on_path = |a: NodeId, b: NodeId| -> Option<Vec<LpVar>> {
        let (a, b) = (a.0 as usize, b.0 as usize);
        let mut mid = reach.any[a].clone();
        mid.intersect_with(&reach.above[b]);
        if mid.count_ones(..) > PATH_NODES {
            return None;
        }
        let mut found = vec![];
        for u in std::iter::once(a).chain(mid.ones()) {
            found.extend(leaving[u].iter().filter(|(v, _)| (*v == b && u != a) || mid.contains(*v)).map(|(_, i)| *i));
        }
        found.sort_unstable();
        Some(found.into_iter().map(|i| fused_edges[i]).collect())
    };
    let mut cuts = vec![];
    for ((a, b), x) in &fused_edges {
        if lp.vars[x.0].lo == 0.0 {
            for y in on_path(*a, *b).unwrap_or_default() {
                cuts.push((format!("path_{}_{}", a.0, b.0), y, *x));
            }
        }
    }
    for ((a, b), s) in &fused_siblings {
        let (a, b) = if reach.path(*b, *a) { (*b, *a) } else { (*a, *b) };
        for y in on_path(a, b).unwrap_or_default() {
            cuts.push((format!("path_{}_{}", a.0, b.0), y, *s));
        }
    }
    for (i, (name, y, x)) in cuts.into_iter().enumerate() {
        lp.row(format!("{}_{}", name, i), vec![(y, 1.0), (x, -1.0)], f64::NEG_INFINITY, 0.0);
    }
    // The separation rows (`separation_rows`) go here, once the rest of
    // the model says how large each part is.
    let separation_at = lp.rows.len();

    // A node runs at a gather's label k only to feed a fused consumer
    // that reads it at k: [o_a = k] + Σ x ≤ |E_k| over those out-edges.
    // A gather runs at one only with its index arrays in memory, checked
    // whole before its nest: [o_a ≥ 2] ≤ x for the fusible edge that brings
    // each.
    let producers = f.producers();
    for a in g.nodes() {
        let dom = &orders.domain[a.0 as usize];
        if !dom.iter().any(|k| *k >= 2) {
            continue;
        }
        let at_label = orders.at_label(a);
        for ix in f.index_arrays_checked(a) {
            if let Some(x) = producers[ix.0 as usize].and_then(|p| fused_edges.get(&(p, a))) {
                let mut terms: Vec<(LpVar, f64)> = at_label.terms.iter().map(|w| (*w, 1.0)).collect();
                terms.push((*x, -1.0));
                lp.row(format!("checked_{}_{}", a.0, ix.0), terms, f64::NEG_INFINITY, -at_label.constant);
            }
        }
        for k in dom.iter().filter(|k| **k >= 2) {
            // a's own fusible edges (`leaving`, in `fused_edges` order),
            // not a scan of every edge per node and label: quadratic in a
            // graph of many gathers.
            let outs: Vec<LpVar> = leaving[a.0 as usize]
                .iter()
                .map(|&(c, i)| (NodeId(c as u32), fused_edges[i]))
                .filter(|(c, x)| lp.vars[x.0].lo == 0.0 && orders.reads(f, g, g.edge(a, *c).unwrap().vars[0], *c).contains(k))
                .map(|(_, x)| x)
                .collect();
            let is = orders.is(a, *k);
            let mut terms: Vec<(LpVar, f64)> = is.terms.iter().map(|w| (*w, 1.0)).collect();
            terms.extend(outs.iter().map(|x| (*x, 1.0)));
            lp.row(format!("feeds_{}_{}", a.0, k), terms, f64::NEG_INFINITY, outs.len() as f64 - is.constant);
        }
    }

    // Manifest arrays: written unless every reader is fused with the producer.
    let mut arrays: Vec<VarId> = vec![];
    for node in g.nodes() {
        for o in f.node(node).outputs() {
            if f.var(*o).ty.is_array() {
                arrays.push(*o);
            }
        }
    }
    let mut manifest: IndexMap<VarId, LpVar> = IndexMap::new();
    for v in &arrays {
        let forced = g.forced_manifest.contains(v);
        let m = lp.var(format!("m_{}", v.0), if forced { 1.0 } else { 0.0 }, 1.0, true);
        manifest.insert(*v, m);
        let prod = producers[v.0 as usize].unwrap();
        // An array written to memory is computed whole: its producer runs
        // in order 0 or 1, not at a gather's indices (papers/002 (11)).
        let at_label = orders.at_label(prod);
        if !at_label.terms.is_empty() {
            let mut terms: Vec<(LpVar, f64)> = at_label.terms.iter().map(|w| (*w, 1.0)).collect();
            terms.push((m, 1.0));
            lp.row(format!("whole_{}", v.0), terms, f64::NEG_INFINITY, 1.0 - at_label.constant);
        }
        let fused_readers: Vec<NodeId> = g.readers.get(v).into_iter().flatten().filter(|c| fused_edges.get(&(prod, **c)).is_some_and(|x| lp.vars[x.0].lo == 0.0)).copied().collect();
        for c in g.readers.get(v).into_iter().flatten() {
            if let Some(x) = fused_edges.get(&(prod, *c)) {
                lp.row(format!("manifest_{}_{}", v.0, c.0), vec![(*x, 1.0), (m, -1.0)], f64::NEG_INFINITY, 0.0);
            }
        }
        // Two readers fused with the producer read it in its one order:
        // readers that read it in different orders leave one of them
        // apart, and V is written: m_V ≥ |[c reads V in k] − [d reads V
        // in k]| for every k (or m_V = 1 where they share no order). Each
        // reader with the next SIBLING_WINDOW, as sibling pairs.
        for (i, c) in fused_readers.iter().enumerate() {
            for d in fused_readers.iter().skip(i + 1).take(SIBLING_WINDOW) {
                let (rc, rd) = (orders.reads(f, g, *v, *c), orders.reads(f, g, *v, *d));
                if rc.len() == 1 && rc == rd {
                    continue; // both fixed to one order: always agree
                }
                let side = |first: bool, k: u32| orders.reads_in(f, g, *v, if first { *c } else { *d }, k);
                if !orders::agree(&mut lp, &format!("disagree_{}_{}_{}", v.0, c.0, d.0), m, &rc, &rd, side) {
                    lp.vars[m.0].lo = 1.0;
                }
            }
        }
    }

    // The objective: each variable weighs what it stands for under the
    // cost model. Reads: reader k of array V reads it anew unless it is
    // fused with V's producer or shares the read with an earlier reader
    // (decision 6); a gather reads its source once per index.
    let mut obj: IndexMap<LpVar, f64> = IndexMap::new();
    let mut weigh = |v: LpVar, k: f64| {
        if k != 0.0 {
            *obj.entry(v).or_default() += k;
        }
    };
    let mut reads = vec![];
    let mut constant_reads = 0.0;
    for (v, readers) in &g.readers {
        let prod = producers[v.0 as usize];
        // Per reader so far: its r (none for the first), its edge from the
        // producer, its pairs with earlier readers.
        let (mut read_vars, mut read_fk, mut read_sibs): (Vec<LpVar>, Vec<Option<LpVar>>, Vec<Vec<LpVar>>) = (vec![], vec![], vec![]);
        let mut first_pays: Option<LpVar> = None;
        for (k, c) in readers.iter().enumerate() {
            let unit = w.read(f, g, *v, *c);
            let f_k: Option<LpVar> = prod.and_then(|pr| fused_edges.get(&(pr, *c)).copied());
            if k == 0 {
                match f_k {
                    Some(x) => weigh(x, unit),
                    None => constant_reads += unit,
                }
                first_pays = f_k;
                read_vars.push(LpVar(usize::MAX));
                read_fk.push(f_k);
                read_sibs.push(vec![]);
                continue;
            }
            // Integer, though every legal clustering's r is 0 or 1
            // anyway: with every weighed variable integer, the solver
            // knows the objective is and rounds its bound up (docs/ilp.md,
            // row 5).
            let r = lp.var(format!("r_{}_{}", v.0, k), 0.0, 1.0, true);
            let first = k.saturating_sub(SIBLING_WINDOW);
            let sib = |prev: NodeId| fused_siblings.get(&(prev.min(*c), prev.max(*c))).copied().filter(|s| lp.vars[s.0].lo == 0.0);
            let pairs: Vec<(usize, LpVar)> = (first..k).filter_map(|j| sib(readers[j]).map(|s| (j, s))).collect();
            let mut terms = vec![(r, 1.0)];
            let mut rhs = 0.0;
            match f_k {
                Some(x) => terms.push((x, -1.0)),
                None => rhs += 1.0,
            }
            let read = if first == 0 {
                // Every earlier reader is in the window: k reads anew
                // unless it shares with the first reader of its group, who
                // pays: r_k ≥ f_k − Σ_j y_jk, y_jk ≤ 1 − s_jk, y_jk ≤ the
                // read j pays (f_0 for the first reader, r_j after). Where
                // the weaker r_k ≥ f_k − Σ_j (1 − s_jk) lets readers that
                // half-share with two readers that share read nothing,
                // y_jk ≤ r_j makes the share come from a reader that pays.
                let mut reps = vec![];
                for (j, s) in pairs {
                    let y = lp.var(format!("y_{}_{}_{}", v.0, j, k), 0.0, 1.0, false);
                    lp.row(format!("share_{}_{}_{}", v.0, j, k), vec![(y, 1.0), (s, 1.0)], f64::NEG_INFINITY, 1.0);
                    let pays = if j == 0 { first_pays } else { Some(read_vars[j]) };
                    if let Some(p) = pays {
                        lp.row(format!("pays_{}_{}_{}", v.0, j, k), vec![(y, 1.0), (p, -1.0)], f64::NEG_INFINITY, 0.0);
                    }
                    terms.push((y, 1.0));
                    reps.push(Rep { y, s, earlier: read_sibs[j].clone(), reads: if j == 0 { first_pays } else { read_fk[j] }, always: j == 0 && first_pays.is_none() });
                }
                Read { r, f_k, apart: vec![], reps }
            } else {
                // r ≥ f_k − Σ_{j<k} (1 − s_jk); readers before the window
                // are never paired with this one (`DepGraph::siblings`):
                // each adds 1 − s = 1, as does a pair with no share.
                rhs -= (k - first) as f64;
                for &(_, s) in &pairs {
                    terms.push((s, -1.0));
                }
                rhs += (k - first - pairs.len()) as f64;
                Read { r, f_k, apart: pairs.iter().map(|(_, s)| *s).collect(), reps: vec![] }
            };
            read_vars.push(r);
            read_fk.push(f_k);
            read_sibs.push(read.apart.iter().copied().chain(read.reps.iter().map(|p| p.s)).collect());
            reads.push(read);
            lp.row(format!("read_{}_{}", v.0, k), terms, rhs, f64::INFINITY);
            weigh(r, unit);
        }
    }
    // Writes: an array written to memory is written whole; it is an
    // intermediate array unless it is forced.
    for (v, m) in &manifest {
        weigh(*m, w.write(f, g, *v));
    }
    for x in fused_edges.values() {
        weigh(*x, w.edge);
    }
    for s in fused_siblings.values() {
        weigh(*s, w.pair);
    }
    lp.objective = obj.into_iter().collect();
    lp.comments.push(format!(
        "cost model {}: traffic {} per {}, intermediate array {}, array written {}, unfused edge {}, unshared read {}; constant reads {}",
        cost.name(),
        w.traffic,
        if cost == CostModel::Bytes { format!("byte (a dimension past the first: ×{})", super::cost::BYTES_EXTENT) } else { "element".to_string() },
        w.intermediate,
        w.written,
        w.edge,
        w.pair,
        constant_reads
    ));
    // Separation rows: for every part when the model is relaxed (or
    // `sized` is off), otherwise for the parts small enough to be relaxed
    // or searched alone; a larger part's would only be carried. (The
    // arrays' relaxation that guides a relaxed model's rounding leans on
    // them: without them its rounding was 0.5 % dearer on average over
    // 52 programs of 300-2,500 combinators, for a fifth of the time.)
    let base = super::nnz(&lp);
    let relax = base <= super::RELAX_NNZ;
    let within = (sized && !relax).then(|| small_parts(g, &lp, &fused_edges, &fused_siblings));
    let beside = g.len() > super::greedy::BATCH_NODES;
    let (separation, implied) = separation_rows(g, &reach, &lp, &fused_edges, &fused_siblings, within.as_deref(), beside);
    lp.rows.splice(separation_at..separation_at, separation);
    let vars = lp.vars.len();
    Model { lp, pi, span, placed: std::cell::RefCell::new(placed), orders, order_apart, parity, dominated, mirrored, fused_edges, fused_siblings, manifest, reads, implied, base, relax, vars, reach }
}

/// Mirror images (docs/ilp.md, rule 12): in a part of the graph where no
/// node has a fixed order, turning every order 0 into 1 and 1 into 0 maps
/// a solution onto one of the same cost, so the part's first node is kept
/// out of order 1 (its `w_a_1` bounded by 0). Returns those nodes.
fn mirror_fixings(f: &Function, g: &DepGraph, lp: &mut Lp, orders: &OrderVars) -> Vec<NodeId> {
    let (part, _) = parts_of(g);
    let mut fixed = vec![false; g.len()];
    for a in g.nodes() {
        fixed[part[a.0 as usize]] |= f.node(a).fixed_order().is_some();
    }
    let mut mirrored = vec![];
    let mut seen = vec![false; g.len()];
    let mut names = vec![];
    for a in g.nodes() {
        let p = part[a.0 as usize];
        if !fixed[p] && !std::mem::replace(&mut seen[p], true) {
            if let [w] = orders.is(a, 1).terms[..] {
                lp.vars[w.0].hi = 0.0;
                names.push(lp.vars[w.0].name.clone());
                mirrored.push(a);
            }
        }
    }
    if !names.is_empty() {
        lp.comments.push(format!("mirror images left out (docs/ilp.md, rule 12): {} = 0", names.join(" = ")));
    }
    mirrored
}

/// Per node: whether the part of the model its links are in (variables
/// joined by rows) is no larger than the root cuts' `MAX_NNZ` without
/// separation rows: only such a part of a model too large to relax whole
/// is searched (`SEARCH_NNZ` is smaller) or relaxed alone for its bound.
fn small_parts(g: &DepGraph, lp: &Lp, fused_edges: &IndexMap<(NodeId, NodeId), LpVar>, fused_siblings: &IndexMap<(NodeId, NodeId), LpVar>) -> Vec<bool> {
    let root = lp.part_roots();
    let mut size = vec![0usize; lp.vars.len()];
    for &r in &root {
        size[r] += 1;
    }
    for r in &lp.rows {
        if let Some((x, _)) = r.terms.first() {
            size[root[x.0]] += r.terms.len();
        }
    }
    let mut small = vec![true; g.len()];
    for ((a, b), x) in fused_edges.iter().chain(fused_siblings.iter()) {
        if size[root[x.0]] > super::separate::MAX_NNZ {
            small[a.0 as usize] = false;
            small[b.0 as usize] = false;
        }
    }
    small
}

/// `chain_tree` for `separation_rows`, which grows a tree from most
/// nodes of the graph in turn (at 2,500 combinators 1,650 trees of some
/// 2,200 nodes each): the links as one array with each node's start, and
/// the tree's entries valid where `seen` marks them, so no tree clears the
/// last one's.
struct Tree {
    /// Each node's links: the far end and the variable.
    links: Lists<(u32, LpVar)>,
    seen: Marks,
    root: usize,
    prev: Vec<(u32, LpVar)>,
    /// Whether a node's chain passes through a wanted node before it.
    past: Vec<bool>,
    queue: Vec<u32>,
}

impl Tree {
    /// The tree over links `(a, b, x)` in either direction, each node's in
    /// the order given (the order `chain_tree` visits them in).
    fn new(n: usize, links: &[(usize, usize, LpVar)]) -> Tree {
        let mut by_node = Lists::default();
        by_node.fill(n, links.iter().flat_map(|&(a, b, x)| [(a as u32, (b as u32, x)), (b as u32, (a as u32, x))]));
        Tree { links: by_node, seen: Marks::default(), root: 0, prev: vec![(0, LpVar(0)); n], past: vec![false; n], queue: vec![] }
    }

    /// `chain_tree` from `a`, breadth first, stopping once the `wanted`
    /// nodes `is_wanted` names are reached; `past` says for each node
    /// reached whether its chain passes through a wanted node before it.
    fn grow(&mut self, a: usize, mut wanted: usize, is_wanted: impl Fn(usize) -> bool) {
        self.seen.fresh(self.prev.len());
        self.seen.insert(a);
        self.root = a;
        self.past[a] = false;
        self.queue.clear();
        self.queue.push(a as u32);
        let mut head = 0;
        while head < self.queue.len() && wanted > 0 {
            let u = self.queue[head] as usize;
            head += 1;
            let through = self.past[u] || (u != a && is_wanted(u));
            for &(w, x) in self.links.of(u as u32) {
                let w = w as usize;
                if self.seen.insert(w) {
                    self.prev[w] = (u as u32, x);
                    self.past[w] = through;
                    self.queue.push(w as u32);
                    if is_wanted(w) {
                        wanted -= 1;
                    }
                }
            }
        }
    }

    /// Whether the last tree reached `c` (other than from itself).
    fn reached(&self, c: usize) -> bool {
        c != self.root && self.seen.contains(c)
    }

    /// The links of the last tree's chain from its root to `c`, from `c` back.
    fn chain(&self, c: usize) -> Vec<LpVar> {
        let mut links = vec![];
        let mut v = c;
        while v != self.root {
            let (u, x) = self.prev[v];
            links.push(x);
            v = u as usize;
        }
        links
    }
}

/// Separation (docs/ilp.md, "chain cuts"): nodes joined by a path through
/// a preventing edge are never in one cluster, and a cluster is connected
/// by fused links (edges and shared reads), so every chain of links
/// between two such nodes has an unfused link: Σ ≥ 1. One shortest chain
/// per pair; the relaxation otherwise spreads 1/n over the chain through
/// the positions. Only from the nodes `within` allows (all when None);
/// with `beside`, a second thread grows trees too.
/// Returns the rows kept and how many were left out as implied.
fn separation_rows(
    g: &DepGraph,
    reach: &Reach,
    lp: &Lp,
    fused_edges: &IndexMap<(NodeId, NodeId), LpVar>,
    fused_siblings: &IndexMap<(NodeId, NodeId), LpVar>,
    within: Option<&[bool]>,
    beside: bool,
) -> (Vec<Row>, usize) {
    let links: Vec<(usize, usize, LpVar)> = fused_edges.iter().chain(fused_siblings.iter()).filter(|(_, x)| lp.vars[x.0].lo == 0.0).map(|((a, b), x)| (a.0 as usize, b.0 as usize, *x)).collect();
    // Each node's connected part of the link graph: a search from `a`
    // looks for the separated nodes of its own part only (one it cannot
    // reach would make it search the whole part).
    let mut linked = Groups::new(g.len());
    for &(a, b, _) in &links {
        linked.union(a, b);
    }
    let part: Vec<usize> = (0..g.len()).map(|a| linked.find(a)).collect();
    let roots: Vec<usize> = (0..g.len()).filter(|&a| within.is_none_or(|w| w[a])).collect();
    let chunks = roots.chunks(SEPARATION_CHUNK).collect::<Vec<_>>();
    // The trees are the model's largest cost from about 1,500
    // combinators (200 ms of 240 at 2,700), and each is independent of
    // the others: past `BATCH_NODES` nodes (`model`) a second thread grows
    // those of the chunks of roots it takes, and the chunks are put back
    // in order before repeats are dropped, so the rows are the same either
    // way. (Where no thread can be started, this thread grows them all.)
    // Repeats are dropped here as well as by `covering_rows`: the chains
    // kept so far, by their hash (found by the threads).
    let hasher = std::hash::RandomState::new();
    let grown = super::each_at_once(
        beside,
        "afc-chains",
        chunks.len(),
        || ChainSearch::new(g.len(), &links, &hasher),
        |search, k| chunks[k].iter().map(|&a| search.chains(a, reach, &part)).collect::<Vec<_>>(),
    );
    let mut implied = 0;
    let mut seen: std::collections::HashMap<u64, Vec<usize>> = std::collections::HashMap::new();
    // Each chain kept: its root and far end (its name), and its links.
    let mut separation: Vec<((usize, usize), Vec<LpVar>)> = vec![];
    for from in grown.into_iter().flatten() {
        implied += from.implied;
        for (c, hash, chain) in from.chains {
            let same = seen.entry(hash).or_default();
            if !same.iter().any(|&i| separation[i].1 == chain) {
                same.push(separation.len());
                separation.push(((from.root, c), chain));
            }
        }
    }
    let keep = covering_rows(separation.iter().map(|(_, chain)| chain.as_slice()).collect());
    implied += keep.iter().filter(|k| !**k).count();
    let rows = separation
        .into_iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(((a, c), chain), _)| Row { name: format!("chain_{}_{}", a, c), terms: chain.into_iter().map(|x| (x, 1.0)).collect(), lo: 1.0, hi: f64::INFINITY })
        .collect();
    (rows, implied)
}

/// Roots a thread of `separation_rows` takes at a time: enough that
/// taking one costs nothing beside its trees, few enough that the two
/// threads finish together.
const SEPARATION_CHUNK: usize = 32;

/// An edge or sibling pair with more nodes than this on the paths between
/// its ends gets no path cuts (docs/ilp.md, "Large graphs"). Its rows are
/// one per fused edge between, so a chain of n maps that each also read
/// one computed array had n²/2 of them (8,000 maps: 16 GB and a minute);
/// the random programs of `make bench-ilp` have at most 31 up to 4,000
/// combinators, and keep all theirs.
const PATH_NODES: usize = 64;

/// One thread's searches for `separation_rows`: its tree and buffers.
struct ChainSearch<'h> {
    tree: Tree,
    later: Vec<usize>,
    /// `wanted[c] == a + 1`: c is in `later` for a.
    wanted: Vec<usize>,
    hasher: &'h std::hash::RandomState,
}

/// The chains from one root to the later nodes separated from it.
struct FromRoot {
    root: usize,
    /// Each such node, its chain's hash and links, sorted (a repeat is
    /// then equal).
    chains: Vec<(usize, u64, Vec<LpVar>)>,
    /// Chains left out as implied by a shorter one through a separated node.
    implied: usize,
}

impl<'h> ChainSearch<'h> {
    fn new(n: usize, links: &[(usize, usize, LpVar)], hasher: &'h std::hash::RandomState) -> ChainSearch<'h> {
        ChainSearch { tree: Tree::new(n, links), later: vec![], wanted: vec![0; n], hasher }
    }

    /// The chains from `a` to the later nodes of its part separated from it.
    fn chains(&mut self, a: usize, reach: &Reach, part: &[usize]) -> FromRoot {
        let mut from = FromRoot { root: a, chains: vec![], implied: 0 };
        let separated = |c: usize| reach.preventing[a].contains(c) || reach.preventing[c].contains(a);
        self.later.clear();
        self.later.extend((a + 1..part.len()).filter(|&c| part[c] == part[a] && separated(c)));
        if self.later.is_empty() {
            return from;
        }
        for &c in &self.later {
            self.wanted[c] = a + 1;
        }
        let wanted = &self.wanted;
        self.tree.grow(a, self.later.len(), |c| wanted[c] == a + 1);
        for &c in &self.later {
            if !self.tree.reached(c) {
                continue; // not in the tree (cannot happen: c is in a's part)
            }
            // A later node separated from `a` inside the chain has a row
            // of its own over a prefix of these links, which implies this
            // one: a superset row would add non-zeros and nothing else.
            if self.tree.past[c] {
                from.implied += 1;
                continue;
            }
            let mut chain = self.tree.chain(c);
            chain.sort_unstable();
            let hash = std::hash::BuildHasher::hash_one(self.hasher, &chain);
            from.chains.push((c, hash, chain));
        }
        from
    }
}

/// The number of nodes in each node's connected part of the graph (edges
/// and sibling pairs, in either direction): the most positions its
/// clusters need.
fn part_sizes(g: &DepGraph) -> Vec<f64> {
    let (part, size) = parts_of(g);
    part.iter().map(|p| size[p] as f64).collect()
}

/// Each node's connected part of the graph (a representative node), and
/// the parts' sizes.
fn parts_of(g: &DepGraph) -> (Vec<usize>, std::collections::HashMap<usize, usize>) {
    let mut u = Groups::new(g.len());
    for (a, b, _) in g.edges() {
        u.union(a.0 as usize, b.0 as usize);
    }
    for &(a, b) in g.siblings().keys() {
        u.union(a.0 as usize, b.0 as usize);
    }
    let part: Vec<usize> = (0..g.len()).map(|i| u.find(i)).collect();
    let mut size = std::collections::HashMap::new();
    for p in &part {
        *size.entry(*p).or_default() += 1;
    }
    (part, size)
}

/// The warm start (docs/ilp.md, "Rounding"): the greedy clustering, or
/// the greedy rule guided by a linear relaxation when that is cheaper.
/// A relaxation's values say which links the optimum is likely to fuse;
/// taking the links in increasing order of `x` (the most fused first)
/// lets the greedy rule build around them. The guides: the model's own
/// relaxation (the root cuts' last; not past their size), and the lazy
/// form's for a model the solver searches or else the model's rows
/// weighed by the arrays written alone, whose point bounds nothing: none's
/// rounding is the cheapest on every program. Every candidate is a
/// legal clustering; ties keep the earlier, so the choice is the same on
/// every machine.
pub fn warm_start(f: &Function, g: &DepGraph, cfg: &super::ClusterConfig, m: &Model, relaxation: Option<Vec<f64>>) -> super::WarmStart {
    warm_start_from(f, g, cfg, m, relaxation, super::dominance::respecting(f, g, &m.dominated, super::greedy::cluster(f, g)))
}

/// `warm_start`, given the greedy clustering.
fn warm_start_from(f: &Function, g: &DepGraph, cfg: &super::ClusterConfig, m: &Model, relaxation: Option<Vec<f64>>, greedy: Clustering) -> super::WarmStart {
    let values = m.assignment(f, g, &greedy);
    let value = m.lp.value_of(&values);
    let at_bound = m.lp.at_trivial_bound(&values);
    let mut best = super::WarmStart { clustering: greedy, values, note: format!("greedy {}", value), relaxation: None, stopped: false, near: None };
    let mut best_value = value;
    // Past RELAX_NNZ the relaxation is solved in chunks, up to CHUNKED_NNZ.
    let chunked = cfg.nodes.is_none() && !m.relax;
    if at_bound || (chunked && m.base > super::CHUNKED_NNZ) {
        return best;
    }
    let lazy = cfg.model == super::IlpModel::Lazy;
    // The relaxation without positions guides a model of the size the
    // solver searches (where it was sometimes the better guide); on larger
    // ones the rounding of the model's own (cut) relaxation was 2-15 %
    // cheaper every time and the other model's solve cost up to 0.7 s.
    let other = (lazy || super::nnz(&m.lp) <= super::SEARCH_NNZ).then(|| model(f, g, cfg.cost, !lazy, false));
    // A model too large for root cuts is not relaxed under its own
    // weights: that solve was the slowest step of its clustering (2 s of
    // 2.9 at 2,000 combinators) and bounded nothing the search used. A
    // model not searched has its rows relaxed weighed by the arrays
    // written alone (`--cost=arrays`): four to five times faster on large
    // models, and its rounding was as cheap or cheaper on most programs of
    // 400-2,500 combinators and the cheapest of all on 9 of 24 of 150-300
    // (docs/ilp.md, "Rounding"). Each guide: a model, and whether it is
    // weighed by the arrays written.
    let own_weights = relaxation.is_some() || super::separate::cuts_apply(g, &m.lp);
    let mut guides: Vec<(&Model, bool)> = match &other {
        Some(o) if lazy => vec![(m, false), (o, false)],
        Some(o) => vec![(o, false), (m, false)],
        None => vec![(m, false)],
    };
    guides.retain(|(guide, _)| own_weights || !std::ptr::eq(*guide, m));
    // A model the solver searches by default (within SEARCH_NNZ) gets
    // none: the search finds what its rounding would, and its solve added
    // 4 % to the proofs of 100 combinators.
    if super::nnz(&m.lp) > super::SEARCH_NNZ {
        guides.push((m, true));
    }
    for (guide, arrays) in guides {
        // The model's own relaxation is the root cuts' last (solved_model).
        let solved = match &relaxation {
            // Reduced, whole or in chunks: the arrays written cost no
            // read, shared read or sibling pair, so their rows go
            // (`Lp::reduced`; at 2,650 combinators 68,000 rows become
            // 33,000 and the solve is a fifth faster).
            _ if arrays && chunked => {
                let (point, stopped) = chunked_relaxation(g, cfg, guide, super::CHUNK_NODES, true);
                best.stopped |= stopped;
                Ok(point)
            }
            _ if arrays => cfg.solver.relaxation(&guide.lp.reduced(&guide.arrays_written())).solve(cfg.time_limit),
            Some(r) if std::ptr::eq(guide, m) => Ok(r.clone()),
            _ => cfg.solver.relaxation(&guide.lp).solve(cfg.time_limit),
        };
        let point = match solved {
            Ok(point) => point,
            Err(e) => {
                best.stopped |= e == afc_ir::lp::NoPoint::TimeLimit;
                continue;
            }
        };
        let mut links: Vec<((NodeId, NodeId), f64)> = guide.fused_edges.iter().chain(guide.fused_siblings.iter()).map(|(k, x)| (*k, point[x.0])).collect();
        // Only the model's own optimum bounds its objective.
        if std::ptr::eq(guide, m) && !arrays {
            best.relaxation = Some(point);
        }
        // A stable sort: equal values keep greedy's order (edges, then siblings).
        links.sort_by(|a, b| a.1.total_cmp(&b.1));
        let rounded = super::dominance::guided(f, g, &m.dominated, links.into_iter().map(|(k, _)| k));
        let values = m.assignment(f, g, &rounded);
        let r = m.lp.value_of(&values);
        if r < best_value - 0.5 && m.lp.feasible(&values).is_ok() {
            best = super::WarmStart { clustering: rounded, values, note: format!("greedy {}, rounded {}", value, r), relaxation: best.relaxation, stopped: best.stopped, near: None };
            best_value = r;
        }
    }
    best
}

/// The arrays' relaxation of a model too large to relax whole
/// (`RELAX_NNZ`), in chunks (docs/ilp.md, "Rounding"): the nodes cut into
/// runs of `chunk_nodes` in source order, and each run's rows (those
/// whose links, positions and orders all lie within it) solved reduced
/// (`Lp::reduced`) as a program of their own, two at a time when
/// `beside`. A link between runs is 1 (apart), so the rounding tries it
/// after the rest; so is every link of a run whose solve stops (and
/// whether the time limit stopped one is returned beside the point). Each
/// run is solved as it would be alone, so the point does not depend on
/// which thread took it.
pub fn chunked_relaxation(g: &DepGraph, cfg: &super::ClusterConfig, m: &Model, chunk_nodes: usize, beside: bool) -> (Vec<f64>, bool) {
    let lp = m.lp.reduced(&m.arrays_written());
    let n = g.len().max(1);
    let runs = n.div_ceil(chunk_nodes.max(1));
    let run = |a: usize| a * runs / n;
    // Each variable's run: a link's when both ends are in one; None for
    // the arrays' and reads' variables, which go with their rows.
    let mut of: Vec<Option<usize>> = vec![None; lp.vars.len()];
    let mut across = vec![false; lp.vars.len()];
    for a in 0..g.len() {
        for v in std::iter::once(m.pi[a]).chain(m.orders.of(a)) {
            of[v.0] = Some(run(a));
        }
    }
    for ((a, b), x) in m.fused_edges.iter().chain(m.fused_siblings.iter()) {
        let (ra, rb) = (run(a.0 as usize), run(b.0 as usize));
        of[x.0] = Some(ra);
        across[x.0] = ra != rb;
    }
    let within = |r: &afc_ir::lp::Row, k: usize| r.terms.iter().all(|(v, _)| !across[v.0] && of[v.0].is_none_or(|c| c == k));
    let solved = super::each_at_once(beside, "afc-relax", runs, || (), |_, k| {
        let piece = lp.sub(|r| within(r, k));
        cfg.solver.relaxation(&piece.lp).solve(cfg.time_limit).map(|x| (piece.vars, x))
    });
    let mut point = vec![1.0; lp.vars.len()];
    let mut stopped = false;
    for (k, piece) in solved.into_iter().enumerate() {
        stopped |= piece.as_ref().is_err_and(|e| *e == afc_ir::lp::NoPoint::TimeLimit);
        for (v, x) in piece.into_iter().flat_map(|(vars, x)| vars.into_iter().zip(x)) {
            if of[v.0] == Some(k) && !across[v.0] {
                point[v.0] = x;
            }
        }
    }
    (point, stopped)
}

/// The model as the search gets it (`--emit=ilp`): `model`, with the root
/// cuts the relaxation breaks (separate.rs) unless it is too large to
/// relax (`RELAX_NNZ`, as the warm start's rounding), and the optimum of
/// its relaxation when one was solved.
pub fn solved_model(f: &Function, g: &DepGraph, cfg: &super::ClusterConfig) -> (Model, Option<Vec<f64>>) {
    let mut m = model(f, g, cfg.cost, cfg.model == super::IlpModel::Lazy, cfg.nodes.is_none());
    let (relaxation, _) = strengthen(g, cfg, &mut m);
    (m, relaxation)
}

/// The root cuts and the relaxation they end with, for a model of a size
/// that gets them, and whether the time limit cut them short.
fn strengthen(g: &DepGraph, cfg: &super::ClusterConfig, m: &mut Model) -> (Option<Vec<f64>>, bool) {
    if g.is_empty() || (cfg.nodes.is_none() && !m.relax) {
        return (None, false);
    }
    let reach = m.reach.clone();
    super::separate::strengthen(g, &reach, m, cfg.solver, cfg.time_limit)
}

/// Solves the model, warm-started from the greedy clustering, adding the
/// lazy cuts each solution breaks until one is legal, and reads the
/// clustering back: the connected components of fused edges and fused
/// sibling pairs (decision 8).
pub fn cluster(f: &Function, g: &DepGraph, cfg: &super::ClusterConfig) -> Clustering {
    solve(f, g, cfg).0
}

/// `cluster`, with the model as it ended: the rows it was built with and
/// the lazy cuts the solve added (`--emit=ilp`).
pub fn solve(f: &Function, g: &DepGraph, cfg: &super::ClusterConfig) -> (Clustering, Lp) {
    if g.is_empty() {
        let m = model(f, g, cfg.cost, cfg.model == super::IlpModel::Lazy, cfg.nodes.is_none());
        return (Clustering::new(vec![], "ilp: empty"), m.lp);
    }
    // Greedy first: at the objective's trivial bound it is optimal, and
    // no relaxation need be solved (a long chain of maps fuses whole).
    // It needs nothing of the model, so on a large graph it runs beside
    // the model's building, on a second thread (the two take about as
    // long at 10,000 combinators; each result is the same either way).
    // (Where no thread can be started, greedy runs after the model.)
    let (mut m, greedy) = super::at_once(
        g.len() > super::greedy::BATCH_NODES,
        "afc-greedy",
        || model(f, g, cfg.cost, cfg.model == super::IlpModel::Lazy, cfg.nodes.is_none()),
        || super::greedy::cluster(f, g),
    );
    let reach = m.reach.clone();
    // Greedy's clustering fuses every dominated pair (a start that did
    // not would be rebuilt with them merged first: the solver must be
    // able to take it).
    let greedy = super::dominance::respecting(f, g, &m.dominated, greedy);
    let values = m.assignment(f, g, &greedy);
    let (relaxation, cut_short) = if m.lp.at_trivial_bound(&values) { (None, false) } else { strengthen(g, cfg, &mut m) };
    let mut warm = warm_start_from(f, g, cfg, &m, relaxation, greedy);
    warm.stopped |= cut_short;
    // The lazy model's rows are not all there, so a window's answer could
    // break one it lacks: only the edge model is searched in windows.
    let lazy = cfg.model == super::IlpModel::Lazy;
    if !lazy {
        warm.near = Some(m.locality());
    }
    let label = if cfg.cost == CostModel::Traffic { "ilp".to_string() } else { format!("ilp (cost {})", cfg.cost.name()) };
    // Moved, not copied: what the closures below use of the model is the rest.
    let lp = std::mem::take(&mut m.lp);
    // The edge model states every rule, so only the lazy one has rows a
    // solution can break (a whole check of them costs the square of the
    // graph: 0.5 s at 8,000 combinators).
    super::solve_checked(f, g, cfg, lp, &label, Some(warm), |v| if lazy { m.cuts(g, &reach, v) } else { vec![] }, |v| Some(m.repair(f, g, v)), |sol| m.read(f, g, &sol.values))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_covering_row_whose_set_holds_another_is_left_out() {
        let set = |xs: &[usize]| xs.iter().map(|&x| LpVar(x)).collect::<Vec<_>>();
        let sets = [set(&[1, 2, 3]), set(&[1, 2]), set(&[2, 3, 4]), set(&[4]), set(&[1, 3]), set(&[1, 2]), set(&[0, 5])];
        let keep = covering_rows(sets.iter().map(|s| s.as_slice()).collect());
        // {1,2,3} ⊇ {1,2}; {2,3,4} ⊇ {4}; the second {1,2} repeats the first.
        assert_eq!(keep, [false, true, false, true, true, false, true]);
    }

    /// The separation rows grown on two threads are those grown on one,
    /// in the same order, with the same names: chunks of roots are taken
    /// as the threads come, then put back in order.
    #[test]
    fn separation_rows_are_the_same_on_two_threads() {
        // Chains of maps over two inputs, each fold captured by maps
        // further on (separating nodes a fold's path runs through), and
        // maps reading both chains.
        let mut src = String::from("export fn chains(xs: [f64], ys: [f64]) -> ([f64], [f64], f64) {\n  let x0 = map(|x| x + 1.0, xs);\n  let y0 = map(|y| y * 2.0, ys);\n  let t0 = 0.0;\n");
        for i in 1..400 {
            let t = if i % 7 == 0 { format!("t{}", i - 7) } else { "0.5".to_string() };
            src += &format!("  let x{i} = map(|a, x| a * {t} + x, x{}, xs);\n  let y{i} = map(|a, b| a + b * {t}, y{}, x{});\n", i - 1, i - 1, i / 2);
            if i % 7 == 0 {
                src += &format!("  let t{i} = fold((+), 0.0, y{});\n", i - 3);
            }
        }
        src += "  (x399, y399, t399)\n}\n";
        let file = afc_ir::diag::SourceFile::new("chains.acc", src);
        let opts = crate::pipeline::Options {
            cluster: super::super::ClusterConfig { mode: super::super::FusionMode::None, model: super::super::IlpModel::Edge, cost: CostModel::Traffic, nodes: None, time_limit: 1.0, solver: &afc_cluster_highs::Highs },
            strategy: Default::default(),
            verify: true,
            verbose: false,
            notes: false,
            time_passes: false,
            lower: true,
        };
        let (p, _) = crate::pipeline::front(&file, &opts).unwrap_or_else(|d| panic!("{}", afc_ir::diag::render_all(&d, &file)));
        let stages = crate::pipeline::middle(&file, p, &opts).unwrap_or_else(|d| panic!("{}", afc_ir::diag::render_all(&d, &file)));
        let fs = &stages.functions[0];
        let (f, g) = (&fs.labelled, &fs.graph);
        assert!(g.len() > super::super::greedy::BATCH_NODES, "{} nodes", g.len());
        let m = model(f, g, CostModel::Traffic, false, false);
        let reach = g.reach().unwrap();
        let rows = |beside| {
            let (rows, implied) = separation_rows(g, &reach, &m.lp, &m.fused_edges, &m.fused_siblings, None, beside);
            (rows.into_iter().map(|r| (r.name, r.terms)).collect::<Vec<_>>(), implied)
        };
        let (one, two) = (rows(false), rows(true));
        // (2,272 rows, from 857 roots in 27 chunks.)
        assert!(one.0.len() > 1000, "{} rows", one.0.len());
        assert_eq!(one, two);
        assert_eq!(two, rows(true));
    }
}
