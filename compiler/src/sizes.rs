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
    /// A dimension of a parameter.
    Param(VarId, u8),
    /// A dimension of an array an extern call returns: flexible like a
    /// parameter's size.
    Returned(VarId, u8),
    Rigid(Operand),
}

/// Union-find over the arrays' dimensions.
struct Uf {
    parent: Vec<usize>,
    keys: Vec<Vec<Key>>,
    /// A dimension of an array of each class, for naming it in diagnostics.
    witness: Vec<(VarId, usize)>,
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
    /// Each array's first dimension's element in the union-find.
    index: HashMap<VarId, usize>,
    /// What made each rigid size (by its scalar), for diagnostics.
    rigid_cause: Vec<(Operand, Rigid, String)>,
    /// Arrays extern calls return, with the extern's name.
    returned_by: IndexMap<VarId, String>,
    /// Scalars bound to `length(a)` (or a component of `shape(a)`) name
    /// that dimension of a's size.
    length_of: HashMap<VarId, (VarId, usize)>,
    /// The name of the node whose rules are being applied, and its span.
    node: String,
    span: Span,
}

impl Solver<'_> {
    fn describe(&self, ks: &[Key]) -> String {
        let f = self.f;
        match ks.iter().find(|k| matches!(k, Key::Rigid(_))) {
            Some(Key::Rigid(o)) => match self.rigid_cause.iter().find(|(s, _, _)| s == o) {
                Some((_, Rigid::Filter, n)) => format!("the size of filter '{}''s result, known only at run time", n),
                Some((_, Rigid::Cross, n)) => format!("the size of cross '{}''s result, n·m, a size of its own", n),
                None => format!(
                    "a size known only at run time ({})",
                    match o {
                        Operand::Const(c) => c.to_string(),
                        Operand::Var(v) => format!("'{}'", f.var(*v).name),
                    }
                ),
            },
            _ => match ks.iter().find_map(|k| if let Key::Returned(v, _) = k { Some(*v) } else { None }) {
                Some(v) if !ks.iter().any(|k| matches!(k, Key::Param(..))) => {
                    format!("the size of what {} returns, known once it returns", self.returned_by[&v])
                }
                _ => "the size of a parameter".to_string(),
            },
        }
    }

    /// The union-find element of dimension `d` of `a`.
    fn elem(&self, a: VarId, d: usize) -> usize {
        self.index[&a] + d
    }

    fn unify(&mut self, a: VarId, da: usize, b: VarId, db: usize) -> Result<(), Diagnostic> {
        let f = self.f;
        let (ea, eb) = (self.elem(a, da), self.elem(b, db));
        let (ra, rb) = (self.uf.find(ea), self.uf.find(eb));
        if ra == rb {
            return Ok(());
        }
        let (ka, kb) = (&self.uf.keys[ra], &self.uf.keys[rb]);
        // Merging is legal unless it equates a rigid size with a different
        // rigid size or with a parameter's size.
        let mut rigid: Vec<&Operand> = ka.iter().chain(kb).filter_map(|k| if let Key::Rigid(o) = k { Some(o) } else { None }).collect();
        rigid.dedup();
        let params = ka.iter().chain(kb).any(|k| matches!(k, Key::Param(..) | Key::Returned(..)));
        if rigid.len() > 1 || (!rigid.is_empty() && params) {
            // A vector is named as it is; of a matrix, the dimension too.
            let dim = |v: VarId, d: usize| if matches!(f.var(v).ty, VarTy::Array(1, _)) { format!("'{}'", f.var(v).name) } else { format!("dimension {} of '{}'", d, f.var(v).name) };
            return Err(Diagnostic::error(self.span, format!("the sizes of {} and {} cannot be shown equal", dim(a, da), dim(b, db)))
                .with_label(f.var(a).span, format!("'{}' has {}", f.var(a).name, self.describe(ka)))
                .with_label(f.var(b).span, format!("'{}' has {}", f.var(b).name, self.describe(kb)))
                .with_note("sizes born inside the program are rigid: each equals only itself"));
        }
        let moved = std::mem::take(&mut self.uf.keys[rb]);
        self.uf.keys[ra].extend(moved);
        self.uf.parent[rb] = ra;
        Ok(())
    }

    fn add_key(&mut self, a: VarId, d: usize, k: Key) {
        let r = self.uf.find(self.elem(a, d));
        self.uf.keys[r].push(k);
    }

    fn rank(&self, a: VarId) -> usize {
        match self.f.var(a).ty {
            VarTy::Array(r, _) => r as usize,
            _ => 0,
        }
    }
}

impl SizeRules for Solver<'_> {
    fn same(&mut self, arrays: &[VarId]) -> Result<(), Diagnostic> {
        // Each against the first, so that a message names the first.
        let Some((&first, rest)) = arrays.split_first() else { return Ok(()) };
        for &b in rest {
            for d in 0..self.rank(first).min(self.rank(b)) {
                self.unify(first, d, b, d)?;
            }
        }
        Ok(())
    }
    fn same_dim(&mut self, a: VarId, da: usize, b: VarId, db: usize) -> Result<(), Diagnostic> {
        self.unify(a, da, b, db)
    }
    fn rigid(&mut self, array: VarId, dim: usize, size: Operand, cause: Rigid) -> Result<(), Diagnostic> {
        self.rigid_cause.push((size, cause, self.node.clone()));
        self.add_key(array, dim, Key::Rigid(size));
        Ok(())
    }
    fn sized(&mut self, array: VarId, dim: usize, size: Operand) -> Result<(), Diagnostic> {
        let from = match size {
            Operand::Var(v) => self.length_of.get(&v).copied(),
            _ => None,
        };
        match from {
            Some((a, d)) => self.unify(array, dim, a, d),
            None => {
                self.add_key(array, dim, Key::Rigid(size));
                // Two sizes of the same scalar are one rigid size.
                let r = self.uf.find(self.elem(array, dim));
                let n = self.uf.parent.len();
                let other = (0..n).find(|&i| {
                    let ri = self.uf.find(i);
                    ri != r && self.uf.keys[ri].contains(&Key::Rigid(size))
                });
                match other {
                    Some(o) => {
                        let (w, d) = self.uf.witness[o];
                        self.unify(array, dim, w, d)
                    }
                    None => Ok(()),
                }
            }
        }
    }
    fn returned(&mut self, array: VarId, what: &str) {
        self.returned_by.insert(array, what.to_string());
        for d in 0..self.rank(array) {
            self.add_key(array, d, Key::Returned(array, d as u8));
        }
    }
    fn body(&mut self, f: &Function) -> Result<(), Diagnostic> {
        let (node, span) = (self.node.clone(), self.span);
        for n in f.node_ids() {
            self.node = f.node(n).name.clone();
            self.span = f.node(n).span;
            f.node(n).comb().sizes(self)?;
        }
        for (vs, span) in &f.same_size {
            self.span = *span;
            self.same(vs)?;
        }
        (self.node, self.span) = (node, span);
        Ok(())
    }
    fn joins(&mut self, out: VarId, branches: [VarId; 2]) {
        for d in 0..self.rank(out) {
            let (a, b) = (self.uf.find(self.elem(branches[0], d)), self.uf.find(self.elem(branches[1], d)));
            if a == b {
                self.unify(out, d, branches[0], d).expect("a fresh size joins any class");
            } else {
                self.returned_by.insert(out, "the array-level `if`".to_string());
                self.add_key(out, d, Key::Returned(out, d as u8));
            }
        }
    }
}

/// Infers the size of every array and the iteration size of every node:
/// each combinator's rules (its `Combinator::sizes`), then `zip`'s.
pub fn infer(f: &Function) -> Result<Sizes, Diagnostic> {
    let arrays: Vec<VarId> = (0..f.vars.len() as u32).map(VarId).filter(|v| f.var(*v).ty.is_array()).collect();
    // One union-find element per dimension of every array.
    let mut index: HashMap<VarId, usize> = HashMap::new();
    let mut witness = vec![];
    for v in &arrays {
        index.insert(*v, witness.len());
        let VarTy::Array(r, _) = f.var(*v).ty else { unreachable!() };
        witness.extend((0..r as usize).map(|d| (*v, d)));
    }
    let uf = Uf { parent: (0..witness.len()).collect(), keys: vec![vec![]; witness.len()], witness };
    let mut length_of: HashMap<VarId, (VarId, usize)> = HashMap::new();
    for it in &f.items {
        if let Item::Stmt(Stmt::Assign { dst, rhs: Rhs::Length(a, d), .. }) = it {
            length_of.insert(*dst, (*a, *d as usize));
        }
    }
    let mut sv = Solver { f, uf, index, rigid_cause: vec![], returned_by: IndexMap::new(), length_of, node: String::new(), span: f.span };
    for p in f.param_vars() {
        if let (Some(_), VarTy::Array(r, _)) = (sv.index.get(&p), f.var(p).ty) {
            for d in 0..r {
                sv.add_key(p, d as usize, Key::Param(p, d));
            }
        }
    }
    sv.body(f)?;
    let Solver { mut uf, returned_by, index, .. } = sv;
    // Number the classes in order of first appearance.
    let mut class_of_root: IndexMap<usize, SizeId> = IndexMap::new();
    let mut classes = vec![];
    let mut of_array = IndexMap::new();
    for v in &arrays {
        let VarTy::Array(r, _) = f.var(*v).ty else { unreachable!() };
        let mut shape = vec![];
        for d in 0..r as usize {
            let root = uf.find(index[v] + d);
            let id = *class_of_root.entry(root).or_insert_with(|| {
                let ks = &uf.keys[root];
                let origin = match ks.iter().find_map(|k| if let Key::Rigid(o) = k { Some(*o) } else { None }) {
                    Some(o) => SizeOrigin::Scalar(o),
                    None => {
                        let params = ks.iter().filter_map(|k| if let Key::Param(p, d) = k { Some((*p, *d)) } else { None });
                        let returned = ks.iter().filter_map(|k| if let Key::Returned(p, d) = k { Some((*p, *d)) } else { None });
                        SizeOrigin::Params(params.chain(returned).collect())
                    }
                };
                classes.push(origin);
                SizeId(classes.len() as u32 - 1)
            });
            shape.push(id);
        }
        of_array.insert(*v, shape);
    }
    let shapes = iteration(f, &of_array, &mut classes);
    let returned: Vec<VarId> = returned_by.keys().copied().collect();
    Ok(assemble(shapes, &classes, &of_array, &returned))
}

/// The iteration shapes of a body's nodes, its filters' sizes, and the same
/// for every `if` branch inside it.
struct Iteration {
    shapes: Vec<Vec<SizeId>>,
    transducers: Vec<(SizeId, NodeId)>,
    bodies: IndexMap<NodeId, Vec<Iteration>>,
}

fn iteration(f: &Function, of_array: &IndexMap<VarId, Vec<SizeId>>, classes: &mut Vec<SizeOrigin>) -> Iteration {
    // A barrier (an extern call, an `if`) iterates ⊥ (papers/000 Fig.
    // 1.6): a class of its own.
    let shapes = f
        .node_ids()
        .map(|n| match f.node(n).comb().iterates() {
            Iterates::Input(a) | Iterates::Output(a) => of_array[&a].clone(),
            Iterates::Nothing => {
                classes.push(SizeOrigin::Unknown);
                vec![SizeId(classes.len() as u32 - 1)]
            }
        })
        .collect();
    let transducers = f.node_ids().filter(|n| f.node(*n).comb().transducer()).map(|n| (of_array[&f.node(n).outputs()[0]][0], n)).collect();
    let bodies = f
        .node_ids()
        .filter(|n| !f.node(*n).comb().bodies().is_empty())
        .map(|n| (n, f.node(n).comb().bodies().into_iter().map(|b| iteration(b, of_array, classes)).collect()))
        .collect();
    Iteration { shapes, transducers, bodies }
}

fn assemble(it: Iteration, classes: &[SizeOrigin], of_array: &IndexMap<VarId, Vec<SizeId>>, returned: &[VarId]) -> Sizes {
    let mut transducer = vec![None; classes.len()];
    for (s, n) in it.transducers {
        transducer[s.0 as usize] = Some(n);
    }
    let bodies = it.bodies.into_iter().map(|(n, bs)| (n, bs.into_iter().map(|b| assemble(b, classes, of_array, returned)).collect())).collect();
    Sizes::new(classes.to_vec(), of_array.clone(), it.shapes, transducer, returned.to_vec(), bodies)
}
