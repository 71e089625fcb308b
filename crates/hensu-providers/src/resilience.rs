//! Fault tolerance around [`ChatBackend`]: retries with exponential backoff and jitter
//! (honouring `Retry-After`), a circuit breaker per provider, per-call timeouts and
//! cancellation. Sleeping and the clock are injectable so tests never wait.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hensu_runtime::CancelToken;

use crate::config::{CircuitBreakerConfig, RetryConfig};
use crate::error::{ErrorKind, ProviderError};
use crate::transport::ChatBackend;
use crate::wire::{ChatRequest, ChatResponse};

/// Waits (backoff delays).
pub trait Sleeper: Send + Sync {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Future<Output = ()> + Send>>;
}

/// `tokio::time::sleep` (honours `tokio::time::pause`).
#[derive(Clone, Copy, Debug, Default)]
pub struct TokioSleeper;

impl Sleeper for TokioSleeper {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// Monotonic time for the circuit breaker.
pub trait Clock: Send + Sync {
    fn now(&self) -> Instant;
}

/// The system's monotonic clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// Retry policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    pub max_attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
}

impl From<RetryConfig> for RetryPolicy {
    fn from(c: RetryConfig) -> Self {
        RetryPolicy {
            max_attempts: c.max_attempts.max(1),
            base_delay: Duration::from_millis(c.base_delay_ms),
            max_delay: Duration::from_millis(c.max_delay_ms),
        }
    }
}

impl RetryPolicy {
    /// The backoff before retry number `retry` (1-based): `base · 2^(retry-1)` capped at
    /// `max_delay`, then "equal jitter": half fixed, half scaled by `jitter` ∈ [0, 1).
    pub fn backoff(&self, retry: u32, jitter: f64) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(1u32 << retry.saturating_sub(1).min(20));
        let capped = exp.min(self.max_delay);
        let half = capped / 2;
        half + half.mul_f64(jitter.clamp(0.0, 1.0))
    }
}

/// A random fraction in [0, 1) from the thread-local generator: retries of many clients
/// spread out instead of hammering a recovering server in step.
pub fn jitter_fraction() -> f64 {
    rand::random::<f64>()
}

/// The state of a circuit breaker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakerState {
    Closed,
    Open,
    HalfOpen,
}

#[derive(Debug)]
enum Inner {
    Closed { failures: u32 },
    Open { since: Instant },
    HalfOpen { probing: bool },
}

/// A circuit breaker: closed → open after `failure_threshold` consecutive provider failures →
/// half-open after `cool_down` (one probe request) → closed on success, open on failure.
pub struct CircuitBreaker {
    threshold: u32,
    cool_down: Duration,
    clock: Arc<dyn Clock>,
    inner: Mutex<Inner>,
}

impl fmt::Debug for CircuitBreaker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CircuitBreaker")
            .field("threshold", &self.threshold)
            .field("cool_down", &self.cool_down)
            .field("state", &self.state())
            .finish()
    }
}

/// Permission to send one request.
#[derive(Debug)]
#[must_use]
pub struct Permit {
    probe: bool,
}

impl CircuitBreaker {
    pub fn new(config: CircuitBreakerConfig, clock: Arc<dyn Clock>) -> Self {
        CircuitBreaker {
            threshold: config.failure_threshold,
            cool_down: Duration::from_millis(config.cool_down_ms),
            clock,
            inner: Mutex::new(Inner::Closed { failures: 0 }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The current state (an open breaker whose cool-down passed reports half-open).
    pub fn state(&self) -> BreakerState {
        match &*self.lock() {
            Inner::Closed { .. } => BreakerState::Closed,
            Inner::Open { since } => {
                if self.clock.now().saturating_duration_since(*since) >= self.cool_down {
                    BreakerState::HalfOpen
                } else {
                    BreakerState::Open
                }
            }
            Inner::HalfOpen { .. } => BreakerState::HalfOpen,
        }
    }

    /// A permit, or the time left until the breaker lets a probe through.
    pub fn acquire(&self) -> Result<Permit, Duration> {
        if self.threshold == 0 {
            return Ok(Permit { probe: false });
        }
        let mut inner = self.lock();
        match &*inner {
            Inner::Closed { .. } => Ok(Permit { probe: false }),
            Inner::Open { since } => {
                let elapsed = self.clock.now().saturating_duration_since(*since);
                if elapsed >= self.cool_down {
                    *inner = Inner::HalfOpen { probing: true };
                    Ok(Permit { probe: true })
                } else {
                    Err(self.cool_down - elapsed)
                }
            }
            Inner::HalfOpen { probing: true } => Err(Duration::ZERO),
            Inner::HalfOpen { probing: false } => {
                *inner = Inner::HalfOpen { probing: true };
                Ok(Permit { probe: true })
            }
        }
    }

    /// The provider answered (any answer but 429/5xx counts as healthy).
    pub fn on_success(&self, _permit: Permit) {
        if self.threshold == 0 {
            return;
        }
        *self.lock() = Inner::Closed { failures: 0 };
    }

    /// The request failed in a way that says the provider is unhealthy.
    pub fn on_failure(&self, permit: Permit) {
        if self.threshold == 0 {
            return;
        }
        let mut inner = self.lock();
        let now = self.clock.now();
        *inner = match &*inner {
            _ if permit.probe => Inner::Open { since: now },
            Inner::Closed { failures } if failures + 1 >= self.threshold => {
                Inner::Open { since: now }
            }
            Inner::Closed { failures } => Inner::Closed {
                failures: failures + 1,
            },
            Inner::HalfOpen { .. } | Inner::Open { .. } => Inner::Open { since: now },
        };
    }

    /// The request ended without telling anything about the provider (cancelled).
    pub fn on_abandon(&self, permit: Permit) {
        if permit.probe {
            let mut inner = self.lock();
            if matches!(*inner, Inner::HalfOpen { .. }) {
                *inner = Inner::HalfOpen { probing: false };
            }
        }
    }
}

/// What one resilient request cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AttemptStats {
    /// HTTP attempts made.
    pub attempts: u32,
    /// Retries among them.
    pub retries: u32,
    /// Total time slept in backoff.
    pub backoff: Duration,
}

/// A retry about to happen (for an event or a progress line). The message is redacted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryNotice {
    pub provider: String,
    pub model: String,
    /// The attempt that failed (1-based).
    pub attempt: u32,
    pub delay: Duration,
    /// [`ErrorKind::as_str`] of the failure.
    pub kind: &'static str,
    pub status: Option<u16>,
    pub message: String,
}

/// Receives [`RetryNotice`]s.
pub type RetryObserver = Arc<dyn Fn(&RetryNotice) + Send + Sync>;

/// Retries, circuit breaker and cancellation of one provider.
pub struct Resilience {
    pub policy: RetryPolicy,
    pub breaker: Arc<CircuitBreaker>,
    pub sleeper: Arc<dyn Sleeper>,
    pub cancel: Option<CancelToken>,
    /// Jitter source (tests make it deterministic).
    pub jitter: fn() -> f64,
    /// Told before every backoff wait.
    pub on_retry: Option<RetryObserver>,
}

impl Resilience {
    /// Default policy pieces: tokio sleeping, system jitter, no cancellation, no observer.
    pub fn new(policy: RetryPolicy, breaker: Arc<CircuitBreaker>) -> Self {
        Resilience {
            policy,
            breaker,
            sleeper: Arc::new(TokioSleeper),
            cancel: None,
            jitter: jitter_fraction,
            on_retry: None,
        }
    }
}

impl fmt::Debug for Resilience {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resilience")
            .field("policy", &self.policy)
            .field("breaker", &self.breaker)
            .finish_non_exhaustive()
    }
}

/// Resolves when `token` is cancelled (polled: the runtime's token has no waker).
pub async fn cancelled(token: &CancelToken) {
    while !token.is_cancelled() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Runs `fut` unless `cancel` fires first (then `None`; `fut` is dropped, which aborts it).
pub async fn or_cancel<F: Future>(cancel: Option<&CancelToken>, fut: F) -> Option<F::Output> {
    match cancel {
        None => Some(fut.await),
        Some(token) => {
            if token.is_cancelled() {
                return None;
            }
            tokio::select! {
                r = fut => Some(r),
                () = cancelled(token) => None,
            }
        }
    }
}

fn cancelled_error(provider: &str) -> ProviderError {
    ProviderError::new(
        ErrorKind::Cancelled,
        format!("{provider} request cancelled"),
    )
}

impl Resilience {
    /// Sends `request` with retries. Each attempt is bounded by `timeout`.
    pub async fn call(
        &self,
        backend: &dyn ChatBackend,
        request: &ChatRequest,
        timeout: Duration,
        stats: &mut AttemptStats,
    ) -> Result<ChatResponse, ProviderError> {
        let provider = backend.provider();
        let mut retry = 0u32;
        let mut last_error: Option<ProviderError> = None;
        loop {
            let permit = match self.breaker.acquire() {
                Ok(p) => p,
                Err(left) => {
                    return Err(match last_error {
                        // Opened by this call's own failures: report what failed.
                        Some(mut e) => {
                            e.message = format!(
                                "{} (after {} attempts; the circuit breaker is now open)",
                                e.message, stats.attempts
                            );
                            e
                        }
                        None => ProviderError::new(
                            ErrorKind::CircuitOpen,
                            format!(
                                "{provider} circuit breaker is open after repeated failures; next probe in {} ms",
                                left.as_millis()
                            ),
                        ),
                    });
                }
            };
            stats.attempts += 1;
            let outcome = or_cancel(self.cancel.as_ref(), backend.chat(request, timeout)).await;
            let error = match outcome {
                None => {
                    self.breaker.on_abandon(permit);
                    return Err(cancelled_error(provider));
                }
                Some(Ok(response)) => {
                    self.breaker.on_success(permit);
                    return Ok(response);
                }
                Some(Err(e)) => {
                    if e.kind.is_provider_failure() {
                        self.breaker.on_failure(permit);
                    } else {
                        self.breaker.on_success(permit);
                    }
                    e
                }
            };
            if !error.kind.is_retryable() || retry + 1 >= self.policy.max_attempts {
                return Err(self.final_error(error, stats.attempts));
            }
            if self.breaker.state() == BreakerState::Open {
                let mut e = self.final_error(error, stats.attempts);
                e.message = format!("{} (the circuit breaker is now open)", e.message);
                return Err(e);
            }
            retry += 1;
            let backoff = self.policy.backoff(retry, (self.jitter)());
            let delay = match error.retry_after {
                Some(ra) if ra > self.policy.max_delay => {
                    let mut e = error;
                    e.message = format!(
                        "{} (the provider asked to retry after {} s, more than the configured max_delay_ms {})",
                        e.message,
                        ra.as_secs(),
                        self.policy.max_delay.as_millis()
                    );
                    return Err(e);
                }
                Some(ra) => ra.max(backoff),
                None => backoff,
            };
            stats.retries += 1;
            stats.backoff += delay;
            if let Some(observer) = &self.on_retry {
                observer(&RetryNotice {
                    provider: provider.to_string(),
                    model: request.model.clone(),
                    attempt: stats.attempts,
                    delay,
                    kind: error.kind.as_str(),
                    status: error.status,
                    message: error.message.clone(),
                });
            }
            last_error = Some(error);
            if or_cancel(self.cancel.as_ref(), self.sleeper.sleep(delay))
                .await
                .is_none()
            {
                return Err(cancelled_error(provider));
            }
        }
    }

    fn final_error(&self, mut e: ProviderError, attempts: u32) -> ProviderError {
        if attempts > 1 {
            e.message = format!("{} (after {attempts} attempts)", e.message);
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct ManualClock(Mutex<Duration>, Option<Instant>);

    impl Clock for ManualClock {
        fn now(&self) -> Instant {
            let base = self.1.unwrap_or_else(Instant::now);
            base + *self.0.lock().unwrap_or_else(|p| p.into_inner())
        }
    }

    #[test]
    fn backoff_grows_and_caps() {
        let p = RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
        };
        assert_eq!(p.backoff(1, 0.0), Duration::from_millis(50));
        let d = p.backoff(2, 0.999);
        assert!(
            d > Duration::from_millis(190) && d < Duration::from_millis(200),
            "{d:?}"
        );
        assert_eq!(p.backoff(10, 0.0), Duration::from_millis(500));
        let j = jitter_fraction();
        assert!((0.0..1.0).contains(&j));
    }

    #[test]
    fn breaker_cycle() {
        let clock = Arc::new(ManualClock(
            Mutex::new(Duration::ZERO),
            Some(Instant::now()),
        ));
        let b = CircuitBreaker::new(
            CircuitBreakerConfig {
                failure_threshold: 2,
                cool_down_ms: 1000,
            },
            clock.clone(),
        );
        let p = b.acquire().expect("closed");
        b.on_failure(p);
        assert_eq!(b.state(), BreakerState::Closed);
        let p = b.acquire().expect("closed");
        b.on_failure(p);
        assert_eq!(b.state(), BreakerState::Open);
        assert!(b.acquire().is_err());
        *clock.0.lock().expect("lock") = Duration::from_millis(1000);
        let probe = b.acquire().expect("half-open probe");
        assert!(b.acquire().is_err(), "only one probe");
        b.on_failure(probe);
        assert_eq!(b.state(), BreakerState::Open);
        *clock.0.lock().expect("lock") = Duration::from_millis(2500);
        let probe = b.acquire().expect("probe");
        b.on_success(probe);
        assert_eq!(b.state(), BreakerState::Closed);
    }
}
