//! NodeResourcesFit: a filter that rejects nodes without enough free resources for the pod, and
//! a score by one of three strategies (LeastAllocated, MostAllocated, RequestedToCapacityRatio).
//!
//! Input: the pod's effective requests ([`Pod::requests`]: `max(app + sidecars, each init +
//! earlier sidecars) + overhead`, upstream `resource.PodRequests`), the node's allocatable and
//! requested amounts and pod count, and [`NodeResourcesFitArgs`]. Output:
//! - Filter: every insufficient resource, in the order pods, cpu, memory, ephemeral-storage, then
//!   scalar resources by name, with upstream's reasons (`"Too many pods"`,
//!   `"Insufficient cpu"`, `"Insufficient memory"`, `"Insufficient ephemeral-storage"`,
//!   `"Insufficient <name>"`). The code is `Unschedulable`, or `UnschedulableAndUnresolvable` when
//!   some resource's request exceeds the node's allocatable outright (preemption cannot help;
//!   v1.35 `InsufficientResource.Unresolvable`). The pod count is never unresolvable.
//! - Score: the strategy's score in `[0, 100]`; no normalization.
//!
//! Upstream (v1.35): `pkg/scheduler/framework/plugins/noderesources/fit.go` (`fitsRequest`,
//! `Filter`, `PreScore`, `Score`). Differences, all deliberate:
//! - Upstream iterates scalar resources in Go map order, so the order of several
//!   `Insufficient <scalar>` reasons is random there; kplace sorts them by name.
//! - `ignoredResources` and `ignoredResourceGroups` apply to extended resources only, as upstream.
//! - DRA-backed extended resources (`DRAExtendedResource`) are not modelled: without
//!   DeviceClasses no resource is delegated to DRA, which is upstream's behaviour when no
//!   DeviceClass names the resource.

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use crate::framework::args::{NodeResourcesFitArgs, ResourceSpec, ScoringStrategyType};
use crate::framework::{Code, Status};
use crate::model::{ClusterState, Node, Pod};
use crate::resources::{CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resource};

use super::NodeResourcesArgsError;
use super::least_allocated::least_resource_scorer;
use super::most_allocated::most_resource_scorer;
use super::requested_to_capacity_ratio::{
    FunctionShapePoint, MAX_CUSTOM_PRIORITY_SCORE, MAX_UTILIZATION,
    requested_to_capacity_ratio_scorer, scale_shape,
};
use super::resource_allocation::{
    is_extended_resource_name, is_scalar_resource_name, pod_resource_request_list,
    requested_and_allocatable,
};

/// The reason when the node already runs its maximum number of pods.
pub const ERR_REASON_TOO_MANY_PODS: &str = "Too many pods";

/// The reason for a resource the node cannot fit: `Insufficient <name>`.
pub fn insufficient_reason(resource: &str) -> String {
    format!("Insufficient {resource}")
}

/// A resource the node lacks for the pod (upstream `InsufficientResource`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InsufficientResource {
    /// Resource name (`pods`, `cpu`, `memory`, `ephemeral-storage`, or a scalar name).
    pub resource_name: String,
    /// The filter reason.
    pub reason: String,
    /// The pod's request (1 for `pods`).
    pub requested: i64,
    /// The amount already requested on the node (the pod count for `pods`).
    pub used: i64,
    /// The node's allocatable amount.
    pub capacity: i64,
    /// Whether the request exceeds the allocatable amount, so no preemption can make room.
    pub unresolvable: bool,
}

/// The scoring strategy with its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Strategy {
    LeastAllocated,
    MostAllocated,
    RequestedToCapacityRatio(Vec<FunctionShapePoint>),
}

/// The NodeResourcesFit plugin, configured by [`NodeResourcesFitArgs`].
#[derive(Debug, Clone)]
pub struct Fit {
    ignored_resources: BTreeSet<String>,
    ignored_resource_groups: BTreeSet<String>,
    resources: Vec<ResourceSpec>,
    strategy: Strategy,
}

/// Per-pod state computed at PreFilter: the pod's effective request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FitPreFilter {
    /// The request the filter checks.
    pub request: Resource,
}

/// Per-pod state computed at PreScore: the pod's request of each scored resource, aligned with
/// the strategy's resources (non-zero CPU and memory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FitPreScore {
    /// Requests in the order of `scoringStrategy.resources`.
    pub pod_requests: Vec<i64>,
}

/// Checks weights and the RequestedToCapacityRatio shape like upstream's validation.
fn validate(args: &NodeResourcesFitArgs) -> Result<(), NodeResourcesArgsError> {
    for (index, group) in args.ignored_resource_groups.iter().enumerate() {
        if group.contains('/') {
            return Err(NodeResourcesArgsError::InvalidResourceGroup {
                index,
                group: group.clone(),
            });
        }
    }
    let strategy = &args.scoring_strategy;
    if strategy.resources.is_empty() {
        return Err(NodeResourcesArgsError::NoResources);
    }
    for r in &strategy.resources {
        if r.weight <= 0 || r.weight > 100 {
            return Err(NodeResourcesArgsError::WeightOutOfRange {
                name: r.name.clone(),
                weight: r.weight,
            });
        }
    }
    if strategy.kind == ScoringStrategyType::RequestedToCapacityRatio {
        let shape = &strategy.shape;
        if shape.is_empty() {
            return Err(NodeResourcesArgsError::EmptyShape);
        }
        for (index, pair) in shape.windows(2).enumerate() {
            if let [a, b] = pair
                && a.utilization >= b.utilization
            {
                return Err(NodeResourcesArgsError::ShapeNotIncreasing { index: index + 1 });
            }
        }
        for (index, p) in shape.iter().enumerate() {
            if !(0..=MAX_UTILIZATION).contains(&i64::from(p.utilization)) {
                return Err(NodeResourcesArgsError::UtilizationOutOfRange {
                    index,
                    utilization: p.utilization,
                });
            }
            if !(0..=MAX_CUSTOM_PRIORITY_SCORE).contains(&i64::from(p.score)) {
                return Err(NodeResourcesArgsError::ShapeScoreOutOfRange { index, score: p.score });
            }
        }
    }
    Ok(())
}

/// Every resource the node lacks for `request` (upstream `fitsRequest`), in a deterministic
/// order: pods, cpu, memory, ephemeral-storage, then scalar resources by name.
pub fn fits_request(
    request: &Resource,
    node: &Node,
    ignored_resources: &BTreeSet<String>,
    ignored_resource_groups: &BTreeSet<String>,
) -> Vec<InsufficientResource> {
    let mut out = Vec::new();
    visit_insufficient(request, node, ignored_resources, ignored_resource_groups, |r| {
        let reason = if r.name == PODS {
            ERR_REASON_TOO_MANY_PODS.to_string()
        } else {
            insufficient_reason(r.name)
        };
        out.push(InsufficientResource {
            resource_name: r.name.to_string(),
            reason,
            requested: r.requested,
            used: r.used,
            capacity: r.capacity,
            // Too many pods is never unresolvable.
            unresolvable: r.name != PODS && r.requested > r.capacity,
        });
        ControlFlow::Continue(())
    });
    out
}

/// Whether the node has room for `request`: [`fits_request`] is empty. Allocates nothing.
pub fn fits(
    request: &Resource,
    node: &Node,
    ignored_resources: &BTreeSet<String>,
    ignored_resource_groups: &BTreeSet<String>,
) -> bool {
    let mut fits = true;
    visit_insufficient(request, node, ignored_resources, ignored_resource_groups, |_| {
        fits = false;
        ControlFlow::Break(())
    });
    fits
}

/// One insufficient resource as [`visit_insufficient`] finds it.
struct Lack<'a> {
    name: &'a str,
    requested: i64,
    used: i64,
    capacity: i64,
}

/// Calls `found` for each resource the node lacks for `request`, in [`fits_request`]'s order,
/// until it breaks.
fn visit_insufficient(
    request: &Resource,
    node: &Node,
    ignored_resources: &BTreeSet<String>,
    ignored_resource_groups: &BTreeSet<String>,
    mut found: impl FnMut(Lack<'_>) -> ControlFlow<()>,
) {
    let alloc = &node.allocatable;
    let used = &node.requested;
    let pod_count = node.pods.len() as i64;
    if pod_count + 1 > alloc.allowed_pod_number {
        let lack =
            Lack { name: PODS, requested: 1, used: pod_count, capacity: alloc.allowed_pod_number };
        if found(lack).is_break() {
            return;
        }
    }
    let requests_scalar = request.scalar.iter().any(|(n, v)| *v != 0 && is_scalar_resource_name(n));
    if request.milli_cpu == 0
        && request.memory == 0
        && request.ephemeral_storage == 0
        && !requests_scalar
    {
        return;
    }
    let native = [
        (CPU, request.milli_cpu, used.milli_cpu, alloc.milli_cpu),
        (MEMORY, request.memory, used.memory, alloc.memory),
        (
            EPHEMERAL_STORAGE,
            request.ephemeral_storage,
            used.ephemeral_storage,
            alloc.ephemeral_storage,
        ),
    ];
    for (name, want, used, capacity) in native {
        if want > 0
            && want > capacity - used
            && found(Lack { name, requested: want, used, capacity }).is_break()
        {
            return;
        }
    }
    for (name, &want) in &request.scalar {
        if want == 0 || !is_scalar_resource_name(name) {
            continue;
        }
        if is_extended_resource_name(name) {
            let group = name.split('/').next().unwrap_or_default();
            if ignored_resources.contains(name) || ignored_resource_groups.contains(group) {
                continue;
            }
        }
        let capacity = alloc.scalar.get(name).copied().unwrap_or(0);
        let in_use = used.scalar.get(name).copied().unwrap_or(0);
        // `want > 0` is not required upstream for scalars; a negative request is impossible.
        if want > capacity - in_use
            && found(Lack { name, requested: want, used: in_use, capacity }).is_break()
        {
            return;
        }
    }
}

impl Fit {
    /// The plugin name used in profiles and statuses.
    pub const NAME: &str = "NodeResourcesFit";

    /// The plugin with its arguments; fails on arguments upstream's validation rejects.
    pub fn new(args: &NodeResourcesFitArgs) -> Result<Self, NodeResourcesArgsError> {
        validate(args)?;
        let strategy = match args.scoring_strategy.kind {
            ScoringStrategyType::LeastAllocated => Strategy::LeastAllocated,
            ScoringStrategyType::MostAllocated => Strategy::MostAllocated,
            ScoringStrategyType::RequestedToCapacityRatio => {
                Strategy::RequestedToCapacityRatio(scale_shape(&args.scoring_strategy.shape))
            }
        };
        Ok(Fit {
            ignored_resources: args.ignored_resources.iter().cloned().collect(),
            ignored_resource_groups: args.ignored_resource_groups.iter().cloned().collect(),
            resources: args.scoring_strategy.resources.clone(),
            strategy,
        })
    }

    /// Records the pod's effective request. Never skips.
    pub fn pre_filter(&self, pod: &Pod, _cluster: &ClusterState) -> Result<FitPreFilter, Status> {
        Ok(FitPreFilter { request: pod.requests.clone() })
    }

    /// Every resource the node lacks for the pod (see [`fits_request`]).
    pub fn insufficient_resources(
        &self,
        state: &FitPreFilter,
        node: &Node,
    ) -> Vec<InsufficientResource> {
        fits_request(&state.request, node, &self.ignored_resources, &self.ignored_resource_groups)
    }

    /// Whether [`Fit::filter`] passes, without building its status.
    pub fn passes(&self, state: &FitPreFilter, node: &Node) -> bool {
        fits(&state.request, node, &self.ignored_resources, &self.ignored_resource_groups)
    }

    /// Rejects the node with one reason per insufficient resource.
    pub fn filter(&self, state: &FitPreFilter, _pod: &Pod, node: &Node) -> Status {
        let insufficient = self.insufficient_resources(state, node);
        if insufficient.is_empty() {
            return Status::success();
        }
        let code = if insufficient.iter().any(|r| r.unresolvable) {
            Code::UnschedulableAndUnresolvable
        } else {
            Code::Unschedulable
        };
        Status::new(code, insufficient.into_iter().map(|r| r.reason)).with_plugin(Self::NAME)
    }

    /// The pod's request of each scored resource (non-zero CPU and memory). Never skips.
    pub fn pre_score(
        &self,
        pod: &Pod,
        _cluster: &ClusterState,
        _feasible: &[usize],
    ) -> Result<FitPreScore, Status> {
        Ok(FitPreScore { pod_requests: pod_resource_request_list(pod, &self.resources, false) })
    }

    /// The strategy's score of the node for the pod, in `[0, 100]`.
    pub fn score(&self, state: &FitPreScore, _pod: &Pod, node: &Node) -> i64 {
        let (requested, allocatable) =
            requested_and_allocatable(node, &self.resources, &state.pod_requests, false);
        match &self.strategy {
            Strategy::LeastAllocated => {
                least_resource_scorer(&self.resources, &requested, &allocatable)
            }
            Strategy::MostAllocated => {
                most_resource_scorer(&self.resources, &requested, &allocatable)
            }
            Strategy::RequestedToCapacityRatio(shape) => {
                requested_to_capacity_ratio_scorer(&self.resources, shape, &requested, &allocatable)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::args::{ScoringStrategy, UtilizationShapePoint};
    use crate::model::testing::{GI, MI, NodeBuilder, PodBuilder, cluster};

    const EXT_A: &str = "example.com/aaa";
    const EXT_B: &str = "example.com/bbb";
    const K8S_IO_A: &str = "kubernetes.io/something";
    const HUGE_A: &str = "hugepages-2Mi";

    /// Upstream's fit test node: cpu 10m, memory 20, pods 32, example.com/aaa 5, ephemeral
    /// storage 20, hugepages-2Mi 5.
    fn test_node() -> NodeBuilder {
        NodeBuilder::new("n")
            .cpu(10)
            .memory(20)
            .pods(32)
            .scalar(EXT_A, 5)
            .ephemeral_storage(20)
            .scalar(HUGE_A, 5)
    }

    /// A pod requesting `cpu` millicores, `mem` bytes and the given scalars.
    fn pod(name: &str, cpu: i64, mem: i64, scalars: &[(&str, i64)]) -> PodBuilder {
        let mut b = PodBuilder::new("ns", name).cpu(cpu).memory(mem);
        for (n, v) in scalars {
            b = b.scalar(n, *v);
        }
        b
    }

    fn status(code: Code, reasons: &[&str]) -> Status {
        Status::new(code, reasons.iter().copied()).with_plugin(Fit::NAME)
    }

    /// Cases from upstream `TestEnoughRequests`: the incoming pod, what is already on the node,
    /// the arguments, and the expected status.
    #[test]
    fn filter_reports_every_insufficient_resource_with_upstream_reasons_and_codes() {
        use Code::{Unschedulable, UnschedulableAndUnresolvable};
        struct Case {
            name: &'static str,
            pod: Pod,
            existing: Pod,
            args: NodeResourcesFitArgs,
            want: Status,
        }
        let none = NodeResourcesFitArgs::default();
        let cases = vec![
            Case {
                name: "a pod requesting nothing always fits",
                pod: PodBuilder::new("ns", "p").obj(),
                existing: pod("e", 10, 20, &[]).obj(),
                args: none.clone(),
                want: Status::success(),
            },
            Case {
                name: "a pod that fits neither cpu nor memory gets both reasons",
                pod: pod("p", 1, 1, &[]).obj(),
                existing: pod("e", 10, 20, &[]).obj(),
                args: none.clone(),
                want: status(Unschedulable, &["Insufficient cpu", "Insufficient memory"]),
            },
            Case {
                name: "a pod that fits both resources fits",
                pod: pod("p", 1, 1, &[]).obj(),
                existing: pod("e", 5, 5, &[]).obj(),
                args: none.clone(),
                want: Status::success(),
            },
            Case {
                name: "only cpu is reported when only cpu is short",
                pod: pod("p", 2, 1, &[]).obj(),
                existing: pod("e", 9, 5, &[]).obj(),
                args: none.clone(),
                want: status(Unschedulable, &["Insufficient cpu"]),
            },
            Case {
                name: "only memory is reported when only memory is short",
                pod: pod("p", 1, 2, &[]).obj(),
                existing: pod("e", 5, 19, &[]).obj(),
                args: none.clone(),
                want: status(Unschedulable, &["Insufficient memory"]),
            },
            Case {
                name: "a request equal to the free amount fits",
                pod: pod("p", 5, 1, &[]).obj(),
                existing: pod("e", 5, 19, &[]).obj(),
                args: none.clone(),
                want: Status::success(),
            },
            Case {
                name: "an extended resource within allocatable fits",
                pod: pod("p", 0, 0, &[(EXT_A, 1)]).obj(),
                existing: pod("e", 0, 0, &[]).obj(),
                args: none.clone(),
                want: Status::success(),
            },
            Case {
                name: "an extended resource request above capacity is unresolvable",
                pod: pod("p", 1, 1, &[(EXT_A, 10)]).obj(),
                existing: pod("e", 0, 0, &[]).obj(),
                args: none.clone(),
                want: status(UnschedulableAndUnresolvable, &["Insufficient example.com/aaa"]),
            },
            Case {
                name: "an extended resource used up by other pods is unschedulable but resolvable",
                pod: pod("p", 1, 1, &[(EXT_A, 1)]).obj(),
                existing: pod("e", 0, 0, &[(EXT_A, 5)]).obj(),
                args: none.clone(),
                want: status(Unschedulable, &["Insufficient example.com/aaa"]),
            },
            Case {
                name: "an extended resource unknown to the node is unresolvable",
                pod: pod("p", 1, 1, &[(EXT_B, 1)]).obj(),
                existing: pod("e", 0, 0, &[]).obj(),
                args: none.clone(),
                want: status(UnschedulableAndUnresolvable, &["Insufficient example.com/bbb"]),
            },
            Case {
                name: "a kubernetes.io resource is enforced",
                pod: pod("p", 1, 1, &[(K8S_IO_A, 10)]).obj(),
                existing: pod("e", 0, 0, &[]).obj(),
                args: none.clone(),
                want: status(
                    UnschedulableAndUnresolvable,
                    &["Insufficient kubernetes.io/something"],
                ),
            },
            Case {
                name: "hugepages above capacity are unresolvable",
                pod: pod("p", 1, 1, &[(HUGE_A, 10)]).obj(),
                existing: pod("e", 0, 0, &[]).obj(),
                args: none.clone(),
                want: status(UnschedulableAndUnresolvable, &["Insufficient hugepages-2Mi"]),
            },
            Case {
                name: "an ignored extended resource is not checked",
                pod: pod("p", 1, 1, &[(EXT_B, 1)]).obj(),
                existing: pod("e", 0, 0, &[]).obj(),
                args: NodeResourcesFitArgs {
                    ignored_resources: vec![EXT_B.to_string()],
                    ..Default::default()
                },
                want: Status::success(),
            },
            Case {
                name: "an ignored resource group skips its extended resources but not kubernetes.io ones",
                pod: pod("p", 1, 1, &[(EXT_B, 1), (K8S_IO_A, 1)]).obj(),
                existing: pod("e", 0, 0, &[]).obj(),
                args: NodeResourcesFitArgs {
                    ignored_resource_groups: vec!["example.com".to_string()],
                    ..Default::default()
                },
                want: status(
                    UnschedulableAndUnresolvable,
                    &["Insufficient kubernetes.io/something"],
                ),
            },
            Case {
                name: "ignoredResources does not apply to hugepages",
                pod: pod("p", 1, 1, &[(HUGE_A, 10)]).obj(),
                existing: pod("e", 0, 0, &[]).obj(),
                args: NodeResourcesFitArgs {
                    ignored_resources: vec![HUGE_A.to_string()],
                    ..Default::default()
                },
                want: status(UnschedulableAndUnresolvable, &["Insufficient hugepages-2Mi"]),
            },
            Case {
                name: "an extended resource request of zero is not checked",
                pod: pod("p", 1, 1, &[(EXT_A, 0)]).obj(),
                existing: pod("e", 0, 0, &[(EXT_A, 6)]).obj(),
                args: none.clone(),
                want: Status::success(),
            },
            Case {
                name: "one unresolvable resource makes the whole status unresolvable",
                pod: pod("p", 2, 1, &[(EXT_B, 1)]).obj(),
                existing: pod("e", 9, 0, &[]).obj(),
                args: none.clone(),
                want: status(
                    UnschedulableAndUnresolvable,
                    &["Insufficient cpu", "Insufficient example.com/bbb"],
                ),
            },
            Case {
                name: "a cpu request above the node's allocatable is unresolvable",
                pod: pod("p", 11, 1, &[]).obj(),
                existing: pod("e", 0, 0, &[]).obj(),
                args: none.clone(),
                want: status(UnschedulableAndUnresolvable, &["Insufficient cpu"]),
            },
            Case {
                name: "ephemeral storage is enforced",
                pod: PodBuilder::new("ns", "p").ephemeral_storage(25).obj(),
                existing: pod("e", 0, 0, &[]).obj(),
                args: none.clone(),
                want: status(UnschedulableAndUnresolvable, &["Insufficient ephemeral-storage"]),
            },
            Case {
                name: "ephemeral storage used by other pods is resolvable",
                pod: PodBuilder::new("ns", "p").ephemeral_storage(10).obj(),
                existing: PodBuilder::new("ns", "e").ephemeral_storage(15).obj(),
                args: none.clone(),
                want: status(Unschedulable, &["Insufficient ephemeral-storage"]),
            },
            Case {
                name: "several scalar shortages are reported in name order",
                pod: pod("p", 0, 0, &[(HUGE_A, 10), (EXT_B, 1), (EXT_A, 10)]).obj(),
                existing: pod("e", 0, 0, &[]).obj(),
                args: none.clone(),
                want: status(
                    UnschedulableAndUnresolvable,
                    &[
                        "Insufficient example.com/aaa",
                        "Insufficient example.com/bbb",
                        "Insufficient hugepages-2Mi",
                    ],
                ),
            },
        ];
        for c in cases {
            let pl = Fit::new(&c.args).expect("valid args");
            let existing = Pod { node_name: Some("n".to_string()), ..c.existing };
            let cl = cluster(vec![test_node().obj()], vec![existing]);
            let state = pl.pre_filter(&c.pod, &cl).expect("never skips");
            assert_eq!(pl.filter(&state, &c.pod, &cl.nodes[0]), c.want, "{}", c.name);
        }
    }

    /// Cases from upstream `TestNotEnoughRequests`.
    #[test]
    fn a_full_node_reports_too_many_pods_alongside_other_shortages() {
        let node = NodeBuilder::new("n").cpu(10).memory(20).pods(1).obj();
        let existing = pod("e", 10, 20, &[]).node("n").obj();
        let cl = cluster(vec![node], vec![existing]);
        let pl = Fit::new(&NodeResourcesFitArgs::default()).expect("valid args");
        let cases: Vec<(&str, Pod, Status)> = vec![
            (
                "a pod requesting nothing only hits the pod limit",
                PodBuilder::new("ns", "p").obj(),
                status(Code::Unschedulable, &["Too many pods"]),
            ),
            (
                "a pod requesting resources gets the pod limit first, then each resource",
                pod("p", 1, 1, &[]).obj(),
                status(
                    Code::Unschedulable,
                    &["Too many pods", "Insufficient cpu", "Insufficient memory"],
                ),
            ),
        ];
        for (name, p, want) in cases {
            let state = pl.pre_filter(&p, &cl).expect("never skips");
            assert_eq!(pl.filter(&state, &p, &cl.nodes[0]), want, "{name}");
        }
        // The details name the amounts.
        let state = pl.pre_filter(&pod("p", 1, 1, &[]).obj(), &cl).expect("never skips");
        let details = pl.insufficient_resources(&state, &cl.nodes[0]);
        assert_eq!(
            details.first(),
            Some(&InsufficientResource {
                resource_name: "pods".to_string(),
                reason: "Too many pods".to_string(),
                requested: 1,
                used: 1,
                capacity: 1,
                unresolvable: false,
            })
        );
    }

    #[test]
    fn invalid_arguments_are_rejected() {
        let with = |strategy: ScoringStrategy| NodeResourcesFitArgs {
            scoring_strategy: strategy,
            ..Default::default()
        };
        let point = |utilization, score| UtilizationShapePoint { utilization, score };
        let rtcr = |shape: Vec<UtilizationShapePoint>| ScoringStrategy {
            kind: ScoringStrategyType::RequestedToCapacityRatio,
            resources: vec![ResourceSpec::new("cpu", 1)],
            shape,
        };
        let cases: Vec<(&str, NodeResourcesFitArgs, NodeResourcesArgsError)> = vec![
            (
                "a weight of zero is out of range",
                with(ScoringStrategy {
                    resources: vec![ResourceSpec::new("cpu", 0)],
                    ..Default::default()
                }),
                NodeResourcesArgsError::WeightOutOfRange { name: "cpu".into(), weight: 0 },
            ),
            (
                "a weight above 100 is out of range",
                with(ScoringStrategy {
                    resources: vec![ResourceSpec::new("memory", 101)],
                    ..Default::default()
                }),
                NodeResourcesArgsError::WeightOutOfRange { name: "memory".into(), weight: 101 },
            ),
            (
                "an empty resource list is refused",
                with(ScoringStrategy { resources: vec![], ..Default::default() }),
                NodeResourcesArgsError::NoResources,
            ),
            ("a shape needs a point", with(rtcr(vec![])), NodeResourcesArgsError::EmptyShape),
            (
                "shape utilizations must increase",
                with(rtcr(vec![point(10, 1), point(10, 2)])),
                NodeResourcesArgsError::ShapeNotIncreasing { index: 1 },
            ),
            (
                "shape scores stay within 0..=10",
                with(rtcr(vec![point(10, 11)])),
                NodeResourcesArgsError::ShapeScoreOutOfRange { index: 0, score: 11 },
            ),
            (
                "shape utilizations stay within 0..=100",
                with(rtcr(vec![point(101, 1)])),
                NodeResourcesArgsError::UtilizationOutOfRange { index: 0, utilization: 101 },
            ),
            (
                "a resource group cannot contain a slash",
                NodeResourcesFitArgs {
                    ignored_resource_groups: vec!["example.com/x".into()],
                    ..Default::default()
                },
                NodeResourcesArgsError::InvalidResourceGroup {
                    index: 0,
                    group: "example.com/x".into(),
                },
            ),
        ];
        for (name, args, want) in cases {
            assert_eq!(Fit::new(&args).err(), Some(want), "{name}");
        }
    }

    /// Scores on two nodes for each strategy, with the arithmetic worked out. Cases follow
    /// upstream `TestLeastAllocatedScoringStrategy`, `TestMostAllocatedScoringStrategy` and
    /// `TestRequestedToCapacityRatioScoringStrategy`.
    #[test]
    fn each_strategy_scores_with_non_zero_requests_and_exact_integer_math() {
        let cm = vec![ResourceSpec::new("cpu", 1), ResourceSpec::new("memory", 1)];
        let strategy = |kind, resources: Vec<ResourceSpec>, shape| NodeResourcesFitArgs {
            scoring_strategy: ScoringStrategy { kind, resources, shape },
            ..Default::default()
        };
        struct Case {
            name: &'static str,
            args: NodeResourcesFitArgs,
            pod: Pod,
            nodes: Vec<Node>,
            existing: Vec<Pod>,
            want: Vec<i64>,
        }
        let two_nodes = || {
            vec![
                NodeBuilder::new("n1").cpu(4000).memory(10000).obj(),
                NodeBuilder::new("n2").cpu(6000).memory(10000).obj(),
            ]
        };
        let cases = vec![
            Case {
                // n1: cpu (4000-3000)*100/4000 = 25, mem (10000-5000)*100/10000 = 50 → 37.
                // n2: cpu (6000-3000)*100/6000 = 50, mem 50 → 50.
                name: "least allocated prefers the node with more room",
                args: strategy(ScoringStrategyType::LeastAllocated, cm.clone(), vec![]),
                pod: pod("p", 3000, 5000, &[]).obj(),
                nodes: two_nodes(),
                existing: vec![],
                want: vec![37, 50],
            },
            Case {
                // n1: cpu 3000*100/4000 = 75, mem 50 → 62. n2: cpu 50, mem 50 → 50.
                name: "most allocated prefers the fuller node",
                args: strategy(ScoringStrategyType::MostAllocated, cm.clone(), vec![]),
                pod: pod("p", 3000, 5000, &[]).obj(),
                nodes: two_nodes(),
                existing: vec![],
                want: vec![62, 50],
            },
            Case {
                // Shape {0:10, 100:0} scaled ×10 to {0:100, 100:0}.
                // n1: cpu u=75 → 25, mem u=50 → 50; 37.5 → 38. n2: 50, 50 → 50.
                name: "requested to capacity ratio rounds the weighted mean",
                args: strategy(
                    ScoringStrategyType::RequestedToCapacityRatio,
                    cm.clone(),
                    vec![
                        UtilizationShapePoint { utilization: 0, score: 10 },
                        UtilizationShapePoint { utilization: 100, score: 0 },
                    ],
                ),
                pod: pod("p", 3000, 5000, &[]).obj(),
                nodes: two_nodes(),
                existing: vec![],
                want: vec![38, 50],
            },
            Case {
                // The pod requests nothing: it counts as 100m cpu and 200 MiB memory.
                // n1 (4000m, 1 GiB): cpu (4000-100)*100/4000 = 97; mem (1024-200)*100/1024 = 80
                // (in MiB; the bytes give the same 80) → (97+80)/2 = 88.
                // n2 also runs a pod with no requests (another 100m / 200 MiB):
                // cpu (4000-200)*100/4000 = 95; mem (1024-400)*100/1024 = 60 → 77.
                name: "pods without requests are scored with the non-zero defaults",
                args: strategy(ScoringStrategyType::LeastAllocated, cm.clone(), vec![]),
                pod: PodBuilder::new("ns", "p").obj(),
                nodes: vec![
                    NodeBuilder::new("n1").cpu(4000).memory(GI).obj(),
                    NodeBuilder::new("n2").cpu(4000).memory(GI).obj(),
                ],
                existing: vec![PodBuilder::new("ns", "e").node("n2").obj()],
                want: vec![88, 77],
            },
            Case {
                // Scored resources cpu (1) and nvidia.com/gpu (3). The pod requests no GPU, so
                // the GPU is left out: the score is the cpu part alone, (4000-1000)*100/4000 = 75,
                // on both the GPU node and the plain node.
                name: "an extended resource the pod does not request does not affect the score",
                args: strategy(
                    ScoringStrategyType::LeastAllocated,
                    vec![ResourceSpec::new("cpu", 1), ResourceSpec::new("nvidia.com/gpu", 3)],
                    vec![],
                ),
                pod: pod("p", 1000, 0, &[]).obj(),
                nodes: vec![
                    NodeBuilder::new("n1").cpu(4000).scalar("nvidia.com/gpu", 4).obj(),
                    NodeBuilder::new("n2").cpu(4000).obj(),
                ],
                existing: vec![],
                want: vec![75, 75],
            },
            Case {
                // With a GPU request of 1: n1 cpu 75 (w1), gpu (4-1)*100/4 = 75 (w3) → 300/4 = 75;
                // n2 has no GPU allocatable, the GPU is skipped → 75. n3 has 8 GPUs, 6 in use:
                // gpu (8-7)*100/8 = 12 → (75 + 36)/4 = 27.
                name: "an extended resource the pod requests is weighted in",
                args: strategy(
                    ScoringStrategyType::LeastAllocated,
                    vec![ResourceSpec::new("cpu", 1), ResourceSpec::new("nvidia.com/gpu", 3)],
                    vec![],
                ),
                pod: pod("p", 1000, 0, &[("nvidia.com/gpu", 1)]).obj(),
                nodes: vec![
                    NodeBuilder::new("n1").cpu(4000).scalar("nvidia.com/gpu", 4).obj(),
                    NodeBuilder::new("n2").cpu(4000).obj(),
                    NodeBuilder::new("n3").cpu(4000).scalar("nvidia.com/gpu", 8).obj(),
                ],
                existing: vec![pod("e", 0, 0, &[("nvidia.com/gpu", 6)]).node("n3").obj()],
                want: vec![75, 75, 27],
            },
        ];
        for c in cases {
            let pl = Fit::new(&c.args).expect("valid args");
            let cl = cluster(c.nodes, c.existing);
            let feasible: Vec<usize> = (0..cl.nodes.len()).collect();
            let state = pl.pre_score(&c.pod, &cl, &feasible).expect("never skips");
            let got: Vec<i64> = cl.nodes.iter().map(|n| pl.score(&state, &c.pod, n)).collect();
            assert_eq!(got, c.want, "{}", c.name);
        }
        // The memory arithmetic of the non-zero case, spelled out in bytes.
        assert_eq!((GI - 200 * MI) * 100 / GI, 80);
        assert_eq!((GI - 400 * MI) * 100 / GI, 60);
    }
}
