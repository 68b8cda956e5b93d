//! The scheduler's informers: one kube-runtime reflector per watched kind, its events turned
//! into [`Notice`]s for the loop and its health into [`Metrics`], and the stores a batch's
//! cluster is built from.
//!
//! Input: a `kube::Client`. Output: the reflector stores and a stream of notices. Upstream
//! counterpart: the scheduler's shared informers (`pkg/scheduler/eventhandlers.go`), including
//! how kube-scheduler waits for every cache to sync before it schedules.

use super::*;

/// The kinds watched; scheduling starts once every one has synced.
pub(super) const KINDS: [&str; 10] = [
    "nodes",
    "pods",
    "poddisruptionbudgets",
    "persistentvolumeclaims",
    "priorityclasses",
    "namespaces",
    "services",
    "replicationcontrollers",
    "replicasets",
    "statefulsets",
];

/// What the watch tasks tell the loop.
#[derive(Debug)]
pub(super) enum Notice {
    Pod(Box<watcher::Event<Pod>>),
    Node(Box<watcher::Event<Node>>),
    Synced(&'static str),
    /// The service account may not read this optional kind.
    Forbidden(&'static str),
}

/// The reflector stores.
#[derive(Clone)]
pub(super) struct Stores {
    pub(super) nodes: Store<Node>,
    pub(super) pods: Store<Pod>,
    pub(super) pdbs: Store<PodDisruptionBudget>,
    pub(super) pvcs: Store<PersistentVolumeClaim>,
    pub(super) priority_classes: Store<PriorityClass>,
    pub(super) namespaces: Store<Namespace>,
    pub(super) services: Store<Service>,
    pub(super) rcs: Store<ReplicationController>,
    pub(super) rss: Store<ReplicaSet>,
    pub(super) sss: Store<StatefulSet>,
}

fn sorted<K: kube::Resource>(mut v: Vec<Arc<K>>) -> Vec<Arc<K>> {
    v.sort_by(|a, b| {
        (a.meta().namespace.as_deref(), a.meta().name.as_deref())
            .cmp(&(b.meta().namespace.as_deref(), b.meta().name.as_deref()))
    });
    v
}

impl Stores {
    pub(super) fn objects(&self) -> Objects {
        Objects {
            nodes: sorted(self.nodes.state()),
            pods: sorted(self.pods.state()),
            pdbs: sorted(self.pdbs.state()),
            pvcs: sorted(self.pvcs.state()),
            priority_classes: sorted(self.priority_classes.state()),
            namespaces: sorted(self.namespaces.state()),
            services: sorted(self.services.state()),
            replication_controllers: sorted(self.rcs.state()),
            replica_sets: sorted(self.rss.state()),
            stateful_sets: sorted(self.sss.state()),
        }
    }

    pub(super) fn pod(&self, key: &str) -> Option<Arc<Pod>> {
        let (ns, name) = key.split_once('/')?;
        self.pods.get(&reflector::ObjectRef::new(name).within(ns))
    }
}

/// The watched kinds the scheduler can do without when its service account may not read them:
/// they only feed the default spread selectors (soft scoring). Every other kind is needed:
/// without it nothing is scheduled (`/readyz` names it), except PodDisruptionBudgets, without
/// which scheduling goes on without preemption ([`OPTIONAL_FOR_PREEMPTION`]).
const OPTIONAL_KINDS: [&str; 5] = [
    "services",
    "replicationcontrollers",
    "replicasets",
    "statefulsets",
    // Without claims, pods that use them fail VolumeBinding's PreFilter (claim not found):
    // they stay pending, as they would if the claims did not exist.
    "persistentvolumeclaims",
];

/// The kind without which preemption is off (evicting without knowing the budgets could break
/// them) but placement goes on.
pub(super) const OPTIONAL_FOR_PREEMPTION: &str = "poddisruptionbudgets";

/// The HTTP status of a watch error from the API server, if it has one.
fn watch_error_code(e: &watcher::Error) -> Option<u16> {
    match e {
        watcher::Error::InitialListFailed(kube::Error::Api(s))
        | watcher::Error::WatchStartFailed(kube::Error::Api(s))
        | watcher::Error::WatchFailed(kube::Error::Api(s)) => Some(s.code),
        watcher::Error::WatchError(s) => Some(s.code),
        _ => None,
    }
}

/// Starts a reflector for one kind; its events go to the loop as notices, its health to
/// `metrics`. A 403 on a kind in [`OPTIONAL_KINDS`] or [`OPTIONAL_FOR_PREEMPTION`] is reported
/// once and the kind counts as synced (empty); the watch keeps retrying with backoff, so
/// granting the permission later takes effect.
pub(super) fn watch_kind<K>(
    client: &kube::Client,
    kind: &'static str,
    tx: mpsc::UnboundedSender<Notice>,
    metrics: Arc<Metrics>,
    wrap: fn(watcher::Event<K>) -> Option<Notice>,
) -> (Store<K>, JoinHandle<()>)
where
    K: kube::Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
{
    let api: Api<K> = Api::all(client.clone());
    let (reader, writer) = reflector::store();
    let stream =
        reflector::reflector(writer, watcher(api, watcher::Config::default()).default_backoff());
    let task = tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        let mut failing = false;
        let mut forbidden = false;
        while let Some(item) = stream.next().await {
            match item {
                Ok(event) => {
                    failing = false;
                    metrics.watch_ok(kind);
                    let synced = matches!(event, watcher::Event::InitDone);
                    if synced && forbidden {
                        tracing::info!("{kind} can be read now");
                        forbidden = false;
                    }
                    let notice = wrap(event).or(synced.then_some(Notice::Synced(kind)));
                    if let Some(n) = notice
                        && tx.send(n).is_err()
                    {
                        break;
                    }
                }
                Err(e) => {
                    let optional =
                        OPTIONAL_KINDS.contains(&kind) || kind == OPTIONAL_FOR_PREEMPTION;
                    if watch_error_code(&e) == Some(403) && optional {
                        if !forbidden {
                            let without = if kind == OPTIONAL_FOR_PREEMPTION {
                                "scheduling without preemption"
                            } else {
                                "scheduling without default spreading by its selectors"
                            };
                            tracing::warn!(
                                "watching {kind}: {e}; {without} until the service account may list and watch {kind}"
                            );
                            metrics.forbidden(kind, without);
                            if tx.send(Notice::Forbidden(kind)).is_err() {
                                break;
                            }
                        }
                        forbidden = true;
                        continue;
                    }
                    if failing {
                        tracing::debug!("watching {kind}: {e}");
                    } else if watch_error_code(&e) == Some(403) {
                        tracing::error!(
                            "watching {kind}: {e}; nothing is scheduled until the service account may list and watch {kind} (see deploy/rbac.yaml)"
                        );
                    } else {
                        tracing::warn!("watching {kind}: {e}; retrying with backoff");
                    }
                    metrics.watch_failed(kind, Instant::now());
                    failing = true;
                }
            }
        }
    });
    (reader, task)
}

pub(super) fn none<K>(_: watcher::Event<K>) -> Option<Notice> {
    None
}
