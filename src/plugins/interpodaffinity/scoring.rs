//! InterPodAffinity PreScore, Score and NormalizeScore.
//!
//! Input: the incoming pod, the whole [`ClusterState`] and the feasible nodes; output: per
//! topology pair a summed weight ([`PreScoreState`]), a raw score per node (the sum of the
//! weights of the node's pairs, negative for anti-affinity) and scores normalized to 0–100.
//! Upstream: `pkg/scheduler/framework/plugins/interpodaffinity/scoring.go` (v1.35).
//!
//! Arithmetic: weights are `int32` products (`weight * ±1`) summed into `int64`; the only float
//! step is NormalizeScore's `int64(100.0 * (float64(score - min) / float64(max - min)))`, done
//! here in `f64` with the same operation order (divide, then multiply, then truncate toward
//! zero) — it is *not* equal to the integer `100 * (score - min) / (max - min)` (e.g. 29/100
//! gives 28).

use std::collections::BTreeMap;

use super::{
    InterPodAffinity, NAME, WeightedAffinityTerm, existing_term_matches, incoming_weighted_terms,
};
use crate::framework::{MAX_NODE_SCORE, Status};
use crate::model::{ClusterState, Labels, Node, Pod, PodAffinityTerm};

/// What PreScore computes for one incoming pod (upstream `preScoreState.topologyScore`):
/// `topologyKey` → value → summed weight of every matching term.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PreScoreState {
    /// Summed weights per topology pair. An entry exists for every pair some term matched,
    /// even when its weights cancel out to 0.
    pub topology_score: BTreeMap<String, BTreeMap<String, i64>>,
}

/// Summed weights per topology pair with how many term matches touched each pair (a pair
/// exists while some match touched it, even at weight 0): one node's part of PreScore's sums,
/// or the sums over the cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ScoreCounts(BTreeMap<String, BTreeMap<String, (i64, i64)>>);

impl ScoreCounts {
    /// Adds `weight * multiplier` (`int32` arithmetic, as upstream) to the node's pair for
    /// `key` if the node has the key (upstream `scoreMap.processTerm` after the match).
    fn add(&mut self, node_labels: &Labels, key: &str, weight: i32, multiplier: i32) -> bool {
        let Some(value) = node_labels.get(key) else { return false };
        let pair =
            self.0.entry(key.to_string()).or_default().entry(value.clone()).or_insert((0, 0));
        pair.0 = pair.0.wrapping_add(i64::from(weight.wrapping_mul(multiplier)));
        pair.1 += 1;
        true
    }

    /// The summed weights (upstream `topologyScore`).
    fn topology_score(&self) -> BTreeMap<String, BTreeMap<String, i64>> {
        self.0
            .iter()
            .map(|(k, values)| {
                (k.clone(), values.iter().map(|(v, &(w, _))| (v.clone(), w)).collect())
            })
            .collect()
    }
}

impl super::super::node_memo::Totals<ScoreCounts> for ScoreCounts {
    fn apply(&mut self, node: &ScoreCounts, sign: i64) {
        for (key, values) in &node.0 {
            for (value, &(weight, touches)) in values {
                let inner = match self.0.get_mut(key) {
                    Some(inner) => inner,
                    None => self.0.entry(key.clone()).or_default(),
                };
                let pair = match inner.get_mut(value) {
                    Some(pair) => pair,
                    None => inner.entry(value.clone()).or_insert((0, 0)),
                };
                pair.0 = pair.0.wrapping_add(weight.wrapping_mul(sign));
                pair.1 += touches * sign;
                if pair.1 == 0 {
                    inner.remove(value);
                    if inner.is_empty() {
                        self.0.remove(key);
                    }
                }
            }
        }
    }
}

/// What PreScore's sums depend on besides the cluster and the plugin's arguments: the incoming
/// pod's namespace, labels and namespace labels, and its processed preferred terms.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ScoreKey {
    namespace: String,
    labels: Labels,
    namespace_labels: Labels,
    preferred_affinity: Vec<WeightedAffinityTerm>,
    preferred_anti_affinity: Vec<WeightedAffinityTerm>,
}

/// The memo of PreScore's sums ([`super::super::node_memo`]).
pub(crate) type ScoreMemo = super::super::node_memo::NodeMemo<ScoreKey, ScoreCounts, ScoreCounts>;

/// The incoming pod's processed preferred terms and namespace labels.
struct Incoming<'a> {
    pod: &'a Pod,
    preferred_affinity: &'a [WeightedAffinityTerm],
    preferred_anti_affinity: &'a [WeightedAffinityTerm],
    namespace_labels: &'a Labels,
}

impl InterPodAffinity {
    /// PreScore: sums, per topology pair, the weights of the incoming pod's preferred terms
    /// matched by existing pods, and of existing pods' terms matching the incoming pod
    /// (required affinity at `hard_pod_affinity_weight`, preferred affinity and anti-affinity
    /// at their weights). `Err(Skip)` when `ignore_preferred_terms_of_existing_pods` is set and
    /// the pod has no preferred terms, or when no term matched anywhere.
    ///
    /// Upstream scores all nodes of the cluster regardless of `feasible`; so does this.
    pub fn pre_score(
        &self,
        pod: &Pod,
        cluster: &ClusterState,
        _feasible: &[usize],
    ) -> Result<PreScoreState, Status> {
        let has_constraints =
            !pod.pod_affinity.preferred.is_empty() || !pod.pod_anti_affinity.preferred.is_empty();
        // The flag only skips pods without preferred terms of their own; for the others,
        // existing pods' preferred terms still count (upstream behaviour).
        if self.args.ignore_preferred_terms_of_existing_pods && !has_constraints {
            return Err(Status::skip().with_plugin(NAME));
        }
        // Without preferred terms of its own, only existing pods with affinity terms count; with
        // none anywhere nothing is touched and the sums below would be empty (a skip), so skip
        // at once instead of building the key and visiting every node.
        if !has_constraints && cluster.nodes.iter().all(|n| n.pods_with_affinity == 0) {
            return Err(Status::skip().with_plugin(NAME));
        }
        let key = ScoreKey {
            namespace: pod.namespace.clone(),
            labels: pod.labels.clone(),
            namespace_labels: cluster.namespace_labels(&pod.namespace).clone(),
            preferred_affinity: incoming_weighted_terms(pod, &pod.pod_affinity.preferred, cluster),
            preferred_anti_affinity: incoming_weighted_terms(
                pod,
                &pod.pod_anti_affinity.preferred,
                cluster,
            ),
        };
        let incoming = Incoming {
            pod,
            preferred_affinity: &key.preferred_affinity,
            preferred_anti_affinity: &key.preferred_anti_affinity,
            namespace_labels: &key.namespace_labels,
        };
        // Sums of per-node parts kept across cycles: only nodes whose pods changed since the
        // last pod with the same key are visited again.
        let topology_score = self.score_memo.with(
            &key,
            cluster,
            |node| self.node_scores(&incoming, has_constraints, node),
            ScoreCounts::topology_score,
        );
        // Every pair in the sums was touched by some term: none means nothing matched.
        if topology_score.is_empty() {
            return Err(Status::skip().with_plugin(NAME));
        }
        Ok(PreScoreState { topology_score })
    }

    /// [`InterPodAffinity::pre_score`] computed afresh over every pod of the cluster (the
    /// specification the memoized sums are tested against).
    #[cfg(test)]
    pub(crate) fn pre_score_fresh(
        &self,
        pod: &Pod,
        cluster: &ClusterState,
    ) -> Result<PreScoreState, Status> {
        let has_constraints =
            !pod.pod_affinity.preferred.is_empty() || !pod.pod_anti_affinity.preferred.is_empty();
        if self.args.ignore_preferred_terms_of_existing_pods && !has_constraints {
            return Err(Status::skip().with_plugin(NAME));
        }
        let preferred_affinity = incoming_weighted_terms(pod, &pod.pod_affinity.preferred, cluster);
        let preferred_anti_affinity =
            incoming_weighted_terms(pod, &pod.pod_anti_affinity.preferred, cluster);
        let incoming = Incoming {
            pod,
            preferred_affinity: &preferred_affinity,
            preferred_anti_affinity: &preferred_anti_affinity,
            namespace_labels: cluster.namespace_labels(&pod.namespace),
        };
        let mut counts = ScoreCounts::default();
        let mut any_pair = false;
        for node in &cluster.nodes {
            if node.labels.is_empty() {
                continue;
            }
            for existing in &node.pods {
                any_pair |= self.process_existing_pod(&mut counts, &incoming, existing, node);
            }
        }
        if !any_pair {
            return Err(Status::skip().with_plugin(NAME));
        }
        Ok(PreScoreState { topology_score: counts.topology_score() })
    }

    /// One node's part of PreScore's sums (upstream's per-node step of `PreScore`).
    fn node_scores(
        &self,
        incoming: &Incoming<'_>,
        has_constraints: bool,
        node: &Node,
    ) -> ScoreCounts {
        let mut counts = ScoreCounts::default();
        // processExistingPod returns at once for a node without labels.
        if node.labels.is_empty() || (!has_constraints && node.pods_with_affinity == 0) {
            return counts;
        }
        for existing in &node.pods {
            // Without preferred terms of its own, upstream only visits pods with affinity;
            // the others could contribute nothing anyway.
            if !has_constraints && !existing.has_pod_affinity_terms() {
                continue;
            }
            self.process_existing_pod(&mut counts, incoming, existing, node);
        }
        counts
    }

    /// Upstream `processExistingPod`; returns whether any pair was touched.
    fn process_existing_pod(
        &self,
        state: &mut ScoreCounts,
        incoming: &Incoming<'_>,
        existing: &Pod,
        node: &Node,
    ) -> bool {
        static NO_LABELS: Labels = Labels::new();
        let labels = &node.labels;
        let mut touched = false;
        // The incoming pod's preferred terms, matched by the existing pod (merged namespaces,
        // hence no namespace labels).
        for t in incoming.preferred_affinity {
            if t.term.matches(existing, &NO_LABELS) {
                touched |= state.add(labels, &t.term.topology_key, t.weight, 1);
            }
        }
        for t in incoming.preferred_anti_affinity {
            if t.term.matches(existing, &NO_LABELS) {
                touched |= state.add(labels, &t.term.topology_key, t.weight, -1);
            }
        }
        // The existing pod's terms, matched by the incoming pod (with its namespace labels).
        let matches = |term: &PodAffinityTerm| {
            existing_term_matches(
                &existing.namespace,
                term,
                incoming.pod,
                incoming.namespace_labels,
            )
        };
        let hard_weight = self.args.hard_pod_affinity_weight;
        if hard_weight > 0 {
            for t in &existing.pod_affinity.required {
                if matches(t) {
                    touched |= state.add(labels, &t.topology_key, hard_weight, 1);
                }
            }
        }
        for t in &existing.pod_affinity.preferred {
            if matches(&t.term) {
                touched |= state.add(labels, &t.term.topology_key, t.weight, 1);
            }
        }
        for t in &existing.pod_anti_affinity.preferred {
            if matches(&t.term) {
                touched |= state.add(labels, &t.term.topology_key, t.weight, -1);
            }
        }
        touched
    }

    /// Score: the sum of the weights of the node's topology pairs.
    pub fn score(&self, state: &PreScoreState, _pod: &Pod, node: &Node) -> i64 {
        state
            .topology_score
            .iter()
            .filter_map(|(key, values)| {
                node.labels.get(key).map(|v| values.get(v).copied().unwrap_or(0))
            })
            .fold(0i64, i64::wrapping_add)
    }

    /// NormalizeScore: maps `[min, max]` of the scores to `[0, 100]` with upstream's float64
    /// formula, truncated toward zero; all 0 when every score is equal.
    pub fn normalize_score(&self, state: &PreScoreState, scores: &mut [i64]) {
        if state.topology_score.is_empty() {
            return;
        }
        let mut min = i64::MAX;
        let mut max = i64::MIN;
        for &s in scores.iter() {
            max = max.max(s);
            min = min.min(s);
        }
        let diff = max.wrapping_sub(min);
        for s in scores.iter_mut() {
            let mut f = 0.0f64;
            if diff > 0 {
                f = MAX_NODE_SCORE as f64 * (s.wrapping_sub(min) as f64 / diff as f64);
            }
            *s = f as i64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::Code;
    use crate::framework::args::InterPodAffinityArgs;
    use crate::model::testing::{NodeBuilder, PodBuilder, cluster};
    use crate::model::{LabelSelector, MatchOp, Requirement};

    fn term(key: &str, reqs: Vec<Requirement>) -> PodAffinityTerm {
        let mut sel = LabelSelector { requirements: reqs };
        sel.normalize();
        PodAffinityTerm {
            label_selector: Some(sel),
            namespaces: Vec::new(),
            namespace_selector: None,
            topology_key: key.to_string(),
            match_label_keys: Vec::new(),
            mismatch_label_keys: Vec::new(),
        }
    }

    fn security_in(v: &[&str]) -> Requirement {
        Requirement::new("security", MatchOp::In, v)
    }

    /// `stayWithS1InRegion`: preferred affinity, weight 5, security=S1 over region.
    fn stay_with_s1_in_region(b: PodBuilder) -> PodBuilder {
        b.preferred_pod_affinity(5, term("region", vec![security_in(&["S1"])]))
    }
    /// `stayWithS2InRegion`: preferred affinity, weight 6, security=S2 over region.
    fn stay_with_s2_in_region(b: PodBuilder) -> PodBuilder {
        b.preferred_pod_affinity(6, term("region", vec![security_in(&["S2"])]))
    }
    /// `affinity3`: weight 8 for security NotIn S1 and In S2; weight 2 for security Exists
    /// and wrongkey DoesNotExist, both over region.
    fn affinity3(b: PodBuilder) -> PodBuilder {
        b.preferred_pod_affinity(
            8,
            term(
                "region",
                vec![Requirement::new("security", MatchOp::NotIn, &["S1"]), security_in(&["S2"])],
            ),
        )
        .preferred_pod_affinity(
            2,
            term(
                "region",
                vec![
                    Requirement::new("security", MatchOp::Exists, &[]),
                    Requirement::new("wrongkey", MatchOp::DoesNotExist, &[]),
                ],
            ),
        )
    }
    /// `hardAffinity`: two required affinity terms over region.
    fn hard_affinity(b: PodBuilder) -> PodBuilder {
        b.pod_affinity(term("region", vec![security_in(&["S1", "value2"])])).pod_affinity(term(
            "region",
            vec![
                Requirement::new("security", MatchOp::Exists, &[]),
                Requirement::new("wrongkey", MatchOp::DoesNotExist, &[]),
            ],
        ))
    }
    /// `awayFromS1InAz`: preferred anti-affinity, weight 5, security=S1 over az.
    fn away_from_s1_in_az(b: PodBuilder) -> PodBuilder {
        b.preferred_pod_anti_affinity(5, term("az", vec![security_in(&["S1"])]))
    }
    /// `awayFromS2InAz`: preferred anti-affinity, weight 5, security=S2 over az.
    fn away_from_s2_in_az(b: PodBuilder) -> PodBuilder {
        b.preferred_pod_anti_affinity(5, term("az", vec![security_in(&["S2"])]))
    }
    /// `stayWithS1InRegionAwayFromS2InAz`: affinity weight 8 (S1, region) and anti-affinity
    /// weight 5 (S2, az).
    fn stay_s1_away_s2(b: PodBuilder) -> PodBuilder {
        b.preferred_pod_affinity(8, term("region", vec![security_in(&["S1"])]))
            .preferred_pod_anti_affinity(5, term("az", vec![security_in(&["S2"])]))
    }
    /// A term over region for security=S1 in `subteam2.team2` plus namespaces of team1.
    fn ns_selector_term() -> PodAffinityTerm {
        PodAffinityTerm {
            namespaces: vec!["subteam2.team2".to_string()],
            namespace_selector: Some(LabelSelector::from_match_labels([("team", "team1")])),
            ..term("region", vec![security_in(&["S1"])])
        }
    }

    fn pod(ns: &str, name: &str, security: &str) -> PodBuilder {
        let b = PodBuilder::new(ns, name);
        if security.is_empty() { b } else { b.label("security", security) }
    }

    fn node(name: &str, labels: &[(&str, &str)]) -> crate::model::Node {
        // No hostname label: upstream's nodes carry only the labels given.
        let mut n = NodeBuilder::new(name).obj();
        n.labels = labels.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect();
        n
    }

    const CHINA: &[(&str, &str)] = &[("region", "China")];
    const INDIA: &[(&str, &str)] = &[("region", "India")];
    const AZ1: &[(&str, &str)] = &[("az", "az1")];
    const AZ2: &[(&str, &str)] = &[("az", "az2")];
    const CHINA_AZ1: &[(&str, &str)] = &[("region", "China"), ("az", "az1")];

    /// A scoring case: name, args, incoming pod, nodes, existing pods, and the normalized
    /// scores (`None` when PreScore skips).
    type Case<'a> = (
        &'a str,
        &'a InterPodAffinityArgs,
        Pod,
        Vec<crate::model::Node>,
        Vec<Pod>,
        Option<Vec<i64>>,
    );

    /// Runs PreScore, Score over every node, NormalizeScore; `None` when PreScore skips.
    fn run(
        args: InterPodAffinityArgs,
        incoming: &Pod,
        nodes: Vec<crate::model::Node>,
        pods: Vec<Pod>,
    ) -> Option<Vec<i64>> {
        let mut c = cluster(nodes, pods);
        for (ns, team) in [
            ("subteam1.team1", "team1"),
            ("subteam2.team1", "team1"),
            ("subteam1.team2", "team2"),
            ("subteam2.team2", "team2"),
        ] {
            c.namespace_labels.insert(ns.into(), [("team".to_string(), team.to_string())].into());
        }
        let pl = InterPodAffinity::new(args);
        let feasible: Vec<usize> = (0..c.nodes.len()).collect();
        match pl.pre_score(incoming, &c, &feasible) {
            Err(s) => {
                assert_eq!(s.code, Code::Skip, "pre_score failed: {s}");
                None
            }
            Ok(state) => {
                let mut scores: Vec<i64> =
                    c.nodes.iter().map(|n| pl.score(&state, incoming, n)).collect();
                pl.normalize_score(&state, &mut scores);
                Some(scores)
            }
        }
    }

    #[test]
    fn preferred_affinity_scores_follow_upstream() {
        let default_args = InterPodAffinityArgs::default();
        let ignore_args = InterPodAffinityArgs {
            ignore_preferred_terms_of_existing_pods: true,
            ..Default::default()
        };
        let n = |names: &[(&str, &[(&str, &str)])]| -> Vec<crate::model::Node> {
            names.iter().map(|(name, l)| node(name, l)).collect()
        };
        let cases: Vec<Case<'_>> = vec![
            (
                "all nodes score the same when no pod has affinity (skip)",
                &default_args,
                pod("", "p", "S1").obj(),
                n(&[("node1", CHINA), ("node2", INDIA), ("node3", AZ1)]),
                vec![],
                None,
            ),
            (
                "a node whose region holds a matching pod scores highest",
                // China: +5 (node1's S1 pod); node3's pod matches but node3 has no region.
                &default_args,
                stay_with_s1_in_region(pod("", "p", "S1")).obj(),
                n(&[("node1", CHINA), ("node2", INDIA), ("node3", AZ1)]),
                vec![
                    pod("", "a", "S1").node("node1").obj(),
                    pod("", "b", "S2").node("node2").obj(),
                    pod("", "c", "S1").node("node3").obj(),
                ],
                Some(vec![100, 0, 0]),
            ),
            (
                "all nodes sharing the region of a matching pod score the same",
                &default_args,
                stay_with_s1_in_region(pod("", "p", "")).obj(),
                n(&[("node1", CHINA), ("node2", CHINA_AZ1), ("node3", INDIA)]),
                vec![pod("", "a", "S1").node("node1").obj()],
                Some(vec![100, 100, 0]),
            ),
            (
                "the region with more matching pods scores higher",
                // China 4 pods x 6 = 24, India 2 x 6 = 12: China 100, India 0.
                &default_args,
                stay_with_s2_in_region(pod("", "p", "S1")).obj(),
                n(&[
                    ("node1", CHINA),
                    ("node2", INDIA),
                    ("node3", CHINA),
                    ("node4", CHINA),
                    ("node5", INDIA),
                ]),
                vec![
                    pod("", "a", "S2").node("node1").obj(),
                    pod("", "b", "S2").node("node1").obj(),
                    pod("", "c", "S2").node("node2").obj(),
                    pod("", "d", "S2").node("node3").obj(),
                    pod("", "e", "S2").node("node4").obj(),
                    pod("", "f", "S2").node("node5").obj(),
                ],
                Some(vec![100, 0, 100, 100, 0]),
            ),
            (
                "different operators and values, including failed matches",
                // China: S1 matches only the weight-2 term -> 2. India: S2 matches both -> 10.
                // node3 has no region -> 0. min 0, max 10: 100*(2/10) = 20, 100, 0.
                &default_args,
                affinity3(pod("", "p", "S1")).obj(),
                n(&[("node1", CHINA), ("node2", INDIA), ("node3", AZ1)]),
                vec![
                    pod("", "a", "S1").node("node1").obj(),
                    pod("", "b", "S2").node("node2").obj(),
                    pod("", "c", "S1").node("node3").obj(),
                ],
                Some(vec![20, 100, 0]),
            ),
            (
                "symmetry: existing pods' preferred affinity selecting the incoming pod count",
                // node2's pod prefers S2 in its region (India, +6); node1's pod prefers S1.
                &default_args,
                pod("", "p", "S2").obj(),
                n(&[("node1", CHINA), ("node2", INDIA), ("node3", AZ1)]),
                vec![
                    stay_with_s1_in_region(pod("", "a", "S1")).node("node1").obj(),
                    stay_with_s2_in_region(pod("", "b", "S2")).node("node2").obj(),
                ],
                Some(vec![0, 100, 0]),
            ),
            (
                "symmetry with a namespace selector matched against the incoming pod's namespace labels",
                // node1's pod (namespace "") prefers S1 pods in team1 namespaces: +5 China.
                &default_args,
                pod("subteam1.team1", "p", "S1").obj(),
                n(&[("node1", CHINA), ("node2", INDIA), ("node3", AZ1)]),
                vec![
                    pod("", "a", "S1")
                        .preferred_pod_affinity(5, ns_selector_term())
                        .node("node1")
                        .obj(),
                    stay_with_s2_in_region(pod("", "b", "S2")).node("node2").obj(),
                ],
                Some(vec![100, 0, 0]),
            ),
            (
                "anti-affinity symmetry with a namespace selector",
                // China -5; India 0; az-only node 0: min -5, max 0.
                &default_args,
                pod("subteam1.team1", "p", "S1").obj(),
                n(&[("node1", CHINA), ("node2", INDIA), ("node3", AZ1)]),
                vec![
                    pod("", "a", "S1")
                        .preferred_pod_anti_affinity(5, ns_selector_term())
                        .node("node1")
                        .obj(),
                    stay_with_s2_in_region(pod("", "b", "S2")).node("node2").obj(),
                ],
                Some(vec![0, 100, 100]),
            ),
            (
                "symmetry: existing pods' required affinity counts at the hard pod affinity weight",
                // Both existing pods' required terms select the S1 incoming pod: China +1+1,
                // India +1+1.
                &default_args,
                pod("", "p", "S1").obj(),
                n(&[("node1", CHINA), ("node2", INDIA), ("node3", AZ1)]),
                vec![
                    hard_affinity(pod("", "a", "S1")).node("node1").obj(),
                    hard_affinity(pod("", "b", "S2")).node("node2").obj(),
                ],
                Some(vec![100, 100, 0]),
            ),
            (
                "anti-affinity: the node in the zone of a matching pod scores lowest",
                &default_args,
                away_from_s1_in_az(pod("", "p", "S1")).obj(),
                n(&[("node1", AZ1), ("node2", CHINA)]),
                vec![
                    pod("", "a", "S1").node("node1").obj(),
                    pod("", "b", "S2").node("node2").obj(),
                ],
                Some(vec![0, 100]),
            ),
            (
                "anti-affinity: a node without the key scores highest even with matching pods",
                &default_args,
                away_from_s1_in_az(pod("", "p", "S1")).obj(),
                n(&[("node1", AZ1), ("node2", CHINA)]),
                vec![
                    pod("", "a", "S1").node("node1").obj(),
                    pod("", "b", "S1").node("node2").obj(),
                ],
                Some(vec![0, 100]),
            ),
            (
                "anti-affinity symmetry: the node whose pod repels the incoming pod scores lowest",
                &default_args,
                pod("", "p", "S2").obj(),
                n(&[("node1", AZ1), ("node2", AZ2)]),
                vec![
                    away_from_s2_in_az(pod("", "a", "S1")).node("node1").obj(),
                    away_from_s1_in_az(pod("", "b", "S2")).node("node2").obj(),
                ],
                Some(vec![0, 100]),
            ),
            (
                "affinity and anti-affinity of the incoming pod together",
                // node1 (China) holds an S1 pod: +8 for China; node2 (az1) holds an S1 pod,
                // which the S2 anti-affinity ignores.
                &default_args,
                stay_s1_away_s2(pod("", "p", "S1")).obj(),
                n(&[("node1", CHINA), ("node2", AZ1)]),
                vec![
                    pod("", "a", "S1").node("node1").obj(),
                    pod("", "b", "S1").node("node2").obj(),
                ],
                Some(vec![100, 0]),
            ),
            (
                "pods of one service stay in a region but apart on nodes",
                // China: 5 S1 pods x 8 = 40; India: 2 x 8 = 16 -> 100 for China, 0 for India.
                &default_args,
                stay_s1_away_s2(pod("", "p", "S1")).obj(),
                n(&[
                    ("node1", CHINA_AZ1),
                    ("node2", INDIA),
                    ("node3", CHINA),
                    ("node4", CHINA),
                    ("node5", INDIA),
                ]),
                vec![
                    pod("", "a", "S1").node("node1").obj(),
                    pod("", "b", "S1").node("node1").obj(),
                    pod("", "c", "S1").node("node2").obj(),
                    pod("", "d", "S1").node("node3").obj(),
                    pod("", "e", "S1").node("node3").obj(),
                    pod("", "f", "S1").node("node4").obj(),
                    pod("", "g", "S1").node("node5").obj(),
                ],
                Some(vec![100, 0, 100, 100, 0]),
            ),
            (
                "affinity, anti-affinity and both symmetries together",
                // Weights per node: 8 (China, S1 pod), -5 (az1, S2 pod), 8 (India, node3's pod
                // prefers S1 in its region), -5 (az2, node4's pod avoids S1).
                &default_args,
                stay_s1_away_s2(pod("", "p", "S1")).obj(),
                n(&[("node1", CHINA), ("node2", AZ1), ("node3", INDIA), ("node4", AZ2)]),
                vec![
                    pod("", "a", "S1").node("node1").obj(),
                    pod("", "b", "S2").node("node2").obj(),
                    stay_s1_away_s2(pod("", "c", "")).node("node3").obj(),
                    away_from_s1_in_az(pod("", "d", "")).node("node4").obj(),
                ],
                Some(vec![100, 0, 100, 0]),
            ),
            (
                "nodes of a region where only some have pods with affinity",
                // node2's pod prefers S1 in China (+8) and avoids S2 in az: both nodes in China.
                &default_args,
                pod("", "p", "S1").obj(),
                n(&[("node1", CHINA), ("node2", CHINA)]),
                vec![
                    pod("", "a", "S1").node("node1").obj(),
                    stay_s1_away_s2(pod("", "b", "")).node("node2").obj(),
                ],
                Some(vec![0, 0]),
            ),
            (
                "affinity with a namespace selector counts pods in selected namespaces",
                // Merged namespaces: subteam2.team2 plus team1's. China: 2 matching pods
                // (the team2 one does not count) -> 10; India: 1 -> 5.
                &default_args,
                pod("subteam1.team1", "p", "S1")
                    .preferred_pod_affinity(5, ns_selector_term())
                    .obj(),
                n(&[("node1", CHINA), ("node2", INDIA)]),
                vec![
                    pod("subteam1.team1", "a", "S1").node("node1").obj(),
                    pod("subteam1.team1", "b", "S1").node("node1").obj(),
                    pod("subteam1.team2", "c", "S1").node("node1").obj(),
                    pod("subteam2.team1", "d", "S1").node("node2").obj(),
                ],
                Some(vec![100, 0]),
            ),
            (
                "anti-affinity with a namespace selector and listed namespaces",
                // China: 3 matching pods (two team1, one listed subteam2.team2) -> -15;
                // India -5.
                &default_args,
                pod("subteam1.team1", "p", "S1")
                    .preferred_pod_anti_affinity(5, ns_selector_term())
                    .obj(),
                n(&[("node1", CHINA), ("node2", INDIA)]),
                vec![
                    pod("subteam1.team1", "a", "S1").node("node1").obj(),
                    pod("subteam1.team1", "b", "S1").node("node1").obj(),
                    pod("subteam2.team2", "c", "S1").node("node1").obj(),
                    pod("subteam2.team1", "d", "S1").node("node2").obj(),
                ],
                Some(vec![0, 100]),
            ),
            (
                "existing pods' preferred terms are ignored (skip) for a pod without preferences",
                &ignore_args,
                pod("", "p", "S2").obj(),
                n(&[("node1", CHINA), ("node2", INDIA)]),
                vec![
                    stay_s1_away_s2(pod("", "a", "S1")).node("node1").obj(),
                    stay_with_s2_in_region(pod("", "b", "S2")).node("node2").obj(),
                ],
                None,
            ),
            (
                "existing pods' preferred terms count when not ignored",
                &default_args,
                pod("", "p", "S2").obj(),
                n(&[("node1", CHINA), ("node2", INDIA)]),
                vec![
                    stay_s1_away_s2(pod("", "a", "S1")).node("node1").obj(),
                    stay_with_s2_in_region(pod("", "b", "S2")).node("node2").obj(),
                ],
                Some(vec![0, 100]),
            ),
            (
                "existing pods' preferred terms still count when ignored if the pod has preferences",
                // Upstream only skips pods without preferred terms. Incoming: +5 for S1 in
                // China (node1's pod). node2's pod prefers S2 in India: +6.
                &ignore_args,
                stay_with_s1_in_region(pod("", "p", "S2")).obj(),
                n(&[("node1", CHINA), ("node2", INDIA)]),
                vec![
                    pod("", "a", "S1").node("node1").obj(),
                    stay_with_s2_in_region(pod("", "b", "S2")).node("node2").obj(),
                ],
                Some(vec![0, 100]),
            ),
            (
                "no nodes to score (skip)",
                &default_args,
                pod("", "p", "S2").obj(),
                vec![],
                vec![],
                None,
            ),
        ];
        for (name, args, incoming, nodes, pods, want) in cases {
            assert_eq!(run(args.clone(), &incoming, nodes, pods), want, "{name}");
        }
    }

    #[test]
    fn hard_pod_affinity_weight_scores_existing_pods_required_terms() {
        // `hardPodAffinity`: required service=S1 over region, in "" and subteam2.team2 plus
        // team1 namespaces.
        let hard = |b: PodBuilder| {
            b.pod_affinity(PodAffinityTerm {
                namespaces: vec![String::new(), "subteam2.team2".to_string()],
                namespace_selector: Some(LabelSelector::from_match_labels([("team", "team1")])),
                ..term("region", vec![Requirement::new("service", MatchOp::In, &["S1"])])
            })
        };
        let nodes = || vec![node("node1", CHINA), node("node2", INDIA), node("node3", AZ1)];
        let existing = || {
            vec![
                hard(PodBuilder::new("", "a")).node("node1").obj(),
                hard(PodBuilder::new("", "b")).node("node2").obj(),
            ]
        };
        let incoming = |ns: &str| PodBuilder::new(ns, "p").label("service", "S1").obj();
        let args =
            |w: i32| InterPodAffinityArgs { hard_pod_affinity_weight: w, ..Default::default() };
        let cases: Vec<(&str, i32, &str, Option<Vec<i64>>)> = vec![
            ("the default weight scores both regions", 1, "", Some(vec![100, 100, 0])),
            ("a zero weight ignores required terms (skip)", 0, "", None),
            ("a namespace matched by neither list nor selector (skip)", 1, "subteam1.team2", None),
            ("a namespace matched by the selector", 1, "subteam1.team1", Some(vec![100, 100, 0])),
            ("a listed namespace", 1, "subteam2.team2", Some(vec![100, 100, 0])),
        ];
        for (name, w, ns, want) in cases {
            assert_eq!(run(args(w), &incoming(ns), nodes(), existing()), want, "{name}");
        }
    }

    #[test]
    fn normalize_uses_upstreams_float_formula() {
        // 100 * (29 / 100) in float64 is 28.999999999999996, truncated to 28 — the integer
        // formula would give 29. Raw scores 0, 29, 100 (min 0, max 100).
        let pl = InterPodAffinity::default();
        let mut state = PreScoreState::default();
        state.topology_score.insert("k".into(), BTreeMap::from([("v".to_string(), 1)]));
        let mut scores = vec![0, 29, 100];
        pl.normalize_score(&state, &mut scores);
        assert_eq!(scores, vec![0, 28, 100]);
        // Negative raw scores: min -5, max 3, diff 8: (-1+5)/8 = 0.5 -> 50.
        let mut scores = vec![-5, -1, 3];
        pl.normalize_score(&state, &mut scores);
        assert_eq!(scores, vec![0, 50, 100]);
        // Equal scores all become 0.
        let mut scores = vec![7, 7];
        pl.normalize_score(&state, &mut scores);
        assert_eq!(scores, vec![0, 0]);
    }

    #[test]
    fn pairs_whose_weights_cancel_out_still_count_as_applying() {
        // One pod matched by both a +5 affinity and a -5 anti-affinity term over region: the
        // pair exists with 0, so PreScore does not skip and every node normalizes to 0.
        let incoming = PodBuilder::new("", "p")
            .preferred_pod_affinity(5, term("region", vec![security_in(&["S1"])]))
            .preferred_pod_anti_affinity(5, term("region", vec![security_in(&["S1"])]))
            .obj();
        let got = run(
            InterPodAffinityArgs::default(),
            &incoming,
            vec![node("node1", CHINA), node("node2", INDIA)],
            vec![pod("", "a", "S1").node("node1").obj()],
        );
        assert_eq!(got, Some(vec![0, 0]));
    }
}
