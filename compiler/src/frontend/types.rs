//! Inference types: concrete types plus variables for unsuffixed literals,
//! resolved by unification ("fixed by what the literal meets").

use afc_ir::types::{Prim, Ty};

#[derive(Clone, Debug, PartialEq)]
pub enum ITy {
    Prim(Prim),
    Tuple(Vec<ITy>),
    Array(u8, Box<ITy>),
    /// A literal's type, not yet fixed.
    Var(u32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LitKind {
    Int,
    Float,
}

#[derive(Default)]
pub struct Unifier {
    vars: Vec<(LitKind, Option<ITy>)>,
}

impl Unifier {
    pub fn fresh(&mut self, k: LitKind) -> ITy {
        self.vars.push((k, None));
        ITy::Var(self.vars.len() as u32 - 1)
    }

    /// Follows bound variables to the outermost known form.
    pub fn shallow(&self, t: &ITy) -> ITy {
        let mut t = t.clone();
        while let ITy::Var(v) = t {
            match &self.vars[v as usize].1 {
                Some(u) => t = u.clone(),
                None => return ITy::Var(v),
            }
        }
        t
    }

    pub fn kind(&self, v: u32) -> LitKind {
        self.vars[v as usize].0
    }

    pub fn unify(&mut self, a: &ITy, b: &ITy) -> bool {
        let a = self.shallow(a);
        let b = self.shallow(b);
        match (&a, &b) {
            (ITy::Var(x), ITy::Var(y)) => {
                if x == y {
                    return true;
                }
                if self.kind(*x) != self.kind(*y) {
                    return false;
                }
                self.vars[*x as usize].1 = Some(b.clone());
                true
            }
            (ITy::Var(x), ITy::Prim(p)) | (ITy::Prim(p), ITy::Var(x)) => {
                let ok = match self.kind(*x) {
                    LitKind::Int => p.is_int(),
                    LitKind::Float => p.is_float(),
                };
                if ok {
                    self.vars[*x as usize].1 = Some(ITy::Prim(*p));
                }
                ok
            }
            (ITy::Var(_), _) | (_, ITy::Var(_)) => false,
            (ITy::Prim(p), ITy::Prim(q)) => p == q,
            (ITy::Tuple(xs), ITy::Tuple(ys)) => {
                xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| self.unify(x, y))
            }
            (ITy::Array(r, x), ITy::Array(s, y)) => r == s && self.unify(x, y),
            _ => false,
        }
    }

    /// The final type: unresolved integer literals become i64, floats f64.
    pub fn resolve(&self, t: &ITy) -> Ty {
        match self.shallow(t) {
            ITy::Prim(p) => Ty::Prim(p),
            ITy::Var(v) => Ty::Prim(match self.kind(v) {
                LitKind::Int => Prim::I64,
                LitKind::Float => Prim::F64,
            }),
            ITy::Tuple(ts) => Ty::Tuple(ts.iter().map(|t| self.resolve(t)).collect()),
            ITy::Array(r, e) => Ty::Array(r, Box::new(self.resolve(&e))),
        }
    }

    pub fn resolve_prim(&self, t: &ITy) -> Prim {
        match self.resolve(t) {
            Ty::Prim(p) => p,
            _ => Prim::I64,
        }
    }

    /// Human-readable, for diagnostics.
    pub fn show(&self, t: &ITy) -> String {
        match self.shallow(t) {
            ITy::Prim(p) => p.name().to_string(),
            ITy::Var(v) => match self.kind(v) {
                LitKind::Int => "{integer}".into(),
                LitKind::Float => "{float}".into(),
            },
            ITy::Tuple(ts) => format!("({})", ts.iter().map(|t| self.show(t)).collect::<Vec<_>>().join(", ")),
            ITy::Array(r, e) => format!("{}{}{}", "[".repeat(r as usize), self.show(&e), "]".repeat(r as usize)),
        }
    }

    /// Is the type numeric (or a literal variable, which always is)?
    pub fn is_numeric(&self, t: &ITy) -> bool {
        match self.shallow(t) {
            ITy::Prim(p) => p.is_numeric(),
            ITy::Var(_) => true,
            _ => false,
        }
    }
    pub fn is_integer(&self, t: &ITy) -> bool {
        match self.shallow(t) {
            ITy::Prim(p) => p.is_int(),
            ITy::Var(v) => self.kind(v) == LitKind::Int,
            _ => false,
        }
    }
    pub fn is_float(&self, t: &ITy) -> bool {
        match self.shallow(t) {
            ITy::Prim(p) => p.is_float(),
            ITy::Var(v) => self.kind(v) == LitKind::Float,
            _ => false,
        }
    }
    pub fn is_bool(&self, t: &ITy) -> bool {
        self.shallow(t) == ITy::Prim(Prim::Bool)
    }
}

pub fn from_ty(t: &Ty) -> ITy {
    match t {
        Ty::Prim(p) => ITy::Prim(*p),
        Ty::Tuple(ts) => ITy::Tuple(ts.iter().map(from_ty).collect()),
        Ty::Array(r, e) => ITy::Array(*r, Box::new(from_ty(e))),
    }
}
