//! The workflow context: variable name → JSON value, in insertion order, with a bounded log of
//! the keys written since a point, so the durable store can record a step's change to the
//! context from what the step wrote instead of comparing the whole context
//! (docs/performance.md, *Performance round 3: the run and the store*).
//!
//! Reads go through `Deref` to the [`IndexMap`]; every mutation goes through a method of
//! [`Context`] (there is no `DerefMut`), so none can bypass the log. The log is off until
//! [`Context::track_changes`] turns it on (an in-memory run never pays for it); a clone or a
//! deserialized context starts a new lineage with the log off, so a reader holding a
//! position in one context never mistakes another for it. When the log cannot say what changed
//! (it overflowed, or a bulk mutation such as `retain` ran), [`Context::changed_since`] says so
//! and the reader compares the whole context.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};

use indexmap::IndexMap;
use rustc_hash::FxBuildHasher;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// The map a [`Context`] holds.
pub type ContextMap = IndexMap<String, Value, FxBuildHasher>;

/// How many written keys the log keeps; older ones are dropped and a reader behind them
/// compares the whole context.
const LOG_CAP: usize = 64;

/// A context's identity for the log: new for each context made, cloned or deserialized.
fn next_lineage() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A position in a context's change log ([`Context::mark`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextMark {
    lineage: u64,
    version: u64,
}

/// The keys written since a mark, when the log knows them ([`Context::changed_since`]).
pub enum Changes<'a> {
    /// These keys (possibly repeated, in write order) were written; nothing else changed.
    Keys(Vec<&'a str>),
    /// Unknown: compare the whole context.
    Unknown,
}

#[derive(Debug, Default)]
struct ChangeLog {
    on: bool,
    /// Bumped by every mutation while the log is on.
    version: u64,
    /// Changes up to this version are not (all) in `keys`.
    lost_upto: u64,
    /// (version, key) of each single-key write, oldest first.
    keys: VecDeque<(u64, String)>,
}

/// The workflow context: variable name → JSON value, in insertion order. Hashed with
/// [`FxBuildHasher`] (context keys are workflow identifiers and declared variables, and the
/// engine looks several of them up per node step).
pub struct Context {
    map: ContextMap,
    lineage: u64,
    log: ChangeLog,
}

impl Default for Context {
    fn default() -> Self {
        Context::from_map(ContextMap::default())
    }
}

impl Clone for Context {
    fn clone(&self) -> Self {
        Context::from_map(self.map.clone())
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.map.fmt(f)
    }
}

impl PartialEq for Context {
    fn eq(&self, other: &Self) -> bool {
        self.map == other.map
    }
}

impl Eq for Context {}

impl std::ops::Deref for Context {
    type Target = ContextMap;
    fn deref(&self) -> &ContextMap {
        &self.map
    }
}

impl Serialize for Context {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.map.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Context {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        ContextMap::deserialize(d).map(Context::from_map)
    }
}

impl From<ContextMap> for Context {
    fn from(map: ContextMap) -> Self {
        Context::from_map(map)
    }
}

impl FromIterator<(String, Value)> for Context {
    fn from_iter<I: IntoIterator<Item = (String, Value)>>(iter: I) -> Self {
        Context::from_map(iter.into_iter().collect())
    }
}

impl Extend<(String, Value)> for Context {
    fn extend<I: IntoIterator<Item = (String, Value)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl IntoIterator for Context {
    type Item = (String, Value);
    type IntoIter = indexmap::map::IntoIter<String, Value>;
    fn into_iter(self) -> Self::IntoIter {
        self.map.into_iter()
    }
}

impl<'a> IntoIterator for &'a Context {
    type Item = (&'a String, &'a Value);
    type IntoIter = indexmap::map::Iter<'a, String, Value>;
    fn into_iter(self) -> Self::IntoIter {
        self.map.iter()
    }
}

impl Context {
    fn from_map(map: ContextMap) -> Context {
        Context {
            map,
            lineage: next_lineage(),
            log: ChangeLog::default(),
        }
    }

    /// An empty context with room for `n` entries.
    pub fn with_capacity(n: usize) -> Context {
        Context::from_map(ContextMap::with_capacity_and_hasher(n, FxBuildHasher))
    }

    /// The map itself, for code that needs it by value.
    pub fn into_map(self) -> ContextMap {
        self.map
    }

    /// Turns the change log on (the durable store's reader; idempotent).
    pub fn track_changes(&mut self) {
        if !self.log.on {
            // A mark taken while the log was off is behind this version: unknown.
            self.log.on = true;
            self.log.version += 1;
            self.log.lost_upto = self.log.version;
        }
    }

    /// The current position in the change log.
    pub fn mark(&self) -> ContextMark {
        ContextMark {
            lineage: self.lineage,
            version: self.log.version,
        }
    }

    /// The keys written since `mark` (a position of this context's log), or
    /// [`Changes::Unknown`] when the log cannot tell.
    pub fn changed_since(&self, mark: ContextMark) -> Changes<'_> {
        let log = &self.log;
        if !log.on
            || mark.lineage != self.lineage
            || mark.version < log.lost_upto
            || mark.version > log.version
        {
            return Changes::Unknown;
        }
        let start = log.keys.partition_point(|(v, _)| *v <= mark.version);
        Changes::Keys(log.keys.range(start..).map(|(_, k)| k.as_str()).collect())
    }

    fn wrote(&mut self, key: &str) {
        let log = &mut self.log;
        if !log.on {
            return;
        }
        log.version += 1;
        if log.keys.len() == LOG_CAP
            && let Some((v, _)) = log.keys.pop_front()
        {
            log.lost_upto = v;
        }
        log.keys.push_back((log.version, key.to_string()));
    }

    /// A mutation the log does not itemise: readers behind it compare the whole context.
    fn wrote_all(&mut self) {
        let log = &mut self.log;
        if log.on {
            log.version += 1;
            log.lost_upto = log.version;
            log.keys.clear();
        }
    }

    /// [`IndexMap::insert`].
    pub fn insert(&mut self, key: String, value: Value) -> Option<Value> {
        self.wrote(&key);
        self.map.insert(key, value)
    }

    /// [`IndexMap::shift_remove`].
    pub fn shift_remove(&mut self, key: &str) -> Option<Value> {
        let at = self.map.get_index_of(key)?;
        self.shift_remove_index(at).map(|(_, v)| v)
    }

    /// [`IndexMap::shift_remove_index`].
    pub fn shift_remove_index(&mut self, at: usize) -> Option<(String, Value)> {
        let (k, v) = self.map.shift_remove_index(at)?;
        self.wrote(&k);
        Some((k, v))
    }

    /// [`IndexMap::swap_remove`].
    pub fn swap_remove(&mut self, key: &str) -> Option<Value> {
        let v = self.map.swap_remove(key)?;
        self.wrote(key);
        Some(v)
    }

    /// [`IndexMap::get_mut`] (the key counts as written).
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        if self.map.contains_key(key) {
            self.wrote(key);
        }
        self.map.get_mut(key)
    }

    /// [`IndexMap::retain`].
    pub fn retain(&mut self, keep: impl FnMut(&String, &mut Value) -> bool) {
        self.wrote_all();
        self.map.retain(keep);
    }

    /// [`IndexMap::clear`].
    pub fn clear(&mut self) {
        self.wrote_all();
        self.map.clear();
    }

    /// [`IndexMap::iter_mut`] (every key counts as written).
    pub fn iter_mut(&mut self) -> indexmap::map::IterMut<'_, String, Value> {
        self.wrote_all();
        self.map.iter_mut()
    }

    /// [`IndexMap::values_mut`] (every key counts as written).
    pub fn values_mut(&mut self) -> indexmap::map::ValuesMut<'_, String, Value> {
        self.wrote_all();
        self.map.values_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(c: &Context, m: ContextMark) -> Option<Vec<String>> {
        match c.changed_since(m) {
            Changes::Keys(k) => Some(k.into_iter().map(str::to_string).collect()),
            Changes::Unknown => None,
        }
    }

    #[test]
    fn the_log_lists_the_keys_written_since_a_mark() {
        let mut c = Context::default();
        c.insert("a".into(), Value::from(1));
        let m = c.mark();
        assert_eq!(keys(&c, m), None, "the log is off until tracked");
        c.track_changes();
        let m = c.mark();
        assert_eq!(keys(&c, m), Some(vec![]));
        c.insert("b".into(), Value::from(2));
        c.shift_remove("a");
        c.shift_remove("missing");
        assert_eq!(keys(&c, m), Some(vec!["b".to_string(), "a".to_string()]));
        let m2 = c.mark();
        if let Some(v) = c.get_mut("b") {
            *v = Value::from(3);
        }
        assert_eq!(keys(&c, m2), Some(vec!["b".to_string()]));
        c.retain(|_, _| true);
        assert_eq!(keys(&c, m2), None, "a bulk mutation is not itemised");
        let m3 = c.mark();
        assert_eq!(keys(&c, m3), Some(vec![]));
    }

    #[test]
    fn an_overflowed_log_or_another_context_is_unknown() {
        let mut c = Context::default();
        c.track_changes();
        let m = c.mark();
        for i in 0..LOG_CAP {
            c.insert(format!("k{i}"), Value::from(i));
        }
        assert_eq!(keys(&c, m).map(|k| k.len()), Some(LOG_CAP));
        c.insert("one more".into(), Value::Null);
        assert_eq!(keys(&c, m), None);
        let clone = c.clone();
        assert_eq!(keys(&clone, c.mark()), None, "a clone is another lineage");
        assert_eq!(clone, c, "but equal in content");
    }
}
