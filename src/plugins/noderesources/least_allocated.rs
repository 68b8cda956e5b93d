//! The `LeastAllocated` scoring strategy of NodeResourcesFit: prefers nodes with the most free
//! capacity after placing the pod.
//!
//! Input: `requested` and `allocatable` vectors aligned with the scored resources (see
//! [`super::resource_allocation::requested_and_allocatable`]) and the resource weights. Output: a
//! score in `[0, 100]`:
//! `Σ_i w_i · ((alloc_i − req_i) · 100 / alloc_i) / Σ_i w_i` over resources with `alloc_i > 0`,
//! each term `0` when `req_i > alloc_i`; every division is int64 truncation as upstream.
//!
//! Upstream (v1.35): `pkg/scheduler/framework/plugins/noderesources/least_allocated.go`.

use super::resource_allocation::weighted_resource_score;
use crate::framework::MAX_NODE_SCORE;
use crate::framework::args::ResourceSpec;

/// One resource's score: the unused share of capacity on a 0–100 scale (upstream
/// `leastRequestedScore`).
pub fn least_requested_score(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 || requested > capacity {
        return 0;
    }
    ((capacity - requested) * MAX_NODE_SCORE) / capacity
}

/// The weighted mean of [`least_requested_score`] over resources with non-zero allocatable
/// (upstream `leastResourceScorer`).
pub fn least_resource_scorer(
    resources: &[ResourceSpec],
    requested: &[i64],
    allocatable: &[i64],
) -> i64 {
    weighted_resource_score(resources, requested, allocatable, least_requested_score)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (description, resources, requested, allocatable, expected score)
    type Case<'a> = (&'a str, &'a [ResourceSpec], [i64; 2], [i64; 2], i64);

    #[test]
    fn least_allocated_arithmetic_matches_upstream() {
        let cm = [ResourceSpec::new("cpu", 1), ResourceSpec::new("memory", 1)];
        let cases: &[Case] = &[
            // cpu (4000-3000)*100/4000 = 25; mem (10000-5000)*100/10000 = 50; (25+50)/2 = 37.
            ("an averaged score truncates", &cm, [3000, 5000], [4000, 10000], 37),
            // cpu (6000-3000)*100/6000 = 50; mem 50; 50.
            ("an evenly loaded node scores its free share", &cm, [3000, 5000], [6000, 10000], 50),
            // cpu requested > capacity → 0; mem (10000-0)*100/10000 = 100; (0+100)/2 = 50.
            ("an over-committed resource scores zero", &cm, [5000, 0], [4000, 10000], 50),
            // Only memory has allocatable: 100*(10-3)/10 = 70.
            ("resources with zero allocatable are skipped", &cm, [3, 3], [0, 10], 70),
            ("no allocatable at all scores zero", &cm, [0, 0], [0, 0], 0),
            // cpu weight 3: (3*25 + 1*50) / 4 = 125/4 = 31.
            (
                "weights scale each resource",
                &[ResourceSpec::new("cpu", 3), ResourceSpec::new("memory", 1)],
                [3000, 5000],
                [4000, 10000],
                31,
            ),
        ];
        for (name, res, req, alloc, want) in cases {
            assert_eq!(least_resource_scorer(res, req, alloc), *want, "{name}");
        }
    }
}
