//! The reference interpreter: evaluates the labelled program with plain
//! unfused semantics — every combinator a whole array, in source order. It is
//! the oracle that compiled code under every fusion mode is checked against.

use crate::ast::{BinOp, UnOp};
use crate::diag::Span;
use crate::labelled::*;
use crate::types::Prim;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
}

impl Scalar {
    pub fn from_const(c: Const) -> Scalar {
        match c {
            Const::Bool(b) => Scalar::Bool(b),
            Const::I32(v) => Scalar::I32(v),
            Const::I64(v) => Scalar::I64(v),
            Const::F32(v) => Scalar::F32(v),
            Const::F64(v) => Scalar::F64(v),
        }
    }
    pub fn as_i64(self) -> i64 {
        match self {
            Scalar::I64(v) => v,
            Scalar::I32(v) => v as i64,
            Scalar::Bool(b) => b as i64,
            Scalar::F32(v) => v as i64,
            Scalar::F64(v) => v as i64,
        }
    }
    pub fn as_bool(self) -> bool {
        matches!(self, Scalar::Bool(true))
    }
    pub fn prim(self) -> Prim {
        match self {
            Scalar::Bool(_) => Prim::Bool,
            Scalar::I32(_) => Prim::I32,
            Scalar::I64(_) => Prim::I64,
            Scalar::F32(_) => Prim::F32,
            Scalar::F64(_) => Prim::F64,
        }
    }
    /// Bitwise equality for floats (so NaN equals NaN), plain for the rest.
    pub fn same(self, o: Scalar) -> bool {
        match (self, o) {
            (Scalar::F32(a), Scalar::F32(b)) => a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            (Scalar::F64(a), Scalar::F64(b)) => a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            _ => self == o,
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Bool(b) => write!(f, "{}", *b as i32),
            Scalar::I32(v) => write!(f, "{}", v),
            Scalar::I64(v) => write!(f, "{}", v),
            // Round-trippable text, so drivers and the interpreter compare exactly.
            Scalar::F32(v) => write!(f, "{:e}", v),
            Scalar::F64(v) => write!(f, "{:e}", v),
        }
    }
}

/// A value crossing the function boundary: a scalar or a rank-1 array.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Scalar(Scalar),
    Array(Prim, Vec<Scalar>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum ErrorKind {
    IndexOutOfRange { index: i64, len: i64 },
    DivisionByZero,
    NegativeSize(i64),
    SizeMismatch(String),
    /// A `cross` whose `n·m` elements do not fit an i64.
    SizeOverflow(i64, i64),
    /// An array too large to allocate.
    OutOfMemory(i64),
    /// A call of C code, which the interpreter cannot make.
    Extern(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeError {
    pub kind: ErrorKind,
    pub span: Span,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::IndexOutOfRange { index, len } => write!(f, "index {} out of range for length {}", index, len),
            ErrorKind::DivisionByZero => write!(f, "integer division by zero"),
            ErrorKind::NegativeSize(n) => write!(f, "negative size {}", n),
            ErrorKind::SizeMismatch(s) => write!(f, "size mismatch: {}", s),
            ErrorKind::SizeOverflow(n, m) => write!(f, "{} * {} elements overflow", n, m),
            ErrorKind::OutOfMemory(n) => write!(f, "out of memory for {} elements", n),
            ErrorKind::Extern(g) => write!(f, "the interpreter cannot call extern fn '{}' (C code)", g),
        }
    }
}

enum Slot {
    Empty,
    S(Scalar),
    A(Vec<Scalar>),
}

struct Env {
    slots: Vec<Slot>,
}

impl Env {
    fn scalar(&self, o: &Operand) -> Scalar {
        match o {
            Operand::Const(c) => Scalar::from_const(*c),
            Operand::Var(v) => match &self.slots[v.0 as usize] {
                Slot::S(s) => *s,
                _ => panic!("interpreter: %{} is not a defined scalar", v.0),
            },
        }
    }
    fn array(&self, v: VarId) -> &Vec<Scalar> {
        match &self.slots[v.0 as usize] {
            Slot::A(a) => a,
            _ => panic!("interpreter: %{} is not a defined array", v.0),
        }
    }
    fn set(&mut self, v: VarId, s: Scalar) {
        self.slots[v.0 as usize] = Slot::S(s);
    }
}

type R<T> = Result<T, RuntimeError>;

/// Runs an exported function on leaf arguments (in `params` order) and
/// returns its result leaves (in `results` order).
pub fn run(f: &Function, args: &[Value]) -> R<Vec<Value>> {
    assert_eq!(args.len(), f.params.len(), "interpreter: wrong number of arguments");
    let mut env = Env { slots: (0..f.vars.len()).map(|_| Slot::Empty).collect() };
    for (p, a) in f.params.iter().zip(args) {
        if let Operand::Var(v) = p.value {
            env.slots[v.0 as usize] = match a {
                Value::Scalar(s) => Slot::S(*s),
                Value::Array(_, xs) => Slot::A(xs.clone()),
            };
        }
    }
    for it in &f.items {
        match it {
            Item::Stmt(s) => stmt(f, &mut env, s)?,
            Item::Node(n) => node(f, &mut env, f.node(*n))?,
        }
    }
    for (vs, span) in &f.same_size {
        let lens: Vec<usize> = vs.iter().map(|v| env.array(*v).len()).collect();
        if lens.windows(2).any(|w| w[0] != w[1]) {
            return Err(RuntimeError { kind: ErrorKind::SizeMismatch(format!("zip of arrays of lengths {:?}", lens)), span: *span });
        }
    }
    Ok(f.results
        .iter()
        .map(|l| match l.value {
            Operand::Var(v) if f.var(v).ty.is_array() => Value::Array(f.var(v).ty.prim(), env.array(v).clone()),
            o => Value::Scalar(env.scalar(&o)),
        })
        .collect())
}

/// Room for `len` elements, or the out-of-memory error compiled code gives.
fn room(len: usize, span: Span) -> R<Vec<Scalar>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| RuntimeError { kind: ErrorKind::OutOfMemory(len as i64), span })?;
    Ok(v)
}

fn node(f: &Function, env: &mut Env, n: &Node) -> R<()> {
    // Arrays streamed together (zipped, or the inputs of a map) share a size.
    let ins = n.streamed_inputs();
    if let Some(first) = ins.first() {
        let len = env.array(*first).len();
        if let Some(m) = ins.iter().map(|a| env.array(*a).len()).find(|m| *m != len) {
            return Err(RuntimeError {
                kind: ErrorKind::SizeMismatch(format!("{} over arrays of lengths {} and {}", n.combinator(), len, m)),
                span: n.span,
            });
        }
    }
    let gathered = n.gathered_inputs();
    if let Some(first) = gathered.first() {
        let len = env.array(*first).len();
        if let Some(m) = gathered.iter().map(|a| env.array(*a).len()).find(|m| *m != len) {
            return Err(RuntimeError { kind: ErrorKind::SizeMismatch(format!("gather from arrays of lengths {} and {}", len, m)), span: n.span });
        }
    }
    match &n.kind {
        NodeKind::Map(Map { f: l, inputs, outputs }) => {
            let len = env.array(inputs[0]).len();
            for i in inputs {
                let m = env.array(*i).len();
                if m != len {
                    return Err(RuntimeError {
                        kind: ErrorKind::SizeMismatch(format!("map over arrays of lengths {} and {}", len, m)),
                        span: n.span,
                    });
                }
            }
            let mut outs: Vec<Vec<Scalar>> = outputs.iter().map(|_| Vec::with_capacity(len)).collect();
            for i in 0..len {
                let args: Vec<Scalar> = inputs.iter().map(|a| env.array(*a)[i]).collect();
                let r = call(f, env, l, &args)?;
                for (o, v) in outs.iter_mut().zip(r) {
                    o.push(v);
                }
            }
            for (o, v) in outputs.iter().zip(outs) {
                env.slots[o.0 as usize] = Slot::A(v);
            }
        }
        NodeKind::Generate(Generate { size, f: l, outputs }) => {
            let len = env.scalar(size).as_i64();
            if len < 0 {
                return Err(RuntimeError { kind: ErrorKind::NegativeSize(len), span: n.span });
            }
            let mut outs: Vec<Vec<Scalar>> = outputs.iter().map(|_| room(len as usize, n.span)).collect::<R<_>>()?;
            for i in 0..len {
                let r = call(f, env, l, &[Scalar::I64(i)])?;
                for (o, v) in outs.iter_mut().zip(r) {
                    o.push(v);
                }
            }
            for (o, v) in outputs.iter().zip(outs) {
                env.slots[o.0 as usize] = Slot::A(v);
            }
        }
        NodeKind::Filter(Filter { p, inputs, outputs, count }) => {
            let len = env.array(inputs[0]).len();
            let mut outs: Vec<Vec<Scalar>> = outputs.iter().map(|_| vec![]).collect();
            for i in 0..len {
                let args: Vec<Scalar> = inputs.iter().map(|a| env.array(*a)[i]).collect();
                if call(f, env, p, &args)?[0].as_bool() {
                    for (o, a) in outs.iter_mut().zip(&args) {
                        o.push(*a);
                    }
                }
            }
            env.set(*count, Scalar::I64(outs[0].len() as i64));
            for (o, v) in outputs.iter().zip(outs) {
                env.slots[o.0 as usize] = Slot::A(v);
            }
        }
        NodeKind::Scan(Scan { dir, op, init, inputs, outputs }) => {
            let len = env.array(inputs[0]).len();
            let mut acc: Vec<Scalar> = init.iter().map(|o| env.scalar(o)).collect();
            let mut outs: Vec<Vec<Scalar>> = outputs.iter().map(|_| vec![acc[0]; len]).collect();
            let order: Vec<usize> = if *dir == ScanKind::Right { (0..len).rev().collect() } else { (0..len).collect() };
            for i in order {
                let xs: Vec<Scalar> = inputs.iter().map(|a| env.array(*a)[i]).collect();
                if *dir == ScanKind::Exclusive {
                    for (o, a) in outs.iter_mut().zip(&acc) {
                        o[i] = *a;
                    }
                }
                let args: Vec<Scalar> = if *dir == ScanKind::Right { xs.iter().chain(&acc).copied().collect() } else { acc.iter().chain(&xs).copied().collect() };
                acc = call(f, env, op, &args)?;
                if *dir != ScanKind::Exclusive {
                    for (o, a) in outs.iter_mut().zip(&acc) {
                        o[i] = *a;
                    }
                }
            }
            for (o, v) in outputs.iter().zip(outs) {
                env.slots[o.0 as usize] = Slot::A(v);
            }
        }
        NodeKind::Reverse(Reverse { inputs, outputs, .. }) | NodeKind::Force(Force { inputs, outputs, .. }) => {
            let rev = matches!(n.kind, NodeKind::Reverse(Reverse { .. }));
            for (i, o) in inputs.iter().zip(outputs) {
                let mut v = env.array(*i).clone();
                if rev {
                    v.reverse();
                }
                env.slots[o.0 as usize] = Slot::A(v);
            }
        }
        NodeKind::Extern(Extern { func, .. }) => return Err(RuntimeError { kind: ErrorKind::Extern(func.clone()), span: n.span }),
        NodeKind::Cross(Cross { inputs, split, outputs, .. }) => {
            let (a, b) = inputs.split_at(*split);
            let (rows, m) = (env.array(a[0]).len(), env.array(b[0]).len());
            let mut outs: Vec<Vec<Scalar>> = outputs.iter().map(|_| room(rows * m, n.span)).collect::<R<_>>()?;
            for i in 0..rows {
                for j in 0..m {
                    let elem = a.iter().map(|x| env.array(*x)[i]).chain(b.iter().map(|y| env.array(*y)[j]));
                    for (o, e) in outs.iter_mut().zip(elem) {
                        o.push(e);
                    }
                }
            }
            for (o, v) in outputs.iter().zip(outs) {
                env.slots[o.0 as usize] = Slot::A(v);
            }
        }
        NodeKind::Gather(Gather { index, source, outputs, .. }) => {
            let is = env.array(*index).clone();
            let len = env.array(source[0]).len() as i64;
            let mut outs: Vec<Vec<Scalar>> = outputs.iter().map(|_| Vec::with_capacity(is.len())).collect();
            for i in is {
                let i = i.as_i64();
                if i < 0 || i >= len {
                    return Err(RuntimeError { kind: ErrorKind::IndexOutOfRange { index: i, len }, span: n.span });
                }
                for (o, s) in outs.iter_mut().zip(source) {
                    o.push(env.array(*s)[i as usize]);
                }
            }
            for (o, v) in outputs.iter().zip(outs) {
                env.slots[o.0 as usize] = Slot::A(v);
            }
        }
        NodeKind::Scatter(Scatter { op, dest, src, outputs }) => {
            let mut outs: Vec<Vec<Scalar>> = dest.iter().map(|d| env.array(*d).clone()).collect();
            let len = outs[0].len() as i64;
            for j in 0..env.array(src[0]).len() {
                let i = env.array(src[0])[j].as_i64();
                if i < 0 {
                    continue;
                }
                if i >= len {
                    return Err(RuntimeError { kind: ErrorKind::IndexOutOfRange { index: i, len }, span: n.span });
                }
                let mut args: Vec<Scalar> = outs.iter().map(|o| o[i as usize]).collect();
                args.extend(src[1..].iter().map(|v| env.array(*v)[j]));
                let r = call(f, env, op, &args)?;
                for (o, v) in outs.iter_mut().zip(r) {
                    o[i as usize] = v;
                }
            }
            for (o, v) in outputs.iter().zip(outs) {
                env.slots[o.0 as usize] = Slot::A(v);
            }
        }
        NodeKind::Fold(Fold { op, init, inputs, outputs }) => {
            let len = env.array(inputs[0]).len();
            let mut acc: Vec<Scalar> = init.iter().map(|o| env.scalar(o)).collect();
            for i in 0..len {
                let mut args = acc.clone();
                args.extend(inputs.iter().map(|a| env.array(*a)[i]));
                acc = call(f, env, op, &args)?;
            }
            for (o, v) in outputs.iter().zip(acc) {
                env.set(*o, v);
            }
        }
    }
    Ok(())
}

fn call(f: &Function, env: &mut Env, l: &Lambda, args: &[Scalar]) -> R<Vec<Scalar>> {
    for (p, a) in l.params.iter().zip(args) {
        env.set(*p, *a);
    }
    block(f, env, &l.body)
}

fn block(f: &Function, env: &mut Env, b: &Block) -> R<Vec<Scalar>> {
    for s in &b.stmts {
        stmt(f, env, s)?;
    }
    Ok(b.results.iter().map(|o| env.scalar(o)).collect())
}

fn stmt(f: &Function, env: &mut Env, s: &Stmt) -> R<()> {
    match s {
        Stmt::Assign { dst, rhs, span } => {
            let v = eval(f, env, rhs, *span)?;
            env.set(*dst, v);
        }
        Stmt::If { dsts, cond, then, els, .. } => {
            let r = if env.scalar(cond).as_bool() { block(f, env, then)? } else { block(f, env, els)? };
            for (d, v) in dsts.iter().zip(r) {
                env.set(*d, v);
            }
        }
    }
    Ok(())
}

fn eval(_f: &Function, env: &Env, rhs: &Rhs, span: Span) -> R<Scalar> {
    Ok(match rhs {
        Rhs::Copy(o) => env.scalar(o),
        Rhs::Unary(op, o) => unary(*op, env.scalar(o)),
        Rhs::Binary(op, a, b) => binary(*op, env.scalar(a), env.scalar(b)).ok_or(RuntimeError { kind: ErrorKind::DivisionByZero, span })?,
        Rhs::Builtin(b, args) => {
            let a: Vec<Scalar> = args.iter().map(|o| env.scalar(o)).collect();
            builtin(*b, &a)
        }
        Rhs::Cast(p, o) => cast(*p, env.scalar(o)),
        Rhs::Select(c, a, b) => {
            if env.scalar(c).as_bool() {
                env.scalar(a)
            } else {
                env.scalar(b)
            }
        }
        Rhs::Index(a, ix) => {
            let arr = env.array(*a);
            let i = env.scalar(&ix[0]).as_i64();
            if i < 0 || i as usize >= arr.len() {
                return Err(RuntimeError { kind: ErrorKind::IndexOutOfRange { index: i, len: arr.len() as i64 }, span });
            }
            arr[i as usize]
        }
        Rhs::Length(a, _) => Scalar::I64(env.array(*a).len() as i64),
        Rhs::SizeProduct(a, b) => {
            let (n, m) = (env.scalar(a).as_i64(), env.scalar(b).as_i64());
            Scalar::I64(n.checked_mul(m).ok_or(RuntimeError { kind: ErrorKind::SizeOverflow(n, m), span })?)
        }
    })
}

pub fn unary(op: UnOp, v: Scalar) -> Scalar {
    use Scalar::*;
    match (op, v) {
        (UnOp::Neg, I32(x)) => I32(x.wrapping_neg()),
        (UnOp::Neg, I64(x)) => I64(x.wrapping_neg()),
        (UnOp::Neg, F32(x)) => F32(-x),
        (UnOp::Neg, F64(x)) => F64(-x),
        (UnOp::Not, Bool(x)) => Bool(!x),
        (UnOp::Not, I32(x)) => I32(!x),
        (UnOp::Not, I64(x)) => I64(!x),
        _ => panic!("interpreter: ill-typed unary operation"),
    }
}

macro_rules! int_ops {
    ($op:expr, $a:expr, $b:expr, $C:ident, $t:ty, $bits:expr) => {{
        let (a, b) = ($a, $b);
        Some(match $op {
            BinOp::Add => $C(a.wrapping_add(b)),
            BinOp::Sub => $C(a.wrapping_sub(b)),
            BinOp::Mul => $C(a.wrapping_mul(b)),
            BinOp::Div => {
                if b == 0 {
                    return None;
                }
                $C(a.wrapping_div(b))
            }
            BinOp::Rem => {
                if b == 0 {
                    return None;
                }
                $C(a.wrapping_rem(b))
            }
            BinOp::BitAnd => $C(a & b),
            BinOp::BitOr => $C(a | b),
            BinOp::BitXor => $C(a ^ b),
            BinOp::Shl => $C(a.wrapping_shl((b as u32) & ($bits - 1))),
            BinOp::Shr => $C(a.wrapping_shr((b as u32) & ($bits - 1))),
            BinOp::Eq => Bool(a == b),
            BinOp::Ne => Bool(a != b),
            BinOp::Lt => Bool(a < b),
            BinOp::Le => Bool(a <= b),
            BinOp::Gt => Bool(a > b),
            BinOp::Ge => Bool(a >= b),
            BinOp::And | BinOp::Or => unreachable!(),
        })
    }};
}

macro_rules! float_ops {
    ($op:expr, $a:expr, $b:expr, $C:ident) => {{
        let (a, b) = ($a, $b);
        Some(match $op {
            BinOp::Add => $C(a + b),
            BinOp::Sub => $C(a - b),
            BinOp::Mul => $C(a * b),
            BinOp::Div => $C(a / b),
            BinOp::Rem => $C(a % b),
            BinOp::Eq => Bool(a == b),
            BinOp::Ne => Bool(a != b),
            BinOp::Lt => Bool(a < b),
            BinOp::Le => Bool(a <= b),
            BinOp::Gt => Bool(a > b),
            BinOp::Ge => Bool(a >= b),
            _ => panic!("interpreter: ill-typed float operation"),
        })
    }};
}

/// A binary operation; `None` for an integer division by zero.
pub fn binary(op: BinOp, a: Scalar, b: Scalar) -> Option<Scalar> {
    use Scalar::*;
    match (a, b) {
        (I32(x), I32(y)) => int_ops!(op, x, y, I32, i32, 32),
        (I64(x), I64(y)) => int_ops!(op, x, y, I64, i64, 64),
        (F32(x), F32(y)) => float_ops!(op, x, y, F32),
        (F64(x), F64(y)) => float_ops!(op, x, y, F64),
        (Bool(x), Bool(y)) => Some(match op {
            BinOp::BitAnd | BinOp::And => Bool(x & y),
            BinOp::BitOr | BinOp::Or => Bool(x | y),
            BinOp::BitXor => Bool(x ^ y),
            BinOp::Eq => Bool(x == y),
            BinOp::Ne => Bool(x != y),
            _ => panic!("interpreter: ill-typed bool operation"),
        }),
        _ => panic!("interpreter: operands of different types"),
    }
}

extern "C" {
    // The C library's error function: the one compiled code calls, so results agree bitwise.
    fn erf(x: f64) -> f64;
    fn erff(x: f32) -> f32;
    fn tan(x: f64) -> f64;
    fn tanf(x: f32) -> f32;
}

pub fn builtin(b: Builtin, a: &[Scalar]) -> Scalar {
    use Builtin::*;
    use Scalar::*;
    match (b, a) {
        (Min, [I32(x), I32(y)]) => I32(*x.min(y)),
        (Min, [I64(x), I64(y)]) => I64(*x.min(y)),
        (Min, [F32(x), F32(y)]) => F32(x.min(*y)),
        (Min, [F64(x), F64(y)]) => F64(x.min(*y)),
        (Max, [I32(x), I32(y)]) => I32(*x.max(y)),
        (Max, [I64(x), I64(y)]) => I64(*x.max(y)),
        (Max, [F32(x), F32(y)]) => F32(x.max(*y)),
        (Max, [F64(x), F64(y)]) => F64(x.max(*y)),
        (Abs, [I32(x)]) => I32(x.wrapping_abs()),
        (Abs, [I64(x)]) => I64(x.wrapping_abs()),
        (Abs, [F32(x)]) => F32(x.abs()),
        (Abs, [F64(x)]) => F64(x.abs()),
        (Pow, [F32(x), F32(y)]) => F32(x.powf(*y)),
        (Pow, [F64(x), F64(y)]) => F64(x.powf(*y)),
        (Erf, [F32(x)]) => F32(unsafe { erff(*x) }),
        (Erf, [F64(x)]) => F64(unsafe { erf(*x) }),
        (Tan, [F32(x)]) => F32(unsafe { tanf(*x) }),
        (Tan, [F64(x)]) => F64(unsafe { tan(*x) }),
        (_, [F32(x)]) => F32(match b {
            Sqrt => x.sqrt(),
            Exp => x.exp(),
            Log => x.ln(),
            Sin => x.sin(),
            Cos => x.cos(),
            Floor => x.floor(),
            Ceil => x.ceil(),
            Round => x.round(),
            _ => unreachable!(),
        }),
        (_, [F64(x)]) => F64(match b {
            Sqrt => x.sqrt(),
            Exp => x.exp(),
            Log => x.ln(),
            Sin => x.sin(),
            Cos => x.cos(),
            Floor => x.floor(),
            Ceil => x.ceil(),
            Round => x.round(),
            _ => unreachable!(),
        }),
        _ => panic!("interpreter: ill-typed builtin {}", b.name()),
    }
}

/// Conversions: integer to float rounds, float to integer saturates (NaN gives 0).
pub fn cast(p: Prim, v: Scalar) -> Scalar {
    use Scalar::*;
    match (p, v) {
        (Prim::I32, I32(x)) => I32(x),
        (Prim::I32, I64(x)) => I32(x as i32),
        (Prim::I32, F32(x)) => I32(x as i32),
        (Prim::I32, F64(x)) => I32(x as i32),
        (Prim::I32, Bool(x)) => I32(x as i32),
        (Prim::I64, I32(x)) => I64(x as i64),
        (Prim::I64, I64(x)) => I64(x),
        (Prim::I64, F32(x)) => I64(x as i64),
        (Prim::I64, F64(x)) => I64(x as i64),
        (Prim::I64, Bool(x)) => I64(x as i64),
        (Prim::F32, I32(x)) => F32(x as f32),
        (Prim::F32, I64(x)) => F32(x as f32),
        (Prim::F32, F32(x)) => F32(x),
        (Prim::F32, F64(x)) => F32(x as f32),
        (Prim::F32, Bool(x)) => F32(x as i32 as f32),
        (Prim::F64, I32(x)) => F64(x as f64),
        (Prim::F64, I64(x)) => F64(x as f64),
        (Prim::F64, F32(x)) => F64(x as f64),
        (Prim::F64, F64(x)) => F64(x),
        (Prim::F64, Bool(x)) => F64(x as i32 as f64),
        (Prim::Bool, v) => v,
    }
}
