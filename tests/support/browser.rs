//! A real headless browser for the viewer's tests: Debian's Chromium driven by its
//! chromedriver over the W3C WebDriver HTTP interface (deploy/browser.sh installs
//! both and names them in `SOLARIA_TEST_CHROMEDRIVER` / `SOLARIA_TEST_CHROMIUM`).
//! Only what the tests use: open a page, find elements, read and click them, run a
//! script, wait for a condition, take a screenshot, and collect what the page wrote
//! to its console.

use reqwest::blocking::Client;
use serde_json::{Value, json};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The key W3C WebDriver names an element reference by.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";
/// How long [`Browser::wait_until`] waits before failing the test.
const PATIENCE: Duration = Duration::from_secs(30);

/// How the browser is started.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Names the browser resolves to 127.0.0.1 (`evil.test`): a page of another
    /// site reaching the viewer's port through a name of its own (DNS rebinding).
    pub loopback_names: Vec<String>,
    /// Run no JavaScript (what the viewer shows without it).
    pub no_javascript: bool,
}

/// A headless Chromium session; its driver is stopped when dropped.
#[derive(Debug)]
pub struct Browser {
    driver: Child,
    http: Client,
    session: String,
    /// Console messages read so far (reading the log empties it).
    console: Vec<Value>,
}

/// A reference to an element of the current page.
#[derive(Debug, Clone)]
pub struct Element(String);

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.http.delete(self.url("")).send();
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// The driver and browser to use, or `None` (a skip, or a failure in CI).
fn binaries() -> Option<(PathBuf, PathBuf)> {
    let found = |var: &str, name: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .or_else(|| {
                ["/usr/bin", "/usr/local/bin"]
                    .iter()
                    .map(|d| Path::new(d).join(name))
                    .find(|p| p.exists())
            })
            .filter(|p| p.exists())
    };
    match (
        found("SOLARIA_TEST_CHROMEDRIVER", "chromedriver"),
        found("SOLARIA_TEST_CHROMIUM", "chromium"),
    ) {
        (Some(driver), Some(browser)) => Some((driver, browser)),
        _ => crate::require::skip(
            "Chromium and chromedriver are not installed",
            "run `bash deploy/browser.sh` (as root it installs Debian's chromium and chromium-driver)",
        ),
    }
}

impl Browser {
    /// A new headless browser, or `None` when none is installed (on a developer's
    /// machine; CI fails instead).
    pub fn start(options: &Options) -> Option<Browser> {
        let (driver_bin, browser_bin) = binaries()?;
        let http = Client::builder()
            .timeout(Duration::from_secs(120))
            .no_proxy()
            .build()
            .expect("client");
        let mut args = vec![
            "--headless=new".to_string(),
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-dev-shm-usage".into(),
            "--window-size=1200,900".into(),
            "--no-first-run".into(),
            "--disable-background-networking".into(),
        ];
        if !options.loopback_names.is_empty() {
            let rules: Vec<String> = options
                .loopback_names
                .iter()
                .map(|n| format!("MAP {n} 127.0.0.1"))
                .collect();
            args.push(format!("--host-resolver-rules={}", rules.join(",")));
        }
        let mut prefs = json!({});
        if options.no_javascript {
            prefs = json!({"profile.managed_default_content_settings.javascript": 2});
        }
        let capabilities = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": browser_bin,
                "args": args,
                "prefs": prefs,
            },
            "goog:loggingPrefs": {"browser": "ALL"},
        }}});
        // The driver cannot pick its own port and say which: take a free one, and
        // try again should another process take it first.
        let mut last_error = String::new();
        for _ in 0..3 {
            let port = TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free port")
                .port();
            let mut driver = Command::new(&driver_bin)
                .arg(format!("--port={port}"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("start chromedriver");
            let base = format!("http://127.0.0.1:{port}");
            let deadline = Instant::now() + Duration::from_secs(20);
            let ready = loop {
                let status = http.get(format!("{base}/status")).send();
                if status.is_ok_and(|r| r.status().is_success()) {
                    break true;
                }
                if Instant::now() > deadline || driver.try_wait().ok().flatten().is_some() {
                    break false;
                }
                std::thread::sleep(Duration::from_millis(50));
            };
            if ready {
                let answer: Value = http
                    .post(format!("{base}/session"))
                    .json(&capabilities)
                    .send()
                    .and_then(|r| r.json())
                    .expect("chromedriver answers a new session");
                if let Some(id) = answer["value"]["sessionId"].as_str() {
                    return Some(Browser {
                        driver,
                        http,
                        session: format!("{base}/session/{id}"),
                        console: Vec::new(),
                    });
                }
                last_error = answer.to_string();
            }
            let _ = driver.kill();
            let _ = driver.wait();
        }
        panic!("could not start a browser session: {last_error}");
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.session)
    }

    /// A WebDriver command; its `value`, failing the test on a WebDriver error.
    fn command(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Value {
        let mut request = self.http.request(method.clone(), self.url(path));
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer: Value = request
            .send()
            .and_then(|r| r.json())
            .unwrap_or_else(|e| panic!("WebDriver {method} {path}: {e}"));
        if let Some(error) = answer["value"]["error"].as_str() {
            panic!(
                "WebDriver {method} {path}: {error}: {}",
                answer["value"]["message"]
            );
        }
        answer["value"].clone()
    }

    /// Opens `url` and waits for it to load.
    pub fn goto(&self, url: &str) {
        self.command(reqwest::Method::POST, "/url", Some(json!({"url": url})));
    }

    /// The address of the page shown.
    pub fn current_url(&self) -> String {
        self.command(reqwest::Method::GET, "/url", None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The page's title.
    pub fn title(&self) -> String {
        self.command(reqwest::Method::GET, "/title", None)
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The text a person sees on the page.
    pub fn text(&self) -> String {
        self.script(
            "return document.body ? document.body.innerText : '';",
            json!([]),
        )
        .as_str()
        .unwrap_or_default()
        .to_string()
    }

    /// The elements matching a CSS selector.
    pub fn find_all(&self, css: &str) -> Vec<Element> {
        self.command(
            reqwest::Method::POST,
            "/elements",
            Some(json!({"using": "css selector", "value": css})),
        )
        .as_array()
        .map(|found| {
            found
                .iter()
                .filter_map(|e| e[ELEMENT].as_str().map(|id| Element(id.to_string())))
                .collect()
        })
        .unwrap_or_default()
    }

    /// The first element matching a CSS selector; fails the test with the page's
    /// text when there is none.
    pub fn find(&self, css: &str) -> Element {
        self.find_all(css).into_iter().next().unwrap_or_else(|| {
            panic!(
                "no element {css} on {}:\n{}",
                self.current_url(),
                self.text()
            )
        })
    }

    /// The link whose visible text contains `text`.
    pub fn link_containing(&self, text: &str) -> Element {
        let found = self.script(
            "return Array.from(document.querySelectorAll('a')).find(a => a.textContent.includes(arguments[0])) || null;",
            json!([text]),
        );
        match found[ELEMENT].as_str() {
            Some(id) => Element(id.to_string()),
            None => panic!(
                "no link with {text:?} on {}:\n{}",
                self.current_url(),
                self.text()
            ),
        }
    }

    /// Clicks `element` (and waits for a page it opens to load).
    pub fn click(&self, element: &Element) {
        self.command(
            reqwest::Method::POST,
            &format!("/element/{}/click", element.0),
            Some(json!({})),
        );
    }

    /// Clicks `element`, which opens another page (a link, a form's button), and
    /// waits until that page has loaded: a click may return before the browser has
    /// even left the page it was on.
    pub fn follow(&self, element: &Element) {
        self.script("window.solariaLeftBehind = true;", json!([]));
        self.click(element);
        self.wait_until("the next page", |b| {
            b.script(
                "return window.solariaLeftBehind !== true && document.readyState === 'complete';",
                json!([]),
            ) == json!(true)
        });
    }

    /// Types `text` into `element`.
    pub fn type_into(&self, element: &Element, text: &str) {
        self.command(
            reqwest::Method::POST,
            &format!("/element/{}/value", element.0),
            Some(json!({"text": text})),
        );
    }

    /// An attribute or property of `element`.
    pub fn attribute(&self, element: &Element, name: &str) -> Option<String> {
        self.command(
            reqwest::Method::GET,
            &format!("/element/{}/attribute/{name}", element.0),
            None,
        )
        .as_str()
        .map(str::to_string)
    }

    /// Runs `script` in the page with `args`; what it returns.
    pub fn script(&self, script: &str, args: Value) -> Value {
        self.command(
            reqwest::Method::POST,
            "/execute/sync",
            Some(json!({"script": script, "args": args})),
        )
    }

    /// Polls `ready` until it holds; fails the test, naming `what` and showing the
    /// page, when it does not within the patience of a slow machine.
    pub fn wait_until(&self, what: &str, mut ready: impl FnMut(&Browser) -> bool) {
        let deadline = Instant::now() + PATIENCE;
        while !ready(self) {
            assert!(
                Instant::now() < deadline,
                "{what}: not after {PATIENCE:?} on {}:\n{}",
                self.current_url(),
                self.text()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Resizes the window.
    pub fn window_size(&self, width: u32, height: u32) {
        self.command(
            reqwest::Method::POST,
            "/window/rect",
            Some(json!({"width": width, "height": height})),
        );
    }

    /// Writes a PNG of what the window shows to `path`.
    pub fn screenshot(&self, path: &Path) {
        use base64::Engine;
        let png = self.command(reqwest::Method::GET, "/screenshot", None);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(png.as_str().unwrap_or_default())
            .expect("a PNG in base64");
        std::fs::write(path, bytes).expect("write the screenshot");
    }

    /// Every console message of the pages so far (errors, warnings, logs), each
    /// `{level, message, source}`.
    pub fn console(&mut self) -> Vec<Value> {
        let read = self.command(
            reqwest::Method::POST,
            "/se/log",
            Some(json!({"type": "browser"})),
        );
        self.console
            .extend(read.as_array().cloned().unwrap_or_default());
        self.console.clone()
    }

    /// The console's errors so far (`SEVERE`), as text.
    pub fn console_errors(&mut self) -> Vec<String> {
        self.console()
            .iter()
            .filter(|m| m["level"] == "SEVERE")
            .map(|m| m["message"].as_str().unwrap_or_default().to_string())
            .collect()
    }
}
