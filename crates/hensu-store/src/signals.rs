//! Signals sent to runs (docs/language.md, *Timers and signals*): the rule of a send and the
//! rows each dialect reads and writes for it (`sqlite/signals.rs`, `postgres/signals.rs`).
//!
//! A signal is stored with the run whatever the run is doing (numbered per run from 0, in
//! the order they were sent), and taken by the run's `awaitSignal` node for its name: the
//! oldest one not taken yet, so a signal sent before the run waits for it is delivered when
//! it does. Which signals a run has taken is part of its state (a resumed run never takes one
//! twice). A send to a paused run waiting for that name wakes it: its wake time becomes now,
//! so the next claim (a worker, a server) continues it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::backend::Backend;
use crate::{Result, RunStatus, StoreError};

/// A signal as stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredSignal {
    /// Its number among the run's signals (0, 1, … in the order they were sent).
    pub seq: u64,
    pub name: String,
    pub payload: Value,
    /// Unix milliseconds.
    pub sent_at: u64,
}

/// What a send did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignalReceipt {
    pub seq: u64,
    /// The run was paused waiting for this signal: it is now due for a claim.
    pub woke: bool,
}

/// A stored signal's row, payload still encoded.
pub(crate) struct SignalRow {
    pub seq: u64,
    pub name: String,
    pub payload: Vec<u8>,
    pub sent_at: u64,
}

/// The rows of signals, one transaction of a dialect (beside [`Backend`]).
pub(crate) trait SignalRows: Backend {
    /// Stores a signal as the run's next (its `seq` is returned).
    async fn insert_signal(
        &mut self,
        run_id: &str,
        name: &str,
        payload: &[u8],
        now: u64,
    ) -> Result<u64>;

    /// The run's signals, oldest first.
    async fn signal_rows(&mut self, run_id: &str) -> Result<Vec<SignalRow>>;

    /// Makes a paused run's wake time `now` (a claim takes it next).
    async fn wake_now(&mut self, run_id: &str, now: u64) -> Result<()>;
}

/// Stores a signal for a run that has not finished; wakes it when it waits for this name.
pub(crate) async fn send_signal<B: SignalRows>(
    b: &mut B,
    run_id: &str,
    name: &str,
    payload: &Value,
    now: u64,
) -> Result<SignalReceipt> {
    let (record, _) = b.run(run_id, true).await?;
    if record.status.is_terminal() {
        return Err(StoreError::Finished {
            run_id: run_id.to_string(),
            status: record.status,
        });
    }
    let bytes = serde_json::to_vec(payload).map_err(|e| {
        StoreError::Invalid(format!("the signal's payload does not serialize: {e}"))
    })?;
    let seq = b.insert_signal(run_id, name, &bytes, now).await?;
    let woke = record.status == RunStatus::Paused
        && record
            .wait
            .as_ref()
            .is_some_and(|w| w.signals().any(|s| s == name));
    if woke {
        b.wake_now(run_id, now).await?;
    }
    Ok(SignalReceipt { seq, woke })
}

/// The run's signals, oldest first ([`crate::StoreError::NotFound`] without the run).
pub(crate) async fn signals<B: SignalRows>(b: &mut B, run_id: &str) -> Result<Vec<StoredSignal>> {
    b.run(run_id, false).await?;
    let path = b.location().to_path_buf();
    b.signal_rows(run_id)
        .await?
        .into_iter()
        .map(|r| {
            let payload = serde_json::from_slice(&r.payload).map_err(|e| {
                crate::backend::corrupt(&path, format!("signal {} of `{run_id}`: {e}", r.seq))
            })?;
            Ok(StoredSignal {
                seq: r.seq,
                name: r.name,
                payload,
                sent_at: r.sent_at,
            })
        })
        .collect()
}
