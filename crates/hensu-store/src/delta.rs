//! The change one step makes to a run's state: an RFC 6902 JSON Patch document, stored as is
//! in the run log and replayed on top of the latest snapshot.

use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, PatchOperation, RemoveOperation, ReplaceOperation};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An RFC 6902 JSON Patch (`[{"op": "add", "path": "/context/x", "value": …}, …]`) against the
/// run's state JSON. Build it with [`StateDelta::set`], [`StateDelta::push`] and
/// [`StateDelta::remove`]; paths are JSON Pointers (RFC 6901) whose segments are escaped for
/// the caller (`~` and `/` inside a key are fine).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StateDelta(pub json_patch::Patch);

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
