//! Lease owners and the liveness rule.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// Who holds (or wants) a run's lease: a process on a host, plus a random nonce so two
/// handles in one process are distinct owners.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OwnerId {
    /// The host name (empty when unknown: then the dead-pid rule never applies).
    pub host: String,
    pub pid: u32,
    pub nonce: String,
}

impl OwnerId {
    /// This process on this host with a fresh random nonce.
    pub fn current() -> OwnerId {
        let nonce = uuid::Uuid::new_v4().simple().to_string();
        OwnerId {
            host: local_host().to_string(),
            pid: std::process::id(),
            nonce: nonce.chars().take(12).collect(),
        }
    }
}

impl std::fmt::Display for OwnerId {
    /// `pid@host#nonce`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{}#{}", self.pid, self.host, self.nonce)
    }
}

/// A run's lease, as returned by [`crate::StateStore::acquire`]. It is a token, not a guard:
/// renew it ([`crate::StateStore::heartbeat`], every checkpoint also renews it, see
/// [`crate::Heartbeat`]) and release it ([`crate::StateStore::release`]) when done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    pub run_id: String,
    pub owner: OwnerId,
    /// Unix milliseconds.
    pub acquired_at: u64,
    /// Unix milliseconds, as of the acquisition.
    pub expires_at: u64,
}

/// A stored lease row.
#[derive(Clone, Debug)]
pub(crate) struct LeaseRow {
    pub owner: String,
    pub host: String,
    pub pid: i64,
    pub acquired_at: u64,
    pub expires_at: u64,
}

impl LeaseRow {
    pub fn new(owner: &OwnerId, now: u64, ttl_ms: u64) -> LeaseRow {
        LeaseRow {
            owner: owner.to_string(),
            host: owner.host.clone(),
            pid: i64::from(owner.pid),
            acquired_at: now,
            expires_at: now.saturating_add(ttl_ms),
        }
    }

    /// The lease rule: a lease held by another owner blocks `me` unless it expired, or its
    /// owner is a process on this host that no longer exists.
    pub fn blocks(&self, me: &str, now: u64) -> bool {
        if self.owner == me || self.expires_at <= now {
            return false;
        }
        let host = local_host();
        if !host.is_empty() && self.host == host && !pid_alive(self.pid) {
            return false;
        }
        true
    }
}

/// This host's name, read once (`""` when it cannot be known).
pub fn local_host() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| {
        let from_proc = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty());
        from_proc
            .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
            .or_else(|| std::env::var("COMPUTERNAME").ok().filter(|s| !s.is_empty()))
            .unwrap_or_default()
    })
}

/// Whether process `pid` exists on this host. Only Linux can tell (via `/proc`); elsewhere
/// every process is presumed alive, so a crashed owner's lease waits for its expiry.
pub fn pid_alive(pid: i64) -> bool {
    if pid <= 0 {
        return false;
    }
    if cfg!(target_os = "linux") && std::path::Path::new("/proc/self").exists() {
        std::path::Path::new("/proc").join(pid.to_string()).exists()
    } else {
        true
    }
}
