//! Matrix evaluation benchmarks: throughput in cells (pod class × node) per second of the CPU
//! evaluator on one thread (`cpu::evaluate`) and on every core (`cpu::evaluate_parallel`), and
//! of the GPU evaluator (`GpuContext::evaluate`), with the GPU's upload, bind-group, dispatch
//! and readback stages reported separately (`GpuContext::last_timings`).
//!
//! Inputs: the synthetic clusters of `kplace::eval::synthetic` (every class distinct, every
//! plugin of the default profile in play), at 1,000 classes × 1,000 nodes, 10,000 classes ×
//! 5,000 nodes and 1,000 classes × 100,000 nodes, and 10,000 classes × 5,000 nodes of 20 kinds
//! repeated (`cluster_of_kinds`: node pools, where the lean path merges equal nodes' columns,
//! as on `kplace gen`'s heterogeneous clusters); the time measured is one evaluation of an
//! already [`Prepared`] input (encoding and preparation are timed once and printed).
//!
//! Run with `cargo bench --bench eval` (optionally `-- <substring>` to run only the matching
//! `eval/<path>/<shape>` ids). Shapes of up to [`CRITERION_MAX_CELLS`] cells are measured by
//! criterion (10 samples); larger ones would need at least 11 evaluations of tens of seconds
//! each, so they are timed by a plain loop of `KPLACE_BENCH_RUNS` evaluations (default 3),
//! printed in the same units. After every run the summary table (mean time and cells per
//! second per path and shape, and the mean GPU stage times) is printed for BENCHMARKS.md.
//!
//! `cargo test --benches` (criterion's test mode, every benchmark run once), `-- --test`, or
//! `KPLACE_BENCH_SMALL=1` use small shapes instead, so that tests stay fast. Without a GPU
//! adapter the GPU benchmarks are skipped with a notice.
//!
//! `gpu-lean` times `GpuContext::evaluate_lean` keeping the same planes: the GPU path `plan`
//! takes, which reads back only the lean planes. The GPU's binary64 is what `GpuContext::new`
//! picks (native where the adapter has it); `KPLACE_GPU_F64=software` times the software one.
//!
//! `cpu-lean-1-thread` and `cpu-lean-all-cores` time `cpu::evaluate_lean` keeping what `plan`
//! keeps (filter words, totals, the NodeResourcesFit, BalancedAllocation and PodTopologySpread
//! normalized planes): what `plan` evaluates on the CPU, into fresh memory.
//! `cpu-lean-reused-1-thread` and `cpu-lean-reused-all-cores` time `cpu::evaluate_lean_into`
//! the arrays of an earlier evaluation of the same shape (made once, untimed, before the
//! first of them): what `plan` does from its second chunk of classes on, and what any caller
//! evaluating again pays.
//!
//! `eval/families/<shape>` times the default profile cut down to each plugin family in turn (the
//! static filters, NodeResourcesFit, BalancedAllocation, ImageLocality, PodTopologySpread,
//! InterPodAffinity) on one thread, `KPLACE_BENCH_RUNS` evaluations each, and prints the median
//! as cells per second per core.
//!
//! Every path's first result of a shape is reduced to a digest (filter words, totals, feasible
//! counts, best totals) and compared with the one-thread result's: the benchmarks fail if the
//! paths disagree.

use std::cell::RefCell;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, SamplingMode, Throughput};
use kplace::encode::encode;
use kplace::eval::gpu::{GpuContext, GpuOptions, StageTimings};
use kplace::eval::synthetic::{cluster_of, cluster_of_kinds};
use kplace::eval::testing::matrix_profile;
use kplace::eval::{LeanMatrix, Matrix, Prepared, cpu};
use kplace::framework::profile::{PluginName, Profile};

/// The `kplace` binary's allocator (`src/main.rs`), so that the evaluations here allocate
/// and fault in their output as `plan` does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Shapes above this many cells are timed by a plain loop instead of criterion.
const CRITERION_MAX_CELLS: usize = 5_000_000;

/// A benchmark shape.
#[derive(Debug, Clone, Copy)]
struct Shape {
    name: &'static str,
    classes: usize,
    nodes: usize,
    /// Distinct nodes, repeated (`synthetic::cluster_of_kinds`, node pools); 0: all distinct.
    kinds: usize,
}

impl Shape {
    fn cells(self) -> usize {
        self.classes * self.nodes
    }
}

const FULL: [Shape; 4] = [
    Shape { name: "1k_classes_x_1k_nodes", classes: 1_000, nodes: 1_000, kinds: 0 },
    Shape { name: "10k_classes_x_5k_nodes", classes: 10_000, nodes: 5_000, kinds: 0 },
    Shape { name: "1k_classes_x_100k_nodes", classes: 1_000, nodes: 100_000, kinds: 0 },
    Shape { name: "10k_classes_x_5k_nodes_of_20_kinds", classes: 10_000, nodes: 5_000, kinds: 20 },
];

const SMALL: [Shape; 3] = [
    Shape { name: "small_40_classes_x_100_nodes", classes: 40, nodes: 100, kinds: 0 },
    Shape { name: "small_7_classes_x_300_nodes", classes: 7, nodes: 300, kinds: 0 },
    Shape { name: "small_40_classes_x_100_nodes_of_6_kinds", classes: 40, nodes: 100, kinds: 6 },
];

/// The evaluation paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    CpuOneThread,
    CpuAllCores,
    /// `cpu::evaluate_lean` on one thread, keeping the planes `plan` keeps.
    CpuLeanOneThread,
    /// `cpu::evaluate_lean` on every core.
    CpuLeanAllCores,
    /// `cpu::evaluate_lean_into` an earlier evaluation's arrays, on one thread.
    CpuLeanReusedOneThread,
    /// `cpu::evaluate_lean_into` an earlier evaluation's arrays, on every core.
    CpuLeanReusedAllCores,
    Gpu,
    /// `GpuContext::evaluate_lean`: the GPU path `plan` takes, reading back the lean planes.
    GpuLean,
}

impl Path {
    fn name(self) -> &'static str {
        match self {
            Path::CpuOneThread => "cpu-1-thread",
            Path::CpuAllCores => "cpu-all-cores",
            Path::CpuLeanOneThread => "cpu-lean-1-thread",
            Path::CpuLeanAllCores => "cpu-lean-all-cores",
            Path::CpuLeanReusedOneThread => "cpu-lean-reused-1-thread",
            Path::CpuLeanReusedAllCores => "cpu-lean-reused-all-cores",
            Path::Gpu => "gpu",
            Path::GpuLean => "gpu-lean",
        }
    }
}

/// How the benchmark binary was invoked.
#[derive(Debug)]
struct Invocation {
    small: bool,
    list: bool,
    filter: Option<String>,
    runs: u32,
}

impl Invocation {
    fn from_env() -> Invocation {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let has = |flag: &str| args.iter().any(|a| a == flag);
        // As criterion decides: without `--bench` (cargo test --benches) or with `--test`,
        // every benchmark runs once as a test.
        let test_mode = has("--test") || !has("--bench");
        let small = test_mode || std::env::var_os("KPLACE_BENCH_SMALL").is_some();
        let filter = args.iter().find(|a| !a.starts_with('-')).cloned();
        let runs = std::env::var("KPLACE_BENCH_RUNS")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|&r| r > 0)
            .unwrap_or(3);
        Invocation { small, list: has("--list"), filter, runs }
    }

    fn wants(&self, id: &str) -> bool {
        self.filter.as_deref().is_none_or(|f| id.contains(f))
    }
}

/// Mean times of one path on one shape (criterion's warm-up evaluations included).
#[derive(Debug, Default, Clone)]
struct Tally {
    evaluations: u32,
    time: Duration,
    stages: StageTimings,
}

impl Tally {
    fn mean(&self) -> Duration {
        self.time / self.evaluations.max(1)
    }
}

/// The planes `plan` keeps from a lean evaluation (`batch`'s `KEPT_PLANES`).
const KEPT: [PluginName; 3] = [
    PluginName::NodeResourcesFit,
    PluginName::NodeResourcesBalancedAllocation,
    PluginName::PodTopologySpread,
];

/// A digest of a matrix: FNV-1a over its filter words, totals, feasible counts and best totals.
fn digest(m: &Matrix) -> u64 {
    digest_of(&m.filter, &m.feasible_count, &m.total, &m.best_total)
}

/// [`digest`] of the same arrays of a lean matrix.
fn digest_lean(m: &LeanMatrix) -> u64 {
    digest_of(&m.filter, &m.feasible_count, &m.total, &m.best_total)
}

fn digest_of(filter: &[u32], feasible: &[u32], total: &[i32], best: &[i32]) -> u64 {
    let words =
        filter.iter().chain(feasible).copied().chain(total.iter().chain(best).map(|&v| v as u32));
    words.fold(0xcbf2_9ce4_8422_2325u64, |h, w| (h ^ u64::from(w)).wrapping_mul(0x100_0000_01b3))
}

/// What one evaluation gave.
enum Out {
    Full(Matrix),
    Lean(LeanMatrix),
    /// The lean matrix is in [`Bench::reused`].
    Reused,
}

/// One prepared shape, its one-thread digest and the tallies of every path.
struct Bench<'a> {
    shape: Shape,
    prepared: Prepared<'a>,
    reference: RefCell<Option<u64>>,
    tallies: RefCell<Vec<(Path, Tally)>>,
    /// The arrays the reused paths evaluate into (empty until the first of them runs).
    reused: RefCell<LeanMatrix>,
}

impl Bench<'_> {
    /// Runs `path` once: the wall time of the evaluation, recorded with its GPU stages; the
    /// first result of each path is checked against the one-thread result.
    fn evaluate(&self, path: Path, gpu: Option<&RefCell<GpuContext>>) -> Duration {
        let reusing = matches!(path, Path::CpuLeanReusedOneThread | Path::CpuLeanReusedAllCores);
        if reusing && self.reused.borrow().filter.is_empty() {
            *self.reused.borrow_mut() = cpu::evaluate_lean(&self.prepared, &KEPT, 0);
        }
        let mut reused = self.reused.borrow_mut();
        let start = Instant::now();
        let p = black_box(&self.prepared);
        let m = match path {
            Path::CpuOneThread => Out::Full(cpu::evaluate(p)),
            Path::CpuAllCores => Out::Full(cpu::evaluate_parallel(p, 0)),
            Path::CpuLeanOneThread => Out::Lean(cpu::evaluate_lean(p, &KEPT, 1)),
            Path::CpuLeanAllCores => Out::Lean(cpu::evaluate_lean(p, &KEPT, 0)),
            Path::CpuLeanReusedOneThread | Path::CpuLeanReusedAllCores => {
                let threads = usize::from(path == Path::CpuLeanReusedOneThread);
                cpu::evaluate_lean_into(p, &KEPT, threads, &mut reused);
                Out::Reused
            }
            Path::Gpu => {
                let ctx = gpu.expect("the GPU path runs with a context");
                Out::Full(ctx.borrow_mut().evaluate(p).expect("the GPU evaluates"))
            }
            Path::GpuLean => {
                let ctx = gpu.expect("the GPU path runs with a context");
                Out::Lean(ctx.borrow_mut().evaluate_lean(p, &KEPT).expect("the GPU evaluates"))
            }
        };
        let elapsed = start.elapsed();
        let stages = gpu.map(|ctx| ctx.borrow().last_timings()).unwrap_or_default();
        let mut tallies = self.tallies.borrow_mut();
        let first = !tallies.iter().any(|(p, _)| *p == path);
        if first {
            tallies.push((path, Tally::default()));
        }
        if let Some((_, t)) = tallies.iter_mut().find(|(p, _)| *p == path) {
            t.evaluations += 1;
            t.time += elapsed;
            t.stages.upload += stages.upload;
            t.stages.bind += stages.bind;
            t.stages.dispatch += stages.dispatch;
            t.stages.readback += stages.readback;
        }
        drop(tallies);
        if first {
            let d = match &m {
                Out::Full(m) => digest(m),
                Out::Lean(lean) => digest_lean(lean),
                Out::Reused => digest_lean(&reused),
            };
            self.check(path, d);
        }
        drop(m);
        elapsed
    }

    fn check(&self, path: Path, d: u64) {
        let mut reference = self.reference.borrow_mut();
        match *reference {
            None if path == Path::CpuOneThread => *reference = Some(d),
            None => {
                // The one-thread path was filtered out: the all-cores evaluator gives the same
                // matrix (tests/all/cpu_parallel.rs) in less time.
                drop(reference);
                let want = digest(&cpu::evaluate_parallel(&self.prepared, 0));
                *self.reference.borrow_mut() = Some(want);
                assert_eq!(
                    d,
                    want,
                    "{} differs from cpu-1-thread on {}",
                    path.name(),
                    self.shape.name
                );
            }
            Some(want) => {
                assert_eq!(
                    d,
                    want,
                    "{} differs from cpu-1-thread on {}",
                    path.name(),
                    self.shape.name
                )
            }
        }
    }
}

fn profile() -> Profile {
    matrix_profile(&Profile::default_profile())
}

/// The plugin families of the per-family breakdown: each is the default profile cut down to
/// the family's plugins (at every extension point), so its time is that family's share.
const FAMILIES: [(&str, &[PluginName]); 6] = [
    (
        "static filters (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity, NodePorts)",
        &[
            PluginName::NodeUnschedulable,
            PluginName::NodeName,
            PluginName::TaintToleration,
            PluginName::NodeAffinity,
            PluginName::NodePorts,
        ],
    ),
    ("NodeResourcesFit (filter and score)", &[PluginName::NodeResourcesFit]),
    ("NodeResourcesBalancedAllocation", &[PluginName::NodeResourcesBalancedAllocation]),
    ("ImageLocality", &[PluginName::ImageLocality]),
    ("PodTopologySpread", &[PluginName::PodTopologySpread]),
    ("InterPodAffinity", &[PluginName::InterPodAffinity]),
];

/// The default profile with only `keep` at PreFilter, Filter, PreScore and Score.
fn family_profile(keep: &[PluginName]) -> Profile {
    let mut p = profile();
    p.plugins.pre_filter.retain(|x| keep.contains(x));
    p.plugins.filter.retain(|x| keep.contains(x));
    p.plugins.pre_score.retain(|x| keep.contains(x));
    p.plugins.score.retain(|(x, _)| keep.contains(x));
    p
}

/// The per-family breakdown on one shape: the one-thread time of each family's profile
/// (`KPLACE_BENCH_RUNS` evaluations, the median), as cells per second per core.
fn families(
    shape: Shape,
    s: &kplace::eval::synthetic::Synthetic,
    enc: &kplace::encode::Encoded,
    runs: u32,
) -> Vec<(String, Duration)> {
    let mut out = Vec::new();
    for (name, keep) in FAMILIES {
        let profile = family_profile(keep);
        let prepared =
            Prepared::new(&profile, &s.state, &s.pending, enc).expect("the profile prepares");
        let mut times: Vec<Duration> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                black_box(cpu::evaluate(black_box(&prepared)));
                start.elapsed()
            })
            .collect();
        times.sort();
        let median = times[times.len() / 2];
        println!(
            "eval/families/{}/{}: median {median:.3?} of {runs}, {:.3} Melem/s per core",
            name.split(' ').next().unwrap_or(name),
            shape.name,
            shape.cells() as f64 / median.as_secs_f64() / 1e6
        );
        out.push((name.to_string(), median));
    }
    out
}

fn main() {
    let inv = Invocation::from_env();
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5))
        .configure_from_args();
    let gpu = match GpuContext::new(&GpuOptions::default()) {
        Ok(ctx) => {
            println!(
                "GPU adapter: {}, binary64 {}",
                ctx.adapter_description(),
                ctx.binary64().name()
            );
            Some(RefCell::new(ctx))
        }
        Err(e) => {
            println!("notice: GPU benchmarks skipped: {e}");
            None
        }
    };
    println!("CPU threads (all cores): {}", rayon::current_num_threads());
    let profile = profile();
    let shapes: &[Shape] = if inv.small { &SMALL } else { &FULL };
    let mut summary: Vec<(Shape, Vec<(Path, Tally)>)> = Vec::new();
    let mut breakdown: Vec<(Shape, Vec<(String, Duration)>)> = Vec::new();
    for &shape in shapes {
        let ids = [
            Path::CpuOneThread,
            Path::CpuAllCores,
            Path::CpuLeanOneThread,
            Path::CpuLeanAllCores,
            Path::CpuLeanReusedOneThread,
            Path::CpuLeanReusedAllCores,
            Path::Gpu,
            Path::GpuLean,
        ]
        .map(|p| (p, format!("eval/{}/{}", p.name(), shape.name)));
        let family_id = format!("eval/families/{}", shape.name);
        if inv.list || !ids.iter().any(|(_, id)| inv.wants(id)) && !inv.wants(&family_id) {
            continue;
        }
        let start = Instant::now();
        let s = match shape.kinds {
            0 => cluster_of(shape.classes, shape.nodes),
            kinds => cluster_of_kinds(shape.classes, shape.nodes, kinds),
        };
        let built = start.elapsed();
        let start = Instant::now();
        let enc = encode(&s.state, &s.pending).expect("the synthetic cluster encodes");
        let encoded = start.elapsed();
        let start = Instant::now();
        let prepared =
            Prepared::new(&profile, &s.state, &s.pending, &enc).expect("the profile prepares");
        let prepared_in = start.elapsed();
        assert_eq!(prepared.num_classes, shape.classes, "one class per pending pod");
        println!(
            "{}: {} cells; built in {built:.2?}, encoded in {encoded:.2?}, prepared in \
             {prepared_in:.2?}",
            shape.name,
            shape.cells()
        );
        if inv.wants(&family_id) {
            breakdown.push((shape, families(shape, &s, &enc, inv.runs)));
        }
        let bench = Bench {
            shape,
            prepared,
            reference: RefCell::new(None),
            tallies: RefCell::new(Vec::new()),
            reused: RefCell::new(LeanMatrix::default()),
        };
        for (path, id) in &ids {
            if !inv.wants(id) {
                continue;
            }
            let ctx = match (path, &gpu) {
                (Path::Gpu | Path::GpuLean, None) => continue,
                (Path::Gpu | Path::GpuLean, Some(ctx)) => Some(ctx),
                _ => None,
            };
            if shape.cells() <= CRITERION_MAX_CELLS {
                let mut group = criterion.benchmark_group(format!("eval/{}", path.name()));
                group.sample_size(10).sampling_mode(SamplingMode::Flat);
                group.throughput(Throughput::Elements(shape.cells() as u64));
                group.bench_function(BenchmarkId::from_parameter(shape.name), |b| {
                    b.iter_custom(|iters| (0..iters).map(|_| bench.evaluate(*path, ctx)).sum())
                });
                group.finish();
            } else {
                let times: Vec<Duration> =
                    (0..inv.runs).map(|_| bench.evaluate(*path, ctx)).collect();
                let mean = times.iter().sum::<Duration>() / inv.runs;
                let min = times.iter().min().copied().unwrap_or_default();
                let max = times.iter().max().copied().unwrap_or_default();
                println!(
                    "{id}\n                        time:   [{min:.3?} {mean:.3?} {max:.3?}] \
                     (min mean max of {} runs, plain loop)\n                        thrpt:  \
                     {:.3} Melem/s",
                    inv.runs,
                    shape.cells() as f64 / mean.as_secs_f64() / 1e6
                );
            }
        }
        summary.push((shape, bench.tallies.into_inner()));
    }
    criterion.final_summary();
    print_summary(&summary);
    if !breakdown.is_empty() {
        println!("\n| family (one thread) | shape | median time (ms) | cells/s per core |");
        println!("|---|---|---:|---:|");
        for (shape, rows) in &breakdown {
            for (name, t) in rows {
                println!(
                    "| {name} | {} | {} | {:.3e} |",
                    shape.name,
                    ms(*t),
                    shape.cells() as f64 / t.as_secs_f64().max(1e-12)
                );
            }
        }
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1e3)
}

/// The markdown tables for BENCHMARKS.md.
fn print_summary(summary: &[(Shape, Vec<(Path, Tally)>)]) {
    if summary.iter().all(|(_, t)| t.is_empty()) {
        return;
    }
    println!("\n| path | shape | cells | evaluations | mean time (ms) | cells/s |");
    println!("|---|---|---:|---:|---:|---:|");
    for (shape, tallies) in summary {
        for (path, t) in tallies {
            let mean = t.mean();
            println!(
                "| {} | {} | {} | {} | {} | {:.3e} |",
                path.name(),
                shape.name,
                shape.cells(),
                t.evaluations,
                ms(mean),
                shape.cells() as f64 / mean.as_secs_f64().max(1e-12)
            );
        }
    }
    println!(
        "\n| GPU stages, mean per evaluation (ms) | upload | bind | dispatch | readback | total |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (shape, tallies) in summary {
        for (path, t) in tallies.iter().filter(|(p, _)| matches!(p, Path::Gpu | Path::GpuLean)) {
            let n = t.evaluations.max(1);
            let s = t.stages;
            println!(
                "| {} ({}) | {} | {} | {} | {} | {} |",
                shape.name,
                path.name(),
                ms(s.upload / n),
                ms(s.bind / n),
                ms(s.dispatch / n),
                ms(s.readback / n),
                ms(t.mean())
            );
        }
    }
}
