//! SIGTERM on a real `hensuc serve` (docs/server.md, *Running it*): every execution in flight
//! is handed back at its next node boundary — still `running`, never `cancelled`, and no saga
//! compensation runs — and another server on the same store continues it to its normal end.
//! Tested with the saga example (`examples/workflows/trip-booking.hwf`) and a parallel node
//! after a compensable step, on SQLite.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use hensu_store::{LogKind, RunRecord, RunStatus, SqliteStore, StateStore, StoreOptions};

use crate::serve::{ServeProcess, spawn_serve};

const PARALLEL_SAGA: &str = r#"fun workflow() = workflow("parallel-saga") {
    state {
        input("topic", VarType.STRING)
        variable("reserved", VarType.STRING)
        variable("facts", VarType.STRING)
        variable("style", VarType.STRING)
    }
    agents {
        agent("a") { role = "Worker"; model = "stub" }
    }
    graph {
        start at "reserve"
        node("reserve") {
            agent = "a"
            prompt = "Reserve {topic}."
            writes("reserved")
            compensation = "release"
            onSuccess goto "review"
            onFailure goto "failed"
        }
        parallel("review") {
            branch("facts") {
                agent = "a"
                prompt = "Check the facts of {topic} ({reserved})."
                yields("facts")
            }
            branch("style") {
                agent = "a"
                prompt = "Check the style of {topic}."
                yields("style")
            }
            onSuccess goto "publish"
        }
        node("publish") {
            agent = "a"
            prompt = "Publish {topic}: {facts} {style}."
            onSuccess goto "done"
        }
        compensation("release") {
            agent = "a"
            prompt = "Release {topic}."
        }
        end("done")
        end("failed", ExitStatus.FAILURE)
    }
}
"#;

const COMPENSATIONS: [&str; 3] = ["cancel-hotel", "cancel-flight", "release"];

fn serve(dir: &Path) -> ServeProcess {
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
            .arg(dir.join("state.db"))
            .arg("-d")
            .arg(dir)
            // Slow agents: the runs are mid-way when the signal comes.
            .env("HENSU_STUB_DELAY_MS", "1000"),
    )
}

fn wait_until(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn start(server: &ServeProcess, workflow: &str, context: &str) -> Child {
    crate::hensuc()
        .args(["run", workflow, "--server", &server.url, "-c", context])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run --server")
}

/// The nodes a run's log names, in order: every row's (`steps_only`: the step rows').
fn executed(store: &SqliteStore, run: &RunRecord, steps_only: bool) -> Vec<String> {
    crate::wait(store.read_log(&run.run_id, 0, 10_000))
        .expect("log")
        .into_iter()
        .filter(|e| !steps_only || e.meta.kind == LogKind::Step)
        .filter_map(|e| e.meta.executed_node)
        .collect()
}

#[test]
fn sigterm_hands_saga_and_parallel_runs_back_uncancelled() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    std::fs::copy(
        examples.join("workflows/trip-booking.hwf"),
        dir.join("trip-booking.hwf"),
    )
    .expect("copy the saga example");
    let stubs = dir.join("stubs/default");
    std::fs::create_dir_all(&stubs).expect("stubs");
    for f in ["book-flight.txt", "book-hotel.txt", "pay.txt"] {
        std::fs::copy(examples.join("stubs/default").join(f), stubs.join(f)).expect("stub");
    }
    std::fs::write(dir.join("parallel-saga.hwf"), PARALLEL_SAGA).expect("write");

    let mut a = serve(dir);
    for file in ["trip-booking.hwf", "parallel-saga.hwf"] {
        let push = crate::hensuc()
            .arg("push")
            .arg(dir.join(file))
            .args(["--server", &a.url])
            .output()
            .expect("push");
        assert!(push.status.success(), "{}", crate::stderr(&push));
    }
    let mut clients = Vec::new();
    for _ in 0..3 {
        clients.push(start(&a, "trip-booking", r#"{"trip": "Lisbon to Tokyo"}"#));
    }
    clients.push(start(&a, "parallel-saga", r#"{"topic": "a launch"}"#));

    let store = SqliteStore::open_file(dir.join("state.db"), StoreOptions::default())
        .expect("the server's store");
    let runs = || crate::wait(store.list()).expect("list");
    // In flight: every run is past its first (compensable) step, inside its second node (the
    // parallel one for `parallel-saga`), with a node still to go after it.
    wait_until(
        "four runs in their second node",
        Duration::from_secs(60),
        || {
            let r = runs();
            r.len() == 4
                && r.iter().all(|r| {
                    matches!(r.current_node.as_deref(), Some("book-hotel" | "review"))
                        && r.status == RunStatus::Running
                })
        },
    );
    let term = std::process::Command::new("kill")
        .args(["-TERM", &a.child.id().to_string()])
        .status()
        .expect("kill -TERM");
    assert!(term.success());
    let exit = a.child.wait().expect("server A exits");
    assert!(exit.success(), "server A after SIGTERM: {exit:?}");

    // Handed back: still running, nothing compensated, nothing cancelled.
    for run in runs() {
        assert_eq!(run.status, RunStatus::Running, "{run:?}");
        assert!(!run.cancel_requested, "{run:?}");
        let nodes = executed(&store, &run, false);
        assert!(
            !nodes.iter().any(|n| COMPENSATIONS.contains(&n.as_str())),
            "no compensation at shutdown: {nodes:?}"
        );
        let snapshot = crate::wait(store.load(&run.run_id)).expect("load").snapshot;
        assert!(snapshot["compensating"].is_null(), "{snapshot}");
    }

    // Another server takes them over at once (the leases were released) and ends them normally.
    let _b = serve(dir);
    wait_until(
        "server B to finish the runs",
        Duration::from_secs(120),
        || runs().iter().all(|r| r.status.is_terminal()),
    );
    for run in runs() {
        assert_eq!(run.status, RunStatus::Completed, "{run:?}");
        let all = executed(&store, &run, false);
        assert!(
            !all.iter().any(|n| COMPENSATIONS.contains(&n.as_str())),
            "no compensation: {all:?}"
        );
        let nodes = executed(&store, &run, true);
        let expected: &[&str] = if run.workflow_id == "trip-booking" {
            &["book-flight", "book-hotel", "pay"]
        } else {
            &["reserve", "review", "publish"]
        };
        assert_eq!(nodes, expected, "{}: each step once", run.run_id);
    }
    for c in &mut clients {
        let _ = c.kill();
        let _ = c.wait();
    }
}
