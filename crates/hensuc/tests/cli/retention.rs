//! `hensuc runs purge` and the worker's periodic purge (docs/retention.md): finished runs past
//! `[retention]` go, a parent a kept fork reads stays (the fork stays readable), and the JSON
//! report validates against docs/schemas/runs-purge.schema.json.

use std::time::Duration;

use serde_json::Value;

use crate::json_schemas::{Schemas, assert_valid};
use crate::*;

const LINEAR: &str = r#"workflow("linear") {
    agents {
        agent("writer") { role = "Writer"; model = "stub" }
    }
    graph {
        start at "draft"
        node("draft") {
            agent = "writer"
            prompt = "Write."
            onSuccess goto "polish"
        }
        node("polish") {
            agent = "writer"
            prompt = "Polish."
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

/// A project whose finished runs expire 0.5 s after they end (`max_age_days` = 0.5 s).
fn project(extra: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(tmp.path().join("workflows")).expect("mkdir");
    std::fs::write(tmp.path().join("workflows/linear.hwf"), LINEAR).expect("write");
    std::fs::write(
        tmp.path().join("hensu.toml"),
        format!("[retention]\nmax_age_days = 0.0000058\n{extra}"),
    )
    .expect("write");
    tmp
}

fn run_in(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    hensuc()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("hensuc")
}

fn json(o: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}{}", stdout(o), stderr(o)))
}

fn run_ids(dir: &std::path::Path) -> Vec<String> {
    let mut ids: Vec<String> = json(&run_in(dir, &["runs", "-d", ".", "--json"]))["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r["run_id"].as_str().expect("id").to_string())
        .collect();
    ids.sort();
    ids
}

#[test]
fn purge_deletes_expired_runs_and_keeps_what_a_fork_reads() {
    let tmp = project("");
    let dir = tmp.path();
    for _ in 0..2 {
        let out = run_in(dir, &["run", "linear", "-d", ".", "--stub"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let runs = run_ids(dir);
    let parent = runs[0].clone();
    let other = runs[1].clone();
    // A fork of one of them, written paused (not finished: never purged).
    let out = run_in(dir, &["fork", &parent, "--at", "1", "-d", ".", "--no-run"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fork = run_ids(dir)
        .into_iter()
        .find(|id| *id != parent && *id != other)
        .expect("the fork");
    std::thread::sleep(Duration::from_millis(800));
    let schemas = Schemas::load();
    let validator = schemas.validator("runs-purge.schema.json");
    let dry = run_in(dir, &["runs", "purge", "-d", ".", "--dry-run", "--json"]);
    let dry = json(&dry);
    assert_valid(
        &validator,
        "runs-purge.schema.json",
        "purge --dry-run",
        &dry,
    );
    assert_eq!(dry["deleted"][0]["run_id"], other.as_str(), "{dry}");
    assert_eq!(dry["deleted"].as_array().map(Vec::len), Some(1), "{dry}");
    assert_eq!(dry["kept_for_forks"], serde_json::json!([parent]));
    assert_eq!(run_ids(dir).len(), 3, "a dry run deletes nothing");
    let done = json(&run_in(dir, &["runs", "purge", "-d", ".", "--json"]));
    assert_valid(&validator, "runs-purge.schema.json", "purge", &done);
    assert_eq!(done["deleted"][0]["reason"], "age");
    assert!(done["reclaimed"]["note"].as_str().is_some(), "{done}");
    let mut left = vec![parent.clone(), fork.clone()];
    left.sort();
    assert_eq!(run_ids(dir), left);
    // The fork still reads its parent's prefix.
    let shown = json(&run_in(dir, &["runs", "-d", ".", "show", &fork, "--json"]));
    assert_eq!(shown["parent"]["run_id"], parent.as_str(), "{shown}");
    // Cancelled, the fork is finished too: both go, the fork first.
    let out = run_in(dir, &["cancel", &fork, "-d", "."]);
    assert!(out.status.success(), "{}", stderr(&out));
    std::thread::sleep(Duration::from_millis(800));
    let human = run_in(dir, &["runs", "purge", "-d", "."]);
    assert!(human.status.success(), "{}", stderr(&human));
    let text = stdout(&human);
    let (f, p) = (
        text.find(&fork).expect("fork"),
        text.find(&parent).expect("parent"),
    );
    assert!(f < p, "children first: {text}");
    assert!(run_ids(dir).is_empty());
}

#[test]
fn purge_without_rules_is_refused() {
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(tmp.path().join("workflows")).expect("mkdir");
    std::fs::write(tmp.path().join("workflows/linear.hwf"), LINEAR).expect("write");
    let ran = run_in(tmp.path(), &["run", "linear", "-d", ".", "--stub"]);
    assert!(ran.status.success(), "{}", stderr(&ran));
    let out = run_in(tmp.path(), &["runs", "purge", "-d", "."]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no [retention] rule"),
        "{}",
        stderr(&out)
    );
}

/// A worker purges its store beside its work (`interval_minutes`).
#[test]
fn a_worker_purges_now_and_then() {
    let tmp = project("interval_minutes = 0.005\n");
    let dir = tmp.path();
    let out = run_in(dir, &["run", "linear", "-d", ".", "--stub"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(run_ids(dir).len(), 1);
    let mut worker = hensuc()
        .args(["worker", "-d", "."])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("worker");
    let mut purged = false;
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(100));
        if run_ids(dir).is_empty() {
            purged = true;
            break;
        }
    }
    let _ = worker.kill();
    let _ = worker.wait();
    assert!(purged, "the worker purged the expired run");
}
