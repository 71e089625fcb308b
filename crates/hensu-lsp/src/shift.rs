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

impl ByteEdit {
    /// A span of the text before this edit in the text after it (see `forward`).
    pub fn span(self, s: Span) -> Span {
        let a = self.forward(s.start, false);
        Span::new(a, self.forward(s.end, true).max(a))
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

    /// The edits after the first `n`.
    pub fn since(&self, n: usize) -> Shift {
        Shift {
            edits: self.edits.get(n..).unwrap_or(&[]).to_vec(),
        }
    }

    /// Forgets the first `n` edits (an analysis including them was installed).
    pub fn drain_front(&mut self, n: usize) {
        self.edits.drain(..n.min(self.edits.len()));
    }

    pub fn push(&mut self, edit: ByteEdit) {
        self.edits.push(edit);
    }

    /// The edits as one replacement of the analysed text: the smallest range of it outside of
    /// which no byte changed (only moved), and its length now. `None` without edits.
    pub fn envelope(&self) -> Option<ByteEdit> {
        let mut edits = self.edits.iter();
        let first = edits.next()?;
        // `lo..hi` in the current text; `delta`: how much longer it is than the analysed one.
        let (mut lo, mut hi) = (
            i64::from(first.start),
            i64::from(first.start + first.new_len),
        );
        let mut delta = i64::from(first.new_len) - i64::from(first.old_end - first.start);
        for e in edits {
            let (start, old_end, new_len) = (
                i64::from(e.start),
                i64::from(e.old_end),
                i64::from(e.new_len),
            );
            hi = if hi >= old_end {
                hi - (old_end - start) + new_len
            } else {
                start + new_len
            };
            lo = lo.min(start);
            delta += new_len - (old_end - start);
        }
        Some(ByteEdit {
            start: u32::try_from(lo).ok()?,
            old_end: u32::try_from(hi - delta).ok()?,
            new_len: u32::try_from(hi - lo).ok()?,
        })
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
    fn the_envelope_of_random_edits_turns_the_old_text_into_the_new() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n.max(1) as u64) as usize
        };
        for _ in 0..500 {
            let old: String = (0..40).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            let mut text = old.clone();
            let mut shift = Shift::default();
            for _ in 0..1 + next(5) {
                let a = next(text.len() + 1);
                let b = a + next(text.len() + 1 - a).min(6);
                let insert = "XYZ"[..next(4)].to_string();
                text.replace_range(a..b, &insert);
                shift.push(ByteEdit {
                    start: a as u32,
                    old_end: b as u32,
                    new_len: insert.len() as u32,
                });
            }
            let e = shift.envelope().expect("an envelope");
            let (a, b) = (e.start as usize, e.old_end as usize);
            assert!(a <= b && b <= old.len(), "{e:?}");
            let mut rebuilt = old.clone();
            rebuilt.replace_range(a..b, &text[a..a + e.new_len as usize]);
            assert_eq!(rebuilt, text, "{e:?}");
        }
    }

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
