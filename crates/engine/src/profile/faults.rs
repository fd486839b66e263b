//! Every fault of a profile at once: the YAML reader stops at the first, so the fault it
//! reported is masked in a copy of the text (its entry blanked, or a valid value put in place
//! of a required one) and the copy read again, until it reads or nothing more can be masked.
//!
//! Each fault is worded exactly as when it is the only one (the same reader reads the copy),
//! and points into the file as written: masking keeps every line where it was, and a line or
//! a value put in is taken back out of the positions ([`Masked::original`]). A fault between
//! two fields (`workload.nodes` above `usage.gpus`) is checked once every field reads, unless a
//! stand-in value took part.

use serde_json::Value as J;

use super::Profile;
use super::fields::{self, Field, FieldKind};
use crate::error::{Error, ErrorKind, Position};
use crate::places::{Layout, Places, Spot};
use crate::source::{Refusal, Source, read_yaml};

/// The most faults listed: a file with more is not a profile with typos, and each fault costs
/// a read of the whole text.
const MAX_FAULTS: usize = 30;

/// Every fault of `source`'s profile, as one error carrying the rest; `None` when its first is
/// not of a field (the text is not YAML, or not a mapping), which the caller's error says.
pub(super) fn every(source: &Source) -> Option<Error> {
    let mut masked = Masked::new(&source.text);
    let mut found: Vec<Error> = Vec::new();
    let mut stood_in = false;
    for _ in 0..MAX_FAULTS {
        let text = masked.text();
        let refusal = match read_yaml::<Profile>(&text) {
            Ok(profile) => {
                if !stood_in && let Err(e) = profile.check_consistent(source) {
                    found.push(e);
                }
                break;
            }
            Err(refusal) if refusal.is_syntax() => break,
            Err(refusal) => refusal,
        };
        // A mask that left the text no longer YAML would be refused as such: stop before.
        let Some(places) = Places::of(&text) else {
            break;
        };
        let position = refusal.position.map(|p| masked.original(p));
        let mut error = source.refused(ErrorKind::Profile, &refusal, position);
        if let Some(key) = quoted(&refusal.message, "missing field `")
            && let Some(field) = fields::field(&join(&dotted(&refusal.path), key))
            && let Some(what) = &field.description
        {
            let what = what.split_whitespace().collect::<Vec<_>>().join(" ");
            // Its first sentence, without the detail after a colon.
            let first = what
                .split_inclusive(". ")
                .next()
                .and_then(|s| s.split(": ").next())
                .unwrap_or(&what)
                .trim_end();
            error = error.help(format!("`{key}`: {first}"));
        }
        let repeated = found.last().is_some_and(|last: &Error| {
            last.title() == error.title()
                && last.origin().and_then(|o| o.position) == error.origin().and_then(|o| o.position)
        });
        if repeated {
            break;
        }
        found.push(error);
        match masked.mend(&refusal, &places) {
            Mended::Blanked => {}
            Mended::StoodIn => stood_in = true,
            Mended::No => break,
        }
    }
    // In the order they are written (a missing field is found at its section's end).
    found.sort_by_key(|e| {
        e.origin()
            .and_then(|o| o.position)
            .map_or((usize::MAX, usize::MAX), |p| (p.line, p.column))
    });
    Error::many(found)
}

/// What masking a fault did.
enum Mended {
    /// Took the entry out.
    Blanked,
    /// Put a valid stand-in value in place of a required one.
    StoodIn,
    /// Found nothing it could mask.
    No,
}

/// A change made to the text, to take back out of a position.
enum Edit {
    /// A line put in before line `at`.
    Line { at: usize },
    /// Characters from column `from` of `line` on moved right by `by` (left where negative).
    Shift { line: usize, from: usize, by: isize },
}

/// The profile's text with the faults found so far masked.
struct Masked {
    chars: Vec<char>,
    edits: Vec<Edit>,
}

impl Masked {
    fn new(text: &str) -> Self {
        Masked {
            chars: text.chars().collect(),
            edits: Vec::new(),
        }
    }

    fn text(&self) -> String {
        self.chars.iter().collect()
    }

    /// Where `position` of the masked text is in the file as written.
    fn original(&self, mut position: Position) -> Position {
        for edit in self.edits.iter().rev() {
            match *edit {
                Edit::Line { at } => {
                    if position.line > at {
                        position.line -= 1;
                    } else if position.line == at {
                        position.column = 1;
                    }
                }
                Edit::Shift { line, from, by } if position.line == line => {
                    if position.column >= from {
                        position.column = position.column.saturating_add_signed(-by).max(1);
                    } else if by > 0 && position.column + by.unsigned_abs() > from {
                        // Inside the text put in: its start.
                        position.column = (from - by.unsigned_abs()).max(1);
                    }
                }
                Edit::Shift { .. } => {}
            }
        }
        position
    }

    /// Masks the fault `refusal` reports, reading the masked text's `places`.
    fn mend(&mut self, refusal: &Refusal, places: &Places) -> Mended {
        let path = dotted(&refusal.path);
        if let Some(key) = quoted(&refusal.message, "unknown field `") {
            // (The path names the unknown key itself.)
            let entry = if path == key || path.ends_with(&format!(".{key}")) {
                path
            } else {
                join(&path, key)
            };
            // A misspelt field (`hours_per_gpu_mnth`) is read as the field it was meant to
            // be, so that its value is checked too and it is not also said to be missing.
            if let Some(meant) = meant(&entry, key, places)
                && let Some(node) = places.get(&entry)
                && self.rename(node, key, meant)
            {
                return Mended::Blanked;
            }
            return if self.take_out(&entry, places) {
                Mended::Blanked
            } else {
                Mended::No
            };
        }
        if let Some(key) = quoted(&refusal.message, "missing field `") {
            let entry = join(&path, key);
            let (Some(field), Some(mapping)) = (fields::field(&entry), places.get(&path)) else {
                return Mended::No;
            };
            return if self.insert(mapping, key, &stand_in(field).to_string()) {
                Mended::StoodIn
            } else {
                Mended::No
            };
        }
        // A value the field does not take: the field itself, or the list or map it is in.
        let Some(field) = declared(&path) else {
            return Mended::No;
        };
        let Some(node) = places.get(&field.path) else {
            return Mended::No;
        };
        // Written as left out where the format can say so (`null`, the default), else a
        // stand-in or the entry taken out.
        if field.nullable {
            self.replace(node, "null");
        } else if let Some(default) = &field.default {
            self.replace(node, &default.to_string());
        } else if field.required {
            self.replace(node, &stand_in(field).to_string());
            return Mended::StoodIn;
        } else if !self.take_out(&field.path, places) {
            return Mended::No;
        }
        Mended::Blanked
    }

    /// Takes the entry at `path` out of its mapping; an entry alone in its mapping leaves
    /// `{}`, not a section with nothing in it (which reads as `null`).
    fn take_out(&mut self, path: &str, places: &Places) -> bool {
        let Some(node) = places.get(path) else {
            return false;
        };
        let parent = path.rsplit_once('.').map_or("", |(head, _)| head);
        if !parent.is_empty()
            && places.entries(parent) == 1
            && let Some(mapping) = places.get(parent)
        {
            self.replace(mapping, "{}");
            return true;
        }
        self.blank_entry(path, node, places);
        true
    }

    /// Writes the key `key` of `node` as `meant`; false where the key is not written as `key`
    /// (plain or quoted) at its place.
    fn rename(&mut self, node: &Spot, key: &str, meant: &str) -> bool {
        let Some(at) = node.key else {
            return false;
        };
        let quoted = matches!(self.chars.get(at.offset), Some('"' | '\''));
        let start = at.offset + usize::from(quoted);
        let old: Vec<char> = key.chars().collect();
        if self.chars.get(start..start + old.len()) != Some(&old[..]) {
            return false;
        }
        let by = signed(meant.chars().count()) - signed(old.len());
        self.chars.splice(start..start + old.len(), meant.chars());
        let column = at.column + usize::from(quoted) + old.len();
        if by != 0 {
            self.edits.push(Edit::Shift {
                line: at.line,
                from: column.saturating_add_signed(by),
                by,
            });
        }
        true
    }

    /// Blanks the characters from `from` to `to`, keeping line breaks.
    fn blank(&mut self, from: usize, to: usize) {
        for c in self.chars.get_mut(from..to).unwrap_or_default() {
            if !matches!(c, '\n' | '\r') {
                *c = ' ';
            }
        }
    }

    /// Takes out the entry at `path` (its key and value), with the comma that parts it from
    /// its neighbour in a flow mapping.
    fn blank_entry(&mut self, path: &str, node: &Spot, places: &Places) {
        let from = node.key.map_or(node.start.offset, |k| k.offset);
        let mut to = node.end.offset.max(from);
        if node.start.offset == node.end.offset {
            // No value written (`job:`): the rest of the key's line.
            to = self.chars[from..]
                .iter()
                .position(|&c| matches!(c, '\n' | '\r'))
                .map_or(self.chars.len(), |i| from + i);
        }
        self.blank(from, to);
        let parent = path.rsplit_once('.').map_or("", |(head, _)| head);
        if places
            .get(parent)
            .is_some_and(|p| p.layout == Layout::FlowMapping)
        {
            let after = self.chars[to..]
                .iter()
                .position(|c| !matches!(c, ' ' | '\t'))
                .map(|i| to + i);
            let before = self.chars[..from]
                .iter()
                .rposition(|c| !matches!(c, ' ' | '\t'));
            let comma = [after, before]
                .into_iter()
                .flatten()
                .find(|&i| self.chars[i] == ',');
            if let Some(i) = comma {
                self.blank(i, i + 1);
            }
        }
    }

    /// Puts `with` (one line of flow YAML) in place of `node`'s value; the value's further
    /// lines are blanked, so every later line stays where it was.
    fn replace(&mut self, node: &Spot, with: &str) {
        let (start, end) = (node.start, node.end);
        if start.offset == end.offset {
            // No value written (`usage:`): after the key's colon.
            let Some(key) = node.key else { return };
            let line_end = self.chars[key.offset..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(self.chars.len(), |i| key.offset + i);
            let colon = (key.offset..line_end).find(|&i| {
                self.chars[i] == ':' && self.chars.get(i + 1).is_none_or(|c| c.is_whitespace())
            });
            if let Some(colon) = colon {
                let text = format!(" {with}");
                self.put(
                    colon + 1,
                    key.line,
                    key.column + (colon - key.offset) + 1,
                    &text,
                );
            }
            return;
        }
        let old: Vec<char> = self.chars[start.offset..end.offset].to_vec();
        let first_line = old.iter().position(|&c| c == '\n').unwrap_or(old.len());
        let mut new: Vec<char> = with.chars().collect();
        new.extend(
            old[first_line..]
                .iter()
                .map(|&c| if matches!(c, '\n' | '\r') { c } else { ' ' }),
        );
        if first_line == old.len() {
            let by = signed(with.chars().count()) - signed(old.len());
            if by != 0 {
                self.edits.push(Edit::Shift {
                    line: start.line,
                    from: end.column.saturating_add_signed(by),
                    by,
                });
            }
        }
        self.chars.splice(start.offset..end.offset, new);
    }

    /// Puts `text` (no line break) at offset `at`, which is `column` of `line`.
    fn put(&mut self, at: usize, line: usize, column: usize, text: &str) {
        let by = signed(text.chars().count());
        self.chars.splice(at..at, text.chars());
        self.edits.push(Edit::Shift {
            line,
            from: column.saturating_add_signed(by),
            by,
        });
    }

    /// Adds `key: value` to `mapping`: first in a flow mapping, on a line of its own above the
    /// first key of a block mapping.
    fn insert(&mut self, mapping: &Spot, key: &str, value: &str) -> bool {
        match mapping.layout {
            Layout::FlowMapping => {
                let entry = if mapping.first_key.is_some() {
                    format!(" {key}: {value},")
                } else {
                    format!(" {key}: {value}")
                };
                let (at, line, column) = (
                    mapping.start.offset + 1,
                    mapping.start.line,
                    mapping.start.column + 1,
                );
                self.put(at, line, column, &entry);
                true
            }
            Layout::BlockMapping => {
                let Some(first) = mapping.first_key else {
                    return false;
                };
                let line_start = first.offset + 1 - first.column;
                let entry = format!("{}{key}: {value}\n", " ".repeat(first.column - 1));
                self.chars.splice(line_start..line_start, entry.chars());
                self.edits.push(Edit::Line { at: first.line });
                true
            }
            Layout::Scalar | Layout::Sequence => false,
        }
    }
}

fn signed(n: usize) -> isize {
    isize::try_from(n).unwrap_or(isize::MAX)
}

/// A serde path (`workload.parallelism[1]`, `job.measured[0].value`) as [`Places`] writes
/// paths (`workload.parallelism.1`); the root is empty.
fn dotted(path: &str) -> String {
    let path = path.replace('[', ".").replace(']', "");
    let path = path.trim_matches('.');
    if path == "?" {
        String::new()
    } else {
        path.to_owned()
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// The name between backquotes after `prefix` at the start of `message`.
fn quoted<'m>(message: &'m str, prefix: &str) -> Option<&'m str> {
    let rest = message.strip_prefix(prefix)?;
    rest.split('`').next()
}

/// The field an unknown `key` (at `entry`) was likely meant to be: the nearest name of its
/// section's fields, if that field is not written there already.
fn meant(entry: &str, key: &str, places: &Places) -> Option<&'static str> {
    let section = entry.rsplit_once('.').map_or("", |(head, _)| head);
    let names: Vec<&'static str> = if section.is_empty() {
        fields::fields()
            .iter()
            .filter(|f| !f.path.contains('.'))
            .map(|f| f.path.as_str())
            .collect()
    } else {
        fields::children(section).map(Field::name).collect()
    };
    let meant = crate::error::suggest(key, names.iter().copied())?;
    places.get(&join(section, meant)).is_none().then_some(meant)
}

/// The profile's field at `path`, or the nearest one holding it (the list of
/// `workload.parallelism.1`, the map of `job.hours.h100`).
fn declared(path: &str) -> Option<&'static Field> {
    let mut path = path;
    loop {
        if let Some(field) = fields::field(path) {
            return Some(field);
        }
        path = path.rsplit_once('.')?.0;
    }
}

/// A value `field` takes, to stand in for one it is missing or was given wrong while the rest
/// of the profile is read: the least number, the first choice, a section of its required
/// fields.
fn stand_in(field: &Field) -> J {
    match &field.kind {
        FieldKind::Object => J::Object(
            fields::children(&field.path)
                .filter(|child| child.required)
                .map(|child| (child.name().to_owned(), stand_in(child)))
                .collect(),
        ),
        FieldKind::Bool => J::Bool(false),
        FieldKind::Number(bounds) => {
            let least = bounds.lowest().unwrap_or(1.0);
            let least = if bounds.integer {
                least.ceil().max(1.0)
            } else {
                least
            };
            serde_json::Number::from_f64(least).map_or(J::Null, J::Number)
        }
        FieldKind::String => J::String(field.name().to_owned()),
        FieldKind::Enum(choices) => choices
            .first()
            .map_or(J::Null, |c| J::String(c.value.clone())),
        FieldKind::List(_) => J::Array(Vec::new()),
        FieldKind::Map(_) => J::Object(serde_json::Map::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn faults(text: &str) -> Vec<String> {
        let source = Source::new("p.yaml", text);
        let error = Profile::from_source(&source).expect_err(text);
        error
            .into_all()
            .iter()
            .map(|e| {
                let at = e
                    .origin()
                    .and_then(|o| o.position)
                    .map_or(String::from("-"), |p| format!("{}:{}", p.line, p.column));
                format!("{at} {}", e.title())
            })
            .collect()
    }

    #[test]
    fn every_stand_in_is_a_value_its_field_takes() {
        let root = fields::fields()
            .iter()
            .filter(|f| f.required && !f.path.contains('.'))
            .map(|f| (f.name().to_owned(), stand_in(f)))
            .collect::<serde_json::Map<_, _>>();
        let text = serde_json::to_string(&J::Object(root)).unwrap();
        Profile::from_source(&Source::new("p.yaml", text.as_str())).expect(&text);
    }

    #[test]
    fn faults_in_every_section_are_listed_in_one_pass() {
        let text = "name: t\nworkload:\n  task: pretrian\n  model_params_b: 13B\n  nodez: 2\nusage:\n  gpus: 0\n  hours_per_gpu_month: 800\njob:\n  deadline_days: -1\n";
        let got = faults(text);
        assert_eq!(got.len(), 6, "{got:#?}");
        assert!(
            got[0].starts_with("3:9 workload.task: unknown variant `pretrian`"),
            "{got:#?}"
        );
        assert!(
            got[1].starts_with("4:19 workload.model_params_b:"),
            "{got:#?}"
        );
        assert!(
            got[2].starts_with("5:3 workload.nodez: unknown field `nodez`"),
            "{got:#?}"
        );
        assert!(got[3].starts_with("7:3 usage.gpus:"), "{got:#?}");
        assert!(
            got[4].starts_with("8:24 usage.hours_per_gpu_month:"),
            "{got:#?}"
        );
        assert!(got[5].starts_with("10:18 job.deadline_days:"), "{got:#?}");
    }

    #[test]
    fn a_missing_field_stands_in_and_later_places_stay_true() {
        let text = "name: t\nworkload:\n  model_params_b: 7\nusage:\n  gpus: 8\n  hours_per_gpu_month: 1000\n";
        let got = faults(text);
        assert_eq!(got.len(), 2, "{got:#?}");
        assert!(
            got[0].contains("workload: the required field `task` is missing"),
            "{got:#?}"
        );
        assert!(
            got[1].starts_with("6:24 usage.hours_per_gpu_month:"),
            "{got:#?}"
        );
    }

    #[test]
    fn a_json_line_is_masked_in_place() {
        let text = r#"{"name": "t", "workload": {"task": "x", "model_params_b": 7}, "usage": {"gpus": -2, "hours_per_gpu_month": 10}, "budget": {"monthly_cny": "lots"}}"#;
        let got = faults(text);
        assert_eq!(got.len(), 3, "{got:#?}");
        let column = |needle: &str| text.find(needle).unwrap() + 1;
        assert!(
            got[0].starts_with(&format!("1:{} workload.task", column("\"x\""))),
            "{got:#?}"
        );
        assert!(
            got[1].starts_with(&format!("1:{} usage.gpus", column("\"gpus\""))),
            "{got:#?}"
        );
        assert!(
            got[2].starts_with(&format!("1:{} budget.monthly_cny", column("\"lots\""))),
            "{got:#?}"
        );
    }

    #[test]
    fn a_contradiction_is_checked_only_when_no_stand_in_took_part() {
        let text = "name: t\nworkload:\n  task: pretrain\n  model_params_b: 7\n  nodes: 4\n  colour: red\nusage:\n  gpus: 2\n  hours_per_gpu_month: 10\n";
        let got = faults(text);
        assert_eq!(got.len(), 2, "{got:#?}");
        assert!(got[0].contains("5:10 workload.nodes: is 4"), "{got:#?}");
        let text = "name: t\nworkload:\n  task: pretrain\n  model_params_b: 7\n  nodes: 4\nusage:\n  gpus: many\n  hours_per_gpu_month: 10\n";
        assert_eq!(faults(text).len(), 1);
    }

    #[test]
    fn a_misspelt_field_is_read_as_the_field_it_was_meant_to_be() {
        // Not also said to be missing, and its value is checked under its name.
        let text = "name: t\nworkload: {task: pretrain, model_params_b: 7}\nusage:\n  gpus: 8\n  hours_per_gpu_mnth: 800\n";
        let got = faults(text);
        assert_eq!(got.len(), 2, "{got:#?}");
        assert!(
            got[0].starts_with("5:3 usage.hours_per_gpu_mnth: unknown field"),
            "{got:#?}"
        );
        assert!(
            got[1].starts_with("5:23 usage.hours_per_gpu_month: must be between"),
            "{got:#?}"
        );
        // Where the field is written already, the misspelt one is taken out.
        let text = "name: t\nworkload: {task: pretrain, model_params_b: 7}\nusage: {gpus: 8, gpu: 2, hours_per_gpu_month: 10}\n";
        let got = faults(text);
        assert_eq!(got.len(), 1, "{got:#?}");
    }

    #[test]
    fn text_that_is_not_yaml_is_one_fault() {
        assert_eq!(faults("name: [t\nworkload: 1\n").len(), 1);
        assert_eq!(faults("just words\n").len(), 1);
    }
}
