//! An in-process Kubernetes API server for the binder's tests: plain HTTP on 127.0.0.1 with an
//! ephemeral port, speaking the three endpoints `kplace bind` uses with the pod registry's
//! semantics (`pkg/registry/core/pod/storage/storage.go` `BindingREST`, `eviction.go`
//! `EvictionREST`; the stored copies read were from releases before v1.35, and the behaviour
//! modelled here is unchanged in v1.35):
//!
//! - `GET /api/v1/namespaces/{ns}/pods/{name}`: the pod, or 404 `NotFound`. A pod being deleted
//!   (evicted with a grace period) is returned with a `deletionTimestamp` for a configured number
//!   of reads, then it is gone.
//! - `POST …/pods/{name}/binding`: 201 with a `Success` Status; 404 when the pod does not exist;
//!   409 `Conflict` on `pods/binding` when it is being deleted or already assigned to a node;
//!   400 when the name in the URL and the body differ; 422 when the target is not a Node.
//! - `POST …/pods/{name}/eviction`: 201 with a `Success` Status; pending, terminal or deleting
//!   pods are deleted without looking at budgets; otherwise the one PodDisruptionBudget selecting
//!   the pod must allow a disruption (then it is decremented), else 429 `TooManyRequests` with a
//!   `DisruptionBudget` cause; the `deleteOptions.preconditions.uid` is checked (409 on mismatch);
//!   dry-run from the query and the body must agree (400 otherwise).
//!
//! - `GET /api/v1/namespaces/{ns}/pods`: a `PodList` of the namespace's pods (for the waves of
//!   a rebalancing plan, which look for replacement pods).
//!
//! `dryRun=All` validates and answers as usual but changes nothing. Fault injection per verb and
//! pod: an HTTP status N times before the real handler runs, a late reply (the change applied
//! first), or a connection dropped before or after the change is applied. Every request is
//! recorded.
//!
//! For `kplace schedule` it also serves, with the API server's semantics
//! (`staging/src/k8s.io/apiserver/pkg/endpoints/handlers/{get,watch,create,update,patch}.go`):
//!
//! - list and watch of pods, nodes, namespaces, services, replicationcontrollers, replicasets,
//!   statefulsets, poddisruptionbudgets, persistentvolumeclaims, priorityclasses and
//!   coscheduling's podgroups (Volcano's are not installed: 404): a list carries the current `resourceVersion`, and with `limit`
//!   comes in pages (`metadata.continue`, the offset of the next page; the fault
//!   [`Fault::ContinueExpired`] answers a continued list with 410 `Expired`); `watch=true` streams newline-delimited JSON events (`ADDED`,
//!   `MODIFIED`, `DELETED`) after the given `resourceVersion` (all current objects first when it
//!   is empty or `0`), ends after `timeoutSeconds`, and every change of the store (a binding, an
//!   eviction, a status patch, an object the test creates or deletes) bumps one global
//!   resourceVersion and is sent to every watch of its kind. [`ApiServer::drop_watches`] aborts
//!   the open watch connections.
//! - `PATCH`/`PUT pods/{name}/status`: a strategic merge patch of `status.conditions` (merged by
//!   `type`) and `status.nominatedNodeName` (`null` clears it).
//! - `POST` and `PATCH` (strategic merge of `series`) `events.k8s.io/v1` events.
//! - `coordination.k8s.io/v1` Leases: `GET` (404 when missing), `POST` (409 `AlreadyExists`),
//!   `PUT` (409 `Conflict` when `metadata.resourceVersion` is not the stored one).
//!
//! A request's client is told apart by its `x-kplace-client` header (see
//! [`ApiServer::client_named`]).
//!
//! Optional stand-ins for the rest of a cluster, off unless a test turns them on: a ReplicaSet
//! controller (an evicted pod owned by a ReplicaSet gets a replacement: a new pending pod with
//! the same owner, labels and scheduler name), a kube-scheduler (binds replacements whose
//! `schedulerName` is `default-scheduler` to a given node), a kubelet (bound pods become
//! `Running` and ready), and a disruption controller (a budget with `minAvailable` recomputes
//! `disruptionsAllowed` from its ready pods before every eviction).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use std::collections::VecDeque;

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Bytes, Frame, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use k8s_openapi::api::core::v1::{Binding, Pod, PodCondition, PodSpec, PodStatus};
use k8s_openapi::api::policy::v1::Eviction;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// A pod as the fake server stores it.
#[derive(Debug, Clone, PartialEq)]
pub struct FakePod {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `metadata.uid`.
    pub uid: String,
    /// `spec.nodeName`.
    pub node: Option<String>,
    /// Labels (PodDisruptionBudgets select on them).
    pub labels: BTreeMap<String, String>,
    /// `status.phase`.
    pub phase: String,
    /// Whether the `Ready` condition is true.
    pub ready: bool,
    /// Whether it has a `deletionTimestamp`.
    pub deleting: bool,
    /// Reads left before a deleting pod is gone.
    pub reads_until_gone: u32,
    /// The whole object the test created (spec, annotations, …); the fields above override it.
    pub object: Option<Pod>,
    /// Conditions other than `Ready` (set by status patches).
    pub conditions: Vec<PodCondition>,
    /// `status.nominatedNodeName`.
    pub nominated_node: Option<String>,
    /// `metadata.resourceVersion`.
    pub resource_version: u64,
    /// The controlling owner: (kind, name, uid).
    pub owner: Option<(String, String, String)>,
    /// `spec.schedulerName`.
    pub scheduler_name: String,
    /// `metadata.creationTimestamp`, seconds since the epoch.
    pub created: i64,
}

impl FakePod {
    /// A pending pod (`ns/name`), not on any node.
    pub fn pending(key: &str) -> Self {
        let (namespace, name) = key.split_once('/').expect("test pod keys are ns/name");
        FakePod {
            namespace: namespace.to_string(),
            name: name.to_string(),
            uid: format!("uid-{namespace}-{name}"),
            node: None,
            labels: BTreeMap::new(),
            phase: "Pending".to_string(),
            ready: false,
            deleting: false,
            reads_until_gone: 0,
            object: None,
            conditions: Vec::new(),
            nominated_node: None,
            resource_version: 0,
            owner: None,
            scheduler_name: "default-scheduler".to_string(),
            created: 0,
        }
    }

    /// A pod from a whole object (namespace `default` when it has none; a UID made from the
    /// name when it has none). It is running and ready when it names a node, else pending.
    pub fn from_pod(pod: Pod) -> Self {
        let namespace = pod.metadata.namespace.clone().unwrap_or("default".to_string());
        let name = pod.metadata.name.clone().expect("test pods have a name");
        let node = pod.spec.as_ref().and_then(|s| s.node_name.clone()).filter(|n| !n.is_empty());
        let phase = pod
            .status
            .as_ref()
            .and_then(|s| s.phase.clone())
            .unwrap_or(if node.is_some() { "Running" } else { "Pending" }.to_string());
        FakePod {
            uid: pod.metadata.uid.clone().unwrap_or(format!("uid-{namespace}-{name}")),
            labels: pod.metadata.labels.clone().unwrap_or_default(),
            ready: node.is_some(),
            node,
            phase,
            scheduler_name: pod
                .spec
                .as_ref()
                .and_then(|s| s.scheduler_name.clone())
                .unwrap_or("default-scheduler".to_string()),
            object: Some(pod),
            ..FakePod::pending(&format!("{namespace}/{name}"))
        }
    }

    /// Owned by a ReplicaSet named `name` (UID `uid-rs-{name}`).
    pub fn owned_by_replica_set(mut self, name: &str) -> Self {
        self.owner = Some(("ReplicaSet".to_string(), name.to_string(), format!("uid-rs-{name}")));
        self
    }

    /// With this `spec.schedulerName`.
    pub fn scheduler(mut self, name: &str) -> Self {
        self.scheduler_name = name.to_string();
        self
    }

    /// A running, ready pod on `node`.
    pub fn running(key: &str, node: &str) -> Self {
        FakePod {
            node: Some(node.to_string()),
            phase: "Running".to_string(),
            ready: true,
            ..Self::pending(key)
        }
    }

    /// With a label.
    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.labels.insert(key.to_string(), value.to_string());
        self
    }

    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// The pod as the API server returns it.
    pub fn to_json(&self) -> Value {
        let base = self.object.clone().unwrap_or_default();
        let mut conditions = vec![PodCondition {
            type_: "Ready".to_string(),
            status: if self.ready { "True" } else { "False" }.to_string(),
            ..Default::default()
        }];
        conditions.extend(self.conditions.iter().cloned());
        let pod = Pod {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                namespace: Some(self.namespace.clone()),
                uid: Some(self.uid.clone()),
                labels: Some(self.labels.clone()),
                deletion_timestamp: self.deleting.then(|| Time(Default::default())),
                resource_version: Some(self.resource_version.to_string()),
                creation_timestamp: base.metadata.creation_timestamp.clone().or(Some(Time(
                    k8s_openapi::jiff::Timestamp::from_second(self.created).unwrap_or_default(),
                ))),
                owner_references: self
                    .owner
                    .as_ref()
                    .map(|(kind, name, uid)| {
                        vec![OwnerReference {
                            api_version: "apps/v1".to_string(),
                            kind: kind.clone(),
                            name: name.clone(),
                            uid: uid.clone(),
                            controller: Some(true),
                            block_owner_deletion: Some(true),
                        }]
                    })
                    .or(base.metadata.owner_references.clone()),
                ..base.metadata
            },
            spec: Some(PodSpec {
                node_name: self.node.clone(),
                scheduler_name: Some(self.scheduler_name.clone()),
                ..base.spec.unwrap_or_default()
            }),
            status: Some(PodStatus {
                phase: Some(self.phase.clone()),
                conditions: Some(conditions),
                nominated_node_name: self.nominated_node.clone(),
                ..base.status.unwrap_or_default()
            }),
        };
        serde_json::to_value(pod).expect("a pod serializes")
    }

    /// The condition of this type, if set.
    pub fn condition(&self, type_: &str) -> Option<&PodCondition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }
}

/// A PodDisruptionBudget reduced to what the eviction subresource reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakePdb {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `spec.selector.matchLabels` (empty selects nothing, as upstream).
    pub selector: BTreeMap<String, String>,
    /// `status.disruptionsAllowed`.
    pub disruptions_allowed: i32,
    /// `status.desiredHealthy`.
    pub desired_healthy: i32,
    /// `status.currentHealthy`.
    pub current_healthy: i32,
    /// `metadata.resourceVersion`.
    pub resource_version: u64,
    /// `spec.minAvailable`: when set, the budget's status is recomputed from its ready pods
    /// before every eviction, as the disruption controller would.
    pub min_available: Option<i32>,
}

impl FakePdb {
    /// A budget in `namespace` selecting `key=value` that allows `allowed` disruptions.
    pub fn new(namespace: &str, name: &str, key: &str, value: &str, allowed: i32) -> Self {
        FakePdb {
            namespace: namespace.to_string(),
            name: name.to_string(),
            selector: BTreeMap::from([(key.to_string(), value.to_string())]),
            disruptions_allowed: allowed,
            desired_healthy: 2,
            current_healthy: 2 + allowed,
            resource_version: 0,
            min_available: None,
        }
    }

    /// A budget in `namespace` selecting `key=value` that needs `min` ready pods; its status is
    /// kept up to date by the server's disruption controller.
    pub fn min_available(namespace: &str, name: &str, key: &str, value: &str, min: i32) -> Self {
        FakePdb {
            min_available: Some(min),
            desired_healthy: min,
            ..Self::new(namespace, name, key, value, 0)
        }
    }

    /// The budget as a policy/v1 PodDisruptionBudget.
    pub fn to_json(&self) -> Value {
        json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": self.name, "namespace": self.namespace,
                         "resourceVersion": self.resource_version.to_string()},
            "spec": {"selector": {"matchLabels": self.selector}, "minAvailable": self.desired_healthy},
            "status": {"disruptionsAllowed": self.disruptions_allowed,
                       "desiredHealthy": self.desired_healthy,
                       "currentHealthy": self.current_healthy,
                       "expectedPods": self.current_healthy},
        })
    }

    fn selects(&self, pod: &FakePod) -> bool {
        self.namespace == pod.namespace
            && !self.selector.is_empty()
            && self.selector.iter().all(|(k, v)| pod.labels.get(k) == Some(v))
    }
}

/// The requests the binder sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// `GET pods/{name}`.
    GetPod,
    /// `POST pods/{name}/binding`.
    Bind,
    /// `POST pods/{name}/eviction`.
    Evict,
    /// A list of a collection (`pod` is the resource, e.g. `pods`).
    List,
    /// A watch of a collection (`pod` is the resource).
    Watch,
    /// `PATCH` or `PUT pods/{name}/status`.
    PatchStatus,
    /// `POST` of an event (`pod` is `namespace/` plus the regarding pod's name).
    CreateEvent,
    /// `PATCH` of an event (`pod` is `namespace/eventname`).
    PatchEvent,
    /// `GET` of a Lease (`pod` is `namespace/name`).
    GetLease,
    /// `POST` of a Lease.
    CreateLease,
    /// `PUT` of a Lease.
    UpdateLease,
    /// `GET pods` (a namespace's list).
    ListPods,
}

/// An injected fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Answer with this status (a `Status` body) without doing anything.
    Status(u16),
    /// Apply the change, then answer this much later.
    Delay(Duration),
    /// Apply the change, then close the connection without answering.
    DropAfterApply,
    /// Close the connection without doing anything.
    DropBeforeApply,
    /// For a watch: answer 200 with one `ERROR` event carrying a 410 `Expired` Status and end
    /// the stream, as the API server answers a watch from a compacted `resourceVersion`.
    WatchExpired,
    /// Answer 429 `TooManyRequests` asking the client to wait this many seconds (the
    /// `Retry-After` header and `details.retryAfterSeconds`, as API priority and fairness
    /// answers), without doing anything.
    TooManyRequests(u32),
    /// For a list that carries a `continue` token: answer 410 `Expired`, as the API server
    /// answers a token older than etcd's compaction. Lists without a token are not affected
    /// (and do not use up the rule).
    ContinueExpired,
}

/// Fault `fault` on the next `times` requests of `verb` for `pod`.
#[derive(Debug, Clone)]
struct Rule {
    verb: Verb,
    pod: String,
    fault: Fault,
    times: usize,
}

/// Random faults on every request of some verbs (see [`ApiServer::chaos`]).
#[derive(Debug, Clone)]
struct Chaos {
    verbs: Vec<Verb>,
    status: u16,
    status_rate: f64,
    drop_rate: f64,
    /// xorshift64 state.
    rng: u64,
}

impl Chaos {
    fn draw(&mut self) -> f64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        (self.rng >> 11) as f64 / (1u64 << 53) as f64
    }

    /// The fault for one request of `verb`, if any.
    fn fault(&mut self, verb: Verb) -> Option<Fault> {
        if !self.verbs.contains(&verb) {
            return None;
        }
        let x = self.draw();
        if x < self.status_rate {
            Some(Fault::Status(self.status))
        } else if x < self.status_rate + self.drop_rate {
            Some(Fault::DropAfterApply)
        } else {
            None
        }
    }
}

/// One request as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// What it was (None for a path the server does not serve).
    pub verb: Option<Verb>,
    /// `namespace/name` of the pod.
    pub pod: String,
    /// Whether it carried `dryRun=All`.
    pub dry_run: bool,
    /// The status sent, 0 when the connection was dropped.
    pub status: u16,
    /// The `x-kplace-client` header (empty when absent).
    pub client: String,
}

#[derive(Debug, Default)]
struct State {
    pods: BTreeMap<String, FakePod>,
    pdbs: Vec<FakePdb>,
    rules: Vec<Rule>,
    requests: Vec<Recorded>,
    /// Pod → nodes it was bound to, one entry per binding that changed the pod.
    binds: BTreeMap<String, Vec<String>>,
    /// Pod → evictions that deleted (or started deleting) it.
    evictions: BTreeMap<String, usize>,
    /// Reads a pod stays visible, `deleting`, after an eviction (0: gone at once).
    grace_reads: u32,
    /// Pod → UID of the pod a controller creates under the same name once it is evicted.
    recreate: BTreeMap<String, String>,
    /// Whether evicted ReplicaSet pods get replacements.
    replica_set_controller: bool,
    /// Replacements created so far (for their names and creation times).
    replacements: u32,
    /// Node the stand-in kube-scheduler binds `default-scheduler` replacements to.
    kube_scheduler_node: Option<String>,
    /// Whether bound pods become Running and ready.
    kubelet: bool,
    /// Replacement pods created, in order.
    created: Vec<String>,
    in_flight: usize,
    max_in_flight: usize,
    /// The last resourceVersion given out.
    rv: u64,
    /// Every change, for watches.
    history: Vec<Change>,
    /// Objects other than pods and budgets, by resource and `namespace/name` (or name).
    objects: BTreeMap<(String, String), Value>,
    /// Woken on every change.
    notify: Arc<Notify>,
    /// Bumped to abort every open watch.
    watch_epoch: u64,
    /// Random faults, when a test turned them on.
    chaos: Option<Chaos>,
}

/// One change of the store, as a watch sends it.
#[derive(Debug, Clone)]
struct Change {
    rv: u64,
    resource: String,
    type_: &'static str,
    object: Value,
}

/// The running server; stops when dropped.
#[derive(Debug)]
pub struct ApiServer {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    task: JoinHandle<()>,
}

impl Drop for ApiServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ApiServer {
    /// Starts a server holding `pods` and `pdbs` on the current tokio runtime.
    pub async fn start(pods: Vec<FakePod>, pdbs: Vec<FakePdb>) -> ApiServer {
        let mut state = State {
            pods: pods.into_iter().map(|p| (p.key(), p)).collect(),
            pdbs,
            ..State::default()
        };
        let keys: Vec<String> = state.pods.keys().cloned().collect();
        for k in keys {
            state.touch_pod(&k);
        }
        for i in 0..state.pdbs.len() {
            state.touch_pdb(i);
        }
        let state = Arc::new(Mutex::new(state));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let shared = Arc::clone(&state);
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let state = Arc::clone(&shared);
                tokio::spawn(async move {
                    let service = service_fn(move |req| handle(Arc::clone(&state), req));
                    // A dropped connection ends here with an error; that is the point of it.
                    let _ =
                        http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
                });
            }
        });
        ApiServer { addr, state, task }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A client for this server with kube's retries off, as the binder configures it.
    pub fn client(&self) -> kube::Client {
        let mut config = kube::Config::new(self.url().parse().expect("a valid URL"));
        config.default_retry = false;
        kube::Client::try_from(config).expect("a client")
    }

    /// Writes a kubeconfig whose context `test` (the current one) points at this server, plus a
    /// context `dead` pointing at a closed port.
    pub fn write_kubeconfig(&self, dir: &Path, current: &str) -> PathBuf {
        let path = dir.join("kubeconfig");
        let text = format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: {current}\nclusters:\n\
             - name: test\n  cluster:\n    server: {}\n\
             - name: dead\n  cluster:\n    server: http://127.0.0.1:1\n\
             users:\n- name: test\n  user: {{}}\n\
             contexts:\n- name: test\n  context:\n    cluster: test\n    user: test\n\
             - name: dead\n  context:\n    cluster: dead\n    user: test\n",
            self.url()
        );
        std::fs::write(&path, text).expect("write kubeconfig");
        path
    }

    /// Injects `fault` on the next `times` requests of `verb` for `pod`.
    pub fn inject(&self, verb: Verb, pod: &str, fault: Fault, times: usize) {
        self.state().rules.push(Rule { verb, pod: pod.to_string(), fault, times });
    }

    /// Random faults on the binder's requests of `verbs` (get, bind, evict, list pods) that no
    /// injected rule claims: each answers `status` (doing nothing) with probability
    /// `status_rate`, or is applied and then has its connection dropped without an answer with
    /// probability `drop_rate`. Seeded, so a run is reproducible for a given request order.
    pub fn chaos(&self, verbs: &[Verb], status: u16, status_rate: f64, drop_rate: f64, seed: u64) {
        self.state().chaos =
            Some(Chaos { verbs: verbs.to_vec(), status, status_rate, drop_rate, rng: seed.max(1) });
    }

    /// Turns random faults off.
    pub fn calm(&self) {
        self.state().chaos = None;
    }

    /// Drops every injected fault rule that has not run out yet.
    pub fn clear_faults(&self) {
        self.state().rules.clear();
    }

    /// Evicted pods stay visible, being deleted, for this many reads.
    pub fn set_grace_reads(&self, reads: u32) {
        self.state().grace_reads = reads;
    }

    /// Once `pod` is evicted (and gone), a new pod of the same name appears on the same node
    /// with this UID, as a StatefulSet controller would create it.
    pub fn recreate_after_eviction(&self, pod: &str, uid: &str) {
        self.state().recreate.insert(pod.to_string(), uid.to_string());
    }

    /// Turns on the ReplicaSet controller: every evicted pod owned by a ReplicaSet gets a
    /// replacement `{owner}-r{n}` (pending, unbound, same labels, owner and scheduler name).
    pub fn run_replica_set_controller(&self) {
        self.state().replica_set_controller = true;
    }

    /// Turns the ReplicaSet controller off again.
    pub fn state_without_controller(&self) {
        self.state().replica_set_controller = false;
    }

    /// Turns on a stand-in kube-scheduler that binds every new replacement whose
    /// `schedulerName` is `default-scheduler` to `node`.
    pub fn run_kube_scheduler(&self, node: &str) {
        self.state().kube_scheduler_node = Some(node.to_string());
    }

    /// Turns on the kubelet: pods become `Running` and ready when they are bound.
    pub fn run_kubelet(&self) {
        self.state().kubelet = true;
    }

    /// The replacement pods created so far, in order.
    pub fn replacements(&self) -> Vec<String> {
        self.state().created.clone()
    }

    /// Pods of `namespace` (in name order).
    pub fn pods_in(&self, namespace: &str) -> Vec<FakePod> {
        self.state().pods.values().filter(|p| p.namespace == namespace).cloned().collect()
    }

    /// The pod as stored now.
    pub fn pod(&self, key: &str) -> Option<FakePod> {
        self.state().pods.get(key).cloned()
    }

    /// Adds or replaces a pod.
    pub fn put_pod(&self, pod: FakePod) {
        let mut s = self.state();
        let key = pod.key();
        s.pods.insert(key.clone(), pod);
        s.touch_pod(&key);
    }

    /// Adds or replaces a budget (by namespace and name).
    pub fn put_pdb(&self, pdb: FakePdb) {
        let mut state = self.state();
        state.pdbs.retain(|p| !(p.namespace == pdb.namespace && p.name == pdb.name));
        state.pdbs.push(pdb);
    }

    /// The budget named `name`.
    pub fn pdb(&self, name: &str) -> Option<FakePdb> {
        self.state().pdbs.iter().find(|p| p.name == name).cloned()
    }

    /// Nodes `pod` was bound to, one per binding that changed it.
    pub fn binds(&self, pod: &str) -> Vec<String> {
        self.state().binds.get(pod).cloned().unwrap_or_default()
    }

    /// Bindings that changed a pod, over all pods.
    pub fn total_binds(&self) -> usize {
        self.state().binds.values().map(Vec::len).sum()
    }

    /// Evictions that deleted `pod`.
    pub fn evictions(&self, pod: &str) -> usize {
        self.state().evictions.get(pod).copied().unwrap_or(0)
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.state().requests.clone()
    }

    /// The most requests that were being handled at once.
    pub fn max_in_flight(&self) -> usize {
        self.state().max_in_flight
    }

    /// A client for this server that sends `x-kplace-client: name`, so the request log tells
    /// its requests apart.
    pub fn client_named(&self, name: &str) -> kube::Client {
        let mut config = kube::Config::new(self.url().parse().expect("a valid URL"));
        config.default_retry = false;
        config.headers.push((
            "x-kplace-client".parse().expect("a header name"),
            name.parse().expect("a header value"),
        ));
        kube::Client::try_from(config).expect("a client")
    }

    /// Creates a pod from a whole object (as a controller or a user would).
    pub fn create_pod(&self, pod: Pod) {
        self.put_pod(FakePod::from_pod(pod));
    }

    /// Deletes a pod at once (no grace period).
    pub fn delete_pod(&self, key: &str) {
        self.state().remove_pod(key);
    }

    /// Adds or replaces an object of another kind: `resource` is its plural (`nodes`,
    /// `priorityclasses`, `namespaces`, `services`, …); the object is stored as JSON.
    pub fn put_object<T: serde::Serialize>(&self, resource: &str, object: &T) {
        let value = serde_json::to_value(object).expect("the object serializes");
        self.state().put_object(resource, value);
    }

    /// Deletes an object of another kind by `namespace/name` (or name).
    pub fn delete_object(&self, resource: &str, key: &str) {
        self.state().delete_object(resource, key);
    }

    /// The stored object of another kind.
    pub fn object(&self, resource: &str, key: &str) -> Option<Value> {
        self.state().objects.get(&(resource.to_string(), key.to_string())).cloned()
    }

    /// Every stored object of a resource (events, leases, …), in key order.
    pub fn objects(&self, resource: &str) -> Vec<Value> {
        self.state()
            .objects
            .iter()
            .filter(|((r, _), _)| r == resource)
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// Aborts every open watch connection (the watchers must list or watch again).
    pub fn drop_watches(&self) {
        let mut s = self.state();
        s.watch_epoch += 1;
        s.notify.notify_waiters();
    }
}

/// The kinds served for list and watch: (API prefix, resource, list kind).
const COLLECTIONS: &[(&str, &str, &str)] = &[
    ("/api/v1", "pods", "PodList"),
    ("/api/v1", "nodes", "NodeList"),
    ("/api/v1", "namespaces", "NamespaceList"),
    ("/api/v1", "services", "ServiceList"),
    ("/api/v1", "replicationcontrollers", "ReplicationControllerList"),
    ("/api/v1", "persistentvolumeclaims", "PersistentVolumeClaimList"),
    ("/apis/apps/v1", "replicasets", "ReplicaSetList"),
    ("/apis/apps/v1", "statefulsets", "StatefulSetList"),
    ("/apis/policy/v1", "poddisruptionbudgets", "PodDisruptionBudgetList"),
    ("/apis/scheduling.k8s.io/v1", "priorityclasses", "PriorityClassList"),
    // The coscheduling PodGroup CRD is installed; Volcano's is not (its lists answer 404).
    ("/apis/scheduling.x-k8s.io/v1alpha1", "podgroups", "PodGroupList"),
];

fn object_key(value: &Value) -> String {
    let name = value["metadata"]["name"].as_str().unwrap_or_default();
    match value["metadata"]["namespace"].as_str() {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_string(),
    }
}

fn query_param<'a>(query: &'a str, name: &str) -> Option<&'a str> {
    query.split('&').find_map(|kv| kv.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
}

fn status_failure(code: u16, reason: &str, message: &str) -> (u16, Value) {
    failure(code, reason, message, Value::Null)
}

/// Merges a JSON merge/strategic patch into `target` (objects merged key by key, `null`
/// deletes, anything else replaces).
fn merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

impl State {
    fn next_rv(&mut self) -> u64 {
        self.rv += 1;
        self.rv
    }

    fn record_change(&mut self, resource: &str, type_: &'static str, object: Value, rv: u64) {
        self.history.push(Change { rv, resource: resource.to_string(), type_, object });
        self.notify.notify_waiters();
    }

    /// A pod was added or changed: new resourceVersion, and a watch event.
    fn touch_pod(&mut self, key: &str) {
        let rv = self.next_rv();
        let Some(pod) = self.pods.get_mut(key) else { return };
        let type_ = if pod.resource_version == 0 { "ADDED" } else { "MODIFIED" };
        pod.resource_version = rv;
        let object = pod.to_json();
        self.record_change("pods", type_, object, rv);
    }

    /// A pod is gone.
    fn remove_pod(&mut self, key: &str) {
        if let Some(mut pod) = self.pods.remove(key) {
            let rv = self.next_rv();
            pod.resource_version = rv;
            let object = pod.to_json();
            self.record_change("pods", "DELETED", object, rv);
        }
    }

    fn touch_pdb(&mut self, i: usize) {
        let rv = self.next_rv();
        let Some(pdb) = self.pdbs.get_mut(i) else { return };
        let type_ = if pdb.resource_version == 0 { "ADDED" } else { "MODIFIED" };
        pdb.resource_version = rv;
        let object = pdb.to_json();
        self.record_change("poddisruptionbudgets", type_, object, rv);
    }

    fn put_object(&mut self, resource: &str, mut value: Value) -> Value {
        let rv = self.next_rv();
        value["metadata"]["resourceVersion"] = json!(rv.to_string());
        if value["metadata"]["uid"].is_null() {
            value["metadata"]["uid"] = json!(format!("uid-{resource}-{}", object_key(&value)));
        }
        let key = (resource.to_string(), object_key(&value));
        let type_ = if self.objects.contains_key(&key) { "MODIFIED" } else { "ADDED" };
        self.objects.insert(key, value.clone());
        self.record_change(resource, type_, value.clone(), rv);
        value
    }

    fn delete_object(&mut self, resource: &str, key: &str) {
        if let Some(mut value) = self.objects.remove(&(resource.to_string(), key.to_string())) {
            let rv = self.next_rv();
            value["metadata"]["resourceVersion"] = json!(rv.to_string());
            self.record_change(resource, "DELETED", value, rv);
        }
    }

    /// Current objects of a resource, in key order.
    fn items(&self, resource: &str) -> Vec<Value> {
        match resource {
            "pods" => self.pods.values().map(FakePod::to_json).collect(),
            "poddisruptionbudgets" => {
                let mut v: Vec<Value> = self.pdbs.iter().map(FakePdb::to_json).collect();
                // Budgets a test stored whole, with `put_object`.
                v.extend(
                    self.objects.iter().filter(|((r, _), _)| r == resource).map(|(_, v)| v.clone()),
                );
                v.sort_by_key(object_key);
                v
            }
            _ => self
                .objects
                .iter()
                .filter(|((r, _), _)| r == resource)
                .map(|(_, v)| v.clone())
                .collect(),
        }
    }

    /// `PATCH pods/{name}/status`.
    fn patch_pod_status(&mut self, key: &str, name: &str, body: &[u8]) -> (u16, Value) {
        let Ok(patch) = serde_json::from_slice::<Value>(body) else {
            return bad_request("the patch is not JSON");
        };
        let Some(pod) = self.pods.get_mut(key) else { return not_found(name) };
        let status = &patch["status"];
        if let Some(conditions) = status["conditions"].as_array() {
            for c in conditions {
                let Ok(c) = serde_json::from_value::<PodCondition>(c.clone()) else {
                    return bad_request("status.conditions: not a pod condition");
                };
                match pod.conditions.iter_mut().find(|o| o.type_ == c.type_) {
                    Some(old) => *old = c,
                    None => pod.conditions.push(c),
                }
            }
        }
        match status.get("nominatedNodeName") {
            Some(Value::Null) => pod.nominated_node = None,
            Some(Value::String(n)) => pod.nominated_node = Some(n.clone()),
            _ => {}
        }
        self.touch_pod(key);
        (200, self.pods.get(key).map(FakePod::to_json).unwrap_or_default())
    }

    fn create_event(&mut self, ns: &str, body: &[u8]) -> (u16, Value) {
        let Ok(mut event) = serde_json::from_slice::<Value>(body) else {
            return bad_request("the event is not JSON");
        };
        if event["metadata"]["namespace"].is_null() {
            event["metadata"]["namespace"] = json!(ns);
        }
        if event["metadata"]["namespace"] != json!(ns) {
            return bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            );
        }
        if self.objects.contains_key(&("events".to_string(), object_key(&event))) {
            return status_failure(409, "AlreadyExists", "events already exists");
        }
        (201, self.put_object("events", event))
    }

    fn patch_event(&mut self, key: &str, body: &[u8]) -> (u16, Value) {
        let Ok(patch) = serde_json::from_slice::<Value>(body) else {
            return bad_request("the patch is not JSON");
        };
        let Some(mut event) = self.objects.get(&("events".to_string(), key.to_string())).cloned()
        else {
            return status_failure(404, "NotFound", "events not found");
        };
        merge(&mut event, &patch);
        (200, self.put_object("events", event))
    }

    fn lease(&mut self, method: &Method, key: &str, ns: &str, body: &[u8]) -> (u16, Value) {
        let id = ("leases".to_string(), key.to_string());
        match *method {
            Method::GET => match self.objects.get(&id) {
                Some(v) => (200, v.clone()),
                None => status_failure(404, "NotFound", "leases.coordination.k8s.io not found"),
            },
            Method::POST => {
                let Ok(mut lease) = serde_json::from_slice::<Value>(body) else {
                    return bad_request("the lease is not JSON");
                };
                lease["metadata"]["namespace"] = json!(ns);
                if self.objects.contains_key(&("leases".to_string(), object_key(&lease))) {
                    return status_failure(
                        409,
                        "AlreadyExists",
                        "leases.coordination.k8s.io already exists",
                    );
                }
                (201, self.put_object("leases", lease))
            }
            Method::PUT => {
                let Ok(lease) = serde_json::from_slice::<Value>(body) else {
                    return bad_request("the lease is not JSON");
                };
                let Some(stored) = self.objects.get(&id) else {
                    return status_failure(404, "NotFound", "leases.coordination.k8s.io not found");
                };
                if lease["metadata"]["resourceVersion"] != stored["metadata"]["resourceVersion"] {
                    return status_failure(
                        409,
                        "Conflict",
                        "Operation cannot be fulfilled on leases.coordination.k8s.io: the object \
                         has been modified; please apply your changes to the latest version and try again",
                    );
                }
                (200, self.put_object("leases", lease))
            }
            _ => status_failure(405, "MethodNotAllowed", "method not allowed"),
        }
    }
}

/// What the extended routes serve.
enum Route2 {
    Collection { resource: String, kind: String, api_version: String },
    PodStatus { ns: String, name: String },
    Events { ns: String },
    Event { ns: String, name: String },
    Leases { ns: String },
    Lease { ns: String, name: String },
}

fn route_more(path: &str) -> Option<Route2> {
    for (prefix, resource, kind) in COLLECTIONS {
        if path == format!("{prefix}/{resource}") {
            let api_version = prefix.trim_start_matches("/apis/").trim_start_matches("/api/");
            return Some(Route2::Collection {
                resource: resource.to_string(),
                kind: kind.to_string(),
                api_version: api_version.to_string(),
            });
        }
    }
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match parts.as_slice() {
        ["api", "v1", "namespaces", ns, "pods", name, "status"] => {
            Some(Route2::PodStatus { ns: ns.to_string(), name: name.to_string() })
        }
        ["apis", "events.k8s.io", "v1", "namespaces", ns, "events"] => {
            Some(Route2::Events { ns: ns.to_string() })
        }
        ["apis", "events.k8s.io", "v1", "namespaces", ns, "events", name] => {
            Some(Route2::Event { ns: ns.to_string(), name: name.to_string() })
        }
        ["apis", "coordination.k8s.io", "v1", "namespaces", ns, "leases"] => {
            Some(Route2::Leases { ns: ns.to_string() })
        }
        ["apis", "coordination.k8s.io", "v1", "namespaces", ns, "leases", name] => {
            Some(Route2::Lease { ns: ns.to_string(), name: name.to_string() })
        }
        _ => None,
    }
}

/// Serves the routes `kplace schedule` adds; `None` for the binder's routes.
async fn serve_more(
    state: &Arc<Mutex<State>>,
    method: &Method,
    path: &str,
    query: &str,
    body: &[u8],
    client: &str,
) -> Option<Result<Reply, Dropped>> {
    let route = route_more(path)?;
    let lock = || state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let watching = matches!(query_param(query, "watch"), Some("true" | "1"));
    let (verb, key) = match (&route, method) {
        (Route2::Collection { resource, .. }, &Method::GET) => {
            (if watching { Verb::Watch } else { Verb::List }, resource.clone())
        }
        (Route2::PodStatus { ns, name }, &Method::PATCH | &Method::PUT) => {
            (Verb::PatchStatus, format!("{ns}/{name}"))
        }
        (Route2::Events { ns }, &Method::POST) => {
            let regarding = serde_json::from_slice::<Value>(body)
                .ok()
                .and_then(|v| v["regarding"]["name"].as_str().map(str::to_string))
                .unwrap_or_default();
            (Verb::CreateEvent, format!("{ns}/{regarding}"))
        }
        (Route2::Event { ns, name }, &Method::PATCH) => (Verb::PatchEvent, format!("{ns}/{name}")),
        (Route2::Lease { ns, name }, &Method::GET) => (Verb::GetLease, format!("{ns}/{name}")),
        (Route2::Leases { ns }, &Method::POST) => {
            let name = serde_json::from_slice::<Value>(body)
                .ok()
                .and_then(|v| v["metadata"]["name"].as_str().map(str::to_string))
                .unwrap_or_default();
            (Verb::CreateLease, format!("{ns}/{name}"))
        }
        (Route2::Lease { ns, name }, &Method::PUT) => (Verb::UpdateLease, format!("{ns}/{name}")),
        _ => {
            let (code, body) = status_failure(405, "MethodNotAllowed", "method not allowed");
            return Some(Ok(reply(code, &body)));
        }
    };
    let record = |status: u16| {
        lock().requests.push(Recorded {
            verb: Some(verb),
            pod: key.clone(),
            dry_run: false,
            status,
            client: client.to_string(),
        });
    };
    let continued = query_param(query, "continue").is_some_and(|t| !t.is_empty());
    let fault = {
        let mut s = lock();
        let rule = s.rules.iter_mut().find(|r| {
            r.verb == verb
                && (r.pod == key || r.pod == "*")
                && r.times > 0
                && (r.fault != Fault::ContinueExpired || continued)
        });
        rule.map(|r| {
            r.times -= 1;
            r.fault.clone()
        })
    };
    match &fault {
        Some(Fault::Status(code)) => {
            let (code, body) = failure(*code, "InternalError", "injected failure", Value::Null);
            record(code);
            return Some(Ok(reply(code, &body)));
        }
        Some(Fault::TooManyRequests(seconds)) => {
            record(429);
            return Some(Ok(too_many_requests(*seconds)));
        }
        Some(Fault::DropBeforeApply) => {
            record(0);
            return Some(Err(Dropped));
        }
        Some(Fault::ContinueExpired) => {
            let (code, body) = failure(
                410,
                "Expired",
                "The provided continue parameter is too old to display a consistent list result.",
                Value::Null,
            );
            record(code);
            return Some(Ok(reply(code, &body)));
        }
        _ => {}
    }
    if verb == Verb::Watch && fault == Some(Fault::WatchExpired) {
        record(200);
        let (_, status) = failure(410, "Expired", "too old resource version", Value::Null);
        let event = json!({"type": "ERROR", "object": status});
        let full = Full::new(Bytes::from(format!("{event}\n"))).map_err(|never| match never {});
        let mut r = Response::new(full.boxed());
        r.headers_mut().insert("content-type", "application/json".parse().expect("a header value"));
        return Some(Ok(r));
    }
    if verb == Verb::Watch {
        let Route2::Collection { resource, .. } = &route else { return None };
        record(200);
        return Some(Ok(watch_reply(Arc::clone(state), resource.clone(), query)));
    }
    let (code, value) = {
        let mut s = lock();
        match (&route, verb) {
            (Route2::Collection { resource, kind, api_version }, _) => {
                let mut items = s.items(resource);
                // Pages of `limit`; the continue token is the offset of the next page.
                let limit = query_param(query, "limit").and_then(|v| v.parse::<usize>().ok());
                let start = query_param(query, "continue")
                    .and_then(|v| v.parse::<usize>().ok())
                    .unwrap_or(0)
                    .min(items.len());
                let mut metadata = json!({"resourceVersion": s.rv.to_string()});
                if let Some(limit) = limit.filter(|l| *l > 0) {
                    let end = start.saturating_add(limit).min(items.len());
                    if end < items.len() {
                        metadata["continue"] = json!(end.to_string());
                        metadata["remainingItemCount"] = json!(items.len() - end);
                    }
                    items = items[start..end].to_vec();
                }
                (
                    200,
                    json!({"kind": kind, "apiVersion": api_version,
                           "metadata": metadata, "items": items}),
                )
            }
            (Route2::PodStatus { name, .. }, _) => s.patch_pod_status(&key, name, body),
            (Route2::Events { ns }, _) => s.create_event(ns, body),
            (Route2::Event { .. }, _) => s.patch_event(&key, body),
            (Route2::Leases { ns } | Route2::Lease { ns, .. }, _) => {
                s.lease(method, &key, ns, body)
            }
        }
    };
    match fault {
        Some(Fault::DropAfterApply) => {
            record(0);
            Some(Err(Dropped))
        }
        Some(Fault::Delay(d)) => {
            record(code);
            tokio::time::sleep(d).await;
            Some(Ok(reply(code, &value)))
        }
        _ => {
            record(code);
            Some(Ok(reply(code, &value)))
        }
    }
}

/// A streaming watch of `resource` from the query's `resourceVersion`.
fn watch_reply(state: Arc<Mutex<State>>, resource: String, query: &str) -> Reply {
    let from: Option<u64> = query_param(query, "resourceVersion")
        .filter(|v| !v.is_empty() && *v != "0")
        .and_then(|v| v.parse().ok());
    let timeout = query_param(query, "timeoutSeconds")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(290)
        .min(290);
    let line = |type_: &str, object: &Value| {
        Bytes::from(format!("{}\n", json!({"type": type_, "object": object})))
    };
    let (pending, position, epoch, notify) = {
        let s = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let pending: VecDeque<Bytes> = match from {
            Some(_) => VecDeque::new(),
            None => s.items(&resource).iter().map(|o| line("ADDED", o)).collect(),
        };
        (pending, from.unwrap_or(s.rv), s.watch_epoch, Arc::clone(&s.notify))
    };
    struct Watch {
        state: Arc<Mutex<State>>,
        resource: String,
        pending: VecDeque<Bytes>,
        position: u64,
        epoch: u64,
        notify: Arc<Notify>,
        deadline: tokio::time::Instant,
        done: bool,
    }
    let w = Watch {
        state,
        resource,
        pending,
        position,
        epoch,
        notify,
        deadline: tokio::time::Instant::now() + Duration::from_secs(timeout),
        done: false,
    };
    let stream = futures::stream::unfold(w, move |mut w| async move {
        loop {
            if let Some(b) = w.pending.pop_front() {
                return Some((Ok(Frame::data(b)), w));
            }
            if w.done {
                return None;
            }
            let notified = Arc::clone(&w.notify).notified_owned();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let state = Arc::clone(&w.state);
                let s = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                if s.watch_epoch != w.epoch {
                    w.done = true;
                    return Some((Err(std::io::Error::other("watch dropped on purpose")), w));
                }
                for c in s.history.iter().filter(|c| c.rv > w.position && c.resource == w.resource)
                {
                    w.pending.push_back(line(c.type_, &c.object));
                }
                w.position = s.rv;
            }
            if !w.pending.is_empty() {
                continue;
            }
            tokio::select! {
                _ = notified => {}
                _ = tokio::time::sleep_until(w.deadline) => w.done = true,
            }
        }
    });
    let mut r = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    r.headers_mut().insert("content-type", "application/json".parse().expect("a header value"));
    r
}

type Reply = Response<BoxBody<Bytes, std::io::Error>>;

/// Returned by the service to make hyper close the connection without a reply.
#[derive(Debug)]
struct Dropped;

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection dropped on purpose")
    }
}

impl std::error::Error for Dropped {}

fn reply(code: u16, body: &Value) -> Reply {
    let full = Full::new(Bytes::from(body.to_string())).map_err(|never| match never {});
    let mut r = Response::new(full.boxed());
    *r.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    r.headers_mut().insert("content-type", "application/json".parse().expect("a header value"));
    r
}

fn success(code: u16) -> (u16, Value) {
    (
        code,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code}),
    )
}

/// A 429 asking the client to come back after `seconds`.
fn too_many_requests(seconds: u32) -> Reply {
    let (code, body) = failure(
        429,
        "TooManyRequests",
        "the server has received too many requests and has asked us to try again later",
        json!({"retryAfterSeconds": seconds}),
    );
    let mut r = reply(code, &body);
    r.headers_mut().insert("retry-after", seconds.to_string().parse().expect("a header value"));
    r
}

fn failure(code: u16, reason: &str, message: &str, details: Value) -> (u16, Value) {
    let mut status = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code,
    });
    if !details.is_null() {
        status["details"] = details;
    }
    (code, status)
}

fn not_found(name: &str) -> (u16, Value) {
    failure(
        404,
        "NotFound",
        &format!("pods \"{name}\" not found"),
        json!({"name": name, "kind": "pods"}),
    )
}

fn bad_request(message: &str) -> (u16, Value) {
    failure(400, "BadRequest", message, Value::Null)
}

/// The namespace of `/api/v1/namespaces/{ns}/pods`.
fn list_route(path: &str) -> Option<String> {
    let rest = path.strip_prefix("/api/v1/namespaces/")?;
    let (ns, tail) = rest.split_once('/')?;
    (tail == "pods" && !ns.is_empty()).then(|| ns.to_string())
}

/// Splits `/api/v1/namespaces/{ns}/pods/{name}[/{sub}]`.
fn route(path: &str) -> Option<(String, String, Option<String>)> {
    let rest = path.strip_prefix("/api/v1/namespaces/")?;
    let mut parts = rest.split('/');
    let ns = parts.next()?.to_string();
    if parts.next()? != "pods" {
        return None;
    }
    let name = parts.next()?.to_string();
    let sub = parts.next().map(str::to_string);
    if parts.next().is_some() {
        return None;
    }
    Some((ns, name, sub))
}

async fn handle(state: Arc<Mutex<State>>, req: Request<Incoming>) -> Result<Reply, Dropped> {
    {
        let mut s = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        s.in_flight += 1;
        s.max_in_flight = s.max_in_flight.max(s.in_flight);
    }
    let result = serve(&state, req).await;
    let mut s = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    s.in_flight -= 1;
    result
}

async fn serve(state: &Arc<Mutex<State>>, req: Request<Incoming>) -> Result<Reply, Dropped> {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    let client = req
        .headers()
        .get("x-kplace-client")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let dry_run_values: Vec<String> =
        query.split('&').filter_map(|kv| kv.strip_prefix("dryRun=")).map(str::to_string).collect();
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return Err(Dropped),
    };
    if let Some(r) = serve_more(state, &method, &path, &query, &body, &client).await {
        return r;
    }
    let listed = list_route(&path);
    let routed = route(&path);
    let verb = match (&method, routed.as_ref().and_then(|r| r.2.as_deref())) {
        (&Method::GET, None) if routed.is_some() => Some(Verb::GetPod),
        (&Method::POST, Some("binding")) => Some(Verb::Bind),
        (&Method::POST, Some("eviction")) => Some(Verb::Evict),
        (&Method::GET, None) if listed.is_some() => Some(Verb::ListPods),
        _ => None,
    };
    let (ns, name) =
        routed.map(|r| (r.0, r.1)).or(listed.map(|ns| (ns, String::new()))).unwrap_or_default();
    let key = format!("{ns}/{name}");
    let dry_run = dry_run_values.iter().any(|v| v == "All");
    let record = |status: u16| {
        let mut s = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        s.requests.push(Recorded {
            verb,
            pod: key.clone(),
            dry_run,
            status,
            client: client.clone(),
        });
    };
    let Some(verb) = verb else {
        record(404);
        return Ok(reply(
            404,
            &failure(
                404,
                "NotFound",
                "the server could not find the requested resource",
                Value::Null,
            )
            .1,
        ));
    };
    if dry_run_values.iter().any(|v| v != "All") {
        let (code, body) = bad_request("dryRun: Unsupported value");
        record(code);
        return Ok(reply(code, &body));
    }

    let fault = {
        let mut s = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let rule = s.rules.iter_mut().find(|r| r.verb == verb && r.pod == key && r.times > 0);
        let ruled = rule.map(|r| {
            r.times -= 1;
            r.fault.clone()
        });
        ruled.or_else(|| s.chaos.as_mut().and_then(|c| c.fault(verb)))
    };
    match &fault {
        Some(Fault::Status(code)) => {
            let (code, body) = failure(*code, "InternalError", "injected failure", Value::Null);
            record(code);
            return Ok(reply(code, &body));
        }
        Some(Fault::DropBeforeApply) => {
            record(0);
            return Err(Dropped);
        }
        _ => {}
    }

    let (code, body) = {
        let mut s = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        match verb {
            Verb::GetPod => s.get_pod(&key, &name),
            Verb::Bind => s.bind(&key, &name, &body, dry_run),
            Verb::Evict => s.evict(&key, &name, &body, dry_run),
            Verb::ListPods => s.list_pods(&ns),
            _ => not_found(&name),
        }
    };
    match fault {
        Some(Fault::DropAfterApply) => {
            record(0);
            Err(Dropped)
        }
        Some(Fault::Delay(d)) => {
            record(code);
            tokio::time::sleep(d).await;
            Ok(reply(code, &body))
        }
        _ => {
            record(code);
            Ok(reply(code, &body))
        }
    }
}

impl State {
    /// A `PodList` of the namespace; deleting pods count a read each, as for `get_pod`.
    fn list_pods(&mut self, namespace: &str) -> (u16, Value) {
        let keys: Vec<String> =
            self.pods.values().filter(|p| p.namespace == namespace).map(FakePod::key).collect();
        let mut items = Vec::new();
        for key in keys {
            let Some(pod) = self.pods.get_mut(&key) else { continue };
            if pod.deleting {
                if pod.reads_until_gone == 0 {
                    self.pods.remove(&key);
                    continue;
                }
                pod.reads_until_gone -= 1;
            }
            items.push(pod.to_json());
        }
        (200, json!({"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": items}))
    }

    /// The ReplicaSet controller's reaction to `pod` going away: a replacement.
    fn replace(&mut self, pod: &FakePod) {
        let Some((kind, owner, _)) = &pod.owner else { return };
        if !self.replica_set_controller || kind != "ReplicaSet" {
            return;
        }
        self.replacements += 1;
        let name = format!("{owner}-r{}", self.replacements);
        let mut new = FakePod {
            name: name.clone(),
            uid: format!("uid-{}-{name}", pod.namespace),
            node: None,
            phase: "Pending".to_string(),
            ready: false,
            deleting: false,
            reads_until_gone: 0,
            created: i64::from(self.replacements),
            ..pod.clone()
        };
        if new.scheduler_name == "default-scheduler"
            && let Some(node) = self.kube_scheduler_node.clone()
        {
            new.node = Some(node);
            if self.kubelet {
                new.phase = "Running".to_string();
                new.ready = true;
            }
        }
        self.created.push(new.key());
        self.pods.insert(new.key(), new);
    }

    /// The disruption controller: budgets with `minAvailable` from their ready pods.
    fn refresh_budgets(&mut self) {
        for pdb in &mut self.pdbs {
            let Some(min) = pdb.min_available else { continue };
            let healthy = self
                .pods
                .values()
                .filter(|p| pdb.selects(p) && !p.deleting && p.phase == "Running" && p.ready)
                .count() as i32;
            pdb.current_healthy = healthy;
            pdb.desired_healthy = min;
            pdb.disruptions_allowed = (healthy - min).max(0);
        }
    }

    fn get_pod(&mut self, key: &str, name: &str) -> (u16, Value) {
        let Some(pod) = self.pods.get_mut(key) else { return not_found(name) };
        if pod.deleting {
            if pod.reads_until_gone == 0 {
                self.remove_pod(key);
                return not_found(name);
            }
            pod.reads_until_gone -= 1;
        }
        (200, pod.to_json())
    }

    /// `BindingREST.Create` → `assignPod` → `setPodHostAndAnnotations`.
    fn bind(&mut self, key: &str, name: &str, body: &[u8], dry_run: bool) -> (u16, Value) {
        let Ok(binding) = serde_json::from_slice::<Binding>(body) else {
            return bad_request("not a Binding object");
        };
        if binding.metadata.name.as_deref() != Some(name) {
            return bad_request("name in URL does not match name in Binding object");
        }
        let kind = binding.target.kind.as_deref().unwrap_or("");
        if !(kind.is_empty() || kind == "Node") {
            return failure(422, "Invalid", "target.kind: Unsupported value", Value::Null);
        }
        let Some(target) = binding.target.name.filter(|n| !n.is_empty()) else {
            return failure(422, "Invalid", "target.name: Required value", Value::Null);
        };
        let Some(pod) = self.pods.get_mut(key) else { return not_found(name) };
        let conflict = |why: String| {
            failure(
                409,
                "Conflict",
                &format!("Operation cannot be fulfilled on pods/binding \"{name}\": {why}"),
                json!({"name": name, "kind": "pods/binding"}),
            )
        };
        if pod.deleting {
            return conflict(format!("pod {name} is being deleted, cannot be assigned to a host"));
        }
        if let Some(node) = &pod.node {
            return conflict(format!("pod {name} is already assigned to node \"{node}\""));
        }
        if !dry_run {
            pod.node = Some(target.clone());
            if self.kubelet {
                pod.phase = "Running".to_string();
                pod.ready = true;
            }
            self.binds.entry(key.to_string()).or_default().push(target);
            self.touch_pod(key);
        }
        success(201)
    }

    /// `EvictionREST.Create`.
    fn evict(&mut self, key: &str, name: &str, body: &[u8], dry_run: bool) -> (u16, Value) {
        let Ok(eviction) = serde_json::from_slice::<Eviction>(body) else {
            return bad_request("not a Eviction object");
        };
        if eviction.metadata.name.as_deref() != Some(name) {
            return bad_request("name in URL does not match name in Eviction object");
        }
        let options = eviction.delete_options.unwrap_or_default();
        let body_dry_run = options.dry_run.unwrap_or_default();
        let query_dry_run: Vec<String> = if dry_run { vec!["All".to_string()] } else { vec![] };
        if !body_dry_run.is_empty() && !query_dry_run.is_empty() && body_dry_run != query_dry_run {
            return bad_request("Non-matching dry-run options in request and content");
        }
        let dry_run = dry_run || body_dry_run.iter().any(|v| v == "All");
        let want_uid = options.preconditions.and_then(|p| p.uid);
        let Some(pod) = self.pods.get(key).cloned() else { return not_found(name) };
        self.refresh_budgets();

        let can_ignore_pdb =
            matches!(pod.phase.as_str(), "Succeeded" | "Failed" | "Pending") || pod.deleting;
        if !can_ignore_pdb {
            let matching: Vec<usize> =
                (0..self.pdbs.len()).filter(|&i| self.pdbs[i].selects(&pod)).collect();
            if matching.len() > 1 {
                return failure(
                    500,
                    "",
                    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
                    Value::Null,
                );
            }
            if let Some(&i) = matching.first() {
                let pdb = &mut self.pdbs[i];
                let unready_with_room = !pod.ready
                    && pdb.current_healthy >= pdb.desired_healthy
                    && pdb.desired_healthy > 0;
                if !unready_with_room {
                    if pdb.disruptions_allowed == 0 {
                        let cause = format!(
                            "The disruption budget {} needs {} healthy pods and has {} currently",
                            pdb.name, pdb.desired_healthy, pdb.current_healthy
                        );
                        return failure(
                            429,
                            "TooManyRequests",
                            "Cannot evict pod as it would violate the pod's disruption budget.",
                            json!({"causes": [{"reason": "DisruptionBudget", "message": cause}]}),
                        );
                    }
                    if !dry_run {
                        pdb.disruptions_allowed -= 1;
                        self.touch_pdb(i);
                    }
                }
            }
        }
        // The delete itself, with its UID precondition.
        if let Some(uid) = want_uid.filter(|uid| *uid != pod.uid) {
            let message = format!(
                "Operation cannot be fulfilled on Pod \"{name}\": Precondition failed: \
                 UID in precondition: {uid}, UID in object meta: {}",
                pod.uid
            );
            return failure(409, "Conflict", &message, json!({"name": name, "kind": "Pod"}));
        }
        if !dry_run {
            *self.evictions.entry(key.to_string()).or_insert(0) += 1;
            if self.grace_reads == 0 {
                self.remove_pod(key);
                if let Some(uid) = self.recreate.remove(key) {
                    self.pods.insert(key.to_string(), FakePod { uid, ..pod.clone() });
                    self.touch_pod(key);
                }
            } else if let Some(p) = self.pods.get_mut(key).filter(|p| !p.deleting) {
                p.deleting = true;
                p.reads_until_gone = self.grace_reads;
                self.touch_pod(key);
            }
            self.replace(&pod);
        }
        success(201)
    }
}
