//! A clustering: the nodes of a function partitioned into clusters, listed
//! in execution order, each one loop nest. With its printer
//! (`--emit=clusters`, whose format LANGUAGE.md fixes) and the check that
//! every clustering passes before it is used (DESIGN.md decision 14).

use crate::graph::{DepGraph, Edge, EdgeKind};
use crate::labelled::{Function, NodeId, VarId};
use indexmap::IndexSet;
use std::fmt::Write;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
    orders_within(f, g, scope, &mut out, unset.as_deref_mut(), &mut Scratch::default())?;
    Ok(out)
}

/// Buffers kept from one `orders_within` or `Joins::check` to the next
/// (greedy asks them of one small cluster after another in a graph of
/// thousands: a map or list per node and ask was half of a 10,000-combinator
/// clustering). Lists per node are kept as one array of items and each
/// node's start in it, the node's place in the scope indexing `start`.
#[derive(Default)]
pub struct Scratch {
    /// Each scope node's place in `Scope::nodes` (by node id; other
    /// entries are stale).
    local: Vec<u32>,
    /// Each scope node's fused edges, as indices into `edges`.
    incident: Lists,
    /// Each scope node's sibling pairs, as indices into `Scope::together`.
    touching: Lists,
    edges: Vec<(usize, usize, Read)>,
    set: Vec<usize>,
    stack: Vec<usize>,
    touched: Vec<usize>,
    pending: BinaryHeap<Reverse<usize>>,
}

/// A list per node in one array: node `i`'s items are
/// `items[start[i]..start[i + 1]]`, in the order they were given (for
/// searches that build lists per node many times over: a vector per node
/// each time was most of their cost).
#[derive(Default)]
pub struct Lists<T = u32> {
    start: Vec<u32>,
    items: Vec<T>,
}

impl<T: Copy + Default> Lists<T> {
    /// Fills the lists of `n` nodes from `(node, item)` pairs (the iterator
    /// is run twice: to count, then to place).
    pub fn fill(&mut self, n: usize, entries: impl Iterator<Item = (u32, T)> + Clone) {
        self.start.clear();
        self.start.resize(n + 2, 0);
        for (i, _) in entries.clone() {
            self.start[i as usize + 2] += 1;
        }
        for i in 2..self.start.len() {
            self.start[i] += self.start[i - 1];
        }
        self.items.clear();
        self.items.resize(self.start[n + 1] as usize, T::default());
        // `start[i + 1]` is where node i's next item goes; once placed,
        // `start[i]..start[i + 1]` are its items.
        for (i, x) in entries {
            let at = &mut self.start[i as usize + 1];
            self.items[*at as usize] = x;
            *at += 1;
        }
        self.start.pop();
    }

    pub fn of(&self, i: u32) -> &[T] {
        &self.items[self.start[i as usize] as usize..self.start[i as usize + 1] as usize]
    }
}

/// A constraint between a producer p and a consumer c on one fused edge:
/// o_p = read(c).
#[derive(Clone, Copy)]
enum Read {
    Same,
    Flipped,
    Label(u32),
}

/// `solve_orders` in buffers the caller keeps. With `unset`, the orders
/// are found — `unset` is None at the scope's nodes on entry and again on
/// return, and `out` gets the scope's nodes' orders (no other entry is
/// written); without, `out`'s are checked.
pub fn orders_within(f: &Function, g: &DepGraph, scope: &Scope, out: &mut [u32], unset: Option<&mut [Option<u32>]>, scratch: &mut Scratch) -> Result<(), String> {
    let producers = scope.producers;
    let name = |a: usize| f.node(NodeId(a as u32)).name.clone();
    let Scratch { local, incident, touching, edges, set, stack, touched, pending } = scratch;
    edges.clear();
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
    let edges = &*edges;
    let check = |order: &[u32]| -> Result<(), String> {
        for &(p, c, r) in edges {
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
    let nodes = scope.nodes;
    if local.len() < g.len() {
        local.resize(g.len(), 0);
    }
    for (i, a) in nodes.iter().enumerate() {
        local[a.0 as usize] = i as u32;
    }
    let local = &*local;
    // Every fused edge and sibling pair is inside the scope, so `local`
    // holds its ends' places.
    debug_assert!(edges.iter().flat_map(|&(p, c, _)| [p, c]).chain(scope.together.iter().flat_map(|&(a, b, _)| [a.0 as usize, b.0 as usize])).all(|a| nodes.get(local[a] as usize).is_some_and(|n| n.0 as usize == a)));
    // Each node's fused edges, in `edges` order (the order the propagation
    // below visits them in).
    let ends = edges.iter().enumerate().flat_map(|(i, &(p, c, _))| [Some((local[p], i as u32)), (c != p).then_some((local[c], i as u32))]).flatten();
    incident.fill(nodes.len(), ends);
    let incident = &*incident;
    // Propagates a value through the fused edges, adding the nodes it sets
    // to `set`; an inconsistency is reported by `check` at the end.
    let assign = |order: &mut [Option<u32>], s: usize, v: u32, set: &mut Vec<usize>, stack: &mut Vec<usize>| {
        order[s] = Some(v);
        set.push(s);
        stack.clear();
        stack.push(s);
        while let Some(x) = stack.pop() {
            let ox = order[x].unwrap();
            for &(p, c, r) in incident.of(local[x]).iter().map(|&i| &edges[i as usize]) {
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
    };
    // Gather sources first (their label is forced), then required orders.
    // Every node set, to unset again at the end.
    touched.clear();
    for &(p, _, r) in edges {
        if let (Read::Label(l), None) = (r, order[p]) {
            assign(order, p, l, touched, stack);
        }
    }
    for s in nodes.iter().map(|s| s.0 as usize) {
        if order[s].is_none() {
            if let Some(req) = f.node(NodeId(s as u32)).fixed_order() {
                assign(order, s, req as u32, touched, stack);
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
    let ends = together.iter().enumerate().flat_map(|(i, &(a, b, _))| [(local[a.0 as usize], i as u32), (local[b.0 as usize], i as u32)]);
    touching.fill(nodes.len(), ends);
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
    pending.clear();
    pending.extend((0..together.len()).map(Reverse));
    // Orders are only ever set, so the first node without one only moves on.
    let mut first_unset = 0;
    loop {
        let mut next = None;
        while let Some(Reverse(i)) = pending.pop() {
            if let Some(d) = decides(order, i) {
                next = Some(d);
                break;
            }
        }
        set.clear();
        match next {
            Some((u, v)) => assign(order, u, v, set, stack),
            None => {
                while first_unset < nodes.len() && order[nodes[first_unset].0 as usize].is_some() {
                    first_unset += 1;
                }
                if first_unset == nodes.len() {
                    break;
                }
                assign(order, nodes[first_unset].0 as usize, 0, set, stack)
            }
        };
        for &s in set.iter() {
            pending.extend(touching.of(local[s]).iter().map(|&i| Reverse(i as usize)));
        }
        touched.extend_from_slice(set);
    }
    for a in nodes.iter().map(|a| a.0 as usize) {
        out[a] = order[a].unwrap_or(0);
    }
    // Only the scope's nodes are set (the edges propagated through and the
    // pairs read are inside it), and every one of them is: the loop ends
    // when none is left.
    debug_assert!(touched.len() == nodes.len());
    for &a in touched.iter() {
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
    let mut inside = Lists::default();
    let within: Vec<(NodeId, NodeId)> = links(f, g, &ord).filter(|(a, b)| of[a] == of[b]).collect();
    inside.fill(g.len(), within.iter().flat_map(|(a, b)| [(a.0, b.0), (b.0, a.0)]));
    let mut marks = Marks::default();
    for (i, members) in c.clusters.iter().enumerate() {
        cluster_rules(f, g, i, members, &|n| of[&n] == i, &ord, &|n| inside.of(n.0), &mut marks)?;
    }
    Ok(())
}

/// Marks on the entries of a table (nodes, variables), cleared all at once
/// by a new stamp.
#[derive(Default)]
pub struct Marks {
    mark: Vec<u32>,
    stamp: u32,
}

impl Marks {
    /// Clears every mark, for a table of `n` entries.
    pub fn fresh(&mut self, n: usize) {
        if self.mark.len() < n {
            self.mark.resize(n, 0);
        }
        if self.stamp == u32::MAX {
            self.mark.fill(0);
            self.stamp = 0;
        }
        self.stamp += 1;
    }

    /// Marks entry `i`; whether it was unmarked.
    pub fn insert(&mut self, i: usize) -> bool {
        let new = self.mark[i] != self.stamp;
        self.mark[i] = self.stamp;
        new
    }

    pub fn contains(&self, i: usize) -> bool {
        self.mark[i] == self.stamp
    }
}

/// What `verify` asks of cluster `i` alone, given the nodes' orders and
/// each node's links inside its cluster (as node ids): one iteration size
/// down the transducer forest, and connected.
#[allow(clippy::too_many_arguments)]
fn cluster_rules<'x>(f: &Function, g: &DepGraph, i: usize, members: &[NodeId], of_it: &dyn Fn(NodeId) -> bool, ord: &[u32], linked: &dyn Fn(NodeId) -> &'x [u32], marks: &mut Marks) -> Result<(), String> {
    // papers/000 §1.3.6: iteration sizes may differ only down the
    // transducer forest, with every transducer on the way in the cluster.
    let sizes = &g.sizes;
    let descent = sizes.descent();
    // Nodes evaluated at a gather's indices run at the gather's rate.
    let rated = || members.iter().copied().filter(|n| ord[n.0 as usize] <= 1);
    let Some(root) = rated().map(|n| sizes.of_node(n)).min_by_key(|s| (descent.depth(*s), s.0)) else {
        return Err(format!("cluster {} has no loop of its own", i));
    };
    // Down the transducer forest: first whether each node's size reaches
    // the root, then its transducers. A size passed on the way is marked
    // and ends later walks, which would find what this one did: each path
    // is walked once, not once per node below it (nested filters thousands
    // deep made that quadratic).
    marks.fresh(sizes.transducer.len());
    for n in rated() {
        let mut s = sizes.of_node(n);
        while s != root && marks.insert(s.0 as usize) {
            match sizes.transducer[s.0 as usize] {
                Some(t) => s = sizes.of_node(t),
                None => return Err(format!("cluster {} mixes unrelated iteration sizes ('{}')", i, f.node(n).name)),
            }
        }
    }
    marks.fresh(sizes.transducer.len());
    for n in rated() {
        let mut s = sizes.of_node(n);
        while s != root && marks.insert(s.0 as usize) {
            let t = sizes.transducer[s.0 as usize].expect("the path reaches the root");
            if !of_it(t) {
                return Err(format!("cluster {}: '{}' runs at the sub-rate of filter '{}', which is not in the cluster", i, f.node(n).name, f.node(t).name));
            }
            s = sizes.of_node(t);
        }
    }
    // Connectivity through fused edges and shared reads (two readers of
    // one array in one order).
    marks.fresh(g.len());
    let mut reached = 0;
    let mut stack = vec![members[0].0];
    while let Some(n) = stack.pop() {
        if marks.insert(n as usize) {
            reached += 1;
            stack.extend(linked(NodeId(n)).iter().filter(|m| !marks.contains(**m as usize)));
        }
    }
    if reached != members.len() {
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
    /// Each node's arrays with the number of edges it sends each along.
    sent: Vec<Vec<(u32, u32)>>,
    /// Buffers kept from one check to the next.
    bufs: std::cell::RefCell<JoinBufs<'a>>,
}

#[derive(Default)]
struct JoinBufs<'a> {
    /// `orders_within`'s.
    unset: Vec<Option<u32>>,
    ord: Vec<u32>,
    orders: Scratch,
    /// The cluster's fused edges, with their graph indices, and as the
    /// scope lists them.
    indexed: Vec<(usize, NodeId, NodeId, &'a Edge)>,
    fused: Vec<(NodeId, NodeId, &'a Edge)>,
    pairs: Vec<usize>,
    together: Vec<(NodeId, NodeId, &'a Vec<VarId>)>,
    /// Arrays read outside the cluster; each array's edges out of the
    /// members less those into them, and the arrays that count touched.
    written: Marks,
    balance: Vec<i32>,
    touched: Vec<usize>,
    /// Each member's place in the members, and its links inside.
    local: Vec<u32>,
    links: Lists,
    marks: Marks,
}

impl<'a> Joins<'a> {
    pub fn new(f: &'a Function, g: &'a DepGraph) -> Joins<'a> {
        let mut pairs_of = vec![vec![]; g.len()];
        for (i, (a, b)) in g.siblings().keys().enumerate() {
            pairs_of[a.0 as usize].push(i);
            pairs_of[b.0 as usize].push(i);
        }
        use petgraph::visit::EdgeRef;
        let mut sent: Vec<Vec<(u32, u32)>> = vec![vec![]; g.len()];
        for e in g.graph.edge_references() {
            let list = &mut sent[g.graph[e.source()].0 as usize];
            for v in e.weight().vars.iter().filter(|v| f.var(**v).ty.is_array()) {
                match list.iter_mut().find(|(w, _)| *w == v.0) {
                    Some((_, n)) => *n += 1,
                    None => list.push((v.0, 1)),
                }
            }
        }
        let bufs = JoinBufs { unset: vec![None; g.len()], ord: vec![0; g.len()], local: vec![0; g.len()], balance: vec![0; f.vars.len()], ..JoinBufs::default() };
        Joins { f, g, pairs_of, producers: f.producers(), sent, bufs: std::cell::RefCell::new(bufs) }
    }

    fn add(balance: &mut [i32], touched: &mut Vec<usize>, v: usize, n: i32) {
        if balance[v] == 0 {
            touched.push(v);
        }
        balance[v] += n;
    }

    /// Whether `members` (in id order; `inside` says who they are) pass
    /// `verify`'s rules as one cluster; `Err` with its reason otherwise.
    pub fn check(&self, members: &[NodeId], inside: &dyn Fn(NodeId) -> bool) -> Result<(), String> {
        let (f, g) = (self.f, self.g);
        use petgraph::visit::EdgeRef;
        let mut bufs = self.bufs.borrow_mut();
        let JoinBufs { unset, ord, orders, indexed, fused, pairs, together, written, balance, touched, local, links, marks } = &mut *bufs;
        indexed.clear();
        // The fused edges, found from their consumers: a node may feed
        // thousands (one array read by every map), its cluster few of them.
        // An array leaves the cluster where the members send it along more
        // edges than the members take it in (`balance`).
        for &b in members {
            for e in g.graph.edges_directed(DepGraph::idx(b), petgraph::Direction::Incoming) {
                let a = g.graph[e.source()];
                if inside(a) {
                    indexed.push((e.id().index(), a, b, e.weight()));
                    for v in e.weight().vars.iter().filter(|v| f.var(**v).ty.is_array()) {
                        Self::add(balance, touched, v.0 as usize, -1);
                    }
                }
            }
            for &(v, n) in &self.sent[b.0 as usize] {
                Self::add(balance, touched, v as usize, n as i32);
            }
        }
        written.fresh(f.vars.len());
        for v in touched.drain(..) {
            if balance[v] > 0 {
                written.insert(v);
            }
            balance[v] = 0;
        }
        if let Some(&(_, a, b, _)) = indexed.iter().filter(|e| !e.3.is_fusible()).min_by_key(|e| (e.1, e.0)) {
            return Err(format!("fusion-preventing edge '{}' -> '{}' inside the cluster", f.node(a).name, f.node(b).name));
        }
        indexed.sort_unstable_by_key(|e| e.0);
        fused.clear();
        fused.extend(indexed.iter().map(|&(_, a, b, e)| (a, b, e)));
        let siblings = g.siblings();
        pairs.clear();
        pairs.extend(members.iter().flat_map(|a| self.pairs_of[a.0 as usize].iter().copied()).filter(|&i| {
            let (a, b) = siblings.get_index(i).expect("a sibling pair").0;
            inside(*a) && inside(*b)
        }));
        pairs.sort_unstable();
        pairs.dedup();
        together.clear();
        together.extend(pairs.iter().map(|&i| {
            let (&(a, b), xs) = siblings.get_index(i).expect("a sibling pair");
            (a, b, xs)
        }));
        let same = |a: NodeId, b: NodeId| inside(a) && inside(b);
        let written = &*written;
        let manifest = |v: VarId| g.forced_manifest.contains(&v) || written.contains(v.0 as usize);
        let scope = Scope { nodes: members, fused, together, same: &same, manifest: &manifest, producers: &self.producers };
        orders_within(f, g, &scope, ord, Some(unset), orders)?;
        let ord = &*ord;
        for (i, a) in members.iter().enumerate() {
            local[a.0 as usize] = i as u32;
        }
        let shared = together.iter().filter(|(a, b, xs)| xs.iter().any(|x| read_order(f, g, ord, *x, *a) == read_order(f, g, ord, *x, *b)));
        let ends = fused.iter().map(|(a, b, _)| (*a, *b)).chain(shared.map(|(a, b, _)| (*a, *b))).flat_map(|(a, b)| [(local[a.0 as usize], b.0), (local[b.0 as usize], a.0)]);
        links.fill(members.len(), ends);
        let (links, local) = (&*links, &*local);
        cluster_rules(f, g, 0, members, inside, ord, &|n| links.of(local[n.0 as usize]), marks)
    }
}
