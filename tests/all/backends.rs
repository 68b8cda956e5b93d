//! `baseline`, `plan` and `explain` decide the same on every backend: the CPU reference (the
//! framework runtime), the CPU matrix evaluator and the GPU (Mesa's lavapipe here), on the
//! fixtures, on every generated workload and on random clusters that exercise every plugin.
//!
//! The GPU half needs a Vulkan adapter; without one it prints a notice and checks the CPU
//! matrix only, except when `CI=true`, where a missing adapter fails (as `tests/all/gpu_parity.rs`).

use crate::common;

use std::sync::{Mutex, MutexGuard, OnceLock};

use common::{Scenario, demo, scenarios};
use kplace::baseline::{BaselineOptions, run_baseline, run_baseline_on};
use kplace::batch::{BatchOptions, plan_greedy_on};
use kplace::compare::bench::generate_cluster;
use kplace::encode::encode;
use kplace::eval::Evaluator;
use kplace::eval::testing::round_to_units;
use kplace::explain::{ExplainOptions, Explanation, explain_on};
use kplace::framework::config::SchedulerConfig;
use kplace::r#gen::{GenParams, Workload};
use kplace::model::{ClusterState, Pod};
use kplace::plan::Plan;
use kplace::progress::Progress;
use kplace::snapshot::{self, BuildOptions};
use proptest::prelude::*;

/// One GPU evaluator for the whole binary (tests take turns).
fn gpu() -> Option<MutexGuard<'static, Evaluator>> {
    static GPU: OnceLock<Option<Mutex<Evaluator>>> = OnceLock::new();
    let gpu = GPU.get_or_init(|| match Evaluator::select(kplace::eval::Backend::Gpu) {
        Ok(selected) => Some(Mutex::new(selected.evaluator)),
        Err(e) => {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("CI=true and no usable GPU adapter ({e}): install mesa-vulkan-drivers");
            }
            eprintln!("notice: GPU backend checks skipped: {e}");
            None
        }
    });
    gpu.as_ref().map(|m| m.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
}

/// What a plan decided (the summary holds timings and the backend's name).
fn decided(plan: &Plan) -> String {
    let mut p = plan.clone();
    p.summary = Default::default();
    serde_json::to_string(&p).expect("serializes")
}

/// An explanation without the line naming where it was evaluated.
fn explained(e: &Explanation) -> String {
    let mut e = e.clone();
    e.evaluated_on.clear();
    serde_json::to_string(&e).expect("serializes")
}

/// How many explanations of a case came from a matrix (the rest from the framework, because
/// some amount was not a whole number of encoded units).
#[derive(Debug, Default)]
struct Tally {
    matrix_explanations: usize,
}

/// Asserts that baseline, plan and explain agree on the CPU reference, the CPU matrix and (when
/// there is one) the GPU.
fn assert_backends_agree(
    what: &str,
    state: &ClusterState,
    pending: &[Pod],
    config: &SchedulerConfig,
    tally: &mut Tally,
) {
    let progress = Progress::hidden();
    let seed = 3;
    let reference = run_baseline(
        state.clone(),
        pending,
        config,
        BaselineOptions { seed, ..Default::default() },
    )
    .expect("baseline runs");
    let options = BatchOptions { seed, ..Default::default() };
    let plan_reference =
        plan_greedy_on(state.clone(), pending, config, &options, &progress, &mut Evaluator::Cpu)
            .expect("plan runs");
    // Explain the first pods of the queue and every pod baseline could not place (a few).
    let mut keys: Vec<String> = pending.iter().take(3).map(Pod::key).collect();
    keys.extend(reference.unschedulable.iter().take(3).map(|u| u.pod.clone()));
    let explain_options = ExplainOptions {
        baseline: BaselineOptions { seed, ..Default::default() },
        ..Default::default()
    };
    let explain = |key: &str, evaluator: Option<&mut Evaluator>| {
        explain_on(state.clone(), pending, config, key, &explain_options, &progress, evaluator)
            .unwrap_or_else(|e| panic!("{what}: explain {key}: {e}"))
    };
    let explanations: Vec<Explanation> = keys.iter().map(|k| explain(k, None)).collect();

    let mut check = |name: &str, evaluator: &mut Evaluator| {
        let baseline = run_baseline_on(
            state.clone(),
            pending,
            config,
            BaselineOptions { seed, ..Default::default() },
            &progress,
            evaluator,
        )
        .unwrap_or_else(|e| panic!("{what}: baseline on {name}: {e}"));
        assert_eq!(decided(&baseline), decided(&reference), "{what}: baseline on {name}");
        let plan = plan_greedy_on(state.clone(), pending, config, &options, &progress, evaluator)
            .unwrap_or_else(|e| panic!("{what}: plan on {name}: {e}"));
        assert_eq!(decided(&plan), decided(&plan_reference), "{what}: plan on {name}");
        assert_eq!(plan.summary.backend, evaluator.describe(), "{what}: plan's backend");
        for (key, want) in keys.iter().zip(&explanations) {
            let got = explain(key, Some(evaluator));
            assert_eq!(explained(&got), explained(want), "{what}: explain {key} on {name}");
            if got.evaluated_on.starts_with("matrix") {
                tally.matrix_explanations += 1;
            }
        }
    };
    check("the CPU matrix", &mut Evaluator::Cpu);
    if let Some(mut gpu) = gpu() {
        check("the GPU", &mut gpu);
    }
}

fn load(dir: &str) -> kplace::snapshot::Cluster {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(dir);
    let snap = snapshot::load(&[path]).expect("the fixture loads");
    snapshot::build(&snap, &BuildOptions::default()).expect("the fixture builds")
}

#[test]
fn every_backend_decides_the_same_on_the_fixtures() {
    let config = SchedulerConfig::default();
    let mut tally = Tally::default();
    let demo = demo();
    assert_backends_agree("demo", &demo.state, &demo.pending, &config, &mut tally);
    // The demo has amounts that are not whole units (explain then uses the framework); rounded
    // to its units every explanation comes from the matrix.
    let enc = encode(&demo.state, &demo.pending).expect("encodes");
    let (state, pending) = round_to_units(&demo.state, &demo.pending, &enc.dicts.resources);
    let before = tally.matrix_explanations;
    assert_backends_agree("demo rounded to units", &state, &pending, &config, &mut tally);
    assert!(tally.matrix_explanations > before, "the rounded demo is explained from matrices");
    let gangs = load("fixtures/gangs");
    assert_backends_agree("gangs", &gangs.state, &gangs.pending, &config, &mut tally);
}

#[test]
fn every_backend_decides_the_same_on_every_generated_workload() {
    let config = SchedulerConfig::default();
    let mut tally = Tally::default();
    for workload in Workload::ALL {
        let params = GenParams { workload, nodes: 40, pods: 160, init_pods: 60, seed: 7 };
        let generated = generate_cluster(&params, &BuildOptions::default(), &Progress::hidden())
            .unwrap_or_else(|e| panic!("{workload}: {e}"));
        let c = &generated.cluster;
        assert_backends_agree(&workload.to_string(), &c.state, &c.pending, &config, &mut tally);
    }
    assert!(tally.matrix_explanations > 0, "generated clusters are explained from matrices");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn every_backend_decides_the_same_on_random_clusters(s in scenarios(1..=30, 5, true)) {
        let Scenario { profile, state, pending } = s;
        let config = SchedulerConfig { profiles: vec![profile], ..SchedulerConfig::default() };
        let mut tally = Tally::default();
        assert_backends_agree("random", &state, &pending, &config, &mut tally);
    }
}
