//! The API's bearer token: the token file (`<data dir>/api-token`, mode 0600,
//! created on first use) and the check of each request's `Authorization` header.

use super::error::ApiError;
use super::private_file::write_private_tmp;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::fmt;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The file in the data dir holding the bearer token (mode 0600).
pub use crate::config::API_TOKEN_FILE as TOKEN_FILE;

/// The token file of a data dir.
pub fn token_path(data_dir: &Path) -> PathBuf {
    data_dir.join(TOKEN_FILE)
}

/// The API's bearer token. Its `Debug` hides it, so it never reaches a log.
#[derive(Clone)]
pub struct ApiToken(Arc<str>);

impl fmt::Debug for ApiToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiToken(<hidden>)")
    }
}

impl ApiToken {
    /// A new random token: 64 hex digits from two v4 UUIDs (244 random bits from
    /// the operating system's generator).
    fn generate() -> ApiToken {
        let text = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        ApiToken(text.into())
    }

    /// A token read from the file: at least 32 printable ASCII characters (a user
    /// may put their own there), at most 512.
    fn parse(text: &str) -> Option<ApiToken> {
        let ok = (32..=512).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_graphic());
        ok.then(|| ApiToken(text.into()))
    }

    /// The proof that this daemon holds the token, for a client's `challenge`.
    pub fn prove(&self, challenge: &str) -> String {
        crate::api_proof::proof(&self.0, challenge)
    }

    /// A token as given, for unit tests.
    #[cfg(test)]
    pub(crate) fn for_tests(text: &str) -> ApiToken {
        ApiToken(text.into())
    }

    /// A value only this token's holder makes, for `purpose` (`crate::api_proof::mac`).
    pub fn mac(&self, purpose: &str, message: &str) -> String {
        crate::api_proof::mac(&self.0, purpose, message)
    }

    /// Whether `presented` is this token, in time that does not depend on where
    /// they differ.
    pub fn matches(&self, presented: &str) -> bool {
        crate::api_proof::same_secret(&self.0, presented)
    }
}

/// The token of `data_dir`: read from [`TOKEN_FILE`], or created there (mode 0600
/// from the start) on first use. A file others can read or write, or that holds
/// no valid token, is replaced by a new token (and said so in `log`).
pub fn load_or_create_token(data_dir: &Path, log: &dyn Fn(&str)) -> io::Result<ApiToken> {
    solaria_hook::files::private_dir(data_dir)?;
    let path = token_path(data_dir);
    // Two daemons starting at once: the second to link finds the first's file.
    for _ in 0..3 {
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let token = ApiToken::generate();
                let tmp = write_private_tmp(data_dir, TOKEN_FILE, &format!("{}\n", token.0))?;
                // A hard link creates the name only if it is free, atomically.
                let linked = std::fs::hard_link(&tmp, &path);
                let _ = std::fs::remove_file(&tmp);
                match linked {
                    Ok(()) => {
                        log(&format!(
                            "created the local API token in {}",
                            path.display()
                        ));
                        return Ok(token);
                    }
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                    Err(e) => return Err(e),
                }
            }
            Err(e) => return Err(e),
        };
        let problem = if !meta.is_file() {
            "is not a regular file"
        } else if meta.permissions().mode() & 0o077 != 0 {
            "could be read or changed by other users"
        } else {
            match ApiToken::parse(std::fs::read_to_string(&path)?.trim()) {
                Some(token) => return Ok(token),
                None => "held no valid token",
            }
        };
        let token = ApiToken::generate();
        let tmp = write_private_tmp(data_dir, TOKEN_FILE, &format!("{}\n", token.0))?;
        if let Err(e) = std::fs::rename(&tmp, &path) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        log(&format!(
            "{} {problem}: replaced with a new token (clients need the new one)",
            path.display()
        ));
        return Ok(token);
    }
    Err(io::Error::other(
        "the token file kept appearing and disappearing; is another `solaria serve` starting?",
    ))
}

/// Lets a request through only if it carries [`ApiToken`] as `Bearer TOKEN`;
/// otherwise answers 401 with what was wrong (never with the token).
pub(super) async fn require_token(
    State(token): State<ApiToken>,
    request: Request,
    next: Next,
) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().ok().and_then(bearer));
    let problem = match presented {
        Some(Some(presented)) if token.matches(presented) => return next.run(request).await,
        None => "no bearer token",
        Some(None) => "the Authorization header is not `Bearer TOKEN`",
        Some(Some(_)) => "wrong bearer token",
    };
    ApiError::new(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        format!(
            "{problem}: send `Authorization: Bearer TOKEN`, TOKEN being the content of the \
             `{TOKEN_FILE}` file in SOLARIA's data dir (see docs/LOCAL_API.md)"
        ),
    )
    .into_response()
}

/// The token of an `Authorization: Bearer TOKEN` header value.
fn bearer(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim().split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_compared_whole() {
        let token = ApiToken::generate();
        let text = token.0.to_string();
        assert_eq!(text.len(), 64);
        assert!(token.matches(&text));
        assert!(!token.matches(&text[..63]));
        assert!(!token.matches(&format!("{text}0")));
        assert!(!token.matches(""));
        let mut other = text.into_bytes();
        other[0] = if other[0] == b'a' { b'b' } else { b'a' };
        assert!(!token.matches(&String::from_utf8(other).expect("ascii")));
        assert_eq!(format!("{token:?}"), "ApiToken(<hidden>)");
    }

    #[test]
    fn only_a_bearer_header_carries_a_token() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer  abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearer"), None);
        assert_eq!(bearer("Bearer "), None);
    }

    #[test]
    fn the_token_file_is_created_private_and_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = load_or_create_token(dir.path(), &|_| {}).expect("created");
        let path = token_path(dir.path());
        let mode = std::fs::metadata(&path).expect("file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let again = load_or_create_token(dir.path(), &|_| {}).expect("read");
        assert!(again.matches(&first.0));
        let leftovers = std::fs::read_dir(dir.path()).expect("dir").count();
        assert_eq!(leftovers, 1, "no temporary file is left behind");
    }

    #[test]
    fn a_token_file_others_can_read_or_a_broken_one_is_replaced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = token_path(dir.path());
        let first = load_or_create_token(dir.path(), &|_| {}).expect("created");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let said = std::sync::Mutex::new(Vec::new());
        let log = |m: &str| said.lock().expect("lock").push(m.to_string());
        let second = load_or_create_token(dir.path(), &log).expect("replaced");
        assert!(
            !second.matches(&first.0),
            "a token others could read is retired"
        );
        let mode = std::fs::metadata(&path).expect("file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);

        std::fs::write(&path, "short\n").expect("write");
        let third = load_or_create_token(dir.path(), &log).expect("replaced");
        assert!(!third.matches("short"));
        let said = said.lock().expect("lock");
        assert!(said.iter().any(|m| m.contains("other users")), "{said:?}");
        assert!(
            said.iter().any(|m| m.contains("no valid token")),
            "{said:?}"
        );
        assert!(
            said.iter()
                .all(|m| !m.contains(&*second.0) && !m.contains(&*third.0)),
            "a token is never logged"
        );
    }
}
