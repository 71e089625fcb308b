//! The JSON renderer (`--format json`). The envelope is part of hensuc's interface (tools parse
//! it; `format_version` changes when it does):
//!
//! ```json
//! {
//!   "format_version": 2,
//!   "valid": false,
//!   "error_count": 1,
//!   "warning_count": 0,
//!   "diagnostics": [
//!     {
//!       "severity": "error",
//!       "code": "E0201",
//!       "message": "duplicate node id",
//!       "file": "flow.hwf",
//!       "range": { "start": { "line": 7, "column": 10, "byte": 120 }, "end": { … } },
//!       "labels": [
//!         { "file": "flow.hwf", "range": { … }, "message": "defined again here", "primary": true },
//!         { "file": "flow.hwf", "range": { … }, "message": "first defined here", "primary": false }
//!       ],
//!       "notes": [],
//!       "help": [],
//!       "suggestions": [
//!         { "file": "flow.hwf", "range": { … }, "replacement": "review",
//!           "message": "replace with `review`", "applicability": "maybe-incorrect" }
//!       ]
//!     }
//!   ]
//! }
//! ```
//!
//! - `valid` is `error_count == 0` (warnings do not make a file invalid; `--deny-warnings` is the
//!   caller's business).
//! - `file` and `range` are those of the primary label. Lines and columns are 1-based, columns
//!   count Unicode scalar values, `byte` is the 0-based byte offset; `end` is exclusive. Offsets
//!   are clamped to the file (see [`crate::source`]); a file missing from the table is named
//!   `"<unknown>"` with both positions at 1:1, byte 0.
//! - `labels` lists the primary label first (`"primary": true`), then the secondary labels in
//!   their order.
//! - `suggestions` (the machine-readable fixes, see [`crate::Suggestion`]) is present only when
//!   the diagnostic has one; `range` is the text to replace, `replacement` what to write there.
//! - Keys are written in the order shown; diagnostics in the order given.

use serde::Serialize;

use crate::{
    Applicability, Counts, Diagnostic, FileId, Files, Label, Position, Severity, Span, Suggestion,
};

/// The envelope's `format_version`: a number, like every hensuc JSON output's (version 1 wrote
/// it as the string `"1"`; nothing else changed in 2).
pub const JSON_FORMAT_VERSION: u32 = 2;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct JsonReport {
    pub format_version: u32,
    pub valid: bool,
    pub error_count: usize,
    pub warning_count: usize,
    pub diagnostics: Vec<JsonDiagnostic>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct JsonDiagnostic {
    pub severity: Severity,
    pub code: &'static str,
    pub message: String,
    pub file: String,
    pub range: JsonRange,
    pub labels: Vec<JsonLabel>,
    pub notes: Vec<String>,
    pub help: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<JsonSuggestion>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct JsonRange {
    pub start: Position,
    pub end: Position,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct JsonLabel {
    pub file: String,
    pub range: JsonRange,
    pub message: String,
    pub primary: bool,
}

/// A machine-readable fix: replace the text of `range` in `file` with `replacement`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct JsonSuggestion {
    pub file: String,
    pub range: JsonRange,
    pub replacement: String,
    pub message: String,
    pub applicability: Applicability,
}

fn range(files: &Files, label: &Label) -> JsonRange {
    span_range(files, label.file, label.span)
}

fn span_range(files: &Files, file: FileId, span: Span) -> JsonRange {
    let (start, end) = files.range(file, span);
    JsonRange { start, end }
}

fn json_suggestion(files: &Files, s: &Suggestion) -> JsonSuggestion {
    JsonSuggestion {
        file: files.name(s.file).to_owned(),
        range: span_range(files, s.file, s.span),
        replacement: s.replacement.clone(),
        message: s.message.clone(),
        applicability: s.applicability,
    }
}

fn json_label(files: &Files, label: &Label, primary: bool) -> JsonLabel {
    JsonLabel {
        file: files.name(label.file).to_owned(),
        range: range(files, label),
        message: label.message.clone(),
        primary,
    }
}

impl JsonDiagnostic {
    pub fn new(files: &Files, d: &Diagnostic) -> Self {
        let labels = std::iter::once(json_label(files, &d.primary, true))
            .chain(d.secondary.iter().map(|l| json_label(files, l, false)))
            .collect();
        JsonDiagnostic {
            severity: d.severity,
            code: d.code,
            message: d.message.clone(),
            file: files.name(d.primary.file).to_owned(),
            range: range(files, &d.primary),
            labels,
            notes: d.notes.clone(),
            help: d.help.clone(),
            suggestions: d
                .suggestions
                .iter()
                .map(|s| json_suggestion(files, s))
                .collect(),
        }
    }
}

impl JsonReport {
    pub fn new(files: &Files, diagnostics: &[Diagnostic]) -> Self {
        let counts = Counts::of(diagnostics);
        JsonReport {
            format_version: JSON_FORMAT_VERSION,
            valid: counts.errors == 0,
            error_count: counts.errors,
            warning_count: counts.warnings,
            diagnostics: diagnostics
                .iter()
                .map(|d| JsonDiagnostic::new(files, d))
                .collect(),
        }
    }
}

/// The envelope as pretty-printed JSON (two-space indent), without a trailing newline (print it
/// with `println!`).
pub fn render_json(files: &Files, diagnostics: &[Diagnostic]) -> String {
    let report = JsonReport::new(files, diagnostics);
    // Serializing these plain structs cannot fail.
    serde_json::to_string_pretty(&report).unwrap_or_default()
}
