//! Float selects that LLVM's x86 back end would turn into branches become
//! integer selects (conditional moves), after the IR optimisations.
//!
//! A tuple fold such as an arg-max, `if q.2 > p.2 { q } else { p }`,
//! selects several floats on one float comparison. x86 instruction
//! selection lowers a float select to a compare and blend only when its
//! comparison feeds nothing else; the others become a branch around a
//! register move, on the loop's critical path even when predicted
//! (filterMax: 62 ms with the branch, 35 ms with conditional moves, one
//! worker, 2·10⁷ points). The same bits selected as `i64`/`i32` become
//! `cmov`. Selects that are a `min`/`max` of the compared values are left
//! alone: they become `minsd`/`maxsd`. Only scalar selects are touched —
//! vectorised loops already blend — and only after LLVM's IR passes, which
//! would otherwise turn the bit casts back into float selects.

use inkwell::builder::Builder;
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::values::{AnyValueEnum, BasicValue, BasicValueEnum, InstructionOpcode, InstructionValue};

/// Rewrites every float select of `module` that shares its float
/// comparison with another non-min/max float select. Returns how many.
pub fn integer_selects(cx: &Context, module: &Module) -> usize {
    let b = cx.create_builder();
    let mut rewritten = 0;
    for func in module.get_functions() {
        for bb in func.get_basic_block_iter() {
            let mut found = vec![];
            let mut i = bb.get_first_instruction();
            while let Some(ins) = i {
                if let Some(cond) = float_select_cond(ins) {
                    if shared_float_selects(cond) >= 2 {
                        found.push(ins);
                    }
                }
                i = ins.get_next_instruction();
            }
            for ins in found {
                if as_integer_select(cx, &b, ins).is_some() {
                    rewritten += 1;
                }
            }
        }
    }
    rewritten
}

/// A scalar float `select` on an `fcmp`, not a min/max of the compared
/// values: its condition.
fn float_select_cond(ins: InstructionValue) -> Option<InstructionValue> {
    if ins.get_opcode() != InstructionOpcode::Select {
        return None;
    }
    let (cond, t, f) = (value(ins, 0)?, value(ins, 1)?, value(ins, 2)?);
    if !matches!(t, BasicValueEnum::FloatValue(_)) {
        return None;
    }
    let cmp = cond.as_instruction_value()?;
    if cmp.get_opcode() != InstructionOpcode::FCmp {
        return None;
    }
    let (a, c) = (value(cmp, 0)?, value(cmp, 1)?);
    let minmax = (t == a && f == c) || (t == c && f == a);
    (!minmax).then_some(cmp)
}

/// How many of `cmp`'s users are float selects `float_select_cond` takes.
fn shared_float_selects(cmp: InstructionValue) -> usize {
    let mut n = 0;
    let mut u = cmp.get_first_use();
    while let Some(x) = u {
        // A float select's user value is a float.
        if let AnyValueEnum::FloatValue(user) = x.get_user() {
            if user.as_instruction().and_then(float_select_cond) == Some(cmp) {
                n += 1;
            }
        }
        u = x.get_next_use();
    }
    n
}

/// `select c, double a, double b` → `bitcast (select c, i64 a', i64 b')`.
fn as_integer_select<'ctx>(cx: &'ctx Context, b: &Builder<'ctx>, ins: InstructionValue<'ctx>) -> Option<()> {
    let (cond, t, f) = (value(ins, 0)?, value(ins, 1)?, value(ins, 2)?);
    let (BasicValueEnum::FloatValue(t), BasicValueEnum::FloatValue(f)) = (t, f) else { return None };
    let float_ty = t.get_type();
    let bits = if float_ty == cx.f64_type() {
        cx.i64_type()
    } else if float_ty == cx.f32_type() {
        cx.i32_type()
    } else {
        return None;
    };
    b.position_before(&ins);
    let ti = b.build_bit_cast(t, bits, "sel.t").ok()?;
    let fi = b.build_bit_cast(f, bits, "sel.f").ok()?;
    let s = b.build_select(cond.into_int_value(), ti, fi, "sel.bits").ok()?;
    let back = b.build_bit_cast(s, float_ty, "sel").ok()?;
    ins.replace_all_uses_with(&back.as_instruction_value()?);
    ins.erase_from_basic_block();
    Some(())
}

fn value(ins: InstructionValue, i: u32) -> Option<BasicValueEnum> {
    ins.get_operand(i)?.value()
}
