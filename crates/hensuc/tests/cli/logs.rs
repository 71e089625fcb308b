//! The logs of `hensuc serve` and `hensuc worker` with `--log-format json`
//! (docs/observability.md, *Logs*): every stderr line is a JSON object, and the lines about a
//! run carry its id and the trace id and root span id of the trace `runs trace` rebuilds — also
//! for a run taken over after its worker was SIGKILLed mid-node, whose rebuilt trace is whole.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::telemetry::{Receiver, ids_hex_trace, rebuilt_in, tree};
use super::{hensuc, stderr, stdout};

/// A child whose stderr lines are collected as they come; killed when dropped.
struct Logged {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Drop for Logged {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Logged {
    fn spawn(cmd: &mut std::process::Command) -> Logged {
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = lines.clone();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        Logged { child, lines }
    }

    /// Every line so far, each parsed (a line that is not a JSON object fails the test).
    fn json(&self) -> Vec<Value> {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
                assert!(v.is_object(), "{l}");
                v
            })
            .collect()
    }

    /// Waits (bounded) for a line `matches` accepts.
    fn wait_for(&self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            if let Some(v) = self.json().into_iter().find(|v| matches(v)) {
                return v;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "no line {what} in {:#?}",
                self.lines.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn message(v: &Value) -> &str {
    v["message"].as_str().unwrap_or_default()
}

/// The root span id of `runs trace` of run `id` in the store of `dir`.
fn root_span(dir: &Path, id: &str) -> String {
    let out = hensuc()
        .args(["runs", "-d"])
        .arg(dir)
        .args(["trace", id, "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    v["spans"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| {
            s["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("invoke_workflow "))
        })
        .and_then(|s| s["span_id"].as_str())
        .unwrap()
        .to_string()
}

/// A server run started under a caller's `traceparent`: its start and end lines carry the
/// run id, the tenant, the caller's trace id and the run's root span id.
#[test]
fn serve_logs_json_lines_with_the_runs_trace_ids() {
    const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("workflows")).unwrap();
    std::fs::copy(
        super::repo().join("examples/workflows/greeting.hwf"),
        dir.path().join("workflows/greeting.hwf"),
    )
    .unwrap();
    let server = Logged::spawn(
        hensuc()
            .env_remove("RUST_LOG")
            .args(["serve", "--listen", "127.0.0.1:0", "--stub"])
            .args(["--log-format", "json", "-d"])
            .arg(dir.path()),
    );
    let listening = server.wait_for("listening", |v| message(v).contains("listening on"));
    let addr = listening["addr"].as_str().unwrap().to_string();
    let push = hensuc()
        .arg("push")
        .arg(dir.path())
        .args(["--server", &format!("http://{addr}")])
        .output()
        .unwrap();
    assert!(push.status.success(), "{}", stderr(&push));
    let body = r#"{"workflowId": "greeting", "context": {"name": "Ada"}}"#;
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    write!(
        stream,
        "POST /api/v1/executions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         traceparent: 00-{TRACE}-00f067aa0ba902b7-01\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 202"), "{response}");
    let started: Value = serde_json::from_str(response.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    let id = started["executionId"].as_str().unwrap().to_string();
    let stopped = server.wait_for("execution stopped", |v| {
        v["run_id"] == id.as_str() && message(v) == "execution stopped"
    });
    assert_eq!(stopped["status"], "completed", "{stopped}");
    let about_run: Vec<Value> = server
        .json()
        .into_iter()
        .filter(|v| v["run_id"] == id.as_str())
        .collect();
    assert!(
        about_run.iter().any(|v| message(v) == "execution started"),
        "{about_run:#?}"
    );
    let root = root_span(dir.path(), &id);
    for line in &about_run {
        assert_eq!(line["trace_id"], TRACE, "{line}");
        assert_eq!(line["span_id"], root.as_str(), "{line}");
        assert!(line["tenant"].is_string(), "{line}");
        assert_eq!(line["level"], "INFO", "{line}");
        assert!(line["timestamp"].is_string(), "{line}");
    }
}

const CHAIN: &str = r#"fun chain() = workflow("chain") {
    agents {
        agent("a") { role = "Worker"; model = Models.GPT_4O }
    }
    graph {
        start at "n0"
        node("n0") {
            agent = "a"
            prompt = "one"
            onSuccess goto "n1"
        }
        node("n1") {
            agent = "a"
            prompt = "two"
            onSuccess goto "n2"
        }
        node("n2") {
            agent = "a"
            prompt = "three"
            onSuccess goto "n3"
        }
        node("n3") {
            agent = "a"
            prompt = "four"
            onSuccess goto "done"
        }
        end("done")
    }
}
"#;

fn db(dir: &Path) -> String {
    dir.join(".hensu/state.db").display().to_string()
}

fn worker(dir: &Path, receiver: &Receiver) -> Logged {
    let mut cmd = hensuc();
    cmd.env_remove("RUST_LOG")
        .env("HENSU_DATABASE_URL", db(dir))
        .env("HENSU_STUB_DELAY_MS", "300")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .args(["worker", "--lease-ttl", "1s", "--heartbeat", "200ms"])
        .args(["--poll", "100ms", "--log-format", "json", "-d"])
        .arg(dir);
    Logged::spawn(&mut cmd)
}

/// A queued run whose worker is SIGKILLed inside a node and which another worker takes over:
/// `runs trace` rebuilds one whole trace (every visit once, under one root), the spans both
/// workers exported live are spans of that trace with the same ids and parents, and the
/// second worker's log lines about the run carry the trace's ids.
#[test]
fn a_run_taken_over_after_a_sigkill_is_one_whole_trace() {
    let receiver = Receiver::start();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("chain.hwf"), CHAIN).unwrap();
    // A configured store: `run --detach` only queues (no local worker of its own).
    let queued = hensuc()
        .env("HENSU_DATABASE_URL", db(dir))
        .args(["run", "chain.hwf", "--stub", "--detach", "-d", "."])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(queued.status.success(), "{}", stderr(&queued));
    let mut first = worker(dir, &receiver);
    let claimed = first.wait_for("claimed", |v| message(v).contains("claimed run"));
    let id = claimed["run_id"].as_str().unwrap().to_string();
    // Killed inside a node after some steps were recorded.
    let store = hensu_store::SqliteStore::open(dir).unwrap();
    let start = Instant::now();
    while crate::wait(hensu_store::StateStore::record(&store, &id))
        .unwrap()
        .step
        < 3
    {
        assert!(start.elapsed() < Duration::from_secs(60), "no progress");
        std::thread::sleep(Duration::from_millis(20));
    }
    first.child.kill().unwrap(); // SIGKILL
    first.child.wait().unwrap();
    // The second worker takes the run over once its lease (1 s) expired.
    let second = worker(dir, &receiver);
    second.wait_for("the run's end", |v| {
        v["run_id"] == id.as_str() && message(v) == format!("worker: run {id} stopped")
    });
    let record = crate::wait(hensu_store::StateStore::record(&store, &id)).unwrap();
    assert_eq!(record.status, hensu_store::RunStatus::Completed);

    let trace_id = ids_hex_trace(&id);
    let (rebuilt_id, rebuilt) = rebuilt_in(dir, &id);
    assert_eq!(rebuilt_id, trace_id);
    let root = rebuilt
        .iter()
        .find(|(_, parent, _)| parent.is_none())
        .unwrap();
    assert_eq!(root.2, "invoke_workflow chain");
    // One visit span per node (each named after agent `a`), all under the root.
    let visits = rebuilt
        .iter()
        .filter(|(_, parent, name)| parent.as_ref() == Some(&root.0) && name == "invoke_agent a")
        .count();
    assert_eq!(visits, 4, "{rebuilt:#?}");
    // The second worker exports the root when the run ends; what either worker exported
    // is part of the rebuilt trace.
    let mut live = Vec::new();
    for _ in 0..200 {
        live = receiver.trace(&trace_id);
        if live.iter().any(|s| s.parent.is_none()) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(live.iter().any(|s| s.parent.is_none()), "{live:#?}");
    for edge in tree(&live) {
        assert!(rebuilt.contains(&edge), "{edge:?} not in {rebuilt:#?}");
    }
    let taken = second
        .json()
        .into_iter()
        .find(|v| v["run_id"] == id.as_str() && message(v).contains("taken over"))
        .unwrap_or_else(|| panic!("{:#?}", second.lines.lock().unwrap()));
    assert_eq!(taken["trace_id"], trace_id.as_str());
    assert_eq!(taken["span_id"], root.0.as_str());
    assert_eq!(taken["level"], "WARN");
}
