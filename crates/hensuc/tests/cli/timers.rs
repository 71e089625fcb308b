//! Durable waits across processes (docs/language.md, *Timers and signals*), on SQLite and on
//! a real PostgreSQL (`scripts/pg-test.sh`): a run waiting on a 2 s timer survives a SIGKILL of
//! the worker that suspended it and is woken by another worker, not before its time; signals
//! sent before, during and after a wait through `hensuc signal`; a signal wait that times
//! out; a review deadline that escalates. Each finished run replays identically (`hensuc
//! replay`: its waits answered from the recording).

use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hensu_store::{LogKind, RunStatus, StateStore, StoreOptions};

const TIMER: &str = r#"workflow("timer") {
    agents {
        agent("a") { role = "W"; model = "stub" }
    }
    graph {
        start at "before"
        node("before") {
            agent = "a"
            prompt = "go"
            onSuccess goto "pause"
        }
        wait("pause") {
            duration = 2.seconds
            onSuccess goto "after"
        }
        node("after") {
            agent = "a"
            prompt = "again"
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

const GATE: &str = r#"workflow("gate") {
    agents {
        agent("a") { role = "W"; model = "stub" }
    }
    state {
        variable("decision", VarType.STRING)
    }
    graph {
        start at "work"
        node("work") {
            agent = "a"
            prompt = "go"
            onSuccess goto "approval"
        }
        awaitSignal("approval") {
            signal = "approved"
            timeout = 1.hours
            writes("decision")
            onSignal goto "done"
            onTimeout goto "late"
        }
        end("done")
        end("late", ExitStatus.FAILURE)
    }
}
"#;

const REVIEWED: &str = r#"workflow("reviewed") {
    agents {
        agent("a") { role = "W"; model = "stub" }
    }
    graph {
        start at "draft"
        node("draft") {
            agent = "a"
            prompt = "go"
            review {
                mode = ReviewMode.REQUIRED
                deadline = 1.seconds
                onTimeout goto "escalate"
            }
            onApproval goto "done"
            onRejection goto "rejected"
        }
        end("done")
        end("rejected", ExitStatus.FAILURE)
        end("escalate", ExitStatus.FAILURE)
    }
}
"#;

pub(crate) fn project(dir: &Path, name: &str, source: &str) {
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::write(dir.join("workflows").join(name), source).unwrap();
}

pub(crate) fn spawn_worker(dir: &Path, store: &str) -> Child {
    crate::hensuc()
        .args(["worker", "--lease-ttl", "2s", "--heartbeat", "300ms"])
        .args(["--poll", "100ms", "-d"])
        .arg(dir)
        .arg("--store")
        .arg(store)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

pub(crate) fn wait_until(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Queues a run of `workflow` (a file of `dir/workflows/`) in `store`; its id.
pub(crate) fn queue(dir: &Path, store: &str, workflow: &str) -> String {
    let out = crate::hensuc()
        .args(["run", "--stub", "--detach", "-d"])
        .arg(dir)
        .arg(dir.join("workflows").join(workflow))
        .arg("--store")
        .arg(store)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", crate::stderr(&out));
    let text = format!("{}{}", crate::stdout(&out), crate::stderr(&out));
    text.split_whitespace()
        .find(|w| w.len() == 36 && w.chars().filter(|c| *c == '-').count() == 4)
        .unwrap_or_else(|| panic!("no run id in {text}"))
        .to_string()
}

pub(crate) fn record(s: &Arc<dyn StateStore>, id: &str) -> hensu_store::RunRecord {
    crate::wait(s.record(id)).unwrap()
}

/// `hensuc replay` of a finished run (docs/cli.md, *Replay*): its waits are answered from the
/// recording at once — a timer's wake time, a signal's payload — and the replay is identical.
pub(crate) fn replays_identically(dir: &Path, store: &str, id: &str) {
    let out = crate::hensuc()
        .args(["replay", id, "--json", "--store", store, "-d"])
        .arg(dir)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_str(crate::stdout(&out).trim())
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", crate::stdout(&out), crate::stderr(&out)));
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    assert_eq!(report["identical"], true, "{report:#}");
    assert_eq!(report["recorded_status"], "completed", "{report:#}");
}

/// The scenario on one store (`url`: a SQLite path or a PostgreSQL URL).
fn timer_survives_a_killed_worker(dir: &Path, url: &str) {
    project(dir, "timer.hwf", TIMER);
    let store = crate::wait(hensu_store::open_store(url, StoreOptions::default())).unwrap();
    let id = queue(dir, url, "timer.hwf");
    let mut first = spawn_worker(dir, url);
    // The first worker runs `before`, reaches the wait and suspends the run.
    wait_until("the run to wait", Duration::from_secs(60), || {
        let r = record(&store, &id);
        r.status == RunStatus::Paused && r.wait.is_some()
    });
    let wake_at = record(&store, &id)
        .wait
        .and_then(|w| w.wake_at)
        .expect("a wake time");
    // `runs show` says what it waits for.
    let shown = crate::hensuc()
        .args(["runs", "show", &id, "--store", url, "-d"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        crate::stdout(&shown).contains(&format!("wakes at    {}", hensu_store::rfc3339(wake_at))),
        "{}",
        crate::stdout(&shown)
    );
    first.kill().unwrap(); // SIGKILL
    first.wait().unwrap();
    // Another worker wakes it on time and finishes it.
    let mut second = spawn_worker(dir, url);
    wait_until("the run to complete", Duration::from_secs(60), || {
        record(&store, &id).status.is_terminal()
    });
    let _ = second.kill();
    let _ = second.wait();
    let r = record(&store, &id);
    assert_eq!(r.status, RunStatus::Completed, "{r:?}");
    assert_eq!(r.current_node.as_deref(), Some("done"));
    let log = crate::wait(store.read_log(&id, 0, 1_000)).unwrap();
    let steps: Vec<String> = log
        .iter()
        .filter(|e| e.meta.kind == LogKind::Step)
        .filter_map(|e| e.meta.executed_node.clone())
        .collect();
    assert_eq!(steps, ["before", "pause", "after"], "each node once");
    // Claimed twice: by the first worker, then, once the wake time had passed, by the second.
    let claims: Vec<u64> = log
        .iter()
        .filter(|e| e.meta.kind == LogKind::Claimed)
        .map(|e| e.meta.at)
        .collect();
    assert_eq!(claims.len(), 2, "{log:?}");
    assert!(
        claims[1] >= wake_at,
        "woken at {} before {wake_at}",
        claims[1]
    ); // The replay answers the timer from its recorded step: the same wake time, no sleep.
    replays_identically(dir, url, &id);
}

/// A review not decided by its deadline: the run, paused for it with its deadline as its
/// wake time, is claimed by a worker then, and the review's `onTimeout` arm escalates (without
/// the arm a rejection routes it: the runtime's `waits` tests).
fn review_deadline_escalates(dir: &Path, url: &str) {
    project(dir, "reviewed.hwf", REVIEWED);
    let store = crate::wait(hensu_store::open_store(url, StoreOptions::default())).unwrap();
    let out = crate::hensuc()
        .args(["run", "--stub", "-d"])
        .arg(dir)
        .arg(dir.join("workflows").join("reviewed.hwf"))
        .arg("--store")
        .arg(url)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "paused: {}",
        crate::stderr(&out)
    );
    let id = crate::wait(store.list()).unwrap()[0].run_id.clone();
    let r = record(&store, &id);
    assert_eq!(r.status, RunStatus::Paused);
    assert!(r.correlation_id.is_some(), "waits for a review: {r:?}");
    let deadline = r.wait.and_then(|w| w.wake_at).expect("its deadline");
    let mut worker = spawn_worker(dir, url);
    wait_until("the review to escalate", Duration::from_secs(60), || {
        record(&store, &id).status.is_terminal()
    });
    let _ = worker.kill();
    let _ = worker.wait();
    let r = record(&store, &id);
    assert_eq!(r.status, RunStatus::Completed, "{r:?}");
    assert_eq!(r.current_node.as_deref(), Some("escalate"));
    let log = crate::wait(store.read_log(&id, 0, 1_000)).unwrap();
    let claimed = log
        .iter()
        .find(|e| e.meta.kind == LogKind::Claimed)
        .expect("claimed by the worker");
    assert!(claimed.meta.at >= deadline, "not before the deadline");
}

#[test]
fn a_timer_survives_a_killed_worker_on_sqlite() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("state.db");
    timer_survives_a_killed_worker(tmp.path(), db.to_str().unwrap());
}

#[test]
fn a_review_deadline_escalates_on_sqlite() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("state.db");
    review_deadline_escalates(tmp.path(), db.to_str().unwrap());
}

/// A fresh schema of the test database; the store URL whose `search_path` is it.
pub(crate) fn pg_url() -> String {
    crate::pg_schema().1
}

#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn a_review_deadline_escalates_on_postgres() {
    let tmp = tempfile::tempdir().unwrap();
    review_deadline_escalates(tmp.path(), &pg_url());
}

#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn a_timer_survives_a_killed_worker_on_postgres() {
    let tmp = tempfile::tempdir().unwrap();
    timer_survives_a_killed_worker(tmp.path(), &pg_url());
}

fn signal(dir: &Path, store: &str, id: &str, payload: &str) -> std::process::Output {
    crate::hensuc()
        .args(["signal", id, "approved", "-c", payload, "-d"])
        .arg(dir)
        .arg("--store")
        .arg(store)
        .output()
        .unwrap()
}

/// Before the wait: kept and taken when the run gets there. During: wakes the waiting run.
/// After the run ended: refused. A payload of the wrong type: refused, nothing stored.
#[test]
fn signals_before_during_and_after_the_wait() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let db = dir.join("state.db");
    let url = db.to_str().unwrap();
    project(dir, "gate.hwf", GATE);
    let store = crate::wait(hensu_store::open_store(url, StoreOptions::default())).unwrap();
    let drain = || {
        let out = crate::hensuc()
            .args(["worker", "--drain", "-d"])
            .arg(dir)
            .arg("--store")
            .arg(url)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", crate::stderr(&out));
    };

    // Before: queued, not started.
    let early = queue(dir, url, "gate.hwf");
    let out = signal(dir, url, &early, r#""early""#);
    assert!(out.status.success(), "{}", crate::stderr(&out));
    assert!(
        crate::stdout(&out).contains("stored"),
        "{}",
        crate::stdout(&out)
    );
    drain();
    let r = record(&store, &early);
    assert_eq!(r.status, RunStatus::Completed, "{r:?}");
    let state = crate::wait(store.load(&early)).unwrap().snapshot;
    assert_eq!(state["context"]["decision"], "early");

    // During: the run waits (a worker suspended it), the signal wakes it.
    let during = queue(dir, url, "gate.hwf");
    drain();
    let r = record(&store, &during);
    assert_eq!(r.status, RunStatus::Paused);
    assert_eq!(r.wait.and_then(|w| w.signal).as_deref(), Some("approved"));
    let bad = signal(dir, url, &during, "42");
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        crate::stderr(&bad).contains("invalid_signal_payload"),
        "{}",
        crate::stderr(&bad)
    );
    assert!(crate::wait(store.signals(&during)).unwrap().is_empty());
    let out = signal(dir, url, &during, r#""ship""#);
    assert!(out.status.success(), "{}", crate::stderr(&out));
    assert!(
        crate::stdout(&out).contains("was waiting"),
        "{}",
        crate::stdout(&out)
    );
    drain();
    assert_eq!(record(&store, &during).status, RunStatus::Completed);
    let state = crate::wait(store.load(&during)).unwrap().snapshot;
    assert_eq!(state["context"]["decision"], "ship");
    // The delivery is in the run log once: the wait's step, its output the payload.
    let log = crate::wait(store.read_log(&during, 0, 1_000)).unwrap();
    let deliveries: Vec<_> = log
        .iter()
        .filter(|e| e.meta.executed_node.as_deref() == Some("approval"))
        .collect();
    assert_eq!(deliveries.len(), 1, "{log:?}");
    assert_eq!(deliveries[0].output, Some(serde_json::json!("ship")));
    // Both deliveries replay from the record (the signal sent before the wait and the one
    // that woke it).
    replays_identically(dir, url, &early);
    replays_identically(dir, url, &during);

    // After: the run ended.
    let late = signal(dir, url, &during, r#""again""#);
    assert_eq!(late.status.code(), Some(1));
    assert!(
        crate::stderr(&late).contains("run_finished"),
        "{}",
        crate::stderr(&late)
    );
}

/// A signal wait that times out takes `onTimeout` once a worker claims it after its wake time,
/// and its replay answers the timeout from the record at once.
#[test]
fn a_signal_timeout_escalates_and_replays() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let db = dir.join("state.db");
    let url = db.to_str().unwrap();
    project(
        dir,
        "gate.hwf",
        &GATE.replace("timeout = 1.hours", "timeout = 1.seconds"),
    );
    let store = crate::wait(hensu_store::open_store(url, StoreOptions::default())).unwrap();
    let id = queue(dir, url, "gate.hwf");
    let mut worker = spawn_worker(dir, url);
    wait_until("the wait to time out", Duration::from_secs(60), || {
        record(&store, &id).status.is_terminal()
    });
    let _ = worker.kill();
    let _ = worker.wait();
    let r = record(&store, &id);
    assert_eq!(r.current_node.as_deref(), Some("late"), "{r:?}");
    replays_identically(dir, url, &id);
}

/// `--no-store` leaves nowhere to keep a waiting run: refused before it starts (E0116).
#[test]
fn no_store_refuses_durable_waits() {
    let tmp = tempfile::tempdir().unwrap();
    project(tmp.path(), "gate.hwf", GATE);
    let out = crate::hensuc()
        .args(["run", "--stub", "--no-store", "-d"])
        .arg(tmp.path())
        .arg(tmp.path().join("workflows").join("gate.hwf"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!(crate::stderr(&out));
    assert!(!tmp.path().join(".hensu").exists(), "nothing stored");
}
