//! The server over real HTTP on 127.0.0.1: every endpoint and status code, SSE replay,
//! review pause + resume, tenant isolation per endpoint, auth, bad input. The same scenarios
//! run on SQLite (always) and PostgreSQL (`scripts/pg-test.sh cargo test -p hensu-server --
//! --ignored`).

mod egress;
mod harness;
mod limits;
mod mcp_gateway;
mod mcp_tenant;
mod project_config;
mod scenarios;
mod schedules;
mod store_outage;
mod stream_expiry;
mod tool_approval;

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
    dag_branches_are_recorded_as_they_settle,
    map_items_are_recorded_and_gathered_in_order,
    sse_replays_after_last_event_id,
    review_pause_and_resume,
    branch_reviews_are_decided_independently,
    resume_body_rules,
    cancel_paused_execution,
    tenant_isolation_per_endpoint,
    unknown_execution_is_404_everywhere,
    tenant_stream_emits,
    tenant_stream_follows_other_servers,
    tenant_stream_opens_at_once_over_history,
    tenant_stream_reconnect_replays_exactly_once,
    tenant_stream_resets_on_an_id_not_held,
    a_stalled_tenant_stream_holds_back_no_other,
    auth_rules,
    operations_endpoints,
    bad_inputs_are_refused_at_start,
    a_failed_run_carries_its_reason,
    executions_are_paged,
    idempotent_starts,
    batch_starts_queue_runs_for_the_workers,
    fork_continues_from_a_step,
    redrive_forks_a_failed_execution,
    diff_compares_two_executions,
    waits_and_signals,
    signal_with_start,
    a_signal_reaches_a_waiting_child,
    replay_compares_with_the_recording,
    schedules_crud,
    schedules_fire_ticks_and_run_now,
    schedule_overlap_policies,
);

mod schedules_in_project {
    use crate::harness::Backend;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_schedule_over_the_budget_is_refused() {
        crate::schedules::a_schedule_over_the_budget_is_refused(Backend::Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn missed_ticks_after_a_downtime_follow_the_policy() {
        crate::schedules::missed_ticks_after_a_downtime_follow_the_policy(Backend::Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_server_purges_expired_runs() {
        crate::schedules::a_server_purges_expired_runs(Backend::Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
    async fn a_server_purges_expired_runs_on_postgres() {
        crate::schedules::a_server_purges_expired_runs(Backend::Postgres).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
    async fn missed_ticks_after_a_downtime_follow_the_policy_on_postgres() {
        crate::schedules::missed_ticks_after_a_downtime_follow_the_policy(Backend::Postgres).await;
    }
}

mod outage {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
    async fn an_unreachable_store_is_503_and_a_keyed_retry_starts_once() {
        crate::store_outage::an_unreachable_store_is_503_and_a_keyed_retry_starts_once().await;
    }
}

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

mod project {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn providers_retry_and_structured_output_come_from_hensu_toml() {
        crate::project_config::providers_retry_and_structured_output_come_from_hensu_toml().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn model_metrics_count_calls_tokens_and_cost_per_tenant_and_model() {
        crate::project_config::model_metrics_count_calls_tokens_and_cost_per_tenant_and_model()
            .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_review_pause_is_told_to_the_review_webhook() {
        crate::project_config::a_review_pause_is_told_to_the_review_webhook().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stub_run_reaches_only_the_allowed_hosts() {
        crate::project_config::a_stub_run_reaches_only_the_allowed_hosts().await;
    }
}

mod tool_calls {
    use crate::Backend::{Postgres, Sqlite};
    use crate::tool_approval::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_gated_tool_call_is_reviewed_and_approved_with_edited_arguments_sqlite() {
        a_gated_tool_call_is_reviewed_and_approved_with_edited_arguments(Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_rejected_tool_call_never_reaches_the_tenants_client_sqlite() {
        a_rejected_tool_call_never_reaches_the_tenants_client(Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
    async fn a_gated_tool_call_is_reviewed_and_approved_with_edited_arguments_postgres() {
        a_gated_tool_call_is_reviewed_and_approved_with_edited_arguments(Postgres).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "needs HENSU_TEST_DATABASE_URL (scripts/pg-test.sh)"]
    async fn a_rejected_tool_call_never_reaches_the_tenants_client_postgres() {
        a_rejected_tool_call_never_reaches_the_tenants_client(Postgres).await;
    }
}

mod ssrf {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn loopback_in_every_spelling_is_refused_and_nothing_arrives() {
        crate::egress::loopback_in_every_spelling_is_refused_and_nothing_arrives().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_redirect_from_an_allowed_host_to_a_denied_address_is_refused() {
        crate::egress::a_redirect_from_an_allowed_host_to_a_denied_address_is_refused().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_allowed_range_lets_the_requests_through() {
        crate::egress::an_allowed_range_lets_the_requests_through().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn journaled_calls_are_events_and_carry_idempotency_keys() {
        crate::egress::journaled_calls_are_events_and_carry_idempotency_keys().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_stub_server_run_sends_nothing() {
        crate::egress::a_stub_server_run_sends_nothing().await;
    }
}

mod credentials {
    on_sqlite!(stream_expiry: streams_end_when_their_token_does);
}

mod mcp {
    on_sqlite!(
        mcp_gateway: tool_calls_reach_the_tenants_client,
        gateway_requires_the_tenants_own_token,
        disconnect_fails_the_pending_call,
        pause_reaches_a_run_on_another_server,
    );
}

/// The document served at `/openapi.json` (built from the same registration as the routes):
/// every 2xx response with a body names its schema, and every schema it refers to exists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openapi_gives_every_success_a_schema() {
    let s = harness::Server::start(Backend::Sqlite).await;
    let doc: serde_json::Value = s
        .http
        .get(s.url("/openapi.json"))
        .send()
        .await
        .expect("openapi")
        .json()
        .await
        .expect("json");
    let paths = doc["paths"].as_object().expect("paths");
    let mut successes = 0;
    // OpenAPI requires every operationId to be unique (client generators name functions by it).
    let mut operation_ids = std::collections::BTreeSet::new();
    for (path, item) in paths {
        for (method, op) in item.as_object().expect("path item") {
            let id = op["operationId"].as_str().unwrap_or_default().to_string();
            assert!(
                operation_ids.insert(id.clone()),
                "{method} {path}: operationId `{id}` is used twice"
            );
            let responses = op["responses"].as_object().expect("responses");
            for (code, response) in responses {
                if !code.starts_with('2') || code == "204" {
                    continue;
                }
                successes += 1;
                let content = response["content"].as_object();
                assert!(
                    content.is_some_and(|c| !c.is_empty()),
                    "{method} {path} {code} has no content"
                );
                for (media, body) in content.into_iter().flatten() {
                    assert!(
                        body["schema"].is_object(),
                        "{method} {path} {code} {media} has no schema"
                    );
                }
            }
        }
    }
    assert!(
        successes >= 18,
        "only {successes} success responses documented"
    );
    // Every `$ref` names a schema of the document.
    let schemas = doc["components"]["schemas"].as_object().expect("schemas");
    let text = doc.to_string();
    for reference in text.split("\"#/components/schemas/").skip(1) {
        let name = reference.split('"').next().unwrap_or_default();
        assert!(schemas.contains_key(name), "dangling $ref {name}");
    }
    for route in [
        "/api/v1/workflows/{workflowId}",
        "/api/v1/executions/{executionId}/resume",
        "/api/v1/executions/events",
        "/mcp/clients/{clientId}/status",
        "/openapi.json",
    ] {
        assert!(paths.contains_key(route), "{route} is not documented");
    }
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
