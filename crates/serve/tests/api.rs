//! The HTTP API and the page, request by request, through the router in process: every status
//! code the API promises, and the same bytes as the engine writes for the same profile.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use decide::profile::Syntax;
use decide::{Detail, Format, Graph, Lang, Memo, Policy, Source};
use decide_serve::{Settings, Site, router};
use http_body_util::BodyExt;
use tower::ServiceExt;

const AS_OF: &str = "2026-09-04";

fn date() -> jiff::civil::Date {
    AS_OF.parse().unwrap()
}

fn example(name: &str) -> String {
    let path = format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A site on the embedded policy at the test date, with `settings`.
fn site_with(settings: Settings) -> Arc<Site> {
    Arc::new(Site::new(
        Policy::embedded().unwrap(),
        Memo::embedded().unwrap(),
        Some(date()),
        settings,
    ))
}

fn site() -> Arc<Site> {
    site_with(Settings::default())
}

struct Answer {
    status: StatusCode,
    content_type: String,
    headers: axum::http::HeaderMap,
    body: String,
}

impl Answer {
    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

async fn send(site: Arc<Site>, request: Request<Body>) -> Answer {
    let response = router(site).oneshot(request).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    Answer {
        status,
        content_type,
        headers,
        body: String::from_utf8(bytes.to_vec()).unwrap(),
    }
}

async fn get(site: Arc<Site>, uri: &str) -> Answer {
    send(site, Request::get(uri).body(Body::empty()).unwrap()).await
}

async fn post(site: Arc<Site>, uri: &str, body: impl Into<Body>) -> Answer {
    send(site, Request::post(uri).body(body.into()).unwrap()).await
}

/// What the engine writes for `profile` in `format` and `lang`: `decide PROFILE`'s output.
fn engine(profile: &str, format: Format, lang: Lang) -> String {
    let policy = Policy::embedded().unwrap().at(date());
    let graph = Graph::compile_in(policy, lang).unwrap();
    let source = Source::new("profile.yaml", profile);
    let (profile, evaluation) =
        decide::decide_text(&graph, &source, Syntax::Yaml, date(), Detail::DEFAULT).unwrap();
    Memo::embedded()
        .unwrap()
        .render(&graph, &profile, &evaluation, format)
        .unwrap()
}

#[tokio::test]
async fn health_is_ok() {
    let answer = get(site(), "/healthz").await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.json()["status"], "ok");
}

#[tokio::test]
async fn a_profile_is_decided_in_each_format_as_the_engine_writes_it() {
    let profile = example("pretrain-70b-job.yaml");
    for (name, format, content_type) in [
        ("json", Format::Json, "application/json"),
        ("md", Format::Markdown, "text/markdown; charset=utf-8"),
        ("html", Format::Html, "text/html; charset=utf-8"),
    ] {
        for lang in Lang::ALL {
            let uri = format!(
                "/api/decide?format={name}&lang={}&as_of={AS_OF}",
                lang.code()
            );
            let answer = post(site(), &uri, profile.clone()).await;
            assert_eq!(answer.status, StatusCode::OK, "{uri}: {}", answer.body);
            assert_eq!(answer.content_type, content_type, "{uri}");
            assert_eq!(answer.body, engine(&profile, format, lang), "{uri}");
        }
    }
}

#[tokio::test]
async fn the_defaults_are_the_json_record_in_english_at_the_servers_date() {
    let profile = example("lora-7b-4090.yaml");
    let answer = post(site(), "/api/decide", profile.clone()).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.body, engine(&profile, Format::Json, Lang::En));
    assert_eq!(answer.json()["as_of"], AS_OF);
}

#[tokio::test]
async fn a_json_body_is_read_as_json() {
    let yaml = example("lora-7b-4090.yaml");
    let value: serde_json::Value = serde_saphyr::from_str(&yaml).unwrap();
    let request = Request::post("/api/decide")
        .header(header::CONTENT_TYPE, "application/json; charset=utf-8")
        .body(Body::from(value.to_string()))
        .unwrap();
    let answer = send(site(), request).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    let record = answer.json();
    let expected: serde_json::Value =
        serde_json::from_str(&engine(&yaml, Format::Json, Lang::En)).unwrap();
    assert_eq!(record["offer"], expected["offer"]);
    assert_eq!(record["costs"], expected["costs"]);
}

#[tokio::test]
async fn a_bad_profile_is_a_422_with_the_field_line_and_words_of_the_command_line() {
    let profile = "name: x\nworkload: {task: inference, model_params_b: -7}\nusage: {gpus: 1, hours_per_gpu_month: 10}\n";
    let answer = post(site(), "/api/decide", profile).await;
    assert_eq!(
        answer.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        answer.body
    );
    let error = &answer.json()["error"];
    assert_eq!(error["kind"], "profile");
    assert_eq!(error["field"], "workload.model_params_b");
    assert_eq!(error["at"]["line"], 2);
    // The words of the command line: the engine's own error, first line.
    let source = Source::new("the request's profile", profile);
    let policy = Policy::embedded().unwrap().at(date());
    let graph = Graph::compile(policy).unwrap();
    let e =
        decide::decide_text(&graph, &source, Syntax::Yaml, date(), Detail::DEFAULT).unwrap_err();
    assert_eq!(error["message"], e.title());
}

#[tokio::test]
async fn a_body_that_is_not_text_or_not_yaml_is_a_422() {
    for body in [vec![0xff, 0xfe, 0x00], b"name: [unclosed".to_vec()] {
        let answer = post(site(), "/api/decide", body).await;
        assert_eq!(
            answer.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            answer.body
        );
        assert_eq!(answer.json()["error"]["kind"], "profile");
    }
}

#[tokio::test]
async fn a_body_over_the_size_limit_is_a_413() {
    let mut body = String::from("name: big\n");
    while body.len() <= decide_serve::MAX_BODY_BYTES {
        body.push_str("# padding padding padding padding padding padding padding padding\n");
    }
    let answer = post(site(), "/api/decide", body).await;
    assert_eq!(
        answer.status,
        StatusCode::PAYLOAD_TOO_LARGE,
        "{}",
        answer.body
    );
    assert!(
        answer.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1 MiB")
    );
}

#[tokio::test]
async fn a_bad_parameter_is_a_400_that_says_what_would_be_valid() {
    let profile = example("lora-7b-4090.yaml");
    for (query, says) in [
        ("format=pdf", "`format=json`, `md` or `html`"),
        ("lang=fr", "`lang=en` or `zh`"),
        ("as_of=2026-13-01", "YYYY-MM-DD"),
        ("as_of=2020-01-01", "first quote"),
        (
            "colour=red",
            "the parameters are `format`, `lang` and `as_of`",
        ),
    ] {
        let answer = post(site(), &format!("/api/decide?{query}"), profile.clone()).await;
        assert_eq!(
            answer.status,
            StatusCode::BAD_REQUEST,
            "{query}: {}",
            answer.body
        );
        let error = &answer.json()["error"];
        let help = error["help"].to_string();
        assert!(help.contains(says), "{query}: {error}");
    }
}

#[tokio::test]
async fn no_path_outside_the_site_is_served() {
    for uri in [
        "/Cargo.toml",
        "/../Cargo.toml",
        "/%2e%2e/%2e%2e/etc/passwd",
        "/api/decide/../../rules/catalog.yaml",
        "/rules/catalog.yaml",
    ] {
        let answer = get(site(), uri).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{uri}");
        assert_eq!(answer.json()["error"]["kind"], "usage");
    }
    let answer = get(site(), "/api/decide").await;
    assert_eq!(answer.status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn with_a_token_every_request_must_carry_it() {
    let settings = Settings {
        token: Some("s3cret".to_owned()),
        ..Settings::default()
    };
    let site = site_with(settings);
    for auth in [
        None,
        Some("Bearer wrong"),
        Some("s3cret"),
        Some("Bearer s3cret2"),
    ] {
        let mut request = Request::get("/healthz");
        if let Some(auth) = auth {
            request = request.header(header::AUTHORIZATION, auth);
        }
        let answer = send(site.clone(), request.body(Body::empty()).unwrap()).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{auth:?}");
        assert_eq!(answer.headers[header::WWW_AUTHENTICATE], "Bearer");
    }
    let request = Request::get("/healthz")
        .header(header::AUTHORIZATION, "Bearer s3cret")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(site, request).await.status, StatusCode::OK);
}

#[tokio::test]
async fn offers_are_listed_at_a_date() {
    let answer = get(site(), &format!("/api/offers?as_of={AS_OF}")).await;
    assert_eq!(answer.status, StatusCode::OK);
    let expected = decide::catalog::listing(&Policy::embedded().unwrap().at(date()), date());
    assert_eq!(answer.json(), serde_json::to_value(&expected).unwrap());
    assert_eq!(
        get(site(), "/api/offers?as_of=soon").await.status,
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test]
async fn the_profile_schema_is_served() {
    let answer = get(site(), "/api/schema/profile").await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(
        answer.json(),
        decide::schema::profile(decide::schema::Draft::default())
    );
}

#[tokio::test]
async fn the_page_decides_a_posted_profile_and_shows_an_error_beside_it() {
    let page = get(site(), "/").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("<form method=\"post\" action=\"/\">"));
    let csp = page.headers[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap();
    assert!(csp.starts_with("default-src 'none'"), "{csp}");

    let profile = example("lora-7b-4090.yaml");
    let form = |profile: &str, lang: &str| {
        let mut body = String::from("profile=");
        for b in profile.bytes() {
            if b.is_ascii_alphanumeric() {
                body.push(b as char);
            } else {
                write!(body, "%{b:02X}").unwrap();
            }
        }
        write!(body, "&format=html&lang={lang}&as_of={AS_OF}").unwrap();
        Request::post("/")
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(body))
            .unwrap()
    };
    let memo = send(site(), form(&profile, "zh")).await;
    assert_eq!(memo.status, StatusCode::OK);
    assert_eq!(memo.body, engine(&profile, Format::Html, Lang::Zh));
    assert!(memo.headers.contains_key(header::CONTENT_SECURITY_POLICY));

    let bad = "name: <b>x</b>\nworkload: {task: inference, model_params_b: -7}\n";
    let page = send(site(), form(bad, "en")).await;
    assert_eq!(page.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(page.body.contains("role=\"alert\""), "{}", page.body);
    assert!(page.body.contains("model_params_b"));
    // The profile comes back in the form, escaped.
    assert!(page.body.contains("name: &lt;b&gt;x&lt;"), "{}", page.body);
    assert!(!page.body.contains("<b>x</b>"));
}

#[tokio::test]
async fn a_fault_of_the_rules_is_a_500_with_an_id_in_the_log() {
    // A policy whose fact divides by zero for every profile: a fault of the rules, found at
    // run time, which the client is shown with an id and the log keeps.
    let dir = tempdir_with_broken_rules();
    let logged = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = logged.clone();
    let settings = Settings {
        log: Arc::new(move |line| sink.lock().unwrap().push(line.to_owned())),
        ..Settings::default()
    };
    let site = Arc::new(Site::new(
        Policy::from_dir(dir.path()).unwrap(),
        Memo::embedded().unwrap(),
        Some(date()),
        settings,
    ));
    let answer = post(site, "/api/decide", example("lora-7b-4090.yaml")).await;
    assert_eq!(
        answer.status,
        StatusCode::INTERNAL_SERVER_ERROR,
        "{}",
        answer.body
    );
    let error = &answer.json()["error"];
    let id = error["id"].as_str().unwrap().to_owned();
    assert_eq!(error["kind"], "eval");
    let logged = logged.lock().unwrap();
    assert_eq!(logged.len(), 1);
    assert!(
        logged[0].starts_with(&format!("error {id}: ")),
        "{logged:?}"
    );
}

/// The embedded rules with one fact made to divide by zero.
fn tempdir_with_broken_rules() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in decide::policy::embedded_files() {
        let path = dir.path().join(&name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let text = if name == "facts.yaml" {
            text.replacen(
                "expr: not profile.requirements.domestic_accelerator or offer.gpu.domestic",
                "expr: (1 // (profile.usage.gpus - profile.usage.gpus)) > 0",
                1,
            )
        } else {
            text.to_owned()
        };
        std::fs::write(path, text).unwrap();
    }
    dir
}
