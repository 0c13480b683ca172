//! Secret redaction: every secret in text or JSON is replaced by
//! `[REDACTED:<TYPE>]` before anything is stored or sent, on the edge and on central.
//!
//! Families and their labels, tried in this order so the precise label wins over a
//! generic one:
//!
//! | label | what |
//! |---|---|
//! | `PRIVATE_KEY` | a whole `-----BEGIN … PRIVATE KEY-----` block (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP); with no END line, everything from BEGIN to the end of the text, or to the first unescaped `"` (the end of the enclosing string in code or JSON text) |
//! | `SLACK_WEBHOOK` | `https://hooks.slack.com/services/…` |
//! | `DISCORD_WEBHOOK` | `https://discord.com/api/webhooks/<id>/<token>` (also discordapp.com) |
//! | `AWS_KEY` | `AKIA`/`ASIA` + 16 upper-case letters or digits; the 40-character value of an `aws_secret_access_key` assignment |
//! | `ANTHROPIC_KEY` | `sk-ant-` + 20 or more |
//! | `SK_KEY` | any other `sk-` + 20 or more (OpenAI `sk-proj-…`, …) |
//! | `STRIPE_KEY` | Stripe secret and restricted keys: `sk_live_`/`rk_live_`/`sk_test_`/`rk_test_` + 16 or more letters or digits (publishable `pk_` keys are public) |
//! | `GITHUB_TOKEN` | `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_` + 36, `github_pat_` + 20 or more |
//! | `GITLAB_TOKEN` | `glpat-`/`gldt-`/`glrt-` + 20 or more (dotted suffixes included) |
//! | `NPM_TOKEN` | `npm_` + exactly 36 letters or digits |
//! | `HUGGINGFACE_TOKEN` | `hf_` + 30 or more letters or digits, mixing cases or digits |
//! | `SLACK_TOKEN` | `xoxb-`/`xoxa-`/`xoxp-`/`xoxr-`/`xoxs-` + 10 or more |
//! | `GOOGLE_KEY` | `AIza` + 35 |
//! | `SENDGRID_KEY` | `SG.` + 22 or more + `.` + 22 or more |
//! | `JWT` | three base64url segments, the first starting `eyJ` |
//! | `AZURE_KEY` | the base64 value of `AccountKey=` or `SharedAccessKey=` (storage and Service Bus connection strings) |
//! | `CONNECTION_STRING` | the `user:password` of a database (or http, ftp, smtp, ldap) URL; a URL with no password is not a secret |
//! | `HARDCODED_CREDENTIAL` | the value assigned to a secret-named key (see below) |
//! | `AUTHORIZATION` | the token after `Authorization:` (or `Proxy-Authorization:`) and a scheme (`Bearer`, `Basic`, `Token`, `Bot`, `Digest`, `Negotiate`): 8 or more characters of any kind up to a space, quote, `,` or `;` (no `:` inside), with no heuristics; a stand-in (`<token>`, `${TOKEN}`, `{token}`) stays |
//! | `CLI_PASSWORD` | a password on a command line, of any length: `--password=…`/`--password …` (and `--passwd`), `mysql`/`mysqldump`/`mariadb … -p…` (attached), `docker`/`podman`/`nerdctl`/`buildah`/`skopeo login … -p …`; a reference (`$VAR`) or another flag stays |
//!
//! Token families only match at the start of a word (so `task-list…` is not an `sk-`
//! key), where a JSON escape such as `\n` also counts as a word break.
//!
//! # Hard-coded credentials
//!
//! A key *ends* with `api_key`/`apikey`/`api-key`, `secret`, `password`/`passwd`,
//! `passphrase`, `token`, `private_key`, `secret_key`, `access_key`, `signing_key`,
//! `encryption_key`, `master_key`, `credential(s)` or `authorization` (any case, any
//! prefix: `DB_PASSWORD`, `client_secret`, `githubToken`, `--api-key`), followed by
//! `=`, `:`, `:=` or `=>` (or, for a `--flag`, a space). `token_count`, `max_tokens`,
//! `tokenizer` and `password_hash` are not secret names. The value, when it is at
//! least 8 characters, is replaced and the key, quotes and separator are kept:
//! `api_key = "[REDACTED:HARDCODED_CREDENTIAL]"`.
//!
//! - A quoted literal (`"…"`, `'…'`, or `\"…\"` inside JSON text) is a credential
//!   unless it has whitespace in it (`password: "Password is required"` is a message)
//!   or is a reference: it starts with `$`, `%`, `{{` or `<%` (`"${DB_PASSWORD}"`), or
//!   is a path (`/`, `./`, `../`, `~/`). An HTTP scheme (`Bearer `, `Basic `, `Token `,
//!   `Bot `) before the value is kept.
//! - An unquoted value is code more often than not, so it is a credential only when it
//!   reads as a literal:
//!   - never when it is a member path (`self.token`, `process.env.API_KEY`), a call, an
//!     index or a generic (`password = compute()`, `os.environ["X"]`, `Option<String>`),
//!     or a reference or path as above;
//!   - after a tight `=` (`KEY=value`: shell, `.env`, ini, query strings, `--flag=`,
//!     `--flag value`): a credential, except a plain word that ends a keyword argument
//!     (`f(password=password)`);
//!   - after `:` or a spaced `=` (`password: String`, `token = next_token`): a credential
//!     only when it mixes letters and digits and is not followed by `,`, `;`, `)`, `=`
//!     or `{` (a type annotation), so `password: hunter2hunter2` goes but
//!     `password: changeme`, `secret: SecretString` and `token: Tok3n = …` stay.
//!
//! # JSON text
//!
//! The same function runs on serialized JSON. No replacement ever consumes a `"` or
//! part of a backslash escape, and no replacement spans two JSON strings, so valid JSON
//! text stays valid JSON. For parsed values use [`redact_json`], which also knows
//! secret-named object keys.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::{LazyLock, OnceLock};

use aho_corasick::AhoCorasick;
use regex::{Captures, Regex};

/// Every redaction starts with this: `[REDACTED:<TYPE>]`.
pub const REDACTED_PREFIX: &str = "[REDACTED:";

/// The label of a value assigned to a secret-named key.
pub const HARDCODED_CREDENTIAL: &str = "HARDCODED_CREDENTIAL";

/// Decides about one match: the byte range of `text` to replace, or `None` to leave
/// the match alone.
type Accept = fn(text: &str, caps: &Captures<'_>) -> Option<Range<usize>>;

struct Rule {
    label: &'static str,
    pattern: String,
    /// Compiled on first use: a hook process pays only for the rules its text needs.
    regex: OnceLock<Regex>,
    accept: Accept,
}

impl Rule {
    fn regex(&self) -> &Regex {
        self.regex
            .get_or_init(|| Regex::new(&self.pattern).expect("redaction pattern compiles"))
    }
}

struct Redactor {
    /// One pass of literal needles over the text says which rules can match at all.
    /// Every match of a rule contains one of its needles (case-insensitively), so a
    /// rule whose needles are absent is skipped without compiling its regex: most
    /// hook payloads pay microseconds, not the milliseconds of compiling them all.
    needles: AhoCorasick,
    /// For each needle, the rule it belongs to.
    needle_rule: Vec<usize>,
    rules: Vec<Rule>,
}

/// A word break before a token: start of text, a non-alphanumeric character, or a JSON
/// escape (`\n`, `\t`…) whose letter would otherwise glue onto the token.
const LEAD: &str = r"(?:^|[^A-Za-z0-9]|\\[nrtbf])";

/// Secret names for hard-coded assignments: a key *ending* with one of these.
const KEYWORDS: &str = r"(?i-u:api[_-]?key|secret|passw(?:or)?d|passphrase|token|(?:private|secret|access|signing|encryption|master)[_-]?key|credentials?|authorization)";

/// An HTTP authorization scheme kept in front of the value.
const SCHEME: &str = r"(?:(?i-u:bearer|basic|token|bot) +)?";

/// The value after a separator, each form in its own group: `eq` (`\"…\"` inside
/// JSON text, at any escaping depth), `dq` (`"…"`), `sq` (`'…'`) and `uq` (unquoted),
/// each optionally after `scheme`.
/// Backslashes inside a value are only ever taken as whole escape pairs. `dq` may not start the
/// way the gap between two JSON strings starts (`,` `:` `]` `}`), so in JSON text it
/// cannot run from the end of one string to the start of the next.
fn value_pattern(scheme: &str) -> String {
    format!(
        concat!(
            r#"(?:(?:\\\\)*\\"{s}(?P<eq>(?:[^"\\\s]|\\\\(?:[^"\\\s]|\\[\\"]))+)(?:\\\\)*\\""#,
            r#"|"{s}(?P<dq>(?:[^"\\\s,:\]}}]|\\\S)(?:[^"\\\s]|\\\S)*)""#,
            r#"|'{s}(?P<sq>[^'"\\\s]+)'"#,
            r#"|{s}(?P<uq>[^\s"'\\`&;|<>()\[\]{{}},=:][^\s"'\\`&;|<>()\[\]{{}},]*))"#,
        ),
        s = scheme
    )
}

/// The gap between a command's name and one of its flags: anything on the same
/// command (no `|`, `;`, `&`, line break or unescaped quote, so in JSON text it never
/// leaves the string it starts in), taking backslash escapes as whole pairs.
const SAME_COMMAND: &str = r#"(?:[^\n|;&"\\]|\\[\s\S])*?"#;

/// Every rule: its label, the literals one of which each of its matches contains
/// (matched without regard to ASCII case; a missing needle would let a secret through,
/// so keep them in step with the pattern), its pattern and its check.
type Spec = (&'static str, &'static [&'static str], String, Accept);

/// The value of a command line's password flag: like [`value_pattern`] (same groups,
/// same care for JSON text) but a quoted value may hold spaces, since a quoted
/// argument is a password whatever it reads like.
fn cli_value_pattern() -> String {
    concat!(
        r#"(?:(?:\\\\)*\\"(?P<eq>(?:[^"\\\n]|\\\\(?:[^"\\\s]|\\[\\"]))+)(?:\\\\)*\\""#,
        r#"|"(?P<dq>(?:[^"\\\s,:\]}]|\\\S)(?:[^"\\\n]|\\\S)*)""#,
        r#"|'(?P<sq>[^'"\\\n]+)'"#,
        r#"|(?P<uq>[^\s"'\\`&;|<>()\[\]{},=:][^\s"'\\`&;|<>()\[\]{},]*))"#,
    )
    .to_owned()
}

fn redactor() -> Redactor {
    let specs = token_rules()
        .into_iter()
        .chain(assignment_rules())
        .collect::<Vec<Spec>>();
    let mut needles: Vec<&'static str> = Vec::new();
    let mut needle_rule = Vec::new();
    let rules = specs
        .into_iter()
        .enumerate()
        .map(|(index, (label, rule_needles, pattern, accept))| {
            for needle in rule_needles {
                needles.push(needle);
                needle_rule.push(index);
            }
            Rule {
                label,
                pattern,
                regex: OnceLock::new(),
                accept,
            }
        })
        .collect();
    let needles = AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .build(&needles)
        .expect("redaction needles build");
    Redactor {
        needles,
        needle_rule,
        rules,
    }
}

/// Secrets recognised by their own shape, precise labels first.
fn token_rules() -> Vec<Spec> {
    // One unit of a private key body: anything but a quote, a whole escape pair, or a
    // source-code string concatenation (`\n" +\n "MII…`). In JSON text the last never
    // matches (two JSON strings are always separated by `,` or `:`), so a block never
    // runs past the JSON string it starts in.
    let body = r#"(?:[^"\\]|\\[\s\S]|"[\s+.&\\]*")"#;
    let key_line = r"PRIVATE KEY(?: BLOCK)?-----";
    vec![
        (
            "PRIVATE_KEY",
            &["-----begin"],
            format!(
                r"(?P<s>-----BEGIN[ A-Z0-9]*{key_line}(?:{body}*?-----END[ A-Z0-9]*{key_line}|{body}*))"
            ),
            secret_group,
        ),
        (
            "SLACK_WEBHOOK",
            &["hooks.slack.com"],
            r"(?P<s>https?://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_-]+/[A-Za-z0-9_/-]+)"
                .to_owned(),
            secret_group,
        ),
        (
            "DISCORD_WEBHOOK",
            &["discord"],
            r"(?P<s>https?://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api(?:/v[0-9]+)?/webhooks/[0-9]+/[A-Za-z0-9_-]+)"
                .to_owned(),
            secret_group,
        ),
        (
            "AWS_KEY",
            &["akia", "asia"],
            format!(r"{LEAD}(?P<s>(?:AKIA|ASIA)[A-Z0-9]{{16}})"),
            secret_group,
        ),
        (
            "AWS_KEY",
            &["secret"],
            r#"(?i:aws_?secret_?(?:access_?)?key|secret_?access_?key)(?:\\*["'])?[ \t]*(?::=|=>|=|:)[ \t]*(?:\\*["'])?(?P<s>[A-Za-z0-9/+]{40}[A-Za-z0-9/+=]*)"#
                .to_owned(),
            secret_group,
        ),
        (
            "ANTHROPIC_KEY",
            &["sk-ant-"],
            format!(r"{LEAD}(?P<s>sk-ant-[A-Za-z0-9_-]{{20,}})"),
            secret_group,
        ),
        (
            "SK_KEY",
            &["sk-"],
            format!(r"{LEAD}(?P<s>sk-[A-Za-z0-9_-]{{20,}})"),
            random_body,
        ),
        (
            "STRIPE_KEY",
            &["sk_live_", "sk_test_", "rk_live_", "rk_test_"],
            format!(r"{LEAD}(?P<s>[sr]k_(?:live|test)_[A-Za-z0-9]{{16,}})\b"),
            secret_group,
        ),
        (
            "GITHUB_TOKEN",
            &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
            format!(r"{LEAD}(?P<s>gh[pousr]_[A-Za-z0-9]{{36,}}|github_pat_[A-Za-z0-9_]{{20,}})"),
            secret_group,
        ),
        (
            "GITLAB_TOKEN",
            &["glpat-", "gldt-", "glrt-"],
            format!(
                r"{LEAD}(?P<s>gl(?:pat|dt|rt)-[A-Za-z0-9_-]{{20,}}(?:\.[A-Za-z0-9_-]+)*)"
            ),
            secret_group,
        ),
        (
            "NPM_TOKEN",
            &["npm_"],
            format!(r"{LEAD}(?P<s>npm_[A-Za-z0-9]{{36}})\b"),
            secret_group,
        ),
        (
            "HUGGINGFACE_TOKEN",
            &["hf_"],
            format!(r"{LEAD}(?P<s>hf_[A-Za-z0-9]{{30,}})\b"),
            random_body,
        ),
        (
            "SLACK_TOKEN",
            &["xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-"],
            format!(r"{LEAD}(?P<s>xox[baprs]-[A-Za-z0-9-]{{10,}})"),
            secret_group,
        ),
        (
            "GOOGLE_KEY",
            &["aiza"],
            format!(r"{LEAD}(?P<s>AIza[0-9A-Za-z_-]{{35}})"),
            secret_group,
        ),
        (
            "SENDGRID_KEY",
            &["sg."],
            format!(r"{LEAD}(?P<s>SG\.[A-Za-z0-9_-]{{22,}}\.[A-Za-z0-9_-]{{22,}})"),
            secret_group,
        ),
        (
            "JWT",
            &["eyj"],
            format!(r"{LEAD}(?P<s>eyJ[A-Za-z0-9_-]{{10,}}\.[A-Za-z0-9_-]{{10,}}\.[A-Za-z0-9_-]*)"),
            secret_group,
        ),
        (
            "AZURE_KEY",
            &["accountkey", "sharedaccesskey"],
            r"(?i:AccountKey|SharedAccessKey)=(?P<s>[A-Za-z0-9+/]{20,}={0,2})".to_owned(),
            secret_group,
        ),
        (
            "CONNECTION_STRING",
            &["://"],
            r#"(?i:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|sqlserver|https?|s?ftp|smtps?|ldaps?)://(?P<s>[^\s:/@"'\\]*:[^\s/@"'\\?#]+(?:@[^\s/@"'\\?#]+)*)@"#
                .to_owned(),
            connection_string,
        ),
    ]
}

/// Secrets recognised by what names them: a secret-named key or flag, an HTTP
/// authorization header, a password flag of a command line.
fn assignment_rules() -> Vec<Spec> {
    const CREDENTIAL_WORDS: &[&str] = &[
        "key",
        "secret",
        "passw",
        "passphrase",
        "token",
        "credential",
        "authorization",
    ];
    let value = value_pattern(SCHEME);
    let cli = cli_value_pattern();
    vec![
        (
            HARDCODED_CREDENTIAL,
            CREDENTIAL_WORDS,
            format!(
                r#"(?P<n>[A-Za-z0-9_.-]*?{KEYWORDS})(?:\\*["'])?\]?(?P<w1>[ \t]*)(?P<sep>:=|=>|=|:)(?P<w2>[ \t]*){value}"#
            ),
            assignment,
        ),
        (
            HARDCODED_CREDENTIAL,
            CREDENTIAL_WORDS,
            format!(r"--(?P<n>[A-Za-z0-9_-]*?{KEYWORDS})[ \t]+{value}"),
            cli_flag,
        ),
        // What the rules above leave (values under 8 characters, or that do not read
        // as literals) is caught here, where the name alone says it is a secret.
        (
            "AUTHORIZATION",
            &["authorization"],
            r#"(?i:authorization)(?:\\*["'])?[ \t]*(?::=|=>|=|:)[ \t]*(?:\\*["'])?(?i:bearer|basic|token|bot|digest|negotiate)[ \t]+(?P<s>[^\s"'\\,;:]{8,})(?:[\s"'\\,;]|$)"#
                .to_owned(),
            authorization,
        ),
        (
            "CLI_PASSWORD",
            &["--passw"],
            format!(r"(?:^|[^A-Za-z0-9_-]|\\[nrtbf])--passw(?:or)?d(?:=|[ \t]+){cli}"),
            cli_password,
        ),
        (
            "CLI_PASSWORD",
            &["mysql", "mariadb"],
            format!(r"\b(?:mysql[a-z]*|mariadb(?:-[a-z]+)?)\b{SAME_COMMAND}[ \t]-p{cli}"),
            cli_password,
        ),
        (
            "CLI_PASSWORD",
            &["login"],
            format!(
                r"\b(?:docker|podman|nerdctl|buildah|skopeo)[ \t]+login\b{SAME_COMMAND}[ \t]-p(?:=|[ \t]+){cli}"
            ),
            cli_password,
        ),
    ]
}

static REDACTOR: LazyLock<Redactor> = LazyLock::new(redactor);

fn secret_group(_text: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    caps.name("s").map(|m| m.range())
}

/// A generic `sk-` key or a Hugging Face `hf_` token is random: its body (after the
/// three-character prefix) mixes at least two of lower case, upper case and digits
/// (`sk-spinner-double-bounce` is a CSS class, not a key).
fn random_body(_text: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let m = caps.name("s")?;
    let body = &m.as_str()[3..];
    let classes = [
        body.bytes().any(|b| b.is_ascii_lowercase()),
        body.bytes().any(|b| b.is_ascii_uppercase()),
        body.bytes().any(|b| b.is_ascii_digit()),
    ];
    (classes.iter().filter(|c| **c).count() >= 2).then(|| m.range())
}

/// The token after an authorization scheme, unless it stands in for one (`<token>`,
/// `${TOKEN}`, `{token}`) or is a marker already.
fn authorization(_text: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let m = caps.name("s")?;
    let value = m.as_str();
    let stand_in = is_marker(value) || is_reference(value) || value.starts_with(['<', '{']);
    (!stand_in).then(|| m.range())
}

/// The value of a command line's password flag, whatever its length or look, unless
/// it is a reference (`$MYSQL_PWD`), another flag or a marker already.
fn cli_password(_text: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let m = ["eq", "dq", "sq", "uq"]
        .iter()
        .find_map(|name| caps.name(name))?;
    let value = m.as_str();
    let stand_in = is_marker(value) || is_reference(value) || value.starts_with(['-', '<', '{']);
    (!stand_in).then(|| m.range())
}

fn connection_string(_text: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let m = caps.name("s")?;
    (!m.as_str().contains(REDACTED_PREFIX)).then(|| m.range())
}

/// How an unquoted value was introduced.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// `KEY=value`, `--flag=value`, `--flag value`: shell, `.env`, ini, query strings.
    Literal,
    /// `key: value`, `key = value`, `key := value`, `key => value`: usually code.
    Code,
}

fn assignment(text: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let tight = caps.name("sep").is_some_and(|m| m.as_str() == "=")
        && caps.name("w1").is_some_and(|m| m.is_empty())
        && caps.name("w2").is_some_and(|m| m.is_empty());
    credential_value(text, caps, if tight { Form::Literal } else { Form::Code })
}

fn cli_flag(text: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let value = credential_value(text, caps, Form::Literal)?;
    (!text[value.clone()].starts_with('-')).then_some(value)
}

/// The range of the assigned value when it is a credential (see the module docs).
fn credential_value(text: &str, caps: &Captures<'_>, form: Form) -> Option<Range<usize>> {
    let quoted = caps
        .name("eq")
        .or_else(|| caps.name("dq"))
        .or_else(|| caps.name("sq"));
    let (m, quoted) = match quoted {
        Some(m) => (m, true),
        None => (caps.name("uq")?, false),
    };
    let value = m.as_str();
    if value.chars().count() < 8 || is_marker(value) || is_reference(value) {
        return None;
    }
    if quoted {
        return Some(m.range());
    }
    let next = text[m.end()..].chars().next();
    if is_member_path(value) || (is_identifier(value) && matches!(next, Some('(' | '[' | '<'))) {
        return None;
    }
    let has_digit = value.bytes().any(|b| b.is_ascii_digit());
    let literal = match form {
        Form::Literal => !(is_identifier(value) && !has_digit && matches!(next, Some(',' | ')'))),
        Form::Code => {
            // `const TOKEN: Ty5 = …` is a type annotation, not a value.
            let after = text[m.end()..]
                .trim_start_matches([' ', '\t'])
                .chars()
                .next();
            // A number with an exponent (`1.5e123456`) is structure in JSON text.
            has_digit
                && value.bytes().any(|b| b.is_ascii_alphabetic())
                && value.parse::<f64>().is_err()
                && !matches!(next, Some(',' | ';' | ')'))
                && !matches!(after, Some('=' | '{'))
        }
    };
    literal.then(|| m.range())
}

/// A redaction or private-span marker already in place.
fn is_marker(value: &str) -> bool {
    value.starts_with(REDACTED_PREFIX) || value.starts_with(crate::private::PRIVATE_MARKER)
}

/// A variable, template or path standing in for the value, not the value itself.
fn is_reference(value: &str) -> bool {
    ["$", "%", "{{", "<%", "/", "./", "../", "~/"]
        .iter()
        .any(|p| value.starts_with(p))
}

fn is_identifier(value: &str) -> bool {
    let mut bytes = value.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_' || b == b'$')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
}

/// `self.token`, `process.env.API_KEY`, `Config::SECRET`: identifiers joined by `.`
/// or `::`.
fn is_member_path(value: &str) -> bool {
    let normalized = value.replace("::", ".");
    let mut parts = normalized.split('.');
    let first = parts.next().unwrap_or_default();
    let rest: Vec<&str> = parts.collect();
    !rest.is_empty() && is_identifier(first) && rest.iter().all(|p| is_identifier(p))
}

fn marker(label: &str) -> String {
    format!("{REDACTED_PREFIX}{label}]")
}

/// Applies one rule to `text`; `None` when it replaced nothing.
///
/// A candidate the rule's check rejects (say `Authorization: Bearer api_key` whose
/// value is a plain word) must not hide a secret that overlaps it (`api_key = "…"`
/// right after): the search resumes just past the rejected candidate's key name, not
/// past the whole candidate.
fn apply(rule: &Rule, text: &str) -> Option<String> {
    let mut out = String::new();
    let mut last = 0;
    let mut pos = 0;
    let mut changed = false;
    while pos <= text.len() {
        let Some(caps) = rule.regex().captures_at(text, pos) else {
            break;
        };
        let whole = caps.get(0).map_or(pos..pos, |m| m.range());
        match (rule.accept)(text, &caps) {
            Some(range) if range.start >= last => {
                out.push_str(&text[last..range.start]);
                out.push_str(REDACTED_PREFIX);
                out.push_str(rule.label);
                out.push(']');
                last = range.end;
                changed = true;
                pos = whole
                    .end
                    .max(range.end)
                    .max(next_boundary(text, whole.start));
            }
            _ => {
                let resume = caps.name("n").map_or(whole.start, |n| n.end());
                pos = next_boundary(text, resume.max(whole.start));
            }
        }
    }
    if !changed {
        return None;
    }
    out.push_str(&text[last..]);
    Some(out)
}

/// The first char boundary strictly after `i` (or past the end).
fn next_boundary(text: &str, i: usize) -> usize {
    let mut j = i + 1;
    while j < text.len() && !text.is_char_boundary(j) {
        j += 1;
    }
    j
}

/// Replaces every secret in `text` by `[REDACTED:<TYPE>]` (families, order and the
/// hard-coded-credential rules are in the module docs).
///
/// Guarantees: the result is [`Cow::Borrowed`] when nothing matched, and text with no
/// candidate at all costs one scan; applying it again changes nothing; when `text` is
/// valid JSON the result is valid JSON with the same structure (a replacement never
/// takes a `"` or half of an escape, and never spans two JSON strings).
pub fn redact(text: &str) -> Cow<'_, str> {
    let redactor = &*REDACTOR;
    let mut candidates = vec![false; redactor.rules.len()];
    for found in redactor.needles.find_overlapping_iter(text) {
        candidates[redactor.needle_rule[found.pattern().as_usize()]] = true;
    }
    let mut current = Cow::Borrowed(text);
    for (rule, _) in redactor.rules.iter().zip(&candidates).filter(|(_, c)| **c) {
        if let Some(next) = apply(rule, &current) {
            current = Cow::Owned(next);
        }
    }
    current
}

/// Whether `text` holds anything [`redact`] would replace.
pub fn contains_secret(text: &str) -> bool {
    matches!(redact(text), Cow::Owned(_))
}

/// Whether an object key names a secret: its last words (split at `_`, `-`, `.`,
/// spaces and camelCase) spell one of `api key`, `apikey`, `secret`, `password`,
/// `passwd`, `passphrase`, `token`, `private key`, `secret key`, `access key`,
/// `signing key`, `encryption key`, `master key`, `credential(s)` or `authorization`,
/// in any case. So `client_secret`, `refresh_token`, `X-Api-Key`, `dbPassword` and
/// `SecretAccessKey` are secret names; `tokenizer`, `max_tokens`, `token_count` and
/// `password_hash` are not.
pub fn is_secret_key(name: &str) -> bool {
    const NAMES: [&str; 16] = [
        "apikey",
        "secret",
        "password",
        "passwd",
        "passphrase",
        "token",
        "privatekey",
        "secretkey",
        "accesskey",
        "signingkey",
        "encryptionkey",
        "masterkey",
        "credential",
        "credentials",
        "authorization",
        "clientsecret",
    ];
    let words = words(name);
    (1..=words.len().min(2)).any(|n| {
        let tail = words[words.len() - n..].concat();
        NAMES.contains(&tail.as_str())
    })
}

/// The lower-cased words of an identifier.
fn words(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut words = Vec::new();
    let mut current = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_ascii_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            continue;
        }
        if c.is_ascii_uppercase() && !current.is_empty() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next_lower)
            {
                words.push(std::mem::take(&mut current));
            }
        }
        current.push(c.to_ascii_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// Redacts `s` in place; `true` when it changed.
fn redact_string(s: &mut String) -> bool {
    match redact(s) {
        Cow::Borrowed(_) => false,
        Cow::Owned(redacted) => {
            *s = redacted;
            true
        }
    }
}

/// Redacts every string inside `value`, at any depth, object keys included, with
/// [`redact`]; and replaces outright a string of 8 or more characters held by a
/// secret-named key (see [`is_secret_key`]): by the precise marker when the whole
/// string is one known secret, else by `[REDACTED:HARDCODED_CREDENTIAL]`. Numbers
/// and booleans are left as they are. Applying it again changes nothing.
///
/// A key is data like any other (`{"ghp_…": "repo"}` is a map a tool printed), so
/// it is redacted too; whether it names a secret is read before, from the key as
/// it came, and a key that is already a redaction marker names none (or a second
/// pass would take its value). Two keys redacted alike are told apart by a count
/// (`[REDACTED:GITHUB_TOKEN] 2`), so no value is lost.
pub fn redact_json(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::String(s) => {
            redact_string(s);
        }
        Value::Array(items) => items.iter_mut().for_each(redact_json),
        Value::Object(map) => {
            let entries = std::mem::take(map);
            for (mut key, mut item) in entries {
                let secret_name = is_secret_key(&key) && !key.starts_with(REDACTED_PREFIX);
                match &mut item {
                    Value::String(s) if secret_name && s.chars().count() >= 8 => {
                        redact_string(s);
                        let single = s.starts_with(REDACTED_PREFIX)
                            && s.ends_with(']')
                            && s.matches('[').count() == 1;
                        if !single {
                            *s = marker(HARDCODED_CREDENTIAL);
                        }
                    }
                    _ => redact_json(&mut item),
                }
                redact_string(&mut key);
                if map.contains_key(&key) {
                    let mut n = 2;
                    while map.contains_key(&format!("{key} {n}")) {
                        n += 1;
                    }
                    key = format!("{key} {n}");
                }
                map.insert(key, item);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    // Secrets are assembled from pieces so this file does not itself look like a leak
    // to secret scanners.
    fn aws_id() -> String {
        ["AKIA", "IOSFODNN7EXAMPLE"].concat()
    }
    fn aws_session_id() -> String {
        ["ASIA", "Y3VSNL2EXAMPLE12"].concat()
    }
    fn aws_secret() -> String {
        ["wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY"].concat()
    }
    fn anthropic() -> String {
        [
            "sk-",
            "ant-api03-",
            "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcdEFGH",
        ]
        .concat()
    }
    fn openai() -> String {
        ["sk-", "proj-", "Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56"].concat()
    }
    fn github() -> String {
        ["ghp", "_", "1234567890abcdefghijABCDEFGHIJ123456"].concat()
    }
    fn github_pat() -> String {
        ["github", "_pat_", "11ABCDEFG0123456789_abcdefghijklmnop"].concat()
    }
    fn slack() -> String {
        [
            "xox",
            "b-",
            "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        ]
        .concat()
    }
    fn slack_webhook() -> String {
        [
            "https://hooks.slack.com/",
            "services/T00000000/B00000000/",
            "XXXXXXXXXXXXXXXXXXXXXXXX",
        ]
        .concat()
    }
    fn google() -> String {
        ["AI", "za", "SyA1234567890abcdefghijklmnopqrstuv"].concat()
    }
    fn sendgrid() -> String {
        [
            "SG",
            ".abcdefghijklmnopqrstuv.",
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopq",
        ]
        .concat()
    }
    fn jwt() -> String {
        [
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.",
            "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.",
            "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        ]
        .concat()
    }
    fn discord() -> String {
        [
            "https://discord.com/api/",
            "webhooks/123456789012345678/",
            "AbCdEf-GhIjKl_MnOpQrStUvWxYz0123456789",
        ]
        .concat()
    }
    const KEY_BODY: &str = "MIIEowIBAAKCAQEA1x2y3z4KEYBODYLINEONEabcdefghijklmnop\nQRSTUVWXYZ0123456789secondlineofthekeybodyQ==";
    fn private_key(kind: &str) -> String {
        format!("-----BEGIN {kind}PRIVATE KEY-----\n{KEY_BODY}\n-----END {kind}PRIVATE KEY-----")
    }

    fn out(text: &str) -> String {
        redact(text).into_owned()
    }

    /// `text` loses `secret` and gains the `label` marker, as plain text and inside
    /// JSON text (where the result must still parse and hold the same structure).
    #[track_caller]
    fn assert_redacts(text: &str, secret: &str, label: &str) {
        let marker = marker(label);
        let plain = out(text);
        assert!(!plain.contains(secret), "plain: secret kept in {plain:?}");
        assert!(plain.contains(&marker), "plain: no {marker} in {plain:?}");
        for doc in [
            json!({"tool_input": {"command": text}, "exit": 0}),
            json!({"out": [text, "after"], "text": text}),
        ] {
            for serialized in [
                doc.to_string(),
                serde_json::to_string_pretty(&doc).expect("json"),
            ] {
                let redacted = out(&serialized);
                let parsed: Value = serde_json::from_str(&redacted)
                    .unwrap_or_else(|e| panic!("not JSON any more ({e}): {redacted}"));
                assert!(
                    !redacted.contains(secret),
                    "json: secret kept in {redacted}"
                );
                assert!(
                    redacted.contains(&marker),
                    "json: no {marker} in {redacted}"
                );
                assert_eq!(
                    shape(&parsed),
                    shape(&doc),
                    "json structure changed: {redacted}"
                );
            }
        }
        // Double-encoded: a JSON document holding JSON text as a string.
        let inner = json!({"cmd": text}).to_string();
        let outer = json!({"content": inner}).to_string();
        let redacted = out(&outer);
        let parsed: Value = serde_json::from_str(&redacted).expect("double-encoded still JSON");
        assert!(
            !redacted.contains(secret),
            "double-encoded: secret kept in {redacted}"
        );
        assert!(parsed["content"].is_string());
    }

    /// The structure of a JSON value without its strings.
    fn shape(value: &Value) -> Value {
        match value {
            Value::String(_) => json!("s"),
            Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
            Value::Object(map) => {
                Value::Object(map.iter().map(|(k, v)| (k.clone(), shape(v))).collect())
            }
            other => other.clone(),
        }
    }

    /// `text` is left untouched, as plain text and as JSON text.
    #[track_caller]
    fn assert_kept(text: &str) {
        assert!(
            matches!(redact(text), Cow::Borrowed(_)),
            "changed: {:?}",
            out(text)
        );
        let doc = json!({"a": text}).to_string();
        assert!(
            matches!(redact(&doc), Cow::Borrowed(_)),
            "changed in JSON: {:?}",
            out(&doc)
        );
        assert!(!contains_secret(text));
    }

    #[test]
    fn every_rule_has_needles() {
        let r = &*REDACTOR;
        for (index, rule) in r.rules.iter().enumerate() {
            assert!(
                r.needle_rule.contains(&index),
                "rule {} has no needle",
                rule.label
            );
        }
    }

    #[test]
    fn a_rejected_candidate_does_not_hide_an_overlapping_secret() {
        let text =
            r#"curl -H 'Authorization: Bearer api_key = "FAKEhardcodedValue2026"' https://x"#;
        let out = out(text);
        assert!(!out.contains("FAKEhardcodedValue2026"), "{out}");
        assert!(
            out.contains("api_key = \"[REDACTED:HARDCODED_CREDENTIAL]\""),
            "{out}"
        );
    }

    #[test]
    fn text_without_secrets_is_borrowed() {
        let code = r#"
            //! Task-list manager: see https://example.com/api/webhooks for the hook docs.
            use std::collections::HashMap;
            fn main() {
                let token_count = 12;
                let max_tokens: u32 = 4096;
                let password_hash = compute();
                let tokenizer = Tokenizer::new("gpt2");
                let sha = "9fceb02d0ae598e95dc970b74767f19372d61af8";
                let id = "550e8400-e29b-41d4-a716-446655440000";
                let img = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
                let url = "postgres://localhost/db";
                let akia = "AKIA is a word";
                println!("{} {}", token_count, max_tokens);
            }
        "#;
        assert!(matches!(redact(code), Cow::Borrowed(_)));
        let doc = json!({"tool_input": {"file_path": "src/main.rs", "content": code}}).to_string();
        assert!(matches!(redact(&doc), Cow::Borrowed(_)));
        assert!(!contains_secret(code));
        assert!(matches!(redact(""), Cow::Borrowed(_)));
    }

    // ---- AWS_KEY ----

    #[test]
    fn aws_access_key_ids_are_redacted() {
        assert_redacts(
            &format!("aws configure set aws_access_key_id {}", aws_id()),
            &aws_id(),
            "AWS_KEY",
        );
        assert_redacts(
            &format!("AccessKeyId: {}", aws_session_id()),
            &aws_session_id(),
            "AWS_KEY",
        );
        assert_redacts(&format!("line\n{}\nline", aws_id()), &aws_id(), "AWS_KEY");
        assert_eq!(
            out(&format!("key={}.", aws_id())),
            "key=[REDACTED:AWS_KEY]."
        );
    }

    #[test]
    fn aws_secret_access_keys_are_redacted() {
        let secret = aws_secret();
        assert_redacts(
            &format!("aws_secret_access_key = {secret}"),
            &secret,
            "AWS_KEY",
        );
        assert_redacts(
            &format!("AWS_SECRET_ACCESS_KEY=\"{secret}\""),
            &secret,
            "AWS_KEY",
        );
        assert_redacts(
            &format!("\"SecretAccessKey\": \"{secret}\""),
            &secret,
            "AWS_KEY",
        );
        assert_eq!(
            out(&format!("aws_secret_access_key = {secret}")),
            "aws_secret_access_key = [REDACTED:AWS_KEY]"
        );
    }

    #[test]
    fn aws_lookalikes_are_kept() {
        assert_kept("AKIA is short, AKIAFOO too, and HAKIAIOSFODNN7EXAMPLE is glued to a word");
        assert_kept("AKIAiosfodnn7example is lower case");
        assert_kept("secret_access_key = short");
    }

    // ---- ANTHROPIC_KEY / SK_KEY ----

    #[test]
    fn anthropic_keys_win_over_generic_sk() {
        assert_redacts(
            &format!("ANTHROPIC_API_KEY={}", anthropic()),
            &anthropic(),
            "ANTHROPIC_KEY",
        );
        assert_redacts(
            &format!("x-api-key: {}", anthropic()),
            &anthropic(),
            "ANTHROPIC_KEY",
        );
        assert_eq!(
            out(&format!("use {} now", anthropic())),
            "use [REDACTED:ANTHROPIC_KEY] now"
        );
    }

    #[test]
    fn generic_sk_keys_are_redacted() {
        assert_redacts(
            &format!("client = OpenAI(api_key={})", openai()),
            &openai(),
            "SK_KEY",
        );
        let legacy = ["sk-", "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefABCD"].concat();
        assert_redacts(
            &format!("Authorization: Bearer {legacy}"),
            &legacy,
            "SK_KEY",
        );
        assert_eq!(
            out(&format!("key {} end", openai())),
            "key [REDACTED:SK_KEY] end"
        );
    }

    #[test]
    fn sk_lookalikes_are_kept() {
        assert_kept("task-list-management-for-everyone and risk-assessment-of-the-project");
        assert_kept("<div class=\"sk-spinner-double-bounce-animation\"></div>");
        assert_kept("sk-learn is short; sk-ant-short too");
    }

    // ---- GITHUB_TOKEN ----

    #[test]
    fn github_tokens_are_redacted() {
        assert_redacts(
            &format!("export GH_TOKEN={}", github()),
            &github(),
            "GITHUB_TOKEN",
        );
        for prefix in ["gho_", "ghu_", "ghs_", "ghr_"] {
            let token = [prefix, "1234567890abcdefghijABCDEFGHIJ123456"].concat();
            assert_redacts(&format!("token {token}"), &token, "GITHUB_TOKEN");
        }
        assert_redacts(
            &format!("git clone https://{}@github.com/o/r", github_pat()),
            &github_pat(),
            "GITHUB_TOKEN",
        );
    }

    #[test]
    fn github_lookalikes_are_kept() {
        assert_kept("ghp_short and github_pat_tiny and xghp_1234567890abcdefghijABCDEFGHIJ123456");
    }

    // ---- SLACK_TOKEN / SLACK_WEBHOOK ----

    #[test]
    fn slack_tokens_and_webhooks_are_redacted() {
        assert_redacts(
            &format!("SLACK_BOT_TOKEN={}", slack()),
            &slack(),
            "SLACK_TOKEN",
        );
        let user = ["xox", "p-", "1234567890-abcdefghij"].concat();
        assert_redacts(&format!("token {user}"), &user, "SLACK_TOKEN");
        assert_redacts(
            &format!("curl -X POST {} -d '{{}}'", slack_webhook()),
            &slack_webhook(),
            "SLACK_WEBHOOK",
        );
        assert_eq!(
            out(&format!("hook: {}", slack_webhook())),
            "hook: [REDACTED:SLACK_WEBHOOK]"
        );
    }

    #[test]
    fn slack_lookalikes_are_kept() {
        assert_kept(
            "xoxb-short, xoxz-1234567890abc, https://hooks.slack.com/services/ and https://slack.com/help",
        );
    }

    // ---- GOOGLE_KEY ----

    #[test]
    fn google_keys_are_redacted() {
        assert_redacts(
            &format!("https://maps.googleapis.com/maps/api?key={}", google()),
            &google(),
            "GOOGLE_KEY",
        );
        assert_redacts(
            &format!("const k = '{}'", google()),
            &google(),
            "GOOGLE_KEY",
        );
    }

    #[test]
    fn google_lookalikes_are_kept() {
        assert_kept("AIzaShort and AIza is a prefix");
    }

    // ---- SENDGRID_KEY ----

    #[test]
    fn sendgrid_keys_are_redacted() {
        assert_redacts(
            &format!("SENDGRID={}", sendgrid()),
            &sendgrid(),
            "SENDGRID_KEY",
        );
        assert_eq!(
            out(&format!("k {}", sendgrid())),
            "k [REDACTED:SENDGRID_KEY]"
        );
    }

    #[test]
    fn sendgrid_lookalikes_are_kept() {
        assert_kept("SG.short.short and SG.Module.Name");
    }

    // ---- STRIPE_KEY ----

    fn stripe(kind: &str, mode: &str) -> String {
        [kind, "_", mode, "_", "51HqLyjWDarjtT1zdp7dcXYZ0123abcd"].concat()
    }

    #[test]
    fn stripe_secret_and_restricted_keys_are_redacted() {
        for (kind, mode) in [
            ("sk", "live"),
            ("rk", "live"),
            ("sk", "test"),
            ("rk", "test"),
        ] {
            let key = stripe(kind, mode);
            assert_redacts(
                &format!("curl https://api.stripe.com/v1/charges -u {key}:"),
                &key,
                "STRIPE_KEY",
            );
            assert_redacts(&format!("STRIPE_SECRET_KEY={key}"), &key, "STRIPE_KEY");
        }
        assert_eq!(
            out(&format!("key {} end", stripe("sk", "live"))),
            "key [REDACTED:STRIPE_KEY] end"
        );
    }

    #[test]
    fn stripe_lookalikes_are_kept() {
        // A publishable key is public by design.
        assert_kept(&stripe("pk", "live"));
        assert_kept(
            "sk_live_short, desk_live_0123456789abcdefghij and sk_prod_0123456789abcdefghij",
        );
    }

    // ---- GITLAB_TOKEN ----

    fn gitlab() -> String {
        ["gl", "pat-", "xYz12AbC34dEf56GhI78j"].concat()
    }

    #[test]
    fn gitlab_tokens_are_redacted() {
        assert_redacts(
            &format!(
                "curl --header 'PRIVATE-TOKEN: {}' https://gitlab.com/api/v4/projects",
                gitlab()
            ),
            &gitlab(),
            "GITLAB_TOKEN",
        );
        assert_eq!(
            out(&format!(
                "git clone https://oauth2:{}@gitlab.com/g/p.git",
                gitlab()
            )),
            "git clone https://oauth2:[REDACTED:GITLAB_TOKEN]@gitlab.com/g/p.git"
        );
        let dotted = format!("{}.01.abcdef123", gitlab());
        assert_eq!(out(&format!("t {dotted}.")), "t [REDACTED:GITLAB_TOKEN].");
    }

    #[test]
    fn gitlab_lookalikes_are_kept() {
        assert_kept("glpat-short and glpat- alone, xglpat-xYz12AbC34dEf56GhI78j is glued");
    }

    // ---- NPM_TOKEN ----

    fn npm() -> String {
        ["np", "m_", "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"].concat()
    }

    #[test]
    fn bare_npm_tokens_are_redacted() {
        assert_redacts(&format!("NPM_TOKEN: {}", npm()), &npm(), "NPM_TOKEN");
        assert_redacts(
            &format!("//registry.npmjs.org/:_authToken={}", npm()),
            &npm(),
            "NPM_TOKEN",
        );
        assert_eq!(
            out(&format!("use {} now", npm())),
            "use [REDACTED:NPM_TOKEN] now"
        );
    }

    #[test]
    fn npm_lookalikes_are_kept() {
        assert_kept("npm_config_cache and npm_package_name and npm_lifecycle_event");
        // 35 and 37 characters after the prefix are not npm tokens.
        assert_kept(&npm()[..npm().len() - 1]);
        assert_kept(&format!("{}x", npm()));
    }

    // ---- HUGGINGFACE_TOKEN ----

    fn huggingface() -> String {
        ["h", "f_", "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"].concat()
    }

    #[test]
    fn hugging_face_tokens_are_redacted() {
        assert_redacts(
            &format!("huggingface-cli login --token {}", huggingface()),
            &huggingface(),
            "HUGGINGFACE_TOKEN",
        );
        assert_eq!(
            out(&format!("HF_TOKEN={}", huggingface())),
            "HF_TOKEN=[REDACTED:HUGGINGFACE_TOKEN]"
        );
    }

    #[test]
    fn hugging_face_lookalikes_are_kept() {
        assert_kept("from huggingface_hub import hf_hub_download; hf_transfer");
        assert_kept("hf_transformersmodelcachedirectoryname is one lower-case word");
    }

    // ---- AZURE_KEY ----

    fn azure_key() -> String {
        [
            "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq",
            "/K1SZFPTOtr/KBHBeksoGMGw==",
        ]
        .concat()
    }

    #[test]
    fn azure_account_keys_are_redacted() {
        let conn = format!(
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={};EndpointSuffix=core.windows.net",
            azure_key()
        );
        assert_redacts(&conn, "Eby8vdM02xNOcqFl", "AZURE_KEY");
        assert_eq!(
            out(&conn),
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=[REDACTED:AZURE_KEY];EndpointSuffix=core.windows.net"
        );
        let bus = format!(
            "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={}",
            azure_key()
        );
        assert_redacts(&bus, "Eby8vdM02xNOcqFl", "AZURE_KEY");
    }

    #[test]
    fn azure_lookalikes_are_kept() {
        assert_kept("AccountKey= and AccountKey=short; AccountName=acct");
        assert_kept("SharedAccessKeyName=RootManageSharedAccessKey;");
    }

    // ---- AUTHORIZATION ----

    #[test]
    fn the_value_after_an_authorization_scheme_is_always_a_credential() {
        // Dots and no digits: neither reads as a literal to the generic rule.
        let google = ["ya29", ".a0AfH6SMBxyzQrStUvWxyzAb"].concat();
        let cases = [
            (
                format!("curl -H 'Authorization: Bearer {google}' https://x"),
                "curl -H 'Authorization: Bearer [REDACTED:AUTHORIZATION]' https://x".to_owned(),
            ),
            (
                "authorization: token abcdefghijklmnopqrst".to_owned(),
                "authorization: token [REDACTED:AUTHORIZATION]".to_owned(),
            ),
            (
                "Proxy-Authorization: Basic dXNlcjpwYXNz".to_owned(),
                "Proxy-Authorization: Basic [REDACTED:AUTHORIZATION]".to_owned(),
            ),
            (
                "AUTHORIZATION: BEARER abc.def.ghi".to_owned(),
                "AUTHORIZATION: BEARER [REDACTED:AUTHORIZATION]".to_owned(),
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(out(&input), expected, "{input}");
        }
        assert_redacts(
            &format!("curl -H 'Authorization: Bearer {google}' https://x"),
            "a0AfH6SMB",
            "AUTHORIZATION",
        );
    }

    #[test]
    fn authorization_stand_ins_are_kept() {
        for text in [
            "Authorization: Bearer <token>",
            "Authorization: Bearer ${API_TOKEN}",
            "Authorization: Bearer {token}",
            "Authorization: Basic auth is on",
            "headers[\"Authorization\"] = f\"Bearer {token}\"",
        ] {
            assert_kept(text);
        }
    }

    // ---- CLI_PASSWORD ----

    #[test]
    fn passwords_on_command_lines_are_redacted_whatever_they_look_like() {
        let cases = [
            (
                "mysql -h db -u root -pS3cr3t! app",
                "mysql -h db -u root -p[REDACTED:CLI_PASSWORD] app",
            ),
            (
                "mysqldump -uroot -p'my pass' app > dump.sql",
                "mysqldump -uroot -p'[REDACTED:CLI_PASSWORD]' app > dump.sql",
            ),
            (
                "mysql --password=hunter2 app",
                "mysql --password=[REDACTED:CLI_PASSWORD] app",
            ),
            (
                "docker login -u me -p hunter2 registry.example.com",
                "docker login -u me -p [REDACTED:CLI_PASSWORD] registry.example.com",
            ),
            (
                "podman login --username me --password pw42 quay.io",
                "podman login --username me --password [REDACTED:CLI_PASSWORD] quay.io",
            ),
            ("tool --passwd=abc", "tool --passwd=[REDACTED:CLI_PASSWORD]"),
            (
                "mysql \\\n  -u root \\\n  -pletmein db",
                "mysql \\\n  -u root \\\n  -p[REDACTED:CLI_PASSWORD] db",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(out(input), expected, "{input}");
        }
        for (text, secret) in [
            ("mysql -u root -phunter2 app", "hunter2"),
            ("mysql --password=hunter2 app", "hunter2"),
            ("docker login -p hunter2 reg", "hunter2"),
            ("mysqldump -p\"my pass\" app", "my pass"),
        ] {
            assert_redacts(text, secret, "CLI_PASSWORD");
        }
    }

    #[test]
    fn command_lines_without_passwords_are_kept() {
        for text in [
            "mkdir -p src/dir && cp -pr a b",
            "docker run -p 8080:80 nginx",
            "ssh -p 22 host; git log -p",
            "mysql -u root -p",
            "mysql -u root -p app",
            "mysql -P 3306 -u root",
            "mysql -u root -p$MYSQL_PWD app",
            "docker login -u me --password-stdin < token.txt",
            "docker login -u me -p \"$REGISTRY_PASSWORD\" reg",
            "tool --password $DB_PASS",
        ] {
            assert_kept(text);
        }
    }

    // ---- PRIVATE_KEY ----

    #[test]
    fn private_key_blocks_of_every_kind_are_redacted() {
        for kind in ["", "RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED "] {
            let text = format!("before\n{}\nafter", private_key(kind));
            assert_redacts(&text, "KEYBODYLINEONE", "PRIVATE_KEY");
            assert_eq!(out(&text), "before\n[REDACTED:PRIVATE_KEY]\nafter");
        }
        let pgp =
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF0\n-----END PGP PRIVATE KEY BLOCK-----";
        assert_eq!(out(pgp), "[REDACTED:PRIVATE_KEY]");
    }

    #[test]
    fn two_private_keys_are_two_redactions() {
        let text = format!("{} middle {}", private_key("RSA "), private_key("EC "));
        assert_eq!(
            out(&text),
            "[REDACTED:PRIVATE_KEY] middle [REDACTED:PRIVATE_KEY]"
        );
    }

    #[test]
    fn private_key_without_end_is_redacted_to_the_end() {
        let text =
            format!("cat id_rsa\n-----BEGIN OPENSSH PRIVATE KEY-----\n{KEY_BODY}\n(truncated)");
        assert_eq!(out(&text), "cat id_rsa\n[REDACTED:PRIVATE_KEY]");
        assert_redacts(&text, "KEYBODYLINEONE", "PRIVATE_KEY");
        // In JSON text it stops at the end of its own string; the rest survives.
        let doc = json!({"stdout": text, "stderr": "", "exit": 0}).to_string();
        let parsed: Value = serde_json::from_str(&out(&doc)).expect("JSON");
        assert_eq!(
            parsed,
            json!({"stdout": "cat id_rsa\n[REDACTED:PRIVATE_KEY]", "stderr": "", "exit": 0})
        );
    }

    #[test]
    fn private_key_in_json_text_has_escaped_newlines() {
        let doc = json!({"file": private_key("RSA "), "next": "kept"}).to_string();
        assert!(doc.contains("\\n"));
        assert_eq!(
            out(&doc),
            r#"{"file":"[REDACTED:PRIVATE_KEY]","next":"kept"}"#
        );
    }

    #[test]
    fn private_key_split_over_string_literals_is_redacted() {
        let code = format!(
            "KEY = (\"-----BEGIN RSA PRIVATE KEY-----\\n\"\n    \"{}\\n\" +\n    \"-----END RSA PRIVATE KEY-----\")\nprint(KEY)",
            "MIIEowIBAAKCAQEAKEYBODYLINEONE"
        );
        assert_eq!(out(&code), "KEY = (\"[REDACTED:PRIVATE_KEY]\")\nprint(KEY)");
        assert_redacts(&code, "KEYBODYLINEONE", "PRIVATE_KEY");
    }

    #[test]
    fn private_key_mentions_are_bounded_by_their_string() {
        let code = r#"if line.starts_with("-----BEGIN RSA PRIVATE KEY-----") { found = true; }"#;
        assert_eq!(
            out(code),
            r#"if line.starts_with("[REDACTED:PRIVATE_KEY]") { found = true; }"#
        );
    }

    #[test]
    fn public_keys_and_certificates_are_kept() {
        assert_kept("-----BEGIN PUBLIC KEY-----\nMIIBIjANBg\n-----END PUBLIC KEY-----");
        assert_kept("-----BEGIN CERTIFICATE-----\nMIIDdzCCAl\n-----END CERTIFICATE-----");
    }

    // ---- JWT ----

    #[test]
    fn jwts_are_redacted() {
        assert_redacts(
            &format!("Authorization: Bearer {}", jwt()),
            &jwt()[40..],
            "JWT",
        );
        assert_redacts(&format!("session={}; path=/", jwt()), &jwt()[40..], "JWT");
        assert_eq!(out(&format!("jwt {} ok", jwt())), "jwt [REDACTED:JWT] ok");
        // Under a secret-named key the precise label still wins.
        assert_eq!(
            out(&format!("token = \"{}\"", jwt())),
            "token = \"[REDACTED:JWT]\""
        );
    }

    #[test]
    fn jwt_lookalikes_are_kept() {
        assert_kept("iVBORw0KGgoAAAANSUhEUg.AAAAAQAAAAEIBgAAAB8.FcSJAAAADUlEQVR42mNk");
        assert_kept("eyJhbGciOiJIUzI1NiJ9.json and eyJ.a.b");
        assert_kept("v1.2.3 and www.example.com and a.b.c");
    }

    // ---- CONNECTION_STRING ----

    #[test]
    fn connection_strings_with_passwords_are_redacted() {
        for url in [
            "postgres://app:s3cretPass@db.internal:5432/app",
            "postgresql://app:s3cretPass@db.internal/app?sslmode=require",
            "mysql://root:s3cretPass@127.0.0.1:3306/shop",
            "mongodb://admin:s3cretPass@mongo1:27017,mongo2:27017/db",
            "mongodb+srv://admin:s3cretPass@cluster0.abcde.mongodb.net/db",
            "redis://:s3cretPass@cache:6379/0",
            "rediss://default:s3cretPass@cache:6380",
            "amqp://guest:s3cretPass@rabbit:5672/vhost",
            "amqps://guest:s3cretPass@rabbit:5671",
            "postgres://app:p@ss@word1@db/app",
        ] {
            assert_redacts(
                &format!("DATABASE_URL={url}"),
                "s3cretPass",
                "CONNECTION_STRING",
            );
            assert!(!out(url).contains("word1@db"), "{url}");
        }
        assert_eq!(
            out("psql postgres://app:s3cretPass@db.internal:5432/app -c 'select 1'"),
            "psql postgres://[REDACTED:CONNECTION_STRING]@db.internal:5432/app -c 'select 1'"
        );
    }

    #[test]
    fn connection_strings_without_passwords_are_kept() {
        assert_kept("postgres://localhost/db and postgres://app@localhost:5432/db");
        assert_kept("redis://localhost:6379/0 and mongodb://mongo1:27017,mongo2:27017/db");
        assert_kept("mysql://root:@localhost/db and https://medium.com/@someone");
        assert_kept("https://example.com:8443/path?q=a@b");
    }

    // ---- DISCORD_WEBHOOK ----

    #[test]
    fn discord_webhooks_are_redacted() {
        assert_redacts(
            &format!("curl -H 'Content-Type: application/json' {}", discord()),
            "MnOpQrStUvWx",
            "DISCORD_WEBHOOK",
        );
        let old = discord().replace("discord.com", "discordapp.com");
        assert_redacts(&format!("url: {old}"), "MnOpQrStUvWx", "DISCORD_WEBHOOK");
        assert_eq!(
            out(&format!("hook {} end", discord())),
            "hook [REDACTED:DISCORD_WEBHOOK] end"
        );
    }

    #[test]
    fn discord_lookalikes_are_kept() {
        assert_kept(
            "https://example.com/api/webhooks/123/abc and https://discord.com/api/webhooks and https://discord.com/developers",
        );
    }

    // ---- HARDCODED_CREDENTIAL ----

    #[test]
    fn hardcoded_assignments_keep_the_key_and_lose_the_value() {
        let cases = [
            (
                r#"api_key = "abcd1234efgh""#,
                r#"api_key = "[REDACTED:HARDCODED_CREDENTIAL]""#,
            ),
            (
                r#"API_KEY="abcd1234efgh""#,
                r#"API_KEY="[REDACTED:HARDCODED_CREDENTIAL]""#,
            ),
            (
                "password: 'hunter2hunter2'",
                "password: '[REDACTED:HARDCODED_CREDENTIAL]'",
            ),
            (
                r#""secret": "abcdefghij""#,
                r#""secret": "[REDACTED:HARDCODED_CREDENTIAL]""#,
            ),
            (
                "client_secret=abcdefgh12",
                "client_secret=[REDACTED:HARDCODED_CREDENTIAL]",
            ),
            (
                "export AWS_SECRET=supersecretvalue",
                "export AWS_SECRET=[REDACTED:HARDCODED_CREDENTIAL]",
            ),
            (
                r#"token = "abcdefgh""#,
                r#"token = "[REDACTED:HARDCODED_CREDENTIAL]""#,
            ),
            (
                "DB_PASSWORD=supersecret\nDB_USER=app",
                "DB_PASSWORD=[REDACTED:HARDCODED_CREDENTIAL]\nDB_USER=app",
            ),
            (
                "password: hunter2hunter2",
                "password: [REDACTED:HARDCODED_CREDENTIAL]",
            ),
            (
                "const dbPassword = 'correcthorse';",
                "const dbPassword = '[REDACTED:HARDCODED_CREDENTIAL]';",
            ),
            (
                "'db_password' => 'abcdefgh1',",
                "'db_password' => '[REDACTED:HARDCODED_CREDENTIAL]',",
            ),
            (
                "$config['db_password'] = 'abcdefgh1';",
                "$config['db_password'] = '[REDACTED:HARDCODED_CREDENTIAL]';",
            ),
            (
                "os.environ[\"API_KEY\"] = \"abcdefgh1\"",
                "os.environ[\"API_KEY\"] = \"[REDACTED:HARDCODED_CREDENTIAL]\"",
            ),
            (
                "secretKey := \"abcdefgh1\"",
                "secretKey := \"[REDACTED:HARDCODED_CREDENTIAL]\"",
            ),
            (
                "curl 'https://x.io/cb?client_secret=abcdefgh123&code=1'",
                "curl 'https://x.io/cb?client_secret=[REDACTED:HARDCODED_CREDENTIAL]&code=1'",
            ),
            (
                "PGPASSWORD=mypassword psql -h db",
                "PGPASSWORD=[REDACTED:HARDCODED_CREDENTIAL] psql -h db",
            ),
            (
                "Server=db;Password=supersecret;",
                "Server=db;Password=[REDACTED:HARDCODED_CREDENTIAL];",
            ),
            (
                "docker login --password hunter2hunter2 reg",
                "docker login --password [REDACTED:HARDCODED_CREDENTIAL] reg",
            ),
            (
                "mytool --api-key=abcdefgh12",
                "mytool --api-key=[REDACTED:HARDCODED_CREDENTIAL]",
            ),
            (
                "-H 'Authorization: Bearer abc123def456ghi'",
                "-H 'Authorization: Bearer [REDACTED:HARDCODED_CREDENTIAL]'",
            ),
            (
                r#"{"Authorization": "Basic dXNlcjpwYXNz"}"#,
                r#"{"Authorization": "Basic [REDACTED:HARDCODED_CREDENTIAL]"}"#,
            ),
            (
                "//registry.npmjs.org/:_authToken=abcdef123456",
                "//registry.npmjs.org/:_authToken=[REDACTED:HARDCODED_CREDENTIAL]",
            ),
            (
                r#"password = "pa\"ss\\word99""#,
                r#"password = "[REDACTED:HARDCODED_CREDENTIAL]""#,
            ),
            ("passwd=12345678", "passwd=[REDACTED:HARDCODED_CREDENTIAL]"),
        ];
        for (input, expected) in cases {
            assert_eq!(out(input), expected, "{input}");
        }
    }

    #[test]
    fn hardcoded_assignments_survive_json_text() {
        for text in [
            r#"api_key = "abcd1234efgh""#,
            "password: 'abcd1234efgh'",
            "export API_KEY=abcd1234efgh",
            r#"export API_KEY="abcd1234efgh""#,
            r#"{"secret": "abcd1234efgh"}"#,
            "DB_PASSWORD=abcd1234efgh\nNEXT=1",
            "docker login --password abcd1234efgh",
            r#"password = "a\"bcd1234efgh""#,
        ] {
            assert_redacts(text, "1234efgh", HARDCODED_CREDENTIAL);
        }
        let doc = r#"{"cmd":"export API_KEY=\"abcd1234efgh\""}"#;
        let redacted = out(doc);
        assert_eq!(
            redacted,
            r#"{"cmd":"export API_KEY=\"[REDACTED:HARDCODED_CREDENTIAL]\""}"#
        );
        serde_json::from_str::<Value>(&redacted).expect("still JSON");
        // A JSON document whose own keys name secrets.
        let doc = r#"{"user":"app","password":"abcd1234efgh","api_key": "zyxw9876vuts"}"#;
        assert_eq!(
            out(doc),
            r#"{"user":"app","password":"[REDACTED:HARDCODED_CREDENTIAL]","api_key": "[REDACTED:HARDCODED_CREDENTIAL]"}"#
        );
    }

    #[test]
    fn code_and_prose_around_secret_names_are_kept() {
        for text in [
            "password_hash = compute()",
            "let password = compute_password(&user);",
            "password = compute()",
            "token_count = 12",
            "max_tokens: 4096",
            r#""max_tokens": 4096, "input_tokens": 12345678"#,
            "tokenizer = Tokenizer(\"gpt2-large\")",
            "pub password: String,",
            "token: Option<String>,",
            "secret: SecretString,",
            "pub const IFLA_INET6_TOKEN: _bindgen_ty_5 = _bindgen_ty_5::X;",
            "let token: Sha256Token = make();",
            "api_key = os.environ[\"OPENAI_API_KEY\"]",
            "const apiKey = process.env.API_KEY;",
            "token = self.token",
            "connect(user=user, password=password)",
            "f(password=password_value)",
            "token = \"short\"",
            "password: \"Password is required\"",
            "api_key = \"${OPENAI_API_KEY}\"",
            "token: ${{ secrets.GITHUB_TOKEN }}",
            "PASSWORD=$DB_PASSWORD",
            "GOOGLE_APPLICATION_CREDENTIALS=/etc/gcp/credentials.json",
            "if token == \"expected-value\" { }",
            "if (password === 'abcdefghijk') {}",
            "password: changeme",
            "The token: it expires after an hour.",
            "Password: required for login",
            "--password-stdin < file",
            "--token $GITHUB_TOKEN",
            "let secret = Config::SECRET_VALUE;",
            "\"token_type\": \"Bearer\"",
            "Authorization: Bearer tokens are used",
        ] {
            assert_kept(text);
        }
    }

    #[test]
    fn json_text_gaps_are_never_taken_for_values() {
        // `token=` ends one JSON string; what follows is structure, not a value.
        for doc in [
            r#"["token=", 1234567890123, "x"]"#,
            r#"{"a":"password:","b":"abcdefghijkl"}"#,
            r#"{"a":"secret=" , "b": "abcdefghijkl"}"#,
            r#"{"a":"token:","bbbbbbbbbbbb":1}"#,
            r#"{"password": 12345678901}"#,
            r#"{"token":1.5e123456,"secret":-2.5E-12345}"#,
        ] {
            assert_kept(doc);
        }
    }

    // ---- redact_json ----

    #[test]
    fn redact_json_redacts_strings_at_any_depth() {
        let mut value = json!({
            "tool_input": {"command": format!("export GH_TOKEN={}", github())},
            "list": [format!("key {}", aws_id()), 3, null, {"deep": [private_key("RSA ")]}],
            "n": 1,
        });
        redact_json(&mut value);
        assert_eq!(
            value,
            json!({
                "tool_input": {"command": "export GH_TOKEN=[REDACTED:GITHUB_TOKEN]"},
                "list": ["key [REDACTED:AWS_KEY]", 3, null, {"deep": ["[REDACTED:PRIVATE_KEY]"]}],
                "n": 1,
            })
        );
    }

    #[test]
    fn redact_json_replaces_values_of_secret_named_keys() {
        let mut value = json!({
            "api_key": "plainvalue", "APIKEY": "plainvalue", "Api-Key": "plainvalue",
            "secret": "plain value with spaces", "client_secret": "plainvalue",
            "password": "plainvalue", "passwd": "plainvalue", "token": "plainvalue",
            "access_token": "plainvalue", "refresh_token": "plainvalue",
            "auth_token": "plainvalue", "private_key": "plainvalue",
            "secret_key": "plainvalue", "access_key": "plainvalue",
            "credentials": "plainvalue", "Authorization": "Bearer plainvalue",
            "dbPassword": "plainvalue", "X-Api-Key": "plainvalue",
            "nested": {"GITHUB_TOKEN": "plainvalue"},
        });
        redact_json(&mut value);
        let map = value.as_object().expect("object");
        for (key, item) in map {
            let item = if key == "nested" {
                &item["GITHUB_TOKEN"]
            } else {
                item
            };
            assert_eq!(item, "[REDACTED:HARDCODED_CREDENTIAL]", "{key}");
        }
    }

    #[test]
    fn redact_json_keeps_precise_labels_and_non_secret_keys() {
        let mut value = json!({
            "token": jwt(),
            "api_key": anthropic(),
            "password": "short",
            "token_count": "abcdefghijkl",
            "max_tokens": 4096,
            "tokenizer": "cl100k_base_tokenizer",
            "password_hash": "$argon2id$v=19$m=65536",
            "secret": 12345678,
            "credentials": {"user": "app", "password": "abcdefghij"},
        });
        redact_json(&mut value);
        assert_eq!(
            value,
            json!({
                "token": "[REDACTED:JWT]",
                "api_key": "[REDACTED:ANTHROPIC_KEY]",
                "password": "short",
                "token_count": "abcdefghijkl",
                "max_tokens": 4096,
                "tokenizer": "cl100k_base_tokenizer",
                "password_hash": "$argon2id$v=19$m=65536",
                "secret": 12345678,
                "credentials": {"user": "app", "password": "[REDACTED:HARDCODED_CREDENTIAL]"},
            })
        );
    }

    #[test]
    fn redact_json_redacts_object_keys_and_keeps_every_value() {
        let other = ["ghp", "_", "6543210987abcdefghijABCDEFGHIJ123456"].concat();
        let mut value = json!({
            aws_id(): "x",
            "plain": {github(): "first", other.clone(): "second", "[REDACTED:GITHUB_TOKEN]": "kept"},
            "api_key": {"name": "not a secret itself"},
        });
        redact_json(&mut value);
        let text = value.to_string();
        assert!(
            !text.contains(&aws_id()) && !text.contains(&github()[4..]),
            "{text}"
        );
        assert!(!text.contains(&other[4..]), "{text}");
        assert_eq!(value["[REDACTED:AWS_KEY]"], "x");
        let plain = value["plain"].as_object().expect("object");
        let mut values: Vec<&str> = plain.values().filter_map(Value::as_str).collect();
        values.sort_unstable();
        assert_eq!(values, ["first", "kept", "second"], "no value lost: {text}");
        assert!(
            plain
                .keys()
                .all(|k| k.starts_with("[REDACTED:GITHUB_TOKEN]")),
            "{text}"
        );
        assert_eq!(value["api_key"]["name"], "not a secret itself");
        // A redacted key names no secret: a second pass changes nothing.
        let once = value.clone();
        redact_json(&mut value);
        assert_eq!(value, once);
    }

    #[test]
    fn secret_key_names() {
        for name in [
            "api_key",
            "apikey",
            "api-key",
            "API_KEY",
            "x-api-key",
            "secret",
            "client_secret",
            "clientSecret",
            "password",
            "DB_PASSWORD",
            "passwd",
            "token",
            "access_token",
            "refreshToken",
            "auth_token",
            "private_key",
            "secret_key",
            "access_key",
            "aws_secret_access_key",
            "SecretAccessKey",
            "credentials",
            "authorization",
            "Proxy-Authorization",
            "APIKey",
        ] {
            assert!(is_secret_key(name), "{name}");
        }
        for name in [
            "tokenizer",
            "max_tokens",
            "token_count",
            "input_tokens",
            "password_hash",
            "secretary",
            "key",
            "keys",
            "api_keys",
            "token_type",
            "auth",
            "passwordless",
            "",
        ] {
            assert!(!is_secret_key(name), "{name}");
        }
    }

    // ---- general ----

    #[test]
    fn redaction_is_idempotent() {
        let text = format!(
            "{} {} {} token=\"{}\" {} postgres://a:b12345678@h/d password: hunter2hunter2",
            aws_id(),
            anthropic(),
            private_key("EC "),
            jwt(),
            slack_webhook()
        );
        let once = out(&text);
        assert!(matches!(redact(&once), Cow::Borrowed(_)), "{once}");
        let newer = format!(
            "{} {} {} {} AccountKey={} Authorization: Bearer ya29.abcdefghij              mysql -pS3cret docker login -p 'pw one' x --password=abc",
            stripe("sk", "live"),
            gitlab(),
            npm(),
            huggingface(),
            azure_key()
        );
        let once = out(&newer);
        assert!(!once.contains("S3cret") && !once.contains("ya29"), "{once}");
        assert!(matches!(redact(&once), Cow::Borrowed(_)), "{once}");
        let mut value = json!({"password": "abcdefghij", "t": text});
        redact_json(&mut value);
        let once = value.clone();
        redact_json(&mut value);
        assert_eq!(value, once);
    }

    #[test]
    fn many_secrets_in_one_text_each_get_their_label() {
        let text = format!(
            "a {} b {} c {} d {} e {} f {} g {}",
            aws_id(),
            openai(),
            github(),
            slack(),
            google(),
            sendgrid(),
            discord()
        );
        assert_eq!(
            out(&text),
            "a [REDACTED:AWS_KEY] b [REDACTED:SK_KEY] c [REDACTED:GITHUB_TOKEN] d [REDACTED:SLACK_TOKEN] \
             e [REDACTED:GOOGLE_KEY] f [REDACTED:SENDGRID_KEY] g [REDACTED:DISCORD_WEBHOOK]"
        );
        assert!(contains_secret(&text));
    }

    #[test]
    fn non_ascii_text_around_secrets_is_kept() {
        let text = format!("clave → {} ✓ contraseña", aws_id());
        assert_eq!(out(&text), "clave → [REDACTED:AWS_KEY] ✓ contraseña");
    }
}
