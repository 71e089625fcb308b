//! Structured output: bounded corrective re-prompts.

use crate::support::*;

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
