//! `hensuc replay` (docs/cli.md, *Replay*): a stored run executed again from its recorded
//! outputs reproduces its path and context (every example × every scenario of its tests);
//! a mock model server on 127.0.0.1 receives no request and no command runs during a replay;
//! a changed workflow is reported at its first diverging step; `--all` is a regression suite
//! with a summary, JSON and JUnit.

use std::path::Path;

use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::json_schemas::{Schemas, assert_valid, examples_copy};
use crate::*;

fn in_dir(dir: &Path, args: &[&str]) -> std::process::Output {
    hensuc().args(args).current_dir(dir).output().unwrap()
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_str(stdout(out).trim())
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", stdout(out), stderr(out)))
}

/// The newest run's record (`runs --json`).
fn newest(dir: &Path) -> Value {
    let out = in_dir(dir, &["runs", "-d", ".", "--json"]);
    json_of(&out)["runs"][0].clone()
}

/// The scenario a test runs in: its `scenario`, or — when it has inline `[stubs]` — a copy of
/// that scenario's stub files with the inline ones written over them.
fn scenario_of(dir: &Path, name: &str, test: &toml::Table) -> String {
    let base = test
        .get("scenario")
        .and_then(|s| s.as_str())
        .unwrap_or("default")
        .to_string();
    let Some(inline) = test.get("stubs").and_then(|s| s.as_table()) else {
        return base;
    };
    let scenario = format!("replay-{name}");
    let to = dir.join("stubs").join(&scenario);
    std::fs::create_dir_all(&to).unwrap();
    if let Ok(entries) = std::fs::read_dir(dir.join("stubs").join(&base)) {
        for e in entries {
            let e = e.unwrap();
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
    for (id, text) in inline {
        std::fs::write(to.join(format!("{id}.txt")), text.as_str().unwrap()).unwrap();
    }
    scenario
}

/// Answers each review a paused run waits for as the test scripts it (approve otherwise),
/// with `hensuc resume`, until the run ends or waits for a time or a signal.
fn answer_reviews(dir: &Path, id: &str, reviews: &[Value]) {
    let mut visits: std::collections::HashMap<String, i64> = Default::default();
    for _ in 0..20 {
        let record = newest(dir);
        assert_eq!(record["run_id"], id);
        // A run waiting at a durable `wait`/`awaitSignal` (docs/language.md, *Timers and
        // signals*) is not waiting for a review: it is replayed up to its wait.
        if record["status"] != "paused" || record["correlation_id"].is_null() {
            return;
        }
        let node = record["current_node"].as_str().unwrap().to_string();
        let visit = *visits
            .entry(node.clone())
            .and_modify(|v| *v += 1)
            .or_insert(1);
        let scripted = reviews
            .iter()
            .find(|r| r["node"] == node.as_str() && r["visit"].as_i64().unwrap_or(1) == visit);
        let mut args: Vec<String> = vec!["resume".into(), id.into(), "-d".into(), ".".into()];
        match scripted {
            Some(r) if r["decision"] == "reject" => {
                args.extend(["--reject".into(), r["feedback"].as_str().unwrap().into()]);
            }
            Some(r) if r["decision"] == "backtrack" => args.extend([
                "--backtrack".into(),
                r["target"].as_str().unwrap().into(),
                "--reason".into(),
                r["feedback"].as_str().unwrap_or("").into(),
            ]),
            _ => args.push("--approve".into()),
        }
        for (k, v) in scripted
            .and_then(|r| r["edits"].as_object())
            .into_iter()
            .flatten()
        {
            let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
            args.extend(["--set".into(), format!("{k}={v}")]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        in_dir(dir, &args);
    }
    panic!("run {id} still paused after 20 reviews");
}

/// For every example and every scenario of its `hensuc test` files: the run recorded with
/// stub agents (its reviews deferred and answered as the test scripts them, or approved)
/// replays to the identical path, outputs, context and end, and the JSON report fits its
/// schema.
#[test]
fn every_example_scenario_replays_identically() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = examples_copy(tmp.path());
    let schemas = Schemas::load();
    let validator = schemas.validator("replay.schema.json");
    let mut tests: Vec<_> = std::fs::read_dir(dir.join("tests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".test.toml"))
        .collect();
    tests.sort();
    assert!(tests.len() > 30, "the examples' tests: {}", tests.len());
    let mut checked = 0;
    for file in tests {
        let name = file
            .file_name()
            .unwrap()
            .to_string_lossy()
            .replace(".test.toml", "");
        let test: toml::Table = std::fs::read_to_string(&file).unwrap().parse().unwrap();
        let workflow = test["workflow"].as_str().unwrap();
        let workflow = if workflow.contains('.') {
            format!("workflows/{workflow}")
        } else {
            workflow.to_string()
        };
        let scenario = scenario_of(&dir, &name, &test);
        let context = serde_json::to_string(
            &test
                .get("context")
                .cloned()
                .unwrap_or(toml::Value::Table(Default::default())),
        )
        .unwrap();
        let reviews: Vec<Value> = test
            .get("reviews")
            .map(|r| serde_json::to_value(r).unwrap())
            .and_then(|v| v.as_array().cloned())
            .unwrap_or_default();
        let review_flag = if reviews.is_empty() {
            "--auto-approve"
        } else {
            "--defer-review"
        };
        in_dir(
            &dir,
            &[
                "run",
                &workflow,
                "--stub",
                "--scenario",
                &scenario,
                "-c",
                &context,
                "-d",
                ".",
                "--quiet",
                review_flag,
            ],
        );
        let id = newest(&dir)["run_id"].as_str().unwrap().to_string();
        answer_reviews(&dir, &id, &reviews);
        let out = in_dir(&dir, &["replay", &id, "-d", ".", "--json"]);
        let report = json_of(&out);
        assert_valid(&validator, "replay.schema.json", "replay --json", &report);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: the replay of run {id} diverged:\n{report:#}"
        );
        assert_eq!(report["identical"], true, "{name}");
        assert!(report["steps"].as_u64().unwrap() > 0, "{name}: {report}");
        checked += 1;
    }
    assert!(checked > 30);
}

/// A chain of three agent nodes and an action node running a command that appends to
/// `marks.txt`.
const CHAIN: &str = r#"workflow("chain") {
    state {
        input("topic", VarType.STRING)
        variable("a", VarType.STRING)
        variable("b", VarType.STRING)
        variable("c", VarType.STRING)
    }
    agents {
        agent("writer") { role = "Writer"; model = "mock-model" }
    }
    graph {
        start at "a"
        node("a") {
            agent = "writer"
            prompt = "A about {topic}."
            writes("a")
            onSuccess goto "b"
        }
        node("b") {
            agent = "writer"
            prompt = "B after {a}."
            writes("b")
            onSuccess goto "mark"
        }
        action("mark") {
            execute("mark")
            onSuccess goto "c"
            onFailure goto "done"
        }
        node("c") {
            agent = "writer"
            prompt = "C after {b} on {topic}."
            writes("c")
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

/// A project whose models are served by the mock OpenAI-compatible server at `base_url`.
fn mock_project(base_url: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::write(
        dir.join("hensu.toml"),
        format!(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"{base_url}\"\n\
             api_key_env = \"LOCAL_API_KEY\"\nmodels = [\"mock-*\"]\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("commands.yaml"),
        "commands:\n  mark:\n    command: \"echo marked >> marks.txt && echo marked\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("workflows/chain.hwf"), CHAIN).unwrap();
    tmp
}

fn mock_model(runtime: &tokio::runtime::Runtime) -> MockServer {
    runtime.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
                "id": "chatcmpl-1", "object": "chat.completion", "model": "mock-model",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "text"}}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
            })))
            .mount(&server)
            .await;
        server
    })
}

fn with_key(dir: &Path, args: &[&str]) -> std::process::Output {
    hensuc()
        .args(args)
        .current_dir(dir)
        .env("LOCAL_API_KEY", "sk-local")
        .output()
        .unwrap()
}

#[test]
fn a_replay_sends_no_model_request_and_runs_no_command() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = mock_model(&runtime);
    let calls = || runtime.block_on(server.received_requests()).unwrap().len();
    let tmp = mock_project(&format!("{}/v1", server.uri()));
    let dir = tmp.path();
    let out = with_key(
        dir,
        &["run", "chain", "-d", ".", "-c", r#"{"topic": "rust"}"#],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(calls(), 3, "a, b and c each called the model");
    let marks = dir.join("marks.txt");
    assert_eq!(std::fs::read_to_string(&marks).unwrap(), "marked\n");
    std::fs::remove_file(&marks).unwrap();
    let id = newest(dir)["run_id"].as_str().unwrap().to_string();

    let out = with_key(dir, &["replay", &id, "-d", ".", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let report = json_of(&out);
    assert_eq!(report["identical"], true);
    assert_eq!(report["steps"], 4);
    assert_eq!(report["recorded_answers"], 3);
    assert_eq!(calls(), 3, "the replay sent no request to the model server");
    assert!(!marks.exists(), "the replay ran no command");

    // Up to the step before `c`: the replay stops there and agrees.
    let show = json_of(&in_dir(dir, &["runs", "show", &id, "-d", ".", "--json"]));
    let before_c = show["history"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "step" && h["node"] == "c")
        .and_then(|h| h["step"].as_u64())
        .unwrap();
    let until = before_c.to_string();
    let out = with_key(
        dir,
        &["replay", &id, "--until", &until, "-d", ".", "--json"],
    );
    let report = json_of(&out);
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    assert_eq!(report["to_step"], before_c);
    assert_eq!(report["steps"], 3);
    assert_eq!(report["replayed_status"], "running");
    assert_eq!(calls(), 3);

    // Nothing was written: the store holds the one run, unchanged.
    let runs = json_of(&in_dir(dir, &["runs", "-d", ".", "--json"]));
    assert_eq!(runs["runs"].as_array().unwrap().len(), 1);
    assert_eq!(
        json_of(&in_dir(dir, &["runs", "show", &id, "-d", ".", "--json"])),
        show
    );
}

#[test]
fn a_changed_workflow_is_reported_at_its_first_diverging_step() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::write(
        dir.join("commands.yaml"),
        "commands:\n  mark:\n    command: \"echo marked\"\n",
    )
    .unwrap();
    let stubbed = CHAIN.replace("mock-model", "stub");
    std::fs::write(dir.join("workflows/chain.hwf"), &stubbed).unwrap();
    let out = in_dir(
        dir,
        &["run", "chain", "-d", ".", "-c", r#"{"topic": "rust"}"#],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let id = newest(dir)["run_id"].as_str().unwrap().to_string();

    // v2 skips the command: after `b` it goes straight to `c`.
    std::fs::write(
        dir.join("v2.hwf"),
        stubbed.replace("onSuccess goto \"mark\"", "onSuccess goto \"c\""),
    )
    .unwrap();
    let out = in_dir(
        dir,
        &["replay", &id, "--workflow", "v2.hwf", "-d", ".", "--json"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = json_of(&out);
    let d = &report["divergence"];
    assert_eq!(report["identical"], false);
    assert_eq!(d["code"], "E0916", "{report:#}");
    assert_eq!(d["kind"], "path");
    assert_eq!(d["step"], 3);
    assert_eq!(d["node"], "mark");
    assert_eq!(d["expected"]["node"], "mark");
    assert_eq!(d["got"]["node"], "c");

    let human = in_dir(dir, &["replay", &id, "--workflow", "v2.hwf", "-d", "."]);
    assert_eq!(human.status.code(), Some(1));
    let text = stdout(&human);
    assert!(
        text.contains("error[E0916]: the replay diverges at step 3: `c` ran instead of `mark`"),
        "{text}"
    );
    insta::assert_snapshot!("replay_diverged_E0916", text.replace(&id, "RUN"));

    // v3 adds a node the run never ran: its agent call has no recorded answer (E0917), and
    // is answered with a failure, never live.
    std::fs::write(
        dir.join("v3.hwf"),
        stubbed
            .replace("onSuccess goto \"done\"", "onSuccess goto \"d\"")
            .replace(
                "end(\"done\")",
                "node(\"d\") {\n            agent = \"writer\"\n            prompt = \"D.\"\n            onSuccess goto \"done\"\n        }\n        end(\"done\")",
            ),
    )
    .unwrap();
    let out = in_dir(
        dir,
        &["replay", &id, "--workflow", "v3.hwf", "-d", ".", "--json"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = json_of(&out);
    assert_eq!(report["divergence"]["code"], "E0917", "{report:#}");
    assert_eq!(report["divergence"]["node"], "d");
    assert_eq!(
        report["not_recorded"],
        serde_json::json!(["agent call at `d` (visit 1)"])
    );
    let human = in_dir(dir, &["replay", &id, "--workflow", "v3.hwf", "-d", "."]);
    assert_eq!(human.status.code(), Some(1));
    insta::assert_snapshot!(
        "replay_not_recorded_E0917",
        stdout(&human).replace(&id, "RUN")
    );
}

/// One node with a REQUIRED review: a run of it pauses there.
const GATE: &str = r#"workflow("gate") {
    agents {
        agent("planner") { role = "Planner"; model = "stub" }
    }
    graph {
        start at "plan"
        node("plan") {
            agent = "planner"
            prompt = "Plan."
            review {
                mode = ReviewMode.REQUIRED
            }
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

#[test]
fn replay_all_is_a_regression_suite_with_junit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::write(
        dir.join("commands.yaml"),
        "commands:\n  mark:\n    command: \"echo marked\"\n",
    )
    .unwrap();
    let stubbed = CHAIN.replace("mock-model", "stub");
    std::fs::write(dir.join("workflows/chain.hwf"), &stubbed).unwrap();
    for topic in ["rust", "go"] {
        let ctx = format!(r#"{{"topic": "{topic}"}}"#);
        let out = in_dir(dir, &["run", "chain", "-d", ".", "-c", &ctx]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    // A run that has not ended (paused at its review) is skipped, with its reason.
    std::fs::write(dir.join("workflows/gate.hwf"), GATE).unwrap();
    let out = in_dir(dir, &["run", "gate", "-d", "."]);
    assert_eq!(out.status.code(), Some(3), "paused: {}", stderr(&out));

    let schemas = Schemas::load();
    let validator = schemas.validator("replay-all.schema.json");
    let junit = dir.join("replay.xml");
    let junit_arg = junit.to_string_lossy().to_string();
    let out = in_dir(
        dir,
        &[
            "replay", "--all", "-d", ".", "--json", "--junit", &junit_arg,
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let report = json_of(&out);
    assert_valid(
        &validator,
        "replay-all.schema.json",
        "replay --all --json",
        &report,
    );
    assert_eq!(report["summary"]["replayed"], 2, "{report:#}");
    assert_eq!(report["summary"]["identical"], 2);
    assert_eq!(report["summary"]["diverged"], 0);
    assert_eq!(report["summary"]["skipped"], 1);
    let skipped = report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["outcome"] == "skipped")
        .unwrap();
    assert_eq!(skipped["reason"], "the run has not ended (it is paused)");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<testsuites name=\"hensuc replay\""), "{xml}");
    assert_eq!(
        xml.matches("<testcase ").count(),
        report["runs"].as_array().unwrap().len()
    );

    // Against a changed workflow every run diverges: exit 1, one failure per run.
    std::fs::write(
        dir.join("v2.hwf"),
        stubbed.replace("onSuccess goto \"mark\"", "onSuccess goto \"c\""),
    )
    .unwrap();
    let out = in_dir(
        dir,
        &[
            "replay",
            "--all",
            "--workflow",
            "v2.hwf",
            "--since",
            "2000-01-01",
            "-d",
            ".",
            "--junit",
            &junit_arg,
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    let text = stdout(&out);
    assert!(
        text.contains("replayed 2: 0 identical, 2 diverged"),
        "{text}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert_eq!(
        xml.matches("<failure message=\"E0916: ").count(),
        2,
        "{xml}"
    );

    // `--since` in the future: nothing to replay.
    let out = in_dir(
        dir,
        &[
            "replay",
            "--all",
            "--since",
            "2999-01-01",
            "-d",
            ".",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json_of(&out)["runs"], serde_json::json!([]));
    let bad = in_dir(dir, &["replay", "--all", "--since", "yesterday", "-d", "."]);
    assert_ne!(bad.status.code(), Some(0));
    assert!(
        stderr(&bad).contains("--since `yesterday`"),
        "{}",
        stderr(&bad)
    );
}

/// A parallel node whose two branches share one agent, then a sub-workflow whose child runs
/// two nodes.
const NESTED: &str = r#"workflow("nested") {
    state {
        input("topic", VarType.STRING)
        variable("facts", VarType.STRING)
        variable("style", VarType.STRING)
        variable("summary", VarType.STRING)
    }
    agents {
        agent("reviewer") { role = "Reviewer"; model = "mock-model" }
    }
    graph {
        start at "review"
        parallel("review") {
            branch("facts") {
                agent = "reviewer"
                prompt = "Check the FACTS about {topic}."
                yields("facts")
            }
            branch("style") {
                agent = "reviewer"
                prompt = "Check the STYLE about {topic}."
                yields("style")
            }
            onSuccess goto "child"
        }
        subWorkflow("child") {
            target = "child"
            imports("facts")
            writes("summary")
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

const CHILD: &str = r#"workflow("child") {
    state {
        input("facts", VarType.STRING)
        variable("outline", VarType.STRING)
        variable("summary", VarType.STRING)
    }
    agents {
        agent("writer") { role = "Writer"; model = "mock-model" }
    }
    graph {
        start at "outline"
        node("outline") {
            agent = "writer"
            prompt = "OUTLINE {facts}."
            writes("outline")
            onSuccess goto "sum"
        }
        node("sum") {
            agent = "writer"
            prompt = "SUMMARY of {outline}."
            writes("summary")
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

/// Each branch and each child node gets its own answer from the mock (by a word of its
/// prompt): the replay must give each call its own recorded answer back.
#[test]
fn parallel_branches_and_a_child_replay_from_their_nested_records() {
    use wiremock::matchers::body_string_contains;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let answer = |text: &str| {
        ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "mock-model",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
        }))
    };
    let server = runtime.block_on(async {
        let server = MockServer::start().await;
        for (word, text) in [
            ("FACTS", r#"{"facts": "water is wet"}"#),
            ("STYLE", r#"{"style": "plain"}"#),
            ("OUTLINE", "an outline"),
            ("SUMMARY", "a summary"),
        ] {
            Mock::given(method("POST"))
                .and(path("/v1/chat/completions"))
                .and(body_string_contains(word))
                .respond_with(answer(text))
                .mount(&server)
                .await;
        }
        server
    });
    let calls = || runtime.block_on(server.received_requests()).unwrap().len();
    let tmp = mock_project(&format!("{}/v1", server.uri()));
    let dir = tmp.path();
    std::fs::write(dir.join("workflows/nested.hwf"), NESTED).unwrap();
    std::fs::write(dir.join("workflows/child.hwf"), CHILD).unwrap();
    let out = with_key(
        dir,
        &["run", "nested", "-d", ".", "-c", r#"{"topic": "rust"}"#],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(calls(), 4);
    let id = newest(dir)["run_id"].as_str().unwrap().to_string();
    let out = with_key(dir, &["replay", &id, "-d", ".", "--json"]);
    let report = json_of(&out);
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    assert_eq!(report["identical"], true);
    assert_eq!(report["recorded_answers"], 4, "{report:#}");
    assert_eq!(calls(), 4, "no request during the replay");
}

/// Reviews answered in the terminal (`--interactive`) log no pause: the replay reads each
/// decision from the state after the reviewed node — a backtrack, a rejection through the
/// `onRejection` arm, an approval.
#[test]
fn reviews_answered_in_the_terminal_replay_as_decided() {
    use std::io::Write;
    let tmp = tempfile::tempdir().unwrap();
    let dir = examples_copy(tmp.path());
    for answers in ["b\nplan\nonce more\na\n", "r\nnot this quarter\n", "a\n"] {
        let mut child = hensuc()
            .current_dir(&dir)
            .args([
                "run",
                "workflows/human-review.hwf",
                "-c",
                r#"{"goal": "Ship v1.0"}"#,
                "--stub",
                "-d",
                ".",
                "--interactive",
            ])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(answers.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
        let id = newest(&dir)["run_id"].as_str().unwrap().to_string();
        let out = in_dir(&dir, &["replay", &id, "-d", ".", "--json"]);
        let report = json_of(&out);
        assert_eq!(out.status.code(), Some(0), "{answers:?}: {report:#}");
        assert_eq!(report["identical"], true);
    }
}
