//! lp
