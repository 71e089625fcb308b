//! hensu-runtime tests: rules, engine variables, stubs, extraction, guards, handlers, actions,
//! parallel consensus, bad input, shell quoting and golden traces of the examples.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use hensu_ir::*;
use hensu_runtime::events::TransitionCause;
use hensu_runtime::stub::{DEFAULT_JSON_STUB, generate_fallback, substitute_double_braces};
use hensu_runtime::template::{resolve, resolve_shell, shell_quote};
use hensu_runtime::validate::{OutputViolation, validate_output};
use hensu_runtime::*;
use indexmap::IndexMap;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------------
// Workflow builders

fn agent(id: &str) -> AgentConfig {
    AgentConfig::new(id, format!("Role of {id}"), "test-model")
}

fn workflow(start: &str, nodes: Vec<Node>) -> Workflow {
    let mut agents = IndexMap::new();
    for n in &nodes {
        if let Some(a) = n.agent_id() {
            agents.insert(a.to_string(), agent(a));
        }
        if let Node::Parallel(p) = n {
            for b in &p.branches {
                agents.insert(b.agent_id.clone(), agent(&b.agent_id));
            }
            if let Some(j) = p
                .consensus_config
                .as_ref()
                .and_then(|c| c.judge_agent_id.clone())
            {
                agents.insert(j.clone(), agent(&j));
            }
        }
    }
    Workflow {
        id: "test".into(),
        version: "1.0.0".into(),
        metadata: Metadata {
            name: "test".into(),
            ..Metadata::default()
        },
        agents,
        nodes: nodes.into_iter().map(|n| (n.id().to_string(), n)).collect(),
        start_node: start.into(),
        config: None,
        state_schema: None,
    }
}

fn node(id: &str, prompt: &str, writes: &[&str], rules: Vec<TransitionRule>) -> Node {
    Node::Standard(StandardNode {
        id: id.into(),
        agent_id: Some(format!("{id}-agent")),
        prompt: Some(prompt.into()),
        writes: writes.iter().map(|s| s.to_string()).collect(),
        transition_rules: rules,
        ..StandardNode::default()
    })
}

fn end(id: &str, status: ExitStatus) -> Node {
    Node::End(EndNode {
        id: id.into(),
        status,
    })
}

fn success(t: &str) -> TransitionRule {
    TransitionRule::Success {
        target_node: t.into(),
        with_feedback: false,
    }
}

fn failure(t: Option<&str>) -> TransitionRule {
    TransitionRule::Failure {
        target_node: t.map(String::from),
    }
}

fn approval(expected: bool, t: &str) -> TransitionRule {
    TransitionRule::Approval {
        expected,
        target_node: t.into(),
        with_feedback: false,
    }
}

fn always(t: &str, with_feedback: bool) -> TransitionRule {
    TransitionRule::Always {
        target_node: t.into(),
        with_feedback,
    }
}

fn score_rule(conds: Vec<(ComparisonOperator, f64, &str)>, with_feedback: bool) -> TransitionRule {
    TransitionRule::Score {
        conditions: conds
            .into_iter()
            .map(|(op, v, t)| ScoreCondition {
                operator: op,
                value: Some(v),
                range: None,
                target_node: t.into(),
            })
            .collect(),
        with_feedback,
    }
}

fn condition(var: &str, p: ConditionPredicate, t: &str) -> TransitionRule {
    TransitionRule::Condition {
        variable: var.into(),
        predicate: p,
        target_node: t.into(),
        with_feedback: false,
    }
}

fn bounded(
    ns: Namespace,
    budget: i64,
    otherwise: &str,
    ewf: bool,
    inner: TransitionRule,
) -> TransitionRule {
    TransitionRule::Bounded {
        namespace: ns,
        budget,
        otherwise: otherwise.into(),
        escalation_with_feedback: ewf,
        inner: Box::new(inner),
    }
}

fn map(v: Value) -> IndexMap<String, Value> {
    match v {
        Value::Object(m) => m.into_iter().collect(),
        _ => IndexMap::new(),
    }
}

fn ctx(v: Value) -> Context {
    match v {
        Value::Object(m) => m.into_iter().collect(),
        _ => Context::default(),
    }
}

// ---------------------------------------------------------------------------------------------
// A scripted agent: responses per node id, consumed in order (the last one repeats).

type Responder = Arc<dyn Fn(&AgentRequest<'_>) -> Result<AgentResponse, AgentError> + Send + Sync>;

/// Scripted answers per node (or agent) id.
type Queues = HashMap<String, VecDeque<Result<String, String>>>;

#[derive(Clone, Default)]
struct Script {
    queues: Arc<Mutex<Queues>>,
    prompts: Arc<Mutex<Vec<(String, String)>>>,
    custom: Option<Responder>,
    delay: Option<Duration>,
}

impl Script {
    fn new() -> Self {
        Self::default()
    }
    fn on(self, node: &str, responses: &[&str]) -> Self {
        self.queues.lock().unwrap().insert(
            node.into(),
            responses.iter().map(|s| Ok(s.to_string())).collect(),
        );
        self
    }
    fn fail(self, node: &str, message: &str) -> Self {
        self.queues
            .lock()
            .unwrap()
            .insert(node.into(), VecDeque::from(vec![Err(message.to_string())]));
        self
    }
    fn prompts(&self) -> Vec<(String, String)> {
        self.prompts.lock().unwrap().clone()
    }
    fn prompts_of(&self, node: &str) -> Vec<String> {
        self.prompts()
            .into_iter()
            .filter(|(n, _)| n == node)
            .map(|(_, p)| p)
            .collect()
    }
}

struct ScriptAgent {
    config: AgentConfig,
    script: Script,
}

#[async_trait]
impl Agent for ScriptAgent {
    fn id(&self) -> &str {
        &self.config.id
    }
    fn config(&self) -> &AgentConfig {
        &self.config
    }
    async fn execute(&self, req: AgentRequest<'_>) -> Result<AgentResponse, AgentError> {
        self.script
            .prompts
            .lock()
            .unwrap()
            .push((req.node_id.to_string(), req.prompt.to_string()));
        if let Some(d) = self.script.delay {
            tokio::time::sleep(d).await;
        }
        if let Some(f) = &self.script.custom {
            return f(&req);
        }
        let key = self
            .config
            .id
            .strip_suffix("-agent")
            .unwrap_or(&self.config.id)
            .to_string();
        let mut queues = self.script.queues.lock().unwrap();
        let name = if queues.get(req.node_id).is_some_and(|q| !q.is_empty()) {
            req.node_id.to_string()
        } else {
            key
        };
        let Some(q) = queues.get_mut(&name).filter(|q| !q.is_empty()) else {
            return Ok(AgentResponse::text("ok"));
        };
        let r = if q.len() > 1 {
            q.pop_front().unwrap()
        } else {
            q.front().cloned().unwrap()
        };
        r.map(AgentResponse::text)
            .map_err(|m| AgentError::new("scripted", m))
    }
}

struct ScriptProvider(Script);

impl AgentProvider for ScriptProvider {
    fn name(&self) -> &str {
        "script"
    }
    fn supports_model(&self, _m: &str) -> bool {
        true
    }
    fn priority(&self) -> i32 {
        2000
    }
    fn create_agent(
        &self,
        config: &AgentConfig,
        _c: &HashMap<String, String>,
    ) -> Result<Arc<dyn Agent>, AgentError> {
        Ok(Arc::new(ScriptAgent {
            config: config.clone(),
            script: self.0.clone(),
        }))
    }
}

struct Harness {
    engine: Engine,
    events: Arc<CollectingListener>,
}

fn harness(script: &Script) -> Harness {
    harness_with(script, |b| b)
}

fn harness_with(script: &Script, f: impl FnOnce(EngineBuilder) -> EngineBuilder) -> Harness {
    let events = Arc::new(CollectingListener::new());
    let b = Engine::builder()
        .provider(Arc::new(ScriptProvider(script.clone())))
        .listener(events.clone());
    Harness {
        engine: f(b).build(),
        events,
    }
}

impl Harness {
    async fn run(&self, wf: &Workflow, input: Value) -> RunResult {
        self.engine.run(wf, ctx(input), &CancelToken::new()).await
    }
    fn events_of(&self, kind: &str) -> Vec<Value> {
        self.events
            .events()
            .into_iter()
            .filter(|e| e["event"] == kind)
            .collect()
    }
}

fn path(r: &RunResult) -> Vec<String> {
    let mut p: Vec<String> = r.state.path().into_iter().map(String::from).collect();
    if let RunOutcome::Completed { end_node, .. } = &r.outcome {
        p.push(end_node.clone());
    }
    p
}

fn completed(r: &RunResult) -> (ExitStatus, String) {
    match &r.outcome {
        RunOutcome::Completed {
            exit_status,
            end_node,
        } => (*exit_status, end_node.clone()),
        other => panic!("expected completion, got {other:?}"),
    }
}

fn failed(r: &RunResult) -> RuntimeError {
    match &r.outcome {
        RunOutcome::Failed(e) => e.clone(),
        other => panic!("expected failure, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Rules

#[tokio::test]
async fn success_and_failure_rules_route_by_status() {
    let wf = workflow(
        "a",
        vec![
            node("a", "go", &[], vec![success("ok"), failure(Some("bad"))]),
            end("ok", ExitStatus::Success),
            end("bad", ExitStatus::Failure),
        ],
    );
    let s = Script::new().on("a", &["fine"]);
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(completed(&r), (ExitStatus::Success, "ok".into()));
    assert_eq!(
        r.state.context["a"],
        json!("fine"),
        "legacy output under the node id"
    );

    let s = Script::new().fail("a", "model exploded");
    let h = harness(&s);
    let r = h.run(&wf, json!({})).await;
    assert_eq!(completed(&r), (ExitStatus::Failure, "bad".into()));
    assert_eq!(r.state.history[0].error.as_deref(), Some("model exploded"));
    assert!(!r.state.context.contains_key("a"));
}

#[tokio::test]
async fn failure_retry_runs_budget_plus_one_times_then_escalates() {
    let wf = workflow(
        "a",
        vec![
            node(
                "a",
                "go",
                &[],
                vec![
                    success("ok"),
                    bounded(Namespace::Failure, 2, "gave-up", false, failure(None)),
                ],
            ),
            end("ok", ExitStatus::Success),
            end("gave-up", ExitStatus::Failure),
        ],
    );
    let s = Script::new().fail("a", "boom");
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(path(&r), ["a", "a", "a", "gave-up"]);
    assert!(
        r.state.retry_counters.is_empty(),
        "escalation is a forward move: counters reset"
    );

    // Recovers on the second try: the counter is reset by the forward move.
    let s = Script::new().on("a", &[]);
    s.queues.lock().unwrap().insert(
        "a".into(),
        VecDeque::from(vec![Err("boom".to_string()), Ok("fine".to_string())]),
    );
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(path(&r), ["a", "a", "ok"]);
    assert!(r.state.retry_counters.is_empty());
}

#[tokio::test]
async fn approval_reads_the_approved_variable_and_falls_through_when_absent() {
    let wf = workflow(
        "r",
        vec![
            node(
                "r",
                "review",
                &[],
                vec![
                    approval(true, "yes"),
                    approval(false, "no"),
                    always("neither", false),
                ],
            ),
            end("yes", ExitStatus::Success),
            end("no", ExitStatus::Failure),
            end("neither", ExitStatus::Cancel),
        ],
    );
    for (answer, expected) in [
        (r#"{"approved": true}"#, "yes"),
        (r#"{"approved": "FALSE", "recommendation": "x"}"#, "no"),
        (r#"{"approved": "maybe"}"#, "neither"),
        ("no json here", "neither"),
    ] {
        let s = Script::new().on("r", &[answer]);
        let r = harness(&s).run(&wf, json!({})).await;
        assert_eq!(completed(&r).1, expected, "answer {answer}");
        assert!(
            !r.state.context.contains_key("approved"),
            "routing var removed on transition"
        );
    }
}

#[tokio::test]
async fn approval_and_score_ignore_the_node_status() {
    // A failed node with an auto-approved REQUIRED review still routes onApproval.
    let mut n = node(
        "r",
        "review",
        &[],
        vec![approval(true, "yes"), failure(Some("failed"))],
    );
    if let Node::Standard(s) = &mut n {
        s.review_config = Some(ReviewConfig {
            mode: ReviewMode::Required,
            ..ReviewConfig::default()
        });
    }
    let wf = workflow(
        "r",
        vec![
            n,
            end("yes", ExitStatus::Success),
            end("failed", ExitStatus::Failure),
        ],
    );
    let s = Script::new().fail("r", "broken");
    let h = harness(&s);
    let r = h.run(&wf, json!({})).await;
    assert_eq!(completed(&r).1, "yes");
    let t = &h.events_of("transition_taken")[0];
    assert_eq!(t["cause"]["rule"], "approval");
    assert_eq!(t["cause"]["from_review"], true);

    // A failed node routes on a score already in the context.
    let wf = workflow(
        "s",
        vec![
            node(
                "s",
                "x",
                &[],
                vec![
                    score_rule(vec![(ComparisonOperator::Gte, 80.0, "high")], false),
                    failure(Some("failed")),
                ],
            ),
            end("high", ExitStatus::Success),
            end("failed", ExitStatus::Failure),
        ],
    );
    let s = Script::new().fail("s", "broken");
    let r = harness(&s).run(&wf, json!({"score": "85"})).await;
    assert_eq!(completed(&r).1, "high");
    assert!(!r.state.context.contains_key("score"));
}

#[tokio::test]
async fn score_rule_first_matching_condition_wins() {
    let wf = workflow(
        "s",
        vec![
            node(
                "s",
                "x",
                &[],
                vec![score_rule(
                    vec![
                        (ComparisonOperator::Gt, 79.0, "publish"),
                        (ComparisonOperator::Gte, 50.0, "improve"),
                        (ComparisonOperator::Lt, 50.0, "abandon"),
                    ],
                    false,
                )],
            ),
            end("publish", ExitStatus::Success),
            end("improve", ExitStatus::Success),
            end("abandon", ExitStatus::Failure),
        ],
    );
    for (score, target) in [
        ("80", "publish"),
        ("79", "improve"),
        ("50.0", "improve"),
        ("12", "abandon"),
    ] {
        let s = Script::new().on("s", &[&format!("{{\"score\": {score}}}")]);
        let r = harness(&s).run(&wf, json!({})).await;
        assert_eq!(completed(&r).1, target, "score {score}");
    }
    // Scores 0..1 are not rescaled by the score rule (only the rubric does that).
    let s = Script::new().on("s", &["{\"score\": 0.9}"]);
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(completed(&r).1, "abandon");
}

#[tokio::test]
async fn condition_rules_compare_canonically_and_warn_on_type_mismatch() {
    let wf = workflow(
        "c",
        vec![
            node(
                "c",
                "x",
                &["status", "quality"],
                vec![
                    condition("quality", ConditionPredicate::Gt(6.0), "good"),
                    condition("status", ConditionPredicate::Eq("5".into()), "five"),
                    condition("status", ConditionPredicate::Neq("done".into()), "not-done"),
                    always("other", false),
                ],
            ),
            end("good", ExitStatus::Success),
            end("five", ExitStatus::Success),
            end("not-done", ExitStatus::Success),
            end("other", ExitStatus::Success),
        ],
    );
    let cases = [
        (r#"{"status": "done", "quality": "7"}"#, "good", 0),
        (r#"{"status": 5.0, "quality": 2}"#, "five", 0),
        (r#"{"status": "wip", "quality": "high"}"#, "not-done", 1),
        (r#"{"status": "done"}"#, "other", 1),
        (r#"{"status": {"a": 1}, "quality": [1]}"#, "other", 3),
    ];
    for (answer, target, warnings) in cases {
        let s = Script::new().on("c", &[answer]);
        let h = harness(&s);
        let r = h.run(&wf, json!({})).await;
        assert_eq!(completed(&r).1, target, "answer {answer}");
        assert_eq!(
            h.events_of("transition_warning").len(),
            warnings,
            "answer {answer}"
        );
        assert!(
            !r.state.context.contains_key("status"),
            "condition variables are removed on transition"
        );
        assert!(!r.state.context.contains_key("quality"));
    }
    let s = Script::new().on("c", &[r#"{"status": "done", "quality": "high"}"#]);
    let h = harness(&s);
    h.run(&wf, json!({})).await;
    assert_eq!(
        h.events_of("transition_warning")[0]["message"],
        "Condition on variable 'quality' (> 6) could not be evaluated: actual value is String 'high'"
    );
}

#[tokio::test]
async fn always_fires_only_on_success() {
    let wf = workflow(
        "a",
        vec![
            node("a", "x", &[], vec![always("next", false)]),
            end("next", ExitStatus::Success),
        ],
    );
    let s = Script::new().fail("a", "nope");
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(
        failed(&r),
        RuntimeError::NoValidTransition { node: "a".into() }
    );
    assert_eq!(failed(&r).to_string(), "No valid transition from a");
    assert_eq!(r.state.history.len(), 1, "state intact");
}

/// writer → reviewer; the reviewer's rejection revises the writer at most twice.
fn revise_workflow(with_feedback: bool, escalation_feedback: bool) -> Workflow {
    workflow(
        "write",
        vec![
            node(
                "write",
                "Write about {topic}",
                &["article"],
                vec![success("review")],
            ),
            node(
                "review",
                "Review {article}",
                &[],
                vec![
                    approval(true, "done"),
                    bounded(
                        Namespace::Approval,
                        2,
                        "needs-work",
                        escalation_feedback,
                        TransitionRule::Approval {
                            expected: false,
                            target_node: "write".into(),
                            with_feedback,
                        },
                    ),
                ],
            ),
            node(
                "needs-work",
                "Explain: {recommendation}",
                &[],
                vec![success("failed")],
            ),
            end("done", ExitStatus::Success),
            end("failed", ExitStatus::Failure),
        ],
    )
}

#[tokio::test]
async fn bounded_revise_counter_is_owned_by_the_rule_node_and_escalates() {
    let wf = revise_workflow(true, true);
    let s = Script::new().on("write", &["draft"]).on(
        "review",
        &[r#"{"approved": false, "recommendation": "more depth"}"#],
    );
    let counters = Arc::new(Mutex::new(Vec::new()));
    struct Spy(Arc<Mutex<Vec<IndexMap<String, i64>>>>);
    impl ExecutionListener for Spy {
        fn on_checkpoint(&self, state: &RunState) {
            self.0.lock().unwrap().push(state.retry_counters.clone());
        }
    }
    let h = harness_with(&s, |b| b.listener(Arc::new(Spy(counters.clone()))));
    let r = h.run(&wf, json!({"topic": "rust"})).await;
    assert_eq!(
        path(&r),
        [
            "write",
            "review",
            "write",
            "review",
            "write",
            "review",
            "needs-work",
            "failed"
        ]
    );
    // The writer's own forward moves never reset the reviewer's counter.
    let seen = counters.lock().unwrap().clone();
    let at_third_write: Vec<i64> = seen
        .iter()
        .map(|c| c.get("approval:review").copied().unwrap_or(0))
        .collect();
    assert_eq!(at_third_write, [0, 0, 1, 1, 2, 2, 0]);
    assert!(r.state.retry_counters.is_empty());
    // Revise keeps the recommendation for the writer; escalation withFeedback keeps it too.
    let writes = s.prompts_of("write");
    assert!(!writes[0].contains("Previous Feedback"));
    assert!(writes[1].ends_with("### Previous Feedback\nmore depth\n\nEngine output requirement: your JSON response MUST include:\n  \"article\""), "{}", writes[1]);
    assert!(s.prompts_of("needs-work")[0].starts_with("Explain: more depth"));
    assert_eq!(r.state.backtracks.len(), 2);
    assert!(
        r.state
            .backtracks
            .iter()
            .all(|b| b.kind == BacktrackKind::Revise)
    );
}

#[tokio::test]
async fn forward_move_resets_counters_and_drops_recommendation_without_feedback() {
    let wf = revise_workflow(true, false);
    let s = Script::new().on("write", &["draft"]).on(
        "review",
        &[
            r#"{"approved": false, "recommendation": "fix intro"}"#,
            r#"{"approved": true, "recommendation": "good now"}"#,
        ],
    );
    let r = harness(&s).run(&wf, json!({"topic": "rust"})).await;
    assert_eq!(path(&r), ["write", "review", "write", "review", "done"]);
    assert!(
        r.state.retry_counters.is_empty(),
        "forward move deletes the owner's counters"
    );
    assert!(
        !r.state.context.contains_key("recommendation"),
        "no withFeedback: removed"
    );
    assert!(!r.state.context.contains_key("approved"));
    assert_eq!(r.state.context["article"], json!("draft"));
}

#[tokio::test]
async fn with_feedback_keeps_recommendation_on_forward_moves() {
    let wf = workflow(
        "s",
        vec![
            node(
                "s",
                "x",
                &[],
                vec![
                    score_rule(vec![(ComparisonOperator::Lt, 80.0, "improve")], true),
                    success("done"),
                ],
            ),
            node("improve", "Improve", &[], vec![success("done")]),
            end("done", ExitStatus::Success),
        ],
    );
    let s = Script::new().on("s", &[r#"{"score": 60, "recommendation": "shorter"}"#]);
    let h = harness(&s);
    let r = h.run(&wf, json!({})).await;
    assert_eq!(path(&r), ["s", "improve", "done"]);
    assert!(s.prompts_of("improve")[0].ends_with("### Previous Feedback\nshorter"));
    assert_eq!(h.events_of("transition_taken")[0]["feedback"], true);
    assert!(
        !r.state.context.contains_key("recommendation"),
        "improve moved on without feedback"
    );
}

#[tokio::test]
async fn retry_feedback_failure_trigger_removes_recommendation() {
    let wf = workflow(
        "a",
        vec![
            node(
                "a",
                "x",
                &[],
                vec![
                    success("ok"),
                    bounded(Namespace::Failure, 1, "ko", false, failure(None)),
                ],
            ),
            end("ok", ExitStatus::Success),
            end("ko", ExitStatus::Failure),
        ],
    );
    let s = Script::new().fail("a", "nope");
    let r = harness(&s).run(&wf, json!({"recommendation": "old"})).await;
    assert_eq!(path(&r), ["a", "a", "ko"]);
    assert!(s.prompts_of("a")[0].contains("Previous Feedback\nold"));
    assert!(!s.prompts_of("a")[1].contains("Previous Feedback"));
}

#[tokio::test]
async fn rubric_auto_backtrack_retries_the_node_at_most_three_times() {
    let rubric = parse_rubric(
        "quality",
        "# Rubric: quality\n\n## Metadata\n- pass_threshold: 70\n\n## Criteria\n\n### Clarity (weight: 100)\n\n#### Clear\n- points: 10\n- evaluation: Is clear.\n",
    )
    .unwrap();
    let mut n = node("w", "Write", &["text"], vec![success("done")]);
    if let Node::Standard(s) = &mut n {
        s.rubric = Some(rubric);
    }
    let wf = workflow("w", vec![n, end("done", ExitStatus::Success)]);
    let s = Script::new().on("w", &[r#"{"text": "meh", "score": 65}"#]);
    let h = harness(&s);
    let r = h.run(&wf, json!({})).await;
    assert_eq!(path(&r), ["w", "w", "w", "w", "done"]);
    assert_eq!(h.events_of("backtrack").len(), 3);
    assert_eq!(r.state.backtracks[0].reason, "Rubric score: 65.0");
    assert_eq!(
        r.state.history[0].rubric.as_ref().map(|e| e.passed),
        Some(false)
    );
    // The rubric block and the rubric engine vars are in the prompt.
    let p = &s.prompts_of("w")[0];
    assert!(
        p.contains("\n\n---\n\nScore the content above using these criteria:\n\n- **"),
        "{p}"
    );
    assert!(
        !p.contains("\"score\" with a numeric"),
        "no score rule: no score instruction"
    );
}

// ---------------------------------------------------------------------------------------------
// Engine variables, enrichment, extraction

#[tokio::test]
async fn enrichment_appends_instructions_in_order_separated_by_blank_lines() {
    let mut wf = workflow(
        "r",
        vec![
            node(
                "r",
                "Review {topic}",
                &["notes"],
                vec![
                    score_rule(vec![(ComparisonOperator::Gte, 0.0, "done")], false),
                    approval(true, "done"),
                ],
            ),
            end("done", ExitStatus::Success),
        ],
    );
    wf.state_schema = Some(StateSchema {
        variables: vec![
            StateVariable {
                name: "topic".into(),
                var_type: VarType::String,
                is_input: true,
                description: None,
            },
            StateVariable {
                name: "notes".into(),
                var_type: VarType::String,
                is_input: false,
                description: Some("review notes".into()),
            },
        ],
    });
    let s = Script::new().on("r", &[r#"{"score": 90, "notes": "n"}"#]);
    harness(&s)
        .run(&wf, json!({"topic": "AI", "recommendation": "be brief"}))
        .await;
    insta::assert_snapshot!("enriched_prompt", s.prompts_of("r")[0]);
}

#[tokio::test]
async fn writes_extraction_single_multi_and_legacy() {
    // Single write, no engine vars: JSON key if present, else the whole raw text.
    let wf = workflow(
        "a",
        vec![
            node("a", "x", &["article"], vec![success("e")]),
            end("e", ExitStatus::Success),
        ],
    );
    for (answer, stored) in [
        (r#"Here: {"article": {"t": 1}} done"#, json!({"t": 1.0})),
        (r#"{"other": 1}"#, json!(r#"{"other": 1}"#)),
        ("plain text", json!("plain text")),
    ] {
        let s = Script::new().on("a", &[answer]);
        let r = harness(&s).run(&wf, json!({"article": "stale"})).await;
        assert_eq!(r.state.context["article"], stored, "{answer}");
        assert!(!r.state.context.contains_key("a"));
    }
    // Multiple writes: JSON mode; absent keys stay absent (stale values are removed).
    let wf = workflow(
        "a",
        vec![
            node("a", "x", &["x", "y"], vec![success("e")]),
            end("e", ExitStatus::Success),
        ],
    );
    let s = Script::new().on(
        "a",
        &[r#"prose {"x": "a \"}\" b", "y": null, "z": 3} more {"y": 2}"#],
    );
    let r = harness(&s)
        .run(&wf, json!({"x": "stale", "y": "stale"}))
        .await;
    assert_eq!(r.state.context["x"], json!("a \"}\" b"));
    assert_eq!(r.state.context["y"], Value::Null, "null is stored as null");
    assert!(!r.state.context.contains_key("z"));
    let s = Script::new().on("a", &["{ not json"]);
    let r = harness(&s).run(&wf, json!({"x": "stale"})).await;
    assert!(
        !r.state.context.contains_key("x"),
        "parse failure: nothing extracted, stale removed"
    );
}

#[tokio::test]
async fn template_resolution_is_single_pass_and_upstream_compatible() {
    let c = ctx(json!({
        "a": "{b}", "b": "never", "n": 85.0, "i": 5, "t": true, "m": {"k": "v\n", "x": [1, 2.5]}, "z": null
    }));
    assert_eq!(
        resolve("{a}", &c),
        "{b}",
        "substituted text is not re-scanned"
    );
    assert_eq!(resolve("{n} {i} {t} {z}|{missing}|", &c), "85.0 5 true ||");
    assert_eq!(resolve("{m}", &c), r#"{"k":"v\n","x":[1,2.5]}"#);
    assert_eq!(
        resolve("{{i}} {a-b} {} {\"k\":1} {_x", &c),
        "{5} {a-b} {} {\"k\":1} {_x"
    );
    assert_eq!(resolve("ünï {i}ç", &c), "ünï 5ç");
}

#[tokio::test]
async fn output_validation_rejects_control_unicode_and_size() {
    assert_eq!(validate_output("ok\ttab\nnl\r"), Ok(()));
    assert_eq!(validate_output("שלום مرحبا 日本"), Ok(()));
    assert_eq!(
        validate_output("a\u{0}b"),
        Err(OutputViolation::ControlCharacters)
    );
    assert_eq!(
        validate_output("a\u{7f}"),
        Err(OutputViolation::ControlCharacters)
    );
    for c in [
        '\u{202A}', '\u{202E}', '\u{2066}', '\u{2069}', '\u{200B}', '\u{200D}', '\u{FEFF}',
    ] {
        assert_eq!(
            validate_output(&format!("x{c}y")),
            Err(OutputViolation::UnicodeManipulation),
            "{c:?}"
        );
    }
    assert_eq!(validate_output("\u{200E}\u{2065}\u{202F}"), Ok(()));
    assert_eq!(validate_output(&"a".repeat(4 * 1024 * 1024)), Ok(()));
    assert_eq!(
        validate_output(&"a".repeat(4 * 1024 * 1024 + 1)),
        Err(OutputViolation::TooLarge)
    );
}

// ---------------------------------------------------------------------------------------------
// Bad input

#[tokio::test]
async fn bad_agent_output_fails_cleanly_with_state_intact() {
    let wf = workflow(
        "a",
        vec![
            node("a", "x", &[], vec![success("b")]),
            node(
                "b",
                "y",
                &["p", "q"],
                vec![condition("p", ConditionPredicate::Eq("x".into()), "e")],
            ),
            end("e", ExitStatus::Success),
        ],
    );
    let cases: Vec<(String, String)> = vec![
        (
            "ctl\u{1b}[31m".into(),
            "Node [b] output contains illegal control characters".into(),
        ),
        (
            "hidden\u{202E}txt".into(),
            "Node [b] output contains Unicode manipulation characters".into(),
        ),
        (
            "x".repeat(10 * 1024 * 1024),
            "Node [b] output exceeds maximum allowed size".into(),
        ),
        (
            "garbage ]]} {{{".into(),
            "No valid transition from b".into(),
        ),
    ];
    for (answer, message) in cases {
        let s = Script::new().on("a", &["first"]).on("b", &[&answer]);
        let r = harness(&s).run(&wf, json!({"p": "before"})).await;
        assert_eq!(failed(&r).to_string(), message);
        assert_eq!(r.state.context["a"], json!("first"), "earlier outputs kept");
        assert_eq!(
            r.state.history.len(),
            if message.starts_with("No valid") {
                2
            } else {
                1
            }
        );
        assert_eq!(r.state.current_node, "b");
        assert_eq!(r.state.phase, ExecutionPhase::Terminal);
    }
}

#[tokio::test]
async fn an_agent_that_never_answers_times_out_into_the_failure_path() {
    let mut wf = workflow(
        "a",
        vec![
            node("a", "x", &[], vec![success("ok"), failure(Some("timeout"))]),
            end("ok", ExitStatus::Success),
            end("timeout", ExitStatus::Failure),
        ],
    );
    wf.agents.get_mut("a-agent").unwrap().timeout = Some(1);
    let mut s = Script::new();
    s.delay = Some(Duration::from_secs(3600));
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(completed(&r).1, "timeout");
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some("Agent 'a-agent' did not answer within 1000 ms")
    );
}

#[tokio::test]
async fn missing_inputs_are_listed_before_anything_runs() {
    let mut wf = workflow(
        "a",
        vec![
            node("a", "{topic}", &[], vec![success("e")]),
            end("e", ExitStatus::Success),
        ],
    );
    wf.state_schema = Some(StateSchema {
        variables: ["topic", "audience", "tone"]
            .iter()
            .enumerate()
            .map(|(i, n)| StateVariable {
                name: n.to_string(),
                var_type: VarType::String,
                is_input: i < 2,
                description: None,
            })
            .collect(),
    });
    let s = Script::new();
    let r = harness(&s).run(&wf, json!({"audience": null})).await;
    assert_eq!(
        failed(&r).to_string(),
        "missing required inputs: topic, audience"
    );
    assert!(s.prompts().is_empty());
    let r = harness(&s).run(&wf, json!({"audience": "devs"})).await;
    assert_eq!(failed(&r).to_string(), "missing required input: topic");
}

#[tokio::test]
async fn unknown_generic_handler_and_command_are_named() {
    let wf = workflow(
        "g",
        vec![
            Node::Generic(GenericNode {
                id: "g".into(),
                executor_type: "quantum-sorter".into(),
                transition_rules: vec![success("e")],
                ..GenericNode::default()
            }),
            end("e", ExitStatus::Success),
        ],
    );
    let r = harness(&Script::new()).run(&wf, json!({})).await;
    assert!(
        failed(&r)
            .to_string()
            .starts_with("No handler registered for generic executor type: quantum-sorter.")
    );

    let wf = workflow(
        "act",
        vec![
            Node::Action(ActionNode {
                id: "act".into(),
                actions: vec![
                    Action::Execute {
                        command_id: "deploy-prod".into(),
                    },
                    Action::Send {
                        handler_id: "slack".into(),
                        payload: IndexMap::new(),
                        raw_payload: false,
                    },
                ],
                transition_rules: vec![success("ok"), failure(Some("ko"))],
            }),
            end("ok", ExitStatus::Success),
            end("ko", ExitStatus::Failure),
        ],
    );
    let mut commands = CommandRegistry::new();
    commands.insert(
        "echo",
        CommandSpec {
            command: "echo".into(),
            timeout_ms: 1000,
            env: IndexMap::new(),
        },
    );
    let h = harness_with(&Script::new(), |b| b.commands(commands));
    let r = h.run(&wf, json!({})).await;
    assert_eq!(completed(&r).1, "ko");
    let actions = h.events_of("action_executed");
    assert_eq!(
        actions[0]["output"],
        "Command not found in registry: 'deploy-prod'. Available commands: [echo]"
    );
    assert_eq!(
        actions[1]["output"],
        "Action handler not found: 'slack'. Registered handlers: [log, webhook]"
    );
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some("One or more actions failed")
    );
}

// ---------------------------------------------------------------------------------------------
// Run guards

#[tokio::test]
async fn max_steps_stops_a_runaway_loop_naming_the_last_nodes() {
    let mut wf = workflow(
        "a",
        vec![
            node("a", "x", &[], vec![success("b")]),
            node("b", "y", &[], vec![success("a")]),
        ],
    );
    wf.config = Some(WorkflowConfig {
        max_steps: 7,
        ..WorkflowConfig::default()
    });
    let r = harness(&Script::new()).run(&wf, json!({})).await;
    assert_eq!(
        failed(&r).to_string(),
        "run exceeded maxSteps = 7; last nodes: b → a → b → a → b"
    );
    assert_eq!(r.state.steps, 7);
    assert_eq!(r.state.history.len(), 7);
}

#[tokio::test]
async fn max_execution_time_interrupts_a_slow_node() {
    let mut wf = workflow("a", vec![node("a", "x", &[], vec![success("a")])]);
    wf.config = Some(WorkflowConfig {
        max_execution_time: 50,
        ..WorkflowConfig::default()
    });
    let mut s = Script::new();
    s.delay = Some(Duration::from_secs(60));
    let started = std::time::Instant::now();
    let r = harness(&s).run(&wf, json!({})).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        failed(&r).to_string(),
        "run exceeded maxExecutionTime = 50 ms; last nodes: a"
    );
}

#[tokio::test]
async fn cancellation_stops_at_the_next_node_boundary() {
    struct CancelAfter(CancelToken, u64);
    impl ExecutionListener for CancelAfter {
        fn on_event(&self, e: &Event<'_>) {
            if let Event::NodeStarted { step, .. } = e
                && *step == self.1
            {
                self.0.cancel();
            }
        }
    }
    let wf = workflow(
        "a",
        vec![
            node("a", "x", &[], vec![success("b")]),
            node("b", "y", &[], vec![success("a")]),
        ],
    );
    let token = CancelToken::new();
    let engine = Engine::builder()
        .provider(Arc::new(ScriptProvider(Script::new())))
        .listener(Arc::new(CancelAfter(token.clone(), 3)))
        .build();
    let r = engine.run(&wf, Context::default(), &token).await;
    assert_eq!(
        failed(&r).to_string(),
        "run cancelled; last nodes: a → b → a → b"
    );
    assert_eq!(
        r.state.history.len(),
        3,
        "the running node finished; nothing after it ran"
    );
    let snapshot = serde_json::to_value(&r.state).unwrap();
    let back: RunState = serde_json::from_value(snapshot).unwrap();
    assert_eq!(back, r.state, "state is serde round-trippable");
}

// ---------------------------------------------------------------------------------------------
// Stubs

#[test]
fn stub_fallback_generator_byte_for_byte() {
    assert_eq!(
        generate_fallback("draft", "writer", "claude-x", "Write something nice."),
        "[STUB] Auto-generated response for 'draft' (agent: writer, model: claude-x)."
    );
    assert_eq!(
        generate_fallback("n", "a", "m", "Reply in Json please"),
        DEFAULT_JSON_STUB
    );
    assert_eq!(
        DEFAULT_JSON_STUB,
        "{\n    \"result\": \"stub_response\",\n    \"status\": \"success\",\n    \"message\": \"This is a stub JSON response\"\n}"
    );
    assert_eq!(
        generate_fallback("n", "a", "m", "OUTPUT AS a list"),
        DEFAULT_JSON_STUB
    );
    let prompt = "List facts.\nRespond as JSON: {\"facts\": \"...\", \"more\": 1}\n  \"bad key\": 1\n \"<x>\": 2\nnone here\n\"facts\":again\n\"\":empty";
    assert_eq!(
        generate_fallback("n", "a", "m", prompt),
        "{\n    \"facts\": \"stub_value_for_facts\",\n    \"facts\": \"stub_value_for_facts\",\n    \"\": \"stub_value_for_\"\n}"
    );
    // The engine instructions contain "JSON" but no `":` line: default object.
    let enriched = format!("Write.\n\n{}", hensu_runtime::enrich::SCORE_INSTRUCTION);
    assert_eq!(
        generate_fallback("n", "a", "m", &enriched),
        DEFAULT_JSON_STUB
    );
}

#[test]
fn stub_double_brace_substitution() {
    let c = ctx(json!({"topic": "rust", "n": 85.0, "m": {"a": 1, "b": [true]}, "nil": null}));
    assert_eq!(
        substitute_double_braces(
            "{{topic}}/{{n}}/{{m}}/{{nil}}/{{missing}}/{{ x }}/{{{topic}}}/{topic}",
            &c
        ),
        "rust/85.0/{a=1, b=[true]}///{{ x }}/{rust}/{topic}"
    );
}

#[tokio::test]
async fn stub_lookup_ladder_and_scenarios() {
    let files = MemoryStubFiles::new()
        .with("default", "write", "default node {{topic}}")
        .with("default", "writer", "default agent")
        .with("default", "other", "default other-agent")
        .with("strict", "writer", "strict agent")
        .with("loud", "write", "loud node");
    let provider = Arc::new(StubProvider::new(
        Some(Box::new(files)),
        Some("strict".into()),
    ));
    provider
        .registry()
        .register("default", "review", "programmatic default");
    provider
        .registry()
        .register("strict", "review", "programmatic strict");
    let mut wf = workflow(
        "write",
        vec![
            node("write", "x", &["article"], vec![success("review")]),
            node("review", "y", &["verdict"], vec![success("third")]),
            node("third", "z", &["t"], vec![success("e")]),
            end("e", ExitStatus::Success),
        ],
    );
    wf.agents
        .insert("write-agent".into(), AgentConfig::new("writer", "W", "m"));
    if let Some(Node::Standard(n)) = wf.nodes.get_mut("write") {
        n.agent_id = Some("writer".into());
    }
    if let Some(Node::Standard(n)) = wf.nodes.get_mut("third") {
        n.agent_id = Some("other".into());
    }
    wf.agents
        .insert("other".into(), AgentConfig::new("other", "O", "m"));
    let engine = Engine::builder().provider(provider.clone()).build();
    // configured scenario `strict`: agent file of the scenario beats the default node file.
    let r = engine
        .run(&wf, ctx(json!({"topic": "t"})), &CancelToken::new())
        .await;
    assert_eq!(r.state.context["article"], json!("strict agent"));
    assert_eq!(r.state.context["verdict"], json!("programmatic strict"));
    assert_eq!(
        r.state.context["t"],
        json!("default other-agent"),
        "falls back to default/"
    );
    // The context's stub_scenario wins; a scenario without files falls back to default node file.
    let r = engine
        .run(
            &wf,
            ctx(json!({"topic": "t", "stub_scenario": "loud"})),
            &CancelToken::new(),
        )
        .await;
    assert_eq!(r.state.context["article"], json!("loud node"));
    // programmatic `default` registrations are not consulted by the fallback: generated text.
    assert_eq!(
        r.state.context["verdict"],
        json!(
            "{\n    \"result\": \"stub_response\",\n    \"status\": \"success\",\n    \"message\": \"This is a stub JSON response\"\n}"
        )
    );
    let r = engine
        .run(
            &wf,
            ctx(json!({"topic": "t", "stub_scenario": "default"})),
            &CancelToken::new(),
        )
        .await;
    assert_eq!(r.state.context["article"], json!("default node t"));
    assert_eq!(r.state.context["verdict"], json!("programmatic default"));
    // Path tricks in a scenario never reach the filesystem.
    let fs = FsStubFiles::new("/");
    assert_eq!(fs.read("../etc", "passwd"), None);
    assert_eq!(fs.read("etc", "../passwd"), None);
}

// ---------------------------------------------------------------------------------------------
// Generic handlers

fn generic(id: &str, ty: &str, config: Value) -> Node {
    Node::Generic(GenericNode {
        id: id.into(),
        executor_type: ty.into(),
        config: map(config),
        transition_rules: vec![success("ok"), failure(Some("ko"))],
        rubric: None,
    })
}

async fn run_generic(config: Value, ty: &str, input: Value) -> (RunResult, Harness) {
    let wf = workflow(
        "g",
        vec![
            generic("g", ty, config),
            end("ok", ExitStatus::Success),
            end("ko", ExitStatus::Failure),
        ],
    );
    let h = harness(&Script::new());
    let r = h.run(&wf, input).await;
    (r, h)
}

#[tokio::test]
async fn validator_handler() {
    let cfg = json!({"field": "input", "required": true, "minLength": 10, "maxLength": 20,
                     "pattern": "^[a-z ]+$", "errorMessage": "letters only"});
    let (r, _) = run_generic(cfg.clone(), "validator", json!({"input": "hello world"})).await;
    assert_eq!(completed(&r).1, "ok");
    assert_eq!(r.state.context["g"], json!("Validation passed for input"));
    let (r, _) = run_generic(cfg.clone(), "validator", json!({"input": "Hi!"})).await;
    assert_eq!(completed(&r).1, "ko");
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some("input must be at least 10 characters; letters only")
    );
    let (r, _) = run_generic(cfg.clone(), "validator", json!({"input": "   "})).await;
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some("input is required")
    );
    let (r, _) = run_generic(cfg, "validator", json!({"input": "a".repeat(25)})).await;
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some("input must be at most 20 characters")
    );
}

#[tokio::test]
async fn data_transformer_handler() {
    let cfg = json!({"inputField": "input", "outputField": "clean", "operations": ["trim", "normalize", "uppercase"]});
    let (r, _) = run_generic(
        cfg.clone(),
        "data-transformer",
        json!({"input": "  a \n\t b  c "}),
    )
    .await;
    assert_eq!(r.state.context["clean"], json!("A B C"));
    assert_eq!(r.state.context["g"], json!("A B C"));
    let (r, _) = run_generic(cfg, "data-transformer", json!({})).await;
    assert_eq!(completed(&r).1, "ko");
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some("Input field 'input' not found")
    );
}

/// A one-shot HTTP server on 127.0.0.1 that records the request and answers `status` + `body`.
async fn http_server(
    status: u16,
    body: &'static str,
) -> (String, tokio::sync::oneshot::Receiver<String>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let Ok((mut sock, _)) = listener.accept().await else {
            return;
        };
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let n = sock.read(&mut chunk).await.unwrap_or(0);
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&buf).to_string();
            if let Some(head_end) = text.find("\r\n\r\n") {
                let len = text
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                    })
                    .unwrap_or(0);
                if buf.len() >= head_end + 4 + len {
                    break;
                }
            }
        }
        let reply = format!(
            "HTTP/1.1 {status} X\r\ncontent-length: {}\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = sock.write_all(reply.as_bytes()).await;
        let _ = tx.send(String::from_utf8_lossy(&buf).to_string());
    });
    (format!("http://{addr}"), rx)
}

#[tokio::test]
async fn api_caller_makes_a_real_request() {
    let (url, rx) = http_server(200, r#"{"answer": 42}"#).await;
    let cfg = json!({"endpoint": format!("{url}/lookup?q={{input}}"), "method": "POST", "outputField": "resp"});
    let (r, _) = run_generic(cfg, "api-caller", json!({"input": "a b&c"})).await;
    assert_eq!(completed(&r).1, "ok");
    assert_eq!(r.state.context["resp"], json!(r#"{"answer": 42}"#));
    let req = rx.await.unwrap();
    assert!(
        req.starts_with("POST /lookup?q=a%20b%26c HTTP/1.1"),
        "{req}"
    );
    assert!(req.ends_with(r#"{"input":"a b&c"}"#), "{req}");

    let (url, _rx) = http_server(503, "down").await;
    let (r, _) = run_generic(json!({"endpoint": url}), "api-caller", json!({})).await;
    assert_eq!(completed(&r).1, "ko");
    assert!(
        r.state.history[0]
            .error
            .as_deref()
            .unwrap()
            .contains("failed with status 503: down")
    );
}

// ---------------------------------------------------------------------------------------------
// Actions

fn action_node(actions: Vec<Action>) -> Workflow {
    workflow(
        "act",
        vec![
            Node::Action(ActionNode {
                id: "act".into(),
                actions,
                transition_rules: vec![success("ok"), failure(Some("ko"))],
            }),
            end("ok", ExitStatus::Success),
            end("ko", ExitStatus::Failure),
        ],
    )
}

#[tokio::test]
async fn send_log_and_webhook() {
    let (url, rx) = http_server(204, "").await;
    let wf = action_node(vec![
        Action::Send {
            handler_id: "log".into(),
            payload: map(json!({"message": "Hello {name}", "level": "warn"})),
            raw_payload: false,
        },
        Action::Send {
            handler_id: "webhook".into(),
            payload: map(json!({"url": url, "text": "Hi {name}", "n": 3})),
            raw_payload: false,
        },
        Action::Send {
            handler_id: "log".into(),
            payload: map(json!({"message": "raw {name}"})),
            raw_payload: true,
        },
    ]);
    let h = harness(&Script::new());
    let r = h.run(&wf, json!({"name": "Ada"})).await;
    assert_eq!(completed(&r).1, "ok");
    let outs: Vec<Value> = h
        .events_of("action_executed")
        .iter()
        .map(|e| e["output"].clone())
        .collect();
    assert_eq!(outs[0], "[WARN] Hello Ada");
    assert_eq!(outs[2], "[INFO] raw {name}");
    let req = rx.await.unwrap();
    assert!(req.starts_with("POST / HTTP/1.1"));
    assert!(req.ends_with(r#"{"text":"Hi Ada","n":3}"#), "{req}");
}

#[tokio::test]
async fn commands_yaml_is_parsed_with_a_yaml_library() {
    let reg = CommandRegistry::parse(
        "# comment\ncommands:\n  echo-result:\n    command: \"echo 'Workflow result:' {result}\"\n    timeout: 5000\n  with-env:\n    command: printenv GREETING\n    env:\n      GREETING: hello\n      N: 3\n  no-command:\n    timeout: 1\n",
    )
    .unwrap();
    assert_eq!(reg.ids(), ["echo-result", "with-env"]);
    assert_eq!(
        reg.get("echo-result").unwrap().command,
        "echo 'Workflow result:' {result}"
    );
    assert_eq!(reg.get("echo-result").unwrap().timeout_ms, 5000);
    assert_eq!(reg.get("with-env").unwrap().timeout_ms, 30_000);
    assert_eq!(reg.get("with-env").unwrap().env["N"], "3");
    let r = reg.execute("with-env", &Context::default()).await;
    assert_eq!(r, ActionResult::success("hello"));
    assert!(CommandRegistry::parse("commands: [1, 2]").is_err());
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let shipped = CommandRegistry::load(&examples).unwrap();
    assert_eq!(shipped.ids(), ["echo-result", "word-count", "list-files"]);
}

#[tokio::test]
async fn shell_values_cannot_inject() {
    let spec = CommandSpec {
        command: "printf '%s' {x}".into(),
        timeout_ms: 5000,
        env: IndexMap::new(),
    };
    let dir = tempfile::tempdir().unwrap();
    let canary = dir.path().join("canary");
    std::fs::write(&canary, "alive").unwrap();
    let payloads = [
        "'; rm -rf / #".to_string(),
        format!("'; rm {} #", canary.display()),
        "$(id)".to_string(),
        "`id`".to_string(),
        "a\nid\nb".to_string(),
        "\"; id; echo \"".to_string(),
        "$HOME ${PATH} * ? [a] ~ & | ; < > ( ) { } \\ !".to_string(),
        "it's 'quoted' ''".to_string(),
        String::new(),
    ];
    for p in payloads {
        let c = ctx(json!({ "x": p }));
        let line = resolve_shell(&spec.command, &c);
        assert_eq!(line, format!("printf '%s' {}", shell_quote(&p)));
        let r = hensu_runtime::action::run_command(&spec, &c, Some(dir.path())).await;
        assert_eq!(
            r,
            ActionResult::success(p.trim_end_matches('\n')),
            "payload {p:?}"
        );
    }
    assert!(canary.exists(), "nothing was deleted");
    assert_eq!(shell_quote("a'b"), r"'a'\''b'");
    // Absent and null values render as nothing (upstream drops nulls).
    assert_eq!(
        resolve_shell("echo {a}{b}.", &ctx(json!({"b": null}))),
        "echo ."
    );
}

#[tokio::test]
async fn command_timeout_exit_code_and_merged_output() {
    let mk = |c: &str, t| CommandSpec {
        command: c.into(),
        timeout_ms: t,
        env: IndexMap::new(),
    };
    let r =
        hensu_runtime::action::run_command(&mk("sleep 5", 100), &Context::default(), None).await;
    assert_eq!(r, ActionResult::failure("Command timed out after 100 ms"));
    let r =
        hensu_runtime::action::run_command(&mk("exit 3", 1000), &Context::default(), None).await;
    assert_eq!(r, ActionResult::failure("Command failed with exit code: 3"));
    let r = hensu_runtime::action::run_command(
        &mk("echo out; echo err >&2", 1000),
        &Context::default(),
        None,
    )
    .await;
    assert_eq!(r, ActionResult::success("out\nerr"));
}

// ---------------------------------------------------------------------------------------------
// Parallel consensus

fn parallel(
    strategy: ConsensusStrategy,
    threshold: Option<f64>,
    weights: &[f64],
    judge: Option<&str>,
) -> Workflow {
    let branches = weights
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let mut b = Branch::new(format!("b{i}"), format!("r{i}"));
            b.prompt = Some(format!("Review {{draft}} as {i}"));
            b.weight = *w;
            b.yields = vec![format!("notes{i}")];
            b
        })
        .collect();
    workflow(
        "vote",
        vec![
            Node::Parallel(ParallelNode {
                id: "vote".into(),
                branches,
                consensus_config: Some(ConsensusConfig {
                    judge_agent_id: judge.map(String::from),
                    strategy,
                    threshold,
                }),
                transition_rules: vec![
                    success("yes"),
                    TransitionRule::NoConsensus {
                        target_node: "no".into(),
                        with_feedback: true,
                    },
                ],
            }),
            end("yes", ExitStatus::Success),
            end("no", ExitStatus::Failure),
        ],
    )
}

fn branch_script(answers: &[&str]) -> Script {
    let answers: Vec<String> = answers.iter().map(|s| s.to_string()).collect();
    let mut s = Script::new();
    s.custom = Some(Arc::new(move |req: &AgentRequest<'_>| {
        let i: usize = req
            .prompt
            .split(" as ")
            .nth(1)
            .and_then(|t| t[..1].parse().ok())
            .unwrap_or(0);
        Ok(AgentResponse::text(answers[i].clone()))
    }));
    s
}

#[tokio::test]
async fn majority_vote_strict_greater_than_floor() {
    let wf = parallel(
        ConsensusStrategy::MajorityVote,
        Some(0.5),
        &[1.0, 1.0, 1.0, 1.0],
        None,
    );
    let ok = r#"{"approved": true, "notes{}": "fine", "score": 90}"#;
    let s = branch_script(&[ok, ok, r#"{"score": 0.4}"#, r#"{"approved": false}"#]);
    let h = harness(&s);
    let r = h.run(&wf, json!({"draft": "D"})).await;
    assert_eq!(completed(&r).1, "no", "4 @0.5 need 3");
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some(
            "Majority vote: 2 approve, 2 reject out of 4 total (threshold=50%, required>2). Consensus not reached."
        )
    );
    assert!(
        r.state.context["consensus_feedback:vote"]
            .as_str()
            .unwrap()
            .contains("b2 (REJECT): {\"score\": 0.4}\n---\nb3 (REJECT)")
    );
    // Branch prompts were enriched with the self-scoring instructions and yields.
    let p = &s.prompts()[0].1;
    assert!(p.starts_with("Review D as "));
    assert!(p.contains(hensu_runtime::enrich::APPROVED_INSTRUCTION));
    assert!(p.contains("Engine yield requirement: your JSON response MUST include:\n  \"notes"));

    let s = branch_script(&[ok, ok, "{\"score\": 71}", "{}"]);
    let r = harness(&s).run(&wf, json!({"draft": "D"})).await;
    assert_eq!(
        completed(&r).1,
        "yes",
        "the threshold 0.5 doubles as the score cut-off: 71 approves → 3 > 2"
    );
}

#[tokio::test]
async fn majority_vote_reaches_consensus_and_merges_yields() {
    let wf = parallel(
        ConsensusStrategy::MajorityVote,
        None,
        &[1.0, 1.0, 1.0],
        None,
    );
    let s = branch_script(&[
        r#"{"approved": true, "notes0": "a"}"#,
        r#"{"score": 75, "notes1": "b"}"#,
        r#"{"approved": false, "notes2": "c"}"#,
    ]);
    let r = harness(&s).run(&wf, json!({"draft": "D"})).await;
    assert_eq!(completed(&r).1, "yes");
    for (k, v) in [("notes0", "a"), ("notes1", "b"), ("notes2", "c")] {
        assert_eq!(r.state.context[k], json!(v));
    }
    assert!(!r.state.context.contains_key("approved"));
}

#[tokio::test]
async fn weighted_and_unanimous_votes() {
    let wf = parallel(
        ConsensusStrategy::WeightedVote,
        Some(0.6),
        &[0.3, 0.3, 1.4],
        None,
    );
    let s = branch_script(&[
        r#"{"approved": false, "score": 40}"#,
        r#"{"approved": false, "score": 50}"#,
        r#"{"approved": true, "score": 90}"#,
    ]);
    let r = harness(&s).run(&wf, json!({"draft": "D"})).await;
    assert_eq!(completed(&r).1, "yes");
    let h = &r.state.history[0];
    assert_eq!(
        h.output,
        Some(json!(
            "Weighted vote: approve=126.00, reject=27.00, ratio=0.82 (threshold=0.60). Consensus reached."
        ))
    );

    let wf = parallel(ConsensusStrategy::Unanimous, None, &[1.0, 1.0], None);
    let s = branch_script(&[r#"{"approved": true}"#, r#"{"score": 69.9}"#]);
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(completed(&r).1, "no");
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some("Unanimous not reached: 1 branch(es) rejected.")
    );
}

#[tokio::test]
async fn judge_decides_merges_only_the_winner() {
    let wf = parallel(
        ConsensusStrategy::JudgeDecides,
        None,
        &[1.0, 1.0],
        Some("judge"),
    );
    let mut s = Script::new();
    s.custom = Some(Arc::new(|req: &AgentRequest<'_>| {
        if req.prompt.starts_with("You are the judge") {
            return Ok(AgentResponse::text(
                r#"{"decision": true, "winning_branch": "b1", "reasoning": "calmer"}"#,
            ));
        }
        let i = if req.prompt.contains("as 0") { 0 } else { 1 };
        Ok(AgentResponse::text(format!(
            r#"{{"notes0": "from{i}", "notes1": "from{i}", "score": 99}}"#
        )))
    }));
    let h = harness(&s);
    let r = h.run(&wf, json!({"draft": "D"})).await;
    assert_eq!(completed(&r).1, "yes");
    assert_eq!(r.state.context.get("notes1"), Some(&json!("from1")));
    assert!(
        !r.state.context.contains_key("notes0"),
        "b1 only yields notes1"
    );
    let judge_prompt = &s
        .prompts()
        .iter()
        .find(|(_, p)| p.starts_with("You are"))
        .unwrap()
        .1
        .clone();
    insta::assert_snapshot!("judge_prompt", judge_prompt);
    assert!(
        !s.prompts()[0].1.contains("\"score\" with"),
        "judge strategy: no self-scoring"
    );
}

// ---------------------------------------------------------------------------------------------
// Events

#[tokio::test]
async fn events_describe_the_run() {
    let wf = revise_workflow(false, false);
    let s = Script::new()
        .on("write", &["draft"])
        .on("review", &[r#"{"approved": true}"#]);
    let h = harness(&s);
    h.run(&wf, json!({"topic": "x"})).await;
    let kinds: Vec<String> = h
        .events
        .events()
        .iter()
        .map(|e| e["event"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        kinds,
        [
            "run_started",
            "node_started",
            "agent_call",
            "node_completed",
            "transition_taken",
            "node_started",
            "agent_call",
            "node_completed",
            "transition_taken",
            "run_finished"
        ]
    );
    let call = &h.events_of("agent_call")[0];
    assert_eq!(call["prompt_bytes"], call["prompt"].as_str().unwrap().len());
    assert_eq!(call["response_bytes"], 5);
    let fin = &h.events_of("run_finished")[0];
    assert_eq!(
        fin["finish"],
        json!({"outcome": "completed", "exit_status": "SUCCESS"})
    );
    assert_eq!(fin["end_node"], "done");
    let t = TransitionCause::Approval {
        expected: true,
        from_review: false,
    };
    assert_eq!(t.to_string(), "on approval (approved variable)");
}

// ---------------------------------------------------------------------------------------------
// Golden traces of the examples (compiled with hensu-sema, run with the shipped stubs)

mod golden {
    use super::*;
    use hensu_sema::files::{FileError, FileProvider, ResourceDir};

    struct ExampleFiles(std::path::PathBuf);

    impl FileProvider for ExampleFiles {
        fn read(&self, dir: ResourceDir, relative: &str) -> Result<String, FileError> {
            std::fs::read_to_string(self.0.join(dir.as_str()).join(relative))
                .map_err(|_| FileError::NotFound)
        }
    }

    fn examples() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
    }

    pub(super) fn compile(name: &str) -> Workflow {
        let path = examples().join("workflows").join(name);
        let src = std::fs::read_to_string(&path).unwrap();
        let lowered = hensu_sema::lower_source(
            &src,
            hensu_diagnostics::FileId::default(),
            &ExampleFiles(examples()),
        );
        lowered
            .workflow
            .unwrap_or_else(|| panic!("{name} did not lower: {:?}", lowered.diagnostics))
    }

    /// Every example workflow, for sub-workflow nodes (as `hensuc run -d examples` loads them).
    pub(super) fn repository() -> MapRepository {
        let mut names: Vec<String> = std::fs::read_dir(examples().join("workflows"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names.iter().map(|n| compile(n)).collect()
    }

    pub(super) async fn trace(name: &str, scenario: &str, input: Value) -> Value {
        let wf = compile(name);
        let dir = examples();
        let engine = Engine::builder()
            .provider(Arc::new(StubProvider::new(
                Some(Box::new(FsStubFiles::new(dir.join("stubs")))),
                Some(scenario.to_string()),
            )))
            .commands(CommandRegistry::load(&dir).unwrap())
            .workflows(Arc::new(repository()))
            .build();
        let r = engine.run(&wf, ctx(input), &CancelToken::new()).await;
        let outcome = match &r.outcome {
            RunOutcome::Completed { exit_status, .. } => exit_status.as_str().to_string(),
            RunOutcome::Rejected { reason } => format!("REJECTED: {reason}"),
            RunOutcome::Paused => "PAUSED".into(),
            RunOutcome::Failed(e) => format!("FAILED: {e}"),
        };
        let mut p = path(&r);
        if p.len() > 30 {
            let n = p.len();
            let tail = p.split_off(n - 5);
            p.truncate(10);
            p.push(format!("… {} more …", n - 15));
            p.extend(tail);
        }
        let bt: Vec<String> = r
            .state
            .backtracks
            .iter()
            .map(|b| format!("{} → {} {:?}", b.from, b.to, b.kind))
            .collect();
        let bt = if bt.len() > 10 {
            vec![format!("{} backtracks, first: {}", bt.len(), bt[0])]
        } else {
            bt
        };
        json!({
            "path": p,
            "outcome": outcome,
            "steps": r.state.steps,
            "backtracks": bt,
            "context": r.state.context,
        })
    }
}

macro_rules! golden {
    ($test:ident, $file:literal, $scenario:literal, $input:tt) => {
        #[tokio::test]
        async fn $test() {
            let t = golden::trace($file, $scenario, json!($input)).await;
            insta::assert_json_snapshot!(stringify!($test), t);
        }
    };
}

golden!(golden_content_pipeline_default, "content-pipeline.hwf", "default", {"topic": "Rust async runtimes"});
golden!(golden_content_pipeline_strict, "content-pipeline.hwf", "strict", {"topic": "Rust async runtimes"});
golden!(golden_content_pipeline_rejected, "content-pipeline.hwf", "rejected", {"topic": "Rust async runtimes"});
golden!(golden_backtrack_routing_default, "backtrack-routing.hwf", "default", {"question": "Why is the sky blue?"});
golden!(golden_backtrack_routing_revise, "backtrack-routing.hwf", "revise", {"question": "Why is the sky blue?"});
golden!(golden_backtrack_routing_hopeless, "backtrack-routing.hwf", "hopeless", {"question": "Why is the sky blue?"});
golden!(golden_escalation_default, "escalation.hwf", "default", {"incident": "Disk 91% full on db-1"});
golden!(golden_escalation_outage, "escalation.hwf", "outage", {"incident": "API returns 502 everywhere"});
golden!(golden_executable_actions_default, "executable-actions.hwf", "default", {"request": "What is 6 × 7?"});
golden!(golden_generic_node_default, "generic-node.hwf", "default", {"input": "  The   quick brown fox\n jumps over the lazy dog.  "});
golden!(golden_generic_node_invalid, "generic-node.hwf", "default", {"input": "short"});
golden!(golden_human_review_default, "human-review.hwf", "default", {"goal": "Ship v1.0"});
golden!(golden_mini_review_default, "mini-review.hwf", "default", {"topic": "WebAssembly"});
golden!(golden_ralph_loop_default, "ralph-loop.hwf", "default", {"task": "Write a CSV parser"});
golden!(golden_ralph_loop_stuck, "ralph-loop.hwf", "stuck", {"task": "Write a CSV parser"});
golden!(golden_self_evaluation_default, "self-evaluation.hwf", "default", {"topic": "Tea"});
golden!(golden_self_evaluation_strict, "self-evaluation.hwf", "strict", {"topic": "Tea"});
golden!(golden_sub_summarizer_default, "sub-summarizer.hwf", "default", {"draft": "Notes about Rust."});
golden!(golden_travel_guide_default, "travel-guide.kt", "default", {"mountain_name": "Kazbek"});
golden!(golden_consensus_vote_default, "consensus-vote.hwf", "default", {"topic": "hensu 1.0"});
golden!(golden_consensus_vote_rejected, "consensus-vote.hwf", "rejected", {"topic": "hensu 1.0"});
golden!(golden_unanimous_vote_default, "unanimous-vote.hwf", "default", {"change": "Rotate signing keys"});
golden!(golden_weighted_vote_default, "weighted-vote.hwf", "default", {"api_docs": "GET /v1/items"});
golden!(golden_weighted_vote_rejected, "weighted-vote.hwf", "rejected", {"api_docs": "GET /v1/items"});
golden!(golden_unanimous_vote_rejected, "unanimous-vote.hwf", "rejected", {"change": "Rotate signing keys"});
golden!(golden_judge_decides_default, "judge-decides.hwf", "default", {"product": "hensu"});
golden!(golden_fork_join_default, "fork-join.hwf", "default", {"company": "Acme"});
golden!(golden_main_research_default, "main-research.hwf", "default", {"topic": "Rust"});
golden!(golden_fork_join_concatenate_default, "fork-join-concatenate.hwf", "default", {"topic": "Rust ownership"});
golden!(golden_fork_join_first_successful_default, "fork-join-first-successful.hwf", "default", {"text": "Good morning"});
golden!(golden_fork_join_merge_maps_default, "fork-join-merge-maps.hwf", "default", {"invoice": "ACME Corp, total 120.50 EUR, due 2025-07-01"});

// Fork/join, sub-workflows and review decisions (issue 5).
#[path = "runtime/issue5.rs"]
mod issue5;
