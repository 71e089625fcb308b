//! The hensu server (`hensuc serve`): workflows and executions over REST + SSE, compatible
//! with upstream Hensu's API (docs/server.md lists every difference).
//!
//! The operations are typed functions of the caller's tenant ([`service`]); the HTTP routes
//! are thin adapters of them ([`routes`]), each registered once with its OpenAPI entry
//! ([`openapi`]); the web console calls the same [`service`]. State is explicit
//! ([`AppState`]); every failure is one [`error::ApiError`]. Executions run through an
//! [`exec::ExecutionService`] (in this process by default); runs live in `hensu-store`,
//! workflow definitions and run tenants in its registry tables.
//!
//! Connections are served by the server's own accept loop ([`listen`]) under the limits of
//! [`Limits`] (`[server.limits]`): header-read timeout, connection caps, request and body
//! timeouts, the `Host` allow-list ([`host`]), event streams per tenant ([`streams`]), the
//! bounds of a start's context and the concurrency of push checks.

pub mod auth;
pub mod error;
pub mod exec;
pub mod host;
pub mod listen;
pub mod metrics;
pub mod openapi;
pub mod routes;
pub mod scheduler;
pub mod service;
pub mod streams;
pub mod stubs;
pub mod subflows;
pub mod tokens;
pub mod tools;
pub mod validate;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::http::StatusCode;
use axum::{Extension, Router};
pub use hensu_host::launch::ProjectConfig;
use hensu_runtime::CancelToken;
use hensu_store::{StateStore, StoreOptions, WorkflowRegistry};
use tokio::sync::{Semaphore, broadcast};

pub use auth::{Auth, AuthConfig, Tenant};
pub use exec::{ExecutionService, ExecutorOptions, InProcessExecutor, RunConfig};
pub use hensu_project::Limits;
pub use stubs::StubScenarios;

/// The largest request body accepted (a compiled workflow is the largest legitimate one).
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Everything a handler needs.
#[derive(Clone)]
pub struct AppState {
    pub store: Arc<dyn StateStore>,
    pub registry: Arc<dyn WorkflowRegistry>,
    pub executor: Arc<dyn ExecutionService>,
    pub auth: Arc<Auth>,
    pub events: broadcast::Sender<exec::RunChanged>,
    pub metrics: metrics_exporter_prometheus::PrometheusHandle,
    /// The MCP gateway: tenants' own clients serving their runs' tool calls.
    pub gateway: hensu_mcp::gateway::Gateway,
    /// Connection and resource limits.
    pub limits: Arc<Limits>,
    /// Open event streams per tenant.
    pub streams: Arc<streams::StreamSlots>,
    /// The reader of the tenant event log feeding the tenant streams.
    pub tenant_events: Arc<service::tenant_stream::EventHub>,
    /// The tokens of the runs executing here (docs/server.md, *Token events*).
    pub tokens: Arc<tokens::TokenHub>,
    /// Places for push checks running at once on the blocking pool.
    pub pushes: Arc<Semaphore>,
    /// Cancelled when the server shuts down (event streams end).
    pub closing: CancelToken,
    /// Schedules: their store, `[[schedules]]` and `[budget]` (docs/schedules.md).
    pub scheduling: Arc<service::firing::Scheduling>,
}

impl AppState {
    /// The state with other limits (the stream and push places follow them).
    pub fn with_limits(mut self, limits: Limits) -> AppState {
        self.streams = Arc::new(streams::StreamSlots::new(
            limits.max_streams_per_tenant,
            limits.max_streams,
        ));
        self.pushes = Arc::new(Semaphore::new(limits.push_concurrency()));
        self.limits = Arc::new(limits);
        self
    }
}

/// Every documented route, registered once: the router and the OpenAPI document in one.
pub fn api_routes(state: &AppState) -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::with_openapi(openapi::base())
        .merge(routes::workflows::routes())
        .merge(routes::executions::routes())
        .merge(routes::mcp::routes(state))
        .merge(routes::ops::routes())
        .merge(routes::schedules::routes())
        .merge(openapi::routes())
}

/// The application router.
pub fn router(state: AppState) -> Router {
    router_with(state, Router::new())
}

/// The application router with `extra` routes (the web console, `hensu-console`) merged beside
/// the API, under the same layers.
pub fn router_with(state: AppState, extra: Router<AppState>) -> Router {
    let (api, document) = api_routes(&state).split_for_parts();
    let limits = state.limits.clone();
    let hosts = host::HostRule::new(
        matches!(*state.auth, Auth::Dev),
        limits.allowed_hosts.as_deref(),
    );
    Router::new()
        .merge(api.layer(Extension(openapi::Document::new(&document))))
        .merge(extra)
        .fallback(|| async { error::ApiError::not_found() })
        .method_not_allowed_fallback(|| async {
            error::ApiError::new(axum::http::StatusCode::METHOD_NOT_ALLOWED, "Method not allowed")
        })
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(tower_http::limit::RequestBodyLimitLayer::new(MAX_BODY_BYTES))
        // A body that stalls between chunks fails its read (408); a request, body included,
        // not answered in time is cut (408). Streams answer at once and are not cut.
        .layer(tower_http::timeout::RequestBodyTimeoutLayer::new(
            limits.body_read_timeout,
        ))
        .layer(tower_http::timeout::TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            limits.request_timeout,
        ))
        .layer(axum::middleware::map_response(error::json_layer_errors))
        // Before anything else reads the request: a Host this server does not answer.
        .layer(axum::middleware::from_fn_with_state(hosts, host::check))
        .layer(
            tower_http::trace::TraceLayer::new_for_http().make_span_with(
                // Method and path only: headers (the bearer token) never reach the log.
                |req: &axum::http::Request<_>| {
                    tracing::info_span!("http", method = %req.method(), path = %req.uri().path())
                },
            ),
        )
        .with_state(state)
}

/// How to run a server.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub listen: SocketAddr,
    /// A store URL or path ([`hensu_store::open_store`]).
    pub store: String,
    pub auth: AuthConfig,
    /// The server's project directory: its `hensu.toml` run sections (`[providers]`,
    /// `[retry]`, `[network]`, `[structured_output]`, …) configure every execution as they do
    /// `hensuc run`.
    pub project_dir: PathBuf,
    /// Where each tenant's stub answers are read (dev mode: the project's `stubs/`).
    pub stubs: StubScenarios,
    pub force_stub: bool,
    /// Leases and takeover of runs whose server stopped.
    pub executor: ExecutorOptions,
    /// Connection and resource limits (`[server.limits]`).
    pub limits: Limits,
}

/// Refuses a configuration that would expose the dev tenant beyond this machine.
pub fn check_exposure(listen: &SocketAddr, auth: &AuthConfig) -> anyhow::Result<()> {
    if !auth.is_configured() && !listen.ip().is_loopback() {
        anyhow::bail!(
            "refusing to listen on {listen} without a JWT key: every request would run as the \
             dev tenant. Set the environment variable HENSU_JWT_SECRET (HS256; secrets are \
             never read from hensu.toml) or HENSU_JWT_PUBLIC_KEY (or `jwt_public_key_file = \
             \"<path>\"` under [server] in hensu.toml), or listen on 127.0.0.1 \
             (docs/server.md, *Authentication and tenants*)"
        );
    }
    Ok(())
}

/// Opens the store and registry and builds the state with an in-process executor.
pub async fn build_state(config: &ServerConfig) -> anyhow::Result<AppState> {
    check_exposure(&config.listen, &config.auth)?;
    let auth = config.auth.build()?;
    // Before the store: a bad hensu.toml writes nothing.
    let project =
        ProjectConfig::from_project_dir(&config.project_dir).map_err(anyhow::Error::msg)?;
    let store = hensu_store::open_store(
        &config.store,
        project.store_options(StoreOptions {
            lease_ttl: config.executor.lease_ttl,
            ..StoreOptions::default()
        }),
    )
    .await?;
    let registry = store.registry().await?;
    let executor = ExecutorOptions {
        shutdown_grace: config.limits.shutdown_grace,
        ..config.executor.clone()
    };
    Ok(state_with_options(
        store,
        registry,
        auth,
        project,
        config.stubs.clone(),
        config.force_stub,
        executor,
    )
    .with_limits(config.limits.clone()))
}

/// The state over given store handles (tests, embedding); executions run under `project`
/// ([`ProjectConfig::from_project_dir`]) and every tenant reads the project's `stubs/`.
pub fn state_with(
    store: Arc<dyn StateStore>,
    registry: Arc<dyn WorkflowRegistry>,
    auth: Auth,
    project: ProjectConfig,
    force_stub: bool,
) -> AppState {
    let stubs = StubScenarios::Shared(project.dir.join("stubs"));
    state_with_options(
        store,
        registry,
        auth,
        project,
        stubs,
        force_stub,
        ExecutorOptions::default(),
    )
}

/// [`state_with`] with where each tenant's stub answers are read and the executor's lease and
/// takeover timing (the store's lease TTL should be `options.lease_ttl`).
pub fn state_with_options(
    store: Arc<dyn StateStore>,
    registry: Arc<dyn WorkflowRegistry>,
    auth: Auth,
    project: ProjectConfig,
    stubs: StubScenarios,
    force_stub: bool,
    options: ExecutorOptions,
) -> AppState {
    let limits = Limits::default();
    let scheduling = Arc::new(service::firing::Scheduling::from_project_dir(
        store.schedules(),
        &project.dir,
    ));
    let (events, _) = broadcast::channel(1024);
    let gateway = hensu_mcp::gateway::Gateway::default();
    let tokens = Arc::new(tokens::TokenHub::default());
    let executor = Arc::new(
        InProcessExecutor::new(
            store.clone(),
            registry.clone(),
            events.clone(),
            exec::RunConfig {
                project,
                stubs,
                force_stub,
            },
            gateway.clone(),
            options,
        )
        .with_tokens(tokens.clone()),
    );
    AppState {
        store,
        registry,
        executor: Arc::new(executor),
        auth: Arc::new(auth),
        events,
        metrics: metrics::install(),
        gateway,
        streams: Arc::new(streams::StreamSlots::new(
            limits.max_streams_per_tenant,
            limits.max_streams,
        )),
        tenant_events: Arc::default(),
        tokens,
        pushes: Arc::new(Semaphore::new(limits.push_concurrency())),
        limits: Arc::new(limits),
        closing: CancelToken::new(),
        scheduling,
    }
}

/// Starts the takeover worker and serves until `shutdown` resolves, then stops accepting and
/// claiming, hands running executions back at their next boundary (each gives its lease back,
/// still running, for another server to continue; never cancelled), ends the event streams,
/// lets open requests finish within the shutdown grace, and returns.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    serve_with(listener, state, Router::new(), shutdown).await
}

/// [`serve`] with `extra` routes beside the API (see [`router_with`]).
pub async fn serve_with(
    listener: tokio::net::TcpListener,
    state: AppState,
    extra: Router<AppState>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let executor = state.executor.clone();
    executor.start_background();
    let (limits, closing) = (state.limits.clone(), state.closing.clone());
    // The schedules (docs/schedules.md): stopped with the rest when the server closes.
    let scheduler = tokio::spawn(scheduler::run(state.clone(), closing.clone()));
    // `[retention]` (docs/retention.md): purged now and then, stopped with the server.
    let purger = tokio::spawn(hensu_store::retention::purge_periodically(
        state.store.clone(),
        state.scheduling.retention.clone(),
        |done| match done {
            Ok(r) if r.deleted.is_empty() => {}
            Ok(r) => tracing::info!(
                deleted = r.deleted.len(),
                kept_for_forks = r.kept_for_forks.len(),
                "purged finished runs"
            ),
            Err(e) => tracing::warn!(error = %e, "purge failed"),
        },
    ));
    let signalled = CancelToken::new();
    let app = router_with(state, extra);
    let connections = listen::serve_connections(listener, app, &limits, {
        let signalled = signalled.clone();
        async move { signalled.cancelled().await }
    });
    let hand_back = async {
        shutdown.await;
        signalled.cancel();
        closing.cancel();
        // The runs are handed back while the open requests finish.
        executor.shutdown().await;
    };
    tokio::join!(connections, hand_back);
    purger.abort();
    let _ = scheduler.await;
    Ok(())
}
