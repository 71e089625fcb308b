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
