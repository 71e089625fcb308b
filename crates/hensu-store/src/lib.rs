//! Durable run state for hensu (work in progress).
