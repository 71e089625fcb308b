//! Shared test support: the mock HTTP servers, canned protocol answers and the provider harness.

mod harness;
mod mock;
mod replies;
mod tools;

pub use std::collections::{HashMap, VecDeque};
pub use std::future::Future;
pub use std::pin::Pin;
pub use std::sync::atomic::{AtomicBool, Ordering};
pub use std::sync::{Arc, Mutex};
pub use std::time::{Duration, Instant, SystemTime};

pub use async_trait::async_trait;
pub use hensu_ir::AgentConfig;
pub use hensu_providers::*;
pub use hensu_runtime::{Agent, AgentError, AgentProvider, AgentRequest, AgentResponse, Context};
pub use serde_json::{Value, json};

pub use harness::*;
pub use mock::*;
pub use replies::*;
pub use tools::*;

/// Polls `cond` until it holds; fails after 5 s (a hang guard, not a timing assertion).
pub async fn wait_until(cond: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !cond() {
        assert!(Instant::now() < deadline, "condition not reached in 5 s");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The provider sections of a `hensu.toml` text, read as every command reads them
/// (hensu-project), or the file's first error as `hensu.toml:LINE:COL: message`.
pub fn load_config(text: &str) -> Result<ProvidersConfig, String> {
    let file = hensu_project::ProjectFile::parse(text);
    match file.refusal() {
        Some(problem) => Err(problem),
        None => Ok(file.config.providers_config()),
    }
}
