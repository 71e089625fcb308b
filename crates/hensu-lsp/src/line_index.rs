//! Byte offsets ↔ LSP positions (0-based line, UTF-16 column), kept up to date by edits. What
//! a line is comes from `hensu_diagnostics::source` (lines end after `\n`, `\r\n` or a lone `\r`,
//! as in the protocol), the one line index the renderers use too. Conversions never panic:
//! positions past the end of a line or of the file are clamped.

use hensu_diagnostics::Span;
use lsp_types::{Position, Range};

#[derive(Clone, Debug, Default)]
pub struct LineIndex {
    /// Byte offset of the start of every line; `starts[0] == 0`.
    starts: Vec<u32>,
    len: u32,
}

fn to_u32(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        LineIndex {
            starts: hensu_diagnostics::source::line_starts(text),
            len: to_u32(text.len()),
        }
    }

    fn line_of(&self, byte: u32) -> usize {
        hensu_diagnostics::source::line_containing(&self.starts, byte)
    }

    /// The byte range of a 0-based line without its terminator.
    fn line_content(&self, text: &str, line: usize) -> (usize, usize) {
        let start = self.starts.get(line).map_or(text.len(), |s| *s as usize);
        let end = self
            .starts
            .get(line + 1)
            .map_or(text.len(), |s| *s as usize);
        let start = start.min(text.len());
        let end = end.min(text.len()).max(start);
        let content = text.get(start..end).unwrap_or("");
        let trimmed = content.trim_end_matches(['\n', '\r']);
        (start, start + trimmed.len())
    }

    /// The LSP position of a byte offset (clamped to the text and to a char boundary).
    pub fn position(&self, text: &str, byte: u32) -> Position {
        let mut b = (byte as usize).min(text.len());
        while b > 0 && !text.is_char_boundary(b) {
            b -= 1;
        }
        let line = self.line_of(to_u32(b));
        let start = self.starts.get(line).map_or(0, |s| *s as usize).min(b);
        let col: usize = text
            .get(start..b)
            .unwrap_or("")
            .chars()
            .map(char::len_utf16)
            .sum();
        Position::new(to_u32(line), to_u32(col))
    }

    pub fn range(&self, text: &str, span: Span) -> Range {
        let start = self.position(text, span.start);
        let end = self.position(text, span.end.max(span.start));
        Range::new(start, end)
    }

    /// The byte offset of an LSP position; a column past the end of its line gives the end of
    /// the line, a line past the end gives the end of the text.
    pub fn offset(&self, text: &str, pos: Position) -> u32 {
        let line = pos.line as usize;
        if line >= self.starts.len() {
            return self.len.min(to_u32(text.len()));
        }
        let (start, end) = self.line_content(text, line);
        let mut units = 0usize;
        let want = pos.character as usize;
        let content = text.get(start..end).unwrap_or("");
        for (i, c) in content.char_indices() {
            if units >= want {
                return to_u32(start + i);
            }
            units += c.len_utf16();
        }
        to_u32(end)
    }

    pub fn span(&self, text: &str, range: Range) -> Span {
        let a = self.offset(text, range.start);
        let b = self.offset(text, range.end);
        Span::new(a.min(b), a.max(b))
    }

    /// Updates the index after `start..old_end` of the text was replaced, `text` being the text
    /// after the replacement and `new_end` the end of the inserted text in it. Cost: the lines
    /// after the edit are shifted, only the edited stretch is rescanned (a burst of edits of a
    /// large document does not rescan it every time).
    pub fn edit(&mut self, text: &str, start: u32, old_end: u32, new_end: u32) {
        let bytes = text.as_bytes();
        let delta = i64::from(new_end) - i64::from(old_end);
        // Starts before `start` and after `old_end` (shifted) are unchanged; the edited stretch
        // is rescanned with the one rule of where a line starts.
        let keep = self.starts.partition_point(|s| *s < start);
        let tail: Vec<u32> = self.starts[self.starts.partition_point(|s| *s <= old_end)..]
            .iter()
            .map(|s| to_u32(usize::try_from(i64::from(*s) + delta).unwrap_or(0)))
            .collect();
        self.starts.truncate(keep);
        if start == 0 {
            self.starts.truncate(0);
            self.starts.push(0);
        }
        let from = (start as usize).max(1);
        let to = (new_end as usize).min(bytes.len());
        for p in from..=to {
            if hensu_diagnostics::source::starts_line_at(bytes, p) {
                self.starts.push(to_u32(p));
            }
        }
        self.starts.extend(tail);
        self.len = to_u32(text.len());
    }

    /// Byte offset where a 0-based line starts (the end of the text past the last line).
    pub fn line_start(&self, line: usize) -> u32 {
        self.starts.get(line).copied().unwrap_or(self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_round_trip() {
        let text = "a\r\né𝄞x\n\ny";
        let idx = LineIndex::new(text);
        let x = text.find('x').map_or(0, to_u32);
        let p = idx.position(text, x);
        assert_eq!(p, Position::new(1, 3));
        assert_eq!(idx.offset(text, p), x);
        assert_eq!(idx.offset(text, Position::new(1, 99)), x + 1);
        assert_eq!(idx.offset(text, Position::new(9, 0)), to_u32(text.len()));
        assert_eq!(idx.position(text, 999), Position::new(3, 1));
    }

    /// Incremental updates give the same index as a rebuild, CR/LF boundaries included.
    #[test]
    fn edits_match_a_rebuild() {
        let pieces = ["", "\n", "\r", "\r\n", "ab", "\n\r", "x\ny"];
        let base = "a\r\nb\rc\n\nd\r";
        for start in 0..=base.len() {
            for end in start..=base.len() {
                for piece in pieces {
                    let mut text = base.to_string();
                    let mut idx = LineIndex::new(&text);
                    text.replace_range(start..end, piece);
                    idx.edit(
                        &text,
                        to_u32(start),
                        to_u32(end),
                        to_u32(start + piece.len()),
                    );
                    let fresh = LineIndex::new(&text);
                    assert_eq!(
                        (idx.starts, idx.len),
                        (fresh.starts, fresh.len),
                        "{base:?} {start}..{end} <- {piece:?}"
                    );
                }
            }
        }
    }
}
