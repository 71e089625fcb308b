//! Saga compensation, a hensu extension of the upstream model (docs/language.md, *Saga
//! compensation*): the `compensation("id") { … }` statements of a workflow and the node that
//! names each one. An upstream engine does not know it; `hensuc build` warns when an artifact
//! carries it.

use indexmap::IndexMap;

use super::Action;

/// The context key holding the id of the node being compensated (`{compensating}`).
pub const COMPENSATING: &str = "compensating";
/// The context key holding the output of the compensated visit (`{compensating_output}`).
pub const COMPENSATING_OUTPUT: &str = "compensating_output";

/// The compensations of a workflow and which node names which. Empty for most workflows (and
/// then absent from the JSON artifact, which stays exactly upstream's).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Saga {
    /// Compensation id → compensation, in declaration order.
    pub compensations: IndexMap<String, Compensation>,
    /// Node id → the id of the compensation it names (`compensation = "…"`), in node order.
    pub node_compensations: IndexMap<String, String>,
}

impl Saga {
    /// Whether the workflow uses compensation at all.
    pub fn is_empty(&self) -> bool {
        self.compensations.is_empty() && self.node_compensations.is_empty()
    }

    /// The compensation node `node_id` names, when it names one that exists.
    pub fn compensation_of(&self, node_id: &str) -> Option<&Compensation> {
        self.node_compensations
            .get(node_id)
            .and_then(|c| self.compensations.get(c))
    }
}

/// One `compensation("id") { … }`: what undoes the work of a node's completed visit.
#[derive(Clone, Debug, PartialEq)]
pub struct Compensation {
    pub id: String,
    pub body: CompensationBody,
}

/// What a compensation does: one agent call, or actions run in order.
#[derive(Clone, Debug, PartialEq)]
pub enum CompensationBody {
    /// `agent = "…"; prompt = "…"` (no `writes`: the output is recorded, not stored in state).
    Agent {
        agent_id: String,
        /// Resolved prompt text (`.md` files are inlined).
        prompt: String,
    },
    /// `execute("…")` / `send("…", …)`, all of them, like an action node.
    Actions(Vec<Action>),
}
