//! The types a run is described by: its options, its cancellation token, how it ended, and
//! the ids of the post-execution processors (they appear in a paused state).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hensu_ir::ExitStatus;

use crate::error::RuntimeError;
use crate::state::RunState;

/// A cancellation flag. The run loop checks it at node boundaries and also waits on it while a
/// node runs: in-flight work is abandoned at once and no transition is taken
/// (docs/language.md, *Runtime semantics*).
#[derive(Clone, Debug, Default)]
pub struct CancelToken(Arc<CancelInner>);

#[derive(Debug, Default)]
struct CancelInner {
    flag: AtomicBool,
    notify: tokio::sync::Notify,
}

impl CancelToken {
    pub fn new() -> Self {
        Self::default()
    }

    /// Requests cancellation; the run stops before taking another transition.
    pub fn cancel(&self) {
        self.0.flag.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.flag.load(Ordering::SeqCst)
    }

    /// Completes once [`cancel`](Self::cancel) has been called.
    pub async fn cancelled(&self) {
        loop {
            let notified = self.0.notify.notified();
            tokio::pin!(notified);
            // Registered before the check: a cancel between the check and the await is seen.
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

/// Engine-wide options.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Timeout of an agent call when the agent declares none (`None` = unbounded).
    pub default_agent_timeout: Option<Duration>,
    /// Overrides the workflow's `maxSteps`.
    pub max_steps: Option<u64>,
    /// Overrides the workflow's `maxExecutionTime`.
    pub max_execution_time: Option<Duration>,
    /// Fixed timeout of one parallel branch (upstream: 300 s).
    pub branch_timeout: Duration,
    /// Automatic rubric backtracks allowed per visit of a rubric node that has no bounded
    /// (`revise … retry N`) rule of its own; with one, its budget is the limit
    /// (docs/language.md, *Rubric evaluation*).
    pub rubric_backtrack_limit: u64,
}

/// The default of [`RunOptions::rubric_backtrack_limit`].
pub const DEFAULT_RUBRIC_BACKTRACK_LIMIT: u64 = 3;

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            default_agent_timeout: None,
            max_steps: None,
            max_execution_time: None,
            branch_timeout: Duration::from_secs(300),
            rubric_backtrack_limit: DEFAULT_RUBRIC_BACKTRACK_LIMIT,
        }
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum RunOutcome {
    /// An end node was reached.
    Completed {
        exit_status: ExitStatus,
        end_node: String,
    },
    /// A reviewer rejected the run.
    Rejected { reason: String },
    /// The run waits for an out-of-band answer (resume with [`Engine::resume`](crate::Engine::resume)).
    Paused,
    /// The run failed.
    Failed(RuntimeError),
}

impl RunOutcome {
    /// `true` for a completed run whose end node has status SUCCESS.
    pub fn is_success(&self) -> bool {
        matches!(
            self,
            RunOutcome::Completed {
                exit_status: ExitStatus::Success,
                ..
            }
        )
    }
}

/// A finished (or paused) run with its state.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub outcome: RunOutcome,
    pub state: RunState,
    pub duration: Duration,
}

/// The post-execution processors, in their fixed order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PostProcessor {
    OutputExtraction,
    Rubric,
    Review,
    NodeComplete,
    History,
    Transition,
}

impl PostProcessor {
    /// The pipeline, in order.
    pub const PIPELINE: [PostProcessor; 6] = [
        PostProcessor::OutputExtraction,
        PostProcessor::Rubric,
        PostProcessor::Review,
        PostProcessor::NodeComplete,
        PostProcessor::History,
        PostProcessor::Transition,
    ];

    /// Upstream processor id (used in `ExecutionPhase::Awaiting`).
    pub fn id(self) -> &'static str {
        match self {
            PostProcessor::OutputExtraction => "OutputExtractionPostProcessor",
            PostProcessor::Rubric => "RubricPostProcessor",
            PostProcessor::Review => "ReviewPostProcessor",
            PostProcessor::NodeComplete => "NodeCompletePostProcessor",
            PostProcessor::History => "HistoryPostProcessor",
            PostProcessor::Transition => "TransitionPostProcessor",
        }
    }
}
