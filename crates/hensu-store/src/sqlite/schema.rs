//! The SQLite schema, its migrations, and the checks made before a file is trusted.

use std::io::Read;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use crate::backend::corrupt;
use crate::time::now_ms;
use crate::{HENSU_VERSION, SCHEMA_VERSION, StoreError};

type Result<T> = crate::Result<T>;

/// The current schema (version 7), created on an empty database.
///
/// - `runs`: the record, plus where the latest snapshot is (`snapshot_step`, its size), how
///   much log has accumulated since (`log_rows`, `log_bytes`: the snapshot policy's input),
///   the run's number (`run_no`, 1, 2, … in creation order: the high half of its log
///   rows' key), and for a forked run the run and step its log continues (`parent_run`,
///   `parent_step`: the parent's rows up to that step are its prefix, see `lineage.rs`);
/// - `run_data`: the workflow each run executes;
/// - `snapshots`: the latest full state of each run, at `step`;
/// - `run_log`: one row per write, keyed by `id = run_no * 2^32 + step` (`log_key!` in
///   `rows.rs`): a run's log is one contiguous range of one b-tree, so a step inserts into
///   one b-tree, not a table and an index; step rows carry the
///   state `delta` (RFC 6902 JSON Patch) replayed on load, plus the node's output and timing;
/// - `leases`: one writer per run;
/// - `run_signals`: the signals sent to each run, numbered per run (`seq`), kept after they
///   were taken (docs/language.md, *Timers and signals*); a paused run's `wake_at` and
///   `waiting_for` say when a claim may take it and which signal wakes it.
/// - `schedules`, `schedule_firings` (version 7): `super::schedules::TABLES`, created beside.
pub(crate) const SCHEMA: &str = "
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
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    snapshot_step    INTEGER NOT NULL DEFAULT 0,
    snapshot_bytes   INTEGER NOT NULL DEFAULT 0,
    log_rows         INTEGER NOT NULL DEFAULT 0,
    log_bytes        INTEGER NOT NULL DEFAULT 0,
    run_no           INTEGER NOT NULL DEFAULT 0,
    parent_run       TEXT,
    parent_step      INTEGER,
    pause_requested  INTEGER NOT NULL DEFAULT 0,
    wake_at          INTEGER,
    waiting_for      TEXT
);
CREATE INDEX IF NOT EXISTS runs_by_wake ON runs (wake_at) WHERE wake_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS run_signals (
    run_id  TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    name    TEXT NOT NULL,
    payload BLOB NOT NULL,
    sent_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS runs_by_no ON runs (run_no);
CREATE INDEX IF NOT EXISTS runs_by_parent ON runs (parent_run) WHERE parent_run IS NOT NULL;
CREATE INDEX IF NOT EXISTS runs_by_start ON runs (started_at DESC, run_id DESC);
CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status);
CREATE INDEX IF NOT EXISTS runs_by_correlation ON runs (correlation_id)
    WHERE correlation_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS run_data (
    run_id   TEXT PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
    workflow BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS snapshots (
    run_id           TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    step             INTEGER NOT NULL,
    snapshot_version INTEGER NOT NULL,
    state            BLOB NOT NULL,
    PRIMARY KEY (run_id, step)
);
CREATE TABLE IF NOT EXISTS run_log (
    id             INTEGER PRIMARY KEY,
    run_id         TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    step           INTEGER NOT NULL,
    kind           TEXT NOT NULL,
    status         TEXT NOT NULL,
    node           TEXT,
    executed_node  TEXT,
    node_status    TEXT,
    output         BLOB,
    delta          BLOB,
    state_version  INTEGER,
    at             INTEGER NOT NULL,
    started_at     INTEGER,
    duration_ms    INTEGER,
    snapshot_bytes INTEGER
);
CREATE TABLE IF NOT EXISTS leases (
    run_id      TEXT PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
    owner       TEXT NOT NULL,
    host        TEXT NOT NULL,
    pid         INTEGER NOT NULL,
    acquired_at INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL
);
";

/// Version 1 kept the latest snapshot in `run_data` and a metadata-only `checkpoints` table.
/// Its snapshot becomes the run's snapshot at the run's current step (status rows after a
/// checkpoint never changed the state), its history rows become log rows without payloads.
const MIGRATE_1_TO_2: &str = "
ALTER TABLE runs ADD COLUMN snapshot_step INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN snapshot_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN log_rows INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN log_bytes INTEGER NOT NULL DEFAULT 0;
CREATE TABLE snapshots (
    run_id           TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    step             INTEGER NOT NULL,
    snapshot_version INTEGER NOT NULL,
    state            BLOB NOT NULL,
    PRIMARY KEY (run_id, step)
);
INSERT INTO snapshots (run_id, step, snapshot_version, state)
    SELECT d.run_id, r.step, d.snapshot_version, d.snapshot
    FROM run_data d JOIN runs r ON r.run_id = d.run_id;
UPDATE runs SET snapshot_step = step,
    snapshot_bytes = coalesce((SELECT length(snapshot) FROM run_data d
                               WHERE d.run_id = runs.run_id), 0);
CREATE TABLE run_log (
    run_id         TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    step           INTEGER NOT NULL,
    kind           TEXT NOT NULL,
    status         TEXT NOT NULL,
    node           TEXT,
    executed_node  TEXT,
    node_status    TEXT,
    output         BLOB,
    delta          BLOB,
    state_version  INTEGER,
    at             INTEGER NOT NULL,
    started_at     INTEGER,
    duration_ms    INTEGER,
    snapshot_bytes INTEGER,
    PRIMARY KEY (run_id, step)
);
INSERT INTO run_log (run_id, step, kind, status, node, at, snapshot_bytes)
    SELECT run_id, step,
           CASE WHEN step = 0 THEN 'created'
                WHEN snapshot_bytes IS NULL THEN 'status'
                ELSE 'snapshot' END,
           status, node, at, snapshot_bytes
    FROM checkpoints;
DROP TABLE checkpoints;
ALTER TABLE run_data DROP COLUMN snapshot;
ALTER TABLE run_data DROP COLUMN snapshot_version;
";

/// Version 2 keyed `run_log` by `(run_id, step)`: a table and its index, two b-trees written
/// per step. Runs get their numbers in their table's order, log rows their one-integer key.
const MIGRATE_2_TO_3: &str = "
ALTER TABLE runs ADD COLUMN run_no INTEGER NOT NULL DEFAULT 0;
UPDATE runs SET run_no = rowid;
CREATE UNIQUE INDEX runs_by_no ON runs (run_no);
CREATE TABLE run_log_v3 (
    id             INTEGER PRIMARY KEY,
    run_id         TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    step           INTEGER NOT NULL,
    kind           TEXT NOT NULL,
    status         TEXT NOT NULL,
    node           TEXT,
    executed_node  TEXT,
    node_status    TEXT,
    output         BLOB,
    delta          BLOB,
    state_version  INTEGER,
    at             INTEGER NOT NULL,
    started_at     INTEGER,
    duration_ms    INTEGER,
    snapshot_bytes INTEGER
);
INSERT INTO run_log_v3 (id, run_id, step, kind, status, node, executed_node, node_status,
                        output, delta, state_version, at, started_at, duration_ms,
                        snapshot_bytes)
    SELECT r.run_no * 4294967296 + l.step, l.run_id, l.step, l.kind, l.status, l.node,
           l.executed_node, l.node_status, l.output, l.delta, l.state_version, l.at,
           l.started_at, l.duration_ms, l.snapshot_bytes
    FROM run_log l JOIN runs r ON r.run_id = l.run_id;
DROP TABLE run_log;
ALTER TABLE run_log_v3 RENAME TO run_log;
";

/// Version 3 had no forks: every run's log was its own.
const MIGRATE_3_TO_4: &str = "
ALTER TABLE runs ADD COLUMN parent_run TEXT;
ALTER TABLE runs ADD COLUMN parent_step INTEGER;
CREATE INDEX runs_by_parent ON runs (parent_run) WHERE parent_run IS NOT NULL;
";

/// Version 4 had no pause request in the store (a local pause was a flag file the running
/// process polled; a server's, a request in its memory).
const MIGRATE_4_TO_5: &str = "
ALTER TABLE runs ADD COLUMN pause_requested INTEGER NOT NULL DEFAULT 0;
";

/// Version 5 had no durable waits: a paused run waited only for a human. Version 6 adds the
/// wake time and awaited signal of a paused run and the signals sent to runs (docs/language.md,
/// *Timers and signals*).
const MIGRATE_5_TO_6: &str = "
ALTER TABLE runs ADD COLUMN wake_at INTEGER;
ALTER TABLE runs ADD COLUMN waiting_for TEXT;
CREATE INDEX runs_by_wake ON runs (wake_at) WHERE wake_at IS NOT NULL;
CREATE TABLE run_signals (
    run_id  TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    name    TEXT NOT NULL,
    payload BLOB NOT NULL,
    sent_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;
";

/// Migrations from each older version to the next, in order: `MIGRATIONS[v - 1]` takes a
/// version-`v` database to `v + 1`.
const MIGRATIONS: &[&str] = &[
    MIGRATE_1_TO_2,
    MIGRATE_2_TO_3,
    MIGRATE_3_TO_4,
    MIGRATE_4_TO_5,
    MIGRATE_5_TO_6,
    // Version 6 had no schedules (docs/schedules.md).
    super::schedules::TABLES,
];

/// Rejects what SQLite would misread: a non-SQLite file, a header cut short, a file shorter
/// than the page count its header declares (when no WAL could make up for it).
pub(crate) fn sniff_header(path: &Path) -> Result<()> {
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

pub(crate) fn quick_check(conn: &Connection, path: &Path) -> Result<()> {
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
pub(crate) fn read_meta(conn: &Connection, path: &Path) -> Result<Option<(i64, String)>> {
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

/// Creates the schema on an empty database, or migrates an older one, in one `IMMEDIATE`
/// transaction (a crash midway leaves the old version intact).
pub(crate) fn init_schema(conn: &mut Connection, path: &Path) -> Result<()> {
    let sq = |e| StoreError::sqlite(path, e);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sq)?;
    // Re-check under the write lock: another process may have initialized it meanwhile.
    match read_meta(&tx, path)? {
        Some((found, written_by)) if !(1..=SCHEMA_VERSION).contains(&found) => {
            return Err(StoreError::IncompatibleVersion {
                path: path.to_path_buf(),
                found,
                written_by,
                supported: SCHEMA_VERSION,
            });
        }
        Some((found, _)) if found < SCHEMA_VERSION => {
            for (from, sql) in MIGRATIONS.iter().enumerate().skip((found - 1) as usize) {
                tx.execute_batch(sql).map_err(|e| {
                    corrupt(
                        path,
                        format!("migrating schema version {} failed: {e}", from + 1),
                    )
                })?;
            }
            tx.execute(
                "UPDATE meta SET value = ?1 WHERE key = 'schema_version'",
                [SCHEMA_VERSION.to_string()],
            )
            .map_err(sq)?;
        }
        _ => tx
            .execute_batch(SCHEMA)
            .and_then(|()| tx.execute_batch(super::schedules::TABLES))
            .map_err(sq)?,
    }
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
