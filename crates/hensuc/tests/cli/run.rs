//! `hensuc run` against an OpenAI-compatible provider (a wiremock server) and with sub-workflows from the project.

use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::*;

/// An OpenAI-compatible chat-completions server on 127.0.0.1 answering every completion with
/// `content`; its base URL is `{uri}/v1`. The server runs on `runtime`'s worker threads, so the
/// test thread may block on the `hensuc` child meanwhile.
fn mock_openai(runtime: &tokio::runtime::Runtime, content: &str) -> MockServer {
    let answer = serde_json::json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "mock-model",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    });
    runtime.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(ResponseTemplate::new(200).set_body_json(answer))
            .mount(&server)
            .await;
        server
    })
}

/// `hensuc run` drives a real (mock) provider configured in hensu.toml, reports usage, and no
/// output stream or file contains the API key — even though the model echoes it back.
#[test]
fn run_with_a_configured_provider_never_leaks_the_key() {
    const KEY: &str = "sk-test-9f8e7d6c5b4a39281706";
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = mock_openai(
        &runtime,
        "{\"summary\": \"all good; the key was sk-test-9f8e7d6c5b4a39281706\"}",
    );
    let base_url = format!("{}/v1", server.uri());
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
    let out = hensuc()
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
    let requests = runtime.block_on(server.received_requests()).unwrap();
    assert_eq!(requests.len(), 1);
    let body = String::from_utf8_lossy(&requests[0].body);
    assert!(body.contains("Summarize: a long text"), "{body}");
}

/// A sub-workflow's child comes from the project's `workflows/` directory.
#[test]
fn sub_workflow_child_comes_from_the_project() {
    let out = hensuc()
        .current_dir(repo().join("examples"))
        .args(["run", "workflows/main-research.hwf", "-d", "."])
        .args(["-c", r#"{"topic": "Rust"}"#, "--stub", "--no-store"])
        .output()
        .unwrap();
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

/// `run` compiles the named workflow and what it references, nothing else: a broken, unrelated
/// file in `workflows/` neither blocks the run nor prints; `run NAME -d DIR` finds
/// `DIR/workflows/NAME.hwf`; `check FILE` without `-d` finds the child in `workflows/`.
#[test]
fn run_and_check_compile_only_the_workflow_and_what_it_references() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let examples = repo().join("examples");
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    for f in ["main-research.hwf", "sub-summarizer.hwf"] {
        std::fs::copy(
            examples.join("workflows").join(f),
            dir.join("workflows").join(f),
        )
        .unwrap();
    }
    for sub in ["prompts", "stubs"] {
        let _ = std::process::Command::new("cp")
            .args(["-r"])
            .arg(examples.join(sub))
            .arg(dir)
            .status();
    }
    std::fs::write(dir.join("workflows/broken.hwf"), "fun broken( = ???").unwrap();
    let d = dir.to_str().unwrap();
    let out = hensuc()
        .args(["run", "main-research", "-d", d, "--stub", "--no-store"])
        .args(["-c", r#"{"topic": "Rust"}"#])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("broken.hwf"), "{}", stderr(&out));
    let check = run_hensuc(&[
        "check",
        dir.join("workflows/main-research.hwf").to_str().unwrap(),
    ]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));
    assert!(!stderr(&check).contains("E0501"), "{}", stderr(&check));
}

/// Output contracts: `runs --json` has one schema with or without a store; `--events` write
/// errors warn once and exit 2; a context file with a UTF-8 BOM is accepted; a 1,000-node path
/// is abbreviated.
#[test]
fn output_contracts_of_run_and_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().to_str().unwrap();
    let listed: serde_json::Value =
        serde_json::from_str(&stdout(&run_hensuc(&["runs", "-d", d, "--json"]))).unwrap();
    assert_eq!(listed["format_version"], 2);
    assert_eq!(listed["runs"], serde_json::json!([]));

    let ctx = tmp.path().join("ctx.json");
    std::fs::write(&ctx, "\u{feff}{\"topic\": \"Rust\"}").unwrap();
    let ctx_arg = format!("@{}", ctx.display());
    let base = [
        "run",
        "workflows/main-research.hwf",
        "-d",
        ".",
        "--stub",
        "--no-store",
    ];
    let ok = hensuc()
        .current_dir(repo().join("examples"))
        .args(base)
        .args(["-c", &ctx_arg])
        .output()
        .unwrap();
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));

    if std::path::Path::new("/dev/full").exists() {
        let full = hensuc()
            .current_dir(repo().join("examples"))
            .args(base)
            .args(["-c", &ctx_arg, "--events", "/dev/full"])
            .output()
            .unwrap();
        assert_eq!(full.status.code(), Some(2), "{}", stderr(&full));
        assert_eq!(
            stderr(&full).matches("cannot write events").count(),
            1,
            "{}",
            stderr(&full)
        );
    }

    let long: Vec<String> = (0..1000).map(|i| format!("n{i}")).collect();
    let long: Vec<&str> = long.iter().map(String::as_str).collect();
    let shown = hensuc::commands::run::abbreviate_path(&long);
    assert!(shown.starts_with("n0 → n1"), "{shown}");
    assert!(shown.contains("(985 more)"), "{shown}");
    assert!(shown.ends_with("n998 → n999"), "{shown}");
    assert_eq!(hensuc::commands::run::abbreviate_path(&["a", "b"]), "a → b");
}

/// `-q`: a quiet run prints no header and no per-step line, only the final summary (the same
/// as without `-q`) and problems; `-q` and `-v` exclude each other.
#[test]
fn a_quiet_run_prints_only_the_summary() {
    let run = |extra: &[&str]| {
        hensuc()
            .current_dir(repo().join("examples"))
            .args(["run", "workflows/main-research.hwf", "-d", ".", "--stub"])
            .args(["--no-store", "-c", r#"{"topic": "Rust"}"#])
            .args(extra)
            .output()
            .unwrap()
    };
    let loud = run(&[]);
    let quiet = run(&["--quiet"]);
    assert_eq!(loud.status.code(), Some(0), "{}", stderr(&loud));
    assert_eq!(quiet.status.code(), Some(0), "{}", stderr(&quiet));
    let loud_err = stderr(&loud);
    assert!(
        loud_err.contains("running ") && loud_err.contains("→ "),
        "{loud_err}"
    );
    // Nothing went wrong, so a quiet run says nothing on stderr.
    assert_eq!(stderr(&quiet), "");
    // The summary on stdout is the same (but for the measured time).
    let summary = |o: &std::process::Output| {
        stdout(o)
            .lines()
            .filter(|l| !l.trim_start().starts_with("time "))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert!(stdout(&quiet).starts_with("✓ workflow ended at `done`: SUCCESS"));
    assert_eq!(summary(&loud), summary(&quiet));
    let both = run(&["-q", "-v"]);
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
}

/// `--events -` writes the events to stdout, one JSON object a line and nothing else; the
/// summary moves to stderr (no file named `-` appears).
#[test]
fn events_dash_goes_to_stdout() {
    let examples = repo().join("examples");
    let out = hensuc()
        .current_dir(&examples)
        .args(["run", "workflows/main-research.hwf", "-d", ".", "--stub"])
        .args(["--no-store", "-c", r#"{"topic": "Rust"}"#, "--events", "-"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(lines.len() > 2, "{lines:?}");
    assert!(lines.iter().all(|e| e.get("event").is_some()), "{lines:?}");
    assert!(
        stderr(&out).contains("✓ workflow ended at `done`: SUCCESS"),
        "{}",
        stderr(&out)
    );
    assert!(!examples.join("-").exists());
}

/// The shared flags are spelled and documented the same way everywhere: `run` takes
/// `--color`, every `-d` / `-v` has its help text, `--auto-approve` / `--defer-review` are
/// documented on `run` and `resume`.
#[test]
fn shared_flags_are_taken_and_documented_the_same_way() {
    let ok = hensuc()
        .current_dir(repo().join("examples"))
        .args(["run", "workflows/main-research.hwf", "-d", ".", "--stub"])
        .args([
            "--no-store",
            "--color",
            "never",
            "-c",
            r#"{"topic": "Rust"}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    for command in [
        "check", "build", "graph", "run", "resume", "cancel", "pause", "runs",
    ] {
        let help = stdout(&run_hensuc(&[command, "--help"]));
        let dir = help
            .lines()
            .find(|l| l.trim_start().starts_with("-d, --dir <DIR>"))
            .unwrap_or_else(|| panic!("{command}: no -d\n{help}"));
        assert!(
            dir.trim_start().len() > "-d, --dir <DIR>".len() + 4,
            "{command}: -d has no help: {dir}"
        );
        if let Some(v) = help.lines().find(|l| l.contains("-v, --verbose")) {
            assert!(v.contains("Show"), "{command}: -v has no help: {v}");
        }
    }
    for command in ["run", "resume"] {
        let help = stdout(&run_hensuc(&[command, "--help"]));
        for flag in [
            "--color",
            "--defer-review",
            "--auto-approve",
            "--interactive",
        ] {
            assert!(help.contains(flag), "{command} --help lacks {flag}\n{help}");
        }
    }
}

/// `--store URL` means the same on every command that reads or writes runs: a run stored in
/// another SQLite file is listed, shown and cancelled through it, and the project's own store
/// stays empty.
#[test]
fn store_flag_is_taken_by_every_run_command() {
    for command in [
        "run", "resume", "cancel", "pause", "runs", "worker", "attach",
    ] {
        let help = stdout(&run_hensuc(&[command, "--help"]));
        assert!(
            help.lines()
                .any(|l| l.trim_start().starts_with("--store <URL>")),
            "{command} --help lacks --store\n{help}"
        );
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::write(
        dir.join("workflows/w.hwf"),
        r#"fun w() = workflow("w") {
    agents { agent("a") { role = "R"; model = "stub" } }
    graph {
        start at "ask"
        node("ask") {
            agent = "a"
            prompt = "Hi"
            review(ReviewMode.REQUIRED)
            onApproval goto "done"
            onRejection goto "done"
        }
        end("done")
    }
}
"#,
    )
    .unwrap();
    let d = dir.to_str().unwrap();
    let other = dir.join("elsewhere.db");
    let store = other.to_str().unwrap();
    let run = run_hensuc(&[
        "run",
        "w",
        "-d",
        d,
        "--stub",
        "--defer-review",
        "--store",
        store,
    ]);
    assert_eq!(run.status.code(), Some(3), "{}", stderr(&run));
    assert!(other.exists(), "the run went to --store");
    assert!(
        !dir.join(".hensu/state.db").exists(),
        "not to the project's store"
    );
    let listed = stdout(&run_hensuc(&["runs", "-d", d, "--store", store, "--json"]));
    // `--format json` is the same as its alias `--json`, on every command with a JSON form.
    let formatted = run_hensuc(&["runs", "-d", d, "--store", store, "--format", "json"]);
    assert_eq!(stdout(&formatted), listed);
    for command in ["check", "test", "runs", "attach"] {
        let help = stdout(&run_hensuc(&[command, "--help"]));
        assert!(
            help.contains("--format <FORMAT>"),
            "{command} --help lacks --format\n{help}"
        );
    }
    let v: serde_json::Value = serde_json::from_str(&listed).unwrap();
    let id = v["runs"][0]["run_id"]
        .as_str()
        .expect("the run is listed")
        .to_string();
    let shown = run_hensuc(&["runs", "show", &id, "-d", d, "--store", store]);
    assert_eq!(shown.status.code(), Some(0), "{}", stderr(&shown));
    let cancel = run_hensuc(&["cancel", &id, "-d", d, "--store", store]);
    assert_eq!(cancel.status.code(), Some(0), "{}", stderr(&cancel));
    let both = run_hensuc(&["run", "w", "-d", d, "--no-store", "--store", store]);
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
}

/// A stub run is offline: the api-caller and webhook requests are simulated and recorded in
/// the events; nothing reaches the host unless `hensu.toml` allows it.
#[test]
fn a_stub_run_sends_no_http_unless_the_project_allows_the_host() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let src = dir.join("calls.hwf");
    std::fs::write(
        &src,
        format!(
            r#"fun calls() = workflow("calls") {{
    version = "1.0.0"
    graph {{
        start at "call"
        generic("call") {{
            executorType = "api-caller"
            config {{
                "endpoint" to "http://127.0.0.1:{port}/api"
                "method" to "POST"
            }}
            onSuccess goto "notify"
        }}
        action("notify") {{
            send("webhook", mapOf("url" to "http://127.0.0.1:{port}/hook", "text" to "hi"))
            onSuccess goto "done"
        }}
        end("done")
    }}
}}
"#
        ),
    )
    .unwrap();
    let events = dir.join("events.jsonl");
    let d = dir.to_str().unwrap();
    let out = run_hensuc(&[
        "run",
        src.to_str().unwrap(),
        "-d",
        d,
        "--stub",
        "--no-store",
        "--events",
        events.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("network     simulated"),
        "{}",
        stderr(&out)
    );
    assert!(
        listener.accept().is_err(),
        "no connection reached the host in an offline run"
    );
    let log = std::fs::read_to_string(&events).unwrap();
    assert!(
        log.contains(&format!(
            "simulated (offline run): POST http://127.0.0.1:{port}/api"
        )),
        "{log}"
    );
    assert!(
        log.contains(&format!(
            "simulated (offline run): POST http://127.0.0.1:{port}/hook"
        )),
        "{log}"
    );
    // Allowed in hensu.toml: the request goes out (and is refused: the port is closed now).
    drop(listener);
    std::fs::write(
        dir.join("hensu.toml"),
        "[network]\nallow_hosts = [\"127.0.0.1\"]\n",
    )
    .unwrap();
    let out = run_hensuc(&[
        "run",
        src.to_str().unwrap(),
        "-d",
        d,
        "--stub",
        "--no-store",
    ]);
    assert!(
        stderr(&out).contains("real HTTP to 127.0.0.1"),
        "{}",
        stderr(&out)
    );
}

/// Ctrl-C during a (slow stub) model call abandons the call at once and takes no transition:
/// no failure is recorded for the node and the run ends as cancelled.
#[cfg(unix)]
#[test]
fn ctrl_c_during_a_model_call_takes_no_transition() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let src = dir.join("slow.hwf");
    std::fs::write(
        &src,
        r#"fun slow() = workflow("slow") {
    version = "1.0.0"
    agents {
        agent("writer") { role = "Writer"; model = Models.GPT_4O }
    }
    graph {
        start at "write"
        node("write") {
            agent = "writer"
            prompt = "Write."
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
    let events = dir.join("events.jsonl");
    let child = hensuc()
        .args(["run", src.to_str().unwrap(), "--stub", "--no-store", "-d"])
        .arg(dir)
        .arg("--events")
        .arg(&events)
        .env("HENSU_STUB_DELAY_MS", "60000")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let waited = std::time::Instant::now();
    while !std::fs::read_to_string(&events)
        .unwrap_or_default()
        .contains("\"node_started\"")
    {
        assert!(
            waited.elapsed() < std::time::Duration::from_secs(20),
            "the run did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let interrupted = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains("run cancelled"), "{}", stdout(&out));
    let log = std::fs::read_to_string(&events).unwrap();
    assert!(!log.contains("\"transition_taken\""), "{log}");
    assert!(!log.contains("\"node_completed\""), "{log}");
}

/// The examples' research project (a parent and its sub-workflow child) copied into `dir`.
fn research_project(dir: &Path) {
    let examples = repo().join("examples");
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    for f in ["main-research.hwf", "sub-summarizer.hwf"] {
        std::fs::copy(
            examples.join("workflows").join(f),
            dir.join("workflows").join(f),
        )
        .unwrap();
    }
    for sub in ["prompts", "stubs"] {
        let status = std::process::Command::new("cp")
            .args(["-r"])
            .arg(examples.join(sub))
            .arg(dir)
            .status()
            .unwrap();
        assert!(status.success());
    }
}

/// The context a stored run ended with.
fn final_context(dir: &Path, run_id: &str) -> hensu_runtime::Context {
    use hensu_store::StateStore;
    let store = hensu_store::SqliteStore::open(dir).unwrap();
    let loaded = crate::wait(store.load(run_id)).unwrap();
    hensu_host::restore(run_id, &loaded.snapshot)
        .unwrap()
        .context
}

/// A run detached to a worker resolves its sub-workflow as a direct run does (one recipe,
/// `hensu_host::launch::callable_workflows`): same path, same child result.
#[test]
fn a_worker_runs_a_sub_workflow_as_a_direct_run_does() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    research_project(dir);
    let d = dir.to_str().unwrap();
    let context = r#"{"topic": "Rust"}"#;
    let direct = run_hensuc(&["run", "main-research", "-d", d, "--stub", "-c", context]);
    assert_eq!(direct.status.code(), Some(0), "{}", stderr(&direct));
    let direct_id = stderr(&direct)
        .lines()
        .find(|l| l.starts_with("run ") && l.contains("(state: "))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap()
        .to_string();
    let queued = run_hensuc(&[
        "run",
        "main-research",
        "-d",
        d,
        "--stub",
        "--detach",
        "-c",
        context,
    ]);
    assert_eq!(queued.status.code(), Some(0), "{}", stderr(&queued));
    let detached_id = stdout(&queued).trim().to_string();
    // `attach` follows the run until it ends; the local worker `--detach` started runs it.
    let mut attach = hensuc()
        .args(["attach", &detached_id, "-d", d])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let status = loop {
        if let Some(status) = attach.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = attach.kill();
            panic!("the detached run did not end");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(status.success(), "attach: {status}");
    let (a, b) = (
        final_context(dir, &direct_id),
        final_context(dir, &detached_id),
    );
    assert!(
        a.get("tl_dr")
            .and_then(|v| v.as_str())
            .is_some_and(|s| s.contains("Rust is memory safe")),
        "{a:?}"
    );
    assert_eq!(a.get("tl_dr"), b.get("tl_dr"));
    assert_ne!(direct_id, detached_id);
}

/// A stub agent slower than its node's timeout (`HENSU_STUB_DELAY_MS`, docs/testing.md): the
/// node fails with the timeout and the run takes its `onFailure` route, recorded in the events
/// (docs/language.md, *Timeouts and backoff*).
#[test]
fn a_node_slower_than_its_timeout_takes_its_failure_route() {
    let tmp = tempfile::tempdir().unwrap();
    let wf = tmp.path().join("slow.hwf");
    std::fs::write(
        &wf,
        r#"fun workflow() = workflow("slow") {
    agents {
        agent("caller") { role = "API caller"; model = "stub" }
    }
    graph {
        start at "call"
        node("call") {
            agent = "caller"
            prompt = "Fetch the report."
            timeout = 200.milliseconds
            onSuccess goto "done"
            onFailure retry 1 backoff 10.milliseconds otherwise "late"
        }
        end("done")
        end("late", ExitStatus.FAILURE)
    }
}
"#,
    )
    .unwrap();
    let o = hensuc()
        .current_dir(tmp.path())
        .env("HENSU_STUB_DELAY_MS", "5000")
        .arg("run")
        .arg(&wf)
        .args(["--stub", "--no-store", "--events", "-"])
        .output()
        .unwrap();
    let events: Vec<serde_json::Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let failures: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["event"] == "node_completed")
        .map(|e| &e["error"])
        .collect();
    assert_eq!(
        failures,
        [&serde_json::json!("timed out after 200ms"); 2],
        "{}",
        stderr(&o)
    );
    let last = events.last().unwrap();
    assert_eq!(last["event"], "run_finished");
    assert_eq!(last["end_node"], "late", "{last}");
}

/// `run --detach --contexts FILE.jsonl` queues one run per line in one process, ids printed in
/// order, each stored queued with its line's context; a bad line names its line number and
/// queues nothing.
#[test]
fn detach_with_a_contexts_file_queues_one_run_per_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    research_project(dir);
    let d = dir.to_str().unwrap();
    let db = dir.join(".hensu/state.db").display().to_string();
    let lines = dir.join("contexts.jsonl");
    std::fs::write(
        &lines,
        "{\"topic\": \"Rust\"}\n\n{\"topic\": \"Go\"}\n{\"topic\": \"Zig\"}\n",
    )
    .unwrap();
    // A configured store: `--detach` only queues (no local worker).
    let queued = hensuc()
        .env("HENSU_DATABASE_URL", &db)
        .args(["run", "main-research", "-d", d, "--stub", "--detach"])
        .arg("--contexts")
        .arg(&lines)
        .output()
        .unwrap();
    assert_eq!(queued.status.code(), Some(0), "{}", stderr(&queued));
    let ids: Vec<String> = stdout(&queued).lines().map(str::to_string).collect();
    assert_eq!(ids.len(), 3, "{ids:?}");
    assert!(
        stderr(&queued).contains("3 runs queued"),
        "{}",
        stderr(&queued)
    );
    let store = hensu_store::SqliteStore::open(dir).unwrap();
    for (id, topic) in ids.iter().zip(["Rust", "Go", "Zig"]) {
        let run = crate::wait(hensu_store::StateStore::load(&store, id)).unwrap();
        assert_eq!(run.record.status, hensu_store::RunStatus::Queued);
        assert_eq!(run.snapshot["context"]["topic"], topic);
    }
    std::fs::write(&lines, "{\"topic\": \"Rust\"}\n[1, 2]\n").unwrap();
    let bad = hensuc()
        .env("HENSU_DATABASE_URL", &db)
        .args(["run", "main-research", "-d", d, "--stub", "--detach"])
        .arg("--contexts")
        .arg(&lines)
        .output()
        .unwrap();
    assert_ne!(bad.status.code(), Some(0));
    assert!(
        stderr(&bad).contains("contexts.jsonl:2:"),
        "{}",
        stderr(&bad)
    );
    assert_eq!(
        crate::wait(hensu_store::StateStore::list(&store))
            .unwrap()
            .len(),
        3
    );
}
