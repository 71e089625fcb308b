//! hensu-runtime
