//! afc's clustering ILPs solved with COIN-OR CBC: one thread, a
//! deterministic node limit, a wall-clock safety net, and the warm start's
//! objective as a cutoff. (CBC 2.10's C interface also takes an initial
//! solution, but given one it can report a fractional point as optimal, so
//! afc does not use it; `feasible` checks integrality as well.)

use afc_ir::lp::{Limits, Lp, Solution, SolveStatus, Stop};
use coin_cbc::{Col, Model, Sense};

#[derive(Debug)]
pub struct Cbc;

impl afc_ir::lp::Solver for Cbc {
    fn solve(&self, lp: &Lp, limits: Limits<'_>) -> Solution {
        solve(lp, limits)
    }
    /// CBC's C interface keeps no basis between solves: each is anew.
    fn relaxation(&self, lp: &Lp) -> Box<dyn afc_ir::lp::Relaxation + '_> {
        Box::new(afc_ir::lp::Resolve { solver: self, lp: lp.relaxed() })
    }
}

/// CBC's version, as `afc --version` reports it.
pub fn version() -> &'static str {
    coin_cbc::raw::Model::version()
}

pub fn solve(lp: &Lp, limits: Limits<'_>) -> Solution {
    let mut m = Model::default();
    m.set_parameter("log", "0");
    m.set_parameter("logLevel", "0");
    m.set_log_level(0);
    // CBC reads a zero time limit as "none": stop at once instead.
    m.set_parameter("seconds", &format!("{}", limits.seconds.max(1e-3)));
    m.set_parameter("maxNodes", &format!("{}", limits.nodes));
    // One thread: the same model gives the same answer every time.
    m.set_parameter("threads", "0");
    if !limits.heuristics {
        m.set_parameter("heur", "off");
    }
    let cols: Vec<Col> = lp
        .vars
        .iter()
        .map(|v| {
            let c = if v.integer { m.add_integer() } else { m.add_col() };
            m.set_col_lower(c, v.lo);
            m.set_col_upper(c, v.hi);
            c
        })
        .collect();
    for r in &lp.rows {
        let row = m.add_row();
        if r.lo > f64::NEG_INFINITY {
            m.set_row_lower(row, r.lo);
        }
        if r.hi < f64::INFINITY {
            m.set_row_upper(row, r.hi);
        }
        for (v, c) in &r.terms {
            m.set_weight(row, cols[v.0], *c);
        }
    }
    for (v, c) in &lp.objective {
        m.set_obj_coeff(cols[v.0], *c);
    }
    m.set_obj_sense(Sense::Minimize);
    // Half a unit above the start keeps solutions as good as it out.
    if let Some(start) = limits.start {
        m.set_parameter("cutoff", &format!("{}", lp.value_of(start) + 0.5));
    }
    let sol = m.solve();
    let raw = sol.raw();
    let values: Vec<f64> = cols.iter().map(|c| sol.col(*c)).collect();
    let feasible = lp.feasible(&values).is_ok();
    let stop = if raw.is_seconds_limit_reached() {
        Stop::TimeLimit
    } else if raw.is_node_limit_reached() {
        Stop::NodeLimit
    } else if raw.is_abandoned() {
        Stop::Failed("CBC abandoned the search")
    } else if raw.status() != coin_cbc::raw::Status::Finished {
        // Stopped for a reason afc sets no limit for.
        Stop::Failed("CBC stopped early")
    } else {
        Stop::Finished
    };
    let status = if raw.is_proven_optimal() && feasible {
        SolveStatus::Optimal
    } else if feasible && !raw.is_proven_infeasible() {
        SolveStatus::Feasible
    } else {
        SolveStatus::None
    };
    let objective = lp.value_of(&values);
    // Without a solution the values are no integer point (often the
    // relaxation's), so only CBC's own bound bounds the optimum.
    let bound = match status {
        SolveStatus::Optimal => objective,
        SolveStatus::Feasible => raw.best_possible_value().min(objective),
        SolveStatus::None => raw.best_possible_value(),
    };
    Solution { status, objective, values, bound, stop }
}
