//! sizes
