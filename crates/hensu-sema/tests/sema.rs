//! The single integration-test binary of hensu-sema.

mod bounds;
mod check;
mod lower;
