//! The accept loop (docs/server.md, *Connections and limits*): hyper's HTTP/1 server with a
//! timer, so a connection that does not deliver a request head in time — a new one, or a
//! kept-alive one gone idle — is closed; a global and a per-address connection cap, checked
//! before a connection gets any buffer; and a graceful drain bounded by the shutdown grace.
//!
//! `axum::serve` runs hyper without a timer and accepts without a cap, so idle sockets were kept
//! for ever and a client could hold every file descriptor of the process.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use crate::Limits;

/// Open connections per client address, capped.
struct PerAddress {
    cap: usize,
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One open connection of an address; gives its place back when dropped.
struct AddressSlot {
    table: Arc<PerAddress>,
    ip: IpAddr,
}

impl PerAddress {
    /// A place for one more connection from `ip`, or `None` at the cap (0: no cap).
    fn acquire(self: &Arc<Self>, ip: IpAddr) -> Option<AddressSlot> {
        if self.cap == 0 {
            return Some(AddressSlot {
                table: Arc::clone(self),
                ip,
            });
        }
        let mut open = self.open.lock().ok()?;
        let n = open.entry(ip).or_insert(0);
        if *n >= self.cap {
            return None;
        }
        *n += 1;
        Some(AddressSlot {
            table: Arc::clone(self),
            ip,
        })
    }
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        if self.table.cap == 0 {
            return;
        }
        if let Ok(mut open) = self.table.open.lock()
            && let Some(n) = open.get_mut(&self.ip)
        {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

/// Refusals are logged at most this often (a flood would otherwise flood the log too).
const REFUSAL_LOG_EVERY: Duration = Duration::from_secs(5);

/// Serves `app` on `listener` until `shutdown` resolves; then stops accepting, lets open
/// connections finish their requests for up to `limits.shutdown_grace`, and closes the rest.
pub async fn serve_connections(
    listener: TcpListener,
    app: Router,
    limits: &Limits,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let cap = Arc::new(Semaphore::new(limits.connection_cap()));
    let per_address = Arc::new(PerAddress {
        cap: limits.max_connections_per_ip,
        open: Mutex::new(HashMap::new()),
    });
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(limits.keep_alive);
    let graceful = GracefulShutdown::new();
    let mut connections = tokio::task::JoinSet::new();
    let mut last_refusal_log: Option<tokio::time::Instant> = None;
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            Some(_) = connections.join_next() => continue,
            accepted = listener.accept() => match accepted {
                Ok(x) => x,
                Err(e) => {
                    // Out of file descriptors (or a transient error): back off briefly rather
                    // than spin on a listener that will fail again at once.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let Some(slots) = admit(&cap, &per_address, peer) else {
            refused(stream, peer, &mut last_refusal_log);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let conn =
            http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        let conn = graceful.watch(conn);
        connections.spawn(async move {
            // A client that goes away or times out ends its connection: nothing to report.
            let _ = conn.await;
            drop(slots);
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(limits.shutdown_grace) => {
            tracing::warn!(open = connections.len(), "shutdown grace over: closing open connections");
        }
    }
    connections.abort_all();
}

/// The global and the per-address place of a new connection, or `None` when either is full.
fn admit(
    cap: &Arc<Semaphore>,
    per_address: &Arc<PerAddress>,
    peer: SocketAddr,
) -> Option<(tokio::sync::OwnedSemaphorePermit, AddressSlot)> {
    let global = Arc::clone(cap).try_acquire_owned().ok()?;
    let slot = per_address.acquire(peer.ip())?;
    Some((global, slot))
}

fn refused(stream: TcpStream, peer: SocketAddr, last: &mut Option<tokio::time::Instant>) {
    drop(stream);
    let now = tokio::time::Instant::now();
    if last.is_none_or(|t| now - t >= REFUSAL_LOG_EVERY) {
        *last = Some(now);
        tracing::warn!(
            peer = %peer.ip(),
            "connection refused: connection cap reached (docs/server.md, *Connections and limits*)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_gets_its_place_back() {
        let t = Arc::new(PerAddress {
            cap: 2,
            open: Mutex::new(HashMap::new()),
        });
        let ip: IpAddr = [127, 0, 0, 1].into();
        let a = t.acquire(ip).expect("first");
        let _b = t.acquire(ip).expect("second");
        assert!(t.acquire(ip).is_none(), "third over the cap");
        assert!(
            t.acquire([127, 0, 0, 2].into()).is_some(),
            "another address"
        );
        drop(a);
        assert!(t.acquire(ip).is_some(), "a place came back");
    }
}
