//! loops
