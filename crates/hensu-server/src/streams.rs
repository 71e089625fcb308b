//! Event streams per tenant (docs/server.md, *Connections and limits*): each open SSE stream
//! (one execution's or the tenant's) holds a place of its tenant, at most
//! `max_streams_per_tenant`, and of all tenants together at most `max_streams`; over either the
//! open is refused with 429. Every stream also ends when
//! the server shuts down, so the graceful drain does not wait on streams that never end.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use futures_util::{Stream, StreamExt};
use hensu_runtime::CancelToken;

use crate::error::ApiError;

/// The open streams of every tenant.
#[derive(Debug)]
pub struct StreamSlots {
    cap: usize,
    global_cap: usize,
    open: Mutex<Open>,
}

#[derive(Debug, Default)]
struct Open {
    per_tenant: HashMap<String, usize>,
    total: usize,
}

/// One open stream of a tenant; its place is given back when the stream is dropped.
#[derive(Debug)]
pub struct StreamSlot {
    slots: Arc<StreamSlots>,
    tenant: String,
}

impl StreamSlots {
    /// At most `cap` streams per tenant and `global_cap` in all.
    pub fn new(cap: usize, global_cap: usize) -> StreamSlots {
        StreamSlots {
            cap,
            global_cap,
            open: Mutex::new(Open::default()),
        }
    }

    /// A place for one more stream of `tenant`, or 429 `too_many_streams`.
    pub fn acquire(self: &Arc<Self>, tenant: &str) -> Result<StreamSlot, ApiError> {
        let mut open = self
            .open
            .lock()
            .map_err(|_| ApiError::internal("stream table poisoned"))?;
        let refused = |what: &str, cap: usize| {
            ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "too many open event streams {what} (at most {cap}; docs/server.md, \
                     *Connections and limits*)"
                ),
            )
            .with_code("too_many_streams")
        };
        if open.total >= self.global_cap {
            return Err(refused("on this server", self.global_cap));
        }
        let n = open.per_tenant.entry(tenant.to_string()).or_insert(0);
        if *n >= self.cap {
            return Err(refused("for this tenant", self.cap));
        }
        *n += 1;
        open.total += 1;
        Ok(StreamSlot {
            slots: Arc::clone(self),
            tenant: tenant.to_string(),
        })
    }

    /// Streams `tenant` has open.
    pub fn open(&self, tenant: &str) -> usize {
        self.open
            .lock()
            .map(|o| o.per_tenant.get(tenant).copied().unwrap_or(0))
            .unwrap_or(0)
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        if let Ok(mut open) = self.slots.open.lock() {
            open.total = open.total.saturating_sub(1);
            if let Some(n) = open.per_tenant.get_mut(&self.tenant) {
                *n -= 1;
                if *n == 0 {
                    open.per_tenant.remove(&self.tenant);
                }
            }
        }
    }
}

/// `stream` holding `slot` while it is open, ending when `closing` is cancelled or at
/// `valid_until` (Unix seconds: when the token that opened it stops being accepted, so a
/// stream never outlives its credentials; the client reconnects with a fresh token and its
/// `Last-Event-ID`).
pub fn guarded<S: Stream + Send + 'static>(
    stream: S,
    slot: StreamSlot,
    closing: CancelToken,
    valid_until: Option<u64>,
) -> impl Stream<Item = S::Item> + Send + use<S> {
    let until = async move {
        let expiry = async {
            match valid_until {
                Some(at) => tokio::time::sleep(until_unix(at)).await,
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            () = closing.cancelled() => {},
            () = expiry => {},
        }
    };
    stream.take_until(Box::pin(until)).map(move |item| {
        let _held = &slot;
        item
    })
}

/// The time from now until the Unix second `at` (zero once it has passed).
pub fn until_unix(at: u64) -> std::time::Duration {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(at);
    at.duration_since(std::time::SystemTime::now())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn places_are_per_tenant_and_come_back() {
        let slots = Arc::new(StreamSlots::new(2, 4));
        let a = slots.acquire("a").expect("1");
        let _b = slots.acquire("a").expect("2");
        let e = slots.acquire("a").expect_err("3 over");
        assert_eq!((e.status.as_u16(), e.code), (429, Some("too_many_streams")));
        let _other = slots.acquire("b").expect("another tenant");
        drop(a);
        let s = guarded(
            futures_util::stream::pending::<u8>(),
            slots.acquire("a").expect("back"),
            CancelToken::new(),
            None,
        );
        assert_eq!(slots.open("a"), 2);
        drop(s);
        assert_eq!(slots.open("a"), 1);
        let closing = CancelToken::new();
        let s = guarded(
            futures_util::stream::pending::<u8>(),
            slots.acquire("a").expect("again"),
            closing.clone(),
            None,
        );
        closing.cancel();
        assert_eq!(
            s.collect::<Vec<_>>().await,
            Vec::<u8>::new(),
            "ends at shutdown"
        );
    }

    #[test]
    fn all_tenants_together_are_capped_too() {
        let slots = Arc::new(StreamSlots::new(2, 3));
        let _held = [
            slots.acquire("a").expect("a1"),
            slots.acquire("b").expect("b1"),
            slots.acquire("c").expect("c1"),
        ];
        let e = slots.acquire("d").expect_err("over the global cap");
        assert_eq!((e.status.as_u16(), e.code), (429, Some("too_many_streams")));
        assert!(e.message.contains("on this server"), "{}", e.message);
    }
}
