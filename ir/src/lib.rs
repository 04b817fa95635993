//! afc's representations, one module per stage, each with its printer and
//! verifier, and the reference interpreter. Depends on no native library.

pub mod ast;
pub mod cluster;
pub mod combinator;
pub mod cost;
pub mod diag;
pub mod fusion;
pub mod graph;
pub mod ice;
pub mod interp;
pub mod labelled;
pub mod loops;
pub mod lp;
pub mod sizes;
pub mod types;
