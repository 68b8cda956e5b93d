//! The streaming engine behind [`super::Generator`]: asks a workload [`Family`] for its
//! objects one at a time, binds the `--init-pods` batch where each pod fits, and yields every
//! object as a `serde_json::Value`.
//!
//! Memory: the engine keeps one [`Free`] record per node (what is left of its allocatable
//! resources, and anti-affinity tags) plus the objects of the unit being emitted (one pod, or
//! one gang and its PodGroup). Nothing per pod survives its emission, so the stream's length
//! does not change what the generator holds.
//!
//! Placement of a bound pod: the nodes its family allows (an index range: families lay their
//! node kinds out in contiguous ranges), probed from a start that depends on the strategy
//! (round-robin cursor, random node, or the first node not yet full), at most
//! [`MAX_PROBES`] of them; the first node where every requested resource fits the remaining
//! allocatable amount (cpu, memory, `nvidia.com/gpu`, one more pod) and no exclusive tag
//! clashes takes it. A gang is bound all together or not at all. A pod of the `--init-pods`
//! batch that fits nowhere is written pending and counted in the summary.

use std::collections::{BTreeMap, VecDeque};
use std::ops::Range;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};

use super::objects::{self, NOW};
use super::{GenParams, GenSummary};
use crate::model::GangConvention;

/// At most this many nodes are tried for one pod.
pub const MAX_PROBES: usize = 4096;

/// Resources a pod requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Request {
    /// CPU in millicores.
    pub cpu: i64,
    /// Memory in bytes.
    pub memory: i64,
    /// `nvidia.com/gpu`.
    pub gpu: i64,
}

/// What is left on a node: allocatable minus the bound pods' requests, and the exclusive tags
/// its pods carry (a pod with required anti-affinity to its own kind on the hostname sets one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Free {
    /// CPU in millicores.
    pub cpu: i64,
    /// Memory in bytes.
    pub memory: i64,
    /// Pods.
    pub pods: i64,
    /// `nvidia.com/gpu`.
    pub gpu: i64,
    /// Exclusive tags present.
    pub tags: u8,
}

impl Free {
    /// A node's allocatable resources, nothing used yet.
    pub fn of(shape: &objects::NodeShape) -> Free {
        Free { cpu: shape.cpu, memory: shape.memory, pods: shape.pods, gpu: shape.gpus, tags: 0 }
    }

    fn fits(&self, r: &Request, tags: u8) -> bool {
        self.cpu >= r.cpu
            && self.memory >= r.memory
            && self.gpu >= r.gpu
            && self.pods >= 1
            && self.tags & tags == 0
    }

    fn take(&mut self, r: &Request, tags: u8) {
        self.cpu -= r.cpu;
        self.memory -= r.memory;
        self.gpu -= r.gpu;
        self.pods -= 1;
        self.tags |= tags;
    }
}

/// Where to start probing for a pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Round-robin over the allowed nodes (even spread, as LeastAllocated scoring tends to).
    Spread,
    /// A random allowed node (a cluster whose history fragmented it).
    Random,
    /// The first allowed node that still has room (bin packing, as gang schedulers do).
    Pack,
}

/// Which nodes a pod may be bound to, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// Allowed node indices (nodes are generated in index order).
    pub nodes: Range<usize>,
    /// How to probe.
    pub strategy: Strategy,
    /// Exclusive tags: the node must carry none of them, and gets them.
    pub exclusive: u8,
}

/// `resources.limits` relative to the requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limits {
    /// Limits equal requests (Guaranteed QoS).
    Same,
    /// A memory limit equal to the request, no CPU limit (Burstable).
    Memory,
}

/// The controller that owns a pod (`metadata.ownerReferences`, `controller: true`), as a real
/// cluster's pods of a Deployment (owned by its ReplicaSet), StatefulSet or Job carry it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    /// `apiVersion` of the owner (`apps/v1`).
    pub api_version: &'static str,
    /// `kind` of the owner (`ReplicaSet`).
    pub kind: &'static str,
    /// `name` of the owner (in the pod's namespace).
    pub name: String,
}

/// One pod before it is named, timed and placed.
#[derive(Debug, Clone)]
pub struct PodDraft {
    /// `metadata.namespace`.
    pub namespace: &'static str,
    /// `metadata.generateName`; the name is this plus a generated suffix unless `name` is set.
    pub generate_name: String,
    /// A fixed `metadata.name` (StatefulSet-like workers of a gang).
    pub name: Option<String>,
    /// `metadata.labels`.
    pub labels: Map<String, Value>,
    /// The one container's name.
    pub container: &'static str,
    /// Its image.
    pub image: &'static str,
    /// Its `containerPort`, if any.
    pub port: Option<i64>,
    /// Its requests.
    pub request: Request,
    /// Its limits.
    pub limits: Limits,
    /// Further `spec` fields (affinity, priority, nodeSelector, schedulerName, tolerations, …);
    /// the engine adds the API server's defaults for the fields left out.
    pub spec: Map<String, Value>,
    /// Add what admission plugins add (service account, the default NoExecute tolerations, and
    /// priority 0 when none is set). scheduler_perf's API server runs without them.
    pub admission: bool,
    /// Where it may be bound.
    pub placement: Placement,
    /// Its controlling owner (`None`: a bare pod, as scheduler_perf creates them).
    pub owner: Option<Owner>,
}

/// A coscheduled gang: a PodGroup and its pods. The engine writes the PodGroup of the gang's
/// convention and marks each pod with the convention's label or annotation.
#[derive(Debug, Clone)]
pub struct Gang {
    /// Namespace of the PodGroup.
    pub namespace: &'static str,
    /// Name of the PodGroup.
    pub name: String,
    /// Whose PodGroup: coscheduling (`scheduling.x-k8s.io/v1alpha1`, pod label
    /// `scheduling.x-k8s.io/pod-group`) or Volcano (`scheduling.volcano.sh/v1beta1`, pod
    /// annotation `scheduling.k8s.io/group-name`).
    pub convention: GangConvention,
}

/// What a family hands the engine at a time: one pod, or a gang's pods.
#[derive(Debug, Clone)]
pub struct Unit {
    /// The pods (at least one).
    pub pods: Vec<PodDraft>,
    /// The gang, when the pods must be placed together.
    pub gang: Option<Gang>,
}

/// Per-run helpers: the seeded random stream, resource versions and ids.
#[derive(Debug)]
pub struct Ctx {
    rng: ChaCha8Rng,
    resource_version: u64,
}

impl Ctx {
    fn new(seed: u64) -> Ctx {
        Ctx { rng: ChaCha8Rng::seed_from_u64(seed), resource_version: 1000 }
    }

    /// The next `metadata.resourceVersion`.
    pub fn rv(&mut self) -> u64 {
        self.resource_version += 1;
        self.resource_version
    }

    /// 128 random bits.
    pub fn bits(&mut self) -> u128 {
        (u128::from(self.rng.next_u64()) << 64) | u128::from(self.rng.next_u64())
    }

    /// A random v4 UUID.
    pub fn uid(&mut self) -> String {
        let bits = self.bits();
        objects::uuid(bits)
    }

    /// A uniform integer in `[0, n)` (0 when `n` is 0), by Lemire's multiply-and-reject, so
    /// the stream does not depend on a library's sampling algorithm.
    pub fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        let n = n as u64;
        let threshold = n.wrapping_neg() % n;
        loop {
            let m = u128::from(self.rng.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as usize;
            }
        }
    }

    /// An index into `weights`, drawn in proportion to them (0 when all are 0).
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|w| u64::from(*w)).sum();
        if total == 0 {
            return 0;
        }
        let mut r = self.below(total as usize) as u64;
        for (i, w) in weights.iter().enumerate() {
            let w = u64::from(*w);
            if r < w {
                return i;
            }
            r -= w;
        }
        weights.len() - 1
    }

    /// True with probability `percent`/100.
    pub fn percent(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
}

/// A node as a family describes it.
#[derive(Debug)]
pub struct NodeOut {
    /// The Node object.
    pub object: Value,
    /// Its allocatable resources.
    pub free: Free,
}

/// A workload family: what its cluster and its pods look like.
pub trait Family: std::fmt::Debug + Send {
    /// Objects before the nodes (Namespaces, PriorityClasses).
    fn preamble(&mut self, ctx: &mut Ctx) -> Vec<Value>;
    /// Node `index` (of `GenParams::nodes`).
    fn node(&mut self, index: usize, ctx: &mut Ctx) -> NodeOut;
    /// The name of node `index` (the same as in its object).
    fn node_name(&self, index: usize) -> String;
    /// The InternalIP of node `index`.
    fn node_ip(&self, index: usize) -> u32;
    /// The next unit of the bound batch (`bound`) or of the pending pods, with at most
    /// `remaining` (≥ 1) pods.
    fn unit(&mut self, bound: bool, remaining: usize, ctx: &mut Ctx) -> Unit;
    /// Told about each pod once it is written, bound to a node or not.
    fn emitted(&mut self, _pod: &PodDraft, _bound: bool) {}
    /// Objects after the pods (PodDisruptionBudgets with their status).
    fn epilogue(&mut self, _ctx: &mut Ctx) -> Vec<Value> {
        Vec::new()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Preamble,
    Nodes,
    Bound,
    Pending,
    Epilogue,
    Done,
}

/// The object stream of one generated snapshot; see the module docs of [`super`].
#[derive(Debug)]
pub struct Generator {
    params: GenParams,
    family: Box<dyn Family>,
    ctx: Ctx,
    /// What is left on each node, by index (O(nodes)).
    free: Vec<Free>,
    /// Round-robin and packing cursors by allowed range (one entry per distinct range).
    cursors: BTreeMap<(usize, usize), usize>,
    /// Objects of the current unit, not yet yielded.
    queue: VecDeque<Value>,
    stage: Stage,
    /// Pods of the init batch written so far.
    init_written: usize,
    /// Pending pods written so far.
    pending_written: usize,
    /// Pods named so far (for generated name suffixes).
    pod_index: usize,
    /// Pods bound so far (for pod IPs).
    bound_index: usize,
    /// Counts of what has been yielded.
    summary: GenSummary,
}

impl Generator {
    pub(super) fn new(params: GenParams, family: Box<dyn Family>) -> Generator {
        Generator {
            ctx: Ctx::new(params.seed),
            params,
            family,
            free: Vec::new(),
            cursors: BTreeMap::new(),
            queue: VecDeque::new(),
            stage: Stage::Preamble,
            init_written: 0,
            pending_written: 0,
            pod_index: 0,
            bound_index: 0,
            summary: GenSummary::default(),
        }
    }

    /// Counts of what has been yielded so far (complete once the iterator is exhausted).
    pub fn summary(&self) -> &GenSummary {
        &self.summary
    }

    /// Heap bytes the generator holds now: per-node records, cursors and queued objects'
    /// containers (an estimate for the objects: 2 KiB each). It depends on the node count and
    /// the largest unit, not on how many pods have been or will be written.
    pub fn retained_bytes(&self) -> usize {
        self.free.capacity() * std::mem::size_of::<Free>()
            + self.cursors.len() * 3 * std::mem::size_of::<usize>()
            + self.queue.capacity() * (std::mem::size_of::<Value>() + 2048)
    }

    fn advance(&mut self) {
        match self.stage {
            Stage::Preamble => {
                let objects = self.family.preamble(&mut self.ctx);
                self.queue.extend(objects);
                self.free.reserve_exact(self.params.nodes);
                self.stage = Stage::Nodes;
            }
            Stage::Nodes => {
                let index = self.free.len();
                if index < self.params.nodes {
                    let out = self.family.node(index, &mut self.ctx);
                    self.free.push(out.free);
                    self.queue.push_back(out.object);
                } else {
                    self.stage = Stage::Bound;
                }
            }
            Stage::Bound => {
                if self.init_written < self.params.init_pods {
                    let remaining = self.params.init_pods - self.init_written;
                    let unit = self.family.unit(true, remaining, &mut self.ctx);
                    let written = self.emit_unit(unit, true, remaining);
                    self.init_written += written;
                    // A family owes at least one pod per unit; never loop on an empty one.
                    if written == 0 {
                        self.stage = Stage::Pending;
                    }
                } else {
                    self.stage = Stage::Pending;
                }
            }
            Stage::Pending => {
                let total = self.params.pods - self.params.init_pods;
                if self.pending_written < total {
                    let remaining = total - self.pending_written;
                    let unit = self.family.unit(false, remaining, &mut self.ctx);
                    let written = self.emit_unit(unit, false, remaining);
                    self.pending_written += written;
                    if written == 0 {
                        self.stage = Stage::Epilogue;
                    }
                } else {
                    self.stage = Stage::Epilogue;
                }
            }
            Stage::Epilogue => {
                let objects = self.family.epilogue(&mut self.ctx);
                self.queue.extend(objects);
                self.stage = Stage::Done;
            }
            Stage::Done => {}
        }
    }

    /// Places (for the init batch) and queues a unit; returns how many pods it wrote.
    fn emit_unit(&mut self, mut unit: Unit, init: bool, remaining: usize) -> usize {
        unit.pods.truncate(remaining.max(1));
        let nodes = if init { self.place_all(&unit.pods) } else { None };
        if init && nodes.is_none() {
            self.summary.unplaced_init_pods += unit.pods.len();
        }
        if let Some(gang) = &unit.gang {
            let spec = objects::PodGroupSpec {
                convention: gang.convention,
                namespace: gang.namespace,
                name: &gang.name,
                min_member: unit.pods.len(),
                running: if nodes.is_some() { unit.pods.len() } else { 0 },
            };
            let created =
                self.created_at(init, if init { self.init_written } else { self.pending_written });
            let rv = self.ctx.rv();
            let uid = self.ctx.uid();
            self.queue.push_back(objects::pod_group(&spec, created.saturating_sub(1), rv, &uid));
        }
        let count = unit.pods.len();
        for (k, pod) in unit.pods.iter().enumerate() {
            let node = nodes.as_ref().and_then(|n| n.get(k).copied());
            let ordinal = if init { self.init_written + k } else { self.pending_written + k };
            let object = self.pod_object(pod, node, init, ordinal, unit.gang.as_ref());
            self.family.emitted(pod, node.is_some());
            self.queue.push_back(object);
        }
        count
    }

    /// Binds every pod or none: the chosen node of each, or `None` (and nothing taken).
    fn place_all(&mut self, pods: &[PodDraft]) -> Option<Vec<usize>> {
        let mut chosen: Vec<(usize, Free)> = Vec::with_capacity(pods.len());
        for pod in pods {
            match self.place(pod) {
                Some(entry) => chosen.push(entry),
                None => {
                    for (i, before) in chosen.into_iter().rev() {
                        if let Some(slot) = self.free.get_mut(i) {
                            *slot = before;
                        }
                    }
                    return None;
                }
            }
        }
        Some(chosen.into_iter().map(|(i, _)| i).collect())
    }

    /// Binds one pod: the node index and that node's record before the pod took its share.
    fn place(&mut self, pod: &PodDraft) -> Option<(usize, Free)> {
        let p = &pod.placement;
        let range = p.nodes.start..p.nodes.end.min(self.free.len());
        let len = range.len();
        if len == 0 {
            return None;
        }
        let key = (range.start, range.end);
        let cursor = self.cursors.get(&key).copied().unwrap_or(0) % len;
        let start = match p.strategy {
            Strategy::Spread => cursor,
            Strategy::Random => self.ctx.below(len),
            Strategy::Pack => {
                // Skip the nodes at the front that are full for any pod of this kind.
                let mut c = cursor;
                let mut skipped = 0;
                while skipped < len {
                    let f = &self.free[range.start + c];
                    let exhausted = f.pods == 0 || (pod.request.gpu > 0 && f.gpu == 0);
                    if !exhausted {
                        break;
                    }
                    c = (c + 1) % len;
                    skipped += 1;
                }
                self.cursors.insert(key, c);
                c
            }
        };
        for step in 0..len.min(MAX_PROBES) {
            let offset = (start + step) % len;
            let i = range.start + offset;
            let slot = &mut self.free[i];
            if slot.fits(&pod.request, p.exclusive) {
                let before = *slot;
                slot.take(&pod.request, p.exclusive);
                if p.strategy == Strategy::Spread {
                    self.cursors.insert(key, (offset + 1) % len);
                }
                return Some((i, before));
            }
        }
        None
    }

    /// Creation time of pod `ordinal` of the init batch (spread over the three days before
    /// [`NOW`]) or of the pending pods (ten a second from [`NOW`]).
    fn created_at(&self, init: bool, ordinal: usize) -> i64 {
        if init {
            // In i128: ordinal × span cannot overflow whatever the pod count.
            let span = 2 * 86_400i128;
            let n = self.params.init_pods.max(1) as i128;
            NOW - 3 * 86_400 + ((ordinal as i128 * span) / n) as i64
        } else {
            NOW.saturating_add((ordinal / 10) as i64)
        }
    }

    fn pod_object(
        &mut self,
        pod: &PodDraft,
        node: Option<usize>,
        init: bool,
        ordinal: usize,
        gang: Option<&Gang>,
    ) -> Value {
        let index = self.pod_index;
        self.pod_index += 1;
        let name = match &pod.name {
            Some(n) => n.clone(),
            None => {
                format!("{}{}", pod.generate_name, objects::name_suffix(index, self.params.pods))
            }
        };
        let created = self.created_at(init, ordinal);
        let rv = self.ctx.rv();
        let uid = self.ctx.uid();
        let mut meta =
            objects::metadata(&name, Some(pod.namespace), pod.labels.clone(), created, rv, &uid);
        if pod.name.is_none()
            && let Some(m) = meta.as_object_mut()
        {
            m.insert("generateName".into(), pod.generate_name.clone().into());
        }
        if let Some(owner) = &pod.owner
            && let Some(m) = meta.as_object_mut()
        {
            m.insert("ownerReferences".into(), owner_references(pod.namespace, owner));
        }
        if let Some(g) = gang
            && let Some(m) = meta.as_object_mut()
        {
            let field = match g.convention {
                GangConvention::Coscheduling => "labels",
                GangConvention::Volcano => "annotations",
            };
            if let Value::Object(map) = m.entry(field).or_insert_with(|| Value::Object(Map::new()))
            {
                map.insert(g.convention.pod_key().into(), g.name.clone().into());
            }
        }

        let r = pod.request;
        let mut requests = Map::new();
        requests.insert("cpu".into(), objects::cpu_quantity(r.cpu).into());
        requests.insert("memory".into(), objects::memory_quantity(r.memory).into());
        let mut limits = Map::new();
        if pod.limits == Limits::Same {
            limits.insert("cpu".into(), objects::cpu_quantity(r.cpu).into());
        }
        limits.insert("memory".into(), objects::memory_quantity(r.memory).into());
        if r.gpu > 0 {
            requests.insert("nvidia.com/gpu".into(), r.gpu.to_string().into());
            limits.insert("nvidia.com/gpu".into(), r.gpu.to_string().into());
        }
        let qos = if pod.limits == Limits::Same { "Guaranteed" } else { "Burstable" };
        let mut container = Map::new();
        container.insert("image".into(), pod.image.into());
        container.insert("imagePullPolicy".into(), "IfNotPresent".into());
        container.insert("name".into(), pod.container.into());
        if let Some(port) = pod.port {
            container.insert("ports".into(), json!([{"containerPort": port, "protocol": "TCP"}]));
        }
        container.insert("resources".into(), json!({"limits": limits, "requests": requests}));
        container.insert("terminationMessagePath".into(), "/dev/termination-log".into());
        container.insert("terminationMessagePolicy".into(), "File".into());

        let mut spec = pod.spec.clone();
        spec.insert("containers".into(), Value::Array(vec![Value::Object(container)]));
        let defaults: [(&str, Value); 6] = [
            ("dnsPolicy", "ClusterFirst".into()),
            ("enableServiceLinks", true.into()),
            ("restartPolicy", "Always".into()),
            ("schedulerName", "default-scheduler".into()),
            ("securityContext", json!({})),
            ("terminationGracePeriodSeconds", 30.into()),
        ];
        for (k, v) in defaults {
            spec.entry(k).or_insert(v);
        }
        if pod.admission {
            spec.entry("serviceAccount").or_insert("default".into());
            spec.entry("serviceAccountName").or_insert("default".into());
            spec.entry("priority").or_insert(0.into());
            spec.entry("preemptionPolicy").or_insert("PreemptLowerPriority".into());
            let tolerations = spec.entry("tolerations").or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(t) = tolerations {
                for key in ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"] {
                    t.push(json!({
                        "effect": "NoExecute",
                        "key": key,
                        "operator": "Exists",
                        "tolerationSeconds": 300,
                    }));
                }
            }
        }

        let status = match node {
            Some(i) => {
                spec.insert("nodeName".into(), self.family.node_name(i).into());
                let host_ip = objects::ipv4(self.family.node_ip(i));
                let pod_ip = objects::ipv4(
                    0x0A80_0000 | ((self.bound_index as u32).wrapping_add(2) & 0x007F_FFFF),
                );
                self.bound_index += 1;
                let started = objects::timestamp(created + 1);
                let ready = objects::timestamp(created + 4);
                let condition = |kind: &str, at: &str| json!({"lastProbeTime": null, "lastTransitionTime": at, "status": "True", "type": kind});
                json!({
                    "conditions": [
                        condition("PodReadyToStartContainers", &ready),
                        condition("Initialized", &started),
                        condition("Ready", &ready),
                        condition("ContainersReady", &ready),
                        condition("PodScheduled", &started),
                    ],
                    "hostIP": host_ip,
                    "hostIPs": [{"ip": host_ip}],
                    "phase": "Running",
                    "podIP": pod_ip,
                    "podIPs": [{"ip": pod_ip}],
                    "qosClass": qos,
                    "startTime": started,
                })
            }
            None => json!({"phase": "Pending", "qosClass": qos}),
        };
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": spec,
            "status": status,
        })
    }

    fn count(&mut self, v: &Value) {
        let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
        match kind {
            "Node" => self.summary.nodes += 1,
            "Pod" => {
                if v.get("spec").and_then(|s| s.get("nodeName")).is_some() {
                    self.summary.bound_pods += 1;
                } else {
                    self.summary.pending_pods += 1;
                }
            }
            other => *self.summary.other_objects.entry(other.to_string()).or_insert(0) += 1,
        }
    }
}

/// `metadata.ownerReferences` naming `owner` as the pod's controller, as the ReplicaSet,
/// StatefulSet and Job controllers write it (`metav1.NewControllerRef`: `controller` and
/// `blockOwnerDeletion` true). The owner's uid is a function of its namespace, kind and name
/// ([`objects::owner_uid`]), so every pod of one owner names the same uid and the random stream
/// is not touched.
fn owner_references(namespace: &str, owner: &Owner) -> Value {
    json!([{
        "apiVersion": owner.api_version,
        "blockOwnerDeletion": true,
        "controller": true,
        "kind": owner.kind,
        "name": owner.name,
        "uid": objects::owner_uid(namespace, owner.kind, &owner.name),
    }])
}

impl Iterator for Generator {
    type Item = Value;

    fn next(&mut self) -> Option<Value> {
        loop {
            if let Some(v) = self.queue.pop_front() {
                self.count(&v);
                return Some(v);
            }
            if self.stage == Stage::Done {
                return None;
            }
            self.advance();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_draws_stay_in_range_and_cover_it() {
        let mut ctx = Ctx::new(7);
        let mut seen = [0usize; 5];
        for _ in 0..1000 {
            let x = ctx.below(5);
            assert!(x < 5);
            seen[x] += 1;
        }
        assert!(seen.iter().all(|n| *n > 100), "{seen:?}");
        assert_eq!(ctx.below(0), 0);
        assert_eq!(ctx.below(1), 0);
    }

    #[test]
    fn weighted_draws_never_pick_a_zero_weight() {
        let mut ctx = Ctx::new(1);
        for _ in 0..1000 {
            let i = ctx.weighted(&[0, 3, 0, 1]);
            assert!(i == 1 || i == 3);
        }
    }

    #[test]
    fn a_node_takes_a_pod_only_while_every_resource_and_tag_fits() {
        let free = Free { cpu: 1000, memory: 1000, pods: 1, gpu: 1, tags: 0b01 };
        let r = |cpu, memory, gpu| Request { cpu, memory, gpu };
        let cases: &[(&str, Request, u8, bool)] = &[
            ("a pod within every resource fits", r(1000, 1000, 1), 0, true),
            ("a pod over the CPU left does not fit", r(1001, 1, 0), 0, false),
            ("a pod over the memory left does not fit", r(1, 1001, 0), 0, false),
            ("a pod over the GPUs left does not fit", r(1, 1, 2), 0, false),
            ("a pod with a tag the node carries does not fit", r(1, 1, 0), 0b01, false),
            ("a pod with another tag fits", r(1, 1, 0), 0b10, true),
        ];
        for (name, req, tags, want) in cases {
            assert_eq!(free.fits(req, *tags), *want, "{name}");
        }
        let mut full = free;
        full.take(&r(1, 1, 0), 0);
        assert!(!full.fits(&r(0, 0, 0), 0), "a node with no pod slot left takes nothing");
    }
}
