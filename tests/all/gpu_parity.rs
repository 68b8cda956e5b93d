//! The GPU matrix equals the CPU matrix bit for bit: on the demo fixture, on degenerate shapes
//! (no nodes, one node, no classes, a class nothing fits, node counts that are not a multiple of
//! the workgroup size, more nodes than one tile, more classes than one chunk) and on generated
//! clusters, with default and forced small tiles, every plugin of the default profile included;
//! and the software binary64 library computes on the device exactly as native `f64`.
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
use kplace::eval::gpu::{GpuContext, GpuOptions};
use kplace::eval::testing::{matrix_profile, round_to_units};
use kplace::eval::{Backend, Evaluator, Prepared, cpu};
use kplace::framework::profile::{PluginName, Profile};
use kplace::model::testing::{
    GI, MI, NodeBuilder, PodBuilder, affinity_term, cluster, spread_constraint,
};
use kplace::model::{ClusterState, LabelSelector, Pod, TaintEffect, UnsatisfiableAction};
use proptest::prelude::*;

/// One device for the whole test binary (tests take turns).
fn gpu() -> Option<MutexGuard<'static, GpuContext>> {
    static CTX: OnceLock<Option<Mutex<GpuContext>>> = OnceLock::new();
    let ctx = CTX.get_or_init(|| match GpuContext::new(&GpuOptions::default()) {
        Ok(ctx) => {
            eprintln!("GPU parity tests on {}", ctx.adapter_description());
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
}

fn profile() -> Profile {
    matrix_profile(&Profile::default_profile())
}

const SMALL: GpuOptions = GpuOptions { max_tile_nodes: Some(64), max_chunk_classes: Some(2) };

#[test]
fn the_demo_fixture_evaluates_identically_on_the_gpu() {
    let Some(mut ctx) = gpu() else { return };
    let cluster = demo();
    for options in [GpuOptions::default(), SMALL] {
        assert_parity(&mut ctx, &profile(), &cluster.state, &cluster.pending, options, "demo");
    }
    // The full default profile too: the plugins not in the matrix are only listed.
    let full = Profile::default_profile();
    assert_parity(
        &mut ctx,
        &full,
        &cluster.state,
        &cluster.pending,
        GpuOptions::default(),
        "demo, default profile",
    );
    let enc = encode(&cluster.state, &cluster.pending).unwrap();
    let (state, pending) = round_to_units(&cluster.state, &cluster.pending, &enc.dicts.resources);
    assert_parity(&mut ctx, &profile(), &state, &pending, SMALL, "demo rounded to its units");
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
    let Some(mut ctx) = gpu() else { return };
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
            let widened = enc
                .dicts
                .resources
                .units
                .iter()
                .any(|u| u.shift > kplace::encode::units::ResourceUnit::base(&u.name).shift);
            assert!(widened, "{name}: a unit is wider than its base");
        }
        for options in [
            GpuOptions::default(),
            SMALL,
            GpuOptions { max_tile_nodes: Some(64), max_chunk_classes: Some(1) },
        ] {
            assert_parity(&mut ctx, &profile(), &state, &pending, options, name);
        }
    }
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

/// SplitMix64: a small deterministic generator for the binary64 inputs.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Binary64 inputs: every pair of special values, then random pairs mixing raw bit patterns,
/// ratios of small integers, scaled integers and neighbours (a few ulps away) of all of these.
fn binary64_inputs(random: usize) -> Vec<(u64, u64)> {
    let special: Vec<f64> = vec![
        0.0,
        -0.0,
        f64::from_bits(1),
        f64::from_bits(0x000F_FFFF_FFFF_FFFF),
        f64::MIN_POSITIVE,
        f64::MAX,
        -f64::MAX,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1.0,
        -1.0,
        0.5,
        2.5,
        -2.5,
        0.1,
        0.68,
        3.0,
        100.0,
        4503599627370495.5,
        9.223372036854775e18,
        -9.223372036854776e18,
        1e-310,
    ];
    let mut out: Vec<(u64, u64)> = Vec::new();
    for a in &special {
        for b in &special {
            out.push((a.to_bits(), b.to_bits()));
        }
    }
    let mut state = 0x5EED_u64;
    let value = |state: &mut u64| -> u64 {
        let r = splitmix(state);
        let v = match r % 4 {
            0 => splitmix(state),
            1 => {
                let a = (splitmix(state) % 4000) as f64 - 2000.0;
                let b = (splitmix(state) % 2000 + 1) as f64;
                (a / b).to_bits()
            }
            2 => {
                let m = splitmix(state) as i32;
                let e = (splitmix(state) % 2200) as i32 - 1100;
                (f64::from(m) * 2f64.powi(e)).to_bits()
            }
            _ => special[(splitmix(state) % special.len() as u64) as usize].to_bits(),
        };
        let ulps = (splitmix(state) % 7) as i64 - 3;
        (v as i64).wrapping_add(ulps) as u64
    };
    for _ in 0..random {
        let a = value(&mut state);
        let b = value(&mut state);
        out.push((a, b));
    }
    out
}

#[test]
fn the_binary64_library_computes_on_the_gpu_exactly_as_native_f64() {
    let Some(mut ctx) = gpu() else { return };
    let inputs = binary64_inputs(6000);
    let results = ctx.f64_selftest(&inputs).expect("the self-test kernel runs");
    assert_eq!(results.len(), inputs.len());
    let same = |got: u64, want: f64| {
        (f64::from_bits(got).is_nan() && want.is_nan()) || got == want.to_bits()
    };
    let mut failures = Vec::new();
    for (&(a_bits, b_bits), r) in inputs.iter().zip(&results) {
        let (a, b) = (f64::from_bits(a_bits), f64::from_bits(b_bits));
        let want = [
            ("+", a + b),
            ("-", a - b),
            ("*", a * b),
            ("/", a / b),
            ("sqrt", a.sqrt()),
            ("round", a.round()),
            ("from_i64", a_bits as i64 as f64),
            ("from_u64", a_bits as f64),
        ];
        let got = [r[0], r[1], r[2], r[3], r[4], r[5], r[7], r[8]];
        for ((op, w), g) in want.iter().zip(got) {
            if !same(g, *w) {
                failures.push(format!("{op} {a:e} ({a_bits:#x}), {b:e} ({b_bits:#x}): {g:#x}"));
            }
        }
        if r[6] as i64 != a as i64 {
            failures.push(format!("{a:e} as i64: {}", r[6] as i64));
        }
        if (r[9] != 0) != (a < b) {
            failures.push(format!("{a:e} < {b:e}: {}", r[9]));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} results differ from native f64, e.g.:\n{}",
        failures.len(),
        inputs.len() * 10,
        failures.iter().take(20).cloned().collect::<Vec<_>>().join("\n")
    );
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
    let Some(mut ctx) = gpu() else { return };
    let cases: Vec<(&str, ClusterState, Vec<Pod>)> = vec![
        ("one node", cluster(nodes(2), bound(2)), pods()),
        ("65 nodes, one past a workgroup", cluster(nodes(65), bound(65)), pods()),
        ("150 nodes, three tiles of 64", cluster(nodes(150), bound(150)), pods()),
        ("no pending pods", cluster(nodes(5), bound(5)), vec![]),
    ];
    for (name, state, pending) in cases {
        for options in [GpuOptions::default(), SMALL] {
            let compared =
                assert_column_parity(&mut ctx, &profile(), &state, &pending, options, name);
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
        let Some(mut ctx) = gpu() else { return Ok(()) };
        let Scenario { profile, state, pending } = s;
        assert_parity(&mut ctx, &profile, &state, &pending, options, "generated");
    }

    #[test]
    fn generated_clusters_wider_than_a_tile_evaluate_identically_on_the_gpu(
        s in scenarios(65..=140, 4, false),
        options in tiling_options(),
    ) {
        let Some(mut ctx) = gpu() else { return Ok(()) };
        let Scenario { profile, state, pending } = s;
        assert_parity(&mut ctx, &profile, &state, &pending, options, "generated, wide");
    }

    #[test]
    fn generated_column_updates_evaluate_identically_on_the_gpu(
        s in scenarios(1..=90, 5, false),
        options in tiling_options(),
    ) {
        let Some(mut ctx) = gpu() else { return Ok(()) };
        let Scenario { profile, state, pending } = s;
        assert_column_parity(&mut ctx, &profile, &state, &pending, options, "generated update");
    }
}
