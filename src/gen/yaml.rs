//! A small block-style YAML emitter for Kubernetes objects, in the layout `kubectl get -o yaml`
//! prints: keys in the order of the JSON map (sorted: `serde_json::Map` is a `BTreeMap` here),
//! two-space indentation, sequences at their key's indentation (`- ` items), `{}` and `[]` for
//! empty collections, and strings quoted only where a plain scalar would read as something
//! else (a number, a boolean, null, a timestamp) or would not parse.
//!
//! Input: a `serde_json::Value` (one object). Output: the document's text appended to a
//! `String`, without the `---` separator. No upstream counterpart; the quoting rules follow what
//! go-yaml (used by kubectl) and YAML 1.1/1.2 resolvers treat as non-strings.

use std::fmt::Write as _;

use serde_json::Value;

/// Appends `value` as a block-style YAML document to `out`, ending with a newline.
pub fn write_document(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) if !map.is_empty() => write_map(map, 0, false, out),
        Value::Array(items) if !items.is_empty() => write_seq(items, 0, out),
        other => {
            write_inline(other, out);
            out.push('\n');
        }
    }
}

fn indent(n: usize, out: &mut String) {
    const SPACES: &str = "                                ";
    let mut left = n;
    while left > 0 {
        let k = left.min(SPACES.len());
        out.push_str(&SPACES[..k]);
        left -= k;
    }
}

/// Writes the entries of a non-empty map, each line starting at column `ind`; with
/// `after_dash`, the first entry continues the current line (a map that is a sequence item).
fn write_map(map: &serde_json::Map<String, Value>, ind: usize, after_dash: bool, out: &mut String) {
    for (i, (key, value)) in map.iter().enumerate() {
        if i > 0 || !after_dash {
            indent(ind, out);
        }
        write_str(key, out);
        out.push(':');
        match value {
            Value::Object(m) if !m.is_empty() => {
                out.push('\n');
                write_map(m, ind + 2, false, out);
            }
            Value::Array(items) if !items.is_empty() => {
                out.push('\n');
                write_seq(items, ind, out);
            }
            other => {
                out.push(' ');
                write_inline(other, out);
                out.push('\n');
            }
        }
    }
}

/// Writes the items of a non-empty sequence, each `- ` at column `ind`.
fn write_seq(items: &[Value], ind: usize, out: &mut String) {
    for item in items {
        indent(ind, out);
        out.push_str("- ");
        match item {
            Value::Object(m) if !m.is_empty() => write_map(m, ind + 2, true, out),
            Value::Array(inner) if !inner.is_empty() => {
                // A sequence directly inside a sequence: put it on its own lines.
                out.pop();
                out.push('\n');
                write_seq(inner, ind + 2, out);
            }
            other => {
                write_inline(other, out);
                out.push('\n');
            }
        }
    }
}

/// Scalars and empty collections.
fn write_inline(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::String(s) => write_str(s, out),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

/// A string: plain when that reads back as the same string, else double-quoted with JSON
/// escapes (a JSON string is a valid YAML double-quoted scalar).
fn write_str(s: &str, out: &mut String) {
    if is_plain_safe(s) {
        out.push_str(s);
    } else {
        // Serializing a &str to JSON cannot fail.
        out.push_str(&serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string()));
    }
}

/// Words that YAML 1.1 or 1.2 resolvers read as null, booleans or special floats.
const SPECIAL_WORDS: &[&str] = &[
    "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", "y", "Y",
    "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", ".inf",
    ".Inf", ".INF", "-.inf", "-.Inf", "-.INF", "+.inf", "+.Inf", "+.INF", ".nan", ".NaN", ".NAN",
    "=", "<<",
];

/// Bytes allowed in a plain scalar: ASCII letters and digits and `._/-:=+@()%` and space.
const PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'.' | b'_' | b'/' | b'-' | b':' | b'=' | b'+' | b'@' | b'(' | b')' | b'%' | b' '
            );
        c += 1;
    }
    t
};

/// Whether `s` can be written as a plain scalar and read back as the same string. One pass
/// over the bytes; the type checks run only for strings that could be numbers or words.
fn is_plain_safe(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(&first) = b.first() else { return false };
    // Indicators that may not start a plain scalar.
    if matches!(
        first,
        b'-' | b'?'
            | b':'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
            | b'%'
            | b'@'
            | b'`'
            | b' '
    ) {
        return false;
    }
    let mut prev = 0u8;
    for &c in b {
        // `: ` starts a mapping value, ` #` a comment.
        if !PLAIN[c as usize] || (prev == b':' && c == b' ') || (prev == b' ' && c == b'#') {
            return false;
        }
        prev = c;
    }
    if prev == b' ' || prev == b':' {
        return false;
    }
    let maybe_typed = first.is_ascii_digit()
        || matches!(first, b'+' | b'.' | b'=')
        || (b.len() <= 5 && SPECIAL_WORDS.contains(&s));
    !(maybe_typed && (SPECIAL_WORDS.contains(&s) || looks_numeric(b) || looks_like_timestamp(b)))
}

/// Integers and floats as YAML 1.1 and 1.2 resolve them (decimal with `_` separators and `:`
/// sexagesimal parts, one dot, an exponent; `0x`/`0o`/`0b` forms), erring towards quoting.
/// `10.0.1.5` and `1.2.3` are strings to go-yaml and to YAML 1.2, and stay plain.
fn looks_numeric(s: &[u8]) -> bool {
    let t = match s.first() {
        Some(b'+' | b'-') => &s[1..],
        _ => s,
    };
    if t.len() > 2 && t[0] == b'0' {
        let digits = &t[2..];
        let all = |ok: fn(u8) -> bool| digits.iter().all(|c| ok(*c) || *c == b'_');
        match t[1] {
            b'x' | b'X' => return all(|c| c.is_ascii_hexdigit()),
            b'o' | b'O' => return all(|c| (b'0'..=b'7').contains(&c)),
            b'b' | b'B' => return all(|c| c == b'0' || c == b'1'),
            _ => {}
        }
    }
    let (mantissa, exponent) = match t.iter().position(|c| *c == b'e' || *c == b'E') {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let mut digits = 0;
    let mut dots = 0;
    for &c in mantissa {
        match c {
            b'0'..=b'9' => digits += 1,
            b'.' => dots += 1,
            b'_' | b':' => {}
            _ => return false,
        }
    }
    let exponent_ok = exponent.is_none_or(|e| {
        let e = match e.first() {
            Some(b'+' | b'-') => &e[1..],
            _ => e,
        };
        !e.is_empty() && e.iter().all(u8::is_ascii_digit)
    });
    digits > 0 && dots <= 1 && exponent_ok
}

/// `YYYY-M-D…`: YAML 1.1 timestamps, which go-yaml quotes.
fn looks_like_timestamp(b: &[u8]) -> bool {
    b.len() >= 8 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' && b[5].is_ascii_digit()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_are_quoted_exactly_when_a_plain_scalar_would_change_type_or_not_parse() {
        let cases: &[(&str, &str)] = &[
            ("a plain word stays plain", "green"),
            ("a CPU quantity in millicores stays plain", "100m"),
            ("a memory quantity stays plain", "500Mi"),
            ("a label key with a prefix stays plain", "topology.kubernetes.io/zone"),
            ("a sentence with spaces stays plain", "kubelet is posting ready status"),
            ("an IPv4 address stays plain", "10.64.0.1"),
            ("a dotted version stays plain", "1.7.27"),
            ("a percentage stays plain", "60%"),
        ];
        for (name, s) in cases {
            let mut out = String::new();
            write_str(s, &mut out);
            assert_eq!(out, *s, "{name}");
        }
        let quoted: &[(&str, &str, &str)] = &[
            ("an integer string is quoted", "110", "\"110\""),
            ("a float-looking string is quoted", "1.5", "\"1.5\""),
            ("an exponent is quoted", "1e3", "\"1e3\""),
            ("a hex number is quoted", "0x1F", "\"0x1F\""),
            ("a boolean word is quoted", "true", "\"true\""),
            ("a YAML 1.1 boolean word is quoted", "on", "\"on\""),
            ("null is quoted", "null", "\"null\""),
            ("the empty string is quoted", "", "\"\""),
            ("a timestamp is quoted", "2026-11-20T09:00:00Z", "\"2026-11-20T09:00:00Z\""),
            ("a leading dash is quoted", "-x", "\"-x\""),
            ("a colon followed by a space is quoted", "a: b", "\"a: b\""),
            ("a comment marker is quoted", "a #b", "\"a #b\""),
            ("a trailing colon is quoted", "key:", "\"key:\""),
            ("a newline is escaped", "a\nb", "\"a\\nb\""),
            ("a star is quoted", "*", "\"*\""),
        ];
        for (name, s, want) in quoted {
            let mut out = String::new();
            write_str(s, &mut out);
            assert_eq!(out, *want, "{name}");
        }
    }

    #[test]
    fn objects_are_written_in_kubectl_block_layout() {
        let v = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"labels": {"color": "green"}, "name": "p"},
            "spec": {
                "containers": [{"name": "pause", "ports": [{"containerPort": 80}], "resources": {}}],
                "tolerations": [],
                "nodeSelector": {},
                "args": ["a", "b"],
                "matrix": [[1, 2]],
            },
            "status": {"phase": "Pending", "podIP": null, "ready": true},
        });
        let mut out = String::new();
        write_document(&v, &mut out);
        let want = "\
apiVersion: v1
kind: Pod
metadata:
  labels:
    color: green
  name: p
spec:
  args:
  - a
  - b
  containers:
  - name: pause
    ports:
    - containerPort: 80
    resources: {}
  matrix:
  -
    - 1
    - 2
  nodeSelector: {}
  tolerations: []
status:
  phase: Pending
  podIP: null
  ready: true
";
        assert_eq!(out, want);
    }

    #[test]
    fn emitted_documents_read_back_as_the_same_value() {
        let v = json!({
            "a": "110", "b": 110, "c": "on", "d": "2026-11-20T09:00:00Z", "e": "x: y",
            "f": [{"g": [{"h": "1.0"}], "i": {}}], "j": "", "k": "-5", "l": "10.0.1.5",
            "m": [[1, 2], []], "n": {"o": {"p": "q r"}},
            "tricky": ["1_000", "0o17", "+1", ".5", "1:20", "y", "NO", "~", "=", "-.inf", "0x",
                "1e", "e5", "100m", "a:b", "a %b", "(x)", "1.2.3", "2026-01-01", "x y"],
        });
        let mut out = String::new();
        write_document(&v, &mut out);
        let back: Value = serde_saphyr::from_str(&out).unwrap();
        assert_eq!(back, v, "{out}");
    }
}
