#!/usr/bin/env python3
"""Regenerates the recorded Claude Code hook sessions in this directory.

    python3 deploy/demo/sessions/generate.py          # writes *.jsonl and SECRETS.txt, then checks them

Each output line is {"event": "<solaria hook argument>", "payload": <stdin payload>}.
__CWD__, __TRANSCRIPT__ and __SESSION__ are left for the replayer to substitute.
Deterministic: no clocks, no randomness; running it twice gives identical files.
"""

import difflib
import hashlib
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CWD, TRANSCRIPT, SESSION = "__CWD__", "__TRANSCRIPT__", "__SESSION__"

# ---------------------------------------------------------------------------------
# Planted fake secrets. Obviously fake to a human, but shaped like the real thing.
ANTHROPIC_KEY = "sk-ant-api03-" + "FAKEexampleKEYforSolariaDemo000000000000"
AWS_KEY = "AKIA" + "FAKEEXAMPLE0KEY1"
GITHUB_TOKEN = "ghp_" + "FAKEEXAMPLETOKEN0123456789abcdefghij"
PG_PASSWORD = "FAKE_EXAMPLE_pw_0000"
PG_URL = f"postgres://orbit:{PG_PASSWORD}@localhost:5432/orbit_test"
# header {"alg":"EdDSA","typ":"JWT"}; payload: fake user, expired 2024-01-01; fake signature
JWT = (
    "eyJhbGciOiJFZERTQSIsInR5cCI6IkpXVCJ9."
    "eyJzdWIiOiJmYWtlLXVzZXItMDAwMCIsImF1ZCI6Im9yYml0LXJlZnJlc2giLCJleHAiOjE3MDQwNjcyNjB9."
    "FAKE_SIGNATURE_EXAMPLE_not_a_real_signature_00000000000000000"
)
SECRETS = [ANTHROPIC_KEY, AWS_KEY, GITHUB_TOKEN, PG_URL, PG_PASSWORD, JWT]
assert len(ANTHROPIC_KEY) == len("sk-ant-api03-") + 40
assert re.fullmatch(r"AKIA[0-9A-Z]{16}", AWS_KEY)
assert re.fullmatch(r"ghp_[A-Za-z0-9]{36}", GITHUB_TOKEN)
assert re.fullmatch(r"eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+", JWT)

PRIVATE = "<private>my home address is 12 Calle Mayor, Madrid</private>"

# ---------------------------------------------------------------------------------
# The project as the laptop session finds it (a small axum + sqlx service).
FS = {}

FS["src/auth/jwt.rs"] = """\
//! JWT issuing and verification (EdDSA keys loaded at start-up).

use chrono::{Duration, Utc};
use jsonwebtoken::{decode, encode, Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use uuid::Uuid;

use crate::error::ApiError;

pub const ACCESS_AUDIENCE: &str = "orbit-api";
pub const REFRESH_AUDIENCE: &str = "orbit-refresh";
pub const ISSUER: &str = "https://auth.orbit.example.com";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenKind {
    Access,
    Refresh,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Claims {
    pub sub: String,
    pub aud: String,
    pub iss: String,
    pub iat: i64,
    pub exp: i64,
    pub jti: Uuid,
    pub kind: TokenKind,
}

#[derive(Clone)]
pub struct JwtKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    access_ttl: Duration,
    refresh_ttl: Duration,
}

impl JwtKeys {
    pub fn new(encoding: EncodingKey, decoding: DecodingKey, access_ttl: Duration, refresh_ttl: Duration) -> Self {
        Self { encoding, decoding, access_ttl, refresh_ttl }
    }

    pub fn access_ttl(&self) -> Duration {
        self.access_ttl
    }

    pub fn issue(&self, sub: &str, kind: TokenKind) -> Result<String, ApiError> {
        let now = Utc::now();
        let (aud, ttl) = match kind {
            TokenKind::Access => (ACCESS_AUDIENCE, self.access_ttl),
            TokenKind::Refresh => (REFRESH_AUDIENCE, self.refresh_ttl),
        };
        let claims = Claims {
            sub: sub.to_owned(),
            aud: aud.to_owned(),
            iss: ISSUER.to_owned(),
            iat: now.timestamp(),
            exp: (now + ttl).timestamp(),
            jti: Uuid::new_v4(),
            kind,
        };
        encode(&Header::new(Algorithm::EdDSA), &claims, &self.encoding).map_err(ApiError::from)
    }

    /// Verifies an access token: signature, expiry, issuer and audience.
    pub fn verify<T: DeserializeOwned>(&self, token: &str) -> Result<T, ApiError> {
        let mut validation = Validation::new(Algorithm::EdDSA);
        validation.set_audience(&[ACCESS_AUDIENCE]);
        validation.set_issuer(&[ISSUER]);
        validation.leeway = 0;
        let data = decode::<T>(token, &self.decoding, &validation)?;
        Ok(data.claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::test_keys;

    #[test]
    fn issues_and_verifies_access_token() {
        let keys = test_keys();
        let token = keys.issue("user-1", TokenKind::Access).unwrap();
        let claims: Claims = keys.verify(&token).unwrap();
        assert_eq!(claims.sub, "user-1");
        assert_eq!(claims.kind, TokenKind::Access);
    }

    #[test]
    fn rejects_tampered_token() {
        let keys = test_keys();
        let mut token = keys.issue("user-1", TokenKind::Access).unwrap();
        token.push('x');
        assert!(keys.verify::<Claims>(&token).is_err());
    }
}
"""

FS["src/auth/refresh.rs"] = """\
//! POST /api/session/refresh: trade a refresh token for a new token pair.

use axum::{extract::State, Json};
use serde::{Deserialize, Serialize};

use crate::auth::jwt::{Claims, TokenKind};
use crate::error::ApiError;
use crate::AppState;

#[derive(Debug, Deserialize)]
pub struct RefreshRequest {
    pub refresh_token: String,
}

#[derive(Debug, Serialize)]
pub struct TokenPair {
    pub access_token: String,
    pub refresh_token: String,
    pub expires_in: i64,
}

pub async fn refresh_session(
    State(state): State<AppState>,
    Json(req): Json<RefreshRequest>,
) -> Result<Json<TokenPair>, ApiError> {
    let claims: Claims = state.keys.verify(&req.refresh_token)?;
    if state.refresh_store.is_revoked(&claims.jti).await? {
        return Err(ApiError::Unauthorized("refresh token revoked"));
    }
    let access_token = state.keys.issue(&claims.sub, TokenKind::Access)?;
    let refresh_token = state.keys.issue(&claims.sub, TokenKind::Refresh)?;
    Ok(Json(TokenPair {
        access_token,
        refresh_token,
        expires_in: state.keys.access_ttl().num_seconds(),
    }))
}
"""

FS["src/ws/reconnect.rs"] = """\
//! Websocket reconnect: a client that lost its socket sends its refresh token in the
//! first frame and gets a new token pair back, plus where to resume the event stream.

use serde::{Deserialize, Serialize};

use crate::auth::jwt::{Claims, TokenKind};
use crate::error::ApiError;
use crate::AppState;

#[derive(Debug, Deserialize)]
pub struct ReconnectFrame {
    pub refresh_token: String,
    pub last_event_id: Option<u64>,
}

#[derive(Debug, Serialize)]
pub struct Resumed {
    pub access_token: String,
    pub refresh_token: String,
    pub replay_from: u64,
}

pub async fn resume(state: &AppState, frame: ReconnectFrame) -> Result<Resumed, ApiError> {
    let claims: Claims = state.keys.verify(&frame.refresh_token)?;
    let access_token = state.keys.issue(&claims.sub, TokenKind::Access)?;
    let refresh_token = state.keys.issue(&claims.sub, TokenKind::Refresh)?;
    Ok(Resumed {
        access_token,
        refresh_token,
        replay_from: frame.last_event_id.map_or(0, |id| id + 1),
    })
}
"""

FS["tests/common/mod.rs"] = """\
use std::net::SocketAddr;

use orbit_api::{build_app, config::Config};
use sqlx::postgres::PgPoolOptions;

pub struct TestApp {
    pub addr: SocketAddr,
    pub client: reqwest::Client,
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }
}

pub async fn spawn_app() -> TestApp {
    let database_url = std::env::var("DATABASE_URL").expect("DATABASE_URL must be set for integration tests");
    let pool = PgPoolOptions::new()
        .max_connections(5)
        .connect(&database_url)
        .await
        .expect("connect to the test database");
    sqlx::migrate!().run(&pool).await.expect("run migrations");

    let config = Config::for_tests();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = build_app(config, pool);
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    TestApp { addr, client: reqwest::Client::new() }
}
"""

FS[".env"] = f"""\
# Local development only. Never commit this file.
RUST_LOG=info,orbit_api=debug
BIND_ADDR=127.0.0.1:8080
JWT_ISSUER=https://auth.orbit.example.com
JWT_ACCESS_TTL_SECS=900
JWT_REFRESH_TTL_SECS=1209600
JWT_SIGNING_KEY_PATH=./dev-keys/jwt-ed25519.pem
AWS_REGION=eu-west-1
AWS_ACCESS_KEY_ID={AWS_KEY}
# AWS_SECRET_ACCESS_KEY comes from aws-vault, not from this file
ATTACHMENTS_BUCKET=orbit-dev-attachments
"""

FS["migrations/20250610120000_sessions_add_device.sql"] = """\
-- Sessions are now bound to the device that opened them.
ALTER TABLE sessions ADD COLUMN device_id UUID REFERENCES devices (id);
ALTER TABLE sessions ALTER COLUMN device_id SET NOT NULL;
CREATE INDEX sessions_device_id_idx ON sessions (device_id);
"""


def apath(rel):
    return f"{CWD}/{rel}"


def line_of(rel, needle):
    """1-based line and column of the first occurrence of needle in FS[rel]."""
    for i, line in enumerate(FS[rel].split("\n"), 1):
        col = line.find(needle)
        if col >= 0:
            return i, col + 1
    raise KeyError(f"{needle!r} not in {rel}")


def structured_patch(old, new, context=3):
    a, b = old.split("\n"), new.split("\n")
    hunks = []
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        lines = []
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                lines += [" " + l for l in a[a1:a2]]
            else:
                lines += ["-" + l for l in a[a1:a2]] + ["+" + l for l in b[b1:b2]]
        hunks.append({"oldStart": i1 + 1, "oldLines": i2 - i1, "newStart": j1 + 1,
                      "newLines": j2 - j1, "lines": lines})
    return hunks


# ---------------------------------------------------------------------------------
# Session recorder. `modern` follows the newest captured payloads (prompt_id, effort,
# duration_ms, Stop's last_assistant_message, Agent tool); otherwise an older 2.0.x
# Claude Code (none of those fields).
class Session:
    def __init__(self, name, modern, permission_mode):
        self.name, self.modern, self.permission_mode = name, modern, permission_mode
        self.lines, self.prompt_id, self.n = [], None, 0

    def _id(self, kind, length):
        self.n += 1
        digest = hashlib.sha256(f"{self.name}/{kind}/{self.n}".encode()).digest()
        alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
        num = int.from_bytes(digest, "big")
        out = ""
        while len(out) < length:
            num, r = divmod(num, 62)
            out += alphabet[r]
        return out

    def _uuid(self):
        h = hashlib.sha256(f"{self.name}/uuid/{len(self.lines)}".encode()).hexdigest()
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"

    def _base(self, event, with_mode=True, with_prompt=True):
        p = {"session_id": SESSION, "transcript_path": TRANSCRIPT, "cwd": CWD}
        if self.modern and with_prompt and self.prompt_id:
            p["prompt_id"] = self.prompt_id
        if with_mode:
            p["permission_mode"] = self.permission_mode
        p["hook_event_name"] = event
        return p

    def emit(self, event, payload):
        self.lines.append({"event": event, "payload": payload})

    def start(self, source, model=None):
        p = self._base("SessionStart", with_mode=False)
        p["source"] = source
        if model:
            p["model"] = model
        self.emit("session-start", p)

    def prompt(self, text):
        if self.modern:
            self.prompt_id = self._uuid()
        p = self._base("UserPromptSubmit")
        p["prompt"] = text
        self.emit("user-prompt-submit", p)

    def tool(self, name, tool_input, tool_response, duration_ms=None, extra=None):
        p = self._base("PostToolUse")
        if self.modern:
            p["effort"] = {"level": "high"}
            p["hook_event_name"] = p.pop("hook_event_name")
        p["tool_name"] = name
        p["tool_input"] = tool_input
        p["tool_response"] = tool_response
        p["tool_use_id"] = "toolu_01" + self._id("toolu", 22)
        if self.modern and duration_ms is not None:
            p["duration_ms"] = duration_ms
        if extra:
            p.update(extra)
        self.emit("post-tool-use", p)

    def stop(self, last_message):
        p = self._base("Stop")
        p["stop_hook_active"] = False
        if self.modern:
            p["last_assistant_message"] = last_message
            p["background_tasks"] = []
            p["session_crons"] = []
        self.emit("stop", p)

    def end(self, reason):
        p = self._base("SessionEnd", with_mode=not self.modern)
        p["reason"] = reason
        self.emit("session-end", p)

    # -- tools -------------------------------------------------------------------
    def read(self, rel, offset=None, limit=None, ms=4):
        lines = FS[rel].split("\n")
        start = offset or 1
        sel = lines[start - 1:start - 1 + limit] if limit else lines[start - 1:]
        inp = {"file_path": apath(rel)}
        if offset:
            inp["offset"] = offset
        if limit:
            inp["limit"] = limit
        self.tool("Read", inp, {"type": "text", "file": {
            "filePath": apath(rel), "content": "\n".join(sel), "numLines": len(sel),
            "startLine": start, "totalLines": len(lines)}}, ms)

    def edit(self, rel, old, new, ms=22):
        original = FS[rel]
        assert original.count(old) == 1, (rel, old)
        FS[rel] = original.replace(old, new, 1)
        self.tool("Edit",
                  {"file_path": apath(rel), "old_string": old, "new_string": new, "replace_all": False},
                  {"filePath": apath(rel), "oldString": old, "newString": new, "originalFile": original,
                   "structuredPatch": structured_patch(original, FS[rel]), "userModified": False,
                   "replaceAll": False}, ms)

    def write(self, rel, content, ms=9):
        assert rel not in FS
        FS[rel] = content
        self.tool("Write", {"file_path": apath(rel), "content": content},
                  {"type": "create", "filePath": apath(rel), "content": content, "structuredPatch": [],
                   "originalFile": None, "userModified": False}, ms)

    def bash(self, command, description, stdout="", stderr="", interrupted=False, ms=800, timeout=None):
        inp = {"command": command, "description": description}
        if timeout:
            inp["timeout"] = timeout
        self.tool("Bash", inp, {"stdout": stdout, "stderr": stderr, "interrupted": interrupted,
                                "isImage": False, "noOutputExpected": False}, ms)

    def grep_content(self, pattern, path, rels, ms=31):
        rx = re.compile(pattern)
        out = [f"{rel}:{i}:{l}" for rel in rels for i, l in enumerate(FS[rel].split("\n"), 1) if rx.search(l)]
        files = sorted({o.split(":", 1)[0] for o in out})
        self.tool("Grep", {"pattern": pattern, "path": apath(path), "output_mode": "content", "-n": True},
                  {"mode": "content", "numFiles": len(files), "filenames": [], "content": "\n".join(out),
                   "numLines": len(out)}, ms)

    def todos(self, items, previous, ms=2):
        todos = [{"content": c, "status": s, "activeForm": a} for c, s, a in items]
        self.tool("TodoWrite", {"todos": todos}, {"oldTodos": previous, "newTodos": todos}, ms)
        return todos


# ---------------------------------------------------------------------------------
# Rust compiler / cargo output helpers.
def rustc_error_e0599(rel, needle_line, method, similar):
    ln, col = line_of(rel, needle_line)
    text = FS[rel].split("\n")[ln - 1]
    mcol = text.find(method) + 1
    pad = " " * len(str(ln))
    return (
        f"error[E0599]: no method named `{method}` found for reference `&JwtKeys` in the current scope\n"
        f"{pad}--> {rel}:{ln}:{mcol}\n"
        f"{pad} |\n{ln} | {text}\n{pad} |{' ' * mcol}{'^' * len(method)}\n{pad} |\n"
        f"help: there is a method `{similar}` with a similar name\n{pad} |\n"
        f"{ln} - {text}\n{ln} + {text.replace(method, similar)}\n{pad} |\n\n"
    )


def rustc_error_e0308(rel, needle_line, arg):
    ln, _ = line_of(rel, needle_line)
    text = FS[rel].split("\n")[ln - 1]
    acol = text.find(arg) + 1
    mcol = text.find("revoke") + 1
    pad = " " * len(str(ln))
    return (
        "error[E0308]: mismatched types\n"
        f"{pad}--> {rel}:{ln}:{acol}\n{pad} |\n{ln} | {text}\n"
        f"{pad} |{' ' * mcol}{'-' * len('revoke')} {'^' * len(arg)} expected `&Uuid`, found `Uuid`\n"
        f"{pad} |{' ' * mcol}|\n{pad} |{' ' * mcol}arguments to this method are incorrect\n{pad} |\n"
        "note: method defined here\n"
        "  --> src/db/refresh_tokens.rs:31:18\n   |\n"
        "31 |     pub async fn revoke(&self, jti: &Uuid, expires_at: i64) -> Result<(), sqlx::Error> {\n"
        "   |                  ^^^^^^        ----------\n"
        "help: consider borrowing here\n"
        f"{pad} |\n{ln} | {text.replace(arg, '&' + arg, 1)}\n{pad} |{' ' * acol}+\n\n"
    )


CARGO_PKG = "orbit-api v0.9.3"


def cargo_compiled(profile, secs, runs):
    out = f"   Compiling {CARGO_PKG} ({CWD})\n"
    out += f"    Finished `{profile}` profile [unoptimized + debuginfo] target(s) in {secs}\n"
    for r in runs:
        out += f"     Running {r}\n"
    return out


def test_stdout(names, filtered=0, secs="0.04s"):
    out = f"\nrunning {len(names)} test{'s' if len(names) != 1 else ''}\n"
    out += "".join(f"test {n} ... ok\n" for n in names)
    out += (f"\ntest result: ok. {len(names)} passed; 0 failed; 0 ignored; 0 measured; "
            f"{filtered} filtered out; finished in {secs}\n\n")
    return out


# Dependency graph of a release build: (crate, version, edition, has build script, features).
CRATES = """
unicode-ident 1.0.14 2018 - default
proc-macro2 1.0.92 2021 b default,proc-macro
quote 1.0.37 2018 - default,proc-macro
syn 2.0.90 2021 - clone-impls,default,derive,full,parsing,printing,proc-macro,visit-mut
libc 0.2.168 2015 b default,std,extra_traits
cfg-if 1.0.0 2018 -
autocfg 1.4.0 2015 -
once_cell 1.20.2 2021 - alloc,default,race,std
serde 1.0.216 2018 b default,derive,rc,serde_derive,std
serde_derive 1.0.216 2015 - default
memchr 2.7.4 2021 - alloc,std
itoa 1.0.14 2018 -
ryu 1.0.18 2018 -
serde_json 1.0.133 2021 b default,raw_value,std
bytes 1.9.0 2018 - default,serde,std
pin-project-lite 0.2.15 2018 -
futures-core 0.3.31 2018 - alloc,std
futures-sink 0.3.31 2018 - alloc,std
futures-channel 0.3.31 2018 - alloc,futures-sink,sink,std
futures-task 0.3.31 2018 - alloc,std
futures-io 0.3.31 2018 - std
futures-macro 0.3.31 2018 -
slab 0.4.9 2018 b default,std
pin-utils 0.1.0 2018 -
futures-util 0.3.31 2018 - alloc,async-await,async-await-macro,channel,futures-io,io,sink,std
smallvec 1.13.2 2018 - const_generics,union
scopeguard 1.2.0 2015 -
lock_api 0.4.12 2021 b atomic_usize,default
parking_lot_core 0.9.10 2021 b
parking_lot 0.12.3 2021 - default
mio 1.0.3 2021 - net,os-ext,os-poll
socket2 0.5.8 2021 - all
tokio-macros 2.4.0 2021 -
tokio 1.42.0 2021 - bytes,fs,io-util,libc,macros,mio,net,rt,rt-multi-thread,signal,sync,time
tracing-core 0.1.33 2018 - default,once_cell,std
tracing-attributes 0.1.28 2018 -
tracing 0.1.41 2018 - attributes,default,log,std
log 0.4.22 2021 - std
fnv 1.0.7 2015 - default,std
http 1.2.0 2018 - default,std
http-body 1.0.1 2018 -
http-body-util 0.1.2 2018 -
httparse 1.9.5 2018 b default,std
httpdate 1.0.3 2021 -
atomic-waker 1.1.2 2018 -
try-lock 0.2.5 2015 -
want 0.3.1 2018 -
hyper 1.5.1 2021 - client,default,http1,http2,server
hyper-util 0.1.10 2021 - client,client-legacy,http1,http2,server,server-auto,service,tokio
tower-layer 0.3.3 2018 -
tower-service 0.3.3 2018 -
sync_wrapper 1.0.2 2021 - futures,futures-core
tower 0.5.2 2018 - futures-core,futures-util,log,make,pin-project-lite,sync_wrapper,tokio,tracing,util
mime 0.3.17 2015 -
percent-encoding 2.3.1 2018 - alloc,default,std
form_urlencoded 1.2.1 2018 - alloc,default,std
serde_urlencoded 0.7.1 2018 -
serde_path_to_error 0.1.16 2021 -
matchit 0.7.3 2021 - default
rustversion 1.0.18 2018 b
axum-core 0.4.5 2021 - tracing
axum-macros 0.4.2 2021 - default
async-trait 0.1.83 2021 -
axum 0.7.9 2021 - form,http1,http2,json,macros,matched-path,original-uri,query,tokio,tower-log,tracing,ws
bitflags 2.6.0 2021 - std
tower-http 0.6.2 2018 - cors,default,request-id,trace,util
getrandom 0.2.15 2018 - std
rand_core 0.6.4 2018 - alloc,getrandom,std
zerocopy 0.7.35 2018 - byteorder,derive,simd
ppv-lite86 0.2.20 2021 - simd,std
rand_chacha 0.3.1 2018 - std
rand 0.8.5 2018 - alloc,default,getrandom,libc,rand_chacha,std,std_rng
uuid 1.11.0 2018 - default,rng,serde,std,v4
num-traits 0.2.19 2021 b default,i128,std
iana-time-zone 0.1.61 2018 - fallback
core-foundation-sys 0.8.7 2018 -
chrono 0.4.39 2021 - alloc,clock,iana-time-zone,now,serde,std
base64 0.22.1 2018 - alloc,default,std
pem 3.0.4 2021 - default,std
num-integer 0.1.46 2018 - i128,std
num-bigint 0.4.6 2021 - default,std
thiserror-impl 1.0.69 2021 -
thiserror 1.0.69 2021 b
time-core 0.1.2 2021 -
powerfmt 0.2.0 2021 -
num-conv 0.1.0 2021 -
deranged 0.3.11 2021 - alloc,powerfmt,std
time-macros 0.2.19 2021 - formatting,parsing
time 0.3.37 2021 - alloc,formatting,macros,parsing,std
simple_asn1 0.6.2 2018 -
shlex 1.3.0 2015 - default,std
cc 1.2.4 2018 -
untrusted 0.9.0 2018 -
spin 0.9.8 2015 - once
ring 0.17.8 2021 b alloc,default,dev_urandom_fallback
jsonwebtoken 9.3.0 2021 - default,pem,simple_asn1,use_pem
thiserror-impl 2.0.7 2021 -
thiserror 2.0.7 2021 b default,std
anyhow 1.0.94 2018 b default,std
equivalent 1.0.1 2015 -
hashbrown 0.15.2 2021 - allocator-api2,default-hasher,equivalent,inline-more,raw-entry
allocator-api2 0.2.21 2018 - alloc
indexmap 2.7.0 2021 - default,std
foldhash 0.1.3 2021 -
crossbeam-utils 0.8.20 2021 b std
crossbeam-queue 0.3.11 2021 - alloc,std
concurrent-queue 2.5.0 2021 - std
parking 2.2.1 2018 -
event-listener 5.3.1 2021 - parking,std
typenum 1.17.0 2018 b
version_check 0.9.5 2015 -
generic-array 0.14.7 2015 b more_lengths
block-buffer 0.10.4 2018 -
crypto-common 0.1.6 2018 - std
subtle 2.6.1 2018 - std
digest 0.10.7 2018 - alloc,block-buffer,core-api,default,mac,std,subtle
cpufeatures 0.2.16 2018 -
sha2 0.10.8 2018 - default,std
hmac 0.12.1 2018 - reset
md-5 0.10.6 2018 - default,std
hex 0.4.3 2018 - alloc,default,std
tinyvec_macros 0.1.1 2018 -
tinyvec 1.8.0 2018 - alloc,default,tinyvec_macros
unicode-normalization 0.1.24 2018 - default,std
unicode-bidi 0.3.18 2018 - hardcoded-data,std
unicode-properties 0.1.3 2021 - default,emoji,general-category
stringprep 0.1.5 2021 -
whoami 1.5.2 2018 -
dotenvy 0.15.7 2018 -
home 0.5.9 2021 -
byteorder 1.5.0 2021 - default,std
atoi 2.0.0 2021 - std
crc-catalog 2.4.0 2018 -
crc 3.2.1 2021 -
tokio-stream 0.1.17 2021 - default,fs,time
hashlink 0.9.1 2018 -
idna 1.0.3 2018 - alloc,compiled_data,std
url 2.5.4 2018 - default,std
sqlformat 0.2.6 2021 -
sqlx-core 0.8.2 2021 - _rt-tokio,_tls-rustls,any,chrono,crc,default,json,migrate,offline,rustls,uuid
sqlx-postgres 0.8.2 2021 - chrono,json,migrate,offline,uuid
sqlx-macros-core 0.8.2 2021 - _rt-tokio,_tls-rustls,chrono,default,json,migrate,postgres,uuid
sqlx-macros 0.8.2 2021 - _rt-tokio,_tls-rustls,chrono,default,json,migrate,postgres,uuid
sqlx 0.8.2 2021 - _rt-tokio,chrono,json,macros,migrate,postgres,runtime-tokio,tls-rustls,uuid
zeroize 1.8.1 2021 - alloc,default
rustls-pki-types 1.10.1 2021 - alloc,default,std
rustls-webpki 0.102.8 2021 - alloc,ring,std
webpki-roots 0.26.7 2021 -
rustls 0.23.20 2021 b logging,ring,std,tls12
tokio-rustls 0.26.1 2021 - logging,ring,tls12
hyper-rustls 0.27.3 2021 - http1,http2,native-tokio,ring,tls12,webpki-tokio
aws-smithy-types 1.2.10 2021 - byte-stream-poll-next,http-body-0-4-x,rt-tokio
aws-smithy-async 1.2.2 2021 - rt-tokio
aws-smithy-runtime-api 1.7.3 2021 - client,http-02x
aws-smithy-http 0.60.11 2021 - event-stream
aws-smithy-json 0.61.1 2021 -
aws-smithy-query 0.60.7 2021 -
aws-smithy-xml 0.60.9 2021 -
aws-smithy-checksums 0.60.13 2021 -
aws-smithy-eventstream 0.60.5 2021 -
aws-smithy-runtime 1.7.4 2021 - client,connector-hyper-0-14-x,rt-tokio,tls-rustls
aws-credential-types 1.2.1 2021 - test-util
aws-types 1.3.3 2021 -
aws-sigv4 1.2.6 2021 - http0-compat,sign-eventstream,sign-http,sigv4a
aws-runtime 1.5.1 2021 - event-stream,http-02x,sigv4a
aws-sdk-sso 1.50.0 2021 - default,rt-tokio,rustls
aws-sdk-ssooidc 1.51.0 2021 - default,rt-tokio,rustls
aws-sdk-sts 1.51.0 2021 - default,rt-tokio,rustls
aws-config 1.5.10 2021 - behavior-version-latest,credentials-process,default,rt-tokio,rustls,sso
aws-sdk-s3 1.65.0 2021 - behavior-version-latest,default,rt-tokio,rustls,sigv4a
sharded-slab 0.1.7 2018 -
thread_local 1.1.8 2021 -
nu-ansi-term 0.46.0 2018 -
regex-syntax 0.8.5 2021 - std,unicode
regex-automata 0.4.9 2021 - alloc,meta,nfa-pike,std,syntax
matchers 0.1.0 2018 -
tracing-log 0.2.0 2018 - log-tracer,std
tracing-subscriber 0.3.19 2018 - ansi,env-filter,fmt,json,registry,smallvec,std,tracing-log
"""

DESCRIPTIONS = {
    "serde": "A generic serialization/deserialization framework",
    "tokio": "An event-driven, non-blocking I/O platform for writing asynchronous I/O\nbacked applications.\n",
    "axum": "Web framework that focuses on ergonomics and modularity",
    "sqlx": "🧰 The Rust SQL Toolkit. An async, pure Rust SQL crate featuring compile-time checked queries without a DSL. Supports PostgreSQL, MySQL, and SQLite.",
    "jsonwebtoken": "Create and decode JWTs in a strongly typed way.",
    "ring": "Safe, fast, small crypto using Rust.",
    "hyper": "A protective and efficient HTTP library for all.",
    "tracing": "Application-level tracing for Rust.\n",
    "chrono": "Date and time library for Rust",
    "uuid": "A library to generate and parse UUIDs.\n",
    "rustls": "Rustls is a modern TLS library written in Rust.",
    "aws-sdk-s3": "AWS SDK for Amazon Simple Storage Service",
}

HOME = "/Users/lucia"
RUSTC = f"{HOME}/.rustup/toolchains/stable-aarch64-apple-darwin/bin/rustc"
REGISTRY = f"{HOME}/.cargo/registry/src/index.crates.io-6f17d22bba15001f"
DEPS = f"{CWD}/target/release/deps"


def h16(*parts):
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:16]


def shq(s):
    if re.fullmatch(r"[\w./:@%+=,-]*", s) and s:
        return s
    return "'" + s.replace("'", "'\\''") + "'"


def release_build_output():
    crates = [l.split() for l in CRATES.strip().splitlines()]
    built, out, compiled = [], [], 0
    for fields in crates:
        name, ver, edition, build = fields[:4]
        feats = fields[4].split(",") if len(fields) > 4 else []
        cname = name.replace("-", "_")
        src = f"{REGISTRY}/{name}-{ver}"
        meta = h16(name, ver, "release")
        built.append((name, ver))
        if int(meta, 16) % 5 < 2:  # unchanged since the last release build
            out.append(f"       Fresh {name} v{ver}")
            continue
        compiled += 1
        out.append(f"   Compiling {name} v{ver}")
        env = {
            "CARGO": f"{HOME}/.rustup/toolchains/stable-aarch64-apple-darwin/bin/cargo",
            "CARGO_CRATE_NAME": cname,
            "CARGO_MANIFEST_DIR": src,
            "CARGO_PKG_AUTHORS": "",
            "CARGO_PKG_DESCRIPTION": DESCRIPTIONS.get(name, ""),
            "CARGO_PKG_HOMEPAGE": "",
            "CARGO_PKG_LICENSE": "MIT OR Apache-2.0",
            "CARGO_PKG_NAME": name,
            "CARGO_PKG_REPOSITORY": f"https://github.com/rust-lang/{name}" if name in ("libc", "cc") else "",
            "CARGO_PKG_RUST_VERSION": "1.63" if edition == "2021" else "",
            "CARGO_PKG_VERSION": ver,
            "CARGO_PKG_VERSION_MAJOR": ver.split(".")[0],
            "CARGO_PKG_VERSION_MINOR": ver.split(".")[1],
            "CARGO_PKG_VERSION_PATCH": ver.split(".")[2],
            "CARGO_PKG_VERSION_PRE": "",
        }
        envs = " ".join(f"{k}={shq(v)}" for k, v in env.items())
        cfgs = " ".join(f"--cfg 'feature=\"{f}\"'" for f in feats)
        check = " ".join(f'"{f}"' for f in feats)
        if build == "b":
            bmeta = h16(name, ver, "build")
            out.append(f"     Running `{envs} {RUSTC} --crate-name build_script_build --edition={edition} {src}/build.rs "
                       f"--error-format=json --json=diagnostic-rendered-ansi,artifacts,future-incompat --crate-type bin "
                       f"--emit=dep-info,link -C embed-bitcode=no -C debug-assertions=off {cfgs} --check-cfg 'cfg(docsrs)' "
                       f"--check-cfg 'cfg(feature, values({check}))' -C metadata={bmeta} -C extra-filename=-{bmeta} "
                       f"--out-dir {CWD}/target/release/build/{name}-{bmeta} -C strip=debuginfo -L dependency={DEPS} --cap-lints allow`")
            out.append(f"     Running `{CWD}/target/release/build/{name}-{bmeta}/build-script-build`")
        externs = " ".join(f"--extern {d.replace('-', '_')}={DEPS}/lib{d.replace('-', '_')}-{h16(d, v, 'release')}.rmeta"
                           for d, v in built[-4:-1])
        out.append(f"     Running `{envs} {RUSTC} --crate-name {cname} --edition={edition} {src}/src/lib.rs "
                   f"--error-format=json --json=diagnostic-rendered-ansi,artifacts,future-incompat --crate-type lib "
                   f"--emit=dep-info,metadata,link -C opt-level=3 -C embed-bitcode=no {cfgs} --check-cfg 'cfg(docsrs)' "
                   f"--check-cfg 'cfg(feature, values({check}))' -C metadata={meta} -C extra-filename=-{meta} "
                   f"--out-dir {DEPS} -C strip=debuginfo -L dependency={DEPS} {externs + ' ' if externs else ''}--cap-lints allow`")
    own = h16("orbit-api", "release")
    out.append(f"   Compiling {CARGO_PKG} ({CWD})")
    out.append(f"     Running `{RUSTC} --crate-name orbit_api --edition=2021 src/lib.rs --error-format=json "
               f"--json=diagnostic-rendered-ansi,artifacts,future-incompat --crate-type lib --emit=dep-info,metadata,link "
               f"-C opt-level=3 -C embed-bitcode=no -C metadata={own} -C extra-filename=-{own} --out-dir {DEPS} "
               f"-C strip=debuginfo -L dependency={DEPS} "
               + " ".join(f"--extern {d.replace('-', '_')}={DEPS}/lib{d.replace('-', '_')}-{h16(d, v, 'release')}.rlib"
                          for d, v in built if (d, v) != ("thiserror", "1.0.69") and d in ("axum", "tokio", "serde", "serde_json", "sqlx", "jsonwebtoken",
                                                     "chrono", "uuid", "tracing", "tower-http", "aws-config", "aws-sdk-s3",
                                                     "thiserror", "anyhow", "tracing-subscriber", "dotenvy"))
               + "`")
    out += [
        "warning: unused import: `tracing::debug`",
        " --> src/digest/mod.rs:7:5",
        "  |",
        "7 | use tracing::debug;",
        "  |     ^^^^^^^^^^^^^^",
        "  |",
        "  = note: `#[warn(unused_imports)]` on by default",
        "",
        "warning: `orbit-api` (lib) generated 1 warning (run `cargo fix --lib -p orbit-api` to apply 1 suggestion)",
        f"     Running `{RUSTC} --crate-name orbit --edition=2021 src/main.rs --crate-type bin --emit=dep-info,link "
        f"-C opt-level=3 -C embed-bitcode=no -C metadata={h16('orbit', 'bin')} --out-dir {DEPS} -C strip=debuginfo "
        f"-L dependency={DEPS} --extern orbit_api={DEPS}/liborbit_api-{own}.rlib`",
        "    Finished `release` profile [optimized] target(s) in 2m 47s",
    ]
    return "\n".join(out) + "\n", compiled + 1


# ---------------------------------------------------------------------------------
def laptop():
    s = Session("laptop-auth-refresh", modern=True, permission_mode="default")
    s.start("startup", model="claude-sonnet-4-5-20250929")
    s.prompt("Token refresh is broken on staging: once the access token expires, POST /api/session/refresh "
             "answers 401 even with a refresh token issued a minute earlier. Find out why and fix it properly. "
             "I want refresh tokens rotated (each one usable once), and put the logic in a function the "
             "websocket reconnect path can reuse too.")
    plan = [
        ["Find why /api/session/refresh rejects valid refresh tokens", "in_progress", "Finding why /api/session/refresh rejects valid refresh tokens"],
        ["Add renew_jwt with refresh-token rotation", "pending", "Adding renew_jwt with refresh-token rotation"],
        ["Use renew_jwt from the websocket reconnect path", "pending", "Using renew_jwt from the websocket reconnect path"],
        ["Add an integration test for refresh, reuse and expiry", "pending", "Adding an integration test for refresh, reuse and expiry"],
    ]
    todos = s.todos(plan, [])
    s.tool("Grep", {"pattern": "refresh_token", "output_mode": "files_with_matches"},
           {"mode": "files_with_matches", "filenames": [
               "src/auth/refresh.rs", "src/ws/reconnect.rs", "src/routes/session.rs", "src/db/refresh_tokens.rs",
               "tests/auth_login.rs", "migrations/20250415110000_create_refresh_tokens.sql"], "numFiles": 6}, 38)
    s.tool("Glob", {"pattern": "src/auth/**/*.rs"},
           {"filenames": [apath(f"src/auth/{f}.rs") for f in ("jwt", "middleware", "mod", "refresh")],
            "durationMs": 11, "numFiles": 4, "truncated": False}, 14)
    s.read("src/auth/refresh.rs")
    s.read("src/auth/jwt.rs", offset=1, limit=120)
    s.grep_content(r"AUDIENCE|set_audience", "src", ["src/auth/jwt.rs", "src/auth/refresh.rs"])
    vline, _ = line_of("src/ws/reconnect.rs", "state.keys.verify(")
    s.tool("Agent", {
        "description": "Find JwtKeys::verify callers",
        "prompt": "In this Rust service, list every call site of JwtKeys::verify (src/auth/jwt.rs) and say for "
                  "each one whether the token it verifies is an access token or a refresh token. Report file:line.",
        "subagent_type": "Explore"}, {
        "status": "completed",
        "prompt": "In this Rust service, list every call site of JwtKeys::verify (src/auth/jwt.rs) and say for "
                  "each one whether the token it verifies is an access token or a refresh token. Report file:line.",
        "agentId": "a3f0c9e1d27b4b6a8",
        "agentType": "Explore",
        "content": [{"type": "text", "text":
                     "Found 3 call sites of `JwtKeys::verify`:\n\n"
                     "1. src/auth/middleware.rs:27 — `keys.verify::<Claims>(bearer)` on the `Authorization: Bearer` "
                     "header. Access token. Correct.\n"
                     f"2. src/auth/refresh.rs:{line_of('src/auth/refresh.rs', 'state.keys.verify(')[0]} — "
                     "`state.keys.verify(&req.refresh_token)`. **Refresh token** verified with the access-token "
                     "validation (audience `orbit-api`).\n"
                     f"3. src/ws/reconnect.rs:{vline} — `state.keys.verify(&frame.refresh_token)`. **Refresh token**, "
                     "same problem; it also never checks or revokes the jti.\n\n"
                     "Refresh tokens are issued with `aud = REFRESH_AUDIENCE` (\"orbit-refresh\") in "
                     "`JwtKeys::issue`, so calls 2 and 3 can only fail with `InvalidAudience`."}],
        "resolvedModel": "claude-haiku-4-5-20251001",
        "totalDurationMs": 18342,
        "totalTokens": 21877,
        "totalToolUseCount": 6,
        "usage": {"input_tokens": 9, "cache_creation_input_tokens": 4123, "cache_read_input_tokens": 17321,
                  "output_tokens": 424, "service_tier": "standard"},
        "toolStats": {"readCount": 3, "searchCount": 3, "bashCount": 0, "editFileCount": 0, "linesAdded": 0,
                      "linesRemoved": 0, "otherToolCount": 0}}, 18391)
    s.tool("WebFetch", {
        "url": "https://docs.rs/jsonwebtoken/9.3.0/jsonwebtoken/struct.Validation.html",
        "prompt": "How does Validation check the aud claim? What error is returned when set_audience is used and "
                  "the token's aud is different? Is leeway applied to exp?"}, {
        "bytes": 48213, "code": 200, "codeText": "OK",
        "result": "- `aud` is only checked when `validate_aud` is true (the default) and `set_audience` has been "
                  "called. If the token's `aud` is not one of the configured audiences, decoding fails with "
                  "`ErrorKind::InvalidAudience`.\n- If the token has an `aud` claim but no audience was configured, "
                  "decoding also fails (`InvalidAudience`) unless `validate_aud` is set to false.\n- `leeway` "
                  "(seconds, default 60) is applied to `exp` and `nbf`; with `leeway = 0` a token is rejected the "
                  "second it expires.\n- `set_issuer` makes `iss` required and checked the same way "
                  "(`InvalidIssuer`).",
        "durationMs": 2381,
        "url": "https://docs.rs/jsonwebtoken/9.3.0/jsonwebtoken/struct.Validation.html"}, 2390)
    s.read(".env")

    # 1st attempt: renew_jwt, referring to a method that does not exist yet.
    s.edit("src/auth/refresh.rs",
           "use crate::auth::jwt::{Claims, TokenKind};\nuse crate::error::ApiError;",
           "use crate::auth::jwt::{Claims, JwtKeys, TokenKind};\nuse crate::db::refresh_tokens::RefreshTokenStore;\n"
           "use crate::error::ApiError;")
    s.edit("src/auth/refresh.rs", FS["src/auth/refresh.rs"][FS["src/auth/refresh.rs"].index("pub async fn refresh_session"):],
           """pub async fn refresh_session(
    State(state): State<AppState>,
    Json(req): Json<RefreshRequest>,
) -> Result<Json<TokenPair>, ApiError> {
    let pair = renew_jwt(&state.keys, &state.refresh_store, &req.refresh_token).await?;
    Ok(Json(pair))
}

/// Checks a refresh token, revokes it (each refresh token is usable once) and issues
/// a new pair.
///
/// Refresh tokens carry the `orbit-refresh` audience, so they must never go through
/// `JwtKeys::verify`, which only accepts access tokens.
pub async fn renew_jwt(
    keys: &JwtKeys,
    store: &RefreshTokenStore,
    refresh_token: &str,
) -> Result<TokenPair, ApiError> {
    let claims: Claims = keys.verify_refresh(refresh_token)?;
    if claims.kind != TokenKind::Refresh {
        return Err(ApiError::Unauthorized("not a refresh token"));
    }
    if store.is_revoked(&claims.jti).await? {
        return Err(ApiError::Unauthorized("refresh token already used"));
    }
    store.revoke(claims.jti, claims.exp).await?;
    Ok(TokenPair {
        access_token: keys.issue(&claims.sub, TokenKind::Access)?,
        refresh_token: keys.issue(&claims.sub, TokenKind::Refresh)?,
        expires_in: keys.access_ttl().num_seconds(),
    })
}
""")
    s.bash("cargo test --lib auth", "Run the auth unit tests",
           stderr=f"   Compiling {CARGO_PKG} ({CWD})\n"
           + rustc_error_e0599("src/auth/refresh.rs", "keys.verify_refresh(", "verify_refresh", "verify")
           + rustc_error_e0308("src/auth/refresh.rs", "store.revoke(claims.jti", "claims.jti")
           + "Some errors have detailed explanations: E0308, E0599.\n"
             "For more information about an error, try `rustc --explain E0308`.\n"
             "error: could not compile `orbit-api` (lib test) due to 2 previous errors\n",
           ms=6120)
    s.edit("src/auth/jwt.rs", """    /// Verifies an access token: signature, expiry, issuer and audience.
    pub fn verify<T: DeserializeOwned>(&self, token: &str) -> Result<T, ApiError> {
        let mut validation = Validation::new(Algorithm::EdDSA);
        validation.set_audience(&[ACCESS_AUDIENCE]);
        validation.set_issuer(&[ISSUER]);
        validation.leeway = 0;
        let data = decode::<T>(token, &self.decoding, &validation)?;
        Ok(data.claims)
    }""", """    /// Verifies an access token: signature, expiry, issuer and audience.
    pub fn verify<T: DeserializeOwned>(&self, token: &str) -> Result<T, ApiError> {
        self.verify_for(token, ACCESS_AUDIENCE)
    }

    /// Verifies a refresh token: same checks, but against the refresh audience.
    pub fn verify_refresh<T: DeserializeOwned>(&self, token: &str) -> Result<T, ApiError> {
        self.verify_for(token, REFRESH_AUDIENCE)
    }

    fn verify_for<T: DeserializeOwned>(&self, token: &str, audience: &str) -> Result<T, ApiError> {
        let mut validation = Validation::new(Algorithm::EdDSA);
        validation.set_audience(&[audience]);
        validation.set_issuer(&[ISSUER]);
        validation.leeway = 0;
        let data = decode::<T>(token, &self.decoding, &validation)?;
        Ok(data.claims)
    }""")
    s.edit("src/auth/refresh.rs", "    store.revoke(claims.jti, claims.exp).await?;",
           "    store.revoke(&claims.jti, claims.exp).await?;")
    s.edit("src/auth/jwt.rs", """        token.push('x');
        assert!(keys.verify::<Claims>(&token).is_err());
    }
""", """        token.push('x');
        assert!(keys.verify::<Claims>(&token).is_err());
    }

    #[test]
    fn refresh_token_passes_verify_refresh_only() {
        let keys = test_keys();
        let token = keys.issue("user-1", TokenKind::Refresh).unwrap();
        let claims: Claims = keys.verify_refresh(&token).unwrap();
        assert_eq!(claims.kind, TokenKind::Refresh);
        assert!(keys.verify::<Claims>(&token).is_err());
    }

    #[test]
    fn access_token_is_rejected_by_verify_refresh() {
        let keys = test_keys();
        let token = keys.issue("user-1", TokenKind::Access).unwrap();
        assert!(keys.verify_refresh::<Claims>(&token).is_err());
    }
""")
    unit = ["auth::jwt::tests::access_token_is_rejected_by_verify_refresh", "auth::jwt::tests::issues_and_verifies_access_token",
            "auth::jwt::tests::refresh_token_passes_verify_refresh_only", "auth::jwt::tests::rejects_tampered_token",
            "auth::middleware::tests::missing_bearer_is_401", "auth::middleware::tests::expired_bearer_is_401",
            "auth::middleware::tests::valid_bearer_sets_user"]
    s.bash("cargo test --lib auth", "Run the auth unit tests",
           stdout=test_stdout(sorted(unit), filtered=18),
           stderr=cargo_compiled("test", "7.84s", ["unittests src/lib.rs (target/debug/deps/orbit_api-3f9c1d2a7b6e4f10)"]),
           ms=9870)
    s.read("src/ws/reconnect.rs")
    s.edit("src/ws/reconnect.rs", """    let claims: Claims = state.keys.verify(&frame.refresh_token)?;
    let access_token = state.keys.issue(&claims.sub, TokenKind::Access)?;
    let refresh_token = state.keys.issue(&claims.sub, TokenKind::Refresh)?;
    Ok(Resumed {
        access_token,
        refresh_token,""", """    let pair = renew_jwt(&state.keys, &state.refresh_store, &frame.refresh_token).await?;
    Ok(Resumed {
        access_token: pair.access_token,
        refresh_token: pair.refresh_token,""")
    s.edit("src/ws/reconnect.rs", "use crate::auth::jwt::{Claims, TokenKind};", "use crate::auth::refresh::renew_jwt;")
    plan[0][1], plan[1][1], plan[2][1], plan[3][1] = "completed", "completed", "completed", "in_progress"
    todos = s.todos(plan, todos)
    s.read("tests/common/mod.rs")
    s.edit("tests/common/mod.rs",
           '    let database_url = std::env::var("DATABASE_URL").expect("DATABASE_URL must be set for integration tests");',
           '    // Same credentials as the `db` service in docker-compose.yml.\n'
           '    let database_url = std::env::var("DATABASE_URL")\n'
           f'        .unwrap_or_else(|_| "{PG_URL}".to_owned());')
    s.write("tests/refresh_flow.rs", f"""//! End-to-end refresh: rotation, reuse and expiry.

mod common;

use reqwest::StatusCode;
use serde_json::{{json, Value}};

/// A refresh token for `fake-user-0000` that expired on 2024-01-01 (signed with the dev key).
const EXPIRED_REFRESH: &str = "{JWT}";

async fn login(app: &common::TestApp) -> Value {{
    app.client
        .post(app.url("/api/session/login"))
        .json(&common::seed_user_login())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}}

async fn refresh(app: &common::TestApp, token: &str) -> reqwest::Response {{
    app.client
        .post(app.url("/api/session/refresh"))
        .json(&json!({{ "refresh_token": token }}))
        .send()
        .await
        .unwrap()
}}

#[tokio::test]
async fn refresh_returns_a_new_pair() {{
    let app = common::spawn_app().await;
    let first = login(&app).await;
    let res = refresh(&app, first["refresh_token"].as_str().unwrap()).await;
    assert_eq!(res.status(), StatusCode::OK);
    let second: Value = res.json().await.unwrap();
    assert_ne!(second["refresh_token"], first["refresh_token"]);
    assert_eq!(second["expires_in"], 900);
}}

#[tokio::test]
async fn a_refresh_token_works_only_once() {{
    let app = common::spawn_app().await;
    let first = login(&app).await;
    let token = first["refresh_token"].as_str().unwrap();
    assert_eq!(refresh(&app, token).await.status(), StatusCode::OK);
    assert_eq!(refresh(&app, token).await.status(), StatusCode::UNAUTHORIZED);
}}

#[tokio::test]
async fn an_access_token_cannot_refresh() {{
    let app = common::spawn_app().await;
    let first = login(&app).await;
    let res = refresh(&app, first["access_token"].as_str().unwrap()).await;
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
}}

#[tokio::test]
async fn an_expired_refresh_token_is_rejected() {{
    let app = common::spawn_app().await;
    assert_eq!(refresh(&app, EXPIRED_REFRESH).await.status(), StatusCode::UNAUTHORIZED);
}}
""")
    s.bash("docker compose up db", "Start Postgres for the integration tests",
           stdout=" Network orbit-api_default  Creating\n Network orbit-api_default  Created\n"
                  " Container orbit-api-db-1  Creating\n Container orbit-api-db-1  Created\nAttaching to db-1\n"
                  "db-1  | The files belonging to this database system will be owned by user \"postgres\".\n"
                  "db-1  | \ndb-1  | PostgreSQL init process complete; ready for start up.\ndb-1  | \n"
                  "db-1  | LOG:  starting PostgreSQL 16.6 (Debian 16.6-1.pgdg120+1) on aarch64-unknown-linux-gnu\n"
                  "db-1  | LOG:  listening on IPv4 address \"0.0.0.0\", port 5432\n"
                  "db-1  | LOG:  database system is ready to accept connections\n",
           stderr="Command timed out after 2m 0.0s", interrupted=True, ms=120031)
    s.bash("docker compose up -d db && cargo test --test refresh_flow",
           "Start Postgres detached, then run the refresh integration tests",
           stdout=test_stdout(["a_refresh_token_works_only_once", "an_access_token_cannot_refresh",
                               "an_expired_refresh_token_is_rejected", "refresh_returns_a_new_pair"], secs="0.41s"),
           stderr=" Container orbit-api-db-1  Running\n"
                  + cargo_compiled("test", "11.02s", ["tests/refresh_flow.rs (target/debug/deps/refresh_flow-8c27e5f0a1d94b3e)"]),
           ms=14210)
    s.bash("cargo clippy --all-targets -- -D warnings", "Lint everything with warnings as errors",
           stderr=f"    Checking {CARGO_PKG} ({CWD})\n"
                  "    Finished `dev` profile [unoptimized + debuginfo] target(s) in 4.12s\n", ms=4630)
    plan[3][1] = "completed"
    s.todos(plan, todos)
    s.stop("Fixed. `refresh_session` verified refresh tokens with `JwtKeys::verify`, which only accepts the "
           "`orbit-api` audience, while refresh tokens are issued for `orbit-refresh` — so every refresh failed "
           "with `InvalidAudience` and the handler mapped that to 401.\n\n"
           "- src/auth/jwt.rs: new `verify_refresh` (shared `verify_for`), plus two unit tests.\n"
           "- src/auth/refresh.rs: new `renew_jwt(keys, store, token)` — verifies, rejects reused tokens, revokes "
           "the old `jti` and issues a new pair. `refresh_session` now just calls it.\n"
           "- src/ws/reconnect.rs: `resume` uses `renew_jwt` too (it had the same bug).\n"
           "- tests/refresh_flow.rs: rotation, reuse → 401, access token → 401, expired → 401.\n\n"
           "Unit tests, the new integration tests and clippy all pass.")

    s.prompt("Looks good. Is this the same thing as GitHub issue #142 in acme/orbit-api? If it is, commit on a "
             "branch with a message that closes it.")
    issue = {
        "id": 2741190331, "number": 142, "state": "open", "locked": False,
        "title": "Mobile clients logged out every 15 minutes (refresh returns 401)",
        "body": "Since 0.9.2 the iOS and Android apps log users out as soon as the access token expires.\n\n"
                "Our CI smoke job reproduces it every time:\n\n```\n$ env | grep -E '^(ORBIT|GH)_'\n"
                "ORBIT_BASE_URL=https://staging.orbit.example.com\n"
                f"GH_TOKEN={GITHUB_TOKEN}\n$ ./smoke.sh refresh\n"
                "POST /api/session/login   -> 200\n"
                "POST /api/session/refresh -> 401 {\"error\":\"invalid_token\",\"detail\":\"InvalidAudience\"}\n```\n\n"
                "Rolling back to 0.9.1 fixes it.",
        "user": {"login": "dani-ops", "id": 58120447, "type": "User", "html_url": "https://github.com/dani-ops"},
        "labels": [{"id": 7309921001, "name": "bug", "color": "d73a4a", "description": "Something isn't working"},
                   {"id": 7309921188, "name": "area/auth", "color": "1d76db", "description": ""}],
        "assignees": [{"login": "lucia-dev", "id": 40211876, "type": "User"}],
        "milestone": {"number": 7, "title": "0.9.4", "state": "open", "open_issues": 3, "closed_issues": 11},
        "comments": 2,
        "reactions": {"total_count": 4, "+1": 4, "-1": 0, "laugh": 0, "hooray": 0, "confused": 0, "heart": 0},
        "author_association": "CONTRIBUTOR",
        "html_url": "https://github.com/acme/orbit-api/issues/142",
    }
    s.tool("mcp__github__get_issue", {"owner": "acme", "repo": "orbit-api", "issue_number": 142},
           [{"type": "text", "text": json.dumps(issue, ensure_ascii=False)}], 612,
           extra={"mcp_server": {"name": "github", "source": "user"}})
    s.bash("git status --short && git diff --stat", "Show what changed",
           stdout=" M src/auth/jwt.rs\n M src/auth/refresh.rs\n M src/ws/reconnect.rs\n M tests/common/mod.rs\n"
                  "?? tests/refresh_flow.rs\n"
                  " src/auth/jwt.rs      | 30 ++++++++++++++++++++++++++++--\n"
                  " src/auth/refresh.rs  | 43 +++++++++++++++++++++++++++++++++----------\n"
                  " src/ws/reconnect.rs  | 10 ++++------\n"
                  " tests/common/mod.rs  |  4 +++-\n"
                  " 4 files changed, 69 insertions(+), 18 deletions(-)\n", ms=96)
    s.bash("git log --oneline -5", "Recent commits, for message style",
           stdout="b71d0e4 (HEAD -> main, origin/main) chore: release 0.9.3\n"
                  "9a2c6f1 feat(ws): resume event stream after reconnect\n"
                  "e04b7d2 fix(db): close idle pool connections on shutdown\n"
                  "51f3a88 feat(auth): separate audience for refresh tokens\n"
                  "c3e9a10 chore(deps): bump axum to 0.7.9\n", ms=41)
    s.bash("git checkout -b fix/refresh-audience && git add src/auth/jwt.rs src/auth/refresh.rs src/ws/reconnect.rs "
           "tests/common/mod.rs tests/refresh_flow.rs && git commit -m \"$(cat <<'EOF'\n"
           "fix(auth): verify refresh tokens against the refresh audience\n\n"
           "Refresh tokens are issued for `orbit-refresh` since 51f3a88, but the refresh\n"
           "endpoint and the websocket reconnect still checked them with the access-token\n"
           "validation, so every refresh failed with InvalidAudience (401).\n\n"
           "Add JwtKeys::verify_refresh and renew_jwt, which also rotates refresh tokens\n"
           "(each one is usable once).\n\nFixes #142\n\n"
           "🤖 Generated with [Claude Code](https://claude.com/claude-code)\n\n"
           "Co-Authored-By: Claude <noreply@anthropic.com>\nEOF\n)\"",
           "Create a branch and commit the fix",
           stdout="[fix/refresh-audience 4e1b9c2] fix(auth): verify refresh tokens against the refresh audience\n"
                  " 5 files changed, 143 insertions(+), 18 deletions(-)\n create mode 100644 tests/refresh_flow.rs\n",
           stderr="Switched to a new branch 'fix/refresh-audience'\n", ms=388)
    s.stop("Yes — #142 is this bug: their smoke log shows `InvalidAudience` on /api/session/refresh, and 0.9.2 is "
           "the first release with 51f3a88 (separate refresh audience). Committed on `fix/refresh-audience` as "
           "4e1b9c2 with `Fixes #142`.\n\nHeads-up: the issue body contains what looks like a real GitHub token "
           "(`GH_TOKEN=ghp_…`) in the pasted CI log. Ask dani-ops to revoke it and edit the issue.")

    s.prompt(f"Last thing before I leave. I'm working from home tomorrow ({PRIVATE}) and the VPN there is "
             "flaky, so warm the release build now and show me the verbose output. Also run the ignored "
             f"support-digest e2e test; it needs a key, use this throwaway one: {ANTHROPIC_KEY}")
    s.bash(f"export ANTHROPIC_API_KEY={ANTHROPIC_KEY} && cargo test --features llm-digest --test support_digest -- --ignored",
           "Run the ignored support-digest e2e test with the provided key",
           stdout=test_stdout(["digest_summarises_a_ticket_thread"], secs="6.88s"),
           stderr=cargo_compiled("test", "38.40s", ["tests/support_digest.rs (target/debug/deps/support_digest-0d4e61b9a7c23f58)"]),
           ms=46120)
    build, ncrates = release_build_output()
    s.bash("cargo build --release -v 2>&1", "Verbose release build", stdout=build, ms=167480, timeout=600000)
    s.stop(f"The release build finished in 2m 47s ({ncrates} crates recompiled, the rest were fresh; target/release is now "
           "warm) with one warning: an unused `tracing::debug` import in src/digest/mod.rs. The support-digest e2e "
           "test passed. I did not write the key anywhere; it only lived in that one shell command.")
    s.end("prompt_input_exit")
    return s.lines


def desktop():
    s = Session("desktop-db-migrations", modern=False, permission_mode="acceptEdits")
    mig = "migrations/20250610120000_sessions_add_device.sql"
    s.start("startup")
    s.prompt("¿por qué falla la migración de la tabla de sesiones? En el sobremesa `sqlx migrate run` se para "
             "en la 20250610120000 y no entiendo qué le pasa.")
    s.tool("Glob", {"pattern": "migrations/*.sql"},
           {"filenames": [apath(f"migrations/{f}.sql") for f in (
               "20250301093000_create_users", "20250320101500_create_devices", "20250415110000_create_refresh_tokens",
               "20250502164500_create_sessions", "20250610120000_sessions_add_device")],
            "durationMs": 6, "numFiles": 5, "truncated": False})
    s.read(mig)
    s.bash(f"sqlx migrate run --database-url {PG_URL} 2>&1 | tail -5", "Reproducir el fallo de la migración",
           stdout="Applied 20250502164500/migrate create sessions (18.442ms)\n"
                  "error: while executing migration 20250610120000: error returned from database: "
                  "column \"device_id\" of relation \"sessions\" contains null values\n")
    s.bash(f"psql \"{PG_URL}\" -c \"SELECT count(*) AS total, count(*) FILTER (WHERE user_id IN "
           "(SELECT user_id FROM devices WHERE is_primary)) AS con_dispositivo FROM sessions\"",
           "Contar sesiones existentes y cuántas tienen dispositivo principal",
           stdout=" total | con_dispositivo \n-------+-----------------\n  1287 |            1254\n(1 row)\n\n")
    s.tool("Task", {
        "description": "Buscar cómo se asocian dispositivos",
        "prompt": "Busca en src/ y migrations/ cómo se relacionan devices, users y sessions. ¿Hay un dispositivo "
                  "principal por usuario? ¿Qué código crea sesiones y si ya rellena device_id?",
        "subagent_type": "general-purpose"}, {
        "content": [{"type": "text", "text":
                     "- `devices` (20250320101500) tiene `user_id` y `is_primary`, con un índice único parcial "
                     "`devices_one_primary_per_user` (como mucho un principal por usuario).\n"
                     "- Las sesiones se crean en src/routes/session.rs:58 (`login`) con un INSERT que todavía no "
                     "incluye `device_id`.\n"
                     "- 33 de las 1287 sesiones son de usuarios sin dispositivo principal (cuentas de servicio "
                     "antiguas); no se pueden rellenar."}],
        "totalDurationMs": 24107, "totalTokens": 18320, "totalToolUseCount": 7,
        "usage": {"input_tokens": 12, "cache_creation_input_tokens": 3350, "cache_read_input_tokens": 14511,
                  "output_tokens": 447, "service_tier": "standard"}})
    s.edit(mig, "ALTER TABLE sessions ALTER COLUMN device_id SET NOT NULL;",
           "-- Existing sessions: bind them to the user's primary device; sessions of users\n"
           "-- without one (old service accounts) cannot be bound and are dropped.\n"
           "UPDATE sessions s SET device_id = d.id\n    FROM devices d\n"
           "    WHERE d.user_id = s.user_id AND d.is_primary;\n"
           "DELETE FROM sessions WHERE device_id IS NULL;\n"
           "ALTER TABLE sessions ALTER COLUMN device_id SET NOT NULL;")
    s.bash(f"sqlx migrate run --database-url {PG_URL}", "Aplicar la migración corregida",
           stdout="Applied 20250610120000/migrate sessions add device (52.804ms)\n")
    s.stop("")
    s.prompt("vale, gracias. ¿Y el renew_jwt que hicimos ayer en el portátil ya tiene en cuenta el device_id, o hay "
             "que tocarlo?")
    s.grep_content(r"renew_jwt", "src", ["src/auth/refresh.rs", "src/ws/reconnect.rs"])
    s.read("src/auth/refresh.rs")
    s.stop("")
    s.end("prompt_input_exit")
    return s.lines


# ---------------------------------------------------------------------------------
EVENTS = {"session-start": "SessionStart", "user-prompt-submit": "UserPromptSubmit",
          "post-tool-use": "PostToolUse", "stop": "Stop", "session-end": "SessionEnd"}


def check(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    assert lines[-1] == "", f"{path}: missing final newline"
    for n, raw in enumerate(lines[:-1], 1):
        obj = json.loads(raw)
        assert set(obj) == {"event", "payload"}, (path, n)
        p = obj["payload"]
        assert p["hook_event_name"] == EVENTS[obj["event"]], (path, n)
        assert p["session_id"] == SESSION and p["cwd"] == CWD and p["transcript_path"] == TRANSCRIPT, (path, n)
        assert "timestamp" not in p, (path, n)
    return len(lines) - 1


def main():
    sessions = {"laptop-auth-refresh.jsonl": laptop(), "desktop-db-migrations.jsonl": desktop()}
    for name, lines in sessions.items():
        with open(os.path.join(HERE, name), "w", encoding="utf-8", newline="\n") as f:
            for obj in lines:
                f.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
    with open(os.path.join(HERE, "SECRETS.txt"), "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(s + "\n" for s in SECRETS))
    everything = "".join(open(os.path.join(HERE, n), encoding="utf-8").read() for n in sessions)
    for secret in SECRETS:
        assert secret in everything, secret
    for name in sessions:
        size = os.path.getsize(os.path.join(HERE, name))
        print(f"{name}: {check(os.path.join(HERE, name))} lines, {size} bytes")


if __name__ == "__main__":
    sys.exit(main())
