pub mod executions;
pub mod mcp;
pub mod ops;
pub mod workflows;
