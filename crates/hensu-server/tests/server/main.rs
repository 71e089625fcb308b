//! The server over real HTTP on 127.0.0.1: every endpoint and status code, SSE replay,
//! review pause + resume, tenant isolation per endpoint, auth, bad input. The same scenarios
//! run on SQLite (always) and PostgreSQL (`scripts/pg-test.sh cargo test -p hensu-server --
//! --ignored`).

mod harness;
mod mcp_gateway;
mod mcp_tenant;
mod scenarios;

use harness::Backend;

macro_rules! on_both {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    crate::scenarios::$name(crate::harness::Server::start(crate::Backend::Sqlite).await).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                #[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
                async fn $name() {
                    crate::scenarios::$name(crate::harness::Server::start(crate::Backend::Postgres).await).await;
                }
            )*
        }
    };
}

on_both!(
    workflow_crud,
    push_refuses_bad_input_and_writes_nothing,
    sub_workflows_need_children_first,
    start_stream_result,
    parallel_branches_are_recorded,
    sse_replays_after_last_event_id,
    review_pause_and_resume,
    resume_body_rules,
    cancel_paused_execution,
    tenant_isolation_per_endpoint,
    unknown_execution_is_404_everywhere,
    tenant_stream_emits,
    tenant_stream_follows_other_servers,
    auth_rules,
    operations_endpoints,
);

macro_rules! on_sqlite {
    ($module:ident: $($name:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                crate::$module::$name(crate::harness::Server::start(crate::Backend::Sqlite).await).await;
            }
        )*
    };
}

mod mcp {
    on_sqlite!(
        mcp_gateway: tool_calls_reach_the_tenants_client,
        gateway_requires_the_tenants_own_token,
        disconnect_fails_the_pending_call,
    );
}

#[test]
fn openapi_lists_exactly_the_served_routes() {
    let doc = serde_json::to_value(hensu_server::openapi::document()).expect("openapi json");
    let paths = doc["paths"].as_object().expect("paths");
    let mut documented: Vec<(String, Vec<String>)> = paths
        .iter()
        .map(|(p, ops)| {
            let mut m: Vec<String> = ops
                .as_object()
                .expect("ops")
                .keys()
                .filter(|k| ["get", "post", "put", "delete", "patch"].contains(&k.as_str()))
                .cloned()
                .collect();
            m.sort();
            (p.clone(), m)
        })
        .collect();
    documented.sort();
    let mut served: Vec<(String, Vec<String>)> = hensu_server::ROUTES
        .iter()
        .map(|(p, ms)| {
            let mut m: Vec<String> = ms.iter().map(|s| s.to_string()).collect();
            m.sort();
            (p.to_string(), m)
        })
        .collect();
    served.sort();
    assert_eq!(documented, served);
}

#[test]
fn non_loopback_without_keys_is_refused() {
    let open = hensu_server::AuthConfig::default();
    let any: std::net::SocketAddr = "0.0.0.0:8080".parse().expect("addr");
    let lo: std::net::SocketAddr = "127.0.0.1:8080".parse().expect("addr");
    let err = hensu_server::check_exposure(&any, &open).expect_err("refused");
    assert!(err.to_string().contains("without a JWT key"), "{err}");
    hensu_server::check_exposure(&lo, &open).expect("loopback allowed");
    let keyed = hensu_server::AuthConfig {
        hs256_secret: Some("x".repeat(32)),
        ..Default::default()
    };
    hensu_server::check_exposure(&any, &keyed).expect("keys allow any address");
}
