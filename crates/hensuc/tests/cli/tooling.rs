//! Everyday tooling: `hensuc init`, `hensuc completions`, `hensuc man` (docs/cli.md).

use std::process::Command;

use super::{hensuc, run_hensuc};

/// Runs `hensuc ARGS… PROJECT` and requires success; returns stdout.
fn succeeds_on(project: &std::path::Path, args: &[&str]) -> String {
    let out = hensuc().args(args).arg(project).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "hensuc {args:?}: {stdout}{stderr}");
    stdout
}

/// A new project checks clean, formats clean, passes its test and runs offline.
#[test]
fn init_makes_a_project_that_checks_tests_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("new-project");
    let created = succeeds_on(&project, &["init"]);
    assert!(created.contains("workflows/hello.hwf"), "{created}");
    succeeds_on(&project, &["check", "--deny-warnings", "-d"]);
    succeeds_on(&project, &["fmt", "--check"]);
    let tested = succeeds_on(&project, &["test", "-d"]);
    assert!(tested.contains("1 passed, 0 failed"), "{tested}");
    let ran = succeeds_on(
        &project,
        &[
            "run",
            "hello",
            "--no-store",
            "-c",
            r#"{"name": "Ada"}"#,
            "-d",
        ],
    );
    assert!(ran.contains("Hello Ada"), "{ran}");
}

/// `init` never overwrites: a second one writes nothing and exits 2 naming the files.
#[test]
fn init_refuses_an_existing_project_and_a_bad_id() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hensu.toml"), "# mine\n").unwrap();
    let out = hensuc().arg("init").arg(dir.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already has hensu.toml"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("hensu.toml")).unwrap(),
        "# mine\n"
    );
    assert!(!dir.path().join("workflows").exists());

    let other = tempfile::tempdir().unwrap();
    let out = hensuc()
        .arg("init")
        .arg(other.path())
        .args(["--name", "no spaces"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a valid workflow id"));
}

/// The bash completion script completes subcommands and flags in a real bash.
#[test]
fn bash_completion_completes_commands_and_flags() {
    let out = run_hensuc(&["completions", "bash"]);
    assert!(out.status.success());
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("hensuc.bash");
    std::fs::write(&script, &out.stdout).unwrap();
    let complete = |words: &str, cword: usize| {
        let probe = format!(
            // bash calls a completion function with the command, the current and the previous word.
            "source {}; COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE='{words}'; COMP_POINT=${{#COMP_LINE}}; _hensuc hensuc \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        let out = Command::new("bash")
            .args(["--norc", "-c", &probe])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let commands = complete("hensuc re", 1);
    assert!(commands.contains(&"resume".to_string()), "{commands:?}");
    let flags = complete("hensuc run --sc", 2);
    assert_eq!(flags, vec!["--scenario".to_string()]);
}

/// `man --out DIR` writes one page per command, each a roff page with its own name.
#[test]
fn man_writes_a_page_per_command() {
    let dir = tempfile::tempdir().unwrap();
    let out = hensuc()
        .args(["man", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run_page = std::fs::read_to_string(dir.path().join("hensuc-run.1")).unwrap();
    assert!(run_page.starts_with(".ie"), "{run_page}");
    assert!(run_page.contains(".TH hensuc-run 1"), "{run_page}");
    assert!(run_page.contains("scenario"));
    let main_page = std::fs::read_to_string(dir.path().join("hensuc.1")).unwrap();
    assert!(
        main_page.contains("hensuc\\-run(1)") || main_page.contains("run"),
        "{main_page}"
    );
    let stdout = run_hensuc(&["man"]);
    assert!(String::from_utf8_lossy(&stdout.stdout).contains(".TH hensuc 1"));
}

/// The server's log on a pipe (a journal, a log file) has no colour escape codes, even
/// without `NO_COLOR`.
#[test]
fn server_logs_on_a_pipe_have_no_escape_codes() {
    use std::io::{BufRead as _, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let mut child = hensuc()
        .env_remove("NO_COLOR")
        .env("RUST_LOG", "debug")
        .args(["serve", "--listen", "127.0.0.1:0", "--stub", "-d"])
        .arg(dir.path())
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    let listening = loop {
        let Some(Ok(line)) = lines.next() else {
            break None;
        };
        seen.push(line.clone());
        if line.contains("listening on") {
            break Some(line);
        }
    };
    let listening = listening.unwrap_or_else(|| panic!("no listening line: {seen:?}"));
    // One request makes the request-trace layer log (at debug) its start and end.
    let url = listening
        .split("listening on ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    let addr = url.trim_start_matches("http://");
    let mut socket = std::net::TcpStream::connect(addr).unwrap();
    use std::io::{Read as _, Write as _};
    socket
        .write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    let _ = socket.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    while let Some(Ok(line)) = lines.next() {
        let done = line.contains("finished processing request");
        seen.push(line);
        if done {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        seen.iter()
            .any(|l| l.contains("finished processing request")),
        "{seen:?}"
    );
    assert!(
        seen.iter().all(|l| !l.contains('\u{1b}')),
        "escape codes in the log: {seen:?}"
    );
}

/// The refusal to expose the dev tenant gives advice that works: settings that exist.
#[test]
fn serve_refusal_names_settings_that_exist() {
    let out = run_hensuc(&["serve", "--listen", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("HENSU_JWT_SECRET") && err.contains("jwt_public_key_file"),
        "{err}"
    );
    assert!(
        !err.contains("jwt_secret /"),
        "advises a hensu.toml key that does not exist: {err}"
    );
    // The key it names is one hensu.toml accepts.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("hensu.toml"),
        "[server]\njwt_public_key_file = \"missing.pem\"\n",
    )
    .unwrap();
    let out = hensuc()
        .args(["serve", "--listen", "127.0.0.1:0", "-d"])
        .arg(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("unknown field"), "{err}");
    assert!(err.contains("missing.pem"), "{err}");
}

/// Every everyday command's `--help` ends with examples of itself (as cargo's and gh's do).
#[test]
fn main_commands_show_examples_in_their_help() {
    for command in [
        "check",
        "fmt",
        "build",
        "graph",
        "explain",
        "run",
        "resume",
        "cancel",
        "pause",
        "runs",
        "attach",
        "test",
        "worker",
        "serve",
        "push",
        "init",
        "completions",
    ] {
        let help = super::run_hensuc(&[command, "--help"]);
        assert!(help.status.success(), "{command}: {}", super::stderr(&help));
        let text = super::stdout(&help);
        let examples = text
            .split_once("Examples:\n")
            .unwrap_or_else(|| panic!("`hensuc {command} --help` has no examples:\n{text}"))
            .1;
        let own = examples
            .lines()
            .take_while(|l| !l.trim().is_empty())
            .filter(|l| l.contains(&format!("hensuc {command}")))
            .count();
        assert!(own >= 1, "`hensuc {command} --help` examples:\n{examples}");
    }
}
