//! `hensuc runs / resume / cancel / pause` and the state store under bad input: wrong
//! correlation ids, bad backtracks, corrupt / truncated / foreign-version databases, two
//! resumers, and provider keys kept out of the store.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use hensu_host::DurableRun;
use hensu_runtime::{
    CancelToken, Engine, ReviewHandler, ReviewOutcome, ReviewRequest, RunState, StubProvider,
};
use hensu_store::{OwnerId, RunRecord, RunStatus, SqliteStore, StateStore};
use serde_json::Value;

use crate::{hensuc, run_hensuc, stderr as err, stdout as out};

const REVIEWED: &str = r#"fun reviewed() = workflow("reviewed") {
    version = "1.0.0"
    agents {
        agent("writer") { role = "Writer"; model = Models.GPT_4O }
    }
    graph {
        start at "draft"
        node("draft") {
            agent = "writer"
            prompt = "Write about {topic}."
            onSuccess goto "check"
        }
        node("check") {
            agent = "writer"
            prompt = "Check it."
            review(ReviewMode.REQUIRED)
            onApproval goto "done"
            onRejection goto "failed"
        }
        end("done")
        end("failed", ExitStatus.FAILURE)
    }
}
"#;

fn chain(n: usize) -> String {
    let mut s = String::from(
        "fun c() = workflow(\"chain\") {\n    agents {\n        agent(\"a\") { role = \"W\"; model = Models.GPT_4O }\n    }\n    graph {\n        start at \"n0\"\n",
    );
    for i in 0..n {
        let next = if i + 1 == n {
            "done".into()
        } else {
            format!("n{}", i + 1)
        };
        s.push_str(&format!(
            "        node(\"n{i}\") {{\n            agent = \"a\"\n            prompt = \"step {i} of {{topic}}\"\n            onSuccess goto \"{next}\"\n        }}\n"
        ));
    }
    s.push_str("        end(\"done\")\n    }\n}\n");
    s
}

struct Deferred;

#[async_trait]
impl ReviewHandler for Deferred {
    async fn request_review(&self, _r: ReviewRequest<'_>) -> ReviewOutcome {
        ReviewOutcome::Pending {
            correlation_id: "corr-42".into(),
        }
    }
}

/// A project with a run paused for the review of `check` (correlation id `corr-42`).
fn paused_review(dir: &Path) -> String {
    let src = dir.join("reviewed.hwf");
    std::fs::write(&src, REVIEWED).unwrap();
    let wf = hensuc::commands::run::load_workflow(&src, Some(dir))
        .unwrap()
        .unwrap();
    let engine = Engine::builder()
        .provider(Arc::new(StubProvider::new(None, None)))
        .review_handler(Arc::new(Deferred))
        .build();
    let mut input = hensu_runtime::Context::default();
    input.insert("topic".into(), Value::String("durability".into()));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let cancel = CancelToken::new();
    let r = rt.block_on(engine.run(&wf, input.clone(), hensu_runtime::RunCtx::new(&cancel)));
    assert!(matches!(r.outcome, hensu_runtime::RunOutcome::Paused));
    let store: Arc<dyn StateStore> = Arc::new(SqliteStore::open(dir).unwrap());
    let record = RunRecord::new("rpaused", wf.id.clone(), "1.0.0", Some("draft".into()));
    let envelope = hensu_host::launch::StoredWorkflow {
        workflow: wf.clone(),
        source: Some(hensu_host::launch::SourceRef::of(&src)),
        options: hensu_host::launch::StoredOptions {
            stub: true,
            ..Default::default()
        },
    }
    .encode()
    .unwrap();
    let initial = RunState::new("rpaused".into(), wf.id.clone(), "draft".into(), input);
    let d = crate::wait(DurableRun::create_encoded(
        store,
        &record,
        &envelope,
        &initial,
        &OwnerId::current(),
        None,
    ))
    .unwrap();
    assert_eq!(crate::wait(d.finish(&r)).unwrap(), Some(RunStatus::Paused));
    "rpaused".into()
}

fn step(dir: &Path, id: &str) -> u64 {
    crate::wait(SqliteStore::open(dir).unwrap().record(id))
        .unwrap()
        .step
}

#[test]
fn a_paused_review_resumes_only_with_a_matching_decision() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let d = dir.to_str().unwrap();
    let id = paused_review(dir);
    let before = step(dir, &id);

    let listed = out(&run_hensuc(&["runs", "-d", d]));
    assert!(listed.contains("rpaused") && listed.contains("paused") && listed.contains("check"));

    let o = run_hensuc(&["resume", &id, "-d", d]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        err(&o).contains("paused for the review of node `check`"),
        "{}",
        err(&o)
    );
    assert!(err(&o).contains("corr-42"));

    let o = run_hensuc(&[
        "resume",
        &id,
        "-d",
        d,
        "--approve",
        "--correlation",
        "corr-1",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("not `corr-1`"), "{}", err(&o));

    let o = run_hensuc(&["resume", &id, "-d", d, "--backtrack", "nowhere"]);
    assert!(err(&o).contains("has no such node"), "{}", err(&o));
    let o = run_hensuc(&["resume", &id, "-d", d, "--backtrack", "done"]);
    assert!(err(&o).contains("never visited"), "{}", err(&o));
    let o = run_hensuc(&["resume", "nope", "-d", d, "--approve"]);
    assert!(err(&o).contains("no run `nope`"), "{}", err(&o));
    assert_eq!(step(dir, &id), before, "a refused resume writes nothing");
    let rec = crate::wait(SqliteStore::open(dir).unwrap().record(&id)).unwrap();
    assert_eq!(rec.status, RunStatus::Paused);

    // The source changed: a warning, and the stored workflow runs. The correlation id works as
    // the run's id.
    std::fs::write(dir.join("reviewed.hwf"), "garbage").unwrap();
    let o = run_hensuc(&[
        "resume",
        "corr-42",
        "-d",
        d,
        "--approve",
        "--set",
        "note=\"ok\"",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(
        err(&o).contains("changed since run rpaused started"),
        "{}",
        err(&o)
    );
    assert!(out(&o).contains("ended at `done`"));
    let rec = crate::wait(SqliteStore::open(dir).unwrap().load(&id)).unwrap();
    assert_eq!(rec.record.status, RunStatus::Completed);
    assert_eq!(rec.snapshot["context"]["note"], "ok");

    let o = run_hensuc(&["resume", &id, "-d", d, "--approve"]);
    assert!(err(&o).contains("already completed"), "{}", err(&o));
    let shown = out(&run_hensuc(&["runs", "show", &id, "-d", d]));
    assert!(shown.contains("draft → check"), "{shown}");
}

#[test]
fn backtrack_and_reject_decisions_and_cancel_of_a_paused_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let d = dir.to_str().unwrap();
    let id = paused_review(dir);
    let o = run_hensuc(&["resume", &id, "-d", d, "--reject", "not good"]);
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert!(out(&o).contains("ended at `failed`"), "{}", out(&o));

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let d = dir.to_str().unwrap();
    let id = paused_review(dir);
    let o = run_hensuc(&["cancel", &id, "-d", d]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(out(&o).contains("cancelled"));
    let o = run_hensuc(&["resume", &id, "-d", d, "--approve"]);
    assert!(err(&o).contains("already cancelled"), "{}", err(&o));
    let o = run_hensuc(&["cancel", &id, "-d", d]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn a_run_held_by_a_live_process_cannot_be_resumed_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let d = dir.to_str().unwrap();
    let id = paused_review(dir);
    let before = step(dir, &id);
    // This test process resumes it first (and holds the lease).
    let store: Arc<dyn StateStore> = Arc::new(SqliteStore::open(dir).unwrap());
    let (held, _) = crate::wait(DurableRun::reopen(
        store.clone(),
        &id,
        &OwnerId::current(),
        None,
    ))
    .unwrap();
    let o = run_hensuc(&["resume", &id, "-d", d, "--approve"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(err(&o).contains("locked by"), "{}", err(&o));
    assert!(err(&o).contains("another hensuc process"), "{}", err(&o));
    assert_eq!(step(dir, &id), before);
    crate::wait(store.release(held.lease())).unwrap();
    let o = run_hensuc(&["resume", &id, "-d", d, "--approve"]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
}

#[test]
fn corrupt_truncated_and_foreign_version_stores_are_clear_errors_and_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let d = dir.to_str().unwrap();
    std::fs::write(dir.join("c.hwf"), chain(3)).unwrap();
    let wf = dir.join("c.hwf");
    let w = wf.to_str().unwrap();
    let o = run_hensuc(&["run", w, "-d", d, "--stub", "-c", r#"{"topic":"x"}"#]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(err(&o).contains("resume with `hensuc resume "));
    let db = dir.join(".hensu/state.db");
    let good = std::fs::read(&db).unwrap();

    // Garbage.
    std::fs::write(&db, b"this is not a database at all, just some text").unwrap();
    for args in [
        vec!["runs", "-d", d],
        vec!["run", w, "-d", d, "--stub", "-c", r#"{"topic":"x"}"#],
        vec!["resume", "rx", "-d", d],
        vec!["cancel", "rx", "-d", d],
    ] {
        let o = run_hensuc(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", err(&o));
        assert!(err(&o).contains("is corrupt"), "{args:?}: {}", err(&o));
        assert_eq!(
            std::fs::read(&db).unwrap(),
            b"this is not a database at all, just some text"
        );
    }
    let o = run_hensuc(&[
        "run",
        w,
        "-d",
        d,
        "--stub",
        "--no-store",
        "-c",
        r#"{"topic":"x"}"#,
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "--no-store runs anyway: {}",
        err(&o)
    );

    // Truncated.
    let _ = std::fs::remove_file(dir.join(".hensu/state.db-wal"));
    let _ = std::fs::remove_file(dir.join(".hensu/state.db-shm"));
    let cut = &good[..good.len().min(1500)];
    std::fs::write(&db, cut).unwrap();
    let o = run_hensuc(&["runs", "-d", d]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("corrupt"), "{}", err(&o));
    assert_eq!(std::fs::read(&db).unwrap(), cut);

    // Written by another schema version.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let d = dir.to_str().unwrap();
    std::fs::write(dir.join("c.hwf"), chain(2)).unwrap();
    let w2 = dir.join("c.hwf");
    let o = run_hensuc(&[
        "run",
        w2.to_str().unwrap(),
        "-d",
        d,
        "--stub",
        "-c",
        r#"{"topic":"x"}"#,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let db = dir.join(".hensu/state.db");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute(
            "UPDATE meta SET value = '99' WHERE key = 'schema_version'",
            [],
        )
        .unwrap();
    }
    let runs_before = {
        let c = rusqlite::Connection::open(&db).unwrap();
        let n: i64 = c
            .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
            .unwrap();
        n
    };
    let o = run_hensuc(&[
        "run",
        w2.to_str().unwrap(),
        "-d",
        d,
        "--stub",
        "-c",
        r#"{"topic":"x"}"#,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("schema version 99"), "{}", err(&o));
    let c = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = c
        .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, runs_before, "nothing written");
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn spawn_chain(dir: &Path, nodes: usize, events: &Path) -> (std::process::Child, PathBuf) {
    let wf = dir.join("c.hwf");
    std::fs::write(&wf, chain(nodes)).unwrap();
    let child = hensuc()
        .args([
            "run",
            wf.to_str().unwrap(),
            "--stub",
            "-c",
            r#"{"topic":"x"}"#,
            "-d",
        ])
        .arg(dir)
        .arg("--events")
        .arg(events)
        .env("HENSU_STUB_DELAY_MS", "40")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    (child, wf)
}

fn the_run(dir: &Path) -> Option<String> {
    if !dir.join(".hensu/state.db").exists() {
        return None;
    }
    crate::wait(SqliteStore::open(dir).ok()?.list())
        .ok()?
        .first()
        .map(|r| r.run_id.clone())
}

fn started(events: &Path) -> usize {
    std::fs::read_to_string(events)
        .unwrap_or_default()
        .matches("\"node_started\"")
        .count()
}

#[test]
fn pause_and_cancel_reach_a_running_process_at_its_next_boundary() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let d = dir.to_str().unwrap();
    let events = dir.join("e.jsonl");
    let (child, _) = spawn_chain(dir, 8, &events);
    wait_for("the run", || {
        the_run(dir).is_some() && started(&events) >= 2
    });
    let id = the_run(dir).unwrap();
    let o = run_hensuc(&["pause", &id, "-d", d]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let o = child.wait_with_output().unwrap();
    assert!(err(&o).contains("paused (state saved)"), "{}", err(&o));
    let rec = crate::wait(SqliteStore::open(dir).unwrap().record(&id)).unwrap();
    assert_eq!(rec.status, RunStatus::Paused);
    let done_before = started(&events);
    assert!(done_before < 8);
    let ev2 = dir.join("e2.jsonl");
    let o = run_hensuc(&["resume", &id, "-d", d, "--events", ev2.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(done_before + started(&ev2), 8, "no node ran twice");

    // Cancel a running process.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let d = dir.to_str().unwrap();
    let events = dir.join("e.jsonl");
    let (child, _) = spawn_chain(dir, 8, &events);
    wait_for("the run", || {
        the_run(dir).is_some() && started(&events) >= 2
    });
    let id = the_run(dir).unwrap();
    let o = run_hensuc(&["cancel", &id, "-d", d]);
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(out(&o).contains("requested"), "{}", out(&o));
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(out(&o).contains("cancelled"), "{}", out(&o));
    let rec = crate::wait(SqliteStore::open(dir).unwrap().record(&id)).unwrap();
    assert_eq!(rec.status, RunStatus::Cancelled);
    assert!(started(&events) < 8);
}

#[test]
fn provider_keys_never_reach_the_store() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let d = dir.to_str().unwrap();
    std::fs::write(dir.join("c.hwf"), chain(2)).unwrap();
    let secret = "sk-test-SECRETSECRET0123456789";
    let o = hensuc()
        .args([
            "run",
            dir.join("c.hwf").to_str().unwrap(),
            "-d",
            d,
            "--stub",
        ])
        .args(["-c", &format!(r#"{{"topic":"{secret}"}}"#)])
        .env("OPENAI_API_KEY", secret)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let mut found = false;
    for entry in std::fs::read_dir(dir.join(".hensu")).unwrap() {
        let p = entry.unwrap().path();
        if p.is_file() {
            let bytes = std::fs::read(&p).unwrap();
            found |= !bytes.is_empty();
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{} holds the key",
                p.display()
            );
        }
    }
    assert!(found);
    let shown = out(&run_hensuc(&[
        "runs",
        "show",
        &the_run(dir).unwrap(),
        "-d",
        d,
        "--json",
    ]));
    assert!(!shown.contains(secret));
}

/// `hensuc run --defer-review` pauses at the review; `hensuc resume ID --approve` finishes it.
#[test]
fn defer_review_pauses_the_cli_run_until_resume_decides() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let src = dir.join("reviewed.hwf");
    std::fs::write(&src, REVIEWED).unwrap();
    let d = dir.to_str().unwrap();
    let run = run_hensuc(&[
        "run",
        src.to_str().unwrap(),
        "-d",
        d,
        "-c",
        r#"{"topic": "durability"}"#,
        "--defer-review",
    ]);
    assert_eq!(
        run.status.code(),
        Some(i32::from(hensuc::exit::PAUSED)),
        "a paused run has its own exit code: {}",
        err(&run)
    );
    assert!(err(&run).contains("waits for review"), "{}", err(&run));
    assert!(
        out(&run).contains("⏸ paused at `check`, waiting for review"),
        "{}",
        out(&run)
    );
    assert!(
        out(&run).contains("path        draft → check\n"),
        "the paused node is in the path: {}",
        out(&run)
    );
    let store = SqliteStore::open(dir).unwrap();
    let runs = crate::wait(store.list()).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, RunStatus::Paused);
    let id = runs[0].run_id.clone();
    drop(store);
    let listed: Value =
        serde_json::from_str(&out(&run_hensuc(&["runs", "-d", d, "--json"]))).unwrap();
    assert_eq!(listed["format_version"], 2);
    assert_eq!(listed["runs"][0]["status"], "paused");
    let refused = run_hensuc(&["resume", &id, "-d", d]);
    assert_ne!(
        refused.status.code(),
        Some(0),
        "a review pause needs a decision"
    );
    let resumed = run_hensuc(&["resume", &id, "-d", d, "--approve"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", err(&resumed));
    let record = crate::wait(SqliteStore::open(dir).unwrap().record(&id)).unwrap();
    assert_eq!(record.status, RunStatus::Completed);
}

/// A run recorded as log deltas (plus compactions every 3 steps) loads back as exactly the
/// state the engine ended with: context overwrites, history, retry counters, phase and the
/// small fields all travel in the deltas.
#[test]
fn the_state_rebuilt_from_the_log_equals_the_engines_final_state() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let src = dir.join("loop.hwf");
    let mut text = chain(6);
    // n3 writes `status` and sends the flow back to n1 twice (a bounded revise).
    text = text.replace(
        "prompt = \"step 3 of {topic}\"\n            onSuccess goto \"n4\"",
        "prompt = \"step 3 of {topic}\"\n            writes(\"status\")\n            onCondition(\"status\") {\n                whenValue equalTo \"done\" goto \"n4\"\n                otherwise revise \"n1\" retry 2 otherwise \"n4\"\n            }",
    );
    std::fs::write(&src, &text).unwrap();
    let wf = hensuc::commands::run::load_workflow(&src, Some(dir))
        .unwrap()
        .unwrap();
    for policy in [
        hensu_store::SnapshotPolicy::NEVER,
        hensu_store::SnapshotPolicy::every(3),
    ] {
        let opts = hensu_store::StoreOptions {
            snapshot_policy: policy,
            ..Default::default()
        };
        let store: Arc<dyn StateStore> = Arc::new(hensu_store::MemoryStore::try_new(opts).unwrap());
        let mut input = hensu_runtime::Context::default();
        input.insert("topic".into(), Value::String("deltas".into()));
        let record = RunRecord::new("rdelta", wf.id.clone(), "1", Some("n0".into()));
        let initial = RunState::new("rdelta".into(), wf.id.clone(), "n0".into(), input.clone());
        let durable = Arc::new(
            crate::wait(DurableRun::create(
                store.clone(),
                &record,
                &Value::Null,
                &initial,
                &OwnerId::current(),
                None,
            ))
            .unwrap(),
        );
        let engine = Engine::builder()
            .provider(Arc::new(StubProvider::new(None, None)))
            .build();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let cancel = CancelToken::new();
        let run = hensu_runtime::RunCtx::new(&cancel).checkpointer(durable.as_ref());
        let r = rt.block_on(engine.run(&wf, input, run));
        assert!(
            matches!(r.outcome, hensu_runtime::RunOutcome::Completed { .. }),
            "{:?}",
            r.outcome
        );
        assert!(
            r.state.history.len() > 6,
            "the loop ran: {:?}",
            r.state.history
        );
        assert_eq!(
            crate::wait(durable.finish(&r)).unwrap(),
            Some(RunStatus::Completed)
        );
        let stored = crate::wait(store.load("rdelta")).unwrap();
        let expected = hensu_host::snapshot(&r.state, None).unwrap();
        assert_eq!(stored.snapshot, expected, "policy {policy:?}");
        // Every step is one log row with its node and output.
        let log = crate::wait(store.read_log("rdelta", 0, 1000)).unwrap();
        let steps: Vec<_> = log
            .iter()
            .filter(|e| e.meta.kind == hensu_store::LogKind::Step)
            .filter_map(|e| e.meta.executed_node.clone())
            .collect();
        let ran: Vec<_> = r.state.history.iter().map(|h| h.node_id.clone()).collect();
        assert_eq!(steps, ran);
    }
}
