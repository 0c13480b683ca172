//! The service's configuration: one typed struct from a TOML file, overridden by
//! `SOLARIA_<KEY>` environment variables. Secrets are [`Secret`]s and never print.
//! The file is strict (an unknown key is an error naming it); the environment is not
//! (other programs' `SOLARIA_*` variables are ignored).

use crate::secret::Secret;
use serde::Deserialize;
use solaria_shared::text::edit_distance;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// Everything `solaria-central` needs to run.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// `postgres://user:password@host/db`: the primary, reached directly (not
    /// through a pooler). Migrations and the setup at start run here.
    pub database_url: Secret,
    /// The same primary through a pooler in transaction mode (PgBouncer): requests
    /// use it, each in a transaction of its own, with unnamed statements.
    #[serde(default)]
    pub pooled_database_url: Option<Secret>,
    /// A streaming standby of the primary: search, context, timeline and the
    /// change feed read from it while it is at most `read_max_lag_ms` behind.
    #[serde(default)]
    pub read_database_url: Option<Secret>,
    /// How far behind the primary the standby may be while it serves reads, in
    /// milliseconds; further behind, reads go to the primary.
    #[serde(default = "default_read_max_lag")]
    pub read_max_lag_ms: u64,
    /// Where the API listens.
    #[serde(default = "default_listen")]
    pub listen: SocketAddr,
    /// Where Prometheus metrics are served (a separate listener; none when unset).
    #[serde(default)]
    pub metrics_listen: Option<SocketAddr>,
    /// TLS certificate chain and key (PEM). Without them the API speaks plain HTTP,
    /// for running behind a TLS-terminating reverse proxy.
    #[serde(default)]
    pub tls_cert: Option<PathBuf>,
    #[serde(default)]
    pub tls_key: Option<PathBuf>,
    /// The key JWTs are signed with (HS256); at least 32 characters.
    pub jwt_secret: Secret,
    /// How long a JWT lives, in seconds.
    #[serde(default = "default_jwt_ttl")]
    pub jwt_ttl_secs: u64,
    /// Requests per second allowed to one machine.
    #[serde(default = "default_rate")]
    pub rate_limit_per_sec: u32,
    /// The largest request body accepted (after decompression), in bytes.
    #[serde(default = "default_max_body")]
    pub max_body_bytes: usize,
    /// How long one request may take, reading its body included, in seconds; a
    /// slower one is answered 408 and its connection closed.
    #[serde(default = "default_request_timeout")]
    pub request_timeout_secs: u64,
    /// Requests per minute allowed from one IP address to the routes that take no
    /// token (`/memory/enroll`, `/memory/token`); beyond it: 429 with Retry-After.
    #[serde(default = "default_auth_rate")]
    pub auth_rate_limit_per_min: u32,
    /// Connections in the database pool.
    #[serde(default = "default_pool")]
    pub max_db_connections: u32,
    /// `Host` headers `/mcp` accepts (`host` or `host:port`), against DNS rebinding.
    /// Default: loopback only. A list in the file; a comma-separated string in
    /// `SOLARIA_MCP_ALLOWED_HOSTS`. Empty: any host (only behind a proxy that checks it).
    #[serde(default = "default_mcp_hosts", deserialize_with = "list_or_csv")]
    pub mcp_allowed_hosts: Vec<String>,
    /// The embedding models whose vectors the service keeps and searches by meaning:
    /// model fingerprints as an edge reports them (`NAME/384d/mean/BYTES`). A
    /// vector of any other model is refused (its record is kept, found by words).
    /// Default: the models SOLARIA's installs give an edge. A list in the file; a
    /// comma-separated string in `SOLARIA_VECTOR_MODELS`.
    #[serde(default = "default_vector_models", deserialize_with = "list_or_csv")]
    pub vector_models: Vec<String>,
}

fn default_listen() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 8443))
}
fn default_jwt_ttl() -> u64 {
    15 * 60
}
fn default_rate() -> u32 {
    100
}
fn default_max_body() -> usize {
    8 * 1024 * 1024
}
fn default_request_timeout() -> u64 {
    30
}
fn default_auth_rate() -> u32 {
    30
}
fn default_read_max_lag() -> u64 {
    1000
}
fn default_pool() -> u32 {
    20
}
/// The hosts `/mcp` accepts by default: loopback only.
pub fn default_mcp_hosts() -> Vec<String> {
    ["localhost", "127.0.0.1", "::1"]
        .into_iter()
        .map(String::from)
        .collect()
}

/// The models SOLARIA's own installs give an edge.
pub fn default_vector_models() -> Vec<String> {
    crate::storage::VectorModels::default().fingerprints()
}

/// A list of strings, or one comma-separated string (as environment variables give).
fn list_or_csv<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum ListOrCsv {
        List(Vec<String>),
        Csv(String),
    }
    let items = match ListOrCsv::deserialize(d)? {
        ListOrCsv::List(items) => items,
        ListOrCsv::Csv(text) => text.split(',').map(str::to_string).collect(),
    };
    Ok(items
        .into_iter()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .collect())
}

/// A configuration that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("invalid configuration: {0}\n(see deploy/central/central.example.toml for every key)")]
    Invalid(String),
    #[error(
        "unknown key `{key}` in {path}: {hint}\n(see deploy/central/central.example.toml for every key)"
    )]
    UnknownKey {
        path: PathBuf,
        key: String,
        hint: String,
    },
}

/// The keys a file or the environment may set: the fields of [`Settings`], read from
/// the struct itself so that the list can never drift from it.
pub fn keys() -> &'static [&'static str] {
    static KEYS: std::sync::OnceLock<&'static [&'static str]> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        let mut probe = FieldNames(&[]);
        let _ = Settings::deserialize(&mut probe);
        probe.0
    })
}

/// A deserializer that only records the field names a struct asks for.
struct FieldNames(&'static [&'static str]);

#[derive(Debug)]
struct Probed;

impl std::fmt::Display for Probed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("field names probed")
    }
}

impl std::error::Error for Probed {}

impl serde::de::Error for Probed {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Probed
    }
}

impl<'de> serde::Deserializer<'de> for &mut FieldNames {
    type Error = Probed;

    fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Probed> {
        Err(Probed)
    }

    fn deserialize_struct<V: serde::de::Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Probed> {
        self.0 = fields;
        Err(Probed)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
        identifier ignored_any
    }
}

/// The known key nearest to a misspelled one, if any is close.
fn nearest_key(unknown: &str) -> Option<&'static str> {
    keys()
        .iter()
        .map(|k| (edit_distance(unknown, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4))
        .min()
        .map(|(_, k)| k)
}

/// Loads the settings: the TOML file (if given), then `SOLARIA_<KEY>` environment
/// variables for any key (`SOLARIA_DATABASE_URL`, `SOLARIA_JWT_SECRET`, …).
///
/// The file must hold only known keys: a misspelled one is an error naming it. The
/// environment is shared with other programs (the edge reads `SOLARIA_HOME`,
/// `SOLARIA_MODEL_MIRROR`, …), so a `SOLARIA_*` variable that names no key is ignored
/// (logged at debug level).
pub fn load(file: Option<&Path>) -> Result<Settings, ConfigError> {
    load_from(file, std::env::vars())
}

/// [`load`] with an explicit environment (for tests).
pub fn load_from(
    file: Option<&Path>,
    env: impl Iterator<Item = (String, String)>,
) -> Result<Settings, ConfigError> {
    let mut table = match file {
        Some(path) => read_file(path)?,
        None => toml::Table::new(),
    };
    for (key, value) in env {
        let Some(name) = key.strip_prefix("SOLARIA_") else {
            continue;
        };
        let name = name.to_ascii_lowercase();
        if !keys().contains(&name.as_str()) {
            tracing::debug!(variable = %key, "ignoring an environment variable that names no setting of solaria-central");
            continue;
        }
        // Numbers stay numbers; everything else is a string.
        let value = match value.parse::<i64>() {
            Ok(n) => toml::Value::Integer(n),
            Err(_) => toml::Value::String(value),
        };
        table.insert(name, value);
    }
    let settings: Settings = table
        .try_into()
        .map_err(|e: toml::de::Error| ConfigError::Invalid(e.message().to_string()))?;
    if settings.jwt_secret.expose().len() < 32 {
        return Err(ConfigError::Invalid(
            "jwt_secret must be at least 32 characters (e.g. `openssl rand -hex 32`)".into(),
        ));
    }
    if settings.tls_cert.is_some() != settings.tls_key.is_some() {
        return Err(ConfigError::Invalid(
            "tls_cert and tls_key go together: set both, or neither to serve plain HTTP behind a proxy".into(),
        ));
    }
    settings.vector_models()?;
    let probe = crate::storage::PROBE_EVERY.as_millis() as u64;
    if settings.read_max_lag_ms <= probe {
        return Err(ConfigError::Invalid(format!(
            "read_max_lag_ms must be more than {probe}: the standby's lag is measured every {probe} ms"
        )));
    }
    Ok(settings)
}

impl Settings {
    /// The databases to connect to, as the storage takes them.
    pub fn databases(&self) -> crate::storage::Databases<'_> {
        crate::storage::Databases {
            primary: self.database_url.expose(),
            pooled: self.pooled_database_url.as_ref().map(Secret::expose),
            standby: self.read_database_url.as_ref().map(|url| {
                (
                    url.expose(),
                    std::time::Duration::from_millis(self.read_max_lag_ms),
                )
            }),
            max_connections: self.max_db_connections,
        }
    }

    /// The operator's list of models, checked.
    pub fn vector_models(&self) -> Result<crate::storage::VectorModels, ConfigError> {
        crate::storage::VectorModels::new(&self.vector_models)
            .map_err(|e| ConfigError::Invalid(format!("vector_models: {e}")))
    }
}

/// The file's table, every key of it known.
fn read_file(path: &Path) -> Result<toml::Table, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let table = text
        .parse::<toml::Table>()
        .map_err(|e| ConfigError::Invalid(format!("{}: {e}", path.display())))?;
    if let Some(key) = table.keys().find(|k| !keys().contains(&k.as_str())) {
        return Err(ConfigError::UnknownKey {
            path: path.to_path_buf(),
            key: key.clone(),
            hint: match nearest_key(key) {
                Some(near) => format!("did you mean `{near}`?"),
                None => format!("the keys are: {}", keys().join(", ")),
            },
        });
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Iterator<Item = (String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn a_standby_bound_below_one_measure_is_refused_and_the_databases_are_named() {
        let base = [
            ("SOLARIA_DATABASE_URL", "postgres://u:p@primary/x"),
            ("SOLARIA_JWT_SECRET", "0123456789abcdef0123456789abcdef"),
            ("SOLARIA_READ_DATABASE_URL", "postgres://u:p@standby/x"),
            ("SOLARIA_POOLED_DATABASE_URL", "postgres://u:p@bouncer/x"),
        ];
        let mut too_tight = base.to_vec();
        too_tight.push(("SOLARIA_READ_MAX_LAG_MS", "200"));
        let e = load_from(None, env(&too_tight)).expect_err("refused");
        assert!(e.to_string().contains("read_max_lag_ms"), "{e}");
        let s = load_from(None, env(&base)).expect("loads");
        let d = s.databases();
        assert_eq!(d.primary, "postgres://u:p@primary/x");
        assert_eq!(d.pooled, Some("postgres://u:p@bouncer/x"));
        assert_eq!(
            d.standby,
            Some((
                "postgres://u:p@standby/x",
                std::time::Duration::from_millis(1000)
            ))
        );
        let debug = format!("{s:?}");
        assert!(!debug.contains("u:p@"), "the URLs are secrets: {debug}");
    }

    #[test]
    fn environment_overrides_the_file_and_secrets_stay_hidden() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("central.toml");
        std::fs::write(
            &file,
            "database_url = \"postgres://u:filepass@db/x\"\njwt_secret = \"0123456789abcdef0123456789abcdef\"\nrate_limit_per_sec = 7\n",
        )
        .expect("write");
        let s = load_from(
            Some(&file),
            env(&[
                ("SOLARIA_DATABASE_URL", "postgres://u:envpass@db/y"),
                ("SOLARIA_RATE_LIMIT_PER_SEC", "9"),
                ("HOME", "/x"),
            ]),
        )
        .expect("loads");
        assert_eq!(s.database_url.expose(), "postgres://u:envpass@db/y");
        assert_eq!(s.rate_limit_per_sec, 9);
        assert_eq!(s.mcp_allowed_hosts, default_mcp_hosts());
        let debug = format!("{s:?}");
        assert!(
            !debug.contains("envpass") && !debug.contains("0123456789abcdef"),
            "{debug}"
        );
    }

    #[test]
    fn mcp_hosts_come_from_a_list_or_a_comma_separated_string() {
        let key = ("SOLARIA_JWT_SECRET", "0123456789abcdef0123456789abcdef");
        let db = ("SOLARIA_DATABASE_URL", "postgres://x");
        let s = load_from(
            None,
            env(&[
                key,
                db,
                (
                    "SOLARIA_MCP_ALLOWED_HOSTS",
                    "mem.example.com, mem.example.com:8443",
                ),
            ]),
        )
        .expect("loads");
        assert_eq!(
            s.mcp_allowed_hosts,
            ["mem.example.com", "mem.example.com:8443"]
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("central.toml");
        std::fs::write(&file, "mcp_allowed_hosts = [\"mem.example.com\"]\n").expect("write");
        let s = load_from(Some(&file), env(&[key, db])).expect("loads");
        assert_eq!(s.mcp_allowed_hosts, ["mem.example.com"]);
    }

    #[test]
    fn the_keys_are_the_fields_of_settings() {
        assert!(keys().contains(&"database_url"));
        assert!(keys().contains(&"mcp_allowed_hosts"));
        assert!(!keys().contains(&"home"));
    }

    #[test]
    fn other_programs_environment_variables_are_ignored() {
        let s = load_from(
            None,
            env(&[
                ("SOLARIA_DATABASE_URL", "postgres://x"),
                ("SOLARIA_JWT_SECRET", "0123456789abcdef0123456789abcdef"),
                ("SOLARIA_MODEL_MIRROR", "https://mirror.example.com"),
                ("SOLARIA_HOME", "/tmp/x"),
                ("SOLARIA_CONFIG", "/etc/solaria-central/central.toml"),
                ("SOLARIA_RATE_LIMT_PER_SEC", "5"),
            ]),
        )
        .expect("loads despite unknown SOLARIA_* variables");
        assert_eq!(s.rate_limit_per_sec, default_rate());
    }

    #[test]
    fn a_misspelled_key_in_the_file_is_named() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("central.toml");
        std::fs::write(
            &file,
            "database_url = \"postgres://x\"\njwt_secret = \"0123456789abcdef0123456789abcdef\"\nrate_limt_per_sec = 7\n",
        )
        .expect("write");
        let err = load_from(Some(&file), env(&[])).expect_err("misspelled key");
        let text = err.to_string();
        assert!(text.contains("unknown key `rate_limt_per_sec`"), "{text}");
        assert!(
            text.contains("did you mean `rate_limit_per_sec`?"),
            "{text}"
        );
        std::fs::write(&file, "colour = \"blue\"\n").expect("write");
        let text = load_from(Some(&file), env(&[]))
            .expect_err("unknown key")
            .to_string();
        assert!(
            text.contains("`colour`") && text.contains("database_url"),
            "{text}"
        );
    }

    #[test]
    fn bad_settings_are_clear_errors() {
        let short = load_from(
            None,
            env(&[
                ("SOLARIA_DATABASE_URL", "postgres://x"),
                ("SOLARIA_JWT_SECRET", "short"),
            ]),
        );
        assert!(
            short
                .expect_err("short key")
                .to_string()
                .contains("at least 32")
        );
        let missing = load_from(
            None,
            env(&[("SOLARIA_JWT_SECRET", "0123456789abcdef0123456789abcdef")]),
        );
        assert!(
            missing
                .expect_err("no db")
                .to_string()
                .contains("database_url")
        );
        let half_tls = load_from(
            None,
            env(&[
                ("SOLARIA_DATABASE_URL", "postgres://x"),
                ("SOLARIA_JWT_SECRET", "0123456789abcdef0123456789abcdef"),
                ("SOLARIA_TLS_CERT", "/c.pem"),
            ]),
        );
        assert!(
            half_tls
                .expect_err("half tls")
                .to_string()
                .contains("tls_key")
        );
    }
}
