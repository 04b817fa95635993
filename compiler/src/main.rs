//! The `afc` command.

fn main() {
    std::process::exit(afc::driver::main());
}
