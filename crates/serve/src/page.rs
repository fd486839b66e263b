//! The site's page shell: its own words in English and Chinese (`assets/words.json`), the
//! links between its pages, and a page of the site around a body (`assets/page.html`) with the
//! content security policy every page carries.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::LazyLock;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use decide_engine::Lang;
use decide_tools::html::escape;

use crate::reply;

const SHELL: &str = include_str!("../assets/page.html");
/// What every page's style shares (the header, the links), put into each page's `<style>`:
/// the content security policy allows no style sheet from anywhere, the site's own included.
const SITE_CSS: &str = include_str!("../assets/site.css");

/// The page's own words (not the policy's): `assets/words.json`, each in English and Chinese.
pub(crate) static WORDS: LazyLock<BTreeMap<String, BTreeMap<String, String>>> =
    LazyLock::new(|| {
        serde_json::from_str(include_str!("../assets/words.json")).unwrap_or_default()
    });

/// The page's word `key` in `lang` (the key itself where the words file lacks it, which a test
/// rules out).
pub(crate) fn word(key: &str, lang: Lang) -> String {
    maybe_word(key, lang).unwrap_or_else(|| key.to_owned())
}

/// The page word `key` in `lang`, where the words have one (a word named by a value, such as
/// `deployment_mixed`).
pub(crate) fn maybe_word(key: &str, lang: Lang) -> Option<String> {
    WORDS.get(key).and_then(|w| w.get(lang.code())).cloned()
}

/// `template` with each `{{KEY}}` of `values` replaced by its value, in one pass: a value is
/// never searched again, so text from a request that holds `{{...}}` stays as it is.
/// Placeholders not in `values` are left.
pub(crate) fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let value = after.find("}}").and_then(|end| {
            let key = &after[..end];
            values
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| (*v, end))
        });
        if let Some((value, end)) = value {
            out.push_str(value);
            rest = &after[end + 2..];
        } else {
            out.push_str("{{");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// `html` with every `{{w.KEY}}` replaced by the page word `KEY` in `lang`, escaped, and the
/// site's shared style in place of `{{site_css}}`.
pub(crate) fn fill_words(html: &str, lang: Lang) -> String {
    let mut html = html.replace("{{site_css}}", SITE_CSS);
    for key in WORDS.keys() {
        html = html.replace(&format!("{{{{w.{key}}}}}"), &escape(&word(key, lang)));
    }
    html
}

/// `en` or `zh`; English for anything else.
pub(crate) fn lang(code: &str) -> Lang {
    Lang::ALL
        .into_iter()
        .find(|l| l.code() == code.trim())
        .unwrap_or(Lang::En)
}

/// The links to the site's pages, `here` marked as the current one.
pub(crate) fn nav(here: &str, lang: Lang) -> String {
    let mut out = String::from("<nav>");
    for (path, key) in [
        ("/", "questions"),
        ("/paste", "paste"),
        ("/offers", "offers"),
        ("/graph", "graph"),
        ("/compare", "compare"),
    ] {
        let current = if path == here {
            " aria-current=\"page\""
        } else {
            ""
        };
        let _ = write!(
            out,
            "<a href=\"{path}?lang={}\"{current}>{}</a>",
            lang.code(),
            escape(&word(key, lang))
        );
    }
    out.push_str("</nav>");
    out
}

/// A page of the site: the heading (the page word `title`), the links with `here` marked, and
/// `body` (HTML, already escaped where it holds text), with `status`.
pub(crate) fn render(
    status: StatusCode,
    here: &str,
    lang: Lang,
    title: &str,
    body: &str,
) -> Response {
    let html = fill(
        &fill_words(SHELL, lang),
        &[
            ("title", &escape(&word(title, lang))),
            ("nav", &nav(here, lang)),
            ("lang", lang.code()),
            ("body", body),
        ],
    );
    let mut response = (status, reply::text("text/html; charset=utf-8", html)).into_response();
    reply::secure(&mut response, reply::PAGE_POLICY);
    response
}

/// The `<option>`s of a language choice, `lang` selected.
pub(crate) fn lang_options(lang: Lang) -> String {
    let mut out = String::new();
    for l in Lang::ALL {
        let selected = if l == lang { " selected" } else { "" };
        let label = if l == Lang::En { "English" } else { "中文" };
        let _ = write!(
            out,
            "<option value=\"{}\"{selected}>{label}</option>",
            l.code()
        );
    }
    out
}

/// What a page's query string asks: a language and a date, each optional; anything else in it
/// is the page's own (`rest`).
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct Query {
    pub lang: Option<String>,
    pub as_of: Option<String>,
    #[serde(flatten)]
    pub rest: BTreeMap<String, String>,
}

impl Query {
    /// The query of a page's request; one that does not read (a parameter given twice) is
    /// taken as asking nothing, since a page always has something to show.
    pub(crate) fn of(
        query: Result<axum::extract::Query<Query>, axum::extract::rejection::QueryRejection>,
    ) -> Query {
        query.map(|q| q.0).unwrap_or_default()
    }

    /// The language asked (English for none or an unknown one).
    pub(crate) fn lang(&self) -> Lang {
        lang(self.lang.as_deref().unwrap_or_default())
    }

    /// The date asked, if any; `Err` with the words of the API's 400 for one that is not a date.
    pub(crate) fn as_of(&self) -> Result<Option<jiff::civil::Date>, String> {
        date(self.as_of.as_deref())
    }
}

/// The date a page's field or parameter gives, if any (blank is none); `Err` with the words of
/// the API's 400 for one that is not a date.
pub(crate) fn date(text: Option<&str>) -> Result<Option<jiff::civil::Date>, String> {
    match text.map(str::trim).filter(|d| !d.is_empty()) {
        None => Ok(None),
        Some(text) => crate::api::date(text).map(Some).map_err(|r| r.message),
    }
}

/// The language and date fields of a page's form, `lang` chosen and `as_of` filled in.
pub(crate) fn lang_and_date(lang: Lang, as_of: &str) -> String {
    fill(
        &fill_words(
            "<label>{{w.language}} <select name=\"lang\">{{langs}}</select></label>\
             <label>{{w.as_of}} <input type=\"date\" name=\"as_of\" value=\"{{as_of}}\"></label>",
            lang,
        ),
        &[("langs", &lang_options(lang)), ("as_of", &escape(as_of))],
    )
}

/// The small GET form atop a page: the language and the date, sent back to `action`.
pub(crate) fn settings(action: &str, lang: Lang, as_of: &str) -> String {
    format!(
        "<form class=\"settings\" method=\"get\" action=\"{action}\">{}<button type=\"submit\">{}</button></form>",
        lang_and_date(lang, as_of),
        escape(&word("show", lang))
    )
}

/// A refusal shown on the page (e.g. a date that is not one), above what the page can still show.
pub(crate) fn error_box(text: &str) -> String {
    format!("<div class=\"error\" role=\"alert\">{}</div>", escape(text))
}

#[cfg(test)]
mod tests {
    use super::fill;

    #[test]
    fn placeholders_are_filled_once_and_values_are_not_searched_again() {
        assert_eq!(
            fill("<p>{{a}} and {{b}}</p>", &[("a", "{{b}}"), ("b", "B")]),
            "<p>{{b}} and B</p>"
        );
        assert_eq!(fill("{{unknown}} {{a}", &[("a", "A")]), "{{unknown}} {{a}");
        assert_eq!(fill("{{a}}{{a}}", &[("a", "x")]), "xx");
    }
}
