//! The lean form of a matrix: what the batch planner reads, without the planes it never reads.
//!
//! Input: a [`Matrix`] ([`Matrix::lean`], what the GPU path does after its readback) or the CPU
//! row evaluator directly ([`super::cpu::evaluate_lean`], which never builds the full matrix).
//! Output: a [`LeanMatrix`]: the filter words, the totals, per class the feasible count, the
//! best total and the scheduler error scoring ends with, per score plugin its weight, skips and
//! row extremes, and the normalized plane only of the plugins the caller keeps, a byte per cell
//! ([`narrow`]). Raw planes and NodeResourcesFit's reason words are not kept. No upstream
//! counterpart.
//!
//! A lean matrix equals the full matrix's on everything it keeps, bit for bit (the normalized
//! planes through [`narrow`]; `tests/all/cpu_parallel.rs`).

use super::{Matrix, ScorePlugin};
use crate::framework::MAX_NODE_SCORE;
use crate::framework::Status;
use crate::framework::profile::PluginName;

/// A kept normalized score outside `0..=MAX_NODE_SCORE` ([`narrow`]). Such a score is a score
/// error of its class ([`LeanMatrix::score_errors`] says which, with the value), whose cells
/// nobody scores.
pub const OUT_OF_RANGE: u8 = u8::MAX;

/// A normalized score as a [`LeanPlane`] keeps it: `0..=MAX_NODE_SCORE` as it is, anything else
/// [`OUT_OF_RANGE`]. A byte per cell where the full matrix has four: the lean matrix is what
/// `plan` evaluates into, a `C × N` array per kept plane.
#[inline(always)]
pub fn narrow(v: i32) -> u8 {
    if v as u32 <= MAX_NODE_SCORE as u32 { v as u8 } else { OUT_OF_RANGE }
}

/// One score plugin of a [`LeanMatrix`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeanPlane {
    /// The plugin.
    pub plugin: PluginName,
    /// Its weight in the profile.
    pub weight: i64,
    /// Per class: PreScore returned `Skip`.
    pub skipped: Vec<bool>,
    /// Per class: the largest raw score over the feasible nodes (as [`super::ScorePlane`]).
    pub row_max: Vec<i32>,
    /// Per class: the smallest raw score over the feasible nodes.
    pub row_min: Vec<i32>,
    /// `C × N` normalized scores ([`narrow`]ed) when the caller kept the plugin's plane; empty
    /// otherwise.
    pub normalized: Vec<u8>,
}

/// The parts of a [`Matrix`] the batch planner reads (see the module documentation). The
/// default is the matrix of no classes and no nodes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeanMatrix {
    /// Number of classes `C`.
    pub num_classes: usize,
    /// Number of nodes `N`.
    pub num_nodes: usize,
    /// `C × N` filter words ([`Matrix::filter`]).
    pub filter: Vec<u32>,
    /// `C × N` weighted sums of the normalized scores ([`Matrix::total`]).
    pub total: Vec<i32>,
    /// Per class: number of feasible nodes.
    pub feasible_count: Vec<u32>,
    /// Per class: the best total over the feasible nodes (`i32::MIN` when none).
    pub best_total: Vec<i32>,
    /// Per class: the scheduler error scoring would end with ([`Matrix::score_errors`]).
    pub score_errors: Vec<Option<Status>>,
    /// The evaluated score plugins, in the profile's score order.
    pub planes: Vec<LeanPlane>,
}

impl LeanMatrix {
    /// The index of cell `(class, node)`.
    pub fn cell(&self, class: usize, node: usize) -> usize {
        class * self.num_nodes + node
    }

    /// Whether the class fits the node (every enabled check passed).
    pub fn feasible(&self, class: usize, node: usize) -> bool {
        self.filter.get(self.cell(class, node)).is_some_and(|w| w & super::CELL_FEASIBLE != 0)
    }

    /// The plane of a plugin, if the profile scores with it.
    pub fn plane(&self, plugin: PluginName) -> Option<&LeanPlane> {
        self.planes.iter().find(|p| p.plugin == plugin)
    }
}

/// Which normalized planes a lean evaluation keeps, by [`ScorePlugin::index`].
pub type Keep = [bool; super::NUM_SCORE_PLANES];

/// The [`Keep`] of a list of plugins (plugins the matrix does not score are ignored).
pub fn keep_of(plugins: &[PluginName]) -> Keep {
    let mut keep = [false; super::NUM_SCORE_PLANES];
    for &plugin in plugins {
        if let Some(s) = ScorePlugin::of(plugin) {
            keep[s.index()] = true;
        }
    }
    keep
}

impl Matrix {
    /// The lean form of this matrix, keeping the normalized planes of `keep`'s plugins.
    pub fn lean(self, keep: &[PluginName]) -> LeanMatrix {
        let keep = keep_of(keep);
        let planes = self
            .scores
            .into_iter()
            .map(|s| {
                let kept = ScorePlugin::of(s.plugin).is_some_and(|k| keep[k.index()]);
                LeanPlane {
                    plugin: s.plugin,
                    weight: s.weight,
                    skipped: s.skipped,
                    row_max: s.row_max,
                    row_min: s.row_min,
                    normalized: match kept {
                        true => s.normalized.iter().map(|&v| narrow(v)).collect(),
                        false => Vec::new(),
                    },
                }
            })
            .collect();
        LeanMatrix {
            num_classes: self.num_classes,
            num_nodes: self.num_nodes,
            filter: self.filter,
            total: self.total,
            feasible_count: self.feasible_count,
            best_total: self.best_total,
            score_errors: self.score_errors,
            planes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_score_in_range_keeps_its_value_and_any_other_is_out_of_range() {
        let cases = [
            ("the lowest score", 0, 0),
            ("a middle score", 37, 37),
            ("the highest score", 100, 100),
            ("one above the range", 101, OUT_OF_RANGE),
            ("a score a byte holds but the range does not", 200, OUT_OF_RANGE),
            ("the byte's own maximum", 255, OUT_OF_RANGE),
            ("one below the range", -1, OUT_OF_RANGE),
            ("the least i32", i32::MIN, OUT_OF_RANGE),
            ("the greatest i32", i32::MAX, OUT_OF_RANGE),
        ];
        for (name, v, want) in cases {
            assert_eq!(narrow(v), want, "{name}");
        }
    }
}
