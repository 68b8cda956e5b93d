//! The binder: the only code that writes to a cluster. It carries out a [`Plan`]: evictions
//! first, through the Eviction API, then Bindings.
//!
//! Input: a plan, a `kube::Client` and [`BindOptions`]; output: a [`BindReport`] with one
//! [`ActionResult`] per eviction and per placement, in plan order. Upstream: kube-scheduler's
//! `DefaultBinder` (`pkg/scheduler/framework/plugins/defaultbinder/default_binder.go`, v1.35),
//! which POSTs a v1 `Binding` to `pods/{name}/binding`; and the pod registry's `BindingREST` and
//! `EvictionREST` (`pkg/registry/core/pod/storage/storage.go`, `eviction.go`), whose replies
//! decide the outcomes:
//!
//! - **Evictions** are grouped by preemptor and run one after another within a group (groups in
//!   parallel). Before evicting, the preemptor is read: when it already sits on its planned node
//!   its evictions are `not_needed`; when it is gone, bound elsewhere or being deleted nothing is
//!   evicted for it (`skipped`). Each victim is read first (`gone` when it no longer exists or no
//!   longer runs on the planned node), then evicted with its UID as a precondition, so a pod
//!   recreated under the same name is never evicted by mistake. A 429 with a `DisruptionBudget`
//!   cause is `refused`; the group stops there (the rest `skipped`) and the preemptor's binding is
//!   `skipped`. Without dry-run the binder then waits (up to `eviction_timeout`) for the victims
//!   to be gone, so the preemptor is not bound while they still hold the node.
//! - **Bindings** follow, in parallel. 201 is `bound`; 404 is `gone`; 409 makes the binder read
//!   the pod: on the planned node it is `already_bound` (or `bound`, when an earlier attempt of
//!   this run had an unanswered request), on another node `conflict`, being deleted `gone`.
//! - Every request goes through a client-side token bucket (`qps`, `burst`), at most
//!   `concurrency` groups or bindings are in flight, and transient failures (429 without a budget
//!   cause, 5xx, timeouts, dropped connections) are retried with exponential backoff and jitter
//!   until the run's deadline (`timeout` after the start; see [`retry`]).
//! - **Uncertain outcomes are read back.** A write whose attempts included one that may have been
//!   applied without an answer (a 5xx, a timeout, a dropped connection) and that did not end in a
//!   clear answer is resolved by reading the pod (`read_back_timeout` more to do so): a pod on its
//!   planned node is `bound`; a victim gone, replaced or being deleted is `evicted` (and its
//!   preemptor goes on); a pod in neither state is `failed`, truly. When even the read fails the
//!   outcome is `unknown`, never a guess.
//! - **The server is contacted first** ([`preflight`]): a pod of the plan is read (or `/version`
//!   for an empty plan); an unreachable server, a 401 or a 403 stops the run with an error naming
//!   the server within `preflight_timeout`, before anything is written.
//!
//! Re-running the same plan is safe: whatever was done is found done (`already_bound`,
//! `not_needed`, `gone`) and only what is left is carried out. Dry-run (`dryRun=All`) sends the
//! same requests and the server changes nothing.
//!
//! - **Moves** (a rebalancing plan from `kplace rebalance`) come last, wave by wave: the wave's
//!   pods are evicted, their controllers' replacements are awaited (bound, running and ready),
//!   replacements kplace serves are bound to their planned nodes, and the next wave starts only
//!   when the previous one went as planned. See [`moves`] for the details, and for what happens
//!   when kube-scheduler, not kplace, schedules the replacements.
//!
//! Known limit: a later placement may use room that an eviction for another preemptor freed; the
//! plan does not record that, so only the preemptor's own binding is skipped when an eviction is
//! refused.

mod bindings;
mod evictions;
pub mod kubeconfig;
pub mod limit;
pub mod moves;
mod plan_file;
mod preflight;
mod requests;
pub mod retry;

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Binding, ObjectReference, Pod};
use k8s_openapi::api::policy::v1::Eviction as EvictionRequest;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{DeleteOptions, ObjectMeta, Preconditions};
use kube::api::{Api, PostParams};
use kube::core::Status;
use serde::{Deserialize, Serialize};

use crate::plan::{Eviction, Placement, Plan};

pub use kubeconfig::load_config;
pub use limit::RateLimiter;
pub use moves::MoveResult;
pub use plan_file::{parse_plan, parse_plan_and_summary, read_plan, validate};
pub use preflight::{contact, preflight};
pub use retry::{Fail, RetryPolicy};

use requests::{Binder, Call, PodView, ReadBack};

/// Errors that stop the binder before it sends anything.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// The plan file could not be read.
    #[error("reading plan {}: {source}", path.display())]
    ReadPlan {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The plan file is not a plan document.
    #[error("plan {}: {message}", path.display())]
    ParsePlan {
        /// The file.
        path: PathBuf,
        /// Where and why parsing failed.
        message: String,
    },
    /// The plan contradicts itself or names pods that cannot exist.
    #[error("invalid plan: {field}: {message}")]
    InvalidPlan {
        /// The offending field (`placements[3].pod`).
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// The API server did not answer (connection refused, reset, timed out) before anything was
    /// sent.
    #[error("API server {server} is unreachable: {message}")]
    Unreachable {
        /// The server's URL.
        server: String,
        /// The last error.
        message: String,
    },
    /// The API server refused the binder's credentials (401) or its permissions (403).
    #[error("API server {server} refused the request ({code}): {message}")]
    Denied {
        /// The server's URL.
        server: String,
        /// 401 or 403.
        code: u16,
        /// The server's message and what to check.
        message: String,
    },
    /// The kubeconfig could not be loaded or does not name a usable cluster.
    #[error("kubeconfig{}: {message}", path.as_ref().map(|p| format!(" {}", p.display())).unwrap_or_default())]
    Kubeconfig {
        /// The file, when one was named with `--kubeconfig`.
        path: Option<PathBuf>,
        /// What went wrong.
        message: String,
    },
    /// There is no kubeconfig and the process does not run in a cluster.
    #[error(
        "no cluster to talk to: no kubeconfig ({kubeconfig}) and not in a cluster ({in_cluster})"
    )]
    NoCluster {
        /// Why no kubeconfig was found.
        kubeconfig: String,
        /// Why the in-cluster configuration was not usable.
        in_cluster: String,
    },
    /// The API client could not be built from the configuration (TLS, credentials).
    #[error("creating the API client: {}", retry::chain(.0))]
    Client(#[source] kube::Error),
}

/// How the binder runs.
#[derive(Debug, Clone, PartialEq)]
pub struct BindOptions {
    /// Send every request with `dryRun=All`: the server validates and changes nothing.
    pub dry_run: bool,
    /// Most eviction groups or bindings in flight at once (at least 1).
    pub concurrency: usize,
    /// Client-side request rate limit, requests per second (`0` for none).
    pub qps: f64,
    /// Requests allowed at once before the rate limit applies.
    pub burst: u32,
    /// Backoff between retries of transient failures (`max_attempts` `0`: retries are bounded by
    /// `timeout` alone).
    pub retry: RetryPolicy,
    /// The deadline of the run, from its start: no request is sent and no retry is waited for
    /// past it (reading a pod back to resolve an uncertain outcome gets `read_back_timeout` more).
    pub timeout: Duration,
    /// How long reading a pod back may take once an uncertain write ends.
    pub read_back_timeout: Duration,
    /// How long [`preflight`] tries to reach the server.
    pub preflight_timeout: Duration,
    /// The longest wait for one reply before the attempt counts as failed.
    pub request_timeout: Duration,
    /// The longest wait for evicted pods to be gone before their preemptor's binding is skipped.
    pub eviction_timeout: Duration,
    /// How often an evicted pod is checked while waiting for it to be gone.
    pub eviction_poll: Duration,
    /// `fieldManager` sent with every write.
    pub field_manager: String,
    /// The longest a wave of moves may take: evictions, then every replacement running.
    pub wave_timeout: Duration,
    /// How often a wave's replacements are checked (and a refused eviction is tried again).
    pub wave_poll: Duration,
    /// Replacements with one of these `schedulerName`s are bound to their planned node by the
    /// binder (steering); others are left to their scheduler.
    pub steer_scheduler_names: Vec<String>,
}

impl Default for BindOptions {
    fn default() -> Self {
        BindOptions {
            dry_run: false,
            concurrency: 16,
            // kube-scheduler's own client defaults (KubeSchedulerConfiguration clientConnection).
            qps: 50.0,
            burst: 100,
            retry: RetryPolicy { max_attempts: 0, ..RetryPolicy::default() },
            timeout: DEFAULT_TIMEOUT,
            read_back_timeout: Duration::from_secs(30),
            preflight_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(30),
            eviction_timeout: Duration::from_secs(300),
            eviction_poll: Duration::from_secs(1),
            field_manager: "kplace".to_string(),
            wave_timeout: moves::DEFAULT_WAVE_TIMEOUT,
            wave_poll: moves::DEFAULT_WAVE_POLL,
            steer_scheduler_names: vec!["kplace".to_string()],
        }
    }
}

/// How long `kplace bind` retries by default (`--timeout`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// What the binder does with a pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Evict a running pod (a preemption victim).
    Evict,
    /// Bind a pending pod to its node.
    Bind,
    /// Move a running pod (a rebalancing plan's move): evict it, await its replacement.
    Move,
}

/// How one action ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The binding was made now.
    Bound,
    /// The pod already sat on its planned node.
    AlreadyBound,
    /// The eviction was accepted.
    Evicted,
    /// The eviction was not needed: its preemptor already sits on its planned node.
    NotNeeded,
    /// The pod no longer exists (or, for a victim, no longer runs on the planned node).
    Gone,
    /// The pod is bound to another node.
    Conflict,
    /// A PodDisruptionBudget refused the eviction.
    Refused,
    /// Not attempted, because something it depends on did not happen.
    Skipped,
    /// The request failed (an error, or transient failures that outlasted the retries).
    Failed,
    /// A move's replacement runs on the planned node.
    Moved,
    /// A move's replacement runs, on another node than planned.
    Elsewhere,
    /// A write may or may not have been applied: it went unanswered and reading the pod back
    /// failed too. Running the plan again finds out.
    Unknown,
}

impl Outcome {
    /// The outcome's `snake_case` name (`already_bound`), as reports and metrics use it.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Bound => "bound",
            Outcome::AlreadyBound => "already_bound",
            Outcome::Evicted => "evicted",
            Outcome::NotNeeded => "not_needed",
            Outcome::Gone => "gone",
            Outcome::Conflict => "conflict",
            Outcome::Refused => "refused",
            Outcome::Skipped => "skipped",
            Outcome::Failed => "failed",
            Outcome::Moved => "moved",
            Outcome::Elsewhere => "elsewhere",
            Outcome::Unknown => "unknown",
        }
    }

    /// The outcome as words (`already bound`).
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Bound => "bound",
            Outcome::AlreadyBound => "already bound",
            Outcome::Evicted => "evicted",
            Outcome::NotNeeded => "not needed",
            Outcome::Gone => "gone",
            Outcome::Conflict => "conflict",
            Outcome::Refused => "refused",
            Outcome::Skipped => "skipped",
            Outcome::Failed => "failed",
            Outcome::Moved => "moved",
            Outcome::Elsewhere => "elsewhere",
            Outcome::Unknown => "unknown",
        }
    }

    /// Whether the plan's intent for this action holds: the pod sits on its node (bindings), or
    /// the victim no longer holds the node or need not (evictions).
    pub fn is_success(self, action: Action) -> bool {
        match action {
            Action::Bind => matches!(self, Outcome::Bound | Outcome::AlreadyBound),
            Action::Evict => matches!(self, Outcome::Evicted | Outcome::NotNeeded | Outcome::Gone),
            // `evicted` ends a move only in a server dry run.
            Action::Move => matches!(self, Outcome::Moved | Outcome::Gone | Outcome::Evicted),
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// The result of one action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionResult {
    /// Evict or bind.
    pub action: Action,
    /// `namespace/name`.
    pub pod: String,
    /// The node (the victim's node for evictions, the target for bindings).
    pub node: String,
    /// For evictions, the pod they make room for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemptor: Option<String>,
    /// How it ended.
    pub outcome: Outcome,
    /// Write requests sent for it (0 when none was sent).
    pub attempts: u32,
    /// Why, when there is something to say.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// Counts of outcomes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BindSummary {
    /// Outcome → number of evictions.
    pub evictions: BTreeMap<Outcome, usize>,
    /// Outcome → number of bindings.
    pub bindings: BTreeMap<Outcome, usize>,
    /// Outcome → number of moves (left out when the plan has none).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub moves: BTreeMap<Outcome, usize>,
}

/// Everything the binder did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BindReport {
    /// Whether requests were sent with `dryRun=All`.
    pub dry_run: bool,
    /// Whether every action succeeded ([`Outcome::is_success`]).
    pub complete: bool,
    /// One result per plan eviction, in plan order.
    pub evictions: Vec<ActionResult>,
    /// One result per plan placement, in plan order.
    pub bindings: Vec<ActionResult>,
    /// One result per plan move, in plan order (left out when the plan has none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moves: Vec<MoveResult>,
    /// Counts.
    pub summary: BindSummary,
}

/// A pod's `namespace/name`, parsed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct PodKey {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl PodKey {
    /// Parses `namespace/name`; both parts must be non-empty and there is exactly one `/`.
    pub fn parse(key: &str) -> Option<PodKey> {
        let (namespace, name) = key.split_once('/')?;
        if namespace.is_empty() || name.is_empty() || name.contains('/') {
            return None;
        }
        Some(PodKey { namespace: namespace.to_string(), name: name.to_string() })
    }
}

impl fmt::Display for PodKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// The plan's actions, checked and parsed.
#[derive(Debug)]
struct Work<'p> {
    bindings: Vec<(&'p Placement, PodKey)>,
    /// Eviction groups in the order their first eviction appears in the plan.
    groups: Vec<Group<'p>>,
}

/// The evictions that make room for one preemptor, or one eviction whose plan names no
/// preemptor (then a refusal holds back every binding to the victim's node).
#[derive(Debug)]
struct Group<'p> {
    preemptor: Option<PodKey>,
    /// The preemptor's planned node (empty without a preemptor).
    node: &'p str,
    /// Plan eviction index, the eviction and the victim's key, in plan order.
    victims: Vec<(usize, &'p Eviction, PodKey)>,
}

fn invalid(field: String, message: String) -> BindError {
    BindError::InvalidPlan { field, message }
}

fn parse_key(key: &str, field: impl Fn() -> String) -> Result<PodKey, BindError> {
    PodKey::parse(key)
        .ok_or_else(|| invalid(field(), format!("{key:?} is not a namespace/name pod key")))
}

impl<'p> Work<'p> {
    /// Checks the plan: pod keys parse, nodes are named, no pod is placed twice or both placed
    /// and evicted, and every eviction's preemptor has a placement.
    fn new(plan: &'p Plan) -> Result<Self, BindError> {
        let mut placed: BTreeMap<&str, usize> = BTreeMap::new();
        let mut bindings = Vec::with_capacity(plan.placements.len());
        for (i, p) in plan.placements.iter().enumerate() {
            let key = parse_key(&p.pod, || format!("placements[{i}].pod"))?;
            if p.node.is_empty() {
                return Err(invalid(format!("placements[{i}].node"), "is empty".to_string()));
            }
            if let Some(first) = placed.insert(&p.pod, i) {
                return Err(invalid(
                    format!("placements[{i}].pod"),
                    format!("{:?} is placed twice (also placements[{first}])", p.pod),
                ));
            }
            bindings.push((p, key));
        }
        let mut evicted: BTreeMap<&str, usize> = BTreeMap::new();
        let mut group_of: BTreeMap<&str, usize> = BTreeMap::new();
        let mut groups: Vec<Group<'p>> = Vec::new();
        for (i, e) in plan.evictions.iter().enumerate() {
            let key = parse_key(&e.pod, || format!("evictions[{i}].pod"))?;
            // An empty node or preemptor is unknown (a plan from another tool): the victim is
            // evicted wherever it runs, and on its own.
            let preemptor = if e.preemptor.is_empty() {
                None
            } else {
                Some(parse_key(&e.preemptor, || format!("evictions[{i}].preemptor"))?)
            };
            if let Some(first) = evicted.insert(&e.pod, i) {
                return Err(invalid(
                    format!("evictions[{i}].pod"),
                    format!("{:?} is evicted twice (also evictions[{first}])", e.pod),
                ));
            }
            if let Some(j) = placed.get(e.pod.as_str()) {
                return Err(invalid(
                    format!("evictions[{i}].pod"),
                    format!("{:?} is also placed (placements[{j}])", e.pod),
                ));
            }
            let Some(preemptor) = preemptor else {
                groups.push(Group { preemptor: None, node: "", victims: vec![(i, e, key)] });
                continue;
            };
            let Some(&j) = placed.get(e.preemptor.as_str()) else {
                return Err(invalid(
                    format!("evictions[{i}].preemptor"),
                    format!("{:?} has no placement", e.preemptor),
                ));
            };
            let g = *group_of.entry(&e.preemptor).or_insert_with(|| {
                groups.push(Group {
                    preemptor: Some(preemptor),
                    node: plan.placements.get(j).map_or("", |p| p.node.as_str()),
                    victims: Vec::new(),
                });
                groups.len() - 1
            });
            if let Some(group) = groups.get_mut(g) {
                group.victims.push((i, e, key));
            }
        }
        Ok(Work { bindings, groups })
    }
}

/// Builds a client from a configuration (must run inside a tokio runtime).
pub fn client(config: kube::Config) -> Result<kube::Client, BindError> {
    kube::Client::try_from(config).map_err(BindError::Client)
}

/// Carries out `plan` against the cluster behind `client`. `progress` is called once per
/// finished action (evictions first). Returns an error only when the plan is invalid; failed
/// requests are outcomes in the report.
pub async fn bind(
    client: &kube::Client,
    plan: &Plan,
    options: &BindOptions,
    progress: &(dyn Fn(&ActionResult) + Sync),
) -> Result<BindReport, BindError> {
    let work = Work::new(plan)?;
    let touched: std::collections::BTreeSet<&str> = plan
        .placements
        .iter()
        .map(|p| p.pod.as_str())
        .chain(plan.evictions.iter().map(|e| e.pod.as_str()))
        .collect();
    let move_keys = moves::validate(&plan.moves, &touched)?;
    let binder = Binder {
        client,
        options,
        limiter: RateLimiter::new(options.qps, options.burst),
        progress,
        deadline: Instant::now() + options.timeout,
    };
    let concurrency = options.concurrency.max(1);

    let mut evictions: Vec<Option<ActionResult>> = vec![None; plan.evictions.len()];
    let mut blocked: BTreeMap<PodKey, String> = BTreeMap::new();
    // Nodes whose room an eviction without a named preemptor did not free.
    let mut blocked_nodes: BTreeMap<String, String> = BTreeMap::new();
    // The futures are built before they are buffered (rather than by a closure in the
    // stream), which keeps `bind`'s future `Send` for callers that spawn it.
    let eviction_futures: Vec<_> = work.groups.iter().map(|g| binder.evict_group(g)).collect();
    let groups: Vec<_> =
        futures::stream::iter(eviction_futures).buffer_unordered(concurrency).collect().await;
    for (preemptor, results, block) in groups {
        if let (Some(reason), None) = (&block, &preemptor) {
            for (_, r) in &results {
                blocked_nodes.entry(r.node.clone()).or_insert_with(|| reason.clone());
            }
        }
        for (i, r) in results {
            if let Some(slot) = evictions.get_mut(i) {
                *slot = Some(r);
            }
        }
        if let (Some(reason), Some(preemptor)) = (block, preemptor) {
            blocked.insert(preemptor, reason);
        }
    }

    let blocked = &blocked;
    let blocked_nodes = &blocked_nodes;
    let mut bindings: Vec<Option<ActionResult>> = vec![None; plan.placements.len()];
    let binding_futures: Vec<_> = work
        .bindings
        .iter()
        .enumerate()
        .map(|(i, (p, key))| {
            let binder = &binder;
            let block = blocked.get(key).or_else(|| blocked_nodes.get(&p.node));
            async move { (i, binder.bind_one(p, key, block).await) }
        })
        .collect();
    let done: Vec<(usize, ActionResult)> =
        futures::stream::iter(binding_futures).buffer_unordered(concurrency).collect().await;
    for (i, r) in done {
        if let Some(slot) = bindings.get_mut(i) {
            *slot = Some(r);
        }
    }

    let moves = binder.run_moves(&plan.moves, &move_keys).await;

    let evictions: Vec<ActionResult> = evictions.into_iter().flatten().collect();
    let bindings: Vec<ActionResult> = bindings.into_iter().flatten().collect();
    let mut summary = BindSummary::default();
    for r in &moves {
        *summary.moves.entry(r.outcome).or_insert(0) += 1;
    }
    for r in &evictions {
        *summary.evictions.entry(r.outcome).or_insert(0) += 1;
    }
    for r in &bindings {
        *summary.bindings.entry(r.outcome).or_insert(0) += 1;
    }
    let complete = evictions.len() == plan.evictions.len()
        && bindings.len() == plan.placements.len()
        && evictions.iter().chain(&bindings).all(|r| r.outcome.is_success(r.action))
        && moves.len() == plan.moves.len()
        && moves.iter().all(|r| r.outcome.is_success(Action::Move));
    Ok(BindReport { dry_run: options.dry_run, complete, evictions, bindings, moves, summary })
}

impl ActionResult {
    fn action_word(&self) -> &'static str {
        match self.action {
            Action::Evict => "evict",
            Action::Bind => "bind",
            Action::Move => "move",
        }
    }
}

#[cfg(test)]
mod tests;
