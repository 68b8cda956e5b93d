//! JSON parsing that rejects duplicate keys.
//!
//! Input: JSON text; output: a `serde_json::Value`, or an error naming the duplicated key and
//! the path of the object that holds it (`items[3].metadata.labels`). `serde_json` keeps the
//! last of two equal keys without a word, while the YAML reader and the API server (its strict
//! decoding, `json.Unmarshal` with `DisallowDuplicateFields` in `k8s.io/apimachinery`
//! `pkg/runtime/serializer/json`) reject them, so snapshots and plans are read through here.
//!
//! It builds the same `Value` as `serde_json::Value`'s own deserializer, in the same single pass,
//! with one map lookup per key (the one inserting it); the path is assembled only while an error
//! unwinds, so a document without duplicates costs what it cost before.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Value};

/// One step of a path into a document.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

thread_local! {
    /// The steps from the failing value up to the root, pushed while the error unwinds.
    static UNWIND: RefCell<Vec<Step>> = const { RefCell::new(Vec::new()) };
    /// The duplicated key, when the error is a duplicate.
    static DUPLICATE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// A duplicate key found in a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    /// The path of the object holding the key (`items[3].metadata`; empty for the top level).
    pub path: String,
    /// The key.
    pub key: String,
}

impl fmt::Display for Duplicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "duplicate key {:?}", self.key)
        } else {
            write!(f, "{}: duplicate key {:?}", self.path, self.key)
        }
    }
}

/// A `Value` read with duplicate keys rejected. Use it wherever `serde_json::Value` is
/// deserialized from text (`serde_json::from_str::<StrictValue>`, a `StreamDeserializer`); after
/// an error, [`take_duplicate`] tells whether it was a duplicate key, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct StrictValue(pub Value);

impl<'de> Deserialize<'de> for StrictValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        UNWIND.with(|u| u.borrow_mut().clear());
        DUPLICATE.with(|dup| dup.borrow_mut().take());
        d.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

/// After a failed parse on this thread: the duplicate key that caused it, if that was the cause.
pub fn take_duplicate() -> Option<Duplicate> {
    let key = DUPLICATE.with(|dup| dup.borrow_mut().take())?;
    let steps = UNWIND.with(|u| std::mem::take(&mut *u.borrow_mut()));
    let mut path = String::new();
    for step in steps.iter().rev() {
        match step {
            Step::Key(k) => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(k);
            }
            Step::Index(i) => path.push_str(&format!("[{i}]")),
        }
    }
    Some(Duplicate { path, key })
}

/// Parses one JSON document, rejecting duplicate keys. The error is `serde_json`'s (with its
/// line and column) and, for a duplicate, the [`Duplicate`].
pub fn from_str(text: &str) -> Result<Value, (serde_json::Error, Option<Duplicate>)> {
    serde_json::from_str::<StrictValue>(text).map(|v| v.0).map_err(|e| (e, take_duplicate()))
}

struct Seed;

impl<'de> DeserializeSeed<'de> for Seed {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(StrictVisitor)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(StrictVisitor)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        loop {
            match seq.next_element_seed(Seed) {
                Ok(Some(v)) => items.push(v),
                Ok(None) => break,
                Err(e) => {
                    UNWIND.with(|u| u.borrow_mut().push(Step::Index(items.len())));
                    return Err(e);
                }
            }
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            let value = match access.next_value_seed(Seed) {
                Ok(v) => v,
                Err(e) => {
                    UNWIND.with(|u| u.borrow_mut().push(Step::Key(key)));
                    return Err(e);
                }
            };
            match map.entry(key) {
                Entry::Vacant(slot) => {
                    slot.insert(value);
                }
                Entry::Occupied(slot) => {
                    let key = slot.key().clone();
                    let message = format!("duplicate key {key:?}");
                    DUPLICATE.with(|dup| *dup.borrow_mut() = Some(key));
                    return Err(de::Error::custom(message));
                }
            }
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_are_rejected_with_their_path() {
        let cases = [
            ("a duplicate at the top level", r#"{"a": 1, "a": 2}"#, Some(("", "a"))),
            (
                "a duplicate deep inside a list",
                r#"{"items": [{"x": 1}, {"metadata": {"name": "p", "labels": {"k": "1", "k": "2"}}}]}"#,
                Some(("items[1].metadata.labels", "k")),
            ),
            ("equal keys in different objects are fine", r#"[{"a": 1}, {"a": 2}]"#, None),
            ("a document without duplicates is fine", r#"{"a": {"b": [1, 2, {"c": null}]}}"#, None),
        ];
        for (name, text, want) in cases {
            match from_str(text) {
                Ok(v) => {
                    assert_eq!(want, None, "{name}");
                    let plain: Value = serde_json::from_str(text).unwrap();
                    assert_eq!(v, plain, "{name}: the same value as serde_json's");
                }
                Err((e, dup)) => {
                    let (path, key) = want.unwrap_or_else(|| panic!("{name}: {e}"));
                    let dup = dup.unwrap_or_else(|| panic!("{name}: not a duplicate: {e}"));
                    assert_eq!((dup.path.as_str(), dup.key.as_str()), (path, key), "{name}");
                }
            }
        }
    }

    #[test]
    fn other_errors_are_not_taken_for_duplicates() {
        let (e, dup) = from_str(r#"{"a": [1, 2"#).unwrap_err();
        assert!(e.is_eof(), "{e}");
        assert_eq!(dup, None);
        // A later clean parse does not see an earlier duplicate.
        assert!(from_str(r#"{"a": 1, "a": 1}"#).is_err());
        assert!(from_str(r#"{"a": 1}"#).is_ok());
        assert_eq!(take_duplicate(), None);
    }
}
