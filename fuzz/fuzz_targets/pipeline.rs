//! Source text through every middle-end stage to the loop IR, with every
//! verifier on (an internal error is a panic, so a crash): sizes, graph,
//! clustering (greedy, and the ILP under a small node limit), fusion trees,
//! lowering, strategies, the loop IR's print-parse round trip.
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
    // afc runs its passes on a large stack (compiler/src/main.rs); so does
    // the target, so that only what afc itself would do can crash it.
    let run = move || {
        let file = SourceFile::new("fuzz.acc", text);
        for mode in [FusionMode::Greedy, FusionMode::Ilp] {
            let opts = options(mode);
            let Ok((program, _)) = pipeline::front(&file, &opts) else { return };
            let _ = pipeline::middle(&file, program, &opts);
        }
    };
    let t = std::thread::Builder::new().stack_size(256 << 20).spawn(run).expect("a thread");
    if let Err(panic) = t.join() {
        std::panic::resume_unwind(panic);
    }
});
