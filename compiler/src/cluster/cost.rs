//! What a clustering costs (`--cost`), apart from what may fuse (the ILP's
//! constraints, ilp.rs). Every model weighs the same four things a
//! clustering does — array traffic (reads from and writes to memory, as
//! `--emit=cost` counts it), intermediate arrays, arrays written, and
//! unfused links (fusible edges, shared reads) — and the one `Weights`
//! gives both the ILP's objective coefficients and `score`, the cost of any
//! clustering computed from the `--emit=cost` counts (`Counts`). The two agree up to a
//! constant (what every clustering pays: a parameter's first read, a
//! random access): tested on every legal clustering of random programs
//! (tests/ilp_exhaustive.rs). docs/ilp.md, "Cost models".

use afc_ir::cluster::{read_order, Clustering};
use afc_ir::cost::Expr;
use afc_ir::graph::{DepGraph, Reach};
use afc_ir::labelled::{Function, NodeId, VarId};
use afc_ir::sizes::Sizes;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CostModel {
    /// Memory traffic in array elements (every array one element per
    /// index), then intermediate arrays, then unfused edges and unshared
    /// reads, each outweighing any number of the next: the default.
    Traffic,
    /// As `traffic`, with each element weighing its type's bytes and each
    /// dimension past the first 64 times more elements
    /// (Bohrium's byte-accurate model, papers/003 Def. 13, with sizes
    /// estimated at compile time).
    Bytes,
    /// papers/000 Fig. 1.12: N² per unfused edge or unshared read of a
    /// common input, N per array written to memory (N nodes); traffic is
    /// only what the weights stand for.
    Robinson,
    /// papers/002 cost function (b): the fewest unfused edges.
    Edges,
    /// papers/002 cost function (c): the fewest arrays written to memory.
    Arrays,
    /// papers/002 cost function (e): the fewest array reads and writes,
    /// every array the same size, nothing else counted.
    Accesses,
}

impl CostModel {
    pub fn name(self) -> &'static str {
        match self {
            CostModel::Traffic => "traffic",
            CostModel::Bytes => "bytes",
            CostModel::Robinson => "robinson",
            CostModel::Edges => "edges",
            CostModel::Arrays => "arrays",
            CostModel::Accesses => "accesses",
        }
    }
}

/// Under `--cost=bytes`, a size afc cannot know at compile time (all of
/// them: parameters', a `generate`'s, a filter's output is taken to be its
/// input's, the room the ABI gives it) counts one unit, and every further
/// dimension this many: a matrix weighs as much as 64 vectors. It only
/// orders arrays of different ranks; 64 keeps the largest weight (rank 3,
/// f64, times the lexicographic factor) far inside CBC's exact integers.
pub const BYTES_EXTENT: f64 = 64.0;

/// One model's weights for one function.
#[derive(Clone, Copy, Debug)]
pub struct Weights {
    pub model: CostModel,
    /// Per element read or written (scaled by `unit` under `bytes`).
    pub traffic: f64,
    /// Per intermediate array (written to memory, not forced).
    pub intermediate: f64,
    /// Per array written to memory, forced or not.
    pub written: f64,
    /// Per unfused fusible edge.
    pub edge: f64,
    /// Per pair of siblings that do not share their read.
    pub pair: f64,
}

impl Weights {
    /// `links`: the model's edge and sibling-pair variables; `arrays`: its
    /// array variables; `nodes`: the graph's nodes. Lexicographic weights
    /// make each tier outweigh every possible sum of the tiers below it.
    pub fn new(model: CostModel, links: usize, arrays: usize, nodes: usize) -> Weights {
        let w_manifest = links as f64 + 1.0;
        let w_traffic = w_manifest * (arrays as f64 + 1.0);
        let n = nodes as f64;
        let zero = Weights { model, traffic: 0.0, intermediate: 0.0, written: 0.0, edge: 0.0, pair: 0.0 };
        match model {
            CostModel::Traffic | CostModel::Bytes => Weights { traffic: w_traffic, intermediate: w_manifest, edge: 1.0, pair: 1.0, ..zero },
            CostModel::Robinson => Weights { written: n, edge: n * n, pair: n * n, ..zero },
            CostModel::Edges => Weights { edge: 1.0, ..zero },
            CostModel::Arrays => Weights { written: 1.0, ..zero },
            CostModel::Accesses => Weights { traffic: 1.0, ..zero },
        }
    }
    /// The weights of the edge model of `g`: its variables counted by the
    /// rules ilp.rs creates them by.
    pub fn of(model: CostModel, f: &Function, g: &DepGraph, reach: &Reach) -> Weights {
        let edges = g.edges().filter(|(_, _, e)| e.is_fusible()).count();
        let pairs = g.siblings().keys().filter(|(a, b)| may_share(g, reach, *a, *b)).count();
        let arrays = g.nodes().flat_map(|n| f.node(n).outputs().to_vec()).filter(|v| f.var(*v).ty.is_array()).count();
        Weights::new(model, edges + pairs, arrays, g.len())
    }
    /// The weight of one read or write of an array of `rank` dimensions
    /// whose elements take `bytes` bytes.
    pub fn unit(&self, rank: usize, bytes: u64) -> f64 {
        match self.model {
            CostModel::Bytes => self.traffic * bytes as f64 * BYTES_EXTENT.powi(rank as i32 - 1),
            _ => self.traffic,
        }
    }
    /// The weight of node `c`'s read of array `v`, as the ILP's objective
    /// counts it (a gather reading its source is costed at its own output's
    /// rank). The model's reads and the dominance rule (dominance.rs)
    /// both weigh reads by it.
    pub fn read(&self, f: &Function, g: &DepGraph, v: VarId, c: NodeId) -> f64 {
        let rank = match g.gathered_order(v, c) {
            Some(_) => g.sizes.shape(f.node(c).outputs()[0]).len(),
            None => g.sizes.shape(v).len(),
        };
        self.unit(rank, f.var(v).ty.prim().bytes())
    }
    /// The weight of writing array `v` to memory: its traffic, an array
    /// written and, unless it is forced, an intermediate one.
    pub fn write(&self, f: &Function, g: &DepGraph, v: VarId) -> f64 {
        let intermediate = if g.forced_manifest.contains(&v) { 0.0 } else { self.intermediate };
        self.unit(g.sizes.shape(v).len(), f.var(v).ty.prim().bytes()) + self.written + intermediate
    }
    /// The traffic part of an `--emit=cost` polynomial: array terms only
    /// (a term's degree is its array's rank); scalars are left out, as the
    /// ILP leaves them out.
    fn traffic_of(&self, elements: &Expr, bytes: &Expr) -> f64 {
        match self.model {
            CostModel::Bytes => bytes.terms.iter().filter(|(m, _)| !m.is_empty()).map(|(m, k)| *k as f64 * self.unit(m.len(), 1)).sum(),
            _ => elements.terms.iter().filter(|(m, _)| !m.is_empty()).map(|(_, k)| *k as f64 * self.traffic).sum(),
        }
    }
}

/// Siblings the edge model lets share a read: the same iteration space
/// and no fusion-preventing path between them (papers/000 §1.4.5).
pub fn may_share(g: &DepGraph, reach: &Reach, a: NodeId, b: NodeId) -> bool {
    !reach.preventing_path(a, b) && !reach.preventing_path(b, a) && g.iteration[a.0 as usize] == g.iteration[b.0 as usize]
}

/// What a clustering does that the cost models weigh, counted once.
#[derive(Clone, Debug)]
pub struct Counts {
    /// Array elements, and bytes, read and written (`--emit=cost`'s totals).
    pub elements: Expr,
    pub bytes: Expr,
    pub written: usize,
    pub intermediates: usize,
    pub unfused_edges: usize,
    pub unshared_pairs: usize,
}

impl Counts {
    pub fn of(f: &Function, g: &DepGraph, sizes: &Sizes, c: &Clustering) -> Counts {
        let reach = g.reach().unwrap_or_else(|e| afc_ir::ice::fail("cluster", &e, &afc_ir::graph::print(f, g, &g.sizes)));
        let (mut elements, mut bytes) = (Expr::default(), Expr::default());
        for cc in afc_ir::cost::costs(f, g, sizes, c) {
            elements.add(&cc.reads);
            elements.add(&cc.writes);
            bytes.add(&cc.read_bytes);
            bytes.add(&cc.write_bytes);
        }
        let manifest = c.manifest(f, g);
        let of = c.cluster_of();
        let orders = afc_ir::cluster::orders(f, g, c).unwrap_or_else(|_| vec![0; g.len()]);
        Counts {
            elements,
            bytes,
            written: manifest.len(),
            intermediates: manifest.iter().filter(|v| !g.forced_manifest.contains(*v)).count(),
            unfused_edges: g.edges().filter(|(a, b, e)| e.is_fusible() && of[a] != of[b]).count(),
            // Siblings share a read in one cluster and one order.
            unshared_pairs: g
                .siblings()
                .iter()
                .filter(|((a, b), _)| may_share(g, &reach, *a, *b))
                .filter(|((a, b), xs)| of[a] != of[b] || read_order(f, g, &orders, xs[0], *a) != read_order(f, g, &orders, xs[0], *b))
                .count(),
        }
    }
}

impl Weights {
    /// The cost of a clustering with these counts: the ILP's objective for
    /// the same clustering plus a constant of the function.
    pub fn score(&self, k: &Counts) -> f64 {
        self.traffic_of(&k.elements, &k.bytes)
            + self.intermediate * k.intermediates as f64
            + self.written * k.written as f64
            + self.edge * k.unfused_edges as f64
            + self.pair * k.unshared_pairs as f64
    }
}
