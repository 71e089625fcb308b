pub mod build;
pub mod check;
pub mod explain;
pub mod graph;
pub mod run;
