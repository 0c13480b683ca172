//! Which projects an account shares with all its people: patterns over project keys
//! (`github.com/acme/*`), where `*` matches any run of characters and every other
//! character only itself. The central service applies a pattern in SQL (its `LIKE`
//! form, `storage::visibility::like_pattern`); an edge applies it here, to say which
//! of its projects the team sees. The two must agree: the central's unit test checks
//! its translation against [`matches`].
//!
//! Here too are the two rules of who may see and who may name what, decided once
//! for both sides: [`sees`] and [`may_name_session`].

/// Whether the project key `key` matches `pattern`.
pub fn matches(pattern: &str, key: &str) -> bool {
    let pattern = pattern.trim();
    let mut parts = pattern.split('*');
    // `split` always yields a first part: what the key must start with.
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = key.strip_prefix(first) else {
        return false;
    };
    let middle: Vec<&str> = parts.collect();
    let Some((last, between)) = middle.split_last() else {
        // No star: the whole key.
        return rest.is_empty();
    };
    for part in between {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// Whether any of `patterns` matches `key`: the project is shared.
pub fn shared(patterns: &[String], key: &str) -> bool {
    patterns.iter().any(|p| matches(p, key))
}

/// **The visibility rule**: a person sees a record when they wrote it (a machine
/// of theirs did) or its project is shared with the account. `P` names a person
/// as a store knows them. Central applies the same rule in SQL
/// (`storage::visibility::visible_sql`); an edge applies it here, and both apply
/// it to whoever writes a reference to another record: a supersession, a link or
/// a commit takes effect only on a record its writer may see.
pub fn sees<P: PartialEq>(reader: &P, writer: &P, key: &str, patterns: &[String]) -> bool {
    reader == writer || shared(patterns, key)
}

/// **The session rule**: a record may name a session (its `session_id`) only when
/// the person who wrote the record is the session's own. Central refuses a push
/// that names another person's session; an edge drops such a record when it pulls
/// it; and every read of a session (its line in a context, its timeline, its
/// summary) shows only what its own person wrote, so no one can put words into a
/// teammate's session.
pub fn may_name_session<P: PartialEq>(record_writer: &P, session_owner: &P) -> bool {
    record_writer == session_owner
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_star_matches_any_run_and_everything_else_only_itself() {
        for (pattern, key) in [
            ("github.com/acme/api", "github.com/acme/api"),
            ("github.com/acme/*", "github.com/acme/api"),
            ("github.com/acme/*", "github.com/acme/"),
            ("*", "anything/at/all"),
            ("github.com/*/api", "github.com/acme/api"),
            ("*/api", "gitlab.com/x/api"),
            ("a*b*c", "abc"),
            ("a*b*c", "a-x-b-y-c"),
            (" github.com/acme/* ", "github.com/acme/web"),
        ] {
            assert!(matches(pattern, key), "{pattern} ~ {key}");
        }
        for (pattern, key) in [
            ("github.com/acme/api", "github.com/acme/api2"),
            ("github.com/acme/api", "x-github.com/acme/api"),
            ("github.com/acme/*", "github.com/acmeco/api"),
            ("github.com/acme/*", "gitlab.com/acme/api"),
            ("a*b*c", "acb"),
            ("a*c", "ab"),
            ("github.com/acme/%", "github.com/acme/api"),
            ("github.com/acme/a_i", "github.com/acme/api"),
        ] {
            assert!(!matches(pattern, key), "{pattern} !~ {key}");
        }
    }

    #[test]
    fn a_project_is_shared_when_one_pattern_matches() {
        let patterns = vec!["github.com/acme/*".to_string(), "/home/ana/notes".into()];
        assert!(shared(&patterns, "github.com/acme/api"));
        assert!(shared(&patterns, "/home/ana/notes"));
        assert!(!shared(&patterns, "/home/ana/dotfiles"));
        assert!(!shared(&[], "github.com/acme/api"));
    }
}
