//! The plan's per-workload spread against `baseline` under several seeds.
//!
//! kube-scheduler breaks ties between equally scored nodes at random (`selectHost`), and
//! `baseline` with it, seeded by `--seed`. So one baseline run is one draw of its spread, and a
//! workload's skew can differ by several pods from one seed to the next on the same snapshot.
//! `kplace compare --baseline-seeds N` runs baseline under N consecutive seeds and reports, per
//! workload, where the plan's skew stands among them: above the first seed's, above their
//! median, above every one.
//!
//! Input: the cluster before the plans, the pending pods, the plan, and the baseline plans, one
//! per seed (the comparison's own first). Output: a [`SeedComparison`]. The skews are those of
//! [`super::workloads`] (zone and node, over the workload's eligible domains).
//!
//! Upstream counterpart: none (`selectHost`'s random tie-break is why it is needed).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::workloads::{SKEW_KEYS, owner_rows};
use super::{MAX_LISTED_OWNERS, apply_plan};
use crate::model::{ClusterState, Pod};
use crate::plan::Plan;

/// The plan's per-workload spread against baseline's under each seed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SeedComparison {
    /// The seeds baseline ran with, the comparison's own first.
    pub seeds: Vec<u64>,
    /// Pods baseline placed under each seed.
    pub baseline_placed: Vec<usize>,
    /// Workloads whose zone or node skew under the plan exceeds baseline's under the first
    /// seed (the comparison's own per-workload verdict).
    pub worse_than_first: usize,
    /// Workloads whose zone or node skew under the plan exceeds the median of baseline's over
    /// the seeds (the lower median when the count is even).
    pub worse_than_median: usize,
    /// Workloads whose zone or node skew under the plan exceeds baseline's under every seed.
    pub worse_than_every: usize,
    /// The workloads worse than under the first seed or the median, by owner, at most
    /// [`MAX_LISTED_OWNERS`].
    pub owners: Vec<SeedRow>,
}

/// One workload: the plan's figures and baseline's under each seed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SeedRow {
    /// `Kind namespace/name` of the controlling owner.
    pub owner: String,
    /// Pending pods of the workload the plan placed.
    pub plan_placed: usize,
    /// Per topology key, the plan's skew.
    pub plan_skew: BTreeMap<String, i64>,
    /// Pending pods of the workload baseline placed, per seed.
    pub baseline_placed: Vec<usize>,
    /// Per topology key, baseline's skew under each seed.
    pub baseline_skew: BTreeMap<String, Vec<i64>>,
    /// Whether the plan's skew exceeds baseline's under every seed (for some key).
    pub worse_than_every: bool,
}

/// Where the plan's per-workload spread stands among `baselines` (see the module docs).
/// `baselines` pairs each seed with baseline's plan under it, the comparison's own first.
pub fn seed_comparison(
    before: &ClusterState,
    pending: &[Pod],
    plan: &Plan,
    baselines: &[(u64, &Plan)],
) -> SeedComparison {
    let plan_after = apply_plan(before, pending, plan);
    let mut rows: BTreeMap<String, SeedRow> = BTreeMap::new();
    let mut out = SeedComparison::default();
    for &(seed, baseline) in baselines {
        out.seeds.push(seed);
        out.baseline_placed.push(baseline.placements.len());
        let after = apply_plan(before, pending, baseline);
        for r in owner_rows(before, pending, (baseline, &after), (plan, &plan_after)) {
            let row = rows.entry(r.owner.clone()).or_insert_with(|| SeedRow {
                owner: r.owner.clone(),
                plan_placed: r.plan.placed,
                plan_skew: r.plan.skew.clone(),
                ..Default::default()
            });
            row.baseline_placed.push(r.baseline.placed);
            for key in SKEW_KEYS {
                let skew = r.baseline.skew.get(key).copied().unwrap_or(0);
                row.baseline_skew.entry(key.to_string()).or_default().push(skew);
            }
        }
    }
    for mut row in rows.into_values() {
        let (mut first, mut median, mut every) = (false, false, false);
        for key in SKEW_KEYS {
            let plan = row.plan_skew.get(key).copied().unwrap_or(0);
            let mut skews = row.baseline_skew.get(key).cloned().unwrap_or_default();
            first |= skews.first().is_some_and(|&b| plan > b);
            skews.sort_unstable();
            median |= skews.get(skews.len().saturating_sub(1) / 2).is_some_and(|&b| plan > b);
            every |= skews.last().is_some_and(|&b| plan > b);
        }
        out.worse_than_first += usize::from(first);
        out.worse_than_median += usize::from(median);
        out.worse_than_every += usize::from(every);
        if (first || median) && out.owners.len() < MAX_LISTED_OWNERS {
            row.worse_than_every = every;
            out.owners.push(row);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::OwnerRef;
    use crate::model::testing::{NodeBuilder, PodBuilder, cluster};
    use crate::plan::Placement;

    /// Three zones of one node each, and a workload of `pods` pending replicas.
    fn zones(pods: usize) -> (ClusterState, Vec<Pod>) {
        let nodes = ["a", "b", "c"]
            .iter()
            .map(|z| {
                NodeBuilder::new(z)
                    .cpu(8000)
                    .pods(10)
                    .label("topology.kubernetes.io/zone", z)
                    .label("kubernetes.io/hostname", z)
                    .obj()
            })
            .collect();
        let owner = OwnerRef { kind: "ReplicaSet".into(), name: "web".into(), uid: "u".into() };
        let pending = (0..pods)
            .map(|i| Pod {
                owner: Some(owner.clone()),
                ..PodBuilder::new("ns", &format!("web-{i}")).cpu(100).obj()
            })
            .collect();
        (cluster(nodes, Vec::new()), pending)
    }

    /// A plan putting replica `i` on node `nodes[i]`.
    fn on(nodes: &[&str]) -> Plan {
        Plan {
            placements: nodes
                .iter()
                .enumerate()
                .map(|(i, n)| Placement { pod: format!("ns/web-{i}"), node: (*n).to_string() })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_plan_is_held_against_the_first_seed_the_median_and_every_seed() {
        struct Case {
            name: &'static str,
            plan: Vec<&'static str>,
            baselines: Vec<Vec<&'static str>>,
            /// (worse than the first, than the median, than every seed)
            want: (usize, usize, usize),
        }
        let cases = vec![
            Case {
                name: "a plan as even as every seed is worse than none",
                plan: vec!["a", "b", "c"],
                baselines: vec![vec!["a", "b", "c"], vec!["c", "b", "a"]],
                want: (0, 0, 0),
            },
            Case {
                name: "a plan worse than the first seed but inside the seeds' range is worse than \
                       the first and the median only",
                plan: vec!["a", "a", "b"],
                baselines: vec![vec!["a", "b", "c"], vec!["a", "b", "c"], vec!["a", "a", "a"]],
                want: (1, 1, 0),
            },
            Case {
                name: "a plan worse than the first seed's even draw but no worse than the median \
                       is worse than the first only",
                plan: vec!["a", "a", "b"],
                baselines: vec![vec!["a", "b", "c"], vec!["a", "b", "b"], vec!["a", "b", "b"]],
                want: (1, 0, 0),
            },
            Case {
                name: "with an even number of seeds the median is the lower of the middle two",
                plan: vec!["a", "b", "b"],
                baselines: vec![vec!["a", "b", "c"], vec!["a", "a", "a"]],
                want: (1, 1, 0),
            },
            Case {
                name: "a plan more skewed than under every seed is worse than every seed",
                plan: vec!["a", "a", "a"],
                baselines: vec![vec!["a", "b", "c"], vec!["a", "a", "b"]],
                want: (1, 1, 1),
            },
        ];
        for case in cases {
            let (before, pending) = zones(case.plan.len());
            let plans: Vec<Plan> = case.baselines.iter().map(|b| on(b)).collect();
            let baselines: Vec<(u64, &Plan)> =
                plans.iter().enumerate().map(|(s, p)| (s as u64, p)).collect();
            let got = seed_comparison(&before, &pending, &on(&case.plan), &baselines);
            assert_eq!(
                (got.worse_than_first, got.worse_than_median, got.worse_than_every),
                case.want,
                "{}",
                case.name
            );
            assert_eq!(got.seeds, (0..plans.len() as u64).collect::<Vec<_>>(), "{}", case.name);
            let listed = usize::from(case.want.0 + case.want.1 > 0);
            assert_eq!(got.owners.len(), listed, "{}", case.name);
            if let Some(row) = got.owners.first() {
                assert_eq!(row.owner, "ReplicaSet ns/web", "{}", case.name);
                assert_eq!(row.baseline_skew["topology.kubernetes.io/zone"].len(), plans.len());
                assert_eq!(row.worse_than_every, case.want.2 > 0, "{}", case.name);
            }
        }
    }
}
