//! Warnings: things that compile but are likely mistakes. Run on the syntax
//! tree of a program that type-checked, so every name resolves.
//!
//! - a file with no `export fn` (the object file defines no symbol);
//! - a `let` or a parameter that is never used (names beginning with `_`
//!   are exempt, as is `_` itself);
//! - a `fold`, scan, `scatter` or `permute` whose operator is a built-in
//!   that is not associative (`-`, `/`, `%`, shifts, `pow`, also
//!   written as `|a, b| a - b`): LANGUAGE.md lets afc rebracket these
//!   operators, so the result would depend on how it does.
//!
//! What afc trusts: an operator written as any other lambda or function is
//! taken to be associative as LANGUAGE.md requires; afc does not try to
//! prove it.

use afc_ir::ast::{self, BinOp, Block, Expr, ExprKind, Pat};
use super::scopes::Scopes;
use afc_ir::diag::{Diagnostic, Span};

pub fn warnings(prog: &ast::Program) -> Vec<Diagnostic> {
    let mut out = vec![];
    if !prog.items.iter().any(|it| it.exported) {
        let at = prog.items.first().map(|it| it.name.span).unwrap_or_default();
        out.push(
            Diagnostic::warning(at, "no exported function: the object file will define no symbol")
                .with_note("mark the functions C should call with `export fn`"),
        );
    }
    for it in &prog.items {
        let Some(body) = &it.body else { continue };
        let mut l = Lint { scopes: Scopes::default(), out: &mut out };
        for (p, _) in &it.params {
            l.bind(&p.name, p.span, Kind::Param);
        }
        l.block(body);
        l.close(0);
    }
    out.sort_by_key(|d| d.span.start);
    out
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Param,
    Let,
    /// A lambda's parameter: `|x| 1` is normal, never warned about.
    Lambda,
}

struct Binding {
    name: String,
    span: Span,
    kind: Kind,
    used: bool,
}

struct Lint<'a> {
    scopes: Scopes<Binding>,
    out: &'a mut Vec<Diagnostic>,
}

impl Lint<'_> {
    fn bind(&mut self, name: &str, span: Span, kind: Kind) {
        self.scopes.push(name.to_string(), Binding { name: name.to_string(), span, kind, used: false });
    }

    fn use_name(&mut self, name: &str) {
        if let Some(b) = self.scopes.get_mut(name) {
            b.used = true;
        }
    }

    /// Ends the bindings made since `mark`, warning about the unused ones.
    fn close(&mut self, mark: usize) {
        for (_, b) in self.scopes.drain_from(mark) {
            if b.used || b.name.starts_with('_') || b.kind == Kind::Lambda {
                continue;
            }
            let (what, hint) = match b.kind {
                Kind::Param => ("parameter", format!("name it `_{}` if it is unused on purpose", b.name)),
                _ => ("let", format!("remove it, or name it `_{}` if it is unused on purpose", b.name)),
            };
            self.out.push(Diagnostic::warning(b.span, format!("unused {} '{}'", what, b.name)).with_note(hint));
        }
    }

    fn pat(&mut self, p: &Pat) {
        match p {
            Pat::Name(i) => self.bind(&i.name, i.span, Kind::Let),
            Pat::Wild(_) => {}
            Pat::Tuple(ps, _) => ps.iter().for_each(|p| self.pat(p)),
        }
    }

    fn block(&mut self, b: &Block) {
        let mark = self.scopes.len();
        for l in &b.lets {
            self.expr(&l.value);
            self.pat(&l.pat);
        }
        self.expr(&b.result);
        self.close(mark);
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Lit(_) | ExprKind::Section(_) => {}
            ExprKind::Name(n) => self.use_name(n),
            ExprKind::Tuple(es) => es.iter().for_each(|e| self.expr(e)),
            ExprKind::Field(e, _) | ExprKind::Unary(_, e) => self.expr(e),
            ExprKind::Binary(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Call(f, args) => {
                self.use_name(&f.name);
                if let (true, Some(op)) = (takes_associative(&f.name), args.first()) {
                    self.operator(&f.name, op);
                }
                args.iter().for_each(|e| self.expr(e));
            }
            ExprKind::Lambda(ps, body) => {
                let mark = self.scopes.len();
                for p in ps {
                    self.bind(&p.name, p.span, Kind::Lambda);
                }
                self.expr(body);
                self.close(mark);
            }
            ExprKind::Index(a, ix) => {
                self.expr(a);
                ix.iter().for_each(|e| self.expr(e));
            }
            ExprKind::If(c, t, f) => {
                self.expr(c);
                self.block(t);
                self.block(f);
            }
            ExprKind::Block(b) => self.block(b),
        }
    }

    /// Warns when a combinator that may rebracket its operator is given a
    /// built-in one that is not associative.
    fn operator(&mut self, comb: &str, op: &Expr) {
        let Some(name) = non_associative(op) else { return };
        self.out.push(
            Diagnostic::warning(op.span, format!("the operator of this {}, `{}`, is not associative", comb, name)).with_note(
                "afc may rebracket the operators of fold, the scans, scatter and permute (docs/reference.md), \
                 so the result can differ from a left-to-right evaluation; for a sum of differences, map then fold (+)",
            ),
        );
    }
}

/// The combinators whose first argument is an operator afc may rebracket.
fn takes_associative(name: &str) -> bool {
    matches!(name, "fold" | "scanl" | "prescanl" | "scanr" | "scatter" | "permute")
}

fn non_associative_op(op: BinOp) -> bool {
    matches!(op, BinOp::Sub | BinOp::Div | BinOp::Rem | BinOp::Shl | BinOp::Shr)
}

/// The built-in operator `op` names, when it is not associative: a section
/// `(-)`, a name `pow`, or a lambda that only applies one to its two
/// parameters in order.
fn non_associative(op: &Expr) -> Option<String> {
    let named = |n: &str| matches!(n, "pow").then(|| n.to_string());
    match &op.kind {
        ExprKind::Section(b) if non_associative_op(*b) => Some(b.symbol().to_string()),
        ExprKind::Name(n) => named(n),
        ExprKind::Lambda(ps, body) if ps.len() == 2 => {
            let is = |e: &Expr, p: &ast::Ident| matches!(&e.kind, ExprKind::Name(n) if *n == p.name);
            match &body.kind {
                ExprKind::Binary(b, x, y) if non_associative_op(*b) && is(x, &ps[0]) && is(y, &ps[1]) => Some(b.symbol().to_string()),
                ExprKind::Call(f, args) if args.len() == 2 && is(&args[0], &ps[0]) && is(&args[1], &ps[1]) => named(&f.name),
                _ => None,
            }
        }
        _ => None,
    }
}
