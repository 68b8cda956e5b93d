//! The plan's per-workload spread against `baseline` under several seeds.
//!
//! kube-scheduler breaks ties between equally scored nodes at random (`selectHost`), and
//! `baseline` with it, seeded by `--seed`. So one baseline run is one draw of its spread, and a
//! workload's skew can differ by several pods from one seed to the next on the same snapshot.
//! `kplace compare --baseline-seeds N` runs baseline under N consecutive seeds and reports, per
//! workload, where the plan's skew stands among them: above the first seed's, above their
//! median, above every one.
//!
//! Input: every workload's side under the plan and under baseline with each seed (the
//! comparison's own first), as [`super::workloads::Workloads::sides`] measures them (zone and
//! node skew over the workload's eligible domains). Output: a [`SeedComparison`].
//!
//! Upstream counterpart: none (`selectHost`'s random tie-break is why it is needed).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::MAX_LISTED_OWNERS;
use super::workloads::{SKEW_KEYS, WorkloadSide};

/// The plan's per-workload spread against baseline's under each seed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SeedComparison {
    /// The seeds baseline ran with, the comparison's own first (with `documents`, their
    /// numbers from 1).
    pub seeds: Vec<u64>,
    /// With several `--baseline-plan` documents instead of seeds: their paths, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub documents: Vec<String>,
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

impl SeedRow {
    /// The plan's skew over topology key `key` and baseline's under each seed, as
    /// `plan; seed1 seed2 …` (how the text table and the report print it).
    pub fn skews(&self, key: &str) -> String {
        let by_seed: Vec<String> = self
            .baseline_skew
            .get(key)
            .map(|v| v.iter().map(i64::to_string).collect())
            .unwrap_or_default();
        format!("{}; {}", self.plan_skew.get(key).copied().unwrap_or(0), by_seed.join(" "))
    }
}

/// The range of `counts` as `least{dash}most`, or one number when they are all equal (empty
/// when there are none).
pub fn range(counts: &[usize], dash: &str) -> String {
    match (counts.iter().min(), counts.iter().max()) {
        (Some(a), Some(b)) if a != b => format!("{a}{dash}{b}"),
        (Some(a), _) => a.to_string(),
        _ => String::new(),
    }
}

/// Baseline under one seed, for [`seed_comparison`].
#[derive(Debug)]
pub struct SeedRun {
    /// The seed.
    pub seed: u64,
    /// Pods baseline placed.
    pub placed: usize,
    /// Every workload's side ([`super::workloads::Workloads::sides`]).
    pub sides: BTreeMap<String, WorkloadSide>,
}

impl SeedComparison {
    /// What each baseline run is called in text: `seed` or `plan document`.
    pub fn run_word(&self) -> &'static str {
        if self.documents.is_empty() { "seed" } else { "plan document" }
    }

    /// Where the runs come from, for a sentence: `baseline ran under seeds 3–5` or `baseline
    /// is 3 plan documents (a.json, b.json, c.json)`; `dash` joins a range.
    pub fn origin(&self, dash: &str) -> String {
        if self.documents.is_empty() {
            let first = self.seeds.first().copied().unwrap_or(0);
            let last = self.seeds.last().copied().unwrap_or(0);
            format!("baseline ran under seeds {first}{dash}{last}")
        } else {
            format!(
                "baseline is {} plan documents ({})",
                self.documents.len(),
                self.documents.join(", ")
            )
        }
    }
}

/// Where the plan's per-workload spread (`plan`, [`super::workloads::Workloads::sides`])
/// stands among baseline's under each seed (`runs`, the comparison's own first); see the
/// module docs.
pub fn seed_comparison(plan: &BTreeMap<String, WorkloadSide>, runs: &[SeedRun]) -> SeedComparison {
    let mut out = SeedComparison {
        seeds: runs.iter().map(|r| r.seed).collect(),
        baseline_placed: runs.iter().map(|r| r.placed).collect(),
        ..Default::default()
    };
    for (owner, mine) in plan {
        let mut row = SeedRow {
            owner: owner.clone(),
            plan_placed: mine.placed,
            plan_skew: mine.skew.clone(),
            ..Default::default()
        };
        for run in runs {
            let theirs = run.sides.get(owner);
            row.baseline_placed.push(theirs.map_or(0, |s| s.placed));
            for key in SKEW_KEYS {
                let skew = theirs.and_then(|s| s.skew.get(key)).copied().unwrap_or(0);
                row.baseline_skew.entry(key.to_string()).or_default().push(skew);
            }
        }
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
    use crate::compare::apply_plan;
    use crate::compare::workloads::Workloads;
    use crate::model::testing::{NodeBuilder, PodBuilder, cluster};
    use crate::model::{ClusterState, OwnerRef, Pod};
    use crate::plan::Placement;
    use crate::plan::Plan;

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
            let workloads = Workloads::new(&before, &pending);
            let sides = |p: &Plan| workloads.sides(p, &apply_plan(&before, &pending, p));
            let runs: Vec<SeedRun> = baselines
                .iter()
                .map(|&(seed, p)| SeedRun { seed, placed: p.placements.len(), sides: sides(p) })
                .collect();
            let got = seed_comparison(&sides(&on(&case.plan)), &runs);
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
