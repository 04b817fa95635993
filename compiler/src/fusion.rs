//! Builds the fusion tree of each cluster from the clustering. Members are
//! taken in dependency order, rate by rate: at the cluster's root
//! iteration size, each member is combined with the tree of the members
//! after it (Vertical or Diagonal if those read its arrays, else
//! Horizontal); a filter carries the tree of the members that run at its
//! sub-rate, fused vertically (or diagonally) under it. Members that
//! iterate over more dimensions than the level's run in an inner `Loop`
//! per size of their next dimension, placed where the first of them is
//! scheduled: data flows only outwards (a fold's row results), so the
//! inner loop may run before the level's other members.

use afc_ir::cluster::Clustering;
use afc_ir::fusion::FusionTree;
use afc_ir::graph::DepGraph;
use afc_ir::labelled::{Function, NodeId, VarId};
use afc_ir::sizes::{Descent, SizeId};
use indexmap::IndexSet;
use std::collections::HashMap;

pub fn trees(f: &Function, g: &DepGraph, c: &Clustering) -> Vec<FusionTree> {
    let manifest = c.manifest(f, g);
    let ord = afc_ir::cluster::orders(f, g, c).expect("clusterings are checked before fusion trees are built");
    let label_of: std::collections::HashMap<u32, NodeId> = g.gather_label.iter().map(|(n, l)| (*l, *n)).collect();
    let descent = g.sizes.descent();
    let cluster_of = c.cluster_of();
    // Each node's place in its own cluster's schedule (a node is in one
    // cluster, so one table serves them all).
    let mut rank = vec![0usize; f.nodes.len()];
    c.clusters
        .iter()
        .enumerate()
        .map(|(cluster, members)| {
            let ms = schedule(g, members, &ord, &label_of);
            let sizes = &g.sizes;
            let root = ms
                .iter()
                .filter(|n| ord[n.0 as usize] <= 1)
                .map(|n| sizes.of_node(*n))
                .min_by_key(|s| (descent.depth(*s), s.0))
                .unwrap();
            for (i, n) in ms.iter().enumerate() {
                rank[n.0 as usize] = i;
            }
            let place = std::cell::RefCell::new(vec![NOWHERE; ms.len()]);
            let cx = Ctx { f, g, manifest: &manifest, ord: &ord, label_of: &label_of, descent, rank: &rank, cluster, cluster_of: &cluster_of, place };
            level(&cx, &ms, &[root])
        })
        .collect()
}

struct Ctx<'a> {
    f: &'a Function,
    g: &'a DepGraph,
    manifest: &'a IndexSet<VarId>,
    ord: &'a [u32],
    label_of: &'a std::collections::HashMap<u32, NodeId>,
    descent: &'a Descent,
    /// Each member's place in schedule order (by node id; a node of
    /// another cluster has its place in that one's).
    rank: &'a [usize],
    cluster: usize,
    cluster_of: &'a afc_ir::cluster::ClusterOf,
    /// `chain`'s scratch, by place in schedule order: the first item (and
    /// index among its nodes) of the level being chained that holds the
    /// member, `NOWHERE` outside that call.
    place: std::cell::RefCell<Vec<(usize, usize)>>,
}

const NOWHERE: (usize, usize) = (usize::MAX, 0);

impl Ctx<'_> {
    /// The shape a member runs at: its own, or for a node evaluated at a
    /// gather's indices, that gather's.
    fn shape(&self, n: NodeId) -> &[SizeId] {
        let mut n = n;
        while self.ord[n.0 as usize] >= 2 {
            n = self.label_of[&self.ord[n.0 as usize]];
        }
        self.g.sizes.node_shape(n)
    }
    fn pos(&self, n: NodeId) -> usize {
        self.rank[n.0 as usize]
    }
    fn member(&self, n: NodeId) -> bool {
        self.cluster_of.get(&n) == Some(&self.cluster)
    }
}

/// Members in an order that respects the edges inside the cluster and puts
/// the producer of a gather's indices before the nodes evaluated at them
/// (also through a chain of labels: a generate at a transpose's positions,
/// the transpose at a gather's); ties by node id (source order).
fn schedule(g: &DepGraph, members: &[NodeId], ord: &[u32], label_of: &std::collections::HashMap<u32, NodeId>) -> Vec<NodeId> {
    use petgraph::visit::EdgeRef;
    // Members' own edges, not every edge of the graph per cluster: that
    // was a tenth of a 10,000-combinator compile.
    let at: HashMap<NodeId, usize> = members.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut deps: Vec<(NodeId, NodeId)> = vec![];
    for &a in members {
        for e in g.graph.edges(DepGraph::idx(a)) {
            let b = g.graph[e.target()];
            if at.contains_key(&b) {
                deps.push((a, b));
            }
        }
    }
    for n in members {
        // A node at a label runs where that label's gather (or transpose)
        // reads, which may itself run at another label: it needs the index
        // arrays of every gather along that chain.
        let mut o = ord[n.0 as usize];
        let mut seen = vec![];
        while o >= 2 && !seen.contains(&o) {
            seen.push(o);
            let gather = label_of[&o];
            for e in g.graph.edges_directed(DepGraph::idx(gather), petgraph::Direction::Incoming) {
                let a = g.graph[e.source()];
                // The producer of the gather's index array (streamed, not its source).
                if at.contains_key(&a) && matches!(e.weight().kind, afc_ir::graph::EdgeKind::Fusible { order: 0 }) && a != *n {
                    deps.push((a, *n));
                }
            }
            o = ord[gather.0 as usize];
        }
    }
    // Kahn's order, the smallest ready node first (stable output). The
    // clustering was checked acyclic, so a node never ready is a bug.
    let mut waits = vec![0usize; members.len()];
    let mut unblocks: Vec<Vec<usize>> = vec![vec![]; members.len()];
    for (a, b) in &deps {
        waits[at[b]] += 1;
        unblocks[at[a]].push(at[b]);
    }
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<NodeId>> = members.iter().filter(|n| waits[at[*n]] == 0).map(|n| std::cmp::Reverse(*n)).collect();
    let mut out = Vec::with_capacity(members.len());
    while let Some(std::cmp::Reverse(n)) = ready.pop() {
        out.push(n);
        for &m in &unblocks[at[&n]] {
            waits[m] -= 1;
            if waits[m] == 0 {
                ready.push(std::cmp::Reverse(members[m]));
            }
        }
    }
    if out.len() < members.len() {
        let ids: Vec<String> = members.iter().filter(|n| waits[at[*n]] > 0).map(|n| format!("node {}", n.0)).collect();
        let edges: Vec<String> = deps.iter().map(|(a, b)| format!("{} -> {}", a.0, b.0)).collect();
        afc_ir::ice::fail("fusion-tree", "the members of a cluster depend on each other cyclically", &format!("members left: {}\nedges: {}", ids.join(", "), edges.join(", ")))
    }
    out
}

/// One item of a level: a member at the level's size, with (for a filter)
/// the tree of the members below it.
struct Item {
    node: NodeId,
    tree: FusionTree,
    nodes: Vec<NodeId>,
}

/// The tree of the members `ms` that run inside the loops of `prefix`:
/// those of exactly that shape at this level, the deeper ones in inner loops.
fn level(cx: &Ctx, ms: &[NodeId], prefix: &[SizeId]) -> FusionTree {
    let (f, g, manifest) = (cx.f, cx.g, cx.manifest);
    let sizes = &g.sizes;
    let mut items = vec![];
    for n in ms.iter().filter(|n| cx.shape(**n) == prefix) {
        let mut tree = FusionTree::Leaf(*n);
        let mut nodes = vec![*n];
        // A transducer (a filter, over vectors) carries the members at its
        // sub-rate.
        if f.node(*n).comb().transducer() {
            let sub = sizes.of(f.node(*n).outputs()[0]);
            let below: Vec<NodeId> =
                ms.iter().copied().filter(|m| cx.shape(*m).len() == 1 && *m != *n && cx.descent.within(cx.shape(*m)[0], sub)).collect();
            if !below.is_empty() {
                let then = level(cx, &below, &[sub]);
                let via = reads_of(cx, *n, &below);
                tree = combine(FusionTree::Leaf(*n), then, via, manifest);
                nodes.extend(below);
            }
        }
        items.push(Item { node: *n, tree, nodes });
    }
    // Deeper members, one inner loop per size of their next dimension.
    let d = prefix.len();
    let mut inner: indexmap::IndexMap<SizeId, Vec<NodeId>> = indexmap::IndexMap::new();
    for n in ms {
        let s = cx.shape(*n);
        if s.len() > d && s[..d] == *prefix {
            inner.entry(s[d]).or_default().push(*n);
        }
    }
    for (size, group) in inner {
        let mut deeper = prefix.to_vec();
        deeper.push(size);
        let body = level(cx, &group, &deeper);
        let first = *group.iter().min_by_key(|m| cx.pos(**m)).unwrap();
        items.push(Item { node: first, tree: FusionTree::Loop { size, body: Box::new(body) }, nodes: group });
    }
    items.sort_by_key(|i| cx.pos(i.node));
    chain(cx, items)
}

/// The items in order, each fused with the chain after it through the
/// arrays it makes that the later items read. Built from the end, and the
/// arrays found from each node's own edges: a chain of thousands of maps
/// searched every pair of its nodes and recursed once per item. The
/// nodes' places are a table by schedule order, not a map built per
/// level: a filter's item holds every node below it, so in a nest of
/// thousands of filters each inside the one before every level holds
/// nearly all of them.
fn chain(cx: &Ctx, items: Vec<Item>) -> FusionTree {
    use petgraph::visit::EdgeRef;
    let g = cx.g;
    let mut place = cx.place.borrow_mut();
    // A node in two items (two filters of one sub-rate) has its later
    // places here.
    let mut more: HashMap<usize, Vec<(usize, usize)>> = HashMap::new();
    for (i, item) in items.iter().enumerate() {
        for (k, n) in item.nodes.iter().enumerate() {
            let r = cx.pos(*n);
            if place[r] == NOWHERE {
                place[r] = (i, k);
            } else {
                more.entry(r).or_default().push((i, k));
            }
        }
    }
    // For item i, the arrays its nodes make that a later item's nodes
    // read: for each of its nodes, the consumers in the later items'
    // order (as `reads_of` lists them). The last item has no later one.
    let last = items.len().checked_sub(1).expect("a level has an item");
    let mut vias: Vec<Vec<VarId>> = items[..last]
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let mut via = vec![];
            for a in &item.nodes {
                // (One edge per consumer: the graph merges a second.)
                let mut later: Vec<((usize, usize), &[VarId])> = g
                    .graph
                    .edges(DepGraph::idx(*a))
                    .filter(|e| cx.member(g.graph[e.target()]))
                    .filter_map(|e| {
                        let r = cx.pos(g.graph[e.target()]);
                        let p = std::iter::once(&place[r]).chain(more.get(&r).into_iter().flatten()).find(|(j, _)| *j > i && *j != NOWHERE.0)?;
                        Some((*p, e.weight().vars.as_slice()))
                    })
                    .collect();
                later.sort_unstable_by_key(|(p, _)| *p);
                for (_, vars) in later {
                    for v in vars {
                        if !via.contains(v) {
                            via.push(*v);
                        }
                    }
                }
            }
            via
        })
        .collect();
    vias.push(vec![]);
    for item in &items {
        for n in &item.nodes {
            place[cx.pos(*n)] = NOWHERE;
        }
    }
    drop(place);
    let manifest = cx.manifest;
    let mut from_end = items.into_iter().zip(vias).rev();
    let (last, _) = from_end.next().expect("a level has an item");
    from_end.fold(last.tree, |then, (item, via)| combine(item.tree, then, via, manifest))
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

/// The arrays `n` makes that the members `to` (in schedule order) read,
/// in their order: from `n`'s edges, not a lookup per member (a filter's
/// members are everything under it, thousands in a deep nest).
fn reads_of(cx: &Ctx, n: NodeId, to: &[NodeId]) -> Vec<VarId> {
    use petgraph::visit::EdgeRef;
    let g = cx.g;
    let mut found: Vec<(usize, &[VarId])> = g
        .graph
        .edges(DepGraph::idx(n))
        .map(|e| (g.graph[e.target()], e.weight().vars.as_slice()))
        .filter(|(b, _)| cx.member(*b) && to.binary_search_by_key(&cx.pos(*b), |m| cx.pos(*m)).is_ok())
        .map(|(b, vars)| (cx.pos(b), vars))
        .collect();
    found.sort_unstable_by_key(|(p, _)| *p);
    let mut via = vec![];
    for (_, vars) in found {
        for v in vars {
            if !via.contains(v) {
                via.push(*v);
            }
        }
    }
    via
}
