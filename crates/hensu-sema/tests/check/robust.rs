//! The checks never panic, whatever the IR and however incomplete its origins.

use hensu_diagnostics::{FileId, Span};
use hensu_ir::*;
use hensu_sema::check::{InputKind, ProjectUnit, check_project, check_workflow};
use hensu_sema::origins::{BranchOrigin, NodeOrigin, Origins, RuleOrigin};
use proptest::prelude::*;
use serde_json::json;

const NAMES: [&str; 7] = ["a", "b", "c", "score", "done", "", "a-b"];

fn name() -> impl Strategy<Value = String> {
    (0..NAMES.len()).prop_map(|i| NAMES[i].to_string())
}

fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        -5.0..120.0f64,
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(70.0),
        Just(0.0)
    ]
}

fn score_condition() -> impl Strategy<Value = ScoreCondition> {
    (
        0..ComparisonOperator::ALL.len(),
        proptest::option::of(number()),
        proptest::option::of((number(), number())),
        name(),
    )
        .prop_map(|(op, value, range, target_node)| ScoreCondition {
            operator: ComparisonOperator::ALL[op],
            value,
            range: range.map(|(start, end)| ScoreRange { start, end }),
            target_node,
        })
}

fn predicate() -> impl Strategy<Value = ConditionPredicate> {
    prop_oneof![
        name().prop_map(ConditionPredicate::Eq),
        "[0-9a-z.]{0,4}".prop_map(ConditionPredicate::Neq),
        number().prop_map(ConditionPredicate::Gt),
        number().prop_map(ConditionPredicate::Gte),
        number().prop_map(ConditionPredicate::Lt),
        number().prop_map(ConditionPredicate::Lte),
    ]
}

fn plain_rule() -> impl Strategy<Value = TransitionRule> {
    prop_oneof![
        name().prop_map(|t| TransitionRule::Success {
            target_node: t,
            with_feedback: false
        }),
        proptest::option::of(name()).prop_map(|t| TransitionRule::Failure { target_node: t }),
        name().prop_map(|t| TransitionRule::NoConsensus {
            target_node: t,
            with_feedback: true
        }),
        (any::<bool>(), name()).prop_map(|(e, t)| TransitionRule::Approval {
            expected: e,
            target_node: t,
            with_feedback: false
        }),
        proptest::collection::vec(score_condition(), 0..4).prop_map(|c| TransitionRule::Score {
            conditions: c,
            with_feedback: false
        }),
        (name(), predicate(), name()).prop_map(|(v, p, t)| TransitionRule::Condition {
            variable: v,
            predicate: p,
            target_node: t,
            with_feedback: false
        }),
        name().prop_map(|t| TransitionRule::Always {
            target_node: t,
            with_feedback: false
        }),
        Just(TransitionRule::RubricFail),
    ]
}

fn rule() -> impl Strategy<Value = TransitionRule> {
    prop_oneof![
        3 => plain_rule(),
        1 => (plain_rule(), 0..Namespace::ALL.len(), -1..3i64, name()).prop_map(|(inner, ns, budget, o)| {
            TransitionRule::Bounded {
                namespace: Namespace::ALL[ns],
                budget,
                otherwise: o,
                escalation_with_feedback: false,
                inner: Box::new(inner),
            }
        }),
    ]
}

fn names() -> impl Strategy<Value = Vec<String>> {
    proptest::collection::vec(name(), 0..3)
}

fn node() -> impl Strategy<Value = Node> {
    (
        0..9usize,
        name(),
        proptest::collection::vec(rule(), 0..4),
        names(),
        names(),
        any::<bool>(),
    )
        .prop_map(|(kind, id, rules, xs, ys, flag)| match kind {
            0 => Node::Standard(StandardNode {
                id,
                agent_id: xs.first().cloned(),
                prompt: Some("{a} {score} {zz} {".into()),
                review_config: flag.then(ReviewConfig::default),
                transition_rules: rules,
                writes: ys,
                ..Default::default()
            }),
            1 => Node::Parallel(ParallelNode {
                id,
                branches: xs
                    .iter()
                    .map(|b| Branch {
                        yields: ys.clone(),
                        prompt: Some("{b}".into()),
                        // Dependencies among the branches, themselves and unknown names
                        // included: cycles and E0312 (docs/language.md, *Dependency DAGs*).
                        after: xs.iter().chain(&ys).rev().cloned().collect(),
                        run_if: ys.first().cloned(),
                        ..Branch::new(b.clone(), b.clone())
                    })
                    .collect(),
                consensus_config: flag.then(|| ConsensusConfig {
                    strategy: ConsensusStrategy::JudgeDecides,
                    ..Default::default()
                }),
                transition_rules: rules,
            }),
            2 => Node::Fork(ForkNode {
                id,
                targets: xs,
                transition_rules: rules,
                ..Default::default()
            }),
            3 => Node::Join(JoinNode {
                id,
                await_targets: xs,
                writes: ys,
                merge_strategy: if flag {
                    MergeStrategy::MergeMaps
                } else {
                    MergeStrategy::CollectAll
                },
                transition_rules: rules,
                ..Default::default()
            }),
            4 => Node::Action(ActionNode {
                id,
                actions: vec![
                    Action::Send {
                        handler_id: "h".into(),
                        payload: [("k".to_string(), json!({"x": ["{a}", {"y": "{q}"}]}))]
                            .into_iter()
                            .collect(),
                        raw_payload: false,
                    },
                    Action::Execute {
                        command_id: "c".into(),
                    },
                ],
                transition_rules: rules,
                writes: Vec::new(),
            }),
            5 => Node::SubWorkflow(SubWorkflowNode {
                id,
                workflow_id: xs.first().cloned().unwrap_or_default(),
                target_version: flag.then(|| "9".to_string()),
                input_mapping: xs
                    .iter()
                    .map(|x| (x.clone(), ys.first().cloned().unwrap_or_default()))
                    .collect(),
                output_mapping: ys.iter().map(|y| (y.clone(), y.clone())).collect(),
                transition_rules: rules,
            }),
            6 => Node::Generic(GenericNode {
                id,
                executor_type: "t".into(),
                config: [("f".to_string(), json!("a"))].into_iter().collect(),
                transition_rules: rules,
                rubric: None,
            }),
            // A map over a list (docs/language.md, *Map over a list*): any list name, limits
            // below 1, no maxItems, several writes.
            7 => Node::Map(MapNode {
                id,
                over: xs.first().cloned().unwrap_or_default(),
                agent_id: ys.first().cloned(),
                prompt: flag.then(|| "{item} {index} {a} {".into()),
                target: None,
                result: None,
                max_parallel: rules.len() as i64 - 1,
                max_items: flag.then_some(xs.len() as i64 - 1),
                on_item_failure: ItemFailure::Collect,
                writes: ys,
                transition_rules: rules,
            }),
            _ => Node::End(EndNode {
                id,
                status: ExitStatus::Failure,
            }),
        })
}

fn span() -> impl Strategy<Value = Span> {
    (0..50u32, 0..50u32).prop_map(|(a, b)| Span::new(a, b))
}

fn spans() -> impl Strategy<Value = Vec<Span>> {
    proptest::collection::vec(span(), 0..3)
}

fn node_origin() -> impl Strategy<Value = NodeOrigin> {
    (
        span(),
        spans(),
        spans(),
        spans(),
        proptest::collection::vec((spans(), proptest::option::of(span())), 0..3),
    )
        .prop_map(|(id, writes, targets, imports, rules)| NodeOrigin {
            id,
            writes: writes.clone(),
            targets,
            imports,
            awaits: writes,
            branches: vec![BranchOrigin {
                id,
                ..Default::default()
            }],
            rules: rules
                .into_iter()
                .map(|(conditions, target)| RuleOrigin {
                    stmt: id,
                    target,
                    condition_targets: conditions.clone(),
                    conditions,
                    ..Default::default()
                })
                .collect(),
            placeholders: vec![("a".into(), id), ("zz".into(), id)],
            repeated_names: vec![
                ("imports".into(), "a".into(), id),
                ("writes".into(), "zz".into(), id),
            ],
            ..Default::default()
        })
}

fn workflow() -> impl Strategy<Value = (Workflow, Origins)> {
    (
        name(),
        name(),
        proptest::collection::vec(node(), 0..7),
        proptest::option::of(proptest::collection::vec(
            (name(), 0..4usize, any::<bool>()),
            0..4,
        )),
        proptest::collection::vec((name(), node_origin()), 0..5),
    )
        .prop_map(|(id, start, nodes, vars, node_origins)| {
            let wf = Workflow {
                id,
                version: "1".into(),
                metadata: Metadata::default(),
                agents: [("a".to_string(), AgentConfig::new("a", "r", "m"))]
                    .into_iter()
                    .collect(),
                nodes: nodes.into_iter().map(|n| (n.id().to_string(), n)).collect(),
                start_node: start,
                config: None,
                saga: Default::default(),
                timing: Default::default(),
                state_schema: vars.map(|vars| StateSchema {
                    variables: vars
                        .into_iter()
                        .map(|(name, t, input)| StateVariable {
                            name,
                            var_type: VarType::ALL[t],
                            is_input: input,
                            description: None,
                        })
                        .collect(),
                }),
            };
            let origins = Origins {
                nodes: node_origins.into_iter().collect(),
                ..Origins::default()
            };
            (wf, origins)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn checks_never_panic((wf, origins) in workflow(), (other, other_origins) in workflow()) {
        let _ = check_workflow(&wf, &origins, InputKind::Source);
        let _ = check_workflow(&wf, &origins, InputKind::Json);
        let units = [
            ProjectUnit { file: FileId(0), workflow: &wf, origins: &origins },
            ProjectUnit { file: FileId(1), workflow: &other, origins: &other_origins },
            ProjectUnit { file: FileId(2), workflow: &wf, origins: &Origins::default() },
        ];
        let _ = check_project(&units);
    }
}
