//! The MCP gateway mounted in the server: a tenant's rmcp client connects over HTTP with its
//! token, its workflows' tool calls reach it (`send("mcp", …)`, and a `send` to an
//! unregistered handler id as the tool of that name), another tenant's runs never reach it,
//! and a disconnect fails the pending call at once.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::harness::{Server, fixture, send as call, token};
use crate::mcp_tenant::TenantClient;

const A: &str = "tenant-a";
const B: &str = "tenant-b";

async fn push(s: &Server, tenant: &str, name: &str) {
    let (st, body) = call(
        s,
        reqwest::Method::POST,
        tenant,
        "/api/v1/workflows",
        Some(fixture(name)),
    )
    .await;
    assert!(st.is_success(), "{st} {body}");
}

/// Starts `workflow` for `tenant` and waits until it ends; returns its status object.
async fn run(s: &Server, tenant: &str, workflow: &str) -> Value {
    let (st, started) = call(
        s,
        reqwest::Method::POST,
        tenant,
        "/api/v1/executions",
        Some(json!({"workflowId": workflow, "context": {"topic": "tools"}})),
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED, "{started}");
    let id = started["executionId"].as_str().expect("id").to_string();
    wait_end(s, tenant, &id).await
}

async fn wait_end(s: &Server, tenant: &str, id: &str) -> Value {
    for _ in 0..400 {
        let (_, status) = call(
            s,
            reqwest::Method::GET,
            tenant,
            &format!("/api/v1/executions/{id}"),
            None,
        )
        .await;
        if status["status"] != "running" {
            return status;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("execution {id} did not end");
}

async fn pending_requests(s: &Server) -> u64 {
    let resp = s
        .http
        .get(s.url("/mcp/status"))
        .send()
        .await
        .expect("status");
    let v: Value = resp.json().await.expect("json");
    v["pendingRequests"].as_u64().expect("pendingRequests")
}

pub async fn tool_calls_reach_the_tenants_client(s: Server) {
    push(&s, A, "tools").await;
    push(&s, B, "tools").await;
    let client = TenantClient::connect(&s.base, &token(A), A).await;
    let (_, st) = call(
        &s,
        reqwest::Method::GET,
        A,
        &format!("/mcp/clients/{A}/status"),
        None,
    )
    .await;
    assert_eq!(st["connected"], true, "{st}");

    let done = run(&s, A, "tools").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["exitStatus"], "SUCCESS",
        "both tool calls succeeded: {done}"
    );
    assert_eq!(
        client.calls(),
        vec![
            ("echo".to_string(), json!({"text": "tools"})),
            // `send("shout", …)`: no server handler has that id, so it went to MCP.
            ("shout".to_string(), json!({"text": "tools"})),
        ]
    );

    // Tenant B has no client: its run's calls fail (onFailure), and never reach A's client.
    let other = run(&s, B, "tools").await;
    assert_eq!(other["status"], "completed", "{other}");
    assert_eq!(other["exitStatus"], "FAILURE", "{other}");
    assert_eq!(
        client.calls().len(),
        2,
        "tenant B's calls never reach tenant A's client"
    );
}

pub async fn gateway_requires_the_tenants_own_token(s: Server) {
    // No token: 401. Another tenant's token for A's clientId: 403.
    let none = s
        .http
        .get(s.url(&format!("/mcp/connect?clientId={A}")))
        .send()
        .await
        .expect("connect");
    assert_eq!(none.status(), StatusCode::UNAUTHORIZED);
    let foreign = s
        .http
        .get(s.url(&format!("/mcp/connect?clientId={A}")))
        .bearer_auth(token(B))
        .send()
        .await
        .expect("connect");
    assert_eq!(foreign.status(), StatusCode::FORBIDDEN);
    let post = s
        .http
        .post(s.url("/mcp/message"))
        .body(r#"{"jsonrpc":"2.0","id":"x","result":{}}"#)
        .send()
        .await
        .expect("message");
    assert_eq!(post.status(), StatusCode::UNAUTHORIZED);
    // The status routes stay open.
    let open = s
        .http
        .get(s.url("/mcp/status"))
        .send()
        .await
        .expect("status");
    assert_eq!(open.status(), StatusCode::OK);
}

pub async fn disconnect_fails_the_pending_call(s: Server) {
    push(&s, A, "hang").await;
    let client = TenantClient::connect(&s.base, &token(A), A).await;
    let (st, started) = call(
        &s,
        reqwest::Method::POST,
        A,
        "/api/v1/executions",
        Some(json!({"workflowId": "hang"})),
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED, "{started}");
    let id = started["executionId"].as_str().expect("id").to_string();
    // The `hang` call is pending at the client…
    for _ in 0..400 {
        if client.calls().iter().any(|(name, _)| name == "hang") && pending_requests(&s).await == 1
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(client.calls().iter().any(|(name, _)| name == "hang"));
    // …and the client goes away: the call fails at once (not after the 60 s timeout), the
    // node takes onFailure.
    drop(client);
    let done = wait_end(&s, A, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["exitStatus"], "FAILURE", "{done}");
    assert_eq!(pending_requests(&s).await, 0);
}

/// `POST …/pause` sent to another server than the one executing the run (as behind a load
/// balancer): the request is a flag in the shared store, so the executing server pauses the
/// run at its next boundary; a plain resume continues it.
pub async fn pause_reaches_a_run_on_another_server(s: Server) {
    push(&s, A, "pausable").await;
    let client = TenantClient::connect(&s.base, &token(A), A).await;
    let (st, started) = call(
        &s,
        reqwest::Method::POST,
        A,
        "/api/v1/executions",
        Some(json!({"workflowId": "pausable"})),
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED, "{started}");
    let id = started["executionId"].as_str().expect("id").to_string();
    // The `hang` call is pending at the client (the gateway's own requests, such as the
    // tool listing, may be pending for a moment before it).
    let hanging = |client: &TenantClient| client.calls().iter().any(|(name, _)| name == "hang");
    for _ in 0..400 {
        if hanging(&client) && pending_requests(&s).await == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(hanging(&client), "the run waits inside its node");
    assert_eq!(
        pending_requests(&s).await,
        1,
        "the run waits inside its node"
    );
    let other = s.sibling().await;
    let pause = format!("/api/v1/executions/{id}/pause");
    let (st, ack) = call(&other, reqwest::Method::POST, A, &pause, None).await;
    assert_eq!(st, StatusCode::ACCEPTED, "{ack}");
    assert_eq!(ack, json!({"status": "pausing", "executionId": id}));
    // Another tenant does not see the execution.
    let (st, _) = call(&other, reqwest::Method::POST, B, &pause, None).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    // The node ends (its tool call fails); the run stops at that boundary, saved paused
    // before the node it would run next (an end node is reached without a boundary).
    drop(client);
    let paused = wait_end(&s, A, &id).await;
    assert_eq!(paused["status"], "paused", "{paused}");
    assert_eq!(paused["currentNodeId"], "next", "{paused}");
    let (st, ack) = call(&other, reqwest::Method::POST, A, &pause, None).await;
    assert_eq!(st, StatusCode::OK, "{ack}");
    assert_eq!(ack["status"], "paused");
    let (st, ack) = call(
        &other,
        reqwest::Method::POST,
        A,
        &format!("/api/v1/executions/{id}/resume"),
        Some(json!({})),
    )
    .await;
    assert_eq!(st, StatusCode::ACCEPTED, "{ack}");
    // `next` runs on the server that resumed it; with no client its tool call fails. (The
    // resume answers before the run leaves `paused`.)
    let mut done = wait_end(&other, A, &id).await;
    for _ in 0..400 {
        if done["status"] != "paused" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
        done = wait_end(&other, A, &id).await;
    }
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["exitStatus"], "FAILURE", "{done}");
    let (st, _) = call(&s, reqwest::Method::POST, A, &pause, None).await;
    assert_eq!(st, StatusCode::CONFLICT);
}
