//! Mock HTTP servers: [`MockServer`] (wiremock) answers a script of replies in order and records
//! every request; [`HangingServer`] (a raw tokio listener) never answers and reports when the
//! client closes its connection, which wiremock cannot observe.

use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;
use wiremock::matchers::any;
use wiremock::{Mock, Request, Respond, ResponseTemplate};

use super::*;

/// One scripted HTTP answer.
#[derive(Clone, Debug)]
pub struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
    delay: Duration,
}

impl Reply {
    pub fn json(status: u16, body: Value) -> Self {
        Reply::raw(status, &body.to_string())
    }

    pub fn raw(status: u16, body: &str) -> Self {
        Reply {
            status,
            headers: Vec::new(),
            body: body.to_string(),
            delay: Duration::ZERO,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// The server waits `d` (real time, on wiremock's own runtime) before answering.
    pub fn delayed(mut self, d: Duration) -> Self {
        self.delay = d;
        self
    }

    fn template(&self) -> ResponseTemplate {
        let mut t = ResponseTemplate::new(self.status)
            .set_body_raw(self.body.clone().into_bytes(), "application/json");
        for (n, v) in &self.headers {
            t = t.insert_header(n.as_str(), v.as_str());
        }
        if !self.delay.is_zero() {
            t = t.set_delay(self.delay);
        }
        t
    }
}

/// A request the mock server received.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Recorded {
    fn from_request(r: &Request) -> Self {
        let path = match r.url.query() {
            Some(q) => format!("{}?{q}", r.url.path()),
            None => r.url.path().to_string(),
        };
        Recorded {
            method: r.method.to_string(),
            path,
            headers: r
                .headers
                .iter()
                .map(|(n, v)| {
                    (
                        n.as_str().to_ascii_lowercase(),
                        String::from_utf8_lossy(v.as_bytes()).to_string(),
                    )
                })
                .collect(),
            body: String::from_utf8_lossy(&r.body).to_string(),
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("request body is JSON")
    }

    /// Request line, headers and body as one text (for leak checks).
    pub fn raw_text(&self) -> String {
        let mut s = format!("{} {}\n", self.method, self.path);
        for (n, v) in &self.headers {
            s.push_str(&format!("{n}: {v}\n"));
        }
        s.push_str(&self.body);
        s
    }
}

/// Answers requests from a script, in order; a 500 once the script is exhausted.
struct Script {
    replies: Mutex<VecDeque<Reply>>,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl Respond for Script {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        self.requests
            .lock()
            .expect("lock")
            .push(Recorded::from_request(request));
        self.replies
            .lock()
            .expect("lock")
            .pop_front()
            .unwrap_or_else(|| Reply::raw(500, "{\"error\":{\"message\":\"no scripted reply\"}}"))
            .template()
    }
}

pub struct MockServer {
    server: wiremock::MockServer,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl MockServer {
    pub async fn start(replies: Vec<Reply>) -> Self {
        let server = wiremock::MockServer::start().await;
        let requests = Arc::new(Mutex::new(Vec::new()));
        Mock::given(any())
            .respond_with(Script {
                replies: Mutex::new(VecDeque::from(replies)),
                requests: requests.clone(),
            })
            .mount(&server)
            .await;
        MockServer { server, requests }
    }

    pub fn url(&self) -> String {
        self.server.uri()
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().expect("lock").clone()
    }

    pub fn count(&self) -> usize {
        self.requests.lock().expect("lock").len()
    }
}

/// Accepts connections, reads the request head and never answers; records how many requests
/// arrived and whether a client closed its connection while waiting.
pub struct HangingServer {
    addr: std::net::SocketAddr,
    received: Arc<std::sync::atomic::AtomicUsize>,
    client_aborted: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for HangingServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl HangingServer {
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let received = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let client_aborted = Arc::new(AtomicBool::new(false));
        let (r, a) = (received.clone(), client_aborted.clone());
        let task = tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                let (r, a) = (r.clone(), a.clone());
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut chunk = [0u8; 8192];
                    loop {
                        match sock.read(&mut chunk).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&chunk[..n]),
                        }
                        if head.windows(4).any(|w| w == b"\r\n\r\n") {
                            break;
                        }
                    }
                    r.fetch_add(1, Ordering::SeqCst);
                    // Drain the body and wait: only the client closing ends this loop.
                    loop {
                        if matches!(sock.read(&mut chunk).await, Ok(0) | Err(_)) {
                            a.store(true, Ordering::SeqCst);
                            return;
                        }
                    }
                });
            }
        });
        HangingServer {
            addr,
            received,
            client_aborted,
            task,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn count(&self) -> usize {
        self.received.load(Ordering::SeqCst)
    }

    pub fn client_aborted(&self) -> bool {
        self.client_aborted.load(Ordering::SeqCst)
    }
}
