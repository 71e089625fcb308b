//! Durable waits (docs/language.md, *Timers and signals*): what a `wait` or `awaitSignal` node
//! asks of its run's [`Waiter`], and two waiters that need no store: [`SleepingWaiter`] (the
//! default: sleeps on tokio's clock, never receives a signal) and [`VirtualClock`] (`hensuc
//! test`: time moves only when a wait asks it to, signals are scheduled by the test).
//! hensu-host's durable waiter suspends the run in its store instead of sleeping.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use serde_json::Value;

use crate::error::RuntimeError;

/// One wait of a node.
#[derive(Clone, Copy, Debug)]
pub struct WaitRequest<'a> {
    /// The run's execution id.
    pub run_id: &'a str,
    pub node_id: &'a str,
    /// When the wait ends without a signal (unix milliseconds): a timer's wake time, a signal
    /// wait's timeout; `None` for a signal wait without a timeout.
    pub wake_at_ms: Option<u64>,
    /// The signal the node waits for (`None` for a timer).
    pub signal: Option<&'a str>,
    /// The sequence numbers of the signals this run has taken already: never delivered again.
    pub taken: &'a [u64],
    /// The run may be suspended here: every flow but a map item's child, which waits in
    /// place (docs/language.md, *Map over a list*).
    pub may_suspend: bool,
    /// The wait is in a nested flow (a sub-workflow child, a fork branch), not the main flow.
    pub nested: bool,
    /// The wake time was fixed by an earlier visit (the run was suspended here and
    /// continues): a durable run has it recorded, so waiting for it in place is safe.
    pub resumed: bool,
}

/// How a wait ended.
#[derive(Clone, Debug, PartialEq)]
pub enum WaitAnswer {
    /// The wake time passed (a timer's end, a signal wait's timeout).
    Elapsed,
    /// The signal came: its sequence number among the run's signals and its payload.
    Signal { seq: u64, payload: Value },
    /// Not yet: the run stops here durably and continues when the wake time passes or the
    /// signal comes.
    Suspend,
}

/// Decides the waits of a run: the clock it reads and where signals come from.
#[async_trait]
pub trait Waiter: Send + Sync {
    /// Now, in unix milliseconds.
    fn now_ms(&self) -> u64;

    /// The instant a wait at `node_id` starts from, the first time the run reaches it (a
    /// duration counts from it): now, except for a replay, whose waiter answers the time the
    /// recorded run arrived (docs/cli.md, *Replay*).
    fn arrival_ms(&self, _node_id: &str) -> u64 {
        self.now_ms()
    }

    async fn wait(&self, request: WaitRequest<'_>) -> Result<WaitAnswer, RuntimeError>;
}

fn system_now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// The default waiter of a run without a store: a timer sleeps on tokio's clock (so tests
/// with a paused clock do not wait), a signal never comes (a signal wait with a timeout takes
/// its timeout; without one the run suspends, paused).
#[derive(Clone, Copy, Debug, Default)]
pub struct SleepingWaiter;

#[async_trait]
impl Waiter for SleepingWaiter {
    fn now_ms(&self) -> u64 {
        system_now_ms()
    }

    async fn wait(&self, request: WaitRequest<'_>) -> Result<WaitAnswer, RuntimeError> {
        let Some(wake) = request.wake_at_ms else {
            return Ok(WaitAnswer::Suspend);
        };
        let left = wake.saturating_sub(self.now_ms());
        if left > 0 {
            tokio::time::sleep(Duration::from_millis(left)).await;
        }
        Ok(WaitAnswer::Elapsed)
    }
}

/// A signal a [`VirtualClock`] delivers: `name` with `payload`, sent `at_ms` after the clock's
/// start.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduledSignal {
    pub name: String,
    pub at_ms: u64,
    pub payload: Value,
}

/// Virtual time for tests (`hensuc test`): the clock starts at a fixed instant and moves only
/// when a wait moves it — to its wake time, or to the time of the signal that ends it. Nothing
/// sleeps. A signal is delivered to the first wait for its name that is still waiting when it
/// is sent (a signal sent before the wait began is stored and delivered then, as in a durable
/// run); its sequence number is its position in the schedule.
///
/// Waits of concurrent flows (fork branches, and the children inside them) end in time order:
/// a wait ends only when it is the earliest of the waits pending and the other flows have had
/// their turn since the last wait began or ended (every flow that can go on without the clock
/// has reached a wait or its end), so a branch's wait starts at the instant the branch reaches
/// it, not at the time another branch's wait moved the clock to.
#[derive(Debug)]
pub struct VirtualClock {
    start_ms: u64,
    now: AtomicU64,
    signals: Mutex<Vec<ScheduledSignal>>,
    /// The waits pending, as `(ends at, id)`.
    pending: Mutex<Vec<(u64, u64)>>,
    /// Moves whenever a wait begins or ends.
    epoch: AtomicU64,
    next_id: AtomicU64,
}

/// Removes a pending wait of a [`VirtualClock`] when it ends or is abandoned.
struct PendingWait<'c> {
    clock: &'c VirtualClock,
    key: (u64, u64),
}

impl Drop for PendingWait<'_> {
    fn drop(&mut self) {
        if let Ok(mut p) = self.clock.pending.lock() {
            p.retain(|k| *k != self.key);
        }
        self.clock.epoch.fetch_add(1, Ordering::SeqCst);
    }
}

impl VirtualClock {
    /// A clock at `start_ms` (unix milliseconds) with `signals` scheduled.
    pub fn new(start_ms: u64, signals: Vec<ScheduledSignal>) -> Self {
        VirtualClock {
            start_ms,
            now: AtomicU64::new(start_ms),
            signals: Mutex::new(signals),
            pending: Mutex::new(Vec::new()),
            epoch: AtomicU64::new(0),
            next_id: AtomicU64::new(0),
        }
    }

    /// Waits until the wait ending `at` is the earliest pending one and the other flows had
    /// their turn since the last change, then moves the clock to `at`.
    async fn in_turn(&self, at: u64) {
        let key = (at, self.next_id.fetch_add(1, Ordering::SeqCst));
        if let Ok(mut p) = self.pending.lock() {
            p.push(key);
        }
        let guard = PendingWait { clock: self, key };
        let mut seen = self.epoch.fetch_add(1, Ordering::SeqCst) + 1;
        loop {
            tokio::task::yield_now().await;
            let epoch = self.epoch.load(Ordering::SeqCst);
            if epoch != seen {
                seen = epoch;
                continue;
            }
            let earliest = self
                .pending
                .lock()
                .map(|p| p.iter().min() == Some(&key))
                .unwrap_or(true);
            if earliest {
                break;
            }
        }
        self.advance_to(at);
        drop(guard);
    }

    /// How far the clock moved since its start.
    pub fn elapsed_ms(&self) -> u64 {
        self.now_ms().saturating_sub(self.start_ms)
    }

    fn advance_to(&self, at: u64) {
        self.now.fetch_max(at, Ordering::SeqCst);
    }
}

#[async_trait]
impl Waiter for VirtualClock {
    fn now_ms(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }

    async fn wait(&self, request: WaitRequest<'_>) -> Result<WaitAnswer, RuntimeError> {
        if let Some(name) = request.signal {
            let next = {
                let signals = self.signals.lock().map_err(|_| RuntimeError::Store {
                    message: "the virtual clock's signals are poisoned".into(),
                })?;
                signals
                    .iter()
                    .enumerate()
                    .filter(|(i, s)| s.name == name && !request.taken.contains(&(*i as u64)))
                    .map(|(i, s)| (i as u64, self.start_ms.saturating_add(s.at_ms), s))
                    .filter(|(_, at, _)| request.wake_at_ms.is_none_or(|w| *at <= w))
                    .min_by_key(|(i, at, _)| (*at, *i))
                    .map(|(i, at, s)| (i, at, s.payload.clone()))
            };
            if let Some((seq, at, payload)) = next {
                self.in_turn(at).await;
                return Ok(WaitAnswer::Signal { seq, payload });
            }
        }
        match request.wake_at_ms {
            Some(wake) => {
                self.in_turn(wake).await;
                Ok(WaitAnswer::Elapsed)
            }
            None => Ok(WaitAnswer::Suspend),
        }
    }
}
