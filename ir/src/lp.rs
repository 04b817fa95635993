//! A solver-independent linear program, printable in CPLEX LP format
//! (`--emit=ilp`), so the model can be tested and inspected without a solver.

use crate::cluster::Lists;
use std::fmt::Write;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LpVar(pub usize);

#[derive(Clone, Debug)]
pub struct VarDef {
    pub name: String,
    pub lo: f64,
    pub hi: f64,
    pub integer: bool,
}

#[derive(Clone, Debug)]
pub struct Row {
    pub name: String,
    pub terms: Vec<(LpVar, f64)>,
    pub lo: f64,
    pub hi: f64,
}

#[derive(Clone, Debug, Default)]
pub struct Lp {
    pub vars: Vec<VarDef>,
    pub rows: Vec<Row>,
    /// Minimised.
    pub objective: Vec<(LpVar, f64)>,
    /// Lines printed as comments at the top of the LP text.
    pub comments: Vec<String>,
}

/// One independent part of a program (`Lp::parts`): a program of its
/// own over some of the variables, `vars[i]` being its variable `i`.
#[derive(Clone, Debug)]
pub struct Part<'a> {
    /// Borrowed when the program is all one part.
    pub lp: std::borrow::Cow<'a, Lp>,
    pub vars: Vec<LpVar>,
}

impl Part<'_> {
    /// The part's share of a point of the whole program.
    pub fn restrict(&self, whole: &[f64]) -> Vec<f64> {
        self.vars.iter().map(|v| whole[v.0]).collect()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SolveStatus {
    Optimal,
    /// Stopped by a limit with a feasible solution.
    Feasible,
    /// No solution was found (infeasible or stopped before one).
    None,
}

/// How much work a solve may do. The node limit is the deterministic
/// bound (the same model stops at the same point on any machine); the
/// wall-clock limit is a safety net, reported when it fires.
#[derive(Clone, Copy, Debug)]
pub struct Limits<'a> {
    pub nodes: u64,
    /// The simplex iterations the whole search may take, the root's
    /// included (None: no such limit): a deterministic measure of work
    /// that, unlike nodes, also bounds the root. A solver that cannot
    /// count them says so (`Solver::counts_iterations`) and ignores it.
    pub iterations: Option<u64>,
    pub seconds: f64,
    /// A known feasible point (the warm start): only a solution at least as
    /// good counts (objective at most half a unit above its: objectives
    /// are sums of integer weights), every branch that cannot give one is
    /// pruned, and none is `SolveStatus::None`.
    pub start: Option<&'a [f64]>,
    /// Whether the solver runs its primal heuristics (CBC's feasibility
    /// pump, RINS, …). Off where a repair heuristic of afc's own supplies
    /// the incumbents (`--ilp-model=lazy`).
    pub heuristics: bool,
    /// Told now and then how a branch-and-bound search is going (a solver
    /// may never call it); it only watches, the search is the same.
    pub progress: Option<Watch<'a>>,
}

/// Where a search stands: seconds since it began, nodes explored, the
/// best solution's objective (infinite: none) and the bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Progress {
    pub seconds: f64,
    pub nodes: u64,
    pub incumbent: f64,
    pub bound: f64,
}

/// The observer of a search (`Limits::progress`).
#[derive(Clone, Copy)]
pub struct Watch<'a>(pub &'a dyn Fn(Progress));

impl std::fmt::Debug for Watch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Watch")
    }
}

/// Why a solve stopped before proving optimality.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// It did not stop early.
    Finished,
    NodeLimit,
    /// `Limits::iterations` reached.
    IterationLimit,
    TimeLimit,
    /// Not searched: the model is too large for the deterministic work
    /// bound (afc's own limit, `default_search`; a solver never returns it).
    SizeLimit,
    /// The solver failed, or ended in a state that proves nothing (an
    /// error, a status it should not reach, an answer that contradicts its
    /// own report): why, for `-v`. A solution it returned still counts if
    /// it checks, but nothing is proven, not even that the start is best.
    Failed(&'static str),
}

#[derive(Clone, Debug)]
pub struct Solution {
    pub status: SolveStatus,
    pub values: Vec<f64>,
    pub objective: f64,
    /// The best lower bound proven on the objective.
    pub bound: f64,
    pub stop: Stop,
}

/// How far `objective` may be from the optimum, given a proven lower
/// `bound`, in percent of the objective.
pub fn gap_percent(objective: f64, bound: f64) -> f64 {
    if objective.abs() < 1e-9 {
        0.0
    } else {
        ((objective - bound) / objective.abs() * 100.0).max(0.0)
    }
}

/// A mixed-integer solver: afc's passes take one as a parameter, so they
/// build and test without a particular solver (afc-cluster-cbc is CBC).
pub trait Solver: std::fmt::Debug {
    /// Minimises `lp` within `limits`. With a start, `SolveStatus::None`
    /// and `Stop::Finished` mean that no solution is as good as the start.
    fn solve(&self, lp: &Lp, limits: Limits<'_>) -> Solution;
    /// `lp`'s linear relaxation, to be solved again as rows are added (the
    /// root cuts' rounds): a solver that can starts each solve from the
    /// last one's basis.
    fn relaxation(&self, lp: &Lp) -> Box<dyn Relaxation + '_>;
    /// Whether `solve` honours `Limits::iterations`.
    fn counts_iterations(&self) -> bool {
        false
    }
}

/// A linear relaxation solved again and again as rows are added.
pub trait Relaxation {
    fn add_rows(&mut self, rows: &[Row]);
    /// An optimal point, or why there is none.
    fn solve(&mut self, seconds: f64) -> Result<Vec<f64>, NoPoint>;
}

/// Why a relaxation gave no point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoPoint {
    /// The time limit stopped it: what follows depends on the machine,
    /// and afc says so.
    TimeLimit,
    /// Infeasible, or the solver failed.
    Failed,
}

/// A relaxation solved from scratch each time, for solvers that cannot
/// start from a basis.
pub struct Resolve<'a> {
    pub solver: &'a dyn Solver,
    pub lp: Lp,
}

impl Relaxation for Resolve<'_> {
    fn add_rows(&mut self, rows: &[Row]) {
        self.lp.rows.extend_from_slice(rows);
    }
    fn solve(&mut self, seconds: f64) -> Result<Vec<f64>, NoPoint> {
        let sol = self.solver.solve(&self.lp, Limits { nodes: 0, iterations: None, seconds, start: None, heuristics: false, progress: None });
        match (sol.status, sol.stop) {
            (SolveStatus::None, Stop::TimeLimit) => Err(NoPoint::TimeLimit),
            (SolveStatus::None, _) => Err(NoPoint::Failed),
            _ => Ok(sol.values),
        }
    }
}

impl Solution {
    /// The relative gap between the solution and the bound, in percent.
    pub fn gap_percent(&self) -> f64 {
        gap_percent(self.objective, self.bound)
    }
    pub fn get(&self, v: LpVar) -> f64 {
        self.values[v.0]
    }
    pub fn is_one(&self, v: LpVar) -> bool {
        self.values[v.0] > 0.5
    }
}

impl Lp {
    pub fn binary(&mut self, name: String) -> LpVar {
        self.var(name, 0.0, 1.0, true)
    }
    pub fn var(&mut self, name: String, lo: f64, hi: f64, integer: bool) -> LpVar {
        self.vars.push(VarDef { name, lo, hi, integer });
        LpVar(self.vars.len() - 1)
    }
    /// `lo ≤ Σ terms ≤ hi`.
    pub fn row(&mut self, name: String, terms: Vec<(LpVar, f64)>, lo: f64, hi: f64) {
        self.rows.push(Row { name, terms, lo, hi });
    }
    /// The linear relaxation: the same program with no variable integer.
    pub fn relaxed(&self) -> Lp {
        let mut lp = self.clone();
        for v in &mut lp.vars {
            v.integer = false;
        }
        lp
    }

    pub fn value_of(&self, sol: &[f64]) -> f64 {
        self.objective.iter().map(|(v, c)| c * sol[v.0]).sum()
    }

    /// The objective's least value over the variables' bounds alone, rows
    /// ignored: no feasible point is cheaper, so a feasible point of this
    /// value is optimal without a solve (a long chain of maps, all fused,
    /// costs 0). -∞ when a bound it needs is infinite.
    pub fn trivial_bound(&self) -> f64 {
        self.objective
            .iter()
            .map(|(v, c)| {
                let d = &self.vars[v.0];
                match c.partial_cmp(&0.0) {
                    Some(std::cmp::Ordering::Greater) => c * d.lo,
                    Some(std::cmp::Ordering::Less) => c * d.hi,
                    _ => 0.0,
                }
            })
            .sum()
    }

    /// Whether `sol` (feasible) is optimal by `trivial_bound` (objectives
    /// are sums of integer weights: within half a unit).
    pub fn at_trivial_bound(&self, sol: &[f64]) -> bool {
        let b = self.trivial_bound();
        b.is_finite() && self.value_of(sol) < b + 0.5
    }

    /// Each variable's part (`parts`), as a representative variable: the
    /// parts without the copies.
    pub fn part_roots(&self) -> Vec<usize> {
        let mut u = petgraph::unionfind::UnionFind::<usize>::new(self.vars.len());
        for r in &self.rows {
            for w in r.terms.windows(2) {
                u.union(w[0].0 .0, w[1].0 .0);
            }
        }
        (0..self.vars.len()).map(|i| u.find(i)).collect()
    }

    /// The independent parts of the program: the connected components of
    /// its variables, two variables joined when a row has both. No row
    /// spans two parts, so a point is feasible exactly when each part's
    /// share of it is, and the objective is the sum of the parts'
    /// objectives: the optimum is the parts' optima put together. Parts
    /// come in order of their first variable; a variable in no row is a
    /// part of its own. A program that is one part is that part, not
    /// a copy (a model of thousands of nodes has a million rows).
    pub fn parts(&self) -> Vec<Part<'_>> {
        let root = self.part_roots();
        if root.first().is_some_and(|r| root.iter().all(|q| q == r)) {
            return vec![Part { lp: std::borrow::Cow::Borrowed(self), vars: (0..self.vars.len()).map(LpVar).collect() }];
        }
        let mut index: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
        let mut parts: Vec<(Lp, Vec<LpVar>)> = vec![];
        // Where each variable went: (part, its index there).
        let mut at = Vec::with_capacity(self.vars.len());
        for (i, v) in self.vars.iter().enumerate() {
            let k = *index.entry(root[i]).or_insert_with(|| {
                parts.push((Lp::default(), vec![]));
                parts.len() - 1
            });
            at.push((k, parts[k].1.len()));
            parts[k].1.push(LpVar(i));
            parts[k].0.vars.push(v.clone());
        }
        let local = |v: LpVar| LpVar(at[v.0].1);
        for r in &self.rows {
            // A row of no variables is a constant: any part may check it.
            let k = r.terms.first().map(|t| at[t.0 .0].0).unwrap_or(0);
            if parts.is_empty() {
                continue;
            }
            let terms = r.terms.iter().map(|(v, c)| (local(*v), *c)).collect();
            parts[k].0.rows.push(Row { name: r.name.clone(), terms, lo: r.lo, hi: r.hi });
        }
        for (v, c) in &self.objective {
            parts[at[v.0].0].0.objective.push((local(*v), *c));
        }
        parts.into_iter().map(|(lp, vars)| Part { lp: std::borrow::Cow::Owned(lp), vars }).collect()
    }

    /// This program's linear relaxation under `objective`, smaller: a
    /// variable `objective` does not cost is fixed at one of its bounds
    /// when moving it there breaks none of its rows (each is one-sided,
    /// and the move takes the row's sum away from that side), and a row
    /// that its variables' bounds then always satisfy is left out, until
    /// neither applies (docs/ilp.md, "Rounding"). The move keeps a
    /// feasible point feasible at the same cost, so the reduced program
    /// has the relaxation's optimum, and each of its optimal points is
    /// one of the relaxation's. Variables keep their numbers (a fixed one
    /// has `lo = hi`).
    pub fn reduced(&self, objective: &[(LpVar, f64)]) -> Lp {
        let n = self.vars.len();
        let mut lo: Vec<f64> = self.vars.iter().map(|v| v.lo).collect();
        let mut hi: Vec<f64> = self.vars.iter().map(|v| v.hi).collect();
        let mut costed = vec![false; n];
        for (v, c) in objective {
            costed[v.0] |= *c != 0.0;
        }
        // Each variable's rows and coefficients.
        let mut rows_of: Lists<(u32, f64)> = Lists::default();
        rows_of.fill(n, self.rows.iter().enumerate().flat_map(|(i, r)| r.terms.iter().map(move |&(v, c)| (v.0 as u32, (i as u32, c)))));
        let mut kept = vec![true; self.rows.len()];
        // Work lists: the variables whose rows changed, the rows whose
        // variables did; every one at first.
        let mut vars: Vec<usize> = (0..n).collect();
        let mut rows: Vec<usize> = (0..self.rows.len()).collect();
        let (mut var_queued, mut row_queued) = (vec![true; n], vec![true; self.rows.len()]);
        while !vars.is_empty() || !rows.is_empty() {
            for v in std::mem::take(&mut vars) {
                var_queued[v] = false;
                if costed[v] || lo[v] == hi[v] {
                    continue;
                }
                // Which way the variable's rows would have it go.
                let (mut up, mut down) = (false, false);
                for &(i, c) in rows_of.of(v as u32) {
                    let r = &self.rows[i as usize];
                    if kept[i as usize] && c != 0.0 {
                        down |= (r.hi.is_finite() && c > 0.0) || (r.lo.is_finite() && c < 0.0);
                        up |= (r.hi.is_finite() && c < 0.0) || (r.lo.is_finite() && c > 0.0);
                    }
                }
                let to = match (up, down) {
                    (true, false) => hi[v],
                    (false, _) => lo[v],
                    (true, true) => continue,
                };
                if !to.is_finite() {
                    continue;
                }
                (lo[v], hi[v]) = (to, to);
                for &(i, _) in rows_of.of(v as u32) {
                    let i = i as usize;
                    if kept[i] && !row_queued[i] {
                        row_queued[i] = true;
                        rows.push(i);
                    }
                }
            }
            for i in std::mem::take(&mut rows) {
                row_queued[i] = false;
                let r = &self.rows[i];
                if !kept[i] {
                    continue;
                }
                let (mut least, mut most) = (0.0, 0.0);
                for &(v, c) in &r.terms {
                    if c != 0.0 {
                        let (a, b) = (c * lo[v.0], c * hi[v.0]);
                        least += a.min(b);
                        most += a.max(b);
                    }
                }
                if least >= r.lo && most <= r.hi {
                    kept[i] = false;
                    for &(v, _) in &r.terms {
                        if !var_queued[v.0] {
                            var_queued[v.0] = true;
                            vars.push(v.0);
                        }
                    }
                }
            }
        }
        let vars = self.vars.iter().enumerate().map(|(i, v)| VarDef { name: v.name.clone(), lo: lo[i], hi: hi[i], integer: false }).collect();
        let rows = self.rows.iter().zip(&kept).filter(|(_, k)| **k).map(|(r, _)| r.clone()).collect();
        Lp { vars, rows, objective: objective.to_vec(), comments: vec![] }
    }

    /// The program of the rows `keep` takes, over the variables they use
    /// (in their order here), with the objective's terms on those: a
    /// piece of the program the caller chose (`parts` are the pieces no
    /// row joins). Its optimum bounds nothing of the whole's.
    pub fn sub(&self, keep: impl Fn(&Row) -> bool) -> Part<'static> {
        let mut at: Vec<Option<usize>> = vec![None; self.vars.len()];
        let rows: Vec<&Row> = self.rows.iter().filter(|r| keep(r)).collect();
        for r in &rows {
            for (v, _) in &r.terms {
                at[v.0] = Some(0);
            }
        }
        let (mut lp, mut vars) = (Lp::default(), vec![]);
        for (i, a) in at.iter_mut().enumerate() {
            if a.is_some() {
                *a = Some(vars.len());
                vars.push(LpVar(i));
                lp.vars.push(self.vars[i].clone());
            }
        }
        let local = |v: LpVar| LpVar(at[v.0].expect("a kept row's variable is in the piece"));
        lp.rows = rows.iter().map(|r| Row { name: r.name.clone(), terms: r.terms.iter().map(|(v, c)| (local(*v), *c)).collect(), lo: r.lo, hi: r.hi }).collect();
        lp.objective = self.objective.iter().filter(|(v, _)| at[v.0].is_some()).map(|(v, c)| (local(*v), *c)).collect();
        Part { lp: std::borrow::Cow::Owned(lp), vars }
    }

    /// The program over the variables `free` marks, the others fixed at
    /// `values` (a point that satisfies every row): each row's fixed terms
    /// go into its bounds, and a row with no free variable is left out (it
    /// holds whatever the free ones are). With the fixed values put back,
    /// its feasible points are the whole's that agree with `values` off
    /// `free`, and its objective differs from the whole's by a constant.
    pub fn fixing(&self, values: &[f64], free: &[bool]) -> Part<'static> {
        let mut at: Vec<Option<usize>> = vec![None; self.vars.len()];
        let (mut lp, mut vars) = (Lp::default(), vec![]);
        for (i, v) in self.vars.iter().enumerate() {
            if free[i] {
                at[i] = Some(vars.len());
                vars.push(LpVar(i));
                lp.vars.push(v.clone());
            }
        }
        for r in &self.rows {
            let fixed: f64 = r.terms.iter().filter(|(v, _)| !free[v.0]).map(|(v, c)| c * values[v.0]).sum();
            let terms: Vec<(LpVar, f64)> = r.terms.iter().filter_map(|(v, c)| at[v.0].map(|i| (LpVar(i), *c))).collect();
            if !terms.is_empty() {
                lp.rows.push(Row { name: r.name.clone(), terms, lo: r.lo - fixed, hi: r.hi - fixed });
            }
        }
        lp.objective = self.objective.iter().filter_map(|(v, c)| at[v.0].map(|i| (LpVar(i), *c))).collect();
        Part { lp: std::borrow::Cow::Owned(lp), vars }
    }

    /// Checks a candidate assignment against every bound and row: one
    /// finite value per variable (a NaN would pass every comparison).
    pub fn feasible(&self, sol: &[f64]) -> Result<(), String> {
        const EPS: f64 = 1e-6;
        if sol.len() != self.vars.len() {
            return Err(format!("{} values for {} variables", sol.len(), self.vars.len()));
        }
        for (i, v) in self.vars.iter().enumerate() {
            if !sol[i].is_finite() {
                return Err(format!("{} = {}", v.name, sol[i]));
            }
            if sol[i] < v.lo - EPS || sol[i] > v.hi + EPS {
                return Err(format!("{} = {} outside [{}, {}]", v.name, sol[i], v.lo, v.hi));
            }
            if v.integer && (sol[i] - sol[i].round()).abs() > EPS {
                return Err(format!("{} = {} is not an integer", v.name, sol[i]));
            }
        }
        for r in &self.rows {
            let s: f64 = r.terms.iter().map(|(v, c)| c * sol[v.0]).sum();
            if s < r.lo - EPS || s > r.hi + EPS {
                return Err(format!("row {} = {} outside [{}, {}]", r.name, s, r.lo, r.hi));
            }
        }
        Ok(())
    }

    /// CPLEX LP format.
    pub fn to_lp_format(&self) -> String {
        let mut out = String::new();
        for c in &self.comments {
            let _ = writeln!(out, "\\ {}", c);
        }
        let _ = writeln!(out, "Minimize");
        let _ = writeln!(out, " cost: {}", terms(&self.vars, &self.objective));
        let _ = writeln!(out, "Subject To");
        for r in &self.rows {
            let t = terms(&self.vars, &r.terms);
            if r.lo == r.hi {
                let _ = writeln!(out, " {}: {} = {}", r.name, t, num(r.lo));
            } else {
                if r.lo > f64::NEG_INFINITY {
                    let _ = writeln!(out, " {}: {} >= {}", r.name, t, num(r.lo));
                }
                if r.hi < f64::INFINITY {
                    let suffix = if r.lo > f64::NEG_INFINITY { "_hi" } else { "" };
                    let _ = writeln!(out, " {}{}: {} <= {}", r.name, suffix, t, num(r.hi));
                }
            }
        }
        let _ = writeln!(out, "Bounds");
        for v in &self.vars {
            let _ = writeln!(out, " {} <= {} <= {}", num(v.lo), v.name, num(v.hi));
        }
        let ints: Vec<&str> = self.vars.iter().filter(|v| v.integer).map(|v| v.name.as_str()).collect();
        if !ints.is_empty() {
            let _ = writeln!(out, "General");
            for chunk in ints.chunks(8) {
                let _ = writeln!(out, " {}", chunk.join(" "));
            }
        }
        let _ = writeln!(out, "End");
        out
    }
}

fn num(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{}", x)
    }
}

fn terms(vars: &[VarDef], ts: &[(LpVar, f64)]) -> String {
    if ts.is_empty() {
        return "0".into();
    }
    let mut s = String::new();
    for (i, (v, c)) in ts.iter().enumerate() {
        let sign = if *c < 0.0 { "-" } else if i > 0 { "+" } else { "" };
        let mag = c.abs();
        let coef = if mag == 1.0 { String::new() } else { format!("{} ", num(mag)) };
        if i > 0 {
            s.push(' ');
        }
        let _ = write!(s, "{}{}{}{}", sign, if sign.is_empty() || i == 0 { "" } else { " " }, coef, vars[v.0].name);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_the_components_of_rows() {
        let mut lp = Lp::default();
        let a = lp.binary("a".into());
        let b = lp.binary("b".into());
        let free = lp.var("free".into(), 0.0, 3.0, false);
        let c = lp.binary("c".into());
        lp.row("ac".into(), vec![(a, 1.0), (c, 1.0)], 1.0, f64::INFINITY);
        lp.row("b".into(), vec![(b, 2.0)], f64::NEG_INFINITY, 1.0);
        lp.objective = vec![(c, 3.0), (a, 1.0), (b, -1.0)];
        let parts = lp.parts();
        let vars: Vec<Vec<LpVar>> = parts.iter().map(|p| p.vars.clone()).collect();
        assert_eq!(vars, vec![vec![a, c], vec![b], vec![free]]);
        // Rows and objective terms move to their part, renumbered.
        assert_eq!(parts[0].lp.rows[0].terms, vec![(LpVar(0), 1.0), (LpVar(1), 1.0)]);
        assert_eq!(parts[0].lp.objective, vec![(LpVar(1), 3.0), (LpVar(0), 1.0)]);
        assert_eq!(parts[1].lp.rows[0].terms, vec![(LpVar(0), 2.0)]);
        assert!(parts[2].lp.rows.is_empty() && parts[2].lp.objective.is_empty());
        // A point is feasible exactly when every part's share is, and its
        // value is the sum of the shares' values.
        for point in [[1.0, 0.0, 2.0, 0.0], [0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0]] {
            let whole = lp.feasible(&point).is_ok();
            let each = parts.iter().all(|p| p.lp.feasible(&p.restrict(&point)).is_ok());
            assert_eq!(whole, each, "{:?}", point);
            let sum: f64 = parts.iter().map(|p| p.lp.value_of(&p.restrict(&point))).sum();
            assert_eq!(lp.value_of(&point), sum);
        }
    }

    /// A program with some variables fixed: rows keep the fixed terms in
    /// their bounds, a row left with none of the free ones is left out,
    /// and a point of the fixed program put back into the whole is
    /// feasible exactly when the whole's point agreeing off the free
    /// variables is.
    #[test]
    fn fixing_moves_the_fixed_terms_into_the_bounds() {
        let mut lp = Lp::default();
        let a = lp.binary("a".into());
        let b = lp.binary("b".into());
        let c = lp.binary("c".into());
        let p = lp.var("p".into(), 0.0, 4.0, false);
        lp.row("abc".into(), vec![(a, 1.0), (b, 1.0), (c, 1.0)], 1.0, 2.0);
        lp.row("ap".into(), vec![(a, 2.0), (p, -1.0)], f64::NEG_INFINITY, 0.0);
        lp.row("c".into(), vec![(c, 1.0)], 0.0, 1.0);
        lp.objective = vec![(a, 5.0), (b, 3.0), (c, 1.0)];
        let at = [1.0, 0.0, 1.0, 2.0];
        assert!(lp.feasible(&at).is_ok());
        let piece = lp.fixing(&at, &[false, true, false, true]);
        assert_eq!(piece.vars, vec![b, p]);
        let names: Vec<&str> = piece.lp.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["abc", "ap"]);
        assert_eq!(piece.lp.rows[0].terms, [(LpVar(0), 1.0)]);
        assert_eq!((piece.lp.rows[0].lo, piece.lp.rows[0].hi), (-1.0, 0.0));
        assert_eq!(piece.lp.rows[1].terms, [(LpVar(1), -1.0)]);
        assert_eq!((piece.lp.rows[1].lo, piece.lp.rows[1].hi), (f64::NEG_INFINITY, -2.0));
        assert_eq!(piece.lp.objective, vec![(LpVar(0), 3.0)]);
        for (bv, pv) in [(0.0, 2.0), (1.0, 2.0), (0.0, 1.0), (1.0, 4.0)] {
            let whole = [1.0, bv, 1.0, pv];
            assert_eq!(piece.lp.feasible(&[bv, pv]).is_ok(), lp.feasible(&whole).is_ok(), "b = {}, p = {}", bv, pv);
            assert_eq!(lp.value_of(&whole) - piece.lp.value_of(&[bv, pv]), 6.0);
        }
    }

    /// What a solver hands back is checked whole: a NaN, which every
    /// bound and row comparison lets through, or a value too few, fails.
    #[test]
    fn a_point_with_a_nan_or_a_value_missing_is_not_feasible() {
        let mut lp = Lp::default();
        let a = lp.binary("a".into());
        let b = lp.binary("b".into());
        lp.row("ab".into(), vec![(a, 1.0), (b, 1.0)], 1.0, f64::INFINITY);
        assert!(lp.feasible(&[1.0, 0.0]).is_ok());
        assert!(lp.feasible(&[f64::NAN, 1.0]).is_err());
        assert!(lp.feasible(&[1.0, f64::INFINITY]).is_err());
        assert!(lp.feasible(&[1.0]).is_err());
        assert!(lp.feasible(&[1.0, 0.0, 0.0]).is_err());
    }

    #[test]
    fn reduced_fixes_the_uncosted_variables_every_row_would_move_one_way() {
        // A written array `m` (costed), an edge `x` (x ≤ m), a later read
        // `r` paid unless shared (`y`, by a sibling pair `s`), a chain row
        // that wants x or s apart, and `o`, `w` tied by an equation.
        let mut lp = Lp::default();
        let m = lp.binary("m".into());
        let x = lp.binary("x".into());
        let r = lp.var("r".into(), 0.0, 1.0, false);
        let y = lp.var("y".into(), 0.0, 1.0, false);
        let s = lp.binary("s".into());
        let o = lp.var("o".into(), 0.0, 1.0, false);
        let w = lp.binary("w".into());
        let t = lp.var("t".into(), 0.0, f64::INFINITY, false);
        lp.row("manifest".into(), vec![(x, 1.0), (m, -1.0)], f64::NEG_INFINITY, 0.0);
        lp.row("read".into(), vec![(r, 1.0), (y, 1.0), (x, -1.0)], 0.0, f64::INFINITY);
        lp.row("pays".into(), vec![(y, 1.0), (r, -1.0)], f64::NEG_INFINITY, 0.0);
        lp.row("share".into(), vec![(y, 1.0), (s, 1.0)], f64::NEG_INFINITY, 1.0);
        lp.row("chain".into(), vec![(x, 1.0), (s, 1.0)], 1.0, f64::INFINITY);
        lp.row("of".into(), vec![(o, 1.0), (w, -1.0)], 0.0, 0.0);
        lp.row("up".into(), vec![(t, 1.0), (w, 1.0)], 1.0, f64::INFINITY);
        lp.objective = vec![(x, 5.0), (r, 1.0), (s, 1.0)];
        let red = lp.reduced(&[(m, 1.0)]);
        let bounds = |v: LpVar| (red.vars[v.0].lo, red.vars[v.0].hi);
        // r pays (1), so the read row holds and y need not share (0); s
        // apart (1) satisfies the chain, so x may be fused (0); then the
        // manifest row holds whatever m is.
        assert_eq!([bounds(r), bounds(y), bounds(s), bounds(x)], [(1.0, 1.0), (0.0, 0.0), (1.0, 1.0), (0.0, 0.0)]);
        // The objective's variable, an equation's and an unbounded one
        // that its row would have go up stay free.
        assert_eq!([bounds(m), bounds(o), bounds(w), bounds(t)], [(0.0, 1.0), (0.0, 1.0), (0.0, 1.0), (0.0, f64::INFINITY)]);
        let names: Vec<&str> = red.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["of", "up"]);
        assert_eq!(red.objective, vec![(m, 1.0)]);
        assert!(red.vars.iter().all(|v| !v.integer));
        // Under the program's own objective x, r and s cost, and y has a
        // row either way: only m is fixed (written), which the manifest
        // row then always allows.
        let own = lp.reduced(&lp.objective);
        assert_eq!((own.vars[m.0].lo, own.vars[m.0].hi), (1.0, 1.0));
        assert!(own.vars.iter().zip(&lp.vars).skip(1).all(|(a, b)| (a.lo, a.hi) == (b.lo, b.hi)));
        assert_eq!(own.rows.len(), lp.rows.len() - 1);
    }

    #[test]
    fn sub_takes_the_chosen_rows_over_their_variables() {
        let mut lp = Lp::default();
        let a = lp.binary("a".into());
        let b = lp.binary("b".into());
        let c = lp.var("c".into(), 0.0, 3.0, false);
        let d = lp.binary("d".into());
        lp.row("cb".into(), vec![(c, 1.0), (b, 2.0)], 1.0, f64::INFINITY);
        lp.row("ad".into(), vec![(a, 1.0), (d, -1.0)], f64::NEG_INFINITY, 0.0);
        lp.row("bd".into(), vec![(b, 1.0), (d, 1.0)], 0.0, 1.0);
        lp.objective = vec![(d, 3.0), (c, 1.0), (a, -1.0)];
        let piece = lp.sub(|r| r.name != "ad");
        // b, c and d in their order here, renumbered; a is in no row kept.
        assert_eq!(piece.vars, vec![b, c, d]);
        assert_eq!(piece.lp.vars.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["b", "c", "d"]);
        assert_eq!(piece.lp.rows[0].terms, vec![(LpVar(1), 1.0), (LpVar(0), 2.0)]);
        assert_eq!(piece.lp.rows[1].terms, vec![(LpVar(0), 1.0), (LpVar(2), 1.0)]);
        assert_eq!((piece.lp.rows[1].lo, piece.lp.rows[1].hi), (0.0, 1.0));
        assert_eq!(piece.lp.objective, vec![(LpVar(2), 3.0), (LpVar(1), 1.0)]);
        assert_eq!(piece.restrict(&[0.5, 1.0, 2.0, 0.0]), vec![1.0, 2.0, 0.0]);
    }

    #[test]
    fn the_trivial_bound_takes_each_term_at_its_cheaper_bound() {
        let mut lp = Lp::default();
        let a = lp.binary("a".into());
        let b = lp.binary("b".into());
        let n = lp.var("n".into(), -2.0, 5.0, true);
        lp.row("ab".into(), vec![(a, 1.0), (b, 1.0)], 1.0, f64::INFINITY);
        lp.objective = vec![(a, 3.0), (b, -1.0), (n, 2.0)];
        // a at 0, b at 1, n at -2: 0 - 1 - 4.
        assert_eq!(lp.trivial_bound(), -5.0);
        assert!(lp.at_trivial_bound(&[0.0, 1.0, -2.0]));
        assert!(!lp.at_trivial_bound(&[1.0, 1.0, -2.0]));
        // An unbounded variable the objective wants lower: no bound.
        let free = lp.var("free".into(), f64::NEG_INFINITY, 0.0, false);
        lp.objective.push((free, 1.0));
        assert_eq!(lp.trivial_bound(), f64::NEG_INFINITY);
        assert!(!lp.at_trivial_bound(&[0.0, 1.0, -2.0, -1e9]));
    }
}
