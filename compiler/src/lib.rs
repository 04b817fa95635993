//! The afc compiler as a library: the driver in `main.rs` and the tests use it.
//! See docs/architecture.md for the pipeline and the code map.

pub mod cluster;
pub mod driver;
pub mod frontend;
pub mod fusion;
pub mod graph;
pub mod header;
pub mod if_convert;
pub mod lower;
pub mod narrow;
pub mod pipeline;
pub mod report;
pub mod sizes;
pub mod strategy;
