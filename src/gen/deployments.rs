//! `deployments`: a fleet of stateless Deployments, each a ReplicaSet of 30 replicas behind a
//! Service, on a three-zone cluster — the everyday case where an operator judges a scheduler by
//! whether each Deployment's replicas are spread over the zones.
//!
//! Nodes: m5.2xlarge (8 CPU / 32 GiB), zones round-robin. Deployments: `ceil(pods / 30)`, pod
//! `k` (bound and pending alike) belongs to Deployment `k mod D`. Deployment `i` is app
//! `APPS[i mod 40]` in namespace `NAMESPACES[(i / 40) mod 3]` (so names repeat only past 120
//! Deployments), with a request size `SIZES[i mod 4]` and one of three scheduling styles,
//! `i mod 3`: no constraint (the profile's default spread applies through the Service and
//! ReplicaSet), an explicit zone spread (`maxSkew: 1`, `ScheduleAnyway`), or preferred
//! anti-affinity to its own replicas per node (weight 100). Each Deployment writes its
//! Service (selector `app`) and its ReplicaSet `<app>-<pod-template-hash>` (owned by the
//! Deployment, `spec.replicas` its pod count, selector `app` + `pod-template-hash`); its pods
//! carry the ReplicaSet as controlling owner. No upstream counterpart.

use serde_json::{Value, json};

use super::eks::{self, M5_2XLARGE};
use super::engine::{Ctx, Family, NodeOut, Request, Strategy, Unit};
use super::objects::{self, MI};
use super::{GenParams, WorkloadInfo};

/// Replicas per Deployment.
pub const REPLICAS: usize = 30;

/// `--list` text.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "deployments",
    mirrors: "a fleet of stateless Deployments behind Services (kplace's own; no scheduler_perf \
              counterpart), where spreading each Deployment over the zones matters",
    nodes: "EKS eu-west-1 m5.2xlarge (8 CPU/32Gi), three zones round-robin",
    pods: "ceil(pods/30) Deployments of 30 replicas, pod k in Deployment k mod D; each writes a \
           Service and a ReplicaSet <app>-<pod-template-hash> (owner of its pods, controller: \
           true); requests 250m/512Mi, 500m/1Gi, 1/2Gi or 2/4Gi by Deployment; Deployment i has \
           no constraint (i mod 3 = 0; the default spread applies), a zone spread maxSkew 1 \
           ScheduleAnyway (1) or preferred anti-affinity to its replicas per node, weight 100 (2)",
    knobs: "--nodes; --pods (30 per Deployment); --init-pods: pods already bound (round-robin \
            where they fit); --seed: node creation times and uids",
};

const NAMESPACES: [&str; 3] = ["prod", "shop", "data"];

const APPS: [&str; 40] = [
    "web",
    "api",
    "cart",
    "checkout",
    "search",
    "catalog",
    "auth",
    "profile",
    "orders",
    "payments",
    "billing",
    "inventory",
    "shipping",
    "reviews",
    "recommend",
    "notify",
    "email",
    "sms",
    "ledger",
    "pricing",
    "promo",
    "gateway",
    "session",
    "media",
    "thumbs",
    "export",
    "import",
    "report",
    "audit",
    "config",
    "flags",
    "quota",
    "geo",
    "chat",
    "feed",
    "ads",
    "metrics",
    "tracer",
    "rate",
    "queue",
];

/// (millicores, MiB).
const SIZES: [(i64, i64); 4] = [(250, 512), (500, 1024), (1000, 2048), (2000, 4096)];

/// Deployment `i`: (namespace, app, size).
fn deployment(i: usize) -> (&'static str, &'static str, (i64, i64)) {
    (NAMESPACES[(i / APPS.len()) % NAMESPACES.len()], APPS[i % APPS.len()], SIZES[i % SIZES.len()])
}

/// The `deployments` family.
#[derive(Debug)]
pub struct Deployments {
    nodes: usize,
    pods: usize,
    count: usize,
    next: usize,
}

impl Deployments {
    pub fn new(params: &GenParams) -> Deployments {
        Deployments {
            nodes: params.nodes,
            pods: params.pods,
            count: params.pods.div_ceil(REPLICAS).max(1),
            next: 0,
        }
    }

    /// Pods of Deployment `i` over the whole stream.
    fn replicas(&self, i: usize) -> usize {
        if i >= self.pods { 0 } else { (self.pods - i).div_ceil(self.count) }
    }
}

impl Family for Deployments {
    fn preamble(&mut self, ctx: &mut Ctx) -> Vec<Value> {
        let mut out: Vec<Value> = NAMESPACES.iter().map(|ns| eks::namespace(ns, ctx)).collect();
        // Deployments `i` and `i + 120` share a name: one ReplicaSet and Service for both.
        let distinct = APPS.len() * NAMESPACES.len();
        let mut replicas = vec![0usize; distinct.min(self.count)];
        for i in 0..self.count {
            replicas[i % distinct] += self.replicas(i);
        }
        for (i, &replicas) in replicas.iter().enumerate() {
            if replicas == 0 {
                continue;
            }
            let (namespace, app, _) = deployment(i);
            out.extend(eks::service_and_replica_set(namespace, app, replicas, ctx));
        }
        out
    }

    fn node(&mut self, index: usize, ctx: &mut Ctx) -> NodeOut {
        eks::node(index, &M5_2XLARGE, "apps-m5-2xl", false, Vec::new(), ctx)
    }

    fn node_name(&self, index: usize) -> String {
        eks::node_name(index)
    }

    fn node_ip(&self, index: usize) -> u32 {
        objects::eks_node_ip(index)
    }

    fn unit(&mut self, _bound: bool, _remaining: usize, _ctx: &mut Ctx) -> Unit {
        let i = self.next % self.count;
        self.next += 1;
        let (namespace, app, (cpu, mib)) = deployment(i);
        let request = Request { cpu, memory: mib * MI, gpu: 0 };
        let image = "ghcr.io/acme/service:1.0.0";
        let mut pod = eks::app_pod(namespace, app, image, request, 0..self.nodes, Strategy::Spread);
        match i % 3 {
            1 => {
                pod.spec.insert(
                    "topologySpreadConstraints".into(),
                    json!([{
                        "labelSelector": {"matchLabels": {"app": app}},
                        "maxSkew": 1,
                        "topologyKey": "topology.kubernetes.io/zone",
                        "whenUnsatisfiable": "ScheduleAnyway",
                    }]),
                );
            }
            2 => {
                pod.spec.insert(
                    "affinity".into(),
                    json!({"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
                        "weight": 100,
                        "podAffinityTerm": {
                            "labelSelector": {"matchLabels": {"app": app}},
                            "topologyKey": "kubernetes.io/hostname",
                        },
                    }]}}),
                );
            }
            _ => {}
        }
        Unit { pods: vec![pod], gang: None }
    }
}
