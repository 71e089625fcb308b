//! Snapshots of every node kind and every rule kind on the wire, and their round trips.

use super::*;

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
                        after: vec![],
                        run_if: None,
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
                writes: Vec::new(),
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
        (
            "rule_review_timeout",
            TransitionRule::ReviewTimeout {
                target_node: "escalate".into(),
            },
        ),
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
