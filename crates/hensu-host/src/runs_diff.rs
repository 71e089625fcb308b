//! Two stored runs compared step by step (docs/cli.md, *Comparing two runs*): the node each
//! step ran, its status, output and error, then the final public contexts and the statuses,
//! with the first step where they part. The one comparison `hensuc runs diff`, the API's
//! `GET /api/v1/executions/{id}/diff/{other}` and the console's diff page show; its JSON is
//! docs/schemas/runs-diff.schema.json.
//!
//! Steps are compared by position in each run's history (a backtrack or a retry is a step of
//! its own), so two runs that take different paths differ at the first step whose node differs.
//! A compensation's entry is a step too, as the history holds it.

use hensu_runtime::{HistoryStep, RunState};
use hensu_store::{RunRecord, StateStore};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The JSON's `format_version`: raised when the shape changes.
pub const RUNS_DIFF_FORMAT_VERSION: u32 = 1;

/// A run as the diff reads it: its record and its latest state.
#[derive(Clone, Debug)]
pub struct DiffSide {
    pub record: RunRecord,
    pub state: RunState,
}

/// Reads run `id` for a diff (its record and decoded latest state).
pub async fn side(store: &dyn StateStore, id: &str) -> Result<DiffSide, DiffError> {
    let stored = store.load(id).await.map_err(DiffError::Store)?;
    let state = crate::restore(id, &stored.snapshot).map_err(DiffError::State)?;
    Ok(DiffSide {
        record: stored.record,
        state,
    })
}

/// Why a run could not be read for a diff.
#[derive(Debug)]
pub enum DiffError {
    Store(hensu_store::StoreError),
    /// The stored state does not decode.
    State(String),
}

impl std::fmt::Display for DiffError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DiffError::Store(e) => write!(f, "{e}"),
            DiffError::State(m) => f.write_str(m),
        }
    }
}

/// Which part of a step differs first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Difference {
    Node,
    Status,
    Output,
    Error,
    /// Only one run has the step.
    Missing,
}

impl Difference {
    pub fn as_str(self) -> &'static str {
        match self {
            Difference::Node => "node",
            Difference::Status => "status",
            Difference::Output => "output",
            Difference::Error => "error",
            Difference::Missing => "missing",
        }
    }
}

/// One run's summary in a diff.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DiffRun {
    pub run_id: String,
    pub workflow: String,
    pub workflow_version: String,
    /// The stored status (`completed`, `failed`, …).
    pub status: String,
    pub exit_status: Option<String>,
    /// The nodes the run executed, in order (end node excluded).
    pub path: Vec<String>,
}

/// One step of one run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DiffStepSide {
    pub node: String,
    /// `SUCCESS`, `FAILURE`, `PENDING` or `END`.
    pub status: String,
    /// The node's output (redacted as in the store).
    pub output: Option<Value>,
    pub error: Option<String>,
}

/// The steps of both runs at one position (1-based); `None`: the run has no step there.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DiffStep {
    pub step: u64,
    pub a: Option<DiffStepSide>,
    pub b: Option<DiffStepSide>,
    /// The first field that differs at this step.
    pub differs_in: Option<Difference>,
}

/// Where the runs part first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FirstDifference {
    pub step: u64,
    pub node_a: Option<String>,
    pub node_b: Option<String>,
    pub differs_in: Option<Difference>,
}

/// A public context key (not `_`-prefixed) whose final values differ; an absent value is
/// `null`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ContextDifference {
    pub key: String,
    pub a: Option<Value>,
    pub b: Option<Value>,
}

/// Two runs compared (docs/schemas/runs-diff.schema.json).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RunsDiff {
    /// 1.
    pub format_version: u32,
    pub a: DiffRun,
    pub b: DiffRun,
    /// Same steps, same final public context and same status.
    pub same: bool,
    pub first_difference: Option<FirstDifference>,
    pub steps: Vec<DiffStep>,
    /// The public context keys whose final values differ, in key order.
    pub context: Vec<ContextDifference>,
}

/// Which part of a step differs first.
fn step_difference(a: Option<&HistoryStep>, b: Option<&HistoryStep>) -> Option<Difference> {
    let (a, b) = match (a, b) {
        (Some(a), Some(b)) => (a, b),
        (None, None) => return None,
        _ => return Some(Difference::Missing),
    };
    if a.node_id != b.node_id {
        Some(Difference::Node)
    } else if a.status != b.status {
        Some(Difference::Status)
    } else if a.output != b.output {
        Some(Difference::Output)
    } else if a.error != b.error {
        Some(Difference::Error)
    } else {
        None
    }
}

/// The public keys (not `_`-prefixed) whose final values differ, in key order.
fn context_differences(a: &RunState, b: &RunState) -> Vec<ContextDifference> {
    let mut keys: Vec<&String> = a.context.keys().chain(b.context.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| !k.starts_with('_'))
        .filter_map(|k| {
            let (va, vb) = (a.context.get(k.as_str()), b.context.get(k.as_str()));
            (va != vb).then(|| ContextDifference {
                key: k.clone(),
                a: va.cloned(),
                b: vb.cloned(),
            })
        })
        .collect()
}

fn step_side(s: &HistoryStep) -> DiffStepSide {
    DiffStepSide {
        node: s.node_id.clone(),
        status: s.status.as_str().to_string(),
        output: s.output.clone(),
        error: s.error.clone(),
    }
}

fn run(s: &DiffSide) -> DiffRun {
    DiffRun {
        run_id: s.record.run_id.clone(),
        workflow: s.record.workflow_id.clone(),
        workflow_version: s.record.workflow_version.clone(),
        status: s.record.status.as_str().to_string(),
        exit_status: s.record.exit_status.clone(),
        path: s.state.path().into_iter().map(str::to_string).collect(),
    }
}

/// Compares run `a` with run `b`.
pub fn compare(a: &DiffSide, b: &DiffSide) -> RunsDiff {
    let (ha, hb) = (&a.state.history, &b.state.history);
    let steps: Vec<DiffStep> = (0..ha.len().max(hb.len()))
        .map(|i| {
            let (sa, sb) = (ha.get(i), hb.get(i));
            DiffStep {
                step: i as u64 + 1,
                a: sa.map(step_side),
                b: sb.map(step_side),
                differs_in: step_difference(sa, sb),
            }
        })
        .collect();
    let context = context_differences(&a.state, &b.state);
    let first_difference = steps
        .iter()
        .find(|s| s.differs_in.is_some())
        .map(|s| FirstDifference {
            step: s.step,
            node_a: s.a.as_ref().map(|x| x.node.clone()),
            node_b: s.b.as_ref().map(|x| x.node.clone()),
            differs_in: s.differs_in,
        });
    let same =
        first_difference.is_none() && context.is_empty() && a.record.status == b.record.status;
    RunsDiff {
        format_version: RUNS_DIFF_FORMAT_VERSION,
        a: run(a),
        b: run(b),
        same,
        first_difference,
        steps,
        context,
    }
}

/// Reads runs `a` and `b` from `store` and compares them.
pub async fn diff_runs(store: &dyn StateStore, a: &str, b: &str) -> Result<RunsDiff, DiffError> {
    let a = side(store, a).await?;
    let b = side(store, b).await?;
    Ok(compare(&a, &b))
}
