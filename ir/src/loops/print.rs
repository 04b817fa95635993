//! `--emit=loop-ir`: the text `parse` reads back. Every variable's type is
//! written where it is defined, and every span a run-time error message
//! names is written as its location (`@"prog.acc:3:9"`).

use super::*;
use crate::labelled::{ty_str, Builtin, Const, Rhs};
use std::fmt::Write;

struct P<'a> {
    f: &'a Function,
    out: String,
}

impl P<'_> {
    fn var(&self, v: VarId) -> String {
        format!("%{}", self.f.var_name(v))
    }
    fn typed(&self, v: VarId) -> String {
        format!("%{}: {}", self.f.var_name(v), ty_str(self.f.var(v).ty))
    }
    fn vars(&self, vs: &[VarId]) -> String {
        vs.iter().map(|v| self.var(*v)).collect::<Vec<_>>().join(", ")
    }
    fn typed_vars(&self, vs: &[VarId]) -> String {
        vs.iter().map(|v| self.typed(*v)).collect::<Vec<_>>().join(", ")
    }
    fn operand(&self, o: &Operand) -> String {
        match o {
            Operand::Var(v) => self.var(*v),
            Operand::Const(c) => konst(c),
        }
    }
    fn operands(&self, os: &[Operand]) -> String {
        os.iter().map(|o| self.operand(o)).collect::<Vec<_>>().join(", ")
    }
    fn shape(&self, s: &[SizeExpr]) -> String {
        s.iter().map(|d| self.size(d)).collect::<Vec<_>>().join(" x ")
    }
    fn size(&self, s: &SizeExpr) -> String {
        match s {
            SizeExpr::Dim(v, 0) => format!("|{}|", self.var(*v)),
            SizeExpr::Dim(v, d) => format!("|{}|.{}", self.var(*v), d),
            SizeExpr::Scalar(o) => self.operand(o),
        }
    }
    fn loc(&self, s: Span) -> String {
        match self.f.locations.get(&s) {
            Some(l) => format!(" @{:?}", l),
            None => String::new(),
        }
    }
    fn line(&mut self, indent: usize, text: &str) {
        let _ = writeln!(self.out, "{}{}", "  ".repeat(indent), text);
    }

    fn rhs(&self, rhs: &Rhs) -> String {
        match rhs {
            Rhs::Copy(o) => self.operand(o),
            Rhs::Unary(op, o) => format!("{} {}", if *op == crate::ast::UnOp::Neg { "neg" } else { "not" }, self.operand(o)),
            Rhs::Binary(op, a, b) => format!("{} {} {}", self.operand(a), op.symbol(), self.operand(b)),
            Rhs::Builtin(b, args) => format!("{}({})", b.name(), self.operands(args)),
            Rhs::Cast(p, o) => format!("{}({})", p.name(), self.operand(o)),
            Rhs::Select(c, a, b) => format!("select({}, {}, {})", self.operand(c), self.operand(a), self.operand(b)),
            Rhs::Index(a, ix) => format!("{}[{}]", self.var(*a), self.operands(ix)),
            Rhs::Length(a, d) => format!("length({}, {})", self.var(*a), d),
            Rhs::SizeProduct(a, b) => format!("size_product({}, {})", self.operand(a), self.operand(b)),
        }
    }

    fn stmt(&mut self, s: &Stmt, indent: usize) {
        match s {
            Stmt::Assign { dst, rhs, span } => {
                // Only what can fail at run time needs its location.
                let int_division = matches!(rhs, Rhs::Binary(crate::ast::BinOp::Div | crate::ast::BinOp::Rem, ..)) && self.f.var(*dst).ty.prim().is_int();
                let fallible = int_division || matches!(rhs, Rhs::Index(..) | Rhs::SizeProduct(..));
                let loc = if fallible { self.loc(*span) } else { String::new() };
                let text = format!("{} = {}{}", self.typed(*dst), self.rhs(rhs), loc);
                self.line(indent, &text);
            }
            Stmt::If { dsts, cond, then, els, .. } => {
                let head = format!("{} = if {} {{", self.typed_vars(dsts), self.operand(cond));
                self.line(indent, &head);
                self.block(then, indent + 1);
                self.line(indent, "} else {");
                self.block(els, indent + 1);
                self.line(indent, "}");
            }
        }
    }

    fn block(&mut self, b: &Block, indent: usize) {
        for s in &b.stmts {
            self.stmt(s, indent);
        }
        let y = format!("yield {}", self.operands(&b.results));
        self.line(indent, y.trim_end());
    }

    /// `|params| captures [..] {` … `}` after a leaf's head line.
    fn lambda(&mut self, head: String, l: &Lambda, indent: usize) {
        let caps = if l.captures.is_empty() { String::new() } else { format!(" captures [{}]", self.vars(&l.captures)) };
        let text = format!("{} |{}|{} {{", head, self.typed_vars(&l.params), caps);
        self.line(indent, &text);
        self.block(&l.body, indent + 1);
        self.line(indent, "}");
    }

    fn state(&self, s: &StateOwner) -> String {
        match s {
            None => "state per nest".into(),
            Some(i) => format!("state per {}", self.var(*i)),
        }
    }

    fn leaf(&mut self, l: &LoopBody, order: Order, indent: usize) {
        let prefix = match order {
            0 => String::new(),
            1 => "Backwards ".into(),
            o => format!("AtGathered {} ", o),
        };
        match l {
            LoopBody::OneToOne { name, reads, f, outs } => {
                let head = format!("{}OneToOne {:?}: ({}) <- ({})", prefix, name, self.typed_vars(outs), self.vars(reads));
                self.lambda(head, f, indent);
            }
            LoopBody::FromIndex { name, f, outs } => {
                let head = format!("{}FromIndex {:?}: ({})", prefix, name, self.typed_vars(outs));
                self.lambda(head, f, indent);
            }
            LoopBody::ManyToOne { name, init, reads, op, results, state, acc } => {
                let head = format!(
                    "{}ManyToOne {:?}: ({}) <- fold ({}) over ({}) [{}, {}]",
                    prefix,
                    name,
                    self.typed_vars(results),
                    self.operands(init),
                    self.vars(reads),
                    acc,
                    self.state(state)
                );
                self.lambda(head, op, indent);
            }
            LoopBody::Filter { name, reads, p, outs, count, state, write, count_read } => {
                let w = match write {
                    FilterWrite::Branch => "branch".to_string(),
                    FilterWrite::Compact => "compact".to_string(),
                    FilterWrite::Compress(w) => format!("compress {}", w),
                };
                let head = format!(
                    "{}Filter {:?}: ({}) <- ({}), count {} [{}, {}{}]",
                    prefix,
                    name,
                    self.typed_vars(outs),
                    self.vars(reads),
                    self.typed(*count),
                    w,
                    self.state(state),
                    if *count_read { "" } else { ", count unread" }
                );
                self.lambda(head, p, indent);
            }
            LoopBody::Scan { name, dir, init, reads, op, outs, state, totals } => {
                let totals = match totals {
                    Accumulate::Chain => String::new(),
                    how => format!("totals {}, ", how),
                };
                let head = format!(
                    "{}Scan {:?}: ({}) <- {} ({}) over ({}) [{}{}]",
                    prefix,
                    name,
                    self.typed_vars(outs),
                    dir.name(),
                    self.operands(init),
                    self.vars(reads),
                    totals,
                    self.state(state)
                );
                self.lambda(head, op, indent);
            }
            LoopBody::Reverse { name, reads, outs } => {
                let text = format!("{}Reverse {:?}: ({}) <- ({})", prefix, name, self.typed_vars(outs), self.vars(reads));
                self.line(indent, &text);
            }
            LoopBody::Gather { name, index, source, outs, span } => {
                let text = format!("{}Gather {:?}: ({}) <- ({})[{}]{}", prefix, name, self.typed_vars(outs), self.vars(source), self.vars(index), self.loc(*span));
                self.line(indent, &text);
            }
            LoopBody::Transpose { name, source, outs } => {
                let text = format!("{}Transpose {:?}: ({}) <- ({})", prefix, name, self.typed_vars(outs), self.vars(source));
                self.line(indent, &text);
            }
            LoopBody::Scatter { name, dest, src, dims, op, outs, span } => {
                let head = format!(
                    "{}Scatter {:?}: ({}) = copy of ({}); at ({}) combine ({}){}",
                    prefix,
                    name,
                    self.typed_vars(outs),
                    self.vars(dest),
                    self.vars(&src[..*dims]),
                    self.vars(&src[*dims..]),
                    self.loc(*span)
                );
                self.lambda(head, op, indent);
            }
            LoopBody::Cross { name, first, second, outs, at } => {
                let at = match at {
                    Some((i, j)) => format!(" at {}, {}", self.var(*i), self.var(*j)),
                    None => String::new(),
                };
                let text = format!("{}Cross {:?}: ({}) <- ({}), ({}){}", prefix, name, self.typed_vars(outs), self.vars(first), self.vars(second), at);
                self.line(indent, &text);
            }
        }
    }

    fn body(&mut self, b: &Body, indent: usize) {
        match b {
            Body::Leaf(l, o) => self.leaf(l, *o, indent),
            Body::Before { temps, first, then } | Body::BeforeKeep { temps, first, then } => {
                let kw = if matches!(b, Body::Before { .. }) { "Before" } else { "Before'" };
                let head = format!("{} [{}] {{", kw, self.vars(temps));
                self.line(indent, &head);
                self.body(first, indent + 1);
                self.body(then, indent + 1);
                self.line(indent, "}");
            }
            Body::Besides(a, c) => {
                self.line(indent, "Besides {");
                self.body(a, indent + 1);
                self.body(c, indent + 1);
                self.line(indent, "}");
            }
            Body::When { temps, filter, then } => {
                let head = format!("When [{}] {{", self.vars(temps));
                self.line(indent, &head);
                self.body(filter, indent + 1);
                self.line(indent, "} then {");
                self.body(then, indent + 1);
                self.line(indent, "}");
            }
            Body::For(l) => self.looop(l, indent),
        }
    }

    fn looop(&mut self, l: &Loop, indent: usize) {
        let mut sched = String::new();
        if l.unroll > 1 {
            let _ = write!(sched, " unroll {}", l.unroll);
        }
        if l.simd {
            sched.push_str(" simd");
        }
        if l.paired {
            sched.push_str(" paired");
        }
        if let Some(r) = l.parallel_below {
            let _ = write!(sched, " parallel below {}", r);
        }
        let head = format!("For {} < {}{} {{", self.typed(l.index), self.size(&l.extent), sched);
        self.line(indent, &head);
        self.body(&l.body, indent + 1);
        self.line(indent, "}");
    }

    fn nest(&mut self, n: &LoopNest, indent: usize) {
        let stores: Vec<String> = n
            .stores
            .iter()
            .map(|s| format!("{}{}", self.var(s.array), if s.mode == StoreMode::Streaming { " streaming" } else { "" }))
            .collect();
        let streaming = n.streaming_from.map(|k| format!(" streaming from {}", k)).unwrap_or_default();
        let parallel = n.parallel.map(|p| format!(" parallel grain {}{}{}{}{}", p.grain, if p.aligned { " aligned" } else { "" }, if p.two_pass { " two-pass" } else { "" }, if p.look_back { " look-back" } else { "" }, if p.partials { " partials" } else { "" })).unwrap_or_default();
        let keeps: Vec<String> = n.keeps.iter().map(|k| if k.home == k.array { self.var(k.array) } else { format!("{} in {}", self.var(k.array), self.var(k.home)) }).collect();
        let keeps = if keeps.is_empty() { String::new() } else { format!(" keeps [{}]", keeps.join(", ")) };
        let registers = n.registers.map(|b| format!(" registers {}", b)).unwrap_or_default();
        let outlined = if n.outlined { " outlined" } else { "" };
        let head = format!("nest {}{}{}{}{} stores [{}]{}{} {{", n.cluster, parallel, outlined, streaming, registers, stores.join(", "), keeps, self.loc(n.span));
        self.line(indent, &head);
        for (o, span) in &n.checks {
            let text = format!("check {} >= 0{}", self.operand(o), self.loc(*span));
            self.line(indent + 1, &text);
        }
        for gi in &n.labels {
            let text = match &gi.index {
                LabelIndex::Arrays(ix) => format!(
                    "label {} = {}[order {}] of gather {:?}, checked {}against |{}|{}",
                    gi.label,
                    if ix.len() == 1 { self.var(ix[0]) } else { format!("({})", self.vars(ix)) },
                    gi.order,
                    gi.name,
                    if gi.whole { "whole " } else { "" },
                    self.var(gi.source),
                    self.loc(gi.span)
                ),
                LabelIndex::Transposed => {
                    format!("label {} = transposed[order {}] of transpose {:?} reading |{}|", gi.label, gi.order, gi.name, self.var(gi.source))
                }
            };
            self.line(indent + 1, &text);
        }
        self.looop(&n.root, indent + 1);
        self.line(indent, "}");
    }

    fn call(&mut self, c: &Call, indent: usize) {
        let lens: Vec<String> = c.arrays.iter().map(|(l, n)| format!("({}) = {}", self.vars(l), self.typed(*n))).collect();
        let checks = self.checks(&c.checks);
        let text = format!(
            "call {:?} cluster {}: ({}) = {} {}({}) lengths [{}] checks [{}]{}",
            c.name,
            c.cluster,
            self.typed_vars(&c.outputs),
            match c.callee {
                Callee::Extern => "extern",
                Callee::Afc => "afc",
            },
            c.func,
            self.operands(&c.args),
            lens.join(", "),
            checks,
            self.loc(c.span)
        );
        self.line(indent, &text);
    }

    fn checks(&self, cs: &[(VarId, u8, SizeExpr)]) -> String {
        cs.iter().map(|(r, d, size)| format!("{} = {}", self.size(&SizeExpr::Dim(*r, *d)), self.size(size))).collect::<Vec<_>>().join(", ")
    }

    fn branch(&mut self, b: &Branch, indent: usize) {
        let head = format!(
            "if {:?} cluster {}: ({}) = if {} checks [{}]{} {{",
            b.name,
            b.cluster,
            self.typed_vars(&b.outputs),
            self.operand(&b.cond),
            self.checks(&b.checks),
            self.loc(b.span)
        );
        self.line(indent, &head);
        self.steps(&b.then, indent + 1);
        let y = format!("yield {}", self.operands(&b.then_results));
        self.line(indent + 1, &y);
        self.line(indent, "} else {");
        self.steps(&b.els, indent + 1);
        let y = format!("yield {}", self.operands(&b.els_results));
        self.line(indent + 1, &y);
        self.line(indent, "}");
    }

    fn steps(&mut self, steps: &[Step], indent: usize) {
        for s in steps {
            match s {
                Step::Stmt(s) => self.stmt(s, indent),
                Step::Loop(n) => self.nest(n, indent),
                Step::Call(c) => self.call(c, indent),
                Step::If(b) => self.branch(b, indent),
                Step::CheckRoom => self.line(indent, "check room"),
                Step::Free(vs) => {
                    let l = format!("free [{}]", self.vars(vs));
                    self.line(indent, &l)
                }
            }
        }
    }

    fn function(&mut self) {
        let f = self.f;
        let ps: Vec<String> = f
            .params
            .iter()
            .map(|l| match l.value {
                Operand::Var(v) => format!("{} = {}", l.c_name, self.typed(v)),
                Operand::Const(c) => format!("{} = {}", l.c_name, konst(&c)),
            })
            .collect();
        let rs: Vec<String> = f.results.iter().map(|l| format!("{} = {}", l.c_name, self.operand(&l.value))).collect();
        let kind = match (f.exported, f.recursive) {
            (true, false) => "",
            (true, true) => "recursive ",
            (false, true) => "internal recursive ",
            (false, false) => "internal ",
        };
        let head = format!("{}fn {}({}) -> ({}){} {{", kind, f.name, ps.join(", "), rs.join(", "), self.loc(f.span));
        self.line(0, &head);
        for (v, s) in &f.sizes {
            let room = match f.capacity.get(v) {
                Some(c) if Some(c) != s.first() => format!(" room {}", self.size(c)),
                _ => String::new(),
            };
            let text = format!("size {} = {}{}", self.var(*v), self.shape(s), room);
            self.line(1, &text);
        }
        for g in &f.same_size {
            let text = format!("check same size {}", g.iter().map(|d| self.size(d)).collect::<Vec<_>>().join(", "));
            self.line(1, &text);
        }
        if let Some(VectorMath::Libmvec { bits }) = f.vector_math {
            self.line(1, &format!("vector math libmvec {}", bits));
        }
        if !f.staged.is_empty() {
            let text = format!("staged [{}]", self.vars(&f.staged));
            self.line(1, &text);
        }
        self.steps(&f.steps, 1);
        self.line(0, "}");
    }
}

/// A constant as the parser reads it: `1.0`, `-0.0`, `inf`, `NaN`, `2i32`, `1.5f32`.
pub(crate) fn konst(c: &Const) -> String {
    c.to_string()
}

/// The names of the built-ins the printer writes as calls, for the parser.
pub(crate) fn builtin_of(name: &str) -> Option<Builtin> {
    Builtin::from_name(name)
}

/// `--emit=loop-ir`: every function, in the format `parse` reads.
pub fn print(p: &Program) -> String {
    let mut out = String::new();
    for f in &p.functions {
        let mut pr = P { f, out: String::new() };
        pr.function();
        out.push_str(&pr.out);
    }
    out
}
