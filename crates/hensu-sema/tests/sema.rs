//! The single integration-test binary of hensu-sema.

mod check;
mod lower;
