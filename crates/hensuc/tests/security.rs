//! Security and fault hardening of the `hensuc` binary (docs/security.md): broken pipes,
//! atomic writes, `fmt` and symlinks, non-regular files, huge lines.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn hensuc() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hensuc"));
    c.current_dir(repo()).env("NO_COLOR", "1");
    c
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs `args` with stdout connected to a pipe whose reader is already closed.
fn with_closed_stdout(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    hensuc()
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn broken_pipe_exits_quietly() {
    let workflow = "examples/workflows/fork-join.hwf";
    for args in [
        vec!["graph", workflow],
        vec!["graph", "--format", "json", workflow],
        vec!["build", workflow, "-o", "-"],
        vec!["check", "--format", "json", workflow],
        vec!["explain", "E0001"],
    ] {
        let out = with_closed_stdout(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).is_empty(), "{args:?}: {}", stderr(&out));
    }
}
