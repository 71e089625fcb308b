//! hensu-ir tests: wire format (upstream worked example, snapshots, round trip, errors), rubric
//! parser, canonical numbers, workflow ids and the executable graph.

use hensu_ir::*;
use indexmap::IndexMap;
use proptest::prelude::*;
use serde_json::{Value, json};

const MINI_REVIEW_UPSTREAM: &str = include_str!("data/mini_review.upstream.json");
const CONTENT_QUALITY_MD: &str = include_str!("data/content-quality.md");

// ------------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------------

fn s(x: &str) -> String {
    x.to_string()
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn mini_review() -> Workflow {
    let mut agents = IndexMap::new();
    agents.insert(
        s("writer"),
        AgentConfig::new("writer", "Writer", "claude-haiku-4-5"),
    );
    let mut reviewer = AgentConfig::new("reviewer", "Reviewer", "gpt-4o");
    reviewer.temperature = 0.2;
    reviewer.max_tokens = Some(1024);
    agents.insert(s("reviewer"), reviewer);

    let draft = Node::Standard(StandardNode {
        id: s("draft"),
        agent_id: Some(s("writer")),
        prompt: Some(s("Write about {topic}.")),
        rubric: None,
        review_config: None,
        transition_rules: vec![
            TransitionRule::Condition {
                variable: s("status"),
                predicate: ConditionPredicate::Eq(s("done")),
                target_node: s("review"),
                with_feedback: false,
            },
            TransitionRule::Bounded {
                namespace: Namespace::Condition,
                budget: 2,
                otherwise: s("failed"),
                escalation_with_feedback: false,
                inner: Box::new(TransitionRule::Always {
                    target_node: s("draft"),
                    with_feedback: false,
                }),
            },
            TransitionRule::Bounded {
                namespace: Namespace::Failure,
                budget: 1,
                otherwise: s("failed"),
                escalation_with_feedback: false,
                inner: Box::new(TransitionRule::Failure { target_node: None }),
            },
        ],
        writes: vec![s("article"), s("status")],
    });
    let review = Node::Standard(StandardNode {
        id: s("review"),
        agent_id: Some(s("reviewer")),
        prompt: Some(s("Review: {article}")),
        rubric: None,
        review_config: Some(ReviewConfig {
            mode: ReviewMode::Required,
            allow_backtrack: false,
            allow_edit: false,
        }),
        transition_rules: vec![
            TransitionRule::Score {
                conditions: vec![ScoreCondition {
                    operator: ComparisonOperator::Lt,
                    value: Some(50.0),
                    range: None,
                    target_node: s("failed"),
                }],
                with_feedback: false,
            },
            TransitionRule::Approval {
                expected: true,
                target_node: s("publish"),
                with_feedback: false,
            },
            TransitionRule::Bounded {
                namespace: Namespace::Approval,
                budget: 3,
                otherwise: s("failed"),
                escalation_with_feedback: true,
                inner: Box::new(TransitionRule::Approval {
                    expected: false,
                    target_node: s("draft"),
                    with_feedback: false,
                }),
            },
        ],
        writes: vec![],
    });
    let mut payload = IndexMap::new();
    payload.insert(s("message"), json!("Published: {topic}"));
    let publish = Node::Action(ActionNode {
        id: s("publish"),
        actions: vec![
            Action::Send {
                handler_id: s("slack"),
                payload,
                raw_payload: false,
            },
            Action::Execute {
                command_id: s("echo-result"),
            },
        ],
        transition_rules: vec![TransitionRule::Success {
            target_node: s("done"),
            with_feedback: false,
        }],
    });
    let done = Node::End(EndNode {
        id: s("done"),
        status: ExitStatus::Success,
    });
    let failed = Node::End(EndNode {
        id: s("failed"),
        status: ExitStatus::Failure,
    });
    let mut nodes = IndexMap::new();
    for n in [draft, review, publish, done, failed] {
        nodes.insert(n.id().to_string(), n);
    }
    Workflow {
        id: workflow_id_from_name("Mini Review"),
        version: s("1.0.0"),
        metadata: Metadata {
            name: s("Mini Review"),
            description: Some(s("Draft, gate, publish")),
            author: None,
            created: None,
            tags: vec![],
        },
        agents,
        nodes,
        start_node: s("draft"),
        config: None,
        state_schema: Some(StateSchema {
            variables: vec![
                StateVariable {
                    name: s("topic"),
                    var_type: VarType::String,
                    is_input: true,
                    description: None,
                },
                StateVariable {
                    name: s("article"),
                    var_type: VarType::String,
                    is_input: false,
                    description: Some(s("the article text")),
                },
                StateVariable {
                    name: s("status"),
                    var_type: VarType::String,
                    is_input: false,
                    description: None,
                },
            ],
        }),
    }
}

fn remove_key(v: &mut Value, path: &[&str]) {
    match path {
        [] => {}
        [last] => {
            if let Some(o) = v.as_object_mut() {
                o.shift_remove(*last);
            }
        }
        [first, rest @ ..] => {
            if let Some(child) = v.get_mut(*first) {
                remove_key(child, rest);
            }
        }
    }
}

fn set_at(v: &mut Value, path: &[&str], new: Value) {
    let mut cur = v;
    if let ([.., last], Some(parent)) = (path, path.split_last().map(|(_, p)| p)) {
        // Insert a missing object member.
        let mut p = &mut *cur;
        for seg in parent {
            let next = if let Ok(ix) = seg.parse::<usize>() {
                p.get_mut(ix)
            } else {
                p.get_mut(*seg)
            };
            match next {
                Some(n) => p = n,
                None => return,
            }
        }
        if let Some(o) = p.as_object_mut()
            && !o.contains_key(*last)
        {
            o.insert(last.to_string(), new);
            return;
        }
    }
    for (i, seg) in path.iter().enumerate() {
        let next = if let Ok(ix) = seg.parse::<usize>() {
            cur.get_mut(ix)
        } else {
            cur.get_mut(*seg)
        };
        match next {
            Some(n) if i + 1 == path.len() => {
                *n = new;
                return;
            }
            Some(n) => cur = n,
            None => return,
        }
    }
}

fn upstream_value() -> Value {
    serde_json::from_str(MINI_REVIEW_UPSTREAM).unwrap_or(Value::Null)
}

fn read_err(v: &Value) -> JsonError {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    match from_json(&text) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

// ------------------------------------------------------------------------------------------------
// A worked example: a complete workflow and its wire JSON
// ------------------------------------------------------------------------------------------------

#[test]
fn worked_example_serializes_like_upstream() {
    let ours: Value = serde_json::from_str(&to_json(&mini_review())).unwrap_or(Value::Null);
    assert_eq!(ours["formatVersion"], json!(1));
    let mut ours = ours;
    remove_key(&mut ours, &["formatVersion"]);
    let mut theirs = upstream_value();
    remove_key(&mut theirs, &["metadata", "created"]);
    assert_eq!(ours, theirs);
}

#[test]
fn worked_example_key_order_is_declaration_order() {
    let text = to_json(&mini_review());
    let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let top: Vec<&str> = v
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(
        top,
        [
            "formatVersion",
            "id",
            "version",
            "agents",
            "nodes",
            "startNode",
            "config",
            "metadata",
            "stateSchema"
        ]
    );
    let nodes: Vec<&str> = v["nodes"]
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(nodes, ["draft", "review", "publish", "done", "failed"]);
    assert!(text.ends_with("}\n"));
    assert!(!text.contains("created"));
}

#[test]
fn worked_example_reads_back_from_upstream_json() {
    let read = from_json(MINI_REVIEW_UPSTREAM);
    let mut expected = mini_review();
    expected.metadata.created = Some(s("2026-01-15T09:30:00.123456Z"));
    assert_eq!(read, Ok(expected));
}

#[test]
fn worked_example_full_snapshot() {
    insta::assert_snapshot!("mini_review_json", to_json(&mini_review()));
}

#[test]
fn created_is_written_when_set() {
    let mut wf = mini_review();
    wf.metadata.created = Some(s("2026-01-01T00:00:00Z"));
    let v: Value = serde_json::from_str(&to_json(&wf)).unwrap_or(Value::Null);
    let keys: Vec<&str> = v["metadata"]
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(keys, ["name", "description", "author", "created", "tags"]);
}

#[test]
fn config_carries_max_steps_and_reads_upstream_config() {
    let mut wf = mini_review();
    wf.config = Some(WorkflowConfig {
        max_steps: 50,
        ..WorkflowConfig::default()
    });
    let v: Value = serde_json::from_str(&to_json(&wf)).unwrap_or(Value::Null);
    assert_eq!(
        v["config"],
        json!({"maxExecutionTime": 7200000, "checkpoints": false, "checkpointInterval": 300000,
               "observability": {"logLevel": "INFO", "exportMetrics": true}, "maxSteps": 50})
    );
    // An upstream config (no maxSteps) reads with the default.
    let mut up = upstream_value();
    set_at(
        &mut up,
        &["config"],
        json!({"maxExecutionTime": 1000, "checkpoints": true, "checkpointInterval": 5,
               "observability": {"logLevel": "DEBUG", "exportMetrics": false}}),
    );
    let wf = from_json(&pretty(&up)).ok();
    let cfg = wf.and_then(|w| w.config);
    assert_eq!(
        cfg,
        Some(WorkflowConfig {
            max_execution_time: 1000,
            checkpoints: true,
            checkpoint_interval: 5,
            observability: Observability {
                log_level: LogLevel::Debug,
                export_metrics: false
            },
            max_steps: DEFAULT_MAX_STEPS,
        })
    );
}

#[test]
fn reader_defaults_for_hand_written_fixture() {
    let text = r##"{
      "id": "hand", "startNode": "a",
      "agents": { "w": { "role": "R", "model": "m" } },
      "nodes": {
        "a": { "nodeType": "STANDARD", "agentId": "w",
               "transitionRules": [ { "type": "success", "targetNode": "j" },
                                    { "type": "failure" } ] },
        "j": { "id": "j", "nodeType": "JOIN", "awaitTargets": ["f"] },
        "p": { "id": "p", "nodeType": "PARALLEL",
               "branches": [ { "id": "b1", "agentId": "w", "rubric": {"id": "x", "criteria": []} },
                             { "id": "b2", "agentId": "w", "rubric": "# Rubric: r2" } ] },
        "e": { "id": "e", "nodeType": "END" }
      }
    }"##;
    let wf = match from_json(text) {
        Ok(w) => w,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(wf.version, "1.0.0");
    assert_eq!(wf.metadata.name, "hand");
    assert_eq!(wf.config, None);
    assert_eq!(wf.state_schema, None);
    assert_eq!(wf.agents["w"].temperature, 0.7);
    assert_eq!(wf.agents["w"].id, "w");
    assert_eq!(
        wf.nodes["a"].transition_rules()[1],
        TransitionRule::Failure { target_node: None }
    );
    match &wf.nodes["j"] {
        Node::Join(j) => {
            assert_eq!(j.merge_strategy, MergeStrategy::CollectAll);
            assert_eq!(j.timeout_ms, 0);
            assert!(j.fail_on_any_error);
            assert!(j.writes.is_empty());
            assert!(j.transition_rules.is_empty());
        }
        other => panic!("not a join: {other:?}"),
    }
    match &wf.nodes["p"] {
        Node::Parallel(p) => {
            assert_eq!(p.branches[0].rubric, None, "object rubric is ignored");
            assert_eq!(p.branches[0].weight, 1.0);
            assert_eq!(p.branches[0].prompt, None);
            let r2 = p.branches[1].rubric.as_ref().map(|r| r.id.as_str());
            assert_eq!(r2, Some("r2"));
        }
        other => panic!("not a parallel: {other:?}"),
    }
    assert_eq!(
        wf.nodes["e"],
        Node::End(EndNode {
            id: s("e"),
            status: ExitStatus::Success
        })
    );
}

#[test]
fn node_rubric_is_reparsed_with_node_id() {
    let mut up = upstream_value();
    set_at(
        &mut up,
        &["nodes", "review", "rubric"],
        json!("#### Clarity\n- points: 5\n"),
    );
    let wf = from_json(&pretty(&up)).ok();
    let rubric = wf.and_then(|w| w.nodes["review"].rubric().cloned());
    let rubric = rubric.unwrap_or_else(|| panic!("rubric missing"));
    assert_eq!(rubric.id, "review");
    assert_eq!(rubric.criteria.len(), 1);
    assert_eq!(rubric.raw_content, "#### Clarity\n- points: 5\n");
}

// ------------------------------------------------------------------------------------------------
// Snapshots: every node kind, every rule kind
// ------------------------------------------------------------------------------------------------

fn rubric(id: &str, raw: &str) -> Rubric {
    parse_rubric(id, raw).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn snapshot_node_kinds() {
    let mut generic_config = IndexMap::new();
    generic_config.insert(s("inputField"), json!("generate-initial-content"));
    generic_config.insert(s("operations"), json!(["trim", "normalize"]));
    generic_config.insert(s("retries"), json!(3));
    let mut input_mapping = IndexMap::new();
    input_mapping.insert(s("draft"), s("draft"));
    let mut output_mapping = IndexMap::new();
    output_mapping.insert(s("tl_dr"), s("tl_dr"));
    let success = |t: &str| TransitionRule::Success {
        target_node: s(t),
        with_feedback: false,
    };

    let nodes = vec![
        (
            "node_standard",
            Node::Standard(StandardNode {
                id: s("write"),
                agent_id: Some(s("writer")),
                prompt: Some(s("Write about {topic}.")),
                rubric: Some(rubric(
                    "write",
                    "# Rubric: quality\n#### Clarity\n- points: 10\n",
                )),
                review_config: Some(ReviewConfig {
                    mode: ReviewMode::Optional,
                    allow_backtrack: true,
                    allow_edit: false,
                }),
                transition_rules: vec![success("done")],
                writes: vec![s("article")],
            }),
        ),
        (
            "node_standard_minimal",
            Node::Standard(StandardNode {
                id: s("empty"),
                agent_id: Some(s("")),
                ..StandardNode::default()
            }),
        ),
        (
            "node_parallel",
            Node::Parallel(ParallelNode {
                id: s("review"),
                branches: vec![
                    Branch {
                        id: s("readability"),
                        agent_id: s("junior1"),
                        prompt: Some(s("Review: {api_docs}")),
                        rubric: None,
                        weight: 0.3,
                        yields: vec![s("readability_feedback")],
                    },
                    Branch {
                        rubric: Some(rubric("accuracy", "#### Correct\n- points: 3")),
                        ..Branch::new("accuracy", "senior")
                    },
                ],
                consensus_config: Some(ConsensusConfig {
                    judge_agent_id: None,
                    strategy: ConsensusStrategy::WeightedVote,
                    threshold: Some(0.5),
                }),
                transition_rules: vec![
                    success("revise"),
                    TransitionRule::Bounded {
                        namespace: Namespace::Consensus,
                        budget: 2,
                        otherwise: s("rejected"),
                        escalation_with_feedback: false,
                        inner: Box::new(TransitionRule::NoConsensus {
                            target_node: s("write-docs"),
                            with_feedback: false,
                        }),
                    },
                ],
            }),
        ),
        (
            "node_parallel_no_rules",
            Node::Parallel(ParallelNode {
                id: s("vote"),
                branches: vec![Branch::new("b", "a")],
                consensus_config: None,
                transition_rules: vec![],
            }),
        ),
        (
            "node_fork",
            Node::Fork(ForkNode {
                id: s("fork-sections"),
                targets: vec![s("write-intro"), s("write-body")],
                target_configs: IndexMap::new(),
                transition_rules: vec![success("join-sections")],
                wait_for_all: true,
            }),
        ),
        (
            "node_join",
            Node::Join(JoinNode {
                id: s("join-sections"),
                await_targets: vec![s("fork-sections")],
                merge_strategy: MergeStrategy::Concatenate,
                writes: vec![s("combined_draft")],
                exports: vec![s("introduction"), s("body")],
                timeout_ms: 60000,
                fail_on_any_error: true,
                transition_rules: vec![
                    success("format-post"),
                    TransitionRule::Bounded {
                        namespace: Namespace::Failure,
                        budget: 0,
                        otherwise: s("failed"),
                        escalation_with_feedback: false,
                        inner: Box::new(TransitionRule::Failure { target_node: None }),
                    },
                ],
            }),
        ),
        (
            "node_generic",
            Node::Generic(GenericNode {
                id: s("transform-data"),
                executor_type: s("data-transformer"),
                config: generic_config,
                transition_rules: vec![success("call-external-api")],
                rubric: Some(rubric("transform-data", "validation-rubric.md")),
            }),
        ),
        (
            "node_action",
            Node::Action(ActionNode {
                id: s("notify"),
                actions: vec![
                    Action::Send {
                        handler_id: s("slack"),
                        payload: IndexMap::new(),
                        raw_payload: false,
                    },
                    Action::Send {
                        handler_id: s("tool"),
                        payload: [(s("nested"), json!({"k": [1, 2.5, null]}))]
                            .into_iter()
                            .collect(),
                        raw_payload: true,
                    },
                    Action::Execute {
                        command_id: s("git-commit"),
                    },
                ],
                transition_rules: vec![success("done")],
            }),
        ),
        (
            "node_sub_workflow",
            Node::SubWorkflow(SubWorkflowNode {
                id: s("delegate_summary"),
                workflow_id: s("sub-summarizer"),
                target_version: Some(s("2.0.0")),
                input_mapping,
                output_mapping,
                transition_rules: vec![
                    success("publish"),
                    TransitionRule::Failure {
                        target_node: Some(s("publish")),
                    },
                ],
            }),
        ),
        (
            "node_end",
            Node::End(EndNode {
                id: s("cancelled"),
                status: ExitStatus::Cancel,
            }),
        ),
    ];
    for (name, node) in nodes {
        insta::assert_snapshot!(name, pretty(&node_to_value(&node)));
    }
}

#[test]
fn snapshot_rule_kinds() {
    let rules = vec![
        (
            "rule_success",
            TransitionRule::Success {
                target_node: s("next"),
                with_feedback: false,
            },
        ),
        (
            "rule_success_with_feedback",
            TransitionRule::Success {
                target_node: s("next"),
                with_feedback: true,
            },
        ),
        (
            "rule_failure",
            TransitionRule::Failure {
                target_node: Some(s("failed")),
            },
        ),
        (
            "rule_failure_self_retry",
            TransitionRule::Failure { target_node: None },
        ),
        (
            "rule_no_consensus",
            TransitionRule::NoConsensus {
                target_node: s("rework"),
                with_feedback: true,
            },
        ),
        (
            "rule_approval",
            TransitionRule::Approval {
                expected: false,
                target_node: s("draft"),
                with_feedback: true,
            },
        ),
        (
            "rule_score",
            TransitionRule::Score {
                conditions: vec![
                    ScoreCondition {
                        operator: ComparisonOperator::Gte,
                        value: Some(80.0),
                        range: None,
                        target_node: s("approve"),
                    },
                    ScoreCondition {
                        operator: ComparisonOperator::Range,
                        value: Some(0.0),
                        range: Some(ScoreRange {
                            start: 50.0,
                            end: 79.0,
                        }),
                        target_node: s("improve"),
                    },
                ],
                with_feedback: true,
            },
        ),
        (
            "rule_condition_eq",
            TransitionRule::Condition {
                variable: s("count"),
                predicate: ConditionPredicate::Eq(canonical_number(5.0)),
                target_node: s("done"),
                with_feedback: false,
            },
        ),
        (
            "rule_condition_neq",
            TransitionRule::Condition {
                variable: s("status"),
                predicate: ConditionPredicate::Neq(s("ok")),
                target_node: s("fix"),
                with_feedback: false,
            },
        ),
        (
            "rule_condition_gt",
            TransitionRule::Condition {
                variable: s("attempts"),
                predicate: ConditionPredicate::Gt(3.0),
                target_node: s("give-up"),
                with_feedback: false,
            },
        ),
        (
            "rule_condition_gte",
            TransitionRule::Condition {
                variable: s("confidence"),
                predicate: ConditionPredicate::Gte(0.9),
                target_node: s("done"),
                with_feedback: true,
            },
        ),
        (
            "rule_always",
            TransitionRule::Always {
                target_node: s("fallback"),
                with_feedback: false,
            },
        ),
        (
            "rule_bounded_escalation_with_feedback",
            TransitionRule::Bounded {
                namespace: Namespace::Score,
                budget: 3,
                otherwise: s("needs-work"),
                escalation_with_feedback: true,
                inner: Box::new(TransitionRule::Score {
                    conditions: vec![ScoreCondition {
                        operator: ComparisonOperator::Lt,
                        value: Some(70.0),
                        range: None,
                        target_node: s("write"),
                    }],
                    with_feedback: false,
                }),
            },
        ),
        (
            "rule_bounded_failure_retry",
            TransitionRule::Bounded {
                namespace: Namespace::Failure,
                budget: 2,
                otherwise: s("failed"),
                escalation_with_feedback: false,
                inner: Box::new(TransitionRule::Failure { target_node: None }),
            },
        ),
        ("rule_rubric_fail", TransitionRule::RubricFail),
    ];
    for (name, rule) in rules {
        insta::assert_snapshot!(name, pretty(&rule_to_value(&rule)));
    }
}

#[test]
fn every_snapshotted_node_and_rule_round_trips() {
    // Condition operand given as a JSON number / bool for EQ is canonicalized on read.
    let mut up = upstream_value();
    set_at(
        &mut up,
        &["nodes", "draft", "transitionRules", "0", "expected"],
        json!(5.0),
    );
    let wf = from_json(&pretty(&up)).ok();
    let rule = wf.map(|w| w.nodes["draft"].transition_rules()[0].clone());
    assert_eq!(
        rule,
        Some(TransitionRule::Condition {
            variable: s("status"),
            predicate: ConditionPredicate::Eq(s("5")),
            target_node: s("review"),
            with_feedback: false,
        })
    );
}

// ------------------------------------------------------------------------------------------------
// Errors
// ------------------------------------------------------------------------------------------------

fn assert_points_at(text: &str, e: &JsonError, expected: &str) {
    let span = e.span.unwrap_or_else(|| panic!("no span: {e}"));
    assert_eq!(&text[span.start..span.end], expected, "{e}");
}

#[test]
fn error_unknown_node_type() {
    let mut up = upstream_value();
    set_at(&mut up, &["nodes", "review", "nodeType"], json!("LOOP"));
    let text = pretty(&up);
    let e = from_json(&text).err().unwrap_or_else(|| panic!("no error"));
    assert_eq!(e.kind, JsonErrorKind::UnknownNodeType);
    assert_eq!(e.path, "nodes.review.nodeType");
    assert!(e.message.contains("'LOOP'"), "{}", e.message);
    assert!(e.to_string().starts_with("nodes.review.nodeType: "));
    assert_points_at(&text, &e, "\"LOOP\"");
    assert!(e.line.is_some() && e.column.is_some());
}

#[test]
fn error_unknown_rule_type() {
    let mut up = upstream_value();
    set_at(
        &mut up,
        &["nodes", "review", "transitionRules", "1", "type"],
        json!("maybe"),
    );
    let text = pretty(&up);
    let e = from_json(&text).err().unwrap_or_else(|| panic!("no error"));
    assert_eq!(e.kind, JsonErrorKind::UnknownRuleType);
    assert_eq!(e.path, "nodes.review.transitionRules[1].type");
    assert_points_at(&text, &e, "\"maybe\"");
}

#[test]
fn error_unknown_operators_and_action_type() {
    let mut up = upstream_value();
    set_at(
        &mut up,
        &["nodes", "draft", "transitionRules", "0", "operator"],
        json!("LIKE"),
    );
    let e = read_err(&up);
    assert_eq!(e.kind, JsonErrorKind::UnknownOperator);
    assert_eq!(e.path, "nodes.draft.transitionRules[0].operator");

    let mut up = upstream_value();
    set_at(
        &mut up,
        &[
            "nodes",
            "review",
            "transitionRules",
            "0",
            "conditions",
            "0",
            "operator",
        ],
        json!("ABOUT"),
    );
    let e = read_err(&up);
    assert_eq!(e.kind, JsonErrorKind::UnknownOperator);
    assert_eq!(
        e.path,
        "nodes.review.transitionRules[0].conditions[0].operator"
    );

    let mut up = upstream_value();
    set_at(
        &mut up,
        &["nodes", "publish", "actions", "1", "type"],
        json!("email"),
    );
    let e = read_err(&up);
    assert_eq!(e.kind, JsonErrorKind::UnknownActionType);
    assert_eq!(e.path, "nodes.publish.actions[1].type");
}

#[test]
fn error_unknown_enum_values() {
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["nodes", "done", "status"], "nodes.done.status"),
        (
            vec!["nodes", "review", "reviewConfig", "mode"],
            "nodes.review.reviewConfig.mode",
        ),
        (
            vec!["nodes", "draft", "transitionRules", "1", "namespace"],
            "nodes.draft.transitionRules[1].namespace",
        ),
        (
            vec!["stateSchema", "variables", "0", "type"],
            "stateSchema.variables[0].type",
        ),
    ];
    for (path, expected) in cases {
        let mut up = upstream_value();
        set_at(&mut up, &path, json!("BOGUS"));
        let e = read_err(&up);
        assert_eq!(e.kind, JsonErrorKind::UnknownEnumValue, "{e}");
        assert_eq!(e.path, expected);
    }
}

#[test]
fn error_wrong_types_name_the_path() {
    let cases: Vec<(Vec<&str>, Value, &str)> = vec![
        (
            vec!["nodes", "draft", "transitionRules", "2", "budget"],
            json!("two"),
            "nodes.draft.transitionRules[2].budget",
        ),
        (
            vec!["agents", "reviewer", "temperature"],
            json!("hot"),
            "agents.reviewer.temperature",
        ),
        (
            vec!["nodes", "draft", "writes"],
            json!("article"),
            "nodes.draft.writes",
        ),
        (
            vec!["nodes", "draft", "writes", "1"],
            json!(3),
            "nodes.draft.writes[1]",
        ),
        (vec!["nodes"], json!([]), "nodes"),
        (
            vec!["nodes", "review", "transitionRules", "1", "expected"],
            json!("yes"),
            "nodes.review.transitionRules[1].expected",
        ),
    ];
    for (path, value, expected) in cases {
        let mut up = upstream_value();
        set_at(&mut up, &path, value);
        let e = read_err(&up);
        assert_eq!(e.kind, JsonErrorKind::WrongType, "{e}");
        assert_eq!(e.path, expected);
        assert!(e.message.starts_with("expected "), "{}", e.message);
    }
}

#[test]
fn error_missing_field_points_at_parent() {
    let mut up = upstream_value();
    remove_key(&mut up, &["agents", "writer", "role"]);
    let text = pretty(&up);
    let e = from_json(&text).err().unwrap_or_else(|| panic!("no error"));
    assert_eq!(e.kind, JsonErrorKind::MissingField);
    assert_eq!(e.path, "agents.writer.role");
    let span = e.span.unwrap_or_default();
    assert!(text[span.start..].starts_with('{'));
}

#[test]
fn error_id_mismatch_and_format_version() {
    let mut up = upstream_value();
    set_at(&mut up, &["nodes", "done", "id"], json!("finished"));
    assert_eq!(read_err(&up).kind, JsonErrorKind::IdMismatch);

    let mut up = upstream_value();
    if let Some(o) = up.as_object_mut() {
        o.insert(s("formatVersion"), json!(2));
    }
    assert_eq!(read_err(&up).kind, JsonErrorKind::UnsupportedFormatVersion);
}

#[test]
fn error_syntax_has_byte_offset() {
    let text = "{\n  \"id\": \"x\",\n  \"nodes\": { ]\n}";
    let e = from_json(text).err().unwrap_or_else(|| panic!("no error"));
    assert_eq!(e.kind, JsonErrorKind::Syntax);
    assert_eq!(e.line, Some(3));
    let off = e.offset().unwrap_or(0);
    assert_eq!(&text[off..off + 1], "]");
}

#[test]
fn error_invalid_rubric_in_json() {
    let mut up = upstream_value();
    set_at(
        &mut up,
        &["nodes", "review", "rubric"],
        json!("## Metadata\n- pass_threshold: 150\n"),
    );
    let e = read_err(&up);
    assert!(matches!(e.kind, JsonErrorKind::InvalidRubric(_)), "{e}");
    assert_eq!(e.path, "nodes.review.rubric");
}

#[test]
fn source_map_spans_nodes_and_rules() {
    let (_, sm) = match from_json_with_spans(MINI_REVIEW_UPSTREAM) {
        Ok(x) => x,
        Err(e) => panic!("{e}"),
    };
    let key = sm.key_span("nodes.review").unwrap_or_default();
    assert_eq!(&MINI_REVIEW_UPSTREAM[key.start..key.end], "\"review\"");
    let rule = sm
        .value_span("nodes.review.transitionRules[2].inner.targetNode")
        .unwrap_or_default();
    assert_eq!(&MINI_REVIEW_UPSTREAM[rule.start..rule.end], "\"draft\"");
    let budget = sm
        .value_span("nodes.review.transitionRules[2].budget")
        .unwrap_or_default();
    assert_eq!(&MINI_REVIEW_UPSTREAM[budget.start..budget.end], "3");
}

#[test]
fn never_panics_on_garbage_json() {
    for text in [
        "",
        "null",
        "[]",
        "42",
        "{",
        "{\"id\": 3}",
        "\u{feff}{}",
        "{\"id\":\"x\",\"startNode\":\"a\",\"nodes\":{\"a\":null}}",
        "{\"id\":\"x\",\"startNode\":\"a\",\"nodes\":{\"a\":{\"nodeType\":\"STANDARD\",\"transitionRules\":[{\"type\":\"bounded\"}]}}}",
    ] {
        assert!(from_json(text).is_err(), "{text}");
    }
}

// ------------------------------------------------------------------------------------------------
// Round trip (proptest)
// ------------------------------------------------------------------------------------------------

fn ident() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_-]{0,6}"
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,12}",
        "\\PC{0,8}",
        Just(s("line\n\"quoted\"\t{var}\\")),
    ]
}

fn num() -> impl Strategy<Value = f64> {
    prop_oneof![
        -1.0e6..1.0e6f64,
        any::<f64>().prop_filter("finite", |f| f.is_finite()),
        Just(0.0),
        Just(-0.0),
        Just(0.1),
        Just(1e-7),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        num().prop_map(Value::from),
        text().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((ident(), inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn value_map() -> impl Strategy<Value = IndexMap<String, Value>> {
    prop::collection::vec((ident(), json_value()), 0..3).prop_map(|kv| kv.into_iter().collect())
}

fn leaf_rule() -> impl Strategy<Value = TransitionRule> {
    let score_cond = (
        prop::sample::select(ComparisonOperator::ALL),
        prop::option::of(num()),
        prop::option::of((num(), num()).prop_map(|(a, b)| ScoreRange { start: a, end: b })),
        ident(),
    )
        .prop_map(|(operator, value, range, target_node)| ScoreCondition {
            operator,
            value,
            range,
            target_node,
        });
    let predicate = prop_oneof![
        text().prop_map(ConditionPredicate::Eq),
        num().prop_map(|n| ConditionPredicate::Neq(canonical_number(n))),
        num().prop_map(ConditionPredicate::Gt),
        num().prop_map(ConditionPredicate::Gte),
        num().prop_map(ConditionPredicate::Lt),
        num().prop_map(ConditionPredicate::Lte),
    ];
    prop_oneof![
        (ident(), any::<bool>()).prop_map(|(t, f)| TransitionRule::Success {
            target_node: t,
            with_feedback: f
        }),
        prop::option::of(ident()).prop_map(|t| TransitionRule::Failure { target_node: t }),
        (ident(), any::<bool>()).prop_map(|(t, f)| TransitionRule::NoConsensus {
            target_node: t,
            with_feedback: f
        }),
        (any::<bool>(), ident(), any::<bool>()).prop_map(|(e, t, f)| TransitionRule::Approval {
            expected: e,
            target_node: t,
            with_feedback: f
        }),
        (prop::collection::vec(score_cond, 0..3), any::<bool>()).prop_map(|(c, f)| {
            TransitionRule::Score {
                conditions: c,
                with_feedback: f,
            }
        }),
        (ident(), predicate, ident(), any::<bool>()).prop_map(|(v, p, t, f)| {
            TransitionRule::Condition {
                variable: v,
                predicate: p,
                target_node: t,
                with_feedback: f,
            }
        }),
        (ident(), any::<bool>()).prop_map(|(t, f)| TransitionRule::Always {
            target_node: t,
            with_feedback: f
        }),
        Just(TransitionRule::RubricFail),
    ]
}

fn rule() -> impl Strategy<Value = TransitionRule> {
    leaf_rule().prop_recursive(2, 4, 1, |inner| {
        (
            prop::sample::select(Namespace::ALL),
            -3i64..10,
            ident(),
            any::<bool>(),
            inner,
        )
            .prop_map(|(namespace, budget, otherwise, esc, inner)| {
                TransitionRule::Bounded {
                    namespace,
                    budget,
                    otherwise,
                    escalation_with_feedback: esc,
                    inner: Box::new(inner),
                }
            })
    })
}

fn rules() -> impl Strategy<Value = Vec<TransitionRule>> {
    prop::collection::vec(rule(), 0..4)
}

fn opt_rubric() -> impl Strategy<Value = Option<String>> {
    prop::option::of(prop_oneof![
        text(),
        Just(s(
            "# Rubric: q\n### Cat (weight: 40)\n#### A b\n- points: 3\n- evaluation: e"
        )),
    ])
}

fn mk_rubric(id: &str, raw: Option<String>) -> Option<Rubric> {
    raw.and_then(|r| parse_rubric(id, &r).ok())
}

fn strings() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(ident(), 0..3)
}

fn node() -> impl Strategy<Value = Node> {
    let standard = (
        ident(),
        prop::option::of(ident()),
        prop::option::of(text()),
        opt_rubric(),
        prop::option::of((
            prop::sample::select(ReviewMode::ALL),
            any::<bool>(),
            any::<bool>(),
        )),
        rules(),
        strings(),
    )
        .prop_map(|(id, agent_id, prompt, rubric, review, rules, writes)| {
            Node::Standard(StandardNode {
                rubric: mk_rubric(&id, rubric),
                id,
                agent_id,
                prompt,
                review_config: review.map(|(mode, b, e)| ReviewConfig {
                    mode,
                    allow_backtrack: b,
                    allow_edit: e,
                }),
                transition_rules: rules,
                writes,
            })
        });
    let branch = (
        ident(),
        ident(),
        prop::option::of(text()),
        opt_rubric(),
        num(),
        strings(),
    )
        .prop_map(|(id, agent_id, prompt, rubric, weight, yields)| Branch {
            rubric: mk_rubric(&id, rubric),
            id,
            agent_id,
            prompt,
            weight,
            yields,
        });
    let parallel = (
        ident(),
        prop::collection::vec(branch, 0..3),
        prop::option::of((
            prop::option::of(ident()),
            prop::sample::select(ConsensusStrategy::ALL),
            prop::option::of(num()),
        )),
        rules(),
    )
        .prop_map(|(id, branches, cc, rules)| {
            Node::Parallel(ParallelNode {
                id,
                branches,
                consensus_config: cc.map(|(j, st, th)| ConsensusConfig {
                    judge_agent_id: j,
                    strategy: st,
                    threshold: th,
                }),
                transition_rules: rules,
            })
        });
    let fork = (ident(), strings(), value_map(), rules(), any::<bool>()).prop_map(
        |(id, targets, tc, rules, w)| {
            Node::Fork(ForkNode {
                id,
                targets,
                target_configs: tc,
                transition_rules: rules,
                wait_for_all: w,
            })
        },
    );
    let join = (
        ident(),
        strings(),
        prop::sample::select(MergeStrategy::ALL),
        strings(),
        strings(),
        any::<i64>(),
        any::<bool>(),
        rules(),
    )
        .prop_map(|(id, aw, ms, writes, exports, t, f, rules)| {
            Node::Join(JoinNode {
                id,
                await_targets: aw,
                merge_strategy: ms,
                writes,
                exports,
                timeout_ms: t,
                fail_on_any_error: f,
                transition_rules: rules,
            })
        });
    let generic = (ident(), ident(), value_map(), rules(), opt_rubric()).prop_map(
        |(id, et, config, rules, rubric)| {
            Node::Generic(GenericNode {
                rubric: mk_rubric(&id, rubric),
                id,
                executor_type: et,
                config,
                transition_rules: rules,
            })
        },
    );
    let action = (
        ident(),
        prop::collection::vec(
            prop_oneof![
                (ident(), value_map(), any::<bool>()).prop_map(|(h, p, r)| Action::Send {
                    handler_id: h,
                    payload: p,
                    raw_payload: r
                }),
                ident().prop_map(|c| Action::Execute { command_id: c }),
            ],
            0..3,
        ),
        rules(),
    )
        .prop_map(|(id, actions, rules)| {
            Node::Action(ActionNode {
                id,
                actions,
                transition_rules: rules,
            })
        });
    let mapping = || {
        prop::collection::vec((ident(), ident()), 0..3)
            .prop_map(|kv| kv.into_iter().collect::<IndexMap<String, String>>())
    };
    let sub = (
        ident(),
        ident(),
        prop::option::of(text()),
        mapping(),
        mapping(),
        rules(),
    )
        .prop_map(|(id, wf, tv, im, om, rules)| {
            Node::SubWorkflow(SubWorkflowNode {
                id,
                workflow_id: wf,
                target_version: tv,
                input_mapping: im,
                output_mapping: om,
                transition_rules: rules,
            })
        });
    let end = (ident(), prop::sample::select(ExitStatus::ALL))
        .prop_map(|(id, status)| Node::End(EndNode { id, status }));
    prop_oneof![standard, parallel, fork, join, generic, action, sub, end]
}

fn agent() -> impl Strategy<Value = AgentConfig> {
    (
        (
            ident(),
            text(),
            text(),
            num(),
            prop::option::of(any::<i64>()),
        ),
        (
            strings(),
            prop::option::of(text()),
            prop::option::of(num()),
            prop::option::of(num()),
            prop::option::of(num()),
            prop::option::of(any::<i64>()),
            prop::option::of(any::<i64>()),
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (id, role, model, temperature, max_tokens),
                (tools, ins, tp, fp, pp, to, mtc, mc),
            )| {
                AgentConfig {
                    id,
                    role,
                    model,
                    temperature,
                    max_tokens,
                    tools,
                    instructions: ins,
                    top_p: tp,
                    frequency_penalty: fp,
                    presence_penalty: pp,
                    timeout: to,
                    max_tool_calls: mtc,
                    maintain_context: mc,
                }
            },
        )
}

fn workflow() -> impl Strategy<Value = Workflow> {
    let metadata = (
        text(),
        prop::option::of(text()),
        prop::option::of(text()),
        prop::option::of(text()),
        strings(),
    )
        .prop_map(|(name, description, author, created, tags)| Metadata {
            name,
            description,
            author,
            created,
            tags,
        });
    let config = prop::option::of(
        (
            any::<i64>(),
            any::<bool>(),
            any::<i64>(),
            prop::sample::select(LogLevel::ALL),
            any::<bool>(),
            any::<i64>(),
        )
            .prop_map(|(met, cp, ci, ll, em, ms)| WorkflowConfig {
                max_execution_time: met,
                checkpoints: cp,
                checkpoint_interval: ci,
                observability: Observability {
                    log_level: ll,
                    export_metrics: em,
                },
                max_steps: ms,
            }),
    );
    let schema = prop::option::of(
        prop::collection::vec(
            (
                ident(),
                prop::sample::select(VarType::ALL),
                any::<bool>(),
                prop::option::of(text()),
            )
                .prop_map(|(name, var_type, is_input, description)| StateVariable {
                    name,
                    var_type,
                    is_input,
                    description,
                }),
            0..4,
        )
        .prop_map(|variables| StateSchema { variables }),
    );
    (
        ident(),
        text(),
        metadata,
        prop::collection::vec(agent(), 0..3),
        prop::collection::vec(node(), 0..6),
        ident(),
        config,
        schema,
    )
        .prop_map(
            |(id, version, metadata, agents, nodes, start_node, config, state_schema)| Workflow {
                id,
                version,
                metadata,
                agents: agents.into_iter().map(|a| (a.id.clone(), a)).collect(),
                nodes: nodes.into_iter().map(|n| (n.id().to_string(), n)).collect(),
                start_node,
                config,
                state_schema,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn round_trip_is_byte_identical(wf in workflow()) {
        let first = to_json(&wf);
        let read = from_json(&first);
        prop_assert!(read.is_ok(), "{:?}\n{}", read.err(), first);
        let read = read.unwrap_or_else(|_| wf.clone());
        let second = to_json(&read);
        prop_assert_eq!(&first, &second);
        // Also through the serde impls.
        let via_serde: Result<Workflow, _> = serde_json::from_str(&first);
        prop_assert!(via_serde.is_ok());
        let _ = ExecGraph::build(&read);
    }

    #[test]
    fn rubric_parser_never_panics(raw in "(\\PC|\n|#|-|:|\\(|\\)){0,200}") {
        let _ = parse_rubric("node.md", &raw);
    }

    #[test]
    fn reader_never_panics_on_mutated_json(pos in 0usize..3000, byte in any::<u8>()) {
        let mut bytes = MINI_REVIEW_UPSTREAM.as_bytes().to_vec();
        let p = pos % bytes.len();
        bytes[p] = byte;
        if let Ok(text) = String::from_utf8(bytes) {
            let _ = from_json(&text);
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Rubric parser
// ------------------------------------------------------------------------------------------------

#[test]
fn rubric_content_quality() {
    let r =
        parse_rubric("content-quality.md", CONTENT_QUALITY_MD).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.id, "content-quality");
    assert_eq!(r.name, "Content Quality");
    assert_eq!(r.version, "1.0");
    assert_eq!(r.rubric_type, RubricType::Documentation);
    assert_eq!(r.pass_threshold, 70.0);
    assert_eq!(r.criteria.len(), 7);
    assert_eq!(r.raw_content, CONTENT_QUALITY_MD);
    let ids: Vec<&str> = r.criteria.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "structure_introduction",
            "structure_logical_flow",
            "structure_conclusion",
            "quality_accuracy",
            "quality_depth",
            "polish_grammar",
            "polish_tone"
        ]
    );
    let weights: Vec<f64> = r.criteria.iter().map(|c| c.weight).collect();
    let expected = [3.0, 3.0, 3.0, 8.0, 8.0, 4.5, 4.5];
    for (w, e) in weights.iter().zip(expected) {
        assert!((w - e).abs() < 1e-9, "{weights:?}");
    }
    assert_eq!(r.criteria[3].name, "Accuracy");
    assert_eq!(
        r.criteria[3].description,
        "Facts are correct and claims are supported"
    );
    assert!(r.criteria.iter().all(|c| c.min_score == 0.0 && !c.required));
}

#[test]
fn rubric_defaults() {
    let r = parse_rubric("check.md", "Just score it well.").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.id, "check");
    assert_eq!(r.name, "check");
    assert_eq!(r.pass_threshold, 70.0);
    assert_eq!(r.rubric_type, RubricType::Standard);
    assert_eq!(r.criteria.len(), 1);
    assert_eq!(r.criteria[0].id, "default");
    assert_eq!(r.criteria[0].name, "Overall Quality");
    assert_eq!(r.criteria[0].weight, 1.0);

    // Category without weight suffix → 1.0; metadata types.
    let r = parse_rubric(
        "n",
        "## Metadata\n- type: code-quality\n- pass_threshold: 85.5\n## Body\n- type: security\n### Misc\n#### Thing One\n- points: 4\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        r.rubric_type,
        RubricType::CodeQuality,
        "type outside metadata is ignored"
    );
    assert_eq!(r.pass_threshold, 85.5);
    assert_eq!(r.criteria[0].id, "misc_thing_one");
    assert_eq!(r.criteria[0].weight, 4.0);
    for (t, e) in [
        ("pr_review", RubricType::CodeQuality),
        ("security_review", RubricType::Security),
        ("performance", RubricType::Performance),
        ("docs", RubricType::Documentation),
        ("custom", RubricType::Custom),
        ("whatever", RubricType::Standard),
    ] {
        assert_eq!(rubric_type_from_str(t), e);
    }
}

#[test]
fn rubric_garbage_markdown_does_not_fail() {
    for raw in [
        "",
        "####",
        "#### \n- points:\n",
        "### (weight: x)\n#### a\n- evaluation",
        "# Rubric:\n## Metadata\n- name\n- : :\n",
        "\u{0}\u{1}#### é\u{301}\n",
        "### Cat (weight: 999999999999999999999)\n#### A\n",
    ] {
        let r = parse_rubric("fallback", raw);
        assert!(r.is_ok(), "{raw:?}: {r:?}");
    }
}

#[test]
fn rubric_pass_threshold_errors() {
    let e = parse_rubric("n", "# Rubric: r\n## Metadata\n- pass_threshold: 150\n");
    match e {
        Err(RubricError::PassThresholdOutOfRange {
            value,
            line,
            offset,
        }) => {
            assert_eq!(value, "150");
            assert_eq!(line, 3);
            assert_eq!(offset, "# Rubric: r\n## Metadata\n- pass_threshold: ".len());
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        parse_rubric("n", "## Metadata\n- pass_threshold: -1"),
        Err(RubricError::PassThresholdOutOfRange { .. })
    ));
    assert!(matches!(
        parse_rubric("n", "## Metadata\n- pass_threshold: seventy"),
        Err(RubricError::InvalidNumber { .. })
    ));
    assert!(matches!(
        parse_rubric("n", "## Metadata\n- pass_threshold: NaN"),
        Err(RubricError::InvalidNumber { .. })
    ));
    assert!(matches!(
        parse_rubric("n", "#### A\n- points: many"),
        Err(RubricError::InvalidNumber { .. })
    ));
    // Boundaries are valid.
    assert!(parse_rubric("n", "## Metadata\n- pass_threshold: 0").is_ok());
    assert!(parse_rubric("n", "## Metadata\n- pass_threshold: 100.0").is_ok());
}

// ------------------------------------------------------------------------------------------------
// Numbers, descriptions, ids
// ------------------------------------------------------------------------------------------------

#[test]
fn canonical_numbers() {
    for (n, e) in [
        (5.0, "5"),
        (0.90, "0.9"),
        (100.0, "100"),
        (1e-7, "0.0000001"),
        (-0.0, "0"),
        (-2.50, "-2.5"),
        (1e21, "1000000000000000000000"),
        (0.1 + 0.2, "0.30000000000000004"),
    ] {
        assert_eq!(canonical_number(n), e, "{n}");
    }
    assert_eq!(canonical_int(5), "5");
}

#[test]
fn java_doubles() {
    for (n, e) in [
        (70.0, "70.0"),
        (0.5, "0.5"),
        (1e-7, "1.0E-7"),
        (1.234e10, "1.234E10"),
        (1e7, "1.0E7"),
        (9999999.0, "9999999.0"),
        (0.001, "0.001"),
        (0.0, "0.0"),
    ] {
        assert_eq!(java_double_to_string(n), e, "{n}");
    }
}

#[test]
fn predicate_describe() {
    assert_eq!(ConditionPredicate::Eq(s("x")).describe(), "== \"x\"");
    assert_eq!(ConditionPredicate::Neq(s("x")).describe(), "!= \"x\"");
    assert_eq!(ConditionPredicate::Gt(0.9).describe(), "> 0.9");
    assert_eq!(ConditionPredicate::Gte(80.0).describe(), ">= 80");
    assert_eq!(ConditionPredicate::Lt(5.0).describe(), "< 5");
    assert_eq!(ConditionPredicate::Lte(5.0).describe(), "<= 5");
}

#[test]
fn workflow_ids() {
    assert_eq!(
        workflow_id_from_name("My Test Workflow!!!"),
        "my_test_workflow"
    );
    assert_eq!(
        workflow_id_from_name("GeorgiaDiscovery"),
        "georgiadiscovery"
    );
    assert_eq!(workflow_id_from_name("Mini Review"), "mini_review");
    assert_eq!(workflow_id_from_name("a-b_c d.e"), "a-b_c_de");
    assert_eq!(workflow_id_from_name("Ünïcode Flow"), "ncode_flow");
    assert_eq!(workflow_id_from_name(""), "");
}

// ------------------------------------------------------------------------------------------------
// Rule helpers and the executable graph
// ------------------------------------------------------------------------------------------------

#[test]
fn rule_helpers() {
    let wf = mini_review();
    let draft = &wf.nodes["draft"];
    assert_eq!(draft.kind_name(), "STANDARD");
    let rules = draft.transition_rules();
    assert_eq!(rules[1].targets(), ["draft", "failed"]);
    assert_eq!(rules[2].targets(), ["failed"]);
    assert_eq!(rules[1].trigger(), RuleKind::Always);
    assert_eq!(rules[2].trigger(), RuleKind::Failure);
    assert_eq!(rules[2].kind(), RuleKind::Bounded);
    assert_eq!(
        rules[0].required_routing_vars(),
        ["status", "recommendation"]
    );
    assert!(rules[2].required_routing_vars().is_empty());
    let review = wf.nodes["review"].transition_rules();
    assert_eq!(
        review[0].required_routing_vars(),
        ["score", "recommendation"]
    );
    assert_eq!(
        review[2].required_routing_vars(),
        ["approved", "recommendation"]
    );
    assert!(review[2].with_feedback());
    assert_eq!(review[2].bounded(), Some((Namespace::Approval, 3)));
    assert_eq!(wf.nodes["publish"].successor_ids(), ["done"]);
}

#[test]
fn exec_graph_resolves_targets() {
    let wf = mini_review();
    let g = ExecGraph::build(&wf);
    assert!(g.unresolved().is_empty());
    let draft = g.index_of("draft").unwrap_or_else(|| panic!("draft"));
    let review = g.index_of("review").unwrap_or_else(|| panic!("review"));
    let failed = g.index_of("failed").unwrap_or_else(|| panic!("failed"));
    assert_eq!(g.start(), Some(draft));
    assert_eq!(g.payload(review).map(Node::id), Some("review"));
    let rules = g.rules(draft);
    assert_eq!(rules.len(), 3);
    assert_eq!(
        rules[0],
        CompiledRule::Condition {
            variable: s("status"),
            predicate: ConditionPredicate::Eq(s("done")),
            target: Target::Node(review),
            with_feedback: false,
        }
    );
    match &rules[2] {
        CompiledRule::Bounded {
            otherwise, inner, ..
        } => {
            assert_eq!(*otherwise, Target::Node(failed));
            assert_eq!(
                **inner,
                CompiledRule::Failure {
                    target: Target::SelfRetry
                }
            );
            assert_eq!(Target::SelfRetry.resolve(draft), Some(draft));
        }
        other => panic!("{other:?}"),
    }
    let gn = g.node(draft).unwrap_or_else(|| panic!("node"));
    assert_eq!(gn.routing_vars, ["status", "score", "approved"]);
    let gn = g.node(review).unwrap_or_else(|| panic!("node"));
    assert_eq!(gn.routing_vars, ["score", "approved"]);

    let labels: Vec<(String, String)> = g
        .successors(review)
        .into_iter()
        .map(|(t, e)| {
            (
                g.node(t).map(|n| n.id.clone()).unwrap_or_default(),
                e.label.clone(),
            )
        })
        .collect();
    assert_eq!(
        labels,
        [
            (s("failed"), s("score LT 50.0")),
            (s("publish"), s("on approval")),
            (s("draft"), s("on rejection revise ≤3")),
            (s("failed"), s("budget exhausted")),
        ]
    );
    let reach = g.reachable_from_start();
    assert_eq!(reach.len(), 5);
}

#[test]
fn exec_graph_indices_are_dense_declaration_positions() {
    let wf = mini_review();
    let g = ExecGraph::build(&wf);
    for (i, (id, ix)) in g.node_indices().iter().enumerate() {
        assert_eq!(ix.index(), i);
        assert_eq!(g.node_at(i).map(|n| n.id.as_str()), Some(id.as_str()));
        assert_eq!(g.node_at(i).map(|n| n.workflow_index), Some(i));
    }
    assert!(g.node_at(wf.nodes.len()).is_none());
    let draft = g.index_of("draft").unwrap_or_else(|| panic!("draft"));
    let rules = g.rules(draft);
    assert_eq!(rules[2].trigger_rule().kind(), RuleKind::Failure);
    assert_eq!(rules[0].trigger_rule(), &rules[0]);
    let review = g.index_of("review").unwrap_or_else(|| panic!("review"));
    match g.rules(review)[0].trigger_rule() {
        CompiledRule::Score { conditions, .. } => assert_eq!(conditions[0].describe(), "LT 50.0"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn exec_graph_missing_target_does_not_panic() {
    let mut wf = mini_review();
    wf.start_node = s("nowhere");
    if let Some(rules) = wf
        .nodes
        .get_mut("publish")
        .and_then(Node::transition_rules_mut)
    {
        rules.push(TransitionRule::Failure {
            target_node: Some(s("ghost")),
        });
    }
    let g = ExecGraph::build(&wf);
    assert_eq!(g.start(), None);
    assert_eq!(g.unresolved().len(), 1);
    assert_eq!(g.unresolved()[0].target, "ghost");
    let publish = g.index_of("publish").unwrap_or_else(|| panic!("publish"));
    assert_eq!(
        g.rules(publish)[1],
        CompiledRule::Failure {
            target: Target::Unresolved(s("ghost"))
        }
    );
    assert!(g.reachable_from_start().is_empty());
    let topo = topology_json(&g);
    let last = topo["edges"]
        .as_array()
        .and_then(|a| a.last())
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(last["to"], json!("ghost"));
    assert_eq!(last["resolved"], json!(false));
}

#[test]
fn exec_graph_fork_edges() {
    let mut nodes = IndexMap::new();
    for n in [
        Node::Fork(ForkNode {
            id: s("f"),
            targets: vec![s("a"), s("b")],
            transition_rules: vec![TransitionRule::Success {
                target_node: s("j"),
                with_feedback: false,
            }],
            ..ForkNode::default()
        }),
        Node::Standard(StandardNode {
            id: s("a"),
            ..StandardNode::default()
        }),
        Node::Standard(StandardNode {
            id: s("b"),
            ..StandardNode::default()
        }),
        Node::Join(JoinNode {
            id: s("j"),
            await_targets: vec![s("f")],
            writes: vec![s("out")],
            ..JoinNode::default()
        }),
    ] {
        nodes.insert(n.id().to_string(), n);
    }
    let wf = Workflow {
        id: s("fj"),
        version: s("1.0.0"),
        metadata: Metadata::default(),
        agents: IndexMap::new(),
        nodes,
        start_node: s("f"),
        config: None,
        state_schema: None,
    };
    let g = ExecGraph::build(&wf);
    let f = g.index_of("f").unwrap_or_else(|| panic!("f"));
    let j = g.index_of("j").unwrap_or_else(|| panic!("j"));
    let kinds: Vec<&str> = g
        .successors(f)
        .iter()
        .map(|(_, e)| e.kind.as_str())
        .collect();
    assert_eq!(kinds, ["success", "fork", "fork"]);
    assert_eq!(
        g.node(j).map(|n| n.await_targets.clone()),
        Some(vec![Target::Node(f)])
    );
    assert_eq!(g.reachable_from_start().len(), 4);
}

#[test]
fn topology_snapshot() {
    let g = ExecGraph::build(&mini_review());
    insta::assert_snapshot!("mini_review_topology", pretty(&g.topology_json()));
}
