//! The tenant bridge (`hensu_mcp::tenant_bridge`, `hensuc mcp connect`): the example stdio
//! server, connected as a local run connects it, offered through a real gateway on 127.0.0.1 —
//! discovery and calls as a server's run makes them, a tool's own error passed on, and the
//! connection retried until a server is there.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hensu_mcp::gateway::GatewayConfig;
use hensu_mcp::tenant_bridge::{
    BridgeError, BridgeEvent, BridgeTarget, DEFAULT_IDLE_LIMIT, serve_tenant_tools,
};
use hensu_mcp::{McpClients, ToolFailure, ToolSource};
use serde_json::json;

use crate::support::glossary_config;

type Events = Arc<Mutex<Vec<BridgeEvent>>>;

/// The bridge for `tenant` at `server` serving the example server, until the returned sender
/// is dropped; its events, and its outcome.
async fn bridge(
    server: &str,
    tenant: &str,
    dir: &std::path::Path,
    ca_file: Option<std::path::PathBuf>,
) -> (
    tokio::sync::oneshot::Sender<()>,
    Events,
    tokio::task::JoinHandle<Result<(), BridgeError>>,
) {
    bridge_with(server, tenant, dir, ca_file, DEFAULT_IDLE_LIMIT).await
}

async fn bridge_with(
    server: &str,
    tenant: &str,
    dir: &std::path::Path,
    ca_file: Option<std::path::PathBuf>,
    idle_limit: Duration,
) -> (
    tokio::sync::oneshot::Sender<()>,
    Events,
    tokio::task::JoinHandle<Result<(), BridgeError>>,
) {
    let clients = McpClients::connect(&glossary_config(""), dir)
        .await
        .expect("the example server");
    let events: Events = Arc::default();
    let sink = events.clone();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let target = BridgeTarget {
        server: server.to_string(),
        token: None,
        tenant: tenant.to_string(),
        ca_file,
        idle_limit,
    };
    let task = tokio::spawn(async move {
        serve_tenant_tools(
            Arc::new(clients),
            &target,
            Arc::new(move |e| sink.lock().expect("events").push(e)),
            async {
                let _ = stop_rx.await;
            },
        )
        .await
    });
    (stop_tx, events, task)
}

async fn until(what: &str, mut f: impl FnMut() -> bool) {
    for _ in 0..300 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

/// acme's `lookup_glossary` answers through `gateway`; then the bridge is stopped and ends well.
async fn looks_up_then_stops(
    gateway: &hensu_mcp::gateway::Gateway,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<(), BridgeError>>,
) {
    let text = gateway
        .tools_for("acme")
        .await
        .expect("tools/list")
        .call("lookup_glossary", json!({"term": "MCP"}))
        .await
        .expect("tools/call");
    assert!(text.contains("Model Context Protocol"), "{text}");
    drop(stop);
    assert_eq!(task.await.expect("the bridge task"), Ok(()));
}

#[tokio::test]
async fn the_bridge_serves_a_projects_servers_to_the_gateway() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (gateway, base) = crate::gateway::serve(GatewayConfig::default()).await;
    let (stop, events, task) = bridge(&base, "acme", dir.path(), None).await;
    until("the session", || gateway.is_connected("acme")).await;

    // Discovery: the local server's tools with their schemas, as a run of the tenant sees them.
    let tools = gateway.tools_for("acme").await.expect("tools/list");
    let listed = tools.tools();
    let names: Vec<&str> = listed.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["lookup_glossary", "word_count"]);
    assert_eq!(
        listed[0].input_schema["properties"]["term"]["type"],
        "string"
    );

    // A call reaches the stdio server and its result comes back; the structured result of
    // `word_count` is passed on unrendered and rendered by the gateway as for a local run.
    let text = tools
        .call("lookup_glossary", json!({"term": "MCP"}))
        .await
        .expect("tools/call");
    assert!(text.contains("Model Context Protocol"), "{text}");
    let counted = tools
        .call("word_count", json!({"text": "one two three"}))
        .await
        .expect("tools/call");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&counted).expect("JSON")["words"],
        3
    );
    // The tool's own error stays the tool's error.
    assert_eq!(
        tools
            .call("lookup_glossary", json!({"term": "nothing"}))
            .await,
        Err(ToolFailure::Tool(
            "no glossary entry for 'nothing'".to_string()
        ))
    );

    let seen = events.lock().expect("events").clone();
    assert_eq!(seen.first(), Some(&BridgeEvent::Connected));
    let calls: Vec<(&str, bool)> = seen
        .iter()
        .filter_map(|e| match e {
            BridgeEvent::Called { tool, error, .. } => Some((tool.as_str(), error.is_none())),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("lookup_glossary", true),
            ("word_count", true),
            ("lookup_glossary", true)
        ]
    );

    drop(stop);
    assert_eq!(task.await.expect("the bridge task"), Ok(()));
    until("the session's end", || !gateway.is_connected("acme")).await;
}

#[tokio::test]
async fn the_bridge_retries_until_the_server_is_there() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A port nobody listens on yet.
    let addr = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("test setup")
        .local_addr()
        .expect("test setup");
    let (stop, events, task) = bridge(&format!("http://{addr}"), "acme", dir.path(), None).await;
    until("a failed attempt", || {
        events
            .lock()
            .expect("test setup")
            .iter()
            .any(|e| matches!(e, BridgeEvent::Disconnected { .. }))
    })
    .await;
    let gateway = hensu_mcp::gateway::Gateway::new(GatewayConfig::default());
    let listener = tokio::net::TcpListener::bind(addr).await.expect("rebind");
    let app = hensu_mcp::gateway::router(gateway.clone());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    until("the session", || gateway.is_connected("acme")).await;
    let seen = events.lock().expect("events").clone();
    let delays: Vec<Duration> = seen
        .iter()
        .filter_map(|e| match e {
            BridgeEvent::Disconnected { retry_in, .. } => Some(*retry_in),
            _ => None,
        })
        .collect();
    assert!(
        delays.windows(2).all(|w| w[1] >= w[0]),
        "growing delays: {delays:?}"
    );
    assert_eq!(seen.last(), Some(&BridgeEvent::Connected));
    looks_up_then_stops(&gateway, stop, task).await;
}

#[tokio::test]
async fn a_server_without_the_gateway_stops_the_bridge_with_its_answer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("test setup");
    let addr = listener.local_addr().expect("test setup");
    tokio::spawn(async move {
        let _ = axum::serve(listener, axum::Router::new()).await;
    });
    let (_stop, _events, task) = bridge(&format!("http://{addr}"), "acme", dir.path(), None).await;
    let outcome = tokio::time::timeout(Duration::from_secs(20), task)
        .await
        .expect("stops")
        .expect("test setup");
    assert!(
        matches!(&outcome, Err(BridgeError::Refused { status: 404, .. })),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_tenant_id_the_gateway_would_refuse_is_refused_before_connecting() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_stop, _events, task) = bridge("http://127.0.0.1:9", "a&b", dir.path(), None).await;
    let outcome = task.await.expect("the bridge task");
    assert!(
        matches!(&outcome, Err(BridgeError::Setup(m)) if m.contains("`a&b`")),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn an_https_server_of_a_private_authority_is_trusted_through_ca_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let gateway = hensu_mcp::gateway::Gateway::new(GatewayConfig::default());
    let (base, ca) = crate::https::serve_tls(hensu_mcp::gateway::router(gateway.clone())).await;
    let ca_file = dir.path().join("ca.pem");
    std::fs::write(&ca_file, ca).expect("write");

    // Without the authority: not trusted, the reason says why, and it keeps trying.
    let (stop, events, task) = bridge(&base, "acme", dir.path(), None).await;
    until("a refused handshake", || {
        events.lock().expect("events").iter().any(|e| {
            matches!(e, BridgeEvent::Disconnected { reason, .. } if reason.contains("certificate"))
        })
    })
    .await;
    assert!(!gateway.is_connected("acme"));
    drop(stop);
    assert_eq!(task.await.expect("the bridge task"), Ok(()));

    let (stop, _events, task) = bridge(&base, "acme", dir.path(), Some(ca_file)).await;
    until("the session", || gateway.is_connected("acme")).await;
    looks_up_then_stops(&gateway, stop, task).await;
}

/// A stream the server accepted and then fell silent on (a connection that died without
/// closing) is taken as lost and opened again.
#[tokio::test]
async fn a_silent_stream_is_taken_as_lost_and_reopened() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let dir = tempfile::tempdir().expect("tempdir");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((mut socket, _)) = listener.accept().await {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut request = [0u8; 4096];
            let _ = socket.read(&mut request).await;
            let _ = socket
                .write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                      transfer-encoding: chunked\r\n\r\n",
                )
                .await;
            // Then nothing, and the connection stays open.
            open.push(socket);
        }
    });
    let (stop, events, task) = bridge_with(
        &format!("http://{addr}"),
        "acme",
        dir.path(),
        None,
        Duration::from_millis(300),
    )
    .await;
    until("a second connection", || {
        accepted.load(std::sync::atomic::Ordering::SeqCst) >= 2
    })
    .await;
    let seen = events.lock().expect("events").clone();
    assert_eq!(seen.first(), Some(&BridgeEvent::Connected), "{seen:?}");
    assert!(
        seen.iter().any(|e| matches!(
            e,
            BridgeEvent::Disconnected { reason, .. } if reason.contains("nothing heard")
        )),
        "{seen:?}"
    );
    drop(stop);
    assert_eq!(task.await.expect("the bridge task"), Ok(()));
}
