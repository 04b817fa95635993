//! Clustering: which combinators share a loop. `none` gives every node its
//! own cluster, `greedy` fuses edge by edge while the result stays legal,
//! `ilp` solves the edge-local integer linear program of docs/ilp.md.

pub mod cost;
pub mod dominance;
pub mod greedy;
pub mod ilp;
pub mod orders;
pub mod pairs;
pub mod separate;
pub mod windows;

use afc_ir::cluster::{verify, Clustering};
use afc_ir::lp::{Limits, Lp, Progress, Row, Solution, SolveStatus, Solver, Stop, Watch};
use afc_ir::graph::DepGraph;
use afc_ir::labelled::{Function, NodeId};
use std::cmp::Reverse;
use std::io::{IsTerminal, Write};
use std::collections::BinaryHeap;

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
    /// The edge model with position rows added only where a solution needs
    /// them, in rounds (docs/ilp.md, "Lazy positions").
    Lazy,
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
            IlpModel::Edge | IlpModel::Lazy => ilp::cluster(f, g, cfg),
            IlpModel::Pairs => pairs::cluster(f, g, cfg),
        },
    }
}

/// Splits groups into the connected components of edges and shared reads
/// (two readers of one array in one order, given the nodes' traversal
/// orders) between their members (decision 8): one iteration space each.
pub fn split_components(f: &Function, g: &DepGraph, groups: Vec<Vec<NodeId>>, orders: &[u32]) -> Vec<Vec<NodeId>> {
    let mut group = vec![usize::MAX; g.len()];
    for (i, members) in groups.iter().enumerate() {
        for n in members {
            group[n.0 as usize] = i;
        }
    }
    let mut u = Groups::new(g.len());
    for (a, b) in afc_ir::cluster::links(f, g, orders) {
        if group[a.0 as usize] == group[b.0 as usize] {
            u.union(a.0 as usize, b.0 as usize);
        }
    }
    let mut out = vec![];
    for members in groups {
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
    let mut of = vec![usize::MAX; g.len()];
    for (i, m) in groups.iter().enumerate() {
        for n in m {
            of[n.0 as usize] = i;
        }
    }
    let k = groups.len();
    let mut indeg = vec![0usize; k];
    let mut succ: Vec<Vec<usize>> = vec![vec![]; k];
    for (a, b, _) in g.edges() {
        let (ca, cb) = (of[a.0 as usize], of[b.0 as usize]);
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

/// How a part is searched: its node limit, and the simplex iterations
/// the whole search may take (None: no such limit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Search {
    pub nodes: u64,
    pub iterations: Option<u64>,
}

/// The default search of a model of `nnz` non-zeros, a fixed amount of
/// deterministic work (docs/ilp.md, "Deterministic work"):
/// `NODE_WORK / nnz^1.5` nodes (a node's linear programs grow faster than
/// the model), between `MIN_NODES` and `MAX_NODES`. A node limit does not
/// bound the root, which at 150-300 combinators can take seconds, so a
/// model of more than `SEARCH_NNZ` non-zeros is searched under an
/// iteration limit instead, `ITERATION_WORK / nnz` (with `MAX_NODES`),
/// where one applies (`with_iterations`: `iteration_limits`), and only up to
/// `ITERATION_NNZ`; a larger one, or one past `SEARCH_NNZ` where no
/// iteration limit applies, is not searched (None).
pub fn default_search(lp: &Lp, with_iterations: bool) -> Option<Search> {
    let nnz = nnz(lp);
    if nnz <= SEARCH_NNZ {
        let nodes = ((NODE_WORK / (nnz.max(1) as f64).powf(1.5)) as u64).clamp(MIN_NODES, MAX_NODES);
        Some(Search { nodes, iterations: None })
    } else if with_iterations && nnz <= ITERATION_NNZ {
        // The iterations bound the work; the node limit's formula (some 45
        // nodes at 200 combinators) would stop most of these searches
        // first, at half the proofs (docs/ilp.md, "Deterministic work").
        Some(Search { nodes: MAX_NODES, iterations: Some((ITERATION_WORK / nnz as f64) as u64) })
    } else {
        None
    }
}

/// Whether parts past `SEARCH_NNZ` are searched under an iteration limit:
/// by a solver that counts iterations, in a solve that is not in rounds.
/// The lazy model solves anew each round, up to `MAX_ROUNDS`, so a limit
/// per solve does not bound it (a 200-combinator program: 11 rounds and
/// the 10 s time limit, against 3 rounds and 2 s with such parts not
/// searched).
pub fn iteration_limits(cfg: &ClusterConfig) -> bool {
    cfg.solver.counts_iterations() && cfg.model != IlpModel::Lazy
}

/// The largest model searched by default: `ITERATION_NNZ` where iteration
/// limits apply (`iteration_limits`), else `SEARCH_NNZ`.
pub fn search_nnz(with_iterations: bool) -> usize {
    if with_iterations {
        ITERATION_NNZ
    } else {
        SEARCH_NNZ
    }
}

/// A model's size: its non-zeros, a variable's bounds counting as one.
pub fn nnz(lp: &Lp) -> usize {
    lp.rows.iter().map(|r| r.terms.len()).sum::<usize>() + lp.vars.len()
}

const NODE_WORK: f64 = 6e7;
const MIN_NODES: u64 = 20;
const MAX_NODES: u64 = 5_000;
/// The largest model searched under a node limit alone.
pub const SEARCH_NNZ: usize = 7_100;
/// The largest part searched under an iteration limit as well, the root
/// cuts' size (`separate::MAX_NNZ`): past it, at 400 combinators, the
/// limit stopped HiGHS within the root's first linear program, which
/// found nothing better.
pub const ITERATION_NNZ: usize = separate::MAX_NNZ;
/// Simplex iterations times non-zeros a search past `SEARCH_NNZ` may take:
/// 8·10⁷, with no node limit of its own, proves 26 of 48 200-combinator
/// programs within 2 s, where 3·10⁷ under the node limit proved 14; the
/// slowest stops at 2.5 s instead of 1.4 (docs/ilp.md, "Deterministic
/// work").
const ITERATION_WORK: f64 = 8e7;
/// The largest model whose linear relaxation is solved by default, in
/// non-zeros without its separation rows (`Model::base`: what the rest of
/// the model costs does not depend on how many chains were pruned): it
/// guides the warm start's rounding (past the root cuts' size, weighed by
/// the arrays written: `ilp::warm_start`). At this size (about 2,700
/// combinators of `make bench-ilp`'s generator) compiling to clusters
/// takes 0.84-0.98 s, 2,500 0.72-0.77 s; above, the relaxation is solved
/// in chunks (`CHUNKED_NNZ`), with no bound, and the separation rows are
/// built only for the parts within the root cuts' size (docs/ilp.md,
/// "Large graphs").
pub const RELAX_NNZ: usize = 142_000;

/// The largest model (in non-zeros without its separation rows, as
/// `RELAX_NNZ`) whose arrays' relaxation is solved in chunks of
/// `CHUNK_NODES` nodes when it is too large to solve whole
/// (`ilp::chunked_relaxation`; docs/ilp.md, "Rounding"): about 6,000
/// combinators of `make bench-ilp`'s generator, 0.74-0.76 s to clusters,
/// their rounding 7-8 % cheaper than greedy's; past it the warm start is
/// greedy's (7,000: 0.46 s, 9,999: 0.75-0.85 s).
pub const CHUNKED_NNZ: usize = 312_000;
/// The nodes of one chunk of a relaxation solved in chunks: at 3,000-6,000
/// combinators chunks of 700 were 10 % faster and their rounding 0.3-1.2 %
/// dearer, chunks of 1,500 10-20 % slower and 0.5-0.8 % cheaper.
pub const CHUNK_NODES: usize = 1_000;

/// An objective as `-v` prints it: every cost model's weights are
/// integers, so a solver's value is one but for the rounding of its
/// continuous variables (HiGHS: 1354149.9999988356 for 1354150).
pub fn objective_text(x: f64) -> String {
    if (x - x.round()).abs() < 1e-3 {
        format!("{}", x.round())
    } else {
        format!("{}", x)
    }
}

/// `gap G%` against a bound, or `no bound` where none was computed.
fn gap_text(objective: f64, bound: f64) -> String {
    if bound == f64::NEG_INFINITY {
        "no bound".to_string()
    } else {
        format!("gap {:.1}%", afc_ir::lp::gap_percent(objective, bound))
    }
}

/// The clustering a solve starts from: legal, with its values in the
/// model and how it was found (`-v`: `greedy G` or `greedy G, rounded R`).
pub struct WarmStart {
    pub clustering: Clustering,
    pub values: Vec<f64>,
    pub note: String,
    /// An optimum of the model's linear relaxation, when one was solved:
    /// it bounds the parts not searched.
    pub relaxation: Option<Vec<f64>>,
    /// Whether the time limit stopped a relaxation it was built from (the
    /// root cuts' or a guide's): then it may differ between machines.
    pub stopped: bool,
    /// The nodes each variable is about, where parts too large to search
    /// whole may be searched in windows (`windows`).
    pub near: Option<windows::Locality>,
}

/// A legal clustering and its values in the model: the warm start, or a
/// repaired solution that beats it.
pub type Incumbent = Option<(Clustering, Vec<f64>)>;

/// Solves a clustering ILP (decision 7) and checks whatever the solver
/// returns. The warm start (the greedy clustering when `start` is None):
/// its values (when the model can cost it) are the solver's start, which
/// the answer must be at least as good as, and it is the answer when the
/// solver finds nothing better, or stops with nothing usable.
/// `separate` gives the lazy rows a solution breaks and `repair` a legal
/// clustering near it (docs/ilp.md, "Lazy positions"; a model that states
/// every rule has neither). A proven optimum that fails its check is a bug
/// in the model: an internal compiler error, with the model in the
/// details. `read` turns a solution into a clustering. Returns the model
/// as it ended too, with the lazy rows the solve added.
#[allow(clippy::too_many_arguments)]
pub fn solve_checked(
    f: &Function,
    g: &DepGraph,
    cfg: &ClusterConfig,
    mut lp: Lp,
    model: &str,
    mut start: Option<WarmStart>,
    separate: impl FnMut(&[f64]) -> Vec<Row>,
    repair: impl FnMut(&[f64]) -> Incumbent,
    read: impl Fn(&Solution) -> Option<Clustering>,
) -> (Clustering, Lp) {
    // The warm start, with its values when they satisfy the model.
    let fallback = start.as_ref().map(|w| w.clustering.clone()).unwrap_or_else(|| greedy::cluster(f, g));
    let note = start.as_ref().map(|w| w.note.clone());
    let guide_stopped = start.as_ref().is_some_and(|w| w.stopped);
    let relaxation = start.as_mut().and_then(|w| w.relaxation.take());
    let near = start.as_mut().and_then(|w| w.near.take());
    let mut incumbent: Incumbent = start.and_then(|w| lp.feasible(&w.values).is_ok().then_some((w.clustering, w.values)));
    let warm = incumbent.as_ref().and(note);
    let Rounds { solved, rounds, end, bound } = solve_rounds(cfg, Some(&f.name), &mut lp, &mut incumbent, Known { relaxation: relaxation.as_deref(), near: near.as_ref() }, separate, repair);
    let sol = &solved.solution;
    // The one way the clustering can depend on the machine: say so.
    if sol.stop == Stop::TimeLimit {
        eprintln!(
            "afc: warning: fn {}: the ILP solver's time limit ({} s) stopped it before its node or iteration limit; the clustering may differ between machines (raise --ilp-time-limit, or set --ilp-nodes)",
            f.name, cfg.time_limit
        );
    } else if let Stop::Failed(why) = sol.stop {
        eprintln!("afc: warning: fn {}: the ILP solver failed ({}); the clustering is the best one found before, not proven optimal", f.name, why);
    } else if guide_stopped {
        eprintln!(
            "afc: warning: fn {}: the ILP solver's time limit ({} s) stopped a linear relaxation its warm start is built from; the clustering may differ between machines (raise --ilp-time-limit)",
            f.name, cfg.time_limit
        );
    }
    let stopped = stop_reason(cfg, &solved);
    let mut notes = String::new();
    if solved.parts > 1 {
        notes += &format!(", {} parts", solved.parts);
    }
    if rounds > 0 {
        notes += &format!(", {} cut rounds", rounds);
    }
    // The edge model's optimum is then its own, not always the true one
    // (docs/ilp.md, "Large graphs").
    if cfg.model != IlpModel::Pairs && g.sibling_window_applies() {
        notes += &format!(", a reader shares its read with the next {} only", afc_ir::graph::SIBLING_WINDOW);
    }
    let from = warm.map(|w| format!(", {}", w)).unwrap_or_default();
    // The incumbent (the warm start when there is none) as the answer.
    let kept = |how: String| {
        let mut c = incumbent.as_ref().map(|(c, _)| c.clone()).unwrap_or_else(|| fallback.clone());
        c.how = how;
        c
    };
    let value = incumbent.as_ref().map(|(_, v)| lp.value_of(v));
    let c = match (end, value) {
        (End::Optimal, Some(w)) => kept(format!("{}: optimal (objective {}{}{})", model, objective_text(w), from, notes)),
        (End::Stopped { bound, why }, Some(w)) => kept(format!("{}: best found, {}, {} (objective {}{}{})", model, gap_text(w, bound), why, objective_text(w), from, notes)),
        (End::Optimal | End::Stopped { .. } | End::Infeasible, _) => kept(format!("{}: greedy fallback: no solution found ({})", model, stopped)),
        (End::Legal, _) => {
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
                    c.how = format!("{}: optimal (objective {}{}{})", model, objective_text(sol.objective), from, notes);
                    c
                }
                (Ok(mut c), _) => {
                    let gap = gap_text(sol.objective, bound.max(sol.bound));
                    c.how = format!("{}: best found, {}, {} (objective {}{}{})", model, gap, stopped, objective_text(sol.objective), from, notes);
                    c
                }
                (Err(e), SolveStatus::Optimal) => afc_ir::ice::fail("cluster", &format!("the {} solution for fn {} fails its check: {}", model, f.name, e), &lp.to_lp_format()),
                (Err(e), _) => kept(format!("{}: greedy fallback: the stopped solver's solution fails its check ({}): {}", model, stopped, e)),
            }
        }
    };
    (c, lp)
}

/// The most rounds of lazy cuts one function's solve may take: with the
/// node limit, the deterministic bound on its work (docs/ilp.md).
pub const MAX_ROUNDS: usize = 100;

/// How a solve with lazy cuts ended.
pub(crate) struct Rounds {
    /// The last round's solve.
    pub solved: Solved,
    /// Rounds that added cuts.
    pub rounds: usize,
    pub end: End,
    /// The best bound on the optimum any round proved.
    pub bound: f64,
}

pub(crate) enum End {
    /// The last solve's solution breaks no lazy row: it is the answer.
    Legal,
    /// The incumbent is optimal: nothing beats it, or a finished round's
    /// bound reached it.
    Optimal,
    /// A limit stopped the rounds; the incumbent stands, `bound` below it.
    Stopped { bound: f64, why: String },
    /// No incumbent, and the model has no solution.
    Infeasible,
}

/// Solves `lp`, adds the lazy rows its solution breaks, and solves again,
/// until a solution breaks none, nothing beats the incumbent, a finished
/// round's bound proves the incumbent optimal, `MAX_ROUNDS` rounds added
/// cuts, or the time limit is spent. Each round solves the model from
/// scratch (parts, node limits and the incumbent as the start, as
/// `solve_parts`); an illegal solution is repaired, and replaces the
/// incumbent when it beats it.
pub(crate) fn solve_rounds(
    cfg: &ClusterConfig,
    shown_as: Option<&str>,
    lp: &mut Lp,
    incumbent: &mut Incumbent,
    known: Known<'_>,
    mut separate: impl FnMut(&[f64]) -> Vec<Row>,
    mut repair: impl FnMut(&[f64]) -> Incumbent,
) -> Rounds {
    let clock = std::time::Instant::now();
    let mut rounds = 0;
    // Every round's model is a relaxation of the clustering problem, so a
    // finished round's bound bounds the optimum.
    let mut bound = f64::NEG_INFINITY;
    loop {
        let seconds = (cfg.time_limit - clock.elapsed().as_secs_f64()).max(0.0);
        let start = incumbent.as_ref().map(|(_, v)| v.as_slice());
        debug_assert!(start.is_none_or(|v| lp.feasible(v).is_ok()), "a lazy row cuts off a legal clustering");
        let solved = solve_parts(cfg, shown_as, lp, start, known, seconds);
        let finished = solved.solution.stop == Stop::Finished;
        bound = bound.max(solved.solution.bound);
        let stopped = |bound: f64, solved: &Solved| End::Stopped {
            bound,
            why: match solved.solution.stop {
                Stop::Finished => format!("cut round limit {} reached", MAX_ROUNDS),
                _ => stop_reason(cfg, solved),
            },
        };
        if !solved.improved {
            let end = match (incumbent.is_some(), finished) {
                (true, true) if solved.solution.status == SolveStatus::Optimal => End::Optimal,
                (false, true) => End::Infeasible,
                _ => stopped(bound, &solved),
            };
            return Rounds { solved, rounds, end, bound };
        }
        let cuts = separate(&solved.solution.values);
        if cuts.is_empty() {
            return Rounds { solved, rounds, end: End::Legal, bound };
        }
        if let Some(name) = shown_as.filter(|_| clock.elapsed().as_secs_f64() > 1.0 && std::io::stderr().is_terminal()) {
            // A long solve shows its progress on a terminal (issue 12).
            let w = incumbent.as_ref().map(|(_, v)| objective_text(lp.value_of(v))).unwrap_or_else(|| "none".into());
            let _ = writeln!(std::io::stderr(), "afc: fn {}: ilp: round {}: {} cuts, bound {}, best legal {} ({:.1} s)", name, rounds + 1, cuts.len(), objective_text(bound.ceil()), w, clock.elapsed().as_secs_f64());
        }
        if let Some((c, v)) = repair(&solved.solution.values) {
            let better = incumbent.as_ref().is_none_or(|(_, w)| lp.value_of(&v) < lp.value_of(w) - 0.5);
            if better && lp.feasible(&v).is_ok() {
                *incumbent = Some((c, v));
            }
        }
        if let Some((_, v)) = incumbent.as_ref() {
            // Objectives are sums of integer weights.
            if lp.value_of(v) < bound + 0.5 {
                return Rounds { solved, rounds, end: End::Optimal, bound };
            }
        }
        if rounds >= MAX_ROUNDS || solved.solution.stop == Stop::TimeLimit {
            let end = stopped(bound, &solved);
            return Rounds { solved, rounds, end, bound };
        }
        for mut row in cuts {
            row.name = format!("{}_{}", row.name, lp.rows.len());
            lp.rows.push(row);
        }
        rounds += 1;
    }
}

/// What the warm start brings to a solve beside its values.
#[derive(Clone, Copy, Default)]
pub(crate) struct Known<'a> {
    /// An optimum of the model's linear relaxation: it bounds the parts
    /// not searched.
    pub relaxation: Option<&'a [f64]>,
    /// The nodes each variable is about, where parts too large to search
    /// whole are searched in windows (`windows`).
    pub near: Option<&'a windows::Locality>,
}

/// A model solved part by part.
pub(crate) struct Solved {
    /// The parts' answers put together: optimal when every part's is.
    pub solution: Solution,
    /// Parts the solver was run on (parts of one variable and no row are
    /// set directly).
    pub parts: usize,
    /// Whether some part found better than the warm start (with no warm
    /// start: whether every part found a solution).
    pub improved: bool,
    /// The limit `-v` names: the node limit of the first part that reached
    /// its own (its iteration limit for `Stop::IterationLimit`, the
    /// non-zeros of the first part not searched for `Stop::SizeLimit`).
    pub limit: u64,
    /// Windows searched in parts not searched whole, and how many of them
    /// found a cheaper clustering (`windows`).
    pub windows: (usize, usize),
}

/// Solves the model's independent parts one at a time (docs/ilp.md,
/// "Independent parts"): no row joins two parts, so the optimum is the
/// parts' optima put together, and each part is a smaller search. Each
/// part has its own deterministic limits (`default_search`: nodes and,
/// past `SEARCH_NNZ`, simplex iterations, scaled with the part) and
/// the warm start's share as its start, and keeps the
/// warm start's values where the solver finds nothing better; the time
/// limit is shared by all.
pub(crate) fn solve_parts(cfg: &ClusterConfig, shown_as: Option<&str>, lp: &Lp, start: Option<&[f64]>, known: Known<'_>, time_limit: f64) -> Solved {
    let clock = std::time::Instant::now();
    let mut values = start.map(|v| v.to_vec()).unwrap_or_else(|| lp.vars.iter().map(|v| v.lo).collect());
    let (mut optimal, mut found, mut improved) = (true, true, false);
    let (mut bound, mut stop, mut limit, mut parts) = (0.0, Stop::Finished, 0, 0);
    let mut windowed = (0, 0);
    let all = lp.parts();
    let searched = all.iter().filter(|p| !p.lp.rows.is_empty()).count();
    let at = std::cell::Cell::new(0);
    // A search past a second shows where it stands on a terminal, once a
    // second (issue 12); it only prints, so the clustering is the same.
    let next = std::cell::Cell::new(1.0);
    let show = |p: Progress| {
        let t = clock.elapsed().as_secs_f64();
        if t < next.get() {
            return;
        }
        next.set(t.floor() + 1.0);
        let best = if p.incumbent.is_finite() { objective_text(p.incumbent) } else { "none".into() };
        let gap = if p.incumbent.is_finite() && p.bound.is_finite() { format!(", gap {:.1}%", afc_ir::lp::gap_percent(p.incumbent, p.bound)) } else { String::new() };
        let part = if searched > 1 { format!(", part {} of {}", at.get(), searched) } else { String::new() };
        // (A closed stderr is no reason to stop compiling.)
        let _ = writeln!(
            std::io::stderr(),
            "afc: fn {}: ilp: {:.0} s{}: {} nodes, best {}, bound {}{}",
            shown_as.unwrap_or_default(),
            t,
            part,
            p.nodes,
            best,
            objective_text(p.bound.ceil()),
            gap
        );
    };
    let watch = (shown_as.is_some() && std::io::stderr().is_terminal()).then_some(Watch(&show));
    for part in &all {
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
        let own_start = start.map(|v| part.restrict(v));
        let own_value = own_start.as_ref().map(|v| part.lp.value_of(v));
        parts += 1;
        at.set(parts);
        let seconds = (time_limit - clock.elapsed().as_secs_f64()).max(0.0);
        let search = match cfg.nodes {
            Some(nodes) => Some(Search { nodes, iterations: None }),
            None => default_search(&part.lp, iteration_limits(cfg)),
        };
        let sol = match (search, own_value) {
            // At the objective's trivial bound the start is optimal.
            (_, Some(w)) if own_start.as_deref().is_some_and(|v| part.lp.at_trivial_bound(v)) => {
                Solution { status: SolveStatus::None, values: vec![], objective: w, bound: w, stop: Stop::Finished }
            }
            (None, Some(_)) => {
                let mut sol = unsearched(cfg.solver, part, known.relaxation, seconds);
                // Too large to search whole, it may be searched in windows
                // from its start (docs/ilp.md, "Windows").
                if let (Some(near), Some(s)) = (known.near.filter(|_| windows::apply(cfg.solver, nnz(&part.lp))), own_start.as_deref()) {
                    let left = (time_limit - clock.elapsed().as_secs_f64()).max(0.0);
                    let w = windows::search(cfg.solver, part, near, s, left, windows::SHAPE);
                    windowed = (windowed.0 + w.searched, windowed.1 + w.improved);
                    if let Some(v) = w.values {
                        sol.objective = part.lp.value_of(&v);
                        (sol.status, sol.values) = (SolveStatus::Feasible, v);
                    }
                    if w.stop != Stop::Finished {
                        sol.stop = w.stop;
                    }
                }
                sol
            }
            // Without a warm start even a large part needs the root.
            (search, _) => {
                let Search { nodes, iterations } = search.unwrap_or(Search { nodes: 0, iterations: None });
                cfg.solver.solve(&part.lp, Limits { nodes, iterations, seconds, start: own_start.as_deref(), heuristics: cfg.model != IlpModel::Lazy, progress: watch })
            }
        };
        // The first part that stops names the limit; a time limit anywhere
        // is reported as such, and a failure anywhere but beside one.
        if stop == Stop::Finished && sol.stop != Stop::Finished {
            stop = sol.stop;
            limit = match (sol.stop, search) {
                (Stop::SizeLimit, _) => nnz(&part.lp) as u64,
                (Stop::IterationLimit, Some(s)) => s.iterations.unwrap_or(0),
                (_, s) => s.map_or(0, |s| s.nodes),
            };
        } else if sol.stop == Stop::TimeLimit || (matches!(sol.stop, Stop::Failed(_)) && stop != Stop::TimeLimit) {
            stop = sol.stop;
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
    Solved { solution: Solution { status, values, objective, bound, stop }, parts, improved, limit, windows: windowed }
}

/// What stopped a solve early, for `-v`.
fn stop_reason(cfg: &ClusterConfig, solved: &Solved) -> String {
    match solved.solution.stop {
        Stop::NodeLimit => format!("node limit {} reached", solved.limit),
        Stop::IterationLimit => format!("iteration limit {} reached", solved.limit),
        Stop::TimeLimit => format!("time limit {} s reached", cfg.time_limit),
        Stop::SizeLimit => {
            let whole = format!("not searched: {} non-zeros, over {} (--ilp-nodes searches it)", solved.limit, search_nnz(iteration_limits(cfg)));
            match solved.windows {
                (0, _) => whole,
                (n, k) => format!("{}; {} windows of {} nodes searched, {} found better", whole, n, windows::SHAPE.nodes, k),
            }
        }
        Stop::Failed(why) => format!("the solver failed ({})", why),
        Stop::Finished => "stopped".to_string(),
    }
}

/// A part too large to search (`default_search`): no solution, and the
/// linear relaxation's optimum as the bound on the part's objective (the
/// whole model's relaxed optimum restricted to the part is the part's:
/// no row joins parts). Where the whole was not relaxed (a model past
/// the root cuts' size, `separate::cuts_apply`), a part is relaxed alone
/// when it is within that size too; a larger one has no bound, as its
/// relaxation would cost as much as the whole's that was saved.
fn unsearched(solver: &dyn Solver, part: &afc_ir::lp::Part, relaxation: Option<&[f64]>, seconds: f64) -> Solution {
    let bound = match relaxation {
        Some(r) => part.lp.value_of(&part.restrict(r)),
        None if nnz(&part.lp) > separate::MAX_NNZ => f64::NEG_INFINITY,
        None => {
            let r = solver.solve(&part.lp.relaxed(), Limits { nodes: 0, iterations: None, seconds, start: None, heuristics: false, progress: None });
            if r.status == SolveStatus::None {
                f64::NEG_INFINITY
            } else {
                r.objective
            }
        }
    };
    Solution { status: SolveStatus::None, values: vec![], objective: f64::INFINITY, bound, stop: Stop::SizeLimit }
}

/// Clusters as sets of node ids: petgraph's union-find, read back as
/// groups in order of their smallest member.
pub type Groups = petgraph::unionfind::UnionFind<usize>;

/// `here` on this thread and `there` on a second one, named `name`, at
/// once when `beside`; otherwise, or where no thread can be started, one
/// after the other, `here` first. A panic or internal error in `there` is
/// carried to this thread. Each must give what it would alone (the
/// clustering cannot depend on which thread ran what, or when).
pub(crate) fn at_once<A, B: Send>(beside: bool, name: &str, here: impl FnOnce() -> A, there: impl Fn() -> B + Sync) -> (A, B) {
    std::thread::scope(|s| {
        let t = beside.then(|| std::thread::Builder::new().name(name.into()).spawn_scoped(s, &there).ok()).flatten();
        let a = here();
        let b = match t {
            Some(t) => t.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
            None => there(),
        };
        (a, b)
    })
}

/// `each(state, k)` for every k below `count`, on this thread and, when
/// `beside`, a second one, each taking the next k as it comes with state
/// of its own (`fresh`); the results in the order of k. Each result must
/// be what it would be on one thread, so the output cannot depend on
/// which thread took what (`at_once`).
pub(crate) fn each_at_once<S, T: Send>(beside: bool, name: &str, count: usize, fresh: impl Fn() -> S + Sync, each: impl Fn(&mut S, usize) -> T + Sync) -> Vec<T> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut state = fresh();
        let mut done = vec![];
        loop {
            let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            if k >= count {
                return done;
            }
            done.push((k, each(&mut state, k)));
        }
    };
    let (mut done, theirs) = at_once(beside && count > 1, name, work, work);
    done.extend(theirs);
    done.sort_unstable_by_key(|(k, _)| *k);
    done.into_iter().map(|(_, t)| t).collect()
}

/// The groups of a union-find over node ids, each in increasing order,
/// ordered by their first member.
pub fn groups_of(u: &Groups) -> Vec<Vec<NodeId>> {
    let mut by_root: indexmap::IndexMap<usize, Vec<NodeId>> = indexmap::IndexMap::new();
    for (i, r) in u.clone().into_labeling().into_iter().enumerate() {
        by_root.entry(r).or_default().push(NodeId(i as u32));
    }
    by_root.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A program of `nnz` non-zeros (a multiple of 10): `nnz / 10`
    /// binaries, and a row over each one and the eight after it.
    fn of_size(nnz: usize) -> Lp {
        let mut lp = Lp::default();
        let vars: Vec<_> = (0..nnz / 10).map(|i| lp.binary(format!("v{}", i))).collect();
        for i in 0..vars.len() {
            lp.row(format!("r{}", i), (0..9).map(|k| (vars[(i + k) % vars.len()], 1.0)).collect(), 1.0, f64::INFINITY);
        }
        lp
    }

    /// A part past `SEARCH_NNZ` is bounded by its iterations, not by the
    /// node formula (some 45 nodes at 200 combinators, which stopped most
    /// such searches first); a part within it by the formula alone.
    #[test]
    fn an_iteration_limited_search_has_no_node_limit_of_its_own() {
        let small = of_size(5_000);
        let s = default_search(&small, true).unwrap();
        assert_eq!(s.iterations, None);
        assert_eq!(s.nodes, (NODE_WORK / (nnz(&small) as f64).powf(1.5)) as u64);
        let large = of_size(12_000);
        assert_eq!(nnz(&large), 12_000);
        assert!(nnz(&large) > SEARCH_NNZ && nnz(&large) <= ITERATION_NNZ);
        assert_eq!(default_search(&large, true), Some(Search { nodes: MAX_NODES, iterations: Some((ITERATION_WORK / nnz(&large) as f64) as u64) }));
        // Where no iteration limit applies (CBC, the lazy model) it is not searched.
        assert_eq!(default_search(&large, false), None);
        assert_eq!(default_search(&of_size(ITERATION_NNZ + 1_000), true), None);
    }
}
