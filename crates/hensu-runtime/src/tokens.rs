//! Token streaming (docs/server.md, *Token events*): while an agent call is in flight, the
//! provider underneath hands each piece of text the model generates to [`emit`]; the engine
//! scopes every agent call ([`in_call`]) with the node and branch it belongs to, and the
//! run's listener receives the pieces as [`Token`]s through its [`TokenSink`]
//! ([`crate::ExecutionListener::token_sink`], asked once per run).
//!
//! Tokens are a live view only: they are never journaled nor written to the run log (the
//! node's final output is). A provider streams (its streaming API) only when [`streaming`]
//! says someone listens, so a run without a token listener pays nothing. When the call ends,
//! the sink is told ([`TokenSink::on_end`]), so a sink that holds text back (the streaming
//! redaction of hensu-providers' `RedactingTokenSink`) can flush it.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// One piece of a node's text as the model writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token<'a> {
    pub node_id: &'a str,
    /// The parallel branch or map item (`<node>[<index>]`) the call belongs to.
    pub branch_id: Option<&'a str>,
    /// 0, 1, … within the agent call (a node's tool loop and re-prompts continue it).
    pub sequence: u64,
    pub text: &'a str,
}

/// Receives the tokens of a run.
pub trait TokenSink: Send + Sync {
    fn on_token(&self, token: &Token<'_>);
    /// The agent call of `node_id` (and `branch_id`) ended: no more tokens of it follow.
    fn on_end(&self, _node_id: &str, _branch_id: Option<&str>) {}
}

/// Several sinks, each told every token.
pub struct Fanout(pub Vec<Arc<dyn TokenSink>>);

impl TokenSink for Fanout {
    fn on_token(&self, token: &Token<'_>) {
        for s in &self.0 {
            s.on_token(token);
        }
    }
    fn on_end(&self, node_id: &str, branch_id: Option<&str>) {
        for s in &self.0 {
            s.on_end(node_id, branch_id);
        }
    }
}

/// The agent call in flight, as the token stream sees it.
#[derive(Clone)]
pub struct TokenScope {
    sink: Arc<dyn TokenSink>,
    node_id: Arc<str>,
    branch_id: Option<Arc<str>>,
    next: Arc<AtomicU64>,
}

impl TokenScope {
    pub fn new(sink: Arc<dyn TokenSink>, node_id: &str, branch_id: Option<&str>) -> TokenScope {
        TokenScope {
            sink,
            node_id: Arc::from(node_id),
            branch_id: branch_id.map(Arc::from),
            next: Arc::new(AtomicU64::new(0)),
        }
    }

    fn emit(&self, text: &str) {
        if text.is_empty() {
            return;
        }
        let sequence = self.next.fetch_add(1, Ordering::Relaxed);
        self.sink.on_token(&Token {
            node_id: &self.node_id,
            branch_id: self.branch_id.as_deref(),
            sequence,
            text,
        });
    }

    fn end(&self) {
        self.sink.on_end(&self.node_id, self.branch_id.as_deref());
    }
}

tokio::task_local! {
    static TOKENS: TokenScope;
}

/// Whether the current task's call has a token listener (a provider then uses its streaming
/// API).
pub fn streaming() -> bool {
    TOKENS.try_with(|_| ()).is_ok()
}

/// Hands a piece of the answer being generated to the call's token listener (nothing
/// outside a streamed call; empty text is skipped).
pub fn emit(text: &str) {
    let _ = TOKENS.try_with(|s| s.emit(text));
}

/// Runs `call` as a streamed call of `scope` (none: as it is); the sink is told when it
/// ends, however it ends (a dropped future included).
pub async fn in_call<F: Future>(scope: Option<TokenScope>, call: F) -> F::Output {
    match scope {
        Some(s) => {
            struct End(TokenScope);
            impl Drop for End {
                fn drop(&mut self) {
                    self.0.end();
                }
            }
            let _end = End(s.clone());
            Box::pin(TOKENS.scope(s, call)).await
        }
        None => call.await,
    }
}

/// `text` in a few pieces, emitted one after another (stub and recorded answers, so the
/// streaming path runs offline). Splits at char boundaries, about 4 pieces.
pub fn emit_in_pieces(text: &str) {
    if !streaming() || text.is_empty() {
        return;
    }
    let step = text.len().div_ceil(4).max(1);
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + step).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        emit(&text[start..end]);
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// A kept token: node, branch, sequence, text.
    type Kept = (String, Option<String>, u64, String);

    /// The tokens received and the ends told.
    #[derive(Default)]
    struct Keep(Mutex<Vec<Kept>>, Mutex<u32>);

    impl TokenSink for Keep {
        fn on_token(&self, t: &Token<'_>) {
            self.0.lock().expect("lock").push((
                t.node_id.into(),
                t.branch_id.map(str::to_string),
                t.sequence,
                t.text.into(),
            ));
        }
        fn on_end(&self, _: &str, _: Option<&str>) {
            *self.1.lock().expect("lock") += 1;
        }
    }

    #[tokio::test]
    async fn pieces_reach_the_scope_in_order_and_the_end_is_told() {
        let keep = Arc::new(Keep::default());
        assert!(!streaming());
        emit("nobody listens");
        let scope = TokenScope::new(keep.clone(), "write", Some("b1"));
        in_call(Some(scope), async {
            assert!(streaming());
            emit_in_pieces("héllo wörld, streamed");
            emit("");
        })
        .await;
        let got = keep.0.lock().expect("lock").clone();
        let text: String = got.iter().map(|t| t.3.as_str()).collect();
        assert_eq!(text, "héllo wörld, streamed");
        assert!(got.len() >= 3);
        for (i, t) in got.iter().enumerate() {
            assert_eq!(
                (t.0.as_str(), t.1.as_deref(), t.2),
                ("write", Some("b1"), i as u64)
            );
        }
        assert_eq!(*keep.1.lock().expect("lock"), 1);
    }
}
