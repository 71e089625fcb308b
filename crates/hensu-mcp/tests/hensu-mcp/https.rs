//! `https://` servers: the rmcp test server behind a TLS listener whose certificate a private
//! authority, generated here, signed. Trusted through `ca_file`; refused without it.

use std::net::SocketAddr;
use std::sync::Arc;

use hensu_mcp::McpClients;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

use crate::support::*;

/// A TCP listener that completes a TLS handshake before handing a connection to axum. A failed
/// handshake (a client that does not trust the certificate) is dropped; serving goes on.
struct TlsListener {
    tcp: TcpListener,
    acceptor: TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, addr)) = self.tcp.accept().await else {
                continue;
            };
            if let Ok(tls) = self.acceptor.accept(stream).await {
                return (tls, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

/// Serves [`TestServer`] over streamable HTTP inside TLS on a loopback port ([`serve_tls`]).
/// Returns the URL and the authority's certificate (PEM).
async fn https_server() -> (String, String) {
    let service: StreamableHttpService<TestServer, LocalSessionManager> =
        StreamableHttpService::new(
            || Ok(TestServer),
            Default::default(),
            StreamableHttpServerConfig::default(),
        );
    let (base, ca) = serve_tls(axum::Router::new().nest_service("/mcp", service)).await;
    (format!("{base}/mcp"), ca)
}

/// Serves `router` inside TLS on a loopback port, with a certificate for `127.0.0.1` and
/// `localhost` signed by a fresh private authority. Returns the base URL and the authority's
/// certificate (PEM).
pub(crate) async fn serve_tls(router: axum::Router) -> (String, String) {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("ca params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("ca key"))
        .expect("ca certificate");
    let server_key = KeyPair::generate().expect("server key");
    let server_cert = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".into()])
        .expect("server params")
        .signed_by(&server_key, &ca)
        .expect("server certificate");

    let tls = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("protocol versions")
    .with_no_client_auth()
    .with_single_cert(
        vec![server_cert.der().clone()],
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der())),
    )
    .expect("server TLS config");

    let tcp = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = tcp.local_addr().expect("addr");
    let listener = TlsListener {
        tcp,
        acceptor: TlsAcceptor::from(Arc::new(tls)),
    };
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (format!("https://{addr}"), ca.pem())
}

#[tokio::test]
async fn https_server_with_its_ca_file_lists_and_calls_tools() {
    let (url, ca_pem) = https_server().await;
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("private-ca.pem"), ca_pem).expect("write ca");
    // A relative `ca_file` is relative to the run's working directory.
    let clients = McpClients::connect(
        &config(&format!(
            "[mcp.servers.secure]\nurl = \"{url}\"\nca_file = \"private-ca.pem\"\n"
        )),
        dir.path(),
    )
    .await
    .expect("connect over TLS");
    assert_eq!(clients.tools().len(), 5);
    assert_eq!(clients.tools()["echo"].server, "secure");
    assert_eq!(
        clients.call("echo", json!({"text": "over tls"})).await,
        Ok("over tls".to_string())
    );
    clients.shutdown().await;
}

#[tokio::test]
async fn https_server_without_ca_file_is_refused_with_a_clear_error() {
    let (url, _) = https_server().await;
    let dir = tempfile::tempdir().expect("dir");
    // A credential in the URL must not reach the message.
    let secret = "sk-openai-test-FAKE-in-url-123";
    let e = McpClients::connect(
        &config(&format!(
            "[mcp.servers.secure]\nurl = \"{url}?api_key={secret}\"\n"
        )),
        dir.path(),
    )
    .await
    .expect_err("the public roots do not trust a private authority");
    let text = e.to_string();
    assert_eq!(
        text,
        "MCP server 'secure': TLS handshake failed: invalid peer certificate: UnknownIssuer \
         (the server's certificate is not signed by a trusted authority; for a private \
         authority or a self-signed server, set `ca_file`)"
    );
    assert!(!text.contains(secret), "{text}");
}

#[tokio::test]
async fn a_bad_ca_file_is_an_error_naming_the_server_and_the_file() {
    let (url, _) = https_server().await;
    let dir = tempfile::tempdir().expect("dir");
    std::fs::write(dir.path().join("empty.pem"), "not a certificate\n").expect("write");
    let connect = |ca_file: &str| {
        let config = config(&format!(
            "[mcp.servers.secure]\nurl = \"{url}\"\nca_file = \"{ca_file}\"\n"
        ));
        let dir = dir.path().to_path_buf();
        async move { McpClients::connect(&config, &dir).await.map(|_| ()) }
    };
    let e = connect("missing.pem").await.expect_err("missing file");
    let missing = dir.path().join("missing.pem");
    assert!(
        e.to_string().starts_with(&format!(
            "MCP server 'secure': ca_file `{}`: cannot read it:",
            missing.display()
        )),
        "{e}"
    );
    let e = connect("empty.pem").await.expect_err("no certificate");
    assert_eq!(
        e.to_string(),
        format!(
            "MCP server 'secure': ca_file `{}`: no PEM certificate in it",
            dir.path().join("empty.pem").display()
        )
    );
}

#[test]
fn ca_file_belongs_to_https_servers() {
    let e = crate::support::parse(
        "[mcp.servers.a]\nurl = \"http://127.0.0.1:1/mcp\"\nca_file = \"ca.pem\"\n",
    )
    .expect_err("plain http");
    assert_eq!(
        e,
        "mcp.servers.a: `ca_file` applies to `https://` servers only"
    );
    let e = crate::support::parse("[mcp.servers.a]\ncommand = \"x\"\nca_file = \"ca.pem\"\n")
        .expect_err("stdio");
    assert_eq!(
        e,
        "mcp.servers.a: `ca_file` applies to `https://` servers only"
    );
    // Plain HTTP stays accepted for any host, as before.
    let c = crate::support::parse("[mcp.servers.a]\nurl = \"http://tools.example/mcp\"\n")
        .expect("plain http");
    assert_eq!(
        c.endpoints().expect("endpoints")[0].1,
        hensu_mcp::Endpoint::Http {
            url: "http://tools.example/mcp".into(),
            ca_file: None
        }
    );
}

#[tokio::test]
async fn credentials_in_a_url_never_reach_a_connect_error() {
    // Nothing listens on port 1: the request fails, and reqwest quotes its URL.
    let dir = tempfile::tempdir().expect("dir");
    let secret = "sk-openai-test-FAKE-in-query-456";
    let e = McpClients::connect(
        &config(&format!(
            "[mcp.servers.down]\nurl = \"http://user:{secret}@127.0.0.1:1/mcp?key={secret}\"\n"
        )),
        dir.path(),
    )
    .await
    .expect_err("nothing listens");
    let text = e.to_string();
    assert!(
        text.starts_with("MCP server 'down': initialize failed:"),
        "{text}"
    );
    assert!(text.contains("http://127.0.0.1:1/mcp"), "{text}");
    assert!(!text.contains(secret), "{text}");
}
