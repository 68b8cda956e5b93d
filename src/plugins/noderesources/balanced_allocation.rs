//! NodeResourcesBalancedAllocation: a score that prefers nodes whose resource utilizations,
//! after placing the pod, are close to each other.
//!
//! Input: the pod's real requests of the configured resources (no non-zero defaults), the node's
//! allocatable and real requested amounts, and [`NodeResourcesBalancedAllocationArgs`]. Output:
//! `Skip` for a pod that requests none of the resources (best-effort pods, upstream issue
//! 129138), otherwise a score in `[0, 100]`; no normalization. Weights are not used (validation
//! requires them to be 1).
//!
//! Upstream (v1.35): `pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go`
//! (`balancedResourceScorer`) with `resource_allocation.go` (`useRequested: true`).
//!
//! # Floating point
//!
//! Upstream computes this score in `float64`, and so does [`balanced_resource_scorer`], step for
//! step: `f_i = min(req_i as f64 / alloc_i as f64, 1)` over resources with `alloc_i > 0`; with two
//! fractions `std = |(f_0 − f_1) / 2|`; with more, `mean = Σf / n`,
//! `std = sqrt(Σ (f_i − mean)·(f_i − mean) / n)` accumulated in resource order; with fewer,
//! `std = 0`; the score is `(1 − std) · 100` truncated toward zero. Every operation is a single
//! IEEE-754 binary64 operation (division, subtraction, multiplication, addition and `sqrt` are
//! correctly rounded), so Rust and Go agree bit for bit as long as neither side fuses a multiply
//! and an add (Go may fuse `x*y + z` on arm64/ppc64le/s390x; the amd64 toolchain does not by
//! default; Rust never fuses implicitly).
//!
//! A GPU reproduction must therefore either evaluate these same binary64 operations (WGSL has no
//! `f64`; an exact software binary64 or a precomputed table would be needed) or leave this plugin
//! on the CPU. An integer, rational or `f32` rewrite is **not** bit-identical: the truncation at
//! the end turns binary64 results just below an integer into the integer below. For example,
//! fractions 0 and 0.68 give `(1 − 0.34) · 100 = 66` exactly but `65.99999999999999` in
//! binary64, so upstream scores 65 (816 of the 520,150 pairs of fractions `r₁/a₁`, `a₁ ≤ 100`,
//! and `r₂/100` differ this way).

use std::collections::BTreeSet;

use crate::framework::args::{NodeResourcesBalancedAllocationArgs, ResourceSpec};
use crate::framework::{MAX_NODE_SCORE, Status};
use crate::model::{ClusterState, Node, Pod};

use super::NodeResourcesArgsError;
use super::resource_allocation::{pod_resource_request_list, requested_and_allocatable};

/// The NodeResourcesBalancedAllocation plugin, configured by
/// [`NodeResourcesBalancedAllocationArgs`].
#[derive(Debug, Clone)]
pub struct BalancedAllocation {
    resources: Vec<ResourceSpec>,
}

/// Per-pod state computed at PreScore: the pod's real request of each configured resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BalancedAllocationPreScore {
    /// Requests in the order of the configured resources.
    pub pod_requests: Vec<i64>,
}

/// The balance score of `requested` against `allocatable` (upstream `balancedResourceScorer`),
/// in `f64` exactly as upstream; see the module documentation.
pub fn balanced_resource_scorer(requested: &[i64], allocatable: &[i64]) -> i64 {
    let mut fractions: Vec<f64> = Vec::with_capacity(requested.len());
    let mut total_fraction = 0.0f64;
    for (&req, &alloc) in requested.iter().zip(allocatable) {
        if alloc == 0 {
            continue;
        }
        let mut fraction = req as f64 / alloc as f64;
        if fraction > 1.0 {
            fraction = 1.0;
        }
        total_fraction += fraction;
        fractions.push(fraction);
    }
    let std = match fractions.as_slice() {
        [a, b] => ((a - b) / 2.0).abs(),
        fs if fs.len() > 2 => {
            let mean = total_fraction / fs.len() as f64;
            let mut sum = 0.0f64;
            for f in fs {
                sum += (f - mean) * (f - mean);
            }
            (sum / fs.len() as f64).sqrt()
        }
        _ => 0.0,
    };
    ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
}

impl BalancedAllocation {
    /// The plugin name used in profiles and statuses.
    pub const NAME: &str = "NodeResourcesBalancedAllocation";

    /// The plugin with its arguments; fails on arguments upstream's validation rejects
    /// (duplicate resources, weights other than 1, no resources).
    pub fn new(args: &NodeResourcesBalancedAllocationArgs) -> Result<Self, NodeResourcesArgsError> {
        if args.resources.is_empty() {
            return Err(NodeResourcesArgsError::NoResources);
        }
        let mut seen = BTreeSet::new();
        for r in &args.resources {
            if !seen.insert(r.name.as_str()) {
                return Err(NodeResourcesArgsError::DuplicateResource { name: r.name.clone() });
            }
            if r.weight != 1 {
                return Err(NodeResourcesArgsError::BalancedWeightNotOne {
                    name: r.name.clone(),
                    weight: r.weight,
                });
            }
        }
        Ok(BalancedAllocation { resources: args.resources.clone() })
    }

    /// The pod's real requests; `Skip` when it requests none of the resources.
    pub fn pre_score(
        &self,
        pod: &Pod,
        _cluster: &ClusterState,
        _feasible: &[usize],
    ) -> Result<BalancedAllocationPreScore, Status> {
        let pod_requests = pod_resource_request_list(pod, &self.resources, true);
        if pod_requests.iter().all(|&r| r == 0) {
            return Err(Status::skip());
        }
        Ok(BalancedAllocationPreScore { pod_requests })
    }

    /// The balance score of the node with the pod placed on it.
    pub fn score(&self, state: &BalancedAllocationPreScore, _pod: &Pod, node: &Node) -> i64 {
        let (requested, allocatable) =
            requested_and_allocatable(node, &self.resources, &state.pod_requests, true);
        balanced_resource_scorer(&requested, &allocatable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::framework::Code;
    use crate::model::testing::{NodeBuilder, PodBuilder, cluster};

    /// A pod with two containers like upstream's `cpuAndMemory` (1000m+2000m cpu, 2000+3000
    /// bytes): 3000m cpu and 5000 bytes.
    fn cpu_and_memory(name: &str) -> PodBuilder {
        PodBuilder::new("ns", name).cpu(3000).memory(5000)
    }

    /// Upstream's `cpuOnly`: 3000m cpu, memory 0.
    fn cpu_only(name: &str) -> PodBuilder {
        PodBuilder::new("ns", name).cpu(3000)
    }

    /// Cases from upstream `TestNodeResourcesBalancedAllocation` (current std formula).
    #[test]
    fn score_is_one_minus_the_standard_deviation_of_utilizations() {
        struct Case {
            name: &'static str,
            pod: Pod,
            nodes: Vec<Node>,
            existing: Vec<Pod>,
            resources: Vec<ResourceSpec>,
            want: Vec<i64>,
        }
        let cm = vec![ResourceSpec::new("cpu", 1), ResourceSpec::new("memory", 1)];
        let cases = vec![
            Case {
                // n1: cpu 3000/4000 = 0.75, mem 5000/10000 = 0.5; std = |0.75-0.5|/2 = 0.125;
                // (1 - 0.125) * 100 = 87.5 → 87. n2: 3000/6000 = 0.5, 0.5 → std 0 → 100.
                name: "nothing scheduled, resources requested, differently sized nodes",
                pod: cpu_and_memory("p").obj(),
                nodes: vec![
                    NodeBuilder::new("n1").cpu(4000).memory(10000).obj(),
                    NodeBuilder::new("n2").cpu(6000).memory(10000).obj(),
                ],
                existing: vec![],
                resources: cm.clone(),
                want: vec![87, 100],
            },
            Case {
                // n1 runs cpuOnly: cpu (3000+3000)/10000 = 0.6, mem 5000/20000 = 0.25;
                // std = 0.175 → 82.5 → 82.
                // n2 runs cpuAndMemory: cpu 0.6, mem 10000/20000 = 0.5; std 0.05 → 95.
                name: "resources requested, pods scheduled with resources",
                pod: cpu_and_memory("p").obj(),
                nodes: vec![
                    NodeBuilder::new("n1").cpu(10000).memory(20000).obj(),
                    NodeBuilder::new("n2").cpu(10000).memory(20000).obj(),
                ],
                existing: vec![
                    cpu_only("e1").node("n1").obj(),
                    cpu_and_memory("e2").node("n2").obj(),
                ],
                resources: cm.clone(),
                want: vec![82, 95],
            },
            Case {
                // n1: cpu 0.6, mem 0.25 → 82. n2 (50000 memory): cpu 0.6, mem 10000/50000 = 0.2;
                // std = 0.2 → 80.
                name: "resources requested, pods scheduled with resources, differently sized nodes",
                pod: cpu_and_memory("p").obj(),
                nodes: vec![
                    NodeBuilder::new("n1").cpu(10000).memory(20000).obj(),
                    NodeBuilder::new("n2").cpu(10000).memory(50000).obj(),
                ],
                existing: vec![
                    cpu_only("e1").node("n1").obj(),
                    cpu_and_memory("e2").node("n2").obj(),
                ],
                resources: cm.clone(),
                want: vec![82, 80],
            },
            Case {
                // n1: cpu (3000+3000)/4000 > 1 → clamps to 1, mem 0 → std 0.5 → 50.
                // n2: cpu 1, mem 5000/10000 = 0.5 → std 0.25 → 75.
                name: "requested resources exceed node capacity",
                pod: cpu_only("p").obj(),
                nodes: vec![
                    NodeBuilder::new("n1").cpu(4000).memory(10000).obj(),
                    NodeBuilder::new("n2").cpu(4000).memory(10000).obj(),
                ],
                existing: vec![
                    cpu_only("e1").node("n1").obj(),
                    cpu_and_memory("e2").node("n2").obj(),
                ],
                resources: cm.clone(),
                want: vec![50, 75],
            },
            Case {
                // No allocatable: both resources skipped, std 0 → 100.
                name: "zero node resources score the maximum",
                pod: cpu_only("p").obj(),
                nodes: vec![NodeBuilder::new("n1").obj()],
                existing: vec![],
                resources: cm.clone(),
                want: vec![100],
            },
            Case {
                // Three resources: cpu 3000/4000 = 0.75, mem 5000/10000 = 0.5, gpu 1/4 = 0.25.
                // mean 0.5; Σ(f-mean)² = 0.0625+0+0.0625 = 0.125; std = sqrt(0.125/3) = 0.2041;
                // (1-0.2041)*100 = 79.58 → 79.
                name: "three resources use the standard deviation formula",
                pod: cpu_and_memory("p").scalar("nvidia.com/gpu", 1).obj(),
                nodes: vec![
                    NodeBuilder::new("n1")
                        .cpu(4000)
                        .memory(10000)
                        .scalar("nvidia.com/gpu", 4)
                        .obj(),
                ],
                existing: vec![],
                resources: vec![
                    ResourceSpec::new("cpu", 1),
                    ResourceSpec::new("memory", 1),
                    ResourceSpec::new("nvidia.com/gpu", 1),
                ],
                want: vec![79],
            },
            Case {
                // The pod requests no GPU: the GPU is left out and the two-resource formula is
                // used: cpu 0.75, mem 0.5 → 87.
                name: "a scalar resource the pod does not request is left out",
                pod: cpu_and_memory("p").obj(),
                nodes: vec![
                    NodeBuilder::new("n1")
                        .cpu(4000)
                        .memory(10000)
                        .scalar("nvidia.com/gpu", 4)
                        .obj(),
                ],
                existing: vec![],
                resources: vec![
                    ResourceSpec::new("cpu", 1),
                    ResourceSpec::new("memory", 1),
                    ResourceSpec::new("nvidia.com/gpu", 1),
                ],
                want: vec![87],
            },
        ];
        for c in cases {
            let pl = BalancedAllocation::new(&NodeResourcesBalancedAllocationArgs {
                resources: c.resources,
            })
            .expect("valid args");
            let cl = cluster(c.nodes, c.existing);
            let feasible: Vec<usize> = (0..cl.nodes.len()).collect();
            let state = pl.pre_score(&c.pod, &cl, &feasible).expect("pod requests resources");
            let got: Vec<i64> = cl.nodes.iter().map(|n| pl.score(&state, &c.pod, n)).collect();
            assert_eq!(got, c.want, "{}", c.name);
        }
    }

    #[test]
    fn best_effort_pods_skip_the_plugin() {
        let pl = BalancedAllocation::new(&NodeResourcesBalancedAllocationArgs::default())
            .expect("valid args");
        let cl = cluster(vec![NodeBuilder::new("n1").cpu(4000).memory(10000).obj()], vec![]);
        // No requests: the non-zero defaults do not apply here, so the pod is best effort.
        let got = pl.pre_score(&PodBuilder::new("ns", "p").obj(), &cl, &[0]);
        assert_eq!(got.err().map(|s| s.code), Some(Code::Skip));
        // A pod requesting only a resource outside the list is best effort too.
        let got =
            pl.pre_score(&PodBuilder::new("ns", "p").scalar("nvidia.com/gpu", 1).obj(), &cl, &[0]);
        assert_eq!(got.err().map(|s| s.code), Some(Code::Skip));
    }

    #[test]
    fn float_truncation_is_reproduced_exactly() {
        // 0.3 and 0.1: in f64 (0.3 - 0.1) / 2 = 0.09999999999999999, 1 - std rounds to 0.9,
        // × 100 = 90.0 → 90.
        assert_eq!(balanced_resource_scorer(&[3, 1], &[10, 10]), 90);
        // 1/3 and 0: std = 0.16666666666666666, × 100 = 83.33333333333334 → 83.
        assert_eq!(balanced_resource_scorer(&[1, 0], &[3, 5]), 83);
        // 0 and 0.68: exact arithmetic gives (1 - 0.34) × 100 = 66, but in f64
        // 0.68 / 2 = 0.34, 1 - 0.34 = 0.6599999999999999 and × 100 = 65.99999999999999 → 65.
        // Upstream says 65; an integer or rational rewrite would say 66.
        assert_eq!(((1.0 - 0.68f64 / 2.0) * 100.0) as i64, 65);
        assert_eq!(balanced_resource_scorer(&[0, 68], &[1, 100]), 65);
        // 1 and 0.82: exactly (1 - 0.09) × 100 = 91, in f64 90.99999999999999 → 90.
        assert_eq!(balanced_resource_scorer(&[1, 82], &[1, 100]), 90);
    }

    #[test]
    fn invalid_arguments_are_rejected() {
        let args = |resources| NodeResourcesBalancedAllocationArgs { resources };
        assert_eq!(
            BalancedAllocation::new(&args(vec![ResourceSpec::new("cpu", 2)])).err(),
            Some(NodeResourcesArgsError::BalancedWeightNotOne { name: "cpu".into(), weight: 2 })
        );
        assert_eq!(
            BalancedAllocation::new(&args(vec![
                ResourceSpec::new("cpu", 1),
                ResourceSpec::new("cpu", 1)
            ]))
            .err(),
            Some(NodeResourcesArgsError::DuplicateResource { name: "cpu".into() })
        );
        assert_eq!(
            BalancedAllocation::new(&args(vec![])).err(),
            Some(NodeResourcesArgsError::NoResources)
        );
    }
}
