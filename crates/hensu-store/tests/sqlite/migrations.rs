//! Databases of older schema versions, opened (so migrated) by the store.

use std::path::Path;

use serde_json::{Value, json};

use crate::conformance::{SyncStore, block, owner, record, workflow};
use crate::opts;
use hensu_store::{RecordUpdate, SqliteStore};

/// A snapshot as every schema version stores it: `{"snapshot_version": 1, "state": …}`.
fn envelope(state: Value) -> Vec<u8> {
    json!({"snapshot_version": 1, "state": state})
        .to_string()
        .into_bytes()
}

/// A database written by `write` (an older schema), opened (so migrated) by the store.
fn migrated(write: fn(&Path)) -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    write(&path);
    let s = SqliteStore::open_file(&path, opts()).expect("open migrates");
    assert_eq!(
        block(s.settings()).expect("settings").schema_version,
        hensu_store::SCHEMA_VERSION
    );
    (dir, s)
}

/// A database as hensu's schema version 1 wrote it (full snapshot in `run_data`, metadata in
/// `checkpoints`): two runs, one with a status change after its last checkpoint.
fn write_v1_database(path: &Path) {
    let c = rusqlite::Connection::open(path).expect("open");
    c.execute_batch(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
         CREATE TABLE runs (
            run_id TEXT PRIMARY KEY, workflow_id TEXT NOT NULL, workflow_version TEXT NOT NULL,
            status TEXT NOT NULL, current_node TEXT, started_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL, correlation_id TEXT, exit_status TEXT,
            step INTEGER NOT NULL, cancel_requested INTEGER NOT NULL DEFAULT 0);
         CREATE INDEX runs_by_start ON runs (started_at DESC, run_id DESC);
         CREATE INDEX runs_by_status ON runs (status);
         CREATE INDEX runs_by_correlation ON runs (correlation_id)
             WHERE correlation_id IS NOT NULL;
         CREATE TABLE run_data (
            run_id TEXT PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
            workflow BLOB NOT NULL, snapshot BLOB NOT NULL, snapshot_version INTEGER NOT NULL);
         CREATE TABLE checkpoints (
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            step INTEGER NOT NULL, node TEXT, status TEXT NOT NULL, at INTEGER NOT NULL,
            snapshot_bytes INTEGER, PRIMARY KEY (run_id, step)) WITHOUT ROWID;
         CREATE TABLE leases (
            run_id TEXT PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
            owner TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL,
            acquired_at INTEGER NOT NULL, expires_at INTEGER NOT NULL);
         INSERT INTO meta VALUES ('schema_version', '1'), ('hensu_version', '0.0.9'),
            ('created_by', '0.0.9'), ('created_at', '1000');
         INSERT INTO runs VALUES ('old', 'wf', 'v1', 'failed', 'n2', 1000, 4000, NULL, NULL, 3, 0);
         INSERT INTO runs VALUES ('paused', 'wf', 'v1', 'paused', 'review', 2000, 2500, 'c-9',
            NULL, 1, 0);
         INSERT INTO checkpoints VALUES ('old', 0, 'start', 'running', 1000, 40),
            ('old', 1, 'n1', 'running', 2000, 50), ('old', 2, 'n2', 'running', 3000, 60),
            ('old', 3, 'n2', 'failed', 4000, NULL),
            ('paused', 0, 'start', 'running', 2000, 30), ('paused', 1, 'review', 'paused', 2500, 45);",
    )
    .expect("v1 schema");
    c.execute(
        "INSERT INTO run_data VALUES ('old', ?1, ?2, 1), ('paused', ?1, ?3, 1)",
        rusqlite::params![
            workflow().to_string().into_bytes(),
            envelope(json!({"at": "n2", "context": {"k": 2}})),
            envelope(json!({"at": "review"})),
        ],
    )
    .expect("v1 data");
}

#[test]
fn version_1_databases_are_migrated() {
    let (dir, s) = migrated(write_v1_database);
    let path = dir.path().join("state.db");
    let st = block(s.settings()).expect("settings");
    assert_eq!(st.hensu_version, hensu_store::HENSU_VERSION);
    let old = s.load("old").expect("load");
    assert_eq!(old.snapshot, json!({"at": "n2", "context": {"k": 2}}));
    assert_eq!(old.workflow, workflow());
    assert_eq!(old.record.step, 3);
    let h = s.history("old").expect("history");
    let kinds: Vec<&str> = h.iter().map(|m| m.kind.as_str()).collect();
    assert_eq!(kinds, ["created", "snapshot", "snapshot", "status"]);
    assert_eq!(h[2].snapshot_bytes, Some(60));
    // The paused run goes on with appends on top of its migrated snapshot.
    let lease = s.acquire("paused", &owner("m")).expect("acquire");
    let entry = hensu_store::StepEntry {
        delta: hensu_store::StateDelta::new().set(&["resumed"], json!(true)),
        ..hensu_store::StepEntry::default()
    };
    s.append(&lease, 1, &RecordUpdate::running("next"), &entry)
        .expect("append");
    assert_eq!(
        s.load("paused").expect("load").snapshot,
        json!({"at": "review", "resumed": true})
    );
    drop(s);
    // Opening again is a no-op.
    let again = SqliteStore::open_file(&path, opts()).expect("reopen");
    assert_eq!(again.list().expect("list").len(), 2);
}

/// A database as hensu's schema version 2 wrote it: `run_log` keyed by `(run_id, step)`; two
/// runs whose logs interleave (a snapshot, then deltas to replay).
fn write_v2_database(path: &Path) {
    let c = rusqlite::Connection::open(path).expect("open");
    c.execute_batch(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
         CREATE TABLE runs (
            run_id TEXT PRIMARY KEY, workflow_id TEXT NOT NULL, workflow_version TEXT NOT NULL,
            status TEXT NOT NULL, current_node TEXT, started_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL, correlation_id TEXT, exit_status TEXT,
            step INTEGER NOT NULL, cancel_requested INTEGER NOT NULL DEFAULT 0,
            snapshot_step INTEGER NOT NULL DEFAULT 0, snapshot_bytes INTEGER NOT NULL DEFAULT 0,
            log_rows INTEGER NOT NULL DEFAULT 0, log_bytes INTEGER NOT NULL DEFAULT 0);
         CREATE INDEX runs_by_start ON runs (started_at DESC, run_id DESC);
         CREATE INDEX runs_by_status ON runs (status);
         CREATE INDEX runs_by_correlation ON runs (correlation_id)
             WHERE correlation_id IS NOT NULL;
         CREATE TABLE run_data (
            run_id TEXT PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
            workflow BLOB NOT NULL);
         CREATE TABLE snapshots (
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            step INTEGER NOT NULL, snapshot_version INTEGER NOT NULL, state BLOB NOT NULL,
            PRIMARY KEY (run_id, step));
         CREATE TABLE run_log (
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            step INTEGER NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL, node TEXT,
            executed_node TEXT, node_status TEXT, output BLOB, delta BLOB,
            state_version INTEGER, at INTEGER NOT NULL, started_at INTEGER,
            duration_ms INTEGER, snapshot_bytes INTEGER, PRIMARY KEY (run_id, step));
         CREATE TABLE leases (
            run_id TEXT PRIMARY KEY REFERENCES runs (run_id) ON DELETE CASCADE,
            owner TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL,
            acquired_at INTEGER NOT NULL, expires_at INTEGER NOT NULL);
         INSERT INTO meta VALUES ('schema_version', '2'), ('hensu_version', '0.1.0'),
            ('created_by', '0.1.0'), ('created_at', '1000');
         INSERT INTO runs VALUES ('b', 'wf', 'v1', 'running', 'n3', 1000, 4000, NULL, NULL, 2, 0,
            0, 40, 2, 80);
         INSERT INTO runs VALUES ('a', 'wf', 'v1', 'paused', 'n2', 2000, 3000, NULL, NULL, 1, 0,
            0, 40, 1, 40);",
    )
    .expect("v2 schema");
    let delta = |op: Value| op.to_string().into_bytes();
    for (run, at) in [("b", 1000), ("a", 2000)] {
        c.execute(
            "INSERT INTO run_data VALUES (?1, ?2)",
            rusqlite::params![run, workflow().to_string().into_bytes()],
        )
        .expect("v2 data");
        c.execute(
            "INSERT INTO snapshots VALUES (?1, 0, 1, ?2)",
            rusqlite::params![run, envelope(json!({"run": run, "n": 0}))],
        )
        .expect("v2 snapshot");
        c.execute(
            "INSERT INTO run_log (run_id, step, kind, status, node, at, snapshot_bytes) \
             VALUES (?1, 0, 'created', 'running', 'n1', ?2, 40)",
            rusqlite::params![run, at],
        )
        .expect("v2 created row");
    }
    for (run, step) in [("b", 1), ("a", 1), ("b", 2)] {
        c.execute(
            "INSERT INTO run_log (run_id, step, kind, status, node, executed_node, node_status, \
             output, delta, state_version, at) \
             VALUES (?1, ?2, 'step', 'running', 'n', 'n', 'SUCCESS', ?3, ?4, 1, 3000)",
            rusqlite::params![
                run,
                step,
                json!(format!("{run}{step}")).to_string().into_bytes(),
                delta(json!([{"op": "replace", "path": "/n", "value": step}])),
            ],
        )
        .expect("v2 step row");
    }
}

#[test]
fn version_2_databases_are_migrated() {
    let (_dir, s) = migrated(write_v2_database);
    // Each run replays its own deltas, in step order.
    assert_eq!(
        s.load("b").expect("load b").snapshot,
        json!({"run": "b", "n": 2})
    );
    assert_eq!(
        s.load("a").expect("load a").snapshot,
        json!({"run": "a", "n": 1})
    );
    let steps = |run: &str| -> Vec<(u64, String)> {
        s.history(run)
            .expect("history")
            .into_iter()
            .map(|m| (m.step, m.kind.as_str().to_string()))
            .collect()
    };
    assert_eq!(
        steps("b"),
        [
            (0, "created".into()),
            (1, "step".into()),
            (2, "step".into())
        ]
    );
    assert_eq!(steps("a"), [(0, "created".into()), (1, "step".into())]);
    let log = s.read_log("b", 1, 10).expect("read_log");
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].meta.step, 2);
    assert_eq!(log[0].output, Some(json!("b2")));
    // The migrated run goes on; a run created after the migration gets its own key range.
    let lease = s.acquire("b", &owner("m")).expect("acquire");
    let entry = hensu_store::StepEntry {
        delta: hensu_store::StateDelta::new().replace(&["n"], json!(3)),
        ..hensu_store::StepEntry::default()
    };
    s.append(&lease, 2, &RecordUpdate::running("n4"), &entry)
        .expect("append");
    assert_eq!(
        s.load("b").expect("load").snapshot,
        json!({"run": "b", "n": 3})
    );
    s.create_run(&record("c", 5_000), &workflow(), &json!({"run": "c"}))
        .expect("create after migration");
    assert_eq!(steps("c"), [(0, "created".into())]);
    assert_eq!(steps("b").len(), 4);
    assert_eq!(steps("a").len(), 2);
    assert_eq!(s.load("c").expect("load c").snapshot, json!({"run": "c"}));
}

/// A database as hensu's schema version 3 wrote it: the current schema without the fork
/// columns (version 4), the pause request (version 5), the durable waits (version 6) and the
/// schedules (version 7), one run with three steps.
fn write_v3_database(path: &Path) {
    {
        let s = SqliteStore::open_file(path, opts()).expect("create");
        s.create_run(&record("p", 1_000), &workflow(), &json!({"n": 0}))
            .expect("create p");
        let lease = s.acquire("p", &owner("v3")).expect("acquire");
        for n in 1..=3u64 {
            let entry = hensu_store::StepEntry {
                delta: hensu_store::StateDelta::new().replace(&["n"], json!(n)),
                ..hensu_store::StepEntry::default()
            };
            s.append(&lease, n - 1, &RecordUpdate::running("n"), &entry)
                .expect("append");
        }
    }
    let c = rusqlite::Connection::open(path).expect("open");
    c.execute_batch(
        "DROP TABLE schedules;
         DROP TABLE schedule_firings;
         DROP INDEX runs_by_parent;
         DROP INDEX runs_by_wake;
         DROP TABLE run_signals;
         ALTER TABLE runs DROP COLUMN waiting_for;
         ALTER TABLE runs DROP COLUMN wake_at;
         ALTER TABLE runs DROP COLUMN pause_requested;
         ALTER TABLE runs DROP COLUMN parent_step;
         ALTER TABLE runs DROP COLUMN parent_run;
         UPDATE meta SET value = '3' WHERE key = 'schema_version';",
    )
    .expect("back to version 3");
}

#[test]
fn version_3_databases_are_migrated_and_fork() {
    let (_dir, s) = migrated(write_v3_database);
    assert_eq!(s.record("p").expect("record").parent, None);
    assert_eq!(s.load("p").expect("load").snapshot, json!({"n": 3}));
    let mut child = record("c", 0);
    child.status = hensu_store::RunStatus::Queued;
    let forked = s
        .fork(&hensu_store::ForkSpec {
            parent: hensu_store::RunParent {
                run_id: "p".into(),
                step: 2,
            },
            record: child,
            workflow: None,
            edits: hensu_store::StateDelta::new(),
            tenant: None,
        })
        .expect("fork after the migration");
    assert_eq!(forked.step, 3);
    assert_eq!(s.load("c").expect("load").snapshot, json!({"n": 2}));
    assert_eq!(s.history("c").expect("history").len(), 4);
    // Version 7: the schedule tables are there.
    let schedules = hensu_store::StateStore::schedules(&s);
    assert!(
        block(schedules.list_schedules(None))
            .expect("schedules")
            .is_empty()
    );
}

/// A database as hensu's schema version 5 wrote it: the current schema without the durable
/// waits (version 6) and the schedules (version 7), one paused run.
fn write_v5_database(path: &Path) {
    {
        let s = SqliteStore::open_file(path, opts()).expect("create");
        s.create_run(&record("p", 1_000), &workflow(), &json!({"n": 0}))
            .expect("create p");
        let lease = s.acquire("p", &owner("v5")).expect("acquire");
        s.checkpoint(
            &lease,
            0,
            &RecordUpdate::paused("gate", "c-1"),
            &json!({"n": 1}),
        )
        .expect("pause");
    }
    let c = rusqlite::Connection::open(path).expect("open");
    c.execute_batch(
        "DROP TABLE schedules;
         DROP TABLE schedule_firings;
         DROP INDEX runs_by_wake;
         DROP TABLE run_signals;
         ALTER TABLE runs DROP COLUMN waiting_for;
         ALTER TABLE runs DROP COLUMN wake_at;
         UPDATE meta SET value = '5' WHERE key = 'schema_version';",
    )
    .expect("back to version 5");
}

/// A database as hensu's schema version 6 wrote it: the durable waits, no schedules (version
/// 7), one run waiting for a signal.
fn write_v6_database(path: &Path) {
    {
        let s = SqliteStore::open_file(path, opts()).expect("create");
        s.create_run(&record("p", 1_000), &workflow(), &json!({"n": 0}))
            .expect("create p");
        s.send_signal("p", "go", &json!(1)).expect("signal");
    }
    let c = rusqlite::Connection::open(path).expect("open");
    c.execute_batch(
        "DROP TABLE schedules;
         DROP TABLE schedule_firings;
         UPDATE meta SET value = '6' WHERE key = 'schema_version';",
    )
    .expect("back to version 6");
}

#[test]
fn version_6_databases_are_migrated_and_keep_their_signals() {
    let (_dir, s) = migrated(write_v6_database);
    assert_eq!(s.signals("p").expect("signals").len(), 1, "kept");
    let schedules = hensu_store::StateStore::schedules(&s);
    assert!(
        block(schedules.list_schedules(None))
            .expect("schedules")
            .is_empty()
    );
}

#[test]
fn version_5_databases_are_migrated_and_take_waits_and_signals() {
    let (_dir, s) = migrated(write_v5_database);
    let r = s.record("p").expect("record");
    assert_eq!(r.wait, None);
    assert_eq!(r.correlation_id.as_deref(), Some("c-1"));
    let receipt = s
        .send_signal("p", "go", &json!({"ok": true}))
        .expect("a signal after the migration");
    assert_eq!(receipt.seq, 0);
    assert_eq!(s.signals("p").expect("signals").len(), 1);
    assert_eq!(s.load("p").expect("load").snapshot, json!({"n": 1}));
    // Version 7: the schedule tables are there.
    let schedules = hensu_store::StateStore::schedules(&s);
    assert!(
        block(schedules.list_schedules(None))
            .expect("schedules")
            .is_empty()
    );
}

#[test]
fn a_fresh_database_is_at_the_current_version() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = SqliteStore::open(dir.path()).expect("open");
    assert_eq!(
        block(s.settings()).expect("settings").schema_version,
        hensu_store::SCHEMA_VERSION
    );
}
