//! Windows: a neighbourhood search over a part of the model too large to
//! search whole (docs/ilp.md, "Windows"). The best clustering so far
//! stands outside a run of consecutive nodes (a window, `SHAPE`); inside
//! it, every link and order is free, and the solver searches that smaller
//! problem under limits of its own. The window slides over the part, each
//! starting from the best clustering so far. Every answer is a point of
//! the whole part's model (the window's is the part's with the other
//! variables fixed), is checked against its rows, and counts only when it
//! is cheaper.

use afc_ir::lp::{Limits, Lp, LpVar, Part, SolveStatus, Solver, Stop};

/// The graph nodes each variable of a model is about: a link's two ends,
/// an order indicator's or a position's node (twice). Arrays written and
/// reads are about none: every window leaves them free, as the rows
/// settle them once the links and orders are chosen.
#[derive(Clone, Debug)]
pub struct Locality {
    ends: Vec<Option<(u32, u32)>>,
    position: Vec<bool>,
}

impl Locality {
    pub fn new(vars: usize) -> Self {
        Locality { ends: vec![None; vars], position: vec![false; vars] }
    }

    /// `v` is about nodes `a` and `b` (`a == b` for one node).
    pub fn set(&mut self, v: LpVar, a: u32, b: u32) {
        self.ends[v.0] = Some((a, b));
    }

    /// `v` is node `a`'s position.
    pub fn set_position(&mut self, v: LpVar, a: u32) {
        self.set(v, a, a);
        self.position[v.0] = true;
    }
}

/// How windows are cut: `nodes` consecutive nodes each (in source
/// order), every `step` nodes, with the positions of the nodes within
/// `margin` of a window free as well.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub nodes: usize,
    pub step: usize,
    pub margin: usize,
}

/// Windows of 60 nodes: most of a 400-combinator program's are solved to
/// their own optimum at the root. Each slides half a window past the last,
/// so a cluster that straddles one window's edge lies inside the next; and
/// the positions 30 nodes to either side are free, so that the window's
/// clusters may move past their neighbours' (docs/ilp.md, "Windows").
pub const SHAPE: Shape = Shape { nodes: 60, step: 30, margin: 30 };
/// Branch-and-bound nodes one window's search may take (after its root).
const SEARCH_NODES: u64 = 20;
/// Simplex iterations one window's search may take, its root's included:
/// the deterministic bound on its work. A window's model is some
/// thousands of rows whatever the part's size, so the bound is a count,
/// not scaled with the part.
const ITERATIONS: u64 = 500;
/// Windows times the part's non-zeros that one part may take: a part of
/// up to 50,000 non-zeros (some 900 combinators of `gen.py`) gets every
/// window, a larger one fewer, spread evenly over it (1,200 combinators:
/// 24 of 39), as the rest of its clustering takes longer too. Each
/// window's solve takes some 25-30 ms whatever the part's size.
const WORK: usize = 1_500_000;
/// The largest part searched in windows (some 1,250 combinators): past it
/// the rest of the clustering takes most of a second (2,000 combinators
/// 0.6 s, 3,000 0.9-1.0 s), and the windows it could afford found
/// 0.1-0.2 % there.
pub const MAX_NNZ: usize = 65_000;

/// What the windows of one part found.
pub struct Outcome {
    /// The part's values, when some window found a cheaper clustering.
    pub values: Option<Vec<f64>>,
    /// Windows searched, and how many of them found a cheaper clustering.
    pub searched: usize,
    pub improved: usize,
    /// `Stop::TimeLimit` or `Stop::Failed` when a window ended so (the
    /// later windows are not searched after a time limit).
    pub stop: Stop,
}

/// Whether a part is searched in windows: with a solver that counts
/// iterations (the only deterministic bound on a window's root), and
/// within `MAX_NNZ`.
pub fn apply(solver: &dyn Solver, nnz: usize) -> bool {
    solver.counts_iterations() && nnz <= MAX_NNZ
}

/// The most windows a part of `nnz` non-zeros may take (`WORK`).
fn most(nnz: usize) -> usize {
    WORK / nnz.max(1)
}

/// Searches `part` window by window from `start` (the part's share of
/// the warm start, feasible), within `seconds` in all.
pub fn search(solver: &dyn Solver, part: &Part, near: &Locality, start: &[f64], seconds: f64, shape: Shape) -> Outcome {
    let clock = std::time::Instant::now();
    let lp = &part.lp;
    let ends: Vec<Option<(u32, u32)>> = part.vars.iter().map(|v| near.ends[v.0]).collect();
    let position: Vec<bool> = part.vars.iter().map(|v| near.position[v.0]).collect();
    // The part's nodes in source order, and each one's place among them.
    let mut nodes: Vec<u32> = ends.iter().flatten().flat_map(|&(a, b)| [a, b]).collect();
    nodes.sort_unstable();
    nodes.dedup();
    let mut place = vec![usize::MAX; nodes.last().map_or(0, |n| *n as usize + 1)];
    for (i, n) in nodes.iter().enumerate() {
        place[*n as usize] = i;
    }
    // The rows each variable is in, for what the free links and orders
    // bring with them (below).
    let mut rows_of: Vec<Vec<usize>> = vec![vec![]; lp.vars.len()];
    for (i, r) in lp.rows.iter().enumerate() {
        for (v, _) in &r.terms {
            rows_of[v.0].push(i);
        }
    }
    let mut best = start.to_vec();
    let mut best_value = lp.value_of(&best);
    let mut out = Outcome { values: None, searched: 0, improved: 0, stop: Stop::Finished };
    for from in starts(nodes.len(), shape, most(super::nnz(lp))) {
        let within = |n: u32, margin: usize| (from.saturating_sub(margin)..from + shape.nodes + margin).contains(&place[n as usize]);
        // Free: the links and orders with an end in the window, the
        // positions of the nodes within the margin of it, and each variable
        // about no node (arrays written, reads) that a row joins to a free
        // one, through such variables. The rest keep the incumbent's
        // values, positions spread out to leave room between them.
        let mut free: Vec<bool> = ends
            .iter()
            .zip(&position)
            .map(|(e, p)| match *e {
                Some((a, _)) if *p => within(a, shape.margin),
                Some((a, b)) => within(a, 0) || within(b, 0),
                None => false,
            })
            .collect();
        let mut work: Vec<usize> = (0..free.len()).filter(|j| free[*j]).collect();
        while let Some(j) = work.pop() {
            for r in &rows_of[j] {
                for (v, _) in &lp.rows[*r].terms {
                    if !free[v.0] && ends[v.0].is_none() {
                        free[v.0] = true;
                        work.push(v.0);
                    }
                }
            }
        }
        let from_here = spread(lp, &position, &best);
        let window = lp.fixing(&from_here, &free);
        let left = (seconds - clock.elapsed().as_secs_f64()).max(0.0);
        let own = window.restrict(&from_here);
        let sol = solver.solve(&window.lp, Limits { nodes: SEARCH_NODES, iterations: Some(ITERATIONS), seconds: left, start: Some(&own), heuristics: true, progress: None });
        out.searched += 1;
        // What the solver returns is put back into the whole, costed and
        // checked here, not taken at its word (docs/ilp.md, "Solving").
        let value = if sol.status == SolveStatus::None || sol.values.len() != window.vars.len() {
            None
        } else {
            let mut whole = from_here.clone();
            for (i, v) in window.vars.iter().enumerate() {
                whole[v.0] = sol.values[i];
            }
            Some((lp.value_of(&whole), whole))
        };
        if let Some((value, whole)) = value {
            if value < best_value - 0.5 && lp.feasible(&whole).is_ok() {
                best_value = value;
                best = whole;
                out.improved += 1;
            }
        }
        match sol.stop {
            Stop::TimeLimit => {
                out.stop = Stop::TimeLimit;
                break;
            }
            Stop::Failed(why) => out.stop = Stop::Failed(why),
            _ => {}
        }
    }
    if out.improved > 0 {
        out.values = Some(best);
    }
    out
}

/// `values` with the positions spread out: the clusters' positions in
/// order, `gap` apart, the widest gap that keeps them within their bound
/// (the part's node count). The same clustering, feasible as before (the
/// position rows ask only that fused ends share a position and that an
/// edge between clusters goes forward by at least one, at most the bound),
/// and with room for the clusters a window makes between those outside,
/// whose positions it fixes.
fn spread(lp: &Lp, position: &[bool], values: &[f64]) -> Vec<f64> {
    let mut at: Vec<f64> = values.iter().zip(position).filter(|(_, p)| **p).map(|(v, _)| *v).collect();
    at.sort_by(f64::total_cmp);
    at.dedup_by(|a, b| (*a - *b).abs() < 0.5);
    let span = lp.vars.iter().zip(position).filter(|(_, p)| **p).map(|(v, _)| v.hi).fold(f64::INFINITY, f64::min);
    let gap = (span / (at.len().max(2) - 1) as f64).floor().max(1.0);
    let mut out = values.to_vec();
    for (j, v) in out.iter_mut().enumerate() {
        if position[j] {
            // The rows hold the positions an edge joins at least one
            // apart and a fused link's ends equal (a solver's within its
            // tolerance), so ranks at half a unit keep every row; a point
            // they would not keep makes the window find nothing, as each
            // window's answer is checked.
            let rank = at.partition_point(|p| *p < *v - 0.5);
            *v = rank as f64 * gap;
        }
    }
    out
}

/// The first node of each window over `len` nodes: every `step`, the
/// last ending at the last node, or where that is more than `most`
/// windows, `most` of them spread evenly from the first node to the last.
/// None when one window would hold them all (a part that small is
/// searched whole).
fn starts(len: usize, shape: Shape, most: usize) -> Vec<usize> {
    if len <= shape.nodes || most == 0 {
        return vec![];
    }
    let last = len - shape.nodes;
    let mut s: Vec<usize> = (0..last).step_by(shape.step.max(1)).collect();
    s.push(last);
    if s.len() > most {
        s = match most {
            1 => vec![0],
            m => (0..m).map(|i| i * last / (m - 1)).collect(),
        };
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_cover_every_node_and_overlap() {
        let n = SHAPE.nodes;
        assert!(starts(n, SHAPE, 100).is_empty());
        for len in [n + 1, 2 * n, 401, 1000] {
            let s = starts(len, SHAPE, 100);
            assert_eq!(s[0], 0);
            assert_eq!(*s.last().unwrap() + n, len);
            assert!(s.windows(2).all(|w| w[1] > w[0] && w[1] - w[0] <= SHAPE.step), "{:?}", s);
        }
    }

    #[test]
    fn past_their_count_windows_spread_over_the_part() {
        let n = SHAPE.nodes;
        let s = starts(2000, SHAPE, 14);
        assert_eq!(s.len(), 14);
        assert_eq!((s[0], *s.last().unwrap() + n), (0, 2000));
        assert!(s.windows(2).all(|w| w[1] > w[0]), "{:?}", s);
        assert_eq!(starts(401, SHAPE, 1), [0]);
        assert!(starts(401, SHAPE, 0).is_empty());
        assert_eq!(most(50_000), 30);
        assert_eq!(most(MAX_NNZ), 23);
    }
}
