//! The store's error type.

use std::path::PathBuf;

use crate::HENSU_VERSION;
use crate::record::RunStatus;
use crate::time::rfc3339;

/// `Result` with a [`StoreError`].
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Everything a store operation can fail with. No operation panics, whatever the file holds.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error("no run `{run_id}` in the state store")]
    NotFound { run_id: String },

    #[error("a run `{run_id}` already exists in the state store")]
    AlreadyExists { run_id: String },

    /// Another live owner holds the run's lease (one writer per run).
    #[error(
        "run `{run_id}` is locked by {owner} since {} (its lease expires at {} unless renewed)",
        rfc3339(*since),
        rfc3339(*expires_at)
    )]
    RunLocked {
        run_id: String,
        /// `pid@host#nonce` of the holder.
        owner: String,
        /// When the holder took the lease (ms since the Unix epoch).
        since: u64,
        /// When the lease expires unless renewed (ms since the Unix epoch).
        expires_at: u64,
    },

    /// The caller's lease is gone: it expired and was broken by another owner, or it was
    /// released. Reacquire (and reload) before writing again.
    #[error("the lease of {owner} on run `{run_id}` was lost (expired and broken, or released)")]
    LeaseLost { run_id: String, owner: String },

    /// Optimistic concurrency: the run moved on since the writer last saw it.
    #[error(
        "stale write to run `{run_id}`: expected step {expected}, the store is at step {actual} \
         (another writer got there first)"
    )]
    StepConflict {
        run_id: String,
        expected: u64,
        actual: u64,
    },

    /// The run reached a terminal status; it cannot be acquired or checkpointed again.
    #[error("run `{run_id}` is already {status}")]
    Finished { run_id: String, status: RunStatus },

    /// The database was written by another (newer, or unknown) schema version; nothing was
    /// written to it.
    #[error(
        "state store {} has schema version {found} (written by hensu {written_by}); \
         this hensu ({HENSU_VERSION}) supports schema version {supported}: \
         use the hensu that wrote it, or another store",
        path.display()
    )]
    IncompatibleVersion {
        path: PathBuf,
        found: i64,
        written_by: String,
        /// The newest version this build reads ([`crate::SCHEMA_VERSION`] for SQLite,
        /// [`crate::PG_SCHEMA_VERSION`] for PostgreSQL).
        supported: i64,
    },

    /// The file is not a (sound) hensu state store: truncated, garbage, damaged pages, a
    /// foreign SQLite database, undecodable rows.
    #[error("state store {} is corrupt: {detail}", path.display())]
    Corrupt { path: PathBuf, detail: String },

    /// The stored snapshot has another format version than the reader expects.
    #[error(
        "the snapshot of run `{run_id}` has format version {found}, this hensu reads version \
         {expected}"
    )]
    SnapshotVersion {
        run_id: String,
        found: u64,
        expected: u64,
    },

    #[error("state store {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("state store {}: {source}", path.display())]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },

    /// The database cannot be reached now (PostgreSQL: connection refused or lost, the pool
    /// timed out waiting for one): retrying later may succeed; nothing was written.
    #[error("state store {target} is unreachable: {detail}")]
    Unavailable { target: String, detail: String },

    /// PostgreSQL failed (connection, pool, query). `target` is the URL without its password.
    #[error("state store {target}: {detail}")]
    Postgres { target: String, detail: String },

    /// An idempotency key that started another request's run within its window
    /// ([`crate::IDEMPOTENCY_WINDOW_MS`]).
    #[error("idempotency key `{key}` was used for a different request (execution {run_id})")]
    IdempotencyKeyReused { key: String, run_id: String },

    /// A value the store cannot represent (e.g. a step beyond `i64::MAX`).
    #[error("invalid store argument: {0}")]
    Invalid(String),
}

impl StoreError {
    /// Maps an SQLite error: corruption codes become [`StoreError::Corrupt`].
    pub(crate) fn sqlite(path: &std::path::Path, e: rusqlite::Error) -> StoreError {
        use rusqlite::ErrorCode;
        if let rusqlite::Error::SqliteFailure(f, msg) = &e
            && matches!(f.code, ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
        {
            let detail = match msg {
                Some(m) => m.clone(),
                None => f.to_string(),
            };
            return StoreError::Corrupt {
                path: path.to_path_buf(),
                detail,
            };
        }
        StoreError::Sqlite {
            path: path.to_path_buf(),
            source: e,
        }
    }
}
