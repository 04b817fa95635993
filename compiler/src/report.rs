//! Explaining a clustering from outside: `--emit=fusion-report` says, per
//! fusible edge, whether it was fused and, if not, why; `--emit=dot` draws
//! the dependency graph with clusters as boxes (papers/000 Fig. 1.1).

use crate::cluster::ilp::Model;
use crate::cluster::{greedy, ClusterConfig, End, FusionMode};
use afc_ir::cluster::Clustering;
use afc_ir::graph::{DepGraph, EdgeKind, Reach};
use afc_ir::labelled::{Function, NodeId};
use afc_ir::lp::{Lp, LpVar, Part, SolveStatus};
use std::fmt::Write;

/// Why a fusible edge is not fused.
enum Why {
    /// `--fusion=none`.
    Unfused,
    /// A path from the producer to the consumer passes a fusion-preventing
    /// edge: in one loop they would wait for each other.
    PreventingPath { from: NodeId, to: NodeId, reason: String },
    /// Fused, they would need one traversal order, and none serves both:
    /// without the ILP's order rows a clustering fusing them exists.
    Order { order: u32 },
    /// No clustering that fuses them satisfies the ILP's constraints, even
    /// with traversal orders set aside: fusing them would force nodes
    /// between them into the cluster, and some of those cannot join it.
    Illegal,
    /// Legal, but the best clustering that fuses them costs more (or the
    /// same: the solver kept another of equal cost).
    Cost { fused: f64, chosen: f64, proven: bool },
    /// The solve with the edge fused stopped at its limit with nothing.
    Unknown,
    /// The edge's part of the model is too large to search by default:
    /// the cost of the greedy clustering that merges the edge first, if
    /// that merge is legal.
    Unsearched { fused: Option<f64>, chosen: f64 },
}

/// The edge model split into its independent parts, with the chosen
/// clustering's values: fixing an edge changes its own part only, so the
/// question is asked of that part, the rest staying as chosen.
struct Asked<'m> {
    parts: Vec<Part<'m>>,
    /// Each variable's part, and its index there.
    at: Vec<(usize, usize)>,
    values: Vec<f64>,
    chosen: f64,
    /// Greedy's links in its order, for the parts too large to search.
    candidates: Vec<(NodeId, NodeId)>,
}

impl<'m> Asked<'m> {
    fn new(f: &Function, g: &DepGraph, m: &'m Model, c: &Clustering) -> Asked<'m> {
        let parts = m.lp.parts();
        let mut at = vec![(0, 0); m.lp.vars.len()];
        for (k, part) in parts.iter().enumerate() {
            for (i, v) in part.vars.iter().enumerate() {
                at[v.0] = (k, i);
            }
        }
        let values = m.assignment(f, g, c);
        let chosen = m.lp.value_of(&values);
        Asked { parts, at, values, chosen, candidates: greedy::candidates(f, g) }
    }
}

/// `--emit=fusion-report` for one function body.
pub fn fusion_report(f: &Function, g: &DepGraph, c: &Clustering, cfg: &ClusterConfig) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "fn {}{}", f.name, if c.how.is_empty() { String::new() } else { format!(" ({})", c.how) });
    let of = c.cluster_of();
    let name = |n: NodeId| format!("\"{}\"", f.node(n).name);
    let reach = g.reach().ok();
    // The edge model, built once: each unfused edge is asked about by
    // fixing its variable (in its part: `Asked`).
    let model = (cfg.mode != FusionMode::None && !g.is_empty()).then(|| crate::cluster::ilp::model(f, g, cfg.cost, false, false));
    let asked = model.as_ref().map(|m| Asked::new(f, g, m, c));
    for (a, b, e) in g.edges() {
        if !e.is_fusible() || a == b {
            continue;
        }
        let vars: Vec<&str> = e.vars.iter().map(|v| f.var(*v).name.as_str()).collect();
        let edge = format!("{} -> {} [{}]", name(a), name(b), vars.join(", "));
        if of.get(&a) == of.get(&b) {
            let _ = writeln!(out, "  fused {}: cluster {}", edge, of[&a]);
            continue;
        }
        let order = match e.kind {
            EdgeKind::Fusible { order } => order,
            _ => 0,
        };
        let why = if cfg.mode == FusionMode::None {
            Why::Unfused
        } else if let Some(w) = reach.as_ref().filter(|r| r.preventing_path(a, b)).and_then(|r| preventing_edge(g, r, a, b)) {
            w
        } else {
            match (&model, &asked) {
                (Some(m), Some(asked)) => with_edge_fused(f, g, m, asked, a, b, order, cfg),
                _ => Why::Unknown,
            }
        };
        // Costs are sums of integer weights, a solver's values not quite.
        let num = crate::cluster::objective_text;
        let text = match why {
            Why::Unfused => "--fusion=none: every combinator is a loop of its own".to_string(),
            Why::PreventingPath { from, to, reason } => format!(
                "forbidden: a path between them passes the fusion-preventing edge {} -> {} ({}); in one loop they would wait for each other",
                name(from),
                name(to),
                reason
            ),
            Why::Order { order } => format!(
                "forbidden: no common traversal order: {} reads [{}] {}, and no clustering runs both in one order (docs/ilp.md, traversal orders)",
                name(b),
                vars.join(", "),
                describe_order(order)
            ),
            Why::Illegal => "forbidden: every clustering that fuses them also fuses nodes that cannot join them (a dependency cycle, or sizes that differ; docs/ilp.md)".to_string(),
            Why::Cost { fused, chosen, proven } if fused > chosen + 0.5 => format!(
                "cost: the {}clustering that fuses them costs {} against {} (the cost model prefers them apart)",
                if proven { "best " } else { "best found " },
                num(fused),
                num(chosen)
            ),
            Why::Cost { fused, chosen, .. } if cfg.mode == FusionMode::Greedy => {
                format!("greedy: the greedy clustering did not fuse them; the best clustering that does costs {} against {}", num(fused), num(chosen))
            }
            Why::Cost { fused, chosen, .. } if fused < chosen - 0.5 => format!(
                "cost: a clustering that fuses them costs {} against {}: the solver stopped at its node or iteration limit before it (--ilp-nodes searches further)",
                num(fused),
                num(chosen)
            ),
            Why::Cost { fused, chosen, .. } => {
                format!("tie: the best clustering that fuses them costs {} as well ({}); the solver kept this one", num(fused), num(chosen))
            }
            Why::Unknown => "unknown: the solver stopped at its limit before finding a clustering that fuses them".to_string(),
            Why::Unsearched { fused: Some(fused), chosen } => format!(
                "not searched: their part of the model has over {} non-zeros, too many to search once per edge (--ilp-nodes searches it); the greedy clustering that fuses them first costs {} against {}",
                crate::cluster::SEARCH_NNZ,
                num(fused),
                num(chosen)
            ),
            Why::Unsearched { fused: None, .. } => format!(
                "not searched: their part of the model has over {} non-zeros, too many to search once per edge (--ilp-nodes searches it), and greedy cannot fuse them on their own",
                crate::cluster::SEARCH_NNZ
            ),
        };
        let _ = writeln!(out, "  not fused {}: {}", edge, text);
    }
    out
}

/// The first fusion-preventing edge on a path from `a` to `b`, by a
/// breadth-first search over the edges (those from a node `a` reaches to a
/// node that reaches `b`).
fn preventing_edge(g: &DepGraph, reach: &Reach, a: NodeId, b: NodeId) -> Option<Why> {
    let on_path = |x: NodeId| x == a || reach.path(a, x);
    let reaches_b = |x: NodeId| x == b || reach.path(x, b);
    g.edges().find_map(|(x, y, e)| match &e.kind {
        EdgeKind::Preventing { reason } if on_path(x) && reaches_b(y) => Some(Why::PreventingPath { from: x, to: y, reason: reason.clone() }),
        _ => None,
    })
}

fn describe_order(order: u32) -> String {
    match order {
        0 => "left to right".into(),
        1 => "right to left".into(),
        k => format!("at a gather's indices (label {})", k),
    }
}

/// The rows of the edge model about traversal orders (docs/ilp.md).
fn is_order_row(name: &str) -> bool {
    ["order_", "feeds_", "sib_order_", "whole_"].iter().any(|p| name.starts_with(p))
}

/// Solves the edge's part of the edge model with the edge `a -> b` fused
/// (its variable 0), as a clustering solve; if that has no solution,
/// again without the order rows, to tell an order conflict from a
/// structural one. The edge model states every rule, so no lazy rows are
/// looked for. A part past `SEARCH_NNZ` is not solved: the greedy rule
/// merges the edge first instead.
#[allow(clippy::too_many_arguments)]
fn with_edge_fused(f: &Function, g: &DepGraph, m: &Model, asked: &Asked, a: NodeId, b: NodeId, order: u32, cfg: &ClusterConfig) -> Why {
    let Some(x) = m.fused_edges.get(&(a, b)) else { return Why::Unknown };
    if m.order_apart.contains(&(a, b)) {
        return Why::Order { order };
    }
    let (k, local) = asked.at[x.0];
    let part = &asked.parts[k];
    // Past a node limit alone, one search per edge would take seconds
    // each (an iteration limit bounds the clustering's one search).
    if cfg.nodes.is_none() && crate::cluster::nnz(&part.lp) > crate::cluster::SEARCH_NNZ {
        let c = greedy::guided(f, g, std::iter::once((a, b)).chain(asked.candidates.iter().copied()));
        let of = c.cluster_of();
        let fused = (of[&a] == of[&b]).then(|| m.lp.value_of(&m.assignment(f, g, &c)));
        return Why::Unsearched { fused, chosen: asked.chosen };
    }
    // The other parts cost what they cost in the chosen clustering.
    let rest = asked.chosen - part.lp.value_of(&part.restrict(&asked.values));
    let mut lp = part.lp.clone().into_owned();
    lp.row(format!("report_fuse_{}_{}", a.0, b.0), vec![(LpVar(local), 1.0)], 0.0, 0.0);
    let solve = |lp: &mut Lp| crate::cluster::solve_rounds(cfg, None, lp, &mut None, Default::default(), |_| vec![], |_| None);
    let fused = solve(&mut lp);
    match fused.end {
        End::Infeasible => {
            lp.rows.retain(|r| !is_order_row(&r.name));
            match solve(&mut lp).end {
                End::Infeasible => Why::Illegal,
                End::Legal => Why::Order { order },
                _ => Why::Unknown,
            }
        }
        End::Legal => {
            let sol = &fused.solved.solution;
            Why::Cost { fused: rest + sol.objective, chosen: asked.chosen, proven: sol.status == SolveStatus::Optimal }
        }
        _ => Why::Unknown,
    }
}

/// `--emit=dot`: one Graphviz digraph for the whole program; each function
/// body is a box of its own holding its clusters as boxes, combinators as
/// nodes (their `let` name and combinator), array parameters as ellipses
/// with gray edges to their readers, fusible edges solid (bold when fused), fusion-preventing edges red and dashed with their reason as a
/// tooltip. `dot -Tsvg` renders it.
pub fn dot(bodies: &[(String, &Function, &DepGraph, &Clustering)], source: &str) -> String {
    let q = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n"));
    let mut out = String::new();
    let _ = writeln!(out, "digraph afc {{");
    let _ = writeln!(out, "  label={}; labelloc=t; rankdir=TB; compound=true; fontname=\"sans-serif\";", q(&format!("afc clusters of {}", source)));
    let _ = writeln!(out, "  node [shape=box, style=\"rounded,filled\", fillcolor=white, fontname=\"monospace\"];");
    let _ = writeln!(out, "  edge [fontname=\"monospace\", fontsize=10];");
    for (k, (name, f, g, c)) in bodies.iter().enumerate() {
        let _ = writeln!(out, "  subgraph cluster_f{} {{", k);
        let _ = writeln!(out, "    label={}; style=dashed; color=gray40;", q(&format!("fn {} — {}", name, c.how)));
        for (i, members) in c.clusters.iter().enumerate() {
            let _ = writeln!(out, "    subgraph cluster_f{}_{} {{", k, i);
            let _ = writeln!(out, "      label={}; style=filled; fillcolor=\"#eef3fb\"; color=\"#6a8bbf\";", q(&format!("cluster {}", i)));
            for n in members {
                let node = f.node(*n);
                let _ = writeln!(out, "      f{}n{} [label={}];", k, n.0, q(&format!("{}\n{}", node.name, node.combinator())));
            }
            let _ = writeln!(out, "    }}");
        }
        // The function's array parameters, as in papers/000 Fig. 1.1, with
        // an edge to each combinator that reads them.
        for l in &f.params {
            let afc_ir::labelled::Operand::Var(v) = l.value else { continue };
            if let Some(readers) = g.readers.get(&v).filter(|r| !r.is_empty()) {
                let _ = writeln!(out, "    f{}v{} [label={}, shape=ellipse, style=solid];", k, v.0, q(&f.var(v).name));
                for r in readers {
                    let _ = writeln!(out, "    f{}v{} -> f{}n{} [color=gray50];", k, v.0, k, r.0);
                }
            }
        }
        let _ = writeln!(out, "  }}");
        let of = c.cluster_of();
        for (a, b, e) in g.edges() {
            let vars: Vec<&str> = e.vars.iter().map(|v| f.var(*v).name.as_str()).collect();
            let label = q(&vars.join(", "));
            let style = match &e.kind {
                EdgeKind::Fusible { .. } if of.get(&a) == of.get(&b) => "style=bold".to_string(),
                EdgeKind::Fusible { .. } => "style=solid".to_string(),
                EdgeKind::Preventing { reason } => format!("color=red, fontcolor=red, style=dashed, tooltip={}", q(reason)),
            };
            let _ = writeln!(out, "  f{}n{} -> f{}n{} [label={}, {}];", k, a.0, k, b.0, label, style);
        }
    }
    let _ = writeln!(out, "}}");
    out
}
