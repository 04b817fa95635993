//! The `afc` command line.
mod frontend;
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let file = afc_ir::diag::SourceFile::new(path, text.clone());
    match frontend::compile_source(&text) {
        Ok(p) => print!("{}", afc_ir::labelled::print_program(&p)),
        Err(d) => eprint!("{}", afc_ir::diag::render_all(&d, &file)),
    }
}
