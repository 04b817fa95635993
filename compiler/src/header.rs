//! `--emit=header`: the C declarations of the exported functions, each with
//! a comment giving its `.acc` signature, who owns what, and its errors.
//! Compiles warning-free as C99, C11 and C++17 (`-Wall -Wextra -pedantic`;
//! `testsuite/header/every-program.test` checks every program of the suite).

use afc_ir::diag::SourceFile;
use afc_ir::labelled::{Function, Leaf, Operand, Program, VarTy};
use std::collections::HashSet;
use std::fmt::Write;

/// Names a parameter cannot take in C besides the keywords: the types and
/// macros the header's includes define.
const HEADER_NAMES: &[&str] = &[
    "NULL", "EOF", "errno", "size_t", "ptrdiff_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
    "uint32_t", "uint64_t", "intptr_t", "uintptr_t", "offsetof", "max_align_t", "wchar_t",
];

/// `n` as a C name no other in `used` has: a keyword, a name the headers
/// define, or an `afc_` name gets a trailing `_` (as often as needed).
fn c_ident(n: &str, used: &mut HashSet<String>) -> String {
    let lower = n.to_ascii_lowercase();
    let mut name = n.to_string();
    if crate::frontend::cnames::KEYWORDS.contains(&n) || HEADER_NAMES.contains(&n) || lower.starts_with("afc_") {
        name.push('_');
    }
    while used.contains(&name) {
        name.push('_');
    }
    used.insert(name.clone());
    name
}

fn c_type(t: VarTy) -> String {
    match t {
        VarTy::Scalar(p) => p.c_name().to_string(),
        VarTy::Array(r, p) => format!("afc_{}_{}d", p.name(), r),
    }
}

fn leaf_type(f: &Function, l: &Leaf) -> VarTy {
    match l.value {
        Operand::Var(v) => f.var(v).ty,
        Operand::Const(c) => VarTy::Scalar(c.prim()),
    }
}

/// The C name of each result: a whole result the function returns as a
/// plain name is named after it; a tuple's parts, constants, parameters returned as
/// results and names that would clash keep the ABI's `outN` names.
fn result_names(f: &Function, used: &mut HashSet<String>) -> Vec<String> {
    let abi: HashSet<&str> = f.results.iter().map(|l| l.c_name.as_str()).collect();
    let params: HashSet<String> = f.params.iter().map(|l| l.c_name.clone()).collect();
    let candidates: Vec<Option<String>> = f
        .results
        .iter()
        .map(|l| {
            // `outN`, a whole result; `outN_M` is part of a tuple.
            let i: usize = l.c_name.strip_prefix("out")?.parse().ok()?;
            let name = f.result_names.get(i)?.as_ref()?;
            (!params.contains(name) && !abi.contains(name.as_str())).then(|| name.clone())
        })
        .collect();
    // A name two results would take stays with neither.
    let mut count = std::collections::HashMap::new();
    for c in candidates.iter().flatten() {
        *count.entry(c.clone()).or_insert(0) += 1;
    }
    f.results
        .iter()
        .zip(candidates)
        .map(|(l, c)| {
            let name = c.filter(|c| count[c] == 1).unwrap_or_else(|| l.c_name.clone());
            c_ident(&name, used)
        })
        .collect()
}

/// The `.acc` signature of a function, from its source text (up to the
/// body's `{`), on one line.
fn signature(f: &Function, file: &SourceFile) -> String {
    let text = file.text.get(f.span.start as usize..f.span.end as usize).unwrap_or("");
    let head = text.split('{').next().unwrap_or(text);
    head.split_whitespace().collect::<Vec<_>>().join(" ").replace("*/", "* /")
}

/// The C prototype of one exported function, and its parameters' and
/// results' C names.
pub fn prototype(f: &Function) -> (String, Vec<String>) {
    let mut used = HashSet::new();
    let mut args = vec![];
    for l in &f.params {
        let Operand::Var(v) = l.value else { continue };
        args.push(format!("const {} {}", c_type(f.var(v).ty), c_ident(&l.c_name, &mut used)));
    }
    let names = result_names(f, &mut used);
    for (l, n) in f.results.iter().zip(&names) {
        args.push(format!("{} *{}", c_type(leaf_type(f, l)), n));
    }
    if args.is_empty() {
        args.push("void".into());
    }
    (format!("int {}({})", f.name, args.join(", ")), names)
}

/// The comment above a prototype.
fn comment(f: &Function, file: &SourceFile, results: &[String]) -> String {
    let mut out = String::new();
    let (line, _) = file.line_col(f.span.start);
    let _ = writeln!(out, "/* {}", signature(f, file));
    let _ = writeln!(out, " *   ({}:{})", file.name, line);
    if f.params.iter().any(|l| matches!(l.value, Operand::Var(v) if matches!(f.var(v).ty, VarTy::Array(..)))) {
        let _ = writeln!(out, " * Input arrays are only read; the caller keeps them.");
    }
    let arrays: Vec<&str> = f
        .results
        .iter()
        .zip(results)
        .filter(|(l, _)| matches!(leaf_type(f, l), VarTy::Array(..)))
        .map(|(_, n)| n.as_str())
        .collect();
    if !arrays.is_empty() {
        let _ = writeln!(out, " * Output arrays ({}): data == NULL on entry: afc allocates, the caller", arrays.join(", "));
        let _ = writeln!(out, " *   releases with afc_free(data); otherwise the caller's storage with room");
        let _ = writeln!(out, " *   for shape elements, written in place. shape is set to the result's.");
    }
    let _ = writeln!(out, " * Returns AFC_OK (0), or an AFC_ERR_* code or an extern's code (afc.h), with");
    let _ = writeln!(out, " *   afc_last_error() saying why; then nothing is left allocated. */");
    out
}

pub fn header(p: &Program, file: &SourceFile) -> String {
    let source_name = &file.name;
    let guard: String = source_name
        .rsplit('/')
        .next()
        .unwrap_or("afc")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' })
        .collect();
    // No `__` (reserved in C++): `<stdin>` gives AFC_GEN_STDIN_H.
    let guard = guard.split('_').filter(|s| !s.is_empty()).collect::<Vec<_>>().join("_");
    let mut out = String::new();
    let _ = writeln!(out, "/* Generated by afc from {}. */", source_name.replace("*/", "* /"));
    let _ = writeln!(out, "#ifndef AFC_GEN_{}_H", guard);
    let _ = writeln!(out, "#define AFC_GEN_{}_H\n", guard);
    let _ = writeln!(out, "#include \"afc.h\"\n");
    let _ = writeln!(out, "#ifdef __cplusplus\nextern \"C\" {{\n#endif\n");
    for f in p.functions.iter().filter(|f| f.exported) {
        let (proto, results) = prototype(f);
        let _ = writeln!(out, "{}{};\n", comment(f, file, &results), proto);
    }
    let _ = writeln!(out, "#ifdef __cplusplus\n}}\n#endif\n\n#endif");
    out
}
