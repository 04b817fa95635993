//! Lowers afc's loop IR to LLVM IR with inkwell, runs LLVM's pass pipeline
//! for the `-O` level, and emits object code, assembly or textual IR. Reads
//! only the loop IR: it knows nothing of ASTs, graphs or clusters.

mod abi;
#[cfg(unix)]
mod child;
mod cpus;
mod function;
mod hints;
mod join;
mod selects;
mod units;

pub use units::MAX_UNITS;

use afc_ir::loops::Program;
use inkwell::context::Context;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine, TargetTriple};
use inkwell::OptimizationLevel;

#[derive(Clone, Debug)]
pub struct Options {
    /// 0..=3, as `-O0`..`-O3`.
    pub opt_level: u8,
    /// Lets LLVM reassociate and contract floating-point arithmetic.
    pub fast_math: bool,
    /// Target triple; the host's when `None`.
    pub target: Option<String>,
    /// Target CPU; the host's when `None` and the target is the host.
    pub cpu: Option<String>,
    /// `-g`: DWARF line tables mapping each loop to its `.acc` line.
    pub debug: bool,
    /// `--codegen-units`: how many parts LLVM compiles the module in at
    /// once; `None` for the default (`units::partition`).
    pub codegen_units: Option<usize>,
}

/// The widest vector registers the target's code uses, in bits: 256 with
/// AVX (LLVM prefers 256-bit vectors on AVX-512 machines too), else 128.
/// The host's features are read from LLVM; for a named `--cpu` the x86-64
/// levels and the common CPU families are known, others count as 128.
pub fn vector_bits(opts: &Options) -> u32 {
    let (cpu, features) = cpu_and_features(opts);
    if features.split(',').any(|f| f == "+avx" || f == "+avx2") {
        return 256;
    }
    let wide = ["x86-64-v3", "x86-64-v4", "haswell", "broadwell", "skylake", "skylake-avx512", "cascadelake", "icelake-client", "icelake-server", "tigerlake", "alderlake", "sapphirerapids", "znver1", "znver2", "znver3", "znver4"];
    if wide.contains(&cpu.as_str()) {
        256
    } else {
        128
    }
}

/// Whether the target has AVX-512F: LLVM's own libmvec mapping stops at
/// AVX2 (`_ZGVdN4v_exp`), so on such a target the back end names glibc's
/// AVX-512 variants (`_ZGVeN8v_exp`) itself; see `function::vector_variant`.
pub fn has_avx512(opts: &Options) -> bool {
    let (cpu, features) = cpu_and_features(opts);
    if !features.is_empty() {
        return features.split(',').any(|f| f == "+avx512f");
    }
    ["x86-64-v4", "skylake-avx512", "cascadelake", "cooperlake", "cannonlake", "icelake-client", "icelake-server", "tigerlake", "rocketlake", "sapphirerapids", "emeraldrapids", "graniterapids", "znver4", "znver5"].contains(&cpu.as_str())
}

/// The vector width loops calling vector math use: glibc's 512-bit
/// variants on an AVX-512F target (one call for eight doubles, where LLVM
/// would prefer 256-bit vectors on Intel's AVX-512 CPUs and call the 4-lane
/// variant twice as often), else the target's widest vectors.
pub fn math_bits(opts: &Options) -> u32 {
    register_bits(opts)
}

/// The register an explicit 512-bit vector is held in, in bits: 512 with
/// AVX-512F (LLVM's preference for 256-bit vectors steers its vectorisers,
/// not the vectors afc writes), else `vector_bits`.
pub fn register_bits(opts: &Options) -> u32 {
    if has_avx512(opts) {
        512
    } else {
        vector_bits(opts)
    }
}

/// The widest registers whose vector divides and square roots run as fast
/// per element as narrower ones': 256 bits on Intel's AVX-512 CPUs (a
/// 512-bit `vdivpd` or `vsqrtpd` there did the work of two 256-bit ones
/// 6–8 % slower, and LLVM's tuning prefers 256-bit vectors), else
/// `register_bits` (AMD's Zen 4 and 5 split 512-bit operations in two
/// with no such cost, and LLVM prefers 512 bits there).
pub fn divide_bits(opts: &Options) -> u32 {
    let (cpu, _) = cpu_and_features(opts);
    if has_avx512(opts) && !cpu.starts_with("znver") {
        256
    } else {
        register_bits(opts)
    }
}

/// The widest vectors a filter compacts at a time (`compress W`): 512 bits
/// with AVX-512F's compress instructions, 256 with AVX2's lane permutes
/// (`vpermd` from a table by the predicates' mask), 0 without either.
pub fn compress_bits(opts: &Options) -> u32 {
    if has_avx512(opts) {
        return 512;
    }
    let (cpu, features) = cpu_and_features(opts);
    let avx2 = if features.is_empty() {
        ["x86-64-v3", "haswell", "broadwell", "skylake", "alderlake", "raptorlake", "meteorlake", "arrowlake", "lunarlake", "gracemont", "sierraforest", "znver1", "znver2", "znver3", "bdver4"].contains(&cpu.as_str())
    } else {
        features.split(',').any(|f| f == "+avx2")
    };
    if avx2 {
        256
    } else {
        0
    }
}

/// The CPU and feature string code is generated for: the host's CPU and
/// all its features with no `--cpu` on the host target or with
/// `--cpu native`; a named CPU's own features otherwise; generic x86-64
/// for another target.
fn cpu_and_features(opts: &Options) -> (String, String) {
    let host = || (TargetMachine::get_host_cpu_name().to_string(), TargetMachine::get_host_cpu_features().to_string());
    match (&opts.cpu, &opts.target) {
        (Some(c), _) if c == "native" => host(),
        (Some(c), _) => (c.clone(), String::new()),
        (None, None) => host(),
        (None, Some(_)) => ("x86-64".to_string(), String::new()),
    }
}

/// The target triple: `--target`, or the host's.
fn triple(opts: &Options) -> TargetTriple {
    match &opts.target {
        Some(t) => TargetTriple::create(t),
        None => TargetMachine::get_default_triple(),
    }
}

/// Checks `--target` and `--cpu` before anything is compiled: afc's C ABI
/// lowering is x86-64 System V's, and LLVM neither checks CPU names nor
/// survives a 32-bit one (cpus.rs).
pub fn check_target(opts: &Options) -> Result<(), String> {
    let triple = triple(opts);
    let t = triple.as_str().to_string_lossy().to_string();
    let arch = t.split('-').next().unwrap_or("");
    if arch != "x86_64" {
        return Err(format!("target '{}' is not supported: afc generates x86-64 code with the System V calling convention (e.g. --target x86_64-unknown-linux-gnu)", t));
    }
    let windows = ["windows", "win32", "msvc", "mingw", "cygwin", "uefi"];
    if windows.iter().any(|w| t.contains(w)) {
        return Err(format!("target '{}' is not supported: it uses the Microsoft x64 calling convention, and afc's C ABI is x86-64 System V's (Linux, the BSDs, macOS)", t));
    }
    if t.ends_with("x32") {
        return Err(format!("target '{}' is not supported: afc's C ABI uses 64-bit pointers", t));
    }
    Target::initialize_native(&InitializationConfig::default())?;
    Target::from_triple(&triple).map_err(|e| format!("target '{}': {}", t, e.to_string().trim()))?;
    if let Some(c) = &opts.cpu {
        if c != "native" && !cpus::X86_64.contains(&c.as_str()) {
            if cpus::X86_32_ONLY.contains(&c.as_str()) {
                return Err(format!("cpu '{}' cannot run x86-64 code; afc generates only x86-64 code", c));
            }
            let hint = afc_ir::diag::closest(c, cpus::X86_64.iter().copied()).map(|s| format!(" (did you mean '{}'?)", s)).unwrap_or_default();
            return Err(format!("unknown cpu '{}'{}; 'native' is the host's, and `llc-19 -mtriple=x86_64 -mcpu=help` lists the others", c, hint));
        }
    }
    Ok(())
}

/// LLVM's version, as `afc --version` reports it.
pub fn llvm_version() -> String {
    let (mut major, mut minor, mut patch) = (0, 0, 0);
    unsafe { inkwell::llvm_sys::core::LLVMGetVersion(&mut major, &mut minor, &mut patch) };
    format!("{}.{}.{}", major, minor, patch)
}

/// Whether the target links glibc's vector math library: x86-64 Linux
/// with the GNU C library.
pub fn has_libmvec(opts: &Options) -> bool {
    let triple = match &opts.target {
        Some(t) => t.clone(),
        None => TargetMachine::get_default_triple().as_str().to_string_lossy().to_string(),
    };
    triple.starts_with("x86_64") && triple.contains("linux") && !triple.contains("musl")
}

/// Tells LLVM's optimiser, once per process, that glibc's libmvec provides
/// vector versions of the math functions (LLVM's `-vector-library`, which
/// only its command line sets).
fn use_libmvec() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let args = [c"afc".as_ptr(), c"-vector-library=LIBMVEC-X86".as_ptr()];
        unsafe { inkwell::llvm_sys::support::LLVMParseCommandLineOptions(2, args.as_ptr(), c"".as_ptr()) };
    });
}

/// `-g`: a debug-info builder with one compile unit for the source file
/// (named by the first function's location): a subprogram per function and
/// line tables; afc's variables are not described (they have no C-level
/// types a debugger could show usefully).
fn debug_info<'ctx>(cx: &'ctx Context, module: &inkwell::module::Module<'ctx>, p: &Program, opts: &Options) -> (inkwell::debug_info::DebugInfoBuilder<'ctx>, inkwell::debug_info::DICompileUnit<'ctx>) {
    use inkwell::debug_info::{DWARFEmissionKind, DWARFSourceLanguage};
    use inkwell::module::FlagBehavior;
    let file = p.functions.first().and_then(|f| function::split_location(f.location(f.span)).map(|(file, _, _)| file.to_string())).unwrap_or_else(|| "?".into());
    let (name, dir) = function::source_file(&file);
    let i32t = cx.i32_type();
    module.add_basic_value_flag("Debug Info Version", FlagBehavior::Warning, i32t.const_int(3, false));
    module.add_basic_value_flag("Dwarf Version", FlagBehavior::Warning, i32t.const_int(5, false));
    let producer = format!("afc {}", env!("CARGO_PKG_VERSION"));
    module.create_debug_info_builder(true, DWARFSourceLanguage::C, &name, &dir, &producer, opts.opt_level > 0, "", 0, "", DWARFEmissionKind::Full, 0, false, false, "", "")
}

/// What the back end produced: optimised IR text, and assembly and object
/// code when asked for.
pub struct Artifacts {
    pub llvm_ir: Option<String>,
    pub asm: Option<Vec<u8>>,
    pub obj: Option<Vec<u8>>,
    /// The parts the module was compiled in (1: whole).
    pub units: usize,
}

impl Artifacts {
    /// Each part length-prefixed (a missing one as length u64::MAX), to
    /// come back from the child process that made them (`isolated`).
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![];
        for part in [self.llvm_ir.as_ref().map(|s| s.as_bytes()), self.asm.as_deref(), self.obj.as_deref()] {
            match part {
                Some(b) => {
                    out.extend((b.len() as u64).to_le_bytes());
                    out.extend(b);
                }
                None => out.extend(u64::MAX.to_le_bytes()),
            }
        }
        out
    }

    fn from_bytes(mut b: &[u8]) -> Option<Artifacts> {
        let mut parts = vec![];
        for _ in 0..3 {
            let (len, rest) = b.split_first_chunk::<8>()?;
            let len = u64::from_le_bytes(*len);
            if len == u64::MAX {
                parts.push(None);
                b = rest;
                continue;
            }
            let len = usize::try_from(len).ok().filter(|&n| n <= rest.len())?;
            parts.push(Some(rest[..len].to_vec()));
            b = &rest[len..];
        }
        let obj = parts.pop()?;
        let asm = parts.pop()?;
        let llvm_ir = match parts.pop()? {
            Some(text) => Some(String::from_utf8(text).ok()?),
            None => None,
        };
        b.is_empty().then_some(Artifacts { llvm_ir, asm, obj, units: 1 })
    }
}

/// LLVM's optimising machine code generation takes time quadratic in the
/// length of a basic block (its two-address pass, on a value with many
/// uses: a 200,000-term sum took over two minutes). A function with a
/// longer block after the IR optimisations is made `optnone`, so its
/// machine code is generated as at -O0 — in seconds — its IR still
/// optimised. Only such a function's machine code is slower (no
/// scheduling, the fast register allocator); loops rarely come near.
const HUGE_BLOCK: usize = 16_384;

/// X86's domain reassignment (scalar mask arithmetic moved into AVX-512's
/// mask registers) takes time more than quadratic in a function's length:
/// of the 27 s LLVM's machine code generation took for the 122,000
/// instructions of a 3,000-combinator function (`gen.py`, seed 1), 6 s; of
/// 1.8 s for 27,000, 0.09 s. A module with a function longer than this
/// after the IR optimisations is compiled without the pass (LLVM's command
/// line turns it off, for the process: each part is compiled by one).
const HUGE_FUNCTION: usize = 32_768;

/// Turns X86's domain reassignment off, for this process.
fn without_domain_reassignment() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let args = [c"afc".as_ptr(), c"-disable-x86-domain-reassignment".as_ptr()];
        unsafe { inkwell::llvm_sys::support::LLVMParseCommandLineOptions(2, args.as_ptr(), c"".as_ptr()) };
    });
}

/// The instructions of a function.
fn length(func: inkwell::values::FunctionValue) -> usize {
    func.get_basic_block_iter().map(|bb| bb.get_instructions().count()).sum()
}

/// The most instructions in one basic block of a function.
fn longest_block(func: inkwell::values::FunctionValue) -> usize {
    func.get_basic_block_iter()
        .map(|bb| {
            let mut n = 0;
            let mut i = bb.get_first_instruction();
            while let Some(x) = i {
                n += 1;
                i = x.get_next_instruction();
            }
            n
        })
        .max()
        .unwrap_or(0)
}

/// Compiles a whole program into one LLVM module.
pub fn compile(p: &Program, module_name: &str, opts: &Options, want: Want) -> Result<Artifacts, String> {
    check_target(opts)?;
    let triple = triple(opts);
    let target = Target::from_triple(&triple).map_err(|e| e.to_string())?;
    let (cpu, features) = cpu_and_features(opts);
    let level = match opts.opt_level {
        0 => OptimizationLevel::None,
        1 => OptimizationLevel::Less,
        2 => OptimizationLevel::Default,
        _ => OptimizationLevel::Aggressive,
    };
    let machine = |level| target.create_target_machine(&triple, &cpu, &features, level, RelocMode::PIC, CodeModel::Default).ok_or_else(|| format!("cannot create a target machine for '{}' (cpu '{}')", triple.as_str().to_string_lossy(), cpu));
    let tm = machine(level)?;

    // A loop nest read back from a file may ask for what the target lacks.
    let compresses = |p: &Program| {
        p.functions.iter().flat_map(|f| f.nests().into_iter().flat_map(move |n| n.root.body.leaves().into_iter().map(move |l| l.compress_bits(&f.vars)))).max().unwrap_or(0)
    };
    let widest = compresses(p);
    if widest > compress_bits(opts) {
        let needs = if widest > 256 { "AVX-512F" } else { "AVX2" };
        return Err(format!("a filter compresses {}-bit vectors ('compress W'), which needs a target with {}; cpu '{}' has none", widest, needs, cpu));
    }
    let math = p.functions.iter().filter_map(|f| f.vector_math.map(|afc_ir::loops::VectorMath::Libmvec { bits }| bits)).max();
    if let Some(bits) = math {
        if bits > register_bits(opts) {
            let needs = if bits > 256 { "AVX-512F" } else { "AVX" };
            return Err(format!("a function calls vector math in {}-bit vectors ('vector math libmvec {}'), which needs a target with {}; cpu '{}' has none", bits, bits, needs, cpu));
        }
        use_libmvec();
    }
    let cx = Context::create();
    let module = cx.create_module(module_name);
    module.set_triple(&triple);
    module.set_data_layout(&tm.get_target_data().get_data_layout());
    let debug = opts.debug.then(|| debug_info(&cx, &module, p, opts));
    for f in &p.functions {
        function::emit(&cx, &module, f, opts, debug.as_ref().map(|(dib, _)| dib)).map_err(|e| format!("LLVM code generation failed in fn {}: {}", f.name, e))?;
    }
    if let Some((dib, _)) = &debug {
        dib.finalize();
    }
    function::keep_vector_variants(&cx, &module);
    if let Err(e) = module.verify() {
        afc_ir::ice::fail("codegen", &format!("invalid LLVM IR: {}", e.to_string()), &module.print_to_string().to_string());
    }
    if opts.opt_level > 0 {
        // Chunk functions that came out the same are made one before
        // LLVM's work on them is counted twice (quadtree's bounds: one
        // nest for x, one for y).
        module.run_passes("mergefunc", &tm, PassBuilderOptions::create()).map_err(|e| e.to_string())?;
        // Text outputs come from the whole module (their labels would
        // clash); an object file's sections, DWARF's too, join as a
        // linker joins them.
        if want == (Want { obj: true, ..Want::default() }) && elf(&triple) {
            let partition = units::partition(&module, opts.codegen_units);
            if partition.parts.len() >= 2 {
                // Glue alone is compiled as at -O0, its code generation too.
                let unoptimised = partition.glue.map(|_| machine(OptimizationLevel::None)).transpose()?;
                if let Some(obj) = split(&cx, &module, &tm, unoptimised.as_ref(), opts.opt_level, &partition)? {
                    return Ok(Artifacts { llvm_ir: None, asm: None, obj: Some(obj), units: partition.parts.len() });
                }
            }
        }
    }
    isolated(opts, |level| optimise_and_emit(&cx, &module, &tm, level, want))
}

/// What `compile` makes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Want {
    pub llvm_ir: bool,
    pub asm: bool,
    pub obj: bool,
}

/// Whether the target's objects are ELF, which `join` joins (Mach-O's
/// are not: such a module is compiled whole).
fn elf(triple: &TargetTriple) -> bool {
    let t = triple.as_str().to_string_lossy();
    !["apple", "darwin", "macos", "ios"].iter().any(|os| t.contains(os))
}

/// The object file of a module compiled in `parts` (`units`), each in a
/// child process, all at once, joined. `None` when a part did not come
/// back or its objects cannot be joined: the module is then compiled
/// whole, which reports LLVM's failures as it always does.
#[cfg(unix)]
fn split(cx: &Context, module: &inkwell::module::Module, tm: &TargetMachine, unoptimised: Option<&TargetMachine>, level: u8, partition: &units::Partition) -> Result<Option<Vec<u8>>, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("cannot make a folder for LLVM's output: {}", e))?;
    let parts = &partition.parts;
    let local = units::localised(module, parts);
    let mut children = vec![];
    for (k, keep) in parts.iter().enumerate() {
        let (tm, level) = match unoptimised {
            Some(tm0) if partition.glue == Some(k) => (tm0, 0),
            _ => (tm, level),
        };
        let work = || {
            dies_for_tests();
            units::keep_part(module, parts, keep);
            optimise_and_emit(cx, module, tm, level, Want { obj: true, ..Want::default() }).and_then(|a| a.obj.ok_or_else(|| "no object".to_string()))
        };
        match child::spawn(&dir.path().join(format!("part{}", k)), work) {
            Some(c) => children.push(c),
            None => break,
        }
    }
    let started = children.len();
    let mut objects = vec![];
    for c in children {
        if let child::End::Done(obj) = c.wait()? {
            objects.push(obj);
        }
    }
    if started < parts.len() || objects.len() < parts.len() {
        return Ok(None);
    }
    match join::join(&objects, &local) {
        Ok(obj) => Ok(Some(obj)),
        Err(e) => {
            eprintln!("afc: warning: the objects of the module's {} parts could not be joined ({}; a bug in afc); it is compiled whole", parts.len(), e);
            Ok(None)
        }
    }
}

/// A testing hook (`testsuite/diagnostics/internal-errors.acc`):
/// `AFC_TEST_CORRUPT=llvm` makes LLVM's work die in every child process.
#[cfg(unix)]
fn dies_for_tests() {
    if std::env::var("AFC_TEST_CORRUPT").is_ok_and(|v| v == "llvm") {
        std::process::abort();
    }
}

#[cfg(not(unix))]
fn split(_: &Context, _: &inkwell::module::Module, _: &TargetMachine, _: Option<&TargetMachine>, _: u8, _: &units::Partition) -> Result<Option<Vec<u8>>, String> {
    Ok(None)
}

/// Runs `run(opts.opt_level)` — LLVM's optimisation and code generation —
/// in a child process, and uses its artifacts. LLVM is a library in afc's
/// process, and some valid IR crashes it (LLVM 19 dies of a segmentation
/// fault in InstSimplify on `minnum(minnum(0.0, t), copysign(0.0, t))`,
/// which its own InstCombine makes of `min(min(0.0, t), t * 0.0)` for an
/// integer t: docs/testing.md). Should the child die of a signal — or
/// exit without its output, as a sanitizer's crash handler makes it —
/// afc runs the IR through no optimisation (`run(0)`, no InstCombine, in a
/// child too) and says so in a warning: a correct, slower object rather
/// than afc killed by a signal. Should that die as well (code generation
/// itself: IR that afc should not have made), it is an internal compiler
/// error, reported as every other one, not afc killed by LLVM's abort.
#[cfg(unix)]
fn isolated(opts: &Options, run: impl Fn(u8) -> Result<Artifacts, String>) -> Result<Artifacts, String> {
    enum Attempt {
        Ran(Result<Artifacts, String>),
        Crashed(String),
    }
    let dir = tempfile::tempdir().map_err(|e| format!("cannot make a folder for LLVM's output: {}", e))?;
    let attempt = |level: u8| -> Result<Attempt, String> {
        let work = || {
            dies_for_tests();
            run(level).map(|a| a.to_bytes())
        };
        let Some(child) = child::spawn(&dir.path().join(format!("artifacts-O{}", level)), work) else {
            return Ok(Attempt::Ran(run(level)));
        };
        Ok(match child.wait()? {
            child::End::Done(bytes) => Attempt::Ran(Artifacts::from_bytes(&bytes).ok_or_else(|| "LLVM's output is unreadable".to_string())),
            child::End::Failed(e) => Attempt::Ran(Err(e)),
            child::End::Lost => Attempt::Ran(run(level)),
            child::End::Crashed(how) => Attempt::Crashed(how),
        })
    };
    let unoptimised = |first: Option<&str>, how: &str| -> ! {
        let before = first.map(|f| format!("optimising it at -O{} ({}), then ", opts.opt_level, f)).unwrap_or_default();
        afc_ir::ice::fail(
            "codegen",
            &format!("LLVM crashed compiling this program without optimisation ({})", how),
            &format!("LLVM died in a child process {}compiling it at -O0 ({}): its code generation cannot take IR afc made. `--emit=llvm-ir -O0` prints that IR; LLVM's own message, if it wrote one, is on standard error above.", before, how),
        )
    };
    let how = match attempt(opts.opt_level)? {
        Attempt::Ran(r) => return r,
        Attempt::Crashed(how) if opts.opt_level == 0 => unoptimised(None, &how),
        Attempt::Crashed(how) => how,
    };
    eprintln!("afc: warning: LLVM crashed optimising this program ({}, an LLVM bug); the object is compiled without optimisation", how);
    match attempt(0)? {
        Attempt::Ran(r) => r,
        Attempt::Crashed(again) => unoptimised(Some(&how), &again),
    }
}

#[cfg(not(unix))]
fn isolated(opts: &Options, run: impl Fn(u8) -> Result<Artifacts, String>) -> Result<Artifacts, String> {
    run(opts.opt_level)
}

/// LLVM's pass pipeline at `level`, then the text, assembly and object.
fn optimise_and_emit(cx: &Context, module: &inkwell::module::Module, tm: &inkwell::targets::TargetMachine, level: u8, want: Want) -> Result<Artifacts, String> {
    let pipeline = format!("default<O{}>", level.min(3));
    let pbo = PassBuilderOptions::create();
    pbo.set_loop_vectorization(level >= 2);
    pbo.set_loop_slp_vectorization(level >= 2);
    pbo.set_loop_unrolling(level >= 2);
    module.run_passes(&pipeline, tm, pbo).map_err(|e| e.to_string())?;
    if level > 0 {
        selects::integer_selects(cx, module);
        if module.get_functions().any(|f| length(f) > HUGE_FUNCTION) {
            without_domain_reassignment();
        }
        for func in module.get_functions() {
            if longest_block(func) > HUGE_BLOCK {
                let kind = inkwell::attributes::Attribute::get_named_enum_kind_id;
                func.remove_enum_attribute(inkwell::attributes::AttributeLoc::Function, kind("alwaysinline"));
                for name in ["noinline", "optnone"] {
                    func.add_attribute(inkwell::attributes::AttributeLoc::Function, cx.create_enum_attribute(kind(name), 0));
                }
            }
        }
    }
    let llvm_ir = want.llvm_ir.then(|| module.print_to_string().to_string());
    let asm = if want.asm {
        Some(tm.write_to_memory_buffer(module, FileType::Assembly).map_err(|e| e.to_string())?.as_slice().to_vec())
    } else {
        None
    };
    let obj = if want.obj {
        Some(tm.write_to_memory_buffer(module, FileType::Object).map_err(|e| e.to_string())?.as_slice().to_vec())
    } else {
        None
    };
    Ok(Artifacts { llvm_ir, asm, obj, units: 1 })
}
