//! How a value is written into each language an agent's configuration is in: a
//! shell word (hook commands, `!`-commands in markdown) and a TOML string. Each
//! installer writes paths through these, never by hand.

/// Quotes `s` for a POSIX shell when it holds anything but plain path characters.
pub fn shell(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c));
    if plain {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// A command line of `words`, each quoted for the shell as it needs: a hook
/// entry's command (`HookProgram::command` and the agent's arguments).
pub fn command_line(words: &[&str]) -> String {
    words.iter().map(|w| shell(w)).collect::<Vec<_>>().join(" ")
}

/// `s` as a TOML basic string (`"…"`, escapes for quotes, backslashes and
/// control characters).
pub fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_back_as_written() {
        assert_eq!(shell("/usr/bin/solaria"), "/usr/bin/solaria");
        assert_eq!(shell("/Jo's tools/solaria"), r"'/Jo'\''s tools/solaria'");
        for s in [
            "/opt/my \"tools\"/solaria",
            "C:\\bin\\x",
            "tab\there",
            "\u{7}bell",
        ] {
            let doc = format!("v = {}\n", toml_string(s));
            let table: toml::Table = toml::from_str(&doc).expect(&doc);
            assert_eq!(table["v"].as_str(), Some(s), "{doc}");
        }
    }
}
