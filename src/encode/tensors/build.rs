//! Building the dense arrays: each node's resources and lists, the shared requirement and
//! term tables, and each class's resources and lists, in that order (the layout is in
//! [`super`]'s docs); also the adaptive units' fitting and one node's usage column as an
//! incremental update encodes it.
//!
//! Input: the [`ClusterState`], the pending pods, the [`PodClasses`] and the
//! [`Dictionaries`]. Output: [`Tensors`], or the first amount that does not fit its unit,
//! named. No upstream counterpart.

use super::*;

/// Raises the shift of every adaptive resource column until all its amounts fit (see
/// [`crate::encode::units`]). Fixed columns are left alone (their overflow is reported when
/// encoding).
pub fn fit_adaptive_units(table: &mut ResourceTable, state: &ClusterState, classes: &PodClasses) {
    for unit in table.units.iter_mut().filter(|u| u.adaptive) {
        let name = unit.name.as_str();
        let capacities: Vec<i64> = state.nodes.iter().map(|n| n.allocatable.get(name)).collect();
        let mut groups: Vec<Vec<i64>> = state
            .nodes
            .iter()
            .map(|n| n.pods.iter().map(|p| p.requests.get(name)).collect())
            .collect();
        groups.extend(classes.classes.iter().map(|c| vec![c.signature.requests.get(name)]));
        match smallest_fitting_shift(unit.shift, &capacities, groups.iter().map(Vec::as_slice)) {
            Some(shift) => unit.shift = shift,
            None => {
                // Only a negative amount (or a sum beyond any shift) gets here: encode at the
                // largest shift so that the encoding step names the offender.
                unit.shift = MAX_SHIFT;
            }
        }
    }
}

struct Ctx<'a> {
    state: &'a ClusterState,
    classes: &'a PodClasses,
    dicts: &'a Dictionaries,
    pending: &'a [crate::model::Pod],
    /// The nodes' and bound pods' label pairs collected once, and where they went.
    shared: Option<(&'a NodeSide, &'a SharedIds)>,
}

fn amount_error(
    e: AmountError,
    subject: Subject,
    unit: &crate::encode::units::ResourceUnit,
    field: AmountField,
    value: i64,
) -> EncodeError {
    match e {
        AmountError::Negative => {
            EncodeError::Negative { subject, resource: unit.name.clone(), field, value }
        }
        AmountError::TooLarge { .. } => EncodeError::Overflow {
            subject,
            resource: unit.name.clone(),
            field,
            value,
            max: crate::encode::units::AMOUNT_MAX,
            unit: unit.unit_name(),
        },
    }
}

impl Tensors {
    /// Builds every array. `dicts.resources` must already have its adaptive shifts fitted
    /// ([`fit_adaptive_units`]).
    pub fn build(
        state: &ClusterState,
        pending: &[crate::model::Pod],
        classes: &PodClasses,
        dicts: &Dictionaries,
    ) -> Result<Self, EncodeError> {
        Self::build_inner(Ctx { state, classes, dicts, pending, shared: None })
    }

    /// [`Tensors::build`] with the nodes' and bound pods' label ids renumbered from `side`
    /// (what [`Dictionaries::build_shared`] returned with `dicts`).
    pub(crate) fn build_shared(
        side: &NodeSide,
        ids: &SharedIds,
        state: &ClusterState,
        pending: &[crate::model::Pod],
        classes: &PodClasses,
        dicts: &Dictionaries,
    ) -> Result<Self, EncodeError> {
        Self::build_inner(Ctx { state, classes, dicts, pending, shared: Some((side, ids)) })
    }

    fn build_inner(cx: Ctx<'_>) -> Result<Self, EncodeError> {
        let (state, classes, dicts) = (cx.state, cx.classes, cx.dicts);
        let n = state.nodes.len();
        let c = classes.len();
        let r = dicts.resources.len();
        check_u32("nodes", n)?;
        check_u32("pod classes", c)?;

        let mut t = Tensors {
            node_allocatable: Array2::zeros((n, r)),
            node_requested: Array2::zeros((n, r)),
            node_nonzero_requested: Array2::zeros((n, r)),
            node_flags: Array1::zeros(n),
            node_labels: Csr::default(),
            node_taints: Csr::default(),
            node_images: Csr::default(),
            node_used_ports: Csr::default(),
            node_domains: Array2::from_elem((n, dicts.topology_keys.len()), NONE),
            node_bound_pods: Csr::default(),
            bound_pod_node: Array1::zeros(0),
            bound_pod_namespace: Array1::zeros(0),
            bound_pod_priority: Array1::zeros(0),
            bound_pod_labels: Csr::default(),
            class_requests: Array2::zeros((c, r)),
            class_nonzero_requests: Array2::zeros((c, r)),
            class_flags: Array1::zeros(c),
            class_priority: Array1::zeros(c),
            class_size: Array1::zeros(c),
            class_namespace: Array1::zeros(c),
            class_node_name: Array1::from_elem(c, NONE),
            class_default_spread_selector: Array1::from_elem(c, NONE),
            class_labels: Csr::default(),
            class_tolerations: Csr::default(),
            class_tolerated_taints: Csr::default(),
            class_host_ports: Csr::default(),
            class_images: Csr::default(),
            class_node_selector: Csr::default(),
            class_required_terms: Csr::default(),
            class_preferred_terms: Csr::default(),
            class_preferred_weights: Vec::new(),
            class_spread: Csr::default(),
            class_affinity: Csr::default(),
            requirements: Vec::new(),
            requirement_sets: Vec::new(),
            node_terms: Csr::default(),
            node_term_flags: Vec::new(),
            selectors: Csr::default(),
            spread: Vec::new(),
            affinity: Vec::new(),
            affinity_namespaces: Csr::default(),
            taint_effects: dicts.taints.items().iter().map(|t| effect_code(t.effect)).collect(),
        };
        t.encode_node_resources(&cx)?;
        t.encode_node_lists(&cx)?;
        t.compile_requirements(&cx)?;
        t.encode_class_resources(&cx)?;
        t.encode_class_lists(&cx)?;
        Ok(t)
    }

    fn encode_node_resources(&mut self, cx: &Ctx<'_>) -> Result<(), EncodeError> {
        for (i, node) in cx.state.nodes.iter().enumerate() {
            let subject = || Subject::Node(node.name.clone());
            let mut exact = true;
            for (j, unit) in cx.dicts.resources.units.iter().enumerate() {
                let name = unit.name.as_str();
                let raw = node.allocatable.get(name);
                let alloc = encode_amount(raw, unit.shift, Rounding::Down)
                    .map_err(|e| amount_error(e, subject(), unit, AmountField::Allocatable, raw))?;
                let (requested, nonzero) = encode_node_usage_column(node, unit)?;
                exact &= alloc.exact && requested.exact && nonzero.exact;
                self.node_allocatable[[i, j]] = alloc.value;
                self.node_requested[[i, j]] = requested.value;
                self.node_nonzero_requested[[i, j]] = nonzero.value;
            }
            let mut flags = 0;
            if node.unschedulable {
                flags |= NODE_UNSCHEDULABLE;
            }
            if !exact {
                flags |= NODE_INEXACT_UNITS;
            }
            self.node_flags[i] = flags;
        }
        Ok(())
    }

    fn encode_node_lists(&mut self, cx: &Ctx<'_>) -> Result<(), EncodeError> {
        let d = cx.dicts;
        let mut bound_node = Vec::new();
        let mut bound_ns = Vec::new();
        let mut bound_prio = Vec::new();
        let mut bound_index = 0usize;
        for (i, node) in cx.state.nodes.iter().enumerate() {
            match cx.shared {
                // The map is increasing, so a renumbered row stays ascending.
                Some((side, ids)) => self.node_labels.push_row(
                    "node labels",
                    side.node_rows.row(i).iter().map(|&p| ids.node_pair[p as usize]),
                )?,
                None => self
                    .node_labels
                    .push_row("node labels", sorted_ids(label_ids(d, &node.labels)))?,
            }
            self.node_taints.push_row(
                "node taints",
                sorted_ids(node.taints.iter().filter_map(|t| d.taints.id(t))),
            )?;
            self.node_images.push_row(
                "node images",
                sorted_ids(
                    node.images
                        .iter()
                        .flat_map(|im| im.names.iter())
                        .filter_map(|n| d.images.id(n.as_str())),
                ),
            )?;
            self.node_used_ports.push_row(
                "node ports",
                sorted_ids(node.used_ports.iter().filter_map(|p| d.host_ports.id(p))),
            )?;
            match cx.shared {
                // A node has at most one pair of a key; its domain is that pair's place in
                // the key's range.
                Some((side, ids)) => {
                    let row = side.node_rows.row(i);
                    for (k, range) in ids.domain_ranges.iter().enumerate() {
                        let at = row.partition_point(|&p| p < range.start);
                        if let Some(&p) = row.get(at).filter(|&&p| p < range.end) {
                            self.node_domains[[i, k]] = p - range.start;
                        }
                    }
                }
                None => {
                    for (k, key) in d.topology_keys.items().iter().enumerate() {
                        if let (Some(value), Some(domains)) =
                            (node.labels.get(key), d.topology_domains.get(k))
                        {
                            self.node_domains[[i, k]] = domains.id(value.as_str()).unwrap_or(NONE);
                        }
                    }
                }
            }
            let first = bound_node.len();
            for pod in &node.pods {
                bound_node.push(i as u32);
                bound_ns.push(d.namespaces.id(pod.namespace.as_str()).unwrap_or(NONE));
                bound_prio.push(pod.priority);
                match cx.shared {
                    Some((side, ids)) => self.bound_pod_labels.push_row(
                        "bound pod labels",
                        side.pod_rows.row(bound_index).iter().map(|&p| ids.pod_pair[p as usize]),
                    )?,
                    None => self
                        .bound_pod_labels
                        .push_row("bound pod labels", sorted_ids(label_ids(d, &pod.labels)))?,
                }
                bound_index += 1;
            }
            let b = check_u32("bound pods", bound_node.len())?;
            self.node_bound_pods.push_row("bound pods", (first as u32)..b)?;
        }
        self.bound_pod_node = Array1::from_vec(bound_node);
        self.bound_pod_namespace = Array1::from_vec(bound_ns);
        self.bound_pod_priority = Array1::from_vec(bound_prio);
        Ok(())
    }

    fn compile_requirements(&mut self, cx: &Ctx<'_>) -> Result<(), EncodeError> {
        let d = cx.dicts;
        for (kind, req) in d.requirements.items() {
            let (mut flags, key, lo, hi, mut set) = match kind {
                RequirementKind::Label => compile_label(d, req),
                RequirementKind::Field => compile_field(cx.state, req),
            };
            let universe = match kind {
                RequirementKind::Label => (hi - lo) as usize,
                RequirementKind::Field => cx.state.nodes.len(),
            };
            // Store the smaller of the set and its complement.
            if set.len() * 2 > universe {
                let base = if *kind == RequirementKind::Label { lo } else { 0 };
                let all = base..base + universe as u32;
                set = complement(all, &set);
                flags ^= REQ_NEGATE;
            }
            let set_start = check_u32("requirement sets", self.requirement_sets.len())?;
            let set_count = check_u32("requirement sets", set.len())?;
            self.requirement_sets.extend(set);
            check_u32("requirement sets", self.requirement_sets.len())?;
            self.requirements.push(CompiledRequirement {
                flags,
                key,
                pair_lo: lo,
                pair_hi: hi,
                set_start,
                set_count,
            });
        }
        for term in d.node_terms.items() {
            let ids = term
                .match_expressions
                .iter()
                .map(|r| (RequirementKind::Label, r))
                .chain(term.match_fields.iter().map(|r| (RequirementKind::Field, r)))
                .filter_map(|(k, r)| d.requirements.id_by(|(k2, r2)| (k2, r2).cmp(&(&k, r))));
            self.node_terms.push_row("node term requirements", ids)?;
            let mut flags = 0;
            if term.never_matches() {
                flags |= TERM_NEVER_MATCHES;
            }
            if term.invalid {
                flags |= TERM_INVALID;
            }
            self.node_term_flags.push(flags);
        }
        for sel in d.selectors.items() {
            let ids = sel.requirements.iter().filter_map(|r| {
                d.requirements.id_by(|(k2, r2)| (k2, r2).cmp(&(&RequirementKind::Label, r)))
            });
            self.selectors.push_row("selector requirements", ids)?;
        }
        Ok(())
    }

    fn encode_class_resources(&mut self, cx: &Ctx<'_>) -> Result<(), EncodeError> {
        for (ci, class) in cx.classes.classes.iter().enumerate() {
            let sig = &class.signature;
            let pod_key = cx.pending.get(class.representative).map(|p| p.key()).unwrap_or_default();
            let mut exact = true;
            for (j, unit) in cx.dicts.resources.units.iter().enumerate() {
                let name = unit.name.as_str();
                let (req, nz) = match name {
                    PODS => (1, 1),
                    CPU => (sig.requests.milli_cpu, sig.non_zero_milli_cpu),
                    MEMORY => (sig.requests.memory, sig.non_zero_memory),
                    _ => {
                        let v = sig.requests.get(name);
                        (v, v)
                    }
                };
                let enc = |raw: i64, field| {
                    encode_amount(raw, unit.shift, Rounding::Up).map_err(|e| {
                        amount_error(e, Subject::Pod(pod_key.clone()), unit, field, raw)
                    })
                };
                let a: Amount = enc(req, AmountField::Request)?;
                let b: Amount = enc(nz, AmountField::NonZeroRequest)?;
                exact &= a.exact && b.exact;
                self.class_requests[[ci, j]] = a.value;
                self.class_nonzero_requests[[ci, j]] = b.value;
            }
            if !exact {
                self.class_flags[ci] |= CLASS_INEXACT_UNITS;
            }
        }
        Ok(())
    }

    fn encode_class_lists(&mut self, cx: &Ctx<'_>) -> Result<(), EncodeError> {
        let d = cx.dicts;
        let unschedulable_taint = Taint {
            key: UNSCHEDULABLE_TAINT_KEY.to_string(),
            value: String::new(),
            effect: TaintEffect::NoSchedule,
        };
        for (ci, class) in cx.classes.classes.iter().enumerate() {
            let sig: &PodSignature = &class.signature;
            let mut flags = self.class_flags[ci];
            let tolerates =
                |t: &Taint| sig.tolerations.iter().any(|tol: &TolerationShape| tol.tolerates(t));
            if tolerates(&unschedulable_taint) {
                flags |= CLASS_TOLERATES_UNSCHEDULABLE;
            }
            if sig.preempt_never {
                flags |= CLASS_PREEMPT_NEVER;
            }
            if !sig.node_selector.is_empty() {
                flags |= CLASS_HAS_NODE_SELECTOR;
            }
            if sig.required_node_affinity.is_some() {
                flags |= CLASS_HAS_REQUIRED_NODE_AFFINITY;
            }
            if let Some(name) = &sig.node_name {
                flags |= CLASS_HAS_NODE_NAME;
                self.class_node_name[ci] = cx.state.node_index(name).map_or(NONE, |i| i as u32);
            }
            if sig.has_pvc {
                flags |= CLASS_HAS_PVC;
            }
            self.class_flags[ci] = flags;
            self.class_priority[ci] = sig.priority;
            self.class_size[ci] = check_u32("class members", class.members.len())?;
            let own_ns = d.namespaces.id(sig.namespace.as_str()).unwrap_or(NONE);
            self.class_namespace[ci] = own_ns;
            self.class_default_spread_selector[ci] = sig
                .default_spread_selector
                .as_ref()
                .and_then(|s| d.selectors.id(s))
                .unwrap_or(NONE);

            self.class_labels.push_row("class labels", sorted_ids(label_ids(d, &sig.labels)))?;
            self.class_tolerations.push_row(
                "class tolerations",
                sig.tolerations.iter().filter_map(|t| d.tolerations.id(t)),
            )?;
            let tolerated = d
                .taints
                .items()
                .iter()
                .enumerate()
                .filter(|(_, t)| tolerates(t))
                .map(|(i, _)| i as u32);
            self.class_tolerated_taints.push_row("tolerated taints", tolerated)?;
            self.class_host_ports.push_row(
                "class ports",
                sig.host_ports.iter().filter_map(|p| d.host_ports.id(p)),
            )?;
            self.class_images.push_row(
                "class images",
                sig.images.iter().filter_map(|im| d.images.id(im.as_str())),
            )?;
            self.class_node_selector.push_row(
                "class node selector",
                sorted_ids(sig.node_selector.iter().filter_map(|(k, v)| {
                    let r = node_selector_requirement(k, v);
                    d.requirements.id_by(|(k2, r2)| (k2, r2).cmp(&(&RequirementKind::Label, &r)))
                })),
            )?;
            let required =
                sig.required_node_affinity.iter().flatten().filter_map(|t| d.node_terms.id(t));
            self.class_required_terms.push_row("required node terms", required)?;
            let mut weights = Vec::new();
            let preferred: Vec<u32> = sig
                .preferred_node_affinity
                .iter()
                .filter_map(|(w, t)| {
                    let id = d.node_terms.id(t)?;
                    weights.push(*w);
                    Some(id)
                })
                .collect();
            self.class_preferred_terms.push_row("preferred node terms", preferred)?;
            self.class_preferred_weights.extend(weights);

            let first = self.spread.len();
            for s in &sig.spread_constraints {
                let mut f = 0;
                if s.do_not_schedule {
                    f |= SPREAD_DO_NOT_SCHEDULE;
                }
                if s.honor_node_affinity {
                    f |= SPREAD_HONOR_NODE_AFFINITY;
                }
                if s.honor_node_taints {
                    f |= SPREAD_HONOR_NODE_TAINTS;
                }
                if s.min_domains.is_some() {
                    f |= SPREAD_HAS_MIN_DOMAINS;
                }
                self.spread.push(SpreadRow {
                    topology_key: d.topology_keys.id(s.topology_key.as_str()).unwrap_or(NONE),
                    max_skew: s.max_skew,
                    min_domains: s.min_domains.unwrap_or(0),
                    flags: f,
                    selector: s.selector.as_ref().and_then(|x| d.selectors.id(x)).unwrap_or(NONE),
                });
            }
            let end = check_u32("spread constraints", self.spread.len())?;
            self.class_spread.push_row("spread constraints", (first as u32)..end)?;

            let first = self.affinity.len();
            let rows = sig
                .pod_affinity_required
                .iter()
                .map(|t| (AFFINITY_REQUIRED, 0, t))
                .chain(
                    sig.pod_anti_affinity_required.iter().map(|t| (ANTI_AFFINITY_REQUIRED, 0, t)),
                )
                .chain(sig.pod_affinity_preferred.iter().map(|(w, t)| (AFFINITY_PREFERRED, *w, t)))
                .chain(
                    sig.pod_anti_affinity_preferred
                        .iter()
                        .map(|(w, t)| (ANTI_AFFINITY_PREFERRED, *w, t)),
                );
            for (kind, weight, term) in rows {
                let (ns, all) = term_namespaces(cx, term, &sig.namespace);
                self.affinity_namespaces.push_row("affinity namespaces", ns)?;
                self.affinity.push(AffinityRow {
                    kind,
                    weight,
                    topology_key: d.topology_keys.id(term.topology_key.as_str()).unwrap_or(NONE),
                    selector: term
                        .selector
                        .as_ref()
                        .and_then(|x| d.selectors.id(x))
                        .unwrap_or(NONE),
                    flags: if all { AFFINITY_ALL_NAMESPACES } else { 0 },
                });
            }
            let end = check_u32("affinity terms", self.affinity.len())?;
            self.class_affinity.push_row("affinity terms", (first as u32)..end)?;
        }
        Ok(())
    }
}

/// A node's usage of one resource column in encoded units: `(requested, non-zero requested)`,
/// as [`Tensors::node_requested`] and [`Tensors::node_nonzero_requested`] hold it (the pod count
/// for `pods`; every pod's request rounded up, then summed).
pub fn encode_node_usage_column(
    node: &crate::model::Node,
    unit: &crate::encode::units::ResourceUnit,
) -> Result<(Amount, Amount), EncodeError> {
    let name = unit.name.as_str();
    let requested = if name == PODS {
        let count = i64::try_from(node.pods.len()).unwrap_or(i64::MAX);
        encode_amount(count, 0, Rounding::Up).map_err(|e| {
            amount_error(e, Subject::Node(node.name.clone()), unit, AmountField::Requested, count)
        })?
    } else {
        sum_requests(node, unit, |p| p.requests.get(name), AmountField::Requested)?
    };
    let nonzero = match name {
        CPU => sum_requests(
            node,
            unit,
            |p| p.non_zero_requests.milli_cpu,
            AmountField::NonZeroRequested,
        )?,
        MEMORY => {
            sum_requests(node, unit, |p| p.non_zero_requests.memory, AmountField::NonZeroRequested)?
        }
        _ => requested,
    };
    Ok((requested, nonzero))
}

fn sum_requests(
    node: &crate::model::Node,
    unit: &crate::encode::units::ResourceUnit,
    get: impl Fn(&crate::model::Pod) -> i64,
    field: AmountField,
) -> Result<Amount, EncodeError> {
    for pod in &node.pods {
        let raw = get(pod);
        if let Err(e) = encode_amount(raw, unit.shift, Rounding::Up) {
            let f = if field == AmountField::Requested {
                AmountField::Request
            } else {
                AmountField::NonZeroRequest
            };
            return Err(amount_error(e, Subject::Pod(pod.key()), unit, f, raw));
        }
    }
    encode_request_sum(node.pods.iter().map(|p| get(p)), unit.shift).map_err(|e| {
        let total = node.pods.iter().fold(0i64, |acc, p| acc.saturating_add(get(p)));
        amount_error(e, Subject::Node(node.name.clone()), unit, field, total)
    })
}

fn label_ids<'a>(
    d: &'a Dictionaries,
    labels: &'a crate::model::Labels,
) -> impl Iterator<Item = u32> + 'a {
    labels.iter().filter_map(|(k, v)| d.label_pairs.id(k, v))
}

fn sorted_ids(ids: impl IntoIterator<Item = u32>) -> Vec<u32> {
    let mut v: Vec<u32> = ids.into_iter().collect();
    v.sort_unstable();
    v.dedup();
    v
}

fn complement(all: std::ops::Range<u32>, set: &[u32]) -> Vec<u32> {
    all.filter(|x| set.binary_search(x).is_err()).collect()
}

/// `(flags, key, pair_lo, pair_hi, matching pair ids)` of a label requirement.
fn compile_label(d: &Dictionaries, req: &Requirement) -> (u32, u32, u32, u32, Vec<u32>) {
    let key = d.label_keys.id(req.key.as_str()).unwrap_or(NONE);
    let range = if key == NONE { 0..0 } else { d.label_pairs.key_range(key) };
    let mut flags = 0;
    if req.matches_value(None) {
        flags |= REQ_ABSENT_MATCHES;
    }
    let matching: Vec<u32> = match req.op {
        // Direct lookups for the set operators; a scan for the rest.
        MatchOp::In => sorted_ids(req.values.iter().filter_map(|v| d.label_pairs.id(&req.key, v))),
        MatchOp::NotIn => {
            flags |= REQ_NEGATE;
            sorted_ids(req.values.iter().filter_map(|v| d.label_pairs.id(&req.key, v)))
        }
        _ => range
            .clone()
            .filter(|&p| {
                d.label_pairs.pairs.get(p).is_some_and(|(_, v)| req.matches_value(Some(v)))
            })
            .collect(),
    };
    (flags, key, range.start, range.end, matching)
}

/// `(flags, NONE, 0, 0, node indices)` of a field requirement (`metadata.name`).
fn compile_field(state: &ClusterState, req: &Requirement) -> (u32, u32, u32, u32, Vec<u32>) {
    let mut flags = REQ_FIELD;
    let is_name = req.key == "metadata.name";
    let set = match req.op {
        MatchOp::In if is_name => {
            sorted_ids(req.values.iter().filter_map(|v| state.node_index(v)).map(|i| i as u32))
        }
        MatchOp::NotIn if is_name => {
            flags |= REQ_NEGATE;
            sorted_ids(req.values.iter().filter_map(|v| state.node_index(v)).map(|i| i as u32))
        }
        _ if !is_name => Vec::new(),
        _ => state
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| req.matches_value(Some(&n.name)))
            .map(|(i, _)| i as u32)
            .collect(),
    };
    (flags, NONE, 0, 0, set)
}

/// Namespace ids an affinity term selects (upstream `getNamespacesFromPodAffinityTerm` plus the
/// namespace selector evaluated on every known namespace), and whether the selector is empty.
fn term_namespaces(cx: &Ctx<'_>, term: &SigAffinityTerm, own: &str) -> (Vec<u32>, bool) {
    let d = cx.dicts;
    if term.namespaces.is_empty() && term.namespace_selector.is_none() {
        return (d.namespaces.id(own).into_iter().collect(), false);
    }
    let mut ids: Vec<u32> =
        term.namespaces.iter().filter_map(|n| d.namespaces.id(n.as_str())).collect();
    let mut all = false;
    if let Some(sel) = &term.namespace_selector {
        all = sel.is_empty();
        for (i, ns) in d.namespaces.items().iter().enumerate() {
            if sel.matches(cx.state.namespace_labels(ns)) {
                ids.push(i as u32);
            }
        }
    }
    (sorted_ids(ids), all)
}
