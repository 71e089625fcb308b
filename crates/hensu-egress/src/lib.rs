//! hensu-egress — what a tenant's workflow may make `hensuc serve` reach (docs/server.md,
//! *Egress*).
//!
//! * [`classify`]: the class of an address that is not publicly routable (loopback, private,
//!   link-local, unique-local, shared/CGNAT, multicast, unspecified, broadcast, documentation,
//!   benchmarking, reserved), after [`canonical`] has turned the IPv6 forms that embed an IPv4
//!   address (IPv4-mapped, IPv4-compatible, NAT64, 6to4) into that address.
//! * [`EgressPolicy`]: those classes denied, except the operator's allow-list
//!   (`[server.egress] allow` in `hensu.toml`: host names and CIDR ranges, [`AllowEntry`]).
//! * [`client_builder`]: a reqwest client under a policy. Its resolver ([`CheckingResolver`])
//!   resolves a host name and keeps only the addresses the policy allows, so the connection
//!   goes to an address that was checked (no second resolution); [`EgressPolicy::check_url`]
//!   checks a URL whose host is an IP literal (reqwest connects to those without resolving)
//!   before it is sent; every redirect hop is checked the same way; proxies from the
//!   environment are ignored (a proxy would make the connection on the client's behalf).
//!
//! The crate knows nothing of workflows: hensu-host gives the policy to the `webhook` and
//! `api-caller` handlers of a run whose setup carries one (every server run).

mod class;
mod client;
mod policy;

pub use class::{AddressClass, canonical, classify};
pub use client::{CheckingResolver, client_builder, refusal};
pub use policy::{AllowEntry, EgressError, EgressPolicy, InvalidEntry};
