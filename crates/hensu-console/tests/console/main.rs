//! The console over HTTP against an in-process server (real router, real store, stub agents):
//! sign-in, tenant isolation, CSRF refusals, escaping of hostile outputs, the review flow, the
//! start form, the list's filters and pages. The browser tests (Chromium) are in hensuc's tests.

mod harness;
mod pages;
mod reviews_pending;
mod security;
mod time_travel;
mod workflow_actions;
