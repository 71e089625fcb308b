//! The server-mode gateway with a test client speaking its SSE + POST protocol.

use std::time::Duration;

use futures::StreamExt;
use hensu_mcp::ToolSource;
use hensu_mcp::gateway::{Gateway, GatewayConfig, router};
use serde_json::{Value, json};

/// Serves the gateway on a loopback port.
pub(crate) async fn serve(config: GatewayConfig) -> (Gateway, String) {
    let gateway = Gateway::new(config);
    let app = router(gateway.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (gateway, format!("http://{addr}"))
}

/// A tenant's client: the SSE stream, read line by line.
struct TestClient {
    lines: std::pin::Pin<Box<dyn futures::Stream<Item = String> + Send>>,
    base: String,
    http: reqwest::Client,
}

impl TestClient {
    async fn connect(base: &str, client_id: &str) -> TestClient {
        let http = reqwest::Client::new();
        let response = http
            .get(format!("{base}/mcp/connect?clientId={client_id}"))
            .send()
            .await
            .expect("connect");
        assert_eq!(response.status(), 200);
        let mut buffer = String::new();
        let lines = response
            .bytes_stream()
            .map(move |chunk| {
                buffer.push_str(&String::from_utf8_lossy(&chunk.unwrap_or_default()));
                let mut out = Vec::new();
                while let Some(i) = buffer.find('\n') {
                    out.push(buffer[..i].to_string());
                    buffer.drain(..=i);
                }
                futures::stream::iter(out)
            })
            .flatten();
        TestClient {
            lines: Box::pin(lines),
            base: base.to_string(),
            http,
        }
    }

    /// The next `data:` message (skipping keep-alive comments and blank lines).
    async fn next_message(&mut self) -> Value {
        loop {
            let line = self.lines.next().await.expect("stream open");
            if let Some(data) = line.strip_prefix("data:") {
                return serde_json::from_str(data.trim()).expect("json message");
            }
        }
    }

    /// Waits for a keep-alive comment line.
    async fn next_comment(&mut self) -> String {
        loop {
            let line = self.lines.next().await.expect("stream open");
            if line.starts_with(':') {
                return line;
            }
        }
    }

    async fn post(&self, body: &str) -> reqwest::StatusCode {
        self.http
            .post(format!("{}/mcp/message", self.base))
            .body(body.to_string())
            .send()
            .await
            .expect("post")
            .status()
    }

    /// Answers the next request with `result`; returns the request.
    async fn answer(&mut self, result: Value) -> Value {
        let request = self.next_message().await;
        let status = self
            .post(&json!({"jsonrpc": "2.0", "id": request["id"], "result": result}).to_string())
            .await;
        assert_eq!(status, 204);
        request
    }
}

async fn status(base: &str, path: &str) -> Value {
    reqwest::get(format!("{base}{path}"))
        .await
        .expect("get")
        .json()
        .await
        .expect("json")
}

#[tokio::test]
async fn tools_list_and_call_through_the_tenant_client() {
    let (gateway, base) = serve(GatewayConfig::default()).await;
    let mut client = TestClient::connect(&base, "acme").await;
    assert_eq!(
        client.next_message().await,
        json!({"jsonrpc": "2.0", "method": "ping", "params": {"server": "hensu"}})
    );
    assert_eq!(
        status(&base, "/mcp/status").await,
        json!({"connectedClients": 1, "pendingRequests": 0})
    );
    let acme = status(&base, "/mcp/clients/acme/status").await;
    assert_eq!(acme["connected"], true);
    assert!(acme["connectedDurationMs"].is_u64());
    assert_eq!(
        status(&base, "/mcp/clients/other/status").await,
        json!({"clientId": "other", "connected": false})
    );

    let discovery = tokio::spawn({
        let gateway = gateway.clone();
        async move { gateway.tools_for("acme").await }
    });
    let request = client
        .answer(
            json!({"tools": [{"name": "search", "description": "Searches.",
            "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}}]}),
        )
        .await;
    assert_eq!(request["method"], "tools/list");
    let tools = discovery.await.expect("join").expect("tools");
    assert_eq!(tools.tools()[0].name, "search");

    let call = tokio::spawn({
        let tools = tools.clone();
        async move { tools.call("search", json!({"q": "rust"})).await }
    });
    let request = client
        .answer(json!({"content": [{"type": "text", "text": "found it"}]}))
        .await;
    assert_eq!(request["method"], "tools/call");
    assert_eq!(
        request["params"],
        json!({"name": "search", "arguments": {"q": "rust"}})
    );
    assert_eq!(call.await.expect("join"), Ok("found it".to_string()));

    // A JSON-RPC error becomes the call's failure.
    let call = tokio::spawn({
        let tools = tools.clone();
        async move { tools.call("search", json!({})).await }
    });
    let request = client.next_message().await;
    client
        .post(
            &json!({"jsonrpc": "2.0", "id": request["id"],
                "error": {"code": -32000, "message": "backend down"}})
            .to_string(),
        )
        .await;
    assert_eq!(
        call.await.expect("join").expect_err("error").to_string(),
        "the tool reported an error: JSON-RPC error -32000: backend down"
    );
    // Unknown ids are ignored; bad bodies are refused.
    assert_eq!(
        client
            .post(r#"{"jsonrpc":"2.0","id":"nope","result":{}}"#)
            .await,
        204
    );
    assert_eq!(client.post("   ").await, 400);
    assert_eq!(client.post("{\"a\":\"\u{1}\"}").await, 400);
}

#[tokio::test]
async fn a_disconnect_fails_pending_requests_at_once() {
    // The request timeout is an hour: only the disconnect can end the wait.
    let (gateway, base) = serve(GatewayConfig {
        request_timeout: Duration::from_secs(3600),
        ..GatewayConfig::default()
    })
    .await;
    let mut client = TestClient::connect(&base, "acme").await;
    client.next_message().await;
    let pending = tokio::spawn({
        let gateway = gateway.clone();
        async move { gateway.request("acme", "tools/list", json!({})).await }
    });
    let request = client.next_message().await;
    assert_eq!(request["method"], "tools/list");
    assert_eq!(gateway.counts(), (1, 1));
    drop(client);
    assert_eq!(
        pending.await.expect("join"),
        Err("Client disconnected: acme".to_string())
    );
    assert_eq!(gateway.counts(), (0, 0));
    assert_eq!(
        gateway.request("acme", "tools/list", json!({})).await,
        Err("Client not connected: acme".to_string())
    );
}

#[tokio::test]
async fn a_replaced_session_survives_the_old_streams_cleanup() {
    let (gateway, base) = serve(GatewayConfig::default()).await;
    let mut old = TestClient::connect(&base, "acme").await;
    old.next_message().await;
    let mut new = TestClient::connect(&base, "acme").await;
    new.next_message().await;
    // The old stream ends (the server closed it on replacement; the client drops it too).
    drop(old);
    let request = tokio::spawn({
        let gateway = gateway.clone();
        async move { gateway.request("acme", "tools/list", json!({})).await }
    });
    new.answer(json!({"tools": []})).await;
    assert_eq!(request.await.expect("join"), Ok(json!({"tools": []})));
    assert!(gateway.is_connected("acme"));
    assert_eq!(gateway.counts(), (1, 0));
}

#[tokio::test]
async fn the_stream_sends_keep_alives() {
    let (_gateway, base) = serve(GatewayConfig {
        keep_alive: Duration::from_millis(20),
        ..GatewayConfig::default()
    })
    .await;
    let mut client = TestClient::connect(&base, "acme").await;
    client.next_message().await;
    assert!(client.next_comment().await.starts_with(':'));
}

#[tokio::test]
async fn client_ids_are_checked() {
    let (_gateway, base) = serve(GatewayConfig::default()).await;
    let http = reqwest::Client::new();
    for (query, text) in [
        ("", "clientId: must not be blank"),
        ("?clientId=", "clientId: must not be blank"),
        (
            "?clientId=-bad",
            "clientId: must be a valid identifier (alphanumeric, dots, hyphens, underscores; 1-255 chars)",
        ),
    ] {
        let response = http
            .get(format!("{base}/mcp/connect{query}"))
            .send()
            .await
            .expect("get");
        assert_eq!(response.status(), 400, "{query}");
        let body: Value = response.json().await.expect("json");
        assert_eq!(body, json!({"error": text, "status": 400}), "{query}");
    }
}

#[tokio::test]
async fn no_session_and_timeouts_are_failures() {
    let (gateway, base) = serve(GatewayConfig {
        request_timeout: Duration::from_millis(50),
        ..GatewayConfig::default()
    })
    .await;
    assert_eq!(
        gateway.tools_for("acme").await.map(|_| ()),
        Err("Client not connected: acme".to_string())
    );
    let mut client = TestClient::connect(&base, "acme").await;
    client.next_message().await;
    // The client never answers.
    assert_eq!(
        gateway.request("acme", "tools/list", json!({})).await,
        Err("Request timed out after 50ms: tools/list".to_string())
    );
    assert_eq!(gateway.counts(), (1, 0));
}
