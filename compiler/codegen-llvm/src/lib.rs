//! Lowers afc's loop IR to LLVM IR with inkwell, runs LLVM's pass pipeline
//! for the `-O` level, and emits object code, assembly or textual IR. Reads
//! only the loop IR: it knows nothing of ASTs, graphs or clusters.

mod abi;
mod function;

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
}

/// The widest vector registers the target's code uses, in bits: 256 with
/// AVX (LLVM prefers 256-bit vectors on AVX-512 machines too), else 128.
/// The host's features are read from LLVM; for `--cpu` the x86-64 levels
/// and the common CPU families are known, others count as 128.
pub fn vector_bits(opts: &Options) -> u32 {
    let features = match (&opts.target, &opts.cpu) {
        (None, None) => TargetMachine::get_host_cpu_features().to_string(),
        _ => String::new(),
    };
    if features.split(',').any(|f| f == "+avx" || f == "+avx2") {
        return 256;
    }
    let wide = ["x86-64-v3", "x86-64-v4", "haswell", "broadwell", "skylake", "skylake-avx512", "cascadelake", "icelake-client", "icelake-server", "tigerlake", "alderlake", "sapphirerapids", "znver1", "znver2", "znver3", "znver4"];
    match &opts.cpu {
        Some(c) if wide.contains(&c.as_str()) => 256,
        _ => 128,
    }
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

/// What the back end produced: optimised IR text, and assembly and object
/// code when asked for.
pub struct Artifacts {
    pub llvm_ir: String,
    pub asm: Option<Vec<u8>>,
    pub obj: Option<Vec<u8>>,
}

/// Compiles a whole program into one LLVM module.
pub fn compile(p: &Program, module_name: &str, opts: &Options, want_asm: bool, want_obj: bool) -> Result<Artifacts, String> {
    Target::initialize_native(&InitializationConfig::default())?;
    let triple = match &opts.target {
        Some(t) => TargetTriple::create(t),
        None => TargetMachine::get_default_triple(),
    };
    if !triple.as_str().to_string_lossy().starts_with("x86_64") {
        return Err(format!(
            "target '{}' is not supported: afc's C ABI lowering covers x86-64 System V",
            triple.as_str().to_string_lossy()
        ));
    }
    let target = Target::from_triple(&triple).map_err(|e| e.to_string())?;
    let host = opts.target.is_none();
    let cpu = match &opts.cpu {
        Some(c) => c.clone(),
        None if host => TargetMachine::get_host_cpu_name().to_string(),
        None => "x86-64".to_string(),
    };
    let features = if host && opts.cpu.is_none() { TargetMachine::get_host_cpu_features().to_string() } else { String::new() };
    let level = match opts.opt_level {
        0 => OptimizationLevel::None,
        1 => OptimizationLevel::Less,
        2 => OptimizationLevel::Default,
        _ => OptimizationLevel::Aggressive,
    };
    let tm = target
        .create_target_machine(&triple, &cpu, &features, level, RelocMode::PIC, CodeModel::Default)
        .ok_or_else(|| format!("cannot create a target machine for '{}' (cpu '{}')", triple.as_str().to_string_lossy(), cpu))?;

    if p.functions.iter().any(|f| f.vector_math == Some(afc_ir::loops::VectorMath::Libmvec)) {
        use_libmvec();
    }
    let cx = Context::create();
    let module = cx.create_module(module_name);
    module.set_triple(&triple);
    module.set_data_layout(&tm.get_target_data().get_data_layout());
    for f in &p.functions {
        function::emit(&cx, &module, f, opts).map_err(|e| format!("LLVM code generation failed in fn {}: {}", f.name, e))?;
    }
    if let Err(e) = module.verify() {
        afc_ir::ice::fail("codegen", &format!("invalid LLVM IR: {}", e.to_string()), &module.print_to_string().to_string());
    }
    let pipeline = format!("default<O{}>", opts.opt_level.min(3));
    let pbo = PassBuilderOptions::create();
    pbo.set_loop_vectorization(opts.opt_level >= 2);
    pbo.set_loop_slp_vectorization(opts.opt_level >= 2);
    pbo.set_loop_unrolling(opts.opt_level >= 2);
    module.run_passes(&pipeline, &tm, pbo).map_err(|e| e.to_string())?;
    let llvm_ir = module.print_to_string().to_string();
    let asm = if want_asm {
        Some(tm.write_to_memory_buffer(&module, FileType::Assembly).map_err(|e| e.to_string())?.as_slice().to_vec())
    } else {
        None
    };
    let obj = if want_obj {
        Some(tm.write_to_memory_buffer(&module, FileType::Object).map_err(|e| e.to_string())?.as_slice().to_vec())
    } else {
        None
    };
    Ok(Artifacts { llvm_ir, asm, obj })
}
