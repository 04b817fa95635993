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
use afc_ir::loops::{self, Body, Loop, LoopBody, LoopNest, SizeExpr, Step, Store, StoreMode};
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
    let representative = |ps: &[VarId]| -> VarId {
        ps.iter().copied().find(|p| !sizes.returned.contains(p)).unwrap_or_else(|| *ps.iter().min_by_key(|p| call_rank[*p]).unwrap())
    };
    let size_of_class = |id: afc_ir::sizes::SizeId| match &sizes.classes[id.0 as usize] {
        SizeOrigin::Params(ps) => SizeExpr::Dim(representative(ps), 0),
        SizeOrigin::Scalar(o) => SizeExpr::Scalar(*o),
        SizeOrigin::Unknown => unreachable!("only an extern call iterates ⊥, and no array has that size"),
    };
    let mut array_sizes: IndexMap<VarId, SizeExpr> = IndexMap::new();
    let mut capacity: IndexMap<VarId, SizeExpr> = IndexMap::new();
    for (v, id) in &sizes.of_array {
        array_sizes.insert(*v, size_of_class(*id));
        // A filtered array needs the room of what was filtered.
        let mut root = *id;
        while let Some(p) = sizes.parent(root) {
            root = p;
        }
        capacity.insert(*v, size_of_class(root));
    }
    let same_size: Vec<Vec<VarId>> = sizes
        .classes
        .iter()
        .filter_map(|c| match c {
            SizeOrigin::Params(ps) => Some(ps.iter().copied().filter(|p| !sizes.returned.contains(p)).collect::<Vec<_>>()),
            _ => None,
        })
        .filter(|ps: &Vec<VarId>| ps.len() > 1)
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
    fn body(t: &FusionTree, leaf: &dyn Fn(NodeId) -> (LoopBody, u32)) -> Body {
        match t {
            FusionTree::Leaf(n) => {
                let (l, o) = leaf(*n);
                Body::Leaf(l, o)
            }
            // A filter fused with its consumers guards them.
            FusionTree::Vertical { via, first, then } | FusionTree::Diagonal { via, first, then }
                if matches!(**first, FusionTree::Leaf(n) if matches!(leaf(n).0, LoopBody::Filter { .. })) =>
            {
                Body::When { temps: via.clone(), filter: Box::new(body(first, leaf)), then: Box::new(body(then, leaf)) }
            }
            FusionTree::Vertical { via, first, then } => {
                Body::Before { temps: via.clone(), first: Box::new(body(first, leaf)), then: Box::new(body(then, leaf)) }
            }
            FusionTree::Diagonal { via, first, then } => {
                Body::BeforeKeep { temps: via.clone(), first: Box::new(body(first, leaf)), then: Box::new(body(then, leaf)) }
            }
            FusionTree::Horizontal(a, b) => Body::Besides(Box::new(body(a, leaf)), Box::new(body(b, leaf))),
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
                .filter_map(|(leaves, _)| match array_sizes.get(&leaves[0]) {
                    Some(SizeExpr::Dim(rep, 0)) if *rep != leaves[0] => Some((leaves[0], *rep)),
                    _ => None,
                })
                .collect();
            steps.push(Step::Call(loops::Call { cluster: k, name: node.name.clone(), func: func.clone(), args, outputs, arrays, checks, span: node.span }));
            available.extend(node.defines());
            flush(&mut pending, &mut available, &mut steps);
            continue;
        }
        let index = VarId(vars.len() as u32);
        vars.push(VarInfo { name: "i".into(), ty: VarTy::Scalar(afc_ir::types::Prim::I64), span: f.node(first).span });
        let mut b = body(t, &leaf_order);
        let mut stores = vec![];
        for l in b.leaves() {
            for o in l.element_outs() {
                if manifest.contains(o) {
                    stores.push(Store { array: *o, mode: StoreMode::Normal });
                }
            }
        }
        // (A scatter's outputs are always manifest: forced by the graph.)
        // The nest iterates at its root rate: nodes at a gather's label run
        // at that gather's indices, not over their own size.
        let root = members
            .iter()
            .filter(|n| orders[n.0 as usize] <= 1)
            .map(|n| sizes.of_node(*n))
            .min_by_key(|s| (sizes.depth(*s), s.0))
            .unwrap_or(g.iteration[first.0 as usize]);
        let extent = size_of_class(root);
        let mut labels = vec![];
        for m in members {
            let c = f.node(*m).comb();
            if let Some(source) = c.gathered().first() {
                labels.push(loops::GatherIndex {
                    label: g.gather_label[m],
                    name: f.node(*m).name.clone(),
                    index: c.streamed()[0],
                    order: orders[m.0 as usize],
                    source: *source,
                    span: f.node(*m).span,
                });
            }
        }
        // The span of the node whose size this is, for a negative-size error.
        let span = members
            .iter()
            .find(|n| f.node(**n).comb().size_arg().is_some())
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
                let size = |v: VarId| array_sizes.get(&v).copied().unwrap_or(SizeExpr::Dim(v, 0));
                Loop::new(index, size(a), Body::For(Box::new(Loop::new(inner, size(bb), b))))
            }
            None => Loop::new(index, extent, b),
        };
        let checks = members
            .iter()
            .filter(|m| orders[m.0 as usize] >= 2)
            .filter_map(|m| match f.node(*m).comb().size_arg() {
                Some(Operand::Const(Const::I64(n))) if n >= 0 => None,
                Some(size) => Some((size, f.node(*m).span)),
                None => None,
            })
            .collect();
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

/// Replaces `length(a)` by the size size inference gave `a`.
fn rewrite_lengths(b: &Block, sizes: &IndexMap<VarId, SizeExpr>) -> Block {
    let stmts = b
        .stmts
        .iter()
        .map(|s| match s {
            Stmt::Assign { dst, rhs: Rhs::Length(a, d), span } => {
                let rhs = match sizes.get(a) {
                    Some(SizeExpr::Dim(p, _)) => Rhs::Length(*p, *d),
                    Some(SizeExpr::Scalar(o)) => Rhs::Copy(*o),
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

