//! Reads the text `print` writes back into loop IR, so that a hand-written
//! loop nest can be fed to the verifier and the back end (`afc FILE.lir`).
//! Variables are `%name_id`: the id after the last `_` is the variable's
//! number, and its type is given where it is defined (`%x_3: f64`).
//! Locations (`@"prog.acc:3:9"`) become spans of their own.

use super::*;
use crate::ast::{BinOp, UnOp};
use crate::labelled::{Const, Rhs, VarTy};
use crate::types::Prim;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Var(String, u32),
    Str(String),
    Num(Const),
    /// An integer literal with no suffix and no sign (counts, dimensions).
    Int(u64),
    Punct(&'static str),
    Eof,
}

struct Token {
    tok: Tok,
    line: usize,
    col: usize,
}

const PUNCT: [&str; 31] = [
    "->", "<-", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "(", ")", "[", "]", "{", "}", ",", ":", "=", "|", "<", ">", ";", ".", "@", "+", "-", "*", "/", "&", "^",
];

fn lex(text: &str) -> Result<Vec<Token>, String> {
    let b = text.as_bytes();
    let mut out = vec![];
    let (mut i, mut line, mut line_start) = (0usize, 1usize, 0usize);
    while i < b.len() {
        let c = b[i];
        let col = i - line_start + 1;
        let at = |tok| Token { tok, line, col };
        if c == b'\n' {
            line += 1;
            line_start = i + 1;
            i += 1;
            continue;
        }
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if text[i..].starts_with("//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let ident_char = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'$';
        if c == b'%' && i + 1 < b.len() && ident_char(b[i + 1]) {
            let s = i + 1;
            i += 1;
            while i < b.len() && ident_char(b[i]) {
                i += 1;
            }
            let full = &text[s..i];
            let (name, id) = full.rsplit_once('_').ok_or_else(|| format!("line {} col {}: variable %{} has no _id suffix", line, col, full))?;
            let id: u32 = id.parse().map_err(|_| format!("line {} col {}: variable %{} has no numeric id after its last '_'", line, col, full))?;
            out.push(at(Tok::Var(name.to_string(), id)));
            continue;
        }
        if c == b'%' {
            out.push(at(Tok::Punct("%")));
            i += 1;
            continue;
        }
        if c == b'"' {
            let mut s = String::new();
            i += 1;
            loop {
                if i >= b.len() {
                    return Err(format!("line {} col {}: unterminated string", line, col));
                }
                let ch = text[i..].chars().next().unwrap();
                i += ch.len_utf8();
                match ch {
                    '"' => break,
                    '\\' => {
                        let e = text[i..].chars().next().ok_or_else(|| format!("line {} col {}: unterminated string", line, col))?;
                        i += e.len_utf8();
                        match e {
                            'n' => s.push('\n'),
                            't' => s.push('\t'),
                            'r' => s.push('\r'),
                            '0' => s.push('\0'),
                            '\\' | '"' | '\'' => s.push(e),
                            'u' => {
                                let close = text[i..].find('}').ok_or_else(|| format!("line {} col {}: bad \\u escape", line, col))?;
                                let hex = &text[i + 1..i + close];
                                let v = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32).ok_or_else(|| format!("line {} col {}: bad \\u escape", line, col))?;
                                s.push(v);
                                i += close + 1;
                            }
                            other => return Err(format!("line {} col {}: unknown escape \\{}", line, col, other)),
                        }
                    }
                    ch => s.push(ch),
                }
            }
            out.push(at(Tok::Str(s)));
            continue;
        }
        // Numbers, with a sign only when it touches the digits (`-5`; the
        // printer writes binary minus with spaces around it).
        let rest = |k: usize| text.get(k..).unwrap_or("");
        let special = |t: &str| (t.starts_with("inf") || t.starts_with("NaN")) && !t[3..].starts_with(|ch: char| ch.is_ascii_alphanumeric() && ch != 'f');
        let neg = c == b'-' && (b.get(i + 1).is_some_and(|d| d.is_ascii_digit()) || special(rest(i + 1)));
        if c.is_ascii_digit() || neg || special(rest(i)) {
            let s = i;
            if neg {
                i += 1;
            }
            while i < b.len() {
                let ch = b[i];
                let exponent_sign = (ch == b'-' || ch == b'+') && matches!(b[i - 1], b'e' | b'E') && b[s..i - 1].iter().all(|d| d.is_ascii_digit() || *d == b'.' || *d == b'-');
                if ch.is_ascii_alphanumeric() || ch == b'.' || exponent_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            let word = &text[s..i];
            out.push(at(number(word).ok_or_else(|| format!("line {} col {}: malformed number '{}'", line, col, word))?));
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            if i < b.len() && b[i] == b'\'' {
                i += 1;
            }
            out.push(at(Tok::Ident(text[s..i].to_string())));
            continue;
        }
        match PUNCT.iter().find(|p| text[i..].starts_with(**p)) {
            Some(p) => {
                out.push(at(Tok::Punct(p)));
                i += p.len();
            }
            None => return Err(format!("line {} col {}: unexpected character '{}'", line, col, text[i..].chars().next().unwrap())),
        }
    }
    out.push(Token { tok: Tok::Eof, line, col: i - line_start + 1 });
    Ok(out)
}

fn number(w: &str) -> Option<Tok> {
    let (body, suffix) = ["i32", "i64", "f32", "f64"].iter().find_map(|s| w.strip_suffix(s).map(|b| (b, Some(*s)))).unwrap_or((w, None));
    let float_text = |b: &str| -> Option<f64> {
        match b {
            "inf" => Some(f64::INFINITY),
            "-inf" => Some(f64::NEG_INFINITY),
            "NaN" | "-NaN" => Some(f64::NAN),
            _ => b.parse().ok(),
        }
    };
    let is_float_text = body.contains(['.', 'e', 'E']) && !body.starts_with("0x") || body.ends_with("inf") || body.ends_with("NaN");
    Some(match suffix {
        Some("i32") => Tok::Num(Const::I32(body.parse().ok()?)),
        Some("i64") => Tok::Num(Const::I64(body.parse().ok()?)),
        Some("f32") => Tok::Num(Const::F32(float_text(body)? as f32)),
        Some("f64") => Tok::Num(Const::F64(float_text(body)?)),
        _ if is_float_text => Tok::Num(Const::F64(float_text(body)?)),
        _ if !body.starts_with('-') => Tok::Int(body.parse().ok()?),
        _ => Tok::Num(Const::I64(body.parse().ok()?)),
    })
}

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    /// Per function: every variable by id, with its name and type once seen.
    vars: Vec<Option<(String, Option<VarTy>)>>,
    locations: IndexMap<Span, String>,
    next_span: usize,
}

type R<T> = Result<T, String>;

impl Parser {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }
    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)].tok
    }
    fn err<T>(&self, what: &str) -> R<T> {
        let t = &self.toks[self.pos];
        let found = match &t.tok {
            Tok::Ident(s) => format!("'{}'", s),
            Tok::Var(n, i) => format!("'%{}_{}'", n, i),
            Tok::Str(s) => format!("{:?}", s),
            Tok::Num(c) => format!("'{}'", c),
            Tok::Int(i) => format!("'{}'", i),
            Tok::Punct(p) => format!("'{}'", p),
            Tok::Eof => "the end of the input".into(),
        };
        Err(format!("line {} col {}: expected {}, found {}", t.line, t.col, what, found))
    }
    fn bump(&mut self) -> Tok {
        let t = self.toks[self.pos].tok.clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }
    fn is(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p) || matches!(self.peek(), Tok::Ident(q) if q == p)
    }
    fn eat(&mut self, p: &str) -> bool {
        if self.is(p) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn expect(&mut self, p: &str) -> R<()> {
        if self.eat(p) {
            Ok(())
        } else {
            self.err(&format!("'{}'", p))
        }
    }
    fn ident(&mut self) -> R<String> {
        match self.peek().clone() {
            Tok::Ident(s) => {
                self.bump();
                Ok(s)
            }
            _ => self.err("a name"),
        }
    }
    fn string(&mut self) -> R<String> {
        match self.peek().clone() {
            Tok::Str(s) => {
                self.bump();
                Ok(s)
            }
            _ => self.err("a string"),
        }
    }
    fn int(&mut self) -> R<u64> {
        match self.peek().clone() {
            Tok::Int(i) => {
                self.bump();
                Ok(i)
            }
            _ => self.err("a number"),
        }
    }

    /// A variable reference; records its name.
    fn var(&mut self) -> R<VarId> {
        match self.peek().clone() {
            Tok::Var(name, id) => {
                let here = (self.toks[self.pos].line, self.toks[self.pos].col);
                self.bump();
                let i = id as usize;
                if self.vars.len() <= i {
                    self.vars.resize(i + 1, None);
                }
                match &self.vars[i] {
                    Some((n, _)) if *n != name => {
                        return Err(format!("line {} col {}: %{}_{} reuses the id of %{}_{}", here.0, here.1, name, id, n, id));
                    }
                    Some(_) => {}
                    None => self.vars[i] = Some((name, None)),
                }
                Ok(VarId(id))
            }
            _ => self.err("a variable (%name_id)"),
        }
    }
    fn ty(&mut self) -> R<VarTy> {
        let mut rank = 0u8;
        while self.eat("[") {
            rank += 1;
        }
        let name = self.ident()?;
        let p = Prim::from_name(&name).ok_or_else(|| format!("unknown type '{}'", name))?;
        for _ in 0..rank {
            self.expect("]")?;
        }
        Ok(if rank == 0 { VarTy::Scalar(p) } else { VarTy::Array(rank, p) })
    }
    /// `%x_3: TYPE`, a definition.
    fn typed(&mut self) -> R<VarId> {
        let v = self.var()?;
        self.expect(":")?;
        let t = self.ty()?;
        let slot = self.vars[v.0 as usize].as_mut().unwrap();
        match slot.1 {
            Some(old) if old != t => return Err(format!("%{}_{} is given two types", slot.0, v.0)),
            _ => slot.1 = Some(t),
        }
        Ok(v)
    }
    fn list<T>(&mut self, open: &str, close: &str, mut item: impl FnMut(&mut Self) -> R<T>) -> R<Vec<T>> {
        self.expect(open)?;
        let mut out = vec![];
        if self.eat(close) {
            return Ok(out);
        }
        loop {
            out.push(item(self)?);
            if self.eat(close) {
                return Ok(out);
            }
            self.expect(",")?;
        }
    }
    /// `[order N] of`, the middle of a label's definition.
    fn order_of(&mut self) -> R<u32> {
        self.expect("[")?;
        self.expect("order")?;
        let order = self.int()? as u32;
        self.expect("]")?;
        self.expect("of")?;
        Ok(order)
    }

    fn vars_in(&mut self, open: &str, close: &str) -> R<Vec<VarId>> {
        self.list(open, close, |p| p.var())
    }
    fn typed_in(&mut self, open: &str, close: &str) -> R<Vec<VarId>> {
        self.list(open, close, |p| p.typed())
    }
    fn operand(&mut self) -> R<Operand> {
        match self.peek().clone() {
            Tok::Var(..) => Ok(Operand::Var(self.var()?)),
            Tok::Num(c) => {
                self.bump();
                Ok(Operand::Const(c))
            }
            Tok::Int(i) => {
                self.bump();
                Ok(Operand::Const(Const::I64(i64::try_from(i).map_err(|_| "integer constant out of range".to_string())?)))
            }
            Tok::Ident(s) if s == "true" || s == "false" => {
                self.bump();
                Ok(Operand::Const(Const::Bool(s == "true")))
            }
            _ => self.err("an operand"),
        }
    }
    fn operands_in(&mut self, open: &str, close: &str) -> R<Vec<Operand>> {
        self.list(open, close, |p| p.operand())
    }
    /// `@"loc"`, if present: a fresh span standing for that location.
    fn loc(&mut self) -> R<Span> {
        if !self.eat("@") {
            return Ok(Span::default());
        }
        let l = self.string()?;
        self.next_span += 1;
        let s = Span::new(self.next_span, self.next_span + 1);
        self.locations.insert(s, l);
        Ok(s)
    }
    fn size(&mut self) -> R<SizeExpr> {
        if self.eat("|") {
            let v = self.var()?;
            self.expect("|")?;
            let d = if self.eat(".") { self.int()? as u8 } else { 0 };
            return Ok(SizeExpr::Dim(v, d));
        }
        Ok(SizeExpr::Scalar(self.operand()?))
    }

    fn rhs(&mut self) -> R<Rhs> {
        if let Tok::Ident(name) = self.peek().clone() {
            if matches!(self.peek_at(1), Tok::Punct("(")) {
                self.bump();
                if let Some(b) = super::print::builtin_of(&name) {
                    return Ok(Rhs::Builtin(b, self.operands_in("(", ")")?));
                }
                if let Some(p) = Prim::from_name(&name) {
                    let a = self.operands_in("(", ")")?;
                    return match a.as_slice() {
                        [o] => Ok(Rhs::Cast(p, *o)),
                        _ => Err(format!("{}() takes one operand", name)),
                    };
                }
                return match name.as_str() {
                    "select" => match self.operands_in("(", ")")?.as_slice() {
                        [c, a, b] => Ok(Rhs::Select(*c, *a, *b)),
                        _ => Err("select() takes three operands".into()),
                    },
                    "size_product" => match self.operands_in("(", ")")?.as_slice() {
                        [a, b] => Ok(Rhs::SizeProduct(*a, *b)),
                        _ => Err("size_product() takes two operands".into()),
                    },
                    "length" => {
                        self.expect("(")?;
                        let a = self.var()?;
                        self.expect(",")?;
                        let d = self.int()? as u8;
                        self.expect(")")?;
                        Ok(Rhs::Length(a, d))
                    }
                    _ => Err(format!("unknown function '{}'", name)),
                };
            }
            if name == "neg" || name == "not" {
                self.bump();
                let o = self.operand()?;
                return Ok(Rhs::Unary(if name == "neg" { UnOp::Neg } else { UnOp::Not }, o));
            }
        }
        let a = self.operand()?;
        if let (Operand::Var(v), true) = (a, self.is("[")) {
            return Ok(Rhs::Index(v, self.operands_in("[", "]")?));
        }
        let op = match self.peek() {
            Tok::Punct(p) => BinOp::from_symbol(p),
            _ => None,
        };
        match op {
            Some(op) => {
                self.bump();
                let b = self.operand()?;
                Ok(Rhs::Binary(op, a, b))
            }
            None => Ok(Rhs::Copy(a)),
        }
    }

    /// One statement: `%x_1: T = RHS [@loc]` or `%a_1: T, … = if c { … } else { … }`.
    fn stmt(&mut self) -> R<Stmt> {
        let mut dsts = vec![self.typed()?];
        while self.eat(",") {
            dsts.push(self.typed()?);
        }
        self.expect("=")?;
        if self.eat("if") {
            let cond = self.operand()?;
            self.expect("{")?;
            let then = self.block()?;
            self.expect("}")?;
            self.expect("else")?;
            self.expect("{")?;
            let els = self.block()?;
            self.expect("}")?;
            let span = self.loc()?;
            return Ok(Stmt::If { dsts, cond, then, els, span });
        }
        if dsts.len() != 1 {
            return Err("only an if defines several variables".into());
        }
        let rhs = self.rhs()?;
        let span = self.loc()?;
        Ok(Stmt::Assign { dst: dsts[0], rhs, span })
    }

    /// Statements up to `yield operands`.
    fn block(&mut self) -> R<Block> {
        let mut stmts = vec![];
        while !self.is("yield") {
            stmts.push(self.stmt()?);
        }
        self.expect("yield")?;
        let mut results = vec![];
        if !self.is("}") {
            results.push(self.operand()?);
            while self.eat(",") {
                results.push(self.operand()?);
            }
        }
        Ok(Block { stmts, results })
    }

    fn lambda(&mut self) -> R<Lambda> {
        let params = self.typed_in("|", "|")?;
        let captures = if self.eat("captures") { self.vars_in("[", "]")? } else { vec![] };
        self.expect("{")?;
        let body = self.block()?;
        self.expect("}")?;
        Ok(Lambda { params, body, captures })
    }

    /// `chain`, `lanes K` or `tree K` (`Accumulate`'s printed form).
    fn accumulate(&mut self) -> R<Accumulate> {
        let how = self.ident()?;
        let make = match how.as_str() {
            "chain" => return Ok(Accumulate::Chain),
            "lanes" => Accumulate::Lanes,
            "tree" => Accumulate::Tree,
            other => return Err(format!("unknown accumulation '{}' (chain, lanes K, tree K)", other)),
        };
        Ok(make(u32::try_from(self.int()?).map_err(|_| format!("a {} count out of range", how))?))
    }

    fn state(&mut self) -> R<StateOwner> {
        self.expect("state")?;
        self.expect("per")?;
        if self.eat("nest") {
            Ok(None)
        } else {
            Ok(Some(self.var()?))
        }
    }

    fn leaf(&mut self) -> R<Body> {
        let order = if self.eat("Backwards") {
            1
        } else if self.eat("AtGathered") {
            self.int()? as u32
        } else {
            0
        };
        let kind = self.ident()?;
        let name = self.string()?;
        self.expect(":")?;
        let l = match kind.as_str() {
            "OneToOne" => {
                let outs = self.typed_in("(", ")")?;
                self.expect("<-")?;
                let reads = self.vars_in("(", ")")?;
                LoopBody::OneToOne { name, reads, f: self.lambda()?, outs }
            }
            "FromIndex" => {
                let outs = self.typed_in("(", ")")?;
                LoopBody::FromIndex { name, f: self.lambda()?, outs }
            }
            "ManyToOne" => {
                let results = self.typed_in("(", ")")?;
                self.expect("<-")?;
                self.expect("fold")?;
                let init = self.operands_in("(", ")")?;
                self.expect("over")?;
                let reads = self.vars_in("(", ")")?;
                self.expect("[")?;
                let acc = self.accumulate()?;
                self.expect(",")?;
                let state = self.state()?;
                self.expect("]")?;
                LoopBody::ManyToOne { name, init, reads, op: self.lambda()?, results, state, acc }
            }
            "Filter" => {
                let outs = self.typed_in("(", ")")?;
                self.expect("<-")?;
                let reads = self.vars_in("(", ")")?;
                self.expect(",")?;
                self.expect("count")?;
                let count = self.typed()?;
                self.expect("[")?;
                let write = match self.ident()?.as_str() {
                    "branch" => FilterWrite::Branch,
                    "compact" => FilterWrite::Compact,
                    "compress" => FilterWrite::Compress(u32::try_from(self.int()?).map_err(|_| "a compress width out of range".to_string())?),
                    other => return Err(format!("unknown filter write '{}' (branch, compact, compress W)", other)),
                };
                self.expect(",")?;
                let state = self.state()?;
                let count_read = !self.eat(",");
                if !count_read {
                    self.expect("count")?;
                    self.expect("unread")?;
                }
                self.expect("]")?;
                LoopBody::Filter { name, reads, p: self.lambda()?, outs, count, state, write, count_read }
            }
            "Scan" => {
                let outs = self.typed_in("(", ")")?;
                self.expect("<-")?;
                let dir = match self.ident()?.as_str() {
                    "scanl" => ScanKind::Inclusive,
                    "prescanl" => ScanKind::Exclusive,
                    "scanr" => ScanKind::Right,
                    other => return Err(format!("unknown scan '{}'", other)),
                };
                let init = self.operands_in("(", ")")?;
                self.expect("over")?;
                let reads = self.vars_in("(", ")")?;
                self.expect("[")?;
                let totals = if self.eat("totals") {
                    let how = self.accumulate()?;
                    self.expect(",")?;
                    how
                } else {
                    Accumulate::Chain
                };
                let state = self.state()?;
                self.expect("]")?;
                LoopBody::Scan { name, dir, init, reads, op: self.lambda()?, outs, state, totals }
            }
            "Reverse" => {
                let outs = self.typed_in("(", ")")?;
                self.expect("<-")?;
                LoopBody::Reverse { name, reads: self.vars_in("(", ")")?, outs }
            }
            "Gather" => {
                let outs = self.typed_in("(", ")")?;
                self.expect("<-")?;
                let source = self.vars_in("(", ")")?;
                let index = self.vars_in("[", "]")?;
                LoopBody::Gather { name, index, source, outs, span: self.loc()? }
            }
            "Transpose" => {
                let outs = self.typed_in("(", ")")?;
                self.expect("<-")?;
                LoopBody::Transpose { name, source: self.vars_in("(", ")")?, outs }
            }
            "Scatter" => {
                let outs = self.typed_in("(", ")")?;
                self.expect("=")?;
                self.expect("copy")?;
                self.expect("of")?;
                let dest = self.vars_in("(", ")")?;
                self.expect(";")?;
                self.expect("at")?;
                let mut src = self.vars_in("(", ")")?;
                let dims = src.len();
                self.expect("combine")?;
                src.extend(self.vars_in("(", ")")?);
                let span = self.loc()?;
                LoopBody::Scatter { name, dest, src, dims, op: self.lambda()?, outs, span }
            }
            "Cross" => {
                let outs = self.typed_in("(", ")")?;
                self.expect("<-")?;
                let first = self.vars_in("(", ")")?;
                self.expect(",")?;
                let second = self.vars_in("(", ")")?;
                let at = if self.eat("at") {
                    let i = self.var()?;
                    self.expect(",")?;
                    Some((i, self.var()?))
                } else {
                    None
                };
                LoopBody::Cross { name, first, second, outs, at }
            }
            other => return Err(format!("unknown loop body '{}'", other)),
        };
        Ok(Body::Leaf(l, order))
    }

    fn body(&mut self) -> R<Body> {
        let kw = match self.peek() {
            Tok::Ident(s) => s.clone(),
            _ => return self.err("a loop body"),
        };
        match kw.as_str() {
            "Before" | "Before'" => {
                self.bump();
                let temps = self.vars_in("[", "]")?;
                self.expect("{")?;
                let first = Box::new(self.body()?);
                let then = Box::new(self.body()?);
                self.expect("}")?;
                Ok(if kw == "Before" { Body::Before { temps, first, then } } else { Body::BeforeKeep { temps, first, then } })
            }
            "Besides" => {
                self.bump();
                self.expect("{")?;
                let a = Box::new(self.body()?);
                let b = Box::new(self.body()?);
                self.expect("}")?;
                Ok(Body::Besides(a, b))
            }
            "When" => {
                self.bump();
                let temps = self.vars_in("[", "]")?;
                self.expect("{")?;
                let filter = Box::new(self.body()?);
                self.expect("}")?;
                self.expect("then")?;
                self.expect("{")?;
                let then = Box::new(self.body()?);
                self.expect("}")?;
                Ok(Body::When { temps, filter, then })
            }
            "For" => Ok(Body::For(Box::new(self.looop()?))),
            _ => self.leaf(),
        }
    }

    fn looop(&mut self) -> R<Loop> {
        self.expect("For")?;
        let index = self.typed()?;
        self.expect("<")?;
        let extent = self.size()?;
        let (mut unroll, mut simd, mut paired, mut parallel_below) = (1, false, false, None);
        loop {
            if self.eat("unroll") {
                unroll = u32::try_from(self.int()?).map_err(|_| "an unroll factor out of range".to_string())?;
            } else if self.eat("simd") {
                simd = true;
            } else if self.eat("paired") {
                paired = true;
            } else if self.eat("parallel") {
                self.expect("below")?;
                parallel_below = Some(self.int()?);
            } else {
                break;
            }
        }
        self.expect("{")?;
        let body = self.body()?;
        self.expect("}")?;
        Ok(Loop { index, extent, unroll, simd, paired, parallel_below, body })
    }

    fn nest(&mut self) -> R<LoopNest> {
        self.expect("nest")?;
        let cluster = self.int()? as usize;
        let parallel = if self.eat("parallel") {
            self.expect("grain")?;
            let grain = self.int()?;
            let aligned = self.eat("aligned");
            let two_pass = self.eat("two");
            if two_pass {
                self.expect("-")?;
                self.expect("pass")?;
            }
            let look_back = self.eat("look");
            if look_back {
                self.expect("-")?;
                self.expect("back")?;
            }
            let partials = self.eat("partials");
            Some(Parallel { grain, aligned, two_pass, look_back, partials })
        } else {
            None
        };
        let outlined = self.eat("outlined");
        let streaming_from = if self.eat("streaming") {
            self.expect("from")?;
            Some(self.int()?)
        } else {
            None
        };
        let registers = if self.eat("registers") { Some(self.int()? as u32) } else { None };
        self.expect("stores")?;
        let stores = self.list("[", "]", |p| {
            let array = p.var()?;
            let mode = if p.eat("streaming") { StoreMode::Streaming } else { StoreMode::Normal };
            Ok(Store { array, mode })
        })?;
        let keeps = if self.eat("keeps") {
            self.list("[", "]", |p| {
                let array = p.var()?;
                let home = if p.eat("in") { p.var()? } else { array };
                Ok(Keep { array, home })
            })?
        } else {
            vec![]
        };
        let span = self.loc()?;
        self.expect("{")?;
        let (mut checks, mut labels) = (vec![], vec![]);
        loop {
            if self.eat("check") {
                let o = self.operand()?;
                self.expect(">=")?;
                if self.int()? != 0 {
                    return Err("a nest checks sizes against 0".into());
                }
                checks.push((o, self.loc()?));
            } else if self.eat("label") {
                let label = self.int()? as u32;
                self.expect("=")?;
                if self.eat("transposed") {
                    let order = self.order_of()?;
                    self.expect("transpose")?;
                    let name = self.string()?;
                    self.expect("reading")?;
                    self.expect("|")?;
                    let source = self.var()?;
                    self.expect("|")?;
                    labels.push(GatherIndex { label, name, index: LabelIndex::Transposed, order, source, span: Span::default(), whole: false });
                    continue;
                }
                let index = LabelIndex::Arrays(if self.is("(") { self.vars_in("(", ")")? } else { vec![self.var()?] });
                let order = self.order_of()?;
                self.expect("gather")?;
                let name = self.string()?;
                self.expect(",")?;
                self.expect("checked")?;
                let whole = self.eat("whole");
                self.expect("against")?;
                self.expect("|")?;
                let source = self.var()?;
                self.expect("|")?;
                let span = self.loc()?;
                labels.push(GatherIndex { label, name, index, order, source, span, whole });
            } else {
                break;
            }
        }
        let root = self.looop()?;
        self.expect("}")?;
        Ok(LoopNest { cluster, root, stores, span, labels, checks, streaming_from, parallel, keeps, registers, outlined })
    }

    fn call(&mut self) -> R<Call> {
        self.expect("call")?;
        let name = self.string()?;
        self.expect("cluster")?;
        let cluster = self.int()? as usize;
        self.expect(":")?;
        let outputs = self.typed_in("(", ")")?;
        self.expect("=")?;
        let callee = match self.ident()?.as_str() {
            "extern" => Callee::Extern,
            "afc" => Callee::Afc,
            other => return Err(format!("a call is 'extern' or 'afc', found '{}'", other)),
        };
        let func = self.ident()?;
        let args = self.operands_in("(", ")")?;
        self.expect("lengths")?;
        let arrays = self.list("[", "]", |p| {
            let leaves = p.vars_in("(", ")")?;
            p.expect("=")?;
            Ok((leaves, p.typed()?))
        })?;
        let checks = self.checks()?;
        let span = self.loc()?;
        Ok(Call { cluster, name, func, callee, args, outputs, arrays, checks, span })
    }

    /// `checks [|%r|.d = size, …]`: dimensions of results checked once they are made.
    fn checks(&mut self) -> R<Vec<(VarId, u8, SizeExpr)>> {
        self.expect("checks")?;
        self.list("[", "]", |p| {
            let SizeExpr::Dim(r, d) = p.size()? else {
                return Err("a check names a dimension of a result: |%r|.d = size".into());
            };
            p.expect("=")?;
            Ok((r, d, p.size()?))
        })
    }

    fn branch(&mut self) -> R<Branch> {
        self.expect("if")?;
        let name = self.string()?;
        self.expect("cluster")?;
        let cluster = self.int()? as usize;
        self.expect(":")?;
        let outputs = self.typed_in("(", ")")?;
        self.expect("=")?;
        self.expect("if")?;
        let cond = self.operand()?;
        let checks = self.checks()?;
        let span = self.loc()?;
        self.expect("{")?;
        let (then, then_results) = self.branch_steps()?;
        self.expect("}")?;
        self.expect("else")?;
        self.expect("{")?;
        let (els, els_results) = self.branch_steps()?;
        self.expect("}")?;
        Ok(Branch { cluster, name, cond, then, then_results, els, els_results, outputs, checks, span })
    }

    /// A branch's steps up to its `yield`.
    fn branch_steps(&mut self) -> R<(Vec<Step>, Vec<Operand>)> {
        let mut steps = vec![];
        while !self.eat("yield") {
            match self.step()? {
                Some(s) => steps.push(s),
                None => return self.err("a step or 'yield'"),
            }
        }
        let mut results = vec![];
        if !self.is("}") {
            results.push(self.operand()?);
            while self.eat(",") {
                results.push(self.operand()?);
            }
        }
        Ok((steps, results))
    }

    /// One step, if one starts here.
    fn step(&mut self) -> R<Option<Step>> {
        Ok(Some(if self.is("check") && matches!(self.peek_at(1), Tok::Ident(s) if s == "room") {
            self.bump();
            self.bump();
            Step::CheckRoom
        } else if self.eat("free") {
            Step::Free(self.vars_in("[", "]")?)
        } else if self.is("nest") {
            Step::Loop(Box::new(self.nest()?))
        } else if self.is("call") {
            Step::Call(self.call()?)
        } else if self.is("if") {
            Step::If(self.branch()?)
        } else if matches!(self.peek(), Tok::Var(..)) {
            Step::Stmt(self.stmt()?)
        } else {
            return Ok(None);
        }))
    }

    fn function(&mut self) -> R<Function> {
        self.vars.clear();
        let exported = !self.eat("internal");
        let recursive = self.eat("recursive");
        self.expect("fn")?;
        let name = self.ident()?;
        let params = self.list("(", ")", |p| {
            let c_name = p.ident()?;
            p.expect("=")?;
            let value = match p.peek() {
                Tok::Var(..) => Operand::Var(p.typed()?),
                _ => p.operand()?,
            };
            Ok(Leaf { c_name, value })
        })?;
        self.expect("->")?;
        let results = self.list("(", ")", |p| {
            let c_name = p.ident()?;
            p.expect("=")?;
            Ok(Leaf { c_name, value: p.operand()? })
        })?;
        let span = self.loc()?;
        self.expect("{")?;
        let (mut sizes, mut capacity, mut same_size, mut steps) = (IndexMap::new(), IndexMap::new(), vec![], vec![]);
        let mut vector_math = None;
        let mut staged = vec![];
        while !self.eat("}") {
            if self.is("size") {
                self.bump();
                let v = self.var()?;
                self.expect("=")?;
                let mut shape = vec![self.size()?];
                while self.eat("x") {
                    shape.push(self.size()?);
                }
                capacity.insert(v, if self.eat("room") { self.size()? } else { shape[0] });
                sizes.insert(v, shape);
            } else if self.is("staged") {
                self.bump();
                staged = self.vars_in("[", "]")?;
            } else if self.is("check") && !matches!(self.peek_at(1), Tok::Ident(s) if s == "room") {
                self.bump();
                self.expect("same")?;
                self.expect("size")?;
                let mut g = vec![self.size()?];
                while self.eat(",") {
                    g.push(self.size()?);
                }
                same_size.push(g);
            } else if self.is("vector") {
                self.bump();
                self.expect("math")?;
                match self.ident()?.as_str() {
                    "libmvec" => vector_math = Some(VectorMath::Libmvec { bits: u32::try_from(self.int()?).map_err(|_| "a vector math width out of range".to_string())? }),
                    other => return Err(format!("unknown vector math library '{}' (libmvec)", other)),
                }
            } else if let Some(step) = self.step()? {
                steps.push(step);
            } else {
                return self.err("'size', 'check', 'vector math', 'staged', 'nest', 'call', 'if', a statement or '}'");
            }
        }
        let mut vars = vec![];
        for (i, v) in self.vars.iter().enumerate() {
            vars.push(match v {
                Some((n, Some(t))) => VarInfo { name: n.clone(), ty: *t, span: Span::default() },
                Some((n, None)) => return Err(format!("fn {}: %{}_{} is used but never defined with a type", name, n, i)),
                // Ids the text never mentions: placeholders nothing refers to.
                None => VarInfo { name: "unused".into(), ty: VarTy::Scalar(Prim::I64), span: Span::default() },
            });
        }
        Ok(Function { name, exported, recursive, params, results, vars, steps, sizes, capacity, same_size, vector_math, staged, locations: std::mem::take(&mut self.locations), span })
    }
}

/// Parses loop IR text (what `print` writes) into a program.
pub fn parse(text: &str) -> Result<Program, String> {
    let toks = lex(text)?;
    let mut p = Parser { toks, pos: 0, vars: vec![], locations: IndexMap::new(), next_span: 0 };
    let mut functions = vec![];
    while *p.peek() != Tok::Eof {
        functions.push(p.function()?);
    }
    Ok(Program { functions })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(number("1.5"), Some(Tok::Num(Const::F64(1.5))));
        assert_eq!(number("-0.0"), Some(Tok::Num(Const::F64(-0.0))));
        assert_eq!(number("inf"), Some(Tok::Num(Const::F64(f64::INFINITY))));
        assert_eq!(number("-inf"), Some(Tok::Num(Const::F64(f64::NEG_INFINITY))));
        assert_eq!(number("2i32"), Some(Tok::Num(Const::I32(2))));
        assert_eq!(number("-7"), Some(Tok::Num(Const::I64(-7))));
        assert_eq!(number("7"), Some(Tok::Int(7)));
        assert_eq!(number("1e300"), Some(Tok::Num(Const::F64(1e300))));
        assert_eq!(number("2.5e-3f32"), Some(Tok::Num(Const::F32(2.5e-3))));
        assert!(matches!(number("NaN"), Some(Tok::Num(Const::F64(x))) if x.is_nan()));
    }

    #[test]
    fn errors_say_where() {
        let e = parse("fn f() -> () {\n  nest x\n}").unwrap_err();
        assert!(e.starts_with("line 2 col 8: expected a number"), "{}", e);
    }
}
