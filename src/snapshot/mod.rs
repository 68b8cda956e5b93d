//! Reading a cluster snapshot: Kubernetes manifests in, the scheduling model out.
//!
//! Two steps:
//! 1. [`load`] reads files and directories (recursively; `.yaml`, `.yml`, `.json`, sorted by
//!    path) holding YAML document streams, JSON, and `kind: List` / `*List` objects exactly as
//!    `kubectl get nodes,pods,pdb,priorityclasses,namespaces -A -o yaml` prints them, into a
//!    [`Snapshot`]: typed k8s-openapi objects (the newest API it supports, Kubernetes v1.37, so
//!    that snapshots of current clusters parse), each with the [`Source`] it came from. Files,
//!    documents and `List` items are read on all cores; JSON as kubectl writes it is typed
//!    straight from the text (`managedFields` skipped unbuilt), large YAML is cut at top-level
//!    boundaries and parsed in pieces with serde-saphyr; anything else, and every error, goes
//!    through `serde_json::Value` and then the typed object through `serde_path_to_error`, so
//!    a field of the wrong type is reported with its path. PodGroups
//!    (coscheduling's `scheduling.x-k8s.io/v1alpha1` and Volcano's
//!    `scheduling.volcano.sh/v1beta1`), which k8s-openapi does not know, are read with
//!    kplace's own types ([`pod_group`]).
//! 2. [`build`] turns a snapshot into a [`Cluster`]: the model's `ClusterState` (nodes sorted by
//!    name, bound non-terminal pods on their nodes, namespace labels, PDBs), the pending pods
//!    this scheduler serves, their gangs ([`crate::model::gang`]: each member's PodGroup and
//!    `minMember`; a group without a PodGroup counts all its pods present, with a warning),
//!    counts of the pods it ignores, and [`Warning`]s.
//!
//! The field-by-field conversion lives in [`convert`] (reused by the configuration parser).
//!
//! Counterparts (v1.35): the scheduler's informers and cache (`pkg/scheduler/eventhandlers.go`,
//! `pkg/scheduler/backend/cache`: terminal pods are invisible, assigned pods count on their
//! node whatever their scheduler), the Priority admission plugin
//! (`plugin/pkg/admission/priority/admission.go`: class name, else the global default class),
//! `pkg/scheduler/framework/plugins/helper/spread.go` (`DefaultSelector`), and the API server's
//! defaulting (`pkg/apis/core/v1/defaults.go`).

pub mod batch;
mod build;
pub mod convert;
pub mod dump;
mod load;
pub mod pod_group;

use std::fmt;
use std::path::{Path, PathBuf};

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::api::policy::v1 as policy;
use k8s_openapi::api::scheduling::v1 as scheduling;

pub use batch::{BatchFilter, SelectorError, parse_selector};
pub use build::{BuildOptions, Cluster, DEFAULT_SCHEDULER_NAMES, IgnoredPods, build};
pub use load::load;
pub use pod_group::PodGroup;

/// Where an object came from.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Source {
    /// The file.
    pub file: PathBuf,
    /// 0-based index of the document in the file (empty documents are not counted).
    pub document: usize,
    /// 0-based index in the `items` of a `List`.
    pub item: Option<usize>,
    /// 1-based line where the object starts, when known.
    pub line: Option<u64>,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, " (document {}", self.document + 1)?;
        if let Some(item) = self.item {
            write!(f, ", item {}", item + 1)?;
        }
        write!(f, ")")
    }
}

/// A Kubernetes object's identity for messages: `Pod batch/etl-1`, `Node ip-10-0-1-2`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectRef {
    /// `kind`.
    pub kind: String,
    /// `metadata.namespace` (namespaced kinds only).
    pub namespace: Option<String>,
    /// `metadata.name`.
    pub name: String,
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {}/{}", self.kind, ns, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// A typed object and where it came from.
#[derive(Debug, Clone)]
pub struct Sourced<T> {
    /// The object (namespaced objects without a namespace get `default`).
    pub object: T,
    /// Where it was read.
    pub source: Source,
}

/// Something worth telling the user that does not stop the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// Where the object (or file) came from, if known.
    pub source: Option<Source>,
    /// The object concerned, if any.
    pub object: Option<ObjectRef>,
    /// What happened, lower-case, no trailing period.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = &self.source {
            write!(f, "{s}: ")?;
        }
        if let Some(o) = &self.object {
            write!(f, "{o}: ")?;
        }
        f.write_str(&self.message)
    }
}

/// Why a snapshot could not be read or built. Every variant names the file, and where an
/// object is concerned, the object and the field.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// A file or directory could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A YAML file is malformed.
    #[error(
        "{}{}{}: invalid YAML: {message}",
        file.display(),
        line.map(|l| format!(":{l}")).unwrap_or_default(),
        column.map(|c| format!(":{c}")).unwrap_or_default()
    )]
    Yaml {
        /// The file.
        file: PathBuf,
        /// 1-based line of the problem, when known.
        line: Option<u64>,
        /// 1-based column of the problem, when known.
        column: Option<u64>,
        /// The parser's message.
        message: String,
    },
    /// A JSON file is malformed.
    #[error("{}:{line}:{column}: invalid JSON: {message}", file.display())]
    Json {
        /// The file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// A document is not a Kubernetes object (not a mapping, no `apiVersion` or `kind`, a
    /// `List` nested in a `List`).
    #[error("{at}: {problem}")]
    NotAnObject {
        /// Where.
        at: Box<Source>,
        /// What is missing.
        problem: String,
    },
    /// A kind kplace reads, with an API version it does not.
    #[error(
        "{at}: {object}: apiVersion {found:?} is not supported for kind {} (expected {expected:?})",
        object.kind
    )]
    UnsupportedApiVersion {
        /// Where.
        at: Box<Source>,
        /// The object (its kind is the kind concerned).
        object: Box<ObjectRef>,
        /// The API version found.
        found: String,
        /// The API version kplace reads.
        expected: &'static str,
    },
    /// A field is missing, of the wrong type, or has a value kplace cannot use.
    #[error("{at}: {object}: {field}: {message}")]
    Field {
        /// Where.
        at: Box<Source>,
        /// The object.
        object: Box<ObjectRef>,
        /// Path of the field (`spec.containers[0].resources.requests.cpu`).
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The same object appears twice.
    #[error("{object} is defined twice: at {first} and at {second}")]
    Duplicate {
        /// The object.
        object: Box<ObjectRef>,
        /// First definition.
        first: Box<Source>,
        /// Second definition.
        second: Box<Source>,
    },
    /// Nothing to read.
    #[error("no Kubernetes objects found in {}", paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    NoObjects {
        /// The paths given.
        paths: Vec<PathBuf>,
    },
}

/// The typed objects of a snapshot, each with its source. Objects of other kinds are counted
/// in `skipped` and otherwise ignored.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// `v1/Node`.
    pub nodes: Vec<Sourced<k8s::Node>>,
    /// `v1/Pod`.
    pub pods: Vec<Sourced<k8s::Pod>>,
    /// `policy/v1/PodDisruptionBudget`.
    pub pdbs: Vec<Sourced<policy::PodDisruptionBudget>>,
    /// `v1/PersistentVolumeClaim` (for the volume plugins' PreFilters).
    pub pvcs: Vec<Sourced<k8s::PersistentVolumeClaim>>,
    /// `scheduling.k8s.io/v1/PriorityClass`.
    pub priority_classes: Vec<Sourced<scheduling::PriorityClass>>,
    /// `v1/Namespace`.
    pub namespaces: Vec<Sourced<k8s::Namespace>>,
    /// `v1/Service` (for default spread selectors).
    pub services: Vec<Sourced<k8s::Service>>,
    /// `apps/v1/ReplicaSet` (for default spread selectors).
    pub replica_sets: Vec<Sourced<apps::ReplicaSet>>,
    /// `apps/v1/StatefulSet` (for default spread selectors).
    pub stateful_sets: Vec<Sourced<apps::StatefulSet>>,
    /// `v1/ReplicationController` (for default spread selectors).
    pub replication_controllers: Vec<Sourced<k8s::ReplicationController>>,
    /// PodGroups of coscheduling (`scheduling.x-k8s.io/v1alpha1`) and Volcano
    /// (`scheduling.volcano.sh/v1beta1`), for gangs. PodGroups of other API versions are
    /// skipped with a warning.
    pub pod_groups: Vec<Sourced<PodGroup>>,
    /// Objects of other kinds, counted by kind.
    pub skipped: BTreeMap<String, usize>,
    /// Files read, in order.
    pub files: Vec<PathBuf>,
    /// Non-fatal findings (empty files, directories without manifests).
    pub warnings: Vec<Warning>,
    /// Every object kept, by identity, to detect duplicates.
    seen: Seen,
}

/// Where each object read so far was defined, by identity (a second definition is an error).
/// Hashed, as only lookups read it; shown in order.
#[derive(Clone, Default)]
struct Seen(std::collections::HashMap<ObjectRef, Source>);

impl fmt::Debug for Seen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.0.iter().collect::<BTreeMap<_, _>>()).finish()
    }
}

impl Snapshot {
    /// An empty snapshot.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of objects read, skipped kinds included.
    pub fn object_count(&self) -> usize {
        self.seen.0.len() + self.skipped.values().sum::<usize>()
    }

    /// Adds the objects of a YAML stream (one or more documents) read from `file`. Every
    /// document must be a Kubernetes object.
    pub fn add_yaml(&mut self, file: &Path, text: &str) -> Result<(), SnapshotError> {
        load::add_yaml(self, file, text, load::Strictness::Strict)
    }

    /// Adds the objects of a JSON text (one value, or several concatenated) read from `file`.
    /// Every value must be a Kubernetes object.
    pub fn add_json(&mut self, file: &Path, text: &str) -> Result<(), SnapshotError> {
        load::add_json(self, file, text, load::Strictness::Strict)
    }
}
