//! Source text through the whole compiler to an object file in memory:
//! every middle-end verifier on, then the LLVM back end at -O2 (its IR
//! verified before the pipeline) for the greedy and the ILP clustering.
//! An internal error, an invalid LLVM module or a back-end failure is a
//! crash. Slower than the pipeline target (LLVM's optimiser runs on every
//! input that type-checks), so it tries fewer inputs per second.
#![no_main]

#[path = "common.rs"]
mod common;

use afc::cluster::FusionMode;
use afc::pipeline;
use afc_ir::diag::SourceFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let text = text.to_string();
    common::on_big_stack(move || {
        let file = SourceFile::new("fuzz.acc", text);
        for mode in [FusionMode::Greedy, FusionMode::Ilp] {
            let opts = common::options(mode);
            let Ok((program, _)) = pipeline::front(&file, &opts) else { return };
            let Ok(stages) = pipeline::middle(&file, program, &opts) else { return };
            let copts = afc_codegen_llvm::Options { opt_level: 2, fast_math: false, target: None, cpu: None, debug: false, codegen_units: None };
            if let Err(e) = afc_codegen_llvm::compile(&stages.loops, "fuzz", &copts, afc_codegen_llvm::Want { obj: true, ..Default::default() }) {
                panic!("the back end failed: {}", e);
            }
        }
    });
});
