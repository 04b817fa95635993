//! Size inference (papers/000 §1.3) for same-size combinators: constraint
//! generation from each node, solving by union-find, then rejection of
//! programs that need a rigid size equal to anything but itself.

use afc_ir::diag::{Diagnostic, Span};
use afc_ir::labelled::*;
use afc_ir::sizes::{SizeId, SizeOrigin, Sizes};
use indexmap::IndexMap;
use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq)]
enum Key {
    Param(VarId),
    /// An array an extern call returns: flexible like a parameter's size.
    Returned(VarId),
    Rigid(Operand),
}

struct Uf {
    parent: Vec<usize>,
    keys: Vec<Vec<Key>>,
    /// An array of each class, for naming it in diagnostics.
    witness: Vec<VarId>,
}

impl Uf {
    fn find(&mut self, x: usize) -> usize {
        if self.parent[x] != x {
            let r = self.find(self.parent[x]);
            self.parent[x] = r;
        }
        self.parent[x]
    }
}

/// Infers the size of every array and the iteration size of every node.
pub fn infer(f: &Function) -> Result<Sizes, Diagnostic> {
    let arrays: Vec<VarId> = (0..f.vars.len() as u32).map(VarId).filter(|v| f.var(*v).ty.is_array()).collect();
    let index: HashMap<VarId, usize> = arrays.iter().enumerate().map(|(i, v)| (*v, i)).collect();
    let mut uf = Uf { parent: (0..arrays.len()).collect(), keys: vec![vec![]; arrays.len()], witness: arrays.clone() };
    for p in f.param_vars() {
        if let Some(&i) = index.get(&p) {
            uf.keys[i].push(Key::Param(p));
        }
    }
    // Each filter's count names the size of its result.
    let filter_of: HashMap<VarId, NodeId> = f
        .node_ids()
        .filter_map(|n| if let NodeKind::Filter { count, .. } = f.node(n).kind { Some((count, n)) } else { None })
        .collect();
    let cross_of: Vec<(Operand, NodeId)> = f
        .node_ids()
        .filter_map(|n| if let NodeKind::Cross { size, .. } = f.node(n).kind { Some((size, n)) } else { None })
        .collect();
    let returned_by: IndexMap<VarId, String> = f
        .node_ids()
        .flat_map(|n| match &f.node(n).kind {
            NodeKind::Extern { func, arrays, .. } => arrays.iter().map(|(l, _)| (l[0], func.clone())).collect(),
            _ => vec![],
        })
        .collect();
    // Scalars bound to `length(a)` name a's size.
    let mut length_of: HashMap<VarId, VarId> = HashMap::new();
    for it in &f.items {
        if let Item::Stmt(Stmt::Assign { dst, rhs: Rhs::Length(a, 0), .. }) = it {
            length_of.insert(*dst, *a);
        }
    }
    let unify = |uf: &mut Uf, a: VarId, b: VarId, span: Span| -> Result<(), Diagnostic> {
        let (ra, rb) = (uf.find(index[&a]), uf.find(index[&b]));
        if ra == rb {
            return Ok(());
        }
        let (ka, kb) = (&uf.keys[ra], &uf.keys[rb]);
        // Merging is legal unless it equates a rigid size with a different
        // rigid size or with a parameter's size.
        let mut rigid: Vec<&Operand> = ka.iter().chain(kb).filter_map(|k| if let Key::Rigid(o) = k { Some(o) } else { None }).collect();
        rigid.dedup();
        let params = ka.iter().chain(kb).any(|k| matches!(k, Key::Param(_) | Key::Returned(_)));
        if rigid.len() > 1 || (!rigid.is_empty() && params) {
            let (wa, wb) = (uf.witness[ra], uf.witness[rb]);
            let describe = |ks: &Vec<Key>| -> String {
                match ks.iter().find(|k| matches!(k, Key::Rigid(_))) {
                    Some(Key::Rigid(Operand::Var(v))) if filter_of.contains_key(v) => {
                        format!("the size of filter '{}''s result, known only at run time", f.node(filter_of[v]).name)
                    }
                    Some(Key::Rigid(o)) if cross_of.iter().any(|(s, _)| s == o) => {
                        let n = cross_of.iter().find(|(s, _)| s == o).unwrap().1;
                        format!("the size of cross '{}''s result, n·m, a size of its own", f.node(n).name)
                    }
                    Some(Key::Rigid(o)) => format!("a size known only at run time ({})", match o {
                        Operand::Const(c) => c.to_string(),
                        Operand::Var(v) => format!("'{}'", f.var(*v).name),
                    }),
                    _ => match ks.iter().find_map(|k| if let Key::Returned(v) = k { Some(*v) } else { None }) {
                        Some(v) if !ks.iter().any(|k| matches!(k, Key::Param(_))) => {
                            format!("the size of what extern fn '{}' returns, known once it returns", returned_by[&v])
                        }
                        _ => "the size of a parameter".to_string(),
                    },
                }
            };
            return Err(Diagnostic::error(
                span,
                format!(
                    "the sizes of '{}' and '{}' cannot be shown equal",
                    f.var(wa).name,
                    f.var(wb).name
                ),
            )
            .with_label(f.var(wa).span, format!("'{}' has {}", f.var(wa).name, describe(ka)))
            .with_label(f.var(wb).span, format!("'{}' has {}", f.var(wb).name, describe(kb)))
            .with_note("sizes born inside the program are rigid: each equals only itself"));
        }
        let moved = std::mem::take(&mut uf.keys[rb]);
        uf.keys[ra].extend(moved);
        uf.parent[rb] = ra;
        Ok(())
    };
    for n in f.node_ids() {
        let node = f.node(n);
        let mut group: Vec<VarId> = node.streamed_inputs().to_vec();
        if !matches!(node.kind, NodeKind::Fold { .. } | NodeKind::Filter { .. } | NodeKind::Scatter { .. } | NodeKind::Extern { .. }) {
            group.extend(node.outputs());
        }
        if let NodeKind::Scatter { dest, outputs, .. } = &node.kind {
            // The result has the destination's size; dest's leaves share one.
            let all: Vec<VarId> = dest.iter().chain(outputs).copied().collect();
            for w in all.windows(2) {
                unify(&mut uf, w[0], w[1], node.span)?;
            }
        }
        if let NodeKind::Filter { outputs, count, .. } = &node.kind {
            // A transducer: its result has a rigid size of its own.
            let r = uf.find(index[&outputs[0]]);
            uf.keys[r].push(Key::Rigid(Operand::Var(*count)));
            for w in outputs.windows(2) {
                unify(&mut uf, w[0], w[1], node.span)?;
            }
        }
        if let NodeKind::Extern { arrays, .. } = &node.kind {
            // Each array an extern call returns has a flexible size, like a
            // parameter's: it may be equated with others and is checked
            // once the call returns.
            for (leaves, _) in arrays {
                let r = uf.find(index[&leaves[0]]);
                uf.keys[r].push(Key::Returned(leaves[0]));
                for w in leaves.windows(2) {
                    unify(&mut uf, w[0], w[1], node.span)?;
                }
            }
        }
        if let NodeKind::Cross { size, outputs, .. } = &node.kind {
            // n·m, born here: a rigid size named by its scalar.
            let r = uf.find(index[&outputs[0]]);
            uf.keys[r].push(Key::Rigid(*size));
        }
        if let NodeKind::Generate { size, outputs, .. } = &node.kind {
            let from = match size {
                Operand::Var(v) => length_of.get(v).copied(),
                _ => None,
            };
            match from {
                Some(a) => group.push(a),
                None => {
                    let r = uf.find(index[&outputs[0]]);
                    uf.keys[r].push(Key::Rigid(*size));
                    // Two generates of the same scalar share one rigid size.
                    let other = (0..arrays.len()).find(|&i| {
                        let ri = uf.find(i);
                        ri != r && uf.keys[ri].contains(&Key::Rigid(*size))
                    });
                    if let Some(o) = other {
                        group.push(arrays[o]);
                    }
                }
            }
        }
        for w in group.windows(2) {
            unify(&mut uf, w[0], w[1], node.span)?;
        }
    }
    for (vs, span) in &f.same_size {
        for w in vs.windows(2) {
            unify(&mut uf, w[0], w[1], *span)?;
        }
    }
    // Number the classes in order of first appearance.
    let mut class_of_root: IndexMap<usize, SizeId> = IndexMap::new();
    let mut classes = vec![];
    let mut of_array = IndexMap::new();
    for (i, v) in arrays.iter().enumerate() {
        let r = uf.find(i);
        let id = *class_of_root.entry(r).or_insert_with(|| {
            let ks = &uf.keys[r];
            let origin = match ks.iter().find_map(|k| if let Key::Rigid(o) = k { Some(*o) } else { None }) {
                Some(o) => SizeOrigin::Scalar(o),
                None => {
                    let params = ks.iter().filter_map(|k| if let Key::Param(p) = k { Some(*p) } else { None });
                    let returned = ks.iter().filter_map(|k| if let Key::Returned(p) = k { Some(*p) } else { None });
                    SizeOrigin::Params(params.chain(returned).collect())
                }
            };
            classes.push(origin);
            SizeId(classes.len() as u32 - 1)
        });
        of_array.insert(*v, id);
    }
    // An extern call iterates ⊥ (papers/000 Fig. 1.6): a class of its own.
    let iteration: Vec<SizeId> = f
        .node_ids()
        .map(|n| {
            let node = f.node(n);
            if node.is_barrier() {
                classes.push(SizeOrigin::Unknown);
                return SizeId(classes.len() as u32 - 1);
            }
            let a = node.streamed_inputs().first().or(node.outputs().first()).copied().unwrap();
            of_array[&a]
        })
        .collect();
    let mut transducer = vec![None; classes.len()];
    for n in f.node_ids() {
        if let NodeKind::Filter { outputs, .. } = &f.node(n).kind {
            transducer[of_array[&outputs[0]].0 as usize] = Some(n);
        }
    }
    let returned = returned_by.keys().copied().collect();
    Ok(Sizes { classes, of_array, iteration, transducer, returned })
}
