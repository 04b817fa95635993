//! The labelled let-bound program: every combinator application is a node
//! with a `NodeId` and variable arguments, every scalar computation a flat
//! statement, tuples flattened into their scalar leaves and arrays of tuples
//! into one array per component (struct of arrays). All dependencies are
//! explicit: a worker lists the scalars and arrays it captures.

use crate::ast::{BinOp, UnOp};
use crate::diag::Span;
use crate::types::Prim;
use std::collections::HashSet;
use std::fmt::{self, Write};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub u32);
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

/// The type of a labelled variable: a scalar, or an array of scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VarTy {
    Scalar(Prim),
    Array(u8, Prim),
}

impl VarTy {
    pub fn prim(self) -> Prim {
        match self {
            VarTy::Scalar(p) | VarTy::Array(_, p) => p,
        }
    }
    pub fn is_array(self) -> bool {
        matches!(self, VarTy::Array(..))
    }
}

#[derive(Clone, Debug)]
pub struct VarInfo {
    pub name: String,
    pub ty: VarTy,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Const {
    Bool(bool),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
}

impl Const {
    pub fn prim(self) -> Prim {
        match self {
            Const::Bool(_) => Prim::Bool,
            Const::I32(_) => Prim::I32,
            Const::I64(_) => Prim::I64,
            Const::F32(_) => Prim::F32,
            Const::F64(_) => Prim::F64,
        }
    }
}

impl fmt::Display for Const {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Const::Bool(b) => write!(f, "{}", b),
            Const::I32(v) => write!(f, "{}i32", v),
            Const::I64(v) => write!(f, "{}", v),
            Const::F32(v) => write!(f, "{:?}f32", v),
            Const::F64(v) => write!(f, "{:?}", v),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Operand {
    Var(VarId),
    Const(Const),
}

/// Built-in scalar functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    Min,
    Max,
    Abs,
    Sqrt,
    Exp,
    Log,
    Sin,
    Cos,
    Tan,
    Erf,
    Floor,
    Ceil,
    Round,
    Pow,
}

impl Builtin {
    pub const ALL: [Builtin; 14] = [
        Builtin::Min,
        Builtin::Max,
        Builtin::Abs,
        Builtin::Sqrt,
        Builtin::Exp,
        Builtin::Log,
        Builtin::Sin,
        Builtin::Cos,
        Builtin::Tan,
        Builtin::Erf,
        Builtin::Floor,
        Builtin::Ceil,
        Builtin::Round,
        Builtin::Pow,
    ];
    pub fn from_name(s: &str) -> Option<Builtin> {
        use Builtin::*;
        Some(match s {
            "min" => Min,
            "max" => Max,
            "abs" => Abs,
            "sqrt" => Sqrt,
            "exp" => Exp,
            "log" => Log,
            "sin" => Sin,
            "cos" => Cos,
            "tan" => Tan,
            "erf" => Erf,
            "floor" => Floor,
            "ceil" => Ceil,
            "round" => Round,
            "pow" => Pow,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        use Builtin::*;
        match self {
            Min => "min",
            Max => "max",
            Abs => "abs",
            Sqrt => "sqrt",
            Exp => "exp",
            Log => "log",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Erf => "erf",
            Floor => "floor",
            Ceil => "ceil",
            Round => "round",
            Pow => "pow",
        }
    }
    pub fn arity(self) -> usize {
        match self {
            Builtin::Min | Builtin::Max | Builtin::Pow => 2,
            _ => 1,
        }
    }
    /// True for the functions defined on floats only.
    pub fn float_only(self) -> bool {
        !matches!(self, Builtin::Min | Builtin::Max | Builtin::Abs)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Rhs {
    Copy(Operand),
    Unary(UnOp, Operand),
    /// `&&` and `||` never appear here: they are lowered to `If`.
    Binary(BinOp, Operand, Operand),
    Builtin(Builtin, Vec<Operand>),
    Cast(Prim, Operand),
    Select(Operand, Operand, Operand),
    /// Random access into an array: a run-time error if out of range.
    Index(VarId, Vec<Operand>),
    /// The extent of dimension `dim` of an array.
    Length(VarId, u8),
    /// The product of two sizes (`cross`'s `n·m`): a run-time error if it
    /// does not fit an i64 (the result could not be allocated). Its operands
    /// are `length` scalars, so it depends on sizes, never on arrays.
    SizeProduct(Operand, Operand),
}

impl Rhs {
    /// Everything the right-hand side reads (an indexed or measured array
    /// as a variable operand).
    pub fn operands(&self) -> Vec<Operand> {
        match self {
            Rhs::Copy(o) | Rhs::Unary(_, o) | Rhs::Cast(_, o) => vec![*o],
            Rhs::Binary(_, a, b) | Rhs::SizeProduct(a, b) => vec![*a, *b],
            Rhs::Builtin(_, a) => a.clone(),
            Rhs::Select(a, b, c) => vec![*a, *b, *c],
            Rhs::Index(a, ix) => std::iter::once(Operand::Var(*a)).chain(ix.iter().copied()).collect(),
            Rhs::Length(a, _) => vec![Operand::Var(*a)],
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    Assign { dst: VarId, rhs: Rhs, span: Span },
    /// Evaluates only the branch it takes; each branch yields one value per `dst`.
    If { dsts: Vec<VarId>, cond: Operand, then: Block, els: Block, span: Span },
}

/// A straight-line sequence of statements and the operands it yields.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub results: Vec<Operand>,
}

/// A worker function: scalar parameters, a body, and what it captures.
#[derive(Clone, Debug, PartialEq)]
pub struct Lambda {
    pub params: Vec<VarId>,
    pub body: Block,
    /// Variables of the enclosing function the body uses (scalars, and arrays it indexes or measures).
    pub captures: Vec<VarId>,
}

pub use crate::combinator::{Callee, Combinator, Cross, Extern, Filter, Fold, Force, Gather, Generate, If, Map, Reverse, Scan, Scatter, Transpose};

/// Array combinators, the nodes of the dependency graph. Each variant's
/// facts are its `Combinator` entry (`ir/src/combinator.rs`).
#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    Map(Map),
    Generate(Generate),
    Fold(Fold),
    Filter(Filter),
    Scan(Scan),
    Reverse(Reverse),
    Gather(Gather),
    Force(Force),
    Scatter(Scatter),
    Cross(Cross),
    Extern(Extern),
    Transpose(Transpose),
    If(If),
}

impl NodeKind {
    /// The combinator's entry: every fact the stages need.
    pub fn comb(&self) -> &dyn Combinator {
        match self {
            NodeKind::Map(c) => c,
            NodeKind::Generate(c) => c,
            NodeKind::Fold(c) => c,
            NodeKind::Filter(c) => c,
            NodeKind::Scan(c) => c,
            NodeKind::Reverse(c) => c,
            NodeKind::Gather(c) => c,
            NodeKind::Force(c) => c,
            NodeKind::Scatter(c) => c,
            NodeKind::Cross(c) => c,
            NodeKind::Extern(c) => c,
            NodeKind::Transpose(c) => c,
            NodeKind::If(c) => c,
        }
    }
    pub fn comb_mut(&mut self) -> &mut dyn Combinator {
        match self {
            NodeKind::Map(c) => c,
            NodeKind::Generate(c) => c,
            NodeKind::Fold(c) => c,
            NodeKind::Filter(c) => c,
            NodeKind::Scan(c) => c,
            NodeKind::Reverse(c) => c,
            NodeKind::Gather(c) => c,
            NodeKind::Force(c) => c,
            NodeKind::Scatter(c) => c,
            NodeKind::Cross(c) => c,
            NodeKind::Extern(c) => c,
            NodeKind::Transpose(c) => c,
            NodeKind::If(c) => c,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanKind {
    /// `scanl`: `r[i] = z ⊕ x0 ⊕ … ⊕ xi`.
    Inclusive,
    /// `prescanl`: `r[i] = z ⊕ x0 ⊕ … ⊕ x(i-1)`.
    Exclusive,
    /// `scanr`: `r[i] = xi ⊕ … ⊕ x(n-1) ⊕ z`.
    Right,
}

impl ScanKind {
    pub fn name(self) -> &'static str {
        match self {
            ScanKind::Inclusive => "scanl",
            ScanKind::Exclusive => "prescanl",
            ScanKind::Right => "scanr",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The `let` name, or `LET.K` for a nested combinator.
    pub name: String,
    pub span: Span,
    pub kind: NodeKind,
}

impl Node {
    pub fn comb(&self) -> &dyn Combinator {
        self.kind.comb()
    }
    pub fn combinator(&self) -> &'static str {
        self.comb().name()
    }
    /// Arrays read element by element in iteration order (fusible inputs).
    pub fn streamed_inputs(&self) -> &[VarId] {
        self.comb().streamed()
    }
    /// The traversal order the combinator requires, if any (papers/002 §3.3).
    pub fn fixed_order(&self) -> Option<u8> {
        self.comb().fixed_order()
    }
    /// Does the node read its streamed input in the opposite order to the
    /// one it produces its output in (`reverse`)?
    pub fn flips_order(&self) -> bool {
        self.comb().flips_order()
    }
    /// Arrays the node needs complete and reads from memory, besides what
    /// its worker indexes.
    pub fn whole_inputs(&self) -> &[VarId] {
        self.comb().whole()
    }
    /// Does the node write its outputs at random positions?
    pub fn writes_randomly(&self) -> bool {
        self.comb().writes_randomly()
    }
    /// Is the node a fusion barrier (an extern call)?
    pub fn is_barrier(&self) -> bool {
        self.comb().is_barrier()
    }
    /// Arrays read at the indices a gather's index array gives (its source).
    pub fn gathered_inputs(&self) -> &[VarId] {
        self.comb().gathered()
    }
    /// Can the node compute the element at any index on its own? (Whether
    /// it may then run at a gather's indices: `Function::label_computable`.)
    pub fn index_computable(&self) -> bool {
        self.comb().index_computable()
    }
    /// Can computing one element fail: a gather's index out of range, or a
    /// worker that indexes or divides integers?
    pub fn element_may_fail(&self, vars: &[VarInfo]) -> bool {
        matches!(self.comb().label_index(), Some(crate::loops::LabelIndex::Arrays(_))) || crate::loops::block_fallible(vars, &self.lambda().body)
    }
    /// The arrays (or, for a fold, scalars) the node computes.
    pub fn outputs(&self) -> &[VarId] {
        self.comb().outputs()
    }
    /// Every variable the node defines: its outputs, a filter's count, the
    /// lengths of an extern call's array results.
    pub fn defines(&self) -> Vec<VarId> {
        self.comb().defines()
    }
    pub fn lambda(&self) -> &Lambda {
        self.comb().lambda()
    }
    pub fn lambda_mut(&mut self) -> &mut Lambda {
        self.kind.comb_mut().lambda_mut()
    }
    /// Operands outside the worker (sizes, initial values, an extern call's arguments).
    pub fn scalar_args(&self) -> Vec<Operand> {
        self.comb().scalar_args()
    }
    /// Every variable of the enclosing function the node uses other than streamed inputs.
    pub fn uses_outside_stream(&self) -> Vec<VarId> {
        let mut v: Vec<VarId> = self.lambda().captures.clone();
        v.extend(self.whole_inputs());
        for o in self.scalar_args() {
            if let Operand::Var(x) = o {
                v.push(x);
            }
        }
        v
    }
}

/// An item of a function body, in source order.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Stmt(Stmt),
    Node(NodeId),
}

/// One leaf of a flattened parameter or result, with its C name.
#[derive(Clone, Debug, PartialEq)]
pub struct Leaf {
    pub c_name: String,
    pub value: Operand,
}

/// A function, or the body of an `if` branch: a branch has no parameters
/// (it reads the enclosing function's variables, in the same variable
/// table) and its results are what the branch yields.
#[derive(Clone, Debug)]
pub struct Function {
    pub name: String,
    /// Exported and recursive functions are compiled; the others are
    /// checked alone (types, sizes) and inlined where they are called.
    pub exported: bool,
    /// In a cycle of calls: compiled on its own (not inlined), every call
    /// of it a barrier, its depth bounded at run time.
    pub recursive: bool,
    pub span: Span,
    pub params: Vec<Leaf>,
    pub results: Vec<Leaf>,
    /// Per top-level result (`outN`), its source name when the function
    /// returns it as a plain name (`ys` in `(ys, s)`): the header names the
    /// result parameter after it.
    pub result_names: Vec<Option<String>>,
    pub items: Vec<Item>,
    pub nodes: Vec<Node>,
    pub vars: Vec<VarInfo>,
    /// Arrays that must have one size though no combinator reads them
    /// together (the components of a `zip`), with the span that requires it.
    pub same_size: Vec<(Vec<VarId>, Span)>,
}

/// The functions of a program, each with its callees inlined.
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub functions: Vec<Function>,
}

impl Function {
    pub fn var(&self, v: VarId) -> &VarInfo {
        &self.vars[v.0 as usize]
    }
    pub fn node(&self, n: NodeId) -> &Node {
        &self.nodes[n.0 as usize]
    }
    /// May node `n` run at a gather's indices, computing only the elements
    /// gathered? It must compute an element at any index on its own, and
    /// computing one must not be able to fail: the elements nobody gathers
    /// are never computed, so an error one of them raises (an integer
    /// division by zero, an index out of range) would vanish with the
    /// fusion, and whether a call fails must not depend on its clustering.
    pub fn label_computable(&self, n: NodeId) -> bool {
        let node = self.node(n);
        node.index_computable() && !node.element_may_fail(&self.vars)
    }
    /// Is node `n` a gather whose elements can fail only on an index out of
    /// range? Run at another gather's indices it computes only the elements
    /// gathered, but a check of its whole index arrays before its nest
    /// still finds every error it would raise (papers/002 fuses gathers of
    /// gathers, simple2) — when those arrays are in memory by then: its
    /// index edges are not fused (`Function::index_arrays_checked`).
    pub fn checks_indices_first(&self, n: NodeId) -> bool {
        let node = self.node(n);
        node.index_computable() && matches!(node.comb().label_index(), Some(crate::loops::LabelIndex::Arrays(_))) && !crate::loops::block_fallible(&self.vars, &node.lambda().body)
    }
    /// May node `n` run at a gather's indices, given what it needs for
    /// that (`label_computable`, or `checks_indices_first` with its index
    /// arrays read from memory)?
    pub fn may_take_label(&self, n: NodeId) -> bool {
        self.label_computable(n) || self.checks_indices_first(n)
    }
    /// The index arrays a node that `checks_indices_first` needs in memory
    /// before its nest when it runs at another gather's indices (none for
    /// any other node).
    pub fn index_arrays_checked(&self, n: NodeId) -> Vec<VarId> {
        match self.node(n).comb().label_index() {
            Some(crate::loops::LabelIndex::Arrays(a)) if self.checks_indices_first(n) => a,
            _ => vec![],
        }
    }
    pub fn node_ids(&self) -> impl Iterator<Item = NodeId> {
        (0..self.nodes.len() as u32).map(NodeId)
    }
    /// `name_12`: the printed form of a variable, unique within the function.
    pub fn var_name(&self, v: VarId) -> String {
        format!("{}_{}", self.var(v).name, v.0)
    }
    pub fn operand(&self, o: &Operand) -> String {
        match o {
            Operand::Var(v) => format!("%{}", self.var_name(*v)),
            Operand::Const(c) => c.to_string(),
        }
    }
    /// The node that produces each variable, if any.
    pub fn producers(&self) -> Vec<Option<NodeId>> {
        let mut p = vec![None; self.vars.len()];
        for n in self.node_ids() {
            for o in self.node(n).defines() {
                p[o.0 as usize] = Some(n);
            }
        }
        p
    }
    /// Is it compiled to a function of its own?
    pub fn compiled(&self) -> bool {
        self.exported || self.recursive
    }
    /// Variables of the enclosing function a body uses but does not define:
    /// what an `if` branch reads from outside.
    pub fn free_vars(&self) -> Vec<VarId> {
        let mut used: Vec<VarId> = vec![];
        let mut defined: HashSet<VarId> = self.param_vars().into_iter().collect();
        let add = |used: &mut Vec<VarId>, defined: &HashSet<VarId>, v: VarId| {
            if !defined.contains(&v) && !used.contains(&v) {
                used.push(v);
            }
        };
        for it in &self.items {
            match it {
                Item::Stmt(s) => {
                    for v in stmt_uses(s) {
                        add(&mut used, &defined, v);
                    }
                    defined.extend(stmt_defs(s));
                }
                Item::Node(n) => {
                    let n = self.node(*n);
                    let mut vs: Vec<VarId> = n.streamed_inputs().to_vec();
                    vs.extend(n.gathered_inputs());
                    vs.extend(n.uses_outside_stream());
                    for v in vs {
                        add(&mut used, &defined, v);
                    }
                    defined.extend(n.defines());
                }
            }
        }
        for l in &self.results {
            if let Operand::Var(v) = l.value {
                add(&mut used, &defined, v);
            }
        }
        used
    }
    /// Variables that are parameters of the function.
    pub fn param_vars(&self) -> Vec<VarId> {
        self.params.iter().filter_map(|l| if let Operand::Var(v) = l.value { Some(v) } else { None }).collect()
    }
}

/// The variables a statement reads, arrays it indexes or measures included.
pub fn stmt_uses(s: &Stmt) -> Vec<VarId> {
    let mut out = vec![];
    fn ops(out: &mut Vec<VarId>, os: &[Operand]) {
        out.extend(os.iter().filter_map(|o| if let Operand::Var(v) = o { Some(*v) } else { None }));
    }
    fn block(out: &mut Vec<VarId>, b: &Block) {
        let mut inner = vec![];
        for s in &b.stmts {
            inner.extend(stmt_uses(s));
        }
        ops(&mut inner, &b.results);
        // Variables defined inside the block are not uses from outside.
        let defined: HashSet<VarId> = b.stmts.iter().flat_map(stmt_defs).collect();
        out.extend(inner.into_iter().filter(|v| !defined.contains(v)));
    }
    match s {
        Stmt::Assign { rhs, .. } => ops(&mut out, &rhs.operands()),
        Stmt::If { cond, then, els, .. } => {
            ops(&mut out, &[*cond]);
            block(&mut out, then);
            block(&mut out, els);
        }
    }
    out
}

/// The variables a statement defines.
pub fn stmt_defs(s: &Stmt) -> Vec<VarId> {
    match s {
        Stmt::Assign { dst, .. } => vec![*dst],
        Stmt::If { dsts, .. } => dsts.clone(),
    }
}

// ---------------------------------------------------------------- printer

fn print_block(f: &Function, b: &Block, indent: usize, out: &mut String) {
    for s in &b.stmts {
        print_stmt(f, s, indent, out);
    }
    let res: Vec<String> = b.results.iter().map(|o| f.operand(o)).collect();
    let _ = writeln!(out, "{}yield {}", "  ".repeat(indent), res.join(", "));
}

pub fn print_rhs(f: &Function, rhs: &Rhs) -> String {
    match rhs {
        Rhs::Copy(o) => f.operand(o),
        Rhs::Unary(op, o) => format!("{}{}", if *op == UnOp::Neg { "-" } else { "!" }, f.operand(o)),
        Rhs::Binary(op, a, b) => format!("{} {} {}", f.operand(a), op.symbol(), f.operand(b)),
        Rhs::Builtin(b, args) => {
            format!("{}({})", b.name(), args.iter().map(|a| f.operand(a)).collect::<Vec<_>>().join(", "))
        }
        Rhs::Cast(p, o) => format!("{}({})", p.name(), f.operand(o)),
        Rhs::Select(c, a, b) => format!("select({}, {}, {})", f.operand(c), f.operand(a), f.operand(b)),
        Rhs::Index(a, ix) => {
            format!("%{}[{}]", f.var_name(*a), ix.iter().map(|a| f.operand(a)).collect::<Vec<_>>().join(", "))
        }
        Rhs::Length(a, d) => format!("length(%{}, {})", f.var_name(*a), d),
        Rhs::SizeProduct(a, b) => format!("size_product({}, {})", f.operand(a), f.operand(b)),
    }
}

pub fn print_stmt(f: &Function, s: &Stmt, indent: usize, out: &mut String) {
    let pad = "  ".repeat(indent);
    match s {
        Stmt::Assign { dst, rhs, .. } => {
            let _ = writeln!(out, "{}%{}: {} = {}", pad, f.var_name(*dst), ty_str(f.var(*dst).ty), print_rhs(f, rhs));
        }
        Stmt::If { dsts, cond, then, els, .. } => {
            let d: Vec<String> = dsts.iter().map(|d| format!("%{}", f.var_name(*d))).collect();
            let _ = writeln!(out, "{}{} = if {} {{", pad, d.join(", "), f.operand(cond));
            print_block(f, then, indent + 1, out);
            let _ = writeln!(out, "{}}} else {{", pad);
            print_block(f, els, indent + 1, out);
            let _ = writeln!(out, "{}}}", pad);
        }
    }
}

pub fn ty_str(t: VarTy) -> String {
    match t {
        VarTy::Scalar(p) => p.name().to_string(),
        VarTy::Array(r, p) => format!("{}{}{}", "[".repeat(r as usize), p.name(), "]".repeat(r as usize)),
    }
}

fn vars(f: &Function, vs: &[VarId]) -> String {
    vs.iter().map(|v| format!("%{}", f.var_name(*v))).collect::<Vec<_>>().join(", ")
}

fn print_lambda(f: &Function, l: &Lambda, indent: usize, out: &mut String) {
    let _ = writeln!(
        out,
        "{}|{}| captures [{}] {{",
        "  ".repeat(indent),
        vars(f, &l.params),
        vars(f, &l.captures)
    );
    print_block(f, &l.body, indent + 1, out);
    let _ = writeln!(out, "{}}}", "  ".repeat(indent));
}

pub fn print_node(f: &Function, id: NodeId, indent: usize, out: &mut String) {
    let n = f.node(id);
    let pad = "  ".repeat(indent);
    let c = n.comb();
    let _ = writeln!(out, "{}node {} \"{}\": {} = {}", pad, id.0, n.name, vars(f, &c.defines()), c.print(f));
    if c.prints_worker() {
        print_lambda(f, c.lambda(), indent + 1, out);
    }
    for (b, what) in c.bodies().into_iter().zip(["then", "else"]) {
        let _ = writeln!(out, "{}  {} {{", pad, what);
        print_items(b, indent + 2, out);
        let res: Vec<String> = b.results.iter().map(|l| b.operand(&l.value)).collect();
        let _ = writeln!(out, "{}    yield {}", pad, res.join(", "));
        let _ = writeln!(out, "{}  }}", pad);
    }
}

fn print_items(f: &Function, indent: usize, out: &mut String) {
    for it in &f.items {
        match it {
            Item::Stmt(s) => print_stmt(f, s, indent, out),
            Item::Node(n) => print_node(f, *n, indent, out),
        }
    }
}

/// `--emit=labelled`: every function, its flattened signature and its body.
pub fn print_program(p: &Program) -> String {
    let mut out = String::new();
    for f in &p.functions {
        let params: Vec<String> = f
            .params
            .iter()
            .map(|l| match l.value {
                Operand::Var(v) => format!("%{}: {}", f.var_name(v), ty_str(f.var(v).ty)),
                Operand::Const(c) => c.to_string(),
            })
            .collect();
        let kind = match (f.exported, f.recursive) {
            (true, true) => "export recursive ",
            (true, false) => "export ",
            (false, true) => "recursive ",
            (false, false) => "",
        };
        let _ = writeln!(out, "{}fn {}({}) {{", kind, f.name, params.join(", "));
        print_items(f, 1, &mut out);
        let res: Vec<String> = f.results.iter().map(|l| format!("{} = {}", l.c_name, f.operand(&l.value))).collect();
        let _ = writeln!(out, "  return {}", res.join(", "));
        let _ = writeln!(out, "}}");
    }
    out
}

// ---------------------------------------------------------------- verifier

/// Checks that every variable is defined once, before it is used, with a
/// type that fits, and that lambdas list exactly the outer variables they use.
pub fn verify(f: &Function) -> Result<(), String> {
    verify_body(f, HashSet::new())
}

/// Verifies a function, or an `if` branch that sees the variables `outer`.
fn verify_body(f: &Function, outer: HashSet<VarId>) -> Result<(), String> {
    // `defined`: what is in scope here; `all`: every variable defined so
    // far anywhere (a worker's too), each of which must be defined once.
    let mut defined: HashSet<VarId> = outer;
    let mut all: HashSet<VarId> = defined.clone();
    for v in f.param_vars() {
        if v.0 as usize >= f.vars.len() {
            return Err(format!("parameter variable {} out of range", v.0));
        }
        if !all.insert(v) {
            return Err(format!("parameter %{} defined twice", f.var_name(v)));
        }
        defined.insert(v);
    }
    fn def(f: &Function, d: &mut HashSet<VarId>, all: &mut HashSet<VarId>, v: VarId) -> Result<(), String> {
        if v.0 as usize >= f.vars.len() {
            return Err(format!("variable {} out of range", v.0));
        }
        if !all.insert(v) {
            return Err(format!("%{} defined twice", f.var_name(v)));
        }
        d.insert(v);
        Ok(())
    }
    fn use_op(f: &Function, d: &HashSet<VarId>, o: &Operand) -> Result<(), String> {
        if let Operand::Var(v) = o {
            if v.0 as usize >= f.vars.len() {
                return Err(format!("variable {} out of range (used before its definition)", v.0));
            }
            if !d.contains(v) {
                return Err(format!("%{} used before its definition", f.var_name(*v)));
            }
        }
        Ok(())
    }
    fn block(f: &Function, d: &mut HashSet<VarId>, all: &mut HashSet<VarId>, b: &Block) -> Result<(), String> {
        for s in &b.stmts {
            match s {
                Stmt::Assign { dst, rhs, .. } => {
                    for o in rhs.operands() {
                        use_op(f, d, &o)?;
                    }
                    if f.var(*dst).ty.is_array() {
                        return Err(format!("scalar statement defines array %{}", f.var_name(*dst)));
                    }
                    def(f, d, all, *dst)?;
                }
                Stmt::If { dsts, cond, then, els, .. } => {
                    use_op(f, d, cond)?;
                    for br in [then, els] {
                        if br.results.len() != dsts.len() {
                            return Err("if branch yields the wrong number of values".into());
                        }
                        let mut inner = d.clone();
                        block(f, &mut inner, all, br)?;
                    }
                    for v in dsts {
                        def(f, d, all, *v)?;
                    }
                }
            }
        }
        for o in &b.results {
            use_op(f, d, o)?;
        }
        Ok(())
    }
    for it in &f.items {
        match it {
            Item::Stmt(s) => block(f, &mut defined, &mut all, &Block { stmts: vec![s.clone()], results: vec![] })?,
            Item::Node(id) => {
                let n = f.node(*id);
                for v in n.streamed_inputs().iter().chain(n.whole_inputs()).chain(n.gathered_inputs()) {
                    use_op(f, &defined, &Operand::Var(*v))?;
                    if !f.var(*v).ty.is_array() {
                        return Err(format!("node {} streams scalar %{}", n.name, f.var_name(*v)));
                    }
                }
                for o in n.scalar_args() {
                    use_op(f, &defined, &o)?;
                }
                let l = n.lambda();
                for c in &l.captures {
                    use_op(f, &defined, &Operand::Var(*c))?;
                }
                // Only parameters and captures may be used inside the
                // worker, and what it defines is not seen after it.
                let mut scope: HashSet<VarId> = l.captures.iter().copied().collect();
                for p in &l.params {
                    def(f, &mut scope, &mut all, *p)?;
                }
                block(f, &mut scope, &mut all, &l.body)?;
                for b in n.comb().bodies() {
                    if b.vars.len() != f.vars.len() {
                        return Err(format!("a branch of '{}' has a variable table of its own", n.name));
                    }
                    if b.results.len() != n.outputs().len() {
                        return Err(format!("a branch of '{}' yields {} values for {} outputs", n.name, b.results.len(), n.outputs().len()));
                    }
                    // A branch sees what is defined before the `if`, and
                    // defines its own variables once, like the function.
                    verify_body(b, defined.clone())?;
                    for v in b.free_vars() {
                        let listed = n.whole_inputs().contains(&v) || n.lambda().captures.contains(&v);
                        if !listed {
                            return Err(format!("a branch of '{}' reads %{}, which the `if` does not list", n.name, f.var_name(v)));
                        }
                    }
                }
                for o in n.defines() {
                    def(f, &mut defined, &mut all, o)?;
                }
            }
        }
    }
    for r in &f.results {
        use_op(f, &defined, &r.value)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Builtin;

    /// `Builtin::ALL` lists every built-in once, each found by its name.
    #[test]
    fn every_builtin_by_name() {
        for b in Builtin::ALL {
            assert_eq!(Builtin::from_name(b.name()), Some(b));
        }
        let names: std::collections::HashSet<&str> = Builtin::ALL.iter().map(|b| b.name()).collect();
        assert_eq!(names.len(), Builtin::ALL.len());
    }
}
