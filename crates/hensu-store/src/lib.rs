//! Durable run state for hensu.
//!
//! A [`StateStore`] keeps, per run, the indexed columns the CLI lists ([`RunRecord`]), the
//! workflow the run executes, an append-only **run log** (one row per creation, step,
//! checkpoint and status change) and the latest full **snapshot** of the run's state. States
//! are opaque JSON (`serde_json::Value`) in a versioned envelope
//! `{"snapshot_version": N, "state": …}`; the store does not know the runtime's types.
//!
//! Backends share one semantics and one conformance suite (`tests/conformance`):
//! - [`SqliteStore`] (the default): embedded SQLite (bundled), WAL, at `<dir>/.hensu/state.db`;
//!   [`MemoryStore`] is the same code on an SQLite `:memory:` database;
//! - [`PgStore`]: PostgreSQL, for runs shared by several machines.
//!
//! [`StoreUrl::parse`] reads a location (a URL or a path) and [`StoreUrl::open`] opens it
//! ([`open_store`] does both); [`StateStore::registry`] gives the server's workflow registry
//! on the same database.
//!
//! # The run log and snapshots
//! [`StateStore::append`] records one step: the node, its status and output, timing, and the
//! *change* the step made to the state ([`StateDelta`], an RFC 6902 JSON Patch), in the same
//! transaction as the record's step counter. A step therefore costs O(step), not O(run).
//! [`StateStore::load`] returns the latest snapshot with the deltas logged after it replayed
//! on top. A snapshot is rewritten in the transaction of the step that makes it due under
//! the [`SnapshotPolicy`] — from the log ("compaction": decode, replay, re-encode), or, when
//! the caller holds the state and said so ([`StepSnapshot::OnRequest`]), from the state the
//! caller sends with its next step ([`Checkpointed::snapshot_wanted`]); a crash during it
//! rolls back to the state before that step, so nothing committed is lost. [`StateStore::checkpoint`] (a full state from the
//! caller) still works and is a snapshot in itself. [`StateStore::history`] reads the log.
//!
//! # Writes
//! - Every write is one transaction (record + log row [+ snapshot] + lease renewal).
//! - `expected_step` is an optimistic-concurrency check: a writer that did not see the latest
//!   write fails with [`StoreError::StepConflict`] instead of overwriting it.
//! - One writer per run: [`StateStore::acquire`] takes the run's lease (SQLite: in a
//!   `BEGIN IMMEDIATE` transaction; PostgreSQL: under the run row's `FOR UPDATE` lock); a
//!   second owner gets [`StoreError::RunLocked`].
//!
//! # The lease rule
//! A lease held by another owner blocks an acquisition unless
//! 1. it expired (`expires_at <= now`; the TTL is [`StoreOptions::lease_ttl`], 30 s by
//!    default; every heartbeat pushes it back by one TTL, and so does a checkpoint or an
//!    append once less than half the TTL is left), or
//! 2. its owner's host is this host (same host name) and its pid no longer exists (checked via
//!    `/proc` on Linux; elsewhere rule 2 never applies). A zombie counts as alive. A pid reused
//!    by an unrelated process keeps the lease until it expires (safe direction). Hosts that
//!    share a state directory must have distinct host names (containers sharing a volume with
//!    the same host name but separate pid namespaces would break rule 2).
//!
//! An owner re-acquiring its own lease renews it.
//!
//! # Claiming (workers)
//! [`StateStore::claim`] hands runs to workers. A run is claimable when its status is
//! `queued` (stored by `hensuc run --detach`, never claimed) or `running` and it has no lease
//! (released) or its lease expired (`expires_at <= now`: its owner stopped heartbeating — rule 2 above is not used,
//! workers run on many hosts). Paused runs wait for a human and are never claimed. The claim
//! is one statement, so two workers never get the same run:
//! - SQLite: `INSERT INTO leases … SELECT … FROM runs LEFT JOIN leases … WHERE status =
//!   IN ('queued', 'running') AND (no lease OR expired) ORDER BY started_at LIMIT n ON CONFLICT DO UPDATE …
//!   WHERE leases.expires_at <= now RETURNING …`, inside `BEGIN IMMEDIATE` (one writer);
//! - PostgreSQL: the same upsert fed by `SELECT … FOR UPDATE OF runs SKIP LOCKED`, so
//!   concurrent claimers skip each other's candidates instead of waiting.
//!
//! Each claimed run gets a [`LogKind::Claimed`] row in its log (status `running`) in the
//! claim's transaction, naming the worker and, for a takeover, the previous owner and the
//! node that runs again ([`ClaimNote`]).
//!
//! A worker renews all its leases with one [`StateStore::heartbeat_owner`] per interval;
//! every append renews the run's lease too.

mod backend;
mod claim_sql;
mod error;
mod events;
pub mod group;
mod heartbeat;
mod idempotency;
mod lineage;
mod logic;
mod memory;
mod owner;
mod page;
mod postgres;
mod query;
mod record;
pub mod retention;
mod schedules;
mod signals;
mod sqlite;
mod time;
mod url;
mod workflows;

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use error::{Result, StoreError};
pub use events::{EVENT_RETENTION_MS, EventBounds, EventWakeups, TenantEvent};
pub use group::{CommitMode, StepWrite};
pub use heartbeat::Heartbeat;
pub use hensu_delta::StateDelta;
pub use idempotency::{IDEMPOTENCY_WINDOW_MS, IdempotencyKey, KeyedStart};
pub use lineage::{ForkSpec, MAX_FORK_DEPTH};
pub use memory::MemoryStore;
pub use owner::{Lease, OwnerId, local_host, pid_alive};
pub use postgres::registry::PgRegistry;
pub use postgres::{PG_SCHEMA_VERSION, PgStore};
pub use query::{DEFAULT_PAGE_LIMIT, InvalidCursor, MAX_PAGE_LIMIT, RunCursor, RunPage, RunQuery};
pub use record::{
    CancelRequest, CheckpointMeta, Checkpointed, ClaimNote, LogEntry, LogKind, PauseRequest,
    RecordUpdate, Renewed, RunParent, RunRecord, RunStatus, RunWait, StepEntry, StepSnapshot,
    StoredRun,
};
pub use schedules::{Firing, FiringState, NewFiring, ScheduleRow, ScheduleStore, TickClaim};
pub use signals::{SignalReceipt, StoredSignal};
pub use sqlite::registry::SqliteRegistry;
pub use sqlite::{SqliteSettings, SqliteStore};
pub use time::{now_ms, parse_rfc3339, rfc3339};
pub use url::{StoreUrl, open_store};
pub use workflows::{StoredWorkflow, WorkflowRegistry, WorkflowSummary};

/// The schema version this build reads and writes.
pub const SCHEMA_VERSION: i64 = 7;
/// The hensu version recorded in the store's `meta` table.
pub const HENSU_VERSION: &str = env!("CARGO_PKG_VERSION");
/// The default lease time-to-live.
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(30);
/// The store's location under a project directory.
pub const STATE_DB: &str = ".hensu/state.db";

/// How hard SQLite syncs a commit (in WAL mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Durability {
    /// `synchronous=NORMAL`: a commit survives a crash of the process; a power loss may roll
    /// back the last few commits (never corrupts). A lost checkpoint means a resume re-runs
    /// from the previous one, as after a crash mid-node. The default: with a 100 KB snapshot
    /// a checkpoint took 0.19 ms median / 0.36 ms mean against 0.57 ms / 1.9 ms (tails of
    /// several ms) for `Full` (`benches/checkpoint.rs`, 2-core shared machine).
    #[default]
    Normal,
    /// `synchronous=FULL`: every commit is fsync'd to the WAL before it returns.
    Full,
}

/// Store options.
#[derive(Clone, Debug)]
pub struct StoreOptions {
    pub lease_ttl: Duration,
    /// The snapshot format version written, and required on load
    /// ([`StoreError::SnapshotVersion`] otherwise).
    pub snapshot_version: u64,
    pub durability: Durability,
    /// How long a write waits for another process's write lock (`busy_timeout`).
    pub busy_timeout: Duration,
    /// Run `PRAGMA quick_check` when opening (O(database size)).
    pub verify_on_open: bool,
    /// When [`StateStore::append`] rewrites the full snapshot.
    pub snapshot_policy: SnapshotPolicy,
    /// How durable runs commit their steps (`[store] commit`, docs/cli.md, *Durable runs on many machines*).
    pub commit: CommitMode,
    /// Test hook: fail a compaction between two of its statements.
    #[doc(hidden)]
    pub failpoint: Option<Failpoint>,
}

/// When an appended step also rewrites the run's full snapshot (compaction).
///
/// A snapshot is due once the log since the latest snapshot holds at least
/// [`every_steps`](Self::every_steps) delta rows **or** [`max_log_bytes`](Self::max_log_bytes)
/// bytes of deltas — but not before those deltas reach
/// [`min_log_percent`](Self::min_log_percent) of the snapshot's own size. The floor keeps the
/// cost per step flat however large the state grows: a compaction re-encodes the whole state,
/// and is paid for by at least that many bytes of steps. Resume replays at most the rows since
/// the latest snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnapshotPolicy {
    /// Default 1,000.
    pub every_steps: u64,
    /// Default 1 MiB.
    pub max_log_bytes: u64,
    /// Default 200 (%): a compaction re-encodes the whole state (which holds the run's
    /// history), so it waits until the steps since the last one wrote twice the snapshot's
    /// bytes; a load then replays at most about that much. At 50 % a 20,000-step stub chain
    /// spent ~45 µs of its per-step cost compacting; at 200 % a quarter of that.
    pub min_log_percent: u64,
}

impl Default for SnapshotPolicy {
    fn default() -> Self {
        SnapshotPolicy {
            every_steps: 1_000,
            max_log_bytes: 1 << 20,
            min_log_percent: 200,
        }
    }
}

impl SnapshotPolicy {
    /// Never compacts (only [`StateStore::checkpoint`] writes snapshots).
    pub const NEVER: SnapshotPolicy = SnapshotPolicy {
        every_steps: u64::MAX,
        max_log_bytes: u64::MAX,
        min_log_percent: 0,
    };

    /// Compacts after every `n` appended steps, whatever their size (for tests).
    pub const fn every(n: u64) -> SnapshotPolicy {
        SnapshotPolicy {
            every_steps: n,
            max_log_bytes: u64::MAX,
            min_log_percent: 0,
        }
    }

    /// Whether `rows` deltas of `log_bytes` since a snapshot of `snapshot_bytes` call for a
    /// new snapshot.
    pub fn due(&self, rows: u64, log_bytes: u64, snapshot_bytes: u64) -> bool {
        let paid = u128::from(log_bytes) * 100
            >= u128::from(snapshot_bytes) * u128::from(self.min_log_percent);
        (rows >= self.every_steps || log_bytes >= self.max_log_bytes) && paid
    }
}

/// Where a compaction can be made to fail (test hook).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompactionStage {
    /// The new snapshot row is written; the record's counters are not.
    AfterSnapshotInsert,
    /// Where schema 3 deleted the older snapshots (now kept); the record's counters are not
    /// updated.
    AfterOldSnapshotDelete,
    /// Not a compaction: a fork's record and workflow are written, its `forked` row is not.
    ForkAfterRunInsert,
}

/// What a failpoint does: return an error (the transaction rolls back), or abort the process
/// on the spot (as a `kill -9` would, mid-transaction).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailAction {
    Error,
    Abort,
}

#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failpoint {
    pub stage: CompactionStage,
    pub action: FailAction,
}

impl Failpoint {
    /// Fires if set for `stage`.
    pub(crate) fn hit(this: Option<Failpoint>, stage: CompactionStage) -> Result<()> {
        match this {
            Some(f) if f.stage == stage => match f.action {
                FailAction::Error => Err(StoreError::Invalid(format!(
                    "failpoint: compaction stopped at {stage:?}"
                ))),
                FailAction::Abort => std::process::abort(),
            },
            _ => Ok(()),
        }
    }
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            lease_ttl: DEFAULT_LEASE_TTL,
            snapshot_version: 1,
            durability: Durability::Normal,
            busy_timeout: Duration::from_secs(5),
            verify_on_open: true,
            snapshot_policy: SnapshotPolicy::default(),
            commit: CommitMode::default(),
            failpoint: None,
        }
    }
}

impl StoreOptions {
    pub(crate) fn ttl_ms(&self) -> u64 {
        u64::try_from(self.lease_ttl.as_millis()).unwrap_or(u64::MAX)
    }

    /// The new expiry of a lease expiring at `expires_at` after its holder wrote at `now`:
    /// one TTL ahead, but only once less than half the TTL is left (`None`: unchanged), so
    /// most steps of a busy run do not rewrite the lease row.
    pub(crate) fn renewal(&self, expires_at: u64, now: u64) -> Option<u64> {
        let ttl = self.ttl_ms();
        (expires_at.saturating_sub(now).saturating_mul(2) < ttl).then(|| now.saturating_add(ttl))
    }
}

/// Durable run state. Object safe; implementations are `Send + Sync`.
///
/// Every method is `async`: SQLite runs each operation on the store's one writer thread
/// (the caller awaits its answer on a channel), PostgreSQL awaits the network on the
/// caller's runtime. No method blocks the caller's thread.
#[async_trait::async_trait]
pub trait StateStore: Send + Sync {
    /// The server's workflow registry in the same database, on the same connection (SQLite)
    /// or pool (PostgreSQL), so [`WorkflowRegistry::create_tenant_run`] writes a run and its
    /// tenant tag in one transaction. Creates (migrates) the registry's tables if needed.
    async fn registry(&self) -> Result<std::sync::Arc<dyn WorkflowRegistry>>;

    /// Stores a new run (its record, workflow and first snapshot) and its first history row.
    /// [`StoreError::AlreadyExists`] if the id is taken. Does not take the lease.
    async fn create_run(
        &self,
        record: &RunRecord,
        workflow: &Value,
        snapshot: &Value,
    ) -> Result<()> {
        let workflow = serde_json::to_vec(workflow)
            .map_err(|e| StoreError::Invalid(format!("the workflow does not serialize: {e}")))?;
        self.create_run_encoded(record, &workflow, snapshot).await
    }

    /// [`StateStore::create_run`] with the workflow already encoded (one JSON document): a
    /// caller that serializes it straight to bytes skips building a [`Value`] of it, an
    /// O(workflow) cost of every run.
    async fn create_run_encoded(
        &self,
        record: &RunRecord,
        workflow_json: &[u8],
        snapshot: &Value,
    ) -> Result<()>;

    /// Takes the run's lease for `owner` (see the crate docs for the rule).
    /// [`StoreError::RunLocked`] if another live owner holds it, [`StoreError::Finished`] if
    /// the run is terminal.
    async fn acquire(&self, run_id: &str, owner: &OwnerId) -> Result<Lease>;

    /// Pushes the lease's expiry back by one TTL; reports a pending cancellation request.
    async fn heartbeat(&self, lease: &Lease) -> Result<Renewed>;

    /// Gives the lease up (no-op if it is no longer the caller's).
    async fn release(&self, lease: &Lease) -> Result<()>;

    /// Atomically replaces the snapshot, updates the record, appends a history row and
    /// renews the lease. Fails with [`StoreError::StepConflict`] unless the run is at
    /// `expected_step`, [`StoreError::RunLocked`] / [`StoreError::LeaseLost`] unless `lease`
    /// is the current one, [`StoreError::Finished`] if the run is terminal.
    async fn checkpoint(
        &self,
        lease: &Lease,
        expected_step: u64,
        update: &RecordUpdate,
        snapshot: &Value,
    ) -> Result<Checkpointed>;

    /// Records one step in the run log: `entry` (node, status, output, timing and the
    /// [`StateDelta`] the step made) and `update` (the record's new columns), bumping the step,
    /// in one transaction; renews the lease. Checked like [`StateStore::checkpoint`]. When the
    /// [`SnapshotPolicy`] makes a snapshot due, it is written in the same transaction
    /// ([`Checkpointed::snapshot_written`]) — or, when the entry says
    /// [`StepSnapshot::OnRequest`], asked of the caller ([`Checkpointed::snapshot_wanted`]),
    /// whose next append carries it ([`StepSnapshot::State`]). The delta is not validated against the state here
    /// (that would cost O(state)); a delta that does not apply makes the next load or
    /// compaction fail with [`StoreError::Corrupt`].
    async fn append(
        &self,
        lease: &Lease,
        expected_step: u64,
        update: &RecordUpdate,
        entry: &StepEntry,
    ) -> Result<Checkpointed>;

    /// [`StateStore::append`] of a [`LogKind::Journal`] row: one entry of the call journal of
    /// the node in flight (its output the entry, its delta normally empty), checked and
    /// counted like a step, so a journal entry and the node boundaries share one order.
    async fn append_journal(
        &self,
        lease: &Lease,
        expected_step: u64,
        update: &RecordUpdate,
        entry: &StepEntry,
    ) -> Result<Checkpointed>;

    /// Group commit ([`group`]): `steps` (steps and journal entries) appended in order from
    /// `expected_step`, each checked like [`StateStore::append`], as **one** transaction —
    /// all of them or none. Returns the last one's result (with a cancellation or pause
    /// request any of them saw).
    async fn append_steps(
        &self,
        lease: &Lease,
        expected_step: u64,
        steps: &[StepWrite],
    ) -> Result<Checkpointed>;

    /// How durable runs on this store commit their steps ([`StoreOptions::commit`]).
    fn commit_mode(&self) -> CommitMode;

    /// Changes the record without a new snapshot (e.g. marking a crashed run failed, a paused
    /// run cancelled): bumps the step and appends a history row. With `lease`, it must be the
    /// current one; without, no other live owner may hold the run. A terminal status
    /// releases the lease.
    async fn set_status(
        &self,
        run_id: &str,
        lease: Option<&Lease>,
        expected_step: u64,
        update: &RecordUpdate,
    ) -> Result<RunRecord>;

    /// Cancels a run: directly when nobody holds it, otherwise by flagging it for its owner.
    async fn request_cancel(&self, run_id: &str) -> Result<CancelRequest>;

    /// Asks a running run to pause at its next node boundary: flags it in the store, so the
    /// process executing it sees the request with its next checkpoint whichever machine it
    /// runs on (and a takeover inherits it).
    async fn request_pause(&self, run_id: &str) -> Result<PauseRequest>;

    /// The record, workflow and current state: the latest snapshot with the deltas logged
    /// after it replayed (versions checked).
    async fn load(&self, run_id: &str) -> Result<StoredRun>;

    /// The record alone.
    async fn record(&self, run_id: &str) -> Result<RunRecord>;

    /// The run as it was after step `step` of its log: its record (as it is now), its
    /// workflow and the state then (for a forked run, through its parent's prefix).
    /// [`StoreError::Invalid`] when the run has no such step.
    async fn load_at(&self, run_id: &str, step: u64) -> Result<StoredRun>;

    /// Creates a run forked from `spec.parent`: its history is the parent's log up to and
    /// including `spec.parent.step` — referenced, not copied, so a fork costs the same
    /// whatever the parent's length — then one [`LogKind::Forked`] row carrying
    /// `spec.edits`, then its own steps. Record, workflow, tenant tag and that row are one
    /// transaction. Takes no lease. Returns the new record (its `step` is the fork point
    /// plus one; a fork point inside the parent's own prefix is moved to the parent's
    /// parent). [`StoreError::NotFound`] without the parent, [`StoreError::Invalid`] when
    /// it has no such step, [`StoreError::AlreadyExists`] when the id is taken.
    async fn fork(&self, spec: &ForkSpec) -> Result<RunRecord>;

    /// All runs, newest first (by `started_at`, then `run_id`, descending).
    async fn list(&self) -> Result<Vec<RunRecord>>;

    /// The paused run waiting for `correlation_id`, if any.
    async fn find_by_correlation(&self, correlation_id: &str) -> Result<Option<RunRecord>>;

    /// The run's history, oldest first: one row per log entry (creation, step, checkpoint,
    /// status change).
    async fn history(&self, run_id: &str) -> Result<Vec<CheckpointMeta>>;

    /// Up to `limit` log rows after step `after`, oldest first, payloads decoded (for
    /// followers of a run and for history with outputs).
    async fn read_log(&self, run_id: &str, after: u64, limit: usize) -> Result<Vec<LogEntry>>;

    /// Takes, for `owner`, the leases of up to `limit` runs that are claimable — status
    /// `queued`, or `running` with no lease or a lease that expired (orphaned) — oldest
    /// first, in one statement (see *Claiming* in the crate docs), and records each claim in
    /// the run's log ([`LogKind::Claimed`], the run's status becomes `running`, its step
    /// moves on by one). Finished runs are never claimed, nor paused ones but a run paused at a
    /// durable wait whose wake time has passed ([`RunRecord::wait`]). Each returned lease says
    /// whether the run had been held before ([`Claimed::taken_over`]). Only runs of `scope`
    /// are candidates: a claimer never sees (nor spins on) runs it may not take.
    async fn claim(&self, owner: &OwnerId, scope: ClaimScope, limit: usize)
    -> Result<Vec<Claimed>>;

    /// How many runs are waiting to be claimed now — `queued`, `running` with no lease or an
    /// expired one, or `paused` at a durable wait whose wake time has passed (the claim's
    /// predicate) — whoever may claim them (a server's `hensu_queue_depth` gauge).
    async fn queue_depth(&self) -> Result<u64>;

    /// Wake-ups when a run may have become claimable (PostgreSQL: a connection of its own
    /// `LISTEN`ing to `hensu_work`, notified when a run is queued or a signal sent); `None` when
    /// the backend has none (a worker then polls only). ARCHITECTURE.md, *hensu-store*.
    async fn work_wakeups(&self) -> Result<Option<EventWakeups>>;

    /// Renews every lease `owner` holds, in one statement (a worker's heartbeat); returns the
    /// runs renewed, with their cancellation flags. A run missing from the answer is no longer
    /// the owner's (taken over after its lease expired, or finished).
    async fn heartbeat_owner(&self, owner: &OwnerId) -> Result<Vec<(String, Renewed)>>;

    // --- Timers and signals (docs/language.md, *Timers and signals*) ----------------------
    //
    // A paused run waiting at a `wait` or `awaitSignal` node carries its wait in its record
    // ([`RunRecord::wait`], written with [`RecordUpdate::wait`]); [`StateStore::claim`] takes
    // it once its wake time has passed.

    /// Stores signal `name` with `payload` for the run, numbered after its earlier signals, and
    /// wakes the run when it is paused waiting for that name (its wake time becomes now).
    /// [`StoreError::NotFound`] without the run, [`StoreError::Finished`] when it has ended.
    async fn send_signal(&self, run_id: &str, name: &str, payload: &Value)
    -> Result<SignalReceipt>;

    /// The signals sent to the run, oldest first (taken or not: which ones the run took is
    /// in its state).
    async fn signals(&self, run_id: &str) -> Result<Vec<StoredSignal>>;

    /// The schedules and their firings in the same database (docs/schedules.md).
    fn schedules(&self) -> std::sync::Arc<dyn ScheduleStore>;

    /// Every run as a purge sees it: status, end time, parent, tenant (docs/retention.md).
    async fn purge_rows(&self) -> Result<Vec<retention::PurgeRow>>;

    /// Deletes the runs of `ids` that are finished and that no run names as its parent, in
    /// one transaction, with their log, snapshots, workflow, lease, tenant tag and idempotency
    /// keys; answers the ids deleted. Children listed before their parents go first.
    async fn delete_runs(&self, ids: &[String]) -> Result<Vec<String>>;

    /// Gives the space of deleted rows back where the backend can (SQLite: incremental
    /// vacuum; `rewrite`: a full `VACUUM` first, which also turns incremental vacuum on for a
    /// file created before it). PostgreSQL: nothing (autovacuum; docs/retention.md, *Space*).
    async fn reclaim_space(&self, rewrite: bool) -> Result<retention::Reclaimed>;
}

/// Whose runs a claim may take. A run belongs to a server when it was created with a tenant
/// tag ([`WorkflowRegistry::create_tenant_run`], by `hensuc serve`): it must run under the
/// server's rules (server mode, the tenant's workflows, tools and stubs). Every other run
/// (`hensuc run`, `run --detach`) is local: it runs with a project directory's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimScope {
    /// Runs without a tenant: what `hensuc worker` takes.
    Local,
    /// Runs of a tenant: what a server's takeover takes.
    Tenants,
}

/// A lease taken by [`StateStore::claim`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claimed {
    pub lease: Lease,
    /// The run had an (expired) lease of another owner: it is being taken over, and the node
    /// in flight when its owner stopped runs again.
    pub taken_over: bool,
}

#[derive(Serialize)]
struct EnvelopeRef<'a> {
    snapshot_version: u64,
    state: &'a Value,
}

#[derive(Deserialize)]
struct Envelope {
    snapshot_version: u64,
    state: Value,
}

/// Encodes a snapshot in its versioned envelope.
pub(crate) fn encode_snapshot(version: u64, state: &Value) -> Result<Vec<u8>> {
    serde_json::to_vec(&EnvelopeRef {
        snapshot_version: version,
        state,
    })
    .map_err(|e| StoreError::Invalid(format!("snapshot does not serialize: {e}")))
}

/// Decodes a snapshot envelope: `Err(detail)` when the bytes are not one.
pub(crate) fn decode_snapshot(bytes: &[u8]) -> std::result::Result<(u64, Value), String> {
    serde_json::from_slice::<Envelope>(bytes)
        .map(|e| (e.snapshot_version, e.state))
        .map_err(|e| format!("undecodable snapshot: {e}"))
}
