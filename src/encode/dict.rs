//! Dictionaries: every string-valued thing the kernels compare becomes a dense `u32` id.
//!
//! Input: the [`ClusterState`], the pending pods and their [`PodClasses`]. Output:
//! [`Dictionaries`], each a sorted, de-duplicated [`Dict`] whose id of an item is its position
//! in sorted order, so the ids depend only on *which* items occur, never on insertion order.
//! No upstream counterpart: kube-scheduler compares strings directly.
//!
//! Orders worth knowing:
//! * Label pairs sort by `(key, value)`, so the pairs of one key occupy the contiguous id range
//!   [`LabelPairs::key_range`]; a node has at most one pair in that range.
//! * Taints sort by `(key, value, effect)` with effects ordered NoSchedule, PreferNoSchedule,
//!   NoExecute.
//! * Topology domains are numbered per topology key (`0..n_domains(key)`, values sorted);
//!   [`Dictionaries::domain_offsets`] turns them into global ids.
//! * Resources are the exception to "sorted": columns are `cpu, memory, ephemeral-storage,
//!   pods` (fixed ids 0–3, [`RESOURCE_CPU`] …) and then every other resource name in sorted
//!   order; see [`ResourceTable`].

use std::collections::{BTreeMap, BTreeSet};

use super::EncodeError;
use super::classes::{PodClasses, SigAffinityTerm, SigNodeTerm, TolerationShape};
use super::node_side::{NodeSide, merge_sorted};
use super::units::ResourceUnit;
use crate::model::{ClusterState, HostPort, LabelSelector, MatchOp, Pod, Requirement, Taint};
use crate::resources::{CPU, EPHEMERAL_STORAGE, MEMORY, PODS};

/// Column of `cpu` in every resource matrix.
pub const RESOURCE_CPU: usize = 0;
/// Column of `memory`.
pub const RESOURCE_MEMORY: usize = 1;
/// Column of `ephemeral-storage`.
pub const RESOURCE_EPHEMERAL_STORAGE: usize = 2;
/// Column of `pods`.
pub const RESOURCE_PODS: usize = 3;
/// Number of fixed resource columns.
pub const CORE_RESOURCES: usize = 4;

/// Topology keys always present in [`Dictionaries::topology_keys`] (the system default spread
/// constraints use them).
pub const DEFAULT_TOPOLOGY_KEYS: [&str; 2] =
    ["kubernetes.io/hostname", "topology.kubernetes.io/zone"];

/// A sorted set of distinct items; an item's id is its index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Dict<T> {
    items: Vec<T>,
}

impl<T> Default for Dict<T> {
    fn default() -> Self {
        Dict { items: Vec::new() }
    }
}

impl<T: Ord> Dict<T> {
    /// Builds a dictionary from any items (duplicates are merged, order is ignored). `what`
    /// names the dictionary in the error when it would hold more than `u32::MAX` items.
    pub fn build(
        what: &'static str,
        items: impl IntoIterator<Item = T>,
    ) -> Result<Self, EncodeError> {
        let set: BTreeSet<T> = items.into_iter().collect();
        check_u32(what, set.len())?;
        Ok(Dict { items: set.into_iter().collect() })
    }

    /// The id of an item.
    pub fn id<Q>(&self, item: &Q) -> Option<u32>
    where
        T: std::borrow::Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.items
            .binary_search_by(|x| x.borrow().cmp(item))
            .ok()
            .and_then(|i| u32::try_from(i).ok())
    }
}

impl<T> Dict<T> {
    /// A dictionary of items already sorted and distinct (the caller's promise).
    pub(crate) fn from_sorted(items: Vec<T>) -> Self
    where
        T: Ord,
    {
        debug_assert!(items.windows(2).all(|w| w[0] < w[1]));
        Dict { items }
    }

    /// The item with this id.
    pub fn get(&self, id: u32) -> Option<&T> {
        self.items.get(usize::try_from(id).ok()?)
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the dictionary is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// All items in id order.
    pub fn items(&self) -> &[T] {
        &self.items
    }

    /// Searches with a comparator (item vs. target) and returns the id.
    pub fn id_by(&self, f: impl FnMut(&T) -> std::cmp::Ordering) -> Option<u32> {
        self.items.binary_search_by(f).ok().and_then(|i| u32::try_from(i).ok())
    }
}

/// Fails with [`EncodeError::TooMany`] when `count` does not fit a `u32` id.
pub(crate) fn check_u32(what: &'static str, count: usize) -> Result<u32, EncodeError> {
    u32::try_from(count).map_err(|_| EncodeError::TooMany { what, count })
}

/// Label `(key, value)` pairs of nodes and pods, with the id range of each key.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LabelPairs {
    /// The pairs, sorted by key then value.
    pub pairs: Dict<(String, String)>,
    /// Key id (in [`Dictionaries::label_keys`]) of each pair.
    pub pair_key: Vec<u32>,
    /// `key_offsets[k]..key_offsets[k + 1]` are the pair ids of key `k`; length keys + 1.
    pub key_offsets: Vec<u32>,
}

impl LabelPairs {
    /// The id of `(key, value)`.
    pub fn id(&self, key: &str, value: &str) -> Option<u32> {
        self.pairs.id_by(|(k, v)| (k.as_str(), v.as_str()).cmp(&(key, value)))
    }

    /// The pair-id range of a key id (empty for keys that only occur in selectors).
    pub fn key_range(&self, key: u32) -> std::ops::Range<u32> {
        let k = key as usize;
        match (self.key_offsets.get(k), self.key_offsets.get(k + 1)) {
            (Some(&lo), Some(&hi)) => lo..hi,
            _ => 0..0,
        }
    }
}

/// One resource column: its name and encoded unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceTable {
    /// Units in column order: `cpu, memory, ephemeral-storage, pods`, then other names sorted.
    pub units: Vec<ResourceUnit>,
}

impl ResourceTable {
    /// The column of a resource name.
    pub fn column(&self, name: &str) -> Option<usize> {
        match name {
            CPU => Some(RESOURCE_CPU),
            MEMORY => Some(RESOURCE_MEMORY),
            EPHEMERAL_STORAGE => Some(RESOURCE_EPHEMERAL_STORAGE),
            PODS => Some(RESOURCE_PODS),
            _ => self
                .units
                .get(CORE_RESOURCES..)?
                .binary_search_by(|u| u.name.as_str().cmp(name))
                .ok()
                .map(|i| i + CORE_RESOURCES),
        }
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.units.len()
    }

    /// Always false (the four core columns are always present).
    pub fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    /// Column names in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.units.iter().map(|u| u.name.as_str())
    }
}

/// Where a compiled requirement looks: the object's labels or the node's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RequirementKind {
    /// A label requirement (node selector `matchExpressions`, `nodeSelector`, label selectors).
    Label,
    /// A node field requirement (`matchFields`, key `metadata.name`).
    Field,
}

/// What [`ImageInfo`] records about an image name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ImageInfo {
    /// `sizeBytes` as reported by the first node (in name order) that has the image (the largest,
    /// if that node lists the name twice); 0 if no node has it. (Upstream keeps the size from
    /// whichever node its cache saw first.)
    pub size_bytes: i64,
    /// Number of nodes that have the image.
    pub num_nodes: u32,
}

/// All dictionaries of one encoding.
#[derive(Debug, Clone, PartialEq)]
pub struct Dictionaries {
    /// Resource columns and their units.
    pub resources: ResourceTable,
    /// Label keys of nodes, pods (pending and bound), selectors and topology keys.
    pub label_keys: Dict<String>,
    /// Label pairs of nodes and pods (pending and bound).
    pub label_pairs: LabelPairs,
    /// Node taints.
    pub taints: Dict<Taint>,
    /// Distinct tolerations of pending pods (`tolerationSeconds` dropped).
    pub tolerations: Dict<TolerationShape>,
    /// Topology keys of spread constraints and pod (anti-)affinity terms (pending pods, and
    /// bound pods' affinity terms), plus [`DEFAULT_TOPOLOGY_KEYS`].
    pub topology_keys: Dict<String>,
    /// Per topology key: the values nodes have for it (local domain ids).
    pub topology_domains: Vec<Dict<String>>,
    /// `domain_offsets[k]` + local id = global domain id; length keys + 1.
    pub domain_offsets: Vec<u32>,
    /// Image names on nodes and in pending pods.
    pub images: Dict<String>,
    /// Size and spread of each image, aligned with `images`.
    pub image_info: Vec<ImageInfo>,
    /// Namespaces of the snapshot, of every pod, and named by pending pods' affinity terms.
    pub namespaces: Dict<String>,
    /// Host ports used on nodes or wanted by pending pods.
    pub host_ports: Dict<HostPort>,
    /// Host IPs of `host_ports`.
    pub host_ips: Dict<String>,
    /// Protocols of `host_ports`.
    pub protocols: Dict<String>,
    /// Distinct normalized label selectors of pending pods' spread constraints, default spread
    /// selectors and pod affinity terms.
    pub selectors: Dict<LabelSelector>,
    /// Distinct node selector terms of pending pods (required and preferred node affinity).
    pub node_terms: Dict<SigNodeTerm>,
    /// Distinct requirements: node terms' expressions and fields, `nodeSelector` entries, and
    /// label selectors' requirements.
    pub requirements: Dict<(RequirementKind, Requirement)>,
}

impl Dictionaries {
    /// Builds every dictionary.
    pub fn build(
        state: &ClusterState,
        pending: &[Pod],
        classes: &PodClasses,
    ) -> Result<Self, EncodeError> {
        Ok(Self::build_inner(state, pending, classes, None)?.0)
    }

    /// [`Dictionaries::build`] with the label pairs of nodes and bound pods taken from `side`
    /// (built for `state`): the same dictionaries, and how `side`'s ids map into them.
    pub(crate) fn build_shared(
        side: &NodeSide,
        state: &ClusterState,
        pending: &[Pod],
        classes: &PodClasses,
    ) -> Result<(Self, SharedIds), EncodeError> {
        let (d, ids) = Self::build_inner(state, pending, classes, Some(side))?;
        Ok((d, ids.unwrap_or_default()))
    }

    fn build_inner(
        state: &ClusterState,
        pending: &[Pod],
        classes: &PodClasses,
        side: Option<&NodeSide>,
    ) -> Result<(Self, Option<SharedIds>), EncodeError> {
        let sigs = || classes.classes.iter().map(|c| &c.signature);
        let bound = || state.nodes.iter().flat_map(|n| n.pods.iter().map(|p| p.as_ref()));

        // Resources.
        let mut scalar_names = BTreeSet::new();
        let mut note = |r: &crate::resources::Resource| {
            scalar_names.extend(r.scalar.iter().filter(|(_, v)| **v != 0).map(|(k, _)| k.clone()));
        };
        for node in &state.nodes {
            note(&node.allocatable);
            for pod in &node.pods {
                note(&pod.requests);
            }
        }
        for pod in pending {
            note(&pod.requests);
        }
        let mut units: Vec<ResourceUnit> =
            [CPU, MEMORY, EPHEMERAL_STORAGE, PODS].iter().map(|n| ResourceUnit::base(n)).collect();
        for name in scalar_names {
            // A scalar that spells a core name cannot occur (Resource keeps them apart), but
            // stay safe: core columns are never duplicated.
            if ![CPU, MEMORY, EPHEMERAL_STORAGE, PODS].contains(&name.as_str()) {
                units.push(ResourceUnit::base(&name));
            }
        }
        check_u32("resources", units.len())?;
        let resources = ResourceTable { units };

        // Topology keys.
        let mut topo: BTreeSet<String> =
            DEFAULT_TOPOLOGY_KEYS.iter().map(|s| s.to_string()).collect();
        for sig in sigs() {
            topo.extend(sig.spread_constraints.iter().map(|c| c.topology_key.clone()));
            topo.extend(sig.affinity_terms().map(|t| t.topology_key.clone()));
        }
        for pod in bound() {
            for aff in [&pod.pod_affinity, &pod.pod_anti_affinity] {
                topo.extend(aff.required.iter().map(|t| t.topology_key.clone()));
                topo.extend(aff.preferred.iter().map(|t| t.term.topology_key.clone()));
            }
        }
        let topology_keys = Dict::build("topology keys", topo)?;
        let mut topology_domains = Vec::with_capacity(topology_keys.len());
        let mut domain_offsets = vec![0u32];
        let mut total: usize = 0;
        let mut domain_ranges = Vec::new();
        for key in topology_keys.items() {
            let d = match side {
                // The values of a key on nodes are the nodes' pairs of that key, sorted.
                Some(side) => {
                    let range = side.node_key_range(key);
                    domain_ranges.push(range.start as u32..range.end as u32);
                    Dict::from_sorted(
                        side.node_pairs[range].iter().map(|(_, v)| v.clone()).collect(),
                    )
                }
                None => Dict::build(
                    "topology domains",
                    state.nodes.iter().filter_map(|n| n.labels.get(key).cloned()),
                )?,
            };
            total += d.len();
            domain_offsets.push(check_u32("topology domains", total)?);
            topology_domains.push(d);
        }

        // Selectors, node terms and requirements.
        let mut selectors = BTreeSet::new();
        let mut node_terms = BTreeSet::new();
        for sig in sigs() {
            selectors.extend(sig.spread_constraints.iter().filter_map(|c| c.selector.clone()));
            selectors.extend(sig.default_spread_selector.clone());
            selectors.extend(sig.affinity_terms().filter_map(|t| t.selector.clone()));
            if let Some(terms) = &sig.required_node_affinity {
                node_terms.extend(terms.iter().cloned());
            }
            node_terms.extend(sig.preferred_node_affinity.iter().map(|(_, t)| t.clone()));
        }
        let selectors = Dict::build("label selectors", selectors)?;
        let node_terms = Dict::build("node selector terms", node_terms)?;
        let mut reqs = BTreeSet::new();
        for term in node_terms.items() {
            reqs.extend(term.match_expressions.iter().map(|r| (RequirementKind::Label, r.clone())));
            reqs.extend(term.match_fields.iter().map(|r| (RequirementKind::Field, r.clone())));
        }
        for sel in selectors.items() {
            reqs.extend(sel.requirements.iter().map(|r| (RequirementKind::Label, r.clone())));
        }
        for sig in sigs() {
            reqs.extend(
                sig.node_selector
                    .iter()
                    .map(|(k, v)| (RequirementKind::Label, node_selector_requirement(k, v))),
            );
        }
        let requirements = Dict::build("requirements", reqs)?;

        // Labels.
        let mut shared = None;
        let pairs: Vec<(String, String)> = match side {
            None => {
                let mut pairs: BTreeSet<(String, String)> = BTreeSet::new();
                let mut add_labels = |labels: &crate::model::Labels| {
                    pairs.extend(labels.iter().map(|(k, v)| (k.clone(), v.clone())));
                };
                for node in &state.nodes {
                    add_labels(&node.labels);
                }
                for pod in bound() {
                    add_labels(&pod.labels);
                }
                for pod in pending {
                    add_labels(&pod.labels);
                }
                pairs.into_iter().collect()
            }
            Some(side) => {
                let own: BTreeSet<(String, String)> = pending
                    .iter()
                    .flat_map(|p| p.labels.iter().map(|(k, v)| (k.clone(), v.clone())))
                    .collect();
                let own: Vec<(String, String)> = own.into_iter().collect();
                let (pairs, mut maps) =
                    merge_sorted(&[&side.node_pairs[..], &side.pod_pairs[..], &own[..]]);
                maps.truncate(2);
                let pod_pair = maps.pop().unwrap_or_default();
                let node_pair = maps.pop().unwrap_or_default();
                shared = Some(SharedIds { node_pair, pod_pair, domain_ranges });
                pairs
            }
        };
        let mut keys: BTreeSet<String> = BTreeSet::new();
        for (k, _) in &pairs {
            // Pairs are sorted by key: each key once.
            if keys.last() != Some(k) {
                keys.insert(k.clone());
            }
        }
        keys.extend(
            requirements
                .items()
                .iter()
                .filter(|(kind, _)| *kind == RequirementKind::Label)
                .map(|(_, r)| r.key.clone()),
        );
        keys.extend(topology_keys.items().iter().cloned());
        let label_keys = Dict::build("label keys", keys)?;
        check_u32("label pairs", pairs.len())?;
        let pairs = Dict::from_sorted(pairs);
        let mut pair_key = Vec::with_capacity(pairs.len());
        let mut key_offsets = vec![0u32; label_keys.len() + 1];
        for (key, _) in pairs.items() {
            let k = label_keys.id(key.as_str()).unwrap_or(0);
            pair_key.push(k);
            if let Some(slot) = key_offsets.get_mut(k as usize + 1) {
                *slot += 1;
            }
        }
        for i in 1..key_offsets.len() {
            key_offsets[i] += key_offsets[i - 1];
        }
        let label_pairs = LabelPairs { pairs, pair_key, key_offsets };

        // Taints and tolerations.
        let taints =
            Dict::build("taints", state.nodes.iter().flat_map(|n| n.taints.iter().cloned()))?;
        let tolerations =
            Dict::build("tolerations", sigs().flat_map(|s| s.tolerations.iter().cloned()))?;

        // Images.
        let mut image_names: BTreeSet<String> = BTreeSet::new();
        let mut info: BTreeMap<&str, ImageInfo> = BTreeMap::new();
        for node in &state.nodes {
            // A name listed twice on one node takes its largest size, whatever the list order.
            let mut seen: BTreeMap<&str, i64> = BTreeMap::new();
            for image in &node.images {
                for name in &image.names {
                    let size = seen.entry(name.as_str()).or_insert(image.size_bytes);
                    *size = (*size).max(image.size_bytes);
                }
            }
            for (name, size) in &seen {
                let e = info.entry(name).or_insert(ImageInfo { size_bytes: *size, num_nodes: 0 });
                e.num_nodes += 1;
            }
            image_names.extend(seen.keys().map(|s| s.to_string()));
        }
        image_names.extend(sigs().flat_map(|s| s.images.iter().cloned()));
        let images = Dict::build("images", image_names)?;
        let image_info = images
            .items()
            .iter()
            .map(|n| info.get(n.as_str()).copied().unwrap_or_default())
            .collect();

        // Namespaces.
        let mut ns: BTreeSet<String> = state.namespace_labels.keys().cloned().collect();
        ns.extend(bound().map(|p| p.namespace.clone()));
        ns.extend(pending.iter().map(|p| p.namespace.clone()));
        for sig in sigs() {
            ns.extend(sig.affinity_terms().flat_map(|t| t.namespaces.iter().cloned()));
        }
        let namespaces = Dict::build("namespaces", ns)?;

        // Host ports.
        let mut ports: BTreeSet<HostPort> = BTreeSet::new();
        for node in &state.nodes {
            ports.extend(node.used_ports.iter().cloned());
        }
        for sig in sigs() {
            ports.extend(sig.host_ports.iter().cloned());
        }
        let host_ips = Dict::build("host IPs", ports.iter().map(|p| p.host_ip.clone()))?;
        let protocols = Dict::build("protocols", ports.iter().map(|p| p.protocol.clone()))?;
        let host_ports = Dict::build("host ports", ports)?;

        let dicts = Dictionaries {
            resources,
            label_keys,
            label_pairs,
            taints,
            tolerations,
            topology_keys,
            topology_domains,
            domain_offsets,
            images,
            image_info,
            namespaces,
            host_ports,
            host_ips,
            protocols,
            selectors,
            node_terms,
            requirements,
        };
        Ok((dicts, shared))
    }
}

/// Where a [`NodeSide`]'s ids went in the dictionaries of one encoding.
#[derive(Debug, Clone, Default)]
pub(crate) struct SharedIds {
    /// Per id in `NodeSide::node_pairs`: the label-pair id.
    pub node_pair: Vec<u32>,
    /// Per id in `NodeSide::pod_pairs`: the label-pair id.
    pub pod_pair: Vec<u32>,
    /// Per topology key: the range of `NodeSide::node_pairs` holding its domains, in order.
    pub domain_ranges: Vec<std::ops::Range<u32>>,
}

/// The requirement a `nodeSelector` entry stands for (`key In [value]`).
pub fn node_selector_requirement(key: &str, value: &str) -> Requirement {
    Requirement::new(key, MatchOp::In, &[value])
}

/// Every affinity term of a signature, in the order [`super::tensors`] lays them out.
impl super::classes::PodSignature {
    /// Required affinity, required anti-affinity, preferred affinity, preferred anti-affinity.
    pub fn affinity_terms(&self) -> impl Iterator<Item = &SigAffinityTerm> {
        self.pod_affinity_required
            .iter()
            .chain(&self.pod_anti_affinity_required)
            .chain(self.pod_affinity_preferred.iter().map(|(_, t)| t))
            .chain(self.pod_anti_affinity_preferred.iter().map(|(_, t)| t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::classes::classify;
    use crate::model::TaintEffect;
    use crate::model::testing::{NodeBuilder, PodBuilder, cluster};

    #[test]
    fn dictionary_ids_follow_sorted_order_whatever_the_insertion_order() {
        type Case = (&'static str, Vec<&'static str>, Vec<(&'static str, u32)>);
        let cases: &[Case] = &[
            (
                "ids are positions in sorted order",
                vec!["c", "a", "b"],
                vec![("a", 0), ("b", 1), ("c", 2)],
            ),
            ("duplicates share one id", vec!["b", "a", "b", "a"], vec![("a", 0), ("b", 1)]),
            (
                "reversed insertion gives the same ids",
                vec!["b", "c", "a"],
                vec![("a", 0), ("b", 1), ("c", 2)],
            ),
        ];
        for (name, items, want) in cases {
            let d = Dict::build("test", items.iter().map(|s| s.to_string())).unwrap();
            for (item, id) in want {
                assert_eq!(d.id(*item), Some(*id), "{name}: {item}");
                assert_eq!(d.get(*id).map(String::as_str), Some(*item), "{name}");
            }
            assert_eq!(d.len(), want.len(), "{name}");
            assert_eq!(d.id("zz"), None, "{name}: an absent item has no id");
        }
    }

    fn dicts(nodes: Vec<crate::model::Node>, bound: Vec<Pod>, pending: Vec<Pod>) -> Dictionaries {
        let state = cluster(nodes, bound);
        let classes = classify(&pending).unwrap();
        Dictionaries::build(&state, &pending, &classes).unwrap()
    }

    #[test]
    fn label_pairs_of_one_key_are_contiguous() {
        let d = dicts(
            vec![
                NodeBuilder::new("n2").label("zone", "b").label("disk", "ssd").obj(),
                NodeBuilder::new("n1").label("zone", "a").obj(),
            ],
            vec![],
            vec![PodBuilder::new("default", "p").label("app", "web").obj()],
        );
        let pairs: Vec<(&str, &str)> =
            d.label_pairs.pairs.items().iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(
            pairs,
            vec![
                ("app", "web"),
                ("disk", "ssd"),
                ("kubernetes.io/hostname", "n1"),
                ("kubernetes.io/hostname", "n2"),
                ("zone", "a"),
                ("zone", "b"),
            ]
        );
        let zone = d.label_keys.id("zone").unwrap();
        assert_eq!(d.label_pairs.key_range(zone), 4..6);
        let zone_topo_free = d.label_keys.id("topology.kubernetes.io/zone").unwrap();
        assert_eq!(
            d.label_pairs.key_range(zone_topo_free).len(),
            0,
            "a topology key no node has owns no pairs"
        );
        assert_eq!(d.label_pairs.id("zone", "b"), Some(5));
        for (id, k) in d.label_pairs.pair_key.iter().enumerate() {
            assert!(d.label_pairs.key_range(*k).contains(&(id as u32)));
        }
    }

    #[test]
    fn taints_sort_by_key_value_and_effect() {
        let d = dicts(
            vec![
                NodeBuilder::new("n1").taint("b", "", TaintEffect::NoSchedule).obj(),
                NodeBuilder::new("n2")
                    .taint("a", "x", TaintEffect::NoExecute)
                    .taint("a", "x", TaintEffect::NoSchedule)
                    .obj(),
            ],
            vec![],
            vec![],
        );
        let got: Vec<(&str, TaintEffect)> =
            d.taints.items().iter().map(|t| (t.key.as_str(), t.effect)).collect();
        assert_eq!(
            got,
            vec![
                ("a", TaintEffect::NoSchedule),
                ("a", TaintEffect::NoExecute),
                ("b", TaintEffect::NoSchedule)
            ]
        );
    }

    #[test]
    fn resource_columns_are_the_core_four_then_other_names_sorted() {
        let d = dicts(
            vec![
                NodeBuilder::new("n1")
                    .scalar("nvidia.com/gpu", 8)
                    .scalar("example.com/zero", 0)
                    .obj(),
            ],
            vec![],
            vec![PodBuilder::new("default", "p").scalar("amd.com/gpu", 1).obj()],
        );
        let names: Vec<&str> = d.resources.names().collect();
        assert_eq!(
            names,
            vec!["cpu", "memory", "ephemeral-storage", "pods", "amd.com/gpu", "nvidia.com/gpu"]
        );
        assert_eq!(d.resources.column("nvidia.com/gpu"), Some(5));
        assert_eq!(d.resources.column("pods"), Some(RESOURCE_PODS));
        assert_eq!(
            d.resources.column("example.com/zero"),
            None,
            "a resource only ever zero gets no column"
        );
    }

    #[test]
    fn topology_domains_are_numbered_per_key() {
        let d = dicts(
            vec![
                NodeBuilder::new("n1").label("topology.kubernetes.io/zone", "b").obj(),
                NodeBuilder::new("n2").label("topology.kubernetes.io/zone", "a").obj(),
                NodeBuilder::new("n3").obj(),
            ],
            vec![],
            vec![],
        );
        let host = d.topology_keys.id("kubernetes.io/hostname").unwrap();
        let zone = d.topology_keys.id("topology.kubernetes.io/zone").unwrap();
        assert_eq!(d.topology_domains[zone as usize].items(), &["a".to_string(), "b".to_string()]);
        assert_eq!(d.topology_domains[host as usize].len(), 3);
        assert_eq!(d.domain_offsets, vec![0, 3, 5]);
    }

    #[test]
    fn images_record_size_from_the_first_node_and_the_node_count() {
        let d = dicts(
            vec![
                NodeBuilder::new("n2").image(&["nginx:1"], 200).obj(),
                NodeBuilder::new("n1").image(&["nginx:1", "nginx@sha"], 100).obj(),
            ],
            vec![],
            vec![PodBuilder::new("default", "p").image("redis:7").obj()],
        );
        let nginx = d.images.id("nginx:1").unwrap() as usize;
        assert_eq!(d.image_info[nginx], ImageInfo { size_bytes: 100, num_nodes: 2 });
        let redis = d.images.id("redis:7").unwrap() as usize;
        assert_eq!(d.image_info[redis], ImageInfo { size_bytes: 0, num_nodes: 0 });
    }
}
