//! The `afc` binary is linked as a position-dependent executable: LLVM,
//! linked in statically, leaves a position-independent one 120,000
//! relative relocations to apply at every start (8 ms of a 15 ms
//! `afc --version`), and afc runs once per source file, often twice (the
//! back end's child). docs/architecture.md, "Start-up".
fn main() {
    println!("cargo:rustc-link-arg-bins=-no-pie");
}
