//! Workers under faults, on a real PostgreSQL (`scripts/pg-test.sh`): 3 `hensuc worker`
//! processes share 60 queued runs of a 10-step workflow; one is killed with SIGKILL mid-way.
//! Every run must reach its end node with the context of an uninterrupted run, and no step may
//! be recorded twice in any run's log (a takeover re-runs only the unrecorded in-flight node).

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use hensu_store::{LogKind, PgStore, RunStatus, StateStore};
use serde_json::Value;

const RUNS: usize = 60;
const NODES: usize = 10;

fn workflow() -> String {
    let mut s = String::from(
        "fun w() = workflow(\"ten\") {\n    agents {\n        agent(\"a\") { role = \"W\"; model = Models.GPT_4O }\n    }\n    graph {\n        start at \"n0\"\n",
    );
    for i in 0..NODES {
        let next = if i + 1 == NODES {
            "done".to_string()
        } else {
            format!("n{}", i + 1)
        };
        let prompt = if i == 0 {
            "go".to_string()
        } else {
            format!("after {{n{}}}", i - 1)
        };
        s.push_str(&format!(
            "        node(\"n{i}\") {{\n            agent = \"a\"\n            prompt = \"{prompt}\"\n            onSuccess goto \"{next}\"\n        }}\n"
        ));
    }
    s.push_str("        end(\"done\")\n    }\n}\n");
    s
}

fn project(dir: &Path) {
    let stubs = dir.join("stubs").join("default");
    std::fs::create_dir_all(&stubs).unwrap();
    for i in 0..NODES {
        std::fs::write(stubs.join(format!("n{i}.txt")), format!("output of n{i}")).unwrap();
    }
    std::fs::write(dir.join("w.hwf"), workflow()).unwrap();
}

fn spawn_worker(dir: &Path, url: &str, events: &Path) -> Child {
    crate::hensuc()
        .args([
            "worker",
            "--concurrency",
            "4",
            "--lease-ttl",
            "2s",
            "--heartbeat",
            "300ms",
        ])
        .args(["--poll", "100ms", "-d"])
        .arg(dir)
        .arg("--store")
        .arg(url)
        .arg("--events")
        .arg(events)
        .env("HENSU_STUB_DELAY_MS", "40")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

fn wait_until(what: &str, limit: Duration, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
#[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
fn three_workers_one_killed_every_run_completes_once() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    project(dir);
    let (store, url) = crate::pg_schema();

    // The uninterrupted baseline: the same workflow, one run on a SQLite store of its own.
    let base_dir = tmp.path().join("base");
    project(&base_dir);
    let out = crate::hensuc()
        .args(["run", "--stub", "-d"])
        .arg(&base_dir)
        .arg(base_dir.join("w.hwf"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let base_store = hensu_store::SqliteStore::open(&base_dir).unwrap();
    let base_run = crate::wait(base_store.list()).unwrap()[0].run_id.clone();
    let base_context = crate::wait(base_store.load(&base_run)).unwrap().snapshot["context"].clone();

    for _ in 0..RUNS {
        let o = crate::hensuc()
            .args(["run", "--stub", "--detach", "-d"])
            .arg(dir)
            .arg(dir.join("w.hwf"))
            .env("HENSU_DATABASE_URL", &url)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    assert_eq!(crate::wait(store.list()).unwrap().len(), RUNS);
    // Not claimed yet: queued.
    assert!(
        crate::wait(store.list())
            .unwrap()
            .iter()
            .all(|r| r.status == RunStatus::Queued)
    );

    let mut workers: Vec<Child> = (0..3)
        .map(|i| spawn_worker(dir, &url, &dir.join(format!("w{i}.jsonl"))))
        .collect();
    let done = |s: &PgStore| {
        crate::wait(s.list())
            .unwrap()
            .iter()
            .filter(|r| r.status.is_terminal())
            .count()
    };
    // Kill worker 0 mid-way, while it holds runs in flight.
    wait_until("a third of the runs", Duration::from_secs(120), || {
        done(&store) >= RUNS / 3
    });
    workers[0].kill().unwrap(); // SIGKILL
    workers[0].wait().unwrap();
    wait_until("every run", Duration::from_secs(180), || {
        done(&store) == RUNS
    });
    for w in workers.iter_mut().skip(1) {
        let _ = w.kill();
        let _ = w.wait();
    }

    let expected_path: Vec<String> = (0..NODES).map(|i| format!("n{i}")).collect();
    let mut contexts = Vec::new();
    for r in crate::wait(store.list()).unwrap() {
        assert_eq!(r.status, RunStatus::Completed, "{r:?}");
        assert_eq!(r.current_node.as_deref(), Some("done"));
        let state = crate::wait(store.load(&r.run_id)).unwrap().snapshot;
        contexts.push(state["context"].clone());
        // No step recorded twice: the log's steps are exactly the path, once each.
        let steps: Vec<String> = crate::wait(store.read_log(&r.run_id, 0, 10_000))
            .unwrap()
            .into_iter()
            .filter(|e| e.meta.kind == LogKind::Step)
            .filter_map(|e| e.meta.executed_node)
            .collect();
        assert_eq!(steps, expected_path, "run {}", r.run_id);
    }
    // Every final context is the uninterrupted run's (which holds every node's output).
    for i in 0..NODES {
        assert!(
            base_context.get(format!("n{i}")).is_some(),
            "{base_context}"
        );
    }
    assert!(contexts.iter().all(|c| *c == base_context), "{contexts:?}");
    // The takeovers were reported by the surviving workers.
    let events: Vec<Value> = (1..3)
        .flat_map(|i| {
            std::fs::read_to_string(dir.join(format!("w{i}.jsonl")))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .collect::<Vec<_>>()
        })
        .collect();
    let taken: usize = events.iter().filter(|e| e["event"] == "taken_over").count();
    assert!(
        taken >= 1,
        "the killed worker's runs were taken over: {events:?}"
    );
    // The run logs keep every takeover: the claim row names the killed worker and the node
    // that ran again, and `hensuc runs show` prints it.
    let mut taken_over = Vec::new();
    for r in crate::wait(store.list()).unwrap() {
        for e in crate::wait(store.read_log(&r.run_id, 0, 10_000)).unwrap() {
            if e.meta.kind != LogKind::Claimed {
                continue;
            }
            let note: hensu_store::ClaimNote =
                serde_json::from_value(e.output.clone().unwrap()).unwrap();
            if note.taken_over_from.is_some() {
                assert!(note.rerun_node.is_some(), "{note:?}");
                taken_over.push(r.run_id.clone());
            }
        }
    }
    assert_eq!(taken_over.len(), taken, "{taken_over:?}");
    let out = crate::hensuc()
        .args(["runs", "show", &taken_over[0], "-d"])
        .arg(dir)
        .env("HENSU_DATABASE_URL", &url)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("took over from"), "{text}");
}
