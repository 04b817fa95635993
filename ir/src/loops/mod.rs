//! The explicitly loopy IR (papers/001 §4.5, §5.2): per exported function, a
//! sequence of scalar statements, loop nests (one per cluster) and extern
//! calls. A nest is a tree of `For` loops, each with its own index and
//! extent; inside a loop, members' bodies are composed with `Before`
//! (vertical: the first body's elements are temporaries of the second),
//! `Before'` (diagonal: temporaries that are also stored), `Besides`
//! (horizontal), `When` (a filter guarding its sub-rate consumers) and inner
//! `For`s — loops inside loops, and side by side at one depth.
//!
//! State that outlives one iteration (a fold's accumulators, a scan's
//! carried value, a filter's cursor) lives outside the loop it steps in —
//! papers/001's negative dimension — and each stateful leaf says which loop
//! owns it: set when that loop's iteration (or the nest) starts, read when it
//! ends.
//!
//! How each loop runs is recorded here too, decided by the strategy pass
//! (`compiler/src/strategy.rs`) and obeyed by the LLVM back end: how a
//! filter writes, how a fold accumulates, which stores stream, whether a
//! loop is unrolled or walks an array and its reverse together. The back
//! end reads only this representation.
//!
//! `print` writes the text that `parse` reads back; `verify` checks the
//! invariants the back end relies on.

mod parse;
mod print;
mod verify;

pub use parse::parse;
pub use print::print;
pub use verify::{block_fallible, keep_blocker, parallel_blocker, reorderable, row_loops, rows_blocker, simd_blocker, totals_blocker, two_pass, verify, CombineOp, StartDependent, TotalsPass};

use crate::diag::{SourceFile, Span};
use crate::labelled::{Block, Callee, Lambda, Leaf, Operand, ScanKind, Stmt, VarId, VarInfo};
use indexmap::{IndexMap, IndexSet};

/// The run-time value of a size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeExpr {
    /// Extent `dim` of an array whose size is known on entry or once its
    /// maker returns (a parameter, an extern call's result).
    Dim(VarId, u8),
    /// A scalar's value (a rigid size); checked non-negative where a loop uses it.
    Scalar(Operand),
}

/// How a fold combines its elements (docs/strategy.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accumulate {
    /// One accumulator, every element in index order: the only choice for
    /// an operator afc may not rebracket, and for folds under a filter's
    /// guard that may not be reordered.
    Chain,
    /// K independent accumulators, lane j taking the elements at positions
    /// ≡ j (mod K) of each group of K, combined lane by lane after the loop:
    /// reorders, so only for operators LANGUAGE.md lets afc reorder. Needs
    /// the enclosing loop unrolled by K.
    Lanes(u32),
    /// Blocked partials: each group of K consecutive elements is combined
    /// as a balanced tree in index order, and the group's result is added
    /// to one accumulator: rebrackets without reordering, for any fold.
    /// Needs the enclosing loop unrolled by K.
    Tree(u32),
}

/// As the loop IR writes it: `chain`, `lanes K`, `tree K`.
impl std::fmt::Display for Accumulate {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Accumulate::Chain => write!(f, "chain"),
            Accumulate::Lanes(k) => write!(f, "lanes {}", k),
            Accumulate::Tree(k) => write!(f, "tree {}", k),
        }
    }
}

/// How a filter writes its kept elements (docs/strategy.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterWrite {
    /// A branch around the kept element's work.
    Branch,
    /// Branch-free compaction: every element is stored at the cursor and
    /// the guarded work runs with its effects masked; the cursor advances
    /// by the predicate. Needs room for the unfiltered size, which every
    /// filtered array has.
    Compact,
    /// Vector compaction, in a loop unrolled by a multiple of W: each group
    /// of W lanes of a trip keeps its elements with one compress
    /// instruction per component (AVX-512's `vcompresspd`, …) and stores
    /// them with one masked store at the cursor, which advances by the
    /// count of the predicate's mask; positions outside the trips compact.
    /// For a filter with nothing fused under it, not under another filter,
    /// whose components are all W lanes of a 512-bit vector.
    Compress(u32),
}

impl FilterWrite {
    /// Whether the filter may store an element it skips, at the cursor
    /// (and so needs the room of its input).
    pub fn unconditional(self) -> bool {
        matches!(self, FilterWrite::Compact | FilterWrite::Compress(_))
    }
}

/// How a nest writes an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoreMode {
    Normal,
    /// Non-temporal (streaming) stores, fenced after the nest, when the
    /// nest's `streaming` condition holds at run time; normal stores otherwise.
    Streaming,
}

/// The order a leaf runs in (papers/002 §3.3): 0 visits position `i` at
/// iteration `i`, 1 visits `n-1-i`, a gather's label (2, 3, …) visits the
/// position that gather reads in this iteration.
pub type Order = u32;

/// Which loop owns a leaf's state: `None` for the nest (set before its
/// outermost loop, read after it), or the index of a loop whose every
/// iteration sets and reads it (a row-wise fold's accumulator).
pub type StateOwner = Option<VarId>;

#[derive(Clone, Debug, PartialEq)]
pub enum LoopBody {
    /// One element in, one out: `map`.
    OneToOne { name: String, reads: Vec<VarId>, f: Lambda, outs: Vec<VarId> },
    /// The position in, one element out: `generate`, `iota`.
    FromIndex { name: String, f: Lambda, outs: Vec<VarId> },
    /// Many elements to one result: `fold`. The accumulators are the
    /// state; the results are read when their owner ends.
    ManyToOne { name: String, init: Vec<Operand>, reads: Vec<VarId>, op: Lambda, results: Vec<VarId>, state: StateOwner, acc: Accumulate },
    /// One element in, zero or one out: `filter`. The kept elements are
    /// numbered by a cursor (the state); `count` is the cursor when the
    /// owner ends. A kept element of `outs` is the element of `reads` it
    /// passes through. `count_read`: whether anything after the nest
    /// reads the count (`counts_read`); when nothing does (`count unread`)
    /// the nest does not make it, and a parallel nest keeps no count per
    /// chunk.
    Filter { name: String, reads: Vec<VarId>, p: Lambda, outs: Vec<VarId>, count: VarId, state: StateOwner, write: FilterWrite, count_read: bool },
    /// A scan: the carried values are set like a fold's accumulators, and
    /// each element's output is the value after (`scanl`, `scanr`) or
    /// before (`prescanl`) combining the element. `totals`: how a
    /// two-pass nest's first pass folds a chunk's elements into its total
    /// (`Chain`, or `Lanes(K)` of a reorderable operator:
    /// `loops::totals_blocker`).
    Scan { name: String, dir: ScanKind, init: Vec<Operand>, reads: Vec<VarId>, op: Lambda, outs: Vec<VarId>, state: StateOwner, totals: Accumulate },
    /// The element at the mirrored position: reads `reads[n-1-i]`, writes `outs[i]`.
    Reverse { name: String, reads: Vec<VarId>, outs: Vec<VarId> },
    /// Streams `index` (one array per dimension of the source); reads
    /// `source[index[p]]` from memory (bounds-checked), or the element its
    /// fused producer computes there.
    Gather { name: String, index: Vec<VarId>, source: Vec<VarId>, outs: Vec<VarId>, span: Span },
    /// `outs[i, j] = source[j, i]`: the source at the transposed position,
    /// read from memory or computed there by its fused producer.
    Transpose { name: String, source: Vec<VarId>, outs: Vec<VarId> },
    /// Before the loop `outs` is a copy of `dest`; each iteration combines
    /// the value `src[dims..]` into `outs` at the index `src[..dims]`
    /// (skipped if a component is negative, bounds-checked otherwise).
    Scatter { name: String, dest: Vec<VarId>, src: Vec<VarId>, dims: usize, op: Lambda, outs: Vec<VarId>, span: Span },
    /// Element `i·m + j` of `cross`: `(first[i], second[j])`, both read
    /// from memory; `m` is the length of `second`. `at` names the two loops
    /// whose indices are `i` and `j` when the cross runs in its own
    /// two-deep nest; otherwise `i` and `j` are the quotient and remainder
    /// of its position.
    Cross { name: String, first: Vec<VarId>, second: Vec<VarId>, outs: Vec<VarId>, at: Option<(VarId, VarId)> },
}

impl LoopBody {
    pub fn name(&self) -> &str {
        match self {
            LoopBody::OneToOne { name, .. }
            | LoopBody::FromIndex { name, .. }
            | LoopBody::ManyToOne { name, .. }
            | LoopBody::Filter { name, .. }
            | LoopBody::Scan { name, .. }
            | LoopBody::Reverse { name, .. }
            | LoopBody::Gather { name, .. }
            | LoopBody::Transpose { name, .. }
            | LoopBody::Cross { name, .. }
            | LoopBody::Scatter { name, .. } => name,
        }
    }
    /// Arrays whose current element the body reads (streamed).
    pub fn reads(&self) -> &[VarId] {
        match self {
            LoopBody::OneToOne { reads, .. }
            | LoopBody::ManyToOne { reads, .. }
            | LoopBody::Filter { reads, .. }
            | LoopBody::Scan { reads, .. }
            | LoopBody::Reverse { reads, .. } => reads,
            LoopBody::Scatter { src, .. } => src,
            LoopBody::Gather { index, .. } => index,
            LoopBody::FromIndex { .. } | LoopBody::Cross { .. } | LoopBody::Transpose { .. } => &[],
        }
    }
    /// Arrays read from memory at computed positions: a gather's source,
    /// a cross's arguments. They must be complete before the nest.
    pub fn memory_reads(&self) -> Vec<VarId> {
        match self {
            LoopBody::Gather { source, .. } | LoopBody::Transpose { source, .. } => source.clone(),
            LoopBody::Cross { first, second, .. } => first.iter().chain(second).copied().collect(),
            LoopBody::Scatter { dest, .. } => dest.clone(),
            _ => vec![],
        }
    }
    /// Arrays whose current element the body produces.
    pub fn element_outs(&self) -> &[VarId] {
        match self {
            LoopBody::OneToOne { outs, .. }
            | LoopBody::FromIndex { outs, .. }
            | LoopBody::Filter { outs, .. }
            | LoopBody::Scan { outs, .. }
            | LoopBody::Reverse { outs, .. }
            | LoopBody::Gather { outs, .. }
            | LoopBody::Transpose { outs, .. }
            | LoopBody::Cross { outs, .. }
            | LoopBody::Scatter { outs, .. } => outs,
            LoopBody::ManyToOne { .. } => &[],
        }
    }
    /// Arrays the body makes, one element per position at its own rate,
    /// or (a row-wise fold's results) one per iteration of its state's owner.
    pub fn array_outs(&self) -> Vec<VarId> {
        match self {
            LoopBody::ManyToOne { results, state: Some(_), .. } => results.clone(),
            l => l.element_outs().to_vec(),
        }
    }
    /// The body's worker, if it has one.
    pub fn lambda(&self) -> Option<&Lambda> {
        match self {
            LoopBody::OneToOne { f, .. } | LoopBody::FromIndex { f, .. } => Some(f),
            LoopBody::ManyToOne { op, .. } | LoopBody::Scan { op, .. } | LoopBody::Scatter { op, .. } => Some(op),
            LoopBody::Filter { p, .. } => Some(p),
            LoopBody::Reverse { .. } | LoopBody::Gather { .. } | LoopBody::Transpose { .. } | LoopBody::Cross { .. } => None,
        }
    }
    pub fn lambda_mut(&mut self) -> Option<&mut Lambda> {
        match self {
            LoopBody::OneToOne { f, .. } | LoopBody::FromIndex { f, .. } => Some(f),
            LoopBody::ManyToOne { op, .. } | LoopBody::Scan { op, .. } | LoopBody::Scatter { op, .. } => Some(op),
            LoopBody::Filter { p, .. } => Some(p),
            LoopBody::Reverse { .. } | LoopBody::Gather { .. } | LoopBody::Transpose { .. } | LoopBody::Cross { .. } => None,
        }
    }
    /// Which loop owns the body's state, if it has state.
    pub fn state(&self) -> Option<StateOwner> {
        match self {
            LoopBody::ManyToOne { state, .. } | LoopBody::Filter { state, .. } | LoopBody::Scan { state, .. } => Some(*state),
            _ => None,
        }
    }
    /// The width in bits of the vectors a filter compresses at a time
    /// (`compress W`: W lanes of its first component), else 0.
    pub fn compress_bits(&self, vars: &[VarInfo]) -> u32 {
        match self {
            LoopBody::Filter { outs, write: FilterWrite::Compress(w), .. } => outs.first().map_or(0, |o| w * 8 * vars[o.0 as usize].ty.prim().bytes() as u32),
            _ => 0,
        }
    }
    /// The variables the body's state is kept in: a fold's results, a
    /// scan's carried values (one per output), a filter's count.
    pub fn state_vars(&self) -> Vec<VarId> {
        match self {
            LoopBody::ManyToOne { results, .. } => results.clone(),
            LoopBody::Scan { outs, .. } => outs.clone(),
            LoopBody::Filter { count, .. } => vec![*count],
            _ => vec![],
        }
    }
    pub fn state_mut(&mut self) -> Option<&mut StateOwner> {
        match self {
            LoopBody::ManyToOne { state, .. } | LoopBody::Filter { state, .. } | LoopBody::Scan { state, .. } => Some(state),
            _ => None,
        }
    }
}

/// Where a label's positions come from.
#[derive(Clone, Debug, PartialEq)]
pub enum LabelIndex {
    /// A gather's index arrays (one per dimension of the source), read in
    /// the label's `order`; each component checked against its dimension.
    Arrays(Vec<VarId>),
    /// A transpose's: the position with its two indices exchanged.
    Transposed,
}

/// What a label (papers/002 §3.3) means in a nest: the position a gather
/// or a transpose reads its source at, in this iteration.
#[derive(Clone, Debug, PartialEq)]
pub struct GatherIndex {
    pub label: Order,
    pub name: String,
    pub index: LabelIndex,
    pub order: Order,
    pub source: VarId,
    pub span: Span,
    /// A gather run at another gather's indices (`order` ≥ 2) computes
    /// only the elements gathered, so the nest first checks its whole index
    /// arrays against the source (`checked whole`): an index out of range
    /// at a position nobody gathers is still an error.
    pub whole: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    Leaf(LoopBody, Order),
    /// Vertical fusion: `first` runs, its elements `temps` feed `then`, and are not stored.
    Before { temps: Vec<VarId>, first: Box<Body>, then: Box<Body> },
    /// Diagonal fusion (`Before'`): as `Before`, and `temps` are also stored.
    BeforeKeep { temps: Vec<VarId>, first: Box<Body>, then: Box<Body> },
    /// Horizontal fusion: independent bodies in one iteration, sharing reads.
    Besides(Box<Body>, Box<Body>),
    /// A filter and the bodies that consume its output: `then` runs only for
    /// kept elements, at the sub-rate (its position is the filter's cursor).
    /// `temps` are the filter's arrays `then` reads; stored if manifest.
    When { temps: Vec<VarId>, filter: Box<Body>, then: Box<Body> },
    /// An inner loop: runs to completion in every iteration of the loop
    /// around it; its positions continue the outer loop's row-major
    /// (outer position · extent + index).
    For(Box<Loop>),
}

impl Body {
    /// The leaf bodies in execution order, inner loops' included.
    pub fn leaves(&self) -> Vec<&LoopBody> {
        let mut out = vec![];
        self.visit(&mut |b| {
            if let Body::Leaf(l, _) = b {
                out.push(l);
            }
        });
        out
    }
    /// The leaves that run at the loop's own positions (not under a
    /// filter, not in an inner loop), with their orders, in execution order.
    pub fn at_loop_rate(&self) -> Vec<(&LoopBody, Order)> {
        fn walk<'a>(b: &'a Body, out: &mut Vec<(&'a LoopBody, Order)>) {
            match b {
                Body::Leaf(l, o) => out.push((l, *o)),
                Body::Before { first, then, .. } | Body::BeforeKeep { first, then, .. } | Body::Besides(first, then) => {
                    walk(first, out);
                    walk(then, out);
                }
                Body::When { filter, .. } => walk(filter, out),
                Body::For(_) => {}
            }
        }
        let mut out = vec![];
        walk(self, &mut out);
        out
    }
    /// Calls `f` on this body and every body inside it, in execution order.
    pub fn visit<'a>(&'a self, f: &mut dyn FnMut(&'a Body)) {
        f(self);
        match self {
            Body::Leaf(..) => {}
            Body::Before { first, then, .. } | Body::BeforeKeep { first, then, .. } | Body::Besides(first, then) | Body::When { filter: first, then, .. } => {
                first.visit(f);
                then.visit(f);
            }
            Body::For(l) => l.body.visit(f),
        }
    }
    pub fn visit_mut(&mut self, f: &mut dyn FnMut(&mut Body)) {
        f(self);
        match self {
            Body::Leaf(..) => {}
            Body::Before { first, then, .. } | Body::BeforeKeep { first, then, .. } | Body::Besides(first, then) | Body::When { filter: first, then, .. } => {
                first.visit_mut(f);
                then.visit_mut(f);
            }
            Body::For(l) => l.body.visit_mut(f),
        }
    }
    /// The loops directly inside this body (not inside those).
    pub fn inner_loops(&self) -> Vec<&Loop> {
        match self {
            Body::Leaf(..) => vec![],
            Body::Before { first, then, .. } | Body::BeforeKeep { first, then, .. } | Body::Besides(first, then) | Body::When { filter: first, then, .. } => {
                let mut v = first.inner_loops();
                v.extend(then.inner_loops());
                v
            }
            Body::For(l) => vec![l],
        }
    }
}

/// `for index in 0..extent { body }`, run as its schedule says.
#[derive(Clone, Debug, PartialEq)]
pub struct Loop {
    pub index: VarId,
    pub extent: SizeExpr,
    /// Iterations per trip of the main loop (1 = not unrolled): bodies run
    /// for K consecutive positions, in order, then a remainder loop runs
    /// the rest one by one. Lanes and trees of K need it.
    pub unroll: u32,
    /// The main loop's trip runs its `unroll` positions as one vector
    /// step (`unroll K simd`): a loop over them that LLVM's vectoriser
    /// takes whole, the folds' and scans' elements taken in after it
    /// (docs/strategy.md, "SIMD trips"). Only for bodies `simd_blocker`
    /// finds nothing in.
    pub simd: bool,
    /// Walk positions `i` and `n-1-i` in one trip, so that an array read
    /// forwards and backwards is loaded once (c_tuned/singleLoop.c).
    pub paired: bool,
    /// In a parallel nest, a loop directly inside the root: when the root
    /// loop has fewer than this many positions (a matrix of few rows), the
    /// root runs on the calling thread and this loop runs in chunks in each
    /// of its iterations, its row-wise folds combining their chunks'
    /// partial results in index order (`parallel below R`,
    /// docs/strategy.md "Parallel loops"; `rows_blocker` says when).
    pub parallel_below: Option<u64>,
    pub body: Body,
}

impl Loop {
    pub fn new(index: VarId, extent: SizeExpr, body: Body) -> Loop {
        Loop { index, extent, unroll: 1, simd: false, paired: false, parallel_below: None, body }
    }
}

/// A vector math library the back end may call for `exp`, `log`, `pow`,
/// `sin`, `cos`, … in vectorised loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorMath {
    /// glibc's libmvec (`_ZGVdN4v_exp`, …), linked through `-lm`, called
    /// with vectors of `bits` bits: the function's loops are vectorised
    /// that wide (128, 256 or 512; `VECTOR_MATH_BITS`).
    Libmvec { bits: u32 },
}

/// The vector widths glibc's libmvec has variants for: SSE's, AVX2's and
/// AVX-512's (`_ZGVbN2v_exp`, `_ZGVdN4v_exp`, `_ZGVeN8v_exp`).
pub const VECTOR_MATH_BITS: [u32; 3] = [128, 256, 512];

/// An array a nest writes to memory, and how.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Store {
    pub array: VarId,
    pub mode: StoreMode,
}

/// An array a two-pass nest's first pass keeps for its second
/// (docs/strategy.md, "Keeping what the first pass computed"): the first
/// pass stores `array`'s elements at their positions in `home` — the array
/// itself, which the nest stores anyway, or the output of the scan that
/// reads it, whose element at that position the second pass writes only
/// after reading it — and the second pass loads them instead of computing
/// them again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keep {
    pub array: VarId,
    pub home: VarId,
}

/// One cluster: a tree of loops.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopNest {
    pub cluster: usize,
    pub root: Loop,
    /// Arrays this nest writes to memory (element outputs that are manifest).
    pub stores: Vec<Store>,
    /// Where a rigid extent comes from, for the negative-size error.
    pub span: Span,
    /// The gathers whose labels leaves of this nest run at.
    pub labels: Vec<GatherIndex>,
    /// Sizes of generates that run at a gather's indices rather than over
    /// their own extent: each is still checked non-negative before the loop.
    pub checks: Vec<(Operand, Span)>,
    /// Streaming stores are used when the root extent is at least this many
    /// elements (run-time condition; docs/strategy.md gives the threshold).
    pub streaming_from: Option<u64>,
    /// Runs on all workers: the root loop is cut into chunks of at least
    /// `grain` innermost positions (fewer than that runs on the calling
    /// thread); docs/strategy.md gives the rule and the chunking.
    pub parallel: Option<Parallel>,
    /// What a two-pass nest's first pass keeps for its second (`Keep`;
    /// verified by `loops::keep_blocker`).
    pub keeps: Vec<Keep>,
    /// The widest registers the nest's vectors are held in, in bits, when
    /// narrower than the target's (`registers B`): on Intel's AVX-512 CPUs a
    /// nest whose divides and square roots bound its time runs faster in
    /// 256-bit registers (docs/strategy.md, "Register width"). `None`: the
    /// target's widest.
    pub registers: Option<u32>,
    /// A nest on the calling thread compiled as a function of its own,
    /// which the function calls (`outlined`): LLVM's time on one function
    /// grows faster than its size, and a function whose every nest is a
    /// function of its own is glue, compiled as at -O0 (docs/strategy.md,
    /// "Outlined nests"). Never on a parallel nest, whose chunks are
    /// functions already.
    pub outlined: bool,
}

/// How a parallel nest is cut into chunks (docs/strategy.md, "Parallel
/// loops"). The number of chunks depends only on the sizes — never on the
/// number of workers — so a nest gives the same bits for every thread count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parallel {
    /// The fewest innermost positions worth a chunk of their own (a chunk
    /// is at least `grain` positions of the root loop divided by the
    /// positions of the loops inside it).
    pub grain: u64,
    /// Every chunk but the last is a multiple of `CHUNK_QUANTUM` positions
    /// of the root loop (`aligned`), so each starts as aligned as the whole
    /// loop and runs no remainder trips of its own (a chunk that starts
    /// mid-line writes two lines in part with each vector store). Required
    /// when the nest streams its stores (its peel to alignment is computed
    /// once, for the whole loop); the strategy pass's rule is
    /// docs/strategy.md's "Aligned chunks".
    pub aligned: bool,
    /// Chunks after the first start from state carried over the chunks
    /// before them — a scan's value, a filter's cursor where kept elements
    /// are stored — so the nest runs twice: a first pass computes each
    /// chunk's total (stores off), their running combination in chunk order
    /// gives each chunk its start, and the second pass runs from those.
    /// Exactly when `two_pass` says.
    pub two_pass: bool,
    /// How a two-pass nest's passes meet (docs/strategy.md, "Filters"):
    /// chunk by chunk (`look-back`: each chunk runs its first pass, waits
    /// for the chunk before it to know its own start, publishes the next
    /// one's and runs its second pass while its inputs are still in cache),
    /// or every chunk's first pass before any second pass (a barrier:
    /// reduce-then-scan). Only in a two-pass nest.
    pub look_back: bool,
    /// The nest's scatters update a partial destination per chunk (every
    /// chunk but the first, which updates the output), combined into the
    /// output in chunk order after the chunks — when they are few enough
    /// for the destination's size (a run-time rule, docs/strategy.md);
    /// otherwise the chunks run in order on the calling thread, updating
    /// the output. Exactly when the nest scatters.
    pub partials: bool,
}

/// The most chunks a parallel nest is cut into (the runtime's
/// `AFC_RT_MAX_CHUNKS`): a chunk is at least 1/MAX_CHUNKS of the root loop.
pub const MAX_CHUNKS: u64 = 256;

/// A chunk of an `aligned` parallel nest starts at a multiple of this many
/// positions, so that its first vector-aligned position is as far in as
/// the whole loop's (every vector is at most 64 elements).
pub const CHUNK_QUANTUM: u64 = 64;

impl LoopNest {
    /// The nest is code of its function itself: neither cut into chunks
    /// nor outlined.
    pub fn inline(&self) -> bool {
        self.parallel.is_none() && !self.outlined
    }
    pub fn stored(&self, v: VarId) -> bool {
        self.stores.iter().any(|s| s.array == v)
    }
    pub fn store_arrays(&self) -> Vec<VarId> {
        self.stores.iter().map(|s| s.array).collect()
    }
    /// Some store of the nest streams (its chunks must then be `aligned`).
    pub fn streams(&self) -> bool {
        self.stores.iter().any(|s| s.mode == StoreMode::Streaming)
    }
    /// The home a two-pass nest's first pass keeps `v`'s elements in.
    pub fn kept(&self, v: VarId) -> Option<VarId> {
        self.keeps.iter().find(|k| k.array == v).map(|k| k.home)
    }
    /// Every loop of the nest, outermost first.
    pub fn loops(&self) -> Vec<&Loop> {
        let mut out = vec![&self.root];
        let mut i = 0;
        while i < out.len() {
            let inner = out[i].body.inner_loops();
            out.extend(inner);
            i += 1;
        }
        out
    }
}

/// An extern call, a cluster of its own: the C function `func` called with
/// the export ABI. `args` are the argument leaves, `outputs` the result
/// leaves (C order); each array result's leaves get one length, read from
/// the descriptors the callee fills in.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub cluster: usize,
    pub name: String,
    pub func: String,
    /// C code (an `extern fn`), or a recursive function of this program.
    pub callee: Callee,
    pub args: Vec<Operand>,
    pub outputs: Vec<VarId>,
    pub arrays: Vec<(Vec<VarId>, VarId)>,
    /// Dimensions of results whose size something else fixes first (a
    /// parameter, an earlier call's result): `(result, dimension, size)`,
    /// checked once the call returns.
    pub checks: Vec<(VarId, u8, SizeExpr)>,
    pub span: Span,
}

/// An array-level `if`, a cluster of its own: the steps of `then` or of
/// `els` run as `cond` says, and `outputs` become what that branch yields.
/// Arrays a branch makes become the outputs' storage; arrays it passes
/// through from outside are copied.
#[derive(Clone, Debug, PartialEq)]
pub struct Branch {
    pub cluster: usize,
    pub name: String,
    pub cond: Operand,
    pub then: Vec<Step>,
    pub then_results: Vec<Operand>,
    pub els: Vec<Step>,
    pub els_results: Vec<Operand>,
    pub outputs: Vec<VarId>,
    /// Dimensions of outputs whose size something else fixes (as a call's):
    /// `(output, dimension, size)`, checked once the branch has run.
    pub checks: Vec<(VarId, u8, SizeExpr)>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Stmt(Stmt),
    Loop(Box<LoopNest>),
    Call(Call),
    If(Branch),
    /// Checks that every array result fits the caller's storage, before
    /// anything is written there (LANGUAGE.md); from here on results are
    /// made in their final storage. Placed once every result's room is
    /// known; one per function with array results.
    CheckRoom,
    /// Releases arrays this function allocated (intermediates: stored by a
    /// nest, returned by a call or an `if` of these steps) once no later
    /// step names them, so that a function holds only the arrays still
    /// needed, not every intermediate until it returns (docs/strategy.md,
    /// "Freeing").
    Free(Vec<VarId>),
}

#[derive(Clone, Debug)]
pub struct Function {
    pub name: String,
    /// Exported: a global symbol with the C ABI of LANGUAGE.md. Otherwise
    /// a recursive function only this object calls (with the same ABI).
    pub exported: bool,
    /// In a cycle of calls: its depth is checked on entry.
    pub recursive: bool,
    pub params: Vec<Leaf>,
    pub results: Vec<Leaf>,
    pub vars: Vec<VarInfo>,
    pub steps: Vec<Step>,
    /// The shape of every array the function touches: one size per
    /// dimension, outermost first.
    pub sizes: IndexMap<VarId, Vec<SizeExpr>>,
    /// The room every array needs in its outermost dimension: its size, or
    /// for a filter's result (and arrays of its size) the size of what was
    /// filtered, an upper bound.
    pub capacity: IndexMap<VarId, SizeExpr>,
    /// Groups of parameters' dimensions whose sizes must be equal (checked
    /// on entry), each a `SizeExpr::Dim`.
    pub same_size: Vec<Vec<SizeExpr>>,
    /// The vector math library its loops may call (under `--fast-math`).
    pub vector_math: Option<VectorMath>,
    /// Results made before `CheckRoom` (their room was not known yet): made
    /// in afc's own buffers and copied into the caller's storage at the end.
    /// Every other result is written once, in place.
    pub staged: Vec<VarId>,
    /// `FILE:LINE:COL` of a span, for run-time error messages.
    pub locations: IndexMap<Span, String>,
    pub span: Span,
}

#[derive(Clone, Debug, Default)]
pub struct Program {
    pub functions: Vec<Function>,
}

impl Function {
    pub fn var(&self, v: VarId) -> &VarInfo {
        &self.vars[v.0 as usize]
    }
    /// The rank of an array variable (0 for a scalar).
    pub fn rank(&self, v: VarId) -> usize {
        match self.var(v).ty {
            crate::labelled::VarTy::Array(r, _) => r as usize,
            _ => 0,
        }
    }
    /// `name_12`: the printed form of a variable, unique within the function.
    pub fn var_name(&self, v: VarId) -> String {
        format!("{}_{}", self.var(v).name, v.0)
    }
    pub fn location(&self, s: Span) -> &str {
        self.locations.get(&s).map(|s| s.as_str()).unwrap_or("?")
    }
    /// Every step, those in `if` branches included (after their `if`), in order.
    pub fn all_steps(&self) -> Vec<&Step> {
        fn walk<'a>(steps: &'a [Step], out: &mut Vec<&'a Step>) {
            for s in steps {
                out.push(s);
                if let Step::If(b) = s {
                    walk(&b.then, out);
                    walk(&b.els, out);
                }
            }
        }
        let mut out = vec![];
        walk(&self.steps, &mut out);
        out
    }
    /// Every loop nest, those in `if` branches included, in order.
    pub fn nests(&self) -> Vec<&LoopNest> {
        self.all_steps().into_iter().filter_map(|s| if let Step::Loop(n) = s { Some(&**n) } else { None }).collect()
    }
    pub fn nests_mut(&mut self) -> Vec<&mut LoopNest> {
        fn walk<'a>(steps: &'a mut [Step], out: &mut Vec<&'a mut LoopNest>) {
            for s in steps {
                match s {
                    Step::Loop(n) => out.push(n),
                    Step::If(b) => {
                        walk(&mut b.then, out);
                        walk(&mut b.els, out);
                    }
                    _ => {}
                }
            }
        }
        let mut out = vec![];
        walk(&mut self.steps, &mut out);
        out
    }
    /// Every call, those in `if` branches included.
    pub fn calls(&self) -> Vec<&Call> {
        self.all_steps().into_iter().filter_map(|s| if let Step::Call(c) = s { Some(c) } else { None }).collect()
    }
    /// The array results, each once, that this function makes itself
    /// (not parameters), in order. A set: a function may return thousands.
    pub fn made_results(&self) -> IndexSet<VarId> {
        let params: IndexSet<VarId> = self.params.iter().filter_map(|l| if let Operand::Var(v) = l.value { Some(v) } else { None }).collect();
        let mut out = IndexSet::new();
        for l in &self.results {
            if let Operand::Var(v) = l.value {
                if self.var(v).ty.is_array() && !params.contains(&v) {
                    out.insert(v);
                }
            }
        }
        out
    }
    /// The variables each step defines, by step.
    pub fn step_defs(&self, s: &Step) -> Vec<VarId> {
        match s {
            Step::Stmt(s) => crate::labelled::stmt_defs(s),
            Step::Loop(n) => {
                let mut out = n.store_arrays();
                for l in n.root.body.leaves() {
                    match l {
                        LoopBody::ManyToOne { results, .. } => out.extend(results.iter().copied()),
                        LoopBody::Filter { count, .. } => out.push(*count),
                        _ => {}
                    }
                }
                out
            }
            Step::Call(c) => {
                let mut out = c.outputs.clone();
                out.extend(c.arrays.iter().map(|(_, n)| *n));
                out
            }
            Step::If(b) => b.outputs.clone(),
            Step::CheckRoom | Step::Free(_) => vec![],
        }
    }
    /// The filters' counts that something after their nest reads
    /// (docs/strategy.md, "Counts nothing reads"). A count is read where
    /// a statement, a worker, a loop's extent, a check, a call, a branch or
    /// a result names it, or where it is a size of an array that any of
    /// these names or that is in memory: every array but the elements a
    /// nest makes and consumes without storing them. Conservative: an
    /// array named anywhere keeps its sizes' counts.
    pub fn counts_read(&self) -> IndexSet<VarId> {
        let mut named: IndexSet<VarId> = IndexSet::new();
        let ops = |os: &[Operand], named: &mut IndexSet<VarId>| named.extend(os.iter().filter_map(|o| if let Operand::Var(v) = o { Some(*v) } else { None }));
        let size = |s: &SizeExpr, named: &mut IndexSet<VarId>| match s {
            SizeExpr::Dim(v, _) | SizeExpr::Scalar(Operand::Var(v)) => {
                named.insert(*v);
            }
            SizeExpr::Scalar(_) => {}
        };
        let mut counts: IndexSet<VarId> = IndexSet::new();
        for step in self.all_steps() {
            match step {
                Step::Stmt(s) => named.extend(crate::labelled::stmt_uses(s)),
                Step::Loop(n) => {
                    for l in n.loops() {
                        size(&l.extent, &mut named);
                    }
                    for (o, _) in &n.checks {
                        ops(std::slice::from_ref(o), &mut named);
                    }
                    named.extend(n.store_arrays());
                    named.extend(n.keeps.iter().flat_map(|k| [k.array, k.home]));
                    for g in &n.labels {
                        named.insert(g.source);
                        if let LabelIndex::Arrays(ix) = &g.index {
                            named.extend(ix.iter().copied());
                        }
                    }
                    let leaves = n.root.body.leaves();
                    let made: IndexSet<VarId> = leaves.iter().flat_map(|l| l.array_outs()).collect();
                    for l in &leaves {
                        match l {
                            LoopBody::Filter { count, .. } => {
                                counts.insert(*count);
                            }
                            LoopBody::ManyToOne { init, .. } | LoopBody::Scan { init, .. } => ops(init, &mut named),
                            _ => {}
                        }
                        if let Some(lam) = l.lambda() {
                            named.extend(lam.captures.iter().copied());
                        }
                        named.extend(l.memory_reads());
                        named.extend(l.reads().iter().filter(|r| !made.contains(*r)).copied());
                    }
                }
                Step::Call(c) => {
                    ops(&c.args, &mut named);
                    named.extend(c.outputs.iter().copied());
                    named.extend(c.arrays.iter().flat_map(|(vs, n)| vs.iter().copied().chain([*n])));
                    for (v, _, s) in &c.checks {
                        named.insert(*v);
                        size(s, &mut named);
                    }
                }
                Step::If(b) => {
                    ops(std::slice::from_ref(&b.cond), &mut named);
                    ops(&b.then_results, &mut named);
                    ops(&b.els_results, &mut named);
                    named.extend(b.outputs.iter().copied());
                    for (v, _, s) in &b.checks {
                        named.insert(*v);
                        size(s, &mut named);
                    }
                }
                Step::CheckRoom => {}
                Step::Free(vs) => named.extend(vs.iter().copied()),
            }
        }
        for l in self.params.iter().chain(&self.results) {
            ops(std::slice::from_ref(&l.value), &mut named);
        }
        named.extend(self.staged.iter().copied());
        for group in &self.same_size {
            for s in group {
                size(s, &mut named);
            }
        }
        // The sizes of what is named, and of that (a size is a scalar or a
        // named array's dimension, so one round reaches every count).
        let mut read: IndexSet<VarId> = counts.iter().filter(|c| named.contains(*c)).copied().collect();
        for (a, dims) in self.sizes.iter().map(|(a, d)| (a, d.as_slice())).chain(self.capacity.iter().map(|(a, c)| (a, std::slice::from_ref(c)))) {
            if named.contains(a) {
                read.extend(dims.iter().filter_map(|d| if let SizeExpr::Scalar(Operand::Var(v)) = d { Some(*v) } else { None }).filter(|v| counts.contains(v)));
            }
        }
        read
    }
    /// Every array a step names: reads, makes, passes or frees (a branch's
    /// steps' arrays included), in first mention order.
    pub fn step_arrays(&self, s: &Step) -> IndexSet<VarId> {
        let mut out: IndexSet<VarId> = IndexSet::new();
        let ops = |os: &[Operand], out: &mut IndexSet<VarId>| out.extend(os.iter().filter_map(|o| if let Operand::Var(v) = o { Some(*v) } else { None }));
        match s {
            Step::Stmt(s) => {
                out.extend(crate::labelled::stmt_uses(s));
                out.extend(crate::labelled::stmt_defs(s));
            }
            Step::Loop(n) => {
                n.root.body.visit(&mut |b| match b {
                    Body::Leaf(l, _) => {
                        out.extend(l.reads().iter().copied());
                        out.extend(l.memory_reads());
                        out.extend(l.array_outs());
                        out.extend(l.element_outs().iter().copied());
                        if let Some(lam) = l.lambda() {
                            out.extend(lam.captures.iter().copied());
                            out.extend(lam.body.stmts.iter().flat_map(crate::labelled::stmt_uses));
                        }
                        match l {
                            LoopBody::ManyToOne { init, .. } | LoopBody::Scan { init, .. } => ops(init, &mut out),
                            LoopBody::Scatter { dest, .. } => out.extend(dest.iter().copied()),
                            _ => {}
                        }
                    }
                    Body::Before { temps, .. } | Body::BeforeKeep { temps, .. } | Body::When { temps, .. } => out.extend(temps.iter().copied()),
                    Body::Besides(..) | Body::For(_) => {}
                });
                for g in &n.labels {
                    out.insert(g.source);
                    if let LabelIndex::Arrays(ix) = &g.index {
                        out.extend(ix.iter().copied());
                    }
                }
                out.extend(n.store_arrays());
            }
            Step::Call(c) => {
                ops(&c.args, &mut out);
                out.extend(c.outputs.iter().copied());
            }
            Step::If(b) => {
                ops(std::slice::from_ref(&b.cond), &mut out);
                for s in b.then.iter().chain(&b.els) {
                    out.extend(self.step_arrays(s));
                }
                ops(&b.then_results, &mut out);
                ops(&b.els_results, &mut out);
                out.extend(b.outputs.iter().copied());
            }
            Step::CheckRoom => {}
            Step::Free(vs) => out.extend(vs.iter().copied()),
        }
        out.retain(|v| (v.0 as usize) < self.vars.len() && self.var(*v).ty.is_array());
        out
    }
}

/// Records the location of every span in a block, for error messages.
pub fn collect_locations(file: &SourceFile, b: &Block, out: &mut IndexMap<Span, String>) {
    for s in &b.stmts {
        collect_stmt_location(file, s, out);
    }
}

pub fn collect_stmt_location(file: &SourceFile, s: &Stmt, out: &mut IndexMap<Span, String>) {
    match s {
        Stmt::Assign { span, .. } => {
            out.insert(*span, file.location(*span));
        }
        Stmt::If { span, then, els, .. } => {
            out.insert(*span, file.location(*span));
            collect_locations(file, then, out);
            collect_locations(file, els, out);
        }
    }
}
