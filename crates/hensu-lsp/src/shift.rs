//! Edits not yet analysed: while a document's analysis is pending (the worker is still on it, or
//! it is being debounced), requests are answered from the previous analysis with its spans moved
//! through the edits typed since ([`Shift`]), so a hover or completion never waits for an
//! analysis and still points at the right text.

use hensu_diagnostics::Span;

/// One replacement in byte offsets of the text it was applied to: `start..old_end` became
/// `new_len` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteEdit {
    pub start: u32,
    pub old_end: u32,
    pub new_len: u32,
}

impl ByteEdit {
    /// An offset of the text before this edit, in the text after it. An offset inside the
    /// replaced range moves to the start (`end == false`) or the end (`end == true`) of the
    /// replacement, so a span never turns inside out.
    fn forward(self, o: u32, end: bool) -> u32 {
        if o <= self.start {
            o
        } else if o >= self.old_end {
            o - (self.old_end - self.start) + self.new_len
        } else if end {
            self.start + self.new_len
        } else {
            self.start
        }
    }
}

/// The edits made to an analysed text, in the order they were applied.
#[derive(Clone, Debug, Default)]
pub struct Shift {
    edits: Vec<ByteEdit>,
}

impl Shift {
    pub fn is_empty(&self) -> bool {
        self.edits.is_empty()
    }

    pub fn len(&self) -> usize {
        self.edits.len()
    }

    /// Forgets the first `n` edits (an analysis including them was installed).
    pub fn drain_front(&mut self, n: usize) {
        self.edits.drain(..n.min(self.edits.len()));
    }

    pub fn push(&mut self, edit: ByteEdit) {
        self.edits.push(edit);
    }

    /// A span of the analysed text in the current text.
    pub fn span(&self, s: Span) -> Span {
        let (mut a, mut b) = (s.start, s.end);
        for e in &self.edits {
            a = e.forward(a, false);
            b = e.forward(b, true).max(a);
        }
        Span::new(a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_move_through_edits() {
        let mut shift = Shift::default();
        // "abc def ghi": insert "XX" at 4, then delete "gh" (now at 10..12).
        shift.push(ByteEdit {
            start: 4,
            old_end: 4,
            new_len: 2,
        });
        shift.push(ByteEdit {
            start: 10,
            old_end: 12,
            new_len: 0,
        });
        assert_eq!(shift.span(Span::new(0, 3)), Span::new(0, 3));
        assert_eq!(shift.span(Span::new(4, 7)), Span::new(4, 9));
        assert_eq!(shift.span(Span::new(8, 11)), Span::new(10, 11));
        assert_eq!(shift.span(Span::new(9, 10)), Span::new(10, 10));
    }
}
