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
    /// The clusters in a topological order of the cluster graph (`DEAD`
    /// where a merged cluster was), and each cluster's place in it: a path
    /// between two clusters runs only through the clusters placed between
    /// them, so each check searches that window, not the graph.
    order: Vec<usize>,
    place: Vec<usize>,
    /// Scratch: the nodes of the cluster being tried, and the clusters a
    /// search has visited, by the step that marked them.
    inside: Vec<u32>,
    seen: Vec<u32>,
    step: u32,
    /// Scratch: the clusters the last `through_another` reached.
    reached: Vec<usize>,
    /// Scratch for `join_all`: each cluster's representative in the block
    /// (itself outside it) and its in-degree in the window.
    rep: Vec<usize>,
    indeg: Vec<usize>,
    /// Each cluster's version, raised whenever its members change, and
    /// the sets of clusters (with their versions) found not to pass.
    version: Vec<u32>,
    failed: std::collections::HashSet<Vec<(usize, u32)>>,
}

/// The most clusters in a set `Merging::failed` remembers: a halving
/// tries again sets of few clusters (the single link after the block of
/// two that failed on it), hardly ever a large one; remembering every
/// set took 30 MB more on `gathers` at 10,000 combinators for 154 more
/// of its 35,579 repeats.
const FAILED_PARTS: usize = 8;

/// A slot of `Merging::order` whose cluster was merged into another.
const DEAD: usize = usize::MAX;

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
        // Kahn's algorithm, smallest node first; the nodes of a cycle (a
        // graph that fails its check, where nothing is merged) last.
        let mut indeg: Vec<usize> = pred.iter().map(|p| p.len()).collect();
        let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<usize>> = (0..n).filter(|&i| indeg[i] == 0).map(std::cmp::Reverse).collect();
        let mut order = Vec::with_capacity(n);
        while let Some(std::cmp::Reverse(a)) = ready.pop() {
            order.push(a);
            for &b in &succ[a] {
                indeg[b] -= 1;
                if indeg[b] == 0 {
                    ready.push(std::cmp::Reverse(b));
                }
            }
        }
        let mut place = vec![usize::MAX; n];
        for (i, &a) in order.iter().enumerate() {
            place[a] = i;
        }
        let unplaced: Vec<usize> = (0..n).filter(|&a| place[a] == usize::MAX).collect();
        for a in unplaced {
            place[a] = order.len();
            order.push(a);
        }
        Merging {
            joins: Joins::new(f, g),
            groups: Groups::new(n),
            members: (0..n).map(|i| vec![NodeId(i as u32)]).collect(),
            succ,
            pred,
            order,
            place,
            inside: vec![0; n],
            seen: vec![0; n],
            step: 0,
            reached: vec![],
            rep: (0..n).collect(),
            indeg: vec![0; n],
            version: vec![0; n],
            failed: Default::default(),
        }
    }

    /// Writes `seq` (live clusters, in their new order) over the window
    /// of `order` from `lo` to `hi`, the slots left over dead.
    fn rewrite(&mut self, lo: usize, hi: usize, seq: &[usize]) {
        for slot in lo..=hi {
            let c = seq.get(slot - lo).copied().unwrap_or(DEAD);
            self.order[slot] = c;
            if c != DEAD {
                self.place[c] = slot;
            }
        }
    }

    /// Merges the clusters of `a` and `b` if the clustering stays legal.
    fn join(&mut self, a: NodeId, b: NodeId) -> bool {
        let (ra, rb) = (self.groups.find(a.0 as usize), self.groups.find(b.0 as usize));
        if ra == rb {
            return false;
        }
        // A path runs only from the earlier-placed cluster to the later.
        let (x, y) = if self.place[ra] < self.place[rb] { (ra, rb) } else { (rb, ra) };
        if self.through_another(x, y) {
            return false;
        }
        let Some(joined) = self.passes_of(&[ra, rb]) else {
            return false;
        };
        self.absorb(&[ra, rb], joined);
        // The new order of the window from x to y: what x reaches there
        // (`reached`) after the joined cluster, the rest before it (no
        // cluster both reaches y and is reached from x: that was checked).
        let (lo, hi) = (self.place[x], self.place[y]);
        let r = self.groups.find(x);
        self.step += 1;
        let mut after = std::mem::take(&mut self.reached);
        for &c in &after {
            self.seen[c] = self.step;
        }
        after.sort_unstable_by_key(|&c| self.place[c]);
        let mut seq: Vec<usize> = self.order[lo..=hi].iter().copied().filter(|&c| c != DEAD && c != x && c != y && self.seen[c] != self.step).collect();
        seq.push(r);
        seq.extend_from_slice(&after);
        self.rewrite(lo, hi, &seq);
        self.reached = after;
        true
    }

    /// The members of clusters `roots`, in id order.
    fn members_of(&self, roots: &[usize]) -> Vec<NodeId> {
        let mut joined: Vec<NodeId> = roots.iter().flat_map(|r| self.members[*r].iter().copied()).collect();
        joined.sort_unstable();
        joined
    }

    /// The members of clusters `roots` (in id order) if they pass `Joins`
    /// as one cluster. A set of clusters that failed is remembered until
    /// one of them changes: the check reads nothing but their members, so
    /// it would fail again (more than half of the single links greedy tries on a
    /// graph of thousands of gathers were the block a halving had just
    /// found illegal).
    fn passes_of(&mut self, roots: &[usize]) -> Option<Vec<NodeId>> {
        // A set too large to be remembered is not looked up either.
        let key = (roots.len() <= FAILED_PARTS).then(|| {
            let mut key: Vec<(usize, u32)> = roots.iter().map(|&r| (r, self.version[r])).collect();
            key.sort_unstable();
            key
        });
        if key.as_ref().is_some_and(|k| self.failed.contains(k)) {
            return None;
        }
        let joined = self.members_of(roots);
        if self.passes(&joined) {
            return Some(joined);
        }
        if let Some(key) = key {
            self.failed.insert(key);
        }
        None
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
        let mut joined_all = vec![];
        for parts in made.values().filter(|p| p.len() > 1) {
            let Some(joined) = self.passes_of(parts) else {
                return false;
            };
            joined_all.push(joined);
        }
        // Acyclic: Kahn's algorithm over the clusters, the joined ones as
        // one, in the window of `order` the block's clusters span (a cycle
        // runs only through clusters placed between two of them); its
        // order is the window's new one.
        let lo = roots.iter().map(|r| self.place[*r]).min().unwrap_or(0);
        let hi = roots.iter().map(|r| self.place[*r]).max().unwrap_or(0);
        let mut group: std::collections::HashMap<usize, &[usize]> = std::collections::HashMap::new();
        for (k, parts) in &made {
            group.insert(roots[*k], parts);
        }
        for (i, r) in roots.iter().enumerate() {
            self.rep[*r] = roots[joins.find(i)];
        }
        let window: Vec<usize> = self.order[lo..=hi].iter().copied().filter(|&c| c != DEAD).collect();
        for &c in &window {
            self.indeg[c] = 0;
        }
        for &c in &window {
            for &s in &self.succ[c] {
                let (x, y) = (self.rep[c], self.rep[s]);
                if self.place[s] <= hi && x != y {
                    self.indeg[y] += 1;
                }
            }
        }
        let mut ready: std::collections::VecDeque<usize> = window.iter().copied().filter(|&c| self.rep[c] == c && self.indeg[c] == 0).collect();
        let mut seq = vec![];
        while let Some(x) = ready.pop_front() {
            seq.push(x);
            let single = [x];
            for &m in group.get(&x).copied().unwrap_or(&single) {
                for &s in &self.succ[m] {
                    let y = self.rep[s];
                    if self.place[s] <= hi && y != x {
                        self.indeg[y] -= 1;
                        if self.indeg[y] == 0 {
                            ready.push_back(y);
                        }
                    }
                }
            }
        }
        let acyclic = seq.len() == window.iter().filter(|&&c| self.rep[c] == c).count();
        for r in &roots {
            self.rep[*r] = *r;
        }
        if !acyclic {
            return false;
        }
        // Each cluster made at once, not pair by pair: a block that joins
        // thousands of clusters into one would move the growing cluster's
        // members and neighbours once per pair (a fifth of the time of an
        // array read by thousands).
        for (parts, joined) in made.values().filter(|p| p.len() > 1).zip(joined_all) {
            self.absorb(parts, joined);
        }
        for c in seq.iter_mut() {
            *c = self.groups.find(*c);
        }
        self.rewrite(lo, hi, &seq);
        true
    }

    /// Merges the clusters `parts` (their roots), unchecked; `joined` is
    /// their members in id order.
    fn absorb(&mut self, parts: &[usize], joined: Vec<NodeId>) {
        for w in parts.windows(2) {
            self.groups.union(w[0], w[1]);
        }
        let r = self.groups.find(parts[0]);
        for &p in parts {
            self.members[p] = vec![];
        }
        self.members[r] = joined;
        self.version[r] += 1;
        self.step += 1;
        for &p in parts {
            self.seen[p] = self.step;
        }
        let (seen, step) = (&self.seen, self.step);
        let is_part = |c: usize| seen[c] == step;
        relink(&mut self.succ, &mut self.pred, parts, r, &is_part);
        relink(&mut self.pred, &mut self.succ, parts, r, &is_part);
    }

    /// Whether some path from cluster `from` to cluster `to` (placed
    /// after it) passes through a third cluster (joining them would make a
    /// cycle). The search stays among the clusters placed before `to`;
    /// those it reaches are left in `reached`.
    fn through_another(&mut self, from: usize, to: usize) -> bool {
        self.step += 1;
        self.reached.clear();
        let end = self.place[to];
        let mut stack: Vec<usize> = self.succ[from].iter().copied().filter(|&c| c != to && self.place[c] < end).collect();
        while let Some(c) = stack.pop() {
            if self.seen[c] != self.step {
                self.seen[c] = self.step;
                self.reached.push(c);
                for &d in &self.succ[c] {
                    if d == to {
                        return true;
                    }
                    if self.place[d] < end {
                        stack.push(d);
                    }
                }
            }
        }
        false
    }
}

/// Clusters `parts`, now `r`: their neighbours (`near`, one way) are
/// `r`'s, and each of those has `r` in their place (`far`, the other way).
fn relink(near: &mut [Vec<usize>], far: &mut [Vec<usize>], parts: &[usize], r: usize, is_part: &dyn Fn(usize) -> bool) {
    let mut all = vec![];
    for &p in parts {
        all.append(&mut near[p]);
    }
    all.retain(|&c| !is_part(c));
    // Each list was sorted when it was made here and has had clusters
    // pushed since (below): a sort that merges runs takes them in about
    // linear time, where quicksort's n log n was most of greedy's time on
    // an array read by thousands.
    all.sort();
    all.dedup();
    for &c in &all {
        let back = &mut far[c];
        back.retain(|&x| !is_part(x));
        back.push(r);
    }
    near[r] = all;
}
