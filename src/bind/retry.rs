//! Which failed API calls the binder retries, and how long it waits between attempts.
//!
//! Input: a `kube::Error` from one request; output: retry (after how long) or a final verdict
//! ([`Fail`]). kube's own retry layer is turned off (`Config::default_retry = false`), so this is
//! the only place that decides. The status codes and reasons are those the API server's pod
//! registry returns (`pkg/registry/core/pod/storage/storage.go`, `eviction.go`, v1.35):
//! 404 `NotFound`, 409 `Conflict`, 429 `TooManyRequests` with a `DisruptionBudget` cause when a
//! PodDisruptionBudget refuses an eviction.

use std::time::Duration;

/// How many times, and how far apart, a request is tried.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in all (the first try included); `0` for no limit on the count (the binder's
    /// retries are bounded by its deadline, [`super::BindOptions::timeout`], and this is `0`
    /// there by default).
    pub max_attempts: u32,
    /// The wait after the first failure, before jitter.
    pub initial_backoff: Duration,
    /// The longest wait between two attempts (a server's `retryAfterSeconds` is honoured up to
    /// this bound as well).
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 6,
            initial_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(10),
        }
    }
}

impl RetryPolicy {
    /// The wait before the next attempt after `failures` failed attempts (1 for the first
    /// failure): `initial_backoff · 2^(failures-1)`, capped at `max_backoff`, with "equal jitter"
    /// (half of it fixed, the other half scaled by `jitter` in `[0, 1]`), and never shorter than
    /// what the server asked for (`retry_after`, itself capped at `max_backoff`).
    pub fn delay(&self, failures: u32, jitter: f64, retry_after: Option<Duration>) -> Duration {
        let exp = failures.saturating_sub(1).min(30);
        let base = self.initial_backoff.saturating_mul(1u32 << exp).min(self.max_backoff);
        let half = base / 2;
        let jittered = half + half.mul_f64(jitter.clamp(0.0, 1.0));
        match retry_after {
            Some(after) => jittered.max(after.min(self.max_backoff)),
            None => jittered,
        }
    }
}

/// The final verdict on a request that will not be tried again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fail {
    /// 429 from a PodDisruptionBudget: the eviction would violate it.
    Refused(String),
    /// 409: the object is not in the state the request expects (a pod already bound, a UID
    /// precondition that no longer holds).
    Conflict(String),
    /// 404: the object does not exist.
    NotFound(String),
    /// A transient failure that lasted through every attempt.
    Exhausted(String),
    /// Anything retrying cannot fix (403, 400, 422, a reply that does not parse, …).
    Fatal(String),
}

impl Fail {
    /// The message carried by the verdict.
    pub fn message(&self) -> &str {
        match self {
            Fail::Refused(m)
            | Fail::Conflict(m)
            | Fail::NotFound(m)
            | Fail::Exhausted(m)
            | Fail::Fatal(m) => m,
        }
    }
}

/// What to do after one failed attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Try again. `ambiguous`: the request may have been applied although no success reply came
    /// (a 5xx, a timeout, a dropped connection), as opposed to a 429 the server refused outright.
    Retry {
        /// Why, for the log and for the final message when attempts run out.
        message: String,
        /// The server's `retryAfterSeconds`, when it gave one.
        after: Option<Duration>,
        /// Whether the failed attempt may have taken effect.
        ambiguous: bool,
    },
    /// Stop with this verdict.
    Stop(Fail),
}

/// `reason` of the `StatusCause` the API server attaches to an eviction refused by a
/// PodDisruptionBudget (`policyv1.DisruptionBudgetCause`).
pub const DISRUPTION_BUDGET_CAUSE: &str = "DisruptionBudget";

/// Classifies the error of one attempt.
pub fn classify(err: &kube::Error) -> Verdict {
    match err {
        kube::Error::Api(status) => classify_status(
            status.code,
            &status.reason,
            &status.message,
            status.details.as_ref().map(|d| {
                (
                    d.retry_after_seconds,
                    d.causes
                        .iter()
                        .map(|c| (c.reason.as_str(), c.message.as_str()))
                        .collect::<Vec<_>>(),
                )
            }),
        ),
        // Connection refused, reset or dropped before a reply, and timeouts inside the stack.
        kube::Error::HyperError(_) | kube::Error::Service(_) => Verdict::Retry {
            message: format!("connection failed: {}", chain(err)),
            after: None,
            ambiguous: true,
        },
        other => Verdict::Stop(Fail::Fatal(chain(other))),
    }
}

/// Classifies an error `Status` by its code, reason, message and details
/// (`retryAfterSeconds` and the causes as `(reason, message)`).
pub fn classify_status(
    code: u16,
    reason: &str,
    message: &str,
    details: Option<(u32, Vec<(&str, &str)>)>,
) -> Verdict {
    let (retry_after, causes) = details.unwrap_or_default();
    let after = (retry_after > 0).then(|| Duration::from_secs(u64::from(retry_after)));
    let text = if message.is_empty() { format!("{code} {reason}") } else { message.to_string() };
    match code {
        404 => Verdict::Stop(Fail::NotFound(text)),
        409 => Verdict::Stop(Fail::Conflict(text)),
        429 => {
            let budget: Vec<&str> = causes
                .iter()
                .filter(|(r, _)| *r == DISRUPTION_BUDGET_CAUSE)
                .map(|(_, m)| *m)
                .collect();
            // A budget with no disruptions left answers with no retryAfterSeconds; a budget the
            // server has not processed yet ("is still being processed") asks for a retry later.
            if !budget.is_empty() && after.is_none() {
                Verdict::Stop(Fail::Refused(format!("{text} ({})", budget.join("; "))))
            } else {
                Verdict::Retry { message: text, after, ambiguous: false }
            }
        }
        // The eviction subresource answers 500 when two budgets select the pod: no retry helps.
        500 if message.contains("more than one PodDisruptionBudget") => {
            Verdict::Stop(Fail::Fatal(text))
        }
        408 | 500..=599 => Verdict::Retry { message: text, after, ambiguous: true },
        _ => Verdict::Stop(Fail::Fatal(text)),
    }
}

/// An error and its sources, joined with `: `.
pub fn chain(err: &dyn std::error::Error) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_the_initial_wait_and_stops_at_the_cap() {
        let p = RetryPolicy {
            max_attempts: 10,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(1000),
        };
        let cases = [
            ("the first failure waits the initial backoff", 1, 1.0, 100),
            ("the second failure waits twice as long", 2, 1.0, 200),
            ("the fourth failure waits eight times as long", 4, 1.0, 800),
            ("the fifth failure is capped", 5, 1.0, 1000),
            ("a huge failure count is capped without overflow", 400, 1.0, 1000),
            ("no jitter keeps half of the wait", 3, 0.0, 200),
            ("half jitter keeps three quarters", 3, 0.5, 300),
            ("jitter beyond one is clamped", 1, 7.0, 100),
        ];
        for (name, failures, jitter, want_ms) in cases {
            assert_eq!(p.delay(failures, jitter, None), Duration::from_millis(want_ms), "{name}");
        }
    }

    #[test]
    fn a_servers_retry_after_is_honoured_up_to_the_cap() {
        let p = RetryPolicy {
            max_attempts: 3,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
        };
        let cases = [
            ("a longer retry-after wins over the backoff", Some(2), 2000),
            ("a retry-after beyond the cap is cut to the cap", Some(60), 5000),
            ("no retry-after leaves the backoff", None, 100),
        ];
        for (name, after, want_ms) in cases {
            let after = after.map(Duration::from_secs);
            assert_eq!(p.delay(1, 1.0, after), Duration::from_millis(want_ms), "{name}");
        }
    }

    fn stop(v: Verdict) -> Option<Fail> {
        match v {
            Verdict::Stop(f) => Some(f),
            Verdict::Retry { .. } => None,
        }
    }

    #[test]
    fn statuses_are_classified_as_the_pod_registry_means_them() {
        let pdb_zero = "The disruption budget web needs 2 healthy pods and has 2 currently";
        let cases: Vec<(&str, Verdict)> = vec![
            (
                "404 means the pod is gone",
                classify_status(404, "NotFound", "pods \"a\" not found", None),
            ),
            (
                "409 is a conflict",
                classify_status(409, "Conflict", "pod a is already assigned to node \"n\"", None),
            ),
            (
                "429 with a budget cause and no retry-after is a refusal",
                classify_status(
                    429,
                    "TooManyRequests",
                    "Cannot evict pod as it would violate the pod's disruption budget.",
                    Some((0, vec![(DISRUPTION_BUDGET_CAUSE, pdb_zero)])),
                ),
            ),
            (
                "429 from a budget still being processed is retried",
                classify_status(
                    429,
                    "TooManyRequests",
                    "Cannot evict pod as it would violate the pod's disruption budget.",
                    Some((10, vec![(DISRUPTION_BUDGET_CAUSE, "is still being processed")])),
                ),
            ),
            (
                "429 from API priority and fairness is retried",
                classify_status(429, "TooManyRequests", "too many requests", Some((1, vec![]))),
            ),
            ("503 is retried", classify_status(503, "ServiceUnavailable", "", None)),
            ("500 is retried", classify_status(500, "InternalError", "etcd timeout", None)),
            (
                "500 for two budgets is final",
                classify_status(
                    500,
                    "",
                    "This pod has more than one PodDisruptionBudget, which the eviction \
                     subresource does not support.",
                    None,
                ),
            ),
            ("403 is final", classify_status(403, "Forbidden", "forbidden", None)),
        ];
        let want: Vec<Option<&str>> = vec![
            Some("not-found"),
            Some("conflict"),
            Some("refused"),
            None,
            None,
            None,
            None,
            Some("fatal"),
            Some("fatal"),
        ];
        for ((name, verdict), want) in cases.into_iter().zip(want) {
            let got = stop(verdict).map(|f| match f {
                Fail::Refused(m) => {
                    assert!(m.contains("needs 2 healthy pods"), "{name}: {m}");
                    "refused"
                }
                Fail::Conflict(_) => "conflict",
                Fail::NotFound(_) => "not-found",
                Fail::Exhausted(_) => "exhausted",
                Fail::Fatal(_) => "fatal",
            });
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn a_5xx_may_have_been_applied_but_a_429_was_not() {
        let cases = [
            ("a 504 is ambiguous", 504, true),
            ("a request timeout is ambiguous", 408, true),
            ("a throttling 429 is not", 429, false),
        ];
        for (name, code, want) in cases {
            match classify_status(code, "", "x", None) {
                Verdict::Retry { ambiguous, .. } => assert_eq!(ambiguous, want, "{name}"),
                Verdict::Stop(f) => panic!("{name}: stopped with {f:?}"),
            }
        }
    }

    #[test]
    fn retry_after_seconds_become_the_minimum_wait() {
        match classify_status(429, "TooManyRequests", "slow down", Some((3, vec![]))) {
            Verdict::Retry { after, .. } => assert_eq!(after, Some(Duration::from_secs(3))),
            Verdict::Stop(f) => panic!("stopped with {f:?}"),
        }
    }
}
