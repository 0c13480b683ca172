//! Secrets: values that must never be printed (a `Debug` that hides them), and the
//! random tokens and their hashes (only hashes are stored).

use sha2::{Digest, Sha256};
use std::fmt;

/// A string that never shows itself in logs or `Debug` output.
#[derive(Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The value itself; call only where it is used, never to print it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// A new random token: `prefix` then 244 random bits (two UUIDv4s from the OS's
/// cryptographic generator) in hex.
pub fn random_token(prefix: &str) -> String {
    format!(
        "{prefix}_{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

/// The stored form of a token. Tokens are long and random, so one SHA-256 pass is
/// enough (a slow password hash defends low-entropy secrets, which these are not).
pub fn hash_token(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_do_not_print() {
        let s = Secret::new("hunter2-very-secret");
        assert_eq!(format!("{s:?}"), "Secret(***)");
        assert_eq!(s.expose(), "hunter2-very-secret");
    }

    #[test]
    fn tokens_are_random_and_hashes_stable() {
        let a = random_token("sol");
        let b = random_token("sol");
        assert_ne!(a, b);
        assert!(a.starts_with("sol_") && a.len() == 4 + 64);
        assert_eq!(hash_token(&a), hash_token(&a));
        assert_ne!(hash_token(&a), hash_token(&b));
    }
}
