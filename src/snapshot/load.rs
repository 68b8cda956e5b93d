//! Reading files into a [`Snapshot`]: directory walking, YAML/JSON parsing, `List` expansion,
//! kind dispatch and typed deserialization.
//!
//! Files are read and parsed on all cores, and so are the documents and `List` items of a
//! large file ([`fast_json`], [`fast_yaml`], [`split_yaml`]); what each object becomes is worked out apart
//! ([`object`]) and added to the snapshot in file order, so that duplicates, warnings and the
//! first error are those a one-by-one read meets. The fast readers give way to the general
//! one (a `serde_json::Value` per document, then the typed object through
//! `serde_path_to_error`) whenever a file holds anything they do not take in full, so errors
//! are worded by one reader only.

mod fast_json;
mod fast_yaml;
mod object;
mod slim;
mod split_yaml;

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::{Snapshot, SnapshotError, Source, Warning};
use object::{Prepared, Task};

/// File extensions read when walking a directory.
const EXTENSIONS: &[&str] = &["yaml", "yml", "json"];

/// What [`load`] does, in order.
enum Step {
    /// Read a file.
    File(PathBuf, Strictness),
    /// A directory's files follow.
    DirectoryStart,
    /// A directory's files are all read: warn if they held no object.
    DirectoryEnd(PathBuf),
    /// Stop with this error (a path that cannot be read).
    Fail(SnapshotError),
}

/// Reads every file or directory in `paths` (directories recursively, `.yaml`/`.yml`/`.json`
/// files sorted by path; a file named explicitly is read whatever its extension: `.json` as
/// JSON, anything else as YAML).
///
/// Errors: unreadable paths, malformed documents, objects that do not deserialize, duplicate
/// objects, and no Kubernetes object at all. Empty files and directories without manifests
/// are warnings when other paths hold objects.
pub fn load(paths: &[PathBuf]) -> Result<Snapshot, SnapshotError> {
    let mut steps = Vec::new();
    for path in paths {
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(source) => {
                steps.push(Step::Fail(SnapshotError::Io { path: path.clone(), source }));
                break;
            }
        };
        if meta.is_dir() {
            let mut files = Vec::new();
            let mut visited = BTreeSet::new();
            if let Err(e) = walk(path, &mut files, &mut visited) {
                steps.push(Step::Fail(e));
                break;
            }
            files.sort();
            steps.push(Step::DirectoryStart);
            steps.extend(files.into_iter().map(|f| Step::File(f, Strictness::SkipNonObjects)));
            steps.push(Step::DirectoryEnd(path.clone()));
        } else {
            steps.push(Step::File(path.clone(), Strictness::Strict));
        }
    }
    // Every file at once; the results are added in order.
    let read = |step: &Step| match step {
        Step::File(file, strictness) => Some(read_file(file, *strictness)),
        _ => None,
    };
    let files = steps.iter().filter(|s| matches!(s, Step::File(..))).count();
    let parsed: Vec<Option<Result<Vec<Prepared>, SnapshotError>>> = if files > 1 {
        steps.par_iter().map(read).collect()
    } else {
        steps.iter().map(read).collect()
    };
    let mut snapshot = Snapshot::new();
    let mut directory_start = 0;
    for (step, parsed) in steps.into_iter().zip(parsed) {
        match (step, parsed) {
            (Step::File(file, _), Some(prepared)) => {
                snapshot.files.push(file);
                object::commit(&mut snapshot, prepared?)?;
            }
            (Step::DirectoryStart, _) => directory_start = snapshot.object_count(),
            (Step::DirectoryEnd(path), _) => {
                if snapshot.object_count() == directory_start {
                    snapshot.warnings.push(Warning {
                        source: None,
                        object: None,
                        message: format!(
                            "{}: no Kubernetes objects in this directory",
                            path.display()
                        ),
                    });
                }
            }
            (Step::Fail(e), _) => return Err(e),
            (Step::File(..), None) => {}
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

fn read_file(file: &Path, strictness: Strictness) -> Result<Vec<Prepared>, SnapshotError> {
    let text =
        read_text(file).map_err(|source| SnapshotError::Io { path: file.to_path_buf(), source })?;
    let is_json =
        file.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let prepared = if is_json {
        prepare_json(file, &text, strictness)
    } else {
        prepare_yaml(file, &text, strictness)
    };
    // Unmapping hundreds of megabytes takes a while; nothing waits for it.
    if text.len() >= PARALLEL_READ_MIN {
        std::thread::spawn(move || drop(text));
    }
    prepared
}

/// Files from this size on are read in pieces on all cores.
const PARALLEL_READ_MIN: usize = 8 << 20;

/// A file's text. A large regular file is read in pieces on all cores: copying from the page
/// cache and the first touch of each page of the buffer are most of its reading time.
fn read_text(file: &Path) -> std::io::Result<String> {
    #[cfg(unix)]
    {
        use std::io::Read;
        use std::os::unix::fs::FileExt;
        let mut f = std::fs::File::open(file)?;
        let meta = f.metadata()?;
        let len = usize::try_from(meta.len()).unwrap_or(usize::MAX);
        if meta.is_file() && (PARALLEL_READ_MIN..usize::MAX).contains(&len) {
            let mut buf = vec![0u8; len];
            let piece = len.div_ceil(rayon::current_num_threads() * 4).max(1 << 20);
            buf.par_chunks_mut(piece)
                .enumerate()
                .try_for_each(|(i, chunk)| f.read_exact_at(chunk, (i * piece) as u64))?;
            // Whatever was appended meanwhile, as a sequential read would have it.
            std::io::Seek::seek(&mut f, std::io::SeekFrom::Start(len as u64))?;
            f.read_to_end(&mut buf)?;
            return String::from_utf8(buf).map_err(|_| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "stream did not contain valid UTF-8",
                )
            });
        }
    }
    std::fs::read_to_string(file)
}

/// A document's top-level mapping, with the line of each element of `items` when it is a
/// sequence (the lines of `List` items).
pub(super) struct RawDoc {
    pub(super) value: Value,
    pub(super) item_lines: Vec<u64>,
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
            if SKIPPED_KEYS.contains(&key.as_str()) {
                map.next_value::<IgnoredAny>()?;
            } else if key == "items" {
                let items: Items = map.next_value()?;
                item_lines = items.lines;
                obj.insert(key, items.value);
            } else {
                let v = map.next_value::<SlimValue>()?.0;
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
pub(super) struct Items {
    pub(super) value: Value,
    pub(super) lines: Vec<u64>,
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
        while let Some(el) = seq.next_element::<serde_saphyr::Spanned<SlimValue>>()? {
            lines.push(el.referenced.line());
            values.push(el.value.0);
        }
        Ok(Items { value: Value::Array(values), lines })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Items, A::Error> {
        Value::deserialize(de::value::MapAccessDeserializer::new(map))
            .map(|value| Items { value, lines: Vec::new() })
    }

    forward_to_value!(|value| Items { value, lines: Vec::new() });
}

/// Keys whose values are never read, skipped unbuilt (`managedFields`, the bulk of what the
/// API server returns).
const SKIPPED_KEYS: &[&str] = &["managedFields"];

/// A `Value` without the [`SKIPPED_KEYS`] of any mapping in it.
struct SlimValue(Value);

impl<'de> Deserialize<'de> for SlimValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SlimValueVisitor)
    }
}

struct SlimValueVisitor;

impl<'de> Visitor<'de> for SlimValueVisitor {
    type Value = SlimValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SlimValue, A::Error> {
        let mut obj = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if SKIPPED_KEYS.contains(&key.as_str()) {
                map.next_value::<IgnoredAny>()?;
            } else {
                obj.insert(key, map.next_value::<SlimValue>()?.0);
            }
        }
        Ok(SlimValue(Value::Object(obj)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SlimValue, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(v) = seq.next_element::<SlimValue>()? {
            items.push(v.0);
        }
        Ok(SlimValue(Value::Array(items)))
    }

    forward_to_value!(SlimValue);
}

/// serde-saphyr's options for a text of `len` bytes. Alias expansion is bounded by what it
/// adds, not by how many aliases there are: replaying anchored nodes may add at most a
/// million events or one per byte of text, whichever is more (a "billion laughs" text of a
/// few hundred bytes asks for a billion), while YAML that shares objects through anchors,
/// however many aliases it has, loads.
pub(super) fn yaml_options(len: usize) -> serde_saphyr::Options {
    let expansion = len.max(1_000_000);
    let mut options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_events: 1_000_000_000,
            max_nodes: 500_000_000,
            max_documents: 10_000_000,
            max_total_scalar_bytes: 16 * 1024 * 1024 * 1024,
            max_aliases: expansion,
            max_anchors: expansion,
            max_recorded_anchor_events: expansion,
            enforce_alias_anchor_ratio: false,
        },
        with_snippet: false,
        leading_zero_numbers_as_strings: true,
        underscored_numbers_as_strings: true,
    };
    options.alias_limits.max_total_replayed_events = expansion;
    options
}

fn yaml_error(file: &Path, e: &serde_saphyr::Error) -> SnapshotError {
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
    // Alias expansion past its bound (see `yaml_options`).
    if message.contains("budget breached")
        && (message.contains("Alias") || message.contains("Anchor"))
        || message.contains("replay")
    {
        message = format!(
            "anchors and aliases expand past the limit for a file of this size (an alias \
             bomb?): {message}"
        );
    }
    SnapshotError::Yaml { file: file.to_path_buf(), line, column, message }
}

fn no_documents(file: &Path) -> Prepared {
    Prepared::Warning(Warning {
        source: None,
        object: None,
        message: format!("{}: file has no documents", file.display()),
    })
}

/// The objects of a YAML stream (one or more documents), prepared on all cores.
fn prepare_yaml(
    file: &Path,
    text: &str,
    strictness: Strictness,
) -> Result<Vec<Prepared>, SnapshotError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if let Some(prepared) = fast_yaml::prepare(file, text, strictness) {
        return Ok(prepared);
    }
    // Cut into pieces parsed apart when that is sure to read the same; any error is worded by
    // the whole-file parse.
    if let Some(docs) = split_yaml::parse(text) {
        let prepared = yaml_doc_prepared(file, docs, strictness);
        if !prepared.iter().any(Prepared::is_error) {
            return Ok(prepared);
        }
    }
    prepare_yaml_whole(file, text, strictness)
}

/// The objects of YAML documents, prepared on all cores.
fn yaml_doc_prepared(
    file: &Path,
    docs: Vec<split_yaml::Doc>,
    strictness: Strictness,
) -> Vec<Prepared> {
    let mut tasks: Vec<Task> = Vec::new();
    if docs.is_empty() {
        tasks.push(Err(Box::new(no_documents(file))));
    }
    for (i, doc) in docs.into_iter().enumerate() {
        let line = doc.line;
        let source = Source {
            file: file.to_path_buf(),
            document: i,
            item: None,
            line: (line > 0).then_some(line),
        };
        object::document_tasks(doc.value, source, &doc.item_lines, strictness, &mut tasks);
    }
    object::prepare_all(tasks)
}

/// [`prepare_yaml`] with the whole text parsed at once.
fn prepare_yaml_whole(
    file: &Path,
    text: &str,
    strictness: Strictness,
) -> Result<Vec<Prepared>, SnapshotError> {
    let docs: Vec<serde_saphyr::Spanned<RawDoc>> =
        serde_saphyr::from_multiple_with_options(text, yaml_options(text.len()))
            .map_err(|e| yaml_error(file, &e))?;
    Ok(yaml_doc_prepared(
        file,
        docs.into_iter()
            .map(|d| split_yaml::Doc {
                line: d.referenced.line(),
                item_lines: d.value.item_lines,
                value: d.value.value,
            })
            .collect(),
        strictness,
    ))
}

/// Adds the documents of a YAML stream.
pub(super) fn add_yaml(
    snapshot: &mut Snapshot,
    file: &Path,
    text: &str,
    strictness: Strictness,
) -> Result<(), SnapshotError> {
    object::commit(snapshot, prepare_yaml(file, text, strictness)?)
}

/// The objects of a JSON text (one value or several concatenated), prepared on all cores.
fn prepare_json(
    file: &Path,
    text: &str,
    strictness: Strictness,
) -> Result<Vec<Prepared>, SnapshotError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if let Some(prepared) = fast_json::prepare(file, text, strictness) {
        return Ok(prepared);
    }
    prepare_json_general(file, text, strictness)
}

/// [`prepare_json`] through a `Value` per document, with errors naming the file, the object
/// and the field.
fn prepare_json_general(
    file: &Path,
    text: &str,
    strictness: Strictness,
) -> Result<Vec<Prepared>, SnapshotError> {
    // Duplicate keys are an error, as in YAML (serde_json alone would keep the last one).
    let mut stream =
        serde_json::Deserializer::from_str(text).into_iter::<crate::json::StrictValue>();
    let mut tasks = Vec::new();
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
        object::document_tasks(value, source, &[], strictness, &mut tasks);
        count += 1;
    }
    if count == 0 {
        tasks.push(Err(Box::new(no_documents(file))));
    }
    Ok(object::prepare_all(tasks))
}

/// Adds the values of a JSON text (one value or several concatenated).
pub(super) fn add_json(
    snapshot: &mut Snapshot,
    file: &Path,
    text: &str,
    strictness: Strictness,
) -> Result<(), SnapshotError> {
    object::commit(snapshot, prepare_json(file, text, strictness)?)
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::GangConvention;

    fn snap(yaml: &str) -> Result<Snapshot, SnapshotError> {
        let mut s = Snapshot::new();
        s.add_yaml(Path::new("test.yaml"), yaml)?;
        Ok(s)
    }

    #[test]
    fn large_files_read_in_pieces_load_as_text_handed_in_does() {
        let dir = tempfile::tempdir().unwrap();
        let node = |i: usize| {
            format!(
                "{{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {{\"name\": \"n-{i:06}\", \
                 \"labels\": {{\"zone\": \"z{}\", \"pad\": \"{}\"}}}}}}",
                i % 3,
                "é".repeat(200)
            )
        };
        let items: Vec<String> = (0..20_000).map(node).collect();
        let text = format!(
            "{{\"apiVersion\": \"v1\", \"kind\": \"List\", \"items\": [{}]}}",
            items.join(",\n")
        );
        assert!(text.len() > PARALLEL_READ_MIN, "large enough to be read in pieces");
        let path = dir.path().join("big.json");
        std::fs::write(&path, &text).unwrap();
        assert_eq!(read_text(&path).unwrap(), text);
        let loaded = load(std::slice::from_ref(&path)).unwrap();
        let mut direct = Snapshot::new();
        direct.files.push(path.clone());
        direct.add_json(&path, &text).unwrap();
        assert_eq!(format!("{loaded:?}"), format!("{direct:?}"));
        assert_eq!(loaded.nodes.len(), 20_000);

        // A byte that is not UTF-8 far into the file is an error naming the file.
        let mut bytes = text.into_bytes();
        let at = bytes.len() - 1000;
        bytes[at] = 0xff;
        std::fs::write(&path, &bytes).unwrap();
        let err = load(std::slice::from_ref(&path)).unwrap_err().to_string();
        assert!(err.contains("big.json") && err.contains("valid UTF-8"), "{err}");
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

    /// A snapshot from prepared results, compared whole (objects, sources, warnings).
    fn committed(prepared: Vec<Prepared>) -> String {
        let mut s = Snapshot::new();
        object::commit(&mut s, prepared).unwrap();
        format!("{s:?}")
    }

    #[test]
    fn the_fast_readers_read_the_demo_and_the_volumes_fixture_as_the_general_reader_does() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let files = [
            ("demo", "nodes.yaml"),
            ("demo", "pods.yaml"),
            ("demo", "workloads.yaml"),
            // PersistentVolumeClaims (typed) and PersistentVolumes (skipped).
            ("volumes", "claims.yaml"),
            ("volumes", "pods.yaml"),
        ];
        for (dir, name) in files {
            let path = fixtures.join(dir).join(name);
            let text = std::fs::read_to_string(&path).unwrap();
            let general = committed(prepare_yaml_whole(&path, &text, Strictness::Strict).unwrap());
            if name == "claims.yaml" {
                assert!(general.contains("PersistentVolumeClaim"), "{dir}/{name}: claims typed");
            }
            if text.len() > 1_000_000 {
                let docs = split_yaml::parse(&text).expect("a large List is cut");
                let cut = yaml_doc_prepared(&path, docs, Strictness::Strict);
                assert_eq!(committed(cut), general, "{name}: YAML cut in pieces");
            }
            // The same objects as kubectl's JSON, with managedFields (never read).
            let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap();
            let mut items = Vec::new();
            for mut doc in docs {
                match doc.get_mut("items").map(Value::take) {
                    Some(Value::Array(list)) => items.extend(list),
                    _ => items.push(doc),
                }
            }
            for item in &mut items {
                item["metadata"]["managedFields"] = serde_json::json!([{
                    "apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "kubectl",
                    "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}}, "operation": "Update"
                }]);
            }
            let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
            let json = serde_json::to_string_pretty(&list).unwrap();
            let json_path = path.with_extension("json");
            let fast = fast_json::prepare(&json_path, &json, Strictness::Strict)
                .unwrap_or_else(|| panic!("{name}: the fast JSON reader takes kubectl's JSON"));
            let general_json = prepare_json_general(&json_path, &json, Strictness::Strict).unwrap();
            assert_eq!(committed(fast), committed(general_json), "{name}: JSON typed directly");
        }
    }

    #[test]
    fn large_json_lists_typed_while_scanned_read_as_the_general_reader_does() {
        // Past fast_json's streaming size: elements are typed while the scan goes on, on the
        // guess "a List of the apiVersion before items"; a PodList (items without kind), an
        // apiVersion after items, a second document, a duplicate and a bad element check
        // that a wrong guess or a failed read changes nothing.
        let pod = |i: usize, kind: bool| {
            let mut p = serde_json::json!({
                "apiVersion": "v1",
                "metadata": {"name": format!("pod-{i:05}"), "namespace": "ns",
                             "labels": {"app": format!("a{}", i % 7)}},
                "spec": {"containers": [{"name": "c", "image": "nginx",
                         "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}
            });
            if kind {
                p["kind"] = "Pod".into();
            }
            p
        };
        let items = |kind: bool| (0..6000).map(|i| pod(i, kind)).collect::<Vec<_>>();
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items(true)});
        let pretty = serde_json::to_string_pretty(&list).unwrap();
        let pod_list =
            serde_json::json!({"apiVersion": "v1", "kind": "PodList", "items": items(false)});
        let after = format!(
            "{{\"kind\": \"List\", \"items\": {}, \"apiVersion\": \"v1\"}}",
            serde_json::to_string(&items(true)).unwrap()
        );
        let two_docs = format!(
            "{}\n{}",
            serde_json::to_string(&list).unwrap(),
            serde_json::to_string(&serde_json::json!({
                "apiVersion": "v1", "kind": "List",
                "items": (6000..12000).map(|i| pod(i, true)).collect::<Vec<_>>()
            }))
            .unwrap()
        );
        let mut duplicate = list.clone();
        duplicate["items"][5999]["metadata"]["name"] = "pod-00007".into();
        let mut bad = list.clone();
        bad["items"][2500]["spec"]["containers"] = "no".into();
        let texts = [
            ("pretty", pretty),
            ("PodList", serde_json::to_string(&pod_list).unwrap()),
            ("apiVersion after items", after),
            ("two documents", two_docs),
            ("duplicate", serde_json::to_string(&duplicate).unwrap()),
            ("bad element", serde_json::to_string(&bad).unwrap()),
        ];
        let path = Path::new("big.json");
        let outcome = |prepared: Vec<Prepared>| {
            let mut s = Snapshot::new();
            match object::commit(&mut s, prepared) {
                Ok(()) => format!("{s:?}"),
                Err(e) => format!("error: {e}"),
            }
        };
        for (what, text) in texts {
            assert!(text.len() > fast_json::STREAM_MIN, "{what}: large enough to stream");
            let general = outcome(prepare_json_general(path, &text, Strictness::Strict).unwrap());
            let read = outcome(prepare_json(path, &text, Strictness::Strict).unwrap());
            assert_eq!(read, general, "{what}");
            let fast = fast_json::prepare(path, &text, Strictness::Strict);
            match what {
                "bad element" => assert!(fast.is_none(), "{what}: left to the general reader"),
                _ => assert_eq!(outcome(fast.expect(what)), general, "{what}: fast reader"),
            }
        }
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
