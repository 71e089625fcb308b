//! The webhook and api-caller handlers under an egress policy (a server run's, docs/server.md,
//! *Egress*), against a wiremock server on 127.0.0.1: refused before anything is sent, with a
//! message naming the host and the rule; sent when the allow-list covers the address.

use super::*;
use hensu_egress::EgressPolicy;
use hensu_host::{ApiCallerHandler, WebhookHandler};
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, ResponseTemplate};

async fn listener(expected: u64) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_string("secret"))
        .expect(expected)
        .mount(&server)
        .await;
    server
}

fn policy(allow: &[&str]) -> Option<Arc<EgressPolicy>> {
    Some(Arc::new(EgressPolicy::from_entries(allow).unwrap()))
}

fn api_caller(endpoint: &str) -> GenericNode {
    GenericNode {
        id: "fetch".into(),
        executor_type: "api-caller".into(),
        config: map(json!({"endpoint": endpoint, "outputField": "got"})),
        transition_rules: vec![],
        rubric: None,
    }
}

#[tokio::test]
async fn a_denied_address_is_refused_naming_the_host_and_the_rule() {
    let server = listener(0).await;
    let port = server.address().port();
    let webhook = WebhookHandler::new(None).with_egress(policy(&[]));
    let caller = ApiCallerHandler::new().with_egress(policy(&[]));
    for host in ["127.0.0.1", "localhost", "2130706433", "[::ffff:127.0.0.1]"] {
        let url = format!("http://{host}:{port}/hook?token=abc");
        let r = webhook
            .execute(&map(json!({"url": url})), &Context::default())
            .await;
        assert!(!r.success, "{host}");
        assert!(r.output.contains("egress refused: "), "{}", r.output);
        assert!(
            r.output.ends_with(
                "a loopback address; allow it with `[server.egress] allow` in hensu.toml"
            ),
            "{}",
            r.output
        );
        let mut ctx = Context::default();
        let r = caller.handle(&api_caller(&url), &mut ctx).await;
        let reason = r.error.clone().unwrap_or_default();
        assert!(reason.contains("egress refused: "), "{reason}");
        assert!(ctx.get("got").is_none());
    }
    server.verify().await;
}

#[tokio::test]
async fn an_allowed_range_is_sent_and_no_policy_is_a_local_run() {
    let server = listener(3).await;
    let url = format!("{}/hook", server.uri());
    let allowed = WebhookHandler::new(None).with_egress(policy(&["127.0.0.1/32"]));
    let r = allowed
        .execute(&map(json!({"url": url})), &Context::default())
        .await;
    assert!(r.success, "{}", r.output);
    let mut ctx = Context::default();
    let caller = ApiCallerHandler::new().with_egress(policy(&["127.0.0.1/32"]));
    let r = caller.handle(&api_caller(&url), &mut ctx).await;
    assert_eq!(r.error, None);
    assert_eq!(ctx.get("got"), Some(&json!("secret")));
    let local = WebhookHandler::new(None);
    let r = local
        .execute(&map(json!({"url": url})), &Context::default())
        .await;
    assert!(r.success, "{}", r.output);
    server.verify().await;
}
