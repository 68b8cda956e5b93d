//! The binder's first contact with the API server, before anything is written.
//!
//! Input: a client, the plan and the server's URL (for messages); output: `Ok`, or an error
//! saying the server is unreachable or refused the credentials (401) or the permissions (403).
//! Upstream counterpart: none in kube-scheduler, which waits for its informers; kubectl's
//! `auth can-i` is the nearest.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;

use super::{BindError, BindOptions, PodKey, retry};
use crate::plan::Plan;

/// Contacts the API server before anything is written: reads the first pod the plan names (a
/// `get pods` the binder needs anyway, so a 403 shows here), or `/version` for an empty plan.
/// Any answer but 401 and 403 means the server is there; connection failures are retried for
/// `preflight_timeout`. `server` names the server in the errors.
pub async fn preflight(
    client: &kube::Client,
    plan: &Plan,
    options: &BindOptions,
    server: &str,
) -> Result<(), BindError> {
    let first = plan
        .placements
        .iter()
        .map(|p| p.pod.as_str())
        .chain(plan.evictions.iter().map(|e| e.pod.as_str()))
        .chain(plan.moves.iter().map(|m| m.pod.as_str()))
        .find_map(PodKey::parse);
    let attempt = || {
        let client = client.clone();
        let first = first.clone();
        async move {
            match &first {
                Some(key) => {
                    Api::<Pod>::namespaced(client, &key.namespace).get(&key.name).await.map(|_| ())
                }
                None => client.apiserver_version().await.map(|_| ()),
            }
        }
    };
    contact(
        server,
        options.preflight_timeout,
        "the binder needs get on pods, create on pods/binding and pods/eviction",
        attempt,
    )
    .await
}

/// The first contact with `server`: runs `attempt` until it gets an answer. Any answer but 401
/// and 403 means the server is there (a 404 or a 5xx included); a 401 or 403 is
/// [`BindError::Denied`] (with `forbidden_hint`, what the credentials need, for a 403);
/// connection failures are retried with backoff for `timeout`, then
/// [`BindError::Unreachable`]. Shared by the binder and the commands that read a cluster.
pub async fn contact<F, Fut>(
    server: &str,
    timeout: Duration,
    forbidden_hint: &str,
    mut attempt: F,
) -> Result<(), BindError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), kube::Error>>,
{
    let deadline = Instant::now() + timeout;
    let mut wait = Duration::from_millis(100);
    loop {
        let remaining = deadline.saturating_duration_since(Instant::now());
        let error =
            match tokio::time::timeout(remaining.max(Duration::from_millis(50)), attempt()).await {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(kube::Error::Api(status))) => match status.code {
                    401 => {
                        return Err(BindError::Denied {
                            server: server.to_string(),
                            code: 401,
                            message: format!(
                                "{} (the kubeconfig's credentials were not accepted)",
                                status.message
                            ),
                        });
                    }
                    403 => {
                        return Err(BindError::Denied {
                            server: server.to_string(),
                            code: 403,
                            message: format!("{} ({forbidden_hint})", status.message),
                        });
                    }
                    // Any other answer (404 for a pod not there, a 5xx) shows the server is there.
                    _ => return Ok(()),
                },
                Ok(Err(e)) => retry::chain(&e),
                Err(_) => format!("no reply within {} ms", timeout.as_millis()),
            };
        if Instant::now() + wait >= deadline {
            return Err(BindError::Unreachable { server: server.to_string(), message: error });
        }
        tracing::debug!("contacting {server}: {error}; trying again");
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(Duration::from_secs(1));
    }
}
