//! The trace of a stored run, rebuilt from its run log (`hensuc runs trace`): every step row
//! adds the history entry of the visit it recorded (and compensations, backtracks), status
//! rows give the review pauses, claimed rows the takeovers. A run taken over by another
//! worker is one log, so one trace.

use std::collections::BTreeSet;

use hensu_ir::{CompensationBody, Node, Workflow};
use hensu_runtime::journal::{CallKind, CallPhase, JournalEntry};
use hensu_runtime::{Backtrack, CompensationRecord, ExecutionPhase, HistoryStep, RunState};
use hensu_store::{ClaimNote, LogEntry, LogKind, RunRecord, RunStatus};
use serde_json::Value;

use crate::ids::{Scope, SpanKey};
use crate::semconv::{self, RunInfo};
use crate::span::{Attrs, SpanEvent, SpanRecord, Status, Trace};

/// What a rebuild reads: the run's record, the workflow stored with it, its whole log and,
/// when it decodes, its latest state (for visits recorded by a full snapshot instead of a
/// delta, and for the visit a paused run is in).
pub struct RunLog<'a> {
    pub run: RunInfo,
    pub record: &'a RunRecord,
    pub workflow: &'a Workflow,
    pub entries: &'a [LogEntry],
    pub state: Option<&'a RunState>,
}

/// One row's additions to the state, read from its delta.
#[derive(Default)]
struct Added {
    history: Vec<HistoryStep>,
    compensations: Vec<CompensationRecord>,
    backtracks: Vec<Backtrack>,
}

fn added(entry: &LogEntry) -> Added {
    let mut out = Added::default();
    let Some(delta) = &entry.delta else {
        return out;
    };
    let Ok(Value::Array(ops)) = serde_json::to_value(delta) else {
        return out;
    };
    for op in ops {
        if op.get("op").and_then(Value::as_str) != Some("add") {
            continue;
        }
        let Some(value) = op.get("value").cloned() else {
            continue;
        };
        match op.get("path").and_then(Value::as_str) {
            Some("/history/-") => out.history.extend(serde_json::from_value(value).ok()),
            Some("/compensations/-") => {
                out.compensations.extend(serde_json::from_value(value).ok())
            }
            Some("/backtracks/-") => out.backtracks.extend(serde_json::from_value(value).ok()),
            _ => {}
        }
    }
    out
}

/// A review pause seen in the log: the node, when it paused, when the run went on.
struct Pause {
    node: String,
    at: u64,
    resumed_at: Option<u64>,
}

/// Rebuilds the trace of a stored run.
pub fn rebuild(log: &RunLog<'_>) -> Trace {
    let run_id = log.run.run_id.as_str();
    let mut spans = Vec::new();
    let mut root = semconv::run_span(&log.run);
    let last_at = log
        .entries
        .last()
        .map_or(log.record.updated_at, |e| e.meta.at);
    root.times_ms(log.record.started_at, last_at);
    root.attr("hensu.run.status", log.record.status.as_str());
    if let Some(e) = &log.record.exit_status {
        root.attr("hensu.exit_status", e.as_str());
    }
    root.status = run_status(log.record);

    let mut seen_steps = BTreeSet::new();
    let mut seen_comps = BTreeSet::new();
    let mut pauses: Vec<Pause> = Vec::new();
    // The write time of the last boundary row that moved the run to each node: the start of
    // that node's visit.
    let mut boundary_at = log.record.started_at;
    let mut prev_at = log.record.started_at;
    let adds: Vec<Added> = log.entries.iter().map(added).collect();
    // Per row, the lowest visit step a later row's delta adds: a full snapshot row (written
    // instead of a delta, first boundary after a resume or takeover) recorded the visits of the
    // latest state below it that no delta carried.
    let mut later_min = vec![u64::MAX; adds.len()];
    let mut min = u64::MAX;
    for (i, a) in adds.iter().enumerate().rev() {
        later_min[i] = min;
        min = a.history.iter().map(|h| h.step).fold(min, u64::min);
    }
    for (i, entry) in log.entries.iter().enumerate() {
        let at = entry.meta.at;
        let paused = entry.meta.status == RunStatus::Paused;
        let open = pauses.last().is_some_and(|p| p.resumed_at.is_none());
        if open
            && !paused
            && let Some(p) = pauses.last_mut()
        {
            p.resumed_at = Some(at);
        }
        match entry.meta.kind {
            LogKind::Claimed => root.events.push(claim_event(entry)),
            LogKind::Journal => spans.extend(tool_call(run_id, entry)),
            LogKind::Step | LogKind::Snapshot => {
                let add = &adds[i];
                let from_snapshot: Vec<&HistoryStep> = match (entry.delta.is_none(), log.state) {
                    (true, Some(state)) => state
                        .history
                        .iter()
                        .filter(|h| h.step < later_min[i] && !seen_steps.contains(&h.step))
                        .collect(),
                    _ => Vec::new(),
                };
                for h in add.history.iter().chain(from_snapshot) {
                    if h.compensates.is_some() || !seen_steps.insert(h.step) {
                        continue;
                    }
                    let mut node = visit(log, h, boundary_at, at, &mut spans);
                    for b in &add.backtracks {
                        node.events.push(backtrack_event(b, at));
                    }
                    review_spans(run_id, h.step, &h.node_id, &mut pauses, &mut spans);
                    spans.push(node);
                }
                for c in &add.compensations {
                    if seen_comps.insert((c.visit_step, c.compensation_id.clone())) {
                        compensation(log, c, prev_at, at, &mut spans);
                    }
                }
                if !paused {
                    boundary_at = at;
                }
            }
            _ => {}
        }
        // A review pause: a row that leaves the run paused (the step that stops at the
        // review, or a status row).
        if paused && !open {
            pauses.push(Pause {
                node: entry.meta.node.clone().unwrap_or_default(),
                at,
                resumed_at: None,
            });
        }
        prev_at = at;
    }
    if let Some(state) = log.state {
        let seen = Seen {
            steps: &seen_steps,
            comps: &seen_comps,
            boundary_at,
        };
        from_state(log, state, &seen, &mut pauses, &mut spans);
    }
    spans.push(root);
    Trace::new(run_id, log.run.trace_id(), spans)
}

/// The `execute_tool` span of a journal row that records a tool-loop call's result (its end
/// is the row's write, its start that less the call's duration); `None` for other rows.
fn tool_call(run_id: &str, entry: &LogEntry) -> Option<SpanRecord> {
    let call: JournalEntry = serde_json::from_value(entry.output.clone()?).ok()?;
    if call.kind != CallKind::Tool || call.phase != CallPhase::Finished {
        return None;
    }
    let step = semconv::tool_visit_step(&call.visit)?;
    let node = call.node.as_deref()?;
    let ok = call.ok.unwrap_or(true);
    let mut s = semconv::tool_span(run_id, step, node, &call.visit, call.index, &call.name, ok);
    let end = entry.meta.at;
    s.times_ms(end.saturating_sub(call.duration_ms.unwrap_or(0)), end);
    Some(s)
}

/// What the walk over the log found.
struct Seen<'a> {
    steps: &'a BTreeSet<u64>,
    comps: &'a BTreeSet<(u64, String)>,
    /// The last boundary before the node the run is at.
    boundary_at: u64,
}

/// Visits and compensations the deltas did not carry (recorded by a full snapshot), and the
/// visit a paused run waits in.
fn from_state(
    log: &RunLog<'_>,
    state: &RunState,
    seen: &Seen<'_>,
    pauses: &mut Vec<Pause>,
    spans: &mut Vec<SpanRecord>,
) {
    let start = log.record.started_at;
    for h in &state.history {
        if h.compensates.is_none() && !seen.steps.contains(&h.step) {
            let end = start.saturating_add(h.at_ms);
            let node = visit(log, h, end, end, spans);
            spans.push(node);
        }
    }
    for c in &state.compensations {
        if !seen
            .comps
            .contains(&(c.visit_step, c.compensation_id.clone()))
        {
            compensation(log, c, log.record.updated_at, log.record.updated_at, spans);
        }
    }
    if let ExecutionPhase::Awaiting { node_id, .. } = &state.phase
        && !log.record.status.is_terminal()
        && !seen.steps.contains(&state.steps)
    {
        let run_id = log.run.run_id.as_str();
        let last = log.entries.last().map_or(start, |e| e.meta.at);
        let mut node = semconv::node_span(run_id, log.workflow, state.steps, node_id);
        node.times_ms(seen.boundary_at, last);
        node.attr("hensu.node.status", "PENDING");
        agent_calls(log, state.steps, node_id, &node, None, None, spans);
        review_spans(run_id, state.steps, node_id, pauses, spans);
        spans.push(node);
    }
}

/// The span of one visit (returned, to take events) and its agent calls and actions.
fn visit(
    log: &RunLog<'_>,
    h: &HistoryStep,
    start_ms: u64,
    end_ms: u64,
    spans: &mut Vec<SpanRecord>,
) -> SpanRecord {
    let run_id = log.run.run_id.as_str();
    let mut node = semconv::node_span(run_id, log.workflow, h.step, &h.node_id);
    node.times_ms(start_ms, end_ms);
    semconv::node_status(&mut node, h.status, h.error.as_deref());
    if let Some(u) = &h.usage {
        semconv::usage(&mut node, u);
    }
    if let Some(r) = &h.rubric {
        node.attr("hensu.rubric.id", r.rubric_id.as_str())
            .attr("hensu.rubric.score", r.score)
            .attr("hensu.rubric.passed", r.passed);
    }
    agent_calls(
        log,
        h.step,
        &h.node_id,
        &node,
        h.usage.as_ref(),
        h.output.as_ref(),
        spans,
    );
    if let Some(Node::Action(a)) = log.workflow.node(&h.node_id) {
        let parent = node.key.clone();
        for (i, action) in a.actions.iter().enumerate() {
            let label = semconv::action_label(action);
            let index = u32::try_from(i).unwrap_or(u32::MAX);
            let mut s = semconv::action_span(run_id, h.step, index, Scope::Visit, &parent, &label);
            s.start_unix_nano = node.start_unix_nano;
            s.end_unix_nano = node.end_unix_nano;
            spans.push(s);
        }
    }
    node
}

/// The agent calls of a visit, from the workflow: the standard node's agent, or one per
/// parallel branch. Their times are the visit's (the log keeps no per-call times). A
/// dependency DAG's branch that did not run (skipped, a failed dependency, not started before
/// the node's timeout; docs/language.md, *Dependency DAGs*) called nobody: the visit's
/// `output` (branch id → output) tells which, as the live trace sees no call for it.
fn agent_calls(
    log: &RunLog<'_>,
    step: u64,
    node_id: &str,
    node: &SpanRecord,
    usage: Option<&hensu_runtime::Usage>,
    output: Option<&serde_json::Value>,
    spans: &mut Vec<SpanRecord>,
) {
    let run_id = log.run.run_id.as_str();
    let model = |agent: &str| {
        log.workflow
            .agents
            .get(agent)
            .map_or_else(|| "unknown".to_string(), |a| a.model.clone())
    };
    let mut calls: Vec<(Option<String>, String)> = Vec::new();
    match log.workflow.node(node_id) {
        Some(Node::Standard(n)) => calls.extend(n.agent_id.clone().map(|a| (None, a))),
        Some(Node::Parallel(p)) => calls.extend(
            p.branches
                .iter()
                .filter(|b| !p.is_dag() || dag_branch_ran(output, &b.id))
                .map(|b| (Some(b.id.clone()), b.agent_id.clone())),
        ),
        // A map's items by position (docs/language.md, *Map over a list*): one call per place
        // of the gathered list; an item left out (SKIP, or a failed node) has no place in it.
        Some(Node::Map(m)) => {
            let places = output.and_then(|o| o.as_array()).map_or(0, Vec::len);
            let agent = m.agent_id.clone().unwrap_or_default();
            calls.extend((0..places).map(|i| (Some(i.to_string()), agent.clone())));
        }
        _ => {}
    }
    let single = calls.len() == 1;
    for (branch, agent) in calls {
        let key = SpanKey::Agent {
            step,
            branch,
            attempt: 0,
        };
        let mut s = semconv::agent_span(run_id, key, &node.key, &agent, &model(&agent));
        s.start_unix_nano = node.start_unix_nano;
        s.end_unix_nano = node.end_unix_nano;
        s.status = node.status.clone();
        if single && let Some(u) = usage {
            semconv::usage(&mut s, u);
        }
        spans.push(s);
    }
}

/// The review waits of the visit at `step`: the pauses at its node not yet given to a visit.
fn review_spans(
    run_id: &str,
    step: u64,
    node_id: &str,
    pauses: &mut Vec<Pause>,
    spans: &mut Vec<SpanRecord>,
) {
    let mut round = 0u32;
    let mut first: Option<u64> = None;
    pauses.retain(|p| {
        if p.node != node_id {
            return true;
        }
        first = Some(first.map_or(p.at, |f| f.min(p.at)));
        let mut s = semconv::review_span(run_id, step, round, node_id);
        s.times_ms(p.at, p.resumed_at.unwrap_or(p.at));
        s.attr("hensu.review.pending", p.resumed_at.is_none());
        spans.push(s);
        round += 1;
        false
    });
    // The visit's agent calls ended before its first review wait began.
    if let Some(at) = first.map(|ms| ms.saturating_mul(1_000_000)) {
        for s in spans.iter_mut() {
            if matches!(&s.key, SpanKey::Agent { step: st, .. } if *st == step) {
                s.end_unix_nano = s.end_unix_nano.min(at).max(s.start_unix_nano);
            }
        }
    }
}

fn compensation(
    log: &RunLog<'_>,
    c: &CompensationRecord,
    start_ms: u64,
    end_ms: u64,
    spans: &mut Vec<SpanRecord>,
) {
    let run_id = log.run.run_id.as_str();
    let mut s = semconv::compensation_span(run_id, c.visit_step, &c.compensation_id, &c.node_id);
    s.times_ms(start_ms, end_ms);
    semconv::node_status(&mut s, c.status, c.error.as_deref());
    match log
        .workflow
        .saga
        .compensations
        .get(&c.compensation_id)
        .map(|c| &c.body)
    {
        Some(CompensationBody::Agent { agent_id, .. }) => {
            let model = log
                .workflow
                .agents
                .get(agent_id)
                .map_or("unknown", |a| a.model.as_str());
            let key = semconv::compensation_agent_key(c.visit_step, &c.compensation_id);
            let mut a = semconv::agent_span(run_id, key, &s.key, agent_id, model);
            a.start_unix_nano = s.start_unix_nano;
            a.end_unix_nano = s.end_unix_nano;
            spans.push(a);
        }
        Some(CompensationBody::Actions(actions)) => {
            for (i, action) in actions.iter().enumerate() {
                let label = semconv::action_label(action);
                let index = u32::try_from(i).unwrap_or(u32::MAX);
                let mut a = semconv::action_span(
                    run_id,
                    c.visit_step,
                    index,
                    Scope::Compensation,
                    &s.key,
                    &label,
                );
                a.start_unix_nano = s.start_unix_nano;
                a.end_unix_nano = s.end_unix_nano;
                spans.push(a);
            }
        }
        None => {}
    }
    spans.push(s);
}

fn run_status(record: &RunRecord) -> Status {
    match record.status {
        RunStatus::Completed => match record.exit_status.as_deref() {
            Some("SUCCESS") | None => Status::Ok,
            Some(other) => Status::Error(format!("ended at a {other} end node")),
        },
        RunStatus::Failed | RunStatus::Rejected | RunStatus::Cancelled => {
            Status::Error(record.status.as_str().to_string())
        }
        _ => Status::Unset,
    }
}

fn claim_event(entry: &LogEntry) -> SpanEvent {
    let mut attributes = Attrs::new();
    let note: Option<ClaimNote> = entry
        .output
        .clone()
        .and_then(|o| serde_json::from_value(o).ok());
    if let Some(n) = note {
        attributes.insert("hensu.worker".into(), n.worker.into());
        if let Some(f) = n.taken_over_from {
            attributes.insert("hensu.taken_over_from".into(), f.into());
        }
        if let Some(r) = n.rerun_node {
            attributes.insert("hensu.rerun_node".into(), r.into());
        }
    }
    SpanEvent {
        name: "hensu.claimed".into(),
        time_unix_nano: entry.meta.at.saturating_mul(1_000_000),
        attributes,
    }
}

/// A backtrack as an event of the visit it left (`at_ms`: unix milliseconds).
pub fn backtrack_event(b: &Backtrack, at_ms: u64) -> SpanEvent {
    let mut attributes = Attrs::new();
    attributes.insert("hensu.backtrack.from".into(), b.from.as_str().into());
    attributes.insert("hensu.backtrack.to".into(), b.to.as_str().into());
    attributes.insert(
        "hensu.backtrack.kind".into(),
        format!("{:?}", b.kind).to_lowercase().into(),
    );
    SpanEvent {
        name: "hensu.backtrack".into(),
        time_unix_nano: at_ms.saturating_mul(1_000_000),
        attributes,
    }
}

/// Whether a DAG branch called its agent, by the node's output: present, and neither
/// `SKIPPED` nor the failure of a dependency. Without an output (a pending visit) it counts.
fn dag_branch_ran(output: Option<&serde_json::Value>, branch: &str) -> bool {
    let Some(map) = output.and_then(serde_json::Value::as_object) else {
        return true;
    };
    match map.get(branch).and_then(serde_json::Value::as_str) {
        None => false,
        Some(text) => text != "SKIPPED" && !text.starts_with("FailureMarker[message=Dependency '"),
    }
}
