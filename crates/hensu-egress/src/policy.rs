//! The policy: every non-public address class denied, except what the operator allows.

use std::fmt;
use std::net::{IpAddr, SocketAddr};

use ipnet::IpNet;

use crate::class::{AddressClass, canonical, classify};

/// One entry of `[server.egress] allow`: a host name (matched exactly, case-insensitively,
/// without a trailing dot; the addresses it resolves to are then not checked) or an address
/// range (`10.1.2.0/24`; a bare address is its own range).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllowEntry {
    Host(String),
    Net(IpNet),
}

/// Why an allow-list entry is not usable: what is wrong, and what to write instead. Neither
/// repeats the entry whole (only the host part the help suggests).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidEntry {
    pub problem: String,
    pub help: String,
}

impl fmt::Display for InvalidEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.problem, self.help)
    }
}

const HOST_HELP: &str =
    "write a host name such as `\"hooks.example.com\"` or a range such as `\"10.1.2.0/24\"`";

impl AllowEntry {
    /// Parses one entry.
    pub fn parse(entry: &str) -> Result<AllowEntry, InvalidEntry> {
        let invalid = |problem: &str, help: String| InvalidEntry {
            problem: problem.to_string(),
            help,
        };
        if entry.contains("://") {
            let rest = entry.split_once("://").map_or(entry, |(_, r)| r);
            let host = rest.split(['/', '?', '#', ':', '@']).next().unwrap_or("");
            return Err(invalid(
                "a URL, not a host name or an address range",
                format!("write the host alone: `\"{host}\"`"),
            ));
        }
        if entry.contains('/') {
            return match entry.parse::<IpNet>() {
                Ok(net) => Ok(AllowEntry::Net(net.trunc())),
                Err(_) => Err(invalid(
                    "not a CIDR range",
                    "write an address, a slash and a prefix length: `\"10.1.2.0/24\"`, `\"fd00::/8\"`".into(),
                )),
            };
        }
        let bare = entry
            .strip_prefix('[')
            .and_then(|e| e.strip_suffix(']'))
            .unwrap_or(entry);
        if let Ok(ip) = bare.parse::<IpAddr>() {
            return Ok(AllowEntry::Net(IpNet::from(ip)));
        }
        if entry.contains('*') {
            return Err(invalid(
                "patterns are not supported",
                "list each host name".into(),
            ));
        }
        if let Some((host, _)) = entry.rsplit_once(':')
            && is_host_name(host)
        {
            return Err(invalid(
                "a port is not part of a host name",
                format!("write the host alone: `\"{host}\"`"),
            ));
        }
        if !is_host_name(entry) {
            return Err(invalid("not a host name", HOST_HELP.into()));
        }
        Ok(AllowEntry::Host(normal_host(entry)))
    }
}

/// A DNS name: letters, digits, `-` and `.`, labels not empty (one trailing dot allowed).
fn is_host_name(host: &str) -> bool {
    let host = host.strip_suffix('.').unwrap_or(host);
    !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// Lower case, without a trailing dot: the form host names are compared in.
fn normal_host(host: &str) -> String {
    host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase()
}

/// What a server run may reach: public addresses, plus the allowed host names and ranges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EgressPolicy {
    hosts: Vec<String>,
    nets: Vec<IpNet>,
}

/// A request the policy refused: the host as the URL names it, the address it is or resolved
/// to, and the rule. It names no path, query or credentials of the URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EgressError {
    pub host: String,
    pub address: IpAddr,
    pub class: AddressClass,
}

impl fmt::Display for EgressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let literal = self
            .host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
            .ok();
        match literal {
            Some(ip) if canonical(ip) == ip => {
                write!(f, "egress refused: {} is {}", ip, self.class)?
            }
            Some(ip) => write!(
                f,
                "egress refused: {} (that is {}) is {}",
                self.host,
                canonical(ip),
                self.class
            )?,
            None => write!(
                f,
                "egress refused: {} resolves to {}, {}",
                self.host, self.address, self.class
            )?,
        }
        f.write_str("; allow it with `[server.egress] allow` in hensu.toml")
    }
}

impl std::error::Error for EgressError {}

impl EgressPolicy {
    /// The default policy with `allow` excepted.
    pub fn new(allow: impl IntoIterator<Item = AllowEntry>) -> EgressPolicy {
        let mut policy = EgressPolicy::default();
        for entry in allow {
            match entry {
                AllowEntry::Host(h) => policy.hosts.push(h),
                AllowEntry::Net(n) => policy.nets.push(n),
            }
        }
        policy
    }

    /// The policy of `[server.egress] allow`; the first bad entry is an error naming its
    /// position.
    pub fn from_entries<S: AsRef<str>>(entries: &[S]) -> Result<EgressPolicy, String> {
        let parsed = entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                AllowEntry::parse(e.as_ref())
                    .map_err(|bad| format!("`[server.egress] allow` entry {}: {bad}", i + 1))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(EgressPolicy::new(parsed))
    }

    /// Whether `host` (a URL's host name) is allowed by name.
    pub fn allows_host(&self, host: &str) -> bool {
        let host = normal_host(host);
        self.hosts.contains(&host)
    }

    /// `Err(class)` when `ip` is denied: not public and in no allowed range (an IPv6 spelling
    /// of an IPv4 address is in a range when either form is).
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), AddressClass> {
        let canon = canonical(ip);
        if self
            .nets
            .iter()
            .any(|n| n.contains(&ip) || n.contains(&canon))
        {
            return Ok(());
        }
        classify(ip).map_or(Ok(()), Err)
    }

    /// The addresses `host` resolved to that a connection may use: all of them when the host
    /// is allowed by name, else the allowed ones; an error when every one is denied.
    pub fn check_resolved(
        &self,
        host: &str,
        addrs: Vec<SocketAddr>,
    ) -> Result<Vec<SocketAddr>, EgressError> {
        if self.allows_host(host) {
            return Ok(addrs);
        }
        let mut refused = None;
        let mut kept = Vec::with_capacity(addrs.len());
        for addr in addrs {
            match self.check_ip(addr.ip()) {
                Ok(()) => kept.push(addr),
                Err(class) => {
                    refused.get_or_insert(EgressError {
                        host: host.to_string(),
                        address: addr.ip(),
                        class,
                    });
                }
            }
        }
        match refused {
            Some(error) if kept.is_empty() => Err(error),
            _ => Ok(kept),
        }
    }

    /// Checks a URL whose host is an IP literal (a host name is checked when it is resolved,
    /// by [`crate::CheckingResolver`]). The URL parser has already turned the other spellings
    /// of an IPv4 address (`2130706433`, `0x7f.1`, `017700000001`) into the address.
    pub fn check_url(&self, url: &reqwest::Url) -> Result<(), EgressError> {
        let host = url.host_str().unwrap_or_default();
        // An IPv6 host is written in brackets; a domain never parses as an address.
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let Ok(ip) = bare.parse::<IpAddr>() else {
            return Ok(());
        };
        self.check_ip(ip).map_err(|class| EgressError {
            host: host.to_string(),
            address: ip,
            class,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(entries: &[&str]) -> EgressPolicy {
        EgressPolicy::from_entries(entries).expect("entries")
    }

    fn sock(s: &str) -> SocketAddr {
        SocketAddr::new(s.parse().expect("ip"), 80)
    }

    #[test]
    fn entries_parse_as_hosts_and_ranges() {
        assert_eq!(
            AllowEntry::parse("Hooks.Example.COM."),
            Ok(AllowEntry::Host("hooks.example.com".into()))
        );
        assert_eq!(
            AllowEntry::parse("10.1.2.7/24"),
            Ok(AllowEntry::Net("10.1.2.0/24".parse().expect("net")))
        );
        assert_eq!(
            AllowEntry::parse("127.0.0.1"),
            Ok(AllowEntry::Net("127.0.0.1/32".parse().expect("net")))
        );
        assert_eq!(
            AllowEntry::parse("[fd00::1]"),
            Ok(AllowEntry::Net("fd00::1/128".parse().expect("net")))
        );
    }

    #[test]
    fn bad_entries_say_what_to_write() {
        let url = AllowEntry::parse("https://hooks.example.com/x").expect_err("url");
        assert!(url.problem.contains("a URL"), "{url}");
        assert!(url.help.contains("\"hooks.example.com\""), "{url}");
        let cidr = AllowEntry::parse("10.1.2.0/33").expect_err("cidr");
        assert!(cidr.problem.contains("CIDR"), "{cidr}");
        assert!(AllowEntry::parse("10.1.2.0/x").is_err());
        let port = AllowEntry::parse("hooks.example.com:8443").expect_err("port");
        assert!(port.problem.contains("port"), "{port}");
        assert!(AllowEntry::parse("*.example.com").is_err());
        assert!(AllowEntry::parse("").is_err());
        assert!(AllowEntry::parse("a..b").is_err());
        assert!(AllowEntry::parse("has space").is_err());
        let err = EgressPolicy::from_entries(&["ok.example", "bad/entry"]).expect_err("bad");
        assert!(err.starts_with("`[server.egress] allow` entry 2:"), "{err}");
    }

    #[test]
    fn the_default_denies_every_non_public_class_and_allows_public_addresses() {
        let p = EgressPolicy::default();
        assert_eq!(
            p.check_ip("127.0.0.1".parse().expect("ip")),
            Err(AddressClass::Loopback)
        );
        assert_eq!(
            p.check_ip("::ffff:169.254.169.254".parse().expect("ip")),
            Err(AddressClass::LinkLocal)
        );
        assert_eq!(p.check_ip("93.184.215.14".parse().expect("ip")), Ok(()));
    }

    #[test]
    fn allowed_ranges_cover_both_spellings_of_an_ipv4_address() {
        let p = policy(&["10.1.2.0/24", "127.0.0.1/32"]);
        assert_eq!(p.check_ip("10.1.2.200".parse().expect("ip")), Ok(()));
        assert_eq!(
            p.check_ip("10.1.3.1".parse().expect("ip")),
            Err(AddressClass::Private)
        );
        assert_eq!(p.check_ip("::ffff:127.0.0.1".parse().expect("ip")), Ok(()));
        assert_eq!(
            p.check_ip("127.0.0.2".parse().expect("ip")),
            Err(AddressClass::Loopback)
        );
    }

    #[test]
    fn resolved_addresses_are_filtered_unless_the_host_is_allowed_by_name() {
        let p = policy(&["internal.example"]);
        let both = vec![sock("10.0.0.5"), sock("8.8.8.8")];
        assert_eq!(
            p.check_resolved("public.example", both.clone()),
            Ok(vec![sock("8.8.8.8")])
        );
        let err = p
            .check_resolved("rebind.example", vec![sock("127.0.0.1"), sock("::1")])
            .expect_err("denied");
        assert_eq!(
            err.to_string(),
            "egress refused: rebind.example resolves to 127.0.0.1, a loopback address; \
             allow it with `[server.egress] allow` in hensu.toml"
        );
        assert_eq!(
            p.check_resolved("Internal.Example.", both.clone()),
            Ok(both)
        );
    }

    #[test]
    fn every_spelling_of_a_loopback_url_is_refused_naming_the_rule() {
        let p = EgressPolicy::default();
        let refused = |u: &str| {
            p.check_url(&reqwest::Url::parse(u).expect("url"))
                .expect_err(u)
                .to_string()
        };
        let plain = "egress refused: 127.0.0.1 is a loopback address; \
                     allow it with `[server.egress] allow` in hensu.toml";
        for u in [
            "http://127.0.0.1:8080/admin?token=x",
            "http://2130706433/",
            "http://0x7f.1/",
            "http://017700000001/",
            "http://0177.0.0.1/",
            "http://127.1/",
            "HTTP://127.0.0.1./",
        ] {
            assert_eq!(refused(u), plain, "{u}");
        }
        assert_eq!(
            refused("http://[::ffff:127.0.0.1]:9/"),
            "egress refused: [::ffff:7f00:1] (that is 127.0.0.1) is a loopback address; \
             allow it with `[server.egress] allow` in hensu.toml"
        );
        assert!(refused("http://[::1]/").contains("::1 is a loopback address"));
        assert!(refused("http://169.254.169.254/latest/meta-data").contains("link-local"));
        assert!(refused("http://0/").contains("unspecified"));
        // Names are checked when they are resolved.
        assert_eq!(
            p.check_url(&reqwest::Url::parse("http://localhost/").expect("url")),
            Ok(())
        );
    }
}
