//! Retries, `Retry-After`, per-request timeouts, the circuit breaker and cancellation.

use crate::support::*;

#[tokio::test]
async fn retry_honours_retry_after_seconds() {
    let server = MockServer::start(vec![
        Reply::json(
            429,
            json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
        )
        .header("retry-after", "7"),
        anthropic_text("after the wait"),
    ])
    .await;
    let h = harness(
        "anthropic",
        &server.url(),
        "[retry]\nmax_delay_ms = 60000\n",
        None,
    );
    let agent = h.agent(agent_config("claude-opus-4-6"));
    let resp = call(agent.as_ref(), "x").await.expect("answer");
    assert_eq!(resp.text, "after the wait");
    assert_eq!(server.count(), 2);
    assert_eq!(h.sleeper.slept(), vec![Duration::from_secs(7)]);
    assert_eq!(resp.metadata["retries"], json!(1));
    assert_eq!(resp.metadata["requests"], json!(2));
    assert_eq!(h.built.usage.snapshot().total.retries, 1);
}

#[tokio::test]
async fn retry_after_beyond_max_delay_fails_at_once() {
    let server = MockServer::start(vec![
        Reply::json(429, json!({"error": {"message": "quota"}})).header("retry-after", "3600"),
    ])
    .await;
    let h = harness("openai", &server.url(), "", None);
    let agent = h.agent(agent_config("gpt-4o"));
    let e = call(agent.as_ref(), "x").await.expect_err("rate limited");
    assert_eq!(e.kind, "rate_limited");
    assert!(e.message.contains("retry after 3600 s"), "{}", e.message);
    assert_eq!(server.count(), 1);
    assert!(h.sleeper.slept().is_empty());
}

#[test]
fn retry_after_http_date() {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_767); // Sun, 06 Nov 1994 08:49:27 GMT
    assert_eq!(
        parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now),
        Some(Duration::from_secs(10))
    );
    assert_eq!(
        parse_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", now),
        Some(Duration::ZERO)
    );
    assert_eq!(parse_retry_after("12", now), Some(Duration::from_secs(12)));
    assert_eq!(
        parse_retry_after("1.5", now),
        Some(Duration::from_millis(1500))
    );
    assert_eq!(parse_retry_after("soon", now), None);
}

#[tokio::test]
async fn retry_after_date_header_is_honoured() {
    let at = httpdate_in(Duration::from_secs(30));
    let server = MockServer::start(vec![
        Reply::json(503, json!({"error": {"message": "overloaded"}})).header("retry-after", &at),
        gemini_text("back"),
    ])
    .await;
    let h = harness("gemini", &server.url(), "", None);
    let agent = h.agent(agent_config("gemini-2.5-flash"));
    let resp = call(agent.as_ref(), "x").await.expect("answer");
    assert_eq!(resp.text, "back");
    let slept = h.sleeper.slept();
    assert_eq!(slept.len(), 1);
    assert!(
        slept[0] > Duration::from_secs(25) && slept[0] <= Duration::from_secs(30),
        "{slept:?}"
    );
}

fn httpdate_in(d: Duration) -> String {
    // IMF-fixdate formatting without a dependency: use the crate's parser to check.
    let t = SystemTime::now() + d;
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("after epoch")
        .as_secs();
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][(days % 7) as usize];
    // civil-from-days (Howard Hinnant)
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if mo <= 2 { y + 1 } else { y };
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ][(mo - 1) as usize];
    format!("{weekday}, {d:02} {month} {y} {h:02}:{m:02}:{s:02} GMT")
}

#[tokio::test]
async fn server_errors_back_off_exponentially_then_give_up() {
    let server = MockServer::start(vec![
        Reply::json(500, json!({"error": {"message": "boom"}})),
        Reply::json(502, json!({"error": {"message": "bad gateway"}})),
        Reply::json(503, json!({"error": {"message": "unavailable"}})),
    ])
    .await;
    let h = harness(
        "openai",
        &server.url(),
        "[retry]\nmax_attempts = 3\nbase_delay_ms = 100\nmax_delay_ms = 1000\n[circuit_breaker]\nfailure_threshold = 10\n",
        None,
    );
    let agent = h.agent(agent_config("gpt-4o"));
    let e = call(agent.as_ref(), "x").await.expect_err("fails");
    assert_eq!(e.kind, "server_error");
    assert!(e.message.contains("HTTP 503"), "{}", e.message);
    assert!(e.message.contains("after 3 attempts"), "{}", e.message);
    assert!(e.message.contains("Agent 'writer'"), "{}", e.message);
    assert_eq!(server.count(), 3);
    // Equal jitter with a zero jitter source: half of 100 ms, then half of 200 ms.
    assert_eq!(
        h.sleeper.slept(),
        vec![Duration::from_millis(50), Duration::from_millis(100)]
    );
    let usage = h.built.usage.snapshot();
    assert_eq!(usage.total.failed_calls, 1);
    assert_eq!(usage.total.requests, 3);
}

#[tokio::test]
async fn anthropic_overloaded_529_is_retried() {
    let server = MockServer::start(vec![
        Reply::json(
            529,
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
        anthropic_text("fine now"),
    ])
    .await;
    let h = harness("anthropic", &server.url(), "", None);
    let agent = h.agent(agent_config("claude-opus-4-5"));
    assert_eq!(
        call(agent.as_ref(), "x").await.expect("ok").text,
        "fine now"
    );
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let server = MockServer::start(vec![Reply::json(
        400,
        json!({"error": {"type": "invalid_request_error", "message": "temperature out of range"}}),
    )])
    .await;
    let h = harness("anthropic", &server.url(), "", None);
    let agent = h.agent(agent_config("claude-opus-4-6"));
    let e = call(agent.as_ref(), "x").await.expect_err("fails");
    assert_eq!(e.kind, "http");
    assert!(
        e.message
            .contains("HTTP 400: invalid_request_error: temperature out of range"),
        "{}",
        e.message
    );
    assert_eq!(server.count(), 1);
}

/// The server never answers within the test, so the call can only end through the per-request
/// timeout (event ordering, no wall clock).
#[tokio::test]
async fn slow_answers_time_out_per_request() {
    let server = MockServer::start(vec![
        anthropic_text("too late").delayed(Duration::from_secs(60)),
        anthropic_text("too late").delayed(Duration::from_secs(60)),
    ])
    .await;
    let h = harness(
        "anthropic",
        &server.url(),
        "[timeouts]\ncall_ms = 200\n[retry]\nmax_attempts = 2\n",
        None,
    );
    let agent = h.agent(agent_config("claude-opus-4-6"));
    let e = call(agent.as_ref(), "x").await.expect_err("times out");
    assert_eq!(e.kind, "timeout");
    assert!(e.message.contains("within 200 ms"), "{}", e.message);
    assert!(e.message.contains("after 2 attempts"), "{}", e.message);
    assert_eq!(server.count(), 2);
}

#[tokio::test]
async fn agent_timeout_seconds_override_the_default() {
    let server = MockServer::start(vec![openai_text("x").delayed(Duration::from_secs(60))]).await;
    let h = harness(
        "openai",
        &server.url(),
        "[timeouts]\ncall_ms = 60000\n[retry]\nmax_attempts = 1\n",
        None,
    );
    let mut cfg = agent_config("gpt-4o");
    cfg.timeout = Some(1);
    let agent = h.agent(cfg);
    let e = call(agent.as_ref(), "x").await.expect_err("times out");
    assert_eq!(e.kind, "timeout");
    assert!(e.message.contains("within 1000 ms"), "{}", e.message);
}

#[tokio::test]
async fn malformed_json_answer() {
    let server = MockServer::start(vec![Reply::raw(200, "{\"choices\": [ nope")]).await;
    let h = harness("openai", &server.url(), "", None);
    let agent = h.agent(agent_config("gpt-4o"));
    let e = call(agent.as_ref(), "x").await.expect_err("malformed");
    assert_eq!(e.kind, "malformed_response");
    assert!(e.message.contains("invalid JSON"), "{}", e.message);
    assert_eq!(server.count(), 1, "not retried");
}

#[tokio::test]
async fn answer_outside_the_protocol() {
    for (name, model) in [
        ("anthropic", "claude-opus-4-6"),
        ("openai", "gpt-4o"),
        ("gemini", "gemini-2.5-flash"),
    ] {
        let server = MockServer::start(vec![Reply::json(200, json!({"unexpected": true}))]).await;
        let h = harness(name, &server.url(), "", None);
        let agent = h.agent(agent_config(model));
        let e = call(agent.as_ref(), "x").await.expect_err("malformed");
        assert_eq!(e.kind, "malformed_response", "{name}");
        assert!(
            e.message.contains("does not follow the protocol"),
            "{}",
            e.message
        );
    }
}

#[tokio::test]
async fn connection_refused_is_a_transport_error() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    drop(listener);
    let h = harness("anthropic", &url, "[retry]\nmax_attempts = 2\n", None);
    let agent = h.agent(agent_config("claude-opus-4-6"));
    let e = call(agent.as_ref(), "x").await.expect_err("refused");
    assert_eq!(e.kind, "transport");
    assert_eq!(h.sleeper.slept().len(), 1, "retried once");
}

#[tokio::test]
async fn circuit_breaker_opens_then_half_opens() {
    let server = MockServer::start(vec![
        Reply::json(500, json!({"error": {"message": "down"}})),
        Reply::json(500, json!({"error": {"message": "down"}})),
        anthropic_text("recovered"),
        anthropic_text("still fine"),
    ])
    .await;
    let h = harness(
        "anthropic",
        &server.url(),
        "[retry]\nmax_attempts = 1\n[circuit_breaker]\nfailure_threshold = 2\ncool_down_ms = 10000\n",
        None,
    );
    let agent = h.agent(agent_config("claude-opus-4-6"));
    assert_eq!(
        call(agent.as_ref(), "1").await.expect_err("500").kind,
        "server_error"
    );
    assert_eq!(
        call(agent.as_ref(), "2").await.expect_err("500").kind,
        "server_error"
    );
    let open = call(agent.as_ref(), "3").await.expect_err("open");
    assert_eq!(open.kind, "circuit_open");
    assert!(
        open.message.contains("circuit breaker is open"),
        "{}",
        open.message
    );
    assert_eq!(server.count(), 2, "an open breaker sends nothing");
    // Another agent of the same provider shares the breaker.
    let other = h.agent(AgentConfig::new("critic", "Critic", "claude-haiku-4-5"));
    assert_eq!(
        call(other.as_ref(), "4").await.expect_err("open").kind,
        "circuit_open"
    );
    h.clock.advance(Duration::from_secs(10));
    assert_eq!(
        call(agent.as_ref(), "5").await.expect("probe").text,
        "recovered"
    );
    assert_eq!(
        call(agent.as_ref(), "6").await.expect("closed").text,
        "still fine"
    );
    assert_eq!(server.count(), 4);
}

#[tokio::test]
async fn dropping_the_call_aborts_the_http_request() {
    let server = HangingServer::start().await;
    let h = harness("anthropic", &server.url(), "", None);
    let agent = h.agent(agent_config("claude-opus-4-6"));
    let task = tokio::spawn(async move { call(agent.as_ref(), "x").await });
    wait_until(|| server.count() == 1).await;
    task.abort();
    wait_until(|| server.client_aborted()).await;
}

#[tokio::test]
async fn cancel_token_aborts_the_request() {
    let server = HangingServer::start().await;
    let cancel = hensu_runtime::CancelToken::new();
    let h = harness_with("openai", &server.url(), "", None, Some(cancel.clone()));
    let agent = h.agent(agent_config("gpt-4o"));
    let task = tokio::spawn(async move { call(agent.as_ref(), "x").await });
    wait_until(|| server.count() == 1).await;
    cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("returns promptly")
        .expect("task");
    let e = result.expect_err("cancelled");
    assert_eq!(e.kind, "cancelled");
    wait_until(|| server.client_aborted()).await;
}
