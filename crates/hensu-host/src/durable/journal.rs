//! The call journal of a durable run (docs/security.md, *Call journal*): each entry is a
//! `journal` row of the run's log ([`StateStore::append_journal`]), written under the run's
//! lease at the next step, redacted like the run's snapshots. A node that runs again (a
//! resume, a takeover) reads the entries of its visit back: the log's `journal` rows from the
//! newest backwards, as long as they belong to the visit in flight or a later one — its own
//! rows only: a fork's first node runs afresh, without its parent's journal.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use hensu_runtime::journal::{CallJournal, JournalEntry};
use hensu_store::{LogKind, RecordUpdate, StateStore, StepEntry, StepSnapshot, StoreError};

use super::DurableRun;

/// The entries of an earlier run, by visit.
pub(super) type Replay = HashMap<String, Vec<JournalEntry>>;

/// A [`DurableRun`] as the engine's [`CallJournal`].
struct RunJournal(Arc<DurableRun>);

impl DurableRun {
    /// This run's call journal, for [`hensu_runtime::RunCtx::journal`].
    pub fn journal(self: &Arc<Self>) -> Arc<dyn CallJournal> {
        Arc::new(RunJournal(self.clone()))
    }

    /// Writes one journal entry as the run's next step.
    async fn write_journal(&self, entry: &JournalEntry) -> Result<(), StoreError> {
        self.ensure_held()?;
        let t = std::time::Instant::now();
        let mut output = serde_json::to_value(entry)
            .map_err(|e| StoreError::Invalid(format!("a journal entry does not serialize: {e}")))?;
        if let Some(r) = &self.redact {
            r(&mut output);
        }
        let node = self
            .shadow
            .lock()
            .ok()
            .and_then(|s| {
                s.as_ref()
                    .and_then(|s| s.current_node().map(str::to_string))
            })
            .or_else(|| entry.node.clone())
            .unwrap_or_default();
        // Not an execution: the row's executed node stays empty (the entry names its node).
        let row = StepEntry {
            node: None,
            node_status: None,
            output: Some(output),
            delta: Default::default(),
            started_at: None,
            duration_ms: entry.duration_ms,
            snapshot: StepSnapshot::OnRequest,
        };
        let update = RecordUpdate::running(node);
        let _one_at_a_time = self.order.lock().await;
        if let Some(p) = &self.pipeline {
            // A model call's result only is queued; any other call's entry is the durability
            // barrier before its effect (or before its result is used).
            let wait = entry.kind != hensu_runtime::journal::CallKind::Model;
            let row = hensu_store::StepWrite {
                journal: true,
                update,
                entry: row,
            };
            let pending = p.enqueue(super::pipeline::Queued::Row(row), wait).await;
            drop(_one_at_a_time);
            return self.waited(pending).await.map(|_| ());
        }
        let r = self
            .store
            .append_journal(&self.lease, self.step(), &update, &row)
            .await;
        self.written(r, t).map(|_| ())
    }

    /// The entries of `visit` an earlier run of the node wrote (read from the log once, at
    /// the run's first visit).
    async fn recorded_for(&self, visit: &str) -> Vec<JournalEntry> {
        let replay = self
            .replay
            .get_or_init(|| read_replay(self.store.as_ref(), &self.lease.run_id, visit))
            .await;
        replay.get(visit).cloned().unwrap_or_default()
    }
}

/// The leading step number of a visit id (`12`, `12/3`, `12#b`): the main flow's visit.
fn main_visit(visit: &str) -> Option<u64> {
    let end = visit
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(visit.len());
    visit[..end].parse().ok()
}

/// The journal rows of `run_id` that belong to the main-flow visit of `first` or a later
/// one, newest first until an older one, grouped by visit (oldest first). A store error reads
/// as no journal (the calls are then issued as by a run without one).
async fn read_replay(store: &dyn StateStore, run_id: &str, first: &str) -> Replay {
    let mut out: Replay = HashMap::new();
    let Some(from) = main_visit(first) else {
        return out;
    };
    let Ok(history) = store.history(run_id).await else {
        return out;
    };
    // A fork runs its first node afresh: the journal of its parent's prefix is not its own.
    let own_from = match store.record(run_id).await {
        Ok(r) => r.parent.map_or(0, |p| p.step.saturating_add(1)),
        Err(_) => return out,
    };
    let mut entries = Vec::new();
    let own = history
        .iter()
        .rev()
        .filter(|m| m.kind == LogKind::Journal && m.step >= own_from);
    for meta in own {
        let Ok(rows) = store.read_log(run_id, meta.step.saturating_sub(1), 1).await else {
            break;
        };
        let Some(entry) = rows
            .into_iter()
            .find(|r| r.meta.step == meta.step)
            .and_then(|r| r.output)
            .and_then(|o| serde_json::from_value::<JournalEntry>(o).ok())
        else {
            continue;
        };
        if main_visit(&entry.visit).is_none_or(|v| v < from) {
            break;
        }
        entries.push(entry);
    }
    for entry in entries.into_iter().rev() {
        out.entry(entry.visit.clone()).or_default().push(entry);
    }
    out
}

#[async_trait]
impl CallJournal for RunJournal {
    async fn recorded(&self, visit: &str) -> Vec<JournalEntry> {
        self.0.recorded_for(visit).await
    }

    async fn write(&self, entry: &JournalEntry) -> Result<(), String> {
        self.0.write_journal(entry).await.map_err(|e| e.to_string())
    }
}
