//! Runs one test through the engine: stub agents (inline outputs registered before the stub
//! files), a review handler that replays the scripted decisions, and a listener that keeps the
//! events; then checks the expectations and builds the trace (docs/testing.md).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use hensu_host::{CommandRegistry, FsStubFiles};
use hensu_ir::Workflow;
use hensu_runtime::{
    CancelToken, Context, Engine, Event, ExecutionListener, MapRepository, ReviewDecision,
    ReviewHandler, ReviewOutcome, ReviewRequest, RunOutcome, ScheduledSignal, StubProvider,
    ToolApprovalRequest, ToolDecision, VirtualClock,
};
use serde_json::Value;

use super::spec::{Decision, TestSpec, virtual_duration_ms};

/// One `[[reviews]]` entry: node, fork branch (any when `None`), visit (every when `None`).
type Scripted = (String, Option<String>, Option<u32>, ReviewDecision);

/// Replays `[[reviews]]`: the entry for this node (in this fork branch, else in any) and
/// visit, else the entry for this node without a visit, else approve. Visits count per node
/// and branch. Every decision is logged for the trace.
struct ScriptedReview {
    script: Vec<Scripted>,
    /// `[[reviews]]` entries with `tool`: (node, tool, decision) (docs/mcp.md, *Tool
    /// approval*).
    tools: Vec<(String, String, ToolDecision)>,
    visits: Mutex<BTreeMap<(String, Option<String>), u32>>,
    log: Mutex<Vec<String>>,
}

#[async_trait]
impl ReviewHandler for ScriptedReview {
    async fn request_review(&self, request: ReviewRequest<'_>) -> ReviewOutcome {
        let branch = request.branch.map(str::to_string);
        let visit = {
            let mut visits = self.visits.lock().unwrap_or_else(|e| e.into_inner());
            let key = (request.node_id.to_string(), branch.clone());
            let v = visits.entry(key).or_insert(0);
            *v += 1;
            *v
        };
        let find = |in_branch: bool, want: Option<u32>| {
            self.script
                .iter()
                .find(|(node, b, v, _)| {
                    let branch_ok = match b {
                        Some(b) => in_branch && branch.as_ref() == Some(b),
                        None => !in_branch,
                    };
                    node == request.node_id && branch_ok && *v == want
                })
                .map(|(_, _, _, d)| d.clone())
        };
        let decision = find(true, Some(visit))
            .or_else(|| find(true, None))
            .or_else(|| find(false, Some(visit)))
            .or_else(|| find(false, None))
            .unwrap_or(ReviewDecision::Approve { edits: None });
        let shown = match &decision {
            ReviewDecision::Approve { .. } => "approve".to_string(),
            ReviewDecision::Reject { reason } => format!("reject ({reason})"),
            ReviewDecision::Backtrack { target, reason, .. } => {
                format!("backtrack to {target} ({reason})")
            }
        };
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(match &branch {
                Some(b) => format!("{}@{b}#{visit}: {shown}", request.node_id),
                None => format!("{}#{visit}: {shown}", request.node_id),
            });
        ReviewOutcome::Decided(decision)
    }

    /// The entry for this node and tool, else approve (as a review without an entry).
    async fn decide_tool_call(&self, request: ToolApprovalRequest<'_>) -> Option<ToolDecision> {
        let decision = self
            .tools
            .iter()
            .find(|(node, tool, _)| node == request.node_id && tool == request.tool)
            .map(|(_, _, d)| d.clone())
            .unwrap_or(ToolDecision::Approve { arguments: None });
        let shown = match &decision {
            ToolDecision::Approve { arguments: None } => {
                format!("approve with {}", request.arguments)
            }
            ToolDecision::Approve { arguments: Some(a) } => {
                format!("approve with {} (edited)", Value::Object(a.clone()))
            }
            ToolDecision::Reject { reason } => format!("reject ({reason})"),
        };
        self.log
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(format!(
                "{} tool {}: {shown}",
                request.node_id, request.tool
            ));
        Some(decision)
    }
}

/// Keeps every event as JSON, without what changes from run to run (and the `tool_call`
/// events of the run's tool loops, `super::tools::ToolEvents`).
#[derive(Default)]
struct EventLog(Arc<Mutex<Vec<Value>>>);

/// Fields left out of the trace: times, ids, and prompt/response text (outputs are in
/// `node_completed`).
const VOLATILE: [&str; 5] = ["duration_us", "execution_id", "at_ms", "prompt", "response"];

impl ExecutionListener for EventLog {
    fn on_event(&self, event: &Event<'_>) {
        let mut v = event.to_json();
        if let Some(obj) = v.as_object_mut() {
            for k in VOLATILE {
                obj.remove(k);
            }
        }
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(v);
    }

    fn call_observer(&self) -> Option<Arc<dyn hensu_runtime::journal::CallObserver>> {
        Some(Arc::new(super::tools::ToolEvents(self.0.clone())))
    }
}

/// What a test run observed.
pub struct Observed {
    pub status: String,
    pub end: Option<String>,
    pub path: Vec<String>,
    pub steps: u64,
    pub visits: BTreeMap<String, u64>,
    pub context: Context,
    pub reviews: Vec<String>,
    pub backtracks: Vec<String>,
    pub events: Vec<Value>,
    pub outcome_message: Option<String>,
    /// How far the virtual clock moved (milliseconds).
    pub elapsed_ms: u64,
}

fn to_context(map: &BTreeMap<String, Value>) -> Context {
    map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// Runs `workflow` as the test describes.
pub async fn run(
    spec: &TestSpec,
    workflow: &Workflow,
    repository: MapRepository,
    dir: &Path,
) -> anyhow::Result<Observed> {
    let scenario = spec.scenario.clone();
    let stubs = StubProvider::new(
        Some(Box::new(FsStubFiles::new(dir.join("stubs")))),
        scenario.clone(),
    );
    let active = scenario.as_deref().unwrap_or("default");
    for (id, text) in &spec.stubs {
        stubs.registry().register(active, id.get_ref(), text);
    }
    let tools = spec
        .reviews
        .iter()
        .filter_map(|r| {
            let tool = r.tool.as_ref()?.get_ref().clone();
            let decision = match r.decision {
                Decision::Reject => ToolDecision::Reject {
                    reason: r.feedback.clone().unwrap_or_default(),
                },
                _ => ToolDecision::Approve {
                    arguments: r.arguments.clone(),
                },
            };
            Some((r.node.get_ref().clone(), tool, decision))
        })
        .collect();
    let script = spec
        .reviews
        .iter()
        .filter(|r| r.tool.is_none())
        .map(|r| {
            let reason = r.feedback.clone().unwrap_or_default();
            let edits = r.edits.as_ref().map(to_context);
            let decision = match r.decision {
                Decision::Approve => ReviewDecision::Approve { edits },
                Decision::Reject => ReviewDecision::Reject { reason },
                Decision::Backtrack => ReviewDecision::Backtrack {
                    target: r
                        .target
                        .as_ref()
                        .map(|t| t.get_ref().clone())
                        .unwrap_or_default(),
                    edits,
                    reason,
                },
            };
            (
                r.node.get_ref().clone(),
                r.branch.as_ref().map(|b| b.get_ref().clone()),
                r.visit.as_ref().map(|v| *v.get_ref()),
                decision,
            )
        })
        .collect();
    let review = Arc::new(ScriptedReview {
        script,
        tools,
        visits: Mutex::default(),
        log: Mutex::default(),
    });
    let events = Arc::new(EventLog::default());
    // The project's `[handlers.NAME]` (docs/mcp.md, *Declared action handlers*), simulated
    // unless `[network] allow_hosts` lists the host, as in a stub run.
    let mut actions = hensu_host::action_handlers(None);
    let mut mcp = hensu_mcp::McpConfig::default();
    if let Ok(project) = hensu_host::launch::ProjectConfig::from_project_dir(dir) {
        let offline = hensu_host::NetworkAccess::Offline {
            allow_hosts: project.allow_hosts.clone(),
        };
        hensu_host::register_declared(&mut actions, &project.handlers, &offline);
        mcp = project.mcp.clone();
    }
    // The tools `require_approval` gates (docs/mcp.md, *Tool approval*).
    let stubs = super::tools::ToolLoopStubs::new(Arc::new(stubs), spec, mcp);
    let engine = Engine::builder()
        .provider(Arc::new(stubs))
        .action_handlers(actions)
        .generic_handlers(hensu_host::generic_handlers())
        .commands(CommandRegistry::load(dir).map_err(|e| anyhow::anyhow!(e))?)
        .workflows(Arc::new(repository))
        .review_handler(review.clone())
        .build();
    let clock = virtual_clock(spec)?;
    let cancel = CancelToken::new();
    let run = hensu_runtime::RunCtx::new(&cancel)
        .listener(events.as_ref())
        .waiter(&clock);
    let result = engine.run(workflow, to_context(&spec.context), run).await;
    let (status, end, message) = match &result.outcome {
        RunOutcome::Completed {
            exit_status,
            end_node,
        } => (
            exit_status.as_str().to_string(),
            Some(end_node.clone()),
            None,
        ),
        RunOutcome::Rejected { reason } => ("REJECTED".into(), None, Some(reason.clone())),
        RunOutcome::Paused => ("PAUSED".into(), None, None),
        RunOutcome::Failed(e) => ("FAILED".into(), None, Some(e.to_string())),
    };
    let mut path: Vec<String> = result.state.path().iter().map(|s| s.to_string()).collect();
    if let Some(e) = &end {
        path.push(e.clone());
    }
    let mut events = std::mem::take(&mut *events.0.lock().unwrap_or_else(|e| e.into_inner()));
    canonical_order(&mut events);
    let mut visits: BTreeMap<String, u64> = BTreeMap::new();
    for e in &events {
        if e["event"] == "node_started"
            && let Some(id) = e["node_id"].as_str()
        {
            *visits.entry(id.to_string()).or_default() += 1;
        }
    }
    let backtracks = result
        .state
        .backtracks
        .iter()
        .map(|b| format!("{} → {} {:?} ({})", b.from, b.to, b.kind, b.reason))
        .collect();
    let reviews = std::mem::take(&mut *review.log.lock().unwrap_or_else(|e| e.into_inner()));
    Ok(Observed {
        status,
        end,
        path,
        steps: result.state.steps,
        visits,
        context: result.state.context.clone(),
        reviews,
        backtracks,
        events,
        outcome_message: message,
        elapsed_ms: clock.elapsed_ms(),
    })
}

/// 2026-01-01T00:00:00Z, where a test's clock starts unless it says otherwise.
const DEFAULT_START_MS: u64 = 1_767_225_600_000;

/// The test's virtual clock (docs/testing.md, *Waits and signals*): its start and signals.
fn virtual_clock(spec: &TestSpec) -> anyhow::Result<VirtualClock> {
    let start = match &spec.start {
        Some(s) => hensu_store::parse_rfc3339(s)
            .ok_or_else(|| anyhow::anyhow!("start: `{s}` is not an RFC 3339 instant"))?,
        None => DEFAULT_START_MS,
    };
    let signals = spec
        .signals
        .iter()
        .map(|s| {
            let at_ms = match &s.after {
                Some(a) => virtual_duration_ms(a)
                    .map_err(|e| anyhow::anyhow!("signal `{}`: after: {e}", s.name.get_ref()))?,
                None => 0,
            };
            Ok(ScheduledSignal {
                name: s.name.get_ref().clone(),
                at_ms,
                payload: s.payload.clone(),
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(VirtualClock::new(start, signals))
}

/// Parallel branches, fork targets and map items run concurrently, so their events interleave
/// in any order. Between a fork, parallel or map node's `node_started` and its
/// `node_completed`, events are stably sorted by the node they concern, then the branch (a map
/// item's position, in number order): each node keeps its own order, and the trace is the same
/// on every run.
fn canonical_order(events: &mut [Value]) {
    let mut i = 0;
    while i < events.len() {
        let e = &events[i];
        let concurrent = e["event"] == "node_started"
            && matches!(e["kind"].as_str(), Some("FORK" | "PARALLEL" | "MAP"));
        if !concurrent {
            i += 1;
            continue;
        }
        let id = e["node_id"].clone();
        let Some(end) = (i + 1..events.len())
            .find(|&j| events[j]["event"] == "node_completed" && events[j]["node_id"] == id)
        else {
            break;
        };
        let key = |e: &Value| {
            let node = e["node_id"].as_str().or(e["from"].as_str()).unwrap_or("");
            // Calls without a branch (the judge) come after the branches.
            let branch = match (e["branch_id"].as_str(), e["index"].as_u64()) {
                (_, Some(item)) => format!("{item:020}"),
                (Some(b), _) if b.bytes().all(|c| c.is_ascii_digit()) => format!("{b:0>20}"),
                (Some(b), _) => b.to_string(),
                (None, None) => "\u{10FFFF}".to_string(),
            };
            (node.to_string(), branch)
        };
        events[i + 1..end].sort_by_key(key);
        i = end + 1;
    }
}

/// The trace written by `--update` and compared afterwards: stable, line-oriented text.
pub fn trace(spec: &TestSpec, o: &Observed) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(out, "workflow: {}", spec.workflow.get_ref());
    let _ = writeln!(
        out,
        "scenario: {}",
        spec.scenario.as_deref().unwrap_or("default")
    );
    let _ = writeln!(out, "status: {}", o.status);
    if let Some(e) = &o.end {
        let _ = writeln!(out, "end: {e}");
    }
    if let Some(m) = &o.outcome_message {
        let _ = writeln!(out, "message: {m}");
    }
    let _ = writeln!(out, "path: {}", o.path.join(" → "));
    let _ = writeln!(out, "steps: {}", o.steps);
    if o.elapsed_ms > 0 {
        let _ = writeln!(out, "elapsed: {}ms (virtual)", o.elapsed_ms);
    }
    let _ = writeln!(out, "reviews:");
    for r in &o.reviews {
        let _ = writeln!(out, "  {r}");
    }
    let _ = writeln!(out, "backtracks:");
    for b in &o.backtracks {
        let _ = writeln!(out, "  {b}");
    }
    let _ = writeln!(out, "outputs:");
    for (k, v) in &o.context {
        let _ = writeln!(
            out,
            "  {k} = {}",
            serde_json::to_string(v).unwrap_or_default()
        );
    }
    let _ = writeln!(out, "events:");
    for e in &o.events {
        let _ = writeln!(out, "  {}", serde_json::to_string(e).unwrap_or_default());
    }
    out
}

/// Every expectation that does not hold, as one line each.
pub fn failures(spec: &TestSpec, o: &Observed) -> Vec<String> {
    let mut out = Vec::new();
    let e = &spec.expect;
    if let Some(end) = &e.end
        && o.end.as_deref() != Some(end.get_ref().as_str())
    {
        out.push(format!(
            "end: expected `{}`, got {}",
            end.get_ref(),
            o.end
                .as_deref()
                .map_or("no end node".to_string(), |s| format!("`{s}`"))
        ));
    }
    if let Some(status) = &e.status
        && *status.get_ref() != o.status
    {
        let why = o
            .outcome_message
            .as_deref()
            .map(|m| format!(" ({m})"))
            .unwrap_or_default();
        out.push(format!(
            "status: expected {}, got {}{why}",
            status.get_ref(),
            o.status
        ));
    }
    if let Some(path) = &e.path {
        let want: Vec<&str> = path.iter().map(|s| s.get_ref().as_str()).collect();
        if want != o.path {
            out.push(format!(
                "path: expected {}, got {}",
                want.join(" → "),
                o.path.join(" → ")
            ));
        }
    }
    if let Some(sub) = &e.path_contains {
        let mut it = o.path.iter();
        for want in sub {
            if !it.any(|p| p == want.get_ref()) {
                out.push(format!(
                    "path: expected the subsequence {} in {}",
                    sub.iter()
                        .map(|s| s.get_ref().as_str())
                        .collect::<Vec<_>>()
                        .join(" → "),
                    o.path.join(" → ")
                ));
                break;
            }
        }
    }
    for (node, &want) in &e.visits {
        let got = o.visits.get(node.get_ref()).copied().unwrap_or(0);
        if got != want {
            out.push(format!(
                "visits of `{}`: expected {want}, got {got}",
                node.get_ref()
            ));
        }
    }
    if let Some(steps) = e.steps
        && steps != o.steps
    {
        out.push(format!("steps: expected {steps}, got {}", o.steps));
    }
    if let Some(elapsed) = &e.elapsed {
        match virtual_duration_ms(elapsed) {
            Ok(want) if want != o.elapsed_ms => out.push(format!(
                "elapsed: expected {want}ms on the virtual clock, got {}ms",
                o.elapsed_ms
            )),
            Ok(_) => {}
            Err(msg) => out.push(format!("elapsed: {msg}")),
        }
    }
    for (key, want) in &e.outputs {
        let got = o.context.get(key);
        if want.present == Some(false) {
            if got.is_some() {
                out.push(format!("output `{key}`: expected absent, it is present"));
            }
            continue;
        }
        let Some(got) = got else {
            out.push(format!("output `{key}`: absent"));
            continue;
        };
        let text = hensu_runtime::render(got);
        if let Some(eq) = &want.equals
            && !values_equal(eq, got)
            && eq.as_str() != Some(text.as_ref())
        {
            out.push(format!("output `{key}`: expected {eq}, got {got}"));
        }
        if let Some(c) = &want.contains
            && !text.contains(c.as_str())
        {
            out.push(format!(
                "output `{key}`: expected to contain {c:?}, got {text:?}"
            ));
        }
        if let Some(re) = &want.matches
            && let Ok(r) = regex::Regex::new(re.get_ref())
            && !r.is_match(&text)
        {
            out.push(format!(
                "output `{key}`: expected to match /{}/, got {text:?}",
                re.get_ref()
            ));
        }
    }
    let mut events = o.events.iter();
    for want in &e.events {
        let found = events.any(|ev| want.iter().all(|(k, v)| ev.get(k) == Some(v)));
        if !found {
            out.push(format!(
                "events: no {} (in order after the previous expected event)",
                serde_json::to_string(want).unwrap_or_default()
            ));
            break;
        }
    }
    out
}

/// `equals` of an output: JSON equality, except that numbers compare by value (TOML's `40` is
/// an integer, the context's `40.0` a float; a test author means the same number).
fn values_equal(want: &serde_json::Value, got: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (want, got) {
        (Value::Number(a), Value::Number(b)) => a == b || a.as_f64() == b.as_f64(),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| values_equal(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(k, x)| b.get(k).is_some_and(|y| values_equal(x, y)))
        }
        _ => want == got,
    }
}

#[cfg(test)]
mod tests {
    use super::values_equal;
    use serde_json::json;

    #[test]
    fn an_integer_equals_the_same_float() {
        assert!(values_equal(&json!(40), &json!(40.0)));
        assert!(values_equal(
            &json!({"n": [1, 2]}),
            &json!({"n": [1.0, 2.0]})
        ));
        assert!(!values_equal(&json!(40), &json!(40.5)));
        assert!(!values_equal(&json!(40), &json!("40")));
    }
}
