//! The `kplace` command line (being written in another branch).
fn main() {}
