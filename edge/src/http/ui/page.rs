//! The viewer's HTML: escaping, citations made links, and the frame every page
//! shares (head, navigation, the log-out form). What a record says comes from the
//! renderer as text; here it is only escaped and laid out, never reworded.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use solaria_shared::Citation;
use std::fmt::Write;

/// `text` safe inside an element or a quoted attribute.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `text` as a URL query or path component.
pub fn url_part(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// Where a record is shown.
pub fn record_href(id: &str) -> String {
    format!("/ui/record/{}", url_part(id))
}

/// `html` (escaped text) with the words a snippet marks (`**renew_jwt**`,
/// `solaria_shared::render::snippet`) highlighted as `<mark>`; a line whose marks
/// do not pair is left as it is.
pub fn marked(html: &str) -> String {
    html.split('\n')
        .map(|line| {
            let parts: Vec<&str> = line.split("**").collect();
            if parts.len() < 3 || parts.len().is_multiple_of(2) {
                return line.to_string();
            }
            let mut out = String::with_capacity(line.len() + 16);
            for (i, part) in parts.iter().enumerate() {
                if i > 0 {
                    out.push_str(if i % 2 == 1 { "<mark>" } else { "</mark>" });
                }
                out.push_str(part);
            }
            out
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Renderer text, escaped, each citation (`[D#…]`, `[O#…]`) a link to its record.
pub fn linked(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let (before, from) = rest.split_at(open);
        out.push_str(&esc(before));
        let cited = from
            .find(']')
            .map(|close| &from[..=close])
            .filter(|c| c.len() <= 80)
            .and_then(|c| c.parse::<Citation>().ok().map(|cite| (c, cite)));
        match cited {
            Some((written, cite)) => {
                let _ = write!(
                    out,
                    "<a href=\"{}\">{}</a>",
                    esc(&record_href(&cite.id)),
                    esc(written)
                );
                rest = &from[written.len()..];
            }
            None => {
                out.push('[');
                rest = &from[1..];
            }
        }
    }
    out.push_str(&esc(rest));
    out
}

/// One line of the renderer as a list item linking to `id`; `failed` also marks
/// it for the eye (the text says `[error]` already).
pub fn line_item(id: &str, line: &str, failed: bool) -> String {
    format!(
        "<li data-id=\"{}\"{}><a href=\"{}\">{}</a></li>",
        esc(id),
        if failed { " class=\"failed\"" } else { "" },
        esc(&record_href(id)),
        esc(line)
    )
}

/// The sections of the navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Projects,
    Search,
    Decisions,
    Memories,
    Questions,
    Proposals,
    Review,
    Sync,
    None,
}

const SECTIONS: [(Section, &str, &str); 8] = [
    (Section::Projects, "/ui/", "Projects"),
    (Section::Search, "/ui/search", "Search"),
    (
        Section::Decisions,
        "/ui/knowledge?what=decisions",
        "Decisions",
    ),
    (Section::Memories, "/ui/knowledge?what=memories", "Memories"),
    (
        Section::Questions,
        "/ui/knowledge?what=questions",
        "Questions",
    ),
    (
        Section::Proposals,
        "/ui/knowledge?what=proposals",
        "To confirm",
    ),
    (Section::Review, "/ui/review", "To review"),
    (Section::Sync, "/ui/sync", "Sync"),
];

/// What the frame of a logged-in page shows: the session's form token (for the
/// log-out form) and how many proposals wait for a person (beside "To confirm")
/// and how much there is to review.
#[derive(Debug, Clone)]
pub struct Frame {
    pub form_token: String,
    pub waiting: usize,
    /// Records whose code changed and pairs to settle (beside "To review").
    pub to_review: usize,
}

/// A whole page: its title, its section, its frame (`None` on the pages shown
/// before login, which have no navigation) and its body.
#[derive(Debug)]
pub struct Page<'a> {
    pub title: &'a str,
    pub section: Section,
    pub frame: Option<&'a Frame>,
    pub body: String,
}

impl Page<'_> {
    fn html(&self) -> String {
        let mut nav = String::new();
        if let Some(frame) = self.frame {
            nav.push_str("<nav aria-label=\"Sections\"><ul>");
            for (section, href, label) in SECTIONS {
                let current = if section == self.section {
                    " aria-current=\"page\""
                } else {
                    ""
                };
                let waiting = match section {
                    Section::Proposals if frame.waiting > 0 => format!(" ({})", frame.waiting),
                    Section::Review if frame.to_review > 0 => format!(" ({})", frame.to_review),
                    _ => String::new(),
                };
                let _ = write!(
                    nav,
                    "<li><a href=\"{}\"{current}>{label}{waiting}</a></li>",
                    esc(href)
                );
            }
            let _ = write!(
                nav,
                "</ul></nav><form class=\"logout\" method=\"post\" action=\"/ui/logout\">{}\
                 <button type=\"submit\">Log out</button></form>",
                hidden_token(&frame.form_token)
            );
        }
        format!(
            "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>{title} — SOLARIA Memory</title>\
             <link rel=\"icon\" href=\"/ui/favicon.svg\" type=\"image/svg+xml\">\
             <link rel=\"stylesheet\" href=\"/ui/assets/viewer.css\">\
             <script src=\"/ui/assets/viewer.js\" defer></script></head>\
             <body><header><a class=\"brand\" href=\"/ui/\">SOLARIA Memory</a>{nav}</header>\
             <main><h1>{title}</h1>{body}</main></body></html>\n",
            title = esc(self.title),
            body = self.body,
        )
    }

    /// The page, answered with `status`.
    pub fn with_status(self, status: StatusCode) -> Response {
        (status, Html(self.html())).into_response()
    }
}

impl IntoResponse for Page<'_> {
    fn into_response(self) -> Response {
        self.with_status(StatusCode::OK)
    }
}

/// The hidden field every form that changes something carries.
pub fn hidden_token(form_token: &str) -> String {
    format!(
        "<input type=\"hidden\" name=\"form_token\" value=\"{}\">",
        esc(form_token)
    )
}

/// A one-button form posting to `action` (its token included).
pub fn button_form(action: &str, form_token: &str, label: &str, extra: &str) -> String {
    format!(
        "<form class=\"inline\" method=\"post\" action=\"{}\">{}{extra}\
         <button type=\"submit\">{}</button></form>",
        esc(action),
        hidden_token(form_token),
        esc(label)
    )
}

/// A paragraph of notice (an outcome, an error), announced to screen readers.
pub fn notice(kind: &str, text: &str) -> String {
    format!(
        "<p class=\"notice {}\" role=\"status\">{}</p>",
        esc(kind),
        linked(text)
    )
}

/// Headers on every answer of the viewer: nothing from elsewhere runs or frames
/// it, no URL (a login code) leaks through `Referer` to another site, nothing is
/// cached. (`same-origin`, not `no-referrer`: under the latter a browser sends the
/// viewer's own forms with `Origin: null`, which the origin check must refuse.)
pub fn harden(response: &mut Response) {
    let headers = response.headers_mut();
    for (name, value) in [
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
             connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::REFERRER_POLICY, "same-origin"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::CACHE_CONTROL, "no-store"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_data_is_shown_never_run() {
        assert_eq!(
            esc("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        let id = "0192b2c3-0000-7000-8000-000000000001";
        let text = format!("[D#{id}] chose <b>sqlx</b> [not a cite] [O#x\"><script>]");
        let html = linked(&text);
        assert!(
            html.starts_with(&format!(
                "<a href=\"/ui/record/{id}\">[D#{id}]</a> chose &lt;b&gt;"
            )),
            "{html}"
        );
        assert!(html.contains("[not a cite]"), "{html}");
        assert!(!html.contains("<script>"), "{html}");
        assert!(!html.contains("<b>"), "{html}");
    }

    #[test]
    fn url_parts_carry_any_text() {
        assert_eq!(url_part("github.com/acme/api"), "github.com%2Facme%2Fapi");
        assert_eq!(url_part("a b&c=d\""), "a%20b%26c%3Dd%22");
    }
}
