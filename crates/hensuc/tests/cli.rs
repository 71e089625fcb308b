//! End-to-end tests of the `hensuc` binary: exit codes, output formats, the examples.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn hensuc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hensuc"))
        .args(args)
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn version_flag() {
    let out = hensuc(&["--version"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).starts_with("hensuc "));
}

#[test]
fn usage_error_exits_2() {
    let out = hensuc(&["check", "--format", "yaml", "x.hwf"]);
    assert_eq!(out.status.code(), Some(2));
    let out = hensuc(&["no-such-command"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn missing_file_is_a_diagnostic_not_a_crash() {
    let out = hensuc(&["check", "does/not/exist.hwf", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["diagnostics"][0]["code"], "E0901");
}

#[test]
fn examples_check_clean_with_warnings_denied() {
    let out = hensuc(&["check", "-d", "examples", "--deny-warnings"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn errors_in_every_format() {
    let bad = "tests/fixtures/cli/five-errors.hwf";
    let human = hensuc(&["check", bad]);
    assert_eq!(human.status.code(), Some(1));
    let text = stderr(&human);
    assert!(text.contains("error["), "{text}");

    let json = hensuc(&["check", bad, "--format", "json"]);
    assert_eq!(json.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(v["format_version"], "1");
    assert_eq!(v["valid"], false);
    let count = v["error_count"].as_u64().unwrap();
    assert!(
        count >= 5,
        "expected at least five errors, got {count}: {v:#}"
    );
    for d in v["diagnostics"].as_array().unwrap() {
        assert!(d["code"].as_str().unwrap().len() == 5);
        assert!(d["range"]["start"]["line"].as_u64().unwrap() >= 1);
    }

    let sarif = hensuc(&["check", bad, "--format", "sarif"]);
    assert_eq!(sarif.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&sarif)).unwrap();
    assert_eq!(v["version"], "2.1.0");
    assert!(v["runs"][0]["results"].as_array().unwrap().len() as u64 >= count);
}

#[test]
fn explain_known_and_unknown_codes() {
    let out = hensuc(&["explain", "E0201"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("E0201"));
    let out = hensuc(&["explain", "w0303"]);
    assert_eq!(out.status.code(), Some(0));
    let out = hensuc(&["explain", "E9999"]);
    assert_eq!(out.status.code(), Some(2));
}

/// build → read → build gives identical bytes, for every example: the whole examples project is
/// built to JSON, then every JSON artifact is built again inside a project made of JSON only.
#[test]
fn build_round_trips_every_example() {
    let tmp = tempfile::tempdir().unwrap();
    let json_project = tmp.path().join("json-project");
    let json_workflows = json_project.join("workflows");
    std::fs::create_dir_all(&json_workflows).unwrap();
    let second_dir = tmp.path().join("second");
    std::fs::create_dir_all(&second_dir).unwrap();
    let mut built = Vec::new();
    for entry in std::fs::read_dir(repo().join("examples/workflows")).unwrap() {
        let path = entry.unwrap().path();
        let out = hensuc(&[
            "build",
            path.to_str().unwrap(),
            "-d",
            "examples",
            "-o",
            json_workflows.to_str().unwrap(),
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            path.display(),
            stderr(&out)
        );
        assert!(stderr(&out).contains("compiled"), "{}", stderr(&out));
    }
    for entry in std::fs::read_dir(&json_workflows).unwrap() {
        let first = entry.unwrap().path();
        let second = second_dir.join(first.file_name().unwrap());
        let out = hensuc(&[
            "build",
            first.to_str().unwrap(),
            "-d",
            json_project.to_str().unwrap(),
            "-o",
            second.to_str().unwrap(),
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            first.display(),
            stderr(&out)
        );
        let a = std::fs::read_to_string(&first).unwrap();
        let b = std::fs::read_to_string(&second).unwrap();
        assert_eq!(a, b, "{} does not round-trip", first.display());
        let v: serde_json::Value = serde_json::from_str(&a).unwrap();
        assert_eq!(v["formatVersion"], 1);
        assert!(
            v["metadata"].get("created").is_none(),
            "no timestamp unless asked"
        );
        built.push(first);
    }
    assert!(built.len() >= 15, "{built:?}");
}

#[test]
fn build_timestamp_is_opt_in() {
    let tmp = tempfile::tempdir().unwrap();
    let out_path = tmp.path().join("a.json");
    let out = hensuc(&[
        "build",
        "examples/workflows/mini-review.hwf",
        "--timestamp",
        "-o",
        out_path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out_path).unwrap()).unwrap();
    let created = v["metadata"]["created"].as_str().unwrap();
    assert!(created.ends_with('Z') && created.len() == 27, "{created}");
}

#[test]
fn graph_formats() {
    let wf = "examples/workflows/content-pipeline.hwf";
    let mermaid = hensuc(&["graph", wf, "--format", "mermaid"]);
    assert_eq!(mermaid.status.code(), Some(0), "{}", stderr(&mermaid));
    insta::assert_snapshot!("content_pipeline_mermaid", stdout(&mermaid));
    let text = hensuc(&["graph", wf]);
    assert_eq!(text.status.code(), Some(0));
    assert!(
        !stdout(&text).contains('\x1b'),
        "no ANSI codes when not on a terminal"
    );
    insta::assert_snapshot!("content_pipeline_text", stdout(&text));
    let dot = hensuc(&["graph", wf, "--format", "dot"]);
    assert!(stdout(&dot).starts_with("digraph"));
    let json = hensuc(&["graph", wf, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(v["schemaVersion"], 1);
}

#[test]
fn panic_hook_exits_101_with_please_report() {
    let out = Command::new(env!("CARGO_BIN_EXE_hensuc"))
        .arg("--version")
        .env("HENSUC_INTERNAL_TEST_PANIC", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(101));
    assert!(stderr(&out).contains("internal error: please report"));
}

/// A `.json` workflow gets the same checks as source, with spans pointing into the JSON.
#[test]
fn json_input_diagnostics_point_into_the_json() {
    let out = hensuc(&[
        "check",
        "tests/fixtures/cli/bad-workflow.json",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let codes: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["E0205", "E0204", "W0310"]);
    let target = &v["diagnostics"][1];
    assert!(
        target["range"]["start"]["line"].as_u64().unwrap() > 1,
        "{target:#}"
    );
    let text =
        std::fs::read_to_string(repo().join("tests/fixtures/cli/bad-workflow.json")).unwrap();
    let start = target["range"]["start"]["byte"].as_u64().unwrap() as usize;
    let end = target["range"]["end"]["byte"].as_u64().unwrap() as usize;
    assert_eq!(&text[start..end], "\"resolvd\"");
}

#[test]
fn fmt_check_and_stdin() {
    let out = hensuc(&["fmt", "--check", "examples"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "examples are formatted: {}",
        stdout(&out)
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_hensuc"))
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

/// A minimal OpenAI-compatible chat-completions server on 127.0.0.1: answers every request with
/// `content` (and echoes the Authorization header into nothing). Returns the base URL and a
/// log of request bodies.
fn mock_openai(content: &'static str) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = log.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0u8; length];
            let _ = reader.read_exact(&mut body);
            seen.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&body).into_owned());
            let answer = serde_json::json!({
                "id": "chatcmpl-1", "object": "chat.completion", "model": "mock-model",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
            })
            .to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (format!("http://{addr}/v1"), log)
}

/// `hensuc run` drives a real (mock) provider configured in hensu.toml, reports usage, and no
/// output stream or file contains the API key — even though the model echoes it back.
#[test]
fn run_with_a_configured_provider_never_leaks_the_key() {
    const KEY: &str = "sk-test-9f8e7d6c5b4a39281706";
    let (base_url, requests) =
        mock_openai("{\"summary\": \"all good; the key was sk-test-9f8e7d6c5b4a39281706\"}");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::write(
        dir.join("hensu.toml"),
        format!(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"{base_url}\"\napi_key_env = \"LOCAL_API_KEY\"\nmodels = [\"mock-*\"]\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("workflows/summarize.hwf"),
        r#"workflow("summarize") {
    state {
        input("text", VarType.STRING)
        variable("summary", VarType.STRING)
    }
    agents {
        agent("writer") { role = "Summarizer"; model = "mock-model" }
    }
    graph {
        start at "summarize"
        node("summarize") {
            agent = "writer"
            prompt = "Summarize: {text}"
            writes("summary")
            onSuccess goto "done"
        }
        end("done")
    }
}
"#,
    )
    .unwrap();
    let events = dir.join("events.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_hensuc"))
        .args([
            "run",
            "workflows/summarize.hwf",
            "-d",
            ".",
            "-v",
            "--events",
            "events.jsonl",
        ])
        .args(["-c", r#"{"text": "a long text"}"#])
        .current_dir(dir)
        .env("LOCAL_API_KEY", KEY)
        .env_remove("HENSU_STUB_ENABLED")
        .output()
        .unwrap();
    let (o, e) = (stdout(&out), stderr(&out));
    assert_eq!(out.status.code(), Some(0), "{o}\n{e}");
    assert!(
        e.contains("→ local"),
        "the agent is routed to the configured provider: {e}"
    );
    assert!(
        e.contains("usage") && e.contains("11 tokens in, 7 out"),
        "{e}"
    );
    assert!(
        o.contains("<redacted:LOCAL_API_KEY>"),
        "the echoed key is redacted in the summary: {o}"
    );
    let events = std::fs::read_to_string(&events).unwrap();
    assert!(events.contains("\"usage\""), "{events}");
    let first: serde_json::Value = serde_json::from_str(events.lines().next().unwrap()).unwrap();
    assert_eq!(first["event"], "run_started");
    assert_eq!(first["format_version"], 1);
    for (name, text) in [("stdout", &o), ("stderr", &e), ("events", &events)] {
        assert!(!text.contains(KEY), "{name} leaks the key:\n{text}");
    }
    let requests = requests.lock().unwrap();
    assert_eq!(requests.len(), 1);
    assert!(
        requests[0].contains("Summarize: a long text"),
        "{}",
        requests[0]
    );
}

/// Driver-level diagnostics (unreadable file, JSON that is not a workflow) rendered with their
/// source, like every other code.
#[test]
fn driver_diagnostics_render_with_source() {
    let out = hensuc(&[
        "check",
        "tests/fixtures/cli/invalid-json.json",
        "--color",
        "never",
    ]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("invalid_json_workflow", stderr(&out));
    let out = hensuc(&[
        "check",
        "tests/fixtures/cli/no-such-file.hwf",
        "--color",
        "never",
    ]);
    assert_eq!(out.status.code(), Some(1));
    insta::assert_snapshot!("unreadable_file", stderr(&out));
}

/// Every catalogued code appears, rendered, in at least one snapshot of a fixture test somewhere
/// in the workspace (E0903 excepted: it needs a workflow file larger than 4 GiB).
#[test]
fn every_diagnostic_code_has_a_rendered_fixture() {
    let mut seen = std::collections::BTreeSet::new();
    let crates = repo().join("crates");
    let mut stack = vec![crates];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if !path.ends_with("target") {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "snap") {
                let text = std::fs::read_to_string(&path).unwrap();
                for (i, _) in text.match_indices('[') {
                    let code = &text[i + 1..(i + 6).min(text.len())];
                    let rest = &text[(i + 6).min(text.len())..];
                    if code.len() == 5
                        && (code.starts_with('E') || code.starts_with('W'))
                        && code[1..].bytes().all(|b| b.is_ascii_digit())
                        && rest.starts_with("]:")
                    {
                        seen.insert(code.to_string());
                    }
                }
            }
        }
    }
    let missing: Vec<&str> = hensu_diagnostics::catalogue::all()
        .iter()
        .map(|c| c.code)
        .filter(|c| *c != "E0903" && !seen.contains(*c))
        .collect();
    assert!(
        missing.is_empty(),
        "codes without a rendered fixture snapshot: {missing:?}"
    );
}

/// Invalid UTF-8 is reported once per invalid run (E0001), never twice, and the rest of the
/// file is still checked.
#[test]
fn invalid_utf8_is_one_diagnostic_per_run() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bad.hwf");
    std::fs::write(
        &path,
        b"workflow(\"x\") {\n  description = \"caf\xe9\"\n  graph { start at \"a\"\n end(\"a\") }\n}\n\xff\n",
    )
    .unwrap();
    let out = hensuc(&["check", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let codes: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, ["E0001", "E0001"], "{v:#}");
    assert_eq!(v["diagnostics"][0]["range"]["start"]["line"], 2);
    assert_eq!(v["diagnostics"][1]["range"]["start"]["line"], 6);
}
