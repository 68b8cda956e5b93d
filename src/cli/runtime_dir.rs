//! A private runtime directory for Mesa when `XDG_RUNTIME_DIR` is not set.
//!
//! Opening a Vulkan instance loads Mesa's device-select layer, which asks libwayland for the
//! display's GPU; libwayland prints `error: XDG_RUNTIME_DIR is invalid or not set in the
//! environment.` to stderr when the variable is unset or not an absolute path (as under `sudo`,
//! `ssh` without a login session, cron or most containers). kplace never draws anything, so
//! instead of letting that line through it points the variable at a fresh directory of its own
//! (mode 0700, removed when the program ends) before any thread exists.

use std::os::unix::fs::PermissionsExt;

/// Sets `XDG_RUNTIME_DIR` to a new private directory when it is unset or invalid, and returns
/// the directory (removed when dropped). `None` when the variable is valid already or the
/// directory cannot be made (then Mesa's line shows, nothing else changes).
///
/// Call it first in `main`, while the process has one thread.
pub fn ensure() -> Option<tempfile::TempDir> {
    let valid = std::env::var_os("XDG_RUNTIME_DIR")
        .is_some_and(|dir| std::path::Path::new(&dir).is_absolute());
    if valid {
        return None;
    }
    let dir = tempfile::Builder::new().prefix("kplace-runtime-").tempdir().ok()?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).ok()?;
    set_runtime_dir(dir.path());
    Some(dir)
}

/// One of kplace's `unsafe` blocks (the workspace denies `unsafe_code`; this function and
/// `eval::cpu::simd`'s two dispatches alone are allowed it). Since edition 2024 `std::env::set_var`
/// is `unsafe` because another thread may read the environment through libc (`getenv`) at the
/// same time, which is undefined behaviour.
/// The alternatives are worse: re-executing kplace with the variable set would put a parent
/// process between kplace and its signals (`schedule` stops on SIGTERM), and Mesa offers no
/// setting other than environment variables.
#[allow(unsafe_code)]
fn set_runtime_dir(path: &std::path::Path) {
    // SAFETY: called only from `ensure`, the first statement of `main`: no other thread exists
    // yet (kplace starts threads later: rayon, tokio, wgpu), so nothing reads the environment
    // concurrently.
    unsafe { std::env::set_var("XDG_RUNTIME_DIR", path) };
}
