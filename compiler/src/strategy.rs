//! The strategy pass: decides how each loop of the loop IR runs, and
//! records it there for the back end to obey (docs/strategy.md gives the
//! rules and the reasons):
//!
//! - how a filter writes: branch-free compaction when the work under its
//!   guard can run unguarded and is cheap, else a branch;
//! - what a picking fold carries: the position of its pick, not the
//!   picked components (`narrow.rs`);
//! - how a fold accumulates: K independent lanes for operators LANGUAGE.md
//!   lets afc reorder, trees of K consecutive elements (blocked partials in
//!   index order) for those it may only rebracket, one chain otherwise; a
//!   loop with such a fold is unrolled by K;
//! - which unrolled loops run each trip as one vector step (`simd`);
//! - which loops walk an array and its reverse together (paired);
//! - which stores stream past the cache (non-temporal), from what size;
//! - which nests run on all workers, in chunks of what size, and which
//!   loop of a matrix's nest takes the chunking when it has few rows;
//! - where results go: their room is checked as soon as every result's
//!   room is known, and each is written once, in place (LANGUAGE.md).

use afc_ir::labelled::{Builtin, Rhs, Stmt, VarId};
use afc_ir::loops::{self, reorderable, Accumulate, CombineOp, Body, FilterWrite, Function, Loop, LoopBody, Step};
use indexmap::IndexSet;
use std::collections::HashMap;

/// What the strategies need to know of the target.
#[derive(Clone, Debug)]
pub struct CpuModel {
    /// The vector width loops are planned for, in bits: 128 with SSE, 256
    /// with AVX, AVX2 and AVX-512 (`vector_bits` in the back end).
    pub vector_bits: u32,
    /// The last-level cache, in bytes: a nest whose outputs are larger
    /// writes them with streaming stores.
    pub llc_bytes: u64,
    /// The widest vectors the target compacts at a time, in bits: 512 with
    /// AVX-512F's compress instructions, 256 with AVX2's lane permutes, 0
    /// without (`compress W`).
    pub compress_bits: u32,
    /// The vector width loops calling vector math are vectorised for: 512
    /// with AVX-512F, where one call of glibc's 512-bit variant does the
    /// work of two 256-bit ones, else `vector_bits` (`vector math libmvec
    /// BITS`).
    pub math_bits: u32,
    /// The widest register a vector afc writes is held in, in bits: 512
    /// with AVX-512F (LLVM's preference for 256-bit vectors steers its
    /// vectorisers, not the vectors afc writes), else `vector_bits`.
    pub register_bits: u32,
    /// The widest registers whose vector divides and square roots are as
    /// fast per element as narrower ones': 256 on Intel's AVX-512 CPUs,
    /// where a 512-bit `vdivpd` or `vsqrtpd` does two 256-bit ones' work
    /// 6–8 % slower and LLVM's tuning prefers 256-bit vectors; else
    /// `register_bits` (a nest bound by them then has no narrower
    /// registers to gain by: `registers B`, docs/strategy.md "Register
    /// width").
    pub divide_bits: u32,
}

impl Default for CpuModel {
    fn default() -> Self {
        CpuModel { vector_bits: 128, llc_bytes: DEFAULT_LLC_BYTES, compress_bits: 0, math_bits: 128, register_bits: 128, divide_bits: 128 }
    }
}

/// The last-level cache assumed when compiling for another CPU or target.
pub const DEFAULT_LLC_BYTES: u64 = 32 << 20;

/// A core's share of a last-level cache (with its own L2) that the store
/// rule counts on: 1.5-4 MiB of L3 per core on current x86 servers. Linux
/// reports the whole cache, which on a large server (and in a virtual
/// machine on one) is shared with many more cores than this process runs
/// on: a 2-core VM of a Xeon reads 480 MiB there, yet streaming stores
/// already win from 4-8 MiB stored per call (docs/strategy.md, "Stores").
pub const LLC_PER_CPU_BYTES: u64 = 4 << 20;

/// The last-level cache the strategies assume: `--cache-size` when given;
/// for the host, its own capped at [`LLC_PER_CPU_BYTES`] per CPU this
/// process may run on; else [`DEFAULT_LLC_BYTES`].
pub fn llc_bytes(given: Option<u64>, native: bool) -> u64 {
    if let Some(b) = given {
        return b;
    }
    if !native {
        return DEFAULT_LLC_BYTES;
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let share = LLC_PER_CPU_BYTES.saturating_mul(cpus);
    host_llc_bytes().map_or(share.min(DEFAULT_LLC_BYTES), |b| b.min(share))
}

/// The host's last-level cache size, from Linux's sysfs.
pub fn host_llc_bytes() -> Option<u64> {
    let mut best = None;
    for i in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{}", i);
        let (Ok(level), Ok(size)) = (std::fs::read_to_string(format!("{}/level", dir)), std::fs::read_to_string(format!("{}/size", dir))) else { continue };
        let bytes = parse_size(size.trim())?;
        let level: u32 = level.trim().parse().ok()?;
        if best.map(|(l, _)| level > l).unwrap_or(true) {
            best = Some((level, bytes));
        }
    }
    best.map(|(_, b)| b)
}

/// A size in bytes as sysfs and `--cache-size` write it: digits, then
/// optionally `K`, `M` or `G` (binary multiples).
pub fn parse_size(s: &str) -> Option<u64> {
    let (digits, shift) = match s.as_bytes().last()? {
        b'K' | b'k' => (&s[..s.len() - 1], 10),
        b'M' | b'm' => (&s[..s.len() - 1], 20),
        b'G' | b'g' => (&s[..s.len() - 1], 30),
        _ => (s, 0),
    };
    digits.parse::<u64>().ok()?.checked_mul(1 << shift)
}

#[derive(Clone, Debug, Default)]
pub struct Config {
    pub cpu: CpuModel,
    /// Float folds keep one accumulator and index order (`--strict-fp`):
    /// results are bitwise the interpreter's.
    pub strict_fp: bool,
    /// `--fast-math`: float arithmetic may be reassociated and approximated.
    pub fast_math: bool,
    /// Whether the target has glibc's vector math library (x86-64 Linux).
    pub libmvec: bool,
    /// `--sequential`: no nest runs on more than the calling thread.
    pub sequential: bool,
    /// `--parallel-grain N`: every parallel nest's grain (tuning, and tests
    /// that cut small arrays into many chunks).
    pub grain: Option<u64>,
    /// `--two-pass=barrier`: two-pass nests run every chunk's first pass
    /// before any second pass, instead of chunk by chunk, each looking
    /// back for its start (the default).
    pub barrier: bool,
}

/// Work under a filter's guard beyond which a branch beats computing it for
/// every element: about two dozen simple operations per element.
const COMPACT_MAX_WORK: u32 = 24;

/// Vector registers' worth of accumulators a reduction keeps in flight:
/// two, enough to hide an add's latency behind a loop that also loads.
const ACCUMULATOR_VECTORS: u32 = 2;

/// The most lanes any loop is unrolled for.
const MAX_UNROLL: u32 = 32;

/// K for a fold (or a scan's SIMD trips) whose narrowest element has
/// `bytes` bytes: `ACCUMULATOR_VECTORS` vector registers' worth.
fn lanes_for(cfg: &Config, bytes: u32) -> u32 {
    lanes_in(cfg.cpu.vector_bits, bytes)
}

/// `ACCUMULATOR_VECTORS` registers of `bits` bits' worth of `bytes`-byte
/// elements.
fn lanes_in(bits: u32, bytes: u32) -> u32 {
    ((bits / (8 * bytes.max(1))).max(1) * ACCUMULATOR_VECTORS).clamp(2, MAX_UNROLL)
}

/// K for a fold of float adds or multiplies of values its loop computes:
/// on an AVX-512F target the back end holds a K-lane vector of 512 bits in
/// one register, so `lanes_for`'s two 256-bit vectors would be one chain of
/// 4-cycle adds; such a fold gets two 512-bit registers' worth
/// (docs/strategy.md, "Folds").
fn float_chain_lanes(cfg: &Config, bytes: u32) -> u32 {
    lanes_in(cfg.cpu.vector_bits.max(cfg.cpu.register_bits), bytes)
}

/// Decides every loop's strategies in `f`.
pub fn choose(f: &mut Function, cfg: &Config) {
    // Picking folds carry positions first: the strategies are chosen for
    // the state the loop really carries.
    crate::narrow::narrow(f);
    // Then branches become selects where both may run: the loops' workers
    // are then straight-line, which the vector rules below ask for.
    crate::if_convert::if_convert(f);
    let vars = f.vars.clone();
    let snapshot = f.clone();
    // Under --fast-math, loops calling exp, log, pow, sin, cos, … vectorise
    // through glibc's vector math (a few ulps less exact, which fast math
    // allows) in the widest vectors it has for the target; sqrt has its
    // own instruction. The function's loops are then vectorised that wide.
    let calls_math = snapshot.nests().iter().any(|n| n.root.body.leaves().iter().any(|l| l.lambda().map(|lam| uses_libm(&lam.body)).unwrap_or(false)));
    f.vector_math = (cfg.fast_math && cfg.libmvec && calls_math).then_some(loops::VectorMath::Libmvec { bits: cfg.cpu.math_bits });
    let vector_bits = if f.vector_math.is_some() { cfg.cpu.math_bits } else { cfg.cpu.vector_bits };
    let vector_math = f.vector_math.is_some();
    for n in f.nests_mut() {
        choose_loop(&snapshot, &mut n.root, cfg, &vars);
        stream(n, cfg, vector_bits, &vars);
        simd_trips(n, cfg, &vars);
        unroll_budget(&mut n.root);
        if !cfg.sequential {
            parallel(n, cfg, &vars);
            keeps(n, &vars);
            scan_totals(n, &vars);
        }
        registers(n, cfg, vector_math, &vars);
    }
    outline(f);
    // Nests neither run in chunks nor outlined are the function's own
    // code, which has one register width: unless all of them are
    // narrowed, none is.
    let mixed = {
        let nests = f.nests();
        nests.iter().any(|n| n.inline() && n.registers.is_some()) && nests.iter().any(|n| n.inline() && n.registers.is_none())
    };
    if mixed {
        for n in f.nests_mut().into_iter().filter(|n| n.inline()) {
            n.registers = None;
        }
    }
    unread_counts(f);
    place_results(f);
    let keep = f.made_results();
    let steps = std::mem::take(&mut f.steps);
    let steps = place_frees(f, steps, &keep);
    f.steps = steps;
}

/// Marks each filter count nothing after its nest reads (`count
/// unread`): the nest then does not make it, and a parallel nest keeps no
/// count per chunk — a cursor LLVM must otherwise keep live through the
/// whole loop, in every chunk, only to add it up after (docs/strategy.md,
/// "Counts nothing reads").
fn unread_counts(f: &mut Function) {
    let read = f.counts_read();
    for n in f.nests_mut() {
        n.root.body.visit_mut(&mut |b| {
            if let Body::Leaf(LoopBody::Filter { count, count_read, .. }, _) = b {
                *count_read = read.contains(count);
            }
        });
    }
}

/// Places the one check of the results' room right after the last step
/// that makes a room known (most rooms are parameters' sizes, known on
/// entry); results made before it — only possible when a result's size is
/// computed by the function — are staged and copied once all is checked,
/// as are results an extern call makes (they are in its buffers).
fn place_results(f: &mut Function) {
    use afc_ir::labelled::Operand;
    use loops::{SizeExpr, Step};
    let rooms: IndexSet<VarId> = f
        .results
        .iter()
        .filter_map(|l| match l.value {
            Operand::Var(v) if f.var(v).ty.is_array() => Some(v),
            _ => None,
        })
        .flat_map(|v| {
            // Its room: the capacity of its outermost dimension, its other
            // dimensions' sizes.
            let dims: Vec<SizeExpr> = match (f.capacity.get(&v), f.sizes.get(&v)) {
                (Some(c), Some(s)) => std::iter::once(*c).chain(s[1..].iter().copied()).collect(),
                (None, Some(s)) => s.clone(),
                (Some(c), None) => vec![*c],
                (None, None) => vec![],
            };
            if dims.is_empty() {
                return vec![v];
            }
            dims.into_iter()
                .filter_map(|d| match d {
                    SizeExpr::Dim(a, _) | SizeExpr::Scalar(Operand::Var(a)) => Some(a),
                    _ => None,
                })
                .collect()
        })
        .collect();
    let any_array = f.results.iter().any(|l| matches!(l.value, Operand::Var(v) if f.var(v).ty.is_array()));
    if !any_array {
        return;
    }
    let mut at = 0;
    for (i, s) in f.steps.iter().enumerate() {
        if f.step_defs(s).iter().any(|d| rooms.contains(d)) {
            at = i + 1;
        }
    }
    let made = f.made_results();
    // (Arrays calls and `if`s make are in buffers of their own.)
    let by_calls: Vec<VarId> = f
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Call(c) => Some(c.outputs.clone()),
            Step::If(b) => Some(b.outputs.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    f.staged = f.steps[..at].iter().flat_map(|s| f.step_defs(s)).chain(by_calls).filter(|d| made.contains(d)).collect();
    f.staged.dedup();
    f.steps.insert(at, Step::CheckRoom);
}

/// Frees each array the steps make right after the last step that names
/// it, unless it is kept (a result of the function, or of the branch these
/// steps are). An `if` branch frees what it makes and does not yield; what
/// a branch uses from outside is freed after the `if`.
fn place_frees(f: &Function, steps: Vec<Step>, keep: &IndexSet<VarId>) -> Vec<Step> {
    use afc_ir::labelled::Operand;
    let vars = |os: &[Operand]| -> Vec<VarId> { os.iter().filter_map(|o| if let Operand::Var(v) = o { Some(*v) } else { None }).collect() };
    let steps: Vec<Step> = steps
        .into_iter()
        .map(|s| match s {
            Step::If(mut b) => {
                for (body, results) in [(&mut b.then, &b.then_results), (&mut b.els, &b.els_results)] {
                    let mut k = keep.clone();
                    k.extend(vars(results));
                    *body = place_frees(f, std::mem::take(body), &k);
                }
                Step::If(b)
            }
            s => s,
        })
        .collect();
    // What these steps allocate: arrays nests store, calls and `if`s return.
    let mut made: Vec<(usize, VarId)> = vec![];
    for (i, s) in steps.iter().enumerate() {
        let arrays: Vec<VarId> = match s {
            Step::Loop(n) => n.store_arrays(),
            Step::Call(c) => c.outputs.clone(),
            Step::If(b) => b.outputs.clone(),
            _ => vec![],
        };
        made.extend(arrays.into_iter().filter(|v| f.var(*v).ty.is_array() && !keep.contains(v)).map(|v| (i, v)));
    }
    // The last step naming each array: one pass over the steps (a search
    // from the end per array was quadratic in a long function's nests).
    let mut last_named: std::collections::HashMap<VarId, usize> = std::collections::HashMap::new();
    for (i, s) in steps.iter().enumerate() {
        for v in f.step_arrays(s) {
            last_named.insert(v, i);
        }
    }
    let mut after: Vec<Vec<VarId>> = vec![vec![]; steps.len()];
    for (def, v) in made {
        let last = last_named.get(&v).copied().unwrap_or(def).max(def);
        if !after[last].contains(&v) {
            after[last].push(v);
        }
    }
    let mut out = vec![];
    for (s, frees) in steps.into_iter().zip(after) {
        out.push(s);
        if !frees.is_empty() {
            out.push(Step::Free(frees));
        }
    }
    out
}

fn uses_libm(b: &afc_ir::labelled::Block) -> bool {
    b.stmts.iter().any(|s| match s {
        Stmt::Assign { rhs: Rhs::Builtin(bi, _), .. } => matches!(bi, Builtin::Exp | Builtin::Log | Builtin::Pow | Builtin::Sin | Builtin::Cos | Builtin::Tan | Builtin::Erf),
        Stmt::Assign { .. } => false,
        Stmt::If { then, els, .. } => uses_libm(then) || uses_libm(els),
    })
}

/// Outputs of a memory-bound nest that are larger than the last-level
/// cache go out with streaming stores: they skip reading each line before
/// writing it, and do not evict the inputs. Only simple nests qualify: one
/// loop, every element produced in order at the loop's own rate (a
/// filter's cursor writes one line many times; leaves at a gather's label
/// do not count: what is stored is computed whole, at order 0, papers/002
/// (11)), little work per element
/// (a compute-bound loop gains nothing, and its loop vectoriser must stay
/// free). The loop is unrolled to whole vectors (of `vector_bits`, the
/// width the function's loops are vectorised for) of every stored type; the
/// back end peels to alignment and falls back to normal stores when the
/// outputs are not equally aligned. The peel depends on where the caller's
/// storage lies, so a nest whose float folds reassociate is not streamed:
/// its results would then depend on the outputs' alignment.
fn stream(n: &mut afc_ir::loops::LoopNest, cfg: &Config, vector_bits: u32, vars: &[afc_ir::labelled::VarInfo]) {
    if n.stores.is_empty() || n.root.paired {
        return;
    }
    let mut simple = true;
    n.root.body.visit(&mut |b| match b {
        Body::Leaf(l, o) => {
            if *o == 1 || matches!(l, LoopBody::Scatter { .. } | LoopBody::Cross { .. } | LoopBody::Filter { .. } | LoopBody::Scan { .. }) {
                simple = false;
            }
            if let LoopBody::ManyToOne { acc: Accumulate::Lanes(_) | Accumulate::Tree(_), results, .. } = l {
                if results.iter().any(|r| vars[r.0 as usize].ty.prim().is_float()) {
                    simple = false;
                }
            }
        }
        Body::When { .. } | Body::For(_) => simple = false,
        _ => {}
    });
    if !simple || work(&n.root.body, COMPACT_MAX_WORK) > COMPACT_MAX_WORK {
        return;
    }
    let bytes: u64 = n.stores.iter().map(|s| vars[s.array.0 as usize].ty.prim().bytes()).sum();
    let widest = n.stores.iter().map(|s| (vector_bits / 8 / vars[s.array.0 as usize].ty.prim().bytes() as u32).max(1)).max().unwrap_or(1);
    let mut unroll = n.root.unroll.max(1);
    while !unroll.is_multiple_of(widest) {
        unroll *= 2;
    }
    if unroll > MAX_UNROLL {
        return;
    }
    n.root.unroll = unroll;
    visit_level_mut(&mut n.root.body, &mut |leaf| {
        if let LoopBody::ManyToOne { acc: Accumulate::Lanes(k) | Accumulate::Tree(k), .. } = leaf {
            *k = unroll;
        }
    });
    for s in &mut n.stores {
        s.mode = afc_ir::loops::StoreMode::Streaming;
    }
    n.streaming_from = Some(cfg.cpu.llc_bytes.div_ceil(bytes.max(1)));
}

/// Runs the trips of every unrolled loop whose body computes each
/// position apart from the others, branch-free (`loops::simd_blocker`), as
/// one vector step (`simd`): the back end emits the trip as a loop over its
/// K positions that LLVM's loop vectoriser takes whole, instead of K copies
/// of the body that its SLP vectoriser packs only in part (a fold of a
/// heavy map: three `sqrt`s and five divisions per element ran at 179 ms
/// for 2·10⁷ elements in copies, 64 ms as one step, the time of the map
/// alone; its arg-max, a tree, 140 ms). Each lane computes what its copy
/// did, so results are the same bits. docs/strategy.md, "SIMD trips".
fn simd_trips(n: &mut afc_ir::loops::LoopNest, cfg: &Config, vars: &[afc_ir::labelled::VarInfo]) {
    fn decide(n: &afc_ir::loops::LoopNest, l: &Loop, cfg: &Config, vars: &[afc_ir::labelled::VarInfo], out: &mut Vec<(VarId, u32)>) {
        // A loop stepping a scan (and no fold that unrolls it) is unrolled
        // for SIMD trips only, by what a fold of the scan's elements would be.
        let mut narrowest = None;
        visit_level(&l.body, false, &mut |leaf, _| {
            if let LoopBody::Scan { reads, .. } = leaf {
                for r in reads {
                    let b = vars[r.0 as usize].ty.prim().bytes() as u32;
                    narrowest = Some(narrowest.map_or(b, |n: u32| n.min(b)));
                }
            }
        });
        let k = match (l.unroll, narrowest) {
            (1, Some(b)) => lanes_for(cfg, b),
            (k, _) => k,
        };
        let free = if k == l.unroll {
            loops::simd_blocker(vars, n, l).is_none()
        } else {
            loops::simd_blocker(vars, n, &Loop { unroll: k, ..l.clone() }).is_none()
        };
        if free {
            out.push((l.index, k));
        }
        for il in l.body.inner_loops() {
            decide(n, il, cfg, vars, out);
        }
    }
    let mut simd = vec![];
    decide(n, &n.root, cfg, vars, &mut simd);
    let set = |l: &mut Loop| match simd.iter().find(|(i, _)| *i == l.index) {
        Some((_, k)) => {
            l.unroll = *k;
            l.simd = true;
        }
        None => l.simd = false,
    };
    set(&mut n.root);
    n.root.body.visit_mut(&mut |b| {
        if let Body::For(l) = b {
            set(l);
        }
    });
}

/// The most work (`work`'s operations) under filters' guards, and in
/// inner loops, that the unrolled trip of a loop whose copies are not one
/// vector step may hold. Such work is copied whole into every copy — LLVM
/// merges straight-line copies into vectors, not branches and loops — so
/// past it the copies leave the instruction caches and LLVM's passes grow
/// faster than the code. Over a nest of 200–300 fused filters, maps and
/// folds (`shapes.py filters`, `nested`; 400–690 guarded per element), 2
/// copies ran 1.5–2.9 times as fast as the 16 of a fold's lanes on
/// AVX-512, and the 300-combinator program compiled in 0.9 s instead of
/// 15; bodies of 30–40 ran fastest with 16 (docs/strategy.md,
/// "Unrolling").
const MAX_UNROLLED_WORK: u32 = 1024;

/// Halves the unrolling of each loop whose trips are copies of its body
/// (not `simd`) while the copies' guarded work is over
/// `MAX_UNROLLED_WORK`, keeping two (one copy was 1–23 % slower than two
/// on every body measured): its lanes and trees shrink with it, and a
/// filter compressing more lanes than are left compacts instead.
fn unroll_budget(l: &mut Loop) {
    if !l.simd && l.unroll > 2 {
        let copied = copied_work(&l.body, false);
        let mut k = l.unroll;
        while k > 2 && copied.saturating_mul(k) > MAX_UNROLLED_WORK {
            k /= 2;
        }
        if k != l.unroll {
            l.unroll = k;
            visit_level_mut(&mut l.body, &mut |leaf| match leaf {
                LoopBody::ManyToOne { acc: Accumulate::Lanes(j) | Accumulate::Tree(j), .. } => *j = k,
                LoopBody::Filter { write, .. } => {
                    if matches!(write, FilterWrite::Compress(c) if !k.is_multiple_of(*c)) {
                        *write = FilterWrite::Compact;
                    }
                }
                _ => {}
            });
        }
    }
    let mut inner = vec![];
    collect_inner(&mut l.body, &mut inner);
    for il in inner {
        unroll_budget(il);
    }
}

/// `work`'s count of what each copy of an unrolled trip holds whole: the
/// work under a filter's guard (`guarded`) and in inner loops.
fn copied_work(b: &Body, guarded: bool) -> u32 {
    match b {
        Body::Leaf(l, _) if guarded => leaf_work(l),
        Body::Leaf(..) => 0,
        Body::Before { first, then, .. } | Body::BeforeKeep { first, then, .. } | Body::Besides(first, then) => copied_work(first, guarded).saturating_add(copied_work(then, guarded)),
        Body::When { filter, then, .. } => copied_work(filter, guarded).saturating_add(copied_work(then, true)),
        Body::For(l) => copied_work(&l.body, true),
    }
}

/// Work (in `work`'s operations) a chunk of a parallel nest must hold to pay
/// for handing it to a worker: a fork and join of OpenMP's warm pool costs a
/// few microseconds, 2^17 simple operations some 30-60.
const CHUNK_WORK: u64 = 1 << 17;

/// Runs a nest on all workers unless a paired loop (or a scatter whose
/// partials cannot combine) ties it to the sequential order
/// (`loops::parallel_blocker`). Folds leave one partial result per chunk,
/// combined in index order, and scatters one partial destination; a nest
/// that carries a scan's value or a stored filter's cursor from chunk to
/// chunk runs in two passes (`loops::two_pass`): the first learns each
/// chunk's total, the second runs every chunk from the combination of the
/// totals before it. Its chunks hold
/// at least `CHUNK_WORK / work` innermost positions, between 256 and 65536:
/// below one chunk's worth the nest runs on the calling thread, at no more
/// cost than a call. Under `--strict-fp` a nest that folds, scans or
/// scatters floats stays sequential (its results are the interpreter's bits).
fn parallel(n: &mut afc_ir::loops::LoopNest, cfg: &Config, vars: &[afc_ir::labelled::VarInfo]) {
    // Chunks rebracket a fold, scan or scatter; --strict-fp keeps float ones in order.
    let float = |v: &VarId| vars[v.0 as usize].ty.prim().is_float();
    let strict = cfg.strict_fp
        && n.root.body.leaves().iter().any(|l| match l {
            LoopBody::Scatter { outs, .. } => outs.iter().any(float),
            LoopBody::Filter { .. } => false,
            l => l.state() == Some(None) && l.state_vars().iter().any(float),
        });
    if !strict && loops::parallel_blocker(vars, n).is_none() {
        let grain = cfg.grain.unwrap_or_else(|| (CHUNK_WORK / work(&n.root.body, u32::MAX).max(1) as u64).clamp(256, 65536));
        let partials = n.root.body.leaves().iter().any(|l| matches!(l, LoopBody::Scatter { .. }));
        let two_pass = loops::two_pass(n);
        let aligned = aligned_chunks(n, grain);
        n.parallel = Some(afc_ir::loops::Parallel { grain, aligned, two_pass, look_back: two_pass && !cfg.barrier, partials });
        if !two_pass && !partials {
            rows(n, cfg, vars);
        }
    }
}

/// The fewest nests a function must have for those on the calling thread
/// to be outlined (`outline`).
const OUTLINE_NESTS: usize = 4;

/// Outlines every nest that runs on the calling thread (`outlined`) in a
/// function of `OUTLINE_NESTS` nests or more. LLVM's time on a function
/// grows faster than its size, and the exported function holds every
/// nest's glue (sizes, allocations, checks, runtime calls) and the nests
/// that run in it: outlined, each is a function of its own, which the
/// codegen units spread over parts, and the exported function is glue,
/// compiled as at -O0. It costs a call per nest and per call of the
/// function, as a parallel nest's chunk does (docs/strategy.md,
/// "Outlined nests", gives the measurements).
fn outline(f: &mut Function) {
    if f.nests().len() < OUTLINE_NESTS {
        return;
    }
    for n in f.nests_mut() {
        if n.parallel.is_none() {
            n.outlined = true;
        }
    }
}

/// The least work (`work`'s count) of a map a two-pass nest keeps: about
/// two square roots or divisions per element. A lighter map is cheaper
/// to compute again than to store and load (next).
const KEEP_MIN_WORK: u32 = 8;

/// In a two-pass nest, the first pass keeps what it computes for the
/// second (`LoopNest::keeps`) instead of the second computing it again:
/// every array a map makes at the loop's positions for the first pass's
/// scans and filters, where it has a home (`loops::keep_blocker`) — the
/// array itself when the nest stores it, else the output of the scan that
/// reads it. A float scan runs its two passes even on one worker (so that
/// its bits do not depend on the number of workers), and each pass ran
/// the whole map: `scanl((+), 0.0, map(f, xs, ys))` with three `sqrt`s
/// and five divisions per element took 129 ms at 2·10⁷ on one worker
/// (64 sequential), 81 ms keeping the map; on two workers 65 → 41 ms.
/// A map of one multiply-add is not kept (`KEEP_MIN_WORK`): with the
/// first pass's totals in lanes (`scan_totals`) it took 25.8 ms computed
/// twice, 29.8 kept — keeping moves the write of the home's lines from
/// the second pass, where it hides behind the scan's chain, to the
/// first, which only streams its inputs. docs/strategy.md, "Keeping what
/// the first pass computed".
fn keeps(n: &mut afc_ir::loops::LoopNest, vars: &[afc_ir::labelled::VarInfo]) {
    if !n.parallel.is_some_and(|p| p.two_pass) {
        return;
    }
    let leaves: Vec<(LoopBody, u32)> = n.root.body.at_loop_rate().into_iter().map(|(l, o)| (l.clone(), o)).collect();
    for (maker, _) in &leaves {
        let Some(lam) = maker.lambda() else { continue };
        if !matches!(maker, LoopBody::OneToOne { .. } | LoopBody::FromIndex { .. }) || stmts_work(&lam.body.stmts) < KEEP_MIN_WORK {
            continue;
        }
        // Each array it makes: stored, or read by a scan whose output is.
        let home = |a: VarId| -> Option<VarId> {
            if n.stored(a) {
                return Some(a);
            }
            leaves.iter().find_map(|(l, _)| match l {
                LoopBody::Scan { reads, outs, state: None, .. } => reads.iter().zip(outs).find(|(r, _)| **r == a).map(|(_, w)| *w),
                _ => None,
            })
        };
        let Some(homes) = maker.array_outs().into_iter().map(|a| home(a).map(|h| afc_ir::loops::Keep { array: a, home: h })).collect::<Option<Vec<_>>>() else { continue };
        if homes.iter().any(|k| n.keeps.iter().any(|e| e.home == k.home)) {
            continue;
        }
        let before = n.keeps.len();
        n.keeps.extend(homes);
        if n.keeps[before..].iter().any(|k| loops::keep_blocker(vars, n, *k).is_some()) {
            n.keeps.truncate(before);
        }
    }
}

/// A two-pass nest's first pass folds each scan's elements into the
/// chunk's total in lanes of the root loop's K (`totals lanes K`) when the
/// scan's operator may be reordered (`loops::totals_blocker`): one chain
/// of dependent operations ran at the operator's latency, the scan's own
/// pace, so the first pass cost as much as the second even with nothing
/// to compute. A total then brackets its chunk's elements otherwise, so a
/// float scan's bits change with it — the same on any number of workers,
/// as before. docs/strategy.md, "Totals in lanes".
fn scan_totals(n: &mut afc_ir::loops::LoopNest, vars: &[afc_ir::labelled::VarInfo]) {
    let k = n.root.unroll;
    let lanes: Vec<VarId> = n
        .root
        .body
        .at_loop_rate()
        .into_iter()
        .filter(|(l, _)| matches!(l, LoopBody::Scan { .. }) && loops::totals_blocker(vars, n, l, k).is_none())
        .map(|(l, _)| l.element_outs()[0])
        .collect();
    n.root.body.visit_mut(&mut |b| {
        if let Body::Leaf(LoopBody::Scan { outs, totals, .. }, _) = b {
            if lanes.contains(&outs[0]) {
                *totals = Accumulate::Lanes(k);
            }
        }
    });
}

/// Chunks of whole `CHUNK_QUANTUM`s (`aligned`) for a nest that streams
/// (its peel to alignment is the whole loop's), and for a one-loop nest
/// that stores arrays position by position (no filter's kept elements, no
/// scatter's updates at data-dependent positions) in chunks no smaller
/// than that: a chunk starting mid-line writes two lines in part with each
/// vector store and runs remainder trips of its own. Black-Scholes on one
/// worker, `--fast-math`, n = 2·10⁷: 1.01-1.04 × `c_tuned` in chunks of
/// 78,125 positions (most starting mid-line), 0.99-1.00 in chunks of
/// 78,144. A nest that only reads keeps its exact chunks: dotp ran 5-8 %
/// faster with them starting mid-line. A nest of rows starts its chunks
/// wherever a row does, and a grain below the quantum (`--parallel-grain
/// 1`, for testing) keeps its exact chunks. docs/strategy.md, "Aligned
/// chunks".
fn aligned_chunks(n: &afc_ir::loops::LoopNest, grain: u64) -> bool {
    let one_loop = n.root.body.inner_loops().is_empty();
    let elsewhere = n.root.body.leaves().iter().any(|l| matches!(l, LoopBody::Filter { .. } | LoopBody::Scatter { .. }));
    n.streams() || (!n.stores.is_empty() && !elsewhere && one_loop && grain >= afc_ir::loops::CHUNK_QUANTUM)
}

/// A root loop of fewer positions than this hands its chunking to the loop
/// inside it (`parallel below`): with fewer rows than a many-core machine
/// has workers, chunks of whole rows leave workers idle (and one row runs
/// on one worker), while chunks of a row cost a fork and join per row.
const ROWS_BELOW: u64 = 16;

/// Marks the loop directly inside a parallel nest's root `parallel below
/// ROWS_BELOW` when it is the only one and its row-wise folds can combine
/// partial results (`loops::rows_blocker`): a matrix of few long rows then
/// runs each row in chunks. Under `--strict-fp` a row-wise fold of floats
/// keeps whole rows (chunks would rebracket it).
fn rows(n: &mut afc_ir::loops::LoopNest, cfg: &Config, vars: &[afc_ir::labelled::VarInfo]) {
    let float = |v: &VarId| vars[v.0 as usize].ty.prim().is_float();
    let index = {
        let [j] = loops::row_loops(&n.root.body)[..] else { return };
        let strict = cfg.strict_fp && j.body.leaves().iter().any(|l| l.state() == Some(Some(n.root.index)) && l.state_vars().iter().any(float));
        if j.paired || strict || loops::rows_blocker(vars, n, j).is_some() {
            return;
        }
        j.index
    };
    n.root.body.visit_mut(&mut |b| {
        if let Body::For(l) = b {
            if l.index == index {
                l.parallel_below = Some(ROWS_BELOW);
            }
        }
    });
}

fn choose_loop(f: &Function, l: &mut Loop, cfg: &Config, vars: &[afc_ir::labelled::VarInfo]) {
    let prim = |v: VarId| vars[v.0 as usize].ty.prim();
    // Filters first: whether their guarded work runs masked decides which
    // folds may use lanes under them. A filter with nothing under it has
    // only its own stores to do.
    l.body.visit_mut(&mut |b| {
        if let Body::Leaf(LoopBody::Filter { write, .. }, _) = b {
            *write = FilterWrite::Compact;
        }
    });
    l.body.visit_mut(&mut |b| {
        if let Body::When { filter, then, .. } = b {
            // (The cheap, bounded question first: asked of every filter of a
            // nest of thousands, each walking everything under it was
            // quadratic in the nesting.)
            let compact = work(then, COMPACT_MAX_WORK) <= COMPACT_MAX_WORK && unguarded_safe(f, then);
            if let Body::Leaf(LoopBody::Filter { write, .. }, _) = &mut **filter {
                *write = if compact { FilterWrite::Compact } else { FilterWrite::Branch };
            }
        }
    });
    // Folds stepping directly in this loop (inner loops decide their own).
    let mut wanted = compress(l, cfg, &prim);
    // A filter stepping here that compacts by permutes (AVX2) competes with
    // a picking tree for the shuffle ports, and one compacting an element
    // at a time keeps the loop scalar, where the tree's extra picks cost
    // more; AVX-512's compress instructions do neither (`picks_tree`).
    let mut contended = false;
    visit_level(&l.body, false, &mut |leaf, _| {
        if let LoopBody::Filter { write, .. } = leaf {
            contended |= !(cfg.cpu.compress_bits >= 512 && matches!(write, FilterWrite::Compress(_)));
        }
    });
    // What the loop computes per element: a fold of such values waits on
    // its adds, a fold of an array in memory on its loads.
    let made: std::collections::HashSet<VarId> = l.body.leaves().iter().flat_map(|x| x.element_outs().iter().copied()).collect();
    // By each fold's first result: a loop may hold thousands of folds.
    let mut plans: HashMap<VarId, Accumulate> = HashMap::new();
    visit_level(&l.body, false, &mut |leaf, guarded| {
        if let LoopBody::ManyToOne { op, reads, results, .. } = leaf {
            let float = results.iter().any(|r| prim(*r).is_float());
            let narrowest = results.iter().map(|r| prim(*r).bytes()).min().unwrap_or(8) as u32;
            let adds = float && reads.iter().any(|r| made.contains(r)) && reorderable(op, &prim).is_some_and(|ops| ops.iter().all(|(c, _)| matches!(c, CombineOp::Add | CombineOp::Mul)));
            let k = if adds { float_chain_lanes(cfg, narrowest) } else { lanes_for(cfg, narrowest) };
            let same_types = reads.len() == results.len() && reads.iter().zip(results).all(|(a, b)| prim(*a) == prim(*b));
            let how = if cfg.strict_fp && float {
                Accumulate::Chain
            } else if reorderable(op, &prim).is_some() {
                Accumulate::Lanes(k)
            } else if same_types && !guarded && (!chooses(op) || picks_tree(op, results.len(), contended, &prim)) {
                Accumulate::Tree(k)
            } else {
                Accumulate::Chain
            };
            if !matches!(how, Accumulate::Chain) {
                wanted = wanted.max(k);
            }
            plans.entry(results[0]).or_insert(how);
        }
    });
    l.unroll = if wanted > 1 { wanted } else { 1 };
    let k = l.unroll;
    visit_level_mut(&mut l.body, &mut |leaf| {
        if let LoopBody::ManyToOne { results, acc, .. } = leaf {
            if let Some(how) = plans.get(&results[0]) {
                *acc = match how {
                    Accumulate::Lanes(_) => Accumulate::Lanes(k),
                    Accumulate::Tree(_) => Accumulate::Tree(k),
                    Accumulate::Chain => Accumulate::Chain,
                };
            }
        }
    });
    l.paired = l.unroll == 1 && pairs(&l.body);
    // Inner loops.
    let mut inner: Vec<&mut Loop> = vec![];
    collect_inner(&mut l.body, &mut inner);
    for il in inner {
        choose_loop(f, il, cfg, vars);
    }
}

/// Vector compaction (`compress W`): on a target that compacts vectors
/// (AVX-512F, AVX2), each filter at the loop's own level with nothing fused
/// under it and not under another filter, its cursor kept per nest, whose
/// components are all of one 4- or 8-byte type, keeps W lanes of the
/// widest such vector at a time.
/// Returns the unrolling that needs (1 if none compresses).
fn compress(l: &mut Loop, cfg: &Config, prim: &dyn Fn(VarId) -> afc_ir::types::Prim) -> u32 {
    use afc_ir::types::Prim;
    fn free<'a>(b: &'a mut Body, out: &mut Vec<&'a mut LoopBody>) {
        match b {
            Body::Leaf(l, 0) => out.push(l),
            Body::Before { first, then, .. } | Body::BeforeKeep { first, then, .. } | Body::Besides(first, then) => {
                free(first, out);
                free(then, out);
            }
            _ => {}
        }
    }
    if cfg.cpu.compress_bits == 0 {
        return 1;
    }
    let mut leaves = vec![];
    free(&mut l.body, &mut leaves);
    let mut wanted = 1;
    for leaf in leaves {
        if let LoopBody::Filter { outs, write, state: None, .. } = leaf {
            let bytes: Vec<u32> = outs.iter().map(|o| prim(*o)).filter(|p| matches!(p, Prim::F64 | Prim::I64 | Prim::F32 | Prim::I32)).map(|p| p.bytes() as u32).collect();
            if *write == FilterWrite::Compact && bytes.len() == outs.len() && bytes.iter().all(|b| *b == bytes[0]) {
                let w = cfg.cpu.compress_bits / 8 / bytes[0];
                *write = FilterWrite::Compress(w);
                wanted = wanted.max(w);
            }
        }
    }
    wanted
}

/// Calls `g` on the leaves stepping directly in a loop's body (not inside
/// inner loops), with whether a filter guards them.
fn visit_level(b: &Body, guarded: bool, g: &mut dyn FnMut(&LoopBody, bool)) {
    match b {
        Body::Leaf(l, _) => g(l, guarded),
        Body::Before { first, then, .. } | Body::BeforeKeep { first, then, .. } | Body::Besides(first, then) => {
            visit_level(first, guarded, g);
            visit_level(then, guarded, g);
        }
        Body::When { filter, then, .. } => {
            visit_level(filter, guarded, g);
            visit_level(then, true, g);
        }
        Body::For(_) => {}
    }
}

fn visit_level_mut(b: &mut Body, g: &mut dyn FnMut(&mut LoopBody)) {
    match b {
        Body::Leaf(l, _) => g(l),
        Body::Before { first, then, .. } | Body::BeforeKeep { first, then, .. } | Body::Besides(first, then) | Body::When { filter: first, then, .. } => {
            visit_level_mut(first, g);
            visit_level_mut(then, g);
        }
        Body::For(_) => {}
    }
}

fn collect_inner<'a>(b: &'a mut Body, out: &mut Vec<&'a mut Loop>) {
    match b {
        Body::Leaf(..) => {}
        Body::Before { first, then, .. } | Body::BeforeKeep { first, then, .. } | Body::Besides(first, then) | Body::When { filter: first, then, .. } => {
            collect_inner(first, out);
            collect_inner(then, out);
        }
        Body::For(l) => out.push(l),
    }
}

/// Does an operator pick one of its operands (`if`, `select`), like an
/// arg-max? Such folds stay chains unless `picks_tree` says otherwise.
fn chooses(op: &afc_ir::labelled::Lambda) -> bool {
    fn block(b: &afc_ir::labelled::Block) -> bool {
        b.stmts.iter().any(|s| matches!(s, Stmt::If { .. } | Stmt::Assign { rhs: Rhs::Select(..), .. }))
    }
    block(&op.body)
}

/// Does a picking fold run faster as a tree? When it compares floats, no
/// filter steps in its loop but ones compressing with AVX-512 (`contended`
/// is false) and its state is at most `PICK_TREE_STATE` values
/// (docs/strategy.md, measured on this rule's five shapes): a float chain
/// waits for each element's compare (several cycles) before the next, and
/// LLVM cannot vectorise it; a group's tree runs as vector compares. An
/// integer chain's compare and conditional move take a cycle each, less
/// than the tree's extra picks; beside AVX2's compaction the tree's
/// shuffles compete with the compaction's permutes, and beside compaction
/// one element at a time the loop is scalar and the chain is cheaper.
fn picks_tree(op: &afc_ir::labelled::Lambda, state: usize, contended: bool, prim: &dyn Fn(VarId) -> afc_ir::types::Prim) -> bool {
    use afc_ir::labelled::Operand;
    let float = |o: &Operand| matches!(o, Operand::Var(v) if prim(*v).is_float());
    let compares_floats = |b: &afc_ir::labelled::Block| {
        b.stmts.iter().any(|s| matches!(s, Stmt::Assign { rhs: Rhs::Binary(c, x, y), .. } if c.is_comparison() && (float(x) || float(y))))
    };
    !contended && state <= PICK_TREE_STATE && compares_floats(&op.body)
}

/// The most values a picking fold's state may hold to run as a tree: each
/// of the group's K elements keeps them all in registers (measured: 2 and 3
/// gain; before positions were carried, filterMax's state of three doubles
/// beside its filter spilled at K = 8).
const PICK_TREE_STATE: usize = 3;

/// Can everything in `b` run for an element its guard skips: nothing that
/// can fail, nothing written at computed positions?
fn unguarded_safe(f: &Function, b: &Body) -> bool {
    let mut ok = true;
    b.visit(&mut |x| match x {
        Body::Leaf(l, _) if matches!(l, LoopBody::Gather { .. } | LoopBody::Scatter { .. } | LoopBody::Cross { .. }) || l.lambda().is_some_and(|lam| loops::block_fallible(&f.vars, &lam.body)) => ok = false,
        Body::For(_) => ok = false,
        _ => {}
    });
    ok
}

/// Holds a nest's vectors in the narrower registers that divide and take
/// square roots as fast per element (`registers B`, B the CPU model's
/// `divide_bits`) when those bound its time (`divider_bound`) — on Intel's
/// AVX-512 CPUs: a heavy map's fold and scan ran 7–8 % faster in 256-bit
/// registers, in cache and from memory. The plan is kept: the fold's 16
/// lanes in four 256-bit registers ran 99 ms against 110 ms in two
/// (heavyFold, 2·10⁷ elements, one worker). Not a nest compressing wider
/// vectors than B (the instruction is not split), nor one of a function
/// calling vector math (nor are its calls). docs/strategy.md, "Register
/// width".
fn registers(n: &mut afc_ir::loops::LoopNest, cfg: &Config, vector_math: bool, vars: &[afc_ir::labelled::VarInfo]) {
    let bits = cfg.cpu.divide_bits;
    let wide_compress = n.root.body.leaves().iter().any(|l| l.compress_bits(vars) > bits);
    n.registers = (bits < cfg.cpu.register_bits && !vector_math && !wide_compress && divider_bound(n, vars)).then_some(bits);
}

/// Other vector operations a nest may do per divide or square root and
/// still be bound by them: a 256-bit `vdivpd` occupies the divider for 8
/// cycles, in which the two vector ALU ports issue 16 operations.
const DIVIDE_SHARE: u32 = 16;

/// Whether a nest's time is its float divides' and square roots': at least
/// one per element, and `DIVIDE_SHARE` times as many of them as other
/// operations (`work`'s count, a math library call twenty). Integer
/// divides are not vectorised, whatever the registers.
fn divider_bound(n: &afc_ir::loops::LoopNest, vars: &[afc_ir::labelled::VarInfo]) -> bool {
    fn count(ss: &[Stmt], vars: &[afc_ir::labelled::VarInfo], divides: &mut u32, other: &mut u32) {
        for s in ss {
            match s {
                Stmt::Assign { dst, rhs: Rhs::Builtin(Builtin::Sqrt, _) | Rhs::Binary(afc_ir::ast::BinOp::Div, ..), .. } if vars[dst.0 as usize].ty.prim().is_float() => *divides = divides.saturating_add(1),
                Stmt::If { then, els, .. } => {
                    *other = other.saturating_add(1);
                    count(&then.stmts, vars, divides, other);
                    count(&els.stmts, vars, divides, other);
                }
                s => *other = other.saturating_add(stmts_work(std::slice::from_ref(s))),
            }
        }
    }
    let (mut divides, mut other) = (0u32, 0u32);
    for l in n.root.body.leaves() {
        other = other.saturating_add(1);
        if let Some(lam) = l.lambda() {
            count(&lam.body.stmts, vars, &mut divides, &mut other);
        }
    }
    divides > 0 && divides.saturating_mul(DIVIDE_SHARE) >= other
}

/// A rough count of the operations a body does per element: one per
/// statement, more for divisions and calls into the math library. Counts
/// no further once past `cap` (any answer over it says as much).
fn work(b: &Body, cap: u32) -> u32 {
    fn walk(b: &Body, cap: u32, total: &mut u32) {
        if *total > cap {
            return;
        }
        match b {
            Body::Leaf(l, _) => *total = total.saturating_add(leaf_work(l)),
            Body::Before { first, then, .. } | Body::BeforeKeep { first, then, .. } | Body::Besides(first, then) | Body::When { filter: first, then, .. } => {
                walk(first, cap, total);
                walk(then, cap, total);
            }
            Body::For(l) => walk(&l.body, cap, total),
        }
    }
    let mut total = 0;
    walk(b, cap, &mut total);
    total
}

/// `work`'s count for one leaf: one, and its worker's statements.
fn leaf_work(l: &LoopBody) -> u32 {
    1 + l.lambda().map(|lam| stmts_work(&lam.body.stmts)).unwrap_or(0)
}

/// `work`'s count for a lambda's statements.
pub(crate) fn stmts_work(ss: &[Stmt]) -> u32 {
    ss.iter()
        .map(|s| match s {
            Stmt::Assign { rhs: Rhs::Builtin(Builtin::Sqrt, _), .. } => 4,
            Stmt::Assign { rhs: Rhs::Builtin(b, _), .. } if b.float_only() && !matches!(b, Builtin::Floor | Builtin::Ceil | Builtin::Round) => 20,
            Stmt::Assign { rhs: Rhs::Binary(afc_ir::ast::BinOp::Div | afc_ir::ast::BinOp::Rem, ..), .. } => 4,
            Stmt::Assign { .. } => 1,
            Stmt::If { then, els, .. } => 1 + stmts_work(&then.stmts) + stmts_work(&els.stmts),
        })
        .sum()
}

/// Does a loop read some array both forwards and backwards, with nothing
/// that must visit positions in order? Then walking `i` and `n-1-i`
/// together loads each element once.
fn pairs(b: &Body) -> bool {
    let mut stateless = true;
    let mut reads: Vec<(VarId, u32)> = vec![];
    b.visit(&mut |x| match x {
        Body::Leaf(l, o) => match l {
            LoopBody::OneToOne { reads: rs, .. } if *o <= 1 => reads.extend(rs.iter().map(|r| (*r, *o))),
            LoopBody::Reverse { reads: rs, .. } if *o <= 1 => reads.extend(rs.iter().map(|r| (*r, 1 - *o))),
            LoopBody::FromIndex { .. } if *o <= 1 => {}
            _ => stateless = false,
        },
        Body::When { .. } | Body::For(_) => stateless = false,
        _ => {}
    });
    // Some array read in both orders (by each array's first order, not
    // every pair of reads: a loop may read one array thousands of times).
    let mut first: HashMap<VarId, u32> = HashMap::new();
    stateless && reads.iter().any(|(v, o)| *first.entry(*v).or_insert(*o) != *o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_sysfs_and_the_command_line_write_them() {
        assert_eq!(parse_size("491520K"), Some(480 << 20));
        assert_eq!(parse_size("16M"), Some(16 << 20));
        assert_eq!(parse_size("1g"), Some(1 << 30));
        assert_eq!(parse_size("4096"), Some(4096));
        for bad in ["", "K", "12X", "-1M", "1.5M", "99999999999999999999G"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_assumed_cache_is_given_capped_or_the_default() {
        assert_eq!(llc_bytes(Some(1 << 20), true), 1 << 20);
        assert_eq!(llc_bytes(None, false), DEFAULT_LLC_BYTES);
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
        assert!(llc_bytes(None, true) <= LLC_PER_CPU_BYTES * cpus);
    }
}
