//! `hensuc run --interactive` (answers piped on stdin, `$EDITOR` edits) and sub-workflows
//! loaded from the project's `workflows/` directory.

#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn run(args: &[&str], stdin: &str, editor: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hensuc"));
    cmd.current_dir(examples())
        .args(args)
        .env_remove("HENSU_STUB_ENABLED")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    match editor {
        Some(e) => cmd.env("EDITOR", e),
        None => cmd.env_remove("EDITOR"),
    };
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
    let out = run(REVIEW, "r\nnot this quarter\n", None);
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
    let out = run(
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
    let out = run(REVIEW, "b\nplan\nonce more\na\n", None);
    let err = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(err.contains("plan → plan → execute → done"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}

#[test]
fn sub_workflow_child_comes_from_the_project() {
    let out = run(
        &[
            "run",
            "workflows/main-research.hwf",
            "-d",
            ".",
            "-c",
            r#"{"topic": "Rust"}"#,
            "--stub",
            "--no-store",
        ],
        "",
        None,
    );
    let err = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        err.contains("research → delegate_summary → publish → done"),
        "{err}"
    );
    assert!(err.contains("tl_dr = Rust is memory safe"), "{err}");
    assert_eq!(out.status.code(), Some(0));
}
