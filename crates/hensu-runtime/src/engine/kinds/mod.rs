//! The node kinds that run flows of their own: parallel branches with consensus or as a
//! dependency DAG (`dag.rs`, the scheduler the parallel node hands such branches to), map nodes
//! (`map.rs`, an agent per item of a list), fork/join sub-flows (the join's merge in
//! `join.rs`) and sub-workflows. They call back into the run loop ([`super::Exec::drive`]); the simple kinds (standard, action, generic, end) stay in
//! `engine/node.rs`.

pub(crate) mod dag;
pub(crate) mod fork;
pub(crate) mod join;
pub(crate) mod map;
pub(crate) mod parallel;
pub(crate) mod subworkflow;
pub(crate) mod wait;
