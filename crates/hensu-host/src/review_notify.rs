//! The review notification webhook of a server (docs/server.md, *Review notifications*): when
//! a run pauses for a human review, `[server] review_webhook` receives one JSON
//! `execution.review_requested` message, so a team is told without watching the console or
//! an event stream. The operator configured the URL, so the workflows' egress policy does not
//! apply (as for model providers); the message carries ids only — no output, context or
//! secret — and a bearer token, when `HENSU_REVIEW_WEBHOOK_TOKEN` is set, from the
//! environment only.

use std::time::Duration;

use serde_json::Value;

/// The environment variable whose value is sent as `Authorization: Bearer …`.
pub const REVIEW_WEBHOOK_TOKEN_ENV: &str = "HENSU_REVIEW_WEBHOOK_TOKEN";

/// Attempts per message (the first, then after 1 s and 2 s).
const ATTEMPTS: u32 = 3;

/// Posts `message` to `url`, retrying a failed attempt (a network error or a 5xx) twice;
/// gives up with the last error. Each attempt is bounded by 10 s.
pub async fn notify(url: &str, message: &Value) -> Result<(), String> {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("review webhook: {e}"))?;
    let token = std::env::var(REVIEW_WEBHOOK_TOKEN_ENV)
        .ok()
        .filter(|t| !t.trim().is_empty());
    let mut last = String::new();
    for attempt in 0..ATTEMPTS {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_secs(u64::from(attempt))).await;
        }
        let mut request = client.post(url).json(message);
        if let Some(t) = &token {
            request = request.bearer_auth(t);
        }
        match request.send().await {
            Ok(r) if r.status().is_success() => return Ok(()),
            // A 4xx will not change on a retry.
            Ok(r) if r.status().is_client_error() => {
                return Err(format!("review webhook answered {}", r.status()));
            }
            Ok(r) => last = format!("review webhook answered {}", r.status()),
            Err(e) => last = format!("review webhook: {}", e.without_url()),
        }
    }
    Err(last)
}
