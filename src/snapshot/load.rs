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
mod tests;
