//! Independent pending reviews on the command line (docs/server.md, *Pending reviews*):
//! `hensuc runs show` lists every review a paused run waits for, and `hensuc resume RUN
//! --correlation ID` decides any one of them; three fork branches decided in reverse order
//! all proceed. `hensuc test` scripts a review by fork branch (`[[reviews]] branch =`).

use hensu_store::{RunStatus, SqliteStore, StateStore};
use serde_json::Value;

use crate::{run_hensuc, stderr as err, stdout as out};

const REVIEWS3: &str = include_str!("../../../hensu-server/tests/server/fixtures/reviews3.hwf");

/// The `(branch, correlation id)` of every review `run` waits for, from `runs show --json`.
fn waiting(d: &str, run: &str) -> Vec<(String, String)> {
    let shown: Value =
        serde_json::from_str(&out(&run_hensuc(&["runs", "show", run, "-d", d, "--json"]))).unwrap();
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
        // By the run id and `--correlation`, or by the review's correlation id alone.
        let r = match n {
            1 => run_hensuc(&["resume", corr, "-d", d, "--approve"]),
            _ => run_hensuc(&["resume", &id, "-d", d, "--correlation", corr, "--approve"]),
        };
        let code = r.status.code();
        if n > 0 {
            assert_eq!(
                code,
                Some(i32::from(hensuc::exit::PAUSED)),
                "{branch}: {}",
                err(&r)
            );
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

const FAN_REVIEW: &str = r#"workflow("fanreview") {
    agents {
        agent("writer") { role = "Writer"; model = "stub" }
    }
    graph {
        start at "fan"
        fork("fan") {
            targets("a", "b")
            waitAll = true
            onComplete goto "gather"
        }
        node("a") {
            agent = "writer"
            prompt = "Part a."
            onSuccess goto "check"
        }
        node("b") {
            agent = "writer"
            prompt = "Part b."
            onSuccess goto "check"
        }
        node("check") {
            agent = "writer"
            prompt = "Check the part."
            review { mode = ReviewMode.REQUIRED; allowBacktrack = true }
            onApproval goto "gather"
            onRejection goto "gather"
        }
        join("gather") {
            await("fan")
            mergeStrategy = MergeStrategy.COLLECT_ALL
            writes("parts")
            onSuccess goto "done"
            onFailure goto "failed"
        }
        end("done")
        end("failed", ExitStatus.FAILURE)
    }
}
"#;

/// `[[reviews]]` with `branch`: the decision reaches the review of that fork branch only (the
/// same node reviewed in the other branch is approved); without `branch` it reaches both.
#[test]
fn hensuc_test_scripts_a_review_by_branch() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(dir.join("workflows/fanreview.hwf"), FAN_REVIEW).unwrap();
    let test = r#"workflow = "fanreview"
snapshot = false

[[reviews]]
node = "check"
branch = "b"
visit = 1
decision = "backtrack"
target = "b"
feedback = "Redo part b."

[expect]
status = "SUCCESS"
end = "done"
visits = { a = 1, b = 2, check = 3 }
"#;
    let file = dir.join("tests/fan.test.toml");
    std::fs::write(&file, test).unwrap();
    let d = dir.to_str().unwrap();
    let o = run_hensuc(&["test", "-d", d]);
    assert_eq!(o.status.code(), Some(0), "{}{}", out(&o), err(&o));
    // Without `branch` the backtrack reaches both branches' reviews.
    std::fs::write(&file, test.replace("branch = \"b\"\n", "")).unwrap();
    let o = run_hensuc(&["test", "-d", d]);
    assert_eq!(o.status.code(), Some(1), "{}{}", out(&o), err(&o));
    assert!(out(&o).contains("visits of `b`: expected 2"), "{}", out(&o));
    // A branch the workflow does not have is E0905 in the test file.
    std::fs::write(&file, test.replace("branch = \"b\"", "branch = \"bb\"")).unwrap();
    let o = run_hensuc(&["test", "-d", d]);
    let all = format!("{}{}", out(&o), err(&o));
    assert_eq!(o.status.code(), Some(1), "{all}");
    assert!(
        all.contains("E0905") && all.contains("unknown branch `bb`"),
        "{all}"
    );
}
