//! The SARIF 2.1.0 renderer (`--format sarif`) for code-scanning tools.
//!
//! One run whose `tool.driver` is `hensuc` with the version of this crate and one rule per code
//! that occurs in the results (sorted by code; `shortDescription` = the catalogue title,
//! `fullDescription` = the explanation paragraph, `help` = the full `hensuc explain` text,
//! `defaultConfiguration.level`). Each result has `ruleId`, `ruleIndex`, `level`
//! (`error`/`warning`), `message.text` (the message, then one `note: …` / `help: …` line each),
//! one location for the primary label and `relatedLocations` for the secondary labels.
//!
//! Regions carry `startLine`, `startColumn`, `endLine`, `endColumn` (1-based; columns count Unicode
//! scalar values, declared by the run's `columnKind: "unicodeCodePoints"`; `endColumn` is
//! exclusive as SARIF specifies) plus `byteOffset` and `byteLength`. Artifact URIs are the file
//! names as given, with `\` turned into `/` and characters outside the URI unreserved set and
//! `/` `:` percent-encoded.

use serde_json::{Value, json};

use crate::catalogue;
use crate::{Diagnostic, Files, Label, Severity};

pub const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The tool name written to `tool.driver.name`.
pub const TOOL_NAME: &str = "hensuc";

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

/// Percent-encode a file name into a relative URI reference.
pub fn path_to_uri(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.replace('\\', "/").bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/' | b':') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn location(files: &Files, label: &Label, id: Option<usize>) -> Value {
    let (start, end) = files.range(label.file, label.span);
    let mut loc = serde_json::Map::new();
    if let Some(id) = id {
        loc.insert("id".to_owned(), json!(id));
    }
    let physical = json!({
            "artifactLocation": { "uri": path_to_uri(files.name(label.file)) },
            "region": {
                "startLine": start.line,
                "startColumn": start.column,
                "endLine": end.line,
                "endColumn": end.column,
                "byteOffset": start.byte,
                "byteLength": end.byte - start.byte,
            }
    });
    loc.insert("physicalLocation".to_owned(), physical);
    if !label.message.is_empty() {
        loc.insert("message".to_owned(), json!({ "text": label.message }));
    }
    Value::Object(loc)
}

fn rule(code: &str, fallback_severity: Severity, fallback_title: &str) -> Value {
    match catalogue::lookup(code) {
        Some(info) => json!({
            "id": info.code,
            "shortDescription": { "text": info.title },
            "fullDescription": { "text": info.explanation() },
            "help": { "text": catalogue::render_explanation(info) },
            "defaultConfiguration": { "level": level(info.severity) },
        }),
        None => json!({
            "id": code,
            "shortDescription": { "text": fallback_title },
            "defaultConfiguration": { "level": level(fallback_severity) },
        }),
    }
}

/// The SARIF log as a JSON value.
pub fn sarif_value(files: &Files, diagnostics: &[Diagnostic]) -> Value {
    let mut codes: Vec<&Diagnostic> = Vec::new();
    for d in diagnostics {
        if !codes.iter().any(|c| c.code == d.code) {
            codes.push(d);
        }
    }
    codes.sort_by_key(|d| d.code);
    let rules: Vec<Value> = codes
        .iter()
        .map(|d| rule(d.code, d.severity, &d.message))
        .collect();

    let results: Vec<Value> = diagnostics
        .iter()
        .map(|d| {
            let mut text = d.message.clone();
            for note in &d.notes {
                text.push_str("\nnote: ");
                text.push_str(note);
            }
            for help in &d.help {
                text.push_str("\nhelp: ");
                text.push_str(help);
            }
            let index = codes.iter().position(|c| c.code == d.code).unwrap_or(0);
            let mut result = json!({
                "ruleId": d.code,
                "ruleIndex": index,
                "level": level(d.severity),
                "message": { "text": text },
                "locations": [location(files, &d.primary, None)],
            });
            if !d.secondary.is_empty() {
                let related: Vec<Value> = d
                    .secondary
                    .iter()
                    .enumerate()
                    .map(|(i, l)| location(files, l, Some(i)))
                    .collect();
                if let Some(obj) = result.as_object_mut() {
                    obj.insert("relatedLocations".to_owned(), Value::Array(related));
                }
            }
            result
        })
        .collect();

    json!({
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": TOOL_NAME,
                    "version": env!("CARGO_PKG_VERSION"),
                    "rules": rules,
                }
            },
            "columnKind": "unicodeCodePoints",
            "results": results,
        }]
    })
}

/// The SARIF log, pretty-printed, without a trailing newline (print it with `println!`).
pub fn render_sarif(files: &Files, diagnostics: &[Diagnostic]) -> String {
    // Serializing a `Value` cannot fail.
    serde_json::to_string_pretty(&sarif_value(files, diagnostics)).unwrap_or_default()
}
