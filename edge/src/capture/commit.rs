//! Commits made through the agent's Bash tool, read from what the hook already
//! has: the command (for the message given with `-m`, `--message`, a heredoc or
//! `--trailer`) and git's summary line in the output (`[branch sha] subject`,
//! `[main (root-commit) sha] …`, `[detached HEAD sha] …`). Nothing here runs a
//! process or reads more than the text it is given: the hook's budget is a few
//! milliseconds, and the daemon fills in the rest later (author, numstat).

use std::path::{Path, PathBuf};

/// A commit git reported making.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeenCommit {
    /// Where git ran (the session's directory, moved by `cd` and `-C`).
    pub dir: PathBuf,
    /// The branch it was made on; empty on a detached HEAD.
    pub branch: String,
    /// The abbreviated sha git printed.
    pub abbrev: String,
    /// The first line of its message, as git printed it.
    pub subject: String,
    /// The whole message, when the command gave it (`-m`…); `None` when it came
    /// from an editor, a file or another commit.
    pub message: Option<String>,
}

/// The commits `command` made according to its `stdout`. Cheap for every other
/// command: two substring checks.
pub fn seen(command: &str, stdout: &str, cwd: &Path) -> Vec<SeenCommit> {
    if !command.contains("commit") || !stdout.contains("] ") {
        return Vec::new();
    }
    let lines = summary_lines(stdout);
    if lines.is_empty() {
        return Vec::new();
    }
    let invocations = commit_invocations(command, cwd);
    if invocations.is_empty() {
        return Vec::new();
    }
    // Paired in order when every invocation printed its line; otherwise only the
    // subjects are known (the daemon reads the full messages later).
    let paired = invocations.len() == lines.len();
    lines
        .into_iter()
        .enumerate()
        .map(|(i, (branch, abbrev, subject))| {
            let (dir, message) = match invocations.get(i) {
                Some(inv) if paired => (inv.dir.clone(), inv.message.clone()),
                _ => (invocations[0].dir.clone(), None),
            };
            SeenCommit {
                dir,
                branch,
                abbrev,
                subject,
                message,
            }
        })
        .collect()
}

/// `[branch sha] subject` lines: (branch, sha, subject).
fn summary_lines(stdout: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for line in stdout.lines() {
        let Some(rest) = line.trim_end().strip_prefix('[') else {
            continue;
        };
        let (inside, subject) = match rest.split_once("] ") {
            Some(split) => split,
            None => match rest.strip_suffix(']') {
                Some(inside) => (inside, ""),
                None => continue,
            },
        };
        let words: Vec<&str> = inside.split_whitespace().collect();
        let Some((sha, before)) = words.split_last() else {
            continue;
        };
        if !crate::gitdir::is_sha(sha) || sha.len() > 40 && sha.len() != 64 {
            continue;
        }
        let branch = match before {
            ["detached", "HEAD"] => "",
            [branch] | [branch, "(root-commit)"] => branch,
            _ => continue,
        };
        out.push((
            branch.to_string(),
            sha.to_ascii_lowercase(),
            subject.to_string(),
        ));
    }
    out
}

/// One `git commit` in a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Invocation {
    dir: PathBuf,
    message: Option<String>,
}

/// The `git … commit …` simple commands of `command`, in order, each with the
/// directory it runs in (following `cd DIR` and `git -C DIR`).
fn commit_invocations(command: &str, cwd: &Path) -> Vec<Invocation> {
    let mut dir = cwd.to_path_buf();
    let mut out = Vec::new();
    for words in simple_commands(command) {
        let mut words = words.as_slice();
        // `FOO=bar git commit …`: assignments before the command.
        while let Some((first, rest)) = words.split_first()
            && is_assignment(first)
        {
            words = rest;
        }
        let Some((program, args)) = words.split_first() else {
            continue;
        };
        if program == "cd" {
            if let Some(to) = args
                .first()
                .filter(|a| !a.starts_with('-') && !a.starts_with('~'))
            {
                dir = dir.join(to);
            }
            continue;
        }
        if program != "git" && !program.ends_with("/git") {
            continue;
        }
        let mut here = dir.clone();
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            match arg.as_str() {
                "-C" => {
                    if let Some(to) = args.get(i + 1) {
                        here = here.join(to);
                    }
                    i += 2;
                }
                "-c" | "--git-dir" | "--work-tree" | "--namespace" => i += 2,
                a if a.starts_with('-') => i += 1,
                _ => break,
            }
        }
        if args.get(i).is_some_and(|sub| sub == "commit") {
            out.push(Invocation {
                dir: here,
                message: message_of(&args[i + 1..]),
            });
        }
    }
    out
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The message `git commit ARGS` gets from its arguments: each `-m` a paragraph,
/// `--trailer` lines last. `None` when it comes from elsewhere (an editor, `-F`,
/// `-C`/`-c` another commit).
fn message_of(args: &[String]) -> Option<String> {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut trailers: Vec<String> = Vec::new();
    let mut elsewhere = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let next = args.get(i + 1);
        i += 1;
        if arg == "--" {
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let takes_value = matches!(
                name,
                "message"
                    | "file"
                    | "trailer"
                    | "author"
                    | "date"
                    | "template"
                    | "reuse-message"
                    | "reedit-message"
                    | "fixup"
                    | "squash"
                    | "cleanup"
                    | "pathspec-from-file"
            );
            let value = match inline {
                Some(v) => Some(v),
                None if takes_value => {
                    i += 1;
                    next.cloned()
                }
                None => None,
            };
            match name {
                "message" => paragraphs.extend(value),
                "trailer" => trailers.extend(value),
                "file" | "reuse-message" | "reedit-message" | "template" => elsewhere = true,
                _ => {}
            }
            continue;
        }
        let Some(flags) = arg.strip_prefix('-').filter(|f| !f.is_empty()) else {
            continue;
        };
        // Short options bundle (`-am msg`, `-amsg`): the first that takes a value
        // takes the rest of the word, or the next word.
        for (pos, flag) in flags.char_indices() {
            let rest = &flags[pos + flag.len_utf8()..];
            let mut value = || {
                if rest.is_empty() {
                    i += 1;
                    next.cloned()
                } else {
                    Some(rest.to_string())
                }
            };
            match flag {
                'm' => {
                    paragraphs.extend(value());
                    break;
                }
                'F' | 'C' | 'c' => {
                    value();
                    elsewhere = true;
                    break;
                }
                't' => {
                    value();
                    break;
                }
                'S' | 'u' => break,
                _ => {}
            }
        }
    }
    let mut parts: Vec<String> = paragraphs
        .iter()
        .map(|p| p.trim_end().to_string())
        .filter(|p| !p.trim().is_empty())
        .collect();
    if parts.is_empty() || elsewhere {
        return None;
    }
    if !trailers.is_empty() {
        parts.push(trailers.join("\n"));
    }
    Some(parts.join("\n\n"))
}

/// The simple commands of a shell command line, as words: quotes removed (`'…'`,
/// `"…"`, `$'…'`), split at `;`, `&&`, `||`, `|`, `&` and newlines. A
/// `$(cat <<'EOF' … EOF)` substitution (how Claude Code passes long messages)
/// becomes the heredoc's text; other substitutions stay as written. Not a shell:
/// enough to read a `git commit`'s arguments.
fn simple_commands(command: &str) -> Vec<Vec<String>> {
    let chars: Vec<char> = command.chars().collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut i = 0;
    let end_word = |word: &mut String, in_word: &mut bool, words: &mut Vec<String>| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(&c) = chars.get(i) {
        let next = chars.get(i + 1).copied();
        match c {
            '\'' => {
                in_word = true;
                i += 1;
                while let Some(&q) = chars.get(i) {
                    i += 1;
                    if q == '\'' {
                        break;
                    }
                    word.push(q);
                }
            }
            '"' => {
                in_word = true;
                i += 1;
                while let Some(&q) = chars.get(i) {
                    match q {
                        '"' => {
                            i += 1;
                            break;
                        }
                        '\\' => {
                            match chars.get(i + 1) {
                                Some('\n') => {}
                                Some(&e @ ('$' | '`' | '"' | '\\')) => word.push(e),
                                Some(&e) => {
                                    word.push('\\');
                                    word.push(e);
                                }
                                None => word.push('\\'),
                            }
                            i += 2;
                        }
                        '$' if chars.get(i + 1) == Some(&'(') => {
                            let (text, after) = substitution(&chars, i);
                            word.push_str(&text);
                            i = after;
                        }
                        _ => {
                            word.push(q);
                            i += 1;
                        }
                    }
                }
            }
            '$' if next == Some('(') => {
                in_word = true;
                let (text, after) = substitution(&chars, i);
                word.push_str(&text);
                i = after;
            }
            '$' if next == Some('\'') => {
                in_word = true;
                i += 2;
                while let Some(&q) = chars.get(i) {
                    i += 1;
                    match q {
                        '\'' => break,
                        '\\' => {
                            let e = chars.get(i).copied().unwrap_or('\\');
                            i += 1;
                            word.push(match e {
                                'n' => '\n',
                                't' => '\t',
                                other => other,
                            });
                        }
                        _ => word.push(q),
                    }
                }
            }
            '\\' => {
                if let Some(e) = next
                    && e != '\n'
                {
                    word.push(e);
                    in_word = true;
                }
                i += 2;
            }
            ' ' | '\t' => {
                end_word(&mut word, &mut in_word, &mut words);
                i += 1;
            }
            '\n' | ';' | '&' | '|' => {
                end_word(&mut word, &mut in_word, &mut words);
                if !words.is_empty() {
                    out.push(std::mem::take(&mut words));
                }
                i += 1;
            }
            '#' if !in_word => {
                while chars.get(i).is_some_and(|c| *c != '\n') {
                    i += 1;
                }
            }
            _ => {
                word.push(c);
                in_word = true;
                i += 1;
            }
        }
    }
    end_word(&mut word, &mut in_word, &mut words);
    if !words.is_empty() {
        out.push(words);
    }
    out
}

/// The text of the `$(…)` starting at `start`, and where it ends: a heredoc's
/// body for `$(cat <<'EOF' … EOF)` (trailing newlines dropped, as the shell
/// does), else the substitution as written.
fn substitution(chars: &[char], start: usize) -> (String, usize) {
    let inner_start = start + 2;
    let rest: String = chars[inner_start..].iter().collect();
    if let Some((body, used)) = heredoc(&rest) {
        let after = inner_start + rest[..used].chars().count();
        return (body.trim_end_matches('\n').to_string(), after);
    }
    let mut depth = 1;
    let mut i = inner_start;
    while let Some(&c) = chars.get(i) {
        i += 1;
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
    }
    (chars[start..i.min(chars.len())].iter().collect(), i)
}

/// `cat <<'EOF'\n…\nEOF\n)` at the start of `text`: the body, and the bytes
/// used up to and including the closing `)`.
fn heredoc(text: &str) -> Option<(String, usize)> {
    let t = text.trim_start();
    let t2 = t.strip_prefix("cat")?.trim_start_matches([' ', '\t']);
    let t3 = t2.strip_prefix("<<")?;
    let (tabs, t3) = match t3.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t3),
    };
    let t3 = t3.trim_start_matches([' ', '\t']);
    let header_end = t3.find('\n')?;
    let delimiter = t3[..header_end]
        .trim()
        .trim_matches(|c| c == '\'' || c == '"');
    if delimiter.is_empty() || delimiter.contains(char::is_whitespace) {
        return None;
    }
    let body_start = text.len() - t3.len() + header_end + 1;
    let mut body = String::new();
    let mut at = body_start;
    for line in text[body_start..].split_inclusive('\n') {
        at += line.len();
        let bare = line.trim_end_matches('\n');
        let bare = if tabs {
            bare.trim_start_matches('\t')
        } else {
            bare
        };
        if bare == delimiter {
            let close = text[at..].find(')')?;
            if !text[at..at + close].trim().is_empty() {
                return None;
            }
            return Some((body, at + close + 1));
        }
        body.push_str(if tabs {
            line.trim_start_matches('\t')
        } else {
            line
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(command: &str, stdout: &str) -> SeenCommit {
        let mut all = seen(command, stdout, Path::new("/w/api"));
        assert_eq!(all.len(), 1, "{all:?}");
        all.remove(0)
    }

    #[test]
    fn summary_lines_of_every_shape_are_read() {
        let c = one(
            "git commit -m 'Add keyset pagination'",
            "[main 1a2b3c4] Add keyset pagination\n 2 files changed, 10 insertions(+)\n",
        );
        assert_eq!(
            (c.branch.as_str(), c.abbrev.as_str(), c.subject.as_str()),
            ("main", "1a2b3c4", "Add keyset pagination")
        );
        assert_eq!(c.message.as_deref(), Some("Add keyset pagination"));
        let root = one(
            "git commit -m first",
            "[main (root-commit) 593ae6b] first\n",
        );
        assert_eq!(
            (root.branch.as_str(), root.abbrev.as_str()),
            ("main", "593ae6b")
        );
        let detached = one("git commit -m x", "[detached HEAD e21d1e4] x\n");
        assert_eq!(detached.branch, "");
        let feature = one(
            "git commit -m x",
            "lint ok\n[feat/keyset-pages 0123456789ab] x\n",
        );
        assert_eq!(feature.branch, "feat/keyset-pages");
    }

    #[test]
    fn other_commands_and_other_output_capture_nothing() {
        let cwd = Path::new("/w");
        assert!(seen("git status", "[main 1a2b3c4] x", cwd).is_empty());
        assert!(
            seen(
                "git commit -m x",
                "nothing to commit, working tree clean",
                cwd
            )
            .is_empty()
        );
        assert!(seen("echo commit", "[main 1a2b3c4] x", cwd).is_empty());
        assert!(seen("git commit -m x", "[main zzzzzzz] x", cwd).is_empty());
        assert!(seen("git commit -m x", "[a b c 1a2b3c4] x", cwd).is_empty());
    }

    #[test]
    fn several_m_are_paragraphs_and_bundled_flags_work() {
        let c = one(
            r#"git add -A && git commit -am "Subject line" -m "Body: why." --trailer "Decision: D#0123456789ab""#,
            "[main 1a2b3c4] Subject line\n",
        );
        assert_eq!(
            c.message.as_deref(),
            Some("Subject line\n\nBody: why.\n\nDecision: D#0123456789ab")
        );
        let c = one(
            "git commit --message=one --message two",
            "[main 1a2b3c4] one\n",
        );
        assert_eq!(c.message.as_deref(), Some("one\n\ntwo"));
        let c = one("git commit -mInline", "[main 1a2b3c4] Inline\n");
        assert_eq!(c.message.as_deref(), Some("Inline"));
        let c = one("git commit -F msg.txt", "[main 1a2b3c4] From a file\n");
        assert_eq!(
            c.message, None,
            "the subject alone; the daemon reads the rest"
        );
        assert_eq!(c.subject, "From a file");
    }

    #[test]
    fn a_heredoc_message_is_read_whole() {
        let command = "git add src/page.rs && git commit -m \"$(cat <<'EOF'\nKeyset pagination for /items\n\nOffsets skipped rows under concurrent inserts.\n\nDecision: D#0123456789ab\nCo-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)\"";
        let c = one(command, "[main 07d4fda] Keyset pagination for /items\n");
        assert_eq!(
            c.message.as_deref(),
            Some(
                "Keyset pagination for /items\n\nOffsets skipped rows under concurrent inserts.\n\nDecision: D#0123456789ab\nCo-Authored-By: Claude <noreply@anthropic.com>"
            )
        );
    }

    #[test]
    fn the_directory_follows_cd_and_dash_c() {
        let c = one(
            "cd services/api && git -C sub -c user.name=x commit -m y",
            "[main 1a2b3c4] y\n",
        );
        assert_eq!(c.dir, Path::new("/w/api/services/api/sub"));
        let c = one(
            "GIT_AUTHOR_NAME=x /usr/bin/git commit -m y",
            "[main 1a2b3c4] y\n",
        );
        assert_eq!(c.dir, Path::new("/w/api"));
    }

    #[test]
    fn chained_commits_pair_with_their_lines() {
        let all = seen(
            "git commit -m one && git commit -m two",
            "[main 1111111] one\n 1 file changed\n[main 2222222] two\n",
            Path::new("/w"),
        );
        let got: Vec<_> = all
            .iter()
            .map(|c| (c.abbrev.as_str(), c.message.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![("1111111", Some("one")), ("2222222", Some("two"))]
        );
    }
}
