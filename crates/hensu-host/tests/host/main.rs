//! hensu-host tests, one binary: each module is named for what it tests.

#![allow(clippy::unwrap_used, clippy::panic)]

use hensu_runtime::{ActionResult, Context};
use serde_json::Value;

mod command_env;
mod command_processes;
mod command_values;
mod stub_scenarios;

/// A context from a JSON object.
fn ctx(v: Value) -> Context {
    match v {
        Value::Object(m) => m.into_iter().collect(),
        _ => Context::default(),
    }
}

/// The output of a successful result (panics with the failure otherwise).
fn ok_output(r: &ActionResult) -> &str {
    assert!(r.success, "expected success, got {r:?}");
    &r.output
}
