//! The all-cores CPU evaluator (`cpu::evaluate_parallel`) gives the matrix of the one-thread
//! specification (`cpu::evaluate`) bit for bit, on any number of threads: on degenerate shapes
//! (no classes, no nodes, one node, one class, fewer classes than threads, class counts that
//! are not a multiple of the threads), on the benchmarks' synthetic clusters, on the demo
//! fixture and on generated clusters; and `Evaluator::Cpu` (which uses it) agrees too. The
//! synthetic cluster the benchmarks time also evaluates identically on the GPU when an adapter
//! exists (as in `tests/all/gpu_parity.rs`, a missing adapter fails only with `CI=true`).
//! The lean evaluation (`cpu::evaluate_lean`, what `plan` reads) equals the full matrix's lean
//! form (`Matrix::lean`) on every input and thread count, whichever planes it keeps, also when
//! it writes into the arrays of an earlier evaluation (`cpu::evaluate_lean_into`). Every
//! instruction set the row evaluator is compiled for and this CPU runs (`cpu::InstructionSet`)
//! gives the baseline copy's matrix, which is the cell-by-cell specification's.

use crate::common;

use common::{Scenario, demo, scenarios};
use kplace::encode::encode;
use kplace::eval::cpu::{InstructionSet, with_instruction_set};
use kplace::eval::gpu::{GpuContext, GpuOptions};
use kplace::eval::synthetic::cluster_of;
use kplace::eval::testing::matrix_profile;
use kplace::eval::{Backend, Evaluator, LeanMatrix, LeanPlane, Prepared, cpu};
use kplace::framework::profile::{PluginName, Profile};
use kplace::model::{ClusterState, Pod};
use proptest::prelude::*;

/// Thread counts tried on every input: the global pool, one thread, and pools of several sizes
/// (more threads than classes included).
const THREADS: [usize; 6] = [0, 1, 2, 3, 4, 16];

fn profile() -> Profile {
    matrix_profile(&Profile::default_profile())
}

/// The sets of normalized planes the lean evaluation is checked with: none, every score
/// plugin's, and what `plan` keeps.
fn keeps() -> Vec<Vec<PluginName>> {
    vec![
        Vec::new(),
        PluginName::ALL.to_vec(),
        vec![
            PluginName::NodeResourcesFit,
            PluginName::NodeResourcesBalancedAllocation,
            PluginName::PodTopologySpread,
        ],
    ]
}

/// Asserts that the lean evaluation on `threads` threads keeping `keep` equals `full.lean(keep)`.
fn assert_lean_matches(
    prepared: &Prepared<'_>,
    full: &kplace::eval::Matrix,
    keep: &[PluginName],
    threads: usize,
    what: &str,
) {
    let want = full.clone().lean(keep);
    let got = cpu::evaluate_lean(prepared, keep, threads);
    assert!(
        got == want,
        "{what}, {threads} threads, keeping {keep:?}: the lean evaluation differs"
    );
    // Into the arrays of an earlier evaluation: larger ones are reused whatever they hold,
    // smaller ones replaced.
    let cells = want.filter.len();
    for (earlier, len) in [("larger", cells + 7), ("smaller", cells / 2)] {
        let mut out = earlier_evaluation(len);
        cpu::evaluate_lean_into(prepared, keep, threads, &mut out);
        assert!(
            out == want,
            "{what}, {threads} threads, keeping {keep:?}: the lean evaluation into the arrays \
             of a {earlier} earlier evaluation differs"
        );
    }
}

/// A lean matrix of `len` cells holding values no evaluation writes, every plane kept.
fn earlier_evaluation(len: usize) -> LeanMatrix {
    let plane = |plugin| LeanPlane {
        plugin,
        weight: 3,
        skipped: vec![true; 2],
        row_max: vec![-9; 2],
        row_min: vec![9; 2],
        normalized: vec![200; len],
    };
    LeanMatrix {
        num_classes: 2,
        num_nodes: len / 2,
        filter: vec![!0; len],
        total: vec![i32::MIN + 5; len],
        feasible_count: vec![7; 2],
        best_total: vec![1; 2],
        score_errors: vec![None; 2],
        planes: PluginName::ALL.iter().map(|&p| plane(p)).collect(),
    }
}

/// Asserts that every thread count gives `cpu::evaluate`'s matrix, and its lean form; returns it.
fn assert_same_on_every_thread_count(
    profile: &Profile,
    state: &ClusterState,
    pending: &[Pod],
    what: &str,
) -> kplace::eval::Matrix {
    let enc = encode(state, pending).expect("encodes");
    let prepared = Prepared::new(profile, state, pending, &enc).expect("prepares");
    let want = cpu::evaluate(&prepared);
    for threads in THREADS {
        let got = cpu::evaluate_parallel(&prepared, threads);
        if let Some(diff) = want.first_difference(&got) {
            panic!("{what}, {threads} threads: differs from the one-thread evaluation: {diff}");
        }
        for keep in keeps() {
            assert_lean_matches(&prepared, &want, &keep, threads, what);
        }
    }
    want
}

#[test]
fn every_thread_count_gives_the_one_thread_matrix_on_degenerate_and_synthetic_shapes() {
    let cases: &[(&str, usize, usize)] = &[
        ("no classes give an empty matrix on any number of threads", 0, 10),
        ("classes over no nodes give empty rows on any number of threads", 5, 0),
        ("no classes and no nodes give an empty matrix", 0, 0),
        ("classes over a single node match the one-thread matrix", 7, 1),
        ("a single class over many nodes matches the one-thread matrix", 1, 57),
        ("fewer classes than threads match the one-thread matrix", 3, 40),
        ("a class count that no thread count divides matches the one-thread matrix", 37, 61),
        ("many classes over a few nodes match the one-thread matrix", 130, 9),
    ];
    for &(name, classes, nodes) in cases {
        let s = cluster_of(classes, nodes);
        let m = assert_same_on_every_thread_count(&profile(), &s.state, &s.pending, name);
        assert_eq!((m.num_classes, m.num_nodes), (classes, nodes), "{name}");
        assert_eq!(m.filter.len(), classes * nodes, "{name}");
    }
}

#[test]
fn the_synthetic_cluster_has_feasible_and_infeasible_cells_and_every_score() {
    // Guards the benchmarks' input: a mix where filters reject some cells and every score
    // plugin scores some class.
    let s = cluster_of(60, 120);
    let m = assert_same_on_every_thread_count(&profile(), &s.state, &s.pending, "synthetic");
    let feasible: u32 = m.feasible_count.iter().sum();
    assert!(feasible > 0 && (feasible as usize) < m.filter.len(), "{feasible} feasible cells");
    let failed = m.filter.iter().fold(0, |acc, w| acc | (w & kplace::eval::CHECK_MASK));
    for check in [
        kplace::eval::CHECK_NODE_UNSCHEDULABLE,
        kplace::eval::CHECK_TAINT_TOLERATION,
        kplace::eval::CHECK_NODE_AFFINITY_POD,
        kplace::eval::CHECK_NODE_PORTS,
        kplace::eval::CHECK_POD_TOPOLOGY_SPREAD_SKEW,
        kplace::eval::CHECK_INTER_POD_ANTI_AFFINITY,
        kplace::eval::CHECK_INTER_POD_EXISTING_ANTI_AFFINITY,
    ] {
        assert!(failed & check != 0, "no cell failed check {check:#x}");
    }
    for plane in &m.scores {
        assert!(plane.raw.iter().any(|&v| v != 0), "{:?} scores nothing", plane.plugin);
    }
}

/// The instruction sets this process evaluates with (`KPLACE_CPU_SIMD` may cap them). Under
/// `CI=true` on x86-64, AVX2 must be among them, so that its comparison is not skipped.
fn instruction_sets() -> Vec<InstructionSet> {
    let sets: Vec<InstructionSet> =
        InstructionSet::ALL.into_iter().filter(|&s| s <= InstructionSet::detected()).collect();
    if cfg!(target_arch = "x86_64") && std::env::var("CI").as_deref() == Ok("true") {
        assert!(
            sets.contains(&InstructionSet::Avx2),
            "CI=true on x86-64 without AVX2 (or KPLACE_CPU_SIMD set): its rows go untested"
        );
    }
    sets
}

/// Asserts that every instruction set gives the baseline copy's matrix and lean matrices, on
/// one thread and on two, and that the baseline copy gives the cell-by-cell specification's.
fn assert_same_on_every_instruction_set(
    profile: &Profile,
    state: &ClusterState,
    pending: &[Pod],
    what: &str,
) {
    let enc = encode(state, pending).expect("encodes");
    let prepared = Prepared::new(profile, state, pending, &enc).expect("prepares");
    let want = with_instruction_set(InstructionSet::Baseline, || cpu::evaluate(&prepared));
    if let Some(diff) = cpu::evaluate_cells(&prepared).first_difference(&want) {
        panic!("{what}: the baseline rows differ from the cell-by-cell specification: {diff}");
    }
    for set in instruction_sets() {
        assert_eq!(with_instruction_set(set, InstructionSet::current), set, "{what}");
        for threads in [1, 2] {
            let got = with_instruction_set(set, || cpu::evaluate_parallel(&prepared, threads));
            if let Some(diff) = want.first_difference(&got) {
                panic!("{what}, {}, {threads} threads: differs from baseline: {diff}", set.name());
            }
            let what = format!("{what}, {}", set.name());
            for keep in keeps() {
                with_instruction_set(set, || {
                    assert_lean_matches(&prepared, &want, &keep, threads, &what)
                });
            }
        }
    }
}

#[test]
fn every_instruction_set_gives_the_baseline_matrix_on_synthetic_shapes_and_the_demo() {
    let cases: &[(&str, usize, usize)] = &[
        ("a single class over many nodes gives the baseline row", 1, 157),
        ("the benchmarks' mix of every filter and score gives the baseline matrix", 60, 120),
        ("rows longer than a vector of every width give the baseline matrix", 9, 1_021),
    ];
    for &(name, classes, nodes) in cases {
        let s = cluster_of(classes, nodes);
        assert_same_on_every_instruction_set(&profile(), &s.state, &s.pending, name);
    }
    let cluster = demo();
    assert_same_on_every_instruction_set(&profile(), &cluster.state, &cluster.pending, "demo");
}

#[test]
fn the_demo_fixture_evaluates_identically_on_every_thread_count() {
    let cluster = demo();
    assert_same_on_every_thread_count(&profile(), &cluster.state, &cluster.pending, "demo");
}

#[test]
fn the_cpu_evaluator_gives_the_one_thread_matrix() {
    let s = cluster_of(23, 50);
    let enc = encode(&s.state, &s.pending).expect("encodes");
    let prepared = Prepared::new(&profile(), &s.state, &s.pending, &enc).expect("prepares");
    let want = cpu::evaluate(&prepared);
    let mut selected = Evaluator::select(Backend::Cpu).expect("selects");
    let got =
        selected.evaluator.evaluate(&profile(), &s.state, &s.pending, &enc).expect("evaluates");
    assert_eq!(want.first_difference(&got), None);
}

#[test]
fn the_synthetic_cluster_evaluates_identically_on_the_gpu() {
    let mut ctx = match GpuContext::new(&GpuOptions::default()) {
        Ok(ctx) => ctx,
        Err(e) => {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("CI=true and no usable GPU adapter ({e}): install mesa-vulkan-drivers");
            }
            eprintln!("notice: GPU check skipped: {e}");
            return;
        }
    };
    let s = cluster_of(37, 150);
    let enc = encode(&s.state, &s.pending).expect("encodes");
    let prepared = Prepared::new(&profile(), &s.state, &s.pending, &enc).expect("prepares");
    let want = cpu::evaluate_parallel(&prepared, 0);
    let got = ctx.evaluate(&prepared).expect("the GPU evaluates");
    assert_eq!(want.first_difference(&got), None);
    let t = ctx.last_timings();
    assert!(t.dispatch > std::time::Duration::ZERO, "dispatch is timed: {t:?}");
    assert!(t.readback > std::time::Duration::ZERO, "readback is timed: {t:?}");
    assert_eq!(t.total(), t.upload + t.bind + t.dispatch + t.readback);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn generated_clusters_evaluate_identically_on_every_thread_count(
        s in scenarios(0..=12, 8, false),
        threads in prop::sample::select(vec![0usize, 2, 3, 5]),
    ) {
        let Scenario { profile, state, pending } = s;
        let enc = encode(&state, &pending).expect("encodes");
        let prepared = Prepared::new(&profile, &state, &pending, &enc).expect("prepares");
        let want = cpu::evaluate(&prepared);
        let got = cpu::evaluate_parallel(&prepared, threads);
        prop_assert_eq!(want.first_difference(&got), None);
        // The baseline copy of the row evaluator gives the same matrix (`want` came from the
        // widest copy this CPU runs).
        let baseline = with_instruction_set(InstructionSet::Baseline, || {
            cpu::evaluate_parallel(&prepared, threads)
        });
        prop_assert_eq!(want.first_difference(&baseline), None);
        for keep in keeps() {
            let lean = cpu::evaluate_lean(&prepared, &keep, threads);
            prop_assert!(lean == want.clone().lean(&keep), "keeping {:?}", keep);
        }
        // Without NodeResourcesFit's filter (as `plan`'s matrices), where the lean evaluation
        // skips its reason words.
        let mut no_fit = profile.clone();
        no_fit.plugins.filter.retain(|p| *p != PluginName::NodeResourcesFit);
        let prepared = Prepared::new(&no_fit, &state, &pending, &enc).expect("prepares");
        let want = cpu::evaluate(&prepared);
        for keep in keeps() {
            let lean = cpu::evaluate_lean(&prepared, &keep, threads);
            prop_assert!(lean == want.clone().lean(&keep), "no fit filter, keeping {:?}", keep);
        }
    }
}
