//! From a [`Snapshot`] to the scheduling model: nodes with their pods, pending pods, PDBs.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1 as k8s;
use rayon::prelude::*;

use super::convert::{self, ConvertError, PodContext};
use super::{BatchFilter, ObjectRef, PodGroup, Snapshot, SnapshotError, Source, Sourced, Warning};
use crate::model::gang::{
    COSCHEDULING_POD_GROUP_LABEL, VOLCANO_CONTROLLER_GROUP_NAME_ANNOTATION,
    VOLCANO_GROUP_NAME_ANNOTATION, gang_membership,
};
use crate::model::{
    Claims, ClusterState, GangConvention, GangIndex, GangKey, GangRef, LabelSelector, Labels,
    MatchOp, Pod, PreemptionPolicy, Requirement,
};

/// Scheduler names kplace serves unless told otherwise.
pub const DEFAULT_SCHEDULER_NAMES: &[&str] = &["default-scheduler", "kplace"];

/// The PriorityClasses every API server creates (`scheduling.SystemPriorityClasses()`), used
/// when a snapshot does not include them: (name, value).
const SYSTEM_PRIORITY_CLASSES: &[(&str, i32)] =
    &[("system-node-critical", 2_000_001_000), ("system-cluster-critical", 2_000_000_000)];

/// How to build a [`Cluster`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildOptions {
    /// Pending pods whose `spec.schedulerName` is one of these are placed by kplace.
    pub scheduler_names: Vec<String>,
    /// Which pending pods form the batch (`-n`/`-l`); the others are not placed in this run.
    pub batch: BatchFilter,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            scheduler_names: DEFAULT_SCHEDULER_NAMES.iter().map(|s| (*s).to_string()).collect(),
            batch: BatchFilter::default(),
        }
    }
}

/// Pods left out of the model, by reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct IgnoredPods {
    /// Pending pods of a scheduler kplace does not serve.
    pub other_scheduler: usize,
    /// Pods in phase Succeeded or Failed (the scheduler's informer filters them out).
    pub terminal: usize,
    /// Pending pods being deleted (`metadata.deletionTimestamp`; the scheduler skips them).
    pub terminating: usize,
    /// Pending pods with `spec.schedulingGates` (not scheduled until the gates are removed).
    pub gated: usize,
    /// Pods bound to a node that is not in the snapshot.
    pub unknown_node: usize,
    /// Pending pods outside the batch that `-n`/`-l` chose (not placed in this run).
    #[serde(skip_serializing_if = "is_zero")]
    pub outside_batch: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A snapshot in the scheduling model.
#[derive(Debug, Clone)]
pub struct Cluster {
    /// Nodes (sorted by name) with their bound, non-terminal pods (added in namespace/name
    /// order), namespace labels and PDBs.
    pub state: ClusterState,
    /// Pods to place: no `spec.nodeName`, not terminal, not being deleted, not gated, and
    /// served by kplace. Sorted by namespace, then name.
    pub pending: Vec<Pod>,
    /// Counts of the pods left out, by reason.
    pub ignored: IgnoredPods,
    /// Findings that do not stop the run (the snapshot's own warnings first).
    pub warnings: Vec<Warning>,
    /// The gangs among the pods of the model (see [`crate::model::gang`]): pending members as
    /// indices into `pending`, bound members counted, `minMember` resolved.
    pub gangs: GangIndex,
}

/// A resolved PriorityClass.
#[derive(Debug, Clone, Copy)]
struct Class {
    value: i32,
    policy: PreemptionPolicy,
}

/// Builds the model from a snapshot. See [`Cluster`] for what goes where.
pub fn build(snapshot: &Snapshot, options: &BuildOptions) -> Result<Cluster, SnapshotError> {
    let mut warnings = snapshot.warnings.clone();
    let field_error = |at: &Source, object: &ObjectRef, e: ConvertError| SnapshotError::Field {
        at: Box::new(at.clone()),
        object: Box::new(object.clone()),
        field: e.field,
        message: e.message,
    };

    // Priority classes, and the global default (the lowest value among those marked, as the
    // admission plugin picks when several are).
    let mut classes: BTreeMap<String, Class> = SYSTEM_PRIORITY_CLASSES
        .iter()
        .map(|(n, v)| {
            ((*n).to_string(), Class { value: *v, policy: PreemptionPolicy::PreemptLowerPriority })
        })
        .collect();
    let mut global_default: Option<(i32, String)> = None;
    for pc in &snapshot.priority_classes {
        let name = pc.object.metadata.name.clone().unwrap_or_default();
        let object =
            ObjectRef { kind: "PriorityClass".into(), namespace: None, name: name.clone() };
        let policy = match pc.object.preemption_policy.as_deref() {
            None | Some("") => PreemptionPolicy::PreemptLowerPriority,
            Some(p) => {
                convert::preemption_policy(p).map_err(|e| field_error(&pc.source, &object, e))?
            }
        };
        // `value` is required by the API; the v1.37 types make it optional, so its absence is
        // reported like any other invalid field.
        let value = pc.object.value.ok_or_else(|| {
            field_error(
                &pc.source,
                &object,
                ConvertError::new("value", "required field is missing"),
            )
        })?;
        classes.insert(name.clone(), Class { value, policy });
        if pc.object.global_default == Some(true) {
            let candidate = (value, name);
            if global_default.as_ref().is_none_or(|d| candidate < *d) {
                global_default = Some(candidate);
            }
        }
    }
    let default_class = global_default.as_ref().and_then(|(_, n)| classes.get(n).copied());

    // Namespaces: the API server always labels them with their own name.
    let mut namespace_labels: BTreeMap<String, Labels> = BTreeMap::new();
    for ns in &snapshot.namespaces {
        let name = ns.object.metadata.name.clone().unwrap_or_default();
        let mut labels = ns.object.metadata.labels.clone().unwrap_or_default();
        labels.insert("kubernetes.io/metadata.name".to_string(), name.clone());
        namespace_labels.insert(name, labels);
    }

    // Nodes, converted on all cores, then sorted by name; the first error in file order stops.
    let converted: Vec<_> = snapshot
        .nodes
        .par_iter()
        .with_min_len(256)
        .map(|n| {
            let object = ObjectRef {
                kind: "Node".into(),
                namespace: None,
                name: n.object.metadata.name.clone().unwrap_or_default(),
            };
            let node = convert::node(&n.object).map_err(|e| field_error(&n.source, &object, e))?;
            let mut node_warnings = Vec::new();
            if let Some(status) = &n.object.status
                && let (Some(alloc), Some(cap)) = (&status.allocatable, &status.capacity)
            {
                for name in cap.keys().filter(|k| !alloc.contains_key(*k)) {
                    node_warnings.push(Warning {
                        source: Some(n.source.clone()),
                        object: Some(object.clone()),
                        message: format!(
                            "status.allocatable has no {name:?} although status.capacity has; \
                             counted as 0, as kube-scheduler does"
                        ),
                    });
                }
            }
            Ok((node, node_warnings))
        })
        .collect();
    let mut nodes = Vec::with_capacity(converted.len());
    for c in converted {
        let (node, node_warnings) = c?;
        warnings.extend(node_warnings);
        nodes.push(node);
    }
    nodes.sort_by(|a, b| a.name.cmp(&b.name));
    let mut state = ClusterState { nodes, namespace_labels, ..Default::default() };

    // PersistentVolumeClaims, for the claim checks of the volume plugins' PreFilters.
    let mut claims = Claims::default();
    for c in &snapshot.pvcs {
        let (namespace, name, claim) = convert::claim(&c.object);
        claims.insert(&namespace, &name, claim);
    }
    state.claims = Arc::new(claims);
    // Pending pods that use claims, warned about below.
    let mut claim_pods: Vec<(Source, ObjectRef)> = Vec::new();

    let selectors = SelectorIndex::new(snapshot);

    // Pods in namespace/name order.
    let mut pods: Vec<_> = snapshot.pods.iter().collect();
    pods.sort_by(|a, b| {
        (&a.object.metadata.namespace, &a.object.metadata.name)
            .cmp(&(&b.object.metadata.namespace, &b.object.metadata.name))
    });
    // What each pod becomes, worked out on all cores; the effects are then applied in order, so
    // counts, warnings and the first error are those of a one-by-one pass.
    let steps: Vec<PodStep> = pods
        .par_iter()
        .with_min_len(256)
        .map(|p| pod_step(p, options, &classes, default_class, &selectors, &field_error))
        .collect();
    let mut pending = Vec::new();
    let mut ignored = IgnoredPods::default();
    let mut gangs = GangBuilder::default();
    // Pending gang members outside the batch, per gang.
    let mut outside_gangs: BTreeMap<GangKey, usize> = BTreeMap::new();
    for (p, step) in pods.iter().zip(steps) {
        let (node_name, pod, pod_warnings) = match step {
            PodStep::Error(e) => return Err(e),
            PodStep::Terminal => {
                ignored.terminal += 1;
                continue;
            }
            PodStep::OutsideBatch(gang) => {
                ignored.outside_batch += 1;
                if let Some(key) = gang {
                    *outside_gangs.entry(key).or_insert(0usize) += 1;
                }
                continue;
            }
            PodStep::Terminating => {
                ignored.terminating += 1;
                continue;
            }
            PodStep::OtherScheduler => {
                ignored.other_scheduler += 1;
                continue;
            }
            PodStep::Gated(warning) => {
                ignored.gated += 1;
                warnings.push(*warning);
                continue;
            }
            PodStep::Model { node_name, pod, warnings } => (node_name, pod, warnings),
        };
        warnings.extend(pod_warnings);
        let object = || ObjectRef {
            kind: "Pod".into(),
            namespace: p.object.metadata.namespace.clone(),
            name: p.object.metadata.name.clone().unwrap_or_default(),
        };
        match &node_name {
            Some(node) => match state.node_index(node) {
                Some(i) => {
                    gangs.count(&pod);
                    state.nodes[i].add_pod(Arc::new(*pod));
                }
                None => {
                    ignored.unknown_node += 1;
                    warnings.push(Warning {
                        source: Some(p.source.clone()),
                        object: Some(object()),
                        message: format!(
                            "bound to node {node:?}, which is not in the snapshot; the pod is ignored"
                        ),
                    });
                }
            },
            None => {
                gangs.count(&pod);
                if pod.has_pvc {
                    claim_pods.push((p.source.clone(), object()));
                }
                pending.push(*pod);
            }
        }
    }

    if !claim_pods.is_empty() && snapshot.pvcs.is_empty() {
        warnings.push(Warning {
            source: None,
            object: None,
            message: format!(
                "{} pending pod(s) use PersistentVolumeClaims but the snapshot holds none: they \
                 fail VolumeBinding's PreFilter (claim not found), as kube-scheduler would fail \
                 them; take the claims with the snapshot (kubectl get pvc -A -o yaml, or \
                 `kplace snapshot`) to have them checked",
                claim_pods.len()
            ),
        });
    }
    for (source, object) in claim_pods {
        warnings.push(Warning {
            source: Some(source),
            object: Some(object),
            message: "pod uses PersistentVolumeClaims: the claims are checked (VolumeBinding's \
                      PreFilter), not their volumes (PersistentVolume node affinity, VolumeZone, \
                      NodeVolumeLimits and VolumeRestrictions' conflicts are not evaluated)"
                .to_string(),
        });
    }

    // PodDisruptionBudgets, by namespace and name.
    for p in &snapshot.pdbs {
        let (pdb, error) = convert::pdb(&p.object);
        if let Some(e) = error {
            warnings.push(Warning {
                source: Some(p.source.clone()),
                object: Some(ObjectRef {
                    kind: "PodDisruptionBudget".into(),
                    namespace: Some(pdb.namespace.clone()),
                    name: pdb.name.clone(),
                }),
                message: format!("{e}; the budget selects no pods, as preemption treats it"),
            });
        }
        state.pdbs.push(pdb);
    }
    state.pdbs.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));

    for (key, outside) in &outside_gangs {
        let Some(members) = gangs.members.get(key) else { continue };
        warnings.push(Warning {
            source: None,
            object: Some(ObjectRef {
                kind: key.convention.pod_group_kind(),
                namespace: Some(key.namespace.clone()),
                name: key.name.clone(),
            }),
            message: format!(
                "{} outside the batch (-n/-l) and not placed in this run; only the group's {} \
                 in the batch or bound count towards its minMember",
                if *outside == 1 {
                    "1 pending pod of the group is".to_string()
                } else {
                    format!("{outside} pending pods of the group are")
                },
                if members.len() == 1 {
                    "1 pod".to_string()
                } else {
                    format!("{} pods", members.len())
                }
            ),
        });
    }
    let gangs = gangs.finish(snapshot, &mut state, &mut pending, &mut warnings);
    Ok(Cluster { state, pending, ignored, warnings, gangs })
}

/// What one pod of the snapshot becomes in the model.
enum PodStep {
    /// Succeeded or Failed.
    Terminal,
    /// Pending outside the batch (`-n`/`-l`), with the gang it names.
    OutsideBatch(Option<GangKey>),
    /// Pending and being deleted.
    Terminating,
    /// Pending for a scheduler kplace does not serve.
    OtherScheduler,
    /// Pending with scheduling gates (the warning).
    Gated(Box<Warning>),
    /// In the model: bound to `node_name`, or pending; with its gang warnings.
    Model { node_name: Option<String>, pod: Box<Pod>, warnings: Vec<Warning> },
    /// The load stops.
    Error(SnapshotError),
}

/// See [`PodStep`]; `field_error` words a conversion error.
fn pod_step(
    p: &Sourced<k8s::Pod>,
    options: &BuildOptions,
    classes: &BTreeMap<String, Class>,
    default_class: Option<Class>,
    selectors: &SelectorIndex<'_>,
    field_error: &(impl Fn(&Source, &ObjectRef, ConvertError) -> SnapshotError + Sync),
) -> PodStep {
    let k8s_pod = &p.object;
    let object = ObjectRef {
        kind: "Pod".into(),
        namespace: k8s_pod.metadata.namespace.clone(),
        name: k8s_pod.metadata.name.clone().unwrap_or_default(),
    };
    let spec = k8s_pod.spec.as_ref();
    let phase = match convert::pod_phase(k8s_pod.status.as_ref().and_then(|s| s.phase.as_deref())) {
        Ok(phase) => phase,
        Err(e) => return PodStep::Error(field_error(&p.source, &object, e)),
    };
    if matches!(phase, crate::model::PodPhase::Succeeded | crate::model::PodPhase::Failed) {
        return PodStep::Terminal;
    }
    let node_name = spec.and_then(|s| s.node_name.clone()).filter(|n| !n.is_empty());
    if node_name.is_none() {
        if !options.batch.admits_pod(k8s_pod) {
            let empty = Labels::new();
            let meta = &k8s_pod.metadata;
            let labels = meta.labels.as_ref().unwrap_or(&empty);
            let annotations = meta.annotations.as_ref().unwrap_or(&empty);
            let gang = gang_membership(labels, annotations).map(|(convention, name)| GangKey {
                convention,
                namespace: meta.namespace.clone().unwrap_or_else(|| "default".into()),
                name: name.to_string(),
            });
            return PodStep::OutsideBatch(gang);
        }
        let scheduler = spec
            .and_then(|s| s.scheduler_name.as_deref())
            .filter(|s| !s.is_empty())
            .unwrap_or("default-scheduler");
        if k8s_pod.metadata.deletion_timestamp.is_some() {
            return PodStep::Terminating;
        }
        if !options.scheduler_names.iter().any(|s| s == scheduler) {
            return PodStep::OtherScheduler;
        }
        if spec.and_then(|s| s.scheduling_gates.as_ref()).is_some_and(|g| !g.is_empty()) {
            return PodStep::Gated(Box::new(Warning {
                source: Some(p.source.clone()),
                object: Some(object),
                message: "pod has scheduling gates; it is not placed until they are removed"
                    .to_string(),
            }));
        }
    }
    let (priority, preemption_policy) = match resolve_priority(k8s_pod, classes, default_class) {
        Ok(r) => r,
        Err(e) => return PodStep::Error(field_error(&p.source, &object, e)),
    };
    let mut warnings = Vec::new();
    let gang = GangBuilder::member(k8s_pod, &object, &p.source, &mut warnings);
    let ctx = PodContext {
        priority,
        preemption_policy,
        default_spread_selector: selectors.default_selector(k8s_pod),
        gang,
    };
    match convert::pod(k8s_pod, &ctx) {
        Ok(pod) => PodStep::Model { node_name, pod: Box::new(pod), warnings },
        Err(e) => PodStep::Error(field_error(&p.source, &object, e)),
    }
}

/// At most this many pod names are listed in a gang warning.
const LISTED_PODS: usize = 8;

/// `a, b, c and 4 more`.
fn pod_list(pods: &[String]) -> String {
    let shown: Vec<&str> = pods.iter().take(LISTED_PODS).map(String::as_str).collect();
    let mut out = shown.join(", ");
    if pods.len() > LISTED_PODS {
        out.push_str(&format!(" and {} more", pods.len() - LISTED_PODS));
    }
    out
}

/// Gang membership gathered while the pods are converted: each member's [`GangRef`] gets a
/// provisional `min_member` of 0, resolved by [`GangBuilder::finish`] once every pod of the
/// model is known.
#[derive(Debug, Default)]
struct GangBuilder {
    /// Pods of the model (pending and bound) per gang, as `namespace/name`.
    members: BTreeMap<GangKey, Vec<String>>,
}

impl GangBuilder {
    /// The gang a pod names (coscheduling label, else Volcano annotation), warning when it names
    /// both or only Volcano's controller annotation.
    fn member(
        pod: &k8s::Pod,
        object: &ObjectRef,
        source: &Source,
        warnings: &mut Vec<Warning>,
    ) -> Option<GangRef> {
        let empty = BTreeMap::new();
        let labels = pod.metadata.labels.as_ref().unwrap_or(&empty);
        let annotations = pod.metadata.annotations.as_ref().unwrap_or(&empty);
        let mut warn = |message: String| {
            warnings.push(Warning {
                source: Some(source.clone()),
                object: Some(object.clone()),
                message,
            })
        };
        let cosched = GangConvention::Coscheduling.group_of(labels, annotations);
        let volcano = GangConvention::Volcano.group_of(labels, annotations);
        if let (Some(c), Some(v)) = (cosched, volcano) {
            warn(format!(
                "pod has both the label {COSCHEDULING_POD_GROUP_LABEL}={c:?} and the annotation \
                 {VOLCANO_GROUP_NAME_ANNOTATION}={v:?}; it is a member of the coscheduling \
                 group {c:?} only"
            ));
        }
        if volcano.is_none()
            && let Some(v) =
                annotations.get(VOLCANO_CONTROLLER_GROUP_NAME_ANNOTATION).filter(|v| !v.is_empty())
        {
            warn(format!(
                "pod has the annotation {VOLCANO_CONTROLLER_GROUP_NAME_ANNOTATION}={v:?} but not \
                 {VOLCANO_GROUP_NAME_ANNOTATION}, the one the Volcano scheduler reads; it is \
                 not treated as a member of Volcano group {v:?}"
            ));
        }
        let (convention, name) = gang_membership(labels, annotations)?;
        Some(GangRef { convention, name: name.to_string(), min_member: 0 })
    }

    /// Records a pod of the model (pending, or bound to a node of the snapshot).
    fn count(&mut self, pod: &Pod) {
        if let Some(key) = pod.gang_key() {
            self.members.entry(key).or_default().push(pod.key());
        }
    }

    /// Resolves each gang's `minMember` from its PodGroup — or, without one, the number of its
    /// pods in the model, with a warning — writes it into every member, and indexes the gangs.
    fn finish(
        self,
        snapshot: &Snapshot,
        state: &mut ClusterState,
        pending: &mut [Pod],
        warnings: &mut Vec<Warning>,
    ) -> GangIndex {
        if self.members.is_empty() {
            return GangIndex::new(state, pending);
        }
        let groups: BTreeMap<GangKey, &Sourced<PodGroup>> = snapshot
            .pod_groups
            .iter()
            .map(|g| {
                let key = GangKey {
                    convention: g.object.convention,
                    namespace: g.object.namespace.clone(),
                    name: g.object.name.clone(),
                };
                (key, g)
            })
            .collect();
        let mut min_of: BTreeMap<&GangKey, i32> = BTreeMap::new();
        for (key, pods) in &self.members {
            let object = ObjectRef {
                kind: key.convention.pod_group_kind(),
                namespace: Some(key.namespace.clone()),
                name: key.name.clone(),
            };
            let present = i32::try_from(pods.len()).unwrap_or(i32::MAX);
            let min = match groups.get(key) {
                Some(group) => {
                    let min = group.object.min_member;
                    if min == 0 {
                        warnings.push(Warning {
                            source: Some(group.source.clone()),
                            object: Some(object),
                            message: format!(
                                "spec.minMember is 0 (or absent), so the group's {} pods are not \
                                 held together: {}",
                                pods.len(),
                                pod_list(pods)
                            ),
                        });
                    } else if present < min {
                        warnings.push(Warning {
                            source: Some(group.source.clone()),
                            object: Some(object),
                            message: format!(
                                "the group has {present} pods but spec.minMember {min}, so none \
                                 of its pending pods can be placed: {}",
                                pod_list(pods)
                            ),
                        });
                    }
                    min
                }
                None => {
                    warnings.push(Warning {
                        source: None,
                        object: Some(object),
                        message: format!(
                            "no {} {} in the snapshot for the pods with the {} {}={:?}; the \
                             group is treated as all {present} pods present (minMember \
                             {present}): {}",
                            key.convention.api_version(),
                            POD_GROUP,
                            key.convention.pod_key_kind(),
                            key.convention.pod_key(),
                            key.name,
                            pod_list(pods)
                        ),
                    });
                    present
                }
            };
            min_of.insert(key, min);
        }
        let resolve = |pod: &mut Pod| {
            if let Some(key) = pod.gang_key()
                && let Some(gang) = pod.gang.as_mut()
            {
                gang.min_member = min_of.get(&key).copied().unwrap_or(0);
            }
        };
        for pod in pending.iter_mut() {
            resolve(pod);
        }
        for node in &mut state.nodes {
            for pod in &mut node.pods {
                if pod.gang.is_some() {
                    resolve(Arc::make_mut(pod));
                }
            }
        }
        GangIndex::new(state, pending)
    }
}

/// The kind's name in messages.
const POD_GROUP: &str = "PodGroup";

/// Priority and preemption policy as the Priority admission plugin sets them: `spec.priority`
/// when present; else the value of `spec.priorityClassName` (an unknown class is an error);
/// else the global default class; else 0 and `PreemptLowerPriority`.
fn resolve_priority(
    pod: &k8s::Pod,
    classes: &BTreeMap<String, Class>,
    default_class: Option<Class>,
) -> Result<(i32, PreemptionPolicy), ConvertError> {
    let spec = pod.spec.as_ref();
    let class_name = spec.and_then(|s| s.priority_class_name.as_deref()).filter(|s| !s.is_empty());
    let class = match class_name {
        Some(name) => match classes.get(name) {
            Some(c) => Some(*c),
            None if spec.and_then(|s| s.priority).is_some() => None,
            None => {
                return Err(ConvertError::new(
                    "spec.priorityClassName",
                    format!(
                        "no PriorityClass named {name:?} in the snapshot, and no spec.priority"
                    ),
                ));
            }
        },
        None => default_class,
    };
    let priority = spec.and_then(|s| s.priority).or(class.map(|c| c.value)).unwrap_or(0);
    let policy = match spec.and_then(|s| s.preemption_policy.as_deref()).filter(|s| !s.is_empty()) {
        Some(p) => convert::preemption_policy(p).map_err(|e| e.at("spec"))?,
        None => class.map_or(PreemptionPolicy::PreemptLowerPriority, |c| c.policy),
    };
    Ok((priority, policy))
}

/// A Service's name and selector.
type NamedSelector<'a> = (&'a str, &'a BTreeMap<String, String>);

/// Services, ReplicationControllers, ReplicaSets and StatefulSets by namespace, for upstream's
/// `helper.DefaultSelector`.
struct SelectorIndex<'a> {
    /// Service selectors by namespace, in name order (nil selectors left out: they select
    /// nothing).
    services: BTreeMap<&'a str, Vec<&'a BTreeMap<String, String>>>,
    rcs: BTreeMap<(&'a str, &'a str), &'a k8s::ReplicationController>,
    rss: BTreeMap<(&'a str, &'a str), &'a k8s_openapi::api::apps::v1::ReplicaSet>,
    sss: BTreeMap<(&'a str, &'a str), &'a k8s_openapi::api::apps::v1::StatefulSet>,
}

fn key_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> (&str, &str) {
    (meta.namespace.as_deref().unwrap_or("default"), meta.name.as_deref().unwrap_or(""))
}

impl<'a> SelectorIndex<'a> {
    fn new(snapshot: &'a Snapshot) -> Self {
        let mut services: BTreeMap<&str, Vec<NamedSelector<'_>>> = BTreeMap::new();
        for s in &snapshot.services {
            if let Some(sel) = s.object.spec.as_ref().and_then(|sp| sp.selector.as_ref()) {
                let (ns, name) = key_of(&s.object.metadata);
                services.entry(ns).or_default().push((name, sel));
            }
        }
        let services = services
            .into_iter()
            .map(|(ns, mut v)| {
                v.sort_by(|a, b| a.0.cmp(b.0));
                (ns, v.into_iter().map(|(_, s)| s).collect())
            })
            .collect();
        SelectorIndex {
            services,
            rcs: snapshot
                .replication_controllers
                .iter()
                .map(|o| (key_of(&o.object.metadata), &o.object))
                .collect(),
            rss: snapshot
                .replica_sets
                .iter()
                .map(|o| (key_of(&o.object.metadata), &o.object))
                .collect(),
            sss: snapshot
                .stateful_sets
                .iter()
                .map(|o| (key_of(&o.object.metadata), &o.object))
                .collect(),
        }
    }

    /// Upstream `DefaultSelector`: the merged selectors of the Services selecting the pod, plus
    /// its controlling ReplicationController's selector (merged) or ReplicaSet's/StatefulSet's
    /// requirements (added). `None` when empty.
    fn default_selector(&self, pod: &k8s::Pod) -> Option<LabelSelector> {
        let (ns, _) = key_of(&pod.metadata);
        let pod_labels = pod.metadata.labels.clone().unwrap_or_default();
        let mut set: BTreeMap<String, String> = BTreeMap::new();
        for sel in self.services.get(ns).into_iter().flatten() {
            if sel.iter().all(|(k, v)| pod_labels.get(k) == Some(v)) {
                set.extend(sel.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        let mut extra: Vec<Requirement> = Vec::new();
        if let Some(owner) =
            pod.metadata.owner_references.iter().flatten().find(|o| o.controller == Some(true))
        {
            let gv_ok = owner.api_version.matches('/').count() <= 1;
            let key = (ns, owner.name.as_str());
            match (owner.api_version.as_str(), owner.kind.as_str()) {
                ("v1", "ReplicationController") if gv_ok => {
                    if let Some(rc) = self.rcs.get(&key) {
                        set.extend(rc_selector(rc));
                    }
                }
                ("apps/v1", "ReplicaSet") => {
                    if let Some(rs) = self.rss.get(&key)
                        && let Ok(sel) = convert::label_selector(&rs.spec.selector)
                    {
                        extra.extend(sel.requirements);
                    }
                }
                ("apps/v1", "StatefulSet") => {
                    if let Some(ss) = self.sss.get(&key)
                        && let Ok(sel) = convert::label_selector(&ss.spec.selector)
                    {
                        extra.extend(sel.requirements);
                    }
                }
                _ => {}
            }
        }
        let mut selector = LabelSelector {
            requirements: set
                .into_iter()
                .map(|(k, v)| Requirement { key: k, op: MatchOp::In, values: vec![v] })
                .chain(extra)
                .collect(),
        };
        selector.normalize();
        (!selector.is_empty()).then_some(selector)
    }
}

/// A ReplicationController's selector, defaulted to its template's labels when empty
/// (`SetDefaults_ReplicationController`).
fn rc_selector(rc: &k8s::ReplicationController) -> BTreeMap<String, String> {
    let spec = rc.spec.as_ref();
    let selector = spec.and_then(|s| s.selector.clone()).unwrap_or_default();
    if !selector.is_empty() {
        return selector;
    }
    spec.and_then(|s| s.template.as_ref())
        .and_then(|t| t.metadata.as_ref())
        .and_then(|m| m.labels.clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
