//! The verdict of a comparison: is `plan` better than `baseline`, worse, or mixed — criterion by
//! criterion, as an operator would judge it.
//!
//! Input: the two measured [`Side`]s and the per-workload rows. Output: a [`Verdict`]. Each
//! criterion is `better`, `worse` or `same` for the plan:
//!
//! * **placed pods per priority**: from the highest priority down, the first priority where the
//!   plans place a different number of pods decides (the scheduling queue's order), each plan's
//!   count less the running pods of that priority it evicts (a plan that evicts a pod to place
//!   another of lower priority in its room has gained nothing at the higher one).
//! * **placed resources**: cpu and memory requested by the pods placed, less what the pods
//!   each plan evicts requested; `mixed` when one is higher and the other lower.
//! * **workloads starved**: workloads with pending pods of which none is placed; fewer is better.
//! * **spread**: the sum over workloads of the zone skew, and of the node skew; both no higher
//!   and one lower is better (`mixed` when they disagree).
//! * **soft rules**: the fraction of spread-constrained pods within `maxSkew` and the fraction
//!   of preferred (anti-)affinity weight satisfied; both no lower and one higher is better.
//!
//! Overall: `better` when some criterion is better and none worse, `worse` the reverse, `same`
//! when all are the same, `mixed` otherwise — and `invalid` when the plan breaks a hard rule
//! (`kplace check`). The baseline's violations are reported, never held against the plan.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::Side;
use super::workloads::{HOSTNAME_LABEL, OwnerRow, ZONE_LABEL};

/// The plan against the baseline on one criterion.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The plan is better.
    Better,
    /// The plan is worse.
    Worse,
    /// Better on one part, worse on another.
    Mixed,
    /// No difference.
    #[default]
    Same,
    /// The plan breaks a hard rule (overall only).
    Invalid,
}

impl Outcome {
    /// The word used in the verdict line.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Better => "better",
            Outcome::Worse => "worse",
            Outcome::Mixed => "mixed",
            Outcome::Same => "same",
            Outcome::Invalid => "invalid",
        }
    }

    /// Better when `plan > baseline` (or `<` when `lower_is_better`).
    fn of<T: PartialOrd>(baseline: T, plan: T, lower_is_better: bool) -> Outcome {
        match plan.partial_cmp(&baseline) {
            Some(Ordering::Greater) if !lower_is_better => Outcome::Better,
            Some(Ordering::Less) if lower_is_better => Outcome::Better,
            Some(Ordering::Equal) | None => Outcome::Same,
            _ => Outcome::Worse,
        }
    }

    /// Two parts of one criterion together.
    fn and(self, other: Outcome) -> Outcome {
        match (self, other) {
            (a, Outcome::Same) => a,
            (Outcome::Same, b) => b,
            (a, b) if a == b => a,
            _ => Outcome::Mixed,
        }
    }
}

/// One criterion.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Criterion {
    /// `placed pods per priority`, `placed resources`, `workloads starved`, `spread`,
    /// `soft rules`.
    pub name: String,
    /// The plan against the baseline.
    pub outcome: Outcome,
    /// The figures behind it (baseline → plan).
    pub detail: String,
}

/// The verdict (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Verdict {
    /// Overall.
    pub overall: Outcome,
    /// Criterion by criterion.
    pub criteria: Vec<Criterion>,
    /// `kplace check` violations of the plan (exit code 3 when > 0).
    pub plan_violations: usize,
    /// `kplace check` violations of the baseline (reported only).
    pub baseline_violations: usize,
    /// One line saying all of it.
    pub line: String,
}

/// Workloads with pending pods of which none is placed, per side.
pub fn starved(rows: &[OwnerRow]) -> (usize, usize) {
    let n = |f: &dyn Fn(&OwnerRow) -> (usize, usize)| {
        rows.iter().filter(|r| f(r).0 == 0 && f(r).1 > 0).count()
    };
    (n(&|r| (r.baseline.placed, r.baseline.unplaced)), n(&|r| (r.plan.placed, r.plan.unplaced)))
}

/// The verdict of `plan` against `baseline`.
pub fn verdict(baseline: &Side, plan: &Side, rows: &[OwnerRow]) -> Verdict {
    let mut criteria = Vec::new();

    let priorities: BTreeSet<i32> = [baseline, plan]
        .iter()
        .flat_map(|s| s.placed_by_priority.keys().chain(s.evicted_by_priority.keys()))
        .copied()
        .collect();
    let mut outcome = Outcome::Same;
    let mut parts = Vec::new();
    // Placed less evicted, per priority.
    let net = |s: &Side, p: &i32| {
        let count = |m: &std::collections::BTreeMap<i32, usize>| {
            i64::try_from(m.get(p).copied().unwrap_or(0)).unwrap_or(i64::MAX)
        };
        count(&s.placed_by_priority) - count(&s.evicted_by_priority)
    };
    let evicting = !baseline.evicted_by_priority.is_empty() || !plan.evicted_by_priority.is_empty();
    for p in priorities.iter().rev() {
        let (a, b) = (net(baseline, p), net(plan, p));
        if a != b {
            if outcome == Outcome::Same {
                outcome = Outcome::of(a, b, false);
            }
            parts.push(format!("priority {p}: {a} → {b}"));
        }
    }
    if evicting && !parts.is_empty() {
        parts.push("placed less evicted".into());
    }
    if parts.is_empty() {
        parts.push(format!("{} placed by both", plan.placed));
    }
    criteria.push(Criterion {
        name: "placed pods per priority".into(),
        outcome,
        detail: parts.join(", "),
    });

    let (cpu_a, cpu_b): (i64, i64) = (
        rows.iter().map(|r| r.baseline.cpu_placed_m).sum::<i64>() - baseline.evicted_cpu_m,
        rows.iter().map(|r| r.plan.cpu_placed_m).sum::<i64>() - plan.evicted_cpu_m,
    );
    let (mem_a, mem_b): (i64, i64) = (
        rows.iter().map(|r| r.baseline.memory_placed_bytes).sum::<i64>()
            - baseline.evicted_memory_bytes,
        rows.iter().map(|r| r.plan.memory_placed_bytes).sum::<i64>() - plan.evicted_memory_bytes,
    );
    criteria.push(Criterion {
        name: "placed resources".into(),
        outcome: Outcome::of(cpu_a, cpu_b, false).and(Outcome::of(mem_a, mem_b, false)),
        detail: format!(
            "cpu {cpu_a}m → {cpu_b}m, memory {:.1} → {:.1} GiB{}",
            mem_a as f64 / (1u64 << 30) as f64,
            mem_b as f64 / (1u64 << 30) as f64,
            if evicting { " (placed less evicted)" } else { "" }
        ),
    });

    let (sa, sb) = starved(rows);
    criteria.push(Criterion {
        name: "workloads starved".into(),
        outcome: Outcome::of(sa, sb, true),
        detail: format!("{sa} → {sb} of {} workloads with no pod placed", rows.len()),
    });

    let sum = |f: &dyn Fn(&OwnerRow) -> i64| -> i64 { rows.iter().map(f).sum() };
    let skew = |s: &super::workloads::WorkloadSide, k: &str| s.skew.get(k).copied().unwrap_or(0);
    let (za, zb) = (sum(&|r| skew(&r.baseline, ZONE_LABEL)), sum(&|r| skew(&r.plan, ZONE_LABEL)));
    let (ha, hb) =
        (sum(&|r| skew(&r.baseline, HOSTNAME_LABEL)), sum(&|r| skew(&r.plan, HOSTNAME_LABEL)));
    let worst_zone = |f: &dyn Fn(&OwnerRow) -> i64| rows.iter().map(f).max().unwrap_or(0);
    criteria.push(Criterion {
        name: "spread".into(),
        outcome: Outcome::of(za, zb, true).and(Outcome::of(ha, hb, true)),
        detail: format!(
            "zone skew summed over workloads {za} → {zb} (largest {} → {}), node skew {ha} → {hb}",
            worst_zone(&|r| skew(&r.baseline, ZONE_LABEL)),
            worst_zone(&|r| skew(&r.plan, ZONE_LABEL)),
        ),
    });

    let (a, b) = (&baseline.soft_rules, &plan.soft_rules);
    criteria.push(Criterion {
        name: "soft rules".into(),
        outcome: Outcome::of(a.spread_fraction(), b.spread_fraction(), false).and(Outcome::of(
            a.preferred_fraction(),
            b.preferred_fraction(),
            false,
        )),
        detail: format!(
            "pods within maxSkew {}/{} → {}/{}, preferred (anti-)affinity weight {}/{} → {}/{}",
            a.spread_pods_within_max_skew,
            a.spread_pods,
            b.spread_pods_within_max_skew,
            b.spread_pods,
            a.preferred_weight_satisfied,
            a.preferred_weight,
            b.preferred_weight_satisfied,
            b.preferred_weight,
        ),
    });

    let outcomes: Vec<Outcome> = criteria.iter().map(|c| c.outcome).collect();
    let any = |o: Outcome| outcomes.contains(&o);
    let overall = if plan.violations > 0 {
        Outcome::Invalid
    } else if any(Outcome::Mixed) || (any(Outcome::Better) && any(Outcome::Worse)) {
        Outcome::Mixed
    } else if any(Outcome::Better) {
        Outcome::Better
    } else if any(Outcome::Worse) {
        Outcome::Worse
    } else {
        Outcome::Same
    };
    let mut line = match overall {
        Outcome::Invalid => format!("plan INVALID: it breaks {} hard rule(s)", plan.violations),
        Outcome::Better => "plan better than baseline".to_string(),
        Outcome::Worse => "plan worse than baseline".to_string(),
        Outcome::Mixed => "plan mixed against baseline".to_string(),
        Outcome::Same => "plan same as baseline".to_string(),
    };
    let by: Vec<String> = criteria
        .iter()
        .filter(|c| c.outcome != Outcome::Same)
        .map(|c| format!("{} {}", c.outcome.as_str(), c.name))
        .collect();
    if !by.is_empty() {
        line.push_str(&format!(" ({})", by.join("; ")));
    }
    if baseline.violations > 0 {
        line.push_str(&format!(
            "; baseline breaks {} hard rule(s) (reported, not held against the plan)",
            baseline.violations
        ));
    }
    Verdict {
        overall,
        criteria,
        plan_violations: plan.violations,
        baseline_violations: baseline.violations,
        line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::workloads::WorkloadSide;

    fn side(placed: &[(i32, usize)], violations: usize) -> Side {
        Side {
            placed: placed.iter().map(|p| p.1).sum(),
            placed_by_priority: placed.iter().copied().collect(),
            violations,
            ..Default::default()
        }
    }

    fn row(owner: &str, a: (usize, usize, i64), b: (usize, usize, i64)) -> OwnerRow {
        let w = |(placed, unplaced, zone): (usize, usize, i64)| WorkloadSide {
            placed,
            unplaced,
            cpu_placed_m: placed as i64 * 100,
            memory_placed_bytes: placed as i64 * 1000,
            skew: [(ZONE_LABEL.to_string(), zone)].into(),
            ..Default::default()
        };
        OwnerRow { owner: owner.into(), baseline: w(a), plan: w(b), ..Default::default() }
    }

    #[test]
    fn verdict_cases() {
        struct Case {
            name: &'static str,
            baseline: Side,
            plan: Side,
            rows: Vec<OwnerRow>,
            overall: Outcome,
        }
        let cases = [
            Case {
                name: "identical plans are the same",
                baseline: side(&[(0, 3)], 0),
                plan: side(&[(0, 3)], 0),
                rows: vec![row("a", (3, 0, 1), (3, 0, 1))],
                overall: Outcome::Same,
            },
            Case {
                name: "more pods, no worse spread is better",
                baseline: side(&[(0, 2)], 0),
                plan: side(&[(0, 3)], 0),
                rows: vec![row("a", (2, 1, 1), (3, 0, 1))],
                overall: Outcome::Better,
            },
            Case {
                name: "more pods placed but piled into one zone is mixed",
                baseline: side(&[(0, 2)], 0),
                plan: side(&[(0, 3)], 0),
                rows: vec![row("a", (2, 1, 0), (3, 0, 3))],
                overall: Outcome::Mixed,
            },
            Case {
                name: "a starved workload and fewer high-priority pods is worse",
                baseline: side(&[(100, 2), (0, 1)], 0),
                plan: side(&[(100, 1), (0, 1)], 0),
                rows: vec![row("a", (2, 0, 0), (1, 1, 0)), row("b", (1, 0, 0), (0, 1, 0))],
                overall: Outcome::Worse,
            },
            Case {
                name: "evicting fewer pods of a higher priority outweighs placing fewer of a lower one",
                baseline: Side {
                    evicted_by_priority: [(100, 5), (10, 2)].into(),
                    ..side(&[(1000, 4), (10, 3)], 0)
                },
                plan: Side {
                    evicted_by_priority: [(100, 3), (10, 2)].into(),
                    ..side(&[(1000, 4), (10, 1)], 0)
                },
                rows: vec![row("a", (4, 0, 0), (4, 0, 0)), row("b", (3, 0, 0), (1, 2, 0))],
                // Pods: priority 100 decides (-5 against -3); resources: 200m less placed.
                overall: Outcome::Mixed,
            },
            Case {
                name: "the pods a plan evicts count against what it placed",
                baseline: side(&[(1000, 4)], 0),
                plan: Side {
                    evicted_by_priority: [(10, 1)].into(),
                    evicted_cpu_m: 100,
                    evicted_memory_bytes: 1000,
                    ..side(&[(1000, 4), (10, 1)], 0)
                },
                rows: vec![row("a", (4, 0, 0), (4, 0, 0)), row("b", (0, 1, 0), (1, 0, 0))],
                // One pod of priority 10 placed where one was evicted: no pod and no resource
                // gained (only workload b is no longer starved).
                overall: Outcome::Better,
            },
            Case {
                name: "a plan that breaks a hard rule is invalid whatever else it does",
                baseline: side(&[(0, 2)], 0),
                plan: side(&[(0, 3)], 1),
                rows: vec![row("a", (2, 1, 0), (3, 0, 0))],
                overall: Outcome::Invalid,
            },
            Case {
                name: "a baseline that breaks a hard rule does not make the plan invalid",
                baseline: side(&[(0, 3)], 2),
                plan: side(&[(0, 3)], 0),
                rows: vec![row("a", (3, 0, 0), (3, 0, 0))],
                overall: Outcome::Same,
            },
        ];
        for c in cases {
            let v = verdict(&c.baseline, &c.plan, &c.rows);
            assert_eq!(v.overall, c.overall, "{}: {}", c.name, v.line);
            if c.name.starts_with("the pods a plan evicts") {
                assert_eq!(v.criteria[0].outcome, Outcome::Same, "{}", v.criteria[0].detail);
                assert_eq!(v.criteria[1].outcome, Outcome::Same, "{}", v.criteria[1].detail);
            }
            if c.name.starts_with("evicting fewer") {
                assert_eq!(v.criteria[0].outcome, Outcome::Better, "{}", v.criteria[0].detail);
                assert_eq!(
                    v.criteria[0].detail,
                    "priority 100: -5 → -3, priority 10: 1 → -1, placed less evicted"
                );
            }
            assert!(v.line.starts_with("plan "), "{}", c.name);
            if c.baseline.violations > 0 {
                assert!(
                    v.line.contains("baseline breaks 2 hard rule(s)"),
                    "{}: {}",
                    c.name,
                    v.line
                );
            }
        }
    }

    #[test]
    fn starved_counts_workloads_with_pending_pods_and_none_placed() {
        let rows = [row("a", (0, 2, 0), (1, 1, 0)), row("b", (0, 0, 0), (0, 0, 0))];
        assert_eq!(starved(&rows), (1, 0));
    }
}
