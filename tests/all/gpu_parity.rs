//! The GPU matrix equals the CPU matrix bit for bit: on the demo fixture, on degenerate shapes
//! (no nodes, one node, no classes, a class nothing fits, node counts that are not a multiple of
//! the workgroup size, more nodes than one tile, more classes than one chunk) and on generated
//! clusters, with default and forced small tiles, every plugin of the default profile included,
//! with the kernels' binary64 in software and native (where the adapter has it); and both
//! binary64 libraries compute on the device exactly as the CPU's `f64`.
//!
//! These tests need a Vulkan adapter (Mesa's lavapipe is enough:
//! `apt-get install mesa-vulkan-drivers libvulkan1`). Without one they print a notice and pass,
//! except when `CI=true`, where they fail: CI must never skip them silently.

use crate::common;

use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use common::{Scenario, demo, scenarios};
use kplace::encode::encode;
use kplace::eval::columns::{self, NodeUsage};
use kplace::eval::gpu::{
    Binary64, GpuContext, GpuError, GpuOptions, binary64_inputs, binary64_mismatches,
};
use kplace::eval::testing::{matrix_profile, round_to_units};
use kplace::eval::{Backend, Evaluator, Prepared, cpu};
use kplace::framework::profile::{PluginName, Profile};
use kplace::model::testing::{
    GI, MI, NodeBuilder, PodBuilder, affinity_term, cluster, spread_constraint,
};
use kplace::model::{ClusterState, LabelSelector, Pod, TaintEffect, UnsatisfiableAction};
use proptest::prelude::*;

/// One device per binary64 mode for the whole test binary (tests take turns); the default is
/// the one `GpuContext::new` picks.
fn gpu() -> Option<MutexGuard<'static, GpuContext>> {
    static CTX: OnceLock<Option<Mutex<GpuContext>>> = OnceLock::new();
    open(&CTX, || GpuContext::new(&GpuOptions::default()))
}

/// The device with its kernels in `binary64`'s mode. Native binary64 needs the adapter's
/// SHADER_F64 and SHADER_INT64 (lavapipe has both): `CI=true` requires it, so the native
/// kernels are never skipped silently there.
fn gpu_in(binary64: Binary64) -> Option<MutexGuard<'static, GpuContext>> {
    static CTX: [OnceLock<Option<Mutex<GpuContext>>>; 2] = [OnceLock::new(), OnceLock::new()];
    let slot = Binary64::ALL.iter().position(|&b| b == binary64).expect("a mode");
    open(&CTX[slot], || GpuContext::with_binary64(&GpuOptions::default(), binary64))
}

fn open(
    ctx: &'static OnceLock<Option<Mutex<GpuContext>>>,
    make: impl FnOnce() -> Result<GpuContext, GpuError>,
) -> Option<MutexGuard<'static, GpuContext>> {
    let ctx = ctx.get_or_init(|| match make() {
        Ok(ctx) => {
            eprintln!(
                "GPU parity tests on {}, binary64 {}",
                ctx.adapter_description(),
                ctx.binary64().name()
            );
            Some(Mutex::new(ctx))
        }
        Err(e) => {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("CI=true and no usable GPU adapter ({e}): install mesa-vulkan-drivers");
            }
            eprintln!("notice: GPU parity tests skipped: {e}");
            None
        }
    });
    ctx.as_ref().map(|m| m.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
}

/// Runs `check` on the device in each binary64 mode that is available.
fn each_binary64(mut check: impl FnMut(&mut GpuContext)) {
    for binary64 in Binary64::ALL {
        if let Some(mut ctx) = gpu_in(binary64) {
            assert_eq!(ctx.binary64(), binary64);
            check(&mut ctx);
        }
    }
}

/// Evaluates on both backends with the given tiling and asserts equality.
fn assert_parity(
    ctx: &mut GpuContext,
    profile: &Profile,
    state: &ClusterState,
    pending: &[Pod],
    options: GpuOptions,
    what: &str,
) {
    let enc = encode(state, pending).expect("encodes");
    let prepared = Prepared::new(profile, state, pending, &enc).expect("prepares");
    let want = cpu::evaluate(&prepared);
    ctx.set_options(options);
    let got = ctx.evaluate(&prepared).unwrap_or_else(|e| panic!("{what}: GPU failed: {e}"));
    if let Some(diff) = want.first_difference(&got) {
        panic!("{what} ({options:?}): GPU differs from CPU: {diff}");
    }
    // The lean readback: every kept plane, none, and one.
    let plugins: Vec<PluginName> = want.scores.iter().map(|s| s.plugin).collect();
    for keep in [&plugins[..], &[], &plugins[..plugins.len().min(1)]] {
        let lean = ctx.evaluate_lean(&prepared, keep).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            lean == want.clone().lean(keep),
            "{what} ({options:?}): the GPU's lean matrix keeping {keep:?} differs from the CPU's"
        );
    }
}

fn profile() -> Profile {
    matrix_profile(&Profile::default_profile())
}

const SMALL: GpuOptions = GpuOptions { max_tile_nodes: Some(64), max_chunk_classes: Some(2) };

#[test]
fn the_demo_fixture_evaluates_identically_on_the_gpu() {
    each_binary64(demo_parity);
}

fn demo_parity(ctx: &mut GpuContext) {
    let cluster = demo();
    for options in [GpuOptions::default(), SMALL] {
        assert_parity(ctx, &profile(), &cluster.state, &cluster.pending, options, "demo");
    }
    // The full default profile too: the plugins not in the matrix are only listed.
    let full = Profile::default_profile();
    assert_parity(
        ctx,
        &full,
        &cluster.state,
        &cluster.pending,
        GpuOptions::default(),
        "demo, default profile",
    );
    let enc = encode(&cluster.state, &cluster.pending).unwrap();
    let (state, pending) = round_to_units(&cluster.state, &cluster.pending, &enc.dicts.resources);
    assert_parity(ctx, &profile(), &state, &pending, SMALL, "demo rounded to its units");
}

fn nodes(n: usize) -> Vec<kplace::model::Node> {
    (0..n)
        .map(|i| {
            let mut b = NodeBuilder::new(&format!("n{i:04}"))
                .cpu(1000 + 250 * (i as i64 % 7))
                .memory((1 + i as i64 % 5) * GI)
                .label("zone", ["a", "b", "c"][i % 3]);
            if i % 11 == 3 {
                b = b.taint("spot", "", TaintEffect::PreferNoSchedule);
            }
            if i % 13 == 5 {
                b = b.taint("gpu", "yes", TaintEffect::NoSchedule);
            }
            if i % 4 == 1 {
                b = b.image(&["nginx:latest"], (100 + i as i64) * MI);
            }
            b.obj()
        })
        .collect()
}

/// Pods labelled `app=web` bound to every third node (two on every ninth).
/// Five ordinary nodes and one whose amount of a resource is past that resource's base unit.
fn widened(big: fn(NodeBuilder) -> NodeBuilder) -> Vec<kplace::model::Node> {
    let mut all = nodes(5);
    all.push(big(NodeBuilder::new("n0005").label("zone", "c")).obj());
    all
}

fn bound(n: usize) -> Vec<Pod> {
    (0..n)
        .filter(|i| i % 3 == 0)
        .flat_map(|i| {
            let copies = if i % 9 == 0 { 2 } else { 1 };
            (0..copies).map(move |k| {
                PodBuilder::new("d", &format!("web-{i}-{k}"))
                    .label("app", "web")
                    .cpu(50)
                    .node(&format!("n{i:04}"))
                    .obj()
            })
        })
        .collect()
}

fn pods() -> Vec<Pod> {
    let web = || PodBuilder::new("d", "web").label("app", "web").cpu(100);
    vec![
        PodBuilder::new("d", "small").cpu(100).memory(GI / 4).image("nginx").obj(),
        PodBuilder::new("d", "zonal").cpu(500).node_selector("zone", "b").obj(),
        PodBuilder::new("d", "huge").cpu(1_000_000).obj(),
        PodBuilder::new("d", "port").cpu(200).host_port("", "TCP", 8080).obj(),
        web()
            .spread(spread_constraint(
                1,
                "zone",
                UnsatisfiableAction::DoNotSchedule,
                &[("app", "web")],
            ))
            .obj(),
        web()
            .spread(spread_constraint(
                1,
                "kubernetes.io/hostname",
                UnsatisfiableAction::ScheduleAnyway,
                &[("app", "web")],
            ))
            .spread(spread_constraint(
                2,
                "zone",
                UnsatisfiableAction::ScheduleAnyway,
                &[("app", "web")],
            ))
            .obj(),
        web().default_spread_selector(LabelSelector::from_match_labels([("app", "web")])).obj(),
        web()
            .pod_anti_affinity(affinity_term("kubernetes.io/hostname", &[("app", "web")]))
            .preferred_pod_affinity(7, affinity_term("zone", &[("app", "web")]))
            .obj(),
    ]
}

#[test]
fn degenerate_shapes_evaluate_identically_on_the_gpu() {
    each_binary64(|ctx| {
        let cases: Vec<(&str, ClusterState, Vec<Pod>)> = vec![
            ("no nodes", cluster(vec![], vec![]), pods()),
            ("no pending pods", cluster(nodes(5), bound(5)), vec![]),
            ("one node", cluster(nodes(1), bound(1)), pods()),
            ("a class nothing fits", cluster(nodes(3), bound(3)), vec![pods()[2].clone()]),
            ("63 nodes, one short of a workgroup", cluster(nodes(63), bound(63)), pods()),
            ("65 nodes, one past a workgroup", cluster(nodes(65), bound(65)), pods()),
            ("150 nodes, three tiles of 64", cluster(nodes(150), bound(150)), pods()),
            ("129 nodes, one node in the last tile", cluster(nodes(129), bound(129)), pods()),
            (
                "a node of 41 TiB: memory in 2 MiB units",
                cluster(widened(|b| b.memory(41 << 40)), bound(6)),
                pods(),
            ),
            (
                "a node of 42,950 CPUs: cpu in 2-millicore units",
                cluster(widened(|b| b.cpu(42_950_001)), bound(6)),
                pods(),
            ),
            (
                "a node of 42,949,673 pods: pods in 2-pod units",
                cluster(widened(|b| b.pods(42_949_673)), bound(6)),
                pods(),
            ),
        ];
        for (name, state, pending) in cases {
            if name.ends_with(" units") {
                let enc = encode(&state, &pending).unwrap();
                let widened =
                    enc.dicts.resources.units.iter().any(|u| {
                        u.shift > kplace::encode::units::ResourceUnit::base(&u.name).shift
                    });
                assert!(widened, "{name}: a unit is wider than its base");
            }
            for options in [
                GpuOptions::default(),
                SMALL,
                GpuOptions { max_tile_nodes: Some(64), max_chunk_classes: Some(1) },
            ] {
                assert_parity(ctx, &profile(), &state, &pending, options, name);
            }
        }
    });
}

#[test]
fn the_forced_tiling_really_cuts_the_matrix() {
    let Some(mut ctx) = gpu() else { return };
    ctx.set_options(SMALL);
    let t = ctx.tiling(5, 150).expect("tiles");
    assert_eq!((t.tile_stride, t.tiles, t.chunk_classes, t.chunks), (64, 3, 2, 3));
    ctx.set_options(GpuOptions::default());
    let t = ctx.tiling(5, 150).expect("tiles");
    assert_eq!((t.tile_stride, t.tiles, t.chunks), (192, 1, 1), "one tile, rounded to 64");
}

#[test]
fn backend_selection_follows_the_cli_semantics() {
    let cluster = demo();
    let enc = encode(&cluster.state, &cluster.pending).unwrap();
    let run = |backend: Backend| {
        let mut selected = Evaluator::select(backend).expect("selects");
        let m = selected
            .evaluator
            .evaluate(&profile(), &cluster.state, &cluster.pending, &enc)
            .expect("evaluates");
        (selected, m)
    };
    let (cpu_sel, cpu_matrix) = run(Backend::Cpu);
    assert!(matches!(cpu_sel.evaluator, Evaluator::Cpu) && cpu_sel.notice.is_none());
    assert_eq!(cpu_sel.evaluator.describe(), "cpu");
    let has_gpu = gpu().is_some();
    let hardware = GpuContext::new_hardware(&GpuOptions::default()).is_ok();
    let (auto_sel, auto_matrix) = run(Backend::Auto);
    assert_eq!(auto_matrix, cpu_matrix, "auto gives the same matrix whichever backend it picks");
    if hardware {
        assert!(matches!(auto_sel.evaluator, Evaluator::Gpu(_)), "auto prefers a hardware GPU");
        assert!(auto_sel.notice.is_none());
    } else {
        // A software adapter (lavapipe) is slower than the CPU evaluator: auto never takes it.
        assert!(matches!(auto_sel.evaluator, Evaluator::Cpu), "auto falls back to the CPU");
        let notice = auto_sel.notice.expect("auto says why it fell back");
        assert!(notice.ends_with("evaluating on the CPU") && !notice.contains('\n'), "{notice}");
    }
    if has_gpu {
        // `gpu` takes any adapter, a software one included.
        let (gpu_sel, gpu_matrix) = run(Backend::Gpu);
        assert!(gpu_sel.evaluator.describe().starts_with("gpu ("));
        assert_eq!(gpu_matrix, cpu_matrix);
    } else {
        assert!(Evaluator::select(Backend::Gpu).is_err(), "gpu without an adapter is an error");
    }
}

#[test]
#[ignore = "prints timings of one evaluation of the demo fixture; run with --ignored --nocapture"]
fn demo_timing() {
    let Some(mut ctx) = gpu() else { return };
    let cluster = demo();
    let enc = encode(&cluster.state, &cluster.pending).unwrap();
    let profile = profile();
    let prepared = Prepared::new(&profile, &cluster.state, &cluster.pending, &enc).unwrap();
    ctx.set_options(GpuOptions::default());
    let _ = ctx.evaluate(&prepared).unwrap();
    let runs = 20u32;
    let start = Instant::now();
    for _ in 0..runs {
        std::hint::black_box(cpu::evaluate(&prepared));
    }
    let cpu_time = start.elapsed() / runs;
    let start = Instant::now();
    for _ in 0..runs {
        std::hint::black_box(ctx.evaluate(&prepared).unwrap());
    }
    let gpu_time = start.elapsed() / runs;
    println!(
        "demo: {} classes × {} nodes; cpu {cpu_time:?}, gpu ({}) {gpu_time:?} per evaluation",
        prepared.num_classes,
        prepared.num_nodes,
        ctx.adapter_description()
    );
}

/// The binary64 library of each mode computes on the device exactly as the CPU's `f64`, and a
/// default context computes natively where the adapter can.
#[test]
fn the_binary64_library_computes_on_the_gpu_exactly_as_native_f64() {
    let inputs = binary64_inputs(6000);
    let mut modes = Vec::new();
    each_binary64(|ctx| {
        let results = ctx.f64_selftest(&inputs).expect("the self-test kernel runs");
        assert_eq!(results.len(), inputs.len());
        let failures = binary64_mismatches(&inputs, &results);
        assert!(
            failures.is_empty(),
            "binary64 {}: {} of {} results differ from native f64, e.g.:\n{}",
            ctx.binary64().name(),
            failures.len(),
            inputs.len() * 10,
            failures.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
        );
        modes.push(ctx.binary64());
    });
    if std::env::var("CI").as_deref() == Ok("true") {
        assert_eq!(modes, Binary64::ALL, "CI=true: lavapipe computes binary64 natively too");
    }
    if modes.contains(&Binary64::Native) {
        let ctx = gpu().expect("a default device");
        assert_eq!(ctx.binary64(), Binary64::Native, "the default takes native binary64");
    }
}

/// The self-test's comparison is not vacuous: a result one ulp off, a wrong integer and a
/// wrong comparison are each reported.
#[test]
fn the_binary64_comparison_reports_every_wrong_result() {
    let inputs = [(1.5f64.to_bits(), 2.25f64.to_bits())];
    let (a, b) = (1.5f64, 2.25f64);
    let right = [
        (a + b).to_bits(),
        (a - b).to_bits(),
        (a * b).to_bits(),
        (a / b).to_bits(),
        a.sqrt().to_bits(),
        a.round().to_bits(),
        a as i64 as u64,
        (a.to_bits() as i64 as f64).to_bits(),
        (a.to_bits() as f64).to_bits(),
        1,
    ];
    assert!(binary64_mismatches(&inputs, &[right]).is_empty());
    for k in 0..right.len() {
        let mut wrong = right;
        wrong[k] ^= 1;
        assert_eq!(binary64_mismatches(&inputs, &[wrong]).len(), 1, "result {k} is checked");
    }
    assert!(!binary64_mismatches(&inputs, &[]).is_empty(), "a missing result is reported");
}

/// Fills `state`: every pending pod placed once on each node `i` with `i % 3 == pick`, as far
/// as the node's pod count allows; returns the nodes it changed.
fn fill(state: &mut ClusterState, pending: &[Pod], pick: usize) -> Vec<usize> {
    let mut changed = Vec::new();
    for n in (0..state.nodes.len()).filter(|n| n % 3 == pick) {
        for (k, pod) in pending.iter().enumerate() {
            let mut placed = pod.clone();
            placed.name = format!("{}-filled-{n}-{k}", pod.name);
            placed.node_name = Some(state.nodes[n].name.clone());
            state.nodes[n].add_pod(std::sync::Arc::new(placed));
        }
        changed.push(n);
    }
    changed
}

/// The incremental entry point on the device equals the CPU twin, and on a filled cluster it
/// equals the full matrix of the filled cluster on those columns (returns whether that second
/// comparison could be made: the filled cluster's fresh encoding kept the units).
fn assert_column_parity(
    ctx: &mut GpuContext,
    profile: &Profile,
    state: &ClusterState,
    pending: &[Pod],
    options: GpuOptions,
    what: &str,
) -> bool {
    let enc = encode(state, pending).expect("encodes");
    let prepared = Prepared::new(profile, state, pending, &enc).expect("prepares");
    let mut filled = state.clone();
    let changed = fill(&mut filled, pending, 1);
    let Ok(usage) = NodeUsage::of(&enc, &filled, &changed) else {
        return false; // The filled amounts left the encoding's range: not an update of it.
    };
    let want = columns::evaluate_cpu(&prepared, &usage).expect("CPU update");
    ctx.set_options(options);
    let got = ctx
        .resource_columns(&prepared, &usage)
        .unwrap_or_else(|e| panic!("{what}: GPU update failed: {e}"));
    assert_eq!(got, want, "{what} ({options:?}): the GPU update differs from the CPU's");
    // Against a fresh evaluation of the filled cluster, where the encoding did not change.
    let fresh = encode(&filled, pending).expect("encodes");
    if fresh.dicts.resources == enc.dicts.resources {
        let fresh_p = Prepared::new(profile, &filled, pending, &fresh).expect("prepares");
        let m = cpu::evaluate(&fresh_p);
        for c in 0..m.num_classes {
            for (i, &n) in changed.iter().enumerate() {
                let cell = m.cell(c, n);
                assert_eq!(
                    got.fit_insufficient[got.cell(c, i)],
                    m.fit_insufficient[cell],
                    "{what}: fit word of class {c} on node {n}"
                );
                for (plugin, plane) in [
                    (PluginName::NodeResourcesFit, &got.fit_raw),
                    (PluginName::NodeResourcesBalancedAllocation, &got.balanced_raw),
                ] {
                    if let Some(full) = m.plane(plugin) {
                        assert_eq!(
                            plane[got.cell(c, i)],
                            full.raw[cell],
                            "{what}: {plugin:?} of class {c} on node {n}"
                        );
                    }
                }
            }
        }
        return true;
    }
    false
}

#[test]
fn column_updates_evaluate_identically_on_the_gpu() {
    each_binary64(|ctx| {
        let cases: Vec<(&str, ClusterState, Vec<Pod>)> = vec![
            ("one node", cluster(nodes(2), bound(2)), pods()),
            ("65 nodes, one past a workgroup", cluster(nodes(65), bound(65)), pods()),
            ("150 nodes, three tiles of 64", cluster(nodes(150), bound(150)), pods()),
            ("no pending pods", cluster(nodes(5), bound(5)), vec![]),
        ];
        for (name, state, pending) in cases {
            for options in [GpuOptions::default(), SMALL] {
                let compared =
                    assert_column_parity(ctx, &profile(), &state, &pending, options, name);
                assert!(compared, "{name}: the update was compared with a fresh evaluation");
            }
        }
        // The Evaluator sends large updates to the device and small ones to the CPU twin: both
        // answer the same.
        let state = cluster(nodes(150), bound(150));
        let pending = pods();
        let enc = encode(&state, &pending).expect("encodes");
        let prepared = Prepared::new(&profile(), &state, &pending, &enc).expect("prepares");
        let usage = NodeUsage::encoded(&enc, &(0..150).collect::<Vec<_>>()).expect("usage");
        ctx.set_options(GpuOptions::default());
        let direct = ctx.resource_columns(&prepared, &usage).expect("GPU update");
        assert_eq!(direct, columns::evaluate_cpu(&prepared, &usage).expect("CPU update"));
    });
}

fn tiling_options() -> impl Strategy<Value = GpuOptions> {
    (prop::option::of(prop::sample::select(vec![64u32, 128])), prop::option::of(1u32..4)).prop_map(
        |(max_tile_nodes, max_chunk_classes)| GpuOptions { max_tile_nodes, max_chunk_classes },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn generated_clusters_evaluate_identically_on_the_gpu(
        s in scenarios(0..=10, 6, false),
        options in tiling_options(),
    ) {
        let Scenario { profile, state, pending } = s;
        each_binary64(|ctx| assert_parity(ctx, &profile, &state, &pending, options, "generated"));
    }

    #[test]
    fn generated_clusters_wider_than_a_tile_evaluate_identically_on_the_gpu(
        s in scenarios(65..=140, 4, false),
        options in tiling_options(),
    ) {
        let Scenario { profile, state, pending } = s;
        each_binary64(|ctx| assert_parity(ctx, &profile, &state, &pending, options, "wide"));
    }

    #[test]
    fn generated_column_updates_evaluate_identically_on_the_gpu(
        s in scenarios(1..=90, 5, false),
        options in tiling_options(),
    ) {
        let Scenario { profile, state, pending } = s;
        each_binary64(|ctx| {
            assert_column_parity(ctx, &profile, &state, &pending, options, "generated update");
        });
    }
}
