//! Traces over OTLP/gRPC (`OTEL_EXPORTER_OTLP_PROTOCOL=grpc`, docs/observability.md): a
//! receiver on 127.0.0.1 built on tonic's server and the trace service the official
//! `opentelemetry-proto` definitions generate gets the same spans, ids and parents as
//! `runs trace` rebuilds from the run log.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};

use super::json_schemas::examples_copy;
use super::telemetry::{Received, last_run_id, rebuilt_in, record, tree};
use super::{hensuc, stderr};

struct Sink(Arc<Mutex<Vec<Received>>>);

#[tonic::async_trait]
impl TraceService for Sink {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        record(&self.0, request.into_inner());
        Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
    }
}

/// A gRPC receiver on a thread of its own: its address and what it received.
fn grpc_receiver() -> (SocketAddr, Arc<Mutex<Vec<Received>>>) {
    let spans: Arc<Mutex<Vec<Received>>> = Arc::default();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let sink = Sink(spans.clone());
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            tonic::transport::Server::builder()
                .add_service(TraceServiceServer::new(sink))
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener))
                .await
                .unwrap();
        });
    });
    (addr, spans)
}

#[test]
fn a_run_exports_its_trace_over_grpc() {
    let (addr, spans) = grpc_receiver();
    let tmp = tempfile::tempdir().unwrap();
    let project = examples_copy(tmp.path());
    let out = hensuc()
        .current_dir(&project)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{addr}"))
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .env("OTEL_SERVICE_NAME", "hensu-grpc")
        .args(["run", "workflows/greeting.hwf", "-d", ".", "--stub", "-q"])
        .args(["-c", r#"{"name": "Ada"}"#])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let id = last_run_id(&project);
    let (trace_id, rebuilt) = rebuilt_in(&project, &id);
    // `hensuc run` flushes the exporter before it exits: everything has arrived.
    let mut live: Vec<Received> = spans
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.trace_id == trace_id)
        .cloned()
        .collect();
    live.sort_by(|a, b| a.span_id.cmp(&b.span_id));
    assert!(!live.is_empty(), "no span arrived over gRPC");
    assert_eq!(tree(&live), rebuilt);
    assert!(live.iter().all(|s| s.service == "hensu-grpc"), "{live:#?}");
    assert!(
        live.iter().any(|s| s.name == "invoke_workflow greeting"),
        "{live:#?}"
    );
}

/// A run of `hensuc serve` exports over gRPC too: the server builds the exporter (and its
/// runtime) inside its own async runtime.
#[test]
fn a_server_run_exports_its_trace_over_grpc() {
    let (addr, spans) = grpc_receiver();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("workflows")).unwrap();
    std::fs::copy(
        super::repo().join("examples/workflows/greeting.hwf"),
        dir.path().join("workflows/greeting.hwf"),
    )
    .unwrap();
    let server = super::serve::spawn_serve(
        hensuc()
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{addr}"))
            .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
            .args(["serve", "--listen", "127.0.0.1:0", "--stub", "-d"])
            .arg(dir.path()),
    );
    let run = hensuc()
        .args(["run"])
        .arg(dir.path().join("workflows/greeting.hwf"))
        .args(["-d"])
        .arg(dir.path())
        .args(["--server", &server.url, "-c", r#"{"name": "Ada"}"#])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    let ended: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    let id = ended["executionId"].as_str().unwrap().to_string();
    let (trace_id, rebuilt) = rebuilt_in(dir.path(), &id);
    // The server's batch processor sends on its schedule (every second).
    let mut live = Vec::new();
    for _ in 0..200 {
        live = spans
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.trace_id == trace_id)
            .cloned()
            .collect::<Vec<_>>();
        if live.len() >= rebuilt.len() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    live.sort_by(|a, b| a.span_id.cmp(&b.span_id));
    assert_eq!(tree(&live), rebuilt);
}
