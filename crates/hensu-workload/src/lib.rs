//! hensu-workload
