//! The command line (LANGUAGE.md): parses options, runs the pipeline up to
//! what `--emit` asks for, writes outputs atomically (a failed compilation
//! leaves no partial file), and renders diagnostics.

use std::sync::Mutex;
use crate::cluster::cost::CostModel;
use crate::cluster::{ClusterConfig, FusionMode, IlpModel};
use crate::pipeline::{self, Options};
use afc_ir::diag::{render_all, SourceFile};
use afc_ir::interp::{self, Scalar, Value};
use afc_ir::labelled::{Operand, VarTy};
use afc_ir::types::Prim;
use clap::Parser;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Emit {
    /// Object file (the default).
    Obj,
    /// The C header declaring the exported functions.
    Header,
    /// Textual LLVM IR after optimisation.
    LlvmIr,
    /// Assembly.
    Asm,
    /// The labelled let-bound program.
    Labelled,
    /// Each array's size and each node's iteration size.
    Sizes,
    /// The dependency graph with fusible and fusion-preventing edges.
    Graph,
    /// The clustering ILP in CPLEX LP format.
    Ilp,
    /// The clusters, in the format of LANGUAGE.md.
    Clusters,
    /// The fusion tree of each cluster.
    FusionTree,
    /// The explicitly loopy IR.
    LoopIr,
    /// Loops, array reads and writes and intermediate arrays, per cluster and in total.
    Cost,
    /// Per fusible edge: fused, or why not (a constraint, or the cost model).
    FusionReport,
    /// The dependency graph with clusters as boxes, for Graphviz (`dot -Tsvg`).
    Dot,
}

/// The exit statuses, for `--help` (docs/cli.md lists them too).
const EXIT_CODES: &str = "Exit status:
  0   success
  1   the program has errors (diagnostics on stderr), or an output cannot be written
  2   bad command line
  3   --interpret: the function failed at run time (its error is printed)
  70  internal compiler error (a bug in afc; details in the file it names)";

/// `afc --version`: afc's version and the LLVM and solvers it was built with.
fn long_version() -> &'static str {
    static TEXT: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    TEXT.get_or_init(|| format!("{}\nLLVM {}\nHiGHS {}\nCBC {}", env!("CARGO_PKG_VERSION"), afc_codegen_llvm::llvm_version(), afc_cluster_highs::version(), afc_cluster_cbc::version()))
}

/// The clustering ILP's solver (`--solver`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SolverKind {
    /// HiGHS: the default (docs/ilp.md, "Solvers").
    Highs,
    /// COIN-OR CBC.
    Cbc,
}

impl SolverKind {
    pub fn solver(self) -> &'static (dyn afc_ir::lp::Solver + Sync) {
        match self {
            SolverKind::Highs => &afc_cluster_highs::Highs,
            SolverKind::Cbc => &afc_cluster_cbc::Cbc,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TwoPass {
    /// Chunk by chunk: a chunk's second pass reads its inputs from cache.
    LookBack,
    /// Every first pass, then every second pass (reduce-then-scan).
    Barrier,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ErrorFormat {
    /// `FILE:LINE:COL: error: MESSAGE`, the source line and a caret.
    Human,
    /// One JSON object per diagnostic, one per line (docs/cli.md).
    Json,
}

/// afc: an optimally fusing compiler for .acc array programs.
#[derive(Parser, Debug)]
#[command(name = "afc", version, long_version = long_version(), about, after_help = EXIT_CODES)]
pub struct Cli {
    /// The .acc source file (`-` reads standard input), or a loop IR file
    /// (.lir, as --emit=loop-ir writes it) to verify and compile as it stands.
    pub file: PathBuf,
    /// Optimisation level, -O0 to -O3.
    #[arg(short = 'O', default_value_t = 2, value_parser = clap::value_parser!(u8).range(0..=3))]
    pub opt: u8,
    /// DWARF line tables: each loop maps to its cluster's `.acc` line (gdb,
    /// perf and objdump -l show source lines).
    #[arg(short = 'g')]
    pub debug: bool,
    /// Output file (default: FILE.o for obj; standard output for text);
    /// `-` is standard output.
    #[arg(short = 'o')]
    pub output: Option<PathBuf>,
    /// What to emit, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "obj")]
    pub emit: Vec<Emit>,
    /// How to cluster combinators into loops.
    #[arg(long, value_enum, default_value = "ilp")]
    pub fusion: FusionMode,
    /// Allow reassociation and contraction of floating-point arithmetic.
    #[arg(long)]
    pub fast_math: bool,
    /// Float folds combine in index order with one accumulator, so results
    /// are bitwise the reference interpreter's (slower reductions).
    #[arg(long)]
    pub strict_fp: bool,
    /// Every loop nest runs on the calling thread only (by default nests
    /// whose positions are independent run on all workers; see
    /// afc_set_num_threads).
    #[arg(long)]
    pub sequential: bool,
    /// The fewest innermost positions a parallel nest hands to a worker as
    /// one chunk (default: by the work per position, 256 to 65536); 1 cuts
    /// even small arrays into chunks (testing).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub parallel_grain: Option<u64>,
    /// How a parallel nest that carries a scan's value or a stored filter's
    /// cursor from chunk to chunk runs its two passes: `look-back` (each
    /// chunk's passes back to back, its start from the chunk before it) or
    /// `barrier` (every chunk's first pass, then every chunk's second).
    #[arg(long, value_enum, value_name = "HOW", default_value = "look-back")]
    pub two_pass: TwoPass,
    /// Target triple (default: the host).
    #[arg(long)]
    pub target: Option<String>,
    /// Target CPU: `native` (the host's, with all its features; the default
    /// when the target is the host) or a name LLVM knows (`x86-64-v3`,
    /// `znver4`, …).
    #[arg(long)]
    pub cpu: Option<String>,
    /// The last-level cache the code is tuned for, in bytes (`K`, `M`, `G`
    /// suffixes): a loop whose outputs are larger writes them with
    /// streaming stores (default: the host's, at most 4M per CPU this
    /// process may use; 32M for another CPU or target).
    #[arg(long, value_name = "SIZE", value_parser = cache_size)]
    pub cache_size: Option<u64>,
    /// The ILP formulation: `edge` (edge-local, papers/002) or `pairs` (all pairs, papers/000).
    #[arg(long, value_enum, default_value = "edge")]
    pub ilp_model: IlpModel,
    /// What the ILP minimises (docs/ilp.md, "Cost models"): `traffic`
    /// (default), `bytes`, `robinson` (papers/000; the only one of the
    /// all-pairs model, and its default), or papers/002's `edges`,
    /// `arrays`, `accesses`.
    #[arg(long, value_enum, value_name = "MODEL")]
    pub cost: Option<CostModel>,
    /// Branch-and-bound nodes the ILP solver may explore for one function:
    /// the deterministic limit (default: scaled with the model's size; parts
    /// of over 7,100 non-zeros also under a limit of simplex iterations, and
    /// of over 16,800 not searched; docs/ilp.md). The best clustering found
    /// is used when it is reached; an explicit N sets no iteration limit.
    #[arg(long, value_name = "N")]
    pub ilp_nodes: Option<u64>,
    /// The ILP solver: `highs` (default) or `cbc` (docs/ilp.md, "Solvers").
    #[arg(long, value_enum, default_value = "highs")]
    pub solver: SolverKind,
    /// Seconds the ILP solver may spend on one function: a safety net that
    /// makes the result depend on the machine's speed, reported when it
    /// fires (-v).
    #[arg(long, default_value_t = 10.0, value_parser = non_negative_seconds)]
    pub ilp_time_limit: f64,
    /// How many parts LLVM compiles an object file in, each in a process
    /// of its own, at once (default: two when both have enough work, for
    /// any machine, so the object is the same on all; 1: the module
    /// whole). Text outputs, `-g` and `-O0` are made whole.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=afc_codegen_llvm::MAX_UNITS as i64))]
    pub codegen_units: Option<u32>,
    /// Run the verifiers after every pass (always on in debug builds).
    #[arg(long)]
    pub verify: bool,
    /// No warnings.
    #[arg(short = 'w')]
    pub no_warnings: bool,
    /// Warnings are errors: afc fails after printing them.
    #[arg(long)]
    pub werror: bool,
    /// How diagnostics are written to stderr.
    #[arg(long, value_enum, default_value = "human")]
    pub error_format: ErrorFormat,
    /// Say how each function was clustered.
    #[arg(short, long)]
    pub verbose: bool,
    /// Print the time each pass takes.
    #[arg(long)]
    pub time_passes: bool,
    /// Run the exported function NAME in the reference interpreter on the
    /// ARGS after `--` (one per flattened parameter: `1.5`, `true`,
    /// `[1,2,3]`) and print its results.
    #[arg(long, value_name = "NAME")]
    pub interpret: Option<String>,
    /// Arguments for --interpret, after `--`.
    #[arg(last = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// The input file and the pass running now, for the report of an internal
/// compiler error (main.rs).
static INPUT: Mutex<Option<String>> = Mutex::new(None);
static PASS: Mutex<&'static str> = Mutex::new("driver");

pub fn current_input() -> Option<String> {
    INPUT.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

pub fn current_pass() -> String {
    PASS.lock().unwrap_or_else(|e| e.into_inner()).to_string()
}

pub fn set_pass(name: &'static str) {
    *PASS.lock().unwrap_or_else(|e| e.into_inner()) = name;
}

pub fn main() -> i32 {
    let cli = Cli::parse();
    *INPUT.lock().unwrap_or_else(|e| e.into_inner()) = Some(cli.file.display().to_string());
    match run(&cli) {
        Ok(()) => 0,
        Err(code) => code,
    }
}

fn non_negative_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x >= 0.0 && x.is_finite() => Ok(x),
        _ => Err(format!("'{}' is not a number of seconds (0 or more)", s)),
    }
}

fn cache_size(s: &str) -> Result<u64, String> {
    match crate::strategy::parse_size(s) {
        Some(b) if b > 0 => Ok(b),
        _ => Err(format!("'{}' is not a size in bytes (digits, then K, M or G)", s)),
    }
}

fn fail(msg: &str) -> i32 {
    eprintln!("afc: error: {}", msg);
    1
}

/// Whether a path is `-`: standard input or output.
fn is_stdio(p: &Path) -> bool {
    p.as_os_str() == "-"
}

/// The source text and the name diagnostics give it. Text that is not
/// UTF-8 is an error at its first bad byte, shown in its line.
fn read_input(cli: &Cli) -> Result<(String, String), i32> {
    let path = &cli.file;
    let (name, bytes) = if is_stdio(path) {
        let mut bytes = vec![];
        std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes).map_err(|e| fail(&format!("cannot read standard input: {}", e)))?;
        ("<stdin>".to_string(), bytes)
    } else {
        (path.display().to_string(), std::fs::read(path).map_err(|e| fail(&format!("cannot read {}: {}", path.display(), e)))?)
    };
    match String::from_utf8(bytes) {
        Ok(text) => Ok((name, text)),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let byte = e.as_bytes()[at];
            // The lossy text keeps the valid prefix byte for byte, so the
            // offset points at the first replacement character.
            let file = SourceFile::new(name, String::from_utf8_lossy(e.as_bytes()).into_owned());
            let d = afc_ir::diag::Diagnostic::error(afc_ir::diag::Span::new(at, at + char::REPLACEMENT_CHARACTER.len_utf8()), format!("the source is not UTF-8: byte 0x{:02x} here", byte));
            report(cli, &[d], &file);
            Err(1)
        }
    }
}

fn run(cli: &Cli) -> Result<(), i32> {
    let cost = match (cli.ilp_model, cli.cost) {
        (IlpModel::Pairs, Some(c)) if c != CostModel::Robinson => {
            eprintln!("afc: error: --ilp-model=pairs has only papers/000's cost model (--cost=robinson), not --cost={}", c.name());
            return Err(2);
        }
        (IlpModel::Pairs, _) => CostModel::Robinson,
        (IlpModel::Edge | IlpModel::Lazy, c) => c.unwrap_or(CostModel::Traffic),
    };
    let copts = afc_codegen_llvm::Options { opt_level: cli.opt, fast_math: cli.fast_math, target: cli.target.clone(), cpu: cli.cpu.clone(), debug: cli.debug, codegen_units: cli.codegen_units.map(|n| n as usize) };
    afc_codegen_llvm::check_target(&copts).map_err(|e| {
        eprintln!("afc: error: {}", e);
        2
    })?;
    let (name, text) = read_input(cli)?;
    if cli.file.extension().map(|e| e == "lir").unwrap_or(false) {
        return run_loop_ir(cli, &text, &copts);
    }
    let file = SourceFile::new(name, text);
    let native = matches!(cli.cpu.as_deref(), None | Some("native"));
    let llc_bytes = crate::strategy::llc_bytes(cli.cache_size, cli.target.is_none() && native);
    let cpu = crate::strategy::CpuModel { vector_bits: afc_codegen_llvm::vector_bits(&copts), llc_bytes, compress_bits: afc_codegen_llvm::compress_bits(&copts), math_bits: afc_codegen_llvm::math_bits(&copts), register_bits: afc_codegen_llvm::register_bits(&copts), divide_bits: afc_codegen_llvm::divide_bits(&copts) };
    let opts = Options {
        cluster: ClusterConfig { mode: cli.fusion, model: cli.ilp_model, cost, nodes: cli.ilp_nodes, time_limit: cli.ilp_time_limit, solver: cli.solver.solver() },
        strategy: crate::strategy::Config { cpu, strict_fp: cli.strict_fp, fast_math: cli.fast_math, libmvec: afc_codegen_llvm::has_libmvec(&copts), sequential: cli.sequential, grain: cli.parallel_grain, barrier: cli.two_pass == TwoPass::Barrier },
        verify: cli.verify || cfg!(debug_assertions),
        verbose: cli.verbose,
        notes: !cli.no_warnings,
        time_passes: cli.time_passes,
        lower: cli.emit.iter().any(|e| matches!(e, Emit::LoopIr | Emit::LlvmIr | Emit::Asm | Emit::Obj)),
    };
    let diag = |ds: Vec<afc_ir::diag::Diagnostic>| {
        report(cli, &ds, &file);
        1
    };
    let (program, warnings) = pipeline::front(&file, &opts).map_err(diag)?;
    if !cli.no_warnings && !warnings.is_empty() {
        report(cli, &warnings, &file);
        if cli.werror {
            eprintln!("afc: error: warnings are errors (--werror)");
            return Err(1);
        }
    }
    if let Some(name) = &cli.interpret {
        return interpret(&program, name, &cli.args);
    }
    let mut text_out = String::new();
    let emits = &cli.emit;
    if emits.contains(&Emit::Labelled) {
        text_out += &afc_ir::labelled::print_program(&program);
    }
    if emits.contains(&Emit::Header) {
        text_out += &crate::header::header(&program, &file);
    }
    let needs_middle = emits.iter().any(|e| !matches!(e, Emit::Labelled | Emit::Header));
    if needs_middle {
        let stages = pipeline::middle(&file, program, &opts).map_err(diag)?;
        for e in emits {
            if *e == Emit::Dot {
                let bodies: Vec<_> = stages
                    .functions
                    .iter()
                    .flat_map(|top| top.bodies().into_iter().map(move |(prefix, fs)| (top, prefix, fs)))
                    .map(|(top, prefix, fs)| {
                        let name = if prefix.is_empty() { top.labelled.name.clone() } else { format!("{} (cluster {})", top.labelled.name, prefix.trim_end_matches('.')) };
                        (name, &fs.labelled, &fs.graph, &fs.clustering)
                    })
                    .collect();
                text_out += &crate::report::dot(&bodies, &file.name);
                continue;
            }
            for top in &stages.functions {
                if *e == Emit::Clusters {
                    text_out += &top.print_clusters();
                    continue;
                }
                // Each branch of an array-level `if` is a body of its own,
                // printed after its function as `fn NAME.N.then`.
                for (_, fs) in top.bodies() {
                    let f = &fs.labelled;
                    match e {
                        Emit::Sizes => text_out += &afc_ir::sizes::print(f, &fs.sizes),
                        Emit::Graph => text_out += &afc_ir::graph::print(f, &fs.graph, &fs.sizes),
                        Emit::Ilp => match cli.ilp_model {
                            IlpModel::Edge => text_out += &crate::cluster::ilp::solved_model(f, &fs.graph, &opts.cluster).0.lp.to_lp_format(),
                            // The model as the solve left it: with the rows it added.
                            IlpModel::Lazy => text_out += &crate::cluster::ilp::solve(f, &fs.graph, &opts.cluster).1.to_lp_format(),
                            IlpModel::Pairs if fs.graph.len() > crate::cluster::pairs::MAX_NODES => {
                                return Err(fail(&format!(
                                    "fn {}: {} nodes, over {} for the all-pairs model (a variable per pair): --ilp-model=edge prints a model of any size",
                                    f.name,
                                    fs.graph.len(),
                                    crate::cluster::pairs::MAX_NODES
                                )))
                            }
                            IlpModel::Pairs => text_out += &crate::cluster::pairs::model(f, &fs.graph).lp.to_lp_format(),
                        },
                        Emit::FusionTree => text_out += &afc_ir::fusion::print(f, &fs.trees),
                        Emit::Cost => text_out += &afc_ir::cost::print(f, &fs.graph, &fs.sizes, &fs.clustering),
                        Emit::FusionReport => text_out += &crate::report::fusion_report(f, &fs.graph, &fs.clustering, &opts.cluster),
                        _ => {}
                    }
                }
            }
        }
        if emits.contains(&Emit::LoopIr) {
            text_out += &afc_ir::loops::print(&stages.loops);
        }
        back_end(cli, &stages.loops, &copts, &mut text_out)?;
    }
    finish(cli, &text_out)
}

/// A loop IR file: parsed, verified and compiled as it stands (its
/// strategies are obeyed, not chosen again).
fn run_loop_ir(cli: &Cli, text: &str, copts: &afc_codegen_llvm::Options) -> Result<(), i32> {
    let name = cli.file.display().to_string();
    let program = afc_ir::loops::parse(text).map_err(|e| fail(&format!("{}: {}", name, e)))?;
    for f in &program.functions {
        afc_ir::loops::verify(f).map_err(|e| fail(&format!("{}: fn {}: invalid loop IR: {}", name, f.name, e)))?;
    }
    let mut text_out = String::new();
    for e in &cli.emit {
        match e {
            Emit::LoopIr => text_out += &afc_ir::loops::print(&program),
            Emit::Obj | Emit::Asm | Emit::LlvmIr => {}
            other => return Err(fail(&format!("--emit={} needs a .acc source; a .lir file gives loop-ir, llvm-ir, asm and obj", format!("{:?}", other).to_lowercase()))),
        }
    }
    back_end(cli, &program, copts, &mut text_out)?;
    finish(cli, &text_out)
}

/// LLVM IR, assembly and object code, as `--emit` asks.
fn back_end(cli: &Cli, loops: &afc_ir::loops::Program, copts: &afc_codegen_llvm::Options, text_out: &mut String) -> Result<(), i32> {
    let emits = &cli.emit;
    if !emits.iter().any(|e| matches!(e, Emit::Obj | Emit::Asm | Emit::LlvmIr)) {
        return Ok(());
    }
    let module = if is_stdio(&cli.file) { "stdin".into() } else { cli.file.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_else(|| "afc".into()) };
    set_pass("codegen");
    let started = std::time::Instant::now();
    let want = afc_codegen_llvm::Want { llvm_ir: emits.contains(&Emit::LlvmIr), asm: emits.contains(&Emit::Asm), obj: emits.contains(&Emit::Obj) };
    let art = afc_codegen_llvm::compile(loops, &module, copts, want).map_err(|e| fail(&e))?;
    if cli.time_passes {
        eprintln!("afc: pass {:<12} {:>9.3} ms ({} part{})", "llvm", started.elapsed().as_secs_f64() * 1e3, art.units, if art.units == 1 { "" } else { "s" });
    }
    if let Some(ir) = &art.llvm_ir {
        *text_out += ir;
    }
    if let Some(asm) = &art.asm {
        *text_out += &String::from_utf8_lossy(asm);
    }
    if let Some(obj) = &art.obj {
        let only_obj = emits.iter().all(|e| *e == Emit::Obj);
        let path = match (&cli.output, only_obj) {
            (Some(p), true) => p.clone(),
            (Some(_), false) => return Err(fail("-o with object code and text output: emit them in separate runs")),
            (None, _) if is_stdio(&cli.file) => return Err(fail("the source is standard input: name the object file with -o (`-o -` writes it to standard output)")),
            (None, _) => cli.file.with_extension("o"),
        };
        write_output(cli, &path, obj)?;
    }
    Ok(())
}

/// Writes the text outputs to `-o` or standard output.
fn finish(cli: &Cli, text_out: &str) -> Result<(), i32> {
    if !text_out.is_empty() {
        write_output(cli, cli.output.as_deref().unwrap_or(Path::new("-")), text_out.as_bytes())?;
    }
    Ok(())
}

/// Writes an output: `-` to standard output, a file atomically; never
/// over the source file (as `cc -c a.c -o a.c` refuses to).
fn write_output(cli: &Cli, path: &Path, bytes: &[u8]) -> Result<(), i32> {
    if is_stdio(path) {
        let mut so = std::io::stdout().lock();
        return so.write_all(bytes).and_then(|_| so.flush()).map_err(|e| fail(&format!("cannot write to standard output: {}", e)));
    }
    if !is_stdio(&cli.file) && same_file(path, &cli.file) {
        return Err(fail(&format!("the output {} is the source file: name another with -o", path.display())));
    }
    write_atomically(path, bytes).map_err(|e| fail(&format!("cannot write {}: {}", path.display(), e)))
}

/// Whether two paths name one existing file (links and `./` included).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// Writes through a temporary file in the same folder, renamed into place,
/// with the mode a new file gets (0666 less the umask: 0644 usually). An
/// existing output that is not a file — `/dev/null`, a pipe, a terminal —
/// is written to as it is: renamed over, `/dev/null` became a file for
/// everyone (as root) or the write failed (as anyone else).
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let mut out = std::fs::OpenOptions::new().write(true).open(path)?;
        return out.write_all(bytes).and_then(|_| out.flush());
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    // tempfile's errors name the temporary file, which the user never sees.
    let mut tmp = tempfile::Builder::new().prefix(".afc-").permissions(std::fs::Permissions::from_mode(0o666)).tempfile_in(dir).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => format!("no folder {}", dir.display()),
            k => format!("{} in {}", k, dir.display()),
        };
        std::io::Error::new(e.kind(), why)
    })?;
    tmp.write_all(bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Writes diagnostics to stderr in the `--error-format` asked for.
fn report(cli: &Cli, ds: &[afc_ir::diag::Diagnostic], file: &SourceFile) {
    match cli.error_format {
        ErrorFormat::Human => eprint!("{}", render_all(ds, file)),
        ErrorFormat::Json => {
            for d in ds {
                eprintln!("{}", d.to_json(file));
            }
        }
    }
}

// ---------------------------------------------------------------- interpreter mode

fn parse_scalar(s: &str, p: Prim) -> Option<Scalar> {
    let s = s.trim();
    Some(match p {
        Prim::Bool => match s {
            "true" | "1" => Scalar::Bool(true),
            "false" | "0" => Scalar::Bool(false),
            _ => return None,
        },
        Prim::I32 => Scalar::I32(s.parse().ok()?),
        Prim::I64 => Scalar::I64(s.parse().ok()?),
        Prim::F32 => Scalar::F32(s.parse().ok()?),
        Prim::F64 => Scalar::F64(s.parse().ok()?),
    })
}

/// Reads an array argument of rank `rank`: nested lists (`[[1,2],[3,4]]`),
/// or a shape and the elements in row-major order (`2x2:[1,2,3,4]`,
/// `0x5:[]`, for shapes nested lists cannot write).
fn parse_array(text: &str, rank: usize, p: Prim) -> Option<(Vec<usize>, Vec<Scalar>)> {
    let flat = |s: &str| -> Option<Vec<Scalar>> {
        let inner = s.trim().strip_prefix('[')?.strip_suffix(']')?;
        if inner.trim().is_empty() {
            return Some(vec![]);
        }
        inner.split(',').map(|x| parse_scalar(x, p)).collect()
    };
    if let Some((shape, data)) = text.split_once(':') {
        let dims: Vec<usize> = shape.split('x').map(|d| d.trim().parse().ok()).collect::<Option<_>>()?;
        let xs = flat(data)?;
        return (dims.len() == rank && dims.iter().product::<usize>() == xs.len()).then_some((dims, xs));
    }
    // Nested lists: one level per dimension, rectangular.
    fn nested(s: &str, depth: usize, p: Prim, shape: &mut Vec<Option<usize>>, out: &mut Vec<Scalar>) -> Option<()> {
        let s = s.trim();
        if depth == shape.len() {
            out.push(parse_scalar(s, p)?);
            return Some(());
        }
        let inner = s.strip_prefix('[')?.strip_suffix(']')?;
        let mut items = vec![];
        let (mut level, mut start) = (0, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '[' => level += 1,
                ']' => level -= 1,
                ',' if level == 0 => {
                    items.push(&inner[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        if !inner.trim().is_empty() {
            items.push(&inner[start..]);
        }
        match shape[depth] {
            Some(n) if n != items.len() => return None,
            _ => shape[depth] = Some(items.len()),
        }
        for it in items {
            nested(it, depth + 1, p, shape, out)?;
        }
        Some(())
    }
    let mut shape = vec![None; rank];
    let mut xs = vec![];
    nested(text, 0, p, &mut shape, &mut xs)?;
    Some((shape.into_iter().map(|d| d.unwrap_or(0)).collect(), xs))
}

/// Formats one result the way the test drivers print them: `name = v`,
/// `name = [v, v]`, or for a matrix `name = 2x3:[v, …]` (its shape, then
/// its elements row-major); floats with 17 significant digits.
pub fn format_value(name: &str, v: &Value) -> String {
    let one = |s: &Scalar| match s {
        Scalar::Bool(b) => format!("{}", *b as i32),
        Scalar::I32(x) => x.to_string(),
        Scalar::I64(x) => x.to_string(),
        // f32 through f64: the exact value, as the C drivers print it.
        Scalar::F32(x) => format!("{:e}", *x as f64),
        Scalar::F64(x) => format!("{:e}", x),
    };
    match v {
        Value::Scalar(s) => format!("{} = {}", name, one(s)),
        Value::Array(_, shape, xs) if shape.len() == 1 => format!("{} = [{}]", name, xs.iter().map(one).collect::<Vec<_>>().join(", ")),
        Value::Array(_, shape, xs) => {
            let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            format!("{} = {}:[{}]", name, dims.join("x"), xs.iter().map(one).collect::<Vec<_>>().join(", "))
        }
    }
}

fn interpret(program: &afc_ir::labelled::Program, name: &str, args: &[String]) -> Result<(), i32> {
    let f = program
        .functions
        .iter()
        .find(|f| f.name == name && f.exported)
        .ok_or_else(|| fail(&format!("no exported function '{}'", name)))?;
    if args.len() != f.params.len() {
        return Err(fail(&format!("'{}' takes {} arguments (flattened), {} given", name, f.params.len(), args.len())));
    }
    let mut vals = vec![];
    for (a, l) in args.iter().zip(&f.params) {
        let Operand::Var(v) = l.value else { unreachable!() };
        let bad = || fail(&format!("cannot read '{}' as parameter {}", a, l.c_name));
        vals.push(match f.var(v).ty {
            VarTy::Scalar(p) => Value::Scalar(parse_scalar(a, p).ok_or_else(bad)?),
            VarTy::Array(r, p) => {
                let (shape, xs) = parse_array(a, r as usize, p).ok_or_else(bad)?;
                Value::Array(p, shape, xs)
            }
        });
    }
    // Recursion as deep as compiled code allows needs more stack than a
    // main thread has: the interpreter runs on a thread of its own.
    let result = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(4 << 30)
            .spawn_scoped(s, || interp::run(program, f, &vals))
            .expect("afc: cannot start the interpreter's thread")
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
    });
    match result {
        Ok(rs) => {
            // Named as the header names them.
            let (_, names) = crate::header::prototype(f);
            for (r, n) in rs.iter().zip(&names) {
                println!("{}", format_value(n, r));
            }
            Ok(())
        }
        Err(e) => {
            println!("error {}", e.kind);
            Err(3)
        }
    }
}
