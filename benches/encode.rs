//! Encoding benchmarks (filled in with the encoder).
fn main() {}
