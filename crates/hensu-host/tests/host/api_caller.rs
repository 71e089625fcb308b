//! The host's generic node handler: api-caller, against a wiremock server.

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
async fn api_caller_makes_a_real_request() {
    use wiremock::matchers::{body_json, method, path, query_param};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/lookup"))
        .and(query_param("q", "a b&c"))
        .and(body_json(json!({"input": "a b&c"})))
        .respond_with(ResponseTemplate::new(200).set_body_string(r#"{"answer": 42}"#))
        .expect(1)
        .mount(&server)
        .await;
    let url = server.uri();
    let cfg = json!({"endpoint": format!("{url}/lookup?q={{input}}"), "method": "POST", "outputField": "resp"});
    let (r, _) = run_generic(cfg, "api-caller", json!({"input": "a b&c"})).await;
    assert_eq!(completed(&r).1, "ok");
    assert_eq!(r.state.context["resp"], json!(r#"{"answer": 42}"#));
    let requests = server.received_requests().await.unwrap();
    assert_eq!(
        requests[0].url.query(),
        Some("q=a%20b%26c"),
        "percent-encoded"
    );

    let down = MockServer::start().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(503).set_body_string("down"))
        .mount(&down)
        .await;
    let (r, _) = run_generic(json!({"endpoint": down.uri()}), "api-caller", json!({})).await;
    assert_eq!(completed(&r).1, "ko");
    assert!(
        r.state.history[0]
            .error
            .as_deref()
            .unwrap()
            .contains("failed with status 503: down")
    );
}
