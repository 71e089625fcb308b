//! The trace of a run: rebuilt from a log, built live from events, and the two agreeing.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::sync::Arc;

use hensu_ir::*;
use hensu_providers::Redactor;
use hensu_runtime::{Event, ExecutionListener, FinishKind, HistoryStep, NodeStatus, Usage};
use hensu_store::{CheckpointMeta, LogEntry, LogKind, RunRecord, RunStatus, StateDelta};
use hensu_telemetry::{
    Attr, CollectingSink, RunInfo, RunLog, SpanRecord, TraceListener, ids, rebuild,
};
use indexmap::IndexMap;
use serde_json::json;

const RUN: &str = "3f2b8c1e-9a47-4d0e-b6c5-2e81f0a9d7c4";

fn workflow() -> Workflow {
    let mut nodes = IndexMap::new();
    nodes.insert(
        "write".to_string(),
        Node::Standard(StandardNode {
            id: "write".into(),
            agent_id: Some("writer".into()),
            prompt: Some("Write".into()),
            transition_rules: vec![TransitionRule::Success {
                target_node: "done".into(),
                with_feedback: false,
            }],
            ..StandardNode::default()
        }),
    );
    nodes.insert(
        "done".into(),
        Node::End(EndNode {
            id: "done".into(),
            status: ExitStatus::Success,
        }),
    );
    let mut agents = IndexMap::new();
    agents.insert(
        "writer".to_string(),
        AgentConfig::new("writer", "Writer", "claude-sonnet-4-5"),
    );
    Workflow {
        id: "pipeline".into(),
        version: "1.0.0".into(),
        metadata: Metadata::default(),
        agents,
        nodes,
        start_node: "write".into(),
        config: None,
        saga: Default::default(),
        state_schema: None,
        timing: Default::default(),
    }
}

fn meta(step: u64, kind: LogKind, status: RunStatus, at: u64) -> CheckpointMeta {
    CheckpointMeta {
        step,
        node: Some("write".into()),
        status,
        at,
        snapshot_bytes: None,
        kind,
        executed_node: None,
        node_status: None,
        duration_ms: Some(3),
    }
}

fn history() -> HistoryStep {
    HistoryStep {
        step: 1,
        node_id: "write".into(),
        status: NodeStatus::Success,
        output: None,
        error: None,
        at_ms: 5,
        rubric: None,
        usage: Some(Usage {
            input_tokens: 12,
            output_tokens: 34,
        }),
        compensates: None,
    }
}

fn record() -> RunRecord {
    let mut r = RunRecord::new(RUN, "pipeline", "1.0.0", Some("done".into()));
    r.started_at = 1_000;
    r.updated_at = 1_010;
    r.status = RunStatus::Completed;
    r.exit_status = Some("SUCCESS".into());
    r
}

fn run_info() -> RunInfo {
    RunInfo {
        run_id: RUN.into(),
        workflow_id: "pipeline".into(),
        workflow_version: "1.0.0".into(),
        tenant: Some("acme".into()),
        parent: None,
    }
}

fn log_entries() -> Vec<LogEntry> {
    let step = StateDelta::new().push(&["history"], serde_json::to_value(history()).unwrap());
    vec![
        LogEntry {
            meta: meta(1, LogKind::Step, RunStatus::Running, 1_002),
            output: None,
            delta: Some(StateDelta::new()),
            started_at: None,
        },
        LogEntry {
            meta: meta(2, LogKind::Step, RunStatus::Completed, 1_008),
            output: None,
            delta: Some(step),
            started_at: None,
        },
    ]
}

fn edges(spans: &[SpanRecord]) -> Vec<(String, Option<String>, String)> {
    let mut e: Vec<_> = spans
        .iter()
        .map(|s| {
            (
                ids::hex(&s.span_id),
                s.parent_span_id.map(|p| ids::hex(&p)),
                s.name.clone(),
            )
        })
        .collect();
    e.sort();
    e
}

#[test]
fn a_log_rebuilds_into_a_span_tree_with_genai_attributes() {
    let (wf, rec, entries) = (workflow(), record(), log_entries());
    let log = RunLog {
        run: run_info(),
        record: &rec,
        workflow: &wf,
        entries: &entries,
        state: None,
    };
    let trace = rebuild(&log);
    let names: Vec<&str> = trace.spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "invoke_workflow pipeline",
            "invoke_agent writer",
            "chat claude-sonnet-4-5"
        ]
    );
    let root = &trace.spans[0];
    assert_eq!(root.parent_span_id, None);
    assert_eq!(root.attributes["hensu.tenant.id"], Attr::Str("acme".into()));
    let visit = &trace.spans[1];
    assert_eq!(visit.parent_span_id, Some(root.span_id));
    assert_eq!(visit.start_unix_nano, 1_002_000_000);
    assert_eq!(visit.end_unix_nano, 1_008_000_000);
    let chat = &trace.spans[2];
    assert_eq!(
        chat.attributes["gen_ai.operation.name"],
        Attr::Str("chat".into())
    );
    assert_eq!(
        chat.attributes["gen_ai.provider.name"],
        Attr::Str("anthropic".into())
    );
    assert_eq!(chat.attributes["gen_ai.usage.input_tokens"], Attr::Int(12));
    assert_eq!(chat.attributes["gen_ai.usage.output_tokens"], Attr::Int(34));
    // Deterministic: the same log gives the same JSON.
    assert_eq!(trace.to_json(), rebuild(&log).to_json());
    assert_eq!(trace.to_json()["trace_id"], ids::hex(&ids::trace_id(RUN)));
}

#[test]
fn garbage_in_the_log_is_skipped_not_a_panic() {
    // A workflow without the logged node, and rows that are not what they claim.
    let mut wf = workflow();
    wf.nodes.clear();
    let rec = record();
    let junk = StateDelta::new()
        .push(&["history"], json!({"step": "not a number"}))
        .push(&["compensations"], json!(42))
        .push(&["backtracks"], json!(null));
    let entries = vec![LogEntry {
        meta: meta(1, LogKind::Step, RunStatus::Paused, 0),
        output: Some(json!("not a claim note")),
        delta: Some(junk),
        started_at: None,
    }];
    let log = RunLog {
        run: run_info(),
        record: &rec,
        workflow: &wf,
        entries: &entries,
        state: None,
    };
    let trace = rebuild(&log);
    assert_eq!(trace.spans.len(), 1, "only the root: {:?}", trace.spans);
}

fn listener(sink: Arc<CollectingSink>, capture: bool) -> TraceListener {
    TraceListener::new(
        Arc::new(workflow()),
        Some("acme".into()),
        sink,
        Arc::new(Redactor::new([(
            "ANTHROPIC_API_KEY",
            "sk-secret-value-123",
        )])),
        capture,
    )
}

fn drive(l: &TraceListener, prompt: &str) {
    l.on_event(&Event::RunStarted {
        format_version: 1,
        execution_id: RUN,
        workflow_id: "pipeline",
        start_node: "write",
    });
    l.on_event(&Event::NodeStarted {
        node_id: "write",
        kind: NodeKind::Standard,
        step: 1,
    });
    l.on_event(&Event::AgentCall {
        node_id: "write",
        agent_id: "writer",
        branch_id: None,
        model: "claude-sonnet-4-5",
        prompt,
        response: Some("an answer"),
        error: None,
        prompt_bytes: prompt.len(),
        response_bytes: 9,
        duration_us: 100,
        usage: Some(Usage {
            input_tokens: 12,
            output_tokens: 34,
        }),
    });
    l.on_event(&Event::NodeCompleted {
        node_id: "write",
        status: NodeStatus::Success,
        output: None,
        error: None,
        duration_us: 200,
    });
    l.on_event(&Event::RunFinished {
        finish: FinishKind::Completed {
            exit_status: ExitStatus::Success,
        },
        end_node: Some("done"),
        steps: 1,
        duration_us: 300,
    });
}

#[test]
fn live_spans_have_the_ids_of_the_rebuilt_ones() {
    let sink = Arc::new(CollectingSink::default());
    drive(
        &listener(sink.clone(), false),
        "Write about sk-secret-value-123",
    );
    let live = sink.spans();
    let (wf, rec, entries) = (workflow(), record(), log_entries());
    let rebuilt = rebuild(&RunLog {
        run: run_info(),
        record: &rec,
        workflow: &wf,
        entries: &entries,
        state: None,
    });
    assert_eq!(edges(&live), edges(&rebuilt.spans));
    // Off by default: no content attribute at all.
    assert!(
        live.iter()
            .all(|s| !s.attributes.contains_key("gen_ai.input.messages"))
    );
    let visit = live
        .iter()
        .find(|s| s.name == "invoke_agent writer")
        .unwrap();
    assert_eq!(visit.attributes["gen_ai.usage.input_tokens"], Attr::Int(12));
}

#[test]
fn captured_content_is_redacted() {
    let sink = Arc::new(CollectingSink::default());
    drive(
        &listener(sink.clone(), true),
        "Write about sk-secret-value-123",
    );
    let chat = sink
        .spans()
        .into_iter()
        .find(|s| s.name == "chat claude-sonnet-4-5")
        .unwrap();
    let Attr::Str(input) = &chat.attributes["gen_ai.input.messages"] else {
        panic!("not a string")
    };
    assert!(!input.contains("sk-secret-value-123"), "{input}");
    assert!(input.contains("<redacted:ANTHROPIC_API_KEY>"), "{input}");
    assert!(chat.attributes.contains_key("gen_ai.output.messages"));
}

#[test]
fn a_provider_retry_is_an_event_of_its_visit() {
    let sink = Arc::new(CollectingSink::default());
    let l = listener(sink.clone(), false);
    l.on_event(&Event::RunStarted {
        format_version: 1,
        execution_id: RUN,
        workflow_id: "pipeline",
        start_node: "write",
    });
    l.on_event(&Event::NodeStarted {
        node_id: "write",
        kind: NodeKind::Standard,
        step: 1,
    });
    l.on_event(&Event::ProviderRetry {
        provider: "anthropic",
        model: "claude-sonnet-4-5",
        attempt: 1,
        delay_ms: 250,
        error_kind: "rate_limited",
        status: Some(429),
        message: "slow down",
    });
    l.on_event(&Event::NodeCompleted {
        node_id: "write",
        status: NodeStatus::Success,
        output: None,
        error: None,
        duration_us: 200,
    });
    let spans = sink.spans();
    let visit = spans
        .iter()
        .find(|s| s.name == "invoke_agent writer")
        .unwrap();
    assert_eq!(visit.events.len(), 1);
    assert_eq!(visit.events[0].name, "hensu.provider_retry");
    assert_eq!(
        visit.events[0].attributes["http.response.status_code"],
        Attr::Int(429)
    );
}

/// A dependency DAG (docs/language.md, *Dependency DAGs*): the rebuilt visit has a chat span for
/// each branch that called its agent, none for a skipped one or one whose dependency failed
/// (the live trace sees no call for them either).
#[test]
fn a_dag_visit_rebuilds_only_the_branches_that_ran() {
    let mut wf = workflow();
    let mut branch = |id: &str, after: &[&str]| {
        wf.agents
            .insert(id.to_string(), AgentConfig::new(id, "Worker", "gpt-4o"));
        let mut b = Branch::new(id, id);
        b.after = after.iter().map(|s| s.to_string()).collect();
        b
    };
    let branches = vec![
        branch("web", &[]),
        branch("papers", &[]),
        branch("merge", &["web", "papers"]),
        branch("translate", &["merge"]),
    ];
    wf.nodes.insert(
        "write".into(),
        Node::Parallel(ParallelNode {
            id: "write".into(),
            branches,
            consensus_config: None,
            transition_rules: vec![TransitionRule::Success {
                target_node: "done".into(),
                with_feedback: false,
            }],
        }),
    );
    let mut visit = history();
    visit.usage = None;
    visit.status = NodeStatus::Failure;
    visit.output = Some(json!({
        "web": "W",
        "papers": "FailureMarker[message=Branch execution failed: boom]",
        "merge": "FailureMarker[message=Dependency 'papers' failed]",
        "translate": "FailureMarker[message=Dependency 'merge' failed]",
    }));
    let step = StateDelta::new().push(&["history"], serde_json::to_value(visit).unwrap());
    let entries = vec![
        LogEntry {
            meta: meta(1, LogKind::Step, RunStatus::Running, 1_002),
            output: None,
            delta: Some(StateDelta::new()),
            started_at: None,
        },
        LogEntry {
            meta: meta(2, LogKind::Step, RunStatus::Completed, 1_008),
            output: None,
            delta: Some(step),
            started_at: None,
        },
    ];
    let rec = record();
    let log = RunLog {
        run: run_info(),
        record: &rec,
        workflow: &wf,
        entries: &entries,
        state: None,
    };
    let names: Vec<String> = rebuild(&log)
        .spans
        .iter()
        .map(|s| s.name.clone())
        .filter(|n| n.starts_with("chat") || n.starts_with("invoke_agent"))
        .collect();
    assert_eq!(
        names,
        ["chat gpt-4o", "chat gpt-4o"],
        "web and papers called their agents; merge and translate did not"
    );
}

/// A tool call of the tool loop: the live span (from the run's call observer) and the span
/// rebuilt from its journal row have the same id and parent (the visit), and a call replayed
/// from the journal after a resume adds no second span.
#[test]
fn tool_loop_calls_are_execute_tool_spans_live_and_rebuilt() {
    use hensu_runtime::journal::{CallEvent, CallKind, CallOutcome, CallPhase, JournalEntry};
    let sink = Arc::new(CollectingSink::default());
    let l = listener(sink.clone(), false);
    let observer = l.call_observer().expect("a call observer");
    let call = |finished: Option<CallOutcome>| CallEvent {
        run_id: RUN,
        node_id: "write",
        visit: "1",
        index: 1,
        kind: CallKind::Tool,
        name: "lookup",
        finished,
    };
    l.on_event(&Event::RunStarted {
        format_version: 1,
        execution_id: RUN,
        workflow_id: "pipeline",
        start_node: "write",
    });
    l.on_event(&Event::NodeStarted {
        node_id: "write",
        kind: NodeKind::Standard,
        step: 1,
    });
    observer.on_call(&call(None));
    let done = CallOutcome {
        ok: true,
        replayed: false,
        duration_ms: 4,
    };
    observer.on_call(&call(Some(done)));
    observer.on_call(&call(Some(CallOutcome {
        replayed: true,
        ..done
    })));
    let live: Vec<SpanRecord> = sink
        .spans()
        .into_iter()
        .filter(|s| s.name == "execute_tool lookup")
        .collect();
    assert_eq!(live.len(), 1, "{live:?}");
    let entry = JournalEntry {
        visit: "1".into(),
        index: 1,
        kind: CallKind::Tool,
        name: "lookup".into(),
        phase: CallPhase::Finished,
        node: Some("write".into()),
        result: Some(json!({"ok": true, "content": "x"})),
        ok: Some(true),
        duration_ms: Some(4),
    };
    let mut entries = log_entries();
    entries.insert(
        1,
        LogEntry {
            meta: meta(2, LogKind::Journal, RunStatus::Running, 1_006),
            output: Some(serde_json::to_value(&entry).unwrap()),
            delta: Some(StateDelta::new()),
            started_at: None,
        },
    );
    let (wf, rec) = (workflow(), record());
    let rebuilt = rebuild(&RunLog {
        run: run_info(),
        record: &rec,
        workflow: &wf,
        entries: &entries,
        state: None,
    });
    let tool = rebuilt
        .spans
        .iter()
        .find(|s| s.name == "execute_tool lookup")
        .expect("the rebuilt tool span");
    assert_eq!(tool.span_id, live[0].span_id);
    assert_eq!(tool.parent_span_id, live[0].parent_span_id);
    let visit = rebuilt
        .spans
        .iter()
        .find(|s| s.name == "invoke_agent writer")
        .unwrap();
    assert_eq!(tool.parent_span_id, Some(visit.span_id));
    assert_eq!(tool.start_unix_nano, 1_002_000_000);
    assert_eq!(tool.end_unix_nano, 1_006_000_000);
    assert_eq!(
        tool.attributes["gen_ai.operation.name"],
        Attr::Str("execute_tool".into())
    );
    assert_eq!(tool.attributes["hensu.tool.call_index"], Attr::Int(1));
}

/// A map over a list (docs/language.md, *Map over a list*): the rebuilt visit has a chat span
/// for each place of the gathered list (the item's position as its branch), with the map's
/// agent; the visit's span names the map kind.
#[test]
fn a_map_visit_rebuilds_one_agent_call_per_gathered_item() {
    let mut wf = workflow();
    wf.agents.insert(
        "summarizer".into(),
        AgentConfig::new("summarizer", "Worker", "gpt-4o"),
    );
    wf.nodes.insert(
        "write".into(),
        Node::Map(MapNode {
            id: "write".into(),
            over: "papers".into(),
            agent_id: Some("summarizer".into()),
            prompt: Some("Summarize {item}".into()),
            target: None,
            result: None,
            max_parallel: 2,
            max_items: Some(5),
            on_item_failure: ItemFailure::Collect,
            writes: vec!["summaries".into()],
            transition_rules: vec![TransitionRule::Success {
                target_node: "done".into(),
                with_feedback: false,
            }],
        }),
    );
    let mut visit = history();
    visit.usage = None;
    visit.output = Some(json!(["S0", null, "S2"]));
    let step = StateDelta::new().push(&["history"], serde_json::to_value(visit).unwrap());
    let entries = vec![
        LogEntry {
            meta: meta(1, LogKind::Step, RunStatus::Running, 1_002),
            output: None,
            delta: Some(StateDelta::new()),
            started_at: None,
        },
        LogEntry {
            meta: meta(2, LogKind::Step, RunStatus::Completed, 1_008),
            output: None,
            delta: Some(step),
            started_at: None,
        },
    ];
    let rec = record();
    let log = RunLog {
        run: run_info(),
        record: &rec,
        workflow: &wf,
        entries: &entries,
        state: None,
    };
    let trace = rebuild(&log);
    let chats = trace
        .spans
        .iter()
        .filter(|s| s.name.starts_with("chat"))
        .count();
    assert_eq!(chats, 3, "one call per place of the gathered list");
    assert!(
        trace.spans.iter().any(|s| s.name == "map write"),
        "{:?}",
        trace.spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
}
