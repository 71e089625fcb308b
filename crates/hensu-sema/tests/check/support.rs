//! Hand-built IR for the check tests (independent of the lowering).

use hensu_diagnostics::Diagnostic;
use hensu_ir::*;
use hensu_sema::check::{InputKind, check_workflow};
use hensu_sema::origins::Origins;

pub fn workflow(id: &str, start: &str, nodes: Vec<Node>) -> Workflow {
    Workflow {
        id: id.to_string(),
        version: DEFAULT_VERSION.to_string(),
        metadata: Metadata {
            name: id.to_string(),
            ..Metadata::default()
        },
        agents: Default::default(),
        nodes: nodes.into_iter().map(|n| (n.id().to_string(), n)).collect(),
        start_node: start.to_string(),
        config: None,
        saga: Default::default(),
        timing: Default::default(),
        state_schema: None,
    }
}

pub fn with_agents(mut wf: Workflow, agents: &[&str]) -> Workflow {
    for a in agents {
        wf.agents
            .insert(a.to_string(), AgentConfig::new(*a, "Role", "gpt-4o"));
    }
    wf
}

pub fn with_state(mut wf: Workflow, vars: &[(&str, VarType, bool)]) -> Workflow {
    wf.state_schema = Some(StateSchema {
        variables: vars
            .iter()
            .map(|(n, t, input)| StateVariable {
                name: n.to_string(),
                var_type: *t,
                is_input: *input,
                description: None,
            })
            .collect(),
    });
    wf
}

pub fn std_node(id: &str, rules: Vec<TransitionRule>) -> Node {
    Node::Standard(StandardNode {
        id: id.to_string(),
        transition_rules: rules,
        ..StandardNode::default()
    })
}

pub fn std_writes(id: &str, writes: &[&str], rules: Vec<TransitionRule>) -> Node {
    Node::Standard(StandardNode {
        id: id.to_string(),
        writes: writes.iter().map(|s| s.to_string()).collect(),
        transition_rules: rules,
        ..StandardNode::default()
    })
}

pub fn end(id: &str) -> Node {
    Node::End(EndNode {
        id: id.to_string(),
        status: ExitStatus::Success,
    })
}

pub fn success(t: &str) -> TransitionRule {
    TransitionRule::Success {
        target_node: t.to_string(),
        with_feedback: false,
    }
}

pub fn failure(t: &str) -> TransitionRule {
    TransitionRule::Failure {
        target_node: Some(t.to_string()),
    }
}

pub fn always(t: &str) -> TransitionRule {
    TransitionRule::Always {
        target_node: t.to_string(),
        with_feedback: false,
    }
}

pub fn approval(expected: bool, t: &str) -> TransitionRule {
    TransitionRule::Approval {
        expected,
        target_node: t.to_string(),
        with_feedback: false,
    }
}

pub fn cond(var: &str, predicate: ConditionPredicate, t: &str) -> TransitionRule {
    TransitionRule::Condition {
        variable: var.to_string(),
        predicate,
        target_node: t.to_string(),
        with_feedback: false,
    }
}

pub fn arm(op: ComparisonOperator, v: f64, t: &str) -> ScoreCondition {
    ScoreCondition {
        operator: op,
        value: Some(v),
        range: None,
        target_node: t.to_string(),
    }
}

pub fn range(start: f64, end: f64, t: &str) -> ScoreCondition {
    ScoreCondition {
        operator: ComparisonOperator::Range,
        value: Some(0.0),
        range: Some(ScoreRange { start, end }),
        target_node: t.to_string(),
    }
}

pub fn score(conditions: Vec<ScoreCondition>) -> TransitionRule {
    TransitionRule::Score {
        conditions,
        with_feedback: false,
    }
}

pub fn bounded(
    ns: Namespace,
    inner: TransitionRule,
    budget: i64,
    otherwise: &str,
) -> TransitionRule {
    TransitionRule::Bounded {
        namespace: ns,
        budget,
        otherwise: otherwise.to_string(),
        escalation_with_feedback: false,
        inner: Box::new(inner),
    }
}

/// `onFailure retry N otherwise "x"`.
pub fn retry(budget: i64, otherwise: &str) -> TransitionRule {
    bounded(
        Namespace::Failure,
        TransitionRule::Failure { target_node: None },
        budget,
        otherwise,
    )
}

pub fn check(wf: &Workflow) -> Vec<Diagnostic> {
    check_workflow(wf, &Origins::default(), InputKind::Source)
}

pub fn check_json(wf: &Workflow) -> Vec<Diagnostic> {
    check_workflow(wf, &Origins::default(), InputKind::Json)
}

/// `CODE message` per diagnostic.
pub fn lines(diags: &[Diagnostic]) -> Vec<String> {
    diags
        .iter()
        .map(|d| format!("{} {}", d.code, d.message))
        .collect()
}

pub fn codes(diags: &[Diagnostic]) -> Vec<&'static str> {
    diags.iter().map(|d| d.code).collect()
}
