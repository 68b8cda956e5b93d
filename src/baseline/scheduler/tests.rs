use super::*;
use crate::model::TaintEffect;
use crate::model::testing::{GI, NodeBuilder, PodBuilder, cluster};

#[test]
fn static_filter_rows_reject_exactly_the_nodes_the_framework_rejects_first() {
    let state = cluster(
        vec![
            NodeBuilder::new("open").cpu(4000).memory(8 * GI).label("disk", "ssd").obj(),
            NodeBuilder::new("cordoned").cpu(4000).memory(8 * GI).unschedulable().obj(),
            NodeBuilder::new("tainted")
                .cpu(4000)
                .memory(8 * GI)
                .taint("gpu", "yes", TaintEffect::NoSchedule)
                .obj(),
            NodeBuilder::new("hdd").cpu(4000).memory(8 * GI).label("disk", "hdd").obj(),
            // Fails only a dynamic filter (resources): the framework decides it.
            NodeBuilder::new("tiny").cpu(10).memory(8 * GI).label("disk", "ssd").obj(),
        ],
        vec![],
    );
    let pending = vec![
        PodBuilder::new("d", "any").cpu(100).obj(),
        PodBuilder::new("d", "ssd").cpu(100).node_selector("disk", "ssd").obj(),
    ];
    let config = SchedulerConfig::default();
    let frameworks = frameworks_for(&config, &pending).expect("builds");
    let statics =
        StaticFilters::evaluate(&state, &pending, &frameworks, &mut Evaluator::Cpu).expect("ok");
    let fw = &frameworks["default-scheduler"];
    let PreFilterOutcome::Proceed(cycle) = fw.pre_filter(&pending[1], &state) else {
        panic!("PreFilter proceeds");
    };
    // (pod, node, rejected by the row)
    let cases = [
        (0, "open", false),
        (0, "cordoned", true),
        (0, "tainted", true),
        (0, "hdd", false),
        (0, "tiny", false),
        (1, "open", false),
        (1, "cordoned", true),
        (1, "tainted", true),
        (1, "hdd", true),
        (1, "tiny", false),
    ];
    for (pod, name, rejected) in cases {
        let node = state.node_index(name).expect("the node exists");
        let row = statics.row(pod).expect("the default profile starts with static filters");
        let got = row.rejection(node);
        assert_eq!(got.is_some(), rejected, "pod {pod} on {name}: {got:?}");
        if let Some(status) = got {
            let cycle = if pod == 1 {
                cycle.clone()
            } else {
                match fw.pre_filter(&pending[0], &state) {
                    PreFilterOutcome::Proceed(c) => c,
                    PreFilterOutcome::Rejected(_) => panic!("PreFilter proceeds"),
                }
            };
            let want = fw.filter(&cycle, &pending[pod], &state.nodes[node]);
            assert_eq!(status.code, want.code, "pod {pod} on {name}");
            assert_eq!(status.reasons, want.reasons, "pod {pod} on {name}");
        }
    }
}

#[test]
fn a_profile_that_filters_first_by_a_dynamic_plugin_has_no_static_rows() {
    let mut profile = Profile::default_profile();
    profile.plugins.filter.retain(|p| *p != PluginName::NodeResourcesFit);
    profile.plugins.filter.insert(0, PluginName::NodeResourcesFit);
    assert!(static_profile(&profile).is_none());
    let default = static_profile(&Profile::default_profile()).expect("a static prefix");
    assert_eq!(default.plugins.filter, STATIC_FILTERS.to_vec());
    assert!(default.plugins.score.is_empty());
}

#[test]
fn small_clusters_evaluate_every_node() {
    assert_eq!(num_feasible_nodes_to_find(None, 99), 99);
}

#[test]
fn five_thousand_nodes_score_ten_percent() {
    // 50 - 5000/125 = 10 %, 5000 * 10 / 100 = 500.
    assert_eq!(num_feasible_nodes_to_find(None, 5000), 500);
}

#[test]
fn the_adaptive_percentage_bottoms_out_at_five() {
    // 50 - 10000/125 = -30 → 5 %, 10000 * 5 / 100 = 500.
    assert_eq!(num_feasible_nodes_to_find(None, 10_000), 500);
}

#[test]
fn at_least_one_hundred_nodes_are_found() {
    // 50 - 150/125 = 49 %, 150 * 49 / 100 = 73 → raised to 100.
    assert_eq!(num_feasible_nodes_to_find(None, 150), 100);
    // An explicit 10 % of 500 = 50 → raised to 100.
    assert_eq!(num_feasible_nodes_to_find(Some(10), 500), 100);
}

#[test]
fn an_explicit_percentage_is_used_as_is() {
    assert_eq!(num_feasible_nodes_to_find(Some(100), 5000), 5000);
    assert_eq!(num_feasible_nodes_to_find(Some(30), 1000), 300);
}

#[test]
fn queue_orders_by_priority_then_creation_time() {
    use crate::model::testing::PodBuilder;
    let pods = vec![
        PodBuilder::new("ns", "low").priority(1).created(1).obj(),
        PodBuilder::new("ns", "high-late").priority(10).created(5).obj(),
        PodBuilder::new("ns", "high-early").priority(10).created(2).obj(),
    ];
    let names: Vec<&str> = queue_order(&pods).into_iter().map(|i| pods[i].name.as_str()).collect();
    assert_eq!(names, ["high-early", "high-late", "low"]);
}
