//! The viewer (`solaria ui`) through the real `solaria serve`: what a page shows
//! and refuses, read as HTML over loopback (the login and its cookie, the origin and
//! form-token checks, what an agent was handed, shared or personal projects, bad
//! input, a long session). `browser.rs`: the same in a real headless Chromium, as a
//! person uses it.

use reqwest::StatusCode;
use reqwest::blocking::Client;
use serde_json::{Value, json};
mod browser;

use solaria_tests::daemon::{Serve, serve};
use solaria_tests::edge::Edge;
use solaria_tests::payloads::{base, prompt, session_start, tool};

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

/// The daemon and a client logged into its viewer, without a browser: what the
/// tests that read pages as HTML use.
struct LoggedIn {
    api: Serve,
    cookie: String,
    http: Client,
}

impl LoggedIn {
    /// `solaria serve` on `edge`, logged in with a link `solaria ui` printed.
    fn serve(edge: &Edge) -> LoggedIn {
        let api = serve(edge);
        let cookie = cookie_of(&api, edge);
        LoggedIn {
            api,
            cookie,
            http: client(),
        }
    }

    /// `GET path` with the session cookie.
    fn get(&self, path: &str) -> reqwest::blocking::Response {
        self.http
            .get(self.api.url(path))
            .header("cookie", &self.cookie)
            .send()
            .expect("the viewer answers")
    }

    /// A page that must answer 200: its HTML.
    fn page(&self, path: &str) -> String {
        let answer = self.get(path);
        assert_eq!(answer.status(), StatusCode::OK, "{path}");
        answer.text().expect("page")
    }
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
    let page = page.text().expect("page");
    assert!(
        page.contains("<mark>zeppelin</mark>"),
        "each hit's snippet marks the words: {page}"
    );

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
    let viewer = LoggedIn::serve(&edge);
    let (api, cookie, http) = (&viewer.api, viewer.cookie.as_str(), &viewer.http);
    let token = form_token(&viewer.page("/ui/knowledge?what=proposals"));
    let id = proposal_id(&edge);
    let confirm = api.url(&format!("/ui/confirm/{id}"));
    let own = format!("http://{}", api.addr);
    // Another browser's session, on the same daemon.
    let other_session = {
        let html = http
            .get(api.url("/ui/"))
            .header("cookie", cookie_of(api, &edge))
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
            .header("cookie", cookie)
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
        .header("cookie", cookie)
        .header("origin", &own)
        .form(&[("form_token", "")])
        .send()
        .expect("answers");
    assert_eq!(answer.status(), StatusCode::FORBIDDEN, "no token");
    let oversized = "x".repeat(100 * 1024);
    let answer = http
        .post(&confirm)
        .header("cookie", cookie)
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
        .header("cookie", cookie)
        .header("origin", &own)
        .form(&[("form_token", token.as_str())])
        .send()
        .expect("answers");
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    assert!(unconfirmed(&edge).is_empty());
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
    let viewer = LoggedIn::serve(&edge);
    let get = |path: &str| viewer.page(path);
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
        let page = LoggedIn::serve(&ana).page("/ui/");
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
    let viewer = LoggedIn::serve(&edge);
    let get = |path: &str| {
        let answer = viewer.get(path);
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
    let html = viewer.page("/ui/search?q=alert");
    assert!(
        html.contains("‹script›alert("),
        "the prompt is found, as text: {html}"
    );
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
    let viewer = LoggedIn::serve(&edge);
    let get = |path: &str| viewer.page(path);
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

#[test]
fn rotating_the_api_token_logs_every_browser_out() {
    let edge = edge_with_a_session();
    let viewer = LoggedIn::serve(&edge);
    viewer.page("/ui/");
    // The token deleted and the daemon started again on the same port: the old
    // cookie, signed under the old token, opens nothing.
    let LoggedIn { api, cookie, http } = viewer;
    let port = api.addr.port();
    drop(api);
    std::fs::remove_file(edge.data().join("api-token")).expect("remove the token");
    solaria_tests::daemon::configure_port(&edge, port);
    let api = solaria_tests::daemon::serve_as_configured(&edge);
    let answer = http
        .get(api.url("/ui/"))
        .header("cookie", &cookie)
        .send()
        .expect("answers");
    assert_eq!(answer.status(), StatusCode::UNAUTHORIZED);
    assert!(!answer.text().expect("page").contains("zeppelin"));
    // A new link logs in again.
    assert_eq!(
        client()
            .get(login_link(&edge))
            .send()
            .expect("login")
            .status(),
        StatusCode::SEE_OTHER
    );
}

/// The viewer's "To review" list: a pair a write proposed waits there (counted in
/// the navigation) with the three choices; a choice it does not know changes
/// nothing, and "New one replaces the old" settles it as `solaria supersede OLD
/// --by NEW` does.
#[test]
fn a_close_pair_waits_in_to_review_until_a_person_chooses_in_the_viewer() {
    let edge = Edge::new(MACHINE);
    let decide = |title: &str, chosen: &str, set_aside: &str| -> String {
        let out = edge.json(
            &edge.project,
            &[
                "decide",
                "--json",
                "--title",
                title,
                "--chosen",
                chosen,
                "-a",
                set_aside,
                "-r",
                "as measured",
            ],
        );
        out["record"]["id"].as_str().expect("id").to_string()
    };
    let old = decide(
        "Store sessions in Redis",
        "Redis with a 24h TTL",
        "PostgreSQL",
    );
    let new = decide(
        "Store sessions in PostgreSQL",
        "A sessions table in PostgreSQL",
        "Redis",
    );
    let viewer = LoggedIn::serve(&edge);
    let (api, cookie, http) = (&viewer.api, viewer.cookie.as_str(), &viewer.http);
    let html = viewer.page("/ui/review");
    let shown = visible(&html);
    assert!(shown.contains("To review (1)"), "{shown}");
    assert!(shown.contains("Close pairs (1)"), "{shown}");
    assert!(shown.contains("Store sessions in Redis"), "{shown}");
    for choice in ["New one replaces the old", "Keep both", "Link as related"] {
        assert!(html.contains(choice), "{choice}");
    }
    let token = form_token(&html);
    let own = format!("http://{}", api.addr);
    let post = |choice: &str| {
        http.post(api.url("/ui/pair"))
            .header("cookie", cookie)
            .header("origin", &own)
            .form(&[
                ("form_token", token.as_str()),
                ("record", new.as_str()),
                ("standing", old.as_str()),
                ("choice", choice),
            ])
            .send()
            .expect("answers")
    };
    let answer = post("delete-both");
    assert_eq!(answer.status(), StatusCode::BAD_REQUEST);
    assert!(visible(&answer.text().expect("page")).contains("no choice named"));
    assert!(visible(&viewer.page("/ui/review")).contains("Close pairs (1)"));

    let answer = post("supersede");
    assert_eq!(answer.status(), StatusCode::SEE_OTHER);
    let after = visible(&viewer.page("/ui/review?done=superseded"));
    assert!(after.contains("marked superseded"), "{after}");
    assert!(!after.contains("Close pairs"), "{after}");
    assert!(!after.contains("To review ("), "{after}");
    assert_eq!(edge.standing_decisions(&edge.project), vec![new]);
}
