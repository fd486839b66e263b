//! The memos the pages frame: a page carries a link to its memo (`/memo/KEY`), not the memo
//! itself escaped into an attribute, so that an answer is about the size of what it shows. A
//! memo is kept under the SHA-256 of its bytes, so the same memo is kept once and its link
//! tells nothing to whoever does not already have it; the store holds the latest
//! [`KEPT`] memos and at most [`KEPT_BYTES`] of them, whatever the traffic.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};

use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use decide_tools::html::escape;
use sha2::Digest as _;

use crate::page::{self, word};
use crate::reply;
use crate::site::Site;

/// The most memos kept.
pub(crate) const KEPT: usize = 256;

/// The most bytes of memos kept (a memo is some 100-300 KB).
pub(crate) const KEPT_BYTES: usize = 32 * 1024 * 1024;

/// What a framed memo may load: its inline styles and `data:` images, nothing else, and only
/// this server's pages may frame it.
pub(crate) const MEMO_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'";

/// The memos kept, the least recently kept or fetched first.
#[derive(Debug, Default)]
pub(crate) struct Memos {
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    memos: VecDeque<(String, Arc<str>)>,
    bytes: usize,
}

impl Memos {
    /// Keeps `memo` and says its key.
    pub(crate) fn keep(&self, memo: &str) -> String {
        let digest = sha2::Sha256::digest(memo.as_bytes());
        let mut key = String::with_capacity(64);
        for byte in digest {
            let _ = write!(key, "{byte:02x}");
        }
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(i) = kept.memos.iter().position(|(k, _)| *k == key) {
            let again = kept.memos.remove(i).expect("a kept memo");
            kept.memos.push_back(again);
            return key;
        }
        kept.bytes += memo.len();
        kept.memos.push_back((key.clone(), Arc::from(memo)));
        while kept.memos.len() > KEPT || (kept.bytes > KEPT_BYTES && kept.memos.len() > 1) {
            if let Some((_, gone)) = kept.memos.pop_front() {
                kept.bytes -= gone.len();
            }
        }
        key
    }

    /// The memo kept under `key`, if it still is.
    pub(crate) fn get(&self, key: &str) -> Option<Arc<str>> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.memos
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, memo)| memo.clone())
    }

    /// The bytes of memos kept now.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .bytes
    }
}

/// A frame showing the memo kept under `key`, titled `title`, sandboxed (the memo runs
/// nothing); `lang` is the language it says in when the memo is no longer kept.
pub(crate) fn frame(key: &str, title: &str, lang: decide_engine::Lang) -> String {
    format!(
        "<iframe title=\"{}\" sandbox=\"allow-same-origin\" src=\"/memo/{key}?lang={}\"></iframe>",
        escape(title),
        lang.code()
    )
}

/// `GET /memo/{key}`'s parameter: the language of the page that says a memo is no longer kept.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct Params {
    lang: Option<String>,
}

/// `GET /memo/{key}`: a memo a page framed, while it is kept; a short page saying to update
/// the form where it is not (a 404).
pub(crate) async fn show(
    State(site): State<Arc<Site>>,
    Path(key): Path<String>,
    params: Result<Query<Params>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Some(memo) = site.memos.get(&key) else {
        let lang = page::lang(
            params
                .as_ref()
                .ok()
                .and_then(|Query(p)| p.lang.as_deref())
                .unwrap_or_default(),
        );
        let text = format!(
            "<!doctype html><html lang=\"{}\"><meta charset=\"utf-8\"><title>{}</title><p>{}</p></html>",
            lang.code(),
            escape(&word("memo", lang)),
            escape(&word("memo_gone", lang))
        );
        let mut response = (
            StatusCode::NOT_FOUND,
            reply::text("text/html; charset=utf-8", text),
        )
            .into_response();
        reply::secure(&mut response, MEMO_POLICY);
        return response;
    };
    let mut response = reply::text("text/html; charset=utf-8", memo.to_string());
    reply::secure(&mut response, MEMO_POLICY);
    // Its key is its content: it never changes, and is the viewer's own.
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, max-age=3600, immutable"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::{KEPT, KEPT_BYTES, Memos};

    #[test]
    fn a_memo_is_kept_once_under_its_digest_and_the_store_stays_bounded() {
        let memos = Memos::default();
        let key = memos.keep("<p>memo</p>");
        assert_eq!(key.len(), 64);
        assert_eq!(memos.keep("<p>memo</p>"), key);
        assert_eq!(memos.bytes(), "<p>memo</p>".len());
        assert_eq!(memos.get(&key).as_deref(), Some("<p>memo</p>"));
        assert!(memos.get("0000").is_none());
        for i in 0..(KEPT + 10) {
            memos.keep(&format!("memo {i}"));
        }
        assert!(memos.get(&key).is_none(), "the oldest memo was let go");
        let big = "x".repeat(KEPT_BYTES / 4);
        for i in 0..8 {
            memos.keep(&format!("{big}{i}"));
        }
        assert!(memos.bytes() <= KEPT_BYTES, "{} bytes", memos.bytes());
    }
}
