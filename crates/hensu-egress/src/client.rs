//! The policy in a reqwest client: a resolver that keeps only allowed addresses, a redirect
//! policy that checks every hop, no proxy.

use std::error::Error;
use std::net::SocketAddr;
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::policy::{EgressError, EgressPolicy};

/// Redirects followed at most (reqwest's default).
const MAX_REDIRECTS: usize = 10;

/// A reqwest resolver under a policy: resolves a host name with the system resolver (tokio's
/// `lookup_host`, as reqwest's default resolver) and hands reqwest only the addresses the
/// policy allows, so the connection goes to an address that was checked.
#[derive(Clone, Debug)]
pub struct CheckingResolver {
    policy: Arc<EgressPolicy>,
}

impl CheckingResolver {
    pub fn new(policy: Arc<EgressPolicy>) -> CheckingResolver {
        CheckingResolver { policy }
    }
}

impl Resolve for CheckingResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            // The port is replaced by the URL's when reqwest connects.
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let kept = policy.check_resolved(&host, addrs)?;
            Ok(Box::new(kept.into_iter()) as Addrs)
        })
    }
}

/// A client builder under `policy`: the [`CheckingResolver`], every redirect hop checked (at
/// most ten), and no proxy (an environment proxy would connect on the client's behalf, to
/// addresses nobody checked). Requests to an IP literal must be checked with
/// [`EgressPolicy::check_url`] before they are sent: reqwest does not resolve those.
pub fn client_builder(policy: Arc<EgressPolicy>) -> reqwest::ClientBuilder {
    let hops = policy.clone();
    reqwest::Client::builder()
        .dns_resolver(Arc::new(CheckingResolver::new(policy)))
        .no_proxy()
        .redirect(reqwest::redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() >= MAX_REDIRECTS {
                return attempt.error("too many redirects");
            }
            match hops.check_url(attempt.url()) {
                Ok(()) => attempt.follow(),
                Err(refused) => attempt.error(refused),
            }
        }))
}

/// The policy's refusal behind a reqwest error (a denied resolution or redirect hop), if that
/// is what the error is.
pub fn refusal(error: &reqwest::Error) -> Option<&EgressError> {
    let mut next: Option<&(dyn Error + 'static)> = Some(error);
    while let Some(e) = next {
        if let Some(refused) = e.downcast_ref::<EgressError>() {
            return Some(refused);
        }
        next = e.source();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A listener on 127.0.0.1 answering every connection with `response`; the number of
    /// connections it accepted.
    async fn listener(response: String) -> (u16, Arc<std::sync::atomic::AtomicUsize>) {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = l.local_addr().expect("addr").port();
        let seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = seen.clone();
        tokio::spawn(async move {
            while let Ok((mut sock, _)) = l.accept().await {
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut buf = [0u8; 4096];
                let _ = sock.read(&mut buf).await;
                let _ = sock.write_all(response.as_bytes()).await;
            }
        });
        (port, seen)
    }

    fn ok() -> String {
        "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok".into()
    }

    #[tokio::test]
    async fn a_name_resolving_to_loopback_is_refused_before_connecting() {
        let (port, seen) = listener(ok()).await;
        let client = client_builder(Arc::new(EgressPolicy::default()))
            .build()
            .expect("client");
        let err = client
            .get(format!("http://localhost:{port}/secret"))
            .send()
            .await
            .expect_err("refused");
        let refused = refusal(&err).expect("an egress refusal");
        assert_eq!(refused.host, "localhost");
        assert!(
            refused.to_string().contains("a loopback address"),
            "{refused}"
        );
        assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn an_allowed_name_goes_through_and_a_redirect_to_a_denied_address_is_refused() {
        let (denied, denied_seen) = listener(ok()).await;
        let (allowed, allowed_seen) = listener(format!(
            "HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:{denied}/x\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        ))
        .await;
        let policy = EgressPolicy::from_entries(&["localhost"]).expect("policy");
        let client = client_builder(Arc::new(policy)).build().expect("client");
        let err = client
            .get(format!("http://localhost:{allowed}/"))
            .send()
            .await
            .expect_err("refused hop");
        let refused = refusal(&err).expect("an egress refusal");
        assert_eq!(refused.host, "127.0.0.1");
        assert_eq!(allowed_seen.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(denied_seen.load(std::sync::atomic::Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn an_allowed_range_goes_through() {
        let (port, seen) = listener(ok()).await;
        let policy = EgressPolicy::from_entries(&["127.0.0.1/32"]).expect("policy");
        let client = client_builder(Arc::new(policy)).build().expect("client");
        let resp = client
            .get(format!("http://127.0.0.1:{port}/"))
            .send()
            .await
            .expect("allowed");
        assert_eq!(resp.status(), 200);
        assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), 1);
    }
}
