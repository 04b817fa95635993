//! Mutation tests of the verifiers: each takes a correct stage of a real
//! program, breaks it one way (a dangling id, a read before its write, a
//! backwards edge making a cycle, an edge that goes missing, a node in no
//! cluster, a fusion-preventing edge inside a cluster, clusters out of
//! order, a cluster running at a filter's sub-rate without the filter, a
//! tree with a missing or repeated leaf, a tree that runs a consumer
//! before its producer, independent parts that are not) and checks that
//! the verifier says so. The loop IR's are in
//! testsuite/loops/verifier-rejects.test, on its text form.

mod common;

use afc::cluster::FusionMode;
use afc::pipeline::FunctionStages;
use afc_ir::fusion::FusionTree;
use afc_ir::graph::{DepGraph, Edge, EdgeKind};
use afc_ir::labelled::{NodeId, Operand, VarId};

/// normalize2 (papers/000): a filter, two folds, two maps; two clusters,
/// fusion-preventing edges from the folds to the maps.
const NORMALIZE2: &str = "export fn normalize2(xs: [f64]) -> ([f64], [f64]) {
    let sum1 = fold((+), 0.0, xs);
    let gts = filter(|x| x > 0.0, xs);
    let sum2 = fold((+), 0.0, gts);
    let ys1 = map(|x| x / sum1, xs);
    let ys2 = map(|x| x / sum2, xs);
    (ys1, ys2)
}";

/// A chain of maps fused into one cluster: a Vertical tree.
const CHAIN: &str = "export fn chain(xs: [f64]) -> ([f64], [f64]) {
    let a = map(|x| x + 1.0, xs);
    let b = map(|x| x * 2.0, a);
    let c = map(|y| y - 1.0, xs);
    (b, c)
}";

fn stages(src: &str) -> FunctionStages {
    common::compile(src, FusionMode::Ilp).functions.remove(0)
}

fn fails_with<T: std::fmt::Debug>(r: Result<T, String>, what: &str) {
    match r {
        Ok(_) => panic!("the verifier accepted a corruption; expected: {}", what),
        Err(e) => assert!(e.contains(what), "expected an error containing {:?}, got {:?}", what, e),
    }
}

#[test]
fn correct_stages_pass() {
    for src in [NORMALIZE2, CHAIN] {
        let s = stages(src);
        afc_ir::labelled::verify(&s.labelled).unwrap();
        afc_ir::graph::verify(&s.labelled, &s.graph).unwrap();
        afc_ir::cluster::verify(&s.labelled, &s.graph, &s.clustering).unwrap();
        for (m, t) in s.clustering.clusters.iter().zip(&s.trees) {
            afc_ir::fusion::verify(&s.labelled, &s.graph, m, t).unwrap();
        }
    }
}

// ---------------------------------------------------------------- labelled

#[test]
fn labelled_dangling_variable() {
    let mut s = stages(NORMALIZE2);
    s.labelled.results[0].value = Operand::Var(VarId(9999));
    fails_with(afc_ir::labelled::verify(&s.labelled), "used before its definition");
}

#[test]
fn labelled_read_before_write() {
    let mut s = stages(NORMALIZE2);
    // Return a worker's parameter: defined only inside its lambda.
    let inner = (0..s.labelled.vars.len() as u32).map(VarId).find(|v| s.labelled.var(*v).name == "x").unwrap();
    s.labelled.results[1].value = Operand::Var(inner);
    fails_with(afc_ir::labelled::verify(&s.labelled), "used before its definition");
}

#[test]
fn labelled_parameter_twice() {
    let mut s = stages(NORMALIZE2);
    let p = s.labelled.params[0].clone();
    s.labelled.params.push(p);
    fails_with(afc_ir::labelled::verify(&s.labelled), "defined twice");
}

// ---------------------------------------------------------------- graph

fn add_edge(g: &mut DepGraph, a: NodeId, b: NodeId, vars: Vec<VarId>) {
    g.graph.add_edge(DepGraph::idx(a), DepGraph::idx(b), Edge { kind: EdgeKind::Fusible { order: 0 }, vars });
}

#[test]
fn graph_backwards_edge_is_a_cycle() {
    let mut s = stages(NORMALIZE2);
    // ys1 (node 3) -> sum1 (node 0) closes a cycle with sum1 -> ys1.
    let ys1 = s.labelled.node(NodeId(3)).outputs()[0];
    add_edge(&mut s.graph, NodeId(3), NodeId(0), vec![ys1]);
    fails_with(afc_ir::graph::verify(&s.labelled, &s.graph), "goes backwards");
    assert!(s.graph.reach().is_err(), "reachability must report the cycle");
}

#[test]
fn graph_edge_carrying_what_its_producer_does_not_make() {
    let mut s = stages(NORMALIZE2);
    let sum1 = s.labelled.node(NodeId(0)).outputs()[0];
    add_edge(&mut s.graph, NodeId(1), NodeId(4), vec![sum1]);
    fails_with(afc_ir::graph::verify(&s.labelled, &s.graph), "does not define");
}

#[test]
fn graph_missing_edge() {
    let mut s = stages(NORMALIZE2);
    // Drop gts -> sum2: sum2 streams gts.
    let e = s.graph.graph.find_edge(DepGraph::idx(NodeId(1)), DepGraph::idx(NodeId(2))).unwrap();
    s.graph.graph.remove_edge(e);
    fails_with(afc_ir::graph::verify(&s.labelled, &s.graph), "has no edge from");
}

// ---------------------------------------------------------------- clustering

#[test]
fn clustering_node_missing() {
    let mut s = stages(NORMALIZE2);
    s.clustering.clusters[0].pop();
    fails_with(afc_ir::cluster::verify(&s.labelled, &s.graph, &s.clustering), "exactly one cluster");
}

#[test]
fn clustering_out_of_order() {
    let mut s = stages(NORMALIZE2);
    s.clustering.clusters.reverse();
    fails_with(afc_ir::cluster::verify(&s.labelled, &s.graph, &s.clustering), "goes backwards");
}

#[test]
fn clustering_fuses_a_preventing_edge() {
    let mut s = stages(NORMALIZE2);
    let all: Vec<NodeId> = s.clustering.clusters.concat();
    s.clustering.clusters = vec![all];
    s.clustering.orders.clear();
    fails_with(afc_ir::cluster::verify(&s.labelled, &s.graph, &s.clustering), "fusion-preventing edge");
}

/// Filters of filters: `c` runs at `b`'s sub-rate, `sc` at `c`'s.
const FILTERS: &str = "export fn nest(xs: [f64]) -> (f64, f64) {
    let a = filter(|x| x > 0.0, xs);
    let sa = fold((+), 0.0, a);
    let b = filter(|x| x > 1.0, xs);
    let c = filter(|x| x > 2.0, b);
    let sc = fold((+), 0.0, c);
    (sa, sc)
}";

#[test]
fn clustering_runs_at_a_filters_sub_rate_without_it() {
    let mut s = stages(FILTERS);
    assert_eq!(s.clustering.clusters.len(), 1, "the filters fuse");
    // `b` alone, before the rest (it reads only `xs`): `c` and `sc` still
    // run at its sub-rate, and `sa`'s walk up, which passes `a`'s size
    // first, must not end theirs.
    let b = s.clustering.clusters[0].iter().copied().find(|n| s.labelled.node(*n).name == "b").unwrap();
    s.clustering.clusters[0].retain(|n| *n != b);
    s.clustering.clusters.insert(0, vec![b]);
    fails_with(afc_ir::cluster::verify(&s.labelled, &s.graph, &s.clustering), "'c' runs at the sub-rate of filter 'b', which is not in the cluster");
}

// ---------------------------------------------------------------- fusion tree

fn chain_tree() -> (FunctionStages, usize) {
    let s = stages(CHAIN);
    let k = s.clustering.clusters.iter().position(|m| m.len() == 3).expect("the three maps fuse");
    (s, k)
}

#[test]
fn tree_member_missing() {
    let (s, k) = chain_tree();
    let tree = FusionTree::Leaf(s.clustering.clusters[k][0]);
    fails_with(afc_ir::fusion::verify(&s.labelled, &s.graph, &s.clustering.clusters[k], &tree), "is not a leaf");
}

#[test]
fn tree_leaf_twice() {
    let (s, k) = chain_tree();
    let tree = FusionTree::Horizontal(Box::new(s.trees[k].clone()), Box::new(FusionTree::Leaf(s.clustering.clusters[k][0])));
    fails_with(afc_ir::fusion::verify(&s.labelled, &s.graph, &s.clustering.clusters[k], &tree), "appears twice");
}

#[test]
fn tree_consumer_before_producer() {
    let (s, k) = chain_tree();
    let (a, b, c) = (NodeId(0), NodeId(1), NodeId(2));
    let av = s.labelled.node(a).outputs()[0];
    let tree = FusionTree::Horizontal(
        Box::new(FusionTree::Vertical { via: vec![av], first: Box::new(FusionTree::Leaf(b)), then: Box::new(FusionTree::Leaf(a)) }),
        Box::new(FusionTree::Leaf(c)),
    );
    fails_with(afc_ir::fusion::verify(&s.labelled, &s.graph, &s.clustering.clusters[k], &tree), "goes backwards");
}

#[test]
fn tree_horizontal_parts_that_depend() {
    let (s, k) = chain_tree();
    let tree = FusionTree::Horizontal(
        Box::new(FusionTree::Horizontal(Box::new(FusionTree::Leaf(NodeId(0))), Box::new(FusionTree::Leaf(NodeId(1))))),
        Box::new(FusionTree::Leaf(NodeId(2))),
    );
    fails_with(afc_ir::fusion::verify(&s.labelled, &s.graph, &s.clustering.clusters[k], &tree), "horizontal parts depend");
}

#[test]
fn tree_fused_through_an_array_no_edge_carries() {
    let (s, k) = chain_tree();
    let cv = s.labelled.node(NodeId(2)).outputs()[0];
    let tree = FusionTree::Horizontal(
        Box::new(FusionTree::Vertical { via: vec![cv], first: Box::new(FusionTree::Leaf(NodeId(0))), then: Box::new(FusionTree::Leaf(NodeId(1))) }),
        Box::new(FusionTree::Leaf(NodeId(2))),
    );
    fails_with(afc_ir::fusion::verify(&s.labelled, &s.graph, &s.clustering.clusters[k], &tree), "no edge carries it");
}
