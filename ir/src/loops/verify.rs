//! The loop IR's verifier: the invariants the back end relies on, and the
//! legality of every recorded strategy (docs/strategy.md).

use super::*;
use crate::labelled::{Builtin, Const, Rhs};
use crate::types::Prim;
use indexmap::IndexSet;

/// The identity of a built-in operator LANGUAGE.md lets afc reorder (`+ *
/// min max & | ^`), for one accumulator of type `p`: what a lane starts
/// from. For floats: -0.0 for `+` (exact: x + -0.0 = x for every x, -0.0
/// included) and NaN for `min`/`max` (fmin(NaN, x) = x).
fn identity(op: CombineOp, p: Prim) -> Option<Const> {
    use CombineOp::*;
    Some(match (op, p) {
        (Add, Prim::I32) => Const::I32(0),
        (Add, Prim::I64) => Const::I64(0),
        (Add, Prim::F32) => Const::F32(-0.0),
        (Add, Prim::F64) => Const::F64(-0.0),
        (Mul, Prim::I32) => Const::I32(1),
        (Mul, Prim::I64) => Const::I64(1),
        (Mul, Prim::F32) => Const::F32(1.0),
        (Mul, Prim::F64) => Const::F64(1.0),
        (Min, Prim::I32) => Const::I32(i32::MAX),
        (Min, Prim::I64) => Const::I64(i64::MAX),
        (Max, Prim::I32) => Const::I32(i32::MIN),
        (Max, Prim::I64) => Const::I64(i64::MIN),
        (Min | Max, Prim::F32) => Const::F32(f32::NAN),
        (Min | Max, Prim::F64) => Const::F64(f64::NAN),
        (And, Prim::Bool) => Const::Bool(true),
        (Or | Xor, Prim::Bool) => Const::Bool(false),
        (And, Prim::I32) => Const::I32(-1),
        (And, Prim::I64) => Const::I64(-1),
        (Or | Xor, Prim::I32) => Const::I32(0),
        (Or | Xor, Prim::I64) => Const::I64(0),
        _ => return None,
    })
}

/// The built-in commutative operators (LANGUAGE.md, scalar semantics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CombineOp {
    Add,
    Mul,
    Min,
    Max,
    And,
    Or,
    Xor,
}

/// If a fold's operator combines each accumulator with the element of the
/// same position by one built-in commutative operator and nothing else
/// (`(+)`, `|a, b| b + a`, `min`, `|p, q| (p.0 + q.0, max(p.1, q.1))`), the
/// operator and identity of each component: then afc may reorder it and
/// lanes may start from the identities. `None` otherwise.
pub fn reorderable(op: &Lambda, prim: &dyn Fn(VarId) -> Prim) -> Option<Vec<(CombineOp, Const)>> {
    use crate::ast::BinOp;
    let k = op.body.results.len();
    if op.params.len() != 2 * k || op.body.stmts.len() != k || !op.captures.is_empty() {
        return None;
    }
    let mut out = vec![];
    for (j, r) in op.body.results.iter().enumerate() {
        let (acc, x) = (Operand::Var(op.params[j]), Operand::Var(op.params[k + j]));
        let Operand::Var(rv) = r else { return None };
        let def = op.body.stmts.iter().find_map(|s| match s {
            Stmt::Assign { dst, rhs, .. } if dst == rv => Some(rhs),
            _ => None,
        })?;
        let (c, a, b) = match def {
            Rhs::Binary(o, a, b) => (
                match o {
                    BinOp::Add => CombineOp::Add,
                    BinOp::Mul => CombineOp::Mul,
                    BinOp::BitAnd => CombineOp::And,
                    BinOp::BitOr => CombineOp::Or,
                    BinOp::BitXor => CombineOp::Xor,
                    _ => return None,
                },
                *a,
                *b,
            ),
            Rhs::Builtin(crate::labelled::Builtin::Min, args) if args.len() == 2 => (CombineOp::Min, args[0], args[1]),
            Rhs::Builtin(crate::labelled::Builtin::Max, args) if args.len() == 2 => (CombineOp::Max, args[0], args[1]),
            _ => return None,
        };
        if !((a, b) == (acc, x) || (a, b) == (x, acc)) {
            return None;
        }
        out.push((c, identity(c, prim(op.params[j]))?));
    }
    Some(out)
}

/// Can this block fail at run time (an index, an integer division by a
/// divisor that may be zero, a size product)? Guarded work run without its
/// guard must not.
pub fn block_fallible(vars: &[VarInfo], b: &Block) -> bool {
    b.stmts.iter().any(|s| match s {
        Stmt::Assign { rhs, dst, .. } => match rhs {
            Rhs::Index(..) | Rhs::SizeProduct(..) => true,
            Rhs::Binary(crate::ast::BinOp::Div | crate::ast::BinOp::Rem, _, d) => {
                vars[dst.0 as usize].ty.prim().is_int() && !matches!(d, Operand::Const(Const::I32(x)) if *x != 0 && *x != -1) && !matches!(d, Operand::Const(Const::I64(x)) if *x != 0 && *x != -1)
            }
            _ => false,
        },
        Stmt::If { then, els, .. } => block_fallible(vars, then) || block_fallible(vars, els),
    })
}

/// Can a leaf fail, or write outside its position, when run for an element
/// its guard would have skipped?
fn unsafe_unguarded(f: &Function, l: &LoopBody) -> bool {
    matches!(l, LoopBody::Gather { .. } | LoopBody::Scatter { .. } | LoopBody::Cross { .. } | LoopBody::Transpose { .. }) || l.lambda().map(|lam| block_fallible(&f.vars, &lam.body)).unwrap_or(false)
}

struct V<'a> {
    f: &'a Function,
    nest: &'a LoopNest,
    in_memory: &'a IndexSet<VarId>,
}

impl V<'_> {
    fn name(&self, v: VarId) -> String {
        format!("%{}", self.f.var_name(v))
    }

    /// Checks a loop: its schedule, then its body with the loops around it
    /// (`enclosing`, outermost first).
    fn looop(&self, l: &Loop, enclosing: &mut Vec<VarId>) -> Result<IndexSet<VarId>, String> {
        let c = self.nest.cluster;
        if l.unroll == 0 {
            return Err(format!("cluster {}: loop {} unrolled 0 times", c, self.name(l.index)));
        }
        if l.paired && l.unroll > 1 {
            return Err(format!("cluster {}: loop {} is both paired and unrolled", c, self.name(l.index)));
        }
        if l.simd {
            if let Some(why) = simd_blocker(&self.f.vars, self.nest, l) {
                return Err(format!("cluster {}: loop {} runs its trips as one vector step (simd) {}", c, self.name(l.index), why));
            }
        }
        if let SizeExpr::Dim(v, _) | SizeExpr::Scalar(Operand::Var(v)) = l.extent {
            if (v.0 as usize) >= self.f.vars.len() {
                return Err(format!("cluster {}: loop extent names an unknown variable", c));
            }
        }
        if l.paired {
            let mut bad = None;
            l.body.visit(&mut |b| match b {
                Body::Leaf(leaf, _) if leaf.state().is_some() || matches!(leaf, LoopBody::Scatter { .. }) => bad = Some(leaf.name().to_string()),
                Body::For(_) => bad = Some("an inner loop".into()),
                _ => {}
            });
            if let Some(b) = bad {
                return Err(format!("cluster {}: paired loop {} holds '{}', which must visit positions in order", c, self.name(l.index), b));
            }
        }
        enclosing.push(l.index);
        let mut elements = IndexSet::new();
        let r = self.body(&l.body, &mut elements, enclosing, l, None);
        enclosing.pop();
        r?;
        Ok(elements)
    }

    /// Checks a body inside loop `l`; `elements` are the arrays whose
    /// current element is in registers at this rate. `guard` is the filter
    /// guarding this body, with its write strategy.
    fn body(&self, b: &Body, elements: &mut IndexSet<VarId>, enclosing: &mut Vec<VarId>, l: &Loop, guard: Option<(&LoopBody, FilterWrite)>) -> Result<(), String> {
        let c = self.nest.cluster;
        match b {
            Body::Leaf(leaf, order) => self.leaf(leaf, *order, elements, enclosing, l, guard),
            Body::Before { temps, first, then } | Body::BeforeKeep { temps, first, then } => {
                let keep = matches!(b, Body::BeforeKeep { .. });
                if !keep {
                    if let Some(t) = temps.iter().find(|t| self.nest.stored(**t)) {
                        return Err(format!("cluster {}: vertically fused {} is stored", c, self.name(*t)));
                    }
                } else if !temps.iter().any(|t| self.nest.stored(*t)) {
                    return Err(format!("cluster {}: a diagonal fusion stores none of its temporaries", c));
                }
                self.body(first, elements, enclosing, l, guard)?;
                self.body(then, elements, enclosing, l, guard)
            }
            Body::Besides(a, d) => {
                self.body(a, elements, enclosing, l, guard)?;
                self.body(d, elements, enclosing, l, guard)
            }
            Body::When { filter, then, .. } => {
                let Body::Leaf(fl @ LoopBody::Filter { outs, write, .. }, 0) = &**filter else {
                    return Err(format!("cluster {}: a When body is not guarded by a filter running in order", c));
                };
                if let FilterWrite::Compress(_) = write {
                    return Err(format!("cluster {}: '{}' compresses vectors, but work is fused under it", c, fl.name()));
                }
                self.body(filter, elements, enclosing, l, guard)?;
                // At the sub-rate only the filter's elements (and what is
                // made from them) are in registers. Work under a branch-free
                // filter runs unguarded, also under a branching filter inside it.
                let mut sub: IndexSet<VarId> = outs.iter().copied().collect();
                let write = match guard {
                    Some((g, FilterWrite::Compact)) => return self.body(then, &mut sub, enclosing, l, Some((g, FilterWrite::Compact))),
                    _ => *write,
                };
                self.body(then, &mut sub, enclosing, l, Some((fl, write)))
            }
            Body::For(inner) => {
                let produced = self.looop(inner, enclosing)?;
                let _ = produced;
                // Results of folds this loop owns become elements at its rate.
                inner.body.visit(&mut |b| {
                    if let Body::Leaf(LoopBody::ManyToOne { results, state: Some(owner), .. }, _) = b {
                        if *owner == l.index {
                            elements.extend(results.iter().copied());
                        }
                    }
                });
                Ok(())
            }
        }
    }

    fn leaf(&self, leaf: &LoopBody, order: Order, elements: &mut IndexSet<VarId>, enclosing: &[VarId], l: &Loop, guard: Option<(&LoopBody, FilterWrite)>) -> Result<(), String> {
        let (f, c, name) = (self.f, self.nest.cluster, leaf.name());
        for r in leaf.reads() {
            if (r.0 as usize) >= f.vars.len() {
                return Err(format!("cluster {}: '{}' reads an unknown variable %{}", c, name, r.0));
            }
            if !elements.contains(r) && !self.in_memory.contains(r) {
                return Err(format!("cluster {}: '{}' reads {} which is neither in memory nor produced earlier in the iteration", c, name, self.name(*r)));
            }
            if !f.sizes.contains_key(r) {
                return Err(format!("array {} has no size", self.name(*r)));
            }
        }
        // (A gather's or a transpose's source may also be computed at the
        // position it reads.)
        let computed_source = matches!(leaf, LoopBody::Gather { .. } | LoopBody::Transpose { .. });
        if let Some(v) = leaf.memory_reads().iter().find(|v| !self.in_memory.contains(*v) && (!computed_source || !elements.contains(*v))) {
            return Err(format!("cluster {}: '{}' reads {} at computed positions but it is not in memory", c, name, self.name(*v)));
        }
        if order >= 2 && !self.nest.labels.iter().any(|g| g.label == order) {
            return Err(format!("cluster {}: '{}' runs at gather label {}, which the nest does not define", c, name, order));
        }
        // A leaf at a label runs where the label's gather reads, which may
        // be at another label: every gather's index along the chain must be
        // in memory or made earlier in the iteration.
        let (mut o, mut seen) = (order, vec![]);
        while o >= 2 && !seen.contains(&o) {
            seen.push(o);
            let Some(g) = self.nest.labels.iter().find(|g| g.label == o) else { break };
            if let LabelIndex::Arrays(ix) = &g.index {
                if let Some(v) = ix.iter().find(|v| !elements.contains(*v) && !self.in_memory.contains(*v)) {
                    return Err(format!("cluster {}: '{}' runs at label {}, whose position needs index {}, which is neither in memory nor made earlier in the iteration", c, name, order, self.name(*v)));
                }
            }
            o = g.order;
        }
        // Stateful leaves: their owner encloses the loop they step in.
        if let Some(Some(owner)) = leaf.state() {
            if !enclosing[..enclosing.len() - 1].contains(&owner) {
                return Err(format!("cluster {}: '{}' keeps its state per {}, which is not a loop around the one it steps in", c, name, self.name(owner)));
            }
        }
        match leaf {
            LoopBody::ManyToOne { op, acc, results, .. } => {
                let prim = |v: VarId| f.var(v).ty.prim();
                match acc {
                    Accumulate::Chain => {}
                    Accumulate::Lanes(k) | Accumulate::Tree(k) => {
                        if *k != l.unroll {
                            return Err(format!("cluster {}: '{}' accumulates in groups of {} but its loop {} is unrolled {} times", c, name, k, self.name(l.index), l.unroll));
                        }
                    }
                }
                if matches!(acc, Accumulate::Lanes(_)) && reorderable(op, &prim).is_none() {
                    return Err(format!("cluster {}: '{}' has independent accumulators, but its operator may not be reordered (LANGUAGE.md: only the built-in commutative operators)", c, name));
                }
                if let (Accumulate::Tree(_), Some((g, _))) = (acc, guard) {
                    return Err(format!("cluster {}: '{}' combines groups as trees under filter '{}', whose skipped elements have no identity to stand for them", c, name, g.name()));
                }
                let _ = results;
            }
            LoopBody::Filter { outs, write, reads, state, .. } => {
                if let FilterWrite::Compress(w) = write {
                    // The room argument (the cursor is at most the trip's
                    // first position) holds for a cursor over the whole nest.
                    if state.is_some() {
                        return Err(format!("cluster {}: '{}' compresses vectors but keeps its cursor per row", c, name));
                    }
                    if let Some((g, _)) = guard {
                        return Err(format!("cluster {}: '{}' compresses vectors, but runs under filter '{}'", c, name, g.name()));
                    }
                    if *w == 0 || !l.unroll.is_multiple_of(*w) {
                        return Err(format!("cluster {}: '{}' compresses groups of {} lanes but its loop {} is unrolled {} times", c, name, w, self.name(l.index), l.unroll));
                    }
                    let bits = |o: &VarId| *w as u64 * 8 * f.var(*o).ty.prim().bytes();
                    if let Some(o) = outs.iter().find(|o| !matches!(f.var(**o).ty.prim(), Prim::F64 | Prim::I64 | Prim::F32 | Prim::I32) || !matches!(bits(o), 256 | 512) || bits(o) != bits(&outs[0])) {
                        return Err(format!("cluster {}: '{}' compresses groups of {} lanes, but {} is not {} lanes of a 256- or 512-bit vector, as every component must be", c, name, w, self.name(*o), w));
                    }
                }
                if write.unconditional() {
                    // Branch-free compaction writes every element at the
                    // cursor: each stored output needs the room of its input.
                    for (o, r) in outs.iter().zip(reads) {
                        if self.nest.stored(*o) && f.capacity.get(o) != f.sizes.get(r).and_then(|s| s.first()) && f.capacity.get(o) != f.capacity.get(r) {
                            return Err(format!("cluster {}: branch-free compaction of '{}' writes every element of {}, but {} has no room for that many", c, name, self.name(*r), self.name(*o)));
                        }
                    }
                }
            }
            LoopBody::Cross { at: Some((i, j)), .. } => {
                let n = enclosing.len();
                if n < 2 || enclosing[n - 2] != *i || enclosing[n - 1] != *j {
                    return Err(format!("cluster {}: cross '{}' runs at {} and {}, which are not the two loops around it", c, name, self.name(*i), self.name(*j)));
                }
            }
            _ => {}
        }
        if let Some((g, FilterWrite::Compact)) = guard {
            if unsafe_unguarded(f, leaf) {
                return Err(format!("cluster {}: '{}' runs unguarded under the branch-free filter '{}' but can fail or write at computed positions", c, name, g.name()));
            }
        }
        elements.extend(leaf.element_outs().iter().copied());
        Ok(())
    }
}

/// Checks the invariants the back end relies on: every array a body streams
/// is in memory already or an element produced earlier at the same rate;
/// `Before` temporaries are not stored and `Before'` ones are; stateful
/// leaves keep their state outside the loop they step in; every recorded
/// strategy is legal (docs/strategy.md); every array has a size.
pub fn verify(f: &Function) -> Result<(), String> {
    if let Some(VectorMath::Libmvec { bits }) = f.vector_math {
        if !VECTOR_MATH_BITS.contains(&bits) {
            return Err(format!("fn {} calls vector math in {}-bit vectors; libmvec has 128-, 256- and 512-bit variants", f.name, bits));
        }
    }
    // Nests neither run in chunks nor outlined are code of the function
    // itself, and a function's code has one register width.
    let inline: Vec<&LoopNest> = f.nests().into_iter().filter(|n| n.inline()).collect();
    if let Some(w) = inline.iter().find(|n| n.registers != inline[0].registers) {
        let bits = |r: Option<u32>| r.map_or("the target's widest".to_string(), |b| b.to_string());
        return Err(format!("clusters {} and {} run in fn {} itself but ask for registers of {} and {} bits", inline[0].cluster, w.cluster, f.name, bits(inline[0].registers), bits(w.registers)));
    }
    // A nest makes no count marked unread: nothing may read one.
    let read = f.counts_read();
    for n in f.nests() {
        for l in n.root.body.leaves() {
            if let LoopBody::Filter { name, count, count_read: false, .. } = l {
                if read.contains(count) {
                    return Err(format!("cluster {}: '{}' says nothing reads its count %{}, but something after the nest does", n.cluster, name, f.var_name(*count)));
                }
            }
        }
    }
    let mut in_memory: IndexSet<VarId> = f.params.iter().filter_map(|l| if let Operand::Var(v) = l.value { Some(v) } else { None }).collect();
    for g in &f.same_size {
        for d in g {
            match d {
                SizeExpr::Dim(v, k) if in_memory.contains(v) && (*k as usize) < f.rank(*v) => {}
                _ => return Err("check same size names something other than a parameter's dimension".into()),
            }
        }
    }
    // Results: their room is checked once, after every result's room is
    // known and before any is written in place; what is made before that
    // is staged.
    let results = f.made_results();
    let staged: IndexSet<VarId> = f.staged.iter().copied().collect();
    let checks = f.steps.iter().filter(|s| matches!(s, Step::CheckRoom)).count();
    let has_array_results = f.results.iter().any(|l| matches!(l.value, Operand::Var(v) if f.var(v).ty.is_array()));
    if checks != has_array_results as usize {
        return Err(format!("fn {} has {} 'check room' steps, but {} array results", f.name, checks, if has_array_results { "has" } else { "no" }));
    }
    let mut known: IndexSet<VarId> = in_memory.clone();
    for step in &f.steps {
        let (outputs, name) = match step {
            Step::Call(c) => (&c.outputs, &c.name),
            Step::If(b) => (&b.outputs, &b.name),
            _ => continue,
        };
        if let Some(o) = outputs.iter().find(|o| results.contains(*o) && !staged.contains(*o)) {
            return Err(format!("result %{} is made by '{}' in a buffer of its own, but is not staged", f.var_name(*o), name));
        }
    }
    for step in &f.steps {
        if matches!(step, Step::CheckRoom) {
            for l in &f.results {
                if let Operand::Var(v) = l.value {
                    if !f.var(v).ty.is_array() {
                        continue;
                    }
                    let room = f.capacity.get(&v).or(f.sizes.get(&v).and_then(|s| s.first()));
                    let need = match room {
                        Some(SizeExpr::Dim(a, _)) | Some(SizeExpr::Scalar(Operand::Var(a))) => Some(*a),
                        _ => None,
                    };
                    if let Some(a) = need.filter(|a| !known.contains(a)) {
                        return Err(format!("'check room' comes before the room of result {} is known (%{})", l.c_name, f.var_name(a)));
                    }
                }
            }
            break;
        }
        let defs = f.step_defs(step);
        for d in &defs {
            if results.contains(d) && !staged.contains(d) {
                return Err(format!("result %{} is made before its room is checked but is not staged", f.var_name(*d)));
            }
        }
        known.extend(defs);
    }
    steps(f, &f.steps, &mut in_memory, &mut IndexSet::new(), None)
}

/// Checks steps in order; `in_memory` is what is in memory before them,
/// `freed` what was freed before them. `outer` is, in an `if` branch, what
/// was in memory before the `if` (None at the top).
fn steps(f: &Function, steps_: &[Step], in_memory: &mut IndexSet<VarId>, freed: &mut IndexSet<VarId>, outer: Option<&IndexSet<VarId>>) -> Result<(), String> {
    let top = outer.is_none();
    for step in steps_ {
        // Nothing names an array after it is freed: not a nest, a call, an
        // `if`, nor a scalar statement that indexes or measures it.
        if !matches!(step, Step::Free(_)) {
            if let Some(v) = f.step_arrays(step).into_iter().find(|v| freed.contains(v)) {
                return Err(format!("%{} is used after it is freed", f.var_name(v)));
            }
        }
        match step {
            Step::Free(vs) => {
                for v in vs {
                    if (v.0 as usize) >= f.vars.len() {
                        return Err(format!("'free' names an unknown variable %{}", v.0));
                    }
                    if !f.var(*v).ty.is_array() {
                        return Err(format!("'free' names %{}, which is not an array", f.var_name(*v)));
                    }
                    let name = f.var_name(*v);
                    if f.params.iter().any(|l| l.value == Operand::Var(*v)) {
                        return Err(format!("'free' names parameter %{}: the caller owns it", name));
                    }
                    if f.results.iter().any(|l| l.value == Operand::Var(*v)) {
                        return Err(format!("'free' names result %{}: it is handed to the caller", name));
                    }
                    if freed.contains(v) {
                        return Err(format!("%{} is freed twice", name));
                    }
                    if !in_memory.contains(v) {
                        return Err(format!("'free' names %{}, which is not in memory", name));
                    }
                    if outer.map(|o| o.contains(v)).unwrap_or(false) {
                        return Err(format!("a branch frees %{}, which was made before its `if`", name));
                    }
                    in_memory.swap_remove(v);
                    freed.insert(*v);
                }
            }
            Step::Stmt(_) => {}
            Step::CheckRoom if top => {}
            Step::CheckRoom => return Err("'check room' inside an `if` branch".into()),
            Step::Call(c) => {
                for a in &c.args {
                    if let Operand::Var(v) = a {
                        if f.var(*v).ty.is_array() && !in_memory.contains(v) {
                            return Err(format!("call '{}' passes %{} which is not in memory", c.name, f.var_name(*v)));
                        }
                    }
                }
                in_memory.extend(c.outputs.iter().copied());
            }
            Step::If(b) => {
                for (body, results) in [(&b.then, &b.then_results), (&b.els, &b.els_results)] {
                    if results.len() != b.outputs.len() {
                        return Err(format!("a branch of '{}' yields {} values for {} outputs", b.name, results.len(), b.outputs.len()));
                    }
                    let mut inner = in_memory.clone();
                    steps(f, body, &mut inner, &mut freed.clone(), Some(in_memory))?;
                    for (r, o) in results.iter().zip(&b.outputs) {
                        match r {
                            Operand::Var(v) if f.var(*v).ty.is_array() => {
                                if !inner.contains(v) {
                                    return Err(format!("a branch of '{}' yields %{}, which is not in memory", b.name, f.var_name(*v)));
                                }
                                if f.var(*v).ty != f.var(*o).ty {
                                    return Err(format!("a branch of '{}' yields %{} for %{} of another type", b.name, f.var_name(*v), f.var_name(*o)));
                                }
                            }
                            _ if f.var(*o).ty.is_array() => return Err(format!("a branch of '{}' yields a scalar for array %{}", b.name, f.var_name(*o))),
                            _ => {}
                        }
                    }
                }
                in_memory.extend(b.outputs.iter().copied().filter(|o| f.var(*o).ty.is_array()));
            }
            Step::Loop(n) => {
                let v = V { f, nest: n, in_memory };
                let elements = v.looop(&n.root, &mut vec![])?;
                if let Some(p) = n.parallel {
                    if n.outlined {
                        return Err(format!("cluster {} is both parallel and outlined: a parallel nest's chunks are functions already", n.cluster));
                    }
                    parallel(&f.vars, n, p)?;
                }
                rows(&f.vars, n)?;
                registers(f, n)?;
                for l in n.root.body.leaves() {
                    if let LoopBody::Scan { name, totals, .. } = l {
                        let why = match totals {
                            Accumulate::Chain => None,
                            Accumulate::Lanes(k) => totals_blocker(&f.vars, n, l, *k),
                            Accumulate::Tree(_) => Some("trees, but only lanes are built".to_string()),
                        };
                        if let Some(why) = why {
                            return Err(format!("cluster {}: scan '{}' folds its chunks' totals in {}", n.cluster, name, why));
                        }
                    }
                }
                for (i, k) in n.keeps.iter().enumerate() {
                    if n.keeps[..i].iter().any(|e| e.array == k.array || e.home == k.home) {
                        return Err(format!("cluster {} keeps %{} or its home %{} twice", n.cluster, f.var_name(k.array), f.var_name(k.home)));
                    }
                    if let Some(why) = keep_blocker(&f.vars, n, *k) {
                        let home = if k.home == k.array { String::new() } else { format!(" in %{}", f.var_name(k.home)) };
                        return Err(format!("cluster {} keeps %{}{} {}", n.cluster, f.var_name(k.array), home, why));
                    }
                }
                // A gather at another gather's indices checks its whole
                // index arrays before the nest: they must be in memory.
                for gi in &n.labels {
                    if let LabelIndex::Arrays(ix) = &gi.index {
                        if gi.whole != (gi.order >= 2) {
                            let why = if gi.whole { "but runs in order, where every index is checked as it is read" } else { "but runs at another gather's indices: an index no one gathers would go unchecked" };
                            return Err(format!("cluster {}: gather '{}' is {}checked whole {}", n.cluster, gi.name, if gi.whole { "" } else { "not " }, why));
                        }
                        if let Some(v) = ix.iter().find(|v| gi.whole && !in_memory.contains(*v)) {
                            return Err(format!("cluster {}: gather '{}' checks its index %{} whole before the nest, but it is not in memory", n.cluster, gi.name, f.var_name(*v)));
                        }
                    }
                }
                for s in &n.stores {
                    let produced_here = n.root.body.leaves().iter().any(|l| l.array_outs().contains(&s.array))
                        || elements.contains(&s.array);
                    if !produced_here {
                        return Err(format!("cluster {} stores %{} which it does not produce", n.cluster, f.var_name(s.array)));
                    }
                    if !f.sizes.contains_key(&s.array) {
                        return Err(format!("array %{} has no size", f.var_name(s.array)));
                    }
                    if s.mode == StoreMode::Streaming {
                        if n.streaming_from.is_none() {
                            return Err(format!("cluster {} streams %{} but says from what size", n.cluster, f.var_name(s.array)));
                        }
                        // A streamed line is not in the cache: nothing in the
                        // nest may read the array back from memory.
                        let read_back = n.root.body.leaves().iter().any(|l| l.memory_reads().contains(&s.array) || matches!(l, LoopBody::Scatter { outs, .. } if outs.contains(&s.array)));
                        if read_back {
                            return Err(format!("cluster {} streams %{} but also reads it from memory", n.cluster, f.var_name(s.array)));
                        }
                    }
                }
                for s in &n.stores {
                    in_memory.insert(s.array);
                }
            }
        }
    }
    Ok(())
}

/// A parallel nest runs its root loop in chunks on several workers, each
/// chunk from its first position; in two passes exactly when it carries
/// state that its stores depend on.
fn parallel(vars: &[VarInfo], n: &LoopNest, p: Parallel) -> Result<(), String> {
    if p.grain == 0 {
        return Err(format!("cluster {} is parallel with grain 0", n.cluster));
    }
    if let Some(why) = parallel_blocker(vars, n) {
        return Err(format!("cluster {} is parallel {}", n.cluster, why));
    }
    if !p.aligned && n.streams() {
        return Err(format!("cluster {} streams its stores in chunks that are not aligned (its peel to the outputs' alignment is the whole loop's)", n.cluster));
    }
    if p.look_back && !p.two_pass {
        return Err(format!("cluster {} looks back for its chunks' starts but runs in one pass", n.cluster));
    }
    match (p.two_pass, two_pass(n)) {
        (false, true) => return Err(format!("cluster {} is parallel in one pass but carries a scan or a stored filter's cursor across chunks", n.cluster)),
        (true, false) => return Err(format!("cluster {} is parallel in two passes but carries nothing across chunks", n.cluster)),
        _ => {}
    }
    let scatters = n.root.body.leaves().iter().any(|l| matches!(l, LoopBody::Scatter { .. }));
    match (p.partials, scatters) {
        (false, true) => Err(format!("cluster {} scatters in chunks but has no partial destinations", n.cluster)),
        (true, false) => Err(format!("cluster {} has partial destinations but no scatter", n.cluster)),
        _ => Ok(()),
    }
}

/// A nest's `registers B` are 128 or 256 bits (the narrower registers of
/// x86's vector extensions), and hold every vector a filter of the nest
/// compresses at a time (`compress W`) and its function's vector math
/// takes: neither instruction is split.
fn registers(f: &Function, n: &LoopNest) -> Result<(), String> {
    let Some(b) = n.registers else { return Ok(()) };
    if b != 128 && b != 256 {
        return Err(format!("cluster {} asks for registers of {} bits; only 128 and 256 are narrower than a target's widest", n.cluster, b));
    }
    if let Some(VectorMath::Libmvec { bits }) = f.vector_math.filter(|VectorMath::Libmvec { bits }| *bits > b) {
        return Err(format!("cluster {} holds its vectors in {}-bit registers, but fn {} calls vector math in {}-bit vectors", n.cluster, b, f.name, bits));
    }
    for l in n.root.body.leaves() {
        let bits = l.compress_bits(&f.vars);
        if bits > b {
            return Err(format!("cluster {}: filter '{}' compresses {}-bit vectors, wider than the nest's {}-bit registers", n.cluster, l.name(), bits, b));
        }
    }
    Ok(())
}

/// A loop marked `parallel below R` is the one loop of its nest so marked,
/// directly inside the root loop and under no filter, in a parallel nest
/// that runs in one pass with no partial destinations, and `rows_blocker`
/// finds nothing in it.
fn rows(vars: &[VarInfo], n: &LoopNest) -> Result<(), String> {
    let c = n.cluster;
    let mut marked = vec![];
    if n.root.parallel_below.is_some() {
        return Err(format!("cluster {}: the root loop is marked 'parallel below', which names a loop inside it", c));
    }
    n.root.body.visit(&mut |b| {
        if let Body::For(l) = b {
            if l.parallel_below.is_some() {
                marked.push(&**l);
            }
        }
    });
    let Some(j) = marked.first() else { return Ok(()) };
    let name = |v: VarId| format!("%{}_{}", vars[v.0 as usize].name, v.0);
    if marked.len() > 1 {
        return Err(format!("cluster {}: loops {} and {} are both marked 'parallel below'", c, name(marked[0].index), name(marked[1].index)));
    }
    if !row_loops(&n.root.body).iter().any(|l| std::ptr::eq(*l, *j)) {
        return Err(format!("cluster {}: loop {} is marked 'parallel below' but is not directly inside the root loop, under no filter", c, name(j.index)));
    }
    match n.parallel {
        Some(p) if !p.two_pass && !p.partials => {}
        _ => return Err(format!("cluster {}: loop {} is marked 'parallel below' in a nest that is not parallel in one pass without partial destinations", c, name(j.index))),
    }
    if j.parallel_below == Some(0) {
        return Err(format!("cluster {}: loop {} is marked 'parallel below 0', but no root loop has fewer than 0 positions", c, name(j.index)));
    }
    if j.paired {
        return Err(format!("cluster {}: loop {} is marked 'parallel below' but is paired, and pairs do not split into chunks of a row", c, name(j.index)));
    }
    if let Some(why) = rows_blocker(vars, n, j) {
        return Err(format!("cluster {}: loop {} is marked 'parallel below' {}", c, name(j.index), why));
    }
    Ok(())
}

/// The loops directly inside `b`'s loop that no filter guards: the ones a
/// root loop may hand its chunking to.
pub fn row_loops(b: &Body) -> Vec<&Loop> {
    match b {
        Body::Leaf(..) | Body::When { .. } => vec![],
        Body::Before { first, then, .. } | Body::BeforeKeep { first, then, .. } | Body::Besides(first, then) => {
            let mut v = row_loops(first);
            v.extend(row_loops(then));
            v
        }
        Body::For(l) => vec![l],
    }
}

/// Why loop `j`, directly inside nest `n`'s root, cannot run in chunks row
/// by row, if it cannot: chunks of one row combine their partial results
/// as a nest's chunks do, so every state the root loop owns inside `j`
/// must be a fold whose operator combines two states; a scan or filter
/// would need a first pass per row, a scatter or cross partial
/// destinations, and state the nest owns cannot wait for a row's chunks.
/// A row's chunks run in functions of their own, so what they read of the
/// rest of the nest must be in memory.
pub fn rows_blocker(vars: &[VarInfo], n: &LoopNest, j: &Loop) -> Option<String> {
    let root = &n.root;
    let mut made = IndexSet::new();
    for l in root.body.leaves() {
        made.extend(l.array_outs());
    }
    // (Only asked whether it holds an array: `swap_remove` keeps no order
    // but takes constant time, where a row of thousands of maps made
    // `shift_remove` quadratic.)
    for l in j.body.leaves() {
        for o in l.array_outs() {
            made.swap_remove(&o);
        }
    }
    for l in j.body.leaves() {
        if let Some(r) = l.reads().iter().find(|r| made.contains(*r) && !n.stored(**r)) {
            return Some(format!("but '{}' reads %{}_{}, made outside it and not stored", l.name(), vars[r.0 as usize].name, r.0));
        }
        match l {
            LoopBody::Scan { .. } | LoopBody::Filter { .. } | LoopBody::Scatter { .. } | LoopBody::Cross { .. } => return Some(format!("but holds '{}', which runs in order", l.name())),
            LoopBody::ManyToOne { state, .. } if *state == Some(root.index) && !combinable(vars, l) => {
                return Some(format!("but '{}' combines elements of another type into its state", l.name()));
            }
            l if l.state() == Some(None) => return Some(format!("but '{}' keeps state for the whole nest", l.name())),
            _ => {}
        }
    }
    None
}

/// Why a nest cannot run in chunks, if it cannot. Most can: a paired loop
/// gives each chunk the pairs of its half of the positions; folds the nest owns leave per-chunk
/// partial results combined in index order (lanes start each chunk from the
/// identity, other folds from the chunk's first element); scans and filters
/// carry their state over in two passes (`two_pass`); scatters update a
/// partial destination per chunk, combined with their operator in chunk
/// order — unless the operator takes an element of another type than the
/// destination's (partials could not combine), may fail (combining after
/// the chunks would report its error out of index order), or the nest runs
/// in two passes. The strategy pass asks the same question before it marks
/// a nest parallel.
pub fn parallel_blocker(vars: &[VarInfo], n: &LoopNest) -> Option<String> {
    for l in n.root.body.leaves() {
        match l {
            LoopBody::Scatter { name, op, src, dims, outs, .. } => {
                let ty = |v: &VarId| vars[v.0 as usize].ty.prim();
                if src.len() - dims != outs.len() || src[*dims..].iter().zip(outs).any(|(a, b)| ty(a) != ty(b)) {
                    return Some(format!("but scatter '{}' combines elements of another type into its destination", name));
                }
                if block_fallible(vars, &op.body) {
                    return Some(format!("but scatter '{}' has an operator that may fail", name));
                }
                if two_pass(n) {
                    return Some(format!("in two passes but scatter '{}' updates its destination in the second", name));
                }
            }
            // Partial results (or totals) of two chunks combine with the
            // operator only if it takes two states: a fold of elements of
            // another type into its accumulator runs in index order.
            LoopBody::ManyToOne { name, state: None, acc: Accumulate::Chain | Accumulate::Tree(_), .. } | LoopBody::Scan { name, state: None, .. } if !combinable(vars, l) => {
                return Some(format!("but '{}' combines elements of another type into its state", name));
            }
            _ => {}
        }
    }
    // A first pass cannot total a scan or count a filter whose input
    // depends on where another scan starts: that is only known after it.
    let dep = StartDependent::new(n);
    let mut blocked = None;
    n.root.body.visit(&mut |b| {
        if let Body::Leaf(l @ (LoopBody::Scan { state: None, .. } | LoopBody::Filter { state: None, .. }), o) = b {
            if blocked.is_none() && dep.leaf(l, *o) {
                blocked = Some(format!("but '{}' depends on the values of a scan before it", l.name()));
            }
        }
    });
    blocked
}

/// Why loop `l` of nest `n` cannot run its trips as one vector step
/// (`unroll K simd`), if it cannot: the loop must be unrolled and not
/// paired, the nest must not stream (its stores gather a trip's values in
/// lane order), and its body (no inner loop, no filter) must compute each
/// position apart from the others, branch-free: maps, reverses and index
/// maps read at the position or its mirror, folds in lanes or trees of
/// the loop's K, and scans whose outputs nothing in the loop reads (the
/// folds' and scans' elements made in the step, taken in after it), each
/// lambda straight-line (a value choice is a select), with
/// nothing that can fail and no call LLVM cannot widen (`tan` and `erf`
/// are libm calls; the other builtins are LLVM intrinsics). The strategy
/// pass asks the same question before it marks a loop `simd`.
pub fn simd_blocker(vars: &[VarInfo], n: &LoopNest, l: &Loop) -> Option<String> {
    if l.unroll < 2 {
        return Some("but it is not unrolled".into());
    }
    if l.paired {
        return Some("but it is paired".into());
    }
    if n.streams() {
        return Some("but its nest streams its stores".into());
    }
    fn straight(vars: &[VarInfo], b: &Block) -> bool {
        !block_fallible(vars, b)
            && b.stmts.iter().all(|s| match s {
                Stmt::Assign { rhs: Rhs::Builtin(Builtin::Tan | Builtin::Erf, _), .. } => false,
                Stmt::Assign { .. } => true,
                Stmt::If { then, els, .. } => then.stmts.is_empty() && els.stmts.is_empty(),
            })
    }
    // What the loop's leaves read: a scan's outputs are made after the
    // vector step, so none may be read in it.
    let mut read: IndexSet<VarId> = IndexSet::new();
    l.body.visit(&mut |b| {
        if let Body::Leaf(leaf, _) = b {
            read.extend(leaf.reads().iter().copied());
        }
    });
    let mut blocked = None;
    l.body.visit(&mut |b| {
        let why = match b {
            Body::For(_) => Some("but it holds an inner loop".to_string()),
            Body::When { .. } | Body::Leaf(LoopBody::Filter { .. }, _) => Some("but it holds a filter".to_string()),
            Body::Leaf(leaf, o) if *o > 1 => Some(format!("but '{}' runs at a gather's positions", leaf.name())),
            Body::Leaf(leaf @ (LoopBody::OneToOne { .. } | LoopBody::FromIndex { .. } | LoopBody::Reverse { .. }), _) => {
                leaf.lambda().filter(|lam| !straight(vars, &lam.body)).map(|_| format!("but '{}' may branch, fail or call libm", leaf.name()))
            }
            Body::Leaf(leaf @ LoopBody::ManyToOne { acc, op, .. }, _) => match acc {
                Accumulate::Lanes(k) | Accumulate::Tree(k) if *k == l.unroll => (!straight(vars, &op.body)).then(|| format!("but '{}' may branch, fail or call libm", leaf.name())),
                _ => Some(format!("but '{}' does not accumulate in lanes or trees of {}", leaf.name(), l.unroll)),
            },
            Body::Leaf(leaf @ LoopBody::Scan { op, outs, .. }, _) => {
                if outs.iter().any(|v| read.contains(v)) {
                    Some(format!("but scan '{}' has its outputs read in the loop", leaf.name()))
                } else {
                    (!straight(vars, &op.body)).then(|| format!("but '{}' may branch, fail or call libm", leaf.name()))
                }
            }
            Body::Leaf(leaf, _) => Some(format!("but '{}' is not computed position by position", leaf.name())),
            _ => None,
        };
        if blocked.is_none() {
            blocked = why;
        }
    });
    blocked
}

/// Why a two-pass nest's first pass cannot fold scan `l`'s elements into
/// each chunk's total in `k` lanes (`totals lanes K`) instead of in one
/// chain, if it cannot: the scan is the nest's (`state per nest`, in a
/// two-pass nest), steps at the root loop's own positions or their mirror
/// (not under a filter, not in an inner loop, not at a gather's label),
/// the root loop is unrolled `k` times, and its operator may be reordered
/// (`reorderable`; lanes start from its identity). The strategy pass asks
/// the same question.
pub fn totals_blocker(vars: &[VarInfo], n: &LoopNest, l: &LoopBody, k: u32) -> Option<String> {
    let LoopBody::Scan { op, state, .. } = l else { return Some("but it is not a scan".into()) };
    if state.is_some() || !n.parallel.is_some_and(|p| p.two_pass) {
        return Some(format!("lanes of {} but it is not a two-pass nest's", k));
    }
    match n.root.body.at_loop_rate().iter().find(|(x, _)| std::ptr::eq(*x, l)) {
        Some((_, o)) if *o <= 1 => {}
        _ => return Some(format!("lanes of {} but it does not step at the root loop's own positions", k)),
    }
    if k < 2 || n.root.unroll != k {
        return Some(format!("lanes of {} but its loop is unrolled {} times", k, n.root.unroll));
    }
    if reorderable(op, &|v| vars[v.0 as usize].ty.prim()).is_none() {
        return Some(format!("lanes of {} but its operator may not be reordered", k));
    }
    None
}

/// Why a two-pass nest's first pass cannot keep `k.array` in `k.home` for
/// its second (`Keep`), if it cannot. The array must be made by a map (or
/// an index map) at the root loop's own positions or their mirror, with
/// nothing that can fail (the second pass, which finds a chunk's first
/// error, then has none to find there), by a leaf the first pass runs and
/// all of whose arrays are kept; in a nest with no inner loop. Its home is
/// the array itself, stored by the nest (the first pass stores it, the
/// second loads it and stores nothing), or the output of a scan that reads
/// it in the same order, of the same type, stored by the nest: the second
/// pass loads the element there before the scan's step overwrites it. A
/// streamed home is not in the cache when the second pass reads it back.
/// The strategy pass asks the same question before it keeps an array.
pub fn keep_blocker(vars: &[VarInfo], n: &LoopNest, k: Keep) -> Option<String> {
    if !n.parallel.is_some_and(|p| p.two_pass) {
        return Some("but the nest does not run in two passes".into());
    }
    if !n.root.body.inner_loops().is_empty() {
        return Some("but the nest has an inner loop".into());
    }
    let leaves = n.root.body.at_loop_rate();
    let Some(&(maker, order)) = leaves.iter().find(|(l, _)| l.array_outs().contains(&k.array)) else {
        return Some("but nothing makes it at the loop's own positions".into());
    };
    if order > 1 {
        return Some(format!("but '{}' runs at a gather's positions", maker.name()));
    }
    match maker {
        LoopBody::OneToOne { f, .. } | LoopBody::FromIndex { f, .. } if block_fallible(vars, &f.body) => return Some(format!("but '{}' may fail", maker.name())),
        LoopBody::OneToOne { .. } | LoopBody::FromIndex { .. } => {}
        _ => return Some(format!("but '{}' is not a map", maker.name())),
    }
    if !TotalsPass::new(n).runs(maker) {
        return Some(format!("but the first pass does not run '{}'", maker.name()));
    }
    if maker.array_outs().iter().any(|v| n.kept(*v).is_none()) {
        return Some(format!("but '{}' makes arrays that are not kept", maker.name()));
    }
    if !n.stores.iter().any(|s| s.array == k.home && s.mode == StoreMode::Normal) {
        return Some("but the nest does not store its home, or streams it".into());
    }
    if k.home != k.array {
        let scan = leaves.iter().find_map(|(l, o)| match l {
            LoopBody::Scan { reads, outs, state: None, .. } => reads.iter().zip(outs).any(|(r, w)| *r == k.array && *w == k.home).then_some(*o),
            _ => None,
        });
        match scan {
            None => return Some("but its home is not the output of a scan of the nest reading it".into()),
            Some(o) if o != order => return Some("but the scan reads it in the other order".into()),
            Some(_) if vars[k.array.0 as usize].ty != vars[k.home.0 as usize].ty => return Some("but its home has another type".into()),
            Some(_) => {}
        }
    }
    None
}

/// What a two-pass nest's first pass runs: the scans and filters the nest
/// owns, and the leaves that make what they read (streamed, the index
/// arrays of the positions they run at, or a gather's source computed at
/// the positions it reads). Everything else — stores, folds,
/// work at a sub-rate that feeds no count — waits for the second pass.
pub struct TotalsPass {
    arrays: IndexSet<VarId>,
}

impl TotalsPass {
    pub fn new(n: &LoopNest) -> TotalsPass {
        let mut made = vec![];
        n.root.body.visit(&mut |b| {
            if let Body::Leaf(l, o) = b {
                made.push((l, *o));
            }
        });
        let mut pass = TotalsPass { arrays: IndexSet::new() };
        // Consumers come after their producers: walk backwards.
        for (l, o) in made.into_iter().rev() {
            if pass.runs(l) {
                pass.arrays.extend(l.reads().iter().copied());
                // A gather's (or transpose's) source: what producers fused
                // into it compute at the positions it reads.
                if let LoopBody::Gather { source, .. } | LoopBody::Transpose { source, .. } = l {
                    pass.arrays.extend(source.iter().copied());
                }
                let mut order = o;
                for _ in 0..=n.labels.len() {
                    let Some(g) = n.labels.iter().find(|g| g.label == order) else { break };
                    if let LabelIndex::Arrays(ix) = &g.index {
                        pass.arrays.extend(ix.iter().copied());
                    }
                    order = g.order;
                }
            }
        }
        pass
    }

    /// Whether the first pass runs leaf `l`.
    pub fn runs(&self, l: &LoopBody) -> bool {
        matches!(l, LoopBody::Scan { state: None, .. } | LoopBody::Filter { state: None, .. }) || l.array_outs().iter().any(|a| self.arrays.contains(a))
    }
}

/// Whether a fold's or scan's operator can combine two of its states: each
/// element has the type of the state it is combined into.
fn combinable(vars: &[VarInfo], l: &LoopBody) -> bool {
    let (reads, state) = (l.reads(), l.state_vars());
    let ty = |v: VarId| vars[v.0 as usize].ty.prim();
    reads.len() == state.len() && reads.iter().zip(&state).all(|(a, b)| ty(*a) == ty(*b))
}

/// The parts of a nest whose values depend on where the scans it owns
/// start: the scans' outputs and everything computed from them (streamed,
/// or at positions they give). A two-pass nest's first pass, which does not
/// know the starts yet, skips those leaves.
pub struct StartDependent<'a> {
    nest: &'a LoopNest,
    arrays: IndexSet<VarId>,
}

impl<'a> StartDependent<'a> {
    pub fn new(nest: &'a LoopNest) -> StartDependent<'a> {
        let mut dep = StartDependent { nest, arrays: IndexSet::new() };
        let mut made = vec![];
        nest.root.body.visit(&mut |b| {
            if let Body::Leaf(l, o) = b {
                made.push((l, *o));
            }
        });
        // Producers come before their consumers in execution order.
        for (l, o) in made {
            if matches!(l, LoopBody::Scan { state: None, .. }) || dep.leaf(l, o) {
                dep.arrays.extend(l.array_outs());
            }
        }
        dep
    }

    /// Whether leaf `l`, run in order `o`, reads a start-dependent element.
    pub fn leaf(&self, l: &LoopBody, o: Order) -> bool {
        l.reads().iter().any(|r| self.arrays.contains(r)) || self.order(o, 0)
    }

    /// Whether the positions of order `o` come from start-dependent indices.
    fn order(&self, o: Order, depth: usize) -> bool {
        if o < 2 || depth > self.nest.labels.len() {
            return false;
        }
        match self.nest.labels.iter().find(|g| g.label == o) {
            Some(GatherIndex { index: LabelIndex::Arrays(ix), order, .. }) => ix.iter().any(|v| self.arrays.contains(v)) || self.order(*order, depth + 1),
            Some(g) => self.order(g.order, depth + 1),
            None => false,
        }
    }
}

/// Whether a nest, run in chunks, needs a first pass to learn each chunk's
/// starting state: it owns a scan (every output depends on the carried
/// value), or a filter whose kept elements, or anything computed at its
/// sub-rate, are stored at its cursor. A filter that only feeds folds needs
/// no start: its per-chunk counts are summed like a fold's partials.
pub fn two_pass(n: &LoopNest) -> bool {
    // One walk up from the leaves, each body answering whether it stores
    // anything: asking that of every filter's subtree anew was quadratic
    // in filters nested thousands deep.
    fn stores(n: &LoopNest, b: &Body, need: &mut bool) -> bool {
        match b {
            Body::Leaf(l, _) => {
                let stores = l.array_outs().iter().any(|o| n.stored(*o));
                match l {
                    LoopBody::Scan { state: None, .. } => *need = true,
                    LoopBody::Filter { state: None, .. } => *need |= stores,
                    _ => {}
                }
                stores
            }
            Body::When { filter, then, .. } => {
                let (kept, under) = (stores(n, filter, need), stores(n, then, need));
                if matches!(&**filter, Body::Leaf(LoopBody::Filter { state: None, .. }, _)) {
                    *need |= under;
                }
                kept || under
            }
            Body::Before { first, then, .. } | Body::BeforeKeep { first, then, .. } | Body::Besides(first, then) => {
                let first = stores(n, first, need);
                stores(n, then, need) || first
            }
            Body::For(l) => stores(n, &l.body, need),
        }
    }
    let mut need = false;
    stores(n, &n.root.body, &mut need);
    need
}
