//! The catalogue of diagnostic codes: for each code its severity, a short title and the
//! explanation shown by `hensuc explain CODE` (like `rustc --explain`).
//!
//! Codes are stable (language.md §5): never reuse or renumber one; add new ones at the end of
//! their range. Every code a phase emits must be here ([`is_known`]).

use crate::Severity;

/// One catalogue entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodeInfo {
    /// `E0201`, `W0303`, …
    pub code: &'static str,
    pub severity: Severity,
    /// Short lowercase title, e.g. `duplicate node id`.
    pub title: &'static str,
    /// One paragraph: when the diagnostic is reported and why.
    pub explanation: &'static str,
    /// A small erroneous example (may be empty for driver errors that have no source example).
    pub example: &'static str,
    /// How to fix it: a corrected example or instructions.
    pub fix: &'static str,
}

/// Find a code (exact match, e.g. `"E0201"`; lowercase `e0201` is accepted too).
pub fn lookup(code: &str) -> Option<&'static CodeInfo> {
    CODES.iter().find(|c| c.code.eq_ignore_ascii_case(code))
}

/// Every code, sorted: errors by number, then warnings by number.
pub fn all() -> &'static [CodeInfo] {
    CODES
}

/// Whether a code is in the catalogue (exact match).
pub fn is_known(code: &str) -> bool {
    CODES.iter().any(|c| c.code == code)
}

fn indent(text: &str) -> String {
    let mut out = String::new();
    for line in text.trim_matches('\n').lines() {
        if line.is_empty() {
            out.push('\n');
        } else {
            out.push_str("    ");
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The `hensuc explain` text: a heading, the explanation, the erroneous example and the fix.
/// Plain text with markdown-ish structure; ends with a newline.
pub fn render_explanation(info: &CodeInfo) -> String {
    let severity = match info.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let mut out = format!(
        "{} ({severity}): {}\n\n{}\n",
        info.code,
        info.title,
        info.explanation.trim()
    );
    if !info.example.trim().is_empty() {
        out.push_str("\nErroneous example:\n\n");
        out.push_str(&indent(info.example));
    }
    if !info.fix.trim().is_empty() {
        if info.fix.contains('\n') {
            out.push_str("\nFix:\n\n");
            out.push_str(&indent(info.fix));
        } else {
            out.push_str("\nFix: ");
            out.push_str(info.fix.trim());
            out.push('\n');
        }
    }
    out
}

const fn e(
    code: &'static str,
    title: &'static str,
    explanation: &'static str,
    example: &'static str,
    fix: &'static str,
) -> CodeInfo {
    CodeInfo {
        code,
        severity: Severity::Error,
        title,
        explanation,
        example,
        fix,
    }
}

const fn w(
    code: &'static str,
    title: &'static str,
    explanation: &'static str,
    example: &'static str,
    fix: &'static str,
) -> CodeInfo {
    CodeInfo {
        code,
        severity: Severity::Warning,
        title,
        explanation,
        example,
        fix,
    }
}

static CODES: &[CodeInfo] = &[
    e(
        "E0201",
        "duplicate node id",
        "Two nodes of one graph have the same id.",
        "",
        "",
    ),
    w(
        "W0001",
        "`package`/`import` ignored",
        "`package` and `import` lines are ignored.",
        "",
        "",
    ),
];
