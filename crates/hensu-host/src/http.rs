//! HTTP: the `webhook` action handler and the `api-caller` generic node handler.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use hensu_ir::GenericNode;
use hensu_runtime::journal::{CallKind, CallSpec, Declared, Journaled, journaled};
use hensu_runtime::{
    ActionHandler, ActionResult, Context, GenericNodeHandler, MAX_OUTPUT_BYTES, NodeResult,
    cfg_num, cfg_str, render, resolve_with,
};
use indexmap::IndexMap;
use serde_json::Value;

use crate::network::{NetworkAccess, simulated};

/// The client of a handler and the egress policy it sends under (a server run's; none in a
/// local run). The client is built on first use: `hensuc check` registers the handlers only to
/// know their ids, and a client (TLS roots included) costs a noticeable part of a small check.
#[derive(Clone, Debug, Default)]
struct Outbound {
    client: OnceLock<Result<reqwest::Client, String>>,
    egress: Option<Arc<hensu_egress::EgressPolicy>>,
}

impl Outbound {
    /// Under a policy: the checking resolver, every redirect hop checked, no proxy
    /// (hensu-egress). Without one: reqwest's defaults. A client that cannot be built (no TLS
    /// backend) fails the request; it never falls back to an unchecked one.
    fn client(&self) -> Result<&reqwest::Client, String> {
        self.client
            .get_or_init(|| {
                let builder = match &self.egress {
                    Some(policy) => hensu_egress::client_builder(policy.clone()),
                    None => reqwest::Client::builder(),
                };
                builder.build().map_err(|e| e.to_string())
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The policy's refusal of `url` when its host is a denied IP literal (a host name is
    /// checked when the client resolves it).
    fn refusal(&self, url: &str) -> Option<String> {
        let policy = self.egress.as_ref()?;
        let parsed = reqwest::Url::parse(url).ok()?;
        policy.check_url(&parsed).err().map(|e| e.to_string())
    }

    /// What a failed request says: the policy's refusal when that is why, else `error`.
    fn describe(error: &reqwest::Error) -> String {
        match hensu_egress::refusal(error) {
            Some(refused) => refused.to_string(),
            None => error.to_string(),
        }
    }
}

/// `webhook`: HTTP POST of the JSON payload to the payload's `url` (removed from the body) or
/// the default URL (`HENSU_WEBHOOK_URL` in the CLI). Non-2xx → failure; the response body is
/// the action's result.
#[derive(Clone, Debug)]
pub struct WebhookHandler {
    default_url: Option<String>,
    outbound: Outbound,
    timeout: Duration,
    network: NetworkAccess,
}

impl WebhookHandler {
    pub fn new(default_url: Option<String>) -> Self {
        WebhookHandler {
            default_url,
            outbound: Outbound::default(),
            timeout: Duration::from_secs(30),
            network: NetworkAccess::Live,
        }
    }

    /// Simulates deliveries the run's network access does not allow.
    pub fn with_network(mut self, network: NetworkAccess) -> Self {
        self.network = network;
        self
    }

    /// Sends under `egress` (a server run's policy; `None`: unchecked, as a local run).
    pub fn with_egress(mut self, egress: Option<Arc<hensu_egress::EgressPolicy>>) -> Self {
        self.outbound = Outbound {
            client: OnceLock::new(),
            egress,
        };
        self
    }
}

#[async_trait]
impl ActionHandler for WebhookHandler {
    fn handler_id(&self) -> &str {
        "webhook"
    }

    async fn execute(&self, payload: &IndexMap<String, Value>, _ctx: &Context) -> ActionResult {
        let mut body = payload.clone();
        let url = match body.shift_remove("url") {
            Some(Value::String(u)) => u,
            _ => match &self.default_url {
                Some(u) => u.clone(),
                None => {
                    return ActionResult::failure(
                        "webhook: no URL (give the payload a \"url\" or set HENSU_WEBHOOK_URL)",
                    );
                }
            },
        };
        if !self.network.allows(&url) {
            return ActionResult::success(simulated("POST", &url));
        }
        if let Some(refused) = self.outbound.refusal(&url) {
            return ActionResult::failure(format!("Webhook {url} failed: {refused}"));
        }
        let client = match self.outbound.client() {
            Ok(c) => c,
            Err(e) => return ActionResult::failure(format!("Webhook {url} failed: {e}")),
        };
        let json = Value::Object(body.into_iter().collect());
        // Journaled (docs/security.md, *Call journal*): a node run again replays the answer;
        // a delivery started without a recorded answer is sent again with the same
        // `Idempotency-Key`, for the receiver to deduplicate.
        let call = CallSpec {
            kind: CallKind::Webhook,
            name: &journal_name(&url),
            declared: Declared::IDEMPOTENT,
        };
        let sent = journaled(call, |slot| async {
            let headers: Vec<(String, String)> = slot
                .map(|s| (IDEMPOTENCY_HEADER.to_string(), s.key))
                .into_iter()
                .collect();
            let what = format!("Webhook {url}");
            let r = post_json(client, &url, &headers, &json, self.timeout, &what).await;
            let ok = r.success;
            Ok::<_, std::convert::Infallible>(((r.success, r.output), ok))
        })
        .await;
        journaled_action(sent)
    }
}

/// The header carrying a call's idempotency key (docs/security.md, *Call journal*).
pub const IDEMPOTENCY_HEADER: &str = "Idempotency-Key";

/// What the journal names an HTTP call by: the URL's host (never its path or query, which
/// may carry tokens).
fn journal_name(url: &str) -> String {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_else(|| "url".to_string())
}

/// A journaled action's result.
fn journaled_action(
    r: Result<(bool, String), Journaled<std::convert::Infallible>>,
) -> ActionResult {
    match r {
        Ok((true, output)) => ActionResult::success(output),
        Ok((false, output)) => ActionResult::failure(output),
        Err(Journaled::Call(e)) => ActionResult::failure(e.to_string()),
        Err(Journaled::Effect(never)) => match never {},
    }
}

/// The run's `traceparent` on an outgoing request (docs/observability.md, *Context
/// propagation*), unless the workflow declares that header itself.
fn with_traceparent(
    request: reqwest::RequestBuilder,
    declared: &[(String, String)],
) -> reqwest::RequestBuilder {
    if declared
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("traceparent"))
    {
        return request;
    }
    match hensu_runtime::trace_context::traceparent() {
        Some(tp) => request.header("traceparent", tp),
        None => request,
    }
}

/// POSTs `body` as JSON to `url` with `headers`; a 2xx answer succeeds with the response body
/// as the action's result (docs/language.md, *Action node*), anything else fails. `what` starts
/// each message (`Webhook https://…`, `Handler 'slack'`); no header value is ever in one.
pub(crate) async fn post_json(
    client: &reqwest::Client,
    url: &str,
    headers: &[(String, String)],
    body: &Value,
    timeout: Duration,
    what: &str,
) -> ActionResult {
    let mut request = client.post(url).timeout(timeout).json(body);
    for (name, value) in headers {
        request = request.header(name.as_str(), value.as_str());
    }
    request = with_traceparent(request, headers);
    match request.send().await {
        Ok(resp) if resp.status().is_success() => {
            match read_limited(resp, MAX_OUTPUT_BYTES).await {
                Ok(b) => ActionResult::success(String::from_utf8_lossy(&b).into_owned()),
                Err(e) => ActionResult::failure(format!("{what}: {e}")),
            }
        }
        Ok(resp) => {
            ActionResult::failure(format!("{what} returned HTTP {}", resp.status().as_u16()))
        }
        Err(e) => {
            let why = hensu_egress::refusal(&e).map_or_else(|| without_url(&e), |r| r.to_string());
            ActionResult::failure(format!("{what} failed: {why}"))
        }
    }
}

/// A reqwest error's text without the URL it repeats (the caller names the URL once).
fn without_url(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    if let Some(url) = e.url() {
        text = text.replace(&format!(" ({url})"), "");
    }
    text
}

/// `api-caller`: a real HTTP request. `endpoint` (required; `{var}` placeholders are resolved
/// and percent-encoded), `method` ("GET"), `inputField` ("input"; sent as the JSON body
/// `{"<inputField>": value}` for methods other than GET/HEAD/DELETE), `outputField`
/// ("response"; receives the response body), `timeout` (30 000 ms).
#[derive(Clone, Debug)]
pub struct ApiCallerHandler {
    outbound: Outbound,
    network: NetworkAccess,
}

impl Default for ApiCallerHandler {
    fn default() -> Self {
        Self::new()
    }
}

impl ApiCallerHandler {
    pub fn new() -> Self {
        ApiCallerHandler {
            outbound: Outbound::default(),
            network: NetworkAccess::Live,
        }
    }

    /// Simulates requests the run's network access does not allow.
    pub fn with_network(mut self, network: NetworkAccess) -> Self {
        self.network = network;
        self
    }

    /// Sends under `egress` (a server run's policy; `None`: unchecked, as a local run).
    pub fn with_egress(mut self, egress: Option<Arc<hensu_egress::EgressPolicy>>) -> Self {
        self.outbound = Outbound {
            client: OnceLock::new(),
            egress,
        };
        self
    }
}

/// Percent-encodes everything but unreserved characters (RFC 3986).
pub fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Reads a response body up to `limit` bytes; `Err` when larger.
async fn read_limited(mut resp: reqwest::Response, limit: usize) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > limit {
                    return Err(format!("response body exceeds {limit} bytes"));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(body),
            Err(e) => return Err(e.to_string()),
        }
    }
}

#[async_trait]
impl GenericNodeHandler for ApiCallerHandler {
    fn executor_type(&self) -> &str {
        "api-caller"
    }

    async fn handle(&self, node: &GenericNode, ctx: &mut Context) -> NodeResult {
        let cfg = &node.config;
        let Some(Value::String(endpoint)) = cfg.get("endpoint") else {
            return NodeResult::failure("api-caller: config 'endpoint' is required");
        };
        let endpoint = resolve_with(endpoint, |name| match ctx.get(name) {
            None | Some(Value::Null) => "".into(),
            Some(v) => percent_encode(&render(v)).into(),
        });
        let method_name = cfg_str(cfg, "method", "GET").to_ascii_uppercase();
        let Ok(method) = reqwest::Method::from_bytes(method_name.as_bytes()) else {
            return NodeResult::failure(format!("api-caller: invalid method '{method_name}'"));
        };
        let input_field = cfg_str(cfg, "inputField", "input");
        let output_field = cfg_str(cfg, "outputField", "response");
        let timeout_ms = cfg_num(cfg, "timeout")
            .map(|(n, _)| n.max(0.0) as u64)
            .unwrap_or(30_000);
        if !self.network.allows(&endpoint) {
            // Nothing leaves the machine; the node succeeds with a marked mock response.
            let mock = simulated(&method_name, &endpoint);
            ctx.insert(output_field.clone(), Value::String(mock.clone()));
            return NodeResult::success(mock)
                .with_meta("simulated", Value::Bool(true))
                .with_meta("output_field", Value::String(output_field));
        }
        if let Some(refused) = self.outbound.refusal(&endpoint) {
            return NodeResult::failure(format!(
                "API call {method_name} {endpoint} failed: {refused}"
            ));
        }
        let client = match self.outbound.client() {
            Ok(c) => c,
            Err(e) => {
                return NodeResult::failure(format!(
                    "API call {method_name} {endpoint} failed: {e}"
                ));
            }
        };
        let body = (!matches!(
            method,
            reqwest::Method::GET | reqwest::Method::HEAD | reqwest::Method::DELETE
        ))
        .then(|| {
            let mut body = serde_json::Map::new();
            if let Some(v) = ctx.get(&input_field) {
                body.insert(input_field.clone(), v.clone());
            }
            Value::Object(body)
        });
        // Journaled (docs/security.md, *Call journal*), with an `Idempotency-Key`.
        let call = CallSpec {
            kind: CallKind::ApiCall,
            name: &journal_name(&endpoint),
            declared: Declared::IDEMPOTENT,
        };
        let request = ApiRequest {
            client,
            method,
            method_name: &method_name,
            endpoint: &endpoint,
            body,
            timeout_ms,
        };
        let answered = journaled(call, |slot| async {
            let r = request.send(slot.map(|s| s.key)).await;
            let ok = r.status == hensu_runtime::NodeStatus::Success;
            Ok::<_, std::convert::Infallible>((r, ok))
        })
        .await;
        let result = match answered {
            Ok(r) => r,
            Err(Journaled::Call(e)) => NodeResult::failure(e.to_string()),
            Err(Journaled::Effect(never)) => match never {},
        };
        if result.status == hensu_runtime::NodeStatus::Success
            && let Some(body) = &result.output
        {
            ctx.insert(output_field.clone(), body.clone());
            return result.with_meta("output_field", Value::String(output_field));
        }
        result
    }
}

/// One `api-caller` request.
struct ApiRequest<'a> {
    client: &'a reqwest::Client,
    method: reqwest::Method,
    method_name: &'a str,
    endpoint: &'a str,
    body: Option<Value>,
    timeout_ms: u64,
}

impl ApiRequest<'_> {
    /// Sends it (with `key` as its `Idempotency-Key`): the response body on a 2xx.
    async fn send(&self, key: Option<String>) -> NodeResult {
        let ApiRequest {
            client,
            method_name,
            endpoint,
            timeout_ms,
            ..
        } = self;
        let mut req = client
            .request(self.method.clone(), *endpoint)
            .timeout(Duration::from_millis(*timeout_ms));
        if let Some(body) = &self.body {
            req = req.json(body);
        }
        if let Some(key) = key {
            req = req.header(IDEMPOTENCY_HEADER, key);
        }
        let req = with_traceparent(req, &[]);
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) => {
                let what = if e.is_timeout() {
                    format!("timed out after {timeout_ms} ms")
                } else {
                    Outbound::describe(&e)
                };
                return NodeResult::failure(format!(
                    "API call {method_name} {endpoint} failed: {what}"
                ));
            }
        };
        let status = resp.status();
        let body = match read_limited(resp, MAX_OUTPUT_BYTES + 1).await {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => {
                return NodeResult::failure(format!(
                    "API call {method_name} {endpoint} failed: {e}"
                ));
            }
        };
        if !status.is_success() {
            let snippet: String = body.chars().take(200).collect();
            return NodeResult::failure(format!(
                "API call {method_name} {endpoint} failed with status {}: {snippet}",
                status.as_u16()
            ))
            .with_meta("status_code", Value::from(status.as_u16()));
        }
        NodeResult::success(body).with_meta("status_code", Value::from(status.as_u16()))
    }
}
