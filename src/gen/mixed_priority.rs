//! `mixed-priority`: a shared cluster where batch work at low priority fills the nodes and
//! production services at higher priority arrive: preemption territory. Five PriorityClasses
//! (one the global default, one with `preemptionPolicy: Never`), seven services, each with its
//! Service and ReplicaSet (whose selectors upstream's default spreading uses) and, for five, a
//! PodDisruptionBudget whose status is what the disruption controller would report for the
//! bound pods (`currentHealthy`, `desiredHealthy`, `expectedPods`, `disruptionsAllowed`).
//!
//! The bound batch is drawn mostly from the low classes and the pending pods mostly from the
//! high ones. Every pod carries `priorityClassName`, `priority` and `preemptionPolicy` as the
//! Priority admission plugin (`plugin/pkg/admission/priority/admission.go`) fills them in.

use serde_json::Value;

use super::eks::{self, M5_2XLARGE};
use super::engine::{Ctx, Family, NodeOut, PodDraft, Request, Strategy, Unit};
use super::objects::{self, Budget, MI, NOW, PdbSpec, PriorityClassSpec};
use super::{GenParams, WorkloadInfo};

/// `--list` text.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "mixed-priority",
    mirrors: "a shared cluster where low-priority batch fills the nodes and high-priority \
              services arrive (kplace's own): preemption with PodDisruptionBudgets",
    nodes: "EKS eu-west-1, m5.2xlarge (8 CPU/32Gi, 7910m/30.5Gi allocatable), three zones \
            round-robin",
    pods: "PriorityClasses platform-critical 1000000, high-priority 100000, default-priority \
           1000 (globalDefault), batch-low 100 (preemptionPolicy Never), preemptible 10; \
           services (class, request, bound/pending weight, PDB): platform/ingress-controller \
           (platform-critical, 500m/512Mi, 3/2, minAvailable 1), prod/payments (high, \
           1/2Gi, 5/15, minAvailable 80%), prod/frontend (high, 500m/1Gi, 10/10, maxUnavailable \
           10%), prod/api (default, 1/1Gi, 15/10, maxUnavailable 1), analytics/reports (default, \
           500m/2Gi, 12/8, minAvailable 60%), batch/etl (batch-low, 2/4Gi, 25/25, none), \
           batch/spark-executor (preemptible, 1/4Gi, 30/15, none), each pod owned by its \
           service's ReplicaSet <app>-<pod-template-hash> (controller: true); PDB status \
           computed from the pods written; each service's Service and ReplicaSet written after \
           the pods (the selectors of upstream's default spreading)",
    knobs: "--nodes; --pods; --init-pods: pods already bound (round-robin where they fit); \
            --seed: which service each pod belongs to",
};

const CLASSES: [PriorityClassSpec; 5] = [
    PriorityClassSpec {
        name: "platform-critical",
        value: 1_000_000,
        global_default: false,
        preemption_policy: "PreemptLowerPriority",
        description: "Cluster add-ons that must run.",
    },
    PriorityClassSpec {
        name: "high-priority",
        value: 100_000,
        global_default: false,
        preemption_policy: "PreemptLowerPriority",
        description: "Customer-facing production services.",
    },
    PriorityClassSpec {
        name: "default-priority",
        value: 1000,
        global_default: true,
        preemption_policy: "PreemptLowerPriority",
        description: "Everything without a class.",
    },
    PriorityClassSpec {
        name: "batch-low",
        value: 100,
        global_default: false,
        preemption_policy: "Never",
        description: "Batch jobs that wait rather than preempt.",
    },
    PriorityClassSpec {
        name: "preemptible",
        value: 10,
        global_default: false,
        preemption_policy: "PreemptLowerPriority",
        description: "Opportunistic work, first to go.",
    },
];

struct App {
    namespace: &'static str,
    name: &'static str,
    image: &'static str,
    class: usize,
    cpu: i64,
    mib: i64,
    bound_weight: u32,
    pending_weight: u32,
    budget: Option<Budget>,
}

const APPS: [App; 7] = [
    App {
        namespace: "platform",
        name: "ingress-controller",
        image: "registry.k8s.io/ingress-nginx/controller:v1.12.1",
        class: 0,
        cpu: 500,
        mib: 512,
        bound_weight: 3,
        pending_weight: 2,
        budget: Some(Budget::MinAvailable(1)),
    },
    App {
        namespace: "prod",
        name: "payments",
        image: "ghcr.io/acme/payments:7.4.0",
        class: 1,
        cpu: 1000,
        mib: 2048,
        bound_weight: 5,
        pending_weight: 15,
        budget: Some(Budget::MinAvailablePercent(80)),
    },
    App {
        namespace: "prod",
        name: "frontend",
        image: "ghcr.io/acme/frontend:2024.11.19",
        class: 1,
        cpu: 500,
        mib: 1024,
        bound_weight: 10,
        pending_weight: 10,
        budget: Some(Budget::MaxUnavailablePercent(10)),
    },
    App {
        namespace: "prod",
        name: "api",
        image: "ghcr.io/acme/api:12.0.3",
        class: 2,
        cpu: 1000,
        mib: 1024,
        bound_weight: 15,
        pending_weight: 10,
        budget: Some(Budget::MaxUnavailable(1)),
    },
    App {
        namespace: "analytics",
        name: "reports",
        image: "ghcr.io/acme/reports:3.3.1",
        class: 2,
        cpu: 500,
        mib: 2048,
        bound_weight: 12,
        pending_weight: 8,
        budget: Some(Budget::MinAvailablePercent(60)),
    },
    App {
        namespace: "batch",
        name: "etl",
        image: "ghcr.io/acme/etl:2.8.5",
        class: 3,
        cpu: 2000,
        mib: 4096,
        bound_weight: 25,
        pending_weight: 25,
        budget: None,
    },
    App {
        namespace: "batch",
        name: "spark-executor",
        image: "apache/spark:3.5.3",
        class: 4,
        cpu: 1000,
        mib: 4096,
        bound_weight: 30,
        pending_weight: 15,
        budget: None,
    },
];

/// The `mixed-priority` family; counts pods per service for the PDBs' status.
#[derive(Debug)]
pub struct MixedPriority {
    nodes: usize,
    /// Per app: (bound, written).
    counts: [(i64, i64); 7],
}

impl MixedPriority {
    pub fn new(params: &GenParams) -> MixedPriority {
        MixedPriority { nodes: params.nodes, counts: [(0, 0); 7] }
    }
}

impl Family for MixedPriority {
    fn preamble(&mut self, ctx: &mut Ctx) -> Vec<Value> {
        let mut out: Vec<Value> = ["analytics", "batch", "platform", "prod"]
            .iter()
            .map(|ns| eks::namespace(ns, ctx))
            .collect();
        for class in &CLASSES {
            let rv = ctx.rv();
            let uid = ctx.uid();
            out.push(objects::priority_class(class, NOW - 90 * 86_400, rv, &uid));
        }
        out
    }

    fn node(&mut self, index: usize, ctx: &mut Ctx) -> NodeOut {
        eks::node(index, &M5_2XLARGE, "shared-m5-2xl", false, Vec::new(), ctx)
    }

    fn node_name(&self, index: usize) -> String {
        eks::node_name(index)
    }

    fn node_ip(&self, index: usize) -> u32 {
        objects::eks_node_ip(index)
    }

    fn unit(&mut self, bound: bool, _remaining: usize, ctx: &mut Ctx) -> Unit {
        let weights: Vec<u32> =
            APPS.iter().map(|a| if bound { a.bound_weight } else { a.pending_weight }).collect();
        let app = &APPS[ctx.weighted(&weights)];
        let class = &CLASSES[app.class];
        let request = Request { cpu: app.cpu, memory: app.mib * MI, gpu: 0 };
        let mut pod = eks::app_pod(
            app.namespace,
            app.name,
            app.image,
            request,
            0..self.nodes,
            Strategy::Spread,
        );
        pod.spec.insert("priorityClassName".into(), class.name.into());
        pod.spec.insert("priority".into(), class.value.into());
        pod.spec.insert("preemptionPolicy".into(), class.preemption_policy.into());
        Unit { pods: vec![pod], gang: None }
    }

    fn emitted(&mut self, pod: &PodDraft, bound: bool) {
        if let Some(i) =
            APPS.iter().position(|a| a.name == pod.container && a.namespace == pod.namespace)
            && let Some(c) = self.counts.get_mut(i)
        {
            c.1 += 1;
            if bound {
                c.0 += 1;
            }
        }
    }

    /// Each service's Service and ReplicaSet, as a real cluster has them (upstream's default
    /// spreading takes its selector from them), then the PodDisruptionBudgets.
    fn epilogue(&mut self, ctx: &mut Ctx) -> Vec<Value> {
        let mut out = Vec::new();
        for (app, &(_, written)) in APPS.iter().zip(&self.counts) {
            if written > 0 {
                let replicas = usize::try_from(written).unwrap_or(0);
                out.extend(eks::service_and_replica_set(app.namespace, app.name, replicas, ctx));
            }
        }
        for (app, (bound, written)) in APPS.iter().zip(self.counts) {
            let Some(budget) = app.budget else { continue };
            let spec = PdbSpec {
                namespace: app.namespace,
                name: app.name,
                app: app.name,
                budget,
                expected: written,
                healthy: bound,
            };
            let rv = ctx.rv();
            let uid = ctx.uid();
            out.push(objects::pdb(&spec, NOW - 30 * 86_400, rv, &uid));
        }
        out
    }
}
