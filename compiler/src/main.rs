//! The `afc` command.

fn main() {
    // A bug in afc is reported as one, with the internal-error status,
    // never as a bare Rust panic (outputs are written atomically, so none is
    // left half-written).
    std::panic::set_hook(Box::new(|info| {
        eprintln!("afc: internal compiler error: {}", info);
        eprintln!("afc: this is a bug in afc; please report it with the input file");
    }));
    let code = std::panic::catch_unwind(afc::driver::main).unwrap_or(70);
    std::process::exit(code);
}
