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

/// A value crossing the function boundary: a scalar, or an array (its
/// element type, its shape — one extent per dimension — and its elements in
/// row-major order).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Scalar(Scalar),
    Array(Prim, Vec<usize>, Vec<Scalar>),
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
    /// Recursive calls nested deeper than `MAX_RECURSION`.
    Recursion(i64),
}

/// How deep recursive functions may call each other (runtime-c/afc.h's
/// `AFC_MAX_RECURSION`, which compiled code also obeys).
pub const MAX_RECURSION: i64 = 10000;

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
            ErrorKind::Recursion(n) => write!(f, "recursion more than {} calls deep", n),
        }
    }
}

/// An array: its shape and its elements, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct Arr {
    pub shape: Vec<usize>,
    pub data: Vec<Scalar>,
}

impl Arr {
    fn vector(data: Vec<Scalar>) -> Arr {
        Arr { shape: vec![data.len()], data }
    }
    /// The length of the innermost dimension (a row's), and the number of rows.
    fn rows(&self) -> (usize, usize) {
        let row = *self.shape.last().unwrap_or(&0);
        (self.data.len().checked_div(row).unwrap_or(self.shape[..self.shape.len().saturating_sub(1)].iter().product()), row)
    }
}

enum Slot {
    Empty,
    S(Scalar),
    A(Arr),
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
    fn arr(&self, v: VarId) -> &Arr {
        match &self.slots[v.0 as usize] {
            Slot::A(a) => a,
            _ => panic!("interpreter: %{} is not a defined array", v.0),
        }
    }
    fn array(&self, v: VarId) -> &Vec<Scalar> {
        &self.arr(v).data
    }
    fn set(&mut self, v: VarId, s: Scalar) {
        self.slots[v.0 as usize] = Slot::S(s);
    }
    fn put(&mut self, v: VarId, shape: Vec<usize>, data: Vec<Scalar>) {
        self.slots[v.0 as usize] = Slot::A(Arr { shape, data });
    }
}

type R<T> = Result<T, RuntimeError>;

/// Runs an exported function on leaf arguments (in `params` order) and
/// returns its result leaves (in `results` order); `program` holds the
/// recursive functions it may call.
pub fn run(program: &Program, f: &Function, args: &[Value]) -> R<Vec<Value>> {
    // A recursive function's own call counts, as compiled code counts it.
    let mut cx = Cx { program, depth: f.recursive as i64 };
    call_fn(&mut cx, f, args)
}

/// What evaluation needs beyond one function: the functions recursive
/// calls reach, and how deep they are.
struct Cx<'p> {
    program: &'p Program,
    depth: i64,
}

fn call_fn(cx: &mut Cx, f: &Function, args: &[Value]) -> R<Vec<Value>> {
    assert_eq!(args.len(), f.params.len(), "interpreter: wrong number of arguments");
    let mut env = Env { slots: (0..f.vars.len()).map(|_| Slot::Empty).collect() };
    for (p, a) in f.params.iter().zip(args) {
        if let Operand::Var(v) = p.value {
            env.slots[v.0 as usize] = match a {
                Value::Scalar(s) => Slot::S(*s),
                Value::Array(_, shape, xs) => Slot::A(Arr { shape: shape.clone(), data: xs.clone() }),
            };
        }
    }
    body(cx, f, &mut env)?;
    Ok(f.results.iter().map(|l| value(f, &env, &l.value)).collect())
}

fn value(f: &Function, env: &Env, o: &Operand) -> Value {
    match *o {
        Operand::Var(v) if f.var(v).ty.is_array() => Value::Array(f.var(v).ty.prim(), env.arr(v).shape.clone(), env.array(v).clone()),
        o => Value::Scalar(env.scalar(&o)),
    }
}

/// Runs the items of a function or of an `if` branch.
fn body(cx: &mut Cx, f: &Function, env: &mut Env) -> R<()> {
    for it in &f.items {
        match it {
            Item::Stmt(s) => stmt(f, env, s)?,
            Item::Node(n) => match &f.node(*n).kind {
                NodeKind::If(c) => {
                    let b = if env.scalar(&c.cond).as_bool() { &c.then } else { &c.els };
                    body(cx, b, env)?;
                    for (o, r) in c.outputs.iter().zip(&b.results) {
                        env.slots[o.0 as usize] = match value(f, env, &r.value) {
                            Value::Scalar(s) => Slot::S(s),
                            Value::Array(_, shape, data) => Slot::A(Arr { shape, data }),
                        };
                    }
                }
                NodeKind::Extern(e) if e.callee == Callee::Afc => {
                    let n = f.node(*n);
                    let callee = cx.program.functions.iter().find(|g| g.name == e.func).expect("interpreter: a call of a function the program lacks");
                    if cx.depth >= MAX_RECURSION {
                        return Err(RuntimeError { kind: ErrorKind::Recursion(MAX_RECURSION), span: n.span });
                    }
                    let args: Vec<Value> = e.args.iter().map(|a| value(f, env, a)).collect();
                    cx.depth += 1;
                    let rs = call_fn(cx, callee, &args);
                    cx.depth -= 1;
                    for (o, r) in e.outputs.iter().zip(rs?) {
                        env.slots[o.0 as usize] = match r {
                            Value::Scalar(s) => Slot::S(s),
                            Value::Array(_, shape, data) => Slot::A(Arr { shape, data }),
                        };
                    }
                    for (leaves, len) in &e.arrays {
                        let n = env.arr(leaves[0]).shape[0] as i64;
                        env.set(*len, Scalar::I64(n));
                    }
                }
                _ => node(f, env, f.node(*n))?,
            },
        }
    }
    for (vs, span) in &f.same_size {
        let shapes: Vec<&Vec<usize>> = vs.iter().map(|v| &env.arr(*v).shape).collect();
        if shapes.windows(2).any(|w| w[0] != w[1]) {
            return Err(RuntimeError { kind: ErrorKind::SizeMismatch(format!("zip of arrays of shapes {:?}", shapes)), span: *span });
        }
    }
    Ok(())
}

/// Room for `len` elements, or the out-of-memory error compiled code gives.
fn room(len: usize, span: Span) -> R<Vec<Scalar>> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| RuntimeError { kind: ErrorKind::OutOfMemory(len as i64), span })?;
    Ok(v)
}

/// The row-major index of `ix` in an array of `shape`, or the error of
/// the first index out of range.
fn linear(ix: &[i64], shape: &[usize], span: Span) -> R<usize> {
    let mut k = 0usize;
    for (i, n) in ix.iter().zip(shape) {
        if *i < 0 || *i as usize >= *n {
            return Err(RuntimeError { kind: ErrorKind::IndexOutOfRange { index: *i, len: *n as i64 }, span });
        }
        k = k * n + *i as usize;
    }
    Ok(k)
}

/// The multi-dimensional index of row-major position `k` in `shape`.
fn unlinear(mut k: usize, shape: &[usize]) -> Vec<i64> {
    let mut ix = vec![0i64; shape.len()];
    for d in (0..shape.len()).rev() {
        ix[d] = (k % shape[d].max(1)) as i64;
        k /= shape[d].max(1);
    }
    ix
}

fn node(f: &Function, env: &mut Env, n: &Node) -> R<()> {
    // Arrays streamed together (zipped, or the inputs of a map) share a shape.
    for group in [n.streamed_inputs(), n.gathered_inputs()] {
        if let Some(first) = group.first() {
            let sh = env.arr(*first).shape.clone();
            if let Some(m) = group.iter().map(|a| env.arr(*a).shape.clone()).find(|m| *m != sh) {
                return Err(RuntimeError { kind: ErrorKind::SizeMismatch(format!("{} over arrays of shapes {:?} and {:?}", n.combinator(), sh, m)), span: n.span });
            }
        }
    }
    match &n.kind {
        NodeKind::Map(Map { f: l, inputs, outputs }) => {
            let a = env.arr(inputs[0]).clone();
            let len = a.data.len();
            let mut outs: Vec<Vec<Scalar>> = outputs.iter().map(|_| Vec::with_capacity(len)).collect();
            for i in 0..len {
                let args: Vec<Scalar> = inputs.iter().map(|a| env.array(*a)[i]).collect();
                let r = call(f, env, l, &args)?;
                for (o, v) in outs.iter_mut().zip(r) {
                    o.push(v);
                }
            }
            for (o, v) in outputs.iter().zip(outs) {
                env.put(*o, a.shape.clone(), v);
            }
        }
        NodeKind::Generate(Generate { shape, f: l, outputs }) => {
            let mut dims = vec![];
            for s in shape {
                let len = env.scalar(s).as_i64();
                if len < 0 {
                    return Err(RuntimeError { kind: ErrorKind::NegativeSize(len), span: n.span });
                }
                dims.push(len as usize);
            }
            let total = dims.iter().try_fold(1usize, |a, d| a.checked_mul(*d)).ok_or(RuntimeError { kind: ErrorKind::OutOfMemory(i64::MAX), span: n.span })?;
            let mut outs: Vec<Vec<Scalar>> = outputs.iter().map(|_| room(total, n.span)).collect::<R<_>>()?;
            for k in 0..total {
                let ix: Vec<Scalar> = unlinear(k, &dims).into_iter().map(Scalar::I64).collect();
                let r = call(f, env, l, &ix)?;
                for (o, v) in outs.iter_mut().zip(r) {
                    o.push(v);
                }
            }
            for (o, v) in outputs.iter().zip(outs) {
                env.put(*o, dims.clone(), v);
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
                env.slots[o.0 as usize] = Slot::A(Arr::vector(v));
            }
        }
        // Scans run along each row (the innermost dimension).
        NodeKind::Scan(Scan { dir, op, init, inputs, outputs }) => {
            let a = env.arr(inputs[0]).clone();
            let (rows, row) = a.rows();
            let mut outs: Vec<Vec<Scalar>> = outputs.iter().map(|_| vec![Scalar::I64(0); a.data.len()]).collect();
            for r in 0..rows {
                let mut acc: Vec<Scalar> = init.iter().map(|o| env.scalar(o)).collect();
                let order: Vec<usize> = if *dir == ScanKind::Right { (0..row).rev().collect() } else { (0..row).collect() };
                for j in order {
                    let i = r * row + j;
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
            }
            for (o, v) in outputs.iter().zip(outs) {
                env.put(*o, a.shape.clone(), v);
            }
        }
        // A reverse reverses each row (the innermost dimension).
        NodeKind::Reverse(Reverse { inputs, outputs, .. }) => {
            for (i, o) in inputs.iter().zip(outputs) {
                let a = env.arr(*i).clone();
                let (_, row) = a.rows();
                let mut v = a.data.clone();
                if row > 0 {
                    v.chunks_mut(row).for_each(|c| c.reverse());
                }
                env.put(*o, a.shape.clone(), v);
            }
        }
        NodeKind::Force(Force { inputs, outputs, .. }) => {
            for (i, o) in inputs.iter().zip(outputs) {
                let a = env.arr(*i).clone();
                env.slots[o.0 as usize] = Slot::A(a);
            }
        }
        NodeKind::Transpose(Transpose { inputs, outputs, .. }) => {
            for (i, o) in inputs.iter().zip(outputs) {
                let a = env.arr(*i).clone();
                let (rows, cols) = (a.shape[0], a.shape[1]);
                let mut v = Vec::with_capacity(a.data.len());
                for c in 0..cols {
                    for r in 0..rows {
                        v.push(a.data[r * cols + c]);
                    }
                }
                env.put(*o, vec![cols, rows], v);
            }
        }
        NodeKind::Extern(Extern { func, .. }) => return Err(RuntimeError { kind: ErrorKind::Extern(func.clone()), span: n.span }),
        NodeKind::If(_) => unreachable!("interpreter: an `if` runs in `body`"),
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
                env.slots[o.0 as usize] = Slot::A(Arr::vector(v));
            }
        }
        NodeKind::Gather(Gather { index, source, outputs, .. }) => {
            let ishape = env.arr(index[0]).shape.clone();
            let sshape = env.arr(source[0]).shape.clone();
            let len = env.array(index[0]).len();
            let mut outs: Vec<Vec<Scalar>> = outputs.iter().map(|_| Vec::with_capacity(len)).collect();
            for p in 0..len {
                let ix: Vec<i64> = index.iter().map(|a| env.array(*a)[p].as_i64()).collect();
                let k = linear(&ix, &sshape, n.span)?;
                for (o, s) in outs.iter_mut().zip(source) {
                    o.push(env.array(*s)[k]);
                }
            }
            for (o, v) in outputs.iter().zip(outs) {
                env.put(*o, ishape.clone(), v);
            }
        }
        NodeKind::Scatter(Scatter { op, dest, src, dims, outputs }) => {
            let dshape = env.arr(dest[0]).shape.clone();
            let mut outs: Vec<Vec<Scalar>> = dest.iter().map(|d| env.array(*d).clone()).collect();
            for j in 0..env.array(src[0]).len() {
                let ix: Vec<i64> = src[..*dims].iter().map(|a| env.array(*a)[j].as_i64()).collect();
                // An index with a negative component is skipped.
                if ix.iter().any(|i| *i < 0) {
                    continue;
                }
                let i = linear(&ix, &dshape, n.span)?;
                let mut args: Vec<Scalar> = outs.iter().map(|o| o[i]).collect();
                args.extend(src[*dims..].iter().map(|v| env.array(*v)[j]));
                let r = call(f, env, op, &args)?;
                for (o, v) in outs.iter_mut().zip(r) {
                    o[i] = v;
                }
            }
            for (o, v) in outputs.iter().zip(outs) {
                env.put(*o, dshape.clone(), v);
            }
        }
        // A fold reduces each row (the innermost dimension): a vector to
        // scalars, a matrix to a vector of its rows' results.
        NodeKind::Fold(Fold { op, init, inputs, outputs, out_rank }) => {
            let a = env.arr(inputs[0]).clone();
            let (rows, row) = a.rows();
            let rows = if *out_rank == 0 { 1 } else { rows };
            let mut outs: Vec<Vec<Scalar>> = outputs.iter().map(|_| Vec::with_capacity(rows)).collect();
            for r in 0..rows {
                let mut acc: Vec<Scalar> = init.iter().map(|o| env.scalar(o)).collect();
                for j in 0..row {
                    let mut args = acc.clone();
                    args.extend(inputs.iter().map(|x| env.array(*x)[r * row + j]));
                    acc = call(f, env, op, &args)?;
                }
                for (o, v) in outs.iter_mut().zip(acc) {
                    o.push(v);
                }
            }
            for (o, v) in outputs.iter().zip(outs) {
                if *out_rank == 0 {
                    env.set(*o, v[0]);
                } else {
                    env.put(*o, a.shape[..a.shape.len() - 1].to_vec(), v);
                }
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
            let arr = env.arr(*a);
            let ix: Vec<i64> = ix.iter().map(|o| env.scalar(o).as_i64()).collect();
            arr.data[linear(&ix, &arr.shape, span)?]
        }
        Rhs::Length(a, d) => Scalar::I64(env.arr(*a).shape[*d as usize] as i64),
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
        // Floats as C's fmin/fmax, a NaN operand losing, with -0.0 below
        // +0.0 (docs/reference.md; the compiled code does the same).
        (Min, [F32(x), F32(y)]) => F32(if x == y { f32::from_bits(x.to_bits() | y.to_bits()) } else { x.min(*y) }),
        (Min, [F64(x), F64(y)]) => F64(if x == y { f64::from_bits(x.to_bits() | y.to_bits()) } else { x.min(*y) }),
        (Max, [I32(x), I32(y)]) => I32(*x.max(y)),
        (Max, [I64(x), I64(y)]) => I64(*x.max(y)),
        (Max, [F32(x), F32(y)]) => F32(if x == y { f32::from_bits(x.to_bits() & y.to_bits()) } else { x.max(*y) }),
        (Max, [F64(x), F64(y)]) => F64(if x == y { f64::from_bits(x.to_bits() & y.to_bits()) } else { x.max(*y) }),
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
