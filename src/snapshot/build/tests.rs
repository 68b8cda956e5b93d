use super::*;
use std::path::Path;

fn build_yaml(yaml: &str) -> Result<Cluster, SnapshotError> {
    let mut s = Snapshot::new();
    s.add_yaml(Path::new("t.yaml"), yaml)?;
    build(&s, &BuildOptions::default())
}

const CLASSES: &str = "\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: batch}
value: 10
preemptionPolicy: Never
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: default-a}
value: 50
globalDefault: true
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: default-b}
value: 40
globalDefault: true
preemptionPolicy: Never
";

fn pod(name: &str, spec_extra: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: ns}}\nspec:\n  containers: [{{name: c}}]\n{spec_extra}"
    )
}

#[test]
fn priority_resolves_like_the_admission_plugin() {
    let cases: &[(&str, &str, i32, PreemptionPolicy)] = &[
        (
            "an explicit priority wins",
            "  priority: 7\n  priorityClassName: high\n",
            7,
            PreemptionPolicy::PreemptLowerPriority,
        ),
        (
            "the class value applies without a priority",
            "  priorityClassName: high\n",
            1000,
            PreemptionPolicy::PreemptLowerPriority,
        ),
        (
            "the class preemption policy applies",
            "  priorityClassName: batch\n",
            10,
            PreemptionPolicy::Never,
        ),
        ("without a class the lowest global default applies", "", 40, PreemptionPolicy::Never),
        (
            "a built-in system class resolves without its object",
            "  priorityClassName: system-node-critical\n",
            2_000_001_000,
            PreemptionPolicy::PreemptLowerPriority,
        ),
        (
            "an explicit preemption policy wins",
            "  priorityClassName: batch\n  preemptionPolicy: PreemptLowerPriority\n",
            10,
            PreemptionPolicy::PreemptLowerPriority,
        ),
        (
            "an unknown class with an explicit priority is accepted",
            "  priority: 3\n  priorityClassName: gone\n",
            3,
            PreemptionPolicy::PreemptLowerPriority,
        ),
    ];
    for (name, extra, priority, policy) in cases {
        let c = build_yaml(&format!("{CLASSES}{}", pod("p", extra))).unwrap();
        assert_eq!(c.pending[0].priority, *priority, "{name}");
        assert_eq!(c.pending[0].preemption_policy, *policy, "{name} (policy)");
    }
    let c = build_yaml(&pod("p", "")).unwrap();
    assert_eq!(c.pending[0].priority, 0, "no class and no default gives 0");
    let err =
        build_yaml(&format!("{CLASSES}{}", pod("p", "  priorityClassName: gone\n"))).unwrap_err();
    assert!(
        err.to_string().contains("spec.priorityClassName: no PriorityClass named \"gone\""),
        "{err}"
    );
}

#[test]
fn pods_are_sorted_into_bound_pending_and_ignored() {
    let yaml = format!(
        "apiVersion: v1\nkind: Node\nmetadata: {{name: n1}}\nstatus: {{allocatable: {{cpu: '2', pods: '110'}}}}\n{}{}{}{}{}{}{}",
        pod("bound", "  nodeName: n1\n"),
        pod("pending", ""),
        pod("volcano", "  schedulerName: volcano\n"),
        pod("done", "  nodeName: n1\nstatus: {phase: Succeeded}\n"),
        pod("gated", "  schedulingGates: [{name: wait}]\n"),
        pod("elsewhere", "  nodeName: n9\n"),
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: going, namespace: ns, deletionTimestamp: '2026-01-01T00:00:00Z'}\nspec: {containers: [{name: c}]}\n",
    );
    let c = build_yaml(&yaml).unwrap();
    assert_eq!(c.state.nodes[0].pods.len(), 1);
    assert_eq!(c.state.nodes[0].pods[0].name, "bound");
    assert_eq!(c.pending.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["pending"]);
    assert_eq!(
        c.ignored,
        IgnoredPods {
            other_scheduler: 1,
            terminal: 1,
            terminating: 1,
            gated: 1,
            unknown_node: 1,
            outside_batch: 0,
        }
    );
    assert!(c.warnings.iter().any(|w| w.message.contains("not in the snapshot")));
}

#[test]
fn default_selectors_merge_services_and_controllers() {
    let yaml = "\
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ns}
spec: {selector: {app: web}}
---
apiVersion: v1
kind: Service
metadata: {name: other, namespace: ns}
spec: {selector: {app: other}}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-abc, namespace: ns}
spec:
  selector: {matchLabels: {app: web, pod-template-hash: abc}}
---
apiVersion: v1
kind: Pod
metadata:
  name: web-abc-1
  namespace: ns
  labels: {app: web, pod-template-hash: abc}
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: web-abc, uid: u, controller: true}
spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: lonely, namespace: ns, labels: {tier: x}}
spec: {containers: [{name: c}]}
";
    let c = build_yaml(yaml).unwrap();
    let by_name: BTreeMap<_, _> = c.pending.iter().map(|p| (p.name.as_str(), p)).collect();
    assert_eq!(
        by_name["web-abc-1"].default_spread_selector,
        Some(LabelSelector::from_match_labels([("app", "web"), ("pod-template-hash", "abc")]))
    );
    assert_eq!(by_name["lonely"].default_spread_selector, None);
}

#[test]
fn namespaces_carry_their_name_label_and_pdbs_convert() {
    let yaml = "\
apiVersion: v1
kind: Namespace
metadata: {name: shop, labels: {team: a}}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: shop}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}
status: {disruptionsAllowed: 2, currentHealthy: 3, desiredHealthy: 1, expectedPods: 3}
";
    let c = build_yaml(yaml).unwrap();
    assert_eq!(
        c.state.namespace_labels("shop").get("kubernetes.io/metadata.name").map(String::as_str),
        Some("shop")
    );
    assert_eq!(c.state.pdbs[0].disruptions_allowed, 2);
    assert_eq!(c.state.pdbs[0].selector, Some(LabelSelector::from_match_labels([("app", "web")])));
}

/// A pod in namespace `ml` with the given metadata extras and spec extras.
fn ml_pod(name: &str, meta_extra: &str, spec_extra: &str) -> String {
    format!(
        "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: ml\n{meta_extra}spec:\n  containers: [{{name: c}}]\n{spec_extra}"
    )
}

fn cosched(group: &str) -> String {
    format!("  labels: {{scheduling.x-k8s.io/pod-group: {group}}}\n")
}

fn volcano(group: &str) -> String {
    format!("  annotations: {{scheduling.k8s.io/group-name: {group}}}\n")
}

fn pod_group(api_version: &str, name: &str, min: i32) -> String {
    format!(
        "---\napiVersion: {api_version}\nkind: PodGroup\nmetadata: {{name: {name}, namespace: ml}}\nspec: {{minMember: {min}}}\n"
    )
}

const NODE: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '8', pods: '110'}}\n";

fn warnings_text(c: &Cluster) -> String {
    c.warnings.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
}

#[test]
fn gang_members_resolve_min_member_from_their_pod_group_and_count_bound_pods() {
    use crate::model::GangConvention::{Coscheduling, Volcano};
    let yaml = [
        NODE.to_string(),
        pod_group("scheduling.x-k8s.io/v1alpha1", "train", 3),
        pod_group("scheduling.volcano.sh/v1beta1", "infer", 2),
        ml_pod("a-bound", &cosched("train"), "  nodeName: n1\n"),
        ml_pod("a-done", &cosched("train"), "  nodeName: n1\nstatus: {phase: Succeeded}\n"),
        ml_pod("a-0", &cosched("train"), ""),
        ml_pod("a-1", &cosched("train"), ""),
        ml_pod("b-0", &volcano("infer"), ""),
        ml_pod("b-1", &volcano("infer"), ""),
        ml_pod("loner", "", ""),
    ]
    .concat();
    let c = build_yaml(&yaml).unwrap();
    assert!(c.warnings.is_empty(), "{}", warnings_text(&c));
    let names: Vec<_> = c.pending.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["a-0", "a-1", "b-0", "b-1", "loner"]);
    let gang = |i: usize| c.pending[i].gang.clone().map(|g| (g.convention, g.name, g.min_member));
    assert_eq!(gang(0), Some((Coscheduling, "train".to_string(), 3)), "a coscheduling member");
    assert_eq!(gang(2), Some((Volcano, "infer".to_string(), 2)), "a volcano member");
    assert_eq!(gang(4), None, "a pod without the label or annotation");
    let bound = &c.state.nodes[0].pods[0];
    assert_eq!(bound.gang.as_ref().map(|g| g.min_member), Some(3), "bound members resolve too");

    let gangs = &c.gangs.gangs;
    assert_eq!(gangs.len(), 2);
    assert_eq!(gangs[0].key.convention, Coscheduling, "gangs are sorted by convention first");
    assert_eq!((gangs[0].pending.as_slice(), gangs[0].bound), (&[0, 1][..], 1));
    assert_eq!(gangs[0].needed_from_pending(), 2, "the bound member counts, the finished one not");
    assert_eq!((gangs[1].pending.as_slice(), gangs[1].bound), (&[2, 3][..], 0));
    assert_eq!(c.gangs.of_pending, [Some(0), Some(0), Some(1), Some(1), None]);
}

#[test]
fn gang_findings_are_warnings_that_name_the_group_and_its_pods() {
    /// (case, documents, the gang's minMember if one forms, warning fragments).
    type Case<'a> = (&'a str, Vec<String>, Option<i32>, &'a [&'a str]);
    let cases: &[Case<'_>] = &[
        (
            "a missing PodGroup counts every pod of the group present",
            vec![
                NODE.to_string(),
                ml_pod("x-0", &cosched("lost"), ""),
                ml_pod("x-1", &cosched("lost"), ""),
                ml_pod("x-2", &cosched("lost"), "  nodeName: n1\n"),
            ],
            Some(3),
            &[
                "PodGroup.scheduling.x-k8s.io ml/lost",
                "no scheduling.x-k8s.io/v1alpha1 PodGroup in the snapshot",
                "label scheduling.x-k8s.io/pod-group=\"lost\"",
                "treated as all 3 pods present (minMember 3): ml/x-0, ml/x-1, ml/x-2",
            ],
        ),
        (
            "a missing volcano PodGroup names the annotation",
            vec![ml_pod("v-0", &volcano("gone"), "")],
            Some(1),
            &[
                "PodGroup.scheduling.volcano.sh ml/gone",
                "annotation scheduling.k8s.io/group-name=\"gone\"",
            ],
        ),
        (
            "a PodGroup of the other convention does not stand in for the missing one",
            vec![
                pod_group("scheduling.volcano.sh/v1beta1", "lost", 5),
                ml_pod("x-0", &cosched("lost"), ""),
            ],
            Some(1),
            &["no scheduling.x-k8s.io/v1alpha1 PodGroup in the snapshot"],
        ),
        (
            "a pod with both conventions joins its coscheduling group",
            vec![
                pod_group("scheduling.x-k8s.io/v1alpha1", "a", 1),
                pod_group("scheduling.volcano.sh/v1beta1", "b", 1),
                ml_pod(
                    "both",
                    "  labels: {scheduling.x-k8s.io/pod-group: a}\n  annotations: {scheduling.k8s.io/group-name: b}\n",
                    "",
                ),
            ],
            Some(1),
            &[
                "Pod ml/both",
                "both the label scheduling.x-k8s.io/pod-group=\"a\" and the annotation",
                "member of the coscheduling group \"a\" only",
            ],
        ),
        (
            "only the volcano controller's annotation makes no member",
            vec![ml_pod("c", "  annotations: {scheduling.volcano.sh/group-name: g}\n", "")],
            None,
            &["Pod ml/c", "not treated as a member of Volcano group \"g\""],
        ),
        (
            "a group with fewer pods than minMember cannot place any",
            vec![
                pod_group("scheduling.x-k8s.io/v1alpha1", "big", 4),
                ml_pod("b-0", &cosched("big"), ""),
                ml_pod("b-1", &cosched("big"), ""),
            ],
            Some(4),
            &[
                "t.yaml:2 (document 1): PodGroup.scheduling.x-k8s.io ml/big",
                "the group has 2 pods but spec.minMember 4",
                "ml/b-0, ml/b-1",
            ],
        ),
        (
            "minMember 0 holds nothing together",
            vec![
                pod_group("scheduling.volcano.sh/v1beta1", "zero", 0),
                ml_pod("z-0", &volcano("zero"), ""),
            ],
            Some(0),
            &["spec.minMember is 0 (or absent)"],
        ),
    ];
    for (name, docs, min, fragments) in cases {
        let c = build_yaml(&docs.concat()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let text = warnings_text(&c);
        for f in *fragments {
            assert!(text.contains(f), "{name}: {text:?} lacks {f:?}");
        }
        assert_eq!(c.gangs.gangs.first().map(|g| g.min_member), *min, "{name}");
        assert_eq!(c.gangs.gangs.len(), usize::from(min.is_some()), "{name}");
    }
}

#[test]
fn a_warning_lists_at_most_eight_pods() {
    let pods: Vec<String> = (0..11).map(|i| format!("ml/p-{i}")).collect();
    let got = pod_list(&pods);
    assert!(got.starts_with("ml/p-0, ml/p-1"), "{got}");
    assert!(got.ends_with("ml/p-7 and 3 more"), "{got}");
    assert_eq!(pod_list(&pods[..2]), "ml/p-0, ml/p-1");
}
