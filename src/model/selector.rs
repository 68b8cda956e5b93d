//! Label and node selectors with upstream matching semantics.
//!
//! Counterparts: `apimachinery/pkg/labels/selector.go` (`Requirement.Matches`),
//! `metav1.LabelSelectorAsSelector`, and
//! `component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go` (v1.35).

use super::Labels;

/// A selector operator. `Gt`/`Lt` occur only in node selector requirements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MatchOp {
    /// `In`: the label is present and its value is one of `values`.
    In,
    /// `NotIn`: the label is absent, or its value is none of `values`.
    NotIn,
    /// `Exists`: the label is present.
    Exists,
    /// `DoesNotExist`: the label is absent.
    DoesNotExist,
    /// `Gt`: the label is present, both it and the single value parse as integers, label > value.
    Gt,
    /// `Lt`: as `Gt`, label < value.
    Lt,
}

impl MatchOp {
    /// Parses the API spelling of an operator (`In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`,
    /// `Lt`). Which operators a given selector kind allows is the caller's check.
    pub fn parse(op: &str) -> Option<MatchOp> {
        Some(match op {
            "In" => MatchOp::In,
            "NotIn" => MatchOp::NotIn,
            "Exists" => MatchOp::Exists,
            "DoesNotExist" => MatchOp::DoesNotExist,
            "Gt" => MatchOp::Gt,
            "Lt" => MatchOp::Lt,
            _ => return None,
        })
    }

    /// Whether a `metav1.LabelSelector` may use this operator (not `Gt`/`Lt`).
    pub fn is_label_selector_op(self) -> bool {
        !matches!(self, MatchOp::Gt | MatchOp::Lt)
    }
}

/// One requirement of a selector.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Requirement {
    /// Label key (for node `matchFields`, the field name, e.g. `metadata.name`).
    pub key: String,
    /// Operator.
    pub op: MatchOp,
    /// Values (empty for `Exists`/`DoesNotExist`; one integer for `Gt`/`Lt`).
    pub values: Vec<String>,
}

impl Requirement {
    /// A requirement.
    pub fn new(key: impl Into<String>, op: MatchOp, values: &[&str]) -> Self {
        Requirement {
            key: key.into(),
            op,
            values: values.iter().map(|v| (*v).to_string()).collect(),
        }
    }

    /// Whether `value` (the value of `key` in the object's labels, `None` if absent) satisfies
    /// this requirement.
    pub fn matches_value(&self, value: Option<&str>) -> bool {
        match self.op {
            MatchOp::In => value.is_some_and(|v| self.values.iter().any(|x| x == v)),
            MatchOp::NotIn => value.is_none_or(|v| !self.values.iter().any(|x| x == v)),
            MatchOp::Exists => value.is_some(),
            MatchOp::DoesNotExist => value.is_none(),
            MatchOp::Gt | MatchOp::Lt => {
                let Some(v) = value else { return false };
                let (Ok(label), [bound]) = (v.parse::<i64>(), self.values.as_slice()) else {
                    return false;
                };
                let Ok(bound) = bound.parse::<i64>() else {
                    return false;
                };
                if self.op == MatchOp::Gt { label > bound } else { label < bound }
            }
        }
    }

    /// Whether `labels` satisfy this requirement.
    pub fn matches(&self, labels: &Labels) -> bool {
        self.matches_value(labels.get(&self.key).map(String::as_str))
    }
}

/// A label selector (`metav1.LabelSelector` converted to requirements; `matchLabels` become `In`
/// with one value). All requirements must hold; an empty selector matches everything.
///
/// A *nil* selector (matches nothing) is represented by `Option::<LabelSelector>::None` where the
/// API field is optional.
#[derive(Debug, Clone, PartialEq, Eq, Default, PartialOrd, Ord, Hash)]
pub struct LabelSelector {
    /// ANDed requirements, sorted by key then operator (as upstream sorts them).
    pub requirements: Vec<Requirement>,
}

impl LabelSelector {
    /// A selector matching exactly these labels (`matchLabels`).
    pub fn from_match_labels<'a>(labels: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut sel = LabelSelector::default();
        for (k, v) in labels {
            sel.requirements.push(Requirement::new(k, MatchOp::In, &[v]));
        }
        sel.normalize();
        sel
    }

    /// Sorts requirements deterministically.
    pub fn normalize(&mut self) {
        self.requirements.sort();
        self.requirements.dedup();
    }

    /// Whether the selector has no requirements (matches everything).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether `labels` satisfy every requirement.
    pub fn matches(&self, labels: &Labels) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }
}

/// One node selector term: `matchExpressions` on labels and `matchFields` on fields
/// (only `metadata.name` exists). A term with neither matches no node.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeSelectorTerm {
    /// `matchExpressions`.
    pub match_expressions: Vec<Requirement>,
    /// `matchFields` (key `metadata.name`).
    pub match_fields: Vec<Requirement>,
    /// Set when the term failed validation (e.g. an unknown operator or a field other than
    /// `metadata.name`): upstream's lazy-error selector then never matches it.
    pub invalid: bool,
}

impl NodeSelectorTerm {
    /// Whether a node with this name and labels satisfies the term.
    pub fn matches(&self, node_name: &str, labels: &Labels) -> bool {
        if self.invalid || (self.match_expressions.is_empty() && self.match_fields.is_empty()) {
            return false;
        }
        self.match_expressions.iter().all(|r| r.matches(labels))
            && self
                .match_fields
                .iter()
                .all(|r| r.key == "metadata.name" && r.matches_value(Some(node_name)))
    }
}

/// A node selector: the terms are ORed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeSelector {
    /// `nodeSelectorTerms`.
    pub terms: Vec<NodeSelectorTerm>,
}

impl NodeSelector {
    /// Whether any term matches.
    pub fn matches(&self, node_name: &str, labels: &Labels) -> bool {
        self.terms.iter().any(|t| t.matches(node_name, labels))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect()
    }

    #[test]
    fn requirement_operators_follow_upstream_semantics() {
        let l = labels(&[("zone", "a"), ("cores", "8")]);
        let cases: &[(&str, Requirement, bool)] = &[
            ("In matches a listed value", Requirement::new("zone", MatchOp::In, &["a", "b"]), true),
            ("In fails on an unlisted value", Requirement::new("zone", MatchOp::In, &["b"]), false),
            ("In fails when the key is absent", Requirement::new("x", MatchOp::In, &["a"]), false),
            (
                "NotIn matches when the key is absent",
                Requirement::new("x", MatchOp::NotIn, &["a"]),
                true,
            ),
            (
                "NotIn fails on a listed value",
                Requirement::new("zone", MatchOp::NotIn, &["a"]),
                false,
            ),
            ("Exists matches a present key", Requirement::new("zone", MatchOp::Exists, &[]), true),
            (
                "DoesNotExist fails on a present key",
                Requirement::new("zone", MatchOp::DoesNotExist, &[]),
                false,
            ),
            ("Gt compares as integers", Requirement::new("cores", MatchOp::Gt, &["7"]), true),
            ("Gt is strict", Requirement::new("cores", MatchOp::Gt, &["8"]), false),
            ("Lt compares as integers", Requirement::new("cores", MatchOp::Lt, &["10"]), true),
            (
                "Gt on a non-integer label never matches",
                Requirement::new("zone", MatchOp::Gt, &["1"]),
                false,
            ),
            (
                "Gt with a non-integer value never matches",
                Requirement::new("cores", MatchOp::Gt, &["x"]),
                false,
            ),
            (
                "Lt on an absent key never matches",
                Requirement::new("x", MatchOp::Lt, &["10"]),
                false,
            ),
        ];
        for (name, req, want) in cases {
            assert_eq!(req.matches(&l), *want, "{name}");
        }
    }

    #[test]
    fn empty_node_selector_term_matches_no_node() {
        let term = NodeSelectorTerm::default();
        assert!(!term.matches("n1", &Labels::new()));
    }

    #[test]
    fn match_fields_select_by_node_name() {
        let term = NodeSelectorTerm {
            match_fields: vec![Requirement::new("metadata.name", MatchOp::In, &["n1"])],
            ..Default::default()
        };
        assert!(term.matches("n1", &Labels::new()));
        assert!(!term.matches("n2", &Labels::new()));
    }

    #[test]
    fn empty_label_selector_matches_everything() {
        assert!(LabelSelector::default().matches(&labels(&[("a", "b")])));
    }
}
