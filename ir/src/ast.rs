//! The surface syntax tree of a `.acc` file, as parsed, with spans.

use crate::diag::Span;
use crate::types::Prim;

#[derive(Clone, Debug)]
pub struct Program {
    pub items: Vec<Item>,
}

#[derive(Clone, Debug)]
pub struct Item {
    pub name: Ident,
    pub exported: bool,
    /// `extern fn` declarations have no body.
    pub body: Option<Block>,
    pub params: Vec<(Ident, TypeExpr)>,
    pub ret: TypeExpr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum TypeExpr {
    Prim(Prim, Span),
    Tuple(Vec<TypeExpr>, Span),
    Array(u8, Box<TypeExpr>, Span),
}

impl TypeExpr {
    pub fn span(&self) -> Span {
        match self {
            TypeExpr::Prim(_, s) | TypeExpr::Tuple(_, s) | TypeExpr::Array(_, _, s) => *s,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Block {
    pub lets: Vec<Let>,
    pub result: Box<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Let {
    pub pat: Pat,
    pub ty: Option<TypeExpr>,
    pub value: Expr,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum Pat {
    Name(Ident),
    Wild(Span),
    Tuple(Vec<Pat>, Span),
}

impl Pat {
    pub fn span(&self) -> Span {
        match self {
            Pat::Name(i) => i.span,
            Pat::Wild(s) | Pat::Tuple(_, s) => *s,
        }
    }
    /// The first name the pattern binds, used to name the combinator it binds.
    pub fn first_name(&self) -> Option<&str> {
        match self {
            Pat::Name(i) => Some(&i.name),
            Pat::Wild(_) => None,
            Pat::Tuple(ps, _) => ps.iter().find_map(|p| p.first_name()),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    BitOr,
    BitXor,
    BitAnd,
    Shl,
    Shr,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        use BinOp::*;
        match self {
            Or => "||",
            And => "&&",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            BitOr => "|",
            BitXor => "^",
            BitAnd => "&",
            Shl => "<<",
            Shr => ">>",
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Rem => "%",
        }
    }
    pub fn from_symbol(s: &str) -> Option<BinOp> {
        use BinOp::*;
        [Or, And, Eq, Ne, Lt, Le, Gt, Ge, BitOr, BitXor, BitAnd, Shl, Shr, Add, Sub, Mul, Div, Rem].into_iter().find(|op| op.symbol() == s)
    }
    pub fn is_comparison(self) -> bool {
        use BinOp::*;
        matches!(self, Eq | Ne | Lt | Le | Gt | Ge)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Clone, Debug)]
pub enum Lit {
    /// An integer literal with its optional suffix type.
    Int(u128, Option<Prim>),
    Float(f64, Option<Prim>),
    Bool(bool),
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Lit(Lit),
    Name(String),
    Tuple(Vec<Expr>),
    Field(Box<Expr>, u32),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Unary(UnOp, Box<Expr>),
    Call(Ident, Vec<Expr>),
    Lambda(Vec<Ident>, Box<Expr>),
    Section(BinOp),
    Index(Box<Expr>, Vec<Expr>),
    If(Box<Expr>, Block, Block),
    Block(Block),
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}
