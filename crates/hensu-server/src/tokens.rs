//! The token events of the runs executing on this server (docs/server.md, *Token events*):
//! the text of the node in flight as the model writes it. Tokens are never written to the
//! run log (the node's output is, when it finishes); they live here, in memory:
//!
//! * every token gets the next number of this server ([`TokenMsg::index`], increasing across
//!   all runs), so a stream's `Last-Event-ID` `<row id>.<index>` says which it saw last;
//! * each run keeps the tokens of its node in flight ([`TokenHub::subscribe`]) until the node's
//!   boundary is recorded (its output is in the log from then on), so a reconnect mid-node
//!   gets every token after the one it saw, and a subscriber that comes after the node
//!   finished reads the output from the log instead;
//! * live tokens go out on one broadcast channel; a stream that falls behind loses tokens
//!   (it counts them and reports the count on its next token), never a log event, which every
//!   stream reads from the store.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use hensu_host::DurableRun;
use hensu_runtime::tokens::{Token, TokenSink};
use tokio::sync::broadcast;

/// Live tokens not yet read before a stream counts as fallen behind.
const LIVE_TOKENS: usize = 4096;
/// Tokens of a node in flight kept for reconnects (the oldest go first).
const BACKLOG: usize = 16_384;

/// One token of a run executing here.
#[derive(Debug)]
pub struct TokenMsg {
    pub index: u64,
    pub tenant: String,
    pub run_id: String,
    pub workflow_id: String,
    pub node_id: String,
    pub branch_id: Option<String>,
    pub sequence: u64,
    pub text: String,
    pub at_ms: u64,
}

/// The tokens of the runs executing on this server.
pub struct TokenHub {
    next: AtomicU64,
    live: broadcast::Sender<Arc<TokenMsg>>,
    /// Per run: the tokens of its node in flight.
    backlogs: Mutex<HashMap<String, Vec<Arc<TokenMsg>>>>,
}

impl std::fmt::Debug for TokenHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenHub").finish_non_exhaustive()
    }
}

impl Default for TokenHub {
    fn default() -> Self {
        TokenHub {
            next: AtomicU64::new(1),
            live: broadcast::channel(LIVE_TOKENS).0,
            backlogs: Mutex::new(HashMap::new()),
        }
    }
}

impl TokenHub {
    /// The live tokens from now on, and the kept tokens of `run` (or of every run of
    /// `tenant`) numbered after `after`, taken together so none falls between.
    pub fn subscribe(
        &self,
        filter: &(dyn Fn(&TokenMsg) -> bool + Sync),
        after: u64,
    ) -> (Vec<Arc<TokenMsg>>, broadcast::Receiver<Arc<TokenMsg>>) {
        let Ok(backlogs) = self.backlogs.lock() else {
            return (Vec::new(), self.live.subscribe());
        };
        let rx = self.live.subscribe();
        let mut kept: Vec<Arc<TokenMsg>> = backlogs
            .values()
            .flatten()
            .filter(|t| t.index > after && filter(t))
            .cloned()
            .collect();
        kept.sort_by_key(|t| t.index);
        (kept, rx)
    }

    fn publish(&self, msg: TokenMsg) {
        let Ok(mut backlogs) = self.backlogs.lock() else {
            return;
        };
        let msg = Arc::new(TokenMsg {
            index: self.next.fetch_add(1, Ordering::Relaxed),
            ..msg
        });
        let kept = backlogs.entry(msg.run_id.clone()).or_default();
        if kept.len() >= BACKLOG {
            kept.remove(0);
        }
        kept.push(msg.clone());
        // Under the lock: a subscriber gets a token either from the backlog or live.
        let _ = self.live.send(msg);
    }

    /// The node in flight of `run_id` reached its boundary: its output is in the log now.
    pub fn node_done(&self, run_id: &str) {
        if let Ok(mut b) = self.backlogs.lock() {
            b.remove(run_id);
        }
    }

    /// The sink of one run's tokens (redacted before it by the run's `RedactingTokenSink`).
    pub fn sink(
        self: &Arc<Self>,
        tenant: &str,
        workflow_id: &str,
        durable: &Arc<DurableRun>,
    ) -> Arc<dyn TokenSink> {
        Arc::new(RunSink {
            hub: self.clone(),
            tenant: tenant.into(),
            run_id: durable.run_id().into(),
            workflow_id: workflow_id.into(),
        })
    }
}

struct RunSink {
    hub: Arc<TokenHub>,
    tenant: String,
    run_id: String,
    workflow_id: String,
}

impl TokenSink for RunSink {
    fn on_token(&self, t: &Token<'_>) {
        self.hub.publish(TokenMsg {
            index: 0,
            tenant: self.tenant.clone(),
            run_id: self.run_id.clone(),
            workflow_id: self.workflow_id.clone(),
            node_id: t.node_id.into(),
            branch_id: t.branch_id.map(str::to_string),
            sequence: t.sequence,
            text: t.text.into(),
            at_ms: hensu_store::now_ms(),
        });
    }
}

impl Drop for RunSink {
    fn drop(&mut self) {
        self.hub.node_done(&self.run_id);
    }
}

/// A listener that gives the run's token sink (redacting) and nothing else.
pub(crate) struct TokenListener(pub(crate) Arc<dyn TokenSink>);

impl hensu_runtime::ExecutionListener for TokenListener {
    fn wants_step_events(&self) -> bool {
        false
    }
    fn token_sink(&self) -> Option<Arc<dyn TokenSink>> {
        Some(self.0.clone())
    }
}

/// A stream's position among tokens: `<row id>.<index>` or a plain row id.
pub(crate) fn split_id(id: &str) -> Option<(&str, u64)> {
    let (row, index) = id.rsplit_once('.')?;
    Some((row, index.parse().ok()?))
}

/// Counts the tokens a stream lost by falling behind and hands out the live ones it wants.
pub(crate) struct Follow {
    pub(crate) rx: broadcast::Receiver<Arc<TokenMsg>>,
    pub(crate) dropped: u64,
    pub(crate) last: u64,
}

impl Follow {
    /// The next live token `wanted` accepts (`None`: the hub is gone).
    pub(crate) async fn next(
        &mut self,
        wanted: &(dyn Fn(&TokenMsg) -> bool + Sync),
    ) -> Option<Arc<TokenMsg>> {
        loop {
            match self.rx.recv().await {
                Ok(t) if t.index > self.last && wanted(&t) => {
                    self.last = t.index;
                    return Some(t);
                }
                Ok(_) => {}
                Err(broadcast::error::RecvError::Lagged(n)) => self.dropped += n,
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    /// The live tokens `wanted` accepts that were published already, without waiting: a
    /// stream about to show a log event shows them first, since a node's tokens are all
    /// published before its boundary is committed.
    pub(crate) fn ready(
        &mut self,
        wanted: &(dyn Fn(&TokenMsg) -> bool + Sync),
    ) -> Vec<Arc<TokenMsg>> {
        let mut ready = Vec::new();
        loop {
            match self.rx.try_recv() {
                Ok(t) if t.index > self.last && wanted(&t) => {
                    self.last = t.index;
                    ready.push(t);
                }
                Ok(_) => {}
                Err(broadcast::error::TryRecvError::Lagged(n)) => self.dropped += n,
                Err(_) => return ready,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(run: &str, text: &str) -> TokenMsg {
        TokenMsg {
            index: 0,
            tenant: "t".into(),
            run_id: run.into(),
            workflow_id: "wf".into(),
            node_id: "n".into(),
            branch_id: None,
            sequence: 0,
            text: text.into(),
            at_ms: 0,
        }
    }

    #[tokio::test]
    async fn a_reconnect_gets_the_kept_tokens_after_its_id_until_the_node_is_done() {
        let hub = TokenHub::default();
        for t in ["a", "b", "c"] {
            hub.publish(token("r1", t));
        }
        hub.publish(token("r2", "other run"));
        let of_r1 = |t: &TokenMsg| t.run_id == "r1";
        let (kept, _) = hub.subscribe(&of_r1, 1);
        let texts: Vec<&str> = kept.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(texts, ["b", "c"]);
        hub.node_done("r1");
        let (kept, _) = hub.subscribe(&of_r1, 0);
        assert!(kept.is_empty(), "the node's output is in the log now");
        assert_eq!(split_id("12.7"), Some(("12", 7)));
        assert_eq!(split_id("12"), None);
    }

    #[tokio::test]
    async fn a_slow_subscriber_loses_tokens_and_counts_them() {
        let hub = TokenHub::default();
        let any = |_: &TokenMsg| true;
        let (_, rx) = hub.subscribe(&any, 0);
        let mut follow = Follow {
            rx,
            dropped: 0,
            last: 0,
        };
        let extra = 10;
        for i in 0..LIVE_TOKENS + extra {
            hub.publish(token("r", &i.to_string()));
        }
        let first = follow.next(&any).await.expect("a token");
        assert_eq!(follow.dropped, extra as u64);
        assert_eq!(first.text, extra.to_string(), "the oldest still held");
        // The rest comes in order, none twice.
        let second = follow.next(&any).await.expect("a token");
        assert_eq!(second.index, first.index + 1);
    }
}
