//! Reading the saga extension: the top-level `compensations` map and each node's
//! `compensation` (docs/language.md, *Saga compensation*).

use indexmap::IndexMap;
use serde_json::Value;

use super::{Obj, R, Reader};
use crate::model::*;
use crate::wire::source_map::{child_path, index_path};

impl Reader<'_> {
    /// The compensation a node names (`nodes.<id>.compensation`), if any.
    pub(super) fn node_compensation(&self, v: &Value, path: &str) -> R<Option<String>> {
        let m = self.obj(v, path)?;
        self.opt_str(m, path, "compensation")
    }

    /// The top-level `compensations` object (absent: none).
    pub(super) fn compensations(&self, m: &Obj) -> R<IndexMap<String, Compensation>> {
        let mut out = IndexMap::new();
        match Self::field(m, "compensations") {
            None | Some(Value::Null) => {}
            Some(Value::Object(o)) => {
                for (k, cv) in o {
                    let p = child_path("compensations", k);
                    out.insert(k.clone(), self.compensation(cv, &p, k)?);
                }
            }
            Some(other) => return Err(self.wrong_type("compensations", "an object", other)),
        }
        Ok(out)
    }

    fn compensation(&self, v: &Value, path: &str, key: &str) -> R<Compensation> {
        let m = self.obj(v, path)?;
        let id = self.check_id(m, path, key)?;
        let body = match Self::field(m, "actions") {
            Some(Value::Array(items)) => {
                let ap = child_path(path, "actions");
                CompensationBody::Actions(
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, a)| self.action(a, &index_path(&ap, i)))
                        .collect::<R<Vec<_>>>()?,
                )
            }
            Some(other) if !other.is_null() => {
                return Err(self.wrong_type(&child_path(path, "actions"), "an array", other));
            }
            _ => CompensationBody::Agent {
                agent_id: self.req_str(m, path, "agentId")?,
                prompt: self.req_str(m, path, "prompt")?,
            },
        };
        Ok(Compensation { id, body })
    }
}

impl Reader<'_> {
    /// A node's `nodeTimeoutMs` and `retryBackoffMs` (hensu extension, docs/language.md, *Timeouts
    /// and backoff*): absent when not set, a positive number of milliseconds when set.
    pub(super) fn node_timing(&self, v: &Value, path: &str) -> R<NodeTiming> {
        let m = self.obj(v, path)?;
        let positive = |key: &str| -> R<Option<u64>> {
            match self.opt_i64(m, path, key)? {
                None => Ok(None),
                Some(n) if n > 0 => Ok(u64::try_from(n).ok()),
                Some(_) => Err(self.wrong_type(
                    &child_path(path, key),
                    "a positive number of milliseconds",
                    Self::field(m, key).unwrap_or(&Value::Null),
                )),
            }
        };
        Ok(NodeTiming {
            timeout_ms: positive("nodeTimeoutMs")?,
            backoff_ms: positive("retryBackoffMs")?,
            review_deadline_ms: positive("reviewDeadlineMs")?,
        })
    }
}
