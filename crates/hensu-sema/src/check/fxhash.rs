//! A fast, non-cryptographic hasher (rustc's Fx hash) for the checks' name sets: names come from
//! the workflow itself, so HashDoS resistance buys nothing here, and SipHash dominated the
//! profile of large workflows.

pub(crate) use rustc_hash::{FxHashMap, FxHashSet};
