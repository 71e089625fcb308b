//! A durable run's waits (docs/language.md, *Timers and signals*): [`DurableRun`] is the
//! [`Waiter`] of its `wait` and `awaitSignal` nodes. A signal comes from the store (the oldest
//! of the node's name the run has not taken); a wake time that has passed ends the wait;
//! otherwise the run suspends — [`final_update`](crate::durable::final_update) writes the wait
//! on its paused record, no process holds it, and a claim (a worker, a server) takes it once
//! the wake time passes or its signal is sent. A run continued by hand (`hensuc resume`) may
//! instead wait for a recorded wake time in place ([`DurableRun::with_waiting_in_place`]).

use std::sync::atomic::Ordering;
use std::time::Duration;

use async_trait::async_trait;
use hensu_runtime::{RuntimeError, WaitAnswer, WaitRequest, Waiter};

use crate::durable::DurableRun;

#[async_trait]
impl Waiter for DurableRun {
    fn now_ms(&self) -> u64 {
        hensu_store::now_ms()
    }

    async fn wait(&self, request: WaitRequest<'_>) -> Result<WaitAnswer, RuntimeError> {
        if let Some(name) = request.signal {
            let signals =
                self.store()
                    .signals(self.run_id())
                    .await
                    .map_err(|e| RuntimeError::Store {
                        message: e.to_string(),
                    })?;
            let seen = signals.last().map_or(0, |s| s.seq + 1);
            self.waits.signals_seen.fetch_min(seen, Ordering::SeqCst);
            // The oldest of its name not taken, unless it came after the timeout.
            let next = signals.into_iter().find(|s| {
                s.name == name
                    && !request.taken.contains(&s.seq)
                    && request.wake_at_ms.is_none_or(|w| s.sent_at <= w)
            });
            if let Some(s) = next {
                return Ok(WaitAnswer::Signal {
                    seq: s.seq,
                    payload: s.payload,
                });
            }
        }
        let Some(wake) = request.wake_at_ms else {
            return Ok(WaitAnswer::Suspend);
        };
        let left = wake.saturating_sub(self.now_ms());
        if left == 0 {
            return Ok(WaitAnswer::Elapsed);
        }
        // In place: a map item's child (it cannot be suspended alone), or the main flow's
        // timer whose wake time is recorded when its run is continued by hand. A fork branch or
        // a sub-workflow child suspends (again): the run pauses once every branch has stopped,
        // so a review answered by hand in one branch never holds the run for another's timer.
        let in_place = !request.may_suspend
            || (request.resumed
                && request.signal.is_none()
                && !request.nested
                && self.waits.in_place.load(Ordering::SeqCst));
        if in_place {
            tokio::time::sleep(Duration::from_millis(left)).await;
            return Ok(WaitAnswer::Elapsed);
        }
        Ok(WaitAnswer::Suspend)
    }
}
