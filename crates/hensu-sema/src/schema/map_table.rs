//! The statements of a map node (docs/language.md, *Map over a list*), in a table of their own
//! beside `tables.rs`.

use super::tables::{NODE_TIMEOUT, ON_FAILURE_ANY, ON_SUCCESS};
use super::{EnumType, Repeat, StatementSpec, ValueType as V, call, prop};

pub(super) const MAP: &[StatementSpec] = &[
    prop(
        "over",
        V::String,
        false,
        "over = \"list\"",
        "The LIST_STRING state variable whose items the body runs over (required).",
    ),
    prop(
        "agent",
        V::String,
        false,
        "agent = \"agentId\"",
        "The agent run once per item (or a sub-workflow: `target`).",
    ),
    prop(
        "prompt",
        V::Prompt,
        false,
        "prompt = \"… {item} …\" | \"file.md\"",
        "The prompt of each item: `{item}` is the item, `{index}` its position (from 0); other `{name}` placeholders are filled from the state.",
    ),
    prop(
        "target",
        V::String,
        false,
        "target = \"workflow-id\"",
        "The body as a sub-workflow instead of an agent: the child workflow run once per item, on its inputs `item` and `index`.",
    ),
    prop(
        "result",
        V::String,
        false,
        "result = \"variable\"",
        "With `target`: the child's variable whose value is the item's answer.",
    ),
    prop(
        "maxParallel",
        V::Int,
        false,
        "maxParallel = 3",
        "How many items run at a time (default 1, at least 1).",
    ),
    prop(
        "maxItems",
        V::Int,
        false,
        "maxItems = 20",
        "The most items the list may hold (a longer list fails the node); the static bound multiplies the body's calls by it.",
    ),
    prop(
        "onItemFailure",
        V::Enum(EnumType::ItemFailure),
        false,
        "onItemFailure = ItemFailure.SKIP",
        "FAIL (default: a failed item fails the node), SKIP (leave it out) or COLLECT (keep its place, empty, with the error in `failed_items`).",
    ),
    call(
        "writes",
        1,
        Some(1),
        Repeat::Once,
        "writes(\"results\")",
        "The LIST_STRING variable the answers are gathered into, in the list's order.",
    ),
    NODE_TIMEOUT,
    ON_SUCCESS,
    ON_FAILURE_ANY,
];
