//! Source text through the whole compiler to an object file in memory:
//! every middle-end verifier on, then the LLVM back end at -O2 (its IR
//! verified before the pipeline) for the greedy and the ILP clustering.
//! An internal error, an invalid LLVM module or a back-end failure is a
//! crash. Slower than the pipeline target (LLVM's optimiser runs on every
//! input that type-checks), so it finds fewer inputs per second.
#![no_main]

use afc::cluster::cost::CostModel;
use afc::cluster::{ClusterConfig, FusionMode, IlpModel};
use afc::pipeline::{self, Options};
use afc_ir::diag::SourceFile;
use libfuzzer_sys::fuzz_target;

fn options(mode: FusionMode) -> Options {
    Options {
        cluster: ClusterConfig { mode, model: IlpModel::Edge, cost: CostModel::Traffic, nodes: Some(50), time_limit: 2.0, solver: &afc_cluster_cbc::Cbc },
        strategy: Default::default(),
        verify: true,
        verbose: false,
        notes: false,
        time_passes: false,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let text = text.to_string();
    let run = move || {
        let file = SourceFile::new("fuzz.acc", text);
        for mode in [FusionMode::Greedy, FusionMode::Ilp] {
            let opts = options(mode);
            let Ok((program, _)) = pipeline::front(&file, &opts) else { return };
            let Ok(stages) = pipeline::middle(&file, program, &opts) else { return };
            let copts = afc_codegen_llvm::Options { opt_level: 2, fast_math: false, target: None, cpu: None, debug: false };
            if let Err(e) = afc_codegen_llvm::compile(&stages.loops, "fuzz", &copts, false, true) {
                panic!("the back end failed: {}", e);
            }
        }
    };
    let t = std::thread::Builder::new().stack_size(256 << 20).spawn(run).expect("a thread");
    if let Err(panic) = t.join() {
        std::panic::resume_unwind(panic);
    }
});
