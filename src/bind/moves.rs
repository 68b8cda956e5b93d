//! Carrying out a rebalancing plan's `moves`, wave by wave.
//!
//! Input: the plan's moves (`{pod, from, to, wave}`, from `kplace rebalance`), the binder and
//! its [`BindOptions`]; output: one [`MoveResult`] per move, in plan order.
//!
//! For each wave, in order:
//!
//! 1. Each pod of the wave is read: gone, or no longer on `from`, is `gone` (the move happened
//!    already, e.g. on an earlier run); a pod without a controlling owner is `skipped` (nothing
//!    would replace it). The pods of each owner that exist now are remembered.
//! 2. Each pod is evicted (policy/v1 Eviction, UID precondition). A PodDisruptionBudget refusal
//!    is retried every `wave_poll` until the wave's deadline: the disruption controller updates
//!    `disruptionsAllowed` a moment after the previous wave's replacements became ready.
//! 3. The binder polls the pods of the wave's namespaces until each evicted pod has a
//!    *replacement* — a pod with the same controlling owner UID that did not exist before the
//!    eviction (for a StatefulSet, the same name with a new UID) — bound to a node, in phase
//!    `Running` with condition `Ready`. A replacement that is pending and unbound, and whose
//!    `schedulerName` is one kplace serves (`steer_scheduler_names`, `--scheduler-name`), is
//!    bound to the planned node (*steering*); otherwise the binder waits for its scheduler.
//!    Replacements of one owner are matched to its moves in creation order, which is harmless:
//!    a controller's pods share one template, so any of them can take any of its planned nodes.
//! 4. The move is `moved` when its replacement runs on the planned node, `elsewhere` when it
//!    runs on another one — kube-scheduler scheduled it (its pods are not served by kplace) and
//!    chose differently: a valid node (its Filter guarantees it), just not the plan's. The wave
//!    must finish within `wave_timeout`; a move whose replacement is not running by then
//!    `failed`.
//!
//! Every wave runs only if the previous one went exactly as planned (`moved` or `gone`): after a
//! refusal, a failure or a replacement elsewhere, the room later waves count on may be taken, so
//! they are `skipped`; the cluster is left valid and within its budgets, and a new plan made from
//! a fresh snapshot carries on. With dry-run every eviction is sent with `dryRun=All`, nothing is
//! waited for and the outcome is `evicted`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Binding, ObjectReference, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::ListParams;
use kube::core::Status;
use serde::{Deserialize, Serialize};

use super::retry::Fail;
use super::{Action, ActionResult, BindError, Binder, Outcome, PodKey, invalid, parse_key};
use crate::plan::Move;

/// The result of one move.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveResult {
    /// `namespace/name` of the pod moved.
    pub pod: String,
    /// Its node.
    pub from: String,
    /// The planned node of its replacement.
    pub to: String,
    /// The wave.
    pub wave: u32,
    /// How it ended: `moved`, `elsewhere`, `gone`, `evicted` (dry-run), `refused`, `skipped`,
    /// `failed`.
    pub outcome: Outcome,
    /// `namespace/name` of the replacement, once one was found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacement: Option<String>,
    /// The node the replacement runs on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Whether kplace bound the replacement (steering).
    #[serde(default)]
    pub steered: bool,
    /// Eviction requests sent.
    pub attempts: u32,
    /// Why, when there is something to say.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// Checks the moves: keys parse, nodes are named, waves start at 1, no pod moves twice or is
/// also placed or evicted by the plan. Returns the keys, in plan order.
pub(super) fn validate(
    moves: &[Move],
    placed_or_evicted: &BTreeSet<&str>,
) -> Result<Vec<PodKey>, BindError> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let mut keys = Vec::with_capacity(moves.len());
    for (i, m) in moves.iter().enumerate() {
        let key = parse_key(&m.pod, || format!("moves[{i}].pod"))?;
        if m.from.is_empty() {
            return Err(invalid(format!("moves[{i}].from"), "is empty".to_string()));
        }
        if m.to.is_empty() {
            return Err(invalid(format!("moves[{i}].to"), "is empty".to_string()));
        }
        if m.wave == 0 {
            return Err(invalid(format!("moves[{i}].wave"), "waves start at 1".to_string()));
        }
        if let Some(first) = seen.insert(&m.pod, i) {
            return Err(invalid(
                format!("moves[{i}].pod"),
                format!("{:?} moves twice (also moves[{first}])", m.pod),
            ));
        }
        if placed_or_evicted.contains(m.pod.as_str()) {
            return Err(invalid(
                format!("moves[{i}].pod"),
                format!("{:?} is also placed or evicted by the plan", m.pod),
            ));
        }
        keys.push(key);
    }
    Ok(keys)
}

/// What the binder reads of a live pod.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Live {
    key: PodKey,
    uid: String,
    node: Option<String>,
    deleting: bool,
    owner_uid: Option<String>,
    scheduler: String,
    running_ready: bool,
    created: String,
}

impl Live {
    fn of(pod: &Pod) -> Live {
        let meta = &pod.metadata;
        let spec = pod.spec.as_ref();
        let status = pod.status.as_ref();
        let ready = status
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
        Live {
            key: PodKey {
                namespace: meta.namespace.clone().unwrap_or_default(),
                name: meta.name.clone().unwrap_or_default(),
            },
            uid: meta.uid.clone().unwrap_or_default(),
            node: spec.and_then(|s| s.node_name.clone()).filter(|n| !n.is_empty()),
            deleting: meta.deletion_timestamp.is_some(),
            owner_uid: meta
                .owner_references
                .iter()
                .flatten()
                .find(|o| o.controller == Some(true))
                .map(|o| o.uid.clone()),
            scheduler: spec
                .and_then(|s| s.scheduler_name.clone())
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "default-scheduler".to_string()),
            running_ready: status.and_then(|s| s.phase.as_deref()) == Some("Running") && ready,
            created: meta
                .creation_timestamp
                .as_ref()
                .map(|t| format!("{:?}", t.0))
                .unwrap_or_default(),
        }
    }
}

/// One move while its wave runs.
#[derive(Debug)]
struct Running<'m> {
    index: usize,
    mv: &'m Move,
    key: &'m PodKey,
    owner_uid: Option<String>,
    result: MoveResult,
    /// The UID to evict, while the eviction is still to be sent (or was refused so far).
    evict_uid: Option<String>,
    /// Evicted and waiting for a replacement.
    waiting: bool,
    replacement_uid: Option<String>,
    bind_sent: bool,
}

impl Binder<'_> {
    /// Lists the pods of a namespace.
    async fn list_pods(&self, namespace: &str) -> Result<Vec<Live>, Fail> {
        let api = self.pods(namespace);
        let lp = ListParams::default();
        let call = self.call(&format!("list pods in {namespace}"), || api.list(&lp)).await;
        call.result.map(|list| list.items.iter().map(Live::of).collect())
    }

    async fn get_live(&self, key: &PodKey) -> Result<Option<Live>, Fail> {
        let api = self.pods(&key.namespace);
        let call = self.call(&format!("get pod {key}"), || api.get(&key.name)).await;
        match call.result {
            Ok(pod) => Ok(Some(Live::of(&pod))),
            Err(Fail::NotFound(_)) => Ok(None),
            Err(fail) => Err(fail),
        }
    }

    fn report_move(&self, r: &MoveResult) {
        let as_action = ActionResult {
            action: Action::Move,
            pod: r.pod.clone(),
            node: r.to.clone(),
            preemptor: None,
            outcome: r.outcome,
            attempts: r.attempts,
            message: r.message.clone(),
        };
        match r.outcome {
            Outcome::Moved | Outcome::Gone | Outcome::Evicted => {
                tracing::debug!("move {} (wave {}): {}", r.pod, r.wave, r.outcome)
            }
            _ => tracing::warn!("move {} (wave {}): {}: {}", r.pod, r.wave, r.outcome, r.message),
        }
        (self.progress)(&as_action);
    }

    /// Binds a replacement to the planned node.
    async fn steer(&self, replacement: &PodKey, node: &str) -> Result<(), Fail> {
        let binding = Binding {
            metadata: ObjectMeta {
                name: Some(replacement.name.clone()),
                namespace: Some(replacement.namespace.clone()),
                ..Default::default()
            },
            target: ObjectReference {
                api_version: Some("v1".to_string()),
                kind: Some("Node".to_string()),
                name: Some(node.to_string()),
                ..Default::default()
            },
        };
        let api = self.pods(&replacement.namespace);
        let pp = self.post_params();
        self.call(&format!("bind {replacement}"), || {
            api.create_subresource::<Binding, Status>("binding", &replacement.name, &pp, &binding)
        })
        .await
        .result
        .map(|_| ())
    }

    /// Carries out the moves wave by wave. See the module documentation.
    pub(super) async fn run_moves(&self, moves: &[Move], keys: &[PodKey]) -> Vec<MoveResult> {
        let mut results: Vec<Option<MoveResult>> = vec![None; moves.len()];
        let mut waves: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for (i, m) in moves.iter().enumerate() {
            waves.entry(m.wave).or_default().push(i);
        }
        let mut stop: Option<String> = None;
        for (wave, indices) in waves {
            let running: Vec<Running<'_>> = indices
                .iter()
                .filter_map(|&i| {
                    let (mv, key) = (moves.get(i)?, keys.get(i)?);
                    Some(Running {
                        index: i,
                        mv,
                        key,
                        owner_uid: None,
                        result: MoveResult {
                            pod: mv.pod.clone(),
                            from: mv.from.clone(),
                            to: mv.to.clone(),
                            wave,
                            outcome: Outcome::Skipped,
                            replacement: None,
                            node: None,
                            steered: false,
                            attempts: 0,
                            message: String::new(),
                        },
                        evict_uid: None,
                        waiting: false,
                        replacement_uid: None,
                        bind_sent: false,
                    })
                })
                .collect();
            let done = if let Some(reason) = &stop {
                running
                    .into_iter()
                    .map(|mut r| {
                        r.result.message = reason.clone();
                        r
                    })
                    .collect()
            } else {
                self.run_wave(running).await
            };
            for r in done {
                if stop.is_none()
                    && !matches!(
                        r.result.outcome,
                        Outcome::Moved | Outcome::Gone | Outcome::Evicted
                    )
                {
                    stop = Some(format!(
                        "wave {wave} did not go as planned ({} {}); re-plan from a fresh snapshot",
                        r.result.pod, r.result.outcome
                    ));
                }
                self.report_move(&r.result);
                if let Some(slot) = results.get_mut(r.index) {
                    *slot = Some(r.result);
                }
            }
        }
        results.into_iter().flatten().collect()
    }

    async fn run_wave<'m>(&self, mut wave: Vec<Running<'m>>) -> Vec<Running<'m>> {
        let deadline = Instant::now() + self.options.wave_timeout;
        let poll = self.options.wave_poll;
        // 1. Read each pod; remember every pod of its owner that exists now.
        let mut namespaces: BTreeSet<String> = BTreeSet::new();
        for r in wave.iter_mut() {
            match self.get_live(r.key).await {
                Ok(None) => {
                    r.result.outcome = Outcome::Gone;
                    r.result.message = "no longer exists".to_string();
                }
                Ok(Some(v)) if v.node.as_deref() != Some(r.mv.from.as_str()) => {
                    r.result.outcome = Outcome::Gone;
                    r.result.message = format!("no longer runs on {}", r.mv.from);
                }
                Ok(Some(v)) if v.owner_uid.is_none() => {
                    r.result.outcome = Outcome::Skipped;
                    r.result.message = "no controlling owner: nothing would replace it".to_string();
                }
                Ok(Some(v)) => {
                    r.owner_uid = v.owner_uid.clone();
                    r.evict_uid = Some(v.uid);
                    namespaces.insert(r.key.namespace.clone());
                }
                Err(fail) => {
                    r.result.outcome = Outcome::Failed;
                    r.result.message = format!("reading the pod: {}", fail.message());
                }
            }
        }
        let mut known: BTreeSet<String> = BTreeSet::new();
        for ns in &namespaces {
            match self.list_pods(ns).await {
                Ok(pods) => known.extend(pods.into_iter().map(|p| p.uid)),
                Err(fail) => {
                    for r in
                        wave.iter_mut().filter(|r| r.evict_uid.is_some() && r.key.namespace == *ns)
                    {
                        r.evict_uid = None;
                        r.result.outcome = Outcome::Failed;
                        r.result.message = format!("listing pods in {ns}: {}", fail.message());
                    }
                }
            }
        }
        // 2. Evict (a refusal is tried again at every poll until the deadline), then
        // 3. wait for the replacements, steering those kplace serves.
        loop {
            let last_chance = Instant::now() + poll > deadline;
            for r in wave.iter_mut() {
                let Some(uid) = r.evict_uid.clone() else { continue };
                let call = self.post_eviction(r.key, Some(uid.clone())).await;
                r.result.attempts += call.attempts;
                match call.result {
                    Ok(_) if self.options.dry_run => {
                        r.evict_uid = None;
                        r.result.outcome = Outcome::Evicted;
                        r.result.message = "server dry run: nothing waited for".to_string();
                    }
                    Ok(_) => {
                        r.evict_uid = None;
                        r.waiting = true;
                    }
                    Err(Fail::Refused(m)) if !last_chance => {
                        tracing::debug!("evict {}: {m}; trying again", r.key);
                    }
                    // An attempt went unanswered: the pod's real state says whether it was
                    // evicted (then its replacement is awaited).
                    Err(fail)
                        if call.ambiguous
                            && !self.options.dry_run
                            && !matches!(fail, Fail::Refused(_)) =>
                    {
                        r.evict_uid = None;
                        match self.read_back(r.key).await {
                            super::ReadBack::Missing => r.waiting = true,
                            super::ReadBack::Pod(v)
                                if v.uid.as_deref() != Some(uid.as_str()) || v.deleting =>
                            {
                                r.waiting = true
                            }
                            super::ReadBack::Pod(_) => {
                                r.result.outcome = Outcome::Failed;
                                r.result.message =
                                    format!("{}; read back: still running", fail.message());
                            }
                            super::ReadBack::Failed(m) => {
                                r.result.outcome = Outcome::Unknown;
                                r.result.message = format!(
                                    "{}; reading the pod back failed too: {m}",
                                    fail.message()
                                );
                            }
                        }
                    }
                    Err(fail) => {
                        r.evict_uid = None;
                        (r.result.outcome, r.result.message) = match fail {
                            Fail::NotFound(_) => (Outcome::Gone, "no longer exists".to_string()),
                            Fail::Conflict(_) => {
                                (Outcome::Gone, "replaced by a new pod".to_string())
                            }
                            Fail::Refused(m) => (Outcome::Refused, m),
                            other => (Outcome::Failed, other.message().to_string()),
                        };
                    }
                }
            }
            if !wave.iter().any(|r| r.waiting || r.evict_uid.is_some()) {
                break;
            }
            let mut live: Vec<Live> = Vec::new();
            for ns in &namespaces {
                match self.list_pods(ns).await {
                    Ok(pods) => live.extend(pods),
                    Err(fail) => tracing::debug!("listing pods in {ns}: {}", fail.message()),
                }
            }
            live.sort_by(|a, b| (&a.created, &a.key).cmp(&(&b.created, &b.key)));
            let claimed: BTreeSet<String> =
                wave.iter().filter_map(|r| r.replacement_uid.clone()).collect();
            let mut taken = claimed;
            for r in wave.iter_mut().filter(|r| r.waiting) {
                let current = r
                    .replacement_uid
                    .as_ref()
                    .and_then(|uid| live.iter().find(|p| p.uid == *uid && !p.deleting));
                let replacement = match current {
                    Some(p) => Some(p),
                    None => {
                        if let Some(uid) = r.replacement_uid.take() {
                            taken.remove(&uid);
                        }
                        let found = live.iter().find(|p| {
                            p.owner_uid == r.owner_uid
                                && !p.deleting
                                && !known.contains(&p.uid)
                                && !taken.contains(&p.uid)
                        });
                        if let Some(p) = found {
                            taken.insert(p.uid.clone());
                            r.replacement_uid = Some(p.uid.clone());
                            r.bind_sent = false;
                        }
                        found
                    }
                };
                let Some(p) = replacement else { continue };
                r.result.replacement = Some(p.key.to_string());
                match &p.node {
                    None if !r.bind_sent
                        && self.options.steer_scheduler_names.contains(&p.scheduler) =>
                    {
                        match self.steer(&p.key, &r.mv.to).await {
                            Ok(()) => {
                                r.bind_sent = true;
                                r.result.steered = true;
                            }
                            Err(Fail::Conflict(_)) => r.bind_sent = true,
                            Err(fail) => {
                                tracing::debug!("binding {}: {}", p.key, fail.message());
                            }
                        }
                    }
                    None => {}
                    Some(node) => {
                        r.result.node = Some(node.clone());
                        if p.running_ready {
                            r.waiting = false;
                            if *node == r.mv.to {
                                r.result.outcome = Outcome::Moved;
                            } else {
                                r.result.outcome = Outcome::Elsewhere;
                                r.result.message = format!(
                                    "its scheduler ({}) put the replacement on {node}",
                                    p.scheduler
                                );
                            }
                        }
                    }
                }
            }
            if !wave.iter().any(|r| r.waiting || r.evict_uid.is_some()) {
                break;
            }
            if Instant::now() + poll > deadline {
                let secs = self.options.wave_timeout.as_secs_f64();
                for r in wave.iter_mut().filter(|r| r.evict_uid.is_some()) {
                    r.evict_uid = None;
                    r.result.outcome = Outcome::Refused;
                    r.result.message = format!("the eviction was still refused after {secs} s");
                }
                for r in wave.iter_mut().filter(|r| r.waiting) {
                    r.waiting = false;
                    r.result.outcome = Outcome::Failed;
                    r.result.message = match (&r.result.replacement, &r.result.node) {
                        (None, _) => format!("no replacement appeared within {secs} s"),
                        (Some(p), None) => format!("replacement {p} was not bound within {secs} s"),
                        (Some(p), Some(n)) => {
                            format!(
                                "replacement {p} on {n} was not running and ready within {secs} s"
                            )
                        }
                    };
                }
                break;
            }
            tokio::time::sleep(poll).await;
        }
        wave
    }
}

/// How long each wave may take, and how often it is polled, by default.
pub const DEFAULT_WAVE_TIMEOUT: Duration = Duration::from_secs(600);
/// See [`DEFAULT_WAVE_TIMEOUT`].
pub const DEFAULT_WAVE_POLL: Duration = Duration::from_secs(2);
