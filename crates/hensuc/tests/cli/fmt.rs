//! `hensuc fmt --check` and `--stdin`.

use std::io::Write as _;
use std::process::Stdio;

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

// `hensuc fmt` keeps a file's CRLF line endings (stdin and in place).

const CRLF: &str = "workflow(\"x\") {\r\n  graph {   start at \"a\"\r\n end(\"a\") }\r\n}\r\n";
const FORMATTED: &str = "workflow(\"x\") {\r\n    graph {\r\n        start at \"a\"\r\n        end(\"a\")\r\n    }\r\n}\r\n";

#[test]
fn fmt_keeps_crlf() {
    let mut child = hensuc()
        .args(["fmt", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(CRLF.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), FORMATTED);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.hwf");
    std::fs::write(&path, CRLF).unwrap();
    let status = hensuc().arg("fmt").arg(&path).status().unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), FORMATTED);
}
