//! A real central service for tests: a fresh database on the run's throwaway
//! PostgreSQL cluster, migrated, served on 127.0.0.1:0 (plain HTTP or TLS with
//! certificates made by rcgen), stopped when the handle drops.

use crate::pg::fresh_database;
use solaria_central::api;
use solaria_central::config::Settings;
use solaria_central::secret::Secret;
use solaria_central::server::{LaunchError, Listeners, launch_with_listener};
use solaria_central::storage::{AccountId, PersonId, Role, Storage};
use solaria_shared::wire::{
    ChangesPage, EnrollResponse, RecordOutcome, SyncResponse, TokenResponse, WireRecord,
};

/// The signing key tests' servers use.
pub const JWT_SECRET: &str = "test-signing-key-0123456789abcdef-0123456789";

/// A running central service.
#[derive(Debug)]
pub struct Central {
    pub url: String,
    pub storage: Storage,
    pub client: reqwest::Client,
    /// The CA certificate (PEM) the server's certificate is signed by, with TLS.
    pub ca_pem: Option<String>,
    /// `http://127.0.0.1:PORT` of the metrics listener, with `Options::metrics_listen`.
    pub metrics_url: Option<String>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<Result<(), LaunchError>>>,
    /// The TLS certificate and key files, with `Options::tls`.
    _tls_dir: Option<tempfile::TempDir>,
}

/// Options for [`Central::start_with`].
#[derive(Debug, Clone)]
pub struct Options {
    pub tls: bool,
    pub rate_limit_per_sec: u32,
    pub max_body_bytes: usize,
    pub jwt_ttl_secs: u64,
    /// Also serve Prometheus metrics on a separate listener (see `Central::metrics_url`).
    pub metrics_listen: bool,
    pub request_timeout_secs: u64,
    /// High by default: tests enroll many machines from one address.
    pub auth_rate_limit_per_min: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            tls: false,
            rate_limit_per_sec: 100,
            max_body_bytes: 8 * 1024 * 1024,
            jwt_ttl_secs: 900,
            metrics_listen: false,
            request_timeout_secs: 30,
            auth_rate_limit_per_min: 100_000,
        }
    }
}

impl Options {
    /// What a bench serves with: TLS as in production, no rate limit in the way,
    /// room for large pushes.
    pub fn bench() -> Options {
        Options {
            tls: true,
            rate_limit_per_sec: 100_000,
            max_body_bytes: 64 * 1024 * 1024,
            // A bench outlives the 15-minute default (a 1M index build alone).
            jwt_ttl_secs: 24 * 3600,
            ..Options::default()
        }
    }
}

/// The settings of a test server: the test's signing key and limits, listening on
/// loopback.
pub fn settings(options: &Options) -> Settings {
    Settings {
        database_url: Secret::new("postgres://unused"),
        pooled_database_url: None,
        read_database_url: None,
        read_max_lag_ms: 1000,
        listen: "127.0.0.1:0".parse().expect("addr"),
        metrics_listen: None,
        tls_cert: None,
        tls_key: None,
        jwt_secret: Secret::new(JWT_SECRET),
        jwt_ttl_secs: options.jwt_ttl_secs,
        rate_limit_per_sec: options.rate_limit_per_sec,
        max_body_bytes: options.max_body_bytes,
        request_timeout_secs: options.request_timeout_secs,
        auth_rate_limit_per_min: options.auth_rate_limit_per_min,
        max_db_connections: 30,
        mcp_allowed_hosts: solaria_central::config::default_mcp_hosts(),
        vector_models: test_vector_models(),
    }
}

/// The made-up models the tests push vectors of (their dimension in the name).
pub const TEST_VECTOR_MODELS: [&str; 3] =
    ["test-model/8d", "test-model/8d/abc", "bench-model/384d"];

/// What a test server keeps vectors of: the shipped models and [`TEST_VECTOR_MODELS`].
pub fn test_vector_models() -> Vec<String> {
    let mut models = solaria_central::config::default_vector_models();
    models.extend(TEST_VECTOR_MODELS.map(String::from));
    models
}

impl Central {
    /// A plain-HTTP server with default settings.
    pub async fn start() -> Central {
        Central::start_with(Options::default()).await
    }

    /// A service that speaks TLS only, otherwise as [`Central::start`].
    pub async fn start_tls() -> Central {
        Central::start_with(Options {
            tls: true,
            ..Options::default()
        })
        .await
    }

    pub async fn start_with(options: Options) -> Central {
        let db = fresh_database().await;
        let storage = Storage::connect(&db.url, 30)
            .await
            .expect("connect to the test database");
        storage.migrate().await.expect("migrate");
        Central::serve(storage, options).await
    }

    /// A TLS server (what edges log in to) with one account, `acme`.
    pub async fn tls_with_account() -> (Central, AccountId) {
        let c = Central::start_with(Options {
            tls: true,
            ..Options::default()
        })
        .await;
        let acct = c.account("acme").await;
        (c, acct)
    }

    /// Serves an existing database (e.g. to restart a server on the same data).
    pub async fn serve(storage: Storage, options: Options) -> Central {
        Central::serve_on(storage, options, 0).await
    }

    /// [`Central::serve`] on a given port (0: any), e.g. to come back where a
    /// stopped server was. The server is started by the binary's own
    /// [`launch_with_listener`]; only the listeners (loopback, port 0) and the
    /// certificates (made by rcgen, written to a temporary directory) are the test's.
    pub async fn serve_on(storage: Storage, options: Options, port: u16) -> Central {
        let api = std::net::TcpListener::bind(("127.0.0.1", port)).expect("bind loopback");
        let metrics = options
            .metrics_listen
            .then(|| std::net::TcpListener::bind("127.0.0.1:0").expect("bind metrics loopback"));
        let metrics_addr = metrics
            .as_ref()
            .map(|l| l.local_addr().expect("metrics addr"));
        let port = api.local_addr().expect("addr").port();
        let mut settings = settings(&options);
        settings.listen = ([127, 0, 0, 1], port).into();
        settings.metrics_listen = metrics_addr;
        let (tls_dir, ca_pem) = if options.tls {
            let (dir, ca) = test_tls();
            settings.tls_cert = Some(dir.path().join("chain.pem"));
            settings.tls_key = Some(dir.path().join("key.pem"));
            (Some(dir), Some(ca))
        } else {
            (None, None)
        };
        let scheme = if options.tls { "https" } else { "http" };
        let host = if options.tls {
            "localhost"
        } else {
            "127.0.0.1"
        };
        let mut client = reqwest::Client::builder().no_proxy();
        if let Some(ca) = &ca_pem {
            let cert = reqwest::Certificate::from_pem(ca.as_bytes()).expect("ca pem");
            client = client
                .add_root_certificate(cert)
                .resolve("localhost", ([127, 0, 0, 1], port).into());
        }
        // The service registers its listed models when it starts (the binary, at
        // `migrate`): the test's list, with the made-up models. A test of a service
        // whose database is out of reach serves all the same.
        let _ = storage
            .enable_vector_models(settings.vector_models().expect("test models"))
            .await;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let listeners = Listeners { api, metrics };
        let task = tokio::spawn(launch_with_listener(
            settings,
            storage.clone(),
            listeners,
            async move {
                let _ = stopped.await;
            },
        ));
        Central {
            url: format!("{scheme}://{host}:{port}"),
            storage,
            client: client.build().expect("client"),
            ca_pem,
            metrics_url: metrics_addr.map(|a| format!("http://{a}")),
            stop: Some(stop),
            task: Some(task),
            _tls_dir: tls_dir,
        }
    }

    /// Stops the server, waiting for requests in flight.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    /// Ends the server at once, requests in flight dropped mid-way (their
    /// transactions roll back), as a replica killed would leave them.
    pub async fn abort(mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let _ = task.await;
        }
    }

    pub fn at(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    /// `POST /memory/sync` as `m`.
    pub async fn push(&self, m: &Machine, records: &[WireRecord]) -> reqwest::Response {
        self.client
            .post(self.at("/memory/sync"))
            .bearer_auth(&m.jwt)
            .json(&serde_json::json!({ "records": records }))
            .send()
            .await
            .expect("push request")
    }

    /// `POST /memory/sync` as `m` with `records` and the vectors `embeddings`, which
    /// must be answered 200: the answer.
    pub async fn push_with(
        &self,
        m: &Machine,
        records: &[WireRecord],
        embeddings: &[solaria_shared::embedding::WireEmbedding],
    ) -> SyncResponse {
        let r = self
            .client
            .post(self.at("/memory/sync"))
            .bearer_auth(&m.jwt)
            .json(&serde_json::json!({ "records": records, "embeddings": embeddings }))
            .send()
            .await
            .expect("push request");
        assert_eq!(r.status(), 200, "{:?}", r.text().await);
        r.json().await.expect("sync response")
    }

    /// A push that must succeed; its per-record outcomes.
    pub async fn push_ok(&self, m: &Machine, records: &[WireRecord]) -> Vec<RecordOutcome> {
        let r = self.push(m, records).await;
        assert_eq!(r.status(), 200, "{:?}", r.text().await);
        r.json::<SyncResponse>()
            .await
            .expect("sync response")
            .results
    }

    /// One page of the change feed after `since`, as `m`.
    pub async fn changes(&self, m: &Machine, since: i64) -> ChangesPage {
        let r = self
            .client
            .get(self.at(&format!("/memory/changes?since={since}&limit=1000")))
            .bearer_auth(&m.jwt)
            .send()
            .await
            .expect("changes request");
        assert_eq!(r.status(), 200);
        r.json().await.expect("changes page")
    }

    /// Rows in one of our tables (all accounts).
    pub async fn count(&self, table: &str) -> i64 {
        sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM {table}")))
            .fetch_one(self.storage.pool())
            .await
            .expect("count")
    }

    /// A new account, its first admin `owner@<name>`.
    pub async fn account(&self, name: &str) -> AccountId {
        self.storage
            .create_account(name, &format!("owner@{name}"), "test")
            .await
            .expect("create account")
    }

    /// A new person of `account`.
    pub async fn person(&self, account: AccountId, email: &str, role: Role) -> PersonId {
        self.storage
            .add_person(account, email, role, "test")
            .await
            .expect("add person")
    }

    /// Enrolls a machine of the account's only person through the API and returns
    /// its identity and a JWT.
    pub async fn machine(&self, account: AccountId, name: &str) -> Machine {
        let token = self
            .storage
            .create_enrollment_token(account, std::time::Duration::from_secs(3600))
            .await
            .expect("enrollment token");
        self.enroll(account, &token, name).await
    }

    /// Enrolls a machine of `person` through the API.
    pub async fn machine_of(&self, account: AccountId, person: PersonId, name: &str) -> Machine {
        let token = self
            .storage
            .enrollment_token_for(account, person, std::time::Duration::from_secs(3600))
            .await
            .expect("enrollment token");
        self.enroll(account, &token, name).await
    }

    /// Spends `token` on a machine named `name` and logs it in.
    pub async fn enroll(&self, account: AccountId, token: &str, name: &str) -> Machine {
        let enrolled: EnrollResponse = self
            .client
            .post(self.at("/memory/enroll"))
            .json(&serde_json::json!({"token": token, "name": name}))
            .send()
            .await
            .expect("enroll request")
            .error_for_status()
            .expect("enrolled")
            .json()
            .await
            .expect("enroll json");
        self.log_in(account, enrolled.machine_id, enrolled.credential)
            .await
    }

    /// A machine of `account` with this credential, logged in (a JWT).
    pub async fn log_in(
        &self,
        account: AccountId,
        id: solaria_shared::MachineId,
        credential: String,
    ) -> Machine {
        let jwt: TokenResponse = self
            .client
            .post(self.at("/memory/token"))
            .json(&serde_json::json!({"machine_id": id, "credential": credential}))
            .send()
            .await
            .expect("token request")
            .error_for_status()
            .expect("token")
            .json()
            .await
            .expect("token json");
        Machine {
            id,
            account,
            credential,
            jwt: jwt.token,
        }
    }
}

/// An account and a machine of it written as a server of `schema`'s age would
/// have (no people yet): for tests of an upgrade in place. The machine's credential
/// is returned with its id.
pub async fn legacy_machine(
    storage: &Storage,
    account: &str,
    machine: &str,
) -> (AccountId, solaria_shared::MachineId, String) {
    let account_id = uuid::Uuid::now_v7();
    sqlx::query("INSERT INTO accounts (id, name) VALUES ($1, $2)")
        .bind(account_id)
        .bind(account)
        .execute(storage.pool())
        .await
        .expect("an account of the old schema");
    let id = solaria_shared::MachineId::default();
    let credential = solaria_central::secret::random_token("solmachine");
    sqlx::query(
        "INSERT INTO memory_machines (id, account_id, machine_name, credential_hash)
         VALUES ($1, $2, $3, $4)",
    )
    .bind(id.as_uuid())
    .bind(account_id)
    .bind(machine)
    .bind(solaria_central::secret::hash_token(&credential))
    .execute(storage.pool())
    .await
    .expect("a machine of the old schema");
    (AccountId(account_id), id, credential)
}

/// Sessions and observations stored as a server of an older schema stored them
/// (the first release's columns), numbered in the account's feed: for tests of an
/// upgrade in place, whose old server is not this code.
pub async fn legacy_records(storage: &Storage, account: AccountId, records: &[WireRecord]) {
    for (n, record) in records.iter().enumerate() {
        let seq = n as i64 + 1;
        let done = match record {
            WireRecord::Session(s) => sqlx::query(
                "INSERT INTO memory_sessions (account_id, id, machine_id, updated, deleted, seq,
                     project_key, project_name, agent, agent_session_id, cwd, source, started_at)
                 VALUES ($1, $2, $3, $4, false, $5, $6, $7, $8, $9, $10, $11, $12)",
            )
            .bind(account.0)
            .bind(s.id.as_uuid())
            .bind(s.meta.machine_id.as_uuid())
            .bind(s.meta.updated.as_i64())
            .bind(seq)
            .bind(&s.project.key)
            .bind(&s.project.name)
            .bind(&s.agent)
            .bind(&s.agent_session_id)
            .bind(&s.cwd)
            .bind(&s.source)
            .bind(s.started_at.0)
            .execute(storage.pool())
            .await,
            WireRecord::Observation(o) => sqlx::query(
                "INSERT INTO memory_observations_remote (account_id, id, session_id, machine_id,
                     updated, deleted, seq, project_key, project_name, kind, tool_name, title, input,
                     response, files, metadata, tags, created_at)
                 VALUES ($1, $2, $3, $4, $5, false, $6, $7, $8, $9, $10, $11, $12, $13, $14::jsonb,
                     $15, $16::jsonb, $17)",
            )
            .bind(account.0)
            .bind(o.id.as_uuid())
            .bind(o.session_id.as_uuid())
            .bind(o.meta.machine_id.as_uuid())
            .bind(o.meta.updated.as_i64())
            .bind(seq)
            .bind(&o.project.key)
            .bind(&o.project.name)
            .bind(o.kind.as_str())
            .bind(&o.tool_name)
            .bind(&o.title)
            .bind(&o.input)
            .bind(&o.response)
            .bind(serde_json::Value::from(o.files.clone()).to_string())
            .bind(&o.metadata)
            .bind(serde_json::Value::from(o.tags.clone()).to_string())
            .bind(o.created_at.0)
            .execute(storage.pool())
            .await,
            other => panic!("no legacy form for a {}", other.type_name()),
        };
        done.expect("a record of the old schema");
    }
    sqlx::query("UPDATE accounts SET change_seq = $2 WHERE id = $1")
        .bind(account.0)
        .bind(records.len() as i64)
        .execute(storage.pool())
        .await
        .expect("the old feed's position");
}

impl Drop for Central {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// `GET path` as `m`: the status and the JSON body.
pub async fn get(c: &Central, m: &Machine, path: &str) -> (u16, serde_json::Value) {
    let r = c
        .client
        .get(c.at(path))
        .bearer_auth(&m.jwt)
        .send()
        .await
        .expect("GET request");
    let status = r.status().as_u16();
    (status, r.json().await.expect("JSON body"))
}

/// `GET path` as `m`, which must answer 200: its body as `T`.
pub async fn get_ok<T: serde::de::DeserializeOwned>(c: &Central, m: &Machine, path: &str) -> T {
    let (status, body) = get(c, m, path).await;
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_value(body).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `DELETE path` as `m`: the status and the JSON body.
pub async fn delete(c: &Central, m: &Machine, path: &str) -> (u16, serde_json::Value) {
    let r = c
        .client
        .delete(c.at(path))
        .bearer_auth(&m.jwt)
        .send()
        .await
        .expect("DELETE request");
    let status = r.status().as_u16();
    (status, r.json().await.expect("JSON body"))
}

/// `solaria-central ARGS` against `database`: its stdout, or its stderr as the error.
pub fn operator(database: &str, args: &[&str]) -> Result<String, String> {
    let out = std::process::Command::new(crate::binary("solaria-central"))
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("SOLARIA_DATABASE_URL", database)
        .env("SOLARIA_JWT_SECRET", JWT_SECRET)
        .env("USER", "ops")
        .output()
        .expect("run solaria-central");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        Ok(stdout)
    } else {
        Err(stderr)
    }
}

pub fn ok(database: &str, args: &[&str]) -> String {
    operator(database, args).unwrap_or_else(|e| panic!("solaria-central {args:?}: {e}"))
}

pub fn refused(database: &str, args: &[&str]) -> String {
    match operator(database, args) {
        Ok(out) => panic!("solaria-central {args:?} should fail: {out}"),
        Err(e) => e,
    }
}

/// An enrolled machine.
#[derive(Debug, Clone)]
pub struct Machine {
    pub id: solaria_shared::MachineId,
    pub account: AccountId,
    pub credential: String,
    pub jwt: String,
}

/// A CA and a `localhost` server certificate signed by it, made fresh by rcgen: the
/// directory holding `chain.pem` and `key.pem`, and the CA's PEM.
pub fn test_tls() -> (tempfile::TempDir, String) {
    use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("ca params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca =
        CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("ca key")).expect("ca");
    let key = KeyPair::generate().expect("server key");
    let cert = CertificateParams::new(vec!["localhost".to_string()])
        .expect("params")
        .signed_by(&key, &ca)
        .expect("server cert");
    let dir = tempfile::tempdir().expect("tls dir");
    std::fs::write(
        dir.path().join("chain.pem"),
        format!("{}{}", cert.pem(), ca.pem()),
    )
    .expect("write chain");
    std::fs::write(dir.path().join("key.pem"), key.serialize_pem()).expect("write key");
    api::install_crypto_provider();
    (dir, ca.pem())
}

/// A `solaria-central` binary (`program`: this build's or another release's) with `args`,
/// its environment holding only what
/// is given (and `PATH`).
pub fn command(
    program: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    cmd
}

/// The address a `solaria-central serve --log-format json` listens on, from its
/// `serving` log line (it listens before it logs it); its log is drained from then
/// on. Panics with the log if it ends first or says nothing in a minute.
pub async fn serving_address(child: &mut tokio::process::Child) -> std::net::SocketAddr {
    use tokio::io::AsyncBufReadExt;
    let stderr = child.stderr.take().expect("piped stderr");
    let mut lines = tokio::io::BufReader::new(stderr).lines();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut seen = Vec::new();
    loop {
        let line = tokio::time::timeout_at(deadline, lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("no `serving` line in a minute: {seen:#?}"))
            .expect("read the log");
        let Some(line) = line else {
            panic!("solaria-central ended before it served: {seen:#?}");
        };
        let entry: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        let fields = &entry["fields"];
        if fields["message"] == "serving" {
            let listen = fields["listen"].as_str().expect("listen field");
            let addr = listen
                .strip_prefix("Some(")
                .and_then(|a| a.strip_suffix(')'))
                .and_then(|a| a.parse().ok())
                .unwrap_or_else(|| panic!("an address: {line}"));
            tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
            return addr;
        }
        seen.push(line);
    }
}

/// One `solaria-central serve` process over TLS, of either release.
#[derive(Debug)]
pub struct Replica {
    pub child: tokio::process::Child,
    /// `https://localhost:PORT`.
    pub url: String,
}

impl Replica {
    /// `program serve` on `database`, with the certificate and key in `tls` (as
    /// [`test_tls`] writes them), listening on a free loopback port.
    pub async fn serve(
        program: &std::path::Path,
        database: &str,
        tls: &std::path::Path,
    ) -> Replica {
        let cert = tls.join("chain.pem").display().to_string();
        let key = tls.join("key.pem").display().to_string();
        let mut child = command(
            program,
            &["serve", "--log-format", "json"],
            &[
                ("SOLARIA_DATABASE_URL", database),
                ("SOLARIA_JWT_SECRET", JWT_SECRET),
                ("SOLARIA_LISTEN", "127.0.0.1:0"),
                ("SOLARIA_TLS_CERT", &cert),
                ("SOLARIA_TLS_KEY", &key),
            ],
        )
        .spawn()
        .expect("spawn solaria-central serve");
        let at = serving_address(&mut child).await;
        Replica {
            child,
            url: format!("https://localhost:{}", at.port()),
        }
    }

    /// Kills it (SIGKILL) and waits for it.
    pub async fn stop(mut self) {
        self.child.kill().await.expect("stop the replica");
    }
}
