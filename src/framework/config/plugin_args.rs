//! `pluginConfig[].args` of a `KubeSchedulerConfiguration`: each plugin's arguments decoded
//! strictly, defaulted and validated as kube-scheduler v1.35 does, into [`PluginArgs`].
//!
//! Input: the `args` value of one `pluginConfig` entry and its field path. Output: the
//! plugin's arguments in [`PluginArgs`], or [`FieldError`]s naming each bad field.
//!
//! Counterparts (v1.35): `staging/src/k8s.io/kube-scheduler/config/v1/types_pluginargs.go`,
//! `pkg/scheduler/apis/config/v1/defaults.go` (`SetDefaults_*Args`) and
//! `pkg/scheduler/apis/config/validation/validation_pluginargs.go`.

use super::*;

/// Decodes, defaults and validates `pluginConfig[].args` for one plugin into `out`.
pub(super) fn apply_plugin_args(
    plugin: &str,
    value: &Value,
    path: &str,
    out: &mut PluginArgs,
    errors: &mut Vec<FieldError>,
    warnings: &mut Vec<String>,
) {
    let name = match PluginName::parse(plugin) {
        Ok(n) => n,
        Err(e @ PluginNameError::Removed { .. }) => {
            errors.push(FieldError::new(format!("{path}.name"), e.to_string()));
            return;
        }
        Err(PluginNameError::Unknown { .. }) => {
            warnings.push(format!(
                "{path}: configuration for {plugin:?}, which is not a kube-scheduler v1.35 plugin, is ignored"
            ));
            return;
        }
    };
    let args_path = format!("{path}.args");
    // Absent args decode as an empty object: every field takes its default.
    let empty = Value::Object(serde_json::Map::new());
    let value = if value.is_null() { &empty } else { value };
    let mut push = |e: FieldError| errors.push(e);
    match name {
        PluginName::NodeResourcesFit => match decode::<RawFitArgs>(value, &args_path) {
            Ok(raw) => {
                check_type_meta(name, &raw.api_version, &raw.kind, &args_path, &mut push);
                out.node_resources_fit = fit_args(raw, &args_path, &mut push);
            }
            Err(e) => push(e),
        },
        PluginName::NodeResourcesBalancedAllocation => {
            match decode::<RawBalancedAllocationArgs>(value, &args_path) {
                Ok(raw) => {
                    check_type_meta(name, &raw.api_version, &raw.kind, &args_path, &mut push);
                    out.balanced_allocation = balanced_allocation_args(raw, &args_path, &mut push);
                }
                Err(e) => push(e),
            }
        }
        PluginName::PodTopologySpread => {
            match decode::<RawPodTopologySpreadArgs>(value, &args_path) {
                Ok(raw) => {
                    check_type_meta(name, &raw.api_version, &raw.kind, &args_path, &mut push);
                    if let Some(list) = &raw.default_constraints
                        && let Some(e) = unknown_api_field(
                            value.get("defaultConstraints").unwrap_or(&Value::Null),
                            list,
                            &format!("{args_path}.defaultConstraints"),
                        )
                    {
                        push(e);
                    }
                    out.pod_topology_spread = spread_args(raw, &args_path, &mut push);
                }
                Err(e) => push(e),
            }
        }
        PluginName::InterPodAffinity => {
            match decode::<RawInterPodAffinityArgs>(value, &args_path) {
                Ok(raw) => {
                    check_type_meta(name, &raw.api_version, &raw.kind, &args_path, &mut push);
                    let weight = raw.hard_pod_affinity_weight.unwrap_or(1);
                    if !(0..=100).contains(&weight) {
                        push(FieldError::new(
                            format!("{args_path}.hardPodAffinityWeight"),
                            format!("{weight} is not in the valid range [0, 100]"),
                        ));
                    }
                    out.inter_pod_affinity = InterPodAffinityArgs {
                        hard_pod_affinity_weight: weight,
                        ignore_preferred_terms_of_existing_pods: raw
                            .ignore_preferred_terms_of_existing_pods
                            .unwrap_or(false),
                    };
                }
                Err(e) => push(e),
            }
        }
        PluginName::NodeAffinity => match decode::<RawNodeAffinityArgs>(value, &args_path) {
            Ok(raw) => {
                check_type_meta(name, &raw.api_version, &raw.kind, &args_path, &mut push);
                let added_path = format!("{args_path}.addedAffinity");
                if let Some(a) = &raw.added_affinity
                    && let Some(e) = unknown_api_field(
                        value.get("addedAffinity").unwrap_or(&Value::Null),
                        a,
                        &added_path,
                    )
                {
                    push(e);
                }
                out.node_affinity = NodeAffinityArgs {
                    added_affinity: raw
                        .added_affinity
                        .as_ref()
                        .map(|a| convert_node_affinity(a, &added_path, &mut push)),
                };
            }
            Err(e) => push(e),
        },
        PluginName::DefaultPreemption => {
            match decode::<RawDefaultPreemptionArgs>(value, &args_path) {
                Ok(raw) => {
                    check_type_meta(name, &raw.api_version, &raw.kind, &args_path, &mut push);
                    out.default_preemption = preemption_args(raw, &args_path, &mut push);
                }
                Err(e) => push(e),
            }
        }
        PluginName::VolumeBinding => match decode::<RawVolumeBindingArgs>(value, &args_path) {
            Ok(raw) => {
                check_type_meta(name, &raw.api_version, &raw.kind, &args_path, &mut push);
                if let Some(t) = raw.bind_timeout_seconds
                    && t < 0
                {
                    push(FieldError::new(
                        format!("{args_path}.bindTimeoutSeconds"),
                        format!("must not be negative, got {t}"),
                    ));
                }
                if let Some(shape) = &raw.shape {
                    validate_shape(shape, &format!("{args_path}.shape"), &mut push);
                }
            }
            Err(e) => push(e),
        },
        PluginName::DynamicResources => {
            match decode::<RawDynamicResourcesArgs>(value, &args_path) {
                Ok(raw) => {
                    check_type_meta(name, &raw.api_version, &raw.kind, &args_path, &mut push)
                }
                Err(e) => push(e),
            }
        }
        other => {
            if !value.as_object().is_some_and(|m| m.is_empty()) {
                warnings.push(format!(
                    "{args_path}: plugin {:?} takes no arguments; these are ignored",
                    other.as_str()
                ));
            }
        }
    }
}

/// `args.apiVersion` / `args.kind`, when present, must name `<Plugin>Args` in v1.
fn check_type_meta(
    plugin: PluginName,
    api_version: &Option<String>,
    kind: &Option<String>,
    path: &str,
    push: &mut impl FnMut(FieldError),
) {
    if let Some(v) = api_version
        && v != API_VERSION
    {
        push(FieldError::new(
            format!("{path}.apiVersion"),
            format!("expected {API_VERSION:?}, got {v:?}"),
        ));
    }
    let want = format!("{}Args", plugin.as_str());
    if let Some(k) = kind
        && *k != want
    {
        push(FieldError::new(
            format!("{path}.kind"),
            format!("args for plugin {} must be of kind {want:?}, got {k:?}", plugin.as_str()),
        ));
    }
}

/// Upstream `validateFunctionShape`: at least one point, utilization strictly increasing,
/// utilization in [0, 100], score in [0, 10].
fn validate_shape(shape: &[RawShapePoint], path: &str, push: &mut impl FnMut(FieldError)) {
    if shape.is_empty() {
        push(FieldError::new(path, "required: at least one point must be specified"));
        return;
    }
    if let Some(i) = (1..shape.len()).find(|&i| shape[i - 1].utilization >= shape[i].utilization) {
        push(FieldError::new(
            format!("{path}[{i}].utilization"),
            format!(
                "{} is not greater than the previous point: values must be sorted in increasing order",
                shape[i].utilization
            ),
        ));
    }
    for (i, p) in shape.iter().enumerate() {
        if !(0..=100).contains(&p.utilization) {
            push(FieldError::new(
                format!("{path}[{i}].utilization"),
                format!("{} is not in the valid range [0, 100]", p.utilization),
            ));
        }
        if !(0..=10).contains(&p.score) {
            push(FieldError::new(
                format!("{path}[{i}].score"),
                format!("{} is not in the valid range [0, 10]", p.score),
            ));
        }
    }
}

/// `NodeResourcesFitArgs`: `SetDefaults_NodeResourcesFitArgs` then
/// `ValidateNodeResourcesFitArgs`.
fn fit_args(
    raw: RawFitArgs,
    path: &str,
    push: &mut impl FnMut(FieldError),
) -> NodeResourcesFitArgs {
    let ignored_resources = raw.ignored_resources.unwrap_or_default();
    for (i, r) in ignored_resources.iter().enumerate() {
        for msg in qualified_name_errors(r) {
            push(FieldError::new(format!("{path}.ignoredResources[{i}]"), format!("{r:?}: {msg}")));
        }
    }
    let ignored_resource_groups = raw.ignored_resource_groups.unwrap_or_default();
    for (i, g) in ignored_resource_groups.iter().enumerate() {
        let field = format!("{path}.ignoredResourceGroups[{i}]");
        if g.contains('/') {
            push(FieldError::new(&field, format!("{g:?}: resource group name can't contain '/'")));
        }
        for msg in qualified_name_errors(g) {
            push(FieldError::new(&field, format!("{g:?}: {msg}")));
        }
    }

    let strategy_path = format!("{path}.scoringStrategy");
    let scoring_strategy = match raw.scoring_strategy {
        None => ScoringStrategy::default(),
        Some(s) => {
            let type_name = s.strategy_type.unwrap_or_default();
            let kind = match type_name.as_str() {
                "LeastAllocated" => ScoringStrategyType::LeastAllocated,
                "MostAllocated" => ScoringStrategyType::MostAllocated,
                "RequestedToCapacityRatio" => ScoringStrategyType::RequestedToCapacityRatio,
                other => {
                    push(FieldError::new(
                        format!("{strategy_path}.type"),
                        format!(
                            "unsupported value {other:?}: supported values are \"LeastAllocated\", \
                             \"MostAllocated\", \"RequestedToCapacityRatio\""
                        ),
                    ));
                    ScoringStrategyType::LeastAllocated
                }
            };
            let resources = resource_specs(
                s.resources,
                |i, r| {
                    (r.weight <= 0 || r.weight > 100).then(|| {
                        FieldError::new(
                            format!("{strategy_path}.resources[{i}].weight"),
                            format!(
                                "resource weight of {} not in valid range (0, 100], got {}",
                                r.name, r.weight
                            ),
                        )
                    })
                },
                push,
            );
            let rtcr_path = format!("{strategy_path}.requestedToCapacityRatio");
            let mut shape = Vec::new();
            match (kind, s.requested_to_capacity_ratio) {
                (ScoringStrategyType::RequestedToCapacityRatio, None) => push(FieldError::new(
                    rtcr_path,
                    "required: must be specified when type is RequestedToCapacityRatio",
                )),
                (ScoringStrategyType::RequestedToCapacityRatio, Some(r)) => {
                    let points = r.shape.unwrap_or_default();
                    validate_shape(&points, &format!("{rtcr_path}.shape"), push);
                    shape = points
                        .iter()
                        .map(|p| UtilizationShapePoint {
                            utilization: p.utilization,
                            score: p.score,
                        })
                        .collect();
                }
                (_, Some(_)) => push(FieldError::new(
                    rtcr_path,
                    "forbidden: must be absent when type is not RequestedToCapacityRatio",
                )),
                _ => {}
            }
            ScoringStrategy { kind, resources, shape }
        }
    };
    NodeResourcesFitArgs { ignored_resources, ignored_resource_groups, scoring_strategy }
}

/// Resource specs with upstream's defaulting (empty list: cpu and memory; weight 0 or absent: 1),
/// each checked by `check`.
fn resource_specs(
    raw: Option<Vec<RawResourceSpec>>,
    check: impl Fn(usize, &ResourceSpec) -> Option<FieldError>,
    push: &mut impl FnMut(FieldError),
) -> Vec<ResourceSpec> {
    let raw = raw.unwrap_or_default();
    if raw.is_empty() {
        return default_resource_specs();
    }
    let specs: Vec<ResourceSpec> = raw
        .into_iter()
        .map(|r| {
            let w = r.weight.unwrap_or(0);
            ResourceSpec { name: r.name, weight: if w == 0 { 1 } else { w } }
        })
        .collect();
    for (i, s) in specs.iter().enumerate() {
        if let Some(e) = check(i, s) {
            push(e);
        }
    }
    specs
}

/// `NodeResourcesBalancedAllocationArgs`: defaults, then no duplicate names and every weight 1.
fn balanced_allocation_args(
    raw: RawBalancedAllocationArgs,
    path: &str,
    push: &mut impl FnMut(FieldError),
) -> NodeResourcesBalancedAllocationArgs {
    let resources_path = format!("{path}.resources");
    let resources = resource_specs(raw.resources, |_, _| None, push);
    for (i, r) in resources.iter().enumerate() {
        if resources[..i].iter().any(|o| o.name == r.name) {
            push(FieldError::new(
                format!("{resources_path}[{i}].name"),
                format!("duplicate resource {:?}", r.name),
            ));
        }
        if r.weight != 1 {
            push(FieldError::new(
                format!("{resources_path}[{i}].weight"),
                format!("must be 1, got {}", r.weight),
            ));
        }
    }
    NodeResourcesBalancedAllocationArgs { resources }
}

/// `DefaultPreemptionArgs`: defaults 10% / 100, then the ranges.
fn preemption_args(
    raw: RawDefaultPreemptionArgs,
    path: &str,
    push: &mut impl FnMut(FieldError),
) -> DefaultPreemptionArgs {
    let defaults = DefaultPreemptionArgs::default();
    let pct = raw.min_candidate_nodes_percentage.unwrap_or(defaults.min_candidate_nodes_percentage);
    let abs = raw.min_candidate_nodes_absolute.unwrap_or(defaults.min_candidate_nodes_absolute);
    let pct_path = format!("{path}.minCandidateNodesPercentage");
    let abs_path = format!("{path}.minCandidateNodesAbsolute");
    if !(0..=100).contains(&pct) {
        push(FieldError::new(&pct_path, format!("{pct} is not in the valid range [0, 100]")));
    }
    if abs < 0 {
        push(FieldError::new(&abs_path, format!("{abs} is not in the valid range [0, inf)")));
    }
    if pct == 0 && abs == 0 {
        push(FieldError::new(
            &pct_path,
            "cannot be zero at the same time as minCandidateNodesAbsolute",
        ));
        push(FieldError::new(
            &abs_path,
            "cannot be zero at the same time as minCandidateNodesPercentage",
        ));
    }
    DefaultPreemptionArgs { min_candidate_nodes_percentage: pct, min_candidate_nodes_absolute: abs }
}

/// `PodTopologySpreadArgs`: `defaultingType` defaults to `System`; validation as upstream's
/// `ValidatePodTopologySpreadArgs`.
fn spread_args(
    raw: RawPodTopologySpreadArgs,
    path: &str,
    push: &mut impl FnMut(FieldError),
) -> PodTopologySpreadArgs {
    let constraints = raw.default_constraints.unwrap_or_default();
    let type_name =
        raw.defaulting_type.filter(|t| !t.is_empty()).unwrap_or_else(|| "System".into());
    let defaulting_type = match type_name.as_str() {
        "System" => {
            if !constraints.is_empty() {
                push(FieldError::new(
                    format!("{path}.defaultingType"),
                    "\"System\" is invalid when defaultConstraints are not empty (use \"List\")",
                ));
            }
            SpreadDefaultingType::System
        }
        "List" => SpreadDefaultingType::List,
        other => {
            push(FieldError::new(
                format!("{path}.defaultingType"),
                format!("unsupported value {other:?}: supported values are \"List\", \"System\""),
            ));
            SpreadDefaultingType::System
        }
    };
    let list_path = format!("{path}.defaultConstraints");
    let mut default_constraints = Vec::new();
    for (i, c) in constraints.iter().enumerate() {
        let p = format!("{list_path}[{i}]");
        if c.max_skew <= 0 {
            push(FieldError::new(
                format!("{p}.maxSkew"),
                format!("{} is not in the valid range (0, inf)", c.max_skew),
            ));
        }
        if c.topology_key.is_empty() {
            push(FieldError::new(format!("{p}.topologyKey"), "required: can not be empty"));
        } else {
            for msg in qualified_name_errors(&c.topology_key) {
                push(FieldError::new(
                    format!("{p}.topologyKey"),
                    format!("{:?}: {msg}", c.topology_key),
                ));
            }
        }
        let when = match c.when_unsatisfiable.as_str() {
            "DoNotSchedule" => Some(UnsatisfiableAction::DoNotSchedule),
            "ScheduleAnyway" => Some(UnsatisfiableAction::ScheduleAnyway),
            "" => {
                push(FieldError::new(
                    format!("{p}.whenUnsatisfiable"),
                    "required: can not be empty",
                ));
                None
            }
            other => {
                push(FieldError::new(
                    format!("{p}.whenUnsatisfiable"),
                    format!(
                        "unsupported value {other:?}: supported values are \"DoNotSchedule\", \"ScheduleAnyway\""
                    ),
                ));
                None
            }
        };
        if c.label_selector.is_some() {
            push(FieldError::new(
                format!("{p}.labelSelector"),
                "forbidden: constraint must not define a selector, as they deduced for each pod",
            ));
        }
        if constraints[..i].iter().any(|o| {
            o.topology_key == c.topology_key && o.when_unsatisfiable == c.when_unsatisfiable
        }) {
            push(FieldError::new(
                &p,
                format!("duplicate value {{{}, {}}}", c.topology_key, c.when_unsatisfiable),
            ));
        }
        if let Some(when_unsatisfiable) = when {
            default_constraints.push(convert_spread_constraint(c, when_unsatisfiable));
        }
    }
    PodTopologySpreadArgs { default_constraints, defaulting_type }
}

/// A default spread constraint in the model (through the same conversion the snapshot uses).
/// The selector stays `None`: the plugin derives it per pod. Validation has already rejected
/// anything the conversion could refuse; should it still refuse, the policy defaults apply.
fn convert_spread_constraint(
    c: &corev1::TopologySpreadConstraint,
    when_unsatisfiable: UnsatisfiableAction,
) -> TopologySpreadConstraint {
    let mut c = c.clone();
    c.label_selector = None;
    let policy = |v: &Option<String>| match v.as_deref() {
        Some("Honor") | Some("Ignore") | None => v.clone(),
        Some(_) => Some("Ignore".to_string()),
    };
    c.node_affinity_policy = policy(&c.node_affinity_policy);
    c.node_taints_policy = policy(&c.node_taints_policy);
    let mut out = crate::snapshot::convert::topology_spread_constraint(&c, &Default::default())
        .unwrap_or_else(|_| TopologySpreadConstraint {
            max_skew: c.max_skew,
            topology_key: c.topology_key.clone(),
            when_unsatisfiable,
            label_selector: None,
            min_domains: c.min_domains,
            node_affinity_policy: InclusionPolicy::Honor,
            node_taints_policy: InclusionPolicy::Ignore,
            match_label_keys: c.match_label_keys.clone().unwrap_or_default(),
        });
    out.when_unsatisfiable = when_unsatisfiable;
    out.label_selector = None;
    out
}

/// `addedAffinity` in the model, validated as upstream's `ValidateNodeAffinityArgs`
/// (`nodeaffinity.NewNodeSelector` / `NewPreferredSchedulingTerms`: operators, value counts,
/// label keys and values, `matchFields` with one value and `In`/`NotIn`), then converted with
/// the snapshot's conversion.
fn convert_node_affinity(
    a: &corev1::NodeAffinity,
    path: &str,
    push: &mut impl FnMut(FieldError),
) -> NodeAffinity {
    if let Some(ns) = &a.required_during_scheduling_ignored_during_execution {
        let base =
            format!("{path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms");
        for (i, t) in ns.node_selector_terms.iter().enumerate() {
            validate_term(t, &format!("{base}[{i}]"), push);
        }
    }
    for (i, t) in
        a.preferred_during_scheduling_ignored_during_execution.iter().flatten().enumerate()
    {
        validate_term(
            &t.preference,
            &format!("{path}.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference"),
            push,
        );
    }
    crate::snapshot::convert::node_affinity(a)
}

fn validate_term(t: &corev1::NodeSelectorTerm, path: &str, push: &mut impl FnMut(FieldError)) {
    for (i, r) in t.match_expressions.iter().flatten().enumerate() {
        let p = format!("{path}.matchExpressions[{i}]");
        let values = r.values.clone().unwrap_or_default();
        let Some(op) = MatchOp::parse(&r.operator) else {
            push(FieldError::new(
                format!("{p}.operator"),
                format!(
                    "unsupported value {:?}: supported values are \"DoesNotExist\", \
                     \"Exists\", \"Gt\", \"In\", \"Lt\", \"NotIn\"",
                    r.operator
                ),
            ));
            continue;
        };
        for msg in qualified_name_errors(&r.key) {
            push(FieldError::new(format!("{p}.key"), format!("{:?}: {msg}", r.key)));
        }
        let count_error = match op {
            MatchOp::In | MatchOp::NotIn if values.is_empty() => {
                Some("for 'in', 'notin' operators, values set can't be empty")
            }
            MatchOp::Exists | MatchOp::DoesNotExist if !values.is_empty() => {
                Some("values set must be empty for exists and does not exist")
            }
            MatchOp::Gt | MatchOp::Lt if values.len() != 1 => {
                Some("for 'Gt', 'Lt' operators, exactly one value is required")
            }
            _ => None,
        };
        if let Some(msg) = count_error {
            push(FieldError::new(format!("{p}.values"), msg));
        }
        for (j, v) in values.iter().enumerate() {
            if matches!(op, MatchOp::Gt | MatchOp::Lt) && v.parse::<i64>().is_err() {
                push(FieldError::new(
                    format!("{p}.values[{j}]"),
                    format!("{v:?}: for 'Gt', 'Lt' operators, the value must be an integer"),
                ));
            }
            for msg in label_value_errors(v) {
                push(FieldError::new(format!("{p}.values[{j}]"), format!("{v:?}: {msg}")));
            }
        }
    }
    for (i, r) in t.match_fields.iter().flatten().enumerate() {
        let p = format!("{path}.matchFields[{i}]");
        if !matches!(r.operator.as_str(), "In" | "NotIn") {
            push(FieldError::new(
                format!("{p}.operator"),
                format!(
                    "unsupported value {:?}: supported values are \"In\", \"NotIn\"",
                    r.operator
                ),
            ));
            continue;
        }
        if r.values.as_ref().map_or(0, Vec::len) != 1 {
            push(FieldError::new(format!("{p}.values"), "must have one element"));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// apimachinery's name checks (`k8s.io/apimachinery/pkg/util/validation`).
// ---------------------------------------------------------------------------------------------

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, the name part of a qualified name and a
/// non-empty label value.
fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: &u8| c.is_ascii_alphanumeric();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            alnum(f) && alnum(l) && b.iter().all(|c| alnum(c) || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// `IsDNS1123Subdomain`.
fn dns1123_subdomain_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    let label_ok = |l: &str| {
        let b = l.as_bytes();
        let ok = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        match (b.first(), b.last()) {
            (Some(f), Some(e)) => ok(f) && ok(e) && b.iter().all(|c| ok(c) || *c == b'-'),
            _ => false,
        }
    };
    if !s.split('.').all(label_ok) {
        errs.push(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \
             '-' or '.', and must start and end with an alphanumeric character"
                .to_string(),
        );
    }
    errs
}

/// `IsQualifiedName`: an optional DNS subdomain prefix and `/`, then a name of at most 63
/// characters.
fn qualified_name_errors(value: &str) -> Vec<String> {
    const NAME_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', \
                            and must start and end with an alphanumeric character";
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(
                    dns1123_subdomain_errors(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            errs.push(
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and \
                 must start and end with an alphanumeric character, with an optional DNS \
                 subdomain prefix and '/' (e.g. 'example.com/MyName')"
                    .to_string(),
            );
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 characters".to_string());
    }
    if !is_qualified_name_part(name) {
        errs.push(NAME_MSG.to_string());
    }
    errs
}

/// `IsValidLabelValue`: empty, or at most 63 characters of the qualified-name form.
fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        errs.push(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', \
             '_' or '.', and must start and end with an alphanumeric character"
                .to_string(),
        );
    }
    errs
}
