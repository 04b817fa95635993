//! The explicitly loopy IR (papers/001 §4.5, §5.2): per exported function, a
//! sequence of scalar statements and loop nests, one nest per cluster. A
//! nest is one `For` whose body composes the members' loop bodies with
//! `Before` (vertical: the first body's elements are temporaries of the
//! second), `Before'` (diagonal: temporaries that are also written) and
//! `Besides` (horizontal). It cannot express two loops at one depth, so
//! every value of it is a fully fused cluster. The LLVM back end reads only
//! this representation.

use crate::diag::{SourceFile, Span};
use crate::labelled::{self, Block, Function as LFunction, Lambda, Leaf, Operand, ScanKind, Stmt, VarId, VarInfo};
use indexmap::{IndexMap, IndexSet};
use std::collections::HashSet;
use std::fmt::Write;

/// The run-time value of a size.
#[derive(Clone, Debug, PartialEq)]
pub enum SizeExpr {
    /// The extent of a parameter array.
    Param(VarId),
    /// A scalar's value (a rigid size); checked non-negative where a loop uses it.
    Scalar(Operand),
}

#[derive(Clone, Debug, PartialEq)]
pub enum LoopBody {
    /// One element in, one out: `map`.
    OneToOne { name: String, reads: Vec<VarId>, f: Lambda, outs: Vec<VarId> },
    /// The index in, one element out: `generate`, `iota`.
    FromIndex { name: String, f: Lambda, outs: Vec<VarId> },
    /// Many elements to one result: `fold`. The accumulators live one
    /// dimension below the loop (papers/001's negative dimension): set
    /// before it, stepped in it, read after it.
    ManyToOne { name: String, init: Vec<Operand>, reads: Vec<VarId>, op: Lambda, results: Vec<VarId> },
    /// One element in, zero or one out: `filter`. The kept elements are
    /// numbered by a cursor; `count` is the cursor after the loop. A kept
    /// element of `outs` is the element of `reads` it passes through.
    Filter { name: String, reads: Vec<VarId>, p: Lambda, outs: Vec<VarId>, count: VarId },
    /// A scan: the accumulators are set before the loop like a fold's, and
    /// each element's output is the accumulator after (`scanl`, `scanr`) or
    /// before (`prescanl`) combining the element.
    Scan { name: String, dir: ScanKind, init: Vec<Operand>, reads: Vec<VarId>, op: Lambda, outs: Vec<VarId> },
    /// The element at the mirrored index: reads `reads[n-1-i]`, writes `outs[i]`.
    Reverse { name: String, reads: Vec<VarId>, outs: Vec<VarId> },
    /// Streams `index`; reads `source[index[i]]` from memory (bounds-checked).
    Gather { name: String, index: VarId, source: Vec<VarId>, outs: Vec<VarId>, span: Span },
    /// Before the loop `outs` is a copy of `dest`; each iteration combines
    /// the value `src[1..]` into `outs[src[0]]` (skipped if negative,
    /// bounds-checked otherwise).
    Scatter { name: String, dest: Vec<VarId>, src: Vec<VarId>, op: Lambda, outs: Vec<VarId>, span: Span },
    /// Element `i·m + j` of `cross`: `(first[i], second[j])`, both read from
    /// memory; `m` is the length of `second`.
    Cross { name: String, first: Vec<VarId>, second: Vec<VarId>, outs: Vec<VarId> },
}

impl LoopBody {
    pub fn name(&self) -> &str {
        match self {
            LoopBody::OneToOne { name, .. }
            | LoopBody::FromIndex { name, .. }
            | LoopBody::ManyToOne { name, .. }
            | LoopBody::Filter { name, .. }
            | LoopBody::Scan { name, .. }
            | LoopBody::Reverse { name, .. }
            | LoopBody::Gather { name, .. }
            | LoopBody::Cross { name, .. }
            | LoopBody::Scatter { name, .. } => name,
        }
    }
    pub fn reads(&self) -> &[VarId] {
        match self {
            LoopBody::OneToOne { reads, .. }
            | LoopBody::ManyToOne { reads, .. }
            | LoopBody::Filter { reads, .. }
            | LoopBody::Scan { reads, .. }
            | LoopBody::Reverse { reads, .. } => reads,
            LoopBody::Scatter { src, .. } => src,
            LoopBody::Gather { index, .. } => std::slice::from_ref(index),
            LoopBody::FromIndex { .. } | LoopBody::Cross { .. } => &[],
        }
    }
    /// Arrays read from memory at computed positions: a gather's source,
    /// a cross's arguments. They must be complete before the nest.
    pub fn memory_reads(&self) -> Vec<VarId> {
        match self {
            LoopBody::Gather { source, .. } => source.clone(),
            LoopBody::Cross { first, second, .. } => first.iter().chain(second).copied().collect(),
            _ => vec![],
        }
    }
    /// Arrays whose current element the body produces.
    pub fn element_outs(&self) -> &[VarId] {
        match self {
            LoopBody::OneToOne { outs, .. }
            | LoopBody::FromIndex { outs, .. }
            | LoopBody::Filter { outs, .. }
            | LoopBody::Scan { outs, .. }
            | LoopBody::Reverse { outs, .. }
            | LoopBody::Gather { outs, .. }
            | LoopBody::Cross { outs, .. }
            | LoopBody::Scatter { outs, .. } => outs,
            LoopBody::ManyToOne { .. } => &[],
        }
    }
    /// The body's worker, if it has one.
    pub fn lambda(&self) -> Option<&Lambda> {
        match self {
            LoopBody::OneToOne { f, .. } | LoopBody::FromIndex { f, .. } => Some(f),
            LoopBody::ManyToOne { op, .. } | LoopBody::Scan { op, .. } | LoopBody::Scatter { op, .. } => Some(op),
            LoopBody::Filter { p, .. } => Some(p),
            LoopBody::Reverse { .. } | LoopBody::Gather { .. } | LoopBody::Cross { .. } => None,
        }
    }
}

/// The order a leaf runs in (papers/002 §3.3): 0 visits index `i` at
/// iteration `i`, 1 visits `n-1-i`, a gather's label (2, 3, …) visits the
/// index that gather reads in this iteration.
pub type Order = u32;

/// What a gather's label means in a nest: the index is the element of
/// `index` (read in `order`), checked against the length of `source`.
#[derive(Clone, Debug, PartialEq)]
pub struct GatherIndex {
    pub label: Order,
    pub name: String,
    pub index: VarId,
    pub order: Order,
    pub source: VarId,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    Leaf(LoopBody, Order),
    /// Vertical fusion: `first` runs, its elements `temps` feed `then`, and are not stored.
    Before { temps: Vec<VarId>, first: Box<Body>, then: Box<Body> },
    /// Diagonal fusion (`Before'`): as `Before`, and `temps` are also stored.
    BeforeKeep { temps: Vec<VarId>, first: Box<Body>, then: Box<Body> },
    /// Horizontal fusion: independent bodies in one iteration, sharing reads.
    Besides(Box<Body>, Box<Body>),
    /// A filter and the bodies that consume its output: `then` runs only for
    /// kept elements, at the sub-rate (its index is the filter's cursor).
    /// `temps` are the filter's arrays `then` reads; stored if manifest.
    When { temps: Vec<VarId>, filter: Box<Body>, then: Box<Body> },
}

impl Body {
    /// The leaf bodies in execution order.
    pub fn leaves(&self) -> Vec<&LoopBody> {
        match self {
            Body::Leaf(l, _) => vec![l],
            Body::Before { first, then, .. }
            | Body::BeforeKeep { first, then, .. }
            | Body::Besides(first, then)
            | Body::When { filter: first, then, .. } => {
                let mut v = first.leaves();
                v.extend(then.leaves());
                v
            }
        }
    }
}

/// One cluster: `for index in 0..extent { body }`.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopNest {
    pub cluster: usize,
    pub extent: SizeExpr,
    pub index: VarId,
    pub body: Body,
    /// Arrays this nest writes to memory (element outputs that are manifest).
    pub stores: Vec<VarId>,
    /// Where a rigid extent comes from, for the negative-size error.
    pub span: Span,
    /// The gathers whose labels leaves of this nest run at.
    pub labels: Vec<GatherIndex>,
    /// Sizes of generates that run at a gather's indices rather than over
    /// their own extent: each is still checked non-negative before the loop.
    pub checks: Vec<(Operand, Span)>,
    /// A cross's nest runs as two nested loops, over the lengths of these
    /// two arrays (its arguments), with `index` counting both.
    pub split: Option<(VarId, VarId)>,
}

/// An extern call, a cluster of its own: the C function `func` called with
/// the export ABI. `args` are the argument leaves, `outputs` the result
/// leaves (C order); each array result's leaves get one length, read from
/// the descriptors the callee fills in.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub cluster: usize,
    pub name: String,
    pub func: String,
    pub args: Vec<Operand>,
    pub outputs: Vec<VarId>,
    pub arrays: Vec<(Vec<VarId>, VarId)>,
    /// Results whose size must equal an array's that fixes it first
    /// (`(result, that array)`), checked once the call returns.
    pub checks: Vec<(VarId, VarId)>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Stmt(Stmt),
    Loop(LoopNest),
    Call(Call),
}

#[derive(Clone, Debug)]
pub struct Function {
    pub name: String,
    pub params: Vec<Leaf>,
    pub results: Vec<Leaf>,
    pub vars: Vec<VarInfo>,
    pub steps: Vec<Step>,
    /// The size of every array the function touches.
    pub sizes: IndexMap<VarId, SizeExpr>,
    /// The room every array needs: its size, or for a filter's result (and
    /// arrays of its size) the size of what was filtered, an upper bound.
    pub capacity: IndexMap<VarId, SizeExpr>,
    /// Groups of parameter arrays whose sizes must be equal (checked on entry).
    pub same_size: Vec<Vec<VarId>>,
    /// `FILE:LINE:COL` of a span, for run-time error messages.
    pub locations: IndexMap<Span, String>,
    pub span: Span,
}

#[derive(Clone, Debug, Default)]
pub struct Program {
    pub functions: Vec<Function>,
}

impl Function {
    pub fn var(&self, v: VarId) -> &VarInfo {
        &self.vars[v.0 as usize]
    }
    pub fn location(&self, s: Span) -> &str {
        self.locations.get(&s).map(|s| s.as_str()).unwrap_or("?")
    }
    /// A view as a labelled function, for sharing its statement printer.
    fn as_labelled(&self) -> LFunction {
        LFunction {
            name: self.name.clone(),
            exported: true,
            span: self.span,
            params: self.params.clone(),
            results: self.results.clone(),
            items: vec![],
            nodes: vec![],
            vars: self.vars.clone(),
            same_size: vec![],
        }
    }
    pub fn nests(&self) -> impl Iterator<Item = &LoopNest> {
        self.steps.iter().filter_map(|s| if let Step::Loop(n) = s { Some(n) } else { None })
    }
}

/// Records the location of every span in a block, for error messages.
pub fn collect_locations(file: &SourceFile, b: &Block, out: &mut IndexMap<Span, String>) {
    for s in &b.stmts {
        collect_stmt_location(file, s, out);
    }
}

pub fn collect_stmt_location(file: &SourceFile, s: &Stmt, out: &mut IndexMap<Span, String>) {
    match s {
        Stmt::Assign { span, .. } => {
            out.insert(*span, file.location(*span));
        }
        Stmt::If { span, then, els, .. } => {
            out.insert(*span, file.location(*span));
            collect_locations(file, then, out);
            collect_locations(file, els, out);
        }
    }
}

// ---------------------------------------------------------------- printer

fn size_str(lf: &LFunction, s: &SizeExpr) -> String {
    match s {
        SizeExpr::Param(v) => format!("|%{}|", lf.var_name(*v)),
        SizeExpr::Scalar(o) => lf.operand(o),
    }
}

fn lambda_str(lf: &LFunction, l: &Lambda, indent: usize, out: &mut String) {
    let pad = "  ".repeat(indent);
    for s in &l.body.stmts {
        labelled::print_stmt(lf, s, indent, out);
    }
    let r: Vec<String> = l.body.results.iter().map(|o| lf.operand(o)).collect();
    let _ = writeln!(out, "{}yield {}", pad, r.join(", "));
}

fn vars(lf: &LFunction, vs: &[VarId]) -> String {
    vs.iter().map(|v| format!("%{}", lf.var_name(*v))).collect::<Vec<_>>().join(", ")
}

fn print_body(lf: &LFunction, b: &Body, index: VarId, indent: usize, out: &mut String) {
    let pad = "  ".repeat(indent);
    match b {
        Body::Leaf(l, 1) => {
            let _ = writeln!(out, "{}Backwards", pad);
            print_body(lf, &Body::Leaf(l.clone(), 0), index, indent + 1, out);
        }
        Body::Leaf(l, o) if *o >= 2 => {
            let _ = writeln!(out, "{}AtGathered {}", pad, o);
            print_body(lf, &Body::Leaf(l.clone(), 0), index, indent + 1, out);
        }
        Body::Leaf(l, _) => match l {
            LoopBody::Scan { name, dir, init, reads, op, outs } => {
                let i: Vec<String> = init.iter().map(|o| lf.operand(o)).collect();
                let _ = writeln!(
                    out,
                    "{}Scan \"{}\": ({}) <- {} ({}) over ({}) [%{}]",
                    pad,
                    name,
                    vars(lf, outs),
                    dir.name(),
                    i.join(", "),
                    vars(lf, reads),
                    lf.var_name(index)
                );
                let _ = writeln!(out, "{}  |{}|", pad, vars(lf, &op.params));
                lambda_str(lf, op, indent + 2, out);
            }
            LoopBody::Scatter { name, dest, src, op, outs, .. } => {
                let _ = writeln!(out, "{}Scatter \"{}\": ({}) = copy of ({}); at %{}[%{}] combine ({})", pad, name, vars(lf, outs), vars(lf, dest), lf.var_name(src[0]), lf.var_name(index), vars(lf, &src[1..]));
                let _ = writeln!(out, "{}  |{}|", pad, vars(lf, &op.params));
                lambda_str(lf, op, indent + 2, out);
            }
            LoopBody::Reverse { name, reads, outs } => {
                let _ = writeln!(out, "{}Reverse \"{}\": ({}) <- ({}) [n-1-%{}]", pad, name, vars(lf, outs), vars(lf, reads), lf.var_name(index));
            }
            LoopBody::Cross { name, first, second, outs } => {
                let _ = writeln!(
                    out,
                    "{}Cross \"{}\": ({}) <- ({})[%{} / m], ({})[%{} % m]",
                    pad,
                    name,
                    vars(lf, outs),
                    vars(lf, first),
                    lf.var_name(index),
                    vars(lf, second),
                    lf.var_name(index)
                );
            }
            LoopBody::Gather { name, index: ix, source, outs, .. } => {
                let _ = writeln!(
                    out,
                    "{}Gather \"{}\": ({}) <- ({})[%{}[%{}]]",
                    pad,
                    name,
                    vars(lf, outs),
                    vars(lf, source),
                    lf.var_name(*ix),
                    lf.var_name(index)
                );
            }
            LoopBody::OneToOne { name, reads, f, outs } => {
                let _ = writeln!(out, "{}OneToOne \"{}\": ({}) <- ({}) [%{}]", pad, name, vars(lf, outs), vars(lf, reads), lf.var_name(index));
                let _ = writeln!(out, "{}  |{}|", pad, vars(lf, &f.params));
                lambda_str(lf, f, indent + 2, out);
            }
            LoopBody::FromIndex { name, f, outs } => {
                let _ = writeln!(out, "{}FromIndex \"{}\": ({}) <- %{}", pad, name, vars(lf, outs), lf.var_name(index));
                let _ = writeln!(out, "{}  |{}|", pad, vars(lf, &f.params));
                lambda_str(lf, f, indent + 2, out);
            }
            LoopBody::Filter { name, reads, p, outs, count } => {
                let _ = writeln!(
                    out,
                    "{}Filter \"{}\": ({}) <- ({}) [%{}], count %{}",
                    pad,
                    name,
                    vars(lf, outs),
                    vars(lf, reads),
                    lf.var_name(index),
                    lf.var_name(*count)
                );
                let _ = writeln!(out, "{}  |{}|", pad, vars(lf, &p.params));
                lambda_str(lf, p, indent + 2, out);
            }
            LoopBody::ManyToOne { name, init, reads, op, results } => {
                let i: Vec<String> = init.iter().map(|o| lf.operand(o)).collect();
                let _ = writeln!(
                    out,
                    "{}ManyToOne \"{}\": ({}) <- fold ({}) over ({}) [%{}]",
                    pad,
                    name,
                    vars(lf, results),
                    i.join(", "),
                    vars(lf, reads),
                    lf.var_name(index)
                );
                let _ = writeln!(out, "{}  |{}|", pad, vars(lf, &op.params));
                lambda_str(lf, op, indent + 2, out);
            }
        },
        Body::Before { temps, first, then } => {
            let _ = writeln!(out, "{}Before [{}]", pad, vars(lf, temps));
            print_body(lf, first, index, indent + 1, out);
            print_body(lf, then, index, indent + 1, out);
        }
        Body::BeforeKeep { temps, first, then } => {
            let _ = writeln!(out, "{}Before' [{}]", pad, vars(lf, temps));
            print_body(lf, first, index, indent + 1, out);
            print_body(lf, then, index, indent + 1, out);
        }
        Body::Besides(a, b) => {
            let _ = writeln!(out, "{}Besides", pad);
            print_body(lf, a, index, indent + 1, out);
            print_body(lf, b, index, indent + 1, out);
        }
        Body::When { temps, filter, then } => {
            let cursor = match filter.leaves()[0] {
                LoopBody::Filter { count, .. } => *count,
                _ => index,
            };
            let _ = writeln!(out, "{}When [{}]", pad, vars(lf, temps));
            print_body(lf, filter, index, indent + 1, out);
            let _ = writeln!(out, "{}  then at sub-rate index %{}:", pad, lf.var_name(cursor));
            print_body(lf, then, cursor, indent + 2, out);
        }
    }
}

/// `--emit=loop-ir`.
pub fn print(p: &Program) -> String {
    let mut out = String::new();
    for f in &p.functions {
        let lf = f.as_labelled();
        let ps: Vec<String> = f.params.iter().map(|l| lf.operand(&l.value)).collect();
        let _ = writeln!(out, "fn {}({}) {{", f.name, ps.join(", "));
        for g in &f.same_size {
            let _ = writeln!(out, "  check same size {}", vars(&lf, g));
        }
        for s in &f.steps {
            match s {
                Step::Stmt(s) => labelled::print_stmt(&lf, s, 1, &mut out),
                Step::Call(c) => {
                    let a: Vec<String> = c.args.iter().map(|o| lf.operand(o)).collect();
                    let lens: Vec<String> = c.arrays.iter().map(|(l, n)| format!("%{} = |%{}|", lf.var_name(*n), lf.var_name(l[0]))).collect();
                    let _ = writeln!(
                        out,
                        "  Call \"{}\": ({}) = extern {}({}); {}  // cluster {}",
                        c.name,
                        vars(&lf, &c.outputs),
                        c.func,
                        a.join(", "),
                        lens.join(", "),
                        c.cluster
                    );
                    for (r, rep) in &c.checks {
                        let _ = writeln!(out, "    check |%{}| = |%{}|", lf.var_name(*r), lf.var_name(*rep));
                    }
                }
                Step::Loop(n) => {
                    let _ = writeln!(
                        out,
                        "  For %{} < {} {{  // cluster {}, stores [{}]",
                        lf.var_name(n.index),
                        size_str(&lf, &n.extent),
                        n.cluster,
                        vars(&lf, &n.stores)
                    );
                    if let Some((a, b)) = n.split {
                        let _ = writeln!(out, "    nested: %{} / |%{}| < |%{}|, %{} % |%{}| < |%{}|", lf.var_name(n.index), lf.var_name(b), lf.var_name(a), lf.var_name(n.index), lf.var_name(b), lf.var_name(b));
                    }
                    for (o, _) in &n.checks {
                        let _ = writeln!(out, "    check {} >= 0", lf.operand(o));
                    }
                    for gi in &n.labels {
                        let _ = writeln!(
                            out,
                            "    label {} = %{}[order {}] of gather \"{}\", checked against |%{}|",
                            gi.label,
                            lf.var_name(gi.index),
                            gi.order,
                            gi.name,
                            lf.var_name(gi.source)
                        );
                    }
                    print_body(&lf, &n.body, n.index, 2, &mut out);
                    let _ = writeln!(out, "  }}");
                }
            }
        }
        let rs: Vec<String> = f.results.iter().map(|l| format!("{} = {}", l.c_name, lf.operand(&l.value))).collect();
        let _ = writeln!(out, "  return {}", rs.join(", "));
        let _ = writeln!(out, "}}");
    }
    out
}

// ---------------------------------------------------------------- verifier

/// Checks the invariants the back end relies on: every array a body streams
/// is in memory already or an element produced earlier in the same
/// iteration; `Before` temporaries are not stored and `Before'` ones are;
/// every nest is one `For`; every array has a size.
pub fn verify(f: &Function) -> Result<(), String> {
    let mut in_memory: HashSet<VarId> = f.params.iter().filter_map(|l| if let Operand::Var(v) = l.value { Some(v) } else { None }).collect();
    for step in &f.steps {
        if let Step::Call(c) = step {
            for a in &c.args {
                if let Operand::Var(v) = a {
                    if f.var(*v).ty.is_array() && !in_memory.contains(v) {
                        return Err(format!("extern call '{}' passes %{} which is not in memory", c.name, v.0));
                    }
                }
            }
            in_memory.extend(c.outputs.iter().copied());
        }
        let Step::Loop(n) = step else { continue };
        let mut elements: IndexSet<VarId> = IndexSet::new();
        for l in n.body.leaves() {
            for r in l.reads() {
                if !elements.contains(r) && !in_memory.contains(r) {
                    return Err(format!("cluster {}: '{}' reads %{} which is neither in memory nor produced earlier in the iteration", n.cluster, l.name(), r.0));
                }
                if !f.sizes.contains_key(r) {
                    return Err(format!("array %{} has no size", r.0));
                }
            }
            if let Some(v) = l.memory_reads().iter().find(|v| !in_memory.contains(v) && !elements.contains(*v)) {
                return Err(format!("cluster {}: '{}' reads %{} at computed positions but it is not in memory", n.cluster, l.name(), v.0));
            }
            elements.extend(l.element_outs().iter().copied());
        }
        fn check(b: &Body, stores: &[VarId]) -> Result<(), String> {
            match b {
                Body::Leaf(..) => Ok(()),
                Body::Before { temps, first, then } => {
                    if let Some(t) = temps.iter().find(|t| stores.contains(t)) {
                        return Err(format!("vertically fused %{} is stored", t.0));
                    }
                    check(first, stores)?;
                    check(then, stores)
                }
                Body::BeforeKeep { temps, first, then } => {
                    if !temps.iter().any(|t| stores.contains(t)) {
                        return Err("a diagonal fusion stores none of its temporaries".into());
                    }
                    check(first, stores)?;
                    check(then, stores)
                }
                Body::Besides(a, b) => {
                    check(a, stores)?;
                    check(b, stores)
                }
                Body::When { filter, then, .. } => {
                    if !matches!(**filter, Body::Leaf(LoopBody::Filter { .. }, 0)) {
                        return Err("a When body is not guarded by a filter".into());
                    }
                    check(filter, stores)?;
                    check(then, stores)
                }
            }
        }
        check(&n.body, &n.stores)?;
        for s in &n.stores {
            if !elements.contains(s) {
                return Err(format!("cluster {} stores %{} which it does not produce", n.cluster, s.0));
            }
            in_memory.insert(*s);
        }
    }
    Ok(())
}
