//! Pipelined commit (`[store] commit = "pipelined"`, the default) under SIGKILL, on
//! PostgreSQL: `hensuc run` of a loop (one node revised until a counter is reached) killed at
//! random times and resumed with `hensuc resume` until it completes. After every kill the
//! stored run is a consistent prefix of an uninterrupted run — its log replays, its steps are
//! contiguous, its path is the start of the uninterrupted path — and the run ends with the
//! uninterrupted run's context and path. (A kill may lose the steps whose commit was in
//! flight; nobody outside saw them, and the resume runs them again.)

use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hensu_store::{RunStatus, StateStore, StoreOptions};
use serde_json::Value;

use crate::crash::only_run_of;

const ITERATIONS: u64 = 1500;
const SEEDS: [u64; 3] = [
    0x9E37_79B9_7F4A_7C15,
    0x2545_F491_4F6C_DD1D,
    0xDEAD_BEEF_CAFE_F00D,
];

fn loop_hwf(n: u64) -> String {
    format!(
        "fun loop() = workflow(\"loop\") {{\n    state {{\n        variable(\"status\", VarType.STRING, \"anything\")\n    }}\n    agents {{\n        agent(\"a\") {{ role = \"W\"; model = \"stub\" }}\n    }}\n    config {{\n        maxSteps = {}\n    }}\n    graph {{\n        start at \"write\"\n        node(\"write\") {{\n            agent = \"a\"\n            prompt = \"again\"\n            writes(\"status\")\n            onCondition(\"status\") {{\n                otherwise revise \"write\" retry {} otherwise \"done\"\n            }}\n        }}\n        end(\"done\")\n    }}\n}}\n",
        n + 10,
        n - 1
    )
}

fn project(dir: &Path) -> PathBuf {
    let wf = dir.join("loop.hwf");
    std::fs::write(&wf, loop_hwf(ITERATIONS)).unwrap();
    std::fs::write(dir.join("hensu.toml"), "[store]\ncommit = \"pipelined\"\n").unwrap();
    wf
}

fn spawn(dir: &Path, wf: &Path, url: &str, run_id: Option<&str>) -> Child {
    crate::crash::run_or_resume(dir, wf, run_id)
        .arg("--quiet")
        .env("HENSU_DATABASE_URL", url)
        .spawn()
        .unwrap()
}

fn open(url: &str) -> Arc<dyn StateStore> {
    crate::wait(hensu_store::open_store(url, StoreOptions::default())).unwrap()
}

/// The stored context and path of `id` (the state its log replays to), its status, and
/// whether its log's steps are contiguous from 0 to the record's step. A killed client's last
/// statement may still be committing on the server: read until the record and the log agree
/// (or a second has passed).
fn stored(store: &dyn StateStore, id: &str) -> (Value, Vec<String>, RunStatus, bool) {
    let mut tries = 0;
    loop {
        let run = crate::wait(store.load(id)).expect("the stored log replays");
        let steps: Vec<u64> = crate::wait(store.history(id))
            .unwrap()
            .iter()
            .map(|m| m.step)
            .collect();
        let contiguous = steps.iter().copied().eq(0..=run.record.step);
        tries += 1;
        if contiguous || tries == 50 {
            let path = run.snapshot["history"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| h["node_id"].as_str().unwrap().to_string())
                .collect();
            return (
                run.snapshot["context"].clone(),
                path,
                run.record.status,
                contiguous,
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The stored step of `id` (0 while it cannot be read).
fn step_of(store: &dyn StateStore, id: &str) -> u64 {
    crate::wait(store.record(id)).map_or(0, |r| r.step)
}

fn finish(mut child: Child) {
    let out = child.wait().unwrap();
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    assert!(out.success(), "{out}\n{err}");
}

#[test]
#[ignore = "needs PostgreSQL (scripts/pg-test.sh)"]
fn a_pipelined_run_killed_mid_loop_resumes_from_a_consistent_prefix_on_postgres() {
    let base_dir = tempfile::tempdir().unwrap();
    let base_url = crate::timers::pg_url();
    let wf = project(base_dir.path());
    finish(spawn(base_dir.path(), &wf, &base_url, None));
    let base_store = open(&base_url);
    let base_id = only_run_of(base_store.as_ref()).unwrap();
    let (base_ctx, base_path, status, contiguous) = stored(base_store.as_ref(), &base_id);
    assert_eq!(status, RunStatus::Completed);
    assert!(contiguous);
    assert_eq!(
        base_path.len() as u64,
        ITERATIONS,
        "the loop's node, N times"
    );

    let mut kills_mid_loop = 0;
    for seed in SEEDS {
        let mut rng = seed;
        let tmp = tempfile::tempdir().unwrap();
        let url = crate::timers::pg_url();
        let store = open(&url);
        let wf = project(tmp.path());
        let mut done = false;
        for attempt in 0..60 {
            let id = only_run_of(store.as_ref());
            if let Some(id) = &id {
                let (_, path, status, contiguous) = stored(store.as_ref(), id);
                assert!(
                    contiguous,
                    "seed {seed:x} attempt {attempt}: a gap in the log"
                );
                assert_eq!(
                    path[..],
                    base_path[..path.len()],
                    "seed {seed:x} attempt {attempt}: not a prefix of the run"
                );
                if status == RunStatus::Completed {
                    done = true;
                    break;
                }
            }
            let mut child = spawn(tmp.path(), &wf, &url, id.as_deref());
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            // Killed once the stored run has moved on by a random number of steps (so the
            // kill lands mid-loop, with commits in flight, whatever the machine's speed).
            let from = id.as_deref().map_or(0, |id| step_of(store.as_ref(), id));
            let target = from + 50 + rng % 400;
            let started = Instant::now();
            loop {
                if child.try_wait().unwrap().is_some() {
                    finish(child);
                    break;
                }
                let now = only_run_of(store.as_ref()).map_or(0, |id| step_of(store.as_ref(), &id));
                if now >= target {
                    child.kill().unwrap(); // SIGKILL
                    let _ = child.wait();
                    kills_mid_loop += 1;
                    break;
                }
                assert!(
                    started.elapsed() < Duration::from_secs(120),
                    "seed {seed:x} attempt {attempt}: no progress"
                );
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        assert!(done, "seed {seed:x}: did not complete within 60 attempts");
        let id = only_run_of(store.as_ref()).unwrap();
        let (ctx, path, status, contiguous) = stored(store.as_ref(), &id);
        assert_eq!(status, RunStatus::Completed);
        assert!(contiguous);
        assert_eq!(ctx, base_ctx, "seed {seed:x}: final context differs");
        assert_eq!(path, base_path, "seed {seed:x}: path differs");
    }
    assert!(
        kills_mid_loop >= 6,
        "too few kills mid-loop: {kills_mid_loop}"
    );
}
