//! [`engine`]: the engine of one run, from its [`RunSetup`] and what only its face adds.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use hensu_ir::{Node, Workflow};
use hensu_providers::{BuiltProviders, Redactor, ToolExecutor, UsageTotals};
use hensu_runtime::{
    ActionHandlerRegistry, ActionResult, CancelToken, CommandRunner, Context, Engine, Event,
    ExecutionListener, MapRepository, RunOptions, StubProvider,
};

use super::{ReviewMode, RunSetup};
use crate::CommandRegistry;
use crate::network::NetworkAccess;
use crate::review::TerminalPause;

/// The refusal of every `execute(...)` action where local commands are not allowed (the
/// server; upstream's wording).
pub const NO_LOCAL_COMMANDS: &str =
    "Server mode does not support local command execution. Use MCP tool calls instead.";

/// The command runner of a run without local commands: nothing runs.
#[derive(Clone, Copy, Debug, Default)]
pub struct RefuseCommands;

#[async_trait]
impl CommandRunner for RefuseCommands {
    async fn execute(&self, _id: &str, _ctx: &Context) -> ActionResult {
        ActionResult::failure(NO_LOCAL_COMMANDS)
    }
}

/// The tools of a run: its `mcp` (and other tool) action handlers and its agents' tool
/// executor.
pub trait RunToolSet: Send + Sync {
    /// Adds the set's action handlers (at least `mcp`) to `actions`.
    fn register_actions(&self, actions: &mut ActionHandlerRegistry);
    /// The agents' tool executor: the set's tools, then `fallback` (the action handlers).
    fn tool_executor(&self, fallback: Arc<dyn ToolExecutor>) -> Arc<dyn ToolExecutor>;
    /// Lines for the user about the tools (servers connected, skipped). Never secrets.
    fn notes(&self) -> Vec<String>;
}

impl RunToolSet for hensu_mcp::RunTools {
    fn register_actions(&self, actions: &mut ActionHandlerRegistry) {
        self.register_action(actions);
    }

    fn tool_executor(&self, fallback: Arc<dyn ToolExecutor>) -> Arc<dyn ToolExecutor> {
        hensu_mcp::RunTools::tool_executor(self, fallback)
    }

    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }
}

/// Where a run's tools come from.
pub enum ToolSupply {
    /// The project's `[mcp]` servers, started for this run when it can call a tool (plus the
    /// stub tool scripts of `stubs/<scenario>/tools/` in a stub run). Blocking.
    Project,
    /// Given by the face (the server: the tenant's own MCP client over the gateway).
    Given(Box<dyn RunToolSet>),
}

/// What only a face adds to a run's engine.
pub struct Extras {
    pub tools: ToolSupply,
    /// The run's listener (progress, `--events`): provider retries become its
    /// `provider_retry` events. The same listener goes into the run's `RunCtx`.
    pub listener: Option<Arc<dyn ExecutionListener>>,
    /// The terminal an interactive review asks in pauses this (the progress line).
    pub terminal_pause: Option<Arc<dyn TerminalPause>>,
    /// The run's cancellation token (in-flight model requests and backoff waits stop on it).
    pub cancel: CancelToken,
    /// A replay (docs/cli.md, *Replay*): every agent call, action, command, `api-caller`
    /// node and review is answered from these recorded answers; no provider, tool, command
    /// or HTTP client of the setup is built.
    pub recorded: Option<Arc<crate::recorded::RecordedAnswers>>,
}

/// The engine of one run and what its face reports about it.
pub struct RunEngine {
    pub engine: Engine,
    /// Redacts every provider key: apply it to events, snapshots and messages.
    pub redactor: Arc<Redactor>,
    pub usage: Arc<UsageTotals>,
    pub network: NetworkAccess,
    /// Lines for the user (providers skipped, MCP servers connected). Never secrets.
    pub notes: Vec<String>,
    /// `None` for a replay (its one provider is the recording).
    providers: Option<BuiltProviders>,
}

impl RunEngine {
    /// Whether stubs serve every model (forced).
    pub fn stubs_forced(&self) -> bool {
        self.providers.as_ref().is_some_and(|p| p.stubs_forced)
    }

    /// The provider `model` routes to (and why stubs, when they serve it as a fallback).
    pub fn route(&self, model: &str) -> Option<hensu_providers::Route> {
        self.providers.as_ref().and_then(|p| p.route(model))
    }
}

/// Builds the engine of a run of `workflow` under `setup`: the project's providers (stub
/// agents for every model without credentials, or for all when forced), its network policy
/// (a run served only by stubs is offline except for `[network] allow_hosts`) and egress
/// policy (the setup's, for the webhook and api-caller requests that do go out), structured
/// output corrections, retries and circuit breaker, the review mode, local commands or their
/// refusal, and `repository` for sub-workflow nodes. Blocking when the tools are the
/// project's (MCP servers start); call it off the async threads then.
pub fn engine(
    setup: &RunSetup,
    workflow: &Workflow,
    repository: MapRepository,
    extras: Extras,
) -> Result<RunEngine, String> {
    let project = &setup.project;
    let Extras {
        tools,
        listener,
        terminal_pause,
        cancel,
        recorded,
    } = extras;
    if let Some(answers) = recorded {
        return Ok(replay_engine(workflow, repository, answers));
    }
    let tools: Box<dyn RunToolSet> = match tools {
        ToolSupply::Given(t) => t,
        ToolSupply::Project => Box::new(hensu_mcp::RunTools::start(
            &project.mcp,
            &project.dir,
            setup.stubs.scenario.as_deref(),
            setup.stubs.forced(),
            std::iter::once(workflow)
                .chain(repository.workflows())
                .any(|w| {
                    hensu_mcp::uses_tools(w)
                        || crate::handlers::forwards_to_mcp(w, &project.handlers)
                }),
        )?),
    };
    let egress = setup.egress.clone();
    let mut live_actions = crate::action_handlers_with(
        project.webhook_url.clone(),
        NetworkAccess::Live,
        egress.clone(),
    );
    tools.register_actions(&mut live_actions);
    crate::register_declared(&mut live_actions, &project.handlers, &NetworkAccess::Live);
    let providers = hensu_providers::build_providers_with(
        &project.providers,
        &|name| std::env::var(name).ok(),
        hensu_providers::BuildOptions {
            force_stub: setup.stubs.force,
            stub: Some(Arc::new(StubProvider::new(
                setup.stubs.files.files(&project.dir),
                setup.stubs.scenario.clone(),
            ))),
            tools: Some(tools.tool_executor(
                hensu_providers::ActionToolExecutor::new(live_actions.clone()).into_arc(),
            )),
            cancel: Some(cancel.clone()),
            on_retry: listener.map(|listener| -> hensu_providers::RetryObserver {
                Arc::new(move |n: &hensu_providers::RetryNotice| {
                    listener.on_event(&Event::ProviderRetry {
                        provider: &n.provider,
                        model: &n.model,
                        attempt: n.attempt,
                        delay_ms: n.delay.as_millis() as u64,
                        error_kind: n.kind,
                        status: n.status,
                        message: &n.message,
                    });
                })
            }),
            ..Default::default()
        },
    );
    let network = network_access(workflow, &providers, &project.allow_hosts);
    let actions = match &network {
        NetworkAccess::Live => live_actions,
        offline => {
            let mut simulated = crate::action_handlers_with(
                project.webhook_url.clone(),
                offline.clone(),
                egress.clone(),
            );
            tools.register_actions(&mut simulated);
            crate::register_declared(&mut simulated, &project.handlers, offline);
            simulated
        }
    };
    let mut builder = Engine::builder()
        .action_handlers(actions)
        .generic_handlers(crate::generic_handlers_with(network.clone(), egress))
        .structured_output(Arc::new(hensu_providers::StructuredOutput {
            max_corrections: project.providers.structured_output.max_corrections,
        }))
        .workflows(Arc::new(repository))
        .options(RunOptions {
            default_agent_timeout: Some(Duration::from_secs(300)),
            ..RunOptions::default()
        });
    builder = if setup.local_commands {
        builder.commands(CommandRegistry::load(&project.dir)?.with_cancel(cancel))
    } else {
        builder.commands(RefuseCommands)
    };
    match setup.review {
        ReviewMode::Interactive => {
            let mut review = crate::InteractiveReview::stdio();
            if let Some(pause) = terminal_pause {
                review = review.with_pause(pause);
            }
            builder = builder.review_handler(Arc::new(review));
        }
        ReviewMode::Deferred => {
            builder = builder.review_handler(Arc::new(crate::DeferredReview::new()));
        }
        ReviewMode::AutoApprove => {}
    }
    for provider in &providers.providers {
        builder = builder.provider(provider.clone());
    }
    Ok(RunEngine {
        engine: builder.build(),
        redactor: providers.redactor.clone(),
        usage: providers.usage.clone(),
        network,
        notes: providers
            .notes
            .iter()
            .cloned()
            .chain(tools.notes())
            .collect(),
        providers: Some(providers),
    })
}

/// The engine of a replay: the recording answers every model, `send` handler (but the pure
/// `log`), command, `api-caller` node and review; the engine's pure generic handlers run as
/// they are. No provider with credentials, no MCP server, no process, no HTTP client.
fn replay_engine(
    workflow: &Workflow,
    repository: MapRepository,
    answers: Arc<crate::recorded::RecordedAnswers>,
) -> RunEngine {
    use crate::recorded::{
        RecordedActions, RecordedApiCaller, RecordedCommands, RecordedReview, ReplayProvider,
    };
    let mut actions = ActionHandlerRegistry::with_defaults();
    for id in answers.send_handlers(std::iter::once(workflow).chain(repository.workflows())) {
        actions.register(Arc::new(RecordedActions::new(&id, answers.clone())));
    }
    let mut generic = hensu_runtime::GenericHandlerRegistry::with_defaults();
    generic.register(Arc::new(RecordedApiCaller::new(answers.clone())));
    let engine = Engine::builder()
        .provider(Arc::new(ReplayProvider::new(answers.clone())))
        .action_handlers(actions)
        .generic_handlers(generic)
        .commands(RecordedCommands::new(answers.clone()))
        .review_handler(Arc::new(RecordedReview::new(answers)))
        .workflows(Arc::new(repository))
        .options(RunOptions::default())
        .build();
    RunEngine {
        engine,
        redactor: Arc::new(Redactor::empty()),
        usage: Arc::new(UsageTotals::default()),
        network: NetworkAccess::Offline {
            allow_hosts: Vec::new(),
        },
        notes: Vec::new(),
        providers: None,
    }
}

/// A run whose every agent is served by stubs (forced, or no credentials) is offline: its
/// webhook and api-caller requests are simulated except to the allowed hosts.
fn network_access(
    workflow: &Workflow,
    built: &BuiltProviders,
    allow_hosts: &[String],
) -> NetworkAccess {
    let all_stub = built.stubs_forced
        || workflow
            .agents
            .values()
            .all(|a| built.route(&a.model).is_none_or(|r| r.provider == "stub"));
    if all_stub {
        NetworkAccess::Offline {
            allow_hosts: allow_hosts.to_vec(),
        }
    } else {
        NetworkAccess::Live
    }
}

/// The workflow ids a workflow's sub-workflow nodes name.
fn children(workflow: &Workflow) -> impl Iterator<Item = &str> {
    // A map node's sub-workflow body too (docs/language.md, *Map over a list*).
    workflow.nodes.values().filter_map(Node::called_workflow)
}

/// The workflows `main`'s sub-workflow nodes can call: those of `candidates` reachable from
/// `main` through sub-workflow nodes, plus `main` itself. Every face gives a run this set, so a
/// sub-workflow resolves the same whether the run is direct, resumed or on a worker.
pub fn callable_workflows<'a>(
    main: &Workflow,
    candidates: impl IntoIterator<Item = &'a Workflow>,
) -> MapRepository {
    let by_id: std::collections::HashMap<&str, &Workflow> =
        candidates.into_iter().map(|w| (w.id.as_str(), w)).collect();
    let mut repo = MapRepository::new();
    let mut seen: BTreeSet<&str> = BTreeSet::from([main.id.as_str()]);
    let mut todo: Vec<&str> = children(main).collect();
    while let Some(id) = todo.pop() {
        if !seen.insert(id) {
            continue;
        }
        if let Some(wf) = by_id.get(id) {
            todo.extend(children(wf));
            repo.insert((*wf).clone());
        }
    }
    repo.insert(main.clone());
    repo
}

/// The nodes of `workflow` and of the workflows it can call with a REQUIRED review.
pub fn required_reviews(workflow: &Workflow, repository: &MapRepository) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for wf in std::iter::once(workflow).chain(repository.workflows()) {
        for node in wf.nodes.values() {
            if let Node::Standard(s) = node
                && s.review_config
                    .as_ref()
                    .is_some_and(|r| r.mode == hensu_ir::ReviewMode::Required)
                && !found.contains(&s.id)
            {
                found.push(s.id.clone());
            }
        }
    }
    found
}
