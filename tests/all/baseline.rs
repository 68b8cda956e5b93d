//! End-to-end tests of the sequential `baseline` scheduler on small clusters whose outcomes are
//! computed by hand from upstream kube-scheduler v1.35's formulas (arithmetic in comments).

use kplace::baseline::{BaselineOptions, run_baseline};
use kplace::framework::config::SchedulerConfig;
use kplace::model::testing::{GI, NodeBuilder, PodBuilder, affinity_term, cluster};
use kplace::model::{ClusterState, Pod, TaintEffect};
use kplace::plan::Plan;

fn run(state: ClusterState, pending: &[Pod], config: &SchedulerConfig) -> Plan {
    run_baseline(state, pending, config, BaselineOptions { seed: 7, ..Default::default() })
        .expect("default profile builds")
}

fn node_of(plan: &Plan, pod: &str) -> Option<String> {
    plan.placements.iter().find(|p| p.pod == pod).map(|p| p.node.clone())
}

#[test]
fn a_pod_that_fits_nowhere_gets_upstreams_fit_error_message_byte_for_byte() {
    // n1 has room but an untolerated NoSchedule taint (TaintToleration runs before
    // NodeResourcesFit and stops the filter chain there); n2 and n3 are too small for 1500m.
    // Both reasons are UnschedulableAndUnresolvable (the request exceeds n2/n3's allocatable
    // outright), so preemption has no candidate and says so for all 3 nodes.
    let state = cluster(
        vec![
            NodeBuilder::new("n1")
                .cpu(2000)
                .memory(4 * GI)
                .taint("gpu", "true", TaintEffect::NoSchedule)
                .obj(),
            NodeBuilder::new("n2").cpu(1000).memory(4 * GI).obj(),
            NodeBuilder::new("n3").cpu(1000).memory(4 * GI).obj(),
        ],
        vec![],
    );
    let pending = [PodBuilder::new("default", "big").cpu(1500).memory(GI).obj()];
    let plan = run(state, &pending, &SchedulerConfig::default());
    assert!(plan.placements.is_empty());
    assert_eq!(plan.unschedulable.len(), 1);
    let u = &plan.unschedulable[0];
    assert_eq!(
        u.message,
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. \
         no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    );
    assert_eq!(u.reasons.get("Insufficient cpu"), Some(&2));
    assert_eq!(u.reasons.get("node(s) had untolerated taint(s)"), Some(&1));
}

/// Two 4-CPU / 8 GiB nodes; n1 already runs a 3000m / 1 GiB pod. The pending pod asks for
/// 1000m / 1 GiB.
fn two_nodes_one_busy() -> (ClusterState, Vec<Pod>) {
    let state = cluster(
        vec![
            NodeBuilder::new("n1").cpu(4000).memory(8 * GI).obj(),
            NodeBuilder::new("n2").cpu(4000).memory(8 * GI).obj(),
        ],
        vec![PodBuilder::new("default", "busy").cpu(3000).memory(GI).node("n1").obj()],
    );
    (state, vec![PodBuilder::new("default", "web").cpu(1000).memory(GI).obj()])
}

#[test]
fn least_allocated_scoring_prefers_the_emptier_node() {
    // NodeResourcesFit LeastAllocated (weight 1), per resource (alloc - req) * 100 / alloc:
    //   n1: cpu (4000-4000)*100/4000 = 0, mem (8-2)/8*100 = 75     → (0+75)/2  = 37
    //   n2: cpu (4000-1000)*100/4000 = 75, mem (8-1)/8*100 = 87    → (75+87)/2 = 81
    // BalancedAllocation (weight 1), (1 - |f_cpu - f_mem| / 2) * 100:
    //   n1: fractions 1.0 and 0.25   → (1 - 0.375) * 100  = 62
    //   n2: fractions 0.25 and 0.125 → (1 - 0.0625) * 100 = 93
    // TaintToleration: no taints → 100 × 3 on both. ImageLocality: no images → 0.
    // NodeAffinity, InterPodAffinity and PodTopologySpread skip (nothing to score).
    //   totals: n1 = 37 + 62 + 300 = 399, n2 = 81 + 93 + 300 = 474 → n2.
    let (state, pending) = two_nodes_one_busy();
    let plan = run(state, &pending, &SchedulerConfig::default());
    assert_eq!(node_of(&plan, "default/web").as_deref(), Some("n2"));
}

#[test]
fn a_config_with_most_allocated_scoring_flips_the_decision_to_the_fuller_node() {
    // MostAllocated, per resource req * 100 / alloc:
    //   n1: cpu 4000*100/4000 = 100, mem 2*100/8 = 25 → (100+25)/2 = 62
    //   n2: cpu 1000*100/4000 = 25,  mem 1*100/8 = 12 → (25+12)/2  = 18
    // Balanced allocation and taints as before:
    //   totals: n1 = 62 + 62 + 300 = 424, n2 = 18 + 93 + 300 = 411 → n1.
    let config: SchedulerConfig = r#"
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - name: cpu
          weight: 1
        - name: memory
          weight: 1
"#
    .parse()
    .expect("valid config");
    let (state, pending) = two_nodes_one_busy();
    let plan = run(state, &pending, &config);
    assert_eq!(node_of(&plan, "default/web").as_deref(), Some("n1"));
}

#[test]
fn a_config_that_raises_a_score_weight_flips_the_decision() {
    // n1 is empty but carries a PreferNoSchedule taint; n2 is untainted and half full.
    // The pod asks for 1000m / 1 GiB.
    // TaintToleration (weight 3): raw intolerable PreferNoSchedule taints n1 = 1, n2 = 0,
    //   normalized reversed: n1 = 100 - 100*1/1 = 0, n2 = 100.
    // NodeResourcesFit LeastAllocated (weight 1):
    //   n1: cpu (4000-1000)*100/4000 = 75, mem (8-1)*100/8 = 87 → (75+87)/2 = 81
    //   n2: cpu (4000-3000)*100/4000 = 25, mem (8-5)*100/8 = 37 → (25+37)/2 = 31
    // BalancedAllocation (weight 1): n1 fractions 0.25/0.125 → 93; n2 0.75/0.625 → 93.
    // Default weights:   n1 = 0 + 81 + 93 = 174,  n2 = 300 + 31 + 93 = 424  → n2.
    // Fit weight 10:     n1 = 0 + 810 + 93 = 903, n2 = 300 + 310 + 93 = 703 → n1.
    let state = || {
        cluster(
            vec![
                NodeBuilder::new("n1")
                    .cpu(4000)
                    .memory(8 * GI)
                    .taint("dedicated", "x", TaintEffect::PreferNoSchedule)
                    .obj(),
                NodeBuilder::new("n2").cpu(4000).memory(8 * GI).obj(),
            ],
            vec![PodBuilder::new("default", "half").cpu(2000).memory(4 * GI).node("n2").obj()],
        )
    };
    let pending = [PodBuilder::new("default", "web").cpu(1000).memory(GI).obj()];
    let plan = run(state(), &pending, &SchedulerConfig::default());
    assert_eq!(node_of(&plan, "default/web").as_deref(), Some("n2"));

    let config: SchedulerConfig = r#"
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled:
      - name: NodeResourcesFit
        weight: 10
"#
    .parse()
    .expect("valid config");
    let plan = run(state(), &pending, &config);
    assert_eq!(node_of(&plan, "default/web").as_deref(), Some("n1"));
}

#[test]
fn with_every_score_plugin_disabled_the_first_feasible_node_is_taken() {
    // Nothing scores, so upstream looks for a single feasible node and takes it.
    let config: SchedulerConfig = r#"
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled:
      - name: "*"
"#
    .parse()
    .expect("valid config");
    let (state, pending) = two_nodes_one_busy();
    let plan = run(state, &pending, &config);
    assert_eq!(plan.placements.len(), 1);
}

#[test]
fn a_higher_priority_pod_preempts_a_lower_priority_one_and_takes_its_place() {
    // n1 (2000m) runs a priority-0 pod of 1500m; the pending priority-100 pod needs 1000m.
    // Filter: Insufficient cpu (Unschedulable: 1000m fits the empty node), so n1 is a
    // preemption candidate; removing the victim makes room; the preemptor lands on n1.
    let state = cluster(
        vec![NodeBuilder::new("n1").cpu(2000).memory(4 * GI).obj()],
        vec![
            PodBuilder::new("default", "low")
                .cpu(1500)
                .memory(GI)
                .priority(0)
                .node("n1")
                .started(10)
                .obj(),
        ],
    );
    let pending = [PodBuilder::new("default", "high").cpu(1000).memory(GI).priority(100).obj()];
    let plan = run(state, &pending, &SchedulerConfig::default());
    assert_eq!(node_of(&plan, "default/high").as_deref(), Some("n1"));
    assert_eq!(plan.evictions.len(), 1);
    assert_eq!(plan.evictions[0].pod, "default/low");
    assert_eq!(plan.evictions[0].preemptor, "default/high");
}

#[test]
fn an_equal_priority_pod_is_never_evicted_and_the_message_says_no_victims() {
    let state = cluster(
        vec![NodeBuilder::new("n1").cpu(2000).memory(4 * GI).obj()],
        vec![PodBuilder::new("default", "peer").cpu(1500).memory(GI).priority(5).node("n1").obj()],
    );
    let pending = [PodBuilder::new("default", "new").cpu(1000).memory(GI).priority(5).obj()];
    let plan = run(state, &pending, &SchedulerConfig::default());
    assert!(plan.evictions.is_empty());
    assert_eq!(
        plan.unschedulable[0].message,
        "0/1 nodes are available: 1 Insufficient cpu. \
         no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    );
}

#[test]
fn required_anti_affinity_is_enforced_between_pods_placed_in_the_same_run() {
    // Three replicas that refuse to share a host with each other, two nodes: the first two
    // land on different nodes, the third fits nowhere. Anti-affinity is Unschedulable (not
    // unresolvable), so both nodes are preemption candidates, but equal-priority replicas are
    // never victims.
    let state = cluster(
        vec![
            NodeBuilder::new("n1").cpu(4000).memory(8 * GI).obj(),
            NodeBuilder::new("n2").cpu(4000).memory(8 * GI).obj(),
        ],
        vec![],
    );
    let replica = |name: &str, created: i64| {
        PodBuilder::new("default", name)
            .label("app", "web")
            .cpu(100)
            .created(created)
            .pod_anti_affinity(affinity_term("kubernetes.io/hostname", &[("app", "web")]))
            .obj()
    };
    let pending = [replica("web-0", 1), replica("web-1", 2), replica("web-2", 3)];
    let plan = run(state, &pending, &SchedulerConfig::default());
    let mut nodes: Vec<String> = ["default/web-0", "default/web-1"]
        .iter()
        .map(|p| node_of(&plan, p).expect("placed"))
        .collect();
    nodes.sort();
    assert_eq!(nodes, ["n1", "n2"]);
    assert_eq!(
        plan.unschedulable.iter().map(|u| u.pod.as_str()).collect::<Vec<_>>(),
        ["default/web-2"]
    );
    assert_eq!(
        plan.unschedulable[0].message,
        "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. \
         no new claims to deallocate, preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    );
}

#[test]
fn pods_are_scheduled_in_priority_order_so_the_important_pod_gets_the_last_slot() {
    // One node with room for exactly one 1500m pod: the later-created high-priority pod wins.
    let state = cluster(vec![NodeBuilder::new("n1").cpu(2000).memory(4 * GI).obj()], vec![]);
    let pending = [
        PodBuilder::new("default", "early-low").cpu(1500).priority(1).created(1).obj(),
        PodBuilder::new("default", "late-high").cpu(1500).priority(10).created(9).obj(),
    ];
    let plan = run(state, &pending, &SchedulerConfig::default());
    assert_eq!(node_of(&plan, "default/late-high").as_deref(), Some("n1"));
    assert_eq!(plan.unschedulable[0].pod, "default/early-low");
}

#[test]
fn every_pending_pod_appears_exactly_once_in_the_plan() {
    let (state, mut pending) = two_nodes_one_busy();
    pending.push(PodBuilder::new("default", "huge").cpu(100_000).obj());
    let plan = run(state, &pending, &SchedulerConfig::default());
    let mut seen: Vec<&str> = plan
        .placements
        .iter()
        .map(|p| p.pod.as_str())
        .chain(plan.unschedulable.iter().map(|u| u.pod.as_str()))
        .collect();
    seen.sort();
    assert_eq!(seen, ["default/huge", "default/web"]);
}

#[test]
fn the_same_seed_gives_the_same_plan() {
    let nodes: Vec<_> = (0..20)
        .map(|i| NodeBuilder::new(&format!("n{i:02}")).cpu(4000).memory(8 * GI).obj())
        .collect();
    let pending: Vec<Pod> = (0..50)
        .map(|i| PodBuilder::new("default", &format!("p{i:02}")).cpu(300).created(i).obj())
        .collect();
    let a = run(cluster(nodes.clone(), vec![]), &pending, &SchedulerConfig::default());
    let b = run(cluster(nodes, vec![]), &pending, &SchedulerConfig::default());
    assert_eq!(a.placements, b.placements);
}

#[test]
fn explain_shows_the_numbers_behind_the_hand_computed_decision() {
    use kplace::explain::{ExplainOptions, explain};
    // The cluster of `a_config_that_raises_a_score_weight_flips_the_decision`, default weights.
    let state = cluster(
        vec![
            NodeBuilder::new("n1")
                .cpu(4000)
                .memory(8 * GI)
                .taint("dedicated", "x", TaintEffect::PreferNoSchedule)
                .obj(),
            NodeBuilder::new("n2").cpu(4000).memory(8 * GI).obj(),
        ],
        vec![PodBuilder::new("default", "half").cpu(2000).memory(4 * GI).node("n2").obj()],
    );
    let pending = [PodBuilder::new("default", "web").cpu(1000).memory(GI).obj()];
    let e = explain(
        state,
        &pending,
        &SchedulerConfig::default(),
        "default/web",
        &ExplainOptions::default(),
    )
    .expect("explains");
    let line = |node: &str, plugin: &str| {
        let n = e.nodes.iter().find(|n| n.node == node).expect("node shown");
        let s = n.scores.iter().find(|s| s.plugin == plugin).expect("plugin scored");
        (s.raw, s.normalized, s.weight)
    };
    assert_eq!(line("n1", "TaintToleration"), (1, 0, 3));
    assert_eq!(line("n2", "TaintToleration"), (0, 100, 3));
    assert_eq!(line("n1", "NodeResourcesFit"), (81, 81, 1));
    assert_eq!(line("n2", "NodeResourcesFit"), (31, 31, 1));
    assert_eq!(line("n1", "NodeResourcesBalancedAllocation"), (93, 93, 1));
    assert_eq!(line("n2", "NodeResourcesBalancedAllocation"), (93, 93, 1));
    let total = |node: &str| e.nodes.iter().find(|n| n.node == node).and_then(|n| n.total);
    assert_eq!(total("n1"), Some(174));
    assert_eq!(total("n2"), Some(424));
    assert_eq!(e.best_nodes, ["n2"]);
    assert_eq!(e.baseline_decision.as_deref(), Some("placed on n2"));
}
