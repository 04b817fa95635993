//! Recursive-descent parser for the grammar of LANGUAGE.md.

use super::lexer::{Tok, Token};
use afc_ir::ast::*;
use afc_ir::diag::{Diagnostic, Span};
use afc_ir::types::Prim;

/// How deeply expressions, types and patterns may nest (parentheses,
/// blocks, calls, operators' operands, `if`s, unary operators): deeper
/// input is refused with a diagnostic rather than recursing without bound.
/// Long flat chains (`a + b + … + z`) do not nest and are not limited.
pub const MAX_NESTING: u32 = 500;

pub fn parse(tokens: Vec<Token>) -> Result<Program, Diagnostic> {
    let mut p = Parser { toks: tokens, pos: 0, depth: 0 };
    let mut items = vec![];
    while p.peek() != &Tok::Eof {
        items.push(p.item()?);
    }
    Ok(Program { items })
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    /// The current nesting depth (MAX_NESTING).
    depth: u32,
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("identifier '{}'", s),
        Tok::Int(..) => "integer literal".into(),
        Tok::Float(..) => "float literal".into(),
        Tok::TupleIndex(i) => format!("tuple index {}", i),
        Tok::Kw(k) => format!("keyword '{}'", k),
        Tok::Punct(p) => format!("'{}'", p),
        Tok::Eof => "end of file".into(),
    }
}

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }
    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)].tok
    }
    fn span(&self) -> Span {
        self.toks[self.pos].span
    }
    fn prev_span(&self) -> Span {
        self.toks[self.pos.saturating_sub(1)].span
    }
    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }
    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p) || matches!(self.peek(), Tok::Kw(k) if *k == p)
    }
    fn eat(&mut self, p: &str) -> bool {
        if self.is(p) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn err_expected(&self, what: &str) -> Diagnostic {
        Diagnostic::error(self.span(), format!("expected {}, found {}", what, describe(self.peek())))
    }
    fn expect(&mut self, p: &str) -> Result<Span, Diagnostic> {
        if self.is(p) {
            return Ok(self.bump().span);
        }
        // A missing terminator is reported right after what it should follow.
        if matches!(p, ";" | ")" | "]" | "}" | ",") && self.pos > 0 {
            let end = self.prev_span().end as usize;
            return Err(Diagnostic::error(Span::new(end, end), format!("expected '{}', found {}", p, describe(self.peek())))
                .with_label(self.span(), format!("found {} here", describe(self.peek()))));
        }
        Err(self.err_expected(&format!("'{}'", p)))
    }
    fn ident(&mut self) -> Result<Ident, Diagnostic> {
        match self.peek().clone() {
            Tok::Ident(name) => {
                let span = self.bump().span;
                Ok(Ident { name, span })
            }
            _ => Err(self.err_expected("a name")),
        }
    }

    fn item(&mut self) -> Result<Item, Diagnostic> {
        let start = self.span();
        let exported = self.eat("export");
        let is_extern = !exported && self.eat("extern");
        self.expect("fn").map_err(|_| self.err_expected("'fn', 'export fn' or 'extern fn'"))?;
        let name = self.ident()?;
        self.expect("(")?;
        let mut params = vec![];
        if !self.is(")") {
            loop {
                let n = self.ident()?;
                self.expect(":")?;
                let t = self.ty()?;
                params.push((n, t));
                if !self.eat(",") {
                    break;
                }
            }
        }
        self.expect(")")?;
        self.expect("->")?;
        let ret = self.ty()?;
        let body = if is_extern {
            self.expect(";")?;
            None
        } else {
            Some(self.block()?)
        };
        Ok(Item { name, exported, body, params, ret, span: start.to(self.prev_span()) })
    }

    /// Runs `f` one nesting level deeper, refusing to go past MAX_NESTING.
    fn nested<T>(&mut self, what: &str, f: impl FnOnce(&mut Self) -> Result<T, Diagnostic>) -> Result<T, Diagnostic> {
        if self.depth >= MAX_NESTING {
            return Err(Diagnostic::error(self.span(), format!("{} nested too deeply (more than {} levels)", what, MAX_NESTING))
                .with_note("split it with `let` bindings"));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn ty(&mut self) -> Result<TypeExpr, Diagnostic> {
        self.nested("type", Self::ty_inner)
    }

    fn ty_inner(&mut self) -> Result<TypeExpr, Diagnostic> {
        let start = self.span();
        if self.eat("[") {
            let mut rank = 1u8;
            while self.eat("[") {
                rank += 1;
            }
            let elem = self.ty()?;
            if matches!(elem, TypeExpr::Array(..)) {
                return Err(Diagnostic::error(elem.span(), "array element types are scalars or tuples")
                    .with_note("[[T]] is a matrix; write the rank with nested brackets around a scalar or tuple type"));
            }
            for _ in 0..rank {
                self.expect("]")?;
            }
            if rank > 3 {
                return Err(Diagnostic::error(start.to(self.prev_span()), "arrays have rank 1, 2 or 3"));
            }
            return Ok(TypeExpr::Array(rank, Box::new(elem), start.to(self.prev_span())));
        }
        if self.eat("(") {
            let mut ts = vec![];
            let mut trailing = false;
            if !self.is(")") {
                loop {
                    ts.push(self.ty()?);
                    if !self.eat(",") {
                        break;
                    }
                    if self.is(")") {
                        trailing = true;
                        break;
                    }
                }
            }
            self.expect(")")?;
            let span = start.to(self.prev_span());
            // `(T)` is T; `(T,)` is a one-tuple, as `(e,)` is in expressions.
            if ts.len() == 1 && !trailing {
                return Ok(ts.pop().unwrap());
            }
            if ts.is_empty() {
                return Err(Diagnostic::error(span, "the empty tuple is not a type"));
            }
            return Ok(TypeExpr::Tuple(ts, span));
        }
        if let Tok::Ident(n) = self.peek().clone() {
            if let Some(p) = Prim::from_name(&n) {
                let span = self.bump().span;
                return Ok(TypeExpr::Prim(p, span));
            }
            return Err(Diagnostic::error(self.span(), format!("unknown type '{}'", n))
                .with_note("types are bool, i32, i64, f32, f64, tuples (T, U) and arrays [T], [[T]], [[[T]]]"));
        }
        Err(self.err_expected("a type"))
    }

    fn block(&mut self) -> Result<Block, Diagnostic> {
        let start = self.expect("{")?;
        let mut lets = vec![];
        while self.is("let") {
            let ls = self.bump().span;
            let pat = self.pat()?;
            let ty = if self.eat(":") { Some(self.ty()?) } else { None };
            self.expect("=")?;
            let value = self.expr()?;
            self.expect(";")?;
            lets.push(Let { pat, ty, value, span: ls.to(self.prev_span()) });
        }
        if self.is("}") {
            return Err(Diagnostic::error(self.span(), "expected an expression: a block ends with the value it yields"));
        }
        if matches!(self.peek(), Tok::Ident(n) if n == "return") {
            return Err(Diagnostic::error(self.span(), "there is no `return`: a block's value is its last expression")
                .with_note("write the value alone at the end of the block, without `return` and `;` (`{ let s = …; s }`)"));
        }
        let result = self.expr()?;
        if self.is(";") {
            return Err(Diagnostic::error(self.span(), "expected '}', found ';'")
                .with_note("the last expression of a block is its value and takes no ';'"));
        }
        self.expect("}")?;
        Ok(Block { lets, result: Box::new(result), span: start.to(self.prev_span()) })
    }

    fn pat(&mut self) -> Result<Pat, Diagnostic> {
        self.nested("pattern", Self::pat_inner)
    }

    fn pat_inner(&mut self) -> Result<Pat, Diagnostic> {
        let start = self.span();
        if self.eat("(") {
            let mut ps = vec![];
            loop {
                ps.push(self.pat()?);
                if !self.eat(",") || self.is(")") {
                    break;
                }
            }
            self.expect(")")?;
            if ps.len() == 1 {
                return Ok(ps.pop().unwrap());
            }
            return Ok(Pat::Tuple(ps, start.to(self.prev_span())));
        }
        let id = self.ident()?;
        if id.name == "_" {
            return Ok(Pat::Wild(id.span));
        }
        Ok(Pat::Name(id))
    }

    pub fn expr(&mut self) -> Result<Expr, Diagnostic> {
        self.binary(0)
    }

    fn binop_at(&self) -> Option<(BinOp, u8)> {
        let t = match self.peek() {
            Tok::Punct(p) => *p,
            _ => return None,
        };
        use BinOp::*;
        Some(match t {
            "||" => (Or, 0),
            "&&" => (And, 1),
            "==" => (Eq, 2),
            "!=" => (Ne, 2),
            "<" => (Lt, 2),
            "<=" => (Le, 2),
            ">" => (Gt, 2),
            ">=" => (Ge, 2),
            "|" => (BitOr, 3),
            "^" => (BitXor, 4),
            "&" => (BitAnd, 5),
            "<<" => (Shl, 6),
            ">>" => (Shr, 6),
            "+" => (Add, 7),
            "-" => (Sub, 7),
            "*" => (Mul, 8),
            "/" => (Div, 8),
            "%" => (Rem, 8),
            _ => return None,
        })
    }

    fn binary(&mut self, min: u8) -> Result<Expr, Diagnostic> {
        let mut lhs = self.unary()?;
        while let Some((op, prec)) = self.binop_at() {
            if prec < min {
                break;
            }
            let op_span = self.bump().span;
            let rhs = self.binary(prec + 1)?;
            if prec == 2 {
                if let Some((op2, 2)) = self.binop_at() {
                    return Err(Diagnostic::error(
                        self.span(),
                        format!("comparison operators do not chain: '{}' after '{}'", op2.symbol(), op.symbol()),
                    )
                    .with_label(op_span, "the first comparison")
                    .with_note("write `a < b && b < c`"));
                }
            }
            let span = lhs.span.to(rhs.span);
            lhs = Expr { kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), span };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr, Diagnostic> {
        self.nested("expression", Self::unary_inner)
    }

    fn unary_inner(&mut self) -> Result<Expr, Diagnostic> {
        let start = self.span();
        let op = if self.is("-") {
            Some(UnOp::Neg)
        } else if self.is("!") {
            Some(UnOp::Not)
        } else {
            None
        };
        if let Some(op) = op {
            self.bump();
            let e = self.unary()?;
            let span = start.to(e.span);
            return Ok(Expr { kind: ExprKind::Unary(op, Box::new(e)), span });
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Result<Expr, Diagnostic> {
        let mut e = self.primary()?;
        loop {
            if self.is(".") {
                self.bump();
                match self.peek().clone() {
                    Tok::TupleIndex(i) => {
                        let s = self.bump().span;
                        let span = e.span.to(s);
                        e = Expr { kind: ExprKind::Field(Box::new(e), i), span };
                    }
                    _ => return Err(self.err_expected("a tuple index after '.'")),
                }
            } else if self.is("[") {
                self.bump();
                let mut ix = vec![self.expr()?];
                while self.eat(",") {
                    ix.push(self.expr()?);
                }
                let end = self.expect("]")?;
                let span = e.span.to(end);
                e = Expr { kind: ExprKind::Index(Box::new(e), ix), span };
            } else {
                return Ok(e);
            }
        }
    }

    fn primary(&mut self) -> Result<Expr, Diagnostic> {
        let start = self.span();
        match self.peek().clone() {
            Tok::Int(v, s) => {
                self.bump();
                Ok(Expr { kind: ExprKind::Lit(Lit::Int(v, s)), span: start })
            }
            Tok::Float(v, s) => {
                self.bump();
                Ok(Expr { kind: ExprKind::Lit(Lit::Float(v, s)), span: start })
            }
            Tok::Kw("true") | Tok::Kw("false") => {
                let b = self.peek() == &Tok::Kw("true");
                self.bump();
                Ok(Expr { kind: ExprKind::Lit(Lit::Bool(b)), span: start })
            }
            Tok::Ident(name) => {
                self.bump();
                if self.is("(") {
                    self.bump();
                    let mut args = vec![];
                    if !self.is(")") {
                        loop {
                            args.push(self.expr()?);
                            if !self.eat(",") {
                                break;
                            }
                        }
                    }
                    let end = self.expect(")")?;
                    return Ok(Expr {
                        kind: ExprKind::Call(Ident { name, span: start }, args),
                        span: start.to(end),
                    });
                }
                Ok(Expr { kind: ExprKind::Name(name), span: start })
            }
            Tok::Punct("(") => {
                // An operator section `(+)`?
                if let Tok::Punct(_) = self.peek_at(1) {
                    if self.peek_at(2) == &Tok::Punct(")") {
                        self.bump();
                        if let Some((op, _)) = self.binop_at() {
                            self.bump();
                            let end = self.expect(")")?;
                            return Ok(Expr { kind: ExprKind::Section(op), span: start.to(end) });
                        }
                        return Err(self.err_expected("an expression or a binary operator"));
                    }
                }
                self.bump();
                let mut es = vec![self.expr()?];
                let mut trailing = false;
                while self.eat(",") {
                    if self.is(")") {
                        trailing = true;
                        break;
                    }
                    es.push(self.expr()?);
                }
                let end = self.expect(")")?;
                if es.len() == 1 && !trailing {
                    let mut e = es.pop().unwrap();
                    e.span = start.to(end);
                    return Ok(e);
                }
                Ok(Expr { kind: ExprKind::Tuple(es), span: start.to(end) })
            }
            Tok::Punct("|") => {
                self.bump();
                let mut ps = vec![self.ident()?];
                while self.eat(",") {
                    ps.push(self.ident()?);
                }
                self.expect("|")?;
                let body = self.expr()?;
                let span = start.to(body.span);
                Ok(Expr { kind: ExprKind::Lambda(ps, Box::new(body)), span })
            }
            Tok::Punct("||") => Err(Diagnostic::error(start, "a worker function takes at least one parameter")),
            Tok::Kw("if") => self.if_expr(),
            Tok::Punct("{") => {
                let b = self.block()?;
                let span = b.span;
                Ok(Expr { kind: ExprKind::Block(b), span })
            }
            _ => Err(self.err_expected("an expression")),
        }
    }

    fn if_expr(&mut self) -> Result<Expr, Diagnostic> {
        let start = self.expect("if")?;
        let c = self.expr_no_block_start()?;
        let then = self.block()?;
        if !self.is("else") {
            return Err(self.err_expected("'else'").with_note("an `if` expression needs both branches"));
        }
        self.bump();
        let els = if self.is("if") {
            let e = self.if_expr()?;
            let span = e.span;
            Block { lets: vec![], result: Box::new(e), span }
        } else {
            self.block()?
        };
        let span = start.to(els.span);
        Ok(Expr { kind: ExprKind::If(Box::new(c), then, els), span })
    }

    /// The condition of an `if`: a `{` there starts the branch, not a block expression.
    fn expr_no_block_start(&mut self) -> Result<Expr, Diagnostic> {
        if self.is("{") {
            return Err(self.err_expected("a condition"));
        }
        self.expr()
    }
}

#[cfg(test)]
mod tests {
    use super::super::lexer::lex;
    use super::*;

    fn parse_str(s: &str) -> Result<Program, Diagnostic> {
        parse(lex(s)?)
    }

    #[test]
    fn parses_normalize2() {
        let p = parse_str(
            "export fn normalize2(xs: [f64]) -> ([f64], [f64]) {
                let sum1 = fold(|a, b| a + b, 0.0, xs);
                let gts = filter(|x| x > 0.0, xs);
                (map(|x| x / sum1, xs), gts)
            }",
        )
        .unwrap();
        assert_eq!(p.items.len(), 1);
        assert_eq!(p.items[0].body.as_ref().unwrap().lets.len(), 2);
    }

    #[test]
    fn comparisons_do_not_chain() {
        let e = parse_str("fn f(a: i64) -> bool { 1 < a < 3 }").unwrap_err();
        assert!(e.message.contains("do not chain"), "{}", e.message);
    }

    #[test]
    fn sections_and_tuples() {
        let p = parse_str("fn f(xs: [i64]) -> (i64, i64) { (fold((+), 0, xs), fold(max, 0, xs)) }").unwrap();
        let body = p.items[0].body.as_ref().unwrap();
        let ExprKind::Tuple(es) = &body.result.kind else { panic!("expected a tuple") };
        let ExprKind::Call(_, args) = &es[0].kind else { panic!("expected a call") };
        assert!(matches!(args[0].kind, ExprKind::Section(BinOp::Add)));
        // `(x)` is a parenthesised expression, `(x,)` a one-tuple.
        let p = parse_str("fn f(x: i64) -> i64 { (x) }").unwrap();
        assert!(matches!(p.items[0].body.as_ref().unwrap().result.kind, ExprKind::Name(_)));
    }

    #[test]
    fn missing_semicolon_points_after_the_expression() {
        let src = "fn f(x: i64) -> i64 { let a = x\n let b = a; b }";
        let e = parse_str(src).unwrap_err();
        assert_eq!(e.span.start as usize, src.find("x\n").unwrap() + 1);
    }
}
