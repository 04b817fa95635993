//! The x86-64 System V lowering of an exported function's C signature, as a
//! C compiler does it: a 16-byte descriptor travels in two integer registers
//! when two remain, otherwise in memory (`byval`); larger ones always in
//! memory; scalars and output pointers each take one register of their
//! class while any remain.

use afc_ir::labelled::{Leaf, Operand, VarTy};
use afc_ir::loops::Function;

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

pub fn classify(f: &Function) -> (Vec<ParamPass>, Vec<ParamPass>) {
    let mut gpr = 6;
    let mut sse = 8;
    let mut ins = vec![];
    for Leaf { value, .. } in &f.params {
        let Operand::Var(v) = value else { unreachable!("parameters are variables") };
        ins.push(match f.var(*v).ty {
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
    let outs = f.results.iter().map(|_| {
        if gpr > 0 {
            gpr -= 1;
        }
        ParamPass::OutPtr
    });
    (ins, outs.collect())
}
