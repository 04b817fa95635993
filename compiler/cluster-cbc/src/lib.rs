//! Solves afc's clustering ILP with COIN-OR CBC, under a time limit: the
//! best solution found is used if optimality is not proven in time.

use afc_ir::lp::{Lp, Solution, SolveStatus};
use coin_cbc::{Col, Model, Sense};

pub fn solve(lp: &Lp, time_limit: f64) -> Solution {
    let mut m = Model::default();
    m.set_parameter("log", "0");
    m.set_parameter("logLevel", "0");
    m.set_parameter("seconds", &format!("{}", time_limit.max(0.1)));
    // One thread: the same model gives the same answer every time.
    m.set_parameter("threads", "0");
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
    let sol = m.solve();
    let raw = sol.raw();
    let values: Vec<f64> = cols.iter().map(|c| sol.col(*c)).collect();
    let feasible = lp.feasible(&values).is_ok();
    let status = if raw.is_proven_optimal() && feasible {
        SolveStatus::Optimal
    } else if feasible && !raw.is_proven_infeasible() {
        SolveStatus::Feasible
    } else {
        SolveStatus::None
    };
    Solution { status, objective: lp.value_of(&values), values }
}
