//! Where each key and value of `hensu.toml` is, so every phase that checks the file reports
//! at the key or value it means.

use std::collections::HashMap;
use std::ops::Range;

use hensu_diagnostics::Span;
use toml::de::{DeTable, DeValue};

/// Where each key and value of the file is: the key's span and the value's, by path
/// (`["mcp", "servers", "search", "args"]`; array elements as `"0"`, `"1"`, …).
#[derive(Clone, Debug, Default)]
pub(crate) struct SpanIndex {
    by_path: HashMap<Vec<String>, (Range<usize>, Range<usize>)>,
    /// The paths whose value is a table, for narrowing an error to its entry.
    tables: Vec<Vec<String>>,
}

impl SpanIndex {
    pub(crate) fn build(root: &DeTable<'_>) -> SpanIndex {
        let mut index = SpanIndex::default();
        index.add_table(&mut Vec::new(), root);
        index
    }

    fn add_table(&mut self, path: &mut Vec<String>, table: &DeTable<'_>) {
        for (key, value) in table {
            path.push(key.get_ref().to_string());
            self.by_path
                .insert(path.clone(), (key.span(), value.span()));
            if matches!(value.get_ref(), DeValue::Table(_)) {
                self.tables.push(path.clone());
            }
            self.add_value(path, value.get_ref());
            path.pop();
        }
    }

    fn add_value(&mut self, path: &mut Vec<String>, value: &DeValue<'_>) {
        match value {
            DeValue::Table(t) => self.add_table(path, t),
            DeValue::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    path.push(i.to_string());
                    self.by_path
                        .insert(path.clone(), (item.span(), item.span()));
                    self.add_value(path, item.get_ref());
                    path.pop();
                }
            }
            _ => {}
        }
    }

    /// The span of the key at `path`, or of its nearest ancestor's key.
    /// How many tables the file has (bounds the rounds that drop bad entries).
    pub(crate) fn table_count(&self) -> usize {
        self.tables.len()
    }

    pub(crate) fn key(&self, path: &[&str]) -> Span {
        self.find(path, |(k, _)| k.clone())
    }

    /// The span of the value at `path`, or of its nearest ancestor's key.
    pub(crate) fn value(&self, path: &[&str]) -> Span {
        match self.get(path) {
            Some((_, v)) => Span::from_range(v.clone()),
            None => self.key(path),
        }
    }

    /// The key and value spans at exactly `path`.
    pub(crate) fn get(&self, path: &[&str]) -> Option<&(Range<usize>, Range<usize>)> {
        let key: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        self.by_path.get(&key)
    }

    /// The innermost table holding the key or value at `span` (`["mcp", "servers", "search"]`
    /// for an error at `args` of `[mcp.servers.search]`). A table's own span may cover only its
    /// header, so the match is on the keys and values inside it.
    pub(crate) fn table_around(&self, span: Span) -> Option<&[String]> {
        let holds = |r: &Range<usize>| r.start <= span.start as usize && span.end as usize <= r.end;
        let leaf = self
            .by_path
            .iter()
            .filter(|(_, (k, v))| holds(k) || holds(v))
            .map(|(p, _)| p)
            .max_by_key(|p| p.len())?;
        self.tables
            .iter()
            .filter(|t| t.len() <= leaf.len() && leaf[..t.len()] == t[..])
            .max_by_key(|t| t.len())
            .map(Vec::as_slice)
    }

    /// The name of the key whose value is exactly at `span` (for an error about that value).
    pub(crate) fn key_at(&self, span: Span) -> Option<String> {
        self.by_path
            .iter()
            .find(|(p, (_, v))| {
                Span::from_range(v.clone()) == span
                    && p.last().is_some_and(|k| k.parse::<usize>().is_err())
            })
            .and_then(|(p, _)| p.last().cloned())
    }

    fn find(
        &self,
        path: &[&str],
        pick: impl Fn(&(Range<usize>, Range<usize>)) -> Range<usize>,
    ) -> Span {
        (1..=path.len())
            .rev()
            .find_map(|n| self.get(&path[..n]).map(&pick))
            .map(Span::from_range)
            .unwrap_or_default()
    }
}
