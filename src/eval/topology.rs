//! Host-side tables of the inter-pod plugins (PodTopologySpread, InterPodAffinity): per class,
//! the plugin's own PreFilter/PreScore counts of matching pods per topology domain, dictionary
//! coded so that a kernel looks up a node's domain instead of walking pods.
//!
//! Input: the profile, the [`ClusterState`] and each class's representative pod. Output:
//! [`Topology`]: a per-key domain dictionary with every node's domain id (`N × K`, compact: one
//! `u32` per node and key), per class the ranges of its terms, and per term a sorted list of
//! `(domain, count)` entries holding only the non-zero counts (a domain without an entry counts
//! 0). Upstream counterpart (v1.35): the PreFilter and PreScore of
//! `pkg/scheduler/framework/plugins/podtopologyspread/` and `.../interpodaffinity/`, which
//! these tables are computed *with* (the plugins of [`crate::plugins`] run on the class's
//! representative pod), so the matrix follows the framework by construction; the kernels only
//! look counts up.
//!
//! # Domains
//!
//! For each topology key `k` a class needs, `domains[k]` lists `""` (always id 0) and every value
//! nodes have for `k`, sorted. A node's entry in `node_domains` is the id of its value, or
//! [`DOMAIN_ABSENT`] | 0 when it lacks the key: PodTopologySpread's scoring puts such nodes in the
//! `""` domain (with the system default constraints, where keys are not required), every other
//! use treats the key as missing.
//!
//! # PodTopologySpread
//!
//! Filter (`DoNotSchedule`, from `PodTopologySpread::pre_filter`): one term per constraint, in
//! order, with `maxSkew` in [`TopoTerm::skew`], the global minimum the skew is measured against
//! (0 when there are fewer eligible domains than `minDomains`) in [`TopoTerm::min_match`],
//! [`TERM_SELF_MATCH`] when the pod matches its own selector, and the per-domain counts.
//!
//! Score (`ScheduleAnyway`, from `PodTopologySpread::pre_score` over every node: the counts of a
//! domain do not depend on which nodes are scored, only which domains exist does): one term per
//! constraint with `maxSkew − 1` (`int32`) in [`TopoTerm::skew`] and the per-domain counts; for
//! `kubernetes.io/hostname` ([`TERM_HOSTNAME`]) the counts are per *node index* (the scored
//! node's own matching pods, upstream `countPodsMatchSelector`). What depends on the feasible
//! nodes — which nodes are ignored, how many domains the scored nodes span, hence the weight
//! `ln(domains + 2)` — is computed by the evaluators per class row; the weights come from
//! [`Topology::pts_weight_table`] (Go's `math.Log`, computed here in `f64`, used as bits).
//!
//! # InterPodAffinity
//!
//! Filter (from `InterPodAffinity::pre_filter`): the required affinity terms, in order, each
//! with the counts of existing pods matching all of them per domain of its key (a node lacking
//! a key fails; so does a domain without such pods, unless [`IPA_AFFINITY_FALLBACK`]); the
//! required anti-affinity terms with the counts of existing pods matching each (a node whose
//! domain counts one fails); and per topology key the existing pods whose required
//! anti-affinity selects the pod (a node in such a domain fails).
//!
//! Score (from `InterPodAffinity::pre_score`, which looks at every node regardless of the
//! feasible ones): per topology key the summed weights per domain; a node's raw score is the sum
//! over the keys it has. The normalization (min/max over the feasible nodes, binary64) is the
//! evaluators'.

use std::collections::{BTreeMap, BTreeSet};

use crate::framework::Code;
use crate::framework::profile::{PluginName, Profile};
use crate::model::{ClusterState, Pod};
use crate::plugins::interpodaffinity::{InterPodAffinity, TopologyCounts};
use crate::plugins::podtopologyspread::{
    LABEL_HOSTNAME, PodTopologySpread, count_pods_match_selector, topology_normalizing_weight,
};

use super::EvalError;

/// `node_domains` flag: the node lacks the key (its domain id is that of `""`, 0).
pub const DOMAIN_ABSENT: u32 = 1 << 31;
/// Mask of the domain id in a `node_domains` entry.
pub const DOMAIN_MASK: u32 = !DOMAIN_ABSENT;

/// Class flag: PodTopologySpread filters the class (its PreFilter did not skip).
pub const PTS_FILTER: u32 = 1 << 0;
/// Class flag: PodTopologySpread scores the class (its PreScore did not skip).
pub const PTS_SCORE: u32 = 1 << 1;
/// Class flag: a scored node lacking some constraint's key is ignored (scores 0); unset only
/// for system default constraints.
pub const PTS_REQUIRE_ALL: u32 = 1 << 2;

/// Class flag: InterPodAffinity filters the class (its PreFilter did not skip).
pub const IPA_FILTER: u32 = 1 << 0;
/// Class flag: no existing pod matches the required affinity terms anywhere and the pod matches
/// them itself, so they are satisfied on every node that has their keys (the first pod of a
/// self-affine group).
pub const IPA_AFFINITY_FALLBACK: u32 = 1 << 1;
/// Class flag: InterPodAffinity scores the class (its PreScore did not skip).
pub const IPA_SCORE: u32 = 1 << 2;

/// Term flag: a PodTopologySpread scoring constraint over `kubernetes.io/hostname`: entries
/// are keyed by node index and the domain count is the number of scored nodes.
pub const TERM_HOSTNAME: u32 = 1 << 0;
/// Term flag: the class's pod matches the constraint's selector (adds 1 to the skew).
pub const TERM_SELF_MATCH: u32 = 1 << 1;

/// The largest count or summed weight a table entry may hold, and the bound on a class's
/// PodTopologySpread raw score, so that every kernel sum fits `i32` with room for the
/// normalizations.
pub const MAX_TABLE_VALUE: i64 = 1 << 30;

/// One term of a class: a PodTopologySpread constraint (or, later, an InterPodAffinity term).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TopoTerm {
    /// The topology key's slot in [`Topology::keys`].
    pub key: u32,
    /// First entry in [`Topology::entries`].
    pub entry_start: u32,
    /// Number of entries (ascending by domain).
    pub entry_count: u32,
    /// `TERM_*` flags.
    pub flags: u32,
    /// Filter: `maxSkew`; score: `maxSkew − 1` (`int32`, wrapping as upstream).
    pub skew: i32,
    /// Filter: the global minimum count the skew is measured against.
    pub min_match: i32,
    /// Score (not hostname): the first word of the term's domain bitmap, over every class
    /// (used by the GPU to count the domains of the feasible nodes).
    pub bitmap_start: u32,
    /// Score (not hostname): words of that bitmap (`⌈domains / 32⌉`).
    pub bitmap_words: u32,
}

/// One class's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TopoClass {
    /// `PTS_*` flags.
    pub pts_flags: u32,
    /// `(start, count)` of the PodTopologySpread filter terms in [`Topology::terms`].
    pub pts_filter: (u32, u32),
    /// `(start, count)` of the PodTopologySpread scoring terms.
    pub pts_score: (u32, u32),
    /// `IPA_*` flags.
    pub ipa_flags: u32,
    /// InterPodAffinity: one term per required affinity term, in order, counting the existing
    /// pods that match *all* of them per domain of its key.
    pub ipa_affinity: (u32, u32),
    /// InterPodAffinity: one term per required anti-affinity term, in order, counting the
    /// existing pods that match it per domain of its key.
    pub ipa_anti_affinity: (u32, u32),
    /// InterPodAffinity: one term per topology key of existing pods' required anti-affinity
    /// terms that select the pod, counting those pods per domain.
    pub ipa_existing: (u32, u32),
    /// InterPodAffinity scoring: one term per topology key, the summed weights per domain.
    pub ipa_score: (u32, u32),
}

/// The host tables of the inter-pod plugins (see the module documentation).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Topology {
    /// The topology keys some class uses, sorted (slots are positions).
    pub keys: Vec<String>,
    /// Per key: `""` then the values nodes have, sorted (domain ids are positions).
    pub domains: Vec<Vec<String>>,
    /// `N × K`: per node and key slot, the domain id, with [`DOMAIN_ABSENT`] when the node
    /// lacks the key.
    pub node_domains: Vec<u32>,
    /// Per class.
    pub classes: Vec<TopoClass>,
    /// Every class's terms.
    pub terms: Vec<TopoTerm>,
    /// `(domain or node index, count)` entries of every term.
    pub entries: Vec<(u32, i32)>,
    /// PodTopologySpread: the bits of `ln(size + 2)` (Go's `math.Log`) for `size` in `0..=N`.
    pub pts_weight_table: Vec<u64>,
    /// Total words of the scoring terms' domain bitmaps.
    pub bitmap_words: u32,
}

impl Topology {
    /// Number of key slots.
    pub fn num_keys(&self) -> usize {
        self.keys.len()
    }

    /// The `node_domains` entry of a node and key slot.
    pub fn node_domain(&self, node: usize, key: u32) -> u32 {
        self.node_domains
            .get(node * self.keys.len() + key as usize)
            .copied()
            .unwrap_or(DOMAIN_ABSENT)
    }

    /// The term's count for a domain (or node index): its entry, 0 without one.
    pub fn lookup(&self, term: &TopoTerm, domain: u32) -> i32 {
        let start = term.entry_start as usize;
        let entries =
            self.entries.get(start..start + term.entry_count as usize).unwrap_or_default();
        entries.binary_search_by_key(&domain, |e| e.0).map_or(0, |k| entries[k].1)
    }

    /// The terms of a range.
    pub fn terms(&self, range: (u32, u32)) -> &[TopoTerm] {
        let start = range.0 as usize;
        self.terms.get(start..start + range.1 as usize).unwrap_or_default()
    }
}

/// What a term counts, before domains are dictionary coded.
#[derive(Debug, Clone)]
enum Counts {
    /// Per label value of the term's key.
    ByValue(BTreeMap<String, i64>),
    /// Per node index.
    ByNode(BTreeMap<u32, i64>),
}

/// A term with string keys.
#[derive(Debug, Clone)]
struct RawTerm {
    key: String,
    counts: Counts,
    flags: u32,
    skew: i32,
    min_match: i32,
}

#[derive(Debug, Clone, Default)]
struct RawClass {
    pts_flags: u32,
    pts_filter: Vec<RawTerm>,
    pts_score: Vec<RawTerm>,
    ipa_flags: u32,
    ipa_affinity: Vec<RawTerm>,
    ipa_anti_affinity: Vec<RawTerm>,
    ipa_existing: Vec<RawTerm>,
    ipa_score: Vec<RawTerm>,
}

impl RawClass {
    fn terms(&self) -> impl Iterator<Item = &RawTerm> {
        self.pts_filter
            .iter()
            .chain(&self.pts_score)
            .chain(&self.ipa_affinity)
            .chain(&self.ipa_anti_affinity)
            .chain(&self.ipa_existing)
            .chain(&self.ipa_score)
    }
}

/// A term counting per value of `key`.
fn value_term(key: &str, counts: BTreeMap<String, i64>) -> RawTerm {
    RawTerm {
        key: key.to_string(),
        counts: Counts::ByValue(counts),
        flags: 0,
        skew: 0,
        min_match: 0,
    }
}

/// The counts of one key of InterPodAffinity's `(key, value) → count` tables.
fn counts_of(counts: &TopologyCounts, key: &str) -> BTreeMap<String, i64> {
    counts.iter().filter(|(k, _, _)| *k == key).map(|(_, v, c)| (v.to_string(), c)).collect()
}

/// InterPodAffinity's filter terms of one class (into `class`).
fn ipa_filter_terms(ipa: &InterPodAffinity, pod: &Pod, state: &ClusterState, class: &mut RawClass) {
    let Ok(pre) = ipa.pre_filter(pod, state) else { return };
    class.ipa_flags |= IPA_FILTER;
    if pre.affinity_counts.is_empty() && pre.pod_matches_own_affinity_terms {
        class.ipa_flags |= IPA_AFFINITY_FALLBACK;
    }
    class.ipa_affinity = pre
        .required_affinity_terms
        .iter()
        .map(|t| value_term(&t.topology_key, counts_of(&pre.affinity_counts, &t.topology_key)))
        .collect();
    class.ipa_anti_affinity = pre
        .required_anti_affinity_terms
        .iter()
        .map(|t| value_term(&t.topology_key, counts_of(&pre.anti_affinity_counts, &t.topology_key)))
        .collect();
    let keys: BTreeSet<&str> =
        pre.existing_anti_affinity_counts.iter().map(|(k, _, _)| k).collect();
    class.ipa_existing = keys
        .into_iter()
        .map(|k| value_term(k, counts_of(&pre.existing_anti_affinity_counts, k)))
        .collect();
}

/// InterPodAffinity's scoring terms of one class (into `class`); the summed weights of a class
/// are bounded so that a node's sum and the differences the normalization divides fit `i32`.
fn ipa_score_terms(
    ipa: &InterPodAffinity,
    pod: &Pod,
    state: &ClusterState,
    class: &mut RawClass,
) -> Result<(), EvalError> {
    let Ok(pre) = ipa.pre_score(pod, state, &[]) else { return Ok(()) };
    class.ipa_flags |= IPA_SCORE;
    let mut bound = 0i64;
    for (key, values) in &pre.topology_score {
        bound =
            bound.saturating_add(values.values().map(|v| v.saturating_abs()).max().unwrap_or(0));
        class.ipa_score.push(value_term(key, values.clone()));
    }
    if bound >= MAX_TABLE_VALUE {
        return Err(too_large(format!("InterPodAffinity weights of pod {}", pod.key()), bound));
    }
    Ok(())
}

fn too_large(what: String, value: i64) -> EvalError {
    EvalError::WeightsTooLarge { what, value, max: MAX_TABLE_VALUE }
}

/// PodTopologySpread's filter terms of one class.
fn pts_filter_terms(
    pts: &PodTopologySpread,
    pod: &Pod,
    state: &ClusterState,
) -> Option<Vec<RawTerm>> {
    let pre = pts.pre_filter(pod, state).ok()?;
    let terms = pre
        .constraints
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let counts = pre.tp_value_to_match_num.get(i).cloned().unwrap_or_default();
            // Upstream `minMatchNum`: 0 with fewer eligible domains than minDomains.
            let min = if (counts.len() as i64) < i64::from(c.min_domains) {
                0
            } else {
                pre.min_match_num.get(i).copied().unwrap_or(i64::from(i32::MAX))
            };
            let self_match = if c.selects(&pod.labels) { TERM_SELF_MATCH } else { 0 };
            RawTerm {
                key: c.topology_key.clone(),
                counts: Counts::ByValue(counts),
                flags: self_match,
                skew: c.max_skew,
                min_match: i32::try_from(min).unwrap_or(i32::MAX),
            }
        })
        .collect();
    Some(terms)
}

/// PodTopologySpread's scoring terms of one class and whether keys are required; `None` when
/// PreScore skips.
fn pts_score_terms(
    pts: &PodTopologySpread,
    pod: &Pod,
    state: &ClusterState,
) -> Result<Option<(Vec<RawTerm>, bool)>, EvalError> {
    let all: Vec<usize> = (0..state.nodes.len()).collect();
    let pre = match pts.pre_score(pod, state, &all) {
        Ok(pre) => pre,
        Err(status) if status.code == Code::Skip => return Ok(None),
        // PreScore only ever skips; anything else would be a plugin change the matrix must
        // not paper over.
        Err(status) => {
            return Err(EvalError::Args {
                plugin: "PodTopologySpread",
                message: status.to_string(),
            });
        }
    };
    let require_all = !pod.topology_spread_constraints.is_empty() || !pts.system_defaulted();
    // Bound on the class's raw score: every matching pod of the cluster in one domain.
    let pods: i64 = state.nodes.iter().map(|n| n.pods.len() as i64).sum();
    let weight_bound = 23; // ln(2^32 + 2) < 23
    let mut bound = 0i64;
    let mut terms = Vec::new();
    for (i, c) in pre.constraints.iter().enumerate() {
        bound = bound
            .saturating_add(pods.saturating_mul(weight_bound))
            .saturating_add(i64::from(c.max_skew.wrapping_sub(1)).abs());
        let (counts, flags) = if c.topology_key == LABEL_HOSTNAME {
            let per_node = state
                .nodes
                .iter()
                .enumerate()
                .map(|(n, node)| {
                    (n as u32, count_pods_match_selector(&node.pods, &c.selector, &pod.namespace))
                })
                .filter(|&(_, count)| count != 0)
                .collect();
            (Counts::ByNode(per_node), TERM_HOSTNAME)
        } else {
            let per_value = pre.topology_value_to_pod_counts.get(i).cloned().unwrap_or_default();
            (Counts::ByValue(per_value), 0)
        };
        terms.push(RawTerm {
            key: c.topology_key.clone(),
            counts,
            flags,
            skew: c.max_skew.wrapping_sub(1),
            min_match: 0,
        });
    }
    if bound >= MAX_TABLE_VALUE {
        return Err(too_large(format!("PodTopologySpread scores of pod {}", pod.key()), bound));
    }
    Ok(Some((terms, require_all)))
}

/// Builds the tables for the classes whose representatives are `pods` (in class order).
pub fn prepare(
    profile: &Profile,
    state: &ClusterState,
    pods: &[&Pod],
) -> Result<Topology, EvalError> {
    let pts = PodTopologySpread::new(profile.args.pod_topology_spread.clone());
    let pts_filters = profile.plugins.filter.contains(&PluginName::PodTopologySpread);
    let pts_scores = profile.plugins.score.iter().any(|(p, _)| *p == PluginName::PodTopologySpread);
    let ipa = InterPodAffinity::new(profile.args.inter_pod_affinity.clone());
    let ipa_filters = profile.plugins.filter.contains(&PluginName::InterPodAffinity);
    let ipa_scores = profile.plugins.score.iter().any(|(p, _)| *p == PluginName::InterPodAffinity);

    // InterPodAffinity's own skips, looked up once for the batch instead of once per pod (the
    // plugin checks every node each time): a pod without required terms of its own is skipped
    // by PreFilter where no existing pod has required anti-affinity, and one without
    // preferred terms by PreScore where no existing pod has affinity terms.
    let any_required_anti = state.nodes.iter().any(|n| n.pods_with_required_anti_affinity > 0);
    let any_affinity = state.nodes.iter().any(|n| n.pods_with_affinity > 0);

    let mut raw = Vec::with_capacity(pods.len());
    for pod in pods {
        let mut class = RawClass::default();
        if pts_filters && let Some(terms) = pts_filter_terms(&pts, pod, state) {
            class.pts_flags |= PTS_FILTER;
            class.pts_filter = terms;
        }
        if pts_scores && let Some((terms, require_all)) = pts_score_terms(&pts, pod, state)? {
            class.pts_flags |= PTS_SCORE;
            if require_all {
                class.pts_flags |= PTS_REQUIRE_ALL;
            }
            class.pts_score = terms;
        }
        let own_required =
            !pod.pod_affinity.required.is_empty() || !pod.pod_anti_affinity.required.is_empty();
        if ipa_filters && (own_required || any_required_anti) {
            ipa_filter_terms(&ipa, pod, state, &mut class);
        }
        let own_preferred =
            !pod.pod_affinity.preferred.is_empty() || !pod.pod_anti_affinity.preferred.is_empty();
        if ipa_scores && (own_preferred || any_affinity) {
            ipa_score_terms(&ipa, pod, state, &mut class)?;
        }
        raw.push(class);
    }

    // The domain dictionary of every key in use.
    let keys: Vec<String> = raw
        .iter()
        .flat_map(RawClass::terms)
        .map(|t| t.key.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut domains: Vec<Vec<String>> = Vec::with_capacity(keys.len());
    for key in &keys {
        let mut values: BTreeSet<&str> = BTreeSet::from([""]);
        values.extend(state.nodes.iter().filter_map(|n| n.labels.get(key).map(String::as_str)));
        domains.push(values.into_iter().map(str::to_string).collect());
    }
    let mut node_domains = Vec::with_capacity(state.nodes.len() * keys.len());
    for node in &state.nodes {
        for (k, key) in keys.iter().enumerate() {
            let entry = match node.labels.get(key) {
                Some(v) => domains[k].binary_search(v).map_or(DOMAIN_ABSENT, |d| d as u32),
                None => DOMAIN_ABSENT,
            };
            node_domains.push(entry);
        }
    }

    let mut topo = Topology {
        keys,
        domains,
        node_domains,
        pts_weight_table: (0..=state.nodes.len())
            .map(|size| topology_normalizing_weight(size).to_bits())
            .collect(),
        ..Topology::default()
    };
    for (ci, class) in raw.iter().enumerate() {
        let pts_filter = encode_terms(&mut topo, &class.pts_filter, false, ci)?;
        let pts_score = encode_terms(&mut topo, &class.pts_score, true, ci)?;
        let ipa_affinity = encode_terms(&mut topo, &class.ipa_affinity, false, ci)?;
        let ipa_anti_affinity = encode_terms(&mut topo, &class.ipa_anti_affinity, false, ci)?;
        let ipa_existing = encode_terms(&mut topo, &class.ipa_existing, false, ci)?;
        let ipa_score = encode_terms(&mut topo, &class.ipa_score, false, ci)?;
        topo.classes.push(TopoClass {
            pts_flags: class.pts_flags,
            pts_filter,
            pts_score,
            ipa_flags: class.ipa_flags,
            ipa_affinity,
            ipa_anti_affinity,
            ipa_existing,
            ipa_score,
        });
    }
    Ok(topo)
}

/// Appends terms (and their entries, and for scoring terms their bitmap ranges); returns their
/// `(start, count)`.
fn encode_terms(
    topo: &mut Topology,
    terms: &[RawTerm],
    bitmaps: bool,
    class: usize,
) -> Result<(u32, u32), EvalError> {
    let start = topo.terms.len() as u32;
    for t in terms {
        let key = topo.keys.binary_search(&t.key).map_or(0, |k| k as u32);
        let entry_start = topo.entries.len() as u32;
        let mut push = |id: u32, count: i64| -> Result<(), EvalError> {
            if count.abs() >= MAX_TABLE_VALUE {
                return Err(too_large(format!("a topology count of class {class}"), count));
            }
            if count != 0 {
                topo.entries.push((id, count as i32));
            }
            Ok(())
        };
        match &t.counts {
            Counts::ByValue(values) => {
                let dict = topo.domains.get(key as usize).map_or(&[][..], Vec::as_slice);
                // Values come from node labels, so each has an id; the map is sorted like the
                // dictionary, so ids ascend.
                let mut coded: Vec<(u32, i64)> = values
                    .iter()
                    .filter_map(|(v, &count)| dict.binary_search(v).ok().map(|d| (d as u32, count)))
                    .collect();
                coded.sort_unstable();
                for (d, count) in coded {
                    push(d, count)?;
                }
            }
            Counts::ByNode(nodes) => {
                for (&n, &count) in nodes {
                    push(n, count)?;
                }
            }
        }
        let entry_count = topo.entries.len() as u32 - entry_start;
        let (mut bitmap_start, mut bitmap_words) = (0, 0);
        if bitmaps && t.flags & TERM_HOSTNAME == 0 {
            bitmap_start = topo.bitmap_words;
            bitmap_words =
                topo.domains.get(key as usize).map_or(0, |d| d.len().div_ceil(32) as u32);
            topo.bitmap_words = topo.bitmap_words.saturating_add(bitmap_words);
        }
        topo.terms.push(TopoTerm {
            key,
            entry_start,
            entry_count,
            flags: t.flags,
            skew: t.skew,
            min_match: t.min_match,
            bitmap_start,
            bitmap_words,
        });
    }
    Ok((start, topo.terms.len() as u32 - start))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::UnsatisfiableAction::DoNotSchedule;
    use crate::model::testing::{NodeBuilder, PodBuilder, cluster, spread_constraint};

    fn zone_cluster() -> ClusterState {
        let nodes = vec![
            NodeBuilder::new("n1").label("zone", "b").obj(),
            NodeBuilder::new("n2").label("zone", "a").obj(),
            NodeBuilder::new("n3").obj(),
        ];
        let web = |name: &str, node: &str| {
            PodBuilder::new("d", name).label("app", "web").node(node).obj()
        };
        cluster(nodes, vec![web("w1", "n1"), web("w2", "n1")])
    }

    #[test]
    fn domains_are_coded_per_key_with_the_empty_value_first_and_absent_keys_flagged() {
        let state = zone_cluster();
        let pod = PodBuilder::new("d", "p")
            .label("app", "web")
            .spread(spread_constraint(1, "zone", DoNotSchedule, &[("app", "web")]))
            .obj();
        let topo = prepare(&Profile::default_profile(), &state, &[&pod]).unwrap();
        assert_eq!(topo.keys, vec!["zone".to_string()]);
        assert_eq!(topo.domains[0], vec!["".to_string(), "a".to_string(), "b".to_string()]);
        assert_eq!(topo.node_domains, vec![2, 1, DOMAIN_ABSENT]);
    }

    #[test]
    fn only_non_zero_counts_are_stored_and_lookups_default_to_zero() {
        let state = zone_cluster();
        let pod = PodBuilder::new("d", "p")
            .label("app", "web")
            .spread(spread_constraint(1, "zone", DoNotSchedule, &[("app", "web")]))
            .obj();
        let topo = prepare(&Profile::default_profile(), &state, &[&pod]).unwrap();
        let class = topo.classes[0];
        assert_ne!(class.pts_flags & PTS_FILTER, 0);
        let term = topo.terms(class.pts_filter)[0];
        // Zone b holds both web pods; zone a has none, so it has no entry.
        assert_eq!(term.entry_count, 1);
        assert_eq!(topo.lookup(&term, 2), 2, "zone b");
        assert_eq!(topo.lookup(&term, 1), 0, "zone a");
        // Two eligible domains, the smallest counts 0; the pod matches its own selector.
        assert_eq!(term.min_match, 0);
        assert_ne!(term.flags & TERM_SELF_MATCH, 0);
    }

    #[test]
    fn a_profile_without_the_inter_pod_plugins_builds_no_terms() {
        let state = zone_cluster();
        let pod = PodBuilder::new("d", "p")
            .spread(spread_constraint(1, "zone", DoNotSchedule, &[("app", "web")]))
            .obj();
        let mut profile = Profile::default_profile();
        profile.plugins.filter.retain(|p| *p != PluginName::PodTopologySpread);
        profile.plugins.score.retain(|(p, _)| *p != PluginName::PodTopologySpread);
        let topo = prepare(&profile, &state, &[&pod]).unwrap();
        assert!(topo.terms.is_empty() && topo.keys.is_empty());
        assert_eq!(topo.classes[0], TopoClass::default());
    }
}
