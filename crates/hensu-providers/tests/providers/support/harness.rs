//! Fake keys, a recording sleeper, a manual clock and providers pointed at a mock server.

use super::*;

pub const ANTHROPIC_KEY: &str = "sk-ant-test-FAKE-0123456789abcdef";
pub const OPENAI_KEY: &str = "sk-openai-test-FAKE-9876543210";
pub const GOOGLE_KEY: &str = "AIzaFAKE-google-test-key-000111";
pub const DEEPSEEK_KEY: &str = "sk-deepseek-FAKE-key-555666777";

pub fn fake_env(name: &str) -> Option<String> {
    match name {
        "ANTHROPIC_API_KEY" => Some(ANTHROPIC_KEY.to_string()),
        "OPENAI_API_KEY" => Some(OPENAI_KEY.to_string()),
        "GOOGLE_API_KEY" => Some(GOOGLE_KEY.to_string()),
        "DEEPSEEK_API_KEY" => Some(DEEPSEEK_KEY.to_string()),
        _ => None,
    }
}

pub const ALL_KEYS: [&str; 4] = [ANTHROPIC_KEY, OPENAI_KEY, GOOGLE_KEY, DEEPSEEK_KEY];

pub fn assert_no_key(what: &str, text: &str) {
    for k in ALL_KEYS {
        assert!(!text.contains(k), "{what} leaks a key: {text}");
    }
}

/// Records requested sleeps and returns at once.
#[derive(Default)]
pub struct RecordingSleeper {
    slept: Mutex<Vec<Duration>>,
}

impl Sleeper for RecordingSleeper {
    fn sleep(&self, d: Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        self.slept.lock().expect("lock").push(d);
        Box::pin(std::future::ready(()))
    }
}

impl RecordingSleeper {
    pub fn slept(&self) -> Vec<Duration> {
        self.slept.lock().expect("lock").clone()
    }
}

pub struct ManualClock {
    base: Instant,
    offset: Mutex<Duration>,
}

impl ManualClock {
    pub fn new() -> Self {
        ManualClock {
            base: Instant::now(),
            offset: Mutex::new(Duration::ZERO),
        }
    }

    pub fn advance(&self, d: Duration) {
        *self.offset.lock().expect("lock") += d;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.base + *self.offset.lock().expect("lock")
    }
}

pub fn zero_jitter() -> f64 {
    0.0
}

pub struct Harness {
    pub built: BuiltProviders,
    pub sleeper: Arc<RecordingSleeper>,
    pub clock: Arc<ManualClock>,
}

/// Providers whose built-in `name` points at `url`; `extra` is appended to `hensu.toml`.
pub fn harness(
    name: &str,
    url: &str,
    extra: &str,
    tools: Option<Arc<dyn ToolExecutor>>,
) -> Harness {
    harness_with(name, url, extra, tools, None)
}

pub fn harness_with(
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
    pub fn agent(&self, config: AgentConfig) -> Arc<dyn Agent> {
        let p = hensu_runtime::select_provider(&self.built.providers, &config.model)
            .expect("a provider");
        p.create_agent(&config, &HashMap::new()).expect("agent")
    }
}

pub fn agent_config(model: &str) -> AgentConfig {
    let mut c = AgentConfig::new("writer", "You are a careful writer.", model);
    c.instructions = Some("Answer briefly.".to_string());
    c
}

pub async fn call(agent: &dyn Agent, prompt: &str) -> Result<AgentResponse, AgentError> {
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
