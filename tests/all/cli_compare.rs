//! `kplace compare` end to end: on the demo fixture and on a `kplace gen` snapshot of every
//! workload `kplace gen --list` names, the JSON document has its documented fields, the
//! figures add up, both plans pass `kplace check`, and no progress bar reaches a piped stderr.

use std::path::{Path, PathBuf};

use crate::run::{kplace, ok};
use kplace::compare::verdict::Outcome;
use kplace::compare::{Comparison, SCHEMA_VERSION, Side};

fn demo_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo")
}

/// Runs `compare -o json` and returns the typed document and the raw JSON.
fn compare_json(snapshot: &Path, extra: &[&str]) -> (Comparison, serde_json::Value, String) {
    let mut args = vec!["compare", snapshot.to_str().expect("utf-8 path"), "-o", "json"];
    args.extend_from_slice(extra);
    let out = ok(&args);
    let raw: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("stdout is exactly one JSON document");
    let typed: Comparison = serde_json::from_value(raw.clone()).expect("the documented struct");
    (typed, raw, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The figures of one side add up.
fn check_side(name: &str, side: &Side, pending: usize) {
    assert_eq!(side.violations, 0, "{name}: {:#?}", side.violation_list);
    assert_eq!(side.placed + side.unschedulable, pending, "{name}: every pending pod decided");
    assert_eq!(side.placed_by_priority.values().sum::<usize>(), side.placed, "{name}");
    assert_eq!(side.unschedulable_by_priority.values().sum::<usize>(), side.unschedulable);
    for (r, u) in &side.utilization {
        assert!(u.mean >= 0.0 && u.mean <= u.max + 1e-9, "{name} {r}: mean ≤ max");
        assert!(u.stddev >= 0.0, "{name} {r}");
    }
    for (r, s) in &side.stranded {
        assert!(0 <= s.stranded && s.stranded <= s.free, "{name} {r}: stranded ≤ free");
        assert!((0.0..=1.0).contains(&s.fraction_of_free), "{name} {r}");
    }
    let t = &side.timings_ms;
    assert!((t.decision - (t.encode + t.evaluate + t.solve)).abs() < 1e-6, "{name}: decision");
    assert!(t.wall >= 0.0 && t.check >= 0.0);
    if pending > 0 && t.decision > 0.0 {
        assert!(side.pods_per_second > 0.0, "{name}: pods/s");
    }
}

fn check_document(c: &Comparison, raw: &serde_json::Value, stderr: &str, what: &str) {
    assert_eq!(c.schema_version, SCHEMA_VERSION, "{what}");
    for key in
        ["schema_version", "snapshot", "settings", "baseline", "plan", "differences", "valid"]
    {
        assert!(raw.get(key).is_some(), "{what}: top-level field {key}");
    }
    for key in [
        "placed",
        "placed_by_priority",
        "unschedulable",
        "unschedulable_by_priority",
        "evictions",
        "nodes_used",
        "utilization",
        "stranded",
        "stranded_reference",
        "violations",
        "timings_ms",
        "pods_per_second",
    ] {
        assert!(raw["baseline"].get(key).is_some(), "{what}: baseline.{key}");
        assert!(raw["plan"].get(key).is_some(), "{what}: plan.{key}");
    }
    assert!(c.valid, "{what}: both plans pass check");
    let pending = c.snapshot.pending_pods;
    check_side(&format!("{what} baseline"), &c.baseline, pending);
    check_side(&format!("{what} plan"), &c.plan, pending);
    let d = &c.differences;
    assert_eq!(
        d.same_node + d.different_node + d.only_baseline + d.only_plan + d.neither,
        pending,
        "{what}: each pending pod in one difference class"
    );
    assert_eq!(d.pods.len() + d.pods_not_listed, d.different_node + d.only_baseline + d.only_plan);
    assert_eq!(d.node_deltas.len() + d.node_deltas_not_listed, d.nodes_changed);
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains('\r'),
        "{what}: no progress bar or escape code on a piped stderr: {stderr:?}"
    );
}

#[test]
fn compare_on_the_demo_fixture_reports_both_plans_side_by_side() {
    let (c, raw, stderr) = compare_json(&demo_dir(), &["--seed", "0"]);
    check_document(&c, &raw, &stderr, "demo");
    assert_eq!((c.snapshot.nodes, c.snapshot.pending_pods), (24, 118));
    // As `kplace plan` and `kplace baseline` print them (tests/all/plan_check_cli.rs).
    assert_eq!(c.plan.placed, 114);
    assert!(c.plan.placed >= c.baseline.placed);
    assert_eq!(c.baseline.algorithm, "baseline");
    assert_eq!(c.settings.solver, "auto");
    assert!(c.baseline.utilization.contains_key("nvidia.com/gpu"));
    assert_eq!(raw["baseline"]["stranded_reference"], "pending");
    // The demo has no Service or ReplicaSet object, so no pod gets the profile's default
    // spreading: the solver still evens out each owner's pods over zones and nodes.
    assert_eq!(c.verdict.overall, Outcome::Better, "{}", c.verdict.line);
    assert_eq!(c.more_skewed.workloads, 0, "{:?}", c.more_skewed);
    assert_eq!(raw["more_skewed"]["beyond_max_skew"], 0);
}

#[test]
fn with_several_baseline_seeds_each_workloads_spread_is_set_against_every_seed() {
    const ZONE: &str = "topology.kubernetes.io/zone";
    const HOST: &str = "kubernetes.io/hostname";
    let demo = demo_dir();
    let (c, raw, _) = compare_json(&demo, &["--backend", "cpu", "--seed", "4"]);
    assert!(raw.get("baseline_seeds").is_none(), "one seed: no such section");
    let (c3, _, _) =
        compare_json(&demo, &["--backend", "cpu", "--seed", "4", "--baseline-seeds", "3"]);
    let s = c3.baseline_seeds.as_ref().expect("three seeds: the section is there");
    assert_eq!(s.seeds, vec![4, 5, 6]);
    assert_eq!(s.baseline_placed.len(), 3);
    assert_eq!(s.baseline_placed[0], c.baseline.placed, "the first seed is the comparison's own");
    assert_eq!(c3.plan.placed, c.plan.placed, "the plan does not depend on the seeds");
    // Against the first seed the count is the comparison's own per-workload verdict.
    let skew =
        |w: &kplace::compare::workloads::WorkloadSide, k: &str| w.skew.get(k).copied().unwrap_or(0);
    let worse: Vec<&str> = c
        .owners
        .iter()
        .filter(|o| {
            skew(&o.plan, ZONE) > skew(&o.baseline, ZONE)
                || skew(&o.plan, HOST) > skew(&o.baseline, HOST)
        })
        .map(|o| o.owner.as_str())
        .collect();
    assert_eq!(s.worse_than_first, worse.len());
    assert!(s.worse_than_every <= s.worse_than_median, "above every seed is above the median");
    for row in &s.owners {
        for key in [ZONE, HOST] {
            assert_eq!(row.baseline_skew[key].len(), 3, "{}", row.owner);
        }
        let every = [ZONE, HOST].iter().any(|k| {
            let plan = row.plan_skew.get(*k).copied().unwrap_or(0);
            row.baseline_skew[*k].iter().all(|&b| plan > b)
        });
        assert_eq!(row.worse_than_every, every, "{}", row.owner);
    }
    for o in &worse {
        assert!(s.owners.iter().any(|r| r.owner == *o), "{o} is listed");
    }
    let tmp = tempfile::tempdir().expect("temp dir");
    let report = tmp.path().join("report.html");
    let out = ok(&[
        "compare",
        demo.to_str().expect("utf-8"),
        "--backend",
        "cpu",
        "--baseline-seeds",
        "3",
        "--report",
        report.to_str().expect("utf-8"),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("baseline ran under seeds 0-2"), "{text}");
    assert!(text.contains("than every seed:"), "{text}");
    let html = std::fs::read_to_string(&report).expect("the report is written");
    assert!(html.contains("<p class=\"note\" id=\"seed-counts\""), "the report has the counts");
    assert!(html.contains("baseline ran under seeds 0–2"), "the report names the seeds");
    let out = kplace(&["compare", demo.to_str().expect("utf-8"), "--baseline-seeds", "0"]);
    assert_eq!(out.status.code(), Some(2), "at least one seed");
}

/// `--victims-leave` reaches `baseline` and the document: on a mixed-priority cluster, where
/// high-priority services preempt batch pods throughout, victims that leave at once let the
/// pods after a preemptor use the room it leaves over instead of preempting again, so
/// `baseline` evicts fewer pods and leaves less room to lower priorities; `plan` is the same.
#[test]
fn when_baselines_preemption_victims_leave_changes_its_evictions_and_is_recorded() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let snap = tmp.path().join("mp.yaml");
    ok(&["gen", "-q", "--workload", "mixed-priority", "--nodes", "40", "--pods", "700"]
        .into_iter()
        .chain(["--init-pods", "450", "--seed", "3", "-o", snap.to_str().expect("utf-8")])
        .collect::<Vec<_>>());
    let (queue, _, _) = compare_json(&snap, &["--backend", "cpu"]);
    let (once, raw, _) = compare_json(&snap, &["--backend", "cpu", "--victims-leave", "at-once"]);
    assert_eq!(queue.settings.victims_leave, "after-queue");
    assert!(queue.settings.notes.is_empty(), "{:?}", queue.settings.notes);
    assert_eq!(raw["settings"]["victims_leave"], "at-once");
    assert!(once.settings.notes.iter().any(|n| n.contains("--victims-leave at-once")));
    assert!(
        once.baseline.evictions < queue.baseline.evictions,
        "evictions: at once {}, after the queue {}",
        once.baseline.evictions,
        queue.baseline.evictions
    );
    assert!(once.baseline.placed < queue.baseline.placed, "the room left over goes unused");
    assert_eq!(once.plan.placed, queue.plan.placed, "the plan does not depend on the flag");
    assert_eq!(once.plan.evictions, queue.plan.evictions);
    for c in [&queue, &once] {
        check_side("baseline", &c.baseline, c.snapshot.pending_pods);
    }
}

/// `--baseline-plan` sets `plan` against a plan document instead of a `baseline` run: `baseline`'s
/// own document reads exactly as the run does; a document with kso's summary is named after the
/// scheduler and timed by its `wall_ms`; it cannot be combined with simulating flags.
#[test]
fn a_plan_document_stands_in_for_baselines_run() {
    let demo = demo_dir();
    let demo_arg = demo.to_str().expect("utf-8");
    let tmp = tempfile::tempdir().expect("temp dir");
    let doc = tmp.path().join("baseline.json");
    let out = ok(&["baseline", demo_arg, "--backend", "cpu", "-o", "json", "-q"]);
    std::fs::write(&doc, &out.stdout).expect("write the plan");
    let doc_arg = doc.to_str().expect("utf-8");

    let (run, _, _) = compare_json(&demo, &["--backend", "cpu"]);
    let (read, raw, _) = compare_json(&demo, &["--backend", "cpu", "--baseline-plan", doc_arg]);
    assert_eq!(raw["settings"]["baseline_plan"], serde_json::json!([doc_arg]));
    assert!(raw.get("baseline_seeds").is_none(), "one document: no spread section");
    assert_eq!(read.settings.victims_leave, "", "not simulated");
    assert!(read.settings.notes.iter().any(|n| n.contains("not simulated")), "{:?}", read.settings);
    assert_eq!(read.baseline.placed, run.baseline.placed);
    assert_eq!(read.baseline.placed_by_priority, run.baseline.placed_by_priority);
    assert_eq!(read.baseline.evictions, run.baseline.evictions);
    assert_eq!(read.baseline.utilization, run.baseline.utilization);
    assert_eq!(read.owners, run.owners, "per workload the same");
    assert_eq!(read.plan.placed, run.plan.placed);

    // kso's document: its own summary fields, a wall time.
    let mut kso: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let placed = kso["placements"].as_array().expect("placements").len();
    kso["summary"] = serde_json::json!({
        "placed": placed, "wall_ms": 1500.0, "pods_per_s": 1.0,
        "kube_scheduler_version": "v1.35.4"
    });
    let kso_doc = tmp.path().join("kso.json");
    std::fs::write(&kso_doc, serde_json::to_vec(&kso).expect("json")).expect("write");
    let (c, _, _) = compare_json(
        &demo,
        &["--backend", "cpu", "--baseline-plan", kso_doc.to_str().expect("utf-8")],
    );
    assert_eq!(c.baseline.algorithm, "kube-scheduler v1.35.4");
    assert_eq!(c.baseline.timings_ms.decision, 1500.0);
    assert_eq!(c.baseline.placed, placed);

    // Two documents (baseline under seeds 0 and 5): each workload's spread against both.
    let seed5 = tmp.path().join("seed5.json");
    let out5 = ok(&["baseline", demo_arg, "--backend", "cpu", "-o", "json", "-q", "--seed", "5"]);
    std::fs::write(&seed5, &out5.stdout).expect("write the plan");
    let seed5_arg = seed5.to_str().expect("utf-8");
    let two = ["--backend", "cpu", "--baseline-plan", doc_arg, "--baseline-plan", seed5_arg];
    let (c2, _, _) = compare_json(&demo, &two);
    let (s5, _, _) = compare_json(&demo, &["--backend", "cpu", "--seed", "5"]);
    let s = c2.baseline_seeds.as_ref().expect("two documents: the spread section");
    assert_eq!(s.documents, vec![doc_arg.to_string(), seed5_arg.to_string()]);
    assert_eq!(s.seeds, vec![1, 2]);
    assert_eq!(s.baseline_placed, vec![run.baseline.placed, s5.baseline.placed]);
    assert_eq!(c2.baseline.placed, run.baseline.placed, "the first document is the baseline");
    let mut args = vec!["compare", demo_arg];
    args.extend(two);
    let text = String::from_utf8_lossy(&ok(&args).stdout).into_owned();
    assert!(text.contains("baseline is 2 plan documents"), "{text}");
    assert!(text.contains("than every plan document:"), "{text}");

    for extra in [["--baseline-seeds", "2"], ["--victims-leave", "at-once"]] {
        let mut args = vec!["compare", demo_arg, "--baseline-plan", doc_arg];
        args.extend(extra);
        assert_eq!(kplace(&args).status.code(), Some(2), "{extra:?} simulates the baseline");
    }
    let missing = tmp.path().join("missing.json");
    let out = kplace(&["compare", demo_arg, "--baseline-plan", missing.to_str().expect("utf-8")]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.json"), "names the file");
}

#[test]
fn compare_prints_a_side_by_side_table() {
    let demo = demo_dir();
    let out = ok(&["compare", demo.to_str().expect("utf-8"), "--backend", "cpu"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "METRIC",
        "BASELINE",
        "pods placed",
        "unschedulable",
        "evictions",
        "nodes used",
        "cpu mean util",
        "cpu balance (stddev)",
        "cpu stranded",
        "violations (kplace check)",
        "decision time",
        "pods/s",
    ] {
        assert!(text.contains(needle), "table has {needle:?}:\n{text}");
    }
    assert!(!text.contains("note: --backend"), "cpu needs no note");
}

#[test]
fn an_unknown_backend_or_solver_is_a_usage_error() {
    let demo = demo_dir();
    let out = kplace(&["compare", demo.to_str().expect("utf-8"), "--backend", "tpu"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tpu"));
    let out = kplace(&["compare", demo.to_str().expect("utf-8"), "--solver", "magic"]);
    assert_eq!(out.status.code(), Some(2));
}

/// The names `kplace gen --list` prints (the unindented lines before the usage line).
fn listed_workloads() -> Vec<String> {
    let out = ok(&["gen", "--list"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with(' ') && !l.starts_with("Usage:"))
        .map(str::to_string)
        .collect()
}

#[test]
fn compare_works_on_a_generated_snapshot_of_every_workload() {
    let workloads = listed_workloads();
    assert_eq!(workloads.len(), kplace::r#gen::Workload::ALL.len());
    let tmp = tempfile::tempdir().expect("temp dir");
    for w in &workloads {
        let path = tmp.path().join(format!("{w}.yaml"));
        let p = path.to_str().expect("utf-8");
        ok(&[
            "gen",
            "--workload",
            w,
            "--nodes",
            "12",
            "--pods",
            "60",
            "--init-pods",
            "20",
            "-o",
            p,
        ]);
        let (c, raw, stderr) = compare_json(&path, &["--backend", "cpu"]);
        check_document(&c, &raw, &stderr, w);
        assert_eq!(c.snapshot.nodes, 12, "{w}");
        assert!(c.snapshot.pending_pods > 0, "{w}");
    }
}
