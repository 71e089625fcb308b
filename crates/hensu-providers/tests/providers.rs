//! hensu-providers against in-test mock servers (127.0.0.1) speaking each provider's protocol.
//! No test needs the internet or a real key; the live tests at the end run only with
//! `HENSU_LIVE_TESTS=1` and the provider's key, and print why they skip otherwise.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use async_trait::async_trait;
use hensu_ir::AgentConfig;
use hensu_providers::*;
use hensu_runtime::{Agent, AgentError, AgentProvider, AgentRequest, AgentResponse, Context};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

// ------------------------------------------------------------------------------------------
// Mock HTTP server
// ------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    delay: Duration,
}

impl Reply {
    fn json(status: u16, body: Value) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: body.to_string(),
            delay: Duration::ZERO,
        }
    }

    fn raw(status: u16, body: &str) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: body.to_string(),
            delay: Duration::ZERO,
        }
    }

    fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    fn delayed(mut self, d: Duration) -> Self {
        self.delay = d;
        self
    }
}

#[derive(Clone, Debug)]
struct Recorded {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Recorded {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("request body is JSON")
    }

    fn raw_text(&self) -> String {
        let mut s = format!("{} {}\n", self.method, self.path);
        for (n, v) in &self.headers {
            s.push_str(&format!("{n}: {v}\n"));
        }
        s.push_str(&self.body);
        s
    }
}

struct MockServer {
    addr: std::net::SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    /// Set when a client closed its connection while a delayed reply was pending.
    client_aborted: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl MockServer {
    async fn start(replies: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let queue = Arc::new(Mutex::new(VecDeque::from(replies)));
        let client_aborted = Arc::new(AtomicBool::new(false));
        let (r, q, a) = (requests.clone(), queue.clone(), client_aborted.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    return;
                };
                let (r, q, a) = (r.clone(), q.clone(), a.clone());
                tokio::spawn(async move {
                    let _ = serve(sock, r, q, a).await;
                });
            }
        });
        MockServer {
            addr,
            requests,
            client_aborted,
            task,
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().expect("lock").clone()
    }

    fn count(&self) -> usize {
        self.requests.lock().expect("lock").len()
    }
}

async fn serve(
    mut sock: TcpStream,
    requests: Arc<Mutex<Vec<Recorded>>>,
    queue: Arc<Mutex<VecDeque<Reply>>>,
    aborted: Arc<AtomicBool>,
) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let header_end = loop {
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_string();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or("");
    let mut parts = request_line.split(' ');
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < header_end + len {
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = String::from_utf8_lossy(&buf[header_end..]).to_string();
    requests.lock().expect("lock").push(Recorded {
        method,
        path,
        headers,
        body,
    });
    let reply = queue
        .lock()
        .expect("lock")
        .pop_front()
        .unwrap_or_else(|| Reply::raw(500, "{\"error\":{\"message\":\"no scripted reply\"}}"));
    if !reply.delay.is_zero() {
        tokio::select! {
            () = tokio::time::sleep(reply.delay) => {}
            n = sock.read(&mut chunk) => {
                if matches!(n, Ok(0) | Err(_)) {
                    aborted.store(true, Ordering::SeqCst);
                    return Ok(());
                }
            }
        }
    }
    let mut out = format!(
        "HTTP/1.1 {} Mock\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        reply.status,
        reply.body.len()
    );
    for (n, v) in &reply.headers {
        out.push_str(&format!("{n}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&reply.body);
    sock.write_all(out.as_bytes()).await?;
    sock.shutdown().await?;
    Ok(())
}

// ------------------------------------------------------------------------------------------
// Protocol replies
// ------------------------------------------------------------------------------------------

fn anthropic_text(text: &str) -> Reply {
    Reply::json(
        200,
        json!({
            "id": "msg_1", "type": "message", "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 11, "output_tokens": 7}
        }),
    )
}

fn anthropic_tool(id: &str, name: &str, input: Value) -> Reply {
    Reply::json(
        200,
        json!({
            "id": "msg_t", "type": "message", "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": id, "name": name, "input": input}
            ],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 5, "output_tokens": 3}
        }),
    )
}

fn openai_text(text: &str) -> Reply {
    Reply::json(
        200,
        json!({
            "id": "chatcmpl-1", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 4, "total_tokens": 24}
        }),
    )
}

fn openai_tool(id: &str, name: &str, args: &str) -> Reply {
    Reply::json(
        200,
        json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": args}}]},
                "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2}
        }),
    )
}

fn gemini_text(text: &str) -> Reply {
    Reply::json(
        200,
        json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 6, "totalTokenCount": 15}
        }),
    )
}

fn gemini_tool(name: &str, args: Value) -> Reply {
    Reply::json(
        200,
        json!({
            "candidates": [{"content": {"role": "model", "parts": [
                {"functionCall": {"name": name, "args": args}, "thoughtSignature": "sig-abc"}
            ]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 2}
        }),
    )
}

// ------------------------------------------------------------------------------------------
// Harness
// ------------------------------------------------------------------------------------------

const ANTHROPIC_KEY: &str = "sk-ant-test-FAKE-0123456789abcdef";
const OPENAI_KEY: &str = "sk-openai-test-FAKE-9876543210";
const GOOGLE_KEY: &str = "AIzaFAKE-google-test-key-000111";
const DEEPSEEK_KEY: &str = "sk-deepseek-FAKE-key-555666777";

fn fake_env(name: &str) -> Option<String> {
    match name {
        "ANTHROPIC_API_KEY" => Some(ANTHROPIC_KEY.to_string()),
        "OPENAI_API_KEY" => Some(OPENAI_KEY.to_string()),
        "GOOGLE_API_KEY" => Some(GOOGLE_KEY.to_string()),
        "DEEPSEEK_API_KEY" => Some(DEEPSEEK_KEY.to_string()),
        _ => None,
    }
}

const ALL_KEYS: [&str; 4] = [ANTHROPIC_KEY, OPENAI_KEY, GOOGLE_KEY, DEEPSEEK_KEY];

fn assert_no_key(what: &str, text: &str) {
    for k in ALL_KEYS {
        assert!(!text.contains(k), "{what} leaks a key: {text}");
    }
}

/// Records requested sleeps and returns at once.
#[derive(Default)]
struct RecordingSleeper {
    slept: Mutex<Vec<Duration>>,
}

impl Sleeper for RecordingSleeper {
    fn sleep(&self, d: Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        self.slept.lock().expect("lock").push(d);
        Box::pin(std::future::ready(()))
    }
}

impl RecordingSleeper {
    fn slept(&self) -> Vec<Duration> {
        self.slept.lock().expect("lock").clone()
    }
}

struct ManualClock {
    base: Instant,
    offset: Mutex<Duration>,
}

impl ManualClock {
    fn new() -> Self {
        ManualClock {
            base: Instant::now(),
            offset: Mutex::new(Duration::ZERO),
        }
    }

    fn advance(&self, d: Duration) {
        *self.offset.lock().expect("lock") += d;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.base + *self.offset.lock().expect("lock")
    }
}

fn zero_jitter() -> f64 {
    0.0
}

struct Harness {
    built: BuiltProviders,
    sleeper: Arc<RecordingSleeper>,
    clock: Arc<ManualClock>,
}

/// Providers whose built-in `name` points at `url`; `extra` is appended to `hensu.toml`.
fn harness(name: &str, url: &str, extra: &str, tools: Option<Arc<dyn ToolExecutor>>) -> Harness {
    harness_with(name, url, extra, tools, None)
}

fn harness_with(
    name: &str,
    url: &str,
    extra: &str,
    tools: Option<Arc<dyn ToolExecutor>>,
    cancel: Option<hensu_runtime::CancelToken>,
) -> Harness {
    let base = match name {
        "openai" => format!("{url}/v1"),
        _ => url.to_string(),
    };
    let toml = format!("[providers.{name}]\nbase_url = \"{base}\"\n{extra}");
    let config = load_config(&toml).expect("config");
    let sleeper = Arc::new(RecordingSleeper::default());
    let clock = Arc::new(ManualClock::new());
    let built = build_providers_with(
        &config,
        &fake_env,
        BuildOptions {
            tools,
            cancel,
            sleeper: sleeper.clone(),
            clock: clock.clone(),
            jitter: zero_jitter,
            ..BuildOptions::default()
        },
    );
    Harness {
        built,
        sleeper,
        clock,
    }
}

impl Harness {
    fn agent(&self, config: AgentConfig) -> Arc<dyn Agent> {
        let p = hensu_runtime::select_provider(&self.built.providers, &config.model)
            .expect("a provider");
        p.create_agent(&config, &HashMap::new()).expect("agent")
    }
}

fn agent_config(model: &str) -> AgentConfig {
    let mut c = AgentConfig::new("writer", "You are a careful writer.", model);
    c.instructions = Some("Answer briefly.".to_string());
    c
}

async fn call(agent: &dyn Agent, prompt: &str) -> Result<AgentResponse, AgentError> {
    let ctx = Context::default();
    let system = hensu_runtime::system_prompt(agent.config());
    agent
        .execute(AgentRequest {
            node_id: "draft",
            prompt,
            system_prompt: &system,
            context: &ctx,
        })
        .await
}

// ------------------------------------------------------------------------------------------
// Protocols
// ------------------------------------------------------------------------------------------

#[tokio::test]
async fn anthropic_messages_request_and_answer() {
    let server = MockServer::start(vec![anthropic_text("Hello from Claude")]).await;
    let h = harness("anthropic", &server.url(), "", None);
    let mut cfg = agent_config("claude-sonnet-4-6");
    cfg.temperature = 0.3;
    cfg.max_tokens = Some(256);
    cfg.top_p = Some(0.9);
    cfg.frequency_penalty = Some(0.5);
    let agent = h.agent(cfg);
    let resp = call(agent.as_ref(), "Write a haiku").await.expect("answer");
    assert_eq!(resp.text, "Hello from Claude");
    assert_eq!(
        resp.usage,
        Some(hensu_runtime::Usage {
            input_tokens: 11,
            output_tokens: 7
        })
    );
    assert_eq!(resp.metadata["provider"], json!("anthropic"));
    assert!(resp.metadata.contains_key("latency_ms"));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let r = &reqs[0];
    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.header("x-api-key"), Some(ANTHROPIC_KEY));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    let body = r.json();
    assert_eq!(body["model"], "claude-sonnet-4-6");
    assert_eq!(
        body["system"],
        "You are a careful writer.\n\nAnswer briefly."
    );
    assert_eq!(body["max_tokens"], 256);
    assert_eq!(body["temperature"], 0.3);
    assert_eq!(body["top_p"], 0.9);
    assert!(
        body.get("frequency_penalty").is_none(),
        "not an Anthropic parameter"
    );
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "Write a haiku"}]}])
    );
    let usage = h.built.usage.snapshot();
    assert_eq!(usage.total.calls, 1);
    assert_eq!(usage.total.input_tokens, 11);
    assert_eq!(usage.by_provider["anthropic"].output_tokens, 7);
}

#[tokio::test]
async fn anthropic_default_max_tokens() {
    let server = MockServer::start(vec![anthropic_text("ok")]).await;
    let h = harness("anthropic", &server.url(), "", None);
    let agent = h.agent(agent_config("claude-haiku-4-5"));
    call(agent.as_ref(), "hi").await.expect("answer");
    assert_eq!(server.requests()[0].json()["max_tokens"], 4096);
}

#[tokio::test]
async fn openai_chat_completions_request_and_answer() {
    let server = MockServer::start(vec![openai_text("Hello from GPT")]).await;
    let h = harness("openai", &server.url(), "", None);
    let mut cfg = agent_config("gpt-4o");
    cfg.max_tokens = Some(100);
    cfg.top_p = Some(0.8);
    cfg.frequency_penalty = Some(0.2);
    cfg.presence_penalty = Some(-0.1);
    let agent = h.agent(cfg);
    let resp = call(agent.as_ref(), "Say hi").await.expect("answer");
    assert_eq!(resp.text, "Hello from GPT");
    assert_eq!(resp.usage.map(|u| u.input_tokens), Some(20));
    let r = &server.requests()[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {OPENAI_KEY}").as_str())
    );
    let body = r.json();
    assert_eq!(body["model"], "gpt-4o");
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": "Say hi"})
    );
    assert_eq!(body["max_tokens"], 100);
    assert_eq!(body["temperature"], 0.7);
    assert_eq!(body["top_p"], 0.8);
    assert_eq!(body["frequency_penalty"], 0.2);
    assert_eq!(body["presence_penalty"], -0.1);
}

#[tokio::test]
async fn openai_reasoning_models_use_max_completion_tokens() {
    let server = MockServer::start(vec![openai_text("ok")]).await;
    let h = harness("openai", &server.url(), "", None);
    let mut cfg = agent_config("o3-mini");
    cfg.max_tokens = Some(50);
    let agent = h.agent(cfg);
    call(agent.as_ref(), "x").await.expect("answer");
    let body = server.requests()[0].json();
    assert_eq!(body["max_completion_tokens"], 50);
    assert!(body.get("temperature").is_none());
}

#[tokio::test]
async fn gemini_generate_content_request_and_answer() {
    let server = MockServer::start(vec![gemini_text("Hello from Gemini")]).await;
    let h = harness("gemini", &server.url(), "", None);
    let mut cfg = agent_config("gemini-2.5-flash");
    cfg.max_tokens = Some(64);
    cfg.presence_penalty = Some(0.4);
    let agent = h.agent(cfg);
    let resp = call(agent.as_ref(), "Hi Gemini").await.expect("answer");
    assert_eq!(resp.text, "Hello from Gemini");
    assert_eq!(
        resp.usage,
        Some(hensu_runtime::Usage {
            input_tokens: 9,
            output_tokens: 6
        })
    );
    let r = &server.requests()[0];
    assert_eq!(r.path, "/v1beta/models/gemini-2.5-flash:generateContent");
    assert!(!r.path.contains("key="), "the key never goes into the URL");
    assert_eq!(r.header("x-goog-api-key"), Some(GOOGLE_KEY));
    let body = r.json();
    assert_eq!(
        body["systemInstruction"]["parts"][0]["text"],
        "You are a careful writer.\n\nAnswer briefly."
    );
    assert_eq!(
        body["contents"],
        json!([{"role": "user", "parts": [{"text": "Hi Gemini"}]}])
    );
    assert_eq!(body["generationConfig"]["maxOutputTokens"], 64);
    assert_eq!(body["generationConfig"]["temperature"], 0.7);
    assert_eq!(body["generationConfig"]["presencePenalty"], 0.4);
}

#[tokio::test]
async fn gemini_blocked_prompt_is_refused() {
    let server = MockServer::start(vec![Reply::json(
        200,
        json!({"promptFeedback": {"blockReason": "SAFETY"}}),
    )])
    .await;
    let h = harness("gemini", &server.url(), "", None);
    let agent = h.agent(agent_config("gemini-2.5-pro"));
    let e = call(agent.as_ref(), "x").await.expect_err("blocked");
    assert_eq!(e.kind, "refused");
    assert!(e.message.contains("SAFETY"), "{}", e.message);
}

#[tokio::test]
async fn deepseek_uses_the_openai_protocol() {
    let server = MockServer::start(vec![openai_text("deep")]).await;
    let h = harness("deepseek", &server.url(), "", None);
    let agent = h.agent(agent_config("deepseek-v4-flash"));
    let resp = call(agent.as_ref(), "x").await.expect("answer");
    assert_eq!(resp.text, "deep");
    assert_eq!(resp.metadata["provider"], json!("deepseek"));
    let r = &server.requests()[0];
    assert_eq!(r.path, "/chat/completions");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {DEEPSEEK_KEY}").as_str())
    );
}

#[tokio::test]
async fn configured_openai_compatible_server_without_key() {
    let server = MockServer::start(vec![openai_text("local llama")]).await;
    let toml = format!(
        "[providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\nmodels = [\"llama*\"]\npriority = 50\n",
        server.url()
    );
    let config = load_config(&toml).expect("config");
    let built = build_providers_with(&config, &|_| None, BuildOptions::default());
    assert_eq!(
        built.route("llama3.1:8b"),
        Some(Route {
            provider: "local".into(),
            stub_reason: None
        })
    );
    let p = hensu_runtime::select_provider(&built.providers, "llama3.1:8b").expect("p");
    let agent = p
        .create_agent(&agent_config("llama3.1:8b"), &HashMap::new())
        .expect("agent");
    let resp = call(agent.as_ref(), "x").await.expect("answer");
    assert_eq!(resp.text, "local llama");
    let r = &server.requests()[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert!(r.header("authorization").is_none());
}

// ------------------------------------------------------------------------------------------
// Routing and configuration
// ------------------------------------------------------------------------------------------

fn names(built: &BuiltProviders, model: &str) -> Route {
    built.route(model).expect("route")
}

#[test]
fn routing_by_model_id_and_credentials() {
    let env = |n: &str| (n == "ANTHROPIC_API_KEY").then(|| ANTHROPIC_KEY.to_string());
    let built = build_providers_with(&ProvidersConfig::default(), &env, BuildOptions::default());
    assert_eq!(names(&built, "claude-opus-4-6").provider, "anthropic");
    let gpt = names(&built, "gpt-4o");
    assert_eq!(gpt.provider, "stub");
    let reason = gpt.stub_reason.expect("fallback reason");
    assert!(reason.contains("OPENAI_API_KEY"), "{reason}");
    let unknown = names(&built, "mistral-large");
    assert_eq!(unknown.provider, "stub");
    assert!(
        unknown
            .stub_reason
            .expect("reason")
            .contains("no provider serves")
    );
    assert_eq!(names(&built, "stub").provider, "stub");

    let all = build_providers_with(
        &ProvidersConfig::default(),
        &fake_env,
        BuildOptions::default(),
    );
    for (model, provider) in [
        ("claude-sonnet-4-5", "anthropic"),
        ("gpt-4-turbo", "openai"),
        ("o1-preview", "openai"),
        ("o3", "openai"),
        ("o4-mini", "openai"),
        ("gemini-3.1-pro-preview", "gemini"),
        ("deepseek-v4-pro", "deepseek"),
    ] {
        assert_eq!(names(&all, model).provider, provider, "{model}");
    }
}

#[test]
fn stubs_win_when_forced_or_enabled_by_env() {
    let forced = build_providers(&ProvidersConfig::default(), &fake_env, true);
    let p = hensu_runtime::select_provider(&forced, "claude-opus-4-6").expect("p");
    assert_eq!(p.name(), "stub");
    assert_eq!(p.priority(), 1000);

    let env = |n: &str| match n {
        "HENSU_STUB_ENABLED" => Some("TRUE".to_string()),
        other => fake_env(other),
    };
    let built = build_providers_with(&ProvidersConfig::default(), &env, BuildOptions::default());
    assert!(built.stubs_forced);
    assert_eq!(
        built.route("gpt-4o"),
        Some(Route {
            provider: "stub".into(),
            stub_reason: None
        })
    );
}

#[test]
fn hensu_toml_priorities_overrides_and_disabling() {
    let toml = r#"
[project]
name = "ignored by this crate"

[providers.proxy]
kind = "anthropic"
base_url = "https://llm-proxy.example.invalid"
api_key_env = "PROXY_API_KEY"
models = ["claude-*"]
priority = 300

[providers.gemini]
enabled = false

[providers.openai]
models = ["gpt-*", "chatgpt-*"]
"#;
    let config = load_config(toml).expect("config");
    let env = |n: &str| match n {
        "PROXY_API_KEY" => Some("proxy-secret-123456".to_string()),
        other => fake_env(other),
    };
    let built = build_providers_with(&config, &env, BuildOptions::default());
    assert_eq!(names(&built, "claude-opus-4-6").provider, "proxy");
    assert_eq!(names(&built, "chatgpt-4o-latest").provider, "openai");
    assert_eq!(
        names(&built, "o3").provider,
        "stub",
        "openai models replaced"
    );
    assert_eq!(
        names(&built, "gemini-2.5-pro").provider,
        "stub",
        "gemini disabled"
    );
    assert!(built.redactor.names().contains(&"PROXY_API_KEY"));
    assert_eq!(
        built.redactor.redact("x proxy-secret-123456 y"),
        "x <redacted:PROXY_API_KEY> y"
    );
    let specs = provider_specs(&config);
    assert!(specs.iter().any(|s| s.name == "proxy" && s.priority == 300));
}

#[test]
fn config_errors() {
    let cases = [
        (
            "[providers.x]\nbase_url = \"http://h\"\n",
            "`kind` is required",
        ),
        ("[providers.x]\nkind = \"cohere\"\n", "unknown variant"),
        (
            "[providers.openai]\napi_key_env = \"HOME\"\n",
            "not an API-key variable name",
        ),
        (
            "[providers.openai]\nbase_url = \"https://user:pw@h.invalid\"\n",
            "credentials in the URL",
        ),
        (
            "[providers.openai]\nbase_url = \"ftp://h\"\n",
            "only http and https",
        ),
        ("[retry]\nmax_attempts = 0\n", "between 1 and 20"),
        ("[retry]\nmax_atempts = 2\n", "unknown field"),
        (
            "[retry]\nbase_delay_ms = 10\nmax_delay_ms = 5\n",
            "must not exceed",
        ),
        ("[timeouts]\ncall_ms = 0\n", "must be positive"),
        ("[providers.stub]\nkind = \"openai\"\n", "reserved"),
        ("[retry\n", "hensu.toml:1:"),
    ];
    for (text, expected) in cases {
        let e = load_config(text).expect_err(text);
        assert!(e.to_string().contains(expected), "{text:?}: {e}");
    }
    let ok = load_config(
        "[retry]\nmax_attempts = 5\nbase_delay_ms = 100\nmax_delay_ms = 2000\n[circuit_breaker]\nfailure_threshold = 3\ncool_down_ms = 1000\n[timeouts]\ncall_ms = 5000\n[structured_output]\nmax_corrections = 2\n",
    )
    .expect("valid");
    assert_eq!(ok.retry.max_attempts, 5);
    assert_eq!(ok.circuit_breaker.failure_threshold, 3);
    assert_eq!(ok.timeouts.call_ms, 5000);
    assert_eq!(ok.structured_output.max_corrections, 2);
}

// ------------------------------------------------------------------------------------------
// Fault tolerance
// ------------------------------------------------------------------------------------------

#[tokio::test]
async fn retry_honours_retry_after_seconds() {
    let server = MockServer::start(vec![
        Reply::json(
            429,
            json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
        )
        .header("retry-after", "7"),
        anthropic_text("after the wait"),
    ])
    .await;
    let h = harness(
        "anthropic",
        &server.url(),
        "[retry]\nmax_delay_ms = 60000\n",
        None,
    );
    let agent = h.agent(agent_config("claude-opus-4-6"));
    let resp = call(agent.as_ref(), "x").await.expect("answer");
    assert_eq!(resp.text, "after the wait");
    assert_eq!(server.count(), 2);
    assert_eq!(h.sleeper.slept(), vec![Duration::from_secs(7)]);
    assert_eq!(resp.metadata["retries"], json!(1));
    assert_eq!(resp.metadata["requests"], json!(2));
    assert_eq!(h.built.usage.snapshot().total.retries, 1);
}

#[tokio::test]
async fn retry_after_beyond_max_delay_fails_at_once() {
    let server = MockServer::start(vec![
        Reply::json(429, json!({"error": {"message": "quota"}})).header("retry-after", "3600"),
    ])
    .await;
    let h = harness("openai", &server.url(), "", None);
    let agent = h.agent(agent_config("gpt-4o"));
    let e = call(agent.as_ref(), "x").await.expect_err("rate limited");
    assert_eq!(e.kind, "rate_limited");
    assert!(e.message.contains("retry after 3600 s"), "{}", e.message);
    assert_eq!(server.count(), 1);
    assert!(h.sleeper.slept().is_empty());
}

#[test]
fn retry_after_http_date() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_767); // Sun, 06 Nov 1994 08:49:27 GMT
    assert_eq!(
        parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
        Some(Duration::from_secs(10))
    );
    assert_eq!(
        parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now),
        Some(Duration::ZERO)
    );
    assert_eq!(parse_retry_after("12", now), Some(Duration::from_secs(12)));
    assert_eq!(
        parse_retry_after("1.5", now),
        Some(Duration::from_millis(1500))
    );
    assert_eq!(parse_retry_after("soon", now), None);
}

#[tokio::test]
async fn retry_after_date_header_is_honoured() {
    let at = httpdate_in(Duration::from_secs(30));
    let server = MockServer::start(vec![
        Reply::json(503, json!({"error": {"message": "overloaded"}})).header("retry-after", &at),
        gemini_text("back"),
    ])
    .await;
    let h = harness("gemini", &server.url(), "", None);
    let agent = h.agent(agent_config("gemini-2.5-flash"));
    let resp = call(agent.as_ref(), "x").await.expect("answer");
    assert_eq!(resp.text, "back");
    let slept = h.sleeper.slept();
    assert_eq!(slept.len(), 1);
    assert!(
        slept[0] > Duration::from_secs(25) && slept[0] <= Duration::from_secs(30),
        "{slept:?}"
    );
}

fn httpdate_in(d: Duration) -> String {
    // IMF-fixdate formatting without a dependency: use the crate's parser to check.
    let t = SystemTime::now() + d;
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("after epoch")
        .as_secs();
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][(days % 7) as usize];
    // civil-from-days (Howard Hinnant)
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if mo <= 2 { y + 1 } else { y };
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ][(mo - 1) as usize];
    format!("{weekday}, {d:02} {month} {y} {h:02}:{m:02}:{s:02} GMT")
}

#[tokio::test]
async fn server_errors_back_off_exponentially_then_give_up() {
    let server = MockServer::start(vec![
        Reply::json(500, json!({"error": {"message": "boom"}})),
        Reply::json(502, json!({"error": {"message": "bad gateway"}})),
        Reply::json(503, json!({"error": {"message": "unavailable"}})),
    ])
    .await;
    let h = harness(
        "openai",
        &server.url(),
        "[retry]\nmax_attempts = 3\nbase_delay_ms = 100\nmax_delay_ms = 1000\n[circuit_breaker]\nfailure_threshold = 10\n",
        None,
    );
    let agent = h.agent(agent_config("gpt-4o"));
    let e = call(agent.as_ref(), "x").await.expect_err("fails");
    assert_eq!(e.kind, "server_error");
    assert!(e.message.contains("HTTP 503"), "{}", e.message);
    assert!(e.message.contains("after 3 attempts"), "{}", e.message);
    assert!(e.message.contains("Agent 'writer'"), "{}", e.message);
    assert_eq!(server.count(), 3);
    // Equal jitter with a zero jitter source: half of 100 ms, then half of 200 ms.
    assert_eq!(
        h.sleeper.slept(),
        vec![Duration::from_millis(50), Duration::from_millis(100)]
    );
    let usage = h.built.usage.snapshot();
    assert_eq!(usage.total.failed_calls, 1);
    assert_eq!(usage.total.requests, 3);
}

#[tokio::test]
async fn anthropic_overloaded_529_is_retried() {
    let server = MockServer::start(vec![
        Reply::json(
            529,
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
        anthropic_text("fine now"),
    ])
    .await;
    let h = harness("anthropic", &server.url(), "", None);
    let agent = h.agent(agent_config("claude-opus-4-5"));
    assert_eq!(
        call(agent.as_ref(), "x").await.expect("ok").text,
        "fine now"
    );
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let server = MockServer::start(vec![Reply::json(
        400,
        json!({"error": {"type": "invalid_request_error", "message": "temperature out of range"}}),
    )])
    .await;
    let h = harness("anthropic", &server.url(), "", None);
    let agent = h.agent(agent_config("claude-opus-4-6"));
    let e = call(agent.as_ref(), "x").await.expect_err("fails");
    assert_eq!(e.kind, "http");
    assert!(
        e.message
            .contains("HTTP 400: invalid_request_error: temperature out of range"),
        "{}",
        e.message
    );
    assert_eq!(server.count(), 1);
}

#[tokio::test]
async fn slow_answers_time_out_per_request() {
    let server = MockServer::start(vec![
        anthropic_text("too late").delayed(Duration::from_secs(5)),
        anthropic_text("too late").delayed(Duration::from_secs(5)),
    ])
    .await;
    let h = harness(
        "anthropic",
        &server.url(),
        "[timeouts]\ncall_ms = 200\n[retry]\nmax_attempts = 2\n",
        None,
    );
    let agent = h.agent(agent_config("claude-opus-4-6"));
    let started = Instant::now();
    let e = call(agent.as_ref(), "x").await.expect_err("times out");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(e.kind, "timeout");
    assert!(e.message.contains("within 200 ms"), "{}", e.message);
    assert!(e.message.contains("after 2 attempts"), "{}", e.message);
    assert_eq!(server.count(), 2);
}

#[tokio::test]
async fn agent_timeout_seconds_override_the_default() {
    let server = MockServer::start(vec![openai_text("x").delayed(Duration::from_secs(3))]).await;
    let h = harness(
        "openai",
        &server.url(),
        "[timeouts]\ncall_ms = 60000\n[retry]\nmax_attempts = 1\n",
        None,
    );
    let mut cfg = agent_config("gpt-4o");
    cfg.timeout = Some(1);
    let agent = h.agent(cfg);
    let e = call(agent.as_ref(), "x").await.expect_err("times out");
    assert_eq!(e.kind, "timeout");
    assert!(e.message.contains("within 1000 ms"), "{}", e.message);
}

#[tokio::test]
async fn malformed_json_answer() {
    let server = MockServer::start(vec![Reply::raw(200, "{\"choices\": [ nope")]).await;
    let h = harness("openai", &server.url(), "", None);
    let agent = h.agent(agent_config("gpt-4o"));
    let e = call(agent.as_ref(), "x").await.expect_err("malformed");
    assert_eq!(e.kind, "malformed_response");
    assert!(e.message.contains("invalid JSON"), "{}", e.message);
    assert_eq!(server.count(), 1, "not retried");
}

#[tokio::test]
async fn answer_outside_the_protocol() {
    for (name, model) in [
        ("anthropic", "claude-opus-4-6"),
        ("openai", "gpt-4o"),
        ("gemini", "gemini-2.5-flash"),
    ] {
        let server = MockServer::start(vec![Reply::json(200, json!({"unexpected": true}))]).await;
        let h = harness(name, &server.url(), "", None);
        let agent = h.agent(agent_config(model));
        let e = call(agent.as_ref(), "x").await.expect_err("malformed");
        assert_eq!(e.kind, "malformed_response", "{name}");
        assert!(
            e.message.contains("does not follow the protocol"),
            "{}",
            e.message
        );
    }
}

#[tokio::test]
async fn connection_refused_is_a_transport_error() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    drop(listener);
    let h = harness("anthropic", &url, "[retry]\nmax_attempts = 2\n", None);
    let agent = h.agent(agent_config("claude-opus-4-6"));
    let e = call(agent.as_ref(), "x").await.expect_err("refused");
    assert_eq!(e.kind, "transport");
    assert_eq!(h.sleeper.slept().len(), 1, "retried once");
}

#[tokio::test]
async fn circuit_breaker_opens_then_half_opens() {
    let server = MockServer::start(vec![
        Reply::json(500, json!({"error": {"message": "down"}})),
        Reply::json(500, json!({"error": {"message": "down"}})),
        anthropic_text("recovered"),
        anthropic_text("still fine"),
    ])
    .await;
    let h = harness(
        "anthropic",
        &server.url(),
        "[retry]\nmax_attempts = 1\n[circuit_breaker]\nfailure_threshold = 2\ncool_down_ms = 10000\n",
        None,
    );
    let agent = h.agent(agent_config("claude-opus-4-6"));
    assert_eq!(
        call(agent.as_ref(), "1").await.expect_err("500").kind,
        "server_error"
    );
    assert_eq!(
        call(agent.as_ref(), "2").await.expect_err("500").kind,
        "server_error"
    );
    let open = call(agent.as_ref(), "3").await.expect_err("open");
    assert_eq!(open.kind, "circuit_open");
    assert!(
        open.message.contains("circuit breaker is open"),
        "{}",
        open.message
    );
    assert_eq!(server.count(), 2, "an open breaker sends nothing");
    // Another agent of the same provider shares the breaker.
    let other = h.agent(AgentConfig::new("critic", "Critic", "claude-haiku-4-5"));
    assert_eq!(
        call(other.as_ref(), "4").await.expect_err("open").kind,
        "circuit_open"
    );
    h.clock.advance(Duration::from_secs(10));
    assert_eq!(
        call(agent.as_ref(), "5").await.expect("probe").text,
        "recovered"
    );
    assert_eq!(
        call(agent.as_ref(), "6").await.expect("closed").text,
        "still fine"
    );
    assert_eq!(server.count(), 4);
}

#[tokio::test]
async fn dropping_the_call_aborts_the_http_request() {
    let server =
        MockServer::start(vec![anthropic_text("x").delayed(Duration::from_secs(30))]).await;
    let h = harness("anthropic", &server.url(), "", None);
    let agent = h.agent(agent_config("claude-opus-4-6"));
    let task = tokio::spawn(async move { call(agent.as_ref(), "x").await });
    wait_until(|| server.count() == 1).await;
    task.abort();
    wait_until(|| server.client_aborted.load(Ordering::SeqCst)).await;
}

#[tokio::test]
async fn cancel_token_aborts_the_request() {
    let server = MockServer::start(vec![openai_text("x").delayed(Duration::from_secs(30))]).await;
    let cancel = hensu_runtime::CancelToken::new();
    let h = harness_with("openai", &server.url(), "", None, Some(cancel.clone()));
    let agent = h.agent(agent_config("gpt-4o"));
    let task = tokio::spawn(async move { call(agent.as_ref(), "x").await });
    wait_until(|| server.count() == 1).await;
    cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("returns promptly")
        .expect("task");
    let e = result.expect_err("cancelled");
    assert_eq!(e.kind, "cancelled");
    wait_until(|| server.client_aborted.load(Ordering::SeqCst)).await;
}

async fn wait_until(cond: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !cond() {
        assert!(Instant::now() < deadline, "condition not reached in 5 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

// ------------------------------------------------------------------------------------------
// Tool loop
// ------------------------------------------------------------------------------------------

#[derive(Default)]
struct FakeTools {
    calls: Mutex<Vec<(String, Value)>>,
    /// What `get_weather` answers.
    answer: String,
}

#[async_trait]
impl ToolExecutor for FakeTools {
    fn has_tool(&self, name: &str) -> bool {
        matches!(name, "get_weather" | "search")
    }

    fn available(&self) -> Vec<String> {
        vec!["get_weather".into(), "search".into()]
    }

    fn spec(&self, name: &str) -> ToolSpec {
        if name == "get_weather" {
            ToolSpec {
                name: name.into(),
                description: "Current weather for a city".into(),
                parameters: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
            }
        } else {
            ToolSpec::generic(name)
        }
    }

    async fn call(&self, name: &str, args: Value) -> Result<String, String> {
        self.calls
            .lock()
            .expect("lock")
            .push((name.to_string(), args.clone()));
        match name {
            "get_weather" => Ok(self.answer.clone()),
            _ => Err("search backend unavailable".into()),
        }
    }
}

fn tool_agent(model: &str, tools: &[&str], max: Option<i64>) -> AgentConfig {
    let mut c = agent_config(model);
    c.tools = tools.iter().map(|t| t.to_string()).collect();
    c.max_tool_calls = max;
    c
}

#[tokio::test]
async fn anthropic_tool_loop() {
    let server = MockServer::start(vec![
        anthropic_tool("toolu_1", "get_weather", json!({"city": "Paris"})),
        anthropic_text("It is sunny in Paris."),
    ])
    .await;
    let tools = Arc::new(FakeTools {
        answer: "22°C, sunny".into(),
        ..FakeTools::default()
    });
    let h = harness("anthropic", &server.url(), "", Some(tools.clone()));
    let agent = h.agent(tool_agent("claude-opus-4-6", &["get_weather"], None));
    let resp = call(agent.as_ref(), "Weather in Paris?")
        .await
        .expect("answer");
    assert_eq!(resp.text, "It is sunny in Paris.");
    assert_eq!(
        resp.metadata["tool_calls"],
        json!([{"name": "get_weather", "ok": true}])
    );
    assert_eq!(
        resp.usage.map(|u| u.input_tokens),
        Some(16),
        "summed over turns"
    );
    assert_eq!(
        tools.calls.lock().expect("lock").clone(),
        vec![("get_weather".to_string(), json!({"city": "Paris"}))]
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let first = reqs[0].json();
    assert_eq!(first["tools"][0]["name"], "get_weather");
    assert_eq!(
        first["tools"][0]["input_schema"]["required"],
        json!(["city"])
    );
    let second = reqs[1].json();
    let msgs = second["messages"].as_array().expect("messages");
    assert_eq!(msgs.len(), 3);
    assert_eq!(msgs[1]["role"], "assistant");
    assert_eq!(msgs[1]["content"][1]["type"], "tool_use");
    assert_eq!(
        msgs[2],
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "22°C, sunny", "is_error": false}]})
    );
    assert_eq!(h.built.usage.snapshot().total.tool_calls, 1);
}

#[tokio::test]
async fn openai_tool_budget_exhaustion() {
    let server = MockServer::start(vec![
        openai_tool("call_1", "search", "{\"q\": \"rust\"}"),
        openai_tool("call_2", "search", "{\"q\": \"more\"}"),
    ])
    .await;
    let tools = Arc::new(FakeTools::default());
    let h = harness("openai", &server.url(), "", Some(tools.clone()));
    let agent = h.agent(tool_agent("gpt-4o", &["search"], Some(1)));
    let e = call(agent.as_ref(), "Find things")
        .await
        .expect_err("budget");
    assert_eq!(e.kind, "tool_budget");
    assert!(e.message.contains("budget of 1"), "{}", e.message);
    assert_eq!(tools.calls.lock().expect("lock").len(), 1);
    let second = server.requests()[1].json();
    let msgs = second["messages"].as_array().expect("messages");
    // system, user, assistant(tool_calls), tool, user(budget exhausted)
    assert_eq!(msgs.len(), 5);
    assert_eq!(msgs[2]["tool_calls"][0]["function"]["name"], "search");
    assert_eq!(msgs[3]["role"], "tool");
    assert_eq!(msgs[3]["tool_call_id"], "call_1");
    assert_eq!(msgs[3]["content"], "search backend unavailable");
    assert_eq!(msgs[4]["role"], "user");
    assert!(
        msgs[4]["content"]
            .as_str()
            .expect("text")
            .contains("budget of this task (1 calls) is exhausted")
    );
    assert_eq!(second["tools"][0]["function"]["name"], "search");
}

#[tokio::test]
async fn openai_tool_loop_final_turn_after_exhaustion_succeeds() {
    let server = MockServer::start(vec![
        openai_tool("call_1", "get_weather", "{\"city\": \"Oslo\"}"),
        openai_text("Cold in Oslo."),
    ])
    .await;
    let tools = Arc::new(FakeTools {
        answer: "-3°C".into(),
        ..FakeTools::default()
    });
    let h = harness("openai", &server.url(), "", Some(tools));
    let agent = h.agent(tool_agent("gpt-4o", &["get_weather"], Some(1)));
    assert_eq!(
        call(agent.as_ref(), "Oslo?").await.expect("answer").text,
        "Cold in Oslo."
    );
}

#[tokio::test]
async fn unknown_tool_requested_by_the_model_is_fed_back() {
    let server = MockServer::start(vec![
        openai_tool("call_1", "rm_rf", "{}"),
        openai_text("Sorry."),
    ])
    .await;
    let tools = Arc::new(FakeTools::default());
    let h = harness("openai", &server.url(), "", Some(tools.clone()));
    let agent = h.agent(tool_agent("gpt-4o", &["get_weather"], None));
    let resp = call(agent.as_ref(), "x").await.expect("answer");
    assert_eq!(resp.text, "Sorry.");
    assert!(tools.calls.lock().expect("lock").is_empty());
    let msgs = server.requests()[1].json()["messages"].clone();
    assert!(
        msgs[3]["content"]
            .as_str()
            .expect("text")
            .contains("Unknown tool 'rm_rf'")
    );
}

#[tokio::test]
async fn gemini_tool_loop_resends_thought_signatures() {
    let server = MockServer::start(vec![
        gemini_tool("get_weather", json!({"city": "Rome"})),
        gemini_text("Warm in Rome."),
    ])
    .await;
    let tools = Arc::new(FakeTools {
        answer: "30°C".into(),
        ..FakeTools::default()
    });
    let h = harness("gemini", &server.url(), "", Some(tools));
    let agent = h.agent(tool_agent(
        "gemini-2.5-flash",
        &["get_weather", "search"],
        None,
    ));
    let resp = call(agent.as_ref(), "Rome?").await.expect("answer");
    assert_eq!(resp.text, "Warm in Rome.");
    let first = server.requests()[0].json();
    let decls = &first["tools"][0]["functionDeclarations"];
    assert_eq!(decls[0]["name"], "get_weather");
    assert!(decls[0].get("parameters").is_some());
    assert!(
        decls[1].get("parameters").is_none(),
        "no empty object schema"
    );
    let second = server.requests()[1].json();
    let contents = second["contents"].as_array().expect("contents");
    assert_eq!(contents[1]["role"], "model");
    assert_eq!(contents[1]["parts"][0]["thoughtSignature"], "sig-abc");
    assert_eq!(
        contents[2],
        json!({"role": "user", "parts": [{"functionResponse": {"name": "get_weather", "response": {"result": "30°C"}}}]})
    );
}

#[tokio::test]
async fn declared_tool_nobody_serves_fails_before_the_call() {
    let server = MockServer::start(vec![anthropic_text("never")]).await;
    let h = harness(
        "anthropic",
        &server.url(),
        "",
        Some(Arc::new(FakeTools::default())),
    );
    let agent = h.agent(tool_agent(
        "claude-opus-4-6",
        &["get_weather", "deploy"],
        None,
    ));
    let e = call(agent.as_ref(), "x").await.expect_err("unresolvable");
    assert_eq!(e.kind, "config");
    assert!(
        e.message.contains(
            "Unresolvable tools for agent 'writer': declared=[get_weather, deploy], missing=[deploy], available=[get_weather, search]"
        ),
        "{}",
        e.message
    );
    assert_eq!(server.count(), 0);
    // No executor at all.
    let h = harness("anthropic", &server.url(), "", None);
    let agent = h.agent(tool_agent("claude-opus-4-6", &["get_weather"], None));
    assert_eq!(
        call(agent.as_ref(), "x").await.expect_err("none").kind,
        "config"
    );
    assert_eq!(server.count(), 0);
}

#[tokio::test]
async fn action_handlers_serve_tools() {
    let server = MockServer::start(vec![
        anthropic_tool(
            "toolu_1",
            "log",
            json!({"message": "hello", "level": "warn"}),
        ),
        anthropic_text("logged"),
    ])
    .await;
    let exec = ActionToolExecutor::new(hensu_runtime::ActionHandlerRegistry::with_defaults());
    let h = harness("anthropic", &server.url(), "", Some(exec.into_arc()));
    let agent = h.agent(tool_agent("claude-opus-4-6", &["log"], None));
    assert_eq!(call(agent.as_ref(), "x").await.expect("ok").text, "logged");
    let second = server.requests()[1].json();
    assert_eq!(
        second["messages"][2]["content"][0]["content"],
        "[WARN] hello"
    );
}

// ------------------------------------------------------------------------------------------
// maintainContext
// ------------------------------------------------------------------------------------------

#[tokio::test]
async fn maintain_context_keeps_the_conversation() {
    let server = MockServer::start(vec![
        openai_text("first answer"),
        openai_text("second answer"),
    ])
    .await;
    let h = harness("openai", &server.url(), "", None);
    let mut cfg = agent_config("gpt-4o");
    cfg.maintain_context = true;
    let agent = h.agent(cfg);
    call(agent.as_ref(), "first question").await.expect("1");
    call(agent.as_ref(), "second question").await.expect("2");
    let msgs = server.requests()[1].json()["messages"].clone();
    assert_eq!(
        msgs,
        json!([
            {"role": "system", "content": "You are a careful writer.\n\nAnswer briefly."},
            {"role": "user", "content": "first question"},
            {"role": "assistant", "content": "first answer"},
            {"role": "user", "content": "second question"}
        ])
    );
}

#[tokio::test]
async fn without_maintain_context_calls_are_independent() {
    let server = MockServer::start(vec![anthropic_text("a"), anthropic_text("b")]).await;
    let h = harness("anthropic", &server.url(), "", None);
    let agent = h.agent(agent_config("claude-opus-4-6"));
    call(agent.as_ref(), "one").await.expect("1");
    call(agent.as_ref(), "two").await.expect("2");
    assert_eq!(
        server.requests()[1].json()["messages"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

// ------------------------------------------------------------------------------------------
// Structured output
// ------------------------------------------------------------------------------------------

#[tokio::test]
async fn structured_output_corrects_once() {
    let server = MockServer::start(vec![
        openai_text("Here is my review: looks good."),
        openai_text("Sure: {\"score\": 82, \"approved\": true}"),
    ])
    .await;
    let h = harness("openai", &server.url(), "", None);
    let agent = h.agent(agent_config("gpt-4o"));
    let ctx = Context::default();
    let seen = Mutex::new(Vec::new());
    let outcome = with_structured_output_observed(
        agent.as_ref(),
        AgentRequest {
            node_id: "review",
            prompt: "Review the draft.",
            system_prompt: "sys",
            context: &ctx,
        },
        &["score", "approved"],
        1,
        &|c| seen.lock().expect("lock").push(c.clone()),
    )
    .await
    .expect("structured");
    assert_eq!(outcome.object["approved"], json!(true));
    assert_eq!(outcome.object["score"], json!(82.0));
    assert_eq!(outcome.corrections.len(), 1);
    assert_eq!(outcome.corrections[0].problem, StructuredProblem::NoJson);
    assert_eq!(seen.lock().expect("lock").len(), 1);
    assert_eq!(
        outcome.response.metadata["structured_corrections"],
        json!(1)
    );
    assert_eq!(outcome.response.usage.map(|u| u.input_tokens), Some(40));
    let second = server.requests()[1].json();
    let prompt = second["messages"][1]["content"].as_str().expect("text");
    assert!(prompt.starts_with("Review the draft."), "{prompt}");
    assert!(prompt.contains("looks good"), "{prompt}");
    assert!(prompt.contains("no parsable JSON object"), "{prompt}");
    assert!(prompt.contains("\"score\", \"approved\""), "{prompt}");
    let json = serde_json::to_value(&outcome.corrections[0]).expect("serializes");
    assert_eq!(json["problem"], "no_json");
}

#[tokio::test]
async fn structured_output_fails_after_the_bound() {
    let server = MockServer::start(vec![
        anthropic_text("{\"score\": 70}"),
        anthropic_text("{\"score\": 71}"),
        anthropic_text("never asked"),
    ])
    .await;
    let h = harness("anthropic", &server.url(), "", None);
    let agent = h.agent(agent_config("claude-opus-4-6"));
    let ctx = Context::default();
    let err = with_structured_output(
        agent.as_ref(),
        AgentRequest {
            node_id: "review",
            prompt: "Review.",
            system_prompt: "sys",
            context: &ctx,
        },
        &["score", "approved"],
        1,
    )
    .await
    .expect_err("missing key");
    assert_eq!(err.error.kind, "structured_output");
    assert!(
        err.error
            .message
            .contains("missing the required key(s) \"approved\" (after 1 corrective re-prompt)"),
        "{}",
        err.error.message
    );
    assert_eq!(err.corrections.len(), 1);
    assert_eq!(
        err.corrections[0].problem,
        StructuredProblem::MissingKeys {
            keys: vec!["approved".into()]
        }
    );
    assert_eq!(server.count(), 2);
    assert!(err.last_response.is_some());
}

#[tokio::test]
async fn structured_output_leaves_stub_answers_alone() {
    let stub = hensu_runtime::StubProvider::new(None, None);
    let agent = stub
        .create_agent(&agent_config("stub"), &HashMap::new())
        .expect("stub agent");
    let ctx = Context::default();
    let outcome = with_structured_output(
        agent.as_ref(),
        AgentRequest {
            node_id: "review",
            prompt: "no hints here",
            system_prompt: "sys",
            context: &ctx,
        },
        &["score"],
        1,
    )
    .await
    .expect("unchecked");
    assert!(outcome.corrections.is_empty());
    assert!(outcome.response.text.starts_with("[STUB]"));
}

#[test]
fn structured_checks() {
    assert!(check_structured("prose {\"a\": {\"b\": 1}} more", &["a"]).is_ok());
    assert_eq!(
        check_structured("no json", &[]),
        Err(StructuredProblem::NoJson)
    );
    assert_eq!(
        check_structured("{broken", &["a"]),
        Err(StructuredProblem::NoJson)
    );
    assert!(check_structured("{}", &[]).is_ok());
}

// ------------------------------------------------------------------------------------------
// Secret safety
// ------------------------------------------------------------------------------------------

/// Every error path that can echo the request, with a fake key: no output may contain it.
#[tokio::test]
async fn keys_never_leak() {
    let echo_401 = json!({"type": "error", "error": {"type": "authentication_error",
        "message": format!("invalid x-api-key: {ANTHROPIC_KEY}")}});
    let server = MockServer::start(vec![
        Reply::json(401, echo_401),
        Reply::raw(500, &format!("upstream said: key={ANTHROPIC_KEY} <html>")),
        Reply::raw(200, &format!("not json {ANTHROPIC_KEY}")),
        anthropic_text(&format!("The key you sent was {ANTHROPIC_KEY}.")),
        anthropic_tool("toolu_1", "get_weather", json!({"city": "X"})),
        anthropic_text("done"),
    ])
    .await;
    let tools = Arc::new(FakeTools {
        answer: format!("env dump: ANTHROPIC_API_KEY={ANTHROPIC_KEY}"),
        ..FakeTools::default()
    });
    let h = harness(
        "anthropic",
        &server.url(),
        "[retry]\nmax_attempts = 1\n[circuit_breaker]\nfailure_threshold = 0\n",
        Some(tools),
    );
    let mut outputs: Vec<String> = Vec::new();
    let agent = h.agent(agent_config("claude-opus-4-6"));
    for _ in 0..3 {
        let e = call(agent.as_ref(), "x").await.expect_err("error path");
        outputs.push(format!("{e} {e:?}"));
        assert!(
            e.message.contains("<redacted:ANTHROPIC_API_KEY>"),
            "{}",
            e.message
        );
    }
    let echoed = call(agent.as_ref(), "x").await.expect("echo");
    outputs.push(format!("{echoed:?}"));
    assert!(echoed.text.contains("<redacted:ANTHROPIC_API_KEY>"));
    let tool_agent = h.agent(tool_agent("claude-opus-4-6", &["get_weather"], None));
    let r = call(tool_agent.as_ref(), "x").await.expect("tool loop");
    outputs.push(format!("{r:?}"));
    // The tool's output reached the model redacted.
    let to_model = server.requests()[5].body.clone();
    assert_no_key("request sent after the tool result", &to_model);
    assert!(to_model.contains("<redacted:ANTHROPIC_API_KEY>"));
    // Debug output of every public structure.
    outputs.push(format!("{:?}", h.built));
    outputs.push(format!("{:?}", h.built.redactor));
    for p in &h.built.providers {
        outputs.push(p.name().to_string());
    }
    outputs.push(format!("{:?}", h.built.usage.snapshot()));
    outputs.push(serde_json::to_string(&h.built.usage.snapshot()).expect("json"));
    let key = ApiKey::new("ANTHROPIC_API_KEY", ANTHROPIC_KEY);
    outputs.push(format!("{key:?} {key}"));
    let backend = HttpBackend::new(
        "anthropic",
        ProviderKind::Anthropic,
        server.url(),
        Some(key),
        h.built.redactor.clone(),
    )
    .expect("backend");
    outputs.push(format!("{backend:?}"));
    for o in &outputs {
        assert_no_key("output", o);
    }
    // The key did go where it belongs: the request header.
    assert_eq!(
        server.requests()[0].header("x-api-key"),
        Some(ANTHROPIC_KEY)
    );
    for r in server.requests() {
        assert!(!r.path.contains(ANTHROPIC_KEY));
        assert!(!r.body.contains(ANTHROPIC_KEY), "{}", r.raw_text());
    }
}

#[tokio::test]
async fn keys_never_leak_on_openai_and_gemini_errors() {
    for (name, model, key) in [
        ("openai", "gpt-4o", OPENAI_KEY),
        ("gemini", "gemini-2.5-flash", GOOGLE_KEY),
        ("deepseek", "deepseek-v4-pro", DEEPSEEK_KEY),
    ] {
        let server = MockServer::start(vec![
            Reply::json(403, json!({"error": {"message": format!("bad key {key}"), "status": "PERMISSION_DENIED"}})),
            Reply::json(429, json!({"error": format!("quota exceeded for {key}")})).header("retry-after", "99999"),
        ])
        .await;
        let h = harness(name, &server.url(), "", None);
        let agent = h.agent(agent_config(model));
        for _ in 0..2 {
            let e = call(agent.as_ref(), "x").await.expect_err("error");
            assert_no_key(name, &format!("{e} {e:?}"));
            assert!(e.message.contains("<redacted:"), "{}", e.message);
        }
    }
}

#[test]
fn redactor_from_env_and_events() {
    let r = Redactor::from_lookup(&["ANTHROPIC_API_KEY", "MISSING_API_KEY"], &fake_env);
    assert_eq!(r.names(), vec!["ANTHROPIC_API_KEY"]);
    let mut event = json!({"event": "agent_call", "prompt": format!("use {ANTHROPIC_KEY}"), "nested": [ANTHROPIC_KEY]});
    r.redact_json(&mut event);
    assert_no_key("event", &event.to_string());
    // std::env lookup of an unset variable registers nothing.
    let none = Redactor::from_env(&["HENSU_PROVIDERS_TEST_SURELY_UNSET_API_KEY"]);
    assert!(none.is_empty());
}

// ------------------------------------------------------------------------------------------
// Custom backends, retry notices, redacting listeners
// ------------------------------------------------------------------------------------------

/// A backend answering from a script (no sockets).
struct ScriptedBackend {
    script: Mutex<VecDeque<Result<ChatResponse, ProviderError>>>,
    seen: Mutex<Vec<ChatRequest>>,
}

#[async_trait]
impl ChatBackend for ScriptedBackend {
    fn provider(&self) -> &str {
        "scripted"
    }

    async fn chat(
        &self,
        request: &ChatRequest,
        _timeout: Duration,
    ) -> Result<ChatResponse, ProviderError> {
        self.seen.lock().expect("lock").push(request.clone());
        self.script
            .lock()
            .expect("lock")
            .pop_front()
            .unwrap_or_else(|| Err(ProviderError::new(ErrorKind::Http, "script exhausted")))
    }
}

fn rate_limited(secs: u64) -> Result<ChatResponse, ProviderError> {
    let mut e = ProviderError::new(ErrorKind::RateLimited, "scripted answered HTTP 429: slow");
    e.status = Some(429);
    e.retry_after = Some(Duration::from_secs(secs));
    Err(e)
}

fn scripted_provider(
    script: Vec<Result<ChatResponse, ProviderError>>,
    breaker: CircuitBreakerConfig,
    sleeper: Arc<RecordingSleeper>,
    notices: Arc<Mutex<Vec<RetryNotice>>>,
) -> (ModelProvider, Arc<ScriptedBackend>) {
    let backend = Arc::new(ScriptedBackend {
        script: Mutex::new(script.into()),
        seen: Mutex::new(Vec::new()),
    });
    let mut resilience = Resilience::new(
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(60),
        },
        Arc::new(CircuitBreaker::new(breaker, Arc::new(SystemClock))),
    );
    resilience.sleeper = sleeper;
    resilience.jitter = zero_jitter;
    resilience.on_retry = Some(Arc::new(move |n: &RetryNotice| {
        notices.lock().expect("lock").push(n.clone())
    }));
    let runtime = Arc::new(ProviderRuntime {
        name: "scripted".into(),
        backend: backend.clone(),
        resilience,
        call_timeout: Duration::from_secs(5),
        tools: None,
        redactor: Arc::new(Redactor::empty()),
        usage: Arc::new(UsageTotals::new()),
    });
    let spec = ProviderSpec {
        name: "scripted".into(),
        kind: ProviderKind::OpenAi,
        base_url: "http://unused.invalid".into(),
        api_key_env: None,
        models: vec!["scripted-*".into()],
        priority: 10,
    };
    (ModelProvider::new(spec, true, runtime), backend)
}

#[tokio::test]
async fn custom_backend_retry_notices() {
    let sleeper = Arc::new(RecordingSleeper::default());
    let notices = Arc::new(Mutex::new(Vec::new()));
    let (provider, backend) = scripted_provider(
        vec![
            rate_limited(30),
            Ok(ChatResponse {
                text: "ok".into(),
                ..ChatResponse::default()
            }),
        ],
        CircuitBreakerConfig::default(),
        sleeper.clone(),
        notices.clone(),
    );
    let agent = provider
        .create_agent(&agent_config("scripted-1"), &HashMap::new())
        .expect("agent");
    assert_eq!(call(agent.as_ref(), "x").await.expect("ok").text, "ok");
    assert_eq!(sleeper.slept(), vec![Duration::from_secs(30)]);
    let notices = notices.lock().expect("lock").clone();
    assert_eq!(notices.len(), 1);
    assert_eq!(notices[0].attempt, 1);
    assert_eq!(notices[0].kind, "rate_limited");
    assert_eq!(notices[0].status, Some(429));
    assert_eq!(notices[0].model, "scripted-1");
    assert_eq!(backend.seen.lock().expect("lock").len(), 2);
}

#[tokio::test]
async fn breaker_opening_mid_call_stops_the_retries() {
    let sleeper = Arc::new(RecordingSleeper::default());
    let (provider, backend) = scripted_provider(
        vec![rate_limited(1), rate_limited(1), rate_limited(1)],
        CircuitBreakerConfig {
            failure_threshold: 2,
            cool_down_ms: 60_000,
        },
        sleeper.clone(),
        Arc::new(Mutex::new(Vec::new())),
    );
    let agent = provider
        .create_agent(&agent_config("scripted-1"), &HashMap::new())
        .expect("agent");
    let e = call(agent.as_ref(), "x").await.expect_err("open");
    assert_eq!(e.kind, "rate_limited", "the real failure is reported");
    assert!(
        e.message.contains("circuit breaker is now open"),
        "{}",
        e.message
    );
    assert_eq!(backend.seen.lock().expect("lock").len(), 2);
    assert_eq!(sleeper.slept().len(), 1, "no wait once the breaker is open");
}

#[test]
fn redacting_listeners() {
    use hensu_runtime::{Event, ExecutionListener};
    let redactor = Arc::new(Redactor::new([("ANTHROPIC_API_KEY", ANTHROPIC_KEY)]));
    let prompt = format!("the key is {ANTHROPIC_KEY}");
    let event = Event::AgentCall {
        node_id: "n",
        agent_id: "a",
        branch_id: None,
        model: "claude-opus-4-6",
        prompt: &prompt,
        response: Some(ANTHROPIC_KEY),
        error: None,
        prompt_bytes: 1,
        response_bytes: 1,
        duration_us: 1,
        usage: None,
    };
    let jsonl = RedactingJsonlListener::new(redactor.clone(), Vec::<u8>::new());
    jsonl.on_event(&event);
    let text = String::from_utf8(jsonl.into_inner()).expect("utf8");
    assert_no_key("jsonl", &text);
    assert!(text.contains("<redacted:ANTHROPIC_API_KEY>"));
    assert!(text.ends_with('\n'));
    let seen = Mutex::new(Vec::new());
    let l = RedactingJsonListener::new(redactor, |v: Value| seen.lock().expect("lock").push(v));
    l.on_event(&event);
    drop(l);
    assert_no_key("json", &seen.lock().expect("lock")[0].to_string());
}

// ------------------------------------------------------------------------------------------
// Live tests (opt-in: HENSU_LIVE_TESTS=1 and the provider's key)
// ------------------------------------------------------------------------------------------

async fn live(provider: &str, key_env: &str, model: &str) {
    if std::env::var("HENSU_LIVE_TESTS").ok().as_deref() != Some("1") {
        println!("skipped live {provider} test: set HENSU_LIVE_TESTS=1 (and {key_env}) to run it");
        return;
    }
    if std::env::var(key_env).map_or(true, |v| v.trim().is_empty()) {
        println!("skipped live {provider} test: {key_env} is not set");
        return;
    }
    let env = |n: &str| std::env::var(n).ok();
    let built = build_providers_with(&ProvidersConfig::default(), &env, BuildOptions::default());
    let route = built.route(model).expect("route");
    assert_eq!(route.provider, provider);
    let p = hensu_runtime::select_provider(&built.providers, model).expect("provider");
    let mut cfg = AgentConfig::new("live", "You answer with one word.", model);
    cfg.max_tokens = Some(256);
    let agent = p.create_agent(&cfg, &HashMap::new()).expect("agent");
    let resp = call(agent.as_ref(), "Say the word: pong").await;
    let key = std::env::var(key_env).unwrap_or_default();
    match resp {
        Ok(r) => {
            assert!(!r.text.contains(&key));
            assert!(r.usage.is_some_and(|u| u.output_tokens > 0), "{r:?}");
            println!("live {provider}: {:?}", r.text);
        }
        Err(e) => {
            assert!(!e.message.contains(&key));
            panic!("live {provider} call failed: {e}");
        }
    }
}

#[tokio::test]
async fn live_anthropic() {
    live("anthropic", "ANTHROPIC_API_KEY", "claude-haiku-4-5").await;
}

#[tokio::test]
async fn live_openai() {
    live("openai", "OPENAI_API_KEY", "gpt-4o").await;
}

#[tokio::test]
async fn live_gemini() {
    live("gemini", "GOOGLE_API_KEY", "gemini-2.5-flash").await;
}

#[tokio::test]
async fn live_deepseek() {
    live("deepseek", "DEEPSEEK_API_KEY", "deepseek-chat").await;
}
