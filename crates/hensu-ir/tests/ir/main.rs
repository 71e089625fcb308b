//! hensu-ir tests: wire format (upstream worked example, snapshots, round trip, errors), rubric
//! parser, canonical numbers, workflow ids and the executable graph. One binary; each module is
//! named for what it tests, the shared fixtures are here.

use hensu_ir::*;
use indexmap::IndexMap;
use proptest::prelude::*;
use serde_json::{Value, json};

mod exec_graph;
mod numbers_and_ids;
mod read_errors;
mod round_trip;
mod rubric;
mod wire_snapshots;
mod worked_example;

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
        writes: Vec::new(),
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
        saga: Default::default(),
        timing: Default::default(),
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
