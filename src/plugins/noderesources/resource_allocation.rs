//! The machinery the resource scoring strategies share: which pod request and which node
//! amounts each scored resource uses, and resource-name classification.
//!
//! Input: a pod, a node, and the scored resources (`[ResourceSpec]`). Output: two vectors aligned
//! with the resources, `requested` (node total plus the pod) and `allocatable`; an entry with
//! `allocatable == 0` is skipped by every scorer.
//!
//! Upstream (v1.35): `pkg/scheduler/framework/plugins/noderesources/resource_allocation.go`
//! (`calculateResourceAllocatableRequest`, `calculatePodResourceRequest`), resource-name helpers
//! from `pkg/scheduler/util/utils.go` (`IsScalarResourceName`) and
//! `pkg/apis/core/v1/helper/helpers.go` (`IsExtendedResourceName`, `IsPrefixedNativeResource`).
//!
//! Which requests are used:
//! - NodeResourcesFit scoring (`use_requested == false`): CPU and memory use the *non-zero*
//!   requests — the pod's [`Pod::non_zero_requests`] (100m / 200 MB for each container that sets
//!   no request) and the node's [`Node::non_zero_requested`]. Every other resource uses the real
//!   requests.
//! - NodeResourcesBalancedAllocation (`use_requested == true`): real requests everywhere.
//! - Ephemeral storage always uses the node's real requested amount.
//! - A scalar resource (extended, hugepages, `kubernetes.io/`-prefixed, attachable volumes) that
//!   the pod does not request is left out of the score for that pod (`(0, 0)`), so nodes are not
//!   penalised or favoured for extended resources the pod does not use.
//! - A scalar resource absent from the node's allocatable is left out likewise.
//!
//! DRA-backed extended resources (feature `DRAExtendedResource`) are not modelled: kplace has no
//! DeviceClasses or ResourceSlices, so such resources score as absent.

use crate::framework::args::ResourceSpec;
use crate::model::{Node, Pod};
use crate::resources::{CPU, EPHEMERAL_STORAGE, MEMORY};

pub use crate::resources::{
    ATTACHABLE_VOLUMES_PREFIX, HUGEPAGES_PREFIX, is_attachable_volume_resource_name,
    is_extended_resource_name, is_hugepage_resource_name, is_native_resource,
    is_prefixed_native_resource, is_scalar_resource_name,
};

/// The weighted mean of per-resource scores over the resources with non-zero allocatable (the
/// loop upstream's `leastResourceScorer` and `mostResourceScorer` share). Integer division, as
/// upstream.
pub fn weighted_resource_score(
    resources: &[ResourceSpec],
    requested: &[i64],
    allocatable: &[i64],
    score: impl Fn(i64, i64) -> i64,
) -> i64 {
    let (mut node_score, mut weight_sum) = (0i64, 0i64);
    for ((r, &req), &alloc) in resources.iter().zip(requested).zip(allocatable) {
        if alloc == 0 {
            continue;
        }
        node_score += score(req, alloc) * r.weight;
        weight_sum += r.weight;
    }
    if weight_sum == 0 { 0 } else { node_score / weight_sum }
}

/// The pod's request of one resource as the scorers see it (upstream
/// `calculatePodResourceRequest`): CPU in millicores and memory in bytes from the non-zero
/// requests unless `use_requested`, others from the real requests.
pub fn pod_resource_request(pod: &Pod, name: &str, use_requested: bool) -> i64 {
    match name {
        CPU if use_requested => pod.requests.milli_cpu,
        CPU => pod.non_zero_requests.milli_cpu,
        MEMORY if use_requested => pod.requests.memory,
        MEMORY => pod.non_zero_requests.memory,
        EPHEMERAL_STORAGE => pod.requests.ephemeral_storage,
        _ if is_scalar_resource_name(name) => pod.requests.scalar.get(name).copied().unwrap_or(0),
        // `pods` and unknown names are never part of a pod's requests.
        _ => 0,
    }
}

/// The pod's requests of the scored resources, in their order (upstream
/// `calculatePodResourceRequestList`).
pub fn pod_resource_request_list(
    pod: &Pod,
    resources: &[ResourceSpec],
    use_requested: bool,
) -> Vec<i64> {
    resources.iter().map(|r| pod_resource_request(pod, &r.name, use_requested)).collect()
}

/// `(allocatable, requested + pod_request)` of one resource on the node, or `(0, 0)` when the
/// resource does not take part (upstream `calculateResourceAllocatableRequest`).
pub fn allocatable_and_requested(
    node: &Node,
    name: &str,
    pod_request: i64,
    use_requested: bool,
) -> (i64, i64) {
    // A scalar resource the pod does not request is bypassed.
    if pod_request == 0 && is_scalar_resource_name(name) {
        return (0, 0);
    }
    match name {
        CPU => {
            let used = if use_requested {
                node.requested.milli_cpu
            } else {
                node.non_zero_requested.milli_cpu
            };
            (node.allocatable.milli_cpu, used + pod_request)
        }
        MEMORY => {
            let used =
                if use_requested { node.requested.memory } else { node.non_zero_requested.memory };
            (node.allocatable.memory, used + pod_request)
        }
        EPHEMERAL_STORAGE => {
            (node.allocatable.ephemeral_storage, node.requested.ephemeral_storage + pod_request)
        }
        _ => match node.allocatable.scalar.get(name) {
            Some(alloc) => {
                (*alloc, node.requested.scalar.get(name).copied().unwrap_or(0) + pod_request)
            }
            None => (0, 0),
        },
    }
}

/// The `requested` and `allocatable` vectors a scorer receives, aligned with `resources`; entries
/// whose allocatable is 0 are both 0 (upstream `resourceAllocationScorer.score`).
pub fn requested_and_allocatable(
    node: &Node,
    resources: &[ResourceSpec],
    pod_requests: &[i64],
    use_requested: bool,
) -> (Vec<i64>, Vec<i64>) {
    let mut requested = vec![0; resources.len()];
    let mut allocatable = vec![0; resources.len()];
    for (i, r) in resources.iter().enumerate() {
        let pod_request = pod_requests.get(i).copied().unwrap_or(0);
        let (alloc, req) = allocatable_and_requested(node, &r.name, pod_request, use_requested);
        if alloc == 0 {
            continue;
        }
        allocatable[i] = alloc;
        requested[i] = req;
    }
    (requested, allocatable)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{GI, NodeBuilder, PodBuilder, cluster};

    #[test]
    fn resource_names_are_classified_as_upstream() {
        let cases: &[(&str, &str, bool, bool)] = &[
            // (description, name, extended, scalar)
            ("cpu is native, not scalar", "cpu", false, false),
            ("pods is native, not scalar", "pods", false, false),
            ("a vendor resource is extended and scalar", "nvidia.com/gpu", true, true),
            ("example.com/aaa is extended", "example.com/aaa", true, true),
            (
                "a kubernetes.io resource is native but scalar",
                "kubernetes.io/something",
                false,
                true,
            ),
            (
                "a kubernetes.io subdomain resource is native but scalar",
                "subdomain.kubernetes.io/something",
                false,
                true,
            ),
            ("hugepages are scalar but not extended", "hugepages-2Mi", false, true),
            ("attachable volumes are scalar", "attachable-volumes-csi-x", false, true),
            ("a requests.-prefixed name is not extended", "requests.example.com/x", false, false),
            ("a name with two slashes is not extended", "a.com/b/c", false, false),
            ("an upper-case domain is not extended", "Example.com/x", false, false),
        ];
        for (what, name, extended, scalar) in cases {
            assert_eq!(is_extended_resource_name(name), *extended, "{what}: extended");
            assert_eq!(is_scalar_resource_name(name), *scalar, "{what}: scalar");
        }
    }

    #[test]
    fn scoring_uses_non_zero_cpu_and_memory_unless_real_requests_are_asked_for() {
        let pod = PodBuilder::new("ns", "p").obj(); // requests nothing
        let resources = [ResourceSpec::new("cpu", 1), ResourceSpec::new("memory", 1)];
        assert_eq!(
            pod_resource_request_list(&pod, &resources, false),
            vec![100, 200 * 1024 * 1024]
        );
        assert_eq!(pod_resource_request_list(&pod, &resources, true), vec![0, 0]);
    }

    #[test]
    fn a_scalar_resource_the_pod_does_not_request_is_left_out() {
        let node = NodeBuilder::new("n").cpu(4000).memory(8 * GI).scalar("nvidia.com/gpu", 4).obj();
        let cl = cluster(vec![node], vec![]);
        let n = &cl.nodes[0];
        assert_eq!(allocatable_and_requested(n, "nvidia.com/gpu", 0, false), (0, 0));
        assert_eq!(allocatable_and_requested(n, "nvidia.com/gpu", 2, false), (4, 2));
        // Absent from the node: left out even when requested.
        assert_eq!(allocatable_and_requested(n, "example.com/foo", 2, false), (0, 0));
        // `pods` is not a scored amount.
        assert_eq!(allocatable_and_requested(n, "pods", 0, false), (0, 0));
    }

    #[test]
    fn node_requested_amounts_include_the_bound_pods() {
        let node = NodeBuilder::new("n").cpu(4000).memory(8 * GI).ephemeral_storage(10 * GI).obj();
        let bound = PodBuilder::new("ns", "b").node("n").ephemeral_storage(GI).obj(); // no cpu/mem
        let cl = cluster(vec![node], vec![bound]);
        let n = &cl.nodes[0];
        // Non-zero: the bound pod counts as 100m; real: 0.
        assert_eq!(allocatable_and_requested(n, "cpu", 500, false), (4000, 600));
        assert_eq!(allocatable_and_requested(n, "cpu", 500, true), (4000, 500));
        // Ephemeral storage always uses real requests.
        assert_eq!(allocatable_and_requested(n, "ephemeral-storage", GI, false), (10 * GI, 2 * GI));
    }
}
