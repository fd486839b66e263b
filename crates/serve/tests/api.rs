//! The HTTP API and the page, request by request, through the router in process: every status
//! code the API promises, and the same bytes as the engine writes for the same profile.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use decide_engine::profile::Syntax;
use decide_engine::{Graph, Lang, Policy, Source};
use decide_serve::{Settings, Site, router};
use decide_tools::{Detail, Format, Memo};
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

/// `pairs` as a form posts them to `uri` (`application/x-www-form-urlencoded`).
fn form_post(uri: &str, pairs: &[(&str, &str)]) -> Request<Body> {
    let body = form_body(pairs);
    Request::post(uri)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(body))
        .unwrap()
}

/// What the engine writes for `profile` in `format` and `lang`: `decide PROFILE`'s output.
fn engine(profile: &str, format: Format, lang: Lang) -> String {
    let policy = Policy::embedded().unwrap().at(date());
    let graph = Graph::compile_in(policy, lang).unwrap();
    let source = Source::new("profile.yaml", profile);
    let (profile, evaluation) =
        decide_tools::decide_text(&graph, &source, Syntax::Yaml, date(), Detail::DEFAULT).unwrap();
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
    let e = decide_tools::decide_text(&graph, &source, Syntax::Yaml, date(), Detail::DEFAULT)
        .unwrap_err();
    assert_eq!(error["message"], e.title());
}

#[tokio::test]
async fn every_fault_of_a_profile_is_in_the_422s_list_each_at_its_line() {
    let profile = "name: x\nworkload:\n  task: inferense\n  model_params_b: 13B\nusage:\n  hours_per_gpu_month: 100\nbudget: {monthly_cny: 0}\n";
    let answer = post(site(), "/api/decide", profile).await;
    assert_eq!(
        answer.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        answer.body
    );
    let body = answer.json();
    let errors = body["errors"].as_array().expect("a list of errors");
    let placed: Vec<(&str, u64)> = errors
        .iter()
        .map(|e| {
            (
                e["field"].as_str().unwrap(),
                e["at"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        placed,
        [
            ("workload.task", 3),
            ("workload.model_params_b", 4),
            ("usage", 6),
            ("budget.monthly_cny", 7)
        ],
        "{body}"
    );
    // The first is `error`, as for a profile with one fault; the shorthand's number is said.
    assert_eq!(body["error"], errors[0]);
    let help = errors[1]["help"].to_string();
    assert!(help.contains("`model_params_b: 13`"), "{help}");
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
        ("format=docx", "`format=json`, `md`, `html` or"),
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
        let mut request = Request::get("/api/offers");
        if let Some(auth) = auth {
            request = request.header(header::AUTHORIZATION, auth);
        }
        let answer = send(site.clone(), request.body(Body::empty()).unwrap()).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "{auth:?}");
        assert_eq!(answer.headers[header::WWW_AUTHENTICATE], "Bearer");
    }
    let request = Request::get("/api/offers")
        .header(header::AUTHORIZATION, "Bearer s3cret")
        .body(Body::empty())
        .unwrap();
    assert_eq!(send(site.clone(), request).await.status, StatusCode::OK);
    // The health check says nothing secret: a monitor asks it without the token.
    assert_eq!(get(site, "/healthz").await.status, StatusCode::OK);
}

#[tokio::test]
async fn a_browser_without_the_token_gets_a_page_that_asks_for_it() {
    let site = site_with(Settings {
        token: Some("s3cret".to_owned()),
        ..Settings::default()
    });
    let page = |uri: &str| {
        Request::get(uri)
            .header(header::ACCEPT, "text/html,application/xhtml+xml,*/*;q=0.8")
            .body(Body::empty())
            .unwrap()
    };
    let answer = send(site.clone(), page("/offers?lang=zh")).await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    assert_eq!(answer.headers[header::WWW_AUTHENTICATE], "Bearer");
    assert!(
        answer.content_type.starts_with("text/html"),
        "{}",
        answer.content_type
    );
    assert_a_page_of_the_site(&answer, "zh");
    // A form that opens the same page again with the token (which sets the cookie), in the
    // language asked.
    assert!(
        answer
            .body
            .contains("<form method=\"get\" action=\"&#x2f;offers\">"),
        "{}",
        answer.body
    );
    assert!(
        answer
            .body
            .contains("<input type=\"hidden\" name=\"lang\" value=\"zh\">"),
        "{}",
        answer.body
    );
    assert!(answer.body.contains("name=\"token\""), "{}", answer.body);
    assert!(
        answer.body.contains("此服务器需要访问令牌"),
        "{}",
        answer.body
    );
    assert!(
        !answer.body.contains("这不是此服务器的令牌"),
        "{}",
        answer.body
    );
    // A wrong token typed in says so.
    let wrong = send(site.clone(), page("/offers?token=guess")).await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert!(
        wrong.body.contains("That is not this server"),
        "{}",
        wrong.body
    );
    // A script that does not ask for HTML gets the JSON 401 as before.
    let script = get(site, "/offers").await;
    assert_eq!(script.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        script.json()["error"]["message"],
        "this server needs a token"
    );
}

#[tokio::test]
async fn a_browser_trades_a_token_link_for_a_cookie_that_then_opens_every_page() {
    // A token with characters a cookie value may not hold as they are.
    let token = "s3 cret;=";
    let settings = Settings {
        token: Some(token.to_owned()),
        ..Settings::default()
    };
    let site = site_with(settings);
    let link = format!("/offers?lang=zh&token={}", "s3+cret%3B%3D");
    let answer = get(site.clone(), &link).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    assert_eq!(answer.headers[header::LOCATION], "/offers?lang=zh");
    let cookie = answer.headers[header::SET_COOKIE].to_str().unwrap();
    assert_eq!(
        cookie,
        "decide_token=s3+cret%3B%3D; Path=/; HttpOnly; SameSite=Strict"
    );
    let pair = cookie.split(';').next().unwrap();
    let with = |cookie: &str| {
        Request::get("/api/offers")
            .header(header::COOKIE, cookie)
            .body(Body::empty())
            .unwrap()
    };
    assert_eq!(
        send(site.clone(), with(&format!("theme=dark; {pair}")))
            .await
            .status,
        StatusCode::OK
    );
    for wrong in [
        "decide_token=s3",
        "decide_token=s3 cret;=",
        "other=s3+cret%3B%3D",
    ] {
        assert_eq!(
            send(site.clone(), with(wrong)).await.status,
            StatusCode::UNAUTHORIZED,
            "{wrong}"
        );
    }
    // A wrong token in the link, or the link on a post, is a 401 and sets nothing.
    let answer = get(site.clone(), "/?token=s3").await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
    assert!(answer.headers.get(header::SET_COOKIE).is_none());
    assert!(
        answer.json()["error"]["help"][0]
            .as_str()
            .unwrap()
            .contains("?token=")
    );
    let answer = post(site, &link, "").await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn offers_are_listed_at_a_date() {
    let answer = get(site(), &format!("/api/offers?as_of={AS_OF}")).await;
    assert_eq!(answer.status, StatusCode::OK);
    let expected = decide_tools::catalog::listing(&Policy::embedded().unwrap().at(date()), date());
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
        decide_tools::schema::profile(decide_tools::schema::Draft::default())
    );
}

#[tokio::test]
async fn the_paste_page_decides_a_posted_profile_and_shows_an_error_beside_it() {
    let page = get(site(), "/paste").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body
            .contains("<form method=\"post\" action=\"/paste\">")
    );
    let csp = page.headers[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap();
    assert!(csp.starts_with("default-src 'none'"), "{csp}");

    let profile = example("lora-7b-4090.yaml");
    let form = |profile: &str, lang: &str| {
        form_post(
            "/paste",
            &[
                ("profile", profile),
                ("format", "html"),
                ("lang", lang),
                ("as_of", AS_OF),
            ],
        )
    };
    // An HTML memo follows the form, on a page of the site (its links lead back), the profile
    // kept in the form; the memo framed is the engine's.
    let site_ = site();
    let memo = send(site_.clone(), form(&profile, "zh")).await;
    assert_eq!(memo.status, StatusCode::OK);
    assert_a_page_of_the_site(&memo, "zh");
    assert!(memo.body.contains(&decide_tools::html::escape(&profile)));
    assert_eq!(
        framed_all(&site_, &memo.body).await,
        [engine(&profile, Format::Html, Lang::Zh)]
    );
    assert!(memo.headers.contains_key(header::CONTENT_SECURITY_POLICY));
    // Another format is the text itself.
    let md = form_post(
        "/paste",
        &[("profile", &profile), ("format", "md"), ("as_of", AS_OF)],
    );
    let md = send(site(), md).await;
    assert_eq!(md.body, engine(&profile, Format::Markdown, Lang::En));

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
    // The failure under its id, and the request's own line: method, path, status, time.
    let logged = logged.lock().unwrap();
    assert_eq!(logged.len(), 2, "{logged:?}");
    assert!(
        logged[0].starts_with(&format!("error {id}: ")),
        "{logged:?}"
    );
    assert!(logged[1].starts_with("POST /api/decide 500 "), "{logged:?}");
    assert!(logged[1].ends_with(" ms"), "{logged:?}");
}

#[tokio::test]
async fn every_request_is_one_line_of_the_log_without_its_query_or_body() {
    let logged = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = logged.clone();
    let site = site_with(Settings {
        token: Some("s3cret".to_owned()),
        log: Arc::new(move |line| sink.lock().unwrap().push(line.to_owned())),
        ..Settings::default()
    });
    get(site.clone(), "/offers?lang=zh&token=s3cret").await;
    get(site.clone(), "/no/such/page").await;
    let request = Request::post("/api/decide?format=md")
        .header(header::AUTHORIZATION, "Bearer s3cret")
        .body(Body::from(example("lora-7b-4090.yaml")))
        .unwrap();
    send(site, request).await;
    let logged = logged.lock().unwrap();
    let lines: Vec<Vec<&str>> = logged.iter().map(|l| l.split(' ').collect()).collect();
    let heads: Vec<String> = lines.iter().map(|l| l[..3].join(" ")).collect();
    assert_eq!(
        heads,
        [
            "GET /offers 303",
            "GET /no/such/page 401",
            "POST /api/decide 200"
        ],
        "{logged:?}"
    );
    for line in logged.iter() {
        assert!(
            !line.contains("s3cret") && !line.contains("lang="),
            "{line}"
        );
        assert!(line.ends_with(" ms"), "{line}");
    }
}

/// The embedded rules with one fact made to divide by zero.
fn tempdir_with_broken_rules() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in decide_engine::policy::embedded_files() {
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

/// A service's answers, as the questionnaire page posts them.
const SERVICE: [(&str, &str); 8] = [
    ("_lang", "en"),
    ("name", "Support chat"),
    ("workload.task", "inference"),
    ("workload.model_params_b", "13B"),
    ("usage.gpus", "2"),
    ("usage.hours_per_gpu_month", "24/7"),
    ("budget.monthly_cny", "2万"),
    ("job", "no"),
];

/// The `value="..."` of the page's input named `name`.
fn input_value<'p>(page: &'p str, name: &str) -> &'p str {
    let at = page
        .find(&format!("name=\"{name}\" value=\""))
        .unwrap_or_else(|| panic!("no input {name}"));
    let rest = &page[at + name.len() + 15..];
    &rest[..rest.find('"').unwrap()]
}

/// The profile the page shows (the `<pre id="profile-yaml">`), unescaped.
fn shown_profile(page: &str) -> String {
    let start = page.find("<pre id=\"profile-yaml\">").unwrap() + 23;
    let end = start + page[start..].find("</pre>").unwrap();
    unescape(&page[start..end])
}

/// The memos a page frames, fetched from `site` as a browser does (each frame's `src`), with
/// the memos' own content security policy.
async fn framed_all(site: &Arc<Site>, page: &str) -> Vec<String> {
    let mut memos = Vec::new();
    for frame in page.split("<iframe ").skip(1) {
        let frame = &frame[..frame.find('>').unwrap()];
        assert!(
            !frame.contains("srcdoc"),
            "a memo carried in the page: {frame}"
        );
        let Some(src) = frame.split("src=\"").nth(1) else {
            continue;
        };
        let src = unescape(&src[..src.find('"').unwrap()]);
        assert!(src.starts_with("/memo/"), "{src}");
        let memo = get(site.clone(), &src).await;
        assert_eq!(memo.status, StatusCode::OK, "{src}: {}", memo.body);
        let csp = memo.headers[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap();
        assert!(
            csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'self'"),
            "{csp}"
        );
        memos.push(memo.body);
    }
    memos
}

/// The memo in the page's frame.
async fn framed(site: &Arc<Site>, page: &str) -> String {
    let mut memos = framed_all(site, page).await;
    assert_eq!(memos.len(), 1, "one memo in the frame");
    memos.remove(0)
}

fn unescape(html: &str) -> String {
    html.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&#x2f;", "/")
        .replace("&amp;", "&")
}

#[tokio::test]
async fn the_questionnaire_is_the_front_page_in_either_language_with_its_defaults() {
    let page = get(site(), "/").await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("What is this workload called?"));
    // Training is the first task, so a question of inference is there but hidden and disabled
    // (nothing of it is posted), and nothing is refused before anything was answered.
    assert!(
        page.body
            .contains("data-field=\"workload.concurrency\" hidden disabled")
    );
    assert!(!page.body.contains("class=\"msg error\""));
    assert!(
        page.body
            .contains("The memo appears when these are answered")
    );
    let csp = page.headers[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap();
    assert!(
        csp.contains("script-src 'self'") && csp.contains("default-src 'none'"),
        "{csp}"
    );

    let zh = get(site(), "/?lang=zh").await;
    assert!(zh.body.contains("这个工作负载叫什么？"), "{}", zh.body);
    assert!(zh.body.contains("<html lang=\"zh\">"));

    let script = get(site(), "/assets/form.js").await;
    assert_eq!(script.status, StatusCode::OK);
    assert_eq!(script.content_type, "text/javascript; charset=utf-8");
    assert!(script.body.contains("X-Decide-Live"));
}

#[tokio::test]
async fn answers_give_the_memo_beside_the_form_that_decide_writes_for_their_profile() {
    let site = site();
    let page = send(site.clone(), form_post("/", &SERVICE)).await;
    assert_eq!(page.status, StatusCode::OK);
    let profile = shown_profile(&page.body);
    assert!(profile.contains("model_params_b: 13"), "{profile}");
    assert!(profile.contains("monthly_cny: 20000"), "{profile}");
    let memo = engine(&profile, Format::Html, Lang::En);
    let framed = framed(&site, &page.body).await;
    assert_eq!(framed, memo);
    // The page carries a link to the memo, not the memo: it is smaller than the memo it shows.
    assert!(
        page.body.len() < memo.len(),
        "{} bytes for a memo of {}",
        page.body.len(),
        memo.len()
    );
    // The shorthand is echoed with what it was read as; the question of training is disabled.
    assert!(
        page.body.contains("2万 → 20,000 yuan a month"),
        "{}",
        page.body
    );
    assert!(
        page.body
            .contains("data-field=\"workload.tokens_b\" hidden disabled")
    );
    assert_eq!(input_value(&page.body, "workload.model_params_b"), "13B");
}

#[tokio::test]
async fn a_refused_answer_is_shown_at_its_question_and_no_memo_is_written() {
    let mut answers = SERVICE.to_vec();
    answers[4] = ("usage.gpus", "1.5");
    let page = send(site(), form_post("/", &answers)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body
            .contains("<p class=\"msg error\">must be a whole number</p>"),
        "{}",
        page.body
    );
    assert!(!page.body.contains("/memo/"));
    assert!(
        page.body
            .contains("<li>How many GPUs are kept busy at once?</li>")
    );
    // What was typed comes back as typed, escaped.
    answers[1] = ("name", "<b>x</b>");
    let page = send(site(), form_post("/", &answers)).await;
    assert!(
        page.body.contains("value=\"&lt;b&gt;x&lt;&#x2f;b&gt;\""),
        "{}",
        page.body
    );
    assert!(!page.body.contains("<b>x</b>"));
}

#[tokio::test]
async fn downloads_are_the_memo_the_record_and_the_profile_of_the_answers() {
    let page = send(site(), form_post("/", &SERVICE)).await;
    let profile = shown_profile(&page.body);
    for (file, format, content_type) in [
        (
            "memo.md",
            Some(Format::Markdown),
            "text/markdown; charset=utf-8",
        ),
        ("memo.html", Some(Format::Html), "text/html; charset=utf-8"),
        ("record.json", Some(Format::Json), "application/json"),
        ("profile.yaml", None, "application/yaml; charset=utf-8"),
    ] {
        let answer = send(site(), form_post(&format!("/download/{file}"), &SERVICE)).await;
        assert_eq!(answer.status, StatusCode::OK, "{file}: {}", answer.body);
        assert_eq!(answer.content_type, content_type, "{file}");
        assert_eq!(
            answer.headers[header::CONTENT_DISPOSITION],
            format!("attachment; filename=\"{file}\""),
        );
        let expected = format.map_or_else(|| profile.clone(), |f| engine(&profile, f, Lang::En));
        assert_eq!(answer.body, expected, "{file}");
    }
    // Without a browser on the server there is no PDF, and the page says so.
    assert!(
        page.body
            .contains("PDF needs a Chromium-family browser on the server.")
    );
    assert_eq!(
        send(site(), form_post("/download/memo.pdf", &SERVICE))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        send(site(), form_post("/download/..%2fCargo.toml", &SERVICE))
            .await
            .status,
        StatusCode::NOT_FOUND
    );
    // Incomplete answers give the page back with what is missing, not a file.
    let answer = send(site(), form_post("/download/memo.md", &SERVICE[..3])).await;
    assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        answer
            .body
            .contains("The memo appears when these are answered")
    );
}

/// A site whose printer keeps the HTML it is given and answers a stand-in PDF.
fn site_with_a_printer() -> (Arc<Site>, Arc<Mutex<String>>) {
    let printed = Arc::new(Mutex::new(String::new()));
    let seen = printed.clone();
    let site = site_with(Settings {
        pdf: Some(Arc::new(move |html: &str, _: &dyn Fn() -> bool| {
            html.clone_into(&mut seen.lock().unwrap());
            Ok(b"%PDF-1.7 stand-in".to_vec())
        })),
        ..Settings::default()
    });
    (site, printed)
}

#[tokio::test]
async fn the_pdf_is_the_html_memo_printed_by_the_servers_printer() {
    let (site, printed) = site_with_a_printer();
    let page = send(site.clone(), form_post("/", &SERVICE)).await;
    assert!(page.body.contains("data-file=\"memo.pdf\""));
    let answer = send(site, form_post("/download/memo.pdf", &SERVICE)).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.content_type, "application/pdf");
    assert_eq!(answer.body, "%PDF-1.7 stand-in");
    let profile = shown_profile(&page.body);
    assert_eq!(
        *printed.lock().unwrap(),
        engine(&profile, Format::Html, Lang::En)
    );
}

#[tokio::test]
async fn the_api_prints_a_pdf_where_the_server_has_a_printer() {
    let (site, printed) = site_with_a_printer();
    let profile = example("lora-7b-4090.yaml");
    let answer = post(site, "/api/decide?format=pdf&lang=zh", profile.clone()).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    assert_eq!(answer.content_type, "application/pdf");
    assert_eq!(answer.body, "%PDF-1.7 stand-in");
    assert_eq!(
        *printed.lock().unwrap(),
        engine(&profile, Format::Html, Lang::Zh)
    );
    // Without a printer, the 400 says what to ask for instead.
    let answer = post(
        site_with(Settings::default()),
        "/api/decide?format=pdf",
        profile,
    )
    .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(
        answer.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("prints no PDFs")
    );
}

/// A multipart upload of `file` as the field `profile`.
fn upload(file: &str, lang: &str) -> Request<Body> {
    let boundary = "decide-test-boundary";
    let body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"_lang\"\r\n\r\n{lang}\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"profile\"; filename=\"p.yaml\"\r\n\
         Content-Type: application/yaml\r\n\r\n{file}\r\n--{boundary}--\r\n"
    );
    Request::post("/upload")
        .header(
            header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(Body::from(body))
        .unwrap()
}

#[tokio::test]
async fn an_uploaded_profile_fills_the_form_and_gives_its_own_memo() {
    let file = example("pretrain-70b-job.yaml");
    let uploaded = site();
    let page = send(uploaded.clone(), upload(&file, "zh")).await;
    assert_eq!(page.status, StatusCode::OK);
    assert_eq!(input_value(&page.body, "workload.model_params_b"), "70");
    assert!(page.body.contains("name=\"job\" value=\"yes\" checked"));
    let framed = framed(&uploaded, &page.body).await;
    let from_file = engine(&file, Format::Markdown, Lang::Zh);
    let answer = from_file.lines().find(|l| l.starts_with("> **")).unwrap();
    let answer = answer.trim_start_matches("> ").replace("**", "");
    let text: String = framed.chars().filter(|c| !c.is_whitespace()).collect();
    let answer: String = answer.chars().filter(|c| !c.is_whitespace()).collect();
    assert!(text.contains(&answer), "{answer} not in the framed memo");

    // A file that is not a profile is said so, where, with nothing filled.
    let page = send(
        site(),
        upload("name: x\nworkload: {task: teleport}\n", "en"),
    )
    .await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(
        page.body
            .contains("class=\"status refused\" role=\"alert\""),
        "{}",
        page.body
    );
    assert!(page.body.contains("teleport"), "{}", page.body);
    let page = send(site(), upload("", "en")).await;
    assert!(page.body.contains("choose a profile file"), "{}", page.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_slow_with_its_headers_is_cut_off_and_shutdown_ends_serving() {
    use std::time::{Duration, Instant};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let site = site_with(Settings {
        header_timeout: Duration::from_millis(300),
        ..Settings::default()
    });
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(decide_serve::serve(listener, site, async {
        let _ = stopped.await;
    }));

    // Half a request, and then nothing: the server hangs up.
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let start = Instant::now();
    let mut heard = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), slow.read_to_end(&mut heard)).await;
    assert!(read.is_ok(), "the connection is still open after 10 s");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );

    // A whole request on a connection kept alive is answered, twice.
    let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
    for _ in 0..2 {
        client
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut answer = [0u8; 512];
        let n = client.read(&mut answer).await.unwrap();
        assert!(
            answer[..n].starts_with(b"HTTP/1.1 200"),
            "{}",
            String::from_utf8_lossy(&answer[..n])
        );
    }
    drop(client);
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("serving ends once shut down")
        .unwrap();
}

/// Every page of the site is framed the same: the links to the others, the content security
/// policy, the language asked.
fn assert_a_page_of_the_site(answer: &Answer, lang: &str) {
    assert_eq!(answer.content_type, "text/html; charset=utf-8");
    assert!(
        answer.headers[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap()
            .contains("default-src 'none'")
    );
    assert!(answer.body.contains(&format!("<html lang=\"{lang}\">")));
    for path in ["/", "/paste", "/offers", "/graph", "/compare"] {
        assert!(
            answer
                .body
                .contains(&format!("<a href=\"{path}?lang={lang}\"")),
            "{path}"
        );
    }
    assert!(!answer.body.contains("{{"), "a placeholder left unfilled");
}

#[tokio::test]
async fn the_offers_page_lists_every_quote_in_force_at_the_date_asked() {
    for (uri, lang) in [
        (format!("/offers?as_of={AS_OF}"), "en"),
        (format!("/offers?lang=zh&as_of={AS_OF}"), "zh"),
    ] {
        let answer = get(site(), &uri).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        assert_a_page_of_the_site(&answer, lang);
        let listing =
            decide_tools::catalog::listing(&Policy::embedded().unwrap().at(date()), date());
        assert!(answer.body.contains(&decide_tools::catalog::html(&listing)));
        for offer in &listing.offers {
            assert!(answer.body.contains(&format!("<code>{}</code>", offer.id)));
        }
        assert!(answer.body.contains(&format!("value=\"{AS_OF}\"")));
    }
    // Another date gives that date's quotes (the July sheet has fewer offers).
    let july = get(site(), "/offers?as_of=2026-07-15").await;
    let listing = decide_tools::catalog::listing(
        &Policy::embedded()
            .unwrap()
            .at("2026-07-15".parse().unwrap()),
        "2026-07-15".parse().unwrap(),
    );
    assert!(july.body.contains(&decide_tools::catalog::html(&listing)));
    // A date that is not one is said so, with a 400, above the listing at the server's date.
    let answer = get(site(), "/offers?as_of=soon").await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(
        answer
            .body
            .contains("role=\"alert\">`as_of` is `soon`, not a date")
    );
    assert!(answer.body.contains("<table>"));
}

#[tokio::test]
async fn the_graph_page_indexes_every_node_and_draws_one_nodes_neighbourhood() {
    let graph = Graph::compile_in(Policy::embedded().unwrap().at(date()), Lang::En).unwrap();
    let index = decide_tools::diagram::index(&graph);
    let answer = get(site(), "/graph").await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_a_page_of_the_site(&answer, "en");
    for n in &index {
        assert!(
            answer
                .body
                .contains(&format!("<a href=\"/graph?node={}&amp;lang=en\">", n.id)),
            "{}",
            n.id
        );
    }
    // A node in the middle of the graph: its picture holds it and every direct neighbour.
    let node = index
        .iter()
        .find(|n| n.reads.len() > 1 && n.read_by.len() > 1)
        .unwrap();
    let uri = format!("/graph?node={}&lang=zh", node.id);
    let answer = get(site(), &uri).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    assert_a_page_of_the_site(&answer, "zh");
    let svg = &answer.body[answer.body.find("<svg").expect("a picture")..];
    let svg = &svg[..svg.find("</svg>").unwrap()];
    for name in node.reads.iter().chain(&node.read_by).chain([&node.id]) {
        assert!(svg.contains(&format!(">{name}<")), "{name} is not drawn");
    }
    // The same picture on every request.
    assert_eq!(get(site(), &uri).await.body, answer.body);
    // An id the graph lacks: a 404 naming the nearest.
    let typo = format!("{}x", &node.id[..node.id.len() - 1]);
    let answer = get(site(), &format!("/graph?node={typo}")).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert!(
        answer.body.contains(&format!("`{}`", node.id)),
        "{}",
        answer.body
    );
    // The whole graph as `decide graph` prints it.
    let mermaid = get(site(), "/graph/decide.mmd").await;
    assert_eq!(mermaid.body, decide_tools::diagram::mermaid(&graph));
    assert_eq!(
        mermaid.headers[header::CONTENT_DISPOSITION],
        "attachment; filename=\"decide.mmd\""
    );
    assert_eq!(
        get(site(), "/graph/decide.dot").await.body,
        decide_tools::diagram::dot(&graph)
    );
    // In the language asked, as the index links it.
    let zh = Graph::compile_in(Policy::embedded().unwrap().at(date()), Lang::Zh).unwrap();
    assert!(
        get(site(), "/graph?lang=zh")
            .await
            .body
            .contains("href=\"/graph/decide.mmd?lang=zh\"")
    );
    assert_eq!(
        get(site(), "/graph/decide.mmd?lang=zh").await.body,
        decide_tools::diagram::mermaid(&zh)
    );
    assert_ne!(
        decide_tools::diagram::mermaid(&zh),
        decide_tools::diagram::mermaid(&graph)
    );
    assert_eq!(
        get(site(), "/graph/decide.png").await.status,
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn the_graph_index_is_grouped_by_rule_file_and_searched() {
    let graph = Graph::compile_in(Policy::embedded().unwrap().at(date()), Lang::En).unwrap();
    let index = decide_tools::diagram::index(&graph);
    let body = get(site(), "/graph").await.body;
    // A heading per rule file, each node under its own file's heading.
    let mut files: Vec<&str> = index.iter().map(|n| n.file.as_str()).collect();
    files.dedup();
    assert!(
        files.contains(&"facts.yaml") && files.contains(&"criteria.yaml"),
        "{files:?}"
    );
    for n in &index {
        let heading = body
            .find(&format!("<h2 id=\"file-{}\">", n.file.replace('.', "-")))
            .unwrap_or_else(|| panic!("no heading for {}", n.file));
        let place = index.iter().position(|m| m.id == n.id).unwrap() + 1;
        let row = body
            .find(&format!(
                "<tr><td class=\"num\">{place}</td><td><a href=\"/graph?node={}&amp;lang=en\">",
                n.id
            ))
            .unwrap_or_else(|| panic!("no row of {}", n.id));
        let next = body[heading + 1..]
            .find("<h2 ")
            .map_or(body.len(), |i| heading + 1 + i);
        assert!(
            (heading..next).contains(&row),
            "{} is not under {}",
            n.id,
            n.file
        );
    }
    // A search keeps the nodes whose id, title or file holds the words, and says how many.
    let target = index
        .iter()
        .find(|n| n.id.contains("breakeven"))
        .expect("a break-even node");
    let answer = get(site(), "/graph?q=BreakEven").await;
    assert_eq!(answer.status, StatusCode::OK);
    let kept: Vec<&str> = index
        .iter()
        .filter(|n| {
            [&n.id, &n.title, &n.file]
                .iter()
                .any(|t| t.to_lowercase().contains("breakeven"))
        })
        .map(|n| n.id.as_str())
        .collect();
    assert!(kept.contains(&target.id.as_str()));
    assert!(
        answer
            .body
            .contains(&format!("{} of {} nodes", kept.len(), index.len())),
        "{}",
        answer.body
    );
    let shown = |id: &str| {
        answer.body.contains(&format!(
            "<tr><td class=\"num\">{}</td><td><a href=\"/graph?node={id}&",
            index.iter().position(|n| n.id == id).unwrap() + 1
        ))
    };
    assert!(kept.iter().all(|id| shown(id)));
    let other = index
        .iter()
        .find(|n| !kept.contains(&n.id.as_str()))
        .unwrap();
    assert!(!shown(&other.id), "{} is shown", other.id);
    assert!(
        answer.body.contains("value=\"BreakEven\""),
        "the search is kept in its box"
    );
}

#[tokio::test]
async fn profiles_uploaded_as_files_are_compared_as_pasted_ones_are() {
    let (a, b) = (example("lora-7b-4090.yaml"), example("qlora-70b-4090.yaml"));
    let boundary = "decide-test-boundary";
    let mut body = String::new();
    for (name, file, value) in [
        ("first", None, ""),
        ("first_file", Some("a.yaml"), a.as_str()),
        ("second", None, "this text is replaced by the file"),
        ("second_file", Some("b.yaml"), b.as_str()),
        ("lang", None, "en"),
        ("as_of", None, AS_OF),
    ] {
        let filename = file.map_or(String::new(), |f| format!("; filename=\"{f}\""));
        let _ = write!(
            body,
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"{filename}\r\n\r\n{value}\r\n"
        );
    }
    let _ = write!(body, "--{boundary}--\r\n");
    let request = Request::post("/compare")
        .header(
            header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(Body::from(body))
        .unwrap();
    let site = site();
    let uploaded = send(site.clone(), request).await;
    assert_eq!(uploaded.status, StatusCode::OK, "{}", uploaded.body);
    let pasted = send(site.clone(), compare(&a, &b, "en")).await;
    // The same comparison (the memos' frames are kept under the same keys too).
    let part = |body: &str| body[body.find("<h2>").unwrap()..].to_owned();
    assert_eq!(part(&uploaded.body), part(&pasted.body));
    // The form that comes back holds the files' text.
    assert!(uploaded.body.contains(&decide_tools::html::escape(&b)));

    // A file that is not text is refused by its name, as `decide` refuses such a profile.
    let mut bytes = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"first_file\"; filename=\"bad.yaml\"\r\n\r\nname: "
    )
    .into_bytes();
    bytes.extend([0xff, b'\r', b'\n']);
    bytes.extend(format!("--{boundary}--\r\n").bytes());
    let request = Request::post("/compare")
        .header(
            header::CONTENT_TYPE,
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(Body::from(bytes))
        .unwrap();
    let refused = send(site, request).await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    assert!(refused.body.contains("bad.yaml"), "{}", refused.body);
    assert!(refused.body.contains("not valid UTF-8"), "{}", refused.body);
}

/// The compare form posted with two profiles.
fn compare(first: &str, second: &str, lang: &str) -> Request<Body> {
    form_post(
        "/compare",
        &[
            ("first", first),
            ("second", second),
            ("lang", lang),
            ("as_of", AS_OF),
        ],
    )
}

#[tokio::test]
async fn two_profiles_are_compared_side_by_side_with_where_their_answers_part() {
    let answer = get(site(), "/compare?lang=zh").await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_a_page_of_the_site(&answer, "zh");

    let (a, b) = (example("lora-7b-4090.yaml"), example("qlora-70b-4090.yaml"));
    let site = site();
    let answer = send(site.clone(), compare(&a, &b, "en")).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    assert_a_page_of_the_site(&answer, "en");
    // The form keeps both profiles.
    assert!(answer.body.contains(&decide_tools::html::escape(&a)));
    // What the engine finds, shown row by row.
    let graph = Graph::compile_in(Policy::embedded().unwrap().at(date()), Lang::En).unwrap();
    let c = decide_tools::diff::profiles(
        &graph,
        &Source::new("a", a.as_str()),
        &Source::new("b", b.as_str()),
        date(),
    )
    .unwrap();
    assert!(
        c.fields
            .iter()
            .any(|(path, ..)| path == "workload.model_params_b")
    );
    for (path, ..) in &c.fields {
        assert!(
            answer.body.contains(&format!("<code>{path}</code>")),
            "{path}"
        );
    }
    let starts = c.diff.first_differences();
    assert!(!starts.is_empty());
    for (at, ..) in &starts {
        assert!(
            answer.body.contains(&decide_tools::html::escape(at)),
            "{at} is not shown"
        );
    }
    // The answers as the memo words them: the offers by title, never by id; the record's
    // other figures and the graph's nodes folded away for the engineer.
    for offer in [&c.diff.old.offer, &c.diff.new.offer] {
        assert!(
            !answer.body.contains(&format!("<td>{offer}</td>")),
            "{offer} by its id"
        );
    }
    let title = |id: &str| {
        let offer = graph
            .policy()
            .offers
            .iter()
            .find(|o| o.item.id == id)
            .unwrap();
        let title = decide_engine::lang::localize(&offer.item.fields["title"], Lang::En);
        title.as_str().unwrap().to_owned()
    };
    for offer in [&c.diff.old.offer, &c.diff.new.offer] {
        let title = decide_tools::html::escape(&title(offer));
        assert!(answer.body.contains(&format!(">{title}</td>")), "{title}");
    }
    assert!(answer.body.contains("RTX 4090 24G"), "{}", answer.body);
    assert!(answer.body.contains("Contract total"));
    let folded = answer
        .body
        .find("<details>")
        .expect("the engineer's part is folded");
    assert!(answer.body[..folded].contains("What differs in the profiles"));
    for (at, ..) in &starts {
        let shown = answer.body.find(&decide_tools::html::escape(at)).unwrap();
        assert!(shown > folded, "{at} is shown before the fold");
    }
    // The two memos, as the engine writes them.
    let memos = framed_all(&site, &answer.body).await;
    assert_eq!(
        memos,
        [
            engine(&a, Format::Html, Lang::En),
            engine(&b, Format::Html, Lang::En)
        ]
    );

    // A profile compared with itself: nothing differs.
    let answer = send(site, compare(&a, &a, "en")).await;
    assert_eq!(answer.status, StatusCode::OK);
    assert!(answer.body.contains("The two profiles say the same"));
    assert!(
        answer
            .body
            .contains("No value in the decision graph differs.")
    );
}

#[tokio::test]
async fn a_profile_that_does_not_read_is_a_422_naming_which_one() {
    let a = example("lora-7b-4090.yaml");
    let bad = a.replace("lora_finetune", "lora_finetuning");
    assert_ne!(a, bad);
    let answer = send(site(), compare(&a, &bad, "en")).await;
    assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
    let alert = &answer.body[answer.body.find("role=\"alert\">").unwrap()..];
    assert!(alert.contains("Second profile"), "{alert}");
    assert!(alert.contains("lora_finetuning"), "{alert}");
    // The form keeps what was posted.
    assert!(answer.body.contains(&decide_tools::html::escape(&bad)));
    let answer = send(site(), compare(&a, "  ", "zh")).await;
    assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(answer.body.contains("请在两个框中各粘贴一份工作负载描述"));
    let answer = send(
        site(),
        compare(&a, &a, "en").map(|_| Body::from("first=a&first=b&second=c")),
    )
    .await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_panic_is_a_500_with_only_an_id_and_its_cause_in_the_log() {
    let logged = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = logged.clone();
    let site = site_with(Settings {
        log: Arc::new(move |line| sink.lock().unwrap().push(line.to_owned())),
        pdf: Some(Arc::new(|_: &str, _: &dyn Fn() -> bool| {
            panic!("the printer broke")
        })),
        ..Settings::default()
    });
    let answer = send(site, form_post("/download/memo.pdf", &SERVICE)).await;
    assert_eq!(answer.status, StatusCode::INTERNAL_SERVER_ERROR);
    let error = &answer.json()["error"];
    let id = error["id"].as_str().unwrap();
    assert!(!answer.body.contains("printer broke"), "{}", answer.body);
    let logged = logged.lock().unwrap();
    assert!(
        logged
            .iter()
            .any(|l| l.contains(id) && l.contains("the printer broke")),
        "{logged:?}"
    );
}

#[tokio::test]
async fn a_request_over_the_time_limit_is_a_503_and_its_print_is_stopped() {
    let (told, stopped) = std::sync::mpsc::channel();
    let site = site_with(Settings {
        // Time to decide (well within it, on a loaded machine too), not to print for 20 s.
        request_timeout: std::time::Duration::from_secs(3),
        pdf: Some(Arc::new(move |_: &str, stop: &dyn Fn() -> bool| {
            let start = std::time::Instant::now();
            while start.elapsed() < std::time::Duration::from_secs(20) {
                if stop() {
                    let _ = told.send(start.elapsed());
                    return Err("stopped".into());
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Ok(b"%PDF-1.7 too late".to_vec())
        })),
        ..Settings::default()
    });
    let answer = send(site, form_post("/download/memo.pdf", &SERVICE)).await;
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE);
    // The print whose request timed out is told to stop, not left to run its 20 s.
    let ran = stopped
        .recv_timeout(std::time::Duration::from_secs(5))
        .expect("the print was stopped");
    assert!(ran < std::time::Duration::from_secs(5), "{ran:?}");
}

#[tokio::test]
async fn text_of_the_request_is_never_searched_for_placeholders() {
    // `{{profile}}` in the date of the paste form: one copy of it comes back, as posted.
    let posted = form_post(
        "/paste",
        &[
            ("profile", "name: x"),
            ("as_of", &"{{profile}}".repeat(1000)),
            ("lang", "zh"),
        ],
    );
    let page = send(site(), posted).await;
    assert_eq!(page.status, StatusCode::BAD_REQUEST);
    assert!(page.body.len() < 60_000, "{} bytes", page.body.len());
    assert_eq!(page.body.matches("{{profile}}").count(), 1000);
    assert_a_page_of_the_site(
        &Answer {
            body: page.body.replace("{{profile}}", ""),
            ..page
        },
        "zh",
    );
}

#[tokio::test]
async fn a_date_with_nothing_on_offer_is_said_on_each_page_not_as_json() {
    let profile = example("lora-7b-4090.yaml");
    let early = "2020-01-01";
    let paste = send(
        site(),
        form_post("/paste", &[("profile", &profile), ("as_of", early)]),
    )
    .await;
    let compare = send(
        site(),
        form_post(
            "/compare",
            &[("first", &profile), ("second", &profile), ("as_of", early)],
        ),
    )
    .await;
    let mut answers = SERVICE.to_vec();
    answers.push(("_as_of", early));
    let questionnaire = send(site(), form_post("/", &answers)).await;
    let download = send(site(), form_post("/download/memo.md", &answers)).await;
    for (what, page) in [
        ("paste", paste),
        ("compare", compare),
        ("questionnaire", questionnaire),
        ("download", download),
    ] {
        assert_eq!(
            page.status,
            StatusCode::BAD_REQUEST,
            "{what}: {}",
            page.body
        );
        assert_eq!(page.content_type, "text/html; charset=utf-8", "{what}");
        assert!(page.body.contains("2020-01-01"), "{what}: {}", page.body);
    }
}

#[tokio::test]
async fn an_upload_over_the_limit_is_a_413_and_one_that_is_no_form_a_400() {
    let big = format!("name: x\n# {}\n", "x".repeat(2 * 1024 * 1024));
    assert_eq!(
        send(site(), upload(&big, "en")).await.status,
        StatusCode::PAYLOAD_TOO_LARGE
    );
    let answer = post(site(), "/upload", "profile=x").await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert_eq!(answer.json()["error"]["kind"], "usage");
}

/// `request` with `headers` added.
fn with(mut request: Request<Body>, headers: &[(&str, &str)]) -> Request<Body> {
    for (name, value) in headers {
        request.headers_mut().insert(
            header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
    }
    request
}

#[tokio::test]
async fn no_page_of_another_site_may_post_and_a_local_server_answers_local_names_only() {
    let local = site_with(Settings {
        local_only: true,
        ..Settings::default()
    });
    let profile = example("lora-7b-4090.yaml");
    let decide = || {
        Request::post("/api/decide")
            .body(Body::from(profile.clone()))
            .unwrap()
    };
    for from in ["cross-site", "same-site"] {
        let answer = send(site(), with(decide(), &[("sec-fetch-site", from)])).await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{from}");
    }
    for from in ["same-origin", "none"] {
        let answer = send(site(), with(decide(), &[("sec-fetch-site", from)])).await;
        assert_eq!(answer.status, StatusCode::OK, "{from}");
    }
    // A post that names a foreign `Origin` and no `Sec-Fetch-Site` is refused too; one from
    // the server's own origin, or a script's without either, is not.
    for origin in ["http://evil.example", "null", "http://127.0.0.1:9999"] {
        let answer = send(
            site(),
            with(decide(), &[("origin", origin), ("host", "127.0.0.1:8080")]),
        )
        .await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{origin}");
    }
    let answer = send(
        site(),
        with(
            decide(),
            &[
                ("origin", "http://127.0.0.1:8080"),
                ("host", "127.0.0.1:8080"),
            ],
        ),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    let answer = send(site(), with(decide(), &[("host", "127.0.0.1:8080")])).await;
    assert_eq!(answer.status, StatusCode::OK);
    // A link from another site may still open a page.
    let answer = send(
        site(),
        with(
            Request::get("/offers").body(Body::empty()).unwrap(),
            &[("sec-fetch-site", "cross-site")],
        ),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    // A name rebound to 127.0.0.1 is refused; the loopback names are not.
    for host in ["evil.example", "evil.example:8080", "192.168.1.5:8080"] {
        let answer = send(
            local.clone(),
            with(
                Request::get("/api/offers").body(Body::empty()).unwrap(),
                &[("host", host)],
            ),
        )
        .await;
        assert_eq!(answer.status, StatusCode::FORBIDDEN, "{host}");
    }
    for host in ["localhost:8080", "127.0.0.1:8080", "[::1]:8080"] {
        let answer = send(
            local.clone(),
            with(
                Request::get("/healthz").body(Body::empty()).unwrap(),
                &[("host", host)],
            ),
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK, "{host}");
    }
    // Without local_only, any name is answered.
    let answer = send(
        site(),
        with(
            Request::get("/healthz").body(Body::empty()).unwrap(),
            &[("host", "evil.example")],
        ),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
}

#[tokio::test]
async fn a_token_link_leads_to_this_server_only_and_the_scheme_is_any_case() {
    let site = site_with(Settings {
        token: Some("s3cret".to_owned()),
        ..Settings::default()
    });
    let answer = get(site.clone(), "//evil.example/x?token=s3cret").await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER);
    assert_eq!(answer.headers[header::LOCATION], "/evil.example/x");
    // With the cookie already set, the link still drops the token from the address.
    let answer = send(
        site.clone(),
        with(
            Request::get("/offers?token=s3cret")
                .body(Body::empty())
                .unwrap(),
            &[("cookie", "decide_token=s3cret")],
        ),
    )
    .await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER);
    assert_eq!(answer.headers[header::LOCATION], "/offers");
    for auth in ["bearer s3cret", "BEARER s3cret"] {
        let answer = send(
            site.clone(),
            with(
                Request::get("/healthz").body(Body::empty()).unwrap(),
                &[("authorization", auth)],
            ),
        )
        .await;
        assert_eq!(answer.status, StatusCode::OK, "{auth}");
    }
}

#[tokio::test]
async fn an_html_memo_from_the_api_carries_the_content_security_policy() {
    let answer = post(
        site(),
        &format!("/api/decide?format=html&as_of={AS_OF}"),
        example("lora-7b-4090.yaml"),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert!(answer.headers.contains_key(header::CONTENT_SECURITY_POLICY));
}

/// Whatever a request carries, no page answers with a 500, and no text of the request comes
/// back as markup: a tag hidden in any field, parameter or path is always escaped.
mod any_input {
    use proptest::prelude::*;

    use super::*;

    /// A tag that must never come back as it is.
    const TAG: &str = "<b id=zz>";

    /// Text people and attackers type: words, numbers, YAML and template punctuation, Chinese,
    /// and the tag somewhere in it.
    fn text() -> impl Strategy<Value = String> {
        (
            proptest::collection::vec(
                prop_oneof![
                    Just("{{profile}}".to_owned()),
                    Just("{{w.title}}".to_owned()),
                    Just("2026-09-04".to_owned()),
                    Just("workload:\n  task: inference\n".to_owned()),
                    Just("5万".to_owned()),
                    Just("\"'&%;".to_owned()),
                    "[a-z0-9 _.:-]{0,12}",
                ],
                0..6,
            ),
            any::<prop::sample::Index>(),
        )
            .prop_map(|(mut parts, at)| {
                let i = at.index(parts.len() + 1);
                parts.insert(i, TAG.to_owned());
                parts.concat()
            })
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap()
    }

    fn check(answer: &Answer, what: &str) {
        assert!(
            answer.status != StatusCode::INTERNAL_SERVER_ERROR,
            "{what}: {}",
            answer.body
        );
        assert!(
            !answer.body.contains(TAG),
            "{what}: the tag came back as markup ({})",
            answer.status
        );
    }

    fn encoded(text: &str) -> String {
        form_urlencoded::byte_serialize(text.as_bytes()).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        #[test]
        fn pages_asked_anything(node in text(), date in text(), lang in text(), path in text()) {
            let rt = runtime();
            for uri in [
                format!("/graph?node={}&lang={}", encoded(&node), encoded(&lang)),
                format!("/offers?as_of={}&lang={}", encoded(&date), encoded(&lang)),
                format!("/compare?as_of={}", encoded(&date)),
                format!("/paste?lang={}", encoded(&lang)),
                format!("/?_lang={}&_as_of={}", encoded(&lang), encoded(&date)),
                format!("/graph/{}", encoded(&path)),
                format!("/{}", encoded(&path)),
            ] {
                let answer = rt.block_on(get(site(), &uri));
                check(&answer, &uri);
            }
        }

        #[test]
        fn forms_posted_anything(first in text(), second in text(), date in text(), value in text()) {
            let rt = runtime();
            let mut answers: Vec<(&str, &str)> = SERVICE.to_vec();
            answers.push(("usage.gpus", &value));
            answers.push(("_as_of", &date));
            answers.push(("_base", &second));
            for (uri, pairs) in [
                ("/compare", vec![("first", first.as_str()), ("second", second.as_str()), ("as_of", date.as_str())]),
                ("/paste", vec![("profile", first.as_str()), ("as_of", date.as_str()), ("format", value.as_str())]),
                ("/", answers.clone()),
                ("/download/memo.md", answers.clone()),
                ("/", vec![("name", first.as_str()), ("workload.model_params_b", value.as_str())]),
            ] {
                let answer = rt.block_on(send(site(), form_post(uri, &pairs)));
                check(&answer, uri);
            }
            let answer = rt.block_on(send(site(), upload(&first, &value)));
            check(&answer, "/upload");
        }
    }
}

/// A server on a loopback port, in this process, with `settings`; stopped by the sender.
async fn serving(
    settings: Settings,
) -> (
    std::net::SocketAddr,
    Arc<Site>,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let site = site_with(settings);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(decide_serve::serve(listener, site.clone(), async {
        let _ = stopped.await;
    }));
    (addr, site, stop, server)
}

/// What a connection hears back within `wait` (all of it, up to the server's hanging up).
async fn heard(stream: &mut tokio::net::TcpStream, wait: std::time::Duration) -> String {
    use tokio::io::AsyncReadExt;
    let mut heard = Vec::new();
    let mut chunk = [0u8; 4096];
    let _ = tokio::time::timeout(wait, async {
        loop {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    heard.extend_from_slice(&chunk[..n]);
                    if heard.windows(4).any(|w| w == b"\r\n\r\n") {
                        break;
                    }
                }
            }
        }
    })
    .await;
    String::from_utf8_lossy(&heard).into_owned()
}

/// A connection that has sent the headers of a post of a profile, and none of its body.
async fn stalled_post(addr: std::net::SocketAddr) -> tokio::net::TcpStream {
    use tokio::io::AsyncWriteExt;
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(
            b"POST /api/decide HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5000\r\n\r\nname: ",
        )
        .await
        .unwrap();
    stream
}

/// `GET /healthz` on a new connection: the status line heard, and how long it took.
async fn health(addr: std::net::SocketAddr) -> (String, std::time::Duration) {
    use tokio::io::AsyncWriteExt;
    let start = std::time::Instant::now();
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let answer = heard(&mut stream, std::time::Duration::from_secs(10)).await;
    (
        answer.lines().next().unwrap_or_default().to_owned(),
        start.elapsed(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_bodies_hold_the_server_for_no_one_else_and_are_cut_off() {
    use std::time::Duration;
    let (addr, _, stop, server) = serving(Settings {
        body_timeout: Duration::from_millis(800),
        max_bodies_per_client: 4,
        max_connections_per_client: 8,
        ..Settings::default()
    })
    .await;
    // Four posts whose bodies never come: as many as one client may have reading at once.
    let mut stalled = Vec::new();
    for _ in 0..4 {
        stalled.push(stalled_post(addr).await);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    // A fifth is turned away at once, with when to come back; the server still answers.
    let mut fifth = stalled_post(addr).await;
    let refused = heard(&mut fifth, Duration::from_secs(5)).await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(
        refused.to_ascii_lowercase().contains("retry-after: 5"),
        "{refused}"
    );
    let (status, took) = health(addr).await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert!(took < Duration::from_secs(2), "{took:?}");
    // The stalled ones are answered 408 and closed once their body's time is up, not 30 s.
    for mut stream in stalled {
        let answer = heard(&mut stream, Duration::from_secs(5)).await;
        assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
        assert!(
            answer.to_ascii_lowercase().contains("connection: close"),
            "{answer}"
        );
    }
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .unwrap()
        .unwrap();

    // More connections than a client may open: the ninth is answered 503 and closed (on a
    // server of its own, so that no connection above is still being closed).
    let (addr, _, stop, server) = serving(Settings {
        max_connections_per_client: 8,
        ..Settings::default()
    })
    .await;
    let mut open = Vec::new();
    for _ in 0..8 {
        open.push(tokio::net::TcpStream::connect(addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut ninth = tokio::net::TcpStream::connect(addr).await.unwrap();
    let refused = heard(&mut ninth, Duration::from_secs(5)).await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(refused.contains("too many connections"), "{refused}");
    drop(open);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (status, _) = health(addr).await;
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_and_pages_are_answered_while_every_decision_is_taken() {
    use std::time::Duration;
    // One piece of work at a time and a queue full of comparisons: the health check and the
    // script do not queue.
    let (addr, site, stop, server) = serving(Settings {
        max_in_flight: 1,
        queue_wait: Duration::from_millis(200),
        ..Settings::default()
    })
    .await;
    let (a, b) = (example("lora-7b-4090.yaml"), example("qlora-70b-4090.yaml"));
    let mut work = Vec::new();
    for _ in 0..24 {
        let site = site.clone();
        let request = compare(&a, &b, "en");
        work.push(tokio::spawn(
            async move { send(site, request).await.status },
        ));
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    for _ in 0..5 {
        let (status, took) = health(addr).await;
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        assert!(took < Duration::from_secs(2), "{took:?}");
    }
    let script = get(site.clone(), "/assets/form.js").await;
    assert_eq!(script.status, StatusCode::OK);
    // Those that waited past the queue's bound were told to come back, and the rest decided.
    let mut statuses = Vec::new();
    for w in work {
        statuses.push(w.await.unwrap());
    }
    assert!(
        statuses.contains(&StatusCode::SERVICE_UNAVAILABLE),
        "{statuses:?}"
    );
    assert!(statuses.contains(&StatusCode::OK), "{statuses:?}");
    assert!(
        statuses
            .iter()
            .all(|s| *s == StatusCode::OK || *s == StatusCode::SERVICE_UNAVAILABLE),
        "{statuses:?}"
    );
    stop.send(()).unwrap();
    server.await.unwrap();
}

/// A printer that takes `hold` unless told to stop, counting the prints at once.
fn slow_printer(
    hold: std::time::Duration,
    at_once: Arc<std::sync::atomic::AtomicUsize>,
    most: Arc<std::sync::atomic::AtomicUsize>,
    stopped: std::sync::mpsc::Sender<()>,
) -> (decide_serve::Printer, Arc<tokio::sync::Notify>) {
    use std::sync::atomic::Ordering;
    let stopped = Mutex::new(stopped);
    let started = Arc::new(tokio::sync::Notify::new());
    let starting = started.clone();
    let printer: decide_serve::Printer = Arc::new(move |_: &str, stop: &dyn Fn() -> bool| {
        starting.notify_one();
        let now = at_once.fetch_add(1, Ordering::SeqCst) + 1;
        most.fetch_max(now, Ordering::SeqCst);
        let start = std::time::Instant::now();
        let mut outcome = Ok(b"%PDF-1.7 slow".to_vec());
        while start.elapsed() < hold {
            if stop() {
                let _ = stopped.lock().unwrap().send(());
                outcome = Err("stopped".into());
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        at_once.fetch_sub(1, Ordering::SeqCst);
        outcome
    });
    (printer, started)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pdfs_are_printed_by_a_small_pool_and_the_rest_told_to_come_back() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;
    let (at_once, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (told, _stopped) = std::sync::mpsc::channel();
    let (printer, _) = slow_printer(Duration::from_millis(1500), at_once, most.clone(), told);
    let site = site_with(Settings {
        max_prints: 2,
        print_wait: Duration::from_millis(300),
        pdf: Some(printer),
        ..Settings::default()
    });
    let mut downloads = Vec::new();
    for _ in 0..8 {
        let site = site.clone();
        downloads.push(tokio::spawn(async move {
            send(site, form_post("/download/memo.pdf", &SERVICE)).await
        }));
    }
    let mut pdfs = 0;
    for d in downloads {
        let answer = d.await.unwrap();
        if answer.status == StatusCode::OK {
            pdfs += 1;
        } else {
            assert_eq!(
                answer.status,
                StatusCode::SERVICE_UNAVAILABLE,
                "{}",
                answer.body
            );
            assert_eq!(answer.headers[header::RETRY_AFTER], "5");
            assert!(
                answer.body.contains("try again in a few seconds"),
                "{}",
                answer.body
            );
        }
    }
    assert_eq!(
        most.load(Ordering::SeqCst),
        2,
        "never more than two browsers at once"
    );
    assert_eq!(pdfs, 2, "two printed; six told to come back");
}

#[tokio::test]
async fn a_print_that_fails_tells_the_client_what_to_do_and_the_log_why() {
    let logged = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = logged.clone();
    let site = site_with(Settings {
        log: Arc::new(move |line| sink.lock().unwrap().push(line.to_owned())),
        pdf: Some(Arc::new(|_: &str, _: &dyn Fn() -> bool| {
            Err("--format pdf: the browser /usr/bin/chromium failed: it printed no PDF \
                 (exit status: 1)\nit said:\n[1203:ERROR] cannot open /tmp/decide-pdf-Xy12/memo.html"
                .to_owned())
        })),
        ..Settings::default()
    });
    let answer = send(site, form_post("/download/memo.pdf", &SERVICE)).await;
    assert_eq!(answer.status, StatusCode::INTERNAL_SERVER_ERROR);
    for detail in ["/usr/bin", "/tmp/", "chromium", "ERROR"] {
        assert!(!answer.body.contains(detail), "{detail}: {}", answer.body);
    }
    let error = &answer.json()["error"];
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("Download the memo as HTML"),
        "{error}"
    );
    let id = error["id"].as_str().unwrap();
    let logged = logged.lock().unwrap();
    assert!(
        logged
            .iter()
            .any(|l| l.contains(id) && l.contains("/tmp/decide-pdf-Xy12")),
        "{logged:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_the_server_stops_its_prints_at_once() {
    use std::sync::atomic::AtomicUsize;
    use std::time::{Duration, Instant};
    use tokio::io::AsyncWriteExt;
    let (told, stopped) = std::sync::mpsc::channel();
    let (printer, started) = slow_printer(
        Duration::from_secs(60),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicUsize::new(0)),
        told,
    );
    let (addr, _, stop, server) = serving(Settings {
        pdf: Some(printer),
        ..Settings::default()
    })
    .await;
    let body = form_body(&SERVICE);
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(
            format!(
                "POST /download/memo.pdf HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    // Once the print has started, the server is told to stop.
    tokio::time::timeout(Duration::from_secs(30), started.notified())
        .await
        .expect("the print started");
    let start = Instant::now();
    stop.send(()).unwrap();
    let answer = heard(&mut stream, Duration::from_secs(10)).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    stopped
        .recv_timeout(Duration::from_secs(5))
        .expect("the print was stopped");
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("the server stopped within seconds, not the print's minute")
        .unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
}

/// `pairs` as a form posts them.
fn form_body(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(name, value)| form_urlencoded_pair(name, value))
        .collect::<Vec<_>>()
        .join("&")
}

/// `name=value`, percent-encoded as a form posts it.
fn form_urlencoded_pair(name: &str, value: &str) -> String {
    let mut pair = String::new();
    for (i, text) in [name, value].into_iter().enumerate() {
        if i == 1 {
            pair.push('=');
        }
        for b in text.bytes() {
            if b.is_ascii_alphanumeric() {
                pair.push(b as char);
            } else {
                write!(pair, "%{b:02X}").unwrap();
            }
        }
    }
    pair
}
