//! Reading a live cluster: the objects kplace reads, listed from an API server into the same
//! [`Snapshot`] that manifests load into, read-only.
//!
//! Input: a kubeconfig (or none: kubectl's resolution, [`crate::bind::load_config`]) and
//! [`ReadOptions`]; output: a [`Snapshot`] — built by [`crate::schedule::cache::snapshot_of`],
//! the live scheduler's conversion, so files, `kplace schedule` and these reads give one model
//! — with a [`crate::snapshot::Warning`] for each optional kind that could not be read.
//!
//! What is listed, cluster-wide, page by page (`limit`/`continue`; when a `continue` token has
//! expired, 410 `Expired`, the kind is listed again from the start): nodes, pods,
//! PriorityClasses and namespaces (needed: a refusal is an error naming the server and the
//! kind), PodDisruptionBudgets, PersistentVolumeClaims and the owners default spreading reads — Services,
//! ReplicationControllers, ReplicaSets, StatefulSets (optional: a 403 is a warning and the run
//! goes on without them, as `kplace schedule` does) — and the PodGroups of coscheduling and
//! Volcano where their CRDs are installed (a 404 means not installed). The first contact is
//! [`crate::bind::contact`]: an unreachable server, a 401 or a 403 is an error naming the
//! server. Transient failures of a page (429, 5xx, a dropped connection) are retried a few
//! times.
//!
//! Upstream counterparts: client-go's `tools/pager` (`ListPager`: pages of `limit`, a full
//! relist when a continue token expires) and `kubectl get -A -o yaml`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{
    Namespace, Node, PersistentVolumeClaim, Pod, ReplicationController, Service,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use serde::de::DeserializeOwned;

use crate::bind::BindError;
use crate::bind::retry::{Verdict, chain, classify};
use crate::model::GangConvention;
use crate::schedule::cache::{Objects, snapshot_of};
use crate::snapshot::{Snapshot, Sourced, Warning};

/// How a cluster is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOptions {
    /// Objects per page (`limit`).
    pub page_size: u32,
    /// How long the first contact tries to reach the server.
    pub contact_timeout: Duration,
    /// How many times a kind is listed again from the start when its `continue` token expires.
    pub relists: u32,
    /// Attempts of one page when it fails transiently (429, 5xx, a dropped connection).
    pub page_attempts: u32,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            page_size: 500,
            contact_timeout: Duration::from_secs(5),
            relists: 3,
            page_attempts: 3,
        }
    }
}

/// Why a cluster could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// No usable kubeconfig, an unreachable server, or credentials refused at first contact.
    #[error(transparent)]
    Connect(#[from] BindError),
    /// The server refused to list a kind kplace needs.
    #[error(
        "API server {server} refused to list {kind} ({code}): {message} (kplace needs list on \
         {kind}; see deploy/rbac.yaml)"
    )]
    Denied {
        /// The server's URL.
        server: String,
        /// The resource (`pods`).
        kind: &'static str,
        /// 401 or 403 (or 404 when the server does not serve the kind).
        code: u16,
        /// The server's message.
        message: String,
    },
    /// Listing a kind failed.
    #[error("listing {kind} from API server {server}: {message}")]
    List {
        /// The server's URL.
        server: String,
        /// The resource.
        kind: &'static str,
        /// What failed.
        message: String,
    },
    /// A kind's continue token expired on every try.
    #[error(
        "listing {kind} from API server {server}: the listing expired (410) {times} times \
         while it was read page by page; the kind changes faster than it can be read \
         (try a larger --page-size)"
    )]
    Expired {
        /// The server's URL.
        server: String,
        /// The resource.
        kind: &'static str,
        /// How many listings expired.
        times: u32,
    },
}

/// A snapshot read from a cluster.
#[derive(Debug)]
pub struct Live {
    /// The objects.
    pub snapshot: Snapshot,
    /// The server's URL.
    pub server: String,
    /// Where the configuration came from (`kubeconfig ~/.kube/config, context "prod"`).
    pub source: String,
}

/// Resolves the kubeconfig as kubectl does and reads the cluster. Runs inside a tokio
/// runtime.
pub async fn read(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
    options: &ReadOptions,
) -> Result<Live, LiveError> {
    let (config, source) = crate::bind::load_config(kubeconfig, context).await?;
    let server = config.cluster_url.to_string();
    let client = crate::bind::client(config)?;
    tracing::info!("reading the cluster at {server} ({source})");
    let snapshot = read_cluster(&client, &server, options).await?;
    Ok(Live { snapshot, server, source })
}

/// Why one kind could not be listed.
#[derive(Debug)]
enum ListFailure {
    /// The server's or the connection's error.
    Kube(kube::Error),
    /// The continue token expired this many times.
    Expired(u32),
}

/// One page, retrying transient failures.
async fn page<K>(
    api: &Api<K>,
    params: &ListParams,
    attempts: u32,
) -> Result<kube::core::ObjectList<K>, kube::Error>
where
    K: Clone + DeserializeOwned + Debug,
{
    let mut wait = Duration::from_millis(200);
    let mut attempt = 1;
    loop {
        match api.list(params).await {
            Ok(list) => return Ok(list),
            Err(e) => match classify(&e) {
                Verdict::Retry { message, after, .. } if attempt < attempts.max(1) => {
                    tracing::debug!("listing: {message}; trying again");
                    tokio::time::sleep(after.unwrap_or(wait)).await;
                    wait *= 2;
                    attempt += 1;
                }
                _ => return Err(e),
            },
        }
    }
}

/// Every object of a kind, page by page; a listing whose continue token expires is started
/// again (at most `options.relists` times).
async fn list_all<K>(api: Api<K>, options: &ReadOptions) -> Result<Vec<K>, ListFailure>
where
    K: Clone + DeserializeOwned + Debug,
{
    let mut expired = 0;
    'listing: loop {
        let mut items = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut params = ListParams::default().limit(options.page_size.max(1));
            if let Some(t) = &token {
                params = params.continue_token(t);
            }
            let list = match page(&api, &params, options.page_attempts).await {
                Ok(list) => list,
                Err(kube::Error::Api(s)) if s.code == 410 && token.is_some() => {
                    expired += 1;
                    if expired > options.relists {
                        return Err(ListFailure::Expired(expired));
                    }
                    tracing::debug!("the listing expired ({}); listing again", s.message);
                    continue 'listing;
                }
                Err(e) => return Err(ListFailure::Kube(e)),
            };
            items.extend(list.items);
            match list.metadata.continue_ {
                Some(t) if !t.is_empty() => token = Some(t),
                _ => return Ok(items),
            }
        }
    }
}

/// Every (API group, resource) read, all with `list` only: what RBAC must grant
/// (`deploy/rbac.yaml`, `deploy/rbac-reader.yaml`).
pub const LISTED: [(&str, &str); 12] = [
    ("", "nodes"),
    ("", "pods"),
    ("scheduling.k8s.io", "priorityclasses"),
    ("", "namespaces"),
    ("policy", "poddisruptionbudgets"),
    ("", "persistentvolumeclaims"),
    ("", "services"),
    ("", "replicationcontrollers"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("scheduling.x-k8s.io", "podgroups"),
    ("scheduling.volcano.sh", "podgroups"),
];

/// Whether a kind is needed, or what the run goes without when it cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    /// An error when it cannot be read.
    Required,
    /// A warning saying what is left out.
    Optional(&'static str),
}

/// The resources read, with what the run goes without when an optional one is refused.
const KINDS: [(&str, Need); 10] = [
    ("nodes", Need::Required),
    ("pods", Need::Required),
    ("priorityclasses", Need::Required),
    ("namespaces", Need::Required),
    (
        "poddisruptionbudgets",
        Need::Optional(
            "plans are made as if there were no PodDisruptionBudgets (preemption may pick \
             victims a budget protects; rebalance and check see no budget)",
        ),
    ),
    (
        "persistentvolumeclaims",
        Need::Optional(
            "pods that use PersistentVolumeClaims fail VolumeBinding's PreFilter (claim not found)",
        ),
    ),
    ("services", Need::Optional(SPREAD)),
    ("replicationcontrollers", Need::Optional(SPREAD)),
    ("replicasets", Need::Optional(SPREAD)),
    ("statefulsets", Need::Optional(SPREAD)),
];

const SPREAD: &str = "default topology spreading does not see the selectors of this kind";

fn need(kind: &str) -> Need {
    KINDS.iter().find(|(k, _)| *k == kind).map_or(Need::Required, |(_, n)| *n)
}

/// Reads every kind; see the module documentation.
pub async fn read_cluster(
    client: &kube::Client,
    server: &str,
    options: &ReadOptions,
) -> Result<Snapshot, LiveError> {
    let probe: Api<Node> = Api::all(client.clone());
    crate::bind::contact(
        server,
        options.contact_timeout,
        "listing nodes; kplace needs list on nodes, pods, priorityclasses, namespaces, poddisruptionbudgets, \
         persistentvolumeclaims, services, replicationcontrollers, replicasets, statefulsets and podgroups; see \
         deploy/rbac.yaml",
        || {
            let probe = probe.clone();
            async move { probe.list(&ListParams::default().limit(1)).await.map(|_| ()) }
        },
    )
    .await?;
    let (nodes, pods, pcs, namespaces, pdbs, pvcs, services, rcs, rss, sss) = tokio::join!(
        list_all(Api::<Node>::all(client.clone()), options),
        list_all(Api::<Pod>::all(client.clone()), options),
        list_all(Api::<PriorityClass>::all(client.clone()), options),
        list_all(Api::<Namespace>::all(client.clone()), options),
        list_all(Api::<PodDisruptionBudget>::all(client.clone()), options),
        list_all(Api::<PersistentVolumeClaim>::all(client.clone()), options),
        list_all(Api::<Service>::all(client.clone()), options),
        list_all(Api::<ReplicationController>::all(client.clone()), options),
        list_all(Api::<ReplicaSet>::all(client.clone()), options),
        list_all(Api::<StatefulSet>::all(client.clone()), options),
    );
    let mut warnings = Vec::new();
    let objects = Objects {
        nodes: sorted(settle(server, "nodes", nodes, &mut warnings)?),
        pods: sorted(settle(server, "pods", pods, &mut warnings)?),
        pdbs: sorted(settle(server, "poddisruptionbudgets", pdbs, &mut warnings)?),
        pvcs: sorted(settle(server, "persistentvolumeclaims", pvcs, &mut warnings)?),
        priority_classes: sorted(settle(server, "priorityclasses", pcs, &mut warnings)?),
        namespaces: sorted(settle(server, "namespaces", namespaces, &mut warnings)?),
        services: sorted(settle(server, "services", services, &mut warnings)?),
        replication_controllers: sorted(settle(
            server,
            "replicationcontrollers",
            rcs,
            &mut warnings,
        )?),
        replica_sets: sorted(settle(server, "replicasets", rss, &mut warnings)?),
        stateful_sets: sorted(settle(server, "statefulsets", sss, &mut warnings)?),
    };
    let mut snapshot = snapshot_of(&objects, &BTreeMap::new(), &BTreeSet::new());
    name_sources(&mut snapshot, server);
    for convention in GangConvention::ALL {
        read_pod_groups(client, server, convention, options, &mut snapshot, &mut warnings).await?;
    }
    snapshot.warnings.extend(warnings);
    Ok(snapshot)
}

/// A listing's objects; for an optional kind that could not be read (401, 403, 404), none
/// and a warning.
fn settle<K: kube::Resource>(
    server: &str,
    kind: &'static str,
    result: Result<Vec<K>, ListFailure>,
    warnings: &mut Vec<Warning>,
) -> Result<Vec<Arc<K>>, LiveError> {
    let error = match result {
        Ok(items) => return Ok(items.into_iter().map(Arc::new).collect()),
        Err(ListFailure::Expired(times)) => {
            return Err(LiveError::Expired { server: server.to_string(), kind, times });
        }
        Err(ListFailure::Kube(e)) => e,
    };
    match (&error, need(kind)) {
        (kube::Error::Api(s), Need::Optional(without)) if matches!(s.code, 401 | 403 | 404) => {
            warnings.push(Warning {
                source: None,
                object: None,
                message: format!(
                    "API server {server} did not list {kind} ({}: {}); {without}",
                    s.code, s.message
                ),
            });
            Ok(Vec::new())
        }
        (kube::Error::Api(s), Need::Required) if matches!(s.code, 401 | 403 | 404) => {
            Err(LiveError::Denied {
                server: server.to_string(),
                kind,
                code: s.code,
                message: s.message.clone(),
            })
        }
        _ => Err(LiveError::List { server: server.to_string(), kind, message: chain(&error) }),
    }
}

/// Objects sorted by namespace and name (the order files are written in).
fn sorted<K: kube::Resource>(mut v: Vec<Arc<K>>) -> Vec<Arc<K>> {
    v.sort_by(|a, b| {
        (a.meta().namespace.as_deref(), a.meta().name.as_deref())
            .cmp(&(b.meta().namespace.as_deref(), b.meta().name.as_deref()))
    });
    v
}

/// Names each object's source after the server and resource it was listed from.
fn name_sources(s: &mut Snapshot, server: &str) {
    fn rename<K>(v: &mut [Sourced<K>], server: &str, resource: &str) {
        let file = PathBuf::from(format!("{server} {resource}"));
        for o in v {
            o.source.file = file.clone();
        }
    }
    rename(&mut s.nodes, server, "nodes");
    rename(&mut s.pods, server, "pods");
    rename(&mut s.pdbs, server, "poddisruptionbudgets");
    rename(&mut s.pvcs, server, "persistentvolumeclaims");
    rename(&mut s.priority_classes, server, "priorityclasses");
    rename(&mut s.namespaces, server, "namespaces");
    rename(&mut s.services, server, "services");
    rename(&mut s.replication_controllers, server, "replicationcontrollers");
    rename(&mut s.replica_sets, server, "replicasets");
    rename(&mut s.stateful_sets, server, "statefulsets");
}

/// The PodGroups of one convention, when its CRD is installed (a 404 means it is not; a 403
/// is a warning: gangs are then held together by their pods alone).
async fn read_pod_groups(
    client: &kube::Client,
    server: &str,
    convention: GangConvention,
    options: &ReadOptions,
    snapshot: &mut Snapshot,
    warnings: &mut Vec<Warning>,
) -> Result<(), LiveError> {
    let api_version = convention.api_version();
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let resource = ApiResource {
        group: group.to_string(),
        version: version.to_string(),
        api_version: api_version.to_string(),
        kind: "PodGroup".to_string(),
        plural: "podgroups".to_string(),
    };
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let kind = "podgroups";
    let items = match list_all(api, options).await {
        Ok(items) => items,
        Err(ListFailure::Kube(kube::Error::Api(s))) if s.code == 404 => {
            tracing::debug!("{api_version} PodGroups are not served: {}", s.message);
            return Ok(());
        }
        Err(ListFailure::Kube(kube::Error::Api(s))) if matches!(s.code, 401 | 403) => {
            warnings.push(Warning {
                source: None,
                object: None,
                message: format!(
                    "API server {server} did not list {api_version} podgroups ({}: {}); gangs \
                     of that convention are read from their pods alone",
                    s.code, s.message
                ),
            });
            return Ok(());
        }
        Err(ListFailure::Kube(e)) => {
            return Err(LiveError::List { server: server.to_string(), kind, message: chain(&e) });
        }
        Err(ListFailure::Expired(times)) => {
            return Err(LiveError::Expired { server: server.to_string(), kind, times });
        }
    };
    if items.is_empty() {
        return Ok(());
    }
    let mut items: Vec<serde_json::Value> = items
        .into_iter()
        .filter_map(|o| serde_json::to_value(o).ok())
        .map(|mut v| {
            v["apiVersion"] = serde_json::Value::from(api_version);
            v["kind"] = serde_json::Value::from("PodGroup");
            v
        })
        .collect();
    items.sort_by_key(|v| {
        (v["metadata"]["namespace"].as_str().map(str::to_string), v["metadata"]["name"].to_string())
    });
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
    let file = PathBuf::from(format!("{server} podgroups.{group}"));
    snapshot.add_json(&file, &list.to_string()).map_err(|e| LiveError::List {
        server: server.to_string(),
        kind,
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;

    fn api_error(code: u16) -> ListFailure {
        ListFailure::Kube(kube::Error::Api(
            Status::failure("refused", "Forbidden").with_code(code).boxed(),
        ))
    }

    #[test]
    fn a_refused_kind_is_an_error_when_needed_and_a_warning_when_optional() {
        // (case, kind, HTTP status, error expected, warning expected)
        let cases = [
            ("nodes refused is an error", "nodes", 403, true, false),
            ("pods refused is an error", "pods", 403, true, false),
            ("pods with bad credentials is an error", "pods", 401, true, false),
            ("budgets refused is a warning", "poddisruptionbudgets", 403, false, true),
            ("services refused is a warning", "services", 403, false, true),
            ("statefulsets not served is a warning", "statefulsets", 404, false, true),
            ("a server failure on an optional kind is an error", "services", 500, true, false),
        ];
        for (name, kind, code, error, warning) in cases {
            let mut warnings = Vec::new();
            let r = settle::<Node>("https://k:6443/", kind, Err(api_error(code)), &mut warnings);
            assert_eq!(r.is_err(), error, "{name}");
            assert_eq!(warnings.len(), usize::from(warning), "{name}");
            if let Err(e) = r {
                let text = e.to_string();
                assert!(text.contains("https://k:6443/") && text.contains(kind), "{name}: {text}");
            }
            if let Some(w) = warnings.first() {
                assert!(
                    w.message.contains(kind) && w.message.contains("https://k:6443/"),
                    "{name}"
                );
            }
        }
    }

    #[test]
    fn expired_listings_name_the_kind_and_the_server() {
        let e = settle::<Pod>("https://k/", "pods", Err(ListFailure::Expired(4)), &mut Vec::new())
            .expect_err("an error");
        assert!(e.to_string().contains("listing pods from API server https://k/"), "{e}");
        assert!(e.to_string().contains("4 times"), "{e}");
    }
}
