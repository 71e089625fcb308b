//! Address classification: which addresses are not publicly routable, by the IANA special-purpose
//! registries (RFC 6890 and its updates), and the IPv6 spellings of IPv4 addresses.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::{Ipv4Net, Ipv6Net};

/// Why an address is denied by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressClass {
    /// `0.0.0.0/8`, `::`.
    Unspecified,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// RFC 1918: `10/8`, `172.16/12`, `192.168/16`; deprecated IPv6 site-local `fec0::/10`.
    Private,
    /// RFC 6598 shared address space (carrier-grade NAT), `100.64.0.0/10`.
    Shared,
    /// `169.254.0.0/16` (cloud metadata services live here), `fe80::/10`.
    LinkLocal,
    /// `fc00::/7`.
    UniqueLocal,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// `192.0.2/24`, `198.51.100/24`, `203.0.113/24`, `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// `198.18.0.0/15`, `2001:2::/48`.
    Benchmarking,
    /// Every other special-purpose or unallocated range: `192.0.0/24`, `192.88.99/24`,
    /// `240/4`, `100::/64`, `2001::/23`, `64:ff9b:1::/48`, IPv6 outside `2000::/3`.
    Reserved,
}

impl AddressClass {
    /// "a loopback address", as a refusal says it.
    pub fn describe(self) -> &'static str {
        match self {
            AddressClass::Unspecified => "an unspecified address",
            AddressClass::Loopback => "a loopback address",
            AddressClass::Private => "a private address",
            AddressClass::Shared => "a shared (carrier-grade NAT) address",
            AddressClass::LinkLocal => "a link-local address",
            AddressClass::UniqueLocal => "a unique-local address",
            AddressClass::Multicast => "a multicast address",
            AddressClass::Broadcast => "the broadcast address",
            AddressClass::Documentation => "a documentation address",
            AddressClass::Benchmarking => "a benchmarking address",
            AddressClass::Reserved => "a reserved address",
        }
    }
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

const fn v4(a: u8, b: u8, c: u8, d: u8, len: u8) -> Ipv4Net {
    Ipv4Net::new_assert(Ipv4Addr::new(a, b, c, d), len)
}

const fn v6(segments: [u16; 8], len: u8) -> Ipv6Net {
    let [a, b, c, d, e, f, g, h] = segments;
    Ipv6Net::new_assert(Ipv6Addr::new(a, b, c, d, e, f, g, h), len)
}

/// The denied IPv4 ranges; the first that contains an address gives its class.
const V4: &[(Ipv4Net, AddressClass)] = &[
    (v4(0, 0, 0, 0, 8), AddressClass::Unspecified),
    (v4(127, 0, 0, 0, 8), AddressClass::Loopback),
    (v4(10, 0, 0, 0, 8), AddressClass::Private),
    (v4(172, 16, 0, 0, 12), AddressClass::Private),
    (v4(192, 168, 0, 0, 16), AddressClass::Private),
    (v4(100, 64, 0, 0, 10), AddressClass::Shared),
    (v4(169, 254, 0, 0, 16), AddressClass::LinkLocal),
    (v4(192, 0, 2, 0, 24), AddressClass::Documentation),
    (v4(198, 51, 100, 0, 24), AddressClass::Documentation),
    (v4(203, 0, 113, 0, 24), AddressClass::Documentation),
    (v4(198, 18, 0, 0, 15), AddressClass::Benchmarking),
    (v4(224, 0, 0, 0, 4), AddressClass::Multicast),
    (v4(255, 255, 255, 255, 32), AddressClass::Broadcast),
    (v4(192, 0, 0, 0, 24), AddressClass::Reserved),
    (v4(192, 88, 99, 0, 24), AddressClass::Reserved),
    (v4(240, 0, 0, 0, 4), AddressClass::Reserved),
];

/// The denied IPv6 ranges (after [`canonical`]); an address outside all of them and outside
/// `2000::/3` (global unicast) is [`AddressClass::Reserved`].
const V6: &[(Ipv6Net, AddressClass)] = &[
    (v6([0, 0, 0, 0, 0, 0, 0, 0], 128), AddressClass::Unspecified),
    (v6([0, 0, 0, 0, 0, 0, 0, 1], 128), AddressClass::Loopback),
    (
        v6([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10),
        AddressClass::LinkLocal,
    ),
    (v6([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10), AddressClass::Private),
    (
        v6([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7),
        AddressClass::UniqueLocal,
    ),
    (
        v6([0xff00, 0, 0, 0, 0, 0, 0, 0], 8),
        AddressClass::Multicast,
    ),
    (
        v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32),
        AddressClass::Documentation,
    ),
    (
        v6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20),
        AddressClass::Documentation,
    ),
    (
        v6([0x2001, 2, 0, 0, 0, 0, 0, 0], 48),
        AddressClass::Benchmarking,
    ),
    (
        v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 23),
        AddressClass::Reserved,
    ),
    (v6([0x100, 0, 0, 0, 0, 0, 0, 0], 64), AddressClass::Reserved),
    (
        v6([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48),
        AddressClass::Reserved,
    ),
];

const GLOBAL_UNICAST: Ipv6Net = v6([0x2000, 0, 0, 0, 0, 0, 0, 0], 3);
const NAT64: Ipv6Net = v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96);
const SIX_TO_FOUR: Ipv6Net = v6([0x2002, 0, 0, 0, 0, 0, 0, 0], 16);

/// The address a connection to `ip` really reaches where IPv6 spells an IPv4 address:
/// IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d` (deprecated; not `::` or `::1`),
/// NAT64 `64:ff9b::a.b.c.d` (RFC 6052) and 6to4 `2002:AABB:CCDD::/48` (RFC 3056) become
/// `a.b.c.d`; every other address is itself.
pub fn canonical(ip: IpAddr) -> IpAddr {
    let IpAddr::V6(v6) = ip else {
        return ip;
    };
    if let Some(mapped) = v6.to_ipv4_mapped() {
        return IpAddr::V4(mapped);
    }
    let s = v6.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    let compatible = s[..6] == [0; 6] && !(s[6] == 0 && s[7] <= 1);
    if compatible || NAT64.contains(&v6) {
        return IpAddr::V4(low);
    }
    if SIX_TO_FOUR.contains(&v6) {
        let embedded = Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8);
        return IpAddr::V4(embedded);
    }
    ip
}

/// The class of `ip` when it is not a public address (`None`: public). IPv6 spellings of an
/// IPv4 address are classified as that address ([`canonical`]).
pub fn classify(ip: IpAddr) -> Option<AddressClass> {
    match canonical(ip) {
        IpAddr::V4(a) => V4.iter().find(|(net, _)| net.contains(&a)).map(|(_, c)| *c),
        IpAddr::V6(a) => V6
            .iter()
            .find(|(net, _)| net.contains(&a))
            .map(|(_, c)| *c)
            .or((!GLOBAL_UNICAST.contains(&a)).then_some(AddressClass::Reserved)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(s: &str) -> Option<AddressClass> {
        classify(s.parse().expect("address"))
    }

    #[test]
    fn every_ipv4_range_has_its_class() {
        use AddressClass::*;
        let cases = [
            ("0.0.0.0", Unspecified),
            ("0.1.2.3", Unspecified),
            ("127.0.0.1", Loopback),
            ("127.255.255.254", Loopback),
            ("10.0.0.1", Private),
            ("10.255.255.255", Private),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("192.168.1.1", Private),
            ("100.64.0.1", Shared),
            ("100.127.255.255", Shared),
            ("169.254.169.254", LinkLocal),
            ("192.0.2.1", Documentation),
            ("198.51.100.7", Documentation),
            ("203.0.113.9", Documentation),
            ("198.18.0.1", Benchmarking),
            ("198.19.255.255", Benchmarking),
            ("224.0.0.1", Multicast),
            ("239.255.255.250", Multicast),
            ("255.255.255.255", Broadcast),
            ("192.0.0.8", Reserved),
            ("192.88.99.1", Reserved),
            ("240.0.0.1", Reserved),
            ("255.255.255.254", Reserved),
        ];
        for (addr, want) in cases {
            assert_eq!(class(addr), Some(want), "{addr}");
        }
    }

    #[test]
    fn public_ipv4_addresses_and_range_edges_are_allowed() {
        for addr in [
            "1.1.1.1",
            "8.8.8.8",
            "9.255.255.255",
            "11.0.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "100.63.255.255",
            "100.128.0.0",
            "169.253.255.255",
            "192.167.255.255",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.255",
        ] {
            assert_eq!(class(addr), None, "{addr}");
        }
    }

    #[test]
    fn every_ipv6_range_has_its_class() {
        use AddressClass::*;
        let cases = [
            ("::", Unspecified),
            ("::1", Loopback),
            ("fe80::1", LinkLocal),
            ("febf::1", LinkLocal),
            ("fec0::1", Private),
            ("fc00::1", UniqueLocal),
            ("fd12:3456::1", UniqueLocal),
            ("ff02::1", Multicast),
            ("ff05::1:3", Multicast),
            ("2001:db8::1", Documentation),
            ("3fff::1", Documentation),
            ("2001:2::1", Benchmarking),
            ("2001::1", Reserved),
            ("100::1", Reserved),
            ("64:ff9b:1::1", Reserved),
            ("4000::1", Reserved),
            ("::1:0:0:1", Reserved),
            ("::2:1", Unspecified),
        ];
        for (addr, want) in cases {
            assert_eq!(class(addr), Some(want), "{addr}");
        }
    }

    #[test]
    fn public_ipv6_addresses_are_allowed() {
        for addr in [
            "2606:4700:4700::1111",
            "2001:4860:4860::8888",
            "2a00:1450::1",
        ] {
            assert_eq!(class(addr), None, "{addr}");
        }
    }

    #[test]
    fn ipv6_spellings_of_ipv4_addresses_are_classified_as_ipv4() {
        use AddressClass::*;
        let cases = [
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::ffff:7f00:1", Some(Loopback)),
            ("::ffff:10.1.2.3", Some(Private)),
            ("::ffff:169.254.169.254", Some(LinkLocal)),
            ("::127.0.0.1", Some(Loopback)),
            ("::10.0.0.1", Some(Private)),
            ("64:ff9b::127.0.0.1", Some(Loopback)),
            ("64:ff9b::a9fe:a9fe", Some(LinkLocal)),
            ("2002:7f00:1::", Some(Loopback)),
            ("2002:c0a8:101::1", Some(Private)),
            ("::ffff:8.8.8.8", None),
            ("64:ff9b::8.8.8.8", None),
            ("2002:808:808::1", None),
        ];
        for (addr, want) in cases {
            assert_eq!(class(addr), want, "{addr}");
        }
        assert_eq!(
            canonical("::ffff:127.0.0.1".parse().expect("addr")),
            "127.0.0.1".parse::<IpAddr>().expect("addr")
        );
        // `::` and `::1` are themselves, not IPv4-compatible 0.0.0.0 / 0.0.0.1.
        assert_eq!(class("::1"), Some(Loopback));
        assert_eq!(class("::"), Some(Unspecified));
    }
}
