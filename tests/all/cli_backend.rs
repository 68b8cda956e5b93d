//! `--backend auto|gpu|cpu` on `baseline`, `plan` and `explain`: the same documents on the CPU
//! and the GPU (`--backend gpu`: lavapipe here; `auto` takes hardware only, see
//! `tests/all/cli_polish.rs`); `auto` without an adapter falls back to the CPU with a one-line
//! notice; an explicit `gpu` without one is an error. "No adapter" is forced with
//! `WGPU_BACKEND=metal`, a backend Linux does not have.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn demo() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo").display().to_string()
}

fn kplace(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kplace"));
    cmd.args(args).env("RUST_LOG", "error");
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("kplace runs")
}

/// Whether this machine has a Vulkan adapter (with `CI=true`, it must).
fn have_gpu() -> bool {
    match kplace::eval::gpu::GpuContext::new(&Default::default()) {
        Ok(_) => true,
        Err(e) => {
            assert_ne!(
                std::env::var("CI").as_deref(),
                Ok("true"),
                "CI=true and no usable GPU adapter ({e}): install mesa-vulkan-drivers"
            );
            eprintln!("notice: GPU half skipped: {e}");
            false
        }
    }
}

/// The JSON document a command prints, without what names the backend or times it.
fn document(args: &[&str], backend: &str) -> Value {
    let mut full: Vec<&str> = args.to_vec();
    full.extend(["--backend", backend, "-o", "json"]);
    let out = kplace(&full, &[]);
    assert!(
        out.status.success(),
        "{args:?} --backend {backend}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    if let Some(obj) = doc.as_object_mut() {
        obj.remove("summary");
        obj.remove("evaluated_on");
    }
    doc
}

#[test]
fn baseline_plan_and_explain_print_the_same_on_the_cpu_and_the_gpu() {
    if !have_gpu() {
        return;
    }
    let demo = demo();
    let baseline = document(&["baseline", &demo], "cpu");
    let pod = baseline["unschedulable"][0]["pod"].as_str().expect("the demo leaves a pod out");
    let placed = baseline["placements"][0]["pod"].as_str().expect("the demo places pods");
    let cases: Vec<Vec<&str>> = vec![
        vec!["baseline", &demo],
        vec!["plan", &demo],
        vec!["plan", &demo, "--solver", "lp"],
        vec!["explain", &demo, "--pod", pod],
        vec!["explain", &demo, "--pod", placed, "--as-is"],
    ];
    for args in cases {
        assert_eq!(document(&args, "gpu"), document(&args, "cpu"), "{args:?}");
    }
    // The plan document names the backend it was evaluated on.
    let out = kplace(&["plan", &demo, "--backend", "gpu", "-o", "json"], &[]);
    let plan: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let backend = plan["summary"]["backend"].as_str().expect("a backend");
    assert!(backend.starts_with("gpu ("), "{backend}");
}

#[test]
fn auto_without_an_adapter_says_so_and_evaluates_on_the_cpu() {
    let demo = demo();
    for command in ["baseline", "plan"] {
        let out = kplace(
            &[command, &demo, "--backend", "auto", "-o", "json"],
            &[("WGPU_BACKEND", "metal")],
        );
        assert!(out.status.success(), "{command}: {}", String::from_utf8_lossy(&out.stderr));
        let stderr = String::from_utf8_lossy(&out.stderr);
        let notices: Vec<&str> = stderr.lines().filter(|l| l.starts_with("notice:")).collect();
        assert_eq!(
            notices,
            vec!["notice: no GPU adapter found; evaluating on the CPU"],
            "{command}: {stderr}"
        );
        let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
        assert_eq!(doc["summary"]["backend"], "cpu", "{command}");
    }
}

#[test]
fn an_explicit_gpu_backend_without_an_adapter_is_an_error() {
    let demo = demo();
    for args in [
        vec!["baseline", demo.as_str()],
        vec!["plan", demo.as_str()],
        vec!["explain", demo.as_str(), "--pod", "batch/genome-assembly-55x9f"],
        vec!["compare", demo.as_str()],
    ] {
        let mut full = args.clone();
        full.extend(["--backend", "gpu"]);
        let out = kplace(&full, &[("WGPU_BACKEND", "metal")]);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing printed but the error");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--backend gpu: no GPU adapter found"), "{args:?}: {stderr}");
    }
}
