//! JSON extraction from agent output (upstream `OutputExtractionPostProcessor`;
//! docs/language.md, *Output extraction*): the first
//! balanced `{…}` of the text (string-aware brace matching), parsed with numbers as doubles.

use indexmap::IndexMap;
use serde_json::Value;

use crate::value::f64_value;

/// The first balanced JSON-object-looking slice `{…}` of `s`, starting at the first `{`.
/// Braces inside JSON strings (with `\` escapes) do not count.
pub fn first_balanced_object(s: &str) -> Option<&str> {
    let start = s.find('{')?;
    let bytes = s.as_bytes();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (off, &b) in bytes[start..].iter().enumerate() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(&s[start..=start + off]);
                }
            }
            _ => {}
        }
    }
    None
}

/// Parses the first balanced object of `s` into an ordered map; numbers become doubles (as
/// upstream's hand-written parser). `None` when there is no object or it does not parse.
pub fn extract_object(s: &str) -> Option<IndexMap<String, Value>> {
    let slice = first_balanced_object(s)?;
    let value: Value = serde_json::from_str(slice).ok()?;
    match doubles(value) {
        Value::Object(map) => Some(map.into_iter().collect()),
        _ => None,
    }
}

/// Converts every number of a value to a double.
pub fn doubles(value: Value) -> Value {
    match value {
        Value::Number(n) => f64_value(n.as_f64().unwrap_or(f64::NAN)),
        Value::Array(items) => Value::Array(items.into_iter().map(doubles).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, doubles(v))).collect())
        }
        other => other,
    }
}
