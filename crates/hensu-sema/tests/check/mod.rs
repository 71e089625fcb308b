//! Tests of the checks (`hensu_sema::check`).

mod action_writes;
mod cascade;
mod fixtures;
mod flow;
mod intervals;
mod perf;
mod project;
mod robust;
mod rules;
mod state;
mod support;
mod suppress;
