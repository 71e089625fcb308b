//! The narrow per-dialect seam under the store's rules ([`crate::logic`]): what one
//! transaction of a backend can read and write, row by row, and nothing it decides.
//!
//! A [`Backend`] is one open transaction (SQLite: `BEGIN IMMEDIATE` on the writer thread's
//! connection; PostgreSQL: a pooled connection's transaction, every write having locked the
//! run's row first through [`Backend::run`] with `lock`). Its methods are `async` so the
//! PostgreSQL driver can await the network; the SQLite ones never suspend, so the writer
//! thread finishes a whole operation in one poll ([`crate::logic::run_ready`]).
//!
//! Adding a dialect means implementing this trait (and the store handle that opens its
//! transactions); the rules in [`crate::logic`] come for free.

use std::path::Path;

use crate::owner::LeaseRow;
use crate::query::RunQuery;
use crate::{
    CheckpointMeta, ClaimScope, Lease, LogKind, OwnerId, RecordUpdate, Result, RunRecord,
    RunStatus, StoreError,
};

/// Where a run's state lives: its latest snapshot and the log accumulated since (the record's
/// counters, which the snapshot policy reads).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LogState {
    pub snapshot_step: u64,
    pub snapshot_bytes: u64,
    pub log_rows: u64,
    pub log_bytes: u64,
}

/// A log row as written (payloads already encoded).
#[derive(Default)]
pub(crate) struct NewLogRow<'a> {
    pub executed_node: Option<&'a str>,
    pub node_status: Option<&'a str>,
    pub output: Option<&'a [u8]>,
    pub delta: Option<&'a [u8]>,
    pub state_version: Option<u64>,
    pub started_at: Option<u64>,
    pub duration_ms: Option<u64>,
    pub snapshot_bytes: Option<u64>,
}

/// What an append left its run at: the step it wrote, the run's snapshot-policy counters
/// and lease expiry after it. While the run is still at `step` (the next append's step check
/// proves it), nothing else wrote to it — except a cancellation request, which a backend's
/// in-place step checks itself — so the next append need not read them back.
#[derive(Clone, Debug)]
pub(crate) struct LastStep {
    pub run_id: String,
    pub step: u64,
    pub log: LogState,
    pub lease_expires_at: u64,
}

/// What a backend's in-place step ([`Backend::step_in_place`]) saw.
pub(crate) struct SteppedInPlace {
    /// The log state before this step's row.
    pub log: LogState,
    pub lease_expires_at: u64,
}

/// Which records [`Backend::records`] lists.
pub(crate) enum Records<'a> {
    /// All of them, newest first (by `started_at`, then `run_id`, descending).
    All,
    /// The latest updated run paused for this correlation id.
    ByCorrelation(&'a str),
}

/// One log row with its payloads still encoded.
pub(crate) struct RawLogRow {
    pub meta: CheckpointMeta,
    pub output: Option<Vec<u8>>,
    pub delta: Option<Vec<u8>>,
    pub started_at: Option<i64>,
}

/// A lease a claim statement took.
pub(crate) struct ClaimedLease {
    pub run_id: String,
    pub acquired_at: i64,
    pub expires_at: i64,
    /// The owner of the expired lease it replaced (a takeover), if any.
    pub prior: Option<String>,
}

/// A delta row of the log, as [`Backend::for_each_delta`] hands it over: step, encoded
/// delta, the state version it was written for.
pub(crate) type DeltaVisitor<'f> = dyn FnMut(i64, &[u8], Option<i64>) -> Result<()> + Send + 'f;

/// One transaction of a dialect. Row-level reads and writes only: the checks, the order of
/// the writes and every decision are [`crate::logic`]'s.
pub(crate) trait Backend {
    /// What errors name: the database file, or the password-free URL.
    fn location(&self) -> &Path;

    /// The run's record and log state; with `lock`, the run is locked for writing until the
    /// transaction ends (PostgreSQL: `FOR UPDATE`; SQLite's transaction already holds the
    /// database's write lock). [`crate::StoreError::NotFound`] when there is none.
    async fn run(&mut self, run_id: &str, lock: bool) -> Result<(RunRecord, LogState)>;

    /// Inserts a new run's record (with its parent, if forked, and its snapshot-policy
    /// counters at `log`) and workflow; `false` (nothing written) when the id is taken.
    async fn insert_run(
        &mut self,
        record: &RunRecord,
        workflow: &[u8],
        log: &LogState,
    ) -> Result<bool>;

    async fn lease(&mut self, run_id: &str) -> Result<Option<LeaseRow>>;

    /// Inserts or replaces the run's lease.
    async fn put_lease(&mut self, run_id: &str, row: &LeaseRow) -> Result<()>;

    async fn renew_lease(&mut self, run_id: &str, expires_at: u64) -> Result<()>;

    /// Deletes the run's lease (only `owner`'s, when given).
    async fn delete_lease(&mut self, run_id: &str, owner: Option<&str>) -> Result<()>;

    /// Flags the run for its owner to cancel.
    async fn flag_cancel(&mut self, run_id: &str) -> Result<()>;

    /// Flags the run for its owner to pause (cleared by [`Backend::update_record`] when the
    /// status leaves `running`).
    async fn flag_pause(&mut self, run_id: &str) -> Result<()>;

    /// Moves the record to `update` at `step`, adding the row's delta (if any) to the log
    /// counters. `status_unchanged`: status, correlation and exit status stay as they are
    /// (a backend may then skip rewriting indexed columns). A status other than `running`
    /// clears a pause request (it was taken, or the run ended first).
    #[allow(clippy::too_many_arguments)]
    async fn update_record(
        &mut self,
        run_id: &str,
        step: u64,
        update: &RecordUpdate,
        now: u64,
        delta_bytes: Option<u64>,
        status_unchanged: bool,
    ) -> Result<()>;

    #[allow(clippy::too_many_arguments)]
    async fn insert_log(
        &mut self,
        run_id: &str,
        step: u64,
        kind: LogKind,
        update: &RecordUpdate,
        now: u64,
        row: &NewLogRow<'_>,
    ) -> Result<()>;

    /// A backend's fast path for the common step of a running run: bumps the record from
    /// `expected_step` (current node, updated_at, log counters by one row of `delta_bytes`)
    /// only if `lease`'s owner holds the run, no cancellation or pause was requested and status,
    /// correlation and exit status stay what `update` says; returns what the step's checks
    /// and the snapshot policy need. `None` (the default): not done — the caller takes the
    /// checked path, which names any failure.
    async fn step_in_place(
        &mut self,
        lease: &Lease,
        expected_step: u64,
        update: &RecordUpdate,
        now: u64,
        delta_bytes: u64,
    ) -> Result<Option<SteppedInPlace>> {
        let _ = (lease, expected_step, update, now, delta_bytes);
        Ok(None)
    }

    /// Told, inside the transaction, where an append left its run (kept once it commits, for
    /// the next [`Backend::step_in_place`]); the default forgets it.
    fn stepped(&mut self, last: LastStep) {
        let _ = last;
    }

    /// Inserts (or replaces) the snapshot row at `step`.
    async fn insert_snapshot(
        &mut self,
        run_id: &str,
        step: u64,
        version: u64,
        bytes: &[u8],
    ) -> Result<()>;

    /// Restarts the record's log counters at the snapshot of `step` (`bytes` long) and records
    /// its size in that step's log row.
    async fn snapshot_adopted(&mut self, run_id: &str, step: u64, bytes: u64) -> Result<()>;

    /// The snapshot row at `step`: its bytes and format version.
    async fn snapshot(&mut self, run_id: &str, step: u64) -> Result<Option<(Vec<u8>, i64)>>;

    /// The run's latest snapshot row at or before `until`: its step, bytes and format
    /// version.
    async fn snapshot_until(
        &mut self,
        run_id: &str,
        until: u64,
    ) -> Result<Option<(u64, Vec<u8>, i64)>>;

    /// Hands every log row after `step` and up to `until` that carries a delta to `visit`,
    /// in step order.
    async fn for_each_delta(
        &mut self,
        run_id: &str,
        step: u64,
        until: u64,
        visit: &mut DeltaVisitor<'_>,
    ) -> Result<()>;

    /// The encoded workflow stored with the run.
    async fn workflow(&mut self, run_id: &str) -> Result<Option<Vec<u8>>>;

    async fn records(&mut self, which: Records<'_>) -> Result<Vec<RunRecord>>;

    /// The metadata of the run's own log rows from step `from` up to `until`, oldest first.
    async fn log_meta(
        &mut self,
        run_id: &str,
        from: u64,
        until: u64,
    ) -> Result<Vec<CheckpointMeta>>;

    /// Up to `limit` of the run's own log rows after step `after` and up to `until`, oldest
    /// first.
    async fn log_rows(
        &mut self,
        run_id: &str,
        after: u64,
        until: u64,
        limit: usize,
    ) -> Result<Vec<RawLogRow>>;

    /// The claim statement: takes for `owner` (until `expires_at`) the leases of up to `limit`
    /// claimable runs — `queued` or `running`, with no lease or one expired at `now` — oldest
    /// first, concurrent claimers never sharing one; only runs of `scope` (a tenant tag in
    /// `run_tenants` or none).
    async fn claim_leases(
        &mut self,
        owner: &OwnerId,
        scope: ClaimScope,
        now: u64,
        expires_at: u64,
        limit: usize,
    ) -> Result<Vec<ClaimedLease>>;

    /// How many runs are claimable at `now` (what [`claim_leases`](Self::claim_leases) could
    /// take, of any scope).
    async fn claimable_count(&mut self, now: u64) -> Result<u64>;

    /// Pushes every lease of `owner` to `expires_at` in one statement; returns each run
    /// renewed with its cancellation flag.
    async fn renew_owner(&mut self, owner: &str, expires_at: u64) -> Result<Vec<(String, bool)>>;

    /// Records that `run_id` (of `workflow_id`) belongs to `tenant` (the server's registry);
    /// `false` (nothing written) when the run is tagged already.
    async fn tag_run(
        &mut self,
        run_id: &str,
        tenant: &str,
        workflow_id: &str,
        now: u64,
    ) -> Result<bool>;

    /// The row of the tenant's idempotency key, locking the key against a concurrent start
    /// with it until the transaction ends (PostgreSQL: an advisory lock; SQLite's writes are
    /// serial already).
    async fn idempotency_key(&mut self, tenant: &str, key: &str) -> Result<Option<KeyRow>>;

    /// Records (or, past its window, replaces) the tenant's idempotency key.
    async fn put_idempotency_key(&mut self, tenant: &str, key: &str, row: &KeyRow) -> Result<()>;

    /// At most `limit` of the tenant's runs matching `query`, newest first by the tag's
    /// `created_at` then run id, each with that `created_at`: one query joining the tenant
    /// tags with the runs (docs/server.md, *Paging*).
    async fn tenant_page(
        &mut self,
        tenant: &str,
        query: &RunQuery,
        limit: usize,
    ) -> Result<Vec<(u64, RunRecord)>>;
}

// ---------------------------------------------------------------------------------------------
// Conversions every dialect shares

pub(crate) fn corrupt(path: &Path, detail: impl Into<String>) -> StoreError {
    StoreError::Corrupt {
        path: path.to_path_buf(),
        detail: detail.into(),
    }
}

pub(crate) fn to_i64(v: u64) -> Result<i64> {
    i64::try_from(v).map_err(|_| StoreError::Invalid(format!("{v} exceeds i64::MAX")))
}

/// `v` as a column value, saturating (for values the store itself computed).
pub(crate) fn sat_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

pub(crate) fn to_u64(v: i64, path: &Path, what: &str) -> Result<u64> {
    u64::try_from(v).map_err(|_| corrupt(path, format!("negative {what} ({v})")))
}

pub(crate) fn parse_status(s: &str, path: &Path) -> Result<RunStatus> {
    RunStatus::parse(s).ok_or_else(|| corrupt(path, format!("unknown run status `{s}`")))
}

pub(crate) fn parse_kind(s: &str, path: &Path) -> Result<LogKind> {
    LogKind::parse(s).ok_or_else(|| corrupt(path, format!("unknown log kind `{s}`")))
}

/// A key's row: the run it started, the digest of that request, when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KeyRow {
    pub run_id: String,
    pub request_hash: String,
    pub created_at: u64,
}
