//! The front end: source text to the labelled program, or diagnostics.

pub mod cnames;
pub mod elaborate;
pub mod lexer;
pub mod lint;
pub mod parser;
pub mod scopes;
pub mod types;

use afc_ir::diag::Diagnostic;
use afc_ir::labelled::Program;

/// Lexes, parses, type-checks and labels a whole `.acc` file: the program
/// and its warnings, or its errors.
pub fn compile_source(text: &str) -> Result<(Program, Vec<Diagnostic>), Vec<Diagnostic>> {
    let tokens = lexer::lex(text).map_err(|d| vec![d])?;
    let ast = parser::parse(tokens).map_err(|d| vec![d])?;
    let program = elaborate::elaborate(&ast)?;
    Ok((program, lint::warnings(&ast)))
}
