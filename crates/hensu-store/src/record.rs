//! The indexed, non-opaque part of a stored run.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::StateDelta;
use crate::time::now_ms;

/// The status of a run, as listed by the CLI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Stored for a worker (`hensuc run --detach`) and not claimed yet.
    Queued,
    Running,
    /// Waiting for an out-of-band answer (a review); see [`RunRecord::correlation_id`].
    Paused,
    Completed,
    Failed,
    Rejected,
    Cancelled,
}

impl RunStatus {
    pub const ALL: [RunStatus; 7] = [
        RunStatus::Queued,
        RunStatus::Running,
        RunStatus::Paused,
        RunStatus::Completed,
        RunStatus::Failed,
        RunStatus::Rejected,
        RunStatus::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Queued => "queued",
            RunStatus::Running => "running",
            RunStatus::Paused => "paused",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Rejected => "rejected",
            RunStatus::Cancelled => "cancelled",
        }
    }

    /// Parses [`RunStatus::as_str`]'s output.
    pub fn parse(s: &str) -> Option<RunStatus> {
        RunStatus::ALL.into_iter().find(|st| st.as_str() == s)
    }

    /// Completed, failed, rejected and cancelled runs never run again.
    pub fn is_terminal(self) -> bool {
        !matches!(
            self,
            RunStatus::Queued | RunStatus::Running | RunStatus::Paused
        )
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The indexed columns of a run (what `hensu ps` lists). Times are unix milliseconds (UTC);
/// render them with [`crate::rfc3339`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    pub run_id: String,
    pub workflow_id: String,
    /// An opaque version of the workflow (e.g. its declared version or a content hash).
    pub workflow_version: String,
    pub status: RunStatus,
    /// The node executed next (or the end node reached).
    pub current_node: Option<String>,
    pub started_at: u64,
    pub updated_at: u64,
    /// The correlation id of a paused review.
    pub correlation_id: Option<String>,
    /// The end node's exit status (`SUCCESS` / `FAILURE`) of a completed run.
    pub exit_status: Option<String>,
    /// The write sequence number: 0 at creation, +1 on every checkpoint or status change.
    /// It is the `expected_step` of the next write (optimistic concurrency).
    pub step: u64,
    /// A cancellation was requested (by [`crate::StateStore::request_cancel`]) while the run
    /// was held by a live owner; the owner sees it on its next checkpoint or heartbeat.
    pub cancel_requested: bool,
    /// A pause was requested (by [`crate::StateStore::request_pause`]) and not yet taken: the
    /// run's owner, or the next one, saves it `paused` at its next node boundary. Cleared when
    /// the record leaves `running`.
    pub pause_requested: bool,
    /// A forked run: the run and step whose log is this run's prefix
    /// ([`crate::StateStore::fork`]); `None` for every other run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<RunParent>,
    /// A paused run waiting at a `wait` or `awaitSignal` node: when a claim may take it, and
    /// the signal that wakes it earlier ([`RunWait`]); `None` for every other run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<RunWait>,
}

/// What a paused run waits for (docs/language.md, *Timers and signals*): a claim takes it
/// once `wake_at` has passed, and a signal named `signal` (or one of `more_signals`) sets
/// `wake_at` to the time it was sent. Cleared by every record update that does not set it
/// again.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RunWait {
    /// Unix milliseconds; `None`: only a signal wakes the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wake_at: Option<u64>,
    /// The signal that wakes it (the first, when flows of the run wait for several).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// The other signals that wake it: fork branches or sub-workflow children of the run
    /// waiting for different names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_signals: Vec<String>,
    /// Written only: how many of the run's signals the run had looked at when it decided to
    /// wait. A signal of its name numbered at or after it (sent while the run was deciding)
    /// wakes the run at once, in the same transaction as the wait (read back as 0).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub signals_seen: u64,
}

impl RunWait {
    /// A wait until `wake_at` or any of `signals` (the first is [`RunWait::signal`]).
    pub fn new(wake_at: Option<u64>, mut signals: Vec<String>) -> RunWait {
        let signal = (!signals.is_empty()).then(|| signals.remove(0));
        RunWait {
            wake_at,
            signal,
            more_signals: signals,
            signals_seen: 0,
        }
    }

    /// Every signal that wakes the run, `signal` first.
    pub fn signals(&self) -> impl Iterator<Item = &str> {
        self.signal
            .iter()
            .chain(&self.more_signals)
            .map(String::as_str)
    }

    /// The stored `waiting_for` column: the one signal's name, or a JSON array of them all
    /// when there are several.
    pub(crate) fn waiting_for(&self) -> Option<String> {
        if self.more_signals.is_empty() {
            return self.signal.clone();
        }
        serde_json::to_string(&self.signals().collect::<Vec<_>>()).ok()
    }

    /// Every name as a JSON array (the statement that wakes a run at once reads it), `None`
    /// without a signal.
    pub(crate) fn signals_json(&self) -> Option<String> {
        self.signal.as_ref()?;
        serde_json::to_string(&self.signals().collect::<Vec<_>>()).ok()
    }

    /// Read back from the `wake_at` and `waiting_for` columns (`None` when both are empty).
    /// A `waiting_for` holding a JSON array of two or more names is several signals.
    pub(crate) fn from_columns(wake_at: Option<u64>, waiting_for: Option<String>) -> Option<Self> {
        if wake_at.is_none() && waiting_for.is_none() {
            return None;
        }
        let names = match waiting_for {
            Some(text) => match serde_json::from_str::<Vec<String>>(&text) {
                Ok(list) if text.starts_with('[') && list.len() >= 2 => list,
                _ => vec![text],
            },
            None => Vec::new(),
        };
        Some(RunWait::new(wake_at, names))
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Where a forked run's history starts: its parent's log up to and including `step` (the
/// parent's rows are read through, never copied).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RunParent {
    pub run_id: String,
    pub step: u64,
}

impl RunRecord {
    /// A new running record at step 0, started now.
    pub fn new(
        run_id: impl Into<String>,
        workflow_id: impl Into<String>,
        workflow_version: impl Into<String>,
        current_node: Option<String>,
    ) -> RunRecord {
        let now = now_ms();
        RunRecord {
            run_id: run_id.into(),
            workflow_id: workflow_id.into(),
            workflow_version: workflow_version.into(),
            status: RunStatus::Running,
            current_node,
            started_at: now,
            updated_at: now,
            correlation_id: None,
            exit_status: None,
            step: 0,
            cancel_requested: false,
            pause_requested: false,
            parent: None,
            wait: None,
        }
    }
}

/// The columns a checkpoint or status change rewrites.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordUpdate {
    pub status: RunStatus,
    pub current_node: Option<String>,
    pub correlation_id: Option<String>,
    pub exit_status: Option<String>,
    /// A paused run's wait (docs/language.md, *Timers and signals*); `None` clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<RunWait>,
}

impl RecordUpdate {
    /// A running run at `node`.
    pub fn running(node: impl Into<String>) -> RecordUpdate {
        RecordUpdate {
            status: RunStatus::Running,
            current_node: Some(node.into()),
            correlation_id: None,
            exit_status: None,
            wait: None,
        }
    }

    /// A run paused at `node`, waiting for `correlation_id`.
    pub fn paused(node: impl Into<String>, correlation_id: impl Into<String>) -> RecordUpdate {
        RecordUpdate {
            status: RunStatus::Paused,
            current_node: Some(node.into()),
            correlation_id: Some(correlation_id.into()),
            exit_status: None,
            wait: None,
        }
    }

    /// A run ended with `status` (at `node`, if any).
    pub fn finished(
        status: RunStatus,
        node: Option<String>,
        exit_status: Option<String>,
    ) -> RecordUpdate {
        RecordUpdate {
            status,
            current_node: node,
            correlation_id: None,
            exit_status,
            wait: None,
        }
    }
}

/// A run as loaded: its record, the workflow it runs and its latest snapshot.
#[derive(Clone, Debug, PartialEq)]
pub struct StoredRun {
    pub record: RunRecord,
    /// The workflow as stored at creation (opaque JSON).
    pub workflow: Value,
    /// The latest snapshot (opaque JSON), its format version checked.
    pub snapshot: Value,
    /// The format version of `snapshot` (equal to the store's expected version).
    pub snapshot_version: u64,
}

/// What wrote a row of the run log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogKind {
    /// [`crate::StateStore::create_run`]: the first snapshot.
    Created,
    /// [`crate::StateStore::checkpoint`]: a full snapshot from the caller.
    Snapshot,
    /// [`crate::StateStore::append`]: one step, its state change as a delta.
    Step,
    /// [`crate::StateStore::set_status`] or a direct cancellation: the state is unchanged.
    Status,
    /// [`crate::StateStore::claim`]: a worker took the run, from the queue or over from an
    /// owner whose lease expired; the row's output is a [`ClaimNote`].
    Claimed,
    /// [`crate::StateStore::fork`]: the first row of a forked run, right after its parent's
    /// prefix; its delta is the fork's edits of the parent's state, its output a
    /// [`RunParent`].
    Forked,
    /// [`crate::StateStore::append_journal`]: one entry of the call journal of the node in
    /// flight (a model request or response, a tool call or its result; docs/security.md,
    /// *Call journal*); its delta is empty, its output the (redacted) journal entry, opaque
    /// to the store.
    Journal,
}

impl LogKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LogKind::Created => "created",
            LogKind::Snapshot => "snapshot",
            LogKind::Step => "step",
            LogKind::Status => "status",
            LogKind::Claimed => "claimed",
            LogKind::Forked => "forked",
            LogKind::Journal => "journal",
        }
    }

    pub fn parse(s: &str) -> Option<LogKind> {
        [
            LogKind::Created,
            LogKind::Snapshot,
            LogKind::Step,
            LogKind::Status,
            LogKind::Claimed,
            LogKind::Forked,
            LogKind::Journal,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// The output of a [`LogKind::Claimed`] row: which worker took the run, from which owner
/// (a takeover), and the node that runs again because its first run was in flight when that
/// owner stopped (at-least-once: its agent call or side effect may happen twice).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimNote {
    pub worker: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub taken_over_from: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun_node: Option<String>,
}

impl ClaimNote {
    /// The note of a claim by `worker` of a run at `node`, held before by `from` (a takeover)
    /// or queued (`None`).
    pub fn new(worker: String, from: Option<String>, node: Option<String>) -> ClaimNote {
        ClaimNote {
            worker,
            rerun_node: from.as_ref().and(node),
            taken_over_from: from,
        }
    }

    /// The record update (running, at the same node) and the log row's output of a claim of
    /// `record` by `worker`, held before by `from`.
    pub(crate) fn claim(
        record: RunRecord,
        worker: String,
        from: Option<String>,
    ) -> (RecordUpdate, Vec<u8>) {
        let note = ClaimNote::new(worker, from, record.current_node.clone());
        let update = RecordUpdate {
            status: RunStatus::Running,
            current_node: record.current_node,
            correlation_id: None,
            exit_status: None,
            wait: None,
        };
        (update, serde_json::to_vec(&note).unwrap_or_default())
    }
}

/// One row of a run's history (the run log without its payloads): every creation,
/// checkpoint, step and status change, keyed by the run's write step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointMeta {
    pub step: u64,
    /// The record's current node after the write (the node executed next).
    pub node: Option<String>,
    pub status: RunStatus,
    /// Unix milliseconds of the write.
    pub at: u64,
    /// The size of the full snapshot written at this step (a checkpoint, or a compaction
    /// after an appended step); `None` when none was.
    pub snapshot_bytes: Option<u64>,
    pub kind: LogKind,
    /// For a [`LogKind::Step`]: the node the step executed, its status, and how long it ran.
    pub executed_node: Option<String>,
    pub node_status: Option<String>,
    pub duration_ms: Option<u64>,
}

/// A step as the engine hands it to [`crate::StateStore::append`]: what ran, what it
/// produced, and the change it made to the run's state (only the change: the store replays
/// it on top of the latest snapshot).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepEntry {
    /// The node the step executed.
    pub node: Option<String>,
    /// Its outcome as the engine names it (e.g. `SUCCESS`); opaque to the store.
    pub node_status: Option<String>,
    /// The node's output (kept in the log for history and followers, not replayed).
    pub output: Option<Value>,
    /// The change to the state (RFC 6902 JSON Patch).
    pub delta: StateDelta,
    /// When the node started (unix milliseconds) and how long it ran.
    pub started_at: Option<u64>,
    pub duration_ms: Option<u64>,
    /// Who writes the run's snapshot when the snapshot policy makes one due.
    pub snapshot: StepSnapshot,
}

/// Who writes a run's full snapshot when an appended step makes one due under the
/// [`crate::SnapshotPolicy`].
#[derive(Clone, Debug, Default, PartialEq)]
pub enum StepSnapshot {
    /// The store, in the step's transaction: the latest snapshot with the log since replayed
    /// on top, re-encoded ("compaction": decodes the whole state).
    #[default]
    ByStore,
    /// The caller, which holds the state anyway: the step is written without a snapshot and
    /// [`Checkpointed::snapshot_wanted`] asks for one; the caller's next append carries it
    /// ([`StepSnapshot::State`]). Nothing is decoded or replayed.
    OnRequest,
    /// The run's full state after this step: written as the run's snapshot at this step,
    /// in the step's transaction.
    State(Value),
}

/// A full row of the run log, payloads decoded ([`crate::StateStore::read_log`]).
#[derive(Clone, Debug, PartialEq)]
pub struct LogEntry {
    pub meta: CheckpointMeta,
    pub output: Option<Value>,
    pub delta: Option<StateDelta>,
    pub started_at: Option<u64>,
}

/// What a successful checkpoint returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checkpointed {
    /// The run's new step (the next checkpoint's `expected_step`).
    pub step: u64,
    /// Unix milliseconds of the write.
    pub at: u64,
    /// The lease's new expiry (a checkpoint renews the lease).
    pub lease_expires_at: u64,
    /// Someone asked to cancel this run: stop before the next node.
    pub cancel_requested: bool,
    /// Someone asked to pause this run: save it `paused` before the next node.
    pub pause_requested: bool,
    /// A full snapshot was written by this call (always for [`crate::StateStore::checkpoint`];
    /// for [`crate::StateStore::append`], when the snapshot policy made one due or the step
    /// carried one).
    pub snapshot_written: bool,
    /// The snapshot policy made a snapshot due and the step asked to provide it
    /// ([`StepSnapshot::OnRequest`]): send the full state with the next append.
    pub snapshot_wanted: bool,
}

/// What a heartbeat returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Renewed {
    pub expires_at: u64,
    pub cancel_requested: bool,
}

/// What [`crate::StateStore::request_pause`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PauseRequest {
    /// The run is `running`: it is flagged, and whoever executes it (its owner, or the worker
    /// or server that takes it over) saves it `paused` at its next node boundary.
    Requested,
    /// It was paused already (for a review or an earlier pause): nothing changed.
    AlreadyPaused,
    /// It is queued and no one has started it: nothing changed (cancel it instead).
    NotStarted,
    /// It had finished with this status: nothing changed.
    AlreadyFinished(RunStatus),
}

/// What [`crate::StateStore::request_cancel`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
// Returned once per cancel request (not stored or collected): the record's size there costs
// nothing, and boxing it would change every caller for no gain.
#[allow(clippy::large_enum_variant)]
pub enum CancelRequest {
    /// A live owner holds the run: the flag is set, the owner stops at its next node boundary.
    Requested { owner: String },
    /// Nobody held the run (paused, or its owner died): it is now cancelled.
    Cancelled(RunRecord),
    /// The run had already finished with this status.
    AlreadyFinished(RunStatus),
}
