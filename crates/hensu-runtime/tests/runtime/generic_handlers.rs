//! Generic node handlers the engine ships: validator and data-transformer (api-caller, which
//! makes HTTP calls, is tested in hensu-host).

use super::*;

fn generic(id: &str, ty: &str, config: Value) -> Node {
    Node::Generic(GenericNode {
        id: id.into(),
        executor_type: ty.into(),
        config: map(config),
        transition_rules: vec![success("ok"), failure(Some("ko"))],
        rubric: None,
    })
}

async fn run_generic(config: Value, ty: &str, input: Value) -> (RunResult, Harness) {
    let wf = workflow(
        "g",
        vec![
            generic("g", ty, config),
            end("ok", ExitStatus::Success),
            end("ko", ExitStatus::Failure),
        ],
    );
    let h = harness(&Script::new());
    let r = h.run(&wf, input).await;
    (r, h)
}

#[tokio::test]
async fn validator_handler() {
    let cfg = json!({"field": "input", "required": true, "minLength": 10, "maxLength": 20,
                     "pattern": "^[a-z ]+$", "errorMessage": "letters only"});
    let (r, _) = run_generic(cfg.clone(), "validator", json!({"input": "hello world"})).await;
    assert_eq!(completed(&r).1, "ok");
    assert_eq!(r.state.context["g"], json!("Validation passed for input"));
    let (r, _) = run_generic(cfg.clone(), "validator", json!({"input": "Hi!"})).await;
    assert_eq!(completed(&r).1, "ko");
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some("input must be at least 10 characters; letters only")
    );
    let (r, _) = run_generic(cfg.clone(), "validator", json!({"input": "   "})).await;
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some("input is required")
    );
    let (r, _) = run_generic(cfg, "validator", json!({"input": "a".repeat(25)})).await;
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some("input must be at most 20 characters")
    );
}

#[tokio::test]
async fn data_transformer_handler() {
    let cfg = json!({"inputField": "input", "outputField": "clean", "operations": ["trim", "normalize", "uppercase"]});
    let (r, _) = run_generic(
        cfg.clone(),
        "data-transformer",
        json!({"input": "  a \n\t b  c "}),
    )
    .await;
    assert_eq!(r.state.context["clean"], json!("A B C"));
    assert_eq!(r.state.context["g"], json!("A B C"));
    let (r, _) = run_generic(cfg, "data-transformer", json!({})).await;
    assert_eq!(completed(&r).1, "ko");
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some("Input field 'input' not found")
    );
}
