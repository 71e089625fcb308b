//! The default store: embedded SQLite (bundled), WAL.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, Transaction, TransactionBehavior};
use serde_json::Value;

use crate::owner::LeaseRow;
use crate::time::now_ms;
use crate::{
    CancelRequest, CheckpointMeta, Checkpointed, HENSU_VERSION, Lease, OwnerId, RecordUpdate,
    Renewed, Result, RunRecord, RunStatus, SCHEMA_VERSION, STATE_DB, StateStore, StoreError,
    StoreOptions, StoredRun, decode_snapshot, encode_snapshot,
};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS runs (
    run_id           TEXT PRIMARY KEY,
    workflow_id      TEXT NOT NULL,
    workflow_version TEXT NOT NULL,
    status           TEXT NOT NULL,
    current_node     TEXT,
    started_at       INTEGER NOT NULL,
    updated_at       INTEGER NOT NULL,
    correlation_id   TEXT,
    exit_status      TEXT,
    step             INTEGER NOT NULL,
    cancel_requested INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS runs_by_start ON runs (started_at DESC, run_id DESC);
CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status);
CREATE INDEX IF NOT EXISTS runs_by_correlation ON runs (correlation_id)
    WHERE correlation_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS run_data (
    run_id           TEXT PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
    workflow         BLOB NOT NULL,
    snapshot         BLOB NOT NULL,
    snapshot_version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoints (
    run_id         TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    step           INTEGER NOT NULL,
    node           TEXT,
    status         TEXT NOT NULL,
    at             INTEGER NOT NULL,
    snapshot_bytes INTEGER,
    PRIMARY KEY (run_id, step)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS leases (
    run_id      TEXT PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
    owner       TEXT NOT NULL,
    host        TEXT NOT NULL,
    pid         INTEGER NOT NULL,
    acquired_at INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
);
";

const RECORD_COLS: &str = "run_id, workflow_id, workflow_version, status, current_node, \
     started_at, updated_at, correlation_id, exit_status, step, cancel_requested";

/// The effective SQLite settings of an open store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqliteSettings {
    pub journal_mode: String,
    /// 0 = OFF, 1 = NORMAL, 2 = FULL, 3 = EXTRA.
    pub synchronous: i64,
    pub busy_timeout_ms: i64,
    pub schema_version: i64,
    /// The hensu version that last opened the store for writing.
    pub hensu_version: String,
    pub sqlite_version: String,
}

/// The SQLite store. One connection per handle (behind a mutex); several handles and several
/// processes may open the same file: SQLite's locks plus the run leases coordinate them.
pub struct SqliteStore {
    conn: Mutex<Connection>,
    path: PathBuf,
    opts: StoreOptions,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.path)
            .field("opts", &self.opts)
            .finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (creating if needed) `<project_dir>/.hensu/state.db` with default options.
    pub fn open(project_dir: impl AsRef<Path>) -> Result<SqliteStore> {
        SqliteStore::open_file(project_dir.as_ref().join(STATE_DB), StoreOptions::default())
    }

    /// Opens (creating if needed) the database file `path`.
    ///
    /// Checks, before writing anything: the file header (a non-SQLite or truncated file is
    /// [`StoreError::Corrupt`]), `PRAGMA quick_check` (if [`StoreOptions::verify_on_open`]),
    /// and the schema version in `meta` ([`StoreError::IncompatibleVersion`]).
    pub fn open_file(path: impl AsRef<Path>, opts: StoreOptions) -> Result<SqliteStore> {
        let path = path.as_ref().to_path_buf();
        if let Some(parent) = path.parent()
            && !parent.as_os_str().is_empty()
        {
            std::fs::create_dir_all(parent).map_err(|source| StoreError::Io {
                path: parent.to_path_buf(),
                source,
            })?;
        }
        sniff_header(&path)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn =
            Connection::open_with_flags(&path, flags).map_err(|e| StoreError::sqlite(&path, e))?;
        let sq = |e| StoreError::sqlite(&path, e);
        conn.busy_timeout(opts.busy_timeout).map_err(sq)?;
        if opts.verify_on_open {
            quick_check(&conn, &path)?;
        }
        // The version check comes before any write (the journal mode is one).
        if let Some((found, written_by)) = read_meta(&conn, &path)?
            && found != SCHEMA_VERSION
        {
            return Err(StoreError::IncompatibleVersion {
                path,
                found,
                written_by,
            });
        }
        let _mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
            .map_err(sq)?;
        let sync = match opts.durability {
            crate::Durability::Normal => "NORMAL",
            crate::Durability::Full => "FULL",
        };
        conn.pragma_update(None, "synchronous", sync).map_err(sq)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(sq)?;
        let mut conn = conn;
        init_schema(&mut conn, &path)?;
        Ok(SqliteStore {
            conn: Mutex::new(conn),
            path,
            opts,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn options(&self) -> &StoreOptions {
        &self.opts
    }

    /// The effective settings (for `hensu doctor`-style reports and tests).
    pub fn settings(&self) -> Result<SqliteSettings> {
        let conn = self.lock();
        let sq = |e| StoreError::sqlite(&self.path, e);
        let journal_mode: String = conn
            .pragma_query_value(None, "journal_mode", |r| r.get(0))
            .map_err(sq)?;
        let synchronous: i64 = conn
            .pragma_query_value(None, "synchronous", |r| r.get(0))
            .map_err(sq)?;
        let busy_timeout_ms: i64 = conn
            .pragma_query_value(None, "busy_timeout", |r| r.get(0))
            .map_err(sq)?;
        let (schema_version, hensu_version) =
            read_meta(&conn, &self.path)?.ok_or_else(|| StoreError::Corrupt {
                path: self.path.clone(),
                detail: "the meta table is missing".into(),
            })?;
        Ok(SqliteSettings {
            journal_mode,
            synchronous,
            busy_timeout_ms,
            schema_version,
            hensu_version,
            sqlite_version: rusqlite::version().to_string(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave a transaction half-applied (rusqlite
        // rolls back on drop), so a poisoned connection is still sound.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn sq(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        |e| StoreError::sqlite(&self.path, e)
    }

    /// Runs `f` in a `BEGIN IMMEDIATE` transaction (the write lock is taken up front, so two
    /// writers serialize instead of failing on upgrade).
    fn write<T>(&self, f: impl FnOnce(&Transaction<'_>, &Path) -> Result<T>) -> Result<T> {
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(self.sq())?;
        let out = f(&tx, &self.path)?;
        tx.commit().map_err(self.sq())?;
        Ok(out)
    }

    /// Runs `f` in a read transaction (a consistent view across tables).
    fn read<T>(&self, f: impl FnOnce(&Transaction<'_>, &Path) -> Result<T>) -> Result<T> {
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Deferred)
            .map_err(self.sq())?;
        let out = f(&tx, &self.path)?;
        tx.commit().map_err(self.sq())?;
        Ok(out)
    }
}

fn corrupt(path: &Path, detail: impl Into<String>) -> StoreError {
    StoreError::Corrupt {
        path: path.to_path_buf(),
        detail: detail.into(),
    }
}

fn to_i64(v: u64) -> Result<i64> {
    i64::try_from(v).map_err(|_| StoreError::Invalid(format!("{v} exceeds i64::MAX")))
}

fn to_u64(v: i64, path: &Path, what: &str) -> Result<u64> {
    u64::try_from(v).map_err(|_| corrupt(path, format!("negative {what} ({v})")))
}

fn parse_status(s: &str, path: &Path) -> Result<RunStatus> {
    RunStatus::parse(s).ok_or_else(|| corrupt(path, format!("unknown run status `{s}`")))
}

/// Rejects what SQLite would misread: a non-SQLite file, a header cut short, a file shorter
/// than the page count its header declares (when no WAL could make up for it).
fn sniff_header(path: &Path) -> Result<()> {
    let io = |source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(e)),
    };
    if !meta.is_file() {
        return Err(corrupt(path, "not a regular file"));
    }
    let len = meta.len();
    if len == 0 {
        return Ok(()); // SQLite treats an empty file as a new database.
    }
    let mut header = [0u8; 100];
    let mut file = std::fs::File::open(path).map_err(io)?;
    let mut read = 0;
    while read < header.len() {
        match file.read(&mut header[read..]) {
            Ok(0) => break,
            Ok(n) => read += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io(e)),
        }
    }
    if read < 16 || &header[..16] != b"SQLite format 3\0" {
        return Err(corrupt(
            path,
            "not an SQLite database (the file header is wrong)",
        ));
    }
    if read < 100 {
        return Err(corrupt(
            path,
            format!("truncated: {len} bytes, shorter than the 100-byte header"),
        ));
    }
    let be32 = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let page_size = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536u64,
        n => u64::from(n),
    };
    let pages = u64::from(be32(28));
    let count_valid = be32(24) == be32(92) && pages > 0;
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let wal_len = std::fs::metadata(PathBuf::from(wal))
        .map(|m| m.len())
        .unwrap_or(0);
    if count_valid && wal_len == 0 && len < pages.saturating_mul(page_size) {
        return Err(corrupt(
            path,
            format!(
                "truncated: the file has {len} bytes, its header declares {pages} pages of \
                 {page_size} bytes ({} bytes)",
                pages.saturating_mul(page_size)
            ),
        ));
    }
    Ok(())
}

fn quick_check(conn: &Connection, path: &Path) -> Result<()> {
    let sq = |e| StoreError::sqlite(path, e);
    let mut stmt = conn.prepare("PRAGMA quick_check").map_err(sq)?;
    let rows = stmt
        .query_map([], |r| r.get::<_, String>(0))
        .map_err(sq)?
        .take(5)
        .collect::<rusqlite::Result<Vec<String>>>()
        .map_err(sq)?;
    if rows.len() == 1 && rows[0] == "ok" {
        Ok(())
    } else {
        Err(corrupt(
            path,
            format!("integrity check failed: {}", rows.join("; ")),
        ))
    }
}

/// `(schema_version, hensu_version)` from `meta`, `None` for an empty database.
fn read_meta(conn: &Connection, path: &Path) -> Result<Option<(i64, String)>> {
    let sq = |e| StoreError::sqlite(path, e);
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )
        .map_err(sq)?;
    let has_meta: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
            [],
            |r| r.get(0),
        )
        .map_err(sq)?;
    if has_meta == 0 {
        if tables > 0 {
            return Err(corrupt(
                path,
                "an SQLite database that is not a hensu state store (no meta table)",
            ));
        }
        return Ok(None);
    }
    let get = |key: &str| -> Result<Option<String>> {
        conn.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| {
            r.get::<_, String>(0)
        })
        .optional()
        .map_err(sq)
    };
    let version = get("schema_version")?;
    let written_by = get("hensu_version")?.unwrap_or_else(|| "unknown".into());
    match version {
        // Created by a process that died between creating meta and filling it: the schema
        // initialization (idempotent) will complete it.
        None if tables == 1 => Ok(None),
        None => Err(corrupt(path, "the meta table has no schema_version")),
        Some(v) => match v.trim().parse::<i64>() {
            Ok(n) => Ok(Some((n, written_by))),
            Err(_) => Err(corrupt(
                path,
                format!("schema_version `{v}` is not a number"),
            )),
        },
    }
}

fn init_schema(conn: &mut Connection, path: &Path) -> Result<()> {
    let sq = |e| StoreError::sqlite(path, e);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sq)?;
    // Re-check under the write lock: another process may have initialized it meanwhile.
    if let Some((found, written_by)) = read_meta(&tx, path)?
        && found != SCHEMA_VERSION
    {
        return Err(StoreError::IncompatibleVersion {
            path: path.to_path_buf(),
            found,
            written_by,
        });
    }
    tx.execute_batch(SCHEMA).map_err(sq)?;
    let now = now_ms().to_string();
    tx.execute(
        "INSERT OR IGNORE INTO meta (key, value) VALUES \
         ('schema_version', ?1), ('created_by', ?2), ('created_at', ?3)",
        rusqlite::params![SCHEMA_VERSION.to_string(), HENSU_VERSION, now],
    )
    .map_err(sq)?;
    tx.execute(
        "INSERT INTO meta (key, value) VALUES ('hensu_version', ?1) \
         ON CONFLICT (key) DO UPDATE SET value = excluded.value WHERE value <> excluded.value",
        [HENSU_VERSION],
    )
    .map_err(sq)?;
    tx.commit().map_err(sq)
}

struct RawRecord {
    run_id: String,
    workflow_id: String,
    workflow_version: String,
    status: String,
    current_node: Option<String>,
    started_at: i64,
    updated_at: i64,
    correlation_id: Option<String>,
    exit_status: Option<String>,
    step: i64,
    cancel_requested: i64,
}

impl RawRecord {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<RawRecord> {
        Ok(RawRecord {
            run_id: r.get(0)?,
            workflow_id: r.get(1)?,
            workflow_version: r.get(2)?,
            status: r.get(3)?,
            current_node: r.get(4)?,
            started_at: r.get(5)?,
            updated_at: r.get(6)?,
            correlation_id: r.get(7)?,
            exit_status: r.get(8)?,
            step: r.get(9)?,
            cancel_requested: r.get(10)?,
        })
    }

    fn into_record(self, path: &Path) -> Result<RunRecord> {
        Ok(RunRecord {
            status: parse_status(&self.status, path)?,
            started_at: to_u64(self.started_at, path, "started_at")?,
            updated_at: to_u64(self.updated_at, path, "updated_at")?,
            step: to_u64(self.step, path, "step")?,
            cancel_requested: self.cancel_requested != 0,
            run_id: self.run_id,
            workflow_id: self.workflow_id,
            workflow_version: self.workflow_version,
            current_node: self.current_node,
            correlation_id: self.correlation_id,
            exit_status: self.exit_status,
        })
    }
}

fn get_record(tx: &Transaction<'_>, path: &Path, run_id: &str) -> Result<RunRecord> {
    let sql = format!("SELECT {RECORD_COLS} FROM runs WHERE run_id = ?1");
    let raw = tx
        .prepare_cached(&sql)
        .and_then(|mut s| s.query_row([run_id], RawRecord::from_row).optional())
        .map_err(|e| StoreError::sqlite(path, e))?;
    match raw {
        Some(raw) => raw.into_record(path),
        None => Err(StoreError::NotFound {
            run_id: run_id.to_string(),
        }),
    }
}

fn get_lease(tx: &Transaction<'_>, path: &Path, run_id: &str) -> Result<Option<LeaseRow>> {
    let raw = tx
        .prepare_cached(
            "SELECT owner, host, pid, acquired_at, expires_at FROM leases WHERE run_id = ?1",
        )
        .and_then(|mut s| {
            s.query_row([run_id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, i64>(4)?,
                ))
            })
            .optional()
        })
        .map_err(|e| StoreError::sqlite(path, e))?;
    match raw {
        None => Ok(None),
        Some((owner, host, pid, acquired_at, expires_at)) => Ok(Some(LeaseRow {
            owner,
            host,
            pid,
            acquired_at: to_u64(acquired_at, path, "acquired_at")?,
            expires_at: to_u64(expires_at, path, "expires_at")?,
        })),
    }
}

fn put_lease(tx: &Transaction<'_>, path: &Path, run_id: &str, row: &LeaseRow) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO leases (run_id, owner, host, pid, acquired_at, expires_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
         ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, host = excluded.host, \
         pid = excluded.pid, acquired_at = excluded.acquired_at, expires_at = excluded.expires_at",
    )
    .and_then(|mut s| {
        s.execute(rusqlite::params![
            run_id,
            row.owner,
            row.host,
            row.pid,
            to_i64(row.acquired_at).unwrap_or(i64::MAX),
            to_i64(row.expires_at).unwrap_or(i64::MAX),
        ])
    })
    .map(|_| ())
    .map_err(|e| StoreError::sqlite(path, e))
}

fn renew_lease(tx: &Transaction<'_>, path: &Path, run_id: &str, expires_at: u64) -> Result<()> {
    tx.prepare_cached("UPDATE leases SET expires_at = ?2 WHERE run_id = ?1")
        .and_then(|mut s| {
            s.execute(rusqlite::params![
                run_id,
                to_i64(expires_at).unwrap_or(i64::MAX)
            ])
        })
        .map(|_| ())
        .map_err(|e| StoreError::sqlite(path, e))
}

fn delete_lease(tx: &Transaction<'_>, path: &Path, run_id: &str) -> Result<()> {
    tx.prepare_cached("DELETE FROM leases WHERE run_id = ?1")
        .and_then(|mut s| s.execute([run_id]))
        .map(|_| ())
        .map_err(|e| StoreError::sqlite(path, e))
}

fn locked(run_id: &str, row: &LeaseRow) -> StoreError {
    StoreError::RunLocked {
        run_id: run_id.to_string(),
        owner: row.owner.clone(),
        since: row.acquired_at,
        expires_at: row.expires_at,
    }
}

/// Checks that `lease` is the run's current lease.
fn check_holder(tx: &Transaction<'_>, path: &Path, lease: &Lease, now: u64) -> Result<()> {
    let me = lease.owner.to_string();
    match get_lease(tx, path, &lease.run_id)? {
        Some(row) if row.owner == me => Ok(()),
        Some(row) if row.blocks(&me, now) => Err(locked(&lease.run_id, &row)),
        _ => Err(StoreError::LeaseLost {
            run_id: lease.run_id.clone(),
            owner: me,
        }),
    }
}

/// The write path shared by `set_status` and `request_cancel`: updates the record, bumps the
/// step, appends a history row.
fn apply_update(
    tx: &Transaction<'_>,
    path: &Path,
    run_id: &str,
    step: u64,
    update: &RecordUpdate,
    now: u64,
    snapshot_bytes: Option<u64>,
) -> Result<()> {
    let sq = |e| StoreError::sqlite(path, e);
    tx.prepare_cached(
        "UPDATE runs SET status = ?2, current_node = ?3, correlation_id = ?4, exit_status = ?5, \
         step = ?6, updated_at = ?7 WHERE run_id = ?1",
    )
    .and_then(|mut s| {
        s.execute(rusqlite::params![
            run_id,
            update.status.as_str(),
            update.current_node,
            update.correlation_id,
            update.exit_status,
            to_i64(step).unwrap_or(i64::MAX),
            to_i64(now).unwrap_or(i64::MAX),
        ])
    })
    .map_err(sq)?;
    let bytes = match snapshot_bytes {
        Some(b) => Some(to_i64(b)?),
        None => None,
    };
    tx.prepare_cached(
        "INSERT OR REPLACE INTO checkpoints (run_id, step, node, status, at, snapshot_bytes) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )
    .and_then(|mut s| {
        s.execute(rusqlite::params![
            run_id,
            to_i64(step).unwrap_or(i64::MAX),
            update.current_node,
            update.status.as_str(),
            to_i64(now).unwrap_or(i64::MAX),
            bytes,
        ])
    })
    .map_err(sq)?;
    if update.status.is_terminal() {
        delete_lease(tx, path, run_id)?;
    }
    Ok(())
}

impl StateStore for SqliteStore {
    fn create_run(&self, record: &RunRecord, workflow: &Value, snapshot: &Value) -> Result<()> {
        let wf = serde_json::to_vec(workflow)
            .map_err(|e| StoreError::Invalid(format!("workflow does not serialize: {e}")))?;
        let snap = encode_snapshot(self.opts.snapshot_version, snapshot)?;
        let version = to_i64(self.opts.snapshot_version)?;
        let (started, updated, step) = (
            to_i64(record.started_at)?,
            to_i64(record.updated_at)?,
            to_i64(record.step)?,
        );
        let snap_len = to_i64(snap.len() as u64)?;
        self.write(|tx, path| {
            let sq = |e| StoreError::sqlite(path, e);
            let inserted = tx
                .execute(
                    &format!(
                        "INSERT OR IGNORE INTO runs ({RECORD_COLS}) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
                    ),
                    rusqlite::params![
                        record.run_id,
                        record.workflow_id,
                        record.workflow_version,
                        record.status.as_str(),
                        record.current_node,
                        started,
                        updated,
                        record.correlation_id,
                        record.exit_status,
                        step,
                        i64::from(record.cancel_requested),
                    ],
                )
                .map_err(sq)?;
            if inserted == 0 {
                return Err(StoreError::AlreadyExists {
                    run_id: record.run_id.clone(),
                });
            }
            tx.execute(
                "INSERT INTO run_data (run_id, workflow, snapshot, snapshot_version) \
                 VALUES (?1, ?2, ?3, ?4)",
                rusqlite::params![record.run_id, wf, snap, version],
            )
            .map_err(sq)?;
            tx.execute(
                "INSERT INTO checkpoints (run_id, step, node, status, at, snapshot_bytes) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                rusqlite::params![
                    record.run_id,
                    step,
                    record.current_node,
                    record.status.as_str(),
                    updated,
                    snap_len,
                ],
            )
            .map_err(sq)?;
            Ok(())
        })
    }

    fn acquire(&self, run_id: &str, owner: &OwnerId) -> Result<Lease> {
        let ttl = self.opts.ttl_ms();
        self.write(|tx, path| {
            let record = get_record(tx, path, run_id)?;
            if record.status.is_terminal() {
                return Err(StoreError::Finished {
                    run_id: run_id.to_string(),
                    status: record.status,
                });
            }
            let now = now_ms();
            let me = owner.to_string();
            let mut row = LeaseRow::new(owner, now, ttl);
            if let Some(held) = get_lease(tx, path, run_id)? {
                if held.blocks(&me, now) {
                    return Err(locked(run_id, &held));
                }
                if held.owner == me {
                    row.acquired_at = held.acquired_at;
                }
            }
            put_lease(tx, path, run_id, &row)?;
            Ok(Lease {
                run_id: run_id.to_string(),
                owner: owner.clone(),
                acquired_at: row.acquired_at,
                expires_at: row.expires_at,
            })
        })
    }

    fn heartbeat(&self, lease: &Lease) -> Result<Renewed> {
        let ttl = self.opts.ttl_ms();
        self.write(|tx, path| {
            let now = now_ms();
            check_holder(tx, path, lease, now)?;
            let expires_at = now.saturating_add(ttl);
            renew_lease(tx, path, &lease.run_id, expires_at)?;
            let record = get_record(tx, path, &lease.run_id)?;
            Ok(Renewed {
                expires_at,
                cancel_requested: record.cancel_requested,
            })
        })
    }

    fn release(&self, lease: &Lease) -> Result<()> {
        let me = lease.owner.to_string();
        self.write(|tx, path| {
            tx.execute(
                "DELETE FROM leases WHERE run_id = ?1 AND owner = ?2",
                rusqlite::params![lease.run_id, me],
            )
            .map(|_| ())
            .map_err(|e| StoreError::sqlite(path, e))
        })
    }

    fn checkpoint(
        &self,
        lease: &Lease,
        expected_step: u64,
        update: &RecordUpdate,
        snapshot: &Value,
    ) -> Result<Checkpointed> {
        // Encode outside the lock: the transaction only copies bytes.
        let snap = encode_snapshot(self.opts.snapshot_version, snapshot)?;
        let version = to_i64(self.opts.snapshot_version)?;
        let ttl = self.opts.ttl_ms();
        let run_id = lease.run_id.as_str();
        self.write(|tx, path| {
            let now = now_ms();
            let record = get_record(tx, path, run_id)?;
            if record.status.is_terminal() {
                return Err(StoreError::Finished {
                    run_id: run_id.to_string(),
                    status: record.status,
                });
            }
            check_holder(tx, path, lease, now)?;
            if record.step != expected_step {
                return Err(StoreError::StepConflict {
                    run_id: run_id.to_string(),
                    expected: expected_step,
                    actual: record.step,
                });
            }
            let step = expected_step.saturating_add(1);
            tx.prepare_cached(
                "UPDATE run_data SET snapshot = ?2, snapshot_version = ?3 WHERE run_id = ?1",
            )
            .and_then(|mut s| s.execute(rusqlite::params![run_id, snap, version]))
            .map_err(|e| StoreError::sqlite(path, e))?;
            apply_update(tx, path, run_id, step, update, now, Some(snap.len() as u64))?;
            let lease_expires_at = now.saturating_add(ttl);
            if !update.status.is_terminal() {
                renew_lease(tx, path, run_id, lease_expires_at)?;
            }
            Ok(Checkpointed {
                step,
                at: now,
                lease_expires_at,
                cancel_requested: record.cancel_requested,
            })
        })
    }

    fn set_status(
        &self,
        run_id: &str,
        lease: Option<&Lease>,
        expected_step: u64,
        update: &RecordUpdate,
    ) -> Result<RunRecord> {
        self.write(|tx, path| {
            let now = now_ms();
            let record = get_record(tx, path, run_id)?;
            match lease {
                Some(l) if l.run_id == run_id => check_holder(tx, path, l, now)?,
                Some(l) => {
                    return Err(StoreError::Invalid(format!(
                        "a lease on `{}` used for run `{run_id}`",
                        l.run_id
                    )));
                }
                None => {
                    if let Some(held) = get_lease(tx, path, run_id)?
                        && held.blocks("", now)
                    {
                        return Err(locked(run_id, &held));
                    }
                }
            }
            if record.step != expected_step {
                return Err(StoreError::StepConflict {
                    run_id: run_id.to_string(),
                    expected: expected_step,
                    actual: record.step,
                });
            }
            let step = expected_step.saturating_add(1);
            apply_update(tx, path, run_id, step, update, now, None)?;
            get_record(tx, path, run_id)
        })
    }

    fn request_cancel(&self, run_id: &str) -> Result<CancelRequest> {
        self.write(|tx, path| {
            let now = now_ms();
            let record = get_record(tx, path, run_id)?;
            if record.status.is_terminal() {
                return Ok(CancelRequest::AlreadyFinished(record.status));
            }
            if let Some(held) = get_lease(tx, path, run_id)?
                && held.blocks("", now)
            {
                tx.execute(
                    "UPDATE runs SET cancel_requested = 1 WHERE run_id = ?1",
                    [run_id],
                )
                .map_err(|e| StoreError::sqlite(path, e))?;
                return Ok(CancelRequest::Requested { owner: held.owner });
            }
            let update =
                RecordUpdate::finished(RunStatus::Cancelled, record.current_node.clone(), None);
            apply_update(
                tx,
                path,
                run_id,
                record.step.saturating_add(1),
                &update,
                now,
                None,
            )?;
            Ok(CancelRequest::Cancelled(get_record(tx, path, run_id)?))
        })
    }

    fn load(&self, run_id: &str) -> Result<StoredRun> {
        let expected = self.opts.snapshot_version;
        self.read(|tx, path| {
            let record = get_record(tx, path, run_id)?;
            let (wf, snap, version): (Vec<u8>, Vec<u8>, i64) = tx
                .prepare_cached(
                    "SELECT workflow, snapshot, snapshot_version FROM run_data WHERE run_id = ?1",
                )
                .and_then(|mut s| {
                    s.query_row([run_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                        .optional()
                })
                .map_err(|e| StoreError::sqlite(path, e))?
                .ok_or_else(|| corrupt(path, format!("run `{run_id}` has no data row")))?;
            let version = to_u64(version, path, "snapshot_version")?;
            if version != expected {
                return Err(StoreError::SnapshotVersion {
                    run_id: run_id.to_string(),
                    found: version,
                    expected,
                });
            }
            let (inner, snapshot) = decode_snapshot(&snap)
                .map_err(|d| corrupt(path, format!("run `{run_id}`: {d}")))?;
            if inner != version {
                return Err(corrupt(
                    path,
                    format!(
                        "run `{run_id}`: the snapshot envelope says version {inner}, its row \
                         says {version}"
                    ),
                ));
            }
            let workflow: Value = serde_json::from_slice(&wf)
                .map_err(|e| corrupt(path, format!("run `{run_id}`: undecodable workflow: {e}")))?;
            Ok(StoredRun {
                record,
                workflow,
                snapshot,
                snapshot_version: version,
            })
        })
    }

    fn record(&self, run_id: &str) -> Result<RunRecord> {
        self.read(|tx, path| get_record(tx, path, run_id))
    }

    fn list(&self) -> Result<Vec<RunRecord>> {
        self.read(|tx, path| {
            let sql =
                format!("SELECT {RECORD_COLS} FROM runs ORDER BY started_at DESC, run_id DESC");
            let raws = tx
                .prepare_cached(&sql)
                .and_then(|mut s| {
                    s.query_map([], RawRecord::from_row)?
                        .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(|e| StoreError::sqlite(path, e))?;
            raws.into_iter().map(|r| r.into_record(path)).collect()
        })
    }

    fn find_by_correlation(&self, correlation_id: &str) -> Result<Option<RunRecord>> {
        self.read(|tx, path| {
            let sql = format!(
                "SELECT {RECORD_COLS} FROM runs WHERE correlation_id = ?1 \
                 ORDER BY updated_at DESC LIMIT 1"
            );
            let raw = tx
                .prepare_cached(&sql)
                .and_then(|mut s| {
                    s.query_row([correlation_id], RawRecord::from_row)
                        .optional()
                })
                .map_err(|e| StoreError::sqlite(path, e))?;
            raw.map(|r| r.into_record(path)).transpose()
        })
    }

    fn history(&self, run_id: &str) -> Result<Vec<CheckpointMeta>> {
        self.read(|tx, path| {
            get_record(tx, path, run_id)?;
            let rows = tx
                .prepare_cached(
                    "SELECT step, node, status, at, snapshot_bytes FROM checkpoints \
                     WHERE run_id = ?1 ORDER BY step",
                )
                .and_then(|mut s| {
                    s.query_map([run_id], |r| {
                        Ok((
                            r.get::<_, i64>(0)?,
                            r.get::<_, Option<String>>(1)?,
                            r.get::<_, String>(2)?,
                            r.get::<_, i64>(3)?,
                            r.get::<_, Option<i64>>(4)?,
                        ))
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()
                })
                .map_err(|e| StoreError::sqlite(path, e))?;
            rows.into_iter()
                .map(|(step, node, status, at, bytes)| {
                    Ok(CheckpointMeta {
                        step: to_u64(step, path, "step")?,
                        node,
                        status: parse_status(&status, path)?,
                        at: to_u64(at, path, "at")?,
                        snapshot_bytes: match bytes {
                            Some(b) => Some(to_u64(b, path, "snapshot_bytes")?),
                            None => None,
                        },
                    })
                })
                .collect()
        })
    }
}
