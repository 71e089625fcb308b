use serde::Serialize;

use crate::codes::Code;

/// A byte range in one source file. `u32` keeps AST nodes small; inputs above 4 GiB are rejected
/// before lexing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub const fn new(start: u32, end: u32) -> Self {
        Span { start, end }
    }

    /// Build from `usize` offsets (saturating at `u32::MAX`).
    pub fn from_range(range: std::ops::Range<usize>) -> Self {
        let clamp = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
        Span {
            start: clamp(range.start),
            end: clamp(range.end),
        }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    pub fn len(self) -> u32 {
        self.end.saturating_sub(self.start)
    }

    pub fn is_empty(self) -> bool {
        self.end <= self.start
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

impl From<std::ops::Range<usize>> for Span {
    fn from(range: std::ops::Range<usize>) -> Self {
        Span::from_range(range)
    }
}

/// Index of a file in the caller's [`crate::Files`] table. Diagnostics of a
/// single-file compile use `FileId(0)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct FileId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// A place in a file with a short text saying what is there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub file: FileId,
    pub span: Span,
    pub message: String,
}

/// How sure a [`Suggestion`] is; editors apply only machine-applicable ones without asking.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Applicability {
    /// The replacement is certainly what the author meant (e.g. the right enum name in front of
    /// a constant that exists only there).
    MachineApplicable,
    /// The replacement is a likely fix the author should look at (every did-you-mean found by
    /// edit distance).
    MaybeIncorrect,
}

/// A machine-readable fix: replace the bytes of `span` in `file` with `replacement`.
/// The LSP quick fix, the JSON envelope and SARIF `fixes` all read these; the help line says the
/// same thing in prose for the human renderer.
///
/// The span covers exactly the text to replace, and `replacement` is written in its place as is:
/// - a misspelled name in a quoted string (`"revew"`) — the span covers the characters inside
///   the quotes, never the quotes, and the replacement is the bare name (`review`);
/// - a misspelled segment of a dotted path (`Models.GPT_4P`) — the span covers only that
///   segment and the replacement is only the segment (`GPT_4O`);
/// - a bare identifier — the span covers the identifier;
/// - a fix that changes the form of a value (a wrong enum name in front of a constant, a string
///   where a constant is expected) — the span covers the whole value, quotes included, and the
///   replacement is the whole new value (`Decision.APPROVE`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suggestion {
    pub file: FileId,
    pub span: Span,
    pub replacement: String,
    /// Short text for the fix, e.g. "replace with `review`".
    pub message: String,
    pub applicability: Applicability,
}

/// One diagnostic: a stable code (see [`crate::codes`] and [`crate::catalogue`]), a short lowercase message, the
/// primary label (what is wrong here), secondary labels (other places involved), notes and help.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub primary: Label,
    pub secondary: Vec<Label>,
    pub notes: Vec<String>,
    pub help: Vec<String>,
    /// Machine-readable fixes (see [`Suggestion`]).
    pub suggestions: Vec<Suggestion>,
}

impl Diagnostic {
    /// A diagnostic in `FileId(0)`; the severity is taken from the code's letter (`E…` error,
    /// `W…` warning).
    ///
    /// `code` is one of the constants of [`crate::codes`], each of which has an entry in the
    /// [`crate::catalogue`] (an explanation for `hensuc explain`).
    pub fn new(
        code: Code,
        message: impl Into<String>,
        span: Span,
        label: impl Into<String>,
    ) -> Self {
        let severity = if code.is_warning() {
            Severity::Warning
        } else {
            Severity::Error
        };
        Diagnostic {
            code: code.as_str(),
            severity,
            message: message.into(),
            primary: Label {
                file: FileId(0),
                span,
                message: label.into(),
            },
            secondary: Vec::new(),
            notes: Vec::new(),
            help: Vec::new(),
            suggestions: Vec::new(),
        }
    }

    pub fn in_file(mut self, file: FileId) -> Self {
        if self.primary.file == FileId(0) {
            for label in &mut self.secondary {
                if label.file == FileId(0) {
                    label.file = file;
                }
            }
            for suggestion in &mut self.suggestions {
                if suggestion.file == FileId(0) {
                    suggestion.file = file;
                }
            }
        }
        self.primary.file = file;
        self
    }

    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Self {
        self.secondary.push(Label {
            file: self.primary.file,
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_label_in(mut self, file: FileId, span: Span, message: impl Into<String>) -> Self {
        self.secondary.push(Label {
            file,
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help.push(help.into());
        self
    }

    /// Add a machine-readable fix in the primary label's file.
    pub fn with_suggestion(
        mut self,
        span: Span,
        replacement: impl Into<String>,
        message: impl Into<String>,
        applicability: Applicability,
    ) -> Self {
        self.suggestions.push(Suggestion {
            file: self.primary.file,
            span,
            replacement: replacement.into(),
            message: message.into(),
            applicability,
        });
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}
