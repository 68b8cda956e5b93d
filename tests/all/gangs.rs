//! Gangs end to end on `fixtures/gangs`: the loader reads both PodGroup conventions, the model
//! counts members and resolves `minMember` (a missing PodGroup is a warning), `kplace inspect`
//! shows the gang totals, and `kplace check` holds a plan to all-or-nothing.

use std::path::PathBuf;

use crate::run::kplace;
use kplace::check::{ViolationKind, check};
use kplace::model::GangConvention;
use kplace::plan::{Placement, Plan, Unschedulable};
use kplace::snapshot::{self, BuildOptions, Cluster};
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture() -> Cluster {
    let snap = snapshot::load(&[root().join("fixtures/gangs")]).expect("the fixture loads");
    snapshot::build(&snap, &BuildOptions::default()).expect("the fixture builds")
}

#[test]
fn the_fixture_has_one_gang_per_convention_and_one_without_a_pod_group() {
    let c = fixture();
    let gangs: Vec<_> = c
        .gangs
        .gangs
        .iter()
        .map(|g| {
            (
                g.key.convention,
                g.key.name.as_str(),
                g.min_member,
                g.pending.len(),
                g.bound,
                g.needed_from_pending(),
            )
        })
        .collect();
    assert_eq!(
        gangs,
        [
            (GangConvention::Coscheduling, "eval", 2, 2, 0, 2),
            (GangConvention::Coscheduling, "pretrain", 4, 4, 0, 4),
            (GangConvention::Volcano, "finetune", 3, 3, 1, 2),
        ]
    );
    let warnings: Vec<String> = c.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains(
            "PodGroup.scheduling.x-k8s.io ml/eval: no scheduling.x-k8s.io/v1alpha1 PodGroup"
        ),
        "{warnings:?}"
    );
    assert!(warnings[0].contains("ml/eval-0, ml/eval-1"), "{warnings:?}");
}

/// A plan placing `placed` (pod, node) and listing every other pending pod as unschedulable.
fn plan_of(c: &Cluster, placed: &[(&str, &str)]) -> Plan {
    Plan {
        placements: placed
            .iter()
            .map(|(p, n)| Placement { pod: (*p).to_string(), node: (*n).to_string() })
            .collect(),
        unschedulable: c
            .pending
            .iter()
            .map(|p| p.key())
            .filter(|k| !placed.iter().any(|(p, _)| p == k))
            .map(|pod| Unschedulable { pod, message: String::new(), reasons: Default::default() })
            .collect(),
        ..Default::default()
    }
}

#[test]
fn check_holds_plans_on_the_fixture_to_all_or_nothing() {
    let c = fixture();
    /// (case, placements, violations expected).
    type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], usize);
    let cases: &[Case<'_>] = &[
        (
            "placing three of pretrain's four workers, as a scheduler without gangs does, is \
             reported",
            &[("ml/pretrain-0", "gpu-2"), ("ml/pretrain-1", "gpu-1"), ("ml/pretrain-2", "gpu-2")],
            1,
        ),
        (
            "leaving pretrain out and placing finetune's three pending workers is valid",
            &[
                ("ml/finetune-1", "gpu-1"),
                ("ml/finetune-2", "gpu-2"),
                ("ml/finetune-3", "gpu-2"),
                ("ml/eval-0", "cpu-1"),
                ("ml/eval-1", "cpu-2"),
                ("shop/web-1", "cpu-2"),
            ],
            0,
        ),
        (
            "two finetune workers make minMember 3 with the running one",
            &[("ml/finetune-1", "gpu-1"), ("ml/finetune-2", "gpu-2")],
            0,
        ),
        (
            "one finetune worker and one eval pod fall short of both groups",
            &[("ml/finetune-1", "gpu-1"), ("ml/eval-0", "cpu-1")],
            2,
        ),
    ];
    for (name, placed, violations) in cases {
        let report = check(&c.state, &c.pending, &plan_of(&c, placed));
        assert!(
            report.violations.iter().all(|v| v.kind == ViolationKind::Gang),
            "{name}: {:#?}",
            report.violations
        );
        assert_eq!(report.violations.len(), *violations, "{name}: {:#?}", report.violations);
    }
}

#[test]
fn inspect_shows_gang_totals_per_convention() {
    let out = kplace(&["inspect", "fixtures/gangs", "-o", "json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let gangs = &report["gangs"];
    assert_eq!(gangs[0]["convention"], "coscheduling");
    assert_eq!(gangs[0]["gangs"], 2);
    assert_eq!(gangs[0]["pending_members"], 6);
    assert_eq!(gangs[0]["min_member"], 6);
    assert_eq!(gangs[1]["convention"], "volcano");
    assert_eq!(gangs[1]["bound_members"], 1);
    assert_eq!(gangs[1]["needed_from_pending"], 2);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no scheduling.x-k8s.io/v1alpha1 PodGroup"),
        "the missing PodGroup is a warning on stderr"
    );

    let table = kplace(&["inspect", "fixtures/gangs"]);
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.contains("GANGS"), "{text}");
    let row = text.lines().find(|l| l.starts_with("volcano")).expect("a volcano row");
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>(),
        ["volcano", "1", "3", "1", "3", "2", "0"]
    );

    let yaml =
        String::from_utf8(kplace(&["inspect", "fixtures/gangs", "-o", "yaml"]).stdout).unwrap();
    assert!(yaml.contains("convention: volcano"), "{yaml}");
}
