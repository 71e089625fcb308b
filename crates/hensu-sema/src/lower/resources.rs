//! Prompt and rubric values: inline text, or a `*.md` file read through the [`FileProvider`]
//! from `prompts/` / `rubrics/` (E0208 not found, E0209 escapes), rubric parsing (E0107 for
//! `pass_threshold`), and `{name}` placeholders with their spans.

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::{Rubric, RubricError, parse_rubric};
use hensu_syntax::ast::{Expr, ExprKind};

use super::Lowerer;
use crate::files::{FileError, ResourceDir, check_relative_path};
use crate::suggest::help_and_fix;

/// Whether a prompt/rubric value names a markdown file (upstream `isMarkdownFile`).
pub fn is_markdown_file(value: &str) -> bool {
    value.len() >= 3
        && value.is_char_boundary(value.len() - 3)
        && value[value.len() - 3..].eq_ignore_ascii_case(".md")
}

/// Every `{name}` placeholder (`\{([a-zA-Z_][a-zA-Z0-9_]*)}`) of `text`: the name and the byte
/// range of the whole `{name}`.
pub fn placeholders(text: &str) -> Vec<(String, std::ops::Range<usize>)> {
    // Same scan as the checks' (`check::placeholders`), which jumps from `{` to `{`.
    crate::check::placeholders(text)
        .map(|(name, at)| (name.to_string(), at..at + name.len() + 2))
        .collect()
}

/// A resolved prompt: its text and the placeholders found in it.
pub(crate) struct Prompt {
    pub text: String,
    pub placeholders: Vec<(String, Span)>,
}

impl Lowerer<'_> {
    /// Reads a resource file (E0208 / E0209 on failure).
    fn read_resource(&mut self, dir: ResourceDir, name: &str, span: Span) -> Option<String> {
        let result = check_relative_path(name).and_then(|()| self.files.read(dir, name));
        let what = match dir {
            ResourceDir::Prompts => "prompt",
            ResourceDir::Rubrics => "rubric",
        };
        match result {
            Ok(text) => Some(text),
            Err(FileError::Escapes) => {
                let d = Diagnostic::new(
                    codes::E0209,
                    format!("{what} path `{name}` escapes the {}/ directory", dir.as_str()),
                    span,
                    "path leaves its directory",
                )
                .with_help(format!(
                    "{what} files are read from {}/ of the project; use a relative path without `..`",
                    dir.as_str()
                ));
                self.emit(d);
                None
            }
            Err(FileError::NotFound) => {
                let d = Diagnostic::new(
                    codes::E0208,
                    format!("{what} file `{name}` not found in {}/", dir.as_str()),
                    span,
                    "file not found",
                );
                let existing = self.files.list(dir);
                let (mut d, suggested) =
                    help_and_fix(d, name, span, existing.iter().map(String::as_str));
                if !suggested {
                    d = d.with_help(format!(
                        "a {what} value ending in `.md` is a file name relative to {}/; create the file or write the {what} inline",
                        dir.as_str()
                    ));
                }
                self.emit(d);
                None
            }
            Err(FileError::Io(msg)) => {
                let d = Diagnostic::new(
                    codes::E0208,
                    format!("{what} file `{name}` cannot be read: {msg}"),
                    span,
                    "unreadable file",
                );
                self.emit(d);
                None
            }
        }
    }

    /// A prompt value: inline text, or the contents of a `.md` file in `prompts/`.
    pub(crate) fn prompt(&mut self, e: &Expr<'_>, what: &dyn std::fmt::Display) -> Option<Prompt> {
        let s = self.str_expr(e, what)?;
        let value = s.value.to_string();
        if is_markdown_file(&value) {
            let text = self.read_resource(ResourceDir::Prompts, &value, e.span)?;
            let placeholders = placeholders(&text)
                .into_iter()
                .map(|(name, _)| (name, e.span))
                .collect();
            return Some(Prompt { text, placeholders });
        }
        Some(Prompt {
            text: value,
            placeholders: Self::string_placeholders(e),
        })
    }

    /// `prompt = …` on a node or branch: `null` clears it; otherwise the text and its
    /// placeholders (left unchanged when the value is in error).
    pub(crate) fn assign_prompt(
        &mut self,
        value: &Expr<'_>,
        what: &dyn std::fmt::Display,
        prompt: &mut Option<String>,
        spans: &mut Vec<(String, Span)>,
    ) {
        spans.clear();
        if matches!(value.kind, ExprKind::Null) {
            *prompt = None;
        } else if let Some(p) = self.prompt(value, what) {
            *prompt = Some(p.text);
            *spans = p.placeholders;
        }
    }

    /// `rubric = …` on a node or branch: `null` clears it.
    pub(crate) fn assign_rubric(
        &mut self,
        value: &Expr<'_>,
        fallback_id: &str,
        what: &dyn std::fmt::Display,
    ) -> Option<Rubric> {
        if matches!(value.kind, ExprKind::Null) {
            None
        } else {
            self.rubric(value, fallback_id, what)
        }
    }

    /// Placeholders of a string used as an action payload value.
    pub(crate) fn string_placeholders(e: &Expr<'_>) -> Vec<(String, Span)> {
        let ExprKind::Str(s) = &e.kind else {
            return Vec::new();
        };
        let base = match (s.verbatim, s.parts.first()) {
            (true, Some(part)) => Some(part.content.start as usize),
            _ => None,
        };
        // Straight from the scan: no intermediate list per prompt.
        crate::check::placeholders(&s.value)
            .map(|(name, at)| {
                let span = match base {
                    Some(b) => Span::from_range(b + at..b + at + name.len() + 2),
                    None => e.span,
                };
                (name.to_string(), span)
            })
            .collect()
    }

    /// A rubric value: inline markdown or a `.md` file in `rubrics/`, parsed with `fallback_id`.
    pub(crate) fn rubric(
        &mut self,
        e: &Expr<'_>,
        fallback_id: &str,
        what: &dyn std::fmt::Display,
    ) -> Option<Rubric> {
        let value = self.string(e, what)?;
        let raw = if is_markdown_file(&value) {
            self.read_resource(ResourceDir::Rubrics, &value, e.span)?
        } else {
            value
        };
        match parse_rubric(fallback_id, &raw) {
            Ok(r) => Some(r),
            Err(err @ RubricError::PassThresholdOutOfRange { .. }) => {
                let d = Diagnostic::new(
                    codes::E0107,
                    err.to_string(),
                    e.span,
                    "pass_threshold must be between 0 and 100",
                )
                .with_help(
                    "set `- pass_threshold: <0..100>` in the rubric's `## Metadata` section",
                );
                self.emit(d);
                None
            }
            Err(err @ RubricError::InvalidNumber { .. }) => {
                let d = Diagnostic::new(
                    codes::E0103,
                    format!("invalid rubric: {err}"),
                    e.span,
                    "invalid rubric",
                )
                .with_help("rubric numbers (`pass_threshold`, `points`) must be numeric");
                self.emit(d);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_placeholders() {
        let p = placeholders("a {topic} {a-b} {} {{x}} {_y1}");
        let names: Vec<&str> = p.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, vec!["topic", "x", "_y1"]);
        assert_eq!(p[0].1, 2..9);
    }

    #[test]
    fn markdown_names() {
        assert!(is_markdown_file("a.md"));
        assert!(is_markdown_file("A.MD"));
        assert!(!is_markdown_file("md"));
        assert!(!is_markdown_file("é"));
    }
}
