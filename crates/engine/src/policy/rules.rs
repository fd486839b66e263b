//! The typed shape of one rule file: the node kinds a policy is written in.
//!
//! A rules folder is a set of YAML files, each a mapping with any of the sections below; the
//! sections of all files are merged (see [`crate::policy::Policy`]). Expressions and text
//! templates are kept with their position in the file so that later errors can point at them.

use decide_lang::measure::{BadMeasure, Measure};
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::kind::ChecklistPart;
use serde_saphyr::Spanned;

use crate::kind::NodeKind;
pub use crate::lang::Words;
pub use crate::policy::explanation::{EachItem, Explanation, Phrase, Phrases, SentenceRow};
use crate::policy::formula::FormulaText;

/// An expression in minijinja's expression language, with where it was written.
pub type ExprText = Spanned<String>;

/// A text template in one or two languages, with where it was written.
pub type Template = Spanned<Words>;

/// One rule file as written.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "decide rule file", extend("$id" = "https://decide.invalid/schema/rules.schema.json"))]
pub struct RuleFile {
    /// Name, version and description of the policy (exactly one file has it).
    #[serde(default)]
    pub policy: Option<PolicyMeta>,
    /// How the decision record is read off the graph (exactly one file has it).
    #[serde(default)]
    pub outputs: Option<Outputs>,
    /// Fields every catalog offer must have, as dotted paths with their type.
    #[serde(default)]
    pub offer_fields: IndexMap<String, FieldType>,
    /// What an offer's numbers measure, by dotted path (a list's items' fields below the
    /// list's path: `price.terms.cny`): a dimension such as `cny/month` (see [`Fact::quantity`]).
    #[serde(default)]
    #[schemars(with = "IndexMap<String, String>")]
    pub offer_quantities: IndexMap<String, Spanned<String>>,
    /// What each price unit an offer's `price.unit` may name measures (`gpu_hour: hour`), for
    /// the branches of an expression where a test says which it is
    /// (`offer.price.unit == 'gpu_hour'`): there, `price_unit` in an offer's dimensions is it.
    #[serde(default)]
    #[schemars(with = "IndexMap<String, String>")]
    pub price_unit_quantities: IndexMap<String, Spanned<String>>,
    /// What the profile's numbers measure, by path below `profile.` (`usage.months: month`,
    /// `budget.monthly_cny: cny/month`): each a number field of the profile, typed with its
    /// dimension wherever a rule reads it.
    #[serde(default)]
    #[schemars(with = "IndexMap<String, String>")]
    pub profile_quantities: IndexMap<String, Spanned<String>>,
    /// The catalog: the hardware of each offer (accelerators, memory, links, host, delivery,
    /// tools). With quote sheets (`quotes/*.csv`), prices, billing terms and sources come from
    /// the sheets; a policy without sheets writes them here (`price`, `billing`, `source`,
    /// `as_of`).
    #[serde(default)]
    #[schemars(with = "Vec<IndexMap<String, serde_json::Value>>")]
    pub offers: Vec<Spanned<IndexMap<String, serde_json::Value>>>,
    /// What the quote sheets of `quotes/` may say: their currency and the words their unit,
    /// VAT and commitment columns take (at most one file has it; required with sheets).
    #[serde(default)]
    pub quote_sheets: Option<QuoteSheets>,
    /// Derived numbers and flags, and constants (`value:`).
    #[serde(default)]
    pub facts: Vec<Fact>,
    /// Yes/no questions with their explanation.
    #[serde(default)]
    pub criteria: Vec<Criterion>,
    /// Decision tables with a hit policy.
    #[serde(default)]
    pub tables: Vec<Table>,
    /// Choices from a list (usually the catalog): filter, order, pick.
    #[serde(default)]
    pub selects: Vec<Select>,
    /// Searches: the cheapest combination of decision variables that meets every constraint,
    /// with why each cheaper one lost.
    #[serde(default)]
    pub searches: Vec<Search>,
    /// Conditions that raise a named warning in the memo.
    #[serde(default)]
    pub warnings: Vec<Warning>,
    /// Contract items to confirm before signing, each with its condition.
    #[serde(default)]
    pub checklist: Vec<ChecklistItem>,
    /// The questions `decide init` asks, in order, each filling one profile field.
    #[serde(default)]
    pub questions: Vec<Question>,
    /// The fixed words of `decide init`'s prompts (help lines, yes/no, what a refused answer
    /// says) and the shorthands a number answer may use (at most one file has it; required
    /// with `questions:`).
    #[serde(default)]
    pub questionnaire: Option<Questionnaire>,
    /// Which profile fields to vary to find what would change the decision, and how to say it
    /// (at most one file has it).
    #[serde(default)]
    pub sensitivity: Option<Sensitivity>,
    /// Statements about the decision that must hold for every profile: a decision that breaks
    /// one contradicts itself and is refused (no memo is written), and `decide validate`
    /// searches generated profiles for one that breaks it.
    #[serde(default)]
    pub invariants: Vec<Invariant>,
}

/// The vocabulary of a policy's quote sheets (`quotes/*.csv`): every row is checked against it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuoteSheets {
    /// The currency every price of a sheet is in (the `currency` column), e.g. `CNY`: the
    /// offers' amounts (`price.list_cny`, ...) are in it.
    pub currency: String,
    /// What a price is for (the `unit` column; the offer's `price.unit`), e.g. `month`.
    pub price_units: Vec<String>,
    /// The price units the facts price for each kind of offer (`bare_metal: [month]`), where
    /// the policy says: a row quoting its hardware's kind in another is refused at its `unit`
    /// cell, as its bill would be a guess. A kind not listed may be quoted in any of
    /// `price_units`.
    #[serde(default)]
    pub price_units_by_kind: std::collections::BTreeMap<String, Vec<String>>,
    /// What a bill is made of (the `billing_unit` column, default the `unit`; the offer's
    /// `billing.unit`).
    pub billing_units: Vec<String>,
    /// Whether prices include VAT (the `vat` column; the offer's `billing.vat`).
    pub vat: Vec<String>,
    /// The basis every price is compared and shown on: `included` (with VAT in, what the
    /// buyer pays out) or `excluded` (before VAT, the cost of a buyer who deducts the input VAT
    /// on a special invoice). A quote of the other basis (`vat` `excluded` or `included`) is
    /// converted at its rate as it is read, its own figures kept in `price.quoted_list_cny`
    /// and `price.quoted_discounted_cny`; a quote whose `vat` is neither is compared as
    /// quoted. The offer's `billing.vat_basis`.
    pub vat_basis: String,
    /// The VAT rate of each kind of contract (`service: 0.06`, `lease: 0.13`), each a share
    /// from 0 to 0.2: a quote's `contract_kind` (default `contract_kind` below) gives its
    /// rate unless its own `vat_rate` cell says another. The offer's `billing.vat_rate`.
    pub vat_rates: std::collections::BTreeMap<String, f64>,
    /// The kind of contract a quote is read as where its `contract_kind` cell is empty: one
    /// of `vat_rates`. The offer's `billing.contract_kind`.
    pub contract_kind: String,
    /// What the discounted price commits the buyer to (the `discount_commits` column; the
    /// offer's `billing.discount_commits`).
    pub discount_commits: Vec<String>,
    /// How many hours one of each term lasts (`hour: 1, day: 24, week: 168, month: 720, year:
    /// 8760`): a row priced by one of these units, and its `hourly_price`, `daily_price`,
    /// `weekly_price` and `yearly_price` cells, give the offer's `price.terms`, each
    /// `{unit, length, cny, min}` with `length` in hours, what `cover(hours, terms)` buys a
    /// job's or a contract's time from. A month's hours may be the quote's own (`month_days`).
    #[serde(default)]
    pub term_hours: std::collections::BTreeMap<String, u32>,
    /// The dated exchange rates a quote in another currency than `currency` is converted at:
    /// a sheet's `currency` cell may name any currency (an ISO 4217 code, e.g. `USD`) with a
    /// rate here on or before the quote's `valid_from`, and the quote is converted at the rate
    /// in force on the date the memo prices at (`--as-of`): the latest of its currency whose
    /// `from` is on or before it. The offer keeps the sheet's own figures and the rate used
    /// (`price.exchange`).
    #[serde(default)]
    pub exchange_rates: Vec<ExchangeRate>,
}

/// One exchange rate of `quote_sheets.exchange_rates`: what one unit of a currency costs in
/// the policy's, from a day on.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExchangeRate {
    /// The currency converted, an ISO 4217 code (three capital letters, e.g. `USD`).
    pub currency: String,
    /// The first day the rate holds, `YYYY-MM-DD`: it is used until the currency's next rate.
    pub from: String,
    /// Units of the policy's currency for one unit of `currency` (e.g. `7.1` CNY a US dollar),
    /// greater than 0.
    pub rate: f64,
    /// Where the rate comes from (e.g. the central parity rate the China Foreign Exchange
    /// Trade System publishes for the day): the memo cites it.
    pub source: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyMeta {
    pub name: Words,
    pub version: String,
    #[serde(default)]
    pub description: Option<Words>,
    /// A caution printed with the sources, e.g. "verify live prices before signing".
    #[serde(default)]
    pub caution: Option<Words>,
    /// What the policy's texts cite (e.g. the article their "§N" refers to: its title,
    /// publisher, date, where to find it, what each section covers), printed with the sources.
    #[serde(default)]
    pub source: Option<Words>,
}

/// Expressions that fill the stable fields of the decision record.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Outputs {
    /// The recommended way to buy, as text (the values it may take are promised in `promises`).
    #[schemars(with = "String")]
    pub deployment: ExprText,
    /// Must evaluate to an offer id of the catalog.
    #[schemars(with = "String")]
    pub offer: ExprText,
    /// The matched scenario row id, or none.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub scenario: Option<ExprText>,
    /// Named money and time figures of the record's `costs` object.
    #[serde(default)]
    #[schemars(with = "IndexMap<String, String>")]
    pub costs: IndexMap<String, ExprText>,
    /// Further top-level entries of the decision record, each read off the graph by an
    /// expression (e.g. `memory`, `estimates`, `alternatives`). Names may not be those of the
    /// record's own fields.
    #[serde(default)]
    #[schemars(with = "IndexMap<String, String>")]
    pub sections: IndexMap<String, ExprText>,
    /// What the policy's models predict for a published measurement (`decide calibrate`): an
    /// expression giving, per offer, a map of metric → predicted value (`output_tokens_s`,
    /// `tpot_ms`, `ttft_ms`, `train_tokens_s_per_gpu`), read for a profile built from the
    /// measurement's conditions. Not part of the decision record.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub calibration: Option<ExprText>,
    /// What every record of this policy promises its readers, checked when the rules load and
    /// at every decision: the record's contract, declared by the policy rather than the engine.
    #[serde(default)]
    pub promises: Promises,
}

/// The decision record's contract, as the policy declares it.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Promises {
    /// The values `deployment` may take (any text when not given); a decision that gives
    /// another is a fault in the rules.
    #[serde(default)]
    pub deployment: Option<Vec<String>>,
    /// The `costs` entries every record has: the policy must define each.
    #[serde(default)]
    pub costs: Vec<String>,
    /// The cost (a `costs` entry, a number) that `decide diff` compares and `decide batch`
    /// totals; without it they compare and total no cost.
    #[serde(default)]
    pub headline_cost: Option<String>,
}

/// The type a catalog field or fact value must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FieldType {
    Number,
    Integer,
    Bool,
    String,
    /// A `YYYY-MM-DD` date written as text.
    Date,
    List,
    Map,
    #[default]
    Any,
}

/// How a number is shown in the memo and the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    Cny,
    Hours,
    Gb,
    Percent,
    Count,
    Days,
    Ratio,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fact {
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    pub title: Words,
    /// Why this number matters, quoted in the trace.
    #[serde(default)]
    pub because: Option<Words>,
    /// Where a constant comes from.
    #[serde(default)]
    pub source: Option<String>,
    /// The expression computing the fact (exactly one of `expr` and `value`): one expression,
    /// a record of `field: expression` lines, or first-hit cases `- {when: ..., then: ...}`.
    #[serde(default)]
    pub expr: Option<FormulaText>,
    /// A constant.
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Value>")]
    pub value: Option<Spanned<serde_json::Value>>,
    /// The type the value must have.
    #[serde(default, rename = "type")]
    pub kind: FieldType,
    /// Whether `none` is an acceptable value.
    #[serde(default)]
    pub nullable: bool,
    #[serde(default)]
    pub unit: Option<Unit>,
    /// What the number measures, as units multiplied (`*`) and divided (`/`): `cny`,
    /// `cny/month`, `hour/month`, `1` for a plain number. Where it is not written, a `unit:` of
    /// `cny`, `hours`, `days` or `gb` gives it. The typechecker refuses, when the rules load,
    /// an expression that adds, compares or chooses between numbers of different ones, and a
    /// fact whose expression gives another.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub quantity: Option<Spanned<String>>,
    /// Evaluate once per catalog offer (bound as `offer`); the value maps offer id to result,
    /// leaving out offers for which it is `none`.
    #[serde(default)]
    pub per_offer: bool,
    /// Named phrases the sentences of its rows (`says:`) insert with `{{ phrases.NAME }}`:
    /// first-hit rows, or rows said for each item of a list.
    #[serde(default)]
    pub phrases: Phrases,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Criterion {
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    pub title: Words,
    #[serde(default)]
    pub because: Option<Words>,
    /// Must evaluate to true or false.
    #[schemars(with = "String")]
    pub when: ExprText,
    /// Why the criterion is met: first-hit rows of `when:` and `says:` (or a template).
    #[schemars(with = "Explanation")]
    pub met: Spanned<Explanation>,
    /// Why it is not, likewise.
    #[schemars(with = "Explanation")]
    pub not_met: Spanned<Explanation>,
    /// Named phrases the rows' sentences insert with `{{ phrases.NAME }}`, each first-hit rows.
    #[serde(default)]
    pub phrases: Phrases,
}

/// How a decision table picks among matching rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HitPolicy {
    /// The first matching row in order wins.
    First,
    /// At most one row may match; two matching rows are an evaluation error.
    Unique,
    /// Every matching row, in order (the value is a list).
    Collect,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Table {
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    pub title: Words,
    #[serde(default)]
    pub because: Option<Words>,
    pub hit: HitPolicy,
    /// What the rows test, each an expression evaluated once per profile: with inputs, a row
    /// gives `cells:` (a unary test per input) instead of `when:`.
    #[serde(default)]
    pub inputs: Vec<InputColumn>,
    pub rows: Vec<Row>,
    /// The row used when no row matches (it has no `when`).
    #[serde(default)]
    pub default: Option<Row>,
    /// What happens when no row matches and there is no `default:` row. A `first` or `unique`
    /// table needs one of the two, so that "no row" is a decision somebody made.
    #[serde(default)]
    pub no_match: Option<NoMatch>,
}

/// What a table gives when no row matches and it has no `default:` row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NoMatch {
    /// The value is none (an empty list for `collect`): "no row" is a valid answer.
    None,
    /// Evaluation fails: the rows are meant to cover every input, and `decide validate`
    /// reports the inputs they miss.
    Error,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Row {
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    pub title: Words,
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub when: Option<ExprText>,
    /// In a table with `inputs:`, a unary test per input id (`-` or left out: any value;
    /// `'a', 'b'`: one of; `< 10`, `[7..10]`, `!= 'x'`, `not none`; anything else an
    /// expression where `$` is the input).
    #[serde(default)]
    #[schemars(with = "IndexMap<String, String>")]
    pub cells: IndexMap<String, CellText>,
    /// Values the row gives (literals), merged into the row's value.
    #[serde(default)]
    pub then: IndexMap<String, serde_json::Value>,
    #[serde(default)]
    pub because: Option<Words>,
}

/// One input of a decision table: what its rows' cells test.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InputColumn {
    /// The name the rows' `cells:` use for it.
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    /// The expression (`profile.workload.task`, `deployment`, `container_offer is none`).
    #[schemars(with = "String")]
    pub expr: ExprText,
    #[serde(default)]
    pub title: Option<Words>,
}

/// A row's cell for one input, as written, with the expression it is read as when it is not a
/// unary test: `$` (the input) written as the name `_`, at the same byte offsets.
#[derive(Debug, Clone, Deserialize)]
#[serde(from = "Spanned<String>")]
pub struct CellText {
    pub text: Spanned<String>,
    pub expr: Spanned<String>,
}

impl From<Spanned<String>> for CellText {
    fn from(text: Spanned<String>) -> Self {
        let expr = Spanned {
            value: dollar_as_name(&text.value),
            referenced: text.referenced,
            defined: text.defined,
        };
        CellText { text, expr }
    }
}

/// `text` with every `$` outside quotes written as `_` (same length, so byte offsets hold):
/// the name a cell's expression reads its input by (`expr::unary::INPUT_NAME`).
#[must_use]
fn dollar_as_name(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            out.push(c);
        } else {
            if c == '\'' || c == '"' {
                quote = Some(c);
            }
            out.push(if c == '$' { '_' } else { c });
        }
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Pick {
    /// The first item after ordering, or none.
    #[default]
    First,
    /// Every item, in order.
    All,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Select {
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    pub title: Words,
    #[serde(default)]
    pub because: Option<Words>,
    /// The list to choose from, e.g. `offers`.
    #[schemars(with = "String")]
    pub from: ExprText,
    /// The name each item is bound to in `where`, `order_by` and `map`.
    #[serde(default = "default_item", rename = "as")]
    pub item: String,
    /// Keep the items for which this is true.
    #[serde(default, rename = "where")]
    #[schemars(with = "Option<String>")]
    pub filter: Option<ExprText>,
    /// Sort the kept items by this (ascending; ties keep their order).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub order_by: Option<ExprText>,
    /// What each kept item becomes (default: the item itself): an expression, a record of
    /// `field: expression` lines, or first-hit cases.
    #[serde(default)]
    pub map: Option<FormulaText>,
    #[serde(default)]
    pub pick: Pick,
    /// Choose once per catalog offer: `from` is evaluated with the offer bound as `offer` (its
    /// items, named by `as:`, carry what `where`, `order_by` and `map` need of it); the value
    /// maps offer id to result, leaving out offers for which it is `none`.
    #[serde(default)]
    pub per_offer: bool,
    /// Named phrases the sentences of `map:` insert with `{{ phrases.NAME }}`.
    #[serde(default)]
    pub phrases: Phrases,
}

/// A search: every combination of its variables' values is a candidate; the candidates that
/// meet every constraint are compared by `minimize`, and the least wins (ties: the first in the
/// order the variables list their values). Its value is a record: `best` (the winner, or none),
/// `first` (the first candidate in the lists' order that meets every constraint), `nearest` (where nothing meets every constraint, the candidate `nearest` makes least),
/// `searched` and `feasible` (counts), `ruled_out` (per constraint, how many candidates it was
/// the first to rule out) and `cheaper` (per constraint, the least-cost candidate it ruled out
/// where that costs less than `best`). A candidate is a record of the variables, the `let`
/// values, `objective` (what `minimize` gave) and, ruled out, `broken` (the constraint's id).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Search {
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    pub title: Words,
    #[serde(default)]
    pub because: Option<Words>,
    /// Search once per catalog offer, bound as `offer` in every expression; the value maps
    /// offer id to that offer's search.
    #[serde(default)]
    pub per_offer: bool,
    /// The decision variables, in order: each takes the values of a list (`over:`, which may
    /// read the variables before it).
    pub variables: Vec<SearchVariable>,
    /// Values worked out for each candidate, in order; each may read the variables and the
    /// values before it.
    #[serde(default, rename = "let")]
    pub derived: Vec<SearchValue>,
    /// The hard constraints, in the order a buyer reasons: a candidate that breaks one is
    /// ruled out, and the first it breaks is why.
    #[serde(default)]
    pub constraints: Vec<SearchConstraint>,
    /// What the search makes least: a number, or a list of numbers compared in order. A
    /// candidate ruled out may give none (it is then no cheaper than anything).
    #[schemars(with = "String")]
    pub minimize: ExprText,
    /// Where no candidate meets every constraint: what the nearest candidate makes least (by
    /// how much it misses, say). Without it, `nearest` is none.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub nearest: Option<ExprText>,
    /// A value no candidate from this one to the end of the last variable's list makes
    /// `minimize` less than, read from the variables alone (a bill that only grows with the
    /// count, say). Once a candidate meets every constraint and the bound is no less than the
    /// best's objective, the rest of that list is not tried (none: no bound here). `decide
    /// validate` searches the `reference:` lists without it, so a bound that cuts off a
    /// cheaper candidate shows as a gap.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub bound: Option<ExprText>,
}

/// A decision variable of a search.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchVariable {
    /// Its name in the search's expressions and in the candidates' records.
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    /// The values it takes (a list; `range(a, b)` is a to b − 1).
    #[schemars(with = "String")]
    pub over: ExprText,
    /// A wider list of values that `decide validate` searches exhaustively on its generated
    /// profiles, to prove that `over` leaves out no candidate that would win.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub reference: Option<ExprText>,
}

/// A value of a search worked out for each candidate.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchValue {
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    #[schemars(with = "String")]
    pub expr: ExprText,
}

/// A hard constraint of a search.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchConstraint {
    /// What a ruled-out candidate's `broken` says.
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    /// True for a candidate that meets it.
    #[schemars(with = "String")]
    pub holds: ExprText,
}

fn default_item() -> String {
    "offer".to_owned()
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Warning {
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    pub title: Words,
    #[serde(default)]
    pub because: Option<Words>,
    /// Raises the warning when true.
    #[schemars(with = "String")]
    pub when: ExprText,
    /// The message shown: first-hit rows of `when:` and `says:` (or a template).
    #[schemars(with = "Explanation")]
    pub message: Spanned<Explanation>,
    /// Named phrases the rows' sentences insert with `{{ phrases.NAME }}`, each first-hit rows.
    #[serde(default)]
    pub phrases: Phrases,
}

/// A statement that must hold for every decision. It reads nodes like an output expression
/// does, and is no node itself: it has no value in the record, the trace or the graph.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Invariant {
    /// Unique among all node ids and invariant ids.
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    pub title: Words,
    /// Must evaluate to true for every profile; false (or anything but true or false) is a
    /// violation.
    #[schemars(with = "String")]
    pub holds: ExprText,
    /// The message shown when `holds` is not true: first-hit rows of `when:` and `says:` (or a
    /// template).
    #[schemars(with = "Explanation")]
    pub message: Spanned<Explanation>,
    /// Named phrases the rows' sentences insert with `{{ phrases.NAME }}`.
    #[serde(default)]
    pub phrases: Phrases,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ChecklistItem {
    #[schemars(with = "String")]
    pub id: Spanned<String>,
    pub title: Words,
    /// Which part of the memo the item is in: `signer` (default), a term to get in writing
    /// before signing, in full in the signer's part; `engineer`, a check the engineer runs on
    /// the machines or the service (at a trial or on delivery), named in the signer's part and
    /// in full in the engineer's appendix.
    #[serde(default)]
    pub part: ChecklistPart,
    /// The item applies when true (default: always).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub when: Option<ExprText>,
    /// The item's text, tailored to the offer and workload: first-hit rows of `when:` and
    /// `says:` (or a template).
    #[schemars(with = "Explanation")]
    pub text: Spanned<Explanation>,
    /// Named phrases the rows' sentences insert with `{{ phrases.NAME }}`.
    #[serde(default)]
    pub phrases: Phrases,
}

/// One question of `decide init`. How it is asked follows the profile field's type: a choice
/// for enumerations, yes/no for flags, a number checked against the field's range, several
/// choices for lists, one number per catalog offer for a map of hours, one or several catalog
/// offers with `offer: true`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Question {
    /// The profile field the answer fills, as a dotted path (`usage.gpus`).
    #[schemars(with = "String")]
    pub field: Spanned<String>,
    /// The question.
    pub ask: Words,
    /// A one-line explanation shown with it.
    #[serde(default)]
    pub help: Option<Words>,
    /// Labels for the values of a field with fixed choices (value → words).
    #[serde(default)]
    pub choices: IndexMap<String, Words>,
    /// The answer is one of the catalog's offer ids (several, for a list field).
    #[serde(default)]
    pub offer: bool,
    /// With `offer`: offer only the ids that are keys of this profile field as answered so far
    /// (a dotted path to a map such as `job.hours`); with none there, the question is skipped.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub among: Option<Spanned<String>>,
    /// Ask only when this is true: an expression over `profile`, the answers so far (e.g.
    /// `profile.workload.task == 'inference'`). An unanswered field is undefined (`is defined`
    /// tests for it); a skipped question leaves its field unset.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub when: Option<Spanned<String>>,
    /// For a number (or hours per offer): what the answer counts, echoed with the value
    /// understood ("→ 20,000 yuan").
    #[serde(default)]
    pub unit: Option<Words>,
    /// For a number: signs of the unit that may stand before or after it and are read past
    /// (`¥`, `元`).
    #[serde(default)]
    pub symbols: Vec<String>,
    /// For a number: what a shorthand means in the question's unit, replacing the
    /// questionnaire's `shorthands` for this question. A key after a number multiplies it
    /// (`B: 1` where the unit is billions, so `13B` is 13; `k: 1024` for `8k` tokens); a key
    /// that is the whole answer is the value itself (`24/7: 720` hours a month).
    #[serde(default)]
    #[schemars(with = "Option<IndexMap<String, f64>>")]
    pub shorthands: Option<Spanned<IndexMap<String, f64>>>,
}

/// `decide init`'s own words and the number shorthands every question accepts.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Questionnaire {
    /// What a number answer may end with, and what it multiplies the number by (`万: 10000`,
    /// `k: 1000`), for every number question without its own `shorthands:`. Full-width digits
    /// and thousands separators (`8,192`, `8 192`) are always read.
    #[serde(default)]
    #[schemars(with = "Option<IndexMap<String, f64>>")]
    pub shorthands: Option<Spanned<IndexMap<String, f64>>>,
    /// The prompts' fixed words; `{name}` marks where a value goes.
    pub words: PromptWords,
}

/// The fixed words of `decide init`, in English and Chinese.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PromptWords {
    /// The label of "no value" in a list of choices.
    #[schemars(with = "Words")]
    pub none: Template,
    /// The keys of a choice from a list.
    #[schemars(with = "Words")]
    pub select_help: Template,
    /// The keys of a choice of several.
    #[schemars(with = "Words")]
    pub multiselect_help: Template,
    /// Yes and no, as shown once answered.
    #[schemars(with = "Words")]
    pub yes_shown: Template,
    #[schemars(with = "Words")]
    pub no_shown: Template,
    /// The hint after a yes/no question whose default is yes, and whose default is no (`Y/n`,
    /// `y/N`): in a language without letter case, the default said in words.
    #[schemars(with = "Words")]
    pub yes_default: Template,
    #[schemars(with = "Words")]
    pub no_default: Template,
    /// What may be typed for yes and for no, separated by `/` (`y/yes`).
    #[schemars(with = "Words")]
    pub yes_typed: Template,
    #[schemars(with = "Words")]
    pub no_typed: Template,
    /// A yes/no answer not understood.
    #[schemars(with = "Words")]
    pub yes_no_invalid: Template,
    /// A number answer echoed with what was understood: `{answer}` and `{value}`.
    #[schemars(with = "Words")]
    pub understood: Template,
    /// An empty answer where one is needed.
    #[schemars(with = "Words")]
    pub needed: Template,
    /// `{answer}` is not a number.
    #[schemars(with = "Words")]
    pub not_a_number: Template,
    /// Thousands separators in the wrong places in `{answer}`.
    #[schemars(with = "Words")]
    pub thousands: Template,
    /// `{suffix}` is not a shorthand of this question; `{accepted}` lists those that are.
    #[schemars(with = "Words")]
    pub unknown_shorthand: Template,
    /// A number with a fraction where a whole number is needed.
    #[schemars(with = "Words")]
    pub whole: Template,
    /// Below `{bound}`, at `{bound}` or below, above `{bound}`.
    #[schemars(with = "Words")]
    pub at_least: Template,
    #[schemars(with = "Words")]
    pub greater_than: Template,
    #[schemars(with = "Words")]
    pub at_most: Template,
    /// One hours question per offer: `{offer}` is its title and price.
    #[schemars(with = "Words")]
    pub hours_on: Template,
    /// Asked before writing the profile, after writing (`{file}`), and before deciding it.
    #[schemars(with = "Words")]
    pub write: Template,
    #[schemars(with = "Words")]
    pub wrote: Template,
    #[schemars(with = "Words")]
    pub decide_now: Template,
    /// After deciding: the memo was written to `{file}` (beside the profile), or `{file}`
    /// was there already and kept (`{profile}` is the profile's file, to say the command).
    #[schemars(with = "Words")]
    pub memo_wrote: Template,
    #[schemars(with = "Words")]
    pub memo_kept: Template,
    /// The first line of the profile file written.
    #[schemars(with = "Words")]
    pub file_header: Template,
    /// How to go back one question (`<`), shown with every typed answer's help.
    #[schemars(with = "Words")]
    pub back_hint: Template,
    /// After Esc: the question, and its three choices.
    #[schemars(with = "Words")]
    pub escape_ask: Template,
    #[schemars(with = "Words")]
    pub go_on: Template,
    #[schemars(with = "Words")]
    pub go_back: Template,
    #[schemars(with = "Words")]
    pub quit: Template,
    /// An offer in a picker: `{title}` and `{price}` (the offer's price in words of `prices`).
    #[schemars(with = "Words")]
    pub offer_label: Template,
    /// An offer's price by its `price.unit` (`month`, `gpu_hour`): `{amount}` is the price
    /// paid (`price.discounted_cny`). An offer whose unit is not here is shown by title alone.
    #[serde(default)]
    #[schemars(with = "IndexMap<String, Words>")]
    pub prices: IndexMap<String, Template>,
    /// An offer whose price paid is lower than its list price for a commitment, by its
    /// `billing.discount_commits` (`month`): `{list}` and `{committed}` are both prices in the
    /// words of `prices` (the container's `¥1.96 a GPU-hour; ¥1.57 on a monthly payment`). A
    /// commitment not here shows the price paid alone.
    #[serde(default)]
    #[schemars(with = "IndexMap<String, Words>")]
    pub committed: IndexMap<String, Template>,
}

impl PromptWords {
    /// Every entry by name, with the placeholders it must contain.
    #[must_use]
    pub fn entries(&self) -> [(&'static str, &Template, &'static [&'static str]); 32] {
        [
            ("none", &self.none, &[]),
            ("select_help", &self.select_help, &[]),
            ("multiselect_help", &self.multiselect_help, &[]),
            ("yes_shown", &self.yes_shown, &[]),
            ("no_shown", &self.no_shown, &[]),
            ("yes_default", &self.yes_default, &[]),
            ("no_default", &self.no_default, &[]),
            ("yes_typed", &self.yes_typed, &[]),
            ("no_typed", &self.no_typed, &[]),
            ("yes_no_invalid", &self.yes_no_invalid, &[]),
            ("understood", &self.understood, &["answer", "value"]),
            ("needed", &self.needed, &[]),
            ("not_a_number", &self.not_a_number, &["answer"]),
            ("thousands", &self.thousands, &["answer"]),
            (
                "unknown_shorthand",
                &self.unknown_shorthand,
                &["suffix", "accepted"],
            ),
            ("whole", &self.whole, &[]),
            ("at_least", &self.at_least, &["bound"]),
            ("greater_than", &self.greater_than, &["bound"]),
            ("at_most", &self.at_most, &["bound"]),
            ("hours_on", &self.hours_on, &["offer"]),
            ("write", &self.write, &[]),
            ("wrote", &self.wrote, &["file"]),
            ("decide_now", &self.decide_now, &[]),
            ("memo_wrote", &self.memo_wrote, &["file"]),
            ("memo_kept", &self.memo_kept, &["file", "profile"]),
            ("file_header", &self.file_header, &[]),
            ("offer_label", &self.offer_label, &["title", "price"]),
            ("back_hint", &self.back_hint, &[]),
            ("escape_ask", &self.escape_ask, &[]),
            ("go_on", &self.go_on, &[]),
            ("go_back", &self.go_back, &[]),
            ("quit", &self.quit, &[]),
        ]
    }
}

/// What-would-change-the-answer analysis: the profile fields to vary and the words for it. The
/// engine varies each field alone, re-evaluates, and reports for every criterion and for the
/// deployment and offer the nearest value at which they change.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sensitivity {
    /// Words for the decision's `deployment` and `offer` (criteria use their titles).
    #[serde(default)]
    pub targets: IndexMap<String, Words>,
    /// Words for values a decision takes, e.g. `bare_metal`, `container`, `true`, `false`.
    #[serde(default)]
    pub values: IndexMap<String, Words>,
    /// Nodes watched besides the deployment, the offer and the criteria (the GPUs rented,
    /// say): the nearest change of each field that changes one is a line too, with its cost.
    #[serde(default)]
    pub watch: Vec<Watched>,
    /// The fields to vary, in the order they are tried.
    pub fields: Vec<Probe>,
    /// The sentence of one change, given `target`, `before`, `after` (words), `change` and `now`
    /// (the field at the new and current values, from its `says`), `direction` (`up`, `down`,
    /// `set` for a flag or a choice, `add` or `remove` for an item of a list, `below` or
    /// `above` for a change just past a number the rules write), `cost` (the policy's headline
    /// cost, `outputs.promises.headline_cost`, at the new value; none without one), `id` and
    /// `field`: rows of `when:` and `says:` (or one template).
    #[schemars(with = "Explanation")]
    pub text: Spanned<Explanation>,
    /// Sentence for a number field no value of which changes the deployment or the offer,
    /// given `target`, `before`, `name` (the field's name), `now`, and when another field's
    /// change would, `given` (that change) and `line` (where this field then changes it).
    #[serde(default)]
    #[schemars(with = "Option<Explanation>")]
    pub unchanged: Option<Spanned<Explanation>>,
    /// Named phrases the sentences above and the fields' `says` insert with
    /// `{{ phrases.NAME }}`, each first-hit rows of `when:` and `says:`.
    #[serde(default)]
    pub phrases: Phrases,
}

/// A node the sensitivity analysis watches besides the deployment, the offer and the criteria.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Watched {
    /// The node's id.
    #[schemars(with = "String")]
    pub node: Spanned<String>,
    /// What it is, in a sentence (`The GPUs rented`).
    pub title: Words,
    /// The probed fields whose changes are watched for it (default: every field): each one more
    /// search, so a policy may keep it to the buyer's levers.
    #[serde(default)]
    pub fields: Vec<String>,
}

/// One profile field the sensitivity analysis varies.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    /// The profile field, as a dotted path (`usage.hours_per_gpu_month`); a number, a whole
    /// number, a flag, a choice or a list of choices (each choice added or removed).
    #[schemars(with = "String")]
    pub field: Spanned<String>,
    /// The resolution of the search for numbers (default 1). Whole numbers always resolve to
    /// 1; their step spaces the values tried one by one each side of the profile's, and only
    /// one at step 1 (a count: GPUs, machines, sequences) is also tried at both ends of each
    /// whole box the catalog sells (`src/sensitivity.rs`).
    #[serde(default)]
    pub step: Option<f64>,
    /// The sentence that says the field at `value` (rows of `when:` and `says:`, or one
    /// sentence), e.g. `{{ value | num }} busy hours per GPU`.
    /// For a list field, `value` is the whole list, and a change also gives `added` or
    /// `removed`: the item toggled (`with tensor parallelism`).
    #[schemars(with = "Explanation")]
    pub says: Spanned<Explanation>,
    /// The field's name in a sentence, e.g. `busy hours per GPU` (default: its path).
    #[serde(default)]
    pub name: Option<Words>,
    /// When no value of this field alone changes the deployment or the offer, say where its
    /// line lies under the nearest change of this other probed field (e.g. busy hours under a
    /// change of busy GPUs); uses `unchanged`.
    #[serde(default)]
    pub line_under: Option<String>,
    /// A choice the profile may leave out (the policy then assumes its default): search every
    /// choice also where the profile gives none. `says` then words the field at `value` none
    /// as the default it stands for.
    #[serde(default)]
    pub unset: bool,
    /// Search this field only when this is true of the decision being explained: a rule
    /// expression over the nodes and `profile`, like an output's (e.g. `layout == 'sharded'`;
    /// machines per job change nothing for serving replicas). Checked when the rules load.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub when: Option<Spanned<String>>,
}

/// One node as written, whatever its kind: the policy keeps every node in one list.
#[derive(Debug, Clone)]
pub enum RuleNode {
    Fact(Fact),
    Criterion(Criterion),
    Table(Table),
    Select(Select),
    Search(Search),
    Warning(Warning),
    Checklist(ChecklistItem),
}

impl Fact {
    /// What the fact's number measures: its `quantity:` read (an error in words where it does
    /// not), else the dimension its display `unit:` names (`cny`, `hour`, `day`, `gb`), else
    /// none. A fact of a type other than a number measures nothing.
    #[must_use]
    pub fn measure(&self) -> Option<Result<Measure, BadMeasure>> {
        if !matches!(
            self.kind,
            FieldType::Number | FieldType::Integer | FieldType::Any
        ) {
            return None;
        }
        if let Some(text) = &self.quantity {
            return Some(Measure::parse(&text.value));
        }
        let unit = match self.unit? {
            Unit::Cny => "cny",
            Unit::Hours => "hour",
            Unit::Days => "day",
            Unit::Gb => "gb",
            Unit::Percent | Unit::Count | Unit::Ratio => return None,
        };
        Some(Ok(Measure::unit(unit)))
    }
}

impl RuleNode {
    /// The node's kind.
    #[must_use]
    pub fn kind(&self) -> NodeKind {
        match self {
            RuleNode::Fact(_) => NodeKind::Fact,
            RuleNode::Criterion(_) => NodeKind::Criterion,
            RuleNode::Table(_) => NodeKind::Table,
            RuleNode::Select(_) => NodeKind::Select,
            RuleNode::Search(_) => NodeKind::Search,
            RuleNode::Warning(_) => NodeKind::Warning,
            RuleNode::Checklist(_) => NodeKind::Checklist,
        }
    }

    /// The node's id, with where it was written.
    #[must_use]
    pub fn id(&self) -> &Spanned<String> {
        match self {
            RuleNode::Fact(n) => &n.id,
            RuleNode::Criterion(n) => &n.id,
            RuleNode::Table(n) => &n.id,
            RuleNode::Select(n) => &n.id,
            RuleNode::Search(n) => &n.id,
            RuleNode::Warning(n) => &n.id,
            RuleNode::Checklist(n) => &n.id,
        }
    }

    /// The node's title.
    #[must_use]
    pub fn title(&self) -> &Words {
        match self {
            RuleNode::Fact(n) => &n.title,
            RuleNode::Criterion(n) => &n.title,
            RuleNode::Table(n) => &n.title,
            RuleNode::Select(n) => &n.title,
            RuleNode::Search(n) => &n.title,
            RuleNode::Warning(n) => &n.title,
            RuleNode::Checklist(n) => &n.title,
        }
    }

    /// Why the node is there, if it says (checklist items do not).
    #[must_use]
    pub fn because(&self) -> Option<&Words> {
        match self {
            RuleNode::Fact(n) => n.because.as_ref(),
            RuleNode::Criterion(n) => n.because.as_ref(),
            RuleNode::Table(n) => n.because.as_ref(),
            RuleNode::Select(n) => n.because.as_ref(),
            RuleNode::Search(n) => n.because.as_ref(),
            RuleNode::Warning(n) => n.because.as_ref(),
            RuleNode::Checklist(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_cells_dollar_is_read_as_a_name_outside_quotes() {
        assert_eq!(
            super::dollar_as_name("$ > '$' and $ != \"a$\""),
            "_ > '$' and _ != \"a$\""
        );
    }
}
