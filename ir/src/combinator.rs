//! One description per combinator (STYLE.md habit 12): everything a stage
//! needs to know of a combinator — its arguments, how it reads and writes
//! them (and so which of its edges may fuse), its size rule, the shape it
//! iterates over, and the loop body it lowers to — is found in its entry
//! here, the `impl Combinator` of its node type. The stages consult this
//! trait instead of matching on node kinds; adding a combinator means a
//! node type here, its elaboration from source (compiler/src/frontend),
//! its evaluation in the reference interpreter, and its tests.

use crate::diag::{Diagnostic, Span};
use crate::labelled::{Function, Lambda, Operand, ScanKind, VarId};
use crate::loops::{Accumulate, LabelIndex, LoopBody};

/// What a combinator tells size inference (papers/000 §1.3, Fig. 1.5), per
/// dimension. compiler/src/sizes.rs solves the constraints; a conflict is
/// a diagnostic at the combinator's span.
pub trait SizeRules {
    /// These arrays (of one rank) have one shape.
    fn same(&mut self, arrays: &[VarId]) -> Result<(), Diagnostic>;
    /// Dimension `da` of `a` has the size of dimension `db` of `b`.
    fn same_dim(&mut self, a: VarId, da: usize, b: VarId, db: usize) -> Result<(), Diagnostic>;
    /// The size of dimension `dim` of `array` is born here: rigid, the
    /// value of `size`.
    fn rigid(&mut self, array: VarId, dim: usize, size: Operand, cause: Rigid) -> Result<(), Diagnostic>;
    /// The size of dimension `dim` of `array` is the value of `size`: the
    /// size it measures when it is a `length` (or a `shape` component),
    /// else a rigid size of its own.
    fn sized(&mut self, array: VarId, dim: usize, size: Operand) -> Result<(), Diagnostic>;
    /// `array` is returned by a barrier (`what`: an extern fn, a recursive
    /// call): its sizes are flexible, like a parameter's, known once the
    /// call returns.
    fn returned(&mut self, array: VarId, what: &str);
    /// The rules of every node of an `if` branch, in order.
    fn body(&mut self, f: &Function) -> Result<(), Diagnostic>;
    /// `out` is one of two arrays, `branches`, chosen at run time: each of
    /// its dimensions has their size where they are one size, else a
    /// flexible size known once the choice is made.
    fn joins(&mut self, out: VarId, branches: [VarId; 2]);
}

/// What makes a rigid size, for diagnostics.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rigid {
    /// A filter's count.
    Filter,
    /// A cross's n·m.
    Cross,
}

/// Whose shape a combinator iterates over.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Iterates {
    /// The shape of this streamed input.
    Input(VarId),
    /// The shape of this output.
    Output(VarId),
    /// ⊥: a barrier (an extern call) iterates over nothing afc sees.
    Nothing,
}

/// What a combinator lowers to: a loop body, or (a barrier) a call of C
/// code of its own, a step between nests.
pub enum Lowered {
    Body(LoopBody),
    Call { func: String, callee: Callee, args: Vec<Operand>, outputs: Vec<VarId>, arrays: Vec<(Vec<VarId>, VarId)> },
    /// An array-level `if`: a step whose branches are lowered on their own.
    Branch,
}

/// The facts of one combinator. Defaults describe the plain elementwise case.
pub trait Combinator {
    /// Its name in source and in dumps.
    fn name(&self) -> &'static str;
    /// How messages name it ("extern fn 'smooth'").
    fn what(&self) -> String {
        self.name().to_string()
    }
    /// The worker (the identity for combinators that only move elements).
    fn lambda(&self) -> &Lambda;
    fn lambda_mut(&mut self) -> &mut Lambda;
    /// Visits every variable and operand it uses outside its worker (its
    /// inputs, sizes, initial values, arguments), for renaming.
    fn operands_mut(&mut self, v: &mut dyn FnMut(&mut VarId), o: &mut dyn FnMut(&mut Operand));
    /// The arrays (or a fold's scalars) it computes.
    fn outputs(&self) -> &[VarId];
    /// Every variable it defines: its outputs, and counts or lengths.
    fn defines(&self) -> Vec<VarId> {
        self.outputs().to_vec()
    }
    /// Arrays read element by element in iteration order: fusible inputs.
    fn streamed(&self) -> &[VarId] {
        &[]
    }
    /// Arrays read at the positions a gather's index array gives: fusible
    /// only with a producer that can compute any element on demand.
    fn gathered(&self) -> &[VarId] {
        &[]
    }
    /// Where the positions it reads its gathered arrays at come from (a
    /// gather's index arrays, a transpose's exchanged indices).
    fn label_index(&self) -> Option<LabelIndex> {
        None
    }
    /// Arrays it needs complete and reads from memory (fusion-preventing
    /// edges), besides what its worker indexes.
    fn whole(&self) -> &[VarId] {
        &[]
    }
    /// Why reading `v` whole prevents fusion, if the combinator has a
    /// reason of its own (else the graph says it is read by random access).
    fn why_whole(&self, _f: &Function, _name: &str, _v: VarId, _producer: &str) -> Option<String> {
        None
    }
    /// Operands outside the worker: sizes, initial values, arguments.
    fn scalar_args(&self) -> Vec<Operand> {
        vec![]
    }
    /// The traversal order it requires (papers/002 §3.3): 0 left to right,
    /// 1 right to left; `None` if it may run in either.
    fn fixed_order(&self) -> Option<u8> {
        None
    }
    /// Does it read its streamed input in the order opposite to the one it
    /// produces its output in?
    fn flips_order(&self) -> bool {
        false
    }
    /// Can it compute the element at any position on its own, so that it
    /// can be evaluated at a gather's indices?
    fn index_computable(&self) -> bool {
        false
    }
    /// Does it write its outputs at random positions (complete only after
    /// its loop)?
    fn writes_randomly(&self) -> bool {
        false
    }
    /// Is it a fusion barrier (nothing fuses with it, its results are
    /// complete once it returns)?
    fn is_barrier(&self) -> bool {
        false
    }
    /// Is its output's size other than its iteration size (a transducer,
    /// papers/000 §1.3.6), so that its consumers run at a sub-rate?
    fn transducer(&self) -> bool {
        false
    }
    /// Are its output arrays made one element per iteration, at its
    /// iteration size (not a transducer's, a fold's, a scatter's or a
    /// barrier's)?
    fn outputs_at_rate(&self) -> bool {
        !self.transducer() && !self.reduces()
    }
    /// Does it reduce its iteration shape's innermost dimension, making one
    /// result per row (a fold): its array outputs have the other dimensions?
    fn reduces(&self) -> bool {
        false
    }
    /// Its size constraints.
    fn sizes(&self, r: &mut dyn SizeRules) -> Result<(), Diagnostic>;
    /// Whose shape it iterates over.
    fn iterates(&self) -> Iterates;
    /// Its loop body (docs/lowering.md); `lam` prepares a worker for the
    /// loop IR (its `length`s become sizes).
    fn lower(&self, name: &str, span: Span, lam: &dyn Fn(&Lambda) -> Lambda) -> Lowered;
    /// The scalars its iteration sizes come from, if it makes its own shape
    /// (a generate's): checked non-negative also where it runs at a
    /// gather's positions.
    fn size_args(&self) -> Vec<Operand> {
        vec![]
    }
    /// Run in order, its nest is two loops over these arrays' lengths (a
    /// cross: row-major over its two arguments).
    fn nested_over(&self) -> Option<(VarId, VarId)> {
        None
    }
    /// Is each array it reads whole read once per output element (a
    /// cross), rather than once?
    fn whole_read_per_element(&self) -> bool {
        false
    }
    /// The bodies it runs (an `if`'s branches), each clustered on its own.
    fn bodies(&self) -> Vec<&Function> {
        vec![]
    }
    fn bodies_mut(&mut self) -> Vec<&mut Function> {
        vec![]
    }
    /// How `--emit=labelled` writes it after `outputs =`.
    fn print(&self, f: &Function) -> String;
    /// Whether `--emit=labelled` writes its worker.
    fn prints_worker(&self) -> bool {
        true
    }
}

/// The accessors of a combinator's worker (field `$lam`) and `outputs`.
macro_rules! worker_and_outputs {
    ($lam:ident) => {
        fn lambda(&self) -> &Lambda {
            &self.$lam
        }
        fn lambda_mut(&mut self) -> &mut Lambda {
            &mut self.$lam
        }
        fn outputs(&self) -> &[VarId] {
            &self.outputs
        }
    };
}

fn vars(f: &Function, vs: &[VarId]) -> String {
    vs.iter().map(|v| format!("%{}", f.var_name(*v))).collect::<Vec<_>>().join(", ")
}

fn operands(f: &Function, os: &[Operand]) -> String {
    os.iter().map(|o| f.operand(o)).collect::<Vec<_>>().join(", ")
}

/// Every array an elementwise combinator reads or writes has one size.
fn same_all(r: &mut dyn SizeRules, a: &[VarId], b: &[VarId]) -> Result<(), Diagnostic> {
    let all: Vec<VarId> = a.iter().chain(b).copied().collect();
    r.same(&all)
}

// ---------------------------------------------------------------- map

/// `outputs[k][i] = f(inputs[0][i], …)[k]`; one lambda parameter per input leaf.
#[derive(Clone, Debug, PartialEq)]
pub struct Map {
    pub f: Lambda,
    pub inputs: Vec<VarId>,
    pub outputs: Vec<VarId>,
}

impl Combinator for Map {
    fn name(&self) -> &'static str {
        "map"
    }
    worker_and_outputs!(f);
    fn operands_mut(&mut self, v: &mut dyn FnMut(&mut VarId), _o: &mut dyn FnMut(&mut Operand)) {
        self.inputs.iter_mut().for_each(v);
    }
    fn streamed(&self) -> &[VarId] {
        &self.inputs
    }
    fn index_computable(&self) -> bool {
        true
    }
    fn sizes(&self, r: &mut dyn SizeRules) -> Result<(), Diagnostic> {
        same_all(r, &self.inputs, &self.outputs)
    }
    fn iterates(&self) -> Iterates {
        Iterates::Input(self.inputs[0])
    }
    fn lower(&self, name: &str, _span: Span, lam: &dyn Fn(&Lambda) -> Lambda) -> Lowered {
        Lowered::Body(LoopBody::OneToOne { name: name.into(), reads: self.inputs.clone(), f: lam(&self.f), outs: self.outputs.clone() })
    }
    fn print(&self, f: &Function) -> String {
        format!("map({})", vars(f, &self.inputs))
    }
}

// ---------------------------------------------------------------- generate, iota

/// `outputs[k][i, j, …] = f(i, j, …)[k]` for every position of `shape`
/// (one size per dimension; the worker takes one index per dimension).
#[derive(Clone, Debug, PartialEq)]
pub struct Generate {
    pub shape: Vec<Operand>,
    pub f: Lambda,
    pub outputs: Vec<VarId>,
}

impl Combinator for Generate {
    fn name(&self) -> &'static str {
        "generate"
    }
    worker_and_outputs!(f);
    fn operands_mut(&mut self, _v: &mut dyn FnMut(&mut VarId), o: &mut dyn FnMut(&mut Operand)) {
        self.shape.iter_mut().for_each(o);
    }
    fn scalar_args(&self) -> Vec<Operand> {
        self.shape.clone()
    }
    fn index_computable(&self) -> bool {
        true
    }
    fn sizes(&self, r: &mut dyn SizeRules) -> Result<(), Diagnostic> {
        for (d, s) in self.shape.iter().enumerate() {
            r.sized(self.outputs[0], d, *s)?;
        }
        r.same(&self.outputs)
    }
    fn iterates(&self) -> Iterates {
        Iterates::Output(self.outputs[0])
    }
    fn lower(&self, name: &str, _span: Span, lam: &dyn Fn(&Lambda) -> Lambda) -> Lowered {
        Lowered::Body(LoopBody::FromIndex { name: name.into(), f: lam(&self.f), outs: self.outputs.clone() })
    }
    fn print(&self, f: &Function) -> String {
        format!("generate({})", operands(f, &self.shape))
    }
    fn size_args(&self) -> Vec<Operand> {
        self.shape.clone()
    }
}

// ---------------------------------------------------------------- fold

/// `outputs = op(…op(init, input[0])…, input[n-1])` along the innermost
/// dimension: a vector folds to scalars, a matrix to a vector of its rows'
/// results (one per row), a rank-3 array to a matrix. The lambda's
/// parameters are the accumulator leaves then the element leaves.
#[derive(Clone, Debug, PartialEq)]
pub struct Fold {
    pub op: Lambda,
    pub init: Vec<Operand>,
    pub inputs: Vec<VarId>,
    pub outputs: Vec<VarId>,
    /// The rank of its results: its input's, less one (0: scalars).
    pub out_rank: usize,
}

impl Combinator for Fold {
    fn name(&self) -> &'static str {
        "fold"
    }
    worker_and_outputs!(op);
    fn operands_mut(&mut self, v: &mut dyn FnMut(&mut VarId), o: &mut dyn FnMut(&mut Operand)) {
        self.init.iter_mut().for_each(&mut *o);
        self.inputs.iter_mut().for_each(v);
    }
    fn streamed(&self) -> &[VarId] {
        &self.inputs
    }
    fn scalar_args(&self) -> Vec<Operand> {
        self.init.clone()
    }
    // Folds combine in index order (LANGUAGE.md).
    fn fixed_order(&self) -> Option<u8> {
        Some(0)
    }
    fn reduces(&self) -> bool {
        true
    }
    fn sizes(&self, r: &mut dyn SizeRules) -> Result<(), Diagnostic> {
        r.same(&self.inputs)?;
        // Over a matrix, one result per row: the rows' shape.
        for o in self.outputs.iter().take(if self.out_rank > 0 { self.outputs.len() } else { 0 }) {
            for d in 0..self.out_rank {
                r.same_dim(*o, d, self.inputs[0], d)?;
            }
        }
        Ok(())
    }
    fn iterates(&self) -> Iterates {
        Iterates::Input(self.inputs[0])
    }
    fn lower(&self, name: &str, _span: Span, lam: &dyn Fn(&Lambda) -> Lambda) -> Lowered {
        Lowered::Body(LoopBody::ManyToOne {
            name: name.into(),
            init: self.init.clone(),
            reads: self.inputs.clone(),
            op: lam(&self.op),
            results: self.outputs.clone(),
            state: None,
            acc: crate::loops::Accumulate::Chain,
        })
    }
    fn print(&self, f: &Function) -> String {
        format!("fold(({}), {})", operands(f, &self.init), vars(f, &self.inputs))
    }
}

// ---------------------------------------------------------------- filter

/// The elements of `inputs` (one array per leaf) for which `p` holds, in
/// order, into `outputs`; `count` is how many (the outputs' run-time size,
/// known once the filter has run). A transducer: its consumers iterate at
/// the sub-rate `count`.
#[derive(Clone, Debug, PartialEq)]
pub struct Filter {
    pub p: Lambda,
    pub inputs: Vec<VarId>,
    pub outputs: Vec<VarId>,
    pub count: VarId,
}

impl Combinator for Filter {
    fn name(&self) -> &'static str {
        "filter"
    }
    worker_and_outputs!(p);
    fn operands_mut(&mut self, v: &mut dyn FnMut(&mut VarId), _o: &mut dyn FnMut(&mut Operand)) {
        self.inputs.iter_mut().for_each(v);
    }
    fn defines(&self) -> Vec<VarId> {
        let mut v = self.outputs.clone();
        v.push(self.count);
        v
    }
    fn streamed(&self) -> &[VarId] {
        &self.inputs
    }
    // A filter keeps its elements in order.
    fn fixed_order(&self) -> Option<u8> {
        Some(0)
    }
    fn transducer(&self) -> bool {
        true
    }
    fn sizes(&self, r: &mut dyn SizeRules) -> Result<(), Diagnostic> {
        r.same(&self.inputs)?;
        r.rigid(self.outputs[0], 0, Operand::Var(self.count), Rigid::Filter)?;
        r.same(&self.outputs)
    }
    fn iterates(&self) -> Iterates {
        Iterates::Input(self.inputs[0])
    }
    fn lower(&self, name: &str, _span: Span, lam: &dyn Fn(&Lambda) -> Lambda) -> Lowered {
        Lowered::Body(LoopBody::Filter {
            name: name.into(),
            reads: self.inputs.clone(),
            p: lam(&self.p),
            outs: self.outputs.clone(),
            count: self.count,
            state: None,
            write: crate::loops::FilterWrite::Branch,
            // (Until the strategy pass finds nothing reads it.)
            count_read: true,
        })
    }
    fn print(&self, f: &Function) -> String {
        format!("filter({})", vars(f, &self.inputs))
    }
}

// ---------------------------------------------------------------- scans

/// A scan over `inputs` from `init`: `scanl`, `prescanl` or `scanr`. The
/// lambda's parameters are as the user wrote them: accumulator then element
/// for the left scans, element then accumulator for `scanr`.
#[derive(Clone, Debug, PartialEq)]
pub struct Scan {
    pub dir: ScanKind,
    pub op: Lambda,
    pub init: Vec<Operand>,
    pub inputs: Vec<VarId>,
    pub outputs: Vec<VarId>,
}

impl Combinator for Scan {
    fn name(&self) -> &'static str {
        self.dir.name()
    }
    worker_and_outputs!(op);
    fn operands_mut(&mut self, v: &mut dyn FnMut(&mut VarId), o: &mut dyn FnMut(&mut Operand)) {
        self.init.iter_mut().for_each(&mut *o);
        self.inputs.iter_mut().for_each(v);
    }
    fn streamed(&self) -> &[VarId] {
        &self.inputs
    }
    fn scalar_args(&self) -> Vec<Operand> {
        self.init.clone()
    }
    fn fixed_order(&self) -> Option<u8> {
        Some(if self.dir == ScanKind::Right { 1 } else { 0 })
    }
    fn sizes(&self, r: &mut dyn SizeRules) -> Result<(), Diagnostic> {
        same_all(r, &self.inputs, &self.outputs)
    }
    fn iterates(&self) -> Iterates {
        Iterates::Input(self.inputs[0])
    }
    fn lower(&self, name: &str, _span: Span, lam: &dyn Fn(&Lambda) -> Lambda) -> Lowered {
        Lowered::Body(LoopBody::Scan { name: name.into(), dir: self.dir, init: self.init.clone(), reads: self.inputs.clone(), op: lam(&self.op), outs: self.outputs.clone(), state: None, totals: Accumulate::Chain })
    }
    fn print(&self, f: &Function) -> String {
        format!("{}(({}), {})", self.dir.name(), operands(f, &self.init), vars(f, &self.inputs))
    }
}

// ---------------------------------------------------------------- reverse

/// `outputs[i] = inputs[n-1-i]`; `f` is the identity on the element leaves.
#[derive(Clone, Debug, PartialEq)]
pub struct Reverse {
    pub f: Lambda,
    pub inputs: Vec<VarId>,
    pub outputs: Vec<VarId>,
}

impl Combinator for Reverse {
    fn name(&self) -> &'static str {
        "reverse"
    }
    worker_and_outputs!(f);
    fn operands_mut(&mut self, v: &mut dyn FnMut(&mut VarId), _o: &mut dyn FnMut(&mut Operand)) {
        self.inputs.iter_mut().for_each(v);
    }
    fn streamed(&self) -> &[VarId] {
        &self.inputs
    }
    fn flips_order(&self) -> bool {
        true
    }
    fn sizes(&self, r: &mut dyn SizeRules) -> Result<(), Diagnostic> {
        same_all(r, &self.inputs, &self.outputs)
    }
    fn iterates(&self) -> Iterates {
        Iterates::Input(self.inputs[0])
    }
    fn lower(&self, name: &str, _span: Span, _lam: &dyn Fn(&Lambda) -> Lambda) -> Lowered {
        Lowered::Body(LoopBody::Reverse { name: name.into(), reads: self.inputs.clone(), outs: self.outputs.clone() })
    }
    fn print(&self, f: &Function) -> String {
        format!("reverse({})", vars(f, &self.inputs))
    }
    fn prints_worker(&self) -> bool {
        false
    }
}

// ---------------------------------------------------------------- force

/// The identity that forbids fusing the producer of `inputs` with the
/// consumers of `outputs`: `inputs` are manifest and read from memory.
#[derive(Clone, Debug, PartialEq)]
pub struct Force {
    pub f: Lambda,
    pub inputs: Vec<VarId>,
    pub outputs: Vec<VarId>,
}

impl Combinator for Force {
    fn name(&self) -> &'static str {
        "force"
    }
    worker_and_outputs!(f);
    fn operands_mut(&mut self, v: &mut dyn FnMut(&mut VarId), _o: &mut dyn FnMut(&mut Operand)) {
        self.inputs.iter_mut().for_each(v);
    }
    fn streamed(&self) -> &[VarId] {
        &self.inputs
    }
    fn whole(&self) -> &[VarId] {
        &self.inputs
    }
    fn why_whole(&self, _f: &Function, _name: &str, _v: VarId, producer: &str) -> Option<String> {
        Some(format!("force of '{}'", producer))
    }
    fn sizes(&self, r: &mut dyn SizeRules) -> Result<(), Diagnostic> {
        same_all(r, &self.inputs, &self.outputs)
    }
    fn iterates(&self) -> Iterates {
        Iterates::Input(self.inputs[0])
    }
    // A force is a copy read from memory: its input is manifest, made by an
    // earlier cluster; its output fuses with its consumers.
    fn lower(&self, name: &str, _span: Span, lam: &dyn Fn(&Lambda) -> Lambda) -> Lowered {
        Lowered::Body(LoopBody::OneToOne { name: name.into(), reads: self.inputs.clone(), f: lam(&self.f), outs: self.outputs.clone() })
    }
    fn print(&self, f: &Function) -> String {
        format!("force({})", vars(f, &self.inputs))
    }
    fn prints_worker(&self) -> bool {
        false
    }
}

// ---------------------------------------------------------------- gather, backpermute

/// `outputs[p] = source[index[p]]`: the index arrays (one per dimension
/// of the source: a tuple index for a matrix) are streamed, the source read
/// by random access (checked). The result has the index's shape. `f` is
/// the identity.
#[derive(Clone, Debug, PartialEq)]
pub struct Gather {
    pub f: Lambda,
    pub index: Vec<VarId>,
    pub source: Vec<VarId>,
    pub outputs: Vec<VarId>,
}

impl Combinator for Gather {
    fn name(&self) -> &'static str {
        "gather"
    }
    worker_and_outputs!(f);
    fn operands_mut(&mut self, v: &mut dyn FnMut(&mut VarId), _o: &mut dyn FnMut(&mut Operand)) {
        self.index.iter_mut().chain(&mut self.source).for_each(v);
    }
    fn streamed(&self) -> &[VarId] {
        &self.index
    }
    fn gathered(&self) -> &[VarId] {
        &self.source
    }
    fn label_index(&self) -> Option<LabelIndex> {
        Some(LabelIndex::Arrays(self.index.clone()))
    }
    fn index_computable(&self) -> bool {
        true
    }
    fn sizes(&self, r: &mut dyn SizeRules) -> Result<(), Diagnostic> {
        r.same(&self.source)?;
        let out: Vec<VarId> = self.index.iter().chain(&self.outputs).copied().collect();
        r.same(&out)
    }
    fn iterates(&self) -> Iterates {
        Iterates::Input(self.index[0])
    }
    fn lower(&self, name: &str, span: Span, _lam: &dyn Fn(&Lambda) -> Lambda) -> Lowered {
        Lowered::Body(LoopBody::Gather { name: name.into(), index: self.index.clone(), source: self.source.clone(), outs: self.outputs.clone(), span })
    }
    fn print(&self, f: &Function) -> String {
        format!("gather(({}), {})", vars(f, &self.index), vars(f, &self.source))
    }
    fn prints_worker(&self) -> bool {
        false
    }
}

// ---------------------------------------------------------------- scatter, permute

/// `outputs` = a copy of `dest`, then for each `(index[j], values[j])`,
/// `outputs[i] = op(outputs[i], v)`; an index with a negative component is
/// skipped. The lambda's parameters are the old element's leaves then the
/// value's. `src[..dims]` are the index arrays (one per dimension of
/// `dest`), `src[dims..]` the value leaves.
#[derive(Clone, Debug, PartialEq)]
pub struct Scatter {
    pub op: Lambda,
    pub dest: Vec<VarId>,
    pub src: Vec<VarId>,
    pub dims: usize,
    pub outputs: Vec<VarId>,
}

impl Combinator for Scatter {
    fn name(&self) -> &'static str {
        "scatter"
    }
    worker_and_outputs!(op);
    fn operands_mut(&mut self, v: &mut dyn FnMut(&mut VarId), _o: &mut dyn FnMut(&mut Operand)) {
        self.dest.iter_mut().chain(&mut self.src).for_each(v);
    }
    fn streamed(&self) -> &[VarId] {
        &self.src
    }
    fn whole(&self) -> &[VarId] {
        &self.dest
    }
    // It applies its updates in source order, so that duplicate indices
    // combine as the interpreter does.
    fn fixed_order(&self) -> Option<u8> {
        Some(0)
    }
    fn writes_randomly(&self) -> bool {
        true
    }
    fn outputs_at_rate(&self) -> bool {
        false
    }
    fn sizes(&self, r: &mut dyn SizeRules) -> Result<(), Diagnostic> {
        // The result has the destination's size; the source's leaves share one.
        same_all(r, &self.dest, &self.outputs)?;
        r.same(&self.src)
    }
    fn iterates(&self) -> Iterates {
        Iterates::Input(self.src[0])
    }
    fn lower(&self, name: &str, span: Span, lam: &dyn Fn(&Lambda) -> Lambda) -> Lowered {
        Lowered::Body(LoopBody::Scatter { name: name.into(), dest: self.dest.clone(), src: self.src.clone(), dims: self.dims, op: lam(&self.op), outs: self.outputs.clone(), span })
    }
    fn print(&self, f: &Function) -> String {
        format!("scatter({}; {})", vars(f, &self.dest), vars(f, &self.src))
    }
}

// ---------------------------------------------------------------- transpose

/// `outputs[i, j] = inputs[j, i]`: a matrix's rows and columns exchanged.
/// It runs over its output and reads its input at the transposed position,
/// like a gather whose index is computed (papers/002: a change of
/// traversal order), so the input's producer fuses with it only when it can
/// compute any element. `f` is the identity.
#[derive(Clone, Debug, PartialEq)]
pub struct Transpose {
    pub f: Lambda,
    pub inputs: Vec<VarId>,
    pub outputs: Vec<VarId>,
}

impl Combinator for Transpose {
    fn name(&self) -> &'static str {
        "transpose"
    }
    worker_and_outputs!(f);
    fn operands_mut(&mut self, v: &mut dyn FnMut(&mut VarId), _o: &mut dyn FnMut(&mut Operand)) {
        self.inputs.iter_mut().for_each(v);
    }
    fn gathered(&self) -> &[VarId] {
        &self.inputs
    }
    fn label_index(&self) -> Option<LabelIndex> {
        Some(LabelIndex::Transposed)
    }
    fn index_computable(&self) -> bool {
        true
    }
    fn sizes(&self, r: &mut dyn SizeRules) -> Result<(), Diagnostic> {
        r.same(&self.inputs)?;
        r.same(&self.outputs)?;
        r.same_dim(self.outputs[0], 0, self.inputs[0], 1)?;
        r.same_dim(self.outputs[0], 1, self.inputs[0], 0)
    }
    fn iterates(&self) -> Iterates {
        Iterates::Output(self.outputs[0])
    }
    fn lower(&self, name: &str, _span: Span, _lam: &dyn Fn(&Lambda) -> Lambda) -> Lowered {
        Lowered::Body(LoopBody::Transpose { name: name.into(), source: self.inputs.clone(), outs: self.outputs.clone() })
    }
    fn print(&self, f: &Function) -> String {
        format!("transpose({})", vars(f, &self.inputs))
    }
    fn prints_worker(&self) -> bool {
        false
    }
}

// ---------------------------------------------------------------- cross

/// All pairs, row-major: `outputs[i·m + j] = (inputs[..split][i],
/// inputs[split..][j])` for `size = n·m` elements. Both arguments are read
/// whole (the first has another size than the result, the second is
/// consumed whole, papers/000 Fig. 1.10); `f` is the identity.
#[derive(Clone, Debug, PartialEq)]
pub struct Cross {
    pub f: Lambda,
    pub size: Operand,
    pub inputs: Vec<VarId>,
    pub split: usize,
    pub outputs: Vec<VarId>,
}

impl Combinator for Cross {
    fn name(&self) -> &'static str {
        "cross"
    }
    worker_and_outputs!(f);
    fn operands_mut(&mut self, v: &mut dyn FnMut(&mut VarId), o: &mut dyn FnMut(&mut Operand)) {
        o(&mut self.size);
        self.inputs.iter_mut().for_each(v);
    }
    fn whole(&self) -> &[VarId] {
        &self.inputs
    }
    fn why_whole(&self, f: &Function, name: &str, v: VarId, _producer: &str) -> Option<String> {
        Some(format!("cross '{}' reads '{}' whole", name, f.var(v).name))
    }
    fn scalar_args(&self) -> Vec<Operand> {
        vec![self.size]
    }
    fn index_computable(&self) -> bool {
        true
    }
    fn sizes(&self, r: &mut dyn SizeRules) -> Result<(), Diagnostic> {
        // n·m, born here: a rigid size named by its scalar.
        r.rigid(self.outputs[0], 0, self.size, Rigid::Cross)?;
        r.same(&self.outputs)?;
        r.same(&self.inputs[..self.split])?;
        r.same(&self.inputs[self.split..])
    }
    fn iterates(&self) -> Iterates {
        Iterates::Output(self.outputs[0])
    }
    fn lower(&self, name: &str, _span: Span, _lam: &dyn Fn(&Lambda) -> Lambda) -> Lowered {
        Lowered::Body(LoopBody::Cross { name: name.into(), first: self.inputs[..self.split].to_vec(), second: self.inputs[self.split..].to_vec(), outs: self.outputs.clone(), at: None })
    }
    fn nested_over(&self) -> Option<(VarId, VarId)> {
        Some((self.inputs[0], self.inputs[self.split]))
    }
    fn whole_read_per_element(&self) -> bool {
        true
    }
    fn print(&self, f: &Function) -> String {
        let (a, b) = self.inputs.split_at(self.split);
        format!("cross({}; {}) [{}]", vars(f, a), vars(f, b), f.operand(&self.size))
    }
    fn prints_worker(&self) -> bool {
        false
    }
}

// ---------------------------------------------------------------- extern calls

/// Who a barrier call runs: C code linked in (an `extern fn`), or a
/// function afc compiles on its own because it is recursive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Callee {
    Extern,
    Afc,
}

/// A call of an `extern fn` or of a recursive function: a fusion barrier
/// (papers/000's `external`, iteration size ⊥), called with the export ABI.
/// `args` are the flattened parameter leaves (array arguments are read
/// whole, from memory); `outputs` the flattened result leaves in C order;
/// `inputs` the array arguments among `args`. Each array result is `(its
/// leaves, its length)`: a flexible size known once the call returns. `f`
/// is empty.
#[derive(Clone, Debug, PartialEq)]
pub struct Extern {
    pub f: Lambda,
    pub func: String,
    pub callee: Callee,
    pub args: Vec<Operand>,
    pub inputs: Vec<VarId>,
    pub outputs: Vec<VarId>,
    pub arrays: Vec<(Vec<VarId>, VarId)>,
}

impl Combinator for Extern {
    fn name(&self) -> &'static str {
        match self.callee {
            Callee::Extern => "extern",
            Callee::Afc => "call",
        }
    }
    worker_and_outputs!(f);
    fn what(&self) -> String {
        match self.callee {
            Callee::Extern => format!("extern fn '{}'", self.func),
            Callee::Afc => format!("the recursive call of '{}'", self.func),
        }
    }
    fn operands_mut(&mut self, v: &mut dyn FnMut(&mut VarId), o: &mut dyn FnMut(&mut Operand)) {
        self.args.iter_mut().for_each(o);
        self.inputs.iter_mut().for_each(v);
    }
    fn defines(&self) -> Vec<VarId> {
        let mut v = self.outputs.clone();
        v.extend(self.arrays.iter().map(|(_, len)| *len));
        v
    }
    fn whole(&self) -> &[VarId] {
        &self.inputs
    }
    // (Its array arguments are among these too: they are read whole.)
    fn scalar_args(&self) -> Vec<Operand> {
        self.args.clone()
    }
    fn is_barrier(&self) -> bool {
        true
    }
    fn outputs_at_rate(&self) -> bool {
        false
    }
    fn sizes(&self, r: &mut dyn SizeRules) -> Result<(), Diagnostic> {
        // Each array an extern call returns has a flexible size, like a
        // parameter's: it may be equated with others and is checked once
        // the call returns.
        for (leaves, _) in &self.arrays {
            r.returned(leaves[0], &self.what());
            r.same(leaves)?;
        }
        Ok(())
    }
    fn iterates(&self) -> Iterates {
        Iterates::Nothing
    }
    fn lower(&self, _name: &str, _span: Span, _lam: &dyn Fn(&Lambda) -> Lambda) -> Lowered {
        Lowered::Call { func: self.func.clone(), callee: self.callee, args: self.args.clone(), outputs: self.outputs.clone(), arrays: self.arrays.clone() }
    }
    fn print(&self, f: &Function) -> String {
        let lens: Vec<String> = self.arrays.iter().map(|(l, n)| format!("|%{}| = %{}", f.var_name(l[0]), f.var_name(*n))).collect();
        format!("{} {}({}) [{}]", self.name(), self.func, operands(f, &self.args), lens.join(", "))
    }
    fn prints_worker(&self) -> bool {
        false
    }
}

// ---------------------------------------------------------------- if

/// An array-level `if` (LANGUAGE.md): `outputs` are the results of `then`
/// or of `els`, as `cond` says. Each branch is a body of its own (its own
/// nodes and items, the enclosing function's variables), clustered on its
/// own; the `if` fuses with nothing. `inputs` are the arrays the branches
/// read from outside, the worker's captures the scalars.
#[derive(Clone, Debug)]
pub struct If {
    pub f: Lambda,
    pub cond: Operand,
    pub then: Box<Function>,
    pub els: Box<Function>,
    pub inputs: Vec<VarId>,
    pub outputs: Vec<VarId>,
}

impl PartialEq for If {
    fn eq(&self, o: &If) -> bool {
        self.cond == o.cond && self.inputs == o.inputs && self.outputs == o.outputs && self.f == o.f
    }
}

impl Combinator for If {
    fn name(&self) -> &'static str {
        "if"
    }
    worker_and_outputs!(f);
    fn what(&self) -> String {
        "the array-level `if`".into()
    }
    fn operands_mut(&mut self, v: &mut dyn FnMut(&mut VarId), o: &mut dyn FnMut(&mut Operand)) {
        o(&mut self.cond);
        self.inputs.iter_mut().for_each(v);
    }
    fn whole(&self) -> &[VarId] {
        &self.inputs
    }
    fn scalar_args(&self) -> Vec<Operand> {
        vec![self.cond]
    }
    fn is_barrier(&self) -> bool {
        true
    }
    fn outputs_at_rate(&self) -> bool {
        false
    }
    fn sizes(&self, r: &mut dyn SizeRules) -> Result<(), Diagnostic> {
        r.body(&self.then)?;
        r.body(&self.els)?;
        for (k, o) in self.outputs.iter().enumerate() {
            if let (Operand::Var(a), Operand::Var(b)) = (self.then.results[k].value, self.els.results[k].value) {
                if self.then.var(*o).ty.is_array() {
                    r.joins(*o, [a, b]);
                }
            }
        }
        Ok(())
    }
    fn iterates(&self) -> Iterates {
        Iterates::Nothing
    }
    fn lower(&self, _name: &str, _span: Span, _lam: &dyn Fn(&Lambda) -> Lambda) -> Lowered {
        Lowered::Branch
    }
    fn bodies(&self) -> Vec<&Function> {
        vec![&self.then, &self.els]
    }
    fn bodies_mut(&mut self) -> Vec<&mut Function> {
        vec![&mut self.then, &mut self.els]
    }
    fn print(&self, f: &Function) -> String {
        format!("if {} reading [{}]", f.operand(&self.cond), vars(f, &self.inputs))
    }
    fn prints_worker(&self) -> bool {
        false
    }
}
