//! Input rules shared by every endpoint (docs/server.md, *Input rules*): the identifier rule
//! and the control-character rule.

use serde_json::Value;

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
}
