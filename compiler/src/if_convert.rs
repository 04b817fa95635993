//! If-conversion (docs/strategy.md, "Branches as selects"): an `if` in a
//! loop's worker whose branches are cheap and cannot fail runs both
//! branches and picks with a `select` — for a `bool` with a constant
//! branch, an `&` or `|` — so the worker is straight-line code that the
//! loop can run as vectors.
//!
//! `&&` and `||` reach the loop IR as `if`s (they short-circuit), so
//! quadtree's `p.0 >= cx && p.1 >= cy` was a branch per element: the
//! totals pass of its parallel filter tested each lane's bits one by one.
//! The rewrite is exact: nothing in a converted branch can fail or write,
//! and the back end's arithmetic gives no poison (shifts are masked,
//! integer arithmetic wraps, float-to-int casts saturate), so running the
//! branch not taken changes no value.

use afc_ir::ast::BinOp;
use afc_ir::labelled::{Block, Builtin, Const, Operand, Rhs, Stmt, VarInfo};
use afc_ir::loops::{block_fallible, Body, Function};
use afc_ir::types::Prim;

/// The most work (`crate::strategy::stmts_work`) the two branches of one
/// `if` may do together to be run both: a mispredicted branch costs some
/// 15–20 cycles, a handful of operations run for nothing far less, and a
/// vector loop runs both branches anyway.
pub const MAX_SPECULATED_WORK: u32 = 8;

/// Converts every `if` in the workers of `f`'s nests that can be.
pub fn if_convert(f: &mut Function) {
    let vars = f.vars.clone();
    for n in f.nests_mut() {
        n.root.body.visit_mut(&mut |b| {
            if let Body::Leaf(leaf, _) = b {
                if let Some(lam) = leaf.lambda_mut() {
                    convert_block(&vars, &mut lam.body);
                }
            }
        });
    }
}

/// Converts the `if`s of `b`, innermost first: an `a && b && c` chain is
/// an `if` inside an `if`, and the outer one can be converted only once
/// the inner one is straight-line.
fn convert_block(vars: &[VarInfo], b: &mut Block) {
    let stmts = std::mem::take(&mut b.stmts);
    for s in stmts {
        match s {
            Stmt::If { dsts, cond, mut then, mut els, span } => {
                convert_block(vars, &mut then);
                convert_block(vars, &mut els);
                // Branches that only pick values are already selects in the
                // back end; they are left as they are.
                if (then.stmts.is_empty() && els.stmts.is_empty()) || !speculable(vars, &then, &els) {
                    b.stmts.push(Stmt::If { dsts, cond, then, els, span });
                    continue;
                }
                b.stmts.append(&mut then.stmts);
                b.stmts.append(&mut els.stmts);
                for (i, dst) in dsts.into_iter().enumerate() {
                    let (t, e) = (then.results[i], els.results[i]);
                    let rhs = match (vars[dst.0 as usize].ty.prim(), t, e) {
                        (Prim::Bool, _, Operand::Const(Const::Bool(false))) => Rhs::Binary(BinOp::BitAnd, cond, t),
                        (Prim::Bool, Operand::Const(Const::Bool(true)), _) => Rhs::Binary(BinOp::BitOr, cond, e),
                        _ => Rhs::Select(cond, t, e),
                    };
                    b.stmts.push(Stmt::Assign { dst, rhs, span });
                }
            }
            s => b.stmts.push(s),
        }
    }
}

/// May both branches run, whichever the condition picks: straight-line,
/// nothing that can fail, no call into the math library (`tan`, `erf`:
/// calls LLVM cannot widen), and cheap enough together.
fn speculable(vars: &[VarInfo], then: &Block, els: &Block) -> bool {
    let straight = |b: &Block| {
        !block_fallible(vars, b)
            && b.stmts.iter().all(|s| matches!(s, Stmt::Assign { rhs, .. } if !matches!(rhs, Rhs::Builtin(Builtin::Tan | Builtin::Erf, _))))
    };
    straight(then) && straight(els) && crate::strategy::stmts_work(&then.stmts) + crate::strategy::stmts_work(&els.stmts) <= MAX_SPECULATED_WORK
}
