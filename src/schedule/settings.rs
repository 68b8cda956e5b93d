//! Settings of `kplace schedule` that come from the KubeSchedulerConfiguration file but do not
//! affect placement, so the placement config parser ([`crate::framework::config`]) does not
//! keep them: `leaderElection` and the queue's `podInitialBackoffSeconds` /
//! `podMaxBackoffSeconds`; and Go-style durations (`500ms`, `15s`, `1m30s`) as the file and the
//! command line write them.
//!
//! Upstream (v1.35): `pkg/scheduler/apis/config/v1/defaults.go` (`SetDefaults_KubeSchedulerConfiguration`:
//! leader election on, lock `leases`, 15 s / 10 s / 2 s, backoff 1 s and 10 s) and Go's
//! `time.ParseDuration`.

use std::time::Duration;

use serde_json::Value;

/// Parses a Go duration: a sequence of decimal numbers with units `ns`, `us` (`µs`), `ms`, `s`,
/// `m`, `h` (`1m30s`, `0.5s`, `500ms`); `0` alone is zero. No sign.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let s = text.trim();
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err("empty duration".to_string());
    }
    let bad = || format!("invalid duration {text:?} (write e.g. 500ms, 15s, 1m30s)");
    let mut rest = s;
    let mut total = 0f64;
    while !rest.is_empty() {
        let num_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        if num_len == 0 {
            return Err(bad());
        }
        let (num, tail) = rest.split_at(num_len);
        let value: f64 = num.parse().map_err(|_| bad())?;
        let unit_len = tail.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit_len);
        let seconds = match unit {
            "ns" => 1e-9,
            "us" | "µs" | "μs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        total += value * seconds;
        rest = tail;
    }
    Duration::try_from_secs_f64(total).map_err(|_| bad())
}

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
            Value::String(s) => {
                parse_duration(s).map(Some).map_err(|e| format!("leaderElection.{field}: {e}"))
            }
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
    fn go_durations_parse_like_time_parse_duration() {
        let ms = Duration::from_millis;
        let cases = [
            ("milliseconds", "500ms", Some(ms(500))),
            ("seconds", "15s", Some(ms(15_000))),
            ("minutes and seconds", "1m30s", Some(ms(90_000))),
            ("a fraction", "0.5s", Some(ms(500))),
            ("hours", "2h", Some(ms(7_200_000))),
            ("a bare zero", "0", Some(Duration::ZERO)),
            ("a number without a unit", "5", None),
            ("an unknown unit", "5d", None),
            ("a sign", "-1s", None),
            ("nothing", "", None),
        ];
        for (name, text, want) in cases {
            assert_eq!(parse_duration(text).ok(), want, "{name}: {text:?}");
        }
    }

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
