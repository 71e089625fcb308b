//! The conformance suite on SQLite (a file, and `:memory:`), plus what only a file has:
//! corruption, versions and migrations, two processes, a kill during compaction.

#[macro_use]
mod conformance;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use conformance::{Blocking, Factory, SyncStore, block, owner, record, snapshot, workflow};
use hensu_store::{
    MemoryStore, OwnerId, RecordUpdate, SqliteStore, StoreError, StoreOptions, rfc3339,
};
use serde_json::{Value, json};

fn opts() -> StoreOptions {
    StoreOptions::default()
}

/// Handles on one database file: separate connections.
pub struct SqliteFactory {
    dir: tempfile::TempDir,
}

impl SqliteFactory {
    fn new() -> SqliteFactory {
        SqliteFactory {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }
    fn path(&self) -> PathBuf {
        self.dir.path().join(".hensu/state.db")
    }
}

impl Factory for SqliteFactory {
    fn handle(&self, opts: StoreOptions) -> Blocking {
        Blocking::new(SqliteStore::open_file(self.path(), opts).expect("open sqlite store"))
    }
    fn name(&self) -> &'static str {
        "sqlite"
    }
}

/// Handles on one `:memory:` database: one shared connection.
pub struct MemFactory {
    base: MemoryStore,
}

impl Factory for MemFactory {
    fn handle(&self, opts: StoreOptions) -> Blocking {
        Blocking::new(self.base.with_options(opts))
    }
    fn name(&self) -> &'static str {
        "memory"
    }
}

mod file {
    use super::*;
    conformance_suite!(SqliteFactory::new());
}

mod memory {
    use super::*;
    conformance_suite!(MemFactory {
        base: MemoryStore::new()
    });
}

// ---------------------------------------------------------------------------------------------
#[test]
fn rfc3339_rendering() {
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
    assert_eq!(rfc3339(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
    assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
}

// ---------------------------------------------------------------------------------------------
// SQLite files

fn sqlite_with_runs(path: &Path, runs: usize) {
    let s = SqliteStore::open_file(path, opts()).expect("open");
    for i in 0..runs {
        let id = format!("run{i}");
        s.create_run(&record(&id, i as u64), &workflow(), &big_value(20_000))
            .expect("create");
    }
    // Dropping the last connection checkpoints the WAL into the main file.
}

fn big_value(bytes: usize) -> Value {
    let items: Vec<Value> = (0..bytes / 100)
        .map(|i| json!({"i": i, "text": format!("{i:>80}")}))
        .collect();
    json!({ "items": items })
}

fn expect_corrupt(r: Result<SqliteStore, StoreError>, what: &str) -> String {
    match r {
        Err(e @ StoreError::Corrupt { .. }) => e.to_string(),
        Err(other) => panic!("{what}: expected Corrupt, got {other}"),
        Ok(_) => panic!("{what}: expected Corrupt, the store opened"),
    }
}

#[test]
fn default_location_settings_and_persistence() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let s = SqliteStore::open(dir.path()).expect("open");
        assert_eq!(s.path(), dir.path().join(".hensu/state.db"));
        let st = block(s.settings()).expect("settings");
        assert_eq!(st.journal_mode, "wal");
        assert_eq!(st.synchronous, 1);
        assert_eq!(st.busy_timeout_ms, 5_000);
        assert_eq!(st.schema_version, hensu_store::SCHEMA_VERSION);
        assert_eq!(st.hensu_version, hensu_store::HENSU_VERSION);
        s.create_run(&record("r1", 7), &workflow(), &snapshot(0))
            .expect("create");
    }
    let s = SqliteStore::open(dir.path()).expect("reopen");
    assert_eq!(s.load("r1").expect("load").snapshot, snapshot(0));
    let full = SqliteStore::open_file(
        dir.path().join(".hensu/state.db"),
        StoreOptions {
            durability: hensu_store::Durability::Full,
            ..opts()
        },
    )
    .expect("open full");
    assert_eq!(block(full.settings()).expect("settings").synchronous, 2);
}

#[test]
fn truncated_database_is_corrupt() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    sqlite_with_runs(&path, 5);
    let len = std::fs::metadata(&path).expect("meta").len();
    assert!(len > 50_000, "{len}");
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("open file");
    f.set_len(len / 2).expect("truncate");
    drop(f);
    let msg = expect_corrupt(SqliteStore::open_file(&path, opts()), "truncated");
    assert!(msg.contains("truncated"), "{msg}");
    // Cut inside the header.
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .expect("open file");
    f.set_len(40).expect("truncate");
    drop(f);
    expect_corrupt(SqliteStore::open_file(&path, opts()), "header cut");
}

#[test]
fn damaged_pages_are_caught_by_quick_check() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    sqlite_with_runs(&path, 5);
    let mut bytes = std::fs::read(&path).expect("read");
    // Keep the header page; scribble over every other page's b-tree header.
    let page = 4096;
    for p in (1..bytes.len() / page).step_by(2) {
        for b in &mut bytes[p * page..p * page + 64] {
            *b = 0xA5;
        }
    }
    std::fs::write(&path, &bytes).expect("write");
    let msg = expect_corrupt(SqliteStore::open_file(&path, opts()), "damaged");
    assert!(msg.contains("is corrupt"), "{msg}");
}

#[test]
fn garbage_and_foreign_files_are_rejected() {
    let dir = tempfile::tempdir().expect("tempdir");
    let garbage = dir.path().join("garbage.db");
    let noise: Vec<u8> = (0..10_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(&garbage, &noise).expect("write");
    let msg = expect_corrupt(SqliteStore::open_file(&garbage, opts()), "garbage");
    assert!(msg.contains("not an SQLite database"), "{msg}");
    assert_eq!(std::fs::read(&garbage).expect("read"), noise, "untouched");

    let text = dir.path().join("text.db");
    std::fs::write(&text, "hello").expect("write");
    expect_corrupt(SqliteStore::open_file(&text, opts()), "text");

    let foreign = dir.path().join("foreign.db");
    {
        let c = rusqlite::Connection::open(&foreign).expect("open");
        c.execute_batch("CREATE TABLE foo (x INTEGER); INSERT INTO foo VALUES (1);")
            .expect("foreign schema");
    }
    let msg = expect_corrupt(SqliteStore::open_file(&foreign, opts()), "foreign");
    assert!(msg.contains("not a hensu state store"), "{msg}");

    let as_dir = dir.path().join("dir.db");
    std::fs::create_dir(&as_dir).expect("mkdir");
    assert!(SqliteStore::open_file(&as_dir, opts()).is_err());
}

#[test]
fn newer_schema_version_is_refused_untouched() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    sqlite_with_runs(&path, 1);
    {
        let c = rusqlite::Connection::open(&path).expect("open");
        c.execute_batch(
            "UPDATE meta SET value = '99' WHERE key = 'schema_version';
             UPDATE meta SET value = '9.9.9' WHERE key = 'hensu_version';",
        )
        .expect("bump");
    }
    let before = std::fs::read(&path).expect("read");
    match SqliteStore::open_file(&path, opts()) {
        Err(e @ StoreError::IncompatibleVersion { found: 99, .. }) => {
            let msg = e.to_string();
            assert!(msg.contains("schema version 99"), "{msg}");
            assert!(msg.contains("9.9.9"), "{msg}");
        }
        other => panic!("expected IncompatibleVersion, got {other:?}"),
    }
    assert_eq!(
        std::fs::read(&path).expect("read"),
        before,
        "file unchanged"
    );
    let c = rusqlite::Connection::open(&path).expect("open");
    let v: String = c
        .query_row(
            "SELECT value FROM meta WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .expect("meta");
    assert_eq!(v, "99");
}

#[test]
fn undecodable_rows_are_corrupt_not_panics() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    sqlite_with_runs(&path, 2);
    {
        let c = rusqlite::Connection::open(&path).expect("open");
        c.execute_batch(
            "UPDATE snapshots SET state = x'00ff10' WHERE run_id = 'run0';
             UPDATE runs SET status = 'exploded' WHERE run_id = 'run1';
             UPDATE run_data SET workflow = 'not json' WHERE run_id = 'run1';",
        )
        .expect("damage rows");
    }
    let s = SqliteStore::open_file(&path, opts()).expect("file is sound");
    assert!(matches!(s.load("run0"), Err(StoreError::Corrupt { .. })));
    assert!(matches!(s.list(), Err(StoreError::Corrupt { .. })));
    assert!(matches!(s.record("run1"), Err(StoreError::Corrupt { .. })));
    assert!(matches!(
        s.history("run1"),
        Ok(_) | Err(StoreError::Corrupt { .. })
    ));
}

#[test]
fn random_damage_never_panics() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pristine_path = dir.path().join("pristine.db");
    sqlite_with_runs(&pristine_path, 3);
    let pristine = std::fs::read(&pristine_path).expect("read");
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let path = dir.path().join("damaged.db");
    for _ in 0..40 {
        let mut bytes = pristine.clone();
        for _ in 0..(next() % 16 + 1) {
            let at = (next() as usize) % bytes.len();
            bytes[at] = next() as u8;
        }
        if next() % 4 == 0 {
            bytes.truncate((next() as usize) % bytes.len());
        }
        std::fs::write(&path, &bytes).expect("write");
        let _ = std::fs::remove_file(dir.path().join("damaged.db-wal"));
        let _ = std::fs::remove_file(dir.path().join("damaged.db-shm"));
        // Any outcome but a panic is fine.
        if let Ok(s) = SqliteStore::open_file(&path, opts()) {
            let _ = s.list();
            for id in ["run0", "run1", "run2"] {
                let _ = s.load(id);
                let _ = s.history(id);
                if let Ok(l) = s.acquire(id, &owner("z")) {
                    let _ = s.checkpoint(&l, 0, &RecordUpdate::running("x"), &json!({}));
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Two processes

const CHILD_DB: &str = "HENSU_STORE_TEST_CHILD_DB";

/// Not a test on its own: when the parent test spawns this binary with `CHILD_DB` set, it
/// acts as the second process holding the lease (and then dies without releasing it).
#[test]
fn child_process_holder() {
    let Ok(db) = std::env::var(CHILD_DB) else {
        return;
    };
    let store = SqliteStore::open_file(&db, opts()).expect("child opens");
    let me = OwnerId::current();
    let lease = store.acquire("shared", &me).expect("child acquires");
    println!("ACQUIRED {}", lease.owner);
    std::io::stdout().flush().expect("flush");
    // Hold it until the parent closes our stdin, then exit without releasing (a crash).
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

#[test]
fn two_processes_one_writer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(".hensu/state.db");
    let store = SqliteStore::open_file(&path, opts()).expect("open");
    store
        .create_run(&record("shared", 1), &workflow(), &json!({}))
        .expect("create");

    let exe = std::env::current_exe().expect("current exe");
    let mut child = Command::new(exe)
        .args([
            "child_process_holder",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DB, &path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn child");
    let stdout = child.stdout.take().expect("child stdout");
    // Read the child's output on a thread so a broken child cannot hang this test.
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            // libtest may print `test child_process_holder ... ` before it on the same line.
            if let Some(at) = line.find("ACQUIRED ") {
                let _ = tx.send(line[at + "ACQUIRED ".len()..].trim().to_string());
            }
        }
    });
    let child_owner = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(o) => Some(o),
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            None
        }
    };
    let child_owner = child_owner.expect("the child never acquired the lease");
    assert!(
        child_owner.starts_with(&format!("{}@", child.id())),
        "{child_owner}"
    );

    let me = OwnerId::current();
    match store.acquire("shared", &me) {
        Err(StoreError::RunLocked { owner, .. }) => assert_eq!(owner, child_owner),
        other => panic!("expected RunLocked, got {other:?}"),
    }

    drop(child.stdin.take()); // EOF: the child exits without releasing.
    let status = child.wait().expect("child exit");
    assert!(status.success(), "{status}");

    // The child's pid is gone: its (30 s) lease is broken at once on Linux.
    if cfg!(target_os = "linux") {
        let lease = store
            .acquire("shared", &me)
            .expect("dead child's lease broken");
        store
            .checkpoint(
                &lease,
                0,
                &RecordUpdate::running("n1"),
                &json!({"ok": true}),
            )
            .expect("write");
    }
}

#[path = "sqlite/migrations.rs"]
mod migrations;

// ---------------------------------------------------------------------------------------------
// A kill during compaction

const CRASH_DB: &str = "HENSU_STORE_TEST_CRASH_DB";

/// Not a test on its own: the child of `kill_during_compaction_loses_nothing`.
#[test]
fn crash_child() {
    let Ok(db) = std::env::var(CRASH_DB) else {
        return;
    };
    let s = SqliteStore::open_file(&db, conformance::crash_child_options()).expect("child opens");
    conformance::crash_in_compaction_child(&Blocking::new(s.clone()));
}

#[test]
fn kill_during_compaction_loses_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    drop(SqliteStore::open_file(&path, opts()).expect("create"));
    let status = Command::new(std::env::current_exe().expect("exe"))
        .args(["crash_child", "--exact", "--test-threads=1"])
        .env(CRASH_DB, &path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run child");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        status.signal(),
        Some(6),
        "the child aborted mid-compaction: {status}"
    );
    let s = SqliteStore::open_file(&path, opts()).expect("reopen after the crash");
    conformance::crash_in_compaction_check(&Blocking::new(s.clone()));
}

const FORK_CRASH_DB: &str = "HENSU_STORE_TEST_FORK_CRASH_DB";

/// Not a test on its own: the child of `kill_during_fork_leaves_no_half_written_run`.
#[test]
fn fork_crash_child() {
    let Ok(db) = std::env::var(FORK_CRASH_DB) else {
        return;
    };
    let s = SqliteStore::open_file(&db, opts()).expect("child opens");
    let killed =
        SqliteStore::open_file(&db, conformance::fork_fails(hensu_store::FailAction::Abort))
            .expect("child opens");
    conformance::crash_in_fork_child(&Blocking::new(s), &Blocking::new(killed));
}

/// A process killed inside a fork's transaction (aborted after the fork's record is written,
/// before its row) leaves no half-written run.
#[test]
fn kill_during_fork_leaves_no_half_written_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.db");
    drop(SqliteStore::open_file(&path, opts()).expect("create"));
    let status = Command::new(std::env::current_exe().expect("exe"))
        .args(["fork_crash_child", "--exact", "--test-threads=1"])
        .env(FORK_CRASH_DB, &path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run child");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        status.signal(),
        Some(6),
        "the child aborted mid-fork: {status}"
    );
    let s = SqliteStore::open_file(&path, opts()).expect("reopen after the crash");
    conformance::crash_in_fork_check(&Blocking::new(s));
}

#[test]
fn open_store_picks_the_backend() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Blocking::from_arc(
        block(hensu_store::open_store(
            &dir.path().display().to_string(),
            opts(),
        ))
        .expect("dir"),
    );
    s.create_run(&record("a", 1), &workflow(), &json!({}))
        .expect("create");
    assert!(dir.path().join(".hensu/state.db").exists());
    let file = dir.path().join("other.db");
    let url = format!("sqlite://{}", file.display());
    block(hensu_store::open_store(&url, opts())).expect("sqlite url");
    assert!(file.exists());
    let m = Blocking::from_arc(block(hensu_store::open_store(":memory:", opts())).expect("memory"));
    assert!(m.list().expect("list").is_empty());
    assert!(matches!(
        block(hensu_store::open_store("mysql://x", opts())),
        Err(StoreError::Invalid(_))
    ));
}

#[test]
fn store_urls_parse_once_and_label_without_credentials() {
    use hensu_store::StoreUrl;
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path().display().to_string();
    assert_eq!(
        StoreUrl::parse(&d).expect("dir"),
        StoreUrl::Sqlite(dir.path().join(".hensu/state.db"))
    );
    assert_eq!(
        StoreUrl::parse(&format!(" sqlite://{d}/x.db ")).expect("sqlite url"),
        StoreUrl::Sqlite(dir.path().join("x.db"))
    );
    assert_eq!(StoreUrl::parse(":memory:").expect("mem"), StoreUrl::Memory);
    assert_eq!(
        StoreUrl::parse("sqlite::memory:").expect("mem"),
        StoreUrl::Memory
    );
    let pg = StoreUrl::parse("postgresql://u:secret@db:5433/hensu?sslmode=disable").expect("pg");
    assert!(matches!(pg, StoreUrl::Postgres(_)));
    assert_eq!(pg.label(), "postgresql://db:5433/hensu");
    assert_eq!(
        StoreUrl::label_of("mysql://u:secret@host/db"),
        "mysql://host/db",
        "an unparsable location keeps its credentials out of messages too"
    );
    assert!(matches!(
        StoreUrl::parse("mysql://x"),
        Err(StoreError::Invalid(_))
    ));
}

#[path = "registry/mod.rs"]
mod registry;

#[test]
fn registry_conformance_on_a_file_and_in_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join(".hensu/state.db");
    // Beside the run log, in the same file, from the store's handle.
    let store = SqliteStore::open_file(&db, opts()).expect("store");
    let reg = store.registry().expect("registry");
    registry::definitions_per_tenant_with_soft_delete(&reg);
    registry::runs_belong_to_one_tenant(&reg);
    registry::a_tenant_run_and_its_tag_are_one_transaction(&Blocking::new(store.clone()), &reg);
    registry::a_tenants_runs_are_paged_newest_first(&Blocking::new(store.clone()), &reg);
    registry::a_key_starts_one_run_per_tenant(&Blocking::new(store.clone()), &reg);
    registry::tenant_events_follow_one_sequence(&Blocking::new(store.clone()), &reg);
    registry::tenant_events_are_trimmed_oldest_first(&reg);
    // A second store opened by location sees the same rows.
    let url = hensu_store::StoreUrl::parse(dir.path().to_str().expect("utf-8")).expect("parse");
    let again = Blocking::from_arc(block(url.open(opts())).expect("open"))
        .registry()
        .expect("registry");
    assert_eq!(
        again.run_tenant("r1").expect("tenant").as_deref(),
        Some("t1")
    );
    let mem = MemoryStore::new();
    let mem_reg = mem.registry().expect("memory");
    registry::definitions_per_tenant_with_soft_delete(&mem_reg);
    registry::runs_belong_to_one_tenant(&mem_reg);
    registry::a_tenant_run_and_its_tag_are_one_transaction(&Blocking::new(mem.clone()), &mem_reg);
    registry::a_tenants_runs_are_paged_newest_first(&Blocking::new(mem.clone()), &mem_reg);
    registry::a_key_starts_one_run_per_tenant(&Blocking::new(mem.clone()), &mem_reg);
    registry::tenant_events_follow_one_sequence(&Blocking::new(mem.clone()), &mem_reg);
    // One process writes a server's runs: no wake-ups from elsewhere to listen to.
    assert!(
        block(mem_reg.inner.event_wakeups())
            .expect("wakeups")
            .is_none()
    );
}

/// Schedules and firings on a file (two stores on it, as two servers) and in memory.
#[test]
fn schedule_conformance_on_a_file_and_in_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join(".hensu/state.db");
    let one = SqliteStore::open_file(&db, opts()).expect("store");
    let two = SqliteStore::open_file(&db, opts()).expect("store");
    for s in [
        hensu_store::StateStore::schedules(&one),
        hensu_store::StateStore::schedules(&MemoryStore::new()),
    ] {
        registry::schedules_are_rows_per_tenant(&s);
        registry::a_tick_is_claimed_once(&s);
        registry::open_firings_are_taken_over_once(&s);
        registry::config_schedules_keep_their_state(&s);
    }
    registry::racing_claimers_fire_each_tick_once(&[
        hensu_store::StateStore::schedules(&one),
        hensu_store::StateStore::schedules(&two),
    ]);
}

/// Retention on a file and in memory.
#[test]
fn retention_conformance_on_a_file_and_in_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = SqliteStore::open_file(dir.path().join("state.db"), opts()).expect("store");
    registry::purge_keeps_what_rules_and_forks_need(
        &Blocking::new(store.clone()),
        &store.registry().expect("registry"),
    );
    let mem = MemoryStore::new();
    registry::purge_keeps_what_rules_and_forks_need(
        &Blocking::new(mem.clone()),
        &mem.registry().expect("registry"),
    );
}

/// A purge gives the space back: a file made since schema 7 (incremental auto-vacuum) shrinks
/// at once; a file without it keeps its free pages until a purge with `rewrite` (a `VACUUM`
/// that turns incremental vacuum on).
#[test]
fn purge_gives_the_space_back() {
    use hensu_store::retention::{PurgeOptions, RetentionSection, purge};
    let fill = |s: &SqliteStore| {
        let big = json!({"context": {"blob": "x".repeat(100_000)}});
        for i in 0..40 {
            let id = format!("r{i}");
            s.create_run(&record(&id, 1_000), &workflow(), &big)
                .expect("create");
            s.set_status(
                &id,
                None,
                0,
                &hensu_store::RecordUpdate::finished(hensu_store::RunStatus::Completed, None, None),
            )
            .expect("finish");
        }
    };
    let all = RetentionSection {
        max_age_days: Some(0.0),
        ..RetentionSection::default()
    };
    let later = hensu_store::now_ms() + 60_000;
    let dir = tempfile::tempdir().expect("tempdir");
    let fresh = SqliteStore::open_file(dir.path().join("fresh.db"), opts()).expect("store");
    fill(&fresh);
    let report = block(purge(&fresh, &all, later, PurgeOptions::default())).expect("purge");
    assert_eq!(report.deleted.len(), 40);
    let space = report.reclaimed.expect("reclaimed");
    let (before, after) = (
        space.bytes_before.expect("before"),
        space.bytes_after.expect("after"),
    );
    assert!(after * 4 < before, "{before} → {after}");
    // A file from before schema 7: no incremental vacuum.
    let old_path = dir.path().join("old.db");
    drop(SqliteStore::open_file(&old_path, opts()).expect("create"));
    let conn = rusqlite::Connection::open(&old_path).expect("open");
    conn.execute_batch("PRAGMA auto_vacuum = NONE; VACUUM;")
        .expect("no auto-vacuum");
    drop(conn);
    let old = SqliteStore::open_file(&old_path, opts()).expect("store");
    fill(&old);
    let report = block(purge(&old, &all, later, PurgeOptions::default())).expect("purge");
    let space = report.reclaimed.expect("reclaimed");
    assert!(space.free_pages.expect("free") > 100, "{space:?}");
    assert!(space.note.contains("--vacuum"), "{}", space.note);
    let rewrite = PurgeOptions {
        dry_run: false,
        rewrite: true,
    };
    let report = block(purge(&old, &all, later, rewrite)).expect("purge --vacuum");
    let space = report.reclaimed.expect("reclaimed");
    assert!(space.bytes_after.expect("after") * 4 < before, "{space:?}");
    assert_eq!(space.free_pages, Some(0));
}
