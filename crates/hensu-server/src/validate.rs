//! Input rules shared by every endpoint (docs/server.md, *Input rules*): the identifier rule,
//! the control-character rule, and the bounds of a start's context.

use std::cell::Cell;

use axum::http::StatusCode;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::error::ApiError;

pub const ID_RULE: &str =
    "must be a valid identifier (alphanumeric, dots, hyphens, underscores; 1-255 chars)";

/// The one id rule, [`hensu_ir::is_valid_id`].
pub use hensu_ir::is_valid_id as valid_id;

/// A 400 naming `field` unless `value` passes the id rule.
pub fn check_id(field: &str, value: &str) -> Result<(), ApiError> {
    if valid_id(value) {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!("{field}: {ID_RULE}")))
    }
}

/// U+0000–U+0008, U+000B, U+000C, U+000E–U+001F, U+007F (tab, LF and CR are allowed).
pub fn has_control(s: &str) -> bool {
    s.chars()
        .any(|c| matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{7f}'))
}

/// Every violation of the id and control-character rules in a pushed workflow JSON, as
/// `"<path>: invalid identifier"` / `"<path>: contains illegal control characters"`.
pub fn workflow_violations(wf: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let id = |out: &mut Vec<String>, path: String, v: Option<&Value>| {
        if let Some(s) = v.and_then(Value::as_str)
            && !valid_id(s)
        {
            out.push(format!("{path}: invalid identifier"));
        }
    };
    id(&mut out, "id".into(), wf.get("id"));
    id(&mut out, "startNode".into(), wf.get("startNode"));
    if let Some(agents) = wf.get("agents").and_then(Value::as_object) {
        for (k, a) in agents {
            if !valid_id(k) {
                out.push(format!("agents[{k:?}]: invalid identifier"));
            }
            id(&mut out, format!("agents.{k}.id"), a.get("id"));
        }
    }
    if let Some(nodes) = wf.get("nodes").and_then(Value::as_object) {
        for (k, n) in nodes {
            if !valid_id(k) {
                out.push(format!("nodes[{k:?}]: invalid identifier"));
            }
            id(&mut out, format!("nodes.{k}.id"), n.get("id"));
            id(&mut out, format!("nodes.{k}.agentId"), n.get("agentId"));
            id(
                &mut out,
                format!("nodes.{k}.workflowId"),
                n.get("workflowId"),
            );
        }
    }
    // Control characters anywhere in a string of the definition (a superset of the fields
    // the id rule leaves free text in).
    walk_strings(wf, "", &mut |path, s| {
        if has_control(s) {
            out.push(format!("{path}: contains illegal control characters"));
        }
    });
    out
}

fn walk_strings(v: &Value, path: &str, f: &mut dyn FnMut(&str, &str)) {
    match v {
        Value::String(s) => f(path, s),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                walk_strings(x, &format!("{path}[{i}]"), f);
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                if has_control(k) {
                    f(path, k);
                }
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                walk_strings(x, &p, f);
            }
        }
        _ => {}
    }
}

/// The bounds of a start's context ([`crate::Limits`]): the start body's bytes, and
/// the context's entries (object keys and array items at every level) and nesting depth.
#[derive(Clone, Copy, Debug)]
pub struct ContextBounds {
    pub max_bytes: usize,
    pub max_entries: usize,
    pub max_depth: usize,
}

impl From<&crate::Limits> for ContextBounds {
    fn from(l: &crate::Limits) -> ContextBounds {
        ContextBounds {
            max_bytes: l.context_max_bytes,
            max_entries: l.context_max_entries,
            max_depth: l.context_max_depth,
        }
    }
}

/// Which bound a context broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Broken {
    Entries,
    Depth,
}

impl ContextBounds {
    fn refusal(&self, broken: Broken) -> ApiError {
        match broken {
            Broken::Entries => ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "context: more than {} entries (keys and array items at every level; \
                     docs/server.md, *Connections and limits*)",
                    self.max_entries
                ),
            )
            .with_code("context_too_large"),
            Broken::Depth => ApiError::bad_request(format!(
                "context: nested deeper than {} levels (docs/server.md, *Connections and limits*)",
                self.max_depth
            ))
            .with_code("context_too_deep"),
        }
    }

    /// Checks a start body's text before anything of it is built: its size, then the entries
    /// and depth of its `context` member, counted while the parser skips over it (nothing is
    /// allocated for the values). Malformed JSON passes here and is reported by the parse.
    pub fn check_start_body(&self, body: &[u8]) -> Result<(), ApiError> {
        if body.len() > self.max_bytes {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!(
                    "context: the start request is over {} bytes (docs/server.md, *Connections \
                     and limits*)",
                    self.max_bytes
                ),
            )
            .with_code("context_too_large"));
        }
        let scan = Scan {
            bounds: *self,
            entries: Cell::new(0),
            broken: Cell::new(None),
        };
        let mut de = serde_json::Deserializer::from_slice(body);
        let _ = (&mut de).deserialize_any(TopLevel(&scan));
        match scan.broken.get() {
            Some(b) => Err(self.refusal(b)),
            None => Ok(()),
        }
    }

    /// The same entry and depth bounds on a context already built (the console's form).
    pub fn check_context(&self, context: &Map<String, Value>) -> Result<(), ApiError> {
        let mut entries = context.len();
        // (value, depth of the value if it is an object or array)
        let mut stack: Vec<(&Value, usize)> = context.values().map(|v| (v, 2)).collect();
        while let Some((v, depth)) = stack.pop() {
            if entries > self.max_entries {
                return Err(self.refusal(Broken::Entries));
            }
            let children: Box<dyn Iterator<Item = &Value>> = match v {
                Value::Object(m) => Box::new(m.values()),
                Value::Array(a) => Box::new(a.iter()),
                _ => continue,
            };
            if depth > self.max_depth {
                return Err(self.refusal(Broken::Depth));
            }
            for c in children {
                entries += 1;
                stack.push((c, depth + 1));
            }
        }
        if entries > self.max_entries {
            return Err(self.refusal(Broken::Entries));
        }
        Ok(())
    }
}

/// The state of one bounded scan.
struct Scan {
    bounds: ContextBounds,
    entries: Cell<usize>,
    broken: Cell<Option<Broken>>,
}

impl Scan {
    /// One more entry (a key or an array item); stops the scan (through a parse error) past
    /// the bound.
    fn entry<E: serde::de::Error>(&self) -> Result<(), E> {
        let n = self.entries.get() + 1;
        self.entries.set(n);
        if n > self.bounds.max_entries {
            self.broken.set(Some(Broken::Entries));
            return Err(E::custom("bounded"));
        }
        Ok(())
    }

    /// An object or array at `depth` (the context itself is 1).
    fn enter<E: serde::de::Error>(&self, depth: usize) -> Result<(), E> {
        if depth > self.bounds.max_depth {
            self.broken.set(Some(Broken::Depth));
            return Err(E::custom("bounded"));
        }
        Ok(())
    }
}

/// The start body: its `context` member is scanned, every other member skipped.
struct TopLevel<'s>(&'s Scan);

impl<'de> Visitor<'de> for TopLevel<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a start request")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "context" {
                map.next_value_seed(Bounded {
                    scan: self.0,
                    depth: 1,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

/// One value of the context at `depth` (the context itself is depth 1).
struct Bounded<'s> {
    scan: &'s Scan,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Bounded<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Bounded<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.scan.enter(self.depth)?;
        while map.next_key::<IgnoredAny>()?.is_some() {
            self.scan.entry()?;
            map.next_value_seed(Bounded {
                scan: self.scan,
                depth: self.depth + 1,
            })?;
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.scan.enter(self.depth)?;
        while seq
            .next_element_seed(Bounded {
                scan: self.scan,
                depth: self.depth + 1,
            })?
            .is_some()
        {
            self.scan.entry()?;
        }
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_rule() {
        assert!(valid_id("a"));
        assert!(valid_id(&"a".repeat(255)));
        assert!(!valid_id(&"a".repeat(256)));
        for bad in [
            ".a", "-a", "_a", "a b", "a/b", "a:b", "a@b", "a\tb", "a;b", "é", "",
        ] {
            assert!(!valid_id(bad), "{bad:?}");
        }
        assert!(valid_id("order-processing.v1_2"));
    }

    #[test]
    fn control_rule() {
        assert!(!has_control("tab\tlf\ncr\r"));
        assert!(has_control("bell\u{7}"));
        assert!(has_control("del\u{7f}"));
    }

    #[test]
    fn every_violation_is_reported() {
        let wf = serde_json::json!({"id": "bad id", "startNode": "-x",
            "nodes": {"ok": {"id": "../etc", "prompt": "a\u{1}b"}}});
        let v = workflow_violations(&wf);
        assert!(v.len() >= 4, "{v:?}");
        assert!(v.contains(&"id: invalid identifier".to_string()));
        assert!(v.contains(&"nodes.ok.prompt: contains illegal control characters".to_string()));
    }

    fn bounds() -> ContextBounds {
        ContextBounds {
            max_bytes: 10_000,
            max_entries: 50,
            max_depth: 4,
        }
    }

    #[test]
    fn a_wide_context_is_refused_before_it_is_built() {
        let keys: Vec<String> = (0..51).map(|i| format!("\"k{i}\":1")).collect();
        let body = format!(
            "{{\"workflowId\":\"w\",\"context\":{{{}}}}}",
            keys.join(",")
        );
        let e = bounds()
            .check_start_body(body.as_bytes())
            .expect_err("refused");
        assert_eq!(
            (e.status.as_u16(), e.code),
            (413, Some("context_too_large"))
        );
        let ok: Vec<String> = (0..40).map(|i| format!("\"k{i}\":[1]")).collect();
        let body = format!("{{\"context\":{{{}}},\"x\":{}}}", ok.join(","), "[1,2,3]");
        assert!(
            bounds().check_start_body(body.as_bytes()).is_err(),
            "arrays count too"
        );
        let fine = r#"{"workflowId":"w","context":{"topic":"x","list":[1,2,{"a":null}]}}"#;
        bounds().check_start_body(fine.as_bytes()).expect("within");
    }

    #[test]
    fn depth_and_bytes_are_bounded_and_other_members_are_skipped() {
        let deep = r#"{"context":{"a":{"b":{"c":{"d":{"e":1}}}}}}"#;
        let e = bounds()
            .check_start_body(deep.as_bytes())
            .expect_err("deep");
        assert_eq!((e.status.as_u16(), e.code), (400, Some("context_too_deep")));
        let big = format!("{{\"context\":{{\"t\":\"{}\"}}}}", "x".repeat(10_001));
        let e = bounds()
            .check_start_body(big.as_bytes())
            .expect_err("bytes");
        assert_eq!(e.code, Some("context_too_large"));
        // Only the context is counted; malformed JSON is left to the parser.
        let other = format!(
            "{{\"other\":[{}],\"context\":{{}}}}",
            vec!["1"; 60].join(",")
        );
        bounds()
            .check_start_body(other.as_bytes())
            .expect("other members skipped");
        bounds()
            .check_start_body(b"{\"context\":")
            .expect("malformed passes");
        bounds().check_start_body(b"null").expect("null passes");
    }

    #[test]
    fn a_built_context_has_the_same_bounds() {
        let mut wide = Map::new();
        for i in 0..51 {
            wide.insert(format!("k{i}"), Value::Null);
        }
        assert!(bounds().check_context(&wide).is_err());
        let deep: Map<String, Value> =
            serde_json::from_str(r#"{"a":{"b":{"c":{"d":{"e":1}}}}}"#).expect("json");
        assert_eq!(
            bounds().check_context(&deep).map_err(|e| e.code),
            Err(Some("context_too_deep"))
        );
        let fine: Map<String, Value> =
            serde_json::from_str(r#"{"a":[1,2],"b":{"c":1}}"#).expect("json");
        bounds().check_context(&fine).expect("within");
    }
}
