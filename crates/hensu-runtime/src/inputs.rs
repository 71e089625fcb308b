//! The types of state variables at run time (docs/language.md, *Runtime semantics*): a run's
//! inputs are checked against the schema before the first node, and a value a node writes to a
//! declared variable must fit its `VarType`.

use hensu_ir::{StateSchema, VarType};
use serde_json::Value;

use crate::value::{Context, as_bool, as_number};

/// Context keys the engine and the hosts set themselves; never "unknown inputs".
fn is_reserved(key: &str) -> bool {
    key.starts_with('_') || key == "stub_scenario"
}

/// Everything wrong with a run's inputs: missing required inputs and mistyped values, in schema
/// order. Empty: the inputs fit.
pub fn input_problems(schema: &StateSchema, input: &Context) -> (Vec<String>, Vec<String>) {
    let mut missing = Vec::new();
    let mut mistyped = Vec::new();
    for var in &schema.variables {
        match input.get(&var.name).filter(|v| !v.is_null()) {
            None if var.is_input => missing.push(var.name.clone()),
            None => {}
            Some(v) if !input_fits(var.var_type, v) => mistyped.push(format!(
                "`{}` is {}, expected {}",
                var.name,
                describe(v),
                var.var_type.as_str()
            )),
            Some(_) => {}
        }
    }
    (missing, mistyped)
}

/// The error a run with `input` fails with before its first node (missing required inputs,
/// mistyped values; every problem at once), `None` when the inputs fit. One rule for the
/// engine and for a server's start, which refuses such a start with the same text.
pub fn input_error(schema: &StateSchema, input: &Context) -> Option<crate::RuntimeError> {
    let (missing, mistyped) = input_problems(schema, input);
    if !mistyped.is_empty() {
        let mut problems: Vec<String> = missing
            .iter()
            .map(|n| format!("`{n}` is missing"))
            .collect();
        problems.extend(mistyped);
        Some(crate::RuntimeError::InvalidInputs { problems })
    } else if !missing.is_empty() {
        Some(crate::RuntimeError::MissingInputs { names: missing })
    } else {
        None
    }
}

/// Keys of `input` the schema does not declare, each with the nearest declared name when one is
/// close enough.
pub fn unknown_inputs(schema: &StateSchema, input: &Context) -> Vec<(String, Option<String>)> {
    input
        .keys()
        .filter(|k| !is_reserved(k) && schema.variable(k).is_none())
        .map(|k| {
            let nearest = schema
                .variables
                .iter()
                .map(|v| (strsim::damerau_levenshtein(k, &v.name), &v.name))
                .filter(|(d, name)| *d <= 2.max(name.len() / 3))
                .min_by_key(|(d, _)| *d)
                .map(|(_, name)| name.clone());
            (k.clone(), nearest)
        })
        .collect()
}

/// Inputs come as JSON: the JSON type must be the declared one (an input, a signal's payload).
pub fn input_fits(ty: VarType, v: &Value) -> bool {
    match ty {
        VarType::String => v.is_string(),
        VarType::Number => v.is_number(),
        VarType::Boolean => v.is_boolean(),
        VarType::ListString => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
    }
}

/// A node's answer is text: a NUMBER may arrive as `"42"`, a BOOLEAN as `"true"`; a STRING
/// variable takes any value (it is rendered where it is used).
pub fn written_value_fits(ty: VarType, v: &Value) -> bool {
    match ty {
        VarType::String => true,
        VarType::Number => as_number(v).is_some(),
        VarType::Boolean => as_bool(v).is_some(),
        VarType::ListString => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
    }
}

/// `a number (42)`, `a list (["devs"])`, `a string ("abc")`: JSON words, as the inputs are given.
pub fn describe(v: &Value) -> String {
    let kind = match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    };
    let mut shown = v.to_string();
    if shown.chars().count() > 60 {
        shown = format!("{}…", shown.chars().take(60).collect::<String>());
    }
    format!("{kind} ({shown})")
}
