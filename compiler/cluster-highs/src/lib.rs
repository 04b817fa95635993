//! afc's clustering ILPs solved with HiGHS (the default solver): one
//! thread, a deterministic node limit, a wall-clock safety net, and the
//! warm start as a MIP start the answer must be at least as good as.
//!
//! Over `highs-sys`'s C API rather than the `highs` crate: that crate
//! panics on the model status a node limit ends in (`kSolutionLimit`), and
//! afc needs the dual bound and node count it does not expose; the calls
//! below are the few the Solver trait needs, each checked.

use afc_ir::lp::{Limits, Lp, NoPoint, Progress, Relaxation, Row, Solution, SolveStatus, Stop, Watch};
use highs_sys::*;
use std::ffi::{c_char, c_int, c_void, CStr, CString};

#[derive(Debug)]
pub struct Highs;

impl afc_ir::lp::Solver for Highs {
    fn solve(&self, lp: &Lp, limits: Limits<'_>) -> Solution {
        solve(lp, limits)
    }
    fn relaxation(&self, lp: &Lp) -> Box<dyn Relaxation + '_> {
        Box::new(Relaxed::new(lp))
    }
    fn counts_iterations(&self) -> bool {
        true
    }
}

/// A relaxation kept in one HiGHS instance: rows added to it keep the last
/// basis, so each solve after the first is a few dual simplex iterations.
struct Relaxed {
    h: Instance,
    n: usize,
}

impl Relaxed {
    fn new(lp: &Lp) -> Relaxed {
        let h = Instance::new();
        h.set("output_flag", Opt::Bool(false));
        // As `one_run`'s: one thread, the count every instance asks for.
        h.set("threads", Opt::Int(1));
        if !h.pass(lp, false) {
            afc_ir::ice::fail("cluster", "HiGHS refused a linear relaxation", &lp.to_lp_format());
        }
        Relaxed { h, n: lp.vars.len() }
    }
}

impl Relaxation for Relaxed {
    fn add_rows(&mut self, rows: &[Row]) {
        if rows.is_empty() {
            return;
        }
        // One call for the round: HiGHS keeps its matrix by columns, so each
        // row added alone rebuilt it (a fifth of a 300-combinator clustering).
        let (mut lower, mut upper, mut starts, mut index, mut value) = (vec![], vec![], vec![], vec![], vec![]);
        for r in rows {
            lower.push(r.lo);
            upper.push(r.hi);
            starts.push(index.len() as HighsInt);
            index.extend(r.terms.iter().map(|(v, _)| v.0 as HighsInt));
            value.extend(r.terms.iter().map(|(_, c)| *c));
        }
        // SAFETY: one bound pair and start per row, the starts index into
        // index and value (of equal length), and every index is a column of
        // the relaxation (the model's variables).
        let status = unsafe {
            Highs_addRows(self.h.0, rows.len() as HighsInt, lower.as_ptr(), upper.as_ptr(), index.len() as HighsInt, starts.as_ptr(), index.as_ptr(), value.as_ptr())
        };
        if status == STATUS_ERROR {
            afc_ir::ice::fail("cluster", "HiGHS refused the root cuts' rows", "");
        }
    }
    fn solve(&mut self, seconds: f64) -> Result<Vec<f64>, NoPoint> {
        self.h.set("time_limit", Opt::Double(seconds.max(0.0)));
        // SAFETY: a model was passed.
        if unsafe { Highs_run(self.h.0) } == STATUS_ERROR {
            return Err(NoPoint::Failed);
        }
        // SAFETY: the model was run.
        match unsafe { Highs_getModelStatus(self.h.0) } {
            MODEL_STATUS_OPTIMAL => {}
            MODEL_STATUS_REACHED_TIME_LIMIT => return Err(NoPoint::TimeLimit),
            _ => return Err(NoPoint::Failed),
        }
        let mut values = vec![0.0; self.n];
        // SAFETY: one value per column.
        unsafe { Highs_getSolution(self.h.0, values.as_mut_ptr(), std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut()) };
        // The first solve presolves; later ones would start anew with it,
        // and the dual simplex from the last basis is what makes a round
        // after the first cheap.
        self.h.set("presolve", Opt::Str("off"));
        Ok(values)
    }
}

/// A program's matrix by column and its bounds, as HiGHS takes them.
struct Matrix {
    n: usize,
    start: Vec<HighsInt>,
    index: Vec<HighsInt>,
    value: Vec<f64>,
    cost: Vec<f64>,
    lower: Vec<f64>,
    upper: Vec<f64>,
    row_lower: Vec<f64>,
    row_upper: Vec<f64>,
}

impl Matrix {
    fn of(lp: &Lp) -> Matrix {
        let n = lp.vars.len();
        let mut cols: Vec<Vec<(HighsInt, f64)>> = vec![vec![]; n];
        for (i, r) in lp.rows.iter().enumerate() {
            for (v, c) in &r.terms {
                cols[v.0].push((i as HighsInt, *c));
            }
        }
        let mut start = Vec::with_capacity(n + 1);
        let (mut index, mut value) = (vec![], vec![]);
        for col in &cols {
            start.push(index.len() as HighsInt);
            for (i, c) in col {
                index.push(*i);
                value.push(*c);
            }
        }
        start.push(index.len() as HighsInt);
        let mut cost = vec![0.0; n];
        for (v, c) in &lp.objective {
            cost[v.0] += c;
        }
        Matrix {
            n,
            start,
            index,
            value,
            cost,
            lower: lp.vars.iter().map(|v| v.lo).collect(),
            upper: lp.vars.iter().map(|v| v.hi).collect(),
            row_lower: lp.rows.iter().map(|r| r.lo).collect(),
            row_upper: lp.rows.iter().map(|r| r.hi).collect(),
        }
    }
}

/// HiGHS's version, as `afc --version` reports it.
pub fn version() -> String {
    // SAFETY: Highs_version returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(Highs_version()) }.to_string_lossy().trim_start_matches('v').to_string()
}

/// One HiGHS instance, destroyed when dropped.
struct Instance(*mut c_void);

impl Drop for Instance {
    fn drop(&mut self) {
        // SAFETY: created by Highs_create, destroyed once.
        unsafe { Highs_destroy(self.0) }
    }
}

impl Instance {
    fn new() -> Instance {
        // SAFETY: no preconditions.
        Instance(unsafe { Highs_create() })
    }
    fn set(&self, name: &str, value: Opt) {
        let key = CString::new(name).unwrap();
        // SAFETY: a live instance and a NUL-terminated option name; every
        // option set here exists with this type (a failure is afc's bug).
        let status = unsafe {
            match value {
                Opt::Bool(b) => Highs_setBoolOptionValue(self.0, key.as_ptr(), b as HighsInt),
                Opt::Int(i) => Highs_setIntOptionValue(self.0, key.as_ptr(), i),
                Opt::Double(d) => Highs_setDoubleOptionValue(self.0, key.as_ptr(), d),
                Opt::Str(v) => {
                    let v = CString::new(v).unwrap();
                    Highs_setStringOptionValue(self.0, key.as_ptr(), v.as_ptr())
                }
            }
        };
        if status == STATUS_ERROR {
            afc_ir::ice::fail("cluster", &format!("HiGHS refused its option {}", name), "");
        }
    }
    /// Passes the program (its relaxation unless `integer`); false if
    /// HiGHS refuses it.
    fn pass(&self, lp: &Lp, integer: bool) -> bool {
        let m = Matrix::of(lp);
        let integrality: Vec<HighsInt> = lp.vars.iter().map(|v| (integer && v.integer) as HighsInt).collect();
        // SAFETY: every array has the length HiGHS is told (n columns, the
        // rows' count, index.len() non-zeros, n + 1 column starts).
        let status = unsafe {
            Highs_passMip(
                self.0,
                m.n as HighsInt,
                lp.rows.len() as HighsInt,
                m.index.len() as HighsInt,
                MATRIX_FORMAT_COLUMN_WISE,
                OBJECTIVE_SENSE_MINIMIZE,
                0.0,
                m.cost.as_ptr(),
                m.lower.as_ptr(),
                m.upper.as_ptr(),
                m.row_lower.as_ptr(),
                m.row_upper.as_ptr(),
                m.start.as_ptr(),
                m.index.as_ptr(),
                m.value.as_ptr(),
                integrality.as_ptr(),
            )
        };
        status != STATUS_ERROR
    }
    fn info_f64(&self, name: &str) -> Option<f64> {
        let key = CString::new(name).unwrap();
        let mut v = 0.0;
        // SAFETY: a live instance, a NUL-terminated name, a valid out pointer.
        (unsafe { Highs_getDoubleInfoValue(self.0, key.as_ptr(), &mut v) } != STATUS_ERROR).then_some(v)
    }
    fn info_i32(&self, name: &str) -> Option<HighsInt> {
        let key = CString::new(name).unwrap();
        let mut v: HighsInt = 0;
        // SAFETY: as above.
        (unsafe { Highs_getIntInfoValue(self.0, key.as_ptr(), &mut v) } != STATUS_ERROR).then_some(v)
    }
}

enum Opt {
    Bool(bool),
    Int(HighsInt),
    Double(f64),
    Str(&'static str),
}

/// What the MIP interrupt callback is given: the observer, if any, and
/// the iteration limit.
struct Observer<'a> {
    watch: Option<Watch<'a>>,
    iterations: Option<u64>,
}

/// HiGHS's MIP interrupt callback, called where HiGHS checks its limits
/// (each cut round of the root, between nodes): passes where the search
/// stands to the observer (`Limits::progress`), and interrupts the search
/// at the first check once its simplex iterations reach
/// `Limits::iterations`. With one thread HiGHS runs the same steps in the
/// same order every time, so where it stops does not depend on the
/// machine.
unsafe extern "C" fn on_interrupt_check(_kind: c_int, _message: *const c_char, out: *const HighsCallbackDataOut, input: *mut HighsCallbackDataIn, data: *mut c_void) {
    if out.is_null() || data.is_null() {
        return;
    }
    // SAFETY: HiGHS passes its output data and the pointer given to
    // Highs_setCallback, an `Observer` alive for the whole run.
    let (out, observer) = unsafe { (&*out, &*(data as *const Observer)) };
    if let Some(watch) = observer.watch {
        let p = Progress { seconds: out.running_time, nodes: out.mip_node_count.max(0) as u64, incumbent: out.mip_primal_bound, bound: out.mip_dual_bound };
        // A panic must not cross into C++.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (watch.0)(p)));
    }
    if observer.iterations.is_some_and(|limit| out.mip_total_lp_iterations.max(0) as u64 >= limit) && !input.is_null() {
        // SAFETY: HiGHS's input data for this callback, non-null.
        unsafe { (*input).user_interrupt = 1 };
    }
}

pub fn solve(lp: &Lp, limits: Limits<'_>) -> Solution {
    let n = lp.vars.len();
    // A model HiGHS refuses, or a run that fails: no solution, no bound,
    // and nothing proven (the start is not optimal for want of a better).
    let fail = || Solution { status: SolveStatus::None, values: vec![0.0; n], objective: f64::INFINITY, bound: f64::NEG_INFINITY, stop: Stop::Failed("HiGHS refused the model or its run failed") };
    let clock = std::time::Instant::now();
    let Some(mut run) = one_run(lp, &limits, limits.seconds, true) else { return fail() };
    // HiGHS 1.16 can report a better solution than the one it hands back:
    // given a start, with presolve on, it has returned the start itself
    // beside the better objective it found (a 29-column part of
    // `--ilp-model=lazy`, objective 202 reported, 269 returned). Such a
    // run is solved again without presolve; if that also disagrees, its
    // solution is not taken for proven.
    let stale = |r: &Run| r.values.as_ref().is_some_and(|v| r.reported + 0.5 < lp.value_of(v));
    if stale(&run) {
        let left = limits.seconds - clock.elapsed().as_secs_f64();
        match one_run(lp, &limits, left, false) {
            Some(again) => run = again,
            None => return fail(),
        }
    }
    let trusted = !stale(&run);
    let cutoff = limits.start.map(|s| lp.value_of(s) + 0.5);
    let Run { model, values, dual, .. } = run;
    let has_solution = values.is_some();
    let values = values.unwrap_or_else(|| vec![0.0; n]);
    let stop = match model {
        _ if !trusted => Stop::Failed("HiGHS's solution is dearer than the objective it reports"),
        MODEL_STATUS_OPTIMAL | MODEL_STATUS_MODEL_EMPTY => Stop::Finished,
        // With a legal start there is a solution: only a model without one
        // has finished infeasible.
        MODEL_STATUS_INFEASIBLE if limits.start.is_none() => Stop::Finished,
        MODEL_STATUS_REACHED_TIME_LIMIT => Stop::TimeLimit,
        MODEL_STATUS_REACHED_SOLUTION_LIMIT | MODEL_STATUS_REACHED_ITERATION_LIMIT => Stop::NodeLimit,
        MODEL_STATUS_REACHED_INTERRUPT => Stop::IterationLimit,
        _ => Stop::Failed(status_name(model)),
    };
    let feasible = has_solution && lp.feasible(&values).is_ok();
    let objective = if feasible { lp.value_of(&values) } else { f64::INFINITY };
    // Only a solution at least as good as the start counts (the cutoff's
    // meaning, as CBC's).
    let beats = feasible && cutoff.is_none_or(|c| objective < c);
    let optimal = model == MODEL_STATUS_OPTIMAL && trusted;
    let status = match (beats, optimal) {
        (true, true) => SolveStatus::Optimal,
        (true, false) => SolveStatus::Feasible,
        (false, _) => SolveStatus::None,
    };
    let bound = match status {
        SolveStatus::Optimal => objective,
        SolveStatus::Feasible => dual.min(objective),
        // Nothing as good as the start: a finished search proves it optimal.
        SolveStatus::None if optimal => cutoff.map(|c| c - 0.5).unwrap_or(dual),
        SolveStatus::None => dual,
    };
    Solution { status, objective, values, bound, stop }
}

/// What a model status afc does not expect means, for `-v`.
fn status_name(model: HighsInt) -> &'static str {
    match model {
        MODEL_STATUS_LOAD_ERROR => "HiGHS: load error",
        MODEL_STATUS_MODEL_ERROR => "HiGHS: model error",
        MODEL_STATUS_PRESOLVE_ERROR => "HiGHS: presolve error",
        MODEL_STATUS_SOLVE_ERROR => "HiGHS: solve error",
        MODEL_STATUS_POSTSOLVE_ERROR => "HiGHS: postsolve error",
        MODEL_STATUS_INFEASIBLE => "HiGHS reports a model with a legal start infeasible",
        MODEL_STATUS_UNBOUNDED_OR_INFEASIBLE | MODEL_STATUS_UNBOUNDED => "HiGHS reports the model unbounded",
        MODEL_STATUS_REACHED_MEMORY_LIMIT => "HiGHS ran out of memory",
        MODEL_STATUS_HIGHS_INTERRUPT => "HiGHS was interrupted",
        _ => "HiGHS ended in an unknown state",
    }
}

/// One HiGHS run of the MIP: its model status, the solution it hands
/// back (None without one), the objective it reports for it, and its dual
/// bound. None: HiGHS refused the model or the run failed.
struct Run {
    model: HighsInt,
    values: Option<Vec<f64>>,
    reported: f64,
    dual: f64,
}

fn one_run(lp: &Lp, limits: &Limits<'_>, seconds: f64, presolve: bool) -> Option<Run> {
    let n = lp.vars.len();
    let h = Instance::new();
    h.set("output_flag", Opt::Bool(false));
    // One thread: the same model gives the same answer every time. Every
    // instance must ask for the same count: HiGHS's scheduler is one per
    // process, and a run asking for another fails (docs/ilp.md).
    h.set("threads", Opt::Int(1));
    h.set("time_limit", Opt::Double(seconds.max(0.0)));
    // HiGHS counts the root as a node; afc's limit counts those after it.
    h.set("mip_max_nodes", Opt::Int(limits.nodes.saturating_add(1).min(HighsInt::MAX as u64) as HighsInt));
    if !limits.heuristics {
        h.set("mip_heuristic_effort", Opt::Double(0.0));
    }
    // The start is the relaxation rounded (ilp.rs, warm_start), which is
    // what RENS and the root reduced-cost heuristic would look for, as
    // sub-MIPs at the root: off, 100-combinator programs are proven
    // optimal in 0.5-2 s instead of 0.6-3.7 s, the same optima (docs/ilp.md).
    h.set("mip_heuristic_run_rens", Opt::Bool(false));
    h.set("mip_heuristic_run_root_reduced_cost", Opt::Bool(false));
    // The feasibility jump looks for a first solution, which a start
    // already is; and a restart after the root (presolve and the root
    // again, once enough columns are fixed) costs more than it saves on
    // these models: both off, 100-combinator programs are proven in
    // 22 s instead of 25.5 s (48 seeds), half again as many within
    // 0.2 s (docs/ilp.md).
    if limits.start.is_some() {
        h.set("mip_heuristic_run_feasibility_jump", Opt::Bool(false));
    }
    h.set("mip_allow_restart", Opt::Bool(false));
    // Prove optimality exactly: objectives are sums of integer weights.
    h.set("mip_rel_gap", Opt::Double(0.0));
    h.set("mip_abs_gap", Opt::Double(0.5));
    if !presolve {
        h.set("presolve", Opt::Str("off"));
    }
    if limits.iterations.is_some() {
        // Strong branching runs its LP iterations where HiGHS calls no
        // callback (a 200-combinator program: 2.5 s, 25,000 iterations at
        // its first nodes), past any iteration limit: under one, branch by
        // pseudo-costs alone.
        h.set("mip_pscost_minreliable", Opt::Int(0));
    }
    if !h.pass(lp, true) {
        return None;
    }
    if let Some(s) = limits.start {
        // SAFETY: s has one value per column; no row values or duals.
        unsafe { Highs_setSolution(h.0, s.as_ptr(), std::ptr::null(), std::ptr::null(), std::ptr::null()) };
    }
    let observer = Observer { watch: limits.progress, iterations: limits.iterations };
    if observer.watch.is_some() || observer.iterations.is_some() {
        // SAFETY: the callback and its data (`observer`, which outlives
        // the run below) are valid for as long as the instance runs.
        unsafe {
            Highs_setCallback(h.0, Some(on_interrupt_check), &observer as *const Observer as *mut c_void);
            Highs_startCallback(h.0, kHighsCallbackMipInterrupt as _);
        }
    }
    // SAFETY: a model was passed.
    if unsafe { Highs_run(h.0) } == STATUS_ERROR {
        return None;
    }
    // SAFETY: a live instance.
    let model = unsafe { Highs_getModelStatus(h.0) };
    let mut values = vec![0.0; n];
    let has_solution = h.info_i32("primal_solution_status") == Some(SOLUTION_STATUS_FEASIBLE);
    if has_solution {
        // SAFETY: one value per column; the other outputs are not asked for.
        unsafe { Highs_getSolution(h.0, values.as_mut_ptr(), std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut()) };
    }
    Some(Run {
        model,
        values: has_solution.then_some(values),
        reported: h.info_f64("objective_function_value").unwrap_or(f64::INFINITY),
        dual: h.info_f64("mip_dual_bound").filter(|b| b.is_finite()).unwrap_or(f64::NEG_INFINITY),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use afc_ir::lp::Solver;

    /// min 3a + 2b + 4c, a + b ≥ 1, b + c ≥ 1, a + c ≥ 1 (binaries): any
    /// two of them, the cheapest a and b, 5; the relaxation's ½ each, 4.5.
    fn triangle() -> Lp {
        let mut lp = Lp::default();
        let v: Vec<_> = ["a", "b", "c"].iter().map(|n| lp.binary(n.to_string())).collect();
        for (i, j) in [(0, 1), (1, 2), (0, 2)] {
            lp.row(format!("r{}{}", i, j), vec![(v[i], 1.0), (v[j], 1.0)], 1.0, f64::INFINITY);
        }
        lp.objective = vec![(v[0], 3.0), (v[1], 2.0), (v[2], 4.0)];
        lp
    }

    fn limits(start: Option<&[f64]>) -> Limits<'_> {
        Limits { nodes: 100, iterations: None, seconds: 10.0, start, heuristics: true, progress: None }
    }

    #[test]
    fn solves_to_optimality() {
        let sol = Highs.solve(&triangle(), limits(None));
        assert_eq!(sol.status, SolveStatus::Optimal);
        assert_eq!(sol.stop, Stop::Finished);
        assert_eq!(sol.objective, 5.0);
        assert_eq!(sol.values.iter().map(|v| v.round() as i32).collect::<Vec<_>>(), vec![1, 1, 0]);
    }

    #[test]
    fn only_solutions_as_good_as_the_start_count() {
        let lp = triangle();
        // The optimum as start: it stands, proven.
        let best = [1.0, 1.0, 0.0];
        let sol = Highs.solve(&lp, limits(Some(&best)));
        assert_eq!((sol.status, sol.stop, sol.objective), (SolveStatus::Optimal, Stop::Finished, 5.0));
        // A worse start is beaten.
        let worse = [1.0, 1.0, 1.0];
        let sol = Highs.solve(&lp, limits(Some(&worse)));
        assert_eq!((sol.status, sol.objective), (SolveStatus::Optimal, 5.0));
        // A start better than any solution (here infeasible, below the
        // optimum): nothing is as good, and that is proven.
        let below = [1.0, 0.0, 0.0];
        let sol = Highs.solve(&lp, limits(Some(&below)));
        assert_eq!((sol.status, sol.stop, sol.bound), (SolveStatus::None, Stop::Finished, 3.0));
    }

    /// A covering problem HiGHS's presolve does not solve: 40 binaries,
    /// 60 rows of three each, at least two of each three chosen.
    fn cover() -> Lp {
        let mut lp = Lp::default();
        let v: Vec<_> = (0..40).map(|i| lp.binary(format!("v{}", i))).collect();
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for r in 0..60 {
            let mut terms: Vec<_> = Vec::new();
            while terms.len() < 3 {
                let k = next(40) as usize;
                if !terms.iter().any(|(x, _)| *x == v[k]) {
                    terms.push((v[k], 1.0));
                }
            }
            lp.row(format!("r{}", r), terms, 2.0, f64::INFINITY);
        }
        lp.objective = v.iter().map(|x| (*x, 10.0 + next(90) as f64)).collect();
        lp
    }

    #[test]
    fn an_iteration_limit_stops_the_search_the_same_way_every_time() {
        let lp = cover();
        let whole = Highs.solve(&lp, limits(None));
        assert_eq!((whole.status, whole.stop), (SolveStatus::Optimal, Stop::Finished));
        let all = vec![1.0; 40];
        let stopped = |start| Highs.solve(&lp, Limits { iterations: Some(0), ..limits(start) });
        // Stopped at its first check: the start stands, with a bound no
        // higher than the optimum.
        let a = stopped(Some(&all));
        assert_eq!(a.stop, Stop::IterationLimit);
        assert!(a.bound <= whole.objective + 1e-6, "{} > {}", a.bound, whole.objective);
        let b = stopped(Some(&all));
        assert_eq!((a.status, a.objective, a.bound, &a.values), (b.status, b.objective, b.bound, &b.values));
        // A limit the proof fits in changes nothing.
        let roomy = Highs.solve(&lp, Limits { iterations: Some(1_000_000), ..limits(None) });
        assert_eq!((roomy.status, roomy.stop, roomy.objective), (SolveStatus::Optimal, Stop::Finished, whole.objective));
        assert!(Highs.counts_iterations());
    }

    #[test]
    fn an_infeasible_model_has_no_solution() {
        let mut lp = triangle();
        lp.row("none".into(), vec![(afc_ir::lp::LpVar(0), 1.0), (afc_ir::lp::LpVar(1), 1.0), (afc_ir::lp::LpVar(2), 1.0)], f64::NEG_INFINITY, 1.0);
        let sol = Highs.solve(&lp, limits(None));
        assert_eq!((sol.status, sol.stop), (SolveStatus::None, Stop::Finished));
    }

    /// A run HiGHS refuses proves nothing: with a start, it is not taken
    /// for the optimum for want of a better (it was, until 2026-11-29).
    #[test]
    fn a_refused_model_proves_nothing() {
        let mut lp = triangle();
        // HiGHS refuses a matrix with an infinite entry (a NaN it takes).
        lp.rows[0].terms[0].1 = f64::INFINITY;
        let start = [1.0, 1.0, 1.0];
        let sol = Highs.solve(&lp, limits(Some(&start)));
        assert_eq!(sol.status, SolveStatus::None);
        assert!(matches!(sol.stop, Stop::Failed(_)), "{:?}", sol.stop);
        assert_eq!(sol.bound, f64::NEG_INFINITY);
    }

    #[test]
    fn a_relaxation_takes_rows_and_solves_again() {
        let lp = triangle();
        let mut r = Highs.relaxation(&lp);
        let half = r.solve(10.0).unwrap();
        assert!((lp.value_of(&half) - 4.5).abs() < 1e-9, "{:?}", half);
        // a + b + c ≥ 2 (an odd-cycle cut): the integer optimum.
        r.add_rows(&[Row { name: "odd".into(), terms: (0..3).map(|i| (afc_ir::lp::LpVar(i), 1.0)).collect(), lo: 2.0, hi: f64::INFINITY }]);
        let whole = r.solve(10.0).unwrap();
        assert!((lp.value_of(&whole) - 5.0).abs() < 1e-9, "{:?}", whole);
    }

    #[test]
    fn version_is_a_version() {
        assert!(version().split('.').count() >= 2, "{}", version());
    }
}
