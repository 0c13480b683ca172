//! How the local API's client knows it talks to the daemon that holds the token
//! before it sends the token. A `serve.addr` file can outlive its daemon, and
//! another local user may listen on the port it names: the client sends a fresh
//! random challenge to `/api/health`, the daemon answers HMAC-SHA256(token,
//! challenge), and only a daemon that knows the token can. The token itself never
//! goes to a listener that did not prove it.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The shortest and longest challenge the daemon answers.
pub const CHALLENGE_CHARS: std::ops::RangeInclusive<usize> = 32..=128;

/// A new random challenge (64 hex digits from the system's generator).
pub fn challenge() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

/// Whether `challenge` is one the daemon answers: hex digits and letters only,
/// of a sane length (it is echoed into nothing but the MAC).
pub fn valid_challenge(challenge: &str) -> bool {
    CHALLENGE_CHARS.contains(&challenge.len())
        && challenge.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// The proof of knowing `token` for `challenge`, as hex.
pub fn proof(token: &str, challenge: &str) -> String {
    mac(token, "solaria-local-api", challenge)
}

/// HMAC-SHA256(`token`, `purpose` NUL `message`) as hex: a value only the holder
/// of the token can make, bound to what it is for (a proof, the viewer's session
/// cookie, its form token), so one can never stand for another.
pub fn mac(token: &str, purpose: &str, message: &str) -> String {
    // HMAC takes a key of any length: this cannot fail.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(token.as_bytes()) else {
        return String::new();
    };
    mac.update(purpose.as_bytes());
    mac.update(b"\0");
    mac.update(message.as_bytes());
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether `answer` proves knowledge of `token` for `challenge`, compared in time
/// that does not depend on where they differ.
pub fn verify(token: &str, challenge: &str, answer: &str) -> bool {
    same_secret(&proof(token, challenge), answer)
}

/// Whether `presented` is `expected` (a non-empty secret), in time that does not
/// depend on where they differ.
pub fn same_secret(expected: &str, presented: &str) -> bool {
    let (a, b) = (expected.as_bytes(), presented.as_bytes());
    if a.is_empty() || a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_holder_of_the_token_proves_it() {
        let c = challenge();
        assert!(valid_challenge(&c));
        let token = "a".repeat(64);
        let answer = proof(&token, &c);
        assert_eq!(answer.len(), 64);
        assert!(verify(&token, &c, &answer));
        assert!(!verify(&"b".repeat(64), &c, &answer), "another token");
        assert!(!verify(&token, &challenge(), &answer), "another challenge");
        assert!(!verify(&token, &c, ""), "no answer");
    }

    #[test]
    fn odd_challenges_are_not_answered() {
        assert!(!valid_challenge("short"));
        assert!(!valid_challenge(&"x".repeat(129)));
        assert!(!valid_challenge(&format!("{}&q=1", "a".repeat(40))));
    }
}
