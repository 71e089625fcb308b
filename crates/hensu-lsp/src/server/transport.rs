//! Content-Length framing on stdin/stdout, tolerant of a misbehaving client: a frame without a
//! `Content-Length` header, a body that is not UTF-8 or not JSON, or a JSON-RPC batch (LSP has
//! none) is logged on stderr and skipped; a message with an id that is not a valid request gets
//! an `InvalidRequest` error. Only the end of stdin ends the reader. (`lsp-server`'s own stdio
//! reader stops at the first malformed frame, which ends the session.)

use std::io::{self, BufRead, Read, Write};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};
use lsp_server::{Connection, ErrorCode, Message, RequestId, Response};

/// The threads behind a stdio [`Connection`].
pub struct StdioThreads {
    writer: JoinHandle<io::Result<()>>,
}

impl StdioThreads {
    /// Waits until every message sent so far is written (call after dropping the connection).
    /// The reader is not joined: it may sit in a blocking read of stdin until the client closes
    /// it, and the process exits regardless.
    pub fn join_writer(self) -> io::Result<()> {
        self.writer
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the writer thread panicked")))
    }
}

/// A connection on stdin/stdout.
pub fn stdio() -> (Connection, StdioThreads) {
    let (out_tx, out_rx) = crossbeam_channel::unbounded::<Message>();
    let (in_tx, in_rx) = crossbeam_channel::unbounded::<Message>();
    // The reader's own error replies have a channel of their own: the reader may sit in a
    // blocking read of stdin for ever, and a clone of `out_tx` held there would keep the writer
    // (and so the process) from ending after `exit`.
    let (reply_tx, reply_rx) = crossbeam_channel::unbounded::<Message>();
    let writer = std::thread::Builder::new()
        .name("hensu-lsp-writer".to_string())
        .spawn(move || write_all(&out_rx, &reply_rx, &mut io::stdout().lock()));
    let replies = reply_tx;
    let _reader = std::thread::Builder::new()
        .name("hensu-lsp-reader".to_string())
        .spawn(move || read_all(&mut io::stdin().lock(), &in_tx, &replies));
    let writer = writer.unwrap_or_else(|e| std::thread::spawn(move || Err(e)));
    (
        Connection {
            sender: out_tx,
            receiver: in_rx,
        },
        StdioThreads { writer },
    )
}

/// Writes the server's messages and the reader's replies until the server's side is dropped.
fn write_all(
    rx: &Receiver<Message>,
    replies: &Receiver<Message>,
    out: &mut impl Write,
) -> io::Result<()> {
    let mut replies_open = true;
    loop {
        if replies_open {
            crossbeam_channel::select! {
                recv(rx) -> msg => match msg {
                    Ok(msg) => msg.write(out)?,
                    Err(_) => break,
                },
                recv(replies) -> msg => match msg {
                    Ok(msg) => msg.write(out)?,
                    Err(_) => replies_open = false,
                },
            }
        } else {
            match rx.recv() {
                Ok(msg) => msg.write(out)?,
                Err(_) => break,
            }
        }
    }
    for msg in replies.try_iter() {
        msg.write(out)?;
    }
    Ok(())
}

/// Reads frames until the end of input; the messages go to `messages`, errors for malformed
/// requests to `replies`.
pub fn read_all(input: &mut impl BufRead, messages: &Sender<Message>, replies: &Sender<Message>) {
    loop {
        match read_frame(input) {
            Ok(Frame::End) => return,
            Ok(Frame::Body(body)) => match decode(&body) {
                Ok(msg) => {
                    if messages.send(msg).is_err() {
                        return;
                    }
                }
                Err(Malformed { reason, id }) => {
                    log(&reason);
                    if let Some(id) = id {
                        let reply = Response::new_err(id, ErrorCode::InvalidRequest as i32, reason);
                        let _ = replies.send(Message::Response(reply));
                    }
                }
            },
            Ok(Frame::Skipped(reason)) => log(&reason),
            Err(e) => {
                log(&format!("cannot read stdin: {e}"));
                return;
            }
        }
    }
}

fn log(reason: &str) {
    eprintln!("hensuc lsp: skipped a message: {reason}");
}

enum Frame {
    Body(Vec<u8>),
    Skipped(String),
    End,
}

const CONTENT_LENGTH: &str = "Content-Length:";

/// One frame: header lines up to an empty line, then `Content-Length` bytes. A header line with
/// garbage before `Content-Length:` (the unread body of a frame without a length) resynchronises
/// on it.
fn read_frame(input: &mut impl BufRead) -> io::Result<Frame> {
    let mut length: Option<usize> = None;
    let mut garbage = false;
    let mut any = false;
    loop {
        let mut line = Vec::new();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(if any && length.is_none() {
                Frame::Skipped("a frame without `Content-Length` at the end of input".to_string())
            } else {
                Frame::End
            });
        }
        any = true;
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if length.is_some() {
                break;
            }
            if garbage {
                return Ok(Frame::Skipped(
                    "a frame without a `Content-Length` header".to_string(),
                ));
            }
            continue;
        }
        let header = match line.find(CONTENT_LENGTH) {
            Some(0) => line,
            Some(i) => {
                garbage = true;
                &line[i..]
            }
            None => {
                // Other headers (`Content-Type`) are allowed; anything without a colon is not a
                // header.
                if !line.contains(':') {
                    garbage = true;
                }
                continue;
            }
        };
        match header[CONTENT_LENGTH.len()..].trim().parse::<usize>() {
            Ok(n) => length = Some(n),
            Err(_) => garbage = true,
        }
    }
    let Some(length) = length else {
        return Ok(Frame::Skipped("no `Content-Length`".to_string()));
    };
    // A client cannot make the server allocate without bound.
    const MAX_BODY: usize = 256 << 20;
    if length > MAX_BODY {
        io::copy(&mut input.take(length as u64), &mut io::sink())?;
        return Ok(Frame::Skipped(format!(
            "a body of {length} bytes (over {MAX_BODY})"
        )));
    }
    let mut body = vec![0; length];
    input.read_exact(&mut body)?;
    if garbage {
        log("garbage before a `Content-Length` header");
    }
    Ok(Frame::Body(body))
}

struct Malformed {
    reason: String,
    /// The id of a message that looks like a request, to answer with an error.
    id: Option<RequestId>,
}

fn decode(body: &[u8]) -> Result<Message, Malformed> {
    let malformed = |reason: String| Malformed { reason, id: None };
    let text =
        std::str::from_utf8(body).map_err(|e| malformed(format!("the body is not UTF-8 ({e})")))?;
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| malformed(format!("the body is not JSON ({e})")))?;
    if value.is_array() {
        return Err(malformed(
            "a JSON-RPC batch (the language server protocol has none)".to_string(),
        ));
    }
    let id = value
        .get("id")
        .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
    let has_method = value.get("method").is_some();
    match serde_json::from_value::<Message>(value) {
        // `Message` is untagged: a request with a bad `method` would pass as a response.
        Ok(Message::Response(_)) if has_method => Err(Malformed {
            reason: "`method` is not a string".to_string(),
            id,
        }),
        Ok(msg) => Ok(msg),
        Err(e) => Err(Malformed {
            reason: format!("not a JSON-RPC message ({e})"),
            id,
        }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut v = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        v.extend_from_slice(body);
        v
    }

    /// Every kind of malformed frame between two good ones: both good ones arrive, and only the
    /// invalid request with an id is answered.
    #[test]
    fn malformed_frames_are_skipped() {
        let good = br#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
        let mut input = frame(good);
        input.extend(frame(b"{not json"));
        input.extend(frame(br#"[{"jsonrpc":"2.0","id":1,"method":"shutdown"}]"#));
        input.extend(frame(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\"}"));
        input.extend(frame(br#"{"jsonrpc":"2.0","id":7,"method":7}"#));
        input.extend(b"Content-Type: x\r\n\r\n{\"no\":\"length\"}".iter());
        input.extend(frame(good));
        let (tx, rx) = crossbeam_channel::unbounded();
        let (reply_tx, reply_rx) = crossbeam_channel::unbounded();
        read_all(&mut io::Cursor::new(input), &tx, &reply_tx);
        drop((tx, reply_tx));
        let got: Vec<Message> = rx.iter().collect();
        assert_eq!(got.len(), 2, "{got:?}");
        let replies: Vec<Message> = reply_rx.iter().collect();
        assert_eq!(replies.len(), 1, "{replies:?}");
        let Message::Response(r) = &replies[0] else {
            panic!("a response expected");
        };
        assert_eq!(r.id, RequestId::from(7));
        assert_eq!(
            r.error.as_ref().unwrap().code,
            ErrorCode::InvalidRequest as i32
        );
    }
}
