//! Field types for decoding provider answers into typed structs.
//!
//! Providers add, drop and vary fields between versions and between compatible servers. The
//! answer structs therefore read every field through [`Lenient`] (a value of the wrong type reads
//! as absent) and every nested object through [`Fields`] (anything but an object reads as an
//! object with no fields). Decoding a struct never fails; the decoders then report what an answer
//! lacks with a specific message.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// `Some` when the field is present and has the expected type (for `Lenient<Value>`: present at
/// all, `null` included), `None` otherwise.
#[derive(Debug)]
pub(crate) struct Lenient<T>(pub(crate) Option<T>);

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Lenient(None)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(Lenient(T::deserialize(value).ok()))
    }
}

/// The fields of a JSON object; any other value reads as an object without fields.
#[derive(Debug, Default)]
pub(crate) struct Fields<T>(pub(crate) T);

impl<'de, T: DeserializeOwned + Default> Deserialize<'de> for Fields<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Fields(fields(&Value::deserialize(deserializer)?)))
    }
}

/// Reads `value` as the object `T` (see [`Fields`]).
pub(crate) fn fields<T: DeserializeOwned + Default>(value: &Value) -> T {
    if value.is_object() {
        T::deserialize(value).unwrap_or_default()
    } else {
        T::default()
    }
}

impl<T> Lenient<T> {
    pub(crate) fn as_ref(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

impl Lenient<u64> {
    /// Token counts: absent or not a count → 0.
    pub(crate) fn count(&self) -> u64 {
        self.0.unwrap_or(0)
    }
}
