//! `kplace gen` end to end: the files it writes are snapshots that `inspect` and `baseline`
//! read, `--list` names every workload, the output depends only on the seed, bad arguments
//! get the documented exit codes, and a 5,000-node, 10,000-pod cluster is quick to write.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::run::{kplace, ok};
use kplace::r#gen::Workload;
use serde_json::Value;

fn json(args: &[&str]) -> Value {
    serde_json::from_slice(&ok(args).stdout).expect("stdout is exactly one JSON document")
}

fn gen_file(
    dir: &Path,
    workload: &str,
    nodes: &str,
    pods: &str,
    init: &str,
    seed: &str,
) -> PathBuf {
    let path = dir.join(format!("{workload}-{seed}.yaml"));
    let p = path.to_str().unwrap();
    ok(&[
        "gen",
        "--workload",
        workload,
        "--nodes",
        nodes,
        "--pods",
        pods,
        "--init-pods",
        init,
        "--seed",
        seed,
        "-o",
        p,
    ]);
    path
}

#[test]
fn every_workload_writes_a_snapshot_that_inspect_and_baseline_accept() {
    let dir = tempfile::tempdir().unwrap();
    for w in Workload::ALL {
        let path = gen_file(dir.path(), w.name(), "20", "60", "10", "1");
        let p = path.to_str().unwrap();
        let report = json(&["inspect", p, "-o", "json"]);
        assert_eq!(report["nodes"]["total"], 20, "{w}");
        let bound = report["pods"]["bound"].as_u64().unwrap();
        let pending = report["pods"]["pending"].as_u64().unwrap();
        assert_eq!(bound + pending, 60, "{w}: every pod is bound or pending");
        assert!(bound > 0 && bound <= 10, "{w}: {bound} bound");

        let plan = json(&["baseline", p, "-o", "json"]);
        let placed = plan["placements"].as_array().unwrap().len() as u64;
        let unschedulable = plan["unschedulable"].as_array().unwrap().len() as u64;
        assert_eq!(placed + unschedulable, pending, "{w}: every pending pod is accounted for");
        assert!(placed > 0, "{w}: baseline places some pods");
    }
}

#[test]
fn list_describes_every_workload() {
    let out = ok(&["gen", "--list"]);
    let text = String::from_utf8(out.stdout).unwrap();
    for w in Workload::ALL {
        assert!(text.lines().any(|l| l == w.name()), "{w} is listed: {text}");
    }
    for part in ["mirrors:", "nodes:", "pods:", "knobs:", "maxSkew 5", "color=green", "PodGroup"] {
        assert!(text.contains(part), "--list mentions {part}");
    }
}

#[test]
fn the_file_depends_only_on_the_seed_and_stdout_gets_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let a = std::fs::read(gen_file(dir.path(), "fragmentation-mix", "8", "40", "10", "5")).unwrap();
    let copy = dir.path().join("copy");
    std::fs::create_dir(&copy).unwrap();
    let b = std::fs::read(gen_file(&copy, "fragmentation-mix", "8", "40", "10", "5")).unwrap();
    let c = std::fs::read(gen_file(dir.path(), "fragmentation-mix", "8", "40", "10", "6")).unwrap();
    assert_eq!(a, b, "same seed, same bytes");
    assert_ne!(a, c, "another seed, other bytes");
    let out = ok(&[
        "gen",
        "--workload",
        "fragmentation-mix",
        "--nodes",
        "8",
        "--pods",
        "40",
        "--init-pods",
        "10",
        "--seed",
        "5",
        "-o",
        "-",
    ]);
    assert_eq!(out.stdout, a, "-o - writes the same stream to stdout");
    assert!(a.starts_with(b"---\napiVersion: v1\nkind: Namespace\n"));
}

#[test]
fn bad_arguments_get_the_documented_exit_codes() {
    let out = kplace(&["gen", "--workload", "nope", "--nodes", "1", "--pods", "1", "-o", "-"]);
    assert_eq!(out.status.code(), Some(2), "an unknown workload is a usage error");
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown workload \"nope\""));

    let out = kplace(&["gen", "--workload", "SchedulingBasic", "--nodes", "1", "--pods", "1"]);
    assert_eq!(out.status.code(), Some(2), "-o is required");

    let out = kplace(&["gen", "--list", "--nodes", "3"]);
    assert_eq!(out.status.code(), Some(2), "--list takes no other option");

    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.yaml");
    let out = kplace(&[
        "gen",
        "--workload",
        "SchedulingBasic",
        "--nodes",
        "1",
        "--pods",
        "1",
        "--init-pods",
        "2",
        "-o",
        p.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--init-pods 2 is more than --pods 1"));

    let missing = dir.path().join("no/such/dir/x.yaml");
    let out = kplace(&[
        "gen",
        "--workload",
        "SchedulingBasic",
        "--nodes",
        "1",
        "--pods",
        "1",
        "-o",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no/such/dir/x.yaml"),
        "the error names the file"
    );
}

#[test]
fn five_thousand_nodes_and_ten_thousand_pods_are_written_in_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let path = gen_file(dir.path(), "SchedulingBasic", "5000", "10000", "1000", "1");
    let elapsed = start.elapsed();
    let len = std::fs::metadata(&path).unwrap().len();
    eprintln!("5000 nodes, 10000 pods: {len} bytes in {elapsed:?}");
    assert!(len > 10_000_000, "{len} bytes");
    // Well under a second in release and about one in debug; the bound only catches a
    // pathological slowdown on a loaded machine.
    assert!(elapsed.as_secs() < 60, "{elapsed:?}");
}
