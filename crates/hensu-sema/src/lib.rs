//! hensu-sema
