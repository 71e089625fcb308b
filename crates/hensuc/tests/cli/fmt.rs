//! `hensuc fmt --check` and `--stdin`.

use crate::*;

#[test]
fn fmt_check_and_stdin() {
    let out = run_hensuc(&["fmt", "--check", "examples"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "examples are formatted: {}",
        stdout(&out)
    );
    let mut child = hensuc()
        .args(["fmt", "--stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"workflow(\"x\") {\n  graph {   start at \"a\"\n end(\"a\") }\n}\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        "workflow(\"x\") {\n    graph {\n        start at \"a\"\n        end(\"a\")\n    }\n}\n"
    );
}
