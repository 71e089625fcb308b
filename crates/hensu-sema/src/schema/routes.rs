//! The `routes("node") { … }` block of an extending workflow (docs/language.md, *Workflow
//! extension*): every transition any node kind accepts. The node's kind is only known once the
//! base is merged, so the merge checks each trigger against that kind's own table
//! (`crate::extend`), and this table stays the union.

use super::{
    BlockKind, FAILURE_ANY, GOTO_FB, GOTO_FB_REVISE, Repeat, StatementKind, StatementSpec, block,
    trans,
};

pub(super) const ROUTES: &[StatementSpec] = &[
    trans(
        "onSuccess",
        GOTO_FB,
        "onSuccess goto \"node\" [withFeedback]",
        "On a successful result, go to the node.",
    ),
    trans(
        "onFailure",
        FAILURE_ANY,
        "onFailure goto \"node\" | onFailure retry N otherwise \"node\"",
        "On a failed result, go to the node (or re-run the node up to N times where its kind allows).",
    ),
    trans(
        "onApproval",
        GOTO_FB,
        "onApproval goto \"node\" [withFeedback]",
        "Standard nodes: when the review approves, go to the node.",
    ),
    trans(
        "onRejection",
        GOTO_FB_REVISE,
        "onRejection goto \"node\" | onRejection revise \"node\" retry N otherwise \"node\"",
        "Standard nodes: when the review rejects, go to a node or revise up to N times.",
    ),
    trans(
        "onConsensus",
        GOTO_FB,
        "onConsensus goto \"node\" [withFeedback]",
        "Parallel nodes: when consensus is reached, go to the node.",
    ),
    trans(
        "onNoConsensus",
        GOTO_FB_REVISE,
        "onNoConsensus goto \"node\" | onNoConsensus revise \"node\" retry N otherwise \"node\"",
        "Parallel nodes: when consensus is not reached, go to a node or revise up to N times.",
    ),
    trans(
        "onComplete",
        GOTO_FB,
        "onComplete goto \"join\" [withFeedback]",
        "Fork nodes: the join that merges the targets' results.",
    ),
    block(
        "onScore",
        BlockKind::OnScore,
        Repeat::Many,
        "onScore { whenScore … goto \"node\" }",
        "Route on the engine `score` (0–100) produced by the node.",
    ),
    StatementSpec {
        name: "onCondition",
        kind: StatementKind::CallBlock {
            min: 1,
            max: 1,
            block: BlockKind::OnCondition,
        },
        repeat: Repeat::Many,
        syntax: "onCondition(\"var\") { whenValue equalTo \"x\" goto \"node\" }",
        doc: "Route on a state variable the node writes.",
    },
];
