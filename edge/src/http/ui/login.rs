//! Who may see the viewer: a one-time login code that `solaria ui` asks the daemon
//! for (through the token-guarded API), traded once for a session cookie. The
//! cookie and each session's form token are MACs under the API token, so they
//! survive a daemon restart, hold nothing of the memory, and all end when the token
//! is rotated; the codes live in the daemon's memory only.

use crate::http::ApiToken;
use solaria_shared::UnixMillis;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a login code may wait to be used.
pub const CODE_LIFETIME: Duration = Duration::from_secs(120);
/// The most codes waiting at once; a new one past that retires the oldest.
const MAX_PENDING_CODES: usize = 16;
/// How long a session lasts from its login.
pub const SESSION_LIFETIME_MS: i64 = 7 * 86_400_000;
/// The cookie's name, followed by the daemon's port: cookies are per host, not
/// per port, and two daemons (two data dirs) must not overwrite each other's.
const COOKIE_PREFIX: &str = "solaria_ui_";

/// The login codes waiting to be traded for a session.
#[derive(Debug, Default)]
pub struct Logins {
    /// Each waiting code's MAC (not the code itself), with when it stops counting.
    pending: Mutex<HashMap<String, Instant>>,
}

impl Logins {
    /// A new single-use code (64 hex digits), valid for [`CODE_LIFETIME`].
    pub fn issue(&self, token: &ApiToken) -> String {
        let code = crate::api_proof::challenge();
        let now = Instant::now();
        let mut pending = self.lock();
        pending.retain(|_, until| *until > now);
        if pending.len() >= MAX_PENDING_CODES
            && let Some(oldest) = pending
                .iter()
                .min_by_key(|(_, until)| **until)
                .map(|(k, _)| k.clone())
        {
            pending.remove(&oldest);
        }
        pending.insert(code_key(token, &code), now + CODE_LIFETIME);
        code
    }

    /// Whether `code` is a waiting code; it is used up either way.
    pub fn redeem(&self, token: &ApiToken, code: &str) -> bool {
        if !crate::api_proof::valid_challenge(code) {
            return false;
        }
        let until = self.lock().remove(&code_key(token, code));
        until.is_some_and(|until| until > Instant::now())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Instant>> {
        // A panic while holding the map leaves it usable: codes are only inserted
        // and removed.
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn code_key(token: &ApiToken, code: &str) -> String {
    token.mac("solaria-ui-login-code", code)
}

/// A logged-in browser: when its session ends, and the random name it was given
/// (which its form token is made from).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UiSession {
    expires: UnixMillis,
    nonce: String,
}

impl UiSession {
    /// A new session, from `now`.
    pub fn start(now: UnixMillis) -> UiSession {
        UiSession {
            expires: UnixMillis(now.0 + SESSION_LIFETIME_MS),
            nonce: crate::api_proof::challenge(),
        }
    }

    /// The cookie's value: `expiry.nonce.mac`.
    pub fn cookie_value(&self, token: &ApiToken) -> String {
        let body = format!("{}.{}", self.expires.0, self.nonce);
        let mac = token.mac("solaria-ui-session", &body);
        format!("{body}.{mac}")
    }

    /// The session a cookie value names, if this token made it and it has not
    /// ended at `now`.
    pub fn from_cookie(token: &ApiToken, value: &str, now: UnixMillis) -> Option<UiSession> {
        let (body, mac) = value.rsplit_once('.')?;
        if !crate::api_proof::same_secret(&token.mac("solaria-ui-session", body), mac) {
            return None;
        }
        let (expires, nonce) = body.split_once('.')?;
        let expires = UnixMillis(expires.parse().ok()?);
        (expires.0 > now.0 && crate::api_proof::valid_challenge(nonce)).then(|| UiSession {
            expires,
            nonce: nonce.to_string(),
        })
    }

    /// The token its forms carry (CSRF): only pages served to this session know it.
    pub fn form_token(&self, token: &ApiToken) -> String {
        token.mac("solaria-ui-form", &self.nonce)
    }

    /// Whether a form's token is this session's.
    pub fn accepts_form(&self, token: &ApiToken, presented: &str) -> bool {
        crate::api_proof::same_secret(&self.form_token(token), presented)
    }

    /// Seconds left, for the cookie's `Max-Age`.
    pub fn seconds_left(&self, now: UnixMillis) -> i64 {
        ((self.expires.0 - now.0) / 1000).max(0)
    }
}

/// The cookie's name for the daemon listening on `port`.
pub fn cookie_name(port: u16) -> String {
    format!("{COOKIE_PREFIX}{port}")
}

/// The value of the cookie `name` in a `Cookie` header, if there.
pub fn cookie_in<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header.split(';').find_map(|pair| {
        let (k, v) = pair.trim().split_once('=')?;
        (k == name).then_some(v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(c: char) -> ApiToken {
        ApiToken::for_tests(&c.to_string().repeat(64))
    }

    #[test]
    fn a_code_logs_in_once_and_only_under_its_token() {
        let logins = Logins::default();
        let code = logins.issue(&token('a'));
        assert!(!logins.redeem(&token('b'), &code), "another daemon's token");
        let code = logins.issue(&token('a'));
        assert!(logins.redeem(&token('a'), &code));
        assert!(!logins.redeem(&token('a'), &code), "used up");
        assert!(!logins.redeem(&token('a'), "not a code"));
    }

    #[test]
    fn waiting_codes_are_bounded_and_the_oldest_goes_first() {
        let logins = Logins::default();
        let t = token('a');
        let first = logins.issue(&t);
        let rest: Vec<String> = (0..MAX_PENDING_CODES).map(|_| logins.issue(&t)).collect();
        assert!(!logins.redeem(&t, &first), "retired by the newer ones");
        assert!(rest.iter().all(|c| logins.redeem(&t, c)));
    }

    #[test]
    fn a_cookie_holds_only_under_its_token_until_it_ends_and_cannot_be_altered() {
        let t = token('a');
        let now = UnixMillis(1_800_000_000_000);
        let session = UiSession::start(now);
        let value = session.cookie_value(&t);
        assert_eq!(
            UiSession::from_cookie(&t, &value, now),
            Some(session.clone())
        );
        assert_eq!(UiSession::from_cookie(&token('b'), &value, now), None);
        let later = UnixMillis(now.0 + SESSION_LIFETIME_MS);
        assert_eq!(UiSession::from_cookie(&t, &value, later), None, "ended");
        let stretched = value.replacen(
            &session.expires.0.to_string(),
            &(session.expires.0 + 1).to_string(),
            1,
        );
        assert_eq!(UiSession::from_cookie(&t, &stretched, now), None);
        assert_eq!(UiSession::from_cookie(&t, "", now), None);
        assert_eq!(UiSession::from_cookie(&t, "1.2.3", now), None);
    }

    #[test]
    fn a_form_token_is_its_sessions_own() {
        let t = token('a');
        let now = UnixMillis(1_800_000_000_000);
        let (one, two) = (UiSession::start(now), UiSession::start(now));
        assert!(one.accepts_form(&t, &one.form_token(&t)));
        assert!(!one.accepts_form(&t, &two.form_token(&t)));
        assert!(!one.accepts_form(&t, ""));
        assert_ne!(one.form_token(&t), one.cookie_value(&t));
    }

    #[test]
    fn the_cookie_is_found_among_others() {
        let header = "a=1; solaria_ui_37777=x.y.z; solaria_ui_8080=other";
        assert_eq!(cookie_in(header, &cookie_name(37777)), Some("x.y.z"));
        assert_eq!(cookie_in(header, &cookie_name(1)), None);
    }
}
