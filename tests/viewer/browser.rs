//! The viewer in a real headless Chromium, as a person uses it: logging in with the
//! link `solaria ui` prints, browsing, searching, confirming a proposal (and the CLI
//! agreeing), an event and a summary appearing live across a daemon restart, pages
//! that read without JavaScript and in a narrow window, a quiet console; and what
//! a browser must be refused (no login, DNS rebinding, a hostile page).

use super::*;
use solaria_tests::browser::{Browser, Options};
use solaria_tests::daemon::{configure_port, serve_as_configured};
use solaria_tests::payloads::stop;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;

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
    let script = browser.script(
        "return document.documentElement.dataset.script || 'no';",
        json!([]),
    );
    assert_eq!(script, json!("ran"), "the viewer's script runs");
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
    let script = browser.script(
        "return document.documentElement.dataset.script || 'no';",
        json!([]),
    );
    assert_eq!(script, json!("no"), "this browser ran the viewer's script");
    let page = browser.text();
    assert!(page.contains("cargo test checkout::timeout"), "{page}");
    assert!(page.contains("Reload the page"), "{page}");
    browser.goto(&api.url("/ui/search?q=zeppelin"));
    assert!(browser.text().contains("zeppelin checkout test"));
    let errors = browser.console_errors();
    assert!(errors.is_empty(), "console errors: {errors:?}");
}
