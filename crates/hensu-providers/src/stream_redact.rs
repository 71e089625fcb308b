//! Streaming redaction (docs/security.md, *Streaming redaction*): text that leaves in pieces
//! (a model's tokens) is redacted across the pieces' boundaries. A piece's tail that could
//! be the start of a secret is held back until the next piece decides it (or the end of the
//! call flushes it), so a secret split across two, three or more pieces is still replaced
//! whole.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use hensu_runtime::tokens::{Token, TokenSink};

use crate::redact::Redactor;

impl Redactor {
    /// A redactor of one stream of pieces ([`StreamRedactor::push`], then
    /// [`StreamRedactor::finish`]).
    pub fn stream(&self) -> StreamRedactor<'_> {
        StreamRedactor {
            redactor: self,
            held: String::new(),
        }
    }
}

/// Redacts a stream of text pieces; what it returns, concatenated, is the whole text
/// redacted: no secret survives a split.
pub struct StreamRedactor<'r> {
    redactor: &'r Redactor,
    /// Text not yet released: it may be the start of a secret.
    held: String,
}

impl StreamRedactor<'_> {
    /// The part of the text so far that can be released, redacted (possibly empty).
    pub fn push(&mut self, piece: &str) -> String {
        if self.redactor.is_empty() {
            return piece.to_string();
        }
        self.held.push_str(piece);
        let cut = self.safe_cut();
        let rest = self.held.split_off(cut);
        let out = std::mem::replace(&mut self.held, rest);
        self.redactor.redact_string(out)
    }

    /// The rest, redacted (the end of the stream).
    pub fn finish(&mut self) -> String {
        self.redactor.redact_string(std::mem::take(&mut self.held))
    }

    /// Where the held text may be cut: before the longest tail that is a proper prefix of a
    /// secret, and never inside a whole secret that crosses the cut.
    fn safe_cut(&self) -> usize {
        let held = self.held.as_bytes();
        let mut cut = held.len();
        for secret in self.redactor.secret_values() {
            let s = secret.as_bytes();
            let longest = (s.len() - 1).min(held.len());
            if let Some(k) = (1..=longest).rev().find(|&k| held.ends_with(&s[..k])) {
                cut = cut.min(held.len() - k);
            }
        }
        // A whole secret that starts before the cut and ends after it moves the cut to its
        // start (until none does).
        loop {
            let mut moved = false;
            for secret in self.redactor.secret_values() {
                let s = secret.as_bytes();
                let from = cut.saturating_sub(s.len() - 1);
                let starts = held[from..]
                    .windows(s.len())
                    .enumerate()
                    .filter(|(_, w)| *w == s)
                    .map(|(i, _)| from + i);
                for start in starts {
                    if start < cut && start + s.len() > cut {
                        cut = start;
                        moved = true;
                    }
                }
            }
            if !moved {
                return cut;
            }
        }
    }
}

/// A [`TokenSink`] that redacts the tokens of each agent call as a stream (a
/// [`StreamRedactor`] per node and branch) before handing them on, and flushes what it held
/// when the call ends. Tokens are renumbered 0, 1, … per call as they are released.
pub struct RedactingTokenSink {
    redactor: Arc<Redactor>,
    inner: Arc<dyn TokenSink>,
    /// Per call: the held text and the next sequence number.
    calls: Mutex<HashMap<CallKey, (String, u64)>>,
}

/// An agent call's node and branch.
type CallKey = (String, Option<String>);

impl RedactingTokenSink {
    pub fn new(redactor: Arc<Redactor>, inner: Arc<dyn TokenSink>) -> RedactingTokenSink {
        RedactingTokenSink {
            redactor,
            inner,
            calls: Mutex::new(HashMap::new()),
        }
    }

    fn release(&self, node_id: &str, branch_id: Option<&str>, piece: Option<&str>) {
        let key = (node_id.to_string(), branch_id.map(str::to_string));
        let (text, sequence) = {
            let Ok(mut calls) = self.calls.lock() else {
                return;
            };
            let (held, next) = calls.entry(key.clone()).or_default();
            let mut stream = StreamRedactor {
                redactor: &self.redactor,
                held: std::mem::take(held),
            };
            let text = match piece {
                Some(p) => stream.push(p),
                None => stream.finish(),
            };
            *held = stream.held;
            let sequence = *next;
            if !text.is_empty() {
                *next += 1;
            }
            if piece.is_none() {
                calls.remove(&key);
            }
            (text, sequence)
        };
        if !text.is_empty() {
            self.inner.on_token(&Token {
                node_id,
                branch_id,
                sequence,
                text: &text,
            });
        }
    }
}

impl TokenSink for RedactingTokenSink {
    fn on_token(&self, token: &Token<'_>) {
        self.release(token.node_id, token.branch_id, Some(token.text));
    }

    fn on_end(&self, node_id: &str, branch_id: Option<&str>) {
        self.release(node_id, branch_id, None);
        self.inner.on_end(node_id, branch_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "sk-live-0123456789abcdef";

    fn streamed(r: &Redactor, pieces: &[&str]) -> Vec<String> {
        let mut s = r.stream();
        let mut out: Vec<String> = pieces.iter().map(|p| s.push(p)).collect();
        out.push(s.finish());
        out
    }

    #[test]
    fn a_secret_split_across_two_pieces_is_redacted() {
        let r = Redactor::new([("OPENAI_API_KEY", SECRET)]);
        let out = streamed(&r, &["the key is sk-live-0123", "456789abcdef, keep it"]);
        let text: String = out.concat();
        assert_eq!(text, "the key is <redacted:OPENAI_API_KEY>, keep it");
        for piece in &out {
            assert!(!piece.contains("sk-live"), "{piece}");
        }
        // The first piece released what cannot start the secret.
        assert_eq!(out[0], "the key is ");
    }

    #[test]
    fn a_secret_split_across_three_pieces_is_redacted() {
        let r = Redactor::new([("K", SECRET)]);
        let out = streamed(&r, &["a sk-", "live-0123456789", "abcdef b"]);
        assert_eq!(out.concat(), "a <redacted:K> b");
        assert!(out.iter().all(|p| !p.contains("0123")));
        // Split at every byte.
        let text = format!("x{SECRET}y{SECRET}");
        let bytes: Vec<String> = text.chars().map(String::from).collect();
        let refs: Vec<&str> = bytes.iter().map(String::as_str).collect();
        assert_eq!(streamed(&r, &refs).concat(), "x<redacted:K>y<redacted:K>");
    }

    #[test]
    fn a_false_start_is_released_and_the_end_flushes() {
        let r = Redactor::new([("K", SECRET)]);
        let out = streamed(&r, &["ends with sk-li", "ke nothing", " and sk-"]);
        assert_eq!(out.concat(), "ends with sk-like nothing and sk-");
        assert_eq!(out[0], "ends with ");
        assert_eq!(out[3], "sk-");
        // Without secrets, pieces go through as they are.
        assert_eq!(streamed(&Redactor::empty(), &["a", "b"]), ["a", "b", ""]);
    }

    #[test]
    fn a_whole_secret_crossing_the_cut_is_kept_whole() {
        // The tail "gh" starts B; A ends with it: A must not be cut in two.
        let r = Redactor::new([("A", "abcdefgh"), ("B", "ghijklmn")]);
        let out = streamed(&r, &["x abcdefgh", " y"]);
        assert_eq!(out.concat(), r.redact("x abcdefgh y"));
        assert!(out.iter().all(|p| !p.contains("abcdef")));
    }

    #[test]
    fn the_sink_redacts_per_call_and_flushes_at_the_end() {
        #[derive(Default)]
        struct Keep(Mutex<Vec<(String, u64, String)>>);
        impl TokenSink for Keep {
            fn on_token(&self, t: &Token<'_>) {
                self.0
                    .lock()
                    .expect("lock")
                    .push((t.node_id.into(), t.sequence, t.text.into()));
            }
        }
        let keep = Arc::new(Keep::default());
        let sink = RedactingTokenSink::new(Arc::new(Redactor::new([("K", SECRET)])), keep.clone());
        for (i, p) in ["key sk-live-01", "23456789abcdef ", "then sk"]
            .iter()
            .enumerate()
        {
            sink.on_token(&Token {
                node_id: "n",
                branch_id: None,
                sequence: i as u64,
                text: p,
            });
        }
        sink.on_end("n", None);
        let got = keep.0.lock().expect("lock").clone();
        let text: String = got.iter().map(|t| t.2.as_str()).collect();
        assert_eq!(text, "key <redacted:K> then sk");
        let seqs: Vec<u64> = got.iter().map(|t| t.1).collect();
        assert_eq!(seqs, (0..got.len() as u64).collect::<Vec<_>>());
        assert!(got.iter().all(|t| !t.2.contains("sk-live")));
    }
}
