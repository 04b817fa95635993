//! Builds the dependency graph from the labelled program alone (DESIGN.md
//! decision 3): streamed inputs give fusible edges; scalars computed by a
//! node and arrays indexed by a worker give fusion-preventing edges.

use afc_ir::graph::{DepGraph, Edge, EdgeKind};
use afc_ir::labelled::*;
use afc_ir::sizes::{SizeOrigin, Sizes};
use indexmap::{IndexMap, IndexSet};
use petgraph::graph::DiGraph;
use std::collections::HashMap;

/// What a variable depends on, through top-level scalar statements: the
/// nodes whose completion it needs, with a reason for each.
fn deps_of(
    f: &Function,
    sizes: &Sizes,
    v: VarId,
    producer: &[Option<NodeId>],
    defs: &HashMap<VarId, &Stmt>,
    out: &mut IndexMap<NodeId, (String, VarId)>,
    via: &str,
) {
    if let Some(p) = producer[v.0 as usize] {
        let node = f.node(p);
        let reason = if node.is_barrier() {
            format!("'{}' is made by {}, complete only once it returns{}", f.var(v).name, node.comb().what(), via)
        } else if f.var(v).ty.is_array() {
            format!("'{}' is read by random access{}", f.var(v).name, via)
        } else {
            format!("scalar '{}' is complete only after {} '{}'{}", f.var(v).name, node.combinator(), node.name, via)
        };
        // The edge carries the variable the producer makes.
        out.entry(p).or_insert((reason, v));
        return;
    }
    if let Some(s) = defs.get(&v) {
        let via = if via.is_empty() { format!(" (through '{}')", f.var(v).name) } else { via.to_string() };
        for u in stmt_uses(f, sizes, s) {
            deps_of(f, sizes, u, producer, defs, out, &via);
        }
    }
}

/// The variables a statement reads. An array it only measures is replaced
/// by its size's scalar, if the size is rigid (a filter's count, a
/// generate's argument): the size is known without the array's producer.
fn stmt_uses(f: &Function, sizes: &Sizes, s: &Stmt) -> Vec<VarId> {
    let mut indexed = IndexSet::new();
    indexed_in(&Block { stmts: vec![s.clone()], results: vec![] }, &mut indexed);
    let mut out = vec![];
    for v in afc_ir::labelled::stmt_uses(s) {
        if f.var(v).ty.is_array() && !indexed.contains(&v) {
            out.extend(size_sources(sizes, v));
        } else {
            out.push(v);
        }
    }
    out
}

/// What an array's size is known from: the scalar of a rigid size; for a
/// flexible size nothing (a parameter gives it on entry) unless only extern
/// calls return arrays of it — then those arrays.
fn size_sources(sizes: &Sizes, a: VarId) -> Vec<VarId> {
    let mut out = vec![];
    for c in sizes.of_array.get(&a).into_iter().flatten() {
        match &sizes.classes[c.0 as usize] {
            SizeOrigin::Scalar(Operand::Var(n)) => out.push(*n),
            SizeOrigin::Params(ps) if ps.iter().all(|(p, _)| sizes.returned.contains(p)) => out.extend(ps.iter().map(|(p, _)| *p)),
            _ => {}
        }
    }
    out
}

/// Arrays a block reads by `Index` (not those it only measures).
fn indexed_in(b: &Block, out: &mut IndexSet<VarId>) {
    for s in &b.stmts {
        match s {
            Stmt::Assign { rhs: Rhs::Index(a, _), .. } => {
                out.insert(*a);
            }
            Stmt::Assign { .. } => {}
            Stmt::If { then, els, .. } => {
                indexed_in(then, out);
                indexed_in(els, out);
            }
        }
    }
}

/// Why an array made by `p` cannot be fused into its reader, if `p` is an
/// extern call.
fn barrier(f: &Function, p: NodeId, x: VarId) -> Option<String> {
    let node = f.node(p);
    node.is_barrier().then(|| format!("'{}' is made by {}, complete only once it returns", f.var(x).name, node.comb().what()))
}

/// Why `p` and `c` may not share a nest, if one of them iterates over
/// nested loops whose rows a filter counts: its loops would have to run
/// under the filter's guard, at the sub-rate, which the loop IR does not
/// express (a filter is a `When` around bodies of one loop).
fn nested_under_filter(f: &Function, sizes: &Sizes, p: NodeId, c: NodeId) -> Option<String> {
    [p, c].into_iter().find_map(|n| {
        let shape = sizes.node_shape(n);
        (shape.len() > 1 && sizes.depth(shape[0]) > 0)
            .then(|| format!("'{}' iterates over rows counted by a filter, and nested loops do not fuse at a filter's sub-rate", f.node(n).name))
    })
}

pub fn build(f: &Function, sizes: &Sizes) -> DepGraph {
    let producer = f.producers();
    let mut defs: HashMap<VarId, &Stmt> = HashMap::new();
    let mut forced_manifest: IndexSet<VarId> = IndexSet::new();
    for it in &f.items {
        if let Item::Stmt(s) = it {
            match s {
                Stmt::Assign { dst, .. } => {
                    defs.insert(*dst, s);
                }
                Stmt::If { dsts, .. } => {
                    for d in dsts {
                        defs.insert(*d, s);
                    }
                }
            }
            // Arrays indexed outside any node are read from memory.
            let mut ix = IndexSet::new();
            indexed_in(&Block { stmts: vec![s.clone()], results: vec![] }, &mut ix);
            forced_manifest.extend(ix);
        }
    }
    for r in &f.results {
        if let Operand::Var(v) = r.value {
            if f.var(v).ty.is_array() {
                forced_manifest.insert(v);
            }
        }
    }
    for n in f.node_ids() {
        if f.node(n).writes_randomly() {
            forced_manifest.extend(f.node(n).outputs().iter().copied());
        }
    }
    let mut graph: DiGraph<NodeId, Edge> = DiGraph::new();
    for n in f.node_ids() {
        graph.add_node(n);
    }
    let mut readers: IndexMap<VarId, Vec<NodeId>> = IndexMap::new();
    let mut gather_label: IndexMap<NodeId, u32> = IndexMap::new();
    let mut gathered: IndexSet<(VarId, NodeId)> = IndexSet::new();
    let add = |graph: &mut DiGraph<NodeId, Edge>, a: NodeId, b: NodeId, kind: EdgeKind, v: VarId| {
        let (ia, ib) = (DepGraph::idx(a), DepGraph::idx(b));
        match afc_ir::graph::find_edge(graph, ia, ib) {
            Some(e) => {
                let w = &mut graph[e];
                if !w.vars.contains(&v) {
                    w.vars.push(v);
                }
                if let EdgeKind::Preventing { .. } = kind {
                    if w.is_fusible() {
                        w.kind = kind;
                    }
                }
            }
            None => {
                graph.add_edge(ia, ib, Edge { kind, vars: vec![v] });
            }
        }
    };
    for c in f.node_ids() {
        let node = f.node(c);
        // Captured scalars and indexed arrays: the producer must finish first.
        let mut indexed = IndexSet::new();
        indexed_in(&node.lambda().body, &mut indexed);
        // A gather's source and a force's input are read whole, from memory.
        indexed.extend(node.whole_inputs().iter().copied());
        let mut deps: IndexMap<NodeId, (String, VarId)> = IndexMap::new();
        for v in node.uses_outside_stream() {
            if f.var(v).ty.is_array() && !indexed.contains(&v) {
                // Only measured: a rigid size needs its scalar, nothing else.
                for n in size_sources(sizes, v) {
                    deps_of(f, sizes, n, &producer, &defs, &mut deps, "");
                }
                continue;
            }
            if f.var(v).ty.is_array() {
                forced_manifest.insert(v);
            }
            deps_of(f, sizes, v, &producer, &defs, &mut deps, "");
            // Arrays indexed through scalar statements are manifest too.
            if let Some(s) = defs.get(&v) {
                let mut ix = IndexSet::new();
                indexed_in(&Block { stmts: vec![(*s).clone()], results: vec![] }, &mut ix);
                forced_manifest.extend(ix);
            }
        }
        for (p, (reason, v)) in deps {
            // A combinator that reads an array whole says why.
            let reason = match node.whole_inputs().iter().find(|w| producer[w.0 as usize] == Some(p)) {
                Some(w) => node.comb().why_whole(f, &node.name, *w, &f.node(p).name).unwrap_or(reason),
                None => reason,
            };
            add(&mut graph, p, c, EdgeKind::Preventing { reason }, v);
        }
        for x in node.streamed_inputs() {
            let r = readers.entry(*x).or_default();
            if !r.contains(&c) {
                r.push(c);
            }
            if let Some(p) = producer[x.0 as usize] {
                if let Some(reason) = barrier(f, p, *x) {
                    add(&mut graph, p, c, EdgeKind::Preventing { reason }, *x);
                    continue;
                }
                if f.node(p).writes_randomly() {
                    add(&mut graph, p, c, EdgeKind::Preventing { reason: format!("'{}' is written at random positions, complete only after its loop", f.var(*x).name) }, *x);
                    continue;
                }
                // A filtered array has no known end while it is produced, so
                // a reverse reads it from memory (DESIGN.md decision 8b).
                let filtered = sizes.of_array.get(x).map(|s| sizes.transducer[s[0].0 as usize].is_some()).unwrap_or(false);
                let kind = if let Some(reason) = nested_under_filter(f, sizes, p, c) {
                    EdgeKind::Preventing { reason }
                } else if node.flips_order() && filtered {
                    forced_manifest.insert(*x);
                    EdgeKind::Preventing { reason: format!("'{}' is a filtered array, reversed only once complete", f.var(*x).name) }
                } else {
                    EdgeKind::Fusible { order: 0 }
                };
                add(&mut graph, p, c, kind, *x);
            }
        }
        // A gather reads its source at its own label's order.
        if !node.gathered_inputs().is_empty() {
            let label = 2 + gather_label.len() as u32;
            gather_label.insert(c, label);
            for x in node.gathered_inputs() {
                let r = readers.entry(*x).or_default();
                if !r.contains(&c) {
                    r.push(c);
                }
                gathered.insert((*x, c));
                if let Some(p) = producer[x.0 as usize] {
                    // One node making both a gather's index and its source
                    // would need two orders on one edge.
                    let streamed_too = node.streamed_inputs().iter().any(|i| producer[i.0 as usize] == Some(p));
                    let kind = if let Some(reason) = barrier(f, p, *x) {
                        EdgeKind::Preventing { reason }
                    } else if let Some(reason) = nested_under_filter(f, sizes, p, c) {
                        EdgeKind::Preventing { reason }
                    } else if streamed_too {
                        EdgeKind::Preventing { reason: format!("'{}' makes both the index and the source of gather '{}'", f.node(p).name, node.name) }
                    } else {
                        EdgeKind::Fusible { order: label }
                    };
                    add(&mut graph, p, c, kind, *x);
                }
            }
        }
    }
    // An array that crosses a fusion-preventing edge is read from memory.
    for e in graph.edge_weights() {
        if !e.is_fusible() {
            forced_manifest.extend(e.vars.iter().copied().filter(|v| f.var(*v).ty.is_array()));
        }
    }
    DepGraph::new(graph, readers, forced_manifest, sizes.iteration.clone(), sizes.clone(), gather_label, gathered)
}
