//! Durable waits inside fork branches and sub-workflow children (docs/language.md, *Timers
//! and signals*), on SQLite and on a real PostgreSQL (`scripts/pg-test.sh`): the worker that
//! reaches them suspends the whole run and is killed (SIGKILL); a signal sent then wakes the
//! branch waiting for it, another worker continues the run, the timer's branch goes on at its
//! time and the fork joins once.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use hensu_store::{LogKind, RunStatus, StateStore, StoreOptions};

use super::timers::{pg_url, project, queue, record, spawn_worker, wait_until};

const FORKED: &str = r#"workflow("forked") {
    agents {
        agent("a") { role = "W"; model = "stub" }
    }
    state {
        variable("decision", VarType.STRING)
    }
    graph {
        start at "split"
        fork("split") {
            targets("cool", "gate")
            onComplete goto "merge"
        }
        wait("cool") {
            duration = 2.seconds
            onSuccess goto "after"
        }
        node("after") {
            agent = "a"
            prompt = "after the timer"
            onSuccess goto "merge"
        }
        awaitSignal("gate") {
            signal = "approved"
            timeout = 1.hours
            writes("decision")
            onSignal goto "merge"
            onTimeout goto "merge"
        }
        join("merge") {
            await("split")
            mergeStrategy = MergeStrategy.MERGE_MAPS
            writes("decision")
            onSuccess goto "done"
            onFailure goto "failed"
        }
        end("done")
        end("failed", ExitStatus.FAILURE)
    }
}
"#;

const PARENT: &str = r#"workflow("parent") {
    agents {
        agent("a") { role = "W"; model = "stub" }
    }
    graph {
        start at "first"
        node("first") {
            agent = "a"
            prompt = "go"
            onSuccess goto "call"
        }
        subWorkflow("call") {
            target = "napper"
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

const NAPPER: &str = r#"workflow("napper") {
    agents {
        agent("a") { role = "W"; model = "stub" }
    }
    graph {
        start at "nap"
        wait("nap") {
            duration = 2.seconds
            onSuccess goto "woke"
        }
        node("woke") {
            agent = "a"
            prompt = "woke up"
            onSuccess goto "end"
        }
        end("end")
    }
}
"#;

const ASKER: &str = r#"workflow("asker") {
    agents {
        agent("a") { role = "W"; model = "stub" }
    }
    state {
        variable("answer", VarType.STRING)
    }
    graph {
        start at "call"
        subWorkflow("call") {
            target = "approver"
            writes("answer")
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

const APPROVER: &str = r#"workflow("approver") {
    state {
        variable("answer", VarType.STRING)
    }
    graph {
        start at "gate"
        awaitSignal("gate") {
            signal = "approved"
            writes("answer")
            onSignal goto "end"
        }
        end("end")
    }
}
"#;

fn open(url: &str) -> Arc<dyn StateStore> {
    crate::wait(hensu_store::open_store(url, StoreOptions::default())).unwrap()
}

/// The run's claims (their times) and the nodes its main flow executed, from its log.
fn claims_and_steps(store: &Arc<dyn StateStore>, id: &str) -> (Vec<u64>, Vec<String>) {
    let log = crate::wait(store.read_log(id, 0, 1_000)).unwrap();
    let claims = log
        .iter()
        .filter(|e| e.meta.kind == LogKind::Claimed)
        .map(|e| e.meta.at)
        .collect();
    let steps = log
        .iter()
        .filter(|e| e.meta.kind == LogKind::Step)
        .filter_map(|e| e.meta.executed_node.clone())
        .collect();
    (claims, steps)
}

/// How often the final state's history shows `node`.
fn visits(state: &serde_json::Value, node: &str) -> usize {
    state["history"]
        .as_array()
        .map(|h| h.iter().filter(|s| s["node_id"] == node).count())
        .unwrap_or(0)
}

/// Suspends the run with a worker, kills the worker; the paused record.
fn suspend_and_kill(dir: &Path, url: &str, store: &Arc<dyn StateStore>, id: &str) {
    let mut first = spawn_worker(dir, url);
    wait_until("the run to wait", Duration::from_secs(60), || {
        let r = record(store, id);
        r.status == RunStatus::Paused && r.wait.is_some()
    });
    first.kill().unwrap(); // SIGKILL
    first.wait().unwrap();
}

fn branches_wait_across_a_killed_worker(dir: &Path, url: &str) {
    project(dir, "forked.hwf", FORKED);
    let store = open(url);
    let id = queue(dir, url, "forked.hwf");
    suspend_and_kill(dir, url, &store, &id);
    let r = record(&store, &id);
    assert_eq!(
        r.current_node.as_deref(),
        Some("split"),
        "paused at the fork"
    );
    let wait = r.wait.expect("a wait");
    let wake_at = wait.wake_at.expect("the timer's wake time");
    assert_eq!(wait.signal.as_deref(), Some("approved"), "{wait:?}");
    assert!(
        wake_at < r.updated_at + 3_000,
        "the earliest wait (the 2 s timer), not the signal's 1 h timeout: {wake_at}"
    );
    // No worker runs: the signal is kept and wakes the run for the next one.
    let out = crate::hensuc()
        .args(["signal", &id, "approved", "-c", r#""yes""#, "-d"])
        .arg(dir)
        .arg("--store")
        .arg(url)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", crate::stderr(&out));
    assert!(
        crate::stdout(&out).contains("was waiting"),
        "{}",
        crate::stdout(&out)
    );
    let mut second = spawn_worker(dir, url);
    wait_until("the run to complete", Duration::from_secs(60), || {
        record(&store, &id).status.is_terminal()
    });
    let _ = second.kill();
    let _ = second.wait();
    let r = record(&store, &id);
    assert_eq!(r.status, RunStatus::Completed, "{r:?}");
    assert_eq!(r.current_node.as_deref(), Some("done"));
    let (claims, steps) = claims_and_steps(&store, &id);
    assert_eq!(
        steps,
        ["split", "merge"],
        "the fork and its join, once each"
    );
    assert!(claims.len() >= 2, "{claims:?}");
    assert!(
        *claims.last().unwrap() >= wake_at,
        "the timer's branch went on at its time, not before: {claims:?} {wake_at}"
    );
    let state = crate::wait(store.load(&id)).unwrap().snapshot;
    assert_eq!(state["context"]["decision"], "yes", "{state:#}");
    for node in ["cool", "after", "gate"] {
        assert_eq!(visits(&state, node), 1, "{node} ran once: {state:#}");
    }
    super::timers::replays_identically(dir, url, &id);
}

fn a_child_waits_across_a_killed_worker(dir: &Path, url: &str) {
    project(dir, "parent.hwf", PARENT);
    project(dir, "napper.hwf", NAPPER);
    let store = open(url);
    let id = queue(dir, url, "parent.hwf");
    suspend_and_kill(dir, url, &store, &id);
    let r = record(&store, &id);
    assert_eq!(
        r.current_node.as_deref(),
        Some("call"),
        "paused at the child"
    );
    let wake_at = r
        .wait
        .and_then(|w| w.wake_at)
        .expect("the child's wake time");
    let mut second = spawn_worker(dir, url);
    wait_until("the run to complete", Duration::from_secs(60), || {
        record(&store, &id).status.is_terminal()
    });
    let _ = second.kill();
    let _ = second.wait();
    let r = record(&store, &id);
    assert_eq!(r.status, RunStatus::Completed, "{r:?}");
    let (claims, steps) = claims_and_steps(&store, &id);
    // The child's nodes are recorded at its own boundaries (`call/…`): the wait once.
    assert_eq!(steps, ["first", "call/nap", "call"], "each node once");
    assert_eq!(claims.len(), 2, "{claims:?}");
    assert!(
        claims[1] >= wake_at,
        "woken at {} before {wake_at}",
        claims[1]
    );
    super::timers::replays_identically(dir, url, &id);
}

#[test]
fn fork_branches_wait_across_a_killed_worker_on_sqlite() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("state.db");
    branches_wait_across_a_killed_worker(tmp.path(), db.to_str().unwrap());
}

#[test]
fn a_child_waits_across_a_killed_worker_on_sqlite() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("state.db");
    a_child_waits_across_a_killed_worker(tmp.path(), db.to_str().unwrap());
}

#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn fork_branches_wait_across_a_killed_worker_on_postgres() {
    let tmp = tempfile::tempdir().unwrap();
    branches_wait_across_a_killed_worker(tmp.path(), &pg_url());
}

#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn a_child_waits_across_a_killed_worker_on_postgres() {
    let tmp = tempfile::tempdir().unwrap();
    a_child_waits_across_a_killed_worker(tmp.path(), &pg_url());
}

/// A signal for an `awaitSignal` of a sub-workflow child: checked against the child's
/// variables (a wrong type is refused, nothing stored), delivered to the waiting child, whose
/// result the parent takes.
#[test]
fn a_signal_reaches_a_waiting_child() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let db = dir.join("state.db");
    let url = db.to_str().unwrap();
    project(dir, "asker.hwf", ASKER);
    project(dir, "approver.hwf", APPROVER);
    let store = open(url);
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
    let id = queue(dir, url, "asker.hwf");
    drain();
    let r = record(&store, &id);
    assert_eq!(r.status, RunStatus::Paused, "{r:?}");
    assert_eq!(r.current_node.as_deref(), Some("call"));
    assert_eq!(r.wait.and_then(|w| w.signal).as_deref(), Some("approved"));
    let send = |payload: &str| {
        crate::hensuc()
            .args(["signal", &id, "approved", "-c", payload, "-d"])
            .arg(dir)
            .arg("--store")
            .arg(url)
            .output()
            .unwrap()
    };
    let bad = send("42");
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        crate::stderr(&bad).contains("invalid_signal_payload"),
        "{}",
        crate::stderr(&bad)
    );
    assert!(crate::wait(store.signals(&id)).unwrap().is_empty());
    let out = send(r#""granted""#);
    assert!(out.status.success(), "{}", crate::stderr(&out));
    assert!(
        crate::stdout(&out).contains("was waiting"),
        "{}",
        crate::stdout(&out)
    );
    drain();
    let r = record(&store, &id);
    assert_eq!(r.status, RunStatus::Completed, "{r:?}");
    let state = crate::wait(store.load(&id)).unwrap().snapshot;
    assert_eq!(state["context"]["answer"], "granted", "{state:#}");
    assert_eq!(state["signals_taken"], serde_json::json!([0]), "{state:#}");
}

/// `hensuc run` says which nested wait holds the run it leaves paused, and `runs show` every
/// signal its branches wait for.
#[test]
fn a_paused_run_names_its_nested_waits() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let db = dir.join("state.db");
    let url = db.to_str().unwrap();
    project(dir, "parent.hwf", PARENT);
    project(
        dir,
        "napper.hwf",
        &NAPPER.replace("duration = 2.seconds", "duration = 2.hours"),
    );
    project(
        dir,
        "forked.hwf",
        &FORKED.replace("duration = 2.seconds", "duration = 2.hours"),
    );
    let run = |name: &str| {
        crate::hensuc()
            .args(["run", "--stub", "-d"])
            .arg(dir)
            .arg(dir.join("workflows").join(name))
            .arg("--store")
            .arg(url)
            .output()
            .unwrap()
    };
    let out = run("parent.hwf");
    assert_eq!(
        out.status.code(),
        Some(3),
        "paused: {}",
        crate::stderr(&out)
    );
    assert!(
        crate::stderr(&out).contains("node `nap` (inside `call`) waits until"),
        "{}",
        crate::stderr(&out)
    );
    // Resumed by hand before its time: a child's timer is not waited for in place (only the
    // main flow's is); the run pauses again, its wake time unchanged.
    let store = open(url);
    let parent = crate::wait(store.list()).unwrap()[0].run_id.clone();
    let wake_at = record(&store, &parent).wait.and_then(|w| w.wake_at);
    let out = crate::hensuc()
        .args(["resume", &parent, "--store", url, "-d"])
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "paused: {}",
        crate::stderr(&out)
    );
    assert!(
        crate::stderr(&out).contains("node `nap` (inside `call`) waits until"),
        "{}",
        crate::stderr(&out)
    );
    let r = record(&store, &parent);
    assert_eq!(r.status, RunStatus::Paused);
    assert_eq!(
        r.wait.and_then(|w| w.wake_at),
        wake_at,
        "the same wake time"
    );
    let out = run("forked.hwf");
    assert_eq!(
        out.status.code(),
        Some(3),
        "paused: {}",
        crate::stderr(&out)
    );
    let err = crate::stderr(&out);
    assert!(
        err.contains("node `cool` (inside `split`) waits until"),
        "{err}"
    );
    assert!(
        err.contains("node `gate` (inside `split`) waits for signal `approved` (timeout"),
        "{err}"
    );
    let id = crate::wait(store.list())
        .unwrap()
        .into_iter()
        .find(|r| r.workflow_id == "forked")
        .expect("the forked run")
        .run_id;
    let shown = crate::hensuc()
        .args(["runs", "show", &id, "--store", url, "-d"])
        .arg(dir)
        .output()
        .unwrap();
    let text = crate::stdout(&shown);
    assert!(text.contains("waits for   signal `approved`"), "{text}");
    assert!(text.contains("wakes at"), "{text}");
}
