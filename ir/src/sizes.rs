//! Sizes (papers/000 §1.3): every array's shape — one size per dimension,
//! outermost first — each size a class of equal sizes, either flexible
//! (the sizes of parameters, checked equal on entry) or rigid (born inside
//! the program: known only at run time, equal only to itself), and every
//! node's iteration shape. Filters work on vectors, so the transducer
//! forest is over the sizes of dimension 0.

use crate::labelled::{Function, NodeId, Operand, VarId};
use indexmap::IndexMap;
use std::fmt::Write;
use std::sync::OnceLock;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SizeId(pub u32);

/// Where a size's value comes from at run time.
#[derive(Clone, Debug, PartialEq)]
pub enum SizeOrigin {
    /// The extent of these dimensions of parameter arrays (all equal,
    /// checked on entry), and of arrays extern calls return (listed after
    /// the parameters, in `Sizes::returned`; each checked against the class
    /// once its call returns). Flexible: chosen by the caller or the C code.
    Params(Vec<(VarId, u8)>),
    /// A rigid size: the value of a scalar (a `generate`'s size argument).
    Scalar(Operand),
    /// ⊥: the iteration size of an extern call, which fuses with nothing.
    Unknown,
}

/// A shape: one size per dimension, outermost first.
pub type Shape = Vec<SizeId>;

/// The transducer forest in depth-first order (`Sizes::descent`): each
/// size's subtree is the sizes entered from its entry to its exit.
#[derive(Clone, Debug)]
pub struct Descent {
    enter: Vec<u32>,
    exit: Vec<u32>,
    depth: Vec<u32>,
}

impl Descent {
    /// `Sizes::depth`, without the walk up.
    pub fn depth(&self, s: SizeId) -> usize {
        self.depth[s.0 as usize] as usize
    }
    /// Whether `s` is `root` or lies below it in the transducer forest.
    pub fn within(&self, s: SizeId, root: SizeId) -> bool {
        let (e, r) = (self.enter[s.0 as usize], root.0 as usize);
        self.enter[r] <= e && e < self.exit[r]
    }
}

#[derive(Clone, Debug)]
pub struct Sizes {
    pub classes: Vec<SizeOrigin>,
    /// The shape of every array variable.
    pub of_array: IndexMap<VarId, Shape>,
    /// The iteration shape of every node.
    pub iteration: Vec<Shape>,
    /// The transducer forest (papers/000 §1.3.6): for a size produced by a
    /// filter, that filter, whose iteration size is the parent size.
    pub transducer: Vec<Option<NodeId>>,
    /// Arrays returned by barriers — extern and recursive calls, `if`s —
    /// (the first leaf of each): their sizes are flexible like parameters',
    /// known once the call returns.
    pub returned: Vec<VarId>,
    /// The sizes of each `if`'s branches (then, else): the same classes and
    /// arrays, their own nodes' iteration shapes and filters.
    pub bodies: IndexMap<NodeId, Vec<Sizes>>,
    /// `descent()`, numbered on first use: `transducer` and `iteration`,
    /// which it is made of, are not changed once the sizes are inferred.
    descent: OnceLock<Descent>,
}

impl Sizes {
    pub fn new(classes: Vec<SizeOrigin>, of_array: IndexMap<VarId, Shape>, iteration: Vec<Shape>, transducer: Vec<Option<NodeId>>, returned: Vec<VarId>, bodies: IndexMap<NodeId, Vec<Sizes>>) -> Sizes {
        Sizes { classes, of_array, iteration, transducer, returned, bodies, descent: OnceLock::new() }
    }
    /// The size of an array's dimension 0.
    pub fn of(&self, v: VarId) -> SizeId {
        self.of_array[&v][0]
    }
    pub fn shape(&self, v: VarId) -> &[SizeId] {
        &self.of_array[&v]
    }
    /// The size of a node's outermost iteration dimension: what the
    /// transducer forest and concestors are about.
    pub fn of_node(&self, n: NodeId) -> SizeId {
        self.iteration[n.0 as usize][0]
    }
    pub fn node_shape(&self, n: NodeId) -> &[SizeId] {
        &self.iteration[n.0 as usize]
    }
    pub fn name(&self, s: SizeId) -> String {
        format!("n{}", s.0)
    }
    /// `n0` or `n0×n1`.
    pub fn shape_name(&self, s: &[SizeId]) -> String {
        s.iter().map(|d| self.name(*d)).collect::<Vec<_>>().join("×")
    }
    /// The parent of a size in the transducer forest.
    pub fn parent(&self, s: SizeId) -> Option<SizeId> {
        self.transducer[s.0 as usize].map(|t| self.of_node(t))
    }
    /// The parent transducer of a node (`trans`, papers/000 Fig. 1.7): the
    /// filter whose output size is the node's iteration size.
    pub fn trans(&self, n: NodeId) -> Option<NodeId> {
        self.transducer[self.of_node(n).0 as usize]
    }
    /// The transducer forest numbered once, so that whether one size lies
    /// below another is answered without walking the path between them (a
    /// chain of thousands of nested filters made that walk cubic); once,
    /// on first use.
    pub fn descent(&self) -> &Descent {
        self.descent.get_or_init(|| self.number())
    }
    fn number(&self) -> Descent {
        let n = self.transducer.len();
        let mut children: Vec<Vec<u32>> = vec![vec![]; n];
        let mut roots = vec![];
        for s in 0..n {
            match self.parent(SizeId(s as u32)) {
                Some(p) => children[p.0 as usize].push(s as u32),
                None => roots.push(s as u32),
            }
        }
        let (mut enter, mut exit, mut depth) = (vec![0; n], vec![0; n], vec![0; n]);
        let mut clock = 0;
        // (size, whether its children were pushed): an explicit stack, as
        // the forest may be thousands deep.
        let mut stack: Vec<(u32, bool)> = roots.into_iter().rev().map(|r| (r, false)).collect();
        while let Some((s, done)) = stack.pop() {
            if done {
                exit[s as usize] = clock;
                continue;
            }
            enter[s as usize] = clock;
            clock += 1;
            stack.push((s, true));
            for c in &children[s as usize] {
                depth[*c as usize] = depth[s as usize] + 1;
            }
            stack.extend(children[s as usize].iter().rev().map(|c| (*c, false)));
        }
        Descent { enter, exit, depth }
    }
    /// Depth in the transducer forest.
    pub fn depth(&self, s: SizeId) -> usize {
        self.descent().depth(s)
    }
    /// The compatible concestors of two nodes (papers/000 Fig. 1.8): the
    /// most recent pair of ancestors (each a node or one of its ancestor
    /// transducers) with the same iteration size; `(a, b)` when `a` and `b`
    /// iterate alike; `None` when their sizes share no ancestor.
    pub fn concestors(&self, a: NodeId, b: NodeId) -> Option<(NodeId, NodeId)> {
        let (mut x, mut y) = (a, b);
        let (mut dx, mut dy) = (self.depth(self.of_node(x)), self.depth(self.of_node(y)));
        while dx > dy {
            x = self.trans(x)?;
            dx -= 1;
        }
        while dy > dx {
            y = self.trans(y)?;
            dy -= 1;
        }
        while self.of_node(x) != self.of_node(y) {
            x = self.trans(x)?;
            y = self.trans(y)?;
        }
        Some((x, y))
    }
}

/// The function's size scheme (papers/000 §1.3.1, generalisation): the
/// parameters' sizes universally quantified, the results' rigid sizes
/// existentially, e.g. `∀n0. ∃n1. (xs: n0) -> (out0: n0, out1: n1)`.
pub fn scheme(f: &Function, s: &Sizes) -> String {
    use crate::labelled::Operand;
    let shape_of = |l: &crate::labelled::Leaf| match l.value {
        Operand::Var(v) => s.of_array.get(&v).cloned(),
        _ => None,
    };
    let mut forall: Vec<u32> = vec![];
    let mut exists: Vec<u32> = vec![];
    let mut ins = vec![];
    for l in &f.params {
        match shape_of(l) {
            Some(sh) => {
                for c in &sh {
                    if !forall.contains(&c.0) {
                        forall.push(c.0);
                    }
                }
                ins.push(format!("{}: {}", l.c_name, s.shape_name(&sh)));
            }
            None => ins.push(l.c_name.clone()),
        }
    }
    let mut outs = vec![];
    for l in &f.results {
        match shape_of(l) {
            Some(sh) => {
                for c in &sh {
                    if !forall.contains(&c.0) && !exists.contains(&c.0) {
                        exists.push(c.0);
                    }
                }
                outs.push(format!("{}: {}", l.c_name, s.shape_name(&sh)));
            }
            None => outs.push(l.c_name.clone()),
        }
    }
    let q = |k: &str, v: &[u32]| if v.is_empty() { String::new() } else { format!("{}{}. ", k, v.iter().map(|c| format!("n{}", c)).collect::<Vec<_>>().join(" ")) };
    format!("{}{}({}) -> ({})", q("∀", &forall), q("∃", &exists), ins.join(", "), outs.join(", "))
}

/// `--emit=sizes`: each size class, each array's shape, each node's iteration shape.
pub fn print(f: &Function, s: &Sizes) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "fn {}", f.name);
    for (i, c) in s.classes.iter().enumerate() {
        let what = match c {
            SizeOrigin::Params(ps) => {
                let names: Vec<String> = ps
                    .iter()
                    .map(|(p, d)| {
                        let dim = if *d == 0 { String::new() } else { format!(".{}", d) };
                        if s.returned.contains(p) { format!("|%{}|{} (returned)", f.var_name(*p), dim) } else { format!("|%{}|{}", f.var_name(*p), dim) }
                    })
                    .collect();
                format!("flexible = {}", names.join(" = "))
            }
            SizeOrigin::Scalar(o) => format!("rigid = {}", f.operand(o)),
            SizeOrigin::Unknown => "⊥ (an extern call)".to_string(),
        };
        let parent = match s.transducer[i] {
            Some(t) => format!(", transducer \"{}\" from n{}", f.node(t).name, s.of_node(t).0),
            None => String::new(),
        };
        let _ = writeln!(out, "  size n{}: {}{}", i, what, parent);
    }
    let _ = writeln!(out, "  scheme: {}", scheme(f, s));
    for (v, c) in &s.of_array {
        let _ = writeln!(out, "  %{}: [{}]", f.var_name(*v), c.iter().map(|d| format!("n{}", d.0)).collect::<Vec<_>>().join(", "));
    }
    for n in f.node_ids() {
        let _ = writeln!(out, "  node {} \"{}\" iterates {}", n.0, f.node(n).name, s.shape_name(s.node_shape(n)));
    }
    out
}

/// Checks the sizes against the program: every array has a shape of its
/// rank; the arrays a combinator streams have its iteration shape; its
/// outputs too unless it is a transducer (whose result's size is its own,
/// a child of its iteration size), a scatter or a barrier.
pub fn verify(f: &Function, s: &Sizes) -> Result<(), String> {
    for v in 0..f.vars.len() as u32 {
        let v = VarId(v);
        if let crate::labelled::VarTy::Array(r, _) = f.var(v).ty {
            match s.of_array.get(&v) {
                None => return Err(format!("array %{} has no size", f.var_name(v))),
                Some(sh) if sh.len() != r as usize => return Err(format!("array %{} of rank {} has a shape of {} sizes", f.var_name(v), r, sh.len())),
                _ => {}
            }
        }
    }
    for n in f.node_ids() {
        let node = f.node(n);
        let it = s.node_shape(n);
        for x in node.streamed_inputs() {
            if s.shape(*x) != it {
                return Err(format!("'{}' streams %{} of another shape", node.name, f.var_name(*x)));
            }
        }
        let c = node.comb();
        for o in node.outputs().iter().filter(|o| f.var(**o).ty.is_array()) {
            if c.transducer() && s.transducer[s.of(*o).0 as usize] != Some(n) {
                return Err(format!("{} '{}''s result size is not its own", c.name(), node.name));
            }
            if c.reduces() && s.shape(*o) != &it[..it.len() - 1] {
                return Err(format!("'{}' makes %{} of another shape than its rows", node.name, f.var_name(*o)));
            }
            if c.outputs_at_rate() && s.shape(*o) != it {
                return Err(format!("'{}' makes %{} of another shape than it iterates", node.name, f.var_name(*o)));
            }
        }
        let bodies = node.comb().bodies();
        let sizes = s.bodies.get(&n).map(|v| v.as_slice()).unwrap_or(&[]);
        if bodies.len() != sizes.len() {
            return Err(format!("'{}' has {} branches but sizes for {}", node.name, bodies.len(), sizes.len()));
        }
        for (b, bs) in bodies.into_iter().zip(sizes) {
            verify(b, bs)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Descent::within` and `depth` against a walk up the forest, on every pair of a
    /// forest of two trees: n0 ← n1 ← n2 and n0 ← n3 (filters f0, f1, f2
    /// at n0, n1, n0), and n4 alone.
    #[test]
    fn descent_answers_as_the_walk_up_the_forest() {
        let s = |i: u32| SizeId(i);
        let sizes = Sizes::new(
            vec![SizeOrigin::Unknown; 5],
            IndexMap::new(),
            vec![vec![s(0)], vec![s(1)], vec![s(0)]],
            vec![None, Some(NodeId(0)), Some(NodeId(1)), Some(NodeId(2)), None],
            vec![],
            IndexMap::new(),
        );
        let walk = |mut a: SizeId, root: SizeId| loop {
            if a == root {
                return true;
            }
            match sizes.parent(a) {
                Some(p) => a = p,
                None => return false,
            }
        };
        let up = |mut a: SizeId| {
            let mut d = 0;
            while let Some(p) = sizes.parent(a) {
                (d, a) = (d + 1, p);
            }
            d
        };
        let d = sizes.descent();
        for a in 0..5 {
            assert_eq!(d.depth(s(a)), up(s(a)), "depth of n{}", a);
            for root in 0..5 {
                assert_eq!(d.within(s(a), s(root)), walk(s(a), s(root)), "n{} within n{}", a, root);
            }
        }
        assert!(d.within(s(2), s(0)) && !d.within(s(3), s(1)) && !d.within(s(0), s(2)));
    }
}
