//! Running the `kplace` binary from the integration tests: from the package root, with its
//! log at a chosen level.

use std::process::{Command, Output};

/// `kplace ARGS` run from the package root with warnings logged.
pub fn kplace(args: &[&str]) -> Output {
    kplace_logging(args, "warn")
}

/// `kplace ARGS` run from the package root, logging at `level` (`RUST_LOG`).
pub fn kplace_logging(args: &[&str], level: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kplace"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("RUST_LOG", level)
        .output()
        .expect("kplace runs")
}

/// [`kplace`], which must succeed.
pub fn ok(args: &[&str]) -> Output {
    let out = kplace(args);
    assert!(
        out.status.success(),
        "kplace {args:?} failed ({:?}): {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
