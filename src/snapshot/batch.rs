//! Narrowing the batch: which pending pods a run places (`-n/--namespace`, `-l/--selector`).
//!
//! Input: a namespace and a label selector in kubectl's text syntax
//! (`a=b,c!=d,e in (x,y),f notin (z),g,!h`); output: a [`BatchFilter`] that [`super::build`]
//! applies to pending pods only — bound pods count on their nodes whatever the filter, and a
//! pending pod outside the batch is simply not placed in this run (counted in
//! [`super::IgnoredPods::outside_batch`]).
//!
//! Upstream: `apimachinery/pkg/labels/selector.go` (`Parse`: the lexer's tokens and the
//! parser's grammar; `!=` and `notin` also match pods without the key; `>`/`<` compare
//! integers), the syntax `kubectl get -l` accepts.

use crate::model::{LabelSelector, Labels, MatchOp, Requirement};

/// Which pending pods form the batch. The default admits every pod.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BatchFilter {
    /// Only pods of this namespace.
    pub namespace: Option<String>,
    /// Only pods whose labels this selector matches.
    pub selector: Option<LabelSelector>,
}

impl BatchFilter {
    /// A filter from the command line's `-n` and `-l` (the selector in kubectl's syntax).
    pub fn new(namespace: Option<&str>, selector: Option<&str>) -> Result<Self, SelectorError> {
        Ok(BatchFilter {
            namespace: namespace.map(str::to_string),
            selector: selector.map(parse_selector).transpose()?,
        })
    }

    /// Whether the filter admits every pod.
    pub fn is_everything(&self) -> bool {
        self.namespace.is_none() && self.selector.as_ref().is_none_or(LabelSelector::is_empty)
    }

    /// Whether a pending pod of `namespace` with `labels` is in the batch.
    pub fn admits(&self, namespace: &str, labels: &Labels) -> bool {
        self.namespace.as_deref().is_none_or(|ns| ns == namespace)
            && self.selector.as_ref().is_none_or(|s| s.matches(labels))
    }

    /// Whether a pending Kubernetes pod is in the batch (namespace `default` when absent).
    pub fn admits_pod(&self, pod: &k8s_openapi::api::core::v1::Pod) -> bool {
        let empty = Labels::new();
        let labels = pod.metadata.labels.as_ref().unwrap_or(&empty);
        let ns = pod.metadata.namespace.as_deref().filter(|n| !n.is_empty()).unwrap_or("default");
        self.admits(ns, labels)
    }

    /// The filter as the command line spells it (`-n ml -l 'team=a'`), for messages.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(ns) = &self.namespace {
            parts.push(format!("-n {ns}"));
        }
        if let Some(sel) = &self.selector {
            parts.push(format!("-l {:?}", selector_text(sel)));
        }
        parts.join(" ")
    }
}

/// A selector back in kubectl's syntax (requirements in their sorted order).
pub fn selector_text(sel: &LabelSelector) -> String {
    let part = |r: &Requirement| match r.op {
        MatchOp::In if r.values.len() == 1 => format!("{}={}", r.key, r.values[0]),
        MatchOp::NotIn if r.values.len() == 1 => format!("{}!={}", r.key, r.values[0]),
        MatchOp::In => format!("{} in ({})", r.key, r.values.join(",")),
        MatchOp::NotIn => format!("{} notin ({})", r.key, r.values.join(",")),
        MatchOp::Exists => r.key.clone(),
        MatchOp::DoesNotExist => format!("!{}", r.key),
        MatchOp::Gt => format!("{}>{}", r.key, r.values.join(",")),
        MatchOp::Lt => format!("{}<{}", r.key, r.values.join(",")),
    };
    sel.requirements.iter().map(part).collect::<Vec<_>>().join(",")
}

/// Why a label selector does not parse: where (0-based byte offset) and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("label selector {text:?}: at position {at}: {message}")]
pub struct SelectorError {
    /// The selector as given.
    pub text: String,
    /// Byte offset of the problem.
    pub at: usize,
    /// What is wrong.
    pub message: String,
}

/// A lexer token, with its offset.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A key or value (anything but the operator characters, spaces, `,`, `(`, `)`).
    Word(String),
    /// `=` or `==`.
    Equals,
    /// `!=`.
    NotEquals,
    /// `!` before a key.
    Not,
    /// `>`.
    Greater,
    /// `<`.
    Less,
    /// `(`.
    Open,
    /// `)`.
    Close,
    /// `,`.
    Comma,
}

fn describe(t: Option<&Token>) -> String {
    match t {
        None => "the end".to_string(),
        Some(Token::Word(w)) => format!("{w:?}"),
        Some(Token::Equals) => "\"=\"".to_string(),
        Some(Token::NotEquals) => "\"!=\"".to_string(),
        Some(Token::Not) => "\"!\"".to_string(),
        Some(Token::Greater) => "\">\"".to_string(),
        Some(Token::Less) => "\"<\"".to_string(),
        Some(Token::Open) => "\"(\"".to_string(),
        Some(Token::Close) => "\")\"".to_string(),
        Some(Token::Comma) => "\",\"".to_string(),
    }
}

fn lex(text: &str) -> Vec<(usize, Token)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        let token = match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            b'=' => {
                i += if bytes.get(i + 1) == Some(&b'=') { 2 } else { 1 };
                Token::Equals
            }
            b'!' if bytes.get(i + 1) == Some(&b'=') => {
                i += 2;
                Token::NotEquals
            }
            b'!' | b'>' | b'<' | b'(' | b')' | b',' => {
                i += 1;
                match c {
                    b'!' => Token::Not,
                    b'>' => Token::Greater,
                    b'<' => Token::Less,
                    b'(' => Token::Open,
                    b')' => Token::Close,
                    _ => Token::Comma,
                }
            }
            _ => {
                while i < bytes.len()
                    && !matches!(
                        bytes[i],
                        b' ' | b'\t'
                            | b'\n'
                            | b'\r'
                            | b'='
                            | b'!'
                            | b'>'
                            | b'<'
                            | b'('
                            | b')'
                            | b','
                    )
                {
                    i += 1;
                }
                // Only ASCII bytes end a word, so `start..i` is on character boundaries.
                Token::Word(text[start..i].to_string())
            }
        };
        out.push((start, token));
    }
    out
}

/// Parses a label selector in kubectl's syntax. An empty (or all-space) text selects every
/// pod. Keys must be qualified names and values valid label values, as the API server checks.
pub fn parse_selector(text: &str) -> Result<LabelSelector, SelectorError> {
    let tokens = lex(text);
    let mut pos = 0;
    let err = |at: usize, message: String| SelectorError { text: text.to_string(), at, message };
    let at = |pos: usize| tokens.get(pos).map_or(text.len(), |(o, _)| *o);
    let mut sel = LabelSelector::default();
    if tokens.is_empty() {
        return Ok(sel);
    }
    loop {
        // One requirement.
        let negated = matches!(tokens.get(pos), Some((_, Token::Not)));
        if negated {
            pos += 1;
        }
        let key_at = at(pos);
        let key = match tokens.get(pos) {
            Some((_, Token::Word(w))) => w.clone(),
            other => {
                return Err(err(
                    key_at,
                    format!("expected a label key, found {}", describe(other.map(|t| &t.1))),
                ));
            }
        };
        pos += 1;
        let requirement = if negated {
            Requirement { key, op: MatchOp::DoesNotExist, values: Vec::new() }
        } else {
            match tokens.get(pos).map(|t| &t.1) {
                None | Some(Token::Comma) => {
                    Requirement { key, op: MatchOp::Exists, values: Vec::new() }
                }
                Some(Token::Word(w)) if w == "in" || w == "notin" => {
                    let op = if w == "in" { MatchOp::In } else { MatchOp::NotIn };
                    pos += 1;
                    if !matches!(tokens.get(pos), Some((_, Token::Open))) {
                        return Err(err(
                            at(pos),
                            format!(
                                "expected \"(\" after {w:?}, found {}",
                                describe(tokens.get(pos).map(|t| &t.1))
                            ),
                        ));
                    }
                    pos += 1;
                    let mut values = Vec::new();
                    loop {
                        match tokens.get(pos).map(|t| &t.1) {
                            Some(Token::Word(v)) => {
                                values.push(v.clone());
                                pos += 1;
                            }
                            // `in (a,,b)` and `in ()` hold the empty value, as upstream reads.
                            Some(Token::Comma | Token::Close) => values.push(String::new()),
                            other => {
                                return Err(err(
                                    at(pos),
                                    format!("expected a value, found {}", describe(other)),
                                ));
                            }
                        }
                        match tokens.get(pos).map(|t| &t.1) {
                            Some(Token::Comma) => pos += 1,
                            Some(Token::Close) => {
                                pos += 1;
                                break;
                            }
                            other => {
                                return Err(err(
                                    at(pos),
                                    format!("expected \",\" or \")\", found {}", describe(other)),
                                ));
                            }
                        }
                    }
                    values.sort();
                    values.dedup();
                    Requirement { key, op, values }
                }
                Some(Token::Equals | Token::NotEquals | Token::Greater | Token::Less) => {
                    let op = match tokens[pos].1 {
                        Token::Equals => MatchOp::In,
                        Token::NotEquals => MatchOp::NotIn,
                        Token::Greater => MatchOp::Gt,
                        _ => MatchOp::Lt,
                    };
                    pos += 1;
                    // `a=` compares with the empty value.
                    let value = match tokens.get(pos).map(|t| &t.1) {
                        Some(Token::Word(v)) => {
                            pos += 1;
                            v.clone()
                        }
                        None | Some(Token::Comma) => String::new(),
                        other => {
                            return Err(err(
                                at(pos),
                                format!("expected a value, found {}", describe(other)),
                            ));
                        }
                    };
                    Requirement { key, op, values: vec![value] }
                }
                other => {
                    return Err(err(
                        at(pos),
                        format!(
                            "expected an operator (=, ==, !=, in, notin, >, <) or \",\" after the \
                             key, found {}",
                            describe(other)
                        ),
                    ));
                }
            }
        };
        super::convert::validate_requirement(&requirement.key, requirement.op, &requirement.values)
            .map_err(|e| err(key_at, format!("{}: {}", requirement.key, e.message)))?;
        sel.requirements.push(requirement);
        match tokens.get(pos).map(|t| &t.1) {
            None => break,
            Some(Token::Comma) => pos += 1,
            other => {
                return Err(err(at(pos), format!("expected \",\", found {}", describe(other))));
            }
        }
    }
    sel.normalize();
    Ok(sel)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect()
    }

    #[test]
    fn selectors_in_kubectl_syntax_select_as_the_api_server_does() {
        let web_a = labels(&[("app", "web"), ("team", "a"), ("tier", "3")]);
        let db_b = labels(&[("app", "db"), ("team", "b")]);
        let bare = labels(&[]);
        // (case, selector, matches web_a, db_b, bare)
        let cases: &[(&str, &str, [bool; 3])] = &[
            ("an empty selector selects every pod", "", [true, true, true]),
            ("spaces alone select every pod", "   ", [true, true, true]),
            ("a=b selects pods with that value", "app=web", [true, false, false]),
            ("a==b is a=b", "app==web", [true, false, false]),
            ("a!=b also selects pods without the key", "app!=web", [false, true, true]),
            ("a set selects any of its values", "app in (web, db)", [true, true, false]),
            ("notin also selects pods without the key", "team notin (a)", [false, true, true]),
            ("a bare key selects pods that have it", "team", [true, true, false]),
            ("!key selects pods without it", "!tier", [false, true, true]),
            ("commas and together", "app=web,team=a", [true, false, false]),
            (
                "requirements of every form combine",
                "app in (web,db),team!=b,!x",
                [true, false, false],
            ),
            ("> compares integers", "tier>2", [true, false, false]),
            ("< compares integers", "tier<2", [false, false, false]),
            ("a= selects the empty value only", "app=", [false, false, false]),
            ("a prefixed key is a key", "example.com/team=a", [false, false, false]),
        ];
        for (name, text, want) in cases {
            let sel = parse_selector(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            let got = [sel.matches(&web_a), sel.matches(&db_b), sel.matches(&bare)];
            assert_eq!(got, *want, "{name}: {text:?}");
        }
    }

    #[test]
    fn malformed_selectors_are_errors_that_say_where() {
        // (case, selector, offset, part of the message)
        let cases: &[(&str, &str, usize, &str)] = &[
            ("a set needs parentheses", "app in web", 7, "expected \"(\""),
            ("an unclosed set", "app in (web", 11, "expected \",\" or \")\""),
            ("two operators", "app==!web", 5, "expected a value"),
            ("a missing key", "=web", 0, "expected a label key"),
            ("a trailing comma", "app=web,", 8, "expected a label key"),
            ("an invalid key", "-app=web", 0, "invalid label key"),
            ("an invalid value", "app=-web-", 0, "invalid label value"),
            ("> needs an integer", "tier>high", 0, "must be an integer"),
            ("words without a comma", "app web", 4, "expected an operator"),
            ("! before an operator", "!app=web", 4, "expected \",\""),
        ];
        for (name, text, at, part) in cases {
            let e = parse_selector(text).expect_err(name);
            assert_eq!(e.at, *at, "{name}: {e}");
            assert!(e.message.contains(part), "{name}: {e}");
            assert!(e.to_string().contains(&format!("{text:?}")), "{name}: {e}");
        }
    }

    #[test]
    fn a_filter_admits_pods_by_namespace_and_labels() {
        let web = labels(&[("app", "web")]);
        /// (case, -n, -l, the pod's namespace, admitted)
        type Case<'a> = (&'a str, Option<&'a str>, Option<&'a str>, &'a str, bool);
        let cases: &[Case<'_>] = &[
            ("no filter admits every pod", None, None, "ml", true),
            ("-n admits its namespace", Some("ml"), None, "ml", true),
            ("-n refuses other namespaces", Some("ml"), None, "web", false),
            ("-l admits matching pods", None, Some("app=web"), "ml", true),
            ("-n and -l must both hold", Some("web"), Some("app=web"), "ml", false),
            ("-l refuses pods it does not match", None, Some("app=db"), "ml", false),
        ];
        for (name, ns, sel, pod_ns, want) in cases {
            let f = BatchFilter::new(*ns, *sel).expect("a valid filter");
            assert_eq!(f.admits(pod_ns, &web), *want, "{name}");
        }
        assert!(BatchFilter::default().is_everything());
        assert!(BatchFilter::new(None, Some(" ")).expect("valid").is_everything());
    }

    const CLUSTER: &str = "\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}
---
apiVersion: v1
kind: Pod
metadata: {name: bound, namespace: web, labels: {team: a}}
spec: {nodeName: n1, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: ml, labels: {team: a}}
spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: ml, labels: {team: b}}
spec: {containers: [{name: c}]}
---
apiVersion: v1
kind: Pod
metadata: {name: c, namespace: web}
spec: {containers: [{name: c}]}
";

    #[test]
    fn the_batch_holds_the_chosen_pending_pods_and_bound_pods_still_count() {
        let mut snapshot = super::super::Snapshot::new();
        snapshot.add_yaml(std::path::Path::new("t.yaml"), CLUSTER).expect("loads");
        /// (case, -n, -l, pending pods of the batch)
        type Case<'a> = (&'a str, Option<&'a str>, Option<&'a str>, &'a [&'a str]);
        let cases: &[Case<'_>] = &[
            ("no filter keeps every pending pod", None, None, &["ml/a", "ml/b", "web/c"]),
            ("-n keeps one namespace", Some("ml"), None, &["ml/a", "ml/b"]),
            ("-l keeps the matching pods", None, Some("team=a"), &["ml/a"]),
            ("-l with != keeps pods without the label", None, Some("team!=a"), &["ml/b", "web/c"]),
            ("-n and -l together", Some("web"), Some("team"), &[]),
        ];
        for (name, ns, sel, want) in cases {
            let options = super::super::BuildOptions {
                batch: BatchFilter::new(*ns, *sel).expect("valid"),
                ..Default::default()
            };
            let cluster = super::super::build(&snapshot, &options).expect("builds");
            let pending: Vec<String> = cluster.pending.iter().map(|p| p.key()).collect();
            assert_eq!(pending, *want, "{name}");
            assert_eq!(cluster.ignored.outside_batch, 3 - want.len(), "{name}");
            let n1 = &cluster.state.nodes[0];
            assert_eq!(n1.pods.len(), 1, "{name}: the bound pod of web holds its room");
        }
    }

    #[test]
    fn a_gang_split_by_the_batch_is_named_in_a_warning() {
        let gang = |name: &str, team: &str| {
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: ml, labels: \
                 {{team: {team}, scheduling.x-k8s.io/pod-group: g}}}}\nspec: {{containers: \
                 [{{name: c}}]}}\n---\n"
            )
        };
        let yaml = format!("{CLUSTER}---\n{}{}", gang("w0", "a"), gang("w1", "b"));
        let mut snapshot = super::super::Snapshot::new();
        snapshot.add_yaml(std::path::Path::new("t.yaml"), &yaml).expect("loads");
        // (case, -l, whether the split is warned about)
        let cases = [
            ("a selector taking part of the gang warns", "team=a", true),
            ("a selector taking none of the gang does not", "team=c", false),
            (
                "a selector taking all of the gang does not",
                "scheduling.x-k8s.io/pod-group=g",
                false,
            ),
        ];
        for (name, sel, warned) in cases {
            let options = super::super::BuildOptions {
                batch: BatchFilter::new(None, Some(sel)).expect("valid"),
                ..Default::default()
            };
            let cluster = super::super::build(&snapshot, &options).expect("builds");
            let split = cluster.warnings.iter().find(|w| w.message.contains("outside the batch"));
            assert_eq!(split.is_some(), warned, "{name}: {:?}", cluster.warnings);
            if let Some(w) = split {
                assert!(w.to_string().contains("ml/g: 1 pending pod of the group is"), "{w}");
            }
        }
    }

    #[test]
    fn a_selector_prints_back_in_the_syntax_it_was_read_in() {
        for text in ["app=web", "app!=web", "app in (db,web)", "!tier", "team", "tier>2"] {
            let sel = parse_selector(text).expect("valid");
            assert_eq!(selector_text(&sel), text);
            assert_eq!(parse_selector(&selector_text(&sel)).expect("valid"), sel);
        }
    }
}
