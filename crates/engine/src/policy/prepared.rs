//! The embedded rule files as `build.rs` parsed them: read into the rule types without YAML.
//!
//! `build.rs` reads every embedded rule file with serde-saphyr once, as generic nodes (what its
//! `deserialize_any` gives, each node with the locations a `Spanned` value would record), and
//! writes them as static tables. At run time a rule file whose text is one of those files is
//! deserialized from its table by `super::located`, which answers the rule types exactly as
//! the YAML reader would: the same values and, for `Spanned` fields, the same locations, so
//! every message and output stays the same. Anything the tables cannot give
//! (another text, a value the generic node does not fit) is read from the YAML as before,
//! which also words any error.

use serde::de::value::Error;
use serde::de::{self, DeserializeOwned};

use super::located::{Loc, LocatedNode, NodeReader, NodeValue};
use crate::source::Source;

/// One YAML node: its value, and the index of its `referenced` and `defined` locations.
pub(super) struct YamlNode(PreparedValue, u32, u32);

/// A node's value as serde-saphyr's `deserialize_any` gave it; a sequence's items are the
/// nodes `start..start + len` of [`NODES`], a mapping's entries the entries of [`ENTRIES`].
/// (The shipped rules may not use every kind of value.)
#[allow(dead_code)]
pub(super) enum PreparedValue {
    Null,
    Bool(bool),
    I64(i64),
    U64(u64),
    /// The bits of a 64-bit float (exactly the number read).
    F64(u64),
    Str(&'static str),
    Seq(u32, u32),
    Map(u32, u32),
}

use PreparedValue::{Bool, F64, I64, Map, Null, Seq, Str, U64};

#[allow(clippy::unreadable_literal, unused_imports)]
mod tables {
    use super::{Bool, F64, I64, Loc as L, Map, Null, Seq, Str, U64, YamlNode as N};
    use super::{Loc, YamlNode};
    include!(concat!(env!("OUT_DIR"), "/prepared.rs"));
}
use tables::{ENTRIES, FILES, LOCATIONS, NODES};

/// The rule file `source` read from the build's tables, when its text is one of the embedded
/// rule files and the tables give a `T`; `None` otherwise (read the YAML then).
pub(crate) fn read<T: DeserializeOwned>(source: &Source) -> Option<T> {
    let text: &str = &source.text;
    let &(_, root) = FILES
        .iter()
        .find(|(embedded, _)| embedded.len() == text.len() && *embedded == text)?;
    T::deserialize(NodeReader(node(root)?)).ok()
}

fn node(index: u32) -> Option<&'static YamlNode> {
    NODES.get(usize::try_from(index).ok()?)
}

fn range<T>(table: &'static [T], start: u32, len: u32) -> Result<&'static [T], Error> {
    let start = start as usize;
    table
        .get(start..start + len as usize)
        .ok_or_else(|| de::Error::custom("a prepared table is cut short"))
}

impl LocatedNode for YamlNode {
    fn shape(&self) -> Result<NodeValue<'_, Self>, Error> {
        Ok(match self.0 {
            Null => NodeValue::Null,
            Bool(b) => NodeValue::Bool(b),
            I64(i) => NodeValue::I64(i),
            U64(u) => NodeValue::U64(u),
            F64(bits) => NodeValue::F64(f64::from_bits(bits)),
            Str(s) => NodeValue::Str(s),
            Seq(start, len) => NodeValue::Seq(range(NODES, start, len)?),
            Map(_, len) => NodeValue::Map(len as usize),
        })
    }

    fn entry(&self, i: usize) -> Result<(&str, &Self), Error> {
        let Map(start, len) = self.0 else {
            return Err(de::Error::custom("not a mapping"));
        };
        let &(key, value) = range(ENTRIES, start, len)?
            .get(i)
            .ok_or_else(|| de::Error::custom("an entry out of the mapping"))?;
        let value = node(value).ok_or_else(|| de::Error::custom("a value out of the table"))?;
        Ok((key, value))
    }

    fn locations(&self) -> Result<(Loc, Loc), Error> {
        let at = |i: u32| {
            LOCATIONS
                .get(i as usize)
                .copied()
                .ok_or_else(|| de::Error::custom("a location out of the table"))
        };
        Ok((at(self.1)?, at(self.2)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::policy::rules::RuleFile;

    /// Every embedded rule file reads from the tables into exactly what its YAML gives,
    /// locations included.
    #[test]
    fn tables_give_what_the_yaml_gives() {
        let sources = crate::policy::Policy::embedded_sources();
        let rule_files: Vec<_> = sources
            .iter()
            .filter(|s| !crate::policy::is_sheet(s))
            .collect();
        assert_eq!(rule_files.len(), FILES.len());
        for source in rule_files {
            let prepared: RuleFile = read(source).expect("the tables read");
            let yaml: RuleFile = source.parse_yaml(ErrorKind::Rules).unwrap();
            assert_eq!(
                format!("{prepared:#?}"),
                format!("{yaml:#?}"),
                "{}",
                source.name
            );
        }
    }

    /// Another text is not read from the tables.
    #[test]
    fn another_text_is_read_as_yaml() {
        let source = Source::new("rules/x.yaml", "policy: {name: x, version: '1'}\n");
        assert!(read::<RuleFile>(&source).is_none());
    }
}
