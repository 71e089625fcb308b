//! `maintainContext`: conversation history across calls.

use crate::support::*;

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
