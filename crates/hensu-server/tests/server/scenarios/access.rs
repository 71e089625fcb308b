//! Access: tenant isolation on every endpoint, unknown ids, authentication, and the
//! operations endpoints.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::{A, B, delete, events, get, post, push_ok, start};
use crate::harness::{Server, claims, fixture};

pub async fn tenant_isolation_per_endpoint(s: Server) {
    push_ok(&s, A, "reviewed").await;
    let id = start(&s, A, "reviewed").await;
    let evs = events(&s, A, &id, None).await;
    let corr = evs.last().expect("e").data["correlationId"].clone();
    // B sees none of A's things.
    assert_eq!(get(&s, B, "/api/v1/workflows").await.1, json!([]));
    assert_eq!(
        get(&s, B, "/api/v1/workflows/reviewed").await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        delete(&s, B, "/api/v1/workflows/reviewed").await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        post(
            &s,
            B,
            "/api/v1/executions",
            json!({"workflowId": "reviewed"})
        )
        .await
        .0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        get(&s, B, &format!("/api/v1/executions/{id}")).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        get(&s, B, &format!("/api/v1/executions/{id}/result"))
            .await
            .0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        get(&s, B, &format!("/api/v1/executions/{id}/events"))
            .await
            .0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        post(
            &s,
            B,
            &format!("/api/v1/executions/{id}/resume"),
            json!({"decision": "approve", "correlationId": corr})
        )
        .await
        .0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        post(&s, B, &format!("/api/v1/executions/{id}/cancel"), json!({}))
            .await
            .0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(get(&s, B, "/api/v1/executions/paused").await.1, json!([]));
    assert_eq!(get(&s, B, "/api/v1/executions").await.1, json!([]));
    // B's own workflow of the same id is separate.
    push_ok(&s, B, "linear").await;
    let mut other = fixture("linear");
    other["id"] = json!("reviewed");
    let (st, _) = post(&s, B, "/api/v1/workflows", other).await;
    assert_eq!(st, StatusCode::CREATED);
    assert_eq!(
        get(&s, A, "/api/v1/workflows/reviewed").await.1,
        fixture("reviewed")
    );
    // A's things are intact.
    assert_eq!(
        get(&s, A, &format!("/api/v1/executions/{id}")).await.1["status"],
        "paused"
    );
}

pub async fn unknown_execution_is_404_everywhere(s: Server) {
    let id = "0b6c2a64-0000-4000-8000-000000000000";
    for path in [
        format!("/api/v1/executions/{id}"),
        format!("/api/v1/executions/{id}/result"),
        format!("/api/v1/executions/{id}/events"),
    ] {
        let (st, body) = get(&s, A, &path).await;
        assert_eq!(
            (st, body),
            (
                StatusCode::NOT_FOUND,
                json!({"error": "Resource not found", "status": 404})
            ),
            "{path}"
        );
    }
    assert_eq!(
        post(&s, A, &format!("/api/v1/executions/{id}/resume"), json!({}))
            .await
            .0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        post(&s, A, &format!("/api/v1/executions/{id}/cancel"), json!({}))
            .await
            .0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        get(&s, A, "/api/v1/nothing-here").await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        delete(&s, A, "/api/v1/executions/paused").await.0,
        StatusCode::METHOD_NOT_ALLOWED
    );
    let (st, body) = get(&s, A, "/api/v1/executions/exec%3B+DROP+TABLE").await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]
            .as_str()
            .expect("e")
            .contains("valid identifier")
    );
}

pub async fn auth_rules(s: Server) {
    let resp = s
        .http
        .get(s.url("/api/v1/workflows"))
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(resp.headers()["www-authenticate"], "Bearer");
    let no_tenant = claims(json!({"sub": "u", "exp": 4_000_000_000u64}));
    let resp = s
        .http
        .get(s.url("/api/v1/workflows"))
        .bearer_auth(no_tenant)
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let expired = claims(json!({"sub": "u", "tenant_id": A, "exp": 1}));
    let resp = s
        .http
        .get(s.url("/api/v1/workflows"))
        .bearer_auth(expired)
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    let forged = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &json!({"sub": "u", "tenant_id": A, "exp": 4_000_000_000u64}),
        &jsonwebtoken::EncodingKey::from_secret(b"another-secret-another-secret-xx"),
    )
    .expect("token");
    let resp = s
        .http
        .get(s.url("/api/v1/workflows"))
        .bearer_auth(forged)
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    // Operations need no token.
    assert_eq!(
        s.http
            .get(s.url("/health"))
            .send()
            .await
            .expect("h")
            .status(),
        StatusCode::OK
    );
}

pub async fn operations_endpoints(s: Server) {
    let h: Value = s
        .http
        .get(s.url("/health"))
        .send()
        .await
        .expect("h")
        .json()
        .await
        .expect("j");
    assert_eq!(h["status"], "UP");
    let r = s.http.get(s.url("/ready")).send().await.expect("r");
    assert_eq!(r.status(), StatusCode::OK);
    push_ok(&s, A, "linear").await;
    let id = start(&s, A, "linear").await;
    let _ = events(&s, A, &id, None).await;
    let m = s
        .http
        .get(s.url("/metrics"))
        .send()
        .await
        .expect("m")
        .text()
        .await
        .expect("t");
    for name in [
        "hensu_executions_total",
        "hensu_step_duration_seconds",
        "hensu_executions_running",
        "hensu_lease_takeovers_total",
    ] {
        assert!(m.contains(name), "{name} missing from\n{m}");
    }
    let doc: Value = s
        .http
        .get(s.url("/openapi.json"))
        .send()
        .await
        .expect("o")
        .json()
        .await
        .expect("j");
    assert!(doc["paths"]["/api/v1/executions/{executionId}/resume"]["post"].is_object());
}
