//! Why a pod fits nowhere: per-node statuses aggregated into kube-scheduler's FitError message.
//!
//! Counterpart: `pkg/scheduler/framework/types.go` (`Diagnosis`, `FitError.Error`) and
//! `NodeToStatus` in `pkg/scheduler/framework/interface.go` (v1.35). The message format is
//! `0/N nodes are available: <PreFilterMsg>. <sorted "count reason" list>. <PostFilterMsg>`.

use std::collections::{BTreeMap, BTreeSet};

use super::status::Status;

/// The outcome of filtering one pod against the nodes (upstream `framework.Diagnosis`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnosis {
    /// Statuses of nodes that were evaluated and rejected, by node index.
    pub node_statuses: BTreeMap<usize, Status>,
    /// The status of every node not in `node_statuses` that was not evaluated (PreFilter
    /// rejected the pod, or restricted it to a subset of nodes).
    pub absent_nodes_status: Option<Status>,
    /// The PreFilter rejection message, when PreFilter rejected the pod.
    pub pre_filter_msg: Option<String>,
    /// The PostFilter (preemption) message.
    pub post_filter_msg: Option<String>,
    /// Plugins that rejected the pod on some node.
    pub unschedulable_plugins: BTreeSet<&'static str>,
    /// Statuses of further evaluated and rejected nodes, grouped: each distinct status with the
    /// number of nodes that have it. The sequential simulator reports a pod that fits nowhere
    /// this way when it reuses an earlier pod's verdicts (counting them like `node_statuses`,
    /// without listing tens of thousands of nodes).
    pub grouped_statuses: Vec<(Status, usize)>,
}

impl Diagnosis {
    /// Records a rejecting status from a plugin (upstream `AddPluginStatus`).
    pub fn add_plugin_status(&mut self, status: &Status) {
        if let (Some(plugin), true) = (status.plugin, status.is_rejected()) {
            self.unschedulable_plugins.insert(plugin);
        }
    }

    /// The status a node has in this diagnosis: its explicit status, else the absent-nodes
    /// status (upstream `NodeToStatus.Get`).
    pub fn status_of(&self, node: usize) -> Option<&Status> {
        self.node_statuses.get(&node).or(self.absent_nodes_status.as_ref())
    }
}

/// A pod that fits on no node (upstream `framework.FitError`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FitError {
    /// Number of nodes in the cluster snapshot.
    pub num_all_nodes: usize,
    /// Why.
    pub diagnosis: Diagnosis,
}

impl FitError {
    /// Reason → number of nodes, as the message counts them. When PreFilter rejected the pod the
    /// PreFilter message is reported for every node.
    pub fn reasons(&self) -> BTreeMap<String, usize> {
        let mut hist = BTreeMap::new();
        if let Some(msg) = &self.diagnosis.pre_filter_msg {
            hist.insert(msg.clone(), self.num_all_nodes);
            return hist;
        }
        for status in self.diagnosis.node_statuses.values() {
            for r in &status.reasons {
                *hist.entry(r.clone()).or_insert(0) += 1;
            }
        }
        for (status, count) in &self.diagnosis.grouped_statuses {
            if *count == 0 {
                continue;
            }
            for r in &status.reasons {
                *hist.entry(r.clone()).or_insert(0) += count;
            }
        }
        let explicit = self.diagnosis.node_statuses.len()
            + self.diagnosis.grouped_statuses.iter().map(|(_, n)| n).sum::<usize>();
        if explicit < self.num_all_nodes
            && let Some(absent) = &self.diagnosis.absent_nodes_status
        {
            for r in &absent.reasons {
                *hist.entry(r.clone()).or_insert(0) += self.num_all_nodes - explicit;
            }
        }
        hist
    }

    /// The message, byte for byte as upstream's `FitError.Error()` words it.
    pub fn message(&self) -> String {
        let mut msg = format!("0/{} nodes are available:", self.num_all_nodes);
        if let Some(pre) = &self.diagnosis.pre_filter_msg {
            msg.push_str(&format!(" {pre}."));
        } else {
            // Go's sort.Strings over "count reason": a byte-wise sort, so "10 x" < "2 y".
            let mut items: Vec<String> =
                self.reasons().iter().map(|(r, n)| format!("{n} {r}")).collect();
            items.sort();
            if !items.is_empty() {
                msg.push_str(&format!(" {}.", items.join(", ")));
            }
        }
        if let Some(post) = &self.diagnosis.post_filter_msg {
            msg.push_str(&format!(" {post}"));
        }
        msg
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::status::Code;

    fn diag(statuses: &[(usize, &[&str])]) -> Diagnosis {
        let mut d = Diagnosis::default();
        for (i, reasons) in statuses {
            d.node_statuses.insert(*i, Status::new(Code::Unschedulable, reasons.iter().copied()));
        }
        d
    }

    #[test]
    fn reasons_are_counted_per_node_and_sorted_as_strings() {
        let e = FitError {
            num_all_nodes: 3,
            diagnosis: diag(&[
                (0, &["node(s) had untolerated taint(s)"]),
                (1, &["Insufficient cpu"]),
                (2, &["Insufficient cpu"]),
            ]),
        };
        assert_eq!(
            e.message(),
            "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu."
        );
    }

    #[test]
    fn a_node_with_two_insufficient_resources_counts_for_both() {
        let e = FitError {
            num_all_nodes: 2,
            diagnosis: diag(&[
                (0, &["Insufficient cpu", "Insufficient memory"]),
                (1, &["Insufficient memory"]),
            ]),
        };
        assert_eq!(
            e.message(),
            "0/2 nodes are available: 1 Insufficient cpu, 2 Insufficient memory."
        );
    }

    #[test]
    fn counts_sort_bytewise_so_ten_comes_before_two() {
        let mut statuses: Vec<(usize, &[&str])> = Vec::new();
        for i in 0..10 {
            statuses.push((i, &["Insufficient memory"]));
        }
        statuses.push((10, &["Insufficient cpu"]));
        statuses.push((11, &["Insufficient cpu"]));
        let e = FitError { num_all_nodes: 12, diagnosis: diag(&statuses) };
        assert_eq!(
            e.message(),
            "0/12 nodes are available: 10 Insufficient memory, 2 Insufficient cpu."
        );
    }

    #[test]
    fn pre_filter_rejection_replaces_the_node_reasons() {
        let mut d = diag(&[(0, &["Insufficient cpu"])]);
        d.pre_filter_msg = Some("node(s) didn't match pod affinity rules".to_string());
        let e = FitError { num_all_nodes: 5, diagnosis: d };
        assert_eq!(
            e.message(),
            "0/5 nodes are available: node(s) didn't match pod affinity rules."
        );
    }

    #[test]
    fn absent_nodes_count_with_the_absent_status() {
        let mut d = diag(&[(0, &["Insufficient cpu"])]);
        d.absent_nodes_status =
            Some(Status::unresolvable("node(s) didn't satisfy plugin(s) [NodeAffinity]"));
        let e = FitError { num_all_nodes: 4, diagnosis: d };
        assert_eq!(
            e.message(),
            "0/4 nodes are available: 1 Insufficient cpu, 3 node(s) didn't satisfy plugin(s) [NodeAffinity]."
        );
    }

    #[test]
    fn post_filter_message_is_appended_without_an_extra_period() {
        let mut d = diag(&[(0, &["Insufficient cpu"])]);
        d.post_filter_msg = Some(
            "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
                .to_string(),
        );
        let e = FitError { num_all_nodes: 1, diagnosis: d };
        assert_eq!(
            e.message(),
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
        );
    }
}
