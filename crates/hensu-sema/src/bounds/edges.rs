//! The control-flow edges of one workflow as the bound sees them: *forward* edges (every
//! transition target and fork target that is not budgeted) and *budgeted* edges (a `revise` or
//! `onFailure retry` back-edge, or a rubric automatic back-track), each with its budget.

use hensu_ir::{Node, RuleKind, ScoreCondition, TransitionRule, Workflow};

use super::BoundsOptions;

/// Automatic back-tracks of a rubric node per visit when it has no bounded rule: the runtime's
/// default `rubric_backtrack_limit` (docs/language.md, *Rubric evaluation*). A node with a
/// bounded rule gets that rule's budget instead ([`rubric_backtrack_limit`]); the bound uses
/// [`BoundsOptions::auto_backtrack_cap`], whose default this is.
pub const RUBRIC_RERUN_LIMIT: u64 = 3;

/// A budgeted edge: `owner` may send the flow to `target` at most `budget` times before its
/// counter resets (docs/language.md, *Transition resolution and budgets*).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetedEdge {
    pub owner: usize,
    pub target: usize,
    pub budget: u64,
}

/// The edges of a workflow, by node index (the order of `Workflow::nodes`).
#[derive(Debug, Default)]
pub struct Edges {
    /// Forward successors of each node (rule targets and `otherwise` escalations).
    pub forward: Vec<Vec<usize>>,
    /// Fork targets of each node (every one runs, as its own sub-flow).
    pub spawn: Vec<Vec<usize>>,
    pub budgeted: Vec<BudgetedEdge>,
    pub start: Option<usize>,
    /// Join nodes: a fork target's sub-flow stops at its join, which then runs once in the
    /// main flow.
    pub join: Vec<bool>,
}

impl Edges {
    pub fn of(workflow: &Workflow, options: &BoundsOptions) -> Edges {
        let index = |id: &str| workflow.nodes.get_index_of(id);
        let n = workflow.nodes.len();
        let mut edges = Edges {
            forward: vec![Vec::new(); n],
            spawn: vec![Vec::new(); n],
            budgeted: Vec::new(),
            start: index(&workflow.start_node),
            join: workflow
                .nodes
                .values()
                .map(|n| matches!(n, Node::Join(_)))
                .collect(),
        };
        let mut rubric_targets: Vec<usize> = workflow
            .nodes
            .values()
            .enumerate()
            .filter(|(_, node)| node.rubric().is_some())
            .map(|(i, _)| i)
            .chain(edges.start)
            .collect();
        rubric_targets.sort_unstable();
        rubric_targets.dedup();
        for (i, node) in workflow.nodes.values().enumerate() {
            for rule in node.transition_rules() {
                edges.add_rule(i, rule, &index);
            }
            if let Node::Fork(fork) = node {
                edges.spawn[i].extend(fork.targets.iter().filter_map(|t| index(t)));
            }
            let limit = rubric_backtrack_limit(node, options.auto_backtrack_cap);
            if node.rubric().is_some() && limit > 0 && !score_rules_cover_every_score(node) {
                // One counter per visit limits every automatic back-track of the node: re-runs
                // (60 ≤ score < 80) and back-tracks to an earlier node with a rubric or the
                // start (below 60 / 30; which one depends on the run's history). Each
                // candidate edge gets the whole limit (loose, never below the truth).
                let others = rubric_targets.iter().copied().filter(|&t| t != i);
                for t in std::iter::once(i).chain(others) {
                    edges.budgeted.push(BudgetedEdge {
                        owner: i,
                        target: t,
                        budget: limit,
                    });
                }
            }
        }
        for list in edges.forward.iter_mut().chain(edges.spawn.iter_mut()) {
            list.sort_unstable();
            list.dedup();
        }
        edges
    }

    fn add_rule(
        &mut self,
        owner: usize,
        rule: &TransitionRule,
        index: &dyn Fn(&str) -> Option<usize>,
    ) {
        match rule {
            TransitionRule::Bounded {
                budget,
                otherwise,
                inner,
                ..
            } => {
                let budget = u64::try_from(*budget).unwrap_or(0);
                let targets: Vec<usize> = match inner.as_ref() {
                    TransitionRule::Failure { target_node: None } => vec![owner],
                    other => other.targets().into_iter().filter_map(index).collect(),
                };
                for target in targets {
                    self.budgeted.push(BudgetedEdge {
                        owner,
                        target,
                        budget,
                    });
                }
                if let Some(t) = index(otherwise) {
                    self.forward[owner].push(t);
                }
            }
            other => self.forward[owner].extend(other.targets().into_iter().filter_map(index)),
        }
    }

    pub fn node_count(&self) -> usize {
        self.forward.len()
    }

    /// Forward and spawn successors of `i`.
    pub fn successors(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.forward[i].iter().chain(&self.spawn[i]).copied()
    }
}

/// How many automatic rubric back-tracks the runtime allows a node per visit: the budget of its
/// first bounded rule (`revise … retry N`, `onFailure retry N`) when it has one, else `default`
/// (the run's `rubric_backtrack_limit`). The runtime's rule, in `hensu-runtime`'s rubric
/// post-processor.
pub fn rubric_backtrack_limit(node: &Node, default: u64) -> u64 {
    node.transition_rules()
        .iter()
        .find_map(|r| match r {
            TransitionRule::Bounded { budget, .. } => Some(u64::try_from(*budget).unwrap_or(0)),
            _ => None,
        })
        .unwrap_or(default)
}

/// Whether the node's `onScore` arms match every score: then a failed rubric never
/// back-tracks by itself ("an explicit score rule that handles the score wins").
pub fn score_rules_cover_every_score(node: &Node) -> bool {
    let arms: Vec<&ScoreCondition> = node
        .transition_rules()
        .iter()
        .filter(|r| r.trigger() == RuleKind::Score)
        .filter_map(|r| match r.trigger_rule() {
            TransitionRule::Score { conditions, .. } => Some(conditions.iter()),
            _ => None,
        })
        .flatten()
        .collect();
    if arms.is_empty() {
        return false;
    }
    // Which arms match is constant between consecutive thresholds, so probing each threshold,
    // each midpoint and a point beyond each end decides coverage.
    let mut cuts: Vec<f64> = arms
        .iter()
        .flat_map(|c| [c.value, c.range.map(|r| r.start), c.range.map(|r| r.end)])
        .flatten()
        .filter(|v| v.is_finite())
        .collect();
    cuts.sort_by(f64::total_cmp);
    cuts.dedup();
    let mut probes = cuts.clone();
    probes.extend(cuts.windows(2).map(|w| w[0] + (w[1] - w[0]) / 2.0));
    if let (Some(first), Some(last)) = (cuts.first(), cuts.last()) {
        probes.push(first - 1.0);
        probes.push(last + 1.0);
    }
    probes.iter().all(|&p| arms.iter().any(|c| c.matches(p)))
}
