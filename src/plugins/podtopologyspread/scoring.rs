//! PodTopologySpread PreScore, Score and NormalizeScore for `whenUnsatisfiable:
//! ScheduleAnyway` constraints.
//!
//! Input: the incoming pod, the whole [`ClusterState`] and the feasible nodes; output: per
//! constraint and domain a count of matching pods and a per-constraint weight
//! ([`PreScoreState`]), a raw score per node (fewer matching pods around it is better) and the
//! scores normalized to 0–100 (reversed: the fewest matching pods get 100).
//! Upstream: `pkg/scheduler/framework/plugins/podtopologyspread/scoring.go` (v1.35).
//!
//! Arithmetic, step by step (the GPU must reproduce it bit for bit):
//! - **float64**: the weight of constraint `i` is `ln(size + 2)` computed with *Go's*
//!   `math.Log` algorithm ([`go_math_log`]; Rust's `f64::ln` differs in the last bit for e.g.
//!   `ln(3)`), where `size` is the number of the constraint's domains among the scored nodes
//!   (for `kubernetes.io/hostname`: the number of scored nodes not ignored).
//! - **float64**: a node's raw score is `Σ_i (cnt_i as f64 * weight_i + (maxSkew_i - 1) as
//!   f64)` over the constraints whose key the node has, summed in constraint order with no
//!   fused multiply-add, then rounded half away from zero to `i64` (Go's `math.Round`).
//!   `maxSkew - 1` is an `int32` subtraction before the conversion.
//! - **integer** (int64): NormalizeScore gives ignored nodes 0, everyone 100 when the
//!   highest raw score is 0, else `100 * (max + min - score) / max` (truncating division),
//!   with `min`/`max` over the nodes that are not ignored.

use std::collections::{BTreeMap, BTreeSet};

use super::common::{
    Constraint, IncomingPod, LABEL_HOSTNAME, count_pods_match_selector,
    node_labels_match_spread_constraints,
};
use super::{NAME, PodTopologySpread};
use crate::framework::{MAX_NODE_SCORE, Status};
use crate::model::{ClusterState, Node, Pod, UnsatisfiableAction};

/// Marks an ignored node's score during normalization (upstream `invalidScore`).
const INVALID_SCORE: i64 = -1;

/// What PreScore computes for one incoming pod (upstream `preScoreState`).
#[derive(Debug, Clone, PartialEq)]
pub struct PreScoreState {
    /// The pod's `ScheduleAnyway` constraints (or the defaults), in order.
    pub constraints: Vec<Constraint>,
    /// Names of scored nodes that lack some constraint's key while all keys are required
    /// (they score 0).
    pub ignored_nodes: BTreeSet<String>,
    /// Per scored node (aligned with `feasible`), whether it is ignored.
    pub feasible_ignored: Vec<bool>,
    /// Per constraint: domain of a scored node → matching pods in it, counted over every
    /// node of the cluster that passes the inclusion policies. Empty for hostname
    /// constraints, which count the scored node's own pods.
    pub topology_value_to_pod_counts: Vec<BTreeMap<String, i64>>,
    /// Per constraint: `ln(size + 2)` (Go's `math.Log`).
    pub topology_normalizing_weight: Vec<f64>,
}

impl PodTopologySpread {
    /// PreScore: builds the domains of the scored nodes, their weights and their counts of
    /// matching pods. `Err(Skip)` when the cluster has no node or the pod has no
    /// `ScheduleAnyway` constraint (own or default).
    ///
    /// Nodes must have every constraint's key unless the pod has no constraints of its own and
    /// the system defaults are in use (so nodes without a zone still get hostname spreading);
    /// a scored node lacking a required key is ignored. `feasible` indexes `cluster.nodes`.
    pub fn pre_score(
        &self,
        pod: &Pod,
        cluster: &ClusterState,
        feasible: &[usize],
    ) -> Result<PreScoreState, Status> {
        if cluster.nodes.is_empty() {
            return Err(Status::skip().with_plugin(NAME));
        }
        let require_all_topologies =
            !pod.topology_spread_constraints.is_empty() || !self.system_defaulted();
        let constraints = self.constraints(pod, UnsatisfiableAction::ScheduleAnyway);
        if constraints.is_empty() {
            return Err(Status::skip().with_plugin(NAME));
        }

        // initPreScoreState: domains of the scored nodes.
        let mut state = PreScoreState {
            ignored_nodes: BTreeSet::new(),
            feasible_ignored: Vec::with_capacity(feasible.len()),
            topology_value_to_pod_counts: vec![BTreeMap::new(); constraints.len()],
            topology_normalizing_weight: Vec::with_capacity(constraints.len()),
            constraints,
        };
        let mut topo_size = vec![0usize; state.constraints.len()];
        for &idx in feasible {
            let Some(node) = cluster.nodes.get(idx) else {
                // Not a node of the cluster: nothing to score.
                state.feasible_ignored.push(true);
                continue;
            };
            if require_all_topologies
                && !node_labels_match_spread_constraints(&node.labels, &state.constraints)
            {
                state.ignored_nodes.insert(node.name.clone());
                state.feasible_ignored.push(true);
                continue;
            }
            state.feasible_ignored.push(false);
            for (i, c) in state.constraints.iter().enumerate() {
                if c.topology_key == LABEL_HOSTNAME {
                    continue;
                }
                // A node lacking the key (allowed with system defaults) joins the "" domain.
                let value = node.labels.get(&c.topology_key).map_or("", String::as_str);
                if !state.topology_value_to_pod_counts[i].contains_key(value) {
                    state.topology_value_to_pod_counts[i].insert(value.to_string(), 0);
                    topo_size[i] += 1;
                }
            }
        }
        let scored = feasible.iter().filter(|&&i| i < cluster.nodes.len()).count();
        for (i, c) in state.constraints.iter().enumerate() {
            let size = if c.topology_key == LABEL_HOSTNAME {
                scored - state.ignored_nodes.len()
            } else {
                topo_size[i]
            };
            state.topology_normalizing_weight.push(topology_normalizing_weight(size));
        }

        // Count matching pods over every node of the cluster (memoized per node generation).
        let incoming = IncomingPod::new(pod);
        self.counts.fill(
            cluster,
            &state.constraints,
            &incoming,
            require_all_topologies,
            &mut state.topology_value_to_pod_counts,
        );
        Ok(state)
    }

    /// Score: 0 for an ignored node; otherwise the rounded float sum described in the module
    /// doc, over the constraints whose key the node has.
    pub fn score(&self, state: &PreScoreState, pod: &Pod, node: &Node) -> i64 {
        if state.ignored_nodes.contains(&node.name) {
            return 0;
        }
        let mut score = 0.0f64;
        for (i, c) in state.constraints.iter().enumerate() {
            let Some(value) = node.labels.get(&c.topology_key) else { continue };
            let cnt = if c.topology_key == LABEL_HOSTNAME {
                count_pods_match_selector(&node.pods, &c.selector, &pod.namespace)
            } else {
                state
                    .topology_value_to_pod_counts
                    .get(i)
                    .and_then(|m| m.get(value))
                    .copied()
                    .unwrap_or(0)
            };
            let weight = state.topology_normalizing_weight.get(i).copied().unwrap_or(0.0);
            score += score_for_count(cnt, c.max_skew, weight);
        }
        score.round() as i64
    }

    /// NormalizeScore: reverses and scales the raw scores to 0–100 with upstream's integer
    /// formula; ignored nodes get 0. `scores` is aligned with the `feasible` given to
    /// [`PodTopologySpread::pre_score`].
    pub fn normalize_score(&self, state: &PreScoreState, scores: &mut [i64]) {
        let mut min_score = i64::MAX;
        let mut max_score = 0i64;
        for (i, s) in scores.iter_mut().enumerate() {
            if state.feasible_ignored.get(i).copied().unwrap_or(false) {
                *s = INVALID_SCORE;
                continue;
            }
            min_score = min_score.min(*s);
            max_score = max_score.max(*s);
        }
        for s in scores.iter_mut() {
            if *s == INVALID_SCORE {
                *s = 0;
                continue;
            }
            if max_score == 0 {
                *s = MAX_NODE_SCORE;
                continue;
            }
            *s = MAX_NODE_SCORE
                .wrapping_mul(max_score.wrapping_add(min_score).wrapping_sub(*s))
                .wrapping_div(max_score);
        }
    }
}

/// Upstream `topologyNormalizingWeight`: `math.Log(float64(size + 2))`.
pub fn topology_normalizing_weight(size: usize) -> f64 {
    go_math_log((size as u64).saturating_add(2) as f64)
}

/// Upstream `scoreForCount`: `float64(cnt)*tpWeight + float64(maxSkew-1)` (no fused
/// multiply-add; `maxSkew - 1` in `int32`).
pub fn score_for_count(cnt: i64, max_skew: i32, tp_weight: f64) -> f64 {
    cnt as f64 * tp_weight + f64::from(max_skew.wrapping_sub(1))
}

/// Go's `math.Log` (the algorithm of `src/math/log.go`, which `log_amd64.s` implements with
/// the same operations in the same order), so results match kube-scheduler bit for bit —
/// `f64::ln` (the C library's `log`) differs in the last bit for about 1% of integers.
pub fn go_math_log(x: f64) -> f64 {
    // Upstream's constants, given by their bits (the decimal literals in log.go round to
    // exactly these doubles).
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000); // 6.93147180369123816490e-01
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76); // 1.90821492927058770002e-10
    const L1: f64 = f64::from_bits(0x3fe5_5555_5555_5593); // 6.666666666666735130e-01
    const L2: f64 = f64::from_bits(0x3fd9_9999_9997_fa04); // 3.999999999940941908e-01
    const L3: f64 = f64::from_bits(0x3fd2_4924_9422_9359); // 2.857142874366239149e-01
    const L4: f64 = f64::from_bits(0x3fcc_71c5_1d8e_78af); // 2.222219843214978396e-01
    const L5: f64 = f64::from_bits(0x3fc7_4664_96cb_03de); // 1.818357216161805012e-01
    const L6: f64 = f64::from_bits(0x3fc3_9a09_d078_c69f); // 1.531383769920937332e-01
    const L7: f64 = f64::from_bits(0x3fc2_f112_df3e_5244); // 1.479819860511658591e-01

    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return f64::NEG_INFINITY;
    }
    // Frexp: x = f1 * 2^ki with f1 in [0.5, 1).
    let (mut f1, mut ki) = go_frexp(x);
    if f1 < std::f64::consts::SQRT_2 / 2.0 {
        f1 *= 2.0;
        ki -= 1;
    }
    let f = f1 - 1.0;
    let k = ki as f64;
    let s = f / (2.0 + f);
    let s2 = s * s;
    let s4 = s2 * s2;
    let t1 = s2 * (L1 + s4 * (L3 + s4 * (L5 + s4 * L7)));
    let t2 = s4 * (L2 + s4 * (L4 + s4 * L6));
    let r = t1 + t2;
    let hfsq = 0.5 * f * f;
    k * LN2_HI - ((hfsq - (s * (hfsq + r) + k * LN2_LO)) - f)
}

/// Go's `math.Frexp` for finite non-zero `x`.
fn go_frexp(x: f64) -> (f64, i64) {
    let (mut x, mut exp) = (x, 0i64);
    if x.abs() < f64::MIN_POSITIVE {
        x *= (1u64 << 52) as f64;
        exp = -52;
    }
    let bits = x.to_bits();
    exp += ((bits >> 52) & 0x7ff) as i64 - 1022;
    let frac = f64::from_bits((bits & !(0x7ffu64 << 52)) | (1022u64 << 52));
    (frac, exp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::Code;
    use crate::framework::args::{PodTopologySpreadArgs, SpreadDefaultingType};
    use crate::model::testing::{NodeBuilder, PodBuilder, cluster, spread_constraint};
    use crate::model::{
        InclusionPolicy, LabelSelector, Labels, MatchOp, Requirement, TaintEffect,
        TopologySpreadConstraint,
    };

    const SA: UnsatisfiableAction = UnsatisfiableAction::ScheduleAnyway;

    #[test]
    fn go_math_log_matches_go_bit_for_bit() {
        // Bits printed by Go 1.19 on amd64: fmt.Printf("%x", math.Float64bits(math.Log(n))).
        let cases: &[(f64, u64)] = &[
            (2.0, 0x3fe62e42fefa39ef),
            (3.0, 0x3ff193ea7aad030a),
            (4.0, 0x3ff62e42fefa39ef),
            (5.0, 0x3ff9c041f7ed8d33),
            (6.0, 0x3ffcab0bfa2a2002),
            (7.0, 0x3fff2272ae325a57),
            (14.0, 0x40051cca16d7bba8),
            (48.0, 0x400ef8383c50bb74),
            (102.0, 0x40127ff8df87c7bd),
            (176.0, 0x4014ae935b3cb89e),
            (1002.0, 0x401ba3965d405f5f),
            (5002.0, 0x40210901f6dc84b9),
        ];
        for &(x, bits) in cases {
            assert_eq!(go_math_log(x).to_bits(), bits, "ln({x})");
        }
        // The most common weight, ln(1 + 2), is one where the C library's log differs.
        assert_ne!(3.0f64.ln().to_bits(), 0x3ff193ea7aad030a);
        assert_eq!(go_math_log(1.0), 0.0);
        assert_eq!(go_math_log(0.0), f64::NEG_INFINITY);
        assert!(go_math_log(-1.0).is_nan());
    }

    #[test]
    fn memoized_counts_follow_pods_added_and_removed_and_agree_with_a_fresh_count() {
        let zone = |name: &str, z: &str| {
            NodeBuilder::new(name).label("zone", z).label("kubernetes.io/hostname", name)
        };
        let mut state = cluster(
            vec![
                zone("a1", "a").obj(),
                zone("a2", "a").obj(),
                zone("b1", "b").obj(),
                zone("c1", "c").taint("t", "v", TaintEffect::NoSchedule).obj(),
                // Lacks the zone key: never counted.
                NodeBuilder::new("x").label("kubernetes.io/hostname", "x").obj(),
            ],
            vec![PodBuilder::new("default", "w0").label("app", "web").node("a1").obj()],
        );
        let spread = |policy: InclusionPolicy| {
            let mut c = spread_constraint(1, "zone", SA, &[("app", "web")]);
            c.node_taints_policy = policy;
            c
        };
        let incoming = |policy| {
            PodBuilder::new("default", "in").label("app", "web").spread(spread(policy)).obj()
        };
        let web = |name: &str| {
            std::sync::Arc::new(PodBuilder::new("default", name).label("app", "web").obj())
        };
        let warmed = PodTopologySpread::new(PodTopologySpreadArgs::default());
        let all: Vec<usize> = (0..state.nodes.len()).collect();
        // (step, change: node, add a pod named or remove it, expected counts a/b/c with taints
        // ignored and honoured)
        type Step = (&'static str, usize, &'static str, bool, [i64; 3], [i64; 3]);
        let steps: [Step; 4] = [
            ("a pod added in zone b", 2, "w1", true, [1, 1, 0], [1, 1, 0]),
            ("a pod added on the tainted node", 3, "w2", true, [1, 1, 1], [1, 1, 0]),
            ("a second pod in zone a", 1, "w3", true, [2, 1, 1], [2, 1, 0]),
            ("the first pod removed", 0, "w0", false, [1, 1, 1], [1, 1, 0]),
        ];
        for (step, node, name, add, ignore, honour) in steps {
            // Warm the cache on the state before the change.
            for policy in [InclusionPolicy::Ignore, InclusionPolicy::Honor] {
                warmed.pre_score(&incoming(policy), &state, &all).expect("counts");
            }
            if add {
                state.nodes[node].add_pod(web(name));
            } else {
                state.nodes[node].remove_pod("default", name).expect("the pod is there");
            }
            for (policy, want) in
                [(InclusionPolicy::Ignore, ignore), (InclusionPolicy::Honor, honour)]
            {
                let pod = incoming(policy);
                let got = warmed.pre_score(&pod, &state, &all).expect("counts");
                let fresh = PodTopologySpread::new(PodTopologySpreadArgs::default())
                    .pre_score(&pod, &state, &all)
                    .expect("counts");
                assert_eq!(got, fresh, "{step} ({policy:?}): memoized and fresh counts differ");
                let counts = &got.topology_value_to_pod_counts[0];
                let zones = [counts["a"], counts["b"], counts["c"]];
                assert_eq!(zones, want, "{step} ({policy:?})");
            }
        }
    }

    /// A ScheduleAnyway constraint selecting pods with label `foo`.
    fn foo(max_skew: i32, key: &str) -> TopologySpreadConstraint {
        spread_constraint(max_skew, key, SA, &[("foo", "")])
    }

    fn bar(max_skew: i32, key: &str) -> TopologySpreadConstraint {
        spread_constraint(max_skew, key, SA, &[("bar", "")])
    }

    fn incoming() -> PodBuilder {
        PodBuilder::new("default", "p").label("foo", "")
    }

    /// A node with exactly these labels.
    fn node(name: &str, labels: &[(&str, &str)]) -> Node {
        let mut n = NodeBuilder::new(name).obj();
        n.labels =
            labels.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect::<Labels>();
        n
    }

    fn host(name: &str) -> Node {
        node(name, &[(LABEL_HOSTNAME, name)])
    }

    fn zone_host(name: &str, zone: &str) -> Node {
        node(name, &[("zone", zone), (LABEL_HOSTNAME, name)])
    }

    /// `count` pods on `node` with the given labels.
    fn pods_on(node: &str, count: usize, labels: &[(&str, &str)]) -> Vec<Pod> {
        (0..count)
            .map(|i| {
                let mut b = PodBuilder::new("default", &format!("{node}-{}-{i}", labels.len()));
                for (k, v) in labels {
                    b = b.label(k, v);
                }
                b.node(node).obj()
            })
            .collect()
    }

    fn foo_on(node: &str, count: usize) -> Vec<Pod> {
        pods_on(node, count, &[("foo", "")])
    }

    /// A scoring case: name, incoming pod, nodes, names of the feasible nodes, existing pods,
    /// and the normalized scores of the feasible nodes (`None` when PreScore skips).
    type Case = (&'static str, Pod, Vec<Node>, Vec<&'static str>, Vec<Pod>, Option<Vec<i64>>);

    /// Runs PreScore over the nodes named in `feasible`, Score and NormalizeScore; `None` when
    /// PreScore skips.
    fn run(
        pl: &PodTopologySpread,
        pod: &Pod,
        nodes: Vec<Node>,
        feasible: &[&str],
        pods: Vec<Pod>,
    ) -> Option<Vec<i64>> {
        let c = cluster(nodes, pods);
        let idx: Vec<usize> =
            feasible.iter().map(|n| c.node_index(n).expect("feasible node exists")).collect();
        match pl.pre_score(pod, &c, &idx) {
            Err(s) => {
                assert_eq!(s.code, Code::Skip, "pre_score failed: {s}");
                None
            }
            Ok(state) => {
                let mut scores: Vec<i64> =
                    idx.iter().map(|&i| pl.score(&state, pod, &c.nodes[i])).collect();
                pl.normalize_score(&state, &mut scores);
                Some(scores)
            }
        }
    }

    #[test]
    fn scores_follow_upstream() {
        let pl = PodTopologySpread::default();
        let abcd = || vec![host("node-a"), host("node-b"), host("node-c"), host("node-d")];
        let spread_2103 =
            || [foo_on("node-a", 2), foo_on("node-b", 1), foo_on("node-d", 3)].concat();
        let spread_4321 = || {
            [foo_on("node-a", 4), foo_on("node-b", 3), foo_on("node-c", 2), foo_on("node-d", 1)]
                .concat()
        };
        let ab_x_y = || {
            [foo_on("node-a", 4), foo_on("node-b", 2), foo_on("node-x", 1), foo_on("node-y", 3)]
                .concat()
        };
        let zones4 = || {
            vec![
                zone_host("node-a", "zone1"),
                zone_host("node-b", "zone1"),
                zone_host("node-x", "zone2"),
                zone_host("node-y", "zone2"),
            ]
        };
        // Zone foo pods 2/2/1/1, hostname bar pods 0/1/0/1 (upstream's "different
        // labelSelectors" table).
        let mixed = || {
            [
                pods_on("node-a", 1, &[("foo", "")]),
                pods_on("node-b", 1, &[("foo", ""), ("bar", "")]),
                pods_on("node-y", 1, &[("foo", "")]),
                pods_on("node-y", 1, &[("bar", "")]),
            ]
            .concat()
        };
        let zone_host_constraints =
            || incoming().label("bar", "").spread(foo(1, "zone")).spread(bar(1, LABEL_HOSTNAME));
        // (case, pod, nodes, feasible, pods, expected)
        let cases: Vec<Case> = vec![
            (
                "one constraint on hostname and no existing pods scores every node 100",
                incoming().spread(foo(1, LABEL_HOSTNAME)).obj(),
                vec![host("node-a"), host("node-b")],
                vec!["node-a", "node-b"],
                vec![],
                Some(vec![100, 100]),
            ),
            (
                "a single candidate node scores 100",
                incoming().spread(foo(1, LABEL_HOSTNAME)).obj(),
                vec![host("node-a"), host("node-b")],
                vec!["node-a"],
                [foo_on("node-a", 2), foo_on("node-b", 1)].concat(),
                Some(vec![100]),
            ),
            (
                "nodes with the same number of matching pods score the same",
                incoming().spread(foo(1, LABEL_HOSTNAME)).obj(),
                vec![host("node-a"), host("node-b")],
                vec!["node-a", "node-b"],
                [foo_on("node-a", 1), foo_on("node-b", 1)].concat(),
                Some(vec![100, 100]),
            ),
            (
                "matching pods spread 2/1/0/3 over four candidate nodes",
                // w = ln(4+2) = 1.7918; raw = round(cnt*w) = 4, 2, 0, 5 (5.375);
                // 100*(5+0-s)/5 = 20, 60, 100, 0.
                incoming().spread(foo(1, LABEL_HOSTNAME)).obj(),
                abcd(),
                vec!["node-a", "node-b", "node-c", "node-d"],
                spread_2103(),
                Some(vec![20, 60, 100, 0]),
            ),
            (
                "a nil selector counts nothing, so every node scores 100",
                incoming()
                    .spread(TopologySpreadConstraint {
                        label_selector: None,
                        ..foo(1, LABEL_HOSTNAME)
                    })
                    .obj(),
                abcd(),
                vec!["node-a", "node-b", "node-c", "node-d"],
                spread_2103(),
                Some(vec![100, 100, 100, 100]),
            ),
            (
                "maxSkew 2 waters the differences down",
                // raw = round(cnt*1.7918 + 1) = 5, 3, 1, 6; 100*(7-s)/6 = 33, 66, 100, 16.
                incoming().spread(foo(2, LABEL_HOSTNAME)).obj(),
                abcd(),
                vec!["node-a", "node-b", "node-c", "node-d"],
                spread_2103(),
                Some(vec![33, 66, 100, 16]),
            ),
            (
                "maxSkew 3 with pods spread 4/3/2/1",
                // raw = round(cnt*1.7918 + 2) = 9, 7, 6, 4; 100*(13-s)/9 = 44, 66, 77, 100.
                incoming().spread(foo(3, LABEL_HOSTNAME)).obj(),
                abcd(),
                vec!["node-a", "node-b", "node-c", "node-d"],
                spread_4321(),
                Some(vec![44, 66, 77, 100]),
            ),
            (
                "system defaults spread by hostname when nodes have no zone",
                // Hostname (maxSkew 3) as above; the zone constraint's only domain is "",
                // which no node has as a label, so it adds nothing.
                PodBuilder::new("default", "p")
                    .label("foo", "")
                    .default_spread_selector(LabelSelector::from_match_labels([("foo", "")]))
                    .obj(),
                abcd(),
                vec!["node-a", "node-b", "node-c", "node-d"],
                spread_4321(),
                Some(vec![44, 66, 77, 100]),
            ),
            (
                "three of four nodes are candidates (4/2/1/~3~)",
                // w = ln(3+2) = 1.6094; raw 6 (6.44), 3 (3.22), 2 (1.61); min 2, max 6:
                // 100*(8-s)/6 = 33, 83, 100.
                incoming().spread(foo(1, LABEL_HOSTNAME)).obj(),
                vec![host("node-a"), host("node-b"), host("node-x"), host("node-y")],
                vec!["node-a", "node-b", "node-x"],
                ab_x_y(),
                Some(vec![33, 83, 100]),
            ),
            (
                "a candidate without the hostname label is ignored and scores 0",
                // node-b is ignored: w = ln(2+2) = 1.3863; raw 6 (5.55), 1 (1.39); min 1,
                // max 6: 100*(7-6)/6 = 16, 100*(7-1)/6 = 100.
                incoming().spread(foo(1, LABEL_HOSTNAME)).obj(),
                vec![
                    host("node-a"),
                    node("node-b", &[("n", "node-b")]),
                    host("node-x"),
                    host("node-y"),
                ],
                vec!["node-a", "node-b", "node-x"],
                ab_x_y(),
                Some(vec![16, 0, 100]),
            ),
            (
                "a zone constraint counts pods on non-candidate nodes of the candidates' zones",
                // zone1 = 6, zone2 = 1 + 3 (node-y is not a candidate but counts);
                // w = ln(2+2); raw 8 (8.32), 8, 6 (5.55); 100*(14-s)/8 = 75, 75, 100.
                incoming().spread(foo(1, "zone")).obj(),
                zones4(),
                vec!["node-a", "node-b", "node-x"],
                ab_x_y(),
                Some(vec![75, 75, 100]),
            ),
            (
                "zone and hostname constraints with two of four candidates",
                // Pods 2/1/2/4: zone1 3, zone2 6; both weights ln(4) = 1.3863.
                // node-a: 3w + 2w = 6.93 -> 7; node-x: 6w + 2w = 11.09 -> 11;
                // 100*(18-7)/11 = 100, 100*(18-11)/11 = 63.
                incoming().spread(foo(1, "zone")).spread(foo(1, LABEL_HOSTNAME)).obj(),
                zones4(),
                vec!["node-a", "node-x"],
                [
                    foo_on("node-a", 2),
                    foo_on("node-b", 1),
                    foo_on("node-x", 2),
                    foo_on("node-y", 4),
                ]
                .concat(),
                Some(vec![100, 63]),
            ),
            (
                "zone and hostname constraints with different selectors",
                // Zone (foo) 2/1 with w = ln(2+2) = 1.3863; hostname (bar) 0/1/0/1 with
                // w = ln(4+2) = 1.7918. raw: a 2.77 -> 3, b 2.77 + 1.79 = 4.56 -> 5,
                // x 1.39 -> 1, y 1.39 + 1.79 = 3.18 -> 3; min 1, max 5: 100*(6-s)/5.
                zone_host_constraints().obj(),
                zones4(),
                vec!["node-a", "node-b", "node-x", "node-y"],
                mixed(),
                Some(vec![60, 20, 100, 60]),
            ),
            (
                "zone and hostname constraints with different selectors and empty nodes",
                // Zone (foo) 0/2; hostname (bar) 0/1/0/1: raw 0, 1.79 -> 2, 2.77 -> 3,
                // 2.77 + 1.79 = 4.56 -> 5; 100*(5-s)/5 = 100, 60, 40, 0.
                zone_host_constraints().obj(),
                zones4(),
                vec!["node-a", "node-b", "node-x", "node-y"],
                [
                    pods_on("node-b", 1, &[("bar", "")]),
                    pods_on("node-x", 1, &[("foo", "")]),
                    pods_on("node-y", 1, &[("foo", ""), ("bar", "")]),
                ]
                .concat(),
                Some(vec![100, 60, 40, 0]),
            ),
            (
                "zone and hostname constraints with different selectors and three candidates",
                // Zone weight ln(2+2), hostname weight ln(3+2) = 1.61: a 2.77 -> 3,
                // b 2.77 + 1.61 = 4.38 -> 4, x 1.39 -> 1; 100*(5-s)/4 = 50, 25, 100.
                zone_host_constraints().obj(),
                zones4(),
                vec!["node-a", "node-b", "node-x"],
                mixed(),
                Some(vec![50, 25, 100]),
            ),
            (
                "existing pods in a different namespace do not count",
                // a 1, b 2: w = ln(4); raw 1 (1.39), 3 (2.77); 100*(4-s)/3 = 100, 33.
                incoming().spread(foo(1, LABEL_HOSTNAME)).obj(),
                vec![host("node-a"), host("node-b")],
                vec!["node-a", "node-b"],
                [
                    vec![PodBuilder::new("ns1", "a1").label("foo", "").node("node-a").obj()],
                    foo_on("node-a", 1),
                    foo_on("node-b", 2),
                ]
                .concat(),
                Some(vec![100, 33]),
            ),
            (
                "terminating pods are not counted",
                incoming().spread(foo(1, LABEL_HOSTNAME)).obj(),
                vec![host("node-a"), host("node-b")],
                vec!["node-a", "node-b"],
                vec![
                    PodBuilder::new("default", "a")
                        .label("foo", "")
                        .node("node-a")
                        .terminating()
                        .obj(),
                    PodBuilder::new("default", "b").label("foo", "").node("node-b").obj(),
                ],
                Some(vec![100, 0]),
            ),
            (
                "minDomains has no effect on ScheduleAnyway",
                // Key "node" (not hostname): 3 domains, w = ln(5) = 1.61; counts 2/2/1 with
                // maxSkew 2: 4.22 -> 4, 4, 2.61 -> 3; 100*(7-s)/4 = 75, 75, 100.
                incoming()
                    .spread(TopologySpreadConstraint { min_domains: Some(10), ..foo(2, "node") })
                    .obj(),
                vec![
                    node("node-a", &[("node", "node-a")]),
                    node("node-b", &[("node", "node-b")]),
                    node("node-c", &[("node", "node-c")]),
                ],
                vec!["node-a", "node-b", "node-c"],
                [foo_on("node-a", 2), foo_on("node-b", 2), foo_on("node-c", 1)].concat(),
                Some(vec![75, 75, 100]),
            ),
        ];
        for (name, pod, nodes, feasible, pods, want) in cases {
            assert_eq!(run(&pl, &pod, nodes, &feasible, pods), want, "{name}");
        }
    }

    #[test]
    fn node_inclusion_policies_decide_which_pods_count() {
        // Key "node": node-a and node-b carry foo="" (a node label), node-c does not and, in
        // the taint cases, is tainted. Pods 2/1/1.
        let nodes = |taint: bool| {
            let mut c = node("node-c", &[("node", "node-c")]);
            if taint {
                c.taints.push(crate::model::Taint {
                    key: "node.kubernetes.io/unschedulable".into(),
                    value: String::new(),
                    effect: TaintEffect::NoSchedule,
                });
            }
            vec![
                node("node-a", &[("node", "node-a"), ("foo", "")]),
                node("node-b", &[("node", "node-b"), ("foo", "")]),
                c,
            ]
        };
        let pods = || [foo_on("node-a", 2), foo_on("node-b", 1), foo_on("node-c", 1)].concat();
        let with_policy = |affinity, taints| TopologySpreadConstraint {
            node_affinity_policy: affinity,
            node_taints_policy: taints,
            ..foo(1, "node")
        };
        let nf = || incoming().node_selector("foo", "");
        let na = || {
            incoming().required_node_affinity(vec![crate::model::testing::node_term(vec![
                Requirement::new("foo", MatchOp::In, &[""]),
            ])])
        };
        use InclusionPolicy::{Honor, Ignore};
        // w = ln(3+2) = 1.61 in every case.
        let cases: Vec<(&str, Pod, bool, Vec<i64>)> = vec![
            (
                "nodeAffinityPolicy Honor with a node selector does not count node-c's pods",
                // raw 3 (3.22), 2 (1.61), 0; 100*(3-s)/3 = 0, 33, 100.
                nf().spread(with_policy(Honor, Ignore)).obj(),
                false,
                vec![0, 33, 100],
            ),
            (
                "nodeAffinityPolicy Ignore with a node selector counts node-c's pods",
                // raw 3, 2, 2; 100*(5-s)/3 = 66, 100, 100.
                nf().spread(with_policy(Ignore, Ignore)).obj(),
                false,
                vec![66, 100, 100],
            ),
            (
                "nodeAffinityPolicy Honor with node affinity",
                na().spread(with_policy(Honor, Ignore)).obj(),
                false,
                vec![0, 33, 100],
            ),
            (
                "nodeAffinityPolicy Ignore with node affinity",
                na().spread(with_policy(Ignore, Ignore)).obj(),
                false,
                vec![66, 100, 100],
            ),
            (
                "nodeTaintsPolicy Honor does not count the tainted node's pods",
                incoming().spread(with_policy(Honor, Honor)).obj(),
                true,
                vec![0, 33, 100],
            ),
            (
                "nodeTaintsPolicy Ignore counts the tainted node's pods",
                incoming().spread(with_policy(Honor, Ignore)).obj(),
                true,
                vec![66, 100, 100],
            ),
        ];
        let pl = PodTopologySpread::default();
        for (name, pod, taint, want) in cases {
            let got = run(&pl, &pod, nodes(taint), &["node-a", "node-b", "node-c"], pods());
            assert_eq!(got, Some(want), "{name}");
        }
    }

    #[test]
    fn pre_score_skips_as_upstream() {
        let pl = PodTopologySpread::default();
        let nodes = || vec![host("node-a")];
        // No ScheduleAnyway constraint of its own, no default selector.
        assert_eq!(run(&pl, &incoming().obj(), nodes(), &["node-a"], vec![]), None);
        // Only DoNotSchedule constraints of its own: the defaults do not apply.
        let dns = incoming()
            .default_spread_selector(LabelSelector::from_match_labels([("foo", "")]))
            .spread(spread_constraint(
                1,
                "zone",
                UnsatisfiableAction::DoNotSchedule,
                &[("foo", "")],
            ))
            .obj();
        assert_eq!(run(&pl, &dns, nodes(), &["node-a"], vec![]), None);
        // An empty cluster.
        let c = ClusterState::default();
        let pod = incoming().spread(foo(1, LABEL_HOSTNAME)).obj();
        assert_eq!(pl.pre_score(&pod, &c, &[]).expect_err("skip").code, Code::Skip);
        // List defaulting with no default constraints.
        let list = PodTopologySpread::new(PodTopologySpreadArgs {
            default_constraints: Vec::new(),
            defaulting_type: SpreadDefaultingType::List,
        });
        let defaulted = incoming()
            .default_spread_selector(LabelSelector::from_match_labels([("foo", "")]))
            .obj();
        assert_eq!(run(&list, &defaulted, nodes(), &["node-a"], vec![]), None);
    }

    #[test]
    fn list_defaults_require_every_topology_key() {
        // The same zone + hostname defaults as the system's, but given as a List: nodes
        // without a zone are now ignored (they score 0), unlike with the system defaults.
        let defaults: Vec<TopologySpreadConstraint> = super::super::system_default_constraints();
        let list = PodTopologySpread::new(PodTopologySpreadArgs {
            default_constraints: defaults,
            defaulting_type: SpreadDefaultingType::List,
        });
        let system = PodTopologySpread::default();
        let pod = PodBuilder::new("default", "p")
            .label("foo", "")
            .default_spread_selector(LabelSelector::from_match_labels([("foo", "")]))
            .obj();
        let nodes = || {
            vec![
                node(
                    "node-a",
                    &[(LABEL_HOSTNAME, "node-a"), (super::super::LABEL_TOPOLOGY_ZONE, "z1")],
                ),
                node("node-b", &[(LABEL_HOSTNAME, "node-b")]),
            ]
        };
        let pods = || [foo_on("node-a", 1), foo_on("node-b", 3)].concat();
        // List: node-b ignored. node-a: hostname w = ln(1+2): 1*1.0986 + 2 = 3.10; zone w =
        // ln(1+2): 1*1.0986 + 4 = 5.10; total 8.19 -> 8; alone, 100*(8+8-8)/8 = 100.
        assert_eq!(run(&list, &pod, nodes(), &["node-a", "node-b"], pods()), Some(vec![100, 0]));
        // System: nothing ignored. Hostname w = ln(4): node-a 1.39 + 2, node-b 4.16 + 2.
        // Zone domains: "z1" and "" (node-b), w = ln(4); node-a adds 1.39 + 4, node-b has no
        // zone label and adds nothing. node-a 3.39 + 5.39 = 8.77 -> 9; node-b 6.16 -> 6;
        // 100*(15-s)/9 = 66, 100.
        assert_eq!(run(&system, &pod, nodes(), &["node-a", "node-b"], pods()), Some(vec![66, 100]));
    }

    #[test]
    fn normalize_reverses_with_integer_arithmetic_and_zeroes_ignored_nodes() {
        let pl = PodTopologySpread::default();
        let state = PreScoreState {
            constraints: Vec::new(),
            ignored_nodes: BTreeSet::from(["ignored".to_string()]),
            feasible_ignored: vec![false, true, false, false],
            topology_value_to_pod_counts: Vec::new(),
            topology_normalizing_weight: Vec::new(),
        };
        // min 2, max 9 over the non-ignored: 100*(11-s)/9 = 100, 0, 22 (200/9), 77 (700/9).
        let mut scores = vec![2, 40, 9, 4];
        pl.normalize_score(&state, &mut scores);
        assert_eq!(scores, vec![100, 0, 22, 77]);
        // All zero: every scored node gets 100.
        let mut scores = vec![0, 0, 0, 0];
        pl.normalize_score(&state, &mut scores);
        assert_eq!(scores, vec![100, 0, 100, 100]);
    }

    #[test]
    fn score_rounds_half_away_from_zero_like_go() {
        // 0.5 rounds to 1 and 2.5 to 3 (Go's math.Round), not to even.
        assert_eq!(score_for_count(1, 1, 0.5).round() as i64, 1);
        assert_eq!(score_for_count(1, 3, 0.5).round() as i64, 3);
        assert_eq!(score_for_count(3, 1, topology_normalizing_weight(4)), 5.375278407684165);
    }
}
