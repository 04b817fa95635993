//! The dependency graph (papers/000 Fig. 1.10, papers/002 §4.1): nodes are
//! combinators, edges the variables that flow between them, each fusible
//! (streamed in iteration order) or fusion-preventing (with its reason).

use crate::labelled::{Function, NodeId, VarId};
use crate::sizes::{Shape, Sizes};
use indexmap::{IndexMap, IndexSet};
use petgraph::graph::{DiGraph, EdgeIndex, NodeIndex};
use petgraph::Direction;
use petgraph::visit::EdgeRef;
use fixedbitset::FixedBitSet;
use std::fmt::Write;
use std::sync::OnceLock;

/// The edge `a -> b` (there is at most one), searched from both ends at
/// once, so in time of the shorter list: petgraph's `find_edge` walks all
/// of `a`'s, and an array read by thousands of nodes made each lookup of
/// one of its edges that long (quadratic in building the graph and the ILP).
pub fn find_edge<N>(graph: &DiGraph<N, Edge>, a: NodeIndex, b: NodeIndex) -> Option<EdgeIndex> {
    let (mut out, mut into) = (graph.edges_directed(a, Direction::Outgoing), graph.edges_directed(b, Direction::Incoming));
    loop {
        match out.next() {
            None => return None,
            Some(e) if e.target() == b => return Some(e.id()),
            Some(_) => {}
        }
        match into.next() {
            None => return None,
            Some(e) if e.source() == a => return Some(e.id()),
            Some(_) => {}
        }
    }
}

/// Which nodes each node reaches: by any path, and by a path through a
/// fusion-preventing edge (such nodes never share a cluster, papers/000
/// §1.4.5); and which reach it.
#[derive(Clone, Debug)]
pub struct Reach {
    pub any: Vec<FixedBitSet>,
    pub preventing: Vec<FixedBitSet>,
    /// The nodes with a path to each node: `any` transposed, built as
    /// `any` is (a word-wide union per edge), not bit by bit from it —
    /// a chain of 10,000 maps sets 50 million bits, each its own cache
    /// miss when scattered (0.1 s of the ILP model).
    pub above: Vec<FixedBitSet>,
}

impl Reach {
    /// Is there a path from `a` to `b` (of at least one edge)?
    pub fn path(&self, a: NodeId, b: NodeId) -> bool {
        self.any[a.0 as usize].contains(b.0 as usize)
    }
    /// Is there a path from `a` to `b` through a fusion-preventing edge?
    pub fn preventing_path(&self, a: NodeId, b: NodeId) -> bool {
        self.preventing[a.0 as usize].contains(b.0 as usize)
    }
    /// Is `x` on some path from `a` to `b` (ends included)?
    pub fn between(&self, a: NodeId, x: NodeId, b: NodeId) -> bool {
        (a == x || self.path(a, x)) && (x == b || self.path(x, b))
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EdgeKind {
    /// The consumer reads the arrays element by element, in this order
    /// (0 = left to right; later issues add right to left and gather labels).
    Fusible { order: u32 },
    /// The producer must finish before the consumer starts.
    Preventing { reason: String },
}

#[derive(Clone, Debug)]
pub struct Edge {
    pub kind: EdgeKind,
    /// The arrays (or scalars) that flow along the edge.
    pub vars: Vec<VarId>,
}

impl Edge {
    pub fn is_fusible(&self) -> bool {
        matches!(self.kind, EdgeKind::Fusible { .. })
    }
}

#[derive(Clone, Debug)]
pub struct DepGraph {
    /// Node index `i` is `NodeId(i)`.
    pub graph: DiGraph<NodeId, Edge>,
    /// Each array with the nodes that stream it, in source order.
    pub readers: IndexMap<VarId, Vec<NodeId>>,
    /// Arrays that must be written to memory whatever the clustering:
    /// results, and arrays indexed or read outside any node.
    pub forced_manifest: IndexSet<VarId>,
    /// Each node's iteration shape.
    pub iteration: Vec<Shape>,
    /// The sizes, for the transducer forest.
    pub sizes: Sizes,
    /// Each gather's order label (2, 3, …: papers/002 §4.2; 0 and 1 are
    /// left to right and right to left).
    pub gather_label: IndexMap<NodeId, u32>,
    /// Reads of an array at a gather's indices: (array, gather).
    pub gathered: IndexSet<(VarId, NodeId)>,
    /// `siblings()`, computed on first use: the clustering passes ask for
    /// it once per candidate clustering they check.
    sibling_pairs: OnceLock<Siblings>,
}

/// Pairs of sibling nodes with the arrays they share (`DepGraph::siblings`).
pub type Siblings = IndexMap<(NodeId, NodeId), Vec<VarId>>;

/// How many later readers of an array each reader is paired with.
pub const SIBLING_WINDOW: usize = 8;

impl DepGraph {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        graph: DiGraph<NodeId, Edge>,
        readers: IndexMap<VarId, Vec<NodeId>>,
        forced_manifest: IndexSet<VarId>,
        iteration: Vec<Shape>,
        sizes: Sizes,
        gather_label: IndexMap<NodeId, u32>,
        gathered: IndexSet<(VarId, NodeId)>,
    ) -> DepGraph {
        DepGraph { graph, readers, forced_manifest, iteration, sizes, gather_label, gathered, sibling_pairs: OnceLock::new() }
    }
    pub fn nodes(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.graph.node_indices().map(|i| self.graph[i])
    }
    pub fn len(&self) -> usize {
        self.graph.node_count()
    }
    pub fn is_empty(&self) -> bool {
        self.graph.node_count() == 0
    }
    pub fn idx(n: NodeId) -> NodeIndex {
        NodeIndex::new(n.0 as usize)
    }
    /// Every edge as (producer, consumer, edge).
    pub fn edges(&self) -> impl Iterator<Item = (NodeId, NodeId, &Edge)> + '_ {
        self.graph.edge_references().map(|e| (self.graph[e.source()], self.graph[e.target()], e.weight()))
    }
    /// The number of gathers: orders range over 0 ..= gathers + 1.
    pub fn gathers(&self) -> u32 {
        self.gather_label.len() as u32
    }
    /// The fixed order in which `c` reads `x`, when `c` is a gather reading
    /// its source.
    pub fn gathered_order(&self, x: VarId, c: NodeId) -> Option<u32> {
        if self.gathered.contains(&(x, c)) {
            self.gather_label.get(&c).copied()
        } else {
            None
        }
    }
    pub fn edge(&self, a: NodeId, b: NodeId) -> Option<&Edge> {
        find_edge(&self.graph, Self::idx(a), Self::idx(b)).map(|e| &self.graph[e])
    }
    /// Pairs of nodes that stream a common array in the same order, each
    /// once, in source order, with the arrays they share. A reader is
    /// paired with the next `SIBLING_WINDOW` readers of the array only:
    /// readers further apart share a read through the readers between
    /// them, and an array read by thousands of combinators would otherwise
    /// give millions of pairs (docs/ilp.md, "Shared reads").
    pub fn siblings(&self) -> &Siblings {
        self.sibling_pairs.get_or_init(|| {
            let mut out = Siblings::new();
            for (x, rs) in &self.readers {
                for i in 0..rs.len() {
                    for j in i + 1..rs.len().min(i + 1 + SIBLING_WINDOW) {
                        if rs[i] != rs[j] {
                            let key = (rs[i].min(rs[j]), rs[i].max(rs[j]));
                            out.entry(key).or_default().push(*x);
                        }
                    }
                }
            }
            out
        })
    }
    /// Whether some array has readers too far apart to be paired.
    pub fn sibling_window_applies(&self) -> bool {
        self.readers.values().any(|rs| rs.len() > SIBLING_WINDOW + 1)
    }
    /// Reachability between all nodes, by bit sets over a topological
    /// order (petgraph's, which reports a cycle instead of hiding it).
    pub fn reach(&self) -> Result<Reach, String> {
        let order = petgraph::algo::toposort(&self.graph, None)
            .map_err(|c| format!("the dependency graph has a cycle through node {}", self.graph[c.node_id()].0))?;
        let n = self.len();
        let mut any = vec![FixedBitSet::with_capacity(n); n];
        let mut preventing = vec![FixedBitSet::with_capacity(n); n];
        let mut above = vec![FixedBitSet::with_capacity(n); n];
        for &i in order.iter().rev() {
            let a = self.graph[i].0 as usize;
            for e in self.graph.edges(i) {
                let b = self.graph[e.target()].0 as usize;
                // a ≠ b: the graph is acyclic.
                let (from, below) = pair_mut(&mut any, a, b);
                from.insert(b);
                from.union_with(below);
                let (from_p, below_p) = pair_mut(&mut preventing, a, b);
                if e.weight().is_fusible() {
                    from_p.union_with(below_p);
                } else {
                    from_p.insert(b);
                    from_p.union_with(&any[b]);
                }
            }
        }
        for &i in &order {
            let a = self.graph[i].0 as usize;
            for e in self.graph.edges(i) {
                let b = self.graph[e.target()].0 as usize;
                let (to, over) = pair_mut(&mut above, b, a);
                to.insert(a);
                to.union_with(over);
            }
        }
        Ok(Reach { any, preventing, above })
    }
}

/// `sets[a]` to change beside `sets[b]`, for a ≠ b.
fn pair_mut(sets: &mut [FixedBitSet], a: usize, b: usize) -> (&mut FixedBitSet, &FixedBitSet) {
    if a < b {
        let (lo, hi) = sets.split_at_mut(b);
        (&mut lo[a], &hi[0])
    } else {
        let (lo, hi) = sets.split_at_mut(a);
        (&mut hi[0], &lo[b])
    }
}

/// `--emit=graph`: nodes with their iteration sizes, edges with their kind
/// (fusion-preventing ones with the reason), and sibling pairs.
pub fn print(f: &Function, g: &DepGraph, sizes: &Sizes) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "fn {}", f.name);
    for n in g.nodes() {
        let node = f.node(n);
        let _ = writeln!(out, "  node {} \"{}\": {} iterates {}", n.0, node.name, node.combinator(), sizes.shape_name(&g.iteration[n.0 as usize]));
    }
    for (a, b, e) in g.edges() {
        let vs: Vec<String> = e.vars.iter().map(|v| f.var(*v).name.clone()).collect();
        match &e.kind {
            EdgeKind::Fusible { order } => {
                let _ = writeln!(out, "  edge \"{}\" -> \"{}\" fusible order {} [{}]", f.node(a).name, f.node(b).name, order, vs.join(", "));
            }
            EdgeKind::Preventing { reason } => {
                let _ = writeln!(out, "  edge \"{}\" -> \"{}\" fusion-preventing [{}]: {}", f.node(a).name, f.node(b).name, vs.join(", "), reason);
            }
        }
    }
    for (&(a, b), xs) in g.siblings() {
        let vs: Vec<String> = xs.iter().map(|v| f.var(*v).name.clone()).collect();
        let _ = writeln!(out, "  siblings \"{}\" \"{}\" share [{}]", f.node(a).name, f.node(b).name, vs.join(", "));
    }
    let forced: Vec<String> = g.forced_manifest.iter().map(|v| f.var(*v).name.clone()).collect();
    let _ = writeln!(out, "  manifest [{}]", forced.join(", "));
    out
}

/// Checks the graph against the program: one graph node per combinator;
/// every edge goes from a node to a later one (node ids are a topological
/// order) and carries variables its producer defines; every array a
/// combinator streams from another combinator is on an edge between them.
pub fn verify(f: &Function, g: &DepGraph) -> Result<(), String> {
    if g.len() != f.nodes.len() {
        return Err("the graph does not have one node per combinator".into());
    }
    let producers = f.producers();
    for (a, b, e) in g.edges() {
        if a >= b {
            return Err(format!("edge '{}' -> '{}' goes backwards", f.node(a).name, f.node(b).name));
        }
        if let Some(v) = e.vars.iter().find(|v| producers[v.0 as usize] != Some(a)) {
            return Err(format!("edge '{}' -> '{}' carries %{}, which '{}' does not define", f.node(a).name, f.node(b).name, f.var_name(*v), f.node(a).name));
        }
    }
    for c in f.node_ids() {
        for x in f.node(c).streamed_inputs().iter().chain(f.node(c).gathered_inputs()) {
            if let Some(p) = producers[x.0 as usize] {
                if g.edge(p, c).is_none() {
                    return Err(format!("'{}' streams %{} but has no edge from '{}'", f.node(c).name, f.var_name(*x), f.node(p).name));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `find_edge` against petgraph's, for every ordered pair of a graph
    /// with a hub (node 0 feeds every node) and edges from a fixed
    /// pseudo-random sequence, self-loops among them.
    #[test]
    fn find_edge_answers_as_petgraphs() {
        let n = 40u32;
        let mut graph: DiGraph<NodeId, Edge> = DiGraph::new();
        for i in 0..n {
            graph.add_node(NodeId(i));
        }
        let edge = || Edge { kind: EdgeKind::Fusible { order: 0 }, vars: vec![] };
        for b in 1..n {
            graph.add_edge(NodeIndex::new(0), NodeIndex::new(b as usize), edge());
        }
        let mut state = 12345u64;
        for _ in 0..200 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let (a, b) = (NodeIndex::new((state >> 33) as usize % n as usize), NodeIndex::new((state >> 17) as usize % n as usize));
            if graph.find_edge(a, b).is_none() {
                graph.add_edge(a, b, edge());
            }
        }
        for a in graph.node_indices() {
            for b in graph.node_indices() {
                assert_eq!(find_edge(&graph, a, b), graph.find_edge(a, b), "{:?} -> {:?}", a, b);
            }
        }
    }
}
