//! Durations as Go and kubectl write them: `500ms`, `30s`, `1m30s`, `2h`, `1.5h`, `300us`.
//!
//! Input: a string from the command line (every duration flag takes [`parse`] as its clap
//! `value_parser`) or a configuration file (`leaderElection.leaseDuration`). Output: a
//! [`std::time::Duration`], or an error saying what is wrong with the text.
//!
//! Upstream: Go's `time.ParseDuration` (`src/time/format.go`), which kube-scheduler's
//! configuration (`metav1.Duration`) and kubectl's `--timeout` use. The syntax is the same: one
//! or more decimal numbers (a fraction allowed), each followed by a unit `ns`, `us` (`µs`,
//! `μs`), `ms`, `s`, `m` or `h`; an optional leading `+`; `0` alone is zero. As in Go, a number
//! without a unit (`30`) is rejected, except `0`: the error suggests the unit. Unlike Go, a
//! negative duration (`-1s`) is rejected, since every kplace duration is a wait or a limit;
//! `-0` is zero, as in Go.

use std::time::Duration;

use thiserror::Error;

/// Why a text is not a duration.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DurationError {
    /// Nothing, or only a sign.
    #[error("invalid duration {0:?}: empty (write e.g. 500ms, 30s, 1m30s, 2h)")]
    Empty(String),
    /// A number without a unit (other than `0`).
    #[error("missing unit in duration {text:?} (write e.g. {suggestion})")]
    MissingUnit {
        /// The whole text.
        text: String,
        /// The text with a unit: `30s` for `30`.
        suggestion: String,
    },
    /// A unit Go does not know (`d`, `sec`).
    #[error("unknown unit {unit:?} in duration {text:?} (units: ns, us, ms, s, m, h)")]
    UnknownUnit {
        /// The whole text.
        text: String,
        /// The unit.
        unit: String,
    },
    /// Something other than digits, a dot and units (`1m 30s`, `.s`).
    #[error("invalid duration {0:?} (write e.g. 500ms, 30s, 1m30s, 2h)")]
    Invalid(String),
    /// A negative duration.
    #[error("invalid duration {0:?}: must not be negative")]
    Negative(String),
    /// More than Go's limit, 2^63 - 1 nanoseconds (about 292 years).
    #[error("invalid duration {0:?}: too large")]
    Overflow(String),
}

/// Nanoseconds per unit, as Go's `unitMap`.
fn unit_nanos(unit: &str) -> Option<u64> {
    Some(match unit {
        "ns" => 1,
        "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    })
}

/// Go's limit: `time.Duration` is an `int64` of nanoseconds.
const MAX_NANOS: u64 = i64::MAX as u64;

/// Parses a duration (see the module doc). Usable directly as a clap `value_parser`.
pub fn parse(text: &str) -> Result<Duration, DurationError> {
    let (negative, mut s) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    if s.is_empty() {
        return Err(DurationError::Empty(text.to_string()));
    }
    let invalid = || DurationError::Invalid(text.to_string());
    let overflow = || DurationError::Overflow(text.to_string());
    let mut total: u64 = 0;
    while !s.is_empty() {
        if !s.starts_with(|c: char| c == '.' || c.is_ascii_digit()) {
            return Err(invalid());
        }
        // The integer part.
        let int_len = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let mut value: u64 = 0;
        for d in s[..int_len].bytes() {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(d - b'0')))
                .filter(|v| *v <= MAX_NANOS)
                .ok_or_else(overflow)?;
        }
        let had_int = int_len > 0;
        s = &s[int_len..];
        // The fraction: digits past what 63 bits hold are ignored, as in Go.
        let (mut fraction, mut scale, mut had_fraction) = (0u64, 1f64, false);
        if let Some(rest) = s.strip_prefix('.') {
            let frac_len = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            let mut full = false;
            for d in rest[..frac_len].bytes() {
                if full {
                    continue;
                }
                match fraction.checked_mul(10).and_then(|v| v.checked_add(u64::from(d - b'0'))) {
                    Some(v) if v <= MAX_NANOS => {
                        fraction = v;
                        scale *= 10.0;
                    }
                    _ => full = true,
                }
            }
            had_fraction = frac_len > 0;
            s = &rest[frac_len..];
        }
        if !had_int && !had_fraction {
            return Err(invalid());
        }
        // The unit: everything up to the next number.
        let unit_len = s.find(|c: char| c == '.' || c.is_ascii_digit()).unwrap_or(s.len());
        let unit = &s[..unit_len];
        if unit.is_empty() {
            return Err(DurationError::MissingUnit {
                text: text.to_string(),
                suggestion: if total == 0 && s.is_empty() && !negative {
                    format!("{text}s")
                } else {
                    "500ms, 30s, 1m30s, 2h".to_string()
                },
            });
        }
        let per_unit = unit_nanos(unit).ok_or_else(|| DurationError::UnknownUnit {
            text: text.to_string(),
            unit: unit.to_string(),
        })?;
        s = &s[unit_len..];
        let mut nanos =
            value.checked_mul(per_unit).filter(|v| *v <= MAX_NANOS).ok_or_else(overflow)?;
        if fraction > 0 {
            // Go: v += int64(float64(f) * (float64(unit) / scale)).
            let extra = (fraction as f64 * (per_unit as f64 / scale)) as u64;
            nanos = nanos.checked_add(extra).filter(|v| *v <= MAX_NANOS).ok_or_else(overflow)?;
        }
        total = total.checked_add(nanos).filter(|v| *v <= MAX_NANOS).ok_or_else(overflow)?;
    }
    if negative && total > 0 {
        return Err(DurationError::Negative(text.to_string()));
    }
    Ok(Duration::from_nanos(total))
}

/// Writes `d` as Go's `Duration.String` would for whole milliseconds and up (`1m30s`,
/// `500ms`, `2h0m0s`), for defaults shown in help and documents.
pub fn format(d: Duration) -> String {
    let total_ms = d.as_millis();
    if total_ms == 0 && d.subsec_nanos() > 0 {
        return format!("{}ns", d.as_nanos());
    }
    if total_ms == 0 {
        return "0s".to_string();
    }
    if total_ms < 1000 {
        return format!("{total_ms}ms");
    }
    let (h, rest) = (total_ms / 3_600_000, total_ms % 3_600_000);
    let (m, rest) = (rest / 60_000, rest % 60_000);
    let seconds = if rest % 1000 == 0 {
        format!("{}s", rest / 1000)
    } else {
        format!("{}s", rest as f64 / 1000.0)
    };
    match (h, m) {
        (0, 0) => seconds,
        (0, m) => format!("{m}m{seconds}"),
        (h, m) => format!("{h}h{m}m{seconds}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NS: u64 = 1;
    const US: u64 = 1_000;
    const MS: u64 = 1_000_000;
    const S: u64 = 1_000_000_000;
    const M: u64 = 60 * S;
    const H: u64 = 60 * M;

    #[test]
    fn go_durations_parse_as_time_parse_duration_does() {
        // The accepted cases of Go's own table (src/time/time_test.go, parseDurationTests),
        // less the negative ones.
        let cases: &[(&str, &str, u64)] = &[
            ("a bare zero", "0", 0),
            ("whole seconds", "5s", 5 * S),
            ("thirty seconds", "30s", 30 * S),
            ("a large number of seconds", "1478s", 1478 * S),
            ("a plus sign", "+5s", 5 * S),
            ("a signed zero", "-0", 0),
            ("a plus zero", "+0", 0),
            ("a decimal", "5.0s", 5 * S),
            ("a half", "5.6s", 5 * S + 600 * MS),
            ("a trailing dot", "5.s", 5 * S),
            ("a leading dot", ".5s", 500 * MS),
            ("one point zero", "1.0s", S),
            ("many zeros", "1.00s", S),
            ("a long fraction", "1.004s", S + 4 * MS),
            ("a fraction of seconds", "1.0040s", S + 4 * MS),
            ("a fraction above ten", "100.00100s", 100 * S + MS),
            ("nanoseconds", "10ns", 10 * NS),
            ("microseconds", "11us", 11 * US),
            ("microseconds with the micro sign", "12\u{b5}s", 12 * US),
            ("microseconds with the Greek mu", "12\u{3bc}s", 12 * US),
            ("milliseconds", "13ms", 13 * MS),
            ("fractional seconds", "14s", 14 * S),
            ("minutes", "15m", 15 * M),
            ("hours", "16h", 16 * H),
            ("hours and minutes", "3h30m", 3 * H + 30 * M),
            ("minutes and seconds", "1m30s", 90 * S),
            ("several units", "10.5s4m", 4 * M + 10 * S + 500 * MS),
            ("every unit", "2m3.4s", 2 * M + 3 * S + 400 * MS),
            ("all units together", "1h2m3s4ms5us6ns", H + 2 * M + 3 * S + 4 * MS + 5 * US + 6 * NS),
            ("all units with fractions", "39h9m14.425s", 39 * H + 9 * M + 14 * S + 425 * MS),
            ("a fraction of nanoseconds is dropped", "52763797000ns", 52_763_797_000 * NS),
            ("a fraction of an hour", "0.3333333333333333333h", 20 * M),
            ("the largest", "9223372036854775807ns", (1 << 63) - 1),
            ("the largest in microseconds", "9223372036854775.807us", (1 << 63) - 1),
            ("a huge fraction is cut", "9223372036.854775807s", (1 << 63) - 1),
            ("a tiny fraction rounds down", "0.100000000000000000000h", 6 * M),
            ("half a millisecond", "0.5ms", 500 * US),
            ("two hours", "2h", 2 * H),
            ("five hundred milliseconds", "500ms", 500 * MS),
        ];
        for (name, text, nanos) in cases {
            assert_eq!(parse(text), Ok(Duration::from_nanos(*nanos)), "{name}: {text:?}");
        }
    }

    #[test]
    fn what_go_rejects_is_rejected_with_the_reason() {
        let missing = |t: &str, s: &str| DurationError::MissingUnit {
            text: t.to_string(),
            suggestion: s.to_string(),
        };
        let examples = "500ms, 30s, 1m30s, 2h";
        let cases: Vec<(&str, &str, DurationError)> = vec![
            ("nothing", "", DurationError::Empty(String::new())),
            ("a sign alone", "-", DurationError::Empty("-".into())),
            ("a bare number", "30", missing("30", "30s")),
            ("a bare fraction", "1.5", missing("1.5", "1.5s")),
            ("a number after a unit", "1m30", missing("1m30", examples)),
            ("a negative bare number", "-3", missing("-3", examples)),
            ("a dot alone", ".", DurationError::Invalid(".".into())),
            ("a dot and a unit", ".s", DurationError::Invalid(".s".into())),
            ("a sign and a dot", "-.", DurationError::Invalid("-.".into())),
            ("letters only", "s", DurationError::Invalid("s".into())),
            (
                "a space between parts, a unit to Go",
                "1m 30s",
                DurationError::UnknownUnit { text: "1m 30s".into(), unit: "m ".into() },
            ),
            ("a leading space", " 30s", DurationError::Invalid(" 30s".into())),
            ("days", "3d", DurationError::UnknownUnit { text: "3d".into(), unit: "d".into() }),
            (
                "a spelled-out unit",
                "10sec",
                DurationError::UnknownUnit { text: "10sec".into(), unit: "sec".into() },
            ),
            ("a negative duration", "-1s", DurationError::Negative("-1s".into())),
            (
                "one nanosecond past the largest",
                "9223372036854775808ns",
                DurationError::Overflow("9223372036854775808ns".into()),
            ),
            (
                "a number of hours too large",
                "9223372036854775807h",
                DurationError::Overflow("9223372036854775807h".into()),
            ),
            ("a sum too large", "2562047h48m", DurationError::Overflow("2562047h48m".into())),
        ];
        for (name, text, want) in cases {
            assert_eq!(parse(text), Err(want), "{name}: {text:?}");
        }
    }

    #[test]
    fn a_bare_number_error_suggests_the_unit() {
        let e = parse("600").unwrap_err().to_string();
        assert_eq!(e, "missing unit in duration \"600\" (write e.g. 600s)");
    }

    #[test]
    fn format_writes_what_parse_reads() {
        let cases = [
            ("zero", Duration::ZERO, "0s"),
            ("milliseconds", Duration::from_millis(500), "500ms"),
            ("seconds", Duration::from_secs(30), "30s"),
            ("a fraction of a second", Duration::from_millis(1500), "1.5s"),
            ("minutes", Duration::from_secs(600), "10m0s"),
            ("minutes and seconds", Duration::from_secs(90), "1m30s"),
            ("hours", Duration::from_secs(7200), "2h0m0s"),
        ];
        for (name, d, text) in cases {
            assert_eq!(format(d), text, "{name}");
            assert_eq!(parse(text), Ok(d), "{name}: round trip");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_whole_millisecond_duration_round_trips(ms in 0u64..10_000_000_000) {
            let d = Duration::from_millis(ms);
            proptest::prop_assert_eq!(parse(&format(d)), Ok(d));
        }
    }
}
