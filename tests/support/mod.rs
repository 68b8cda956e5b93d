//! Helpers shared by integration tests.

pub mod apiserver;
