//! Schedules and their firings (docs/schedules.md): the rows `hensuc serve` fires from, in
//! the store's database (SQLite schema 7, PostgreSQL migration `V5__schedules.sql`), reached
//! through [`crate::StateStore::schedules`].
//!
//! The store knows no cron: a schedule row carries the next time it is due
//! (`next_fire_at`, unix ms), computed by the server. Exactly one server fires each tick
//! however many share the database, by two guards in one transaction
//! ([`ScheduleStore::claim_ticks`]): a compare-and-set of `next_fire_at` (the claim succeeds
//! only for the server that read the value still stored) and the firings table's primary key
//! `(tenant_id, schedule_id, tick)` (a tick is inserted once; a second insert of it is
//! dropped, and its claimer does not fire it).
//!
//! A firing is `claimed` (its server starts the run next), `queued` (waiting for the
//! schedule's previous run to end), `started` (with its run id), `skipped` (a missed tick, or
//! an overlap) or `failed` (the start was refused). A claimed or queued firing is taken over
//! by another server through [`ScheduleStore::take_firing`], a compare-and-set on its owner and
//! claim time, so a server that dies between its claim and its start loses no tick; the start
//! then carries the firing's idempotency key, so a run the dead server had created is found,
//! not created twice.

use serde_json::Value;

use crate::Result;

/// One schedule of a tenant.
#[derive(Clone, Debug, PartialEq)]
pub struct ScheduleRow {
    pub tenant_id: String,
    pub schedule_id: String,
    pub workflow_id: String,
    pub cron: String,
    pub time_zone: String,
    /// The initial context of each run (a JSON object).
    pub context: Value,
    /// `skip`, `queue` or `cancel_previous`.
    pub overlap: String,
    /// `skip`, `run_once` or `run_all`.
    pub missed: String,
    pub grace_seconds: u64,
    pub paused: bool,
    /// `api` (created over `/api/v1/schedules`) or `config` (`[[schedules]]` of hensu.toml).
    pub source: String,
    /// When the next tick is due (unix ms); `None` when the cron has no further occurrence.
    pub next_fire_at: Option<u64>,
    pub created_at: u64,
    pub updated_at: u64,
}

/// Where a firing is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FiringState {
    Claimed,
    Queued,
    Started,
    Skipped,
    Failed,
}

impl FiringState {
    pub fn as_str(self) -> &'static str {
        match self {
            FiringState::Claimed => "claimed",
            FiringState::Queued => "queued",
            FiringState::Started => "started",
            FiringState::Skipped => "skipped",
            FiringState::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<FiringState> {
        [
            FiringState::Claimed,
            FiringState::Queued,
            FiringState::Started,
            FiringState::Skipped,
            FiringState::Failed,
        ]
        .into_iter()
        .find(|f| f.as_str() == s)
    }
}

/// One firing of a schedule: a tick (its due time, unix ms; a "run now" is a tick at the time
/// it was asked for).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Firing {
    pub tenant_id: String,
    pub schedule_id: String,
    pub tick: u64,
    pub state: FiringState,
    pub run_id: Option<String>,
    /// Why it was skipped or failed.
    pub detail: Option<String>,
    /// The server that claimed it last.
    pub owner: String,
    pub claimed_at: u64,
    pub updated_at: u64,
}

/// A firing to insert with a claim: its tick, its first state and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewFiring {
    pub tick: u64,
    pub state: FiringState,
    pub detail: Option<String>,
}

/// A claim of a due schedule's ticks ([`ScheduleStore::claim_ticks`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TickClaim {
    pub tenant: String,
    pub schedule: String,
    /// The `next_fire_at` the claimer read.
    pub expected: u64,
    /// The `next_fire_at` after the claimed ticks.
    pub next: Option<u64>,
    pub firings: Vec<NewFiring>,
    pub owner: String,
    pub now: u64,
}

/// Schedules and firings. Object safe, `Send + Sync`; every read and write is scoped by
/// tenant except the scheduler's own ([`ScheduleStore::due`], [`ScheduleStore::open_firings`]).
#[async_trait::async_trait]
pub trait ScheduleStore: Send + Sync {
    /// Stores a new schedule; [`crate::StoreError::AlreadyExists`] when the tenant has one of
    /// that id.
    async fn create_schedule(&self, row: &ScheduleRow) -> Result<()>;

    /// Replaces a schedule's definition, pause flag and next fire time (not its source or
    /// creation time); `false` when there is none.
    async fn update_schedule(&self, row: &ScheduleRow) -> Result<bool>;

    /// Creates or refreshes a schedule of hensu.toml (source `config`): a new one as given;
    /// an existing one takes the new definition and keeps its pause flag, and its next fire
    /// time unless its cron or time zone changed. `false` (nothing written) when an API
    /// schedule holds the id.
    async fn put_config_schedule(&self, row: &ScheduleRow) -> Result<bool>;

    async fn get_schedule(&self, tenant: &str, id: &str) -> Result<Option<ScheduleRow>>;

    /// The schedules of `tenant` (every tenant's with `None`), by tenant and id.
    async fn list_schedules(&self, tenant: Option<&str>) -> Result<Vec<ScheduleRow>>;

    /// Deletes a schedule and its firings (its runs stay); `false` when there was none.
    async fn delete_schedule(&self, tenant: &str, id: &str) -> Result<bool>;

    /// Up to `limit` unpaused schedules due at `now` (`next_fire_at <= now`), oldest due first.
    async fn due(&self, now: u64, limit: usize) -> Result<Vec<ScheduleRow>>;

    /// Claims ticks of a due schedule in one transaction: moves `next_fire_at` from
    /// `claim.expected` to `claim.next` unless another server did first (then nothing is written
    /// and the answer is `None`), and inserts `claim.firings` owned by `claim.owner`; answers
    /// the ticks inserted (a tick that has a firing already is not inserted again).
    async fn claim_ticks(&self, claim: &TickClaim) -> Result<Option<Vec<u64>>>;

    /// Inserts one firing (a "run now") owned by `owner`; `false` when the tick has one.
    async fn insert_firing(
        &self,
        tenant: &str,
        id: &str,
        firing: &NewFiring,
        owner: &str,
        now: u64,
    ) -> Result<bool>;

    /// Takes over an open firing (`claimed` or `queued`) for `owner`: a compare-and-set on
    /// the firing's `(state, owner, claimed_at)` as read in `seen`; the firing becomes
    /// `claimed` by `owner` at `now`. `false` when another server changed it first.
    async fn take_firing(&self, seen: &Firing, owner: &str, now: u64) -> Result<bool>;

    /// Records where a firing is now (its run id once started, why it was skipped or failed).
    async fn set_firing(
        &self,
        tenant: &str,
        id: &str,
        tick: u64,
        state: FiringState,
        run_id: Option<&str>,
        detail: Option<&str>,
    ) -> Result<()>;

    /// Up to `limit` open firings (`claimed` or `queued`) of every schedule, oldest first.
    async fn open_firings(&self, limit: usize) -> Result<Vec<Firing>>;

    /// The latest `limit` firings of a schedule, newest first.
    async fn firings(&self, tenant: &str, id: &str, limit: usize) -> Result<Vec<Firing>>;

    /// The run of the schedule's latest started firing.
    async fn last_run(&self, tenant: &str, id: &str) -> Result<Option<String>>;

    /// Deletes finished firings (started, skipped, failed) updated before `before` (unix ms),
    /// never a schedule's latest started one; returns how many went.
    async fn trim_firings(&self, before: u64) -> Result<u64>;
}

pub(crate) fn encode_context(context: &Value) -> Result<Vec<u8>> {
    serde_json::to_vec(context).map_err(|e| {
        crate::StoreError::Invalid(format!("a schedule's context does not serialize: {e}"))
    })
}

pub(crate) fn decode_context(target: &str, bytes: &[u8]) -> Result<Value> {
    serde_json::from_slice(bytes).map_err(|e| crate::StoreError::Corrupt {
        path: std::path::PathBuf::from(target),
        detail: format!("a stored schedule context is not JSON: {e}"),
    })
}

pub(crate) fn state_of(target: &str, s: &str) -> Result<FiringState> {
    FiringState::parse(s).ok_or_else(|| crate::StoreError::Corrupt {
        path: std::path::PathBuf::from(target),
        detail: format!("unknown firing state `{s}`"),
    })
}
