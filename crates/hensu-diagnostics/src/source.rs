//! The source table: file names and texts indexed by [`FileId`], with byte → line/column
//! conversion.
//!
//! This module does no I/O: callers read files themselves and pass the text in.
//!
//! # Positions
//! - Lines are **1-based**. A line ends after `\n`, after `\r\n`, or after a lone `\r` (the same
//!   terminators as the Language Server Protocol), so CRLF files get the same line numbers as LF
//!   files.
//! - Columns are **1-based and counted in Unicode scalar values** (`char`s) from the start of the
//!   line: in `"é x"` the `x` is column 3 although it starts at byte 3. [`SourceFile::utf16_col`]
//!   gives the UTF-16 column an LSP client expects.
//! - Byte offsets are 0-based, as in [`Span`].
//!
//! Conversion never panics: an offset past the end of the text is clamped to the end, and an
//! offset inside a multi-byte character is moved back to the start of that character.

use crate::{FileId, Span};
use serde::Serialize;

/// One source file: its display name (usually a path as the user wrote it) and its full text.
///
/// Spans of diagnostics in this file are byte offsets into [`SourceFile::text`].
#[derive(Clone, Debug)]
pub struct SourceFile {
    name: String,
    text: String,
    /// Built on the first position query: most files of a `check` have no diagnostic, and for a
    /// large file the index costs two passes over the text and 8 bytes per line.
    lines: std::sync::OnceLock<LineIndex>,
}

/// Two files are equal when their names and texts are (the line index derives from the text).
impl PartialEq for SourceFile {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.text == other.text
    }
}

impl Eq for SourceFile {}

/// Whether a line starts at byte `p` (≥ 1) of `bytes`: after `\n`, or after a `\r` not
/// followed by `\n` (lines end after `\n`, `\r\n` or a lone `\r`, as the LSP counts them). The
/// one definition of a line: this table, the language server's incremental index and every
/// renderer use it.
pub fn starts_line_at(bytes: &[u8], p: usize) -> bool {
    match p.checked_sub(1).and_then(|i| bytes.get(i)) {
        Some(b'\n') => true,
        Some(b'\r') => bytes.get(p) != Some(&b'\n'),
        _ => false,
    }
}

/// The byte offset of the start of every line of `text`; the first is 0.
pub fn line_starts(text: &str) -> Vec<u32> {
    let bytes = text.as_bytes();
    let mut starts = vec![0u32];
    starts.extend(
        (1..=bytes.len())
            .filter(|&p| starts_line_at(bytes, p))
            .map(to_u32),
    );
    starts
}

/// The 0-based index of the line holding `byte`, given the [`line_starts`] of the text.
pub fn line_containing(starts: &[u32], byte: u32) -> usize {
    match starts.binary_search(&byte) {
        Ok(i) => i,
        Err(i) => i.saturating_sub(1),
    }
}

#[derive(Clone, Debug)]
struct LineIndex {
    /// Byte offset of the start of every line; `starts[0] == 0`, strictly increasing.
    starts: Vec<u32>,
    /// Number of `char`s before the start of every line (parallel to `starts`).
    char_starts: Vec<u32>,
}

impl LineIndex {
    fn of(text: &str) -> Self {
        let starts = line_starts(text);
        let mut char_starts = Vec::with_capacity(starts.len());
        let mut chars = 0usize;
        let mut prev = 0usize;
        for &start in &starts {
            chars += text[prev..start as usize].chars().count();
            char_starts.push(to_u32(chars));
            prev = start as usize;
        }
        LineIndex {
            starts,
            char_starts,
        }
    }
}

/// A 1-based line and 1-based column (in Unicode scalar values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct LineCol {
    pub line: u32,
    pub column: u32,
}

/// A position in a file as the JSON renderer writes it: 1-based line, 1-based column (Unicode
/// scalar values) and the 0-based byte offset. Field order is the JSON key order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Position {
    pub line: u32,
    pub column: u32,
    pub byte: u32,
}

fn to_u32(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

impl SourceFile {
    /// A file with the given display name and text; the line index is computed on first use.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Self {
        SourceFile {
            name: name.into(),
            text: text.into(),
            lines: std::sync::OnceLock::new(),
        }
    }

    fn line_starts(&self) -> &[u32] {
        &self.lines.get_or_init(|| LineIndex::of(&self.text)).starts
    }

    fn line_char_starts(&self) -> &[u32] {
        &self
            .lines
            .get_or_init(|| LineIndex::of(&self.text))
            .char_starts
    }

    /// The display name given to [`SourceFile::new`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The full text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Length of the text in bytes (saturating at `u32::MAX`).
    pub fn len(&self) -> u32 {
        to_u32(self.text.len())
    }

    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Number of lines. An empty text has one (empty) line; a text ending in a newline has an
    /// empty last line after it.
    pub fn line_count(&self) -> u32 {
        to_u32(self.line_starts().len())
    }

    /// Clamp a byte offset to the text and move it back to a character boundary.
    pub fn clamp_offset(&self, byte: u32) -> u32 {
        let mut b = (byte as usize).min(self.text.len());
        while b > 0 && !self.text.is_char_boundary(b) {
            b -= 1;
        }
        to_u32(b)
    }

    /// Clamp both ends of a span with [`SourceFile::clamp_offset`]; a reversed span becomes empty
    /// at its start.
    pub fn clamp_span(&self, span: Span) -> Span {
        let start = self.clamp_offset(span.start);
        let end = self.clamp_offset(span.end).max(start);
        Span::new(start, end)
    }

    /// The 0-based index of the line containing `byte` (after clamping).
    fn line_index(&self, byte: u32) -> usize {
        line_containing(self.line_starts(), byte)
    }

    /// Byte range of a 1-based line, including its terminator. Lines past the end give the empty
    /// range at the end of the text; line 0 is treated as line 1.
    pub fn line_span(&self, line: u32) -> Span {
        let idx = (line.max(1) - 1) as usize;
        let Some(&start) = self.line_starts().get(idx) else {
            return Span::new(self.len(), self.len());
        };
        let end = self
            .line_starts()
            .get(idx + 1)
            .copied()
            .unwrap_or_else(|| self.len());
        Span::new(start, end)
    }

    /// 1-based line and column (Unicode scalar values) of a byte offset, clamped to the text.
    pub fn line_col(&self, byte: u32) -> LineCol {
        let byte = self.clamp_offset(byte);
        let idx = self.line_index(byte);
        let start = self.line_starts()[idx] as usize;
        let column = self.text[start..byte as usize].chars().count() + 1;
        LineCol {
            line: to_u32(idx + 1),
            column: to_u32(column),
        }
    }

    /// The number of `char`s before a byte offset (clamped), i.e. its 0-based character offset.
    pub fn char_offset(&self, byte: u32) -> u32 {
        let byte = self.clamp_offset(byte);
        let idx = self.line_index(byte);
        let start = self.line_starts()[idx] as usize;
        self.line_char_starts()[idx] + to_u32(self.text[start..byte as usize].chars().count())
    }

    /// The 1-based column of a byte offset counted in UTF-16 code units (for LSP clients).
    pub fn utf16_col(&self, byte: u32) -> u32 {
        let byte = self.clamp_offset(byte);
        let start = self.line_starts()[self.line_index(byte)] as usize;
        let units: usize = self.text[start..byte as usize]
            .chars()
            .map(char::len_utf16)
            .sum();
        to_u32(units + 1)
    }

    /// Line, column and (clamped) byte of an offset.
    pub fn position(&self, byte: u32) -> Position {
        let byte = self.clamp_offset(byte);
        let LineCol { line, column } = self.line_col(byte);
        Position { line, column, byte }
    }

    /// The byte offset of a 1-based line and column (Unicode scalar values), clamped to the line
    /// (a column past the end of the line gives the end of its content, before the terminator).
    pub fn offset_of(&self, pos: LineCol) -> u32 {
        let line = self.line_span(pos.line);
        let content = self.text[line.range()].trim_end_matches(['\n', '\r']);
        let col = pos.column.max(1) as usize - 1;
        let within = content
            .char_indices()
            .nth(col)
            .map_or(content.len(), |(i, _)| i);
        line.start + to_u32(within)
    }
}

/// A collection of [`SourceFile`]s indexed by [`FileId`] (`FileId(n)` is the `n`-th file added).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Files {
    files: Vec<SourceFile>,
}

impl Files {
    pub fn new() -> Self {
        Files::default()
    }

    /// A table holding one file, which gets `FileId(0)` (the id single-file diagnostics use).
    pub fn single(name: impl Into<String>, text: impl Into<String>) -> Self {
        let mut files = Files::new();
        files.add(name, text);
        files
    }

    /// Add a file and return its id.
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let id = FileId(to_u32(self.files.len()));
        self.files.push(SourceFile::new(name, text));
        id
    }

    pub fn get(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize)
    }

    /// The display name of a file, or `"<unknown>"` for an id not in the table.
    pub fn name(&self, id: FileId) -> &str {
        self.get(id).map_or(UNKNOWN_FILE, SourceFile::name)
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = (FileId, &SourceFile)> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| (FileId(to_u32(i)), f))
    }

    /// Start and end [`Position`] of a span in a file. For a file not in the table both are
    /// line 1, column 1, byte 0.
    pub fn range(&self, id: FileId, span: Span) -> (Position, Position) {
        match self.get(id) {
            Some(file) => {
                let span = file.clamp_span(span);
                (file.position(span.start), file.position(span.end))
            }
            None => {
                let p = Position {
                    line: 1,
                    column: 1,
                    byte: 0,
                };
                (p, p)
            }
        }
    }
}

/// The name shown for a [`FileId`] that is not in the [`Files`] table.
pub const UNKNOWN_FILE: &str = "<unknown>";
