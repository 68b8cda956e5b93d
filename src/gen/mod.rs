//! Synthetic cluster snapshots (`kplace gen`): nodes, bound and pending pods and their
//! companions (Namespaces, PriorityClasses, PodDisruptionBudgets, PodGroups) written as a
//! multi-document YAML stream that [`crate::snapshot::load`] reads like any `kubectl` output.
//!
//! Input: [`GenParams`] (a [`Workload`], node and pod counts, how many pods are already bound,
//! a seed). Output: a [`Generator`], an iterator over the objects as `serde_json::Value`, or
//! [`write_yaml`], which writes them to any `io::Write` one document at a time.
//!
//! The stream never exists whole: the generator keeps O(nodes) state (what is left on each
//! node, for binding the `--init-pods` batch where it fits) plus the unit being written (one
//! pod, or one gang with its PodGroup). A million pods need no more memory than ten.
//! Output is a pure function of the parameters: the same seed gives the same bytes.
//!
//! Workloads mirror kube-scheduler's scheduler_perf test cases (upstream
//! `test/integration/scheduler_perf/{misc,affinity,topology_spreading}/performance-config.yaml`
//! and `test/integration/scheduler_perf/templates/*.yaml`, read at v1.35-era master): their
//! node template (4 CPU, 32Gi, 110 pods), pod templates, namespaces (`namespace-<opIndex>`, or
//! `sched-0`/`sched-1`) and node labels (`labelNodePrepareStrategy`, round-robin). scheduler_perf
//! nodes carry no labels of their own; generated nodes add the kubelet's standard labels
//! (`kubernetes.io/hostname`, os, arch) so that hostname-keyed terms mean what they mean on a
//! real cluster. kplace adds four families of its own: `fragmentation-mix`, `ml-batch`,
//! `mixed-priority`, `deployments` and `heterogeneous`. `kplace gen --list` describes each
//! ([`Workload::info`]).
//!
//! Owners: as on a real cluster, the pods of kplace's own families carry their controller in
//! `metadata.ownerReferences` (`controller: true`, `blockOwnerDeletion: true`): a Deployment's
//! pods its ReplicaSet `<app>-<pod-template-hash>`, gang workers their job (Kubeflow
//! PyTorchJob or Volcano Job), each owner with a uid derived from its name
//! ([`objects::owner_uid`]). `deployments` and `fragmentation-mix` also write each service's
//! Service and ReplicaSet (the selectors of upstream's default spreading); the other owners
//! are not written. scheduler_perf's pods stay
//! bare, as its `createPods` op creates them. So `kplace rebalance`, which moves only pods a
//! controller replaces, has something to move on a generated cluster.

mod deployments;
mod eks;
mod engine;
mod fragmentation;
mod heterogeneous;
mod mixed_priority;
mod ml_batch;
pub mod objects;
mod perf;
pub mod yaml;

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::str::FromStr;

pub use engine::{Generator, MAX_PROBES};

use crate::progress::Progress;

/// The largest node count accepted (node IPs are drawn from a /10 without repeats).
pub const MAX_NODES: usize = 1 << 22;

/// A workload family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Workload {
    /// scheduler_perf `SchedulingBasic`.
    SchedulingBasic,
    /// scheduler_perf `SchedulingPodAntiAffinity`.
    SchedulingPodAntiAffinity,
    /// scheduler_perf `SchedulingPodAffinity`.
    SchedulingPodAffinity,
    /// scheduler_perf `SchedulingNodeAffinity`.
    SchedulingNodeAffinity,
    /// scheduler_perf `TopologySpreading`.
    TopologySpreading,
    /// scheduler_perf `PreferredTopologySpreading`.
    PreferredTopologySpreading,
    /// scheduler_perf `PreemptionBasic`.
    PreemptionBasic,
    /// kplace: heterogeneous nodes and requests, fragmentation-prone.
    FragmentationMix,
    /// kplace: GPU gangs among CPU pods.
    MlBatch,
    /// kplace: priority classes, preemption and PodDisruptionBudgets.
    MixedPriority,
    /// kplace: Deployments (ReplicaSets and Services) with mixed spread and affinity.
    Deployments,
    /// kplace: every pending pod a scheduling class of its own.
    Heterogeneous,
}

/// What `kplace gen --list` says about a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct WorkloadInfo {
    /// The name `--workload` takes.
    pub name: &'static str,
    /// What it mirrors.
    pub mirrors: &'static str,
    /// The nodes.
    pub nodes: &'static str,
    /// The pods: the `--init-pods` batch (bound) and the rest (pending).
    pub pods: &'static str,
    /// How `--nodes`, `--pods`, `--init-pods` and `--seed` shape it.
    pub knobs: &'static str,
}

impl Workload {
    /// Every workload, in `--list` order.
    pub const ALL: [Workload; 12] = [
        Workload::SchedulingBasic,
        Workload::SchedulingPodAntiAffinity,
        Workload::SchedulingPodAffinity,
        Workload::SchedulingNodeAffinity,
        Workload::TopologySpreading,
        Workload::PreferredTopologySpreading,
        Workload::PreemptionBasic,
        Workload::FragmentationMix,
        Workload::MlBatch,
        Workload::MixedPriority,
        Workload::Deployments,
        Workload::Heterogeneous,
    ];

    /// The name `--workload` takes.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The description `--list` prints.
    pub fn info(self) -> WorkloadInfo {
        match self {
            Workload::SchedulingBasic
            | Workload::SchedulingPodAntiAffinity
            | Workload::SchedulingPodAffinity
            | Workload::SchedulingNodeAffinity
            | Workload::TopologySpreading
            | Workload::PreferredTopologySpreading
            | Workload::PreemptionBasic => perf::info(self),
            Workload::FragmentationMix => fragmentation::INFO,
            Workload::MlBatch => ml_batch::INFO,
            Workload::MixedPriority => mixed_priority::INFO,
            Workload::Deployments => deployments::INFO,
            Workload::Heterogeneous => heterogeneous::INFO,
        }
    }

    fn family(self, params: &GenParams) -> Box<dyn engine::Family> {
        match self {
            Workload::FragmentationMix => Box::new(fragmentation::Fragmentation::new(params)),
            Workload::MlBatch => Box::new(ml_batch::MlBatch::new(params)),
            Workload::MixedPriority => Box::new(mixed_priority::MixedPriority::new(params)),
            Workload::Deployments => Box::new(deployments::Deployments::new(params)),
            Workload::Heterogeneous => Box::new(heterogeneous::Heterogeneous::new(params)),
            perf_kind => Box::new(perf::Perf::new(perf_kind, params)),
        }
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Workload {
    type Err = GenError;

    /// A workload by name; case and `-`/`_` do not matter (`scheduling-basic` works).
    fn from_str(s: &str) -> Result<Workload, GenError> {
        let norm = |x: &str| x.chars().filter(|c| *c != '-' && *c != '_').collect::<String>();
        let wanted = norm(s).to_ascii_lowercase();
        Workload::ALL
            .into_iter()
            .find(|w| norm(w.name()).to_ascii_lowercase() == wanted)
            .ok_or_else(|| GenError::UnknownWorkload { name: s.to_string() })
    }
}

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenParams {
    /// The workload family.
    pub workload: Workload,
    /// Number of nodes.
    pub nodes: usize,
    /// Number of pods in all.
    pub pods: usize,
    /// How many of them are already bound (scheduler_perf's `initPods`); the rest are pending.
    pub init_pods: usize,
    /// Seed of the random stream (ChaCha8).
    pub seed: u64,
}

/// Why generation could not start or finish.
#[derive(Debug, thiserror::Error)]
pub enum GenError {
    /// `--workload` names no workload.
    #[error(
        "unknown workload {name:?} (known: {})",
        Workload::ALL.iter().map(|w| w.name()).collect::<Vec<_>>().join(", ")
    )]
    UnknownWorkload {
        /// The name given.
        name: String,
    },
    /// More init pods than pods.
    #[error("--init-pods {init_pods} is more than --pods {pods}")]
    InitPodsExceedPods {
        /// `--init-pods`.
        init_pods: usize,
        /// `--pods`.
        pods: usize,
    },
    /// Too many nodes.
    #[error("--nodes {nodes} is more than the {max} kplace can generate")]
    TooManyNodes {
        /// `--nodes`.
        nodes: usize,
        /// [`MAX_NODES`].
        max: usize,
    },
    /// Writing failed.
    #[error("writing the snapshot: {source}")]
    Io {
        /// The I/O error.
        #[from]
        source: std::io::Error,
    },
}

/// Counts of what was generated.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct GenSummary {
    /// Nodes.
    pub nodes: usize,
    /// Pods bound to a node.
    pub bound_pods: usize,
    /// Pods without a node.
    pub pending_pods: usize,
    /// Pods of the `--init-pods` batch that fit no node (they are among `pending_pods`).
    pub unplaced_init_pods: usize,
    /// Other objects by kind.
    pub other_objects: BTreeMap<String, usize>,
    /// Bytes written ([`write_yaml`] only).
    pub bytes: u64,
}

/// Checks the parameters and returns the object stream.
pub fn generate(params: &GenParams) -> Result<Generator, GenError> {
    if params.init_pods > params.pods {
        return Err(GenError::InitPodsExceedPods {
            init_pods: params.init_pods,
            pods: params.pods,
        });
    }
    if params.nodes > MAX_NODES {
        return Err(GenError::TooManyNodes { nodes: params.nodes, max: MAX_NODES });
    }
    Ok(Generator::new(*params, params.workload.family(params)))
}

/// Generates the snapshot and writes it to `out` as a YAML stream, each object a document
/// opened by `---`. `out` should be buffered; it is flushed at the end.
pub fn write_yaml<W: Write>(params: &GenParams, out: W) -> Result<GenSummary, GenError> {
    write_yaml_with_progress(params, out, &Progress::hidden())
}

/// [`write_yaml`], reporting nodes and pods written as steps of a `progress` bar.
pub fn write_yaml_with_progress<W: Write>(
    params: &GenParams,
    out: W,
    progress: &Progress,
) -> Result<GenSummary, GenError> {
    write_with_progress(params, out, Format::Yaml, progress)
}

/// How [`write_with_progress`] writes the snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A YAML stream, each object a document opened by `---`.
    Yaml,
    /// One JSON `List` of every object, as `kubectl get -o json` prints several kinds.
    JsonList,
}

impl Format {
    /// The format a file name asks for: `.json` a JSON List, anything else YAML.
    pub fn for_path(path: &std::path::Path) -> Format {
        let json = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"));
        if json { Format::JsonList } else { Format::Yaml }
    }
}

/// Generates the snapshot and writes it to `out` in `format`, reporting nodes and pods written
/// as steps of a `progress` bar. `out` should be buffered; it is flushed at the end.
pub fn write_with_progress<W: Write>(
    params: &GenParams,
    mut out: W,
    format: Format,
    progress: &Progress,
) -> Result<GenSummary, GenError> {
    let mut generator = generate(params)?;
    let mut buf = String::with_capacity(4096);
    let mut bytes = 0u64;
    let task = progress.bar("gen: nodes + pods", (params.nodes + params.pods) as u64);
    let mut objects = 0u64;
    if format == Format::JsonList {
        buf.push_str("{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[");
    }
    while let Some(object) = generator.next() {
        objects += 1;
        if objects.is_multiple_of(1024) {
            let s = generator.summary();
            task.set_position((s.nodes + s.bound_pods + s.pending_pods) as u64);
        }
        match format {
            Format::Yaml => {
                buf.push_str("---\n");
                yaml::write_document(&object, &mut buf);
            }
            Format::JsonList => {
                if objects > 1 {
                    buf.push_str(",\n");
                }
                // A `Value` always serializes (its map keys are strings).
                buf.push_str(&serde_json::to_string(&object).unwrap_or_default());
            }
        }
        out.write_all(buf.as_bytes())?;
        bytes += buf.len() as u64;
        buf.clear();
    }
    if format == Format::JsonList {
        buf.push_str("],\"metadata\":{\"resourceVersion\":\"\"}}\n");
        out.write_all(buf.as_bytes())?;
        bytes += buf.len() as u64;
    }
    out.flush()?;
    let mut summary = generator.summary().clone();
    summary.bytes = bytes;
    Ok(summary)
}

#[cfg(test)]
mod tests;
