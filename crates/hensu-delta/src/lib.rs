//! The change one step makes to a run's state: an RFC 6902 JSON Patch document, computed by
//! the runtime from the state it diffs (`hensu_runtime::StateShadow`), stored as is in the run
//! log and replayed by the store on top of the latest snapshot. A crate of its own so that
//! neither of the two depends on the other.

use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, PatchOperation, RemoveOperation, ReplaceOperation};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An RFC 6902 JSON Patch (`[{"op": "add", "path": "/context/x", "value": …}, …]`) against the
/// run's state JSON. Build it with [`StateDelta::set`], [`StateDelta::push`] and
/// [`StateDelta::remove`]; paths are JSON Pointers (RFC 6901) whose segments are escaped for
/// the caller (`~` and `/` inside a key are fine).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct StateDelta(pub json_patch::Patch);

/// One operation as stored, read into a plain struct: `json_patch`'s own decoding goes
/// through serde's buffered content for its `op`-tagged enum, which made decoding the
/// deltas the largest part of a compaction's replay.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOperation {
    op: String,
    path: String,
    #[serde(default)]
    from: Option<String>,
    /// `Some(Null)` for `"value": null` (absent is `None`).
    #[serde(default, deserialize_with = "present")]
    value: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl<'de> Deserialize<'de> for StateDelta {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<StateDelta, D::Error> {
        use serde::de::Error;
        let raw = Vec::<RawOperation>::deserialize(d)?;
        let ptr = |p: String| PointerBuf::parse(p).map_err(D::Error::custom);
        let mut ops = Vec::with_capacity(raw.len());
        for op in raw {
            let value = |v: Option<Value>| {
                v.ok_or_else(|| D::Error::custom(format!("`{}` needs a `value`", op.op)))
            };
            let from = |f: Option<String>| {
                f.ok_or_else(|| D::Error::custom(format!("`{}` needs a `from`", op.op)))
                    .and_then(ptr)
            };
            ops.push(match op.op.as_str() {
                "add" => PatchOperation::Add(AddOperation {
                    path: ptr(op.path)?,
                    value: value(op.value)?,
                }),
                "remove" => PatchOperation::Remove(RemoveOperation {
                    path: ptr(op.path)?,
                }),
                "replace" => PatchOperation::Replace(ReplaceOperation {
                    path: ptr(op.path)?,
                    value: value(op.value)?,
                }),
                "move" => PatchOperation::Move(json_patch::MoveOperation {
                    from: from(op.from)?,
                    path: ptr(op.path)?,
                }),
                "copy" => PatchOperation::Copy(json_patch::CopyOperation {
                    from: from(op.from)?,
                    path: ptr(op.path)?,
                }),
                "test" => PatchOperation::Test(json_patch::TestOperation {
                    path: ptr(op.path)?,
                    value: value(op.value)?,
                }),
                other => return Err(D::Error::custom(format!("unknown patch op `{other}`"))),
            });
        }
        Ok(StateDelta(json_patch::Patch(ops)))
    }
}

fn pointer(segments: &[&str]) -> PointerBuf {
    PointerBuf::from_tokens(segments.iter().copied())
}

impl StateDelta {
    pub fn new() -> StateDelta {
        StateDelta::default()
    }

    /// Sets the member at `segments` (an object key: added or replaced; RFC 6902 `add`).
    pub fn set(mut self, segments: &[&str], value: Value) -> StateDelta {
        self.0.0.push(PatchOperation::Add(AddOperation {
            path: pointer(segments),
            value,
        }));
        self
    }

    /// Replaces the existing value at `segments` (fails on replay if it is absent).
    pub fn replace(mut self, segments: &[&str], value: Value) -> StateDelta {
        self.0.0.push(PatchOperation::Replace(ReplaceOperation {
            path: pointer(segments),
            value,
        }));
        self
    }

    /// Appends `value` to the array at `segments` (`add` at `…/-`).
    pub fn push(mut self, segments: &[&str], value: Value) -> StateDelta {
        let mut path = pointer(segments);
        path.push_back("-");
        self.0
            .0
            .push(PatchOperation::Add(AddOperation { path, value }));
        self
    }

    /// Removes the member at `segments` (fails on replay if it is absent).
    pub fn remove(mut self, segments: &[&str]) -> StateDelta {
        self.0.0.push(PatchOperation::Remove(RemoveOperation {
            path: pointer(segments),
        }));
        self
    }

    pub fn is_empty(&self) -> bool {
        self.0.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.0.len()
    }

    /// Applies the patch to `state` in place. On error `state` is left half-patched: callers
    /// discard it (a delta that does not apply means the stored log is damaged).
    pub fn apply(&self, state: &mut Value) -> Result<(), String> {
        json_patch::patch_unsafe(state, &self.0).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_operation_decodes_as_json_patch_reads_it() {
        let doc = json!([
            {"op": "add", "path": "/a~1b/-", "value": {"x": [1]}},
            {"op": "remove", "path": "/c"},
            {"op": "replace", "path": "/d", "value": null},
            {"op": "move", "from": "/e", "path": "/f"},
            {"op": "copy", "from": "/g", "path": "/h"},
            {"op": "test", "path": "/i", "value": 2},
        ]);
        let ours: StateDelta = serde_json::from_value(doc.clone()).expect("decodes");
        let theirs: json_patch::Patch = serde_json::from_value(doc.clone()).expect("decodes");
        assert_eq!(ours.0, theirs);
        assert_eq!(serde_json::to_value(&ours).expect("encodes"), doc);
        for bad in [
            json!([{"op": "add", "path": "/a"}]),
            json!([{"op": "move", "path": "/a"}]),
            json!([{"op": "nope", "path": "/a"}]),
            json!([{"op": "add", "path": "a", "value": 1}]),
            json!({"op": "add"}),
        ] {
            assert!(
                serde_json::from_value::<StateDelta>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }
}
