use super::*;
use crate::snapshot::Snapshot;
use proptest::prelude::*;

/// The general reader's value of a plain scalar (`None` when the line does not parse).
fn saphyr_value(scalar: &str) -> Option<Value> {
    let text = format!("k: {scalar}\n");
    let v: Value =
        serde_saphyr::from_str_with_options(&text, super::super::yaml_options(text.len())).ok()?;
    v.get("k").cloned()
}

fn typed_value(t: &str, plain: Plain) -> Value {
    match plain {
        Plain::Null => Value::Null,
        Plain::Bool(b) => Value::Bool(b),
        Plain::Int(i) => serde_json::from_str(&i).unwrap(),
        Plain::Str => Value::String(t.to_string()),
    }
}

#[test]
fn plain_scalars_are_typed_as_the_general_reader_types_them() {
    let cases = [
        "web",
        "yes",
        "Yes",
        "on",
        "OFF",
        "y",
        "N",
        "no",
        "true",
        "False",
        "TRUE",
        "~",
        "null",
        "Null",
        "NULL",
        "12",
        "-5",
        "+7",
        "0",
        "-0",
        "+0",
        "0123",
        "-0123",
        "00",
        "1_000",
        "100m",
        "2Gi",
        "500Mi",
        "10.0.0.1",
        "1.2.3",
        "2024-01-01T00:00:00Z",
        "2024-01-01",
        "inf",
        "-inf",
        "NaN",
        "infinity",
        ".hidden",
        "v1.35",
        "1e",
        "+",
        "18446744073709551615",
        "-9223372036854775808",
        "0b",
        "0x",
        "12:30",
        "a,b",
        "x]",
        "é",
        "0b947cad-4f",
        "0x1g",
        "0e1x",
    ];
    for t in cases {
        let plain = plain_type(t).unwrap_or_else(|| panic!("{t:?} is typed here"));
        assert_eq!(Some(typed_value(t, plain)), saphyr_value(t), "{t:?}");
    }
    // Left to the general reader: floats, other radices, past 64 bits, YAML's non-finite.
    for t in [
        "1.5",
        "1e3",
        "-2.5e-3",
        ".5",
        "1.",
        "0x10",
        "0o17",
        "0b101",
        ".inf",
        "-.nan",
        "18446744073709551616",
        "-9223372036854775809",
        "1e999",
    ] {
        assert_eq!(plain_type(t), None, "{t:?}");
    }
}

proptest! {
    #[test]
    fn random_plain_scalars_are_typed_as_the_general_reader_types_them(
        t in "[-+.0-9a-zA-Z_~]{1,8}"
    ) {
        if let (Some(plain), Some(v)) = (plain_type(&t), saphyr_value(&t)) {
            prop_assert_eq!(typed_value(&t, plain), v, "{:?}", t);
        }
    }
}

/// A snapshot made from prepared results: the objects, their sources, the warnings and the
/// first error.
fn committed(prepared: Vec<Prepared>) -> String {
    let mut s = Snapshot::new();
    let r = object::commit(&mut s, prepared);
    format!("{r:?}\n{s:?}")
}

fn general(text: &str, strictness: Strictness) -> String {
    match super::super::prepare_yaml_whole(Path::new("t.yaml"), text, strictness) {
        Ok(p) => committed(p),
        Err(e) => format!("{e:?}"),
    }
}

fn fast(text: &str, strictness: Strictness) -> Option<String> {
    prepare(Path::new("t.yaml"), text, strictness).map(committed)
}

/// The fast reader reads `text` (the subset), as the general reader does.
fn same(text: &str) {
    for strictness in [Strictness::Strict, Strictness::SkipNonObjects] {
        let got = fast(text, strictness).unwrap_or_else(|| panic!("not read fast:\n{text}"));
        assert_eq!(got, general(text, strictness), "{text}");
    }
}

#[test]
fn the_subset_reads_as_the_general_reader_reads_it() {
    let cases = [
        // A document stream, with comments, blank lines and typed lists.
        "# a stream\napiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n  labels:\n    \
             kubernetes.io/arch: arm64   # a comment\n    \"quoted key\": 'it''s'\n\n---\n\
             # before\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ns\n",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    \
             image: \"x\\ty\\u00e9\\x41\\\\\\\"\"\n    args:\n    - -c\n    - |\n      echo a\n\n      \
             echo b\n    - |-\n      kept\n    command: []\n    resources:\n      requests:\n        \
             cpu: 100m\n        memory: 2Gi\n  priority: 12\n  nodeSelector: {}\n",
        // A List, entries at column 0 and 2, bare `-` inside.
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    \
             name: a\n# between\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: c\n  \
             data:\n    x: yes\n    w: ~\nmetadata:\n  resourceVersion: \"\"\n",
        "apiVersion: v1\nkind: PodList\nitems:\n  - metadata:\n      name: p2\n    spec:\n      \
             containers: []\n  - metadata:\n      name: p3\n      namespace: x\n    spec:\n      \
             containers: []\n",
        "---\napiVersion: v1\nkind: List\nitems: []\n---\napiVersion: v1\nkind: Namespace\n\
             metadata:\n  name: x\n",
    ];
    for text in cases {
        same(text);
    }
}

#[test]
fn a_duplicate_key_inside_an_unread_kind_is_skipped_as_in_json() {
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: x\n  a: y\n";
    let got = fast(text, Strictness::Strict).expect("read fast");
    assert!(got.starts_with("Ok(())") && got.contains("\"ConfigMap\": 1"), "{got}");
}

#[test]
fn yaml_outside_the_subset_is_left_to_the_general_reader() {
    let node = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n";
    let cases = [
        ("an anchor and an alias", format!("{node}  labels: &l\n    a: b\n  annotations: *l\n")),
        ("a tag", format!("{node}  labels:\n    a: !!str 1\n")),
        ("a directive", format!("%YAML 1.2\n---\n{node}")),
        ("a flow mapping with content", format!("{node}  labels: {{a: b}}\n")),
        ("a multi-line plain scalar", format!("{node}  labels:\n    a: b\n      c\n")),
        ("a multi-line quoted scalar", format!("{node}  labels:\n    a: \"b\n      c\"\n")),
        ("a tab", format!("{node}  labels:\n    a:\tb\n")),
        ("a folded scalar", format!("{node}  labels:\n    a: >\n      b\n")),
        ("a float", format!("{node}  labels:\n    a: 1.5\n")),
        ("a hexadecimal number", format!("{node}  labels:\n    a: 0x10\n")),
        ("a key that is a number", format!("{node}  labels:\n    1: a\n")),
        ("a merge key", format!("{node}  labels:\n    <<:\n      a: b\n")),
        ("an empty document", format!("{node}---\n---\n{node}")),
        ("a document end marker", format!("{node}...\n")),
        ("a carriage return", node.replace('\n', "\r\n")),
        ("a document that is not a mapping", "- a\n- b\n".to_string()),
        ("a duplicate key", format!("{node}  name: m\n")),
        (
            "a sequence nested on its parent's line",
            format!("{node}  labels:\n    y:\n    - - 1\n      - ~\n"),
        ),
        (
            "an entry on the line after its dash",
            format!("{node}  labels:\n    y:\n    -\n      z: on\n"),
        ),
        ("a node that does not type", format!("{node}spec:\n  unschedulable: 3\n")),
        ("a bad List item", "apiVersion: v1\nkind: List\nitems:\n- 3\n".to_string()),
        ("a list without an apiVersion", "kind: List\nitems:\n- a: 1\n".to_string()),
        (
            "a literal scalar at the end without a line break",
            format!("{node}  labels:\n    a: |\n      b"),
        ),
    ];
    for (name, text) in cases {
        assert!(fast(&text, Strictness::Strict).is_none(), "{name}: read fast");
    }
}

/// A scalar of a generated document, with the style it is written in.
#[derive(Debug, Clone)]
enum Style {
    Plain,
    Single,
    Double,
    Literal(&'static str),
}

const WORDS: &[&str] = &["web", "a-b.c", "x y", "100m", "2Gi", "12", "0", "-5", "true", "v1.2.3"];
const TRICKY: &[&str] = &[
    "yes",
    "on",
    "No",
    "0x10",
    "1e3",
    "~",
    "null",
    "",
    "0123",
    "1_000",
    "1.5",
    ".inf",
    "2024-01-01T00:00:00Z",
    "a: b",
    "a #b",
    "a#b",
    "#x",
    "- x",
    "'q'",
    "\"d\"",
    "l1\nl2",
    "l1\n\nl2\n",
    "{}",
    "[]",
    "[a]",
    "&a",
    "*a",
    "!t",
    "%p",
    "|",
    ">",
    "?",
    ":x",
    "x:",
    "<<",
    "-",
    "é ü",
    " lead",
    "trail ",
    "\u{85}",
    "18446744073709551616",
    "\\",
    "\u{1}",
];

fn scalar() -> impl Strategy<Value = (String, Style)> {
    let text = prop_oneof![
        4 => proptest::sample::select(WORDS).prop_map(str::to_string),
        1 => proptest::sample::select(TRICKY).prop_map(str::to_string),
    ];
    let style = prop_oneof![
        6 => Just(Style::Plain),
        1 => Just(Style::Single),
        2 => Just(Style::Double),
        1 => proptest::sample::select(&["|", "|-", "|+"][..]).prop_map(Style::Literal),
    ];
    (text, style)
}

/// `text` as a YAML scalar in `style`, as the value of a node at `indent`.
fn write_scalar(text: &str, style: &Style, indent: usize) -> String {
    match style {
        Style::Plain => text.to_string(),
        Style::Single => format!("'{}'", text.replace('\'', "''")),
        Style::Double => {
            let mut s = String::from("\"");
            for c in text.chars() {
                match c {
                    '"' => s.push_str("\\\""),
                    '\\' => s.push_str("\\\\"),
                    '\n' => s.push_str("\\n"),
                    'é' => s.push_str("\\u00e9"),
                    c if (c as u32) < 0x20 || c == '\u{85}' => {
                        s.push_str(&format!("\\x{:02x}", c as u32));
                    }
                    c => s.push(c),
                }
            }
            s.push('"');
            s
        }
        Style::Literal(header) => {
            let pad = " ".repeat(indent + 2);
            let body: String = text.split('\n').map(|l| format!("\n{pad}{l}")).collect();
            format!("{header}{body}")
        }
    }
}

type Pairs = Vec<(&'static str, (String, Style))>;

/// Distinct keys with generated values (a duplicate key inside a kind kplace does not read
/// is skipped unread by the fast reader, as by the JSON reader: see
/// `a_duplicate_key_inside_an_unread_kind_is_skipped_as_in_json`).
fn pairs() -> impl Strategy<Value = Pairs> {
    let keys = &["app", "tier", "yes", "1", "a b", "k8s.io/x", "\"q\""][..];
    (proptest::sample::subsequence(keys, 0..4), proptest::collection::vec(scalar(), 4))
        .prop_map(|(keys, values)| keys.into_iter().zip(values).collect())
}

/// A block mapping of generated pairs, the value of a key at `indent - 2`.
fn write_map(pairs: &Pairs, indent: usize, comments: bool) -> String {
    if pairs.is_empty() {
        return " {}".to_string();
    }
    let pad = " ".repeat(indent);
    pairs
        .iter()
        .map(|(k, (t, s))| {
            let c = if comments && !matches!(s, Style::Literal(_)) { "  # c" } else { "" };
            format!("\n{pad}{k}: {}{c}", write_scalar(t, s, indent))
        })
        .collect()
}

/// A generated object: a Pod whose labels, annotations, image and priority are generated,
/// or a ConfigMap with generated data.
fn object() -> impl Strategy<Value = String> {
    (0u32..1000, pairs(), pairs(), scalar(), scalar(), any::<bool>(), any::<bool>()).prop_map(
        |(n, labels, data, image, priority, pod, comments)| {
            if pod {
                format!(
                    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p{n}\n  labels:{}\n  \
                         annotations:{}\nspec:\n  containers:\n  - name: c\n    image: {}\n  \
                         priority: {}\n",
                    write_map(&labels, 4, comments),
                    write_map(&data, 4, comments),
                    write_scalar(&image.0, &image.1, 4),
                    write_scalar(&priority.0, &priority.1, 2),
                )
            } else {
                format!(
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{n}\ndata:{}\n",
                    write_map(&data, 2, comments)
                )
            }
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn generated_objects_read_fast_as_the_general_reader_reads_them(
        objects in proptest::collection::vec(object(), 1..6),
        list in any::<bool>(),
        indented in any::<bool>(),
    ) {
        let text = if list {
            let pad = if indented { "  " } else { "" };
            let items: String = objects
                .iter()
                .map(|o| {
                    let body: String = o.lines().map(|l| format!("{pad}  {l}\n")).collect();
                    format!("{pad}- {}", &body[pad.len() + 2..])
                })
                .collect();
            format!("apiVersion: v1\nkind: List\nitems:\n{items}metadata:\n  resourceVersion: \"\"\n")
        } else {
            objects.iter().map(|o| format!("---\n{o}")).collect()
        };
        for strictness in [Strictness::Strict, Strictness::SkipNonObjects] {
            if let Some(got) = fast(&text, strictness) {
                prop_assert_eq!(got, general(&text, strictness), "{}", text);
            }
        }
    }

    #[test]
    fn objects_of_plain_words_are_read_fast(
        n in 0u32..1000,
        words in proptest::collection::vec(proptest::sample::select(WORDS), 1..5),
    ) {
        let labels: String =
            words.iter().enumerate().map(|(i, w)| format!("    l{i}: \"{w}\"\n")).collect();
        let text = format!(
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: n{n}\n  labels:\n{labels}spec:\n  \
             podCIDR: 10.{n}.0.0/24\n  unschedulable: yes\n"
        );
        prop_assert!(fast(&text, Strictness::Strict).is_some(), "{}", text);
        prop_assert_eq!(fast(&text, Strictness::Strict).unwrap(), general(&text, Strictness::Strict));
    }
}
