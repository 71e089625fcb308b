//! Rule helpers and the executable graph (targets, dense indices, fork edges, topology).

use super::*;

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
        saga: Default::default(),
        timing: Default::default(),
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
