//! A clustering: the nodes of a function partitioned into clusters, listed
//! in execution order, each one loop nest. With its printer
//! (`--emit=clusters`, whose format LANGUAGE.md fixes) and the check that
//! every clustering passes before it is used (DESIGN.md decision 14).

use crate::graph::{DepGraph, Edge, EdgeKind};
use crate::labelled::{Function, NodeId, VarId};
use indexmap::IndexSet;
use std::fmt::Write;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

#[derive(Clone, Debug, PartialEq)]
pub struct Clustering {
    /// Clusters in execution order; members in source order.
    pub clusters: Vec<Vec<NodeId>>,
    /// How it was found, for `-v` ("ilp: optimal", "greedy", …).
    pub how: String,
    /// The traversal order of every node, when the clustering's maker chose
    /// them (the ILP); empty to let `orders` choose.
    pub orders: Vec<u32>,
}

impl Clustering {
    pub fn new(clusters: Vec<Vec<NodeId>>, how: impl Into<String>) -> Clustering {
        Clustering { clusters, how: how.into(), orders: vec![] }
    }
}

/// Each node's cluster (`Clustering::cluster_of`), indexed by node id: the
/// clustering checks look it up for every edge, many times per greedy step.
#[derive(Clone, Debug, Default)]
pub struct ClusterOf {
    of: Vec<Option<usize>>,
    len: usize,
}

impl ClusterOf {
    pub fn get(&self, n: &NodeId) -> Option<&usize> {
        self.of.get(n.0 as usize).and_then(|c| c.as_ref())
    }

    /// How many nodes are in some cluster.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl std::ops::Index<&NodeId> for ClusterOf {
    type Output = usize;
    fn index(&self, n: &NodeId) -> &usize {
        self.get(n).unwrap_or_else(|| panic!("node {} is in no cluster", n.0))
    }
}

impl Clustering {
    /// Each node's cluster; a node listed twice counts once, in its last
    /// cluster.
    pub fn cluster_of(&self) -> ClusterOf {
        let size = self.clusters.iter().flatten().map(|n| n.0 as usize + 1).max().unwrap_or(0);
        let mut m = ClusterOf { of: vec![None; size], len: 0 };
        for (i, c) in self.clusters.iter().enumerate() {
            for n in c {
                let slot = &mut m.of[n.0 as usize];
                m.len += slot.is_none() as usize;
                *slot = Some(i);
            }
        }
        m
    }

    /// Arrays written to memory: forced ones and those read outside their cluster.
    pub fn manifest(&self, f: &Function, g: &DepGraph) -> IndexSet<VarId> {
        let of = self.cluster_of();
        let mut m: IndexSet<VarId> = g.forced_manifest.iter().copied().collect();
        for (a, b, e) in g.edges() {
            if of[&a] != of[&b] {
                for v in &e.vars {
                    if f.var(*v).ty.is_array() {
                        m.insert(*v);
                    }
                }
            }
        }
        m
    }
}

/// The traversal order of every node (papers/002 §3.3, §4.2): 0 = left to
/// right, 1 = right to left, or a gather's label (2, 3, …) for a node
/// evaluated at that gather's indices. Each fused edge must connect the
/// producer's order to the consumer's read order (its own, the opposite for
/// a reverse, the label for a gather's source); required orders must hold;
/// only nodes that compute an element alone and cannot fail may take a
/// label (`Function::label_computable`), and a node whose
/// output is written to memory must run in order 0 or 1 (every element is
/// computed). `Err` if no such orders exist. Unconstrained nodes run left
/// to right, following shared reads where they can.
pub fn orders(f: &Function, g: &DepGraph, c: &Clustering) -> Result<Vec<u32>, String> {
    let of = c.cluster_of();
    let manifest = c.manifest(f, g);
    let nodes: Vec<NodeId> = g.nodes().collect();
    let fused: Vec<(NodeId, NodeId, &Edge)> = g.edges().filter(|(a, b, _)| of[a] == of[b]).collect();
    let together: Vec<(NodeId, NodeId, &Vec<VarId>)> = g.siblings().iter().filter(|((a, b), _)| of[a] == of[b]).map(|(&(a, b), xs)| (a, b, xs)).collect();
    let given = (!c.orders.is_empty()).then_some(c.orders.as_slice());
    let producers = f.producers();
    solve_orders(f, g, &Scope { nodes: &nodes, fused: &fused, together: &together, same: &|a, b| of[&a] == of[&b], manifest: &|v| manifest.contains(&v), producers: &producers }, given)
}

/// Where `solve_orders` looks: `nodes` (in id order) and, among them, the
/// fused edges (in the graph's order) and sibling pairs (in `siblings`'
/// order) inside their clusters; which nodes share a cluster; which arrays
/// are written to memory; each variable's producer. A cluster's orders depend on nothing outside
/// it, so the nodes of one cluster give the orders `orders` gives them.
pub struct Scope<'a> {
    pub nodes: &'a [NodeId],
    pub fused: &'a [(NodeId, NodeId, &'a Edge)],
    pub together: &'a [(NodeId, NodeId, &'a Vec<VarId>)],
    pub same: &'a dyn Fn(NodeId, NodeId) -> bool,
    pub manifest: &'a dyn Fn(VarId) -> bool,
    /// `Function::producers`.
    pub producers: &'a [Option<NodeId>],
}

/// `orders` over a scope: each of its nodes' order (indexed by node id;
/// nodes outside it get 0), or the `given` ones checked.
pub fn solve_orders(f: &Function, g: &DepGraph, scope: &Scope, given: Option<&[u32]>) -> Result<Vec<u32>, String> {
    let mut out = given.map_or_else(|| vec![0; g.len()], <[u32]>::to_vec);
    let mut unset = given.is_none().then(|| vec![None; g.len()]);
    orders_within(f, g, scope, &mut out, unset.as_deref_mut())?;
    Ok(out)
}

/// `solve_orders` in buffers the caller keeps (greedy asks it of one small
/// cluster after another in a graph of thousands: two lists of the whole
/// graph per ask were a tenth of a 10,000-combinator clustering). With
/// `unset`, the orders are found — `unset` is None at the scope's nodes
/// on entry and again on return, and `out` gets the scope's nodes' orders
/// (no other entry is written); without, `out`'s are checked.
pub fn orders_within(f: &Function, g: &DepGraph, scope: &Scope, out: &mut [u32], unset: Option<&mut [Option<u32>]>) -> Result<(), String> {
    let producers = scope.producers;
    let name = |a: usize| f.node(NodeId(a as u32)).name.clone();
    // A constraint between a producer p and a consumer c: o_p = read(c).
    #[derive(Clone, Copy)]
    enum Read {
        Same,
        Flipped,
        Label(u32),
    }
    let mut edges: Vec<(usize, usize, Read)> = vec![];
    for &(a, b, e) in scope.fused {
        if let EdgeKind::Fusible { order } = e.kind {
            let r = if order >= 2 {
                Read::Label(order)
            } else if f.node(b).flips_order() {
                Read::Flipped
            } else {
                Read::Same
            };
            edges.push((a.0 as usize, b.0 as usize, r));
        }
    }
    let check = |order: &[u32]| -> Result<(), String> {
        for &(p, c, r) in &edges {
            let want = match r {
                Read::Same => order[c],
                Read::Flipped if order[c] <= 1 => 1 - order[c],
                Read::Flipped => return Err(format!("reverse '{}' cannot run at a gather's indices", name(c))),
                Read::Label(l) => l,
            };
            if order[p] != want {
                return Err(format!("'{}' and '{}' need different traversal orders in one cluster", name(p), name(c)));
            }
        }
        for a in scope.nodes.iter().map(|a| a.0 as usize) {
            let o = &order[a];
            let node = f.node(NodeId(a as u32));
            if let Some(req) = node.fixed_order() {
                if *o != req as u32 {
                    return Err(format!("'{}' must run {}", node.name, if req == 0 { "left to right" } else { "right to left" }));
                }
            }
            if *o >= 2 && !node.index_computable() {
                return Err(format!("'{}' cannot be evaluated at a gather's indices", node.name));
            }
            if *o >= 2 && !f.may_take_label(NodeId(a as u32)) {
                return Err(format!("'{}' may fail, so it cannot run at a gather's indices only (an element not gathered would skip its error)", node.name));
            }
            if *o >= 2 {
                if let Some(ix) = f.index_arrays_checked(NodeId(a as u32)).into_iter().find(|ix| producers[ix.0 as usize].is_some_and(|p| (scope.same)(p, NodeId(a as u32)))) {
                    return Err(format!("gather '{}' runs at a gather's indices, so its index array %{} must be in memory before its loop (its whole is checked first), not made in it", node.name, f.var_name(ix)));
                }
            }
            if *o >= 2 && !edges.iter().any(|(p, _, _)| *p == a) {
                return Err(format!("'{}' runs at a gather's indices but feeds nothing there", node.name));
            }
            if *o >= 2 && node.outputs().iter().any(|v| (scope.manifest)(*v)) {
                return Err(format!("'{}' is written to memory, so it cannot run at a gather's indices (it would be only partly computed)", node.name));
            }
        }
        Ok(())
    };
    let Some(order) = unset else { return check(out) };
    // Each node's fused edges, in `edges` order (the order the propagation
    // below visits them in).
    // (Keyed by node, not a list per node of the graph: greedy asks this
    // of one small cluster after another in a graph of thousands.)
    let mut incident: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, &(p, c, _)) in edges.iter().enumerate() {
        incident.entry(p).or_default().push(i);
        if c != p {
            incident.entry(c).or_default().push(i);
        }
    }
    // Propagates a value through the fused edges; an inconsistency is
    // reported by `check` at the end.
    // Returns the nodes it set.
    let assign = |order: &mut [Option<u32>], s: usize, v: u32| -> Vec<usize> {
        order[s] = Some(v);
        let mut set = vec![s];
        let mut stack = vec![s];
        while let Some(x) = stack.pop() {
            let ox = order[x].unwrap();
            for &(p, c, r) in incident.get(&x).into_iter().flatten().map(|&i| &edges[i]) {
                let (other, val) = if c == x {
                    let v = match r {
                        Read::Same => Some(ox),
                        Read::Flipped => (ox <= 1).then(|| 1 - ox),
                        Read::Label(l) => Some(l),
                    };
                    (p, v)
                } else if p == x {
                    let v = match r {
                        Read::Same => Some(ox),
                        Read::Flipped => (ox <= 1).then(|| 1 - ox),
                        Read::Label(_) => None,
                    };
                    (c, v)
                } else {
                    continue;
                };
                if let (None, Some(v)) = (order[other], val) {
                    order[other] = Some(v);
                    stack.push(other);
                    set.push(other);
                }
            }
        }
        set
    };
    // Gather sources first (their label is forced), then required orders.
    // Every node set, to unset again at the end.
    let mut touched = vec![];
    for &(p, _, r) in &edges {
        if let (Read::Label(l), None) = (r, order[p]) {
            touched.extend(assign(order, p, l));
        }
    }
    for s in scope.nodes.iter().map(|s| s.0 as usize) {
        if order[s].is_none() {
            if let Some(req) = f.node(NodeId(s as u32)).fixed_order() {
                touched.extend(assign(order, s, req as u32));
            }
        }
    }
    // Then shared reads: siblings in one cluster read in one order if they can.
    let read = |order: &[Option<u32>], a: usize, x: VarId| -> Option<u32> {
        if let Some(l) = g.gathered_order(x, NodeId(a as u32)) {
            return Some(l);
        }
        let o = order[a]?;
        Some(if f.node(NodeId(a as u32)).flips_order() { 1 - o.min(1) } else { o })
    };
    // The sibling pairs inside one cluster, in the graph's order. The first
    // pair (in that order) with one node's order known decides the other's;
    // then the first again. A pair can only become that first pair when one
    // of its nodes is set, so a heap of the pairs touched since they were
    // last looked at finds it without rescanning them all.
    let together = scope.together;
    let mut touching: HashMap<usize, Vec<usize>> = HashMap::new();
    for (i, &(a, b, _)) in together.iter().enumerate() {
        touching.entry(a.0 as usize).or_default().push(i);
        touching.entry(b.0 as usize).or_default().push(i);
    }
    // What pair `i` decides, if anything: (node, order).
    let decides = |order: &[Option<u32>], i: usize| -> Option<(usize, u32)> {
        let (a, b, xs) = together[i];
        for x in xs {
            for (known, unknown) in [(a, b), (b, a)] {
                let (k, u) = (known.0 as usize, unknown.0 as usize);
                if order[u].is_none() && g.gathered_order(*x, unknown).is_none() {
                    if let Some(r) = read(order, k, *x) {
                        // Shared reads never put a node at a gather's indices.
                        if r >= 2 {
                            continue;
                        }
                        return Some((u, if f.node(unknown).flips_order() { 1 - r } else { r }));
                    }
                }
            }
        }
        None
    };
    let mut pending: BinaryHeap<Reverse<usize>> = (0..together.len()).map(Reverse).collect();
    // Orders are only ever set, so the first node without one only moves on.
    let mut first_unset = 0;
    let nodes = scope.nodes;
    loop {
        let mut next = None;
        while let Some(Reverse(i)) = pending.pop() {
            if let Some(d) = decides(order, i) {
                next = Some(d);
                break;
            }
        }
        let set = match next {
            Some((u, v)) => assign(order, u, v),
            None => {
                while first_unset < nodes.len() && order[nodes[first_unset].0 as usize].is_some() {
                    first_unset += 1;
                }
                if first_unset == nodes.len() {
                    break;
                }
                assign(order, nodes[first_unset].0 as usize, 0)
            }
        };
        for &s in &set {
            pending.extend(touching.get(&s).into_iter().flatten().map(|&i| Reverse(i)));
        }
        touched.extend(set);
    }
    for a in nodes.iter().map(|a| a.0 as usize) {
        out[a] = order[a].unwrap_or(0);
    }
    // Only the scope's nodes are set (the edges propagated through and the
    // pairs read are inside it), and every one of them is: the loop ends
    // when none is left.
    debug_assert!(touched.len() == nodes.len());
    for a in touched {
        order[a] = None;
    }
    check(out)
}

/// The links that make nodes one loop (decision 8): every edge, and every
/// sibling pair that reads an array it shares in one order, given the
/// nodes' orders.
pub fn links<'a>(f: &'a Function, g: &'a DepGraph, orders: &'a [u32]) -> impl Iterator<Item = (NodeId, NodeId)> + 'a {
    let shared = g.siblings().iter().filter(move |((a, b), xs)| xs.iter().any(|x| read_order(f, g, orders, *x, *a) == read_order(f, g, orders, *x, *b)));
    g.edges().map(|(a, b, _)| (a, b)).chain(shared.map(|(&(a, b), _)| (a, b)))
}

/// The order in which node `c` reads array `x`, given the nodes' orders.
pub fn read_order(f: &Function, g: &DepGraph, orders: &[u32], x: VarId, c: NodeId) -> u32 {
    if let Some(l) = g.gathered_order(x, c) {
        return l;
    }
    let o = orders[c.0 as usize];
    if f.node(c).flips_order() && o <= 1 {
        1 - o
    } else {
        o
    }
}

/// `cluster N: NAME NAME …` lines per function (LANGUAGE.md).
pub fn print(f: &Function, c: &Clustering) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "fn {}", f.name);
    for (i, members) in c.clusters.iter().enumerate() {
        let names: Vec<&str> = members.iter().map(|n| f.node(*n).name.as_str()).collect();
        let _ = writeln!(out, "cluster {}: {}", i, names.join(" "));
    }
    out
}

/// Checks a clustering: every node in exactly one cluster, no
/// fusion-preventing edge inside a cluster, edges only forward in execution
/// order, one iteration size per cluster, and every cluster connected by
/// fused edges and shared reads.
pub fn verify(f: &Function, g: &DepGraph, c: &Clustering) -> Result<(), String> {
    let of = c.cluster_of();
    let total: usize = c.clusters.iter().map(|m| m.len()).sum();
    if total != g.len() || of.len() != g.len() {
        return Err("not every node is in exactly one cluster".into());
    }
    for (a, b, e) in g.edges() {
        let (ca, cb) = (of[&a], of[&b]);
        if ca > cb {
            return Err(format!("edge '{}' -> '{}' goes backwards (cluster {} to {})", f.node(a).name, f.node(b).name, ca, cb));
        }
        if ca == cb && !e.is_fusible() {
            return Err(format!("fusion-preventing edge '{}' -> '{}' inside cluster {}", f.node(a).name, f.node(b).name, ca));
        }
    }
    let ord = orders(f, g, c)?;
    // Each node's links inside its cluster.
    let mut inside: Links = HashMap::new();
    for (a, b) in links(f, g, &ord) {
        if of[&a] == of[&b] {
            inside.entry(a).or_default().push(b);
            inside.entry(b).or_default().push(a);
        }
    }
    for (i, members) in c.clusters.iter().enumerate() {
        cluster_rules(f, g, i, members, &|n| of[&n] == i, &ord, &inside)?;
    }
    Ok(())
}

/// Each node's links inside its cluster (only the nodes that have some).
type Links = HashMap<NodeId, Vec<NodeId>>;

/// What `verify` asks of cluster `i` alone, given the nodes' orders and
/// each node's links inside its cluster: one iteration size down the
/// transducer forest, and connected.
fn cluster_rules(f: &Function, g: &DepGraph, i: usize, members: &[NodeId], of_it: &dyn Fn(NodeId) -> bool, ord: &[u32], inside: &Links) -> Result<(), String> {
    // papers/000 §1.3.6: iteration sizes may differ only down the
    // transducer forest, with every transducer on the way in the cluster.
    let sizes = &g.sizes;
    // Nodes evaluated at a gather's indices run at the gather's rate.
    let rated: Vec<NodeId> = members.iter().copied().filter(|n| ord[n.0 as usize] <= 1).collect();
    let Some(root) = rated.iter().map(|n| sizes.of_node(*n)).min_by_key(|s| (sizes.depth(*s), s.0)) else {
        return Err(format!("cluster {} has no loop of its own", i));
    };
    for n in &rated {
        match sizes.path(sizes.of_node(*n), root) {
            None => return Err(format!("cluster {} mixes unrelated iteration sizes ('{}')", i, f.node(*n).name)),
            Some(ts) => {
                if let Some(t) = ts.iter().find(|t| !of_it(**t)) {
                    return Err(format!("cluster {}: '{}' runs at the sub-rate of filter '{}', which is not in the cluster", i, f.node(*n).name, f.node(*t).name));
                }
            }
        }
    }
    // Connectivity through fused edges and shared reads (two readers of
    // one array in one order).
    let mut seen: IndexSet<NodeId> = IndexSet::new();
    let mut stack = vec![members[0]];
    while let Some(n) = stack.pop() {
        if seen.insert(n) {
            stack.extend(inside.get(&n).into_iter().flatten().filter(|m| !seen.contains(*m)));
        }
    }
    if seen.len() != members.len() {
        return Err(format!("cluster {} is not connected", i));
    }
    Ok(())
}

/// `verify` one cluster at a time, for a search that joins two clusters
/// of a clustering that passes it (greedy): joining them changes no other
/// cluster's orders (a cluster's depend on nothing outside it) and only
/// takes arrays out of the manifest, so the joined cluster's edges,
/// orders, sizes and connectivity are all there is to check — and, the
/// caller's part, that the clusters stay acyclic.
pub struct Joins<'a> {
    f: &'a Function,
    g: &'a DepGraph,
    /// Each node's sibling pairs, as indices into `g.siblings()`.
    pairs_of: Vec<Vec<usize>>,
    producers: Vec<Option<NodeId>>,
    /// `orders_within`'s buffers, kept from one check to the next.
    unset: std::cell::RefCell<Vec<Option<u32>>>,
    ord: std::cell::RefCell<Vec<u32>>,
}

impl<'a> Joins<'a> {
    pub fn new(f: &'a Function, g: &'a DepGraph) -> Joins<'a> {
        let mut pairs_of = vec![vec![]; g.len()];
        for (i, (a, b)) in g.siblings().keys().enumerate() {
            pairs_of[a.0 as usize].push(i);
            pairs_of[b.0 as usize].push(i);
        }
        let (unset, ord) = (std::cell::RefCell::new(vec![None; g.len()]), std::cell::RefCell::new(vec![0; g.len()]));
        Joins { f, g, pairs_of, producers: f.producers(), unset, ord }
    }

    /// Whether `members` (in id order; `inside` says who they are) pass
    /// `verify`'s rules as one cluster; `Err` with its reason otherwise.
    pub fn check(&self, members: &[NodeId], inside: &dyn Fn(NodeId) -> bool) -> Result<(), String> {
        let (f, g) = (self.f, self.g);
        use petgraph::visit::EdgeRef;
        let mut fused: Vec<(usize, NodeId, NodeId, &Edge)> = vec![];
        let mut written: IndexSet<VarId> = IndexSet::new();
        for &a in members {
            for e in g.graph.edges(DepGraph::idx(a)) {
                let b = g.graph[e.target()];
                if inside(b) {
                    if !e.weight().is_fusible() {
                        return Err(format!("fusion-preventing edge '{}' -> '{}' inside the cluster", f.node(a).name, f.node(b).name));
                    }
                    fused.push((e.id().index(), a, b, e.weight()));
                } else {
                    written.extend(e.weight().vars.iter().copied().filter(|v| f.var(*v).ty.is_array()));
                }
            }
        }
        fused.sort_by_key(|e| e.0);
        let fused: Vec<(NodeId, NodeId, &Edge)> = fused.into_iter().map(|(_, a, b, e)| (a, b, e)).collect();
        let siblings = g.siblings();
        let mut pairs: Vec<usize> = members.iter().flat_map(|a| self.pairs_of[a.0 as usize].iter().copied()).filter(|&i| {
            let (a, b) = siblings.get_index(i).expect("a sibling pair").0;
            inside(*a) && inside(*b)
        }).collect();
        pairs.sort_unstable();
        pairs.dedup();
        let together: Vec<(NodeId, NodeId, &Vec<VarId>)> = pairs.iter().map(|&i| {
            let (&(a, b), xs) = siblings.get_index(i).expect("a sibling pair");
            (a, b, xs)
        }).collect();
        let same = |a: NodeId, b: NodeId| inside(a) && inside(b);
        let manifest = |v: VarId| g.forced_manifest.contains(&v) || written.contains(&v);
        let mut ord = self.ord.borrow_mut();
        let scope = Scope { nodes: members, fused: &fused, together: &together, same: &same, manifest: &manifest, producers: &self.producers };
        orders_within(f, g, &scope, &mut ord, Some(&mut self.unset.borrow_mut()))?;
        let ord = &*ord;
        let mut links: Links = HashMap::new();
        let shared = together.iter().filter(|(a, b, xs)| xs.iter().any(|x| read_order(f, g, &ord, *x, *a) == read_order(f, g, &ord, *x, *b)));
        for (a, b) in fused.iter().map(|(a, b, _)| (*a, *b)).chain(shared.map(|(a, b, _)| (*a, *b))) {
            links.entry(a).or_default().push(b);
            links.entry(b).or_default().push(a);
        }
        cluster_rules(f, g, 0, members, inside, &ord, &links)
    }
}
