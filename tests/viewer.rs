//! The viewer (`solaria ui`) through the real `solaria serve` and, for what a
//! person does with it, a real headless Chromium: logging in with the link `solaria
//! ui` prints, browsing projects, sessions and records, searching, confirming a
//! proposal (and the CLI agreeing), an event appearing live without a reload and
//! across a daemon restart, pages that read without JavaScript and in a narrow
//! window, a quiet console; and the refusals: no login, a foreign `Host` (DNS
//! rebinding), a change sent from another origin or without its form token.

use reqwest::StatusCode;
use reqwest::blocking::Client;
use serde_json::{Value, json};
use solaria_tests::browser::{Browser, Options};
use solaria_tests::daemon::{Serve, configure_port, serve, serve_as_configured};
use solaria_tests::edge::Edge;
use solaria_tests::payloads::{base, prompt, session_start, stop, tool};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;

const MACHINE: &str = "laptop";
const SESSION: &str = "viewer-1";
const PROMPT: &str = "why does the zeppelin checkout test time out on CI?";
const PROPOSAL: &str = "the CI runners have two cores, so parallel tests contend";

/// A machine whose memory holds a session (a prompt, a command that passed, one
/// that failed), a decision and a proposal waiting for a person.
fn edge_with_a_session() -> Edge {
    let edge = Edge::new(MACHINE);
    let p = edge.project.clone();
    edge.hook("session-start", session_start(SESSION, &p));
    edge.hook("user-prompt-submit", prompt(SESSION, &p, PROMPT));
    ran(&edge, "cargo test checkout::zeppelin");
    let mut failure = base("PostToolUseFailure", SESSION, &p);
    failure["tool_name"] = json!("Bash");
    failure["tool_input"] = json!({"command": "cargo test checkout::timeout"});
    failure["error"] = json!("Exit code 101\ntest checkout::timeout ... FAILED");
    edge.hook("post-tool-use-failure", &failure);
    let decision = edge.decide_no_orm();
    edge.ok(&[
        "commits",
        "log",
        COMMIT,
        "--message",
        "Keep the billing queries hand-written",
        "--decision",
        &decision,
    ]);
    edge.ok(&["remember", "--confidence", "0.6", PROPOSAL]);
    edge
}

/// The commit that implements the session's decision.
const COMMIT: &str = "9f1c2d3e4b5a69788796a5b4c3d2e1f0a9b8c7d6";

/// A command that passed, run in the test's session.
fn ran(edge: &Edge, command: &str) {
    edge.hook(
        "post-tool-use",
        tool(
            SESSION,
            &edge.project,
            "Bash",
            json!({"command": command}),
            json!({"stdout": "ok", "stderr": ""}),
        ),
    );
}

/// The login link `solaria ui` prints (it opens no browser without a desktop).
fn login_link(edge: &Edge) -> String {
    let out = edge.ok(&["ui", "--no-open"]);
    let link = out.trim().to_string();
    assert!(
        link.starts_with("http://127.0.0.1:") && link.contains("/ui/login?code="),
        "{out}"
    );
    link
}

/// The memories `solaria memories --unconfirmed` lists, by content.
fn unconfirmed(edge: &Edge) -> Vec<String> {
    contents(&edge.json(&edge.project, &["memories", "--unconfirmed", "--json"]))
}

fn contents(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|k| {
            k["body"]["content"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

/// A client that follows no redirect (a login answers one) and keeps no cookie.
fn client() -> Client {
    Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .expect("client")
}

/// Logs in with a fresh link; the `Cookie` header value that holds the session.
fn cookie_of(api: &Serve, edge: &Edge) -> String {
    let answer = client().get(login_link(edge)).send().expect("login");
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    let set = answer
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .expect("a cookie")
        .to_string();
    let pair = set.split(';').next().expect("name=value").to_string();
    assert!(
        pair.starts_with(&format!("solaria_ui_{}=", api.addr.port())),
        "{set}"
    );
    pair
}

/// The form token in a page's HTML.
fn form_token(html: &str) -> String {
    let at = html
        .find("name=\"form_token\" value=\"")
        .expect("a form token")
        + 25;
    html[at..].split('"').next().expect("its end").to_string()
}

/// The id of the first proposal, as the CLI lists it.
fn proposal_id(edge: &Edge) -> String {
    let list = edge.json(&edge.project, &["memories", "--unconfirmed", "--json"]);
    list[0]["id"].as_str().expect("an id").to_string()
}

#[test]
fn nothing_of_the_memory_is_shown_until_solaria_ui_logs_the_browser_in_once() {
    let edge = edge_with_a_session();
    // No daemon: `solaria ui` says what to start.
    let out = edge.run(&["ui", "--no-open"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("solaria serve"), "{err}");

    let api = serve(&edge);
    let http = client();
    for path in [
        "/ui/",
        "/ui/search?q=zeppelin",
        "/ui/knowledge?what=proposals",
        "/ui/live",
    ] {
        let answer = http.get(api.url(path)).send().expect("answers");
        assert_eq!(answer.status(), StatusCode::UNAUTHORIZED, "{path}");
        let page = answer.text().expect("page");
        assert!(page.contains("solaria ui"), "says how to log in: {page}");
        for secret in ["zeppelin", "two cores", "ORM"] {
            assert!(!page.contains(secret), "{path} shows {secret}: {page}");
        }
    }

    let link = login_link(&edge);
    let first = http.get(&link).send().expect("login");
    assert_eq!(first.status(), StatusCode::SEE_OTHER);
    assert_eq!(first.headers()["location"], "/ui/");
    let set = first.headers()["set-cookie"]
        .to_str()
        .expect("ascii")
        .to_string();
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/ui"] {
        assert!(set.contains(attribute), "{set}");
    }
    assert_eq!(
        first.headers()["referrer-policy"],
        "same-origin",
        "the code never leaks to another site"
    );
    let cookie = set.split(';').next().expect("pair").to_string();
    let again = http.get(&link).send().expect("answers");
    assert_eq!(again.status(), StatusCode::FORBIDDEN, "a code logs in once");
    assert!(again.headers().get("set-cookie").is_none());

    let page = http
        .get(api.url("/ui/search?q=zeppelin"))
        .header("cookie", &cookie)
        .send()
        .expect("search");
    assert_eq!(page.status(), StatusCode::OK);
    let csp = page.headers()["content-security-policy"]
        .to_str()
        .expect("ascii")
        .to_string();
    assert!(
        csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"),
        "{csp}"
    );
    assert!(page.text().expect("page").contains("zeppelin"));

    // A cookie altered by a byte, or made under another token, opens nothing.
    let (name, value) = cookie.split_once('=').expect("pair");
    let last = value.chars().last().expect("a value");
    let altered = format!(
        "{name}={}{}",
        &value[..value.len() - 1],
        if last == '0' { '1' } else { '0' }
    );
    let answer = http
        .get(api.url("/ui/"))
        .header("cookie", altered)
        .send()
        .expect("answers");
    assert_eq!(answer.status(), StatusCode::UNAUTHORIZED);

    // A foreign Host (a page of another site resolving its name to 127.0.0.1) is
    // refused before the cookie is even looked at.
    let answer = http
        .get(api.url("/ui/"))
        .header("host", format!("evil.test:{}", api.addr.port()))
        .header("cookie", &cookie)
        .send()
        .expect("answers");
    assert_eq!(answer.status(), StatusCode::MISDIRECTED_REQUEST);
    assert!(!answer.text().expect("body").contains("zeppelin"));
}

#[test]
fn a_change_needs_the_viewers_own_origin_and_its_sessions_form_token() {
    let edge = edge_with_a_session();
    let api = serve(&edge);
    let cookie = cookie_of(&api, &edge);
    let http = client();
    let page = http
        .get(api.url("/ui/knowledge?what=proposals"))
        .header("cookie", &cookie)
        .send()
        .expect("proposals")
        .text()
        .expect("page");
    let token = form_token(&page);
    let id = proposal_id(&edge);
    let confirm = api.url(&format!("/ui/confirm/{id}"));
    let own = format!("http://{}", api.addr);
    let other_session = {
        let html = http
            .get(api.url("/ui/"))
            .header("cookie", cookie_of(&api, &edge))
            .send()
            .expect("page")
            .text()
            .expect("page");
        form_token(&html)
    };
    let refused: [(&str, Option<&str>, Option<&str>, &str); 5] = [
        (
            "another site's origin",
            Some("http://evil.test"),
            None,
            &token,
        ),
        (
            "another port of this host",
            Some("http://127.0.0.1:1"),
            None,
            &token,
        ),
        ("no origin", None, None, &token),
        ("marked cross-site", Some(&own), Some("cross-site"), &token),
        ("another session's token", Some(&own), None, &other_session),
    ];
    for (why, origin, fetch_site, token) in refused {
        let mut request = http
            .post(&confirm)
            .header("cookie", &cookie)
            .form(&[("form_token", token)]);
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        if let Some(site) = fetch_site {
            request = request.header("sec-fetch-site", site);
        }
        let answer = request.send().expect("answers");
        assert_eq!(answer.status(), StatusCode::FORBIDDEN, "{why}");
        assert!(
            answer.text().expect("page").contains("nothing was changed"),
            "{why}"
        );
    }
    let answer = http
        .post(&confirm)
        .header("cookie", &cookie)
        .header("origin", &own)
        .form(&[("form_token", "")])
        .send()
        .expect("answers");
    assert_eq!(answer.status(), StatusCode::FORBIDDEN, "no token");
    let oversized = "x".repeat(100 * 1024);
    let answer = http
        .post(&confirm)
        .header("cookie", &cookie)
        .header("origin", &own)
        .form(&[
            ("form_token", token.as_str()),
            ("padding", oversized.as_str()),
        ])
        .send()
        .expect("answers");
    assert_eq!(answer.status(), StatusCode::FORBIDDEN, "an oversized form");
    assert!(
        answer
            .text()
            .expect("page")
            .contains("larger than the viewer takes")
    );
    assert_eq!(
        unconfirmed(&edge),
        vec![PROPOSAL.to_string()],
        "still waiting"
    );

    let answer = http
        .post(&confirm)
        .header("cookie", &cookie)
        .header("origin", &own)
        .form(&[("form_token", token.as_str())])
        .send()
        .expect("answers");
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    assert!(unconfirmed(&edge).is_empty());
}

/// Where the screenshots go: the tests' own temporary directory under `target/`,
/// kept after the run (its path is printed).
fn screenshots() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("viewer-screenshots");
    std::fs::create_dir_all(&dir).expect("screenshot dir");
    dir
}

/// The text of the element `css`.
fn text_of(browser: &Browser, css: &str) -> String {
    browser
        .script(
            "const e = document.querySelector(arguments[0]); return e ? e.innerText : '';",
            json!([css]),
        )
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn in_a_real_browser_a_person_browses_searches_and_confirms_what_the_summarizer_proposed() {
    let edge = edge_with_a_session();
    let api = serve(&edge);
    let Some(mut browser) = Browser::start(&Options::default()) else {
        return;
    };
    let shots = screenshots();

    // The link `solaria ui` prints logs in and leaves the code out of the address.
    browser.goto(&login_link(&edge));
    assert_eq!(browser.current_url(), api.url("/ui/"));
    assert_eq!(browser.title(), "Projects — SOLARIA Memory");
    let projects = browser.text();
    assert!(projects.contains("api (github.com/acme/api)"), "{projects}");
    assert!(projects.contains("3 events (1 failed)"), "{projects}");
    browser.screenshot(&shots.join("projects.png"));

    // A project's sessions, then the session: each event, the failure said in text.
    browser.follow(&browser.link_containing("api (github.com/acme/api)"));
    browser.follow(&browser.link_containing("why does the zeppelin"));
    let events = text_of(&browser, "ol.lines");
    assert!(events.contains("cargo test checkout::zeppelin"), "{events}");
    let failed = text_of(&browser, "li.failed");
    assert!(
        failed.contains("cargo test checkout::timeout") && failed.contains("[error]"),
        "a failure is said in words, not by colour alone: {failed}"
    );
    browser.screenshot(&shots.join("session.png"));

    // A narrow window scrolls down, never sideways.
    browser.window_size(380, 800);
    let overflow = browser.script(
        "return document.documentElement.scrollWidth - window.innerWidth;",
        json!([]),
    );
    assert!(
        overflow.as_i64().unwrap_or(1) <= 0,
        "sideways by {overflow}px"
    );
    browser.screenshot(&shots.join("session-narrow.png"));
    browser.window_size(1200, 900);

    // Search, as `solaria search`: the hit is cited and its citation opens it.
    browser.follow(&browser.link_containing("Search"));
    browser.type_into(&browser.find("#q"), "zeppelin checkout");
    browser.follow(&browser.find("form.search button"));
    browser.wait_until("the results", |b| !text_of(b, "pre.text").is_empty());
    let results = text_of(&browser, "pre.text");
    let cli = edge.ok(&["search", "zeppelin checkout"]);
    let cited = cli
        .lines()
        .find(|l| l.contains("zeppelin checkout test"))
        .and_then(|l| l.split_whitespace().next())
        .expect("the CLI cites the prompt")
        .to_string();
    assert!(
        results.contains(&cited),
        "the page cites what the CLI cites: {results}"
    );
    browser.screenshot(&shots.join("search.png"));
    browser.follow(&browser.link_containing(&cited));
    assert!(browser.text().contains(PROMPT), "the record in full");

    // Decisions, in full, with their rationale.
    browser.follow(&browser.link_containing("Decisions"));
    let decisions = browser.text();
    assert!(
        decisions.contains("implemented by [C#9f1c2d3]")
            && decisions.contains("Keep the billing queries hand-written"),
        "with the commit that implements it: {decisions}"
    );
    assert!(
        decisions.contains("window functions an ORM hides"),
        "{decisions}"
    );
    browser.screenshot(&shots.join("decisions.png"));

    // The proposal, confirmed by a person in the page, is what the CLI then reports.
    // Every page says one waits.
    assert!(
        text_of(&browser, "nav").contains("To confirm (1)"),
        "{}",
        text_of(&browser, "nav")
    );
    browser.follow(&browser.link_containing("To confirm"));
    assert!(browser.text().contains(PROPOSAL));
    browser.screenshot(&shots.join("to-confirm.png"));
    browser.follow(&browser.find("form[action^='/ui/confirm/'] button"));
    let confirmed = browser.text();
    assert!(confirmed.contains("Confirmed"), "{confirmed}");
    let nav = text_of(&browser, "nav");
    assert!(
        nav.contains("To confirm") && !nav.contains("To confirm ("),
        "none waits: {nav}"
    );
    assert!(unconfirmed(&edge).is_empty(), "no longer waiting");
    let memories = edge.json(&edge.project, &["memories", "--json"]);
    let kept = memories
        .as_array()
        .expect("list")
        .iter()
        .find(|m| m["body"]["content"] == PROPOSAL)
        .unwrap_or_else(|| panic!("the confirmed memory: {memories}"));
    assert!(
        kept["body"]["confidence"].as_f64().unwrap_or_default() >= 0.95,
        "at full confidence: {kept}"
    );
    let id = kept["id"].as_str().expect("id");
    assert!(
        browser.current_url().contains(id),
        "the page shows the confirmed version"
    );

    // Sync: this machine is not logged in, and the page says so as `solaria status` does.
    browser.follow(&browser.link_containing("Sync"));
    let status = edge.ok(&["status"]);
    let first = status.lines().next().expect("a line");
    assert!(browser.text().contains(first.trim()), "{first}");
    browser.screenshot(&shots.join("sync.png"));

    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:?}");
    eprintln!("viewer screenshots: {}", shots.display());
}

#[test]
fn an_event_captured_while_the_page_is_open_appears_without_a_reload_even_across_a_restart() {
    let edge = edge_with_a_session();
    let mut api = serve(&edge);
    let Some(mut browser) = Browser::start(&Options::default()) else {
        return;
    };
    browser.goto(&login_link(&edge));
    browser.follow(&browser.link_containing("api (github.com/acme/api)"));
    browser.follow(&browser.link_containing("why does the zeppelin"));
    browser.wait_until("the page follows the live feed", |b| {
        text_of(b, "[data-live-status]").starts_with("Live")
    });
    // Marks this very page: a reload would lose it.
    browser.script("window.stillTheSamePage = true;", json!([]));
    let p = edge.project.clone();
    ran(&edge, "cargo build --release");
    browser.wait_until("the captured event is on the page", |b| {
        text_of(b, "ol.lines").contains("cargo build --release")
    });
    // Another session's event stays off this session's page (it is on the project's).
    edge.hook(
        "user-prompt-submit",
        prompt("viewer-2", &p, "an unrelated question"),
    );

    // The daemon dies and comes back on the same port; the page reconnects and
    // goes on, logged in still.
    let port = api.addr.port();
    drop(api);
    configure_port(&edge, port);
    browser.wait_until("the page says it lost the daemon", |b| {
        text_of(b, "[data-live-status]").contains("paused")
    });
    api = serve_as_configured(&edge);
    assert_eq!(api.addr.port(), port);
    ran(&edge, "cargo clippy --all-targets");
    browser.wait_until("an event captured after the restart is on the page", |b| {
        text_of(b, "ol.lines").contains("cargo clippy --all-targets")
    });
    // The session ends: its summary appears on the page.
    assert!(
        text_of(&browser, "[data-summary] p").is_empty(),
        "no summary yet"
    );
    edge.hook("stop", stop(SESSION, &p));
    browser.wait_until("the summary is on the page", |b| {
        text_of(b, "[data-summary] p").contains("zeppelin checkout test")
    });
    let same = browser.script("return window.stillTheSamePage === true;", json!([]));
    assert_eq!(same, json!(true), "the page was never reloaded");
    let lines = text_of(&browser, "ol.lines");
    assert!(!lines.contains("an unrelated question"), "{lines}");
    assert_eq!(lines.matches("cargo build --release").count(), 1, "{lines}");

    // While the daemon was down the browser could not reach it; nothing else erred.
    let errors: Vec<String> = browser
        .console_errors()
        .into_iter()
        .filter(|e| !e.contains("/ui/live"))
        .collect();
    assert!(errors.is_empty(), "console errors: {errors:?}");
}

/// A page of another site on this machine (another port, or a name of its own):
/// its form, sent as soon as it loads, asks the viewer to confirm something. It
/// answers every request with that page until dropped.
struct HostilePage {
    port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    server: Option<std::thread::JoinHandle<()>>,
}

impl HostilePage {
    fn start(target: &str) -> HostilePage {
        use std::sync::atomic::Ordering;
        let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("addr").port();
        let html = format!(
            "<!doctype html><title>free prizes</title><form method=post action=\"{target}\">\
             <input name=form_token value=guessed></form><script>document.forms[0].submit()</script>"
        );
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = std::sync::Arc::clone(&stop);
        let server = std::thread::spawn(move || {
            while !stopped.load(Ordering::Relaxed) {
                let Ok((mut stream, _)) = listener.accept() else {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    continue;
                };
                // A browser also opens connections it sends nothing on: each is
                // answered apart, and given up soon.
                let html = html.clone();
                std::thread::spawn(move || {
                    let _ = stream.set_nonblocking(false);
                    let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(2)));
                    let mut buf = [0u8; 4096];
                    if stream.read(&mut buf).unwrap_or(0) == 0 {
                        return;
                    }
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\n\
                         connection: close\r\n\r\n{html}",
                        html.len()
                    );
                });
            }
        });
        HostilePage {
            port,
            stop,
            server: Some(server),
        }
    }
}

impl Drop for HostilePage {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(server) = self.server.take() {
            let _ = server.join();
        }
    }
}

#[test]
fn in_a_real_browser_no_login_a_foreign_host_and_a_hostile_page_get_nothing() {
    let edge = edge_with_a_session();
    let api = serve(&edge);
    let port = api.addr.port();
    let options = Options {
        loopback_names: vec!["evil.test".into()],
        ..Options::default()
    };
    let Some(browser) = Browser::start(&options) else {
        return;
    };
    // No login: the page says how to log in, and nothing else.
    browser.goto(&api.url("/ui/"));
    assert_eq!(browser.title(), "Log in to see the memory — SOLARIA Memory");
    assert!(!browser.text().contains("zeppelin"));

    browser.goto(&login_link(&edge));
    assert!(browser.text().contains("api (github.com/acme/api)"));
    // DNS rebinding: a name of another site resolved to 127.0.0.1 reaches the port,
    // and is refused for its Host.
    browser.goto(&format!("http://evil.test:{port}/ui/"));
    let page = browser.text();
    assert!(page.contains("wrong_host"), "{page}");
    assert!(!page.contains("zeppelin"), "{page}");

    // A page on another port of this host (the same site: the browser sends the
    // cookie) posts a confirmation: refused for its origin.
    let id = proposal_id(&edge);
    let target = api.url(&format!("/ui/confirm/{id}"));
    let hostile = HostilePage::start(&target);
    browser.goto(&format!("http://127.0.0.1:{}/", hostile.port));
    browser.wait_until("the hostile form was sent", |b| b.current_url() == target);
    assert!(
        browser.text().contains("nothing was changed"),
        "{}",
        browser.text()
    );
    // The same page under a name of its own (another site): no cookie goes with it.
    browser.goto(&format!("http://evil.test:{}/", hostile.port));
    browser.wait_until("the hostile form was sent", |b| b.current_url() == target);
    assert!(!browser.text().contains("zeppelin"));
    assert_eq!(
        unconfirmed(&edge),
        vec![PROPOSAL.to_string()],
        "nothing confirmed"
    );
}

#[test]
fn without_javascript_every_page_still_reads() {
    let edge = edge_with_a_session();
    let api = serve(&edge);
    let options = Options {
        no_javascript: true,
        ..Options::default()
    };
    let Some(mut browser) = Browser::start(&options) else {
        return;
    };
    browser.goto(&login_link(&edge));
    assert_eq!(browser.current_url(), api.url("/ui/"));
    browser.follow(&browser.link_containing("api (github.com/acme/api)"));
    browser.follow(&browser.link_containing("why does the zeppelin"));
    let page = browser.text();
    assert!(page.contains("cargo test checkout::timeout"), "{page}");
    assert!(page.contains("Reload the page"), "{page}");
    browser.goto(&api.url("/ui/search?q=zeppelin"));
    assert!(browser.text().contains("zeppelin checkout test"));
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:?}");
}

#[test]
fn the_viewer_says_what_an_agent_was_handed_and_which_prompt_recalled_it() {
    let edge = edge_with_a_session();
    let p = edge.project.clone();
    // A later session starts (its context holds the decision) and asks about it
    // (the prompt recalls it).
    edge.hook("session-start", session_start("viewer-2", &p));
    edge.hook(
        "user-prompt-submit",
        prompt(
            "viewer-2",
            &p,
            "should the billing tables use an ORM after all?",
        ),
    );
    let decision = edge.json(&p, &["decisions", "--json"])[0]["id"]
        .as_str()
        .expect("the decision's id")
        .to_string();
    let api = serve(&edge);
    let cookie = cookie_of(&api, &edge);
    let http = client();
    let get = |path: &str| {
        let answer = http
            .get(api.url(path))
            .header("cookie", &cookie)
            .send()
            .expect("page");
        assert_eq!(answer.status(), StatusCode::OK, "{path}");
        answer.text().expect("page")
    };
    let sessions = edge.strings("SELECT id FROM sessions WHERE agent_session_id = 'viewer-2'");
    let html = get(&format!("/ui/session/{}", sessions[0]));
    assert!(
        html.contains(&format!("/ui/record/{decision}")),
        "each record links: {html}"
    );
    let session = visible(&html);
    let handed = &session[session
        .find("What the agent was handed")
        .expect("the section")..];
    assert!(
        handed.contains("the context at the session's start"),
        "{handed}"
    );
    assert!(handed.contains("recalled for the prompt [O#"), "{handed}");
    assert!(handed.contains("No ORM for the billing tables"), "{handed}");

    // The decision's page says where it went: in the context, and recalled by the prompt.
    let record = visible(&get(&format!("/ui/record/{decision}")));
    let went = &record[record.find("Handed to agents").expect("the section")..];
    assert!(went.contains("in the context of [S#"), "{went}");
    assert!(went.contains("recalled for the prompt [O#"), "{went}");

    // Forgotten since: the session's page still says a record was handed, not what.
    edge.ok(&["forget", &decision]);
    let session = visible(&get(&format!("/ui/session/{}", sessions[0])));
    let handed = &session[session
        .find("What the agent was handed")
        .expect("the section")..];
    assert!(handed.contains("(no longer in the memory)"), "{handed}");
    assert!(
        !handed.contains("No ORM for the billing tables"),
        "{handed}"
    );
}

/// A page's text without its markup (entities for quotes read back).
fn visible(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&#39;", "'")
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_project_says_whether_the_team_shares_it() {
    use solaria_central::storage::Role;
    let (c, account) = solaria_tests::central::Central::tls_with_account().await;
    let ana_id = c.person(account, "ana@acme.dev", Role::Member).await;
    c.storage
        .share_projects(account, "github.com/acme/*", "test")
        .await
        .expect("share");
    let ana = Edge::new("ana-laptop");
    ana.enroll_as(&c, account, ana_id).await;
    ana.prompt("s-1", "tune the quokka cache eviction");
    let dotfiles = ana.root.path().join("dotfiles");
    std::fs::create_dir_all(&dotfiles).expect("dotfiles");
    ana.hook(
        "user-prompt-submit",
        prompt("s-2", &dotfiles, "a two-line shell prompt"),
    );
    ana.ok(&["sync"]);
    let status = ana.ok(&["status"]);
    assert!(status.contains("shared:     github.com/acme/*"), "{status}");

    let projects = tokio::task::spawn_blocking(move || {
        let api = serve(&ana);
        let cookie = cookie_of(&api, &ana);
        let page = client()
            .get(api.url("/ui/"))
            .header("cookie", cookie)
            .send()
            .expect("page")
            .text()
            .expect("page");
        // One list item per project.
        page.split("<li").map(visible).collect::<Vec<String>>()
    })
    .await
    .expect("the viewer answered");
    let line = |name: &str| {
        projects
            .iter()
            .find(|l| l.trim_start_matches('>').starts_with(name))
            .unwrap_or_else(|| panic!("no {name} in {projects:?}"))
            .clone()
    };
    assert!(
        line("api (github.com/acme/api)").contains("shared with the team"),
        "{projects:?}"
    );
    assert!(line("dotfiles (").contains("; personal"), "{projects:?}");
}

#[test]
fn bad_input_in_the_viewer_gets_a_clear_page_and_the_daemon_serves_on() {
    let edge = edge_with_a_session();
    let api = serve(&edge);
    let cookie = cookie_of(&api, &edge);
    let http = client();
    let get = |path: &str| {
        let answer = http
            .get(api.url(path))
            .header("cookie", &cookie)
            .send()
            .expect("answers");
        let status = answer.status();
        let kind = answer
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        (status, kind, visible(&answer.text().expect("page")))
    };
    let long = "zeppelin ".repeat(200);
    for (path, status, says) in [
        (
            "/ui/record/0192b2c3-0000-7000-8000-000000000001",
            StatusCode::NOT_FOUND,
            "no record with id",
        ),
        (
            "/ui/record/[D#not-an-id",
            StatusCode::NOT_FOUND,
            "no record with id",
        ),
        (
            "/ui/session/nothing-here",
            StatusCode::NOT_FOUND,
            "no record with id",
        ),
        (
            "/ui/project?key=github.com/nobody/nothing",
            StatusCode::NOT_FOUND,
            "no project named",
        ),
        (
            "/ui/knowledge?what=everything",
            StatusCode::BAD_REQUEST,
            "no list named",
        ),
        (
            "/ui/knowledge?what=memories&type=rumour",
            StatusCode::BAD_REQUEST,
            "`type`",
        ),
        ("/ui/no-such-page", StatusCode::NOT_FOUND, "No such page"),
    ] {
        let (got, kind, page) = get(path);
        assert_eq!(got, status, "{path}: {page}");
        assert!(kind.starts_with("text/html"), "{path}: {kind}");
        assert!(page.contains(says), "{path}: {page}");
    }
    // A search the CLI would refuse is refused in the page, with the form kept.
    for (query, says) in [
        ("/ui/search?q=zeppelin&limit=500".to_string(), "`limit`"),
        (
            "/ui/search?q=zeppelin&since=last+tuesday".to_string(),
            "`since`",
        ),
        (
            format!("/ui/search?q={}", long.replace(' ', "+")),
            "too long",
        ),
    ] {
        let (got, _, page) = get(&query);
        assert_eq!(got, StatusCode::OK, "{query}: {page}");
        assert!(page.contains(says), "{query}: {page}");
        assert!(
            page.contains("Words or a question"),
            "the form stays: {page}"
        );
    }
    // Markup a prompt carried is shown as text, never run.
    edge.prompt(
        "hostile",
        "<script>alert('x')</script><img src=x onerror=alert(1)>",
    );
    let html = http
        .get(api.url("/ui/search?q=alert"))
        .header("cookie", &cookie)
        .send()
        .expect("search")
        .text()
        .expect("page");
    assert!(!html.contains("<script>alert"), "{html}");
    assert!(!html.contains("<img"), "{html}");
    let (status, _, page) = get("/ui/");
    assert_eq!(status, StatusCode::OK, "the daemon serves on: {page}");

    // A session named by one of its later events still shows from its first.
    let failed = edge.strings("SELECT id FROM observations WHERE title LIKE '%checkout::timeout%'");
    let (status, _, page) = get(&format!("/ui/session/{}", failed[0]));
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains(PROMPT), "from its first event: {page}");
}

#[test]
fn a_long_session_reads_page_by_page_and_only_its_last_page_follows_it_live() {
    let edge = edge_with_a_session();
    // 2,100 more events in the session, written straight into the store (a hook
    // each would take minutes).
    edge.db()
        .execute_batch(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2100)
             INSERT INTO observations (id, session_id, machine_id, updated, deleted,
                 project_key, project_name, kind, tool_name, title, input, response, files,
                 metadata, tags, created_at)
             SELECT printf('%08x-0000-7000-8000-%012x', 7, i), session_id, machine_id,
                 updated + i, 0, project_key, project_name, kind, tool_name,
                 printf('generated step %04d', i), input, response, files, metadata, tags,
                 created_at + i
             FROM observations, n WHERE title LIKE '%checkout::zeppelin%'",
        )
        .expect("more events");
    let api = serve(&edge);
    let cookie = cookie_of(&api, &edge);
    let http = client();
    let get = |path: &str| {
        http.get(api.url(path))
            .header("cookie", &cookie)
            .send()
            .expect("page")
            .text()
            .expect("page")
    };
    let session = edge.strings(&format!(
        "SELECT id FROM sessions WHERE agent_session_id = '{SESSION}'"
    ));
    let first = get(&format!("/ui/session/{}", session[0]));
    assert!(first.contains(PROMPT), "from its first event");
    assert_eq!(
        first.matches("<li data-id=").count(),
        2000,
        "a page of events"
    );
    let later = format!("/ui/session/{}?from=2000", session[0]);
    assert!(first.contains(&later), "a link to the next page");
    assert!(
        !first.contains("data-live"),
        "only the last page follows the session"
    );
    let last = get(&later);
    assert_eq!(
        last.matches("<li data-id=").count(),
        2103 - 2000,
        "the rest"
    );
    assert!(last.contains("generated step 2100"));
    assert!(last.contains("2000 earlier event(s)"));
    assert!(last.contains("data-live"), "the last page follows it");
}
