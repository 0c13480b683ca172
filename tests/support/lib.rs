//! Helpers for the cross-component tests.
