//! The CPU matrix (`kplace::eval`) agrees with the framework runtime run pod by pod on each
//! class's representative: exactly wherever amounts are whole encoded units (the demo fixture
//! rounded to its units, generated clusters), and on everything units cannot change for the demo
//! fixture as it is.

use crate::common;

use common::{demo, scenarios};
use kplace::encode::encode;
use kplace::eval::testing::{
    Agreement, framework_mismatches, inexact, matrix_profile, round_to_units,
};
use kplace::eval::{Check, evaluate_cpu};
use kplace::framework::profile::Profile;
use kplace::model::{ClusterState, Pod};
use proptest::prelude::*;

fn mismatches(
    profile: &Profile,
    state: &ClusterState,
    pending: &[Pod],
    agreement: Agreement,
) -> Vec<String> {
    let enc = encode(state, pending).expect("encodes");
    let m = evaluate_cpu(profile, state, pending, &enc).expect("evaluates");
    framework_mismatches(profile, state, pending, &enc, &m, agreement).expect("framework builds")
}

#[test]
fn the_demo_fixture_rounded_to_its_units_agrees_cell_for_cell() {
    let cluster = demo();
    let enc = encode(&cluster.state, &cluster.pending).unwrap();
    let (state, pending) = round_to_units(&cluster.state, &cluster.pending, &enc.dicts.resources);
    let rounded = encode(&state, &pending).unwrap();
    for c in 0..rounded.classes.len() {
        for n in 0..state.nodes.len() {
            assert!(!inexact(&rounded, c, n), "rounding leaves whole units (class {c}, node {n})");
        }
    }
    let profile = matrix_profile(&Profile::default_profile());
    let m = evaluate_cpu(&profile, &state, &pending, &rounded).unwrap();
    let found =
        framework_mismatches(&profile, &state, &pending, &rounded, &m, Agreement::Exact).unwrap();
    assert!(found.is_empty(), "{}", found.join("\n"));
    // The fixture exercises more than the happy path.
    let failures: std::collections::BTreeSet<Check> = (0..m.num_classes)
        .flat_map(|c| (0..m.num_nodes).map(move |n| (c, n)))
        .filter_map(|(c, n)| m.first_failure(c, n))
        .collect();
    for check in [Check::TaintToleration, Check::NodeAffinityPod, Check::NodeUnschedulable] {
        assert!(failures.contains(&check), "the demo has a {check:?} failure: {failures:?}");
    }
    assert!(m.feasible_count.contains(&0), "some demo pod fits nowhere");
}

#[test]
fn the_demo_fixture_as_it_is_agrees_wherever_units_cannot_matter() {
    let cluster = demo();
    let profile = matrix_profile(&Profile::default_profile());
    let found = mismatches(&profile, &cluster.state, &cluster.pending, Agreement::UnitIndependent);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn generated_clusters_in_whole_units_agree_cell_for_cell(s in scenarios(0..=7, 6, true)) {
        let found = mismatches(&s.profile, &s.state, &s.pending, Agreement::Exact);
        prop_assert!(found.is_empty(), "{}", found.join("\n"));
    }

    #[test]
    fn generated_clusters_with_inexact_amounts_agree_wherever_units_cannot_matter(
        s in scenarios(0..=6, 5, false)
    ) {
        let found = mismatches(&s.profile, &s.state, &s.pending, Agreement::UnitIndependent);
        prop_assert!(found.is_empty(), "{}", found.join("\n"));
    }
}

/// The generators reach every check and every score plugin: over a fixed sample of generated
/// clusters each check is some cell's first failure, each score plane has raw scores that
/// differ, and each plugin whose PreScore can skip skips some class.
#[test]
fn generated_clusters_exercise_every_check_and_score_plugin() {
    use kplace::framework::profile::PluginName;
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    use std::collections::BTreeSet;

    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]);
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let strategy = scenarios(1..=8, 6, true);
    let mut failures: BTreeSet<Check> = BTreeSet::new();
    let mut varied: BTreeSet<PluginName> = BTreeSet::new();
    let mut skipped: BTreeSet<PluginName> = BTreeSet::new();
    for _ in 0..300 {
        let s = strategy.new_tree(&mut runner).expect("generates").current();
        let enc = encode(&s.state, &s.pending).expect("encodes");
        let m = evaluate_cpu(&s.profile, &s.state, &s.pending, &enc).expect("evaluates");
        for c in 0..m.num_classes {
            for n in 0..m.num_nodes {
                failures.extend(m.first_failure(c, n));
            }
        }
        for plane in &m.scores {
            let feasible_raw: BTreeSet<i32> = (0..m.num_classes)
                .flat_map(|c| m.feasible_nodes(c).into_iter().map(move |n| (c, n)))
                .map(|(c, n)| plane.raw[m.cell(c, n)])
                .collect();
            if feasible_raw.len() > 1 {
                varied.insert(plane.plugin);
            }
            if plane.skipped.iter().any(|&s| s) {
                skipped.insert(plane.plugin);
            }
        }
    }
    for check in Check::ALL {
        if check == Check::PreFilterRejected {
            continue; // Needs conflicting metadata.name pins; covered by the unit tests.
        }
        assert!(failures.contains(&check), "no generated cell fails first at {check:?}");
    }
    for plugin in [
        PluginName::TaintToleration,
        PluginName::NodeAffinity,
        PluginName::NodeResourcesFit,
        PluginName::NodeResourcesBalancedAllocation,
        PluginName::ImageLocality,
        PluginName::PodTopologySpread,
        PluginName::InterPodAffinity,
    ] {
        assert!(varied.contains(&plugin), "{plugin:?} never scores two feasible cells apart");
    }
    for plugin in [
        PluginName::NodeAffinity,
        PluginName::NodeResourcesBalancedAllocation,
        PluginName::PodTopologySpread,
        PluginName::InterPodAffinity,
    ] {
        assert!(skipped.contains(&plugin), "{plugin:?} never skips a class");
    }
}
