//! Property test: any workflow survives write → read unchanged.

use super::*;

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
        strings(),
        prop::option::of(ident()),
    )
        .prop_map(
            |(id, agent_id, prompt, rubric, weight, yields, after, run_if)| Branch {
                rubric: mk_rubric(&id, rubric),
                id,
                agent_id,
                prompt,
                weight,
                yields,
                after,
                run_if,
            },
        );
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
        strings(),
    )
        .prop_map(|(id, actions, rules, writes)| {
            Node::Action(ActionNode {
                id,
                actions,
                transition_rules: rules,
                writes,
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
    // hensu's WAIT node (docs/language.md, *Timers and signals*).
    let wait_for = prop_oneof![
        (1u64..=i64::MAX as u64).prop_map(|ms| WaitFor::Duration { ms }),
        text().prop_map(|template| WaitFor::Until { template }),
        (ident(), prop::option::of(1u64..=i64::MAX as u64))
            .prop_map(|(name, timeout_ms)| WaitFor::Signal { name, timeout_ms }),
    ];
    let wait = (ident(), wait_for, strings(), rules()).prop_map(|(id, wait, writes, rules)| {
        // `writes` belong to a signal wait only (the reader keeps them either way).
        Node::Wait(WaitNode {
            id,
            wait,
            writes,
            transition_rules: rules,
        })
    });
    // hensu extension (docs/language.md, *Map over a list*).
    let map = (
        (
            ident(),
            ident(),
            prop::option::of(ident()),
            prop::option::of(text()),
            prop::option::of((ident(), ident())),
        ),
        (
            -2..20i64,
            prop::option::of(-2..50i64),
            prop::sample::select(ItemFailure::ALL),
            prop::collection::vec(ident(), 0..2),
        ),
        rules(),
    )
        .prop_map(
            |(
                (id, over, agent_id, prompt, child),
                (max_parallel, max_items, policy, writes),
                rules,
            )| {
                Node::Map(MapNode {
                    id,
                    over,
                    agent_id,
                    prompt,
                    target: child.as_ref().map(|(t, _)| t.clone()),
                    result: child.map(|(_, r)| r),
                    max_parallel,
                    max_items,
                    on_item_failure: policy,
                    writes,
                    transition_rules: rules,
                })
            },
        );
    prop_oneof![
        standard, parallel, fork, join, generic, action, sub, end, wait, map
    ]
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

fn compensation() -> impl Strategy<Value = Compensation> {
    let body = prop_oneof![
        (ident(), text())
            .prop_map(|(agent_id, prompt)| CompensationBody::Agent { agent_id, prompt }),
        prop::collection::vec(
            prop_oneof![
                (ident(), value_map()).prop_map(|(h, p)| Action::Send {
                    handler_id: h,
                    payload: p,
                    raw_payload: false,
                }),
                ident().prop_map(|c| Action::Execute { command_id: c }),
            ],
            0..3,
        )
        .prop_map(CompensationBody::Actions),
    ];
    (ident(), body).prop_map(|(id, body)| Compensation { id, body })
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
        prop::collection::vec(compensation(), 0..3),
        prop::collection::vec(any::<bool>(), 6),
    )
        .prop_map(
            |(
                id,
                version,
                metadata,
                agents,
                nodes,
                start_node,
                config,
                state_schema,
                compensations,
                named,
            )| {
                let nodes: IndexMap<String, Node> =
                    nodes.into_iter().map(|n| (n.id().to_string(), n)).collect();
                let mut saga = Saga {
                    compensations: compensations
                        .into_iter()
                        .map(|c| (c.id.clone(), c))
                        .collect(),
                    ..Saga::default()
                };
                let ids: Vec<String> = saga.compensations.keys().cloned().collect();
                for (i, node_id) in nodes.keys().enumerate() {
                    if named.get(i).copied().unwrap_or(false) && !ids.is_empty() {
                        let c = ids[i % ids.len()].clone();
                        saga.node_compensations.insert(node_id.clone(), c);
                    }
                }
                // Timeouts and backoffs on some of the nodes the same flags pick.
                let mut timing = hensu_ir::Timing::default();
                for (i, node_id) in nodes.keys().enumerate() {
                    if named.get(i).copied().unwrap_or(false) {
                        let n = i as u64 + 1;
                        timing.nodes.insert(
                            node_id.clone(),
                            hensu_ir::NodeTiming {
                                timeout_ms: Some(n * 1000),
                                backoff_ms: (i % 2 == 0).then_some(n * 250),
                                review_deadline_ms: (i % 3 == 0).then_some(n * 60_000),
                            },
                        );
                    }
                }
                Workflow {
                    id,
                    version,
                    metadata,
                    agents: agents.into_iter().map(|a| (a.id.clone(), a)).collect(),
                    nodes,
                    start_node,
                    config,
                    saga,
                    state_schema,
                    timing,
                }
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
        prop_assert_eq!(&read.saga, &wf.saga);
        prop_assert_eq!(&read.timing, &wf.timing);
        // Also through the serde impls.
        let via_serde: Result<Workflow, _> = serde_json::from_str(&first);
        prop_assert!(via_serde.is_ok());
        let _ = ExecGraph::build(&read);
    }

    /// `Wire` (serialized in place) writes what `to_value` builds, byte for byte.
    #[test]
    fn wire_writes_what_to_value_builds(wf in workflow()) {
        let direct = serde_json::to_vec(&Wire(&wf));
        prop_assert!(direct.is_ok());
        let via_value = serde_json::to_vec(&to_value(&wf));
        prop_assert_eq!(direct.ok(), via_value.ok());
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
