//! The binder's requests: one `Binder` per run holds the client, the rate limiter and the
//! deadline; every request goes through `Binder::call` (retried with backoff until the
//! deadline, see [`super::retry`]), and a write whose outcome is uncertain is resolved by reading
//! the pod back.
//!
//! Input: the run's client and options. Output: each request's end and each action's
//! [`ActionResult`], reported as it finishes. Upstream counterpart: client-go's rate limiter
//! and the retries around kube-scheduler's binding calls.

use super::*;

/// The parts of a pod the binder looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct PodView {
    pub(super) uid: Option<String>,
    pub(super) node: Option<String>,
    pub(super) deleting: bool,
}

impl PodView {
    pub(super) fn of(pod: &Pod) -> Self {
        PodView {
            uid: pod.metadata.uid.clone(),
            node: pod.spec.as_ref().and_then(|s| s.node_name.clone()).filter(|n| !n.is_empty()),
            deleting: pod.metadata.deletion_timestamp.is_some(),
        }
    }
}

/// One request's end, after retries.
pub(super) struct Call<T> {
    pub(super) result: Result<T, Fail>,
    pub(super) attempts: u32,
    /// Some failed attempt may have been applied without a reply.
    pub(super) ambiguous: bool,
}

pub(super) struct Binder<'a> {
    pub(super) client: &'a kube::Client,
    pub(super) options: &'a BindOptions,
    pub(super) limiter: RateLimiter,
    pub(super) progress: &'a (dyn Fn(&ActionResult) + Sync),
    /// No request is sent, and no retry waited for, past this moment.
    pub(super) deadline: Instant,
}

/// What reading a pod back says about an uncertain write.
pub(super) enum ReadBack {
    /// The pod, as it is now.
    Pod(PodView),
    /// It does not exist.
    Missing,
    /// The read failed too.
    Failed(String),
}

impl Binder<'_> {
    pub(super) fn pods(&self, namespace: &str) -> Api<Pod> {
        Api::namespaced(self.client.clone(), namespace)
    }

    pub(super) fn post_params(&self) -> PostParams {
        PostParams {
            dry_run: self.options.dry_run,
            field_manager: Some(self.options.field_manager.clone()),
        }
    }

    /// Sends one request, retrying transient failures until the run's deadline.
    pub(super) async fn call<T, F, Fut>(&self, what: &str, send: F) -> Call<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, kube::Error>>,
    {
        self.call_until(what, self.deadline, send).await
    }

    /// Sends one request, retrying transient failures until `deadline` (and at most
    /// `retry.max_attempts` times when that is not 0). Nothing is sent once the deadline passed.
    pub(super) async fn call_until<T, F, Fut>(
        &self,
        what: &str,
        deadline: Instant,
        mut send: F,
    ) -> Call<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, kube::Error>>,
    {
        let policy = self.options.retry;
        let max = policy.max_attempts;
        let mut attempts = 0;
        let mut ambiguous = false;
        let timeout_secs = self.options.timeout.as_secs_f64();
        loop {
            let now = Instant::now();
            if now >= deadline {
                let message = format!("the deadline (--timeout {timeout_secs} s) passed");
                return Call { result: Err(Fail::Exhausted(message)), attempts, ambiguous };
            }
            attempts += 1;
            self.limiter.acquire().await;
            let timeout = self
                .options
                .request_timeout
                .min(deadline.saturating_duration_since(Instant::now()))
                .max(Duration::from_millis(50));
            let verdict = match tokio::time::timeout(timeout, send()).await {
                Ok(Ok(value)) => return Call { result: Ok(value), attempts, ambiguous },
                Ok(Err(e)) => retry::classify(&e),
                Err(_) => retry::Verdict::Retry {
                    message: format!("no reply within {} ms", timeout.as_millis()),
                    after: None,
                    ambiguous: true,
                },
            };
            match verdict {
                retry::Verdict::Stop(fail) => {
                    return Call { result: Err(fail), attempts, ambiguous };
                }
                retry::Verdict::Retry { message, after, ambiguous: maybe_applied } => {
                    ambiguous |= maybe_applied;
                    let plural = if attempts == 1 { "" } else { "s" };
                    if max > 0 && attempts >= max {
                        let message =
                            format!("{message} (gave up after {attempts} attempt{plural})");
                        return Call { result: Err(Fail::Exhausted(message)), attempts, ambiguous };
                    }
                    let delay = policy.delay(attempts, rand::random_range(0.0..=1.0), after);
                    if Instant::now() + delay >= deadline {
                        let message = format!(
                            "{message} (gave up after {attempts} attempt{plural}: the deadline, \
                             --timeout {timeout_secs} s, came first)"
                        );
                        return Call { result: Err(Fail::Exhausted(message)), attempts, ambiguous };
                    }
                    tracing::debug!("{what}: {message}; retrying in {} ms", delay.as_millis());
                    tokio::time::sleep(delay).await;
                }
            }
        }
    }

    /// Reads a pod; `None` when it does not exist.
    pub(super) async fn get_pod(&self, key: &PodKey) -> Result<Option<PodView>, Fail> {
        let api = self.pods(&key.namespace);
        let call = self.call(&format!("get pod {key}"), || api.get(&key.name)).await;
        match call.result {
            Ok(pod) => Ok(Some(PodView::of(&pod))),
            Err(Fail::NotFound(_)) => Ok(None),
            Err(fail) => Err(fail),
        }
    }

    /// Reads a pod back to settle an uncertain write; it may take `read_back_timeout` beyond the
    /// run's deadline.
    pub(super) async fn read_back(&self, key: &PodKey) -> ReadBack {
        let deadline = self.deadline.max(Instant::now() + self.options.read_back_timeout);
        let api = self.pods(&key.namespace);
        let call =
            self.call_until(&format!("read back pod {key}"), deadline, || api.get(&key.name)).await;
        match call.result {
            Ok(pod) => ReadBack::Pod(PodView::of(&pod)),
            Err(Fail::NotFound(_)) => ReadBack::Missing,
            Err(fail) => ReadBack::Failed(fail.message().to_string()),
        }
    }

    pub(super) fn finish(&self, result: ActionResult) -> ActionResult {
        match result.outcome {
            Outcome::Failed | Outcome::Refused | Outcome::Conflict | Outcome::Unknown => {
                tracing::warn!(
                    "{} {}: {}: {}",
                    result.action_word(),
                    result.pod,
                    result.outcome,
                    result.message
                );
            }
            _ => tracing::debug!("{} {}: {}", result.action_word(), result.pod, result.outcome),
        }
        (self.progress)(&result);
        result
    }
}
