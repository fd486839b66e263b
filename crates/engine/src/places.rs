//! Where each node of a YAML document is written: by its path, the place of its key and the span
//! of its value, read from the parser's events.
//!
//! The deserializer says where it stopped; this says where anything is. The profile's
//! every-fault pass ([`crate::profile`]) uses it to mask a fault it has reported (blank an entry,
//! put a valid value in place of a bad one) and read on.

use std::collections::HashMap;

use serde_saphyr::granit_parser::{Event, Marker, Parser, StructureStyle};

/// A place in the text: the offset in characters from its start, and the 1-based line and
/// column (in characters) an error shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    pub offset: usize,
    pub line: usize,
    pub column: usize,
}

impl Mark {
    fn of(marker: &Marker) -> Self {
        Mark {
            offset: marker.index(),
            line: marker.line(),
            column: marker.col() + 1,
        }
    }

    /// The place as an error's position.
    #[must_use]
    pub fn position(self) -> crate::error::Position {
        crate::error::Position {
            line: self.line,
            column: self.column,
        }
    }
}

/// How a node's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// A scalar or an alias.
    Scalar,
    /// A block mapping (one key a line).
    BlockMapping,
    /// A flow mapping (`{a: 1, b: 2}`, JSON).
    FlowMapping,
    /// A sequence, block or flow.
    Sequence,
}

/// One node of the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spot {
    /// Where its key starts (none for the root and for a list's items).
    pub key: Option<Mark>,
    /// Where its value starts.
    pub start: Mark,
    /// Where its value ends (exclusive).
    pub end: Mark,
    pub layout: Layout,
    /// For a mapping, where its first key starts.
    pub first_key: Option<Mark>,
}

/// Every node of a document's first YAML document, by path: keys joined by `.`, a list's
/// items by their index (`workload.parallelism.1`), the root as the empty path.
#[derive(Debug, Default)]
pub struct Places {
    nodes: HashMap<String, Spot>,
}

/// A collection being read: its path (none inside a key that is itself a collection, which no
/// path names) and, for a mapping, the key whose value comes next.
struct Open {
    path: Option<String>,
    mapping: bool,
    key: Option<(String, Mark)>,
    items: usize,
}

impl Places {
    /// The places of `text`'s first document; none when it is not YAML.
    #[must_use]
    pub fn of(text: &str) -> Option<Places> {
        let mut places = Places::default();
        let mut open: Vec<Open> = Vec::new();
        let mut parser = Parser::new_from_str(text);
        while let Some(next) = parser.next_event() {
            let (event, span) = next.ok()?;
            let start = Mark::of(&span.start);
            let end = Mark::of(&span.end);
            match event {
                Event::DocumentEnd | Event::StreamEnd => break,
                Event::Scalar(text, ..) => {
                    let key = places.node(&mut open, start, end, Layout::Scalar);
                    if let Some(parent) = key {
                        parent.key = Some((text.into_owned(), start));
                    }
                }
                Event::Alias(_) => {
                    if let Some(parent) = places.node(&mut open, start, end, Layout::Scalar) {
                        parent.key = Some(("*".to_owned(), start));
                    }
                }
                Event::MappingStart(style, ..) | Event::SequenceStart(style, ..) => {
                    let mapping = matches!(event, Event::MappingStart(..));
                    let shape = match (mapping, style) {
                        (true, StructureStyle::Block) => Layout::BlockMapping,
                        (true, _) => Layout::FlowMapping,
                        (false, _) => Layout::Sequence,
                    };
                    let path = places.opened(&mut open, start, shape);
                    open.push(Open {
                        path,
                        mapping,
                        key: None,
                        items: 0,
                    });
                }
                Event::MappingEnd | Event::SequenceEnd => {
                    let closed = open.pop()?;
                    match closed.path {
                        Some(path) => {
                            if let Some(node) = places.nodes.get_mut(&path) {
                                node.end = end;
                            }
                        }
                        // A collection written as a key: its parent's next node is the value.
                        None => {
                            if let Some(parent) = open.last_mut()
                                && parent.mapping
                                && parent.key.is_none()
                            {
                                parent.key = Some(("?".to_owned(), start));
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        Some(places)
    }

    /// The node at `path`, if the document has one.
    #[must_use]
    pub fn get(&self, path: &str) -> Option<&Spot> {
        self.nodes.get(path)
    }

    /// How many entries (or items) the mapping (or list) at `path` holds.
    #[must_use]
    pub fn entries(&self, path: &str) -> usize {
        let prefix = if path.is_empty() {
            String::new()
        } else {
            format!("{path}.")
        };
        self.nodes
            .keys()
            .filter(|p| {
                p.strip_prefix(&prefix)
                    .is_some_and(|rest| !rest.is_empty() && !rest.contains('.'))
            })
            .count()
    }

    /// Records a scalar at the place it takes; returns the open mapping when the scalar is its
    /// next key rather than a value.
    fn node<'o>(
        &mut self,
        open: &'o mut [Open],
        start: Mark,
        end: Mark,
        layout: Layout,
    ) -> Option<&'o mut Open> {
        let is_key = open.last().is_some_and(|p| p.mapping && p.key.is_none());
        if is_key {
            let parent = open.last_mut()?;
            if let Some(path) = &parent.path
                && let Some(node) = self.nodes.get_mut(path)
                && node.first_key.is_none()
            {
                node.first_key = Some(start);
            }
            return Some(parent);
        }
        if let Some((path, key)) = Self::value_path(open) {
            self.nodes.insert(
                path,
                Spot {
                    key,
                    start,
                    end,
                    layout,
                    first_key: None,
                },
            );
        }
        None
    }

    /// Records a collection that starts at `start`; its path, none when it is a key.
    fn opened(&mut self, open: &mut [Open], start: Mark, layout: Layout) -> Option<String> {
        if let Some(parent) = open.last_mut()
            && parent.mapping
            && parent.key.is_none()
        {
            return None;
        }
        let (path, key) = Self::value_path(open)?;
        self.nodes.insert(
            path.clone(),
            Spot {
                key,
                start,
                end: start,
                layout,
                first_key: None,
            },
        );
        Some(path)
    }

    /// The path of the value that comes next (and where its key starts), moving the open
    /// collection on past it; none inside a key.
    fn value_path(open: &mut [Open]) -> Option<(String, Option<Mark>)> {
        let Some(parent) = open.last_mut() else {
            return Some((String::new(), None));
        };
        let base = parent.path.as_ref()?;
        let join = |step: &str| {
            if base.is_empty() {
                step.to_owned()
            } else {
                format!("{base}.{step}")
            }
        };
        if parent.mapping {
            let (key, at) = parent.key.take()?;
            Some((join(&key), Some(at)))
        } else {
            parent.items += 1;
            Some((join(&(parent.items - 1).to_string()), None))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(places: &Places, path: &str) -> (usize, usize, usize, usize) {
        let node = places
            .get(path)
            .unwrap_or_else(|| panic!("no node at {path}"));
        (
            node.start.line,
            node.start.column,
            node.end.line,
            node.end.column,
        )
    }

    #[test]
    fn block_and_flow_nodes_are_placed_by_path() {
        let text = "name: x\nworkload:\n  task: inference\n  parallelism: [data, tensor]\nusage: {gpus: 8, months: 2}\n";
        let places = Places::of(text).unwrap();
        assert_eq!(at(&places, "name"), (1, 7, 1, 8));
        let workload = places.get("workload").unwrap();
        assert_eq!(workload.layout, Layout::BlockMapping);
        assert_eq!(workload.key.unwrap().line, 2);
        assert_eq!(workload.first_key.unwrap().position().line, 3);
        assert_eq!(at(&places, "workload.task"), (3, 9, 3, 18));
        assert_eq!(at(&places, "workload.parallelism.1").0, 4);
        assert_eq!(at(&places, "workload.parallelism.1").1, 23);
        let usage = places.get("usage").unwrap();
        assert_eq!(usage.layout, Layout::FlowMapping);
        assert_eq!(at(&places, "usage.months"), (5, 26, 5, 27));
        assert_eq!(places.get("usage.gpus").unwrap().key.unwrap().column, 9);
        assert!(places.get("usage.hours").is_none());
    }

    #[test]
    fn text_that_is_not_yaml_has_no_places() {
        assert!(Places::of("a: [1, 2\n").is_none());
        assert!(Places::of("a:\n\tb: 1\n").is_none());
    }
}
