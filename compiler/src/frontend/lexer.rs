//! Splits `.acc` source into tokens with spans.

use afc_ir::diag::{Diagnostic, Span};
use afc_ir::types::Prim;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    Int(u128, Option<Prim>),
    Float(f64, Option<Prim>),
    /// Digits after a `.`: a tuple index.
    TupleIndex(u32),
    Kw(&'static str),
    Punct(&'static str),
    Eof,
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

const KEYWORDS: &[&str] = &["fn", "export", "extern", "let", "if", "else", "true", "false"];
const PUNCTS: &[&str] = &[
    "->", "||", "&&", "==", "!=", "<=", ">=", "<<", ">>", "(", ")", "[", "]", "{", "}", ",", ";", ":", ".", "|", "^",
    "&", "<", ">", "+", "-", "*", "/", "%", "!", "=",
];

pub fn lex(src: &str) -> Result<Vec<Token>, Diagnostic> {
    let b = src.as_bytes();
    let mut i = 0;
    let mut out = vec![];
    let mut after_dot = false;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if src[i..].starts_with("//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if src[i..].starts_with("/*") {
            let start = i;
            match src[i + 2..].find("*/") {
                Some(k) => i = i + 2 + k + 2,
                None => return Err(Diagnostic::error(Span::new(start, start + 2), "unterminated block comment")),
            }
            continue;
        }
        let start = i;
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &src[start..i];
            let tok = match KEYWORDS.iter().find(|k| **k == word) {
                Some(k) => Tok::Kw(k),
                None => Tok::Ident(word.to_string()),
            };
            out.push(Token { tok, span: Span::new(start, i) });
            after_dot = false;
            continue;
        }
        if c.is_ascii_digit() {
            if after_dot {
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                let v: u32 = src[start..i]
                    .parse()
                    .map_err(|_| Diagnostic::error(Span::new(start, i), "tuple index too large"))?;
                out.push(Token { tok: Tok::TupleIndex(v), span: Span::new(start, i) });
                after_dot = false;
                continue;
            }
            out.push(lex_number(src, &mut i)?);
            after_dot = false;
            continue;
        }
        let p = PUNCTS.iter().find(|p| src[i..].starts_with(**p));
        match p {
            Some(p) => {
                i += p.len();
                after_dot = *p == ".";
                out.push(Token { tok: Tok::Punct(p), span: Span::new(start, i) });
            }
            None => {
                let ch = src[i..].chars().next().unwrap();
                return Err(Diagnostic::error(
                    Span::new(start, start + ch.len_utf8()),
                    format!("unexpected character '{}'", ch),
                ));
            }
        }
    }
    out.push(Token { tok: Tok::Eof, span: Span::new(b.len(), b.len()) });
    Ok(out)
}

fn lex_number(src: &str, i: &mut usize) -> Result<Token, Diagnostic> {
    let b = src.as_bytes();
    let start = *i;
    if src[start..].starts_with("0x") || src[start..].starts_with("0X") {
        *i += 2;
        let ds = *i;
        while *i < b.len() && (b[*i].is_ascii_hexdigit() || b[*i] == b'_') {
            *i += 1;
        }
        let digits: String = src[ds..*i].chars().filter(|c| *c != '_').collect();
        let v = u128::from_str_radix(&digits, 16)
            .map_err(|_| Diagnostic::error(Span::new(start, *i), "malformed hexadecimal literal"))?;
        let suffix = int_suffix(src, i, start)?;
        return Ok(Token { tok: Tok::Int(v, suffix), span: Span::new(start, *i) });
    }
    while *i < b.len() && (b[*i].is_ascii_digit() || b[*i] == b'_') {
        *i += 1;
    }
    let mut is_float = false;
    if *i + 1 < b.len() && b[*i] == b'.' && b[*i + 1].is_ascii_digit() {
        is_float = true;
        *i += 1;
        while *i < b.len() && (b[*i].is_ascii_digit() || b[*i] == b'_') {
            *i += 1;
        }
    }
    if *i < b.len() && (b[*i] == b'e' || b[*i] == b'E') {
        let mut j = *i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            is_float = true;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            *i = j;
        }
    }
    let text: String = src[start..*i].chars().filter(|c| *c != '_').collect();
    if is_float {
        let v: f64 = text.parse().map_err(|_| Diagnostic::error(Span::new(start, *i), "malformed float literal"))?;
        if v.is_infinite() {
            return Err(Diagnostic::error(Span::new(start, *i), "float literal out of range").with_note("write `inf` for infinity"));
        }
        let suffix = float_suffix(src, i, start)?;
        return Ok(Token { tok: Tok::Float(v, suffix), span: Span::new(start, *i) });
    }
    let v: u128 = text.parse().map_err(|_| Diagnostic::error(Span::new(start, *i), "integer literal too large"))?;
    // An integer literal with a float suffix (`1f64`) is a float.
    if src[*i..].starts_with("f32") || src[*i..].starts_with("f64") {
        let suffix = float_suffix(src, i, start)?;
        return Ok(Token { tok: Tok::Float(v as f64, suffix), span: Span::new(start, *i) });
    }
    let suffix = int_suffix(src, i, start)?;
    Ok(Token { tok: Tok::Int(v, suffix), span: Span::new(start, *i) })
}

fn read_suffix(src: &str, i: &mut usize) -> String {
    let b = src.as_bytes();
    let s = *i;
    while *i < b.len() && (b[*i].is_ascii_alphanumeric() || b[*i] == b'_') {
        *i += 1;
    }
    src[s..*i].to_string()
}

fn int_suffix(src: &str, i: &mut usize, start: usize) -> Result<Option<Prim>, Diagnostic> {
    let s = read_suffix(src, i);
    match s.as_str() {
        "" => Ok(None),
        "i32" => Ok(Some(Prim::I32)),
        "i64" => Ok(Some(Prim::I64)),
        _ => Err(Diagnostic::error(Span::new(start, *i), format!("invalid suffix '{}' on integer literal", s))
            .with_note("integer literals take the suffixes i32 and i64")),
    }
}

fn float_suffix(src: &str, i: &mut usize, start: usize) -> Result<Option<Prim>, Diagnostic> {
    let s = read_suffix(src, i);
    match s.as_str() {
        "" => Ok(None),
        "f32" => Ok(Some(Prim::F32)),
        "f64" => Ok(Some(Prim::F64)),
        _ => Err(Diagnostic::error(Span::new(start, *i), format!("invalid suffix '{}' on float literal", s))
            .with_note("float literals take the suffixes f32 and f64")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn numbers_and_tuple_indices() {
        assert_eq!(
            toks("x-1 p.0.1 2.5e-3 0x1F 7i32 1e9"),
            vec![
                Tok::Ident("x".into()),
                Tok::Punct("-"),
                Tok::Int(1, None),
                Tok::Ident("p".into()),
                Tok::Punct("."),
                Tok::TupleIndex(0),
                Tok::Punct("."),
                Tok::TupleIndex(1),
                Tok::Float(2.5e-3, None),
                Tok::Int(31, None),
                Tok::Int(7, Some(Prim::I32)),
                Tok::Float(1e9, None),
                Tok::Eof
            ]
        );
    }

    #[test]
    fn bad_character_is_a_diagnostic() {
        assert!(lex("let a = $;").is_err());
    }
}
