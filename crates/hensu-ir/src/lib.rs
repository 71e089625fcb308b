//! hensu-ir
