//! A background task that keeps a lease alive.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::{Lease, Result, StateStore, StoreError};

/// Renews a lease every `every` (pick a third of the TTL) until stopped or dropped, as a
/// task on the caller's tokio runtime. Calls `on_cancel` once when the store reports a
/// cancellation request. Stops by itself when a renewal fails (e.g.
/// [`StoreError::LeaseLost`]); [`Heartbeat::stop`] returns that error.
pub struct Heartbeat {
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<()>>>,
}

impl Heartbeat {
    /// Starts the task; [`StoreError::Invalid`] outside a tokio runtime.
    pub fn spawn(
        store: Arc<dyn StateStore>,
        lease: Lease,
        every: Duration,
        on_cancel: Box<dyn Fn() + Send>,
    ) -> Result<Heartbeat> {
        let rt = tokio::runtime::Handle::try_current()
            .map_err(|e| StoreError::Invalid(format!("a heartbeat needs a tokio runtime: {e}")))?;
        let (tx, mut rx) = oneshot::channel::<()>();
        let task = rt.spawn(async move {
            let mut cancelled = false;
            loop {
                tokio::select! {
                    _ = &mut rx => return Ok(()),
                    () = tokio::time::sleep(every) => {
                        let renewed = store.heartbeat(&lease).await?;
                        if renewed.cancel_requested && !cancelled {
                            cancelled = true;
                            on_cancel();
                        }
                    }
                }
            }
        });
        Ok(Heartbeat {
            stop: Some(tx),
            task: Some(task),
        })
    }

    /// Stops the task; returns the error that stopped it early, if any.
    pub async fn stop(mut self) -> Result<()> {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        match self.task.take() {
            Some(task) => task
                .await
                .unwrap_or_else(|_| Err(StoreError::Invalid("heartbeat task panicked".into()))),
            None => Ok(()),
        }
    }
}

impl Drop for Heartbeat {
    /// A heartbeat dropped unstopped ends its task at its next wake-up (the stop channel
    /// closes); nothing waits for it.
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}
