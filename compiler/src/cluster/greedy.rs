//! A greedy clustering for comparison: take the fusible edges in source
//! order of their consumers, then the shared reads, and merge the two
//! clusters whenever the result is still legal. Like the heuristics of
//! papers/002 §5, it can miss the optimum.

use super::{groups_of, order_clusters, Groups};
use afc_ir::cluster::{verify, Clustering, Joins};
use afc_ir::graph::DepGraph;
use afc_ir::labelled::{Function, NodeId};

pub fn cluster(f: &Function, g: &DepGraph) -> Clustering {
    guided(f, g, candidates(f, g))
}

/// The links greedy tries, in its order: fusible edges by their
/// consumers' source position, then sibling pairs.
pub fn candidates(f: &Function, g: &DepGraph) -> Vec<(NodeId, NodeId)> {
    let mut candidates: Vec<(NodeId, NodeId)> = g.edges().filter(|(_, _, e)| e.is_fusible()).map(|(a, b, _)| (a, b)).collect();
    candidates.sort_by_key(|(a, b)| (f.node(*b).span.start, f.node(*a).span.start));
    candidates.extend(g.siblings().keys().copied());
    candidates
}

/// Merges the clusters of each pair of nodes in turn, keeping a merge when
/// the clustering stays legal. A merge is checked where it changes
/// anything (`Joins`: the joined cluster's own rules, and that no path
/// between the two clusters runs through a third), not by verifying the
/// whole clustering again — the same answers (tests/greedy_joins.rs), in
/// time of the joined cluster's size. That time grows with the cluster, so
/// on a graph of more than `BATCH_NODES` nodes the pairs are tried in
/// halves: all of them at once, and where that is illegal, each half in
/// turn, down to single pairs (a block is checked as its joins are: each
/// cluster it makes, and that the clusters stay acyclic). A chain of thousands of fusible maps is then one
/// check, not thousands; where single pairs are reached the merges are
/// greedy's own (docs/ilp.md, "Large graphs").
pub fn guided(f: &Function, g: &DepGraph, candidates: impl IntoIterator<Item = (NodeId, NodeId)>) -> Clustering {
    merging(f, g, candidates, g.len() > BATCH_NODES)
}

/// `guided`, trying the pairs in halves whatever the graph's size.
pub fn in_halves(f: &Function, g: &DepGraph, candidates: impl IntoIterator<Item = (NodeId, NodeId)>) -> Clustering {
    merging(f, g, candidates, true)
}

fn merging(f: &Function, g: &DepGraph, candidates: impl IntoIterator<Item = (NodeId, NodeId)>, halves: bool) -> Clustering {
    let mut m = Merging::new(f, g);
    // Every merge keeps a legal clustering legal; one that starts illegal
    // (cannot happen for a checked graph) is kept as it is, as a whole
    // check of each merge would.
    if legal(f, g, &m.groups) {
        if halves {
            let candidates: Vec<(NodeId, NodeId)> = candidates.into_iter().collect();
            merge_halves(&mut m, &candidates);
        } else {
            for (a, b) in candidates {
                m.join(a, b);
            }
        }
    }
    let clusters = order_clusters(f, g, groups_of(&m.groups)).expect("greedy keeps the clustering acyclic");
    Clustering::new(clusters, "greedy")
}

/// Whether the clustering `groups` passes `verify`.
fn legal(f: &Function, g: &DepGraph, groups: &Groups) -> bool {
    order_clusters(f, g, groups_of(groups)).is_some_and(|clusters| verify(f, g, &Clustering::new(clusters, "greedy")).is_ok())
}

/// The largest graph whose pairs greedy tries one at a time.
pub const BATCH_NODES: usize = 500;

/// Merges the pairs of `block` if the result is legal, else each half.
fn merge_halves(m: &mut Merging, block: &[(NodeId, NodeId)]) {
    match block {
        [] => {}
        [(a, b)] => {
            m.join(*a, *b);
        }
        _ => {
            if !m.join_all(block) {
                let (left, right) = block.split_at(block.len() / 2);
                merge_halves(m, left);
                merge_halves(m, right);
            }
        }
    }
}

/// Greedy's clusters as it merges them: each cluster (by its union-find
/// root) with its members in id order and the clusters it feeds and is fed
/// by.
struct Merging<'a> {
    joins: Joins<'a>,
    groups: Groups,
    members: Vec<Vec<NodeId>>,
    succ: Vec<Vec<usize>>,
    pred: Vec<Vec<usize>>,
    /// Scratch: the nodes of the cluster being tried, and the clusters a
    /// search has visited, by the step that marked them.
    inside: Vec<u32>,
    seen: Vec<u32>,
    step: u32,
}

impl<'a> Merging<'a> {
    fn new(f: &'a Function, g: &'a DepGraph) -> Merging<'a> {
        let n = g.len();
        let (mut succ, mut pred) = (vec![vec![]; n], vec![vec![]; n]);
        for (a, b, _) in g.edges() {
            let (a, b) = (a.0 as usize, b.0 as usize);
            if a != b {
                succ[a].push(b);
                pred[b].push(a);
            }
        }
        // One cluster edge per pair (sorted, not searched per edge: a node
        // may have thousands of consumers).
        for list in succ.iter_mut().chain(pred.iter_mut()) {
            list.sort_unstable();
            list.dedup();
        }
        Merging {
            joins: Joins::new(f, g),
            groups: Groups::new(n),
            members: (0..n).map(|i| vec![NodeId(i as u32)]).collect(),
            succ,
            pred,
            inside: vec![0; n],
            seen: vec![0; n],
            step: 0,
        }
    }

    /// Merges the clusters of `a` and `b` if the clustering stays legal.
    fn join(&mut self, a: NodeId, b: NodeId) -> bool {
        let (ra, rb) = (self.groups.find(a.0 as usize), self.groups.find(b.0 as usize));
        if ra == rb || self.through_another(ra, rb) || self.through_another(rb, ra) {
            return false;
        }
        let joined = self.members_of(&[ra, rb]);
        if !self.passes(&joined) {
            return false;
        }
        self.absorb(a, b, Some(joined));
        true
    }

    /// The members of clusters `roots`, in id order.
    fn members_of(&self, roots: &[usize]) -> Vec<NodeId> {
        let mut joined: Vec<NodeId> = roots.iter().flat_map(|r| self.members[*r].iter().copied()).collect();
        joined.sort_unstable();
        joined
    }

    /// Whether `joined` (in id order) passes `Joins` as one cluster.
    fn passes(&mut self, joined: &[NodeId]) -> bool {
        self.step += 1;
        for n in joined {
            self.inside[n.0 as usize] = self.step;
        }
        let (inside, step) = (&self.inside, self.step);
        self.joins.check(joined, &|n: NodeId| inside[n.0 as usize] == step).is_ok()
    }

    /// Merges the clusters of every pair of `block` if the clustering
    /// stays legal: each cluster the merges make passes `Joins`, and the
    /// clusters stay acyclic. Whether any merge was left to make, else.
    fn join_all(&mut self, block: &[(NodeId, NodeId)]) -> bool {
        // The clusters the block joins, by their roots now.
        let mut ids: indexmap::IndexMap<usize, usize> = indexmap::IndexMap::new();
        let mut joins = Groups::new(2 * block.len());
        let mut merged = false;
        for (a, b) in block {
            let (ra, rb) = (self.groups.find(a.0 as usize), self.groups.find(b.0 as usize));
            if ra != rb {
                let (n, _) = ids.insert_full(ra, 0);
                let (k, _) = ids.insert_full(rb, 0);
                merged |= joins.union(n, k);
            }
        }
        if !merged {
            return false;
        }
        let roots: Vec<usize> = ids.keys().copied().collect();
        let mut made: indexmap::IndexMap<usize, Vec<usize>> = indexmap::IndexMap::new();
        for (i, r) in roots.iter().enumerate() {
            made.entry(joins.find(i)).or_default().push(*r);
        }
        for parts in made.values().filter(|p| p.len() > 1) {
            let joined = self.members_of(parts);
            if !self.passes(&joined) {
                return false;
            }
        }
        // Acyclic: Kahn's algorithm over the clusters, the joined ones as one.
        let n = self.members.len();
        let mut rep: Vec<usize> = (0..n).collect();
        for (i, r) in roots.iter().enumerate() {
            rep[*r] = roots[joins.find(i)];
        }
        let live: Vec<usize> = (0..n).filter(|&r| !self.members[r].is_empty()).collect();
        let mut indeg = vec![0usize; n];
        let mut out: Vec<Vec<usize>> = vec![vec![]; n];
        for &r in &live {
            for &s in &self.succ[r] {
                let (x, y) = (rep[r], rep[s]);
                if x != y {
                    out[x].push(y);
                    indeg[y] += 1;
                }
            }
        }
        let mut ready: Vec<usize> = live.iter().copied().filter(|&r| rep[r] == r && indeg[r] == 0).collect();
        let mut done = 0;
        while let Some(x) = ready.pop() {
            done += 1;
            for &y in &out[x] {
                indeg[y] -= 1;
                if indeg[y] == 0 {
                    ready.push(y);
                }
            }
        }
        if done != live.iter().filter(|&&r| rep[r] == r).count() {
            return false;
        }
        for (a, b) in block {
            self.absorb(*a, *b, None);
        }
        true
    }

    /// Merges the clusters of `a` and `b`, unchecked; `joined` is their
    /// members in id order, if known.
    fn absorb(&mut self, a: NodeId, b: NodeId, joined: Option<Vec<NodeId>>) {
        let (ra, rb) = (self.groups.find(a.0 as usize), self.groups.find(b.0 as usize));
        if ra == rb {
            return;
        }
        let joined = joined.unwrap_or_else(|| self.members_of(&[ra, rb]));
        self.groups.union(ra, rb);
        let r = self.groups.find(ra);
        let other = if r == ra { rb } else { ra };
        self.members[r] = joined;
        self.members[other] = vec![];
        relink(&mut self.succ, &mut self.pred, ra, rb, r);
        relink(&mut self.pred, &mut self.succ, ra, rb, r);
    }

    /// Whether some path from cluster `from` to cluster `to` passes
    /// through a third cluster (joining them would make a cycle).
    fn through_another(&mut self, from: usize, to: usize) -> bool {
        self.step += 1;
        let mut stack: Vec<usize> = self.succ[from].iter().copied().filter(|&c| c != to).collect();
        while let Some(c) = stack.pop() {
            if c == to {
                return true;
            }
            if self.seen[c] != self.step {
                self.seen[c] = self.step;
                stack.extend(self.succ[c].iter().copied());
            }
        }
        false
    }
}

/// Clusters `ra` and `rb`, now `r`: their neighbours (`near`, one way) are
/// `r`'s, and each of those has `r` in their place (`far`, the other way).
fn relink(near: &mut [Vec<usize>], far: &mut [Vec<usize>], ra: usize, rb: usize, r: usize) {
    let mut all = std::mem::take(&mut near[ra]);
    all.append(&mut near[rb]);
    all.retain(|&c| c != ra && c != rb);
    all.sort_unstable();
    all.dedup();
    for &c in &all {
        let back = &mut far[c];
        back.retain(|&x| x != ra && x != rb);
        back.push(r);
    }
    near[r] = all;
}
