//! Lowers a clustered function to the loop IR: each cluster's fusion tree
//! becomes one `For` nest (Vertical → Before, Diagonal → Before',
//! Horizontal → Besides, Loop → an inner For), an extern or recursive call
//! a call step, an array-level `if` a branch step whose branches are
//! lowered the same way; scalar statements are placed between nests as
//! early as their inputs allow, and `length` becomes the size it names.

use crate::pipeline::FunctionStages;
use afc_ir::combinator::Lowered;
use afc_ir::diag::{SourceFile, Span};
use afc_ir::fusion::FusionTree;
use afc_ir::labelled::*;
use afc_ir::loops::{self, Body, Loop, LoopBody, LoopNest, SizeExpr, StateOwner, Step, Store, StoreMode};
use afc_ir::sizes::{SizeId, SizeOrigin};
use indexmap::IndexMap;
use std::collections::HashSet;

pub fn lower(file: &SourceFile, stages: &FunctionStages) -> loops::Function {
    let f = &stages.labelled;
    let sizes = &stages.sizes;
    // A flexible size is read from a parameter if the class has one, else
    // from the array returned first (by a call or an `if`) in execution
    // order, which is defined wherever the class is used.
    let mut returned_rank: IndexMap<VarId, usize> = IndexMap::new();
    rank_returns(stages, &mut returned_rank);
    let representative = |ps: &[(VarId, u8)]| -> (VarId, u8) {
        ps.iter().copied().find(|(p, _)| !sizes.returned.contains(p)).unwrap_or_else(|| *ps.iter().min_by_key(|(p, _)| returned_rank.get(p).copied().unwrap_or(usize::MAX)).unwrap())
    };
    let size_of_class = |id: SizeId| match &sizes.classes[id.0 as usize] {
        SizeOrigin::Params(ps) => {
            let (v, d) = representative(ps);
            SizeExpr::Dim(v, d)
        }
        SizeOrigin::Scalar(o) => SizeExpr::Scalar(*o),
        SizeOrigin::Unknown => unreachable!("only a barrier iterates ⊥, and no array has that size"),
    };
    let classes: Vec<Option<SizeExpr>> = (0..sizes.classes.len()).map(|c| (!matches!(sizes.classes[c], SizeOrigin::Unknown)).then(|| size_of_class(SizeId(c as u32)))).collect();
    let mut array_sizes: IndexMap<VarId, Vec<SizeExpr>> = IndexMap::new();
    let mut capacity: IndexMap<VarId, SizeExpr> = IndexMap::new();
    for (v, shape) in &sizes.of_array {
        array_sizes.insert(*v, shape.iter().map(|d| classes[d.0 as usize].unwrap()).collect());
        // A filtered array needs the room of what was filtered. (Filters in
        // branches are in their branch's sizes.)
        let root = filtered_root(stages, shape[0]);
        capacity.insert(*v, classes[root.0 as usize].unwrap());
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
    // Dimensions a barrier returns at a size of its own (an `if`'s only
    // where its branches disagree).
    let returned_dims: HashSet<(VarId, u8)> = sizes
        .classes
        .iter()
        .filter_map(|c| if let SizeOrigin::Params(ps) = c { Some(ps) } else { None })
        .flatten()
        .filter(|(p, _)| sizes.returned.contains(p))
        .copied()
        .collect();
    let mut cx = Cx { file, vars: f.vars.clone(), locations: IndexMap::new(), array_sizes, classes, returned_dims };
    cx.locations.insert(f.span, file.location(f.span));
    let available: HashSet<VarId> = f.param_vars().into_iter().collect();
    let steps = cx.body(stages, available);
    loops::Function {
        name: f.name.clone(),
        exported: f.exported,
        recursive: f.recursive,
        params: f.params.clone(),
        results: f.results.clone(),
        vars: cx.vars,
        steps,
        sizes: cx.array_sizes,
        capacity,
        same_size,
        vector_math: None,
        staged: vec![],
        locations: cx.locations,
        span: f.span,
    }
}

/// Numbers the arrays barriers return in execution order: a call's when it
/// runs, an `if`'s after everything its branches return.
fn rank_returns(stages: &FunctionStages, out: &mut IndexMap<VarId, usize>) {
    let f = &stages.labelled;
    for members in &stages.clustering.clusters {
        let n = members[0];
        if let Some(bodies) = stages.branches.get(&n) {
            for b in bodies {
                rank_returns(b, out);
            }
        }
        if f.node(n).is_barrier() {
            for o in f.node(n).outputs() {
                let k = out.len();
                out.entry(*o).or_insert(k);
            }
        }
    }
}

/// The root of a size's transducer tree, through the filters of the
/// function and of its branches.
fn filtered_root(stages: &FunctionStages, s: SizeId) -> SizeId {
    let mut s = s;
    loop {
        match find_filter(stages, s) {
            Some(parent) => s = parent,
            None => return s,
        }
    }
}

fn find_filter(stages: &FunctionStages, s: SizeId) -> Option<SizeId> {
    if let Some(p) = stages.sizes.parent(s) {
        return Some(p);
    }
    stages.branches.values().flatten().find_map(|b| find_filter(b, s))
}

struct Cx<'a> {
    file: &'a SourceFile,
    vars: Vec<VarInfo>,
    locations: IndexMap<Span, String>,
    array_sizes: IndexMap<VarId, Vec<SizeExpr>>,
    /// Each size class's run-time value (none for ⊥).
    classes: Vec<Option<SizeExpr>>,
    returned_dims: HashSet<(VarId, u8)>,
}

struct BodyCx<'a> {
    leaf: &'a dyn Fn(NodeId) -> (LoopBody, u32),
    new_loop: &'a mut dyn FnMut(SizeId) -> (VarId, SizeExpr),
}

impl Cx<'_> {
    fn size(&self, c: SizeId) -> SizeExpr {
        self.classes[c.0 as usize].expect("a loop's extent is a size of arrays")
    }

    fn new_index(&mut self, name: &str, span: Span) -> VarId {
        self.vars.push(VarInfo { name: name.into(), ty: VarTy::Scalar(afc_ir::types::Prim::I64), span });
        VarId(self.vars.len() as u32 - 1)
    }

    /// Each result of a barrier whose size something else fixes is checked
    /// once it returns: `(result, dimension, size)`.
    fn checks(&self, results: &[VarId]) -> Vec<(VarId, u8, SizeExpr)> {
        let mut out = vec![];
        for r in results {
            for (d, size) in self.array_sizes.get(r).into_iter().flatten().enumerate() {
                let own = self.returned_dims.contains(&(*r, d as u8));
                if own && matches!(size, SizeExpr::Dim(rep, rd) if (*rep, *rd as usize) != (*r, d)) {
                    out.push((*r, d as u8, *size));
                }
            }
        }
        out
    }

    /// The steps of a function or branch; `available` holds what is
    /// defined before it.
    fn body(&mut self, st: &FunctionStages, mut available: HashSet<VarId>) -> Vec<Step> {
        let (f, g, c) = (&st.labelled, &st.graph, &st.clustering);
        let manifest = c.manifest(f, g);
        for n in f.node_ids() {
            let node = f.node(n);
            self.locations.insert(node.span, self.file.location(node.span));
            loops::collect_locations(self.file, &node.lambda().body, &mut self.locations);
        }
        let array_sizes = self.array_sizes.clone();
        let rewrite = |b: &Block| rewrite_lengths(b, &array_sizes);
        let leaf = |n: NodeId| -> LoopBody {
            let node = f.node(n);
            let lam = |l: &Lambda| Lambda { params: l.params.clone(), body: rewrite(&l.body), captures: l.captures.clone() };
            match node.comb().lower(&node.name, node.span, &lam) {
                Lowered::Body(b) => b,
                Lowered::Call { .. } | Lowered::Branch => unreachable!("a barrier is a step of its own"),
            }
        };
        let orders = afc_ir::cluster::orders(f, g, c).expect("clusterings are checked before lowering");
        let leaf_order = |n: NodeId| -> (LoopBody, u32) { (leaf(n), orders[n.0 as usize]) };

        // Top-level statements, in source order, waiting for their inputs.
        let mut pending: Vec<Stmt> = vec![];
        for it in &f.items {
            if let Item::Stmt(s) = it {
                loops::collect_stmt_location(self.file, s, &mut self.locations);
                let b = rewrite(&Block { stmts: vec![s.clone()], results: vec![] });
                pending.extend(b.stmts);
            }
        }
        let mut steps = vec![];
        // Emits every waiting statement whose inputs exist, in source order.
        // One pass suffices: a statement only uses what earlier ones define.
        // (Linear, so a 200,000-statement function lowers in linear time.)
        let flush = |pending: &mut Vec<Stmt>, available: &mut HashSet<VarId>, steps: &mut Vec<Step>| {
            let mut waiting = Vec::with_capacity(pending.len());
            for s in pending.drain(..) {
                if stmt_uses(&s).iter().all(|v| available.contains(v)) {
                    available.extend(stmt_defs(&s));
                    steps.push(Step::Stmt(s));
                } else {
                    waiting.push(s);
                }
            }
            *pending = waiting;
        };
        flush(&mut pending, &mut available, &mut steps);
        for (k, (members, t)) in c.clusters.iter().zip(&st.trees).enumerate() {
            let first = members[0];
            let node = f.node(first);
            match node.comb().lower(&node.name, node.span, &|l: &Lambda| l.clone()) {
                Lowered::Call { func, callee, args, outputs, arrays } => {
                    assert_eq!(members.len(), 1, "a call fuses with nothing");
                    // Each array it returns must have its class's size, if
                    // another array (a parameter, an earlier call's result) fixes it.
                    let firsts: Vec<VarId> = arrays.iter().map(|(l, _)| l[0]).collect();
                    let checks = self.checks(&firsts);
                    steps.push(Step::Call(loops::Call { cluster: k, name: node.name.clone(), func, callee, args, outputs, arrays, checks, span: node.span }));
                }
                Lowered::Branch => {
                    let NodeKind::If(i) = &node.kind else { unreachable!("only an `if` lowers to a branch") };
                    let bodies = &st.branches[&first];
                    let then = self.body(&bodies[0], available.clone());
                    let els = self.body(&bodies[1], available.clone());
                    let results = |b: &Function| b.results.iter().map(|l| l.value).collect::<Vec<_>>();
                    let then_results = rewrite(&Block { stmts: vec![], results: results(&i.then) }).results;
                    let els_results = rewrite(&Block { stmts: vec![], results: results(&i.els) }).results;
                    let checks = self.checks(&i.outputs);
                    steps.push(Step::If(loops::Branch {
                        cluster: k,
                        name: node.name.clone(),
                        cond: i.cond,
                        then,
                        then_results,
                        els,
                        els_results,
                        outputs: i.outputs.clone(),
                        checks,
                        span: node.span,
                    }));
                }
                Lowered::Body(_) => {
                    let nest = self.nest(st, k, members, t, &leaf_order, &orders, &manifest, &available);
                    steps.push(Step::Loop(Box::new(nest)));
                }
            }
            for n in members {
                available.extend(f.node(*n).defines());
            }
            flush(&mut pending, &mut available, &mut steps);
        }
        assert!(pending.is_empty(), "lowering: statements left unscheduled in fn {}", f.name);
        steps
    }

    #[allow(clippy::too_many_arguments)]
    fn nest(
        &mut self,
        st: &FunctionStages,
        k: usize,
        members: &[NodeId],
        t: &FusionTree,
        leaf_order: &dyn Fn(NodeId) -> (LoopBody, u32),
        orders: &[u32],
        manifest: &indexmap::IndexSet<VarId>,
        available: &HashSet<VarId>,
    ) -> LoopNest {
        let (f, g, sizes) = (&st.labelled, &st.graph, &st.sizes);
        let first = members[0];
        let span0 = f.node(first).span;
        let index = self.new_index("i", span0);
        let mut b = {
            let classes = self.classes.clone();
            let mut vars = std::mem::take(&mut self.vars);
            let mut new_loop = |size: SizeId| -> (VarId, SizeExpr) {
                vars.push(VarInfo { name: "j".into(), ty: VarTy::Scalar(afc_ir::types::Prim::I64), span: span0 });
                (VarId(vars.len() as u32 - 1), classes[size.0 as usize].expect("a loop's extent is a size of arrays"))
            };
            let b = body(t, &mut BodyCx { leaf: leaf_order, new_loop: &mut new_loop }, index, None);
            self.vars = vars;
            b
        };
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
        let extent = self.size(root[0]);
        let mut labels = vec![];
        for m in members {
            let c = f.node(*m).comb();
            if let (Some(source), Some(index)) = (c.gathered().first(), c.label_index()) {
                let order = orders[m.0 as usize];
                let whole = order >= 2 && matches!(index, loops::LabelIndex::Arrays(_));
                labels.push(loops::GatherIndex { label: g.gather_label[m], name: f.node(*m).name.clone(), index, order, source: *source, span: f.node(*m).span, whole });
            }
        }
        // The span of the node whose size this is, for a negative-size error.
        let span = members.iter().find(|n| !f.node(**n).comb().size_args().is_empty()).map(|n| f.node(*n).span).unwrap_or(span0);
        // A cross run in order (not at a gather's indices) is the root of
        // its nest, which is two loops: over its first argument, and inside
        // that over its second; every member runs in the inner one.
        let split = members.iter().filter(|m| orders[m.0 as usize] <= 1).find_map(|m| f.node(*m).comb().nested_over());
        let root = match split {
            Some((a, bb)) => {
                let inner = self.new_index("j", span0);
                b.visit_mut(&mut |x| {
                    if let Body::Leaf(l, o) = x {
                        if let LoopBody::Cross { at, .. } = l {
                            if *o <= 1 {
                                *at = Some((index, inner));
                            }
                        }
                        // The body now runs in the inner loop: a row-wise
                        // fold's rows are the cross's positions, so its
                        // accumulator is set per inner iteration.
                        if let Some(s) = l.state_mut() {
                            if *s == Some(index) {
                                *s = Some(inner);
                            }
                        }
                    }
                });
                let size = |v: VarId| self.array_sizes.get(&v).map(|s| s[0]).unwrap_or(SizeExpr::Dim(v, 0));
                Loop::new(index, size(a), Body::For(Box::new(Loop::new(inner, size(bb), b))))
            }
            None => Loop::new(index, extent, b),
        };
        // Every size a generate makes its shape from is checked
        // non-negative before the nest: those of inner loops and of
        // generates run at a gather's indices too, even where no iteration
        // would reach them. (A size not known before the nest is a
        // filter's count made in it: never negative.)
        let mut checks: Vec<(Operand, Span)> = vec![];
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
        LoopNest { cluster: k, root, stores, span, labels, checks, streaming_from: None, parallel: None, keeps: vec![], registers: None, outlined: false }
    }
}

/// The body of loop `current` for tree `t`; `owner` owns the state of the
/// stateful leaves directly in it (the loop around `current`: a row-wise
/// fold's accumulator is set for each row), `None` at the nest's root.
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
