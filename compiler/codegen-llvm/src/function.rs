//! One exported function: entry checks, allocation, the loop nests, the
//! results, and the error path that frees what was allocated.
//!
//! Results go straight to their final storage when nothing can fail after
//! the entry checks and every size is known on entry; otherwise ("staged")
//! they are computed into afc's own buffers and copied into caller storage
//! only once everything has succeeded, so a failing call never touches the
//! caller's memory (LANGUAGE.md, run-time errors).

use crate::abi::{classify, classify_types, ParamPass};
use crate::hints::{hints_for, loop_hints, mark_glue, Trips};
use crate::Options;
use afc_ir::ast::{BinOp, UnOp};
use afc_ir::diag::Span;
use afc_ir::labelled::{Block, Builtin, Const, Lambda, Operand, Rhs, ScanKind, Stmt, VarId, VarTy};
use afc_ir::loops::{Body, Call, Function, LoopBody, LoopNest, SizeExpr, Step};

#[path = "nest.rs"]
mod nest;
use afc_ir::types::Prim;
use indexmap::IndexMap;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::basic_block::BasicBlock;
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::debug_info::{AsDIScope, DIFlags, DIFlagsConstants, DISubprogram, DebugInfoBuilder};
use inkwell::intrinsics::Intrinsic;
use inkwell::module::{Linkage, Module};
use inkwell::types::{BasicMetadataTypeEnum, BasicType, BasicTypeEnum, StructType};
use inkwell::values::{BasicMetadataValueEnum, BasicValue, BasicValueEnum, FunctionValue, InstructionValue, IntValue, PointerValue};
use inkwell::{FloatPredicate, IntPredicate};

type R<T> = Result<T, BuilderError>;

/// Error codes returned by exported functions (runtime-c/afc.h).
pub const ERR_INDEX: i32 = 1;
pub const ERR_DIV_ZERO: i32 = 2;
pub const ERR_SIZE_MISMATCH: i32 = 3;
pub const ERR_NEGATIVE_SIZE: i32 = 4;
pub const ERR_OUTPUT_TOO_SMALL: i32 = 5;
pub const ERR_OUT_OF_MEMORY: i32 = 6;
pub const ERR_EXTERN_RESULT: i32 = 7;
pub const ERR_RECURSION: i32 = 8;

struct Gen<'a, 'ctx> {
    cx: &'ctx Context,
    m: &'a Module<'ctx>,
    b: Builder<'ctx>,
    f: &'a Function,
    func: FunctionValue<'ctx>,
    opts: &'a Options,
    scalars: IndexMap<VarId, BasicValueEnum<'ctx>>,
    /// Arrays whose storage and extents are known on entry (parameters) or
    /// once an extern call returns them.
    params: IndexMap<VarId, (PointerValue<'ctx>, Vec<IntValue<'ctx>>)>,
    /// Data pointer of every array this function stores.
    slots: IndexMap<VarId, PointerValue<'ctx>>,
    /// What this function allocated and must free or hand over: a slot
    /// each, null while it holds nothing (`owned`, at the end).
    allocs: Vec<PointerValue<'ctx>>,
    /// The calls that free every slot's array (`afc_rt_free_owned`), where
    /// the function returns and where it fails; their arguments are set
    /// when the slots are known.
    releases: Vec<InstructionValue<'ctx>>,
    alloc_of: IndexMap<VarId, PointerValue<'ctx>>,
    code_slot: PointerValue<'ctx>,
    fail_bb: BasicBlock<'ctx>,
    entry_bb: BasicBlock<'ctx>,
    /// The gather labels of the nest being generated.
    labels: Vec<afc_ir::loops::GatherIndex>,
    /// The register width of the nest being generated (`registers B`):
    /// every function made for it gets it (`narrow_registers`).
    registers: Option<u32>,
    /// `-g`: the debug-info builder and this function's subprogram.
    debug: Option<(&'a DebugInfoBuilder<'ctx>, DISubprogram<'ctx>)>,
    /// Generating a chunk function (a parallel nest's, or an outlined
    /// nest's): what it reads of the function around it, and where its
    /// errors go.
    outline: Option<Outline<'ctx>>,
    /// A loop over positions has been emitted into this function (not only
    /// loops over a parallel nest's chunks): it is not glue (hints.rs).
    position_loops: bool,
}

/// A chunk function (a parallel nest's body or an outlined nest, nest.rs)
/// reads the values of the function that runs it: each value the chunk
/// uses is *taken* on first use. The body is generated twice: first to
/// learn what it takes (each taken value a load from a context of 8-byte
/// slots), then as a function with one parameter per value taken —
/// `noalias` on arrays, as the calling function's own parameters are, so
/// LLVM keeps vectorising — which a wrapper that loads the context calls
/// and inlines.
struct Outline<'ctx> {
    /// The first pass: where the context is, and a builder positioned
    /// before the chunk entry block's branch, for its loads.
    ctx: Option<(PointerValue<'ctx>, Builder<'ctx>)>,
    /// The second pass: each value taken in the first, and its parameter.
    params_of: IndexMap<BasicValueEnum<'ctx>, BasicValueEnum<'ctx>>,
    /// The calling function's values at the nest.
    scalars: IndexMap<VarId, BasicValueEnum<'ctx>>,
    params: IndexMap<VarId, (PointerValue<'ctx>, Vec<IntValue<'ctx>>)>,
    slots: IndexMap<VarId, PointerValue<'ctx>>,
    /// Each value taken (the caller's), its value in the chunk, and whether
    /// it is an array's storage; in order of first use.
    taken: std::cell::RefCell<IndexMap<BasicValueEnum<'ctx>, (BasicValueEnum<'ctx>, bool)>>,
    /// The chunk's `afc_rt_fault`: where its first error is recorded.
    fault: PointerValue<'ctx>,
}

/// A source file as debug info names it: its file name and its folder,
/// made absolute so a debugger finds it from anywhere.
/// -g: the subprogram of `func`, named `name`, at `span`'s line.
pub(crate) fn subprogram<'ctx>(dib: &DebugInfoBuilder<'ctx>, f: &Function, func: FunctionValue<'ctx>, name: &str, span: Span, local: bool, opts: &Options) -> DISubprogram<'ctx> {
    let (file, line, _) = split_location(f.location(span)).unwrap_or(("?", 0, 0));
    let (file, dir) = source_file(file);
    let difile = dib.create_file(&file, &dir);
    let ty = dib.create_subroutine_type(difile, None, &[], DIFlags::PUBLIC);
    let sp = dib.create_function(difile.as_debug_info_scope(), name, None, difile, line, ty, local, true, line, DIFlags::PUBLIC, opts.opt_level > 0);
    func.set_subprogram(sp);
    sp
}

pub(crate) fn source_file(file: &str) -> (String, String) {
    let path = std::fs::canonicalize(file).unwrap_or_else(|_| std::path::PathBuf::from(file));
    let name = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| file.to_string());
    let dir = path.parent().map(|d| d.display().to_string()).filter(|d| !d.is_empty());
    (name, dir.unwrap_or_else(|| std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_default()))
}

/// `FILE:LINE:COL` (a loop IR location) as its parts.
pub(crate) fn split_location(loc: &str) -> Option<(&str, u32, u32)> {
    let mut it = loc.rsplitn(3, ':');
    let col = it.next()?.parse().ok()?;
    let line = it.next()?.parse().ok()?;
    Some((it.next()?, line, col))
}

/// The descriptor of an array of rank `r`: `{ T *data; int64_t shape[r]; }`.
fn desc_ty<'ctx>(cx: &'ctx Context, r: usize) -> StructType<'ctx> {
    cx.struct_type(&[cx.ptr_type(Default::default()).into(), cx.i64_type().array_type(r as u32).into()], false)
}

fn rank_of(t: VarTy) -> usize {
    match t {
        VarTy::Array(r, _) => r as usize,
        VarTy::Scalar(_) => 0,
    }
}

/// The LLVM type of a C function with the export ABI: `int f(args…, outs…)`,
/// each argument passed as `classify_types` says.
fn c_fn_type<'ctx>(cx: &'ctx Context, tys: &[VarTy], ins: &[ParamPass], outs: usize) -> inkwell::types::FunctionType<'ctx> {
    let ptr = cx.ptr_type(Default::default());
    let mut arg_tys: Vec<inkwell::types::BasicMetadataTypeEnum> = vec![];
    for (ty, pass) in tys.iter().zip(ins) {
        match pass {
            ParamPass::Scalar => arg_tys.push(reg_ty(cx, ty.prim()).into()),
            ParamPass::Split => {
                arg_tys.push(ptr.into());
                arg_tys.push(cx.i64_type().into());
            }
            ParamPass::ByVal | ParamPass::OutPtr => arg_tys.push(ptr.into()),
        }
    }
    arg_tys.extend((0..outs).map(|_| inkwell::types::BasicMetadataTypeEnum::from(ptr)));
    cx.i32_type().fn_type(&arg_tys, false)
}

/// Keeps the vector variants `Gen::vector_variant` declared alive until
/// the loop vectoriser has seen them (`llvm.compiler.used`, as clang does
/// for `declare simd`); unused ones are dropped from the object file.
pub fn keep_vector_variants<'ctx>(cx: &'ctx Context, m: &Module<'ctx>) {
    let ptr = cx.ptr_type(Default::default());
    let used: Vec<PointerValue<'ctx>> = m.get_functions().filter(|f| f.get_name().to_bytes().starts_with(b"_ZGVe")).map(|f| f.as_global_value().as_pointer_value()).collect();
    if used.is_empty() {
        return;
    }
    let g = m.add_global(ptr.array_type(used.len() as u32), None, "llvm.compiler.used");
    g.set_linkage(Linkage::Appending);
    g.set_section(Some("llvm.metadata"));
    g.set_initializer(&ptr.const_array(&used));
}

pub fn emit<'ctx>(cx: &'ctx Context, m: &Module<'ctx>, f: &Function, opts: &Options, dib: Option<&DebugInfoBuilder<'ctx>>) -> R<()> {
    let (ins, outs) = classify(f);
    let tys: Vec<VarTy> = f.params.iter().map(|l| if let Operand::Var(v) = l.value { f.var(v).ty } else { unreachable!() }).collect();
    let fn_ty = c_fn_type(cx, &tys, &ins, outs.len());
    // A recursive function may have been declared by a caller emitted first.
    let func = match m.get_function(&f.name) {
        Some(g) => g,
        None => m.add_function(&f.name, fn_ty, None),
    };
    func.set_linkage(if f.exported { Linkage::External } else { Linkage::Internal });
    let kind = |n: &str| Attribute::get_named_enum_kind_id(n);
    func.add_attribute(AttributeLoc::Function, cx.create_enum_attribute(kind("nounwind"), 0));
    func.add_attribute(AttributeLoc::Function, cx.create_string_attribute("frame-pointer", "none"));

    let b = cx.create_builder();
    // -g: a subprogram at the function's line; every instruction gets the
    // line of the step it belongs to (a loop nest: its cluster's first
    // combinator), the function's line otherwise.
    let debug = dib.map(|dib| (dib, subprogram(dib, f, func, &f.name, f.span, !f.exported, opts)));
    let entry_bb = cx.append_basic_block(func, "entry");
    let body_bb = cx.append_basic_block(func, "start");
    let fail_bb = cx.append_basic_block(func, "fail");
    b.position_at_end(entry_bb);
    let code_slot = b.build_alloca(cx.i32_type(), "code")?;
    let mut g = Gen::new(cx, m, b, f, func, opts, code_slot, fail_bb, entry_bb, debug);
    g.vector_math_attributes(func);
    g.at(f.span);
    g.b.position_at_end(body_bb);

    // Parameters.
    let mut k = 0u32;
    for (leaf, pass) in f.params.iter().zip(&ins) {
        let Operand::Var(v) = leaf.value else { unreachable!() };
        let name = g.name(v);
        match pass {
            ParamPass::Scalar => {
                let p = func.get_nth_param(k).unwrap();
                p.set_name(&name);
                if f.var(v).ty.prim() == Prim::Bool {
                    func.add_attribute(AttributeLoc::Param(k), cx.create_enum_attribute(kind("zeroext"), 0));
                }
                g.scalars.insert(v, p);
                k += 1;
            }
            ParamPass::Split => {
                let data = func.get_nth_param(k).unwrap().into_pointer_value();
                data.set_name(&format!("{}.data", name));
                func.add_attribute(AttributeLoc::Param(k), cx.create_enum_attribute(kind("noalias"), 0));
                let len = func.get_nth_param(k + 1).unwrap().into_int_value();
                len.set_name(&format!("{}.len", name));
                g.params.insert(v, (data, vec![len]));
                k += 2;
            }
            ParamPass::ByVal => {
                let p = func.get_nth_param(k).unwrap().into_pointer_value();
                let r = rank_of(f.var(v).ty);
                func.add_attribute(AttributeLoc::Param(k), cx.create_type_attribute(kind("byval"), desc_ty(cx, r).into()));
                func.add_attribute(AttributeLoc::Param(k), cx.create_enum_attribute(kind("align"), 8));
                let (data, dims) = g.load_desc(p, r, &name)?;
                g.params.insert(v, (data, dims));
                k += 1;
            }
            ParamPass::OutPtr => unreachable!(),
        }
    }
    let out_ptrs: Vec<PointerValue> = (0..outs.len() as u32).map(|i| func.get_nth_param(k + i).unwrap().into_pointer_value()).collect();
    for (p, l) in out_ptrs.iter().zip(&f.results) {
        p.set_name(&l.c_name);
    }
    // Recursion is bounded (runtime-c/afc.h): every call counts on entry
    // and counts back on either way out.
    if f.recursive {
        let limit = cx.i64_type().const_int(afc_ir::interp::MAX_RECURSION as u64, false);
        let deep = g.b.build_call(g.runtime_fn("afc_rt_enter"), &[limit.into()], "deep")?.try_as_basic_value().basic().unwrap().into_int_value();
        let deep = g.b.build_int_compare(IntPredicate::NE, deep, cx.i32_type().const_zero(), "too_deep")?;
        let msg = format!("{}: recursion in '{}'", f.location(f.span), f.name);
        g.fail_if(deep, ERR_RECURSION, &msg, Some(limit), None)?;
    }

    // Entry checks: parameters' dimensions that must be equal.
    let describe = |d: &SizeExpr| match d {
        SizeExpr::Dim(v, k) if rank_of(f.var(*v).ty) > 1 => format!("dimension {} of '{}'", k, f.var(*v).name),
        SizeExpr::Dim(v, _) => format!("'{}'", f.var(*v).name),
        SizeExpr::Scalar(_) => unreachable!("loops::verify: entry checks compare parameters' dimensions"),
    };
    for group in &f.same_size {
        let first = g.size_expr(&group[0])?;
        for other in &group[1..] {
            let len = g.size_expr(other)?;
            let differ = g.b.build_int_compare(IntPredicate::NE, first, len, "differ")?;
            let what = if group.iter().all(|d| matches!(d, SizeExpr::Dim(v, _) if rank_of(f.var(*v).ty) == 1)) { "the sizes of parameters" } else { "the sizes of" };
            let msg = format!("{}: {} {} and {} must be equal", f.location(f.span), what, describe(&group[0]), describe(other));
            g.fail_if(differ, ERR_SIZE_MISMATCH, &msg, Some(first), Some(len))?;
        }
    }

    // Results (docs/abi.md): `check room` checks every array result's room
    // before anything is written to the caller's memory; from there on a
    // result is made in its final storage (the caller's, or one afc
    // allocates and hands over). A staged result is made in afc's buffer
    // and copied at the end; a parameter, or an array returned twice, is
    // copied too.
    let plan = result_plan(f);
    let mut out_data: IndexMap<usize, PointerValue> = IndexMap::new();
    for step in &f.steps {
        match step {
            Step::Stmt(_) | Step::Loop(_) | Step::Call(_) | Step::If(_) | Step::Free(_) => g.step(step)?,
            Step::CheckRoom => {
                for (k, r) in plan.iter().enumerate() {
                    if let Some(v) = r.array {
                        let (data, room) = g.load_out(out_ptrs[k], rank_of(f.var(v).ty))?;
                        let need = g.capacity(v)?;
                        g.check_room(data, room, need, &f.results[k].c_name)?;
                        out_data.insert(k, data);
                    }
                }
                for (k, r) in plan.iter().enumerate() {
                    if let (Some(v), true) = (r.array, r.owned) {
                        if !f.staged.contains(&v) && !g.slots.contains_key(&v) && f.nests().iter().any(|n| n.stored(v)) {
                            let bytes = g.cap_bytes(v)?;
                            let slot = g.alloc_or_use(out_data[&k], bytes, v)?;
                            g.slots.insert(v, slot);
                        }
                    }
                }
            }
        }
    }
    // Everything that can fail first (allocations for copies), then the
    // caller's descriptors, which a failing call leaves untouched.
    let mut finals: Vec<Option<(PointerValue, Vec<IntValue>)>> = vec![None; plan.len()];
    for (k, r) in plan.iter().enumerate() {
        let Some(v) = r.array else { continue };
        let data = out_data[&k];
        let dims = g.dims(v)?;
        let dst = if r.owned && !f.staged.contains(&v) {
            g.slots[&v]
        } else if r.owned {
            // Copy into the caller's storage, or hand our buffer over.
            let src = g.array_ptr(v)?;
            let bytes = g.bytes(v)?;
            g.copy_or_keep(data, src, bytes)?
        } else {
            let cap = g.cap_bytes(v)?;
            let dst = g.alloc_or_use(data, cap, v)?;
            let src = g.array_ptr(v)?;
            let bytes = g.bytes(v)?;
            g.b.build_memcpy(dst, 1, src, 1, bytes)?;
            dst
        };
        finals[k] = Some((dst, dims));
    }
    for (k, r) in plan.iter().enumerate() {
        if r.array.is_some() {
            let (dst, dims) = finals[k].clone().unwrap();
            g.store_desc(out_ptrs[k], dst, &dims)?;
        } else {
            let v = g.operand(&f.results[k].value);
            let v = g.to_mem(v)?;
            g.b.build_store(out_ptrs[k], v)?;
        }
    }
    // Hand over what the caller now owns, free the rest.
    let handed: Vec<PointerValue> = finals.iter().flatten().map(|(dst, _)| *dst).collect();
    g.free_all_but(&handed)?;
    if f.recursive {
        g.b.build_call(g.runtime_fn("afc_rt_leave"), &[], "")?;
    }
    g.b.build_return(Some(&cx.i32_type().const_zero()))?;

    g.b.position_at_end(fail_bb);
    g.free_all()?;
    if f.recursive {
        g.b.build_call(g.runtime_fn("afc_rt_leave"), &[], "")?;
    }
    let code = g.b.build_load(cx.i32_type(), code_slot, "code")?;
    g.b.build_return(Some(&code))?;

    g.b.position_at_end(entry_bb);
    g.gather_slots()?;
    g.b.build_unconditional_branch(body_bb)?;
    // Every position in chunk functions or outlined nests: what is left
    // here runs once per call (a recursive function's body runs once per
    // call too, but calls may be many).
    if !g.position_loops && !f.recursive && f.nests().iter().any(|n| !n.inline()) {
        mark_glue(cx, func);
    }
    // Nests neither run in chunks nor outlined are code of `f` itself; the
    // verifier has them agree on their width.
    if let Some(bits) = f.nests().iter().find(|n| n.inline()).and_then(|n| n.registers) {
        narrow_registers(cx, func, bits);
    }
    Ok(())
}

struct ResultPlan {
    array: Option<VarId>,
    /// The first result naming an array a node of this function produces:
    /// the node writes it in place; other array results are copies.
    owned: bool,
}

fn result_plan(f: &Function) -> Vec<ResultPlan> {
    let params: Vec<VarId> = f.params.iter().filter_map(|l| if let Operand::Var(v) = l.value { Some(v) } else { None }).collect();
    let mut seen = vec![];
    f.results
        .iter()
        .map(|l| match l.value {
            Operand::Var(v) if f.var(v).ty.is_array() => {
                let owned = !params.contains(&v) && !seen.contains(&v);
                seen.push(v);
                ResultPlan { array: Some(v), owned }
            }
            _ => ResultPlan { array: None, owned: false },
        })
        .collect()
}

fn reg_ty<'ctx>(cx: &'ctx Context, p: Prim) -> BasicTypeEnum<'ctx> {
    match p {
        Prim::Bool => cx.bool_type().into(),
        Prim::I32 => cx.i32_type().into(),
        Prim::I64 => cx.i64_type().into(),
        Prim::F32 => cx.f32_type().into(),
        Prim::F64 => cx.f64_type().into(),
    }
}

fn mem_ty<'ctx>(cx: &'ctx Context, p: Prim) -> BasicTypeEnum<'ctx> {
    match p {
        Prim::Bool => cx.i8_type().into(),
        _ => reg_ty(cx, p),
    }
}

impl<'a, 'ctx> Gen<'a, 'ctx> {
    /// A generator for `func` with nothing known yet.
    #[allow(clippy::too_many_arguments)]
    fn new(cx: &'ctx Context, m: &'a Module<'ctx>, b: Builder<'ctx>, f: &'a Function, func: FunctionValue<'ctx>, opts: &'a Options, code_slot: PointerValue<'ctx>, fail_bb: BasicBlock<'ctx>, entry_bb: BasicBlock<'ctx>, debug: Option<(&'a DebugInfoBuilder<'ctx>, DISubprogram<'ctx>)>) -> Self {
        Gen {
            cx,
            m,
            b,
            f,
            func,
            opts,
            scalars: IndexMap::new(),
            params: IndexMap::new(),
            slots: IndexMap::new(),
            allocs: vec![],
            releases: vec![],
            alloc_of: IndexMap::new(),
            code_slot,
            fail_bb,
            entry_bb,
            labels: vec![],
            registers: None,
            debug,
            outline: None,
            position_loops: false,
        }
    }

    fn name(&self, v: VarId) -> String {
        format!("{}_{}", self.f.var(v).name, v.0)
    }

    fn runtime_fn(&self, name: &str) -> FunctionValue<'ctx> {
        if let Some(f) = self.m.get_function(name) {
            return f;
        }
        let cx = self.cx;
        let ptr = cx.ptr_type(Default::default());
        let ty = match name {
            "afc_alloc" => ptr.fn_type(&[cx.i64_type().into()], false),
            "afc_free" => cx.void_type().fn_type(&[ptr.into()], false),
            "afc_rt_error" => cx.i32_type().fn_type(&[cx.i32_type().into(), ptr.into(), cx.i64_type().into(), cx.i64_type().into()], false),
            "afc_rt_enter" => cx.i32_type().fn_type(&[cx.i64_type().into()], false),
            "afc_rt_leave" => cx.void_type().fn_type(&[], false),
            "afc_rt_free_owned" => cx.void_type().fn_type(&[ptr.into(), cx.i64_type().into()], false),
            "afc_rt_free_owned_except" => cx.void_type().fn_type(&[ptr.into(), cx.i64_type().into(), ptr.into(), cx.i64_type().into()], false),
            "afc_rt_parallel" => cx.i32_type().fn_type(&[ptr.into(), ptr.into(), cx.i64_type().into(), cx.i64_type().into()], false),
            "afc_get_num_threads" => cx.i32_type().fn_type(&[], false),
            "afc_rt_in_order" => cx.i32_type().fn_type(&[ptr.into(), ptr.into(), cx.i64_type().into(), cx.i64_type().into()], false),
            "afc_rt_look_back" => cx.i32_type().fn_type(&[ptr.into(), ptr.into(), ptr.into(), ptr.into(), ptr.into(), ptr.into(), cx.i64_type().into(), cx.i64_type().into()], false),
            "afc_rt_parallel_until" => cx.i64_type().fn_type(&[ptr.into(), ptr.into(), cx.i64_type().into(), cx.i64_type().into(), ptr.into()], false),
            _ => unreachable!(),
        };
        let f = self.m.add_function(name, ty, Some(Linkage::External));
        let kind = Attribute::get_named_enum_kind_id;
        f.add_attribute(AttributeLoc::Function, cx.create_enum_attribute(kind("nounwind"), 0));
        if name == "afc_alloc" {
            f.add_attribute(AttributeLoc::Return, cx.create_enum_attribute(kind("noalias"), 0));
        }
        if name == "afc_rt_error" {
            f.add_attribute(AttributeLoc::Function, cx.create_enum_attribute(kind("cold"), 0));
        }
        f
    }

    fn libm_fn(&self, name: &str, p: Prim) -> FunctionValue<'ctx> {
        let full = if p == Prim::F32 { format!("{}f", name) } else { name.to_string() };
        if let Some(f) = self.m.get_function(&full) {
            return f;
        }
        let t = reg_ty(self.cx, p);
        let f = self.m.add_function(&full, t.fn_type(&[t.into()], false), Some(Linkage::External));
        f.add_attribute(AttributeLoc::Function, self.cx.create_enum_attribute(Attribute::get_named_enum_kind_id("nounwind"), 0));
        f
    }

    fn intrinsic(&self, name: &str, tys: &[BasicTypeEnum<'ctx>]) -> FunctionValue<'ctx> {
        Intrinsic::find(name).and_then(|i| i.get_declaration(self.m, tys)).unwrap_or_else(|| panic!("LLVM intrinsic {} missing", name))
    }

    /// Branches to the error path when `cond` holds.
    /// Fails with `rc` unless it is 0: the code a call (an extern, the
    /// runtime's run of a parallel loop) returned, its message already set.
    pub(crate) fn fail_on_code(&mut self, rc: IntValue<'ctx>, what: &str) -> R<()> {
        let failed = self.b.build_int_compare(IntPredicate::NE, rc, self.cx.i32_type().const_zero(), &format!("{}_failed", what))?;
        let (err, ok) = (self.cx.append_basic_block(self.func, &format!("{}_error", what)), self.cx.append_basic_block(self.func, &format!("{}_ok", what)));
        self.b.build_conditional_branch(failed, err, ok)?;
        self.b.position_at_end(err);
        self.b.build_store(self.code_slot, rc)?;
        self.b.build_unconditional_branch(self.fail_bb)?;
        self.b.position_at_end(ok);
        Ok(())
    }

    fn fail_if(&mut self, cond: IntValue<'ctx>, code: i32, msg: &str, a: Option<IntValue<'ctx>>, b: Option<IntValue<'ctx>>) -> R<()> {
        let err = self.cx.append_basic_block(self.func, "error");
        let ok = self.cx.append_basic_block(self.func, "ok");
        self.b.build_conditional_branch(cond, err, ok)?;
        self.b.position_at_end(err);
        let msg = self.b.build_global_string_ptr(msg, "msg")?.as_pointer_value();
        let i64t = self.cx.i64_type();
        if let Some(o) = &self.outline {
            // In a chunk: recorded in its fault ({code, where, a, b}); the
            // runtime reports the first failing chunk's on the caller's thread.
            let fault = o.fault;
            let i8t = self.cx.i8_type();
            let fields: [(u64, BasicValueEnum<'ctx>); 4] = [
                (0, self.cx.i32_type().const_int(code as u64, false).into()),
                (8, msg.into()),
                (16, a.unwrap_or(i64t.const_zero()).into()),
                (24, b.unwrap_or(i64t.const_zero()).into()),
            ];
            for (off, v) in fields {
                let p = unsafe { self.b.build_in_bounds_gep(i8t, fault, &[i64t.const_int(off, false)], "fault")? };
                self.b.build_store(p, v)?;
            }
            self.b.build_unconditional_branch(self.fail_bb)?;
            self.b.position_at_end(ok);
            return Ok(());
        }
        let args: Vec<BasicMetadataValueEnum> = vec![
            self.cx.i32_type().const_int(code as u64, false).into(),
            msg.into(),
            a.unwrap_or(i64t.const_zero()).into(),
            b.unwrap_or(i64t.const_zero()).into(),
        ];
        let c = self.b.build_call(self.runtime_fn("afc_rt_error"), &args, "code")?.try_as_basic_value().basic().unwrap();
        self.b.build_store(self.code_slot, c)?;
        self.b.build_unconditional_branch(self.fail_bb)?;
        self.b.position_at_end(ok);
        Ok(())
    }

    /// A pointer-sized slot in the entry block, null until allocated.
    fn new_alloc_slot(&mut self, v: Option<VarId>) -> R<PointerValue<'ctx>> {
        let name = v.map(|v| format!("{}.alloc", self.name(v))).unwrap_or_else(|| "alloc".into());
        let slot = self.entry_alloca(self.cx.ptr_type(Default::default()).into(), &name)?;
        self.allocs.push(slot);
        if let Some(v) = v {
            self.alloc_of.insert(v, slot);
        }
        Ok(slot)
    }

    fn alloc(&mut self, bytes: IntValue<'ctx>, v: VarId) -> R<PointerValue<'ctx>> {
        let slot = self.new_alloc_slot(Some(v))?;
        self.alloc_into(slot, bytes, v)
    }

    /// The caller's storage if it gave some, else a fresh allocation.
    fn alloc_or_use(&mut self, data: PointerValue<'ctx>, bytes: IntValue<'ctx>, v: VarId) -> R<PointerValue<'ctx>> {
        let have = self.b.build_is_not_null(data, "given")?;
        let given_bb = self.b.get_insert_block().unwrap();
        let alloc_bb = self.cx.append_basic_block(self.func, "alloc");
        let join = self.cx.append_basic_block(self.func, "join");
        self.b.build_conditional_branch(have, join, alloc_bb)?;
        self.b.position_at_end(alloc_bb);
        let p = self.alloc(bytes, v)?;
        let end = self.b.get_insert_block().unwrap();
        self.b.build_unconditional_branch(join)?;
        self.b.position_at_end(join);
        let phi = self.b.build_phi(self.cx.ptr_type(Default::default()), &format!("{}.data", self.name(v)))?;
        phi.add_incoming(&[(&data, given_bb), (&p, end)]);
        Ok(phi.as_basic_value().into_pointer_value())
    }

    /// Copies `src` into the caller's storage if it gave some; else keeps `src`.
    fn copy_or_keep(&mut self, data: PointerValue<'ctx>, src: PointerValue<'ctx>, bytes: IntValue<'ctx>) -> R<PointerValue<'ctx>> {
        let have = self.b.build_is_not_null(data, "given")?;
        let copy_bb = self.cx.append_basic_block(self.func, "copy");
        let keep_bb = self.b.get_insert_block().unwrap();
        let join = self.cx.append_basic_block(self.func, "join");
        self.b.build_conditional_branch(have, copy_bb, join)?;
        self.b.position_at_end(copy_bb);
        self.b.build_memcpy(data, 1, src, 1, bytes)?;
        self.b.build_unconditional_branch(join)?;
        self.b.position_at_end(join);
        let phi = self.b.build_phi(self.cx.ptr_type(Default::default()), "result")?;
        phi.add_incoming(&[(&data, copy_bb), (&src, keep_bb)]);
        Ok(phi.as_basic_value().into_pointer_value())
    }

    /// Frees arrays nothing names any more: their owner slots are emptied,
    /// so the error path and the end free them no second time.
    fn free(&mut self, vs: &[VarId]) -> R<()> {
        let ptr = self.cx.ptr_type(Default::default());
        for v in vs {
            let Some(&slot) = self.alloc_of.get(v) else { continue };
            let p = self.b.build_load(ptr, slot, "dead")?;
            self.b.build_call(self.runtime_fn("afc_free"), &[p.into()], "")?;
            self.b.build_store(slot, ptr.const_null())?;
            self.slots.swap_remove(v);
        }
        Ok(())
    }

    /// Frees every array a slot holds (`owned` is filled in at the end).
    fn free_all(&mut self) -> R<()> {
        let ptr = self.cx.ptr_type(Default::default());
        let call = self.b.build_call(self.runtime_fn("afc_rt_free_owned"), &[ptr.const_null().into(), self.cx.i64_type().const_zero().into()], "")?;
        self.releases.push(call.try_as_basic_value().unwrap_instruction());
        Ok(())
    }

    /// Frees every array a slot holds but those handed to the caller, in
    /// one call: which slot holds a result is known only at run time (a
    /// result may be the caller's storage, a fresh block or a buffer kept),
    /// and comparing each result with each slot in code made the exit
    /// block results × slots long — 72,000 instructions at 400
    /// combinators, on which LLVM's SLP vectoriser went quadratic.
    fn free_all_but(&mut self, handed: &[PointerValue<'ctx>]) -> R<()> {
        if handed.is_empty() {
            return self.free_all();
        }
        let (cx, ptr) = (self.cx, self.cx.ptr_type(Default::default()));
        let ty = ptr.array_type(handed.len() as u32);
        let kept = self.entry_alloca(ty.into(), "handed")?;
        for (k, p) in handed.iter().enumerate() {
            let at = unsafe { self.b.build_in_bounds_gep(ty, kept, &[cx.i64_type().const_zero(), cx.i64_type().const_int(k as u64, false)], "handed")? };
            self.b.build_store(at, *p)?;
        }
        let args = [ptr.const_null().into(), cx.i64_type().const_zero().into(), kept.into(), cx.i64_type().const_int(handed.len() as u64, false).into()];
        let call = self.b.build_call(self.runtime_fn("afc_rt_free_owned_except"), &args, "")?;
        self.releases.push(call.try_as_basic_value().unwrap_instruction());
        Ok(())
    }

    /// Puts the slots in one array, `owned`, that the calls of `free_all`
    /// take. Kept in memory (its address escapes), the slots are not
    /// promoted to registers: as values, each would be live from the
    /// entry to every exit, and a phi per slot at the shared error exit
    /// would take one value per way there — quadratic in the steps, and
    /// most of LLVM's time on a function of hundreds of nests.
    fn gather_slots(&mut self) -> R<()> {
        let (cx, ptr) = (self.cx, self.cx.ptr_type(Default::default()));
        let n = self.allocs.len();
        if n == 0 {
            for c in std::mem::take(&mut self.releases) {
                c.erase_from_basic_block();
            }
            return Ok(());
        }
        let ty = ptr.array_type(n as u32);
        let owned = self.entry_alloca(ty.into(), "owned")?;
        for (k, a) in std::mem::take(&mut self.allocs).into_iter().enumerate() {
            let at = unsafe { self.b.build_in_bounds_gep(ty, owned, &[cx.i64_type().const_zero(), cx.i64_type().const_int(k as u64, false)], "slot")? };
            self.b.build_store(at, ptr.const_null())?;
            a.replace_all_uses_with(at);
            a.as_instruction().expect("an alloca").erase_from_basic_block();
        }
        for c in &self.releases {
            c.set_operand(0, owned);
            c.set_operand(1, cx.i64_type().const_int(n as u64, false));
        }
        Ok(())
    }

    /// A descriptor's data pointer and its `r` extents.
    fn load_desc(&mut self, desc: PointerValue<'ctx>, r: usize, name: &str) -> R<(PointerValue<'ctx>, Vec<IntValue<'ctx>>)> {
        let cx = self.cx;
        let data = self.b.build_load(cx.ptr_type(Default::default()), desc, &format!("{}.data", name))?.into_pointer_value();
        let mut dims = vec![];
        for d in 0..r {
            let sp = unsafe { self.b.build_in_bounds_gep(cx.i8_type(), desc, &[cx.i64_type().const_int(8 + 8 * d as u64, false)], "shape")? };
            dims.push(self.b.build_load(cx.i64_type(), sp, &format!("{}.len", name))?.into_int_value());
        }
        Ok((data, dims))
    }

    /// The caller's output descriptor of rank `r`: its data pointer and its
    /// room, the number of elements its shape gives on entry.
    fn load_out(&mut self, desc: PointerValue<'ctx>, r: usize) -> R<(PointerValue<'ctx>, IntValue<'ctx>)> {
        let (data, dims) = self.load_desc(desc, r, "out")?;
        let room = self.product(&dims)?;
        Ok((data, room))
    }

    /// Writes a result's descriptor: data and shape.
    fn store_desc(&mut self, desc: PointerValue<'ctx>, data: PointerValue<'ctx>, dims: &[IntValue<'ctx>]) -> R<()> {
        let cx = self.cx;
        self.b.build_store(desc, data)?;
        for (d, n) in dims.iter().enumerate() {
            let sp = unsafe { self.b.build_in_bounds_gep(cx.i8_type(), desc, &[cx.i64_type().const_int(8 + 8 * d as u64, false)], "shape")? };
            self.b.build_store(sp, *n)?;
        }
        Ok(())
    }

    /// The product of extents, saturating: a count too large to exist asks
    /// for more memory than there is (an out-of-memory error), never wraps.
    fn product(&mut self, dims: &[IntValue<'ctx>]) -> R<IntValue<'ctx>> {
        let i64t = self.cx.i64_type();
        let mut acc = match dims.first() {
            Some(d) => *d,
            None => return Ok(i64t.const_int(1, false)),
        };
        for d in &dims[1..] {
            let mul = self.intrinsic("llvm.umul.with.overflow", &[i64t.into()]);
            let r = self.b.build_call(mul, &[acc.into(), (*d).into()], "elements")?.try_as_basic_value().basic().unwrap().into_struct_value();
            let over = self.b.build_extract_value(r, 1, "too_many")?.into_int_value();
            let prod = self.b.build_extract_value(r, 0, "elements")?.into_int_value();
            acc = self.b.build_select(over, i64t.const_all_ones(), prod, "elements")?.into_int_value();
        }
        Ok(acc)
    }

    fn check_room(&mut self, data: PointerValue<'ctx>, room: IntValue<'ctx>, need: IntValue<'ctx>, what: &str) -> R<()> {
        let given = self.b.build_is_not_null(data, "given")?;
        let small = self.b.build_int_compare(IntPredicate::SLT, room, need, "small")?;
        let bad = self.b.build_and(given, small, "too_small")?;
        let msg = format!("{}: output '{}' is too small", self.f.location(self.f.span), what);
        self.fail_if(bad, ERR_OUTPUT_TOO_SMALL, &msg, Some(room), Some(need))
    }

    /// The run-time extents of an array, outermost first.
    fn dims(&mut self, v: VarId) -> R<Vec<IntValue<'ctx>>> {
        let shape = self.f.sizes.get(&v).cloned().unwrap_or_else(|| (0..rank_of(self.f.var(v).ty)).map(|d| SizeExpr::Dim(v, d as u8)).collect());
        shape.iter().map(|s| self.size_expr(s)).collect()
    }

    /// The number of elements of an array.
    fn size(&mut self, v: VarId) -> R<IntValue<'ctx>> {
        let dims = self.dims(v)?;
        self.product(&dims)
    }

    fn size_expr(&mut self, s: &SizeExpr) -> R<IntValue<'ctx>> {
        Ok(match s {
            SizeExpr::Dim(p, d) => match self.params.get(p) {
                Some((_, dims)) => dims[*d as usize],
                None => {
                    let o = self.outline.as_ref().expect("loops::verify: a dimension of an array with storage");
                    self.take(o.params[p].1[*d as usize].into(), false).into_int_value()
                }
            },
            SizeExpr::Scalar(o) => self.operand(o).into_int_value(),
        })
    }

    fn bytes(&mut self, v: VarId) -> R<IntValue<'ctx>> {
        let n = self.size(v)?;
        self.times_width(n, v)
    }

    /// `n` elements of `v` in bytes, saturating: a count too large for
    /// memory asks `afc_alloc` for more than it can give (an out-of-memory
    /// error), never wraps to a small buffer.
    fn times_width(&mut self, n: IntValue<'ctx>, v: VarId) -> R<IntValue<'ctx>> {
        let i64t = self.cx.i64_type();
        let w = i64t.const_int(self.f.var(v).ty.prim().bytes(), false);
        let mul = self.intrinsic("llvm.umul.with.overflow", &[i64t.into()]);
        let r = self.b.build_call(mul, &[n.into(), w.into()], "bytes")?.try_as_basic_value().basic().unwrap().into_struct_value();
        let over = self.b.build_extract_value(r, 1, "too_many")?.into_int_value();
        let prod = self.b.build_extract_value(r, 0, "bytes")?.into_int_value();
        Ok(self.b.build_select(over, i64t.const_all_ones(), prod, "bytes")?.into_int_value())
    }

    /// The room an array needs, in elements (a filtered array: what was
    /// filtered).
    fn capacity(&mut self, v: VarId) -> R<IntValue<'ctx>> {
        let Some(c) = self.f.capacity.get(&v).cloned() else {
            return self.size(v);
        };
        // (Its own outermost size may not be known yet: a filter's count.)
        let shape = self.f.sizes.get(&v).cloned().unwrap_or_default();
        let mut dims = vec![self.size_expr(&c)?];
        for s in shape.iter().skip(1) {
            dims.push(self.size_expr(s)?);
        }
        self.product(&dims)
    }

    fn cap_bytes(&mut self, v: VarId) -> R<IntValue<'ctx>> {
        let n = self.capacity(v)?;
        self.times_width(n, v)
    }

    fn array_ptr(&mut self, v: VarId) -> R<PointerValue<'ctx>> {
        if let Some((d, _)) = self.params.get(&v) {
            return Ok(*d);
        }
        if let Some(d) = self.slots.get(&v) {
            return Ok(*d);
        }
        let o = self.outline.as_ref().unwrap_or_else(|| panic!("codegen: array %{} has no storage", self.name(v)));
        let d = o.params.get(&v).map(|(d, _)| *d).or_else(|| o.slots.get(&v).copied()).unwrap_or_else(|| panic!("codegen: array %{} has no storage", self.name(v)));
        Ok(self.take(d.into(), true).into_pointer_value())
    }

    /// Whether an array has storage here (a parameter's, or a slot).
    fn has_storage(&self, v: VarId) -> bool {
        self.params.contains_key(&v) || self.slots.contains_key(&v) || self.outline.as_ref().map(|o| o.params.contains_key(&v) || o.slots.contains_key(&v)).unwrap_or(false)
    }

    /// In a chunk function: the caller's value `parent` (`array`: an
    /// array's storage), taken once (see `Outline`).
    fn take(&self, parent: BasicValueEnum<'ctx>, array: bool) -> BasicValueEnum<'ctx> {
        let o = self.outline.as_ref().expect("only chunk functions take values");
        if let Some((v, _)) = o.taken.borrow().get(&parent) {
            return *v;
        }
        let v = match &o.ctx {
            Some((ctx, at)) => {
                let i64t = self.cx.i64_type();
                let k = o.taken.borrow().len() as u64;
                let slot = unsafe { at.build_in_bounds_gep(self.cx.i8_type(), *ctx, &[i64t.const_int(8 * k, false)], "ctx") }.expect("a positioned builder");
                at.build_load(parent.get_type(), slot, "taken").expect("a positioned builder")
            }
            None => *o.params_of.get(&parent).unwrap_or_else(|| afc_ir::ice::fail("codegen", "a chunk function's second pass takes a value the first did not", &format!("{:?}", parent))),
        };
        o.taken.borrow_mut().insert(parent, (v, array));
        v
    }

    fn operand(&self, o: &Operand) -> BasicValueEnum<'ctx> {
        match o {
            Operand::Var(v) => match self.scalars.get(v) {
                Some(x) => *x,
                None => {
                    let parent = self.outline.as_ref().and_then(|o| o.scalars.get(v).copied()).unwrap_or_else(|| panic!("codegen: %{} has no value", self.name(*v)));
                    self.take(parent, false)
                }
            },
            Operand::Const(c) => self.konst(*c),
        }
    }

    fn konst(&self, c: Const) -> BasicValueEnum<'ctx> {
        let cx = self.cx;
        match c {
            Const::Bool(b) => cx.bool_type().const_int(b as u64, false).into(),
            Const::I32(v) => cx.i32_type().const_int(v as i64 as u64, true).into(),
            Const::I64(v) => cx.i64_type().const_int(v as u64, true).into(),
            Const::F32(v) => cx.f32_type().const_float(v as f64).into(),
            Const::F64(v) => cx.f64_type().const_float(v).into(),
        }
    }

    fn to_mem(&self, v: BasicValueEnum<'ctx>) -> R<BasicValueEnum<'ctx>> {
        if v.is_int_value() && v.into_int_value().get_type().get_bit_width() == 1 {
            return Ok(self.b.build_int_z_extend(v.into_int_value(), self.cx.i8_type(), "b8")?.into());
        }
        Ok(v)
    }

    fn value_of_mem(&self, v: BasicValueEnum<'ctx>, p: Prim) -> R<BasicValueEnum<'ctx>> {
        if p == Prim::Bool {
            let z = self.cx.i8_type().const_zero();
            return Ok(self.b.build_int_compare(IntPredicate::NE, v.into_int_value(), z, "b")?.into());
        }
        Ok(v)
    }

    fn fast(&self, v: BasicValueEnum<'ctx>) {
        if self.opts.fast_math {
            if let Some(i) = v.as_instruction_value() {
                let _ = i.set_fast_math_flags(inkwell::values::FastMathFlags::all());
            }
        }
    }

    // ------------------------------------------------------------ scalars

    fn block(&mut self, b: &Block) -> R<Vec<BasicValueEnum<'ctx>>> {
        for s in &b.stmts {
            self.stmt(s)?;
        }
        Ok(b.results.iter().map(|o| self.operand(o)).collect())
    }

    fn stmt(&mut self, s: &Stmt) -> R<()> {
        match s {
            Stmt::Assign { dst, rhs, span } => {
                let prim = self.f.var(*dst).ty.prim();
                let v = self.rhs(rhs, prim, *span, &self.name(*dst))?;
                self.scalars.insert(*dst, v);
            }
            // Branches that only pick values are selects: no blocks, and
            // nothing for the optimiser to turn back into a branch it guesses.
            Stmt::If { dsts, cond, then, els, .. } if then.stmts.is_empty() && els.stmts.is_empty() => {
                let c = self.operand(cond).into_int_value();
                for (i, d) in dsts.iter().enumerate() {
                    let v = self.b.build_select(c, self.operand(&then.results[i]), self.operand(&els.results[i]), &self.name(*d))?;
                    self.scalars.insert(*d, v);
                }
            }
            Stmt::If { dsts, cond, then, els, .. } => {
                let c = self.operand(cond).into_int_value();
                let tb = self.cx.append_basic_block(self.func, "then");
                let eb = self.cx.append_basic_block(self.func, "else");
                let jb = self.cx.append_basic_block(self.func, "endif");
                self.b.build_conditional_branch(c, tb, eb)?;
                self.b.position_at_end(tb);
                let tv = self.block(then)?;
                let tend = self.b.get_insert_block().unwrap();
                self.b.build_unconditional_branch(jb)?;
                self.b.position_at_end(eb);
                let ev = self.block(els)?;
                let eend = self.b.get_insert_block().unwrap();
                self.b.build_unconditional_branch(jb)?;
                self.b.position_at_end(jb);
                for (i, d) in dsts.iter().enumerate() {
                    let phi = self.b.build_phi(reg_ty(self.cx, self.f.var(*d).ty.prim()), &self.name(*d))?;
                    phi.add_incoming(&[(&tv[i], tend), (&ev[i], eend)]);
                    self.scalars.insert(*d, phi.as_basic_value());
                }
            }
        }
        Ok(())
    }

    fn rhs(&mut self, rhs: &Rhs, prim: Prim, span: Span, name: &str) -> R<BasicValueEnum<'ctx>> {
        let b = &self.b;
        Ok(match rhs {
            Rhs::Copy(o) => self.operand(o),
            Rhs::Unary(op, o) => {
                let v = self.operand(o);
                match (op, prim) {
                    (UnOp::Neg, p) if p.is_float() => {
                        let r = b.build_float_neg(v.into_float_value(), name)?.into();
                        self.fast(r);
                        r
                    }
                    (UnOp::Neg, _) => b.build_int_neg(v.into_int_value(), name)?.into(),
                    (UnOp::Not, _) => b.build_not(v.into_int_value(), name)?.into(),
                }
            }
            Rhs::Binary(op, x, y) => {
                let (x, y) = (self.operand(x), self.operand(y));
                self.binary(*op, x, y, span, name)?
            }
            Rhs::Builtin(bi, args) => {
                let vs: Vec<BasicValueEnum> = args.iter().map(|a| self.operand(a)).collect();
                self.builtin(*bi, &vs, name)?
            }
            Rhs::Cast(p, o) => {
                let v = self.operand(o);
                self.cast(*p, v, name)?
            }
            Rhs::Select(c, x, y) => {
                let c = self.operand(c).into_int_value();
                b.build_select(c, self.operand(x), self.operand(y), name)?
            }
            Rhs::Index(a, ix) => {
                // Each index checked against its dimension, then row-major.
                let dims = self.dims(*a)?;
                let mut i = self.cx.i64_type().const_zero();
                for (k, (o, len)) in ix.iter().zip(&dims).enumerate() {
                    let x = self.operand(o).into_int_value();
                    let out = self.b.build_int_compare(IntPredicate::UGE, x, *len, "out_of_range")?;
                    let dim = if dims.len() > 1 { format!(" (dimension {})", k) } else { String::new() };
                    let msg = format!("{}: index out of range in '{}'{}", self.f.location(span), self.f.var(*a).name, dim);
                    self.fail_if(out, ERR_INDEX, &msg, Some(x), Some(*len))?;
                    let row = self.b.build_int_mul(i, *len, "row")?;
                    i = self.b.build_int_add(row, x, "at")?;
                }
                let base = self.array_ptr(*a)?;
                let p = self.f.var(*a).ty.prim();
                let t = mem_ty(self.cx, p);
                let ep = unsafe { self.b.build_in_bounds_gep(t, base, &[i], "elt")? };
                let v = self.b.build_load(t, ep, name)?;
                self.value_of_mem(v, p)?
            }
            Rhs::Length(a, d) => self.dims(*a)?[*d as usize].into(),
            Rhs::SizeProduct(a, c) => {
                let (n, m) = (self.operand(a).into_int_value(), self.operand(c).into_int_value());
                let i64t = self.cx.i64_type();
                let mul = self.intrinsic("llvm.smul.with.overflow", &[i64t.into()]);
                let r = self.b.build_call(mul, &[n.into(), m.into()], "nm")?.try_as_basic_value().basic().unwrap().into_struct_value();
                let over = self.b.build_extract_value(r, 1, "overflow")?.into_int_value();
                let msg = format!("{}: the size of cross overflows", self.f.location(span));
                self.fail_if(over, ERR_OUT_OF_MEMORY, &msg, Some(n), Some(m))?;
                self.b.build_extract_value(r, 0, name)?
            }
        })
    }

    fn binary(&mut self, op: BinOp, x: BasicValueEnum<'ctx>, y: BasicValueEnum<'ctx>, span: Span, name: &str) -> R<BasicValueEnum<'ctx>> {
        if x.is_float_value() {
            let (a, c) = (x.into_float_value(), y.into_float_value());
            let b = &self.b;
            let pred = |p| -> R<BasicValueEnum<'ctx>> { Ok(b.build_float_compare(p, a, c, name)?.into()) };
            let r: BasicValueEnum = match op {
                BinOp::Add => b.build_float_add(a, c, name)?.into(),
                BinOp::Sub => b.build_float_sub(a, c, name)?.into(),
                BinOp::Mul => b.build_float_mul(a, c, name)?.into(),
                BinOp::Div => b.build_float_div(a, c, name)?.into(),
                BinOp::Rem => b.build_float_rem(a, c, name)?.into(),
                BinOp::Eq => pred(FloatPredicate::OEQ)?,
                BinOp::Ne => pred(FloatPredicate::UNE)?,
                BinOp::Lt => pred(FloatPredicate::OLT)?,
                BinOp::Le => pred(FloatPredicate::OLE)?,
                BinOp::Gt => pred(FloatPredicate::OGT)?,
                BinOp::Ge => pred(FloatPredicate::OGE)?,
                _ => unreachable!("ill-typed float operation"),
            };
            self.fast(r);
            return Ok(r);
        }
        let (a, c) = (x.into_int_value(), y.into_int_value());
        let bits = a.get_type().get_bit_width();
        let b = &self.b;
        let cmp = |p| -> R<BasicValueEnum<'ctx>> { Ok(b.build_int_compare(p, a, c, name)?.into()) };
        Ok(match op {
            BinOp::Add => b.build_int_add(a, c, name)?.into(),
            BinOp::Sub => b.build_int_sub(a, c, name)?.into(),
            BinOp::Mul => b.build_int_mul(a, c, name)?.into(),
            BinOp::BitAnd | BinOp::And => b.build_and(a, c, name)?.into(),
            BinOp::BitOr | BinOp::Or => b.build_or(a, c, name)?.into(),
            BinOp::BitXor => b.build_xor(a, c, name)?.into(),
            BinOp::Shl | BinOp::Shr => {
                let mask = a.get_type().const_int((bits - 1) as u64, false);
                let s = b.build_and(c, mask, "shift")?;
                if op == BinOp::Shl {
                    b.build_left_shift(a, s, name)?.into()
                } else {
                    b.build_right_shift(a, s, true, name)?.into()
                }
            }
            BinOp::Eq => cmp(IntPredicate::EQ)?,
            BinOp::Ne => cmp(IntPredicate::NE)?,
            BinOp::Lt => cmp(IntPredicate::SLT)?,
            BinOp::Le => cmp(IntPredicate::SLE)?,
            BinOp::Gt => cmp(IntPredicate::SGT)?,
            BinOp::Ge => cmp(IntPredicate::SGE)?,
            BinOp::Div | BinOp::Rem => {
                let t = a.get_type();
                if let Some(k) = c.get_sign_extended_constant() {
                    if k != 0 && k != -1 {
                        return Ok(if op == BinOp::Div { b.build_int_signed_div(a, c, name)? } else { b.build_int_signed_rem(a, c, name)? }.into());
                    }
                }
                let zero = b.build_int_compare(IntPredicate::EQ, c, t.const_zero(), "div_zero")?;
                let msg = format!("{}: integer division by zero", self.f.location(span));
                self.fail_if(zero, ERR_DIV_ZERO, &msg, None, None)?;
                let b = &self.b;
                // MIN / -1 is MIN and MIN % -1 is 0: divide by 1 instead and fix up.
                let m1 = b.build_int_compare(IntPredicate::EQ, c, t.const_all_ones(), "by_minus_one")?;
                let safe = b.build_select(m1, t.const_int(1, false), c, "divisor")?.into_int_value();
                if op == BinOp::Div {
                    let q = b.build_int_signed_div(a, safe, "q")?;
                    let neg = b.build_int_neg(a, "neg")?;
                    b.build_select(m1, neg, q, name)?
                } else {
                    let r = b.build_int_signed_rem(a, safe, "r")?;
                    b.build_select(m1, t.const_zero(), r, name)?
                }
            }
        })
    }

    /// `min`/`max` of floats (or of vectors of floats) with signed zeros
    /// pinned (docs/reference.md): `llvm.minnum`/`maxnum` may return either
    /// zero for -0.0 and +0.0, so a result could depend on how LLVM orders
    /// the operands; afc returns -0.0 for min and +0.0 for max, as the
    /// interpreter does (IEEE 754-2019 minimumNumber/maximumNumber). Equal
    /// operands have equal bits except for zeros, so equal operands give
    /// their bits ORed (min: signed if either is) or ANDed (max).
    pub(super) fn float_min_max(&self, max: bool, a: BasicValueEnum<'ctx>, b: BasicValueEnum<'ctx>, name: &str) -> R<BasicValueEnum<'ctx>> {
        let t = a.get_type();
        let r = self.call_intrinsic(if max { "llvm.maxnum" } else { "llvm.minnum" }, &[t], &[a.into(), b.into()], name)?;
        let bits = |f: BasicTypeEnum<'ctx>| -> BasicTypeEnum<'ctx> {
            if f == self.cx.f32_type().into() { self.cx.i32_type().into() } else { self.cx.i64_type().into() }
        };
        let (eq, it): (BasicValueEnum<'ctx>, BasicTypeEnum<'ctx>) = match (a, b) {
            (BasicValueEnum::FloatValue(x), BasicValueEnum::FloatValue(y)) => (self.b.build_float_compare(FloatPredicate::OEQ, x, y, "same")?.into(), bits(t)),
            (BasicValueEnum::VectorValue(x), BasicValueEnum::VectorValue(y)) => {
                let k = x.get_type().get_size();
                let e = bits(x.get_type().get_element_type());
                (self.b.build_float_compare(FloatPredicate::OEQ, x, y, "same")?.into(), e.into_int_type().vec_type(k).into())
            }
            _ => unreachable!("min and max of floats take two floats or two vectors"),
        };
        let (ai, bi) = (self.b.build_bit_cast(a, it, "bits")?, self.b.build_bit_cast(b, it, "bits")?);
        let z: BasicValueEnum<'ctx> = match (ai, bi) {
            (BasicValueEnum::IntValue(x), BasicValueEnum::IntValue(y)) => if max { self.b.build_and(x, y, "zero")?.into() } else { self.b.build_or(x, y, "zero")?.into() },
            (BasicValueEnum::VectorValue(x), BasicValueEnum::VectorValue(y)) => if max { self.b.build_and(x, y, "zero")?.into() } else { self.b.build_or(x, y, "zero")?.into() },
            _ => unreachable!("bit casts of two floats or two vectors"),
        };
        let z = self.b.build_bit_cast(z, t, "zero")?;
        Ok(match eq {
            BasicValueEnum::IntValue(c) => self.b.build_select(c, z, r, name)?,
            BasicValueEnum::VectorValue(c) => self.b.build_select(c, z, r, name)?,
            _ => unreachable!("a comparison gives a bool or a vector of them"),
        })
    }

    fn call_intrinsic(&self, name: &str, tys: &[BasicTypeEnum<'ctx>], args: &[BasicMetadataValueEnum<'ctx>], n: &str) -> R<BasicValueEnum<'ctx>> {
        let f = self.intrinsic(name, tys);
        let call = self.b.build_call(f, args, n)?;
        if let Some(variant) = self.vector_variant(f, tys) {
            call.add_attribute(AttributeLoc::Function, variant);
        }
        let v = call.try_as_basic_value().basic().unwrap();
        self.fast(v);
        Ok(v)
    }

    /// Whether loops of this function call AVX-512 vector math. Such a call
    /// clobbers every vector register, so the loop spills its 64-byte
    /// values around it; the functions holding those loops realign their
    /// stack (`stackrealign`) so the spills are aligned: LLVM decides
    /// whether to realign only after it has given away the frame pointer,
    /// and unaligned spills split cache lines (Black-Scholes: 167 ms
    /// against 144 ms with them aligned).
    pub(crate) fn wide_vector_calls(&self) -> bool {
        self.f.vector_math == Some(afc_ir::loops::VectorMath::Libmvec { bits: 512 })
    }

    /// A function made for the nest being generated (a chunk function, a
    /// pass, the body inlined into them): the nest's register width.
    pub(crate) fn nest_function_attributes(&self, func: FunctionValue<'ctx>) {
        if let Some(bits) = self.registers {
            narrow_registers(self.cx, func, bits);
        }
    }

    /// Under `vector math libmvec BITS`, what a function holding the loops
    /// needs: LLVM's vectoriser told to use BITS-bit vectors
    /// (`prefer-vector-width`: on Intel's AVX-512 CPUs it would otherwise
    /// stop at 256) and, for 512-bit calls, a realigned stack.
    pub(crate) fn vector_math_attributes(&self, func: FunctionValue<'ctx>) {
        let Some(afc_ir::loops::VectorMath::Libmvec { bits }) = self.f.vector_math else { return };
        func.add_attribute(AttributeLoc::Function, self.cx.create_string_attribute("prefer-vector-width", &bits.to_string()));
        if self.wide_vector_calls() {
            func.add_attribute(AttributeLoc::Function, self.cx.create_string_attribute("stackrealign", ""));
        }
    }

    /// Under `vector math libmvec` on an AVX-512 target, the attribute that
    /// offers LLVM's loop vectoriser glibc's AVX-512 variant of a scalar math
    /// intrinsic (`_ZGVeN8v_exp` for `llvm.exp.f64`, 16 lanes for f32), the
    /// way a `#pragma omp declare simd` does. LLVM's libmvec table stops at
    /// AVX2, which left 512-bit loops calling the 4-lane variant twice;
    /// every function named here is in glibc since 2.22.
    fn vector_variant(&self, intrinsic: FunctionValue<'ctx>, tys: &[BasicTypeEnum<'ctx>]) -> Option<Attribute> {
        if !self.wide_vector_calls() {
            return None;
        }
        let name = intrinsic.get_name().to_str().ok()?;
        let (base, lanes) = match tys.first()? {
            BasicTypeEnum::FloatType(t) if *t == self.cx.f64_type() => (name.strip_suffix(".f64")?, 8),
            BasicTypeEnum::FloatType(t) if *t == self.cx.f32_type() => (name.strip_suffix(".f32")?, 16),
            _ => return None,
        };
        let (libm, params) = match base {
            "llvm.exp" => ("exp", "v"),
            "llvm.log" => ("log", "v"),
            "llvm.sin" => ("sin", "v"),
            "llvm.cos" => ("cos", "v"),
            "llvm.pow" => ("pow", "vv"),
            _ => return None,
        };
        let suffix = if lanes == 16 { "f" } else { "" };
        let vector = format!("_ZGVeN{}{}_{}{}", lanes, params, libm, suffix);
        if self.m.get_function(&vector).is_none() {
            let t = tys[0].into_float_type().vec_type(lanes);
            let ps: Vec<BasicMetadataTypeEnum> = params.chars().map(|_| t.into()).collect();
            let f = self.m.add_function(&vector, t.fn_type(&ps, false), Some(Linkage::External));
            f.add_attribute(AttributeLoc::Function, self.cx.create_enum_attribute(Attribute::get_named_enum_kind_id("nounwind"), 0));
        }
        Some(self.cx.create_string_attribute("vector-function-abi-variant", &format!("_ZGV_LLVM_N{}{}_{}({})", lanes, params, name, vector)))
    }

    fn builtin(&mut self, bi: Builtin, vs: &[BasicValueEnum<'ctx>], name: &str) -> R<BasicValueEnum<'ctx>> {
        let t = vs[0].get_type();
        let args: Vec<BasicMetadataValueEnum> = vs.iter().map(|v| (*v).into()).collect();
        let float = vs[0].is_float_value();
        let prim = if float {
            if vs[0].into_float_value().get_type() == self.cx.f32_type() { Prim::F32 } else { Prim::F64 }
        } else {
            Prim::I64
        };
        Ok(match bi {
            Builtin::Min if float => self.float_min_max(false, vs[0], vs[1], name)?,
            Builtin::Max if float => self.float_min_max(true, vs[0], vs[1], name)?,
            Builtin::Min => self.call_intrinsic("llvm.smin", &[t], &args, name)?,
            Builtin::Max => self.call_intrinsic("llvm.smax", &[t], &args, name)?,
            Builtin::Abs if float => self.call_intrinsic("llvm.fabs", &[t], &args, name)?,
            Builtin::Abs => {
                let poison = self.cx.bool_type().const_zero().into();
                self.call_intrinsic("llvm.abs", &[t], &[args[0], poison], name)?
            }
            Builtin::Sqrt => self.call_intrinsic("llvm.sqrt", &[t], &args, name)?,
            Builtin::Exp => self.call_intrinsic("llvm.exp", &[t], &args, name)?,
            Builtin::Log => self.call_intrinsic("llvm.log", &[t], &args, name)?,
            Builtin::Sin => self.call_intrinsic("llvm.sin", &[t], &args, name)?,
            Builtin::Cos => self.call_intrinsic("llvm.cos", &[t], &args, name)?,
            Builtin::Floor => self.call_intrinsic("llvm.floor", &[t], &args, name)?,
            Builtin::Ceil => self.call_intrinsic("llvm.ceil", &[t], &args, name)?,
            Builtin::Round => self.call_intrinsic("llvm.round", &[t], &args, name)?,
            Builtin::Pow => self.call_intrinsic("llvm.pow", &[t], &args, name)?,
            Builtin::Tan | Builtin::Erf => {
                let f = self.libm_fn(bi.name(), prim);
                self.b.build_call(f, &args, name)?.try_as_basic_value().basic().unwrap()
            }
        })
    }

    fn cast(&mut self, to: Prim, v: BasicValueEnum<'ctx>, name: &str) -> R<BasicValueEnum<'ctx>> {
        let b = &self.b;
        let tt = reg_ty(self.cx, to);
        if v.is_int_value() {
            let x = v.into_int_value();
            let from_bool = x.get_type().get_bit_width() == 1;
            return Ok(if to.is_int() {
                let tw = tt.into_int_type().get_bit_width();
                let fw = x.get_type().get_bit_width();
                if from_bool {
                    b.build_int_z_extend(x, tt.into_int_type(), name)?.into()
                } else if tw > fw {
                    b.build_int_s_extend(x, tt.into_int_type(), name)?.into()
                } else if tw < fw {
                    b.build_int_truncate(x, tt.into_int_type(), name)?.into()
                } else {
                    x.into()
                }
            } else if from_bool {
                b.build_unsigned_int_to_float(x, tt.into_float_type(), name)?.into()
            } else {
                b.build_signed_int_to_float(x, tt.into_float_type(), name)?.into()
            });
        }
        let x = v.into_float_value();
        Ok(if to.is_float() {
            let ft = x.get_type();
            if ft == tt.into_float_type() {
                x.into()
            } else if to == Prim::F64 {
                b.build_float_ext(x, tt.into_float_type(), name)?.into()
            } else {
                b.build_float_trunc(x, tt.into_float_type(), name)?.into()
            }
        } else {
            // Saturating, NaN to zero.
            self.call_intrinsic("llvm.fptosi.sat", &[tt, x.get_type().into()], &[x.into()], name)?
        })
    }

    fn lambda(&mut self, l: &Lambda, args: &[BasicValueEnum<'ctx>]) -> R<Vec<BasicValueEnum<'ctx>>> {
        for (p, a) in l.params.iter().zip(args) {
            self.scalars.insert(*p, *a);
        }
        self.block(&l.body)
    }

    /// Element `k` of array `v` (at `base`), read from memory; `k` is in range.
    fn load_at(&mut self, v: VarId, base: PointerValue<'ctx>, k: IntValue<'ctx>) -> R<BasicValueEnum<'ctx>> {
        let p = self.f.var(v).ty.prim();
        let t = mem_ty(self.cx, p);
        let ep = unsafe { self.b.build_in_bounds_gep(t, base, &[k], "at")? };
        let x = self.b.build_load(t, ep, &format!("{}.elt", self.name(v)))?;
        self.value_of_mem(x, p)
    }

    /// An extern call with the export ABI: the arguments as an export
    /// receives them, output descriptors with `data == NULL`. On failure its
    /// code is returned (its message is already set) and every result it
    /// left in a descriptor is freed with the rest; on success its arrays
    /// are owned by this function like its own allocations.
    fn call_extern(&mut self, c: &Call) -> R<()> {
        let cx = self.cx;
        let i64t = cx.i64_type();
        let kind = |n: &str| Attribute::get_named_enum_kind_id(n);
        let tys: Vec<VarTy> = c
            .args
            .iter()
            .map(|a| match a {
                Operand::Var(v) => self.f.var(*v).ty,
                Operand::Const(k) => VarTy::Scalar(k.prim()),
            })
            .collect();
        let (ins, outs) = classify_types(&tys, c.outputs.len());
        // Attributes of the C signature, on the declaration and the call.
        let mut attrs: Vec<(u32, Attribute)> = vec![];
        let mut at = 0u32;
        for (ty, pass) in tys.iter().zip(&ins) {
            match pass {
                ParamPass::Scalar if ty.prim() == Prim::Bool => attrs.push((at, cx.create_enum_attribute(kind("zeroext"), 0))),
                ParamPass::ByVal => {
                    attrs.push((at, cx.create_type_attribute(kind("byval"), desc_ty(cx, rank_of(*ty)).into())));
                    attrs.push((at, cx.create_enum_attribute(kind("align"), 8)));
                }
                _ => {}
            }
            at += if *pass == ParamPass::Split { 2 } else { 1 };
        }
        let callee = match self.m.get_function(&c.func) {
            Some(g) => g,
            None => {
                let g = self.m.add_function(&c.func, c_fn_type(cx, &tys, &ins, outs.len()), Some(Linkage::External));
                g.add_attribute(AttributeLoc::Function, cx.create_enum_attribute(kind("nounwind"), 0));
                for (at, a) in &attrs {
                    g.add_attribute(AttributeLoc::Param(*at), *a);
                }
                g
            }
        };
        let mut args: Vec<BasicMetadataValueEnum> = vec![];
        for (a, pass) in c.args.iter().zip(&ins) {
            match (pass, a) {
                (ParamPass::Scalar, _) => args.push(self.operand(a).into()),
                (ParamPass::Split, Operand::Var(v)) => {
                    let (data, len) = (self.array_ptr(*v)?, self.size(*v)?);
                    args.push(data.into());
                    args.push(len.into());
                }
                (ParamPass::ByVal, Operand::Var(v)) => {
                    let (data, dims) = (self.array_ptr(*v)?, self.dims(*v)?);
                    let d = self.entry_alloca(desc_ty(cx, dims.len()).into(), &format!("{}.desc", self.name(*v)))?;
                    self.store_desc(d, data, &dims)?;
                    args.push(d.into());
                }
                _ => unreachable!("abi: an array argument is a variable"),
            }
        }
        // Output descriptors (data = NULL) and scalar result slots.
        let mut out_slots = vec![];
        for o in &c.outputs {
            let slot = if self.f.var(*o).ty.is_array() {
                let t = desc_ty(cx, rank_of(self.f.var(*o).ty));
                let d = self.entry_alloca(t.into(), &format!("{}.desc", self.name(*o)))?;
                self.b.build_store(d, t.const_zero())?;
                d
            } else {
                let s = self.entry_alloca(mem_ty(cx, self.f.var(*o).ty.prim()), &format!("{}.out", self.name(*o)))?;
                self.b.build_store(s, mem_ty(cx, self.f.var(*o).ty.prim()).const_zero())?;
                s
            };
            out_slots.push(slot);
            args.push(slot.into());
        }
        let call = self.b.build_call(callee, &args, &c.func)?;
        for (at, a) in attrs {
            call.add_attribute(AttributeLoc::Param(at), a);
        }
        let rc = call.try_as_basic_value().basic().unwrap().into_int_value();
        // Whatever it left in the descriptors is ours to free from now on.
        let mut arrays: IndexMap<VarId, (PointerValue<'ctx>, Vec<IntValue<'ctx>>)> = IndexMap::new();
        for (o, slot) in c.outputs.iter().zip(&out_slots) {
            if self.f.var(*o).ty.is_array() {
                let name = self.name(*o);
                let (data, dims) = self.load_desc(*slot, rank_of(self.f.var(*o).ty), &name)?;
                let owner = self.new_alloc_slot(Some(*o))?;
                self.b.build_store(owner, data)?;
                self.slots.insert(*o, data);
                // Its size is flexible, read like a parameter's from now on.
                self.params.insert(*o, (data, dims.clone()));
                arrays.insert(*o, (data, dims));
            }
        }
        self.fail_on_code(rc, "extern")?;
        // Each array result is an array: a size ≥ 0 shared by its leaves,
        // data unless it is empty.
        for (leaves, len) in &c.arrays {
            let n = arrays[&leaves[0]].1.clone();
            let mut bad = i64t.get_context().bool_type().const_zero();
            for d in &n {
                let neg = self.b.build_int_compare(IntPredicate::SLT, *d, i64t.const_zero(), "negative")?;
                bad = self.b.build_or(bad, neg, "bad")?;
            }
            for l in leaves {
                let (data, m) = arrays[l].clone();
                for (a, b) in m.iter().zip(&n) {
                    let differ = self.b.build_int_compare(IntPredicate::NE, *a, *b, "differ")?;
                    bad = self.b.build_or(bad, differ, "bad")?;
                }
                let null = self.b.build_is_null(data, "null")?;
                let elements = self.product(&m)?;
                let nonempty = self.b.build_int_compare(IntPredicate::NE, elements, i64t.const_zero(), "nonempty")?;
                let missing = self.b.build_and(null, nonempty, "missing")?;
                bad = self.b.build_or(bad, missing, "bad")?;
            }
            let msg = format!(
                "{}: extern fn '{}' returned 0 but no valid array for '{}' (data, size)",
                self.f.location(c.span),
                c.func,
                self.f.var(leaves[0]).name
            );
            self.fail_if(bad, ERR_EXTERN_RESULT, &msg, None, None)?;
            self.scalars.insert(*len, n[0].into());
        }
        for (r, d, size) in &c.checks {
            let n = arrays[r].1[*d as usize];
            let want = self.size_expr(size)?;
            let differ = self.b.build_int_compare(IntPredicate::NE, n, want, "differ")?;
            let dim = |g: &Self, v: VarId, d: u8| if g.f.rank(v) > 1 { format!("dimension {} of '{}'", d, g.f.var(v).name) } else { format!("'{}'", g.f.var(v).name) };
            let other = match size {
                SizeExpr::Dim(v, vd) => dim(self, *v, *vd),
                SizeExpr::Scalar(_) => "the size the program gives it".to_string(),
            };
            let msg = format!("{}: extern fn '{}' returned {} of another size than {}", self.f.location(c.span), c.func, dim(self, *r, *d), other);
            self.fail_if(differ, ERR_SIZE_MISMATCH, &msg, Some(n), Some(want))?;
        }
        for (o, slot) in c.outputs.iter().zip(&out_slots) {
            if !self.f.var(*o).ty.is_array() {
                let p = self.f.var(*o).ty.prim();
                let v = self.b.build_load(mem_ty(cx, p), *slot, &self.name(*o))?;
                let v = self.value_of_mem(v, p)?;
                self.scalars.insert(*o, v);
            }
        }
        Ok(())
    }

    /// One step of the function or of a branch (not `check room`, which
    /// only the function's own steps have).
    fn step(&mut self, s: &Step) -> R<()> {
        let r = match s {
            Step::Stmt(s) => self.stmt(s),
            Step::Loop(n) => {
                self.at(n.span);
                self.nest(n)
            }
            Step::Call(c) => {
                self.at(c.span);
                self.call_extern(c)
            }
            Step::If(b) => {
                self.at(b.span);
                self.branch(b)
            }
            Step::CheckRoom => unreachable!("loops::verify: 'check room' is a step of the function"),
            Step::Free(vs) => self.free(vs),
        };
        self.at(self.f.span);
        r
    }

    /// -g: a subprogram for a function afc outlines (a nest's chunk
    /// function) at `span`'s line, so debuggers and profilers map its code
    /// to the source.
    pub(super) fn outlined_debug(&self, func: FunctionValue<'ctx>, span: Span) -> Option<(&'a DebugInfoBuilder<'ctx>, DISubprogram<'ctx>)> {
        let (dib, _) = self.debug?;
        let name = func.get_name().to_string_lossy().to_string();
        Some((dib, subprogram(dib, self.f, func, &name, span, true, self.opts)))
    }

    /// -g: the source line of what is generated next.
    fn at(&self, span: Span) {
        if let Some((dib, sp)) = self.debug {
            let (_, line, col) = split_location(self.f.location(span)).unwrap_or(("?", 0, 0));
            let loc = dib.create_debug_location(self.cx, line, col, sp.as_debug_info_scope(), None);
            self.b.set_current_debug_location(loc);
        }
    }

    /// An array-level `if`: each branch's steps, then its results become
    /// the outputs. An array the branch made is handed over (its storage
    /// becomes the output's); one from outside is copied, since its owner
    /// may still use or free it.
    fn branch(&mut self, br: &afc_ir::loops::Branch) -> R<()> {
        let cx = self.cx;
        let ptr = cx.ptr_type(Default::default());
        let i64t = cx.i64_type();
        // Where each output is kept until the join: data and extents, or the scalar.
        let mut slots = vec![];
        for o in &br.outputs {
            let name = self.name(*o);
            let ty = self.f.var(*o).ty;
            if ty.is_array() {
                let data = self.entry_alloca(ptr.into(), &format!("{}.data", name))?;
                let dims = (0..rank_of(ty)).map(|_| self.entry_alloca(i64t.into(), &format!("{}.len", name))).collect::<R<Vec<_>>>()?;
                let owner = self.new_alloc_slot(Some(*o))?;
                slots.push((Some((data, dims, owner)), None));
            } else {
                slots.push((None, Some(self.entry_alloca(reg_ty(cx, ty.prim()), &name)?)));
            }
        }
        let cond = self.operand(&br.cond).into_int_value();
        let (then_bb, else_bb, join) = (self.new_bb("then"), self.new_bb("else"), self.new_bb("endif"));
        self.b.build_conditional_branch(cond, then_bb, else_bb)?;
        for (bb, steps, results) in [(then_bb, &br.then, &br.then_results), (else_bb, &br.els, &br.els_results)] {
            self.b.position_at_end(bb);
            let saved = (self.scalars.clone(), self.params.clone(), self.slots.clone(), self.alloc_of.clone());
            for s in steps {
                self.step(s)?;
            }
            let mut moved: Vec<VarId> = vec![];
            for ((r, o), slot) in results.iter().zip(&br.outputs).zip(&slots) {
                match (slot, r) {
                    ((Some((data, dims, owner)), _), Operand::Var(v)) => {
                        let ds = self.dims(*v)?;
                        for (d, x) in dims.iter().zip(&ds) {
                            self.b.build_store(*d, *x)?;
                        }
                        let src = self.array_ptr(*v)?;
                        // Made in this branch (it owns the storage, and
                        // nothing after the `if` can name it): hand it over.
                        let made_here = !saved.3.contains_key(v) && self.alloc_of.contains_key(v) && !moved.contains(v);
                        let p = if made_here {
                            let from = self.alloc_of[v];
                            let p = self.b.build_load(ptr, from, "moved")?.into_pointer_value();
                            self.b.build_store(from, ptr.const_null())?;
                            self.b.build_store(*owner, p)?;
                            moved.push(*v);
                            src
                        } else {
                            let bytes = self.bytes(*v)?;
                            let p = self.alloc_into(*owner, bytes, *o)?;
                            self.b.build_memcpy(p, 1, src, 1, bytes)?;
                            p
                        };
                        self.b.build_store(*data, p)?;
                    }
                    ((None, Some(s)), r) => {
                        let x = self.operand(r);
                        self.b.build_store(*s, x)?;
                    }
                    _ => unreachable!("loops::verify: an array output takes an array"),
                }
            }
            self.b.build_unconditional_branch(join)?;
            (self.scalars, self.params, self.slots, self.alloc_of) = saved;
        }
        self.b.position_at_end(join);
        for (o, slot) in br.outputs.iter().zip(&slots) {
            let name = self.name(*o);
            match slot {
                (Some((data, dims, _)), _) => {
                    let d = self.b.build_load(ptr, *data, &format!("{}.data", name))?.into_pointer_value();
                    let ds = dims.iter().map(|x| Ok(self.b.build_load(i64t, *x, &format!("{}.len", name))?.into_int_value())).collect::<R<Vec<_>>>()?;
                    self.params.insert(*o, (d, ds));
                }
                (None, Some(s)) => {
                    let x = self.b.build_load(reg_ty(cx, self.f.var(*o).ty.prim()), *s, &name)?;
                    self.scalars.insert(*o, x);
                }
                _ => unreachable!(),
            }
        }
        // Outputs whose size the program fixes elsewhere are checked now.
        for (o, d, size) in &br.checks {
            let n = self.params[o].1[*d as usize];
            let want = self.size_expr(size)?;
            let differ = self.b.build_int_compare(IntPredicate::NE, n, want, "differ")?;
            let what = |g: &Self, v: VarId, d: u8| if g.f.rank(v) > 1 { format!("dimension {} of '{}'", d, g.f.var(v).name) } else { format!("'{}'", g.f.var(v).name) };
            let other = match size {
                SizeExpr::Dim(v, vd) => what(self, *v, *vd),
                SizeExpr::Scalar(_) => "the size the program gives it".to_string(),
            };
            let msg = format!("{}: the `if` made {} of another size than {}", self.f.location(br.span), what(self, *o, *d), other);
            self.fail_if(differ, ERR_SIZE_MISMATCH, &msg, Some(n), Some(want))?;
        }
        Ok(())
    }

    fn new_bb(&self, name: &str) -> BasicBlock<'ctx> {
        self.cx.append_basic_block(self.func, name)
    }

    /// Allocates `bytes` into an existing owner slot.
    fn alloc_into(&mut self, slot: PointerValue<'ctx>, bytes: IntValue<'ctx>, v: VarId) -> R<PointerValue<'ctx>> {
        let p = self.b.build_call(self.runtime_fn("afc_alloc"), &[bytes.into()], &format!("{}.data", self.name(v)))?;
        let p = p.try_as_basic_value().basic().unwrap().into_pointer_value();
        self.b.build_store(slot, p)?;
        let null = self.b.build_is_null(p, "oom")?;
        let msg = format!("{}: out of memory for '{}'", self.f.location(self.f.span), self.f.var(v).name);
        self.fail_if(null, ERR_OUT_OF_MEMORY, &msg, Some(bytes), None)?;
        Ok(p)
    }

    /// A stack slot in the entry block. Positioning the builder before an
    /// instruction takes that instruction's debug location (LLVM 19), so
    /// the current one (-g) is put back after.
    fn entry_alloca(&mut self, t: BasicTypeEnum<'ctx>, name: &str) -> R<PointerValue<'ctx>> {
        let cur = self.b.get_insert_block().unwrap();
        let loc = self.b.get_current_debug_location();
        match self.entry_bb.get_first_instruction() {
            Some(i) => self.b.position_before(&i),
            None => self.b.position_at_end(self.entry_bb),
        }
        let slot = self.b.build_alloca(t, name)?;
        self.b.position_at_end(cur);
        if let Some(loc) = loc {
            self.b.set_current_debug_location(loc);
        }
        Ok(slot)
    }

}

/// A nest's `registers B` (docs/strategy.md, "Register width"): LLVM holds
/// no vector wider than B bits in `func`. Without `min-legal-vector-width`,
/// x86's back end holds afc's wider vectors in 512-bit registers whatever it
/// prefers; a function inlined into another must carry the same (LLVM drops
/// it from a caller that inlines a callee without it).
fn narrow_registers<'ctx>(cx: &'ctx Context, func: FunctionValue<'ctx>, bits: u32) {
    for k in ["min-legal-vector-width", "prefer-vector-width"] {
        func.add_attribute(AttributeLoc::Function, cx.create_string_attribute(k, &bits.to_string()));
    }
}
