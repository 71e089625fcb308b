//! TOML and serde errors → diagnostics whose messages never repeat a value of the file (it may be
//! a pasted key): the place is given by the span, the message says what kind of thing was found
//! and what was expected. What serde lists after "expected" comes from the schema (type names,
//! field and variant names), so it is kept word for word.

use hensu_diagnostics::{Diagnostic, Span, codes};

/// A name from the file (a provider, a server, a model) as messages may show it: itself, or
/// `…` when it looks like a pasted secret (a long run of letters and digits mixing cases and
/// digits, or anything that is not a plain name).
pub(crate) fn shown_name(name: &str) -> &str {
    let plain = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    let secret_like = name.split(|c: char| !c.is_ascii_alphanumeric()).any(|run| {
        run.len() >= 12
            && run.bytes().any(|b| b.is_ascii_digit())
            && run.bytes().any(|b| b.is_ascii_uppercase())
            && run.bytes().any(|b| b.is_ascii_lowercase())
    });
    if plain && !secret_like { name } else { "…" }
}

/// A TOML syntax error. The parser's descriptions and expected tokens come from the grammar,
/// never from the input.
pub(crate) fn syntax_error(text: &str, e: &toml::de::Error) -> Diagnostic {
    let span = error_span(text, e, Span::default());
    Diagnostic::new(
        codes::E0906,
        "invalid `hensu.toml`: not valid TOML",
        span,
        e.message().trim().to_string(),
    )
    .with_help("fix the TOML syntax; a run refuses the file until then")
}

/// A serde error while reading the top-level section `section` (key span `section_key`).
pub(crate) fn section_error(
    text: &str,
    e: &toml::de::Error,
    section: &str,
    section_key: Span,
    key: Option<&str>,
) -> Diagnostic {
    let span = error_span(text, e, section_key);
    let message = e.message().trim();
    if let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.strip_suffix('`'))
    {
        return Diagnostic::new(
            codes::E0906,
            format!("invalid `hensu.toml`: `[{section}]` needs `{field}`"),
            span,
            format!("`{field}` is missing here"),
        );
    }
    let found = text
        .get(span.range())
        .unwrap_or("")
        .trim_matches(['"', '\'']);
    if let Some(expected) = message
        .strip_prefix("unknown field ")
        .and_then(|rest| rest.split_once(", expected ").map(|(_, e)| e))
        .or_else(|| {
            message
                .strip_prefix("unknown field ")
                .filter(|rest| rest.ends_with(", there are no fields"))
                .map(|_| "")
        })
    {
        return unknown_key(section, span, section_key, found, expected);
    }
    if let Some(rest) = message.strip_prefix("unknown variant ")
        && let Some((_, expected)) = rest.split_once(", expected ")
    {
        let mut d = Diagnostic::new(
            codes::E0906,
            format!("invalid `hensu.toml`: unknown value in `[{section}]`"),
            span,
            format!("expected {expected}"),
        );
        if let Some(help) = hensu_sema::suggest::help_for(found, schema_words(expected)) {
            d = d.with_help(help);
        }
        return d;
    }
    if let Some(rest) = message.strip_prefix("invalid type: ")
        && let Some((unexpected, expected)) = rest.split_once(", expected ")
    {
        let kind = kind_of(unexpected);
        let mut d = Diagnostic::new(
            codes::E0906,
            format!("invalid `hensu.toml`: wrong type in `[{section}]`"),
            span,
            format!("expected {}, found {kind}", expected_kind(expected)),
        );
        if expected.contains("sequence") && kind == "a string" {
            d = d.with_help(list_help(key));
        }
        return d;
    }
    if let Some(rest) = message.strip_prefix("invalid value: ")
        && let Some((unexpected, expected)) = rest.split_once(", expected ")
    {
        return Diagnostic::new(
            codes::E0906,
            format!("invalid `hensu.toml`: invalid value in `[{section}]`"),
            span,
            format!(
                "expected {}, found {}",
                expected_kind(expected),
                kind_of(unexpected)
            ),
        );
    }
    Diagnostic::new(
        codes::E0906,
        format!("invalid `hensu.toml`: invalid `[{section}]`"),
        span,
        without_values(message),
    )
}

/// E0907 (a key of a section) or W0903 (a top-level section): `found` is only compared with the
/// schema's words for the did-you-mean, never printed.
fn unknown_key(
    section: &str,
    span: Span,
    section_key: Span,
    found: &str,
    expected: &str,
) -> Diagnostic {
    let words = schema_words(expected);
    let top_level = span == section_key;
    let mut d = if top_level {
        Diagnostic::new(
            codes::W0903,
            "unknown section in `hensu.toml`",
            span,
            "hensu does not read this section; its settings have no effect",
        )
    } else {
        Diagnostic::new(
            codes::E0907,
            format!("unknown key in `[{section}]` of `hensu.toml`"),
            span,
            "not a key of this section",
        )
    };
    if found == "api_key" {
        d = d.with_help(
            "keys never go into hensu.toml: name the environment variable that holds it, \
             `api_key_env = \"OPENAI_API_KEY\"`",
        );
    } else if let Some(help) = hensu_sema::suggest::help_for(found, words.iter().copied()) {
        d = d.with_help(help);
    } else if !words.is_empty() {
        let list: Vec<String> = words.iter().map(|w| format!("`{w}`")).collect();
        d = d.with_help(format!("known keys: {}", list.join(", ")));
    }
    d
}

/// The help for one string where a list is expected: the list form, for `key` when known.
fn list_help(key: Option<&str>) -> String {
    match key {
        Some("args") => "write one string per argument: `args = [\"server.py\", \"--stdio\"]`; \
                         hensu never splits a string into words (no shell is involved)"
            .to_string(),
        Some(key) => format!("write a list, even of one item: `{key} = [\"…\"]`"),
        None => "write a list, even of one item: `[\"…\"]`".to_string(),
    }
}

/// The names serde lists as expected: `` `a`, `b` `` or `one of `a`, `b``.
fn schema_words(expected: &str) -> Vec<&str> {
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|w| !w.is_empty())
        .collect()
}

/// serde's "unexpected" description (`string "…"`, `integer `5``, `sequence`) as a kind.
fn kind_of(unexpected: &str) -> &'static str {
    let word = unexpected.split([' ', '"', '`']).next().unwrap_or("");
    match word {
        "string" | "character" => "a string",
        "integer" => "an integer",
        "floating" => "a number with a fraction",
        "boolean" => "a boolean",
        "sequence" => "a list",
        "map" => "a table",
        "unit" | "option" => "nothing",
        _ => "another kind of value",
    }
}

/// serde's "expected" description in the words of a TOML file (`u64` → a non-negative
/// integer); anything else (field and variant lists) is kept as written.
fn expected_kind(expected: &str) -> &str {
    match expected {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a non-negative integer",
        "i8" | "i16" | "i32" | "i64" | "isize" => "an integer",
        "f32" | "f64" => "a number",
        "a sequence" => "a list",
        "a map" => "a table",
        e if e.starts_with("struct ") => "a table",
        e => e,
    }
}

/// The span of an error, or `fallback` when it has none.
fn error_span(text: &str, e: &toml::de::Error, fallback: Span) -> Span {
    match e.span() {
        Some(r) if r.start <= text.len() => Span::from_range(r.start..r.end.min(text.len())),
        _ => fallback,
    }
}

/// `message` with every quoted span before the first ", expected " replaced (those may be
/// values from the file); the expected part is the schema's and stays.
fn without_values(message: &str) -> String {
    let (head, tail) = match message.find(", expected ") {
        Some(at) => message.split_at(at),
        None => (message, ""),
    };
    let mut out = String::with_capacity(message.len());
    let mut rest = head;
    while let Some(open) = rest.find(['"', '`', '\'']) {
        let quote = rest[open..].chars().next().unwrap_or('"');
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find(quote) {
            Some(close) => {
                out.push_str("a value");
                rest = &after[close + 1..];
            }
            None => {
                out.push_str("a value");
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out.push_str(tail);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_dropped_but_the_schema_stays() {
        assert_eq!(
            without_values("bad \"sk-secret\" here, expected `a`, `b`"),
            "bad a value here, expected `a`, `b`"
        );
        assert_eq!(schema_words("one of `a`, `b`"), vec!["a", "b"]);
        assert_eq!(kind_of("string \"x\""), "a string");
        assert_eq!(expected_kind("u64"), "a non-negative integer");
        assert_eq!(expected_kind("struct PriceEntry"), "a table");
    }
}
