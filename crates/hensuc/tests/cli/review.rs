//! `hensuc run --interactive`: review answers piped on stdin, edits through `$EDITOR`.

use std::io::Write;
use std::process::{Output, Stdio};

use crate::*;

/// `hensuc ARGS` in `examples/`, with `stdin` piped in and `$EDITOR` set when given.
fn run_in_examples(args: &[&str], stdin: &str, editor: Option<&str>) -> Output {
    let mut cmd = hensuc();
    cmd.current_dir(repo().join("examples"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(e) = editor {
        cmd.env("EDITOR", e);
    }
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

const REVIEW: &[&str] = &[
    "run",
    "workflows/human-review.hwf",
    "-c",
    r#"{"goal": "Ship v1.0"}"#,
    "--stub",
    "--no-store",
    "--interactive",
];

#[test]
fn interactive_reject_routes_to_the_rejection_arm() {
    let out = run_in_examples(REVIEW, "r\nnot this quarter\n", None);
    let err = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        err.contains("── review of node 'plan' (REQUIRED) ──"),
        "{err}"
    );
    assert!(
        err.contains("workflow ended at `cancelled`: CANCEL"),
        "{err}"
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn interactive_edit_then_approve() {
    let out = run_in_examples(
        REVIEW,
        "e\na\n",
        Some("sed -i 's/Freeze the API/Thaw the API/'"),
    );
    let err = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(err.contains("1 value changed: plan"), "{err}");
    assert!(err.contains("Thaw the API"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}

#[test]
fn interactive_backtrack_then_approve() {
    let out = run_in_examples(REVIEW, "b\nplan\nonce more\na\n", None);
    let err = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(err.contains("plan → plan → execute → done"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}

/// A review whose rejection sends the flow back to the draft, so `check` is reviewed twice.
const REVISED: &str = r#"fun revised() = workflow("revised") {
    version = "1.0.0"
    agents {
        agent("writer") { role = "Writer"; model = Models.GPT_4O }
    }
    graph {
        start at "draft"
        node("draft") {
            agent = "writer"
            prompt = "Write."
            onSuccess goto "check"
        }
        node("check") {
            agent = "writer"
            prompt = "Check it."
            review(ReviewMode.REQUIRED)
            onApproval goto "done"
            onRejection goto "draft"
        }
        end("done")
    }
}
"#;

fn run_id_of(o: &Output) -> String {
    let err = stderr(o);
    let line = err
        .lines()
        .find(|l| l.starts_with("run ") && l.contains("(state: "))
        .unwrap();
    line.split_whitespace().nth(1).unwrap().to_string()
}

/// A REQUIRED review was approved by nobody on its second visit: `resume` hard-coded the
/// review handler off. The run keeps its review mode; only `--auto-approve` approves.
#[test]
fn a_required_review_is_never_approved_by_nobody_after_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let d = dir.to_str().unwrap();
    let src = dir.join("revised.hwf");
    std::fs::write(&src, REVISED).unwrap();
    let paused = i32::from(hensuc::exit::PAUSED);
    // No review flag: the run pauses at the review (the default is to defer).
    let run = run_hensuc(&["run", src.to_str().unwrap(), "-d", d, "--stub"]);
    assert_eq!(run.status.code(), Some(paused), "{}", stderr(&run));
    let id = run_id_of(&run);
    let rejected = run_hensuc(&["resume", &id, "-d", d, "--reject", "too long"]);
    assert_eq!(
        rejected.status.code(),
        Some(paused),
        "the second visit waits for a human again: {}{}",
        stdout(&rejected),
        stderr(&rejected)
    );
    assert!(stdout(&rejected).contains("⏸ paused at `check`, waiting for review"));
    assert!(
        stdout(&rejected).contains("path        draft → check → draft → check\n"),
        "{}",
        stdout(&rejected)
    );
    let approved = run_hensuc(&["resume", &id, "-d", d, "--auto-approve"]);
    assert_eq!(approved.status.code(), Some(0), "{}", stderr(&approved));
    // Without a store nothing can pause: a REQUIRED review needs a flag.
    let refused = run_hensuc(&[
        "run",
        src.to_str().unwrap(),
        "-d",
        d,
        "--stub",
        "--no-store",
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        stderr(&refused).contains("`check` needs a human review"),
        "{}",
        stderr(&refused)
    );
}
