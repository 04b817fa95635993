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
    c.clusters
        .iter()
        .map(|members| {
            let ms = schedule(g, members, &ord, &label_of);
            let sizes = &g.sizes;
            let root = ms
                .iter()
                .filter(|n| ord[n.0 as usize] <= 1)
                .map(|n| sizes.of_node(*n))
                .min_by_key(|s| (sizes.depth(*s), s.0))
                .unwrap();
            let rank = ms.iter().enumerate().map(|(i, n)| (*n, i)).collect();
            let cx = Ctx { f, g, manifest: &manifest, ord: &ord, label_of: &label_of, descent: &descent, rank };
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
    /// Each member's place in schedule order.
    rank: HashMap<NodeId, usize>,
}

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
        self.rank[&n]
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
                let via = reads_of(g, &[*n], &below);
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
    chain(g, items, manifest)
}

/// The items in order, each fused with the chain after it through the
/// arrays it makes that the later items read. Built from the end, and the
/// arrays found from each node's own edges: a chain of thousands of maps
/// searched every pair of its nodes and recursed once per item.
fn chain(g: &DepGraph, items: Vec<Item>, manifest: &IndexSet<VarId>) -> FusionTree {
    // Each node's places among the items' nodes, in order (item, index).
    let mut at: HashMap<NodeId, Vec<(usize, usize)>> = HashMap::new();
    for (i, item) in items.iter().enumerate() {
        for (k, n) in item.nodes.iter().enumerate() {
            at.entry(*n).or_default().push((i, k));
        }
    }
    // For item i, the arrays its nodes make that a later item's nodes
    // read: for each of its nodes, the consumers in the later items'
    // order (as `reads_of` lists them).
    let vias: Vec<Vec<VarId>> = items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let mut via = vec![];
            for a in &item.nodes {
                let mut later: Vec<((usize, usize), NodeId)> =
                    g.consumers(*a).filter_map(|b| at.get(&b).and_then(|p| p.iter().find(|(j, _)| *j > i)).map(|p| (*p, b))).collect();
                later.sort_unstable();
                for (_, b) in later {
                    for v in g.edge(*a, b).map(|e| e.vars.as_slice()).unwrap_or_default() {
                        if !via.contains(v) {
                            via.push(*v);
                        }
                    }
                }
            }
            via
        })
        .collect();
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

/// The arrays `from`'s nodes produce that `to`'s nodes stream.
fn reads_of(g: &DepGraph, from: &[NodeId], to: &[NodeId]) -> Vec<VarId> {
    let mut via = vec![];
    for a in from {
        for b in to {
            if let Some(e) = g.edge(*a, *b) {
                for v in &e.vars {
                    if !via.contains(v) {
                        via.push(*v);
                    }
                }
            }
        }
    }
    via
}
