//! Loop nests: each `Loop` of the loop IR becomes a counted LLVM loop run
//! as its schedule says (plain, unrolled by K with a remainder loop, or
//! paired), each body copy at its own position; stateful leaves keep their
//! state in entry-block slots that LLVM promotes to registers. This file
//! only obeys the strategies the loop IR records.

use super::*;
use afc_ir::loops::{reorderable, Accumulate, CombineOp, FilterWrite, LabelIndex, Loop, Order, Parallel, StateOwner, StoreMode, TotalsPass, CHUNK_QUANTUM, MAX_CHUNKS};
use indexmap::IndexSet;

/// Where one copy of a body runs.
#[derive(Clone)]
pub(super) struct Pos<'ctx> {
    /// The position at the copy's rate: row-major over the loops around it,
    /// or a filter's cursor at its sub-rate.
    i: IntValue<'ctx>,
    /// The last position at this rate, to mirror order 1 (none at a sub-rate).
    last: Option<IntValue<'ctx>>,
    /// The number of positions at this rate (the loops' extents multiplied).
    total: IntValue<'ctx>,
    /// The loops around the copy, outermost first: index variable, the
    /// index's value, the loop's extent.
    loops: Vec<(VarId, IntValue<'ctx>, IntValue<'ctx>)>,
    /// Which lane of an unrolled trip the copy is (0 outside trips).
    lane: usize,
    /// Inside an unrolled trip: tree folds collect their elements.
    trip: bool,
    /// In a SIMD trip (`unroll K simd`): the copy's lane, a position of
    /// the loop over the trip, and K; folds and scans put their elements
    /// there.
    simd: Option<(IntValue<'ctx>, u32)>,
    /// Under a branch-free filter: whether the element is kept.
    mask: Option<IntValue<'ctx>>,
    /// In a paired loop: whether this copy runs at the mirrored position
    /// (so its order-0 accesses are in the upper half of every array).
    mirrored: Option<bool>,
    /// At a branch-free filter's sub-rate in a chunk that resumes from a
    /// start: where the next chunk's elements begin. A masked (skipped)
    /// element's store at that position would race with the next chunk's
    /// first kept one, so it goes to a scratch slot instead.
    limit: Option<IntValue<'ctx>>,
}

/// What one copy has computed: elements by (array, order), and the
/// position each gather label stands for (computed once, bounds-checked).
#[derive(Default)]
pub(super) struct Elems<'ctx> {
    vals: IndexMap<(VarId, u32), BasicValueEnum<'ctx>>,
    /// Each label's position: row-major, and one index per dimension.
    idx: IndexMap<u32, (IntValue<'ctx>, Vec<IntValue<'ctx>>)>,
}

/// A nest being generated.
pub(super) struct NestCx<'ctx> {
    base: IndexMap<VarId, PointerValue<'ctx>>,
    /// Each stateful leaf's slots (keyed by `state_key`): per lane, one per
    /// accumulator, or the cursor.
    states: IndexMap<VarId, Vec<Vec<PointerValue<'ctx>>>>,
    /// Tree folds' elements collected in the current trip, per lane.
    groups: IndexMap<VarId, Vec<Vec<BasicValueEnum<'ctx>>>>,
    stores: Vec<afc_ir::loops::Store>,
    /// This version of the nest uses streaming stores where marked.
    streaming: bool,
    /// Each tree fold's operator and results, by state key.
    tree_ops: IndexMap<VarId, (Lambda, Vec<VarId>)>,
    /// Folds with lanes: one vector slot per accumulator (lane j in
    /// element j), each component's operator, and the trip's elements.
    lanes: IndexMap<VarId, (Vec<PointerValue<'ctx>>, Vec<CombineOp>)>,
    lane_groups: IndexMap<VarId, Vec<Vec<BasicValueEnum<'ctx>>>>,
    /// Folds with lanes or trees in a SIMD trip: per component, the trip's
    /// elements in memory (`[K x T]`, lane j at j), read back after it.
    simd_elems: IndexMap<VarId, TripElems<'ctx>>,
    /// In a paired loop, alias scopes for the lower and upper halves: no
    /// access to one half touches the other, which LLVM cannot see itself.
    halves: Option<[(inkwell::values::MetadataValue<'ctx>, inkwell::values::MetadataValue<'ctx>); 2]>,
    /// In the streaming version: where the aligned main loop starts, and
    /// each streamed array's values of the current trip, in lane order.
    peel: Option<IntValue<'ctx>>,
    stream_vals: IndexMap<VarId, Vec<BasicValueEnum<'ctx>>>,
    /// In a chunk function: the chunk this runs, the loop whose positions
    /// it bounds (the root's when none) and the owner of the states whose
    /// partial results it leaves (the nest's, or a row's loop).
    chunk: Option<Chunk<'ctx>>,
    chunked: Option<VarId>,
    chunk_owner: StateOwner,
    /// A parallel nest whose root runs on the calling thread: the loop
    /// inside it that runs in chunks, row by row (`parallel below`).
    rows: Option<Rows>,
    /// States that start empty (a later chunk's fold, a first pass's scan):
    /// per state key, whether it holds a value yet; while it does not, the
    /// first element becomes the state (the operator may have no identity).
    fresh: IndexMap<VarId, PointerValue<'ctx>>,
    /// Resumed filters: where the next chunk's cursor starts.
    limits: IndexMap<VarId, IntValue<'ctx>>,
    /// Where a resumed chunk's masked stores past its limit go.
    scratch: Option<PointerValue<'ctx>>,
    /// Compressing filters' predicates and elements in the current trip,
    /// lane by lane, by `leaf_key` (flush_compress).
    compress_vals: IndexMap<VarId, (LoopBody, CompressLanes<'ctx>)>,
    /// The leaves (by `leaf_key`) a first pass skips: all but the ones its
    /// totals need (`TotalsPass`).
    skip: IndexSet<VarId>,
    /// Scatters updating a partial destination in this chunk (by
    /// `leaf_key`): whether it does (chunks after the first, when the call
    /// uses partials) and its has-value bytes.
    partial: IndexMap<VarId, (IntValue<'ctx>, PointerValue<'ctx>)>,
    /// Arrays a two-pass nest keeps (`LoopNest::keeps`): per array, its
    /// home and whether this pass saves its elements there or loads them.
    keep: IndexMap<VarId, (VarId, KeepMode)>,
}

/// What a pass does with a kept array (`LoopNest::keeps`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum KeepMode {
    /// The first pass computes its elements and stores them in its home.
    Save,
    /// The second pass, after a first, loads them from there.
    Load,
}

impl<'ctx> NestCx<'ctx> {
    /// A nest's context before its loops: what it reads and stores, and
    /// the chunk it runs (of the root loop, the nest's states partial).
    fn new(base: IndexMap<VarId, PointerValue<'ctx>>, stores: Vec<afc_ir::loops::Store>, chunk: Option<Chunk<'ctx>>) -> Self {
        NestCx {
            base,
            states: IndexMap::new(),
            groups: IndexMap::new(),
            stores,
            streaming: false,
            tree_ops: IndexMap::new(),
            lanes: IndexMap::new(),
            lane_groups: IndexMap::new(),
            simd_elems: IndexMap::new(),
            halves: None,
            peel: None,
            stream_vals: IndexMap::new(),
            chunk,
            chunked: None,
            chunk_owner: None,
            rows: None,
            fresh: IndexMap::new(),
            limits: IndexMap::new(),
            scratch: None,
            compress_vals: IndexMap::new(),
            skip: IndexSet::new(),
            partial: IndexMap::new(),
            keep: IndexMap::new(),
        }
    }
}

/// A fold's step: the new state from the state and the elements.
type Step<'a, 'ctx, G> = dyn FnMut(&mut G, &[BasicValueEnum<'ctx>]) -> R<Vec<BasicValueEnum<'ctx>>> + 'a;

/// A compressing filter's lanes in a trip: each lane's predicate and element.
type CompressLanes<'ctx> = Vec<(IntValue<'ctx>, Vec<BasicValueEnum<'ctx>>)>;

/// A fold's or scan's elements in a SIMD trip.
#[derive(Clone)]
struct TripElems<'ctx> {
    k: u32,
    kind: TripKind,
    /// Per component, the `[K x T]` in memory, with T.
    slots: Vec<(PointerValue<'ctx>, afc_ir::types::Prim)>,
}

/// What takes a SIMD trip's elements after its vector step.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TripKind {
    /// A lanes fold: one vector per component into its accumulators.
    Lanes,
    /// A tree fold: the K elements as the trip's group.
    Tree,
    /// A scan: stepped through the K elements in order.
    Scan,
}

/// A scatter's partial destinations (`Parallel::partials`): per output a
/// buffer of `(chunks - 1) * len` elements, and a has-value byte per
/// element, for chunks 1.. (chunk 0 updates the output itself); `on` says
/// whether this call uses them — if not, the chunks run in order on the
/// calling thread, all updating the output.
#[derive(Clone)]
pub(super) struct Partials<'ctx> {
    bufs: Vec<PointerValue<'ctx>>,
    flags: PointerValue<'ctx>,
    len: IntValue<'ctx>,
    on: IntValue<'ctx>,
}

/// The partial destinations of a nest's scatters, by `leaf_key`.
type ScatterParts<'ctx> = IndexMap<VarId, Partials<'ctx>>;

/// Partial destinations are used when their elements, `(chunks - 1) *
/// len`, are at most 1/PARTIAL_SHARE of the nest's positions: the chunks
/// are made fewer (larger) until they are, since combining them runs on
/// the calling thread after the chunks.
const PARTIAL_SHARE: u64 = 64;

/// Streaming stores are used only when no streamed output starts 1 ..
/// STREAM_ALIAS_WINDOW bytes past an input of its width modulo 4 KiB
/// (`stream_apart`): measured on Zen, outputs 32-576 bytes past made a
/// three-array copy 3-15x slower, 640 1.5x, 1024 and more not at all.
const STREAM_ALIAS_WINDOW: u64 = 1024;

/// Which run of a parallel nest a chunk function is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Pass {
    /// A one-pass nest's chunks.
    Only,
    /// A two-pass nest's first: stores off, only the leaves the carried
    /// states need (`TotalsPass`); each carried state (scan, filter cursor)
    /// ends in the chunk's total.
    Totals,
    /// A two-pass nest's second: carried states start from the totals of
    /// the chunks before, combined in chunk order.
    Resume,
    /// A look-back nest's step between a chunk's passes: the next chunk's
    /// start from this chunk's start and total (no loop).
    Carry,
}

impl Pass {
    /// What a chunk function of this pass adds to the nest's name.
    fn suffix(self) -> &'static str {
        match self {
            Pass::Totals => ".totals",
            Pass::Carry => ".carry",
            Pass::Only | Pass::Resume => "",
        }
    }
}

/// A nest run row by row: the loop inside its root that runs in chunks in
/// each of the root's iterations, and what its chunk functions need of the
/// nest.
#[derive(Clone)]
pub(super) struct Rows {
    j: VarId,
    grain: u64,
    cluster: usize,
    span: Span,
}

/// A stateful leaf's end of a nest: a fold's results, a filter's count, a
/// scan's carried values (by its outputs), and, for a state that started
/// empty, whether it holds anything.
pub(super) struct End<'ctx> {
    leaf: LoopBody,
    vals: Vec<(VarId, BasicValueEnum<'ctx>)>,
    has: Option<IntValue<'ctx>>,
}

/// Per variable of a nest's state, a table of `MAX_CHUNKS + 2` entries in
/// memory form: partial results per chunk, or carried starts (and the
/// state after the last chunk; a filter's count after that).
type Tables<'ctx> = IndexMap<VarId, (PointerValue<'ctx>, BasicTypeEnum<'ctx>)>;

/// A two-pass nest as its first pass runs it: each scan whose chunk totals
/// fold in lanes (`totals lanes K`) is the fold of its elements in lanes,
/// its outputs the fold's results. A reorderable operator combines in
/// either order, so a `scanr`'s (element on the left) is the fold's.
fn totals_as_folds(n: &LoopNest) -> LoopNest {
    let mut m = n.clone();
    m.root.body.visit_mut(&mut |b| {
        if let Body::Leaf(l @ LoopBody::Scan { totals: Accumulate::Lanes(_), .. }, _) = b {
            if let LoopBody::Scan { name, init, reads, op, outs, state, totals, .. } = l.clone() {
                *l = LoopBody::ManyToOne { name, init, reads, op, results: outs, state, acc: totals };
            }
        }
    });
    m
}

/// A leaf's identity in a nest — for a stateful leaf, the variable its
/// state is known by: its first output (or result, or count).
fn leaf_key(l: &LoopBody) -> VarId {
    match l {
        LoopBody::ManyToOne { results, .. } => results[0],
        LoopBody::Filter { count, .. } => *count,
        l => l.element_outs()[0],
    }
}

/// The chunk a chunk function runs: its number, and its positions
/// `lo..hi` of the root loop.
#[derive(Clone, Copy)]
pub(super) struct Chunk<'ctx> {
    index: IntValue<'ctx>,
    lo: IntValue<'ctx>,
    hi: IntValue<'ctx>,
    pass: Pass,
    /// A run pass whose chunks may go in order on one thread, each from
    /// where the one before ended (then true): it leaves its carried states
    /// for the next chunk, and bounds no store by the next chunk's start.
    chained: Option<IntValue<'ctx>>,
}

/// The alignment of a SIMD trip's elements of `p` in memory: the whole
/// vector's (`[K x T]` read back as `<K x T>`), at most 64 bytes.
fn trip_align(p: afc_ir::types::Prim, k: u32) -> u32 {
    (p.bytes() as u32 * k).next_power_of_two().min(64)
}

/// The vector of `k` elements of a scalar type.
fn vec_type<'ctx>(t: BasicTypeEnum<'ctx>, k: u32) -> inkwell::types::VectorType<'ctx> {
    match t {
        BasicTypeEnum::FloatType(f) => f.vec_type(k),
        BasicTypeEnum::IntType(i) => i.vec_type(k),
        _ => unreachable!("lanes hold scalars"),
    }
}

trait VecOf<'ctx> {
    fn vec_of(self, k: u32) -> inkwell::types::VectorType<'ctx>;
}

impl<'ctx> VecOf<'ctx> for BasicTypeEnum<'ctx> {
    fn vec_of(self, k: u32) -> inkwell::types::VectorType<'ctx> {
        vec_type(self, k)
    }
}

/// Whether a stateful leaf's end binds scalars after its nest: a fold's
/// results, a filter's count when something reads it (not a scan's
/// carried values, which are its elements).
fn binds(l: &LoopBody) -> bool {
    !matches!(l, LoopBody::Scan { .. } | LoopBody::Filter { count_read: false, .. })
}

/// The stateful leaves inside `b` (inner loops included) whose state `owner` owns.
fn owned_by(b: &Body, owner: StateOwner) -> Vec<LoopBody> {
    let mut out = vec![];
    b.visit(&mut |x| {
        if let Body::Leaf(l, _) = x {
            if l.state() == Some(owner) {
                out.push(l.clone());
            }
        }
    });
    out
}

impl<'a, 'ctx> Gen<'a, 'ctx> {
    pub(super) fn nest(&mut self, n: &LoopNest) -> R<()> {
        self.registers = n.registers;
        let done = self.nest_in_width(n);
        self.registers = None;
        done
    }

    /// `nest`, with `self.registers` the nest's.
    fn nest_in_width(&mut self, n: &LoopNest) -> R<()> {
        let cx = self.cx;
        let i64t = cx.i64_type();
        let extent = self.size_expr(&n.root.extent)?;
        if let SizeExpr::Scalar(o) = &n.root.extent {
            if !matches!(o, Operand::Const(Const::I64(k)) if *k >= 0) {
                let neg = self.b.build_int_compare(IntPredicate::SLT, extent, i64t.const_zero(), "negative")?;
                let msg = format!("{}: negative size", self.f.location(n.span));
                self.fail_if(neg, ERR_NEGATIVE_SIZE, &msg, Some(extent), None)?;
            }
        }
        for (o, span) in &n.checks {
            let size = self.operand(o).into_int_value();
            let neg = self.b.build_int_compare(IntPredicate::SLT, size, i64t.const_zero(), "negative")?;
            let msg = format!("{}: negative size", self.f.location(*span));
            self.fail_if(neg, ERR_NEGATIVE_SIZE, &msg, Some(size), None)?;
        }
        if n.labels.iter().any(|g| g.whole) {
            if n.inline() {
                for gi in n.labels.iter().filter(|g| g.whole) {
                    self.check_whole(gi)?;
                }
            } else {
                // Loops over positions, in a function of their own beside
                // the nest's: the calling function stays glue.
                let name = format!("{}.nest{}.check", self.f.name, n.cluster);
                self.call_outlined(&name, n.span, self.cx.i64_type().const_zero(), &mut |g, params| g.checks_body(n, &name, params))?;
            }
        }
        // Arrays without storage yet (intermediates, staged results) get
        // afc's own, now that their room is known.
        for s in &n.stores {
            if !self.slots.contains_key(&s.array) {
                let bytes = self.cap_bytes(s.array)?;
                let p = self.alloc(bytes, s.array)?;
                self.slots.insert(s.array, p);
            }
        }
        self.labels = n.labels.clone();
        if let Some(par) = n.parallel {
            return self.parallel_nest(n, par);
        }
        if n.outlined {
            return self.outlined_nest(n);
        }
        // State the nest owns: fold results and filter counts are scalars now.
        for e in self.run_nest(n, None, &Tables::new(), &ScatterParts::new(), None)? {
            if binds(&e.leaf) {
                self.scalars.extend(e.vals);
            }
        }
        Ok(())
    }

    /// A gather run at another gather's indices (`checked whole`): its
    /// whole index arrays checked against its source before the nest, the
    /// first index out of range in index order (dimension by dimension at
    /// one position) reported as the gather itself would. A first loop,
    /// which LLVM vectorises, learns whether any index is out of range;
    /// only then a second finds the first.
    fn check_whole(&mut self, gi: &afc_ir::loops::GatherIndex) -> R<()> {
        let LabelIndex::Arrays(ix) = &gi.index else { return Ok(()) };
        let (cx, i64t) = (self.cx, self.cx.i64_type());
        let dims = self.dims(gi.source)?;
        let data = ix.iter().map(|a| self.array_ptr(*a)).collect::<R<Vec<_>>>()?;
        let n = self.size(ix[0])?;
        let index = |g: &mut Self, d: usize, k: IntValue<'ctx>| -> R<(IntValue<'ctx>, IntValue<'ctx>)> {
            let ep = unsafe { g.b.build_in_bounds_gep(i64t, data[d], &[k], "index")? };
            let x = g.b.build_load(i64t, ep, "index")?.into_int_value();
            Ok((x, g.b.build_int_compare(IntPredicate::UGE, x, dims[d], "bad")?))
        };
        let any = self.entry_alloca(cx.bool_type().into(), "out_of_range")?;
        self.b.build_store(any, cx.bool_type().const_zero())?;
        self.counted("check_whole", Trips::Positions, i64t.const_zero(), n, 1, &mut |g, k| {
            let mut acc = g.b.build_load(cx.bool_type(), any, "any")?.into_int_value();
            for d in 0..ix.len() {
                let (_, bad) = index(g, d, k)?;
                acc = g.b.build_or(acc, bad, "any")?;
            }
            g.b.build_store(any, acc)?;
            Ok(())
        })?;
        let (find, done) = (self.new_block("find_bad_index"), self.new_block("indices_checked"));
        let found = self.b.build_load(cx.bool_type(), any, "any")?.into_int_value();
        self.b.build_conditional_branch(found, find, done)?;
        self.b.position_at_end(find);
        let at = self.f.location(gi.span).to_string();
        self.counted("first_bad_index", Trips::Positions, i64t.const_zero(), n, 1, &mut |g, k| {
            for (d, extent) in dims.iter().enumerate().take(ix.len()) {
                let (x, bad) = index(g, d, k)?;
                let dim = if ix.len() > 1 { format!(" (dimension {})", d) } else { String::new() };
                g.fail_if(bad, ERR_INDEX, &format!("{}: index out of range in gather '{}'{}", at, gi.name, dim), Some(x), Some(*extent))?;
            }
            Ok(())
        })?;
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(done);
        Ok(())
    }

    /// Base pointers of everything `leaves` stream, read or store.
    fn base_pointers(&mut self, leaves: &[LoopBody], stores: &[afc_ir::loops::Store]) -> R<IndexMap<VarId, PointerValue<'ctx>>> {
        let mut base: IndexMap<VarId, PointerValue<'ctx>> = IndexMap::new();
        for l in leaves {
            for v in l.reads().iter().chain(stores.iter().map(|s| &s.array)).chain(&l.memory_reads()) {
                if self.has_storage(*v) && !base.contains_key(v) {
                    let p = self.array_ptr(*v)?;
                    base.insert(*v, p);
                }
            }
        }
        Ok(base)
    }

    /// The loops of a nest — all of them, or in a chunk function the
    /// positions `lo..hi` of the root loop, carried states resuming from
    /// `starts` in a second pass — and the ends of the state the nest owns.
    fn run_nest(&mut self, n: &LoopNest, chunk: Option<Chunk<'ctx>>, starts: &Tables<'ctx>, parts: &ScatterParts<'ctx>, rows: Option<Rows>) -> R<Vec<End<'ctx>>> {
        // A first pass folds the scans whose totals go in lanes as folds
        // in lanes of their elements.
        let whole = n;
        let folded;
        let n = match chunk {
            Some(c) if c.pass == Pass::Totals => {
                folded = totals_as_folds(n);
                &folded
            }
            _ => n,
        };
        let extent = self.size_expr(&n.root.extent)?;
        let leaves: Vec<LoopBody> = n.root.body.leaves().into_iter().cloned().collect();
        let base = self.base_pointers(&leaves, &n.stores)?;
        // A scatter starts from a copy of its destination (made once, by
        // the caller, for a parallel nest's chunks).
        if chunk.is_none() {
            self.copy_scatter_dests(&leaves)?;
        }
        let mut nx = NestCx::new(base, n.stores.clone(), chunk);
        nx.rows = rows;
        if let Some(c) = chunk {
            self.partial_dests(&leaves, c, parts, &mut nx)?;
        }
        let owned = owned_by(&n.root.body, None);
        self.init_states(&owned, &mut nx)?;
        if let Some(c) = chunk {
            self.chunk_states(c, &owned, starts, &mut nx)?;
            if c.pass == Pass::Totals {
                // A first pass stores nothing and runs only what its totals need.
                nx.stores.clear();
                let pass = TotalsPass::new(whole);
                for l in whole.root.body.leaves() {
                    if !pass.runs(l) {
                        nx.skip.insert(leaf_key(l));
                    }
                }
            }
            let mode = match c.pass {
                Pass::Totals => Some(KeepMode::Save),
                Pass::Resume => Some(KeepMode::Load),
                Pass::Only | Pass::Carry => None,
            };
            if let Some(mode) = mode {
                nx.keep = n.keeps.iter().map(|k| (k.array, (k.home, mode))).collect();
            }
        }
        match chunk.and_then(|c| c.chained).filter(|_| !nx.limits.is_empty() || !nx.keep.is_empty()) {
            Some(chained) => {
                // Chunks going in order store past their own range safely
                // (the next chunk comes after): a version of the loops with
                // no store guard, so one worker pays nothing for it. They
                // ran no first pass either: they compute what it would
                // have kept.
                let (free, guarded, join) = (self.new_block("in_order"), self.new_block("guarded"), self.new_block("ran"));
                self.b.build_conditional_branch(chained, free, guarded)?;
                self.b.position_at_end(free);
                let limits = std::mem::take(&mut nx.limits);
                let keep = std::mem::take(&mut nx.keep);
                self.loop_versions(n, &mut nx, extent)?;
                self.b.build_unconditional_branch(join)?;
                self.b.position_at_end(guarded);
                nx.limits = limits;
                nx.keep = keep;
                self.loop_versions(n, &mut nx, extent)?;
                self.b.build_unconditional_branch(join)?;
                self.b.position_at_end(join);
            }
            None => self.loop_versions(n, &mut nx, extent)?,
        }
        let mut out = vec![];
        for l in &owned {
            let mut vals = self.finish_state(l, &nx)?;
            if let LoopBody::Scan { outs, .. } = l {
                for (v, slot) in outs.iter().zip(nx.states[&leaf_key(l)][0].clone()) {
                    vals.push((*v, self.b.build_load(reg_ty(self.cx, self.f.var(*v).ty.prim()), slot, "carried")?));
                }
            }
            let has = match nx.fresh.get(&leaf_key(l)) {
                Some(h) => Some(self.b.build_load(self.cx.bool_type(), *h, "has")?.into_int_value()),
                None => None,
            };
            // A scan's total folded in lanes: its chunk's total, which
            // always holds a value (the identity for no element).
            let scan = whole.root.body.leaves().into_iter().find(|s| matches!(s, LoopBody::Scan { .. }) && leaf_key(s) == leaf_key(l) && !matches!(l, LoopBody::Scan { .. }));
            match scan {
                Some(s) => out.push(End { leaf: s.clone(), vals, has: Some(self.cx.bool_type().const_int(1, false)) }),
                None => out.push(End { leaf: l.clone(), vals, has }),
            }
        }
        Ok(out)
    }

    /// The nest's loops, in two versions when it streams: streaming stores
    /// for outputs too large for the cache (and aligned alike), normal ones
    /// otherwise.
    fn loop_versions(&mut self, n: &LoopNest, nx: &mut NestCx<'ctx>, extent: IntValue<'ctx>) -> R<()> {
        let i64t = self.cx.i64_type();
        let streams = nx.stores.iter().any(|s| s.mode == StoreMode::Streaming);
        match (streams, n.streaming_from) {
            (true, Some(from)) => {
                // Two versions of the loops: streaming stores for outputs too
                // large for the cache (and aligned alike), normal ones otherwise.
                let big = self.b.build_int_compare(IntPredicate::SGE, extent, i64t.const_int(from, false), "stream")?;
                let (peel, aligned) = self.stream_alignment(n, nx, extent)?;
                nx.peel = Some(peel);
                let big = self.b.build_and(big, aligned, "stream")?;
                let apart = self.stream_apart(n, nx)?;
                let big = self.b.build_and(big, apart, "stream")?;
                let (sb, nb, join) = (self.new_block("streaming"), self.new_block("cached"), self.new_block("stored"));
                self.b.build_conditional_branch(big, sb, nb)?;
                self.b.position_at_end(sb);
                nx.streaming = true;
                self.run_loop(&n.root, None, nx)?;
                // Streaming stores are weakly ordered: fence them before
                // anything else reads the arrays.
                self.b.build_fence(inkwell::AtomicOrdering::SequentiallyConsistent, false, "")?;
                self.b.build_unconditional_branch(join)?;
                self.b.position_at_end(nb);
                nx.streaming = false;
                self.run_loop(&n.root, None, nx)?;
                self.b.build_unconditional_branch(join)?;
                self.b.position_at_end(join);
            }
            _ => self.run_loop(&n.root, None, nx)?,
        }
        Ok(())
    }

    /// How the states a chunk leaves partial results of (`owned`: the
    /// nest's, or a row's) start, past `init_states`: folds other than
    /// lanes start empty in every chunk but the first (it has the initial
    /// value), and so do a first pass's scans; a second pass's scans and
    /// filters resume from `starts` at the chunk's entry, a filter up to
    /// the next entry.
    fn chunk_states(&mut self, c: Chunk<'ctx>, owned: &[LoopBody], starts: &Tables<'ctx>, nx: &mut NestCx<'ctx>) -> R<()> {
        let cx = self.cx;
        let i64t = cx.i64_type();
        let first = self.b.build_int_compare(IntPredicate::EQ, c.index, i64t.const_zero(), "first_chunk")?;
        let at = |g: &mut Self, v: VarId, k: IntValue<'ctx>| -> R<BasicValueEnum<'ctx>> {
            let (table, t) = starts[&v];
            let ep = unsafe { g.b.build_in_bounds_gep(t, table, &[k], "start")? };
            let x = g.b.build_load(t, ep, "start")?;
            g.value_of_mem(x, g.f.var(v).ty.prim())
        };
        for l in owned {
            let key = leaf_key(l);
            match (l, c.pass) {
                (LoopBody::ManyToOne { acc: Accumulate::Chain | Accumulate::Tree(_), .. }, _) | (LoopBody::Scan { .. }, Pass::Totals) => {
                    let h = self.entry_alloca(cx.bool_type().into(), &format!("{}.has", self.name(key)))?;
                    self.b.build_store(h, first)?;
                    nx.fresh.insert(key, h);
                }
                (LoopBody::Scan { outs, .. }, Pass::Resume) => {
                    for (v, slot) in outs.iter().zip(nx.states[&key][0].clone()) {
                        let x = at(self, *v, c.index)?;
                        self.b.build_store(slot, x)?;
                    }
                }
                (LoopBody::Filter { count, .. }, Pass::Resume) => {
                    let x = at(self, *count, c.index)?;
                    self.b.build_store(nx.states[&key][0][0], x)?;
                    let next = self.b.build_int_add(c.index, i64t.const_int(1, false), "next_chunk")?;
                    let mut limit = at(self, *count, next)?.into_int_value();
                    if let Some(chained) = c.chained {
                        let none = i64t.const_int(i64::MAX as u64, false);
                        limit = self.b.build_select(chained, none, limit, "limit")?.into_int_value();
                    }
                    nx.limits.insert(key, limit);
                }
                _ => {}
            }
        }
        if c.pass == Pass::Resume {
            nx.scratch = Some(self.entry_alloca(i64t.into(), "masked_store")?);
        }
        Ok(())
    }

    /// A parallel nest (docs/strategy.md, "Parallel loops"): in chunks of
    /// its root loop (`chunked_nest`) or, when the root has fewer positions
    /// than a loop inside it marked `parallel below R` asks and that loop
    /// has more than one chunk's worth, row by row with that loop in
    /// chunks. Only sizes decide which, never the workers.
    fn parallel_nest(&mut self, n: &LoopNest, par: Parallel) -> R<()> {
        let Some(j) = afc_ir::loops::row_loops(&n.root.body).into_iter().find(|l| l.parallel_below.is_some()) else {
            return self.chunked_nest(n, par);
        };
        let i64t = self.cx.i64_type();
        let extent = self.size_expr(&n.root.extent)?;
        let few = self.b.build_int_compare(IntPredicate::SLT, extent, i64t.const_int(j.parallel_below.unwrap_or(0), false), "few_rows")?;
        let (row_extent, inside) = (self.size_expr(&j.extent)?, self.positions_inside(&j.body)?);
        let size = self.chunk_size(par.grain, row_extent, inside)?;
        let long = self.b.build_int_compare(IntPredicate::SGT, row_extent, size, "long_rows")?;
        let by_rows = self.b.build_and(few, long, "by_rows")?;
        let (rows_bb, chunks_bb, join) = (self.new_block("by_rows"), self.new_block("by_chunks"), self.new_block("nest_done"));
        self.b.build_conditional_branch(by_rows, rows_bb, chunks_bb)?;
        // Each way binds the nest's results (its folds' values and filters'
        // counts); the join takes the one that ran.
        self.b.position_at_end(rows_bb);
        let before = self.scalars.clone();
        let rows = Rows { j: j.index, grain: par.grain, cluster: n.cluster, span: n.span };
        let mut by_rows = vec![];
        for e in self.run_nest(n, None, &Tables::new(), &ScatterParts::new(), Some(rows))? {
            if binds(&e.leaf) {
                by_rows.extend(e.vals);
            }
        }
        let rows_end = self.b.get_insert_block().expect("a positioned builder");
        self.b.build_unconditional_branch(join)?;
        self.scalars = before;
        self.b.position_at_end(chunks_bb);
        self.chunked_nest(n, par)?;
        let chunks_end = self.b.get_insert_block().expect("a positioned builder");
        self.b.build_unconditional_branch(join)?;
        self.b.position_at_end(join);
        for (v, x) in by_rows {
            let y = self.scalars.get(&v).copied().unwrap_or_else(|| afc_ir::ice::fail("codegen", "a nest run in chunks does not bind a result it binds run by rows", &format!("cluster {}: %{}", n.cluster, self.name(v))));
            let phi = self.b.build_phi(y.get_type(), &self.name(v))?;
            phi.add_incoming(&[(&x, rows_end), (&y, chunks_end)]);
            self.scalars.insert(v, phi.as_basic_value());
        }
        Ok(())
    }

    /// An `outlined` nest: its loops in a function of their own (the
    /// chunk functions' `outline_chunks`, run here as one chunk of all the
    /// positions), called directly. What the nest binds (folds' results,
    /// counts read later) comes back in 8-byte slots, and its first error
    /// in a fault record, reported here as the nest itself would.
    fn outlined_nest(&mut self, n: &LoopNest) -> R<()> {
        let cx = self.cx;
        let (i64t, i8t) = (cx.i64_type(), cx.i8_type());
        let mut bound = vec![];
        for l in owned_by(&n.root.body, None).iter().filter(|l| binds(l)) {
            match l {
                LoopBody::ManyToOne { results, .. } => bound.extend(results.iter().copied()),
                LoopBody::Filter { count, .. } => bound.push(*count),
                _ => {}
            }
        }
        let results = self.entry_alloca(i64t.array_type(bound.len().max(1) as u32).into(), "results")?;
        let name = format!("{}.nest{}", self.f.name, n.cluster);
        let extent = self.size_expr(&n.root.extent)?;
        self.call_outlined(&name, n.span, extent, &mut |g, params| g.outlined_body(n, &bound, results, params))?;
        for (k, v) in bound.iter().enumerate() {
            let p = self.f.var(*v).ty.prim();
            let slot = unsafe { self.b.build_in_bounds_gep(i8t, results, &[i64t.const_int(8 * k as u64, false)], "result")? };
            let x = self.b.build_load(mem_ty(cx, p), slot, &self.name(*v))?;
            let x = self.value_of_mem(x, p)?;
            self.scalars.insert(*v, x);
        }
        Ok(())
    }

    /// The function `outline_chunks` makes of `body`, called directly as
    /// one chunk of `extent` positions, and its first error, if it had
    /// one, reported here as its code would have.
    #[allow(clippy::type_complexity)]
    fn call_outlined(&mut self, name: &str, span: Span, extent: IntValue<'ctx>, body: &mut dyn FnMut(&mut Self, Option<&[(BasicValueEnum<'ctx>, bool)]>) -> R<(FunctionValue<'ctx>, Vec<(BasicValueEnum<'ctx>, bool)>)>) -> R<()> {
        let cx = self.cx;
        let i64t = cx.i64_type();
        let fault = self.entry_alloca(i64t.array_type(4).into(), "fault")?;
        let (func, ctx) = self.outline_chunks(name, span, body)?;
        self.b.build_store(fault, cx.i32_type().const_zero())?;
        let zero = i64t.const_zero();
        self.b.build_call(func, &[ctx.into(), zero.into(), zero.into(), extent.into(), fault.into()], "")?;
        let code = self.fault_field(fault, 0, cx.i32_type().into())?.into_int_value();
        let failed = self.b.build_int_compare(IntPredicate::NE, code, cx.i32_type().const_zero(), "outlined_failed")?;
        let (report, go_on) = (self.new_block("outlined_error"), self.new_block("outlined_done"));
        self.b.build_conditional_branch(failed, report, go_on)?;
        self.b.position_at_end(report);
        self.report_fault(fault)?;
        self.b.position_at_end(go_on);
        Ok(())
    }

    /// The whole-index checks of a nest that is not inline (`check_whole`),
    /// as a function of their own (`call_outlined`).
    #[allow(clippy::type_complexity)]
    fn checks_body(&mut self, n: &LoopNest, name: &str, params: Option<&[(BasicValueEnum<'ctx>, bool)]>) -> R<(FunctionValue<'ctx>, Vec<(BasicValueEnum<'ctx>, bool)>)> {
        let (func, mut g, _, done) = self.open_chunk(name, n.span, Pass::Only, params)?;
        for gi in n.labels.iter().filter(|g| g.whole) {
            g.check_whole(gi)?;
        }
        g.finish_chunk(func, done)
    }

    /// Field `offset` of a fault record (`afc_rt_fault`: code, where, a, b).
    fn fault_field(&mut self, fault: PointerValue<'ctx>, offset: u64, t: BasicTypeEnum<'ctx>) -> R<BasicValueEnum<'ctx>> {
        let p = unsafe { self.b.build_in_bounds_gep(self.cx.i8_type(), fault, &[self.cx.i64_type().const_int(offset, false)], "fault")? };
        self.b.build_load(t, p, "fault")
    }

    /// The error a fault record holds, reported as the nest itself would
    /// (`afc_rt_error`), and the function left with its code.
    fn report_fault(&mut self, fault: PointerValue<'ctx>) -> R<()> {
        let (cx, i64t) = (self.cx, self.cx.i64_type());
        let args = [self.fault_field(fault, 0, cx.i32_type().into())?, self.fault_field(fault, 8, cx.ptr_type(Default::default()).into())?, self.fault_field(fault, 16, i64t.into())?, self.fault_field(fault, 24, i64t.into())?];
        let args: Vec<BasicMetadataValueEnum<'ctx>> = args.iter().map(|a| (*a).into()).collect();
        let code = self.b.build_call(self.runtime_fn("afc_rt_error"), &args, "code")?.try_as_basic_value().basic().expect("afc_rt_error returns a code");
        self.b.build_store(self.code_slot, code)?;
        self.b.build_unconditional_branch(self.fail_bb)?;
        Ok(())
    }

    /// An outlined nest's body (`outlined_nest`), generated as a chunk
    /// function's (`chunk_body`) but running all of the nest's loops, as
    /// the calling function would, and leaving what it binds in the slots
    /// of `results` (`bound`'s order).
    #[allow(clippy::type_complexity)]
    fn outlined_body(&mut self, n: &LoopNest, bound: &[VarId], results: PointerValue<'ctx>, params: Option<&[(BasicValueEnum<'ctx>, bool)]>) -> R<(FunctionValue<'ctx>, Vec<(BasicValueEnum<'ctx>, bool)>)> {
        let (i64t, i8t) = (self.cx.i64_type(), self.cx.i8_type());
        let name = format!("{}.nest{}", self.f.name, n.cluster);
        let (func, mut g, _, done) = self.open_chunk(&name, n.span, Pass::Only, params)?;
        let ends = g.run_nest(n, None, &Tables::new(), &ScatterParts::new(), None)?;
        let out = g.take(results.into(), true).into_pointer_value();
        for e in ends.iter().filter(|e| binds(&e.leaf)) {
            for (v, x) in &e.vals {
                let k = bound.iter().position(|b| b == v).unwrap_or_else(|| afc_ir::ice::fail("codegen", "an outlined nest binds a value it was not expected to", &format!("cluster {}: %{}", n.cluster, self.name(*v))));
                let slot = unsafe { g.b.build_in_bounds_gep(i8t, out, &[i64t.const_int(8 * k as u64, false)], "result")? };
                let m = g.to_mem(*x)?;
                g.b.build_store(slot, m)?;
            }
        }
        g.finish_chunk(func, done)
    }

    /// Positions of a loop per chunk: at least `grain` innermost positions
    /// (`inside` per position of the loop) and at least 1/MAX_CHUNKS of
    /// the loop's `extent`. Only sizes decide it, never the workers.
    fn chunk_size(&mut self, grain: u64, extent: IntValue<'ctx>, inside: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        let i64t = self.cx.i64_type();
        let by_grain = self.ceil_div(i64t.const_int(grain, false), inside)?;
        let by_count = self.ceil_div(extent, i64t.const_int(MAX_CHUNKS, false))?;
        let size = self.max(by_grain, by_count)?;
        self.max(size, i64t.const_int(1, false))
    }

    /// Per state variable of `owned`, a table of partial results (or
    /// starts), and per state that starts empty whether each chunk's
    /// holds a value.
    fn partial_tables(&mut self, owned: &[LoopBody]) -> R<(Tables<'ctx>, IndexMap<VarId, PointerValue<'ctx>>)> {
        let cx = self.cx;
        let mut tables = Tables::new();
        let mut has: IndexMap<VarId, PointerValue<'ctx>> = IndexMap::new();
        for l in owned {
            for v in l.state_vars() {
                let t = mem_ty(cx, self.f.var(v).ty.prim());
                let slot = self.entry_alloca(t.array_type(MAX_CHUNKS as u32 + 2).into(), &format!("{}.partials", self.name(v)))?;
                tables.insert(v, (slot, t));
            }
            if matches!(l, LoopBody::ManyToOne { acc: Accumulate::Chain | Accumulate::Tree(_), .. } | LoopBody::Scan { .. }) {
                let slot = self.entry_alloca(cx.i8_type().array_type(MAX_CHUNKS as u32).into(), &format!("{}.has", self.name(leaf_key(l))))?;
                has.insert(leaf_key(l), slot);
            }
        }
        Ok((tables, has))
    }

    /// A row's loop `j` in chunks (`parallel below`): the nest's root runs
    /// on the calling thread, and in each of its iterations the runtime
    /// runs chunks of `j`'s positions on the workers (`rows_body`). The
    /// folds the row owns leave one partial result per chunk, combined
    /// here in index order as a nest's are, and the row's results are put
    /// where a whole run of `j` puts them. A failing chunk stops the call
    /// with the first failing chunk's error; the rows before it are done,
    /// the ones after it never start.
    fn row_chunks(&mut self, j: &Loop, pos: &Pos<'ctx>, elems: &mut Elems<'ctx>, nx: &mut NestCx<'ctx>) -> R<()> {
        let cx = self.cx;
        let i64t = cx.i64_type();
        let rows = nx.rows.clone().expect("row_chunks runs a nest by rows");
        let owned = owned_by(&j.body, pos.loops.last().map(|(v, _, _)| *v));
        let (tables, has) = self.partial_tables(&owned)?;
        let extent = self.size_expr(&j.extent)?;
        let inside = self.positions_inside(&j.body)?;
        let size = self.chunk_size(rows.grain, extent, inside)?;
        let chunks = self.ceil_div(extent, size)?;
        let name = format!("{}.nest{}.rows", self.f.name, rows.cluster);
        let stores = nx.stores.clone();
        let (body, ctx) = self.outline_chunks(&name, rows.span, &mut |g, params| g.rows_body(&name, &rows, j, pos, &owned, &tables, &has, &stores, params))?;
        let body = body.as_global_value().as_pointer_value();
        let rc = self.b.build_call(self.runtime_fn("afc_rt_parallel"), &[body.into(), ctx.into(), extent.into(), size.into()], "rc")?.try_as_basic_value().basic().expect("the runtime returns a code").into_int_value();
        self.fail_on_code(rc, "row")?;
        let positive = self.b.build_int_compare(IntPredicate::SGT, extent, i64t.const_zero(), "some")?;
        let folds: Vec<&LoopBody> = owned.iter().collect();
        for vals in self.combine_partials(&folds, &tables, &has, chunks, positive)? {
            let outs: Vec<VarId> = vals.iter().map(|(v, _)| *v).collect();
            self.put(&outs, vals.into_iter().map(|(_, x)| x).collect(), pos, 0, elems, nx)?;
        }
        Ok(())
    }

    /// The body of a row's chunk function (`row_chunks`): positions
    /// `lo..hi` of loop `j` in the row at `pos` of the calling function,
    /// the folds the row owns leaving their partial results in `tables`.
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn rows_body(&mut self, name: &str, rows: &Rows, j: &Loop, pos: &Pos<'ctx>, owned: &[LoopBody], tables: &Tables<'ctx>, has: &IndexMap<VarId, PointerValue<'ctx>>, stores: &[afc_ir::loops::Store], params: Option<&[(BasicValueEnum<'ctx>, bool)]>) -> R<(FunctionValue<'ctx>, Vec<(BasicValueEnum<'ctx>, bool)>)> {
        let (func, mut g, chunk, done) = self.open_chunk(name, rows.span, Pass::Only, params)?;
        // The row's position, taken from the calling function.
        let tk = |g: &Gen<'a, 'ctx>, x: IntValue<'ctx>| g.take(x.into(), false).into_int_value();
        let at = Pos {
            i: tk(&g, pos.i),
            last: pos.last.map(|x| tk(&g, x)),
            total: tk(&g, pos.total),
            loops: pos.loops.iter().map(|(v, x, e)| (*v, tk(&g, *x), tk(&g, *e))).collect(),
            lane: 0,
            trip: false,
            simd: None,
            mask: None,
            mirrored: None,
            limit: None,
        };
        let leaves: Vec<LoopBody> = j.body.leaves().into_iter().cloned().collect();
        let base = g.base_pointers(&leaves, stores)?;
        let mut nx = NestCx::new(base, stores.to_vec(), Some(chunk));
        nx.chunked = Some(j.index);
        nx.chunk_owner = pos.loops.last().map(|(v, _, _)| *v);
        g.init_states(owned, &mut nx)?;
        g.chunk_states(chunk, owned, &Tables::new(), &mut nx)?;
        g.run_loop(j, Some(&at), &mut nx)?;
        for l in owned {
            let vals = g.finish_state(l, &nx)?;
            let has_value = match nx.fresh.get(&leaf_key(l)) {
                Some(h) => Some(g.b.build_load(g.cx.bool_type(), *h, "has")?.into_int_value()),
                None => None,
            };
            g.leave_partial(&End { leaf: l.clone(), vals, has: has_value }, tables, has, chunk.index)?;
        }
        g.finish_chunk(func, done)
    }

    /// A parallel nest in chunks of its root loop: its loops go into a
    /// chunk function that runs positions `lo..hi` of the root loop,
    /// which the runtime calls once per chunk on its workers
    /// (`afc_rt_parallel`). The state the nest owns leaves one partial
    /// result per chunk, combined here in index order; the first failing
    /// chunk's error becomes the call's. A two-pass nest first runs every
    /// chunk for the totals of its carried states (`Pass::Totals`), combines
    /// them into each chunk's start, then runs the chunks from those.
    fn chunked_nest(&mut self, n: &LoopNest, par: Parallel) -> R<()> {
        let cx = self.cx;
        let i64t = cx.i64_type();
        let extent = self.size_expr(&n.root.extent)?;
        let leaves: Vec<LoopBody> = n.root.body.leaves().into_iter().cloned().collect();
        self.copy_scatter_dests(&leaves)?;
        let owned = owned_by(&n.root.body, None);
        // (A count nothing reads has no table in one pass: no chunk leaves
        // it, so LLVM drops the cursor where nothing under it needs it. Two
        // passes carry it from chunk to chunk all the same.)
        let kept: Vec<LoopBody> = owned.iter().filter(|l| par.two_pass || !matches!(l, LoopBody::Filter { count_read: false, .. })).cloned().collect();
        let (tables, has) = self.partial_tables(&kept)?;

        // Chunks of at least `grain` innermost positions and at least
        // 1/MAX_CHUNKS of the root loop; a multiple of CHUNK_QUANTUM when
        // the nest is `aligned`.
        let one = i64t.const_int(1, false);
        let inside = self.positions_inside(&n.root.body)?;
        let mut size = self.chunk_size(par.grain, extent, inside)?;
        // Scatters: few enough chunks that their partial destinations stay
        // a small share of the work (PARTIAL_SHARE).
        let mut dest_lens = vec![];
        let mut dest_len = i64t.const_zero();
        if par.partials {
            for l in leaves.iter().filter(|l| matches!(l, LoopBody::Scatter { .. })) {
                let len = self.size(l.element_outs()[0])?;
                dest_len = self.b.build_int_add(dest_len, len, "dest_len")?;
                dest_lens.push(len);
            }
            let positions = self.b.build_int_mul(extent, inside, "positions")?;
            let len = self.max(dest_len, one)?;
            let share = self.b.build_int_mul(len, i64t.const_int(PARTIAL_SHARE, false), "share")?;
            let cap = self.b.build_int_add(self.b.build_int_signed_div(positions, share, "cap")?, one, "cap")?;
            let at_least = self.ceil_div(extent, cap)?;
            size = self.max(size, at_least)?;
        }
        if par.aligned {
            let q = i64t.const_int(CHUNK_QUANTUM, false);
            size = self.ceil_div(size, q)?;
            size = self.b.build_int_mul(size, q, "chunk")?;
        }
        let chunks = self.ceil_div(extent, size)?;

        // A two-pass nest: the totals, then each chunk's start. If a chunk
        // of the first pass fails, the second runs up to that chunk only:
        // the first error in index order may be one only it can see.
        let (mut reach, mut first_fault, mut chained, mut look) = (extent, None, None, None);
        if par.two_pass && par.look_back {
            let (c, fns) = self.look_back_plan(n, &owned, &tables, &has, chunks)?;
            (chained, look) = (Some(c), Some(fns));
        } else if par.two_pass {
            let (r, c, failed, fault) = self.first_pass(n, &owned, &tables, &has, extent, size, chunks)?;
            (reach, chained, first_fault) = (r, Some(c), Some((failed, fault)));
        }
        let pass = if par.two_pass { Pass::Resume } else { Pass::Only };
        let (parts, owners) = self.alloc_partials(&leaves, chunks, &dest_lens, dest_len)?;
        // Without partials, a scatter's chunks update the output in order.
        let in_order = match parts.values().next() {
            Some(p) => Some(self.b.build_not(p.on, "in_order")?),
            None => None,
        };
        let (body, ctx) = self.chunk_fn(n, pass, &tables, &Tables::new(), &has, chained, &parts)?;
        let run = |g: &mut Self, entry: &str| -> R<IntValue<'ctx>> {
            Ok(g.b.build_call(g.runtime_fn(entry), &[body.into(), ctx.into(), reach.into(), size.into()], "rc")?.try_as_basic_value().basic().expect("the runtime returns a code").into_int_value())
        };
        let rc = match chained.or(in_order) {
            None => run(self, "afc_rt_parallel")?,
            Some(chained) => {
                let (in_order, spread, ran) = (self.new_block("in_order"), self.new_block("spread"), self.new_block("ran"));
                self.b.build_conditional_branch(chained, in_order, spread)?;
                self.b.position_at_end(in_order);
                let a = run(self, "afc_rt_in_order")?;
                self.b.build_unconditional_branch(ran)?;
                self.b.position_at_end(spread);
                let b = match look {
                    Some([(totals, tctx), (carry, cctx)]) => {
                        let args = [totals.into(), tctx.into(), carry.into(), cctx.into(), body.into(), ctx.into(), reach.into(), size.into()];
                        self.b.build_call(self.runtime_fn("afc_rt_look_back"), &args, "rc")?.try_as_basic_value().basic().expect("the runtime returns a code").into_int_value()
                    }
                    None => run(self, "afc_rt_parallel")?,
                };
                self.b.build_unconditional_branch(ran)?;
                self.b.position_at_end(ran);
                let rc = self.b.build_phi(cx.i32_type(), "rc")?;
                rc.add_incoming(&[(&a, in_order), (&b, spread)]);
                rc.as_basic_value().into_int_value()
            }
        };
        let zero32 = cx.i32_type().const_zero();
        if let Some((failed, fault)) = first_fault {
            // The second pass checks everything the first does, so it fails
            // too; should it not, the first pass's error stands.
            let quiet = self.b.build_and(failed, self.b.build_int_compare(IntPredicate::EQ, rc, zero32, "ok")?, "quiet")?;
            let (report, go_on) = (self.new_block("first_pass_error"), self.new_block("second_pass_done"));
            self.b.build_conditional_branch(quiet, report, go_on)?;
            self.b.position_at_end(report);
            self.report_fault(fault)?;
            self.b.position_at_end(go_on);
        }
        self.fail_on_code(rc, "chunks")?;
        self.merge_partials(&leaves, chunks, &parts, &owners)?;

        // Each fold: the first chunk's partial (which started from the
        // initial value) combined with the others' in index order, skipping
        // a chunk whose partial holds nothing. A filter's count: the sum of
        // the chunks' (a two-pass nest has it from its starts).
        let positive = self.b.build_int_compare(IntPredicate::SGT, extent, i64t.const_zero(), "some")?;
        let folds: Vec<&LoopBody> = owned.iter().filter(|l| matches!(l, LoopBody::ManyToOne { .. })).collect();
        for vals in self.combine_partials(&folds, &tables, &has, chunks, positive)? {
            self.scalars.extend(vals);
        }
        for l in &owned {
            if let LoopBody::Filter { count, count_read: true, .. } = l {
                let v = if par.two_pass {
                    let (slot, t) = tables[count];
                    let ep = unsafe { self.b.build_in_bounds_gep(t, slot, &[i64t.const_int(MAX_CHUNKS + 1, false)], "count")? };
                    self.b.build_load(t, ep, &self.name(*count))?.into_int_value()
                } else {
                    self.offsets(*count, &tables, chunks)?
                };
                self.scalars.insert(*count, v.into());
            }
        }
        Ok(())
    }

    /// Folds' results from their chunks' partial results: each the first
    /// chunk's (which started from the initial value; the initial value
    /// itself when there were no positions) combined with the others' in
    /// index order, skipping a chunk whose partial holds nothing (`has`).
    /// One loop over the chunks for each `COMBINE_GROUP` folds: a loop per
    /// fold made LLVM's jump threading quadratic in the folds (1,000 folds
    /// in one nest: 17 s of its 27), one loop for all its SLP vectoriser
    /// (14 s).
    fn combine_partials(&mut self, folds: &[&LoopBody], tables: &Tables<'ctx>, has: &IndexMap<VarId, PointerValue<'ctx>>, chunks: IntValue<'ctx>, positive: IntValue<'ctx>) -> R<Vec<Vec<(VarId, BasicValueEnum<'ctx>)>>> {
        const COMBINE_GROUP: usize = 16;
        let mut out = vec![];
        for group in folds.chunks(COMBINE_GROUP) {
            out.extend(self.combine_group(group, tables, has, chunks, positive)?);
        }
        Ok(out)
    }

    /// `combine_partials` for folds combined in one loop.
    fn combine_group(&mut self, folds: &[&LoopBody], tables: &Tables<'ctx>, has: &IndexMap<VarId, PointerValue<'ctx>>, chunks: IntValue<'ctx>, positive: IntValue<'ctx>) -> R<Vec<Vec<(VarId, BasicValueEnum<'ctx>)>>> {
        let cx = self.cx;
        // Per fold: its operator, its accumulators (slot, table, type), its `has`.
        #[allow(clippy::type_complexity)]
        let mut all: Vec<(&Lambda, Vec<(PointerValue<'ctx>, PointerValue<'ctx>, BasicTypeEnum<'ctx>, Prim)>, Option<PointerValue<'ctx>>)> = vec![];
        for l in folds {
            let LoopBody::ManyToOne { results, init, op, .. } = l else { unreachable!("only folds combine partial results") };
            let mut accs = vec![];
            for (r, z) in results.iter().zip(init) {
                let (slot, t) = tables[r];
                let prim = self.f.var(*r).ty.prim();
                let acc = self.entry_alloca(reg_ty(cx, prim), &format!("{}.acc", self.name(*r)))?;
                let p0 = self.b.build_load(t, slot, "partial")?;
                let p0 = self.value_of_mem(p0, prim)?;
                let z = self.operand(z);
                let v = self.b.build_select(positive, p0, z, "acc")?;
                self.b.build_store(acc, v)?;
                accs.push((acc, slot, t, prim));
            }
            all.push((op, accs, has.get(&leaf_key(l)).copied()));
        }
        self.counted("combine", Trips::Chunks, cx.i64_type().const_int(1, false), chunks, 1, &mut |g, c| {
            for (op, accs, has) in &all {
                let (add, next) = (g.new_block("combine.add"), g.new_block("combine.next"));
                let some = match has {
                    Some(h) => {
                        let ep = unsafe { g.b.build_in_bounds_gep(cx.i8_type(), *h, &[c], "has")? };
                        let h = g.b.build_load(cx.i8_type(), ep, "has")?.into_int_value();
                        g.b.build_int_compare(IntPredicate::NE, h, cx.i8_type().const_zero(), "has")?
                    }
                    None => cx.bool_type().const_int(1, false),
                };
                g.b.build_conditional_branch(some, add, next)?;
                g.b.position_at_end(add);
                let mut args = vec![];
                for (acc, _, _, prim) in accs {
                    args.push(g.b.build_load(reg_ty(g.cx, *prim), *acc, "acc")?);
                }
                for (_, slot, t, prim) in accs {
                    let ep = unsafe { g.b.build_in_bounds_gep(*t, *slot, &[c], "partial")? };
                    let p = g.b.build_load(*t, ep, "partial")?;
                    args.push(g.value_of_mem(p, *prim)?);
                }
                let sum = g.lambda(op, &args)?;
                for ((acc, ..), x) in accs.iter().zip(sum) {
                    g.b.build_store(*acc, x)?;
                }
                g.b.build_unconditional_branch(next)?;
                g.b.position_at_end(next);
            }
            Ok(())
        })?;
        let mut out = vec![];
        for (l, (_, accs, _)) in folds.iter().zip(&all) {
            let LoopBody::ManyToOne { results, .. } = l else { unreachable!() };
            let mut vals = vec![];
            for (r, (acc, _, _, prim)) in results.iter().zip(accs) {
                vals.push((*r, self.b.build_load(reg_ty(cx, *prim), *acc, &self.name(*r))?));
            }
            out.push(vals);
        }
        Ok(out)
    }

    /// A look-back nest before its run pass: the first chunk's start of
    /// each carried state, and the chunk functions of its first pass
    /// (into tables of totals of its own) and of its carry step, which the
    /// runtime calls chunk by chunk around the run pass
    /// (`afc_rt_look_back`). Returns whether the run pass chains instead
    /// (`chains`) and the two functions with their contexts.
    #[allow(clippy::type_complexity)]
    fn look_back_plan(&mut self, n: &LoopNest, owned: &[LoopBody], tables: &Tables<'ctx>, has: &IndexMap<VarId, PointerValue<'ctx>>, chunks: IntValue<'ctx>) -> R<(IntValue<'ctx>, [(PointerValue<'ctx>, PointerValue<'ctx>); 2])> {
        let chained = self.chains(owned, chunks)?;
        self.first_starts(owned, tables)?;
        self.clear_counts(owned, tables)?;
        let mut totals = Tables::new();
        for l in owned.iter().filter(|l| matches!(l, LoopBody::Scan { .. } | LoopBody::Filter { .. })) {
            for v in l.state_vars() {
                let t = tables[&v].1;
                let slot = self.entry_alloca(t.array_type(MAX_CHUNKS as u32).into(), &format!("{}.totals", self.name(v)))?;
                totals.insert(v, (slot, t));
            }
        }
        let first = self.chunk_fn(n, Pass::Totals, &totals, &Tables::new(), has, None, &ScatterParts::new())?;
        let carry = self.chunk_fn(n, Pass::Carry, tables, &totals, has, None, &ScatterParts::new())?;
        Ok((chained, [first, carry]))
    }

    /// A two-pass nest before its run pass: the totals pass and the starts
    /// it gives — or, on one worker or in one chunk, nothing but the first
    /// chunk's start (the run pass then chains its chunks). Returns how far
    /// the run pass goes, whether it chains, and whether (and how) the
    /// totals pass failed.
    #[allow(clippy::too_many_arguments, clippy::type_complexity)]
    fn first_pass(&mut self, n: &LoopNest, owned: &[LoopBody], tables: &Tables<'ctx>, has: &IndexMap<VarId, PointerValue<'ctx>>, extent: IntValue<'ctx>, size: IntValue<'ctx>, chunks: IntValue<'ctx>) -> R<(IntValue<'ctx>, IntValue<'ctx>, IntValue<'ctx>, PointerValue<'ctx>)> {
        let cx = self.cx;
        let i64t = cx.i64_type();
        let one = i64t.const_int(1, false);
        let single = self.chains(owned, chunks)?;
        let (single_bb, multi_bb, join) = (self.new_block("chained"), self.new_block("two_passes"), self.new_block("passes_planned"));
        self.b.build_conditional_branch(single, single_bb, multi_bb)?;
        self.b.position_at_end(single_bb);
        self.first_starts(owned, tables)?;
        let single_end = self.b.get_insert_block().expect("a block");
        self.b.build_unconditional_branch(join)?;
        self.b.position_at_end(multi_bb);
        let (body, ctx) = self.chunk_fn(n, Pass::Totals, tables, &Tables::new(), has, None, &ScatterParts::new())?;
        let fault = self.entry_alloca(i64t.array_type(4).into(), "first_pass_fault")?;
        let k = self.b.build_call(self.runtime_fn("afc_rt_parallel_until"), &[body.into(), ctx.into(), extent.into(), size.into(), fault.into()], "failed_chunk")?;
        let k = k.try_as_basic_value().basic().expect("afc_rt_parallel_until returns a chunk").into_int_value();
        let failed = self.b.build_int_compare(IntPredicate::SGE, k, i64t.const_zero(), "first_pass_failed")?;
        let upto = self.b.build_int_add(k, one, "upto")?;
        let used = self.b.build_select(failed, upto, chunks, "chunks_used")?.into_int_value();
        let end = self.b.build_int_mul(used, size, "reach")?;
        let end = self.min(end, extent)?;
        let reach = self.b.build_select(failed, end, extent, "reach")?.into_int_value();
        self.carry_starts(owned, tables, has, used)?;
        let multi_end = self.b.get_insert_block().expect("a block");
        self.b.build_unconditional_branch(join)?;
        self.b.position_at_end(join);
        let phi = |g: &mut Self, a: IntValue<'ctx>, b: IntValue<'ctx>, name: &str| -> R<IntValue<'ctx>> {
            let p = g.b.build_phi(a.get_type(), name)?;
            p.add_incoming(&[(&a, single_end), (&b, multi_end)]);
            Ok(p.as_basic_value().into_int_value())
        };
        let reach = phi(self, extent, reach, "reach")?;
        let chained = phi(self, cx.bool_type().const_int(1, false), cx.bool_type().const_zero(), "chained")?;
        let failed = phi(self, cx.bool_type().const_zero(), failed, "first_pass_failed")?;
        self.clear_counts(owned, tables)?;
        Ok((reach, chained, failed, fault))
    }

    /// The first chunk's start of each carried state: a scan's initial
    /// values, a filter's cursor 0.
    fn first_starts(&mut self, owned: &[LoopBody], tables: &Tables<'ctx>) -> R<()> {
        for l in owned {
            match l {
                LoopBody::Scan { outs, init, .. } => {
                    for (v, z) in outs.iter().zip(init) {
                        let z = self.operand(z);
                        let m = self.to_mem(z)?;
                        self.b.build_store(tables[v].0, m)?;
                    }
                }
                LoopBody::Filter { count, .. } => {
                    self.b.build_store(tables[count].0, self.cx.i64_type().const_zero())?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Each filter's count after its table, 0 until the run pass's last
    /// chunk leaves the count there (none runs for an empty loop).
    fn clear_counts(&mut self, owned: &[LoopBody], tables: &Tables<'ctx>) -> R<()> {
        let i64t = self.cx.i64_type();
        for l in owned {
            if let LoopBody::Filter { count, .. } = l {
                let (slot, t) = tables[count];
                let ep = unsafe { self.b.build_in_bounds_gep(t, slot, &[i64t.const_int(MAX_CHUNKS + 1, false)], "count")? };
                self.b.build_store(ep, i64t.const_zero())?;
            }
        }
        Ok(())
    }

    /// Whether a two-pass nest's run pass chains its chunks instead of
    /// running a first pass. On one worker, or in one chunk, the first pass
    /// would only double the work: the run pass's chunks go in order on the
    /// calling thread instead, each from the state the chunk before it
    /// ended in. The chunks — so the folds' partials — are the same; an
    /// exact carried state (a filter's count, an integer scan) is the same
    /// either way, while a float scan keeps its two passes on one worker,
    /// so that its bits do not depend on the number of workers.
    fn chains(&mut self, owned: &[LoopBody], chunks: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        let one = self.cx.i64_type().const_int(1, false);
        let small = self.b.build_int_compare(IntPredicate::SLE, chunks, one, "one_chunk")?;
        if !self.exact_carries(owned) {
            return Ok(small);
        }
        let alone = self.one_worker()?;
        self.b.build_or(alone, small, "chained")
    }

    /// Whether every carried state of a two-pass nest (a scan's value, a
    /// filter's count) is exact — no float — so that chaining its chunks on
    /// one worker gives the bits their two passes give.
    fn exact_carries(&self, owned: &[LoopBody]) -> bool {
        owned.iter().filter(|l| matches!(l, LoopBody::Scan { .. } | LoopBody::Filter { .. })).all(|l| l.state_vars().iter().all(|v| !self.f.var(*v).ty.prim().is_float()))
    }

    /// Between a two-pass nest's passes: each carried state's table of
    /// chunk totals (of the first `used` chunks) becomes its table of
    /// starts, in place — the first chunk's is the initial value, each later
    /// one's the state after the chunks before it (a scan's totals combined
    /// in chunk order, a filter's counts summed, the sum after the last
    /// chunk stored after it).
    fn carry_starts(&mut self, owned: &[LoopBody], tables: &Tables<'ctx>, has: &IndexMap<VarId, PointerValue<'ctx>>, used: IntValue<'ctx>) -> R<()> {
        let cx = self.cx;
        let i64t = cx.i64_type();
        for l in owned {
            match l {
                LoopBody::Scan { dir, init, op, outs, .. } => {
                    let prims: Vec<Prim> = outs.iter().map(|v| self.f.var(*v).ty.prim()).collect();
                    let mut running = vec![];
                    for (v, p) in outs.iter().zip(&prims) {
                        running.push(self.entry_alloca(reg_ty(cx, *p), &format!("{}.running", self.name(*v)))?);
                    }
                    let init: Vec<BasicValueEnum<'ctx>> = init.iter().map(|o| self.operand(o)).collect();
                    let h = has[&leaf_key(l)];
                    self.counted("starts", Trips::Chunks, i64t.const_zero(), used, 1, &mut |g, c| {
                        let is_first = g.b.build_int_compare(IntPredicate::EQ, c, i64t.const_zero(), "first")?;
                        let mut total = vec![];
                        let mut cur = vec![];
                        for (((v, p), r), z) in outs.iter().zip(&prims).zip(&running).zip(&init) {
                            let (slot, t) = tables[v];
                            let ep = unsafe { g.b.build_in_bounds_gep(t, slot, &[c], "total")? };
                            let x = g.b.build_load(t, ep, "total")?;
                            total.push(g.value_of_mem(x, *p)?);
                            let now = g.b.build_load(reg_ty(g.cx, *p), *r, "running")?;
                            cur.push(now);
                            let start = g.b.build_select(is_first, *z, now, "start")?;
                            let m = g.to_mem(start)?;
                            g.b.build_store(ep, m)?;
                        }
                        // (The last chunk's total starts nothing: after a
                        // failure in the first pass it is not there.)
                        let (combine, next) = (g.new_block("starts.combine"), g.new_block("starts.next"));
                        let c1 = g.b.build_int_add(c, i64t.const_int(1, false), "next")?;
                        let more = g.b.build_int_compare(IntPredicate::SLT, c1, used, "more")?;
                        g.b.build_conditional_branch(more, combine, next)?;
                        g.b.position_at_end(combine);
                        let some = g.holds(h, c)?;
                        for (r, x) in running.iter().zip(g.next_scan_start(*dir, op, &cur, &total, some, is_first)?) {
                            g.b.build_store(*r, x)?;
                        }
                        g.b.build_unconditional_branch(next)?;
                        g.b.position_at_end(next);
                        Ok(())
                    })?;
                }
                LoopBody::Filter { count, .. } => {
                    self.offsets(*count, tables, used)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// A look-back nest's step between chunk `c`'s passes (in its carry
    /// function): chunk `c + 1`'s start of each carried state from `c`'s
    /// start and total, as `carry_starts` makes them all — the first
    /// chunk's total is the second's start (it began from the initial
    /// value), a later total is combined in if it holds anything, a
    /// filter's counts are summed.
    fn carry_step(&mut self, n: &LoopNest, starts: &Tables<'ctx>, totals: &Tables<'ctx>, has: &IndexMap<VarId, PointerValue<'ctx>>, c: IntValue<'ctx>) -> R<()> {
        let cx = self.cx;
        let i64t = cx.i64_type();
        let next = self.b.build_int_add(c, i64t.const_int(1, false), "next_chunk")?;
        let is_first = self.b.build_int_compare(IntPredicate::EQ, c, i64t.const_zero(), "first")?;
        // Loads entry `k` of a taken table, in register form.
        let load = |g: &mut Self, tables: &Tables<'ctx>, v: VarId, k: IntValue<'ctx>| -> R<BasicValueEnum<'ctx>> {
            let (slot, t) = tables[&v];
            let table = g.take(slot.into(), true).into_pointer_value();
            let ep = unsafe { g.b.build_in_bounds_gep(t, table, &[k], "entry")? };
            let x = g.b.build_load(t, ep, "entry")?;
            g.value_of_mem(x, g.f.var(v).ty.prim())
        };
        let store = |g: &mut Self, v: VarId, x: BasicValueEnum<'ctx>| -> R<()> {
            let (slot, t) = starts[&v];
            let table = g.take(slot.into(), true).into_pointer_value();
            let ep = unsafe { g.b.build_in_bounds_gep(t, table, &[next], "start")? };
            let m = g.to_mem(x)?;
            g.b.build_store(ep, m)?;
            Ok(())
        };
        for l in owned_by(&n.root.body, None) {
            match &l {
                LoopBody::Scan { dir, op, outs, .. } => {
                    let mut start = vec![];
                    let mut total = vec![];
                    for v in outs {
                        start.push(load(self, starts, *v, c)?);
                        total.push(load(self, totals, *v, c)?);
                    }
                    let h = self.take(has[&leaf_key(&l)].into(), true).into_pointer_value();
                    let some = self.holds(h, c)?;
                    for (v, x) in outs.iter().zip(self.next_scan_start(*dir, op, &start, &total, some, is_first)?) {
                        store(self, *v, x)?;
                    }
                }
                LoopBody::Filter { count, .. } => {
                    let a = load(self, starts, *count, c)?.into_int_value();
                    let b = load(self, totals, *count, c)?.into_int_value();
                    let sum = self.b.build_int_add(a, b, "start")?;
                    store(self, *count, sum.into())?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Whether chunk `c`'s entry of a has-value table (`has`) is set.
    fn holds(&mut self, has: PointerValue<'ctx>, c: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        let i8t = self.cx.i8_type();
        let ep = unsafe { self.b.build_in_bounds_gep(i8t, has, &[c], "has")? };
        let some = self.b.build_load(i8t, ep, "has")?.into_int_value();
        self.b.build_int_compare(IntPredicate::NE, some, i8t.const_zero(), "has")
    }

    /// A scan's start of chunk c + 1 from chunk c's `start` and `total`
    /// (register form): the first chunk's total itself — it began from the
    /// initial value — and a later one's combined with the start in the
    /// scan's direction when it holds anything (`some`), else the start.
    /// The operator may fail or lack an identity: it runs only on two
    /// values that are there.
    #[allow(clippy::too_many_arguments)]
    fn next_scan_start(&mut self, dir: ScanKind, op: &Lambda, start: &[BasicValueEnum<'ctx>], total: &[BasicValueEnum<'ctx>], some: IntValue<'ctx>, is_first: IntValue<'ctx>) -> R<Vec<BasicValueEnum<'ctx>>> {
        let later = self.b.build_not(is_first, "later")?;
        let combine = self.b.build_and(some, later, "combine")?;
        let (step, keep, join) = (self.new_block("carry.combine"), self.new_block("carry.keep"), self.new_block("carry.next"));
        self.b.build_conditional_branch(combine, step, keep)?;
        self.b.position_at_end(step);
        let args: Vec<BasicValueEnum<'ctx>> = if dir == ScanKind::Right { total.iter().chain(start).copied().collect() } else { start.iter().chain(total).copied().collect() };
        let sum = self.lambda(op, &args)?;
        let step_end = self.b.get_insert_block().expect("a block");
        self.b.build_unconditional_branch(join)?;
        self.b.position_at_end(keep);
        let mut kept = vec![];
        for (s, t) in start.iter().zip(total) {
            kept.push(self.b.build_select(is_first, *t, *s, "kept")?);
        }
        self.b.build_unconditional_branch(join)?;
        self.b.position_at_end(join);
        let mut out = vec![];
        for (a, b) in sum.iter().zip(&kept) {
            let p = self.b.build_phi(a.get_type(), "start")?;
            p.add_incoming(&[(a, step_end), (b, keep)]);
            out.push(p.as_basic_value());
        }
        Ok(out)
    }

    /// A filter's table of the first `used` chunks' counts becomes its
    /// offsets, in place, with the sum after them; returns the sum.
    fn offsets(&mut self, count: VarId, tables: &Tables<'ctx>, used: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        let i64t = self.cx.i64_type();
        let (slot, t) = tables[&count];
        let running = self.entry_alloca(i64t.into(), &format!("{}.running", self.name(count)))?;
        self.b.build_store(running, i64t.const_zero())?;
        self.counted("offsets", Trips::Chunks, i64t.const_zero(), used, 1, &mut |g, c| {
            let ep = unsafe { g.b.build_in_bounds_gep(t, slot, &[c], "count")? };
            let x = g.b.build_load(t, ep, "count")?.into_int_value();
            let now = g.b.build_load(i64t, running, "offset")?.into_int_value();
            g.b.build_store(ep, now)?;
            g.b.build_store(running, g.b.build_int_add(now, x, "offset")?)?;
            Ok(())
        })?;
        let total = self.b.build_load(i64t, running, &self.name(count))?.into_int_value();
        let ep = unsafe { self.b.build_in_bounds_gep(t, slot, &[used], "count")? };
        self.b.build_store(ep, total)?;
        Ok(total)
    }

    /// The chunk function of one pass of a parallel nest (its body
    /// generated once to learn what it takes from this function, then with
    /// those values as parameters, called by a wrapper that loads them from
    /// a context) and that context, filled here.
    #[allow(clippy::too_many_arguments)]
    fn chunk_fn(&mut self, n: &LoopNest, pass: Pass, tables: &Tables<'ctx>, totals: &Tables<'ctx>, has: &IndexMap<VarId, PointerValue<'ctx>>, chained: Option<IntValue<'ctx>>, parts: &ScatterParts<'ctx>) -> R<(PointerValue<'ctx>, PointerValue<'ctx>)> {
        let name = format!("{}.nest{}{}", self.f.name, n.cluster, pass.suffix());
        let (func, ctx) = self.outline_chunks(&name, n.span, &mut |g, params| g.chunk_body(n, pass, tables, totals, has, chained, parts, params))?;
        Ok((func.as_global_value().as_pointer_value(), ctx))
    }

    /// A chunk function named `name` and the context it takes, from `body`,
    /// which generates its body (`open_chunk`) twice: first to learn the
    /// values it takes, then with one parameter per value; the function the
    /// runtime calls loads them from the context and calls it.
    #[allow(clippy::type_complexity)]
    fn outline_chunks(&mut self, name: &str, span: Span, body: &mut dyn FnMut(&mut Self, Option<&[(BasicValueEnum<'ctx>, bool)]>) -> R<(FunctionValue<'ctx>, Vec<(BasicValueEnum<'ctx>, bool)>)>) -> R<(FunctionValue<'ctx>, PointerValue<'ctx>)> {
        let cx = self.cx;
        let i64t = cx.i64_type();
        let ptr = cx.ptr_type(Default::default());
        let (first, taken) = body(self, None)?;
        unsafe { first.delete() };
        let (body, again) = body(self, Some(&taken))?;
        if again.len() != taken.len() {
            afc_ir::ice::fail("codegen", "a chunk function's second pass took other values than its first", &format!("{}: {} then {}", name, taken.len(), again.len()));
        }
        let fty = cx.void_type().fn_type(&[ptr.into(), i64t.into(), i64t.into(), i64t.into(), ptr.into()], false);
        let func = self.m.add_function(name, fty, Some(Linkage::Internal));
        // Only the runtime calls it, through its address, which nothing
        // compares: two chunk functions that came out the same can be one
        // (`mergefunc`, lib.rs).
        func.as_global_value().set_unnamed_address(inkwell::values::UnnamedAddress::Global);
        let kind = Attribute::get_named_enum_kind_id;
        func.add_attribute(AttributeLoc::Function, cx.create_enum_attribute(kind("nounwind"), 0));
        func.add_attribute(AttributeLoc::Function, cx.create_string_attribute("frame-pointer", "none"));
        self.vector_math_attributes(func);
        self.nest_function_attributes(func);
        let w = cx.create_builder();
        w.position_at_end(cx.append_basic_block(func, "entry"));
        if let Some((dib, sp)) = self.outlined_debug(func, span) {
            // The call to the body, which is inlined, needs a location.
            let (_, line, col) = split_location(self.f.location(span)).unwrap_or(("?", 0, 0));
            w.set_current_debug_location(dib.create_debug_location(cx, line, col, sp.as_debug_info_scope(), None));
        }
        let arg = |k: u32| func.get_nth_param(k).expect("the chunk function's parameters");
        let mut args: Vec<BasicMetadataValueEnum<'ctx>> = (1..5).map(|k| arg(k).into()).collect();
        for (k, (v, _)) in taken.iter().enumerate() {
            let slot = unsafe { w.build_in_bounds_gep(cx.i8_type(), arg(0).into_pointer_value(), &[i64t.const_int(8 * k as u64, false)], "ctx")? };
            args.push(w.build_load(v.get_type(), slot, "taken")?.into());
        }
        w.build_call(body, &args, "")?;
        w.build_return(None)?;

        // The context: the values the chunks take, in slot order.
        let ctx = self.entry_alloca(i64t.array_type(taken.len().max(1) as u32).into(), "ctx")?;
        for (k, (v, _)) in taken.iter().enumerate() {
            let slot = unsafe { self.b.build_in_bounds_gep(cx.i8_type(), ctx, &[i64t.const_int(8 * k as u64, false)], "ctx")? };
            self.b.build_store(slot, *v)?;
        }
        Ok((func, ctx))
    }

    /// One pass of a parallel nest's body as a function of the chunk
    /// `(index, lo, hi, fault)`: first (`params` none) taking the values it
    /// uses from a context, to learn which; then with one parameter per
    /// value the first pass took (`noalias` for arrays and the fault),
    /// inlined into the wrapper. It leaves what the pass makes in the
    /// tables: partial results of folds (and, in one pass, filter counts),
    /// or a first pass's totals of scans and filter counts. Returns the
    /// function and the values it took, in order.
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    fn chunk_body(&mut self, n: &LoopNest, pass: Pass, tables: &Tables<'ctx>, totals: &Tables<'ctx>, has: &IndexMap<VarId, PointerValue<'ctx>>, chained: Option<IntValue<'ctx>>, parts: &ScatterParts<'ctx>, params: Option<&[(BasicValueEnum<'ctx>, bool)]>) -> R<(FunctionValue<'ctx>, Vec<(BasicValueEnum<'ctx>, bool)>)> {
        let cx = self.cx;
        let i64t = cx.i64_type();
        let name = format!("{}.nest{}{}", self.f.name, n.cluster, pass.suffix());
        let (func, mut g, mut chunk, done) = self.open_chunk(&name, n.span, pass, params)?;
        chunk.chained = chained.map(|c| g.take(c.into(), false).into_int_value());
        let carried = |l: &LoopBody| matches!(l, LoopBody::Scan { .. } | LoopBody::Filter { .. });
        if pass == Pass::Carry {
            g.carry_step(n, tables, totals, has, chunk.index)?;
        } else {
            let mut starts = Tables::new();
            if pass == Pass::Resume {
                for l in owned_by(&n.root.body, None).iter().filter(|l| carried(l)) {
                    for v in l.state_vars() {
                        let (slot, t) = tables[&v];
                        starts.insert(v, (g.take(slot.into(), true).into_pointer_value(), t));
                    }
                }
            }
            let mut taken_parts = ScatterParts::new();
            for (key, p) in parts {
                let bufs = p.bufs.iter().map(|b| g.take((*b).into(), true).into_pointer_value()).collect();
                let flags = g.take(p.flags.into(), true).into_pointer_value();
                let (len, on) = (g.take(p.len.into(), false).into_int_value(), g.take(p.on.into(), false).into_int_value());
                taken_parts.insert(*key, Partials { bufs, flags, len, on });
            }
            let extent = g.size_expr(&n.root.extent)?;
            let ends = g.run_nest(n, Some(chunk), &starts, &taken_parts, None)?;
            if let Some(chained) = chunk.chained {
                // Chunks run in order: the next one starts where this one ends.
                let (write, rest) = (g.new_block("chain"), g.new_block("chained"));
                g.b.build_conditional_branch(chained, write, rest)?;
                g.b.position_at_end(write);
                let next = g.b.build_int_add(chunk.index, i64t.const_int(1, false), "next_chunk")?;
                for e in ends.iter().filter(|e| carried(&e.leaf)) {
                    for (v, x) in &e.vals {
                        let (table, t) = starts[v];
                        let ep = unsafe { g.b.build_in_bounds_gep(t, table, &[next], "start")? };
                        let m = g.to_mem(*x)?;
                        g.b.build_store(ep, m)?;
                    }
                }
                g.b.build_unconditional_branch(rest)?;
                g.b.position_at_end(rest);
            }
            for e in ends {
                if let (LoopBody::Filter { count, .. }, Pass::Resume) = (&e.leaf, pass) {
                    // The last chunk's cursor is the filter's count.
                    let (last, rest) = (g.new_block("last_chunk"), g.new_block("counted"));
                    let is_last = g.b.build_int_compare(IntPredicate::EQ, chunk.hi, extent, "last")?;
                    g.b.build_conditional_branch(is_last, last, rest)?;
                    g.b.position_at_end(last);
                    let (slot, t) = tables[count];
                    let table = g.take(slot.into(), true).into_pointer_value();
                    let ep = unsafe { g.b.build_in_bounds_gep(t, table, &[i64t.const_int(MAX_CHUNKS + 1, false)], "count")? };
                    g.b.build_store(ep, e.vals[0].1)?;
                    g.b.build_unconditional_branch(rest)?;
                    g.b.position_at_end(rest);
                    continue;
                }
                let keep = match pass {
                    Pass::Only => binds(&e.leaf),
                    Pass::Totals => carried(&e.leaf),
                    Pass::Resume => !carried(&e.leaf),
                    Pass::Carry => unreachable!("a carry step runs no loop"),
                };
                if keep {
                    g.leave_partial(&e, tables, has, chunk.index)?;
                }
            }
        }
        g.finish_chunk(func, done)
    }

    /// In a chunk function: a state's end as the chunk's partial result, in
    /// slot `index` of its tables (and whether it holds a value).
    fn leave_partial(&mut self, e: &End<'ctx>, tables: &Tables<'ctx>, has: &IndexMap<VarId, PointerValue<'ctx>>, index: IntValue<'ctx>) -> R<()> {
        for (v, x) in &e.vals {
            let (slot, t) = tables[v];
            let table = self.take(slot.into(), true).into_pointer_value();
            let ep = unsafe { self.b.build_in_bounds_gep(t, table, &[index], "partial")? };
            let m = self.to_mem(*x)?;
            self.b.build_store(ep, m)?;
        }
        if let Some(h) = e.has {
            let i8t = self.cx.i8_type();
            let table = self.take(has[&leaf_key(&e.leaf)].into(), true).into_pointer_value();
            let ep = unsafe { self.b.build_in_bounds_gep(i8t, table, &[index], "has")? };
            self.b.build_store(ep, self.b.build_int_z_extend(h, i8t, "has")?)?;
        }
        Ok(())
    }

    /// Ends a chunk function's body (`open_chunk`'s `func`): what is left
    /// runs on to `done`, which returns. Returns the function and the
    /// values it took, in order.
    #[allow(clippy::type_complexity)]
    fn finish_chunk(mut self, func: FunctionValue<'ctx>, done: BasicBlock<'ctx>) -> R<(FunctionValue<'ctx>, Vec<(BasicValueEnum<'ctx>, bool)>)> {
        self.b.build_unconditional_branch(done)?;
        self.b.position_at_end(done);
        self.b.build_return(None)?;
        let taken = self.outline.take().expect("a chunk function's outline").taken.into_inner().into_iter().map(|(parent, (_, array))| (parent, array)).collect();
        Ok((func, taken))
    }

    /// A chunk function's body being generated (`chunk_body`,
    /// `rows_body`), named `name`: the function `(index, lo, hi, fault,
    /// ctx)` — or, given `params`, one parameter per value taken, `noalias`
    /// for arrays and the fault, always inlined into its wrapper — and a
    /// generator positioned at its start, taking what it uses of this one.
    /// Returns the function, the generator, the chunk it runs and the block
    /// that returns.
    #[allow(clippy::type_complexity)]
    fn open_chunk(&mut self, name: &str, span: Span, pass: Pass, params: Option<&[(BasicValueEnum<'ctx>, bool)]>) -> R<(FunctionValue<'ctx>, Gen<'a, 'ctx>, Chunk<'ctx>, BasicBlock<'ctx>)> {
        let cx = self.cx;
        let i64t = cx.i64_type();
        let ptr = cx.ptr_type(Default::default());
        let kind = Attribute::get_named_enum_kind_id;
        let func = match params {
            None => {
                let fty = cx.void_type().fn_type(&[i64t.into(), i64t.into(), i64t.into(), ptr.into(), ptr.into()], false);
                self.m.add_function(&format!("{}.scan", name), fty, Some(Linkage::Internal))
            }
            Some(ps) => {
                let mut tys: Vec<inkwell::types::BasicMetadataTypeEnum<'ctx>> = vec![i64t.into(), i64t.into(), i64t.into(), ptr.into()];
                tys.extend(ps.iter().map(|(v, _)| inkwell::types::BasicMetadataTypeEnum::from(v.get_type())));
                let f = self.m.add_function(&format!("{}.body", name), cx.void_type().fn_type(&tys, false), Some(Linkage::Internal));
                f.as_global_value().set_unnamed_address(inkwell::values::UnnamedAddress::Global);
                f.add_attribute(AttributeLoc::Function, cx.create_enum_attribute(kind("alwaysinline"), 0));
                f.add_attribute(AttributeLoc::Param(3), cx.create_enum_attribute(kind("noalias"), 0));
                for (k, (_, array)) in ps.iter().enumerate() {
                    if *array {
                        f.add_attribute(AttributeLoc::Param(4 + k as u32), cx.create_enum_attribute(kind("noalias"), 0));
                    }
                }
                f
            }
        };
        func.add_attribute(AttributeLoc::Function, cx.create_enum_attribute(kind("nounwind"), 0));
        let entry = cx.append_basic_block(func, "entry");
        let start = cx.append_basic_block(func, "start");
        let done = cx.append_basic_block(func, "done");
        let at = cx.create_builder();
        at.position_at_end(entry);
        let code_slot = at.build_alloca(cx.i32_type(), "code")?;
        let br = at.build_unconditional_branch(start)?;
        at.position_before(&br);
        let arg = |k: u32| func.get_nth_param(k).expect("the chunk function's parameters");
        let chunk = Chunk { index: arg(0).into_int_value(), lo: arg(1).into_int_value(), hi: arg(2).into_int_value(), pass, chained: None };
        let (ctx, params_of) = match params {
            None => (Some((arg(4).into_pointer_value(), at)), IndexMap::new()),
            Some(ps) => (None, ps.iter().enumerate().map(|(k, (v, _))| (*v, arg(4 + k as u32))).collect()),
        };
        let outline = Outline { ctx, params_of, scalars: self.scalars.clone(), params: self.params.clone(), slots: self.slots.clone(), taken: Default::default(), fault: arg(3).into_pointer_value() };
        // (-g for the body that stays, not for the first one, which only
        // learns what the body takes.)
        let debug = if params.is_some() { self.outlined_debug(func, span) } else { None };
        self.nest_function_attributes(func);
        let mut g = Gen::new(cx, self.m, cx.create_builder(), self.f, func, self.opts, code_slot, done, entry, debug);
        g.labels = self.labels.clone();
        g.registers = self.registers;
        g.outline = Some(outline);
        g.b.position_at_end(start);
        g.at(span);
        Ok((func, g, chunk, done))
    }

    /// The partial destinations of a nest's scatters, allocated (and their
    /// has-value bytes cleared) when the call uses them: when there is more
    /// than one chunk and a destination to update, and, unless a scatter
    /// updates floats, more than one worker. Returns them and the
    /// allocations' owner slots (freed at the function's exit otherwise).
    /// `lens`: each scatter's destination length, `dest_len` their sum.
    fn alloc_partials(&mut self, leaves: &[LoopBody], chunks: IntValue<'ctx>, lens: &[IntValue<'ctx>], dest_len: IntValue<'ctx>) -> R<(ScatterParts<'ctx>, Vec<PointerValue<'ctx>>)> {
        let cx = self.cx;
        let i64t = cx.i64_type();
        let ptr = cx.ptr_type(Default::default());
        let (mut parts, mut owners) = (ScatterParts::new(), vec![]);
        let scatters: Vec<&LoopBody> = leaves.iter().filter(|l| matches!(l, LoopBody::Scatter { .. })).collect();
        if scatters.is_empty() {
            return Ok((parts, owners));
        }
        let one = i64t.const_int(1, false);
        let several = self.b.build_int_compare(IntPredicate::SGT, chunks, one, "several")?;
        let some = self.b.build_int_compare(IntPredicate::SGT, dest_len, i64t.const_zero(), "some")?;
        let mut on = self.b.build_and(several, some, "partials")?;
        // On one worker, exact updates (integers, booleans) go straight to
        // the output, chunk after chunk: the same result with no merge.
        // Float ones keep their partials, so that their bits do not depend
        // on the number of workers (the chunks depend only on the sizes).
        let exact = scatters.iter().all(|l| l.element_outs().iter().all(|v| !self.f.var(*v).ty.prim().is_float()));
        if exact {
            let alone = self.one_worker()?;
            let workers = self.b.build_not(alone, "workers")?;
            on = self.b.build_and(on, workers, "partials")?;
        }
        let (alloc, join) = (self.new_block("partials.alloc"), self.new_block("partials.ready"));
        self.b.build_conditional_branch(on, alloc, join)?;
        self.b.position_at_end(alloc);
        let later = self.b.build_int_sub(chunks, one, "later_chunks")?;
        let mut made = vec![];
        for (l, len) in scatters.iter().zip(lens.iter().copied()) {
            let LoopBody::Scatter { outs, .. } = l else { unreachable!() };
            let elems = self.b.build_int_mul(later, len, "partial_elems")?;
            let mut slots = vec![];
            for o in outs {
                let t = mem_ty(cx, self.f.var(*o).ty.prim());
                let bytes = self.b.build_int_mul(elems, t.size_of().expect("sized"), "partial_bytes")?;
                let slot = self.new_alloc_slot(None)?;
                self.alloc_into(slot, bytes, *o)?;
                slots.push(slot);
            }
            let flags = self.new_alloc_slot(None)?;
            let p = self.alloc_into(flags, elems, outs[0])?;
            self.b.build_memset(p, 1, cx.i8_type().const_zero(), elems)?;
            made.push((leaf_key(l), slots, flags, len));
        }
        self.b.build_unconditional_branch(join)?;
        self.b.position_at_end(join);
        for (key, slots, flags, len) in made {
            let bufs = slots.iter().map(|s| Ok(self.b.build_load(ptr, *s, "partial")?.into_pointer_value())).collect::<R<Vec<_>>>()?;
            let fp = self.b.build_load(ptr, flags, "partial_has")?.into_pointer_value();
            owners.extend(slots);
            owners.push(flags);
            parts.insert(key, Partials { bufs, flags: fp, len, on });
        }
        Ok((parts, owners))
    }

    /// In a chunk: a scatter whose call uses partials updates, in chunks
    /// after the first, its chunk's partial destination instead of the
    /// output (`nx.base`), marking the elements it sets.
    fn partial_dests(&mut self, leaves: &[LoopBody], c: Chunk<'ctx>, parts: &ScatterParts<'ctx>, nx: &mut NestCx<'ctx>) -> R<()> {
        let i64t = self.cx.i64_type();
        for l in leaves {
            let LoopBody::Scatter { outs, .. } = l else { continue };
            let Some(p) = parts.get(&leaf_key(l)) else { continue };
            let later = self.b.build_int_compare(IntPredicate::SGT, c.index, i64t.const_zero(), "later_chunk")?;
            let own = self.b.build_and(p.on, later, "own_partial")?;
            // Chunk 0's offset is never used (the output is); keep it in range.
            let k = self.b.build_int_sub(c.index, self.b.build_int_z_extend(later, i64t, "k")?, "k")?;
            let off = self.b.build_int_mul(k, p.len, "partial_at")?;
            for (o, b) in outs.iter().zip(&p.bufs) {
                let t = mem_ty(self.cx, self.f.var(*o).ty.prim());
                let mine = unsafe { self.b.build_in_bounds_gep(t, *b, &[off], "partial")? };
                let base = self.b.build_select(own, mine, nx.base[o], "dest")?.into_pointer_value();
                nx.base.insert(*o, base);
            }
            let flags = unsafe { self.b.build_in_bounds_gep(self.cx.i8_type(), p.flags, &[off], "partial_has")? };
            nx.partial.insert(leaf_key(l), (own, flags));
        }
        Ok(())
    }

    /// After the chunks: each scatter's partial destinations combined into
    /// its output with its operator, in chunk order (the order of the
    /// updates, up to associativity), then freed.
    fn merge_partials(&mut self, leaves: &[LoopBody], chunks: IntValue<'ctx>, parts: &ScatterParts<'ctx>, owners: &[PointerValue<'ctx>]) -> R<()> {
        let cx = self.cx;
        let i64t = cx.i64_type();
        let ptr = cx.ptr_type(Default::default());
        let Some(on) = parts.values().next().map(|p| p.on) else { return Ok(()) };
        let (merge, merged) = (self.new_block("partials.merge"), self.new_block("partials.merged"));
        self.b.build_conditional_branch(on, merge, merged)?;
        self.b.position_at_end(merge);
        let one = i64t.const_int(1, false);
        for l in leaves {
            let LoopBody::Scatter { outs, op, .. } = l else { continue };
            let p = parts[&leaf_key(l)].clone();
            let outs_base = outs.iter().map(|o| self.array_ptr(*o)).collect::<R<Vec<_>>>()?;
            self.counted("merge.chunk", Trips::Chunks, one, chunks, 1, &mut |g, c| {
                let off = g.b.build_int_mul(g.b.build_int_sub(c, one, "k")?, p.len, "partial_at")?;
                g.counted("merge.elem", Trips::Positions, i64t.const_zero(), p.len, 1, &mut |g, k| {
                    let at = g.b.build_int_add(off, k, "at")?;
                    let fp = unsafe { g.b.build_in_bounds_gep(cx.i8_type(), p.flags, &[at], "has")? };
                    let set = g.b.build_load(cx.i8_type(), fp, "has")?.into_int_value();
                    let set = g.b.build_int_compare(IntPredicate::NE, set, cx.i8_type().const_zero(), "has")?;
                    let (add, next) = (g.new_block("merge.add"), g.new_block("merge.next"));
                    g.b.build_conditional_branch(set, add, next)?;
                    g.b.position_at_end(add);
                    let (mut dests, mut partial) = (vec![], vec![]);
                    for ((o, base), buf) in outs.iter().zip(&outs_base).zip(&p.bufs) {
                        let prim = g.f.var(*o).ty.prim();
                        let t = mem_ty(cx, prim);
                        dests.push(unsafe { g.b.build_in_bounds_gep(t, *base, &[k], "dest")? });
                        let pp = unsafe { g.b.build_in_bounds_gep(t, *buf, &[at], "partial")? };
                        let y = g.b.build_load(t, pp, "partial")?;
                        partial.push(g.value_of_mem(y, prim)?);
                    }
                    g.combine_in_place(op, outs, &dests, partial)?;
                    g.b.build_unconditional_branch(next)?;
                    g.b.position_at_end(next);
                    Ok(())
                })
            })?;
        }
        // Freed now, not at the function's exit: a nest may run again.
        for slot in owners {
            let p = self.b.build_load(ptr, *slot, "partial")?;
            self.b.build_call(self.runtime_fn("afc_free"), &[p.into()], "")?;
            self.b.build_store(*slot, ptr.const_null())?;
        }
        self.b.build_unconditional_branch(merged)?;
        self.b.position_at_end(merged);
        Ok(())
    }

    /// Whether this call runs on one worker (`afc_get_num_threads`).
    fn one_worker(&mut self) -> R<IntValue<'ctx>> {
        let threads = self.b.build_call(self.runtime_fn("afc_get_num_threads"), &[], "threads")?.try_as_basic_value().basic().expect("afc_get_num_threads returns a count").into_int_value();
        self.b.build_int_compare(IntPredicate::SLE, threads, self.cx.i32_type().const_int(1, false), "one_worker")
    }

    /// `out[k] = op(out[k], vals)` for each output, through `ptrs`: a
    /// scatter's update of an element, and the merge of a partial one.
    fn combine_in_place(&mut self, op: &Lambda, outs: &[VarId], ptrs: &[PointerValue<'ctx>], vals: Vec<BasicValueEnum<'ctx>>) -> R<()> {
        let mut args = vec![];
        for (out, ep) in outs.iter().zip(ptrs) {
            let p = self.f.var(*out).ty.prim();
            let old = self.b.build_load(mem_ty(self.cx, p), *ep, "old")?;
            args.push(self.value_of_mem(old, p)?);
        }
        args.extend(vals);
        for (ep, v) in ptrs.iter().zip(self.lambda(op, &args)?) {
            let m = self.to_mem(v)?;
            self.b.build_store(*ep, m)?;
        }
        Ok(())
    }

    fn ceil_div(&mut self, a: IntValue<'ctx>, b: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        let i64t = self.cx.i64_type();
        let q = self.b.build_int_signed_div(a, b, "q")?;
        let r = self.b.build_int_signed_rem(a, b, "r")?;
        let up = self.b.build_int_compare(IntPredicate::SGT, r, i64t.const_zero(), "up")?;
        self.b.build_int_add(q, self.b.build_int_z_extend(up, i64t, "up")?, "ceil")
    }

    fn max(&mut self, a: IntValue<'ctx>, b: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        let gt = self.b.build_int_compare(IntPredicate::SGT, a, b, "gt")?;
        Ok(self.b.build_select(gt, a, b, "max")?.into_int_value())
    }

    fn min(&mut self, a: IntValue<'ctx>, b: IntValue<'ctx>) -> R<IntValue<'ctx>> {
        let lt = self.b.build_int_compare(IntPredicate::SLT, a, b, "lt")?;
        Ok(self.b.build_select(lt, a, b, "min")?.into_int_value())
    }

    /// Each scatter's output starts as a copy of its destination.
    fn copy_scatter_dests(&mut self, leaves: &[LoopBody]) -> R<()> {
        for l in leaves {
            if let LoopBody::Scatter { dest, outs, .. } = l {
                for (d, o) in dest.iter().zip(outs) {
                    let src = self.array_ptr(*d)?;
                    let to = self.array_ptr(*o)?;
                    let bytes = self.bytes(*d)?;
                    self.b.build_memcpy(to, 1, src, 1, bytes)?;
                }
            }
        }
        Ok(())
    }

    /// Innermost positions per position of a loop with body `b`: the
    /// product of the extents of the loops inside it (the largest product
    /// where several are side by side), at least 1.
    fn positions_inside(&mut self, b: &Body) -> R<IntValue<'ctx>> {
        let i64t = self.cx.i64_type();
        let mut best = i64t.const_int(1, false);
        for l in b.inner_loops() {
            let e = self.size_expr(&l.extent)?;
            let inside = self.positions_inside(&l.body)?;
            let p = self.b.build_int_mul(e, inside, "inside")?;
            let gt = self.b.build_int_compare(IntPredicate::SGT, p, best, "gt")?;
            best = self.b.build_select(gt, p, best, "inside")?.into_int_value();
        }
        Ok(best)
    }

    fn new_block(&self, name: &str) -> BasicBlock<'ctx> {
        self.cx.append_basic_block(self.func, name)
    }

    /// Sets the slots of stateful leaves: lane 0 from the initial values,
    /// other lanes from the operator's identity; a filter's cursor at 0.
    fn init_states(&mut self, ls: &[LoopBody], nx: &mut NestCx<'ctx>) -> R<()> {
        let cx = self.cx;
        for l in ls {
            let key = leaf_key(l);
            if let LoopBody::ManyToOne { results, init, op, acc: Accumulate::Lanes(k), .. } = l {
                // Lanes are one vector per accumulator: lane 0 starts from
                // the initial value, the others from the identity.
                let f = self.f;
                let ids = reorderable(op, &|v| f.var(v).ty.prim()).expect("loops::verify: lanes only for reorderable operators");
                if !nx.lanes.contains_key(&key) {
                    let mut slots = vec![];
                    for r in results {
                        let vt = reg_ty(cx, self.f.var(*r).ty.prim()).vec_of(*k);
                        slots.push(self.entry_alloca(vt.into(), &format!("{}.lanes", self.name(*r)))?);
                    }
                    nx.lanes.insert(key, (slots, ids.iter().map(|(c, _)| *c).collect()));
                }
                let slots = nx.lanes[&key].0.clone();
                for ((slot, (_, id)), z) in slots.iter().zip(&ids).zip(init) {
                    let idv = self.konst(*id);
                    let v = self.splat(idv, *k)?;
                    let mut zv = self.operand(z);
                    if let Some(c) = nx.chunk.filter(|_| l.state() == Some(nx.chunk_owner)) {
                        // Chunks after the first fold from the identity: the
                        // initial value is in the first chunk's partial result.
                        // (A fold per row of a chunk of rows starts every row
                        // from it.)
                        let first = self.b.build_int_compare(IntPredicate::EQ, c.index, cx.i64_type().const_zero(), "first_chunk")?;
                        zv = self.b.build_select(first, zv, idv, "lane0")?;
                    }
                    let v = self.b.build_insert_element(v, zv, cx.i64_type().const_zero(), "lane0")?;
                    self.b.build_store(*slot, v)?;
                }
                continue;
            }
            let slots = match nx.states.get(&key) {
                Some(s) => s.clone(),
                None => {
                    let (vars, lanes): (Vec<VarId>, usize) = match l {
                        LoopBody::ManyToOne { results, .. } => (results.clone(), 1),
                        LoopBody::Scan { outs, .. } => (outs.clone(), 1),
                        LoopBody::Filter { count, .. } => (vec![*count], 1),
                        _ => unreachable!(),
                    };
                    let mut s = vec![];
                    for lane in 0..lanes {
                        let mut row = vec![];
                        for v in &vars {
                            let t = reg_ty(cx, self.f.var(*v).ty.prim());
                            row.push(self.entry_alloca(t, &format!("{}.state{}", self.name(*v), lane))?);
                        }
                        s.push(row);
                    }
                    nx.states.insert(key, s.clone());
                    s
                }
            };
            let init: Vec<BasicValueEnum<'ctx>> = match l {
                LoopBody::ManyToOne { init, .. } | LoopBody::Scan { init, .. } => init.iter().map(|o| self.operand(o)).collect(),
                LoopBody::Filter { .. } => vec![cx.i64_type().const_zero().into()],
                _ => unreachable!(),
            };
            for (slot, v) in slots[0].iter().zip(&init) {
                self.b.build_store(*slot, *v)?;
            }
        }
        Ok(())
    }

    /// A vector of `k` copies of `x`.
    fn splat(&self, x: BasicValueEnum<'ctx>, k: u32) -> R<inkwell::values::VectorValue<'ctx>> {
        let mut v = vec_type(x.get_type(), k).get_undef();
        for j in 0..k {
            v = self.b.build_insert_element(v, x, self.cx.i64_type().const_int(j as u64, false), "splat")?;
        }
        Ok(v)
    }

    /// Lanes `a ⊕ b`, element by element, for one of the reorderable operators.
    fn combine(&self, op: CombineOp, a: inkwell::values::VectorValue<'ctx>, b: inkwell::values::VectorValue<'ctx>) -> R<BasicValueEnum<'ctx>> {
        let float = a.get_type().get_element_type().is_float_type();
        let bb = &self.b;
        let r: BasicValueEnum = match (op, float) {
            (CombineOp::Add, true) => bb.build_float_add(a, b, "lanes")?.into(),
            (CombineOp::Mul, true) => bb.build_float_mul(a, b, "lanes")?.into(),
            (CombineOp::Add, false) => bb.build_int_add(a, b, "lanes")?.into(),
            (CombineOp::Mul, false) => bb.build_int_mul(a, b, "lanes")?.into(),
            (CombineOp::And, false) => bb.build_and(a, b, "lanes")?.into(),
            (CombineOp::Or, false) => bb.build_or(a, b, "lanes")?.into(),
            (CombineOp::Xor, false) => bb.build_xor(a, b, "lanes")?.into(),
            (CombineOp::Min | CombineOp::Max, true) => return self.float_min_max(op == CombineOp::Max, a.into(), b.into(), "lanes"),
            (CombineOp::Min | CombineOp::Max, false) => {
                let name = if op == CombineOp::Min { "llvm.smin" } else { "llvm.smax" };
                return self.call_intrinsic(name, &[a.get_type().into()], &[a.into(), b.into()], "lanes");
            }
            (_, true) => unreachable!("bitwise operators combine integers"),
        };
        self.fast(r);
        Ok(r)
    }

    /// Reads a stateful leaf's result when its owner ends: a fold's lanes
    /// combined in lane order, a filter's count.
    fn finish_state(&mut self, l: &LoopBody, nx: &NestCx<'ctx>) -> R<Vec<(VarId, BasicValueEnum<'ctx>)>> {
        if let LoopBody::ManyToOne { results, op, acc: Accumulate::Lanes(k), .. } = l {
            // The lanes, combined in lane order.
            let (slots, _) = &nx.lanes[&leaf_key(l)];
            let mut vecs = vec![];
            for (s, r) in slots.iter().zip(results) {
                let vt = reg_ty(self.cx, self.f.var(*r).ty.prim()).vec_of(*k);
                vecs.push(self.b.build_load(vt, *s, "lanes")?.into_vector_value());
            }
            let lane = |g: &mut Self, j: u32| -> R<Vec<BasicValueEnum<'ctx>>> {
                vecs.iter().map(|v| g.b.build_extract_element(*v, g.cx.i64_type().const_int(j as u64, false), "lane")).collect()
            };
            let mut acc = lane(self, 0)?;
            for j in 1..*k {
                let next = lane(self, j)?;
                let args: Vec<BasicValueEnum> = acc.iter().chain(&next).copied().collect();
                acc = self.lambda(op, &args)?;
            }
            return Ok(results.iter().copied().zip(acc).collect());
        }
        let slots = &nx.states[&leaf_key(l)];
        let load = |g: &mut Self, row: &[PointerValue<'ctx>], vars: &[VarId]| -> R<Vec<BasicValueEnum<'ctx>>> {
            row.iter().zip(vars).map(|(s, v)| g.b.build_load(reg_ty(g.cx, g.f.var(*v).ty.prim()), *s, &g.name(*v))).collect()
        };
        Ok(match l {
            LoopBody::ManyToOne { results, .. } => results.iter().copied().zip(load(self, &slots[0], results)?).collect(),
            LoopBody::Filter { count, .. } => vec![(*count, load(self, &slots[0], &[*count])?[0])],
            _ => vec![],
        })
    }

    /// Emits `for (k = start; k < end; k += step) { f(k) }`, a loop over
    /// `trips` (what LLVM may do with it: `Trips`).
    fn counted(&mut self, name: &str, trips: Trips, start: IntValue<'ctx>, end: IntValue<'ctx>, step: u64, f: &mut dyn FnMut(&mut Self, IntValue<'ctx>) -> R<()>) -> R<()> {
        if trips != Trips::Chunks {
            self.position_loops = true;
        }
        let i64t = self.cx.i64_type();
        let pre = self.b.get_insert_block().unwrap();
        let (header, body, exit) = (self.new_block(&format!("{}.header", name)), self.new_block(&format!("{}.body", name)), self.new_block(&format!("{}.exit", name)));
        self.b.build_unconditional_branch(header)?;
        self.b.position_at_end(header);
        let k = self.b.build_phi(i64t, name)?;
        let kv = k.as_basic_value().into_int_value();
        let go = self.b.build_int_compare(IntPredicate::SLT, kv, end, "more")?;
        self.b.build_conditional_branch(go, body, exit)?;
        self.b.position_at_end(body);
        f(self, kv)?;
        let latch = self.b.get_insert_block().unwrap();
        let next = self.b.build_int_add(kv, i64t.const_int(step, false), "next")?;
        let back = self.b.build_unconditional_branch(header)?;
        loop_hints(self.cx, back, &hints_for(trips));
        k.add_incoming(&[(&start, pre), (&next, latch)]);
        self.b.position_at_end(exit);
        Ok(())
    }

    /// One loop of a nest, run as its schedule says; `outer` is the copy of
    /// the enclosing loop's body this loop runs in (none for the root).
    fn run_loop(&mut self, l: &Loop, outer: Option<&Pos<'ctx>>, nx: &mut NestCx<'ctx>) -> R<()> {
        let i64t = self.cx.i64_type();
        let one = i64t.const_int(1, false);
        let extent = self.size_expr(&l.extent)?;
        let total = match outer {
            Some(o) => self.b.build_int_mul(o.total, extent, "total")?,
            None => extent,
        };
        let last = self.b.build_int_sub(total, one, "last")?;
        let name = self.name(l.index);
        let at = |g: &mut Self, k: IntValue<'ctx>, lane: usize, trip: bool| -> R<Pos<'ctx>> {
            let i = match outer {
                Some(o) => {
                    let row = g.b.build_int_mul(o.i, extent, "row")?;
                    g.b.build_int_add(row, k, "pos")?
                }
                None => k,
            };
            let mut loops = outer.map(|o| o.loops.clone()).unwrap_or_default();
            loops.push((l.index, k, extent));
            Ok(Pos { i, last: Some(last), total, loops, lane, trip, simd: None, mask: outer.and_then(|o| o.mask), mirrored: None, limit: None })
        };
        if l.paired {
            // Positions k and n-1-k in one trip, then the middle one. A
            // chunk [lo, hi) of the root's positions runs the pairs
            // [lo/2, hi/2) — consecutive chunks share out [0, n/2) — and the
            // last chunk the middle one: each chunk about hi - lo positions.
            let two = i64t.const_int(2, false);
            let half = self.b.build_int_signed_div(extent, two, "half")?;
            let (plo, phi, last) = match (outer, nx.chunk) {
                (None, Some(c)) => (
                    self.b.build_int_signed_div(c.lo, two, "pairs_lo")?,
                    self.b.build_int_signed_div(c.hi, two, "pairs_hi")?,
                    Some(self.b.build_int_compare(IntPredicate::EQ, c.hi, extent, "last_chunk")?),
                ),
                _ => (i64t.const_zero(), half, None),
            };
            nx.halves = Some(self.half_scopes(&name));
            self.counted(&name, Trips::Positions, plo, phi, 1, &mut |g, k| {
                let mut p = at(g, k, 0, false)?;
                p.mirrored = Some(false);
                g.scalars.insert(l.index, k.into());
                g.copy(&l.body, &p, nx)?;
                let m = g.b.build_int_sub(g.b.build_int_sub(extent, one, "")?, k, "mirror")?;
                let mut q = at(g, m, 0, false)?;
                q.mirrored = Some(true);
                g.scalars.insert(l.index, m.into());
                g.copy(&l.body, &q, nx)
            })?;
            nx.halves = None;
            let mut odd = self.b.build_int_compare(IntPredicate::NE, self.b.build_int_signed_rem(extent, two, "")?, i64t.const_zero(), "odd")?;
            if let Some(last) = last {
                odd = self.b.build_and(odd, last, "middle_here")?;
            }
            let (mid, done) = (self.new_block(&format!("{}.middle", name)), self.new_block(&format!("{}.done", name)));
            self.b.build_conditional_branch(odd, mid, done)?;
            self.b.position_at_end(mid);
            let p = at(self, half, 0, false)?;
            self.scalars.insert(l.index, half.into());
            self.copy(&l.body, &p, nx)?;
            self.b.build_unconditional_branch(done)?;
            self.b.position_at_end(done);
            return Ok(());
        }
        // The positions this loop runs: all, or a chunk's of the root loop
        // (or of the loop a row's chunks cut).
        let (lo, hi) = match nx.chunk {
            Some(c) if nx.chunked.map_or(outer.is_none(), |j| j == l.index) => (c.lo, c.hi),
            _ => (i64t.const_zero(), extent),
        };
        // A root run row by row takes its few rows one at a time: one call
        // of the rows' chunk function in the loop, not one per lane.
        if l.unroll > 1 && !(outer.is_none() && nx.rows.is_some()) {
            let k = l.unroll as u64;
            let kk = i64t.const_int(k, false);
            // Streaming stores are whole aligned vectors: first the positions
            // before the outputs' alignment, one by one, with normal stores.
            // (A chunk starts at a multiple of CHUNK_QUANTUM positions, so
            // its first aligned position is `peel` positions in too.)
            let start = match (nx.streaming, outer, nx.peel) {
                (true, None, Some(peel)) => {
                    let streaming = std::mem::replace(&mut nx.streaming, false);
                    let peel = self.b.build_int_add(lo, peel, "peel_end")?;
                    let past = self.b.build_int_compare(IntPredicate::SGT, peel, hi, "short")?;
                    let peel = self.b.build_select(past, hi, peel, "peel_end")?.into_int_value();
                    self.counted(&format!("{}.peel", name), Trips::Remainder, lo, peel, 1, &mut |g, kv| {
                        let p = at(g, kv, 0, false)?;
                        g.scalars.insert(l.index, kv.into());
                        g.copy(&l.body, &p, nx)
                    })?;
                    nx.streaming = streaming;
                    peel
                }
                _ => lo,
            };
            let span = self.b.build_int_sub(hi, start, "span")?;
            let rem = self.b.build_int_signed_rem(span, kk, "rem")?;
            let main_end = self.b.build_int_sub(hi, rem, "main_end")?;
            self.counted(&name, Trips::Unrolled, start, main_end, k, &mut |g, base| {
                // An inner loop's trip is emitted inside one lane of an
                // outer trip: what the outer lanes before it collected
                // (fold elements, kept lanes, stream values) waits for the
                // outer trip's end, not this trip's.
                let outer = (std::mem::take(&mut nx.groups), std::mem::take(&mut nx.lane_groups), std::mem::take(&mut nx.compress_vals), std::mem::take(&mut nx.stream_vals));
                if l.simd {
                    // One copy in a loop over the trip's positions, which
                    // LLVM vectorises whole (`Trips::Lanes`).
                    let simd = std::mem::take(&mut nx.simd_elems);
                    g.counted(&format!("{}.lanes", name), Trips::Lanes(l.unroll), i64t.const_zero(), kk, 1, &mut |g, lane| {
                        let kv = g.b.build_int_add(base, lane, "lane")?;
                        let mut p = at(g, kv, 0, true)?;
                        p.simd = Some((lane, l.unroll));
                        g.scalars.insert(l.index, kv.into());
                        g.copy(&l.body, &p, nx)
                    })?;
                    let scans = g.combine_simd(nx)?;
                    nx.simd_elems = simd;
                    // Then each scan steps through the trip's elements in
                    // order, storing its outputs (nothing else in the loop
                    // reads them: `loops::simd_blocker`).
                    if !scans.is_empty() {
                        let mut leaves = vec![];
                        l.body.visit(&mut |b| {
                            if let Body::Leaf(leaf @ LoopBody::Scan { .. }, o) = b {
                                if scans.contains_key(&leaf_key(leaf)) {
                                    leaves.push((leaf, *o));
                                }
                            }
                        });
                        for j in 0..l.unroll as usize {
                            let kv = g.b.build_int_add(base, i64t.const_int(j as u64, false), "lane")?;
                            let p = at(g, kv, j, true)?;
                            g.scalars.insert(l.index, kv.into());
                            for (leaf, o) in &leaves {
                                g.scan_step(leaf, *o, scans[&leaf_key(leaf)][j].clone(), &p, &mut Elems::default(), nx)?;
                            }
                        }
                    }
                } else {
                    for lane in 0..l.unroll as usize {
                        let kv = g.b.build_int_add(base, i64t.const_int(lane as u64, false), "lane")?;
                        let p = at(g, kv, lane, true)?;
                        g.scalars.insert(l.index, kv.into());
                        g.copy(&l.body, &p, nx)?;
                    }
                }
                g.combine_groups(nx)?;
                g.flush_compress(nx)?;
                g.flush_streams(base, nx)?;
                (nx.groups, nx.lane_groups, nx.compress_vals, nx.stream_vals) = outer;
                Ok(())
            })?;
            let streaming = std::mem::replace(&mut nx.streaming, false);
            self.counted(&format!("{}.rest", name), Trips::Remainder, main_end, hi, 1, &mut |g, kv| {
                let p = at(g, kv, 0, false)?;
                g.scalars.insert(l.index, kv.into());
                g.copy(&l.body, &p, nx)
            })?;
            nx.streaming = streaming;
            return Ok(());
        }
        self.counted(&name, Trips::Positions, lo, hi, 1, &mut |g, kv| {
            let p = at(g, kv, 0, false)?;
            g.scalars.insert(l.index, kv.into());
            g.copy(&l.body, &p, nx)
        })
    }

    /// One copy of a loop's body at one position.
    fn copy(&mut self, b: &Body, pos: &Pos<'ctx>, nx: &mut NestCx<'ctx>) -> R<()> {
        let mut elems = Elems::default();
        self.body(b, pos, &mut elems, nx)
    }

    /// At the end of an unrolled trip, each tree fold combines the trip's
    /// elements as a balanced tree in index order, then into its accumulator.
    fn combine_groups(&mut self, nx: &mut NestCx<'ctx>) -> R<()> {
        // Lanes: the trip's elements, one vector per accumulator, combined
        // with the lanes by the operator itself.
        let lane_groups: Vec<(VarId, Vec<Vec<BasicValueEnum<'ctx>>>)> = nx.lane_groups.drain(..).collect();
        for (key, elements) in lane_groups {
            let k = elements.len() as u32;
            let mut vecs = vec![];
            for c in 0..elements[0].len() {
                let t = elements[0][c].get_type();
                let mut v = vec_type(t, k).get_undef();
                for (j, xs) in elements.iter().enumerate() {
                    v = self.b.build_insert_element(v, xs[c], self.cx.i64_type().const_int(j as u64, false), "lane")?;
                }
                vecs.push(v);
            }
            self.add_to_lanes(key, vecs, nx)?;
        }
        let groups: Vec<(VarId, Vec<Vec<BasicValueEnum<'ctx>>>)> = nx.groups.drain(..).collect();
        for (key, mut level) in groups {
            let (op, results) = nx.tree_ops[&key].clone();
            while level.len() > 1 {
                let mut next = vec![];
                for pair in level.chunks(2) {
                    if pair.len() == 2 {
                        let args: Vec<BasicValueEnum> = pair[0].iter().chain(&pair[1]).copied().collect();
                        next.push(self.lambda(&op, &args)?);
                    } else {
                        next.push(pair[0].clone());
                    }
                }
                level = next;
            }
            let slots = nx.states[&key][0].clone();
            let group = level.remove(0);
            if nx.fresh.contains_key(&key) {
                self.fresh_or(key, &slots, &group, None, nx, &mut |g, acc| {
                    let args: Vec<BasicValueEnum> = acc.iter().chain(&group).copied().collect();
                    g.lambda(&op, &args)
                })?;
                continue;
            }
            let mut args = vec![];
            for (s, v) in slots.iter().zip(&results) {
                args.push(self.b.build_load(reg_ty(self.cx, self.f.var(*v).ty.prim()), *s, "acc")?);
            }
            args.extend(group);
            let next = self.lambda(&op, &args)?;
            for (s, v) in slots.iter().zip(next) {
                self.b.build_store(*s, v)?;
            }
        }
        Ok(())
    }

    /// Combines one vector of a trip's elements per component into a lanes
    /// fold's accumulators, lane by lane, with the operator itself.
    fn add_to_lanes(&mut self, key: VarId, vecs: Vec<inkwell::values::VectorValue<'ctx>>, nx: &NestCx<'ctx>) -> R<()> {
        let (slots, ops) = nx.lanes[&key].clone();
        for ((slot, op), v) in slots.iter().zip(&ops).zip(vecs) {
            let acc = self.b.build_load(v.get_type(), *slot, "lanes")?.into_vector_value();
            let next = self.combine(*op, acc, v)?;
            self.b.build_store(*slot, next)?;
        }
        Ok(())
    }

    /// In a SIMD trip: a fold's element, each component stored at its lane
    /// of the trip's `[K x T]` (made on first use, in the entry block,
    /// aligned as the vector read back from it, which LLVM's load assumes).
    #[allow(clippy::too_many_arguments)]
    fn trip_elements(&mut self, key: VarId, k: u32, kind: TripKind, types: &[VarId], xs: Vec<BasicValueEnum<'ctx>>, lane: IntValue<'ctx>, nx: &mut NestCx<'ctx>) -> R<()> {
        if !nx.simd_elems.contains_key(&key) {
            let mut slots = vec![];
            for r in types {
                let p = self.f.var(*r).ty.prim();
                let slot = self.entry_alloca(mem_ty(self.cx, p).array_type(k).into(), "trip_elems")?;
                slot.as_instruction().expect("an alloca").set_alignment(trip_align(p, k)).expect("an alloca takes an alignment");
                slots.push((slot, p));
            }
            nx.simd_elems.insert(key, TripElems { k, kind, slots });
        }
        for ((slot, p), x) in nx.simd_elems[&key].slots.clone().into_iter().zip(xs) {
            let at = unsafe { self.b.build_in_bounds_gep(mem_ty(self.cx, p), slot, &[lane], "trip_elem")? };
            self.b.build_store(at, self.to_mem(x)?)?;
        }
        Ok(())
    }

    /// At the end of a SIMD trip: each fold's elements, read back from
    /// memory as one vector per component — a lanes fold's into its
    /// accumulators, a tree fold's element by element into the trip's
    /// group, combined as a tree by `combine_groups` as the copies' are.
    /// Returns the scans' elements, per scan (by `leaf_key`) and position
    /// of the trip, for their steps after the vector step (`run_loop`).
    fn combine_simd(&mut self, nx: &mut NestCx<'ctx>) -> R<IndexMap<VarId, Vec<Vec<BasicValueEnum<'ctx>>>>> {
        let elems: Vec<(VarId, TripElems<'ctx>)> = nx.simd_elems.drain(..).collect();
        let mut scans = IndexMap::new();
        for (key, TripElems { k, kind, slots }) in elems {
            let mut vecs = vec![];
            for (slot, p) in slots {
                let v = self.b.build_load(vec_type(mem_ty(self.cx, p), k), slot, "trip_elems")?;
                v.as_instruction_value().expect("a load").set_alignment(trip_align(p, k)).expect("a load takes an alignment");
                let v = v.into_vector_value();
                vecs.push(if p == afc_ir::types::Prim::Bool {
                    let zero = self.cx.i8_type().vec_type(k).const_zero();
                    self.b.build_int_compare(IntPredicate::NE, v, zero, "b")?
                } else {
                    v
                });
            }
            if kind == TripKind::Lanes {
                self.add_to_lanes(key, vecs, nx)?;
                continue;
            }
            let mut each = vec![];
            for j in 0..k {
                let at = self.cx.i64_type().const_int(j as u64, false);
                each.push(vecs.iter().map(|v| self.b.build_extract_element(*v, at, "elem")).collect::<Result<Vec<_>, _>>()?);
            }
            if kind == TripKind::Tree {
                nx.groups.insert(key, each);
            } else {
                scans.insert(key, each);
            }
        }
        Ok(scans)
    }

    /// Steps a state that may still be empty (`NestCx::fresh`): while it
    /// is, the element `xs` becomes the state and `step` (the operator on
    /// the state and the element) is not run — it may fail on a value that
    /// is not there. Under a `mask` only a kept element counts.
    fn fresh_or(&mut self, key: VarId, slots: &[PointerValue<'ctx>], xs: &[BasicValueEnum<'ctx>], mask: Option<IntValue<'ctx>>, nx: &NestCx<'ctx>, step: &mut Step<'_, 'ctx, Self>) -> R<()> {
        let h = nx.fresh[&key];
        let has = self.b.build_load(self.cx.bool_type(), h, "has")?.into_int_value();
        let (go, first, join) = (self.new_block("step"), self.new_block("first"), self.new_block("stepped"));
        self.b.build_conditional_branch(has, go, first)?;
        let load = |g: &mut Self| -> R<Vec<BasicValueEnum<'ctx>>> { slots.iter().zip(xs).map(|(s, x)| g.b.build_load(x.get_type(), *s, "acc")).collect() };
        self.b.position_at_end(first);
        let old = load(self)?;
        for ((s, x), a) in slots.iter().zip(xs).zip(&old) {
            let v = match mask {
                Some(m) => self.b.build_select(m, *x, *a, "first")?,
                None => *x,
            };
            self.b.build_store(*s, v)?;
        }
        self.b.build_store(h, mask.unwrap_or(self.cx.bool_type().const_int(1, false)))?;
        self.b.build_unconditional_branch(join)?;
        self.b.position_at_end(go);
        let acc = load(self)?;
        let mut next = step(self, &acc)?;
        if let Some(m) = mask {
            for (n, a) in next.iter_mut().zip(&acc) {
                *n = self.b.build_select(m, *n, *a, "kept_acc")?;
            }
        }
        for (s, v) in slots.iter().zip(next) {
            self.b.build_store(*s, v)?;
        }
        self.b.build_unconditional_branch(join)?;
        self.b.position_at_end(join);
        Ok(())
    }

    /// The current element of array `v`: a temporary of this copy, or a load.
    fn element(&mut self, v: VarId, pos: &Pos<'ctx>, order: u32, nx: &NestCx<'ctx>, elems: &mut Elems<'ctx>) -> R<BasicValueEnum<'ctx>> {
        if let Some(e) = elems.vals.get(&(v, order)) {
            return Ok(*e);
        }
        let i = self.index(pos, order, self.f.rank(v), nx, elems)?;
        let x = self.load_at(v, nx.base[&v], i)?;
        if let Some(inst) = x.as_instruction_value() {
            self.scope(inst, pos, order, nx);
        }
        elems.vals.insert((v, order), x);
        Ok(x)
    }

    /// The row-major position a leaf of the given order visits, for arrays
    /// of rank `rank`: the copy's; its mirror (order 1 reverses a vector
    /// whole and a matrix's rows); or the position a label reads.
    fn index(&mut self, pos: &Pos<'ctx>, order: u32, rank: usize, nx: &NestCx<'ctx>, elems: &mut Elems<'ctx>) -> R<IntValue<'ctx>> {
        match (order, pos.last) {
            (0, _) | (1, None) => Ok(pos.i),
            (1, Some(last)) if rank <= 1 => self.b.build_int_sub(last, pos.i, "mirror"),
            (1, Some(_)) => {
                let (_, j, n) = *pos.loops.last().expect("a matrix's leaf runs inside its loops");
                let one = self.cx.i64_type().const_int(1, false);
                let back = self.b.build_int_sub(self.b.build_int_sub(n, one, "")?, j, "mirror_col")?;
                let row = self.b.build_int_sub(pos.i, j, "row_start")?;
                self.b.build_int_add(row, back, "mirror")
            }
            (label, _) => Ok(self.label_index(pos, label, nx, elems)?.0),
        }
    }

    /// One index per dimension of the position a leaf of rank `rank` visits.
    fn indices(&mut self, pos: &Pos<'ctx>, order: u32, rank: usize, nx: &NestCx<'ctx>, elems: &mut Elems<'ctx>) -> R<Vec<IntValue<'ctx>>> {
        if order >= 2 {
            return Ok(self.label_index(pos, order, nx, elems)?.1);
        }
        if rank <= 1 {
            return Ok(vec![self.index(pos, order, rank, nx, elems)?]);
        }
        // The last rank - 1 loops are the inner dimensions; the first is
        // row-major over every loop outside them (two in a cross's nest,
        // whose rows are the cross's positions).
        let first = pos.loops.len() - rank;
        let mut row = pos.loops[0].1;
        for (_, k, n) in &pos.loops[1..=first] {
            row = self.b.build_int_add(self.b.build_int_mul(row, *n, "")?, *k, "row")?;
        }
        let mut ix: Vec<IntValue<'ctx>> = std::iter::once(row).chain(pos.loops[first + 1..].iter().map(|(_, k, _)| *k)).collect();
        if order == 1 {
            let (_, j, n) = *pos.loops.last().unwrap();
            let one = self.cx.i64_type().const_int(1, false);
            *ix.last_mut().unwrap() = self.b.build_int_sub(self.b.build_int_sub(n, one, "")?, j, "mirror_col")?;
        }
        Ok(ix)
    }

    /// The position label `label` stands for in this copy (computed once,
    /// each index checked against its dimension before anything is
    /// evaluated there): row-major, and per dimension.
    fn label_index(&mut self, pos: &Pos<'ctx>, label: u32, nx: &NestCx<'ctx>, elems: &mut Elems<'ctx>) -> R<(IntValue<'ctx>, Vec<IntValue<'ctx>>)> {
        if let Some(k) = elems.idx.get(&label) {
            return Ok(k.clone());
        }
        let gi = self.labels.iter().find(|g| g.label == label).cloned().expect("loops::verify: a label without its gather");
        let dims = self.dims(gi.source)?;
        let ix = match &gi.index {
            LabelIndex::Arrays(arrays) => {
                let mut ix = vec![];
                for (d, a) in arrays.iter().enumerate() {
                    let k = self.element(*a, pos, gi.order, nx, elems)?.into_int_value();
                    let bad = self.b.build_int_compare(IntPredicate::UGE, k, dims[d], "out_of_range")?;
                    let dim = if arrays.len() > 1 { format!(" (dimension {})", d) } else { String::new() };
                    let msg = format!("{}: index out of range in gather '{}'{}", self.f.location(gi.span), gi.name, dim);
                    self.fail_if(bad, ERR_INDEX, &msg, Some(k), Some(dims[d]))?;
                    ix.push(k);
                }
                ix
            }
            // The transpose's own position, its two indices exchanged.
            LabelIndex::Transposed => {
                let mut own = self.indices(pos, gi.order, 2, nx, elems)?;
                own.reverse();
                own
            }
        };
        let mut k = self.cx.i64_type().const_zero();
        for (x, n) in ix.iter().zip(&dims) {
            let row = self.b.build_int_mul(k, *n, "row")?;
            k = self.b.build_int_add(row, *x, "at")?;
        }
        elems.idx.insert(label, (k, ix.clone()));
        Ok((k, ix))
    }

    fn body(&mut self, b: &Body, pos: &Pos<'ctx>, elems: &mut Elems<'ctx>, nx: &mut NestCx<'ctx>) -> R<()> {
        match b {
            Body::Before { first, then, .. } | Body::BeforeKeep { first, then, .. } | Body::Besides(first, then) => {
                self.body(first, pos, elems, nx)?;
                self.body(then, pos, elems, nx)
            }
            Body::Leaf(l, _) if nx.skip.contains(&leaf_key(l)) => Ok(()),
            Body::When { filter, then, .. } => match &**filter {
                Body::Leaf(l @ LoopBody::Filter { .. }, _) => self.filter(l, Some(then), pos, elems, nx),
                _ => unreachable!("loops::verify: When is guarded by a filter"),
            },
            Body::For(inner) if nx.rows.as_ref().is_some_and(|r| r.j == inner.index) => self.row_chunks(inner, pos, elems, nx),
            Body::For(inner) => {
                // State this loop owns for the inner one: set before it, read after.
                let owner = pos.loops.last().map(|(v, _, _)| *v);
                let owned = owned_by(&inner.body, owner);
                self.init_states(&owned, nx)?;
                self.run_loop(inner, Some(pos), nx)?;
                for l in &owned {
                    let vals = self.finish_state(l, nx)?;
                    let outs: Vec<VarId> = vals.iter().map(|(v, _)| *v).collect();
                    self.put(&outs, vals.into_iter().map(|(_, x)| x).collect(), pos, 0, elems, nx)?;
                }
                Ok(())
            }
            Body::Leaf(l @ LoopBody::Filter { .. }, _) => self.filter(l, None, pos, elems, nx),
            Body::Leaf(l, order) => self.leaf(l, *order, pos, elems, nx),
        }
    }

    fn leaf(&mut self, l: &LoopBody, o: Order, pos: &Pos<'ctx>, elems: &mut Elems<'ctx>, nx: &mut NestCx<'ctx>) -> R<()> {
        // What the first pass kept: loaded, not computed again.
        let outs = l.element_outs();
        if !outs.is_empty() && outs.iter().all(|v| matches!(nx.keep.get(v), Some((_, KeepMode::Load)))) {
            let i = self.index(pos, o, self.f.rank(outs[0]), nx, elems)?;
            let mut rs = vec![];
            for v in outs {
                let home = nx.keep[v].0;
                let x = self.load_at(*v, nx.base[&home], i)?;
                if let Some(inst) = x.as_instruction_value() {
                    self.scope(inst, pos, o, nx);
                }
                rs.push(x);
            }
            return self.put(outs, rs, pos, o, elems, nx);
        }
        match l {
            LoopBody::Filter { .. } => unreachable!(),
            LoopBody::OneToOne { reads, f, outs, .. } => {
                let args = reads.iter().map(|r| self.element(*r, pos, o, nx, elems)).collect::<R<Vec<_>>>()?;
                let rs = self.lambda(f, &args)?;
                self.put(outs, rs, pos, o, elems, nx)
            }
            LoopBody::FromIndex { f, outs, .. } => {
                let ix = self.indices(pos, o, self.f.rank(outs[0]), nx, elems)?;
                let args: Vec<BasicValueEnum> = ix.into_iter().map(|i| i.into()).collect();
                let rs = self.lambda(f, &args)?;
                self.put(outs, rs, pos, o, elems, nx)
            }
            LoopBody::Cross { first, second, outs, at, .. } => {
                // In its own nest, the two loops' indices (mirrored for
                // order 1); elsewhere the quotient and remainder of its position.
                let i64t = self.cx.i64_type();
                let find = |v: VarId| pos.loops.iter().find(|(x, _, _)| *x == v).map(|(_, k, _)| *k);
                let (i, j) = match (at.and_then(|(a, b)| Some((find(a)?, find(b)?))), o) {
                    (Some((i, j)), 0) => (i, j),
                    (Some((i, j)), 1) => {
                        let (nn, mm) = (self.size(first[0])?, self.size(second[0])?);
                        let one = i64t.const_int(1, false);
                        let i = self.b.build_int_sub(self.b.build_int_sub(nn, one, "")?, i, "row")?;
                        let j = self.b.build_int_sub(self.b.build_int_sub(mm, one, "")?, j, "col")?;
                        (i, j)
                    }
                    _ => {
                        let k = self.index(pos, o, 1, nx, elems)?;
                        let m = self.size(second[0])?;
                        (self.b.build_int_unsigned_div(k, m, "row")?, self.b.build_int_unsigned_rem(k, m, "col")?)
                    }
                };
                let mut rs = vec![];
                for (arrs, at) in [(first, i), (second, j)] {
                    for a in arrs {
                        rs.push(self.load_at(*a, nx.base[a], at)?);
                    }
                }
                self.put(outs, rs, pos, o, elems, nx)
            }
            LoopBody::Reverse { reads, outs, .. } => {
                // Output order o reads its input in the other order.
                let rs = reads.iter().map(|r| self.element(*r, pos, 1 - o, nx, elems)).collect::<R<Vec<_>>>()?;
                self.put(outs, rs, pos, o, elems, nx)
            }
            LoopBody::Gather { name, source, outs, .. } | LoopBody::Transpose { name, source, outs } => {
                // The label's position is where this gather (or transpose)
                // reads, checked; its source elements are either computed
                // there by fused producers or read from memory.
                let label = self.labels.iter().find(|g| g.name == *name).map(|g| g.label).expect("loops: a gather has its label");
                let k = self.label_index(pos, label, nx, elems)?.0;
                let mut rs = vec![];
                for src in source {
                    if let Some(v) = elems.vals.get(&(*src, label)) {
                        rs.push(*v);
                        continue;
                    }
                    rs.push(self.load_at(*src, nx.base[src], k)?);
                }
                self.put(outs, rs, pos, o, elems, nx)
            }
            LoopBody::Scatter { name, dest, src, dims, op, outs, span } => {
                // Skipped if a component of the index is negative; each
                // checked against its dimension; then row-major.
                let i64t = self.cx.i64_type();
                let mut ix = vec![];
                let mut skip = self.cx.bool_type().const_zero();
                for a in &src[..*dims] {
                    let x = self.element(*a, pos, o, nx, elems)?.into_int_value();
                    let neg = self.b.build_int_compare(IntPredicate::SLT, x, i64t.const_zero(), "skip")?;
                    skip = self.b.build_or(skip, neg, "skip")?;
                    ix.push(x);
                }
                // The values before the branch: they may be another leaf's too.
                let vals = src[*dims..].iter().map(|v| self.element(*v, pos, o, nx, elems)).collect::<R<Vec<_>>>()?;
                let upd = self.new_block(&format!("{}.update", name));
                let next = self.new_block(&format!("{}.next", name));
                self.b.build_conditional_branch(skip, next, upd)?;
                self.b.position_at_end(upd);
                let lens = self.dims(dest[0])?;
                let mut k = i64t.const_zero();
                for (d, (x, len)) in ix.iter().zip(&lens).enumerate() {
                    let bad = self.b.build_int_compare(IntPredicate::SGE, *x, *len, "out_of_range")?;
                    let dim = if *dims > 1 { format!(" (dimension {})", d) } else { String::new() };
                    let msg = format!("{}: index out of range in scatter '{}'{}", self.f.location(*span), name, dim);
                    self.fail_if(bad, ERR_INDEX, &msg, Some(*x), Some(*len))?;
                    let row = self.b.build_int_mul(k, *len, "row")?;
                    k = self.b.build_int_add(row, *x, "at")?;
                }
                let mut ptrs = vec![];
                for out in outs {
                    let t = mem_ty(self.cx, self.f.var(*out).ty.prim());
                    ptrs.push(unsafe { self.b.build_in_bounds_gep(t, nx.base[out], &[k], "s")? });
                }
                if let Some((own, flags)) = nx.partial.get(&leaf_key(l)).copied() {
                    // A partial destination's element holds nothing until
                    // the chunk first sets it (the operator may have no
                    // identity): then it takes the value.
                    let fp = unsafe { self.b.build_in_bounds_gep(self.cx.i8_type(), flags, &[k], "has")? };
                    let (check, set, update) = (self.new_block(&format!("{}.partial", name)), self.new_block(&format!("{}.first", name)), self.new_block(&format!("{}.combine", name)));
                    self.b.build_conditional_branch(own, check, update)?;
                    self.b.position_at_end(check);
                    let has = self.b.build_load(self.cx.i8_type(), fp, "has")?.into_int_value();
                    let empty = self.b.build_int_compare(IntPredicate::EQ, has, self.cx.i8_type().const_zero(), "empty")?;
                    self.b.build_conditional_branch(empty, set, update)?;
                    self.b.position_at_end(set);
                    for (ep, v) in ptrs.iter().zip(&vals) {
                        let m = self.to_mem(*v)?;
                        self.b.build_store(*ep, m)?;
                    }
                    self.b.build_store(fp, self.cx.i8_type().const_int(1, false))?;
                    self.b.build_unconditional_branch(next)?;
                    self.b.position_at_end(update);
                }
                self.combine_in_place(op, outs, &ptrs, vals)?;
                self.b.build_unconditional_branch(next)?;
                self.b.position_at_end(next);
                Ok(())
            }
            LoopBody::Scan { reads, .. } => {
                let xs = reads.iter().map(|r| self.element(*r, pos, o, nx, elems)).collect::<R<Vec<_>>>()?;
                if let Some((lane, k)) = pos.simd {
                    // In a SIMD trip the vector step only makes the
                    // elements; the scan steps through them after it.
                    return self.trip_elements(leaf_key(l), k, TripKind::Scan, reads, xs, lane, nx);
                }
                self.scan_step(l, o, xs, pos, elems, nx)
            }
            LoopBody::ManyToOne { reads, op, results, acc: how, .. } => {
                let key = leaf_key(l);
                let mut xs = vec![];
                for r in reads {
                    xs.push(self.element(*r, pos, o, nx, elems)?);
                }
                if let (Accumulate::Tree(k), Some((lane, _))) = (how, pos.simd) {
                    nx.tree_ops.entry(key).or_insert_with(|| (op.clone(), results.clone()));
                    return self.trip_elements(key, *k, TripKind::Tree, results, xs, lane, nx);
                }
                if let (Accumulate::Tree(_), true) = (how, pos.trip) {
                    nx.tree_ops.entry(key).or_insert_with(|| (op.clone(), results.clone()));
                    nx.groups.entry(key).or_default().push(xs);
                    return Ok(());
                }
                let f = self.f;
                let ids = pos.mask.and_then(|_| reorderable(op, &|v| f.var(v).ty.prim()));
                if let Accumulate::Lanes(k) = how {
                    // A skipped element counts as the identity.
                    if let (Some(m), Some(ids)) = (pos.mask, &ids) {
                        for (x, (_, c)) in xs.iter_mut().zip(ids) {
                            let id = self.konst(*c);
                            *x = self.b.build_select(m, *x, id, "kept_or_identity")?;
                        }
                    }
                    if let Some((lane, _)) = pos.simd {
                        return self.trip_elements(key, *k, TripKind::Lanes, results, xs, lane, nx);
                    }
                    if pos.trip {
                        nx.lane_groups.entry(key).or_default().push(xs);
                        return Ok(());
                    }
                    // Outside a trip (peeled or remaining positions): lane 0.
                    let slots = nx.lanes[&key].0.clone();
                    let zero = self.cx.i64_type().const_zero();
                    let mut vecs = vec![];
                    let mut args = vec![];
                    for (s, r) in slots.iter().zip(results) {
                        let vt = reg_ty(self.cx, self.f.var(*r).ty.prim()).vec_of(*k);
                        let v = self.b.build_load(vt, *s, "lanes")?.into_vector_value();
                        args.push(self.b.build_extract_element(v, zero, "lane0")?);
                        vecs.push(v);
                    }
                    args.extend(xs);
                    let rs = self.lambda(op, &args)?;
                    for ((s, v), x) in slots.iter().zip(vecs).zip(rs) {
                        let v = self.b.build_insert_element(v, x, zero, "lane0")?;
                        self.b.build_store(*s, v)?;
                    }
                    return Ok(());
                }
                let row = nx.states[&key][0].clone();
                if nx.fresh.contains_key(&key) {
                    // A later chunk's fold: its first element is its state.
                    if let (Some(m), Some(ids)) = (pos.mask, &ids) {
                        for (x, (_, c)) in xs.iter_mut().zip(ids) {
                            let id = self.konst(*c);
                            *x = self.b.build_select(m, *x, id, "kept_or_identity")?;
                        }
                    }
                    let mask = if ids.is_some() { None } else { pos.mask };
                    return self.fresh_or(key, &row, &xs, mask, nx, &mut |g, acc| {
                        let args: Vec<BasicValueEnum> = acc.iter().chain(&xs).copied().collect();
                        g.lambda(op, &args)
                    });
                }
                let mut args = vec![];
                for (r, slot) in results.iter().zip(&row) {
                    let t = reg_ty(self.cx, self.f.var(*r).ty.prim());
                    args.push(self.b.build_load(t, *slot, "acc")?);
                }
                let rs = match (pos.mask, ids) {
                    // A skipped element counts as the identity: the choice
                    // stays off the accumulator's chain.
                    (Some(m), Some(ids)) => {
                        for (x, (_, c)) in xs.iter_mut().zip(&ids) {
                            let id = self.konst(*c);
                            *x = self.b.build_select(m, *x, id, "kept_or_identity")?;
                        }
                        args.extend(xs);
                        self.lambda(op, &args)?
                    }
                    (Some(m), None) => {
                        let old = args.clone();
                        args.extend(xs);
                        let mut rs = self.lambda(op, &args)?;
                        for (r, a) in rs.iter_mut().zip(&old) {
                            *r = self.b.build_select(m, *r, *a, "kept_acc")?;
                        }
                        rs
                    }
                    _ => {
                        args.extend(xs);
                        self.lambda(op, &args)?
                    }
                };
                for (v, slot) in rs.iter().zip(&row) {
                    self.b.build_store(*slot, *v)?;
                }
                Ok(())
            }
        }
    }

    /// One step of a scan at `pos` on its elements `xs`: the state from
    /// the state and the elements, the output stored (what the copy of a
    /// trip, or a SIMD trip's steps after its vector step, run).
    fn scan_step(&mut self, l: &LoopBody, o: Order, xs: Vec<BasicValueEnum<'ctx>>, pos: &Pos<'ctx>, elems: &mut Elems<'ctx>, nx: &mut NestCx<'ctx>) -> R<()> {
        let LoopBody::Scan { dir, op, outs, .. } = l else { unreachable!("only scans step") };
        let slots = nx.states[&leaf_key(l)][0].clone();
        if nx.fresh.contains_key(&leaf_key(l)) {
            // A first pass's total: its outputs are skipped.
            let dir = *dir;
            return self.fresh_or(leaf_key(l), &slots, &xs, pos.mask, nx, &mut |g, acc| {
                let args: Vec<BasicValueEnum> = if dir == ScanKind::Right { xs.iter().chain(acc).copied().collect() } else { acc.iter().chain(&xs).copied().collect() };
                g.lambda(op, &args)
            });
        }
        let mut acc = vec![];
        for (r, slot) in outs.iter().zip(&slots) {
            let t = reg_ty(self.cx, self.f.var(*r).ty.prim());
            acc.push(self.b.build_load(t, *slot, "acc")?);
        }
        let args: Vec<BasicValueEnum> =
            if *dir == ScanKind::Right { xs.iter().chain(&acc).copied().collect() } else { acc.iter().chain(&xs).copied().collect() };
        let mut next = self.lambda(op, &args)?;
        if let Some(m) = pos.mask {
            // Under a branch-free filter a skipped element keeps the value.
            for (n, a) in next.iter_mut().zip(&acc) {
                *n = self.b.build_select(m, *n, *a, "kept_acc")?;
            }
        }
        for (v, slot) in next.iter().zip(&slots) {
            self.b.build_store(*slot, *v)?;
        }
        let out = if *dir == ScanKind::Exclusive { acc } else { next };
        self.put(outs, out, pos, o, elems, nx)
    }

    /// A filter: evaluates the predicate; a kept element is stored at the
    /// cursor if its array is manifest and `then` runs at the sub-rate
    /// position (the cursor), then the cursor advances. `Branch` puts that
    /// behind a branch; `Compact` stores unconditionally (the room is
    /// there), runs `then` with the predicate as its mask and advances the
    /// cursor by it.
    fn filter(&mut self, l: &LoopBody, then: Option<&Body>, pos: &Pos<'ctx>, elems: &mut Elems<'ctx>, nx: &mut NestCx<'ctx>) -> R<()> {
        let LoopBody::Filter { name, reads, p, outs, write, .. } = l else { unreachable!() };
        let i64t = self.cx.i64_type();
        let args = reads.iter().map(|r| self.element(*r, pos, 0, nx, elems)).collect::<R<Vec<_>>>()?;
        let mut keep = self.lambda(p, &args)?[0].into_int_value();
        if let Some(m) = pos.mask {
            keep = self.b.build_and(m, keep, "kept")?;
        }
        // Kept a vector at a time at the end of the trip (flush_compress);
        // a first pass, which stores nothing, only counts.
        if let (FilterWrite::Compress(_), true, false) = (write, pos.trip, nx.stores.is_empty()) {
            nx.compress_vals.entry(leaf_key(l)).or_insert_with(|| (l.clone(), vec![])).1.push((keep, args));
            return Ok(());
        }
        let cursor = nx.states[&leaf_key(l)][0][0];
        let j = self.b.build_load(i64t, cursor, "j")?.into_int_value();
        // At the sub-rate the position is the cursor (filters run in order).
        let limit = nx.limits.get(&leaf_key(l)).copied();
        // Branch-free, every copy of an unrolled trip runs the guarded work
        // (masked), so lane folds under it collect the trip's elements as
        // vectors like any other; behind a branch they cannot.
        let sub = |mask: Option<IntValue<'ctx>>| Pos { i: j, last: None, total: j, loops: pos.loops.clone(), lane: pos.lane, trip: pos.trip && mask.is_some(), simd: None, mask, mirrored: None, limit };
        // Values made under the guard are this sub-rate's own.
        let mut inner: Elems<'ctx> = Elems::default();
        if write.unconditional() {
            let at = sub(Some(keep));
            self.put(outs, args, &at, 0, &mut inner, nx)?;
            if let Some(t) = then {
                self.body(t, &at, &mut inner, nx)?;
            }
            let step = self.b.build_int_z_extend(keep, i64t, "step")?;
            let j1 = self.b.build_int_add(j, step, "j.next")?;
            self.b.build_store(cursor, j1)?;
            return Ok(());
        }
        let kept = self.new_block(&format!("{}.kept", name));
        let next = self.new_block(&format!("{}.next", name));
        self.b.build_conditional_branch(keep, kept, next)?;
        self.b.position_at_end(kept);
        let at = sub(None);
        self.put(outs, args, &at, 0, &mut inner, nx)?;
        if let Some(t) = then {
            self.body(t, &at, &mut inner, nx)?;
        }
        let j1 = self.b.build_int_add(j, i64t.const_int(1, false), "j.next")?;
        self.b.build_store(cursor, j1)?;
        self.b.build_unconditional_branch(next)?;
        self.b.position_at_end(next);
        Ok(())
    }

    /// At the end of an unrolled trip, each compressing filter keeps the
    /// trip's elements W lanes at a time: the lanes' predicates as a mask,
    /// each stored component compacted in a register, then stored at the
    /// cursor, which advances by the mask's count.
    ///
    /// AVX-512: `vcompresspd` and the like in their register form (the
    /// memory form is microcoded on Zen 4), written by a store masked to
    /// the kept lanes — only kept elements are written, so a resumed chunk
    /// needs no guard.
    ///
    /// AVX2: one `vpermd` moves the kept lanes to the front, and the whole
    /// vector is stored: its lanes past the count land in the room every
    /// filtered output has (the cursor is at most the trip's first
    /// position) and are overwritten later. Masked stores are slow there
    /// (`vmaskmovpd` on Zen 4: quadtree 132 ms against 42), so only a
    /// resumed chunk whose vector would reach past its limit, into the next
    /// chunk's elements, stores with a mask, behind a branch. (The same
    /// branch on AVX-512 made LLVM evaluate the predicates lane by lane:
    /// quadtree on two workers 67 ms against 37.)
    fn flush_compress(&mut self, nx: &mut NestCx<'ctx>) -> R<()> {
        let i64t = self.cx.i64_type();
        let vals: Vec<(VarId, (LoopBody, CompressLanes<'ctx>))> = nx.compress_vals.drain(..).collect();
        for (key, (l, lanes)) in vals {
            let LoopBody::Filter { outs, write: FilterWrite::Compress(w), .. } = &l else { unreachable!("only compressing filters collect lanes") };
            let w = *w as usize;
            let cursor = nx.states[&key][0][0];
            let limit = nx.limits.get(&key).copied();
            let mut j = self.b.build_load(i64t, cursor, "j")?.into_int_value();
            let bits = self.cx.custom_width_int_type(std::num::NonZeroU32::new(w as u32).expect("a compress width")).expect("a mask's integer type");
            let mask_t = self.cx.bool_type().vec_type(w as u32);
            for group in lanes.chunks(w) {
                let mut mask = mask_t.get_undef();
                for (k, (keep, _)) in group.iter().enumerate() {
                    mask = self.b.build_insert_element(mask, *keep, i64t.const_int(k as u64, false), "keeps")?;
                }
                let as_bits = self.b.build_bit_cast(mask, bits, "keep_bits")?.into_int_value();
                let count = self.call_intrinsic("llvm.ctpop", &[bits.into()], &[as_bits.into()], "kept")?.into_int_value();
                // The kept lanes: (1 << count) - 1, in 32 bits so that a
                // full group does not shift out.
                let wide = self.cx.i32_type();
                let n = self.b.build_int_z_extend(count, wide, "kept")?;
                let low = self.b.build_int_sub(self.b.build_left_shift(wide.const_int(1, false), n, "")?, wide.const_int(1, false), "")?;
                let low = self.b.build_int_truncate(low, bits, "")?;
                let kept_lanes = self.b.build_bit_cast(low, mask_t, "store_mask")?.into_vector_value();
                for (c, o) in outs.iter().enumerate() {
                    if !nx.stores.iter().any(|s| s.array == *o) {
                        continue;
                    }
                    let prim = self.f.var(*o).ty.prim();
                    let t = mem_ty(self.cx, prim);
                    let vt = match t {
                        BasicTypeEnum::FloatType(ft) => ft.vec_type(w as u32),
                        BasicTypeEnum::IntType(it) => it.vec_type(w as u32),
                        _ => unreachable!("arrays hold scalars"),
                    };
                    let mut v = vt.get_undef();
                    for (k, (_, xs)) in group.iter().enumerate() {
                        let x = self.to_mem(xs[c])?;
                        v = self.b.build_insert_element(v, x, i64t.const_int(k as u64, false), "lane")?;
                    }
                    let at = unsafe { self.b.build_in_bounds_gep(t, nx.base[o], &[j], "q")? };
                    let align = prim.bytes() as u32;
                    let masked = |g: &mut Self, packed: BasicValueEnum<'ctx>| -> R<()> {
                        let store = g.intrinsic("llvm.masked.store", &[vt.into(), at.get_type().into()]);
                        let align = g.cx.i32_type().const_int(align as u64, false);
                        g.b.build_call(store, &[packed.into(), at.into(), align.into(), kept_lanes.into()], "")?;
                        Ok(())
                    };
                    let whole = |g: &mut Self, packed: BasicValueEnum<'ctx>| -> R<()> {
                        g.b.build_store(at, packed)?.set_alignment(align).expect("a store takes an alignment");
                        Ok(())
                    };
                    if w as u64 * prim.bytes() == 64 {
                        let packed = self.call_intrinsic("llvm.x86.avx512.mask.compress", &[vt.into()], &[v.into(), vt.const_zero().into(), mask.into()], "compressed")?;
                        masked(self, packed)?;
                        continue;
                    }
                    let packed = self.permute_kept(v, as_bits, w, prim.bytes())?;
                    let Some(limit) = limit else {
                        whole(self, packed)?;
                        continue;
                    };
                    let end = self.b.build_int_add(j, i64t.const_int(w as u64, false), "vector_end")?;
                    let fits = self.b.build_int_compare(IntPredicate::SLE, end, limit, "in_chunk")?;
                    let (full, part, done) = (self.new_block("compress.whole"), self.new_block("compress.masked"), self.new_block("compress.stored"));
                    self.b.build_conditional_branch(fits, full, part)?;
                    self.b.position_at_end(full);
                    whole(self, packed)?;
                    self.b.build_unconditional_branch(done)?;
                    self.b.position_at_end(part);
                    masked(self, packed)?;
                    self.b.build_unconditional_branch(done)?;
                    self.b.position_at_end(done);
                }
                j = self.b.build_int_add(j, self.b.build_int_z_extend(count, i64t, "")?, "j.next")?;
            }
            self.b.build_store(cursor, j)?;
        }
        Ok(())
    }

    /// AVX2's compaction of a 256-bit vector: its kept lanes moved to the
    /// front by one `vpermd`, whose 32-bit lane indices come from a table
    /// by the predicates' mask (16 entries for 4 lanes of 8 bytes, 256 for
    /// 8 of 4).
    fn permute_kept(&mut self, v: inkwell::values::VectorValue<'ctx>, mask_bits: IntValue<'ctx>, w: usize, bytes: u64) -> R<BasicValueEnum<'ctx>> {
        let i32t = self.cx.i32_type();
        let idx_t = i32t.vec_type(8);
        let name = format!("afc.compress.{}x{}", w, bytes);
        let table = match self.m.get_global(&name) {
            Some(g) => g,
            None => {
                let per = 8 / w;
                let entries: Vec<inkwell::values::VectorValue<'ctx>> = (0..1u32 << w)
                    .map(|m| {
                        let kept: Vec<u32> = (0..w as u32).filter(|k| m >> k & 1 == 1).collect();
                        let lanes: Vec<inkwell::values::IntValue<'ctx>> = (0..w).flat_map(|k| {
                            let src = kept.get(k).copied().unwrap_or(0);
                            (0..per as u32).map(move |h| src * per as u32 + h)
                        }).map(|i| i32t.const_int(i as u64, false)).collect();
                        inkwell::types::VectorType::const_vector(&lanes)
                    })
                    .collect();
                let g = self.m.add_global(idx_t.array_type(entries.len() as u32), None, &name);
                g.set_initializer(&idx_t.const_array(&entries));
                g.set_constant(true);
                g.set_linkage(inkwell::module::Linkage::Private);
                g.set_alignment(32);
                g
            }
        };
        let i64t = self.cx.i64_type();
        let m = self.b.build_int_z_extend(mask_bits, i64t, "mask")?;
        let at = unsafe { self.b.build_in_bounds_gep(idx_t.array_type(1 << w), table.as_pointer_value(), &[i64t.const_zero(), m], "perm_at")? };
        let perm = self.b.build_load(idx_t, at, "perm")?;
        let as_i32 = self.b.build_bit_cast(v, idx_t, "lanes32")?;
        let moved = self.call_intrinsic("llvm.x86.avx2.permd", &[], &[as_i32.into(), perm.into()], "kept32")?;
        self.b.build_bit_cast(moved, v.get_type(), "compressed")
    }

    /// Elements per streaming vector store of an array: the widest vector
    /// of its type that divides the loop's unrolling.
    fn stream_width(&self, v: VarId, unroll: u32) -> u32 {
        let bytes = self.f.var(v).ty.prim().bytes() as u32;
        let mut w = (crate::vector_bits(self.opts) / 8 / bytes).max(1);
        while !unroll.is_multiple_of(w) {
            w /= 2;
        }
        w
    }

    /// Where the streaming version's aligned loop starts (how many
    /// positions to peel so the first streamed array is vector-aligned,
    /// at most the extent), and whether every streamed array is then
    /// aligned too.
    fn stream_alignment(&mut self, n: &LoopNest, nx: &NestCx<'ctx>, extent: IntValue<'ctx>) -> R<(IntValue<'ctx>, IntValue<'ctx>)> {
        let i64t = self.cx.i64_type();
        let streamed: Vec<VarId> = n.stores.iter().filter(|s| s.mode == StoreMode::Streaming).map(|s| s.array).collect();
        let addr = |g: &mut Self, v: VarId| g.b.build_ptr_to_int(nx.base[&v], i64t, "addr");
        let v0 = streamed[0];
        let e0 = self.f.var(v0).ty.prim().bytes();
        let vb0 = self.stream_width(v0, n.root.unroll) as u64 * e0;
        let a0 = addr(self, v0)?;
        let mis = self.b.build_and(a0, i64t.const_int(vb0 - 1, false), "misaligned")?;
        let gap = self.b.build_and(self.b.build_int_sub(i64t.const_int(vb0, false), mis, "")?, i64t.const_int(vb0 - 1, false), "gap")?;
        let peel = self.b.build_int_unsigned_div(gap, i64t.const_int(e0, false), "peel")?;
        let short = self.b.build_int_compare(IntPredicate::ULT, extent, peel, "short")?;
        let peel = self.b.build_select(short, extent, peel, "peel")?.into_int_value();
        let mut ok = self.b.build_int_compare(IntPredicate::EQ, self.b.build_and(a0, i64t.const_int(e0 - 1, false), "")?, i64t.const_zero(), "elem_aligned")?;
        for v in streamed {
            let e = self.f.var(v).ty.prim().bytes();
            let vb = self.stream_width(v, n.root.unroll) as u64 * e;
            let a = addr(self, v)?;
            let first = self.b.build_int_add(a, self.b.build_int_mul(peel, i64t.const_int(e, false), "")?, "first")?;
            let m = self.b.build_and(first, i64t.const_int(vb - 1, false), "")?;
            let aligned = self.b.build_int_compare(IntPredicate::EQ, m, i64t.const_zero(), "aligned")?;
            ok = self.b.build_and(ok, aligned, "aligned")?;
        }
        Ok((peel, ok))
    }

    /// Whether every streamed array lies clear of the arrays the loop
    /// reads, by 4 KiB aliasing: a load whose address matches a pending
    /// store's in the low 12 bits waits for that store, and a streaming
    /// store stays pending long. An output starting 1 ..
    /// `STREAM_ALIAS_WINDOW` bytes past an input, modulo 4 KiB, makes every
    /// later load of the input wait (measured on Zen: 3-15x slower than
    /// normal stores); 0 or farther costs nothing. Checked for inputs of
    /// the output's element width read forward, whose distance to it stays
    /// the same (docs/strategy.md, "Stores").
    fn stream_apart(&mut self, n: &LoopNest, nx: &NestCx<'ctx>) -> R<IntValue<'ctx>> {
        let i64t = self.cx.i64_type();
        let mut ok = self.cx.bool_type().const_all_ones();
        let streamed: Vec<VarId> = n.stores.iter().filter(|s| s.mode == StoreMode::Streaming).map(|s| s.array).collect();
        let mut inputs: Vec<VarId> = vec![];
        for l in n.root.body.leaves() {
            if matches!(l, LoopBody::Reverse { .. }) {
                continue;
            }
            for v in l.reads() {
                if nx.base.contains_key(v) && !inputs.contains(v) && !streamed.contains(v) {
                    inputs.push(*v);
                }
            }
        }
        for o in &streamed {
            let bytes = self.f.var(*o).ty.prim().bytes();
            for i in inputs.iter().filter(|i| self.f.var(**i).ty.prim().bytes() == bytes) {
                let (ao, ai) = (self.b.build_ptr_to_int(nx.base[o], i64t, "out")?, self.b.build_ptr_to_int(nx.base[i], i64t, "in")?);
                let d = self.b.build_and(self.b.build_int_sub(ao, ai, "")?, i64t.const_int(4095, false), "alias")?;
                let clear = self.b.build_or(
                    self.b.build_int_compare(IntPredicate::EQ, d, i64t.const_zero(), "")?,
                    self.b.build_int_compare(IntPredicate::UGE, d, i64t.const_int(STREAM_ALIAS_WINDOW, false), "")?,
                    "clear",
                )?;
                ok = self.b.build_and(ok, clear, "apart")?;
            }
        }
        Ok(ok)
    }

    /// At the end of a streaming trip: each streamed array's values, as
    /// aligned non-temporal vector stores from the trip's first position.
    fn flush_streams(&mut self, base: IntValue<'ctx>, nx: &mut NestCx<'ctx>) -> R<()> {
        let i64t = self.cx.i64_type();
        let vals: Vec<(VarId, Vec<BasicValueEnum<'ctx>>)> = nx.stream_vals.drain(..).collect();
        for (v, xs) in vals {
            let w = self.stream_width(v, xs.len() as u32) as usize;
            let t = mem_ty(self.cx, self.f.var(v).ty.prim());
            let bytes = self.f.var(v).ty.prim().bytes() as u32;
            for (c, chunk) in xs.chunks(w).enumerate() {
                let vt = match t {
                    BasicTypeEnum::FloatType(ft) => ft.vec_type(w as u32).as_basic_type_enum(),
                    BasicTypeEnum::IntType(it) => it.vec_type(w as u32).as_basic_type_enum(),
                    _ => unreachable!("arrays hold scalars"),
                };
                let mut vec = vt.into_vector_type().get_undef();
                for (j, x) in chunk.iter().enumerate() {
                    vec = self.b.build_insert_element(vec, *x, i64t.const_int(j as u64, false), "lane")?;
                }
                let at = self.b.build_int_add(base, i64t.const_int((c * w) as u64, false), "at")?;
                let ep = unsafe { self.b.build_in_bounds_gep(t, nx.base[&v], &[at], "stream")? };
                let st = self.b.build_store(ep, vec)?;
                st.set_alignment(w as u32 * bytes).expect("a store takes an alignment");
                let one = self.cx.i32_type().const_int(1, false);
                let md = self.cx.metadata_node(&[one.into()]);
                st.set_metadata(md, self.cx.get_kind_id("nontemporal")).expect("a store takes metadata");
            }
        }
        Ok(())
    }

    /// Alias scopes for the two halves of a paired loop's arrays.
    fn half_scopes(&self, name: &str) -> [(inkwell::values::MetadataValue<'ctx>, inkwell::values::MetadataValue<'ctx>); 2] {
        let cx = self.cx;
        let id = format!("afc.{}.{}", self.f.name, name);
        let domain = cx.metadata_node(&[cx.metadata_string(&id).into()]);
        let scope = |h: &str| cx.metadata_node(&[cx.metadata_string(&format!("{}.{}", id, h)).into(), domain.into()]);
        let (lo, hi) = (scope("lower"), scope("upper"));
        let list = |m: inkwell::values::MetadataValue<'ctx>| cx.metadata_node(&[m.into()]);
        [(list(lo), list(hi)), (list(hi), list(lo))]
    }

    /// In a paired loop, says which half of its array an access touches.
    fn scope(&self, inst: inkwell::values::InstructionValue<'ctx>, pos: &Pos<'ctx>, order: u32, nx: &NestCx<'ctx>) {
        use inkwell::values::InstructionOpcode;
        // A bool element is its byte compared with zero: scope the load.
        let inst = match inst.get_opcode() {
            InstructionOpcode::ICmp => match inst.get_operand(0).and_then(|o| match o { inkwell::values::Operand::Value(v) => v.as_instruction_value(), _ => None }) {
                Some(l) => l,
                None => return,
            },
            _ => inst,
        };
        if !matches!(inst.get_opcode(), InstructionOpcode::Load | InstructionOpcode::Store) {
            return;
        }
        if let (Some(halves), Some(mirrored)) = (&nx.halves, pos.mirrored) {
            let upper = mirrored != (order == 1);
            let (own, other) = halves[upper as usize];
            let _ = inst.set_metadata(own, self.cx.get_kind_id("alias.scope"));
            let _ = inst.set_metadata(other, self.cx.get_kind_id("noalias"));
        }
    }

    /// Records a body's elements and stores those the nest writes.
    fn put(&mut self, outs: &[VarId], rs: Vec<BasicValueEnum<'ctx>>, pos: &Pos<'ctx>, order: u32, elems: &mut Elems<'ctx>, nx: &mut NestCx<'ctx>) -> R<()> {
        let rank = outs.first().map(|o| self.f.rank(*o)).unwrap_or(1);
        let i = self.index(pos, order, rank, nx, elems)?;
        for (o, v) in outs.iter().zip(rs) {
            elems.vals.insert((*o, order), v);
            match nx.keep.get(o) {
                Some(&(home, KeepMode::Save)) => {
                    let t = mem_ty(self.cx, self.f.var(*o).ty.prim());
                    let ep = unsafe { self.b.build_in_bounds_gep(t, nx.base[&home], &[i], "kept")? };
                    let m = self.to_mem(v)?;
                    let st = self.b.build_store(ep, m)?;
                    self.scope(st, pos, order, nx);
                    continue;
                }
                // Loaded from where it is stored: nothing to store.
                Some(&(home, KeepMode::Load)) if home == *o => continue,
                _ => {}
            }
            if let Some(s) = nx.stores.iter().find(|s| s.array == *o) {
                let t = mem_ty(self.cx, self.f.var(*o).ty.prim());
                let ep = unsafe { self.b.build_in_bounds_gep(t, nx.base[o], &[i], "q")? };
                let m = self.to_mem(v)?;
                if nx.streaming && s.mode == StoreMode::Streaming && pos.trip {
                    // Stored as part of the trip's vector (flush_streams).
                    nx.stream_vals.entry(*o).or_default().push(m);
                    continue;
                }
                let ep = match (pos.mask, pos.limit, nx.scratch) {
                    (Some(_), Some(limit), Some(scratch)) => {
                        let mine = self.b.build_int_compare(IntPredicate::SLT, pos.i, limit, "in_chunk")?;
                        self.b.build_select(mine, ep, scratch, "q")?.into_pointer_value()
                    }
                    _ => ep,
                };
                let st = self.b.build_store(ep, m)?;
                self.scope(st, pos, order, nx);
            }
        }
        Ok(())
    }
}
