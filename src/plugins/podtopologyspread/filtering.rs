//! PodTopologySpread PreFilter, Filter and the PreFilter extensions (AddPod/RemovePod) for
//! `whenUnsatisfiable: DoNotSchedule` constraints.
//!
//! Input: the incoming pod and the whole [`ClusterState`]; output: a [`PreFilterState`] of
//! matching-pod counts per domain and constraint, and per node a [`Status`].
//! Upstream: `pkg/scheduler/framework/plugins/podtopologyspread/filtering.go` (v1.35).
//!
//! Arithmetic: counts and skews are integers (Go `int`, here `i64`); a constraint with no
//! eligible domain has the global minimum `MaxInt32`, as upstream initialises it.

use std::collections::BTreeMap;

use super::common::{
    Constraint, IncomingPod, count_pods_match_selector, match_node_inclusion_policies,
    node_labels_match_spread_constraints,
};
use super::{
    ERR_REASON_CONSTRAINTS_NOT_MATCH, ERR_REASON_NODE_LABEL_NOT_MATCH, NAME, PodTopologySpread,
};
use crate::framework::Status;
use crate::model::{ClusterState, Node, Pod, UnsatisfiableAction};

/// The global minimum of a constraint with no eligible domain (upstream `math.MaxInt32`).
const NO_DOMAIN_MIN: i64 = i32::MAX as i64;

/// What PreFilter computes for one incoming pod and Filter reads (upstream `preFilterState`).
#[derive(Debug, Clone, PartialEq)]
pub struct PreFilterState {
    /// The pod's `DoNotSchedule` constraints (or the defaults), in order.
    pub constraints: Vec<Constraint>,
    /// Per constraint: eligible domain (topology value) → matching pods in it. Every eligible
    /// domain has an entry, possibly 0.
    pub tp_value_to_match_num: Vec<BTreeMap<String, i64>>,
    /// Per constraint: the smallest count over its eligible domains (`MaxInt32` when none).
    pub min_match_num: Vec<i64>,
    /// What AddPod/RemovePod read of the incoming pod.
    incoming: IncomingPod,
}

impl PreFilterState {
    /// The state of `constraints` with the matching pods counted per domain (one map per
    /// constraint), each constraint's minimum computed.
    fn of_counts(
        constraints: Vec<Constraint>,
        counts: Vec<BTreeMap<String, i64>>,
        incoming: IncomingPod,
    ) -> Self {
        let mut state = PreFilterState {
            min_match_num: vec![NO_DOMAIN_MIN; constraints.len()],
            constraints,
            tp_value_to_match_num: counts,
            incoming,
        };
        for i in 0..state.constraints.len() {
            state.recompute_min(i);
        }
        state
    }

    /// The global minimum for the skew, taking `minDomains` into account: 0 when there are
    /// fewer eligible domains than `minDomains` (upstream `minMatchNum`).
    fn min_match_num(&self, i: usize, min_domains: i32) -> i64 {
        let domains = self.tp_value_to_match_num.get(i).map_or(0, BTreeMap::len);
        if (domains as i64) < i64::from(min_domains) {
            return 0;
        }
        self.min_match_num.get(i).copied().unwrap_or(NO_DOMAIN_MIN)
    }

    /// Recomputes constraint `i`'s global minimum from its counts.
    fn recompute_min(&mut self, i: usize) {
        let min = self
            .tp_value_to_match_num
            .get(i)
            .and_then(|m| m.values().copied().min())
            .unwrap_or(NO_DOMAIN_MIN);
        if let Some(slot) = self.min_match_num.get_mut(i) {
            *slot = min;
        }
    }

    /// Updates the counts as if `pod` were added to `node` (upstream `AddPod`).
    pub fn add_pod(&mut self, pod: &Pod, node: &Node) {
        self.update_with_pod(pod, node, 1);
    }

    /// Updates the counts as if `pod` were removed from `node` (upstream `RemovePod`).
    pub fn remove_pod(&mut self, pod: &Pod, node: &Node) {
        self.update_with_pod(pod, node, -1);
    }

    /// Upstream `updateWithPod`. Like upstream it does not look at whether `pod` is
    /// terminating (PreFilter never counted terminating pods).
    fn update_with_pod(&mut self, pod: &Pod, node: &Node, delta: i64) {
        if pod.namespace != self.incoming.namespace
            || !node_labels_match_spread_constraints(&node.labels, &self.constraints)
        {
            return;
        }
        for i in 0..self.constraints.len() {
            let c = &self.constraints[i];
            if !c.selects(&pod.labels) || !match_node_inclusion_policies(c, &self.incoming, node) {
                continue;
            }
            let value = node.labels.get(&c.topology_key).cloned().unwrap_or_default();
            if let Some(counts) = self.tp_value_to_match_num.get_mut(i) {
                *counts.entry(value).or_insert(0) += delta;
            }
            self.recompute_min(i);
        }
    }
}

/// What PreFilter's counts depend on besides the cluster: the constraints and what the node
/// inclusion policies read of the incoming pod (its namespace included).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FilterKey {
    constraints: Vec<Constraint>,
    incoming: IncomingPod,
}

/// Per constraint, the node's domain and its matching pods, when the node is eligible.
pub(crate) type NodeDomains = Vec<Option<(String, i64)>>;

/// Per constraint: eligible domain → (matching pods, eligible nodes in it).
#[derive(Debug, Clone, Default)]
pub(crate) struct DomainCounts(Vec<BTreeMap<String, (i64, i64)>>);

impl super::super::node_memo::Totals<NodeDomains> for DomainCounts {
    fn apply(&mut self, node: &NodeDomains, sign: i64) {
        if self.0.len() < node.len() {
            self.0.resize_with(node.len(), BTreeMap::new);
        }
        for (counts, part) in self.0.iter_mut().zip(node) {
            let Some((value, count)) = part else { continue };
            let entry = match counts.get_mut(value) {
                Some(entry) => entry,
                None => counts.entry(value.clone()).or_insert((0, 0)),
            };
            entry.0 += sign * count;
            entry.1 += sign;
            if entry.1 == 0 {
                counts.remove(value);
            }
        }
    }
}

/// The memo of PreFilter's counts ([`super::super::node_memo`]).
pub(crate) type FilterMemo =
    super::super::node_memo::NodeMemo<FilterKey, NodeDomains, DomainCounts>;

impl FilterKey {
    /// One node's part: per constraint its domain and matching pods, if the node has every
    /// constraint's key and passes the constraint's inclusion policies.
    fn node_domains(&self, node: &Node) -> NodeDomains {
        if !node_labels_match_spread_constraints(&node.labels, &self.constraints) {
            return Vec::new();
        }
        self.constraints
            .iter()
            .map(|c| {
                if !match_node_inclusion_policies(c, &self.incoming, node) {
                    return None;
                }
                let value = node.labels.get(&c.topology_key).cloned().unwrap_or_default();
                let count =
                    count_pods_match_selector(&node.pods, &c.selector, &self.incoming.namespace);
                Some((value, count))
            })
            .collect()
    }
}

impl PodTopologySpread {
    /// PreFilter: for each `DoNotSchedule` constraint, counts matching pods per domain over
    /// the eligible nodes — nodes with every constraint's key that pass the constraint's node
    /// inclusion policies. `Err(Skip)` when the pod has no such constraint.
    ///
    /// The counts are sums of per-node parts kept across cycles ([`FilterMemo`]): only nodes
    /// whose pods changed since the last pod with the same constraints are recounted.
    pub fn pre_filter(&self, pod: &Pod, cluster: &ClusterState) -> Result<PreFilterState, Status> {
        let constraints = self.constraints(pod, UnsatisfiableAction::DoNotSchedule);
        if constraints.is_empty() {
            return Err(Status::skip().with_plugin(NAME));
        }
        let key = FilterKey { constraints, incoming: IncomingPod::new(pod) };
        let counts = self.filter_memo.with(
            &key,
            cluster,
            |node| key.node_domains(node),
            |totals| {
                (0..key.constraints.len())
                    .map(|i| {
                        totals.0.get(i).map_or_else(BTreeMap::new, |m| {
                            m.iter().map(|(v, &(count, _))| (v.clone(), count)).collect()
                        })
                    })
                    .collect::<Vec<BTreeMap<String, i64>>>()
            },
        );
        let FilterKey { constraints, incoming } = key;
        Ok(PreFilterState::of_counts(constraints, counts, incoming))
    }

    /// [`PodTopologySpread::pre_filter`] computed afresh over every node and pod (the
    /// specification the memoized counts are tested against).
    #[cfg(test)]
    pub(crate) fn pre_filter_fresh(
        &self,
        pod: &Pod,
        cluster: &ClusterState,
    ) -> Result<PreFilterState, Status> {
        let constraints = self.constraints(pod, UnsatisfiableAction::DoNotSchedule);
        if constraints.is_empty() {
            return Err(Status::skip().with_plugin(NAME));
        }
        let incoming = IncomingPod::new(pod);
        let mut counts = vec![BTreeMap::<String, i64>::new(); constraints.len()];
        for node in &cluster.nodes {
            if !node_labels_match_spread_constraints(&node.labels, &constraints) {
                continue;
            }
            for (i, c) in constraints.iter().enumerate() {
                if !match_node_inclusion_policies(c, &incoming, node) {
                    continue;
                }
                let value = node.labels.get(&c.topology_key).cloned().unwrap_or_default();
                let count = count_pods_match_selector(&node.pods, &c.selector, &pod.namespace);
                *counts[i].entry(value).or_insert(0) += count;
            }
        }
        Ok(PreFilterState::of_counts(constraints, counts, incoming))
    }

    /// Filter: the node must have every constraint's key (`UnschedulableAndUnresolvable`
    /// otherwise), and for each constraint `count(node's domain) + (pod matches itself) -
    /// global minimum <= maxSkew` (`Unschedulable` otherwise).
    pub fn filter(&self, state: &PreFilterState, pod: &Pod, node: &Node) -> Status {
        for (i, c) in state.constraints.iter().enumerate() {
            let Some(value) = node.labels.get(&c.topology_key) else {
                return Status::unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH).with_plugin(NAME);
            };
            let min_match_num = state.min_match_num(i, c.min_domains);
            let self_match_num = i64::from(c.selects(&pod.labels));
            let match_num =
                state.tp_value_to_match_num.get(i).and_then(|m| m.get(value)).copied().unwrap_or(0);
            let skew = match_num + self_match_num - min_match_num;
            if skew > i64::from(c.max_skew) {
                return Status::unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH).with_plugin(NAME);
            }
        }
        Status::success()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::Code;
    use crate::framework::args::{PodTopologySpreadArgs, SpreadDefaultingType};
    use crate::model::testing::{NodeBuilder, PodBuilder, cluster, node_term, spread_constraint};
    use crate::model::{
        InclusionPolicy, LabelSelector, MatchOp, Requirement, TaintEffect, TolerationOperator,
        TopologySpreadConstraint,
    };

    const DNS: UnsatisfiableAction = UnsatisfiableAction::DoNotSchedule;
    const OK: Code = Code::Success;
    const SKEW: Code = Code::Unschedulable;
    const LABEL: Code = Code::UnschedulableAndUnresolvable;

    /// A DoNotSchedule constraint selecting pods with label `foo`.
    fn foo_constraint(max_skew: i32, key: &str) -> TopologySpreadConstraint {
        let mut c = spread_constraint(max_skew, key, DNS, &[]);
        c.label_selector = Some(LabelSelector {
            requirements: vec![Requirement::new("foo", MatchOp::Exists, &[])],
        });
        c
    }

    fn with_min_domains(mut c: TopologySpreadConstraint, n: i32) -> TopologySpreadConstraint {
        c.min_domains = Some(n);
        c
    }

    fn incoming() -> PodBuilder {
        PodBuilder::new("default", "p").label("foo", "")
    }

    /// `count` pods labelled foo on `node`, named after it.
    fn foo_pods(node: &str, count: usize) -> Vec<Pod> {
        (0..count)
            .map(|i| {
                PodBuilder::new("default", &format!("{node}-{i}")).label("foo", "").node(node).obj()
            })
            .collect()
    }

    /// node-a, node-b in zone1 and node-x, node-y in zone2, each also labelled node=<name>.
    fn four_nodes() -> Vec<Node> {
        ["node-a", "node-b", "node-x", "node-y"]
            .iter()
            .map(|n| {
                let zone = if *n < "node-x" { "zone1" } else { "zone2" };
                NodeBuilder::new(n).label("zone", zone).label("node", n).obj()
            })
            .collect()
    }

    /// Pods spread as a/b/x/y.
    fn spread(a: usize, b: usize, x: usize, y: usize) -> Vec<Pod> {
        [("node-a", a), ("node-b", b), ("node-x", x), ("node-y", y)]
            .iter()
            .flat_map(|(n, c)| foo_pods(n, *c))
            .collect()
    }

    /// A filter case: name, incoming pod, nodes, existing pods, and the code per node.
    type Case = (&'static str, Pod, Vec<Node>, Vec<Pod>, Vec<Code>);

    fn codes(pl: &PodTopologySpread, pod: &Pod, c: &ClusterState) -> Vec<Code> {
        match pl.pre_filter(pod, c) {
            Ok(state) => c.nodes.iter().map(|n| pl.filter(&state, pod, n).code).collect(),
            Err(s) => {
                assert_eq!(s.code, Code::Skip, "pre_filter failed: {s}");
                vec![OK; c.nodes.len()]
            }
        }
    }

    #[test]
    fn a_single_constraint_filters_as_upstream() {
        // (case, pod, nodes, existing pods, codes per node in name order)
        let cases: Vec<Case> = vec![
            (
                "with no existing pods every node fits",
                incoming().spread(foo_constraint(1, "zone")).obj(),
                four_nodes(),
                vec![],
                vec![OK, OK, OK, OK],
            ),
            (
                "with no existing pods every node fits even if the pod does not match itself",
                incoming()
                    .spread(TopologySpreadConstraint {
                        label_selector: Some(LabelSelector {
                            requirements: vec![Requirement::new("bar", MatchOp::Exists, &[])],
                        }),
                        ..foo_constraint(1, "zone")
                    })
                    .obj(),
                four_nodes(),
                vec![],
                vec![OK, OK, OK, OK],
            ),
            (
                "existing pods in a different namespace do not count",
                // zone1 counts 0 (its pods are in ns1/ns2), zone2 counts 2: min 0, so zone2
                // nodes get skew 2+1-0 = 3 > 1.
                incoming().spread(foo_constraint(1, "zone")).obj(),
                four_nodes(),
                vec![
                    PodBuilder::new("ns1", "a1").label("foo", "").node("node-a").obj(),
                    PodBuilder::new("ns2", "b1").label("foo", "").node("node-a").obj(),
                    PodBuilder::new("default", "x1").label("foo", "").node("node-x").obj(),
                    PodBuilder::new("default", "y1").label("foo", "").node("node-y").obj(),
                ],
                vec![OK, OK, SKEW, SKEW],
            ),
            (
                "pods spread across zones as 3/3 let every node fit",
                incoming().spread(foo_constraint(1, "zone")).obj(),
                four_nodes(),
                spread(2, 1, 0, 3),
                vec![OK, OK, OK, OK],
            ),
            (
                "a node without the zone label is unresolvable and its pods do not count",
                // node-b lacks "zone": zones count 1/2, min 1: zone2 skew 2+1-1 = 2 > 1.
                incoming().spread(foo_constraint(1, "zone")).obj(),
                vec![
                    NodeBuilder::new("node-a").label("zone", "zone1").obj(),
                    NodeBuilder::new("node-b").label("zon", "zone1").obj(),
                    NodeBuilder::new("node-x").label("zone", "zone2").obj(),
                    NodeBuilder::new("node-y").label("zone", "zone2").obj(),
                ],
                spread(1, 1, 1, 1),
                vec![OK, LABEL, SKEW, SKEW],
            ),
            (
                "no node has the rack label, so every node is unresolvable",
                incoming().spread(foo_constraint(1, "rack")).obj(),
                four_nodes(),
                vec![],
                vec![LABEL, LABEL, LABEL, LABEL],
            ),
            (
                "pods spread across nodes as 2/1/0/3 leave only node-x",
                incoming().spread(foo_constraint(1, "node")).obj(),
                four_nodes(),
                spread(2, 1, 0, 3),
                vec![SKEW, SKEW, OK, SKEW],
            ),
            (
                "pods spread across nodes as 2/1/0/3 with maxSkew 2 leave node-b and node-x",
                incoming().spread(foo_constraint(2, "node")).obj(),
                four_nodes(),
                spread(2, 1, 0, 3),
                vec![SKEW, OK, OK, SKEW],
            ),
            (
                "a pod that does not match itself adds nothing to the skew",
                PodBuilder::new("default", "p")
                    .label("bar", "")
                    .spread(foo_constraint(1, "node"))
                    .obj(),
                four_nodes(),
                spread(2, 1, 0, 3),
                vec![SKEW, OK, OK, SKEW],
            ),
            (
                "the pod's node affinity restricts the domains to node-a and node-y (2/~1~/~0~/3)",
                // Under the default nodeAffinityPolicy Honor only node-a and node-y count:
                // min 2, so node-a fits (node-b and node-x are left to NodeAffinity).
                incoming()
                    .required_node_affinity(vec![node_term(vec![Requirement::new(
                        "node",
                        MatchOp::In,
                        &["node-a", "node-y"],
                    )])])
                    .spread(foo_constraint(1, "node"))
                    .obj(),
                four_nodes(),
                spread(2, 1, 0, 3),
                vec![OK, OK, OK, SKEW],
            ),
            (
                "terminating pods are not counted",
                incoming().spread(foo_constraint(1, "node")).obj(),
                vec![
                    NodeBuilder::new("node-a").label("node", "node-a").obj(),
                    NodeBuilder::new("node-b").label("node", "node-b").obj(),
                ],
                vec![
                    PodBuilder::new("default", "a")
                        .label("foo", "")
                        .node("node-a")
                        .terminating()
                        .obj(),
                    PodBuilder::new("default", "b").label("foo", "").node("node-b").obj(),
                ],
                vec![OK, SKEW],
            ),
            (
                "an empty label selector counts no pod but the pod matches itself",
                // Counts are all 0 (upstream skips empty selectors), self-match 1: skew 1.
                incoming()
                    .spread(TopologySpreadConstraint {
                        label_selector: Some(LabelSelector::default()),
                        ..foo_constraint(1, "node")
                    })
                    .obj(),
                four_nodes(),
                spread(2, 1, 0, 3),
                vec![OK, OK, OK, OK],
            ),
        ];
        let pl = PodTopologySpread::default();
        for (name, pod, nodes, pods, want) in cases {
            assert_eq!(codes(&pl, &pod, &cluster(nodes, pods)), want, "{name}");
        }
    }

    #[test]
    fn min_domains_treats_the_global_minimum_as_zero_when_domains_are_too_few() {
        let three_nodes = || {
            ["node-a", "node-b", "node-c"]
                .iter()
                .map(|n| NodeBuilder::new(n).label("node", n).obj())
                .collect::<Vec<_>>()
        };
        let pods_221 =
            || [foo_pods("node-a", 2), foo_pods("node-b", 2), foo_pods("node-c", 1)].concat();
        let cases: Vec<(&str, Pod, Vec<Code>)> = vec![
            (
                "2/2/1 with maxSkew 2 and minDomains 4: 3 domains, so the minimum is 0 and only node-c fits",
                // node-a: 2+1-0 = 3 > 2; node-c: 1+1-0 = 2.
                incoming().spread(with_min_domains(foo_constraint(2, "node"), 4)).obj(),
                vec![SKEW, SKEW, OK],
            ),
            (
                "2/2/1 with maxSkew 2 and minDomains 3: enough domains, the minimum is 1 and all fit",
                incoming().spread(with_min_domains(foo_constraint(2, "node"), 3)).obj(),
                vec![OK, OK, OK],
            ),
            (
                "2/2/1 with maxSkew 2 and minDomains 2: enough domains and all fit",
                incoming().spread(with_min_domains(foo_constraint(2, "node"), 2)).obj(),
                vec![OK, OK, OK],
            ),
            (
                "2/2/1 with maxSkew 1 and no minDomains: only node-c fits",
                incoming().spread(foo_constraint(1, "node")).obj(),
                vec![SKEW, SKEW, OK],
            ),
        ];
        let pl = PodTopologySpread::default();
        for (name, pod, want) in cases {
            assert_eq!(codes(&pl, &pod, &cluster(three_nodes(), pods_221())), want, "{name}");
        }

        // Zones: zone1 (node-a, node-b) holds 2, zone2 (node-x, node-y) holds 1; minDomains 3
        // makes the minimum 0: zone1 2+1 = 3 > 2, zone2 1+1 = 2.
        let pod = incoming().spread(with_min_domains(foo_constraint(2, "zone"), 3)).obj();
        let c = cluster(four_nodes(), spread(1, 1, 1, 0));
        assert_eq!(codes(&pl, &pod, &c), vec![SKEW, SKEW, OK, OK], "zones 2/1 with minDomains 3");
        // A node excluded by node affinity does not make a domain: with the pod restricted to
        // node-a and node-b, zone2 is not eligible.
        let pod = incoming()
            .required_node_affinity(vec![node_term(vec![Requirement::new(
                "node",
                MatchOp::NotIn,
                &["node-x", "node-y"],
            )])])
            .spread(with_min_domains(foo_constraint(1, "zone"), 2))
            .obj();
        // Only zone1 is eligible (1 domain < 2): the minimum is 0, zone1 count 2 -> skew 3.
        assert_eq!(
            codes(&pl, &pod, &c),
            vec![SKEW, SKEW, OK, OK],
            "one eligible zone with minDomains 2"
        );
    }

    #[test]
    fn two_constraints_must_both_hold() {
        let cases: Vec<(&str, Pod, Vec<Pod>, Vec<Code>)> = vec![
            (
                "zone and node constraints with spreads 3/3 and 2/1/0/3 leave node-x",
                incoming()
                    .spread(foo_constraint(1, "zone"))
                    .spread(foo_constraint(1, "node"))
                    .obj(),
                spread(2, 1, 0, 3),
                vec![SKEW, SKEW, OK, SKEW],
            ),
            (
                "zone and node constraints with spreads 3/1 and 2/1/0/1 leave only node-x",
                // zone1 = 3, zone2 = 1: zone1 nodes fail the zone constraint (3+1-1 = 3).
                // node: min 0 -> node-y 1+1 = 2 > 1 fails, node-x fits.
                incoming()
                    .spread(foo_constraint(1, "zone"))
                    .spread(foo_constraint(1, "node"))
                    .obj(),
                spread(2, 1, 0, 1),
                vec![SKEW, SKEW, OK, SKEW],
            ),
            (
                "constraints with different selectors count different pods",
                // zone counts foo: 1/1 (a, x); node counts bar: b has one. Pod has foo only:
                // zone skew 1+1-1 = 1 ok; node never self-matches, min 0, node-b 1 <= 1.
                incoming()
                    .spread(foo_constraint(1, "zone"))
                    .spread(TopologySpreadConstraint {
                        label_selector: Some(LabelSelector::from_match_labels([("bar", "")])),
                        ..foo_constraint(1, "node")
                    })
                    .obj(),
                [
                    foo_pods("node-a", 1),
                    foo_pods("node-x", 1),
                    vec![PodBuilder::new("default", "bar").label("bar", "").node("node-b").obj()],
                ]
                .concat(),
                vec![OK, OK, OK, OK],
            ),
        ];
        let pl = PodTopologySpread::default();
        for (name, pod, pods, want) in cases {
            assert_eq!(codes(&pl, &pod, &cluster(four_nodes(), pods)), want, "{name}");
        }
    }

    #[test]
    fn node_inclusion_policies_decide_which_nodes_count() {
        // zone1: node-a (foo=bar label); zone2: node-x (foo=bar); zone3: node-z without the
        // label and tainted. One matching pod on node-a and on node-x.
        let nodes = || {
            vec![
                NodeBuilder::new("node-a").label("zone", "zone1").label("pool", "x").obj(),
                NodeBuilder::new("node-x").label("zone", "zone2").label("pool", "x").obj(),
                NodeBuilder::new("node-z")
                    .label("zone", "zone3")
                    .taint("dedicated", "gpu", TaintEffect::NoSchedule)
                    .obj(),
            ]
        };
        let pods = || [foo_pods("node-a", 1), foo_pods("node-x", 1)].concat();
        let policy = |affinity, taints| TopologySpreadConstraint {
            node_affinity_policy: affinity,
            node_taints_policy: taints,
            ..foo_constraint(1, "zone")
        };
        use InclusionPolicy::{Honor, Ignore};
        let cases: Vec<(&str, Pod, Vec<Code>)> = vec![
            (
                "nodeAffinityPolicy Honor drops the zone the pod's node selector excludes",
                // Domains zone1 = 1, zone2 = 1 (zone3 is not eligible): min 1, skew 1.
                incoming().node_selector("pool", "x").spread(policy(Honor, Ignore)).obj(),
                vec![OK, OK, OK],
            ),
            (
                "nodeAffinityPolicy Ignore keeps it, so its empty zone sets the minimum to 0",
                incoming().node_selector("pool", "x").spread(policy(Ignore, Ignore)).obj(),
                vec![SKEW, SKEW, OK],
            ),
            (
                "nodeTaintsPolicy Honor drops the zone of an untolerated taint",
                incoming().spread(policy(Honor, Honor)).obj(),
                vec![OK, OK, OK],
            ),
            (
                "nodeTaintsPolicy Honor keeps a zone whose taint is tolerated",
                incoming()
                    .toleration(
                        "dedicated",
                        TolerationOperator::Equal,
                        "gpu",
                        Some(TaintEffect::NoSchedule),
                    )
                    .spread(policy(Honor, Honor))
                    .obj(),
                vec![SKEW, SKEW, OK],
            ),
            (
                "the default nodeTaintsPolicy Ignore keeps the tainted zone",
                incoming().spread(policy(Honor, Ignore)).obj(),
                vec![SKEW, SKEW, OK],
            ),
        ];
        let pl = PodTopologySpread::default();
        for (name, pod, want) in cases {
            assert_eq!(codes(&pl, &pod, &cluster(nodes(), pods())), want, "{name}");
        }
    }

    #[test]
    fn default_constraints_apply_only_to_pods_without_their_own() {
        let list = |c: TopologySpreadConstraint| {
            PodTopologySpread::new(PodTopologySpreadArgs {
                default_constraints: vec![TopologySpreadConstraint { label_selector: None, ..c }],
                defaulting_type: SpreadDefaultingType::List,
            })
        };
        let sel = LabelSelector::from_match_labels([("foo", "")]);
        let c = cluster(four_nodes(), spread(2, 1, 0, 3));
        let defaulted = PodBuilder::new("default", "p")
            .label("foo", "")
            .default_spread_selector(sel.clone())
            .obj();
        // A List default DoNotSchedule constraint on "node" with the pod's default selector.
        assert_eq!(
            codes(&list(foo_constraint(1, "node")), &defaulted, &c),
            vec![SKEW, SKEW, OK, SKEW]
        );
        // Without a default selector the defaults do not apply.
        let no_selector = PodBuilder::new("default", "p").label("foo", "").obj();
        let pl = list(foo_constraint(1, "node"));
        assert_eq!(pl.pre_filter(&no_selector, &c).expect_err("skip").code, Code::Skip);
        // A pod with its own (ScheduleAnyway-only) constraints ignores the defaults.
        let own = PodBuilder::new("default", "p")
            .label("foo", "")
            .default_spread_selector(sel.clone())
            .spread(spread_constraint(
                1,
                "zone",
                UnsatisfiableAction::ScheduleAnyway,
                &[("foo", "")],
            ))
            .obj();
        assert_eq!(pl.pre_filter(&own, &c).expect_err("skip").code, Code::Skip);
        // The system defaults are all ScheduleAnyway: nothing to filter.
        let system = PodTopologySpread::default();
        assert_eq!(system.pre_filter(&defaulted, &c).expect_err("skip").code, Code::Skip);
    }

    #[test]
    fn statuses_carry_upstream_reasons_and_codes() {
        let pl = PodTopologySpread::default();
        let pod = incoming().spread(foo_constraint(1, "node")).obj();
        let c = cluster(
            vec![
                NodeBuilder::new("node-a").label("node", "node-a").obj(),
                NodeBuilder::new("node-b").label("node", "node-b").obj(),
                NodeBuilder::new("node-c").obj(),
            ],
            foo_pods("node-a", 1),
        );
        let state = pl.pre_filter(&pod, &c).expect("applies");
        let skew = pl.filter(&state, &pod, &c.nodes[0]);
        assert_eq!(
            (skew.code, skew.reasons.clone()),
            (
                Code::Unschedulable,
                vec!["node(s) didn't match pod topology spread constraints".to_string()]
            )
        );
        let label = pl.filter(&state, &pod, &c.nodes[2]);
        assert_eq!(
            (label.code, label.reasons.clone()),
            (
                Code::UnschedulableAndUnresolvable,
                vec![
                    "node(s) didn't match pod topology spread constraints (missing required label)"
                        .to_string()
                ]
            )
        );
        assert!(pl.filter(&state, &pod, &c.nodes[1]).is_success());
    }

    /// Nodes and pods for the AddPod/RemovePod tests: two constraints (zone, node), a node
    /// excluded by the pod's node affinity, a pod in another namespace and a non-matching pod.
    fn extension_fixture() -> (Pod, Vec<Node>, Vec<Pod>) {
        let pod = incoming()
            .required_node_affinity(vec![node_term(vec![Requirement::new(
                "node",
                MatchOp::NotIn,
                &["node-y"],
            )])])
            .spread(foo_constraint(1, "zone"))
            .spread(foo_constraint(2, "node"))
            .obj();
        let mut pods = spread(2, 1, 0, 3);
        pods.push(PodBuilder::new("other", "o").label("foo", "").node("node-x").obj());
        pods.push(PodBuilder::new("default", "plain").node("node-b").obj());
        (pod, four_nodes(), pods)
    }

    #[test]
    fn remove_pod_equals_pre_filter_without_the_pod_and_add_pod_restores_it() {
        let (pod, nodes, pods) = extension_fixture();
        let pl = PodTopologySpread::default();
        let full = cluster(nodes.clone(), pods.clone());
        let full_state = pl.pre_filter(&pod, &full).expect("applies");
        for removed in &pods {
            let rest: Vec<Pod> = pods.iter().filter(|p| p.name != removed.name).cloned().collect();
            let want = pl.pre_filter(&pod, &cluster(nodes.clone(), rest)).expect("applies");
            let node_name = removed.node_name.as_deref().unwrap_or_default();
            let node = &full.nodes[full.node_index(node_name).expect("node exists")];
            let mut got = full_state.clone();
            got.remove_pod(removed, node);
            assert_eq!(got, want, "removing {}", removed.name);
            got.add_pod(removed, node);
            assert_eq!(got, full_state, "adding {} back", removed.name);
        }
    }

    #[test]
    fn add_pod_keeps_the_exact_global_minimum() {
        // Three empty nodes on "node": adding a matching pod to node-a then node-b leaves
        // node-c at 0, so the minimum stays 0 (upstream's two critical paths could report 1).
        let pod = incoming().spread(foo_constraint(1, "node")).obj();
        let c = cluster(
            ["node-a", "node-b", "node-c"]
                .iter()
                .map(|n| NodeBuilder::new(n).label("node", n).obj())
                .collect(),
            vec![],
        );
        let pl = PodTopologySpread::default();
        let mut state = pl.pre_filter(&pod, &c).expect("applies");
        let added = PodBuilder::new("default", "q").label("foo", "").obj();
        state.add_pod(&added, &c.nodes[0]);
        state.add_pod(&added, &c.nodes[1]);
        assert_eq!(state.min_match_num, vec![0]);
        // node-a: 1+1-0 = 2 > 1; node-c: 0+1-0 = 1.
        assert_eq!(pl.filter(&state, &pod, &c.nodes[0]).code, SKEW);
        assert!(pl.filter(&state, &pod, &c.nodes[2]).is_success());
        // Pods in another namespace, or on nodes missing a key, change nothing.
        let before = state.clone();
        state.add_pod(&PodBuilder::new("other", "o").label("foo", "").obj(), &c.nodes[2]);
        state.add_pod(&added, &NodeBuilder::new("node-z").obj());
        assert_eq!(state, before);
    }
}
