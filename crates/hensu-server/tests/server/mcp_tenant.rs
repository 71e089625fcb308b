//! A tenant's own MCP client, built with rmcp: an rmcp tool server (`ServerHandler`) whose
//! transport is the server's gateway over HTTP — JSON-RPC requests arrive on the SSE stream of
//! `GET /mcp/connect`, responses go to `POST /mcp/message`. The gateway sends no `initialize`
//! (upstream's protocol), so the service is started with `serve_directly`.

use std::sync::{Arc, Mutex};

use futures::StreamExt;
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientJsonRpcMessage, ContentBlock,
    ErrorData, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};

/// The tools: `echo {text}`, `shout {text}` (upper case), `hang` (answers only when
/// cancelled). Every call is recorded.
#[derive(Clone, Default)]
pub struct Tools {
    pub calls: Arc<Mutex<Vec<(String, Value)>>>,
}

fn schema(v: Value) -> Arc<serde_json::Map<String, Value>> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::default(),
    }
}

impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let text = || schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}));
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new("echo", "Echoes its text.", text()),
            Tool::new("shout", "Its text in upper case.", text()),
            Tool::new("hang", "Never answers.", text()),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request
            .arguments
            .clone()
            .map(Value::Object)
            .unwrap_or(Value::Null);
        if let Ok(mut c) = self.calls.lock() {
            c.push((request.name.to_string(), args.clone()));
        }
        let text = args["text"].as_str().unwrap_or_default().to_string();
        let answer = |s: String| Ok(CallToolResult::success(vec![ContentBlock::text(s)]).into());
        match request.name.as_ref() {
            "echo" => answer(text),
            "shout" => answer(text.to_uppercase()),
            "hang" => {
                context.ct.cancelled().await;
                Err(ErrorData::internal_error("cancelled", None))
            }
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

/// A connected tenant client; dropping it closes its stream (a disconnect).
pub struct TenantClient {
    pub tools: Tools,
    service: Option<rmcp::service::RunningService<RoleServer, Tools>>,
    reader: tokio::task::JoinHandle<()>,
}

impl TenantClient {
    /// Connects as `client_id` with `token`; returns once the gateway has the session.
    pub async fn connect(base: &str, token: &str, client_id: &str) -> TenantClient {
        let http = reqwest::Client::new();
        let resp = http
            .get(format!("{base}/mcp/connect?clientId={client_id}"))
            .bearer_auth(token)
            .send()
            .await
            .expect("connect");
        assert_eq!(resp.status(), reqwest::StatusCode::OK, "connect refused");
        // Requests: the SSE `data:` lines, parsed as JSON-RPC (the greeting ping is skipped).
        let (req_tx, req_rx) = futures::channel::mpsc::unbounded::<ClientJsonRpcMessage>();
        let mut body = resp.bytes_stream();
        let reader = tokio::spawn(async move {
            let mut buf = String::new();
            while let Some(Ok(chunk)) = body.next().await {
                buf.push_str(&String::from_utf8_lossy(&chunk));
                while let Some(end) = buf.find("\n\n") {
                    let block: String = buf.drain(..end + 2).collect();
                    for line in block.lines() {
                        if let Some(data) = line.strip_prefix("data:")
                            && let Ok(msg) = serde_json::from_str(data.trim())
                        {
                            let _ = req_tx.unbounded_send(msg);
                        }
                    }
                }
            }
        });
        // Responses: posted back one by one.
        let (resp_tx, mut resp_rx) =
            futures::channel::mpsc::unbounded::<rmcp::model::ServerJsonRpcMessage>();
        let (url, token) = (format!("{base}/mcp/message"), token.to_string());
        tokio::spawn(async move {
            while let Some(msg) = resp_rx.next().await {
                let _ = http
                    .post(&url)
                    .bearer_auth(&token)
                    .header("content-type", "application/json")
                    .body(serde_json::to_string(&msg).expect("json"))
                    .send()
                    .await;
            }
        });
        let tools = Tools::default();
        let service = rmcp::service::serve_directly(tools.clone(), (resp_tx, req_rx), None);
        TenantClient {
            tools,
            service: Some(service),
            reader,
        }
    }

    /// The tool calls received so far.
    pub fn calls(&self) -> Vec<(String, Value)> {
        self.tools
            .calls
            .lock()
            .map(|c| c.clone())
            .unwrap_or_default()
    }
}

impl Drop for TenantClient {
    fn drop(&mut self) {
        self.reader.abort();
        if let Some(s) = self.service.take() {
            s.cancellation_token().cancel();
        }
    }
}
