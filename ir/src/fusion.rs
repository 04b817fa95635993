//! fusion
