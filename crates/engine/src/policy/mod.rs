//! The policy: every rule file of a rules folder loaded, merged and statically checked.
//!
//! Loading turns YAML into typed nodes ([`rules`]) and checks what needs no expression
//! evaluation: each section given once, unique and well-formed ids, and a catalog whose offers
//! have every field the policy declares in `offer_fields`, with the declared types (numbers at
//! least 0, amounts of money, fields whose name ends in `_cny`, at least one fen). Compiling
//! the expressions into a graph is [`crate::graph`]'s job. With quote sheets (`quotes/*.csv`)
//! the catalog holds the hardware and [`quotes`] reads the prices, each row checked, and
//! prices the catalog at a date ([`Policy::at`]).

pub mod explanation;
pub mod formula;
mod languages;
pub(crate) mod located;
mod prepared;
pub mod quotes;
pub use languages::missing_languages;
pub mod rules;
mod tree;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use decide_lang::measure::Measure;
use indexmap::IndexMap;
use serde_saphyr::{Location, Spanned};

use crate::error::{Error, ErrorKind, Position, Result};
use crate::source::Source;
use rules::{FieldType, Invariant, Outputs, PolicyMeta, QuoteSheets, RuleFile, RuleNode, Table};

/// The default rules, embedded at build time.
mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

/// The embedded default templates: (file name, text).
#[must_use]
pub fn embedded_templates() -> &'static [(&'static str, &'static str)] {
    embedded::TEMPLATES
}

/// The policy test cases shipped with the embedded rules: (file name, text).
#[must_use]
pub fn embedded_cases() -> &'static [(&'static str, &'static str)] {
    embedded::CASES
}

/// The published measurements shipped with the embedded rules, for `decide calibrate`:
/// (file name, text).
#[must_use]
pub fn embedded_measurements() -> &'static [(&'static str, &'static str)] {
    embedded::MEASUREMENTS
}

/// A rules folder's subfolder of published measurements (`decide calibrate`; no decision reads
/// it).
pub const MEASUREMENTS_FOLDER: &str = "measurements";
/// A rules folder's subfolder of policy test cases.
pub const TESTS_FOLDER: &str = "tests";
/// A rules folder's subfolder of memo templates (each replaces the embedded one of its name).
pub const TEMPLATES_FOLDER: &str = "templates";
/// The subfolder of example profiles `decide rules export` writes (no command reads it).
pub const EXAMPLES_FOLDER: &str = "examples";

/// Every file of the embedded policy as a rules folder holds it: (path inside the folder with
/// `/` between names, text). The rule files, the quote sheets, the measurements, the policy tests, the memo
/// templates and the example profiles; what `decide rules export` writes.
#[must_use]
pub fn embedded_files() -> Vec<(String, &'static str)> {
    let inside = |folder: &str, files: &'static [(&'static str, &'static str)]| {
        files
            .iter()
            .map(move |(name, text)| (format!("{folder}/{name}"), *text))
            .collect::<Vec<_>>()
    };
    let mut files: Vec<(String, &'static str)> = embedded::RULES
        .iter()
        .map(|(name, text)| ((*name).to_owned(), *text))
        .collect();
    files.extend(inside(quotes::SHEETS_FOLDER, embedded::QUOTES));
    files.extend(inside(MEASUREMENTS_FOLDER, embedded::MEASUREMENTS));
    files.extend(inside(TESTS_FOLDER, embedded::CASES));
    files.extend(inside(TEMPLATES_FOLDER, embedded::TEMPLATES));
    files.extend(inside(EXAMPLES_FOLDER, embedded::EXAMPLES));
    files
}

/// Where a policy came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyOrigin {
    /// The rules compiled into the binary.
    Embedded,
    /// A `--rules` folder.
    Folder(PathBuf),
}

/// A value together with the index of the rule file it was written in.
#[derive(Debug, Clone)]
pub struct Located<T> {
    pub file: usize,
    pub item: T,
}

/// One catalog offer: its id and every field as written.
#[derive(Debug, Clone)]
pub struct Offer {
    pub id: String,
    pub fields: serde_json::Map<String, serde_json::Value>,
    /// Where in `fields` a vendor's free text is (a quote sheet's text cells,
    /// [`quotes::QuoteText`]), as dotted paths (`billing.invoice`): the rules and the memos read
    /// those fields Markdown-escaped. None for a catalog entry's own fields, which are the
    /// policy's.
    pub texts: Vec<&'static str>,
    pub location: Location,
}

impl Offer {
    /// The offer's title in `lang`, as the memo names it; its id where it has none.
    #[must_use]
    pub fn title(&self, lang: crate::lang::Lang) -> String {
        self.fields
            .get("title")
            .map(|t| crate::lang::localize(t, lang))
            .and_then(|t| t.as_str().map(str::to_owned))
            .unwrap_or_else(|| self.id.clone())
    }
}

/// A loaded and statically checked policy.
#[derive(Debug, Clone)]
pub struct Policy {
    pub origin: PolicyOrigin,
    /// What the rules mean, hashed (see [`crate::revision`]).
    pub revision: String,
    pub sources: Vec<Source>,
    pub meta: PolicyMeta,
    pub outputs: Located<Outputs>,
    pub offer_fields: IndexMap<String, FieldType>,
    /// What an offer's numbers measure, by dotted path (`offer_quantities:`), read.
    pub offer_quantities: IndexMap<String, Measure>,
    /// What each price unit measures (`price_unit_quantities:`), read.
    pub price_unit_quantities: IndexMap<String, Measure>,
    /// What the profile's numbers measure, by path below `profile.` (`profile_quantities:`),
    /// read, each with the rule file and place of its line: whether it is a number field of
    /// the profile is checked as the graph compiles.
    pub profile_quantities: IndexMap<String, (Measure, usize, Location)>,
    /// The offers on offer at [`Policy::prices_at`]: with quote sheets, one per hardware and
    /// vendor quoted by then (see [`quotes`]); without, the catalog as written.
    pub offers: Vec<Located<Offer>>,
    /// The catalog as written: with quote sheets, the hardware the quotes price.
    pub hardware: Vec<Located<Offer>>,
    /// Every quote of every sheet (the sources named `*.csv`), in sheet and line order.
    pub quotes: Vec<quotes::Quote>,
    /// The sheets' vocabulary (`quote_sheets:`), when the policy has one.
    pub quote_sheets: Option<Located<QuoteSheets>>,
    /// The date `offers` are priced at: `None` for the newest quote of every offer.
    pub prices_at: Option<jiff::civil::Date>,
    /// Every node, numbered here once and for all: grouped by kind in [`NodeKind`] order, in
    /// the order written within a kind. A node's index in this list is its index everywhere.
    pub nodes: Vec<Located<RuleNode>>,
    pub questions: Vec<Located<rules::Question>>,
    /// `decide init`'s own words and number shorthands (`questionnaire:`).
    pub questionnaire: Option<Located<rules::Questionnaire>>,
    /// The what-would-change-the-answer analysis, if the policy asks for one.
    pub sensitivity: Option<Located<rules::Sensitivity>>,
    /// Statements every decision must satisfy (not nodes: see [`rules::Invariant`]).
    pub invariants: Vec<Located<Invariant>>,
}

impl Policy {
    /// The policy embedded in the binary.
    pub fn embedded() -> Result<Self> {
        Self::from_sources(&Self::embedded_sources(), PolicyOrigin::Embedded)
    }

    /// Every `*.yaml` / `*.yml` file directly inside `dir`, in name order, and the quote
    /// sheets of `dir/quotes/` (every `*.csv`).
    pub fn from_dir(dir: &Path) -> Result<Self> {
        let sources = Self::read_dir(dir)?;
        Self::from_sources(&sources, PolicyOrigin::Folder(dir.to_path_buf()))
    }

    /// The same policy with its offers priced at `date`: the quotes valid then (the latest per
    /// hardware and vendor whose `valid_from` is on or before `date`). Hardware with no quote
    /// by then is not on offer. A policy without quote sheets is returned as it is.
    #[must_use]
    pub fn at(&self, date: jiff::civil::Date) -> Self {
        self.clone().priced_at(date)
    }

    /// Like [`Policy::at`], for a policy no longer needed as it is (no copy made).
    #[must_use]
    pub fn priced_at(mut self, date: jiff::civil::Date) -> Self {
        if self.quote_sheets.is_some() {
            self.offers = quotes::resolve(
                &self.hardware,
                &self.quotes,
                &self.sources,
                self.exchange_rates(),
                Some(date),
            );
            self.prices_at = Some(date);
        }
        self
    }

    /// The dated exchange rates quotes in another currency are converted at
    /// (`quote_sheets.exchange_rates`; none without quote sheets).
    #[must_use]
    pub fn exchange_rates(&self) -> &[rules::ExchangeRate] {
        self.quote_sheets
            .as_ref()
            .map_or(&[], |v| &v.item.exchange_rates)
    }

    /// Whether `offers` hold at `date`: the same quotes and exchange rates are in force then
    /// as at [`Policy::prices_at`] (always, without quote sheets). A graph compiled from this policy
    /// decides correctly at exactly these dates.
    #[must_use]
    pub fn prices_hold_at(&self, date: jiff::civil::Date) -> bool {
        // The quotes in force, and the exchange rates (a quote in another currency is
        // converted at the rate of the date).
        let rates = self.exchange_rates();
        let in_force = |d: Option<jiff::civil::Date>| {
            let quotes = self
                .quotes
                .iter()
                .filter(|q| d.is_none_or(|d| q.valid_from <= d))
                .count();
            let rates = rates
                .iter()
                .filter(|r| {
                    d.is_none_or(|d| r.from.parse::<jiff::civil::Date>().is_ok_and(|f| f <= d))
                })
                .count();
            (quotes, rates)
        };
        in_force(Some(date)) == in_force(self.prices_at)
    }

    /// The date of the newest quote of any sheet (none without quote sheets).
    #[must_use]
    pub fn newest_quote_date(&self) -> Option<jiff::civil::Date> {
        self.quotes.iter().map(|q| q.valid_from).max()
    }

    /// The catalog's hardware that no quote prices at [`Policy::prices_at`], each with the
    /// first day it is quoted (none when no sheet quotes it).
    #[must_use]
    pub fn not_on_offer(&self) -> Vec<(&Located<Offer>, Option<jiff::civil::Date>)> {
        if self.quote_sheets.is_none() {
            return Vec::new();
        }
        self.hardware
            .iter()
            .filter(|h| {
                !self.offers.iter().any(|o| {
                    o.item.fields.get("hardware").and_then(|v| v.as_str()) == Some(&h.item.id)
                })
            })
            .map(|h| {
                let first = self
                    .quotes
                    .iter()
                    .filter(|q| q.hardware == h.item.id)
                    .map(|q| q.valid_from)
                    .min();
                (h, first)
            })
            .collect()
    }

    /// Every offer id the policy has at any date (with quote sheets: every hardware and vendor
    /// quoted; without: the catalog's ids).
    #[must_use]
    pub fn all_offer_ids(&self) -> Vec<String> {
        if self.quote_sheets.is_none() {
            return self.offer_ids().map(str::to_owned).collect();
        }
        quotes::all_ids(&self.hardware, &self.quotes)
    }

    /// The rule files of `dir` (every `*.yaml` / `*.yml` directly inside it), in name order,
    /// then its quote sheets (`dir/quotes/*.csv`), in name order.
    pub fn read_dir(dir: &Path) -> Result<Vec<Source>> {
        let name = dir.display().to_string();
        let paths = crate::source::files_in(dir, crate::source::YAML_EXTENSIONS).map_err(|e| {
            let what = if e.kind() == std::io::ErrorKind::NotFound {
                "rules folder not found".to_owned()
            } else if dir.is_file() {
                "--rules expects a folder of YAML files, not a file".to_owned()
            } else {
                format!("cannot read rules folder: {e}")
            };
            Error::new(ErrorKind::Rules, what).in_file(&name)
        })?;
        if paths.is_empty() {
            return Err(
                Error::new(ErrorKind::Rules, "rules folder has no .yaml files")
                    .in_file(&name)
                    .help(
                        "a rules folder holds the policy's YAML files, like the project's rules/",
                    ),
            );
        }
        let sheets_dir = dir.join(quotes::SHEETS_FOLDER);
        let sheets = if sheets_dir.is_dir() {
            crate::source::files_in(&sheets_dir, quotes::SHEET_EXTENSIONS).map_err(|e| {
                Error::new(
                    ErrorKind::Rules,
                    format!("cannot read the quote sheets folder: {e}"),
                )
                .in_file(sheets_dir.display().to_string())
            })?
        } else {
            Vec::new()
        };
        // Every file listed is read or is an error: a link to nothing, out of the folder, or
        // a FIFO named `*.yaml` stops the run instead of leaving out what it held.
        let mut folder =
            crate::source::Folder::new(dir, "rules folder", crate::source::MAX_FOLDER_BYTES)?;
        paths
            .iter()
            .chain(&sheets)
            .map(|p| folder.read(p, ErrorKind::Rules))
            .collect()
    }

    /// The embedded rule files, then the embedded quote sheets.
    #[must_use]
    pub fn embedded_sources() -> Vec<Source> {
        let rules = embedded::RULES
            .iter()
            .map(|(name, text)| Source::new(format!("rules/{name}"), *text));
        let sheets = embedded::QUOTES
            .iter()
            .map(|(name, text)| Source::new(format!("rules/quotes/{name}"), *text));
        rules.chain(sheets).collect()
    }

    /// Parses, merges and checks rule files already in memory.
    pub fn from_sources(sources: &[Source], origin: PolicyOrigin) -> Result<Self> {
        match Self::from_sources_lenient(sources, origin) {
            (Some(policy), errors) if errors.is_empty() => Ok(policy),
            (_, errors) => Err(Error::many(errors).expect("a policy or an error")),
        }
    }

    /// Like [`Policy::from_sources`], but returns the policy together with every fault found,
    /// whenever the faults leave something to compile (every file parsed, `policy:` and
    /// `outputs:` present), so that `decide validate` can report compile faults as well.
    #[must_use]
    pub fn from_sources_lenient(
        sources: &[Source],
        origin: PolicyOrigin,
    ) -> (Option<Self>, Vec<Error>) {
        // Every file is parsed even when an earlier one fails, so all faults show at once.
        let mut files = Vec::with_capacity(sources.len());
        let mut errors = Vec::new();
        // The rule files' canonical JSON, while every one was read from its tree.
        let mut canonical = Some(Vec::with_capacity(sources.len()));
        for (index, source) in sources.iter().enumerate() {
            if is_sheet(source) {
                continue;
            }
            match read_rule_file(source, &mut canonical) {
                Ok(file) => files.push((index, file)),
                Err(e) => errors.push(e),
            }
        }
        if !errors.is_empty() {
            return (None, errors);
        }
        let mut builder = Builder {
            errors: Vec::new(),
            sources,
            meta: None,
            outputs: None,
            offer_fields: IndexMap::new(),
            offer_quantities: IndexMap::new(),
            price_unit_quantities: IndexMap::new(),
            profile_quantities: IndexMap::new(),
            profile_quantity_places: IndexMap::new(),
            price_unit_places: Vec::new(),
            offers: Vec::new(),
            quote_sheets: None,
            nodes: Vec::new(),
            questions: Vec::new(),
            questionnaire: None,
            sensitivity: None,
            invariants: Vec::new(),
        };
        for (file, rf) in files {
            builder.add(file, rf);
        }
        builder.finish(origin, canonical)
    }

    /// An error pointing at `location` in rule file `file`.
    #[must_use]
    pub fn error_at(&self, file: usize, location: Location, message: impl Into<String>) -> Error {
        error_at(&self.sources, file, location, message)
    }

    /// The decision tables, in node order.
    pub fn tables(&self) -> impl Iterator<Item = Located<&Table>> {
        self.nodes.iter().filter_map(|n| match &n.item {
            RuleNode::Table(t) => Some(Located {
                file: n.file,
                item: t,
            }),
            _ => None,
        })
    }

    /// The offer ids of the catalog, in order.
    pub fn offer_ids(&self) -> impl Iterator<Item = &str> {
        self.offers.iter().map(|o| o.item.id.as_str())
    }
}

/// The rule file `source`: from the build's tables when it is an embedded one, else from its
/// tree, whose canonical JSON joins `canonical` (left `None` once a file is read otherwise), or
/// from its YAML when the tree gives none (which also words any error).
fn read_rule_file(source: &Source, canonical: &mut Option<Vec<String>>) -> Result<RuleFile> {
    // The embedded rule files were parsed at build time (the same values and places).
    if let Some(file) = prepared::read::<RuleFile>(source) {
        *canonical = None;
        return Ok(file);
    }
    let Some(tree) = tree::parse(&source.text) else {
        *canonical = None;
        return source.parse_yaml::<RuleFile>(ErrorKind::Rules);
    };
    let non_decimal: Vec<Error> = tree::non_decimal_numbers(&tree, &source.text)
        .into_iter()
        .map(|(location, field, written)| {
            Error::new(
                ErrorKind::Rules,
                format!("`{written}` is not a number written in decimal digits"),
            )
            .at(&source.name, &source.text, position(location))
            .field(field)
            .help(
                "write it in decimal digits, e.g. `16`; a rule file does not read `1_000`, \
                 `0x10`, `0o20` or `0b10000` (spellings of YAML 1.1)",
            )
        })
        .collect();
    if let Some(e) = Error::many(non_decimal) {
        return Err(e);
    }
    if let Some(docs) = canonical {
        docs.push(tree::canonical(&tree.value));
    }
    tree::read::<RuleFile>(&tree)
        .map_or_else(|| source.parse_yaml::<RuleFile>(ErrorKind::Rules), Ok)
}

/// The revision of the policy of `sources` (see [`crate::revision`]); `canonical`: its rule
/// files' canonical JSON texts, when every one was read from its tree.
fn revision_of(sources: &[Source], canonical: Option<Vec<String>>) -> String {
    // The embedded rules' revision is stamped at build time; anything else is hashed now.
    let unchanged_embedded = sources.len() == embedded::RULES.len() + embedded::QUOTES.len()
        && sources
            .iter()
            .zip(embedded::RULES.iter().chain(embedded::QUOTES))
            .all(|(s, (_, text))| &*s.text == *text);
    if unchanged_embedded {
        embedded::RULES_REVISION.to_owned()
    } else if let Some(mut docs) = canonical {
        let sheets = sources.iter().filter(|s| is_sheet(s));
        let sheets: std::result::Result<Vec<String>, String> = sheets
            .map(|s| crate::revision::canonical_csv(&s.text))
            .collect();
        match sheets {
            Ok(sheets) => {
                docs.extend(sheets);
                crate::revision::policy_of_canonical(docs)
            }
            Err(_) => String::new(),
        }
    } else {
        let (sheet_sources, rule_sources): (Vec<&Source>, Vec<&Source>) =
            sources.iter().partition(|s| is_sheet(s));
        let texts: Vec<&str> = rule_sources.iter().map(|s| &*s.text).collect();
        let sheet_texts: Vec<&str> = sheet_sources.iter().map(|s| &*s.text).collect();
        crate::revision::policy_with_sheets(&texts, &sheet_texts).unwrap_or_default()
    }
}

pub(crate) fn position(location: Location) -> Option<Position> {
    (location.line() > 0).then(|| Position {
        line: usize::try_from(location.line()).unwrap_or(usize::MAX),
        column: usize::try_from(location.column()).unwrap_or(usize::MAX),
    })
}

fn error_at(
    sources: &[Source],
    file: usize,
    location: Location,
    message: impl Into<String>,
) -> Error {
    let source = &sources[file];
    Error::new(ErrorKind::Rules, message).at(&source.name, &source.text, position(location))
}

struct Builder<'a> {
    sources: &'a [Source],
    errors: Vec<Error>,
    meta: Option<Located<PolicyMeta>>,
    outputs: Option<Located<Outputs>>,
    offer_fields: IndexMap<String, FieldType>,
    offer_quantities: IndexMap<String, Measure>,
    price_unit_quantities: IndexMap<String, Measure>,
    profile_quantities: IndexMap<String, Measure>,
    profile_quantity_places: IndexMap<String, (usize, Location)>,
    /// Where each `price_unit_quantities:` key is written, to check it against the sheets'
    /// price units once every file is read.
    price_unit_places: Vec<(String, usize, Location)>,
    offers: Vec<Located<Spanned<IndexMap<String, serde_json::Value>>>>,
    quote_sheets: Option<Located<QuoteSheets>>,
    nodes: Vec<Located<RuleNode>>,
    questions: Vec<Located<rules::Question>>,
    questionnaire: Option<Located<rules::Questionnaire>>,
    sensitivity: Option<Located<rules::Sensitivity>>,
    invariants: Vec<Located<Invariant>>,
}

impl Builder<'_> {
    /// Reads the dimensions a section declares (`offer_quantities:`, `price_unit_quantities:`,
    /// `profile_quantities:`), each error at its place: a unit that does not read.
    fn add_quantities(
        &mut self,
        file: usize,
        section: &str,
        declared: IndexMap<String, Spanned<String>>,
    ) {
        let name = &self.sources[file].name;
        for (path, text) in declared {
            let read = match Measure::parse(&text.value) {
                Ok(d) => d,
                Err(e) => {
                    self.errors.push(
                        error_at(
                            self.sources,
                            file,
                            text.referenced,
                            format!(
                                "`{section}.{path}: {}` does not read: {}",
                                text.value, e.message
                            ),
                        )
                        .field(format!("{section}.{path}"))
                        .help(DIMENSION_HELP),
                    );
                    continue;
                }
            };
            if section == "profile_quantities" {
                self.profile_quantity_places
                    .insert(path.clone(), (file, text.referenced));
            }
            if section == "price_unit_quantities" {
                self.price_unit_places
                    .push((path.clone(), file, text.referenced));
            }
            let into = match section {
                "offer_quantities" => &mut self.offer_quantities,
                "profile_quantities" => &mut self.profile_quantities,
                _ => &mut self.price_unit_quantities,
            };
            if into.insert(path.clone(), read).is_some() {
                self.errors.push(
                    Error::new(
                        ErrorKind::Rules,
                        format!("`{section}.{path}` is declared twice"),
                    )
                    .in_file(name),
                );
            }
        }
    }

    fn add(&mut self, file: usize, rf: RuleFile) {
        let name = &self.sources[file].name;
        let twice = |section: &str, prev: usize| {
            Error::new(
                ErrorKind::Rules,
                format!("the `{section}:` section is given twice"),
            )
            .in_file(name)
            .help(format!("it is already in {}", self.sources[prev].name))
        };
        if let Some(meta) = rf.policy {
            match &self.meta {
                Some(prev) => self.errors.push(twice("policy", prev.file)),
                None => self.meta = Some(Located { file, item: meta }),
            }
        }
        if let Some(outputs) = rf.outputs {
            match &self.outputs {
                Some(prev) => self.errors.push(twice("outputs", prev.file)),
                None => {
                    self.outputs = Some(Located {
                        file,
                        item: outputs,
                    });
                }
            }
        }
        if let Some(vocabulary) = rf.quote_sheets {
            match &self.quote_sheets {
                Some(prev) => self.errors.push(twice("quote_sheets", prev.file)),
                None => {
                    self.quote_sheets = Some(Located {
                        file,
                        item: vocabulary,
                    });
                }
            }
        }
        if let Some(questionnaire) = rf.questionnaire {
            match &self.questionnaire {
                Some(prev) => self.errors.push(twice("questionnaire", prev.file)),
                None => {
                    self.questionnaire = Some(Located {
                        file,
                        item: questionnaire,
                    });
                }
            }
        }
        if let Some(sensitivity) = rf.sensitivity {
            match &self.sensitivity {
                Some(prev) => self.errors.push(twice("sensitivity", prev.file)),
                None => {
                    self.sensitivity = Some(Located {
                        file,
                        item: sensitivity,
                    });
                }
            }
        }
        for (field, ty) in rf.offer_fields {
            if self.offer_fields.insert(field.clone(), ty).is_some() {
                self.errors.push(
                    Error::new(
                        ErrorKind::Rules,
                        format!("offer field `{field}` is declared twice"),
                    )
                    .in_file(name),
                );
            }
        }
        self.add_quantities(file, "offer_quantities", rf.offer_quantities);
        self.add_quantities(file, "price_unit_quantities", rf.price_unit_quantities);
        self.add_quantities(file, "profile_quantities", rf.profile_quantities);
        self.offers.extend(located(file, rf.offers));
        let nodes = (rf.facts.into_iter().map(RuleNode::Fact))
            .chain(rf.criteria.into_iter().map(RuleNode::Criterion))
            .chain(rf.tables.into_iter().map(RuleNode::Table))
            .chain(rf.selects.into_iter().map(RuleNode::Select))
            .chain(rf.searches.into_iter().map(RuleNode::Search))
            .chain(rf.warnings.into_iter().map(RuleNode::Warning))
            .chain(rf.checklist.into_iter().map(RuleNode::Checklist));
        self.nodes.extend(nodes.map(|item| Located { file, item }));
        self.questions.extend(located(file, rf.questions));
        self.invariants.extend(located(file, rf.invariants));
    }

    /// `canonical`: the rule files' canonical JSON texts, when every one was read from its
    /// tree (else they are read again for the revision).
    fn finish(
        mut self,
        origin: PolicyOrigin,
        canonical: Option<Vec<String>>,
    ) -> (Option<Policy>, Vec<Error>) {
        let sources = self.sources;
        let first = sources.first().map_or("rules", |s| s.name.as_str());
        if self.meta.is_none() {
            self.errors.push(
                Error::new(ErrorKind::Rules, "no rule file has a `policy:` section")
                    .in_file(first)
                    .help("add `policy: {name: ..., version: ...}` to one rule file"),
            );
        }
        if self.outputs.is_none() {
            self.errors.push(
                Error::new(ErrorKind::Rules, "no rule file has an `outputs:` section")
                    .in_file(first)
                    .help("add `outputs:` with `deployment:`, `offer:` and `costs:` expressions"),
            );
        }
        let sheets: Vec<usize> = (0..sources.len())
            .filter(|&i| is_sheet(&sources[i]))
            .collect();
        let quoted = !sheets.is_empty() || self.quote_sheets.is_some();
        let hardware = check_offers(
            sources,
            &self.offer_fields,
            self.offers,
            quoted,
            &mut self.errors,
        );
        let mut all_quotes = Vec::new();
        match &self.quote_sheets {
            Some(vocabulary) => {
                let ids: Vec<&str> = hardware.iter().map(|h| h.item.id.as_str()).collect();
                all_quotes =
                    quotes::read_sheets(sources, &sheets, &vocabulary.item, &ids, &mut self.errors);
                let errors = sheet_errors(
                    sources,
                    &hardware,
                    &all_quotes,
                    vocabulary,
                    &self.price_unit_places,
                );
                self.errors.extend(errors);
            }
            None if !sheets.is_empty() => self.errors.push(
                Error::new(
                    ErrorKind::Rules,
                    "the rules have quote sheets but no `quote_sheets:` section",
                )
                .in_file(first)
                .help(
                    "add `quote_sheets: {currency: ..., price_units: [...], billing_units: \
                     [...], vat: [...], discount_commits: [...]}` to one rule file (see the \
                     shipped rules/catalog.yaml)",
                ),
            ),
            None => {}
        }
        let offers = if quoted {
            let rates = self
                .quote_sheets
                .as_ref()
                .map_or(&[][..], |v| &v.item.exchange_rates[..]);
            quotes::resolve(&hardware, &all_quotes, sources, rates, None)
        } else {
            hardware.clone()
        };
        // Node indices are assigned here, once: by kind, then in the order written (stable).
        self.nodes.sort_by_key(|n| n.item.kind());
        let (Some(meta), Some(outputs)) = (self.meta, self.outputs) else {
            return (None, self.errors);
        };
        let revision = revision_of(sources, canonical);
        let policy = Policy {
            origin,
            revision,
            sources: sources.to_vec(),
            meta: meta.item,
            outputs,
            offer_fields: self.offer_fields,
            offer_quantities: self.offer_quantities,
            price_unit_quantities: self.price_unit_quantities,
            profile_quantities: self
                .profile_quantities
                .into_iter()
                .map(|(path, d)| {
                    let (file, at) = self.profile_quantity_places[&path];
                    (path, (d, file, at))
                })
                .collect(),
            offers,
            hardware,
            quotes: all_quotes,
            quote_sheets: self.quote_sheets,
            prices_at: None,
            nodes: self.nodes,
            questions: self.questions,
            questionnaire: self.questionnaire,
            sensitivity: self.sensitivity,
            invariants: self.invariants,
        };
        check_ids(&policy, &mut self.errors);
        (Some(policy), self.errors)
    }
}

/// What is wrong with the sheets read against the catalog and the policy's vocabulary: a
/// quote given twice, an id's vendor, the VAT rates and exchange rates, a price unit the facts
/// do not price for a kind, a `price_unit_quantities:` key no sheet may quote.
fn sheet_errors(
    sources: &[Source],
    hardware: &[Located<Offer>],
    all_quotes: &[quotes::Quote],
    vocabulary: &Located<QuoteSheets>,
    price_unit_places: &[(String, usize, Location)],
) -> Vec<Error> {
    let mut errors = quotes::duplicates(sources, all_quotes);
    errors.extend(quotes::id_vendor_errors(sources, hardware, all_quotes));
    errors.extend(quotes::vat_errors(
        &sources[vocabulary.file],
        &vocabulary.item,
    ));
    errors.extend(quotes::exchange_rate_errors(
        &sources[vocabulary.file],
        &vocabulary.item,
    ));
    errors.extend(quotes::unpriced_units(
        sources, hardware, all_quotes, vocabulary,
    ));
    errors.extend(unsold_price_units(
        sources,
        price_unit_places,
        &vocabulary.item.price_units,
    ));
    errors
}

/// The `price_unit_quantities:` keys (each with where it is written) that are not among the
/// quote sheets' price units (`units`), each an error at its line.
fn unsold_price_units(
    sources: &[Source],
    places: &[(String, usize, Location)],
    units: &[String],
) -> Vec<Error> {
    places
        .iter()
        .filter(|(unit, ..)| !units.contains(unit))
        .map(|(unit, file, at)| {
            error_at(
                sources,
                *file,
                *at,
                format!(
                    "`price_unit_quantities.{unit}`: `{unit}` is not a price unit of the quote sheets"
                ),
            )
            .field(format!("price_unit_quantities.{unit}"))
            .help(format!(
                "`quote_sheets.price_units` lists {}",
                units.join(", ")
            ))
        })
        .collect()
}

/// Tags every item with the rule file it came from.
fn located<T>(file: usize, items: Vec<T>) -> impl Iterator<Item = Located<T>> {
    items.into_iter().map(move |item| Located { file, item })
}

/// Each offer has a unique string `id` and every declared field with its type.
fn check_offers(
    sources: &[Source],
    fields: &IndexMap<String, FieldType>,
    raw: Vec<Located<Spanned<IndexMap<String, serde_json::Value>>>>,
    quoted: bool,
    errors: &mut Vec<Error>,
) -> Vec<Located<Offer>> {
    let mut seen: HashMap<String, (usize, Location)> = HashMap::new();
    let mut offers = Vec::with_capacity(raw.len());
    for Located { file, item } in raw {
        let location = item.referenced;
        let map: serde_json::Map<String, serde_json::Value> = item.value.into_iter().collect();
        let id = match map.get("id") {
            Some(serde_json::Value::String(id)) if is_offer_id(id) => id.clone(),
            Some(other) => {
                errors.push(
                    error_at(
                        sources,
                        file,
                        location,
                        format!("offer id {other} is not valid"),
                    )
                    .field("offers[].id")
                    .help("ids are lowercase letters, digits and dashes, e.g. `h100-x8-ningxia1`"),
                );
                continue;
            }
            None => {
                errors.push(
                    error_at(sources, file, location, "offer has no `id`").field("offers[].id"),
                );
                continue;
            }
        };
        if let Some((prev_file, prev)) = seen.get(&id) {
            errors.push(
                error_at(
                    sources,
                    file,
                    location,
                    format!("offer `{id}` is defined twice"),
                )
                .field("offers[].id")
                .help(format!(
                    "first defined at {}:{}",
                    sources[*prev_file].name,
                    prev.line()
                )),
            );
            continue;
        }
        seen.insert(id.clone(), (file, location));
        let written: Vec<String> = map
            .keys()
            .filter(|k| quotes::QUOTED_FIELDS.contains(&k.as_str()))
            .map(|k| format!("`{k}`"))
            .collect();
        if quoted && !written.is_empty() {
            errors.push(
                error_at(
                    sources,
                    file,
                    location,
                    format!(
                        "offer `{id}` writes {}, which its quotes give",
                        written.join(", ")
                    ),
                )
                .help(
                    "with quote sheets (quotes/*.csv) the catalog holds the hardware; prices, \
                     billing terms, sources and dates are columns of a sheet's row: move them \
                     there (see docs/quotes.md)",
                ),
            );
        }
        let value = serde_json::Value::Object(map);
        // With quote sheets, the fields their quotes give are checked in the sheets.
        let given_by_quotes = |path: &str| {
            quoted && quotes::QUOTED_FIELDS.contains(&path.split('.').next().unwrap_or(path))
        };
        for (path, ty) in fields.iter().filter(|(p, _)| !given_by_quotes(p)) {
            let found = path.split('.').try_fold(&value, |v, key| v.get(key));
            let err = |what: String| {
                error_at(sources, file, location, format!("offer `{id}` {what}"))
                    .field(path.clone())
                    .help("every offer needs the fields listed under `offer_fields:`")
            };
            match found {
                None | Some(serde_json::Value::Null) => {
                    errors.push(err(format!("has no `{path}` ({})", type_name(*ty))));
                }
                Some(v) if !type_matches(*ty, v) => {
                    errors.push(err(format!(
                        "has `{path}: {v}`, expected {}",
                        type_name(*ty)
                    )));
                }
                Some(_) => {}
            }
        }
        for (path, v, expected) in numbers_out_of_range(fields, &value) {
            errors.push(
                error_at(
                    sources,
                    file,
                    location,
                    format!("offer `{id}` has `{path}: {v}`, expected {expected}"),
                )
                .field(path)
                .help(NUMBERS_HELP),
            );
        }
        let serde_json::Value::Object(fields) = value else {
            unreachable!("built from a map above")
        };
        offers.push(Located {
            file,
            item: Offer {
                id,
                fields,
                texts: Vec::new(),
                location,
            },
        });
    }
    offers
}

/// What a dimension (`quantity:`) may be.
pub(crate) const DIMENSION_HELP: &str = "a dimension is units multiplied with `*` and divided \
     with `/`, each a lower-case name, e.g. `cny`, `cny/month`, `hour/month`, `cny/gpu/hour`, \
     or `1` for a plain number";

const NUMBERS_HELP: &str = "an offer's numbers declared under `offer_fields:` are at least 0, and \
     amounts of money (fields whose name ends in `_cny`) at least 0.01 (one fen)";

/// What a number field of an offer must be, when `value` is not that: a field declared
/// `number` or `integer` is at least 0 (a count, a size, a rate), and an amount of money (a
/// field whose name ends in `_cny`, declared or not) is at least one fen: a price of zero is a
/// price left out, and one of `5e-324` a price no bill can charge. Values that are not numbers are for [`type_matches`] to judge.
fn number_out_of_range(path: &str, ty: FieldType, value: &serde_json::Value) -> Option<String> {
    let v = value.as_f64()?;
    let money = path.rsplit('.').next().is_some_and(|k| k.ends_with("_cny"));
    if money && (v.is_nan() || v < quotes::MIN_PRICE_CNY) {
        return Some(format!(
            "an amount in yuan of at least {} (one fen)",
            quotes::MIN_PRICE_CNY
        ));
    }
    let declared = matches!(ty, FieldType::Number | FieldType::Integer);
    // NaN and infinities are refused as the YAML is read (at their line); the check stays for
    // values that reach here some other way.
    if declared && (!v.is_finite() || v < 0.0) {
        return Some(format!("{} of at least 0", type_name(ty)));
    }
    None
}

/// The numbers of an offer out of their range, each with its path, value and what it should
/// be, in the order of the file: declared numbers, and undeclared amounts of money (such as an
/// optional price); a declared field of another type is for [`type_matches`] to judge.
fn numbers_out_of_range<'v>(
    fields: &IndexMap<String, FieldType>,
    offer: &'v serde_json::Value,
) -> Vec<(String, &'v serde_json::Value, String)> {
    let mut leaves = Vec::new();
    number_leaves(offer, "", &mut leaves);
    leaves
        .into_iter()
        .filter_map(|(path, v)| {
            let ty = fields.get(&path).copied().unwrap_or(FieldType::Any);
            if !matches!(ty, FieldType::Number | FieldType::Integer | FieldType::Any) {
                return None;
            }
            number_out_of_range(&path, ty, v).map(|expected| (path, v, expected))
        })
        .collect()
}

/// Every number in `value` with its dotted path (lists are not walked: offers' numbers are
/// leaves of mappings).
fn number_leaves<'v>(
    value: &'v serde_json::Value,
    prefix: &str,
    out: &mut Vec<(String, &'v serde_json::Value)>,
) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                number_leaves(v, &path, out);
            }
        }
        serde_json::Value::Number(_) => out.push((prefix.to_owned(), value)),
        _ => {}
    }
}

/// Whether a source of a rules folder is a quote sheet (named `*.csv`) rather than YAML.
#[must_use]
pub fn is_sheet(source: &Source) -> bool {
    std::path::Path::new(&source.name)
        .extension()
        .is_some_and(|x| {
            quotes::SHEET_EXTENSIONS
                .iter()
                .any(|e| x.eq_ignore_ascii_case(e))
        })
}

fn is_offer_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

/// Whether `value` has type `ty`.
#[must_use]
pub fn type_matches(ty: FieldType, value: &serde_json::Value) -> bool {
    use serde_json::Value as J;
    match ty {
        FieldType::Number => value.is_number(),
        FieldType::Integer => value.is_i64() || value.is_u64(),
        FieldType::Bool => value.is_boolean(),
        // Text a person reads may be written in two languages (`{en, zh}`).
        FieldType::String => value.is_string() || crate::lang::is_words(value),
        FieldType::Date => value
            .as_str()
            .is_some_and(|s| s.parse::<jiff::civil::Date>().is_ok()),
        FieldType::List => matches!(value, J::Array(_)),
        FieldType::Map => matches!(value, J::Object(_)),
        FieldType::Any => true,
    }
}

/// How a type is named in messages.
#[must_use]
pub fn type_name(ty: FieldType) -> &'static str {
    match ty {
        FieldType::Number => "a number",
        FieldType::Integer => "a whole number",
        FieldType::Bool => "true or false",
        FieldType::String => "text",
        FieldType::Date => "a date YYYY-MM-DD",
        FieldType::List => "a list",
        FieldType::Map => "a mapping",
        FieldType::Any => "any value",
    }
}

/// Names an expression may use that are not nodes.
pub const ROOT_NAMES: &[&str] = &["profile", "offers", "catalog", "as_of", "not_on_offer"];

/// Words of the expression language that cannot be node ids.
const KEYWORDS: &[&str] = &[
    "and", "or", "not", "in", "is", "if", "else", "true", "false", "none", "True", "False", "None",
    "loop", "self", "super", "offer",
];

/// Node and invariant ids are unique across the policy, look like identifiers and avoid
/// reserved names; row ids are unique within their table.
fn check_ids(policy: &Policy, errors: &mut Vec<Error>) {
    let mut seen: HashMap<&str, (usize, Location)> = HashMap::new();
    let mut all = node_ids(policy);
    all.extend(policy.invariants.iter().map(|n| (n.file, &n.item.id)));
    for (file, id) in &all {
        let name = id.value.as_str();
        let err = |msg: String| policy.error_at(*file, id.referenced, msg).field("id");
        if !is_identifier(name) {
            errors.push(err(format!("`{name}` is not a valid id"))
                .help("ids are snake_case: lowercase letters, digits and underscores, starting with a letter"));
        } else if ROOT_NAMES.contains(&name) || KEYWORDS.contains(&name) {
            errors.push(err(format!(
                "`{name}` is a reserved name and cannot be an id"
            )));
        } else if let Some((prev_file, prev)) = seen.get(name) {
            errors.push(err(format!("duplicate id `{name}`")).help(format!(
                "first defined at {}:{}:{}",
                policy.sources[*prev_file].name,
                prev.line(),
                prev.column()
            )));
        } else {
            seen.insert(name, (*file, id.referenced));
        }
    }
    for table in policy.tables() {
        let mut rows: HashMap<&str, Location> = HashMap::new();
        for row in table.item.rows.iter().chain(table.item.default.iter()) {
            let name = row.id.value.as_str();
            if let Some(prev) = rows.insert(name, row.id.referenced) {
                errors.push(
                    policy
                        .error_at(
                            table.file,
                            row.id.referenced,
                            format!(
                                "duplicate row id `{name}` in table `{}`",
                                table.item.id.value
                            ),
                        )
                        .help(format!("first used at line {}", prev.line())),
                );
            }
        }
    }
}

/// Every node id with the file it is in, by node index.
pub(crate) fn node_ids(policy: &Policy) -> Vec<(usize, &Spanned<String>)> {
    policy.nodes.iter().map(|n| (n.file, n.item.id())).collect()
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}
