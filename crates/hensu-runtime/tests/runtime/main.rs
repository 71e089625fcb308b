//! hensu-runtime tests, one binary: each module is named for what it tests. The shared
//! workflow builders and the scripted agent are `hensu_runtime::testing` (also used by
//! hensu-host's tests). Tests that need the host's I/O (shell
//! commands, HTTP, stub files on disk, reviewers, durable runs in a store, the examples' golden
//! traces) live in hensu-host's tests.

#![allow(clippy::unwrap_used, clippy::panic)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use hensu_ir::*;
use hensu_runtime::testing::*;
use hensu_runtime::*;
use indexmap::IndexMap;
use serde_json::{Value, json};

mod bad_input;
mod compensation;
mod dag;
mod engine_variables;
mod events;
mod generic_handlers;
mod journal;
mod map;
mod nested_waits;
mod parallel_consensus;
mod run_guards;
mod stubs;
mod timing;
mod tool_approval;
mod tool_approval_nested;
mod transition_rules;
mod waits;
// Fork/join, sub-workflows, review decisions and handlers, rubric and consensus boundaries.
mod fork_join;
mod review;
mod rubric_and_consensus;
mod sub_workflows;
