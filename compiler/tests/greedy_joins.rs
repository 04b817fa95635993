//! Greedy checks each merge where it changes anything (`Joins`, and that no
//! path between the two clusters runs through a third) instead of
//! verifying the whole clustering again. The two must agree on every
//! merge: for random programs and random candidate orders (as the ILP's
//! rounding passes them), greedy's clustering is the one that whole checks
//! give, pair by pair and in halves.

mod common;

use afc::cluster::{greedy, groups_of, order_clusters, FusionMode, Groups};
use afc_ir::cluster::{verify, Clustering};
use afc_ir::labelled::NodeId;
use common::{compile, random_program, Rng};

/// Greedy as it was: a merge is kept when the whole clustering passes
/// `verify`.
fn by_whole_checks(f: &afc_ir::labelled::Function, g: &afc_ir::graph::DepGraph, candidates: &[(NodeId, NodeId)]) -> Vec<Vec<NodeId>> {
    let mut groups = Groups::new(g.len());
    for &(a, b) in candidates {
        if groups.find(a.0 as usize) == groups.find(b.0 as usize) {
            continue;
        }
        let mut trial = groups.clone();
        trial.union(a.0 as usize, b.0 as usize);
        if order_clusters(f, g, groups_of(&trial)).is_some_and(|c| verify(f, g, &Clustering::new(c, "trial")).is_ok()) {
            groups = trial;
        }
    }
    order_clusters(f, g, groups_of(&groups)).unwrap()
}

/// Greedy in halves as it was: a block of pairs is merged when the whole
/// clustering passes `verify`, else each half.
fn halves_by_whole_checks(f: &afc_ir::labelled::Function, g: &afc_ir::graph::DepGraph, groups: &mut Groups, block: &[(NodeId, NodeId)]) {
    let mut trial = groups.clone();
    let mut merged = false;
    for (a, b) in block {
        merged |= trial.union(a.0 as usize, b.0 as usize);
    }
    if !merged {
        return;
    }
    if order_clusters(f, g, groups_of(&trial)).is_some_and(|c| verify(f, g, &Clustering::new(c, "trial")).is_ok()) {
        *groups = trial;
    } else if block.len() > 1 {
        let (left, right) = block.split_at(block.len() / 2);
        halves_by_whole_checks(f, g, groups, left);
        halves_by_whole_checks(f, g, groups, right);
    }
}

#[test]
fn greedy_matches_whole_checks() {
    let var = |name: &str| std::env::var(name).ok().and_then(|s| s.parse::<u64>().ok());
    let (seed, count) = (var("AFC_FUZZ_SEED").unwrap_or(1), var("AFC_FUZZ_COUNT").unwrap_or(150));
    let mut rng = Rng(0xD1B54A32D192ED03 ^ seed);
    let mut refused = 0;
    for _ in 0..count {
        let n = 2 + rng.below(40);
        let src = random_program(&mut rng, n);
        let stages = compile(&src, FusionMode::None);
        let fs = &stages.functions[0];
        let (f, g) = (&fs.labelled, &fs.graph);
        let mut candidates = greedy::candidates(f, g);
        for round in 0..3 {
            if round > 0 {
                // Another order, as a relaxation's rounding gives.
                for i in (1..candidates.len()).rev() {
                    candidates.swap(i, rng.below(i + 1));
                }
            }
            let want = by_whole_checks(f, g, &candidates);
            let got = greedy::guided(f, g, candidates.iter().copied());
            assert_eq!(got.clusters, want, "candidate order {}\n{}", round, src);
            refused += usize::from(want.len() > 1);
            // In halves, as on graphs of more than BATCH_NODES nodes.
            let mut groups = Groups::new(g.len());
            halves_by_whole_checks(f, g, &mut groups, &candidates);
            let want = order_clusters(f, g, groups_of(&groups)).unwrap();
            let got = greedy::in_halves(f, g, candidates.iter().copied());
            assert_eq!(got.clusters, want, "in halves, candidate order {}\n{}", round, src);
        }
    }
    assert!(count < 50 || refused > 0, "every program fused into one cluster: no merge was refused");
}
