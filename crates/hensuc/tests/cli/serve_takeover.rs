//! Two `hensuc serve` processes on one PostgreSQL database (`scripts/pg-test.sh`): an
//! execution started on server A continues on server B after A is killed with SIGKILL (B's
//! takeover worker claims it once A's lease expires), with every step recorded once; a run
//! paused for a human review is never taken over; local runs queued on the same database
//! (`hensuc run --detach`, a worker's) neither delay the takeover nor are claimed by a server.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use hensu_store::{LogKind, RunStatus, StateStore};

use crate::serve::{ServeProcess as Serve, spawn_serve};

const NODES: usize = 8;
const LOCAL_RUNS: usize = 6;

fn workflow() -> String {
    let mut s = String::from(
        "fun steps() = workflow(\"Steps\") {\n    agents {\n        agent(\"a\") { role = \"W\"; model = \"stub\" }\n    }\n    graph {\n        start at \"n0\"\n",
    );
    for i in 0..NODES {
        let next = if i + 1 == NODES {
            "done".to_string()
        } else {
            format!("n{}", i + 1)
        };
        s.push_str(&format!(
            "        node(\"n{i}\") {{\n            agent = \"a\"\n            prompt = \"step {i}\"\n            onSuccess goto \"{next}\"\n        }}\n"
        ));
    }
    s.push_str("        end(\"done\")\n    }\n}\n");
    s
}

const REVIEWED: &str = r#"fun reviewed() = workflow("Reviewed") {
    agents {
        agent("writer") { role = "Writer"; model = "stub" }
    }
    graph {
        start at "draft"
        node("draft") {
            agent = "writer"
            prompt = "Write."
            review(ReviewMode.REQUIRED)
            onApproval goto "done"
            onRejection goto "done"
        }
        end("done")
    }
}
"#;

fn serve(dir: &Path, store: &str) -> Serve {
    spawn_serve(
        crate::hensuc()
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--stub",
                "--lease-ttl",
                "2s",
            ])
            .arg("--store")
            .arg(store)
            .arg("-d")
            .arg(dir)
            // Slow agents: the run is still mid-way when its server is killed.
            .env("HENSU_STUB_DELAY_MS", "250"),
    )
}

fn wait_until(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts `workflow` on `server` with `hensuc run --server` (left streaming in the
/// background; it is killed at the end).
fn start(server: &Serve, workflow: &str) -> Child {
    crate::hensuc()
        .args(["run", workflow, "--server", &server.url])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run --server")
}

#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn a_killed_servers_execution_is_finished_by_another() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    std::fs::write(dir.join("steps.hwf"), workflow()).expect("write");
    std::fs::write(dir.join("reviewed.hwf"), REVIEWED).expect("write");
    let (store, url) = crate::pg_schema();

    let mut a = serve(dir, &url);
    let b = serve(dir, &url);
    for file in ["steps.hwf", "reviewed.hwf"] {
        let push = crate::hensuc()
            .arg("push")
            .arg(dir.join(file))
            .args(["--server", &a.url])
            .output()
            .expect("push");
        assert!(push.status.success(), "{}", crate::stderr(&push));
    }

    // Local runs queued ahead of the servers' (older): a worker's, not a server's.
    std::fs::write(
        dir.join("local.hwf"),
        workflow().replace("\"Steps\"", "\"Local\""),
    )
    .expect("write");
    for _ in 0..LOCAL_RUNS {
        let q = crate::hensuc()
            .arg("run")
            .arg(dir.join("local.hwf"))
            .args(["--detach", "-d"])
            .arg(dir)
            .env("HENSU_DATABASE_URL", &url)
            .output()
            .expect("run --detach");
        assert!(q.status.success(), "{}", crate::stderr(&q));
    }

    let mut clients = vec![start(&a, "reviewed"), start(&a, "steps")];
    let find = |workflow: &str| {
        crate::wait(store.list())
            .expect("list")
            .into_iter()
            .find(|r| r.workflow_id == workflow)
    };
    wait_until("the review pause", Duration::from_secs(60), || {
        find("reviewed").is_some_and(|r| r.status == RunStatus::Paused)
    });
    // Kill A mid-run: a few steps recorded, the rest not.
    // Three executed steps (a loaded machine may already have moved the run between the
    // servers once, which writes claim and snapshot rows that count as log steps too).
    let executed = |r: &hensu_store::RunRecord| {
        crate::wait(store.read_log(&r.run_id, 0, 10_000))
            .map(|log| log.iter().filter(|e| e.meta.kind == LogKind::Step).count())
            .unwrap_or(0)
    };
    wait_until("three steps on server A", Duration::from_secs(60), || {
        find("steps").is_some_and(|r| executed(&r) >= 3)
    });
    a.child.kill().expect("SIGKILL server A");
    a.child.wait().expect("reap");
    let at_kill = find("steps").expect("run");
    assert_eq!(at_kill.status, RunStatus::Running, "{at_kill:?}");
    assert!(at_kill.step < NODES as u64, "killed mid-run: {at_kill:?}");

    // B continues it once A's 2 s lease has expired.
    wait_until(
        "server B to finish the run",
        Duration::from_secs(120),
        || find("steps").is_some_and(|r| r.status.is_terminal()),
    );
    let run = find("steps").expect("run");
    assert_eq!(run.status, RunStatus::Completed, "{run:?}");
    assert_eq!(run.current_node.as_deref(), Some("done"));
    let log = crate::wait(store.read_log(&run.run_id, 0, 10_000)).expect("log");
    let steps: Vec<String> = log
        .iter()
        .filter(|e| e.meta.kind == LogKind::Step)
        .filter_map(|e| e.meta.executed_node.clone())
        .collect();
    let expected: Vec<String> = (0..NODES).map(|i| format!("n{i}")).collect();
    assert_eq!(steps, expected, "every step recorded once, in order");
    // The takeover in the log: the new owner's first write is a full snapshot, after the
    // steps server A recorded. The last one is the takeover the kill caused (an earlier one, on
    // a loaded machine, is a lease that lapsed before it could be renewed).
    let takeover = log
        .iter()
        .rposition(|e| e.meta.kind == LogKind::Snapshot)
        .expect("a snapshot row where server B took over");
    assert!(
        log[..takeover]
            .iter()
            .filter(|e| e.meta.kind == LogKind::Step)
            .count()
            >= 2,
        "server A's steps come before the takeover: {:?}",
        log.iter().map(|e| e.meta.kind).collect::<Vec<_>>()
    );
    let context = crate::wait(store.load(&run.run_id)).expect("load").snapshot["context"].clone();
    for i in 0..NODES {
        assert!(context.get(format!("n{i}")).is_some(), "{context}");
    }

    // The local runs wait for a worker: no server claimed them (no `claimed` row).
    let local: Vec<_> = crate::wait(store.list())
        .expect("list")
        .into_iter()
        .filter(|r| r.workflow_id == "local")
        .collect();
    assert_eq!(local.len(), LOCAL_RUNS);
    for r in &local {
        assert_eq!(r.status, RunStatus::Queued, "{r:?}");
        let history = crate::wait(store.history(&r.run_id)).expect("history");
        assert!(
            history.iter().all(|h| h.kind != LogKind::Claimed),
            "a server claimed a local run: {history:?}"
        );
    }

    // The paused run waits for its reviewer: never claimed, still resumable through B.
    let paused = find("reviewed").expect("paused run");
    assert_eq!(paused.status, RunStatus::Paused, "{paused:?}");
    let resume = crate::hensuc()
        .args(["resume", &paused.run_id, "--server", &b.url, "--approve"])
        .output()
        .expect("resume");
    assert!(resume.status.success(), "{}", crate::stderr(&resume));
    assert_eq!(
        find("reviewed").expect("run").status,
        RunStatus::Completed,
        "approved through server B"
    );
    for c in &mut clients {
        let _ = c.kill();
        let _ = c.wait();
    }
}
