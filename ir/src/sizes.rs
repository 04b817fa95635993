//! Sizes (papers/000 §1.3): every array's size as a class of equal sizes,
//! each class either flexible (the sizes of parameters, checked equal on
//! entry) or rigid (born inside the program: known only at run time, equal
//! only to itself), and every node's iteration size.

use crate::labelled::{Function, NodeId, Operand, VarId};
use indexmap::IndexMap;
use std::fmt::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SizeId(pub u32);

/// Where a size's value comes from at run time.
#[derive(Clone, Debug, PartialEq)]
pub enum SizeOrigin {
    /// The extent of these parameter arrays (all equal, checked on entry).
    Params(Vec<VarId>),
    /// A rigid size: the value of a scalar (a `generate`'s size argument).
    Scalar(Operand),
}

#[derive(Clone, Debug)]
pub struct Sizes {
    pub classes: Vec<SizeOrigin>,
    /// The size class of every array variable (dimension 0).
    pub of_array: IndexMap<VarId, SizeId>,
    /// The iteration size of every node.
    pub iteration: Vec<SizeId>,
}

impl Sizes {
    pub fn of_node(&self, n: NodeId) -> SizeId {
        self.iteration[n.0 as usize]
    }
    pub fn name(&self, s: SizeId) -> String {
        format!("n{}", s.0)
    }
}

/// `--emit=sizes`: each size class, each array's size, each node's iteration size.
pub fn print(f: &Function, s: &Sizes) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "fn {}", f.name);
    for (i, c) in s.classes.iter().enumerate() {
        let what = match c {
            SizeOrigin::Params(ps) => {
                let names: Vec<String> = ps.iter().map(|p| format!("|%{}|", f.var_name(*p))).collect();
                format!("flexible = {}", names.join(" = "))
            }
            SizeOrigin::Scalar(o) => format!("rigid = {}", f.operand(o)),
        };
        let _ = writeln!(out, "  size n{}: {}", i, what);
    }
    for (v, c) in &s.of_array {
        let _ = writeln!(out, "  %{}: [n{}]", f.var_name(*v), c.0);
    }
    for n in f.node_ids() {
        let _ = writeln!(out, "  node {} \"{}\" iterates n{}", n.0, f.node(n).name, s.of_node(n).0);
    }
    out
}
