//! Action outputs end to end (docs/language.md, *Action node*): a command's stdout is the action
//! node's output under its id and, through `writes`, typed state; a later agent's prompt reads
//! both; the step's durable record carries the output.

use super::*;

const WORKFLOW: &str = r#"fun w() = workflow("tool-then-agent") {
    state {
        input("q", VarType.STRING)
        variable("search", VarType.STRING, "result of the search action")
        variable("hits", VarType.NUMBER)
    }
    agents { agent("a") { role = "Researcher"; model = "stub" } }
    graph {
        start at "search"
        action("search") {
            send("log", mapOf("message" to "searching {q}"))
            execute("search")
            onSuccess goto "count"
            onFailure goto "failed"
        }
        action("count") {
            execute("count")
            writes("hits")
            onSuccess goto "read"
            onFailure goto "failed"
        }
        node("read") {
            agent = "a"
            prompt = "Results: {search} ({hits} hits)"
            onSuccess goto "done"
        }
        end("done")
        end("failed", ExitStatus.FAILURE)
    }
}
"#;

const COMMANDS: &str = r#"commands:
  search:
    command: "echo RESULTS-FOR {q}"
    timeout: 5000
  count:
    command: "echo '{\"hits\": 3}'"
    timeout: 5000
"#;

fn project(dir: &Path) {
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::write(dir.join("workflows/w.hwf"), WORKFLOW).unwrap();
    std::fs::write(dir.join("commands.yaml"), COMMANDS).unwrap();
}

/// The repro of issue 35's lost action output, ported: `check` is clean (the node id and the
/// `writes` count as written), the agent's prompt shows the command's stdout and the typed
/// `hits`, and the stored run has both in its context and the stdout as the step's output.
#[test]
fn a_command_s_stdout_feeds_a_later_prompt() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    project(dir);
    let d = dir.to_str().unwrap();
    let check = run_hensuc(&["check", "--deny-warnings", "-d", d]);
    assert_eq!(check.status.code(), Some(0), "{}", stderr(&check));

    let events = dir.join("events.jsonl");
    let run = run_hensuc(&[
        "run",
        "w",
        "-d",
        d,
        "--stub",
        "-c",
        r#"{"q": "rust"}"#,
        "--events",
        events.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let calls: Vec<serde_json::Value> = std::fs::read_to_string(&events)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|e: &serde_json::Value| e["event"] == "agent_call")
        .collect();
    assert_eq!(calls.len(), 1, "{calls:?}");
    let prompt = calls[0]["prompt"].as_str().unwrap();
    // Numbers render as upstream's doubles.
    assert_eq!(prompt, "Results: RESULTS-FOR rust (3.0 hits)");

    let run_id = stderr(&run)
        .lines()
        .find(|l| l.starts_with("run ") && l.contains("(state: "))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap()
        .to_string();
    use hensu_store::StateStore;
    let store = hensu_store::SqliteStore::open(dir).unwrap();
    let loaded = crate::wait(store.load(&run_id)).unwrap();
    let context = hensu_host::restore(&run_id, &loaded.snapshot)
        .unwrap()
        .context;
    assert_eq!(context["search"], "RESULTS-FOR rust");
    assert_eq!(context["hits"].as_f64(), Some(3.0), "{context:?}");
    let log = crate::wait(store.read_log(&run_id, 0, 100)).unwrap();
    let search_step = log
        .iter()
        .find(|e| e.meta.executed_node.as_deref() == Some("search"))
        .expect("the search step is recorded");
    assert_eq!(
        search_step.output,
        Some(serde_json::json!("RESULTS-FOR rust"))
    );
}

/// A workflow whose one action runs the `deploy` command and has no way on when it fails.
pub(crate) const DEPLOY: &str = r#"fun w() = workflow("deploy") {
    graph {
        start at "deploy"
        action("deploy") {
            execute("deploy")
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

/// A run that fails on a command keeps its reason: `runs show` prints it (text and `--json`
/// `error`) with the cause, in the words `hensuc run` printed.
#[test]
fn runs_show_gives_a_failed_run_s_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::write(dir.join("workflows/deploy.hwf"), DEPLOY).unwrap();
    std::fs::write(
        dir.join("commands.yaml"),
        "commands:\n  deploy:\n    command: \"echo no-space-left >&2; exit 3\"\n    timeout: 5000\n",
    )
    .unwrap();
    let d = dir.to_str().unwrap();
    let run = run_hensuc(&["run", "deploy", "-d", d]);
    assert_eq!(run.status.code(), Some(1), "{}", stderr(&run));
    let run_id = stderr(&run)
        .lines()
        .find(|l| l.starts_with("run ") && l.contains("(state: "))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap()
        .to_string();

    let shown = run_hensuc(&["runs", "show", &run_id, "-d", d]);
    let text = stdout(&shown);
    let line = text
        .lines()
        .find(|l| l.starts_with("error "))
        .unwrap_or_else(|| panic!("no error line: {text}"));
    assert!(line.contains("No valid transition from deploy"), "{line}");
    assert!(line.contains("One or more actions failed"), "{line}");
    assert!(line.contains("no-space-left"), "{line}");

    let json = run_hensuc(&["runs", "show", &run_id, "-d", d, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(
        v["error"].as_str(),
        line.strip_prefix("error").map(str::trim)
    );
}
