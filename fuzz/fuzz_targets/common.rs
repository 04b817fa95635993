//! What the pipeline and codegen targets share: the options (every
//! verifier on, the ILP under a small node limit) and afc's large stack.

use afc::cluster::cost::CostModel;
use afc::cluster::{ClusterConfig, FusionMode, IlpModel};
use afc::pipeline::Options;

pub fn options(mode: FusionMode) -> Options {
    Options {
        cluster: ClusterConfig { mode, model: IlpModel::Edge, cost: CostModel::Traffic, nodes: Some(50), time_limit: 2.0, solver: &afc_cluster_highs::Highs },
        strategy: Default::default(),
        verify: true,
        verbose: false,
        notes: false,
        time_passes: false,
        lower: true,
    }
}

/// Runs `f` on a 256 MiB stack, as afc runs its passes
/// (compiler/src/main.rs), so that only what afc itself would do can crash
/// the target; a panic in it is the target's.
pub fn on_big_stack(f: impl FnOnce() + Send + 'static) {
    let t = std::thread::Builder::new().stack_size(256 << 20).spawn(f).expect("a thread");
    if let Err(panic) = t.join() {
        std::panic::resume_unwind(panic);
    }
}
