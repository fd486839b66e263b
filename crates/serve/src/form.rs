//! The questionnaire page: the policy's questions (`rules/questions.yaml`) as a form in English
//! or Chinese, the memo beside it following the answers, downloads of the memo, the record and
//! the profile, and a profile file uploaded to fill the form.
//!
//! Which questions show, what an answer may be and what an empty one means are the engine's
//! (`decide_tools::questionnaire::form`), as `decide init` asks them. The page is a plain form that
//! posts back to itself and is answered with the same page, so it works with scripts off; with
//! them on, `assets/form.js` posts the answers as they are typed and copies over what changed.

use std::fmt::Write as _;
use std::sync::Arc;

use axum::Form;
use axum::extract::rejection::{FormRejection, QueryRejection};
use axum::extract::{Multipart, Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use decide_engine::profile::Syntax;
use decide_engine::{Lang, Source};
use decide_tools::Format;
use decide_tools::html::escape;
use decide_tools::questionnaire::form::{self as answers, Answer, Filled, NO, Posted, YES};
use decide_tools::questionnaire::{self, Prompt, QuestionKind, Texts};
use jiff::civil::Date;
use serde::Deserialize;
use serde_json::Value as J;

use crate::page::{self, lang, nav, word};
use crate::reply;
use crate::site::Site;

const PAGE: &str = include_str!("../assets/form.html");
const SCRIPT: &str = include_str!("../assets/form.js");

/// The page's own fields: they start with `_`, which no profile field does.
const LANG: &str = "_lang";
const AS_OF: &str = "_as_of";
const BASE: &str = "_base";

/// The files a page offers to download: (name, format); `profile.yaml` is the profile itself.
const FILES: [(&str, &str); 5] = [
    ("memo.md", "memo_md"),
    ("memo.html", "memo_html"),
    ("memo.pdf", "memo_pdf"),
    ("record.json", "record_json"),
    ("profile.yaml", "profile_yaml"),
];

/// `GET /`'s parameters.
#[derive(Debug, Deserialize)]
pub(crate) struct Params {
    lang: Option<String>,
    as_of: Option<String>,
}

/// What a request asks of the page: the language, the date, and the answers over a profile.
struct Asked {
    lang: Lang,
    as_of: Option<Date>,
    as_of_text: String,
    base: J,
    posted: Posted,
}

impl Asked {
    /// The page's fields and the answers, from the form's pairs.
    fn read(pairs: Vec<(String, String)>) -> Asked {
        let mut posted = Posted::new();
        let mut asked = Asked {
            lang: Lang::En,
            as_of: None,
            as_of_text: String::new(),
            base: J::Null,
            posted: Posted::new(),
        };
        for (name, value) in pairs {
            match name.as_str() {
                LANG => asked.lang = lang(&value),
                AS_OF => asked.set_date(&value),
                BASE => asked.base = serde_json::from_str(&value).unwrap_or(J::Null),
                _ => posted.entry(name).or_default().push(value),
            }
        }
        asked.posted = posted;
        asked
    }

    fn set_date(&mut self, text: &str) {
        self.as_of = crate::api::date(text.trim()).ok();
        self.as_of_text = if self.as_of.is_some() {
            text.trim().to_owned()
        } else {
            String::new()
        };
    }
}

/// The answers read and what they decide.
struct Worked {
    texts: Texts,
    prompts: Vec<Prompt>,
    filled: Filled,
    /// The profile the answers give, as `decide init` writes it.
    yaml: String,
    /// The output asked for, or why the profile is refused; none while questions are unanswered.
    decided: Option<decide_engine::Result<Vec<u8>>>,
}

/// What to make of complete answers.
#[derive(Clone, Copy)]
enum Output {
    Memo(Format),
    Pdf,
}

/// Reads the answers and, where they are complete, decides the profile they give.
fn work(site: &Site, asked: &Asked, output: Output) -> Result<Worked, String> {
    let policy = site.policy();
    let texts = Texts::new(policy, asked.lang)
        .ok_or_else(|| "the rules have no `questionnaire:` section".to_owned())?;
    let prompts = questionnaire::prompts(policy, asked.lang);
    let filled = answers::fill(&prompts, &texts, &asked.posted, &asked.base)?;
    let yaml = questionnaire::to_yaml(&filled.profile, &texts);
    let decided = filled.complete().then(|| {
        let date = site.as_of(asked.as_of);
        let format = match output {
            Output::Memo(format) => format,
            Output::Pdf => Format::Html,
        };
        // A PDF is printed from the HTML memo afterwards, at a printer of its own (crate::print).
        site.decide(
            yaml.clone().into_bytes(),
            Syntax::Yaml,
            format,
            asked.lang,
            date,
        )
        .map(String::into_bytes)
    });
    Ok(Worked {
        texts,
        prompts,
        filled,
        yaml,
        decided,
    })
}

/// `GET /`: the questions with their defaults, in the language asked.
pub(crate) async fn show(
    State(site): State<Arc<Site>>,
    params: Result<Query<Params>, QueryRejection>,
) -> Response {
    let mut pairs = Vec::new();
    if let Ok(Query(params)) = params {
        pairs.extend(params.lang.map(|l| (LANG.to_owned(), l)));
        pairs.extend(params.as_of.map(|d| (AS_OF.to_owned(), d)));
    }
    answer_page(&site, Asked::read(pairs), None).await
}

/// `POST /`: the page for the answers posted.
pub(crate) async fn answer(
    State(site): State<Arc<Site>>,
    form: Result<Form<Vec<(String, String)>>, FormRejection>,
) -> Response {
    match form {
        Ok(Form(pairs)) => answer_page(&site, Asked::read(pairs), None).await,
        Err(e) => crate::api::form_refused(&e, "post the page's form"),
    }
}

/// `POST /download/FILE`: the memo, the record or the profile the posted answers give, as a
/// file; the page again (422) while they are incomplete or refused.
pub(crate) async fn download(
    State(site): State<Arc<Site>>,
    Path(file): Path<String>,
    form: Result<Form<Vec<(String, String)>>, FormRejection>,
) -> Response {
    let asked = match form {
        Ok(Form(pairs)) => Asked::read(pairs),
        Err(e) => return crate::api::form_refused(&e, "post the page's form"),
    };
    let (output, content_type) = match file.as_str() {
        "memo.md" => (
            Output::Memo(Format::Markdown),
            "text/markdown; charset=utf-8",
        ),
        "memo.html" => (Output::Memo(Format::Html), "text/html; charset=utf-8"),
        "record.json" | "profile.yaml" => (Output::Memo(Format::Json), "application/json"),
        "memo.pdf" if site.settings().pdf.is_some() => (Output::Pdf, "application/pdf"),
        _ => return reply::not_found().await,
    };
    // A printer is waited for before anything is decided, so that a PDF nobody can print now
    // costs no decision.
    let turn = match output {
        Output::Pdf => match crate::print::turn(&site, asked.lang).await {
            Ok(turn) => Some(turn),
            Err(response) => return response,
        },
        Output::Memo(_) => None,
    };
    let (mut worked, asked) = match on_blocking_pool(&site, asked, output).await {
        Ok(both) => both,
        Err(response) => return response,
    };
    if let (Some(turn), Some(Ok(html))) = (turn, &mut worked.decided) {
        let html = String::from_utf8(std::mem::take(html)).unwrap_or_default();
        match crate::print::pdf(&site, turn, html, asked.lang).await {
            Ok(pdf) => worked.decided = Some(Ok(pdf)),
            Err(response) => return response,
        }
    }
    match &worked.decided {
        Some(Ok(bytes)) => {
            let (bytes, content_type) = if file == "profile.yaml" {
                (
                    worked.yaml.clone().into_bytes(),
                    "application/yaml; charset=utf-8",
                )
            } else {
                (bytes.clone(), content_type)
            };
            let mut response = bytes.into_response();
            response
                .headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
            reply::attachment(&mut response, &file);
            response
        }
        Some(Err(e)) if e.kind() == decide_engine::ErrorKind::Usage => render(
            &site,
            &asked,
            &worked,
            StatusCode::BAD_REQUEST,
            Some(&e.render()),
        ),
        Some(Err(e)) if e.kind() != decide_engine::ErrorKind::Profile => reply::failure(&site, e),
        _ => render(
            &site,
            &asked,
            &worked,
            StatusCode::UNPROCESSABLE_ENTITY,
            None,
        ),
    }
}

/// `POST /upload`: a profile file (multipart field `profile`) fills the form; fields no
/// question asks are kept with the answers.
pub(crate) async fn upload(
    State(site): State<Arc<Site>>,
    multipart: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> Response {
    let Ok(mut multipart) = multipart else {
        return upload_refused(StatusCode::BAD_REQUEST);
    };
    let mut text = None;
    let mut lang_code = String::new();
    loop {
        let field = match multipart.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(e) => return upload_refused(e.status()),
        };
        let name = field.name().unwrap_or_default().to_owned();
        let bytes = match field.bytes().await {
            Ok(bytes) => bytes,
            Err(e) => return upload_refused(e.status()),
        };
        match name.as_str() {
            "profile" => text = Some(bytes.to_vec()),
            LANG => lang_code = String::from_utf8_lossy(&bytes).into_owned(),
            _ => {}
        }
    }
    // The request's body is let go before the profile waits its turn: one copy of an upload
    // is held while it waits, not two.
    drop(multipart);
    let mut asked = Asked::read(vec![(LANG.to_owned(), lang_code)]);
    let Some(bytes) = text.filter(|t| !t.is_empty()) else {
        return answer_page(
            &site,
            asked,
            Some("choose a profile file (YAML or JSON) to load".into()),
        )
        .await;
    };
    // Up to a megabyte of YAML, read off the connections' threads.
    let read = crate::api::blocking(&site, move || {
        Source::from_profile_bytes("the uploaded profile", bytes).and_then(|source| {
            let value: J = source.parse_yaml(decide_engine::ErrorKind::Profile)?;
            decide_engine::Profile::from_source(&source).map(|_| value)
        })
    })
    .await;
    match read {
        Ok(Ok(profile)) => {
            let prompts = questionnaire::prompts(site.policy(), asked.lang);
            asked.posted = answers::posted_from(&prompts, &profile);
            asked.base = profile;
            answer_page(&site, asked, None).await
        }
        Ok(Err(e)) => answer_page(&site, asked, Some(e.render())).await,
        Err(response) => response,
    }
}

/// `GET /assets/form.js`: the script that keeps the memo following the answers.
pub(crate) async fn script() -> Response {
    let mut response = reply::text("text/javascript; charset=utf-8", SCRIPT.to_owned());
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// An upload that could not be read: over the size limit (413), else not a multipart form
/// with the file (400).
fn upload_refused(status: StatusCode) -> Response {
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        return crate::api::too_large("a profile is a page of YAML; upload one profile");
    }
    reply::refuse(
        StatusCode::BAD_REQUEST,
        "the upload could not be read",
        "post a form with `enctype=multipart/form-data` and the file as the field `profile`",
    )
}

fn rules_fault(site: &Site, why: &str) -> Response {
    reply::failure(
        site,
        &decide_engine::Error::new(decide_engine::ErrorKind::Rules, format!("question: {why}")),
    )
}

/// The page for `asked`, with `notice` (an upload that did not read) above the memo.
async fn answer_page(site: &Arc<Site>, asked: Asked, notice: Option<String>) -> Response {
    match on_blocking_pool(site, asked, Output::Memo(Format::Html)).await {
        Ok((worked, asked)) => {
            match &worked.decided {
                // A date with nothing on offer, say: the request's, said above the memo.
                Some(Err(e)) if e.kind() == decide_engine::ErrorKind::Usage => {
                    let said = e.render();
                    render(site, &asked, &worked, StatusCode::BAD_REQUEST, Some(&said))
                }
                Some(Err(e)) if e.kind() != decide_engine::ErrorKind::Profile => {
                    reply::failure(site, e)
                }
                _ => render(site, &asked, &worked, StatusCode::OK, notice.as_deref()),
            }
        }
        Err(response) => response,
    }
}

/// [`work`] off the I/O threads; a fault of the rules is a 500 with an id.
async fn on_blocking_pool(
    site: &Arc<Site>,
    asked: Asked,
    output: Output,
) -> Result<(Worked, Asked), Response> {
    let shared = Arc::clone(site);
    match crate::api::blocking(site, move || {
        work(&shared, &asked, output).map(|w| (w, asked))
    })
    .await?
    {
        Ok(both) => Ok(both),
        Err(why) => Err(rules_fault(site, &why)),
    }
}

/// The page: the questions as answered, the memo or what it waits for, the downloads.
fn render(
    site: &Site,
    asked: &Asked,
    worked: &Worked,
    status: StatusCode,
    notice: Option<&str>,
) -> Response {
    let lang = asked.lang;
    let mut questions = String::new();
    for (i, (prompt, answer)) in worked
        .prompts
        .iter()
        .zip(&worked.filled.answers)
        .enumerate()
    {
        question(&mut questions, i, prompt, answer, &worked.texts, lang);
    }
    let mut downloads = String::new();
    for (file, key) in FILES {
        if file == "memo.pdf" && site.settings().pdf.is_none() {
            continue;
        }
        let _ = write!(
            downloads,
            "<button type=\"submit\" formaction=\"/download/{file}\" data-file=\"{file}\">{}</button>",
            escape(&word(key, lang))
        );
    }
    if site.settings().pdf.is_none() {
        let _ = write!(
            downloads,
            "<p class=\"note\">{}</p>",
            escape(&word("no_pdf", lang))
        );
    }
    let (status_html, frame) = memo_pane(site, asked, worked, notice);
    let langs = page::lang_options(lang);
    let base = if asked.base.is_object() {
        escape(&asked.base.to_string())
    } else {
        String::new()
    };
    let html = page::fill(
        &page::fill_words(PAGE, lang),
        &[
            ("questions", &questions),
            ("downloads", &downloads),
            ("status", &status_html),
            ("frame", &frame),
            ("nav", &nav("/", lang)),
            ("langs", &langs),
            ("base", &base),
            ("as_of", &escape(&asked.as_of_text)),
            ("yaml", &escape(&worked.yaml)),
            ("policy", &escape(site.policy().meta.name.get(lang))),
            ("lang", lang.code()),
        ],
    );
    let mut response = (status, reply::text("text/html; charset=utf-8", html)).into_response();
    reply::secure(&mut response, reply::PAGE_POLICY);
    response
}

/// The memo pane's status line and the memo's frame.
fn memo_pane(
    site: &Site,
    asked: &Asked,
    worked: &Worked,
    notice: Option<&str>,
) -> (String, String) {
    let lang = asked.lang;
    let empty_frame =
        "<iframe title=\"memo\" sandbox=\"allow-same-origin\" hidden></iframe>".to_owned();
    if let Some(notice) = notice {
        return (
            format!(
                "<div class=\"status refused\" role=\"alert\">{}</div>",
                escape(notice)
            ),
            empty_frame,
        );
    }
    match &worked.decided {
        // The page links its memo, kept for it (crate::memos), rather than carrying it.
        Some(Ok(memo)) => (
            "<div class=\"status\"></div>".to_owned(),
            crate::memos::frame(
                &site.memos.keep(&String::from_utf8_lossy(memo)),
                &word("memo", lang),
                lang,
            ),
        ),
        Some(Err(e)) => (
            format!(
                "<div class=\"status refused\" role=\"alert\">{}\n\n{}</div>",
                escape(&word("refused", lang)),
                escape(&e.render())
            ),
            empty_frame,
        ),
        None => {
            let mut list = String::new();
            for (prompt, answer) in worked.prompts.iter().zip(&worked.filled.answers) {
                if answer.applies && answer.error.is_some() {
                    let _ = write!(list, "<li>{}</li>", escape(&prompt.ask));
                }
            }
            (
                format!(
                    "<div class=\"status\"><p>{}</p><ul>{list}</ul></div>",
                    escape(&word("to_answer", lang))
                ),
                empty_frame,
            )
        }
    }
}

/// One question: a fieldset, hidden and disabled (so nothing of it is posted) where it does
/// not apply.
fn question(
    out: &mut String,
    index: usize,
    prompt: &Prompt,
    answer: &Answer,
    texts: &Texts,
    lang: Lang,
) {
    let off = if answer.applies {
        ""
    } else {
        " hidden disabled"
    };
    let name = answers::name(prompt);
    let id = format!("q{index}");
    let _ = write!(
        out,
        "<fieldset class=\"q\" data-q=\"{index}\" data-field=\"{}\"{off}>",
        escape(&name)
    );
    let labelled = matches!(
        prompt.kind,
        QuestionKind::Text { .. } | QuestionKind::Number(_) | QuestionKind::Choice { .. }
    );
    if labelled {
        let _ = write!(
            out,
            "<label class=\"ask\" for=\"{id}\">{}</label>",
            escape(&prompt.ask)
        );
    } else {
        let _ = write!(out, "<legend>{}</legend>", escape(&prompt.ask));
    }
    if let Some(help) = &prompt.help {
        let _ = write!(out, "<p class=\"help\">{}</p>", escape(help));
    }
    inputs(out, &id, &name, prompt, answer, texts, lang);
    let message = match (&answer.error, &answer.understood) {
        (Some(error), _) if answer.posted => {
            format!("<p class=\"msg error\">{}</p>", escape(error))
        }
        (_, Some(understood)) => format!("<p class=\"msg understood\">{}</p>", escape(understood)),
        _ => "<p class=\"msg\"></p>".to_owned(),
    };
    out.push_str(&message);
    out.push_str("</fieldset>");
}

/// A question's inputs, showing the answer as it was given (or its default).
fn inputs(
    out: &mut String,
    id: &str,
    name: &str,
    prompt: &Prompt,
    answer: &Answer,
    texts: &Texts,
    lang: Lang,
) {
    let shown = |name: &str| answer.shown.get(name).cloned().unwrap_or_default();
    let first = |name: &str| shown(name).into_iter().next().unwrap_or_default();
    match &prompt.kind {
        QuestionKind::Text { .. } | QuestionKind::Number(_) => {
            let mode = if matches!(prompt.kind, QuestionKind::Number(_)) {
                " inputmode=\"decimal\""
            } else {
                ""
            };
            let _ = write!(
                out,
                "<input type=\"text\" id=\"{id}\" name=\"{}\" value=\"{}\"{mode} autocomplete=\"off\">",
                escape(name),
                escape(&first(name))
            );
        }
        QuestionKind::Flag { .. } | QuestionKind::Section => {
            let value = first(name);
            out.push_str("<div class=\"choices\">");
            for (v, key) in [(YES, "yes"), (NO, "no")] {
                let checked = if value == v { " checked" } else { "" };
                let _ = write!(
                    out,
                    "<label><input type=\"radio\" name=\"{}\" value=\"{v}\"{checked}> {}</label>",
                    escape(name),
                    escape(&word(key, lang))
                );
            }
            out.push_str("</div>");
        }
        QuestionKind::Choice { options, nullable } => {
            let value = first(name);
            let _ = write!(out, "<select id=\"{id}\" name=\"{}\">", escape(name));
            if *nullable {
                let selected = if value.is_empty() { " selected" } else { "" };
                let none = texts.say(|w| &w.none, &[]);
                let _ = write!(
                    out,
                    "<option value=\"\"{selected}>{}</option>",
                    escape(&none)
                );
            }
            for (v, label) in options {
                let selected = if *v == value { " selected" } else { "" };
                let _ = write!(
                    out,
                    "<option value=\"{}\"{selected}>{}</option>",
                    escape(v),
                    escape(label)
                );
            }
            out.push_str("</select>");
        }
        QuestionKind::Choices { options }
        | QuestionKind::Offers {
            offers: options, ..
        } => {
            let picked = shown(name);
            out.push_str("<div class=\"choices\">");
            for (v, label) in options {
                let checked = if picked.contains(v) { " checked" } else { "" };
                let hidden = match &answer.offers {
                    Some(allowed) if !allowed.contains(v) => " hidden",
                    _ => "",
                };
                let _ = write!(
                    out,
                    "<label data-offer=\"{}\"{hidden}><input type=\"checkbox\" name=\"{}\" value=\"{}\"{checked}> {}</label>",
                    escape(v),
                    escape(name),
                    escape(v),
                    escape(label)
                );
            }
            out.push_str("</div>");
        }
        QuestionKind::Hours { offers, .. } => {
            out.push_str("<div class=\"hours\">");
            for (offer, label) in offers {
                let field = answers::hours_name(prompt, offer);
                let _ = write!(
                    out,
                    "<label>{} <input type=\"text\" inputmode=\"decimal\" name=\"{}\" value=\"{}\" autocomplete=\"off\"></label>",
                    escape(label),
                    escape(&field),
                    escape(&first(&field))
                );
            }
            out.push_str("</div>");
        }
    }
}
