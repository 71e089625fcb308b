//! Replaying a stored run (docs/cli.md, *Replay*): the run is executed again with every
//! outside call answered from its run log ([`crate::recorded`]) — no model call, no command,
//! no HTTP request, no human — and the path, transitions, outputs and final context are
//! compared with the recorded ones (a `wait` or `awaitSignal` node answered from its recorded
//! step: [`crate::recorded::RecordedWaits`]); the first difference is the divergence (E0916), a call the
//! recording lacks is named (E0917). The one function every face calls (`hensuc replay`,
//! `POST /api/v1/executions/{id}/replay`, `hensuc replay --all`): [`replay_run`]. Nothing is
//! written: the replay has no store.

mod compare;

use std::sync::Arc;

use hensu_ir::Workflow;
use hensu_runtime::{
    Boundary, CancelToken, MapRepository, RunControlHook, RunCtx, RunOutcome, RunState,
    RuntimeError,
};
use hensu_store::{RunRecord, RunStatus, StateStore, StoreError};
use serde::{Deserialize, Serialize};

use super::{Extras, ProjectConfig, ReviewMode, RunSetup, StoredWorkflow, ToolSupply};
use crate::recorded::recording;

pub use compare::{Divergence, DivergenceKind};

/// The `format_version` of a replay report (`hensuc replay --json`, the API's answer).
pub const REPLAY_FORMAT_VERSION: u32 = 1;

/// A replay to make.
pub struct ReplayPlan<'a> {
    /// The run replayed.
    pub run_id: &'a str,
    /// Replay up to this step of the run's log (`None`: to its end) and compare there.
    pub until: Option<u64>,
    /// Replay against this workflow instead of the run's own (a change checked against the
    /// run's past).
    pub workflow: Option<Workflow>,
    /// The workflows the run's sub-workflow nodes can call (the face's: the project's, the
    /// tenant's); the run's own workflow is added.
    pub callable: Vec<Workflow>,
}

/// The outcome of a replay.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReplayReport {
    pub format_version: u32,
    pub run_id: String,
    /// The workflow replayed (the run's, or the one given).
    pub workflow_id: String,
    /// The log steps compared: the replay starts from the state at `from_step` and is compared
    /// with the state at `to_step`.
    pub from_step: u64,
    pub to_step: u64,
    /// Path, transitions, outputs, final context and end agree.
    pub identical: bool,
    /// The recorded run's status at `to_step` (`completed`, `failed`, …) and the replay's.
    pub recorded_status: String,
    pub replayed_status: String,
    /// Steps (history entries) compared.
    pub steps: usize,
    /// Agent answers the recording held.
    pub recorded_answers: usize,
    /// The first difference (`None` when identical).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub divergence: Option<Divergence>,
    /// The calls the recording had no answer for (answered with a failure, never live).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_recorded: Vec<String>,
}

/// Why a run could not be replayed.
#[derive(Debug)]
pub enum ReplayError {
    /// The store refused or failed ([`StoreError::NotFound`]: no such run).
    Store(StoreError),
    /// The stored run, its workflow or the replay's engine does not load.
    Invalid(String),
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplayError::Store(e) => write!(f, "{e}"),
            ReplayError::Invalid(m) => f.write_str(m),
        }
    }
}

impl From<StoreError> for ReplayError {
    fn from(e: StoreError) -> ReplayError {
        ReplayError::Store(e)
    }
}

/// Stops the replay at the boundary where the recorded state it is compared with was taken.
struct Until {
    steps: u64,
}

#[async_trait::async_trait]
impl RunControlHook for Until {
    async fn at_boundary(&self, state: &RunState) -> Result<Boundary, RuntimeError> {
        Ok(if state.steps >= self.steps {
            Boundary::Suspend
        } else {
            Boundary::Continue
        })
    }
}

/// The setup of a replay's engine: nothing of a project, no store, no commands, no stubs
/// (the recorded answers replace every provider and handler that does I/O).
fn replay_setup() -> RunSetup {
    RunSetup {
        project: Arc::new(ProjectConfig::default()),
        store: None,
        stubs: super::Stubs::default(),
        review: ReviewMode::Deferred,
        local_commands: false,
        egress: None,
    }
}

/// Replays `plan.run_id` from its run log and compares the replay with the recording. The run
/// may be in any state (a paused run is compared up to its pause); the store is only read.
pub async fn replay_run(
    store: &Arc<dyn StateStore>,
    plan: ReplayPlan<'_>,
) -> Result<ReplayReport, ReplayError> {
    let stored = store.load(plan.run_id).await?;
    let envelope =
        StoredWorkflow::decode(plan.run_id, &stored.workflow).map_err(ReplayError::Invalid)?;
    let recorded_wf = envelope.workflow;
    let workflow = plan.workflow.unwrap_or_else(|| recorded_wf.clone());
    let mut everything: Vec<&Workflow> = vec![&recorded_wf];
    everything.extend(plan.callable.iter());
    let reviews = match envelope.options.review {
        Some(ReviewMode::AutoApprove) => recording::Reviews::Approved,
        Some(ReviewMode::Interactive) => recording::Reviews::InTerminal,
        Some(ReviewMode::Deferred) | None => recording::Reviews::Paused,
    };
    let recorded = recording::read(store, plan.run_id, plan.until, &everything, reviews).await?;
    let repository: MapRepository = super::callable_workflows(&workflow, &plan.callable);
    let answers = Arc::new(recorded.answers);
    let run = super::engine(
        &replay_setup(),
        &workflow,
        repository,
        Extras {
            // The recorded answers replace every tool: no MCP server starts.
            tools: ToolSupply::Project,
            listener: None,
            terminal_pause: None,
            cancel: CancelToken::new(),
            recorded: Some(answers.clone()),
        },
    )
    .map_err(ReplayError::Invalid)?;
    let prepared = run
        .engine
        .prepare(Arc::new(workflow.clone()))
        .map_err(|e| ReplayError::Invalid(format!("the replay's workflow does not load: {e}")))?;
    let cancel = CancelToken::new();
    let until = Until {
        steps: recorded.end.steps,
    };
    let controls: [&dyn RunControlHook; 1] = [&until];
    let limited = plan.until.is_some();
    // Waits and signals are answered from the recording at once (nothing sleeps).
    let waits = crate::recorded::RecordedWaits::new(&workflow, &recorded.start, &recorded.end);
    let ctx = RunCtx::new(&cancel).run_id(plan.run_id).waiter(&waits);
    let ctx = if limited {
        ctx.controls(&controls)
    } else {
        ctx
    };
    let result = if recorded.forked {
        run.engine
            .resume(&prepared, recorded.start.clone(), None, ctx)
            .await
    } else {
        run.engine
            .run_prepared(&prepared, recorded.start.context.clone(), ctx)
            .await
    };
    let record = store.record(plan.run_id).await?;
    let recorded_status = status_at(&record, &recorded.end, limited);
    // Stopped at `--until` (not at a pending review): the run was going on there.
    let replayed_status = match &result.outcome {
        RunOutcome::Paused
            if limited
                && !matches!(
                    result.state.phase,
                    hensu_runtime::ExecutionPhase::Awaiting { .. }
                ) =>
        {
            "running"
        }
        outcome => replayed_status(outcome),
    };
    let misses = answers.misses();
    let divergence = compare::first_divergence(
        &recorded.start,
        &recorded.end,
        &result.state,
        (recorded_status, replayed_status),
        misses.first(),
    );
    Ok(ReplayReport {
        format_version: REPLAY_FORMAT_VERSION,
        run_id: plan.run_id.to_string(),
        workflow_id: workflow.id.clone(),
        from_step: recorded.start_step,
        to_step: recorded.end_step,
        identical: divergence.is_none(),
        recorded_status: recorded_status.to_string(),
        replayed_status: replayed_status.to_string(),
        steps: recorded
            .end
            .history
            .len()
            .saturating_sub(recorded.start.history.len()),
        recorded_answers: answers.agent_answers(),
        divergence,
        not_recorded: misses.iter().map(ToString::to_string).collect(),
    })
}

/// The recorded run's status as the replay compares it: at `--until`, the run was going on.
fn status_at(record: &RunRecord, end: &RunState, limited: bool) -> &'static str {
    if limited && !matches!(end.phase, hensu_runtime::ExecutionPhase::Terminal) {
        return "running";
    }
    match record.status {
        RunStatus::Completed => "completed",
        RunStatus::Failed => "failed",
        RunStatus::Rejected => "rejected",
        RunStatus::Cancelled => "cancelled",
        RunStatus::Paused => "paused",
        _ => "running",
    }
}

/// The replay's end in the words of [`status_at`]; a replay stopped at `--until` is
/// `running`.
fn replayed_status(outcome: &RunOutcome) -> &'static str {
    match outcome {
        RunOutcome::Completed { .. } => "completed",
        RunOutcome::Rejected { .. } => "rejected",
        RunOutcome::Paused => "paused",
        RunOutcome::Failed(RuntimeError::Cancelled { .. }) => "cancelled",
        RunOutcome::Failed(_) => "failed",
    }
}
