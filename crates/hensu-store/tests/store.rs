//! The store's contract, run against both implementations, plus SQLite-only file tests.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use hensu_store::{
    CancelRequest, Heartbeat, Lease, MemoryStore, OwnerId, RecordUpdate, RunRecord, RunStatus,
    SqliteStore, StateStore, StoreError, StoreOptions, local_host, rfc3339,
};
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Fixtures

/// Makes handles on one store (for SQLite: separate connections to one file).
trait Factory {
    fn handle(&self, opts: StoreOptions) -> Box<dyn StateStore>;
    fn name(&self) -> &'static str;
}

struct SqliteFactory {
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
    fn handle(&self, opts: StoreOptions) -> Box<dyn StateStore> {
        Box::new(SqliteStore::open_file(self.path(), opts).expect("open sqlite store"))
    }
    fn name(&self) -> &'static str {
        "sqlite"
    }
}

struct MemFactory {
    base: MemoryStore,
}

impl Factory for MemFactory {
    fn handle(&self, opts: StoreOptions) -> Box<dyn StateStore> {
        Box::new(self.base.with_options(opts))
    }
    fn name(&self) -> &'static str {
        "memory"
    }
}

/// Runs `f` against a fresh SQLite store and a fresh memory store.
fn each(f: impl Fn(&dyn Factory)) {
    f(&SqliteFactory::new());
    f(&MemFactory {
        base: MemoryStore::new(),
    });
}

fn opts() -> StoreOptions {
    StoreOptions::default()
}

fn short_ttl(ms: u64) -> StoreOptions {
    StoreOptions {
        lease_ttl: Duration::from_millis(ms),
        ..StoreOptions::default()
    }
}

fn record(id: &str, started_at: u64) -> RunRecord {
    let mut r = RunRecord::new(id, "wf", "v1", Some("start".into()));
    r.started_at = started_at;
    r.updated_at = started_at;
    r
}

fn snapshot(n: u64) -> Value {
    json!({
        "execution_id": "r1",
        "current_node": format!("node{n}"),
        "context": {"topic": "rust", "draft": "x".repeat(64), "n": n},
        "history": [{"step": n, "node_id": format!("node{n}"), "status": "SUCCESS"}],
        "phase": {"type": "INITIAL"},
    })
}

fn workflow() -> Value {
    json!({"id": "wf", "version": "v1", "nodes": {"start": {"type": "standard"}}})
}

/// A store with one run `r1`.
fn with_run(f: &dyn Factory, o: StoreOptions) -> Box<dyn StateStore> {
    let s = f.handle(o);
    s.create_run(&record("r1", 1_000), &workflow(), &snapshot(0))
        .expect("create r1");
    s
}

fn owner(nonce: &str) -> OwnerId {
    OwnerId {
        nonce: nonce.to_string(),
        ..OwnerId::current()
    }
}

/// A pid that existed and is gone.
fn dead_pid() -> u32 {
    let mut child = Command::new("true").spawn().expect("spawn true");
    let pid = child.id();
    child.wait().expect("wait true");
    pid
}

// ---------------------------------------------------------------------------------------------
// Contract tests (both stores)

#[test]
fn round_trip() {
    each(|f| {
        let s = with_run(f, opts());
        let run = s.load("r1").expect("load");
        assert_eq!(run.record, record("r1", 1_000), "{}", f.name());
        assert_eq!(run.workflow, workflow());
        assert_eq!(run.snapshot, snapshot(0));
        assert_eq!(run.snapshot_version, 1);
        assert_eq!(s.record("r1").expect("record"), run.record);
        // A second handle sees the same data.
        let s2 = f.handle(opts());
        assert_eq!(s2.load("r1").expect("load 2").snapshot, snapshot(0));
        assert!(matches!(
            s.create_run(&record("r1", 5), &workflow(), &snapshot(0)),
            Err(StoreError::AlreadyExists { .. })
        ));
        assert!(matches!(s.load("nope"), Err(StoreError::NotFound { .. })));
        assert!(matches!(
            s.history("nope"),
            Err(StoreError::NotFound { .. })
        ));
        assert!(matches!(
            s.acquire("nope", &owner("a")),
            Err(StoreError::NotFound { .. })
        ));
    });
}

#[test]
fn list_is_newest_first_then_by_id() {
    each(|f| {
        let s = f.handle(opts());
        for (id, at) in [("a", 1_000), ("b", 3_000), ("c", 2_000), ("d", 3_000)] {
            s.create_run(&record(id, at), &workflow(), &json!({}))
                .expect("create");
        }
        let ids: Vec<String> = s
            .list()
            .expect("list")
            .into_iter()
            .map(|r| r.run_id)
            .collect();
        assert_eq!(ids, ["d", "b", "c", "a"], "{}", f.name());
    });
}

#[test]
fn checkpoints_history_and_latest_snapshot() {
    each(|f| {
        let s = with_run(f, opts());
        let lease = s.acquire("r1", &owner("a")).expect("acquire");
        let mut step = 0;
        for n in 1..=3 {
            let c = s
                .checkpoint(
                    &lease,
                    step,
                    &RecordUpdate::running(format!("node{n}")),
                    &snapshot(n),
                )
                .expect("checkpoint");
            assert_eq!(c.step, step + 1);
            assert!(!c.cancel_requested);
            step = c.step;
        }
        let c = s
            .checkpoint(
                &lease,
                step,
                &RecordUpdate::paused("review", "corr-1"),
                &snapshot(4),
            )
            .expect("pause");
        step = c.step;
        let paused = s.record("r1").expect("record");
        assert_eq!(paused.status, RunStatus::Paused);
        assert_eq!(paused.correlation_id.as_deref(), Some("corr-1"));
        assert_eq!(paused.current_node.as_deref(), Some("review"));
        assert_eq!(
            s.find_by_correlation("corr-1")
                .expect("find")
                .map(|r| r.run_id),
            Some("r1".to_string())
        );
        assert_eq!(s.find_by_correlation("other").expect("find"), None);
        s.release(&lease).expect("release");

        // Resume from another handle/owner: reload, checkpoint, complete.
        let s2 = f.handle(opts());
        let l2 = s2.acquire("r1", &owner("b")).expect("reacquire");
        let run = s2.load("r1").expect("load");
        assert_eq!(run.snapshot, snapshot(4));
        assert_eq!(run.record.step, step);
        let done = s2
            .set_status(
                "r1",
                Some(&l2),
                step,
                &RecordUpdate::finished(
                    RunStatus::Completed,
                    Some("done".into()),
                    Some("SUCCESS".into()),
                ),
            )
            .expect("complete");
        assert_eq!(done.status, RunStatus::Completed);
        assert_eq!(done.exit_status.as_deref(), Some("SUCCESS"));
        assert_eq!(done.step, step + 1);

        let h = s.history("r1").expect("history");
        let steps: Vec<u64> = h.iter().map(|m| m.step).collect();
        assert_eq!(steps, [0, 1, 2, 3, 4, 5], "{}", f.name());
        let nodes: Vec<Option<&str>> = h.iter().map(|m| m.node.as_deref()).collect();
        assert_eq!(
            nodes,
            [
                Some("start"),
                Some("node1"),
                Some("node2"),
                Some("node3"),
                Some("review"),
                Some("done")
            ]
        );
        assert_eq!(h[4].status, RunStatus::Paused);
        assert_eq!(h[5].status, RunStatus::Completed);
        assert!(h[1].snapshot_bytes.is_some_and(|b| b > 50));
        assert_eq!(h[5].snapshot_bytes, None);
        assert!(h.windows(2).all(|w| w[0].at <= w[1].at));
        // The snapshot is still the last one written.
        assert_eq!(s.load("r1").expect("load").snapshot, snapshot(4));
        // A terminal run is never acquired or written again.
        assert!(matches!(
            s.acquire("r1", &owner("c")),
            Err(StoreError::Finished {
                status: RunStatus::Completed,
                ..
            })
        ));
        assert!(matches!(
            s2.checkpoint(&l2, step + 1, &RecordUpdate::running("x"), &json!({})),
            Err(StoreError::Finished { .. })
        ));
    });
}

#[test]
fn stale_writer_fails_instead_of_overwriting() {
    each(|f| {
        let s = with_run(f, opts());
        let lease = s.acquire("r1", &owner("a")).expect("acquire");
        s.checkpoint(&lease, 0, &RecordUpdate::running("n1"), &snapshot(1))
            .expect("first");
        let err = s
            .checkpoint(&lease, 0, &RecordUpdate::running("stale"), &snapshot(99))
            .expect_err("stale write must fail");
        match err {
            StoreError::StepConflict {
                expected, actual, ..
            } => assert_eq!((expected, actual), (0, 1), "{}", f.name()),
            other => panic!("{}: unexpected {other}", f.name()),
        }
        let run = s.load("r1").expect("load");
        assert_eq!(run.snapshot, snapshot(1));
        assert_eq!(run.record.current_node.as_deref(), Some("n1"));
        assert_eq!(s.history("r1").expect("history").len(), 2);
        // set_status is checked the same way.
        assert!(matches!(
            s.set_status("r1", Some(&lease), 0, &RecordUpdate::running("x")),
            Err(StoreError::StepConflict { .. })
        ));
    });
}

#[test]
fn one_writer_per_run() {
    each(|f| {
        let s = with_run(f, opts());
        let a = owner("a");
        let la = s.acquire("r1", &a).expect("a acquires");
        // Re-acquiring one's own lease renews it, keeping its start.
        let again = s.acquire("r1", &a).expect("a re-acquires");
        assert_eq!(again.acquired_at, la.acquired_at);

        let s2 = f.handle(opts());
        let err = s2
            .acquire("r1", &owner("b"))
            .expect_err("b must not acquire");
        match &err {
            StoreError::RunLocked {
                run_id,
                owner,
                since,
                ..
            } => {
                assert_eq!(run_id, "r1");
                assert_eq!(owner, &a.to_string());
                assert_eq!(*since, la.acquired_at);
            }
            other => panic!("{}: unexpected {other}", f.name()),
        }
        let msg = err.to_string();
        assert!(msg.contains("run `r1` is locked by"), "{msg}");
        assert!(msg.contains(&a.to_string()), "{msg}");
        assert!(msg.contains(&rfc3339(la.acquired_at)), "{msg}");

        // A lease token that is not the holder's cannot write.
        let forged = Lease {
            owner: owner("b"),
            ..la.clone()
        };
        assert!(matches!(
            s2.checkpoint(&forged, 0, &RecordUpdate::running("x"), &json!({})),
            Err(StoreError::RunLocked { .. })
        ));
        assert!(matches!(
            s2.set_status("r1", None, 0, &RecordUpdate::running("x")),
            Err(StoreError::RunLocked { .. })
        ));

        // After release, b gets it and a's token is dead.
        s.release(&la).expect("release");
        let lb = s2.acquire("r1", &owner("b")).expect("b acquires");
        assert!(matches!(
            s.checkpoint(&la, 0, &RecordUpdate::running("x"), &json!({})),
            Err(StoreError::RunLocked { .. })
        ));
        s2.release(&lb).expect("release b");
        assert!(matches!(
            s.checkpoint(&la, 0, &RecordUpdate::running("x"), &json!({})),
            Err(StoreError::LeaseLost { .. })
        ));
        assert!(matches!(
            s.heartbeat(&la),
            Err(StoreError::LeaseLost { .. })
        ));
    });
}

#[test]
fn lease_expires_and_heartbeat_keeps_it() {
    each(|f| {
        let s = with_run(f, short_ttl(300));
        let la = s.acquire("r1", &owner("a")).expect("a");
        let other = f.handle(short_ttl(300));
        // Heartbeats keep it alive past the TTL.
        for _ in 0..4 {
            std::thread::sleep(Duration::from_millis(120));
            let r = s.heartbeat(&la).expect("heartbeat");
            assert!(!r.cancel_requested);
        }
        assert!(matches!(
            other.acquire("r1", &owner("b")),
            Err(StoreError::RunLocked { .. })
        ));
        // A silent owner loses it after the TTL.
        std::thread::sleep(Duration::from_millis(400));
        let lb = other.acquire("r1", &owner("b")).expect("b after expiry");
        assert!(lb.expires_at > lb.acquired_at);
        assert!(matches!(
            s.checkpoint(&la, 0, &RecordUpdate::running("x"), &json!({})),
            Err(StoreError::RunLocked { .. })
        ));
        // An expired lease nobody took is still the owner's: a checkpoint renews it.
        std::thread::sleep(Duration::from_millis(400));
        other
            .checkpoint(&lb, 0, &RecordUpdate::running("n1"), &json!({"k": 1}))
            .expect("own expired lease still writes");
        assert!(matches!(
            s.acquire("r1", &owner("a")),
            Err(StoreError::RunLocked { .. })
        ));
    });
}

#[test]
fn dead_owner_on_this_host_is_broken_at_once() {
    each(|f| {
        let s = with_run(f, opts()); // 30 s TTL
        let ghost = OwnerId {
            host: local_host().to_string(),
            pid: dead_pid(),
            nonce: "ghost".into(),
        };
        s.acquire("r1", &ghost).expect("ghost acquires");
        if cfg!(target_os = "linux") {
            s.acquire("r1", &owner("a"))
                .expect("a dead pid's lease is broken");
        }
        // The same pid on another host is not ours to judge.
        let s2 = with_other_run(&*s, "r2");
        let remote = OwnerId {
            host: "some-other-host".into(),
            ..ghost
        };
        s2.acquire("r2", &remote).expect("remote acquires");
        assert!(matches!(
            s2.acquire("r2", &owner("a")),
            Err(StoreError::RunLocked { .. })
        ));
    });
}

fn with_other_run<'a>(s: &'a dyn StateStore, id: &str) -> &'a dyn StateStore {
    s.create_run(&record(id, 2_000), &workflow(), &json!({}))
        .expect("create");
    s
}

#[test]
fn concurrent_acquirers_exactly_one_wins() {
    each(|f| {
        let s = f.handle(opts());
        for round in 0..5 {
            let id = format!("race{round}");
            s.create_run(&record(&id, round), &workflow(), &json!({}))
                .expect("create");
            let n = 6;
            let barrier = Arc::new(Barrier::new(n));
            let handles: Vec<Box<dyn StateStore>> = (0..n).map(|_| f.handle(opts())).collect();
            let results: Vec<Result<Lease, StoreError>> = std::thread::scope(|scope| {
                let joins: Vec<_> = handles
                    .iter()
                    .enumerate()
                    .map(|(i, h)| {
                        let barrier = Arc::clone(&barrier);
                        let id = id.clone();
                        scope.spawn(move || {
                            barrier.wait();
                            h.acquire(&id, &owner(&format!("t{i}")))
                        })
                    })
                    .collect();
                joins
                    .into_iter()
                    .map(|j| j.join().expect("thread"))
                    .collect()
            });
            let winners = results.iter().filter(|r| r.is_ok()).count();
            assert_eq!(winners, 1, "{}: {results:?}", f.name());
            assert!(
                results
                    .iter()
                    .filter_map(|r| r.as_ref().err())
                    .all(|e| matches!(e, StoreError::RunLocked { .. })),
                "{results:?}"
            );
        }
    });
}

#[test]
fn cancel_paused_directly_running_by_flag() {
    each(|f| {
        let s = f.handle(opts());
        s.create_run(&record("paused", 1), &workflow(), &json!({}))
            .expect("create");
        let l = s.acquire("paused", &owner("a")).expect("acquire");
        s.checkpoint(&l, 0, &RecordUpdate::paused("review", "c1"), &json!({}))
            .expect("pause");
        s.release(&l).expect("release");
        match s.request_cancel("paused").expect("cancel") {
            CancelRequest::Cancelled(r) => {
                assert_eq!(r.status, RunStatus::Cancelled);
                assert_eq!(r.step, 2);
            }
            other => panic!("{}: {other:?}", f.name()),
        }
        assert_eq!(
            s.request_cancel("paused").expect("again"),
            CancelRequest::AlreadyFinished(RunStatus::Cancelled)
        );

        s.create_run(&record("busy", 2), &workflow(), &json!({}))
            .expect("create");
        let a = owner("a");
        let l = s.acquire("busy", &a).expect("acquire");
        assert_eq!(
            f.handle(opts()).request_cancel("busy").expect("cancel"),
            CancelRequest::Requested {
                owner: a.to_string()
            }
        );
        assert!(s.heartbeat(&l).expect("heartbeat").cancel_requested);
        let c = s
            .checkpoint(&l, 0, &RecordUpdate::running("n"), &json!({}))
            .expect("checkpoint");
        assert!(c.cancel_requested);
        let r = s
            .set_status(
                "busy",
                Some(&l),
                c.step,
                &RecordUpdate::finished(RunStatus::Cancelled, Some("n".into()), None),
            )
            .expect("cancelled");
        assert_eq!(r.status, RunStatus::Cancelled);
        // A terminal status frees the lease.
        assert!(matches!(s.heartbeat(&l), Err(StoreError::LeaseLost { .. })));
    });
}

#[test]
fn crashed_run_can_be_marked_failed_after_expiry() {
    each(|f| {
        let s = with_run(f, short_ttl(100));
        let _lost = s.acquire("r1", &owner("crashed")).expect("acquire");
        assert!(matches!(
            s.set_status(
                "r1",
                None,
                0,
                &RecordUpdate::finished(RunStatus::Failed, None, None)
            ),
            Err(StoreError::RunLocked { .. })
        ));
        std::thread::sleep(Duration::from_millis(200));
        let r = s
            .set_status(
                "r1",
                None,
                0,
                &RecordUpdate::finished(RunStatus::Failed, Some("start".into()), None),
            )
            .expect("mark failed");
        assert_eq!(r.status, RunStatus::Failed);
    });
}

#[test]
fn snapshot_version_mismatch() {
    each(|f| {
        let _s = with_run(f, opts());
        let v2 = f.handle(StoreOptions {
            snapshot_version: 2,
            ..StoreOptions::default()
        });
        match v2.load("r1") {
            Err(StoreError::SnapshotVersion {
                run_id,
                found,
                expected,
            }) => {
                assert_eq!(
                    (run_id.as_str(), found, expected),
                    ("r1", 1, 2),
                    "{}",
                    f.name()
                )
            }
            other => panic!("{}: unexpected {other:?}", f.name()),
        }
        // Records and history do not depend on the snapshot format.
        assert_eq!(v2.list().expect("list").len(), 1);
    });
}

#[test]
fn heartbeat_thread_keeps_lease_and_reports_cancel() {
    each(|f| {
        let s: Arc<dyn StateStore> = Arc::from(with_run(f, short_ttl(300)));
        let lease = s.acquire("r1", &owner("a")).expect("acquire");
        let cancelled = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&cancelled);
        let hb = Heartbeat::spawn(
            Arc::clone(&s),
            lease.clone(),
            Duration::from_millis(60),
            Box::new(move || flag.store(true, Ordering::SeqCst)),
        )
        .expect("spawn");
        std::thread::sleep(Duration::from_millis(700));
        let other = f.handle(short_ttl(300));
        assert!(matches!(
            other.acquire("r1", &owner("b")),
            Err(StoreError::RunLocked { .. })
        ));
        assert!(matches!(
            other.request_cancel("r1").expect("cancel"),
            CancelRequest::Requested { .. }
        ));
        let deadline = Instant::now() + Duration::from_secs(5);
        while !cancelled.load(Ordering::SeqCst) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(cancelled.load(Ordering::SeqCst), "{}", f.name());
        hb.stop().expect("clean stop");
    });
}

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
        let st = s.settings().expect("settings");
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
    assert_eq!(full.settings().expect("settings").synchronous, 2);
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
