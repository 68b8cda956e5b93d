//! `--config FILE`: a `KubeSchedulerConfiguration` (`kubescheduler.config.k8s.io/v1`), read as
//! kube-scheduler v1.35 reads it.
//!
//! Input: YAML or JSON text. Output: a [`SchedulerConfig`], one resolved [`Profile`] per
//! `profiles[]` entry, merged with upstream's defaults, or a [`ConfigError`] naming the file and
//! the field path of every problem.
//!
//! Counterparts (v1.35): `staging/src/k8s.io/kube-scheduler/config/v1/types.go` and
//! `types_pluginargs.go` (the schema; decoding is strict, so unknown fields are errors),
//! `pkg/scheduler/apis/config/v1/defaults.go` (defaults), `default_plugins.go` (plugin merge,
//! see [`crate::framework::profile`]), `pkg/scheduler/apis/config/validation/validation.go` and
//! `validation_pluginargs.go` (validation), and the checks `NewFramework` makes when it builds a
//! profile (`pkg/scheduler/framework/runtime/framework.go`).
//!
//! Fields that do not affect placement (`leaderElection`, `clientConnection`, `parallelism`,
//! backoff, profiling, `delayCacheUntilActive`) are accepted and checked as upstream checks
//! them, then dropped. `extenders` are refused: kplace cannot call them.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use k8s_openapi::api::core::v1 as corev1;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::args::{
    DefaultPreemptionArgs, InterPodAffinityArgs, NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs, PodTopologySpreadArgs, ResourceSpec,
    ScoringStrategy, ScoringStrategyType, SpreadDefaultingType, UtilizationShapePoint,
    default_resource_specs,
};
use super::profile::{
    DEFAULT_SCHEDULER_NAME, EnabledPlugin, ExtensionPoint, KPLACE_SCHEDULER_NAME, PluginArgs,
    PluginName, PluginNameError, PluginSet, PluginsConfig, Profile, default_plugins, expand,
    merge_plugins,
};
use crate::model::{
    InclusionPolicy, MatchOp, NodeAffinity, TopologySpreadConstraint, UnsatisfiableAction,
};

mod plugin_args;
use plugin_args::apply_plugin_args;

/// The only accepted `apiVersion`.
pub const API_VERSION: &str = "kubescheduler.config.k8s.io/v1";
/// The only accepted `kind`.
pub const KIND: &str = "KubeSchedulerConfiguration";

/// One problem in a configuration, at a field path such as
/// `profiles[0].pluginConfig[1].args.scoringStrategy.type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field path (empty for the document itself).
    pub field: String,
    /// What is wrong, in lower case, with the offending value quoted.
    pub message: String,
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for FieldError {}

impl FieldError {
    fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError { field: field.into(), message: message.into() }
    }
}

/// Why a configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("reading scheduler configuration {}: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The IO error.
        #[source]
        source: std::io::Error,
    },
    /// The text is not YAML or JSON.
    #[error("{source_name}: not valid YAML or JSON: {message}")]
    Syntax {
        /// The file name (or `<config>` for text).
        source_name: String,
        /// The parser's message.
        message: String,
    },
    /// The document does not decode or does not validate; every problem found is listed.
    #[error("{source_name}: {}", join_errors(.errors))]
    Invalid {
        /// The file name (or `<config>` for text).
        source_name: String,
        /// The problems, in document order.
        errors: Vec<FieldError>,
    },
}

fn join_errors(errors: &[FieldError]) -> String {
    errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}

/// A loaded scheduler configuration: the resolved profiles.
#[derive(Debug, Clone, PartialEq)]
pub struct SchedulerConfig {
    /// The profiles, in the order written.
    pub profiles: Vec<Profile>,
    /// The top-level `percentageOfNodesToScore` as written (`None`: upstream's default 0, the
    /// adaptive percentage). Each profile's effective value is in
    /// [`Profile::percentage_of_nodes_to_score`].
    pub percentage_of_nodes_to_score: Option<i32>,
    /// Things kube-scheduler accepts silently but a user likely wants to know about (args for a
    /// plugin that takes none, `disabled` naming an unknown plugin, …).
    pub warnings: Vec<String>,
}

impl Default for SchedulerConfig {
    /// No `--config`: one `default-scheduler` profile with upstream's defaults.
    fn default() -> Self {
        SchedulerConfig {
            profiles: vec![Profile::default_profile()],
            percentage_of_nodes_to_score: None,
            warnings: Vec::new(),
        }
    }
}

impl FromStr for SchedulerConfig {
    type Err = ConfigError;

    /// Parses YAML or JSON text; errors name the source `<config>`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        SchedulerConfig::parse(text, "<config>")
    }
}

impl SchedulerConfig {
    /// Reads and resolves a configuration file (YAML or JSON).
    pub fn from_file(path: impl AsRef<Path>) -> Result<SchedulerConfig, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|source| ConfigError::Io { path: path.to_path_buf(), source })?;
        SchedulerConfig::parse(&text, &path.display().to_string())
    }

    /// Parses and resolves YAML or JSON text; `source_name` prefixes every error message.
    pub fn parse(text: &str, source_name: &str) -> Result<SchedulerConfig, ConfigError> {
        let value = parse_document(text).map_err(|message| ConfigError::Syntax {
            source_name: source_name.to_string(),
            message,
        })?;
        resolve(&value)
            .map_err(|errors| ConfigError::Invalid { source_name: source_name.to_string(), errors })
    }

    /// The profile with this scheduler name.
    pub fn profile(&self, scheduler_name: &str) -> Option<&Profile> {
        self.profiles.iter().find(|p| p.scheduler_name == scheduler_name)
    }

    /// The profile that schedules pods with this `spec.schedulerName`: the profile of that name,
    /// or, for `kplace` when no profile is named so, the `default-scheduler` profile.
    pub fn profile_for(&self, scheduler_name: &str) -> Option<&Profile> {
        self.profile(scheduler_name).or_else(|| {
            (scheduler_name == KPLACE_SCHEDULER_NAME)
                .then(|| self.profile(DEFAULT_SCHEDULER_NAME))
                .flatten()
        })
    }

    /// Every scheduler name kplace serves: the profiles' names, plus `kplace` when it falls back
    /// to `default-scheduler`.
    pub fn served_scheduler_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> =
            self.profiles.iter().map(|p| p.scheduler_name.as_str()).collect();
        if self.profile(KPLACE_SCHEDULER_NAME).is_none()
            && self.profile(DEFAULT_SCHEDULER_NAME).is_some()
        {
            names.push(KPLACE_SCHEDULER_NAME);
        }
        names
    }
}

/// YAML or JSON text to a JSON value. JSON is YAML, so one parser reads both (and, like
/// upstream's strict decoding, refuses duplicate keys); a JSON document the YAML parser cannot
/// read is retried as JSON.
fn parse_document(text: &str) -> Result<Value, String> {
    match serde_saphyr::from_str(text) {
        Ok(v) => Ok(v),
        Err(yaml_error) if text.trim_start().starts_with('{') => {
            serde_json::from_str(text).map_err(|json_error| format!("{json_error} ({yaml_error})"))
        }
        Err(e) => Err(e.to_string()),
    }
}

// ---------------------------------------------------------------------------------------------
// The v1 schema, field for field (strict: unknown fields are errors, as upstream decodes).
// ---------------------------------------------------------------------------------------------

// Some fields are accepted only to be checked or dropped.
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawConfig {
    api_version: Option<String>,
    kind: Option<String>,
    parallelism: Option<i32>,
    leader_election: Option<RawLeaderElection>,
    client_connection: Option<RawClientConnection>,
    enable_profiling: Option<bool>,
    enable_contention_profiling: Option<bool>,
    percentage_of_nodes_to_score: Option<i32>,
    pod_initial_backoff_seconds: Option<i64>,
    pod_max_backoff_seconds: Option<i64>,
    profiles: Option<Vec<RawProfile>>,
    extenders: Option<Vec<Value>>,
    delay_cache_until_active: Option<bool>,
}

/// component-base `LeaderElectionConfiguration` (v1alpha1).
// Some fields are accepted only to be checked or dropped.
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawLeaderElection {
    leader_elect: Option<bool>,
    lease_duration: Option<String>,
    renew_deadline: Option<String>,
    retry_period: Option<String>,
    resource_lock: Option<String>,
    resource_name: Option<String>,
    resource_namespace: Option<String>,
}

/// component-base `ClientConnectionConfiguration` (v1alpha1).
// Some fields are accepted only to be checked or dropped.
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawClientConnection {
    kubeconfig: Option<String>,
    accept_content_types: Option<String>,
    content_type: Option<String>,
    qps: Option<f32>,
    burst: Option<i32>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawProfile {
    scheduler_name: Option<String>,
    percentage_of_nodes_to_score: Option<i32>,
    plugins: Option<RawPlugins>,
    plugin_config: Option<Vec<RawPluginConfig>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawPlugins {
    pre_enqueue: Option<RawPluginSet>,
    queue_sort: Option<RawPluginSet>,
    pre_filter: Option<RawPluginSet>,
    filter: Option<RawPluginSet>,
    post_filter: Option<RawPluginSet>,
    pre_score: Option<RawPluginSet>,
    score: Option<RawPluginSet>,
    reserve: Option<RawPluginSet>,
    permit: Option<RawPluginSet>,
    pre_bind: Option<RawPluginSet>,
    bind: Option<RawPluginSet>,
    post_bind: Option<RawPluginSet>,
    multi_point: Option<RawPluginSet>,
}

impl RawPlugins {
    fn get(&self, ep: ExtensionPoint) -> Option<&RawPluginSet> {
        match ep {
            ExtensionPoint::PreEnqueue => self.pre_enqueue.as_ref(),
            ExtensionPoint::QueueSort => self.queue_sort.as_ref(),
            ExtensionPoint::PreFilter => self.pre_filter.as_ref(),
            ExtensionPoint::Filter => self.filter.as_ref(),
            ExtensionPoint::PostFilter => self.post_filter.as_ref(),
            ExtensionPoint::PreScore => self.pre_score.as_ref(),
            ExtensionPoint::Score => self.score.as_ref(),
            ExtensionPoint::Reserve => self.reserve.as_ref(),
            ExtensionPoint::Permit => self.permit.as_ref(),
            ExtensionPoint::PreBind => self.pre_bind.as_ref(),
            ExtensionPoint::Bind => self.bind.as_ref(),
            ExtensionPoint::PostBind => self.post_bind.as_ref(),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawPluginSet {
    enabled: Option<Vec<RawPlugin>>,
    disabled: Option<Vec<RawPlugin>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawPlugin {
    name: String,
    weight: Option<i32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawPluginConfig {
    name: String,
    args: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawFitArgs {
    api_version: Option<String>,
    kind: Option<String>,
    ignored_resources: Option<Vec<String>>,
    ignored_resource_groups: Option<Vec<String>>,
    scoring_strategy: Option<RawScoringStrategy>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawScoringStrategy {
    #[serde(rename = "type")]
    strategy_type: Option<String>,
    resources: Option<Vec<RawResourceSpec>>,
    requested_to_capacity_ratio: Option<RawRequestedToCapacityRatio>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawResourceSpec {
    name: String,
    weight: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawRequestedToCapacityRatio {
    shape: Option<Vec<RawShapePoint>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawShapePoint {
    #[serde(default)]
    utilization: i32,
    #[serde(default)]
    score: i32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawBalancedAllocationArgs {
    api_version: Option<String>,
    kind: Option<String>,
    resources: Option<Vec<RawResourceSpec>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawPodTopologySpreadArgs {
    api_version: Option<String>,
    kind: Option<String>,
    default_constraints: Option<Vec<corev1::TopologySpreadConstraint>>,
    defaulting_type: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawInterPodAffinityArgs {
    api_version: Option<String>,
    kind: Option<String>,
    hard_pod_affinity_weight: Option<i32>,
    ignore_preferred_terms_of_existing_pods: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawNodeAffinityArgs {
    api_version: Option<String>,
    kind: Option<String>,
    added_affinity: Option<corev1::NodeAffinity>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawDefaultPreemptionArgs {
    api_version: Option<String>,
    kind: Option<String>,
    min_candidate_nodes_percentage: Option<i32>,
    min_candidate_nodes_absolute: Option<i32>,
}

// Some fields are accepted only to be checked or dropped.
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawVolumeBindingArgs {
    api_version: Option<String>,
    kind: Option<String>,
    bind_timeout_seconds: Option<i64>,
    shape: Option<Vec<RawShapePoint>>,
}

// Some fields are accepted only to be checked or dropped.
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawDynamicResourcesArgs {
    api_version: Option<String>,
    kind: Option<String>,
    filter_timeout: Option<String>,
    binding_timeout: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// Decoding helpers.
// ---------------------------------------------------------------------------------------------

fn join_path(prefix: &str, rest: &str) -> String {
    match (prefix.is_empty(), rest.is_empty() || rest == ".") {
        (_, true) => prefix.to_string(),
        (true, false) => rest.to_string(),
        (false, false) if rest.starts_with('[') => format!("{prefix}{rest}"),
        (false, false) => format!("{prefix}.{rest}"),
    }
}

/// Decodes `value` into `T`, naming the field path of the first problem (relative to `prefix`).
fn decode<T: DeserializeOwned>(value: &Value, prefix: &str) -> Result<T, FieldError> {
    serde_path_to_error::deserialize::<_, T>(value).map_err(|e| {
        let field = join_path(prefix, &e.path().to_string());
        FieldError::new(field, tidy_serde_message(&e.inner().to_string()))
    })
}

/// serde's messages, shortened: "unknown field `x`, expected one of …" becomes
/// `unknown field "x"`.
fn tidy_serde_message(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("unknown field `")
        && let Some(end) = rest.find('`')
    {
        return format!("unknown field {:?}", &rest[..end]);
    }
    message.to_string()
}

/// Kubernetes API types from k8s-openapi ignore unknown fields when they deserialize; upstream's
/// strict decoding does not. Finds a field of `original` that did not survive the round trip
/// through `parsed` (a null field is as good as absent).
fn unknown_api_field<T: Serialize>(
    original: &Value,
    parsed: &T,
    prefix: &str,
) -> Option<FieldError> {
    let round_trip = serde_json::to_value(parsed).ok()?;
    first_unknown(original, &round_trip, prefix.to_string())
        .map(|field| FieldError::new(field, "unknown field"))
}

fn first_unknown(original: &Value, round_trip: &Value, path: String) -> Option<String> {
    match (original, round_trip) {
        (Value::Object(o), Value::Object(r)) => o.iter().find_map(|(k, v)| {
            if v.is_null() {
                return None;
            }
            let child = join_path(&path, k);
            match r.get(k) {
                None => Some(child),
                Some(rv) => first_unknown(v, rv, child),
            }
        }),
        (Value::Array(o), Value::Array(r)) => o
            .iter()
            .zip(r)
            .enumerate()
            .find_map(|(i, (v, rv))| first_unknown(v, rv, format!("{path}[{i}]"))),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Resolution: defaults, validation, profiles.
// ---------------------------------------------------------------------------------------------

fn resolve(value: &Value) -> Result<SchedulerConfig, Vec<FieldError>> {
    let Value::Object(map) = value else {
        return Err(vec![FieldError::new(
            "",
            format!("expected a {KIND} object with apiVersion {API_VERSION:?}"),
        )]);
    };
    // apiVersion and kind first: a v1beta3 file should be told so, not about its fields.
    let mut errors = Vec::new();
    match map.get("apiVersion") {
        Some(Value::String(v)) if v == API_VERSION => {}
        Some(Value::String(v)) if v.starts_with("kubescheduler.config.k8s.io/") => {
            errors.push(FieldError::new(
                "apiVersion",
                format!("{v:?} is no longer read by kube-scheduler v1.35; use {API_VERSION:?}"),
            ));
        }
        Some(other) => errors
            .push(FieldError::new("apiVersion", format!("expected {API_VERSION:?}, got {other}"))),
        None => errors.push(FieldError::new("apiVersion", format!("required: {API_VERSION:?}"))),
    }
    match map.get("kind") {
        Some(Value::String(k)) if k == KIND => {}
        Some(other) => {
            errors.push(FieldError::new("kind", format!("expected {KIND:?}, got {other}")))
        }
        None => errors.push(FieldError::new("kind", format!("required: {KIND:?}"))),
    }
    if !errors.is_empty() {
        return Err(errors);
    }

    let raw: RawConfig = decode(value, "").map_err(|e| vec![e])?;
    let mut warnings = Vec::new();
    validate_component_fields(&raw, &mut errors);
    validate_percentage("percentageOfNodesToScore", raw.percentage_of_nodes_to_score, &mut errors);
    if raw.extenders.as_ref().is_some_and(|e| !e.is_empty()) {
        errors.push(FieldError::new(
            "extenders",
            "scheduler extenders are not supported: kplace cannot call them while it places pods",
        ));
    }

    let mut raw_profiles = raw.profiles.unwrap_or_default();
    if raw_profiles.is_empty() {
        raw_profiles.push(RawProfile::default());
    }
    let single = raw_profiles.len() == 1;
    let mut profiles = Vec::new();
    for (i, rp) in raw_profiles.iter().enumerate() {
        let path = format!("profiles[{i}]");
        let name = match (&rp.scheduler_name, single) {
            (Some(n), _) => n.clone(),
            (None, true) => DEFAULT_SCHEDULER_NAME.to_string(),
            (None, false) => String::new(),
        };
        if name.is_empty() {
            errors.push(FieldError::new(format!("{path}.schedulerName"), "required"));
        } else if let Some(j) = raw_profiles[..i]
            .iter()
            .position(|other| other.scheduler_name.as_deref() == Some(name.as_str()))
        {
            errors.push(FieldError::new(
                format!("{path}.schedulerName"),
                format!("duplicate scheduler name {name:?} (also profiles[{j}].schedulerName)"),
            ));
        }
        let pct = rp.percentage_of_nodes_to_score.or(raw.percentage_of_nodes_to_score);
        if let Some(p) = resolve_profile(rp, &name, &path, pct, &mut errors, &mut warnings) {
            profiles.push(p);
        }
    }
    validate_common_queue_sort(&raw_profiles, &mut errors);

    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(SchedulerConfig {
        profiles,
        percentage_of_nodes_to_score: raw.percentage_of_nodes_to_score,
        warnings,
    })
}

/// The checks upstream makes on fields that do not affect placement.
fn validate_component_fields(raw: &RawConfig, errors: &mut Vec<FieldError>) {
    if let Some(p) = raw.parallelism
        && p <= 0
    {
        errors.push(FieldError::new(
            "parallelism",
            format!("should be an integer value greater than zero, got {p}"),
        ));
    }
    if let Some(le) = &raw.leader_election {
        // Leader election defaults to on, and only the "leases" lock is allowed.
        let lock = le.resource_lock.as_deref().filter(|l| !l.is_empty()).unwrap_or("leases");
        if le.leader_elect.unwrap_or(true) && lock != "leases" {
            errors.push(FieldError::new(
                "leaderElection.resourceLock",
                format!("resourceLock value must be \"leases\", got {lock:?}"),
            ));
        }
    }
    if let Some(cc) = &raw.client_connection
        && let Some(b) = cc.burst
        && b < 0
    {
        errors.push(FieldError::new(
            "clientConnection.burst",
            format!("must be non-negative, got {b}"),
        ));
    }
    let initial = raw.pod_initial_backoff_seconds.unwrap_or(1);
    let max = raw.pod_max_backoff_seconds.unwrap_or(10);
    if initial <= 0 {
        errors.push(FieldError::new(
            "podInitialBackoffSeconds",
            format!("must be greater than 0, got {initial}"),
        ));
    }
    if max < initial {
        errors.push(FieldError::new(
            "podMaxBackoffSeconds",
            format!("must be greater than or equal to podInitialBackoffSeconds, got {max}"),
        ));
    }
}

fn validate_percentage(field: &str, value: Option<i32>, errors: &mut Vec<FieldError>) {
    if let Some(v) = value
        && !(0..=100).contains(&v)
    {
        errors.push(FieldError::new(field, format!("{v} is not in the valid range [0, 100]")));
    }
}

/// All profiles must configure `queueSort` identically: the scheduler has one queue.
fn validate_common_queue_sort(profiles: &[RawProfile], errors: &mut Vec<FieldError>) {
    fn canonical(p: &RawProfile) -> (Vec<(String, Option<i32>)>, Vec<String>) {
        let set = p.plugins.as_ref().and_then(|pl| pl.queue_sort.as_ref());
        let enabled = set
            .and_then(|s| s.enabled.as_ref())
            .map(|v| v.iter().map(|e| (e.name.clone(), e.weight)).collect())
            .unwrap_or_default();
        let disabled = set
            .and_then(|s| s.disabled.as_ref())
            .map(|v| v.iter().map(|e| e.name.clone()).collect())
            .unwrap_or_default();
        (enabled, disabled)
    }
    let Some(first) = profiles.first() else { return };
    let canon = canonical(first);
    for (i, p) in profiles.iter().enumerate().skip(1) {
        if canonical(p) != canon {
            errors.push(FieldError::new(
                format!("profiles[{i}].plugins.queueSort"),
                "must be the same for all profiles",
            ));
        }
    }
}

/// Converts one profile's `plugins` into typed sets; unknown names are errors, removed names in
/// `enabled` are errors, unknown names in `disabled` are warnings (upstream ignores them).
fn plugins_config(
    raw: Option<&RawPlugins>,
    path: &str,
    errors: &mut Vec<FieldError>,
    warnings: &mut Vec<String>,
) -> PluginsConfig {
    let mut out = PluginsConfig::default();
    let Some(raw) = raw else { return out };
    let mut convert = |raw_set: Option<&RawPluginSet>, field: &str| -> PluginSet {
        let mut set = PluginSet::default();
        let Some(raw_set) = raw_set else { return set };
        for (j, p) in raw_set.enabled.iter().flatten().enumerate() {
            let origin = format!("{field}.enabled[{j}]");
            match PluginName::parse(&p.name) {
                Ok(name) => {
                    set.enabled.push(EnabledPlugin { name, weight: p.weight, origin: Some(origin) })
                }
                Err(e) => errors
                    .push(FieldError::new(format!("{path}.plugins.{origin}.name"), e.to_string())),
            }
        }
        for (j, p) in raw_set.disabled.iter().flatten().enumerate() {
            if p.name != "*"
                && matches!(PluginName::parse(&p.name), Err(PluginNameError::Unknown { .. }))
            {
                warnings.push(format!(
                    "{path}.plugins.{field}.disabled[{j}].name: {:?} is not a kube-scheduler \
                     v1.35 plugin; disabling it has no effect",
                    p.name
                ));
            }
            set.disabled.push(p.name.clone());
        }
        set
    };
    out.multi_point = convert(raw.multi_point.as_ref(), "multiPoint");
    for ep in ExtensionPoint::ALL {
        *out.get_mut(ep) = convert(raw.get(ep), ep.field_name());
    }
    out
}

/// One profile: plugins merged and expanded, plugin args decoded. `None` when it has errors.
fn resolve_profile(
    rp: &RawProfile,
    name: &str,
    path: &str,
    percentage_of_nodes_to_score: Option<i32>,
    errors: &mut Vec<FieldError>,
    warnings: &mut Vec<String>,
) -> Option<Profile> {
    let errors_before = errors.len();
    validate_percentage(
        &format!("{path}.percentageOfNodesToScore"),
        rp.percentage_of_nodes_to_score,
        errors,
    );
    let custom = plugins_config(rp.plugins.as_ref(), path, errors, warnings);
    let merged = merge_plugins(&default_plugins(), &custom);
    let expanded = match expand(&merged) {
        Ok(e) => Some(e),
        Err(errs) => {
            for e in errs {
                errors.push(FieldError::new(format!("{path}.plugins.{}", e.field), e.message));
            }
            None
        }
    };

    let mut args = PluginArgs::default();
    let configs = rp.plugin_config.as_deref().unwrap_or_default();
    for (j, pc) in configs.iter().enumerate() {
        let pc_path = format!("{path}.pluginConfig[{j}]");
        if configs[..j].iter().any(|other| other.name == pc.name) {
            errors.push(FieldError::new(
                &pc_path,
                format!("duplicate config for plugin {:?}", pc.name),
            ));
            continue;
        }
        let args_value = pc.args.as_ref().unwrap_or(&Value::Null);
        apply_plugin_args(&pc.name, args_value, &pc_path, &mut args, errors, warnings);
    }

    if errors.len() > errors_before {
        return None;
    }
    expanded.map(|e| Profile::from_expanded(name, e, percentage_of_nodes_to_score, args))
}

#[cfg(test)]
mod tests;
