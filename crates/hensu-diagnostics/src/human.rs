//! The human renderer: rustc-style headers, source snippets drawn by ariadne, notes, help and a
//! summary line.
//!
//! Layout of one diagnostic:
//!
//! ```text
//! error[E0201]: duplicate node id
//!    ╭─[ flow.hwf:7:10 ]
//!    │
//!  3 │     node("draft") {
//!    │          ───┬───
//!    │             ╰───── first defined here
//!    ┆
//!  7 │     node("draft") {
//!    │          ───┬───
//!    │             ╰───── defined again here
//! ───╯
//!    = note: upstream Hensu silently keeps the last definition
//!    = help: rename one of the nodes
//! ```
//!
//! - The header is `severity[CODE]: message`, then ariadne draws every label: the primary label's
//!   file first, then the other files in order of first appearance. The `[ file:line:col ]`
//!   reference points at the primary label (in the primary file) or at the first label.
//! - Notes, then help, follow as `= note: …` / `= help: …` lines aligned with the margin.
//! - Diagnostics are separated by a blank line and rendered in the order given.
//! - After them (separated by a blank line) comes the summary line, see [`summary_line`]: nothing
//!   when there are no diagnostics.
//! - Labels in a file that is not in the [`Files`] table, or whose text is empty (e.g. an I/O
//!   error reported against the file), are not drawn; a diagnostic with no drawable label shows
//!   `--> name` (the primary label's file, `<unknown>` if not in the table) instead of a snippet.
//! - A zero-length span is drawn on the character after it; at the end of a text ending with a
//!   line break, on that line break (just after the last line's content).
//!
//! Colour (ANSI escapes) is emitted only when asked: the caller resolves [`ColorChoice`] to a
//! `bool`. Output is deterministic for a given input and colour setting.
//!
//! - A label on a source line longer than [`LONG_LINE_BYTES`] (minified or generated input, a
//!   50 MB string literal) is not drawn by ariadne, which would copy and print the whole line:
//!   each label gets one excerpt of at most about [`EXCERPT_CHARS`] characters around it, cut
//!   with `…`, and a `^^^` underline with its message.
//!
//! Spans are byte ranges; they are clamped to the file and to character boundaries, then converted
//! to character offsets for ariadne (`IndexType::Char`). ariadne 0.6's `IndexType::Byte` mode
//! computes the `[ file:line:col ]` reference of a secondary file from a *character* offset used
//! as a byte offset, which gives wrong positions and panics when that lands inside a multi-byte
//! character; converting ourselves avoids both.

use std::fmt;
use std::io::{self, Write};
use std::ops::Range;

use ariadne::{CharSet, Color, Config, IndexType, Report, ReportKind, Source};

use crate::{Diagnostic, FileId, Files, Label, Severity};

/// The user's colour choice (`--color auto|always|never`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ColorChoice {
    /// Colour when the output is a terminal.
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Resolve to "use colour?" given whether the output stream is a terminal. (Environment
    /// conventions such as `NO_COLOR` are the caller's to apply before choosing `Auto`.)
    pub fn resolve(self, is_terminal: bool) -> bool {
        match self {
            ColorChoice::Auto => is_terminal,
            ColorChoice::Always => true,
            ColorChoice::Never => false,
        }
    }
}

/// Number of errors and warnings in a list of diagnostics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Counts {
    pub errors: usize,
    pub warnings: usize,
}

impl Counts {
    pub fn of(diagnostics: &[Diagnostic]) -> Self {
        let errors = diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        Counts {
            errors,
            warnings: diagnostics.len() - errors,
        }
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The summary line (without colour or newline):
/// - errors present: `error: 3 errors, 1 warning` (`, N warning(s)` only when there are warnings);
/// - only warnings: `warning: 2 warnings`;
/// - nothing: `None`.
pub fn summary_line(counts: Counts) -> Option<String> {
    match (counts.errors, counts.warnings) {
        (0, 0) => None,
        (0, w) => Some(format!("warning: {}", plural(w, "warning"))),
        (e, 0) => Some(format!("error: {}", plural(e, "error"))),
        (e, w) => Some(format!(
            "error: {}, {}",
            plural(e, "error"),
            plural(w, "warning")
        )),
    }
}

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const BOLD_RED: &str = "\x1b[1;31m";
const BOLD_YELLOW: &str = "\x1b[1;33m";
const BOLD_CYAN: &str = "\x1b[1;36m";

fn severity_word(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

fn severity_style(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => BOLD_RED,
        Severity::Warning => BOLD_YELLOW,
    }
}

/// Render diagnostics (in the order given) and the summary line to a `String`. Empty input gives
/// an empty string; otherwise the text ends with a newline.
pub fn render_human(files: &Files, diagnostics: &[Diagnostic], color: bool) -> String {
    let mut out = Vec::new();
    // Writing into a Vec<u8> cannot fail.
    let _ = write_human(&mut out, files, diagnostics, color);
    String::from_utf8_lossy(&out).into_owned()
}

/// [`render_human`] into a writer.
pub fn write_human(
    w: &mut impl Write,
    files: &Files,
    diagnostics: &[Diagnostic],
    color: bool,
) -> io::Result<()> {
    let mut cache = SourceCache::new(files);
    for (i, diagnostic) in diagnostics.iter().enumerate() {
        if i > 0 {
            writeln!(w)?;
        }
        write_one(w, &mut cache, diagnostic, color)?;
    }
    if let Some(summary) = summary_line(Counts::of(diagnostics)) {
        writeln!(w)?;
        if color {
            let (word, rest) = summary.split_once(':').unwrap_or((&summary, ""));
            let style = if word == "error" {
                BOLD_RED
            } else {
                BOLD_YELLOW
            };
            writeln!(w, "{style}{word}{RESET}{BOLD}:{rest}{RESET}")?;
        } else {
            writeln!(w, "{summary}")?;
        }
    }
    Ok(())
}

/// rustc's closing hint for the error codes among `diagnostics`, e.g. "For more information
/// about this error, try `hensuc explain E0204`." (with the list of codes first when there are
/// several). `None` when there is no error: warnings get no hint, as in rustc. The CLI prints it
/// after [`render_human`]; the renderer itself stays free of the command name.
pub fn explain_hint(diagnostics: &[Diagnostic]) -> Option<String> {
    let codes: std::collections::BTreeSet<&str> = diagnostics
        .iter()
        .filter(|d| d.is_error() && crate::is_known(d.code))
        .map(|d| d.code)
        .collect();
    let first = *codes.iter().next()?;
    Some(if codes.len() == 1 {
        format!("For more information about this error, try `hensuc explain {first}`.\n")
    } else {
        let list: Vec<&str> = codes.iter().copied().collect();
        format!(
            "Some errors have detailed explanations: {}.\nFor more information about an error, \
             try `hensuc explain {first}`.\n",
            list.join(", ")
        )
    })
}

/// Render one diagnostic without a summary line (e.g. for a log or an LSP hover).
pub fn render_human_one(files: &Files, diagnostic: &Diagnostic, color: bool) -> String {
    let mut out = Vec::new();
    let mut cache = SourceCache::new(files);
    let _ = write_one(&mut out, &mut cache, diagnostic, color);
    String::from_utf8_lossy(&out).into_owned()
}

/// Identifies a source for ariadne; displays as the file name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct SrcId {
    file: FileId,
    name: String,
}

impl fmt::Display for SrcId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

type AriadneSpan = (SrcId, Range<usize>);

/// Lazily built ariadne sources, one per file of the table.
struct SourceCache<'a> {
    files: &'a Files,
    sources: Vec<Option<Source<&'a str>>>,
}

impl<'a> SourceCache<'a> {
    fn new(files: &'a Files) -> Self {
        SourceCache {
            files,
            sources: (0..files.len()).map(|_| None).collect(),
        }
    }
}

impl<'a> ariadne::Cache<SrcId> for &mut SourceCache<'a> {
    type Storage = &'a str;

    fn fetch(&mut self, id: &SrcId) -> Result<&Source<&'a str>, impl fmt::Debug> {
        let files = self.files;
        match (files.get(id.file), self.sources.get_mut(id.file.0 as usize)) {
            (Some(file), Some(slot)) => Ok(slot.get_or_insert_with(|| Source::from(file.text()))),
            _ => Err(format!("unknown file {}", id.name)),
        }
    }

    fn display<'b>(&self, id: &'b SrcId) -> Option<impl fmt::Display + 'b> {
        Some(id)
    }
}

/// Ariadne span (character offsets) of a label, or `None` when its file is unknown.
///
/// A zero-length span (an insertion point) is drawn as the one character after it, like rustc's
/// single caret; at the end of a text that ends with a line break it is drawn on that line break,
/// i.e. just after the last line's content (ariadne has no row for the empty line after it).
fn ariadne_span(files: &Files, label: &Label) -> Option<AriadneSpan> {
    let file = files.get(label.file).filter(|f| !f.is_empty())?;
    let span = file.clamp_span(label.span);
    let mut start = file.char_offset(span.start) as usize;
    let mut end = file.char_offset(span.end) as usize;
    if start == end {
        let text = file.text();
        let at = span.start as usize;
        if at < text.len() {
            end = start + 1;
        } else if text.ends_with('\n') || text.ends_with('\r') {
            let terminator = if text.ends_with("\r\n") { 2 } else { 1 };
            start = start.saturating_sub(terminator);
            end = start + 1;
        }
    }
    Some((
        SrcId {
            file: label.file,
            name: file.name().to_owned(),
        },
        start..end,
    ))
}

fn digits(mut n: u32) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

fn write_one(
    w: &mut impl Write,
    cache: &mut SourceCache<'_>,
    d: &Diagnostic,
    color: bool,
) -> io::Result<()> {
    let files = cache.files;
    let sev = severity_word(d.severity);
    if color {
        let style = severity_style(d.severity);
        writeln!(
            w,
            "{style}{sev}[{}]{RESET}{BOLD}: {}{RESET}",
            d.code, d.message
        )?;
    } else {
        writeln!(w, "{sev}[{}]: {}", d.code, d.message)?;
    }

    // Labels in known files: the primary's file first, then other files by first appearance;
    // within a file by position (ariadne splits a file into several sections otherwise).
    let all: Vec<(bool, &Label)> = std::iter::once((true, &d.primary))
        .chain(d.secondary.iter().map(|l| (false, l)))
        .collect();
    let mut file_order: Vec<FileId> = Vec::new();
    for (_, label) in &all {
        if files.get(label.file).is_some_and(|f| !f.is_empty()) && !file_order.contains(&label.file)
        {
            file_order.push(label.file);
        }
    }
    let mut labels: Vec<(usize, u32, u32, bool, &Label)> = all
        .iter()
        .filter_map(|&(primary, label)| {
            let order = file_order.iter().position(|f| *f == label.file)?;
            Some((order, label.span.start, label.span.end, !primary, label))
        })
        .collect();
    labels.sort_by_key(|&(order, start, end, secondary, _)| (order, start, end, secondary));

    // Width of the line-number margin, as ariadne computes it (digits of the last line shown).
    let mut max_line = 0;
    for &(_, _, _, _, label) in &labels {
        if let Some(file) = files.get(label.file) {
            let span = file.clamp_span(label.span);
            max_line = max_line.max(
                file.line_col(span.end.saturating_sub(1).max(span.start))
                    .line,
            );
        }
    }
    let margin = if labels.is_empty() {
        2
    } else {
        digits(max_line) + 2
    };

    let long_line = labels
        .iter()
        .any(|&(_, _, _, _, label)| touches_long_line(files, label));
    let report_span = ariadne_span(files, &d.primary).or_else(|| {
        labels
            .first()
            .and_then(|&(_, _, _, _, l)| ariadne_span(files, l))
    });
    match report_span {
        Some(_) if long_line => {
            let drawn: Vec<(bool, &Label)> = labels
                .iter()
                .map(|&(_, _, _, secondary, label)| (secondary, label))
                .collect();
            write_excerpts(w, files, &drawn, margin, color, d.severity)?;
        }
        Some(span) => {
            let kind = match d.severity {
                Severity::Error => ReportKind::Error,
                Severity::Warning => ReportKind::Warning,
            };
            let config = Config::default()
                .with_color(color)
                .with_index_type(IndexType::Char)
                .with_char_set(CharSet::Unicode);
            let mut builder = Report::<AriadneSpan>::build(kind, span).with_config(config);
            for &(order, _, _, secondary, label) in &labels {
                let Some(span) = ariadne_span(files, label) else {
                    continue;
                };
                let mut l = ariadne::Label::new(span)
                    .with_order(i32::try_from(order).unwrap_or(i32::MAX))
                    .with_priority(if secondary { 0 } else { 1 });
                if !label.message.is_empty() {
                    l = l.with_message(&label.message);
                }
                if color {
                    l = l.with_color(match (secondary, d.severity) {
                        (true, _) => Color::Blue,
                        (false, Severity::Error) => Color::Red,
                        (false, Severity::Warning) => Color::Yellow,
                    });
                }
                builder.add_label(l);
            }
            let mut buf = Vec::new();
            builder.finish().write(&mut *cache, &mut buf)?;
            let text = String::from_utf8_lossy(&buf);
            // ariadne's own header is one line; ours replaces it. Trailing spaces are dropped.
            let body = text.split_once('\n').map_or("", |(_, rest)| rest);
            for line in body.lines() {
                writeln!(w, "{}", line.trim_end_matches(' '))?;
            }
        }
        None => {
            writeln!(w, "{:margin$}--> {}", "", files.name(d.primary.file))?;
        }
    }

    for (kind, items) in [("note", &d.notes), ("help", &d.help)] {
        for item in items {
            let mut lines = item.lines();
            let first = lines.next().unwrap_or("");
            if color {
                writeln!(w, "{:margin$}{BOLD_CYAN}= {kind}:{RESET} {first}", "")?;
            } else {
                writeln!(w, "{:margin$}= {kind}: {first}", "")?;
            }
            for line in lines {
                writeln!(w, "{:width$}{line}", "", width = margin + kind.len() + 4)?;
            }
        }
    }
    Ok(())
}

/// Lines longer than this (in bytes) are shown as excerpts around each label.
pub const LONG_LINE_BYTES: usize = 1_000;
/// Characters of context kept on each side of a label in an excerpt.
const EXCERPT_CONTEXT: usize = 40;
/// At most this many characters of a label are shown (and underlined) in an excerpt.
const EXCERPT_LABEL: usize = 80;
/// The widest excerpt: label plus context on both sides.
pub const EXCERPT_CHARS: usize = EXCERPT_LABEL + 2 * EXCERPT_CONTEXT;

/// Whether any line `label` covers is longer than [`LONG_LINE_BYTES`].
fn touches_long_line(files: &Files, label: &Label) -> bool {
    let Some(file) = files.get(label.file).filter(|f| !f.is_empty()) else {
        return false;
    };
    let span = file.clamp_span(label.span);
    let first = file.line_col(span.start).line;
    let last = file.line_col(span.end).line;
    // A label over many lines is drawn by ariadne only if all of them are short; checking the
    // first and last line bounds the work, and the lines between are drawn elided by ariadne.
    [first, last]
        .iter()
        .any(|&line| file.line_span(line).len() as usize > LONG_LINE_BYTES)
}

fn floor_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(text: &str, mut i: usize) -> usize {
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// `n` characters back from `from` (not before `floor`).
fn back_chars(text: &str, from: usize, n: usize, floor: usize) -> usize {
    text[floor..from]
        .char_indices()
        .rev()
        .nth(n.saturating_sub(1))
        .map_or(floor, |(i, _)| floor + i)
}

/// `n` characters forward from `from` (not past `ceil`).
fn forward_chars(text: &str, from: usize, n: usize, ceil: usize) -> usize {
    text[from..ceil]
        .char_indices()
        .nth(n)
        .map_or(ceil, |(i, _)| from + i)
}

/// Printable form of source text in an excerpt: one column per character, so the underline
/// lines up (tabs become spaces, control characters U+FFFD).
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\t' => ' ',
            c if c.is_control() => '\u{FFFD}',
            c => c,
        })
        .collect()
}

/// The compact snippet for labels on very long lines: for each label a header with its
/// position, one excerpt line and an underline with the message.
fn write_excerpts(
    w: &mut impl Write,
    files: &Files,
    labels: &[(bool, &Label)],
    margin: usize,
    color: bool,
    severity: Severity,
) -> io::Result<()> {
    let number_width = margin.saturating_sub(2);
    for (i, &(secondary, label)) in labels.iter().enumerate() {
        let Some(file) = files.get(label.file).filter(|f| !f.is_empty()) else {
            continue;
        };
        let text = file.text();
        let span = file.clamp_span(label.span);
        let at = file.line_col(span.start);
        let line = file.line_span(at.line);
        let line_start = line.start as usize;
        let line_end = text[line_start..line.end as usize]
            .trim_end_matches(['\n', '\r'])
            .len()
            + line_start;
        let start = floor_boundary(text, (span.start as usize).min(line_end));
        let end = ceil_boundary(text, (span.end as usize).clamp(start, line_end));
        let shown_end = forward_chars(text, start, EXCERPT_LABEL, end);
        let from = back_chars(text, start, EXCERPT_CONTEXT, line_start);
        let to = forward_chars(text, shown_end, EXCERPT_CONTEXT, line_end);
        let corner = if i == 0 { '╭' } else { '├' };
        writeln!(
            w,
            "{:margin$}{corner}─[ {}:{}:{} ]",
            "",
            file.name(),
            at.line,
            at.column
        )?;
        writeln!(w, "{:margin$}│", "")?;
        let lead = if from > line_start { "…" } else { "" };
        let tail = if to < line_end { "…" } else { "" };
        writeln!(
            w,
            " {:>number_width$} │ {lead}{}{tail}",
            at.line,
            printable(&text[from..to])
        )?;
        let pad = lead.chars().count() + text[from..start].chars().count();
        let carets = "^".repeat(text[start..shown_end].chars().count().max(1));
        let more = if shown_end < end { "…" } else { "" };
        let (style, reset) = match (color, secondary, severity) {
            (false, _, _) => ("", ""),
            (true, true, _) => ("\x1b[34m", RESET),
            (true, false, Severity::Error) => ("\x1b[31m", RESET),
            (true, false, Severity::Warning) => ("\x1b[33m", RESET),
        };
        let message = if label.message.is_empty() {
            String::new()
        } else {
            format!(" {}", label.message)
        };
        writeln!(
            w,
            "{:margin$}│ {:pad$}{style}{carets}{more}{message}{reset}",
            "", ""
        )?;
    }
    writeln!(w, "{}╯", "─".repeat(margin))
}
