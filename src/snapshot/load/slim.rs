//! A serde `Deserializer` adapter for reading Kubernetes objects straight from JSON text into
//! their typed form: it refuses a key that appears twice in one mapping (as the API server's
//! strict decoding does; `serde_json` alone keeps the last one) and skips, unbuilt, the values of
//! keys kplace never reads (`managedFields`, the bulk of a real `kubectl get -o json`).
//!
//! Input: any `Deserializer` (here `serde_json`'s over the file's text); output: the same values
//! its consumer would build, less the skipped keys. Its errors carry no path: the loader falls
//! back to the general reader (`serde_path_to_error` over a `Value`) to word them.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt;

use serde::de::value::CowStrDeserializer;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IgnoredAny, MapAccess, SeqAccess, Visitor,
};

/// Keys whose values are skipped wherever they appear.
const SKIPPED_KEYS: &[&str] = &["managedFields"];

/// Wraps a deserializer (see the module documentation).
#[derive(Debug)]
pub(super) struct Slim<D>(pub D);

macro_rules! forward_deserialize {
    ($($method:ident),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
                self.0.$method(SlimVisitor(visitor))
            }
        )*
    };
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Slim<D> {
    type Error = D::Error;

    forward_deserialize!(
        deserialize_any,
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_option,
        deserialize_unit,
        deserialize_seq,
        deserialize_map,
        deserialize_identifier,
    );

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_ignored_any(visitor)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_unit_struct(name, SlimVisitor(visitor))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_newtype_struct(name, SlimVisitor(visitor))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, SlimVisitor(visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple_struct(name, len, SlimVisitor(visitor))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_struct(name, fields, SlimVisitor(visitor))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, SlimVisitor(visitor))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// A visitor whose nested values are read through [`Slim`] too.
struct SlimVisitor<V>(V);

macro_rules! forward_visit {
    ($($method:ident: $ty:ty),* $(,)?) => {
        $(
            fn $method<E: de::Error>(self, v: $ty) -> Result<V::Value, E> {
                self.0.$method(v)
            }
        )*
    };
}

impl<'de, V: Visitor<'de>> Visitor<'de> for SlimVisitor<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    forward_visit!(
        visit_bool: bool,
        visit_i8: i8,
        visit_i16: i16,
        visit_i32: i32,
        visit_i64: i64,
        visit_i128: i128,
        visit_u8: u8,
        visit_u16: u16,
        visit_u32: u32,
        visit_u64: u64,
        visit_u128: u128,
        visit_f32: f32,
        visit_f64: f64,
        visit_char: char,
        visit_str: &str,
        visit_borrowed_str: &'de str,
        visit_string: String,
        visit_bytes: &[u8],
        visit_borrowed_bytes: &'de [u8],
        visit_byte_buf: Vec<u8>,
    );

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_some(Slim(d))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_newtype_struct(Slim(d))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.0.visit_seq(SlimSeq(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(SlimMap::new(map, Vec::new()))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.0.visit_enum(data)
    }
}

/// A seed whose value is read through [`Slim`].
struct SlimSeed<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for SlimSeed<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Slim(d))
    }
}

struct SlimSeq<A>(A);

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for SlimSeq<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(SlimSeed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

/// A map key, borrowed from the text where it has no escapes.
pub(super) struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(v))
    }
}

/// Past this many keys, a mapping's keys are looked up in a hash set.
const LINEAR_KEYS: usize = 24;

/// A mapping: each key once, skipped keys' values unread.
pub(super) struct SlimMap<'de, A> {
    inner: A,
    seen: Vec<Cow<'de, str>>,
    many: Option<HashSet<Cow<'de, str>>>,
}

impl<'de, A: MapAccess<'de>> SlimMap<'de, A> {
    /// `seen`: keys of this mapping already read by the caller.
    pub(super) fn new(inner: A, seen: Vec<Cow<'de, str>>) -> Self {
        Self { inner, seen, many: None }
    }

    /// Records a key; `false` when it was there already.
    fn insert(&mut self, key: Cow<'de, str>) -> bool {
        if let Some(set) = &mut self.many {
            return set.insert(key);
        }
        if self.seen.contains(&key) {
            return false;
        }
        self.seen.push(key);
        if self.seen.len() > LINEAR_KEYS {
            self.many = Some(std::mem::take(&mut self.seen).into_iter().collect());
        }
        true
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for SlimMap<'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(key) = self.inner.next_key_seed(KeySeed)? else { return Ok(None) };
            if !self.insert(key.clone()) {
                return Err(de::Error::custom(format_args!("duplicate key {key:?}")));
            }
            if SKIPPED_KEYS.contains(&key.as_ref()) {
                self.inner.next_value::<IgnoredAny>()?;
                continue;
            }
            return seed.deserialize(CowStrDeserializer::new(key)).map(Some);
        }
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.inner.next_value_seed(SlimSeed(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// A mapping whose first key (read by the caller, its value not yet) is handed out again.
pub(super) struct Resume<'de, A> {
    pub(super) pending: Option<Cow<'de, str>>,
    pub(super) inner: A,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Resume<'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.pending.take() {
            Some(key) => seed.deserialize(CowStrDeserializer::new(key)).map(Some),
            None => self.inner.next_key_seed(seed),
        }
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.inner.next_value_seed(seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::collections::BTreeMap;

    fn slim<T: for<'de> Deserialize<'de>>(text: &str) -> Result<T, serde_json::Error> {
        let mut d = serde_json::Deserializer::from_str(text);
        let v = T::deserialize(Slim(&mut d))?;
        d.end()?;
        Ok(v)
    }

    #[test]
    fn values_are_read_as_without_the_adapter_less_the_skipped_keys() {
        type Doc = BTreeMap<String, serde_json::Value>;
        let cases = [
            (
                "nested values are kept",
                r#"{"a": {"b": [1, -2, 2.5, "x\"y", null, true]}, "c": {}}"#,
                r#"{"a": {"b": [1, -2, 2.5, "x\"y", null, true]}, "c": {}}"#,
            ),
            (
                "managedFields is skipped at any depth",
                r#"{"metadata": {"name": "n", "managedFields": [{"fieldsV1": {"f:x": {}}}]}}"#,
                r#"{"metadata": {"name": "n"}}"#,
            ),
            ("escaped keys are read", r#"{"a\u0062": 1}"#, r#"{"ab": 1}"#),
        ];
        for (name, text, want) in cases {
            let got: Doc = slim(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            let want: Doc = serde_json::from_str(want).unwrap();
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn a_key_twice_in_one_mapping_is_refused() {
        type Doc = BTreeMap<String, serde_json::Value>;
        let many: String = (0..40).map(|i| format!("\"k{i}\": {i}, ")).collect();
        let cases = [
            ("at the top", r#"{"a": 1, "a": 1}"#.to_string()),
            ("nested", r#"{"m": {"l": {"x": "1", "x": "2"}}}"#.to_string()),
            ("in a large mapping", format!("{{{many}\"k7\": 0}}")),
            ("written once escaped", r#"{"ab": 1, "a\u0062": 2}"#.to_string()),
            ("a skipped key twice", r#"{"managedFields": [], "managedFields": []}"#.to_string()),
        ];
        for (name, text) in cases {
            let err = slim::<Doc>(&text).expect_err(name);
            assert!(err.to_string().contains("duplicate key"), "{name}: {err}");
        }
        assert!(slim::<Doc>(&format!("{{{many}\"z\": 0}}")).is_ok());
        assert!(slim::<Doc>(r#"{"a": {"x": 1}, "b": {"x": 1}}"#).is_ok());
    }

    #[test]
    fn typed_kubernetes_objects_read_as_through_a_value() {
        let pod = r#"{"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns", "labels": {"app": "a"},
                         "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}]},
            "spec": {"containers": [{"name": "c", "image": "i",
                     "resources": {"requests": {"cpu": "100m"}}, "ports": [{"containerPort": 80}]}],
                     "tolerations": [{"key": "k", "operator": "Exists"}]},
            "status": {"phase": "Pending"}}"#;
        let fast: k8s_openapi::api::core::v1::Pod = slim(pod).unwrap();
        let mut plain: k8s_openapi::api::core::v1::Pod = serde_json::from_str(pod).unwrap();
        plain.metadata.managed_fields = None;
        assert_eq!(fast, plain);
        let wrong = pod.replace("80", "\"eighty\"");
        assert!(slim::<k8s_openapi::api::core::v1::Pod>(&wrong).is_err());
    }
}
