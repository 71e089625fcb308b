//! A stream never outlives the token that opened it (docs/server.md, *Authentication and
//! tenants*): the tenant event stream and the MCP gateway's session opened with a token that
//! stops being accepted in a few seconds end then, while the same streams opened with a
//! long-lived token stay open; a reconnect with the expired token is refused.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::StreamExt as _;
use reqwest::StatusCode;
use serde_json::json;

use crate::harness::{Server, claims, token};

/// A token of `tenant` accepted for about `secs` more seconds: its `exp` is in the past by less
/// than the server's 60 s leeway.
fn expiring(tenant: &str, secs: u64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    claims(json!({"sub": "user", "tenant_id": tenant, "exp": now + secs - 60}))
}

/// Opens `path` with `bearer`; resolves when the body ends (`None` if it is still open after
/// `limit`).
async fn open_until_end(s: &Server, path: &str, bearer: &str, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    let resp = s
        .http
        .get(s.url(path))
        .bearer_auth(bearer)
        .send()
        .await
        .expect("request");
    assert_eq!(resp.status(), StatusCode::OK, "{path}");
    let mut body = resp.bytes_stream();
    let ended = tokio::time::timeout(limit, async {
        while let Some(Ok(_)) = body.next().await {}
    })
    .await;
    ended.ok().map(|()| started.elapsed())
}

pub async fn streams_end_when_their_token_does(s: Server) {
    // A gateway session is one per tenant (a second connect replaces the first): the two
    // sessions are two tenants'.
    let routes: [fn(&str) -> String; 2] = [
        |_| "/api/v1/executions/events".to_string(),
        |tenant| format!("/mcp/connect?clientId={tenant}"),
    ];
    for route in routes {
        let (short, long) = (expiring("acme", 3), token("globex"));
        let (path, other) = (route("acme"), route("globex"));
        let (expired, lasting) = tokio::join!(
            open_until_end(&s, &path, &short, Duration::from_secs(30)),
            open_until_end(&s, &other, &long, Duration::from_secs(8)),
        );
        let after = expired.unwrap_or_else(|| panic!("{path}: still open after its token"));
        assert!(
            after >= Duration::from_secs(1),
            "{path}: ended at once ({after:?})"
        );
        assert!(lasting.is_none(), "{path}: a valid token's stream ended");
        let again = s
            .http
            .get(s.url(&path))
            .bearer_auth(&short)
            .send()
            .await
            .expect("request");
        assert_eq!(again.status(), StatusCode::UNAUTHORIZED, "{path}");
    }
}
