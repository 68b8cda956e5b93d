//! Unit tests of the binder's plan checks and plan reading.
use super::*;

fn placement(pod: &str, node: &str) -> Placement {
    Placement { pod: pod.to_string(), node: node.to_string() }
}

fn eviction(pod: &str, node: &str, preemptor: &str) -> Eviction {
    Eviction { pod: pod.to_string(), node: node.to_string(), preemptor: preemptor.to_string() }
}

#[test]
fn pod_keys_need_exactly_one_slash_between_two_non_empty_parts() {
    let cases = [
        ("a namespace and a name parse", "ns/a", true),
        ("no slash does not", "a", false),
        ("an empty namespace does not", "/a", false),
        ("an empty name does not", "ns/", false),
        ("two slashes do not", "ns/a/b", false),
    ];
    for (name, key, ok) in cases {
        assert_eq!(PodKey::parse(key).is_some(), ok, "{name}");
    }
}

#[test]
fn invalid_plans_are_rejected_naming_the_field() {
    let cases: Vec<(&str, Plan, &str)> = vec![
        (
            "a pod placed twice",
            Plan {
                placements: vec![placement("ns/a", "n1"), placement("ns/a", "n2")],
                ..Default::default()
            },
            "placements[1].pod",
        ),
        (
            "a placement with no node",
            Plan { placements: vec![placement("ns/a", "")], ..Default::default() },
            "placements[0].node",
        ),
        (
            "a pod key with no namespace",
            Plan { placements: vec![placement("a", "n1")], ..Default::default() },
            "placements[0].pod",
        ),
        (
            "an eviction whose preemptor has no placement",
            Plan {
                placements: vec![placement("ns/a", "n1")],
                evictions: vec![eviction("ns/v", "n1", "ns/b")],
                ..Default::default()
            },
            "evictions[0].preemptor",
        ),
        (
            "a pod both placed and evicted",
            Plan {
                placements: vec![placement("ns/a", "n1")],
                evictions: vec![eviction("ns/a", "n1", "ns/a")],
                ..Default::default()
            },
            "evictions[0].pod",
        ),
        (
            "a victim evicted twice",
            Plan {
                placements: vec![placement("ns/a", "n1")],
                evictions: vec![eviction("ns/v", "n1", "ns/a"), eviction("ns/v", "n1", "ns/a")],
                ..Default::default()
            },
            "evictions[1].pod",
        ),
    ];
    for (name, plan, want) in cases {
        match Work::new(&plan) {
            Err(BindError::InvalidPlan { field, .. }) => assert_eq!(field, want, "{name}"),
            other => panic!("{name}: expected an invalid plan, got {other:?}"),
        }
    }
}

#[test]
fn evictions_are_grouped_by_preemptor_in_plan_order() {
    let plan = Plan {
        placements: vec![placement("ns/p", "n1"), placement("ns/q", "n2")],
        evictions: vec![
            eviction("ns/v1", "n2", "ns/q"),
            eviction("ns/v2", "n1", "ns/p"),
            eviction("ns/v3", "n2", "ns/q"),
        ],
        ..Default::default()
    };
    let work = Work::new(&plan).unwrap();
    let groups: Vec<(String, &str, Vec<usize>)> = work
        .groups
        .iter()
        .map(|g| {
            let preemptor = g.preemptor.as_ref().map(PodKey::to_string).unwrap_or_default();
            (preemptor, g.node, g.victims.iter().map(|v| v.0).collect())
        })
        .collect();
    assert_eq!(
        groups,
        vec![("ns/q".to_string(), "n2", vec![0, 2]), ("ns/p".to_string(), "n1", vec![1])]
    );
}

#[test]
fn success_depends_on_the_action() {
    let cases = [
        ("a bound pod succeeded", Action::Bind, Outcome::Bound, true),
        ("an already bound pod succeeded", Action::Bind, Outcome::AlreadyBound, true),
        ("a gone pod did not bind", Action::Bind, Outcome::Gone, false),
        ("a conflict did not bind", Action::Bind, Outcome::Conflict, false),
        ("a skipped binding did not bind", Action::Bind, Outcome::Skipped, false),
        ("a gone victim freed its room", Action::Evict, Outcome::Gone, true),
        ("an unneeded eviction is fine", Action::Evict, Outcome::NotNeeded, true),
        ("a refused eviction is not", Action::Evict, Outcome::Refused, false),
    ];
    for (name, action, outcome, want) in cases {
        assert_eq!(outcome.is_success(action), want, "{name}");
    }
}

#[test]
fn plans_written_by_other_tools_are_read_leniently() {
    let full = |pod: &str, node: &str, preemptor: &str| Eviction {
        pod: pod.to_string(),
        node: node.to_string(),
        preemptor: preemptor.to_string(),
    };
    // (name, document, evictions read, unschedulable (pod, message) read)
    type Case<'a> = (&'a str, &'a str, Vec<Eviction>, Vec<(&'a str, &'a str)>);
    let cases: Vec<Case> = vec![
        (
            "kube-scheduler's (kso) plan, with fields kplace does not know",
            r#"{"placements": [{"pod": "ns/p", "node": "n1"}],
                "evictions": [{"pod": "ns/v", "node": "n1", "preemptor": "ns/p"}],
                "unschedulable": [{"pod": "ns/u", "message": "0/3 nodes are available",
                                   "reasons": {"Insufficient cpu": 2}, "attempts": 1}],
                "summary": {"placed": 1, "wall_ms": 2.5, "pods_per_s": 400.0}}"#,
            vec![full("ns/v", "n1", "ns/p")],
            vec![("ns/u", "0/3 nodes are available")],
        ),
        (
            "evictions as namespace/name strings",
            r#"{"placements": [], "evictions": ["ns/v", "ns/w"]}"#,
            vec![full("ns/v", "", ""), full("ns/w", "", "")],
            vec![],
        ),
        (
            "an eviction without a preemptor",
            r#"{"placements": [], "evictions": [{"pod": "ns/v", "node": "n1"}]}"#,
            vec![full("ns/v", "n1", "")],
            vec![],
        ),
        (
            "unschedulable entries without a message or reasons",
            r#"{"placements": [], "unschedulable": [{"pod": "ns/u"}]}"#,
            vec![],
            vec![("ns/u", "")],
        ),
        (
            "the same in YAML",
            "placements: []\nevictions:\n- ns/v\n- {pod: ns/w, node: n2}\n\
             unschedulable:\n- pod: ns/u\n",
            vec![full("ns/v", "", ""), full("ns/w", "n2", "")],
            vec![("ns/u", "")],
        ),
        (
            "a summary that is not kplace's is ignored",
            r#"{"placements": [], "summary": {"placed": "many"}}"#,
            vec![],
            vec![],
        ),
    ];
    for (name, text, evictions, unschedulable) in cases {
        let plan = parse_plan(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(plan.evictions, evictions, "{name}");
        let got: Vec<(&str, &str)> =
            plan.unschedulable.iter().map(|u| (u.pod.as_str(), u.message.as_str())).collect();
        assert_eq!(got, unschedulable, "{name}");
        // Written back, every field is there.
        let written = serde_json::to_value(&plan).unwrap();
        for e in written["evictions"].as_array().unwrap() {
            assert!(e["pod"].is_string() && e["node"].is_string(), "{name}: {e}");
            assert!(e["preemptor"].is_string(), "{name}: {e}");
        }
        for u in written["unschedulable"].as_array().unwrap() {
            assert!(u["message"].is_string() && u["reasons"].is_object(), "{name}: {u}");
        }
    }
}

#[test]
fn bad_plan_documents_are_errors_saying_where() {
    let cases = [
        (
            "a duplicate key in JSON",
            r#"{"placements": [{"pod": "ns/a", "node": "n1", "node": "n2"}]}"#,
            "placements[0]: duplicate key \"node\"",
        ),
        ("no placements: not a plan", r#"{"nodes": []}"#, "missing field `placements`"),
        ("an eviction that is a number", r#"{"placements": [], "evictions": [3]}"#, "evictions[0]"),
        ("not a mapping", "[1, 2]", "not a plan document"),
    ];
    for (name, text, want) in cases {
        let err = parse_plan(text).expect_err(name);
        assert!(err.contains(want), "{name}: {err}");
    }
}

#[test]
fn evictions_without_a_preemptor_are_carried_out_alone() {
    let mut lone = eviction("ns/v", "", "");
    lone.preemptor.clear();
    let plan = Plan {
        placements: vec![placement("ns/p", "n1")],
        evictions: vec![lone, eviction("ns/w", "n1", "ns/p")],
        ..Default::default()
    };
    let work = Work::new(&plan).unwrap();
    let groups: Vec<(Option<String>, Vec<usize>)> = work
        .groups
        .iter()
        .map(|g| {
            (g.preemptor.as_ref().map(|k| k.to_string()), g.victims.iter().map(|v| v.0).collect())
        })
        .collect();
    assert_eq!(groups, vec![(None, vec![0]), (Some("ns/p".to_string()), vec![1])]);
}

#[test]
fn plans_are_read_from_json_and_yaml_without_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("plan.json");
    std::fs::write(
        &json,
        r#"{"placements": [{"pod": "ns/a", "node": "n1"}],
            "evictions": [{"pod": "ns/v", "node": "n1", "preemptor": "ns/a"}],
            "summary": {"placed": 1}}"#,
    )
    .unwrap();
    let yaml = dir.path().join("plan.yaml");
    std::fs::write(&yaml, "placements:\n- pod: ns/a\n  node: n1\n").unwrap();
    let plan = read_plan(&json).unwrap();
    assert_eq!(plan.placements, vec![placement("ns/a", "n1")]);
    assert_eq!(plan.evictions, vec![eviction("ns/v", "n1", "ns/a")]);
    assert_eq!(read_plan(&yaml).unwrap().placements, vec![placement("ns/a", "n1")]);

    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"placements": [{"pod": "ns/a"}]}"#).unwrap();
    let err = read_plan(&bad).unwrap_err().to_string();
    assert!(err.contains("bad.json") && err.contains("placements[0]"), "{err}");
}
