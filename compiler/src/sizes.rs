//! Size inference (papers/000 §1.3): each combinator states its
//! constraints (`Combinator::sizes`), solved here by union-find; a program
//! that needs a rigid size equal to anything but itself is rejected.

use afc_ir::diag::{Diagnostic, Span};
use afc_ir::combinator::{Iterates, Rigid, SizeRules};
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

/// The solver behind `SizeRules`: union-find over the arrays' sizes.
struct Solver<'a> {
    f: &'a Function,
    uf: Uf,
    index: HashMap<VarId, usize>,
    /// What made each rigid size (by its scalar), for diagnostics.
    rigid_cause: Vec<(Operand, Rigid, NodeId)>,
    /// Arrays extern calls return, with the extern's name.
    returned_by: IndexMap<VarId, String>,
    /// Scalars bound to `length(a)` name a's size.
    length_of: HashMap<VarId, VarId>,
    /// The node whose rules are being applied, and its span.
    node: NodeId,
    span: Span,
}

impl Solver<'_> {
    fn describe(&self, ks: &[Key]) -> String {
        let f = self.f;
        match ks.iter().find(|k| matches!(k, Key::Rigid(_))) {
            Some(Key::Rigid(o)) => match self.rigid_cause.iter().find(|(s, _, _)| s == o) {
                Some((_, Rigid::Filter, n)) => format!("the size of filter '{}''s result, known only at run time", f.node(*n).name),
                Some((_, Rigid::Cross, n)) => format!("the size of cross '{}''s result, n·m, a size of its own", f.node(*n).name),
                None => format!(
                    "a size known only at run time ({})",
                    match o {
                        Operand::Const(c) => c.to_string(),
                        Operand::Var(v) => format!("'{}'", f.var(*v).name),
                    }
                ),
            },
            _ => match ks.iter().find_map(|k| if let Key::Returned(v) = k { Some(*v) } else { None }) {
                Some(v) if !ks.iter().any(|k| matches!(k, Key::Param(_))) => {
                    format!("the size of what extern fn '{}' returns, known once it returns", self.returned_by[&v])
                }
                _ => "the size of a parameter".to_string(),
            },
        }
    }

    fn unify(&mut self, a: VarId, b: VarId) -> Result<(), Diagnostic> {
        let f = self.f;
        let (ra, rb) = (self.uf.find(self.index[&a]), self.uf.find(self.index[&b]));
        if ra == rb {
            return Ok(());
        }
        let (ka, kb) = (&self.uf.keys[ra], &self.uf.keys[rb]);
        // Merging is legal unless it equates a rigid size with a different
        // rigid size or with a parameter's size.
        let mut rigid: Vec<&Operand> = ka.iter().chain(kb).filter_map(|k| if let Key::Rigid(o) = k { Some(o) } else { None }).collect();
        rigid.dedup();
        let params = ka.iter().chain(kb).any(|k| matches!(k, Key::Param(_) | Key::Returned(_)));
        if rigid.len() > 1 || (!rigid.is_empty() && params) {
            let (wa, wb) = (self.uf.witness[ra], self.uf.witness[rb]);
            return Err(Diagnostic::error(self.span, format!("the sizes of '{}' and '{}' cannot be shown equal", f.var(wa).name, f.var(wb).name))
                .with_label(f.var(wa).span, format!("'{}' has {}", f.var(wa).name, self.describe(ka)))
                .with_label(f.var(wb).span, format!("'{}' has {}", f.var(wb).name, self.describe(kb)))
                .with_note("sizes born inside the program are rigid: each equals only itself"));
        }
        let moved = std::mem::take(&mut self.uf.keys[rb]);
        self.uf.keys[ra].extend(moved);
        self.uf.parent[rb] = ra;
        Ok(())
    }

    fn add_key(&mut self, a: VarId, k: Key) {
        let r = self.uf.find(self.index[&a]);
        self.uf.keys[r].push(k);
    }
}

impl SizeRules for Solver<'_> {
    fn same(&mut self, arrays: &[VarId]) -> Result<(), Diagnostic> {
        for w in arrays.windows(2) {
            self.unify(w[0], w[1])?;
        }
        Ok(())
    }
    fn rigid(&mut self, array: VarId, size: Operand, cause: Rigid) -> Result<(), Diagnostic> {
        self.rigid_cause.push((size, cause, self.node));
        self.add_key(array, Key::Rigid(size));
        Ok(())
    }
    fn sized(&mut self, array: VarId, size: Operand) -> Result<(), Diagnostic> {
        let from = match size {
            Operand::Var(v) => self.length_of.get(&v).copied(),
            _ => None,
        };
        match from {
            Some(a) => self.unify(array, a),
            None => {
                self.add_key(array, Key::Rigid(size));
                // Two generates of the same scalar share one rigid size.
                let r = self.uf.find(self.index[&array]);
                let n = self.uf.parent.len();
                let other = (0..n).find(|&i| {
                    let ri = self.uf.find(i);
                    ri != r && self.uf.keys[ri].contains(&Key::Rigid(size))
                });
                match other {
                    Some(o) => {
                        let w = self.uf.witness[o];
                        self.unify(array, w)
                    }
                    None => Ok(()),
                }
            }
        }
    }
    fn returned(&mut self, array: VarId, func: &str) {
        self.returned_by.insert(array, func.to_string());
        self.add_key(array, Key::Returned(array));
    }
}

/// Infers the size of every array and the iteration size of every node:
/// each combinator's rules (its `Combinator::sizes`), then `zip`'s.
pub fn infer(f: &Function) -> Result<Sizes, Diagnostic> {
    let arrays: Vec<VarId> = (0..f.vars.len() as u32).map(VarId).filter(|v| f.var(*v).ty.is_array()).collect();
    let index: HashMap<VarId, usize> = arrays.iter().enumerate().map(|(i, v)| (*v, i)).collect();
    let uf = Uf { parent: (0..arrays.len()).collect(), keys: vec![vec![]; arrays.len()], witness: arrays.clone() };
    let mut length_of: HashMap<VarId, VarId> = HashMap::new();
    for it in &f.items {
        if let Item::Stmt(Stmt::Assign { dst, rhs: Rhs::Length(a, 0), .. }) = it {
            length_of.insert(*dst, *a);
        }
    }
    let mut sv = Solver { f, uf, index, rigid_cause: vec![], returned_by: IndexMap::new(), length_of, node: NodeId(0), span: f.span };
    for p in f.param_vars() {
        if let Some(&i) = sv.index.get(&p) {
            sv.uf.keys[i].push(Key::Param(p));
        }
    }
    for n in f.node_ids() {
        sv.node = n;
        sv.span = f.node(n).span;
        f.node(n).comb().sizes(&mut sv)?;
    }
    for (vs, span) in &f.same_size {
        sv.span = *span;
        sv.same(vs)?;
    }
    let Solver { mut uf, returned_by, .. } = sv;
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
    // A barrier (an extern call) iterates ⊥ (papers/000 Fig. 1.6): a class of its own.
    let iteration: Vec<SizeId> = f
        .node_ids()
        .map(|n| match f.node(n).comb().iterates() {
            Iterates::Input(a) | Iterates::Output(a) => of_array[&a],
            Iterates::Nothing => {
                classes.push(SizeOrigin::Unknown);
                SizeId(classes.len() as u32 - 1)
            }
        })
        .collect();
    let mut transducer = vec![None; classes.len()];
    for n in f.node_ids() {
        if f.node(n).comb().transducer() {
            transducer[of_array[&f.node(n).outputs()[0]].0 as usize] = Some(n);
        }
    }
    let returned = returned_by.keys().copied().collect();
    Ok(Sizes { classes, of_array, iteration, transducer, returned })
}
