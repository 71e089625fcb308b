//! The tool loop of each protocol.

use crate::support::*;

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
