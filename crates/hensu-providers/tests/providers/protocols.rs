//! Each protocol's request shape and answer decoding against a mock server.

use crate::support::*;

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
