//! Independent pending reviews on the command line (docs/server.md, *Pending reviews*):
//! `hensuc runs show` lists every review a paused run waits for, and `hensuc resume RUN
//! --correlation ID` decides any one of them; three fork branches decided in reverse order
//! all proceed.

use hensu_store::{RunStatus, SqliteStore, StateStore};
use serde_json::Value;

use crate::{run_hensuc, stderr as err, stdout as out};

const REVIEWS3: &str =
    include_str!("../../../hensu-server/tests/server/fixtures/reviews3.hwf");

/// The `(branch, correlation id)` of every review `run` waits for, from `runs show --json`.
fn waiting(d: &str, run: &str) -> Vec<(String, String)> {
    let shown: Value =
        serde_json::from_str(&out(&run_hensuc(&["runs", "show", run, "-d", d, "--json"])))
            .unwrap();
    shown["reviews"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|r| {
            (
                r["branch"].as_str().unwrap().to_string(),
                r["correlation_id"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn three_branch_reviews_resume_in_reverse_order() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let src = dir.join("reviews3.hwf");
    std::fs::write(&src, REVIEWS3).unwrap();
    let d = dir.to_str().unwrap();
    let run = run_hensuc(&[
        "run",
        src.to_str().unwrap(),
        "-d",
        d,
        "-c",
        r#"{"topic": "reviews"}"#,
        "--defer-review",
    ]);
    assert_eq!(
        run.status.code(),
        Some(i32::from(hensuc::exit::PAUSED)),
        "{}",
        err(&run)
    );
    let store = SqliteStore::open(dir).unwrap();
    let id = crate::wait(store.list()).unwrap()[0].run_id.clone();
    drop(store);
    let ids = waiting(d, &id);
    let branches: Vec<&str> = ids.iter().map(|(b, _)| b.as_str()).collect();
    assert_eq!(branches, ["a", "b", "c"]);
    let human = out(&run_hensuc(&["runs", "show", &id, "-d", d]));
    for (b, c) in &ids {
        assert!(
            human.contains(&format!("review      {c} (node `{b}` in branch `{b}`)")),
            "{human}"
        );
    }
    // An id the run does not wait for names the ones it does, and changes nothing.
    let wrong = run_hensuc(&["resume", &id, "-d", d, "--correlation", "nope", "--approve"]);
    assert_ne!(wrong.status.code(), Some(0));
    assert!(err(&wrong).contains(&ids[1].1), "{}", err(&wrong));
    assert_eq!(waiting(d, &id), ids);
    for n in (0..3).rev() {
        let (branch, corr) = &ids[n];
        let r = run_hensuc(&["resume", &id, "-d", d, "--correlation", corr, "--approve"]);
        let code = r.status.code();
        if n > 0 {
            assert_eq!(code, Some(i32::from(hensuc::exit::PAUSED)), "{branch}: {}", err(&r));
            assert_eq!(waiting(d, &id), ids[..n], "after deciding {branch}");
        } else {
            assert_eq!(code, Some(0), "{}", err(&r));
        }
    }
    let store = SqliteStore::open(dir).unwrap();
    assert_eq!(
        crate::wait(store.record(&id)).unwrap().status,
        RunStatus::Completed
    );
}
