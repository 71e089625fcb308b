//! `hensuc fmt` keeps a file's CRLF line endings (stdin and in place).
#![allow(clippy::unwrap_used)]

use std::io::Write as _;
use std::process::{Command, Stdio};

const CRLF: &str = "workflow(\"x\") {\r\n  graph {   start at \"a\"\r\n end(\"a\") }\r\n}\r\n";
const FORMATTED: &str = "workflow(\"x\") {\r\n    graph {\r\n        start at \"a\"\r\n        end(\"a\")\r\n    }\r\n}\r\n";

#[test]
fn fmt_keeps_crlf() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hensuc"))
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
    let status = Command::new(env!("CARGO_BIN_EXE_hensuc"))
        .arg("fmt")
        .arg(&path)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), FORMATTED);
}
