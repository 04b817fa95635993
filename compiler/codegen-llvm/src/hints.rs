//! What afc tells LLVM about code whose shape the loop IR has already
//! decided, so that LLVM's optimiser spends no time undoing or redoing it
//! (docs/strategy.md, "Compile time"):
//!
//! - unrolling is the strategy's (`For … unroll K`): no loop afc emits is
//!   runtime-unrolled (LLVM would unroll a remainder of at most seven
//!   trips by four, and a loop with a branch in its body by two to eight,
//!   each with a prologue loop); a remainder, an alignment peel and a loop
//!   over chunks, which have fewer trips than one vector body, are neither
//!   unrolled nor vectorised. LLVM may still peel a loop over positions
//!   (the first trip of a chunk, where a picking fold's state is first
//!   set: without it the arg-max chain carries two more selects, 6 % in
//!   cache), fully unroll one of a constant count, and vectorise one the
//!   strategy left at one (maps rely on it);
//! - a SIMD trip (`For … unroll K simd`) is a loop over its K positions
//!   that the loop vectoriser is told to take whole, at width K and with
//!   no interleaving: one vector step, which later passes turn back into
//!   straight-line vector code (its trip count is one vector);
//! - a function whose positions all run in chunk functions or outlined
//!   nests (its own loops go over chunks only) is glue: what it runs, it
//!   runs once per call, so it is neither optimised nor given optimising
//!   instruction selection (`optnone`; much of it is a part compiled at
//!   -O0, units.rs). Its nests are separate functions, optimised in full.

use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::context::{AsContextRef, Context};
use inkwell::llvm_sys::core::{LLVMGetMDKindIDInContext, LLVMMDNodeInContext2, LLVMMDStringInContext2, LLVMMetadataAsValue, LLVMSetMetadata, LLVMValueAsMetadata};
use inkwell::llvm_sys::debuginfo::{LLVMMetadataReplaceAllUsesWith, LLVMTemporaryMDNode};
use inkwell::llvm_sys::prelude::LLVMMetadataRef;
use inkwell::values::{AsValueRef, FunctionValue, InstructionValue};

/// What the positions of a loop `counted` emits are, which says what LLVM
/// may still do with it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Trips {
    /// A parallel nest's chunks, in the function that runs the nest: at
    /// most `MAX_CHUNKS` trips per call. A function whose loops are all of
    /// this kind is glue. Neither unrolled nor vectorised.
    Chunks,
    /// Positions of a loop the strategy did not unroll: not
    /// runtime-unrolled; peeled, vectorised where LLVM finds it pays.
    Positions,
    /// The trips of a loop the strategy unrolled K times: not
    /// runtime-unrolled again; peeled where LLVM finds it pays.
    Unrolled,
    /// The positions left after an unrolled loop's trips, or peeled before
    /// its aligned ones: fewer than one trip, neither unrolled nor
    /// vectorised.
    Remainder,
    /// The K positions of one SIMD trip: vectorised at width K, whole.
    Lanes(u32),
}

/// `llvm.loop.unroll.runtime.disable`: no unrolling by a factor the trip
/// count need not be a multiple of (with a prologue or epilogue loop);
/// peeling stays allowed.
pub(crate) const RUNTIME_UNROLL_DISABLE: &str = "llvm.loop.unroll.runtime.disable";
/// `llvm.loop.unroll.disable`: no unrolling (nor peeling) of the loop.
pub(crate) const UNROLL_DISABLE: &str = "llvm.loop.unroll.disable";
/// `llvm.loop.vectorize.enable`: with false, no vector body.
pub(crate) const VECTORIZE_DISABLE: &str = "llvm.loop.vectorize.enable";

/// `llvm.loop.vectorize.width` K with `llvm.loop.vectorize.enable` true:
/// vectorise at this width.
pub(crate) const VECTORIZE_WIDTH: &str = "llvm.loop.vectorize.width";
/// `llvm.loop.interleave.count` 1: one vector body per trip.
pub(crate) const INTERLEAVE_COUNT: &str = "llvm.loop.interleave.count";

/// One loop hint: a flag, or a name with its operand.
#[derive(Clone, Copy)]
pub(crate) enum Hint {
    Flag(&'static str),
    Bool(&'static str, bool),
    Int(&'static str, u32),
}

/// The hints of a loop of this kind (`Trips`).
pub(crate) fn hints_for(trips: Trips) -> Vec<Hint> {
    match trips {
        Trips::Positions | Trips::Unrolled => vec![Hint::Flag(RUNTIME_UNROLL_DISABLE)],
        Trips::Remainder | Trips::Chunks => vec![Hint::Flag(UNROLL_DISABLE), Hint::Bool(VECTORIZE_DISABLE, false)],
        Trips::Lanes(k) => vec![Hint::Flag(UNROLL_DISABLE), Hint::Bool(VECTORIZE_DISABLE, true), Hint::Int(VECTORIZE_WIDTH, k), Hint::Int(INTERLEAVE_COUNT, 1)],
    }
}

/// Attaches loop metadata with `hints` to a loop's back edge: a node whose
/// first operand is itself, as LLVM requires of a loop's id (LangRef,
/// "llvm.loop"), made through a temporary node.
pub(crate) fn loop_hints(cx: &Context, back_edge: InstructionValue, hints: &[Hint]) {
    let c = cx.as_ctx_ref();
    let string = |s: &str| unsafe { LLVMMDStringInContext2(c, s.as_ptr().cast(), s.len()) };
    // SAFETY: every node is made in `cx`, which outlives the call; the
    // temporary node is replaced (and freed) before the id is used.
    unsafe {
        let temp = LLVMTemporaryMDNode(c, std::ptr::null_mut(), 0);
        let mut ops: Vec<LLVMMetadataRef> = vec![temp];
        for h in hints {
            let mut op = match *h {
                Hint::Flag(name) => vec![string(name)],
                Hint::Bool(name, b) => vec![string(name), LLVMValueAsMetadata(cx.bool_type().const_int(b as u64, false).as_value_ref())],
                Hint::Int(name, k) => vec![string(name), LLVMValueAsMetadata(cx.i32_type().const_int(k as u64, false).as_value_ref())],
            };
            ops.push(LLVMMDNodeInContext2(c, op.as_mut_ptr(), op.len()));
        }
        let id = LLVMMDNodeInContext2(c, ops.as_mut_ptr(), ops.len());
        LLVMMetadataReplaceAllUsesWith(temp, id);
        let kind = LLVMGetMDKindIDInContext(c, c"llvm.loop".as_ptr(), "llvm.loop".len() as u32);
        LLVMSetMetadata(back_edge.as_value_ref(), kind, LLVMMetadataAsValue(c, id));
    }
}

/// Marks `func` as glue: `optnone` (with the `noinline` it needs), so that
/// LLVM's passes skip it and its machine code is selected as at -O0.
pub(crate) fn mark_glue(cx: &Context, func: FunctionValue) {
    for name in ["noinline", "optnone"] {
        func.add_attribute(AttributeLoc::Function, cx.create_enum_attribute(Attribute::get_named_enum_kind_id(name), 0));
    }
}
