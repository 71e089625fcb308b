//! Custom backends (no sockets), retry notices, redacting listeners.

use crate::support::*;

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
    let text = String::from_utf8(jsonl.into_inner().expect("the writer")).expect("utf8");
    assert_no_key("jsonl", &text);
    assert!(text.contains("<redacted:ANTHROPIC_API_KEY>"));
    assert!(text.ends_with('\n'));
    let seen = Mutex::new(Vec::new());
    let l = RedactingJsonListener::new(redactor, |v: Value| seen.lock().expect("lock").push(v));
    l.on_event(&event);
    drop(l);
    assert_no_key("json", &seen.lock().expect("lock")[0].to_string());
}
