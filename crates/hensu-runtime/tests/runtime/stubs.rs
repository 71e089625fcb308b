//! Stub agents: the generated fall-back, `{{name}}` substitution, the lookup ladder and scenarios.

use super::*;

#[test]
fn stub_fallback_generator_byte_for_byte() {
    assert_eq!(
        generate_fallback("draft", "writer", "claude-x", "Write something nice."),
        "[STUB] Auto-generated response for 'draft' (agent: writer, model: claude-x)."
    );
    assert_eq!(
        generate_fallback("n", "a", "m", "Reply in Json please"),
        DEFAULT_JSON_STUB
    );
    assert_eq!(
        DEFAULT_JSON_STUB,
        "{\n    \"result\": \"stub_response\",\n    \"status\": \"success\",\n    \"message\": \"This is a stub JSON response\"\n}"
    );
    assert_eq!(
        generate_fallback("n", "a", "m", "OUTPUT AS a list"),
        DEFAULT_JSON_STUB
    );
    let prompt = "List facts.\nRespond as JSON: {\"facts\": \"...\", \"more\": 1}\n  \"bad key\": 1\n \"<x>\": 2\nnone here\n\"facts\":again\n\"\":empty";
    assert_eq!(
        generate_fallback("n", "a", "m", prompt),
        "{\n    \"facts\": \"stub_value_for_facts\",\n    \"facts\": \"stub_value_for_facts\",\n    \"\": \"stub_value_for_\"\n}"
    );
    // The engine instructions contain "JSON" but no `":` line: default object.
    let enriched = format!("Write.\n\n{}", SCORE_INSTRUCTION);
    assert_eq!(
        generate_fallback("n", "a", "m", &enriched),
        DEFAULT_JSON_STUB
    );
}

#[test]
fn stub_double_brace_substitution() {
    let c = ctx(json!({"topic": "rust", "n": 85.0, "m": {"a": 1, "b": [true]}, "nil": null}));
    assert_eq!(
        substitute_double_braces(
            "{{topic}}/{{n}}/{{m}}/{{nil}}/{{missing}}/{{ x }}/{{{topic}}}/{topic}",
            &c
        ),
        "rust/85.0/{a=1, b=[true]}///{{ x }}/{rust}/{topic}"
    );
}

#[tokio::test]
async fn stub_lookup_ladder_and_scenarios() {
    let files = MemoryStubFiles::new()
        .with("default", "write", "default node {{topic}}")
        .with("default", "writer", "default agent")
        .with("default", "other", "default other-agent")
        .with("strict", "writer", "strict agent")
        .with("loud", "write", "loud node");
    let provider = Arc::new(StubProvider::new(
        Some(Box::new(files)),
        Some("strict".into()),
    ));
    provider
        .registry()
        .register("default", "review", "programmatic default");
    provider
        .registry()
        .register("strict", "review", "programmatic strict");
    let mut wf = workflow(
        "write",
        vec![
            node("write", "x", &["article"], vec![success("review")]),
            node("review", "y", &["verdict"], vec![success("third")]),
            node("third", "z", &["t"], vec![success("e")]),
            end("e", ExitStatus::Success),
        ],
    );
    wf.agents
        .insert("write-agent".into(), AgentConfig::new("writer", "W", "m"));
    if let Some(Node::Standard(n)) = wf.nodes.get_mut("write") {
        n.agent_id = Some("writer".into());
    }
    if let Some(Node::Standard(n)) = wf.nodes.get_mut("third") {
        n.agent_id = Some("other".into());
    }
    wf.agents
        .insert("other".into(), AgentConfig::new("other", "O", "m"));
    let engine = Engine::builder().provider(provider.clone()).build();
    // configured scenario `strict`: agent file of the scenario beats the default node file.
    let r = engine
        .run(
            &wf,
            ctx(json!({"topic": "t"})),
            RunCtx::new(&CancelToken::new()),
        )
        .await;
    assert_eq!(r.state.context["article"], json!("strict agent"));
    assert_eq!(r.state.context["verdict"], json!("programmatic strict"));
    assert_eq!(
        r.state.context["t"],
        json!("default other-agent"),
        "falls back to default/"
    );
    // The context's stub_scenario wins; a scenario without files falls back to default node file.
    let r = engine
        .run(
            &wf,
            ctx(json!({"topic": "t", "stub_scenario": "loud"})),
            RunCtx::new(&CancelToken::new()),
        )
        .await;
    assert_eq!(r.state.context["article"], json!("loud node"));
    // programmatic `default` registrations are not consulted by the fallback: generated text.
    assert_eq!(
        r.state.context["verdict"],
        json!(
            "{\n    \"result\": \"stub_response\",\n    \"status\": \"success\",\n    \"message\": \"This is a stub JSON response\"\n}"
        )
    );
    let r = engine
        .run(
            &wf,
            ctx(json!({"topic": "t", "stub_scenario": "default"})),
            RunCtx::new(&CancelToken::new()),
        )
        .await;
    assert_eq!(r.state.context["article"], json!("default node t"));
    assert_eq!(r.state.context["verdict"], json!("programmatic default"));
}
