//! `hensuc fork` (docs/cli.md, *Time travel*): against a mock model server on 127.0.0.1 that
//! counts its calls, only the nodes after the fork's step run; a fork onto a workflow that
//! does not fit the state is refused with E0908/E0909 and writes nothing.

use serde_json::Value;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::*;

/// A chain of three agent nodes, `a` → `b` → `c`, each writing its variable.
const CHAIN: &str = r#"workflow("chain") {
    state {
        input("topic", VarType.STRING)
        variable("a", VarType.STRING)
        variable("b", VarType.STRING)
        variable("c", VarType.STRING)
    }
    agents {
        agent("writer") { role = "Writer"; model = "MODEL" }
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
            onSuccess goto "c"
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

fn project(model: &str, base_url: Option<&str>) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    if let Some(url) = base_url {
        std::fs::write(
            dir.join("hensu.toml"),
            format!(
                "[providers.local]\nkind = \"openai\"\nbase_url = \"{url}\"\n\
                 api_key_env = \"LOCAL_API_KEY\"\nmodels = [\"mock-*\"]\n"
            ),
        )
        .unwrap();
    }
    std::fs::write(
        dir.join("workflows/chain.hwf"),
        CHAIN.replace("MODEL", model),
    )
    .unwrap();
    tmp
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_str(stdout(out).trim()).unwrap_or_else(|e| panic!("{e}: {}", stdout(out)))
}

/// The newest run's id and its `runs show --json`.
fn newest(dir: &std::path::Path) -> (String, Value) {
    let out = hensuc()
        .args(["runs", "-d", ".", "--json"])
        .current_dir(dir)
        .output()
        .unwrap();
    let runs = json_of(&out);
    let id = runs["runs"][0]["run_id"].as_str().unwrap().to_string();
    (id.clone(), show(dir, &id))
}

fn show(dir: &std::path::Path, id: &str) -> Value {
    let out = hensuc()
        .args(["runs", "show", id, "-d", ".", "--json"])
        .current_dir(dir)
        .output()
        .unwrap();
    json_of(&out)
}

/// The log step at which `node` runs next.
fn step_before(show: &Value, node: &str) -> u64 {
    show["history"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["kind"] == "step" && h["node"] == node)
        .and_then(|h| h["step"].as_u64())
        .unwrap_or_else(|| panic!("no step before `{node}`: {show}"))
}

fn runs_count(dir: &std::path::Path) -> usize {
    let out = hensuc()
        .args(["runs", "-d", ".", "--json"])
        .current_dir(dir)
        .output()
        .unwrap();
    json_of(&out)["runs"].as_array().unwrap().len()
}

/// A mock OpenAI-compatible model on 127.0.0.1: the first request whose body contains
/// `marker` fails (400), every other request answers `content`.
fn model_failing_once(
    runtime: &tokio::runtime::Runtime,
    marker: &str,
    content: &str,
) -> MockServer {
    use wiremock::matchers::body_string_contains;
    let ok = serde_json::json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "mock-model",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    });
    runtime.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .and(body_string_contains(marker))
            .respond_with(ResponseTemplate::new(400).set_body_json(
                serde_json::json!({"error": {"message": "bad request", "type": "invalid_request_error"}}),
            ))
            .up_to_n_times(1)
            .with_priority(1)
            .mount(&server)
            .await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(ResponseTemplate::new(200).set_body_json(ok))
            .with_priority(2)
            .mount(&server)
            .await;
        server
    })
}

#[test]
fn fork_reruns_only_the_nodes_after_the_step() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(async {
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
    });
    let calls = || runtime.block_on(server.received_requests()).unwrap().len();
    let tmp = project("mock-model", Some(&format!("{}/v1", server.uri())));
    let dir = tmp.path();
    let run = |args: &[&str]| {
        let out = hensuc()
            .args(args)
            .current_dir(dir)
            .env("LOCAL_API_KEY", "sk-local")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        out
    };
    run(&["run", "chain", "-d", ".", "-c", r#"{"topic": "rust"}"#]);
    assert_eq!(calls(), 3, "a, b and c each call the model once");
    let (parent, history) = newest(dir);
    // Fork before `c`: only `c` runs again, on the parent's a and b, with the edit.
    let at_c = step_before(&history, "c");
    let at = at_c.to_string();
    let out = run(&["fork", &parent, "--at", &at, "-d", ".", "--set", "topic=go"]);
    assert!(
        stderr(&out).contains("continues at `c`"),
        "{}",
        stderr(&out)
    );
    assert_eq!(calls(), 4, "only `c` ran");
    let (child, shown) = newest(dir);
    assert_ne!(child, parent);
    assert_eq!(shown["parent"]["run_id"], parent.as_str());
    assert_eq!(shown["parent"]["step"], at_c);
    assert_eq!(shown["record"]["status"], "completed");
    assert_eq!(shown["path"], serde_json::json!(["a", "b", "c"]));
    let kinds: Vec<&str> = shown["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "forked").count(),
        1,
        "{kinds:?}"
    );
    let prompts: Vec<String> = runtime
        .block_on(server.received_requests())
        .unwrap()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    assert!(
        prompts[3].contains("on go"),
        "the edit reached `c`: {}",
        prompts[3]
    );
    // Fork before `b` (of the fork: the point is in its prefix, so the parent's): b and c.
    let at_b = step_before(&history, "b").to_string();
    run(&["fork", &child, "--at", &at_b, "-d", "."]);
    assert_eq!(calls(), 6, "b and c ran");
    let (_, shown) = newest(dir);
    assert_eq!(shown["parent"]["run_id"], parent.as_str());
    // The parent is untouched.
    assert_eq!(
        show(dir, &parent)["record"]["step"],
        history["record"]["step"]
    );
}

#[test]
fn fork_onto_a_workflow_that_does_not_fit_is_refused_and_writes_nothing() {
    let tmp = project("stub", None);
    let dir = tmp.path();
    let out = hensuc()
        .args(["run", "chain", "-d", ".", "-c", r#"{"topic": "rust"}"#])
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (parent, history) = newest(dir);
    let at = step_before(&history, "c").to_string();
    // E0908: the other workflow has no node `c`.
    std::fs::write(
        dir.join("workflows/renamed.hwf"),
        CHAIN.replace("MODEL", "stub").replace("\"c\"", "\"see\""),
    )
    .unwrap();
    // E0909: `c` reads `topic`, which the other workflow declares as a number.
    std::fs::write(
        dir.join("workflows/retyped.hwf"),
        CHAIN.replace("MODEL", "stub").replace(
            "input(\"topic\", VarType.STRING)",
            "input(\"topic\", VarType.NUMBER)",
        ),
    )
    .unwrap();
    for (file, code) in [
        ("workflows/renamed.hwf", "E0908"),
        ("workflows/retyped.hwf", "E0909"),
    ] {
        let out = hensuc()
            .args(["fork", &parent, "--at", &at, "-d", ".", "--workflow", file])
            .current_dir(dir)
            .output()
            .unwrap();
        let e = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{e}");
        assert!(e.contains(code), "{code}: {e}");
        assert!(e.contains("nothing was written"), "{e}");
        assert_eq!(runs_count(dir), 1, "{file}: no fork was written");
        // The rendered diagnostic (the fixture of its code).
        insta::assert_snapshot!(format!("fork_refused_{code}"), e);
    }
    // The same retyped workflow fits once the edit gives `topic` its type.
    let out = hensuc()
        .args(["fork", &parent, "--at", &at, "-d", ".", "--workflow"])
        .args(["workflows/retyped.hwf", "--set", "topic=7"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(runs_count(dir), 2);
    // A step the run does not have, and an unknown run: errors, nothing written.
    for (id, step) in [(parent.as_str(), "999"), ("nope", "1")] {
        let out = hensuc()
            .args(["fork", id, "--at", step, "-d", "."])
            .current_dir(dir)
            .output()
            .unwrap();
        assert_ne!(out.status.code(), Some(0));
        assert_eq!(runs_count(dir), 2);
    }
}

/// Two parallel branches, then an agent node after them.
const PARALLEL: &str = r#"workflow("panel") {
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
                prompt = "FACTS about {topic}."
                yields("facts")
            }
            branch("style") {
                agent = "reviewer"
                prompt = "STYLE about {topic}."
                yields("style")
            }
            onSuccess goto "sum"
        }
        node("sum") {
            agent = "reviewer"
            prompt = "SUM of {topic}."
            writes("summary")
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

#[test]
fn redrive_reruns_only_the_failed_branch() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // The style branch's first call fails; every later call succeeds.
    let server = model_failing_once(&runtime, "STYLE", "{\"facts\": \"f\", \"style\": \"s\"}");
    let bodies = || -> Vec<String> {
        runtime
            .block_on(server.received_requests())
            .unwrap()
            .iter()
            .map(|r| String::from_utf8_lossy(&r.body).into_owned())
            .collect()
    };
    let tmp = project("mock-model", Some(&format!("{}/v1", server.uri())));
    let dir = tmp.path();
    std::fs::write(dir.join("workflows/panel.hwf"), PARALLEL).unwrap();
    let cmd = |args: &[&str]| {
        hensuc()
            .args(args)
            .current_dir(dir)
            .env("LOCAL_API_KEY", "sk-local")
            .output()
            .unwrap()
    };
    let out = cmd(&["run", "panel", "-d", ".", "-c", r#"{"topic": "rust"}"#]);
    assert_ne!(out.status.code(), Some(0), "the style branch fails the run");
    let (parent, shown) = newest(dir);
    assert_eq!(shown["record"]["status"], "failed", "{shown}");
    let before = bodies();
    let facts_calls = |b: &[String]| b.iter().filter(|x| x.contains("FACTS")).count();
    let style_calls = |b: &[String]| b.iter().filter(|x| x.contains("STYLE")).count();
    assert_eq!(facts_calls(&before), 1, "{before:#?}");
    // Redrive: the failed branch runs again, the finished one keeps its result, then `sum`.
    let out = cmd(&["redrive", &parent, "-d", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let after = bodies();
    assert_eq!(
        facts_calls(&after),
        1,
        "the finished branch did not run again"
    );
    assert_eq!(
        style_calls(&after),
        style_calls(&before) + 1,
        "the failed one did"
    );
    assert_eq!(after.iter().filter(|x| x.contains("SUM")).count(), 1);
    let (child, shown) = newest(dir);
    assert_ne!(child, parent);
    assert_eq!(shown["record"]["status"], "completed", "{shown}");
    assert_eq!(shown["parent"]["run_id"], parent.as_str());
    // A run that did not fail has nothing to redrive.
    let out = cmd(&["redrive", &child, "-d", "."]);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("not failed"), "{}", stderr(&out));
}

/// `prep`, then the sub-workflow `inner` (`c1` → `c2` → `c3`), then `after`.
const OUTER: &str = r#"workflow("outer") {
    state {
        input("topic", VarType.STRING)
        variable("prep", VarType.STRING)
        variable("result", VarType.STRING)
        variable("after", VarType.STRING)
    }
    agents {
        agent("writer") { role = "Writer"; model = "mock-model" }
    }
    graph {
        start at "prep"
        node("prep") {
            agent = "writer"
            prompt = "PREP about {topic}."
            writes("prep")
            onSuccess goto "delegate"
        }
        subWorkflow("delegate") {
            target = "inner"
            imports("topic")
            writes("result")
            onSuccess goto "after"
        }
        node("after") {
            agent = "writer"
            prompt = "AFTER with {result}."
            writes("after")
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

const INNER: &str = r#"workflow("inner") {
    state {
        input("topic", VarType.STRING)
        variable("c1", VarType.STRING)
        variable("c2", VarType.STRING)
        variable("result", VarType.STRING)
    }
    agents {
        agent("writer") { role = "Writer"; model = "mock-model" }
    }
    graph {
        start at "c1"
        node("c1") {
            agent = "writer"
            prompt = "CHILD-ONE on {topic}."
            writes("c1")
            onSuccess goto "c2"
        }
        node("c2") {
            agent = "writer"
            prompt = "CHILD-TWO after {c1}."
            writes("c2")
            onSuccess goto "c3"
        }
        node("c3") {
            agent = "writer"
            prompt = "CHILD-THREE after {c2}."
            writes("result")
            onSuccess goto "end"
        }
        end("end")
    }
}
"#;

/// A failure inside a sub-workflow child is redriven inside the child: its failed node runs
/// again and the rest of the child after it; neither the parent's nodes before the child nor
/// the child's nodes before the failure run again.
#[test]
fn redrive_restarts_inside_the_failed_sub_workflow_child() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // The child's second node fails once; every later call succeeds.
    let server = model_failing_once(&runtime, "CHILD-TWO", "text");
    let calls = |marker: &str| -> usize {
        runtime
            .block_on(server.received_requests())
            .unwrap()
            .iter()
            .filter(|r| String::from_utf8_lossy(&r.body).contains(marker))
            .count()
    };
    let tmp = project("mock-model", Some(&format!("{}/v1", server.uri())));
    let dir = tmp.path();
    std::fs::write(dir.join("workflows/outer.hwf"), OUTER).unwrap();
    std::fs::write(dir.join("workflows/inner.hwf"), INNER).unwrap();
    let cmd = |args: &[&str]| {
        hensuc()
            .args(args)
            .current_dir(dir)
            .env("LOCAL_API_KEY", "sk-local")
            .output()
            .unwrap()
    };
    let out = cmd(&["run", "outer", "-d", ".", "-c", r#"{"topic": "rust"}"#]);
    assert_ne!(out.status.code(), Some(0), "c2 fails the run");
    let (parent, shown) = newest(dir);
    assert_eq!(shown["record"]["status"], "failed", "{shown}");
    let counts = || ["PREP", "CHILD-ONE", "CHILD-TWO", "CHILD-THREE", "AFTER"].map(calls);
    assert_eq!(counts(), [1, 1, 1, 0, 0]);
    let out = cmd(&["redrive", &parent, "-d", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        counts(),
        [1, 1, 2, 1, 1],
        "only c2, c3 and `after` ran again: {}",
        stderr(&out)
    );
    let (child, shown) = newest(dir);
    assert_ne!(child, parent);
    assert_eq!(shown["record"]["status"], "completed", "{shown}");
    assert_eq!(
        shown["path"],
        serde_json::json!(["prep", "delegate", "after"])
    );
}

/// A parallel node inside a sub-workflow child whose branch failed: the redrive resumes the
/// child at that node and runs the failed branch only.
#[test]
fn redrive_reruns_only_the_failed_branch_inside_a_child() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = model_failing_once(&runtime, "STYLE", "{\"facts\": \"f\", \"style\": \"s\"}");
    let calls = |marker: &str| -> usize {
        runtime
            .block_on(server.received_requests())
            .unwrap()
            .iter()
            .filter(|r| String::from_utf8_lossy(&r.body).contains(marker))
            .count()
    };
    let tmp = project("mock-model", Some(&format!("{}/v1", server.uri())));
    let dir = tmp.path();
    // `outer` delegates to the parallel `panel` instead of `inner`.
    std::fs::write(
        dir.join("workflows/outer.hwf"),
        OUTER
            .replace("target = \"inner\"", "target = \"panel\"")
            .replace(
                "writes(\"result\")\n            onSuccess goto \"after\"",
                "onSuccess goto \"after\"",
            )
            .replace("AFTER with {result}.", "AFTER with {prep}."),
    )
    .unwrap();
    std::fs::write(dir.join("workflows/panel.hwf"), PARALLEL).unwrap();
    let cmd = |args: &[&str]| {
        hensuc()
            .args(args)
            .current_dir(dir)
            .env("LOCAL_API_KEY", "sk-local")
            .output()
            .unwrap()
    };
    let out = cmd(&["run", "outer", "-d", ".", "-c", r#"{"topic": "rust"}"#]);
    assert_ne!(out.status.code(), Some(0), "the style branch fails the run");
    let (parent, shown) = newest(dir);
    assert_eq!(shown["record"]["status"], "failed", "{shown}");
    let counts = || ["PREP", "FACTS", "STYLE", "SUM", "AFTER"].map(calls);
    assert_eq!(counts(), [1, 1, 1, 0, 0]);
    let out = cmd(&["redrive", &parent, "-d", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        counts(),
        [1, 1, 2, 1, 1],
        "only the style branch, `sum` and `after` ran again: {}",
        stderr(&out)
    );
    let (_, shown) = newest(dir);
    assert_eq!(shown["record"]["status"], "completed", "{shown}");
}
