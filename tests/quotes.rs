//! Quote sheets: a price change is a new CSV file, decisions follow `--as-of` (the new price
//! from its first day, not before), several vendors are alternatives, `decide offers` lists
//! what is on offer at a date and `decide quotes check` validates sheets before a commit.

use crate::common;

use std::path::Path;

use decide_engine::{Fault, Graph, Policy, Source};

const HEADER: &str = "offer,vendor,unit,list_price,discounted_price,currency,discount_commits,\
                      min_term,vat,invoice,valid_from,source\n";

/// A copy of the shipped rules with one more sheet, `quotes/NAME`, holding `rows` under the
/// header.
fn rules_with_sheet(name: &str, rows: &str) -> tempfile::TempDir {
    let dir = common::edited_rules(&[]);
    std::fs::write(
        dir.path().join("quotes").join(name),
        format!("{HEADER}{rows}"),
    )
    .unwrap();
    dir
}

/// The shipped rules with a second vendor, gpuhub, quoting the 4090 box for ¥7,500 (VAT
/// included) from 2026-09-10.
fn rules_with_gpuhub_at_7500() -> tempfile::TempDir {
    rules_with_sheet(
        "2026-09-10-gpuhub.csv",
        "rtx4090-x8-sichuan2,gpuhub,month,9375,7500,CNY,month,1 month,included,\
         VAT special invoice,2026-09-10,gpuhub quote e-mail of 2026-09-10\n",
    )
}

/// The alternative of gpuhub's 4090 quote in the record of `examples/lora-7b-4090.yaml` on
/// 2026-09-10, where the marketplace's quote is recommended.
fn gpuhub_lost_to_the_marketplace(rules: &Path) -> serde_json::Value {
    let after = record(rules, "examples/lora-7b-4090.yaml", "2026-09-10");
    assert_eq!(after["offer"], "rtx4090-x8-sichuan2", "{after}");
    gpuhub(&after)
}

/// `decide PROFILE --format json` with `rules` at `as_of`.
fn record(rules: &Path, profile: &str, as_of: &str) -> serde_json::Value {
    let text = common::run_ok(&[
        profile,
        "--format",
        "json",
        "--as-of",
        as_of,
        "--rules",
        rules.to_str().unwrap(),
    ]);
    serde_json::from_str(&text).unwrap()
}

/// The memo of `profile` with `rules` at `as_of`, the rules folder's path made stable.
fn memo(rules: &Path, profile: &str, as_of: &str) -> String {
    common::run_ok(&[
        profile,
        "--as-of",
        as_of,
        "--rules",
        rules.to_str().unwrap(),
    ])
    .replace(&rules.display().to_string(), "[RULES]")
}

/// [`memo`] in Chinese.
fn memo_zh(rules: &Path, profile: &str, as_of: &str) -> String {
    common::run_ok(&[
        profile,
        "--as-of",
        as_of,
        "--lang",
        "zh",
        "--rules",
        rules.to_str().unwrap(),
    ])
}

#[test]
fn a_new_4090_quote_changes_the_decision_from_its_first_day_and_not_before() {
    // The marketplace raises the 4090 box from ¥7,920 to ¥9,500 from 2026-10-01: above a
    // committed container month for its eight GPUs (8 × 720 h × ¥1.57 = ¥9,043.20).
    let rules = rules_with_sheet(
        "2026-10-01-marketplace.csv",
        "rtx4090-x8-sichuan2,marketplace,month,11875,9500,CNY,month,\"1 month, paid ahead\",\
         unknown,unknown,2026-10-01,marketplace listing of 2026-10-01\n",
    );
    let profile = "examples/lora-7b-4090.yaml";
    for day in ["2026-09-04", "2026-09-30"] {
        let before = record(rules.path(), profile, day);
        assert_eq!(before["deployment"], "bare_metal", "{day}");
        assert_eq!(before["offer"], "rtx4090-x8-sichuan2", "{day}");
        assert_eq!(before["costs"]["recommended_monthly_cny"], 7920.0, "{day}");
    }
    for day in ["2026-10-01", "2027-01-15"] {
        let after = record(rules.path(), profile, day);
        assert_eq!(after["deployment"], "container", "{day}");
        assert_eq!(after["offer"], "rtx4090-container", "{day}");
        assert_eq!(after["costs"]["recommended_monthly_cny"], 9043.2, "{day}");
    }
    // The memo of the day shows the new quote, its age and the quote before it.
    let text = memo(
        rules.path(),
        "examples/budget-training-4090.yaml",
        "2026-10-08",
    );
    assert!(
        text.contains(
            "quoted by marketplace from 2026-10-01 (7 days old on 2026-10-08; sheet \
             `2026-10-01-marketplace.csv`, line 2)"
        ),
        "{text}"
    );
    assert!(
        text.contains("The quote before, from 2026-09-04: ¥7,920 (+19.9% since)."),
        "{text}"
    );
    // The library prices a policy at a date the same way.
    let policy = Policy::from_dir(rules.path()).unwrap();
    let price = |p: &Policy| {
        p.offers
            .iter()
            .find(|o| o.item.id == "rtx4090-x8-sichuan2")
            .unwrap()
            .item
            .fields["price"]["discounted_cny"]
            .clone()
    };
    assert_eq!(price(&policy.at("2026-09-30".parse().unwrap())), 7920);
    assert_eq!(price(&policy.at("2026-10-01".parse().unwrap())), 9500);
}

/// Two vendors quoting one price: the price lock names the other quote as the same price, not
/// as "¥0" more or less.
#[test]
fn a_rival_quote_at_the_same_price_is_named_as_such() {
    let rules = rules_with_sheet(
        "2026-09-10-gpuhub.csv",
        "rtx4090-x8-sichuan2,gpuhub,month,9900,7920,CNY,month,1 month,included,\
         VAT special invoice,2026-09-10,gpuhub quote e-mail of 2026-09-10\n",
    );
    let text = memo(rules.path(), "examples/lora-7b-4090.yaml", "2026-09-10");
    let lock = text
        .lines()
        .find(|l| l.contains("**Price lock.**"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(lock.contains("(the same price)"), "{lock}");
    assert!(!lock.contains("¥0"), "{lock}");
}

#[test]
fn another_vendors_quote_is_an_offer_of_its_own_and_the_memo_says_whose_won() {
    // gpuhub quotes the same 4090 box for ¥7,500 from 2026-09-10.
    let rules = rules_with_gpuhub_at_7500();
    let profile = "examples/lora-7b-4090.yaml";
    let before = record(rules.path(), profile, "2026-09-09");
    assert_eq!(before["offer"], "rtx4090-x8-sichuan2");
    let after = record(rules.path(), profile, "2026-09-10");
    assert_eq!(after["offer"], "rtx4090-x8-sichuan2@gpuhub");
    assert_eq!(after["costs"]["recommended_monthly_cny"], 7500.0);
    let alternatives = after["alternatives"].as_array().unwrap();
    let lost = alternatives
        .iter()
        .find(|a| a["offer"] == "rtx4090-x8-sichuan2")
        .expect("the marketplace's quote is an alternative");
    assert_eq!(lost["chosen"], false);
    let text = memo(rules.path(), profile, "2026-09-10");
    // With two vendors quoted, the headline says whose box to rent; with one, it need not.
    assert!(
        text.contains(
            "> **Rent bare metal: RTX 4090 24G ×8 (Sichuan zone 2) from gpuhub, ¥7,500 a month.**"
        ),
        "{text}"
    );
    let shipped = common::run_ok(&[profile, "--as-of", "2026-09-10"]);
    assert!(
        shipped
            .contains("> **Rent bare metal: RTX 4090 24G ×8 (Sichuan zone 2), ¥7,920 a month.**"),
        "{shipped}"
    );
    assert!(
        text.contains(
            "Of the quotes for this hardware, gpuhub's (¥7,500, from 2026-09-10) won: \
             the jygpu.com marketplace's ¥7,920 (`rtx4090-x8-sichuan2`) costs ¥420 more a month."
        ),
        "{text}"
    );
    // ¥420 is 5.6% of ¥7,500: the quotes are volatile, and the price lock names them.
    assert!(
        text.contains(
            "Other vendors quote the same hardware: the jygpu.com marketplace ¥7,920 from 2026-09-04 (¥420 more)"
        ),
        "{text}"
    );
    // In Chinese, a vendor whose sheet gives its Chinese name (`vendor_name_zh`) is named by it;
    // one whose sheet gives none, by its id.
    let zh = memo_zh(rules.path(), profile, "2026-09-10");
    assert!(
        zh.contains("极智算 报 ¥7,920") || zh.contains("极智算报 ¥7,920"),
        "{zh}"
    );
    assert!(zh.contains("gpuhub"), "{zh}");
    assert!(!zh.contains("jygpu.com marketplace"), "{zh}");
    // The ids never change as sheets are added: the first vendor keeps the catalog id.
    let listing = common::run_ok(&[
        "offers",
        "--as-of",
        "2026-09-10",
        "--rules",
        rules.path().to_str().unwrap(),
    ]);
    assert!(listing.contains("| `rtx4090-x8-sichuan2` |"), "{listing}");
    assert!(
        listing.contains("| `rtx4090-x8-sichuan2@gpuhub` |"),
        "{listing}"
    );
}

/// A vendor quoting the H100 box in Beijing zone 3 (the catalog's is Ningxia zone 1): its offer
/// is titled with its region, in each language, wherever an offer's title is shown; the
/// catalog vendor's keeps the catalog's.
#[test]
fn a_vendors_own_region_is_in_its_offers_title() {
    let rules = common::edited_rules(&[]);
    std::fs::write(
        rules.path().join("quotes/2026-09-10-bjcloud.csv"),
        "offer,vendor,region,region_zh,unit,list_price,discounted_price,currency,\
         discount_commits,min_term,vat,invoice,valid_from,source\n\
         h100-x8-ningxia1,bjcloud,Beijing zone 3,北京三区,month,99000,79000,CNY,month,1 month,\
         unknown,unknown,2026-09-10,bjcloud quote e-mail of 2026-09-10\n",
    )
    .unwrap();
    let dir = rules.path().to_str().unwrap();
    let listing: serde_json::Value = serde_json::from_str(&common::run_ok(&[
        "offers",
        "--as-of",
        "2026-09-10",
        "--rules",
        dir,
        "--format",
        "json",
    ]))
    .unwrap();
    let title = |id: &str| {
        listing["offers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["id"] == id)
            .unwrap_or_else(|| panic!("no {id} in {listing}"))["title"]
            .clone()
    };
    assert_eq!(
        title("h100-x8-ningxia1@bjcloud"),
        "H100 80G ×8 (Beijing zone 3)"
    );
    assert_eq!(title("h100-x8-ningxia1"), "H100 80G ×8 (Ningxia zone 1)");
    // A 70B service that the Beijing box wins at ¥79,000: the memo's answer names its region,
    // in Chinese too, and not the catalog's (which the sources still give for the marketplace's
    // quote of the same hardware).
    for (lang, region, catalog) in [
        ("en", "Beijing zone 3", "Ningxia zone 1"),
        ("zh", "北京三区", "宁夏一区"),
    ] {
        let memo = common::run_ok(&[
            "examples/serving-70b-h100-or-910b.yaml",
            "--as-of",
            "2026-09-10",
            "--rules",
            dir,
            "--lang",
            lang,
        ]);
        let answer = memo.lines().find(|l| l.starts_with("> **")).unwrap();
        assert!(answer.contains("H100 80G ×8"), "{answer}");
        assert!(answer.contains(region), "{answer}");
        assert!(!answer.contains(catalog), "{answer}");
        // The catalog knows Ningxia zone 1 is western, not where this vendor delivers from.
        let delivery = memo
            .lines()
            .find(|l| l.contains("**Delivery date.**") || l.contains("**交付时间。**"))
            .unwrap();
        assert!(
            !delivery.contains("western") && !delivery.contains("西部"),
            "{delivery}"
        );
        assert!(
            delivery.contains("own region") || delivery.contains("供应商自己的区域"),
            "{delivery}"
        );
    }
}

#[test]
fn decide_offers_lists_the_quotes_in_force() {
    assert_snapshot!(
        "offers_2026-09-04",
        common::run_ok(&["offers", "--as-of", "2026-09-04"])
    );
    assert_snapshot!(
        "offers_2026-07-15",
        common::run_ok(&["offers", "--as-of", "2026-07-15"])
    );
    assert_snapshot!(
        "offers_2026-09-04_json",
        common::run_ok(&["offers", "--as-of", "2026-09-04", "--format", "json"])
    );
}

#[test]
fn the_same_example_at_two_dates() {
    // At the listing's date the quotes are new; three months on they are stale, and the memo
    // says how old each is and how the prices moved. The same date always gives the same bytes.
    for day in ["2026-09-04", "2026-12-01"] {
        let text = common::run_ok(&["examples/pretrain-70b-job.yaml", "--as-of", day]);
        assert_eq!(
            text,
            common::run_ok(&["examples/pretrain-70b-job.yaml", "--as-of", day])
        );
        assert_snapshot!(format!("memo_pretrain-70b-job_{day}"), text);
    }
}

/// The second shipped set of sheets (issue 47 item 7): the global clouds' published hourly
/// prices in US dollars (the two clouds of one vendor and Lambda, 2026-09-25; the first again
/// 2026-11-09), each quote marked `data_abroad`. A profile whose data may leave China rents the
/// cheapest container that holds its 13B fine-tune, the community cloud's H100 at USD 2.69
/// (with the 6% VAT the buyer withholds, ¥20.01 a GPU-hour), over the 4090 box (¥7,920) and the
/// other vendors' H100s; the memo converts at the dated rate, says the VAT is withheld, not
/// invoiced, and asks the data's owner to clear the export. The same profile with its data kept
/// in China rents the box, every quote abroad losing for that reason, and its sensitivity names
/// the flag that would flip it.
#[test]
fn a_quote_from_abroad_is_rented_only_where_the_data_may_leave_china() {
    let example = "examples/global-cloud-h100-finetune.yaml";
    let day = "2026-12-01";
    let text = common::run_ok(&[example, "--as-of", day]);
    for said in [
        "> **Rent containers: H100 80G SXM container (per GPU-hour) from RunPod Community Cloud, \
         ¥4,802 a month (8 GPUs × 30 h at ¥20.01/GPU-hour).**",
        "| Currency | H100 80G SXM container (per GPU-hour) is quoted in USD (USD 2.69 a GPU-hour), \
         converted at ¥7.0197 a USD, the rate from 2026-01-08",
        "Figures include the VAT the company withholds (6%, a service contract): a vendor abroad \
         issues no Chinese invoice",
        "- [ ] **Data leaving China.** H100 80G SXM container (per GPU-hour) from RunPod \
         Community Cloud (third parties' hosts on RunPod's marketplace, outside mainland China): \
         the data leaves mainland China, which the profile allows",
        "| 8 × H100 80G SXM container (per GPU-hour) (RunPod Secure Cloud) | by the GPU-hour | \
         ¥7,126 | ¥2,323 more a month |",
        "| 8 × H100 80G SXM container (per GPU-hour) (Lambda) | by the GPU-hour | ¥7,666 | \
         ¥2,863 more a month |",
        "| RTX 4090 24G ×8 (Sichuan zone 2) (the jygpu.com marketplace) | by the month | ¥7,920 | \
         ¥3,118 more a month |",
    ] {
        assert!(text.contains(said), "{said}\n\n{text}");
    }
    // A pod sold at one rate has no second, monthly-payment term to price.
    assert!(!text.contains("monthly-payment"), "{text}");
    assert_snapshot!(format!("memo_global-cloud-h100-finetune_{day}"), text);
    let zh = common::run_ok(&[example, "--as-of", day, "--lang", "zh"]);
    for said in [
        "由 RunPod 社区云提供，每月 ¥4,802",
        "以上金额包含公司代扣代缴的增值税（6%，服务合同）",
        "**数据出境。** RunPod 社区云的 H100 80G SXM 容器（按卡时）（RunPod 平台上的第三方主机（中国大陆境外））：数据将离开中国大陆",
    ] {
        assert!(zh.contains(said), "{said}\n\n{zh}");
    }
    assert_snapshot!(format!("memo_global-cloud-h100-finetune_{day}_zh"), zh);

    // The data kept in China: the box, each quote abroad out for that reason alone.
    let dir = tempfile::tempdir().unwrap();
    let kept = dir.path().join("kept.yaml");
    std::fs::write(
        &kept,
        common::repo_text(example)
            .replace("data_abroad_allowed: true", "data_abroad_allowed: false"),
    )
    .unwrap();
    let kept = kept.to_str().unwrap();
    let text = common::run_ok(&[kept, "--as-of", day]);
    assert!(
        text.contains("> **Rent bare metal: RTX 4090 24G ×8 (Sichuan zone 2)"),
        "{text}"
    );
    let abroad = "outside mainland China: the data would leave China, which the profile does not \
                  allow (`requirements.data_abroad_allowed`)";
    for vendor in ["RunPod Secure Cloud", "Lambda", "RunPod Community Cloud"] {
        let row =
            format!("| 8 × H100 80G SXM container (per GPU-hour) ({vendor}) | by the GPU-hour |");
        let line = text
            .lines()
            .find(|l| l.starts_with(&row))
            .unwrap_or_else(|| panic!("{row}\n{text}"));
        assert!(line.ends_with(&format!("| {abroad} |")), "{line}");
    }
    assert!(!text.contains("**Data leaving China.**"), "{text}");
    let record: serde_json::Value =
        serde_json::from_str(&common::run_ok(&[kept, "--as-of", day, "--format", "json"])).unwrap();
    let flips = record["sensitivity"].to_string();
    assert!(
        flips.contains(
            "The offer turns from RTX 4090 24G ×8 (Sichuan zone 2) to H100 80G SXM \
                        container (per GPU-hour) with the data allowed to leave China"
        ),
        "{flips}"
    );
    // Before the global clouds' first quote the example rents what is quoted in China.
    let before = common::run_ok(&[example, "--as-of", "2026-09-24"]);
    assert!(
        !before.contains("RunPod") && !before.contains("Lambda"),
        "{before}"
    );
}

/// A `data_abroad` cell says `yes` or `no`; another word is refused at its cell, and
/// `decide quotes check` says where a valid quote's hardware is.
#[test]
fn a_data_abroad_cell_is_yes_or_no() {
    let checked = common::run_ok(&[
        "quotes",
        "check",
        "rules/quotes/2026-09-25-lambda.csv",
        "--as-of",
        "2026-12-01",
    ]);
    assert!(
        checked.contains("; outside mainland China: the buyer's data leaves China (`data_abroad`)"),
        "{checked}"
    );
    let rules = common::edited_rules(&[(
        "quotes/2026-09-25-lambda.csv",
        "Lambda 美国数据中心（中国大陆境外）,yes,",
        "Lambda 美国数据中心（中国大陆境外）,abroad,",
    )]);
    let out = common::run(&[
        "quotes",
        "check",
        "--rules",
        rules.path().to_str().unwrap(),
        "--as-of",
        "2026-12-01",
        rules
            .path()
            .join("quotes/2026-09-25-lambda.csv")
            .to_str()
            .unwrap(),
    ]);
    let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    for fault in [
        "2026-09-25-lambda.csv:11:",
        "error: data_abroad:",
        "`abroad` is not `yes` or `no`",
        "outside mainland China",
    ] {
        assert!(said.contains(fault), "{fault}\n{said}");
    }
}

/// Every date on which a shipped quote sheet takes effect, and the day before the first.
fn sheet_dates() -> Vec<jiff::civil::Date> {
    let mut dates: Vec<_> = Policy::embedded()
        .unwrap()
        .quotes
        .iter()
        .map(|q| q.valid_from)
        .collect();
    dates.sort_unstable();
    dates.dedup();
    dates
}

#[test]
fn every_example_decides_on_every_date_a_quote_sheet_takes_effect() {
    // July 2026 quotes three boxes and no container: a decision then weighs what was quoted,
    // and says that no container is, rather than failing on the rate it lacks.
    let dates = sheet_dates();
    assert!(
        dates.len() >= 2,
        "the shipped rules have sheets of several dates"
    );
    let memo = decide_tools::Memo::embedded().unwrap();
    let mut without_containers = 0;
    for date in dates {
        for lang in [decide_engine::Lang::En, decide_engine::Lang::Zh] {
            let graph = Graph::compile_in(Policy::embedded().unwrap().at(date), lang).unwrap();
            let container_quoted =
                graph.policy().offers.iter().any(|o| {
                    o.item.fields.get("kind").and_then(|k| k.as_str()) == Some("container")
                });
            for path in common::examples() {
                let name = format!("{} at {date} ({})", path.display(), lang.code());
                let source = Source::read(&path, decide_engine::ErrorKind::Profile).unwrap();
                let (profile, evaluation) = decide_tools::decide(&graph, &source, date)
                    .unwrap_or_else(|e| panic!("{name}: {}", e.render()));
                let text = memo
                    .render(
                        &graph,
                        &profile,
                        &evaluation,
                        decide_tools::Format::Markdown,
                    )
                    .unwrap_or_else(|e| panic!("{name}: {}", e.render()));
                if !container_quoted {
                    without_containers += 1;
                    assert_eq!(evaluation.decision.deployment, "bare_metal", "{name}");
                    if lang == decide_engine::Lang::En {
                        assert!(
                            text.contains(&format!("none is quoted on {date}")),
                            "{name}: the memo says no container is quoted\n{text}"
                        );
                    }
                }
            }
        }
    }
    assert!(
        without_containers > 0,
        "some sheet date has no container quote, so that case is exercised"
    );
}

#[test]
fn before_every_quote_sheet_nothing_is_on_offer_and_the_error_names_the_first_date() {
    let first = sheet_dates()[0];
    let before = first.yesterday().unwrap().to_string();
    let out = common::run(&["examples/lora-7b-4090.yaml", "--as-of", &before]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a usage error, not a fault in the rules"
    );
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("nothing is on offer at {before}")),
        "{err}"
    );
    assert!(err.contains(&format!("`--as-of {first}`")), "{err}");
    assert!(!err.contains("fault in the rules"), "{err}");
    // The library tells the error apart by what it is, not by its text.
    let as_of: jiff::civil::Date = before.parse().unwrap();
    let graph = Graph::compile(Policy::embedded().unwrap().at(as_of)).unwrap();
    let source = Source::new(
        "examples/lora-7b-4090.yaml",
        std::fs::read_to_string("examples/lora-7b-4090.yaml").unwrap(),
    );
    let refused = decide_tools::decide(&graph, &source, as_of).unwrap_err();
    assert_eq!(
        refused.fault(),
        Some(&Fault::NothingOnOffer { as_of }),
        "{}",
        refused.render()
    );
}

#[test]
fn a_graph_priced_at_one_date_refuses_to_decide_at_a_date_of_other_quotes() {
    let graph = Graph::compile(
        Policy::embedded()
            .unwrap()
            .at("2026-07-15".parse().unwrap()),
    )
    .unwrap();
    let source = Source::new(
        "examples/lora-7b-4090.yaml",
        std::fs::read_to_string("examples/lora-7b-4090.yaml").unwrap(),
    );
    let err = decide_tools::decide(&graph, &source, common::as_of()).unwrap_err();
    assert_eq!(err.kind(), decide_engine::ErrorKind::Usage);
    assert_eq!(
        err.fault(),
        Some(&Fault::PricedAt {
            at: Some("2026-07-15".parse().unwrap()),
            as_of: common::as_of(),
        }),
        "{}",
        err.render()
    );
}

#[test]
fn quotes_check_validates_a_sheet_before_it_is_committed() {
    let dir = tempfile::tempdir().unwrap();
    let sheet = dir.path().join("2026-10-01-marketplace.csv");
    std::fs::write(
        &sheet,
        format!(
            "{HEADER}rtx4090-x8-sichuan2,marketplace,month,11875,9500,CNY,month,1 month,\
             unknown,unknown,2026-10-01,marketplace listing of 2026-10-01\n"
        ),
    )
    .unwrap();
    let path = sheet.to_str().unwrap();
    let ok = common::run_ok(&["quotes", "check", path, "--as-of", "2026-10-01"]);
    let ok = ok.replace(&dir.path().display().to_string(), "[DIR]");
    assert_eq!(
        ok,
        "[DIR]/2026-10-01-marketplace.csv: 1 quote, valid\n  line 2: rtx4090-x8-sichuan2 from \
         marketplace, valid from 2026-10-01: 9500 (+19.9% from 7920 of 2026-09-04)\n"
    );
    // The day before its first day, the sheet is in the future.
    let out = common::run(&["quotes", "check", path, "--as-of", "2026-09-30"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let err =
        String::from_utf8_lossy(&out.stderr).replace(&dir.path().display().to_string(), "[DIR]");
    assert_snapshot!("quotes_check_future", err);
    // A sheet already in the rules folder is checked again under its own name, not as a
    // duplicate of itself.
    let ok = common::run_ok(&[
        "quotes",
        "check",
        "rules/quotes/2026-09-04-marketplace.csv",
        "--as-of",
        "2026-09-04",
    ]);
    assert!(
        ok.starts_with("rules/quotes/2026-09-04-marketplace.csv: 6 quotes, valid\n"),
        "{ok}"
    );
    assert!(ok.contains("ascend910b-x8-huawei from marketplace, valid from 2026-09-04: 21200 (+35.9% from 15600 of 2026-07-01)"), "{ok}");
    // Not a sheet: a usage error.
    let out = common::run(&["quotes", "check", "examples/lora-7b-4090.yaml"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_revision_covers_the_sheets_and_not_their_layout() {
    let revision = |dir: &Path| Policy::from_dir(dir).unwrap().revision;
    let base = revision(Path::new("rules"));
    let price = common::edited_rules(&[(
        "quotes/2026-09-04-marketplace.csv",
        "month,9900,7920,CNY",
        "month,9900,7921,CNY",
    )]);
    assert_ne!(revision(price.path()), base, "a price changed");
    let comment = common::edited_rules(&[(
        "quotes/2026-09-04-marketplace.csv",
        "offer,vendor",
        "# Checked again on 2026-09-05.\noffer,vendor",
    )]);
    assert_eq!(revision(comment.path()), base, "a comment is not a change");
    // Rows in another order, the sheet renamed: the same quotes.
    let sheet = Path::new("rules/quotes/2026-07-01-marketplace.csv");
    let text = std::fs::read_to_string(sheet).unwrap();
    let (head, rows) = text.split_at(text.find("rtx4090").unwrap());
    let mut rows: Vec<&str> = rows.lines().collect();
    rows.reverse();
    let shuffled = common::edited_rules(&[]);
    std::fs::remove_file(shuffled.path().join("quotes/2026-07-01-marketplace.csv")).unwrap();
    std::fs::write(
        shuffled.path().join("quotes/july.csv"),
        format!("{head}{}\n", rows.join("\n")),
    )
    .unwrap();
    assert_eq!(
        revision(shuffled.path()),
        base,
        "row order and file names are not changes"
    );
}

#[test]
fn prices_written_in_the_catalog_of_a_policy_with_sheets_are_refused() {
    let rules = common::edited_rules(&[(
        "catalog.yaml",
        "    instance_gpus_max: 8\n",
        "    instance_gpus_max: 8\n    price: {unit: month, list_cny: 9900, discounted_cny: 7920}\n",
    )]);
    let err = common::compile_dir(rules.path()).unwrap_err();
    assert!(
        err.contains("offer `rtx4090-x8-sichuan2` writes `price`, which its quotes give"),
        "{err}"
    );
    assert!(err.contains("move them there"), "{err}");
}

#[test]
fn hardware_not_quoted_yet_is_said_in_the_memo_and_a_profile_naming_it_is_told_when() {
    // The 5090 box's quote moved to 2026-10-01: on 2026-09-04 it is not on offer.
    let rules = common::edited_rules(&[(
        "quotes/2026-09-04-marketplace.csv",
        "rtx5090-x8-anhui1,marketplace,the jygpu.com marketplace,极智算,month,19888,15910,CNY,month,\"1 month, paid ahead\",1 个月，预付,unknown,unknown,2026-09-04",
        "rtx5090-x8-anhui1,marketplace,the jygpu.com marketplace,极智算,month,19888,15910,CNY,month,\"1 month, paid ahead\",1 个月，预付,unknown,unknown,2026-10-01",
    )]);
    let text = memo(rules.path(), "examples/lora-7b-4090.yaml", "2026-09-04");
    assert!(
        text.contains(
            "Not on offer at 2026-09-04 (no quote valid yet), so not considered: RTX 5090 32G ×8 \
             (Anhui zone 1) (`rtx5090-x8-anhui1`, first quoted 2026-10-01)"
        ) && text.contains("(`h100-container`, first quoted 2026-09-25)."),
        "{text}"
    );
    assert!(!text.contains("| `rtx5090-x8-anhui1` |"), "{text}");
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("proposal.yaml");
    let example = std::fs::read_to_string("examples/mistake-7b-on-h100.yaml").unwrap();
    std::fs::write(
        &profile,
        example.replace("offer: h100-x8-ningxia1", "offer: rtx5090-x8-anhui1"),
    )
    .unwrap();
    let out = common::run(&[
        profile.to_str().unwrap(),
        "--as-of",
        "2026-09-04",
        "--rules",
        rules.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown offer id `rtx5090-x8-anhui1`"),
        "{err}"
    );
    assert!(
        err.contains("`rtx5090-x8-anhui1` has no quote valid at 2026-09-04: its first quote is valid from 2026-10-01"),
        "{err}"
    );
    // The library tells the error apart by what it is (the hint above is found so), not by its
    // text.
    let as_of = "2026-09-04".parse().unwrap();
    let graph = Graph::compile(Policy::from_dir(rules.path()).unwrap().priced_at(as_of)).unwrap();
    let source = Source::new("proposal.yaml", std::fs::read_to_string(&profile).unwrap());
    let err = decide_tools::decide(&graph, &source, as_of).unwrap_err();
    assert_eq!(err.kind(), decide_engine::ErrorKind::Profile);
    assert_eq!(
        err.fault(),
        Some(&Fault::UnknownOffer {
            id: "rtx5090-x8-anhui1".to_owned()
        }),
        "{}",
        err.render()
    );
    assert!(
        err.hints()
            .iter()
            .any(|h| h.ends_with("its first quote is valid from 2026-10-01")),
        "{:?}",
        err.hints()
    );
}

/// A vendor's cells are text in every memo: markup, a line break that would start a heading
/// or a checklist item, and HTML are shown escaped in the Markdown memo and as characters in
/// the HTML memo; `decide quotes check` warns about them; a sheet's file name stays plain.
#[test]
fn quote_sheet_text_stays_text_in_the_memos_and_quotes_check_warns() {
    let row = "rtx4090-x8-sichuan2,evil,month,9900,7000,CNY,month,\"1 month\n# Heading\n- [ ] fake item\",\
               unknown,unknown,2026-09-01,<img src=http://x/a.png> <script>alert(1)</script> [link](http://x)\n";
    let rules = rules_with_sheet("2026-09-01-evil.csv", row);
    let profile = "examples/lora-7b-4090.yaml";
    let md = memo(rules.path(), profile, "2026-09-04");
    for raw in [
        "<img",
        "<script",
        "[link](",
        "\n# Heading",
        "\n- [ ] fake item",
    ] {
        assert!(!md.contains(raw), "{raw:?} reached the Markdown memo raw");
    }
    assert!(md.contains("&lt;img src=http://x/a.png&gt;"), "{md}");
    assert!(
        md.contains("Shortest term: 1 month \\# Heading - \\[ \\] fake item."),
        "{md}"
    );
    let html = common::run_ok(&[
        profile,
        "--as-of",
        "2026-09-04",
        "--format",
        "html",
        "--rules",
        rules.path().to_str().unwrap(),
    ]);
    assert!(!html.contains("<img"), "an image tag reached the HTML memo");
    assert!(
        !html.contains("<script>alert"),
        "a script reached the HTML memo"
    );
    // The Markdown escapes of a checklist item show as the characters they stand for.
    assert!(
        html.contains("Shortest term: 1 month # Heading - [ ] fake item."),
        "{html}"
    );
    // `quotes check` warns and still passes the sheet.
    let sheet = rules.path().join("quotes/2026-09-01-evil.csv");
    let err = quotes_check_warnings(&sheet, rules.path());
    assert!(
        err.contains("warning: min_term: the `min_term` cell holds a line break"),
        "{err}"
    );
    assert!(
        err.contains("warning: source: the `source` cell holds markup"),
        "{err}"
    );
    // A file name that would break out of the memo's code span is refused.
    let bad = rules_with_sheet("2026-09-01-evil`.csv", &row.replace("evil,", "evil2,"));
    let out = common::run(&[
        profile,
        "--as-of",
        "2026-09-04",
        "--rules",
        bad.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a quote sheet's file name may hold"));
}

/// `decide quotes check SHEET --rules RULES --as-of AS_OF`.
fn quotes_check(sheet: &Path, rules: &Path, as_of: &str) -> std::process::Output {
    common::run(&[
        "quotes",
        "check",
        sheet.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
        "--as-of",
        as_of,
    ])
}

/// `decide quotes check SHEET --rules RULES --as-of 2026-09-04`, which passes: its warnings.
fn quotes_check_warnings(sheet: &Path, rules: &Path) -> String {
    let out = quotes_check(sheet, rules, "2026-09-04");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{err}");
    err
}

/// A copy of the shipped rules with one more sheet, `quotes/2026-09-01-evil.csv`, of every
/// column of [`HEADER`] and every text column, one quote whose `column` holds `text`: the rules
/// folder, the sheet's path and the column (1-based) where the cell starts on line 2.
fn rules_with_text(column: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf, usize) {
    let mut header: Vec<&str> = HEADER.trim_end().split(',').collect();
    for c in decide_engine::policy::quotes::text_columns() {
        if !header.contains(&c.as_str()) {
            header.push(c);
        }
    }
    let cells: Vec<String> = header
        .iter()
        .map(|c| match *c {
            c if c == column => format!("\"{text}\""),
            "offer" => "rtx4090-x8-sichuan2".to_owned(),
            "vendor" => "evil".to_owned(),
            "unit" | "discount_commits" => "month".to_owned(),
            "list_price" => "9900".to_owned(),
            "discounted_price" => "7000".to_owned(),
            "currency" => "CNY".to_owned(),
            "vat" | "invoice" => "unknown".to_owned(),
            "valid_from" => "2026-09-01".to_owned(),
            other => format!("plain {other}"),
        })
        .collect();
    let rules = common::edited_rules(&[]);
    let sheet = rules.path().join("quotes/2026-09-01-evil.csv");
    let row = format!("{}\n{}\n", header.join(","), cells.join(","));
    std::fs::write(&sheet, row).unwrap();
    let index = header.iter().position(|c| *c == column).unwrap();
    let at = cells[..index].iter().map(|c| c.len() + 1).sum::<usize>() + 1;
    (rules, sheet, at)
}

/// Every text column of a quote sheet (read off the sheet's schema, so a column added later
/// is covered too) is text in every memo, English and Chinese, Markdown and HTML: an image
/// with `onerror`, a script and a heading after a line break never reach a memo as markup, and
/// `decide quotes check` warns about the cell at its file, line and column. `decide offers
/// --format json` keeps the cell as written.
#[test]
fn every_text_column_of_a_quote_sheet_stays_text_and_quotes_check_warns() {
    let text_columns = decide_engine::policy::quotes::text_columns();
    assert!(
        text_columns.iter().any(|c| c == "invoice"),
        "{text_columns:?}"
    );
    for column in text_columns {
        let payload =
            format!("<img src=x onerror=alert(1)> <script>alert(1)</script>\n# Heading {column}");
        let (rules, sheet, at) = rules_with_text(column, &payload);
        let rules_arg = rules.path().to_str().unwrap();
        for (lang, format) in [("en", "md"), ("zh", "md"), ("en", "html"), ("zh", "html")] {
            let memo = common::run_ok(&[
                "examples/lora-7b-4090.yaml",
                "--as-of",
                "2026-09-04",
                "--rules",
                rules_arg,
                "--lang",
                lang,
                "--format",
                format,
            ]);
            for raw in ["<img", "<script", "\n# Heading"] {
                assert!(
                    !memo.contains(raw),
                    "`{column}`: {raw:?} reached the {lang} {format} memo raw"
                );
            }
        }
        let err = quotes_check_warnings(&sheet, rules.path());
        assert!(
            err.contains(&format!(
                "warning: {column}: the `{column}` cell holds a line break"
            )),
            "`{column}`: {err}"
        );
        let at = format!("{}:2:{at}", sheet.display());
        assert!(err.contains(&at), "`{column}`: no {at} in {err}");
        // The listing of the offers keeps what the vendor wrote.
        if column == "min_term" {
            let offers = common::run_ok(&[
                "offers",
                "--format",
                "json",
                "--as-of",
                "2026-09-04",
                "--rules",
                rules_arg,
            ]);
            let listing: serde_json::Value = serde_json::from_str(&offers).unwrap();
            assert!(
                listing["offers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|o| o["min_term"] == payload.as_str()),
                "{offers}"
            );
        }
    }
}

/// A quote sheet's text cell that opens a Markdown heading is warned about, though it holds no
/// other markup.
#[test]
fn quotes_check_warns_about_a_heading_in_a_text_cell() {
    let (rules, sheet, at) = rules_with_text("invoice", "# VAT special invoice");
    let err = quotes_check_warnings(&sheet, rules.path());
    assert!(
        err.contains("warning: invoice: the `invoice` cell holds a Markdown heading"),
        "{err}"
    );
    assert!(
        err.contains(&format!("2026-09-01-evil.csv:2:{at}")),
        "{err}"
    );
}

/// An id keeps its vendor whatever dates are added: an earlier quote from another vendor is
/// `<id>@<vendor>`, not a takeover of the catalog id (a profile's `proposal` and `job.hours`
/// would silently point at another vendor's box). Without `id_vendor`, two vendors for one
/// hardware are an error that says what to write.
#[test]
fn an_earlier_quote_from_another_vendor_does_not_take_over_the_catalog_id() {
    let rules = rules_with_sheet(
        "2026-06-01-acme.csv",
        "rtx4090-x8-sichuan2,acme,month,9000,7000,CNY,month,1 month,unknown,unknown,\
         2026-06-01,acme quote of 2026-06-01\n",
    );
    let offers = common::run_ok(&[
        "offers",
        "--as-of",
        "2026-09-04",
        "--format",
        "json",
        "--rules",
        rules.path().to_str().unwrap(),
    ]);
    let listing: serde_json::Value = serde_json::from_str(&offers).unwrap();
    let vendor_of = |id: &str| {
        listing["offers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["id"] == id)
            .map(|o| o["vendor"].clone())
    };
    assert_eq!(
        vendor_of("rtx4090-x8-sichuan2"),
        Some(serde_json::json!("marketplace"))
    );
    assert_eq!(
        vendor_of("rtx4090-x8-sichuan2@acme"),
        Some(serde_json::json!("acme"))
    );
    // The catalog that names no vendor for the id: an error naming both vendors and the fix.
    let text = std::fs::read_to_string(rules.path().join("catalog.yaml")).unwrap();
    let first = text.find("    id_vendor: marketplace\n").unwrap();
    let unnamed = format!(
        "{}{}",
        &text[..first],
        &text[first + "    id_vendor: marketplace\n".len()..]
    );
    std::fs::write(rules.path().join("catalog.yaml"), unnamed).unwrap();
    let out = common::run(&[
        "examples/lora-7b-4090.yaml",
        "--rules",
        rules.path().to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("`rtx4090-x8-sichuan2` is quoted by acme and marketplace"),
        "{err}"
    );
    assert!(
        err.contains("add `id_vendor: acme`") || err.contains("id_vendor:"),
        "{err}"
    );
}

/// What a spreadsheet saves (CRLF line ends, a byte-order mark) is read with the same line
/// numbers as the file shows: in `quotes check`, in errors and in the record's sources.
#[test]
fn a_sheet_saved_with_crlf_and_a_bom_keeps_its_line_numbers() {
    let sheet = "quotes/2026-09-04-marketplace.csv";
    let lf_dir = common::edited_rules(&[]);
    let crlf_dir = common::edited_rules(&[]);
    let lf = std::fs::read_to_string(lf_dir.path().join(sheet)).unwrap();
    assert!(
        lf.lines().next().unwrap().starts_with('#'),
        "the sheet opens with comments"
    );
    let crlf = format!("\u{feff}{}", lf.replace('\n', "\r\n"));
    std::fs::write(crlf_dir.path().join(sheet), &crlf).unwrap();
    let check = |dir: &Path| {
        let path = dir.join(sheet);
        common::run_ok(&[
            "quotes",
            "check",
            path.to_str().unwrap(),
            "--rules",
            dir.to_str().unwrap(),
            "--as-of",
            "2026-09-04",
        ])
        .replace(&dir.display().to_string(), "[RULES]")
    };
    let listed = check(lf_dir.path());
    assert!(listed.contains("  line 6: rtx4090-x8-sichuan2"), "{listed}");
    assert_eq!(check(crlf_dir.path()), listed);
    let sources = memo(lf_dir.path(), "examples/lora-7b-4090.yaml", "2026-09-04");
    assert!(
        sources.contains("sheet `2026-09-04-marketplace.csv`, line 6)"),
        "{sources}"
    );
    assert_eq!(
        memo(crlf_dir.path(), "examples/lora-7b-4090.yaml", "2026-09-04"),
        sources
    );
    // An error in a row is reported on that row's line, at that cell.
    let h100 = "h100-x8-ningxia1,marketplace,the jygpu.com marketplace,极智算,month,108600";
    let line = lf.lines().position(|l| l.starts_with(h100)).unwrap() + 1;
    let broken = crlf.replace(
        h100,
        "h100-x8-ningxia1,marketplace,the jygpu.com marketplace,极智算,month,abc",
    );
    std::fs::write(crlf_dir.path().join(sheet), broken).unwrap();
    let out = common::run(&["validate", "--rules", crlf_dir.path().to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("2026-09-04-marketplace.csv:{line}:66")),
        "{err}"
    );
}

/// Job hours measured on a box hold for the same hardware from another vendor: a second
/// vendor's quote does not turn a measured time back into an estimate. Hours keyed by
/// `<id>@<vendor>` hold for that vendor's offer alone.
#[test]
fn measured_job_hours_apply_to_the_hardware_whoever_quotes_it() {
    let rules = rules_with_sheet(
        "2026-09-10-gpuhub.csv",
        "h100-x8-ningxia1,gpuhub,month,100000,82000,CNY,month,1 month,unknown,\
         unknown,2026-09-10,gpuhub quote e-mail of 2026-09-10\n",
    );
    let other = "h100-x8-ningxia1@gpuhub";
    let profile = "examples/measured-claim-h100.yaml";
    let after = record(rules.path(), profile, "2026-09-10");
    let estimates = &after["estimates"];
    for field in ["hours", "implied_tokens_b", "meets_deadline"] {
        assert_eq!(
            estimates[field][other], estimates[field]["h100-x8-ningxia1"],
            "{field}: {estimates}"
        );
    }
    assert!(
        estimates["implied_tokens_b"][other].is_number(),
        "{estimates}"
    );
    // Keyed by the other vendor's offer, the claim is that offer's only.
    let text = std::fs::read_to_string(profile)
        .unwrap()
        .replace("    h100-x8-ningxia1: 168", &format!("    {other}: 168"))
        .replace(
            "measured: [h100-x8-ningxia1]",
            &format!("measured: [{other}]"),
        );
    let elsewhere = tempfile::tempdir().unwrap();
    let edited = elsewhere.path().join("edited.yaml");
    std::fs::write(&edited, text).unwrap();
    let keyed = record(rules.path(), edited.to_str().unwrap(), "2026-09-10");
    let estimates = &keyed["estimates"];
    assert!(
        estimates["implied_tokens_b"][other].is_number(),
        "{estimates}"
    );
    assert!(
        estimates["implied_tokens_b"]
            .get("h100-x8-ningxia1")
            .is_none(),
        "{estimates}"
    );
}

/// A quote that leaves VAT out is compared with the policy's VAT rate added: ¥7,500 before VAT
/// is ¥7,950 with it, dearer than the ¥7,920 the marketplace lists, so it does not win on the
/// tax alone. The memo shows both figures, and what a quote that does not state VAT would
/// cost with it added.
#[test]
fn a_quote_without_vat_is_compared_with_vat_added() {
    let rules = rules_with_sheet(
        "2026-09-10-gpuhub.csv",
        "rtx4090-x8-sichuan2,gpuhub,month,9375,7500,CNY,month,1 month,excluded,\
         VAT special invoice,2026-09-10,gpuhub quote e-mail of 2026-09-10\n",
    );
    let profile = "examples/lora-7b-4090.yaml";
    let lost = gpuhub_lost_to_the_marketplace(rules.path());
    assert_eq!(lost["monthly_cny"], 7950.0, "{lost}");
    let text = memo(rules.path(), profile, "2026-09-10");
    assert!(
        text.contains(
            "gpuhub's ¥7,950 with VAT (¥7,500 before) (`rtx4090-x8-sichuan2@gpuhub`) costs ¥30 more"
        ),
        "{text}"
    );
    // Every quote for the hardware recommended is among the sources.
    assert!(
        text.contains("VAT excluded: quoted ¥7,500, shown and compared with 6% VAT added"),
        "{text}"
    );
    assert!(
        text.contains("VAT not stated: compared as quoted, as if included (¥8,395 if 6% is added)"),
        "{text}"
    );
    // `decide quotes check` shows the price as compared and as the sheet wrote it.
    let sheet = rules.path().join("quotes/2026-09-10-gpuhub.csv");
    let out = quotes_check(&sheet, rules.path(), "2026-09-10");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let checked = String::from_utf8_lossy(&out.stdout);
    assert!(
        checked.contains(
            ": 7950 with VAT (7500 as quoted, without VAT; 6% VAT added so that every price \
             compares with VAT in) (first quote of this offer and vendor)"
        ),
        "{checked}"
    );
    // The policy's VAT words are checked: a basis prices can be compared on, the two statuses
    // converted between, rates that are shares, a default contract kind that has a rate.
    let bad = common::edited_rules(&[
        (
            "catalog.yaml",
            "  vat_basis: included\n",
            "  vat_basis: gross\n",
        ),
        (
            "catalog.yaml",
            "  vat: [included, excluded, unknown]\n",
            "  vat: [included, unknown]\n",
        ),
        (
            "catalog.yaml",
            "  vat_rates: {service: 0.06, lease: 0.13}\n  contract_kind: service\n",
            "  vat_rates: {service: 6, lease: 0.13}\n  contract_kind: rent\n",
        ),
    ]);
    let out = common::run(&["validate", "--rules", bad.path().to_str().unwrap()]);
    let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    for fault in [
        "`vat_basis` `gross` is not a basis prices are compared on",
        "`vat` lacks `excluded`",
        "`vat_rates.service` 6 is not a rate from 0 to 0.2",
        "`contract_kind` `rent` is not one of `vat_rates`",
        "the kinds with a rate: lease, service",
    ] {
        assert!(said.contains(fault), "{fault}\n{said}");
    }
}

/// Two quotes for the 4090 box that state their VAT at different rates (issue 47 item 2):
/// gpuhub's ¥8,400 includes 13% (a lease), suanli's ¥7,450 leaves out 6% (a service, its
/// `contract_kind` left to the policy's default).
const VAT_QUOTES: &str = "offer,vendor,unit,list_price,discounted_price,currency,discount_commits,\
     min_term,vat,contract_kind,invoice,valid_from,source\n\
     rtx4090-x8-sichuan2,gpuhub,month,9000,8400,CNY,month,1 month,included,lease,\
     unknown,2026-09-10,gpuhub lease quote of 2026-09-10\n\
     rtx4090-x8-sichuan2,suanli,month,9000,7450,CNY,month,1 month,excluded,,\
     VAT special invoice,2026-09-10,suanli service quote of 2026-09-10\n";

/// The shipped rules comparing on `basis` (`quote_sheets.vat_basis`) with [`VAT_QUOTES`] as
/// a sheet of 2026-09-10, and the sheet's path.
fn rules_with_vat_quotes(basis: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let rules = common::edited_rules(&[(
        "catalog.yaml",
        "  vat_basis: included\n",
        &format!("  vat_basis: {basis}\n"),
    )]);
    let sheet = rules.path().join("quotes").join("2026-09-10-quotes.csv");
    std::fs::write(&sheet, VAT_QUOTES).unwrap();
    (rules, sheet)
}

/// [`VAT_QUOTES`] compared with VAT in (the shipped basis): suanli wins at ¥7,897. The memo
/// shows the recommendation's cost before VAT too and the invoice to ask for, in both
/// languages, and `decide quotes check` shows the conversion.
#[test]
fn vat_is_compared_on_the_policys_basis_at_each_contracts_rate() {
    let profile = "examples/lora-7b-4090.yaml";
    // With VAT in: suanli's ¥7,450 + 6% = ¥7,897 beats the marketplace's ¥7,920 (VAT not
    // stated, compared as quoted) and gpuhub's ¥8,400.
    let (rules, sheet) = rules_with_vat_quotes("included");
    let chosen = record(rules.path(), profile, "2026-09-10");
    assert_eq!(chosen["offer"], "rtx4090-x8-sichuan2@suanli", "{chosen}");
    assert_eq!(
        chosen["costs"]["recommended_monthly_cny"], 7897.0,
        "{chosen}"
    );
    let gpuhub_cost = gpuhub(&chosen);
    assert_eq!(gpuhub_cost["monthly_cny"], 8400.0, "{gpuhub_cost}");
    let text = memo(rules.path(), profile, "2026-09-10");
    assert!(
        text.contains(
            "| VAT | Figures include VAT (6%, a service contract). Before VAT: ¥7,450 a month, \
             ¥44,700 over 6 months. Ask for a VAT special invoice (增值税专用发票): it lets a \
             general taxpayer deduct the ¥447 of input VAT a month. |"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "VAT excluded: quoted ¥7,450, shown and compared with 6% VAT added (a service contract)"
        ) && text.contains("VAT included (13%, a lease of equipment)"),
        "{text}"
    );
    let zh = memo_zh(rules.path(), profile, "2026-09-10");
    assert!(
        zh.contains(
            "| 增值税 | 以上金额为含税价（6%，服务合同）。不含税：每月 ¥7,450，6 个月共 ¥44,700。\
             请索取增值税专用发票：一般纳税人每月可抵扣进项税 ¥447。 |"
        ),
        "{zh}"
    );
    // suanli states its invoice: no checklist item asks for it.
    assert!(!text.contains("**Invoice and VAT.**"), "{text}");
    let out = quotes_check(&sheet, rules.path(), "2026-09-10");
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains(
            "from gpuhub, valid from 2026-09-10: 8400 (first quote of this offer and vendor); \
             VAT included, 13% (lease contract)"
        ) && said.contains(
            "from suanli, valid from 2026-09-10: 7897 with VAT (7450 as quoted, without \
                 VAT; 6% VAT added so that every price compares with VAT in)"
        ),
        "{said}"
    );
}

/// [`VAT_QUOTES`] compared before VAT (a buyer who deducts it): gpuhub's ¥8,400 less its 13%
/// is ¥7,433.63 and wins over suanli's ¥7,450; the memo shows the cost with VAT beside, and
/// the checklist asks gpuhub for the special invoice it does not name. A contract kind the
/// policy has no rate for is refused at its cell.
#[test]
fn vat_compared_before_it_ranks_the_same_quotes_the_other_way() {
    let profile = "examples/lora-7b-4090.yaml";
    // Before VAT: gpuhub's ¥8,400 less its 13% is ¥7,433.63, below suanli's ¥7,450.
    let (rules, sheet) = rules_with_vat_quotes("excluded");
    let chosen = record(rules.path(), profile, "2026-09-10");
    assert_eq!(chosen["offer"], "rtx4090-x8-sichuan2@gpuhub", "{chosen}");
    assert_eq!(
        chosen["costs"]["recommended_monthly_cny"], 7433.63,
        "{chosen}"
    );
    let text = memo(rules.path(), profile, "2026-09-10");
    assert!(
        text.contains(
            "| VAT | Figures are before VAT, as the policy compares them (13%, a lease of \
             equipment). With VAT: ¥8,400 a month, ¥50,400 over 6 months. Ask for a VAT special \
             invoice (增值税专用发票): without it the ¥966 of VAT a month is a cost, not a \
             deduction. |"
        ),
        "{text}"
    );
    assert!(
        text.contains("gpuhub's (¥7,434 before VAT (¥8,400 with), from 2026-09-10) won")
            && text.contains(
                "VAT included: quoted ¥8,400, shown and compared before its 13% VAT (a lease of \
                 equipment)"
            )
            && text.contains("VAT not stated: compared as quoted, as if before VAT (¥7,472 before VAT if it includes 6%)"),
        "{text}"
    );
    // gpuhub does not say which invoice it issues: the checklist asks for the special one.
    assert!(
        text.contains(
            "**Invoice and VAT.** The quote states its VAT (13%) but not the invoice it issues. \
             Ask for a VAT special invoice (增值税专用发票) at 13%"
        ),
        "{text}"
    );
    let zh = memo_zh(rules.path(), profile, "2026-09-10");
    assert!(
        zh.contains(
            "| 增值税 | 以上金额按策略的比较口径为不含税价（13%，设备租赁合同）。含税：每月 ¥8,400，\
             6 个月共 ¥50,400。请索取增值税专用发票：没有专票，每月 ¥966 的增值税就是成本而不能抵扣。 |"
        ),
        "{zh}"
    );
    let out = quotes_check(&sheet, rules.path(), "2026-09-10");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(
            "from gpuhub, valid from 2026-09-10: 7433.63 before VAT (8400 as quoted, with VAT; \
             its 13% VAT taken out so that every price compares before VAT)"
        ) && said.contains("from suanli, valid from 2026-09-10: 7450 (first quote"),
        "{said}"
    );

    // A contract kind the policy has no rate for is refused at its cell.
    std::fs::write(&sheet, VAT_QUOTES.replace(",lease,", ",rent,")).unwrap();
    let out = quotes_check(&sheet, rules.path(), "2026-09-10");
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("unknown contract kind (for VAT) `rent`")
            && said.contains("one of: lease, service")
            && said.contains("2026-09-10-quotes.csv:2"),
        "{said}"
    );
}

/// gpuhub rents the 4090 box for ¥6,000 a month, 3 months at least: cheaper than the
/// marketplace's ¥7,920 for a plan of 3 months or more, dearer for 1 month (3 × ¥6,000).
const GPUHUB_MIN_TERM: &str = "offer,vendor,unit,list_price,discounted_price,currency,\
     discount_commits,min_term,min_months,vat,invoice,valid_from,source\n\
     rtx4090-x8-sichuan2,gpuhub,month,7500,6000,CNY,month,3 months paid ahead,3,included,\
     VAT special invoice,2026-09-10,gpuhub quote e-mail of 2026-09-10\n";

/// The shipped rules with gpuhub's sheet of [`GPUHUB_MIN_TERM`].
fn rules_with_min_term() -> tempfile::TempDir {
    let rules = common::edited_rules(&[]);
    std::fs::write(
        rules.path().join("quotes").join("2026-09-10-gpuhub.csv"),
        GPUHUB_MIN_TERM,
    )
    .unwrap();
    rules
}

/// `examples/lora-7b-4090.yaml` for `months` months of use, with `extra` lines after them,
/// written in `dir`.
fn lora_for_months(dir: &Path, months: u32, extra: &str) -> String {
    let base = std::fs::read_to_string("examples/lora-7b-4090.yaml").unwrap();
    assert!(
        base.contains("  months: 6\n"),
        "the example's months line moved"
    );
    let path = dir.join(format!("months-{months}-{}.yaml", extra.len()));
    let text = base.replace("  months: 6\n", &format!("  months: {months}\n{extra}"));
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// The options-table entry of gpuhub's 4090 box in a record.
fn gpuhub(record: &serde_json::Value) -> serde_json::Value {
    record["alternatives"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["offer"] == "rtx4090-x8-sichuan2@gpuhub")
        .expect("gpuhub's quote is an alternative")
        .clone()
}

#[test]
fn a_minimum_term_is_billed_and_decides_by_the_months_of_use() {
    let rules = rules_with_min_term();
    let dir = tempfile::tempdir().unwrap();
    let profile = |months: u32, extra: &str| lora_for_months(dir.path(), months, extra);

    // One month of use: gpuhub bills three, ¥18,000, and loses to ¥7,920 saying why.
    let one = record(rules.path(), &profile(1, ""), "2026-09-10");
    assert_eq!(one["offer"], "rtx4090-x8-sichuan2", "{one}");
    assert_eq!(one["costs"]["recommended_monthly_cny"], 7920.0, "{one}");
    let lost = gpuhub(&one);
    assert_eq!(lost["monthly_cny"], 18000.0, "{lost}");
    assert_eq!(lost["billed_months"], 3, "{lost}");
    assert_eq!(lost["reason"], "costlier", "{lost}");
    assert!(
        lost["why"]
            .as_str()
            .unwrap()
            .ends_with("; billed for its 3-month minimum term"),
        "{lost}"
    );
    let text = memo(rules.path(), &profile(1, ""), "2026-09-10");
    assert!(
        text.contains("billed for its 3-month minimum term"),
        "{text}"
    );
    assert!(
        text.contains(
            "(`rtx4090-x8-sichuan2@gpuhub`), with a 3-month minimum term, costs \
                       ¥10,080 more a month"
        ),
        "{text}"
    );
    let zh = common::run_ok(&[
        &profile(1, ""),
        "--lang",
        "zh",
        "--as-of",
        "2026-09-10",
        "--rules",
        rules.path().to_str().unwrap(),
    ]);
    assert!(zh.contains("（按其 3 个月最短租期计费）"), "{zh}");

    // Six months: gpuhub's ¥6,000 wins, and the contract is six months of it.
    let six = record(rules.path(), &profile(6, ""), "2026-09-10");
    assert_eq!(six["offer"], "rtx4090-x8-sichuan2@gpuhub", "{six}");
    assert_eq!(six["costs"]["recommended_monthly_cny"], 6000.0, "{six}");
    assert_eq!(six["costs"]["contract_total_cny"], 36000.0, "{six}");
    assert_eq!(gpuhub(&six)["billed_months"], 6, "{six}");

    // A one-off job of 100 hours on gpuhub's box bills its three months.
    let job = record(
        rules.path(),
        &profile(
            1,
            "job:\n  cadence: one_off\n  hours:\n    rtx4090-x8-sichuan2: 100\n",
        ),
        "2026-09-10",
    );
    let on_gpuhub = gpuhub(&job);
    assert_eq!(on_gpuhub["job_billed_cny"], 18000.0, "{on_gpuhub}");
}

#[test]
fn a_recommended_offer_with_a_minimum_term_says_the_months_billed() {
    let rules = rules_with_min_term();
    let dir = tempfile::tempdir().unwrap();
    let profile = |months: u32, extra: &str| lora_for_months(dir.path(), months, extra);
    // Two months of use with the marketplace's box repriced at ¥16,000: gpuhub's three months
    // over two (¥9,000 a month of use) win, and the memo says the costs bill its three months.
    let dear = rules;
    std::fs::write(
        dear.path()
            .join("quotes")
            .join("2026-09-10-marketplace.csv"),
        "offer,vendor,unit,list_price,discounted_price,currency,discount_commits,min_term,\
         vat,invoice,valid_from,source\n\
         rtx4090-x8-sichuan2,marketplace,month,20000,16000,CNY,month,1 month,unknown,unknown,\
         2026-09-10,marketplace listing of 2026-09-10\n",
    )
    .unwrap();
    let two = record(dear.path(), &profile(2, ""), "2026-09-10");
    assert_eq!(two["offer"], "rtx4090-x8-sichuan2@gpuhub", "{two}");
    assert_eq!(two["costs"]["recommended_monthly_cny"], 9000.0, "{two}");
    assert_eq!(two["costs"]["contract_total_cny"], 18000.0, "{two}");
    let text = memo(dear.path(), &profile(2, ""), "2026-09-10");
    assert!(
        text.contains("a 3-month minimum term billed over 2 months of use"),
        "{text}"
    );
    assert!(text.contains("| Over 2 months | ¥18,000 |"), "{text}");
    assert!(
        text.contains("the vendor bills at least 3 months and this plan needs 2"),
        "{text}"
    );
}

#[test]
fn a_minimum_term_is_whole_months() {
    let rules = rules_with_min_term();
    // The cell is a whole number of months.
    let bad = rules.path().join("quotes").join("2026-09-10-gpuhub.csv");
    let check = || {
        common::run(&[
            "quotes",
            "check",
            "--rules",
            rules.path().to_str().unwrap(),
            bad.to_str().unwrap(),
        ])
    };
    let out = check();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = std::fs::read_to_string(&bad)
        .unwrap()
        .replace(",3,included", ",three,included");
    std::fs::write(&bad, text).unwrap();
    let out = check();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("`three` is not a number of months from 1 to 120"),
        "{said}"
    );
}

/// The display column (a Chinese character is two wide) where `needle` starts in `line`.
fn display_column(line: &str, needle: &str) -> usize {
    let at = line
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in {line:?}"));
    unicode_width::UnicodeWidthStr::width(&line[..at])
}

/// `decide offers` shows how each sheet quoted VAT and its shortest term, in every format;
/// the terminal table lines its columns up by display width, Chinese titles included.
#[test]
fn offers_show_vat_and_term_and_the_table_is_aligned() {
    let rules = rules_with_sheet(
        "2026-09-10-gpuhub.csv",
        "rtx4090-x8-sichuan2,gpuhub,month,9375,7500,CNY,month,3 months,excluded,\
         VAT special invoice,2026-09-10,gpuhub quote e-mail of 2026-09-10\n",
    );
    // A title with Chinese characters, two columns each on a terminal.
    let catalog = rules.path().join("catalog.yaml");
    let text = std::fs::read_to_string(&catalog).unwrap();
    std::fs::write(
        &catalog,
        text.replace(
            "title: {en: \"RTX 4090 24G ×8 (Sichuan zone 2)\"",
            "title: {en: \"RTX 4090 24G ×8（四川二区）\"",
        ),
    )
    .unwrap();
    let dir = rules.path().to_str().unwrap();
    let run = |format: &str| {
        common::run_ok(&[
            "offers",
            "--as-of",
            "2026-09-10",
            "--rules",
            dir,
            "--format",
            format,
        ])
    };
    let table = run("table");
    let lines: Vec<&str> = table.lines().collect();
    let header = lines.iter().position(|l| l.starts_with("Offer ")).unwrap();
    let rows: Vec<&str> = lines[header + 1..]
        .iter()
        .take_while(|l| !l.is_empty())
        .copied()
        .collect();
    assert_eq!(rows.len(), 7, "{table}");
    let gpuhub = rows.iter().find(|r| r.contains("@gpuhub")).unwrap();
    assert!(gpuhub.contains("excluded, +6% added"), "{table}");
    assert!(gpuhub.contains("3 months"), "{table}");
    assert!(
        gpuhub.contains("¥7,950"),
        "the price shown includes VAT: {table}"
    );
    let marketplace = rows
        .iter()
        .find(|r| r.starts_with("rtx4090-x8-sichuan2 "))
        .unwrap();
    assert!(marketplace.contains("四川二区"), "{table}");
    assert!(marketplace.contains("unknown"), "{table}");
    // Each column starts at the same display column in every row: the vendor (after the
    // Chinese title) and the date the quote holds from.
    // A cell starts after the two spaces that end the cell before it.
    let cell_at = |line: &str, cell: &str| display_column(line, &format!("  {cell}")) + 2;
    let vendor_at = cell_at(lines[header], "Vendor");
    let quoted_at = cell_at(lines[header], "Quoted");
    for row in &rows {
        // A vendor by the name its sheet gives, with its id; one whose sheet gives none by its id.
        let vendor = if row.contains("@gpuhub") {
            "gpuhub"
        } else {
            "the jygpu.com marketplace (marketplace)"
        };
        assert_eq!(cell_at(row, vendor), vendor_at, "{row}\n{table}");
        assert_eq!(cell_at(row, "2026-09-"), quoted_at, "{row}\n{table}");
    }
    // Markdown and JSON carry the same facts.
    let md = run("md");
    assert!(md.contains("| VAT | Term |"), "{md}");
    assert!(md.contains("| excluded, +6% added | 3 months |"), "{md}");
    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    let offer = json["offers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "rtx4090-x8-sichuan2@gpuhub")
        .unwrap();
    assert_eq!(offer["vat"], "excluded", "{offer}");
    assert_eq!(offer["vat_added"], 0.06, "{offer}");
    assert_eq!(offer["quoted_discounted_cny"], 7500, "{offer}");
    assert_eq!(offer["discounted_cny"], 7950, "{offer}");
    assert_eq!(offer["min_term"], "3 months", "{offer}");
    // Without --format: Markdown in a pipe.
    let piped = common::run_ok(&["offers", "--as-of", "2026-09-10", "--rules", dir]);
    assert_eq!(piped, md);
}

/// On a terminal, `decide offers` prints the aligned table.
#[test]
fn offers_on_a_terminal_is_a_table() {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_decide"));
    command
        .args(["offers", "--as-of", "2026-09-04"])
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    let mut p = rexpect::session::spawn_command(command, Some(20_000)).unwrap();
    p.exp_regex("Offer +Hardware +Vendor +Unit +Price +List +VAT +Term")
        .unwrap();
    let rest = p.exp_eof().unwrap();
    assert!(!rest.contains("| `"), "no Markdown on a terminal: {rest}");
}

/// Every field a quote gives an offer, at every date the shipped sheets quote, is one the
/// typechecker knows an offer may have (`QUOTED_PATHS`), or one the catalog entry itself
/// writes: a rule reading it never fails to load at a date where no quote gives it.
#[test]
fn every_field_a_quote_gives_is_known_to_the_typechecker() {
    use decide_engine::policy::quotes::QUOTED_PATHS;
    fn leaves(value: &serde_json::Value, at: &str, out: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) if !map.contains_key("en") => {
                for (k, v) in map {
                    let path = if at.is_empty() {
                        k.clone()
                    } else {
                        format!("{at}.{k}")
                    };
                    leaves(v, &path, out);
                }
            }
            _ => out.push(at.to_owned()),
        }
    }
    let policy = Policy::embedded().unwrap();
    let mut dates: Vec<_> = policy.quotes.iter().map(|q| q.valid_from).collect();
    dates.sort();
    dates.dedup();
    assert!(dates.len() > 1);
    let mut checked = 0;
    for date in dates {
        let priced = policy.at(date);
        for offer in &priced.offers {
            let hardware = policy
                .hardware
                .iter()
                .find(|h| {
                    offer.item.fields.get("hardware").and_then(|v| v.as_str()) == Some(&h.item.id)
                })
                .unwrap();
            let mut written = Vec::new();
            leaves(
                &serde_json::Value::Object(hardware.item.fields.clone()),
                "",
                &mut written,
            );
            let mut paths = Vec::new();
            leaves(
                &serde_json::Value::Object(offer.item.fields.clone()),
                "",
                &mut paths,
            );
            for path in paths {
                assert!(
                    QUOTED_PATHS.contains(&path.as_str()) || written.contains(&path),
                    "offer `{}` at {date} has `{path}`, which QUOTED_PATHS does not list",
                    offer.item.id
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "{checked}");
}

/// A purchase by inquiry (`requirements.inquiry`: three vendors' quotes) warns when fewer quote
/// the hardware bought, names those that do and says how many more to get, in both languages; a
/// second vendor's quote lowers the count asked for, and without an inquiry nothing is asked
/// unless the policy asks it of every purchase (`min_quotes_always`).
#[test]
fn a_purchase_by_inquiry_warns_when_fewer_than_three_vendors_quote_the_hardware() {
    let rules = rules_with_gpuhub_at_7500();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, extra: &str| {
        let text = std::fs::read_to_string("examples/lora-7b-4090.yaml").unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, format!("{text}{extra}")).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let inquiry = write("inquiry.yaml", "requirements: {inquiry: true}\n");
    let plain = write("plain.yaml", "");
    let warning = |profile: &str, as_of: &str| {
        let r = record(rules.path(), profile, as_of);
        r["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["id"] == "too_few_quotes")
            .map(|w| w["message"].as_str().unwrap().to_owned())
    };
    // One vendor before gpuhub's sheet, two from its first day.
    let one = warning(&inquiry, "2026-09-09").expect("one vendor of three");
    assert!(
        one.starts_with("A purchase by inquiry (询价) needs quotes from at least 3 vendors")
            && one.contains(
                "only the jygpu.com marketplace quotes RTX 4090 24G ×8 (Sichuan zone 2). \
                 Get quotes from 2 more vendors for the same hardware"
            ),
        "{one}"
    );
    let two = warning(&inquiry, "2026-09-10").expect("two vendors of three");
    assert!(
        two.contains(
            "only 2 vendors quote RTX 4090 24G ×8 (Sichuan zone 2): gpuhub, the jygpu.com marketplace. \
             Get a quote from one more vendor"
        ),
        "{two}"
    );
    let zh = common::run_ok(&[
        &inquiry,
        "--as-of",
        "2026-09-09",
        "--rules",
        rules.path().to_str().unwrap(),
        "--lang",
        "zh",
    ]);
    assert!(
        zh.contains("询价采购要求所购硬件至少有 3 家供应商报价，而 RTX 4090 24G ×8（四川二区）只有极智算报价"),
        "{zh}"
    );
    // Without an inquiry the shipped policy asks nothing; a policy that asks two quotes of every
    // purchase does, and is met by two vendors.
    assert_eq!(warning(&plain, "2026-09-09"), None);
    let warnings = rules.path().join("warnings.yaml");
    let shipped = std::fs::read_to_string(&warnings).unwrap();
    let always = "  - id: min_quotes_always\n";
    let at = shipped.find(always).expect("the policy's own number");
    let edited = format!(
        "{}{}",
        &shipped[..at],
        shipped[at..].replacen("    value: 0\n", "    value: 2\n", 1)
    );
    assert_ne!(edited, shipped);
    std::fs::write(&warnings, edited).unwrap();
    let asked = warning(&plain, "2026-09-09").expect("two asked of every purchase");
    assert!(
        asked.starts_with("The policy asks for quotes from at least 2 vendors"),
        "{asked}"
    );
    assert_eq!(warning(&plain, "2026-09-10"), None);
    // An inquiry still asks its three.
    assert!(warning(&inquiry, "2026-09-10").is_some());
}

/// A quote may state its own VAT rate (`vat_rate`): a box leased as tangible movable property
/// bears 13%, not the policy's 6%, and a price quoted without VAT is compared with that rate
/// added (gpuhub's ¥7,500 is ¥8,475, not the ¥7,950 it is at 6%), in the memo and in
/// `decide quotes check`; a rate outside 0-0.2 is refused at its cell.
#[test]
fn a_quotes_own_vat_rate_is_the_rate_added() {
    let rules = common::edited_rules(&[]);
    let sheet = rules.path().join("quotes").join("2026-09-10-gpuhub.csv");
    let write = |rate: &str| {
        std::fs::write(
            &sheet,
            format!(
                "offer,vendor,unit,list_price,discounted_price,currency,discount_commits,\
                 min_term,vat,vat_rate,invoice,valid_from,source\n\
                 rtx4090-x8-sichuan2,gpuhub,month,9375,7500,CNY,month,1 month,excluded,{rate},\
                 VAT special invoice,2026-09-10,gpuhub lease quote of 2026-09-10\n"
            ),
        )
        .unwrap();
    };
    write("0.13");
    let profile = "examples/lora-7b-4090.yaml";
    let lost = gpuhub_lost_to_the_marketplace(rules.path());
    assert_eq!(lost["monthly_cny"], 8475.0, "{lost}");
    let text = memo(rules.path(), profile, "2026-09-10");
    assert!(
        text.contains("VAT excluded: quoted ¥7,500, shown and compared with 13% VAT added"),
        "{text}"
    );
    let check = || quotes_check(&sheet, rules.path(), "2026-09-10");
    let out = check();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains(": 8475 with VAT (7500 as quoted, without VAT; 13% VAT added"),
        "{said}"
    );
    // A percentage written as a whole number is refused at its cell, with the share to write.
    write("13");
    let out = check();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("`13` is not a VAT rate from 0 to 0.2")
            && said.contains("`0.13` for 13%")
            && said.contains("2026-09-10-gpuhub.csv:2"),
        "{said}"
    );
}

/// Writes a one-off fine-tuning job (`lora_finetune`, a 7-billion-parameter model) on eight
/// GPUs into `dir` as `name`: `hours` on the 4090 box, a deadline of `deadline_days`, and
/// `extra` lines under `job:`; gives its path.
fn one_off_lora_job(dir: &Path, name: &str, hours: u32, deadline_days: u32, extra: &str) -> String {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!(
            "name: a one-off LoRA job\nworkload:\n  task: lora_finetune\n  model_params_b: 7\n  \
             parallelism: [data]\nusage:\n  gpus: 8\n  hours_per_gpu_month: 720\njob:\n  hours:\n    \
             rtx4090-x8-sichuan2: {hours}\n  deadline_days: {deadline_days}\n{extra}"
        ),
    )
    .unwrap();
    path.to_str().unwrap().to_owned()
}

/// Writes the marketplace's quote of 2026-09-10 for the 4090 box at ¥7,920 a month and
/// `yearly` a year into `rules`.
fn write_yearly_quote(rules: &Path, yearly: u32) {
    std::fs::write(
        rules.join("quotes").join("2026-09-10-marketplace.csv"),
        format!(
            "offer,vendor,unit,list_price,discounted_price,yearly_price,currency,discount_commits,\
             min_term,vat,invoice,valid_from,source\n\
             rtx4090-x8-sichuan2,marketplace,month,9900,7920,{yearly},CNY,month,1 month,unknown,\
             unknown,2026-09-10,marketplace price list of 2026-09-10\n"
        ),
    )
    .unwrap();
}

/// Writes the terms tests' sheet: the marketplace's quote of 2026-09-10 with its `cells`.
fn write_terms_sheet(sheet: &Path, cells: &str) {
    std::fs::write(
        sheet,
        format!(
            "offer,vendor,unit,list_price,discounted_price,daily_price,weekly_price,month_days,\
             auto_renew,currency,discount_commits,min_term,vat,invoice,valid_from,source\n\
             {cells}\n"
        ),
    )
    .unwrap();
}

/// The 4090 box by the month (¥7,920), the day (¥400) and the week (¥2,500), renewing itself,
/// with the vendor's month of `month_days` days (empty: the policy's).
fn terms_row(month_days: &str) -> String {
    format!(
        "rtx4090-x8-sichuan2,marketplace,month,9900,7920,400,2500,{month_days},yes,CNY,month,\
         1 day,unknown,unknown,2026-09-10,marketplace price list of 2026-09-10"
    )
}

/// A box sold by the day and the week as well as the month (issue 47 item 1): a 13-day job is
/// billed as the cheapest mix of the terms (a week and six days, ¥4,900, where a month is
/// ¥7,920 and two weeks ¥5,000), in the memo's words; a vendor's 31-day month counts as its
/// hours.
#[test]
fn a_job_is_billed_the_cheapest_mix_of_the_terms_a_box_is_sold_on() {
    let rules = common::edited_rules(&[]);
    let sheet = rules
        .path()
        .join("quotes")
        .join("2026-09-10-marketplace.csv");
    let write = |cells: &str| write_terms_sheet(&sheet, cells);
    let profiles = tempfile::tempdir().unwrap();
    let profile = profiles.path().join("job.yaml");
    let job = |hours: u32| {
        one_off_lora_job(profiles.path(), "job.yaml", hours, 40, "");
    };
    let row = terms_row;
    write(&row(""));
    job(312);
    let text = memo(rules.path(), profile.to_str().unwrap(), "2026-09-10");
    assert!(
        text.contains("| Billed for the job | ¥4,900 (1 box × (1 week + 6 days)) |"),
        "{text}"
    );
    assert!(
        text.contains("| RTX 4090 24G ×8 (Sichuan zone 2) | by the day, week, month | ¥7,920 | 312 h, ¥4,900 | **recommended** |"),
        "the options table names the terms the box is sold on: {text}"
    );
    assert!(
        text.contains(
            "The quote says the term renews itself unless it is turned off (auto-renewal)"
        ),
        "{text}"
    );
    // `decide quotes check` says each term with its hours, and the renewal.
    let out = quotes_check(&sheet, rules.path(), "2026-09-10");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(
            "; terms: day 400 (24 h), week 2500 (168 h), month 7920 (720 h); renews itself \
             unless turned off"
        ),
        "{said}"
    );
    let zh = memo_zh(rules.path(), profile.to_str().unwrap(), "2026-09-10");
    assert!(
        zh.contains("| 作业计费合计 | ¥4,900（1 台 × （1 周 + 6 天）） |"),
        "{zh}"
    );
    assert!(zh.contains("| 按天、周、月 |"), "{zh}");
    assert!(
        text.contains("| Deploy | Bare metal, by the day, week, month (whole 8-GPU boxes) |")
            && zh.contains("| 部署方式 | 裸金属，按天、周、月计费（整台八卡机） |"),
        "the deployment says the terms, not monthly: {text}"
    );
    assert!(zh.contains("报价写明到期自动续费"), "{zh}");
    // 744 hours (31 days): a month of the policy's 30 days and a day (¥8,320), not two months
    // (¥15,840) nor 4 weeks and 3 days (¥11,200); where the vendor's month is 31 days, one
    // month lasts it (¥7,920).
    job(744);
    let text = memo(rules.path(), profile.to_str().unwrap(), "2026-09-10");
    assert!(
        text.contains("| Billed for the job | ¥8,320 (1 box × (1 month + 1 day)) |"),
        "{text}"
    );
    write(&row("31"));
    let text = memo(rules.path(), profile.to_str().unwrap(), "2026-09-10");
    assert!(
        text.contains("| Billed for the job | ¥7,920 (1 box × 1 month) |"),
        "{text}"
    );
}

/// A term's cells are refused at their place: a month of 32 days, an auto-renewal word other
/// than `yes` or `no`, a weekly price on a container's row (priced by the GPU-hour, not a term).
#[test]
fn a_terms_bad_cells_are_refused_at_their_cells() {
    let rules = common::edited_rules(&[]);
    let sheet = rules
        .path()
        .join("quotes")
        .join("2026-09-10-marketplace.csv");
    let write = |cells: &str| write_terms_sheet(&sheet, cells);
    let row = terms_row;
    // Refusals, each at its cell.
    let check = || quotes_check(&sheet, rules.path(), "2026-09-10");
    write(&row("32"));
    let said = String::from_utf8_lossy(&check().stderr).into_owned();
    assert!(
        said.contains("`32` is not a month's days from 28 to 31")
            && said.contains("2026-09-10-marketplace.csv:2"),
        "{said}"
    );
    write(&row("30").replace(",yes,", ",maybe,"));
    let said = String::from_utf8_lossy(&check().stderr).into_owned();
    assert!(said.contains("`maybe` is not `yes` or `no`"), "{said}");
    write(
        "rtx4090-container,marketplace,gpu_hour,1.96,1.57,,30,,,CNY,month,1 GPU-hour,unknown,\
         unknown,2026-09-10,marketplace price list of 2026-09-10",
    );
    let said = String::from_utf8_lossy(&check().stderr).into_owned();
    assert!(
        said.contains(
            "`weekly_price` prices a term of a box, and this row's unit `gpu_hour` is not a term"
        ),
        "{said}"
    );
}

/// A box sold by the year (包年) as well as the month: a plan of 11 or 12 months buys the year
/// where it costs less than the months (¥85,536 against ¥87,120 and ¥95,040), and the memo says
/// so beside the monthly cost and in the commitment item, in both languages; a plan of 6 months
/// buys months.
#[test]
fn a_year_cheaper_than_the_months_prices_a_plan_of_many_months() {
    let rules = common::edited_rules(&[]);
    write_yearly_quote(rules.path(), 85536);
    let profiles = tempfile::tempdir().unwrap();
    let profile = profiles.path().join("plan.yaml");
    let plan = |months: u32| {
        std::fs::write(
            &profile,
            format!(
                "name: LoRA fine-tuning for {months} months\nworkload:\n  task: lora_finetune\n  \
                 model_params_b: 7\nusage:\n  gpus: 8\n  hours_per_gpu_month: 720\n  \
                 months: {months}\n"
            ),
        )
        .unwrap();
        profile.to_str().unwrap().to_owned()
    };
    let text = memo(rules.path(), &plan(12), "2026-09-10");
    assert!(
        text.contains("| Monthly cost | ¥7,128 (1 box × 1 year: ¥85,536 over 12 months of use) |")
            && text.contains("| Over 12 months | ¥85,536 |")
            && text.contains("| RTX 4090 24G ×8 (Sichuan zone 2) | by the month, year | ¥7,128 |")
            && text.contains("buy each box's months as 1 year (¥85,536 a box)"),
        "{text}"
    );
    let zh = memo_zh(rules.path(), &plan(12), "2026-09-10");
    assert!(
        zh.contains("¥7,128（1 台 × 1 年：¥85,536，摊到 12 个使用月）")
            && zh.contains("上面的费用按每台 1 年购买"),
        "{zh}"
    );
    let text = memo(rules.path(), &plan(11), "2026-09-10");
    assert!(
        text.contains("| Monthly cost | ¥7,776 (1 box × 1 year: ¥85,536 over 11 months of use) |"),
        "{text}"
    );
    let text = memo(rules.path(), &plan(6), "2026-09-10");
    assert!(
        text.contains("| Monthly cost | ¥7,920 |") && !text.contains("1 year"),
        "{text}"
    );
}

/// What a job of `hours` costs bought in whole days, weeks, months of `month_hours` and years
/// at these prices, the cheapest of every combination: the reference the engine's bill is held
/// to, computed from the sheet's cells alone.
fn cheapest_by_every_combination(hours: u32, prices: [u32; 4], month_hours: u32) -> u32 {
    let lengths = [24, 168, month_hours, 8760];
    let tops = lengths.map(|l| hours.div_ceil(l));
    let mut best = u32::MAX;
    for y in 0..=tops[3] {
        for m in 0..=tops[2] {
            for w in 0..=tops[1] {
                for d in 0..=tops[0] {
                    let counts = [d, w, m, y];
                    let lasts: u32 = counts.iter().zip(lengths).map(|(c, l)| c * l).sum();
                    if lasts >= hours {
                        let cost = counts.iter().zip(prices).map(|(c, p)| c * p).sum();
                        best = best.min(cost);
                    }
                }
            }
        }
    }
    best
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(12))]

    /// Every price column of a term (`daily_price`, `weekly_price`, the month's
    /// `discounted_price` with its `month_days`, `yearly_price`) is a price of its own unit: the
    /// engine bills a one-off job on the box what the cheapest combination of whole terms costs,
    /// computed here from the cells alone, so no price per day is ever counted as a price per
    /// week or month.
    #[test]
    fn a_jobs_bill_is_the_cheapest_combination_of_every_term_priced(
        hours in 1u32..2_000,
        day in 100u32..600,
        week_days in 3u32..8,
        month in 5_000u32..9_000,
        year_months in 8u32..13,
        month_days in proptest::sample::select(vec![28u32, 30, 31]),
    ) {
        let week = day * week_days;
        let year = month * year_months;
        let rules = common::edited_rules(&[]);
        std::fs::write(
            rules.path().join("quotes").join("2026-09-10-marketplace.csv"),
            format!(
                "offer,vendor,unit,list_price,discounted_price,daily_price,weekly_price,\
                 yearly_price,month_days,currency,discount_commits,min_term,vat,invoice,\
                 valid_from,source\n\
                 rtx4090-x8-sichuan2,marketplace,month,{month},{month},{day},{week},{year},\
                 {month_days},CNY,month,1 day,unknown,unknown,2026-09-10,a test quote\n"
            ),
        )
        .unwrap();
        let as_of = "2026-09-10".parse().unwrap();
        let graph = Graph::compile(Policy::from_dir(rules.path()).unwrap().at(as_of)).unwrap();
        let profile = format!(
            "name: a job\nworkload:\n  task: lora_finetune\n  model_params_b: 7\n  \
             parallelism: [data]\nusage:\n  gpus: 8\n  hours_per_gpu_month: 720\njob:\n  \
             hours:\n    rtx4090-x8-sichuan2: {hours}\n  deadline_days: 200\n"
        );
        let source = Source::new("job.yaml", profile.as_str());
        let (_, e) = decide_tools::decide(&graph, &source, as_of).unwrap();
        let billed = serde_json::to_value(&e.values["offer_job_billed_cny"]).unwrap();
        let reference = cheapest_by_every_combination(
            hours,
            [day, week, month, year],
            month_days * 24,
        );
        proptest::prop_assert_eq!(
            billed["rtx4090-x8-sichuan2"].as_f64(),
            Some(f64::from(reference)),
            "{} hours at {:?}", hours, [day, week, month, year]
        );
    }
}

/// How a quote's contract ends early (issue 47 item 3): the refunded share, the notice and
/// whether a stopped instance keeps its GPU are the checklist's words, from the quote, in both
/// languages; a share above 1 is refused at its cell.
#[test]
fn a_quotes_exit_terms_are_what_the_checklist_says() {
    let rules = common::edited_rules(&[]);
    let sheet = rules
        .path()
        .join("quotes")
        .join("2026-09-10-marketplace.csv");
    let write = |share: &str| {
        std::fs::write(
            &sheet,
            format!(
                "offer,vendor,unit,list_price,discounted_price,refund_share,notice_days,\
                 stopped_keeps_gpu,currency,discount_commits,min_term,vat,invoice,valid_from,\
                 source\n\
                 rtx4090-x8-sichuan2,marketplace,month,9900,7920,{share},7,no,CNY,month,1 month,\
                 unknown,unknown,2026-09-10,marketplace contract terms of 2026-09-10\n"
            ),
        )
        .unwrap();
    };
    write("0.8");
    let profile = "examples/lora-7b-4090.yaml";
    let text = memo(rules.path(), profile, "2026-09-10");
    assert!(
        text.contains(
            "Ask how far ahead you pay and that the contract does not renew by itself: this plan \
             runs 6 months (¥47,520). The quote refunds 80% of unused prepaid time if the \
             contract ends early, with 7 days' notice: have that written into the contract. A \
             stopped instance gives its GPU back (the quote says so)"
        ),
        "{text}"
    );
    let zh = memo_zh(rules.path(), profile, "2026-09-10");
    assert!(
        zh.contains("报价写明提前退租退还未用预付时间的 80%，需提前 7 天通知：要求写入合同。")
            && zh.contains("报价写明实例停机后释放 GPU")
            && !zh.contains("提前退租时未用天数是否退款"),
        "{zh}"
    );
    let out = quotes_check(&sheet, rules.path(), "2026-09-10");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(
            "; refunds 80% of unused prepaid time if ended early; 7 days' notice; a stopped \
             instance gives its GPU back"
        ),
        "{said}"
    );
    write("0");
    let text = memo(rules.path(), profile, "2026-09-10");
    assert!(
        text.contains(
            "The quote refunds nothing of unused prepaid time if the contract ends early"
        ),
        "{text}"
    );
    write("80%");
    let out = quotes_check(&sheet, rules.path(), "2026-09-10");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("`80%` is not a share from 0 to 1") && said.contains("`0.8` for 80%"),
        "{said}"
    );
}

/// A term's own minimum (issue 47 item 1): where the box's day is sold for at least five days
/// (`min_days: 5`), a 3-day job bills five days (¥2,000), not three (¥1,200), below a week
/// (¥2,500); `decide quotes check` says the minimum; a minimum beside no price of its term,
/// or of 0, is refused at its cell.
#[test]
fn a_terms_minimum_is_bought_whole_or_not_at_all() {
    let rules = common::edited_rules(&[]);
    let sheet = rules
        .path()
        .join("quotes")
        .join("2026-09-10-marketplace.csv");
    let write = |daily: &str, min_days: &str| {
        std::fs::write(
            &sheet,
            format!(
                "offer,vendor,unit,list_price,discounted_price,daily_price,min_days,weekly_price,\
                 currency,discount_commits,min_term,vat,invoice,valid_from,source\n\
                 rtx4090-x8-sichuan2,marketplace,month,9900,7920,{daily},{min_days},2500,CNY,\
                 month,5 days,unknown,unknown,2026-09-10,marketplace price list of 2026-09-10\n"
            ),
        )
        .unwrap();
    };
    let profiles = tempfile::tempdir().unwrap();
    let job = one_off_lora_job(profiles.path(), "job.yaml", 72, 10, "");
    let job = job.as_str();
    write("400", "");
    let text = memo(rules.path(), job, "2026-09-10");
    assert!(
        text.contains("| Billed for the job | ¥1,200 (1 box × 3 days) |"),
        "{text}"
    );
    write("400", "5");
    let text = memo(rules.path(), job, "2026-09-10");
    assert!(
        text.contains("| Billed for the job | ¥2,000 (1 box × 5 days) |"),
        "{text}"
    );
    let zh = memo_zh(rules.path(), job, "2026-09-10");
    assert!(
        zh.contains("| 作业计费合计 | ¥2,000（1 台 × 5 天） |"),
        "{zh}"
    );
    let out = quotes_check(&sheet, rules.path(), "2026-09-10");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("; terms: day 400 (24 h, at least 5), week 2500 (168 h), month 7920 (720 h)"),
        "{said}"
    );
    write("", "5");
    let out = quotes_check(&sheet, rules.path(), "2026-09-10");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && said.contains("`min_days` is the fewest of a day term, and this row sells no day")
            && said.contains("give the day's price in `daily_price`"),
        "{said}"
    );
    write("400", "0");
    let out = quotes_check(&sheet, rules.path(), "2026-09-10");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && said.contains("`0` is not a whole number from 1 to 1000"),
        "{said}"
    );
}

/// A mixed plan whose boxes are bought as a year (the box sold by the year at ¥80,000 beside
/// its month at ¥7,920, twelve months of use) says so and prices the boxes at the year's
/// share: the headline, the deployment and the monthly cost agree with the total (¥6,667 a box
/// a month, not the month's ¥7,920), in both languages.
#[test]
fn a_mixed_plans_boxes_bought_as_a_year_are_said_and_priced_so() {
    let rules = common::edited_rules(&[]);
    write_yearly_quote(rules.path(), 80000);
    let profiles = tempfile::tempdir().unwrap();
    let profile = profiles.path().join("mixed.yaml");
    std::fs::write(
        &profile,
        std::fs::read_to_string("examples/mixed-plan-nine-gpus.yaml")
            .unwrap()
            .replace("months: 6", "months: 12"),
    )
    .unwrap();
    let profile = profile.to_str().unwrap();
    let text = memo(rules.path(), profile, "2026-09-10");
    for said in [
        "> **Rent 1 × RTX 4090 24G ×8 (Sichuan zone 2), each box bought as 1 year, and 1 container \
         GPU on a committed month at ¥1.57/GPU-hour for the rest: ¥7,797 a month.**",
        "| Deploy | Mixed: whole 8-GPU boxes by the month, year for the GPUs that fill them, \
         containers for the rest |",
        "| Monthly cost | ¥7,797 (1 × ¥6,667 + 1 GPU × 720 h × ¥1.57) (1 box × 1 year: ¥80,000 \
         over 12 months of use) |",
        "| Over 12 months | ¥93,565 |",
    ] {
        assert!(text.contains(said), "{said}\n\n{text}");
    }
    let zh = memo_zh(rules.path(), profile, "2026-09-10");
    for said in [
        "租用 1 台 RTX 4090 24G ×8（四川二区）（每台按 1 年购买），其余用 1 张容器 GPU",
        "| 部署方式 | 混合：填得满的部分租八卡整机（按月、年计费），其余用容器 |",
        "| 每月成本 | ¥7,797（1 × ¥6,667 + 1 张 × 720 h × ¥1.57）（1 台 × 1 年：¥80,000，摊到 12 个使用月） |",
    ] {
        assert!(zh.contains(said), "{said}\n\n{zh}");
    }
}

/// Writes the refund test's sheet: the marketplace's 4090 box of 2026-09-10 with the term
/// columns `terms` (`daily_price,weekly_price,yearly_price`), refunding 80% of unused prepaid
/// time with `notice` days' notice.
fn write_refund_sheet(sheet: &Path, terms: &str, notice: u32) {
    std::fs::write(
        sheet,
        format!(
            "offer,vendor,unit,list_price,discounted_price,daily_price,weekly_price,yearly_price,\
             refund_share,notice_days,currency,discount_commits,min_term,vat,invoice,valid_from,\
             source\n\
             rtx4090-x8-sichuan2,marketplace,month,9900,7920,{terms},0.8,{notice},CNY,month,\
             1 day,unknown,unknown,2026-09-10,marketplace price list of 2026-09-10\n"
        ),
    )
    .unwrap();
}

/// A quote that refunds unused prepaid time (issue 47 item 3) lowers the bill where the last
/// term bought is ended early: a 13-day job rents a month and gets back 80% of the 17 days
/// it does not use (¥7,920 less ¥3,590.40), below a week and six days (¥4,900); with seven
/// days' notice only ten days come back and the week and six days win. A plan of 11 months
/// buys a year and ends it after 11 months and the notice (¥85,536 less 80% of 28 days,
/// ¥5,249.30). The memo says what the bill counts on, in both languages.
#[test]
fn a_refund_lowers_the_bill_where_the_last_term_is_ended_early() {
    let rules = common::edited_rules(&[]);
    let sheet = rules
        .path()
        .join("quotes")
        .join("2026-09-10-marketplace.csv");
    let profiles = tempfile::tempdir().unwrap();
    let job = one_off_lora_job(profiles.path(), "job.yaml", 312, 40, "");
    let job = job.as_str();
    write_refund_sheet(&sheet, "400,2500,", 0);
    let text = memo(rules.path(), job, "2026-09-10");
    for said in [
        "| Billed for the job | ¥4,330 (1 box × 1 month, less ¥3,590 paid back) |",
        "| Refund | The bill counts on ¥3,590 paid back: the last month bought is ended when the \
         job ends, and the quote refunds 80% of the 17 days (408 h) of it left unused. Have the \
         refund written into the contract: without it, ¥7,920 is paid. |",
        "| by the day, week, month | ¥7,920 | 312 h, ¥4,330 | **recommended** |",
        "| ¥11.00 | ¥3,432 | ¥4,330 (1 month, less ¥3,590 paid back) |",
    ] {
        assert!(text.contains(said), "{said}\n\n{text}");
    }
    let html = common::run_ok(&[
        job,
        "--as-of",
        "2026-09-10",
        "--format",
        "html",
        "--rules",
        rules.path().to_str().unwrap(),
    ]);
    assert!(
        html.contains("<tr><th>Refund</th><td>The bill counts on ¥3,590 paid back:")
            && html.contains(
                "<th>Billed for the job</th><td>¥4,330 (1 box × 1 month, less ¥3,590 paid back)"
            ),
        "{html}"
    );
    let zh = memo_zh(rules.path(), job, "2026-09-10");
    for said in [
        "| 作业计费合计 | ¥4,330（1 台 × 1 个月，扣除退款 ¥3,590） |",
        "| 退款 | 账单已计入退款 ¥3,590：最后购买的 1 个月在作业结束时提前终止，报价退还其中未用的 \
         17 天（408 h）的 80%。请把退款写入合同：否则需付 ¥7,920。 |",
    ] {
        assert!(zh.contains(said), "{said}\n\n{zh}");
    }
    // Seven days' notice: ten days come back (¥2,112), the month costs ¥5,808, and a week and
    // six days are cheaper.
    write_refund_sheet(&sheet, "400,2500,", 7);
    let text = memo(rules.path(), job, "2026-09-10");
    assert!(
        text.contains("| Billed for the job | ¥4,900 (1 box × (1 week + 6 days)) |")
            && !text.contains("| Refund |")
            && !text.contains("paid back"),
        "{text}"
    );
    // Eleven months of use on a box sold by the month and the year, with seven days' notice.
    write_refund_sheet(&sheet, ",,85536", 7);
    let months = profiles.path().join("months.yaml");
    std::fs::write(
        &months,
        std::fs::read_to_string("examples/lora-7b-4090.yaml")
            .unwrap()
            .replace("months: 6", "months: 11"),
    )
    .unwrap();
    let months = months.to_str().unwrap();
    let text = memo(rules.path(), months, "2026-09-10");
    for said in [
        "| Monthly cost | ¥7,299 (1 box × 1 year, less ¥5,249 paid back: ¥80,287 over 11 months \
         of use) |",
        "| Over 11 months | ¥80,287 |",
        "| Refund | The bill counts on ¥5,249 paid back: the last year bought is ended when the 11 \
         months of use end and its 7 days' notice have run, and the quote refunds 80% of the 28 \
         days (672 h) of it left unused. Have the refund and its notice written into the \
         contract: without it, ¥85,536 is paid. |",
        "The costs above buy each box's months as 1 year (¥85,536 a box, less the refund the \
         memo counts on), which costs less than paying month by month",
    ] {
        assert!(text.contains(said), "{said}\n\n{text}");
    }
    let zh = memo_zh(rules.path(), months, "2026-09-10");
    assert!(
        zh.contains(
            "| 每月成本 | ¥7,299（1 台 × 1 年，扣除退款 ¥5,249：¥80,287，摊到 11 个使用月） |"
        ) && zh.contains(
            "最后购买的 1 年在 11 个使用月结束并满 7 天通知期后提前终止，报价退还其中未用的 \
                 28 天（672 h）的 80%。请把退款及通知期写入合同：否则需付 ¥85,536。"
        ),
        "{zh}"
    );
}

/// The shipped policy's exchange rates, as `rules/catalog.yaml` writes them: a test that sets
/// its own replaces them.
const SHIPPED_RATES: &str = "  exchange_rates:\n    - {currency: USD, from: 2026-01-08, rate: 7.0197, source: \"central parity rate of 2026-01-08, China Foreign Exchange Trade System (as reported by MENAFN that day)\"}\n";

/// The shipped rules with two dated US-dollar rates (¥7.10 from 2026-09-01, ¥7.30 from
/// 2026-09-15) and globalcloud quoting the 4090 box in dollars from 2026-09-10: USD 1,100 a
/// month or USD 50 a day, VAT included.
fn rules_with_a_dollar_quote() -> (tempfile::TempDir, std::path::PathBuf) {
    let rules = common::edited_rules(&[(
        "catalog.yaml",
        SHIPPED_RATES,
        "  exchange_rates:\n    \
         - {currency: USD, from: 2026-09-01, rate: 7.1, source: \"central parity of 2026-09-01\"}\n    \
         - {currency: USD, from: 2026-09-15, rate: 7.3, source: \"central parity of 2026-09-15\"}\n",
    )]);
    let sheet = rules
        .path()
        .join("quotes")
        .join("2026-09-10-globalcloud.csv");
    std::fs::write(
        &sheet,
        "offer,vendor,unit,list_price,discounted_price,daily_price,currency,discount_commits,\
         min_term,vat,invoice,valid_from,source\n\
         rtx4090-x8-sichuan2,globalcloud,month,1300,1100,50,USD,month,1 month,included,unknown,\
         2026-09-10,globalcloud price page of 2026-09-10\n",
    )
    .unwrap();
    (rules, sheet)
}

/// A quote in US dollars (issue 47 item 5) is converted at the rate in force on the date the
/// memo prices at, not its own: on 2026-09-10 globalcloud's USD 1,100 is ¥7,810 and beats the
/// marketplace's ¥7,920; on 2026-09-15, the sheet unchanged, it is ¥8,030 and loses. The memo
/// shows both currencies and the rate with its source, the checklist asks to bill in CNY or
/// fix the rate, a job is billed on the terms converted, and `decide quotes check` and
/// `decide offers` show the conversion.
#[test]
fn a_quote_in_dollars_is_converted_at_the_rate_of_the_memos_date() {
    let (rules, sheet) = rules_with_a_dollar_quote();
    let profile = "examples/lora-7b-4090.yaml";
    let early = record(rules.path(), profile, "2026-09-10");
    assert_eq!(early["offer"], "rtx4090-x8-sichuan2@globalcloud", "{early}");
    assert_eq!(early["costs"]["recommended_monthly_cny"], 7810.0, "{early}");
    let text = memo(rules.path(), profile, "2026-09-10");
    assert!(
        text.contains(
            "| Currency | RTX 4090 24G ×8 (Sichuan zone 2) is quoted in USD (USD 1,100.00 a month), \
             converted at ¥7.1 a USD, the rate from 2026-09-01 (central parity of 2026-09-01). The \
             bill in CNY moves with the rate (the checklist's price lock asks to fix it). |"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "discounted ¥7,810 a month (quoted in USD: USD 1,100.00, at ¥7.1 a USD, the rate from \
             2026-09-01: central parity of 2026-09-01)"
        ) && text.contains(
            "is quoted in USD (USD 1,100.00, ¥7.1 a USD on 2026-09-10): have the contract bill in \
             CNY, or fix the rate, or the bill moves with the rate."
        ),
        "{text}"
    );
    let zh = memo_zh(rules.path(), profile, "2026-09-10");
    assert!(
        zh.contains(
            "| 币种 | RTX 4090 24G ×8（四川二区）以 USD 报价（每月 USD 1,100.00），按 2026-09-01 起的\
             汇率每 USD ¥7.1 折算（central parity of 2026-09-01）。"
        ),
        "{zh}"
    );
    // The same sheet five days later, at the next rate: ¥8,030, dearer than the marketplace.
    let late = record(rules.path(), profile, "2026-09-15");
    assert_eq!(late["offer"], "rtx4090-x8-sichuan2", "{late}");
    let globalcloud = late["alternatives"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["offer"] == "rtx4090-x8-sichuan2@globalcloud")
        .unwrap();
    assert_eq!(globalcloud["monthly_cny"], 8030.0, "{globalcloud}");
    // A graph priced on 2026-09-10 holds until the next quote or rate, and not past it.
    let policy = Policy::from_dir(rules.path()).unwrap();
    let priced = policy.at("2026-09-10".parse().unwrap());
    assert!(priced.prices_hold_at("2026-09-14".parse().unwrap()));
    assert!(!priced.prices_hold_at("2026-09-15".parse().unwrap()));
    // A 13-day job is billed 13 of the converted days (USD 50 × 7.1 = ¥355 a day), not a month.
    let profiles = tempfile::tempdir().unwrap();
    let job = one_off_lora_job(profiles.path(), "job.yaml", 312, 40, "");
    let job_memo = memo(rules.path(), &job, "2026-09-10");
    assert!(
        job_memo.contains("| Billed for the job | ¥4,615 (1 box × 13 days) |"),
        "{job_memo}"
    );
    // `decide quotes check` shows the sheet's dollars and the yuan at the date's rate.
    let out = quotes_check(&sheet, rules.path(), "2026-09-16");
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert!(
        said.contains(
            "valid from 2026-09-10: 1100 USD; 8030 CNY at 7.3 CNY a USD, the rate from 2026-09-15 \
             (central parity of 2026-09-15)"
        ),
        "{said}"
    );
    let offers = common::run_ok(&[
        "offers",
        "--as-of",
        "2026-09-10",
        "--format",
        "json",
        "--rules",
        rules.path().to_str().unwrap(),
    ]);
    let offers: serde_json::Value = serde_json::from_str(&offers).unwrap();
    let listed = offers["offers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "rtx4090-x8-sichuan2@globalcloud")
        .unwrap();
    assert_eq!(listed["currency"], "USD", "{listed}");
    assert_eq!(listed["quoted_amount"], 1100, "{listed}");
    assert_eq!(listed["exchange_rate"], 7.1, "{listed}");
    assert_eq!(listed["discounted_cny"], 7810, "{listed}");
}

/// A currency the policy has no rate for on the quote's first day is refused at its cell,
/// naming the currency and the date; so is a code that is not one; the policy's own rates are
/// checked when it loads.
#[test]
fn a_currency_without_a_rate_is_refused_naming_the_currency_and_the_date() {
    let (rules, sheet) = rules_with_a_dollar_quote();
    let refused = |cells: (&str, &str)| {
        let text = std::fs::read_to_string(&sheet).unwrap();
        let bad = rules.path().join("quotes").join("2026-08-20-bad.csv");
        std::fs::write(&bad, text.replace(cells.0, cells.1)).unwrap();
        let out = quotes_check(&bad, rules.path(), "2026-09-16");
        std::fs::remove_file(&bad).unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let said = refused((",USD,", ",EUR,"));
    assert!(
        said.contains("no EUR exchange rate on or before 2026-09-10, the quote's first day")
            && said.contains("add a rate to `quote_sheets.exchange_rates`")
            && said.contains("2026-08-20-bad.csv:2"),
        "{said}"
    );
    let said = refused(("2026-09-10,globalcloud", "2026-08-20,globalcloud"));
    assert!(
        said.contains("no USD exchange rate on or before 2026-08-20")
            && said.contains("has USD only from 2026-09-01, 2026-09-15"),
        "{said}"
    );
    let said = refused((",USD,", ",usd,"));
    assert!(said.contains("`usd` is not a currency code"), "{said}");
    // The policy's rates: a code, a date, a rate above 0, a source, one a currency a day.
    let bad = common::edited_rules(&[(
        "catalog.yaml",
        SHIPPED_RATES,
        "  exchange_rates:\n    \
         - {currency: CNY, from: 2026-09-01, rate: 1, source: same}\n    \
         - {currency: USD, from: 2026-9-1, rate: 0, source: \"\"}\n    \
         - {currency: EUR, from: 2026-09-01, rate: 7.8, source: a}\n    \
         - {currency: EUR, from: 2026-09-01, rate: 7.9, source: b}\n",
    )]);
    let out = common::run(&["validate", "--rules", bad.path().to_str().unwrap()]);
    let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    for fault in [
        "`CNY` is not a currency to convert from",
        "`from` `2026-9-1` is not a date",
        "`rate` 0 is not a rate above 0",
        "`source` is empty",
        "EUR has two rates from 2026-09-01",
        "quote_sheets.exchange_rates[3]",
    ] {
        assert!(said.contains(fault), "{fault}\n{said}");
    }
}

/// The shipped rules with the marketplace's spot capacity for the 4090 box from 2026-09-10
/// (`preemptible: yes`): ¥6,000 a month or ¥200 a day, against ¥7,920 a month on demand.
fn rules_with_spot() -> (tempfile::TempDir, std::path::PathBuf) {
    let rules = common::edited_rules(&[]);
    let sheet = rules.path().join("quotes").join("2026-09-10-spot.csv");
    std::fs::write(
        &sheet,
        "offer,vendor,vendor_name,unit,list_price,discounted_price,daily_price,currency,\
         discount_commits,min_term,vat,invoice,preemptible,valid_from,source\n\
         rtx4090-x8-sichuan2,marketplace-spot,the marketplace's spot capacity,month,9900,6000,\
         200,CNY,none,1 day,unknown,unknown,yes,2026-09-10,spot listing of 2026-09-10\n",
    )
    .unwrap();
    (rules, sheet)
}

/// Spot capacity (issue 47 item 4) runs a one-off job that checkpoints, its time lengthened by
/// the policy's interruption assumption (1 a day, each losing half of a 1-hour checkpoint
/// interval and a 15-minute restart: 312 h become 321.75 h, 14 days at ¥200 = ¥2,800), and the
/// memo says the risk in both languages. The same job without checkpoints, a monthly workload
/// and a service do not get it, each told why; a bad `preemptible` cell is refused at its cell.
#[test]
fn spot_capacity_runs_only_a_job_that_checkpoints_and_costs_it_its_interruptions() {
    let (rules, sheet) = rules_with_spot();
    let profiles = tempfile::tempdir().unwrap();
    let job = |checkpoints: bool| {
        one_off_lora_job(
            profiles.path(),
            &format!("job-{checkpoints}.yaml"),
            312,
            40,
            if checkpoints {
                "  checkpoints: true\n"
            } else {
                ""
            },
        )
    };
    let spot = "rtx4090-x8-sichuan2@marketplace-spot";
    let option = |record: &serde_json::Value| {
        record["alternatives"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["offer"] == spot)
            .unwrap()
            .clone()
    };
    let on_spot = job(true);
    let chosen = record(rules.path(), &on_spot, "2026-09-10");
    assert_eq!(chosen["offer"], spot, "{chosen}");
    assert_eq!(option(&chosen)["job_hours"], 321.8, "{chosen}");
    assert_eq!(chosen["costs"]["contract_total_cny"], 2800.0, "{chosen}");
    let text = memo(rules.path(), &on_spot, "2026-09-10");
    assert!(
        text.contains("| Billed for the job | ¥2,800 (1 box × 14 days) |")
            && text.contains(
                "| Spot capacity | RTX 4090 24G ×8 (Sichuan zone 2) is preemptible (spot) \
                 capacity: the vendor may take it back at a few minutes' notice. The job's time \
                 here includes its interruptions, 3.1% more (the policy assumes 1 interruption a \
                 day, each losing half of a 1 h checkpoint interval and a 15-minute restart): \
                 checkpoint at least every 1 h to storage that outlives the instance. |"
            ),
        "{text}"
    );
    let zh = memo_zh(rules.path(), &on_spot, "2026-09-10");
    assert!(
        zh.contains("| 抢占式容量 | RTX 4090 24G ×8（四川二区）为抢占式（竞价）容量")
            && zh.contains("多 3.1%（策略假设每天中断 1 次"),
        "{zh}"
    );
    // Without checkpoints the job stays on demand, and the options table says why.
    let plain = record(rules.path(), &job(false), "2026-09-10");
    assert_eq!(plain["offer"], "rtx4090-x8-sichuan2", "{plain}");
    assert_eq!(option(&plain)["reason"], "spot", "{plain}");
    let text = memo(rules.path(), &job(false), "2026-09-10");
    assert!(
        text.contains(
            "| ¥6,000 | 321.8 h, ¥2,800 | spot capacity, which the vendor may take back: only for \
             a job that checkpoints (`job.checkpoints`) |"
        ) && !text.contains("| Spot capacity |"),
        "{text}"
    );
    // Months of use without a job, and a service, are not run on it either.
    let monthly = record(rules.path(), "examples/lora-7b-4090.yaml", "2026-09-10");
    assert_eq!(monthly["offer"], "rtx4090-x8-sichuan2", "{monthly}");
    assert_eq!(option(&monthly)["reason"], "spot", "{monthly}");
    let service = record(
        rules.path(),
        "examples/inference-13b-high-concurrency.yaml",
        "2026-09-10",
    );
    assert_eq!(
        option(&service)["why"],
        "spot capacity, which the vendor may take back: not for a service",
        "{service}"
    );
    // `decide quotes check` says it; a cell other than yes or no is refused where it is.
    let out = quotes_check(&sheet, rules.path(), "2026-09-10");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("; preemptible (spot): the vendor may take it back at short notice"),
        "{said}"
    );
    let text = std::fs::read_to_string(&sheet).unwrap();
    std::fs::write(&sheet, text.replace(",yes,2026-09-10", ",maybe,2026-09-10")).unwrap();
    let out = quotes_check(&sheet, rules.path(), "2026-09-10");
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("preemptible") && said.contains("`maybe`") && said.contains("spot.csv:2"),
        "{said}"
    );
}

/// The example sheet of docs/quotes.md (its second CSV block, every optional column the tests
/// use) is a valid sheet for the shipped policy with a dollar rate, as the text says.
#[test]
fn the_documented_example_sheet_is_valid() {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/quotes.md"))
            .unwrap();
    let block = docs
        .split("```csv\n")
        .nth(2)
        .and_then(|b| b.split("```").next())
        .unwrap();
    let (rules, dollar_sheet) = rules_with_a_dollar_quote();
    std::fs::remove_file(dollar_sheet).unwrap();
    let sheet = rules.path().join("quotes").join("2026-09-10-docs.csv");
    std::fs::write(&sheet, block).unwrap();
    let out = quotes_check(&sheet, rules.path(), "2026-09-10");
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}{out:?}");
    assert!(
        said.contains("2026-09-10-docs.csv: 4 quotes, valid")
            && said.contains("day 400 (24 h, at least 2), week 2500 (168 h), month 7920 (744 h)"),
        "{said}"
    );
}
