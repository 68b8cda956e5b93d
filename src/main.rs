//! The `kplace` command line.
fn main() {}
