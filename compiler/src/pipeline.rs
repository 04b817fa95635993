//! The pass pipeline, in order. Each pass is a function from one
//! representation to the next; the verifier of each representation runs
//! after the pass that made it (always in debug builds, and with `--verify`).
//!
//! front end → labelled program → sizes → dependency graph → clustering →
//! fusion trees → loop IR → (codegen-llvm) LLVM IR → object code.
//! Sizes come before the graph because iteration sizes label its nodes; the
//! clustering needs the graph; the fusion tree needs the clustering (which
//! arrays stay manifest); the loop IR composes bodies along the tree.

use crate::cluster::{self, ClusterConfig};
use afc_ir::cluster::Clustering;
use afc_ir::diag::{Diagnostic, SourceFile};
use afc_ir::fusion::FusionTree;
use afc_ir::graph::DepGraph;
use afc_ir::labelled::{self, Function, Program};
use afc_ir::loops;
use afc_ir::sizes::Sizes;
use std::time::Instant;

pub struct Options {
    pub cluster: ClusterConfig,
    pub strategy: crate::strategy::Config,
    pub verify: bool,
    pub verbose: bool,
    /// Say, without -v, when a clustering is not proven optimal (off with -w).
    pub notes: bool,
    pub time_passes: bool,
    /// Lower to loop IR and choose its strategies: only what the loop IR
    /// is for (`--emit=loop-ir`, LLVM IR, assembly, objects) needs them; an
    /// emit of an earlier stage stops after the fusion trees.
    pub lower: bool,
}

/// Everything the middle end computed for one function, or for one branch
/// of an array-level `if` (clustered on its own, LANGUAGE.md).
pub struct FunctionStages {
    pub labelled: Function,
    pub sizes: Sizes,
    pub graph: DepGraph,
    pub clustering: Clustering,
    pub trees: Vec<FusionTree>,
    /// The stages of each `if`'s branches (then, else).
    pub branches: indexmap::IndexMap<labelled::NodeId, Vec<FunctionStages>>,
}

pub struct Stages {
    pub program: Program,
    pub functions: Vec<FunctionStages>,
    pub loops: loops::Program,
}

fn ice(pass: &str, what: &str, dump: &str) -> ! {
    afc_ir::ice::fail(pass, what, dump)
}

/// A testing hook (`testsuite/diagnostics/internal-errors.test`):
/// `AFC_TEST_CORRUPT=PASS` corrupts that pass's output, so the check after
/// it must catch it and take the internal-error path.
pub fn corrupt(pass: &str) -> bool {
    std::env::var("AFC_TEST_CORRUPT").map(|v| v == pass).unwrap_or(false)
}

struct Timer {
    on: bool,
}

impl Timer {
    fn time<T>(&self, name: &'static str, f: impl FnOnce() -> T) -> T {
        crate::driver::set_pass(name);
        let t = Instant::now();
        let r = f();
        if self.on {
            eprintln!("afc: pass {:<12} {:>9.3} ms", name, t.elapsed().as_secs_f64() * 1e3);
        }
        r
    }
}

impl FunctionStages {
    /// This body and every branch inside it, depth first, with the prefix
    /// its clusters are numbered by (`2.then.` for the then branch of the
    /// `if` that is cluster 2).
    pub fn bodies(&self) -> Vec<(String, &FunctionStages)> {
        fn walk<'a>(fs: &'a FunctionStages, prefix: String, out: &mut Vec<(String, &'a FunctionStages)>) {
            out.push((prefix.clone(), fs));
            let of = fs.clustering.cluster_of();
            for (n, bs) in &fs.branches {
                for (b, what) in bs.iter().zip(["then", "else"]) {
                    walk(b, format!("{}{}.{}.", prefix, of[n], what), out);
                }
            }
        }
        let mut out = vec![];
        walk(self, String::new(), &mut out);
        out
    }

    /// `--emit=clusters` (LANGUAGE.md): the function's clusters, each
    /// array-level `if` followed by its branches' as `cluster N.then.K: …`.
    pub fn print_clusters(&self) -> String {
        fn walk(fs: &FunctionStages, prefix: &str, out: &mut String) {
            let f = &fs.labelled;
            for (i, members) in fs.clustering.clusters.iter().enumerate() {
                let names: Vec<&str> = members.iter().map(|n| f.node(*n).name.as_str()).collect();
                out.push_str(&format!("cluster {}{}: {}\n", prefix, i, names.join(" ")));
                if let Some(bs) = fs.branches.get(&members[0]) {
                    for (b, what) in bs.iter().zip(["then", "else"]) {
                        walk(b, &format!("{}{}.{}.", prefix, i, what), out);
                    }
                }
            }
        }
        let mut out = format!("fn {}\n", self.labelled.name);
        walk(self, "", &mut out);
        out
    }
}

/// The loop IR's printed form reads back as the same IR (checked by
/// printing the parsed text again).
fn round_trip(f: &loops::Function) {
    let p = loops::Program { functions: vec![f.clone()] };
    let text = loops::print(&p);
    match loops::parse(&text) {
        Ok(back) if loops::print(&back) == text => {}
        Ok(back) => ice("loop-ir", "its printed form reads back differently", &format!("{}\n-- read back as --\n{}", text, loops::print(&back))),
        Err(e) => ice("loop-ir", &format!("its printed form does not read back: {}", e), &text),
    }
}

/// Source text to the labelled program and the warnings.
pub fn front(file: &SourceFile, opts: &Options) -> Result<(Program, Vec<Diagnostic>), Vec<Diagnostic>> {
    let t = Timer { on: opts.time_passes };
    let (p, warnings) = t.time("front-end", || crate::frontend::compile_source(&file.text))?;
    if opts.verify {
        for f in &p.functions {
            if let Err(e) = labelled::verify(f) {
                ice("front-end", &e, &labelled::print_program(&p));
            }
        }
    }
    Ok((p, warnings))
}

/// The labelled program to the loop IR, through every middle-end stage.
pub fn middle(file: &SourceFile, program: Program, opts: &Options) -> Result<Stages, Vec<Diagnostic>> {
    let t = Timer { on: opts.time_passes };
    let mut functions = vec![];
    let mut loop_fns = vec![];
    let mut diags: Vec<Diagnostic> = vec![];
    // Non-exported functions first: a size error inside one is reported
    // with its own names, once, not again where it is inlined.
    let mut order: Vec<&Function> = program.functions.iter().filter(|f| !f.compiled()).collect();
    order.extend(program.functions.iter().filter(|f| f.compiled()));
    for f in order {
        if let Some(d) = too_many_combinators(f) {
            diags.push(d);
            continue;
        }
        let sizes = match t.time("sizes", || crate::sizes::infer(f)) {
            Ok(s) => s,
            Err(d) => {
                if !diags.iter().any(|e| e.span == d.span) {
                    diags.push(d);
                }
                continue;
            }
        };
        if opts.verify {
            if let Err(e) = afc_ir::sizes::verify(f, &sizes) {
                ice("sizes", &e, &afc_ir::sizes::print(f, &sizes));
            }
        }
        if !f.compiled() {
            continue;
        }
        let stages = body_stages(f, sizes, opts, &t);
        if !opts.lower {
            functions.push(stages);
            continue;
        }
        let mut lf = t.time("loop-ir", || crate::lower::lower(file, &stages));
        t.time("strategy", || crate::strategy::choose(&mut lf, &opts.strategy));
        if opts.verify {
            if let Err(e) = loops::verify(&lf) {
                ice("strategy", &e, &loops::print(&loops::Program { functions: vec![lf] }));
            }
            round_trip(&lf);
        }
        loop_fns.push(lf);
        functions.push(stages);
    }
    diags.sort_by_key(|d| d.span.start);
    if !diags.is_empty() {
        return Err(diags);
    }
    Ok(Stages { program, functions, loops: loops::Program { functions: loop_fns } })
}

/// The most array combinators one body (a function's, or an array-level
/// `if` branch's) may hold: clustering keeps, per combinator, which others
/// it reaches (bit sets), so its memory grows with their square (10,000 in
/// a chain: 2.6 s and 480 MB to a clustering; 20,000: 10 s and 1.2 GB).
pub const MAX_COMBINATORS: usize = 10_000;

/// A diagnostic at the first combinator past `MAX_COMBINATORS` in a body of `f`.
fn too_many_combinators(f: &Function) -> Option<Diagnostic> {
    if f.nodes.len() > MAX_COMBINATORS {
        let n = &f.nodes[MAX_COMBINATORS];
        return Some(
            Diagnostic::error(n.span, format!("fn {} has more than {} array combinators in one body, the limit", f.name, MAX_COMBINATORS))
                .with_note("clustering's time and memory grow with the square of their number: split the work into several functions"),
        );
    }
    f.nodes.iter().find_map(|n| match &n.kind {
        afc_ir::labelled::NodeKind::If(b) => too_many_combinators(&b.then).or_else(|| too_many_combinators(&b.els)),
        _ => None,
    })
}

/// The graph, clustering and fusion trees of a function or branch, and of
/// the branches inside it.
fn body_stages(f: &Function, mut sizes: Sizes, opts: &Options, t: &Timer) -> FunctionStages {
    let graph = t.time("graph", || crate::graph::build(f, &sizes));
    if opts.verify {
        if let Err(e) = afc_ir::graph::verify(f, &graph) {
            ice("graph", &e, &afc_ir::graph::print(f, &graph, &sizes));
        }
    }
    let mut clustering = t.time("cluster", || cluster::cluster(f, &graph, &opts.cluster));
    if corrupt("cluster") {
        clustering.clusters.reverse();
    }
    if corrupt("panic") {
        panic!("AFC_TEST_CORRUPT=panic");
    }
    if opts.verbose {
        eprintln!("afc: fn {}: {} nodes, {} clusters ({})", f.name, graph.len(), clustering.clusters.len(), clustering.how);
    } else if opts.notes && opts.cluster.mode == cluster::FusionMode::Ilp && !clustering.how.contains(": optimal") && !clustering.how.contains(": empty") {
        // A limit that stops the solver changes what the user gets: said
        // even without -v.
        // The hint only where the node limit is what stopped it: a time
        // limit has its warning, a model too large for its kind its reason.
        let how = &clustering.how;
        let hint = if how.contains("node limit") || how.contains("iteration limit") { "; --ilp-nodes raises the limit" } else { "" };
        eprintln!("afc: note: fn {}: clustering not proven optimal ({}){}", f.name, how, hint);
    }
    if opts.verify {
        if let Err(e) = afc_ir::cluster::verify(f, &graph, &clustering) {
            ice("cluster", &e, &afc_ir::cluster::print(f, &clustering));
        }
    }
    let trees = t.time("fusion-tree", || crate::fusion::trees(f, &graph, &clustering));
    if opts.verify {
        if trees.len() != clustering.clusters.len() {
            ice("fusion-tree", "not one tree per cluster", &afc_ir::fusion::print(f, &trees));
        }
        for (members, tree) in clustering.clusters.iter().zip(&trees) {
            if let Err(e) = afc_ir::fusion::verify(f, &graph, members, tree) {
                ice("fusion-tree", &e, &afc_ir::fusion::print(f, &trees));
            }
        }
    }
    // Each branch is named by its place: `f.2.then` is the then branch of
    // the `if` that is cluster 2 of `f`.
    let mut branches = indexmap::IndexMap::new();
    let cluster_of = clustering.cluster_of();
    for (n, bodies) in std::mem::take(&mut sizes.bodies) {
        let stages = f
            .node(n)
            .comb()
            .bodies()
            .into_iter()
            .zip(bodies)
            .zip(["then", "else"])
            .map(|((b, s), what)| {
                let mut b = b.clone();
                b.name = format!("{}.{}.{}", f.name, cluster_of[&n], what);
                body_stages(&b, s, opts, t)
            })
            .collect();
        branches.insert(n, stages);
    }
    FunctionStages { labelled: f.clone(), sizes, graph, clustering, trees, branches }
}

