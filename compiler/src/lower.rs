//! Lowers a clustered function to the loop IR: each cluster's fusion tree
//! becomes one `For` nest (Vertical → Before, Diagonal → Before',
//! Horizontal → Besides), scalar statements are placed between nests as
//! early as their inputs allow, and `length` becomes the size it names.

use afc_ir::cluster::Clustering;
use afc_ir::diag::SourceFile;
use afc_ir::fusion::FusionTree;
use afc_ir::graph::DepGraph;
use afc_ir::combinator::Lowered;
use afc_ir::labelled::*;
use afc_ir::loops::{self, Body, Loop, LoopBody, LoopNest, SizeExpr, StateOwner, Step, Store, StoreMode};
use afc_ir::sizes::{SizeOrigin, Sizes};
use indexmap::IndexMap;
use std::collections::HashSet;

pub fn lower(
    file: &SourceFile,
    f: &Function,
    sizes: &Sizes,
    g: &DepGraph,
    c: &Clustering,
    trees: &[FusionTree],
) -> loops::Function {
    let manifest = c.manifest(f, g);
    // A flexible size is read from a parameter if the class has one, else
    // from the array of the extern call that returns first.
    let call_rank: IndexMap<VarId, usize> = c
        .clusters
        .iter()
        .enumerate()
        .flat_map(|(k, ms)| ms.iter().flat_map(move |m| f.node(*m).outputs().iter().map(move |o| (*o, k))))
        .filter(|(o, _)| sizes.returned.contains(o))
        .collect();
    let representative = |ps: &[(VarId, u8)]| -> (VarId, u8) {
        ps.iter().copied().find(|(p, _)| !sizes.returned.contains(p)).unwrap_or_else(|| *ps.iter().min_by_key(|(p, _)| call_rank[p]).unwrap())
    };
    let size_of_class = |id: afc_ir::sizes::SizeId| match &sizes.classes[id.0 as usize] {
        SizeOrigin::Params(ps) => {
            let (v, d) = representative(ps);
            SizeExpr::Dim(v, d)
        }
        SizeOrigin::Scalar(o) => SizeExpr::Scalar(*o),
        SizeOrigin::Unknown => unreachable!("only an extern call iterates ⊥, and no array has that size"),
    };
    let mut array_sizes: IndexMap<VarId, Vec<SizeExpr>> = IndexMap::new();
    let mut capacity: IndexMap<VarId, SizeExpr> = IndexMap::new();
    for (v, shape) in &sizes.of_array {
        array_sizes.insert(*v, shape.iter().map(|d| size_of_class(*d)).collect());
        // A filtered array needs the room of what was filtered.
        let mut root = shape[0];
        while let Some(p) = sizes.parent(root) {
            root = p;
        }
        capacity.insert(*v, size_of_class(root));
    }
    let same_size: Vec<Vec<SizeExpr>> = sizes
        .classes
        .iter()
        .filter_map(|c| match c {
            SizeOrigin::Params(ps) => {
                Some(ps.iter().filter(|(p, _)| !sizes.returned.contains(p)).map(|(p, d)| SizeExpr::Dim(*p, *d)).collect::<Vec<_>>())
            }
            _ => None,
        })
        .filter(|ps: &Vec<SizeExpr>| ps.len() > 1)
        .collect();
    let rewrite = |b: &Block| rewrite_lengths(b, &array_sizes);

    let mut vars = f.vars.clone();
    let mut locations = IndexMap::new();
    locations.insert(f.span, file.location(f.span));
    for n in f.node_ids() {
        let node = f.node(n);
        locations.insert(node.span, file.location(node.span));
        loops::collect_locations(file, &node.lambda().body, &mut locations);
    }

    let leaf = |n: NodeId| -> LoopBody {
        let node = f.node(n);
        let lam = |l: &Lambda| Lambda { params: l.params.clone(), body: rewrite(&l.body), captures: l.captures.clone() };
        match node.comb().lower(&node.name, node.span, &lam) {
            Lowered::Body(b) => b,
            Lowered::Call { .. } => unreachable!("a barrier is a step of its own"),
        }
    };
    let orders = afc_ir::cluster::orders(f, g, c).expect("clusterings are checked before lowering");
    let leaf_order = |n: NodeId| -> (LoopBody, u32) { (leaf(n), orders[n.0 as usize]) };
    /// The body of loop `current` for tree `t`; `owner` owns the state
    /// of the stateful leaves directly in it (the loop around `current`:
    /// a row-wise fold's accumulator is set for each row), `None` at the
    /// nest's root.
    fn body(t: &FusionTree, cx: &mut BodyCx, current: VarId, owner: StateOwner) -> Body {
        match t {
            FusionTree::Leaf(n) => {
                let (mut l, o) = (cx.leaf)(*n);
                if let Some(s) = l.state_mut() {
                    *s = owner;
                }
                Body::Leaf(l, o)
            }
            FusionTree::Loop { size, body: inner } => {
                let (index, extent) = (cx.new_loop)(*size);
                let b = body(inner, cx, index, Some(current));
                Body::For(Box::new(Loop::new(index, extent, b)))
            }
            // A filter fused with its consumers guards them.
            FusionTree::Vertical { via, first, then } | FusionTree::Diagonal { via, first, then }
                if matches!(**first, FusionTree::Leaf(n) if matches!((cx.leaf)(n).0, LoopBody::Filter { .. })) =>
            {
                Body::When { temps: via.clone(), filter: Box::new(body(first, cx, current, owner)), then: Box::new(body(then, cx, current, owner)) }
            }
            FusionTree::Vertical { via, first, then } => {
                Body::Before { temps: via.clone(), first: Box::new(body(first, cx, current, owner)), then: Box::new(body(then, cx, current, owner)) }
            }
            FusionTree::Diagonal { via, first, then } => {
                Body::BeforeKeep { temps: via.clone(), first: Box::new(body(first, cx, current, owner)), then: Box::new(body(then, cx, current, owner)) }
            }
            FusionTree::Horizontal(a, b) => Body::Besides(Box::new(body(a, cx, current, owner)), Box::new(body(b, cx, current, owner))),
        }
    }

    // Top-level statements, in source order, waiting for their inputs.
    let mut pending: Vec<Stmt> = vec![];
    for it in &f.items {
        if let Item::Stmt(s) = it {
            loops::collect_stmt_location(file, s, &mut locations);
            let b = rewrite(&Block { stmts: vec![s.clone()], results: vec![] });
            pending.extend(b.stmts);
        }
    }
    let mut available: HashSet<VarId> = f.param_vars().into_iter().collect();
    let mut steps = vec![];
    let flush = |pending: &mut Vec<Stmt>, available: &mut HashSet<VarId>, steps: &mut Vec<Step>| loop {
        let pos = pending.iter().position(|s| stmt_uses(s).iter().all(|v| available.contains(v)));
        match pos {
            Some(i) => {
                let s = pending.remove(i);
                available.extend(stmt_defs(&s));
                steps.push(Step::Stmt(s));
            }
            None => break,
        }
    };
    flush(&mut pending, &mut available, &mut steps);
    for (k, (members, t)) in c.clusters.iter().zip(trees).enumerate() {
        let first = members[0];
        let lowered = f.node(first).comb().lower(&f.node(first).name, f.node(first).span, &|l: &Lambda| l.clone());
        if let Lowered::Call { func, args, outputs, arrays } = &lowered {
            let node = f.node(first);
            assert_eq!(members.len(), 1, "an extern call fuses with nothing");
            let (args, outputs, arrays) = (args.clone(), outputs.clone(), arrays.clone());
            // Each array it returns must have its class's size, if another
            // array (a parameter, an earlier call's result) fixes it.
            let checks = arrays
                .iter()
                .flat_map(|(leaves, _)| {
                    let r = leaves[0];
                    array_sizes[&r].iter().enumerate().filter_map(move |(d, size)| match size {
                        SizeExpr::Dim(rep, rd) if (*rep, *rd as usize) != (r, d) => Some((r, d as u8, *size)),
                        _ => None,
                    })
                })
                .collect();
            steps.push(Step::Call(loops::Call { cluster: k, name: node.name.clone(), func: func.clone(), args, outputs, arrays, checks, span: node.span }));
            available.extend(node.defines());
            flush(&mut pending, &mut available, &mut steps);
            continue;
        }
        let index = VarId(vars.len() as u32);
        vars.push(VarInfo { name: "i".into(), ty: VarTy::Scalar(afc_ir::types::Prim::I64), span: f.node(first).span });
        let span0 = f.node(first).span;
        let mut new_loop = |size: afc_ir::sizes::SizeId| -> (VarId, SizeExpr) {
            let v = VarId(vars.len() as u32);
            vars.push(VarInfo { name: "j".into(), ty: VarTy::Scalar(afc_ir::types::Prim::I64), span: span0 });
            (v, size_of_class(size))
        };
        let mut b = body(t, &mut BodyCx { leaf: &leaf_order, new_loop: &mut new_loop }, index, None);
        let mut stores = vec![];
        for l in b.leaves() {
            for o in l.array_outs() {
                if manifest.contains(&o) {
                    stores.push(Store { array: o, mode: StoreMode::Normal });
                }
            }
        }
        // (A scatter's outputs are always manifest: forced by the graph.)
        // The nest iterates at its root rate: nodes at a gather's label run
        // at that gather's indices, not over their own size.
        let root = members
            .iter()
            .filter(|n| orders[n.0 as usize] <= 1)
            .map(|n| sizes.node_shape(*n))
            .min_by_key(|s| (sizes.depth(s[0]), s[0].0))
            .unwrap_or(&g.iteration[first.0 as usize]);
        let extent = size_of_class(root[0]);
        let mut labels = vec![];
        for m in members {
            let c = f.node(*m).comb();
            if let (Some(source), Some(index)) = (c.gathered().first(), c.label_index()) {
                labels.push(loops::GatherIndex {
                    label: g.gather_label[m],
                    name: f.node(*m).name.clone(),
                    index,
                    order: orders[m.0 as usize],
                    source: *source,
                    span: f.node(*m).span,
                });
            }
        }
        // The span of the node whose size this is, for a negative-size error.
        let span = members
            .iter()
            .find(|n| !f.node(**n).comb().size_args().is_empty())
            .map(|n| f.node(*n).span)
            .unwrap_or(f.node(first).span);
        // A cross run in order (not at a gather's indices) is the root of
        // its nest, which is two loops: over its first argument, and inside
        // that over its second; every member runs in the inner one.
        let split = members.iter().filter(|m| orders[m.0 as usize] <= 1).find_map(|m| f.node(*m).comb().nested_over());
        let root = match split {
            Some((a, bb)) => {
                let inner = VarId(vars.len() as u32);
                vars.push(VarInfo { name: "j".into(), ty: VarTy::Scalar(afc_ir::types::Prim::I64), span: f.node(first).span });
                b.visit_mut(&mut |x| {
                    if let Body::Leaf(LoopBody::Cross { at, .. }, o) = x {
                        if *o <= 1 {
                            *at = Some((index, inner));
                        }
                    }
                });
                let size = |v: VarId| array_sizes.get(&v).map(|s| s[0]).unwrap_or(SizeExpr::Dim(v, 0));
                Loop::new(index, size(a), Body::For(Box::new(Loop::new(inner, size(bb), b))))
            }
            None => Loop::new(index, extent, b),
        };
        // Every size a generate makes its shape from is checked
        // non-negative before the nest: those of inner loops and of
        // generates run at a gather's indices too, even where no iteration
        // would reach them. (A size not known before the nest is a
        // filter's count made in it: never negative.)
        let mut checks: Vec<(Operand, afc_ir::diag::Span)> = vec![];
        for m in members {
            for size in f.node(*m).comb().size_args() {
                let known = match size {
                    Operand::Const(Const::I64(n)) => n < 0,
                    Operand::Var(v) => available.contains(&v),
                    _ => false,
                };
                if known && !checks.iter().any(|(o, _)| *o == size) {
                    checks.push((size, f.node(*m).span));
                }
            }
        }
        steps.push(Step::Loop(LoopNest { cluster: k, root, stores, span, labels, checks, streaming_from: None }));
        for n in members {
            available.extend(f.node(*n).defines());
        }
        flush(&mut pending, &mut available, &mut steps);
    }
    assert!(pending.is_empty(), "lowering: statements left unscheduled in fn {}", f.name);
    loops::Function {
        name: f.name.clone(),
        params: f.params.clone(),
        results: f.results.clone(),
        vars,
        steps,
        sizes: array_sizes,
        capacity,
        same_size,
        vector_math: None,
        staged: vec![],
        locations,
        span: f.span,
    }
}

struct BodyCx<'a> {
    leaf: &'a dyn Fn(NodeId) -> (LoopBody, u32),
    new_loop: &'a mut dyn FnMut(afc_ir::sizes::SizeId) -> (VarId, SizeExpr),
}

/// Replaces `length(a)` and `shape(a)`'s components by the sizes size
/// inference gave `a`.
fn rewrite_lengths(b: &Block, sizes: &IndexMap<VarId, Vec<SizeExpr>>) -> Block {
    let stmts = b
        .stmts
        .iter()
        .map(|s| match s {
            Stmt::Assign { dst, rhs: Rhs::Length(a, d), span } => {
                let rhs = match sizes.get(a).map(|s| s[*d as usize]) {
                    Some(SizeExpr::Dim(p, pd)) => Rhs::Length(p, pd),
                    Some(SizeExpr::Scalar(o)) => Rhs::Copy(o),
                    None => Rhs::Length(*a, *d),
                };
                Stmt::Assign { dst: *dst, rhs, span: *span }
            }
            Stmt::If { dsts, cond, then, els, span } => Stmt::If {
                dsts: dsts.clone(),
                cond: *cond,
                then: rewrite_lengths(then, sizes),
                els: rewrite_lengths(els, sizes),
                span: *span,
            },
            other => other.clone(),
        })
        .collect();
    Block { stmts, results: b.results.clone() }
}

