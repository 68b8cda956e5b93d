//! Settings of `kplace schedule` that come from the KubeSchedulerConfiguration file but do not
//! affect placement, so the placement config parser ([`crate::framework::config`]) does not
//! keep them: `leaderElection` and the queue's `podInitialBackoffSeconds` /
//! `podMaxBackoffSeconds` (durations in Go's syntax, read by [`crate::duration`]).
//!
//! Upstream (v1.35): `pkg/scheduler/apis/config/v1/defaults.go` (`SetDefaults_KubeSchedulerConfiguration`:
//! leader election on, lock `leases`, 15 s / 10 s / 2 s, backoff 1 s and 10 s).

use std::time::Duration;

use serde_json::Value;

/// The non-placement settings read from a configuration file; `None` where the file says
/// nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileSettings {
    /// `leaderElection.leaderElect`.
    pub leader_elect: Option<bool>,
    /// `leaderElection.leaseDuration`.
    pub lease_duration: Option<Duration>,
    /// `leaderElection.renewDeadline`.
    pub renew_deadline: Option<Duration>,
    /// `leaderElection.retryPeriod`.
    pub retry_period: Option<Duration>,
    /// `leaderElection.resourceName`.
    pub lease_name: Option<String>,
    /// `leaderElection.resourceNamespace`.
    pub lease_namespace: Option<String>,
    /// `podInitialBackoffSeconds`.
    pub pod_initial_backoff: Option<Duration>,
    /// `podMaxBackoffSeconds`.
    pub pod_max_backoff: Option<Duration>,
}

/// Reads [`FileSettings`] from the configuration text (YAML or JSON).
pub fn read_file_settings(text: &str) -> Result<FileSettings, String> {
    let doc: Value = serde_saphyr::from_str(text)
        .or_else(|e| serde_json::from_str(text).map_err(|_| e.to_string()))?;
    let le = &doc["leaderElection"];
    let duration = |field: &str| -> Result<Option<Duration>, String> {
        match &le[field] {
            Value::Null => Ok(None),
            Value::String(s) => crate::duration::parse(s)
                .map(Some)
                .map_err(|e| format!("leaderElection.{field}: {e}")),
            other => Err(format!("leaderElection.{field}: expected a duration, got {other}")),
        }
    };
    let string = |field: &str| le[field].as_str().filter(|s| !s.is_empty()).map(str::to_string);
    let seconds = |field: &str| -> Result<Option<Duration>, String> {
        match &doc[field] {
            Value::Null => Ok(None),
            v => v
                .as_u64()
                .map(|n| Some(Duration::from_secs(n)))
                .ok_or_else(|| format!("{field}: expected a whole number of seconds, got {v}")),
        }
    };
    Ok(FileSettings {
        leader_elect: le["leaderElect"].as_bool(),
        lease_duration: duration("leaseDuration")?,
        renew_deadline: duration("renewDeadline")?,
        retry_period: duration("retryPeriod")?,
        lease_name: string("resourceName"),
        lease_namespace: string("resourceNamespace"),
        pod_initial_backoff: seconds("podInitialBackoffSeconds")?,
        pod_max_backoff: seconds("podMaxBackoffSeconds")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leader_election_and_backoff_settings_are_read_from_the_file() {
        let text = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n\
                    podInitialBackoffSeconds: 2\nleaderElection:\n  leaderElect: true\n  \
                    leaseDuration: 30s\n  resourceName: kplace\n  resourceNamespace: kube-system\n";
        let s = read_file_settings(text).unwrap();
        assert_eq!(s.leader_elect, Some(true));
        assert_eq!(s.lease_duration, Some(Duration::from_secs(30)));
        assert_eq!(s.renew_deadline, None);
        assert_eq!(s.lease_name.as_deref(), Some("kplace"));
        assert_eq!(s.lease_namespace.as_deref(), Some("kube-system"));
        assert_eq!(s.pod_initial_backoff, Some(Duration::from_secs(2)));
        assert_eq!(s.pod_max_backoff, None);

        let bad = read_file_settings("leaderElection:\n  retryPeriod: soon\n").unwrap_err();
        assert!(bad.contains("leaderElection.retryPeriod"), "{bad}");
    }
}
