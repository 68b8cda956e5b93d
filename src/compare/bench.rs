//! `kplace bench`: named workloads at given sizes through `baseline` and `plan`, repeated, with
//! median decision times, pods per second, the ratio plan/baseline and the quality
//! differences, on a described machine.
//!
//! Input: [`crate::r#gen::GenParams`] per case (a workload at a node count, with its pod
//! counts from [`density`]). Output: the document types ([`BenchReport`], [`BenchCase`],
//! [`BenchRun`]) and the pieces the command assembles them from: [`generate_cluster`] builds a
//! case's cluster in memory (the generator's objects go straight into a
//! [`Snapshot`](crate::snapshot::Snapshot) as JSON text, never a file), [`median`],
//! [`MachineInfo::detect`]. The runs themselves are made by the command line (`cli/bench.rs`),
//! through the same `run_plan` as `kplace compare`.
//!
//! Timing: *decision* time is `encode + evaluate + solve` of the plan's
//! `summary.timings_ms`, as in `kplace compare` and BENCHMARKS.md; generating, loading and
//! building the model are reported separately, once per case.
//!
//! No upstream counterpart; the default densities follow scheduler_perf's cases
//! (`test/integration/scheduler_perf/*/performance-config.yaml`, v1.35-era master) and the
//! sizes BENCHMARKS.md measured.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::r#gen::{GenError, GenParams, Workload, generate};
use crate::progress::Progress;
use crate::snapshot::{self, BuildOptions, Cluster, Snapshot, SnapshotError};

pub use super::upstream::UpstreamRun;

/// Version of the [`BenchReport`] document; bumped when a field changes meaning or is removed.
pub const SCHEMA_VERSION: u32 = 1;

/// The workloads `kplace bench` runs without `--workload` (issue #6).
pub const DEFAULT_WORKLOADS: [Workload; 4] = [
    Workload::SchedulingBasic,
    Workload::SchedulingPodAntiAffinity,
    Workload::TopologySpreading,
    Workload::FragmentationMix,
];

/// The node count `kplace bench` uses without `--nodes`.
pub const DEFAULT_NODES: usize = 500;

/// Pods per node of a workload: all pods, and the part of them already bound.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Density {
    /// Pods (bound and pending) per node.
    pub pods_per_node: f64,
    /// Bound pods (`--init-pods`) per node.
    pub init_per_node: f64,
}

/// The default density of a workload: scheduler_perf's ratios for its cases (SchedulingBasic
/// 5,000 nodes: 1,000 init + 10,000 measured pods; SchedulingPodAntiAffinity: 1,000 + 1,000;
/// TopologySpreading: 5,000 + 2,000; SchedulingPodAffinity: 5,000 + 5,000), the fragmentation mix as BENCHMARKS.md ran it (2 bound
/// and 10 pending per node), and 0.2 + 2 per node otherwise.
pub fn density(workload: Workload) -> Density {
    let (pods_per_node, init_per_node) = match workload {
        Workload::SchedulingPodAntiAffinity => (0.4, 0.2),
        Workload::TopologySpreading | Workload::PreferredTopologySpreading => (1.4, 1.0),
        Workload::SchedulingPodAffinity => (2.0, 1.0),
        Workload::FragmentationMix => (12.0, 2.0),
        _ => (2.2, 0.2),
    };
    Density { pods_per_node, init_per_node }
}

/// The pod counts of a case: `pods` if given, else `pods_per_node × nodes` (default: the
/// workload's [`density`]); init pods keep the workload's bound fraction. Returns
/// `(pods, init_pods)`.
pub fn pod_counts(
    workload: Workload,
    nodes: usize,
    pods_per_node: Option<f64>,
    pods: Option<usize>,
) -> (usize, usize) {
    let d = density(workload);
    let total = match (pods, pods_per_node) {
        (Some(p), _) => p,
        (None, Some(f)) => (f.max(0.0) * nodes as f64).round() as usize,
        (None, None) => (d.pods_per_node * nodes as f64).round() as usize,
    };
    let fraction = if d.pods_per_node > 0.0 { d.init_per_node / d.pods_per_node } else { 0.0 };
    let init = ((total as f64) * fraction).round() as usize;
    (total, init.min(total))
}

/// Why a case's cluster could not be made.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// The generator refused the parameters.
    #[error(transparent)]
    Gen(#[from] GenError),
    /// A generated object did not load or build (an internal error of the generator).
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// A generated object did not serialize (an internal error).
    #[error("serializing a generated object: {0}")]
    Json(#[from] serde_json::Error),
}

/// A case's cluster, built in memory, with the time each step took.
#[derive(Debug)]
pub struct Generated {
    /// The model.
    pub cluster: Cluster,
    /// Milliseconds generating the objects and reading them into a snapshot.
    pub load_ms: f64,
    /// Milliseconds building the model.
    pub build_ms: f64,
}

/// Generates the case's objects and reads them into a snapshot in memory (each object as
/// JSON text through [`Snapshot::add_json`], exactly as a file would be read, without the
/// file), then builds the model.
pub fn generate_cluster(
    params: &GenParams,
    options: &BuildOptions,
    progress: &Progress,
) -> Result<Generated, BenchError> {
    let start = Instant::now();
    let name = format!("<generated {} {} nodes>", params.workload, params.nodes);
    let source = Path::new(&name);
    let mut snap = Snapshot::new();
    let task =
        progress.bar(format!("gen: {}", params.workload), (params.nodes + params.pods) as u64);
    let mut text = String::with_capacity(4096);
    for (i, object) in generate(params)?.enumerate() {
        text.clear();
        text.push_str(&serde_json::to_string(&object)?);
        snap.add_json(source, &text)?;
        if i % 1024 == 1023 {
            task.set_position(i as u64);
        }
    }
    task.finish();
    let load_ms = start.elapsed().as_secs_f64() * 1000.0;
    let start = Instant::now();
    let task = progress.spinner("building the model");
    let cluster = snapshot::build(&snap, options)?;
    task.finish();
    Ok(Generated { cluster, load_ms, build_ms: start.elapsed().as_secs_f64() * 1000.0 })
}

/// The median (mean of the middle two for an even count; 0 for none). NaNs sort last.
pub fn median(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 { v[m] } else { (v[m - 1] + v[m]) / 2.0 }
}

/// The machine the figures were taken on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MachineInfo {
    /// `model name` of the first processor in `/proc/cpuinfo` (empty when unknown).
    pub cpu_model: String,
    /// Logical cores available to the process.
    pub cores: usize,
    /// `MemTotal` of `/proc/meminfo`, in bytes (0 when unknown).
    pub memory_bytes: u64,
    /// `std::env::consts::OS`/`ARCH`.
    pub os: String,
    /// The kplace version.
    pub kplace_version: String,
    /// Whether this is a debug build (timings of debug builds are not comparable).
    pub debug_build: bool,
}

impl MachineInfo {
    /// Reads the machine's description (Linux `/proc`; other systems leave the model and
    /// memory empty).
    pub fn detect() -> MachineInfo {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        MachineInfo {
            cpu_model: cpu_model(&cpuinfo),
            cores: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
            memory_bytes: mem_total(&meminfo),
            os: format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
            kplace_version: env!("CARGO_PKG_VERSION").to_string(),
            debug_build: cfg!(debug_assertions),
        }
    }
}

/// The first `model name` value of a `/proc/cpuinfo` text.
fn cpu_model(cpuinfo: &str) -> String {
    cpuinfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == "model name").then(|| v.trim().to_string())
        })
        .unwrap_or_default()
}

/// `MemTotal` of a `/proc/meminfo` text, in bytes.
fn mem_total(meminfo: &str) -> u64 {
    meminfo
        .lines()
        .find_map(|l| {
            let rest = l.strip_prefix("MemTotal:")?;
            let kb: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
            Some(kb * 1024)
        })
        .unwrap_or(0)
}

/// One command (`baseline` or `plan`) run `repeat` times on one case.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BenchRun {
    /// `baseline` or `plan`.
    pub command: String,
    /// Where the evaluation ran (`cpu`, or the GPU adapter).
    pub backend: String,
    /// `summary.algorithm` of the first run.
    pub algorithm: String,
    /// Decision time of each run, in milliseconds.
    pub decision_ms: Vec<f64>,
    /// Their median.
    pub decision_ms_median: f64,
    /// Median wall time of the call (decision plus summaries).
    pub wall_ms_median: f64,
    /// Pending pods / median decision time.
    pub pods_per_second: f64,
    /// Pods placed (first run).
    pub placed: usize,
    /// Pods placed by priority (first run).
    pub placed_by_priority: BTreeMap<i32, usize>,
    /// Pods left unschedulable (first run).
    pub unschedulable: usize,
    /// Evictions (first run).
    pub evictions: usize,
    /// Nodes with a pod after the plan (first run).
    pub nodes_used: usize,
    /// Whether every run produced the same placements, evictions and unschedulable pods.
    pub deterministic: bool,
    /// Violations `kplace check` found in the first run's plan (`--check` only).
    pub violations: Option<usize>,
}

/// `plan − baseline` for the quality figures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct QualityDelta {
    /// Pods placed.
    pub placed: i64,
    /// Pods placed, per priority.
    pub placed_by_priority: BTreeMap<i32, i64>,
    /// Evictions.
    pub evictions: i64,
    /// Nodes used.
    pub nodes_used: i64,
}

impl QualityDelta {
    /// `plan − baseline`.
    pub fn between(baseline: &BenchRun, plan: &BenchRun) -> QualityDelta {
        let mut by_priority: BTreeMap<i32, i64> = BTreeMap::new();
        for (p, n) in &plan.placed_by_priority {
            *by_priority.entry(*p).or_insert(0) += *n as i64;
        }
        for (p, n) in &baseline.placed_by_priority {
            *by_priority.entry(*p).or_insert(0) -= *n as i64;
        }
        by_priority.retain(|_, d| *d != 0);
        QualityDelta {
            placed: plan.placed as i64 - baseline.placed as i64,
            placed_by_priority: by_priority,
            evictions: plan.evictions as i64 - baseline.evictions as i64,
            nodes_used: plan.nodes_used as i64 - baseline.nodes_used as i64,
        }
    }
}

/// One workload at one size.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BenchCase {
    /// The workload name (as `kplace gen --list` prints it).
    pub workload: String,
    /// Nodes.
    pub nodes: usize,
    /// Pods generated (bound and pending).
    pub pods: usize,
    /// `--init-pods` asked of the generator.
    pub init_pods: usize,
    /// Pods bound in the built cluster.
    pub bound_pods: usize,
    /// Pending pods: the batch decided.
    pub pending_pods: usize,
    /// Generating and reading the objects (in memory), ms.
    pub load_ms: f64,
    /// Building the model, ms.
    pub build_ms: f64,
    /// The sequential default scheduler (CPU: the framework filters every node it visits).
    pub baseline: BenchRun,
    /// The sequential default scheduler with its static filters evaluated on the GPU
    /// (`baseline --backend gpu`), when it could run.
    pub baseline_gpu: Option<BenchRun>,
    /// `plan` with CPU evaluation.
    pub plan_cpu: BenchRun,
    /// `plan` with GPU evaluation, when it could run.
    pub plan_gpu: Option<BenchRun>,
    /// Why there is no GPU run, when there is none.
    pub gpu_note: Option<String>,
    /// Median decision time of `plan_cpu` / that of `baseline` (0 when baseline took 0).
    pub ratio_cpu: f64,
    /// The same for `plan_gpu`.
    pub ratio_gpu: Option<f64>,
    /// `plan_cpu − baseline` for the quality figures.
    pub quality_cpu: QualityDelta,
    /// The external scheduler of `--upstream`, on the same snapshot (written to a file).
    pub upstream: Option<UpstreamRun>,
    /// Why the external scheduler gave no time, when it was asked for and failed.
    pub upstream_error: Option<String>,
    /// Its median `wall_ms` / `baseline`'s median decision time: how many times faster
    /// `baseline` is (0 when baseline took 0).
    pub upstream_over_baseline: Option<f64>,
}

/// The document `kplace bench -o json` prints.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BenchReport {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The machine.
    pub machine: MachineInfo,
    /// The GPU adapter found (`--backend auto|gpu`), if any.
    pub adapter: Option<String>,
    /// `--backend` as given.
    pub backend: String,
    /// `--solver` as given.
    pub solver: String,
    /// `--objective` of `plan`.
    pub objective: String,
    /// Whether `plan` may return the sequential plan when it ranks higher
    /// (`--ensure-baseline`).
    pub ensure_baseline: bool,
    /// Runs per command and case.
    pub repeat: usize,
    /// Seed of the generator and of both schedulers.
    pub seed: u64,
    /// One entry per workload and node count, in the order given.
    pub cases: Vec<BenchCase>,
    /// Remarks (e.g. a debug build, a flag not wired yet).
    pub notes: Vec<String>,
}

/// `a / b`, or 0 when `b` is 0.
pub fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_an_odd_count_is_the_middle_value() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
    }

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn default_pod_counts_follow_the_workload_density() {
        // SchedulingBasic: 2.2 pods per node, 0.2 of them bound.
        assert_eq!(pod_counts(Workload::SchedulingBasic, 500, None, None), (1100, 100));
        // Fragmentation mix: 12 per node, 2 bound.
        assert_eq!(pod_counts(Workload::FragmentationMix, 500, None, None), (6000, 1000));
        // SchedulingPodAffinity: scheduler_perf's 5,000 bound and 5,000 measured at 5,000 nodes.
        assert_eq!(pod_counts(Workload::SchedulingPodAffinity, 5000, None, None), (10000, 5000));
        // --pods overrides and keeps the bound fraction.
        assert_eq!(pod_counts(Workload::SchedulingBasic, 500, Some(9.0), Some(220)), (220, 20));
        // --pods-per-node scales with the node count.
        assert_eq!(pod_counts(Workload::TopologySpreading, 10, Some(7.0), None), (70, 50));
    }

    #[test]
    fn the_cpu_model_is_read_from_proc_cpuinfo() {
        let text = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n";
        assert_eq!(cpu_model(text), "AMD EPYC 7B13");
        assert_eq!(cpu_model(""), "");
        assert_eq!(mem_total("MemTotal:       24589000 kB\n"), 24_589_000 * 1024);
    }

    #[test]
    fn a_generated_cluster_is_built_in_memory_with_every_pod() {
        let params = GenParams {
            workload: Workload::SchedulingBasic,
            nodes: 5,
            pods: 12,
            init_pods: 2,
            seed: 1,
        };
        let g = generate_cluster(&params, &BuildOptions::default(), &Progress::hidden())
            .expect("generated snapshots build");
        assert_eq!(g.cluster.state.nodes.len(), 5);
        let bound: usize = g.cluster.state.nodes.iter().map(|n| n.pods.len()).sum();
        assert_eq!(bound, 2);
        assert_eq!(g.cluster.pending.len(), 10);
    }

    #[test]
    fn quality_deltas_are_plan_minus_baseline() {
        let b = BenchRun {
            placed: 10,
            placed_by_priority: [(0, 8), (10, 2)].into(),
            nodes_used: 4,
            ..Default::default()
        };
        let p = BenchRun {
            placed: 11,
            placed_by_priority: [(0, 9), (10, 2)].into(),
            nodes_used: 3,
            ..Default::default()
        };
        let d = QualityDelta::between(&b, &p);
        assert_eq!(d.placed, 1);
        assert_eq!(d.nodes_used, -1);
        assert_eq!(d.placed_by_priority, [(0, 1)].into());
    }
}
