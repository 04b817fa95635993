//! The `afc` command.

/// The compiler's stack: its passes recurse over expressions, and a long
/// flat chain (`x + x + … + x`, as a generated program may hold) is a deep
/// tree. Reserved, not committed: pages are touched only as deep as used.
const COMPILER_STACK: usize = 1 << 30;

fn main() {
    // A bug in afc is reported as one, with the internal-error status,
    // never as a bare Rust panic (outputs are written atomically, so none is
    // left half-written).
    std::panic::set_hook(Box::new(|info| {
        eprintln!("afc: internal compiler error: {}", info);
        eprintln!("afc: this is a bug in afc; please report it with the input file");
    }));
    let code = std::thread::Builder::new()
        .stack_size(COMPILER_STACK)
        .spawn(|| std::panic::catch_unwind(afc::driver::main).unwrap_or(70))
        .map(|t| t.join().unwrap_or(70))
        .unwrap_or_else(|e| {
            eprintln!("afc: error: cannot start the compiler's thread: {}", e);
            1
        });
    std::process::exit(code);
}
