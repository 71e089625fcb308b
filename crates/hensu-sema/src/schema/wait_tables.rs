//! The statement tables of the durable wait nodes (docs/language.md, *Timers and signals*):
//! `wait("id") { … }` and `awaitSignal("id") { … }`.

use super::{FAILURE_GOTO, StatementSpec, ValueType as V, call, prop, trans};
use crate::schema::Repeat;

pub(super) const WAIT: &[StatementSpec] = &[
    prop(
        "duration",
        V::Duration,
        false,
        "duration = 30.minutes",
        "How long the run waits from its first arrival at this node (durably: no process holds it meanwhile).",
    ),
    prop(
        "until",
        V::String,
        false,
        "until = \"{deadline}\"",
        "The instant the run waits for: an ISO-8601 timestamp (`2026-05-01T09:00:00Z`), usually a `{placeholder}` of a state variable; a past instant goes on at once.",
    ),
    trans(
        "onSuccess",
        FAILURE_GOTO,
        "onSuccess goto \"node\"",
        "When the time has come, go to the node.",
    ),
    trans(
        "onFailure",
        FAILURE_GOTO,
        "onFailure goto \"node\"",
        "When `until` is not an ISO-8601 timestamp, go to the node.",
    ),
];

pub(super) const SIGNAL: &[StatementSpec] = &[
    prop(
        "signal",
        V::String,
        false,
        "signal = \"approved-by-finance\"",
        "The name of the signal this node waits for (default: the node id); `hensuc signal RUN NAME` and `POST …/signals/NAME` send it.",
    ),
    prop(
        "timeout",
        V::Duration,
        false,
        "timeout = 48.hours",
        "How long to wait for the signal before taking `onTimeout` (durably); without it the run waits until the signal comes.",
    ),
    call(
        "writes",
        0,
        None,
        Repeat::Once,
        "writes(\"decision\")",
        "State variables the signal's JSON payload is written to (one: the whole payload; several: its keys).",
    ),
    trans(
        "onSignal",
        FAILURE_GOTO,
        "onSignal goto \"node\"",
        "When the signal arrives, go to the node.",
    ),
    trans(
        "onTimeout",
        FAILURE_GOTO,
        "onTimeout goto \"node\"",
        "When the timeout passes without the signal, go to the node.",
    ),
];
