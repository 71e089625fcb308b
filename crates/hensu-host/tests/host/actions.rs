//! Action nodes: send (log, webhook), commands.yaml, shell quoting, command timeouts.

use super::*;

fn action_node(actions: Vec<Action>) -> Workflow {
    workflow(
        "act",
        vec![
            Node::Action(ActionNode {
                id: "act".into(),
                actions,
                transition_rules: vec![success("ok"), failure(Some("ko"))],
                writes: Vec::new(),
            }),
            end("ok", ExitStatus::Success),
            end("ko", ExitStatus::Failure),
        ],
    )
}

#[tokio::test]
async fn send_log_and_webhook() {
    use wiremock::matchers::{body_json, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/"))
        .and(body_json(json!({"text": "Hi Ada", "n": 3})))
        .respond_with(ResponseTemplate::new(204))
        .expect(1)
        .mount(&server)
        .await;
    let url = format!("{}/", server.uri());
    let wf = action_node(vec![
        Action::Send {
            handler_id: "log".into(),
            payload: map(json!({"message": "Hello {name}", "level": "warn"})),
            raw_payload: false,
        },
        Action::Send {
            handler_id: "webhook".into(),
            payload: map(json!({"url": url, "text": "Hi {name}", "n": 3})),
            raw_payload: false,
        },
        Action::Send {
            handler_id: "log".into(),
            payload: map(json!({"message": "raw {name}"})),
            raw_payload: true,
        },
    ]);
    let h = harness(&Script::new());
    let r = h.run(&wf, json!({"name": "Ada"})).await;
    assert_eq!(completed(&r).1, "ok");
    let outs: Vec<Value> = h
        .events_of("action_executed")
        .iter()
        .map(|e| e["output"].clone())
        .collect();
    assert_eq!(outs[0], "[WARN] Hello Ada");
    assert_eq!(outs[2], "[INFO] raw {name}");
    // The webhook's result is its response body (docs/language.md, *Action node*).
    assert_eq!(outs[1], "", "the mock answers with an empty body");
    server.verify().await;
    let requests = server.received_requests().await.unwrap();
    assert_eq!(
        requests[0].body, br#"{"text":"Hi Ada","n":3}"#,
        "payload order kept"
    );
}

#[tokio::test]
async fn commands_yaml_is_parsed_with_a_yaml_library() {
    let reg = CommandRegistry::parse(
        "# comment\ncommands:\n  echo-result:\n    command: \"echo 'Workflow result:' {result}\"\n    timeout: 5000\n  with-env:\n    command: printenv GREETING\n    env:\n      GREETING: hello\n      N: 3\n  no-command:\n    timeout: 1\n",
    )
    .unwrap();
    assert_eq!(reg.ids(), ["echo-result", "with-env"]);
    assert_eq!(
        reg.get("echo-result").unwrap().command,
        "echo 'Workflow result:' {result}"
    );
    assert_eq!(reg.get("echo-result").unwrap().timeout_ms, 5000);
    assert_eq!(reg.get("with-env").unwrap().timeout_ms, 30_000);
    assert_eq!(reg.get("with-env").unwrap().env["N"], "3");
    let r = reg.execute("with-env", &Context::default()).await;
    assert_eq!(r, ActionResult::success("hello"));
    assert!(CommandRegistry::parse("commands: [1, 2]").is_err());
    // A dropped entry's execute says why it is missing (check's W0322 says it first).
    let r = reg.execute("no-command", &Context::default()).await;
    assert_eq!(
        r,
        ActionResult::failure(
            "Command not found in registry: 'no-command' (commands.yaml drops the entry: it has \
             no `command:`). Available commands: [echo-result, with-env]"
        )
    );
    let typo = CommandRegistry::parse("commands:\n  refund:\n    run: echo hi\n").unwrap();
    let r = typo.execute("refund", &Context::default()).await;
    assert_eq!(
        r,
        ActionResult::failure(
            "Command not found in registry: 'refund' (commands.yaml drops the entry: it has no \
             `command:`, only the unknown key `run`; the command line goes under `command:`). \
             Available commands: []"
        )
    );
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let shipped = CommandRegistry::load(&examples).unwrap();
    assert_eq!(
        shipped.ids(),
        ["echo-result", "echo-topic", "word-count", "list-files"]
    );
}

#[tokio::test]
async fn shell_values_cannot_inject() {
    // The full matrix (72 payloads × every shell context) is in hensu-host's tests.
    let spec = CommandSpec::new("printf '%s' {x}");
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("canary");
    std::fs::write(&canary, "alive").unwrap();
    let payloads = [
        format!("'; rm {} #", canary.display()),
        "$(id)".to_string(),
        "a\nid\nb".to_string(),
        "it's 'quoted' ''".to_string(),
        String::new(),
    ];
    for p in payloads {
        let r = run_command(&spec, &ctx(json!({ "x": p })), Some(dir.path())).await;
        assert_eq!(
            r,
            ActionResult::success(p.trim_end_matches('\n')),
            "payload {p:?}"
        );
    }
    assert!(canary.exists(), "nothing was deleted");
    // Absent and null values render as nothing (upstream drops nulls).
    let r = run_command(
        &CommandSpec::new("echo {a}{b}."),
        &ctx(json!({"b": null})),
        None,
    )
    .await;
    assert_eq!(r, ActionResult::success("."));
}

#[tokio::test]
async fn command_timeout_exit_code_and_merged_output() {
    let mk = |c: &str, t| CommandSpec {
        timeout_ms: t,
        ..CommandSpec::new(c)
    };
    let r = run_command(&mk("sleep 5", 100), &Context::default(), None).await;
    assert_eq!(r, ActionResult::failure("Command timed out after 100 ms"));
    let r = run_command(&mk("exit 3", 1000), &Context::default(), None).await;
    assert_eq!(r, ActionResult::failure("Command failed with exit code: 3"));
    // What the command printed last says why.
    let r = run_command(
        &mk("echo working; echo 'disk full' >&2; exit 4", 1000),
        &Context::default(),
        None,
    )
    .await;
    assert_eq!(
        r,
        ActionResult::failure("Command failed with exit code: 4: disk full")
    );
    let r = run_command(
        &mk("echo out; echo err >&2", 1000),
        &Context::default(),
        None,
    )
    .await;
    assert_eq!(r, ActionResult::success("out\nerr"));
}
