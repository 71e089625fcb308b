//! Security and fault hardening of the `hensuc` binary (docs/security.md): broken pipes,
//! atomic writes, `fmt` and symlinks, non-regular files, huge lines.

use std::process::{Output, Stdio};

use crate::*;

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

/// An example workflow with its indentation removed: valid, about 2 KB, and not formatted.
fn unformatted_workflow() -> String {
    let text =
        std::fs::read_to_string(repo().join("examples/workflows/consensus-vote.hwf")).unwrap();
    let out: String = text
        .lines()
        .map(|l| format!("{}\n", l.trim_start()))
        .collect();
    assert!(out.len() > 1536, "bigger than the 1-block file-size limit");
    out
}

/// `fmt` killed by the file-size limit (SIGXFSZ) in the middle of its write: the original
/// file is intact (the in-place write used to leave it cut at the limit).
#[cfg(unix)]
#[test]
fn fmt_interrupted_write_leaves_the_original_intact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.hwf");
    let original = unformatted_workflow();
    std::fs::write(&path, &original).unwrap();
    let out = Command::new("/bin/sh")
        .arg("-c")
        .arg(r#"ulimit -f 1 && exec "$0" fmt "$1""#)
        .arg(env!("CARGO_BIN_EXE_hensuc"))
        .arg(&path)
        .output()
        .unwrap();
    assert!(!out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
}

#[cfg(unix)]
#[test]
fn fmt_keeps_permissions() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.hwf");
    std::fs::write(&path, unformatted_workflow()).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = hensuc().arg("fmt").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_ne!(
        std::fs::read_to_string(&path).unwrap(),
        unformatted_workflow()
    );
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
}

/// `build -o FILE` replaces the file whole, keeping its permissions.
#[cfg(unix)]
#[test]
fn build_output_is_replaced_atomically() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.json");
    std::fs::write(&path, "previous").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = hensuc()
        .args(["build", "examples/workflows/fork-join.hwf", "-o"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(json.is_object());
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// `fmt DIR` does not follow symlinks below DIR: a directory loop ends, a link to a file
/// outside the tree is not rewritten, and every real file is formatted once.
#[cfg(unix)]
#[test]
fn fmt_dir_does_not_follow_symlinks() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().unwrap();
    let outside_file = outside.path().join("outside.hwf");
    std::fs::write(&outside_file, unformatted_workflow()).unwrap();
    let root = tempfile::tempdir().unwrap();
    let sub = root.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("inside.hwf"), unformatted_workflow()).unwrap();
    symlink(root.path(), sub.join("loop")).unwrap();
    symlink(&sub, root.path().join("again")).unwrap();
    symlink(outside.path(), root.path().join("elsewhere")).unwrap();
    symlink(&outside_file, root.path().join("linked.hwf")).unwrap();
    let out = hensuc().arg("fmt").arg(root.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("1 file: 1 reformatted"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        std::fs::read_to_string(&outside_file).unwrap(),
        unformatted_workflow()
    );
    assert_ne!(
        std::fs::read_to_string(sub.join("inside.hwf")).unwrap(),
        unformatted_workflow()
    );
}

/// Spans after invalid UTF-8 are byte offsets into the file in every renderer (they pointed
/// into the decoded text: +2 bytes per bad byte, past the end of the file).
#[test]
fn invalid_utf8_spans_are_file_offsets_in_json_and_sarif() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.hwf");
    let bytes: &[u8] = b"workflow(\"x\") {\n  description = \"\xff\xfe\xfd\xfc\"\n}\n\xff";
    std::fs::write(&path, bytes).unwrap();
    let last = bytes.len() - 1;
    let out = hensuc()
        .args(["check", "--format", "json"])
        .arg(&path)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let bytes_of: Vec<(u64, u64)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let r = &d["range"];
            (
                r["start"]["byte"].as_u64().unwrap(),
                r["end"]["byte"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(
        bytes_of.contains(&(last as u64, bytes.len() as u64)),
        "{v:#}"
    );
    assert!(
        bytes_of.iter().all(|&(_, end)| end <= bytes.len() as u64),
        "{v:#}"
    );
    let out = hensuc()
        .args(["check", "--format", "sarif"])
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let regions: Vec<&serde_json::Value> = v["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["locations"][0]["physicalLocation"]["region"])
        .collect();
    for region in &regions {
        if let (Some(offset), Some(length)) =
            (region["byteOffset"].as_u64(), region["byteLength"].as_u64())
        {
            assert!(offset + length <= bytes.len() as u64, "{text}");
        }
    }
    assert!(
        regions
            .iter()
            .any(|r| r["startLine"] == 4 && r["startColumn"] == 1),
        "{text}"
    );
}

/// A FIFO named like a prompt (or like the workflow itself) is refused with the file
/// diagnostic (E0208 / E0901) instead of blocking `check` for ever on open.
#[cfg(unix)]
#[test]
fn fifo_named_like_a_prompt_is_refused() {
    let project = tempfile::tempdir().unwrap();
    let workflows = project.path().join("workflows");
    let prompts = project.path().join("prompts");
    std::fs::create_dir_all(&workflows).unwrap();
    std::fs::create_dir_all(&prompts).unwrap();
    std::fs::create_dir_all(project.path().join("rubrics")).unwrap();
    let source =
        std::fs::read_to_string(repo().join("examples/workflows/content-pipeline.hwf")).unwrap();
    std::fs::write(workflows.join("w.hwf"), source).unwrap();
    for entry in std::fs::read_dir(repo().join("examples/rubrics")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(
            entry.path(),
            project.path().join("rubrics").join(entry.file_name()),
        )
        .unwrap();
    }
    for entry in std::fs::read_dir(repo().join("examples/prompts")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), prompts.join(entry.file_name())).unwrap();
    }
    std::fs::remove_file(prompts.join("write-article.md")).unwrap();
    let mkfifo = Command::new("mkfifo")
        .arg(prompts.join("write-article.md"))
        .arg(workflows.join("fifo.hwf"))
        .status()
        .unwrap();
    assert!(mkfifo.success());
    // Without the fix `check` blocks in open(2); the child is killed after the assertion
    // fails, so a regression shows as a failure, not a hung suite.
    let mut child = hensuc()
        .args(["check", "--format", "json"])
        .arg(workflows.join("w.hwf"))
        .arg(workflows.join("fifo.hwf"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut finished = None;
    for _ in 0..600 {
        if let Some(status) = child.try_wait().unwrap() {
            finished = Some(status);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    if finished.is_none() {
        let _ = child.kill();
    }
    let out = child.wait_with_output().unwrap();
    assert!(finished.is_some(), "check blocked on a FIFO");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let messages: Vec<(String, String)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_string(),
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(
        messages
            .iter()
            .any(|(c, m)| c == "E0208" && m.contains("not a regular file")),
        "{messages:?}"
    );
    assert!(
        messages
            .iter()
            .any(|(c, m)| c == "E0901" && m.contains("fifo.hwf")),
        "{messages:?}"
    );
}

/// A project whose model answer is hostile shell text and whose commands try to read a key
/// (docs/security.md, *Action commands*).
fn hostile_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::create_dir_all(p.join("workflows")).unwrap();
    std::fs::create_dir_all(p.join("stubs/default")).unwrap();
    std::fs::write(
        p.join("workflows/hostile.hwf"),
        r#"fun workflow() = workflow("hostile") {
    state {
        input("request", VarType.STRING)
        variable("result", VarType.STRING, "the answer")
    }
    agents {
        agent("generator") { role = "Generator"; model = "stub" }
    }
    graph {
        start at "generate"
        node("generate") {
            agent = "generator"
            prompt = "Answer: {request}"
            writes("result")
            onSuccess goto "publish"
        }
        action("publish") {
            execute("echo-result")
            execute("leak")
            onSuccess goto "done"
            onFailure goto "failed"
        }
        end("done")
        end("failed", ExitStatus.FAILURE)
    }
}
"#,
    )
    .unwrap();
    std::fs::write(
        p.join("stubs/default/generate.txt"),
        r#"{"result": "ok'$(touch marker1)'`touch marker2`\"; touch marker3"}"#,
    )
    .unwrap();
    std::fs::write(
        p.join("commands.yaml"),
        "commands:\n  echo-result:\n    command: \"echo 'Workflow result: {result}'\"\n  leak:\n    command: \"printenv OPENAI_API_KEY | rev; env | rev\"\n",
    )
    .unwrap();
    dir
}

#[test]
fn model_output_and_keys_stay_out_of_action_commands() {
    const KEY: &str = "sk-proj-do-not-leak-0123456789";
    let dir = hostile_project();
    let out = hensuc()
        .args([
            "run",
            "workflows/hostile.hwf",
            "-d",
            ".",
            "--stub",
            "--no-store",
        ])
        .args(["-c", r#"{"request": "hi"}"#, "--events", "events.jsonl"])
        .current_dir(dir.path())
        .env("OPENAI_API_KEY", KEY)
        .output()
        .unwrap();
    let (o, e) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{o}\n{e}");
    for m in ["marker1", "marker2", "marker3"] {
        assert!(!dir.path().join(m).exists(), "the model's answer ran: {m}");
    }
    let events = std::fs::read_to_string(dir.path().join("events.jsonl")).unwrap();
    assert!(
        events.contains(r#"Workflow result: ok'$(touch marker1)'`touch marker2`\"; touch marker3"#),
        "the value arrives as text: {events}"
    );
    let reversed: String = KEY.chars().rev().collect();
    for (name, text) in [("stdout", &o), ("stderr", &e), ("events", &events)] {
        assert!(!text.contains(KEY), "{name} has the key");
        assert!(!text.contains(&reversed), "{name} has the reversed key");
        assert!(
            !text.contains("YEK_IPA_"),
            "{name} shows an *_API_KEY variable"
        );
    }
}
