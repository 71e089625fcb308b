//! Deterministic trace and span ids: a hash of the run id (and of the span's key), so a span
//! exported live and the same span rebuilt later from the run log carry the same ids, and a
//! run taken over by another worker keeps one trace.

use std::cell::RefCell;
use std::collections::VecDeque;

use sha2::{Digest, Sha256};

/// The key of a span inside its run: what identifies it in both the live events and the run
/// log. Its text (`Display`) is what is hashed, so it must never change for a span kind.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SpanKey {
    /// The run itself (`invoke_workflow`).
    Run,
    /// The visit of a node at a 1-based step.
    Node { step: u64, node: String },
    /// An agent call of a visit (`branch`: a parallel branch; `attempt`: 0, then structured
    /// output corrections).
    Agent {
        step: u64,
        branch: Option<String>,
        attempt: u32,
    },
    /// The `index`-th action of a visit (or of a compensation, `step` being its visit step).
    Action { step: u64, index: u32, scope: Scope },
    /// A review wait of a visit (`round`: the n-th pause of that visit).
    Review { step: u64, round: u32 },
    /// The compensation of the visit at `visit_step`.
    Compensation { visit_step: u64, id: String },
    /// The `index`-th call of journal visit `visit` (`7`, `7#branch`) that is a tool of an
    /// agent's tool loop (docs/security.md, *Call journal*).
    Tool { visit: String, index: u32 },
}

/// Whether a span belongs to a node visit or to the compensation that undoes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    Visit,
    Compensation,
}

impl std::fmt::Display for SpanKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SpanKey::Run => f.write_str("run"),
            SpanKey::Node { step, node } => write!(f, "node/{step}/{node}"),
            SpanKey::Agent {
                step,
                branch,
                attempt,
            } => write!(
                f,
                "agent/{step}/{}/{attempt}",
                branch.as_deref().unwrap_or("")
            ),
            SpanKey::Action { step, index, scope } => {
                let s = match scope {
                    Scope::Visit => "visit",
                    Scope::Compensation => "compensation",
                };
                write!(f, "action/{s}/{step}/{index}")
            }
            SpanKey::Review { step, round } => write!(f, "review/{step}/{round}"),
            SpanKey::Compensation { visit_step, id } => {
                write!(f, "compensation/{visit_step}/{id}")
            }
            SpanKey::Tool { visit, index } => write!(f, "tool/{visit}/{index}"),
        }
    }
}

thread_local! {
    /// The last trace id computed on this thread (a live trace asks for its run's at every
    /// span).
    static LAST_TRACE: RefCell<Option<(String, [u8; 16])>> = const { RefCell::new(None) };
    /// The last span ids computed on this thread, by run id and key text: a span's parent (the
    /// run, the visit of an agent call) was usually computed a moment before.
    static RECENT_SPANS: RefCell<VecDeque<(String, String, [u8; 8])>> =
        const { RefCell::new(VecDeque::new()) };
}

/// How many span ids [`span_id`] remembers per thread.
const RECENT: usize = 4;

/// The trace id of run `run_id` (16 bytes, never all zero: OTLP reads zero as "no id").
pub fn trace_id(run_id: &str) -> [u8; 16] {
    if let Some(id) = LAST_TRACE.with_borrow(|l| {
        l.as_ref()
            .and_then(|(r, id)| (r.as_str() == run_id).then_some(*id))
    }) {
        return id;
    }
    let id = hash_trace_id(run_id);
    LAST_TRACE.with_borrow_mut(|l| *l = Some((run_id.to_string(), id)));
    id
}

fn hash_trace_id(run_id: &str) -> [u8; 16] {
    let digest = Sha256::new()
        .chain_update(b"hensu.trace\0")
        .chain_update(run_id.as_bytes())
        .finalize();
    let mut id = [0u8; 16];
    id.copy_from_slice(&digest[..16]);
    nonzero(&mut id);
    id
}

/// The span id of `key` in run `run_id` (8 bytes, never all zero).
pub fn span_id(run_id: &str, key: &SpanKey) -> [u8; 8] {
    let text = key.to_string();
    let hit = RECENT_SPANS.with_borrow(|recent| {
        recent
            .iter()
            .find(|(r, k, _)| r.as_str() == run_id && *k == text)
            .map(|(_, _, id)| *id)
    });
    if let Some(id) = hit {
        return id;
    }
    let id = hash_span_id(run_id, &text);
    RECENT_SPANS.with_borrow_mut(|recent| {
        if recent.len() == RECENT {
            recent.pop_front();
        }
        recent.push_back((run_id.to_string(), text, id));
    });
    id
}

fn hash_span_id(run_id: &str, key_text: &str) -> [u8; 8] {
    let digest = Sha256::new()
        .chain_update(b"hensu.span\0")
        .chain_update(run_id.as_bytes())
        .chain_update(b"\0")
        .chain_update(key_text.as_bytes())
        .finalize();
    let mut id = [0u8; 8];
    id.copy_from_slice(&digest[..8]);
    nonzero(&mut id);
    id
}

fn nonzero(id: &mut [u8]) {
    if id.iter().all(|b| *b == 0)
        && let Some(last) = id.last_mut()
    {
        *last = 1;
    }
}

/// The trace id and parent span id of a W3C `traceparent` header
/// (`00-<32 hex>-<16 hex>-<2 hex>`); `None` when it is malformed or an id is all zero.
pub fn parse_traceparent(header: &str) -> Option<([u8; 16], [u8; 8])> {
    let parts: Vec<&str> = header.trim().split('-').collect();
    let [version, trace, span, flags] = parts.as_slice() else {
        return None;
    };
    if version.len() != 2 || *version == "ff" || flags.len() != 2 {
        return None;
    }
    let mut t = [0u8; 16];
    let mut s = [0u8; 8];
    unhex(trace, &mut t)?;
    unhex(span, &mut s)?;
    unhex(flags, &mut [0u8; 1])?;
    if t.iter().all(|b| *b == 0) || s.iter().all(|b| *b == 0) {
        return None;
    }
    Some((t, s))
}

fn unhex(text: &str, out: &mut [u8]) -> Option<()> {
    let bytes = text.as_bytes();
    if bytes.len() != out.len() * 2 {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    for (i, o) in out.iter_mut().enumerate() {
        *o = (digit(bytes[2 * i])? << 4) | digit(bytes[2 * i + 1])?;
    }
    Some(())
}

/// The trace id and the root (`invoke_workflow`) span id of run `run_id`, in hex, as its
/// exported spans and its rebuilt trace carry them: the caller's trace when the run was
/// started under a valid `traceparent`, else the run id's hash. The server's and workers'
/// log lines about a run carry these two (docs/observability.md, *Logs*).
pub fn run_log_ids(run_id: &str, traceparent: Option<&str>) -> (String, String) {
    let trace = traceparent
        .and_then(parse_traceparent)
        .map_or_else(|| trace_id(run_id), |(t, _)| t);
    (hex(&trace), hex(&span_id(run_id, &SpanKey::Run)))
}

/// Lower-case hex, as OTLP/JSON and W3C `traceparent` write ids.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_distinct() {
        let a = span_id("r1", &SpanKey::Run);
        assert_eq!(a, span_id("r1", &SpanKey::Run));
        assert_ne!(a, span_id("r2", &SpanKey::Run));
        let n = |step| SpanKey::Node {
            step,
            node: "x".into(),
        };
        assert_ne!(span_id("r1", &n(1)), span_id("r1", &n(2)));
        assert_eq!(trace_id("r1"), trace_id("r1"));
        // The per-thread memory answers what the hash does.
        assert_eq!(trace_id("r1"), hash_trace_id("r1"));
        assert_ne!(trace_id("r2"), hash_trace_id("r1"));
        for _ in 0..2 {
            for step in 1..=6 {
                assert_eq!(
                    span_id("r1", &n(step)),
                    hash_span_id("r1", &n(step).to_string())
                );
                assert_eq!(
                    span_id("r2", &n(step)),
                    hash_span_id("r2", &n(step).to_string())
                );
            }
        }
        assert_eq!(hex(&[0x0a, 0xff]), "0aff");
        let (t, s) = parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
            .expect("a valid traceparent");
        assert_eq!(hex(&t), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(hex(&s), "00f067aa0ba902b7");
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473é-00f067aa0ba902b7-01",
        ] {
            assert_eq!(parse_traceparent(bad), None, "{bad}");
        }
    }

    #[test]
    fn log_ids_follow_the_callers_trace_or_the_run_id() {
        let (t, s) = run_log_ids("r1", None);
        assert_eq!(t, hex(&trace_id("r1")));
        assert_eq!(s, hex(&span_id("r1", &SpanKey::Run)));
        let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let (t, s2) = run_log_ids("r1", Some(parent));
        assert_eq!(t, "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(s2, s, "the root span keeps its id under a parent");
        // A malformed header is ignored, as the exporter ignores it.
        assert_eq!(run_log_ids("r1", Some("junk")).0, hex(&trace_id("r1")));
    }
}
