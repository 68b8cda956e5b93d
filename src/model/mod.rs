//! The scheduling view of a cluster: what kube-scheduler's plugins read about nodes and pods.
//!
//! Input: typed Kubernetes objects (converted by [`crate::snapshot`]); output: [`Pod`], [`Node`]
//! and [`ClusterState`], the counterparts of upstream's `framework.PodInfo`, `framework.NodeInfo`
//! and the scheduler cache snapshot (`pkg/scheduler/framework/types.go`,
//! `pkg/scheduler/backend/cache/snapshot.go`, v1.35).
//!
//! Everything here is plain data with deterministic ordering (`BTreeMap`, sorted `Vec`s); the
//! plugins and the encoder never iterate a `HashMap`.

pub mod gang;
mod selector;
pub mod testing;
pub mod volume;

pub use gang::{Gang, GangConvention, GangIndex, GangKey, GangRef};
pub use selector::{LabelSelector, MatchOp, NodeSelector, NodeSelectorTerm, Requirement};
pub use volume::{Claim, Claims, PodClaim};

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::resources::Resource;

/// Labels (or annotations) of an object, ordered by key.
pub type Labels = BTreeMap<String, String>;

/// A pod, reduced to what scheduling reads. Constructed by [`crate::snapshot`] from a `v1.Pod`,
/// or in tests by [`testing::PodBuilder`].
#[derive(Debug, Clone, PartialEq)]
pub struct Pod {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid` (may be empty in hand-written manifests).
    pub uid: String,
    /// `metadata.labels`.
    pub labels: Labels,
    /// `metadata.annotations` (gang and rebalancing conventions read these).
    pub annotations: Labels,
    /// `metadata.creationTimestamp`, seconds since the Unix epoch (0 when absent).
    pub creation_timestamp: i64,
    /// `status.startTime`, seconds since the Unix epoch, when the pod has started.
    pub start_time: Option<i64>,
    /// `spec.nodeName`: the node the pod is bound to, if any.
    pub node_name: Option<String>,
    /// `spec.schedulerName` (defaulted to `default-scheduler`).
    pub scheduler_name: String,
    /// Resolved priority (`spec.priority`, else the PriorityClass, else the global default, else 0).
    pub priority: i32,
    /// `spec.preemptionPolicy` (resolved like priority; defaults to `PreemptLowerPriority`).
    pub preemption_policy: PreemptionPolicy,
    /// Effective resource request: `max(app + sidecars, each init + earlier sidecars) + overhead`.
    pub requests: Resource,
    /// CPU (millicores) and memory (bytes) requests with upstream's non-zero defaults applied per
    /// container (100m, 200MB) — what the resource scoring plugins use.
    pub non_zero_requests: NonZeroRequests,
    /// `spec.nodeSelector`.
    pub node_selector: Labels,
    /// `spec.affinity.nodeAffinity`.
    pub node_affinity: NodeAffinity,
    /// `spec.affinity.podAffinity`.
    pub pod_affinity: PodAffinity,
    /// `spec.affinity.podAntiAffinity`.
    pub pod_anti_affinity: PodAffinity,
    /// `spec.tolerations`.
    pub tolerations: Vec<Toleration>,
    /// Host ports requested by the pod's containers (`hostPort` > 0).
    pub host_ports: Vec<HostPort>,
    /// `spec.topologySpreadConstraints`.
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
    /// The selector upstream's `helper.DefaultSelector` derives for this pod from the Services,
    /// ReplicationControllers, ReplicaSets and StatefulSets in the snapshot that select or own it
    /// (used by PodTopologySpread's default constraints); `None` when it would be empty.
    pub default_spread_selector: Option<LabelSelector>,
    /// Images of the pod's init containers, then its app containers, normalized as upstream's
    /// ImageLocality does (it sums over both and divides by their number).
    pub images: Vec<String>,
    /// Whether the pod mounts a PersistentVolumeClaim (a `persistentVolumeClaim` or generic
    /// `ephemeral` volume).
    pub has_pvc: bool,
    /// The claims of the pod's `persistentVolumeClaim` and generic `ephemeral` volumes, in
    /// `spec.volumes` order (VolumeBinding's and VolumeRestrictions' PreFilters read them).
    pub claims: Vec<PodClaim>,
    /// Whether the pod mounts an `emptyDir` or `hostPath` volume (local storage, as descheduler's
    /// `IsPodWithLocalStorage` sees it; matters for rebalancing).
    pub has_local_storage: bool,
    /// The controlling owner reference, if any.
    pub owner: Option<OwnerRef>,
    /// `status.phase`.
    pub phase: PodPhase,
    /// Whether `metadata.deletionTimestamp` is set.
    pub terminating: bool,
    /// The gang (coscheduling or Volcano pod group) the pod belongs to, if any; see [`gang`].
    pub gang: Option<GangRef>,
}

impl Pod {
    /// `namespace/name`, the key used in plans and messages.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// Whether the pod has reached a terminal phase (Succeeded or Failed).
    pub fn is_terminal(&self) -> bool {
        matches!(self.phase, PodPhase::Succeeded | PodPhase::Failed)
    }

    /// Whether the pod has any required or preferred pod (anti-)affinity term.
    pub fn has_pod_affinity_terms(&self) -> bool {
        !self.pod_affinity.is_empty() || !self.pod_anti_affinity.is_empty()
    }

    /// Whether the pod has required pod anti-affinity terms.
    pub fn has_required_anti_affinity(&self) -> bool {
        !self.pod_anti_affinity.required.is_empty()
    }
}

/// `spec.preemptionPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PreemptionPolicy {
    /// `PreemptLowerPriority` (the default).
    #[default]
    PreemptLowerPriority,
    /// `Never`.
    Never,
}

/// `status.phase` of a pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PodPhase {
    /// `Pending` (also used when the phase is absent).
    #[default]
    Pending,
    /// `Running`.
    Running,
    /// `Succeeded`.
    Succeeded,
    /// `Failed`.
    Failed,
    /// `Unknown`.
    Unknown,
}

/// Non-zero CPU and memory requests (upstream `framework.NonZeroRequested`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NonZeroRequests {
    /// Millicores.
    pub milli_cpu: i64,
    /// Bytes.
    pub memory: i64,
}

/// The controlling owner of a pod (`metadata.ownerReferences[controller=true]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerRef {
    /// Owner kind, e.g. `ReplicaSet`.
    pub kind: String,
    /// Owner name.
    pub name: String,
    /// Owner uid.
    pub uid: String,
}

/// `spec.affinity.nodeAffinity`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeAffinity {
    /// `requiredDuringSchedulingIgnoredDuringExecution` (`None` when absent: matches every node).
    pub required: Option<NodeSelector>,
    /// `preferredDuringSchedulingIgnoredDuringExecution`.
    pub preferred: Vec<PreferredSchedulingTerm>,
}

/// One weighted preferred node selector term.
#[derive(Debug, Clone, PartialEq)]
pub struct PreferredSchedulingTerm {
    /// Weight in 1..=100.
    pub weight: i32,
    /// The term.
    pub preference: NodeSelectorTerm,
}

/// Pod affinity or anti-affinity (`spec.affinity.podAffinity` / `podAntiAffinity`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PodAffinity {
    /// `requiredDuringSchedulingIgnoredDuringExecution`.
    pub required: Vec<PodAffinityTerm>,
    /// `preferredDuringSchedulingIgnoredDuringExecution`.
    pub preferred: Vec<WeightedPodAffinityTerm>,
}

impl PodAffinity {
    /// Whether there are no terms at all.
    pub fn is_empty(&self) -> bool {
        self.required.is_empty() && self.preferred.is_empty()
    }
}

/// A pod affinity term, with `matchLabelKeys`/`mismatchLabelKeys` already merged into the
/// selector (as the API server does since v1.33 when the pod is created).
#[derive(Debug, Clone, PartialEq)]
pub struct PodAffinityTerm {
    /// `labelSelector` (`None`: matches no pod).
    pub label_selector: Option<LabelSelector>,
    /// `namespaces`.
    pub namespaces: Vec<String>,
    /// `namespaceSelector` (`None`: absent; `Some(empty)`: all namespaces).
    pub namespace_selector: Option<LabelSelector>,
    /// `topologyKey`.
    pub topology_key: String,
    /// `matchLabelKeys` (kept for display; already merged into `label_selector`).
    pub match_label_keys: Vec<String>,
    /// `mismatchLabelKeys` (kept for display; already merged into `label_selector`).
    pub mismatch_label_keys: Vec<String>,
}

/// A weighted pod affinity term.
#[derive(Debug, Clone, PartialEq)]
pub struct WeightedPodAffinityTerm {
    /// Weight in 1..=100.
    pub weight: i32,
    /// The term.
    pub term: PodAffinityTerm,
}

/// `spec.tolerations[]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toleration {
    /// `key` (empty with `Exists` tolerates every key).
    pub key: String,
    /// `operator`.
    pub operator: TolerationOperator,
    /// `value`.
    pub value: String,
    /// `effect` (`None`: every effect).
    pub effect: Option<TaintEffect>,
    /// `tolerationSeconds`.
    pub toleration_seconds: Option<i64>,
}

/// `spec.tolerations[].operator`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TolerationOperator {
    /// `Equal` (the default).
    #[default]
    Equal,
    /// `Exists`.
    Exists,
}

/// A taint effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TaintEffect {
    /// `NoSchedule`.
    NoSchedule,
    /// `PreferNoSchedule`.
    PreferNoSchedule,
    /// `NoExecute`.
    NoExecute,
}

impl TaintEffect {
    /// The API spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            TaintEffect::NoSchedule => "NoSchedule",
            TaintEffect::PreferNoSchedule => "PreferNoSchedule",
            TaintEffect::NoExecute => "NoExecute",
        }
    }
}

/// `spec.taints[]` of a node.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Taint {
    /// `key`.
    pub key: String,
    /// `value`.
    pub value: String,
    /// `effect`.
    pub effect: TaintEffect,
}

/// A host port a container asks for.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostPort {
    /// `hostIP`, defaulted to `0.0.0.0` when empty.
    pub host_ip: String,
    /// `protocol`, defaulted to `TCP`.
    pub protocol: String,
    /// `hostPort` (> 0).
    pub port: i32,
}

/// `spec.topologySpreadConstraints[]`, with `matchLabelKeys` already merged into the selector.
#[derive(Debug, Clone, PartialEq)]
pub struct TopologySpreadConstraint {
    /// `maxSkew` (≥ 1).
    pub max_skew: i32,
    /// `topologyKey`.
    pub topology_key: String,
    /// `whenUnsatisfiable`.
    pub when_unsatisfiable: UnsatisfiableAction,
    /// `labelSelector` (`None`: matches no pod).
    pub label_selector: Option<LabelSelector>,
    /// `minDomains` (only meaningful with `DoNotSchedule`).
    pub min_domains: Option<i32>,
    /// `nodeAffinityPolicy` (default `Honor`).
    pub node_affinity_policy: InclusionPolicy,
    /// `nodeTaintsPolicy` (default `Ignore`).
    pub node_taints_policy: InclusionPolicy,
    /// `matchLabelKeys` (kept for display; already merged into `label_selector`).
    pub match_label_keys: Vec<String>,
}

/// `whenUnsatisfiable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnsatisfiableAction {
    /// `DoNotSchedule`: a filter.
    DoNotSchedule,
    /// `ScheduleAnyway`: a score.
    ScheduleAnyway,
}

/// `nodeAffinityPolicy` / `nodeTaintsPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InclusionPolicy {
    /// `Honor`.
    Honor,
    /// `Ignore`.
    Ignore,
}

/// An image present on a node (`status.images[]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeImage {
    /// `names`, as the node reports them (upstream does not normalize node image names).
    pub names: Vec<String>,
    /// `sizeBytes`.
    pub size_bytes: i64,
}

/// A node with its static description and the pods currently on it — upstream's `NodeInfo`.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.labels`.
    pub labels: Labels,
    /// `spec.taints`.
    pub taints: Vec<Taint>,
    /// `spec.unschedulable` (cordoned).
    pub unschedulable: bool,
    /// `status.allocatable` (falling back to `status.capacity` per resource).
    pub allocatable: Resource,
    /// `status.images`.
    pub images: Vec<NodeImage>,
    /// Pods on this node (bound, or assumed during a simulation), in the order they were added.
    pub pods: Vec<Arc<Pod>>,
    /// Sum of `requests` of `pods`.
    pub requested: Resource,
    /// Sum of `non_zero_requests` of `pods`.
    pub non_zero_requested: NonZeroRequests,
    /// Host ports in use by `pods`.
    pub used_ports: Vec<HostPort>,
    /// How many of `pods` have pod affinity or anti-affinity terms (upstream
    /// `NodeInfo.PodsWithAffinity`).
    pub pods_with_affinity: u32,
    /// How many of `pods` have required pod anti-affinity terms (upstream
    /// `NodeInfo.PodsWithRequiredAntiAffinity`).
    pub pods_with_required_anti_affinity: u32,
    /// The lowest priority among `pods` (`i32::MAX` without pods): preemption finds no victim
    /// on a node whose pods all have at least the preemptor's priority.
    pub lowest_priority: i32,
    /// Changes whenever the node's pods change (upstream `NodeInfo.Generation`).
    pub generation: Generation,
}

/// A node's generation: a value drawn from one process-wide counter when the node is created
/// and each time a pod is added or removed, so two nodes with the same generation hold the same
/// pods (one is a clone of the other). Caches key per-node results on it. It is not part of a
/// node's value: two nodes compare equal whatever their generations.
#[derive(Debug, Clone, Copy)]
pub struct Generation(u64);

impl Generation {
    /// A generation no node has had before.
    pub fn next() -> Generation {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Generation(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }

    /// The counter's value.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl PartialEq for Generation {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl Node {
    /// A node with no pods.
    pub fn new(name: impl Into<String>, labels: Labels, allocatable: Resource) -> Self {
        Node {
            name: name.into(),
            labels,
            taints: Vec::new(),
            unschedulable: false,
            allocatable,
            images: Vec::new(),
            pods: Vec::new(),
            requested: Resource::default(),
            non_zero_requested: NonZeroRequests::default(),
            used_ports: Vec::new(),
            pods_with_affinity: 0,
            pods_with_required_anti_affinity: 0,
            lowest_priority: i32::MAX,
            generation: Generation::next(),
        }
    }

    /// Adds a pod to the node, updating requested resources and used ports (upstream `AddPod`).
    pub fn add_pod(&mut self, pod: Arc<Pod>) {
        self.requested.add(&pod.requests);
        self.non_zero_requested.milli_cpu += pod.non_zero_requests.milli_cpu;
        self.non_zero_requested.memory += pod.non_zero_requests.memory;
        self.used_ports.extend(pod.host_ports.iter().cloned());
        self.pods_with_affinity += u32::from(pod.has_pod_affinity_terms());
        self.pods_with_required_anti_affinity += u32::from(pod.has_required_anti_affinity());
        self.lowest_priority = self.lowest_priority.min(pod.priority);
        self.generation = Generation::next();
        self.pods.push(pod);
    }

    /// Removes the pod with the given namespace and name (upstream `RemovePod`).
    /// Returns the removed pod, or `None` if it is not on this node.
    pub fn remove_pod(&mut self, namespace: &str, name: &str) -> Option<Arc<Pod>> {
        let idx = self.pods.iter().position(|p| p.namespace == namespace && p.name == name)?;
        let pod = self.pods.remove(idx);
        self.requested.sub(&pod.requests);
        self.non_zero_requested.milli_cpu -= pod.non_zero_requests.milli_cpu;
        self.non_zero_requested.memory -= pod.non_zero_requests.memory;
        self.pods_with_affinity -= u32::from(pod.has_pod_affinity_terms());
        self.pods_with_required_anti_affinity -= u32::from(pod.has_required_anti_affinity());
        self.generation = Generation::next();
        if pod.priority == self.lowest_priority {
            self.lowest_priority = self.pods.iter().map(|p| p.priority).min().unwrap_or(i32::MAX);
        }
        for port in &pod.host_ports {
            if let Some(i) = self.used_ports.iter().position(|p| p == port) {
                self.used_ports.remove(i);
            }
        }
        Some(pod)
    }
}

/// A PodDisruptionBudget (policy/v1), reduced to what preemption and rebalancing read.
#[derive(Debug, Clone, PartialEq)]
pub struct Pdb {
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `spec.selector` (`None` or empty selects no pods, as upstream's preemption treats it).
    pub selector: Option<LabelSelector>,
    /// `status.disruptionsAllowed`.
    pub disruptions_allowed: i32,
    /// `status.disruptedPods` keys (pod names already being disrupted).
    pub disrupted_pods: Vec<String>,
}

/// The cluster as the scheduler sees it: every node with its pods, and namespace labels (for
/// `namespaceSelector`). Nodes are sorted by name.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClusterState {
    /// Nodes, sorted by name.
    pub nodes: Vec<Node>,
    /// Labels of each namespace in the snapshot.
    pub namespace_labels: BTreeMap<String, Labels>,
    /// PodDisruptionBudgets.
    pub pdbs: Vec<Pdb>,
    /// PersistentVolumeClaims (shared: they do not change while a batch is planned).
    pub claims: Arc<Claims>,
}

impl ClusterState {
    /// Index of the node with this name.
    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.binary_search_by(|n| n.name.as_str().cmp(name)).ok()
    }

    /// Labels of a namespace (empty when the namespace is not in the snapshot).
    pub fn namespace_labels(&self, namespace: &str) -> &Labels {
        static EMPTY: Labels = Labels::new();
        self.namespace_labels.get(namespace).unwrap_or(&EMPTY)
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{NodeBuilder, PodBuilder, affinity_term};
    use super::*;

    #[test]
    fn adding_and_removing_pods_keeps_the_node_summaries_and_changes_the_generation() {
        let mut node = NodeBuilder::new("n").cpu(4000).obj();
        let plain = PodBuilder::new("d", "plain").priority(50).obj();
        let affine = PodBuilder::new("d", "affine")
            .priority(10)
            .preferred_pod_affinity(1, affinity_term("zone", &[("app", "x")]))
            .obj();
        let anti = PodBuilder::new("d", "anti")
            .priority(30)
            .pod_anti_affinity(affinity_term("zone", &[("app", "x")]))
            .obj();
        // (step, add or remove the pod, with affinity, with required anti-affinity, lowest)
        let steps: [(&str, bool, &Pod, u32, u32, i32); 5] = [
            ("a plain pod", true, &plain, 0, 0, 50),
            ("a pod with preferred affinity", true, &affine, 1, 0, 10),
            ("a pod with required anti-affinity", true, &anti, 2, 1, 10),
            ("the lowest-priority pod removed", false, &affine, 1, 1, 30),
            ("the anti-affinity pod removed", false, &anti, 0, 0, 50),
        ];
        for (step, add, pod, with_affinity, with_anti, lowest) in steps {
            let before = node.generation.get();
            if add {
                node.add_pod(Arc::new(pod.clone()));
            } else {
                node.remove_pod(&pod.namespace, &pod.name).expect("the pod is on the node");
            }
            assert_ne!(node.generation.get(), before, "{step}: the generation did not change");
            assert_eq!(node.pods_with_affinity, with_affinity, "{step}");
            assert_eq!(node.pods_with_required_anti_affinity, with_anti, "{step}");
            assert_eq!(node.lowest_priority, lowest, "{step}");
        }
        node.remove_pod("d", "plain").expect("the pod is on the node");
        assert_eq!(node.lowest_priority, i32::MAX, "an empty node has no lowest priority");
        let copy = node.clone();
        assert_eq!(copy.generation.get(), node.generation.get(), "a clone keeps the generation");
    }
}
