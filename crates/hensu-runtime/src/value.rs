//! The execution context (an ordered map of JSON values) and the value renderings upstream uses:
//! template rendering (docs/language.md, *Prompts and templates*), Java `toString()` (stub `{{name}}` substitution), numeric and
//! canonical-string coercions (score, condition rules).

use std::borrow::Cow;

use hensu_ir::{canonical_number, java_double_to_string};
use serde_json::{Number, Value};

pub use crate::context::Context;

/// A fast, deterministic hasher for short string keys (rustc's Fx hash).
pub use rustc_hash::FxBuildHasher;

/// Renders a number as upstream does: Java integers as digits, doubles with Java's
/// `Double.toString` (`85.0`, `1.0E-7`).
pub fn render_number(n: &Number) -> Cow<'static, str> {
    if let Some(i) = n.as_i64() {
        Cow::Owned(i.to_string())
    } else if let Some(u) = n.as_u64() {
        Cow::Owned(u.to_string())
    } else {
        Cow::Owned(java_double_to_string(n.as_f64().unwrap_or(f64::NAN)))
    }
}

/// Template rendering of a value (upstream `SimpleTemplateResolver`): null → `""`, strings as
/// is, numbers Java-style, maps and lists as compact JSON.
pub fn render(value: &Value) -> Cow<'_, str> {
    match value {
        Value::Null => Cow::Borrowed(""),
        Value::String(s) => Cow::Borrowed(s.as_str()),
        Value::Bool(b) => Cow::Borrowed(if *b { "true" } else { "false" }),
        Value::Number(n) => render_number(n),
        Value::Array(_) | Value::Object(_) => Cow::Owned(compact_json(value)),
    }
}

/// Compact JSON (upstream `JsonUtil.toJson`): keys in map order, standard escapes.
pub fn compact_json(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// Java `Object.toString()` of a context value: maps as `{k=v, …}`, lists as `[a, b]`, doubles
/// Java-style, `null` as `null`.
pub fn java_to_string(value: &Value) -> String {
    let mut out = String::new();
    write_java(value, &mut out);
    out
}

fn write_java(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::String(s) => out.push_str(s),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&render_number(n)),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_java(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(k);
                out.push('=');
                write_java(v, out);
            }
            out.push('}');
        }
    }
}

/// A Number, or a String that parses as a finite number (Java `Double.parseDouble` after trim).
pub fn as_number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => parse_java_double(s),
        _ => None,
    }
}

/// `Double.parseDouble` for the common forms (decimal and exponent notation, surrounding
/// whitespace); non-finite spellings are refused.
pub fn parse_java_double(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    let body = t.strip_suffix(['d', 'D', 'f', 'F']).unwrap_or(t);
    if !body
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'))
    {
        return None;
    }
    body.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// A Boolean, or a String equal to `true`/`false` ignoring case.
pub fn as_bool(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
        Value::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
        _ => None,
    }
}

/// The canonical string of a scalar for equality conditions (numbers as
/// [`canonical_number`], strings as is, booleans `true`/`false`); `None` for maps and lists.
pub fn canonical_string(value: &Value) -> Option<Cow<'_, str>> {
    match value {
        Value::String(s) => Some(Cow::Borrowed(s.as_str())),
        Value::Bool(b) => Some(Cow::Borrowed(if *b { "true" } else { "false" })),
        Value::Number(n) => Some(Cow::Owned(match n.as_i64() {
            Some(i) => i.to_string(),
            None => canonical_number(n.as_f64().unwrap_or(f64::NAN)),
        })),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// The Java simple type name of a value as upstream diagnostics print it.
pub fn java_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::String(_) => "String",
        Value::Bool(_) => "Boolean",
        Value::Number(n) if n.is_f64() => "Double",
        Value::Number(_) => "Integer",
        Value::Array(_) => "ArrayList",
        Value::Object(_) => "LinkedHashMap",
    }
}

/// A JSON number from an `f64` (NaN/∞ become `null`).
pub fn f64_value(v: f64) -> Value {
    Number::from_f64(v)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

/// Sets `context["current_node"]` without reallocating when the key exists.
pub(crate) fn set_current_node(ctx: &mut Context, id: &str) {
    match ctx.get_mut("current_node") {
        Some(Value::String(s)) => {
            s.clear();
            s.push_str(id);
        }
        Some(v) => *v = Value::String(id.to_string()),
        None => {
            ctx.insert("current_node".to_string(), Value::String(id.to_string()));
        }
    }
}

/// `ctx.shift_remove(key)`, with a lookup first: the engine removes several variables per step
/// that are almost never there (routing variables, `recommendation`, `_prompt_override`), and
/// the plain lookup is the cheaper probe.
#[inline]
pub(crate) fn remove_var(ctx: &mut Context, key: &str) -> Option<Value> {
    let at = ctx.get_index_of(key)?;
    ctx.shift_remove_index(at).map(|(_, v)| v)
}
