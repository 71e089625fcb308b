//! Drives the real `hensuc lsp` binary over stdio with Content-Length framing: a scripted client
//! session initialize → initialized → didOpen → (diagnostics) → completion → definition →
//! shutdown → exit, asserting on the answers.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

const DOC: &str = r#"workflow("stdio") {
    agents {
        agent("writer") { role = "Writer"; model = "stub" }
    }
    graph {
        start at "write"
        node("write") {
            agent = "writer"
            prompt = "Write."
            onSuccess goto "done"
        }
        node("check") {
            agent = "writer"
            onSuccess goto "dnoe"
        }
        end("done")
    }
}
"#;

struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: mpsc::Receiver<Value>,
}

fn read_message(r: &mut BufReader<ChildStdout>) -> Option<Value> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            len = v.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; len?];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

impl Client {
    fn start() -> Client {
        Client::start_with(&["lsp"])
    }

    fn start_with(args: &[&str]) -> Client {
        let mut child = crate::hensuc()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, messages) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(m) = read_message(&mut r) {
                if tx.send(m).is_err() {
                    break;
                }
            }
        });
        Client {
            child,
            stdin,
            messages,
        }
    }

    fn send(&mut self, msg: Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let m = self.next();
            if m["id"] == json!(id) && m.get("method").is_none() {
                assert!(m.get("error").is_none(), "{method} failed: {m}");
                return m["result"].clone();
            }
        }
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn next(&mut self) -> Value {
        self.messages
            .recv_timeout(Duration::from_secs(30))
            .expect("the server answered within 30 s")
    }
}

#[test]
fn scripted_session() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("workflows")).unwrap();
    let path = dir.path().join("workflows").join("stdio.hwf");
    std::fs::write(&path, DOC).unwrap();
    let uri = format!("file://{}", path.display());

    let mut c = Client::start();
    let init = c.request(
        1,
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    let caps = &init["capabilities"];
    assert_eq!(caps["textDocumentSync"], json!(2), "incremental sync");
    assert_eq!(caps["definitionProvider"], json!(true));
    assert_eq!(caps["documentFormattingProvider"], json!(true));
    assert!(caps["completionProvider"]["triggerCharacters"].is_array());
    assert!(caps["semanticTokensProvider"]["legend"]["tokenTypes"].is_array());
    c.notify("initialized", json!({}));

    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "hwf", "version": 1, "text": DOC}}),
    );
    // The diagnostics of the opened document: the misspelt `dnoe`, with a did-you-mean.
    let published = loop {
        let m = c.next();
        if m["method"] == json!("textDocument/publishDiagnostics") {
            break m["params"].clone();
        }
    };
    assert_eq!(published["uri"], json!(uri));
    let diags = published["diagnostics"].as_array().unwrap();
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0]["code"], json!("E0204"));
    assert_eq!(
        diags[0]["range"],
        json!({"start": {"line": 13, "character": 27}, "end": {"line": 13, "character": 33}})
    );
    assert!(
        diags[0]["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `done`?")
    );

    // Completion of node ids inside `goto "…"` (line 9: `onSuccess goto "done"`).
    let completion = c.request(
        2,
        "textDocument/completion",
        json!({"textDocument": {"uri": uri}, "position": {"line": 9, "character": 28}}),
    );
    let labels: Vec<&str> = completion
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["write", "check", "done"]);

    // Definition of `"done"` in that goto: the `end("done")` declaration (line 15).
    let definition = c.request(
        3,
        "textDocument/definition",
        json!({"textDocument": {"uri": uri}, "position": {"line": 9, "character": 29}}),
    );
    assert_eq!(definition["uri"], json!(uri));
    assert_eq!(
        definition["range"],
        json!({"start": {"line": 15, "character": 13}, "end": {"line": 15, "character": 17}})
    );

    let shutdown = c.request(4, "shutdown", Value::Null);
    assert_eq!(shutdown, Value::Null);
    c.notify("exit", Value::Null);
    drop(c.stdin);
    let status = c.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

/// LSP clients append `--stdio` to the server command (vscode-languageclient does with
/// `TransportKind.stdio`); `hensuc lsp --stdio` must serve a session, not exit with a usage error.
#[test]
fn accepts_the_stdio_flag_clients_append() {
    let mut c = Client::start_with(&["lsp", "--stdio"]);
    let init = c.request(
        1,
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    assert_eq!(init["capabilities"]["textDocumentSync"], json!(2));
    c.notify("initialized", json!({}));
    assert_eq!(c.request(2, "shutdown", Value::Null), Value::Null);
    c.notify("exit", Value::Null);
    drop(c.stdin);
    let status = c.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}
