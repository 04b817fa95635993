//! Clustering: which combinators share a loop. `none` gives every node its
//! own cluster, `greedy` fuses edge by edge while the result stays legal,
//! `ilp` solves the edge-local integer linear program of docs/ilp.md.

pub mod greedy;
pub mod ilp;
pub mod pairs;

use afc_ir::cluster::Clustering;
use afc_ir::graph::DepGraph;
use afc_ir::labelled::{Function, NodeId};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FusionMode {
    /// Every combinator its own loop: the unfused baseline.
    None,
    /// Fuse edge by edge in source order while the clustering stays legal.
    Greedy,
    /// The optimal clustering under the cost model, by integer linear programming.
    Ilp,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum IlpModel {
    /// One variable per edge and per sibling pair (papers/002): the default.
    Edge,
    /// One variable per pair of nodes with the paper's cost model (papers/000).
    Pairs,
}

#[derive(Clone, Debug)]
pub struct ClusterConfig {
    pub mode: FusionMode,
    pub model: IlpModel,
    /// Seconds CBC may spend on one function before its best solution is used.
    pub time_limit: f64,
}

/// Finds a legal clustering of one function's graph.
pub fn cluster(f: &Function, g: &DepGraph, cfg: &ClusterConfig) -> Clustering {
    match cfg.mode {
        FusionMode::None => {
            let groups = f.node_ids().map(|n| vec![n]).collect();
            let clusters = order_clusters(f, g, groups).expect("the unfused clustering is acyclic");
            Clustering::new(clusters, "none")
        }
        FusionMode::Greedy => greedy::cluster(f, g),
        FusionMode::Ilp => match cfg.model {
            IlpModel::Edge => ilp::cluster(f, g, cfg.time_limit),
            IlpModel::Pairs => pairs::cluster(f, g, cfg.time_limit),
        },
    }
}

/// Splits groups into the connected components of edges and shared reads
/// (two readers of one array in one order, given the nodes' traversal
/// orders) between their members (decision 8): one iteration space each.
pub fn split_components(f: &Function, g: &DepGraph, groups: Vec<Vec<NodeId>>, orders: &[u32]) -> Vec<Vec<NodeId>> {
    let sib = g.siblings();
    let mut out = vec![];
    for members in groups {
        let mut u = Groups::new(g.len());
        for (i, a) in members.iter().enumerate() {
            for b in &members[i + 1..] {
                let shared = sib
                    .get(&((*a).min(*b), (*a).max(*b)))
                    .map(|xs| xs.iter().any(|x| afc_ir::cluster::read_order(f, g, orders, *x, *a) == afc_ir::cluster::read_order(f, g, orders, *x, *b)))
                    .unwrap_or(false);
                let linked = g.edge(*a, *b).is_some() || g.edge(*b, *a).is_some() || shared;
                if linked {
                    u.union(a.0 as usize, b.0 as usize);
                }
            }
        }
        let mut comps: indexmap::IndexMap<usize, Vec<NodeId>> = indexmap::IndexMap::new();
        for a in &members {
            comps.entry(u.find(a.0 as usize)).or_default().push(*a);
        }
        out.extend(comps.into_values());
    }
    out
}

/// Orders groups of nodes so that every edge goes forward; among groups that
/// could run in either order, the one with the earliest source position
/// first. `None` if the groups depend on each other cyclically.
pub fn order_clusters(f: &Function, g: &DepGraph, mut groups: Vec<Vec<NodeId>>) -> Option<Vec<Vec<NodeId>>> {
    for m in &mut groups {
        m.sort_by_key(|n| (f.node(*n).span.start, n.0));
    }
    let mut of: HashMap<NodeId, usize> = HashMap::new();
    for (i, m) in groups.iter().enumerate() {
        for n in m {
            of.insert(*n, i);
        }
    }
    let k = groups.len();
    let mut indeg = vec![0usize; k];
    let mut succ: Vec<Vec<usize>> = vec![vec![]; k];
    for (a, b, _) in g.edges() {
        let (ca, cb) = (of[&a], of[&b]);
        if ca != cb && !succ[ca].contains(&cb) {
            succ[ca].push(cb);
            indeg[cb] += 1;
        }
    }
    let key = |i: usize| groups[i].iter().map(|n| (f.node(*n).span.start, n.0)).min().unwrap();
    let mut ready: BinaryHeap<Reverse<((u32, u32), usize)>> =
        (0..k).filter(|&i| indeg[i] == 0).map(|i| Reverse((key(i), i))).collect();
    let mut out = vec![];
    while let Some(Reverse((_, i))) = ready.pop() {
        out.push(groups[i].clone());
        for &j in &succ[i] {
            indeg[j] -= 1;
            if indeg[j] == 0 {
                ready.push(Reverse((key(j), j)));
            }
        }
    }
    if out.len() == k {
        Some(out)
    } else {
        None
    }
}

/// Solves a clustering ILP (decision 7): the solution and how it was found
/// (optimal, or the best found within the time limit), or the greedy
/// clustering when the solver found none.
pub fn solve_or_greedy(f: &Function, g: &DepGraph, lp: &afc_ir::lp::Lp, model: &str, time_limit: f64) -> Result<(afc_ir::lp::Solution, String), Clustering> {
    use afc_ir::lp::SolveStatus;
    let sol = afc_cluster_cbc::solve(lp, time_limit);
    let how = match sol.status {
        SolveStatus::Optimal => format!("{}: optimal", model),
        SolveStatus::Feasible => format!("{}: time limit reached, best solution found used", model),
        SolveStatus::None => {
            let mut c = greedy::cluster(f, g);
            c.how = format!("{}: no solution within the time limit, greedy clustering used", model);
            return Err(c);
        }
    };
    Ok((sol, how))
}

/// A tiny union-find over node ids.
pub struct Groups {
    parent: Vec<usize>,
}

impl Groups {
    pub fn new(n: usize) -> Groups {
        Groups { parent: (0..n).collect() }
    }
    pub fn find(&mut self, x: usize) -> usize {
        if self.parent[x] != x {
            let r = self.find(self.parent[x]);
            self.parent[x] = r;
        }
        self.parent[x]
    }
    pub fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent[rb.max(ra)] = rb.min(ra);
        }
    }
    pub fn groups(&mut self) -> Vec<Vec<NodeId>> {
        let mut by_root: indexmap::IndexMap<usize, Vec<NodeId>> = indexmap::IndexMap::new();
        for i in 0..self.parent.len() {
            let r = self.find(i);
            by_root.entry(r).or_default().push(NodeId(i as u32));
        }
        by_root.into_values().collect()
    }
}
