//! A snapshot as one file, and a snapshot read from standard input.
//!
//! Writing (`kplace snapshot -o FILE`): input, a [`Snapshot`] (read from files or from an API
//! server) and the [`BatchFilter`] of the run; output, one `kind: List` document (YAML in
//! `kubectl get -o yaml`'s layout, or JSON) holding what kplace reads: nodes, namespaces,
//! PriorityClasses, pods, PodDisruptionBudgets, PersistentVolumeClaims, the owners default
//! spreading reads (Services,
//! ReplicationControllers, ReplicaSets, StatefulSets) and PodGroups, each sorted by namespace
//! and name. `metadata.managedFields`, `kubectl.kubernetes.io/last-applied-configuration` and
//! the fields no command reads (container commands, environments and probes; node conditions,
//! addresses and system info; pod IPs and container states; controllers' pod templates but
//! their labels; statuses kplace does not read) are dropped. Pending pods outside the batch
//! are left out, so that the file plans the same batch without `-n`/`-l`. Reading the file
//! again ([`super::load`]) gives the same model.
//!
//! Reading (`-` as a SNAPSHOT path): the text on standard input, JSON when its first
//! non-space character is `{` or `[` (a top-level array is read as a `List` of its elements),
//! YAML otherwise; its objects are named `<stdin>` in messages.
//!
//! Upstream counterpart: `kubectl get -o yaml` (a `List` of the objects), without what
//! `kubectl` keeps for round trips.

use std::io::Write;
use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Value, json};

use super::{BatchFilter, Snapshot, SnapshotError, Sourced};

/// The path that names standard input among SNAPSHOT paths.
pub const STDIN_PATH: &str = "-";

/// How standard input's objects are named in messages.
pub const STDIN_NAME: &str = "<stdin>";

/// The annotation `kubectl apply` keeps a whole copy of the object in.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Whether a SNAPSHOT path names standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN_PATH
}

/// Reads `paths` as [`super::load`] does, `-` being the text `stdin` gives (called once, if
/// `-` is among the paths).
pub fn load_paths(
    paths: &[PathBuf],
    stdin: impl FnOnce() -> std::io::Result<String>,
) -> Result<Snapshot, SnapshotError> {
    if !paths.iter().any(|p| is_stdin(p)) {
        return super::load(paths);
    }
    let files: Vec<PathBuf> = paths.iter().filter(|p| !is_stdin(p)).cloned().collect();
    let mut snapshot = if files.is_empty() { Snapshot::new() } else { super::load(&files)? };
    let name = PathBuf::from(STDIN_NAME);
    let text = stdin().map_err(|source| SnapshotError::Io { path: name.clone(), source })?;
    snapshot.files.push(name.clone());
    add_text(&mut snapshot, &name, &text)?;
    if snapshot.object_count() == 0 {
        return Err(SnapshotError::NoObjects { paths: paths.to_vec() });
    }
    Ok(snapshot)
}

/// Adds a text of unknown format: JSON when it starts (after spaces) with `{` or `[`, else
/// YAML.
pub fn add_text(snapshot: &mut Snapshot, name: &Path, text: &str) -> Result<(), SnapshotError> {
    match text.trim_start().as_bytes().first() {
        Some(b'{') => snapshot.add_json(name, text),
        // A bare array of objects, as some tools write: the items of a List.
        Some(b'[') => snapshot.add_json(
            name,
            &format!("{{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":{text}}}"),
        ),
        _ => snapshot.add_yaml(name, text),
    }
}

/// The format of a written snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DumpFormat {
    /// YAML, `kubectl get -o yaml`'s layout.
    Yaml,
    /// JSON, indented.
    Json,
}

impl DumpFormat {
    /// The format a file name asks for: `.json` is JSON, anything else YAML.
    pub fn of_path(path: &Path) -> DumpFormat {
        let json = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        if json { DumpFormat::Json } else { DumpFormat::Yaml }
    }
}

/// Why a snapshot could not be written.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    /// An object did not serialize.
    #[error("serializing {what}: {source}")]
    Serialize {
        /// The object.
        what: String,
        /// serde_json's error.
        #[source]
        source: serde_json::Error,
    },
    /// Writing failed.
    #[error("writing the snapshot: {0}")]
    Io(#[from] std::io::Error),
}

/// What was written, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DumpCounts {
    /// `(kind, count)` in the order written, kinds without objects left out.
    pub kinds: Vec<(&'static str, usize)>,
    /// Pending pods left out because they are outside the batch.
    pub outside_batch: usize,
}

/// Writes `snapshot` as one `List` document to `out`.
pub fn write(
    snapshot: &Snapshot,
    batch: &BatchFilter,
    format: DumpFormat,
    out: &mut impl Write,
) -> Result<DumpCounts, DumpError> {
    let (list, counts) = to_list(snapshot, batch)?;
    match format {
        DumpFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &list)
                .map_err(|source| DumpError::Serialize { what: "the List".into(), source })?;
            out.write_all(b"\n")?;
        }
        DumpFormat::Yaml => {
            let mut text = String::new();
            crate::r#gen::yaml::write_document(&list, &mut text);
            out.write_all(text.as_bytes())?;
        }
    }
    out.flush()?;
    Ok(counts)
}

/// Adds the objects of one kind, sorted by namespace and name, each stripped by `strip`.
fn add_kind<T: Clone + serde::Serialize>(
    items: &mut Vec<Value>,
    counts: &mut DumpCounts,
    kind: &'static str,
    objects: &[Sourced<T>],
    meta: impl Fn(&T) -> &ObjectMeta,
    keep: impl Fn(&T) -> bool,
    strip: impl Fn(&mut T),
) -> Result<(), DumpError> {
    let mut kept: Vec<&T> = objects.iter().map(|o| &o.object).filter(|o| keep(o)).collect();
    kept.sort_by(|a, b| {
        let (a, b) = (meta(a), meta(b));
        (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name))
    });
    for o in &kept {
        let mut o = (*o).clone();
        strip(&mut o);
        let value = serde_json::to_value(&o).map_err(|source| DumpError::Serialize {
            what: format!("{kind} {}", meta(&o).name.as_deref().unwrap_or_default()),
            source,
        })?;
        items.push(value);
    }
    if !kept.is_empty() {
        counts.kinds.push((kind, kept.len()));
    }
    Ok(())
}

/// The snapshot as a `List` value, and what it holds.
pub fn to_list(snapshot: &Snapshot, batch: &BatchFilter) -> Result<(Value, DumpCounts), DumpError> {
    let mut items = Vec::new();
    let mut counts = DumpCounts::default();
    add_kind(&mut items, &mut counts, "Node", &snapshot.nodes, |o| &o.metadata, all, strip_node)?;
    add_kind(
        &mut items,
        &mut counts,
        "Namespace",
        &snapshot.namespaces,
        |o| &o.metadata,
        all,
        |o| {
            strip_meta(&mut o.metadata);
            o.status = None;
        },
    )?;
    let pcs = &snapshot.priority_classes;
    add_kind(
        &mut items,
        &mut counts,
        "PriorityClass",
        pcs,
        |o| &o.metadata,
        all,
        |o| strip_meta(&mut o.metadata),
    )?;
    let in_batch = |p: &k8s::Pod| !is_pending(p) || batch.admits_pod(p);
    counts.outside_batch = snapshot.pods.iter().filter(|p| !in_batch(&p.object)).count();
    add_kind(&mut items, &mut counts, "Pod", &snapshot.pods, |o| &o.metadata, in_batch, strip_pod)?;
    add_kind(
        &mut items,
        &mut counts,
        "PodDisruptionBudget",
        &snapshot.pdbs,
        |o| &o.metadata,
        all,
        |o| {
            strip_meta(&mut o.metadata);
            if let Some(s) = o.status.as_mut() {
                s.conditions = None;
            }
        },
    )?;
    // Claims keep what the volume plugins' PreFilters read: spec, phase, annotations, owners.
    add_kind(
        &mut items,
        &mut counts,
        "PersistentVolumeClaim",
        &snapshot.pvcs,
        |o| &o.metadata,
        all,
        |o| {
            strip_meta(&mut o.metadata);
            if let Some(s) = o.status.as_mut() {
                s.conditions = None;
                s.modify_volume_status = None;
                s.allocated_resource_statuses = None;
            }
        },
    )?;
    add_kind(
        &mut items,
        &mut counts,
        "Service",
        &snapshot.services,
        |o| &o.metadata,
        all,
        |o| {
            strip_meta(&mut o.metadata);
            let selector = o.spec.as_ref().and_then(|s| s.selector.clone());
            o.spec = Some(k8s::ServiceSpec { selector, ..Default::default() });
            o.status = None;
        },
    )?;
    let rcs = &snapshot.replication_controllers;
    add_kind(
        &mut items,
        &mut counts,
        "ReplicationController",
        rcs,
        |o| &o.metadata,
        all,
        |o| {
            strip_meta(&mut o.metadata);
            if let Some(t) = o.spec.as_mut().and_then(|s| s.template.as_mut()) {
                strip_template(t);
            }
            o.status = None;
        },
    )?;
    let rss = &snapshot.replica_sets;
    add_kind(
        &mut items,
        &mut counts,
        "ReplicaSet",
        rss,
        |o| &o.metadata,
        all,
        |o| {
            strip_meta(&mut o.metadata);
            if let Some(t) = o.spec.template.as_mut() {
                strip_template(t);
            }
            o.status = None;
        },
    )?;
    let sss = &snapshot.stateful_sets;
    add_kind(
        &mut items,
        &mut counts,
        "StatefulSet",
        sss,
        |o| &o.metadata,
        all,
        |o| {
            strip_meta(&mut o.metadata);
            strip_template(&mut o.spec.template);
            o.spec.volume_claim_templates = None;
            o.status = None;
        },
    )?;
    let mut groups: Vec<_> = snapshot.pod_groups.iter().map(|g| &g.object).collect();
    groups.sort_by(|a, b| {
        (a.convention, &a.namespace, &a.name).cmp(&(b.convention, &b.namespace, &b.name))
    });
    for g in &groups {
        items.push(json!({
            "apiVersion": g.convention.api_version(),
            "kind": "PodGroup",
            "metadata": {"namespace": g.namespace, "name": g.name},
            "spec": {"minMember": g.min_member},
        }));
    }
    if !groups.is_empty() {
        counts.kinds.push(("PodGroup", groups.len()));
    }
    let list = json!({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items});
    Ok((list, counts))
}

/// Keeps every object of a kind.
fn all<T>(_: &T) -> bool {
    true
}

/// Not bound and not finished: a pod the batch may hold.
fn is_pending(p: &k8s::Pod) -> bool {
    let bound = p.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_some_and(|n| !n.is_empty());
    let phase = p.status.as_ref().and_then(|s| s.phase.as_deref());
    !bound && !matches!(phase, Some("Succeeded" | "Failed"))
}

/// Drops what no command reads from an object's metadata.
fn strip_meta(meta: &mut ObjectMeta) {
    meta.managed_fields = None;
    meta.resource_version = None;
    meta.self_link = None;
    meta.generation = None;
    if let Some(a) = meta.annotations.as_mut() {
        a.remove(LAST_APPLIED);
        if a.is_empty() {
            meta.annotations = None;
        }
    }
}

/// A controller's pod template: its labels (a ReplicationController's default selector) only.
fn strip_template(t: &mut k8s::PodTemplateSpec) {
    t.spec = None;
    if let Some(m) = t.metadata.as_mut() {
        let labels = m.labels.take();
        *m = ObjectMeta { labels, ..Default::default() };
    }
}

/// Keeps a node's labels, annotations, spec, capacity, allocatable and images.
fn strip_node(n: &mut k8s::Node) {
    strip_meta(&mut n.metadata);
    if let Some(s) = n.status.as_mut() {
        *s = k8s::NodeStatus {
            capacity: s.capacity.take(),
            allocatable: s.allocatable.take(),
            images: s.images.take(),
            ..Default::default()
        };
    }
}

/// Keeps what scheduling reads of a container: name, image, resources, ports, restart policy
/// (sidecars) and resize policy.
fn strip_container(c: &mut k8s::Container) {
    *c = k8s::Container {
        name: std::mem::take(&mut c.name),
        image: c.image.take(),
        resources: c.resources.take(),
        ports: c.ports.take(),
        restart_policy: c.restart_policy.take(),
        resize_policy: c.resize_policy.take(),
        ..Default::default()
    };
}

/// Keeps what accounting reads of a container's status: its name and resources.
fn strip_container_status(c: &mut k8s::ContainerStatus) {
    *c = k8s::ContainerStatus {
        name: std::mem::take(&mut c.name),
        allocated_resources: c.allocated_resources.take(),
        resources: c.resources.take(),
        ..Default::default()
    };
}

fn strip_pod(p: &mut k8s::Pod) {
    strip_meta(&mut p.metadata);
    if let Some(spec) = p.spec.as_mut() {
        spec.containers.iter_mut().for_each(strip_container);
        spec.init_containers.iter_mut().flatten().for_each(strip_container);
        spec.ephemeral_containers = None;
    }
    if let Some(s) = p.status.as_mut() {
        let mut statuses = s.container_statuses.take();
        let mut init = s.init_container_statuses.take();
        statuses.iter_mut().flatten().for_each(strip_container_status);
        init.iter_mut().flatten().for_each(strip_container_status);
        *s = k8s::PodStatus {
            phase: s.phase.take(),
            start_time: s.start_time.take(),
            conditions: s.conditions.take(),
            container_statuses: statuses,
            init_container_statuses: init,
            ..Default::default()
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PODS: &str = r#"
apiVersion: v1
kind: Node
metadata:
  name: n1
  managedFields: [{manager: kubelet, operation: Update}]
  annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}"}
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
  addresses: [{type: InternalIP, address: 10.0.0.1}]
---
apiVersion: v1
kind: Pod
metadata: {name: bound, namespace: web, labels: {app: web}}
spec:
  nodeName: n1
  containers:
  - name: c
    image: nginx
    env: [{name: A, value: b}]
    command: [sleep]
    resources: {requests: {cpu: "1"}}
status: {phase: Running, podIP: 10.1.1.1, containerStatuses: [{name: c, image: nginx, imageID: x, ready: true, restartCount: 3}]}
---
apiVersion: v1
kind: Pod
metadata: {name: wanted, namespace: ml, labels: {team: a}}
spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: other, namespace: ml, labels: {team: b}}
spec: {containers: [{name: c}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs, namespace: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}, annotations: {a: b}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: g, namespace: ml}
spec: {minMember: 2}
"#;

    fn snapshot() -> Snapshot {
        let mut s = Snapshot::new();
        s.add_yaml(Path::new("t.yaml"), PODS).expect("the test snapshot loads");
        s
    }

    fn written(batch: &BatchFilter, format: DumpFormat) -> (String, DumpCounts) {
        let mut out = Vec::new();
        let counts = write(&snapshot(), batch, format, &mut out).expect("writes");
        (String::from_utf8(out).expect("UTF-8"), counts)
    }

    #[test]
    fn a_written_snapshot_drops_what_kplace_never_reads() {
        let (text, _) = written(&BatchFilter::default(), DumpFormat::Yaml);
        // (case, text that must be gone)
        let gone = [
            ("managedFields are dropped", "managedFields"),
            ("the last applied configuration is dropped", "last-applied-configuration"),
            ("node conditions are dropped", "conditions"),
            ("node addresses are dropped", "10.0.0.1"),
            ("container environments are dropped", "env"),
            ("container commands are dropped", "sleep"),
            ("pod IPs are dropped", "podIP"),
            ("container restart counts are dropped", "restartCount: 3"),
        ];
        for (name, needle) in gone {
            assert!(!text.contains(needle), "{name}: {needle:?} in\n{text}");
        }
        // (case, text that must stay)
        let kept = [
            ("allocatable stays", "allocatable"),
            ("requests stay", "requests"),
            ("images stay", "image: nginx"),
            ("controllers' selectors stay", "matchLabels"),
            ("the phase stays", "phase: Running"),
            ("PodGroups stay", "minMember: 2"),
        ];
        for (name, needle) in kept {
            assert!(text.contains(needle), "{name}: no {needle:?} in\n{text}");
        }
        let (list, _) = to_list(&snapshot(), &BatchFilter::default()).expect("a list");
        let rs = list["items"].as_array().into_iter().flatten().find(|i| i["kind"] == "ReplicaSet");
        let template = &rs.expect("the ReplicaSet is written")["spec"]["template"];
        assert_eq!(
            template,
            &json!({"metadata": {"labels": {"app": "web"}}}),
            "templates keep labels only"
        );
    }

    /// What the model holds, without the process-wide generation counters.
    fn model_view(c: &super::super::Cluster) -> String {
        let nodes: Vec<String> = c
            .state
            .nodes
            .iter()
            .map(|n| {
                format!(
                    "{} {:?} {:?} {:?} {:?} {:?}",
                    n.name, n.labels, n.taints, n.allocatable, n.images, n.pods
                )
            })
            .collect();
        format!("{nodes:?} {:?} {:?} {:?}", c.state.pdbs, c.state.namespace_labels, c.ignored)
    }

    #[test]
    fn a_written_snapshot_reads_back_to_the_same_model_in_both_formats() {
        let options = super::super::BuildOptions::default();
        let want = super::super::build(&snapshot(), &options).expect("builds");
        for format in [DumpFormat::Yaml, DumpFormat::Json] {
            let (text, counts) = written(&BatchFilter::default(), format);
            let mut again = Snapshot::new();
            add_text(&mut again, Path::new("again"), &text).expect("reads back");
            let got = super::super::build(&again, &options).expect("builds again");
            assert_eq!(model_view(&got), model_view(&want), "{format:?}");
            assert_eq!(format!("{:?}", got.pending), format!("{:?}", want.pending), "{format:?}");
            assert_eq!(got.gangs, want.gangs, "{format:?}");
            let pods = counts.kinds.iter().find(|(k, _)| *k == "Pod").map(|(_, n)| *n);
            assert_eq!(pods, Some(3), "{format:?}");
        }
    }

    #[test]
    fn pending_pods_outside_the_batch_are_left_out_and_bound_pods_stay() {
        let batch = BatchFilter::new(Some("ml"), Some("team=a")).expect("valid");
        let (text, counts) = written(&batch, DumpFormat::Json);
        assert!(text.contains("\"wanted\""), "{text}");
        assert!(!text.contains("\"other\""), "{text}");
        assert!(text.contains("\"bound\""), "a bound pod of another namespace stays: {text}");
        assert_eq!(counts.outside_batch, 1);
    }

    #[test]
    fn standard_input_is_json_or_yaml_by_its_first_character() {
        let node = r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}}"#;
        // (case, text, nodes read)
        let cases = [
            ("an object is JSON", format!("  \n{node}"), 1),
            ("an array is a List of its items", format!("[{node}]"), 1),
            (
                "anything else is YAML",
                "apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\n".into(),
                1,
            ),
        ];
        for (name, text, nodes) in cases {
            let s = load_paths(&[PathBuf::from("-")], || Ok(text.clone())).expect(name);
            assert_eq!(s.nodes.len(), nodes, "{name}");
            assert_eq!(s.nodes[0].source.file, PathBuf::from(STDIN_NAME), "{name}");
        }
        let e = load_paths(&[PathBuf::from("-")], || Ok("{\"kind\": ".into())).expect_err("bad");
        assert!(e.to_string().starts_with("<stdin>:"), "{e}");
        let e = load_paths(&[PathBuf::from("-")], || Ok(String::new())).expect_err("empty");
        assert!(e.to_string().contains("no Kubernetes objects"), "{e}");
    }
}
