pub mod executions;
pub mod ops;
pub mod workflows;
