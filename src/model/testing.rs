//! Small builders for tests and benches, in the spirit of upstream's
//! `pkg/scheduler/testing/wrappers.go` (`st.MakePod().Name("p").Req(...).Obj()`).
//!
//! Amounts are given in base units (millicores, bytes) so tests never depend on quantity parsing.

use std::sync::Arc;

use super::*;
use crate::resources::{DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST, Resource};

/// 1 GiB in bytes.
pub const GI: i64 = 1024 * 1024 * 1024;
/// 1 MiB in bytes.
pub const MI: i64 = 1024 * 1024;

/// Builds a [`Pod`] with one container.
#[derive(Debug, Clone)]
pub struct PodBuilder {
    pod: Pod,
}

impl PodBuilder {
    /// A pending pod `namespace/name` with no requests, priority 0, scheduler `default-scheduler`.
    pub fn new(namespace: &str, name: &str) -> Self {
        PodBuilder {
            pod: Pod {
                namespace: namespace.to_string(),
                name: name.to_string(),
                uid: format!("uid-{namespace}-{name}"),
                labels: Labels::new(),
                annotations: Labels::new(),
                creation_timestamp: 0,
                start_time: None,
                node_name: None,
                scheduler_name: "default-scheduler".to_string(),
                priority: 0,
                preemption_policy: PreemptionPolicy::PreemptLowerPriority,
                requests: Resource::default(),
                non_zero_requests: NonZeroRequests {
                    milli_cpu: DEFAULT_MILLI_CPU_REQUEST,
                    memory: DEFAULT_MEMORY_REQUEST,
                },
                node_selector: Labels::new(),
                node_affinity: NodeAffinity::default(),
                pod_affinity: PodAffinity::default(),
                pod_anti_affinity: PodAffinity::default(),
                tolerations: Vec::new(),
                host_ports: Vec::new(),
                topology_spread_constraints: Vec::new(),
                default_spread_selector: None,
                images: Vec::new(),
                has_pvc: false,
                claims: Vec::new(),
                has_local_storage: false,
                owner: None,
                phase: PodPhase::Pending,
                terminating: false,
                gang: None,
            },
        }
    }

    /// Requests `milli` millicores of CPU.
    pub fn cpu(mut self, milli: i64) -> Self {
        self.pod.requests.milli_cpu = milli;
        self.pod.non_zero_requests.milli_cpu =
            if milli == 0 { DEFAULT_MILLI_CPU_REQUEST } else { milli };
        self
    }

    /// Requests `bytes` of memory.
    pub fn memory(mut self, bytes: i64) -> Self {
        self.pod.requests.memory = bytes;
        self.pod.non_zero_requests.memory = if bytes == 0 { DEFAULT_MEMORY_REQUEST } else { bytes };
        self
    }

    /// Requests `bytes` of ephemeral storage.
    pub fn ephemeral_storage(mut self, bytes: i64) -> Self {
        self.pod.requests.ephemeral_storage = bytes;
        self
    }

    /// Requests an extended (scalar) resource.
    pub fn scalar(mut self, name: &str, amount: i64) -> Self {
        self.pod.requests.scalar.insert(name.to_string(), amount);
        self
    }

    /// Adds a label.
    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.pod.labels.insert(key.to_string(), value.to_string());
        self
    }

    /// Adds an annotation.
    pub fn annotation(mut self, key: &str, value: &str) -> Self {
        self.pod.annotations.insert(key.to_string(), value.to_string());
        self
    }

    /// Sets the priority.
    pub fn priority(mut self, p: i32) -> Self {
        self.pod.priority = p;
        self
    }

    /// Sets `preemptionPolicy: Never`.
    pub fn preemption_never(mut self) -> Self {
        self.pod.preemption_policy = PreemptionPolicy::Never;
        self
    }

    /// Sets the creation timestamp (seconds).
    pub fn created(mut self, ts: i64) -> Self {
        self.pod.creation_timestamp = ts;
        self
    }

    /// Sets the start time (seconds).
    pub fn started(mut self, ts: i64) -> Self {
        self.pod.start_time = Some(ts);
        self
    }

    /// Binds the pod to a node (`spec.nodeName`) and marks it Running.
    pub fn node(mut self, node: &str) -> Self {
        self.pod.node_name = Some(node.to_string());
        self.pod.phase = PodPhase::Running;
        self
    }

    /// Sets the scheduler name.
    pub fn scheduler(mut self, name: &str) -> Self {
        self.pod.scheduler_name = name.to_string();
        self
    }

    /// Adds a `nodeSelector` entry.
    pub fn node_selector(mut self, key: &str, value: &str) -> Self {
        self.pod.node_selector.insert(key.to_string(), value.to_string());
        self
    }

    /// Sets required node affinity terms (ORed).
    pub fn required_node_affinity(mut self, terms: Vec<NodeSelectorTerm>) -> Self {
        self.pod.node_affinity.required = Some(NodeSelector { terms });
        self
    }

    /// Adds a preferred node affinity term.
    pub fn preferred_node_affinity(mut self, weight: i32, term: NodeSelectorTerm) -> Self {
        self.pod.node_affinity.preferred.push(PreferredSchedulingTerm { weight, preference: term });
        self
    }

    /// Adds a toleration.
    pub fn toleration(
        mut self,
        key: &str,
        operator: TolerationOperator,
        value: &str,
        effect: Option<TaintEffect>,
    ) -> Self {
        self.pod.tolerations.push(Toleration {
            key: key.to_string(),
            operator,
            value: value.to_string(),
            effect,
            toleration_seconds: None,
        });
        self
    }

    /// Asks for a host port (`hostIP` empty means `0.0.0.0`).
    pub fn host_port(mut self, host_ip: &str, protocol: &str, port: i32) -> Self {
        let host_ip = if host_ip.is_empty() { "0.0.0.0" } else { host_ip };
        self.pod.host_ports.push(HostPort {
            host_ip: host_ip.to_string(),
            protocol: protocol.to_string(),
            port,
        });
        self
    }

    /// Adds a required pod affinity term.
    pub fn pod_affinity(mut self, term: PodAffinityTerm) -> Self {
        self.pod.pod_affinity.required.push(term);
        self
    }

    /// Adds a preferred pod affinity term.
    pub fn preferred_pod_affinity(mut self, weight: i32, term: PodAffinityTerm) -> Self {
        self.pod.pod_affinity.preferred.push(WeightedPodAffinityTerm { weight, term });
        self
    }

    /// Adds a required pod anti-affinity term.
    pub fn pod_anti_affinity(mut self, term: PodAffinityTerm) -> Self {
        self.pod.pod_anti_affinity.required.push(term);
        self
    }

    /// Adds a preferred pod anti-affinity term.
    pub fn preferred_pod_anti_affinity(mut self, weight: i32, term: PodAffinityTerm) -> Self {
        self.pod.pod_anti_affinity.preferred.push(WeightedPodAffinityTerm { weight, term });
        self
    }

    /// Adds a topology spread constraint.
    pub fn spread(mut self, c: TopologySpreadConstraint) -> Self {
        self.pod.topology_spread_constraints.push(c);
        self
    }

    /// Sets the selector PodTopologySpread's default constraints use for this pod.
    pub fn default_spread_selector(mut self, sel: LabelSelector) -> Self {
        self.pod.default_spread_selector = Some(sel);
        self
    }

    /// Adds a container image.
    pub fn image(mut self, image: &str) -> Self {
        self.pod.images.push(image.to_string());
        self
    }

    /// Sets the phase.
    pub fn phase(mut self, phase: PodPhase) -> Self {
        self.pod.phase = phase;
        self
    }

    /// Marks the pod terminating (`metadata.deletionTimestamp` set).
    pub fn terminating(mut self) -> Self {
        self.pod.terminating = true;
        self
    }

    /// Makes the pod a member of gang `name` of `convention` with `minMember` `min_member`
    /// (sets the [`GangRef`] and the convention's label or annotation).
    pub fn gang(mut self, convention: GangConvention, name: &str, min_member: i32) -> Self {
        match convention {
            GangConvention::Coscheduling => &mut self.pod.labels,
            GangConvention::Volcano => &mut self.pod.annotations,
        }
        .insert(convention.pod_key().to_string(), name.to_string());
        self.pod.gang = Some(GangRef { convention, name: name.to_string(), min_member });
        self
    }

    /// The pod.
    pub fn obj(self) -> Pod {
        self.pod
    }
}

/// A pod affinity term selecting pods whose labels include `labels`, in the pod's own namespace
/// (empty `namespaces`, no `namespaceSelector`), over `topology_key`.
pub fn affinity_term(topology_key: &str, labels: &[(&str, &str)]) -> PodAffinityTerm {
    PodAffinityTerm {
        label_selector: Some(LabelSelector::from_match_labels(labels.iter().copied())),
        namespaces: Vec::new(),
        namespace_selector: None,
        topology_key: topology_key.to_string(),
        match_label_keys: Vec::new(),
        mismatch_label_keys: Vec::new(),
    }
}

/// A topology spread constraint selecting pods whose labels include `labels`, with default
/// policies (nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore, no minDomains).
pub fn spread_constraint(
    max_skew: i32,
    topology_key: &str,
    when: UnsatisfiableAction,
    labels: &[(&str, &str)],
) -> TopologySpreadConstraint {
    TopologySpreadConstraint {
        max_skew,
        topology_key: topology_key.to_string(),
        when_unsatisfiable: when,
        label_selector: Some(LabelSelector::from_match_labels(labels.iter().copied())),
        min_domains: None,
        node_affinity_policy: InclusionPolicy::Honor,
        node_taints_policy: InclusionPolicy::Ignore,
        match_label_keys: Vec::new(),
    }
}

/// A node selector term of label requirements.
pub fn node_term(requirements: Vec<Requirement>) -> NodeSelectorTerm {
    NodeSelectorTerm { match_expressions: requirements, ..Default::default() }
}

/// Builds a [`Node`].
#[derive(Debug, Clone)]
pub struct NodeBuilder {
    node: Node,
}

impl NodeBuilder {
    /// A node with `kubernetes.io/hostname=name`, 110 allowed pods and no other capacity.
    pub fn new(name: &str) -> Self {
        let mut labels = Labels::new();
        labels.insert("kubernetes.io/hostname".to_string(), name.to_string());
        let allocatable = Resource { allowed_pod_number: 110, ..Default::default() };
        NodeBuilder { node: Node::new(name, labels, allocatable) }
    }

    /// Allocatable CPU in millicores.
    pub fn cpu(mut self, milli: i64) -> Self {
        self.node.allocatable.milli_cpu = milli;
        self
    }

    /// Allocatable memory in bytes.
    pub fn memory(mut self, bytes: i64) -> Self {
        self.node.allocatable.memory = bytes;
        self
    }

    /// Allocatable ephemeral storage in bytes.
    pub fn ephemeral_storage(mut self, bytes: i64) -> Self {
        self.node.allocatable.ephemeral_storage = bytes;
        self
    }

    /// Allowed pod count.
    pub fn pods(mut self, n: i64) -> Self {
        self.node.allocatable.allowed_pod_number = n;
        self
    }

    /// Allocatable extended resource.
    pub fn scalar(mut self, name: &str, amount: i64) -> Self {
        self.node.allocatable.scalar.insert(name.to_string(), amount);
        self
    }

    /// Adds a label.
    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.node.labels.insert(key.to_string(), value.to_string());
        self
    }

    /// Adds a taint.
    pub fn taint(mut self, key: &str, value: &str, effect: TaintEffect) -> Self {
        self.node.taints.push(Taint { key: key.to_string(), value: value.to_string(), effect });
        self
    }

    /// Marks the node unschedulable (cordoned).
    pub fn unschedulable(mut self) -> Self {
        self.node.unschedulable = true;
        self
    }

    /// Adds an image with the given names and size.
    pub fn image(mut self, names: &[&str], size_bytes: i64) -> Self {
        self.node.images.push(NodeImage {
            names: names.iter().map(|n| (*n).to_string()).collect(),
            size_bytes,
        });
        self
    }

    /// The node.
    pub fn obj(self) -> Node {
        self.node
    }
}

/// Builds a [`ClusterState`] from nodes and bound pods (each pod must have `node_name` set to a
/// node in `nodes`; panics otherwise — test helper only).
pub fn cluster(mut nodes: Vec<Node>, bound: Vec<Pod>) -> ClusterState {
    nodes.sort_by(|a, b| a.name.cmp(&b.name));
    let mut state = ClusterState { nodes, ..Default::default() };
    for pod in bound {
        let node = pod.node_name.clone().expect("bound test pod has a node");
        let idx = state.node_index(&node).expect("bound test pod's node exists");
        state.nodes[idx].add_pod(Arc::new(pod));
    }
    state
}
