//! `kplace bench` end to end at tiny sizes: the JSON document has its documented fields, one
//! case per workload and node count in the order given, and its numbers are consistent (placed
//! ≤ pending, medians of the repeats, positive times and rates, ratios that match); with
//! `--upstream`, a fake external scheduler (and the real kso when present) is timed on a file
//! holding the case's every pod, and its failures are reported without stopping the bench.

use std::process::Output;

use crate::run::kplace;
use kplace::compare::bench::{BenchReport, BenchRun, SCHEMA_VERSION};

fn check_run(what: &str, run: &BenchRun, pending: usize, repeat: usize) {
    assert_eq!(run.decision_ms.len(), repeat, "{what}: one time per repeat");
    assert!(run.decision_ms.iter().all(|t| *t > 0.0), "{what}: {:?}", run.decision_ms);
    let (lo, hi) =
        run.decision_ms.iter().fold((f64::MAX, f64::MIN), |(lo, hi), t| (lo.min(*t), hi.max(*t)));
    assert!(
        lo <= run.decision_ms_median && run.decision_ms_median <= hi,
        "{what}: median in range"
    );
    assert!(run.decision_ms_median > 0.0 && run.wall_ms_median > 0.0, "{what}");
    assert!(run.pods_per_second > 0.0, "{what}");
    let expected = pending as f64 / (run.decision_ms_median / 1000.0);
    assert!((run.pods_per_second - expected).abs() <= 1e-6 * expected, "{what}: pods/s");
    assert!(run.placed <= pending, "{what}: placed ≤ pending");
    assert_eq!(run.placed + run.unschedulable, pending, "{what}");
    assert_eq!(run.placed_by_priority.values().sum::<usize>(), run.placed, "{what}");
    assert!(run.deterministic, "{what}: the same plan every run");
    assert_eq!(run.violations, Some(0), "{what}: check finds nothing");
    assert!(run.backend == "cpu", "{what}: {}", run.backend);
}

#[test]
fn a_small_bench_run_reports_consistent_numbers_in_the_documented_schema() {
    let out = kplace(&[
        "bench",
        "--workload",
        "SchedulingBasic,fragmentation-mix",
        "--nodes",
        "6",
        "--nodes",
        "10",
        "--pods-per-node",
        "3",
        "--repeat",
        "2",
        "--backend",
        "cpu",
        "--check",
        "-o",
        "json",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let raw: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    for key in
        ["schema_version", "machine", "adapter", "backend", "repeat", "seed", "cases", "notes"]
    {
        assert!(raw.get(key).is_some(), "top-level field {key}");
    }
    for key in ["cpu_model", "cores", "memory_bytes", "os", "kplace_version", "debug_build"] {
        assert!(raw["machine"].get(key).is_some(), "machine.{key}");
    }
    let r: BenchReport = serde_json::from_value(raw.clone()).expect("the documented struct");
    assert_eq!(r.schema_version, SCHEMA_VERSION);
    assert_eq!(r.repeat, 2);
    assert!(r.machine.cores >= 1);
    assert_eq!(r.adapter, None, "--backend cpu probes no adapter");
    let order: Vec<(&str, usize)> =
        r.cases.iter().map(|c| (c.workload.as_str(), c.nodes)).collect();
    assert_eq!(
        order,
        [
            ("SchedulingBasic", 6),
            ("SchedulingBasic", 10),
            ("fragmentation-mix", 6),
            ("fragmentation-mix", 10)
        ]
    );
    for c in &r.cases {
        let what = format!("{} {}", c.workload, c.nodes);
        assert_eq!(c.pods, 3 * c.nodes, "{what}: --pods-per-node");
        assert!(c.init_pods <= c.pods);
        assert_eq!(c.bound_pods + c.pending_pods, c.pods, "{what}: every pod bound or pending");
        assert!(c.load_ms > 0.0 && c.build_ms > 0.0, "{what}");
        check_run(&format!("{what} baseline"), &c.baseline, c.pending_pods, 2);
        check_run(&format!("{what} plan"), &c.plan_cpu, c.pending_pods, 2);
        let ratio = c.plan_cpu.decision_ms_median / c.baseline.decision_ms_median;
        assert!((c.ratio_cpu - ratio).abs() <= 1e-9 * ratio.max(1.0), "{what}: ratio");
        assert_eq!(c.quality_cpu.placed, c.plan_cpu.placed as i64 - c.baseline.placed as i64);
        assert_eq!(
            c.quality_cpu.nodes_used,
            c.plan_cpu.nodes_used as i64 - c.baseline.nodes_used as i64
        );
        assert!(c.plan_gpu.is_none() && c.gpu_note.is_some(), "{what}: no GPU run yet");
    }
}

#[test]
fn bench_prints_a_table_with_the_machine() {
    let out = kplace(&[
        "bench",
        "--workload",
        "SchedulingBasic",
        "--nodes",
        "5",
        "--pods",
        "12",
        "--repeat",
        "1",
        "--backend",
        "cpu",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in ["machine:", "adapter:", "WORKLOAD", "PLAN/BASELINE", "SchedulingBasic"] {
        assert!(text.contains(needle), "{needle:?} in:\n{text}");
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains('\u{1b}') && !stderr.contains('\r'), "no bars when piped: {stderr:?}");
}

#[test]
fn bench_rejects_bad_arguments_with_usage_errors() {
    for args in [
        &["bench", "--workload", "nope"][..],
        &["bench", "--repeat", "0"],
        &["bench", "--pods", "5", "--pods-per-node", "2"],
    ] {
        let out = kplace(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

/// A stand-in for kso in a temporary directory: `fake schedule SNAPSHOT -o PLAN` writes a
/// plan whose `summary.wall_ms` is `wall_ms` and exits with `status`, after recording how many
/// Pods the snapshot held in `seen` beside it.
fn fake_upstream(dir: &std::path::Path, wall_ms: &str, status: i32) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("fake-kso");
    let script = format!(
        r#"#!/bin/sh
[ "$1" = schedule ] && [ "$3" = -o ] || {{ echo "usage: $0 schedule SNAPSHOT -o PLAN" >&2; exit 64; }}
grep -c '^kind: Pod$' "$2" > "$(dirname "$0")/seen"
printf '{{"placements": [{{"pod": "a/b", "node": "n"}}], "evictions": [], "unschedulable": [], "summary": {{"wall_ms": {wall_ms}}}}}' > "$4"
[ {status} = 0 ] || echo "fake upstream failed on purpose" >&2
exit {status}
"#
    );
    std::fs::write(&path, script).expect("write the fake");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

fn bench_with_upstream(upstream: &str, output: &str) -> Output {
    kplace(&[
        "bench",
        "--workload",
        "SchedulingBasic",
        "--nodes",
        "5",
        "--pods",
        "12",
        "--repeat",
        "1",
        "--backend",
        "cpu",
        "--upstream",
        upstream,
        "-o",
        output,
    ])
}

#[test]
fn an_upstream_scheduler_is_timed_on_the_same_snapshot_and_compared_with_baseline() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fake = fake_upstream(dir.path(), "250.5", 0);
    let out = bench_with_upstream(fake.to_str().expect("utf-8 path"), "json");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: BenchReport = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let c = &r.cases[0];
    let seen: usize = std::fs::read_to_string(dir.path().join("seen"))
        .expect("the fake ran")
        .trim()
        .parse()
        .expect("a count");
    assert_eq!(seen, c.bound_pods + c.pending_pods, "the snapshot holds every pod of the case");
    let u = c.upstream.as_ref().expect("an upstream run");
    assert_eq!(u.wall_ms, vec![250.5]);
    assert_eq!(u.wall_ms_median, 250.5);
    assert_eq!((u.placed, u.unschedulable, u.partial), (1, 0, false));
    let pods_per_s = c.pending_pods as f64 / 0.2505;
    assert!((u.pods_per_second - pods_per_s).abs() <= 1e-6 * pods_per_s, "{}", u.pods_per_second);
    let ratio = c.upstream_over_baseline.expect("a ratio");
    let want = 250.5 / c.baseline.decision_ms_median;
    assert!((ratio - want).abs() <= 1e-9 * want, "{ratio} vs {want}");
    assert!(c.upstream_error.is_none());

    let out = bench_with_upstream(fake.to_str().expect("utf-8 path"), "table");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in
        ["UPSTREAM MS", "UPSTREAM PODS/S", "UPSTREAM/BASELINE", "250.5", "fake-kso schedule"]
    {
        assert!(text.contains(needle), "{needle:?} in:\n{text}");
    }
}

#[test]
fn a_failing_or_timed_out_upstream_is_reported_without_stopping_the_bench() {
    let dir = tempfile::tempdir().expect("tempdir");
    let failing = fake_upstream(dir.path(), "1", 1);
    let out = bench_with_upstream(failing.to_str().expect("utf-8 path"), "json");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: BenchReport = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let c = &r.cases[0];
    assert!(c.upstream.is_none() && c.upstream_over_baseline.is_none());
    let e = c.upstream_error.as_deref().expect("the failure is kept");
    assert!(e.contains("fake upstream failed on purpose"), "{e}");
    assert!(r.notes.iter().any(|n| n.contains("upstream")), "{:?}", r.notes);
    assert!(c.baseline.placed > 0, "kplace's runs are still reported");

    let partial = fake_upstream(dir.path(), "7", 3);
    let out = bench_with_upstream(partial.to_str().expect("utf-8 path"), "json");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: BenchReport = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let u = r.cases[0].upstream.as_ref().expect("a partial run is kept");
    assert!(u.partial && u.wall_ms_median == 7.0);

    let out = bench_with_upstream(dir.path().join("absent").to_str().expect("utf-8"), "json");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: BenchReport = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert!(r.cases[0].upstream_error.as_deref().is_some_and(|e| e.contains("absent")));
}

/// The real kube-scheduler, when `../shared/upstream/kso` is beside the checkout.
#[test]
fn the_real_kube_scheduler_is_timed_when_kso_is_present() {
    let kso = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/upstream/kso");
    if !kso.exists() {
        let msg = "kso (../shared/upstream/kso) is absent: bench --upstream was not run against it";
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
        eprintln!("{msg}");
        return;
    }
    let out = bench_with_upstream(kso.to_str().expect("utf-8 path"), "json");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: BenchReport = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let c = &r.cases[0];
    let u = c.upstream.as_ref().unwrap_or_else(|| panic!("kso ran: {:?}", c.upstream_error));
    assert_eq!(u.placed, c.baseline.placed, "kube-scheduler places what baseline places");
    assert_eq!(u.unschedulable, c.baseline.unschedulable);
    assert!(u.wall_ms_median > 0.0 && !u.partial);
}
