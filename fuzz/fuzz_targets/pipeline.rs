//! Source text through every middle-end stage to the loop IR, with every
//! verifier on (an internal error is a panic, so a crash): sizes, graph,
//! clustering (greedy, and the ILP under a small node limit), fusion trees,
//! lowering, strategies, the loop IR's print-parse round trip.
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
            let _ = pipeline::middle(&file, program, &opts);
        }
    });
});
