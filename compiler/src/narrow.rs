//! State narrowing (docs/strategy.md, "Picking folds"): a fold whose worker
//! only *picks* some components of its state — moves them, never computes
//! with them — keeps the position of the picked element instead of those
//! components, and reads them once after the nest from arrays that are
//! still in memory there.
//!
//! filterMax's arg-max `fold(|p, q| if q.2 > p.2 { q } else { p }, (0, 0,
//! -inf), zip3(x, y, d))` carries `x[i]` and `y[i]` through its chain only
//! to hand back the winner's; carrying `i` (one integer select in place of
//! two float selects per element) and reading `x[best]`, `y[best]` after
//! the loop is the hand-fused C's shape. The rewrite is exact: the worker
//! makes the same picks, and a picked component is the element of its
//! array at the picked position (or the initial value when nothing was
//! picked, position -1).
//!
//! The rewrite stays in the loop IR, where `--emit=loop-ir` shows it: a
//! `FromIndex` leaf makes the positions, the fold reads them in place of
//! the narrowed components, and an `if` after the nest reads the winners.

use afc_ir::ast::BinOp;
use afc_ir::labelled::{Block, Const, Lambda, Operand, Rhs, Stmt, VarId, VarInfo, VarTy};
use afc_ir::loops::{Body, Function, LoopBody, LoopNest, Order, Step};
use afc_ir::types::Prim;
use std::collections::{BTreeSet, HashMap, HashSet};

/// Narrows every picking fold of `f` that can be narrowed.
pub fn narrow(f: &mut Function) {
    let mut steps = std::mem::take(&mut f.steps);
    narrow_steps(f, &mut steps);
    f.steps = steps;
}

fn narrow_steps(f: &mut Function, steps: &mut Vec<Step>) {
    let mut i = 0;
    while i < steps.len() {
        let after = match &mut steps[i] {
            Step::If(b) => {
                narrow_steps(f, &mut b.then);
                narrow_steps(f, &mut b.els);
                vec![]
            }
            Step::Loop(n) => {
                let mut after = vec![];
                while let Some(plan) = find_plan(f, n) {
                    after.extend(apply(f, n, plan));
                }
                after
            }
            _ => vec![],
        };
        let k = after.len();
        for (j, s) in after.into_iter().enumerate() {
            steps.insert(i + 1 + j, Step::Stmt(s));
        }
        i += 1 + k;
    }
}

/// Which state a value of the worker is a component of: the state (`P`),
/// the element (`Q`), or the one of two that a condition picks.
#[derive(Clone, Debug, PartialEq)]
enum Row {
    P,
    Q,
    Pick(Operand, Box<Row>, Box<Row>),
}

/// The worker's values that are components of a row, with the component.
type Tracked = HashMap<VarId, (Row, usize)>;

/// Follows the components `comps` through a worker of `k` state
/// components: which values carry which component of which row, and the
/// components used for anything but being moved (`bad`). A component the
/// worker yields from another position or from no row is bad too.
fn analyse(op: &Lambda, k: usize, comps: &[usize]) -> (Tracked, BTreeSet<usize>, Vec<Option<Row>>) {
    let mut t = Tracked::new();
    for &j in comps {
        t.insert(op.params[j], (Row::P, j));
        t.insert(op.params[k + j], (Row::Q, j));
    }
    let mut bad = BTreeSet::new();
    analyse_block(&op.body, &mut t, &mut bad);
    let mut rows = vec![None; k];
    for &j in comps {
        match tracked(&t, &op.body.results[j]) {
            Some((row, c)) if c == j => rows[j] = Some(row),
            _ => {
                bad.insert(j);
            }
        }
    }
    (t, bad, rows)
}

fn tracked(t: &Tracked, o: &Operand) -> Option<(Row, usize)> {
    match o {
        Operand::Var(v) => t.get(v).cloned(),
        Operand::Const(_) => None,
    }
}

fn analyse_block(b: &Block, t: &mut Tracked, bad: &mut BTreeSet<usize>) {
    let misuse = |o: &Operand, t: &Tracked, bad: &mut BTreeSet<usize>| {
        if let Some((_, c)) = tracked(t, o) {
            bad.insert(c);
        }
    };
    for s in &b.stmts {
        match s {
            Stmt::Assign { dst, rhs: Rhs::Copy(a), .. } if tracked(t, a).is_some() => {
                let v = tracked(t, a).unwrap();
                t.insert(*dst, v);
            }
            Stmt::Assign { dst, rhs: Rhs::Select(c, a, b), .. } if tracked(t, a).is_some() || tracked(t, b).is_some() => {
                misuse(c, t, bad);
                match (tracked(t, a), tracked(t, b)) {
                    (Some((ra, ca)), Some((rb, cb))) if ca == cb => {
                        t.insert(*dst, (Row::Pick(*c, Box::new(ra), Box::new(rb)), ca));
                    }
                    _ => {
                        misuse(a, t, bad);
                        misuse(b, t, bad);
                    }
                }
            }
            Stmt::Assign { rhs, .. } => {
                for o in rhs.operands() {
                    misuse(&o, t, bad);
                }
            }
            Stmt::If { dsts, cond, then, els, .. } => {
                misuse(cond, t, bad);
                analyse_block(then, t, bad);
                analyse_block(els, t, bad);
                for (k, d) in dsts.iter().enumerate() {
                    let (a, b) = (&then.results[k], &els.results[k]);
                    match (tracked(t, a), tracked(t, b)) {
                        (Some((ra, ca)), Some((rb, cb))) if ca == cb => {
                            t.insert(*d, (Row::Pick(*cond, Box::new(ra), Box::new(rb)), ca));
                        }
                        (None, None) => {}
                        _ => {
                            misuse(a, t, bad);
                            misuse(b, t, bad);
                        }
                    }
                }
            }
        }
    }
}

/// A fold to narrow: its leaf (by its first result), the components to
/// carry as the position, and the array each is read from afterwards.
struct Plan {
    fold: VarId,
    comps: Vec<usize>,
    sources: Vec<VarId>,
}

/// The array in memory after the nest whose element at the root position
/// is `v`'s: `v` itself when the nest does not make it (a parameter, an
/// earlier nest's array), or what a map at the root rate copies into it.
/// `made`: the arrays the nest's leaves make (a row fold's results count:
/// they live in registers only unless stored).
fn source(f: &Function, n: &LoopNest, made: &HashSet<VarId>, roots: &[(LoopBody, Order)], v: VarId) -> Option<VarId> {
    // An array the nest does not make, or stores, is in memory after it.
    if !made.contains(&v) || n.stored(v) {
        return (f.rank(v) == 1).then_some(v);
    }
    roots.iter().find_map(|(l, o)| match l {
        LoopBody::OneToOne { reads, f: w, outs, .. } if *o == 0 => {
            let k = outs.iter().position(|x| *x == v)?;
            let Operand::Var(y) = w.body.results[k] else { return None };
            let m = w.params.iter().position(|p| *p == y)?;
            source(f, n, made, roots, reads[m])
        }
        _ => None,
    })
}

fn find_plan(f: &Function, n: &LoopNest) -> Option<Plan> {
    // The root-level leaves that run at the root loop's own positions,
    // unguarded: the only ones whose element at position `i` is what the
    // loop computes at its `i`-th iteration.
    let roots: Vec<(LoopBody, Order)> = n.root.body.at_loop_rate().into_iter().map(|(l, o)| (l.clone(), o)).collect();
    // Once per nest, not per fold: a nest of thousands of folds searched
    // its leaves for every one.
    let made: HashSet<VarId> = n.root.body.leaves().iter().flat_map(|l| l.array_outs()).collect();
    for (l, o) in &roots {
        let LoopBody::ManyToOne { reads, op, results, state: None, .. } = l else { continue };
        if *o != 0 {
            continue;
        }
        let k = results.len();
        // The state must be an element: component j of the state and of
        // the element are the same thing.
        let prim = |v: &VarId| f.var(*v).ty.prim();
        if reads.len() != k || reads.iter().zip(results).any(|(r, s)| prim(r) != prim(s)) {
            continue;
        }
        let mut comps: Vec<usize> = (0..k).filter(|&j| source(f, n, &made, &roots, reads[j]).is_some()).collect();
        // Drop the components the worker computes with, until what is left
        // is only moved.
        let rows = loop {
            if comps.is_empty() {
                break vec![];
            }
            let (_, bad, rows) = analyse(op, k, &comps);
            if bad.is_empty() {
                break rows;
            }
            comps.retain(|j| !bad.contains(j));
        };
        // The components picked together (by the same conditions) become
        // one position; the largest such group.
        let mut best: Vec<usize> = vec![];
        for &j in &comps {
            let group: Vec<usize> = comps.iter().copied().filter(|&c| rows[c] == rows[j]).collect();
            if group.len() > best.len() {
                best = group;
            }
        }
        if best.is_empty() {
            continue;
        }
        let sources = best.iter().map(|&j| source(f, n, &made, &roots, reads[j]).unwrap()).collect();
        return Some(Plan { fold: results[0], comps: best, sources });
    }
    None
}

fn new_var(f: &mut Function, name: &str, ty: VarTy, like: VarId) -> VarId {
    let span = f.var(like).span;
    f.vars.push(VarInfo { name: name.into(), ty, span });
    VarId(f.vars.len() as u32 - 1)
}

/// Rewrites the fold as `plan` says and returns the statements that read
/// the narrowed results after the nest.
fn apply(f: &mut Function, n: &mut LoopNest, plan: Plan) -> Vec<Stmt> {
    let i64t = VarTy::Scalar(Prim::I64);
    let name = f.var(plan.fold).name.split('.').next().unwrap_or("fold").to_string();
    let at = new_var(f, &format!("{}.at", name), i64t, plan.fold);
    let positions = new_var(f, &format!("{}.i", name), VarTy::Array(1, Prim::I64), plan.fold);
    let ix = new_var(f, "i", i64t, plan.fold);
    f.sizes.insert(positions, vec![n.root.extent]);
    // Rewrite the fold in place; its old initial values and results are
    // what the statements after the nest need.
    let mut old = None;
    n.root.body.visit_mut(&mut |b| {
        if let Body::Leaf(LoopBody::ManyToOne { name: fname, init, reads, op, results, .. }, _) = b {
            if results[0] != plan.fold || old.is_some() {
                return;
            }
            let k = results.len();
            let keep: Vec<usize> = (0..k).filter(|j| !plan.comps.contains(j)).collect();
            *op = rewrite_worker(f, op, k, &plan.comps, &keep);
            *reads = narrowed(positions, reads, &keep);
            let init2 = narrowed(Operand::Const(Const::I64(-1)), init, &keep);
            let results2 = narrowed(at, results, &keep);
            old = Some((fname.clone(), std::mem::replace(init, init2), std::mem::replace(results, results2)));
        }
    });
    let (leaf, init, results) = old.expect("the planned fold is in its nest");
    let placeholder = Body::Leaf(LoopBody::Reverse { name: String::new(), reads: vec![], outs: vec![] }, 0);
    let body = std::mem::replace(&mut n.root.body, placeholder);
    let from_index = LoopBody::FromIndex {
        name: format!("{}.i", leaf),
        f: Lambda { params: vec![ix], body: Block { stmts: vec![], results: vec![Operand::Var(ix)] }, captures: vec![] },
        outs: vec![positions],
    };
    n.root.body = Body::Before { temps: vec![positions], first: Box::new(Body::Leaf(from_index, 0)), then: Box::new(body) };
    // After the nest: the winners' components, or the initial values when
    // nothing was picked.
    let span = f.var(plan.fold).span;
    let found = new_var(f, "found", VarTy::Scalar(Prim::Bool), plan.fold);
    let mut then = Block::default();
    for (c, &j) in plan.comps.iter().enumerate() {
        let e = new_var(f, &f.var(results[j]).name.clone(), f.var(results[j]).ty, results[j]);
        then.stmts.push(Stmt::Assign { dst: e, rhs: Rhs::Index(plan.sources[c], vec![Operand::Var(at)]), span });
        then.results.push(Operand::Var(e));
    }
    let els = Block { stmts: vec![], results: plan.comps.iter().map(|&j| init[j]).collect() };
    vec![
        Stmt::Assign { dst: found, rhs: Rhs::Binary(BinOp::Ge, Operand::Var(at), Operand::Const(Const::I64(0))), span },
        Stmt::If { dsts: plan.comps.iter().map(|&j| results[j]).collect(), cond: Operand::Var(found), then, els, span },
    ]
}

/// `first`, then the components `keep` of `xs`.
fn narrowed<T: Copy>(first: T, xs: &[T], keep: &[usize]) -> Vec<T> {
    std::iter::once(first).chain(keep.iter().map(|&j| xs[j])).collect()
}

/// The worker with components `comps` of both rows replaced by one
/// position each (first), the others (`keep`) in their order.
fn rewrite_worker(f: &mut Function, op: &Lambda, k: usize, comps: &[usize], keep: &[usize]) -> Lambda {
    let (t, _, _) = analyse(op, k, comps);
    let i64t = VarTy::Scalar(Prim::I64);
    let p = new_var(f, "p", i64t, op.params[comps[0]]);
    let q = new_var(f, "q", i64t, op.params[k + comps[0]]);
    let mut pos: HashMap<VarId, VarId> = HashMap::new();
    for &j in comps {
        pos.insert(op.params[j], p);
        pos.insert(op.params[k + j], q);
    }
    let mut params = vec![p];
    params.extend(keep.iter().map(|&j| op.params[j]));
    params.push(q);
    params.extend(keep.iter().map(|&j| op.params[k + j]));
    let mut body = rewrite_block(f, &op.body, &t, &mut pos);
    let first = match op.body.results[comps[0]] {
        Operand::Var(v) => Operand::Var(pos[&v]),
        c => c,
    };
    body.results = std::iter::once(first).chain(keep.iter().map(|&j| op.body.results[j])).collect();
    Lambda { params, body, captures: op.captures.clone() }
}

fn rewrite_block(f: &mut Function, b: &Block, t: &Tracked, pos: &mut HashMap<VarId, VarId>) -> Block {
    let i64t = VarTy::Scalar(Prim::I64);
    let var = |o: &Operand, pos: &HashMap<VarId, VarId>| match o {
        Operand::Var(v) => Operand::Var(pos[v]),
        c => *c,
    };
    let mut out = Block { stmts: vec![], results: b.results.clone() };
    for s in &b.stmts {
        match s {
            Stmt::Assign { dst, rhs, span } if t.contains_key(dst) => match rhs {
                Rhs::Copy(Operand::Var(a)) => {
                    let pa = pos[a];
                    pos.insert(*dst, pa);
                }
                Rhs::Select(c, a, b) => {
                    let np = new_var(f, "at", i64t, *dst);
                    out.stmts.push(Stmt::Assign { dst: np, rhs: Rhs::Select(*c, var(a, pos), var(b, pos)), span: *span });
                    pos.insert(*dst, np);
                }
                _ => unreachable!("a tracked value is a copy, a select or an if's"),
            },
            Stmt::Assign { .. } => out.stmts.push(s.clone()),
            Stmt::If { dsts, cond, then, els, span } => {
                let mut then2 = rewrite_block(f, then, t, pos);
                let mut els2 = rewrite_block(f, els, t, pos);
                let mut dsts2 = vec![];
                let (mut tr, mut er) = (vec![], vec![]);
                // One position per row among the tracked outputs.
                let mut rows: Vec<(Row, VarId)> = vec![];
                for (k, d) in dsts.iter().enumerate() {
                    let Some((row, _)) = t.get(d) else {
                        dsts2.push(*d);
                        tr.push(then.results[k]);
                        er.push(els.results[k]);
                        continue;
                    };
                    if let Some((_, np)) = rows.iter().find(|(r, _)| r == row) {
                        pos.insert(*d, *np);
                        continue;
                    }
                    let np = new_var(f, "at", i64t, *d);
                    rows.push((row.clone(), np));
                    pos.insert(*d, np);
                    dsts2.push(np);
                    tr.push(var(&then.results[k], pos));
                    er.push(var(&els.results[k], pos));
                }
                then2.results = tr;
                els2.results = er;
                out.stmts.push(Stmt::If { dsts: dsts2, cond: *cond, then: then2, els: els2, span: *span });
            }
        }
    }
    out
}
