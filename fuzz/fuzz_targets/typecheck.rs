//! The whole front end (parsing, type checking, elaboration, warnings) on
//! any text: a labelled program that passes its verifier, or diagnostics
//! that render, never a panic.
#![no_main]

use afc_ir::diag::{render_all, SourceFile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let file = SourceFile::new("fuzz.acc", text);
    match afc::frontend::compile_source(text) {
        Ok((program, warnings)) => {
            for f in &program.functions {
                if let Err(e) = afc_ir::labelled::verify(f) {
                    panic!("the labelled program of fn {} fails its verifier: {}", f.name, e);
                }
            }
            let _ = render_all(&warnings, &file);
        }
        Err(ds) => {
            let _ = render_all(&ds, &file);
        }
    }
});
