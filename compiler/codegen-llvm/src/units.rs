//! Codegen units: a module's functions split into parts that LLVM
//! optimises and compiles at once, each in a child process of its own,
//! their objects joined into the one object file afc writes
//! (docs/strategy.md, "Compile time"). LLVM's work on one function hardly
//! depends on the others here: a loop nest's chunk function is called
//! only by the runtime, through its address, and the exported function
//! that passes it is glue, compiled as at -O0.
//!
//! The split depends on the IR alone — never on the machine's cores — so
//! the object file is the same on every machine.

use std::collections::HashMap;

use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::module::{Linkage, Module};
use inkwell::values::{AsValueRef, FunctionValue};
use inkwell::GlobalVisibility;

/// The least work, in weighted instructions, the lighter of two parts
/// must have for `auto` to split a module: a part's process and the join
/// cost about a millisecond, LLVM takes some 30 µs per instruction at
/// -O3, so a part of 150 takes several.
const MIN_PART: usize = 150;

/// Glue (`optnone`) is compiled as at -O0: about a quarter of the work per
/// instruction.
const GLUE_SHARE: usize = 4;

/// The most parts `--codegen-units` may ask for.
pub const MAX_UNITS: usize = 16;

/// The fewest instructions of glue that make a part of their own,
/// compiled as at -O0 in its code generation too (`Partition::glue`).
/// LLVM's greedy register allocator and its -O3 pipeline's module passes
/// run on an `optnone` function all the same: a 2,000-combinator
/// function's glue (45,000 instructions) took 3.2 s of their time against
/// 0.3 s at -O0, 800 combinators' (18,000) 0.9 s against 0.15 (2-core
/// Intel Xeon, 2026-11-29). Smaller programs keep their glue among the
/// other parts, where it costs little (and their objects stay as they
/// were).
const GLUE_ALONE: usize = 8192;

/// How a module is split: the names of the functions whose bodies each
/// part keeps, heaviest part first (none: the module is compiled whole),
/// and which part, if any, is glue alone, compiled at -O0.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Partition {
    pub parts: Vec<Vec<String>>,
    pub glue: Option<usize>,
}

/// How to split `module`. `units`: `None` for the default (two parts when
/// both would have `MIN_PART` of work), `Some(n)` for up to n parts
/// whatever their work; glue of `GLUE_ALONE` instructions or more is a
/// part beside them, at -O0.
pub fn partition(module: &Module, units: Option<usize>) -> Partition {
    let wanted = units.unwrap_or(2).clamp(1, MAX_UNITS);
    if wanted < 2 {
        return Partition::default();
    }
    let kind = Attribute::get_named_enum_kind_id;
    let inlined = |f: FunctionValue| f.get_enum_attribute(AttributeLoc::Function, kind("alwaysinline")).is_some();
    let glue = |f: FunctionValue| f.get_enum_attribute(AttributeLoc::Function, kind("optnone")).is_some();
    let defined: Vec<FunctionValue> = module.get_functions().filter(|f| f.count_basic_blocks() > 0).collect();
    // An always-inlined function is inlined into its callers: its work is
    // theirs, in whichever part they are.
    let index: HashMap<usize, usize> = defined.iter().enumerate().map(|(i, f)| (f.as_value_ref() as usize, i)).collect();
    let mut own = vec![0usize; defined.len()];
    let mut glue_size = 0;
    let mut calls: Vec<Vec<usize>> = vec![vec![]; defined.len()];
    for (i, f) in defined.iter().enumerate() {
        for bb in f.get_basic_blocks() {
            let mut at = bb.get_first_instruction();
            while let Some(inst) = at {
                own[i] += 1;
                for k in 0..inst.get_num_operands() {
                    if let Some(inkwell::values::Operand::Value(v)) = inst.get_operand(k) {
                        if let Some(&j) = index.get(&(v.as_value_ref() as usize)) {
                            if inlined(defined[j]) {
                                calls[i].push(j);
                            }
                        }
                    }
                }
                at = inst.get_next_instruction();
            }
        }
        if glue(*f) {
            glue_size += own[i];
            own[i] /= GLUE_SHARE;
        }
    }
    let glue_alone = glue_size >= GLUE_ALONE;
    let mut roots: Vec<(usize, String)> = vec![];
    let mut glue_part = vec![];
    for (i, f) in defined.iter().enumerate() {
        if inlined(*f) {
            continue;
        }
        if glue_alone && glue(*f) {
            glue_part.push(f.get_name().to_string_lossy().into_owned());
            continue;
        }
        let mut seen = vec![false; defined.len()];
        let mut stack = vec![i];
        let mut work = 0;
        while let Some(j) = stack.pop() {
            if std::mem::replace(&mut seen[j], true) {
                continue;
            }
            work += own[j];
            stack.extend(calls[j].iter().copied());
        }
        roots.push((work, f.get_name().to_string_lossy().into_owned()));
    }
    // Heaviest first, each to the lightest part (ties by name: the same
    // split on every run).
    roots.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let n = wanted.min(roots.len());
    let mut parts: Vec<(usize, Vec<String>)> = vec![(0, vec![]); n];
    for (work, name) in roots {
        let lightest = (0..n).min_by_key(|&p| (parts[p].0, p)).unwrap_or(0);
        parts[lightest].0 += work;
        parts[lightest].1.push(name);
    }
    parts.retain(|p| !p.1.is_empty());
    if units.is_none() && parts.iter().map(|p| p.0).min().unwrap_or(0) < MIN_PART {
        // Too little work for two: the rest is one part.
        let rest: Vec<String> = parts.into_iter().flat_map(|p| p.1).collect();
        parts = if rest.is_empty() { vec![] } else { vec![(0, rest)] };
    }
    let mut parts: Vec<Vec<String>> = parts.into_iter().map(|p| p.1).collect();
    let glue = (!glue_part.is_empty()).then(|| {
        parts.push(glue_part);
        parts.len() - 1
    });
    if parts.len() < 2 {
        return Partition::default();
    }
    Partition { parts, glue }
}

/// Makes `module` one part: the bodies of the functions in `keep` and of
/// the always-inlined ones stay, every other function becomes a
/// declaration. Internal functions of every part become hidden globals
/// (in every part alike), so that a reference from one part to another's
/// links; `join` makes them local again. `parts` is the whole partition.
pub fn keep_part(module: &Module, parts: &[Vec<String>], keep: &[String]) {
    for name in parts.iter().flatten() {
        let Some(f) = module.get_function(name) else { continue };
        let g = f.as_global_value();
        if matches!(f.get_linkage(), Linkage::Internal | Linkage::Private) {
            f.set_linkage(Linkage::External);
            g.set_visibility(GlobalVisibility::Hidden);
        }
        if keep.contains(name) {
            continue;
        }
        let decl = module.add_function(&format!("{}.elsewhere", name), f.get_type(), Some(Linkage::External));
        decl.as_global_value().set_visibility(g.get_visibility());
        f.replace_all_uses_with(decl);
        // SAFETY: nothing uses `f` any more.
        unsafe { f.delete() };
        decl.as_global_value().set_name(name);
    }
}

/// The names `keep_part` made global that `join` makes local again.
pub fn localised(module: &Module, parts: &[Vec<String>]) -> Vec<String> {
    parts.iter().flatten().filter(|name| module.get_function(name).map(|f| matches!(f.get_linkage(), Linkage::Internal | Linkage::Private)).unwrap_or(false)).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use inkwell::context::Context;

    /// A function `name` of `n` additions; `inline` marks it always-inlined,
    /// `calls` are functions it calls.
    fn function<'c>(cx: &'c Context, m: &Module<'c>, name: &str, n: usize, inline: bool, calls: &[FunctionValue<'c>]) -> FunctionValue<'c> {
        let i64t = cx.i64_type();
        let f = m.add_function(name, i64t.fn_type(&[i64t.into()], false), Some(Linkage::Internal));
        if inline {
            f.add_attribute(AttributeLoc::Function, cx.create_enum_attribute(Attribute::get_named_enum_kind_id("alwaysinline"), 0));
        }
        let b = cx.create_builder();
        b.position_at_end(cx.append_basic_block(f, "entry"));
        let mut v = f.get_nth_param(0).unwrap().into_int_value();
        for _ in 0..n {
            v = b.build_int_add(v, v, "v").unwrap();
        }
        for g in calls {
            v = b.build_call(*g, &[v.into()], "c").unwrap().try_as_basic_value().basic().unwrap().into_int_value();
        }
        b.build_return(Some(&v)).unwrap();
        f
    }

    #[test]
    fn parts_are_balanced_with_inlined_work_counted_in_its_callers() {
        let cx = Context::create();
        let m = cx.create_module("t");
        function(&cx, &m, "a", 300, false, &[]);
        function(&cx, &m, "b", 200, false, &[]);
        let body = function(&cx, &m, "c.body", 250, true, &[]);
        function(&cx, &m, "c", 3, false, &[body]);
        // a 301, c 5 + 251, b 201: heaviest first, each to the lightest part.
        assert_eq!(partition(&m, Some(2)).parts, vec![vec!["a".to_string()], vec!["c".into(), "b".into()]]);
        assert_eq!(partition(&m, None), partition(&m, Some(2)));
        assert_eq!(partition(&m, Some(3)).parts, vec![vec!["a".to_string()], vec!["c".into()], vec!["b".into()]]);
        // At most a part per function; one part is the module whole.
        assert_eq!(partition(&m, Some(16)).parts.len(), 3);
        assert_eq!(partition(&m, Some(1)), Partition::default());
        assert_eq!(partition(&m, None).glue, None);
    }

    #[test]
    fn by_default_a_module_with_little_work_is_whole() {
        let cx = Context::create();
        let m = cx.create_module("t");
        function(&cx, &m, "a", 1000, false, &[]);
        function(&cx, &m, "b", MIN_PART - 10, false, &[]);
        assert_eq!(partition(&m, None), Partition::default());
        assert_eq!(partition(&m, Some(2)).parts.len(), 2);
    }

    #[test]
    fn much_glue_is_a_part_of_its_own() {
        let cx = Context::create();
        let m = cx.create_module("t");
        let optnone = |f: FunctionValue| {
            for name in ["noinline", "optnone"] {
                f.add_attribute(AttributeLoc::Function, cx.create_enum_attribute(Attribute::get_named_enum_kind_id(name), 0));
            }
        };
        let a = function(&cx, &m, "a", 1000, false, &[]);
        function(&cx, &m, "b", 900, false, &[]);
        optnone(function(&cx, &m, "g", GLUE_ALONE, false, &[a]));
        let p = partition(&m, None);
        assert_eq!(p.parts, vec![vec!["a".to_string()], vec!["b".into()], vec!["g".into()]]);
        assert_eq!(p.glue, Some(2));
        // With little work beside it, the rest is one part.
        let m = cx.create_module("u");
        let a = function(&cx, &m, "a", 10, false, &[]);
        function(&cx, &m, "b", 10, false, &[]);
        optnone(function(&cx, &m, "g", GLUE_ALONE, false, &[a]));
        assert_eq!(partition(&m, None), Partition { parts: vec![vec!["a".to_string(), "b".into()], vec!["g".into()]], glue: Some(1) });
        // Less glue stays among the parts.
        let m = cx.create_module("v");
        function(&cx, &m, "a", 1000, false, &[]);
        optnone(function(&cx, &m, "g", GLUE_ALONE - 100, false, &[]));
        assert_eq!(partition(&m, Some(2)).glue, None);
    }

    #[test]
    fn a_part_keeps_its_bodies_and_declares_the_rest() {
        let cx = Context::create();
        let m = cx.create_module("t");
        let a = function(&cx, &m, "a", 10, false, &[]);
        function(&cx, &m, "b", 10, false, &[a]);
        let parts = vec![vec!["a".to_string()], vec!["b".to_string()]];
        assert_eq!(localised(&m, &parts), vec!["a".to_string(), "b".to_string()]);
        keep_part(&m, &parts, &parts[1]);
        let a = m.get_function("a").unwrap();
        assert_eq!(a.count_basic_blocks(), 0);
        assert_eq!(a.as_global_value().get_visibility(), GlobalVisibility::Hidden);
        assert_eq!(m.get_function("b").unwrap().get_linkage(), Linkage::External);
        assert!(m.verify().is_ok(), "{}", m.print_to_string().to_string());
    }
}
