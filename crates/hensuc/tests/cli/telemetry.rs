//! Traces of runs over OTLP (docs/observability.md), against a real receiver: an axum server on
//! 127.0.0.1 that decodes `POST /v1/traces` with the official OTLP protobuf messages. Runs of
//! the examples in stub mode export their spans live (`OTEL_EXPORTER_OTLP_ENDPOINT`); the trace
//! `runs trace` rebuilds from the run log has the same spans, ids and parents.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{AnyValue, any_value};
use prost::Message;
use serde_json::Value;

use super::json_schemas::examples_copy;
use super::{hensuc, stderr, stdout};

/// One received span: ids in hex, its name, its attributes as text, and the service name of
/// its resource.
#[derive(Clone, Debug)]
pub(super) struct Received {
    pub(super) trace_id: String,
    pub(super) span_id: String,
    pub(super) parent: Option<String>,
    pub(super) name: String,
    attributes: BTreeMap<String, String>,
    service: String,
}

/// A span as the comparison sees it: (span id, parent id, name).
pub(super) type Edge = (String, Option<String>, String);

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn text(v: Option<&AnyValue>) -> String {
    match v.and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        other => format!("{other:?}"),
    }
}

/// The OTLP/HTTP receiver, on a thread of its own.
pub(super) struct Receiver {
    addr: SocketAddr,
    spans: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    pub(super) fn start() -> Receiver {
        let spans: Arc<Mutex<Vec<Received>>> = Arc::default();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let sink = spans.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let app = axum::Router::new().route(
                    "/v1/traces",
                    axum::routing::post(move |body: axum::body::Bytes| {
                        let sink = sink.clone();
                        async move {
                            let request = ExportTraceServiceRequest::decode(body).unwrap();
                            record(&sink, request);
                            ExportTraceServiceResponse::default().encode_to_vec()
                        }
                    }),
                );
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                axum::serve(listener, app).await.unwrap();
            });
        });
        Receiver { addr, spans }
    }

    pub(super) fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub(super) fn trace(&self, trace_id: &str) -> Vec<Received> {
        let mut spans: Vec<Received> = self
            .spans
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.trace_id == trace_id)
            .cloned()
            .collect();
        spans.sort_by(|a, b| a.span_id.cmp(&b.span_id));
        spans
    }
}

fn record(sink: &Mutex<Vec<Received>>, request: ExportTraceServiceRequest) {
    let mut out = sink.lock().unwrap();
    for rs in request.resource_spans {
        let service = rs
            .resource
            .as_ref()
            .and_then(|r| r.attributes.iter().find(|a| a.key == "service.name"))
            .map(|a| text(a.value.as_ref()))
            .unwrap_or_default();
        for ss in rs.scope_spans {
            for s in ss.spans {
                out.push(Received {
                    trace_id: hex(&s.trace_id),
                    span_id: hex(&s.span_id),
                    parent: (!s.parent_span_id.is_empty()).then(|| hex(&s.parent_span_id)),
                    name: s.name.clone(),
                    attributes: s
                        .attributes
                        .iter()
                        .map(|a| (a.key.clone(), text(a.value.as_ref())))
                        .collect(),
                    service: service.clone(),
                });
            }
        }
    }
}

/// `hensuc ARGS` in `project` exporting to `receiver`.
fn traced(project: &Path, receiver: &Receiver, args: &[&str]) -> std::process::Output {
    hensuc()
        .current_dir(project)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("OTEL_SERVICE_NAME", "hensu-test")
        .args(args)
        .output()
        .unwrap()
}

fn last_run_id(project: &Path) -> String {
    let out = hensuc()
        .current_dir(project)
        .args(["runs", "-d", ".", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    v["runs"][0]["run_id"].as_str().unwrap().to_string()
}

/// The trace `runs trace ID --format json` rebuilds: (span id, parent, name) sorted by id.
fn rebuilt(project: &Path, id: &str) -> (String, Vec<Edge>) {
    rebuilt_in(project, id)
}

/// [`rebuilt`] of the store of project directory `dir`.
pub(super) fn rebuilt_in(dir: &Path, id: &str) -> (String, Vec<Edge>) {
    let out = hensuc()
        .args(["runs", "-d"])
        .arg(dir)
        .args(["trace", id, "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let mut spans: Vec<Edge> = v["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["span_id"].as_str().unwrap().to_string(),
                s["parent_span_id"].as_str().map(str::to_string),
                s["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    spans.sort();
    (v["trace_id"].as_str().unwrap().to_string(), spans)
}

pub(super) fn tree(spans: &[Received]) -> Vec<Edge> {
    spans
        .iter()
        .map(|s| (s.span_id.clone(), s.parent.clone(), s.name.clone()))
        .collect()
}

/// Runs `workflow` and returns its id, the live spans and the rebuilt tree.
fn run_and_compare(
    project: &Path,
    receiver: &Receiver,
    workflow: &str,
    context: &str,
    scenario: &str,
) -> (String, Vec<Received>, Vec<Edge>) {
    let file = format!("workflows/{workflow}.hwf");
    let out = traced(
        project,
        receiver,
        &[
            "run",
            &file,
            "-d",
            ".",
            "--stub",
            "-q",
            "--scenario",
            scenario,
            "-c",
            context,
        ],
    );
    assert!(
        matches!(out.status.code(), Some(0 | 1 | 3)),
        "{workflow}: {}",
        stderr(&out)
    );
    let id = last_run_id(project);
    let (trace_id, rebuilt) = rebuilt(project, &id);
    (id, receiver.trace(&trace_id), rebuilt)
}

fn find<'a>(spans: &'a [Received], name: &str) -> &'a Received {
    spans
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no span `{name}` in {:#?}", tree(spans)))
}

#[test]
fn live_export_and_runs_trace_agree_on_standard_parallel_and_saga_runs() {
    let receiver = Receiver::start();
    let tmp = tempfile::tempdir().unwrap();
    let project = examples_copy(tmp.path());

    // A standard node with a stub model, then a parallel vote of three branches.
    let (_, live, rebuilt) = run_and_compare(
        &project,
        &receiver,
        "consensus-vote",
        r#"{"topic": "traces"}"#,
        "default",
    );
    assert_eq!(tree(&live), rebuilt, "live export and runs trace differ");
    let root = find(&live, "invoke_workflow consensus-vote");
    assert_eq!(root.parent, None);
    assert_eq!(root.service, "hensu-test");
    assert_eq!(root.attributes["gen_ai.operation.name"], "invoke_workflow");
    assert_eq!(root.attributes["hensu.workflow.id"], "consensus-vote");
    // `writer` drafts (step 1) and publishes (step 3).
    let writer = live
        .iter()
        .find(|s| s.name == "invoke_agent writer" && s.attributes["hensu.node.id"] == "draft")
        .unwrap();
    assert_eq!(writer.parent.as_deref(), Some(root.span_id.as_str()));
    assert_eq!(writer.attributes["gen_ai.operation.name"], "invoke_agent");
    assert_eq!(writer.attributes["hensu.step"], "1");
    let chat = live
        .iter()
        .find(|s| {
            s.name == "chat claude-sonnet-4-6" && s.parent.as_deref() == Some(&writer.span_id)
        })
        .unwrap();
    assert_eq!(chat.attributes["gen_ai.operation.name"], "chat");
    assert_eq!(chat.attributes["gen_ai.request.model"], "claude-sonnet-4-6");
    assert_eq!(chat.attributes["gen_ai.provider.name"], "anthropic");
    let vote = find(&live, "parallel vote");
    let branches: Vec<&str> = live
        .iter()
        .filter(|s| s.parent.as_deref() == Some(vote.span_id.as_str()))
        .map(|s| s.attributes["hensu.branch.id"].as_str())
        .collect();
    assert_eq!(branches.len(), 3, "{:#?}", tree(&live));

    // A declined saga: two compensations, newest visit first.
    let (_, live, rebuilt) = run_and_compare(
        &project,
        &receiver,
        "trip-booking",
        r#"{"trip": "Lisbon to Tokyo"}"#,
        "declined",
    );
    assert_eq!(tree(&live), rebuilt, "live export and runs trace differ");
    let hotel = find(&live, "compensate book-hotel");
    assert_eq!(hotel.attributes["hensu.compensation.id"], "cancel-hotel");
    assert!(
        live.iter()
            .any(|s| s.parent.as_deref() == Some(hotel.span_id.as_str()) && s.name == "chat gpt-4o")
    );
    let flight = find(&live, "compensate book-flight");
    assert!(live.iter().any(|s| {
        s.parent.as_deref() == Some(flight.span_id.as_str()) && s.name == "execute_tool send:log"
    }));
}

#[test]
fn a_review_pause_and_resume_is_one_trace() {
    let receiver = Receiver::start();
    let tmp = tempfile::tempdir().unwrap();
    let project = examples_copy(tmp.path());
    let (id, before, _) = run_and_compare(
        &project,
        &receiver,
        "human-review",
        r#"{"goal": "traces"}"#,
        "default",
    );
    // Paused: the agent call is exported; the visit and the run end later.
    assert!(
        before
            .iter()
            .all(|s| s.name != "invoke_workflow human-review")
    );
    let out = traced(
        &project,
        &receiver,
        &["resume", &id, "-d", ".", "--approve", "-q"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let (trace_id, rebuilt) = rebuilt(&project, &id);
    let live = receiver.trace(&trace_id);
    // The review wait is in the log only (the live side sees no event for it).
    let review: Vec<_> = rebuilt.iter().filter(|s| s.2 == "review plan").collect();
    assert_eq!(review.len(), 1, "{rebuilt:#?}");
    let planner = find(&live, "invoke_agent planner");
    assert_eq!(review[0].1.as_deref(), Some(planner.span_id.as_str()));
    let without_review: Vec<_> = rebuilt
        .iter()
        .filter(|s| s.2 != "review plan")
        .cloned()
        .collect();
    assert_eq!(tree(&live), without_review);
}

#[test]
fn runs_trace_exports_the_rebuilt_trace_over_otlp() {
    let receiver = Receiver::start();
    let tmp = tempfile::tempdir().unwrap();
    let project = examples_copy(tmp.path());
    // Recorded without live export, exported afterwards.
    let out = hensuc()
        .current_dir(&project)
        .args(["run", "greeting", "-d", ".", "--stub", "-q"])
        .args(["-c", r#"{"name": "Ada"}"#])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let id = last_run_id(&project);
    let (trace_id, rebuilt) = rebuilt(&project, &id);
    assert!(receiver.trace(&trace_id).is_empty());
    let out = hensuc()
        .current_dir(&project)
        .args(["runs", "-d", ".", "trace", &id, "--otlp"])
        .arg(receiver.endpoint())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(tree(&receiver.trace(&trace_id)), rebuilt);
}

/// A run of `hensuc serve` is traced live like a local one (the same run recipe), with its
/// tenant, and `runs trace` over the server's store agrees.
#[test]
fn a_server_run_exports_its_trace_with_its_tenant() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("workflows")).unwrap();
    std::fs::write(
        dir.path().join("workflows/linear.hwf"),
        r#"fun linear() = workflow("Linear") {
    agents {
        agent("writer") { role = "Writer"; model = "stub" }
    }
    graph {
        start at "draft"
        node("draft") {
            agent = "writer"
            prompt = "Write about {topic}."
            onSuccess goto "done"
        }
        end("done")
    }
}
"#,
    )
    .unwrap();
    let server = super::serve::spawn_serve(
        hensuc()
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
            .args(["serve", "--listen", "127.0.0.1:0", "--stub", "-d"])
            .arg(dir.path()),
    );
    let run = hensuc()
        .args(["run"])
        .arg(dir.path().join("workflows/linear.hwf"))
        .args(["-d"])
        .arg(dir.path())
        .args(["--server", &server.url, "-c", r#"{"topic": "traces"}"#])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    let ended: Value = serde_json::from_str(&stdout(&run)).unwrap();
    let id = ended["executionId"].as_str().unwrap().to_string();
    let out = hensuc()
        .args(["runs", "-d"])
        .arg(dir.path())
        .args(["trace", &id, "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let trace_id = v["trace_id"].as_str().unwrap().to_string();
    let mut expected: Vec<Edge> = v["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["span_id"].as_str().unwrap().to_string(),
                s["parent_span_id"].as_str().map(str::to_string),
                s["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    expected.sort();
    // The server's batch processor sends on its schedule (every second): wait for the root.
    let mut live = Vec::new();
    for _ in 0..200 {
        live = receiver.trace(&trace_id);
        if live.len() >= expected.len() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(tree(&live), expected);
    let root = find(&live, "invoke_workflow linear");
    assert!(root.attributes.contains_key("hensu.tenant.id"), "{root:?}");
    assert_eq!(
        v["spans"][0]["attributes"]["hensu.tenant.id"].as_str(),
        Some(root.attributes["hensu.tenant.id"].as_str())
    );
}

/// `POST /api/v1/executions` with a W3C `traceparent`: the run's trace is the caller's (its
/// trace id, the root's parent), live and rebuilt alike.
#[test]
fn a_traceparent_makes_the_run_part_of_the_callers_trace() {
    use std::io::{Read, Write};
    const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
    const PARENT: &str = "00f067aa0ba902b7";
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("workflows")).unwrap();
    std::fs::copy(
        super::repo().join("examples/workflows/greeting.hwf"),
        dir.path().join("workflows/greeting.hwf"),
    )
    .unwrap();
    let server = super::serve::spawn_serve(
        hensuc()
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
            .args(["serve", "--listen", "127.0.0.1:0", "--stub", "-d"])
            .arg(dir.path()),
    );
    let push = hensuc()
        .arg("push")
        .arg(dir.path())
        .args(["--server", &server.url])
        .output()
        .unwrap();
    assert!(push.status.success(), "{}", stderr(&push));
    let host = server
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/');
    let body = r#"{"workflowId": "greeting", "context": {"name": "Ada"}}"#;
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    write!(
        stream,
        "POST /api/v1/executions HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         traceparent: 00-{TRACE}-{PARENT}-01\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 202"), "{response}");
    let json = response.split("\r\n\r\n").nth(1).unwrap();
    let started: Value = serde_json::from_str(json).unwrap();
    let id = started["executionId"].as_str().unwrap().to_string();
    // The root span comes when the run ends, on the batch processor's schedule.
    let mut live = Vec::new();
    for _ in 0..200 {
        live = receiver.trace(TRACE);
        if live.iter().any(|s| s.name == "invoke_workflow greeting") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let root = find(&live, "invoke_workflow greeting");
    assert_eq!(root.parent.as_deref(), Some(PARENT));
    let (trace_id, rebuilt) = rebuilt_in(dir.path(), &id);
    assert_eq!(trace_id, TRACE);
    assert_eq!(tree(&live), rebuilt);
}

/// A queued run executed by a worker (`run --detach` starts a local one): the worker exports
/// the live trace with the run's stored start, and the rebuilt trace records the claim.
#[test]
fn a_run_claimed_by_a_worker_is_one_trace() {
    let receiver = Receiver::start();
    let tmp = tempfile::tempdir().unwrap();
    let project = examples_copy(tmp.path());
    let out = traced(
        &project,
        &receiver,
        &[
            "run",
            "greeting",
            "-d",
            ".",
            "--stub",
            "--detach",
            "-c",
            r#"{"name": "Ada"}"#,
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let id = last_run_id(&project);
    let trace_id = ids_hex_trace(&id);
    let mut live = Vec::new();
    for _ in 0..400 {
        live = receiver.trace(&trace_id);
        if live.iter().any(|s| s.name == "invoke_workflow greeting") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let (rebuilt_id, rebuilt) = rebuilt(&project, &id);
    assert_eq!(rebuilt_id, trace_id);
    assert_eq!(tree(&live), rebuilt);
    assert_eq!(
        find(&live, "invoke_agent greeter").attributes["hensu.step"],
        "1"
    );
    let out = hensuc()
        .current_dir(&project)
        .args(["runs", "-d", ".", "trace", &id, "--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let events = v["spans"][0]["events"].as_array().unwrap();
    assert!(events.iter().any(|e| e["name"] == "hensu.claimed"), "{v:#}");
}

/// The trace id `runs trace` gives a run without a `traceparent`.
pub(super) fn ids_hex_trace(run_id: &str) -> String {
    hensu_telemetry::ids::hex(&hensu_telemetry::ids::trace_id(run_id))
}

/// `[telemetry]` of hensu.toml turns the export on without any `OTEL_*` variable, and
/// `OTEL_TRACES_EXPORTER=none` turns it off again; `runs trace` prints a tree for people.
#[test]
fn the_telemetry_section_of_hensu_toml_turns_export_on() {
    let receiver = Receiver::start();
    let tmp = tempfile::tempdir().unwrap();
    let project = examples_copy(tmp.path());
    let toml = project.join("hensu.toml");
    let mut text = std::fs::read_to_string(&toml).unwrap();
    text.push_str(&format!(
        "\n[telemetry]\nendpoint = \"{}\"\nservice_name = \"from-toml\"\n",
        receiver.endpoint()
    ));
    std::fs::write(&toml, text).unwrap();
    let greet = |off: bool| {
        let mut cmd = hensuc();
        cmd.current_dir(&project)
            .args(["run", "greeting", "-d", ".", "--stub", "-q"])
            .args(["-c", r#"{"name": "Ada"}"#]);
        if off {
            cmd.env("OTEL_TRACES_EXPORTER", "none");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        last_run_id(&project)
    };
    let on = greet(false);
    let live = receiver.trace(&ids_hex_trace(&on));
    assert_eq!(find(&live, "invoke_workflow greeting").service, "from-toml");
    let off = greet(true);
    assert!(receiver.trace(&ids_hex_trace(&off)).is_empty());
    let human = hensuc()
        .current_dir(&project)
        .args(["runs", "-d", ".", "trace", &off])
        .output()
        .unwrap();
    let text = stdout(&human);
    assert!(text.contains("invoke_workflow greeting"), "{text}");
    assert!(text.contains("    invoke_agent greeter"), "{text}");
}

/// Requests seen by [`recording_server`]: (path, `traceparent` header).
type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// An HTTP server on 127.0.0.1 recording the path and `traceparent` of every request: an
/// OpenAI-compatible chat completion on `/v1/chat/completions`, `{"ok": true}` elsewhere.
fn recording_server() -> (SocketAddr, Seen) {
    let seen: Seen = Arc::default();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let sink = seen.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let app = axum::Router::new().fallback(move |req: axum::extract::Request| {
                let sink = sink.clone();
                async move {
                    let path = req.uri().path().to_string();
                    let tp = req
                        .headers()
                        .get("traceparent")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_string);
                    sink.lock().unwrap().push((path.clone(), tp));
                    let body = if path.ends_with("/chat/completions") {
                        serde_json::json!({
                            "id": "c1", "object": "chat.completion", "model": "mock-model",
                            "choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": "a draft"}}],
                            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
                        })
                    } else {
                        serde_json::json!({"ok": true})
                    };
                    axum::Json(body)
                }
            });
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    (addr, seen)
}

/// A run's provider request, `api-caller` request and webhook carry the W3C `traceparent` of
/// the visit that makes them: the run's trace id and the span id of that visit's span (as the
/// OTLP export and `runs trace` give it).
#[test]
fn outgoing_requests_carry_the_traceparent_of_their_visit() {
    let receiver = Receiver::start();
    let (addr, seen) = recording_server();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::write(
        dir.join("hensu.toml"),
        format!(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"http://{addr}/v1\"\napi_key_env = \"LOCAL_API_KEY\"\nmodels = [\"mock-*\"]\n\n[network]\nallow_hosts = [\"127.0.0.1\"]\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("workflows/calls.hwf"),
        format!(
            r#"fun calls() = workflow("calls") {{
    version = "1.0.0"
    agents {{
        agent("writer") {{ role = "Writer"; model = "mock-model" }}
    }}
    graph {{
        start at "write"
        node("write") {{
            agent = "writer"
            prompt = "Write."
            onSuccess goto "call"
        }}
        generic("call") {{
            executorType = "api-caller"
            config {{
                "endpoint" to "http://{addr}/api"
                "method" to "POST"
            }}
            onSuccess goto "notify"
        }}
        action("notify") {{
            send("webhook", mapOf("url" to "http://{addr}/hook", "text" to "hi"))
            onSuccess goto "done"
        }}
        end("done")
    }}
}}
"#
        ),
    )
    .unwrap();
    let out = hensuc()
        .current_dir(dir)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("LOCAL_API_KEY", "sk-local-test")
        .args(["run", "workflows/calls.hwf", "-d", ".", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let id = last_run_id(dir);
    let (trace_id, spans) = rebuilt(dir, &id);
    let span = |name: &str| {
        spans
            .iter()
            .find(|s| s.2 == name)
            .unwrap_or_else(|| panic!("no span `{name}` in {spans:#?}"))
            .0
            .clone()
    };
    let seen = seen.lock().unwrap().clone();
    let header = |path: &str| {
        seen.iter()
            .find(|(p, _)| p == path)
            .unwrap_or_else(|| panic!("no request to {path}: {seen:?}"))
            .1
            .clone()
    };
    let expected = |name: &str| Some(format!("00-{trace_id}-{}-01", span(name)));
    assert_eq!(
        header("/v1/chat/completions"),
        expected("invoke_agent writer")
    );
    assert_eq!(header("/api"), expected("generic call"));
    assert_eq!(header("/hook"), expected("action notify"));
    // The live export has those spans under the same ids.
    let live = receiver.trace(&trace_id);
    assert!(
        live.iter().any(|s| s.span_id == span("generic call")),
        "{:#?}",
        tree(&live)
    );
}
