//! One workflow that succeeds, pauses for a review or fails (by its stub scenario), run through
//! every face — `hensuc run`, `hensuc run --server`, the API and the console — gives the same
//! status, exit code, headline and reason in each (docs/cli.md, *Outcomes*).

use std::path::Path;

use serde_json::{Value, json};

use crate::serve::{ServeProcess, spawn_serve};
use crate::{hensuc, stderr, stdout, wait};

const OUTCOMES: &str = r#"fun outcomes() = workflow("Outcomes") {
    agents {
        agent("triager") { role = "Triager"; model = "stub" }
    }
    state {
        input("ticket", VarType.STRING)
        variable("verdict", VarType.STRING)
    }
    graph {
        start at "triage"
        node("triage") {
            agent = "triager"
            prompt = "Triage {ticket}."
            writes("verdict")
            onCondition("verdict") {
                whenValue equalTo "ok" goto "done"
                whenValue equalTo "review" goto "approve"
            }
        }
        node("approve") {
            agent = "triager"
            prompt = "Summarise {ticket} for approval."
            review(ReviewMode.REQUIRED)
            onApproval goto "done"
            onRejection goto "rejected"
        }
        end("done")
        end("rejected", ExitStatus.FAILURE)
    }
}
"#;

/// What every face must report for one scenario.
struct Expected {
    scenario: &'static str,
    status: &'static str,
    exit: i32,
    headline: &'static str,
    /// The failure reason (`None`: the run has none).
    reason: Option<&'static str>,
}

const FAIL_REASON: &str = "No valid transition from triage; rules tried: when `verdict` == \"ok\": \
     `verdict` is String `broken`; when `verdict` == \"review\": `verdict` is String `broken`";

fn expectations() -> [Expected; 3] {
    [
        Expected {
            scenario: "ok",
            status: "completed",
            exit: 0,
            headline: "✓ workflow ended at `done`: SUCCESS",
            reason: None,
        },
        Expected {
            scenario: "review",
            status: "paused",
            exit: 3,
            headline: "⏸ paused at `approve`, waiting for review",
            reason: None,
        },
        Expected {
            scenario: "fail",
            status: "failed",
            exit: 1,
            headline: "✗ workflow failed at `triage`: No valid transition from triage",
            reason: Some(FAIL_REASON),
        },
    ]
}

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("workflows")).expect("mkdir");
    std::fs::write(root.join("workflows/outcomes.hwf"), OUTCOMES).expect("write");
    for (scenario, verdict) in [("ok", "ok"), ("review", "review"), ("fail", "broken")] {
        let stubs = root.join("stubs").join(scenario);
        std::fs::create_dir_all(&stubs).expect("mkdir");
        std::fs::write(
            stubs.join("triage.txt"),
            json!({ "verdict": verdict }).to_string(),
        )
        .expect("write");
    }
    dir
}

fn context(scenario: &str) -> String {
    json!({"ticket": "T-1", "stub_scenario": scenario}).to_string()
}

fn local_run(dir: &Path, e: &Expected) {
    let run = hensuc()
        .args(["run", "outcomes", "-d"])
        .arg(dir)
        .args(["-c", &context(e.scenario)])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    let what = format!("hensuc run ({})", e.scenario);
    assert_eq!(run.status.code(), Some(e.exit), "{what}: {}", stderr(&run));
    let summary = stdout(&run);
    assert!(summary.starts_with(e.headline), "{what}: {summary}");
    // The run id is on the first line of the progress.
    let id = stderr(&run)
        .split_whitespace()
        .nth(1)
        .expect("run id")
        .to_string();
    let shown = hensuc()
        .args(["runs", "show", &id, "--json", "-d"])
        .arg(dir)
        .output()
        .expect("runs show");
    let shown: Value = serde_json::from_str(&stdout(&shown)).expect("json");
    assert_eq!(shown["record"]["status"], e.status, "{what}: {shown}");
    assert_eq!(shown["error"].as_str(), e.reason, "{what}: {shown}");
}

/// `hensuc run --server`: the id of the execution it started.
fn server_run(dir: &Path, url: &str, e: &Expected) -> String {
    let run = hensuc()
        .args(["run"])
        .arg(dir.join("workflows/outcomes.hwf"))
        .args(["-d"])
        .arg(dir)
        .args(["--server", url, "-c", &context(e.scenario)])
        .output()
        .expect("run --server");
    let what = format!("hensuc run --server ({})", e.scenario);
    assert_eq!(run.status.code(), Some(e.exit), "{what}: {}", stderr(&run));
    assert!(
        stderr(&run).contains(e.headline),
        "{what}: {}",
        stderr(&run)
    );
    let ended: Value = serde_json::from_str(&stdout(&run)).expect("json");
    assert_eq!(ended["status"], e.status, "{what}: {ended}");
    assert_eq!(ended["error"].as_str(), e.reason, "{what}: {ended}");
    ended["executionId"].as_str().expect("id").to_string()
}

/// The API: a start, then the status of the execution once it settled.
async fn api_run(http: &reqwest::Client, url: &str, e: &Expected) -> String {
    let started: Value = http
        .post(format!("{url}/api/v1/executions"))
        .json(&json!({
            "workflowId": "outcomes",
            "context": {"ticket": "T-1", "stub_scenario": e.scenario},
        }))
        .send()
        .await
        .expect("start")
        .json()
        .await
        .expect("json");
    let id = started["executionId"].as_str().expect("id").to_string();
    let status = loop {
        let status: Value = http
            .get(format!("{url}/api/v1/executions/{id}"))
            .send()
            .await
            .expect("status")
            .json()
            .await
            .expect("json");
        if status["status"] != "running" && status["status"] != "queued" {
            break status;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    let what = format!("API ({})", e.scenario);
    assert_eq!(status["status"], e.status, "{what}: {status}");
    assert_eq!(status["error"].as_str(), e.reason, "{what}: {status}");
    id
}

/// The console's page of an execution shows its status and reason.
async fn console_page(http: &reqwest::Client, url: &str, id: &str, e: &Expected) {
    let page = http
        .get(format!("{url}/console/executions/{id}"))
        .send()
        .await
        .expect("page");
    assert!(page.status().is_success(), "{}", page.status());
    let html = page.text().await.expect("html");
    let what = format!("console ({}, {id})", e.scenario);
    // The status badge of the summary.
    let badge = format!(
        "<dt>Status</dt><dd><span class=\"badge status-{0}\">{0}</span>",
        e.status
    );
    assert!(
        html.contains(&badge),
        "{what}: no status badge `{}`",
        e.status
    );
    if let Some(reason) = e.reason {
        // The page escapes the reason's quotes.
        let shown = reason.replace('"', "&quot;");
        assert!(
            html.contains(&shown) || html.contains(reason),
            "{what}: no reason in the page"
        );
    }
}

#[test]
fn one_workflow_reads_the_same_through_every_face() {
    let dir = project();
    let server: ServeProcess = spawn_serve(
        hensuc()
            .args(["serve", "--listen", "127.0.0.1:0", "--stub", "-d"])
            .arg(dir.path()),
    );
    let url = server.url.clone();
    for e in &expectations() {
        local_run(dir.path(), e);
        let by_cli = server_run(dir.path(), &url, e);
        let http = reqwest::Client::new();
        let by_api = wait(api_run(&http, &url, e));
        for id in [&by_cli, &by_api] {
            wait(console_page(&http, &url, id, e));
        }
    }
}
