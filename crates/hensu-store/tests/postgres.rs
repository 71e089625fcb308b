//! The conformance suite on PostgreSQL, plus its schema versions, corruption and a kill during
//! compaction. Every test needs a server: `scripts/pg-test.sh cargo test -p hensu-store --
//! --ignored` starts a throw-away cluster and sets `HENSU_TEST_DATABASE_URL`. Each test works
//! in a schema of its own, so they run in parallel on one database.

#[macro_use]
mod conformance;

use std::process::{Command, Stdio};

use conformance::{Blocking, Factory, SyncStore, block, record, workflow};
use hensu_store::{PG_SCHEMA_VERSION, PgStore, StoreError, StoreOptions};
use serde_json::json;

const URL_VAR: &str = "HENSU_TEST_DATABASE_URL";

fn url() -> String {
    std::env::var(URL_VAR).unwrap_or_else(|_| {
        panic!(
            "{URL_VAR} is not set: run the PostgreSQL tests under scripts/pg-test.sh, e.g. \
             `scripts/pg-test.sh cargo test -p hensu-store -- --ignored`"
        )
    })
}

fn fresh_schema() -> String {
    format!("t_{}", uuid::Uuid::new_v4().simple())
}

/// Runs SQL statements directly (to damage or inspect a store), in `schema`.
fn sql(schema: &str, statements: &str) -> Vec<String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let (client, conn) = tokio_postgres::connect(&url(), tokio_postgres::NoTls)
            .await
            .expect("connect");
        let task = tokio::spawn(conn);
        client
            .batch_execute(&format!("SET search_path = {schema}"))
            .await
            .expect("search_path");
        let mut out = Vec::new();
        for msg in client.simple_query(statements).await.expect("statements") {
            if let tokio_postgres::SimpleQueryMessage::Row(row) = msg {
                out.push(row.get(0).unwrap_or("NULL").to_string());
            }
        }
        drop(client);
        let _ = task.await;
        out
    })
}

/// Handles on one store in a fresh schema: separate pools, as separate processes would have.
pub struct PgFactory {
    schema: String,
}

impl PgFactory {
    fn new() -> PgFactory {
        PgFactory {
            schema: fresh_schema(),
        }
    }
}

impl Factory for PgFactory {
    fn handle(&self, opts: StoreOptions) -> Blocking {
        Blocking::new(
            block(PgStore::open_in_schema(&url(), Some(&self.schema), opts))
                .expect("open pg store"),
        )
    }
    fn name(&self) -> &'static str {
        "postgres"
    }
}

mod pg {
    use super::*;
    conformance_suite!(
        #[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"] => PgFactory::new()
    );
}

fn opts() -> StoreOptions {
    StoreOptions::default()
}

#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn migrations_run_up_from_empty_and_once() {
    let schema = fresh_schema();
    let s = block(PgStore::open_in_schema(&url(), Some(&schema), opts())).expect("open");
    assert_eq!(
        sql(
            &schema,
            "SELECT value FROM meta WHERE key = 'schema_version'"
        ),
        [PG_SCHEMA_VERSION.to_string()]
    );
    assert_eq!(
        sql(
            &schema,
            "SELECT value FROM meta WHERE key = 'hensu_version'"
        ),
        [hensu_store::HENSU_VERSION]
    );
    assert_eq!(
        sql(&schema, "SELECT count(*) FROM refinery_schema_history"),
        [PG_SCHEMA_VERSION.to_string()]
    );
    s.create_run(&record("a", 1), &workflow(), &json!({"k": 1}))
        .expect("create");
    drop(s);
    // Reopening (and opening concurrently) applies nothing twice and keeps the data.
    let handles: Vec<_> = (0..3)
        .map(|_| {
            let schema = schema.clone();
            std::thread::spawn(move || {
                block(PgStore::open_in_schema(&url(), Some(&schema), opts()))
            })
        })
        .collect();
    for h in handles {
        let s = h.join().expect("thread").expect("reopen");
        assert_eq!(s.load("a").expect("load").snapshot, json!({"k": 1}));
    }
    assert_eq!(
        sql(&schema, "SELECT count(*) FROM refinery_schema_history"),
        [PG_SCHEMA_VERSION.to_string()]
    );
}

#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn version_1_schemas_get_the_fork_and_pause_columns() {
    let schema = fresh_schema();
    let s = block(PgStore::open_in_schema(&url(), Some(&schema), opts())).expect("open");
    s.create_run(&record("a", 1), &workflow(), &json!({"k": 1}))
        .expect("create");
    drop(s);
    // Back to what version 1 left: no fork columns (version 2), no pause request (version 3),
    // no durable waits (version 4), no schedules (version 5), one migration applied (version
    // 6's work triggers were dropped by version 7).
    sql(
        &schema,
        "DROP TABLE schedules, schedule_firings;
         DROP INDEX runs_by_parent;
         DROP INDEX runs_by_wake;
         DROP TABLE run_signals;
         ALTER TABLE runs DROP COLUMN parent_run, DROP COLUMN parent_step,
             DROP COLUMN pause_requested, DROP COLUMN wake_at, DROP COLUMN waiting_for;
         DELETE FROM refinery_schema_history WHERE version >= 2;
         UPDATE meta SET value = '1' WHERE key = 'schema_version';",
    );
    let s = block(PgStore::open_in_schema(&url(), Some(&schema), opts())).expect("migrate");
    assert_eq!(
        sql(
            &schema,
            "SELECT value FROM meta WHERE key = 'schema_version'"
        ),
        [PG_SCHEMA_VERSION.to_string()]
    );
    let mut child = record("c", 2);
    child.status = hensu_store::RunStatus::Queued;
    let forked = s
        .fork(&hensu_store::ForkSpec {
            parent: hensu_store::RunParent {
                run_id: "a".into(),
                step: 0,
            },
            record: child,
            workflow: None,
            edits: hensu_store::StateDelta::new().replace(&["k"], json!(2)),
            tenant: None,
        })
        .expect("fork");
    assert_eq!(forked.step, 1);
    assert_eq!(s.load("c").expect("load").snapshot, json!({"k": 2}));
    assert_eq!(s.load("a").expect("load").snapshot, json!({"k": 1}));
    // Version 4: signals and waits work on the migrated schema.
    let receipt = s.send_signal("a", "go", &json!(1)).expect("signal");
    assert_eq!((receipt.seq, receipt.woke), (0, false));
    assert_eq!(s.record("a").expect("record").wait, None);
    // Version 5: the schedules tables are back.
    assert_eq!(sql(&schema, "SELECT count(*) FROM schedules"), ["0"]);
}

#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn newer_schema_version_is_refused_untouched() {
    let schema = fresh_schema();
    drop(block(PgStore::open_in_schema(&url(), Some(&schema), opts())).expect("open"));
    sql(
        &schema,
        "UPDATE meta SET value = '99' WHERE key = 'schema_version';
         UPDATE meta SET value = '9.9.9' WHERE key = 'hensu_version';",
    );
    match block(PgStore::open_in_schema(&url(), Some(&schema), opts())) {
        Err(e @ StoreError::IncompatibleVersion { found: 99, .. }) => {
            let msg = e.to_string();
            assert!(msg.contains("schema version 99"), "{msg}");
            assert!(msg.contains("9.9.9"), "{msg}");
            assert!(!msg.contains("password"), "{msg}");
        }
        other => panic!("expected IncompatibleVersion, got {other:?}"),
    }
    assert_eq!(
        sql(
            &schema,
            "SELECT value FROM meta WHERE key = 'hensu_version'"
        ),
        ["9.9.9"]
    );
}

#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn foreign_tables_and_undecodable_rows_are_corrupt_not_panics() {
    let foreign = fresh_schema();
    sql(
        "public",
        &format!("CREATE SCHEMA {foreign}; CREATE TABLE {foreign}.runs (x INTEGER);"),
    );
    match block(PgStore::open_in_schema(&url(), Some(&foreign), opts())) {
        Err(StoreError::Corrupt { detail, .. }) => {
            assert!(detail.contains("not a hensu state store"), "{detail}")
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }

    let schema = fresh_schema();
    let s = block(PgStore::open_in_schema(&url(), Some(&schema), opts())).expect("open");
    for id in ["run0", "run1", "run2"] {
        s.create_run(&record(id, 1), &workflow(), &json!({"k": 1}))
            .expect("create");
    }
    sql(
        &schema,
        "UPDATE snapshots SET state = '\\x00ff10' WHERE run_id = 'run0';
         UPDATE runs SET status = 'exploded' WHERE run_id = 'run1';
         UPDATE run_data SET workflow = 'not json' WHERE run_id = 'run2';
         UPDATE run_log SET kind = 'weird' WHERE run_id = 'run2';",
    );
    assert!(matches!(s.load("run0"), Err(StoreError::Corrupt { .. })));
    assert!(matches!(s.list(), Err(StoreError::Corrupt { .. })));
    assert!(matches!(s.record("run1"), Err(StoreError::Corrupt { .. })));
    assert!(matches!(s.load("run2"), Err(StoreError::Corrupt { .. })));
    assert!(matches!(s.history("run2"), Err(StoreError::Corrupt { .. })));
    // The snapshot version is checked as on SQLite.
    sql(
        &schema,
        "UPDATE snapshots SET snapshot_version = 7 WHERE run_id = 'run2'",
    );
    assert!(matches!(
        s.load("run2"),
        Err(StoreError::SnapshotVersion { found: 7, .. })
    ));
}

#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn bad_urls_are_errors_not_panics() {
    assert!(matches!(
        block(PgStore::open(
            "postgres://nobody@127.0.0.1:1/none?connect_timeout=2",
            opts()
        )),
        // Nothing listens there: unreachable (the server answers 503), not a query error.
        Err(StoreError::Unavailable { .. })
    ));
    assert!(matches!(
        block(PgStore::open("postgres://h:notaport/db", opts())),
        Err(StoreError::Invalid(_))
    ));
    assert!(matches!(
        block(PgStore::open_in_schema(&url(), Some("Bad-Name"), opts())),
        Err(StoreError::Invalid(_))
    ));
}

const CRASH_SCHEMA: &str = "HENSU_STORE_TEST_CRASH_SCHEMA";

/// Not a test on its own: the child of `kill_during_compaction_loses_nothing`.
#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn crash_child() {
    let Ok(schema) = std::env::var(CRASH_SCHEMA) else {
        return;
    };
    let s = block(PgStore::open_in_schema(
        &url(),
        Some(&schema),
        conformance::crash_child_options(),
    ))
    .expect("child opens");
    conformance::crash_in_compaction_child(&Blocking::new(s.clone()));
}

#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn kill_during_compaction_loses_nothing() {
    let schema = fresh_schema();
    drop(block(PgStore::open_in_schema(&url(), Some(&schema), opts())).expect("create"));
    let status = Command::new(std::env::current_exe().expect("exe"))
        .args(["crash_child", "--exact", "--ignored", "--test-threads=1"])
        .env(CRASH_SCHEMA, &schema)
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
    let s = block(PgStore::open_in_schema(&url(), Some(&schema), opts())).expect("reopen");
    conformance::crash_in_compaction_check(&Blocking::new(s.clone()));
}

#[path = "registry/mod.rs"]
mod registry;

#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn registry_conformance() {
    let schema = fresh_schema();
    let store = block(PgStore::open_in_schema(&url(), Some(&schema), opts())).expect("store");
    let reg = store.registry().expect("registry");
    registry::definitions_per_tenant_with_soft_delete(&reg);
    registry::runs_belong_to_one_tenant(&reg);
    registry::a_tenant_run_and_its_tag_are_one_transaction(&Blocking::new(store.clone()), &reg);
    registry::a_tenants_runs_are_paged_newest_first(&Blocking::new(store.clone()), &reg);
    registry::a_key_starts_one_run_per_tenant(&Blocking::new(store.clone()), &reg);
    registry::tenant_events_follow_one_sequence(&Blocking::new(store.clone()), &reg);
    registry::tenant_events_are_trimmed_oldest_first(&reg);
    // Reopening applies no migration twice and sees the rows.
    let again = block(PgStore::open_in_schema(&url(), Some(&schema), opts()))
        .expect("reopen")
        .registry()
        .expect("registry");
    assert_eq!(
        again.run_tenant("r1").expect("tenant").as_deref(),
        Some("t1")
    );
}

/// Schedules and firings, and claimers on two pools (two servers) racing for each tick.
#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn schedule_conformance() {
    let schema = fresh_schema();
    let one = block(PgStore::open_in_schema(&url(), Some(&schema), opts())).expect("store");
    let two = block(PgStore::open_in_schema(&url(), Some(&schema), opts())).expect("store");
    let s = hensu_store::StateStore::schedules(&one);
    registry::schedules_are_rows_per_tenant(&s);
    registry::a_tick_is_claimed_once(&s);
    registry::open_firings_are_taken_over_once(&s);
    registry::config_schedules_keep_their_state(&s);
    registry::racing_claimers_fire_each_tick_once(&[
        hensu_store::StateStore::schedules(&one),
        hensu_store::StateStore::schedules(&two),
    ]);
}

/// Retention on PostgreSQL.
#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn retention_conformance() {
    let schema = fresh_schema();
    let store = block(PgStore::open_in_schema(&url(), Some(&schema), opts())).expect("store");
    registry::purge_keeps_what_rules_and_forks_need(
        &Blocking::new(store.clone()),
        &store.registry().expect("registry"),
    );
}

/// The last handle of a store and of a registry may go on a worker thread of the caller's
/// runtime (a task holding them is dropped when that runtime shuts down): nothing panics, and
/// the database stays usable from other handles.
#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn handles_dropped_inside_a_runtime_do_not_panic() {
    let schema = fresh_schema();
    let store = block(PgStore::open_in_schema(&url(), Some(&schema), opts())).expect("open");
    let registry = store.registry().expect("registry");
    store
        .create_run(&record("r1", 1), &workflow(), &json!({"n": 1}))
        .expect("create");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let dropped = rt.block_on(async move {
        tokio::spawn(async move {
            let (s, r) = (store, registry);
            tokio::task::yield_now().await;
            drop(s);
            drop(r);
        })
        .await
    });
    assert!(dropped.is_ok(), "dropping the handles on a worker panicked");
    // A task never finished is dropped by the runtime's shutdown, with its handles.
    let store = block(PgStore::open_in_schema(&url(), Some(&schema), opts())).expect("reopen");
    rt.spawn(async move {
        let _held = store;
        std::future::pending::<()>().await;
    });
    drop(rt);
    let again = block(PgStore::open_in_schema(&url(), Some(&schema), opts())).expect("reopen");
    assert_eq!(again.record("r1").expect("record").run_id, "r1");
}

/// The tenant event log under writers committing at once from several pools (as several
/// servers do), one of whose transactions stays open 300 ms after its event's row was
/// written (a deferred trigger of the test's after the log's): a follower reading `seq >
/// cursor` while they write sees every event exactly once, in order — no seq commits behind
/// its cursor — and a `LISTEN` connection is woken.
#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn tenant_events_commit_in_order_under_concurrent_writers() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    const WRITERS: usize = 4;
    const RUNS: usize = 40;
    let schema = fresh_schema();
    let store = block(PgStore::open_in_schema(&url(), Some(&schema), opts())).expect("store");
    // Fired after `run_log_tenant_event` (triggers of one event fire in name order).
    sql(
        &schema,
        "CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN PERFORM pg_sleep(0.3); RETURN NULL; END $$; \
         CREATE CONSTRAINT TRIGGER zz_slow_commit AFTER INSERT ON run_log \
         DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.run_id LIKE 'slow-%') \
         EXECUTE FUNCTION slow_commit();",
    );
    block(async {
        let reg = hensu_store::StateStore::registry(&store)
            .await
            .expect("registry");
        let mut wakeups = reg.event_wakeups().await.expect("listen").expect("some");
        let done = Arc::new(AtomicBool::new(false));
        let mut writers = Vec::new();
        for w in 0..WRITERS {
            // A pool of its own per writer: another server.
            let other = PgStore::open_in_schema(&url(), Some(&schema), opts())
                .await
                .expect("writer store");
            let reg = hensu_store::StateStore::registry(&other)
                .await
                .expect("writer registry");
            writers.push(tokio::spawn(async move {
                for i in 0..RUNS {
                    // Writer 0's every tenth run commits slowly.
                    let id = if w == 0 && i % 10 == 0 {
                        format!("slow-{i}")
                    } else {
                        format!("w{w}-{i}")
                    };
                    let rec = hensu_store::RunRecord::new(id, "wf", "v1", None);
                    reg.create_tenant_run(&format!("t{}", w % 2), &rec, b"{}", &json!({}))
                        .await
                        .expect("create");
                }
            }));
        }
        let follower = {
            let (reg, done) = (reg.clone(), done.clone());
            tokio::spawn(async move {
                let (mut cursor, mut seen) = (0u64, Vec::new());
                loop {
                    let finished = done.load(Ordering::SeqCst);
                    let rows = reg.events_after(None, cursor, 7).await.expect("read");
                    if rows.is_empty() && finished {
                        return seen;
                    }
                    for r in rows {
                        assert!(r.seq > cursor, "in order");
                        cursor = r.seq;
                        seen.push(r.seq);
                    }
                }
            })
        };
        for w in writers {
            w.await.expect("writer");
        }
        done.store(true, Ordering::SeqCst);
        let seen = follower.await.expect("follower");
        let all: Vec<u64> = reg
            .events_after(None, 0, 10_000)
            .await
            .expect("all")
            .iter()
            .map(|e| e.seq)
            .collect();
        assert_eq!(all.len(), WRITERS * RUNS);
        assert_eq!(seen, all, "the follower missed none and saw none twice");
        tokio::time::timeout(std::time::Duration::from_secs(30), wakeups.next())
            .await
            .expect("a wake-up")
            .expect("listening");
    });
}

/// Tenant runs' commits do not wait for each other (`V5__tenant_event_inbox.sql`): while one
/// tenant run's commit is held in a slow deferred trigger (after the tenant event trigger has
/// run), another server's tenant run commits. Under V4 the second waited for the first's
/// advisory lock, so every tenant run's commit in the cluster waited for the one before it.
/// Both events are then read, each once.
#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn tenant_run_commits_do_not_wait_for_each_other() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let schema = fresh_schema();
    let store = block(PgStore::open_in_schema(&url(), Some(&schema), opts())).expect("store");
    // Fired after `run_log_tenant_event` (triggers of one event fire in name order). It
    // draws from a sequence first — not transactional, so the test sees it at once — to say
    // that the commit has reached it.
    sql(
        &schema,
        "CREATE SEQUENCE slow_reached; \
         CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN PERFORM nextval('slow_reached'); PERFORM pg_sleep(5); RETURN NULL; END $$; \
         CREATE CONSTRAINT TRIGGER zz_slow_commit AFTER INSERT ON run_log \
         DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (NEW.run_id = 'slow') \
         EXECUTE FUNCTION slow_commit();",
    );
    block(async {
        let reg = hensu_store::StateStore::registry(&store)
            .await
            .expect("registry");
        let slow_done = Arc::new(AtomicBool::new(false));
        let slow = {
            let (reg, done) = (reg.clone(), slow_done.clone());
            tokio::spawn(async move {
                let rec = hensu_store::RunRecord::new("slow", "wf", "v1", None);
                reg.create_tenant_run("t1", &rec, b"{}", &json!({}))
                    .await
                    .expect("create slow");
                done.store(true, Ordering::SeqCst);
            })
        };
        // Wait until the slow commit is in its trigger (this schema's sequence, so tests
        // running beside this one do not count).
        loop {
            let schema = schema.clone();
            let reached = tokio::task::spawn_blocking(move || {
                sql(&schema, "SELECT is_called FROM slow_reached")
            })
            .await
            .expect("probe");
            if reached == ["t"] {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        // Another server (a pool of its own) commits a tenant run meanwhile.
        let other = PgStore::open_in_schema(&url(), Some(&schema), opts())
            .await
            .expect("other store");
        let other_reg = hensu_store::StateStore::registry(&other)
            .await
            .expect("other registry");
        let rec = hensu_store::RunRecord::new("fast", "wf", "v1", None);
        other_reg
            .create_tenant_run("t2", &rec, b"{}", &json!({}))
            .await
            .expect("create fast");
        assert!(
            !slow_done.load(Ordering::SeqCst),
            "the second tenant run's commit waited for the first's"
        );
        slow.await.expect("slow writer");
        let mut runs: Vec<String> = reg
            .events_after(None, 0, 100)
            .await
            .expect("events")
            .into_iter()
            .map(|e| e.run_id)
            .collect();
        // Across runs, `seq` follows the inbox (the order the commits began); both were
        // committed when this read sequenced them.
        runs.sort();
        assert_eq!(runs, ["fast", "slow"], "each committed event once");
        assert!(
            reg.events_after(None, 0, 100).await.expect("again").len() == 2,
            "a second read sequences nothing twice"
        );
    });
}

/// Idle workers wait on `LISTEN hensu_work`: a run created queued and a signal sent wake a
/// listener once committed (the store notifies after the commit, `V7__work_notify_after_commit.sql`);
/// a run created running does not, and the schema carries no trigger that would notify inside
/// the writing transaction.
#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn queued_runs_and_signals_wake_listening_workers() {
    use hensu_store::StateStore;
    use std::time::Duration;

    let schema = fresh_schema();
    let store = block(PgStore::open_in_schema(&url(), Some(&schema), opts())).expect("store");
    block(async {
        let mut wakeups = store.work_wakeups().await.expect("listen").expect("some");
        StateStore::create_run(&store, &record("running", 1), &workflow(), &json!({}))
            .await
            .expect("create running");
        assert!(
            tokio::time::timeout(Duration::from_millis(300), wakeups.next())
                .await
                .is_err(),
            "a running run is not queued work"
        );
        let mut queued = record("queued", 2);
        queued.status = hensu_store::RunStatus::Queued;
        StateStore::create_run(&store, &queued, &workflow(), &json!({}))
            .await
            .expect("create queued");
        assert_eq!(
            tokio::time::timeout(Duration::from_secs(20), wakeups.next()).await,
            Ok(Some(())),
            "a queued run wakes the listener"
        );
        StateStore::send_signal(&store, "running", "go", &json!(1))
            .await
            .expect("signal");
        assert_eq!(
            tokio::time::timeout(Duration::from_secs(20), wakeups.next()).await,
            Ok(Some(())),
            "a signal wakes the listener"
        );
    });
    assert_eq!(
        sql(
            &schema,
            &format!(
                "SELECT count(*) FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid \
                 JOIN pg_class c ON c.oid = t.tgrelid \
                 JOIN pg_namespace n ON n.oid = c.relnamespace \
                 WHERE n.nspname = '{schema}' AND p.prosrc ILIKE '%notify%'"
            )
        ),
        ["0"],
        "no trigger notifies inside a writing transaction"
    );
}
