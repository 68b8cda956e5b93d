//! Resource accounting exactly as kube-scheduler computes it.
//!
//! Input: a `v1.PodSpec` (+ `v1.PodStatus`) or a `v1.NodeStatus`; output: [`Resource`] amounts in
//! integer units (millicores for CPU, bytes for memory and storage, counts otherwise) and the
//! non-zero CPU/memory requests the scoring plugins use ([`PodResources`]).
//!
//! Counterparts (v1.35):
//! - `k8s.io/component-helpers/resource/helpers.go`: `PodRequests`, `AggregateContainerRequests`
//!   (sidecar-aware init container maximum), pod-level requests, overhead;
//! - `pkg/scheduler/framework/types.go`: `Resource.Add`/`NewResource`, `PodInfo.calculateResource`
//!   and `getNonMissingContainerRequests` (the 100m / 200Mi defaults applied per container);
//! - `pkg/apis/core/v1/helper/helpers.go`: `IsScalarResourceName` and friends;
//! - `pkg/apis/core/v1/defaults.go`: the API server's defaulting that a snapshot written by hand
//!   has not been through (container requests default to limits, pod-level requests default
//!   from pod-level limits, node allocatable defaults to capacity, every resource list rounded
//!   up to milli-units). Objects read back from a cluster are already defaulted; defaulting is
//!   idempotent.
//!
//! Feature gates, at their v1.35 defaults: `PodLevelResources` is beta and **on** (since v1.34),
//! so `spec.resources.requests` for cpu, memory and hugepages-* replace the aggregated container
//! requests; `InPlacePodVerticalScaling` is GA (locked on), so the scheduler reads container
//! statuses (`max(spec, actuated, allocated)` per resource, `PodRequests` with
//! `UseStatusResources`); `InPlacePodLevelResourcesVerticalScaling` is alpha and off.
//!
//! Non-zero requests (`PodInfo.calculateResource`, v1.35): upstream no longer sums a per-container
//! `GetNonzeroRequests`; it runs `PodRequests` again with `NonMissingContainerRequests` =
//! {cpu: 100m, memory: 200Mi}. So every container — app, sidecar and regular init alike — that
//! does not name cpu (or memory) counts the default (an explicit `0` stays 0), the same
//! sidecar/init maximum is taken, and overhead is added. With pod-level requests set, the
//! defaults apply only to resources missing at both the pod and the container level.
//!
//! Arithmetic: every quantity is converted to milli-units (rounded up, as the API server stores
//! it), summed and compared exactly in `i128`, and converted at the end with upstream's
//! `MilliValue()` (CPU) or `Value()` (everything else, rounded up). Where upstream would wrap an
//! `int64`, this module returns [`ResourceError::Overflow`]. Negative quantities are rejected.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;

use crate::model::NonZeroRequests;
use crate::quantity::{Quantity, QuantityError};

/// The CPU request assumed for a container that requests none, when scoring (millicores).
pub const DEFAULT_MILLI_CPU_REQUEST: i64 = 100;
/// The memory request assumed for a container that requests none, when scoring (bytes, 200 MB).
pub const DEFAULT_MEMORY_REQUEST: i64 = 200 * 1024 * 1024;

/// `cpu`.
pub const CPU: &str = "cpu";
/// `memory`.
pub const MEMORY: &str = "memory";
/// `ephemeral-storage`.
pub const EPHEMERAL_STORAGE: &str = "ephemeral-storage";
/// `pods`.
pub const PODS: &str = "pods";
/// Prefix of huge page resources (`hugepages-2Mi`).
pub const HUGEPAGES_PREFIX: &str = "hugepages-";
/// Prefix of attachable volume limits (`attachable-volumes-aws-ebs`).
pub const ATTACHABLE_VOLUMES_PREFIX: &str = "attachable-volumes-";
/// Marker of native resources in a domain (`*kubernetes.io/`).
pub const DEFAULT_NAMESPACE_PREFIX: &str = "kubernetes.io/";
/// Prefix of quota resource names for requests (`requests.`).
pub const DEFAULT_RESOURCE_REQUESTS_PREFIX: &str = "requests.";

/// Amounts of every resource kind (upstream `framework.Resource`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash, PartialOrd, Ord)]
pub struct Resource {
    /// CPU in millicores.
    pub milli_cpu: i64,
    /// Memory in bytes.
    pub memory: i64,
    /// Ephemeral storage in bytes.
    pub ephemeral_storage: i64,
    /// Pod count (only meaningful for node allocatable).
    pub allowed_pod_number: i64,
    /// Extended and hugepages resources by name, in their integer units.
    pub scalar: BTreeMap<String, i64>,
}

impl Resource {
    /// Adds `other` to `self`, resource by resource.
    pub fn add(&mut self, other: &Resource) {
        self.milli_cpu += other.milli_cpu;
        self.memory += other.memory;
        self.ephemeral_storage += other.ephemeral_storage;
        self.allowed_pod_number += other.allowed_pod_number;
        for (name, v) in &other.scalar {
            *self.scalar.entry(name.clone()).or_insert(0) += v;
        }
    }

    /// Subtracts `other` from `self`, resource by resource.
    pub fn sub(&mut self, other: &Resource) {
        self.milli_cpu -= other.milli_cpu;
        self.memory -= other.memory;
        self.ephemeral_storage -= other.ephemeral_storage;
        self.allowed_pod_number -= other.allowed_pod_number;
        for (name, v) in &other.scalar {
            *self.scalar.entry(name.clone()).or_insert(0) -= v;
        }
    }

    /// The amount of a resource by its API name (`cpu` in millicores, others in base units).
    pub fn get(&self, name: &str) -> i64 {
        match name {
            CPU => self.milli_cpu,
            MEMORY => self.memory,
            EPHEMERAL_STORAGE => self.ephemeral_storage,
            PODS => self.allowed_pod_number,
            _ => self.scalar.get(name).copied().unwrap_or(0),
        }
    }

    /// Sets the amount of a resource by its API name.
    pub fn set(&mut self, name: &str, value: i64) {
        match name {
            CPU => self.milli_cpu = value,
            MEMORY => self.memory = value,
            EPHEMERAL_STORAGE => self.ephemeral_storage = value,
            PODS => self.allowed_pod_number = value,
            _ => {
                self.scalar.insert(name.to_string(), value);
            }
        }
    }

    /// Names of every resource with a non-zero amount, in a stable order: cpu, memory,
    /// ephemeral-storage, pods, then scalar resources by name.
    pub fn names(&self) -> Vec<&str> {
        let mut out = Vec::new();
        for (name, v) in [
            (CPU, self.milli_cpu),
            (MEMORY, self.memory),
            (EPHEMERAL_STORAGE, self.ephemeral_storage),
            (PODS, self.allowed_pod_number),
        ] {
            if v != 0 {
                out.push(name);
            }
        }
        out.extend(self.scalar.iter().filter(|(_, v)| **v != 0).map(|(k, _)| k.as_str()));
        out
    }

    /// Upstream `NewResource(rl)`: cpu via `MilliValue()`, memory, ephemeral-storage and pods via
    /// `Value()`, scalar resources ([`is_scalar_resource_name`]) via `Value()`; other names are
    /// ignored. `field` names the list in errors.
    pub fn from_milli_list(list: &MilliList, field: &str) -> Result<Resource, ResourceError> {
        let mut r = Resource::default();
        for (name, &milli) in list {
            let overflow = || ResourceError::Overflow { field: format!("{field}.{name}") };
            match name.as_str() {
                CPU => r.milli_cpu = i64::try_from(milli).map_err(|_| overflow())?,
                MEMORY => r.memory = milli_to_units(milli).ok_or_else(overflow)?,
                PODS => r.allowed_pod_number = milli_to_units(milli).ok_or_else(overflow)?,
                EPHEMERAL_STORAGE => {
                    r.ephemeral_storage = milli_to_units(milli).ok_or_else(overflow)?
                }
                other if is_scalar_resource_name(other) => {
                    r.scalar.insert(other.to_string(), milli_to_units(milli).ok_or_else(overflow)?);
                }
                _ => {}
            }
        }
        Ok(r)
    }
}

/// `Value()` of a quantity of `milli` milli-units: rounded up (away from zero) to units.
fn milli_to_units(milli: i128) -> Option<i64> {
    let units = if milli >= 0 {
        milli.div_euclid(1000) + i128::from(milli % 1000 != 0)
    } else {
        -((-milli).div_euclid(1000) + i128::from(milli % 1000 != 0))
    };
    i64::try_from(units).ok()
}

/// A resource list with every quantity in milli-units (rounded up, as the API server stores it).
pub type MilliList = BTreeMap<String, i128>;

/// A resource quantity that cannot be accounted for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResourceError {
    /// The quantity does not parse, or is too large for milli-units.
    #[error("{field}: {source}")]
    Quantity {
        /// Path of the offending field, e.g. `spec.containers[0].resources.requests.cpu`.
        field: String,
        /// What is wrong with the quantity.
        #[source]
        source: QuantityError,
    },
    /// A negative quantity.
    #[error("{field}: negative quantity {text:?} is not allowed")]
    Negative {
        /// Path of the offending field.
        field: String,
        /// The quantity's text.
        text: String,
    },
    /// A total does not fit in a 64-bit integer.
    #[error("{field}: the total does not fit in a 64-bit integer")]
    Overflow {
        /// Path of the field (or total) that overflowed.
        field: String,
    },
}

/// What kube-scheduler accounts for one pod (upstream `podResource`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PodResources {
    /// Effective requests (`PodRequests`), including overhead and pod-level requests.
    pub requests: Resource,
    /// CPU and memory with the 100m / 200Mi defaults for containers that request none.
    pub non_zero: NonZeroRequests,
}

/// Parses one resource list into milli-units. `None` stays `None` (upstream distinguishes a nil
/// list from an empty one in a few places).
pub fn parse_list(
    list: Option<&BTreeMap<String, ApiQuantity>>,
    field: &str,
) -> Result<Option<MilliList>, ResourceError> {
    parse_list_at(list, &|| field.to_string())
}

/// [`parse_list`] with the field's path written only for an error (most pods have none).
fn parse_list_at(
    list: Option<&BTreeMap<String, ApiQuantity>>,
    field: &dyn Fn() -> String,
) -> Result<Option<MilliList>, ResourceError> {
    let Some(list) = list else { return Ok(None) };
    let mut out = MilliList::new();
    for (name, q) in list {
        let path = || format!("{}.{name}", field());
        let parsed = Quantity::parse_api(&q.0)
            .map_err(|source| ResourceError::Quantity { field: path(), source })?;
        if parsed.is_negative() {
            return Err(ResourceError::Negative { field: path(), text: q.0.clone() });
        }
        let milli = parsed
            .milli_value_ceil_i128()
            .map_err(|source| ResourceError::Quantity { field: path(), source })?;
        out.insert(name.clone(), milli);
    }
    Ok(Some(out))
}

/// Upstream `addResourceList`: adds `new` into `list`.
fn add_list(
    list: &mut MilliList,
    new: Option<&MilliList>,
    field: &str,
) -> Result<(), ResourceError> {
    for (name, v) in new.into_iter().flatten() {
        let slot = list.entry(name.clone()).or_insert(0);
        *slot = slot
            .checked_add(*v)
            .ok_or_else(|| ResourceError::Overflow { field: format!("{field}.{name}") })?;
    }
    Ok(())
}

/// Upstream `maxResourceList`: `list[name] = max(list[name], new[name])` for names in `new`.
fn max_list(list: &mut MilliList, new: Option<&MilliList>) {
    for (name, v) in new.into_iter().flatten() {
        let slot = list.entry(name.clone()).or_insert(*v);
        *slot = (*slot).max(*v);
    }
}

/// Upstream `max(a, b...)` over resource lists.
fn max_of(lists: &[&MilliList]) -> MilliList {
    let mut out = MilliList::new();
    for l in lists {
        max_list(&mut out, Some(l));
    }
    out
}

/// Upstream `applyNonMissing`: names absent from `reqs` get the default (explicit zeros stay).
fn apply_non_missing(reqs: Option<&MilliList>, non_missing: &MilliList) -> MilliList {
    let mut out = reqs.cloned().unwrap_or_default();
    for (name, v) in non_missing {
        out.entry(name.clone()).or_insert(*v);
    }
    out
}

/// Upstream `IsSupportedPodLevelResource`: cpu, memory and hugepages-*.
pub fn is_supported_pod_level_resource(name: &str) -> bool {
    name == CPU || name == MEMORY || name.starts_with(HUGEPAGES_PREFIX)
}

/// Upstream `IsHugePageResourceName`.
pub fn is_hugepage_resource_name(name: &str) -> bool {
    name.starts_with(HUGEPAGES_PREFIX)
}

/// Upstream `IsAttachableVolumeResourceName`.
pub fn is_attachable_volume_resource_name(name: &str) -> bool {
    name.starts_with(ATTACHABLE_VOLUMES_PREFIX)
}

/// Upstream `IsPrefixedNativeResource`: the name contains `kubernetes.io/`.
pub fn is_prefixed_native_resource(name: &str) -> bool {
    name.contains(DEFAULT_NAMESPACE_PREFIX)
}

/// Upstream `IsNativeResource`: no domain, or a `*kubernetes.io/` domain.
pub fn is_native_resource(name: &str) -> bool {
    !name.contains('/') || is_prefixed_native_resource(name)
}

/// Upstream `IsExtendedResourceName`: a domain-qualified name outside `*kubernetes.io/` that is
/// still a qualified name once prefixed with `requests.` (as quota names it).
pub fn is_extended_resource_name(name: &str) -> bool {
    if is_native_resource(name) || name.starts_with(DEFAULT_RESOURCE_REQUESTS_PREFIX) {
        return false;
    }
    is_qualified_name(&format!("{DEFAULT_RESOURCE_REQUESTS_PREFIX}{name}"))
}

/// Upstream `IsScalarResourceName` (scheduler util): extended, hugepages, prefixed native and
/// attachable volume resources — the ones `Resource` keeps in `scalar`.
pub fn is_scalar_resource_name(name: &str) -> bool {
    is_extended_resource_name(name)
        || is_hugepage_resource_name(name)
        || is_prefixed_native_resource(name)
        || is_attachable_volume_resource_name(name)
}

/// Upstream `IsOvercommitAllowed`: native and not hugepages.
fn is_overcommit_allowed(name: &str) -> bool {
    is_native_resource(name) && !is_hugepage_resource_name(name)
}

/// Upstream `validation.IsQualifiedName`: an optional DNS-1123 subdomain prefix and `/`, then a
/// name of at most 63 characters matching `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
pub fn is_qualified_name(value: &str) -> bool {
    let mut parts = value.split('/');
    let (prefix, name) = match (parts.next(), parts.next(), parts.next()) {
        (Some(name), None, _) => (None, name),
        (Some(prefix), Some(name), None) => (Some(prefix), name),
        _ => return false,
    };
    if let Some(prefix) = prefix
        && (prefix.is_empty() || !is_dns1123_subdomain(prefix))
    {
        return false;
    }
    !name.is_empty() && name.len() <= 63 && is_qualified_name_part(name)
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]` over the whole string.
pub(crate) fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    let (Some(first), Some(last)) = (b.first(), b.last()) else { return false };
    first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// Upstream `IsDNS1123Subdomain`: at most 253 characters of dot-separated lowercase labels.
fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            let (Some(first), Some(last)) = (b.first(), b.last()) else { return false };
            let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
            alnum(first) && alnum(last) && b.iter().all(|c| alnum(c) || *c == b'-')
        })
}

/// One container's resource lists, parsed and defaulted.
#[derive(Debug, Clone, Default)]
struct ContainerLists {
    name: String,
    requests: Option<MilliList>,
    limits: Option<MilliList>,
    /// A restartable init container (sidecar, `restartPolicy: Always`).
    restartable: bool,
}

/// A container status's resource lists.
#[derive(Debug, Clone, Default)]
struct StatusLists {
    name: String,
    allocated: Option<MilliList>,
    /// `resources` is set; `requests` may still be absent.
    resources_set: bool,
    actuated_requests: Option<MilliList>,
}

/// Everything `PodRequests` reads, parsed.
#[derive(Debug, Clone, Default)]
struct PodLists {
    containers: Vec<ContainerLists>,
    init_containers: Vec<ContainerLists>,
    statuses: Vec<StatusLists>,
    /// `spec.resources` is set.
    pod_level_set: bool,
    pod_requests: Option<MilliList>,
    pod_limits: Option<MilliList>,
    overhead: Option<MilliList>,
    /// A `PodResizePending` condition with reason `Infeasible`.
    resize_infeasible: bool,
}

/// Which list `aggregate` reads for each container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Getter {
    SpecRequests,
    SpecLimits,
    AllocatedRequests,
    ActuatedRequests,
}

impl PodLists {
    fn parse(spec: &k8s::PodSpec, status: Option<&k8s::PodStatus>) -> Result<Self, ResourceError> {
        let container = |c: &k8s::Container,
                         field: &dyn Fn() -> String|
         -> Result<ContainerLists, ResourceError> {
            let res = c.resources.as_ref();
            let mut requests = parse_list_at(res.and_then(|r| r.requests.as_ref()), &|| {
                format!("{}.resources.requests", field())
            })?;
            let limits = parse_list_at(res.and_then(|r| r.limits.as_ref()), &|| {
                format!("{}.resources.limits", field())
            })?;
            // SetDefaults_Pod: requests default to limits where unset.
            if let Some(limits) = &limits {
                let reqs = requests.get_or_insert_with(MilliList::new);
                for (name, v) in limits {
                    reqs.entry(name.clone()).or_insert(*v);
                }
            }
            Ok(ContainerLists {
                name: c.name.clone(),
                requests,
                limits,
                restartable: c.restart_policy.as_deref() == Some("Always"),
            })
        };
        let mut lists = PodLists::default();
        for (i, c) in spec.containers.iter().enumerate() {
            lists.containers.push(container(c, &|| format!("spec.containers[{i}]"))?);
        }
        for (i, c) in spec.init_containers.iter().flatten().enumerate() {
            lists.init_containers.push(container(c, &|| format!("spec.initContainers[{i}]"))?);
        }
        if let Some(status) = status {
            let groups = [
                ("status.containerStatuses", status.container_statuses.as_ref()),
                ("status.initContainerStatuses", status.init_container_statuses.as_ref()),
            ];
            for (group, statuses) in groups {
                for (i, cs) in statuses.into_iter().flatten().enumerate() {
                    lists.statuses.push(StatusLists {
                        name: cs.name.clone(),
                        allocated: parse_list_at(cs.allocated_resources.as_ref(), &|| {
                            format!("{group}[{i}].allocatedResources")
                        })?,
                        resources_set: cs.resources.is_some(),
                        actuated_requests: parse_list_at(
                            cs.resources.as_ref().and_then(|r| r.requests.as_ref()),
                            &|| format!("{group}[{i}].resources.requests"),
                        )?,
                    });
                }
            }
            lists.resize_infeasible = status
                .conditions
                .iter()
                .flatten()
                .find(|c| c.type_ == "PodResizePending")
                .is_some_and(|c| c.reason.as_deref() == Some("Infeasible"));
        }
        if let Some(res) = &spec.resources {
            lists.pod_level_set = true;
            lists.pod_requests = parse_list(res.requests.as_ref(), "spec.resources.requests")?;
            lists.pod_limits = parse_list(res.limits.as_ref(), "spec.resources.limits")?;
        }
        lists.overhead = parse_list(spec.overhead.as_ref(), "spec.overhead")?;
        lists.default_pod_level()?;
        Ok(lists)
    }

    /// `defaultHugePagePodLimits` then `defaultPodRequests` (SetDefaults_Pod with
    /// PodLevelResources on). Only pod-level requests matter here; limits are defaulted only as
    /// far as they feed requests.
    fn default_pod_level(&mut self) -> Result<(), ResourceError> {
        if !self.pod_level_set {
            return Ok(());
        }
        let is_empty = |l: &Option<MilliList>| l.as_ref().is_none_or(|l| l.is_empty());
        if !(is_empty(&self.pod_limits) && is_empty(&self.pod_requests)) {
            let mut limits = self.pod_limits.clone().unwrap_or_default();
            let aggregated = self.aggregate(Getter::SpecLimits, None)?;
            for (name, v) in aggregated {
                if !is_supported_pod_level_resource(&name) || !is_hugepage_resource_name(&name) {
                    continue;
                }
                if self.pod_requests.as_ref().is_some_and(|r| r.contains_key(&name)) {
                    continue;
                }
                limits.entry(name).or_insert(v);
            }
            if !limits.is_empty() {
                self.pod_limits = Some(limits);
            }
        }
        if is_empty(&self.pod_limits) {
            return Ok(());
        }
        let mut requests = self.pod_requests.clone().unwrap_or_default();
        let aggregated = self.aggregate(Getter::SpecRequests, None)?;
        for (name, v) in aggregated {
            if !requests.contains_key(&name)
                && is_supported_pod_level_resource(&name)
                && is_overcommit_allowed(&name)
            {
                requests.insert(name, v);
            }
        }
        for (name, v) in self.pod_limits.iter().flatten() {
            if !requests.contains_key(name) && is_supported_pod_level_resource(name) {
                requests.insert(name.clone(), *v);
            }
        }
        if !requests.is_empty() {
            self.pod_requests = Some(requests);
        }
        Ok(())
    }

    /// Upstream `findContainerStatus`: container statuses first, then init container statuses.
    fn status(&self, name: &str) -> Option<&StatusLists> {
        self.statuses.iter().find(|s| s.name == name)
    }

    /// The list `getter` reads for one container (`containerSpecRequests`,
    /// `containerAllocatedRequests`, `containerActuatedRequests`).
    fn list_for<'a>(&'a self, c: &'a ContainerLists, getter: Getter) -> Option<&'a MilliList> {
        let status = || self.status(&c.name);
        match getter {
            Getter::SpecRequests => c.requests.as_ref(),
            Getter::SpecLimits => c.limits.as_ref(),
            Getter::AllocatedRequests => {
                if let Some(allocated) = status().and_then(|s| s.allocated.as_ref()) {
                    return Some(allocated);
                }
                if self.resize_infeasible { None } else { c.requests.as_ref() }
            }
            Getter::ActuatedRequests => {
                if let Some(s) = status()
                    && s.resources_set
                    && let Some(actuated) = &s.actuated_requests
                {
                    return Some(actuated);
                }
                if let Some(allocated) = status().and_then(|s| s.allocated.as_ref()) {
                    return Some(allocated);
                }
                if self.resize_infeasible { None } else { c.requests.as_ref() }
            }
        }
    }

    /// Upstream `aggregateContainerResourcesByFn`: app containers and sidecars add up; each
    /// regular init container runs beside the sidecars declared before it; the result is the
    /// larger of the two, per resource.
    fn aggregate(
        &self,
        getter: Getter,
        non_missing: Option<&MilliList>,
    ) -> Result<MilliList, ResourceError> {
        let effective = |c: &ContainerLists| -> Option<MilliList> {
            let list = self.list_for(c, getter);
            match non_missing {
                Some(nm) if !nm.is_empty() => Some(apply_non_missing(list, nm)),
                _ => list.cloned(),
            }
        };
        let mut result = MilliList::new();
        for c in &self.containers {
            add_list(&mut result, effective(c).as_ref(), "containers")?;
        }
        let mut sidecars = MilliList::new();
        let mut init_max = MilliList::new();
        for c in &self.init_containers {
            let res = effective(c);
            let during = if c.restartable {
                add_list(&mut result, res.as_ref(), "initContainers")?;
                add_list(&mut sidecars, res.as_ref(), "initContainers")?;
                sidecars.clone()
            } else {
                let mut combined = MilliList::new();
                add_list(&mut combined, res.as_ref(), "initContainers")?;
                add_list(&mut combined, Some(&sidecars), "initContainers")?;
                combined
            };
            max_list(&mut init_max, Some(&during));
        }
        max_list(&mut result, Some(&init_max));
        Ok(result)
    }

    /// Upstream `IsPodLevelRequestsSet`.
    fn pod_level_requests_set(&self) -> bool {
        self.pod_requests
            .as_ref()
            .is_some_and(|r| r.keys().any(|name| is_supported_pod_level_resource(name)))
    }

    /// Upstream `PodRequests` with `UseStatusResources` on (InPlacePodVerticalScaling, GA) and
    /// pod-level resources honoured (PodLevelResources, on by default).
    fn pod_requests(&self, non_missing: Option<&MilliList>) -> Result<MilliList, ResourceError> {
        let spec = self.aggregate(Getter::SpecRequests, non_missing)?;
        let allocated = self.aggregate(Getter::AllocatedRequests, non_missing)?;
        let actuated = self.aggregate(Getter::ActuatedRequests, non_missing)?;
        let mut reqs = if self.resize_infeasible {
            max_of(&[&actuated, &allocated])
        } else {
            max_of(&[&spec, &actuated, &allocated])
        };
        if self.pod_level_requests_set() {
            for (name, v) in self.pod_requests.iter().flatten() {
                if is_supported_pod_level_resource(name) {
                    reqs.insert(name.clone(), *v);
                }
            }
        }
        add_list(&mut reqs, self.overhead.as_ref(), "spec.overhead")?;
        Ok(reqs)
    }
}

/// The resources kube-scheduler accounts for a pod: its effective requests (`PodRequests`) and
/// its non-zero CPU/memory requests (`PodInfo.calculateResource`).
///
/// `status` is read for in-place resized containers (`status.containerStatuses[].resources`,
/// `allocatedResources`, and the `PodResizePending` condition).
pub fn pod_resources(
    spec: &k8s::PodSpec,
    status: Option<&k8s::PodStatus>,
) -> Result<PodResources, ResourceError> {
    let lists = PodLists::parse(spec, status)?;
    let requests = lists.pod_requests(None)?;
    let requests_resource = Resource::from_milli_list(&requests, "pod requests")?;

    // getNonMissingContainerRequests: without pod-level requests, every container that omits
    // cpu or memory counts as 100m / 200Mi; with them, only resources missing at both levels.
    let mut non_missing = MilliList::new();
    let defaults = [
        (CPU, i128::from(DEFAULT_MILLI_CPU_REQUEST)),
        (MEMORY, i128::from(DEFAULT_MEMORY_REQUEST) * 1000),
    ];
    for (name, milli) in defaults {
        if !lists.pod_level_requests_set() || !requests.contains_key(name) {
            non_missing.insert(name.to_string(), milli);
        }
    }
    let non_zero_list = if non_missing.is_empty() {
        requests.clone()
    } else {
        lists.pod_requests(Some(&non_missing))?
    };
    let overflow = |field: &str| ResourceError::Overflow { field: field.to_string() };
    let non_zero = NonZeroRequests {
        milli_cpu: i64::try_from(non_zero_list.get(CPU).copied().unwrap_or(0))
            .map_err(|_| overflow("non-zero cpu request"))?,
        memory: milli_to_units(non_zero_list.get(MEMORY).copied().unwrap_or(0))
            .ok_or_else(|| overflow("non-zero memory request"))?,
    };
    Ok(PodResources { requests: requests_resource, non_zero })
}

/// A node's allocatable resources as the scheduler sees them: `status.allocatable`, or
/// `status.capacity` when allocatable is absent (the API server's `SetDefaults_NodeStatus`
/// copies the whole list; it does not fill in single missing resources).
pub fn node_allocatable(status: Option<&k8s::NodeStatus>) -> Result<Resource, ResourceError> {
    let Some(status) = status else { return Ok(Resource::default()) };
    let (list, field) = match (&status.allocatable, &status.capacity) {
        (Some(a), _) => (Some(a), "status.allocatable"),
        (None, Some(c)) => (Some(c), "status.capacity"),
        (None, None) => (None, "status.allocatable"),
    };
    let parsed = parse_list(list, field)?.unwrap_or_default();
    Resource::from_milli_list(&parsed, field)
}

#[cfg(test)]
mod tests;
