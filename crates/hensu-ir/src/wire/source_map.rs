//! The source map: byte spans of every value and object key of a JSON text, keyed by JSON path
//! (`nodes.review.transitionRules[1].type`), so diagnostics on a `.json` workflow point at the
//! offending value.

use indexmap::IndexMap;

/// A byte range `start..end` in the JSON input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// Byte spans of the values (and object keys) of a JSON document, keyed by path.
///
/// Paths: object members are joined with `.` (`nodes.review.agentId`), array elements use
/// `[i]` (`nodes.review.transitionRules[1].type`); the root is `""`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SourceMap {
    values: IndexMap<String, Span>,
    keys: IndexMap<String, Span>,
}

impl SourceMap {
    /// Indexes `text`, which should be valid JSON (indexing stops silently at malformed input).
    pub fn index(text: &str) -> SourceMap {
        let mut sm = SourceMap::default();
        let mut sc = Scanner {
            text,
            b: text.as_bytes(),
            pos: 0,
            map: &mut sm,
        };
        sc.skip_ws();
        sc.value(String::new(), 0);
        sm
    }

    /// Moves every span `by` bytes forward (the text was indexed without a leading BOM).
    pub(crate) fn shift(&mut self, by: usize) {
        for s in self.values.values_mut().chain(self.keys.values_mut()) {
            s.start += by;
            s.end += by;
        }
    }

    /// The span of the value at `path`.
    pub fn value_span(&self, path: &str) -> Option<Span> {
        self.values.get(path).copied()
    }

    /// The span of the key (including quotes) of the object member at `path`
    /// (e.g. `nodes.review` → the `"review"` key).
    pub fn key_span(&self, path: &str) -> Option<Span> {
        self.keys.get(path).copied()
    }

    /// The span of `path` or, if it does not exist (a missing field), of its nearest ancestor.
    pub fn nearest_span(&self, path: &str) -> Option<Span> {
        let mut p = path;
        loop {
            if let Some(s) = self.values.get(p) {
                return Some(*s);
            }
            if p.is_empty() {
                return None;
            }
            p = parent_path(p);
        }
    }

    /// Every indexed value path with its span, in document order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Span)> {
        self.values.iter().map(|(k, v)| (k.as_str(), *v))
    }
}

fn parent_path(p: &str) -> &str {
    let cut = p.rfind(['.', '[']).unwrap_or(0);
    &p[..cut]
}

/// `parent.key` (or `key` at the root).
pub(crate) fn child_path(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// `parent[i]`.
pub(crate) fn index_path(parent: &str, i: usize) -> String {
    format!("{parent}[{i}]")
}

struct Scanner<'a, 'm> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    map: &'m mut SourceMap,
}

impl Scanner<'_, '_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// Scans a string starting at the opening quote; returns its end (after the closing quote).
    fn string_end(&mut self) -> Option<usize> {
        if self.peek() != Some(b'"') {
            return None;
        }
        self.pos += 1;
        loop {
            match self.peek()? {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return Some(self.pos);
                }
                _ => self.pos += 1,
            }
        }
    }

    /// Returns false when the input is malformed (scan stops).
    fn value(&mut self, path: String, depth: usize) -> bool {
        if depth > 512 {
            return false;
        }
        let start = self.pos;
        let ok = match self.peek() {
            Some(b'{') => self.object(&path, depth),
            Some(b'[') => self.array(&path, depth),
            Some(b'"') => self.string_end().is_some(),
            Some(_) => {
                while let Some(c) = self.peek() {
                    if matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                        break;
                    }
                    self.pos += 1;
                }
                self.pos > start
            }
            None => false,
        };
        if ok {
            self.map.values.insert(
                path,
                Span {
                    start,
                    end: self.pos,
                },
            );
        }
        ok
    }

    fn object(&mut self, path: &str, depth: usize) -> bool {
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return true;
        }
        loop {
            self.skip_ws();
            let key_start = self.pos;
            let Some(key_end) = self.string_end() else {
                return false;
            };
            let key: String = self
                .text
                .get(key_start..key_end)
                .and_then(|raw| serde_json::from_str(raw).ok())
                .unwrap_or_default();
            let member = child_path(path, &key);
            self.map.keys.insert(
                member.clone(),
                Span {
                    start: key_start,
                    end: key_end,
                },
            );
            self.skip_ws();
            if self.peek() != Some(b':') {
                return false;
            }
            self.pos += 1;
            self.skip_ws();
            if !self.value(member, depth + 1) {
                return false;
            }
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return true;
                }
                _ => return false,
            }
        }
    }

    fn array(&mut self, path: &str, depth: usize) -> bool {
        self.pos += 1;
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return true;
        }
        let mut i = 0;
        loop {
            self.skip_ws();
            if !self.value(index_path(path, i), depth + 1) {
                return false;
            }
            i += 1;
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return true;
                }
                _ => return false,
            }
        }
    }
}
