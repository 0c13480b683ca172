#!/usr/bin/env python3
"""Generates the SOLARIA Memory retrieval-quality evaluation set.

Writes eval/corpus.jsonl (synthetic Claude Code sessions: tool calls, prompts,
notes) and eval/queries.jsonl (labelled queries whose targets are corpus keys).

Deterministic: stdlib only, one seeded RNG, no iteration over unordered sets.
Run from anywhere:   python3 eval/generate.py          (writes + prints a summary)
                     python3 eval/generate.py --report (also lists every query on
                                                        which a BM25 baseline does
                                                        not rank a target first)
"""

import json
import math
import os
import re
import sys
import textwrap
import unicodedata
from collections import Counter, defaultdict
from random import Random

SEED = 20240501
HERE = os.path.dirname(os.path.abspath(__file__))

MIN_PER_KIND = {
    "exact_identifier": 50,
    "keyword": 40,
    "paraphrase": 60,
    "paraphrase_es": 30,
    "cross_language": 40,
    "recurring_identifier": 15,
    "long_output": 32,
}
MIN_CROSS_EN_TO_ES = 10  # cross_language queries in English about Spanish targets


def t(s):
    """Dedented, stripped multi-line text."""
    return textwrap.dedent(s).strip("\n")


def one_line(text, limit=120):
    """The capture hook's title rule: first line, at most `limit` chars."""
    line = text.strip().split("\n")[0].strip()
    if len(line) <= limit:
        return line
    return line[: limit - 1] + "\u2026"


# ----------------------------------------------------------------------------
# Record constructors (shared by targets, distractors and noise)
# ----------------------------------------------------------------------------

def bash(cmd, out="", desc=None):
    title = "Bash: " + (one_line(cmd, 70) + " \u2014 " + desc if desc else cmd)
    return dict(kind="tool_use", tool_name="Bash", title=one_line(title),
                input=cmd, response=out)


def _diff(old, new):
    lines = ["- " + l for l in old.split("\n")] if old else []
    lines += ["+ " + l for l in new.split("\n")] if new else []
    return "\n".join(lines)


def edit(path, old, new):
    o = old.count("\n") + 1 if old else 0
    n = new.count("\n") + 1 if new else 0
    return dict(kind="tool_use", tool_name="Edit", title="Edit " + path,
                input=path + "\n" + _diff(old, new),
                response="Edited %s (+%d/-%d lines)" % (path, n, o))


def read(path, content):
    lines = content.split("\n")
    start = 1 + (sum(map(ord, path)) % 40)
    numbered = "\n".join("%5d\t%s" % (start + i, l) for i, l in enumerate(lines))
    return dict(kind="tool_use", tool_name="Read", title="Read " + path,
                input=path, response=numbered)


def write(path, content):
    return dict(kind="tool_use", tool_name="Write", title="Write " + path,
                input=path + "\n" + content,
                response="File created successfully at: " + path)


def grep(pattern, path, out):
    return dict(kind="tool_use", tool_name="Grep",
                title='Grep "%s" in %s' % (pattern, path),
                input="%s in %s" % (pattern, path), response=out)


def prompt(text):
    return dict(kind="prompt", tool_name=None, title=one_line(text),
                input=text, response="")


def note(text):
    return dict(kind="note", tool_name=None, title=one_line(text),
                input=text, response="")


# ----------------------------------------------------------------------------
# Fact registry: targets (with their queries) and distractors
# ----------------------------------------------------------------------------

FACTS = []        # dicts: id, project, lang, records, queries
DISTRACTORS = []  # dicts: project, lang, record
_FACT_IDS = set()


def F(fid, project, records, q, lang="en"):
    """A memorable fact: `records` are all correct answers to every query in `q`.

    q items: (kind, text) or (kind, text, [other fact ids whose records are
    also correct answers]). Query language defaults: paraphrase -> en,
    paraphrase_es -> es, cross_language -> the other language, others -> the
    fact's language.
    """
    assert fid not in _FACT_IDS, fid
    assert project in PROJECTS, project
    _FACT_IDS.add(fid)
    FACTS.append(dict(id=fid, project=project, lang=lang, records=records, queries=q))


def D(project, record, lang="en"):
    """A distractor: same topic as some target, different project or detail."""
    assert project in PROJECTS, project
    DISTRACTORS.append(dict(project=project, lang=lang, record=record))


PROJECTS = {
    "billing-api": "Rust / axum / sqlx / PostgreSQL / Stripe",
    "auth-service": "Go / chi / PostgreSQL / Redis",
    "crm-backend": "Python / Django / DRF / Celery",
    "web-dashboard": "TypeScript / React / Vite",
    "mobile-app": "TypeScript / React Native / Expo",
    "notifications-svc": "TypeScript / Node.js / BullMQ / Redis",
    "data-pipeline": "Python / Airflow / dbt / Spark / Snowflake",
    "infra": "Terraform / AWS / Kubernetes / Helm",
}

# ============================================================================
# billing-api (Rust / axum)
# ============================================================================

F("bill_renew_jwt", "billing-api", [
    prompt("billing-api returns 401 as soon as the access token expires even though the "
           "refresh cookie is still valid. handle it in the auth middleware"),
    edit("src/auth/refresh.rs",
         t("""
         if claims.exp < now {
             return Err(AuthError::Expired);
         }"""),
         t("""
         if claims.exp < now {
             // access token expired: mint a fresh one from the refresh cookie
             let fresh = renew_jwt(&state.keys, &refresh_cookie).await?;
             return Ok(with_new_token(req, fresh));
         }""")),
], q=[
    ("exact_identifier", "renew_jwt"),
    ("paraphrase", "what does the Rust service do when a caller's short-lived credential has lapsed mid-request"),
    ("cross_language", "¿dónde renovamos el JWT cuando caduca el access token en billing?"),
])
D("billing-api", read("src/auth/keys.rs", t("""
    /// Loads the RS256 key pair used to sign and verify JWTs.
    pub fn load_keys(cfg: &Config) -> anyhow::Result<Keys> {
        let private = std::fs::read(&cfg.jwt_private_key_path)?;
        let public = std::fs::read(&cfg.jwt_public_key_path)?;
        Ok(Keys::from_pem(&private, &public)?)
    }""")))

F("bill_invoice_index", "billing-api", [
    write("migrations/20240312_add_invoices_customer_idx.sql", t("""
        -- GET /customers/:id/invoices was slow: seq scan on invoices (1.8s with 4M rows)
        CREATE INDEX CONCURRENTLY invoices_customer_id_idx
            ON invoices (customer_id, issued_at DESC);""")),
    bash('psql "$BILLING_DB" -c "EXPLAIN ANALYZE SELECT * FROM invoices WHERE customer_id = 8812 '
         'ORDER BY issued_at DESC LIMIT 50"', t("""
        Limit  (cost=0.43..12.10 rows=50 width=212) (actual time=0.051..0.210 rows=50 loops=1)
          ->  Index Scan using invoices_customer_id_idx on invoices  (cost=0.43..1022.5 rows=4210 width=212)
                Index Cond: (customer_id = 8812)
        Planning Time: 0.118 ms
        Execution Time: 0.262 ms""")),
], q=[
    ("exact_identifier", "invoices_customer_id_idx"),
    ("keyword", "why were customer invoices slow"),
    ("paraphrase", "what made pulling up one client's bills fast again"),
])
D("billing-api", write("migrations/20240220_payments_invoice_fk.sql", t("""
    ALTER TABLE payments ADD CONSTRAINT payments_invoice_fk
        FOREIGN KEY (invoice_id) REFERENCES invoices (id);
    CREATE INDEX payments_invoice_id_idx ON payments (invoice_id);""")))
D("crm-backend", bash("python manage.py sqlmigrate deals 0038", t("""
    BEGIN;
    --
    -- Alter field company on deal
    --
    CREATE INDEX "crm_deal_company_id_6b1f3c_idx" ON "crm_deal" ("company_id");
    COMMIT;""")))

F("bill_e0502", "billing-api", [
    bash("cargo build -p ledger", t("""
       Compiling ledger v0.3.1 (/home/dev/acme/billing-api/crates/ledger)
    error[E0502]: cannot borrow `self.entries` as mutable because it is also borrowed as immutable
      --> crates/ledger/src/apply.rs:88:13
       |
    86 |         let pending = self.entries.iter().filter(|e| e.is_pending());
       |                       ------------ immutable borrow occurs here
    87 |         for e in pending {
    88 |             self.entries.push(e.reversal());
       |             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ mutable borrow occurs here

    For more information about this error, try `rustc --explain E0502`.
    error: could not compile `ledger` (lib) due to 1 previous error""")),
    edit("crates/ledger/src/apply.rs",
         t("""
         let pending = self.entries.iter().filter(|e| e.is_pending());
         for e in pending {
             self.entries.push(e.reversal());"""),
         t("""
         let reversals: Vec<Entry> = self.entries.iter()
             .filter(|e| e.is_pending()).map(Entry::reversal).collect();
         for r in reversals {
             self.entries.push(r);""")),
], q=[
    ("exact_identifier", "E0502"),
    ("paraphrase", "appending to a vector while looping over it was rejected by Rust's aliasing rules in our accounting code"),
    ("cross_language", "error de préstamo mutable e inmutable en el ledger"),
])
D("billing-api", bash("cargo build", t("""
       Compiling billing-api v0.9.4 (/home/dev/acme/billing-api)
    error[E0499]: cannot borrow `*tx` as mutable more than once at a time
      --> src/repo/invoices.rs:133:29
        |
    131 |     let first = insert_header(&mut *tx, &inv).await?;
    133 |     let second = insert_lines(&mut *tx, &inv.lines, first.id).await?;
    error: could not compile `billing-api` (lib) due to 1 previous error""")))

F("bill_stripe_sig", "billing-api", [
    prompt("stripe webhooks fail with 400 'No signatures found matching the expected signature "
           "for payload' since we moved to the new handler"),
    edit("src/webhooks/stripe.rs",
         "async fn stripe_webhook(State(st): State<AppState>, headers: HeaderMap, Json(evt): Json<Value>)",
         t("""
         // verify against the raw body: re-serialising the JSON changed whitespace and broke the HMAC
         async fn stripe_webhook(State(st): State<AppState>, headers: HeaderMap, body: Bytes)""")),
], q=[
    ("keyword", "stripe webhook signature raw body"),
    ("exact_identifier", "No signatures found matching the expected signature"),
    ("paraphrase", "payment provider callbacks got refused because we decoded the incoming message before checking authenticity"),
])
D("billing-api", bash("stripe listen --forward-to localhost:8080/webhooks/stripe", t("""
    > Ready! You are using Stripe API Version [2023-10-16]. Your webhook signing secret is whsec_**** (^C to quit)
    2024-04-02 10:14:07   --> invoice.created [evt_1P0x]
    2024-04-02 10:14:07  <--  [200] POST http://localhost:8080/webhooks/stripe [evt_1P0x]""")))

F("bill_rounding", "billing-api", [
    edit("src/invoice/totals.rs",
         "let total: f64 = lines.iter().map(|l| l.unit_price * l.qty as f64).sum();",
         t("""
         let total: Decimal = lines.iter().map(|l| l.unit_price * Decimal::from(l.qty)).sum();
         let total = total.round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero);""")),
    note("Invoice totals were off by one cent vs the PDF (f64 accumulation). Moved money math "
         "to rust_decimal, rounding half away from zero at 2 dp."),
], q=[
    ("keyword", "invoice totals off by one cent"),
    ("exact_identifier", "MidpointAwayFromZero"),
    ("paraphrase", "why did the amounts we charged differ by a penny from what the printed bill showed"),
])

F("bill_sqlx_offline", "billing-api", [
    bash("cargo build --release", t("""
       Compiling billing-api v0.9.4 (/github/workspace)
    error: error communicating with database: Connection refused (os error 111)
      --> src/repo/invoices.rs:41:16
       |
    41 |     let rows = sqlx::query_as!(InvoiceRow, "SELECT * FROM invoices WHERE customer_id = $1", id)
       |                ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
    error: could not compile `billing-api` (lib) due to 12 previous errors""")),
    note("CI has no Postgres: run `cargo sqlx prepare` locally, commit the .sqlx/ dir and set "
         "SQLX_OFFLINE=true in the CI env so the query! macros use the cached metadata."),
], q=[
    ("exact_identifier", "SQLX_OFFLINE"),
    ("paraphrase", "on hosted runners our statically verified SQL had no reachable db, what was the workaround"),
    ("cross_language", "¿cómo compilamos las queries de sqlx en CI sin base de datos?"),
])

F("bill_axum07", "billing-api", [
    prompt("upgrade axum to 0.7 (and hyper 1.0), fix whatever breaks"),
    edit("src/main.rs",
         "axum::Server::bind(&addr).serve(app.into_make_service()).await?;",
         t("""
         let listener = tokio::net::TcpListener::bind(addr).await?;
         axum::serve(listener, app).await?;""")),
], q=[
    ("keyword", "axum 0.7 upgrade listener"),
    ("exact_identifier", "axum::Server::bind"),
    ("cross_language", "migración a axum 0.7, ¿qué cambió en el arranque del servidor?"),
])

F("bill_idempotency", "billing-api", [
    write("src/payments/idempotency.rs", t("""
        //! Requests carrying an `Idempotency-Key` header are stored in idempotency_keys
        //! (key, request_hash, response, created_at); a replay within 24h returns the
        //! stored response instead of creating a second charge.
        pub async fn check_or_store(db: &PgPool, key: &str, req_hash: &[u8]) -> Result<Option<Stored>> {
            sqlx::query_as("INSERT INTO idempotency_keys (key, request_hash) VALUES ($1, $2) \\
                            ON CONFLICT (key) DO NOTHING RETURNING NULL")
        }""")),
], q=[
    ("exact_identifier", "Idempotency-Key"),
    ("paraphrase", "how do we avoid billing somebody twice when a POST is resent"),
])

F("bill_runtime_panic", "billing-api", [
    bash("cargo test -p billing-api --test webhooks", t("""
    running 6 tests
    test replays_are_ignored ... FAILED

    ---- replays_are_ignored stdout ----
    thread 'replays_are_ignored' panicked at tests/webhooks.rs:54:12:
    Cannot start a runtime from within a runtime. This happens because a function (like `block_on`)
    attempted to block the current thread while the thread is being used to drive asynchronous tasks.

    test result: FAILED. 5 passed; 1 failed; 0 ignored""")),
    edit("tests/webhooks.rs",
         t("""
         #[test]
         fn replays_are_ignored() {
             let rt = Runtime::new().unwrap();
             rt.block_on(async {"""),
         t("""
         #[tokio::test]
         async fn replays_are_ignored() {""")),
], q=[
    ("exact_identifier", "Cannot start a runtime from within a runtime"),
    ("paraphrase", "an integration check crashed because we spun up an executor inside another one"),
])

F("bill_pool_timeout", "billing-api", [
    bash("kubectl logs deploy/billing-api -n prod --since=10m | grep -i pool", t("""
    2024-03-28T09:01:12Z ERROR billing_api::db: acquire failed: pool timed out while waiting for an open connection (PoolTimedOut)
    2024-03-28T09:01:12Z ERROR billing_api::db: acquire failed: pool timed out while waiting for an open connection (PoolTimedOut)
    2024-03-28T09:01:13Z ERROR billing_api::routes: GET /invoices -> 500 (PoolTimedOut)""")),
    edit("src/db.rs",
         "PgPoolOptions::new().max_connections(5)",
         t("""
         PgPoolOptions::new()
             .max_connections(20)
             .acquire_timeout(Duration::from_secs(3))""")),
], q=[
    ("exact_identifier", "PoolTimedOut"),
    ("keyword", "pool timed out waiting for an open connection"),
    ("cross_language", "el pool de conexiones de Postgres se agotaba en producción"),
])

F("bill_rates_cache", "billing-api", [
    edit("src/fx/rates.rs",
         "let rate = ecb::fetch_rate(from, to).await?;",
         t("""
         // moka cache: the ECB exchange rate feed was called on every invoice render
         static RATES: Lazy<Cache<(Currency, Currency), Rate>> = Lazy::new(|| {
             Cache::builder().time_to_live(Duration::from_secs(600)).build()
         });
         let rate = RATES.try_get_with((from, to), ecb::fetch_rate(from, to)).await?;""")),
], q=[
    ("keyword", "exchange rate cache moka"),
    ("paraphrase", "why we stopped hammering the European central bank's conversion endpoint for each bill we produce"),
])

F("bill_pdf_font", "billing-api", [
    bash("cargo run --bin render-invoice -- --id 5521 --out /tmp/inv.pdf", t("""
        Finished dev [unoptimized + debuginfo] target(s) in 0.31s
         Running `target/debug/render-invoice --id 5521 --out /tmp/inv.pdf`
    WARN printpdf: glyph not found for U+20AC '€' in font Helvetica; rendered as .notdef
    wrote /tmp/inv.pdf (2 pages)""")),
    edit("src/pdf/fonts.rs",
         "const FONT: BuiltinFont = BuiltinFont::Helvetica;",
         t("""
         // built-in Helvetica has no € glyph: embed DejaVuSans
         const FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");""")),
], q=[
    ("exact_identifier", "DejaVuSans"),
    ("paraphrase", "the euro sign was missing from the generated documents"),
    ("cross_language", "el símbolo del euro no aparece en los PDF de factura"),
])

F("bill_vat_reverse", "billing-api", [
    edit("src/tax/vat.rs",
         "return TaxLine::standard(customer.country);",
         t("""
         if customer.country != SELLER_COUNTRY && customer.vat_id_valid() && customer.is_business() {
             // intra-EU B2B: reverse charge, 0% VAT, invoice must say
             // "Reverse charge - Art. 196 Directive 2006/112/EC"
             return TaxLine::reverse_charge();
         }
         return TaxLine::standard(customer.country);""")),
], q=[
    ("keyword", "VAT reverse charge EU business customers"),
    ("cross_language", "IVA con inversión del sujeto pasivo para empresas de otro país de la UE"),
])

F("bill_clippy_enum", "billing-api", [
    bash("cargo clippy --all-targets -- -D warnings", t("""
    error: large size difference between variants
      --> src/events.rs:12:1
       |
    14 |     InvoiceIssued(InvoiceSnapshot),
       |     ------------------------------ the largest variant contains at least 1184 bytes
    15 |     InvoiceVoided(InvoiceId),
       |     ------------------------ the second-largest variant contains at least 16 bytes
       = note: `-D clippy::large-enum-variant` implied by `-D warnings`
    help: consider boxing the large fields to reduce the total size of the enum
       |
    14 |     InvoiceIssued(Box<InvoiceSnapshot>),""")),
    edit("src/events.rs", "    InvoiceIssued(InvoiceSnapshot),", "    InvoiceIssued(Box<InvoiceSnapshot>),"),
], q=[
    ("exact_identifier", "clippy::large-enum-variant"),
])

F("bill_cron_twice", "billing-api", [
    note("El cron de facturación mensual se ejecutaba dos veces porque el deployment tiene dos "
         "réplicas, y se generaban facturas duplicadas. Solución: pg_try_advisory_lock(4242) al "
         "inicio del job; la réplica que no obtiene el lock sale sin hacer nada."),
], lang="es", q=[
    ("exact_identifier", "pg_try_advisory_lock"),
    ("paraphrase_es", "cobros repetidos a fin de mes por tener varias copias del servicio corriendo"),
    ("keyword", "cron de facturación mensual con dos réplicas"),
    ("cross_language", "monthly invoicing job ran twice because of two replicas, advisory lock fix"),
])

F("bill_partial_refund", "billing-api", [
    prompt("los reembolsos parciales no actualizan el saldo del cliente, solo los totales. revisa src/refunds.rs"),
    edit("src/refunds.rs",
         t("""
         if refund.amount == charge.amount {
             account.balance += refund.amount;
         }"""),
         t("""
         // también para reembolsos parciales
         account.balance += refund.amount;""")),
], lang="es", q=[
    ("paraphrase_es", "cuando devolvemos una parte del dinero, la cuenta del usuario no cambia"),
    ("keyword", "saldo del cliente con reembolsos parciales"),
    ("cross_language", "partial refunds not updating the customer balance"),
])

F("bill_tracing_reqid", "billing-api", [
    edit("src/main.rs",
         ".layer(TraceLayer::new_for_http())",
         t("""
         .layer(TraceLayer::new_for_http().make_span_with(|req: &Request<_>| {
             let request_id = req.headers().get("x-request-id")
                 .and_then(|v| v.to_str().ok()).unwrap_or("-");
             tracing::info_span!("http", method = %req.method(), uri = %req.uri(), request_id)
         }))""")),
], q=[
    ("exact_identifier", "x-request-id"),
    ("paraphrase", "correlating every log entry belonging to a single incoming call"),
])

F("bill_graceful", "billing-api", [
    edit("src/main.rs",
         "axum::serve(listener, app).await?;",
         t("""
         axum::serve(listener, app)
             .with_graceful_shutdown(shutdown_signal())
             .await?;
         // shutdown_signal waits for SIGTERM so in-flight requests finish during k8s rolling deploys""")),
], q=[
    ("exact_identifier", "with_graceful_shutdown"),
    ("paraphrase", "pods being replaced cut users off mid-download; how did we let ongoing calls complete first"),
    ("cross_language", "apagado ordenado con SIGTERM en el servicio de facturación"),
])

F("bill_stripe_version", "billing-api", [
    note("Stripe webhooks broke after someone bumped the account API version in the Stripe "
         "dashboard: invoice.paid now nests payment_intent under `payments`. Pinned "
         "Stripe-Version: 2023-10-16 in the client and on the webhook endpoint."),
], q=[
    ("exact_identifier", "Stripe-Version"),
    ("keyword", "stripe api version pinned webhooks broke"),
])

F("bill_serde_camel", "billing-api", [
    prompt("the dashboard expects customerId and issuedAt but the API sends customer_id / issued_at"),
    edit("src/api/dto.rs",
         t("""
         #[derive(Serialize)]
         pub struct InvoiceDto {"""),
         t("""
         #[derive(Serialize)]
         #[serde(rename_all = "camelCase")]
         pub struct InvoiceDto {""")),
], q=[
    ("exact_identifier", "rename_all"),
    ("cross_language", "el dashboard espera los campos en camelCase y la API los manda en snake_case"),
])

F("bill_zip_pdf", "billing-api", [
    prompt("añade un endpoint para descargar las facturas en PDF por lotes dentro de un zip, "
           "máximo 500 por petición"),
    write("src/api/export.rs", t("""
        const MAX_BATCH: usize = 500;

        pub async fn export_zip(State(st): State<AppState>, Query(q): Query<ExportQuery>) -> Result<impl IntoResponse> {
            let ids = q.ids.into_iter().take(MAX_BATCH).collect::<Vec<_>>();
            let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
            for inv in st.repo.invoices_by_ids(&ids).await? {
                zip.start_file(format!("{}.pdf", inv.number), FileOptions::default())?;
                zip.write_all(&render_pdf(&inv)?)?;
            }
            Ok(([(CONTENT_TYPE, "application/zip")], zip.finish()?.into_inner()))
        }""")),
], lang="es", q=[
    ("paraphrase_es", "bajar muchos comprobantes de golpe comprimidos en un solo archivo"),
    ("cross_language", "bulk download of invoice PDFs as a zip"),
])

F("bill_proration_leap", "billing-api", [
    bash("cargo test -p billing-api proration", t("""
    running 4 tests
    test proration::tests::same_day_change ... ok
    test proration::prop_never_negative ... FAILED

    ---- proration::prop_never_negative stdout ----
    thread 'proration::prop_never_negative' panicked at src/proration.rs:57:22:
    attempt to subtract with overflow
    proptest: Test failed: attempt to subtract with overflow; minimal failing input:
        start = 2024-02-29, end = 2025-02-28, plan_change_day = 366""")),
    note("proration assumed 365 days/year -> overflow on leap years; now uses days_in_year(start)."),
], q=[
    ("keyword", "proration overflow leap year"),
    ("paraphrase", "upgrading tiers partway through a cycle crashed around February's extra date"),
])

F("bill_coupon_vat", "billing-api", [
    note("Los descuentos por cupón se aplicaban después de calcular el IVA; Hacienda exige que la "
         "base imponible ya lleve el descuento. Ahora apply_coupon() va antes de compute_vat()."),
], lang="es", q=[
    ("exact_identifier", "apply_coupon"),
    ("paraphrase_es", "los códigos promocionales se restaban tras sumar el impuesto"),
    ("cross_language", "coupon discount applied after VAT instead of before"),
])

F("bill_cors", "billing-api", [
    prompt("the dashboard on https://dashboard.acme.io gets \"blocked by CORS policy: No "
           "'Access-Control-Allow-Origin' header is present\" when calling billing-api"),
    edit("src/http/cors.rs",
         "CorsLayer::permissive()",
         t("""
         let allowed = ["https://dashboard.acme.io", "https://staging-dashboard.acme.io", "http://localhost:5173"];
         CorsLayer::new()
             .allow_origin(AllowOrigin::list(allowed.iter().map(|o| o.parse().unwrap())))
             .allow_credentials(true)""")),
], q=[
    ("cross_language", "¿cómo arreglamos el error de CORS en el dashboard?"),
    ("keyword", "dashboard CORS allowed origins list"),
    ("paraphrase", "the admin web front end couldn't reach the payments backend from the browser due to cross-site restrictions"),
])
D("web-dashboard", edit("vite.config.ts",
    "server: { port: 5173 },",
    t("""
    server: {
      port: 5173,
      // local dev only: proxy /api so the browser never sends a CORS preflight
      proxy: { '/api': 'http://localhost:8080' },
    },""")))

# ============================================================================
# auth-service (Go)
# ============================================================================

F("auth_concurrent_map", "auth-service", [
    bash("go test -race ./internal/session/...", t("""
    fatal error: concurrent map writes

    goroutine 87 [running]:
    github.com/acme/auth-service/internal/session.(*Cache).Put(0xc0001a2000, {0xc00012e0a0, 0x24}, 0xc000190000)
    	/src/internal/session/cache.go:41 +0x8c
    FAIL	github.com/acme/auth-service/internal/session	0.412s""")),
    edit("internal/session/cache.go",
         t("""
         type Cache struct {
         	items map[string]*Session
         }"""),
         t("""
         type Cache struct {
         	mu    sync.RWMutex
         	items map[string]*Session
         }""")),
], q=[
    ("exact_identifier", "concurrent map writes"),
    ("paraphrase", "the login server crashed when several threads stored entries into a shared lookup table simultaneously"),
    ("cross_language", "crash por escrituras concurrentes en el mapa de sesiones en Go"),
])
D("auth-service", read("internal/session/store.go", t("""
    // Store persists sessions in Redis; Cache (cache.go) keeps hot ones in memory.
    type Store struct {
    	rdb   *redis.Client
    	cache *Cache
    	ttl   time.Duration
    }""")))

F("auth_bcrypt_cost", "auth-service", [
    note("Login was slow (p95 ~1.1s): bcrypt cost was 14. Dropped to 12 (~250ms on our pods) after "
         "checking OWASP guidance; existing hashes keep working since the cost is stored in the hash."),
], q=[
    ("keyword", "bcrypt cost login slow"),
    ("paraphrase", "why did signing in take over a second"),
    ("cross_language", "¿por qué el inicio de sesión tardaba más de un segundo?"),
])
D("auth-service", edit("internal/password/hash_test.go",
    "hasher := NewHasher()",
    "hasher := NewHasherWithCost(bcrypt.MinCost) // keep unit tests fast"))

F("auth_oauth_samesite", "auth-service", [
    bash("kubectl logs deploy/auth-service -n prod | grep oauth | tail -3", t("""
    level=warn msg="oauth callback" provider=google err="state mismatch: cookie oauth_state not present"
    level=warn msg="oauth callback" provider=google err="state mismatch: cookie oauth_state not present"
    level=warn msg="oauth callback" provider=google err="state mismatch: cookie oauth_state not present\"""")),
    edit("internal/oauth/state.go",
         "\tSameSite: http.SameSiteStrictMode,",
         t("""
         	// Strict drops the cookie on the redirect back from Google -> state mismatch
         	SameSite: http.SameSiteLaxMode,""")),
], q=[
    ("keyword", "google oauth state mismatch cookie"),
    ("exact_identifier", "SameSiteLaxMode"),
    ("cross_language", "el login con Google falla porque no coincide el state de OAuth"),
])

F("auth_ldap_timeout", "auth-service", [
    bash("kubectl logs deploy/auth-service -n prod --since=1h | grep ldap", t("""
    level=error msg="ldap bind failed" err="context deadline exceeded" addr=10.2.4.15:636
    level=error msg="ldap bind failed" err="context deadline exceeded" addr=10.2.4.15:636""")),
    edit("internal/ldap/client.go",
         "ctx, cancel := context.WithTimeout(ctx, 2*time.Second)",
         t("""
         // AD over the VPN needs ~3s for the TLS handshake; reuse connections from ldapPool
         // instead of dialing per request
         ctx, cancel := context.WithTimeout(ctx, 8*time.Second)""")),
], q=[
    ("keyword", "ldap bind context deadline exceeded"),
    ("paraphrase", "corporate directory lookups over the tunnel kept giving up too early"),
])

F("auth_rate_limit", "auth-service", [
    write("internal/httpx/ratelimit.go", t("""
        package httpx

        import "golang.org/x/time/rate"

        // 5 login attempts per minute per IP; the excess gets 429 Too Many Requests.
        var loginLimiter = newIPLimiter(rate.Every(12*time.Second), 5)""")),
], q=[
    ("keyword", "login attempts per IP 429"),
    ("paraphrase", "throttling brute-force password guessing"),
    ("cross_language", "límite de intentos de acceso por dirección IP"),
])

F("auth_totp_skew", "auth-service", [
    edit("internal/mfa/totp.go",
         "valid := totp.Validate(code, secret)",
         t("""
         // users with phone clocks ~40s off were rejected
         valid, _ := totp.ValidateCustom(code, secret, time.Now().UTC(), totp.ValidateOpts{
         	Period: 30, Skew: 1, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1,
         })""")),
], q=[
    ("exact_identifier", "totp.ValidateCustom"),
    ("paraphrase", "second-factor pins refused whenever a handset runs a little ahead or behind"),
])

F("auth_jwks_kid", "auth-service", [
    bash("curl -s -H \"Authorization: Bearer $T\" https://auth.acme.io/userinfo", t("""
    {"error":"invalid_token","error_description":"verify token: no matching key found for kid \\"2024-05-a\\""}""")),
    note("After the signing key rotation the JWKS cache kept the old set for 24h. Now we refetch "
         "JWKS when an unknown kid shows up (at most once a minute) plus a background refresh every hour."),
], q=[
    ("exact_identifier", "no matching key found for kid"),
    ("keyword", "JWKS cache key rotation unknown kid"),
    ("cross_language", "después de rotar las claves de firma la validación fallaba con un kid desconocido"),
])

F("auth_go_replace", "auth-service", [
    bash("go build ./...", t("""
    go: github.com/acme/shared@v0.0.0-00010101000000-000000000000: replacement directory ../shared does not exist
    Error: Process completed with exit code 1.""")),
    edit("go.mod", "replace github.com/acme/shared => ../shared", "require github.com/acme/shared v0.8.2"),
], q=[
    ("exact_identifier", "replacement directory ../shared does not exist"),
    ("keyword", "go build error replace ../shared in go.mod"),
])

F("auth_errcheck", "auth-service", [
    bash("golangci-lint run ./...", t("""
    internal/store/users.go:73:17: Error return value of `rows.Close` is not checked (errcheck)
    	defer rows.Close()
    	               ^
    1 issues:
    * errcheck: 1""")),
    edit("internal/store/users.go", "\tdefer rows.Close()", "\tdefer func() { _ = rows.Close() }()"),
], q=[
    ("exact_identifier", "errcheck rows.Close"),
])

F("auth_reset_single_use", "auth-service", [
    write("internal/reset/tokens.go", t("""
        package reset

        // Reset links are single-use: we store sha256(token) with expires_at (30 min)
        // and delete the row on first use, so a leaked email can't be replayed.
        func (s *Service) Consume(ctx context.Context, raw string) (UserID, error) {
        	h := sha256.Sum256([]byte(raw))
        	return s.db.DeleteResetToken(ctx, h[:], time.Now())
        }""")),
], q=[
    ("paraphrase", "making sure the forgot-password recovery URL can only be used once"),
    ("keyword", "reset links single-use sha256 token"),
])

F("auth_apple_secret", "auth-service", [
    note("El login con Apple falla en producción con invalid_client: el client_secret es un JWT "
         "firmado con la clave .p8 y caduca a los 6 meses como máximo. Hay que regenerarlo "
         "(make apple-secret) y actualizar el secreto en Vault."),
], lang="es", q=[
    ("exact_identifier", "invalid_client"),
    ("paraphrase_es", "entrar con la cuenta de iCloud dejó de funcionar porque venció la credencial generada hace medio año"),
    ("cross_language", "Sign in with Apple failing in production, secret expired"),
])

F("auth_cors_options", "auth-service", [
    prompt("¿por qué el middleware de CORS devuelve 403 para las peticiones OPTIONS del portal de clientes?"),
    edit("internal/httpx/router.go",
         t("""
         r.Use(authMiddleware)
         r.Use(cors.Handler(corsOpts))"""),
         t("""
         // CORS antes del middleware de auth: el preflight OPTIONS no lleva Authorization
         r.Use(cors.Handler(corsOpts))
         r.Use(authMiddleware)""")),
], lang="es", q=[
    ("paraphrase_es", "las solicitudes previas del navegador eran rechazadas porque la autenticación se evaluaba primero"),
    ("cross_language", "preflight requests from the customer portal got 403 from the auth service"),
])

F("auth_argon2", "auth-service", [
    edit("internal/password/hash.go",
         "return bcryptVerify(stored, pw), nil",
         t("""
         if strings.HasPrefix(stored, "$2a$") {
         	// legacy bcrypt hash: verify, then transparently upgrade to argon2id
         	if ok := bcryptVerify(stored, pw); ok {
         		s.rehash(ctx, userID, pw)
         		return true, nil
         	}
         	return false, nil
         }
         return argon2idVerify(stored, pw)""")),
], q=[
    ("exact_identifier", "argon2id"),
    ("paraphrase", "migrating older saved credentials to a memory-hard algorithm whenever people sign on"),
])

F("auth_generic_inst", "auth-service", [
    bash("go build ./...", t("""
    # github.com/acme/auth-service/internal/store
    internal/store/cache.go:19:15: cannot use generic type LRU[K comparable, V any] without instantiation""")),
    edit("internal/store/cache.go", "var sessions *LRU", "var sessions *LRU[string, *Session]"),
], q=[
    ("exact_identifier", "cannot use generic type LRU"),
])

F("auth_saml_skew", "auth-service", [
    bash("kubectl logs deploy/auth-service -n prod | grep saml | tail -2", t("""
    level=error msg="saml: assertion not yet valid" notBefore=2024-04-02T09:14:07Z now=2024-04-02T09:14:05Z idp=okta
    level=error msg="saml: assertion not yet valid" notBefore=2024-04-02T09:16:31Z now=2024-04-02T09:16:29Z idp=okta""")),
    edit("internal/saml/sp.go",
         "sp.AllowClockSkew = 0",
         "sp.AllowClockSkew = 30 * time.Second // Okta's clock runs a couple of seconds ahead of ours"),
], q=[
    ("exact_identifier", "AllowClockSkew"),
    ("keyword", "okta saml assertion not yet valid"),
])

F("auth_sliding", "auth-service", [
    note("Las sesiones caducaban a los 15 minutos aunque el usuario estuviera activo. Implementamos "
         "expiración deslizante: cada petición autenticada con más de la mitad del TTL consumido "
         "emite una cookie nueva."),
], lang="es", q=[
    ("paraphrase_es", "la gente era expulsada tras un rato aunque siguiera trabajando en la aplicación"),
    ("keyword", "sesiones caducan a los 15 minutos con el usuario activo"),
    ("cross_language", "sliding session expiration so active users are not logged out after 15 minutes"),
])

F("auth_verify_email", "auth-service", [
    prompt("el enlace de verificación de email caduca demasiado rápido, súbelo a 24 horas"),
    edit("internal/signup/verify.go",
         "const verifyTTL = 1 * time.Hour",
         "const verifyTTL = 24 * time.Hour // muchos usuarios abren el correo de verificación al día siguiente"),
], lang="es", q=[
    ("paraphrase_es", "la gente confirmaba su dirección tarde y el vínculo ya no servía"),
    ("cross_language", "email verification link expired after one hour"),
])

F("auth_invalidate_pw", "auth-service", [
    prompt("hay que invalidar todas las sesiones abiertas cuando el usuario cambia la contraseña"),
    edit("internal/password/change.go",
         "return s.users.SetPassword(ctx, userID, hash)",
         t("""
         if err := s.users.SetPassword(ctx, userID, hash); err != nil {
         	return err
         }
         return s.sessions.RevokeAll(ctx, userID, exceptCurrent)""")),
], lang="es", q=[
    ("exact_identifier", "RevokeAll"),
    ("paraphrase_es", "cerrar los demás dispositivos conectados tras modificar la clave de acceso"),
])

F("auth_grpc_calm", "auth-service", [
    bash("kubectl logs deploy/auth-service -n prod | grep rpc | tail -1", t("""
    level=error msg="profile lookup" err="rpc error: code = Unavailable desc = closing transport due to: connection error: desc = \\"error reading from server: EOF\\", received prior goaway: code: ENHANCE_YOUR_CALM, debug data: \\"too_many_pings\\"\"""")),
    edit("internal/grpcx/dial.go",
         "keepalive.ClientParameters{Time: 10 * time.Second}",
         "keepalive.ClientParameters{Time: 60 * time.Second} // server enforces MinTime 30s"),
], q=[
    ("exact_identifier", "ENHANCE_YOUR_CALM"),
    ("keyword", "rpc keepalive too many pings"),
])

F("auth_pprof_pool", "auth-service", [
    note("pprof heap profile: 38% of allocs in encoding/json Marshal on /userinfo. Reuse buffers via "
         "sync.Pool + json.NewEncoder(buf); p99 dropped from 41ms to 17ms."),
], q=[
    ("keyword", "sync.Pool json allocations pprof"),
    ("paraphrase", "we recycled scratch memory to cut garbage-collection pressure when serializing responses in the Go identity service"),
])
D("auth-service", read("internal/httpx/cors.go", t("""
    var corsOpts = cors.Options{
    	AllowedOrigins:   []string{"https://portal.acme.io"},
    	AllowedMethods:   []string{"GET", "POST", "PUT", "DELETE", "OPTIONS"},
    	AllowCredentials: true,
    }""")))

# ============================================================================
# crm-backend (Python / Django)
# ============================================================================

F("crm_n_plus_1", "crm-backend", [
    prompt("the contacts list endpoint takes 4s, django-debug-toolbar shows 600 queries"),
    edit("crm/contacts/views.py",
         "    queryset = Contact.objects.all()",
         t("""
             # N+1: one query per row for company/owner/tags
             queryset = (
                 Contact.objects.select_related("company", "owner")
                 .prefetch_related("tags")
             )""")),
], q=[
    ("exact_identifier", "select_related"),
    ("keyword", "contacts list 600 queries"),
    ("paraphrase", "why did the address book screen fire hundreds of SQL statements per load"),
])
D("crm-backend", read("crm/deals/views.py", t("""
    class DealViewSet(viewsets.ModelViewSet):
        serializer_class = DealSerializer
        permission_classes = [IsAuthenticated, IsTenantMember]

        def get_queryset(self):
            return Deal.objects.filter(tenant=self.request.tenant).only("id", "stage", "amount")""")))

F("crm_celery_retry", "crm-backend", [
    note("sync_hubspot_contact was retrying forever on 404s (contacts deleted in HubSpot) and "
         "filled the default queue."),
    edit("crm/integrations/tasks.py",
         "@shared_task(autoretry_for=(Exception,), max_retries=None)",
         t("""
         @shared_task(autoretry_for=(RequestException,), max_retries=5,
                      retry_backoff=True, retry_backoff_max=600, retry_jitter=True)""")),
], q=[
    ("keyword", "task retrying forever max_retries hubspot"),
    ("exact_identifier", "retry_backoff_max"),
    ("paraphrase", "a background job kept re-running endlessly for records already removed upstream, clogging the broker"),
])

F("crm_migration_conflict", "crm-backend", [
    bash("python manage.py migrate", t("""
    CommandError: Conflicting migrations detected; multiple leaf nodes in the migration graph: (0042_deal_probability, 0042_contact_linkedin_url in crm).
    To fix them run 'python manage.py makemigrations --merge'""")),
    bash("python manage.py makemigrations --merge --noinput",
         "Created new merge migration /app/crm/migrations/0043_merge_20240408_1012.py"),
], q=[
    ("exact_identifier", "multiple leaf nodes in the migration graph"),
    ("cross_language", "conflicto de migraciones de Django después de mergear dos ramas"),
])

F("crm_flaky_tz", "crm-backend", [
    bash("pytest crm/deals/tests/test_reports.py -k closed_today -p no:randomly", t("""
    FAILED crm/deals/tests/test_reports.py::test_deals_closed_today - AssertionError: assert 0 == 1
    1 failed, 41 deselected in 2.31s""")),
    note("test_deals_closed_today is flaky: only fails between 00:00 and 02:00 local time. "
         "date.today() is Europe/Madrid but closed_at is stored in UTC. Fixed with "
         "timezone.localdate() and pinned the test with @freeze_time(\"2024-03-10 00:30:00+01:00\")."),
], q=[
    ("keyword", "flaky test timezone closed today"),
    ("paraphrase", "a check on won opportunities broke right after midnight"),
    ("cross_language", "test intermitente por la zona horaria en los informes de deals"),
])

F("crm_csv_stream", "crm-backend", [
    edit("crm/exports/views.py",
         t("""
         rows = list(qs.values_list(*FIELDS))
         return HttpResponse(to_csv(rows), content_type="text/csv")"""),
         t("""
         # export of 300k contacts hit the 30s gunicorn timeout
         rows = qs.values_list(*FIELDS).iterator(chunk_size=2000)
         return StreamingHttpResponse((writer.writerow(r) for r in rows), content_type="text/csv")""")),
], q=[
    ("exact_identifier", "StreamingHttpResponse"),
    ("paraphrase", "downloading the huge spreadsheet of leads died halfway"),
])

F("crm_email_unique", "crm-backend", [
    edit("crm/contacts/models.py",
         "        constraints = []",
         t("""
                 constraints = [
                     models.UniqueConstraint(Lower("email"), name="contact_email_ci_unique"),
                 ]""")),
    note("Duplicate contacts like Ana@acme.io vs ana@acme.io: added a case-insensitive unique "
         "constraint on email; a cleanup script merged 312 pairs first."),
], q=[
    ("exact_identifier", "contact_email_ci_unique"),
    ("keyword", "case-insensitive unique constraint email duplicate contacts"),
])

F("crm_hubspot_lower", "crm-backend", [
    prompt("la importación de leads desde HubSpot duplica contactos cuando el email viene con mayúsculas"),
    edit("crm/integrations/hubspot.py",
         '    email = row["email"]',
         '    email = row["email"].strip().lower()'),
], lang="es", q=[
    ("paraphrase_es", "el volcado desde la herramienta de marketing creaba la misma persona dos veces por culpa de letras capitales en la dirección de correo"),
    ("cross_language", "HubSpot import creating duplicate contacts when the address has uppercase letters"),
])

F("crm_cursor_pagination", "crm-backend", [
    edit("crm/activity/api.py",
         "    pagination_class = PageNumberPagination",
         "    pagination_class = ActivityCursorPagination  # OFFSET 200000 took 3s; cursor on (created_at, id) is constant"),
], q=[
    ("keyword", "activity cursor pagination offset"),
    ("paraphrase", "deep pages of the timeline got slower the further you scrolled"),
])

F("crm_admin_autocomplete", "crm-backend", [
    edit("crm/deals/admin.py",
         '    list_filter = ("stage", "company")',
         t("""
             list_filter = ("stage",)
             autocomplete_fields = ("company", "owner")  # the company dropdown rendered 80k <option>s""")),
], q=[
    ("exact_identifier", "autocomplete_fields"),
    ("paraphrase", "the back-office form for opportunities hung because one picker listed every single organisation"),
])

F("crm_sentry_pii", "crm-backend", [
    edit("crm/settings/prod.py",
         "sentry_sdk.init(dsn=SENTRY_DSN)",
         "sentry_sdk.init(dsn=SENTRY_DSN, send_default_pii=False, before_send=scrub_emails)"),
    note("Sentry events contained customer emails and phone numbers from request bodies; scrub them."),
], q=[
    ("exact_identifier", "send_default_pii"),
    ("paraphrase", "stop leaking people's personal details to the crash reporting vendor"),
])

F("crm_fts", "crm-backend", [
    edit("crm/contacts/models.py",
         "        indexes = []",
         t("""
                 indexes = [
                     GinIndex(SearchVector("first_name", "last_name", "company_name", config="simple"),
                              name="contact_search_gin"),
                 ]""")),
], q=[
    ("exact_identifier", "contact_search_gin"),
    ("keyword", "contact search GIN index SearchVector"),
])

F("crm_unaccent", "crm-backend", [
    note("La búsqueda de contactos no encontraba 'José' al buscar 'jose'. Activamos la extensión "
         "unaccent (migración 0051) y usamos el lookup __unaccent__icontains."),
], lang="es", q=[
    ("exact_identifier", "unaccent"),
    ("paraphrase_es", "nombres con tilde no aparecían al teclear sin acento"),
    ("cross_language", "contact search does not find names with accents like José"),
])

F("crm_mailchimp_order", "crm-backend", [
    note("Los eventos de Mailchimp llegan desordenados: un 'unsubscribe' antiguo pisaba un "
         "'subscribe' posterior. Ahora guardamos fired_at por contacto e ignoramos eventos más viejos."),
], lang="es", q=[
    ("paraphrase_es", "las notificaciones del proveedor de newsletters venían en otra secuencia y sobrescribían el estado más reciente"),
    ("cross_language", "Mailchimp webhook events arriving out of order"),
])

F("crm_disallowed_host", "crm-backend", [
    bash("kubectl logs deploy/crm-web -n staging | grep -A1 security", t("""
    django.security.DisallowedHost: Invalid HTTP_HOST header: 'crm.staging.acme.io'. You may need to add 'crm.staging.acme.io' to ALLOWED_HOSTS.
    Bad Request: /health""")),
    edit("crm/settings/staging.py",
         'ALLOWED_HOSTS = ["crm-staging.internal"]',
         'ALLOWED_HOSTS = ["crm-staging.internal", "crm.staging.acme.io"]'),
], q=[
    ("exact_identifier", "DisallowedHost"),
    ("cross_language", "el staging del CRM devuelve 400 Bad Request por el host"),
])

F("crm_cache_tenant", "crm-backend", [
    note("Bug: tenant A saw tenant B's dashboard counters. Cache keys were 'dash:counters:{user_id}' and "
         "user ids collide across tenant schemas. KEY_FUNCTION now prefixes keys with connection.schema_name."),
], q=[
    ("exact_identifier", "KEY_FUNCTION"),
    ("paraphrase", "one customer organisation could see another organisation's numbers because memoized entries weren't namespaced"),
])

F("crm_beat_twice", "crm-backend", [
    note("Celery beat ran inside both crm-worker replicas after the Helm chart change, so every "
         "periodic task fired twice (duplicate reminder emails). Beat now runs as its own Deployment "
         "with replicas: 1 and django-celery-beat's DatabaseScheduler."),
], q=[
    ("keyword", "celery beat periodic task fired twice reminder emails"),
    ("cross_language", "las tareas programadas de Celery se ejecutaban dos veces"),
])

F("crm_select_for_update", "crm-backend", [
    prompt("two sales reps got assigned the same lead at the same time"),
    edit("crm/leads/assign.py",
         "    lead = Lead.objects.filter(owner__isnull=True).first()",
         t("""
             with transaction.atomic():
                 lead = (Lead.objects.select_for_update(skip_locked=True)
                         .filter(owner__isnull=True).first())""")),
], q=[
    ("exact_identifier", "select_for_update"),
    ("paraphrase", "a pair of account executives ended up owning one prospect after simultaneous handouts"),
])

F("crm_date_filter", "crm-backend", [
    prompt("el filtro por fecha de creación no incluye el último día del rango"),
    edit("crm/deals/filters.py",
         "        return qs.filter(created_at__lte=end)",
         t("""
                 # end es una fecha: <= end comparaba con medianoche
                 return qs.filter(created_at__lt=end + timedelta(days=1))""")),
], lang="es", q=[
    ("paraphrase_es", "los registros de la jornada final del intervalo no salían en el listado"),
    ("cross_language", "date range filter leaves out the last day"),
])

F("crm_signal_recursion", "crm-backend", [
    bash("pytest crm/deals -x -q", t("""
    E   RecursionError: maximum recursion depth exceeded while calling a Python object
    crm/deals/signals.py:22: in update_score
        instance.save()
    1 failed, 12 passed in 4.02s""")),
    edit("crm/deals/signals.py",
         "    instance.save()",
         "    Deal.objects.filter(pk=instance.pk).update(score=score)  # .save() re-triggered post_save"),
], q=[
    ("exact_identifier", "RecursionError"),
    ("keyword", "post_save signal recursion deal score"),
])

F("crm_anonymize", "crm-backend", [
    write("crm/contacts/management/commands/anonymize_contacts.py", t('''
        """GDPR erasure: replace PII with placeholders but keep deal history for revenue reports."""
        from django.core.management.base import BaseCommand

        class Command(BaseCommand):
            def handle(self, *args, **opts):
                for c in Contact.objects.filter(erasure_requested_at__isnull=False, anonymized=False):
                    c.anonymize()''')),
], q=[
    ("exact_identifier", "anonymize_contacts"),
    ("cross_language", "¿cómo borramos datos personales por RGPD sin perder el histórico de ventas?"),
])

F("crm_worker_timeout", "crm-backend", [
    bash("kubectl logs deploy/crm-web -n prod | grep -B1 TIMEOUT | tail -2", t("""
    [2024-04-09 11:02:44 +0000] [1] [CRITICAL] WORKER TIMEOUT (pid:412)
    [2024-04-09 11:02:44 +0000] [412] [INFO] Worker exiting (pid: 412)""")),
    note("GET /reports/pipeline takes ~45s and gunicorn kills the worker at 30s. Moved report generation "
         "to a Celery task + polling endpoint instead of raising the timeout."),
], q=[
    ("exact_identifier", "WORKER TIMEOUT"),
    ("paraphrase", "the sales funnel summary page kept getting terminated by the app server"),
])

F("crm_sales_report", "crm-backend", [
    note("Los informes de ventas por comercial no cuadraban con los de finanzas: no excluíamos los "
         "deals cancelados (stage='cancelled'). Añadido .exclude(stage='cancelled') en revenue_by_rep()."),
], lang="es", q=[
    ("exact_identifier", "revenue_by_rep"),
    ("paraphrase_es", "las cifras por vendedor no coincidían con contabilidad porque contábamos oportunidades anuladas"),
])

# ============================================================================
# web-dashboard (TypeScript / React / Vite)
# ============================================================================

F("web_datefns", "web-dashboard", [
    note("Decision: replace moment.js with date-fns. moment + locales was 232 KB of the 610 KB main "
         "chunk, it is in maintenance mode, and date-fns is tree-shakeable. Migrated format()/parseISO "
         "calls in src/utils/dates.ts."),
    bash("npm uninstall moment && npm install date-fns@3", t("""
    removed 1 package, and audited 1184 packages in 3s
    added 1 package, and audited 1185 packages in 4s
    found 0 vulnerabilities""")),
], q=[
    ("keyword", "replace moment.js with date-fns"),
    ("paraphrase", "why did we drop the heavyweight time library for a modular one"),
    ("cross_language", "¿por qué cambiamos moment por date-fns?"),
])
D("mobile-app", note("Mobile keeps dayjs (2 KB) for relative times in the RN app; no need for a bigger date library there."))
D("web-dashboard", read("src/utils/dates.ts", t("""
    import { format, parseISO } from 'date-fns';

    export const shortDate = (iso: string) => format(parseISO(iso), 'dd MMM yyyy');
    export const monthKey = (iso: string) => format(parseISO(iso), 'yyyy-MM');""")))

F("web_effect_loop", "web-dashboard", [
    prompt("the metrics page hammers /api/metrics in a loop, like 50 requests per second"),
    edit("src/pages/Metrics.tsx",
         t("""
         const filters = { range, team };
         useEffect(() => { fetchMetrics(filters); }, [filters]);"""),
         t("""
         const filters = useMemo(() => ({ range, team }), [range, team]);
         useEffect(() => { fetchMetrics(filters); }, [filters]);""")),
], q=[
    ("keyword", "metrics page requests in a loop useEffect"),
    ("paraphrase", "a screen kept redrawing forever and flooding the server with calls"),
])

F("web_vite_env", "web-dashboard", [
    edit("src/api/client.ts",
         "const base = import.meta.env.API_URL;",
         "const base = import.meta.env.VITE_API_URL; // Vite only exposes vars prefixed with VITE_"),
], q=[
    ("exact_identifier", "VITE_API_URL"),
    ("paraphrase", "the bundler silently dropped our backend address setting because it wasn't named correctly"),
])

F("web_tooltip", "web-dashboard", [
    edit("src/components/ChartCard.module.css",
         ".card { overflow: hidden; }",
         ".card { overflow: visible; } /* recharts tooltip was clipped at the card border */"),
], q=[
    ("keyword", "chart tooltip clipped overflow"),
])

F("web_theme_flash", "web-dashboard", [
    edit("index.html",
         "<script type=\"module\" src=\"/src/main.tsx\"></script>",
         t("""
         <script>
           // set theme before React hydrates to avoid the white flash in dark mode
           document.documentElement.dataset.theme = localStorage.getItem('theme') ?? 'light';
         </script>
         <script type="module" src="/src/main.tsx"></script>""")),
], q=[
    ("keyword", "dark mode white flash theme localStorage"),
    ("paraphrase", "bright blink on first paint for people who prefer the night palette"),
])

F("web_refetch_focus", "web-dashboard", [
    edit("src/main.tsx",
         "const queryClient = new QueryClient();",
         t("""
         // every alt-tab refetched 14 queries
         const queryClient = new QueryClient({
           defaultOptions: { queries: { refetchOnWindowFocus: false, staleTime: 60_000 } },
         });""")),
], q=[
    ("exact_identifier", "refetchOnWindowFocus"),
    ("paraphrase", "coming back to the browser triggered a burst of data reloads"),
])

F("web_playwright", "web-dashboard", [
    edit("e2e/invoices.spec.ts",
         t("""
         await page.waitForTimeout(500);
         expect(await page.locator('.toast').isVisible()).toBe(true);"""),
         t("""
         // auto-retries; the fixed timeout was flaky while the slide-in animation ran
         await expect(page.locator('.toast')).toBeVisible();""")),
], q=[
    ("exact_identifier", "waitForTimeout"),
    ("keyword", "flaky toast animation fixed timeout"),
])

F("web_code_split", "web-dashboard", [
    note("El build de producción pesaba 4,1 MB. Activamos code splitting con React.lazy + Suspense "
         "para las rutas de /informes; el chunk inicial baja a 900 KB."),
], lang="es", q=[
    ("exact_identifier", "React.lazy"),
    ("paraphrase_es", "el primer arranque de la web era pesadísimo; ¿cómo hicimos que las pantallas de reportes se descarguen bajo demanda?"),
    ("cross_language", "production bundle was 4 MB, code splitting for the reports routes"),
])

F("web_sort_dates", "web-dashboard", [
    note("La tabla de facturas ordenaba mal las fechas porque la columna ordenaba strings en formato "
         "DD/MM/YYYY. Ahora ordenamos por el ISO (issuedAt) y solo formateamos al renderizar."),
], lang="es", q=[
    ("paraphrase_es", "el listado de cobros salía desordenado al clasificar por día"),
    ("keyword", "la tabla de facturas ordena mal las fechas"),
    ("cross_language", "invoices table sorted dates as strings"),
])

F("web_ts2345", "web-dashboard", [
    bash("npx tsc --noEmit", t("""
    src/pages/Customers.tsx(48,27): error TS2345: Argument of type 'string | undefined' is not assignable to parameter of type 'string'.
      Type 'undefined' is not assignable to type 'string'.

    Found 1 error in src/pages/Customers.tsx:48""")),
    edit("src/pages/Customers.tsx",
         "  navigate(`/customers/${params.id}`);",
         t("""
           if (!params.id) return <NotFound />;
           navigate(`/customers/${params.id}`);""")),
], q=[
    ("exact_identifier", "TS2345"),
])

F("web_csp_nonce", "web-dashboard", [
    note("react-select injects <style> tags and our CSP blocked them (\"Refused to apply inline style "
         "because it violates the following Content Security Policy directive\"). Emotion now gets the "
         "nonce via CacheProvider; nginx sets style-src 'self' 'nonce-$request_id'."),
], q=[
    ("exact_identifier", "Refused to apply inline style"),
    ("keyword", "content security policy nonce inline style"),
])

F("web_i18n_fallback", "web-dashboard", [
    edit("src/i18n.ts",
         "  fallbackLng: 'es',",
         "  fallbackLng: 'en', // missing keys in de/fr showed raw keys like invoices.table.empty"),
], q=[
    ("keyword", "i18n missing keys fallbackLng"),
    ("cross_language", "las traducciones que faltan muestran la clave en crudo"),
])

F("web_ws_duplicate", "web-dashboard", [
    note("Live metrics showed every event twice after a reconnect: the 'message' listener was added in "
         "onopen, so each reconnect stacked another one. The listener is now registered once per socket."),
], q=[
    ("keyword", "live metrics reconnect every event twice listener"),
    ("paraphrase", "after the realtime feed dropped and came back, updates on the stats page appeared doubled"),
])

F("web_currency", "web-dashboard", [
    edit("src/utils/money.ts",
         "export const formatEUR = (v: number) => v.toFixed(2);",
         t("""
         // los gráficos mostraban 1234.5 en vez de 1.234,50 €
         export const formatEUR = (v: number) =>
           new Intl.NumberFormat('es-ES', { style: 'currency', currency: 'EUR' }).format(v);""")),
], lang="es", q=[
    ("exact_identifier", "formatEUR"),
    ("paraphrase_es", "las cantidades en los charts salían sin separador de miles ni símbolo"),
])

F("web_storybook", "web-dashboard", [
    bash("npm run build-storybook", t("""
    > dashboard@2.4.0 build-storybook
    > storybook build
    ERR! Error: Cannot find module '@storybook/builder-vite'
    npm ERR! peer vite@"^4.0.0" from @storybook/builder-vite@7.0.27; found vite@5.2.0""")),
    bash("npm i -D @storybook/builder-vite@7.6 @storybook/react-vite@7.6",
         "added 3 packages, changed 41 packages, and audited 1190 packages in 9s"),
], q=[
    ("keyword", "storybook builder-vite vite 5"),
])

F("web_zustand_logout", "web-dashboard", [
    edit("src/store/filters.ts",
         "export const resetOnLogout = () => {};",
         t("""
         // persisted filters leaked to the next person on shared office PCs
         export const resetOnLogout = () => {
           useFilters.persist.clearStorage();
           useFilters.setState(initialFilters);
         };""")),
], q=[
    ("paraphrase", "on communal workstations whoever signed on afterwards inherited the previous user's chosen criteria"),
])

F("web_a11y_modal", "web-dashboard", [
    bash("npx playwright test a11y", t("""
    a11y.spec.ts:12:3 › delete customer dialog
      Violation: aria-dialog-name (serious) - ARIA dialog and alertdialog nodes should have an accessible name
        1 node: #confirm-delete
    1 failed""")),
    edit("src/components/Modal.tsx",
         "<div role=\"dialog\" className={styles.modal}>",
         "<div role=\"dialog\" aria-modal=\"true\" aria-labelledby={titleId} className={styles.modal} ref={trapRef}>"),
], q=[
    ("exact_identifier", "aria-dialog-name"),
    ("keyword", "accessible name dialog violation"),
])

F("web_virtual", "web-dashboard", [
    note("InvoiceTable with 10k rows froze the tab for ~3s. Switched to @tanstack/react-virtual "
         "(useVirtualizer, estimateSize 44, overscan 10)."),
], q=[
    ("exact_identifier", "useVirtualizer"),
    ("paraphrase", "the giant grid locked up the browser until only what's on screen got drawn"),
])

F("web_exhaustive_deps", "web-dashboard", [
    bash("npm run lint", t("""
    /home/dev/acme/web-dashboard/src/hooks/useInvoices.ts
      31:6  warning  React Hook useEffect has a missing dependency: 'customerId'. Either include it or remove the dependency array  react-hooks/exhaustive-deps

    ✖ 1 problem (0 errors, 1 warning)""")),
], q=[
    ("exact_identifier", "react-hooks/exhaustive-deps"),
])

F("web_form_back", "web-dashboard", [
    prompt("el formulario de alta de clientes pierde los datos si el usuario vuelve atrás en el navegador"),
    edit("src/pages/NewCustomer.tsx",
         "const { register, handleSubmit, watch, setValue } = useForm<CustomerForm>();",
         t("""
         const { register, handleSubmit, watch, setValue } = useForm<CustomerForm>();
         useFormPersist('new-customer', { watch, setValue, storage: window.sessionStorage });""")),
], lang="es", q=[
    ("paraphrase_es", "al retroceder de página se borraba todo lo escrito en la ficha de nuevos compradores"),
    ("cross_language", "new customer form loses what was typed when going back in the browser"),
])

F("web_env_leak", "web-dashboard", [
    note("Accidentally committed .env with the Stripe test key and the Mapbox token (commit 3f9e2ab). "
         "Purged with git filter-repo --path .env --invert-paths, force-pushed, rotated both keys and "
         "added .env to .gitignore."),
], q=[
    ("exact_identifier", "filter-repo"),
    ("paraphrase", "credentials ended up in version control by mistake; how did we scrub the history"),
    ("cross_language", "subimos el .env con claves al repositorio por error"),
])

# ============================================================================
# mobile-app (React Native / Expo)
# ============================================================================

F("mob_refresh_race", "mobile-app", [
    edit("src/api/client.ts",
         "const token = await refreshTokens();",
         t("""
         // several 401s at once used to fire several refreshes; the second one sent an
         // already-rotated refresh token and the backend logged the user out
         let refreshPromise: Promise<string> | null = null;
         const refreshOnce = () =>
           (refreshPromise ??= refreshTokens().finally(() => { refreshPromise = null; }));
         const token = await refreshOnce();""")),
], q=[
    ("keyword", "several 401s at once refresh token rotated logged out"),
    ("paraphrase", "parallel unauthorised responses on the phone made people get kicked from their account"),
    ("cross_language", "la app móvil cierra la sesión cuando varias peticiones dan 401 a la vez"),
])
D("mobile-app", edit("src/api/client.ts",
    "const headers = { 'Content-Type': 'application/json' };",
    "const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${await getAccessToken()}` };"))

F("mob_merge_resources", "mobile-app", [
    bash("cd android && ./gradlew assembleDebug", t("""
    > Task :app:mergeDebugResources FAILED
    ERROR: [drawable/splash_logo] /app/android/app/src/main/res/drawable/splash_logo.png	[drawable/splash_logo] /app/android/app/src/main/res/drawable/splash_logo.xml: Error: Duplicate resources

    FAILURE: Build failed with an exception.
    BUILD FAILED in 41s""")),
    bash("git rm android/app/src/main/res/drawable/splash_logo.png",
         "rm 'android/app/src/main/res/drawable/splash_logo.png'"),
], q=[
    ("exact_identifier", "mergeDebugResources"),
])

F("mob_hermes_pod", "mobile-app", [
    bash("cd ios && pod install", t("""
    Analyzing dependencies
    [!] CocoaPods could not find compatible versions for pod "hermes-engine":
      In Podfile:
        hermes-engine (from `../node_modules/react-native/sdks/hermes-engine/hermes-engine.podspec`)
    Specs satisfying the `hermes-engine` dependency were found, but they required a higher minimum deployment target.""")),
    bash("cd ios && pod repo update && pod install", "Pod installation complete! There are 71 dependencies from the Podfile and 82 total pods installed."),
], q=[
    ("exact_identifier", "hermes-engine"),
    ("cross_language", "pod install falla después de actualizar React Native"),
])

F("mob_post_notifications", "mobile-app", [
    edit("android/app/src/main/AndroidManifest.xml",
         '<uses-permission android:name="android.permission.INTERNET" />',
         t("""
         <uses-permission android:name="android.permission.INTERNET" />
         <uses-permission android:name="android.permission.POST_NOTIFICATIONS" />""")),
    edit("src/push/register.ts",
         "const token = await messaging().getToken();",
         t("""
         if (Platform.OS === 'android' && Platform.Version >= 33) {
           await PermissionsAndroid.request(PermissionsAndroid.PERMISSIONS.POST_NOTIFICATIONS);
         }
         const token = await messaging().getToken();""")),
], q=[
    ("exact_identifier", "POST_NOTIFICATIONS"),
    ("paraphrase", "alerts never showed up on recent Pixel handsets until users granted consent"),
])

F("mob_flatlist", "mobile-app", [
    note("Orders list was janky with ~2k items on mid-range Android. FlatList now has keyExtractor, "
         "getItemLayout (fixed 72px rows), windowSize 7 and removeClippedSubviews."),
], q=[
    ("exact_identifier", "getItemLayout"),
    ("keyword", "orders list janky FlatList"),
    ("paraphrase", "long purchase history stuttered when flicking through it on phones"),
])

F("mob_aasa", "mobile-app", [
    bash("curl -sI https://app.acme.io/.well-known/apple-app-site-association", t("""
    HTTP/2 200
    content-type: application/octet-stream
    content-length: 412""")),
    note("Universal links opened Safari instead of the app: the AASA file was served as "
         "application/octet-stream. nginx now sets default_type application/json for it."),
], q=[
    ("exact_identifier", "apple-app-site-association"),
    ("paraphrase", "tapping our URLs on iPhones launched the web browser rather than our native client"),
])

F("mob_camera_android", "mobile-app", [
    prompt("la app se cierra al abrir la cámara en Android, en iOS va bien"),
    bash("adb logcat -d | grep -i -A2 SecurityException", t("""
    E AndroidRuntime: java.lang.SecurityException: Permission Denial: starting Intent { act=android.media.action.IMAGE_CAPTURE } requires android.permission.CAMERA""")),
], lang="es", q=[
    ("paraphrase_es", "crash al sacar fotos desde el teléfono Samsung"),
    ("keyword", "la app se cierra con la cámara en Android"),
    ("cross_language", "app crashes when opening the camera on Android, permission denial"),
])

F("mob_cart_persist", "mobile-app", [
    prompt("los usuarios pierden el carrito al cerrar la app"),
    edit("src/store/index.ts",
         "export const store = configureStore({ reducer: rootReducer });",
         t("""
         const persisted = persistReducer({ key: 'root', storage: AsyncStorage, whitelist: ['cart'] }, rootReducer);
         export const store = configureStore({ reducer: persisted });""")),
], lang="es", q=[
    ("paraphrase_es", "los productos elegidos desaparecen si el comprador sale de la aplicación"),
    ("keyword", "el carrito se pierde al cerrar la app"),
    ("cross_language", "shopping cart lost after closing the mobile app"),
])

F("mob_intl_hermes", "mobile-app", [
    note("On Android (Hermes) toLocaleString('de-DE', { style: 'currency' }) ignored the locale and "
         "printed 1234.5. Added the @formatjs/intl-numberformat polyfill with de/es/fr locale data."),
], q=[
    ("keyword", "Hermes toLocaleString currency polyfill"),
    ("cross_language", "en Android los precios no salen con el formato de moneda del idioma"),
])

F("mob_ns_camera", "mobile-app", [
    note("App Store review rejected 2.8.0: Guideline 5.1.1, missing NSCameraUsageDescription purpose "
         "string (the receipt scanner uses the camera). Added it to Info.plist via app.json ios.infoPlist."),
], q=[
    ("exact_identifier", "NSCameraUsageDescription"),
    ("cross_language", "Apple rechazó la versión por no explicar para qué usamos la cámara"),
])

F("mob_keyboard", "mobile-app", [
    prompt("on iPhone SE the keyboard covers the password field on the login screen"),
    edit("src/screens/LoginScreen.tsx",
         "<View style={{ flex: 1 }}>",
         "<KeyboardAvoidingView behavior={Platform.OS === 'ios' ? 'padding' : undefined} style={{ flex: 1 }}>"),
], q=[
    ("exact_identifier", "KeyboardAvoidingView"),
    ("paraphrase", "on compact Apple handsets the virtual typing panel hid the secret input at sign-in"),
])

F("mob_sentry_sourcemaps", "mobile-app", [
    bash("npx sentry-cli sourcemaps upload --release mobile@2.9.1 ./dist", t("""
    > Found 2 files
    > Analyzing 2 sources
    > Adding source map references
    > Uploaded files to Sentry
    > File upload complete (processing pending on server)""")),
    note("Crash stack traces in Sentry were minified (index.android.bundle:1:84213) until we uploaded "
         "source maps per release from the EAS build hook."),
], q=[
    ("keyword", "sentry minified stack traces source maps"),
    ("cross_language", "los errores en Sentry salen con el código minificado en la app"),
])

F("mob_offline_queue", "mobile-app", [
    write("src/offline/queue.ts", t("""
        // Mutations made without connectivity are queued in MMKV and replayed in order
        // when NetInfo reports isConnected again.
        export function enqueue(m: PendingMutation) {
          const q = JSON.parse(storage.getString('pending') ?? '[]');
          storage.set('pending', JSON.stringify([...q, m]));
        }""")),
], q=[
    ("keyword", "offline queue NetInfo replay mutations"),
    ("cross_language", "¿cómo guardamos las acciones cuando el móvil no tiene conexión?"),
])

F("mob_bg_upload", "mobile-app", [
    note("En Android 14 la subida de fotos en segundo plano se cortaba: el foreground service necesita "
         "declarar foregroundServiceType=\"dataSync\" y el permiso FOREGROUND_SERVICE_DATA_SYNC."),
], lang="es", q=[
    ("exact_identifier", "FOREGROUND_SERVICE_DATA_SYNC"),
    ("paraphrase_es", "las imágenes dejaban de enviarse cuando el usuario minimizaba la app en los móviles más nuevos"),
    ("cross_language", "photo uploads stop in the background on Android 14"),
])

F("mob_eas_creds", "mobile-app", [
    bash("eas build -p ios --profile production --non-interactive", t("""
    ✖ Failed to set up credentials.
    You're in non-interactive mode. EAS CLI couldn't find any credentials suitable for app-store distribution.
    Run this command again in interactive mode.""")),
    bash("eas credentials -p ios", "✔ Distribution Certificate and Provisioning Profile are set up for com.acme.app"),
], q=[
    ("keyword", "eas build credentials non-interactive"),
])

F("mob_biometric", "mobile-app", [
    edit("src/auth/secureStore.ts",
         "await Keychain.setGenericPassword(user, token);",
         t("""
         await Keychain.setGenericPassword(user, token, {
           accessControl: Keychain.ACCESS_CONTROL.BIOMETRY_ANY,
           accessible: Keychain.ACCESSIBLE.WHEN_UNLOCKED_THIS_DEVICE_ONLY,
         });""")),
], q=[
    ("exact_identifier", "BIOMETRY_ANY"),
    ("paraphrase", "opening the app with a fingerprint or face scan"),
])

F("mob_statusbar", "mobile-app", [
    prompt("en modo oscuro la barra de estado sale con letras negras y no se ve"),
    edit("src/App.tsx",
         "<StatusBar />",
         "<StatusBar barStyle={scheme === 'dark' ? 'light-content' : 'dark-content'} />"),
], lang="es", q=[
    ("paraphrase_es", "la hora y la batería eran ilegibles arriba con el tema nocturno"),
    ("cross_language", "status bar text unreadable in dark mode on the mobile app"),
])

F("mob_retina", "mobile-app", [
    note("Las imágenes se veían borrosas en pantallas retina porque solo exportábamos @1x. Ahora "
         "exportamos @2x y @3x desde Figma y React Native elige la densidad."),
], lang="es", q=[
    ("paraphrase_es", "los iconos salían pixelados en teléfonos con mucha resolución"),
    ("cross_language", "blurry images on retina screens, export @2x and @3x"),
])

# ============================================================================
# notifications-svc (Node.js / TypeScript)
# ============================================================================

F("notif_ws_leak", "notifications-svc", [
    edit("src/ws/server.ts",
         t("""
         wss.on('connection', (socket, req) => {
           clients.set(req.userId, socket);"""),
         t("""
         wss.on('connection', (socket, req) => {
           clients.set(req.userId, socket);
           socket.on('close', () => clients.delete(req.userId));
           socket.on('error', () => clients.delete(req.userId));""")),
    note("Memory leak in the websocket handler: the clients Map never dropped closed sockets; heap grew "
         "~40 MB/h until the pod was OOM-killed every ~30h."),
], q=[
    ("keyword", "memory leak websocket handler"),
    ("paraphrase", "why did RAM usage of the push gateway keep climbing until it got restarted"),
    ("cross_language", "fuga de memoria en el servidor de websockets"),
])
D("notifications-svc", read("src/ws/heartbeat.ts", t("""
    // ping every 30s; terminate sockets that did not answer the previous ping
    export function startHeartbeat(wss: WebSocketServer) {
      return setInterval(() => {
        for (const ws of wss.clients) {
          if (!alive.get(ws)) { ws.terminate(); continue; }
          alive.set(ws, false);
          ws.ping();
        }
      }, 30_000);
    }""")))

F("notif_econnreset", "notifications-svc", [
    bash("kubectl logs deploy/notifications -n prod | grep -m3 -A2 ECONNRESET", t("""
    Error: read ECONNRESET
        at TLSWrap.onStreamRead (node:internal/stream_base_commons:217:20) {
      errno: -104, code: 'ECONNRESET', syscall: 'read', command: 'DATA'
    }""")),
    edit("src/mail/transport.ts",
         "nodemailer.createTransport({ host, port: 465, secure: true, auth })",
         "nodemailer.createTransport({ host, port: 465, secure: true, auth, pool: true, maxConnections: 5, maxMessages: 100 })"),
], q=[
    ("exact_identifier", "ECONNRESET"),
    ("paraphrase", "the outbound SMTP relay kept hanging up on us during big sends"),
])

F("notif_lockduration", "notifications-svc", [
    bash("kubectl logs deploy/notifications-worker -n prod | grep -i stalled | tail -2", t("""
    WARN job 8812 (pdf) stalled more than allowable limit, moved to failed
    ERROR Missing lock for job 8812. moveToFinished""")),
    edit("src/queues/pdf.ts",
         "new Worker('pdf', processor, { connection });",
         "new Worker('pdf', processor, { connection, lockDuration: 120_000, concurrency: 2 }); // renders take 40-90s, the default 30s lock made jobs stall and run twice"),
], q=[
    ("exact_identifier", "lockDuration"),
    ("keyword", "pdf job stalled missing lock"),
])

F("notif_s3_backoff", "notifications-svc", [
    prompt("attachment uploads to S3 fail randomly with 503 Service Unavailable, add retries with exponential backoff"),
    edit("src/attachments/upload.ts",
         "return s3.send(new PutObjectCommand(params));",
         t("""
         for (let attempt = 0; ; attempt++) {
           try {
             return await s3.send(new PutObjectCommand(params));
           } catch (e) {
             if (attempt >= 4 || !isRetryable(e)) throw e;
             await sleep(2 ** attempt * 200 + Math.random() * 100); // exponential backoff + jitter
           }
         }""")),
], q=[
    ("keyword", "retries S3 upload exponential backoff"),
    ("paraphrase", "making writes of files that go out with our emails survive brief cloud hiccups by waiting longer between tries"),
])

F("notif_outlook_buttons", "notifications-svc", [
    note("CTA buttons in the MJML templates rendered as plain links in Outlook desktop. Added a VML "
         "fallback via mj-raw for Outlook 2016/2019 and explicit inner-padding on mj-button."),
], q=[
    ("keyword", "mjml buttons outlook plain links"),
    ("paraphrase", "call-to-action elements in our newsletters looked broken in Microsoft's Windows mail program"),
])

F("notif_twilio_429", "notifications-svc", [
    bash("kubectl logs deploy/notifications-worker -n prod | grep -i twilio | tail -2", t("""
    ERROR sms send failed: Twilio error 20429: Too Many Requests (campaign spring-promo, 1200 msgs in 60s)
    ERROR sms send failed: Twilio error 20429: Too Many Requests""")),
    edit("src/sms/send.ts",
         "await twilio.messages.create(msg);",
         t("""
         await bucket.take(); // TokenBucket({ capacity: 30, refillPerSecond: 10 })
         await twilio.messages.create(msg);""")),
], q=[
    ("exact_identifier", "20429"),
    ("cross_language", "Twilio nos limita los SMS por exceso de peticiones"),
])

F("notif_unhandled", "notifications-svc", [
    bash("node dist/digest/run.js", t("""
    node:internal/process/promises:288
                triggerUncaughtException(err, true /* fromPromise */);
                ^
    [UnhandledPromiseRejection: This error originated either by throwing inside of an async function without a catch block, or by rejecting a promise which was not handled with .catch(). The promise rejected with the reason "SMTP 421".] {
      code: 'ERR_UNHANDLED_REJECTION'
    }""")),
    edit("src/digest/run.ts", "  sendDigest(user);", "  await sendDigest(user);"),
], q=[
    ("exact_identifier", "ERR_UNHANDLED_REJECTION"),
    ("keyword", "unhandled promise rejection digest await"),
])

F("notif_welcome_twice", "notifications-svc", [
    note("Los correos de bienvenida se enviaban dos veces: el evento user.created se publicaba en la "
         "cola de auth y también en la de marketing, y ambos consumidores lo procesaban. Ahora "
         "deduplicamos por event_id en Redis (SETNX con TTL de 24h)."),
], lang="es", q=[
    ("paraphrase_es", "los nuevos registrados recibían el mensaje de saludo repetido"),
    ("keyword", "correos de bienvenida enviados dos veces"),
    ("cross_language", "welcome email sent twice because user.created was consumed from two queues"),
    ("exact_identifier", "SETNX"),
])

F("notif_apns_sandbox", "notifications-svc", [
    note("Las push en iOS no llegaban en producción: el servidor usaba el endpoint sandbox de APNs "
         "(api.sandbox.push.apple.com) con tokens de builds de TestFlight. Cambiado a "
         "api.push.apple.com según APNS_ENV."),
], lang="es", q=[
    ("paraphrase_es", "los avisos a los iPhone de los clientes reales no aparecían"),
    ("keyword", "push de iOS no llegan en producción por el sandbox"),
    ("cross_language", "iOS push notifications not delivered in production, APNs sandbox endpoint"),
])

F("notif_esm", "notifications-svc", [
    bash("npm test", t("""
    FAIL src/http/fetch.test.ts
      ● Test suite failed to run
        Error [ERR_REQUIRE_ESM]: require() of ES Module /app/node_modules/node-fetch/src/index.js from /app/src/http/fetch.ts not supported.""")),
    edit("package.json", '    "node-fetch": "^3.3.2",', '    "node-fetch": "^2.7.0",'),
], q=[
    ("exact_identifier", "ERR_REQUIRE_ESM"),
])

F("notif_digest_tz", "notifications-svc", [
    edit("src/digest/schedule.ts",
         "const sendAt = DateTime.utc().plus({ days: 1 }).set({ hour: 8, minute: 0 });",
         t("""
         // digests went out at 08:00 UTC, i.e. 2-3am for users in Mexico
         const sendAt = DateTime.now().setZone(user.timezone).plus({ days: 1 }).set({ hour: 8, minute: 0 });""")),
], q=[
    ("keyword", "digests went out 08:00 UTC users Mexico timezone"),
    ("cross_language", "el resumen diario por correo llegaba de madrugada a los usuarios de México"),
])

F("notif_streams", "notifications-svc", [
    edit("src/bus/consumer.ts",
         "await sub.subscribe('events', onMessage);",
         "const res = await redis.xreadgroup('GROUP', 'notif', consumerId, 'BLOCK', 5000, 'STREAMS', 'events', '>');"),
    note("Redis pub/sub dropped messages during reconnects (no persistence). Streams + consumer group "
         "give at-least-once delivery; we XACK after processing."),
], q=[
    ("exact_identifier", "XREADGROUP"),
    ("paraphrase", "alerts to users silently vanished while the cache server link flapped; what durable alternative with acknowledgements did we adopt"),
])

F("notif_e164", "notifications-svc", [
    note("Los SMS a números de México fallaban (Twilio 21211 Invalid 'To' Phone Number). Normalizamos "
         "a E.164 con libphonenumber-js: parsePhoneNumber(n, user.country).format('E.164')."),
], lang="es", q=[
    ("exact_identifier", "E.164"),
    ("paraphrase_es", "los mensajes de texto a celulares latinoamericanos rebotaban por cómo escribíamos los prefijos internacionales"),
    ("cross_language", "SMS to Mexican phone numbers rejected by Twilio 21211"),
])

F("notif_list_unsub", "notifications-svc", [
    edit("src/mail/headers.ts",
         "headers['X-Campaign'] = campaign.id;",
         t("""
         headers['X-Campaign'] = campaign.id;
         // Gmail/Yahoo bulk sender rules (Feb 2024)
         headers['List-Unsubscribe'] = `<${unsubUrl}>, <mailto:unsub@acme.io>`;
         headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';""")),
], q=[
    ("exact_identifier", "List-Unsubscribe-Post"),
    ("paraphrase", "meeting the big inbox providers' new requirements for mass mailers so we don't land in spam"),
])

F("notif_jest_open", "notifications-svc", [
    bash("npm test -- --runInBand", t("""
    Test Suites: 24 passed, 24 total
    Tests:       188 passed, 188 total
    Jest did not exit one second after the test run has completed.

    This usually means that there are asynchronous operations that weren't stopped in your tests.""")),
    edit("tests/setup.ts", "", "afterAll(async () => { await redis.quit(); await queue.close(); });"),
], q=[
    ("exact_identifier", "Jest did not exit one second after the test run"),
])

F("notif_charset", "notifications-svc", [
    note("Las plantillas en español mostraban 'Ã©' en vez de 'é': el HTML se generaba en UTF-8 pero la "
         "cabecera decía charset=ISO-8859-1. Forzamos Content-Type: text/html; charset=utf-8."),
], lang="es", q=[
    ("paraphrase_es", "los acentos salían como símbolos raros en los emails"),
    ("cross_language", "garbled accented characters in Spanish email templates, wrong charset"),
])

# ============================================================================
# data-pipeline (Python / Airflow / dbt / Spark)
# ============================================================================

F("data_import_errors", "data-pipeline", [
    bash("airflow dags list-import-errors", t("""
    filepath                                   | error
    ===========================================+==============================================================
    /opt/airflow/dags/marketing_attribution.py | ModuleNotFoundError: No module named 'google.cloud.bigquery'""")),
    edit("requirements-airflow.txt", "apache-airflow-providers-amazon==8.19.0",
         "apache-airflow-providers-amazon==8.19.0\ngoogle-cloud-bigquery==3.17.2"),
], q=[
    ("exact_identifier", "list-import-errors"),
    ("paraphrase", "a workflow didn't appear in the scheduler UI because a package was absent"),
])

F("data_setting_copy", "data-pipeline", [
    bash("python -m pipelines.sales.transform --date 2024-03-31", t("""
    pipelines/sales/transform.py:58: SettingWithCopyWarning:
    A value is trying to be set on a copy of a slice from a DataFrame.
    Try using .loc[row_indexer,col_indexer] = value instead""")),
    edit("pipelines/sales/transform.py",
         t("""
         df_eu = df[df.region == 'EU']
         df_eu['net'] = df_eu['gross'] / 1.21"""),
         t("""
         df_eu = df[df.region == 'EU'].copy()
         df_eu.loc[:, 'net'] = df_eu['gross'] / 1.21""")),
], q=[
    ("exact_identifier", "SettingWithCopyWarning"),
])

F("data_spark_skew", "data-pipeline", [
    bash("spark-submit jobs/sessionize.py --date 2024-04-01", t("""
    24/04/02 03:12:55 INFO DAGScheduler: Stage 14: 199/200 tasks done, 1 task running for 52 min
    24/04/02 03:13:40 ERROR Executor: Exception in task 187.0 in stage 14.0
    java.lang.OutOfMemoryError: GC overhead limit exceeded""")),
    note("Skew: 38% of events have customer_id = 0 (anonymous). Salted the join key (0..31) for the hot "
         "key and broadcast the small dimension table."),
], q=[
    ("keyword", "spark join skew salted customer_id"),
    ("paraphrase", "one straggler worker held up the whole batch because logged-out visitors all shared a single identifier"),
    ("exact_identifier", "GC overhead limit exceeded"),
])

F("data_dbt_unique", "data-pipeline", [
    edit("models/marts/fct_events.sql",
         "{{ config(materialized='incremental') }}",
         "{{ config(materialized='incremental', unique_key='event_id', incremental_strategy='merge') }}  -- re-runs appended duplicate rows"),
], q=[
    ("keyword", "incremental model duplicate rows unique_key"),
    ("cross_language", "el modelo incremental de dbt duplicaba filas al relanzarlo"),
])

F("data_parquet_schema", "data-pipeline", [
    bash("python -m pipelines.orders.compact --month 2024-03", t("""
    pyarrow.lib.ArrowInvalid: Unable to merge: Field amount has incompatible types: int32 vs int64
    (s3://acme-lake/orders/ files before 2024-02 were written by the old exporter)""")),
    edit("pipelines/orders/compact.py",
         "ds = pq.ParquetDataset(path)",
         "ds = pq.ParquetDataset(path, schema=ORDERS_SCHEMA)  # amount: int64 everywhere"),
], q=[
    ("exact_identifier", "ArrowInvalid"),
    ("paraphrase", "combining historic and recent datasets broke because a money attribute changed bit width"),
])

F("data_s3_slowdown", "data-pipeline", [
    bash("python -m pipelines.events.backfill --prefix raw/2024/03/", t("""
    botocore.exceptions.ClientError: An error occurred (SlowDown) when calling the GetObject operation (reached max retries: 4): Please reduce your request rate.""")),
    edit("pipelines/io/s3.py",
         "client = boto3.client('s3')",
         "client = boto3.client('s3', config=Config(retries={'max_attempts': 10, 'mode': 'adaptive'}))"),
], q=[
    ("exact_identifier", "SlowDown"),
    ("cross_language", "S3 nos limita las lecturas, ¿qué configuración de reintentos pusimos en boto3?"),
])

F("data_sensor_reschedule", "data-pipeline", [
    edit("dags/ad_spend.py",
         "wait = S3KeySensor(task_id='wait_for_export', bucket_key=KEY, poke_interval=60)",
         "wait = S3KeySensor(task_id='wait_for_export', bucket_key=KEY, mode='reschedule', poke_interval=300)  # poke mode held a worker slot for hours"),
], q=[
    ("keyword", "reschedule poke mode worker slot"),
    ("paraphrase", "idle polling steps were occupying all the executor capacity"),
])

F("data_ge_nulls", "data-pipeline", [
    bash("great_expectations checkpoint run crm_contacts", t("""
    Validation failed for crm_contacts
      expect_column_values_to_not_be_null(column='email'): unexpected_percent 3.2%""")),
    note("Null emails come from contacts created by phone in the CRM; changed the expectation to mostly=0.95."),
], q=[
    ("exact_identifier", "expect_column_values_to_not_be_null"),
    ("keyword", "null emails validation crm contacts expectation"),
])

F("data_monday_sensor", "data-pipeline", [
    note("El DAG sales_daily fallaba los lunes: el fichero del proveedor llega con retraso tras el fin de "
         "semana y el sensor hacía timeout a los 60 min. Subimos el timeout a 6 horas y añadimos una "
         "alerta a Slack si se supera."),
], lang="es", q=[
    ("paraphrase_es", "el proceso diario de ventas rompía cada primer día laborable porque el archivo externo aparecía tarde"),
    ("keyword", "el DAG falla los lunes, el fichero del proveedor llega con retraso"),
    ("cross_language", "sales_daily DAG fails on Mondays because the supplier file arrives late"),
])

F("data_cents", "data-pipeline", [
    note("Los importes en fct_orders salían multiplicados por 100: el proveedor nuevo manda céntimos "
         "(amount_cents) y el modelo staging no dividía. Añadido amount_cents / 100.0 AS amount en "
         "stg_supplier_orders."),
], lang="es", q=[
    ("exact_identifier", "amount_cents"),
    ("paraphrase_es", "las cifras de pedidos aparecían cien veces más grandes de lo normal"),
    ("cross_language", "order amounts 100x too large because the supplier sends cents"),
])

F("data_dedup_rownum", "data-pipeline", [
    edit("models/staging/stg_events.sql",
         "from {{ source('raw', 'events') }}",
         t("""
         from {{ source('raw', 'events') }}
         -- mobile SDK retries sent the same event up to 3 times
         qualify row_number() over (partition by user_id, event_ts order by _loaded_at desc) = 1""")),
], q=[
    ("keyword", "row_number partition same event retries"),
    ("paraphrase", "client libraries retransmitted tracking hits; how do we keep a single copy in the warehouse"),
])

F("data_backfill", "data-pipeline", [
    bash("airflow dags backfill -s 2024-01-01 -e 2024-01-31 --reset-dagruns revenue_daily", t("""
    [2024-04-03 10:02:11] INFO - Backfill done for revenue_daily: 31 dag runs, 0 failed (max_active_runs=4)""")),
    note("January revenue had to be recomputed after the FX rates fix; the backfill ran 31 runs in ~2h."),
], q=[
    ("exact_identifier", "--reset-dagruns"),
    ("keyword", "backfill january revenue"),
])

F("data_snowflake_suspend", "data-pipeline", [
    bash('snowsql -q "ALTER WAREHOUSE TRANSFORM_WH SET AUTO_SUSPEND = 60 AUTO_RESUME = TRUE"',
         "Statement executed successfully."),
    note("Credits spiked: TRANSFORM_WH stayed up all weekend because AUTO_SUSPEND was 3600."),
], q=[
    ("exact_identifier", "AUTO_SUSPEND"),
    ("paraphrase", "analytics compute costs jumped because the cluster sat idle but billable for days"),
])

F("data_pyarrow_pin", "data-pipeline", [
    note("pyarrow 15 broke pandas.read_parquet on our pinned pandas 2.0.3 (ArrowTypeError on dictionary "
         "columns). Pinned pyarrow<15 in constraints.txt until the pandas upgrade."),
], q=[
    ("keyword", "pinned pyarrow pandas read_parquet"),
    ("exact_identifier", "ArrowTypeError"),
])

F("data_unicode", "data-pipeline", [
    bash("python -m pipelines.supplier.load --file proveedor_2024_03.csv", t("""
    UnicodeDecodeError: 'utf-8' codec can't decode byte 0xf1 in position 2210: invalid continuation byte""")),
    edit("pipelines/supplier/load.py",
         "df = pd.read_csv(path)",
         "df = pd.read_csv(path, encoding='latin-1')  # supplier exports from Excel in Windows-1252"),
], q=[
    ("exact_identifier", "UnicodeDecodeError"),
    ("cross_language", "el CSV del proveedor no se puede leer por la codificación de las eñes"),
])

F("data_toplevel_variable", "data-pipeline", [
    edit("dags/common.py",
         "API_KEY = Variable.get('crm_api_key')",
         "# Variable.get at import time ran on every DAG parse (every 30s x 140 files) -> thousands of metadata DB queries per minute\nAPI_KEY = '{{ var.value.crm_api_key }}'"),
], q=[
    ("paraphrase", "the orchestrator was hammering its own backing store because secrets were looked up whenever definitions were loaded"),
    ("keyword", "Variable.get at import time metadata DB queries"),
])

F("data_small_files", "data-pipeline", [
    note("El job de Spark events_compaction tardaba 3 horas: escribía 48.000 ficheros pequeños. Con "
         "coalesce(200) antes del write baja a 25 minutos."),
], lang="es", q=[
    ("exact_identifier", "coalesce(200)"),
    ("paraphrase_es", "el proceso distribuido era lentísimo por generar miles de archivos diminutos"),
])

F("data_dbt_not_null", "data-pipeline", [
    bash("dbt test --select stg_orders", t("""
    Failure in test not_null_stg_orders_customer_id (models/staging/schema.yml)
      Got 1432 results, configured to fail if != 0""")),
    note("Guest checkout orders from the new web shop have no customer_id; added an is_guest flag and "
         "the test now uses where: not is_guest."),
], q=[
    ("exact_identifier", "not_null_stg_orders_customer_id"),
    ("keyword", "guest checkout orders with no customer_id dbt test"),
])

F("data_dst", "data-pipeline", [
    edit("pipelines/events/normalize.py",
         "df['ts'] = pd.to_datetime(df['ts'])",
         t("""
         # the last Sunday of October produced a duplicated hour 02:00-03:00 (DST change)
         df['ts'] = (pd.to_datetime(df['ts'])
                     .dt.tz_localize('Europe/Madrid', ambiguous='infer', nonexistent='shift_forward')
                     .dt.tz_convert('UTC'))""")),
], q=[
    ("keyword", "DST duplicated hour tz_localize"),
    ("paraphrase", "when clocks went back in autumn, one stretch of readings got counted twice"),
])

F("data_pii_hash", "data-pipeline", [
    edit("pipelines/export/warehouse.py",
         "df = df.drop(columns=['phone'])",
         t("""
         df['email_hash'] = df['email'].str.lower().map(lambda e: sha256((SALT + e).encode()).hexdigest())
         df = df.drop(columns=['email', 'phone'])""")),
], q=[
    ("keyword", "email_hash sha256 salt"),
    ("paraphrase", "keeping people's addresses out of the analytics store while still joining on them"),
])

F("data_churn_dupes", "data-pipeline", [
    note("El informe semanal de churn tenía clientes duplicados: el join con subscriptions traía una "
         "fila por cada suscripción histórica. Filtramos subscriptions.status = 'active' o usamos la "
         "última por cliente."),
], lang="es", q=[
    ("paraphrase_es", "en el reporte de bajas aparecían personas repetidas por cruzar con todas sus altas pasadas"),
    ("cross_language", "weekly churn report had duplicate customers from the subscriptions join"),
])

# ============================================================================
# infra (Terraform / AWS / Kubernetes / Helm)
# ============================================================================

F("infra_tf_lock", "infra", [
    bash("terraform plan", t("""
    ╷
    │ Error: Error acquiring the state lock
    │
    │ Error message: ConditionalCheckFailedException: The conditional request failed
    │ Lock Info:
    │   ID:        5c1e2a7f-9d3b-4c0e-8f4a-1b2c3d4e5f60
    │   Path:      acme-tfstate/prod/network.tfstate
    │   Operation: OperationTypeApply
    │   Who:       runner@gha-7f2k
    │   Created:   2024-04-11 08:02:13.51 +0000 UTC
    ╵""")),
    bash("terraform force-unlock -force 5c1e2a7f-9d3b-4c0e-8f4a-1b2c3d4e5f60",
         "Terraform state has been successfully unlocked!"),
], q=[
    ("exact_identifier", "force-unlock"),
    ("keyword", "error acquiring the state lock"),
    ("cross_language", "terraform dice que el estado está bloqueado, ¿cómo lo desbloqueamos?"),
])
D("infra", bash("terraform plan -lock-timeout=5m -out=plan.tfplan", t("""
    Acquiring state lock. This may take a few moments...
    Refreshing state... [id=vpc-0a1b2c3d]
    Plan: 0 to add, 2 to change, 0 to destroy.
    Releasing state lock. This may take a few moments...""")))

F("infra_pdb_drain", "infra", [
    bash("kubectl drain ip-10-0-3-41.eu-west-1.compute.internal --ignore-daemonsets --delete-emptydir-data", t("""
    evicting pod prod/billing-api-7d9f6c-x2k4q
    error when evicting pods/"billing-api-7d9f6c-x2k4q" -n "prod" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.""")),
    note("billing-api PDB had minAvailable: 2 with replicas: 2, so the drain could never proceed during "
         "the EKS node group upgrade. Changed to maxUnavailable: 1."),
], q=[
    ("keyword", "drain cannot evict pod disruption budget"),
    ("paraphrase", "the cluster maintenance stalled because our minimum-availability guarantee left no room to relocate copies of the service"),
])

F("infra_database_url", "infra", [
    prompt("el despliegue falla porque falta la variable DATABASE_URL en el pod de billing-api"),
    bash("kubectl logs billing-api-6c8b9-qz7wd -n staging", t("""
    Error: missing required environment variable DATABASE_URL
    thread 'main' panicked at src/config.rs:31:10""")),
    edit("charts/billing-api/values-staging.yaml",
         "env: []",
         t("""
         env:
           - name: DATABASE_URL
             valueFrom:
               secretKeyRef:
                 name: billing-db
                 key: url""")),
], lang="es", q=[
    ("exact_identifier", "DATABASE_URL"),
    ("paraphrase_es", "el servicio de cobros no arrancaba en el entorno de pruebas por no tener la cadena de conexión a Postgres"),
    ("cross_language", "deploy fails because an env var is missing in the billing-api pod"),
])

F("infra_oomkilled", "infra", [
    bash("kubectl describe pod search-indexer-0 -n prod | grep -A6 'Last State'", t("""
        Last State:     Terminated
          Reason:       OOMKilled
          Exit Code:    137
        Restart Count:  14
        Limits:
          memory:  256Mi""")),
    edit("charts/search-indexer/values.yaml", "    memory: 256Mi", "    memory: 1Gi"),
], q=[
    ("exact_identifier", "OOMKilled"),
    ("cross_language", "el pod del indexador se reiniciaba con exit code 137 por falta de memoria"),
])

F("infra_acm_pending", "infra", [
    bash("aws acm describe-certificate --certificate-arn $CERT_ARN --query Certificate.DomainValidationOptions", t("""
    [{ "DomainName": "api.acme.io", "ValidationStatus": "PENDING_VALIDATION",
       "ResourceRecord": { "Name": "_3f1a9c.api.acme.io.", "Type": "CNAME", "Value": "_7be2.acm-validations.aws." } }]""")),
    note("Cert for api.acme.io stuck in PENDING_VALIDATION for 2 days: the validation CNAME was created in "
         "the private hosted zone. Moved the aws_route53_record to the public zone."),
], q=[
    ("exact_identifier", "PENDING_VALIDATION"),
    ("paraphrase", "TLS credential for our external hostname never got issued because the ownership proof sat in an internal-only DNS space"),
])

F("infra_s3_acl", "infra", [
    bash("terraform plan", t("""
    │ Error: Unsupported argument
    │   on s3.tf line 4, in resource "aws_s3_bucket" "exports":
    │    4:   acl = "private"
    │ An argument named "acl" is not expected here.""")),
    note("AWS provider v5: bucket acl/versioning/lifecycle are separate resources (aws_s3_bucket_acl, "
         "aws_s3_bucket_versioning). With BucketOwnerEnforced we need no ACL at all."),
], q=[
    ("exact_identifier", "aws_s3_bucket_versioning"),
    ("keyword", "provider v5 s3 bucket acl unsupported argument"),
])

F("infra_vpc_endpoints", "infra", [
    note("NAT Gateway data processing was $2.1k/month, mostly ECR pulls and S3 traffic from data-pipeline. "
         "Added a gateway endpoint for S3 and interface endpoints for ecr.api / ecr.dkr."),
], q=[
    ("keyword", "NAT gateway data processing endpoints ECR S3"),
    ("paraphrase", "the cloud bill for egress was enormous; how did we keep registry downloads and object storage off the paid public exit"),
])

F("infra_hpa_metrics", "infra", [
    bash("kubectl describe hpa billing-api -n prod | tail -3", t("""
    Events:
      Type     Reason                   From                       Message
      Warning  FailedGetResourceMetric  horizontal-pod-autoscaler  failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)""")),
    bash("helm upgrade --install metrics-server metrics-server/metrics-server -n kube-system",
         "Release \"metrics-server\" has been upgraded. Happy Helming!\nSTATUS: deployed"),
], q=[
    ("exact_identifier", "FailedGetResourceMetric"),
    ("paraphrase", "replica count never grew under heavy load because nothing was collecting usage stats"),
])

F("infra_ecr_pull", "infra", [
    bash("kubectl describe pod etl-runner-5f7c9-k2m -n data | tail -4", t("""
      Warning  Failed     12s   kubelet  Failed to pull image "123456789012.dkr.ecr.eu-west-1.amazonaws.com/etl-runner:1.14.0": no basic auth credentials
      Warning  Failed     12s   kubelet  Error: ErrImagePull
      Normal   BackOff    1s    kubelet  Back-off pulling image
      Warning  Failed     1s    kubelet  Error: ImagePullBackOff""")),
    edit("iam/nodes.tf",
         "  managed_policy_arns = [aws_iam_policy.nodes.arn]",
         "  managed_policy_arns = [aws_iam_policy.nodes.arn, \"arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly\"]"),
], q=[
    ("exact_identifier", "ImagePullBackOff"),
    ("keyword", "ecr no basic auth credentials nodes policy"),
])

F("infra_certmanager", "infra", [
    note("El certificado TLS del ingress de staging caducó: cert-manager no podía completar el desafío "
         "HTTP-01 porque el WAF bloqueaba /.well-known/acme-challenge/. Cambiamos a DNS-01 con Route53."),
], lang="es", q=[
    ("exact_identifier", "acme-challenge"),
    ("paraphrase_es", "la web de pruebas mostraba aviso de conexión insegura porque la renovación automática no validaba el dominio"),
    ("cross_language", "staging TLS certificate expired, cert-manager HTTP-01 challenge blocked by the WAF"),
])

F("infra_secrets_manager", "infra", [
    note("Decisión: sacar los secretos de las variables de entorno en los values de Helm y moverlos a "
         "AWS Secrets Manager, sincronizados con External Secrets Operator (un ExternalSecret por "
         "servicio, refresh cada 1h)."),
], lang="es", q=[
    ("paraphrase_es", "dejamos de guardar contraseñas en texto plano dentro de los charts"),
    ("keyword", "mover los secretos a AWS Secrets Manager"),
    ("cross_language", "why we moved secrets out of Helm values into AWS Secrets Manager"),
])

F("infra_sg_drift", "infra", [
    bash("terraform plan -target=module.db", t("""
      # aws_security_group.db will be updated in-place
      ~ resource "aws_security_group" "db" {
          ~ ingress = [
              - { cidr_blocks = ["81.44.12.7/32"], from_port = 5432, to_port = 5432, protocol = "tcp" },
            ]
        }
    Plan: 0 to add, 1 to change, 0 to destroy.""")),
    note("Drift: someone added the office IP 81.44.12.7 to the DB security group by hand in the console. "
         "Added it to Terraform instead of letting the plan remove it."),
], q=[
    ("keyword", "security group drift office IP added by hand in the console"),
])

F("infra_rds_upgrade", "infra", [
    bash("terraform apply plan.tfplan", t("""
    Error: modifying RDS DB Instance (crm-prod): InvalidParameterCombination: The parameter group crm-pg13 with DBParameterGroupFamily postgres13 can't be used for this instance. Use a parameter group with DBParameterGroupFamily postgres15.""")),
    note("Created the crm-pg15 parameter group and used an RDS blue/green deployment for the 13 -> 15 "
         "upgrade; the switchover took 48s."),
], q=[
    ("exact_identifier", "InvalidParameterCombination"),
    ("keyword", "rds postgres 15 upgrade parameter group blue/green"),
])

F("infra_oidc", "infra", [
    edit(".github/workflows/deploy.yml",
         t("""
               - uses: aws-actions/configure-aws-credentials@v4
                 with:
                   aws-access-key-id: ${{ secrets.AWS_ACCESS_KEY_ID }}"""),
         t("""
               - uses: aws-actions/configure-aws-credentials@v4
                 with:
                   role-to-assume: arn:aws:iam::123456789012:role/gha-deploy""")),
    edit("iam/github_oidc.tf",
         "",
         t("""
         condition {
           test     = "StringLike"
           variable = "token.actions.githubusercontent.com:sub"
           values   = ["repo:acme/*:ref:refs/heads/main"]
         }""")),
], q=[
    ("exact_identifier", "token.actions.githubusercontent.com"),
    ("paraphrase", "what replaced the static cloud passwords parked in our build pipelines"),
])

F("infra_helm_pending", "infra", [
    bash("helm upgrade --install notifications charts/notifications -n prod -f values-prod.yaml",
         "Error: UPGRADE FAILED: another operation (install/upgrade/rollback) is in progress"),
    bash("helm history notifications -n prod --max 2 && helm rollback notifications 41 -n prod", t("""
    REVISION  UPDATED                   STATUS           CHART                DESCRIPTION
    41        Tue Apr  9 10:12:03 2024  deployed         notifications-1.8.2  Upgrade complete
    42        Tue Apr  9 11:40:55 2024  pending-upgrade  notifications-1.8.3  Preparing upgrade
    Rollback was a success! Happy Helming!""")),
], q=[
    ("exact_identifier", "another operation (install/upgrade/rollback) is in progress"),
    ("cross_language", "helm se queda en pending-upgrade y no deja desplegar"),
])

F("infra_ndots", "infra", [
    edit("charts/common/templates/deployment.yaml",
         "      dnsPolicy: ClusterFirst",
         t("""
               dnsPolicy: ClusterFirst
               dnsConfig:
                 options:
                   - name: ndots
                     value: "2" """)),
    note("Each external lookup (api.stripe.com) tried the 5 search domains first: 6x DNS queries and "
         "40ms+ extra latency."),
], q=[
    ("exact_identifier", "ndots"),
    ("paraphrase", "resolving third-party hostnames from containers was sluggish since the orchestrator appended internal suffixes before trying the real one"),
])

F("infra_rds_kms", "infra", [
    note("Las copias de RDS no se replicaban a eu-central-1: la copia cross-region de snapshots cifrados "
         "necesita una clave KMS en la región destino. Creamos alias/rds-backup en eu-central-1 y la "
         "pasamos como kms_key_id."),
], lang="es", q=[
    ("exact_identifier", "kms_key_id"),
    ("paraphrase_es", "los respaldos de la base de datos no llegaban a la otra zona geográfica por falta de llave de encriptación"),
])

F("infra_ci_cache", "infra", [
    note("El pipeline de CI tardaba 25 minutos. Cacheamos las capas de Docker con buildx: "
         "cache-from/cache-to type=gha,mode=max. Ahora son 7 minutos."),
], lang="es", q=[
    ("exact_identifier", "type=gha"),
    ("paraphrase_es", "¿cómo aceleramos la integración continua reutilizando imágenes intermedias?"),
    ("cross_language", "speed up CI by caching Docker layers"),
])

F("infra_body_size", "infra", [
    bash("curl -s -o /dev/null -w '%{http_code}' -F file=@export.zip https://crm.acme.io/api/imports", "413"),
    edit("charts/crm/values.yaml",
         "  annotations: {}",
         t("""
           annotations:
             nginx.ingress.kubernetes.io/proxy-body-size: "50m\"""")),
], q=[
    ("exact_identifier", "proxy-body-size"),
    ("cross_language", "subir ficheros grandes al CRM da 413 en el ingress"),
])

F("infra_alert_flap", "infra", [
    edit("monitoring/alerts/api.yaml",
         "    for: 1m",
         "    for: 10m  # HighErrorRate was paging on every 1-minute blip"),
], q=[
    ("keyword", "HighErrorRate alert paging blip"),
    ("paraphrase", "the on-call pager kept going off for momentary spikes"),
])

F("infra_loki_retention", "infra", [
    edit("monitoring/loki/values.yaml",
         "  retention_enabled: false",
         t("""
           retention_enabled: true
         limits_config:
           retention_period: 720h  # 30 days; the chunks bucket had grown to 9 TB""")),
], q=[
    ("exact_identifier", "retention_period"),
    ("keyword", "loki retention 30 days chunks bucket"),
])

F("infra_iam_rotation", "infra", [
    note("Hay que rotar las access keys del usuario IAM deploy-legacy cada 90 días (lo exige la "
         "auditoría SOC2). Recordatorio en el calendario; a medio plazo eliminarlo cuando todos los "
         "repos usen OIDC."),
], lang="es", q=[
    ("paraphrase_es", "cada cuánto hay que renovar las credenciales de la cuenta vieja de publicación por normativa"),
    ("cross_language", "how often must the legacy IAM deploy user's access keys be rotated"),
])

F("infra_for_each", "infra", [
    note("Removing 'staging-b' from var.queues made Terraform destroy/recreate every SQS queue after it "
         "(count indexes shifted). Switched to for_each = toset(var.queues) and moved state with "
         "terraform state mv."),
], q=[
    ("exact_identifier", "toset(var.queues)"),
    ("paraphrase", "dropping an entry from the middle of an array caused the IaC tool to plan teardown and rebuild of all later resources"),
])

F("infra_staging_sleep", "infra", [
    note("El clúster de staging se escala a cero por la noche (21:00) con un CronJob y vuelve a las 7:00; "
         "ahorro de ~40% en EC2."),
], lang="es", q=[
    ("paraphrase_es", "apagamos el entorno de pruebas fuera del horario laboral para gastar menos"),
    ("keyword", "escalar staging a cero por la noche"),
    ("cross_language", "scale staging to zero at night to save money"),
])

# ============================================================================
# Developer environment / repo workflow facts (spread over projects)
# ============================================================================

F("dev_lefthook", "crm-backend", [
    note("pre-commit (the Python framework) took 40s on every commit. Switched to lefthook with "
         "parallel: true, running linters on {staged_files} only."),
], q=[
    ("exact_identifier", "lefthook"),
    ("keyword", "pre-commit 40s every commit staged files"),
])

F("dev_branch_protect", "billing-api", [
    note("La rama main está protegida: los merges necesitan 2 aprobaciones y el check 'ci/test' en "
         "verde; no se permite push directo ni force push."),
], lang="es", q=[
    ("paraphrase_es", "reglas para integrar cambios en la línea principal del repositorio"),
    ("cross_language", "how many approvals are required to merge into main"),
])

F("dev_exec_format", "data-pipeline", [
    bash("docker run --rm acme/etl-runner:1.14.0 --help", "exec /usr/local/bin/etl-runner: exec format error"),
    note("The etl-runner image was built on the M2 laptop (arm64); rebuilt with "
         "docker buildx build --platform linux/amd64."),
], q=[
    ("exact_identifier", "exec format error"),
    ("paraphrase", "the bundle produced on the Apple silicon notebook refused to launch on Intel servers"),
])

F("dev_pg_role", "crm-backend", [
    bash("psql -d crm_dev", t("""
    psql: error: connection to server on socket "/tmp/.s.PGSQL.5432" failed: FATAL:  role "postgres" does not exist""")),
    bash("createuser -s postgres && psql -U postgres -d crm_dev -c 'select 1'", " ?column?\n----------\n        1\n(1 row)"),
], q=[
    ("exact_identifier", "role \"postgres\" does not exist"),
    ("cross_language", "en el portátil Postgres dice que no existe el rol postgres"),
])

F("dev_integ_compose", "crm-backend", [
    note("Para correr los tests de integración en local hay que levantar docker compose con el perfil "
         "test: docker compose --profile test up -d (Postgres 15 + Redis + LocalStack). Luego "
         "pytest -m integration."),
], lang="es", q=[
    ("exact_identifier", "--profile test"),
    ("paraphrase_es", "cómo arrancar las dependencias antes de ejecutar las pruebas completas en mi máquina"),
    ("cross_language", "how to run the integration tests locally with docker compose"),
])

F("dev_ssh_build", "crm-backend", [
    bash("docker build -t crm:dev .", t("""
    #12 [builder 5/7] RUN pip install -r requirements.txt
    #12 3.112   git@github.com: Permission denied (publickey).
    #12 3.114   fatal: Could not read from remote repository.
    #12 ERROR: process "/bin/sh -c pip install -r requirements.txt" did not complete successfully: exit code: 1""")),
    edit("Dockerfile",
         "RUN pip install -r requirements.txt",
         "RUN --mount=type=ssh pip install -r requirements.txt  # private acme-utils dependency; build with --ssh default"),
], q=[
    ("exact_identifier", "--mount=type=ssh"),
    ("keyword", "docker build private git dependency ssh"),
])

# ============================================================================
# More distractors: same vocabulary or topic as a target, different fact
# ============================================================================

D("auth-service", edit("internal/token/issuer.go",
    "const accessTTL = time.Hour",
    "const (\n\taccessTTL  = 15 * time.Minute\n\trefreshTTL = 30 * 24 * time.Hour // refresh tokens rotate on every use\n)"))
D("billing-api", note("GET /customers/:id/invoices now paginates (limit 50, max 200) and returns a next_cursor."))
D("billing-api", edit("src/webhooks/stripe.rs",
    '        "invoice.paid" => handle_paid(&st, evt).await,',
    '        "invoice.paid" => handle_paid(&st, evt).await,\n        "customer.subscription.deleted" => handle_cancel(&st, evt).await,'))
D("web-dashboard", read("src/utils/format.ts", t("""
    // amounts come from the API in cents
    export const formatAmount = (cents: number) => (cents / 100).toFixed(2);
    export const formatPercent = (v: number) => `${(v * 100).toFixed(1)}%`;""")))
D("billing-api", bash("sqlx migrate add create_credit_notes",
    "Creating migrations/20240402101500_create_credit_notes.sql\n\nCongratulations on creating your first migration!"))
D("crm-backend", edit("crm/settings/base.py",
    '        "CONN_MAX_AGE": 0,',
    '        "CONN_MAX_AGE": 60,  # persistent connections, pgbouncer in transaction mode'))
D("auth-service", note("User profiles are cached in Redis for 5 minutes (key profile:{id}); invalidated on PATCH /me."))
D("notifications-svc", edit("src/index.ts",
    "await worker.run();",
    t("""
    process.on('SIGTERM', async () => {
      await worker.close(); // let the current job finish before the pod goes away
      process.exit(0);
    });
    await worker.run();""")))
D("auth-service", bash("go test -race ./internal/token/...",
    "ok  \tgithub.com/acme/auth-service/internal/token\t1.204s"))
D("mobile-app", prompt("add a Google sign-in button to the login screen, same style as the Apple one"))
D("auth-service", note("LDAP group sync runs nightly at 02:00 and maps AD groups to roles (admin, finance, support)."))
D("notifications-svc", edit("src/routes/preferences.ts",
    "app.register(preferencesRoutes);",
    "await app.register(rateLimit, { max: 100, timeWindow: '1 minute' });\napp.register(preferencesRoutes);"))
D("auth-service", write("internal/mfa/recovery.go", t("""
    package mfa

    // Recovery codes: 10 single-use codes per user, stored hashed; shown once at enrolment.
    func GenerateRecoveryCodes(n int) ([]string, error) {
    	return randomCodes(n, 10)
    }""")))
D("auth-service", note("Magic-link login emails expire after 15 minutes; the link is bound to the browser that requested it."))
D("crm-backend", note("Deals list: added a composite index on (tenant_id, stage); the kanban view loads in ~200ms now."))
D("crm-backend", edit("crm/deals/tasks.py",
    "send_reminder_email.delay(deal.id)",
    "send_reminder_email.apply_async((deal.id,), countdown=3600)  # remind one hour after the stage change"))
D("crm-backend", bash("python manage.py migrate", t("""
    Operations to perform:
      Apply all migrations: admin, auth, contacts, contenttypes, crm, deals, sessions
    Running migrations:
      Applying contacts.0044_contact_nickname... OK""")))
D("crm-backend", note("test_deal_probability was flaky: a shared fixture dict was mutated by another test. "
                      "Fixed with copy.deepcopy in the fixture; nothing to do with dates."))
D("web-dashboard", note("Vitest snapshot for KpiCard was flaky because of random ids; fixtures now use stable ids."))
D("data-pipeline", note("Finance gets a weekly CSV export of invoices in s3://acme-finance/exports/, generated by the revenue_daily DAG on Mondays."))
D("auth-service", note("users.email has had a unique index on lower(email) since v1; signup rejects duplicates with 409."))
D("web-dashboard", edit("src/components/DataTable.tsx",
    "const pageSize = 50;",
    "const pageSize = 25; // client-side pagination, design asked for 25 rows"))
D("notifications-svc", edit("src/config.ts",
    "release: undefined,",
    "release: process.env.SENTRY_RELEASE, // tag Sentry events with the deployed version"))
D("notifications-svc", note("The hourly digest is a BullMQ repeatable job; jobId = digest:{hour} so repeats never run twice."))
D("mobile-app", edit("src/hooks/useConnectivity.ts",
    "NetInfo.addEventListener(setState);",
    "useEffect(() => NetInfo.addEventListener(setState), []); // returns the unsubscribe as cleanup"))
D("web-dashboard", read(".env.example", "VITE_SENTRY_DSN=\nVITE_FEATURE_FLAGS=reports,exports\nVITE_MAPBOX_TOKEN=")) 
D("web-dashboard", bash("npx playwright test", t("""
    Running 38 tests using 2 workers
      38 passed (1.4m)""")))
D("mobile-app", note("i18n: added pt-BR translations for onboarding; missing keys fall back to English."))
D("notifications-svc", edit("src/ws/server.ts",
    "const wss = new WebSocketServer({ server });",
    "const wss = new WebSocketServer({ server, maxPayload: 64 * 1024 }); // reject huge frames"))
D("web-dashboard", edit("src/api/http.ts",
    "return Promise.reject(error);",
    t("""
    if (error.response?.status === 401 && !original._retry) {
      original._retry = true;
      await refreshSession();
      return http(original);
    }
    return Promise.reject(error);""")))
D("notifications-svc", note("Android push moved to the FCM HTTP v1 API (the legacy server key is deprecated); "
                            "auth now uses a Google service account."))
D("mobile-app", note("Receipt scanner switched to react-native-vision-camera; frame processor does the cropping."))
D("billing-api", bash("cargo test -p billing-api --test stripe_client", t("""
    running 3 tests
    test retries_on_connection_closed ... ok
    test parses_error_body ... ok
    test sends_idempotent_post ... ok
    test result: ok. 3 passed; 0 failed; 0 ignored""")))
D("infra", edit("s3/buckets.tf",
    "  rule { id = \"expire-tmp\" }",
    "  rule {\n    id     = \"exports-to-glacier\"\n    status = \"Enabled\"\n    transition { days = 90, storage_class = \"GLACIER\" }\n  }"))
D("notifications-svc", note("SMS sender ID 'ACME' is registered for Spain and France; other countries use the long number."))
D("auth-service", note("user.created events now include the locale so the welcome email can be localised."))
D("notifications-svc", note("Digest template shows the last 7 days of activity, capped at 20 items."))
D("data-pipeline", edit("jobs/sessionize.py",
    '    .config("spark.sql.shuffle.partitions", 200)',
    '    .config("spark.sql.shuffle.partitions", 400)'))
D("data-pipeline", write("snapshots/customers_snapshot.sql", t("""
    {% snapshot customers_snapshot %}
    {{ config(target_schema='snapshots', unique_key='customer_id', strategy='timestamp', updated_at='updated_at') }}
    select * from {{ source('crm', 'customers') }}
    {% endsnapshot %}""")))
D("data-pipeline", bash("airflow dags list | head -5", t("""
    dag_id                | filepath              | owner | paused
    ======================+=======================+=======+=======
    crm_sync              | crm_sync.py           | data  | False
    revenue_daily         | revenue_daily.py      | data  | False
    sales_daily           | sales_daily.py        | data  | False""")))
D("data-pipeline", note("Snowflake warehouses: TRANSFORM_WH (medium) for dbt, BI_WH (small) for Looker."))
D("infra", write("charts/crm/templates/pdb.yaml", t("""
    apiVersion: policy/v1
    kind: PodDisruptionBudget
    metadata:
      name: crm-web
    spec:
      maxUnavailable: 1
      selector:
        matchLabels:
          app: crm-web""")))
D("infra", bash("kubectl top pods -n prod --sort-by=memory | head -4", t("""
    NAME                              CPU(cores)   MEMORY(bytes)
    search-indexer-0                  412m         903Mi
    notifications-6f9c8d7b5-2kq8v     88m          311Mi
    billing-api-7d9f6c-x2k4q          35m          64Mi""")))
D("infra", bash("aws acm describe-certificate --certificate-arn $DASH_CERT_ARN --query Certificate.Status", '"ISSUED"'))
D("infra", edit("charts/billing-api/values.yaml",
    "  maxReplicas: 10",
    "  maxReplicas: 20"))
D("infra", write("ecr/lifecycle.json", '{"rules": [{"rulePriority": 1, "description": "keep last 30 images", "selection": {"tagStatus": "any", "countType": "imageCountMoreThan", "countNumber": 30}, "action": {"type": "expire"}}]}'))
D("infra", edit("monitoring/alerts/nodes.yaml",
    "",
    "- alert: DiskAlmostFull\n  expr: node_filesystem_avail_bytes / node_filesystem_size_bytes < 0.15\n  for: 15m"))
D("notifications-svc", bash("docker buildx build --platform linux/amd64,linux/arm64 -t acme/notifications:1.12.0 --push .", t("""
    #18 exporting manifest list sha256:9f1c...
    #18 pushing layers 4.1s done
    #18 DONE 11.2s""")))
D("web-dashboard", note("Dashboard repo uses husky + lint-staged: eslint --fix and prettier on staged files before each commit."))
D("infra", write(".github/CODEOWNERS", "/charts/   @acme/platform\n/iam/      @acme/platform @acme/security\n*.tf       @acme/platform"))
D("web-dashboard", write(".env.example", "API_DOCS_URL=see README\nSTRIPE_PUBLISHABLE_KEY=pk_test_xxx\nMAPBOX_TOKEN=replace-me"))
D("auth-service", note("El cron de limpieza de sesiones expiradas corre cada hora y borra filas con expires_at < now() - 7 días."), lang="es")
D("billing-api", note("Los reembolsos totales se hacen desde el panel de Stripe; la API solo registra el evento charge.refunded."), lang="es")
D("crm-backend", note("La importación de HubSpot corre cada 15 minutos y solo trae contactos modificados desde la última ejecución."), lang="es")
D("data-pipeline", note("El informe de churn se envía los lunes a dirección en PDF; lo genera el DAG churn_weekly."), lang="es")
D("notifications-svc", note("Las push de Android usan FCM v1; las de iOS van por APNs con token .p8 y el team ID de Acme."), lang="es")
D("mobile-app", prompt("añade soporte para modo oscuro en la pantalla de perfil"), lang="es")
D("infra", note("El clúster de producción tiene tres node groups: general, memoria y spot para jobs batch."), lang="es")
D("web-dashboard", note("Las fechas de la tabla de clientes se muestran con date-fns en formato dd/MM/yyyy."), lang="es")

# ============================================================================
# Recurring identifiers: an identifier that keeps coming back (the same error
# code in every later build, a path edited session after session, a task id in
# every scheduler log), and one older record that is the specific answer. The
# queries name the identifier plus a detail of that record, sometimes with a word
# the record lacks; what they test is that the answer is not buried under the
# hundreds of newer records holding the same identifier.
# ============================================================================

RECURRING = []  # dicts: id, project, records, queries, repeat (rng -> record), count

# How many newer records repeat each identifier: above search's per-term bound (200).
REPEATS = 240


def R(fid, project, records, q, repeat, count=REPEATS):
    assert fid not in _FACT_IDS, fid
    assert project in PROJECTS, project
    _FACT_IDS.add(fid)
    RECURRING.append(dict(id=fid, project=project, records=records, queries=q, repeat=repeat,
                          count=count))


def _pick(r, xs):
    return xs[r.randrange(len(xs))]


def _e0506(r):
    var = _pick(r, ["self.total", "entry.balance", "self.cursor", "state.version", "row.status",
                    "self.retries"])
    file = _pick(r, ["src/routes/invoices.rs", "src/repo/customers.rs", "crates/ledger/src/lib.rs",
                     "src/invoice/render.rs", "src/payments/mod.rs"])
    line = r.randint(20, 400)
    return bash("cargo build", t("""
        Compiling billing-api v0.4.%d (/work/billing-api)
        error[E0506]: cannot assign to `%s` because it is borrowed
          --> %s:%d:9
        For more information about this error, try `rustc --explain E0506`.
        error: could not compile `billing-api` (lib) due to 1 previous error""")
                % (r.randint(0, 9), var, file, line))


R("rec_e0506_discount", "billing-api", [
    bash("cargo build", t("""
        Compiling billing-api v0.4.0 (/work/billing-api)
        error[E0506]: cannot assign to `invoice.total` because it is borrowed
           --> src/pricing/discount.rs:58:13
            |
        55  |     let first = invoice.lines.first().map(|l| &l.amount);
            |                 ------------- `invoice.total` is borrowed here
        58  |     invoice.total = tiered_rebate(first, &tier);
            |     ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ `invoice.total` is assigned to here
        error: could not compile `billing-api` (lib) due to 1 previous error""")),
    edit("src/pricing/discount.rs",
         "let first = invoice.lines.first().map(|l| &l.amount);",
         t("""
         // E0506: copy the amount out so nothing of the invoice stays borrowed
         let first = invoice.lines.first().map(|l| l.amount.clone());""")),
], q=[
    ("recurring_identifier", "E0506 tiered_rebate"),
    ("recurring_identifier", "E0506 invoice.total first line amount cloned"),
    ("recurring_identifier", "E0506 tiered rebate workaround"),
    ("recurring_identifier", "E0506 src/pricing/discount.rs"),
], repeat=_e0506)


def _ossl(r):
    script = _pick(r, ["jest --ci", "webpack --mode production", "tsc -b && node dist/worker.js",
                       "npm run lint", "ts-node scripts/seed.ts"])
    return bash("npm run " + _pick(r, ["test", "build", "start", "lint", "seed"]), t("""
        > notifications-svc@2.%d.0 %s
        node:internal/crypto/hash:%d
          return new _Hash(algorithm, options);
        Error: error:0308010C:digital envelope routines::unsupported
            at new Hash (node:internal/crypto/hash:%d:19)
          opensslErrorStack: [ 'error:03000086:digital envelope routines::initialization error' ],
          library: 'digital envelope routines',
          code: 'ERR_OSSL_EVP_UNSUPPORTED'
        Node.js v17.%d.0""") % (r.randint(0, 20), script, r.randint(60, 80), r.randint(60, 80),
                               r.randint(0, 9)))


R("rec_ossl_email_preview", "notifications-svc", [
    bash("npm run email-preview", t("""
        > notifications-svc@2.3.0 email-preview
        > email dev --dir src/emails --port 3030
        Error: error:0308010C:digital envelope routines::unsupported
          code: 'ERR_OSSL_EVP_UNSUPPORTED'
        WARN Broken build, fix the error above.""")),
    edit("package.json",
         '"email-preview": "email dev --dir src/emails --port 3030",',
         '"email-preview": "NODE_OPTIONS=--openssl-legacy-provider email dev --dir src/emails --port 3030",'),
], q=[
    ("recurring_identifier", "ERR_OSSL_EVP_UNSUPPORTED email-preview"),
    ("recurring_identifier", "ERR_OSSL_EVP_UNSUPPORTED openssl-legacy-provider emails"),
    ("recurring_identifier", "ERR_OSSL_EVP_UNSUPPORTED email preview broken again"),
], repeat=_ossl)


def _daily_orders(r):
    day = "2024-0%d-%02d" % (r.randint(3, 5), r.randint(1, 28))
    state = _pick(r, ["success", "success", "success", "up_for_retry", "failed"])
    return bash("airflow tasks states-for-dag-run orders_daily scheduled__%sT02:00:00+00:00" % day,
                t("""
        dag_id       | run_id                                   | task_id            | state
        orders_daily | scheduled__%sT02:00:00+00:00 | extract_orders     | success
        orders_daily | scheduled__%sT02:00:00+00:00 | load_daily_orders  | %s
        orders_daily | scheduled__%sT02:00:00+00:00 | dbt_run_marts      | %s""")
                % (day, day, state, day, "success" if state == "success" else "upstream_failed"))


R("rec_load_daily_orders_tz", "data-pipeline", [
    bash("airflow tasks test orders_daily load_daily_orders 2024-03-10", t("""
        [2024-03-10, 02:00:04 UTC] {load.py:41} INFO - loading partition ds_nodash=20240310
        [2024-03-10, 02:00:09 UTC] {load.py:77} WARNING - 0 rows for 2024-03-10 in America/Chicago; 
        DST gap: local midnight partition missing
        [2024-03-10, 02:00:09 UTC] {taskinstance.py:1400} INFO - Marking task as SUCCESS""")),
    edit("dags/orders_daily.py",
         'partition = context["ds_nodash"]',
         t("""
         # load_daily_orders: partition by UTC date, never local midnight (DST gap on 2024-03-10)
         partition = pendulum.parse(context["ts"]).in_timezone("UTC").format("YYYYMMDD")""")),
], q=[
    ("recurring_identifier", "load_daily_orders DST gap"),
    ("recurring_identifier", "load_daily_orders zero rows daylight saving"),
    ("recurring_identifier", "load_daily_orders partition UTC pendulum"),
], repeat=_daily_orders)


def _invoice_table(r):
    what = _pick(r, [("sortBy", "sortKey"), ("pageSize", "limit"), ("filters", "query"),
                     ("rows", "items"), ("onSelect", "onRowSelect")])
    return edit("src/hooks/useInvoiceTable.ts",
                "const %s = state.%s;" % (what[0], what[0]),
                "const %s = state.%s ?? defaults.%s; // %d" % (what[1], what[0], what[1],
                                                               r.randint(1, 999)))


R("rec_use_invoice_table_loop", "web-dashboard", [
    prompt("the invoices page freezes and the profiler shows useInvoiceTable re-rendering in a "
           "loop, maximum update depth exceeded"),
    edit("src/hooks/useInvoiceTable.ts",
         "const columns = buildColumns(currency);",
         t("""
         // a new columns array each render re-ran the effect that sets state: memoise it
         const columns = useMemo(() => buildColumns(currency), [currency]);""")),
], q=[
    ("recurring_identifier", "useInvoiceTable maximum update depth"),
    ("recurring_identifier", "useInvoiceTable buildColumns useMemo"),
    ("recurring_identifier", "useInvoiceTable freezes rerender fix"),
    ("recurring_identifier", "src/hooks/useInvoiceTable.ts useMemo"),
], repeat=_invoice_table)


def _sync_hubspot(r):
    n = r.randint(20, 900)
    return bash("celery -A crm inspect active", t("""
        [%s,%03d: INFO/ForkPoolWorker-%d] Task deals.tasks.sync_hubspot[%08x-1c2d] received
        [%s,%03d: INFO/ForkPoolWorker-%d] Task deals.tasks.sync_hubspot[%08x-1c2d] succeeded in %.2fs: {'synced': %d}""")
                % ("2024-04-%02d 0%d:%02d:%02d" % (r.randint(1, 28), r.randint(0, 9), r.randint(0, 59), r.randint(0, 59)),
                   r.randint(0, 999), r.randint(1, 4), r.getrandbits(32),
                   "2024-04-%02d 0%d:%02d:%02d" % (r.randint(1, 28), r.randint(0, 9), r.randint(0, 59), r.randint(0, 59)),
                   r.randint(0, 999), r.randint(1, 4), r.getrandbits(32), r.random() * 9, n))


R("rec_sync_hubspot_dupes", "crm-backend", [
    note("duplicate contacts after deals.tasks.sync_hubspot: two workers picked up the same "
         "webhook and both inserted. fixed with get_or_create on hubspot_id plus a unique "
         "constraint on that column"),
    edit("deals/tasks.py",
         "contact = Contact.objects.filter(hubspot_id=hid).first()",
         "contact, _ = Contact.objects.get_or_create(hubspot_id=hid, defaults=fields)"),
], q=[
    ("recurring_identifier", "deals.tasks.sync_hubspot duplicate contacts"),
    ("recurring_identifier", "deals.tasks.sync_hubspot get_or_create hubspot_id"),
    ("recurring_identifier", "deals.tasks.sync_hubspot two workers same webhook race"),
], repeat=_sync_hubspot)


def _node_groups(r):
    size = r.randint(2, 9)
    return bash("terraform plan -target=module.eks", t("""
        module.eks.aws_eks_node_group.general: Refreshing state... [id=prod:general-%d]
          # module.eks.aws_eks_node_group.general will be updated in-place
          ~ scaling_config { ~ desired_size = %d -> %d }
          (modules/eks/managed_nodes.tf line %d)
        Plan: 0 to add, 1 to change, 0 to destroy.""") % (r.randint(1, 9), size, size + 1,
                                                          r.randint(10, 80)))


R("rec_node_groups_ami", "infra", [
    bash("terraform plan -target=module.eks", t("""
          # module.eks.aws_eks_node_group.general must be replaced
        -/+ resource "aws_eks_node_group" "general" {
              ~ ami_type        = "AL2_x86_64" -> "AL2023_x86_64_STANDARD" # forces replacement
        Plan: 1 to add, 0 to change, 1 to destroy.""")),
    edit("modules/eks/managed_nodes.tf",
         "  instance_types = var.instance_types",
         t("""
           instance_types = var.instance_types
           # pin ami_type: the provider's new default forced a replacement of every node
           ami_type       = "AL2_x86_64\"""")),
], q=[
    ("recurring_identifier", "modules/eks/managed_nodes.tf ami_type"),
    ("recurring_identifier", "modules/eks/managed_nodes.tf forces replacement AL2023"),
    ("recurring_identifier", "modules/eks/managed_nodes.tf pin ami_type why"),
], repeat=_node_groups)


# ============================================================================
# Long outputs: one tool call whose output runs to thousands of characters (a
# test run, a build log, a plan, a long file) with the one thing worth
# remembering past its first 1,500 characters. A sentence model that reads about
# 128 tokens of a record never gets that far. Each fact has a near-miss: the same
# command's long output in another session of the project, where nothing of note
# happens. The queries share no content word with their target, so they measure
# meaning alone. All of it comes from its own random stream: every record and
# query above stays exactly as it was.
# ============================================================================

LONG = []  # dicts: id, project, record, distractor, marker, queries

_LR = Random(SEED + 2)


def L(fid, project, make, marker, q):
    """A fact buried in one long tool output.

    make(r, hit) -> record. hit=True gives the target, whose detail (`marker`,
    literally) sits past the first 1,500 characters of the response; hit=False
    gives the near-miss. q: [(lang, text)], long_output queries.
    """
    assert fid not in _FACT_IDS, fid
    assert project in PROJECTS, project
    _FACT_IDS.add(fid)
    LONG.append(dict(id=fid, project=project, record=make(_LR, True), distractor=make(_LR, False),
                     marker=marker, queries=q))


def _hex(r, n):
    return "".join(r.choice("0123456789abcdef") for _ in range(n))


def _vhash(r):
    return "".join(r.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
                   for _ in range(8))


def _hms(sec):
    sec = int(sec) % 86400
    return "%02d:%02d:%02d" % (sec // 3600, sec // 60 % 60, sec % 60)


# ---- billing-api: cargo test ------------------------------------------------

_RS_UNIT = [
    "config::tests::reads_env_overrides", "config::tests::defaults_when_unset",
    "config::tests::rejects_bad_port", "error::tests::maps_sqlx_not_found_to_404",
    "error::tests::validation_error_lists_fields", "error::tests::internal_error_hides_details",
    "invoice::numbering::tests::sequential_per_year", "invoice::numbering::tests::prefix_per_tenant",
    "invoice::numbering::tests::resets_on_new_year", "invoice::render::tests::html_escapes_customer_name",
    "invoice::render::tests::lines_sorted_by_position", "invoice::render::tests::footer_has_bank_details",
    "invoice::tests::void_twice_is_noop", "invoice::tests::cannot_edit_after_issue",
    "invoice::tests::due_date_from_terms", "invoice::tests::draft_has_no_number",
    "ledger::tests::balance_after_credit", "ledger::tests::entries_are_append_only",
    "ledger::tests::debit_and_credit_sum_to_zero", "ledger::tests::snapshot_matches_replay",
    "money::tests::adds_same_currency", "money::tests::refuses_mixed_currency_add",
    "money::tests::displays_two_decimals", "money::tests::parses_minor_units",
    "money::tests::negative_amounts_keep_sign", "payments::tests::maps_stripe_status",
    "payments::tests::ignores_unknown_event", "payments::tests::payout_arrival_date_parsed",
    "repo::customers::tests::upsert_by_email", "repo::customers::tests::soft_delete_hides_row",
    "repo::invoices::tests::list_paginates", "repo::invoices::tests::filter_by_status",
    "routes::customers::tests::create_requires_name", "routes::health::tests::returns_ok",
    "routes::invoices::tests::create_validates_lines", "routes::invoices::tests::get_unknown_is_404",
    "routes::invoices::tests::list_filters_by_status", "tax::tests::standard_rate_spain",
    "tax::tests::zero_rate_exports", "tax::tests::reduced_rate_books", "tax::tests::rate_lookup_by_country",
    "terms::tests::net_30_from_issue_date", "terms::tests::end_of_month_terms",
    "tenant::tests::header_selects_tenant", "tenant::tests::unknown_tenant_rejected",
]
_RS_API = [
    "health_returns_200", "create_customer_returns_201", "create_customer_rejects_empty_name",
    "get_customer_returns_json", "list_customers_paginates", "create_invoice_returns_201",
    "create_invoice_requires_lines", "issue_invoice_sets_issued_at", "void_invoice_returns_204",
    "list_invoices_filters_by_customer", "download_pdf_has_content_type", "unknown_route_is_404",
    "missing_tenant_header_is_400", "stripe_event_for_unknown_invoice_is_ignored",
    "credit_note_references_invoice", "patch_customer_updates_email",
]
_RS_INV = [
    "numbers_are_sequential_within_tenant", "numbers_restart_each_year", "two_tenants_do_not_share_numbers",
    "draft_gets_number_on_issue", "issued_invoice_is_immutable", "totals_sum_line_amounts",
    "tax_lines_grouped_by_rate", "void_keeps_number", "credit_note_negates_total",
    "pdf_render_is_deterministic", "list_sorted_by_issue_date",
]


def _lo_cargo_test(r, hit):
    deps = [("serde", "1.0.199"), ("tokio", "1.37.0"), ("sqlx", "0.7.4"), ("tower-http", "0.5.2"),
            ("uuid", "1.8.0"), ("chrono", "0.4.38"), ("thiserror", "1.0.59"), ("reqwest", "0.12.3")]
    out = ["   Compiling %s v%s" % d for d in r.sample(deps, 3)]
    out.append("   Compiling billing-api v0.4.%d (/home/dev/acme/billing-api)" % r.randint(3, 9))
    out.append("    Finished `test` profile [unoptimized + debuginfo] target(s) in %.2fs" % r.uniform(20, 70))

    def binary(label, dep, names, bad=None):
        lines = ["     Running %s (target/debug/deps/%s-%s)" % (label, dep, _hex(r, 16)), "",
                 "running %d tests" % len(names)]
        lines += ["test %s ... %s" % (n, "FAILED" if n == bad else "ok") for n in names]
        if bad is None:
            lines += ["", "test result: ok. %d passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; "
                      "finished in %.2fs" % (len(names), r.uniform(0.05, 3) if names else 0), ""]
        return lines

    unit = r.sample(_RS_UNIT, r.randint(36, 42))
    out += binary("unittests src/lib.rs", "billing_api", unit)
    out += binary("unittests src/main.rs", "billing_api", [])
    out += binary("tests/api.rs", "api", r.sample(_RS_API, r.randint(12, 15)))
    inv = r.sample(_RS_INV, r.randint(8, 10))
    if not hit:
        out += binary("tests/invoices.rs", "invoices", inv)
        out += ["   Doc-tests billing_api", "", "running 3 tests",
                "test src/money.rs - money::Money::from_minor (line 41) ... ok",
                "test src/invoice/numbering.rs - invoice::numbering::format_number (line 18) ... ok",
                "test src/terms.rs - terms::Terms::due_date (line 27) ... ok", "",
                "test result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; "
                "finished in %.2fs" % r.uniform(0.5, 2)]
        return bash("cargo test", "\n".join(out))
    bad = "numbering_no_gap_after_rollback"
    out += binary("tests/invoices.rs", "invoices", inv + [bad], bad)
    out += ["", "failures:", "", "---- %s stdout ----" % bad,
            "thread '%s' panicked at tests/invoices.rs:%d:5:" % (bad, r.randint(180, 240)),
            "assertion `left == right` failed: a rolled-back issue must not consume a number "
            "(nextval on invoice_number_seq is not undone by ROLLBACK)",
            '  left: "INV-2024-000043"', ' right: "INV-2024-000042"',
            "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace", "", "",
            "failures:", "    " + bad, "",
            "test result: FAILED. %d passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in %.2fs"
            % (len(inv), r.uniform(1, 4)), "",
            "error: test failed, to rerun pass `--test invoices`"]
    return bash("cargo test", "\n".join(out))


L("lo_bill_number_gap", "billing-api", _lo_cargo_test, "numbering_no_gap_after_rollback", [
    ("en", "which check caught serial bill identifiers skipping a value after an aborted write"),
    ("es", "¿qué prueba detectó un hueco en la numeración correlativa cuando se deshacía la operación?"),
])


# ---- billing-api: a long read of the reconciliation module -------------------

_RECONCILE = '''\
//! Bank reconciliation: pairs the payouts Stripe sends to our account with the
//! lines of the statement the bank publishes every morning (CAMT.053).
use std::collections::HashSet;

use chrono::{Duration, NaiveDate};
use tracing::{debug, info, warn};

use crate::money::Currency;
use crate::repo::payouts::PayoutRow;

/// One booked line of the bank statement.
#[derive(Debug, Clone)]
pub struct BankLine {
    pub id: String,
    pub booked_on: NaiveDate,
    pub amount_minor: i64,
    pub currency: Currency,
    pub reference: String,
    pub counterparty: String,
}

/// A payout as Stripe reports it, already stored by the payouts sync.
#[derive(Debug, Clone)]
pub struct Payout {
    pub id: String,
    pub arrival_date: NaiveDate,
    pub amount_minor: i64,
    pub currency: Currency,
    pub statement_descriptor: Option<String>,
}

impl From<PayoutRow> for Payout {
    fn from(row: PayoutRow) -> Self {
        Payout {
            id: row.stripe_id,
            arrival_date: row.arrival_date,
            amount_minor: row.amount_minor,
            currency: row.currency,
            statement_descriptor: row.statement_descriptor,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    Reference,
    AmountAndDate,
}

#[derive(Debug)]
pub struct Match {
    pub payout_id: String,
    pub line_id: String,
    pub kind: MatchKind,
}

#[derive(Debug, Default)]
pub struct Report {
    pub matched: Vec<Match>,
    pub unmatched_payouts: Vec<String>,
    pub unmatched_lines: Vec<String>,
}

pub struct Reconciler {
    window: Duration,
    used: HashSet<String>,
}

impl Reconciler {
    pub fn new(window_days: i64) -> Self {
        Reconciler { window: Duration::days(window_days), used: HashSet::new() }
    }

    pub fn run(&mut self, payouts: &[Payout], lines: &[BankLine]) -> Report {
        let mut report = Report::default();
        for p in payouts {
            let found = self
                .by_reference(p, lines)
                .map(|l| (l, MatchKind::Reference))
                .or_else(|| self.match_payout(p, lines).map(|l| (l, MatchKind::AmountAndDate)));
            match found {
                Some((line, kind)) => {
                    debug!(payout = %p.id, line = %line.id, ?kind, "matched");
                    self.used.insert(line.id.clone());
                    report.matched.push(Match {
                        payout_id: p.id.clone(),
                        line_id: line.id.clone(),
                        kind,
                    });
                }
                None => report.unmatched_payouts.push(p.id.clone()),
            }
        }
        report.unmatched_lines = lines
            .iter()
            .filter(|l| !self.used.contains(&l.id))
            .map(|l| l.id.clone())
            .collect();
        info!(
            matched = report.matched.len(),
            payouts_left = report.unmatched_payouts.len(),
            lines_left = report.unmatched_lines.len(),
            "reconciliation done"
        );
        report
    }

    fn by_reference<'a>(&self, p: &Payout, lines: &'a [BankLine]) -> Option<&'a BankLine> {
        let wanted = normalise_reference(p.statement_descriptor.as_deref()?);
        lines
            .iter()
            .filter(|l| !self.used.contains(&l.id))
            .find(|l| normalise_reference(&l.reference).contains(&wanted))
    }

    /// Fallback when the bank dropped the reference: the first unused line with the
    /// same amount booked within the window around the payout's arrival date.
    /// Only `amount_minor` is compared: the line's currency is never checked
    /// against the payout's, so 250.00 USD can settle a 250.00 EUR line.
    fn match_payout<'a>(&self, p: &Payout, lines: &'a [BankLine]) -> Option<&'a BankLine> {
        lines.iter().find(|l| {
            !self.used.contains(&l.id)
                && l.amount_minor == p.amount_minor
                && (l.booked_on - p.arrival_date).num_days().abs() <= self.window.num_days()
        })
    }
}

/// Upper-case, strip spaces and the "STRIPE" prefix some banks add.
pub fn normalise_reference(s: &str) -> String {
    let up: String = s.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_uppercase();
    up.trim_start_matches("STRIPE").trim_start_matches('/').to_string()
}

/// Statement amounts come as "1234.50" with a separate credit/debit flag.
pub fn parse_amount(text: &str, credit: bool) -> Option<i64> {
    let (units, cents) = text.split_once('.').unwrap_or((text, "0"));
    let minor = units.parse::<i64>().ok()? * 100 + format!("{cents:0<2}")[..2].parse::<i64>().ok()?;
    if minor == 0 {
        warn!(text, "zero amount on statement line");
    }
    Some(if credit { minor } else { -minor })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_is_normalised() {
        assert_eq!(normalise_reference("stripe/ po_1Ox 9"), "PO_1OX9");
    }

    #[test]
    fn parses_debit_amount() {
        assert_eq!(parse_amount("12.5", false), Some(-1250));
    }
}'''

_PAYOUTS_RS = '''\
//! Payout sync: copies Stripe payouts into our database every hour so the
//! reconciliation job can work offline from the bank statement.
use chrono::{DateTime, NaiveDate, Utc};
use serde::Deserialize;
use sqlx::PgPool;
use tracing::{info, instrument};

use crate::money::Currency;
use crate::payments::client::StripeClient;

#[derive(Debug, Deserialize)]
struct PayoutList {
    data: Vec<StripePayout>,
    has_more: bool,
}

#[derive(Debug, Deserialize)]
struct StripePayout {
    id: String,
    amount: i64,
    currency: String,
    arrival_date: i64,
    status: String,
    statement_descriptor: Option<String>,
}

#[derive(Debug, sqlx::FromRow)]
pub struct PayoutRow {
    pub stripe_id: String,
    pub arrival_date: NaiveDate,
    pub amount_minor: i64,
    pub currency: Currency,
    pub status: String,
    pub statement_descriptor: Option<String>,
}

impl TryFrom<StripePayout> for PayoutRow {
    type Error = anyhow::Error;

    fn try_from(p: StripePayout) -> anyhow::Result<Self> {
        let arrival = DateTime::<Utc>::from_timestamp(p.arrival_date, 0)
            .ok_or_else(|| anyhow::anyhow!("bad arrival_date {}", p.arrival_date))?;
        Ok(PayoutRow {
            stripe_id: p.id,
            arrival_date: arrival.date_naive(),
            amount_minor: p.amount,
            currency: p.currency.parse()?,
            status: p.status,
            statement_descriptor: p.statement_descriptor,
        })
    }
}

/// Fetches every payout created since `since`, following Stripe's cursor.
#[instrument(skip(client))]
pub async fn fetch_since(client: &StripeClient, since: i64) -> anyhow::Result<Vec<PayoutRow>> {
    let mut rows = Vec::new();
    let mut starting_after: Option<String> = None;
    loop {
        let mut query = vec![("limit", "100".to_string()), ("created[gte]", since.to_string())];
        if let Some(cursor) = &starting_after {
            query.push(("starting_after", cursor.clone()));
        }
        let page: PayoutList = client.get("/v1/payouts", &query).await?;
        starting_after = page.data.last().map(|p| p.id.clone());
        for p in page.data {
            rows.push(PayoutRow::try_from(p)?);
        }
        if !page.has_more {
            break;
        }
    }
    info!(count = rows.len(), "payouts fetched");
    Ok(rows)
}

/// Upserts by Stripe id: a payout changes status (pending, in_transit, paid).
pub async fn store(pool: &PgPool, rows: &[PayoutRow]) -> sqlx::Result<u64> {
    let mut tx = pool.begin().await?;
    let mut n = 0;
    for row in rows {
        n += sqlx::query(
            "INSERT INTO payouts (stripe_id, arrival_date, amount_minor, currency, status, statement_descriptor)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (stripe_id) DO UPDATE SET status = EXCLUDED.status",
        )
        .bind(&row.stripe_id)
        .bind(row.arrival_date)
        .bind(row.amount_minor)
        .bind(&row.currency)
        .bind(&row.status)
        .bind(&row.statement_descriptor)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    }
    tx.commit().await?;
    Ok(n)
}

/// Payouts that arrived on or after `day` and are not reconciled yet.
pub async fn open_since(pool: &PgPool, day: NaiveDate) -> sqlx::Result<Vec<PayoutRow>> {
    sqlx::query_as(
        "SELECT stripe_id, arrival_date, amount_minor, currency, status, statement_descriptor
           FROM payouts
          WHERE arrival_date >= $1 AND reconciled_at IS NULL AND status = 'paid'
          ORDER BY arrival_date",
    )
    .bind(day)
    .fetch_all(pool)
    .await
}'''


def _lo_reconcile(r, hit):
    if hit:
        return read("src/ledger/reconcile.rs", _RECONCILE)
    return read("src/repo/payouts.rs", _PAYOUTS_RS)


L("lo_bill_payout_currency", "billing-api", _lo_reconcile, "fn match_payout", [
    ("en", "which routine links incoming wire deposits to transfers while disregarding what denomination each is in, so dollars pass for euros"),
    ("es", "¿en qué función se emparejan los abonos del banco sin mirar la divisa, de modo que dólares valen como euros?"),
])


# ---- auth-service: go test -race with coverage ------------------------------

_GO_PKGS = ["cmd/authd", "cmd/migrate", "internal/admin", "internal/apikeys", "internal/audit",
            "internal/config", "internal/crypto", "internal/email", "internal/federation",
            "internal/httpx", "internal/i18n", "internal/jwks", "internal/ldap", "internal/metrics",
            "internal/mfa", "internal/oauth", "internal/password", "internal/ratelimit", "internal/scim",
            "internal/session", "internal/store", "internal/token", "internal/users", "internal/webhooks",
            "pkg/clientip", "pkg/problem"]


def _lo_go_race(r, hit):
    mod = "github.com/acme/auth-service"
    out = []
    for pk in _GO_PKGS:
        if pk.startswith("cmd/"):
            out.append("?   \t%s/%s\t[no test files]" % (mod, pk))
            continue
        if hit and pk == "internal/webhooks":
            a, b = 0xc000100000 + r.getrandbits(16) * 8, r.randint(30, 60)
            out += [
                "==================",
                "WARNING: DATA RACE",
                "Read at 0x%x by goroutine %d:" % (a, b + 2),
                "  %s/internal/webhooks.(*Dispatcher).Stats()" % mod,
                "      /home/dev/acme/auth-service/internal/webhooks/dispatcher.go:131 +0x64",
                "  %s/internal/webhooks.TestDispatcherConcurrentDeliveries.func2()" % mod,
                "      /home/dev/acme/auth-service/internal/webhooks/dispatcher_test.go:88 +0x4c",
                "",
                "Previous write at 0x%x by goroutine %d:" % (a, b),
                "  %s/internal/webhooks.(*Dispatcher).deliver()" % mod,
                "      /home/dev/acme/auth-service/internal/webhooks/dispatcher.go:104 +0x2f1",
                "  %s/internal/webhooks.(*Dispatcher).worker()" % mod,
                "      /home/dev/acme/auth-service/internal/webhooks/dispatcher.go:77 +0xb8",
                "",
                "Goroutine %d (running) created at:" % (b + 2),
                "  %s/internal/webhooks.TestDispatcherConcurrentDeliveries()" % mod,
                "      /home/dev/acme/auth-service/internal/webhooks/dispatcher_test.go:85 +0x2d0",
                "",
                "Goroutine %d (running) created at:" % b,
                "  %s/internal/webhooks.(*Dispatcher).Start()" % mod,
                "      /home/dev/acme/auth-service/internal/webhooks/dispatcher.go:58 +0x8e",
                "==================",
                "--- FAIL: TestDispatcherConcurrentDeliveries (0.%02ds)" % r.randint(3, 60),
                "    testing.go:1398: race detected during execution of test",
                "    dispatcher_test.go:94: Stats().Sent = %d, want 200 (deliveries counted by 8 workers)"
                % r.randint(185, 199),
                "FAIL",
                "coverage: %.1f%% of statements" % r.uniform(60, 85),
                "FAIL\t%s/%s\t%.3fs" % (mod, pk, r.uniform(1, 3)),
            ]
            continue
        out.append("ok  \t%s/%s\t%.3fs\tcoverage: %.1f%% of statements"
                   % (mod, pk, r.uniform(1, 9), r.uniform(40, 95)))
    if hit:
        out.append("FAIL")
    return bash("go test -race -cover ./...", "\n".join(out))


L("lo_auth_race_webhooks", "auth-service", _lo_go_race, "WARNING: DATA RACE", [
    ("en", "unguarded tally incremented concurrently by several threads in the outgoing callback sender"),
    ("es", "¿dónde apareció un contador compartido sin protección entre hilos en el emisor de avisos salientes?"),
])


# ---- auth-service: go test -v with a panic -----------------------------------

_GO_FED_TESTS = [
    ("TestDiscovery", ["okta", "azure_ad", "google_workspace", "keycloak", "unreachable_issuer"]),
    ("TestAuthCodeURL", ["adds_pkce_challenge", "keeps_state", "prompt_select_account"]),
    ("TestExchange", ["valid_code", "expired_code", "wrong_redirect_uri", "issuer_mismatch"]),
    ("TestVerifyIDToken", ["valid", "expired", "wrong_audience", "unknown_signing_key", "nonce_mismatch"]),
    ("TestDomainAllowList", ["exact_domain", "subdomain_rejected", "case_insensitive"]),
    ("TestGroupsToRoles", ["admins", "finance", "support", "unknown_group_ignored"]),
    ("TestProfileFromClaims", ["okta_employee", "google_workspace_user", "azure_ad_member",
                                "name_from_given_and_family", "picture_optional"]),
]


def _lo_go_panic(r, hit):
    mod = "github.com/acme/auth-service"
    out = []
    for name, subs in _GO_FED_TESTS:
        subs = list(subs)
        bad = name == "TestProfileFromClaims" and hit
        if bad:
            subs.append("azure_ad_guest_without_email")
        out.append("=== RUN   %s" % name)
        done = []
        for s in subs:
            out.append("=== RUN   %s/%s" % (name, s))
            if bad and s == "azure_ad_guest_without_email":
                out += [
                    "--- FAIL: %s (0.00s)" % name,
                ] + ["    --- PASS: %s/%s (0.00s)" % (name, x) for x in done] + [
                    "    --- FAIL: %s/%s (0.00s)" % (name, s),
                    "panic: interface conversion: interface {} is nil, not string [recovered]",
                    "\tpanic: interface conversion: interface {} is nil, not string",
                    "",
                    "goroutine %d [running]:" % r.randint(20, 40),
                    "testing.tRunner.func1.2({0x9b4c20, 0xc000%06x})" % r.getrandbits(24),
                    "\t/usr/local/go/src/testing/testing.go:1631 +0x24a",
                    "testing.tRunner.func1()",
                    "\t/usr/local/go/src/testing/testing.go:1634 +0x377",
                    "panic({0x9b4c20?, 0xc000%06x?})" % r.getrandbits(24),
                    "\t/usr/local/go/src/runtime/panic.go:770 +0x132",
                    "%s/internal/federation.profileFromClaims(0xc000%06x)" % (mod, r.getrandbits(24)),
                    "\t/home/dev/acme/auth-service/internal/federation/profile.go:48 +0x3b1",
                    "%s/internal/federation.TestProfileFromClaims.func1(0xc000%06x)" % (mod, r.getrandbits(24)),
                    "\t/home/dev/acme/auth-service/internal/federation/profile_test.go:97 +0x65",
                    "testing.tRunner(0xc0001a5d40, 0xc0001b8a20)",
                    "\t/usr/local/go/src/testing/testing.go:1689 +0xfb",
                    "created by testing.(*T).Run in goroutine %d" % r.randint(10, 19),
                    "\t/usr/local/go/src/testing/testing.go:1742 +0x390",
                    "exit status 2",
                    "FAIL\t%s/internal/federation\t%.3fs" % (mod, r.uniform(0.05, 0.3)),
                ]
                return bash("go test -v ./internal/federation/...", "\n".join(out))
            done.append(s)
        out.append("--- PASS: %s (0.%02ds)" % (name, r.randint(0, 9)))
        out += ["    --- PASS: %s/%s (0.00s)" % (name, s) for s in subs]
    out += ["PASS", "ok  \t%s/internal/federation\t%.3fs" % (mod, r.uniform(0.05, 0.3))]
    return bash("go test -v ./internal/federation/...", "\n".join(out))


L("lo_auth_guest_panic", "auth-service", _lo_go_panic, "interface conversion: interface {} is nil, not string", [
    ("en", "what blew up when a visitor login from Microsoft's corporate directory arrived lacking a mailbox address"),
    ("es", "¿qué reventó cuando el proveedor corporativo de Microsoft mandó un invitado sin dirección de e-mail?"),
])


# ---- crm-backend: pytest -v ----------------------------------------------------

_PY_TESTS = [
    ("crm/companies/tests/test_merge.py", ["test_merge_moves_contacts", "test_merge_keeps_oldest_name",
                                            "test_merge_rejects_same_company", "test_merge_moves_deals"]),
    ("crm/companies/tests/test_models.py", ["test_domain_is_lowercased", "test_str_is_name",
                                             "test_vat_number_optional"]),
    ("crm/contacts/tests/test_api.py", ["test_list_requires_auth", "test_list_contacts", "test_create_contact",
                                        "test_create_contact_rejects_bad_phone", "test_update_contact",
                                        "test_delete_contact_soft", "test_filter_by_company",
                                        "test_search_by_name", "test_other_tenant_is_404"]),
    ("crm/contacts/tests/test_models.py", ["test_full_name", "test_validate_phone_rejects_letters",
                                            "test_phone_normalised_to_e164", "test_owner_defaults_to_creator"]),
    ("crm/contacts/tests/test_serializers.py", ["test_serializer_fields", "test_company_nested_read_only",
                                                 "test_tags_as_list"]),
    ("crm/deals/tests/test_api.py", ["test_list_deals", "test_create_deal", "test_create_deal_requires_company",
                                     "test_kanban_groups_by_stage", "test_amount_is_decimal_string"]),
    ("crm/deals/tests/test_pipeline.py", ["test_default_stages_created", "test_stage_order_is_unique",
                                          "test_move_to_won_sets_closed_at", "test_move_to_lost_requires_reason",
                                          "test_probability_follows_stage"]),
    ("crm/deals/tests/test_services.py", ["test_create_deal", "test_move_stage_updates_probability",
                                          "test_assign_owner", "test_reopen_clears_closed_at"]),
    ("crm/integrations/tests/test_webhooks.py", ["test_signature_required", "test_unknown_event_ignored",
                                                  "test_contact_updated_event"]),
    ("crm/reports/tests/test_views.py", ["test_pipeline_summary", "test_revenue_by_month",
                                         "test_reports_require_manager", "test_csv_export_headers"]),
    ("crm/users/tests/test_permissions.py", ["test_manager_sees_team", "test_rep_sees_own_deals",
                                             "test_admin_sees_all"]),
]


def _lo_pytest(r, hit):
    bad = "test_stage_change_logs_activity"
    items = []
    for f, tests in _PY_TESTS:
        tests = list(tests)
        if hit and f.endswith("test_pipeline.py"):
            tests.insert(3, bad)
        items += ["%s::%s" % (f, t_) for t_ in tests]
    out = ["=" * 29 + " test session starts " + "=" * 30,
           "platform linux -- Python 3.12.2, pytest-8.1.1, pluggy-1.4.0 -- /home/dev/acme/crm-backend/.venv/bin/python",
           "cachedir: .pytest_cache",
           "django: version: 4.2.11, settings: crm.settings.test (from ini)",
           "rootdir: /home/dev/acme/crm-backend",
           "configfile: pyproject.toml",
           "plugins: django-4.8.0, cov-5.0.0, mock-3.14.0",
           "collecting ... collected %d items" % len(items), ""]
    for i, it in enumerate(items):
        status = "FAILED" if it.endswith(bad) else "PASSED"
        out.append("%-71s [%3d%%]" % (it + " " + status, int(100 * (i + 1) / len(items))))
    secs = r.uniform(9, 25)
    if not hit:
        out += ["", "=" * 30 + " %d passed in %.2fs " % (len(items), secs) + "=" * 30]
        return bash("pytest -v", "\n".join(out))
    out += ["", "=" * 35 + " FAILURES " + "=" * 35,
            "_" * 23 + " %s " % bad + "_" * 24, "",
            "deal = <Deal: Northwind renewal (qualified)>, user = <User: maria@acme.test>", "",
            "    def %s(deal, user):" % bad,
            "        services.move_stage(deal, Stage.NEGOTIATION, by=user)",
            ">       assert deal.activities.filter(kind=\"stage_changed\").count() == 1",
            "E       AssertionError: assert 0 == 1",
            "E        +  where 0 = <bound method QuerySet.count of <QuerySet []>>()", "",
            "crm/deals/tests/test_pipeline.py:%d: AssertionError" % r.randint(40, 70),
            "-" * 30 + " Captured log call " + "-" * 31,
            "DEBUG    crm.deals.services:services.py:%d deal %d moved qualified -> negotiation; "
            "activity log deferred to transaction.on_commit"
            % (r.randint(80, 120), r.randint(1, 9)),
            "=" * 28 + " short test summary info " + "=" * 27,
            "FAILED crm/deals/tests/test_pipeline.py::%s - AssertionError: assert 0 == 1" % bad,
            "=" * 24 + " 1 failed, %d passed in %.2fs " % (len(items) - 1, secs) + "=" * 24]
    return bash("pytest -v", "\n".join(out))


L("lo_crm_on_commit", "crm-backend", _lo_pytest, "test_stage_change_logs_activity", [
    ("en", "why did advancing an opportunity leave no history entry under the suite, since the hook waited for a finished database write"),
    ("es", "¿por qué al avanzar una oportunidad de fase no quedaba apuntado nada en el historial durante las pruebas?"),
])


# ---- crm-backend: manage.py migrate on a fresh database ---------------------

_MIGRATIONS = [
    ("contenttypes", ["0001_initial", "0002_remove_content_type_name"]),
    ("auth", ["0001_initial", "0002_alter_permission_name_max_length", "0003_alter_user_email_max_length",
              "0004_alter_user_username_opts", "0005_alter_user_last_login_null",
              "0006_require_contenttypes_0002", "0007_alter_validators_add_error_messages",
              "0008_alter_user_username_max_length", "0009_alter_user_last_name_max_length",
              "0010_alter_group_name_max_length", "0011_update_proxy_permissions",
              "0012_alter_user_first_name_max_length"]),
    ("users", ["0001_initial", "0002_user_tenant", "0003_user_locale", "0004_team", "0005_user_team"]),
    ("admin", ["0001_initial", "0002_logentry_remove_auto_add", "0003_logentry_add_action_flag_choices"]),
    ("companies", ["0001_initial", "0002_company_domain", "0003_company_vat_number", "0004_company_logo",
                   "0005_company_default_currency", "0006_company_owner", "0007_company_tenant_index"]),
    ("contacts", ["0001_initial", "0002_contact_company", "0003_contact_phone", "0004_contact_owner",
                  "0005_contact_tags", "0006_contact_source", "0007_contact_last_activity_at",
                  "0008_contact_email_ci_index", "0009_contact_linkedin_url"]),
    ("deals", ["0001_initial", "0002_stage", "0003_deal_stage", "0004_deal_probability",
               "0005_deal_closed_at", "0006_deal_lost_reason", "0007_activity", "0008_deal_owner",
               "0009_forecast", "0010_forecastline"]),
    ("sessions", ["0001_initial"]),
]


def _lo_migrate(r, hit):
    apps = [a for a, _ in _MIGRATIONS]
    out = ["Operations to perform:", "  Apply all migrations: " + ", ".join(sorted(apps)),
           "Running migrations:"]
    for app, names in _MIGRATIONS:
        if app == "deals" and hit:
            break
        out += ["  Applying %s.%s... OK" % (app, n) for n in names]
    if not hit:
        return bash("python manage.py migrate", "\n".join(out))
    out += ["  Applying deals.%s... OK" % n for n in dict(_MIGRATIONS)["deals"]]
    out += ["  Applying deals.0011_deal_currency... OK",
            "  Applying deals.0012_backfill_deal_currency...Traceback (most recent call last):",
            '  File "/home/dev/acme/crm-backend/.venv/lib/python3.12/site-packages/django/db/backends/utils.py", line 89, in _execute',
            "    return self.cursor.execute(sql, params)",
            "psycopg.errors.NotNullViolation: null value in column \"currency\" of relation \"deals_deal\" violates not-null constraint",
            "DETAIL:  Failing row contains (%d, Renewal %d, 12000.00, null, ...)." % (r.randint(100, 900), r.randint(2023, 2024)),
            "",
            "The above exception was the direct cause of the following exception:",
            "",
            "Traceback (most recent call last):",
            '  File "/home/dev/acme/crm-backend/manage.py", line 22, in <module>',
            "    main()",
            '  File "/home/dev/acme/crm-backend/.venv/lib/python3.12/site-packages/django/db/migrations/operations/special.py", line 196, in database_forwards',
            "    self.code(from_state.apps, schema_editor)",
            '  File "/home/dev/acme/crm-backend/crm/deals/migrations/0012_backfill_deal_currency.py", line 14, in forwards',
            '    Deal.objects.update(currency=Subquery(Company.objects.filter(pk=OuterRef("company_id")).values("default_currency")[:1]))',
            "django.db.utils.IntegrityError: null value in column \"currency\" of relation \"deals_deal\" violates not-null constraint",
            "DETAIL:  Failing row contains (%d, Expansion Q%d, 4800.00, null, ...)." % (r.randint(100, 900), r.randint(1, 4))]
    return bash("python manage.py migrate", "\n".join(out))


L("lo_crm_backfill_null", "crm-backend", _lo_migrate, "0012_backfill_deal_currency", [
    ("en", "which upgrade step broke because older organisations had no preferred money unit recorded"),
    ("es", "¿qué paso del esquema rompió porque las empresas antiguas no tenían moneda por defecto y quedaba vacío un campo obligatorio?"),
])


# ---- crm-backend: worker logs --------------------------------------------------

_CELERY_TASKS = [
    ("crm.reports.tasks.refresh_dashboard_cache", "None", (0.3, 2.5)),
    ("crm.contacts.tasks.enrich_contact", "{'enriched': True}", (0.4, 3.0)),
    ("crm.contacts.tasks.recompute_lead_score", "{'score': %d}", (0.05, 0.4)),
    ("crm.deals.tasks.send_reminder_email", "None", (0.2, 1.2)),
    ("crm.companies.tasks.refresh_logo", "None", (0.5, 4.0)),
    ("crm.exports.tasks.build_csv_export", "'exports/%d.csv'", (2.0, 9.0)),
    ("crm.deals.tasks.recalculate_forecast", "{'lines': %d}", (0.8, 3.5)),
]


def _lo_worker_logs(r, hit):
    t = r.randint(9, 15) * 3600 + r.randint(0, 3000)
    day = "2024-04-%02d" % r.randint(8, 26)
    out = []
    n = r.randint(25, 28)
    bad_at = n - 4
    def stamp():
        return "%s %s,%03d" % (day, _hms(t), int(t % 1 * 1000))

    for i in range(n):
        t += r.uniform(2, 40)
        name, result, (lo, hi) = _CELERY_TASKS[r.randrange(len(_CELERY_TASKS))]
        if hit and i == bad_at:
            name = "crm.deals.tasks.recalculate_forecast"
        tid = "%s-%s-4%s-%s-%s" % (_hex(r, 8), _hex(r, 4), _hex(r, 3), _hex(r, 4), _hex(r, 12))
        w = r.randint(1, 4)
        out.append("[%s: INFO/MainProcess] Task %s[%s] received" % (stamp(), name, tid))
        took = r.uniform(lo, hi)
        t += took + r.uniform(0.001, 0.05)
        if hit and i == bad_at:
            p1, p2, x1 = r.randint(40000, 49999), r.randint(40000, 49999), r.randint(99100000, 99199999)
            out += [
                "[%s: ERROR/ForkPoolWorker-%d] Task %s[%s] raised unexpected: OperationalError("
                "'deadlock detected\\nDETAIL:  Process %d waits for ShareLock on transaction %d; blocked by process %d.\\n"
                "Process %d waits for ShareLock on transaction %d; blocked by process %d.\\n"
                "HINT:  See server log for query details.\\n"
                "CONTEXT:  while updating tuple (412,7) in relation \"deals_forecastline\"')"
                % (stamp(), w, name, tid, p1, x1, p2, p2, x1 + 6, p1),
                "Traceback (most recent call last):",
                '  File "/app/.venv/lib/python3.12/site-packages/celery/app/trace.py", line 477, in trace_task',
                "    R = retval = fun(*args, **kwargs)",
                '  File "/app/crm/deals/tasks.py", line 61, in recalculate_forecast',
                "    forecast.rebuild_lines(owner_ids=owner_ids)",
                '  File "/app/crm/deals/forecast.py", line 134, in rebuild_lines',
                '    ForecastLine.objects.filter(pk=line.pk).update(amount=F("amount") + delta)',
                '  File "/app/.venv/lib/python3.12/site-packages/django/db/backends/utils.py", line 89, in _execute',
                "    return self.cursor.execute(sql, params)",
                "django.db.utils.OperationalError: deadlock detected",
            ]
            continue
        res = result % r.randint(1, 400) if "%d" in result else result
        out.append("[%s: INFO/ForkPoolWorker-%d] Task %s[%s] succeeded in %.3fs: %s"
                   % (stamp(), w, name, tid, took, res))
    return bash("kubectl logs deploy/crm-worker -n prod --since=1h", "\n".join(out))


L("lo_crm_forecast_deadlock", "crm-backend", _lo_worker_logs, "deadlock detected", [
    ("en", "two asynchronous jobs redoing sales projections stalled each other, each one holding what the other needed"),
    ("es", "¿qué tareas en segundo plano se quedaron esperándose mutuamente al rehacer las previsiones de ventas?"),
])


# ---- web-dashboard: vite build -------------------------------------------------

_VITE_CHUNKS = ["Avatar", "Badge", "Breadcrumbs", "Button", "Card", "Checkbox", "ConfirmDialog",
                "CustomerDetail", "Customers", "DataTable", "DateRangeField", "Dropdown", "EmptyState",
                "ErrorBoundary", "FilterBar", "Invoices", "InvoiceDetail", "KpiCard", "Login", "Modal",
                "NotFound", "Overview", "Pagination", "Reports", "RevenueChart", "Settings",
                "SettingsBilling", "SettingsTeam", "Sidebar", "Skeleton", "Spinner", "Tabs", "Toast",
                "Tooltip", "TopBar", "UsageChart", "useCustomers", "useInvoices", "useDebounce",
                "usePagination", "format", "http", "queryClient", "charts", "icons", "router",
                "ExportButton", "AuditLog", "Webhooks", "ApiKeys", "Onboarding", "PlanPicker"]


def _lo_vite(r, hit):
    out = ["", "> dashboard@3.%d.0 build" % r.randint(4, 9), "> tsc -b && vite build", "",
           "vite v5.2.8 building for production...", "transforming...",
           "\u2713 %d modules transformed." % r.randint(1700, 1900), "rendering chunks...",
           "computing gzip size..."]

    def row(name, kb, gz=True):
        g = " \u2502 gzip: %7.2f kB" % (kb * r.uniform(0.28, 0.4)) if gz else ""
        return "%-52s %9.2f kB%s" % (name, kb, g)

    out.append(row("dist/index.html", r.uniform(0.6, 0.8)))
    out.append(row("dist/assets/inter-latin-400-normal-%s.woff2" % _vhash(r), 23.66, gz=False))
    out.append(row("dist/assets/inter-latin-600-normal-%s.woff2" % _vhash(r), 24.11, gz=False))
    out.append(row("dist/assets/index-%s.css" % _vhash(r), r.uniform(40, 55)))
    js = [("dist/assets/%s-%s.js" % (c, _vhash(r)), math.exp(r.uniform(-0.9, 3.6)))
          for c in r.sample(_VITE_CHUNKS, 40)]
    js.append(("dist/assets/vendor-react-%s.js" % _vhash(r), r.uniform(138, 145)))
    js.append(("dist/assets/index-%s.js" % _vhash(r), r.uniform(380, 440)))
    if hit:
        js.append(("dist/assets/xlsx-%s.js" % _vhash(r), r.uniform(905, 920)))
    for name, kb in sorted(js, key=lambda x: x[1]):
        out.append(row(name, kb))
    if hit:
        out += ["",
                "(!) Some chunks are larger than 500 kB after minification. Consider:",
                "- Using dynamic import() to code-split the application",
                "- Use build.rollupOptions.output.manualChunks to improve chunking: "
                "https://rollupjs.org/configuration-options/#output-manualchunks",
                "- Adjust chunk size limit for this warning via build.chunkSizeWarningLimit."]
    out.append("\u2713 built in %.2fs" % r.uniform(14, 30))
    return bash("npm run build", "\n".join(out))


L("lo_web_xlsx_chunk", "web-dashboard", _lo_vite, "Some chunks are larger than 500 kB after minification", [
    ("en", "which piece of the shipped bundle grew too heavy because of the Excel spreadsheet writer"),
    ("es", "¿qué trozo del empaquetado final pesaba demasiado por culpa de la librería de hojas de cálculo?"),
])


# ---- web-dashboard: vitest run --------------------------------------------------

_VITEST_FILES = [
    ("src/utils/__tests__/format.test.ts", 14), ("src/utils/__tests__/buildQuery.test.ts", 6),
    ("src/utils/__tests__/csv.test.ts", 5), ("src/utils/__tests__/currency.test.ts", 8),
    ("src/hooks/__tests__/useDebounce.test.ts", 4), ("src/hooks/__tests__/useCustomers.test.tsx", 7),
    ("src/hooks/__tests__/useInvoices.test.tsx", 9), ("src/hooks/__tests__/usePagination.test.ts", 6),
    ("src/api/__tests__/http.test.ts", 8), ("src/api/__tests__/invoices.test.ts", 5),
    ("src/components/__tests__/Avatar.test.tsx", 3), ("src/components/__tests__/Badge.test.tsx", 4),
    ("src/components/__tests__/Button.test.tsx", 6), ("src/components/__tests__/ConfirmDialog.test.tsx", 5),
    ("src/components/__tests__/DataTable.test.tsx", 12), ("src/components/__tests__/Dropdown.test.tsx", 7),
    ("src/components/__tests__/EmptyState.test.tsx", 2), ("src/components/__tests__/FilterBar.test.tsx", 8),
    ("src/components/__tests__/KpiCard.test.tsx", 6), ("src/components/__tests__/Modal.test.tsx", 5),
    ("src/components/__tests__/Pagination.test.tsx", 6), ("src/components/__tests__/Sidebar.test.tsx", 4),
    ("src/components/__tests__/Tabs.test.tsx", 5), ("src/components/__tests__/Toast.test.tsx", 4),
    ("src/components/__tests__/Tooltip.test.tsx", 3), ("src/components/__tests__/TopBar.test.tsx", 4),
    ("src/pages/__tests__/Customers.test.tsx", 9), ("src/pages/__tests__/CustomerDetail.test.tsx", 7),
    ("src/pages/__tests__/Invoices.test.tsx", 11), ("src/pages/__tests__/InvoiceDetail.test.tsx", 8),
    ("src/pages/__tests__/Login.test.tsx", 6), ("src/pages/__tests__/Overview.test.tsx", 7),
    ("src/pages/__tests__/Reports.test.tsx", 6), ("src/pages/__tests__/Settings.test.tsx", 9),
    ("src/pages/__tests__/SettingsTeam.test.tsx", 5), ("src/store/__tests__/filters.test.ts", 6),
    ("src/store/__tests__/session.test.ts", 5), ("src/router/__tests__/guards.test.tsx", 4),
]


def _lo_vitest(r, hit):
    files = r.sample(_VITEST_FILES, len(_VITEST_FILES))
    picker = ("src/components/__tests__/PeriodPicker.test.tsx", 9)
    files.insert(len(files) - r.randint(2, 5), picker)
    out = [" RUN  v1.5.0 /home/dev/acme/web-dashboard", ""]
    total = 0
    name = "PeriodPicker > renders the range label"
    msg = ("Use `yyyy` instead of `YYYY` (in `dd MMM YYYY`) for formatting years to the input "
           "`Mon Dec 30 2024 00:00:00 GMT+0000 (Coordinated Universal Time)`; see: "
           "https://github.com/date-fns/date-fns/blob/master/docs/unicodeTokens.md")
    for f, n in files:
        total += n
        ms = r.randint(4, 400)
        if hit and f == picker[0]:
            out += [" \u276f %s  (%d tests | 1 failed) %dms" % (f, n, ms),
                    "   \u276f %s > %s" % (f, name),
                    "     \u2192 " + msg]
        else:
            out.append(" \u2713 %s  (%d tests) %dms" % (f, n, ms))
    start = "%02d:%02d:%02d" % (r.randint(9, 18), r.randint(0, 59), r.randint(0, 59))
    dur = "Duration  %.2fs (transform %.2fs, setup %.2fs, collect %.2fs, tests %.2fs, environment %.2fs, prepare %.2fs)" % (
        r.uniform(10, 20), r.uniform(0.8, 2), r.uniform(2, 5), r.uniform(6, 12), r.uniform(4, 9),
        r.uniform(12, 22), r.uniform(3, 7))
    if hit:
        out += ["", "\u23af" * 7 + " Failed Tests 1 " + "\u23af" * 7, "",
                " FAIL  %s > %s" % (picker[0], name),
                "RangeError: " + msg,
                " \u276f throwProtectedError node_modules/date-fns/_lib/protectedTokens/index.js:24:11",
                " \u276f node_modules/date-fns/format/index.js:367:11",
                " \u276f formatRangeLabel src/components/PeriodPicker.tsx:41:10",
                "     39| export function formatRangeLabel(range: Range) {",
                "     40|   const from = format(range.from, 'dd MMM YYYY');",
                "     41|   const to = format(range.to, 'dd MMM YYYY');",
                "       |          ^",
                "     42|   return `${from} \u2013 ${to}`;",
                "     43| }",
                " \u276f src/components/__tests__/PeriodPicker.test.tsx:%d:12" % r.randint(30, 90), "",
                "\u23af" * 40 + "[1/1]\u23af", "",
                " Test Files  1 failed | %d passed (%d)" % (len(files) - 1, len(files)),
                "      Tests  1 failed | %d passed (%d)" % (total - 1, total)]
    else:
        out += ["", " Test Files  %d passed (%d)" % (len(files), len(files)),
                "      Tests  %d passed (%d)" % (total, total)]
    out += ["   Start at  " + start, "   " + dur]
    return bash("npx vitest run", "\n".join(out))


L("lo_web_week_year", "web-dashboard", _lo_vitest, "instead of `YYYY`", [
    ("en", "which spec complained that a caption pattern relied on the ISO week-numbering calendar token"),
    ("es", "¿qué comprobación se quejó de que la etiqueta del rango usaba el año de la numeración ISO semanal en su patrón?"),
])


# ---- mobile-app: a local EAS build for Android ------------------------------

_GRADLE_TASKS = [
    ":app:preBuild UP-TO-DATE", ":app:preReleaseBuild UP-TO-DATE", ":app:generateReleaseBuildConfig",
    ":expo-modules-core:preBuild UP-TO-DATE", ":expo-modules-core:compileReleaseKotlin",
    ":expo-modules-core:compileReleaseJavaWithJavac", ":expo-constants:compileReleaseKotlin",
    ":expo-file-system:compileReleaseKotlin", ":expo-image-picker:compileReleaseKotlin",
    ":expo-notifications:compileReleaseKotlin", ":expo-secure-store:compileReleaseKotlin",
    ":react-native-reanimated:configureCMakeRelWithDebInfo[arm64-v8a]",
    ":react-native-reanimated:buildCMakeRelWithDebInfo[arm64-v8a]",
    ":react-native-reanimated:compileReleaseJavaWithJavac",
    ":react-native-screens:compileReleaseKotlin", ":react-native-safe-area-context:compileReleaseKotlin",
    ":react-native-gesture-handler:compileReleaseKotlin", ":app:createBundleReleaseJsAndAssets",
    ":app:mergeReleaseResources", ":app:processReleaseMainManifest", ":app:processReleaseManifest",
    ":app:compileReleaseKotlin", ":app:compileReleaseJavaWithJavac", ":app:dexBuilderRelease",
    ":app:mergeDexRelease", ":app:mergeReleaseNativeLibs", ":app:stripReleaseDebugSymbols",
    ":app:compileReleaseArtProfile", ":app:mergeReleaseJavaResource",
]


def _lo_eas(r, hit):
    wd = "/tmp/eas-build-local-nodejs/%s-%s" % (_hex(r, 8), _hex(r, 4))
    out = ["\u2714 Using local build",
           "[SETUP_WORKINGDIR] Preparing workingdir %s" % wd,
           "[START_BUILD] Starting build",
           '  "job": { "type": "managed", "platform": "android", "projectRootDirectory": ".", '
           '"buildProfile": "production", "buildType": "app-bundle" }',
           "[READ_PACKAGE_JSON] Using package.json: %s/build/package.json" % wd,
           "[READ_APP_CONFIG] Using app configuration: acme-mobile (com.acme.mobile) sdkVersion 50.0.0",
           '[INSTALL_DEPENDENCIES] Running "npm ci" in %s/build directory' % wd,
           "[INSTALL_DEPENDENCIES] added %d packages, and audited %d packages in %ds"
           % (r.randint(1380, 1450), r.randint(1450, 1500), r.randint(35, 80)),
           "[PREBUILD] - Creating native project directories (./ios and ./android) and updating .gitignore",
           "[PREBUILD] \u2714 Created native project | gitignore skipped",
           "[PREBUILD] - Running prebuild",
           "[PREBUILD] \u2714 Finished prebuild",
           "[PREPARE_CREDENTIALS] Writing secrets to the project's directory",
           "[PREPARE_CREDENTIALS] Injecting signing config into build.gradle",
           "[RUN_GRADLEW] Running 'gradlew :app:bundleRelease' in %s/build/android" % wd,
           "[RUN_GRADLEW] Starting a Gradle Daemon (subsequent builds will be faster)"]
    for task in _GRADLE_TASKS:
        out.append("[RUN_GRADLEW] > Task %s" % task)
    if hit:
        out += ["[RUN_GRADLEW] > Task :app:signReleaseBundle FAILED",
                "[RUN_GRADLEW] FAILURE: Build failed with an exception.",
                "[RUN_GRADLEW] * What went wrong:",
                "[RUN_GRADLEW] Execution failed for task ':app:signReleaseBundle'.",
                "[RUN_GRADLEW] > A failure occurred while executing com.android.build.gradle.internal.tasks.FinalizeBundleTask$BundleToolRunnable",
                "[RUN_GRADLEW]    > java.lang.RuntimeException: com.android.ide.common.signing.KeytoolException: "
                "Failed to read key upload from store \"%s/build/android/app/release.keystore\": "
                "Keystore was tampered with, or password was incorrect" % wd,
                "[RUN_GRADLEW] * Try:",
                "[RUN_GRADLEW] > Run with --stacktrace option to get the stack trace.",
                "[RUN_GRADLEW] BUILD FAILED in %dm %ds" % (r.randint(6, 11), r.randint(0, 59)),
                'Error: Gradle build failed with unknown error. See logs for the "Run gradlew" phase for more information.',
                "Build failed"]
    else:
        out += ["[RUN_GRADLEW] > Task :app:signReleaseBundle",
                "[RUN_GRADLEW] > Task :app:bundleRelease",
                "[RUN_GRADLEW] BUILD SUCCESSFUL in %dm %ds" % (r.randint(6, 11), r.randint(0, 59)),
                "[RUN_GRADLEW] %d actionable tasks: %d executed" % (r.randint(700, 760), r.randint(690, 700)),
                "[PREPARE_ARTIFACTS] Preparing artifacts",
                "[PREPARE_ARTIFACTS] Application archives: %s/build/android/app/build/outputs/bundle/release/app-release.aab (%.1f MB)"
                % (wd, r.uniform(38, 46)),
                "Build successful",
                "You can find the build artifacts in /home/dev/acme/mobile-app/build-%d.aab" % r.randint(1712000000, 1715000000)]
    return bash("eas build -p android --profile production --local", "\n".join(out))


L("lo_mob_keystore", "mobile-app", _lo_eas, "Keystore was tampered with, or password was incorrect", [
    ("en", "why did assembling the Google Play artefact abort at the signature step with a mistaken passphrase for the certificate vault"),
    ("es", "¿por qué se cortó la publicación para Google Play justo al firmar, por la contraseña del almacén de claves?"),
])


# ---- mobile-app: jest --verbose ------------------------------------------------

_JEST_SUITES = [
    ("src/components/__tests__/OrderCard.test.tsx", "OrderCard",
     ["shows status badge", "formats the total with currency", "opens detail on press", "shows delivery eta"]),
    ("src/components/__tests__/PriceTag.test.tsx", "PriceTag", ["rounds to cents", "shows strikethrough for discounts"]),
    ("src/components/__tests__/Avatar.test.tsx", "Avatar", ["falls back to initials", "uses remote image"]),
    ("src/components/__tests__/EmptyList.test.tsx", "EmptyList", ["renders message", "renders retry button"]),
    ("src/screens/__tests__/HomeScreen.test.tsx", "HomeScreen",
     ["renders greeting", "shows recent orders", "pull to refresh reloads", "shows promo banner"]),
    ("src/screens/__tests__/LoginScreen.test.tsx", "LoginScreen",
     ["renders email and password fields", "disables submit while empty", "shows server error", "navigates home on success"]),
    ("src/screens/__tests__/OrdersScreen.test.tsx", "OrdersScreen",
     ["lists orders", "filters by status", "loads next page at end", "shows empty state"]),
    ("src/screens/__tests__/ProfileScreen.test.tsx", "ProfileScreen",
     ["saves address", "validates postcode", "shows avatar picker", "logs out"]),
    ("src/screens/__tests__/AddressScreen.test.tsx", "AddressScreen", ["autocompletes street", "saves default address"]),
    ("src/screens/__tests__/SettingsScreen.test.tsx", "SettingsScreen",
     ["toggles notifications", "changes language", "shows app version"]),
    ("src/navigation/__tests__/linking.test.ts", "linking", ["maps order links", "ignores unknown paths"]),
    ("src/navigation/__tests__/index.test.tsx", "navigation", ["opens order detail", "back returns to list"]),
    ("src/hooks/__tests__/useProfile.test.ts", "useProfile", ["loads profile", "caches for five minutes"]),
    ("src/hooks/__tests__/useOrders.test.ts", "useOrders", ["paginates", "refetches on focus"]),
    ("src/utils/__tests__/formatPrice.test.ts", "formatPrice", ["rounds to cents", "uses locale separators", "handles zero"]),
    ("src/utils/__tests__/validators.test.ts", "validators", ["email", "phone", "postcode"]),
    ("src/api/__tests__/orders.test.ts", "orders api", ["fetchOrders sends auth header", "maps order status"]),
    ("src/api/__tests__/client.test.ts", "api client", ["adds base url", "parses json errors", "times out after 15s"]),
    ("src/store/__tests__/cart.test.ts", "cart store", ["adds item", "merges same product", "clears after order"]),
]


def _lo_jest(r, hit):
    suites = r.sample(_JEST_SUITES, len(_JEST_SUITES))
    checkout = ("src/screens/__tests__/CheckoutScreen.test.tsx", "CheckoutScreen",
                ["shows the order total", "requires a payment method", "shows card errors inline"])
    suites.insert(len(suites) - r.randint(1, 3), checkout)
    bad = "ignores a second tap on Pay while the order is pending"
    out, total = [], 0
    for path, name, tests in suites:
        tests = list(tests)
        failing = hit and name == "CheckoutScreen"
        if failing:
            tests.insert(2, bad)
        total += len(tests)
        out.append("%s %s%s" % ("FAIL" if failing else "PASS", path,
                                " (%.3f s)" % r.uniform(1, 7) if r.random() < 0.4 else ""))
        out.append("  " + name)
        for t_ in tests:
            if failing and t_ == bad:
                out.append("    \u2715 %s (%d ms)" % (t_, r.randint(20, 90)))
            else:
                out.append("    \u2713 %s (%d ms)" % (t_, r.randint(2, 120)))
        out.append("")
        if failing:
            out += ["  \u25cf CheckoutScreen \u203a " + bad, "",
                    "    expect(jest.fn()).toHaveBeenCalledTimes(expected)", "",
                    "    Expected number of calls: 1",
                    "    Received number of calls: 2", "",
                    "      68 |     const pay = screen.getByRole('button', { name: 'Pay' });",
                    "      69 |     fireEvent.press(pay);",
                    "      70 |     fireEvent.press(pay);",
                    "    > 71 |     expect(api.createOrder).toHaveBeenCalledTimes(1);",
                    "         |                             ^",
                    "      72 |     await waitFor(() => expect(screen.getByText('Order placed')).toBeTruthy());",
                    "      73 |   });", "",
                    "      at Object.toHaveBeenCalledTimes (src/screens/__tests__/CheckoutScreen.test.tsx:71:29)", ""]
    ok = total - (1 if hit else 0)
    out += ["Test Suites: %s%d passed, %d total" % ("1 failed, " if hit else "", len(suites) - (1 if hit else 0), len(suites)),
            "Tests:       %s%d passed, %d total" % ("1 failed, " if hit else "", ok, total),
            "Snapshots:   %d passed, %d total" % (6, 6),
            "Time:        %.3f s" % r.uniform(14, 30),
            "Ran all test suites."]
    return bash("npx jest --verbose", "\n".join(out))


L("lo_mob_double_tap", "mobile-app", _lo_jest, "ignores a second tap on Pay", [
    ("en", "which interface spec revealed that hitting buy twice in a row fired duplicate purchases"),
    ("es", "¿qué prueba mostró que pulsar dos veces seguidas el botón de pagar generaba dos compras?"),
])


# ---- notifications-svc: npm audit ---------------------------------------------

_ADVISORIES = [
    ("axios", "0.8.1 - 1.5.1", "moderate", "Axios Cross-Site Request Forgery Vulnerability", "GHSA-wf5p-g6vw-rhxx",
     "fix available via `npm audit fix --force`\nWill install axios@1.7.7, which is a breaking change", []),
    ("body-parser", "<1.20.3", "high", "body-parser vulnerable to denial of service when url encoding is enabled",
     "GHSA-qwcr-r2fm-qrc7", "fix available via `npm audit fix`", []),
    ("braces", "<3.0.3", "high", "Uncontrolled resource consumption in braces", "GHSA-grv7-fg5c-xmjg",
     "fix available via `npm audit fix`", ["chokidar", "micromatch"]),
    ("cookie", "<0.7.0", "low", "cookie accepts cookie name, path, and domain with out of bounds characters",
     "GHSA-pxg6-pf52-xh8x", "fix available via `npm audit fix`", ["express"]),
    ("cross-spawn", "7.0.0 - 7.0.4", "high", "Regular Expression Denial of Service (ReDoS) in cross-spawn",
     "GHSA-3xgq-45jj-v275", "fix available via `npm audit fix`", []),
    ("express", "<=4.21.0 || 5.0.0-alpha.1 - 5.0.0", "low", "express vulnerable to XSS via response.redirect()",
     "GHSA-qw6h-vgh9-j6wx", "fix available via `npm audit fix`",
     ["body-parser", "cookie", "path-to-regexp", "send", "serve-static"]),
    ("follow-redirects", "<=1.15.5", "moderate", "follow-redirects' Proxy-Authorization header kept across hosts",
     "GHSA-cxjh-pqwp-8mfp", "fix available via `npm audit fix`", []),
    ("ip", "*", "high", "ip SSRF improper categorization in isPublic", "GHSA-2p57-rm9w-gvfp",
     "No fix available", ["socks"]),
    ("micromatch", "<4.0.8", "moderate", "Regular Expression Denial of Service (ReDoS) in micromatch",
     "GHSA-952p-6rrq-rcjv", "fix available via `npm audit fix`", []),
    ("path-to-regexp", "<0.1.10", "high", "path-to-regexp outputs backtracking regular expressions",
     "GHSA-9wv6-86v2-598j", "fix available via `npm audit fix`", []),
    ("semver", "7.0.0 - 7.5.1", "moderate", "semver vulnerable to Regular Expression Denial of Service",
     "GHSA-c2qf-rxjj-qqgw", "fix available via `npm audit fix`", []),
    ("send", "<0.19.0", "low", "send vulnerable to template injection that can lead to XSS",
     "GHSA-m6fv-jmcg-4jfg", "fix available via `npm audit fix`", ["serve-static"]),
    ("tough-cookie", "<4.1.3", "moderate", "tough-cookie Prototype Pollution vulnerability",
     "GHSA-72xf-g2v4-qvf3", "fix available via `npm audit fix`", []),
    ("word-wrap", "<1.2.4", "moderate", "word-wrap vulnerable to Regular Expression Denial of Service",
     "GHSA-j8xg-fqg3-53r7", "fix available via `npm audit fix`", []),
    ("ws", "8.0.0 - 8.17.0", "high", "ws affected by a DoS when handling a request with many HTTP headers",
     "GHSA-3h5v-q93c-6h6q", "fix available via `npm audit fix`", []),
]


def _lo_npm_audit(r, hit):
    keep = [a for a in _ADVISORIES if a[0] in ("axios", "body-parser", "braces", "cookie", "cross-spawn",
                                              "express", "follow-redirects") or r.random() < 0.75]
    if hit:
        keep.append(("handlebars", "<=4.7.6", "critical",
                     "Remote code execution in handlebars when compiling templates", "GHSA-f2jv-r9rf-7988",
                     "fix available via `npm audit fix --force`\nWill install handlebars@4.7.8, "
                     "which is outside the stated dependency range", []))
    keep.sort(key=lambda a: a[0])
    out = ["# npm audit report", ""]
    for name, rng_, sev, title, ghsa, fix, dependents in keep:
        out += ["%s  %s" % (name, rng_), "Severity: " + sev,
                "%s - https://github.com/advisories/%s" % (title, ghsa), fix, "node_modules/" + name]
        for d in dependents:
            out += ["  " + d, "  Depends on vulnerable versions of " + name, "  node_modules/" + d]
        out.append("")
    sev = Counter(a[2] for a in keep)
    parts = ["%d %s" % (sev[s], s) for s in ("low", "moderate", "high", "critical") if sev[s]]
    out += ["%d vulnerabilities (%s)" % (len(keep), ", ".join(parts)), "",
            "To address issues that do not require attention, run:", "  npm audit fix", "",
            "To address all issues (including breaking changes), run:", "  npm audit fix --force"]
    return bash("npm audit", "\n".join(out))


L("lo_notif_handlebars", "notifications-svc", _lo_npm_audit, "Severity: critical", [
    ("en", "which mail rendering package had the worst rated hole, letting attackers take over our machines by running arbitrary programs"),
    ("es", "¿qué paquete de las plantillas de correo tenía el fallo más grave, el que permitía ejecutar programas ajenos en nuestras máquinas?"),
])


# ---- notifications-svc: a long read of the quiet-hours scheduler ----------------

_QUIET_HOURS_TS = '''\
import { DateTime } from 'luxon';
import type { Channel, Preference } from '../db/preferences';
import { logger } from '../logger';
import { metrics } from '../metrics';

/**
 * Delivery scheduling: decides whether a notification goes out now or is held
 * back until the recipient is awake. Quiet hours come from the user's
 * preferences as two whole hours in the user's own zone.
 */

export interface QuietHours {
  start: number; // 0-23, local hour the quiet period begins
  end: number; // 0-23, local hour it ends
}

export interface Decision {
  sendAt: DateTime;
  held: boolean;
  reason?: 'quiet_hours' | 'channel_disabled' | 'urgent';
}

const DEFAULT_QUIET: QuietHours = { start: 22, end: 7 };
const URGENT_TEMPLATES = new Set(['password-reset', 'login-code', 'payment-failed']);
const HELD_CHANNELS: Channel[] = ['push', 'sms'];

export function quietHoursFor(pref: Preference | undefined): QuietHours {
  if (!pref?.quietHours) return DEFAULT_QUIET;
  const { start, end } = pref.quietHours;
  if (!Number.isInteger(start) || !Number.isInteger(end)) return DEFAULT_QUIET;
  if (start < 0 || start > 23 || end < 0 || end > 23) return DEFAULT_QUIET;
  return { start, end };
}

export function localNow(zone: string | undefined, now: DateTime = DateTime.utc()): DateTime {
  if (!zone) return now;
  const local = now.setZone(zone);
  if (!local.isValid) {
    logger.warn({ zone }, 'invalid time zone in preferences, using UTC');
    return now;
  }
  return local;
}

export function channelEnabled(pref: Preference | undefined, channel: Channel): boolean {
  if (!pref) return true;
  const value = pref.channels?.[channel];
  return value === undefined ? true : value;
}

/**
 * True when `hour` falls inside the quiet period. Compares start <= hour < end,
 * so it assumes the period starts and ends on the same day.
 */
function isQuietHour(hour: number, q: QuietHours): boolean {
  return hour >= q.start && hour < q.end;
}

/** The next moment the quiet period is over, in the user's zone. */
function quietEndsAt(local: DateTime, q: QuietHours): DateTime {
  let end = local.set({ hour: q.end, minute: 0, second: 0, millisecond: 0 });
  if (end <= local) end = end.plus({ days: 1 });
  return end;
}

export function decide(
  template: string,
  channel: Channel,
  pref: Preference | undefined,
  now: DateTime = DateTime.utc(),
): Decision {
  if (URGENT_TEMPLATES.has(template)) {
    return { sendAt: now, held: false, reason: 'urgent' };
  }
  if (!channelEnabled(pref, channel)) {
    metrics.increment('notifications.skipped', { channel, reason: 'disabled' });
    return { sendAt: now, held: true, reason: 'channel_disabled' };
  }
  if (!HELD_CHANNELS.includes(channel)) {
    return { sendAt: now, held: false };
  }
  const q = quietHoursFor(pref);
  const local = localNow(pref?.timezone, now);
  if (isQuietHour(local.hour, q)) {
    const sendAt = quietEndsAt(local, q).toUTC();
    metrics.increment('notifications.held', { channel });
    logger.debug({ template, channel, sendAt: sendAt.toISO() }, 'held for quiet hours');
    return { sendAt, held: true, reason: 'quiet_hours' };
  }
  return { sendAt: now, held: false };
}

/** Delay in milliseconds for BullMQ's `delay` option. */
export function delayFor(decision: Decision, now: DateTime = DateTime.utc()): number {
  if (!decision.held || decision.reason !== 'quiet_hours') return 0;
  return Math.max(0, decision.sendAt.diff(now).toMillis());
}'''

_SEND_WINDOW_TS = '''\
import { DateTime, Duration } from 'luxon';
import type { Preference } from '../db/preferences';
import { logger } from '../logger';

/**
 * Digest batching: notifications that are not urgent are collected per user and
 * sent together once per window, so a busy day means one email, not forty.
 */

export type DigestFrequency = 'hourly' | 'daily' | 'weekly';

export interface Window {
  key: string; // digest:{userId}:{windowStart}
  start: DateTime;
  end: DateTime;
}

const LENGTH: Record<DigestFrequency, Duration> = {
  hourly: Duration.fromObject({ hours: 1 }),
  daily: Duration.fromObject({ days: 1 }),
  weekly: Duration.fromObject({ weeks: 1 }),
};

const DEFAULT_FREQUENCY: DigestFrequency = 'daily';
const MAX_ITEMS = 20;

export function frequencyFor(pref: Preference | undefined): DigestFrequency {
  const f = pref?.digest?.frequency;
  if (f === 'hourly' || f === 'daily' || f === 'weekly') return f;
  return DEFAULT_FREQUENCY;
}

/** The window `at` belongs to, aligned to the start of the hour, day or week in UTC. */
export function windowFor(userId: string, freq: DigestFrequency, at: DateTime = DateTime.utc()): Window {
  const unit = freq === 'hourly' ? 'hour' : freq === 'daily' ? 'day' : 'week';
  const start = at.toUTC().startOf(unit);
  const end = start.plus(LENGTH[freq]);
  return { key: `digest:${userId}:${start.toMillis()}`, start, end };
}

/** Milliseconds until the window closes; the digest job is scheduled with this delay. */
export function delayUntilClose(w: Window, now: DateTime = DateTime.utc()): number {
  return Math.max(0, w.end.diff(now).toMillis());
}

export interface DigestItem {
  id: string;
  title: string;
  createdAt: string;
}

/** Newest first, at most MAX_ITEMS; the rest are summarised as a count. */
export function trimItems(items: DigestItem[]): { shown: DigestItem[]; more: number } {
  const sorted = [...items].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  const shown = sorted.slice(0, MAX_ITEMS);
  if (sorted.length > MAX_ITEMS) {
    logger.debug({ total: sorted.length }, 'digest trimmed');
  }
  return { shown, more: sorted.length - shown.length };
}

/** Subject line: "3 updates from Acme" or "1 update from Acme". */
export function subjectFor(count: number, brand = 'Acme'): string {
  return `${count} update${count === 1 ? '' : 's'} from ${brand}`;
}

export function isEmpty(items: DigestItem[]): boolean {
  return items.length === 0;
}'''


def _lo_quiet_hours(r, hit):
    if hit:
        return read("src/scheduler/quietHours.ts", _QUIET_HOURS_TS)
    return read("src/scheduler/sendWindow.ts", _SEND_WINDOW_TS)


L("lo_notif_quiet_overnight", "notifications-svc", _lo_quiet_hours, "function isQuietHour", [
    ("en", "where is the do-not-disturb logic that breaks when someone's silent span crosses midnight, like ten at night until seven"),
    ("es", "¿dónde está la lógica del horario de descanso que falla cuando el tramo cruza la medianoche, de las diez a las siete?"),
])


# ---- data-pipeline: dbt run --------------------------------------------------------

_DBT_MODELS = [
    ("staging", "view", ["stg_orders", "stg_order_items", "stg_customers", "stg_products", "stg_payments",
                         "stg_refunds", "stg_subscriptions", "stg_invoices", "stg_events", "stg_sessions",
                         "stg_crm_contacts", "stg_crm_deals", "stg_marketing_spend", "stg_fx_rates"]),
    ("intermediate", "view", ["int_orders_enriched", "int_payments_by_order", "int_customer_first_order",
                              "int_subscription_periods", "int_events_sessionized", "int_deal_stages"]),
    ("marts", "table", ["dim_customers", "dim_products", "dim_dates", "fct_orders", "fct_revenue",
                        "fct_subscriptions_mrr", "fct_refunds", "fct_sessions", "fct_marketing_roi",
                        "fct_pipeline_snapshot", "fct_cohort_retention", "fct_product_margin",
                        "fct_customer_ltv", "rpt_weekly_kpis"]),
]


def _lo_dbt_run(r, hit):
    t = r.randint(2, 4) * 3600 + r.randint(0, 1800)
    models = [(schema, mat, m) for schema, mat, ms in _DBT_MODELS for m in ms]
    n = len(models)
    views = sum(1 for x in models if x[1] == "view")

    def ts():
        return _hms(t)

    out = ["%s  Running with dbt=1.7.11" % ts(), "%s  Registered adapter: snowflake=1.7.3" % ts(),
           "%s  Found %d models, 118 tests, 9 seeds, 14 sources, 0 exposures, 0 metrics, 612 macros, 0 groups, "
           "0 semantic models" % (ts(), n), "%s  " % ts(),
           "%s  Concurrency: 8 threads (target='prod')" % ts(), "%s  " % ts()]
    bad = "fct_product_margin"
    skipped = ["fct_customer_ltv", "rpt_weekly_kpis"] if hit else []
    def line(msg, status):
        return "%s  %s %s [%s]" % (ts(), msg, "." * max(3, 74 - len(msg)), status)

    began = t
    for i, (schema, mat, m) in enumerate(models):
        t += r.uniform(0.05, 0.6)
        kind = "sql view model" if mat == "view" else "sql table model"
        if m in skipped:
            out.append(line("%d of %d SKIP relation %s.%s" % (i + 1, n, schema, m), "SKIP"))
            continue
        out.append(line("%d of %d START %s %s.%s" % (i + 1, n, kind, schema, m), "RUN"))
        took = r.uniform(0.8, 3) if mat == "view" else r.uniform(4, 45)
        t += took
        if hit and m == bad:
            out.append(line("%d of %d ERROR creating %s %s.%s" % (i + 1, n, kind, schema, m), "ERROR in %.2fs" % took))
        else:
            res = "SUCCESS 1" if mat == "view" else "SUCCESS %d" % r.randint(200, 4000000)
            out.append(line("%d of %d OK created %s %s.%s" % (i + 1, n, kind, schema, m), "%s in %.2fs" % (res, took)))
    t += r.uniform(1, 4)
    el = t - began
    out += ["%s  " % ts(),
            "%s  Finished running %d view models, %d table models in 0 hours %d minutes and %.2f seconds (%.2fs)."
            % (ts(), views, n - views, el // 60, el % 60, el), "%s  " % ts()]
    if hit:
        out += ["%s  Completed with 1 error and 0 warnings:" % ts(), "%s  " % ts(),
                "%s    Database Error in model %s (models/marts/finance/%s.sql)" % (ts(), bad, bad),
                "  100051 (22012): Division by zero",
                "  compiled Code at target/run/acme/models/marts/finance/%s.sql" % bad, "%s  " % ts(),
                "%s  Done. PASS=%d WARN=0 ERROR=1 SKIP=%d TOTAL=%d" % (ts(), n - 1 - len(skipped), len(skipped), n)]
    else:
        out += ["%s  Completed successfully" % ts(), "%s  " % ts(),
                "%s  Done. PASS=%d WARN=0 ERROR=0 SKIP=0 TOTAL=%d" % (ts(), n, n)]
    return bash("dbt run", "\n".join(out))


L("lo_data_div_zero", "data-pipeline", _lo_dbt_run, "Division by zero", [
    ("en", "which profitability dataset crashed because some merchandise brought in nothing, so the ratio had a nil denominator"),
    ("es", "¿qué tabla de rentabilidad por artículo falló al repartir entre ingresos nulos?"),
])


# ---- data-pipeline: spark-submit -------------------------------------------------

def _lo_spark(r, hit):
    day = "24/04/%02d" % r.randint(8, 26)
    t = r.randint(1, 3) * 3600 + r.randint(0, 1800)
    app = "application_1712%09d_%04d" % (r.randrange(10 ** 9), r.randint(1, 900))
    hosts = ["ip-10-0-%d-%d.eu-west-1.compute.internal" % (r.randint(1, 9), r.randint(10, 250)) for _ in range(6)]
    out = []

    def log(level, src, msg):
        out.append("%s %s %s %s: %s" % (day, _hms(t), level, src, msg))

    log("INFO", "SparkContext", "Running Spark version 3.5.1")
    log("INFO", "SparkContext", "Submitted application: attribution_daily")
    log("INFO", "ResourceUtils", "Resources for spark.executor: memory -> 8g, cores -> 4")
    log("INFO", "Client", "Submitting application %s to ResourceManager" % app)
    log("INFO", "Client", "Application report for %s (state: RUNNING)" % app)
    for i, h in enumerate(hosts):
        t += r.uniform(1, 5)
        log("INFO", "YarnSchedulerBackend$YarnDriverEndpoint",
            "Registered executor NettyRpcEndpointRef(spark-client://Executor) (%s:%d) with ID %d, ResourceProfileId 0"
            % (h, r.randint(30000, 49999), i + 1))
    log("INFO", "InMemoryFileIndex", "It took %d ms to list leaf files for 1 paths." % r.randint(80, 900))
    stages = [(0, 48, "parquet at attribution.py:41"), (1, 200, "join at attribution.py:77"),
              (2, 200, "groupBy at attribution.py:96")]
    for sid, ntasks, what in stages:
        t += r.uniform(2, 9)
        log("INFO", "DAGScheduler", "Submitting %d missing tasks from ShuffleMapStage %d (%s)" % (ntasks, sid, what))
        for k in range(r.randint(5, 7)):
            t += r.uniform(5, 40)
            tid = sid * 300 + k * 31 + r.randint(0, 30)
            log("INFO", "TaskSetManager", "Finished task %d.0 in stage %d.0 (TID %d) in %d ms on %s (executor %d) (%d/%d)"
                % (tid % ntasks, sid, tid, r.randint(900, 60000), r.choice(hosts), r.randint(1, 6),
                   min(ntasks, (k + 1) * ntasks // 7), ntasks))
        if hit and sid == 2:
            h = r.choice(hosts)
            t += r.uniform(20, 90)
            log("WARN", "TaskSetManager",
                "Lost task 57.0 in stage 2.0 (TID %d) (%s executor 4): java.io.IOException: No space left on device"
                % (700 + r.randint(0, 99), h))
            out += ["\tat java.base/java.io.FileOutputStream.writeBytes(Native Method)",
                    "\tat org.apache.spark.storage.DiskBlockObjectWriter.write(DiskBlockObjectWriter.scala:310)",
                    "\tat org.apache.spark.shuffle.sort.ShuffleExternalSorter.writeSortedFile(ShuffleExternalSorter.java:226)",
                    "\tat org.apache.spark.shuffle.sort.UnsafeShuffleWriter.closeAndWriteOutput(UnsafeShuffleWriter.java:243)"]
            t += r.uniform(10, 60)
            log("ERROR", "YarnScheduler", "Lost executor 4 on %s: Container from a bad node: container_%s_01_000005 on "
                "host: %s. Exit status: -100. Diagnostics: 1/1 local-dirs usable space is below configured utilization "
                "percentage/no more usable space [ /mnt/yarn : used space above threshold of 90.0%% ]"
                % (h, app[len("application_"):], h))
            t += r.uniform(30, 120)
            log("ERROR", "TaskSetManager", "Task 57 in stage 2.0 failed 4 times; aborting job")
            log("ERROR", "FileFormatWriter", "Aborting job %s." % _hex(r, 8))
            out.append("org.apache.spark.SparkException: Job aborted due to stage failure: Task 57 in stage 2.0 failed 4 times, "
                       "most recent failure: Lost task 57.3 in stage 2.0: java.io.IOException: No space left on device")
            log("INFO", "SparkContext", "Successfully stopped SparkContext")
            return bash("spark-submit --master yarn jobs/attribution.py --date 20%s" % day.replace("/", "-"), "\n".join(out))
        t += r.uniform(2, 9)
        log("INFO", "DAGScheduler", "ShuffleMapStage %d (%s) finished in %.3f s" % (sid, what, r.uniform(30, 400)))
    t += r.uniform(20, 90)
    log("INFO", "DAGScheduler", "ResultStage 3 (parquet at attribution.py:112) finished in %.3f s" % r.uniform(20, 90))
    log("INFO", "FileFormatWriter", "Write Job %s committed. Elapsed time: %d ms." % (_hex(r, 8), r.randint(2000, 9000)))
    log("INFO", "SparkContext", "Successfully stopped SparkContext")
    return bash("spark-submit --master yarn jobs/attribution.py --date 20%s" % day.replace("/", "-"), "\n".join(out))


L("lo_data_disk_full", "data-pipeline", _lo_spark, "No space left on device", [
    ("en", "the cluster-wide marketing credit calculation died because scratch disks filled up while exchanging temporary data"),
    ("es", "¿por qué se cayó el cálculo distribuido de atribución al llenarse el almacenamiento temporal de los nodos?"),
])


# ---- infra: terraform plan ----------------------------------------------------------

_TF_STATE = [
    ("aws_vpc.main", "vpc-{h}"), ('aws_subnet.private["eu-west-1a"]', "subnet-{h}"),
    ('aws_subnet.private["eu-west-1b"]', "subnet-{h}"), ('aws_subnet.private["eu-west-1c"]', "subnet-{h}"),
    ('aws_subnet.public["eu-west-1a"]', "subnet-{h}"), ('aws_subnet.public["eu-west-1b"]', "subnet-{h}"),
    ("aws_internet_gateway.main", "igw-{h}"), ('aws_nat_gateway.main["eu-west-1a"]', "nat-{h}"),
    ("aws_route_table.private", "rtb-{h}"), ("aws_route_table.public", "rtb-{h}"),
    ("aws_security_group.app", "sg-{h}"), ("aws_security_group.db", "sg-{h}"), ("aws_security_group.cache", "sg-{h}"),
    ("aws_db_subnet_group.main", "prod-db"), ("aws_db_instance.crm", "prod-crm"), ("aws_db_instance.billing", "prod-billing"),
    ("aws_elasticache_subnet_group.main", "prod-cache"),
    ("aws_elasticache_replication_group.sessions", "prod-sessions"),
    ("aws_s3_bucket.exports", "acme-prod-exports"), ("aws_s3_bucket.attachments", "acme-prod-attachments"),
    ("aws_s3_bucket.logs", "acme-prod-logs"), ("aws_s3_bucket_public_access_block.exports", "acme-prod-exports"),
    ("aws_sqs_queue.mail", "https://sqs.eu-west-1.amazonaws.com/123456789012/prod-mail"),
    ("aws_sqs_queue.sms", "https://sqs.eu-west-1.amazonaws.com/123456789012/prod-sms"),
    ("aws_iam_role.ci", "ci-deploy"), ("aws_iam_role.eks_nodes", "prod-eks-nodes"),
    ("aws_iam_role_policy_attachment.nodes_ecr", "prod-eks-nodes-{n}"),
    ("aws_cloudwatch_log_group.app", "/acme/prod/app"), ("aws_cloudwatch_log_group.eks", "/aws/eks/prod/cluster"),
    ("aws_route53_zone.main", "{z}"), ("aws_route53_record.api", "{z}_api.acme.io_A"),
    ("aws_route53_record.dashboard", "{z}_app.acme.io_A"),
    ("aws_acm_certificate.wildcard", "arn:aws:acm:eu-west-1:123456789012:certificate/{u}"),
    ("aws_lb.public", "arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/prod/{h}"),
    ("module.eks.aws_eks_cluster.this", "prod"), ("module.eks.aws_eks_node_group.general", "prod:general"),
    ("module.eks.aws_eks_node_group.spot", "prod:spot"), ("module.eks.aws_eks_addon.vpc_cni", "prod:vpc-cni"),
    ("module.eks.aws_eks_addon.coredns", "prod:coredns"), ("aws_ecr_repository.billing_api", "billing-api"),
    ("aws_ecr_repository.notifications", "notifications"), ("aws_kms_key.rds", "{u}"),
]


def _lo_tf_plan(r, hit):
    zone = "Z" + "".join(r.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(20))
    out = []
    for addr, ident in _TF_STATE:
        ident = ident.format(h=_hex(r, 17), z=zone, n="2024%016d" % r.randrange(10 ** 16),
                             u="%s-%s-%s-%s-%s" % (_hex(r, 8), _hex(r, 4), _hex(r, 4), _hex(r, 4), _hex(r, 12)))
        out.append("%s: Refreshing state... [id=%s]" % (addr, ident))
    if not hit:
        out += ["", "No changes. Your infrastructure matches the configuration.", "",
                "Terraform has compared your real infrastructure against your configuration and found no differences, "
                "so no changes are needed."]
        return bash("terraform plan -out=plan.tfplan", "\n".join(out))
    ng = _hex(r, 6)
    out += ["", "Terraform used the selected providers to generate the following execution plan. Resource actions are "
            "indicated with the following symbols:", "  ~ update in-place", "-/+ destroy and then create replacement", "",
            "Terraform will perform the following actions:", "",
            "  # aws_cloudwatch_log_group.app will be updated in-place",
            '  ~ resource "aws_cloudwatch_log_group" "app" {',
            '        id                = "/acme/prod/app"',
            '        name              = "/acme/prod/app"',
            "      ~ retention_in_days = 14 -> 30",
            "        # (4 unchanged attributes hidden)",
            "    }", "",
            "  # aws_elasticache_replication_group.sessions must be replaced",
            '-/+ resource "aws_elasticache_replication_group" "sessions" {',
            '      ~ arn                            = "arn:aws:elasticache:eu-west-1:123456789012:replicationgroup:prod-sessions" -> (known after apply)',
            '      ~ engine_version_actual          = "7.0.7" -> (known after apply)',
            '      ~ id                             = "prod-sessions" -> (known after apply)',
            "      ~ member_clusters                = [",
            '          - "prod-sessions-001",',
            '          - "prod-sessions-002",',
            "        ] -> (known after apply)",
            '      ~ primary_endpoint_address       = "prod-sessions.%s.ng.0001.euw1.cache.amazonaws.com" -> (known after apply)' % ng,
            '      ~ reader_endpoint_address        = "prod-sessions-ro.%s.ng.0001.euw1.cache.amazonaws.com" -> (known after apply)' % ng,
            "      + auth_token                     = (sensitive value)",
            "      ~ transit_encryption_enabled     = false -> true # forces replacement",
            "        # (17 unchanged attributes hidden)",
            "    }", "",
            "Plan: 1 to add, 1 to change, 1 to destroy.", "",
            "\u2500" * 77, "",
            "Saved the plan to: plan.tfplan", "",
            "To perform exactly these actions, run the following command to apply:",
            '    terraform apply "plan.tfplan"']
    return bash("terraform plan -out=plan.tfplan", "\n".join(out))


L("lo_infra_cache_replace", "infra", _lo_tf_plan, "must be replaced", [
    ("en", "which infrastructure preview would have torn down and rebuilt the in-memory login data store when we switched on wire protection"),
    ("es", "¿qué cambio de infraestructura iba a tirar y volver a levantar el almacén en memoria de las sesiones al activar el cifrado de la conexión?"),
])


# ---- infra: helm upgrade --atomic, then the namespace's events --------------------

_HELM_RESOURCES = [("ConfigMap", "crm-config"), ("Service", "crm-web"), ("Deployment", "crm-web"),
                   ("Deployment", "crm-worker"), ("HorizontalPodAutoscaler", "crm-web"),
                   ("PodDisruptionBudget", "crm-web"), ("Ingress", "crm"), ("ServiceAccount", "crm"),
                   ("ExternalSecret", "crm-secrets")]


def _lo_helm(r, hit):
    rev = r.randint(30, 60)
    version = "2.%d.0" % r.randint(10, 19)
    out = ["history.go:56: [debug] getting history for release crm",
           "upgrade.go:164: [debug] preparing upgrade for crm",
           "upgrade.go:172: [debug] performing update for crm",
           "upgrade.go:344: [debug] creating upgraded release for crm",
           "client.go:338: [debug] checking %d resources for changes" % len(_HELM_RESOURCES)]
    for kind, name in _HELM_RESOURCES:
        out.append('client.go:617: [debug] Patch %s "%s" in namespace prod' % (kind, name))
    out += ["upgrade.go:402: [debug] waiting for release crm resources (created: 0 updated: %d  deleted: 0)"
            % len(_HELM_RESOURCES),
            "wait.go:48: [debug] beginning wait for %d resources with timeout of 5m0s" % len(_HELM_RESOURCES)]
    waits = r.randint(14, 18) if hit else r.randint(4, 7)
    for i in range(waits):
        out.append("ready.go:284: [debug] Deployment is not ready: prod/crm-web. %d out of 3 expected pods are ready"
                   % (2 if hit else min(2, i * 3 // waits)))
    pod = "crm-web-%s-%s" % (_hex(r, 9), _hex(r, 5))
    node = "ip-10-0-%d-%d.eu-west-1.compute.internal" % (r.randint(1, 9), r.randint(10, 250))
    image = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/crm:" + version
    if hit:
        out += ["upgrade.go:476: [debug] warning: Upgrade \"crm\" failed: context deadline exceeded",
                "upgrade.go:494: [debug] Upgrade failed and atomic is set, rolling back to last successful release",
                "history.go:56: [debug] getting history for release crm",
                "rollback.go:65: [debug] preparing rollback of crm",
                "rollback.go:131: [debug] creating rolled back release for crm",
                "rollback.go:187: [debug] performing rollback of crm",
                "client.go:338: [debug] checking %d resources for changes" % len(_HELM_RESOURCES),
                'client.go:617: [debug] Patch Deployment "crm-web" in namespace prod',
                'client.go:617: [debug] Patch Deployment "crm-worker" in namespace prod',
                "rollback.go:243: [debug] superseding previous deployment %d" % rev,
                "rollback.go:252: [debug] updating status for rolled back release for crm",
                "Error: UPGRADE FAILED: release crm failed, and has been rolled back due to atomic being set: "
                "context deadline exceeded",
                "helm.go:84: [debug] context deadline exceeded"]
    else:
        out += ["upgrade.go:159: [debug] updating status for upgraded release for crm",
                'Release "crm" has been upgraded. Happy Helming!', "NAME: crm",
                "LAST DEPLOYED: %s Apr %2d %02d:%02d:%02d 2024" % (r.choice(["Mon", "Tue", "Wed", "Thu"]), r.randint(1, 28),
                                                                  r.randint(9, 18), r.randint(0, 59), r.randint(0, 59)),
                "NAMESPACE: prod", "STATUS: deployed", "REVISION: %d" % (rev + 1), "TEST SUITE: None"]
    ev = [("6m3s", "Normal", "ScalingReplicaSet", "deployment/crm-web",
           "Scaled up replica set crm-web-%s to 1" % pod.split("-")[2]),
          ("6m2s", "Normal", "Scheduled", "pod/" + pod, "Successfully assigned prod/%s to %s" % (pod, node)),
          ("6m1s", "Normal", "Pulling", "pod/" + pod, 'Pulling image "%s"' % image),
          ("5m52s", "Normal", "Pulled", "pod/" + pod, 'Successfully pulled image "%s" in 8.9s' % image),
          ("5m52s", "Normal", "Created", "pod/" + pod, "Created container web"),
          ("5m51s", "Normal", "Started", "pod/" + pod, "Started container web")]
    if hit:
        ev += [("40s", "Warning", "Unhealthy", "pod/" + pod,
                "Readiness probe failed: HTTP probe failed with statuscode: 404"),
               ("31s", "Normal", "ScalingReplicaSet", "deployment/crm-web",
                "Scaled down replica set crm-web-%s to 0 from 1" % pod.split("-")[2]),
               ("30s", "Normal", "Killing", "pod/" + pod, "Stopping container web")]
    else:
        ev += [("5m40s", "Normal", "ScalingReplicaSet", "deployment/crm-web",
                "Scaled down replica set crm-web-%s to 2 from 3" % _hex(r, 9)),
               ("5m20s", "Normal", "ScalingReplicaSet", "deployment/crm-web",
                "Scaled up replica set crm-web-%s to 3 from 2" % pod.split("-")[2])]
    out.append("%-11s %-9s %-19s %-37s %s" % ("LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"))
    out += ["%-11s %-9s %-19s %-37s %s" % e for e in ev]
    return bash("helm upgrade --install crm charts/crm -n prod -f values-prod.yaml --atomic --timeout 5m --debug; "
                "kubectl get events -n prod --sort-by=.lastTimestamp | tail -12", "\n".join(out))


L("lo_infra_probe_rollback", "infra", _lo_helm, "Readiness probe failed", [
    ("en", "which rollout got undone automatically because fresh copies kept answering not-found when pinged"),
    ("es", "¿qué despliegue se revirtió solo porque la sonda de disponibilidad de la versión nueva devolvía no encontrado?"),
])


# ---- infra: kubectl describe pod -----------------------------------------------------

def _lo_describe(r, hit):
    rs, suffix = _hex(r, 9), _hex(r, 5)
    pod = "notifications-%s-%s" % (rs, suffix)
    a, b = r.randint(1, 9), r.randint(10, 250)
    node = "ip-10-0-%d-%d.eu-west-1.compute.internal" % (a, b)
    ip = "10.0.%d.%d" % (a, b)
    version = "1.%d.%d" % (r.randint(10, 14), r.randint(0, 9))
    cid = _hex(r, 64)
    state = (["    State:          Waiting", "      Reason:       ContainerCreating", "    Ready:          False",
              "    Restart Count:  0"] if hit else
             ["    State:          Running", "      Started:      Tue, %02d Apr 2024 %02d:%02d:%02d +0000"
              % (r.randint(1, 28), r.randint(8, 18), r.randint(0, 59), r.randint(0, 59)),
              "    Ready:          True", "    Restart Count:  0"])
    out = ["Name:             " + pod, "Namespace:        prod", "Priority:         0",
           "Service Account:  notifications", "Node:             %s/%s" % (node, ip),
           "Start Time:       Tue, %02d Apr 2024 %02d:%02d:%02d +0000" % (r.randint(1, 28), r.randint(8, 18),
                                                                          r.randint(0, 59), r.randint(0, 59)),
           "Labels:           app.kubernetes.io/instance=notifications",
           "                  app.kubernetes.io/name=notifications",
           "                  pod-template-hash=" + rs,
           "Annotations:      checksum/config: " + _hex(r, 64),
           "                  prometheus.io/port: 9464",
           "                  prometheus.io/scrape: true",
           "Status:           " + ("Pending" if hit else "Running"),
           "IP:               " + ("" if hit else "10.0.%d.%d" % (r.randint(1, 9), r.randint(10, 250))),
           "Controlled By:    ReplicaSet/notifications-" + rs,
           "Containers:", "  notifications:",
           "    Container ID:   " + ("" if hit else "containerd://" + cid),
           "    Image:          123456789012.dkr.ecr.eu-west-1.amazonaws.com/notifications:" + version,
           "    Port:           3000/TCP", "    Host Port:      0/TCP"] + state + [
           "    Limits:", "      memory:  512Mi", "    Requests:", "      cpu:      100m", "      memory:   256Mi",
           "    Liveness:     http-get http://:3000/health delay=10s timeout=2s period=10s #success=1 #failure=3",
           "    Readiness:    http-get http://:3000/ready delay=5s timeout=2s period=5s #success=1 #failure=3",
           "    Environment Variables from:", "      notifications-config  ConfigMap  Optional: false",
           "    Environment:", "      NODE_ENV:                        production",
           "      GOOGLE_APPLICATION_CREDENTIALS:  /var/run/secrets/fcm/service-account.json",
           "      APNS_KEY_PATH:                   /var/run/secrets/apns/AuthKey.p8",
           "    Mounts:", "      /var/run/secrets/apns from apns-key (ro)",
           "      /var/run/secrets/fcm from fcm-credentials (ro)",
           "      /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-%s (ro)" % _hex(r, 5),
           "Conditions:", "  Type              Status",
           "  Initialized       True",
           "  Ready             %s" % ("False" if hit else "True"),
           "  ContainersReady   %s" % ("False" if hit else "True"),
           "  PodScheduled      True",
           "Volumes:", "  apns-key:", "    Type:        Secret (a volume populated by a Secret)",
           "    SecretName:  notifications-apns-key", "    Optional:    false",
           "  fcm-credentials:", "    Type:        Secret (a volume populated by a Secret)",
           "    SecretName:  notifications-fcm-service-account", "    Optional:    false",
           "  kube-api-access:", "    Type:                    Projected (a volume that contains injected data from multiple sources)",
           "    TokenExpirationSeconds:  3607", "    ConfigMapName:           kube-root-ca.crt",
           "QoS Class:                   Burstable",
           "Node-Selectors:              workload=general",
           "Tolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s",
           "                             node.kubernetes.io/unreachable:NoExecute op=Exists for 300s",
           "Events:", "  Type     Reason       Age                 From               Message",
           "  ----     ------       ----                ----               -------",
           "  Normal   Scheduled    %-19s default-scheduler  Successfully assigned prod/%s to %s"
           % ("%dm" % r.randint(12, 25), pod, node)]
    if hit:
        out += ["  Warning  FailedMount  %-19s kubelet            MountVolume.SetUp failed for volume \"fcm-credentials\" : "
                "secret \"notifications-fcm-service-account\" not found" % ("%ds (x%d over %dm)" % (r.randint(20, 90), r.randint(8, 12), r.randint(12, 25))),
                "  Warning  FailedMount  %-19s kubelet            Unable to attach or mount volumes: unmounted volumes=[fcm-credentials], "
                "unattached volumes=[apns-key fcm-credentials kube-api-access]: timed out waiting for the condition"
                % ("%dm (x%d over %dm)" % (r.randint(1, 3), r.randint(4, 6), r.randint(12, 25)))]
    else:
        out += ["  Normal   Pulled       %-19s kubelet            Container image \"123456789012.dkr.ecr.eu-west-1.amazonaws.com/notifications:%s\" already present on machine" % ("%dm" % r.randint(10, 12), version),
                "  Normal   Created      %-19s kubelet            Created container notifications" % ("%dm" % r.randint(10, 12)),
                "  Normal   Started      %-19s kubelet            Started container notifications" % ("%dm" % r.randint(10, 12))]
    return bash("kubectl describe pod %s -n prod" % pod, "\n".join(out))


L("lo_infra_fcm_mount", "infra", _lo_describe, "FailedMount", [
    ("en", "which push delivery copy was stuck booting since the Firebase login file it expected was absent"),
    ("es", "¿qué copia del emisor de avisos no arrancaba porque faltaba la clave de la cuenta de Firebase en el clúster?"),
])


# ============================================================================
# Noise: the ordinary bulk of a coding session
# ============================================================================

PROFILES = {
    "billing-api": dict(
        stack="rust", crate="billing-api",
        files=["src/main.rs", "src/lib.rs", "src/config.rs", "src/error.rs", "src/routes/mod.rs",
               "src/routes/invoices.rs", "src/routes/customers.rs", "src/routes/health.rs",
               "src/invoice/mod.rs", "src/invoice/numbering.rs", "src/invoice/render.rs",
               "src/payments/mod.rs", "src/repo/customers.rs", "src/repo/invoices.rs",
               "crates/ledger/src/lib.rs", "tests/api.rs", "tests/invoices.rs", "Cargo.toml"],
        types=["Invoice", "InvoiceLine", "Customer", "LedgerEntry", "AppState", "ApiError", "CreateInvoice", "Money"],
        funcs=["create_invoice", "list_customers", "next_number", "upsert_customer", "render_html",
               "post_entry", "void_invoice", "health", "load_config", "to_response"],
        tests=["invoice::numbering::tests::sequential_per_year", "routes::health::tests::returns_ok",
               "repo::customers::tests::upsert_by_email", "invoice::tests::void_twice_is_noop",
               "ledger::tests::balance_after_credit", "routes::invoices::tests::create_validates_lines",
               "money::tests::adds_same_currency", "config::tests::reads_env_overrides"],
        deps=[("serde", "1.0.197", "1.0.199"), ("tokio", "1.36.0", "1.37.0"), ("sqlx", "0.7.3", "0.7.4"),
              ("tower-http", "0.5.1", "0.5.2"), ("uuid", "1.7.0", "1.8.0"), ("chrono", "0.4.34", "0.4.38"),
              ("thiserror", "1.0.57", "1.0.59"), ("reqwest", "0.11.24", "0.12.3")],
        topics=["invoice numbering per tenant", "customer endpoints refactor", "OpenAPI docs for /invoices",
                "ledger snapshot tests", "error type cleanup with thiserror", "pagination on /customers",
                "splitting routes into modules", "config loading from env"],
        temas=["numeración de facturas por tenant", "refactor de los endpoints de clientes",
               "documentación OpenAPI de /invoices", "limpieza de tipos de error"]),
    "auth-service": dict(
        stack="go", module="github.com/acme/auth-service",
        files=["cmd/authd/main.go", "internal/httpx/handlers.go", "internal/httpx/middleware.go",
               "internal/session/store.go", "internal/store/users.go", "internal/token/issuer.go",
               "internal/oauth/google.go", "internal/config/config.go", "internal/audit/log.go", "go.mod"],
        pkgs=["internal/httpx", "internal/session", "internal/store", "internal/token", "internal/oauth",
              "internal/config", "internal/audit", "internal/mfa"],
        types=["User", "Session", "Issuer", "Config", "Handler", "AuditEvent", "Claims"],
        funcs=["HandleLogin", "HandleLogout", "IssueToken", "FindUserByEmail", "LoadConfig", "WriteAudit",
               "ParseClaims", "NewRouter"],
        tests=["TestHandleLogin", "TestHandleLogout", "TestIssueToken", "TestFindUserByEmail",
               "TestLoadConfigDefaults", "TestWriteAudit", "TestParseClaimsExpired", "TestNewRouterRoutes"],
        deps=[("github.com/go-chi/chi/v5", "v5.0.11", "v5.0.12"), ("github.com/redis/go-redis/v9", "v9.4.0", "v9.5.1"),
              ("github.com/jackc/pgx/v5", "v5.5.3", "v5.5.5"), ("golang.org/x/crypto", "v0.19.0", "v0.21.0")],
        topics=["audit log for admin actions", "handler table tests", "config defaults",
                "user store queries", "router wiring", "token issuer refactor"],
        temas=["log de auditoría para acciones de admin", "tests de tabla para handlers",
               "valores por defecto de la configuración"]),
    "crm-backend": dict(
        stack="django", app="crm",
        files=["crm/contacts/models.py", "crm/contacts/views.py", "crm/contacts/serializers.py",
               "crm/deals/models.py", "crm/deals/views.py", "crm/deals/services.py", "crm/companies/models.py",
               "crm/settings/base.py", "crm/urls.py", "crm/contacts/tests/test_api.py",
               "crm/deals/tests/test_services.py", "pyproject.toml"],
        types=["Contact", "Deal", "Company", "Activity", "ContactSerializer", "DealViewSet", "Pipeline"],
        funcs=["create_deal", "move_stage", "merge_companies", "contact_summary", "assign_owner",
               "log_activity", "get_queryset", "validate_phone"],
        tests=["test_create_contact", "test_move_stage_updates_probability", "test_merge_companies",
               "test_contact_summary_counts", "test_list_requires_auth", "test_validate_phone_rejects_letters",
               "test_log_activity_sets_actor", "test_deal_serializer_amount"],
        deps=[("django", "4.2.10", "4.2.11"), ("djangorestframework", "3.14.0", "3.15.1"), ("celery", "5.3.4", "5.3.6"),
              ("psycopg", "3.1.17", "3.1.18"), ("ruff", "0.2.2", "0.3.4"), ("pytest-django", "4.7.0", "4.8.0")],
        topics=["deal stage history", "company merge tool", "contact serializer cleanup",
                "API permissions per tenant", "activity log model", "phone validation"],
        temas=["historial de etapas de los deals", "herramienta para fusionar empresas",
               "permisos de la API por tenant"]),
    "web-dashboard": dict(
        stack="react", pkg="dashboard",
        files=["src/App.tsx", "src/main.tsx", "src/pages/Invoices.tsx", "src/pages/Customers.tsx",
               "src/pages/Settings.tsx", "src/components/DataTable.tsx", "src/components/Sidebar.tsx",
               "src/components/KpiCard.tsx", "src/api/invoices.ts", "src/hooks/useCustomers.ts",
               "src/utils/format.ts", "package.json", "vite.config.ts"],
        types=["Invoice", "Customer", "KpiCardProps", "DataTableProps", "SidebarItem", "SettingsForm"],
        funcs=["fetchInvoices", "useCustomers", "formatAmount", "KpiCard", "DataTable", "Sidebar",
               "buildQuery", "toCsvRow"],
        tests=["KpiCard renders the delta", "DataTable sorts by column", "Sidebar highlights active route",
               "formatAmount handles negatives", "buildQuery skips empty params", "Settings saves form"],
        deps=[("react", "18.2.0", "18.3.1"), ("vite", "5.1.4", "5.2.8"), ("@tanstack/react-query", "5.24.1", "5.29.0"),
              ("typescript", "5.3.3", "5.4.5"), ("vitest", "1.3.1", "1.5.0"), ("eslint", "8.56.0", "8.57.0")],
        topics=["KPI cards on the overview page", "sidebar navigation", "settings form validation",
                "customers table columns", "invoice filters UI"],
        temas=["tarjetas de KPIs en la portada", "navegación lateral", "validación del formulario de ajustes"]),
    "mobile-app": dict(
        stack="rn", pkg="acme-mobile",
        files=["src/App.tsx", "src/screens/HomeScreen.tsx", "src/screens/OrdersScreen.tsx",
               "src/screens/ProfileScreen.tsx", "src/components/OrderCard.tsx", "src/navigation/index.tsx",
               "src/api/orders.ts", "src/hooks/useProfile.ts", "app.json", "package.json",
               "android/app/build.gradle", "ios/Podfile"],
        types=["Order", "Profile", "OrderCardProps", "RootStackParamList", "Address"],
        funcs=["fetchOrders", "useProfile", "OrderCard", "HomeScreen", "formatPrice", "navigateToOrder",
               "updateAddress"],
        tests=["OrderCard shows status badge", "HomeScreen renders greeting", "formatPrice rounds to cents",
               "ProfileScreen saves address", "navigation opens order detail"],
        deps=[("react-native", "0.73.4", "0.73.6"), ("expo", "50.0.7", "50.0.14"),
              ("@react-navigation/native", "6.1.10", "6.1.17"), ("react-native-reanimated", "3.6.2", "3.8.1"),
              ("jest", "29.7.0", "29.7.0")],
        topics=["order detail screen", "profile editing", "navigation types", "home screen layout",
                "app icon and splash"],
        temas=["pantalla de detalle de pedido", "edición del perfil", "tipos de navegación"]),
    "notifications-svc": dict(
        stack="node", pkg="notifications",
        files=["src/index.ts", "src/config.ts", "src/mail/send.ts", "src/mail/templates.ts",
               "src/sms/provider.ts", "src/queues/index.ts", "src/routes/preferences.ts",
               "src/db/preferences.ts", "tests/preferences.test.ts", "package.json", "tsconfig.json"],
        types=["Preference", "MailJob", "SmsJob", "Template", "Channel"],
        funcs=["sendMail", "renderTemplate", "getPreferences", "updatePreferences", "enqueueMail",
               "loadConfig", "registerRoutes"],
        tests=["preferences returns defaults", "renderTemplate fills variables", "enqueueMail sets priority",
               "updatePreferences validates channel", "loadConfig reads env"],
        deps=[("bullmq", "5.1.1", "5.4.6"), ("nodemailer", "6.9.9", "6.9.13"), ("fastify", "4.26.1", "4.26.2"),
              ("ioredis", "5.3.2", "5.4.1"), ("typescript", "5.3.3", "5.4.5")],
        topics=["user notification preferences", "template rendering helpers", "queue priorities",
                "fastify routes", "config validation with zod"],
        temas=["preferencias de notificación del usuario", "helpers de plantillas", "prioridades de las colas"]),
    "data-pipeline": dict(
        stack="data", pkg="pipelines",
        files=["dags/revenue_daily.py", "dags/crm_sync.py", "pipelines/sales/transform.py",
               "pipelines/io/s3.py", "pipelines/events/load.py", "models/staging/stg_orders.sql",
               "models/marts/fct_revenue.sql", "models/staging/schema.yml", "dbt_project.yml",
               "tests/test_transform.py", "requirements.txt"],
        types=["RevenueRow", "LoadResult", "DagConfig", "S3Path"],
        funcs=["transform_sales", "load_events", "read_partition", "write_parquet", "build_dag",
               "compute_revenue", "normalize_columns"],
        tests=["test_transform_sales_totals", "test_normalize_columns_lowercase", "test_read_partition_path",
               "test_build_dag_schedule", "test_compute_revenue_by_region"],
        deps=[("apache-airflow", "2.8.1", "2.8.4"), ("dbt-snowflake", "1.7.2", "1.7.3"), ("pandas", "2.0.3", "2.0.3"),
              ("boto3", "1.34.49", "1.34.84"), ("pyspark", "3.5.0", "3.5.1")],
        topics=["revenue mart columns", "crm sync DAG", "staging models docs", "partition paths helper",
                "dbt project layout"],
        temas=["columnas del mart de ingresos", "DAG de sincronización del CRM", "documentación de los modelos staging"]),
    "infra": dict(
        stack="tf", pkg="infra",
        files=["network/main.tf", "network/variables.tf", "eks/main.tf", "eks/node_groups.tf", "rds/main.tf",
               "s3/buckets.tf", "iam/roles.tf", "charts/billing-api/values.yaml", "charts/crm/values.yaml",
               "charts/notifications/values.yaml", "k8s/prod/kustomization.yaml", "monitoring/alerts/api.yaml"],
        resources=["aws_s3_bucket.exports", "aws_iam_role.ci", "aws_eks_node_group.general",
                   "aws_db_instance.crm", "aws_security_group.app", "aws_route53_record.api",
                   "aws_cloudwatch_log_group.app", "aws_sqs_queue.mail"],
        deployments=["billing-api", "crm-web", "crm-worker", "notifications", "notifications-worker",
                     "auth-service", "dashboard"],
        namespaces=["prod", "staging", "data"],
        types=[], funcs=[], tests=[],
        deps=[("hashicorp/aws", "5.38.0", "5.44.0"), ("hashicorp/kubernetes", "2.26.0", "2.27.0"),
              ("hashicorp/helm", "2.12.1", "2.13.0")],
        topics=["tagging all resources with cost-center", "node group sizes", "log group retention for app logs",
                "helm values cleanup", "module versions pinning"],
        temas=["etiquetas de cost-center en todos los recursos", "tamaños de los node groups",
               "limpieza de values de Helm"]),
}

COMMIT_MSGS = ["refactor: extract {topic}", "test: cover {topic}", "chore: bump {dep}", "fix: lint warnings",
               "docs: update README", "feat: {topic}", "chore: format", "fix: typo in {file}",
               "refactor: rename {func}", "test: add cases for {func}"]
BRANCHES = ["feature/{slug}", "fix/{slug}", "chore/deps", "refactor/{slug}"]

PROMPTS_EN = [
    "run the tests", "run the tests again", "fix the failing test", "now commit this with a good message",
    "looks good, push it", "can you add a unit test for {func}?", "explain what {func} does",
    "refactor {file} a bit, it's getting long", "update the README with the new endpoint",
    "bump {dep} to the latest version", "why is the build failing?", "fix the lint warnings",
    "rename {func} to something clearer", "open a PR for this branch", "check git status",
    "let's work on {topic}", "continue where we left off", "add docs comments to {file}",
    "revert the last change to {file}", "show me the diff",
]
PROMPTS_ES = [
    "corre los tests", "arregla el test que falla", "haz commit con un mensaje descriptivo",
    "sube la rama y abre el PR", "añade tests para {func}", "revisa los warnings del linter",
    "actualiza {dep} a la última versión", "¿por qué falla el build?", "sigamos con {tema}",
    "explícame qué hace {func}", "refactoriza {file}, está muy largo", "muéstrame el diff",
]
NOTES_EN = [
    "Session recap: worked on {topic}. Tests green. Next: {topic2}.",
    "WIP on {topic}; {file} still needs cleanup before review.",
    "Reminder: {func} is only called from {file}; safe to change its signature.",
    "Paused {topic} halfway: branch {branch} has the partial work.",
]
NOTES_ES = [
    "Resumen de la sesión: {tema}. Tests en verde. Pendiente: revisar {file}.",
    "A medias con {tema}; la rama {branch} tiene el trabajo parcial.",
]


def slug(s):
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:28]


class Noise:
    def __init__(self, rng, project):
        self.r = rng
        self.project = project
        self.p = PROFILES[project]

    def pick(self, xs):
        return self.r.choice(xs)

    def fill(self, s):
        p = self.p
        dep = self.pick(p["deps"])
        vals = dict(func=self.pick(p["funcs"]) if p["funcs"] else "module.db",
                    file=self.pick(p["files"]), dep=dep[0], topic=self.pick(p["topics"]),
                    topic2=self.pick(p["topics"]), tema=self.pick(p["temas"]),
                    branch=self.branch())
        return s.format(**vals)

    def branch(self):
        return self.pick(BRANCHES).format(slug=slug(self.pick(self.p["topics"])))

    def sha(self):
        return "%07x" % self.r.getrandbits(28)

    # ---- generic git / shell ------------------------------------------------
    def git(self):
        r, p = self.r, self.p
        k = r.randrange(7)
        if k == 0:
            files = r.sample(p["files"], min(len(p["files"]), r.randint(1, 4)))
            out = "On branch %s\nChanges not staged for commit:\n" % self.branch()
            out += "\n".join("\tmodified:   " + f for f in files)
            return bash("git status", out)
        if k == 1:
            files = r.sample(p["files"], min(len(p["files"]), r.randint(1, 4)))
            lines = [" %-40s | %3d %s" % (f, n, "+" * min(n, 12)) for f in files for n in [r.randint(1, 40)]]
            return bash("git diff --stat", "\n".join(lines) + "\n %d files changed, %d insertions(+), %d deletions(-)"
                        % (len(files), r.randint(3, 90), r.randint(0, 30)))
        if k == 2:
            msgs = [self.sha() + " " + self.fill(self.pick(COMMIT_MSGS)) for _ in range(5)]
            return bash("git log --oneline -5", "\n".join(msgs))
        if k == 3:
            msg = self.fill(self.pick(COMMIT_MSGS))
            return bash('git add -A && git commit -m "%s"' % msg,
                        "[%s %s] %s\n %d files changed, %d insertions(+), %d deletions(-)"
                        % (self.branch(), self.sha(), msg, r.randint(1, 6), r.randint(2, 120), r.randint(0, 40)))
        if k == 4:
            b = self.branch()
            return bash("git push -u origin " + b,
                        "To github.com:acme/%s.git\n * [new branch]      %s -> %s\nbranch '%s' set up to track 'origin/%s'."
                        % (self.project, b, b, b, b))
        if k == 5:
            b = self.branch()
            return bash("git checkout -b " + b, "Switched to a new branch '%s'" % b)
        return bash("git pull --rebase origin main", "Successfully rebased and updated refs/heads/%s." % self.branch())

    def shell(self):
        r, p, st = self.r, self.p, self.p["stack"]
        k = r.randrange(4)
        if k == 0:
            d = sorted({f.split("/")[0] if "/" in f else f for f in p["files"]})
            return bash("ls", "\n".join(d + ["README.md", "Makefile"]))
        if k == 1:
            files = sorted(r.sample(p["files"], min(6, len(p["files"]))))
            return bash("git ls-files | head -20", "\n".join(files))
        if k == 2 and st != "tf":
            port = {"rust": 8080, "go": 8081, "django": 8000, "data": 8793, "react": 5173, "rn": 8081, "node": 3000}[st]
            return bash("curl -s localhost:%d/health" % port,
                        '{"status":"ok","version":"%d.%d.%d","uptime_s":%d}' % (r.randint(0, 3), r.randint(0, 20), r.randint(0, 9), r.randint(5, 90000)))
        svcs = ["postgres", "redis", "localstack", "mailhog"]
        rows = ["NAME                 IMAGE                  STATUS"]
        for sv in r.sample(svcs, r.randint(2, 4)):
            rows.append("%-20s %-22s Up %d minutes (healthy)" % (self.project + "-" + sv + "-1", sv + ":latest", r.randint(1, 300)))
        return bash("docker compose ps", "\n".join(rows))

    def grep_tool(self):
        p, r = self.p, self.r
        sym = self.pick(p["funcs"] or p.get("resources", ["tags"]))
        code = [f for f in p["files"] if f.endswith((".rs", ".go", ".py", ".ts", ".tsx", ".tf"))] or p["files"]
        files = r.sample(code, min(len(code), r.randint(1, 4)))
        lines = ["%s:%d:    %s" % (f, r.randint(3, 300), self.code_line(sym)) for f in files]
        dirs = {"rust": ["src", "crates", "tests", "."], "go": ["internal", "cmd", "."], "django": ["crm", "."],
                "data": ["dags", "pipelines", "models", "."], "tf": [".", "charts", "iam"],
                "react": ["src", "."], "rn": ["src", "."], "node": ["src", "tests", "."]}[p["stack"]]
        return grep(sym, self.pick(dirs), "\n".join(lines))

    def code_line(self, sym):
        st = self.p["stack"]
        if st == "rust":
            return self.pick(["let res = %s(&state, &req).await?;", "pub async fn %s(", "use crate::%s;", "// TODO: %s should return ApiError"]) % sym
        if st == "go":
            return self.pick(["res, err := %s(ctx, req)", "func %s(w http.ResponseWriter, r *http.Request) {", "// %s is safe for concurrent use"]) % sym
        if st in ("django", "data"):
            return self.pick(["result = %s(request.user, data)", "def %s(self, *args, **kwargs):", "from .services import %s", "# %s: keep in sync with the serializer"]) % sym
        if st == "tf":
            return self.pick(["resource_ref = %s.id", "# %s managed by terraform", "depends_on = [%s]"]) % sym
        return self.pick(["const res = await %s(params);", "export function %s(", "import { %s } from './api';", "// %s: memoized by caller"]) % sym

    # ---- stack specific commands -------------------------------------------
    def build(self):
        r, p, st = self.r, self.p, self.p["stack"]
        fail = r.random() < 0.22
        f = self.pick([x for x in p["files"] if "." in x and not x.endswith((".toml", ".json", ".yaml", ".yml", ".txt", ".mod"))] or p["files"])
        ln, col = r.randint(5, 320), r.randint(1, 40)
        if st == "rust":
            if r.random() < 0.3:
                return bash("cargo clippy --all-targets -- -D warnings", self.pick([
                    "warning: redundant clone\n  --> %s:%d:%d\n   = help: remove this\n   = note: `#[warn(clippy::redundant_clone)]` on by default",
                    "warning: this expression creates a reference which is immediately dereferenced by the compiler\n  --> %s:%d:%d\n   = note: `#[warn(clippy::needless_borrow)]` on by default",
                    "    Checking %s\n    Finished `dev` profile [unoptimized + debuginfo] target(s) in 9.12s"]).replace("%s:%d:%d", "%s:%d:%d" % (f, ln, col)).replace("Checking %s", "Checking " + p["crate"] + " v0.9.4"))
            if fail:
                ty, fn = self.pick(p["types"]), self.pick(p["funcs"])
                err = self.pick([
                    "error[E0308]: mismatched types\n --> %s:%d:%d\n  |\n  = note: expected `%s`, found `Option<%s>`" % (f, ln, col, ty, ty),
                    "error[E0425]: cannot find value `%s` in this scope\n --> %s:%d:%d" % (fn, f, ln, col),
                    "error[E0599]: no method named `%s` found for struct `%s` in the current scope\n --> %s:%d:%d" % (fn, ty, f, ln, col),
                    "error[E0277]: the trait bound `%s: Serialize` is not satisfied\n --> %s:%d:%d" % (ty, f, ln, col)])
                return bash(self.pick(["cargo build", "cargo check", "cargo check --all-targets"]),
                            "   Compiling %s v0.9.4\n%s\nerror: could not compile `%s` (lib) due to 1 previous error" % (p["crate"], err, p["crate"]))
            warn = ""
            if r.random() < 0.4:
                warn = "warning: unused import: `%s`\n --> %s:%d:%d\n  = note: `#[warn(unused_imports)]` on by default\n" % (self.pick(p["types"]), f, ln, col)
            compiled = "".join("   Compiling %s v%s\n" % (d[0], d[2]) for d in r.sample(p["deps"], r.randint(0, 5)))
            return bash(self.pick(["cargo build", "cargo check", "cargo build --release"]),
                        "%s   Compiling %s v0.9.4 (/home/dev/acme/%s)\n%s    Finished `dev` profile [unoptimized + debuginfo] target(s) in %.2fs"
                        % (compiled, p["crate"], self.project, warn, r.uniform(2, 70)))
        if st == "go":
            if r.random() < 0.35:
                return bash("golangci-lint run ./...", self.pick([
                    "%s:%d:%d: ineffectual assignment to err (ineffassign)" % (f, ln, col),
                    "%s:%d:%d: func `%s` is unused (unused)" % (f, ln, col, self.pick(p["funcs"])),
                    "%s:%d:%d: File is not `gofmt`-ed with `-s` (gofmt)" % (f, ln, col), ""]))
            if fail:
                return bash("go build ./...", "# %s/%s\n%s:%d:%d: undefined: %s" % (p["module"], self.pick(p["pkgs"]), f, ln, col, self.pick(p["funcs"])))
            return bash(self.pick(["go build ./...", "go vet ./...", "go mod tidy"]), "")
        if st in ("django", "data"):
            k = r.randrange(3)
            if k == 0:
                out = "\n".join("%s:%d:%d: %s" % (self.pick(p["files"]), r.randint(1, 300), r.randint(1, 60), self.pick([
                    "F401 [*] `os` imported but unused", "E501 Line too long (104 > 100)",
                    "F841 Local variable `result` is assigned to but never used", "I001 [*] Import block is un-sorted or un-formatted",
                    "B006 Do not use mutable data structures for argument defaults"])) for _ in range(r.randint(1, 4)))
                return bash("ruff check .", out + "\nFound %d errors.\n[*] 1 fixable with the `--fix` option." % r.randint(1, 4))
            if k == 1:
                if fail:
                    return bash("mypy .", '%s:%d: error: Incompatible return value type (got "str | None", expected "str")  [return-value]\nFound 1 error in 1 file (checked 214 source files)' % (f, ln))
                return bash("mypy .", "Success: no issues found in 214 source files")
            if st == "django":
                return bash("python manage.py makemigrations --check --dry-run", self.pick(["No changes detected",
                    "Migrations for 'contacts':\n  crm/contacts/migrations/00%d_auto.py\n    - Add field %s to contact" % (r.randint(44, 60), self.pick(["nickname", "source", "lifecycle_stage", "timezone_name"]))]))
            return bash(self.pick(["dbt run --select staging", "dbt run --select marts", "dbt compile"]),
                        "Running with dbt=1.7.9\nFound %d models, %d tests, 12 sources\n\nCompleted successfully\n\nDone. PASS=%d WARN=0 ERROR=0 SKIP=0 TOTAL=%d"
                        % (r.randint(40, 60), r.randint(80, 140), r.randint(5, 30), r.randint(30, 40)))
        if st in ("react", "rn", "node"):
            k = r.randrange(3)
            if k == 0:
                if st == "react":
                    return bash("npm run build", "> %s@2.4.0 build\n> tsc -b && vite build\n\nvite v5.2.8 building for production...\n✓ %d modules transformed.\ndist/index.html                   0.46 kB\ndist/assets/index-%s.js   %d.%02d kB │ gzip: %d.%02d kB\n✓ built in %.2fs"
                                % (p["pkg"], r.randint(1200, 1400), self.sha(), r.randint(380, 640), r.randint(0, 99), r.randint(110, 200), r.randint(0, 99), r.uniform(5, 14)))
                if st == "node":
                    return bash("npm run build", "> %s@1.12.0 build\n> tsc -p tsconfig.json" % p["pkg"])
                return bash(self.pick(["npx expo export --platform android", "cd android && ./gradlew assembleRelease"]),
                            "BUILD SUCCESSFUL in %dm %ds\n412 actionable tasks: 38 executed, 374 up-to-date" % (r.randint(1, 4), r.randint(0, 59)))
            if k == 1:
                ident = self.pick(["data", "result", "idx", "setOpen", "navigation", "props"])
                return bash(self.pick(["npm run lint", "npx eslint src --ext .ts,.tsx"]), self.pick([
                    "%s\n  %d:%d  error  '%s' is assigned a value but never used  @typescript-eslint/no-unused-vars\n\n✖ 1 problem (1 error, 0 warnings)" % (f, ln, col, ident),
                    "%s\n  %d:%d  warning  Unexpected any. Specify a different type  @typescript-eslint/no-explicit-any\n\n✖ 1 problem (0 errors, 1 warning)" % (f, ln, col),
                    ""]))
            if fail:
                return bash("npx tsc --noEmit", "%s(%d,%d): error TS2322: Type 'number' is not assignable to type 'string'.\n\nFound 1 error in %s:%d" % (f, ln, col, f, ln))
            return bash("npx tsc --noEmit", "")
        # terraform / k8s
        k = r.randrange(6)
        if k == 0:
            return bash("terraform fmt -recursive", "\n".join(r.sample([x for x in p["files"] if x.endswith(".tf")], 2)))
        if k == 1:
            return bash("terraform validate", "Success! The configuration is valid.")
        if k == 2:
            res = r.sample(p["resources"], 2)
            return bash("terraform plan -out=plan.tfplan",
                        "Refreshing state... [id=%s]\n\n  # %s will be updated in-place\n  ~ tags = {\n      + \"cost-center\" = \"platform\"\n    }\n\n  # %s will be created\n\nPlan: 1 to add, 1 to change, 0 to destroy."
                        % (self.sha(), res[0], res[1]))
        if k == 3:
            ns = self.pick(p["namespaces"])
            rows = ["NAME                              READY   STATUS    RESTARTS   AGE"]
            for d in r.sample(p["deployments"], 4):
                rows.append("%-33s 1/1     Running   %d          %dd" % (d + "-" + self.sha()[:5], r.randint(0, 2), r.randint(1, 20)))
            return bash("kubectl get pods -n " + ns, "\n".join(rows))
        if k == 4:
            d = self.pick(p["deployments"])
            return bash("kubectl rollout status deploy/%s -n %s" % (d, self.pick(p["namespaces"])),
                        "Waiting for deployment \"%s\" rollout to finish: 1 of 3 updated replicas are available...\ndeployment \"%s\" successfully rolled out" % (d, d))
        return bash("tflint --recursive", self.pick(["",
            "1 issue(s) found:\n\nWarning: variable \"%s\" is declared but not used (terraform_unused_declarations)\n\n  on %s line %d" % (self.pick(["az_count", "env_name", "owner"]), self.pick(p["files"]), r.randint(1, 40))]))

    def test(self):
        r, p, st = self.r, self.p, self.p["stack"]
        if st == "tf":
            return self.build()
        tests = r.sample(p["tests"], min(len(p["tests"]), r.randint(3, 6)))
        fail = r.random() < 0.2
        bad = tests[-1] if fail else None
        if st == "rust":
            lines = ["test %s ... %s" % (x, "FAILED" if x == bad else "ok") for x in tests]
            out = "running %d tests\n%s\n" % (len(tests), "\n".join(lines))
            if fail:
                out += "\n---- %s stdout ----\nthread '%s' panicked at %s:%d:%d:\nassertion `left == right` failed\n  left: %d\n right: %d\n\n" % (
                    bad, bad, self.pick(p["files"]), r.randint(10, 300), r.randint(5, 30), r.randint(0, 5), r.randint(6, 9))
                out += "test result: FAILED. %d passed; 1 failed; 0 ignored; 0 measured" % (len(tests) - 1)
            else:
                out += "\ntest result: ok. %d passed; 0 failed; 0 ignored; 0 measured; finished in %.2fs" % (len(tests), r.uniform(0.01, 3))
            cmd = self.pick(["cargo test", "cargo test --all", "cargo test -p %s" % p["crate"], "cargo test %s" % tests[0].split("::")[0]])
            return bash(cmd, out)
        if st == "go":
            pkgs = r.sample(p["pkgs"], 3)
            lines = []
            for i, pk in enumerate(pkgs):
                if fail and i == 2:
                    lines.append("--- FAIL: %s (0.00s)\n    %s_test.go:%d: got %d, want %d\nFAIL\t%s/%s\t0.%03ds"
                                 % (bad, pk.split("/")[-1], r.randint(20, 200), self.pick([500, 401, 404]), 200, p["module"], pk, r.randint(10, 999)))
                else:
                    lines.append("ok  \t%s/%s\t0.%03ds" % (p["module"], pk, r.randint(10, 999)))
            return bash(self.pick(["go test ./...", "go test -race ./...", "go test ./internal/..."]), "\n".join(lines))
        if st in ("django", "data"):
            n = r.randint(20, 180)
            out = "============================= test session starts ==============================\nplatform linux -- Python 3.11.8, pytest-8.1.1, pluggy-1.4.0\ncollected %d items\n\n" % n
            tfs = [x for x in p["files"] if "test" in x] or [p["files"][0]]
            tf = self.pick(tfs)
            extra = ["%s/tests/test_%s.py" % (p.get("app", "tests"), re.sub(r"\W+", "_", t_)[5:]) for t_ in tests]
            if p["stack"] == "data":
                extra = ["tests/%s.py" % t_.rsplit("_", 1)[0] for t_ in tests]
            shown = sorted(set([tf] + extra))
            pct = 0
            for i, fname in enumerate(shown):
                pct = int(100 * (i + 1) / len(shown))
                out += "%s %s [%3d%%]\n" % (fname, "." * r.randint(2, 14), pct)
            out += "\n"
            if fail:
                out += "FAILED %s::%s - AssertionError: assert %d == %d\n" % (tf, bad, self.pick([404, 400, 0, 2]), self.pick([200, 201, 1, 3]))
                out += "========================= 1 failed, %d passed in %.2fs =========================" % (n - 1, r.uniform(1, 30))
            else:
                out += "============================== %d passed in %.2fs ==============================" % (n, r.uniform(1, 30))
            return bash(self.pick(["pytest", "pytest -q", "pytest -x", "pytest %s" % tf]), out)
        # js family
        lines = []
        for x in tests:
            mark = "×" if x == bad else "✓"
            lines.append(" %s %s (%dms)" % (mark, x, r.randint(2, 90)))
        total = r.randint(40, 200)
        out = "\n".join(lines) + "\n\n Test Files  %s\n      Tests  %s" % (
            "1 failed | %d passed" % r.randint(8, 30) if fail else "%d passed" % r.randint(8, 30),
            "1 failed | %d passed (%d)" % (total - 1, total) if fail else "%d passed (%d)" % (total, total))
        if fail:
            out += "\n\nAssertionError: expected %d to be %d" % (r.randint(0, 3), r.randint(4, 9))
        return bash(self.pick(["npm test", "npm test -- --run", "yarn test", "npx vitest run"] if st == "react" else ["npm test", "yarn test", "npx jest"]), out)

    def deps(self):
        r, p, st = self.r, self.p, self.p["stack"]
        name, a, b = self.pick(p["deps"])
        if st == "rust":
            return bash("cargo update -p " + name, "    Updating crates.io index\n    Updating %s v%s -> v%s" % (name, a, b))
        if st == "go":
            return bash("go get %s@%s" % (name, b), "go: upgraded %s %s => %s" % (name, a, b))
        if st in ("django", "data"):
            return bash("pip install -U '%s==%s'" % (name, b), "Collecting %s==%s\nInstalling collected packages: %s\n  Attempting uninstall: %s\n    Found existing installation: %s %s\nSuccessfully installed %s-%s" % (name, b, name, name, name, a, name, b))
        if st == "tf":
            return bash("terraform init -upgrade", "Initializing provider plugins...\n- Finding %s versions matching \"~> %s\"...\n- Installing %s v%s...\n\nTerraform has been successfully initialized!" % (name, b.rsplit(".", 1)[0], name, b))
        return bash("npm install %s@%s" % (name, b), "\nchanged %d packages, and audited %d packages in %ds\n\n%d packages are looking for funding\n  run `npm fund` for details\n\nfound 0 vulnerabilities" % (r.randint(1, 9), r.randint(900, 1300), r.randint(2, 12), r.randint(100, 200)))

    # ---- file tools ----------------------------------------------------------
    def snippets(self):
        p, st = self.p, self.p["stack"]
        fn, ty = (self.pick(p["funcs"]), self.pick(p["types"])) if p["funcs"] else ("", "")
        if st == "rust":
            return ([
                "pub async fn %s(\n    State(state): State<AppState>,\n    Json(body): Json<%s>,\n) -> Result<Json<%s>, ApiError> {\n    let out = state.repo.%s(&body).await?;\n    Ok(Json(out))\n}" % (fn, ty, ty, fn),
                "#[derive(Debug, Clone, Serialize, Deserialize)]\npub struct %s {\n    pub id: Uuid,\n    pub created_at: DateTime<Utc>,\n    pub amount: Money,\n}" % ty,
                "impl From<sqlx::Error> for ApiError {\n    fn from(e: sqlx::Error) -> Self {\n        tracing::error!(error = %e, \"db error\");\n        ApiError::Internal\n    }\n}",
                "#[tokio::test]\nasync fn %s_works() {\n    let app = test_app().await;\n    let res = app.get(\"/health\").await;\n    assert_eq!(res.status(), 200);\n}" % fn])
        if st == "go":
            return ([
                "func (h *Handler) %s(w http.ResponseWriter, r *http.Request) {\n\tvar req %sRequest\n\tif err := json.NewDecoder(r.Body).Decode(&req); err != nil {\n\t\thttpx.Error(w, http.StatusBadRequest, err)\n\t\treturn\n\t}\n}" % (fn, ty),
                "type %s struct {\n\tID        string    `json:\"id\"`\n\tEmail     string    `json:\"email\"`\n\tCreatedAt time.Time `json:\"created_at\"`\n}" % ty,
                "func Test%s(t *testing.T) {\n\tcases := []struct{ name string; want int }{{\"ok\", 200}, {\"missing\", 404}}\n\tfor _, c := range cases {\n\t\tt.Run(c.name, func(t *testing.T) { /* ... */ })\n\t}\n}" % fn])
        if st in ("django", "data"):
            return ([
                "class %s(models.Model):\n    name = models.CharField(max_length=200)\n    created_at = models.DateTimeField(auto_now_add=True)\n\n    class Meta:\n        ordering = [\"-created_at\"]" % ty,
                "def %s(df: pd.DataFrame) -> pd.DataFrame:\n    df = df.rename(columns=str.lower)\n    df[\"amount\"] = df[\"amount\"].fillna(0)\n    return df" % fn,
                "@pytest.mark.django_db\ndef test_%s(api_client, user):\n    api_client.force_authenticate(user)\n    res = api_client.get(\"/api/contacts/\")\n    assert res.status_code == 200" % fn,
                "with DAG(\"revenue_daily\", schedule=\"0 5 * * *\", start_date=datetime(2024, 1, 1), catchup=False) as dag:\n    extract = PythonOperator(task_id=\"extract\", python_callable=%s)" % fn])
        if st == "tf":
            res = self.pick(p["resources"]).split(".")
            return ([
                "resource \"%s\" \"%s\" {\n  tags = merge(local.tags, { Name = \"%s\" })\n}" % (res[0], res[1], res[1]),
                "replicaCount: 3\nimage:\n  repository: 123456789012.dkr.ecr.eu-west-1.amazonaws.com/%s\n  tag: \"1.%d.0\"\nresources:\n  requests:\n    cpu: 100m\n    memory: 128Mi" % (self.pick(p["deployments"]), self.r.randint(2, 30)),
                "module \"eks\" {\n  source  = \"terraform-aws-modules/eks/aws\"\n  version = \"20.8.4\"\n  cluster_version = \"1.29\"\n}"])
        if st == "node":
            return [
                "export async function %s(app: FastifyInstance) {\n  app.get('/v1/preferences/:userId', async (req) => {\n    const { userId } = req.params as { userId: string };\n    return getPreferences(userId);\n  });\n}" % fn,
                "export const %sSchema = z.object({\n  channel: z.enum(['email', 'sms', 'push']),\n  enabled: z.boolean(),\n  quietHours: z.tuple([z.number(), z.number()]).optional(),\n});" % ty,
                "const worker = new Worker('mail', async (job: Job<MailJob>) => {\n  const html = await renderTemplate(job.data.template, job.data.vars);\n  await %s({ to: job.data.to, html });\n}, { connection });" % fn,
                "describe('%s', () => {\n  it('uses defaults', async () => {\n    const res = await app.inject({ method: 'GET', url: '/v1/preferences/u1' });\n    expect(res.statusCode).toBe(200);\n  });\n});" % fn,
            ]
        return ([
            "export function %s({ items }: %s) {\n  return (\n    <ul className={styles.list}>\n      {items.map((i) => <li key={i.id}>{i.label}</li>)}\n    </ul>\n  );\n}" % (fn, ty),
            "export async function %s(params: Record<string, string>) {\n  const res = await api.get('/v1/items', { params });\n  return res.data as %s[];\n}" % (fn, ty),
            "describe('%s', () => {\n  it('works', async () => {\n    expect(await %s({})).toBeDefined();\n  });\n});" % (fn, fn),
            "export interface %s {\n  id: string;\n  createdAt: string;\n  status: 'active' | 'archived';\n}" % ty])

    def snippet(self):
        return self.pick(self.snippets())

    HEADERS = {
        "rust": "use axum::{extract::State, Json};\nuse serde::{Deserialize, Serialize};\nuse crate::{error::ApiError, state::AppState};",
        "go": "package %s\n\nimport (\n\t\"context\"\n\t\"encoding/json\"\n\t\"net/http\"\n\t\"time\"\n)",
        "django": "from django.db import models, transaction\nfrom rest_framework import serializers, viewsets\n\nlogger = logging.getLogger(__name__)",
        "data": "import logging\nfrom datetime import datetime\n\nimport pandas as pd\nfrom airflow import DAG\nfrom airflow.operators.python import PythonOperator",
        "tf": "locals {\n  tags = {\n    project     = \"acme\"\n    managed_by  = \"terraform\"\n  }\n}",
        "react": "import { useState } from 'react';\nimport { useQuery } from '@tanstack/react-query';\nimport styles from './styles.module.css';",
        "rn": "import { View, Text, Pressable } from 'react-native';\nimport { useNavigation } from '@react-navigation/native';",
        "node": "import { FastifyInstance } from 'fastify';\nimport { z } from 'zod';\nimport { logger } from '../logger';",
    }

    def read_tool(self):
        st = self.p["stack"]
        head = self.HEADERS[st]
        if st == "go":
            head = head % self.pick(self.p["pkgs"]).split("/")[-1]
        pool = self.snippets()
        parts = [head] + self.r.sample(pool, self.r.randint(1, len(pool)))
        return read(self.pick(self.p["files"]), "\n\n".join(parts))

    def edit_tool(self):
        p, r, st = self.p, self.r, self.p["stack"]
        f = self.pick(p["files"])
        fn = self.pick(p["funcs"]) if p["funcs"] else "tags"
        if st == "rust":
            pairs = [("let res = %s(&state).await?;" % fn, "let res = %s(&state).await.context(\"%s\")?;" % (fn, fn)),
                     ("use crate::error::*;", "use crate::error::ApiError;"),
                     ("    tracing::info!(\"done\");", "    tracing::info!(count = items.len(), \"%s done\");" % fn)]
        elif st == "go":
            pairs = [("return err", "return fmt.Errorf(\"%s: %%w\", err)" % fn),
                     ("log.Println(\"done\")", "slog.Info(\"%s done\", \"count\", n)" % fn)]
        elif st in ("django", "data"):
            pairs = [("import os\n", ""), ("def %s(self, data):" % fn, "def %s(self, data: dict) -> None:" % fn),
                     ("logger.info(\"done\")", "logger.info(\"%s done\", extra={\"count\": n})" % fn)]
        elif st == "tf":
            pairs = [("  instance_types = [\"m6i.large\"]", "  instance_types = [\"m6i.xlarge\"]"),
                     ("  tags = local.tags", "  tags = merge(local.tags, { \"cost-center\" = \"platform\" })"),
                     ("replicaCount: 2", "replicaCount: 3")]
        else:
            pairs = [("const data = await res.json();", "const data = (await res.json()) as %s;" % (self.pick(p["types"]))),
                     ("import React from 'react';\n", ""),
                     ("console.log(result);", "")]
        old, new = self.pick(pairs)
        return edit(f, old.rstrip("\n"), new)

    def write_tool(self):
        p = self.p
        fn = self.pick(p["funcs"]) if p["funcs"] else self.pick(p["resources"]).split(".")[1]
        sn = re.sub(r"(?<!^)(?=[A-Z])", "_", fn).lower()
        newf = {"rust": "tests/%s.rs", "go": "internal/httpx/%s_test.go", "django": "crm/tests/test_%s.py",
                "data": "tests/test_%s.py", "tf": "modules/%s/main.tf", "react": "src/__tests__/%s.test.tsx",
                "rn": "src/__tests__/%s.test.tsx", "node": "tests/%s.test.ts"}[p["stack"]] % sn
        pool = self.snippets()
        return write(newf, "\n\n".join(self.r.sample(pool, self.r.randint(1, min(3, len(pool))))))

    def prompt_rec(self, lang):
        return prompt(self.fill(self.pick(PROMPTS_ES if lang == "es" else PROMPTS_EN)))

    def note_rec(self, lang):
        return note(self.fill(self.pick(NOTES_ES if lang == "es" else NOTES_EN)))

    def one(self, es_share):
        r = self.r
        x = r.random()
        if x < 0.22:
            return self.test(), "en"
        if x < 0.36:
            return self.build(), "en"
        if x < 0.47:
            return self.git(), "en"
        if x < 0.50:
            return (self.deps() if r.random() < 0.55 else self.shell()), "en"
        if x < 0.64:
            return self.read_tool(), "en"
        if x < 0.75:
            return self.edit_tool(), "en"
        if x < 0.78:
            return self.write_tool(), "en"
        if x < 0.86:
            return self.grep_tool(), "en"
        lang = "es" if r.random() < es_share else "en"
        if x < 0.96:
            return self.prompt_rec(lang), lang
        return self.note_rec(lang), lang

# ============================================================================
# Text checks
# ============================================================================

STOP_EN = """a an the and or but if of to in on at for from by with about as into onto over under
after before is are was were be been being do does did done have has had it its this that these
those there here we our us you your i me my they them their he she his her what which who whom why
how when where can could should would will shall may might must not no so than then too very just
also any all some again once up down out off only still each every other another own same such
while until via per vs let lets get got one because since""".split()
STOP_ES = """el la los las un una unos unas de del al a en y o u e que por para con sin se su sus lo le les
es son era eran fue fueron ser estar esta este esto estos estas ese esa eso esos esas como cuando
donde porque pero mas muy ya no si nos nuestro nuestra nuestros nuestras hay ha han hemos habia
me mi mis te tu tus yo cual quien cuanto cada otro otra otros otras todo toda todos todas tambien
aunque hace hacer ni ante tras entre hasta desde sobre""".split()
STOPWORDS = set(STOP_EN) | set(STOP_ES)


def norm(text):
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c))
    return text.lower()


def words(text):
    """Lowercased alphanumeric runs (accents folded), stopwords and 1-char tokens dropped."""
    return [w for w in re.split(r"[^a-z0-9]+", norm(text)) if len(w) > 1 and w not in STOPWORDS]


def stem(w):
    if len(w) > 3 and w.endswith("s"):
        w = w[:-1]
    return w[:5] if len(w) >= 5 else w


def _has_ident(text, ident):
    """The identifier (or every whitespace-separated part of it) occurs literally."""
    low, needle = text.lower(), ident.lower()
    return needle in low or all(tok in low for tok in needle.split())


def rec_text(rec):
    return "\n".join([rec["title"], rec["input"], rec["response"]])


# ============================================================================
# Assembly
# ============================================================================

def build():
    rng = Random(SEED)

    # Sessions: 5 per project, interleaved in time over 60 days.
    sessions = []
    for project in PROJECTS:
        for _ in range(5):
            sessions.append(dict(project=project, machine=rng.choice(["laptop", "desktop"]),
                                 length=rng.randint(44, 72), slots=[]))
    rng.shuffle(sessions)

    by_project = defaultdict(list)
    for s in sessions:
        by_project[s["project"]].append(s)

    # Place every fact (its records stay together, in order) and every distractor.
    placed = []  # (session, block of (record, lang, fact_id))
    for fact in FACTS:
        s = rng.choice(by_project[fact["project"]])
        block = [(dict(r), fact["lang"] if r["kind"] != "tool_use" or fact["lang"] == "es" else "en", fact["id"])
                 for r in fact["records"]]
        s["slots"].append(block)
    for d in DISTRACTORS:
        s = rng.choice(by_project[d["project"]])
        s["slots"].append([(dict(d["record"]), d["lang"], None)])

    # Fill each session with noise up to its length, then shuffle block order.
    for s in sessions:
        noise = Noise(rng, s["project"])
        used = sum(len(b) for b in s["slots"])
        es_share = 0.35 if rng.random() < 0.4 else 0.08
        for _ in range(max(0, s["length"] - used)):
            rec, lang = noise.one(es_share)
            s["slots"].append([(rec, lang, None)])
        rng.shuffle(s["slots"])
        # a session usually opens with a prompt
        first = noise.prompt_rec("es" if es_share > 0.3 else "en")
        s["slots"].insert(0, [(first, "es" if es_share > 0.3 else "en", None)])

    # Recurring identifiers, with their own random stream (the rest of the corpus is as
    # before): the fact goes into its project's oldest session, its repeats into the
    # later ones, so every repeat is newer than the answer.
    rng2 = Random(SEED + 1)
    for fact in RECURRING:
        first, *later = by_project[fact["project"]]
        block = [(dict(r), "en", fact["id"]) for r in fact["records"]]
        first["slots"].insert(rng2.randint(1, len(first["slots"])), block)
        for i in range(fact["count"]):
            s = later[i % len(later)]
            rec = dict(fact["repeat"](rng2), _repeat=True)
            s["slots"].insert(rng2.randint(1, len(s["slots"])), [(rec, "en", None)])

    # Timestamps: sessions spread over 60 days, records 1-6 minutes apart.
    starts = sorted(rng.sample(range(700, 60 * 24 * 60), len(sessions)), reverse=True)
    flat = []
    for i, (s, start) in enumerate(zip(sessions, starts)):
        m = start
        for block in s["slots"]:
            for rec, lang, fid in block:
                flat.append(dict(rec=rec, lang=lang, fid=fid, session=s, minutes_ago=m))
                # a repeat comes a minute or so after the previous record (a rerun)
                repeat = fid is None and rec.get("_repeat")
                m -= rng2.randint(0, 1) if repeat else rng.randint(1, 6)
        assert m >= 0
    flat.sort(key=lambda x: -x["minutes_ago"])
    shift = flat[-1]["minutes_ago"] - rng.randint(2, 30)  # the latest session ended minutes ago
    for x in flat:
        x["minutes_ago"] -= shift

    # Session keys in chronological order of their first record; record keys likewise.
    skeys = {}
    for x in flat:
        sid = id(x["session"])
        if sid not in skeys:
            skeys[sid] = "s%03d" % (len(skeys) + 1)
    corpus, fact_keys = [], defaultdict(list)
    for i, x in enumerate(flat):
        key = "o%04d" % (i + 1)
        r = x["rec"]
        corpus.append(dict(key=key, session=skeys[id(x["session"])], project=x["session"]["project"],
                           machine=x["session"]["machine"], kind=r["kind"], tool_name=r["tool_name"],
                           title=r["title"], input=r["input"], response=r["response"],
                           minutes_ago=x["minutes_ago"]))
        x["key"] = key
        if x["fid"]:
            fact_keys[x["fid"]].append(key)

    # Queries.
    text_of = {c["key"]: rec_text(c) for c in corpus}
    fact_lang = {f["id"]: f["lang"] for f in FACTS}
    fact_lang.update({f["id"]: "en" for f in RECURRING})
    queries = []
    for fact in FACTS + RECURRING:
        for q in fact["queries"]:
            kind, text = q[0], q[1]
            extra = q[2] if len(q) > 2 else []
            fids = [fact["id"]] + list(extra)
            targets = [k for fid in fids for k in fact_keys[fid]]
            if kind == "exact_identifier":
                # only the records that literally carry the identifier answer it
                targets = [k for k in targets if _has_ident(text_of[k], text)]
            if kind == "recurring_identifier":
                # the records of the fact that hold the identifier (the query's first word)
                targets = [k for k in targets if _has_ident(text_of[k], text.split()[0])]
            if kind == "paraphrase":
                lang = "en"
            elif kind == "paraphrase_es":
                lang = "es"
            elif kind == "cross_language":
                lang = "en" if fact_lang[fact["id"]] == "es" else "es"
            else:
                lang = fact_lang[fact["id"]]
            queries.append(dict(text=text, lang=lang, kind=kind, targets=targets, project=None,
                                _fids=fids))
    # Stable, interleaved order: sort by a seeded shuffle so kinds are mixed.
    rng.shuffle(queries)
    for i, q in enumerate(queries):
        q["id"] = "q%03d" % (i + 1)

    # Long outputs, with their own random stream as well. Each record goes between two
    # records of a session of its project (a fact and its near-miss in different
    # sessions) and takes a key after all the others, so every record and query above
    # keeps its key, time and text; the new queries are numbered after the old ones.
    rng3 = Random(SEED + 3)
    times = defaultdict(set)
    for x in flat:
        times[id(x["session"])].add(x["minutes_ago"])
    extra = []
    for fact in LONG:
        ss = by_project[fact["project"]]
        a, b = rng3.sample(range(len(ss)), 2)
        for s, rec, hit in ((ss[a], fact["record"], True), (ss[b], fact["distractor"], False)):
            ts = sorted(times[id(s)])
            i = rng3.randrange(1, len(ts))
            lo, hi = ts[i - 1], ts[i]
            m = rng3.randint(lo + 1, hi - 1) if hi - lo >= 2 else lo
            extra.append(dict(rec=rec, fid=fact["id"], hit=hit, session=s, minutes_ago=m))
    extra.sort(key=lambda x: -x["minutes_ago"])
    long_keys = {}
    for x in extra:
        key = "o%04d" % (len(corpus) + 1)
        r = x["rec"]
        corpus.append(dict(key=key, session=skeys[id(x["session"])], project=x["session"]["project"],
                           machine=x["session"]["machine"], kind=r["kind"], tool_name=r["tool_name"],
                           title=r["title"], input=r["input"], response=r["response"],
                           minutes_ago=x["minutes_ago"]))
        long_keys[(x["fid"], x["hit"])] = key
    fact_lang.update({f["id"]: "en" for f in LONG})
    more = []
    for fact in LONG:
        for lang, text in fact["queries"]:
            more.append(dict(text=text, lang=lang, kind="long_output",
                             targets=[long_keys[(fact["id"], True)]], project=None, _fids=[fact["id"]],
                             _marker=fact["marker"], _near=long_keys[(fact["id"], False)]))
    rng3.shuffle(more)
    for q in more:
        q["id"] = "q%03d" % (len(queries) + 1)
        queries.append(q)
    return corpus, queries, fact_lang


def validate(corpus, queries, fact_lang):
    by_key = {c["key"]: c for c in corpus}
    problems = []
    assert len(by_key) == len(corpus), "duplicate corpus keys"
    texts = Counter(q["text"] for q in queries)
    for txt, n in texts.items():
        if n > 1:
            problems.append("duplicate query text: %r" % txt)
    kinds = Counter(q["kind"] for q in queries)
    for kind, n in MIN_PER_KIND.items():
        if kinds[kind] < n:
            problems.append("kind %s has %d queries, needs >= %d" % (kind, kinds[kind], n))
    en_to_es = sum(1 for q in queries if q["kind"] == "cross_language" and q["lang"] == "en")
    if en_to_es < MIN_CROSS_EN_TO_ES:
        problems.append("only %d English cross_language queries about Spanish targets" % en_to_es)
    warnings = []
    for c in corpus:
        size = len(json.dumps(c, ensure_ascii=False).encode("utf-8"))
        if size >= 24 * 1024:
            problems.append("record %s is %d bytes (must stay below 24 KB)" % (c["key"], size))
    per_fact = Counter((q["_fids"][0], q["lang"]) for q in queries if q["kind"] == "long_output")
    for f in LONG:
        if per_fact[(f["id"], "en")] != 1 or per_fact[(f["id"], "es")] != 1:
            problems.append("long output %s needs one English and one Spanish query" % f["id"])
    for q in queries:
        tag = "%s [%s] %r" % (q["id"], q["kind"], q["text"])
        if not q["targets"] or len(q["targets"]) > 3:
            problems.append("%s: %d targets (need 1..3)" % (tag, len(q["targets"])))
        for k in q["targets"]:
            if k not in by_key:
                problems.append("%s: target %s not in corpus" % (tag, k))
        tlangs = {fact_lang[f] for f in q["_fids"]}
        if q["kind"] == "paraphrase" and tlangs != {"en"}:
            problems.append("%s: paraphrase must target English records" % tag)
        if q["kind"] == "paraphrase_es" and tlangs != {"es"}:
            problems.append("%s: paraphrase_es must target Spanish records" % tag)
        if q["kind"] == "cross_language" and q["lang"] in tlangs:
            problems.append("%s: cross_language query in the target's language" % tag)
        ttexts = [rec_text(by_key[k]) for k in q["targets"] if k in by_key]
        if q["kind"] in ("paraphrase", "paraphrase_es", "long_output"):
            qw = words(q["text"])
            for tt in ttexts:
                tw = set(words(tt))
                ts = {stem(w) for w in tw}
                shared = sorted({w for w in qw if w in tw or stem(w) in ts})
                if shared:
                    problems.append("%s: shares content words with its target: %s" % (tag, shared))
            if len(qw) < 3:
                problems.append("%s: too few content words" % tag)
        if q["kind"] == "long_output":
            marker = q["_marker"]
            if len(q["targets"]) != 1:
                problems.append("%s: a long output query has exactly one target" % tag)
            for k in q["targets"]:
                c = by_key.get(k)
                if c is None:
                    continue
                resp = c["response"]
                if not 2500 <= len(resp) <= 9000:
                    problems.append("%s: target response is %d chars (need 2,500-9,000)" % (tag, len(resp)))
                pos = resp.find(marker)
                if pos < 1500:
                    problems.append("%s: marker %r at offset %d of the target's response (need >= 1,500)"
                                    % (tag, marker, pos))
                if marker in c["title"] or marker in c["input"]:
                    problems.append("%s: marker %r in the target's title or input" % (tag, marker))
            if q["_near"] in q["targets"] or marker in rec_text(by_key[q["_near"]]):
                problems.append("%s: the near-miss %s holds the marker %r" % (tag, q["_near"], marker))
        if q["kind"] == "keyword":
            union = set()
            for tt in ttexts:
                union |= set(words(tt))
            ustem = {stem(w) for w in union}
            missing = [w for w in words(q["text"]) if w not in union and stem(w) not in ustem]
            if missing:
                problems.append("%s: keyword words not in target: %s" % (tag, missing))
        if q["kind"] == "exact_identifier":
            needle = q["text"].lower()
            for tt in ttexts:
                if not _has_ident(tt, q["text"]):
                    problems.append("%s: identifier not literally in target" % tag)
            others = [c["key"] for c in corpus if c["key"] not in q["targets"] and needle in rec_text(c).lower()]
            if others:
                warnings.append("%s: also literally in non-targets %s" % (tag, others[:6]))
        if q["kind"] == "recurring_identifier":
            ident = q["text"].split()[0]
            for tt in ttexts:
                if not _has_ident(tt, ident):
                    problems.append("%s: identifier not literally in target" % tag)
            oldest = min(q["targets"])
            newer = [c["key"] for c in corpus if c["key"] > oldest and c["key"] not in q["targets"]
                     and ident.lower() in rec_text(c).lower()]
            if len(newer) <= 200:
                problems.append("%s: only %d newer records repeat %s (need > 200)"
                                % (tag, len(newer), ident))
    return problems, warnings


# ============================================================================
# BM25 baseline (a sanity check on labels, printed with the summary)
# ============================================================================

def bm25_ranks(corpus, queries, k1=1.2, b=0.75):
    docs = [words(rec_text(c)) for c in corpus]
    N = len(docs)
    avgdl = sum(map(len, docs)) / N
    df = Counter()
    for d in docs:
        df.update(set(d))
    tfs = [Counter(d) for d in docs]
    out = {}
    for q in queries:
        qw = words(q["text"])
        scores = []
        for i, tf in enumerate(tfs):
            s = 0.0
            for w in qw:
                f = tf.get(w)
                if f:
                    idf = math.log(1 + (N - df[w] + 0.5) / (df[w] + 0.5))
                    s += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len(docs[i]) / avgdl))
            if s > 0:
                scores.append((-s, i))
        scores.sort()
        ranking = [corpus[i]["key"] for _, i in scores]
        rank = next((r + 1 for r, k in enumerate(ranking) if k in q["targets"]), None)
        out[q["id"]] = (rank, ranking[:3])
    return out


def main():
    corpus, queries, fact_lang = build()
    problems, warnings = validate(corpus, queries, fact_lang)
    report = "--report" in sys.argv
    for w in warnings:
        print("warning:", w)
    if problems:
        for p in problems:
            print("PROBLEM:", p, file=sys.stderr)
        raise SystemExit("%d problems; nothing written" % len(problems))

    cpath = os.path.join(HERE, "corpus.jsonl")
    qpath = os.path.join(HERE, "queries.jsonl")
    with open(cpath, "w", encoding="utf-8", newline="\n") as f:
        for c in corpus:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    with open(qpath, "w", encoding="utf-8", newline="\n") as f:
        for q in queries:
            row = dict(id=q["id"], text=q["text"], lang=q["lang"], kind=q["kind"],
                       targets=q["targets"], project=q["project"])
            f.write(json.dumps(row, ensure_ascii=False) + "\n")

    # Summary.
    print("corpus: %d records, %d sessions, %d projects, %.2f MB -> %s" % (
        len(corpus), len({c["session"] for c in corpus}), len({c["project"] for c in corpus}),
        os.path.getsize(cpath) / 1e6, os.path.relpath(cpath)))
    print("  kinds: %s" % dict(sorted(Counter(c["kind"] for c in corpus).items())))
    print("  tools: %s" % dict(sorted(Counter(c["tool_name"] for c in corpus if c["tool_name"]).items())))
    print("  facts: %d (%d Spanish), target records: %d, distractors: %d" % (
        len(FACTS), sum(1 for f in FACTS if f["lang"] == "es"),
        len({k for q in queries for k in q["targets"]}), len(DISTRACTORS)))
    print("  long outputs: %d facts, %d target records, %d near-miss distractors" % (
        len(LONG), len(LONG), len(LONG)))
    print("queries: %d -> %s" % (len(queries), os.path.relpath(qpath)))
    ranks = bm25_ranks(corpus, queries)
    print("  %-17s %5s %4s %4s   %s" % ("kind", "total", "en", "es", "BM25 baseline: MRR@10 / hit@10"))
    for kind in MIN_PER_KIND:
        qs = [q for q in queries if q["kind"] == kind]
        rr = [1.0 / ranks[q["id"]][0] if ranks[q["id"]][0] and ranks[q["id"]][0] <= 10 else 0.0 for q in qs]
        hits = sum(1 for x in rr if x > 0)
        print("  %-17s %5d %4d %4d   %.3f / %.3f" % (kind, len(qs), sum(q["lang"] == "en" for q in qs),
                                                   sum(q["lang"] == "es" for q in qs), sum(rr) / len(qs), hits / len(qs)))
    if report:
        by_key = {c["key"]: c for c in corpus}
        for q in queries:
            rank, top = ranks[q["id"]]
            if q["kind"] in ("exact_identifier", "keyword") and rank != 1:
                print("\n%s [%s] %r -> target rank %s" % (q["id"], q["kind"], q["text"], rank))
                for k in top:
                    mark = "*" if k in q["targets"] else " "
                    print("   %s %s %s" % (mark, k, by_key[k]["title"][:100]))


if __name__ == "__main__":
    main()
