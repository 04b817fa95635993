//! Clustering: which combinators share a loop. `none` gives every node its
//! own cluster, `greedy` fuses edge by edge while the result stays legal,
//! `ilp` solves the edge-local integer linear program of docs/ilp.md.

pub mod cost;
pub mod greedy;
pub mod ilp;
pub mod pairs;

use afc_ir::cluster::{verify, Clustering};
use afc_ir::lp::{Limits, Lp, Solution, SolveStatus, Solver, Stop};
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
    /// What the ILP minimises (the all-pairs model has only `robinson`).
    pub cost: cost::CostModel,
    /// Branch-and-bound nodes the solver may explore for one function: the
    /// deterministic bound (None: scaled with the model, docs/ilp.md).
    pub nodes: Option<u64>,
    /// Seconds the solver may spend on one function: a safety net,
    /// reported when it fires.
    pub time_limit: f64,
    pub solver: &'static (dyn Solver + Sync),
}

/// Finds a legal clustering of one function's graph.
pub fn cluster(f: &Function, g: &DepGraph, cfg: &ClusterConfig) -> Clustering {
    match cfg.mode {
        FusionMode::None => {
            let groups = f.node_ids().map(|n| vec![n]).collect();
            let clusters = order_clusters(f, g, groups).unwrap_or_else(|| afc_ir::ice::fail("cluster", "the unfused clustering is cyclic", &afc_ir::graph::print(f, g, &g.sizes)));
            Clustering::new(clusters, "none")
        }
        FusionMode::Greedy => greedy::cluster(f, g),
        FusionMode::Ilp => match cfg.model {
            IlpModel::Edge => ilp::cluster(f, g, cfg),
            IlpModel::Pairs => pairs::cluster(f, g, cfg),
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

/// The default node limit for a model: a fixed amount of deterministic
/// work, `NODE_WORK / nnz^1.5` nodes for a model of `nnz` non-zeros (a
/// node's linear programs grow faster than the model), within
/// `MIN_NODES ..= MAX_NODES` (docs/ilp.md gives the measurements).
pub fn default_nodes(lp: &Lp) -> u64 {
    let nnz: usize = lp.rows.iter().map(|r| r.terms.len()).sum::<usize>() + lp.vars.len();
    ((NODE_WORK / (nnz.max(1) as f64).powf(1.5)) as u64).clamp(MIN_NODES, MAX_NODES)
}

const NODE_WORK: f64 = 1.5e8;
const MIN_NODES: u64 = 10;
const MAX_NODES: u64 = 5_000;

/// Solves a clustering ILP (decision 7) and checks whatever the solver
/// returns. The greedy clustering is the warm start: its objective (when
/// the model can cost it) is the solver's cutoff, and it is the answer
/// when the solver finds nothing better, or stops with nothing usable. A
/// proven optimum that fails its check is a bug in the model: an internal
/// compiler error, with the model in the details. `read` turns a solution
/// into a clustering.
pub fn solve_checked(
    f: &Function,
    g: &DepGraph,
    cfg: &ClusterConfig,
    lp: &Lp,
    model: &str,
    start: Option<(&Clustering, Vec<f64>)>,
    read: impl Fn(&Solution) -> Option<Clustering>,
) -> Clustering {
    let greedy = || start.as_ref().map(|(c, _)| (*c).clone()).unwrap_or_else(|| greedy::cluster(f, g));
    // The greedy clustering's values, when they satisfy the model.
    let start_values = start.as_ref().map(|(_, v)| v.as_slice()).filter(|v| lp.feasible(v).is_ok());
    let warm = start_values.map(|v| lp.value_of(v));
    let solved = solve_parts(cfg, lp, start_values);
    let sol = &solved.solution;
    if sol.stop == Stop::TimeLimit {
        // The one way the clustering can depend on the machine: say so.
        eprintln!(
            "afc: warning: fn {}: the ILP solver's time limit ({} s) stopped it before its node limit; the clustering may differ between machines (raise --ilp-time-limit, or set --ilp-nodes)",
            f.name, cfg.time_limit
        );
    }
    let stopped = match sol.stop {
        Stop::Finished => "stopped".to_string(),
        Stop::NodeLimit => format!("node limit {} reached", solved.node_limit),
        Stop::TimeLimit => format!("time limit {} s reached", cfg.time_limit),
    };
    let parts = if solved.parts > 1 { format!(", {} parts", solved.parts) } else { String::new() };
    let from = warm.map(|w| format!(", greedy {}", w)).unwrap_or_default();
    let with_how = |how: String| {
        let mut c = greedy();
        c.how = how;
        c
    };
    if !solved.improved {
        return match (warm, sol.status) {
            // Nothing beats the cutoff anywhere: the start is optimal.
            (Some(w), SolveStatus::Optimal) => with_how(format!("{}: optimal (objective {}, greedy {}{})", model, w, w, parts)),
            (Some(w), _) => with_how(format!("{}: best found, gap {:.1}%, {} (objective {}, greedy {}{})", model, sol.gap_percent(), stopped, w, w, parts)),
            (None, _) => with_how(format!("{}: greedy fallback: no solution found ({})", model, stopped)),
        };
    }
    let checked = read(sol)
        .map(|mut c| {
            if crate::pipeline::corrupt("ilp") {
                c.clusters.reverse();
            }
            c
        })
        .ok_or_else(|| "the solution's clusters depend on each other cyclically".to_string())
        .and_then(|c| verify(f, g, &c).map(|_| c));
    match (checked, sol.status) {
        (Ok(mut c), SolveStatus::Optimal) => {
            c.how = format!("{}: optimal (objective {}{}{})", model, sol.objective, from, parts);
            c
        }
        (Ok(mut c), _) => {
            c.how = format!("{}: best found, gap {:.1}%, {} (objective {}{}{})", model, sol.gap_percent(), stopped, sol.objective, from, parts);
            c
        }
        (Err(e), SolveStatus::Optimal) => afc_ir::ice::fail("cluster", &format!("the {} solution for fn {} fails its check: {}", model, f.name, e), &lp.to_lp_format()),
        (Err(e), _) => with_how(format!("{}: greedy fallback: the stopped solver's solution fails its check ({}): {}", model, stopped, e)),
    }
}

/// A model solved part by part.
struct Solved {
    /// The parts' answers put together: optimal when every part's is.
    solution: Solution,
    /// Parts the solver was run on (parts of one variable and no row are
    /// set directly).
    parts: usize,
    /// Whether some part found better than the warm start (with no warm
    /// start: whether every part found a solution).
    improved: bool,
    /// The node limit of the first part that reached its own.
    node_limit: u64,
}

/// Solves the model's independent parts one at a time (docs/ilp.md,
/// "Independent parts"): no row joins two parts, so the optimum is the
/// parts' optima put together, and each part is a smaller search. Each
/// part has its own deterministic node limit (scaled with the part) and
/// the warm start's share of the objective as its cutoff, and keeps the
/// warm start's values where the solver finds nothing better; the time
/// limit is shared by all.
fn solve_parts(cfg: &ClusterConfig, lp: &Lp, start: Option<&[f64]>) -> Solved {
    let clock = std::time::Instant::now();
    let mut values = start.map(|v| v.to_vec()).unwrap_or_else(|| lp.vars.iter().map(|v| v.lo).collect());
    let (mut optimal, mut found, mut improved) = (true, true, false);
    let (mut bound, mut stop, mut node_limit, mut parts) = (0.0, Stop::Finished, 0, 0);
    for part in lp.parts() {
        if part.lp.rows.is_empty() {
            // One variable no row constrains: at its cheaper bound (where
            // the objective does not care, it keeps its start or lower bound).
            let (v, def) = (part.vars[0], &part.lp.vars[0]);
            let c: f64 = part.lp.objective.iter().map(|(_, c)| c).sum();
            if c > 0.0 {
                values[v.0] = def.lo;
            } else if c < 0.0 {
                values[v.0] = def.hi;
            }
            bound += c * values[v.0];
            continue;
        }
        let own_value = start.map(|v| part.lp.value_of(&part.restrict(v)));
        parts += 1;
        let nodes = cfg.nodes.unwrap_or_else(|| default_nodes(&part.lp));
        let seconds = (cfg.time_limit - clock.elapsed().as_secs_f64()).max(0.0);
        // Objectives are sums of integer weights: half a unit above the
        // start keeps solutions as good as it.
        let sol = cfg.solver.solve(&part.lp, Limits { nodes, seconds, cutoff: own_value.map(|w| w + 0.5) });
        if sol.stop != Stop::Finished {
            if stop == Stop::Finished {
                node_limit = nodes;
            }
            if stop != Stop::TimeLimit {
                stop = sol.stop;
            }
        }
        match (sol.status, own_value) {
            (SolveStatus::None, Some(w)) => {
                // Nothing beats the start's share: it stays, optimal if the
                // search finished.
                optimal &= sol.stop == Stop::Finished;
                bound += if sol.stop == Stop::Finished { w } else { sol.bound.min(w) };
            }
            (SolveStatus::None, None) => {
                found = false;
                optimal = false;
            }
            (status, _) => {
                for (i, v) in part.vars.iter().enumerate() {
                    values[v.0] = sol.values[i];
                }
                improved = true;
                optimal &= status == SolveStatus::Optimal;
                bound += sol.bound;
            }
        }
    }
    let status = match (found, optimal) {
        (false, _) => SolveStatus::None,
        (true, true) => SolveStatus::Optimal,
        (true, false) => SolveStatus::Feasible,
    };
    let improved = if start.is_some() { improved } else { found };
    let objective = lp.value_of(&values);
    let bound = if status == SolveStatus::Optimal { objective } else { bound.min(objective) };
    Solved { solution: Solution { status, values, objective, bound, stop }, parts, improved, node_limit }
}

/// Clusters as sets of node ids: petgraph's union-find, read back as
/// groups in order of their smallest member.
pub type Groups = petgraph::unionfind::UnionFind<usize>;

/// The groups of a union-find over node ids, each in increasing order,
/// ordered by their first member.
pub fn groups_of(u: &Groups) -> Vec<Vec<NodeId>> {
    let mut by_root: indexmap::IndexMap<usize, Vec<NodeId>> = indexmap::IndexMap::new();
    for (i, r) in u.clone().into_labeling().into_iter().enumerate() {
        by_root.entry(r).or_default().push(NodeId(i as u32));
    }
    by_root.into_values().collect()
}
