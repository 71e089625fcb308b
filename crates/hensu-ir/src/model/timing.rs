//! Node timeouts and retry backoff, a hensu extension of the upstream model (docs/language.md,
//! *Timeouts and backoff*): `timeout = 30.seconds` on a node and `onFailure retry N backoff
//! 2.seconds otherwise "x"`. An upstream engine does not know them; the JSON artifact carries
//! them only on the nodes that set them, so a workflow without any is exactly upstream's. A
//! review's `deadline` (docs/language.md, *Review*) is kept here too.

use indexmap::IndexMap;

/// The longest wait between two retries, whatever the backoff and the attempt: the doubling
/// stops here (docs/language.md, *Timeouts and backoff*).
pub const MAX_BACKOFF_MS: u64 = 5 * 60 * 1000;

/// The timing of one node. A join's timeout is upstream's own `timeout` field instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct NodeTiming {
    /// The node fails when one execution takes longer (milliseconds, > 0).
    pub timeout_ms: Option<u64>,
    /// The wait before the first retry of `onFailure retry` (milliseconds, > 0); it doubles
    /// with each further attempt up to [`MAX_BACKOFF_MS`].
    pub backoff_ms: Option<u64>,
    /// How long a human review of the node may take (milliseconds, > 0): a review not decided
    /// by then is rejected, so the node's `onRejection` routes it (docs/language.md, *Review*).
    pub review_deadline_ms: Option<u64>,
}

impl NodeTiming {
    pub fn is_empty(&self) -> bool {
        self.timeout_ms.is_none() && self.backoff_ms.is_none() && self.review_deadline_ms.is_none()
    }

    /// The wait before retry `attempt` (1-based) without jitter: `backoff · 2^(attempt-1)`,
    /// capped at [`MAX_BACKOFF_MS`].
    pub fn backoff_before(&self, attempt: u32) -> Option<u64> {
        let base = self.backoff_ms?;
        let factor = 1u64
            .checked_shl(attempt.saturating_sub(1))
            .unwrap_or(u64::MAX);
        Some(base.saturating_mul(factor).min(MAX_BACKOFF_MS))
    }
}

/// Node id → its timing, for the nodes that set one, in node order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Timing {
    pub nodes: IndexMap<String, NodeTiming>,
}

impl Timing {
    pub fn is_empty(&self) -> bool {
        self.nodes.values().all(NodeTiming::is_empty)
    }

    /// The timing of a node (empty when it sets none).
    pub fn of(&self, node: &str) -> NodeTiming {
        self.nodes.get(node).copied().unwrap_or_default()
    }
}
