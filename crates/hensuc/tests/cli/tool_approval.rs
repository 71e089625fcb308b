//! Tool-call approval (docs/mcp.md, *Tool approval*), for real: `hensuc run` against a mock
//! OpenAI-compatible model on 127.0.0.1 and the repository's example MCP server (its
//! `GLOSSARY_CALL_LOG` counts the calls it served), with `require_approval` naming the tool.
//! The run pauses at the call without calling it; `hensuc resume --approve --arguments`
//! runs it once with the edited arguments, `--reject` never runs it and the model reads the
//! reviewer's text; a run killed after the approval neither asks again nor calls twice, and
//! the model's turn that asked for the tool is never asked again.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::journal::{TOOL_WORKFLOW, example_server, newest_run};
use crate::*;

/// What the glossary answers for `rubric` (the reviewer's edit) and `mcp` (the model's ask).
pub(super) const EDITED_RESULT: &str = "Weighted criteria";
const MODEL_RESULT: &str = "Model Context Protocol";
/// What the model reads for a rejected call.
const REJECTION: &str = "not this term today";

fn gated_project(model: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::write(dir.join("workflows/define.hwf"), TOOL_WORKFLOW).unwrap();
    std::fs::write(
        dir.join("hensu.toml"),
        format!(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"{model}/v1\"\n\
             api_key_env = \"LOCAL_API_KEY\"\nmodels = [\"mock-*\"]\n\n\
             [mcp.servers.glossary]\ncommand = {:?}\nenv = [\"GLOSSARY_CALL_LOG\"]\n\
             tool_policy = {{ lookup_glossary = \"unsafe\" }}\n\
             require_approval = [\"lookup_*\"]\n",
            example_server().display().to_string()
        ),
    )
    .unwrap();
    tmp
}

fn answer(text: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "c2", "object": "chat.completion", "model": "mock-model",
        "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 5, "total_tokens": 14}
    }))
}

fn tool_call_answer() -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "c1", "object": "chat.completion", "model": "mock-model",
        "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "lookup_glossary",
                                 "arguments": "{\"term\": \"mcp\"}"}}]}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    }))
}

/// The model's script: a turn carrying a tool result or a rejection gets a final answer
/// (after `delay`), any other turn asks for `lookup_glossary {"term": "mcp"}`.
pub(super) async fn mount(model: &MockServer, delay: Duration) {
    for (seen, text) in [
        (EDITED_RESULT, "Rubrics weigh criteria."),
        (MODEL_RESULT, "MCP connects agents to tools."),
        (REJECTION, "I could not look it up."),
    ] {
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .and(body_string_contains(seen))
            .respond_with(answer(text).set_delay(delay))
            .with_priority(1)
            .mount(model)
            .await;
    }
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(tool_call_answer())
        .mount(model)
        .await;
}

struct Setup {
    runtime: tokio::runtime::Runtime,
    model: MockServer,
    tmp: tempfile::TempDir,
}

impl Setup {
    fn new(delay: Duration) -> Setup {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let model = runtime.block_on(async {
            let server = MockServer::start().await;
            mount(&server, delay).await;
            server
        });
        let tmp = gated_project(&model.uri());
        Setup {
            runtime,
            model,
            tmp,
        }
    }

    fn dir(&self) -> &Path {
        self.tmp.path()
    }

    fn command(&self, args: &[&str]) -> std::process::Command {
        let mut c = hensuc();
        c.args(args)
            .current_dir(self.dir())
            .env("LOCAL_API_KEY", "sk-local")
            .env("GLOSSARY_CALL_LOG", self.dir().join("calls.log"));
        c
    }

    /// `hensuc resume CORRELATION --approve` with the term edited to `rubric`.
    fn approve_with_the_edit(&self, correlation: &str) -> std::process::Output {
        self.command(&[
            "resume",
            correlation,
            "-d",
            ".",
            "--approve",
            "--arguments",
            r#"{"term": "rubric"}"#,
        ])
        .output()
        .unwrap()
    }

    /// The bodies of the model requests received so far.
    fn requests(&self) -> Vec<String> {
        self.runtime
            .block_on(self.model.received_requests())
            .unwrap()
            .iter()
            .map(|r| String::from_utf8_lossy(&r.body).into_owned())
            .collect()
    }

    fn calls(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir().join("calls.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Runs the workflow to its pause at the gated call; the run id and its one review.
    fn run_to_the_gate(&self) -> (String, Value) {
        self.run_to_the_gate_of("define")
    }

    /// [`Setup::run_to_the_gate`] through `workflow` (one that reaches `define`'s call).
    fn run_to_the_gate_of(&self, workflow: &str) -> (String, Value) {
        let out = self
            .command(&["run", workflow, "-d", ".", "-c", r#"{"term": "mcp"}"#])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(i32::from(hensuc::exit::PAUSED)),
            "{}",
            stderr(&out)
        );
        assert_eq!(
            self.calls(),
            Vec::<String>::new(),
            "not called before approval"
        );
        assert_eq!(
            self.requests().len(),
            1,
            "the model asked for the tool once"
        );
        let id = newest_run(self.dir());
        let shown = self.show(&id);
        assert_eq!(shown["record"]["status"], "paused", "{shown}");
        let reviews = shown["reviews"].as_array().cloned().unwrap_or_default();
        assert_eq!(reviews.len(), 1, "{shown}");
        let schemas = crate::json_schemas::Schemas::load();
        let validator = schemas.validator("runs-show.schema.json");
        crate::json_schemas::assert_valid(&validator, "runs-show.schema.json", "runs show", &shown);
        (id, reviews[0].clone())
    }

    fn show(&self, id: &str) -> Value {
        let out = self
            .command(&["runs", "show", id, "-d", ".", "--json"])
            .output()
            .unwrap();
        serde_json::from_str(stdout(&out).trim()).unwrap()
    }
}

#[test]
fn an_approved_call_runs_once_with_the_edited_arguments() {
    let s = Setup::new(Duration::ZERO);
    let (id, review) = s.run_to_the_gate();
    assert_eq!(review["tool"], "lookup_glossary");
    assert_eq!(review["arguments"], json!({"term": "mcp"}));
    assert_eq!(review["node"], "explain");
    let corr = review["correlation_id"].as_str().unwrap().to_string();
    let human = stdout(
        &s.command(&["runs", "show", &id, "-d", "."])
            .output()
            .unwrap(),
    );
    assert!(
        human.contains(&format!(
            "review      {corr} (node `explain`: call of tool `lookup_glossary` with {{\"term\":\"mcp\"}})"
        )),
        "{human}"
    );

    // A resume without a decision names the call and changes nothing (the model is not
    // asked again).
    let plain = s.command(&["resume", &id, "-d", "."]).output().unwrap();
    assert_ne!(plain.status.code(), Some(0));
    assert!(
        stderr(&plain).contains("--arguments JSON"),
        "{}",
        stderr(&plain)
    );
    // Edited arguments must be an object, and a tool call is not sent back.
    let array = s
        .command(&[
            "resume",
            &corr,
            "-d",
            ".",
            "--approve",
            "--arguments",
            "[1]",
        ])
        .output()
        .unwrap();
    assert!(
        stderr(&array).contains("must be a JSON object"),
        "{}",
        stderr(&array)
    );
    let back = s
        .command(&["resume", &corr, "-d", ".", "--backtrack", "explain"])
        .output()
        .unwrap();
    assert!(
        stderr(&back).contains("cannot be sent back"),
        "{}",
        stderr(&back)
    );
    assert_eq!(s.requests().len(), 1);
    assert_eq!(s.calls(), Vec::<String>::new());

    // Approved by its correlation id, with the term edited.
    let approved = s.approve_with_the_edit(&corr);
    assert_eq!(approved.status.code(), Some(0), "{}", stderr(&approved));
    assert!(
        stderr(&approved).contains("- term: \"mcp\"")
            && stderr(&approved).contains("+ term: \"rubric\""),
        "the edit is shown: {}",
        stderr(&approved)
    );
    assert_eq!(s.calls(), ["lookup_glossary"], "the tool ran once");
    let asked = s.requests();
    assert_eq!(
        asked.len(),
        2,
        "the first turn was replayed, not asked again"
    );
    assert!(
        asked[1].contains(EDITED_RESULT),
        "ran with the edit: {}",
        asked[1]
    );
    let shown = s.show(&id);
    assert_eq!(shown["record"]["status"], "completed", "{shown}");
    assert!(shown.get("reviews").is_none(), "{shown}");
}

#[test]
fn a_rejected_call_never_runs_and_the_model_reads_the_reason() {
    let s = Setup::new(Duration::ZERO);
    let (id, review) = s.run_to_the_gate();
    let corr = review["correlation_id"].as_str().unwrap();
    let out = s
        .command(&[
            "resume",
            &id,
            "-d",
            ".",
            "--correlation",
            corr,
            "--reject",
            REJECTION,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(s.calls(), Vec::<String>::new(), "zero calls of the tool");
    let asked = s.requests();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(
        asked[1].contains(REJECTION),
        "the model got the reason: {}",
        asked[1]
    );
    assert!(asked[1].contains("rejected"), "{}", asked[1]);
    assert_eq!(s.show(&id)["record"]["status"], "completed");
}

/// Waits (up to a minute) until `ready` holds.
fn wait_until(mut ready: impl FnMut() -> bool, what: &str) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out: {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_run_killed_after_the_approval_neither_asks_again_nor_calls_twice() {
    // The model's turn after the tool's result hangs: the kill lands there.
    let s = Setup::new(Duration::from_secs(120));
    let (id, review) = s.run_to_the_gate();
    let corr = review["correlation_id"].as_str().unwrap().to_string();
    let log = std::fs::File::create(s.dir().join("resume.log")).unwrap();
    let mut child = s
        .command(&["resume", &corr, "-d", ".", "--approve"])
        .stdout(std::process::Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    wait_until(
        || s.requests().len() >= 2,
        "the model's turn after the tool",
    );
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(s.calls(), ["lookup_glossary"]);

    // Resumed without any decision: the journal has the approval and the tool's result.
    s.runtime.block_on(async {
        s.model.reset().await;
        mount(&s.model, Duration::ZERO).await;
    });
    let out = s.command(&["resume", &id, "-d", "."]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(s.calls(), ["lookup_glossary"], "not called twice");
    let asked = s.requests();
    assert_eq!(asked.len(), 1, "only the turn after the tool: {asked:?}");
    assert!(asked[0].contains(MODEL_RESULT), "{}", asked[0]);
    let shown = s.show(&id);
    assert_eq!(shown["record"]["status"], "completed", "{shown}");
    assert!(shown.get("reviews").is_none(), "not asked again: {shown}");
}

/// `hensuc test` scripts tool approvals (docs/testing.md, *Tool approvals*): `[[reviews]]`
/// with `tool =` approves (with edited arguments) or rejects the gated calls of a node's
/// stub agent; a rejected call is never made and the agent reads the reason.
#[test]
fn hensuc_test_scripts_tool_approvals() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(
        dir.join("workflows/define.hwf"),
        TOOL_WORKFLOW.replace("mock-model", "stub"),
    )
    .unwrap();
    std::fs::write(
        dir.join("hensu.toml"),
        "[mcp]\nrequire_approval = [\"lookup_*\"]\n",
    )
    .unwrap();
    let common = r#"workflow = "define"
[context]
term = "mcp"
[stubs]
explain = "Definition: {{tool.lookup_glossary}}"

[[tool_calls]]
node = "explain"
tool = "lookup_glossary"
arguments = { term = "mcp" }

[[tool_results]]
tool = "lookup_glossary"
result = "the Model Context Protocol"
"#;
    let approved = format!(
        r#"{common}
[[reviews]]
node = "explain"
tool = "lookup_glossary"
decision = "approve"
arguments = {{ term = "rubric" }}

[expect]
outputs.definition = {{ equals = "Definition: the Model Context Protocol" }}
events = [{{ event = "tool_call", tool = "lookup_glossary", index = 1, ok = true }}]
"#
    );
    let rejected = format!(
        r#"{common}
[[reviews]]
node = "explain"
tool = "lookup_glossary"
decision = "reject"
feedback = "no lookups today"

[expect]
outputs.definition = {{ contains = "Reviewer's reason: no lookups today" }}
"#
    );
    std::fs::write(dir.join("tests/approved.test.toml"), approved).unwrap();
    std::fs::write(dir.join("tests/rejected.test.toml"), &rejected).unwrap();
    let o = run_hensuc(&["test", "-d", dir.to_str().unwrap(), "--update"]);
    let shown = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(0), "{shown}");
    let approved_trace =
        std::fs::read_to_string(dir.join("tests/snapshots/approved.trace")).unwrap();
    assert!(
        approved_trace
            .contains(r#"explain tool lookup_glossary: approve with {"term":"rubric"} (edited)"#),
        "{approved_trace}"
    );
    let rejected_trace =
        std::fs::read_to_string(dir.join("tests/snapshots/rejected.trace")).unwrap();
    assert!(
        rejected_trace.contains("explain tool lookup_glossary: reject (no lookups today)"),
        "{rejected_trace}"
    );
    assert!(
        !rejected_trace.contains("tool_call"),
        "never called: {rejected_trace}"
    );
    // A tool call is not sent back.
    std::fs::write(
        dir.join("tests/rejected.test.toml"),
        rejected.replace(
            "decision = \"reject\"",
            "decision = \"backtrack\"\ntarget = \"explain\"",
        ),
    )
    .unwrap();
    let o = run_hensuc(&["test", "-d", dir.to_str().unwrap()]);
    let shown = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{shown}");
    assert!(shown.contains("never sent back"), "{shown}");
    // A decision on a tool no agent declares and no stub calls is E0905, with the name meant.
    std::fs::write(
        dir.join("tests/rejected.test.toml"),
        rejected.replacen(
            "tool = \"lookup_glossary\"\ndecision",
            "tool = \"lookup_glosary\"\ndecision",
            1,
        ),
    )
    .unwrap();
    let o = run_hensuc(&["test", "-d", dir.to_str().unwrap()]);
    let shown = format!("{}{}", stdout(&o), stderr(&o));
    assert_eq!(o.status.code(), Some(1), "{shown}");
    assert!(
        shown.contains("E0905") && shown.contains("calls tool `lookup_glosary`"),
        "{shown}"
    );
    assert!(shown.contains("did you mean `lookup_glossary`?"), "{shown}");
}

/// E0521: `--no-store` leaves nowhere to pause for a gated call, so the run is refused before
/// it starts (the model is never asked), unless `--auto-approve` decides every call.
#[test]
fn a_gated_tool_in_a_run_without_a_store_is_refused_with_e0521() {
    let s = Setup::new(Duration::ZERO);
    let out = s
        .command(&[
            "run",
            "define",
            "-d",
            ".",
            "--no-store",
            "-c",
            r#"{"term": "mcp"}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    let refusal = &err[err.find("error[E0521]").expect("E0521")..];
    assert!(refusal.contains("`lookup_glossary`"), "{err}");
    insta::assert_snapshot!(refusal);
    assert!(
        s.requests().is_empty(),
        "refused before the model was asked"
    );
    assert_eq!(s.calls(), Vec::<String>::new());
}

/// `lookup`: runs `define` (whose agent calls the gated tool) as a sub-workflow child.
const PARENT_WORKFLOW: &str = r#"workflow("lookup") {
    state {
        input("term", VarType.STRING)
        variable("definition", VarType.STRING)
    }
    graph {
        start at "delegate"
        subWorkflow("delegate") {
            target = "define"
            imports("term")
            writes("definition")
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

/// A gated call inside a sub-workflow child suspends the whole run at it (docs/mcp.md, *Tool
/// approval*): `runs show` lists the child's call for review, and an approval by its
/// correlation id runs it once with the edit; the parent then completes with the child's
/// output.
#[test]
fn a_gated_call_in_a_sub_workflow_child_is_reviewed_and_runs_once() {
    let s = Setup::new(Duration::ZERO);
    std::fs::write(s.dir().join("workflows/lookup.hwf"), PARENT_WORKFLOW).unwrap();
    let (id, review) = s.run_to_the_gate_of("lookup");
    assert_eq!(review["tool"], "lookup_glossary");
    assert_eq!(review["arguments"], json!({"term": "mcp"}));
    assert_eq!(review["node"], "explain", "the child's node: {review}");
    let corr = review["correlation_id"].as_str().unwrap().to_string();
    let approved = s.approve_with_the_edit(&corr);
    assert_eq!(approved.status.code(), Some(0), "{}", stderr(&approved));
    assert_eq!(s.calls(), ["lookup_glossary"], "the tool ran once");
    let asked = s.requests();
    assert_eq!(asked.len(), 2, "the child's first turn was replayed");
    assert!(
        asked[1].contains(EDITED_RESULT),
        "ran with the edit: {}",
        asked[1]
    );
    let summary = stdout(&approved);
    assert!(
        summary.contains("definition = Rubrics weigh criteria."),
        "the child's output, written by the parent: {summary}"
    );
    let shown = s.show(&id);
    assert_eq!(shown["record"]["status"], "completed", "{shown}");
}
