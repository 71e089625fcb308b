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
            // memchr: a prompt has a few placeholders in hundreds of bytes (the scan was 3 % of
            // a large check byte by byte).
            let at = match memchr::memchr(b'{', &bytes[i..]) {
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

#[cfg(test)]
mod tests {
    use super::placeholders;
    use proptest::prelude::*;

    /// The regex `\{([a-zA-Z_][a-zA-Z0-9_]*)\}` by brute force: at each `{`, the longest name
    /// closed by `}`; matches do not overlap.
    fn reference(text: &str) -> Vec<(&str, usize)> {
        let b = text.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'{' {
                let mut j = i + 1;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                    j += 1;
                }
                let first_ok = b
                    .get(i + 1)
                    .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_');
                if first_ok && j < b.len() && b[j] == b'}' {
                    out.push((&text[i + 1..j], i));
                    i = j + 1;
                    continue;
                }
            }
            i += 1;
        }
        out
    }

    #[test]
    fn placeholders_follow_the_regex() {
        for text in [
            "",
            "{x}",
            "a {x} b {y_1} {1a} {a-b} { x } {{z}} {_} {é} {x",
            "{\"json\": {\"k\": 1}} {ok}",
        ] {
            assert_eq!(
                placeholders(text).collect::<Vec<_>>(),
                reference(text),
                "{text}"
            );
        }
    }

    proptest! {
        #[test]
        fn placeholders_follow_the_regex_on_random_text(text in "[{}a-z0-9_ é-]{0,120}") {
            prop_assert_eq!(placeholders(&text).collect::<Vec<_>>(), reference(&text));
        }
    }
}
