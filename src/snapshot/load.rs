//! Reading files into a [`Snapshot`]: directory walking, YAML/JSON parsing, `List` expansion,
//! kind dispatch and typed deserialization.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::{ObjectRef, Snapshot, SnapshotError, Source, Sourced, Warning, pod_group};
use crate::model::GangConvention;

/// File extensions read when walking a directory.
const EXTENSIONS: &[&str] = &["yaml", "yml", "json"];

/// Reads every file or directory in `paths` (directories recursively, `.yaml`/`.yml`/`.json`
/// files sorted by path; a file named explicitly is read whatever its extension: `.json` as
/// JSON, anything else as YAML).
///
/// Errors: unreadable paths, malformed documents, objects that do not deserialize, duplicate
/// objects, and no Kubernetes object at all. Empty files and directories without manifests
/// are warnings when other paths hold objects.
pub fn load(paths: &[PathBuf]) -> Result<Snapshot, SnapshotError> {
    let mut snapshot = Snapshot::new();
    for path in paths {
        let meta = std::fs::metadata(path)
            .map_err(|source| SnapshotError::Io { path: path.clone(), source })?;
        if meta.is_dir() {
            let mut files = Vec::new();
            let mut visited = BTreeSet::new();
            walk(path, &mut files, &mut visited)?;
            files.sort();
            let before = snapshot.object_count();
            for file in &files {
                read_file(&mut snapshot, file, Strictness::SkipNonObjects)?;
            }
            if snapshot.object_count() == before {
                snapshot.warnings.push(Warning {
                    source: None,
                    object: None,
                    message: format!("{}: no Kubernetes objects in this directory", path.display()),
                });
            }
        } else {
            read_file(&mut snapshot, path, Strictness::Strict)?;
        }
    }
    if snapshot.object_count() == 0 {
        return Err(SnapshotError::NoObjects { paths: paths.to_vec() });
    }
    Ok(snapshot)
}

/// Collects manifest files under `dir`, following symbolic links but not visiting a directory
/// twice.
fn walk(
    dir: &Path,
    files: &mut Vec<PathBuf>,
    visited: &mut BTreeSet<PathBuf>,
) -> Result<(), SnapshotError> {
    let io = |source| SnapshotError::Io { path: dir.to_path_buf(), source };
    let canonical = std::fs::canonicalize(dir).map_err(io)?;
    if !visited.insert(canonical) {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        let meta = std::fs::metadata(&path)
            .map_err(|source| SnapshotError::Io { path: path.clone(), source })?;
        if meta.is_dir() {
            walk(&path, files, visited)?;
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| EXTENSIONS.iter().any(|x| x.eq_ignore_ascii_case(e)))
        {
            files.push(path);
        }
    }
    Ok(())
}

/// What to do with a document that is not a Kubernetes object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Strictness {
    /// An error (files named explicitly, text handed in directly).
    Strict,
    /// A warning, and the document is skipped (files found by walking a directory, which may
    /// hold other YAML or JSON files).
    SkipNonObjects,
}

fn read_file(
    snapshot: &mut Snapshot,
    file: &Path,
    strictness: Strictness,
) -> Result<(), SnapshotError> {
    let text = std::fs::read_to_string(file)
        .map_err(|source| SnapshotError::Io { path: file.to_path_buf(), source })?;
    snapshot.files.push(file.to_path_buf());
    let is_json =
        file.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if is_json {
        add_json(snapshot, file, &text, strictness)
    } else {
        add_yaml(snapshot, file, &text, strictness)
    }
}

/// A document's top-level mapping, with the line of each element of `items` when it is a
/// sequence (the lines of `List` items).
struct RawDoc {
    value: Value,
    item_lines: Vec<u64>,
}

impl<'de> Deserialize<'de> for RawDoc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(RawDocVisitor)
    }
}

struct RawDocVisitor;

/// Forwards the scalar and sequence cases of a visitor to `serde_json::Value`.
macro_rules! forward_to_value {
    ($wrap:expr) => {
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
            Ok($wrap(Value::Bool(v)))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Ok($wrap(Value::from(v)))
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok($wrap(Value::from(v)))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            Ok($wrap(Value::from(v)))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok($wrap(Value::String(v.to_string())))
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($wrap(Value::Null))
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($wrap(Value::Null))
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            Value::deserialize(d).map($wrap)
        }
    };
}

impl<'de> Visitor<'de> for RawDocVisitor {
    type Value = RawDoc;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawDoc, A::Error> {
        let mut obj = Map::new();
        let mut item_lines = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "items" {
                let items: Items = map.next_value()?;
                item_lines = items.lines;
                obj.insert(key, items.value);
            } else {
                let v: Value = map.next_value()?;
                obj.insert(key, v);
            }
        }
        Ok(RawDoc { value: Value::Object(obj), item_lines })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<RawDoc, A::Error> {
        Value::deserialize(de::value::SeqAccessDeserializer::new(seq))
            .map(|value| RawDoc { value, item_lines: Vec::new() })
    }

    forward_to_value!(|value| RawDoc { value, item_lines: Vec::new() });
}

/// The `items` of a document: a sequence records each element's line.
struct Items {
    value: Value,
    lines: Vec<u64>,
}

impl<'de> Deserialize<'de> for Items {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ItemsVisitor)
    }
}

struct ItemsVisitor;

impl<'de> Visitor<'de> for ItemsVisitor {
    type Value = Items;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a list of objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Items, A::Error> {
        let mut values = Vec::new();
        let mut lines = Vec::new();
        while let Some(el) = seq.next_element::<serde_saphyr::Spanned<Value>>()? {
            lines.push(el.referenced.line());
            values.push(el.value);
        }
        Ok(Items { value: Value::Array(values), lines })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Items, A::Error> {
        Value::deserialize(de::value::MapAccessDeserializer::new(map))
            .map(|value| Items { value, lines: Vec::new() })
    }

    forward_to_value!(|value| Items { value, lines: Vec::new() });
}

fn yaml_options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_events: 1_000_000_000,
            max_nodes: 500_000_000,
            max_documents: 10_000_000,
            max_total_scalar_bytes: 16 * 1024 * 1024 * 1024,
        },
        with_snippet: false,
        leading_zero_numbers_as_strings: true,
        underscored_numbers_as_strings: true,
    }
}

/// Adds the documents of a YAML stream.
pub(super) fn add_yaml(
    snapshot: &mut Snapshot,
    file: &Path,
    text: &str,
    strictness: Strictness,
) -> Result<(), SnapshotError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let docs: Vec<serde_saphyr::Spanned<RawDoc>> =
        serde_saphyr::from_multiple_with_options(text, yaml_options()).map_err(|e| {
            let location = e.location();
            let line = location.map(|l| l.line()).filter(|l| *l > 0);
            let column = location.map(|l| l.column()).filter(|c| *c > 0);
            let mut message = e.to_string().lines().next().unwrap_or_default().to_string();
            // The location goes in front of the message; drop the parser's copy of it.
            if let (Some(l), Some(c)) = (line, column) {
                let suffix = format!(" at line {l}, column {c}");
                if let Some(stripped) = message.strip_suffix(&suffix) {
                    message = stripped.to_string();
                }
            }
            SnapshotError::Yaml { file: file.to_path_buf(), line, column, message }
        })?;
    if docs.is_empty() {
        snapshot.warnings.push(Warning {
            source: None,
            object: None,
            message: format!("{}: file has no documents", file.display()),
        });
    }
    for (i, doc) in docs.into_iter().enumerate() {
        let line = doc.referenced.line();
        let source = Source {
            file: file.to_path_buf(),
            document: i,
            item: None,
            line: (line > 0).then_some(line),
        };
        add_document(snapshot, doc.value.value, source, &doc.value.item_lines, strictness)?;
    }
    Ok(())
}

/// Adds the values of a JSON text (one value or several concatenated).
pub(super) fn add_json(
    snapshot: &mut Snapshot,
    file: &Path,
    text: &str,
    strictness: Strictness,
) -> Result<(), SnapshotError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Duplicate keys are an error, as in YAML (serde_json alone would keep the last one).
    let mut stream =
        serde_json::Deserializer::from_str(text).into_iter::<crate::json::StrictValue>();
    let mut count = 0;
    loop {
        let offset = stream.byte_offset();
        let Some(next) = stream.next() else { break };
        let value = next
            .map_err(|e| {
                let message = match crate::json::take_duplicate() {
                    Some(dup) => duplicate_message(text.get(offset..).unwrap_or(""), &dup),
                    None => e.to_string(),
                };
                SnapshotError::Json {
                    file: file.to_path_buf(),
                    line: e.line(),
                    column: e.column(),
                    message,
                }
            })?
            .0;
        // The value starts at the first non-blank byte after the previous one.
        let start = text.get(offset..).map_or(0, |rest| rest.len() - rest.trim_start().len());
        let line = text.get(..offset + start).map_or(1, |before| before.matches('\n').count() + 1);
        let source = Source {
            file: file.to_path_buf(),
            document: count,
            item: None,
            line: Some(line as u64),
        };
        add_document(snapshot, value, source, &[], strictness)?;
        count += 1;
    }
    if count == 0 {
        snapshot.warnings.push(Warning {
            source: None,
            object: None,
            message: format!("{}: file has no documents", file.display()),
        });
    }
    Ok(())
}

/// Words for a duplicate key: the object holding it (kind, namespace and name, read from the
/// document again, which is done only on this error path), the field's path in it and the key.
fn duplicate_message(document: &str, dup: &crate::json::Duplicate) -> String {
    // The document as serde_json reads it (last key wins), to name the object.
    let mut stream = serde_json::Deserializer::from_str(document).into_iter::<Value>();
    let value = stream.next().and_then(Result::ok).unwrap_or(Value::Null);
    // The object is the document, or the List item the path starts in.
    let (object, rest) = match dup.path.strip_prefix("items[").and_then(|r| r.split_once(']')) {
        Some((i, rest)) => (
            i.parse::<usize>().ok().and_then(|i| value.get("items")?.get(i)),
            rest.trim_start_matches('.'),
        ),
        None => (Some(&value), dup.path.as_str()),
    };
    let name = object
        .map(|o| {
            let kind = str_field(o, "kind").unwrap_or("object");
            let meta = o.get("metadata");
            let name = meta.and_then(|m| str_field(m, "name")).unwrap_or("<unnamed>");
            match meta.and_then(|m| str_field(m, "namespace")) {
                Some(ns) => format!("{kind} {ns}/{name}"),
                None => format!("{kind} {name}"),
            }
        })
        .unwrap_or_else(|| "object".to_string());
    let field = if rest.is_empty() { dup.key.clone() } else { format!("{rest}.{}", dup.key) };
    let at = if dup.path.is_empty() { String::new() } else { format!(" (at {})", dup.path) };
    format!("{name}: field {field:?} appears twice{at}; JSON keys must be unique")
}

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

/// One document: a single object or a `List`. With [`Strictness::SkipNonObjects`], a document
/// that is not a Kubernetes object is skipped with a warning.
fn add_document(
    snapshot: &mut Snapshot,
    value: Value,
    source: Source,
    item_lines: &[u64],
    strictness: Strictness,
) -> Result<(), SnapshotError> {
    let not_object = |v: &Value| {
        v.as_object().is_none_or(|o| {
            o.get("apiVersion").and_then(Value::as_str).is_none_or(str::is_empty)
                || o.get("kind").and_then(Value::as_str).is_none_or(str::is_empty)
        })
    };
    if strictness == Strictness::SkipNonObjects && not_object(&value) {
        snapshot.warnings.push(Warning {
            source: Some(source),
            object: None,
            message: "not a Kubernetes object (no apiVersion or kind); skipped".to_string(),
        });
        return Ok(());
    }
    let Value::Object(mut obj) = value else {
        return Err(SnapshotError::NotAnObject {
            at: Box::new(source),
            problem: "document is not a mapping, so not a Kubernetes object".to_string(),
        });
    };
    let (api_version, kind) = {
        let (a, k) = type_meta(&obj, &source)?;
        (a.to_string(), k.to_string())
    };
    let is_list =
        kind == "List" || (kind.ends_with("List") && obj.get("items").is_some_and(Value::is_array));
    if !is_list {
        return add_object(snapshot, Value::Object(obj), source);
    }
    let item_kind = kind.strip_suffix("List").filter(|k| !k.is_empty()).map(str::to_string);
    let items = match obj.remove("items") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err(SnapshotError::NotAnObject {
                at: Box::new(source),
                problem: "items of a List must be a sequence".to_string(),
            });
        }
    };
    for (i, mut item) in items.into_iter().enumerate() {
        let at = Source {
            item: Some(i),
            line: item_lines.get(i).copied().filter(|l| *l > 0).or(source.line),
            ..source.clone()
        };
        // Typed lists (`PodList` from the API) omit each item's apiVersion and kind.
        if let (Some(map), Some(item_kind)) = (item.as_object_mut(), &item_kind) {
            map.entry("kind").or_insert_with(|| Value::String(item_kind.clone()));
            map.entry("apiVersion").or_insert_with(|| Value::String(api_version.clone()));
        }
        let Some(map) = item.as_object() else {
            return Err(SnapshotError::NotAnObject {
                at: Box::new(at),
                problem: "a List item is not a mapping, so not a Kubernetes object".to_string(),
            });
        };
        let (_, k) = type_meta(map, &at)?;
        if k == "List" || (k.ends_with("List") && map.get("items").is_some()) {
            return Err(SnapshotError::NotAnObject {
                at: Box::new(at),
                problem: format!("a {k} inside a List is not supported"),
            });
        }
        add_object(snapshot, item, at)?;
    }
    Ok(())
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
const KINDS: &[(&str, &str, bool)] = &[
    ("Node", "v1", false),
    ("Pod", "v1", true),
    ("Namespace", "v1", false),
    ("Service", "v1", true),
    ("ReplicationController", "v1", true),
    ("PodDisruptionBudget", "policy/v1", true),
    ("PriorityClass", "scheduling.k8s.io/v1", false),
    ("ReplicaSet", "apps/v1", true),
    ("StatefulSet", "apps/v1", true),
];

fn add_object(
    snapshot: &mut Snapshot,
    mut value: Value,
    source: Source,
) -> Result<(), SnapshotError> {
    let (api_version, kind) = {
        let Some(obj) = value.as_object() else {
            return Err(SnapshotError::NotAnObject {
                at: Box::new(source),
                problem: "document is not a mapping, so not a Kubernetes object".to_string(),
            });
        };
        let (a, k) = type_meta(obj, &source)?;
        (a.to_string(), k.to_string())
    };
    // PodGroups come in several API groups; the two conventions kplace reads are told apart by
    // their apiVersion, and their identity carries the group (`PodGroup.scheduling.x-k8s.io`).
    let pod_group = if kind == POD_GROUP_KIND {
        match pod_group::convention_of(&api_version) {
            Some(c) => Some(c),
            None => {
                snapshot.warnings.push(Warning {
                    object: Some(object_ref(&value, &kind, true)),
                    source: Some(source),
                    message: format!(
                        "a PodGroup of apiVersion {api_version:?} is not read (kplace reads {:?} \
                         and {:?}); skipped",
                        GangConvention::Coscheduling.api_version(),
                        GangConvention::Volcano.api_version(),
                    ),
                });
                *snapshot.skipped.entry(kind).or_insert(0) += 1;
                return Ok(());
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
            *snapshot.skipped.entry(kind).or_insert(0) += 1;
            return Ok(());
        };
        let object = object_ref(&value, &kind, namespaced);
        if api_version != expected {
            return Err(SnapshotError::UnsupportedApiVersion {
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
        return Err(field_error("metadata.name", "a name is required".to_string()));
    }
    // Namespaced objects without a namespace land in `default`, as `kubectl apply` puts them.
    if namespaced
        && let Some(meta) = value.get_mut("metadata").and_then(Value::as_object_mut)
        && meta.get("namespace").and_then(Value::as_str).is_none_or(str::is_empty)
    {
        meta.insert("namespace".to_string(), Value::String("default".to_string()));
    }
    if let Some(first) = snapshot.seen.get(&object) {
        return Err(SnapshotError::Duplicate {
            object: Box::new(object),
            first: Box::new(first.clone()),
            second: Box::new(source),
        });
    }

    macro_rules! typed {
        ($list:ident) => {{
            let object_value = serde_path_to_error::deserialize(value).map_err(|e| {
                let path = e.path().to_string();
                let field = if path == "." { "(document)".to_string() } else { path };
                field_error(&field, e.into_inner().to_string())
            })?;
            snapshot.$list.push(Sourced { object: object_value, source: source.clone() });
        }};
    }
    if let Some(convention) = pod_group {
        if value.get("spec").and_then(|s| s.get("minAvailable")).is_some() {
            snapshot.warnings.push(Warning {
                source: Some(source.clone()),
                object: Some(object.clone()),
                message: "spec.minAvailable is not a PodGroup field (Volcano's Job has it and \
                          copies it into its PodGroup's spec.minMember); ignored, \
                          spec.minMember is read"
                    .to_string(),
            });
        }
        let group =
            pod_group::parse(convention, value).map_err(|e| field_error(&e.field, e.message))?;
        snapshot.pod_groups.push(Sourced { object: group, source: source.clone() });
        snapshot.seen.insert(object, source);
        return Ok(());
    }
    match kind.as_str() {
        "Node" => typed!(nodes),
        "Pod" => typed!(pods),
        "Namespace" => typed!(namespaces),
        "Service" => typed!(services),
        "ReplicationController" => typed!(replication_controllers),
        "PodDisruptionBudget" => typed!(pdbs),
        "PriorityClass" => typed!(priority_classes),
        "ReplicaSet" => typed!(replica_sets),
        "StatefulSet" => typed!(stateful_sets),
        _ => {}
    }
    snapshot.seen.insert(object, source);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(yaml: &str) -> Result<Snapshot, SnapshotError> {
        let mut s = Snapshot::new();
        s.add_yaml(Path::new("test.yaml"), yaml)?;
        Ok(s)
    }

    #[test]
    fn duplicate_json_keys_are_errors_naming_file_object_and_field() {
        let cases = [
            (
                "a duplicate label of a pod in a List",
                r#"{"apiVersion": "v1", "kind": "List", "items": [
                    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
                    {"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "a", "app": "b"}},
                     "spec": {"containers": []}}]}"#,
                "Pod ns/p: field \"metadata.labels.app\" appears twice (at items[1].metadata.labels)",
            ),
            (
                "a duplicate field of a single node",
                r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                    "spec": {"unschedulable": true}, "spec": {}}"#,
                "Node n1: field \"spec\" appears twice",
            ),
            (
                "a duplicate in the second of two concatenated documents",
                r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
                   {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2", "name": "n3"}}"#,
                "Node n3: field \"metadata.name\" appears twice",
            ),
        ];
        for (name, text, want) in cases {
            let mut s = Snapshot::new();
            let err = add_json(&mut s, Path::new("snap.json"), text, Strictness::Strict)
                .expect_err(name)
                .to_string();
            assert!(err.starts_with("snap.json:") && err.contains(want), "{name}: {err}");
        }
        let mut s = Snapshot::new();
        let ok = r#"{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {"a": "1", "b": "1"}}}"#;
        add_json(&mut s, Path::new("snap.json"), ok, Strictness::Strict).unwrap();
        assert_eq!(s.nodes.len(), 1);
    }

    #[test]
    fn multi_document_streams_and_lists_are_read_with_their_lines() {
        let yaml = "\
apiVersion: v1
kind: Node
metadata:
  name: n1
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata:
    name: p1
    namespace: ns
  spec:
    containers: []
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: cm
---
apiVersion: v1
kind: PodList
items:
- metadata:
    name: p2
  spec:
    containers: []
";
        let s = snap(yaml).unwrap();
        assert_eq!(s.nodes.len(), 1);
        assert_eq!(s.nodes[0].source.line, Some(1));
        assert_eq!(s.pods.len(), 2);
        assert_eq!(s.pods[0].source.document, 1);
        assert_eq!(s.pods[0].source.item, Some(0));
        assert_eq!(s.pods[0].source.line, Some(9));
        assert_eq!(s.pods[1].source.line, Some(24));
        assert_eq!(s.pods[1].object.metadata.namespace.as_deref(), Some("default"));
        assert_eq!(s.skipped.get("ConfigMap"), Some(&1));
    }

    #[test]
    fn json_documents_are_read() {
        let mut s = Snapshot::new();
        s.add_json(
            Path::new("x.json"),
            r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"}}
{"apiVersion":"v1","kind":"NodeList","items":[{"metadata":{"name":"b"}}]}"#,
        )
        .unwrap();
        let names: Vec<_> =
            s.nodes.iter().map(|n| n.object.metadata.name.clone().unwrap()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(s.nodes[1].source.line, Some(2));
    }

    const COSCHED_GROUP: &str = "\
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: train, namespace: ml}
spec: {minMember: 4, minResources: {cpu: '8'}, scheduleTimeoutSeconds: 60}
status: {phase: Pending, running: 0}
";

    const VOLCANO_GROUP: &str = "\
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: train, namespace: ml}
spec: {minMember: 2, queue: default, minTaskMember: {worker: 2}}
";

    #[test]
    fn pod_groups_of_both_conventions_are_read() {
        use crate::model::GangConvention::{Coscheduling, Volcano};
        /// (case, YAML, PodGroups read, warning fragments).
        type Case<'a> =
            (&'a str, String, &'a [(GangConvention, &'a str, &'a str, i32)], &'a [&'a str]);
        let cases: &[Case<'_>] = &[
            (
                "a coscheduling PodGroup is read with its minMember",
                COSCHED_GROUP.to_string(),
                &[(Coscheduling, "ml", "train", 4)],
                &[],
            ),
            (
                "a volcano PodGroup is read with its minMember",
                VOLCANO_GROUP.to_string(),
                &[(Volcano, "ml", "train", 2)],
                &[],
            ),
            (
                "two conventions' PodGroups of the same name are different objects",
                format!("{COSCHED_GROUP}---\n{VOLCANO_GROUP}"),
                &[(Coscheduling, "ml", "train", 4), (Volcano, "ml", "train", 2)],
                &[],
            ),
            (
                "a PodGroup without a namespace lands in default and without a spec has minMember 0",
                "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\n"
                    .to_string(),
                &[(Coscheduling, "default", "g", 0)],
                &[],
            ),
            (
                "a PodGroupList expands into PodGroups",
                "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroupList\nitems:\n\
                 - metadata: {name: a, namespace: x}\n  spec: {minMember: 3}\n"
                    .to_string(),
                &[(Volcano, "x", "a", 3)],
                &[],
            ),
            (
                "a PodGroup of another API group is skipped with a warning",
                "apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\n\
                 metadata: {name: old, namespace: ml}\nspec: {minMember: 2}\n"
                    .to_string(),
                &[],
                &["PodGroup ml/old", "apiVersion \"scheduling.sigs.k8s.io/v1alpha1\" is not read"],
            ),
            (
                "spec.minAvailable on a PodGroup is ignored with a warning",
                "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n\
                 metadata: {name: j, namespace: ml}\nspec: {minAvailable: 3}\n"
                    .to_string(),
                &[(Volcano, "ml", "j", 0)],
                &[
                    "PodGroup.scheduling.volcano.sh ml/j",
                    "spec.minAvailable is not a PodGroup field",
                ],
            ),
        ];
        for (name, yaml, want, warnings) in cases {
            let s = snap(yaml).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got: Vec<_> = s
                .pod_groups
                .iter()
                .map(|g| {
                    let o = &g.object;
                    (o.convention, o.namespace.as_str(), o.name.as_str(), o.min_member)
                })
                .collect();
            assert_eq!(got, *want, "{name}");
            let text = s.warnings.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n");
            assert_eq!(s.warnings.is_empty(), warnings.is_empty(), "{name}: {text}");
            for w in *warnings {
                assert!(text.contains(w), "{name}: {text:?} lacks {w:?}");
            }
        }
    }

    #[test]
    fn bad_pod_groups_fail_naming_file_object_and_field() {
        let doc = |spec: &str| {
            format!(
                "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n\
                 metadata: {{name: train, namespace: ml}}\nspec: {spec}\n"
            )
        };
        let cases: &[(&str, String, &[&str])] = &[
            (
                "a negative minMember is refused",
                doc("{minMember: -2}"),
                &[
                    "test.yaml:1 (document 1)",
                    "PodGroup.scheduling.x-k8s.io ml/train",
                    "spec.minMember: must not be negative, got -2",
                ],
            ),
            (
                "a minMember that is not a number is refused",
                doc("{minMember: four}"),
                &["PodGroup.scheduling.x-k8s.io ml/train", "spec.minMember: invalid type: string"],
            ),
            (
                "a fractional minMember is refused",
                doc("{minMember: 1.5}"),
                &["spec.minMember: invalid type: floating point"],
            ),
            (
                "a spec that is a list is refused",
                doc("[4]"),
                &["PodGroup.scheduling.x-k8s.io ml/train", "spec: invalid type: sequence"],
            ),
            (
                "a PodGroup without a name is refused",
                "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\nmetadata: {namespace: ml}\n"
                    .to_string(),
                &["PodGroup.scheduling.volcano.sh ml/<unnamed>", "metadata.name: a name is required"],
            ),
            (
                "labels of the wrong type name their path",
                "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n\
                 metadata: {name: g, namespace: ml, labels: [a]}\n"
                    .to_string(),
                &["PodGroup.scheduling.volcano.sh ml/g", "metadata.labels: invalid type: sequence"],
            ),
            (
                "a PodGroup defined twice names both definitions",
                format!("{COSCHED_GROUP}---\n{COSCHED_GROUP}"),
                &[
                    "PodGroup.scheduling.x-k8s.io ml/train is defined twice",
                    "test.yaml:1 (document 1)",
                    "test.yaml:7 (document 2)",
                ],
            ),
        ];
        for (name, yaml, fragments) in cases {
            let err = match snap(yaml) {
                Ok(_) => panic!("{name}: loaded without an error"),
                Err(e) => e.to_string(),
            };
            for f in *fragments {
                assert!(err.contains(f), "{name}: {err:?} lacks {f:?}");
            }
        }
    }
}
