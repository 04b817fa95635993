//! Type inference and lowering of the surface AST to the labelled let-bound
//! program, in one pass: non-exported functions are inlined at their call
//! sites, tuples are flattened into scalar leaves, arrays of tuples into one
//! array per component, and every combinator application becomes a node
//! named after its `let` (`LET.K` when nested). Literal types are variables
//! until the function is finished, then fixed and range-checked.

use super::scopes::Scopes;
use super::types::{from_ty, ITy, LitKind, Unifier};
use afc_ir::ast::{self, BinOp, Expr, ExprKind, Lit, Pat, TypeExpr, UnOp};
use afc_ir::diag::{Diagnostic, Span};
use afc_ir::labelled::*;
use afc_ir::types::{Prim, Ty};
use indexmap::IndexMap;
use std::collections::HashSet;

type R<T> = Result<T, Diagnostic>;
/// What a branch of a choice elaborates to: its items, its nodes, the sizes
/// its `zip`s equate, its value.
type Branch = (Vec<Item>, Vec<Node>, Vec<(Vec<VarId>, Span)>, Val);

/// The combinators this compiler turns into nodes.
const COMBINATORS: &[&str] =
    &["map", "generate", "iota", "fold", "filter", "scanl", "prescanl", "scanr", "reverse", "force", "gather", "backpermute", "scatter", "permute", "cross", "transpose"];

#[derive(Clone, Debug)]
enum Val {
    Scalar(Operand, ITy),
    Tuple(Vec<Val>),
    /// An array of rank `rank`: one leaf array per scalar leaf of `elem`.
    Array { leaves: Vec<VarId>, rank: u8, elem: ITy },
}

enum Target {
    Top(Vec<Item>),
    Block(Vec<Stmt>),
}

struct Lits {
    var: VarId,
    lit: Lit,
    negated: bool,
    span: Span,
}

pub fn elaborate(prog: &ast::Program) -> Result<Program, Vec<Diagnostic>> {
    let mut items: IndexMap<String, &ast::Item> = IndexMap::new();
    let mut diags = vec![];
    for it in &prog.items {
        if let Some(prev) = items.get(&it.name.name) {
            diags.push(
                Diagnostic::error(it.name.span, format!("function '{}' is defined twice", it.name.name))
                    .with_label(prev.name.span, "first defined here"),
            );
            continue;
        }
        if is_builtin_name(&it.name.name) {
            diags.push(Diagnostic::error(
                it.name.span,
                format!("'{}' is a built-in name and cannot be redefined", it.name.name),
            ));
            continue;
        }
        let n = &it.name.name;
        if it.body.is_none() && (n.starts_with("afc_") || n.strip_suffix('f').and_then(Builtin::from_name).is_some()) {
            diags.push(
                Diagnostic::error(it.name.span, format!("extern fn '{}' would clash with a C symbol compiled code uses", n))
                    .with_note("runtime symbols begin with `afc_`; the float built-ins call the C library's functions of their names"),
            );
            continue;
        }
        if it.exported {
            if let Some((why, hint)) = super::cnames::export_problem(n) {
                diags.push(Diagnostic::error(it.name.span, format!("cannot export '{}': {}", n, why)).with_note(hint));
                continue;
            }
        }
        items.insert(it.name.name.clone(), it);
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    let recursive = recursive_functions(&items);
    let mut out = Program::default();
    // Every function is checked, exported or not; exported and recursive
    // ones are compiled.
    for it in &prog.items {
        if it.body.is_none() {
            if let Err(d) = check_signature(it) {
                diags.push(d);
            }
            continue;
        }
        let mut e = Elab::new(&items, &recursive);
        match e.function(it) {
            Ok(f) => out.functions.push(f),
            Err(d) => diags.push(d),
        }
    }
    if diags.is_empty() {
        Ok(out)
    } else {
        // A non-exported function is checked alone and again where it is
        // inlined: report each problem once.
        let mut seen = HashSet::new();
        diags.retain(|d| seen.insert((d.span, d.message.clone())));
        Err(diags)
    }
}

/// The source name of each top-level result written as a plain name.
fn result_names(e: &Expr) -> Vec<Option<String>> {
    let name = |e: &Expr| match &e.kind {
        ExprKind::Name(n) => Some(n.clone()),
        _ => None,
    };
    match &e.kind {
        ExprKind::Tuple(es) => es.iter().map(name).collect(),
        _ => vec![name(e)],
    }
}

/// The functions in a cycle of calls (LANGUAGE.md: compiled on their own,
/// every call of them a fusion barrier), by the strongly connected
/// components of the call graph.
fn recursive_functions(items: &IndexMap<String, &ast::Item>) -> HashSet<String> {
    fn calls(e: &Expr, items: &IndexMap<String, &ast::Item>, out: &mut Vec<String>) {
        let named = |n: &str, out: &mut Vec<String>| {
            if items.get(n).map(|it| it.body.is_some()).unwrap_or(false) {
                out.push(n.to_string());
            }
        };
        match &e.kind {
            ExprKind::Lit(_) | ExprKind::Section(_) => {}
            // A function passed by name as a worker is called too.
            ExprKind::Name(n) => named(n, out),
            ExprKind::Tuple(es) => es.iter().for_each(|e| calls(e, items, out)),
            ExprKind::Field(e, _) | ExprKind::Unary(_, e) | ExprKind::Lambda(_, e) => calls(e, items, out),
            ExprKind::Binary(_, a, b) => {
                calls(a, items, out);
                calls(b, items, out);
            }
            ExprKind::Call(f, args) => {
                named(&f.name, out);
                args.iter().for_each(|e| calls(e, items, out));
            }
            ExprKind::Index(a, ix) => {
                calls(a, items, out);
                ix.iter().for_each(|e| calls(e, items, out));
            }
            ExprKind::If(c, t, f) => {
                calls(c, items, out);
                block(t, items, out);
                block(f, items, out);
            }
            ExprKind::Block(b) => block(b, items, out),
        }
    }
    fn block(b: &ast::Block, items: &IndexMap<String, &ast::Item>, out: &mut Vec<String>) {
        for l in &b.lets {
            calls(&l.value, items, out);
        }
        calls(&b.result, items, out);
    }
    let mut g: petgraph::graph::DiGraph<String, ()> = petgraph::graph::DiGraph::new();
    let idx: IndexMap<String, petgraph::graph::NodeIndex> = items.keys().map(|n| (n.clone(), g.add_node(n.clone()))).collect();
    for (n, it) in items {
        if let Some(b) = &it.body {
            let mut out = vec![];
            block(b, items, &mut out);
            for c in out {
                g.update_edge(idx[n], idx[&c], ());
            }
        }
    }
    let mut rec = HashSet::new();
    for scc in petgraph::algo::tarjan_scc(&g) {
        if scc.len() > 1 || g.contains_edge(scc[0], scc[0]) {
            rec.extend(scc.into_iter().map(|i| g[i].clone()));
        }
    }
    rec
}

/// Every name a call can use without defining it.
fn builtin_names() -> impl Iterator<Item = &'static str> {
    const OTHERS: &[&str] = &["zip", "unzip", "length", "shape", "select", "i32", "i64", "f32", "f64"];
    COMBINATORS.iter().chain(OTHERS).copied().chain(Builtin::ALL.iter().map(|b| b.name()))
}

/// A combinator's form, and which of its arguments are workers.
fn combinator_form(name: &str) -> Option<(&'static str, &'static [usize])> {
    Some(match name {
        "map" => ("map(f, xs, …)", &[0]),
        "generate" => ("generate(n, f)", &[1]),
        "fold" => ("fold(op, z, xs)", &[0]),
        "filter" => ("filter(p, xs)", &[0]),
        "scanl" => ("scanl(op, z, xs)", &[0]),
        "prescanl" => ("prescanl(op, z, xs)", &[0]),
        "scanr" => ("scanr(op, z, xs)", &[0]),
        "backpermute" => ("backpermute(n, f, xs)", &[1]),
        "scatter" => ("scatter(op, dest, src)", &[0]),
        "permute" => ("permute(op, dest, f, xs)", &[0, 2]),
        _ => return None,
    })
}

/// A worker (`|x| …` or a section) where a combinator takes an array or a
/// value: the arguments are in the wrong order, which the message says
/// with the combinator's form, rather than "a worker can only be an
/// argument of a combinator".
fn check_worker_positions(name: &str, args: &[Expr]) -> R<()> {
    let Some((form, workers)) = combinator_form(name) else { return Ok(()) };
    for (i, a) in args.iter().enumerate() {
        if matches!(a.kind, ExprKind::Lambda(..) | ExprKind::Section(_)) && !workers.contains(&i) {
            let place = match workers {
                [0] => "first".to_string(),
                [1] => "second".to_string(),
                _ => "first and third".to_string(),
            };
            return Err(Diagnostic::error(a.span, format!("a worker as argument {} of '{}', which takes its worker {}: {}", i + 1, name, place, form)));
        }
    }
    Ok(())
}

/// Adds "did you mean 'x'?" when a candidate is close to `name`.
fn did_you_mean<'a>(d: Diagnostic, name: &str, candidates: impl Iterator<Item = &'a str>) -> Diagnostic {
    match afc_ir::diag::closest(name, candidates) {
        Some(c) => d.with_note(format!("did you mean '{}'?", c)),
        None => d,
    }
}

fn is_builtin_name(n: &str) -> bool {
    builtin_names().any(|b| b == n)
}

fn check_signature(it: &ast::Item) -> R<()> {
    for (_, t) in &it.params {
        resolve_type(t)?;
    }
    resolve_type(&it.ret)?;
    Ok(())
}

fn resolve_type(t: &TypeExpr) -> R<Ty> {
    Ok(match t {
        TypeExpr::Prim(p, _) => Ty::Prim(*p),
        TypeExpr::Tuple(ts, _) => Ty::Tuple(ts.iter().map(resolve_type).collect::<R<_>>()?),
        TypeExpr::Array(r, e, _) => Ty::Array(*r, Box::new(resolve_type(e)?)),
    })
}

/// The array leaves of a value, in C order.
fn array_leaves(v: &Val, out: &mut Vec<VarId>) {
    match v {
        Val::Scalar(..) => {}
        Val::Tuple(vs) => vs.iter().for_each(|v| array_leaves(v, out)),
        Val::Array { leaves, .. } => out.extend(leaves),
    }
}

/// The leaves of a value in C order: scalars, and one array per element leaf.
fn flatten_leaves(v: &Val, out: &mut Vec<Operand>) {
    match v {
        Val::Scalar(o, _) => out.push(*o),
        Val::Tuple(vs) => vs.iter().for_each(|v| flatten_leaves(v, out)),
        Val::Array { leaves, .. } => out.extend(leaves.iter().map(|l| Operand::Var(*l))),
    }
}

struct Elab<'a> {
    items: &'a IndexMap<String, &'a ast::Item>,
    /// Functions in a cycle of calls: called, not inlined.
    recursive: &'a HashSet<String>,
    u: Unifier,
    vars: Vec<(String, ITy, Span)>,
    nodes: Vec<Node>,
    targets: Vec<Target>,
    scopes: Scopes<Val>,
    scope_base: usize,
    worker_depth: usize,
    lits: Vec<Lits>,
    same_size: Vec<(Vec<VarId>, Span)>,
}

impl<'a> Elab<'a> {
    fn new(items: &'a IndexMap<String, &'a ast::Item>, recursive: &'a HashSet<String>) -> Elab<'a> {
        Elab {
            items,
            recursive,
            u: Unifier::default(),
            vars: vec![],
            nodes: vec![],
            targets: vec![],
            scopes: Scopes::default(),
            scope_base: 0,
            worker_depth: 0,
            lits: vec![],
            same_size: vec![],
        }
    }

    fn new_var(&mut self, name: &str, ty: ITy, span: Span) -> VarId {
        self.vars.push((name.to_string(), ty, span));
        VarId(self.vars.len() as u32 - 1)
    }

    fn emit(&mut self, s: Stmt) {
        match self.targets.last_mut().expect("a target") {
            Target::Top(items) => items.push(Item::Stmt(s)),
            Target::Block(stmts) => stmts.push(s),
        }
    }

    fn assign(&mut self, name: &str, rhs: Rhs, ty: ITy, span: Span) -> Val {
        let dst = self.new_var(name, ty.clone(), span);
        self.emit(Stmt::Assign { dst, rhs, span });
        Val::Scalar(Operand::Var(dst), ty)
    }

    fn ty_of(&self, v: &Val) -> ITy {
        match v {
            Val::Scalar(_, t) => t.clone(),
            Val::Tuple(vs) => ITy::Tuple(vs.iter().map(|v| self.ty_of(v)).collect()),
            Val::Array { rank, elem, .. } => ITy::Array(*rank, Box::new(elem.clone())),
        }
    }

    fn expect_ty(&mut self, v: &Val, t: &ITy, span: Span, what: &str) -> R<()> {
        let vt = self.ty_of(v);
        if !self.u.unify(&vt, t) {
            return Err(Diagnostic::error(
                span,
                format!("mismatched types: {} has type {}, expected {}", what, self.u.show(&vt), self.u.show(t)),
            ));
        }
        Ok(())
    }

    fn lookup(&self, name: &str) -> Option<Val> {
        self.scopes.get(name, self.scope_base).cloned()
    }

    // ------------------------------------------------------------ functions

    fn function(&mut self, it: &ast::Item) -> R<Function> {
        let mut params = vec![];
        for (name, t) in &it.params {
            let ty = resolve_type(t)?;
            let v = self.param_val(&name.name, &ty, name.span, &name.name, &mut params);
            self.scopes.push(name.name.clone(), v);
        }
        let ret = resolve_type(&it.ret)?;
        self.targets.push(Target::Top(vec![]));
        let body = it.body.as_ref().unwrap();
        let v = self.block(body, true)?;
        self.expect_ty(&v, &from_ty(&ret), body.result.span, "the function's result")?;
        let mut results = vec![];
        self.flatten_result(&v, "out", true, &mut results);
        let items = match self.targets.pop() {
            Some(Target::Top(items)) => items,
            _ => unreachable!(),
        };
        self.finish(it, params, results, items)
    }

    fn param_val(&mut self, name: &str, ty: &Ty, span: Span, c_name: &str, out: &mut Vec<Leaf>) -> Val {
        match ty {
            Ty::Prim(p) => {
                let v = self.new_var(name, ITy::Prim(*p), span);
                out.push(Leaf { c_name: c_name.to_string(), value: Operand::Var(v) });
                Val::Scalar(Operand::Var(v), ITy::Prim(*p))
            }
            Ty::Tuple(ts) => Val::Tuple(
                ts.iter()
                    .enumerate()
                    .map(|(i, t)| self.param_val(&format!("{}.{}", name, i), t, span, &format!("{}_{}", c_name, i), out))
                    .collect(),
            ),
            Ty::Array(r, e) => {
                let prims = e.leaves();
                let mut leaves = vec![];
                for (i, p) in prims.iter().enumerate() {
                    let (n, c) = if prims.len() == 1 && !matches!(**e, Ty::Tuple(_)) {
                        (name.to_string(), c_name.to_string())
                    } else {
                        (format!("{}.{}", name, i), format!("{}_{}", c_name, i))
                    };
                    let v = self.new_var(&n, ITy::Array(*r, Box::new(ITy::Prim(*p))), span);
                    out.push(Leaf { c_name: c, value: Operand::Var(v) });
                    leaves.push(v);
                }
                Val::Array { leaves, rank: *r, elem: from_ty(e) }
            }
        }
    }

    fn flatten_result(&self, v: &Val, c_name: &str, top: bool, out: &mut Vec<Leaf>) {
        match v {
            Val::Scalar(o, _) => out.push(Leaf { c_name: if top { format!("{}0", c_name) } else { c_name.into() }, value: *o }),
            Val::Tuple(vs) => {
                for (i, v) in vs.iter().enumerate() {
                    let n = if top { format!("{}{}", c_name, i) } else { format!("{}_{}", c_name, i) };
                    self.flatten_result(v, &n, false, out);
                }
            }
            Val::Array { leaves, elem, .. } => {
                let base = if top { format!("{}0", c_name) } else { c_name.to_string() };
                let tuple = matches!(self.u.shallow(elem), ITy::Tuple(_));
                for (i, l) in leaves.iter().enumerate() {
                    let n = if tuple { format!("{}_{}", base, i) } else { base.clone() };
                    out.push(Leaf { c_name: n, value: Operand::Var(*l) });
                }
            }
        }
    }

    fn block(&mut self, b: &ast::Block, names_nodes: bool) -> R<Val> {
        let saved = self.scopes.len();
        for l in &b.lets {
            let first = self.nodes.len();
            let mut v = self.expr(&l.value)?;
            if let Some(t) = &l.ty {
                let ty = resolve_type(t)?;
                self.expect_ty(&v, &from_ty(&ty), l.value.span, "the bound value")?;
            }
            if names_nodes {
                self.name_nodes(first, l.pat.first_name().unwrap_or("_"), &l.value);
            }
            self.bind(&l.pat, &mut v)?;
        }
        let first = self.nodes.len();
        let v = self.expr(&b.result)?;
        if names_nodes {
            self.name_nodes(first, "ret", &Expr { kind: ExprKind::Tuple(vec![]), span: Span::default() });
        }
        self.scopes.truncate(saved);
        Ok(v)
    }

    /// Names the nodes made for one `let`: the one whose value the `let` binds
    /// takes its name, the others `LET.K` in source order.
    fn name_nodes(&mut self, first: usize, let_name: &str, e: &Expr) {
        let items = self.items;
        let recursive = self.recursive;
        let principal = principal_span(e, &|n| items.get(n).map(|it| it.body.is_none()).unwrap_or(false) || recursive.contains(n));
        let mut order: Vec<usize> = (first..self.nodes.len()).collect();
        order.sort_by_key(|&i| (self.nodes[i].span.start, std::cmp::Reverse(self.nodes[i].span.end)));
        let mut k = 0;
        for i in order {
            let name = if let_name != "_" && let_name != "ret" && Some(self.nodes[i].span) == principal {
                let_name.to_string()
            } else {
                k += 1;
                format!("{}.{}", let_name, k)
            };
            self.nodes[i].name = name.clone();
            let outs = self.nodes[i].outputs().to_vec();
            for (j, o) in outs.iter().enumerate() {
                self.vars[o.0 as usize].0 = if outs.len() == 1 { name.clone() } else { format!("{}.{}", name, j) };
            }
            if let NodeKind::Filter(Filter { count, .. }) = &self.nodes[i].kind {
                self.vars[count.0 as usize].0 = format!("{}.len", name);
            }
        }
    }

    fn bind(&mut self, p: &Pat, v: &mut Val) -> R<()> {
        match p {
            Pat::Name(id) => {
                if let Val::Scalar(Operand::Var(x), _) = v {
                    // Give anonymous temporaries the source name, for readable dumps.
                    if matches!(self.vars[x.0 as usize].0.as_str(), "t" | "lit" | "elt" | "len") {
                        self.vars[x.0 as usize].0 = id.name.clone();
                    }
                }
                self.scopes.push(id.name.clone(), v.clone());
                Ok(())
            }
            Pat::Wild(_) => Ok(()),
            Pat::Tuple(ps, span) => match v {
                Val::Tuple(vs) if vs.len() == ps.len() => {
                    for (p, v) in ps.iter().zip(vs.iter_mut()) {
                        self.bind(p, v)?;
                    }
                    Ok(())
                }
                _ => {
                    let t = self.ty_of(v);
                    let mut d = Diagnostic::error(
                        *span,
                        format!("a pattern of {} elements cannot bind a value of type {}", ps.len(), self.u.show(&t)),
                    );
                    if matches!(v, Val::Array { .. }) {
                        d = d.with_note("use unzip to split an array of tuples");
                    }
                    Err(d)
                }
            },
        }
    }

    // ------------------------------------------------------------ expressions

    fn scalar(&mut self, e: &Expr) -> R<(Operand, ITy)> {
        let v = self.expr(e)?;
        match v {
            Val::Scalar(o, t) => Ok((o, t)),
            other => {
                let t = self.ty_of(&other);
                Err(Diagnostic::error(e.span, format!("expected a scalar, found a value of type {}", self.u.show(&t))))
            }
        }
    }

    fn array(&mut self, e: &Expr, what: &str) -> R<(Vec<VarId>, u8, ITy)> {
        let v = self.expr(e)?;
        match v {
            Val::Array { leaves, rank, elem } => Ok((leaves, rank, elem)),
            other => {
                let t = self.ty_of(&other);
                Err(Diagnostic::error(e.span, format!("{} must be an array, found a value of type {}", what, self.u.show(&t))))
            }
        }
    }

    fn lit_var(&mut self, lit: Lit, negated: bool, span: Span) -> Val {
        let (ty, c) = match &lit {
            Lit::Int(_, s) => (s.map(ITy::Prim).unwrap_or_else(|| self.u.fresh(LitKind::Int)), Const::I64(0)),
            Lit::Float(_, s) => (s.map(ITy::Prim).unwrap_or_else(|| self.u.fresh(LitKind::Float)), Const::F64(0.0)),
            Lit::Bool(b) => return Val::Scalar(Operand::Const(Const::Bool(*b)), ITy::Prim(Prim::Bool)),
        };
        // The constant is a placeholder until the literal's type is fixed in `finish`.
        let v = self.assign("lit", Rhs::Copy(Operand::Const(c)), ty.clone(), span);
        if let Val::Scalar(Operand::Var(x), _) = &v {
            self.lits.push(Lits { var: *x, lit, negated, span });
        }
        v
    }

    fn expr(&mut self, e: &Expr) -> R<Val> {
        match &e.kind {
            ExprKind::Lit(l) => Ok(self.lit_var(l.clone(), false, e.span)),
            ExprKind::Name(n) => match self.lookup(n) {
                Some(v) => Ok(v),
                // `inf` and `nan` are float literals unless the program binds them.
                None if n == "inf" => Ok(self.lit_var(Lit::Float(f64::INFINITY, None), false, e.span)),
                None if n == "nan" => Ok(self.lit_var(Lit::Float(f64::NAN, None), false, e.span)),
                None => Err(self.unknown_name(n, e.span)),
            },
            ExprKind::Tuple(es) => Ok(Val::Tuple(es.iter().map(|e| self.expr(e)).collect::<R<_>>()?)),
            ExprKind::Field(inner, i) => {
                let v = self.expr(inner)?;
                match v {
                    Val::Tuple(vs) => {
                        let n = vs.len();
                        vs.into_iter().nth(*i as usize).ok_or_else(|| {
                            Diagnostic::error(e.span, format!("tuple index {} out of range for a tuple of {} elements", i, n))
                        })
                    }
                    other => {
                        let t = self.ty_of(&other);
                        let mut d = Diagnostic::error(e.span, format!("cannot take field {} of a value of type {}", i, self.u.show(&t)));
                        if matches!(other, Val::Array { .. }) {
                            d = d.with_note("use unzip to split an array of tuples");
                        }
                        Err(d)
                    }
                }
            }
            ExprKind::Unary(UnOp::Neg, inner) if matches!(inner.kind, ExprKind::Lit(Lit::Int(..)) | ExprKind::Lit(Lit::Float(..))) => {
                if let ExprKind::Lit(l) = &inner.kind {
                    return Ok(self.lit_var(l.clone(), true, e.span));
                }
                unreachable!()
            }
            ExprKind::Unary(op, inner) => {
                let (o, t) = self.scalar(inner)?;
                let ok = match op {
                    UnOp::Neg => self.u.is_numeric(&t),
                    UnOp::Not => self.u.is_bool(&t) || self.u.is_integer(&t),
                };
                if !ok {
                    let what = if *op == UnOp::Neg { "'-' needs a number" } else { "'!' needs a bool or an integer" };
                    return Err(Diagnostic::error(e.span, format!("{}, found {}", what, self.u.show(&t))));
                }
                Ok(self.assign("t", Rhs::Unary(*op, o), t, e.span))
            }
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b, e.span),
            ExprKind::Call(f, args) => self.call(f, args, e.span),
            ExprKind::Lambda(..) | ExprKind::Section(_) => Err(Diagnostic::error(
                e.span,
                "a worker function can only be an argument of a combinator",
            )),
            ExprKind::Index(arr, ix) => {
                let (leaves, rank, elem) = self.array(arr, "an indexed value")?;
                if ix.len() != rank as usize {
                    return Err(Diagnostic::error(
                        e.span,
                        format!("an array of rank {} takes {} indices, found {}", rank, rank, ix.len()),
                    ));
                }
                let mut ops = vec![];
                for i in ix {
                    let (o, t) = self.scalar(i)?;
                    if !self.u.unify(&t, &ITy::Prim(Prim::I64)) {
                        return Err(Diagnostic::error(i.span, format!("array indices are i64, found {}", self.u.show(&t))));
                    }
                    ops.push(o);
                }
                let mut it = leaves.into_iter();
                Ok(self.rebuild(&elem, &mut |s, p| {
                    let l = it.next().unwrap();
                    s.assign("elt", Rhs::Index(l, ops.clone()), p, e.span)
                }))
            }
            ExprKind::If(c, t, f) => self.if_expr(c, t, f, e.span),
            ExprKind::Block(b) => self.block(b, false),
        }
    }

    /// Builds a value of type `t` from one call of `leaf` per scalar leaf.
    fn rebuild(&mut self, t: &ITy, leaf: &mut dyn FnMut(&mut Self, ITy) -> Val) -> Val {
        match self.u.shallow(t) {
            ITy::Tuple(ts) => Val::Tuple(ts.iter().map(|t| self.rebuild(t, leaf)).collect()),
            other => leaf(self, other),
        }
    }

    fn unknown_name(&self, n: &str, span: Span) -> Diagnostic {
        if self.items.contains_key(n) || is_builtin_name(n) {
            return Diagnostic::error(span, format!("'{}' is a function; call it with arguments", n));
        }
        let in_scope: Vec<&str> = self.scopes.names_from(self.scope_base).collect();
        did_you_mean(Diagnostic::error(span, format!("unknown name '{}'", n)), n, in_scope.into_iter())
    }

    fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr, span: Span) -> R<Val> {
        if matches!(op, BinOp::And | BinOp::Or) {
            // Short-circuit: `a && b` is `if a { b } else { false }`.
            let (ca, ta) = self.scalar(a)?;
            if !self.u.is_bool(&ta) {
                return Err(Diagnostic::error(a.span, format!("'{}' needs bool operands, found {}", op.symbol(), self.u.show(&ta))));
            }
            let mut rhs = |s: &mut Self| -> R<Val> {
                let (cb, tb) = s.scalar(b)?;
                if !s.u.is_bool(&tb) {
                    return Err(Diagnostic::error(b.span, format!("'{}' needs bool operands, found {}", op.symbol(), s.u.show(&tb))));
                }
                Ok(Val::Scalar(cb, tb))
            };
            let k = op == BinOp::Or;
            let mut konst = |_: &mut Self| -> R<Val> { Ok(Val::Scalar(Operand::Const(Const::Bool(k)), ITy::Prim(Prim::Bool))) };
            return if op == BinOp::And { self.choice(ca, span, &mut rhs, &mut konst) } else { self.choice(ca, span, &mut konst, &mut rhs) };
        }
        let (oa, ta) = self.scalar(a)?;
        let (ob, tb) = self.scalar(b)?;
        self.binop(op, (oa, ta), (ob, tb), span, Some((a.span, b.span)))
    }

    fn binop(&mut self, op: BinOp, a: (Operand, ITy), b: (Operand, ITy), span: Span, spans: Option<(Span, Span)>) -> R<Val> {
        let (oa, ta) = a;
        let (ob, tb) = b;
        if !self.u.unify(&ta, &tb) {
            let mut d = Diagnostic::error(
                span,
                format!("mismatched types: '{}' of {} and {}", op.symbol(), self.u.show(&ta), self.u.show(&tb)),
            );
            if let Some((sa, sb)) = spans {
                d = d.with_label(sa, format!("this is {}", self.u.show(&ta))).with_label(sb, format!("this is {}", self.u.show(&tb)));
            }
            return Err(d.with_note("there are no implicit conversions: use i32(), i64(), f32() or f64()"));
        }
        use BinOp::*;
        let (ok, res, need) = match op {
            Add | Sub | Mul | Div | Rem => (self.u.is_numeric(&ta), ta.clone(), "numbers"),
            Lt | Le | Gt | Ge => (self.u.is_numeric(&ta), ITy::Prim(Prim::Bool), "numbers"),
            Eq | Ne => (matches!(self.u.shallow(&ta), ITy::Prim(_) | ITy::Var(_)), ITy::Prim(Prim::Bool), "scalars"),
            BitAnd | BitOr | BitXor => (self.u.is_integer(&ta) || self.u.is_bool(&ta), ta.clone(), "integers or bools"),
            Shl | Shr => (self.u.is_integer(&ta), ta.clone(), "integers"),
            And | Or => unreachable!(),
        };
        if !ok {
            return Err(Diagnostic::error(span, format!("'{}' needs {}, found {}", op.symbol(), need, self.u.show(&ta))));
        }
        Ok(self.assign("t", Rhs::Binary(op, oa, ob), res, span))
    }

    fn if_expr(&mut self, c: &Expr, t: &ast::Block, f: &ast::Block, span: Span) -> R<Val> {
        let (co, ct) = self.scalar(c)?;
        if !self.u.is_bool(&ct) {
            return Err(Diagnostic::error(c.span, format!("an if condition must be bool, found {}", self.u.show(&ct))));
        }
        self.choice(co, span, &mut |s| s.block(t, true), &mut |s| s.block(f, true))
    }

    /// One branch of a choice, elaborated on its own: its items, the nodes
    /// it made (numbered from 0), the sizes its `zip`s equate, its value.
    fn branch(&mut self, f: &mut dyn FnMut(&mut Self) -> R<Val>) -> R<Branch> {
        self.targets.push(Target::Top(vec![]));
        let (nodes_before, same_before) = (self.nodes.len(), self.same_size.len());
        let v = f(self);
        let Some(Target::Top(mut items)) = self.targets.pop() else { unreachable!() };
        let nodes: Vec<Node> = self.nodes.drain(nodes_before..).collect();
        let same = self.same_size.drain(same_before..).collect();
        for it in &mut items {
            if let Item::Node(id) = it {
                id.0 -= nodes_before as u32;
            }
        }
        Ok((items, nodes, same, v?))
    }

    /// `if cond { then } else { els }`: a scalar `if` when neither branch
    /// makes a node or an array, else an array-level `if` node whose
    /// branches are bodies of their own (LANGUAGE.md).
    fn choice(&mut self, cond: Operand, span: Span, then: &mut dyn FnMut(&mut Self) -> R<Val>, els: &mut dyn FnMut(&mut Self) -> R<Val>) -> R<Val> {
        let (ti, tn, ts, tv) = self.branch(then)?;
        let (ei, en, es, ev) = self.branch(els)?;
        let tt = self.ty_of(&tv);
        let ft = self.ty_of(&ev);
        if !self.u.unify(&tt, &ft) {
            return Err(Diagnostic::error(
                span,
                format!("if branches have different types: {} and {}", self.u.show(&tt), self.u.show(&ft)),
            ));
        }
        if tn.is_empty() && en.is_empty() && !contains_array(&tv) && !contains_array(&ev) {
            let stmts = |items: Vec<Item>| -> Vec<Stmt> { items.into_iter().map(|it| if let Item::Stmt(s) = it { s } else { unreachable!() }).collect() };
            let (mut tr, mut er) = (vec![], vec![]);
            self.flatten_scalars(&tv, &mut tr);
            self.flatten_scalars(&ev, &mut er);
            let mut dsts = vec![];
            let v = self.rebuild(&tt, &mut |s, p| {
                let d = s.new_var("t", p.clone(), span);
                dsts.push(d);
                Val::Scalar(Operand::Var(d), p)
            });
            let (then, els) = (Block { stmts: stmts(ti), results: tr }, Block { stmts: stmts(ei), results: er });
            self.emit(Stmt::If { dsts, cond, then, els, span });
            return Ok(v);
        }
        if self.worker_depth > 0 {
            return Err(Diagnostic::error(span, "a worker function cannot choose between arrays")
                .with_note("an `if` over arrays is array-level control flow: bind it with `let` outside the worker"));
        }
        let body = |name: &str, items: Vec<Item>, nodes: Vec<Node>, same_size, v: &Val, s: &Self| {
            let mut results = vec![];
            s.leaves_of(v, name, &mut results);
            Function { name: name.into(), exported: false, recursive: false, span, params: vec![], results, result_names: vec![], items, nodes, vars: vec![], same_size }
        };
        let then = Box::new(body("then", ti, tn, ts, &tv, self));
        let els = Box::new(body("else", ei, en, es, &ev, self));
        // The outputs: fresh variables of the branches' type, leaf by leaf.
        let mut outputs = vec![];
        let v = self.fresh_like(&tt, span, &mut outputs);
        // (What the branches read from outside is known once variables are
        // final: `finish` fills in `inputs` and the captures.)
        let f = Lambda { params: vec![], body: Block::default(), captures: vec![] };
        self.push_node(span, NodeKind::If(If { f, cond, then, els, inputs: vec![], outputs }));
        Ok(v)
    }

    /// Every leaf of a value as a result leaf, in C order.
    fn leaves_of(&self, v: &Val, name: &str, out: &mut Vec<Leaf>) {
        match v {
            Val::Scalar(o, _) => out.push(Leaf { c_name: format!("{}{}", name, out.len()), value: *o }),
            Val::Tuple(vs) => vs.iter().for_each(|v| self.leaves_of(v, name, out)),
            Val::Array { leaves, .. } => {
                for l in leaves {
                    out.push(Leaf { c_name: format!("{}{}", name, out.len()), value: Operand::Var(*l) });
                }
            }
        }
    }

    /// A value of type `t` made of fresh variables (arrays as one array per
    /// element leaf), pushed to `out` in C order.
    fn fresh_like(&mut self, t: &ITy, span: Span, out: &mut Vec<VarId>) -> Val {
        match self.u.shallow(t) {
            ITy::Array(r, elem) => {
                let mut leaves = vec![];
                self.rebuild(&elem, &mut |s, p| {
                    let x = s.new_var("arr", ITy::Array(r, Box::new(p.clone())), span);
                    leaves.push(x);
                    Val::Scalar(Operand::Var(x), p)
                });
                out.extend(&leaves);
                Val::Array { leaves, rank: r, elem: (*elem).clone() }
            }
            ITy::Tuple(ts) => Val::Tuple(ts.iter().map(|t| self.fresh_like(t, span, out)).collect()),
            other => {
                let x = self.new_var("t", other.clone(), span);
                out.push(x);
                Val::Scalar(Operand::Var(x), other)
            }
        }
    }

    fn flatten_scalars(&self, v: &Val, out: &mut Vec<Operand>) {
        match v {
            Val::Scalar(o, _) => out.push(*o),
            Val::Tuple(vs) => vs.iter().for_each(|v| self.flatten_scalars(v, out)),
            Val::Array { .. } => {}
        }
    }

    // ------------------------------------------------------------ calls

    fn call(&mut self, f: &ast::Ident, args: &[Expr], span: Span) -> R<Val> {
        let name = f.name.as_str();
        if self.lookup(name).is_some() {
            return Err(Diagnostic::error(f.span, format!("'{}' is a variable, not a function", name)));
        }
        let arity = |n: usize| -> R<()> {
            if args.len() != n {
                Err(Diagnostic::error(span, format!("'{}' takes {} argument{}, found {}", name, n, if n == 1 { "" } else { "s" }, args.len())))
            } else {
                Ok(())
            }
        };
        if let Some(b) = Builtin::from_name(name) {
            arity(b.arity())?;
            let ops = args.iter().map(|a| self.scalar(a)).collect::<R<Vec<_>>>()?;
            return self.builtin(b, ops, span);
        }
        if let Some(p) = Prim::from_name(name) {
            if p != Prim::Bool {
                arity(1)?;
                let (o, t) = self.scalar(&args[0])?;
                if !matches!(self.u.shallow(&t), ITy::Prim(_) | ITy::Var(_)) {
                    return Err(Diagnostic::error(args[0].span, format!("cannot convert a value of type {}", self.u.show(&t))));
                }
                return Ok(self.assign("t", Rhs::Cast(p, o), ITy::Prim(p), span));
            }
        }
        match name {
            "select" => {
                arity(3)?;
                let (c, ct) = self.scalar(&args[0])?;
                if !self.u.is_bool(&ct) {
                    return Err(Diagnostic::error(args[0].span, format!("select's condition must be bool, found {}", self.u.show(&ct))));
                }
                let a = self.expr(&args[1])?;
                let b = self.expr(&args[2])?;
                let ta = self.ty_of(&a);
                self.expect_ty(&b, &ta, args[2].span, "select's second alternative")?;
                if contains_array(&a) {
                    return Err(Diagnostic::error(span, "select chooses between scalars or tuples, not arrays"));
                }
                let (mut la, mut lb) = (vec![], vec![]);
                self.flatten_scalars(&a, &mut la);
                self.flatten_scalars(&b, &mut lb);
                let mut k = 0;
                Ok(self.rebuild(&ta, &mut |s, p| {
                    let v = s.assign("t", Rhs::Select(c, la[k], lb[k]), p, span);
                    k += 1;
                    v
                }))
            }
            "length" | "shape" => {
                arity(1)?;
                let (leaves, rank, _) = self.array(&args[0], &format!("the argument of {}", name))?;
                let dims: Vec<Val> = (0..rank)
                    .map(|d| self.assign("len", Rhs::Length(leaves[0], d), ITy::Prim(Prim::I64), span))
                    .collect();
                if name == "length" || rank == 1 {
                    Ok(dims.into_iter().next().unwrap())
                } else {
                    Ok(Val::Tuple(dims))
                }
            }
            "zip" => {
                if args.len() < 2 {
                    arity(2)?;
                }
                let mut leaves = vec![];
                let mut elems = vec![];
                let mut first_rank = None;
                for a in args {
                    let (l, r, e) = self.array(a, "an argument of zip")?;
                    if *first_rank.get_or_insert(r) != r {
                        return Err(Diagnostic::error(a.span, "zip needs arrays of the same rank"));
                    }
                    leaves.extend(l);
                    elems.push(e);
                }
                self.same_size.push((leaves.clone(), span));
                Ok(Val::Array { leaves, rank: first_rank.unwrap(), elem: ITy::Tuple(elems) })
            }
            "unzip" => {
                arity(1)?;
                let (leaves, rank, elem) = self.array(&args[0], "the argument of unzip")?;
                match self.u.shallow(&elem) {
                    ITy::Tuple(ts) => {
                        let mut out = vec![];
                        let mut k = 0;
                        for t in ts {
                            let n = self.u.resolve(&t).leaves().len();
                            out.push(Val::Array { leaves: leaves[k..k + n].to_vec(), rank, elem: t });
                            k += n;
                        }
                        Ok(Val::Tuple(out))
                    }
                    _ => Err(Diagnostic::error(args[0].span, "unzip needs an array of tuples")),
                }
            }
            _ if COMBINATORS.contains(&name) => self.combinator(name, f.span, args, span),
            _ => match self.items.get(name).copied() {
                Some(item) => {
                    let vals = args.iter().map(|a| self.expr(a)).collect::<R<Vec<_>>>()?;
                    self.call_user(item, vals, args, span)
                }
                None => {
                    let mut callable: Vec<&str> = self.items.keys().map(|k| k.as_str()).collect();
                    for b in builtin_names() {
                        callable.push(b);
                    }
                    Err(did_you_mean(Diagnostic::error(f.span, format!("unknown function '{}'", name)), name, callable.into_iter()))
                }
            },
        }
    }

    fn builtin(&mut self, b: Builtin, ops: Vec<(Operand, ITy)>, span: Span) -> R<Val> {
        let t = ops[0].1.clone();
        for (_, u) in &ops[1..] {
            if !self.u.unify(&t, u) {
                return Err(Diagnostic::error(
                    span,
                    format!("mismatched types: '{}' of {} and {}", b.name(), self.u.show(&t), self.u.show(u)),
                ));
            }
        }
        let ok = if b.float_only() { self.u.is_float(&t) } else { self.u.is_numeric(&t) };
        if !ok {
            let need = if b.float_only() { "f32 or f64" } else { "a number" };
            return Err(Diagnostic::error(span, format!("'{}' needs {}, found {}", b.name(), need, self.u.show(&t))));
        }
        Ok(self.assign("t", Rhs::Builtin(b, ops.into_iter().map(|o| o.0).collect()), t, span))
    }

    fn call_user(&mut self, item: &ast::Item, vals: Vec<Val>, args: &[Expr], span: Span) -> R<Val> {
        let name = &item.name.name;
        if item.body.is_none() {
            return self.call_extern(item, vals, args, span, Callee::Extern);
        }
        if self.recursive.contains(name) {
            return self.call_extern(item, vals, args, span, Callee::Afc);
        }
        if vals.len() != item.params.len() {
            return Err(Diagnostic::error(
                span,
                format!("'{}' takes {} arguments, found {}", name, item.params.len(), vals.len()),
            )
            .with_label(item.name.span, "defined here"));
        }
        let saved_base = self.scope_base;
        let saved_len = self.scopes.len();
        let mut bound = vec![];
        for ((pn, pt), (v, a)) in item.params.iter().zip(vals.iter().zip(args)) {
            let ty = resolve_type(pt)?;
            self.expect_ty(v, &from_ty(&ty), a.span, &format!("argument '{}'", pn.name))?;
            bound.push((pn.name.clone(), v.clone()));
        }
        self.scope_base = self.scopes.len();
        for (n, v) in bound {
            self.scopes.push(n, v);
        }
        let r = self.block(item.body.as_ref().unwrap(), false);
        self.scopes.truncate(saved_len);
        self.scope_base = saved_base;
        let v = r?;
        let ret = resolve_type(&item.ret)?;
        self.expect_ty(&v, &from_ty(&ret), item.body.as_ref().unwrap().result.span, &format!("the result of '{}'", name))?;
        Ok(v)
    }

    /// A call of an `extern fn` or of a recursive function: one barrier
    /// node whose arguments and results are the flattened leaves of the C
    /// signature.
    fn call_extern(&mut self, item: &ast::Item, vals: Vec<Val>, args: &[Expr], span: Span, callee: Callee) -> R<Val> {
        let name = &item.name.name;
        if self.worker_depth > 0 {
            return Err(match callee {
                Callee::Extern => Diagnostic::error(span, format!("a worker function cannot call extern fn '{}'", name))
                    .with_note("an extern call is a fusion barrier on whole arrays: call it with `let` outside the worker"),
                Callee::Afc => Diagnostic::error(span, format!("a worker function cannot call the recursive function '{}'", name))
                    .with_label(item.name.span, "recursive: compiled on its own, not inlined")
                    .with_note("a recursive call is a fusion barrier (LANGUAGE.md): call it with `let` outside the worker, or write the loop as a fold or a scan"),
            });
        }
        if vals.len() != item.params.len() {
            return Err(Diagnostic::error(span, format!("'{}' takes {} arguments, found {}", name, item.params.len(), vals.len()))
                .with_label(item.name.span, "declared here"));
        }
        let mut flat = vec![];
        for ((pn, pt), (v, a)) in item.params.iter().zip(vals.iter().zip(args)) {
            let ty = resolve_type(pt)?;
            self.expect_ty(v, &from_ty(&ty), a.span, &format!("argument '{}'", pn.name))?;
            flatten_leaves(v, &mut flat);
        }
        let ret = resolve_type(&item.ret)?;
        let mut outputs = vec![];
        let mut arrays = vec![];
        let v = self.extern_results(&from_ty(&ret), span, &mut outputs, &mut arrays)?;
        let f = Lambda { params: vec![], body: Block::default(), captures: vec![] };
        let mut inputs = vec![];
        vals.iter().for_each(|v| array_leaves(v, &mut inputs));
        self.push_node(span, NodeKind::Extern(Extern { f, func: name.clone(), callee, args: flat, inputs, outputs, arrays }));
        Ok(v)
    }

    /// Fresh variables for an extern call's results, in C order.
    fn extern_results(&mut self, t: &ITy, span: Span, outputs: &mut Vec<VarId>, arrays: &mut Vec<(Vec<VarId>, VarId)>) -> R<Val> {
        match self.u.shallow(t) {
            ITy::Array(r, elem) => {
                let (leaves, v) = self.node_outputs(&elem, r, span)?;
                let len = self.new_var("len", ITy::Prim(Prim::I64), span);
                outputs.extend(&leaves);
                arrays.push((leaves, len));
                Ok(v)
            }
            ITy::Tuple(ts) => Ok(Val::Tuple(ts.iter().map(|t| self.extern_results(t, span, outputs, arrays)).collect::<R<_>>()?)),
            other => {
                let x = self.new_var("r", other.clone(), span);
                outputs.push(x);
                Ok(Val::Scalar(Operand::Var(x), other))
            }
        }
    }

    // ------------------------------------------------------------ combinators

    fn combinator(&mut self, name: &str, name_span: Span, args: &[Expr], span: Span) -> R<Val> {
        if self.worker_depth > 0 {
            return Err(Diagnostic::error(
                name_span,
                format!("a worker function cannot call the combinator '{}'", name),
            )
            .with_note("nested parallelism is not part of the language: bind the inner array with `let` outside the worker"));
        }
        check_worker_positions(name, args)?;
        let need = |n: usize| -> R<()> {
            if args.len() != n {
                Err(Diagnostic::error(span, format!("'{}' takes {} arguments, found {}", name, n, args.len())))
            } else {
                Ok(())
            }
        };
        match name {
            "map" => {
                if args.len() < 2 {
                    return Err(Diagnostic::error(span, "'map' takes a worker function and at least one array"));
                }
                let mut inputs = vec![];
                let mut elems = vec![];
                let mut rank = None;
                for a in &args[1..] {
                    let (l, r, e) = self.array(a, "an argument of map")?;
                    if *rank.get_or_insert(r) != r {
                        return Err(Diagnostic::error(a.span, format!("map's arrays have one shape: this one has rank {}, the first rank {}", r, rank.unwrap())));
                    }
                    inputs.extend(l);
                    elems.push(e);
                }
                let (lambda, rty) = self.worker(&args[0], &elems, None)?;
                let (outputs, v) = self.node_outputs(&rty, rank.unwrap(), span)?;
                self.push_node(span, NodeKind::Map(Map { f: lambda, inputs, outputs }));
                Ok(v)
            }
            "generate" | "iota" => {
                need(if name == "iota" { 1 } else { 2 })?;
                // A size, or a shape: a tuple of two or three sizes.
                let sv = self.expr(&args[0])?;
                let parts = match &sv {
                    Val::Scalar(..) => vec![sv.clone()],
                    Val::Tuple(vs) if name == "generate" && (2..=3).contains(&vs.len()) => vs.clone(),
                    Val::Tuple(vs) => {
                        return Err(Diagnostic::error(args[0].span, format!("a shape is a size or a tuple of 2 or 3 sizes, found a tuple of {}", vs.len())));
                    }
                    Val::Array { .. } => return Err(Diagnostic::error(args[0].span, "a size must be an i64, found an array")),
                };
                let mut shape = vec![];
                for p in parts {
                    match p {
                        Val::Scalar(o, t) if self.u.unify(&t, &ITy::Prim(Prim::I64)) => shape.push(o),
                        other => {
                            let t = self.ty_of(&other);
                            return Err(Diagnostic::error(args[0].span, format!("a size must be an i64, found {}", self.u.show(&t))));
                        }
                    }
                }
                let idx = ITy::Prim(Prim::I64);
                let (lambda, rty) = if name == "iota" {
                    let p = self.new_var("i", idx.clone(), span);
                    (Lambda { params: vec![p], body: Block { stmts: vec![], results: vec![Operand::Var(p)] }, captures: vec![] }, idx)
                } else {
                    let ixs = vec![idx; shape.len()];
                    self.worker(&args[1], &ixs, None)?
                };
                let (outputs, v) = self.node_outputs(&rty, shape.len() as u8, span)?;
                self.push_node(span, NodeKind::Generate(Generate { shape, f: lambda, outputs }));
                Ok(v)
            }
            "fold" => {
                need(3)?;
                let z = self.expr(&args[1])?;
                if contains_array(&z) {
                    return Err(Diagnostic::error(args[1].span, "a fold's initial value is a scalar or a tuple"));
                }
                let (inputs, r, elem) = self.array(&args[2], "the array folded")?;
                let zt = self.ty_of(&z);
                let (op, rty) = self.worker(&args[0], &[zt.clone(), elem], Some(&zt))?;
                if !self.u.unify(&rty, &zt) {
                    return Err(Diagnostic::error(
                        args[0].span,
                        format!(
                            "the fold operator returns {}, but the accumulator has type {}",
                            self.u.show(&rty),
                            self.u.show(&zt)
                        ),
                    ));
                }
                let mut init = vec![];
                self.flatten_scalars(&z, &mut init);
                // A vector folds to scalars; a matrix to one result per row.
                let out_rank = r as usize - 1;
                let (outputs, v) = if out_rank == 0 {
                    let mut outputs = vec![];
                    let v = self.rebuild(&zt, &mut |s, p| {
                        let o = s.new_var("acc", p.clone(), span);
                        outputs.push(o);
                        Val::Scalar(Operand::Var(o), p)
                    });
                    (outputs, v)
                } else {
                    self.node_outputs(&zt, out_rank as u8, span)?
                };
                self.push_node(span, NodeKind::Fold(Fold { op, init, inputs, outputs, out_rank }));
                Ok(v)
            }
            "filter" => {
                need(2)?;
                let (inputs, r, elem) = self.array(&args[1], "the array filtered")?;
                if r != 1 {
                    return Err(Diagnostic::error(args[1].span, format!("filter takes a vector ([T]), found an array of rank {}", r))
                        .with_note("a filter keeps some elements of each row, which would not form a matrix"));
                }
                let (p, rty) = self.worker(&args[0], std::slice::from_ref(&elem), None)?;
                if !self.u.unify(&rty, &ITy::Prim(Prim::Bool)) {
                    return Err(Diagnostic::error(
                        args[0].span,
                        format!("a filter's predicate must return bool, found {}", self.u.show(&rty)),
                    ));
                }
                let (outputs, v) = self.node_outputs(&elem, 1, span)?;
                let count = self.new_var("len", ITy::Prim(Prim::I64), span);
                self.push_node(span, NodeKind::Filter(Filter { p, inputs, outputs, count }));
                Ok(v)
            }
            "scanl" | "prescanl" | "scanr" => {
                need(3)?;
                let z = self.expr(&args[1])?;
                if contains_array(&z) {
                    return Err(Diagnostic::error(args[1].span, "a scan's initial value is a scalar or a tuple"));
                }
                let (inputs, r, elem) = self.array(&args[2], "the array scanned")?;
                let zt = self.ty_of(&z);
                if !self.u.unify(&elem, &zt) {
                    return Err(Diagnostic::error(
                        args[1].span,
                        format!("a scan's initial value has the element type: expected {}, found {}", self.u.show(&elem), self.u.show(&zt)),
                    ));
                }
                let dir = match name {
                    "scanl" => ScanKind::Inclusive,
                    "prescanl" => ScanKind::Exclusive,
                    _ => ScanKind::Right,
                };
                let (op, rty) = self.worker(&args[0], &[zt.clone(), zt.clone()], None)?;
                if !self.u.unify(&rty, &zt) {
                    return Err(Diagnostic::error(
                        args[0].span,
                        format!("the scan operator returns {}, but the elements have type {}", self.u.show(&rty), self.u.show(&zt)),
                    ));
                }
                let mut init = vec![];
                self.flatten_scalars(&z, &mut init);
                let (outputs, v) = self.node_outputs(&zt, r, span)?;
                self.push_node(span, NodeKind::Scan(Scan { dir, op, init, inputs, outputs }));
                Ok(v)
            }
            "reverse" | "force" | "transpose" => {
                need(1)?;
                let (inputs, r, elem) = self.array(&args[0], &format!("the argument of {}", name))?;
                if name == "transpose" && r != 2 {
                    let e = Diagnostic::error(args[0].span, format!("transpose takes a matrix ([[T]]), found an array of rank {}", r));
                    return Err(if r == 3 { e.with_note("to permute the dimensions of a rank-3 array, use backpermute") } else { e });
                }
                let f = self.identity(&elem, span);
                let (outputs, v) = self.node_outputs(&elem, r, span)?;
                let kind = match name {
                    "reverse" => NodeKind::Reverse(Reverse { f, inputs, outputs }),
                    "force" => NodeKind::Force(Force { f, inputs, outputs }),
                    _ => NodeKind::Transpose(Transpose { f, inputs, outputs }),
                };
                self.push_node(span, kind);
                Ok(v)
            }
            "gather" | "backpermute" => {
                let (is, ir, ie, source_arg) = if name == "gather" {
                    need(2)?;
                    let (is, ir, ie) = self.array(&args[0], "a gather's index array")?;
                    (is, ir, ie, &args[1])
                } else {
                    // backpermute(n, f, xs) = gather(generate(n, f), xs)
                    need(3)?;
                    let is = self.combinator("generate", name_span, &args[..2], args[0].span.to(args[1].span))?;
                    let Val::Array { leaves, rank, elem } = is else { unreachable!() };
                    (leaves, rank, elem, &args[2])
                };
                let (source, r, elem) = self.array(source_arg, "the array gathered from")?;
                // An index is an i64, or for a matrix a tuple of one i64 per dimension.
                let want = if r == 1 { ITy::Prim(Prim::I64) } else { ITy::Tuple(vec![ITy::Prim(Prim::I64); r as usize]) };
                if !self.u.unify(&ie, &want) || is.len() != r as usize {
                    let what = if name == "gather" { "a gather's indices" } else { "a backpermute's index function returns" };
                    return Err(Diagnostic::error(
                        if name == "gather" { args[0].span } else { args[1].span },
                        format!("{} {} for an array of rank {}, found {}", what, self.u.show(&want), r, self.u.show(&ie)),
                    ));
                }
                let f = self.identity(&elem, span);
                let (outputs, v) = self.node_outputs(&elem, ir, span)?;
                self.push_node(span, NodeKind::Gather(Gather { f, index: is, source, outputs }));
                Ok(v)
            }
            "cross" => {
                need(2)?;
                let (a, ra, ea) = self.array(&args[0], "the first argument of cross")?;
                let (b, rb, eb) = self.array(&args[1], "the second argument of cross")?;
                for (r, a) in [(ra, &args[0]), (rb, &args[1])] {
                    if r != 1 {
                        return Err(Diagnostic::error(a.span, format!("cross takes vectors ([T]), found an array of rank {}", r))
                            .with_note("all pairs of two vectors form a vector of length n·m; for a matrix of pairs use generate"));
                    }
                }
                // The result's size is born here: rigid, named by this scalar.
                let i64t = ITy::Prim(Prim::I64);
                let Val::Scalar(n, _) = self.assign("len", Rhs::Length(a[0], 0), i64t.clone(), span) else { unreachable!() };
                let Val::Scalar(m, _) = self.assign("len", Rhs::Length(b[0], 0), i64t.clone(), span) else { unreachable!() };
                let Val::Scalar(size, _) = self.assign("len", Rhs::SizeProduct(n, m), i64t, span) else { unreachable!() };
                let elem = ITy::Tuple(vec![ea, eb]);
                let f = self.identity(&elem, span);
                let (outputs, v) = self.node_outputs(&elem, 1, span)?;
                let split = a.len();
                self.push_node(span, NodeKind::Cross(Cross { f, size, inputs: a.into_iter().chain(b).collect(), split, outputs }));
                Ok(v)
            }
            "scatter" => {
                need(3)?;
                let (dest, r, elem) = self.array(&args[1], "a scatter's destination")?;
                let (src, _, pair) = self.array(&args[2], "a scatter's source")?;
                // (index, value): the index an i64, or a tuple of one i64
                // per dimension of the destination.
                let index = if r == 1 { ITy::Prim(Prim::I64) } else { ITy::Tuple(vec![ITy::Prim(Prim::I64); r as usize]) };
                let want = ITy::Tuple(vec![index, elem.clone()]);
                if !self.u.unify(&pair, &want) {
                    return Err(Diagnostic::error(
                        args[2].span,
                        format!("a scatter's source is an array of (index, value) pairs of type {}, found elements of type {}", self.u.show(&want), self.u.show(&pair)),
                    ));
                }
                let (op, rty) = self.worker(&args[0], &[elem.clone(), elem.clone()], None)?;
                if !self.u.unify(&rty, &elem) {
                    return Err(Diagnostic::error(args[0].span, format!("the scatter operator returns {}, but the elements have type {}", self.u.show(&rty), self.u.show(&elem))));
                }
                let (outputs, v) = self.node_outputs(&elem, r, span)?;
                self.push_node(span, NodeKind::Scatter(Scatter { op, dest, src, dims: r as usize, outputs }));
                Ok(v)
            }
            "permute" => {
                // permute(op, dest, f, xs) = scatter(op, dest, zip(generate(shape(xs), f), xs))
                need(4)?;
                let sp = span;
                let e = |kind: ExprKind| Expr { kind, span: sp };
                let call = |name: &str, args: Vec<Expr>| e(ExprKind::Call(ast::Ident { name: name.into(), span: sp }, args));
                let shape = call("shape", vec![args[3].clone()]);
                let idx = call("generate", vec![shape, args[2].clone()]);
                let src = call("zip", vec![idx, args[3].clone()]);
                self.combinator("scatter", name_span, &[args[0].clone(), args[1].clone(), src], span)
            }
            _ => unreachable!(),
        }
    }

    /// The identity worker on the leaves of an element type.
    fn identity(&mut self, elem: &ITy, span: Span) -> Lambda {
        let mut params = vec![];
        self.rebuild(elem, &mut |s, p| {
            let x = s.new_var("x", p.clone(), span);
            params.push(x);
            Val::Scalar(Operand::Var(x), p)
        });
        let results = params.iter().map(|p| Operand::Var(*p)).collect();
        Lambda { params, body: Block { stmts: vec![], results }, captures: vec![] }
    }

    fn push_node(&mut self, span: Span, kind: NodeKind) {
        let name = format!("node{}", self.nodes.len());
        self.nodes.push(Node { name, span, kind });
        let id = NodeId(self.nodes.len() as u32 - 1);
        match self.targets.last_mut() {
            Some(Target::Top(items)) => items.push(Item::Node(id)),
            _ => unreachable!("nodes are only made at the top level"),
        }
    }

    /// Fresh array variables of rank `rank` for a node's result leaves.
    fn node_outputs(&mut self, elem: &ITy, rank: u8, span: Span) -> R<(Vec<VarId>, Val)> {
        let rt = self.u.shallow(elem);
        if matches!(rt, ITy::Array(..)) || !is_scalar_like(&self.u, &rt) {
            return Err(Diagnostic::error(span, "a worker must return a scalar or a tuple of scalars"));
        }
        let mut leaves = vec![];
        self.rebuild(elem, &mut |s, p| {
            let v = s.new_var("arr", ITy::Array(rank, Box::new(p.clone())), span);
            leaves.push(v);
            Val::Scalar(Operand::Var(v), p)
        });
        Ok((leaves.clone(), Val::Array { leaves, rank, elem: elem.clone() }))
    }

    /// Elaborates a worker applied to parameters of the given types; returns
    /// the lambda and the type of its result.
    fn worker(&mut self, w: &Expr, param_tys: &[ITy], _acc: Option<&ITy>) -> R<(Lambda, ITy)> {
        let mut params = vec![];
        let mut vals = vec![];
        for t in param_tys {
            let v = self.rebuild(t, &mut |s, p| {
                let x = s.new_var("p", p.clone(), w.span);
                params.push(x);
                Val::Scalar(Operand::Var(x), p)
            });
            vals.push(v);
        }
        self.targets.push(Target::Block(vec![]));
        self.worker_depth += 1;
        let r = self.apply(w, vals, param_tys.len());
        self.worker_depth -= 1;
        let stmts = match self.targets.pop() {
            Some(Target::Block(s)) => s,
            _ => unreachable!(),
        };
        let v = r?;
        if contains_array(&v) {
            return Err(Diagnostic::error(w.span, "a worker must return a scalar or a tuple of scalars"));
        }
        let mut results = vec![];
        self.flatten_scalars(&v, &mut results);
        let body = Block { stmts, results };
        let captures = captures_of(&body, &params);
        let t = self.ty_of(&v);
        Ok((Lambda { params, body, captures }, t))
    }

    fn apply(&mut self, w: &Expr, vals: Vec<Val>, n: usize) -> R<Val> {
        match &w.kind {
            ExprKind::Lambda(ps, body) => {
                if ps.len() != n {
                    return Err(Diagnostic::error(
                        w.span,
                        format!("this worker takes {} parameter{}, but the combinator passes {}", ps.len(), if ps.len() == 1 { "" } else { "s" }, n),
                    ));
                }
                let saved = self.scopes.len();
                for (p, v) in ps.iter().zip(vals) {
                    if let Val::Scalar(Operand::Var(x), _) = &v {
                        self.vars[x.0 as usize].0 = p.name.clone();
                    }
                    self.scopes.push(p.name.clone(), v);
                }
                let r = self.expr(body);
                self.scopes.truncate(saved);
                r
            }
            ExprKind::Section(op) => {
                if n != 2 {
                    return Err(Diagnostic::error(w.span, format!("an operator section takes 2 arguments, but the combinator passes {}", n)));
                }
                let mut it = vals.into_iter();
                let (a, b) = (it.next().unwrap(), it.next().unwrap());
                match (a, b) {
                    (Val::Scalar(oa, ta), Val::Scalar(ob, tb)) => {
                        if matches!(op, BinOp::And | BinOp::Or) {
                            // Both operands are already evaluated parameters: no short circuit is observable.
                            if !self.u.is_bool(&ta) || !self.u.unify(&ta, &tb) {
                                return Err(Diagnostic::error(w.span, format!("'{}' needs bool operands", op.symbol())));
                            }
                            let o = if *op == BinOp::And { BinOp::BitAnd } else { BinOp::BitOr };
                            return Ok(self.assign("t", Rhs::Binary(o, oa, ob), ta, w.span));
                        }
                        self.binop(*op, (oa, ta), (ob, tb), w.span, None)
                    }
                    _ => Err(Diagnostic::error(w.span, format!("operator section ({}) applies to scalars, not tuples", op.symbol()))),
                }
            }
            ExprKind::Name(name) if Builtin::from_name(name).is_some() => {
                let b = Builtin::from_name(name).unwrap();
                if b.arity() != n {
                    return Err(Diagnostic::error(w.span, format!("'{}' takes {} arguments, but the combinator passes {}", name, b.arity(), n)));
                }
                let mut ops = vec![];
                for v in vals {
                    match v {
                        Val::Scalar(o, t) => ops.push((o, t)),
                        _ => return Err(Diagnostic::error(w.span, format!("'{}' applies to scalars", name))),
                    }
                }
                self.builtin(b, ops, w.span)
            }
            ExprKind::Name(name) if self.lookup(name).is_none() && self.items.contains_key(name.as_str()) => {
                let item = self.items[name.as_str()];
                let args: Vec<Expr> = (0..vals.len()).map(|_| w.clone()).collect();
                self.call_user(item, vals, &args, w.span)
            }
            _ => Err(Diagnostic::error(w.span, "expected a worker function: `|x| …`, an operator section like `(+)`, or a function name")),
        }
    }

    // ------------------------------------------------------------ finishing

    fn finish(&mut self, it: &ast::Item, params: Vec<Leaf>, results: Vec<Leaf>, items: Vec<Item>) -> R<Function> {
        let mut vars: Vec<VarInfo> = vec![];
        for (name, ity, span) in &self.vars {
            let ty = match self.u.resolve(ity) {
                Ty::Prim(p) => VarTy::Scalar(p),
                Ty::Array(r, e) => VarTy::Array(r, e.leaves()[0]),
                Ty::Tuple(_) => unreachable!("variables hold scalar leaves"),
            };
            vars.push(VarInfo { name: name.clone(), ty, span: *span });
        }
        // Fix every literal's constant to its type, checking that it fits.
        let mut consts: std::collections::HashMap<VarId, Const> = Default::default();
        for l in &self.lits {
            let p = vars[l.var.0 as usize].ty.prim();
            consts.insert(l.var, literal_const(&l.lit, l.negated, p, l.span)?);
        }
        let recursive = self.recursive.contains(&it.name.name);
        let mut f = Function { name: it.name.name.clone(), exported: it.exported, recursive, span: it.span, params, results, result_names: it.body.as_ref().map(|b| result_names(&b.result)).unwrap_or_default(), items, nodes: std::mem::take(&mut self.nodes), vars, same_size: std::mem::take(&mut self.same_size) };
        fix_literals(&mut f, &consts);
        propagate_copies(&mut f);
        finish_branches(&mut f);
        Ok(f)
    }
}

/// The span of the node a `let` binds: a combinator, an extern or
/// recursive call, or an `if`, under any `unzip`.
fn principal_span(e: &Expr, is_extern: &dyn Fn(&str) -> bool) -> Option<Span> {
    match &e.kind {
        ExprKind::Call(f, args) if f.name == "unzip" && args.len() == 1 => principal_span(&args[0], is_extern),
        ExprKind::Call(f, _) if COMBINATORS.contains(&f.name.as_str()) || is_extern(&f.name) => Some(e.span),
        ExprKind::If(..) => Some(e.span),
        _ => None,
    }
}

fn contains_array(v: &Val) -> bool {
    match v {
        Val::Scalar(..) => false,
        Val::Tuple(vs) => vs.iter().any(contains_array),
        Val::Array { .. } => true,
    }
}

fn is_scalar_like(u: &Unifier, t: &ITy) -> bool {
    match u.shallow(t) {
        ITy::Prim(_) | ITy::Var(_) => true,
        ITy::Tuple(ts) => ts.iter().all(|t| is_scalar_like(u, t)),
        ITy::Array(..) => false,
    }
}

fn literal_const(l: &Lit, neg: bool, p: Prim, span: Span) -> R<Const> {
    let too_big = || Diagnostic::error(span, format!("literal out of range for {}", p.name()));
    Ok(match (l, p) {
        (Lit::Int(v, _), Prim::I32) => {
            let v = if neg { -(*v as i128) } else { *v as i128 };
            Const::I32(i32::try_from(v).map_err(|_| too_big())?)
        }
        (Lit::Int(v, _), Prim::I64) => {
            let v = if neg { -(*v as i128) } else { *v as i128 };
            Const::I64(i64::try_from(v).map_err(|_| too_big())?)
        }
        (Lit::Float(v, _), Prim::F32) => {
            let v = if neg { -*v } else { *v };
            let f = v as f32;
            if f.is_infinite() && !v.is_infinite() {
                return Err(too_big());
            }
            Const::F32(f)
        }
        (Lit::Float(v, _), Prim::F64) => {
            Const::F64(if neg { -*v } else { *v })
        }
        _ => unreachable!("unification keeps literal kinds"),
    })
}

fn fix_literals(f: &mut Function, consts: &std::collections::HashMap<VarId, Const>) {
    fn block(b: &mut Block, c: &std::collections::HashMap<VarId, Const>) {
        for s in &mut b.stmts {
            stmt(s, c);
        }
    }
    fn stmt(s: &mut Stmt, c: &std::collections::HashMap<VarId, Const>) {
        match s {
            Stmt::Assign { dst, rhs, .. } => {
                if let Some(k) = c.get(dst) {
                    *rhs = Rhs::Copy(Operand::Const(*k));
                }
            }
            Stmt::If { then, els, .. } => {
                block(then, c);
                block(els, c);
            }
        }
    }
    for it in &mut f.items {
        if let Item::Stmt(s) = it {
            stmt(s, consts);
        }
    }
    for n in &mut f.nodes {
        block(&mut n.lambda_mut().body, consts);
        for b in n.kind.comb_mut().bodies_mut() {
            fix_literals(b, consts);
        }
    }
}

/// Gives every `if` branch the function's variable table, and each `if`
/// the arrays (`inputs`) and scalars (its worker's captures) its branches
/// read from outside; inner `if`s first, since what they read is read by
/// the branch around them.
fn finish_branches(f: &mut Function) {
    let vars = f.vars.clone();
    for n in &mut f.nodes {
        let c = n.kind.comb_mut();
        if c.bodies().is_empty() {
            continue;
        }
        let mut free: Vec<VarId> = vec![];
        for b in c.bodies_mut() {
            b.vars = vars.clone();
            finish_branches(b);
            for v in b.free_vars() {
                if !free.contains(&v) {
                    free.push(v);
                }
            }
        }
        free.sort();
        if let NodeKind::If(i) = &mut n.kind {
            i.inputs = free.iter().copied().filter(|v| vars[v.0 as usize].ty.is_array()).collect();
            i.f.captures = free.iter().copied().filter(|v| !vars[v.0 as usize].ty.is_array()).collect();
        }
    }
}

/// Replaces variables bound to a constant or to another variable by what
/// they copy, and drops those statements, so dumps show `x + 1.0`.
fn propagate_copies(f: &mut Function) {
    propagate(f, &mut Default::default());
}

/// Copy propagation in a function or a branch, with the copies made before it.
fn propagate(f: &mut Function, map: &mut std::collections::HashMap<VarId, Operand>) {
    use std::collections::HashMap;
    fn sub(map: &HashMap<VarId, Operand>, o: &mut Operand) {
        while let Operand::Var(v) = *o {
            match map.get(&v) {
                Some(n) => *o = *n,
                None => break,
            }
        }
    }
    fn sub_var(map: &HashMap<VarId, Operand>, v: &mut VarId) {
        if let Some(Operand::Var(n)) = map.get(v) {
            *v = *n;
            sub_var(map, v);
        }
    }
    fn rhs(map: &HashMap<VarId, Operand>, r: &mut Rhs) {
        match r {
            Rhs::Copy(o) | Rhs::Unary(_, o) | Rhs::Cast(_, o) => sub(map, o),
            Rhs::Binary(_, a, b) => {
                sub(map, a);
                sub(map, b)
            }
            Rhs::Builtin(_, a) => a.iter_mut().for_each(|o| sub(map, o)),
            Rhs::Select(a, b, c) => {
                sub(map, a);
                sub(map, b);
                sub(map, c)
            }
            Rhs::Index(a, ix) => {
                sub_var(map, a);
                ix.iter_mut().for_each(|o| sub(map, o))
            }
            Rhs::Length(a, _) => sub_var(map, a),
            Rhs::SizeProduct(a, b) => {
                sub(map, a);
                sub(map, b)
            }
        }
    }
    fn block(map: &mut HashMap<VarId, Operand>, b: &mut Block) {
        let stmts = std::mem::take(&mut b.stmts);
        for mut s in stmts {
            if let Some(s) = stmt(map, &mut s) {
                b.stmts.push(s);
            }
        }
        b.results.iter_mut().for_each(|o| sub(map, o));
    }
    fn stmt(map: &mut HashMap<VarId, Operand>, s: &mut Stmt) -> Option<Stmt> {
        match s {
            Stmt::Assign { dst, rhs: r, .. } => {
                rhs(map, r);
                if let Rhs::Copy(o) = r {
                    map.insert(*dst, *o);
                    return None;
                }
            }
            Stmt::If { cond, then, els, .. } => {
                sub(map, cond);
                block(map, then);
                block(map, els);
            }
        }
        Some(s.clone())
    }
    let items = std::mem::take(&mut f.items);
    for it in items {
        match it {
            Item::Stmt(mut s) => {
                if let Some(s) = stmt(map, &mut s) {
                    f.items.push(Item::Stmt(s));
                }
            }
            Item::Node(id) => {
                let n = &mut f.nodes[id.0 as usize];
                n.kind.comb_mut().operands_mut(&mut |v| sub_var(map, v), &mut |o| sub(map, o));
                for b in n.kind.comb_mut().bodies_mut() {
                    propagate(b, map);
                }
                block(map, &mut n.lambda_mut().body);
                let l = n.lambda_mut();
                l.captures = captures_of(&l.body, &l.params);
                f.items.push(Item::Node(id));
            }
        }
    }
    f.results.iter_mut().for_each(|l| sub(map, &mut l.value));
    for (vs, _) in &mut f.same_size {
        vs.iter_mut().for_each(|v| sub_var(map, v));
    }
}

/// The variables a block uses that it neither defines nor receives as parameters.
pub fn captures_of(b: &Block, params: &[VarId]) -> Vec<VarId> {
    let mut defined: HashSet<VarId> = params.iter().copied().collect();
    let mut out: Vec<VarId> = vec![];
    let results = b.results.iter().filter_map(|o| if let Operand::Var(v) = o { Some(*v) } else { None });
    let uses: Vec<(Vec<VarId>, Vec<VarId>)> =
        b.stmts.iter().map(|s| (stmt_uses(s), stmt_defs(s))).chain(std::iter::once((results.collect(), vec![]))).collect();
    for (used, defs) in uses {
        for v in used {
            if !defined.contains(&v) && !out.contains(&v) {
                out.push(v);
            }
        }
        defined.extend(defs);
    }
    out.sort();
    out
}
