//! The `afc` command.

use afc_ir::ice::Ice;
use std::sync::Mutex;

/// The compiler's stack: its passes recurse over expressions, and a long
/// flat chain (`x + x + … + x`, as a generated program may hold) is a deep
/// tree. Reserved, not committed: pages are touched only as deep as used.
const COMPILER_STACK: usize = 1 << 30;

/// Where a plain Rust panic happened, kept by the hook for the report.
static PANIC: Mutex<Option<String>> = Mutex::new(None);

/// mimalloc, not glibc's malloc: the compiler makes and frees millions of
/// small vectors and strings on a large program (the front end's trees,
/// the ILP model's rows, greedy's checks), and at 10,000 combinators the
/// front end took two thirds of the time with it and the whole run a
/// tenth less (docs/architecture.md, "Allocation"; without transparent
/// huge pages, which made a run after an idle spell slower). With the
/// crate's `override`, `malloc` itself is mimalloc's too, so LLVM and the
/// ILP solvers use it (`-O3` of 2,000 combinators a tenth faster).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // A bug in afc is reported as one (afc_ir::ice), with the internal-error
    // status, never as a bare Rust panic; unwinding first removes temporary
    // files (outputs are written atomically, so none is left half-written).
    std::panic::set_hook(Box::new(|info| {
        if info.payload().downcast_ref::<Ice>().is_none() {
            let bt = std::backtrace::Backtrace::force_capture();
            *PANIC.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!("{}\n\nbacktrace:\n{}", info, bt));
        }
    }));
    let code = std::thread::Builder::new()
        .stack_size(COMPILER_STACK)
        .spawn(|| match std::panic::catch_unwind(afc::driver::main) {
            Ok(code) => code,
            Err(payload) => report(payload),
        })
        .map(|t| t.join().unwrap_or(70))
        .unwrap_or_else(|e| {
            eprintln!("afc: error: cannot start the compiler's thread: {}", e);
            1
        });
    std::process::exit(code);
}

/// The one report of an internal compiler error (exit status 70).
fn report(payload: Box<dyn std::any::Any + Send>) -> i32 {
    let ice = match payload.downcast::<Ice>() {
        Ok(ice) => *ice,
        Err(other) => {
            let msg = other
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| other.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic".into());
            let details = PANIC.lock().unwrap_or_else(|e| e.into_inner()).take().unwrap_or_default();
            Ice { pass: afc::driver::current_pass(), reason: format!("panic: {}", msg.lines().next().unwrap_or("")), details }
        }
    };
    eprintln!("afc: internal compiler error in pass '{}': {}", ice.pass, ice.reason);
    if let Some(input) = afc::driver::current_input() {
        eprintln!("afc: while compiling {}", input);
    }
    let saved = tempfile::Builder::new()
        .prefix("afc-ice-")
        .suffix(".txt")
        .tempfile()
        .and_then(|mut f| {
            use std::io::Write;
            f.write_all(ice.details.as_bytes())?;
            f.keep().map_err(|e| e.error)
        });
    match saved {
        Ok((_, path)) => eprintln!("afc: details written to {}", path.display()),
        Err(e) => eprintln!("afc: the details could not be written to a file: {}", e),
    }
    eprintln!("afc: this is a bug in afc; please report it with the input file and the details");
    70
}
