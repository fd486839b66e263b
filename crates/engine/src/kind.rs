//! The kinds of node a policy is made of, by name: the one list every part of the engine agrees on.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The part of the memo a checklist item is in (a rule file's `part:` of a checklist item; the record's `part` of one that applies).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ChecklistPart {
    /// A term to get in writing before signing: the signer's part.
    #[default]
    Signer,
    /// A check the engineer runs on the machines or the service: the engineer's appendix.
    Engineer,
}

/// The kinds of node a policy is made of, in the order a policy's nodes are numbered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Fact,
    Criterion,
    Table,
    Select,
    Search,
    Warning,
    Checklist,
}

impl NodeKind {
    /// `n` nodes of this kind in words: "1 table", "4 criteria", "6 checklist items".
    #[must_use]
    pub fn count(self, n: usize) -> String {
        let (one, many) = match self {
            NodeKind::Fact => ("fact", "facts"),
            NodeKind::Criterion => ("criterion", "criteria"),
            NodeKind::Table => ("table", "tables"),
            NodeKind::Select => ("select", "selects"),
            NodeKind::Search => ("search", "searches"),
            NodeKind::Warning => ("warning", "warnings"),
            NodeKind::Checklist => ("checklist item", "checklist items"),
        };
        format!("{n} {}", if n == 1 { one } else { many })
    }
}

impl fmt::Display for NodeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NodeKind::Fact => "fact",
            NodeKind::Criterion => "criterion",
            NodeKind::Table => "table",
            NodeKind::Select => "select",
            NodeKind::Search => "search",
            NodeKind::Warning => "warning",
            NodeKind::Checklist => "checklist",
        })
    }
}
