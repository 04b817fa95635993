//! The lexer and parser on any bytes: a syntax tree or a diagnostic that
//! renders, never a panic.
#![no_main]

use afc::frontend::{lexer, parser};
use afc_ir::diag::SourceFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let file = SourceFile::new("fuzz.acc", text);
    let result = lexer::lex(text).and_then(parser::parse);
    if let Err(d) = result {
        let _ = d.render(&file);
        let _ = d.to_json(&file);
    }
});
