//! Builders of small problems for the crate's tests.

use crate::greedy::{ClassSpec, Problem};

/// A class of `count` pods with these requests and priority, no per-node limit.
pub(crate) fn class(count: u32, priority: i32, requests: &[i64]) -> ClassSpec {
    ClassSpec { count, priority, requests: requests.to_vec(), max_per_node: None }
}

/// A problem over nodes with free capacity `free` (one row per node), where every class is
/// feasible everywhere with score 0, and the rest is [`Problem::default`]'s.
pub(crate) fn problem(classes: Vec<ClassSpec>, free: &[&[i64]]) -> Problem {
    let nodes = free.len();
    let cells = classes.len() * nodes;
    Problem {
        resources: free.first().map_or(0, |r| r.len()),
        nodes,
        classes,
        free: free.iter().flat_map(|r| r.iter().copied()).collect(),
        feasible: vec![true; cells],
        score: vec![0; cells],
        ..Problem::default()
    }
}

/// Random static scores in `range`, `len` of them: drawn as `i64` (the type scores had when
/// the deterministic test runners' instances were chosen, so the instances stay the same).
pub(crate) fn scores(
    range: std::ops::Range<i64>,
    len: usize,
) -> impl proptest::strategy::Strategy<Value = Vec<i32>> {
    use proptest::strategy::Strategy;
    proptest::collection::vec(range, len)
        .prop_map(|v| v.into_iter().map(|s| i32::try_from(s).unwrap_or(i32::MAX)).collect())
}
