//! The x86-64 System V lowering of an exported function's C signature, as a
//! C compiler does it: a 16-byte descriptor travels in two integer registers
//! when two remain, otherwise in memory (`byval`); larger ones always in
//! memory; scalars and output pointers each take one register of their
//! class while any remain.

use afc_ir::labelled::{Leaf, Operand, VarTy};
use afc_ir::loops::Function;

/// The passing of an exported function's arguments and results.
pub fn classify(f: &Function) -> (Vec<ParamPass>, Vec<ParamPass>) {
    let tys: Vec<VarTy> = f
        .params
        .iter()
        .map(|Leaf { value, .. }| {
            let Operand::Var(v) = value else { unreachable!("parameters are variables") };
            f.var(*v).ty
        })
        .collect();
    classify_types(&tys, f.results.len())
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamPass {
    /// One scalar argument.
    Scalar,
    /// A rank-1 descriptor split into (data pointer, extent).
    Split,
    /// A descriptor passed in memory: a `byval` pointer.
    ByVal,
    /// An output: a pointer to the caller's descriptor or scalar.
    OutPtr,
}

/// The passing of C arguments of these types followed by `results` output
/// pointers: the same for an export and for an extern afc calls.
pub fn classify_types(params: &[VarTy], results: usize) -> (Vec<ParamPass>, Vec<ParamPass>) {
    let mut gpr = 6;
    let mut sse = 8;
    let mut ins = vec![];
    for ty in params {
        ins.push(match *ty {
            VarTy::Scalar(p) => {
                if p.is_float() {
                    if sse > 0 {
                        sse -= 1;
                    }
                } else if gpr > 0 {
                    gpr -= 1;
                }
                ParamPass::Scalar
            }
            VarTy::Array(1, _) if gpr >= 2 => {
                gpr -= 2;
                ParamPass::Split
            }
            VarTy::Array(..) => ParamPass::ByVal,
        });
    }
    let outs = (0..results).map(|_| {
        if gpr > 0 {
            gpr -= 1;
        }
        ParamPass::OutPtr
    });
    (ins, outs.collect())
}
