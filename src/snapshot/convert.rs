//! Field-by-field conversion from Kubernetes API types (k8s-openapi, v1.35) to the scheduling
//! model ([`crate::model`]).
//!
//! Input: typed API objects or parts of them; output: model values, or a [`ConvertError`] naming
//! the field (relative to the value converted; callers prefix it with [`ConvertError::at`]).
//! The functions are public so the scheduler-configuration parser can convert the API types it
//! embeds (`NodeAffinityArgs.addedAffinity`, `PodTopologySpreadArgs.defaultConstraints`).
//!
//! Counterparts (v1.35):
//! - `apimachinery/pkg/apis/meta/v1/helpers.go` `LabelSelectorAsSelector` and
//!   `apimachinery/pkg/labels/selector.go` `NewRequirement` (selector validation);
//! - `component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go` (node selector terms
//!   with parse errors never match: [`NodeSelectorTerm::invalid`]);
//! - `pkg/registry/core/pod/strategy.go` `mutatePodAffinity`, `mutateTopologySpreadConstraints`
//!   (`matchLabelKeys`/`mismatchLabelKeys` merged into the selector from the pod's labels, as
//!   the API server does when the pod is created);
//! - `pkg/apis/core/v1/defaults.go` (host ports default to container ports with host network;
//!   protocol `TCP`);
//! - `pkg/scheduler/framework/plugins/imagelocality/image_locality.go` `normalizedImageName`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::api::policy::v1 as policy;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as metav1;

use crate::model::volume;
use crate::model::{
    Claim, HostPort, InclusionPolicy, LabelSelector, Labels, MatchOp, Node, NodeAffinity,
    NodeImage, NodeSelector, NodeSelectorTerm, OwnerRef, Pdb, Pod, PodAffinity, PodAffinityTerm,
    PodClaim, PodPhase, PreemptionPolicy, PreferredSchedulingTerm, Requirement, Taint, TaintEffect,
    Toleration, TolerationOperator, TopologySpreadConstraint, UnsatisfiableAction,
    WeightedPodAffinityTerm,
};
use crate::resources::{self, ResourceError, is_qualified_name, is_qualified_name_part};

/// A field that cannot be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ConvertError {
    /// Path of the field, e.g. `spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[1].operator`.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl ConvertError {
    /// An error at `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        ConvertError { field: field.into(), message: message.into() }
    }

    /// The same error with `prefix` prepended to the field path.
    pub fn at(mut self, prefix: &str) -> Self {
        self.field = if self.field.is_empty() {
            prefix.to_string()
        } else if self.field.starts_with('[') {
            format!("{prefix}{}", self.field)
        } else {
            format!("{prefix}.{}", self.field)
        };
        self
    }
}

impl From<ResourceError> for ConvertError {
    fn from(e: ResourceError) -> Self {
        match e {
            ResourceError::Quantity { field, source } => {
                ConvertError::new(field, source.to_string())
            }
            ResourceError::Negative { field, text } => {
                ConvertError::new(field, format!("negative quantity {text:?} is not allowed"))
            }
            ResourceError::Overflow { field } => {
                ConvertError::new(field, "the total does not fit in a 64-bit integer")
            }
        }
    }
}

/// Upstream `IsValidLabelValue`: at most 63 characters matching
/// `(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?`.
pub fn is_valid_label_value(value: &str) -> bool {
    value.is_empty() || (value.len() <= 63 && is_qualified_name_part(value))
}

/// Upstream `labels.NewRequirement` validation for a label requirement.
pub(crate) fn validate_requirement(
    key: &str,
    op: MatchOp,
    values: &[String],
) -> Result<(), ConvertError> {
    if !is_qualified_name(key) {
        return Err(ConvertError::new("key", format!("invalid label key {key:?}")));
    }
    match op {
        MatchOp::In | MatchOp::NotIn if values.is_empty() => {
            return Err(ConvertError::new(
                "values",
                "for 'in', 'notin' operators, values set can't be empty",
            ));
        }
        MatchOp::Exists | MatchOp::DoesNotExist if !values.is_empty() => {
            return Err(ConvertError::new(
                "values",
                "values set must be empty for exists and does not exist",
            ));
        }
        MatchOp::Gt | MatchOp::Lt => {
            if values.len() != 1 {
                return Err(ConvertError::new(
                    "values",
                    "for 'Gt', 'Lt' operators, exactly one value is required",
                ));
            }
            if values.iter().any(|v| v.parse::<i64>().is_err()) {
                return Err(ConvertError::new(
                    "values",
                    "for 'Gt', 'Lt' operators, the value must be an integer",
                ));
            }
        }
        _ => {}
    }
    for (i, v) in values.iter().enumerate() {
        if !is_valid_label_value(v) {
            return Err(ConvertError::new(
                format!("values[{i}]"),
                format!("invalid label value {v:?}"),
            ));
        }
    }
    Ok(())
}

/// A `metav1.LabelSelector` as a model selector (upstream `LabelSelectorAsSelector`; an empty
/// selector matches everything). Unknown operators and invalid keys or values are errors.
pub fn label_selector(sel: &metav1::LabelSelector) -> Result<LabelSelector, ConvertError> {
    let mut out = LabelSelector::default();
    for (k, v) in sel.match_labels.iter().flatten() {
        let values = [v.clone()];
        validate_requirement(k, MatchOp::In, &values)
            .map_err(|e| ConvertError::new(format!("matchLabels.{k}"), e.message))?;
        out.requirements.push(Requirement {
            key: k.clone(),
            op: MatchOp::In,
            values: values.to_vec(),
        });
    }
    for (i, expr) in sel.match_expressions.iter().flatten().enumerate() {
        let path = format!("matchExpressions[{i}]");
        let Some(op) = MatchOp::parse(&expr.operator).filter(|op| op.is_label_selector_op()) else {
            return Err(ConvertError::new(
                format!("{path}.operator"),
                format!("{:?} is not a valid label selector operator", expr.operator),
            ));
        };
        let values = expr.values.clone().unwrap_or_default();
        validate_requirement(&expr.key, op, &values).map_err(|e| e.at(&path))?;
        out.requirements.push(Requirement { key: expr.key.clone(), op, values });
    }
    out.normalize();
    Ok(out)
}

/// An optional selector: `None` (nil, matches nothing) stays `None`.
pub fn optional_label_selector(
    sel: Option<&metav1::LabelSelector>,
) -> Result<Option<LabelSelector>, ConvertError> {
    sel.map(label_selector).transpose()
}

/// Adds `key op [value]` for each key the pod has a label for (upstream
/// `applyLabelKeysToLabelSelector`); keys the pod does not carry are ignored.
fn merge_label_keys(sel: &mut LabelSelector, keys: &[String], op: MatchOp, labels: &Labels) {
    for key in keys {
        if let Some(value) = labels.get(key) {
            sel.requirements.push(Requirement {
                key: key.clone(),
                op,
                values: vec![value.clone()],
            });
        }
    }
    sel.normalize();
}

/// One node selector term (upstream `newNodeSelectorTerm`). A term with a parse error is kept
/// with `invalid` set: upstream's lazy-error selector never matches it.
///
/// `matchFields` only knows `metadata.name`; a requirement on any other field is resolved here
/// the way upstream's field selector evaluates it against `{metadata.name}` (an absent field
/// reads as `""`): it either always holds (kept as `metadata.name NotIn [""]`) or never does
/// (the term becomes `invalid`, which never matches).
pub fn node_selector_term(term: &k8s::NodeSelectorTerm) -> NodeSelectorTerm {
    let mut out = NodeSelectorTerm::default();
    for expr in term.match_expressions.iter().flatten() {
        let Some(op) = MatchOp::parse(&expr.operator) else {
            out.invalid = true;
            continue;
        };
        let values = expr.values.clone().unwrap_or_default();
        if validate_requirement(&expr.key, op, &values).is_err() {
            out.invalid = true;
            continue;
        }
        out.match_expressions.push(Requirement { key: expr.key.clone(), op, values });
    }
    for expr in term.match_fields.iter().flatten() {
        let values = expr.values.clone().unwrap_or_default();
        let op = match expr.operator.as_str() {
            "In" => MatchOp::In,
            "NotIn" => MatchOp::NotIn,
            _ => {
                out.invalid = true;
                continue;
            }
        };
        let [value] = values.as_slice() else {
            out.invalid = true;
            continue;
        };
        if expr.key == "metadata.name" {
            out.match_fields.push(Requirement { key: expr.key.clone(), op, values });
            continue;
        }
        let holds = (op == MatchOp::In) == value.is_empty();
        if holds {
            out.match_fields.push(Requirement::new("metadata.name", MatchOp::NotIn, &[""]));
        } else {
            out.invalid = true;
        }
    }
    out
}

/// A node selector (terms ORed).
pub fn node_selector(sel: &k8s::NodeSelector) -> NodeSelector {
    NodeSelector { terms: sel.node_selector_terms.iter().map(node_selector_term).collect() }
}

/// `spec.affinity.nodeAffinity` (or `NodeAffinityArgs.addedAffinity`).
pub fn node_affinity(a: &k8s::NodeAffinity) -> NodeAffinity {
    NodeAffinity {
        required: a.required_during_scheduling_ignored_during_execution.as_ref().map(node_selector),
        preferred: a
            .preferred_during_scheduling_ignored_during_execution
            .iter()
            .flatten()
            .map(|t| PreferredSchedulingTerm {
                weight: t.weight,
                preference: node_selector_term(&t.preference),
            })
            .collect(),
    }
}

/// One pod (anti-)affinity term, with `matchLabelKeys` (`In`) and `mismatchLabelKeys`
/// (`NotIn`) merged into the label selector from the pod's own labels. A nil selector stays
/// nil (it matches no pod).
pub fn pod_affinity_term(
    term: &k8s::PodAffinityTerm,
    pod_labels: &Labels,
) -> Result<PodAffinityTerm, ConvertError> {
    let match_label_keys = term.match_label_keys.clone().unwrap_or_default();
    let mismatch_label_keys = term.mismatch_label_keys.clone().unwrap_or_default();
    let mut selector =
        optional_label_selector(term.label_selector.as_ref()).map_err(|e| e.at("labelSelector"))?;
    if let Some(sel) = &mut selector {
        merge_label_keys(sel, &match_label_keys, MatchOp::In, pod_labels);
        merge_label_keys(sel, &mismatch_label_keys, MatchOp::NotIn, pod_labels);
    }
    Ok(PodAffinityTerm {
        label_selector: selector,
        namespaces: term.namespaces.clone().unwrap_or_default(),
        namespace_selector: optional_label_selector(term.namespace_selector.as_ref())
            .map_err(|e| e.at("namespaceSelector"))?,
        topology_key: term.topology_key.clone(),
        match_label_keys,
        mismatch_label_keys,
    })
}

fn affinity_terms(
    required: Option<&Vec<k8s::PodAffinityTerm>>,
    preferred: Option<&Vec<k8s::WeightedPodAffinityTerm>>,
    pod_labels: &Labels,
) -> Result<PodAffinity, ConvertError> {
    let mut out = PodAffinity::default();
    for (i, t) in required.into_iter().flatten().enumerate() {
        out.required.push(
            pod_affinity_term(t, pod_labels).map_err(|e| {
                e.at(&format!("requiredDuringSchedulingIgnoredDuringExecution[{i}]"))
            })?,
        );
    }
    for (i, t) in preferred.into_iter().flatten().enumerate() {
        let term = pod_affinity_term(&t.pod_affinity_term, pod_labels).map_err(|e| {
            e.at(&format!("preferredDuringSchedulingIgnoredDuringExecution[{i}].podAffinityTerm"))
        })?;
        out.preferred.push(WeightedPodAffinityTerm { weight: t.weight, term });
    }
    Ok(out)
}

/// `spec.affinity.podAffinity`.
pub fn pod_affinity(
    a: &k8s::PodAffinity,
    pod_labels: &Labels,
) -> Result<PodAffinity, ConvertError> {
    affinity_terms(
        a.required_during_scheduling_ignored_during_execution.as_ref(),
        a.preferred_during_scheduling_ignored_during_execution.as_ref(),
        pod_labels,
    )
}

/// `spec.affinity.podAntiAffinity`.
pub fn pod_anti_affinity(
    a: &k8s::PodAntiAffinity,
    pod_labels: &Labels,
) -> Result<PodAffinity, ConvertError> {
    affinity_terms(
        a.required_during_scheduling_ignored_during_execution.as_ref(),
        a.preferred_during_scheduling_ignored_during_execution.as_ref(),
        pod_labels,
    )
}

/// A taint effect by its API spelling.
pub fn taint_effect(s: &str) -> Result<TaintEffect, ConvertError> {
    match s {
        "NoSchedule" => Ok(TaintEffect::NoSchedule),
        "PreferNoSchedule" => Ok(TaintEffect::PreferNoSchedule),
        "NoExecute" => Ok(TaintEffect::NoExecute),
        other => Err(ConvertError::new(
            "effect",
            format!(
                "unknown taint effect {other:?} (expected NoSchedule, PreferNoSchedule or NoExecute)"
            ),
        )),
    }
}

/// One toleration (operator defaults to `Equal`; an empty effect tolerates every effect).
pub fn toleration(t: &k8s::Toleration) -> Result<Toleration, ConvertError> {
    let operator = match t.operator.as_deref() {
        None | Some("") | Some("Equal") => TolerationOperator::Equal,
        Some("Exists") => TolerationOperator::Exists,
        Some(other) => {
            return Err(ConvertError::new(
                "operator",
                format!("unknown toleration operator {other:?} (expected Equal or Exists)"),
            ));
        }
    };
    let effect = match t.effect.as_deref() {
        None | Some("") => None,
        Some(e) => Some(taint_effect(e)?),
    };
    Ok(Toleration {
        key: t.key.clone().unwrap_or_default(),
        operator,
        value: t.value.clone().unwrap_or_default(),
        effect,
        toleration_seconds: t.toleration_seconds,
    })
}

/// One node taint.
pub fn taint(t: &k8s::Taint) -> Result<Taint, ConvertError> {
    Ok(Taint {
        key: t.key.clone(),
        value: t.value.clone().unwrap_or_default(),
        effect: taint_effect(&t.effect)?,
    })
}

fn inclusion_policy(
    value: Option<&str>,
    default: InclusionPolicy,
    field: &str,
) -> Result<InclusionPolicy, ConvertError> {
    match value {
        None | Some("") => Ok(default),
        Some("Honor") => Ok(InclusionPolicy::Honor),
        Some("Ignore") => Ok(InclusionPolicy::Ignore),
        Some(other) => Err(ConvertError::new(
            field,
            format!("unknown inclusion policy {other:?} (expected Honor or Ignore)"),
        )),
    }
}

/// One topology spread constraint, with `matchLabelKeys` merged into the selector from the
/// pod's labels (keys the pod does not carry are ignored; a nil selector stays nil).
pub fn topology_spread_constraint(
    c: &k8s::TopologySpreadConstraint,
    pod_labels: &Labels,
) -> Result<TopologySpreadConstraint, ConvertError> {
    let when_unsatisfiable = match c.when_unsatisfiable.as_str() {
        "DoNotSchedule" => UnsatisfiableAction::DoNotSchedule,
        "ScheduleAnyway" => UnsatisfiableAction::ScheduleAnyway,
        other => {
            return Err(ConvertError::new(
                "whenUnsatisfiable",
                format!("unknown action {other:?} (expected DoNotSchedule or ScheduleAnyway)"),
            ));
        }
    };
    let match_label_keys = c.match_label_keys.clone().unwrap_or_default();
    let mut selector =
        optional_label_selector(c.label_selector.as_ref()).map_err(|e| e.at("labelSelector"))?;
    if let Some(sel) = &mut selector {
        merge_label_keys(sel, &match_label_keys, MatchOp::In, pod_labels);
    }
    Ok(TopologySpreadConstraint {
        max_skew: c.max_skew,
        topology_key: c.topology_key.clone(),
        when_unsatisfiable,
        label_selector: selector,
        min_domains: c.min_domains,
        node_affinity_policy: inclusion_policy(
            c.node_affinity_policy.as_deref(),
            InclusionPolicy::Honor,
            "nodeAffinityPolicy",
        )?,
        node_taints_policy: inclusion_policy(
            c.node_taints_policy.as_deref(),
            InclusionPolicy::Ignore,
            "nodeTaintsPolicy",
        )?,
        match_label_keys,
    })
}

/// Host ports the pod asks for, as upstream v1.35's `util.GetHostPorts` lists them for both the
/// NodePorts filter and `NodeInfo`'s used ports: the ports of restartable init containers
/// (sidecars, `restartPolicy: Always`), then of the app containers; `hostPort > 0`, `hostIP`
/// defaulting to `0.0.0.0`, protocol to `TCP`. With `hostNetwork`, a port without `hostPort`
/// gets its `containerPort` (API defaulting). Duplicates within the pod are listed once
/// (upstream keeps a set).
pub fn host_ports(spec: &k8s::PodSpec) -> Vec<HostPort> {
    let host_network = spec.host_network == Some(true);
    let mut out: Vec<HostPort> = Vec::new();
    let sidecars = spec
        .init_containers
        .iter()
        .flatten()
        .filter(|c| c.restart_policy.as_deref() == Some("Always"));
    for port in sidecars.chain(&spec.containers).flat_map(|c| c.ports.iter().flatten()) {
        let mut host_port = port.host_port.unwrap_or(0);
        if host_port == 0 && host_network {
            host_port = port.container_port;
        }
        if host_port <= 0 {
            continue;
        }
        let hp = HostPort {
            host_ip: port
                .host_ip
                .clone()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "0.0.0.0".into()),
            protocol: port
                .protocol
                .clone()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "TCP".into()),
            port: host_port,
        };
        if !out.contains(&hp) {
            out.push(hp);
        }
    }
    out
}

/// Upstream `normalizedImageName`: adds `:latest` when the name has no tag (no `:` after the
/// last `/`; a digest `@sha256:…` counts as a tag).
pub fn normalized_image_name(name: &str) -> String {
    let colon = name.rfind(':').map_or(-1, |i| i as i64);
    let slash = name.rfind('/').map_or(-1, |i| i as i64);
    if colon <= slash { format!("{name}:latest") } else { name.to_string() }
}

/// Normalized images of the init containers, then the app containers (what upstream v1.35's
/// ImageLocality sums; it divides by the number of both kinds of containers).
pub fn pod_images(spec: &k8s::PodSpec) -> Vec<String> {
    spec.init_containers
        .iter()
        .flatten()
        .chain(&spec.containers)
        .map(|c| normalized_image_name(c.image.as_deref().unwrap_or("")))
        .collect()
}

/// The controlling owner reference (the first with `controller: true`).
pub fn controller_owner(meta: &metav1::ObjectMeta) -> Option<OwnerRef> {
    meta.owner_references.iter().flatten().find(|o| o.controller == Some(true)).map(|o| OwnerRef {
        kind: o.kind.clone(),
        name: o.name.clone(),
        uid: o.uid.clone(),
    })
}

/// `status.phase` (absent: `Pending`).
pub fn pod_phase(phase: Option<&str>) -> Result<PodPhase, ConvertError> {
    match phase {
        None | Some("") | Some("Pending") => Ok(PodPhase::Pending),
        Some("Running") => Ok(PodPhase::Running),
        Some("Succeeded") => Ok(PodPhase::Succeeded),
        Some("Failed") => Ok(PodPhase::Failed),
        Some("Unknown") => Ok(PodPhase::Unknown),
        Some(other) => Err(ConvertError::new(
            "status.phase",
            format!(
                "unknown pod phase {other:?} (expected Pending, Running, Succeeded, Failed or Unknown)"
            ),
        )),
    }
}

/// `preemptionPolicy` of a pod or PriorityClass.
pub fn preemption_policy(s: &str) -> Result<PreemptionPolicy, ConvertError> {
    match s {
        "PreemptLowerPriority" => Ok(PreemptionPolicy::PreemptLowerPriority),
        "Never" => Ok(PreemptionPolicy::Never),
        other => Err(ConvertError::new(
            "preemptionPolicy",
            format!("unknown preemption policy {other:?} (expected PreemptLowerPriority or Never)"),
        )),
    }
}

/// A timestamp as seconds since the Unix epoch.
pub fn unix_seconds(t: &metav1::Time) -> i64 {
    t.0.as_second()
}

/// A node with no pods: labels, taints, `spec.unschedulable`, allocatable (see
/// [`resources::node_allocatable`]) and `status.images` (names as the node reports them;
/// upstream does not normalize them).
pub fn node(n: &k8s::Node) -> Result<Node, ConvertError> {
    let name = n.metadata.name.clone().unwrap_or_default();
    let labels: Labels = n.metadata.labels.clone().unwrap_or_default();
    let allocatable = resources::node_allocatable(n.status.as_ref())?;
    let mut out = Node::new(name, labels, allocatable);
    let spec = n.spec.as_ref();
    for (i, t) in spec.and_then(|s| s.taints.as_ref()).into_iter().flatten().enumerate() {
        out.taints.push(taint(t).map_err(|e| e.at(&format!("spec.taints[{i}]")))?);
    }
    out.unschedulable = spec.and_then(|s| s.unschedulable) == Some(true);
    out.images = n
        .status
        .as_ref()
        .and_then(|s| s.images.as_ref())
        .into_iter()
        .flatten()
        .map(|img| NodeImage {
            names: img.names.clone().unwrap_or_default(),
            size_bytes: img.size_bytes.unwrap_or(0),
        })
        .collect();
    Ok(out)
}

/// What [`pod`] needs from the rest of the snapshot.
#[derive(Debug, Clone, Default)]
pub struct PodContext {
    /// The resolved priority.
    pub priority: i32,
    /// The resolved preemption policy.
    pub preemption_policy: PreemptionPolicy,
    /// The selector from [`crate::snapshot`]'s `DefaultSelector` counterpart.
    pub default_spread_selector: Option<LabelSelector>,
    /// The pod's gang, resolved against the snapshot's PodGroups.
    pub gang: Option<crate::model::GangRef>,
}

/// A pod, every field of [`Pod`]. Priority, preemption policy and the default spread selector
/// depend on other objects and come resolved in `ctx`.
pub fn pod(p: &k8s::Pod, ctx: &PodContext) -> Result<Pod, ConvertError> {
    let meta = &p.metadata;
    let default_spec = k8s::PodSpec::default();
    let spec = p.spec.as_ref().unwrap_or(&default_spec);
    let labels: Labels = meta.labels.clone().unwrap_or_default();
    let res = resources::pod_resources(spec, p.status.as_ref())?;

    let affinity = spec.affinity.as_ref();
    let node_affinity =
        affinity.and_then(|a| a.node_affinity.as_ref()).map(node_affinity).unwrap_or_default();
    let pod_affinity = match affinity.and_then(|a| a.pod_affinity.as_ref()) {
        Some(a) => pod_affinity(a, &labels).map_err(|e| e.at("spec.affinity.podAffinity"))?,
        None => PodAffinity::default(),
    };
    let pod_anti_affinity = match affinity.and_then(|a| a.pod_anti_affinity.as_ref()) {
        Some(a) => {
            pod_anti_affinity(a, &labels).map_err(|e| e.at("spec.affinity.podAntiAffinity"))?
        }
        None => PodAffinity::default(),
    };
    let mut tolerations = Vec::new();
    for (i, t) in spec.tolerations.iter().flatten().enumerate() {
        tolerations.push(toleration(t).map_err(|e| e.at(&format!("spec.tolerations[{i}]")))?);
    }
    let mut spread = Vec::new();
    for (i, c) in spec.topology_spread_constraints.iter().flatten().enumerate() {
        spread.push(
            topology_spread_constraint(c, &labels)
                .map_err(|e| e.at(&format!("spec.topologySpreadConstraints[{i}]")))?,
        );
    }
    let volumes = spec.volumes.iter().flatten();
    let pod_name = meta.name.as_deref().unwrap_or_default();
    let claims: Vec<PodClaim> = volumes
        .clone()
        .filter_map(|v| match (&v.persistent_volume_claim, &v.ephemeral) {
            (Some(c), _) => Some(PodClaim { claim: c.claim_name.clone(), ephemeral: false }),
            (None, Some(_)) => {
                Some(PodClaim { claim: format!("{pod_name}-{}", v.name), ephemeral: true })
            }
            (None, None) => None,
        })
        .collect();
    let has_pvc = !claims.is_empty();
    // descheduler's `IsPodWithLocalStorage`: an `emptyDir` or a `hostPath` volume.
    let has_local_storage = volumes.clone().any(|v| v.empty_dir.is_some() || v.host_path.is_some());
    let status = p.status.as_ref();

    Ok(Pod {
        namespace: meta.namespace.clone().unwrap_or_else(|| "default".to_string()),
        name: meta.name.clone().unwrap_or_default(),
        uid: meta.uid.clone().unwrap_or_default(),
        annotations: meta.annotations.clone().unwrap_or_default(),
        creation_timestamp: meta.creation_timestamp.as_ref().map_or(0, unix_seconds),
        start_time: status.and_then(|s| s.start_time.as_ref()).map(unix_seconds),
        node_name: spec.node_name.clone().filter(|n| !n.is_empty()),
        scheduler_name: spec
            .scheduler_name
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "default-scheduler".to_string()),
        priority: ctx.priority,
        preemption_policy: ctx.preemption_policy,
        requests: res.requests,
        non_zero_requests: res.non_zero,
        node_selector: spec.node_selector.clone().unwrap_or_default(),
        node_affinity,
        pod_affinity,
        pod_anti_affinity,
        tolerations,
        host_ports: host_ports(spec),
        topology_spread_constraints: spread,
        default_spread_selector: ctx.default_spread_selector.clone(),
        images: pod_images(spec),
        has_pvc,
        claims,
        has_local_storage,
        owner: controller_owner(meta),
        phase: pod_phase(status.and_then(|s| s.phase.as_deref()))?,
        terminating: meta.deletion_timestamp.is_some(),
        gang: ctx.gang.clone(),
        labels,
    })
}

/// A PersistentVolumeClaim: its namespace, name and what the volume PreFilters read.
pub fn claim(c: &k8s::PersistentVolumeClaim) -> (String, String, Claim) {
    let meta = &c.metadata;
    let spec = c.spec.as_ref();
    let annotations = meta.annotations.as_ref();
    let storage_class = annotations
        .and_then(|a| a.get(volume::ANN_BETA_STORAGE_CLASS))
        .cloned()
        .or_else(|| spec.and_then(|s| s.storage_class_name.clone()))
        .unwrap_or_default();
    let controller_uid = meta
        .owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
        .map(|r| r.uid.clone());
    let claim = Claim {
        volume_name: spec.and_then(|s| s.volume_name.clone()).unwrap_or_default(),
        bind_completed: annotations.is_some_and(|a| a.contains_key(volume::ANN_BIND_COMPLETED)),
        storage_class,
        lost: c.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Lost"),
        deleting: meta.deletion_timestamp.is_some(),
        controller_uid,
        read_write_once_pod: spec
            .and_then(|s| s.access_modes.as_ref())
            .is_some_and(|m| m.iter().any(|m| m == "ReadWriteOncePod")),
    };
    (
        meta.namespace.clone().unwrap_or_else(|| "default".to_string()),
        meta.name.clone().unwrap_or_default(),
        claim,
    )
}

/// A PodDisruptionBudget. A selector that does not parse selects nothing (upstream's
/// preemption skips such PDBs), reported as `Err` so the caller can warn and keep `None`.
pub fn pdb(p: &policy::PodDisruptionBudget) -> (Pdb, Option<ConvertError>) {
    let selector = p.spec.as_ref().and_then(|s| s.selector.as_ref());
    let (selector, error) = match optional_label_selector(selector) {
        Ok(s) => (s, None),
        Err(e) => (None, Some(e.at("spec.selector"))),
    };
    let status = p.status.as_ref();
    let disrupted: BTreeMap<String, metav1::Time> =
        status.and_then(|s| s.disrupted_pods.clone()).unwrap_or_default();
    let pdb = Pdb {
        namespace: p.metadata.namespace.clone().unwrap_or_else(|| "default".to_string()),
        name: p.metadata.name.clone().unwrap_or_default(),
        selector,
        disruptions_allowed: status.and_then(|s| s.disruptions_allowed).unwrap_or(0),
        disrupted_pods: disrupted.into_keys().collect(),
    };
    (pdb, error)
}

#[cfg(test)]
mod tests;
