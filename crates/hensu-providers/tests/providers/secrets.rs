//! Secret safety: no key in any error, answer, request echo or event.

use crate::support::*;

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
