use std::collections::BTreeSet;
use std::convert::Infallible;

use super::*;
use crate::model::testing::{NodeBuilder, PodBuilder, cluster};
use crate::model::{LabelSelector, MatchOp, Node, PodAffinityTerm, Requirement};

/// The simulation clock used by the tests (seconds).
const NOW: i64 = 1_000_000;

// Upstream's test priorities.
const NEG: i32 = -100;
const LOW: i32 = 0;
const MID: i32 = 100;
const HIGH: i32 = 1000;
const VERY_HIGH: i32 = 10000;

// Upstream's test requests: (millicores, bytes of memory).
const NONE: (i64, i64) = (0, 0);
const SMALL: (i64, i64) = (100, 100);
const MEDIUM: (i64, i64) = (200, 200);
const LARGE: (i64, i64) = (300, 300);
const VERY_LARGE: (i64, i64) = (500, 500);

/// A pod in namespace `default` with a priority and requests.
fn pod(name: &str, priority: i32, res: (i64, i64)) -> PodBuilder {
    PodBuilder::new("default", name).priority(priority).cpu(res.0).memory(res.1)
}

/// A node with the given allocatable CPU and memory (and 110 pods).
fn node(name: &str, res: (i64, i64)) -> NodeBuilder {
    NodeBuilder::new(name).cpu(res.0).memory(res.1)
}

/// Upstream's `onePodRes` node: room for one pod, no CPU or memory.
fn one_pod_node(name: &str) -> Node {
    NodeBuilder::new(name).pods(1).obj()
}

fn pdb(name: &str, labels: &[(&str, &str)], allowed: i32, disrupted: &[&str]) -> Pdb {
    Pdb {
        namespace: "default".to_string(),
        name: name.to_string(),
        selector: Some(LabelSelector::from_match_labels(labels.iter().copied())),
        disruptions_allowed: allowed,
        disrupted_pods: disrupted.iter().map(|s| (*s).to_string()).collect(),
    }
}

/// A required anti-affinity term against pods having label `key` (upstream
/// `PodAntiAffinityExists(key, "hostname", …)`).
fn anti_affinity_exists(key: &str) -> PodAffinityTerm {
    PodAffinityTerm {
        label_selector: Some(LabelSelector {
            requirements: vec![Requirement::new(key, MatchOp::Exists, &[])],
        }),
        namespaces: Vec::new(),
        namespace_selector: None,
        topology_key: "kubernetes.io/hostname".to_string(),
        match_label_keys: Vec::new(),
        mismatch_label_keys: Vec::new(),
    }
}

/// The filters of the tests: NodeResourcesFit's pod-count, CPU and memory checks (with
/// upstream's reasons), optionally existing pods' required anti-affinity against the
/// incoming pod on the same node, and nodes that answer an internal error (upstream's
/// `TestPlugin` on nodes labelled `error=true`).
struct TestOracle<'a> {
    cluster: &'a ClusterState,
    anti_affinity: bool,
    error_nodes: BTreeSet<usize>,
}

impl<'a> TestOracle<'a> {
    fn resources(cluster: &'a ClusterState) -> Self {
        TestOracle { cluster, anti_affinity: false, error_nodes: BTreeSet::new() }
    }
}

impl FilterOracle for TestOracle<'_> {
    fn filter_without(&self, pod: &Pod, node_idx: usize, removed: &[Arc<Pod>]) -> Status {
        if self.error_nodes.contains(&node_idx) {
            return Status::error(format!(
                "running RemovePod on PreFilter plugin \"test-plugin\": failed to remove pod: {}",
                pod.name
            ));
        }
        let Some(node) = self.cluster.nodes.get(node_idx) else {
            return Status::error("no such node");
        };
        let remaining: Vec<&Arc<Pod>> =
            node.pods.iter().filter(|p| !removed.iter().any(|r| Arc::ptr_eq(p, r))).collect();
        if self.anti_affinity
            && remaining.iter().any(|p| {
                p.pod_anti_affinity.required.iter().any(|term| {
                    term.label_selector.as_ref().is_some_and(|s| s.matches(&pod.labels))
                })
            })
        {
            return Status::unschedulable("node(s) didn't match pod anti-affinity rules");
        }
        let mut reasons = Vec::new();
        let count = i64::try_from(remaining.len()).unwrap_or(i64::MAX);
        if count + 1 > node.allocatable.allowed_pod_number {
            reasons.push("Too many pods");
        }
        let cpu: i64 = remaining.iter().map(|p| p.requests.milli_cpu).sum();
        let memory: i64 = remaining.iter().map(|p| p.requests.memory).sum();
        if pod.requests.milli_cpu > 0 && pod.requests.milli_cpu > node.allocatable.milli_cpu - cpu {
            reasons.push("Insufficient cpu");
        }
        if pod.requests.memory > 0 && pod.requests.memory > node.allocatable.memory - memory {
            reasons.push("Insufficient memory");
        }
        if reasons.is_empty() {
            Status::success()
        } else {
            Status::new(Code::Unschedulable, reasons)
        }
    }
}

/// A generator replaying fixed 64-bit draws (cycling), to pin the dry run's offset.
struct ScriptedRng {
    draws: Vec<u64>,
    next: usize,
}

impl rand::TryRng for ScriptedRng {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok((self.try_next_u64()? >> 32) as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        let v = if self.draws.is_empty() {
            0
        } else {
            self.draws.get(self.next % self.draws.len()).copied().unwrap_or(0)
        };
        self.next += 1;
        Ok(v)
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        dst.fill(0);
        Ok(())
    }
}

/// 64-bit draws whose `Int31()` values are `values`.
fn int31_draws(values: &[u64]) -> ScriptedRng {
    ScriptedRng { draws: values.iter().map(|v| v << 33).collect(), next: 0 }
}

/// A generator whose first `Int31n(n)` is `offset` for any `n > offset`.
fn offset_rng(offset: u64) -> ScriptedRng {
    int31_draws(&[offset])
}

fn status_without_reasons(code: Code) -> Status {
    Status::new(code, std::iter::empty::<String>())
}

/// A diagnosis with explicit statuses by node index and an absent-nodes status.
fn diagnosis(explicit: &[(usize, Code)], absent: Option<Code>) -> Diagnosis {
    let mut d = Diagnosis::default();
    for &(i, code) in explicit {
        d.node_statuses.insert(i, status_without_reasons(code));
    }
    d.absent_nodes_status = absent.map(status_without_reasons);
    d
}

/// Every node of a `n`-node cluster rejected the pod as `Unschedulable`.
fn all_unschedulable(n: usize) -> Diagnosis {
    let explicit: Vec<(usize, Code)> = (0..n).map(|i| (i, Code::Unschedulable)).collect();
    diagnosis(&explicit, None)
}

fn names(pods: &[Arc<Pod>]) -> Vec<String> {
    pods.iter().map(|p| p.name.clone()).collect()
}

/// One line describing an outcome, for table comparisons.
fn summary(outcome: &PreemptionOutcome, cluster: &ClusterState) -> String {
    match outcome {
        PreemptionOutcome::Preempted { node, victims, num_pdb_violations } => {
            let node = cluster.nodes.get(*node).map_or("?", |n| n.name.as_str());
            format!(
                "preempted on {node}: {} ({num_pdb_violations} PDB violations)",
                names(victims).join(",")
            )
        }
        PreemptionOutcome::Ineligible { post_filter_msg } => {
            format!("ineligible: {post_filter_msg}")
        }
        PreemptionOutcome::NotPossible { post_filter_msg } => {
            format!("not possible: {post_filter_msg}")
        }
        PreemptionOutcome::Error { post_filter_msg } => format!("error: {post_filter_msg}"),
    }
}

struct PreemptCase {
    name: &'static str,
    pod: Pod,
    pods: Vec<Pod>,
    nodes: Vec<Node>,
    pdbs: Vec<Pdb>,
    diagnosis: Option<Diagnosis>,
    args: DefaultPreemptionArgs,
    error_nodes: Vec<usize>,
    offset: u64,
    want: &'static str,
}

impl Default for PreemptCase {
    fn default() -> Self {
        PreemptCase {
            name: "",
            pod: pod("p", HIGH, NONE).obj(),
            pods: Vec::new(),
            nodes: Vec::new(),
            pdbs: Vec::new(),
            diagnosis: None,
            args: DefaultPreemptionArgs::default(),
            error_nodes: Vec::new(),
            offset: 0,
            want: "",
        }
    }
}

/// Nodes `node1..=noden` with upstream's `veryLargeRes` capacity.
fn very_large_nodes(n: usize) -> Vec<Node> {
    (1..=n).map(|i| node(&format!("node{i}"), VERY_LARGE).obj()).collect()
}

#[test]
fn preempt_reproduces_upstream_outcomes_and_messages() {
    let non_violating = ("test.kubernetes.io/is-violating-pdb", "non-violating");
    let violating = ("test.kubernetes.io/is-violating-pdb", "violating");
    let node_res = (200, 400);
    let cases = vec![
        PreemptCase {
            name: "a pod with preemptionPolicy Never is not eligible",
            pod: pod("p", HIGH, NONE).preemption_never().obj(),
            pods: vec![pod("p1", LOW, NONE).node("node1").obj()],
            nodes: vec![one_pod_node("node1")],
            want: "ineligible: preemption: not eligible due to preemptionPolicy=Never.",
            ..Default::default()
        },
        PreemptCase {
            name: "a pod with higher priority can be made schedulable",
            pods: vec![pod("p1", LOW, NONE).node("node1").obj()],
            nodes: vec![one_pod_node("node1")],
            want: "preempted on node1: p1 (0 PDB violations)",
            ..Default::default()
        },
        PreemptCase {
            name: "a pod with tied priority is still unschedulable",
            pod: pod("p", LOW, NONE).obj(),
            pods: vec![pod("p1", LOW, NONE).node("node1").obj()],
            nodes: vec![one_pod_node("node1")],
            want: "not possible: preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
            ..Default::default()
        },
        PreemptCase {
            name: "preemption respects a node's UnschedulableAndUnresolvable status",
            pods: vec![pod("p1", LOW, NONE).node("node1").obj()],
            nodes: vec![one_pod_node("node1")],
            diagnosis: Some(diagnosis(&[(0, Code::UnschedulableAndUnresolvable)], None)),
            want: "not possible: preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
            ..Default::default()
        },
        PreemptCase {
            name: "a node absent from the diagnosis counts as UnschedulableAndUnresolvable",
            pods: vec![pod("p1", LOW, NONE).node("node1").obj()],
            nodes: vec![one_pod_node("node1")],
            diagnosis: Some(Diagnosis::default()),
            want: "not possible: preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
            ..Default::default()
        },
        PreemptCase {
            name: "absent nodes with an Unschedulable absent-nodes status are candidates",
            pods: vec![pod("p1", LOW, NONE).node("node1").obj()],
            nodes: vec![one_pod_node("node1")],
            diagnosis: Some(diagnosis(&[], Some(Code::Unschedulable))),
            want: "preempted on node1: p1 (0 PDB violations)",
            ..Default::default()
        },
        PreemptCase {
            name: "pod can be made schedulable on one node",
            pod: pod("p", MID, NONE).obj(),
            pods: vec![
                pod("p1", HIGH, NONE).node("node1").obj(),
                pod("p2", LOW, NONE).node("node2").obj(),
            ],
            nodes: vec![one_pod_node("node1"), one_pod_node("node2")],
            want: "preempted on node2: p2 (0 PDB violations)",
            ..Default::default()
        },
        PreemptCase {
            name: "with equal PDB violations the node with the lower highest-priority victim is picked",
            pod: pod("p", VERY_HIGH, NONE).obj(),
            pods: vec![
                pod("p1", HIGH, NONE).label(non_violating.0, non_violating.1).node("node1").obj(),
                pod("p2", LOW, NONE).label(violating.0, violating.1).node("node1").obj(),
                pod("p3", MID, NONE).label(violating.0, violating.1).node("node2").obj(),
            ],
            nodes: vec![one_pod_node("node1"), one_pod_node("node2")],
            pdbs: vec![
                pdb("violating-pdb", &[violating], 0, &[]),
                pdb("non-violating-pdb", &[non_violating], i32::MAX, &[]),
            ],
            want: "preempted on node2: p3 (1 PDB violations)",
            ..Default::default()
        },
        PreemptCase {
            name: "no candidate when removing the lower-priority pods leaves too little cpu",
            pod: pod("p", HIGH, LARGE).obj(),
            pods: vec![
                pod("p1", LOW, NONE).node("node1").obj(),
                pod("p2", LOW, NONE).node("node2").obj(),
            ],
            nodes: vec![node("node1", node_res).obj(), node("node2", node_res).obj()],
            want: "not possible: preemption: 0/2 nodes are available: 2 Insufficient cpu.",
            ..Default::default()
        },
        PreemptCase {
            name: "no candidate with mixed reasons: no lower-priority pod and too little cpu",
            pod: pod("p", HIGH, LARGE).obj(),
            pods: vec![
                pod("p1", HIGH, NONE).node("node1").obj(),
                pod("p2", LOW, NONE).node("node2").obj(),
                pod("p3", HIGH, NONE).node("node3").obj(),
            ],
            nodes: vec![
                one_pod_node("node1"),
                node("node2", node_res).obj(),
                one_pod_node("node3"),
            ],
            want: "not possible: preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming pod.",
            ..Default::default()
        },
        PreemptCase {
            name: "nodes not evaluated by the dry run count as not helpful",
            pod: pod("p", HIGH, LARGE).obj(),
            pods: vec![
                pod("p1", LOW, NONE).node("node1").obj(),
                pod("p2", LOW, NONE).node("node2").obj(),
            ],
            nodes: (1..=4).map(|i| node(&format!("node{i}"), node_res).obj()).collect(),
            diagnosis: Some(diagnosis(
                &[
                    (0, Code::Unschedulable),
                    (1, Code::Unschedulable),
                    (3, Code::UnschedulableAndUnresolvable),
                ],
                None,
            )),
            want: "not possible: preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for scheduling.",
            ..Default::default()
        },
        PreemptCase {
            name: "an internal error on the only node is reported as an error",
            pod: pod("p", HIGH, LARGE).obj(),
            pods: vec![pod("p1", LOW, NONE).node("node1").obj()],
            nodes: vec![node("node1", LARGE).obj()],
            error_nodes: vec![0],
            want: "error: preemption: running RemovePod on PreFilter plugin \"test-plugin\": failed to remove pod: p",
            ..Default::default()
        },
        PreemptCase {
            name: "an internal error on one node does not prevent preemption on another",
            pod: pod("p", HIGH, LARGE).obj(),
            pods: vec![
                pod("p1", LOW, NONE).node("node1").obj(),
                pod("p2", LOW, MEDIUM).node("node2").obj(),
            ],
            nodes: vec![node("node1", LARGE).obj(), node("node2", LARGE).obj()],
            error_nodes: vec![0],
            want: "preempted on node2: p2 (0 PDB violations)",
            ..Default::default()
        },
        PreemptCase {
            name: "a node where the pod fits without evicting anyone is an internal error",
            pod: pod("p", HIGH, SMALL).obj(),
            pods: vec![pod("p1", LOW, SMALL).node("node1").obj()],
            nodes: vec![node("node1", (1000, 1000)).obj()],
            want: "error: preemption: expected at least one victim pod on node \"node1\"",
            ..Default::default()
        },
        PreemptCase {
            name: "distinct internal errors are aggregated in brackets in visiting order",
            pod: pod("p", HIGH, SMALL).obj(),
            pods: vec![
                pod("p1", LOW, SMALL).node("node1").obj(),
                pod("p2", LOW, SMALL).node("node2").obj(),
            ],
            nodes: vec![node("node1", (1000, 1000)).obj(), node("node2", LARGE).obj()],
            error_nodes: vec![1],
            want: "error: preemption: [expected at least one victim pod on node \"node1\", running RemovePod on PreFilter plugin \"test-plugin\": failed to remove pod: p]",
            ..Default::default()
        },
        PreemptCase {
            name: "a cluster without nodes is an internal error",
            want: "error: preemption: no nodes available",
            diagnosis: Some(Diagnosis::default()),
            ..Default::default()
        },
        PreemptCase {
            name: "an UnschedulableAndUnresolvable node is not a candidate even with cheaper victims",
            pod: pod("p", HIGH, NONE).obj(),
            pods: vec![
                pod("p1", NEG, NONE).node("node1").obj(),
                pod("p2", MID, NONE).node("node2").obj(),
            ],
            nodes: vec![one_pod_node("node1"), one_pod_node("node2")],
            diagnosis: Some(diagnosis(
                &[(0, Code::UnschedulableAndUnresolvable), (1, Code::Unschedulable)],
                None,
            )),
            want: "preempted on node2: p2 (0 PDB violations)",
            ..Default::default()
        },
        // Upstream TestSelectBestCandidate.
        PreemptCase {
            name: "the node with the lowest highest-priority victim is picked",
            pod: pod("p", HIGH, VERY_LARGE).obj(),
            pods: vec![
                pod("p1.1", MID, MEDIUM).node("node1").started(0).obj(),
                pod("p1.2", MID, LARGE).node("node1").started(0).obj(),
                pod("p2.1", MID, MEDIUM).node("node2").started(0).obj(),
                pod("p2.2", LOW, MEDIUM).node("node2").started(0).obj(),
                pod("p3.1", LOW, MEDIUM).node("node3").started(0).obj(),
                pod("p3.2", LOW, MEDIUM).node("node3").started(0).obj(),
            ],
            nodes: very_large_nodes(3),
            want: "preempted on node3: p3.1,p3.2 (0 PDB violations)",
            ..Default::default()
        },
        PreemptCase {
            name: "when highest priorities are the same the smallest sum of priorities is picked",
            pod: pod("p", HIGH, VERY_LARGE).obj(),
            pods: vec![
                pod("p1.1", MID, MEDIUM).node("node1").started(0).obj(),
                pod("p1.2", MID, LARGE).node("node1").started(0).obj(),
                pod("p2.1", MID, LARGE).node("node2").started(0).obj(),
                pod("p2.2", LOW, MEDIUM).node("node2").started(0).obj(),
                pod("p3.1", MID, MEDIUM).node("node3").started(0).obj(),
                pod("p3.2", MID, MEDIUM).node("node3").started(0).obj(),
            ],
            nodes: very_large_nodes(3),
            want: "preempted on node2: p2.1,p2.2 (0 PDB violations)",
            ..Default::default()
        },
        PreemptCase {
            name: "when highest priority and sum are the same the fewest pods are picked",
            pod: pod("p", HIGH, VERY_LARGE).obj(),
            pods: vec![
                pod("p1.1", MID, SMALL).node("node1").started(0).obj(),
                pod("p1.2", NEG, SMALL).node("node1").started(0).obj(),
                pod("p1.3", MID, SMALL).node("node1").started(0).obj(),
                pod("p1.4", NEG, SMALL).node("node1").started(0).obj(),
                pod("p2.1", MID, LARGE).node("node2").started(0).obj(),
                pod("p2.2", NEG, MEDIUM).node("node2").started(0).obj(),
                pod("p3.1", MID, MEDIUM).node("node3").started(0).obj(),
                pod("p3.2", NEG, SMALL).node("node3").started(0).obj(),
                pod("p3.3", LOW, SMALL).node("node3").started(0).obj(),
            ],
            nodes: very_large_nodes(3),
            want: "preempted on node2: p2.1,p2.2 (0 PDB violations)",
            ..Default::default()
        },
        PreemptCase {
            name: "the sum of priorities shifted by MaxInt32+1 is considered",
            pod: pod("p", HIGH, VERY_LARGE).obj(),
            pods: vec![
                pod("p1.1", MID, SMALL).node("node1").started(0).obj(),
                pod("p1.2", NEG, SMALL).node("node1").started(0).obj(),
                pod("p1.3", NEG, SMALL).node("node1").started(0).obj(),
                pod("p2.1", MID, LARGE).node("node2").started(0).obj(),
                pod("p2.2", NEG, MEDIUM).node("node2").started(0).obj(),
                pod("p3.1", MID, MEDIUM).node("node3").started(0).obj(),
                pod("p3.2", NEG, SMALL).node("node3").started(0).obj(),
                pod("p3.3", LOW, SMALL).node("node3").started(0).obj(),
            ],
            nodes: very_large_nodes(3),
            want: "preempted on node2: p2.1,p2.2 (0 PDB violations)",
            ..Default::default()
        },
        PreemptCase {
            name: "non-overlapping lowest highest priority, sum of priorities and number of pods",
            pod: pod("p", VERY_HIGH, VERY_LARGE).obj(),
            pods: vec![
                pod("p1.1", MID, SMALL).node("node1").started(0).obj(),
                pod("p1.2", LOW, SMALL).node("node1").started(0).obj(),
                pod("p1.3", LOW, SMALL).node("node1").started(0).obj(),
                pod("p2.1", HIGH, LARGE).node("node2").started(0).obj(),
                pod("p3.1", MID, MEDIUM).node("node3").started(0).obj(),
                pod("p3.2", LOW, SMALL).node("node3").started(0).obj(),
                pod("p3.3", LOW, SMALL).node("node3").started(0).obj(),
                pod("p3.4", LOW, MEDIUM).node("node3").started(0).obj(),
                pod("p4.1", MID, MEDIUM).node("node4").started(0).obj(),
                pod("p4.2", MID, SMALL).node("node4").started(0).obj(),
                pod("p4.3", MID, SMALL).node("node4").started(0).obj(),
                pod("p4.4", NEG, SMALL).node("node4").started(0).obj(),
            ],
            nodes: very_large_nodes(4),
            want: "preempted on node1: p1.1,p1.2,p1.3 (0 PDB violations)",
            ..Default::default()
        },
        PreemptCase {
            name: "same priority and number of victims: the node whose victims started last is picked",
            pod: pod("p", HIGH, VERY_LARGE).obj(),
            pods: vec![
                pod("p1.1", MID, MEDIUM).node("node1").started(2).obj(),
                pod("p1.2", MID, MEDIUM).node("node1").started(2).obj(),
                pod("p2.1", MID, MEDIUM).node("node2").started(3).obj(),
                pod("p2.2", MID, MEDIUM).node("node2").started(3).obj(),
                pod("p3.1", MID, MEDIUM).node("node3").started(1).obj(),
                pod("p3.2", MID, MEDIUM).node("node3").started(1).obj(),
            ],
            nodes: very_large_nodes(3),
            want: "preempted on node2: p2.1,p2.2 (0 PDB violations)",
            ..Default::default()
        },
        PreemptCase {
            name: "same priority and number of victims: the latest earliest start time wins",
            pod: pod("p", HIGH, VERY_LARGE).obj(),
            pods: vec![
                pod("p1.1", MID, MEDIUM).node("node1").started(4).obj(),
                pod("p1.2", MID, MEDIUM).node("node1").started(2).obj(),
                pod("p2.1", MID, MEDIUM).node("node2").started(5).obj(),
                pod("p2.2", MID, MEDIUM).node("node2").started(1).obj(),
                pod("p3.1", MID, MEDIUM).node("node3").started(3).obj(),
                pod("p3.2", MID, MEDIUM).node("node3").started(6).obj(),
            ],
            nodes: very_large_nodes(3),
            want: "preempted on node3: p3.1,p3.2 (0 PDB violations)",
            ..Default::default()
        },
        PreemptCase {
            name: "different priorities: only the start times of the most important victims count",
            pod: pod("p", HIGH, VERY_LARGE).obj(),
            pods: vec![
                pod("p1.1", LOW, MEDIUM).node("node1").started(4).obj(),
                pod("p1.2", MID, MEDIUM).node("node1").started(2).obj(),
                pod("p2.1", MID, MEDIUM).node("node2").started(6).obj(),
                pod("p2.2", LOW, MEDIUM).node("node2").started(1).obj(),
                pod("p3.1", LOW, MEDIUM).node("node3").started(3).obj(),
                pod("p3.2", MID, MEDIUM).node("node3").started(5).obj(),
            ],
            nodes: very_large_nodes(3),
            want: "preempted on node2: p2.1,p2.2 (0 PDB violations)",
            ..Default::default()
        },
        PreemptCase {
            name: "a full tie goes to the first node visited from offset zero",
            pod: pod("p", HIGH, LARGE).obj(),
            pods: vec![
                pod("p1", MID, LARGE).node("node1").started(0).obj(),
                pod("p2", MID, LARGE).node("node2").started(0).obj(),
            ],
            nodes: very_large_nodes(2),
            want: "preempted on node1: p1 (0 PDB violations)",
            ..Default::default()
        },
        PreemptCase {
            name: "a full tie goes to the first node visited from offset one",
            pod: pod("p", HIGH, LARGE).obj(),
            pods: vec![
                pod("p1", MID, LARGE).node("node1").started(0).obj(),
                pod("p2", MID, LARGE).node("node2").started(0).obj(),
            ],
            nodes: very_large_nodes(2),
            offset: 1,
            want: "preempted on node2: p2 (0 PDB violations)",
            ..Default::default()
        },
        PreemptCase {
            name: "a node violating no PodDisruptionBudget beats one with cheaper victims",
            pod: pod("p", HIGH, LARGE).obj(),
            pods: vec![
                pod("p1", NEG, LARGE).label("app", "foo").node("node1").obj(),
                pod("p2", MID, LARGE).node("node2").obj(),
            ],
            nodes: very_large_nodes(2),
            pdbs: vec![pdb("foo", &[("app", "foo")], 0, &[])],
            want: "preempted on node2: p2 (0 PDB violations)",
            ..Default::default()
        },
    ];
    for case in cases {
        let state = ClusterState { pdbs: case.pdbs, ..cluster(case.nodes, case.pods) };
        let diagnosis = case.diagnosis.unwrap_or_else(|| all_unschedulable(state.nodes.len()));
        let oracle = TestOracle {
            cluster: &state,
            anti_affinity: false,
            error_nodes: case.error_nodes.into_iter().collect(),
        };
        let mut rng = offset_rng(case.offset);
        let outcome = preempt(&case.pod, &state, &diagnosis, &case.args, &oracle, NOW, &mut rng);
        assert_eq!(summary(&outcome, &state), case.want, "{}", case.name);
    }
}

struct VictimCase {
    name: &'static str,
    pod: Pod,
    /// Pods on `node1` (capacity 500m CPU, 500 bytes).
    pods: Vec<Pod>,
    pdbs: Vec<Pdb>,
    anti_affinity: bool,
    /// Victims in order and PDB violations, or the rejection as `Code: reasons`.
    want: Result<(Vec<&'static str>, i64), &'static str>,
}

#[test]
fn select_victims_on_node_removes_all_then_reprieves_in_upstream_order() {
    let foo = ("app", "foo");
    let cases = vec![
        VictimCase {
            name: "a node without lower-priority pods has no victims",
            pod: pod("p", MID, SMALL).obj(),
            pods: vec![pod("p1", MID, SMALL).obj(), pod("p2", HIGH, SMALL).obj()],
            pdbs: vec![],
            anti_affinity: false,
            want: Err("UnschedulableAndUnresolvable: No preemption victims found for incoming pod"),
        },
        VictimCase {
            name: "the filter's rejection is returned when removing every lower-priority pod is not enough",
            pod: pod("p", MID, LARGE).obj(),
            pods: vec![pod("p1", LOW, SMALL).obj(), pod("p2", HIGH, LARGE).obj()],
            pdbs: vec![],
            anti_affinity: false,
            want: Err("Unschedulable: Insufficient cpu, Insufficient memory"),
        },
        VictimCase {
            name: "medium priority pod is preempted, but lower priority one stays as it is small",
            pod: pod("p", HIGH, LARGE).obj(),
            pods: vec![pod("p1.1", LOW, SMALL).obj(), pod("p1.2", MID, LARGE).obj()],
            pdbs: vec![],
            anti_affinity: false,
            want: Ok((vec!["p1.2"], 0)),
        },
        VictimCase {
            name: "mixed priority pods are preempted and the more important one is reprieved",
            pod: pod("p", HIGH, LARGE).obj(),
            pods: vec![
                pod("p1.1", MID, SMALL).obj(),
                pod("p1.2", LOW, SMALL).obj(),
                pod("p1.3", MID, MEDIUM).obj(),
                pod("p1.4", HIGH, SMALL).obj(),
            ],
            pdbs: vec![],
            anti_affinity: false,
            want: Ok((vec!["p1.3", "p1.2"], 0)),
        },
        VictimCase {
            name: "among equal priorities the pod that started later is preempted",
            pod: pod("p", HIGH, LARGE).obj(),
            pods: vec![
                pod("p1.1", LOW, SMALL).started(5).obj(),
                pod("p1.2", LOW, SMALL).started(4).obj(),
                pod("p1.3", MID, MEDIUM).started(3).obj(),
                pod("p1.4", HIGH, SMALL).started(2).obj(),
            ],
            pdbs: vec![],
            anti_affinity: false,
            want: Ok((vec!["p1.3", "p1.1"], 0)),
        },
        VictimCase {
            name: "a pod with anti-affinity to the preemptor is preempted",
            pod: pod("p", HIGH, SMALL).label("foo", "").obj(),
            pods: vec![
                pod("p1.1", LOW, SMALL)
                    .label("foo", "")
                    .pod_anti_affinity(anti_affinity_exists("foo"))
                    .obj(),
                pod("p1.2", MID, SMALL).obj(),
                pod("p1.3", HIGH, SMALL).obj(),
            ],
            pdbs: vec![],
            anti_affinity: true,
            want: Ok((vec!["p1.1"], 0)),
        },
        VictimCase {
            name: "preemption with violation of the same PodDisruptionBudget",
            pod: pod("p", HIGH, VERY_LARGE).obj(),
            pods: vec![
                pod("p1.1", MID, MEDIUM).label(foo.0, foo.1).obj(),
                pod("p1.2", MID, MEDIUM).label(foo.0, foo.1).obj(),
            ],
            pdbs: vec![pdb("pdb", &[foo], 1, &[])],
            anti_affinity: false,
            want: Ok((vec!["p1.2", "p1.1"], 1)),
        },
        VictimCase {
            name: "a disrupted pod that is not a victim does not change the count",
            pod: pod("p", HIGH, VERY_LARGE).obj(),
            pods: vec![
                pod("p1.1", MID, MEDIUM).label(foo.0, foo.1).obj(),
                pod("p1.2", MID, MEDIUM).label(foo.0, foo.1).obj(),
            ],
            pdbs: vec![pdb("pdb", &[foo], 1, &["p2"])],
            anti_affinity: false,
            want: Ok((vec!["p1.2", "p1.1"], 1)),
        },
        VictimCase {
            name: "a victim already in disruptedPods does not violate the budget",
            pod: pod("p", HIGH, VERY_LARGE).obj(),
            pods: vec![
                pod("p1.1", MID, MEDIUM).label(foo.0, foo.1).obj(),
                pod("p1.2", MID, MEDIUM).label(foo.0, foo.1).obj(),
            ],
            pdbs: vec![pdb("pdb", &[foo], 1, &["p1.2"])],
            anti_affinity: false,
            want: Ok((vec!["p1.1", "p1.2"], 0)),
        },
        VictimCase {
            name: "a victim in disruptedPods is non-violating while the others still count",
            pod: pod("p", HIGH, VERY_LARGE).obj(),
            pods: vec![
                pod("p1.1", MID, MEDIUM).label(foo.0, foo.1).obj(),
                pod("p1.2", MID, MEDIUM).label(foo.0, foo.1).obj(),
                pod("p1.3", MID, MEDIUM).label(foo.0, foo.1).obj(),
            ],
            pdbs: vec![pdb("pdb", &[foo], 1, &["p1.3"])],
            anti_affinity: false,
            want: Ok((vec!["p1.2", "p1.1", "p1.3"], 1)),
        },
        VictimCase {
            name: "victims from both groups are re-sorted most important first",
            pod: pod("p", HIGH, VERY_LARGE).obj(),
            pods: vec![
                pod("p1.1", MID, MEDIUM).label(foo.0, foo.1).started(1).obj(),
                pod("p1.2", MID, MEDIUM).label(foo.0, foo.1).started(2).obj(),
            ],
            pdbs: vec![pdb("pdb", &[foo], 1, &[])],
            anti_affinity: false,
            want: Ok((vec!["p1.1", "p1.2"], 1)),
        },
        VictimCase {
            name: "PDB-violating pods are reprieved before more important non-violating ones",
            pod: pod("p", HIGH, (250, 250)).obj(),
            pods: vec![
                pod("a", LOW, MEDIUM).label(foo.0, foo.1).obj(),
                pod("b", MID, MEDIUM).obj(),
            ],
            pdbs: vec![pdb("pdb", &[foo], 0, &[])],
            anti_affinity: false,
            want: Ok((vec!["b"], 0)),
        },
        VictimCase {
            name: "without budgets the more important pod is reprieved",
            pod: pod("p", HIGH, (250, 250)).obj(),
            pods: vec![
                pod("a", LOW, MEDIUM).label(foo.0, foo.1).obj(),
                pod("b", MID, MEDIUM).obj(),
            ],
            pdbs: vec![],
            anti_affinity: false,
            want: Ok((vec!["a"], 0)),
        },
        VictimCase {
            name: "a violating pod that cannot be reprieved counts as a violation",
            pod: pod("p", HIGH, (400, 400)).obj(),
            pods: vec![pod("a", LOW, MEDIUM).label(foo.0, foo.1).obj(), pod("b", MID, SMALL).obj()],
            pdbs: vec![pdb("pdb", &[foo], 0, &[])],
            anti_affinity: false,
            want: Ok((vec!["a"], 1)),
        },
    ];
    for case in cases {
        let pods = case.pods.into_iter().map(|p| Pod { node_name: Some("node1".to_string()), ..p });
        let state = ClusterState {
            pdbs: case.pdbs,
            ..cluster(vec![node("node1", VERY_LARGE).obj()], pods.collect())
        };
        let oracle = TestOracle {
            cluster: &state,
            anti_affinity: case.anti_affinity,
            error_nodes: BTreeSet::new(),
        };
        let got = select_victims_on_node(&case.pod, &state, 0, &oracle, NOW)
            .map(|v| (names(&v.pods), v.num_pdb_violations))
            .map_err(|s| format!("{:?}: {s}", s.code));
        let want = case
            .want
            .map(|(v, n)| (v.iter().map(|s| (*s).to_string()).collect::<Vec<_>>(), n))
            .map_err(str::to_string);
        assert_eq!(got, want, "{}", case.name);
    }
}

#[test]
fn select_victims_on_a_missing_node_is_an_error() {
    let state = cluster(vec![node("node1", VERY_LARGE).obj()], vec![]);
    let oracle = TestOracle::resources(&state);
    let got = select_victims_on_node(&pod("p", HIGH, SMALL).obj(), &state, 5, &oracle, NOW);
    assert_eq!(got.map_err(|s| s.code), Err(Code::Error));
}

struct DryRunCase {
    name: &'static str,
    pods: Vec<Pod>,
    pdbs: Vec<Pdb>,
    args: DefaultPreemptionArgs,
    offset: i32,
    /// (node, victims, PDB violations) in the returned order.
    want: Vec<(&'static str, Vec<&'static str>, i64)>,
    /// Nodes that got a status.
    want_statuses: Vec<&'static str>,
}

#[test]
fn dry_run_visits_nodes_from_the_offset_and_stops_at_the_quota() {
    let limit_to_2 = DefaultPreemptionArgs {
        min_candidate_nodes_percentage: 40,
        min_candidate_nodes_absolute: 1,
    };
    let five_mid = |labelled: &[usize]| -> Vec<Pod> {
        (1..=5)
            .map(|i| {
                let mut b = pod(&format!("p{i}"), MID, LARGE).node(&format!("node{i}"));
                if labelled.contains(&i) {
                    b = b.label("app", "foo");
                }
                b.obj()
            })
            .collect()
    };
    let cases = vec![
        DryRunCase {
            name: "all nodes are possible candidates, but the arguments limit them to 2",
            pods: five_mid(&[]),
            pdbs: vec![],
            args: limit_to_2,
            offset: 4,
            want: vec![("node5", vec!["p5"], 0), ("node1", vec!["p1"], 0)],
            want_statuses: vec![],
        },
        DryRunCase {
            name: "some nodes are not possible candidates, the arguments limit them to 2",
            pods: {
                let mut pods = five_mid(&[]);
                for i in [1, 4] {
                    if let Some(p) = pods.get_mut(i) {
                        p.priority = VERY_HIGH;
                    }
                }
                pods
            },
            pdbs: vec![],
            args: limit_to_2,
            offset: 4,
            want: vec![("node1", vec!["p1"], 0), ("node3", vec!["p3"], 0)],
            want_statuses: vec!["node2", "node5"],
        },
        DryRunCase {
            name: "the dry run looks past the quota until a non-violating node is found",
            pods: five_mid(&[1, 2, 5]),
            pdbs: vec![pdb("pdb", &[("app", "foo")], 0, &[])],
            args: DefaultPreemptionArgs {
                min_candidate_nodes_percentage: 40,
                min_candidate_nodes_absolute: 2,
            },
            offset: 4,
            want: vec![
                ("node3", vec!["p3"], 0),
                ("node5", vec!["p5"], 1),
                ("node1", vec!["p1"], 1),
            ],
            want_statuses: vec![],
        },
        DryRunCase {
            name: "every node is visited when no candidate avoids violating a budget",
            pods: five_mid(&[1, 2, 3, 4, 5]),
            pdbs: vec![pdb("pdb", &[("app", "foo")], 0, &[])],
            args: limit_to_2,
            offset: 0,
            want: vec![("node1", vec!["p1"], 1), ("node2", vec!["p2"], 1)],
            want_statuses: vec![],
        },
        DryRunCase {
            name: "a quota of zero keeps no candidate",
            pods: five_mid(&[]),
            pdbs: vec![],
            args: DefaultPreemptionArgs {
                min_candidate_nodes_percentage: 5,
                min_candidate_nodes_absolute: 0,
            },
            offset: 2,
            want: vec![],
            want_statuses: vec![],
        },
    ];
    for case in cases {
        let state = ClusterState { pdbs: case.pdbs, ..cluster(very_large_nodes(5), case.pods) };
        let oracle = TestOracle::resources(&state);
        let potential = potential_nodes(&state, &all_unschedulable(5));
        let num = calculate_num_candidates(5, &case.args);
        let pod = pod("p", HIGH, LARGE).obj();
        let got = dry_run_preemption(&pod, &state, &potential, &oracle, case.offset, num, NOW);
        let candidates: Vec<(String, Vec<String>, i64)> = got
            .candidates
            .iter()
            .map(|c| {
                let node = state.nodes.get(c.node).map_or(String::new(), |n| n.name.clone());
                (node, names(&c.victims.pods), c.victims.num_pdb_violations)
            })
            .collect();
        let want: Vec<(String, Vec<String>, i64)> = case
            .want
            .iter()
            .map(|(n, v, k)| ((*n).to_string(), v.iter().map(|s| (*s).to_string()).collect(), *k))
            .collect();
        assert_eq!(candidates, want, "{}", case.name);
        let statuses: Vec<&str> = got
            .node_statuses
            .keys()
            .filter_map(|&i| state.nodes.get(i).map(|n| n.name.as_str()))
            .collect();
        assert_eq!(statuses, case.want_statuses, "{}", case.name);
        assert!(got.errors.is_empty(), "{}", case.name);
    }
}

#[test]
fn potential_nodes_are_those_whose_status_is_unschedulable() {
    let state = cluster(very_large_nodes(4), vec![]);
    let cases = [
        (
            "explicit statuses only",
            diagnosis(
                &[
                    (0, Code::Unschedulable),
                    (1, Code::UnschedulableAndUnresolvable),
                    (3, Code::Unschedulable),
                ],
                None,
            ),
            vec![0, 3],
        ),
        (
            "an Unschedulable absent status adds the absent nodes",
            diagnosis(&[(1, Code::UnschedulableAndUnresolvable)], Some(Code::Unschedulable)),
            vec![0, 2, 3],
        ),
        (
            "an unresolvable absent status adds nothing",
            diagnosis(&[(2, Code::Unschedulable)], Some(Code::UnschedulableAndUnresolvable)),
            vec![2],
        ),
        (
            "statuses of nodes outside the cluster are ignored",
            diagnosis(&[(7, Code::Unschedulable)], None),
            vec![],
        ),
    ];
    for (name, diag, want) in cases {
        assert_eq!(potential_nodes(&state, &diag), want, "{name}");
    }
}

#[test]
fn calculate_num_candidates_applies_percentage_then_absolute_then_node_count() {
    let cases = [
        ("default arguments on 10 nodes take all of them", 10, 10, 100, 10),
        ("default arguments on 1000 nodes take the absolute minimum", 1000, 10, 100, 100),
        ("50 percent of 1000 nodes is above the absolute minimum", 1000, 50, 100, 500),
        ("5 percent of 1000 nodes is below the absolute minimum", 1000, 5, 100, 100),
        ("the percentage rounds down", 7, 40, 1, 2),
        ("a small percentage with no absolute minimum can be zero", 3, 5, 0, 0),
    ];
    for (name, nodes, pct, abs, want) in cases {
        let args = DefaultPreemptionArgs {
            min_candidate_nodes_percentage: pct,
            min_candidate_nodes_absolute: abs,
        };
        assert_eq!(calculate_num_candidates(nodes, &args), want, "{name}");
    }
}

#[test]
fn go_int31n_follows_go_rand_int31n() {
    let cases: [(&str, Vec<u64>, i32, i32); 5] = [
        ("a power of two masks the first draw", vec![6], 4, 2),
        ("another bound takes the draw modulo the bound", vec![7], 5, 2),
        ("a draw above the largest multiple is rejected", vec![(1 << 31) - 1, 4], 3, 1),
        ("a bound of one is always zero", vec![12345], 1, 0),
        ("a non-positive bound gives zero", vec![9], 0, 0),
    ];
    for (name, draws, n, want) in cases {
        let mut rng = int31_draws(&draws);
        assert_eq!(go_int31n(&mut rng, n), want, "{name}");
    }
}

#[test]
fn the_offset_is_drawn_only_when_some_node_may_help() {
    let state =
        cluster(vec![one_pod_node("node1")], vec![pod("p1", LOW, NONE).node("node1").obj()]);
    let oracle = TestOracle::resources(&state);
    let mut rng = offset_rng(0);
    let p = pod("p", HIGH, NONE).obj();
    let args = DefaultPreemptionArgs::default();
    preempt(&p, &state, &Diagnosis::default(), &args, &oracle, NOW, &mut rng);
    assert_eq!(rng.next, 0, "no potential node: no draw");
    preempt(&p, &state, &all_unschedulable(1), &args, &oracle, NOW, &mut rng);
    assert_eq!(rng.next, 1, "one potential node: one draw");
}

#[test]
fn filter_pods_with_pdb_violation_counts_down_each_budget() {
    let foo = ("app", "foo");
    let labelled = |name: &str| Arc::new(pod(name, LOW, NONE).label(foo.0, foo.1).obj());
    /// Name, pods in order, budgets, expected violating and non-violating pod names.
    type PdbCase = (&'static str, Vec<Arc<Pod>>, Vec<Pdb>, Vec<&'static str>, Vec<&'static str>);
    let cases: Vec<PdbCase> = vec![
        (
            "a pod selected by a budget allowing no disruption violates it",
            vec![labelled("a")],
            vec![pdb("pdb", &[foo], 0, &[])],
            vec!["a"],
            vec![],
        ),
        (
            "with one disruption allowed only the second selected pod violates",
            vec![labelled("a"), labelled("b"), labelled("c")],
            vec![pdb("pdb", &[foo], 1, &[])],
            vec!["b", "c"],
            vec!["a"],
        ),
        (
            "a budget without a selector selects nothing",
            vec![labelled("a")],
            vec![Pdb { selector: None, ..pdb("pdb", &[], 0, &[]) }],
            vec![],
            vec!["a"],
        ),
        (
            "a budget with an empty selector selects nothing",
            vec![labelled("a")],
            vec![pdb("pdb", &[], 0, &[])],
            vec![],
            vec!["a"],
        ),
        (
            "a pod without labels never violates",
            vec![Arc::new(pod("a", LOW, NONE).obj())],
            vec![Pdb {
                selector: Some(LabelSelector {
                    requirements: vec![Requirement::new("app", MatchOp::DoesNotExist, &[])],
                }),
                ..pdb("pdb", &[], 0, &[])
            }],
            vec![],
            vec!["a"],
        ),
        (
            "a budget in another namespace does not apply",
            vec![labelled("a")],
            vec![Pdb { namespace: "other".to_string(), ..pdb("pdb", &[foo], 0, &[]) }],
            vec![],
            vec!["a"],
        ),
        (
            "a pod in disruptedPods neither violates nor uses up the budget",
            vec![labelled("a"), labelled("b")],
            vec![pdb("pdb", &[foo], 1, &["a"])],
            vec![],
            vec!["a", "b"],
        ),
        (
            "a pod violates when any one of its budgets is exhausted",
            vec![labelled("a")],
            vec![pdb("roomy", &[foo], 5, &[]), pdb("tight", &[foo], 0, &[])],
            vec!["a"],
            vec![],
        ),
    ];
    for (name, pods, pdbs, want_violating, want_non) in cases {
        let (violating, non_violating) = filter_pods_with_pdb_violation(&pods, &pdbs);
        assert_eq!(names(&violating), want_violating, "{name}");
        assert_eq!(names(&non_violating), want_non, "{name}");
    }
}

#[test]
fn more_important_pod_orders_by_priority_then_start_time() {
    let cases = [
        (
            "higher priority wins over an earlier start",
            pod("a", MID, NONE).started(9).obj(),
            pod("b", LOW, NONE).started(1).obj(),
            true,
        ),
        (
            "lower priority loses",
            pod("a", LOW, NONE).started(1).obj(),
            pod("b", MID, NONE).started(9).obj(),
            false,
        ),
        (
            "with equal priorities the earlier start wins",
            pod("a", MID, NONE).started(1).obj(),
            pod("b", MID, NONE).started(2).obj(),
            true,
        ),
        (
            "equal priority and start time is not more important",
            pod("a", MID, NONE).started(3).obj(),
            pod("b", MID, NONE).started(3).obj(),
            false,
        ),
        (
            "a pod that has not started starts now",
            pod("a", MID, NONE).obj(),
            pod("b", MID, NONE).started(NOW + 1).obj(),
            true,
        ),
        (
            "two pods that have not started tie",
            pod("a", MID, NONE).obj(),
            pod("b", MID, NONE).obj(),
            false,
        ),
    ];
    for (name, a, b, want) in cases {
        assert_eq!(more_important_pod(&a, &b, NOW), want, "{name}");
    }
}

#[test]
fn earliest_pod_start_time_looks_at_the_highest_priority_victims() {
    let v = |p: i32, start: Option<i64>| {
        let b = pod("v", p, NONE);
        Arc::new(match start {
            Some(t) => b.started(t).obj(),
            None => b.obj(),
        })
    };
    let cases = [
        ("no victims", vec![], None),
        (
            "the earliest of the equally most important victims",
            vec![v(MID, Some(5)), v(MID, Some(3)), v(LOW, Some(1))],
            Some(3),
        ),
        (
            "a more important victim later in the list resets the search",
            vec![v(LOW, Some(1)), v(HIGH, Some(9)), v(HIGH, Some(7))],
            Some(7),
        ),
        ("a victim that has not started starts now", vec![v(MID, None)], Some(NOW)),
    ];
    for (name, victims, want) in cases {
        assert_eq!(earliest_pod_start_time(&victims, NOW), want, "{name}");
    }
}

#[test]
fn pick_one_node_applies_the_criteria_in_order() {
    let cand = |node: usize, violations: i64, victims: &[(i32, i64)]| Candidate {
        node,
        victims: Victims {
            pods: victims
                .iter()
                .map(|&(p, t)| Arc::new(pod("v", p, NONE).started(t).obj()))
                .collect(),
            num_pdb_violations: violations,
        },
    };
    let cases = [
        ("no candidates", vec![], None),
        (
            "fewest PodDisruptionBudget violations wins",
            vec![cand(0, 1, &[(LOW, 0)]), cand(1, 0, &[(HIGH, 0)])],
            Some(1),
        ),
        (
            "the lowest most important victim wins",
            vec![cand(0, 0, &[(MID, 0)]), cand(1, 0, &[(LOW, 0), (LOW, 0), (LOW, 0)])],
            Some(1),
        ),
        (
            "the smallest sum of priorities shifted by MaxInt32+1 wins",
            vec![cand(0, 0, &[(MID, 0), (NEG, 0), (NEG, 0)]), cand(1, 0, &[(MID, 0), (NEG, 0)])],
            Some(1),
        ),
        (
            "fewest victims wins when the shifted sums tie",
            vec![cand(0, 0, &[(LOW, 0), (i32::MIN, 0)]), cand(1, 0, &[(LOW, 0)])],
            Some(1),
        ),
        (
            "the latest start of the most important victims wins",
            vec![cand(0, 0, &[(MID, 2)]), cand(1, 0, &[(MID, 3)])],
            Some(1),
        ),
        (
            "a full tie goes to the first candidate",
            vec![cand(0, 0, &[(MID, 2)]), cand(1, 0, &[(MID, 2)])],
            Some(0),
        ),
        ("a single candidate is picked", vec![cand(3, 2, &[(MID, 2)])], Some(0)),
    ];
    for (name, candidates, want) in cases {
        assert_eq!(pick_one_node_for_preemption(&candidates, NOW), want, "{name}");
        let selected = select_candidate(&candidates, NOW).map(|c| c.node);
        let want_node = want.and_then(|i| candidates.get(i)).map(|c| c.node);
        assert_eq!(selected, want_node, "{name}");
    }
}

#[test]
fn without_lower_priority_pods_the_shortcut_is_the_dry_run() {
    use rand::{Rng, SeedableRng};
    // (name, nodes, bound pods, preemptor, node statuses: Unschedulable or not)
    let full = || node("full", SMALL);
    type Case = (&'static str, Vec<Node>, Vec<Pod>, Pod, Vec<Code>);
    let cases: Vec<Case> = vec![
        (
            "equal priorities on every node: no victims anywhere",
            vec![full().obj(), node("other", SMALL).obj()],
            vec![pod("a", MID, SMALL).node("full").obj(), pod("b", MID, SMALL).node("other").obj()],
            pod("p", MID, SMALL).obj(),
            vec![Code::Unschedulable, Code::Unschedulable],
        ),
        (
            "a lower-priority pod only where preemption cannot help",
            vec![full().obj(), node("other", SMALL).obj()],
            vec![
                pod("a", HIGH, SMALL).node("full").obj(),
                pod("b", LOW, SMALL).node("other").obj(),
            ],
            pod("p", MID, SMALL).obj(),
            vec![Code::Unschedulable, Code::UnschedulableAndUnresolvable],
        ),
        (
            "no node where preemption might help",
            vec![full().obj()],
            vec![pod("a", LOW, SMALL).node("full").obj()],
            pod("p", MID, SMALL).obj(),
            vec![Code::UnschedulableAndUnresolvable],
        ),
        (
            "a preemptor that never preempts",
            vec![full().obj()],
            vec![pod("a", MID, SMALL).node("full").obj()],
            pod("p", MID, SMALL).preemption_never().obj(),
            vec![Code::Unschedulable],
        ),
    ];
    let args = DefaultPreemptionArgs::default();
    for (name, nodes, bound, preemptor, codes) in cases {
        let state = cluster(nodes, bound);
        let explicit: Vec<(usize, Code)> = codes.iter().copied().enumerate().collect();
        let d = diagnosis(&explicit, None);
        let potential = codes.iter().filter(|&&c| c == Code::Unschedulable).count();
        let oracle = TestOracle::resources(&state);
        let mut full_rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut short_rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let want = preempt(&preemptor, &state, &d, &args, &oracle, 0, &mut full_rng);
        let got = preempt_without_victims(
            &preemptor,
            state.nodes.len(),
            potential,
            &args,
            &mut short_rng,
        );
        assert_eq!(got, want, "{name}");
        assert_eq!(short_rng.next_u64(), full_rng.next_u64(), "{name}: the generators differ");
    }
}

#[test]
fn outcome_status_and_message_match_run_post_filter_plugins() {
    let msg = "preemption: not eligible due to preemptionPolicy=Never.".to_string();
    let cases = [
        (
            "a preemption succeeds without a message",
            PreemptionOutcome::Preempted { node: 0, victims: vec![], num_pdb_violations: 0 },
            Code::Success,
            None,
        ),
        (
            "an ineligible pod is unschedulable",
            PreemptionOutcome::Ineligible { post_filter_msg: msg.clone() },
            Code::Unschedulable,
            Some(msg.as_str()),
        ),
        (
            "an impossible preemption is unschedulable",
            PreemptionOutcome::NotPossible { post_filter_msg: "m".to_string() },
            Code::Unschedulable,
            Some("m"),
        ),
        (
            "an internal error is an error",
            PreemptionOutcome::Error { post_filter_msg: "e".to_string() },
            Code::Error,
            Some("e"),
        ),
    ];
    for (name, outcome, code, want_msg) in cases {
        let status = outcome.status();
        assert_eq!(status.code, code, "{name}");
        assert_eq!(outcome.post_filter_msg(), want_msg, "{name}");
        if code != Code::Success {
            assert_eq!(status.plugin, Some(PLUGIN_NAME), "{name}");
            assert_eq!(Some(status.to_string().as_str()), want_msg, "{name}");
        }
    }
}

#[test]
fn the_recorded_message_completes_the_fit_error() {
    let state =
        cluster(vec![one_pod_node("node1")], vec![pod("p1", LOW, NONE).node("node1").obj()]);
    let oracle = TestOracle::resources(&state);
    let mut diag = diagnosis(&[], None);
    diag.node_statuses.insert(0, Status::unschedulable("Too many pods"));
    let p = pod("p", LOW, NONE).obj();
    let outcome = preempt(
        &p,
        &state,
        &diag,
        &DefaultPreemptionArgs::default(),
        &oracle,
        NOW,
        &mut offset_rng(0),
    );
    // The default profile runs DynamicResources' PostFilter before DefaultPreemption.
    let fw = crate::framework::runtime::Framework::new(
        &crate::framework::profile::Profile::default_profile(),
    )
    .unwrap();
    diag.post_filter_msg = fw.post_filter_msg(Some(&outcome.status()));
    let fit_error = FitError { num_all_nodes: 1, diagnosis: diag };
    assert_eq!(
        fit_error.message(),
        "0/1 nodes are available: 1 Too many pods. no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    );
}

/// Parses a line of integers.
fn ints(line: &str) -> Vec<usize> {
    line.split_whitespace().filter_map(|s| s.parse().ok()).collect()
}

#[test]
fn go_sort_reproduces_go_sort_slice_on_inputs_with_ties() {
    // Keys in, and the permutation Go 1.19's `sort.Slice` produced for them (element ids in
    // output order). Go 1.19 differs from Go 1.24+ only in `breakPatterns`' xorshift shifts,
    // so these run with its shifts; the first two inputs do reach `breakPatterns`.
    let cases = [
        (
            "0 0 0 0 0 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0 0 0 0 0 1 1 1 1 1 1 1 1 1 1 1 0 1 1 1 1 2 2 2 2 2 2 2 2 2 2 2 2 2 2",
            "0 1 2 3 4 5 6 7 8 9 10 11 35 13 14 15 16 17 18 19 20 21 22 23 26 39 24 27 28 29 30 31 32 33 34 12 36 37 38 25 46 40 42 43 44 45 41 47 50 49 48 51 52 53",
        ),
        (
            "0 1 2 1 4 5 6 1 2 0 0 1 0 1 2 3 2 1 2 1 0 1 2 3 0 0 2 2 0 2 0 1 0 0 4 3 1 1 3 0 4 6 0 1 2 0 1 5",
            "24 42 45 39 33 0 30 28 25 9 10 32 12 20 7 43 3 17 31 19 13 21 37 1 11 36 46 16 14 26 22 18 29 2 44 27 8 15 38 23 35 40 34 4 5 47 6 41",
        ),
        ("3 1 2 1 3", "1 3 2 0 4"),
    ];
    for (keys, want) in cases {
        let mut items: Vec<(usize, usize)> =
            ints(keys).into_iter().enumerate().map(|(i, k)| (k, i)).collect();
        go_sort::sort_slice_with_shifts(
            &mut items,
            &|a: &(usize, usize), b: &(usize, usize)| a.0 < b.0,
            (13, 17, 5),
        );
        let got: Vec<usize> = items.iter().map(|x| x.1).collect();
        assert_eq!(got, ints(want), "{keys}");
    }
}

#[test]
fn go_sort_sorts_and_keeps_short_runs_of_ties_in_input_order() {
    // Up to 12 elements Go uses insertion sort, which is stable.
    let mut short: Vec<(u8, usize)> =
        [2u8, 1, 2, 1, 0, 2, 1, 0, 0, 2, 1, 2].into_iter().zip(0..).collect();
    go_sort::sort_slice(&mut short, |a, b| a.0 < b.0);
    let ids: Vec<usize> = short.iter().map(|x| x.1).collect();
    assert_eq!(ids, vec![4, 7, 8, 1, 3, 6, 10, 0, 2, 5, 9, 11]);

    // Longer inputs are sorted and are a permutation of the input.
    let mut long: Vec<(u64, usize)> = (0..500u64).map(|i| ((i * 7919) % 13, i as usize)).collect();
    go_sort::sort_slice(&mut long, |a, b| a.0 < b.0);
    assert!(long.windows(2).all(|w| w[0].0 <= w[1].0));
    let mut ids: Vec<usize> = long.iter().map(|x| x.1).collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..500).collect::<Vec<_>>());
}
