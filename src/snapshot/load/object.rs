//! One document or object of a snapshot file, checked and typed apart from the [`Snapshot`]
//! (so that the objects of a file can be prepared on all cores), then committed in file order.
//!
//! Input: a document as a `serde_json::Value` (YAML, or JSON the fast reader could not type
//! directly), or an object the fast JSON reader already typed ([`Typed`]). Output: [`Prepared`]
//! results; [`commit`] adds them to the snapshot in order, finding duplicates there, and stops
//! at the first error, so the error reported is the one the file order meets first.

use std::collections::hash_map::Entry;

use serde_json::{Map, Value};

use super::super::{ObjectRef, Snapshot, SnapshotError, Source, Sourced, Warning, pod_group};
use super::Strictness;
use crate::model::GangConvention;
use crate::snapshot::PodGroup;
use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::api::policy::v1 as policy;
use k8s_openapi::api::scheduling::v1 as scheduling;

/// A typed object of a kind kplace reads.
#[derive(Debug)]
pub(in crate::snapshot) enum Typed {
    Node(k8s::Node),
    Pod(k8s::Pod),
    Namespace(k8s::Namespace),
    Service(k8s::Service),
    ReplicationController(k8s::ReplicationController),
    Pdb(policy::PodDisruptionBudget),
    Pvc(k8s::PersistentVolumeClaim),
    PriorityClass(scheduling::PriorityClass),
    ReplicaSet(apps::ReplicaSet),
    StatefulSet(apps::StatefulSet),
    PodGroup(PodGroup),
}

/// What one document or object of a file becomes.
#[derive(Debug)]
pub(in crate::snapshot) enum Prepared {
    /// The load stops here.
    Error(SnapshotError),
    /// A finding that does not stop the load.
    Warning(Warning),
    /// An object of a kind (or PodGroup API version) kplace does not read, counted by kind.
    Skipped { kind: String, warning: Option<Warning> },
    /// An object of a kind kplace reads. A typing error is reported after the duplicate check,
    /// as an object defined twice is the clearer message.
    Object {
        object: ObjectRef,
        source: Source,
        typed: Result<(Box<Typed>, Vec<Warning>), SnapshotError>,
    },
}

impl Prepared {
    /// Whether committing this stops the load.
    pub(super) fn is_error(&self) -> bool {
        matches!(self, Prepared::Error(_) | Prepared::Object { typed: Err(_), .. })
    }
}

/// Adds prepared results to the snapshot in order; the first error (or duplicate) stops it.
pub(super) fn commit(
    snapshot: &mut Snapshot,
    prepared: Vec<Prepared>,
) -> Result<(), SnapshotError> {
    reserve(snapshot, &prepared);
    for p in prepared {
        match p {
            Prepared::Error(e) => return Err(e),
            Prepared::Warning(w) => snapshot.warnings.push(w),
            Prepared::Skipped { kind, warning } => {
                snapshot.warnings.extend(warning);
                *snapshot.skipped.entry(kind).or_insert(0) += 1;
            }
            Prepared::Object { object, source, typed } => {
                let seen = match snapshot.seen.0.entry(object) {
                    Entry::Occupied(first) => {
                        return Err(SnapshotError::Duplicate {
                            object: Box::new(first.key().clone()),
                            first: Box::new(first.get().clone()),
                            second: Box::new(source),
                        });
                    }
                    Entry::Vacant(seen) => seen,
                };
                let (typed, warnings) = typed?;
                snapshot.warnings.extend(warnings);
                let s = source.clone();
                match *typed {
                    Typed::Node(o) => snapshot.nodes.push(Sourced { object: o, source: s }),
                    Typed::Pod(o) => snapshot.pods.push(Sourced { object: o, source: s }),
                    Typed::Namespace(o) => {
                        snapshot.namespaces.push(Sourced { object: o, source: s });
                    }
                    Typed::Service(o) => snapshot.services.push(Sourced { object: o, source: s }),
                    Typed::ReplicationController(o) => {
                        snapshot.replication_controllers.push(Sourced { object: o, source: s });
                    }
                    Typed::Pdb(o) => snapshot.pdbs.push(Sourced { object: o, source: s }),
                    Typed::Pvc(o) => snapshot.pvcs.push(Sourced { object: o, source: s }),
                    Typed::PriorityClass(o) => {
                        snapshot.priority_classes.push(Sourced { object: o, source: s });
                    }
                    Typed::ReplicaSet(o) => {
                        snapshot.replica_sets.push(Sourced { object: o, source: s });
                    }
                    Typed::StatefulSet(o) => {
                        snapshot.stateful_sets.push(Sourced { object: o, source: s });
                    }
                    Typed::PodGroup(o) => {
                        snapshot.pod_groups.push(Sourced { object: o, source: s })
                    }
                }
                seen.insert(source);
            }
        }
    }
    Ok(())
}

/// Room in the snapshot's lists for the objects of `prepared`, so that large objects are
/// moved once rather than again each time a list grows.
fn reserve(snapshot: &mut Snapshot, prepared: &[Prepared]) {
    let mut counts = [0usize; 11];
    for p in prepared {
        if let Prepared::Object { typed: Ok((typed, _)), .. } = p {
            counts[match **typed {
                Typed::Node(_) => 0,
                Typed::Pod(_) => 1,
                Typed::Namespace(_) => 2,
                Typed::Service(_) => 3,
                Typed::ReplicationController(_) => 4,
                Typed::Pdb(_) => 5,
                Typed::Pvc(_) => 6,
                Typed::PriorityClass(_) => 7,
                Typed::ReplicaSet(_) => 8,
                Typed::StatefulSet(_) => 9,
                Typed::PodGroup(_) => 10,
            }] += 1;
        }
    }
    let s = snapshot;
    s.nodes.reserve(counts[0]);
    s.pods.reserve(counts[1]);
    s.namespaces.reserve(counts[2]);
    s.services.reserve(counts[3]);
    s.replication_controllers.reserve(counts[4]);
    s.pdbs.reserve(counts[5]);
    s.pvcs.reserve(counts[6]);
    s.priority_classes.reserve(counts[7]);
    s.replica_sets.reserve(counts[8]);
    s.stateful_sets.reserve(counts[9]);
    s.pod_groups.reserve(counts[10]);
    s.seen.0.reserve(counts.iter().sum());
}

/// One object of a document, to be prepared: the value, or what stops or skips it already.
pub(super) type Task = Result<(Value, Source), Box<Prepared>>;

fn str_field<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The identity of an object for messages (kind, namespace, name), whatever is available.
fn object_ref(v: &Value, kind: &str, namespaced: bool) -> ObjectRef {
    let meta = v.get("metadata");
    let name = meta.and_then(|m| str_field(m, "name")).unwrap_or("<unnamed>").to_string();
    let namespace = namespaced.then(|| {
        meta.and_then(|m| str_field(m, "namespace"))
            .filter(|n| !n.is_empty())
            .unwrap_or("default")
            .to_string()
    });
    ObjectRef { kind: kind.to_string(), namespace, name }
}

/// Whether `kind` (with `items`) makes a document a `List` to expand.
pub(super) fn is_list(kind: &str, has_item_array: bool) -> bool {
    kind == "List" || (kind.ends_with("List") && has_item_array)
}

/// One document: a single object or a `List`, as the objects to prepare, in order. With
/// [`Strictness::SkipNonObjects`], a document that is not a Kubernetes object is skipped with
/// a warning.
pub(super) fn document_tasks(
    value: Value,
    source: Source,
    item_lines: &[u64],
    strictness: Strictness,
    out: &mut Vec<Task>,
) {
    let not_object = |v: &Value| {
        v.as_object().is_none_or(|o| {
            o.get("apiVersion").and_then(Value::as_str).is_none_or(str::is_empty)
                || o.get("kind").and_then(Value::as_str).is_none_or(str::is_empty)
        })
    };
    if strictness == Strictness::SkipNonObjects && not_object(&value) {
        out.push(Err(Box::new(Prepared::Warning(Warning {
            source: Some(source),
            object: None,
            message: "not a Kubernetes object (no apiVersion or kind); skipped".to_string(),
        }))));
        return;
    }
    let Value::Object(mut obj) = value else {
        out.push(Err(Box::new(Prepared::Error(SnapshotError::NotAnObject {
            at: Box::new(source),
            problem: "document is not a mapping, so not a Kubernetes object".to_string(),
        }))));
        return;
    };
    let (api_version, kind) = match type_meta(&obj, &source) {
        Ok((a, k)) => (a.to_string(), k.to_string()),
        Err(e) => return out.push(Err(Box::new(Prepared::Error(e)))),
    };
    if !is_list(&kind, obj.get("items").is_some_and(Value::is_array)) {
        return out.push(Ok((Value::Object(obj), source)));
    }
    let items = match obj.remove("items") {
        None | Some(Value::Null) => return,
        Some(Value::Array(items)) => items,
        Some(_) => {
            return out.push(Err(Box::new(Prepared::Error(SnapshotError::NotAnObject {
                at: Box::new(source),
                problem: "items of a List must be a sequence".to_string(),
            }))));
        }
    };
    list_item_tasks(&kind, &api_version, items, &source, |i| item_lines.get(i).copied(), out);
}

/// The items of a `List` document as objects to prepare.
pub(super) fn list_item_tasks(
    kind: &str,
    api_version: &str,
    items: Vec<Value>,
    source: &Source,
    line_of: impl Fn(usize) -> Option<u64>,
    out: &mut Vec<Task>,
) {
    let item_kind = kind.strip_suffix("List").filter(|k| !k.is_empty());
    out.reserve(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let at = Source {
            item: Some(i),
            line: line_of(i).filter(|l| *l > 0).or(source.line),
            ..source.clone()
        };
        out.push(list_item_task(item_kind, api_version, item, at));
    }
}

/// One item of a `List` (`item_kind`: the kind a typed list such as `PodList` gives its items).
pub(super) fn list_item_task(
    item_kind: Option<&str>,
    api_version: &str,
    mut item: Value,
    at: Source,
) -> Task {
    // Typed lists (`PodList` from the API) omit each item's apiVersion and kind.
    if let (Some(map), Some(item_kind)) = (item.as_object_mut(), item_kind) {
        map.entry("kind").or_insert_with(|| Value::String(item_kind.to_string()));
        map.entry("apiVersion").or_insert_with(|| Value::String(api_version.to_string()));
    }
    let Some(map) = item.as_object() else {
        return Err(Box::new(Prepared::Error(SnapshotError::NotAnObject {
            at: Box::new(at),
            problem: "a List item is not a mapping, so not a Kubernetes object".to_string(),
        })));
    };
    let k = match type_meta(map, &at) {
        Ok((_, k)) => k,
        Err(e) => return Err(Box::new(Prepared::Error(e))),
    };
    if k == "List" || (k.ends_with("List") && map.get("items").is_some()) {
        return Err(Box::new(Prepared::Error(SnapshotError::NotAnObject {
            problem: format!("a {k} inside a List is not supported"),
            at: Box::new(at),
        })));
    }
    Ok((item, at))
}

/// Below this many pieces of work, a file is read on the calling thread: handing work to the
/// thread pool costs more than it saves (`Snapshot::add_json` is called once per object by
/// `kplace bench`).
pub(super) const PARALLEL_MIN: usize = 64;

/// `f` over `items` in order, on all cores when there are many.
pub(super) fn map_in_order<T: Send, U: Send>(
    items: Vec<T>,
    f: impl Fn(T) -> U + Sync + Send,
) -> Vec<U> {
    use rayon::prelude::*;
    if items.len() < PARALLEL_MIN {
        items.into_iter().map(f).collect()
    } else {
        items.into_par_iter().with_min_len(16).map(f).collect()
    }
}

/// Prepares the tasks of a file, on all cores.
pub(super) fn prepare_all(tasks: Vec<Task>) -> Vec<Prepared> {
    map_in_order(tasks, |t| match t {
        Ok((value, source)) => prepare_object(value, source),
        Err(p) => *p,
    })
}

/// `apiVersion` and `kind`, both required strings.
fn type_meta<'a>(
    obj: &'a Map<String, Value>,
    source: &Source,
) -> Result<(&'a str, &'a str), SnapshotError> {
    let name = obj.get("metadata").and_then(|m| str_field(m, "name"));
    let missing = |what: &str| SnapshotError::NotAnObject {
        at: Box::new(source.clone()),
        problem: match name {
            Some(n) => format!(
                "document (metadata.name {n:?}) has no {what}, so it is not a Kubernetes object"
            ),
            None => format!("document has no {what}, so it is not a Kubernetes object"),
        },
    };
    let api_version = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| missing("apiVersion"))?;
    let kind = obj
        .get("kind")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| missing("kind"))?;
    Ok((api_version, kind))
}

/// The kind of the gang objects, read in two API versions (see [`pod_group`]).
const POD_GROUP_KIND: &str = "PodGroup";

/// The kinds kplace reads: (kind, apiVersion, namespaced). PodGroups are read apart.
pub(super) const KINDS: &[(&str, &str, bool)] = &[
    ("Node", "v1", false),
    ("Pod", "v1", true),
    ("Namespace", "v1", false),
    ("Service", "v1", true),
    ("ReplicationController", "v1", true),
    ("PodDisruptionBudget", "policy/v1", true),
    ("PersistentVolumeClaim", "v1", true),
    ("PriorityClass", "scheduling.k8s.io/v1", false),
    ("ReplicaSet", "apps/v1", true),
    ("StatefulSet", "apps/v1", true),
];

/// One object (a mapping with `apiVersion` and `kind`): skipped, refused, or typed.
pub(super) fn prepare_object(mut value: Value, source: Source) -> Prepared {
    let (api_version, kind) = {
        let Some(obj) = value.as_object() else {
            return Prepared::Error(SnapshotError::NotAnObject {
                at: Box::new(source),
                problem: "document is not a mapping, so not a Kubernetes object".to_string(),
            });
        };
        match type_meta(obj, &source) {
            Ok((a, k)) => (a.to_string(), k.to_string()),
            Err(e) => return Prepared::Error(e),
        }
    };
    // PodGroups come in several API groups; the two conventions kplace reads are told apart by
    // their apiVersion, and their identity carries the group (`PodGroup.scheduling.x-k8s.io`).
    let pod_group = if kind == POD_GROUP_KIND {
        match pod_group::convention_of(&api_version) {
            Some(c) => Some(c),
            None => {
                let warning = Warning {
                    object: Some(object_ref(&value, &kind, true)),
                    source: Some(source),
                    message: format!(
                        "a PodGroup of apiVersion {api_version:?} is not read (kplace reads {:?} \
                         and {:?}); skipped",
                        GangConvention::Coscheduling.api_version(),
                        GangConvention::Volcano.api_version(),
                    ),
                };
                return Prepared::Skipped { kind, warning: Some(warning) };
            }
        }
    } else {
        None
    };
    let (namespaced, object) = if let Some(c) = pod_group {
        (true, object_ref(&value, &c.pod_group_kind(), true))
    } else {
        let Some(&(_, expected, namespaced)) = KINDS.iter().find(|(k, _, _)| *k == kind) else {
            tracing::debug!(kind = %kind, api_version = %api_version, at = %source, "skipping an object of a kind kplace does not read");
            return Prepared::Skipped { kind, warning: None };
        };
        let object = object_ref(&value, &kind, namespaced);
        if api_version != expected {
            return Prepared::Error(SnapshotError::UnsupportedApiVersion {
                at: Box::new(source),
                object: Box::new(object),
                found: api_version,
                expected,
            });
        }
        (namespaced, object)
    };
    let field_error = |field: &str, message: String| SnapshotError::Field {
        at: Box::new(source.clone()),
        object: Box::new(object.clone()),
        field: field.to_string(),
        message,
    };
    let name_ok = value
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty());
    if !name_ok {
        return Prepared::Error(field_error("metadata.name", "a name is required".to_string()));
    }
    // Never read (the YAML reader and the fast JSON reader skip it too).
    if let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    // Namespaced objects without a namespace land in `default`, as `kubectl apply` puts them.
    if namespaced
        && let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut)
        && meta.get("namespace").and_then(Value::as_str).is_none_or(str::is_empty)
    {
        meta.insert("namespace".to_string(), Value::String("default".to_string()));
    }
    let typed = if let Some(convention) = pod_group {
        let mut warnings = Vec::new();
        if value.get("spec").and_then(|s| s.get("minAvailable")).is_some() {
            warnings.push(Warning {
                source: Some(source.clone()),
                object: Some(object.clone()),
                message: "spec.minAvailable is not a PodGroup field (Volcano's Job has it and \
                          copies it into its PodGroup's spec.minMember); ignored, \
                          spec.minMember is read"
                    .to_string(),
            });
        }
        pod_group::parse(convention, value)
            .map(|g| (Box::new(Typed::PodGroup(g)), warnings))
            .map_err(|e| field_error(&e.field, e.message))
    } else {
        typed_from_value(&kind, value)
            .map(|t| (Box::new(t), Vec::new()))
            .map_err(|(field, message)| field_error(&field, message))
    };
    Prepared::Object { object, source, typed }
}

/// The typed object of a kind in [`KINDS`], through `serde_path_to_error` so that a field of
/// the wrong type is named by its path.
fn typed_from_value(kind: &str, value: Value) -> Result<Typed, (String, String)> {
    fn de<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, (String, String)> {
        serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            let field = if path == "." { "(document)".to_string() } else { path };
            (field, e.into_inner().to_string())
        })
    }
    Ok(match kind {
        "Node" => Typed::Node(de(value)?),
        "Pod" => Typed::Pod(de(value)?),
        "Namespace" => Typed::Namespace(de(value)?),
        "Service" => Typed::Service(de(value)?),
        "ReplicationController" => Typed::ReplicationController(de(value)?),
        "PodDisruptionBudget" => Typed::Pdb(de(value)?),
        "PersistentVolumeClaim" => Typed::Pvc(de(value)?),
        "PriorityClass" => Typed::PriorityClass(de(value)?),
        "ReplicaSet" => Typed::ReplicaSet(de(value)?),
        "StatefulSet" => Typed::StatefulSet(de(value)?),
        other => return Err(("kind".to_string(), format!("kind {other:?} is not read"))),
    })
}
