//! A provider endpoint answering 3xx must never make hensu send the key (or the prompt) to the
//! new location: model calls do not follow redirects (docs/security.md, *Where keys go*).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use hensu_providers::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const KEY: &str = "sk-redirect-test-secret-0123456789";

/// A one-shot HTTP server on 127.0.0.1 that records each request head and answers `reply`.
async fn server(reply: String) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut buf = Vec::new();
            let mut chunk = [0u8; 8192];
            while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                match sock.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => buf.extend_from_slice(&chunk[..n]),
                }
            }
            record
                .lock()
                .expect("lock")
                .push(String::from_utf8_lossy(&buf).to_string());
            let _ = sock.write_all(reply.as_bytes()).await;
            let _ = sock.shutdown().await;
        }
    });
    (url, seen)
}

fn request(model: &str) -> ChatRequest {
    ChatRequest {
        model: model.to_string(),
        system: String::new(),
        turns: vec![Turn::User("the secret prompt".to_string())],
        params: GenParams::default(),
        tools: Vec::new(),
    }
}

async fn redirect_is_not_followed(kind: ProviderKind, env: &str, model: &str) {
    let (elsewhere, elsewhere_seen) =
        server("HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}".into()).await;
    let target = format!("{elsewhere}/steal");
    let (configured, configured_seen) = server(format!(
        "HTTP/1.1 307 Temporary Redirect\r\nlocation: {target}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    ))
    .await;
    let redactor = Arc::new(Redactor::new([(env, KEY)]));
    let backend = HttpBackend::new("p", kind, configured, Some(ApiKey::new(env, KEY)), redactor)
        .expect("backend");
    let err = backend
        .chat(&request(model), Duration::from_secs(20))
        .await
        .expect_err("a redirect is an error");
    assert!(err.message.contains(&target), "{}", err.message);
    assert!(err.message.contains("307"), "{}", err.message);
    assert_eq!(configured_seen.lock().expect("lock").len(), 1);
    assert!(
        elsewhere_seen.lock().expect("lock").is_empty(),
        "the redirect target received a request: {:?}",
        elsewhere_seen.lock().expect("lock")
    );
}

#[tokio::test]
async fn anthropic_key_is_not_sent_to_a_redirect_target() {
    redirect_is_not_followed(ProviderKind::Anthropic, "ANTHROPIC_API_KEY", "claude-x").await;
}

#[tokio::test]
async fn gemini_key_is_not_sent_to_a_redirect_target() {
    redirect_is_not_followed(ProviderKind::Gemini, "GEMINI_API_KEY", "gemini-x").await;
}

#[tokio::test]
async fn openai_key_is_not_sent_to_a_redirect_target() {
    redirect_is_not_followed(ProviderKind::OpenAi, "OPENAI_API_KEY", "gpt-x").await;
}
