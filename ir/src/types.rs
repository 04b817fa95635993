//! Types of `.acc` values: scalar primitives, tuples and regular arrays.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Prim {
    Bool,
    I32,
    I64,
    F32,
    F64,
}

impl Prim {
    pub fn is_int(self) -> bool {
        matches!(self, Prim::I32 | Prim::I64)
    }
    pub fn is_float(self) -> bool {
        matches!(self, Prim::F32 | Prim::F64)
    }
    pub fn is_numeric(self) -> bool {
        self != Prim::Bool
    }
    pub fn name(self) -> &'static str {
        match self {
            Prim::Bool => "bool",
            Prim::I32 => "i32",
            Prim::I64 => "i64",
            Prim::F32 => "f32",
            Prim::F64 => "f64",
        }
    }
    pub fn from_name(s: &str) -> Option<Prim> {
        Some(match s {
            "bool" => Prim::Bool,
            "i32" => Prim::I32,
            "i64" => Prim::I64,
            "f32" => Prim::F32,
            "f64" => Prim::F64,
            _ => return None,
        })
    }
    /// The C type that the ABI uses for this primitive.
    pub fn c_name(self) -> &'static str {
        match self {
            Prim::Bool => "bool",
            Prim::I32 => "int32_t",
            Prim::I64 => "int64_t",
            Prim::F32 => "float",
            Prim::F64 => "double",
        }
    }
    /// Size in bytes of one element in memory.
    pub fn bytes(self) -> u64 {
        match self {
            Prim::Bool => 1,
            Prim::I32 | Prim::F32 => 4,
            Prim::I64 | Prim::F64 => 8,
        }
    }
}

/// A fully known type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    Prim(Prim),
    Tuple(Vec<Ty>),
    /// A regular array of rank 1..=3 whose elements are scalars or tuples.
    Array(u8, Box<Ty>),
}

impl Ty {
    pub fn is_array(&self) -> bool {
        matches!(self, Ty::Array(..))
    }
    /// True if no array occurs in the type.
    pub fn is_scalar_like(&self) -> bool {
        match self {
            Ty::Prim(_) => true,
            Ty::Tuple(ts) => ts.iter().all(Ty::is_scalar_like),
            Ty::Array(..) => false,
        }
    }
    /// The scalar leaves of a scalar or tuple type, left to right.
    pub fn leaves(&self) -> Vec<Prim> {
        let mut out = vec![];
        fn go(t: &Ty, out: &mut Vec<Prim>) {
            match t {
                Ty::Prim(p) => out.push(*p),
                Ty::Tuple(ts) => ts.iter().for_each(|t| go(t, out)),
                Ty::Array(_, e) => go(e, out),
            }
        }
        go(self, &mut out);
        out
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Prim(p) => write!(f, "{}", p.name()),
            Ty::Tuple(ts) => {
                write!(f, "(")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{}", t)?;
                }
                if ts.len() == 1 {
                    write!(f, ",")?;
                }
                write!(f, ")")
            }
            Ty::Array(r, e) => write!(f, "{}{}{}", "[".repeat(*r as usize), e, "]".repeat(*r as usize)),
        }
    }
}
