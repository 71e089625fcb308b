//! The two scans of text every check shares: `{placeholder}`s of a string, and the strings
//! inside a JSON value (a `send` payload).

use serde_json::Value;

/// Every `{name}` placeholder of a text with its byte offset, with the semantics of the regex
/// `\{([a-zA-Z_][a-zA-Z0-9_]*)\}` (so `{a-b}`, `{ x }` and JSON objects never match).
pub fn placeholders(text: &str) -> impl Iterator<Item = (&str, usize)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            let at = match bytes[i..].iter().position(|&b| b == b'{') {
                Some(k) => i + k,
                None => {
                    i = bytes.len();
                    return None;
                }
            };
            let start = at + 1;
            let mut j = start;
            if j < bytes.len() && (bytes[j].is_ascii_alphabetic() || bytes[j] == b'_') {
                j += 1;
                while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                    j += 1;
                }
                if j < bytes.len() && bytes[j] == b'}' {
                    i = j + 1;
                    return Some((&text[start..j], at));
                }
            }
            i = at + 1;
        }
        None
    })
}

/// Every string inside a JSON value (object values and array items, recursively; not keys).
pub(crate) fn json_strings<'v>(value: &'v Value, out: &mut Vec<&'v str>) {
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| json_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| json_strings(v, out)),
        _ => {}
    }
}
