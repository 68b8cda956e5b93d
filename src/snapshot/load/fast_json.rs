//! The fast JSON reader: the objects of a JSON file typed straight from its text, on all cores.
//!
//! Input: a JSON text (one value, or several concatenated) as `kubectl get -o json` and the API
//! server write it. A quick pass finds where each document, and each element of a `List`'s
//! `items`, begins and ends; each is then read on its own thread with `serde_json`, through
//! [`Slim`] (a key twice in one mapping is refused, `managedFields` skipped unbuilt), into its
//! k8s-openapi type when its first keys are `apiVersion` and `kind` of a kind kplace reads;
//! objects of other kinds are skipped unread; anything else becomes a `Value` for the general
//! checks ([`object`]).
//!
//! Output: the file's [`Prepared`] objects, or `None` when the text is not one this reader takes
//! in full: a syntax error, a duplicate key, a field of the wrong type, or any object that would
//! stop the load. The caller then reads the file with the general reader, whose errors name
//! the file, the object and the field exactly as before; the fast reader never words an error.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

use serde::Deserialize;
use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use super::Strictness;
use super::object::{self, KINDS, Prepared, Typed};
use super::slim::{KeySeed, Resume, SlimMap};
use crate::json::StrictValue;
use crate::snapshot::{ObjectRef, SnapshotError, Source, Warning};

/// Where a document of the text is, and the elements of its `items` array if it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DocSpan {
    start: usize,
    end: usize,
    /// 1-based line of `start`.
    line: u64,
    items: Option<ItemsSpan>,
}

/// A document's top-level `items` array: the array (brackets included) and its elements.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ItemsSpan {
    start: usize,
    end: usize,
    elements: Vec<(usize, usize)>,
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// `b[i]` is `"`: the index after the closing quote.
fn skip_string(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        i += memchr::memchr2(b'"', b'\\', b.get(i..)?)?;
        match b[i] {
            b'"' => return Some(i + 1),
            _ => i += 2,
        }
    }
}

/// The index after the value starting at `i`. Of a container, only its own kind of bracket
/// is counted (in valid JSON the two kinds nest, and each element is parsed in full later,
/// which finds any mismatch).
fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => skip_string(b, i),
        open @ (b'{' | b'[') => {
            let close = if open == b'{' { b'}' } else { b']' };
            let mut depth = 0usize;
            let mut j = i;
            loop {
                j += memchr::memchr3(b'"', open, close, b.get(j..)?)?;
                match b[j] {
                    b'"' => {
                        j = skip_string(b, j)?;
                        continue;
                    }
                    c if c == open => depth += 1,
                    _ => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
            {
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

/// The documents of a text, each an object; `None` for anything else (the general reader
/// handles it).
fn scan(b: &[u8]) -> Option<Vec<DocSpan>> {
    scan_with(b, &mut |_| {})
}

/// `List` elements found so far, handed out while the scan goes on ([`scan_with`]).
struct Found<'a> {
    /// The document.
    doc: usize,
    /// 1-based line of the document's start.
    line: u64,
    /// The document's `apiVersion`, when it came before `items` as a string without escapes.
    api_version: Option<&'a str>,
    /// Index in `items` of the first of `elements`.
    first: usize,
    elements: Vec<(usize, usize)>,
}

/// Elements handed to the sink at a time.
const FOUND_BATCH: usize = 256;

/// [`scan`], handing each document's `items` elements to `sink` in batches as they are found
/// (every element once, in order, before the scan returns; also when it then fails).
fn scan_with<'a>(b: &'a [u8], sink: &mut dyn FnMut(Found<'a>)) -> Option<Vec<DocSpan>> {
    let mut docs = Vec::new();
    let mut line = 1u64;
    let mut counted = 0usize;
    let mut i = skip_ws(b, 0);
    while i < b.len() {
        if b[i] != b'{' {
            return None;
        }
        line += b[counted..i].iter().filter(|&&c| c == b'\n').count() as u64;
        counted = i;
        let start = i;
        let mut items = None;
        let mut api_version: Option<&'a str> = None;
        i = skip_ws(b, i + 1);
        if b.get(i) == Some(&b'}') {
            i += 1;
        } else {
            loop {
                if b.get(i) != Some(&b'"') {
                    return None;
                }
                let key_end = skip_string(b, i)?;
                let is_items = &b[i..key_end] == b"\"items\"";
                let is_api_version = &b[i..key_end] == b"\"apiVersion\"";
                i = skip_ws(b, key_end);
                if b.get(i) != Some(&b':') {
                    return None;
                }
                i = skip_ws(b, i + 1);
                if is_api_version && items.is_none() && b.get(i) == Some(&b'"') {
                    let end = skip_string(b, i)?;
                    let raw = &b[i + 1..end - 1];
                    api_version =
                        (!raw.contains(&b'\\')).then(|| std::str::from_utf8(raw).ok()).flatten();
                }
                if is_items && b.get(i) == Some(&b'[') && items.is_none() {
                    let array_start = i;
                    let mut elements: Vec<(usize, usize)> = Vec::new();
                    let mut handed = 0;
                    let doc = docs.len();
                    let mut hand = |elements: &[(usize, usize)], handed: &mut usize| {
                        let found = Found {
                            doc,
                            line,
                            api_version,
                            first: *handed,
                            elements: elements[*handed..].to_vec(),
                        };
                        *handed = elements.len();
                        sink(found);
                    };
                    i = skip_ws(b, i + 1);
                    if b.get(i) == Some(&b']') {
                        i += 1;
                    } else {
                        loop {
                            let Some(element_end) = skip_value(b, i) else {
                                hand(&elements, &mut handed);
                                return None;
                            };
                            elements.push((i, element_end));
                            if elements.len() - handed == FOUND_BATCH {
                                hand(&elements, &mut handed);
                            }
                            i = skip_ws(b, element_end);
                            match b.get(i) {
                                Some(b',') => i = skip_ws(b, i + 1),
                                Some(b']') => {
                                    i += 1;
                                    break;
                                }
                                _ => {
                                    hand(&elements, &mut handed);
                                    return None;
                                }
                            }
                        }
                    }
                    if handed < elements.len() {
                        hand(&elements, &mut handed);
                    }
                    items = Some(ItemsSpan { start: array_start, end: i, elements });
                } else {
                    i = skip_value(b, i)?;
                }
                i = skip_ws(b, i);
                match b.get(i)? {
                    b',' => i = skip_ws(b, i + 1),
                    b'}' => {
                        i += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        docs.push(DocSpan { start, end: i, line, items });
        i = skip_ws(b, i);
    }
    Some(docs)
}

/// One piece of the text to read on its own: a document, or an element of a `List`.
pub(super) struct Unit<'t> {
    pub(super) text: &'t str,
    pub(super) source: Source,
    /// For a `List` element: the list's item kind (typed lists) and apiVersion.
    pub(super) list: Option<(Option<&'t str>, &'t str)>,
}

/// Texts from this size on are typed while they are scanned.
pub(super) const STREAM_MIN: usize = 1 << 20;

/// Elements of a `List` typed while the scan went on, on the guess that the document is a
/// `List` (no item kind) of the `apiVersion` found before its `items`: `(document, first
/// element, its apiVersion, what each element became)`.
type Streamed = Vec<(usize, usize, String, Vec<Option<Vec<Prepared>>>)>;

/// The documents of `text`, with the `List` elements typed while the scan goes on (large texts
/// only): the scan is the one part of the load that runs on one core.
fn scan_and_stream(
    file: &Path,
    text: &str,
    strictness: Strictness,
) -> (Option<Vec<DocSpan>>, Streamed) {
    if text.len() < STREAM_MIN {
        return (scan(text.as_bytes()), Vec::new());
    }
    let streamed = std::sync::Mutex::new(Streamed::new());
    let docs = rayon::scope(|scope| {
        scan_with(text.as_bytes(), &mut |found: Found<'_>| {
            let Some(api_version) = found.api_version else { return };
            let (streamed, api_version) = (&streamed, api_version.to_string());
            scope.spawn(move |_| {
                let source = Source {
                    file: file.to_path_buf(),
                    document: found.doc,
                    item: None,
                    line: Some(found.line),
                };
                let prepared = found
                    .elements
                    .iter()
                    .enumerate()
                    .map(|(i, &(start, end))| {
                        let unit = Unit {
                            text: text.get(start..end)?,
                            source: Source { item: Some(found.first + i), ..source.clone() },
                            list: Some((None, api_version.as_str())),
                        };
                        prepare_unit(unit, strictness)
                    })
                    .collect();
                let mut streamed = streamed.lock().unwrap_or_else(|e| e.into_inner());
                streamed.push((found.doc, found.first, api_version, prepared));
            });
        })
    });
    let mut streamed = streamed.into_inner().unwrap_or_else(|e| e.into_inner());
    streamed.sort_unstable_by_key(|&(doc, first, ..)| (doc, first));
    (docs, streamed)
}

/// See the module documentation.
pub(super) fn prepare(file: &Path, text: &str, strictness: Strictness) -> Option<Vec<Prepared>> {
    let (docs, mut streamed) = scan_and_stream(file, text, strictness);
    let docs = docs?;
    if docs.is_empty() {
        return Some(vec![Prepared::Warning(Warning {
            source: None,
            object: None,
            message: format!("{}: file has no documents", file.display()),
        })]);
    }
    // The lists' own fields, read first (they are small): is it a List, and of what kind?
    let mut heads = Vec::with_capacity(docs.len());
    for doc in &docs {
        let Some(items) = &doc.items else {
            heads.push(None);
            continue;
        };
        let skeleton =
            format!("{}[]{}", text.get(doc.start..items.start)?, text.get(items.end..doc.end)?);
        let head = serde_json::from_str::<StrictValue>(&skeleton).ok()?.0;
        let api_version = head.get("apiVersion").and_then(Value::as_str)?.to_string();
        let kind = head.get("kind").and_then(Value::as_str)?.to_string();
        if api_version.is_empty() || !object::is_list(&kind, true) {
            return None;
        }
        heads.push(Some((api_version, kind)));
    }
    // The elements typed during the scan stand where the guess held: a `List` of that
    // apiVersion, every element typed. The rest is typed now, in one pass on all cores.
    let mut streamed_docs: Vec<Option<Vec<Option<Vec<Prepared>>>>> =
        (0..docs.len()).map(|_| None).collect();
    let mut pieces = streamed.drain(..).peekable();
    while let Some((d, _, api_version, prepared)) = pieces.next() {
        let mut all = prepared;
        while let Some((_, _, _, more)) = pieces.next_if(|p| p.0 == d) {
            all.extend(more);
        }
        let guessed = matches!(&heads[d], Some((v, kind)) if *v == api_version && kind == "List")
            && docs[d].items.as_ref().is_some_and(|items| items.elements.len() == all.len());
        if guessed {
            streamed_docs[d] = Some(all);
        }
    }
    let mut units = Vec::new();
    // Where each document's results start among the units' results (`None`: streamed).
    let mut order: Vec<Option<Vec<Option<Vec<Prepared>>>>> = Vec::with_capacity(docs.len());
    let mut unit_counts = Vec::with_capacity(docs.len());
    for (d, (doc, head)) in docs.iter().zip(&heads).enumerate() {
        let source =
            Source { file: file.to_path_buf(), document: d, item: None, line: Some(doc.line) };
        let before = units.len();
        if let Some(done) = streamed_docs[d].take() {
            order.push(Some(done));
            unit_counts.push(0);
            continue;
        }
        order.push(None);
        match (head, &doc.items) {
            (Some((api_version, kind)), Some(items)) => {
                let item_kind = kind.strip_suffix("List").filter(|k| !k.is_empty());
                for (i, &(start, end)) in items.elements.iter().enumerate() {
                    units.push(Unit {
                        text: text.get(start..end)?,
                        source: Source { item: Some(i), ..source.clone() },
                        list: Some((item_kind, api_version.as_str())),
                    });
                }
            }
            _ => units.push(Unit { text: text.get(doc.start..doc.end)?, source, list: None }),
        }
        unit_counts.push(units.len() - before);
    }
    let mut typed = object::map_in_order(units, |u| prepare_unit(u, strictness)).into_iter();
    let mut prepared: Vec<Prepared> = Vec::new();
    for (done, count) in order.into_iter().zip(unit_counts) {
        let results: Vec<Option<Vec<Prepared>>> = match done {
            Some(done) => done,
            None => typed.by_ref().take(count).collect(),
        };
        for r in results {
            prepared.extend(r?);
        }
    }
    if prepared.iter().any(Prepared::is_error) {
        return None;
    }
    Some(prepared)
}

/// One document or `List` element of JSON text, typed; `None` where the general reader must
/// read the file (the fast YAML reader hands its pieces, turned into JSON, here too).
pub(super) fn prepare_unit(unit: Unit<'_>, strictness: Strictness) -> Option<Vec<Prepared>> {
    let (item_kind, api_version) = unit.list.unwrap_or((None, ""));
    let seed = ItemSeed { default_kind: item_kind, default_api_version: api_version };
    let mut de = serde_json::Deserializer::from_str(unit.text);
    let parsed = seed.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(match parsed {
        Parsed::Typed(typed, kind, namespaced) => {
            vec![prepare_typed(typed, kind, namespaced, unit.source)]
        }
        Parsed::Skipped(kind) => {
            tracing::debug!(kind = %kind, at = %unit.source, "skipping an object of a kind kplace does not read");
            vec![Prepared::Skipped { kind, warning: None }]
        }
        Parsed::Value(value) => {
            let mut tasks = Vec::new();
            match unit.list {
                Some((item_kind, api_version)) => {
                    tasks.push(object::list_item_task(item_kind, api_version, value, unit.source));
                }
                None => object::document_tasks(value, unit.source, &[], strictness, &mut tasks),
            }
            tasks
                .into_iter()
                .map(|t| match t {
                    Ok((value, source)) => object::prepare_object(value, source),
                    Err(p) => *p,
                })
                .collect()
        }
    })
}

/// An object typed directly: its identity, the name check, `default` for a missing namespace.
fn prepare_typed(mut typed: Box<Typed>, kind: &str, namespaced: bool, source: Source) -> Prepared {
    let meta = match &mut *typed {
        Typed::Node(o) => &mut o.metadata,
        Typed::Pod(o) => &mut o.metadata,
        Typed::Namespace(o) => &mut o.metadata,
        Typed::Service(o) => &mut o.metadata,
        Typed::ReplicationController(o) => &mut o.metadata,
        Typed::Pdb(o) => &mut o.metadata,
        Typed::Pvc(o) => &mut o.metadata,
        Typed::PriorityClass(o) => &mut o.metadata,
        Typed::ReplicaSet(o) => &mut o.metadata,
        Typed::StatefulSet(o) => &mut o.metadata,
        // Never typed directly (they go through a `Value`).
        Typed::PodGroup(_) => {
            return Prepared::Error(SnapshotError::NotAnObject {
                at: Box::new(source),
                problem: "a PodGroup is read through the general reader".to_string(),
            });
        }
    };
    let Some(name) = meta.name.clone().filter(|n| !n.is_empty()) else {
        // Worded by the general reader.
        return Prepared::Error(SnapshotError::NotAnObject {
            at: Box::new(source),
            problem: "a name is required".to_string(),
        });
    };
    let namespace = if namespaced {
        if meta.namespace.as_deref().is_none_or(str::is_empty) {
            meta.namespace = Some("default".to_string());
        }
        meta.namespace.clone()
    } else {
        None
    };
    let object = ObjectRef { kind: kind.to_string(), namespace, name };
    Prepared::Object { object, source, typed: Ok((typed, Vec::new())) }
}

/// What the fast reader made of one object.
enum Parsed {
    /// Typed, with its kind and whether it is namespaced.
    Typed(Box<Typed>, &'static str, bool),
    /// A kind kplace does not read (not a `List`, not a PodGroup), left unread.
    Skipped(String),
    /// Anything else, for the general checks.
    Value(Value),
}

/// Reads one object (see [`Parsed`]). `default_kind`: the item kind of a typed list, given
/// with `default_api_version` to items that omit theirs.
struct ItemSeed<'a> {
    default_kind: Option<&'a str>,
    default_api_version: &'a str,
}

impl<'de> DeserializeSeed<'de> for ItemSeed<'_> {
    type Value = Parsed;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Parsed, D::Error> {
        d.deserialize_any(self)
    }
}

/// The typed object of `kind` from the rest of a mapping.
fn typed_rest<'de, A: MapAccess<'de>>(
    kind: &str,
    rest: Resume<'de, SlimMap<'de, A>>,
) -> Result<Typed, A::Error> {
    let d = MapAccessDeserializer::new(rest);
    use k8s_openapi::api::apps::v1 as apps;
    use k8s_openapi::api::core::v1 as k8s;
    use k8s_openapi::api::policy::v1 as policy;
    use k8s_openapi::api::scheduling::v1 as scheduling;
    Ok(match kind {
        "Node" => Typed::Node(k8s::Node::deserialize(d)?),
        "Pod" => Typed::Pod(k8s::Pod::deserialize(d)?),
        "Namespace" => Typed::Namespace(k8s::Namespace::deserialize(d)?),
        "Service" => Typed::Service(k8s::Service::deserialize(d)?),
        "ReplicationController" => {
            Typed::ReplicationController(k8s::ReplicationController::deserialize(d)?)
        }
        "PodDisruptionBudget" => Typed::Pdb(policy::PodDisruptionBudget::deserialize(d)?),
        "PersistentVolumeClaim" => Typed::Pvc(k8s::PersistentVolumeClaim::deserialize(d)?),
        "PriorityClass" => Typed::PriorityClass(scheduling::PriorityClass::deserialize(d)?),
        "ReplicaSet" => Typed::ReplicaSet(apps::ReplicaSet::deserialize(d)?),
        "StatefulSet" => Typed::StatefulSet(apps::StatefulSet::deserialize(d)?),
        other => return Err(de::Error::custom(format_args!("kind {other:?} is not typed"))),
    })
}

/// Hands back key-value pairs already read, then the rest of the mapping.
struct Replay<'de, A> {
    read: std::vec::IntoIter<(String, Value)>,
    value: Option<Value>,
    rest: Resume<'de, A>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Replay<'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.read.next() {
            Some((key, value)) => {
                self.value = Some(value);
                seed.deserialize(de::value::StringDeserializer::new(key)).map(Some)
            }
            None => self.rest.next_key_seed(seed),
        }
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        match self.value.take() {
            Some(v) => seed.deserialize(v).map_err(de::Error::custom),
            None => self.rest.next_value_seed(seed),
        }
    }
}

impl<'de> Visitor<'de> for ItemSeed<'_> {
    type Value = Parsed;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parsed, A::Error> {
        // `apiVersion` and `kind` come first in what kubectl and the API server write.
        let mut read: Vec<(String, Value)> = Vec::with_capacity(2);
        let mut pending = None;
        while let Some(key) = map.next_key_seed(KeySeed)? {
            if key != "apiVersion" && key != "kind" {
                pending = Some(key);
                break;
            }
            if read.iter().any(|(k, _)| *k == key) {
                return Err(de::Error::custom(format_args!("duplicate key {key:?}")));
            }
            let value = map.next_value::<StrictValue>()?.0;
            read.push((key.into_owned(), value));
        }
        let field = |name: &str| read.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        let kind = match field("kind") {
            Some(k) => k,
            None => self.default_kind,
        };
        let api_version = match field("apiVersion") {
            Some(a) => a,
            None => self.default_kind.map(|_| self.default_api_version),
        };
        if let (Some(kind), Some(api_version)) = (kind, api_version) {
            if let Some(&(k, expected, namespaced)) = KINDS.iter().find(|(k, _, _)| *k == kind)
                && expected == api_version
            {
                let seen = read.iter().map(|(k, _)| Cow::Owned(k.clone())).collect();
                let rest = Resume { pending, inner: SlimMap::new(map, seen) };
                return typed_rest(k, rest).map(|t| Parsed::Typed(Box::new(t), k, namespaced));
            }
            if !kind.is_empty()
                && !api_version.is_empty()
                && !KINDS.iter().any(|(k, _, _)| *k == kind)
                && kind != "PodGroup"
                && !kind.ends_with("List")
            {
                let kind = kind.to_string();
                if pending.is_some() {
                    map.next_value::<IgnoredAny>()?;
                    while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                }
                return Ok(Parsed::Skipped(kind));
            }
        }
        let rest =
            Replay { read: read.into_iter(), value: None, rest: Resume { pending, inner: map } };
        StrictValue::deserialize(MapAccessDeserializer::new(rest)).map(|v| Parsed::Value(v.0))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Parsed, A::Error> {
        StrictValue::deserialize(SeqAccessDeserializer::new(seq)).map(|v| Parsed::Value(v.0))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Parsed, E> {
        Ok(Parsed::Value(Value::Bool(v)))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Parsed, E> {
        Ok(Parsed::Value(Value::from(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Parsed, E> {
        Ok(Parsed::Value(Value::from(v)))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Parsed, E> {
        Ok(Parsed::Value(Value::from(v)))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Parsed, E> {
        Ok(Parsed::Value(Value::String(v.to_string())))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Parsed, E> {
        Ok(Parsed::Value(Value::Null))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scan_finds_documents_and_list_elements() {
        let text =
            "{\"a\": \"}{\\\"\", \"items\": [ {\"x\": [1, {}]} , 2,\"s]\"], \"b\": {}}\n\n{}";
        let docs = scan(text.as_bytes()).unwrap();
        assert_eq!(docs.len(), 2);
        let items = docs[0].items.as_ref().unwrap();
        let elements: Vec<&str> = items.elements.iter().map(|&(s, e)| &text[s..e]).collect();
        assert_eq!(elements, ["{\"x\": [1, {}]}", "2", "\"s]\""]);
        assert_eq!(&text[items.start..items.end], "[ {\"x\": [1, {}]} , 2,\"s]\"]");
        assert_eq!((docs[1].line, &text[docs[1].start..docs[1].end]), (3, "{}"));
        for not_objects in ["[1]", "{\"a\": 1} 2", "{\"a\" 1}", "{\"a\": [1}", "{\"a\": \"x"] {
            assert_eq!(scan(not_objects.as_bytes()), None, "{not_objects}");
        }
    }
}
