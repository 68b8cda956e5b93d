//! A client-side request rate limit: a token bucket like client-go's (`flowcontrol`, QPS and
//! burst), shared by every request the binder sends.
//!
//! Input: the moment a request wants to go out; output: how long it must wait first. Each call
//! reserves a token, so waiting requests queue up in order instead of racing for the next one.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A token bucket: `burst` requests at once, then `qps` per second.
#[derive(Debug)]
pub struct RateLimiter {
    qps: f64,
    burst: f64,
    state: Mutex<Bucket>,
}

#[derive(Debug)]
struct Bucket {
    /// Tokens left; negative when requests are already queued for future tokens.
    tokens: f64,
    /// When `tokens` was last brought up to date.
    at: Option<Instant>,
}

impl RateLimiter {
    /// A limiter of `qps` requests per second with bursts of `burst` (at least 1); `qps <= 0`
    /// (or not finite) means no limit.
    pub fn new(qps: f64, burst: u32) -> Self {
        let burst = f64::from(burst.max(1));
        RateLimiter { qps, burst, state: Mutex::new(Bucket { tokens: burst, at: None }) }
    }

    fn unlimited(&self) -> bool {
        !(self.qps.is_finite() && self.qps > 0.0)
    }

    /// Takes one token at `now` and returns how long the caller must wait before sending.
    pub fn reserve(&self, now: Instant) -> Duration {
        if self.unlimited() {
            return Duration::ZERO;
        }
        let mut b = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let elapsed = b.at.map_or(0.0, |at| now.saturating_duration_since(at).as_secs_f64());
        b.tokens = (b.tokens + elapsed * self.qps).min(self.burst);
        b.at = Some(b.at.map_or(now, |at| at.max(now)));
        b.tokens -= 1.0;
        if b.tokens >= 0.0 { Duration::ZERO } else { Duration::from_secs_f64(-b.tokens / self.qps) }
    }

    /// Waits for a token.
    pub async fn acquire(&self) {
        let wait = self.reserve(Instant::now());
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_goes_out_at_once_and_later_requests_queue_at_the_rate() {
        let limiter = RateLimiter::new(10.0, 2);
        let t0 = Instant::now();
        let waits: Vec<u128> = (0..5).map(|_| limiter.reserve(t0).as_millis()).collect();
        assert_eq!(waits, vec![0, 0, 100, 200, 300]);
    }

    #[test]
    fn tokens_come_back_with_time_up_to_the_burst() {
        let limiter = RateLimiter::new(10.0, 3);
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(limiter.reserve(t0), Duration::ZERO);
        }
        let cases = [
            ("after 100 ms one token is back", 100, 0),
            ("but not a second one", 100, 100),
            ("a long pause refills only the burst", 10_000, 0),
        ];
        let mut extra = Duration::ZERO;
        for (name, after_ms, want_ms) in cases {
            extra = extra.max(Duration::from_millis(after_ms));
            assert_eq!(limiter.reserve(t0 + extra).as_millis(), want_ms, "{name}");
        }
        let t = t0 + Duration::from_secs(10);
        let waits: Vec<u128> = (0..3).map(|_| limiter.reserve(t).as_millis()).collect();
        assert_eq!(waits, vec![0, 0, 100], "two tokens were left after the long pause");
    }

    #[test]
    fn zero_qps_means_no_limit() {
        let limiter = RateLimiter::new(0.0, 1);
        let t0 = Instant::now();
        assert!((0..100).all(|_| limiter.reserve(t0).is_zero()));
    }
}
