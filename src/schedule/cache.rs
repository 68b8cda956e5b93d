//! The cluster as `kplace schedule` sees it: the reflectors' caches turned into the same
//! [`Snapshot`] that manifests load into, then into the model by [`snapshot::build`] — one
//! conversion for files and for a live cluster.
//!
//! Input: the cached objects (Arc'd, as reflector stores hand them out), the pods this scheduler
//! has bound but not yet seen bound ("assumed", upstream's `AssumePod`), and the served
//! scheduler names; output: a [`snapshot::Cluster`], and the objects left out because they do
//! not convert (each with the reason), so one malformed object never stops scheduling.
//! Upstream (v1.35): `pkg/scheduler/backend/cache/cache.go` (assumed pods count on their node
//! until the informer shows them bound), `pkg/scheduler/eventhandlers.go` (which pods the
//! scheduler queues: unassigned, not terminal, not being deleted, of a served scheduler name).

use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{
    Namespace, Node, PersistentVolumeClaim, Pod, ReplicationController, Service,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::snapshot::{
    self, BuildOptions, Cluster, ObjectRef, Snapshot, SnapshotError, Source, Sourced,
};

use super::queue::QueuedPod;

/// Every cached object, as the stores hand them out.
#[derive(Debug, Clone, Default)]
pub struct Objects {
    /// Nodes.
    pub nodes: Vec<Arc<Node>>,
    /// Pods.
    pub pods: Vec<Arc<Pod>>,
    /// PodDisruptionBudgets.
    pub pdbs: Vec<Arc<PodDisruptionBudget>>,
    /// PersistentVolumeClaims.
    pub pvcs: Vec<Arc<PersistentVolumeClaim>>,
    /// PriorityClasses.
    pub priority_classes: Vec<Arc<PriorityClass>>,
    /// Namespaces.
    pub namespaces: Vec<Arc<Namespace>>,
    /// Services.
    pub services: Vec<Arc<Service>>,
    /// ReplicationControllers.
    pub replication_controllers: Vec<Arc<ReplicationController>>,
    /// ReplicaSets.
    pub replica_sets: Vec<Arc<ReplicaSet>>,
    /// StatefulSets.
    pub stateful_sets: Vec<Arc<StatefulSet>>,
}

/// A pod this scheduler bound (or is binding) whose binding the pod cache does not show yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assumed {
    /// The pod's UID (a pod recreated under the same name is not assumed).
    pub uid: String,
    /// The node it was bound to.
    pub node: String,
}

/// The model built from the caches.
#[derive(Debug, Clone)]
pub struct Built {
    /// The cluster and its pending pods.
    pub cluster: Cluster,
    /// Objects left out because they do not convert, with the error.
    pub excluded: Vec<(ObjectRef, String)>,
}

/// `namespace/name` of an object.
pub fn key_of(meta: &ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or("default"),
        meta.name.as_deref().unwrap_or_default()
    )
}

fn object_ref(kind: &str, meta: &ObjectMeta, namespaced: bool) -> ObjectRef {
    ObjectRef {
        kind: kind.to_string(),
        namespace: namespaced.then(|| meta.namespace.clone().unwrap_or("default".to_string())),
        name: meta.name.clone().unwrap_or_default(),
    }
}

/// Adds the objects of one kind that are not excluded, each with a source naming the cache.
fn add<K: Clone>(
    out: &mut Vec<Sourced<K>>,
    objects: &[Arc<K>],
    kind: &str,
    namespaced: bool,
    meta: impl Fn(&K) -> &ObjectMeta,
    excluded: &BTreeSet<ObjectRef>,
    mut adjust: impl FnMut(&mut K),
) {
    let file = PathBuf::from(format!("<{} cache>", kind.to_lowercase()));
    for (i, o) in objects.iter().enumerate() {
        if excluded.contains(&object_ref(kind, meta(o), namespaced)) {
            continue;
        }
        let mut object = K::clone(o);
        adjust(&mut object);
        out.push(Sourced {
            object,
            source: Source { file: file.clone(), document: i, item: None, line: None },
        });
    }
}

/// The cached objects as a snapshot: namespaced objects without a namespace get `default`,
/// assumed pods carry their node, excluded objects are left out.
pub fn snapshot_of(
    objects: &Objects,
    assumed: &BTreeMap<String, Assumed>,
    excluded: &BTreeSet<ObjectRef>,
) -> Snapshot {
    fn default_ns(meta: &mut ObjectMeta) {
        if meta.namespace.as_deref().is_none_or(str::is_empty) {
            meta.namespace = Some("default".to_string());
        }
    }
    let mut s = Snapshot::new();
    add(&mut s.nodes, &objects.nodes, "Node", false, |o| &o.metadata, excluded, |_| {});
    add(
        &mut s.pods,
        &objects.pods,
        "Pod",
        true,
        |o| &o.metadata,
        excluded,
        |p| {
            default_ns(&mut p.metadata);
            let key = key_of(&p.metadata);
            if let Some(a) = assumed.get(&key)
                && p.metadata.uid.as_deref() == Some(a.uid.as_str())
                && let Some(spec) = p.spec.as_mut()
                && spec.node_name.as_deref().is_none_or(str::is_empty)
            {
                spec.node_name = Some(a.node.clone());
            }
        },
    );
    add(
        &mut s.pdbs,
        &objects.pdbs,
        "PodDisruptionBudget",
        true,
        |o| &o.metadata,
        excluded,
        |o| default_ns(&mut o.metadata),
    );
    add(
        &mut s.pvcs,
        &objects.pvcs,
        "PersistentVolumeClaim",
        true,
        |o| &o.metadata,
        excluded,
        |o| default_ns(&mut o.metadata),
    );
    let pcs = &objects.priority_classes;
    add(&mut s.priority_classes, pcs, "PriorityClass", false, |o| &o.metadata, excluded, |_| {});
    add(
        &mut s.namespaces,
        &objects.namespaces,
        "Namespace",
        false,
        |o| &o.metadata,
        excluded,
        |_| {},
    );
    add(
        &mut s.services,
        &objects.services,
        "Service",
        true,
        |o| &o.metadata,
        excluded,
        |o| default_ns(&mut o.metadata),
    );
    let rcs = &objects.replication_controllers;
    add(
        &mut s.replication_controllers,
        rcs,
        "ReplicationController",
        true,
        |o| &o.metadata,
        excluded,
        |o| default_ns(&mut o.metadata),
    );
    add(
        &mut s.replica_sets,
        &objects.replica_sets,
        "ReplicaSet",
        true,
        |o| &o.metadata,
        excluded,
        |o| default_ns(&mut o.metadata),
    );
    add(
        &mut s.stateful_sets,
        &objects.stateful_sets,
        "StatefulSet",
        true,
        |o| &o.metadata,
        excluded,
        |o| default_ns(&mut o.metadata),
    );
    s
}

/// Builds the model from the caches through [`snapshot::build`]. An object that does not
/// convert (a field error) is left out and the build is run again; any other error is returned.
pub fn build_cluster(
    objects: &Objects,
    assumed: &BTreeMap<String, Assumed>,
    scheduler_names: &[String],
) -> Result<Built, SnapshotError> {
    let options =
        BuildOptions { scheduler_names: scheduler_names.to_vec(), ..BuildOptions::default() };
    let mut excluded: BTreeSet<ObjectRef> = BTreeSet::new();
    let mut reasons: Vec<(ObjectRef, String)> = Vec::new();
    loop {
        let snapshot = snapshot_of(objects, assumed, &excluded);
        match snapshot::build(&snapshot, &options) {
            Ok(cluster) => return Ok(Built { cluster, excluded: reasons }),
            Err(SnapshotError::Field { object, field, message, .. })
                if !excluded.contains(&object) =>
            {
                reasons.push(((*object).clone(), format!("{field}: {message}")));
                excluded.insert(*object);
            }
            Err(e) => return Err(e),
        }
    }
}

/// Whether a pod waits for this scheduler: not on a node, not terminal, not being deleted, no
/// scheduling gates, and its `spec.schedulerName` (default `default-scheduler`) is served.
pub fn is_queued(pod: &Pod, scheduler_names: &[String]) -> bool {
    let Some(spec) = pod.spec.as_ref() else { return false };
    if spec.node_name.as_deref().is_some_and(|n| !n.is_empty())
        || pod.metadata.deletion_timestamp.is_some()
        || is_terminal(pod)
        || spec.scheduling_gates.as_ref().is_some_and(|g| !g.is_empty())
    {
        return false;
    }
    let name =
        spec.scheduler_name.as_deref().filter(|s| !s.is_empty()).unwrap_or("default-scheduler");
    scheduler_names.iter().any(|s| s == name)
}

/// Whether the pod has finished (phase `Succeeded` or `Failed`).
pub fn is_terminal(pod: &Pod) -> bool {
    matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded") | Some("Failed")
    )
}

/// The node a pod is bound to.
pub fn node_of(pod: &Pod) -> Option<&str> {
    pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).filter(|n| !n.is_empty())
}

fn digest(value: &impl serde::Serialize) -> u64 {
    let text = serde_json::to_string(value).unwrap_or_default();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// What the queue keeps of a pending pod.
pub fn queued_pod(pod: &Pod) -> QueuedPod {
    QueuedPod {
        uid: pod.metadata.uid.clone().unwrap_or_default(),
        priority: pod.spec.as_ref().and_then(|s| s.priority).unwrap_or(0),
        created: pod.metadata.creation_timestamp.as_ref().map_or(0, |t| t.0.as_second()),
        signature: digest(&(&pod.spec, &pod.metadata.labels)),
    }
}

/// A digest of what scheduling reads from a node (labels, taints, unschedulable, allocatable):
/// a change is a cluster change that may make unschedulable pods fit. Status heartbeats do not
/// change it.
pub fn node_signature(node: &Node) -> u64 {
    let spec = node.spec.as_ref();
    digest(&(
        &node.metadata.labels,
        spec.and_then(|s| s.taints.as_ref()),
        spec.and_then(|s| s.unschedulable),
        node.status.as_ref().and_then(|s| s.allocatable.as_ref()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Container, NodeSpec, NodeStatus, PodSpec, PodStatus, Taint};
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

    fn node(name: &str, cpu: &str) -> Node {
        Node {
            metadata: ObjectMeta { name: Some(name.into()), ..Default::default() },
            spec: Some(NodeSpec::default()),
            status: Some(NodeStatus {
                allocatable: Some(BTreeMap::from([
                    ("cpu".to_string(), Quantity(cpu.into())),
                    ("memory".to_string(), Quantity("8Gi".into())),
                    ("pods".to_string(), Quantity("110".into())),
                ])),
                ..Default::default()
            }),
        }
    }

    fn pod(ns: &str, name: &str, scheduler: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                namespace: Some(ns.into()),
                name: Some(name.into()),
                uid: Some(format!("uid-{name}")),
                ..Default::default()
            },
            spec: Some(PodSpec {
                scheduler_name: Some(scheduler.into()),
                containers: vec![Container { name: "c".into(), ..Default::default() }],
                ..Default::default()
            }),
            status: Some(PodStatus { phase: Some("Pending".into()), ..Default::default() }),
        }
    }

    fn names() -> Vec<String> {
        vec!["kplace".to_string()]
    }

    #[test]
    fn only_unassigned_live_ungated_pods_of_a_served_scheduler_are_queued() {
        let base = pod("ns", "a", "kplace");
        let mut bound = base.clone();
        bound.spec.as_mut().unwrap().node_name = Some("n1".into());
        let mut done = base.clone();
        done.status.as_mut().unwrap().phase = Some("Succeeded".into());
        let mut deleting = base.clone();
        deleting.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(Default::default()));
        let mut gated = base.clone();
        gated.spec.as_mut().unwrap().scheduling_gates =
            Some(vec![k8s_openapi::api::core::v1::PodSchedulingGate { name: "g".into() }]);
        let mut default_name = base.clone();
        default_name.spec.as_mut().unwrap().scheduler_name = None;
        let cases = [
            ("a pending pod asking for kplace is queued", base.clone(), true),
            ("a bound pod is not", bound, false),
            ("a finished pod is not", done, false),
            ("a pod being deleted is not", deleting, false),
            ("a gated pod is not", gated, false),
            ("a pod of the default scheduler is not", default_name, false),
        ];
        for (name, p, want) in cases {
            assert_eq!(is_queued(&p, &names()), want, "{name}");
        }
    }

    #[test]
    fn assumed_pods_count_on_their_node_and_pending_pods_come_from_the_caches() {
        let objects = Objects {
            nodes: vec![Arc::new(node("n1", "4")), Arc::new(node("n2", "4"))],
            pods: vec![
                Arc::new(pod("ns", "placed", "kplace")),
                Arc::new(pod("ns", "waiting", "kplace")),
                Arc::new(pod("ns", "other", "default-scheduler")),
            ],
            ..Objects::default()
        };
        let assumed = BTreeMap::from([(
            "ns/placed".to_string(),
            Assumed { uid: "uid-placed".into(), node: "n2".into() },
        )]);
        let built = build_cluster(&objects, &assumed, &names()).unwrap();
        let pending: Vec<String> = built.cluster.pending.iter().map(|p| p.key()).collect();
        assert_eq!(pending, vec!["ns/waiting".to_string()]);
        let n2 = &built.cluster.state.nodes[built.cluster.state.node_index("n2").unwrap()];
        assert_eq!(n2.pods.len(), 1, "the assumed pod holds its room on n2");
        assert!(built.excluded.is_empty());

        let stale = BTreeMap::from([(
            "ns/placed".to_string(),
            Assumed { uid: "an-older-pod".into(), node: "n2".into() },
        )]);
        let built = build_cluster(&objects, &stale, &names()).unwrap();
        assert_eq!(built.cluster.pending.len(), 2, "a pod recreated under the name is pending");
    }

    #[test]
    fn an_object_that_does_not_convert_is_left_out_with_its_reason() {
        let mut bad = pod("ns", "bad", "kplace");
        bad.spec.as_mut().unwrap().priority_class_name = Some("no-such-class".into());
        let objects = Objects {
            nodes: vec![Arc::new(node("n1", "4"))],
            pods: vec![Arc::new(bad), Arc::new(pod("ns", "good", "kplace"))],
            ..Objects::default()
        };
        let built = build_cluster(&objects, &BTreeMap::new(), &names()).unwrap();
        assert_eq!(built.cluster.pending.len(), 1);
        assert_eq!(built.excluded.len(), 1);
        let (object, reason) = &built.excluded[0];
        assert_eq!(object.to_string(), "Pod ns/bad");
        assert!(reason.contains("spec.priorityClassName"), "{reason}");
    }

    #[test]
    fn a_node_signature_changes_with_what_scheduling_reads_only() {
        let n = node("n1", "4");
        let mut heartbeat = n.clone();
        heartbeat.status.as_mut().unwrap().conditions = Some(vec![]);
        let mut tainted = n.clone();
        tainted.spec.as_mut().unwrap().taints = Some(vec![Taint {
            key: "k".into(),
            effect: "NoSchedule".into(),
            ..Default::default()
        }]);
        let cases = [
            ("a status heartbeat is no change", heartbeat, false),
            ("more allocatable cpu is a change", node("n1", "8"), true),
            ("a new taint is a change", tainted, true),
        ];
        for (name, other, changed) in cases {
            assert_eq!(node_signature(&other) != node_signature(&n), changed, "{name}");
        }
    }
}
