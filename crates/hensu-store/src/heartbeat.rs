//! A background thread that keeps a lease alive.

use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::{Lease, Result, StateStore, StoreError};

/// Renews a lease every `every` (pick a third of the TTL) until stopped or dropped. Calls
/// `on_cancel` once when the store reports a cancellation request. Stops by itself when a
/// renewal fails (e.g. [`StoreError::LeaseLost`]); [`Heartbeat::stop`] returns that error.
pub struct Heartbeat {
    stop: Option<mpsc::Sender<()>>,
    handle: Option<JoinHandle<Result<()>>>,
}

impl Heartbeat {
    pub fn spawn(
        store: Arc<dyn StateStore>,
        lease: Lease,
        every: Duration,
        on_cancel: Box<dyn Fn() + Send>,
    ) -> Result<Heartbeat> {
        let (tx, rx) = mpsc::channel::<()>();
        let handle = std::thread::Builder::new()
            .name(format!("hensu-lease-{}", lease.run_id))
            .spawn(move || {
                let mut cancelled = false;
                loop {
                    match rx.recv_timeout(every) {
                        Err(RecvTimeoutError::Timeout) => {
                            let renewed = store.heartbeat(&lease)?;
                            if renewed.cancel_requested && !cancelled {
                                cancelled = true;
                                on_cancel();
                            }
                        }
                        Ok(()) | Err(RecvTimeoutError::Disconnected) => return Ok(()),
                    }
                }
            });
        match handle {
            Ok(h) => Ok(Heartbeat {
                stop: Some(tx),
                handle: Some(h),
            }),
            Err(e) => Err(StoreError::Invalid(format!(
                "cannot spawn the heartbeat thread: {e}"
            ))),
        }
    }

    /// Stops the thread; returns the error that stopped it early, if any.
    pub fn stop(mut self) -> Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<()> {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        match self.handle.take() {
            Some(h) => h
                .join()
                .unwrap_or_else(|_| Err(StoreError::Invalid("heartbeat thread panicked".into()))),
            None => Ok(()),
        }
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}
