//! Printing: aligned text tables, `-o name` lines and JSON/YAML documents on stdout.
//!
//! Text output never carries a terminal control sequence from the input: object names, labels
//! and messages come from manifests anyone may write, so every control character (and the
//! Unicode bidirectional overrides) in a table cell or a text line is printed escaped
//! (`\x1b`, `\u{202e}`). JSON and YAML escape them by their own rules.

use std::io::Write;

use anyhow::Context;
use serde::Serialize;

use super::{ListFormat, OutputFormat};

/// A text table with left-aligned columns separated by two spaces.
#[derive(Debug, Default)]
pub struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headers.
    pub fn new(headers: &[&str]) -> Self {
        Table { rows: vec![headers.iter().map(|h| (*h).to_string()).collect()] }
    }

    /// Appends a row (its control characters escaped, see the module doc).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells.iter().map(|c| escape_controls(c).into_owned()).collect());
    }

    /// Renders the table.
    pub fn render(&self) -> String {
        let cols = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![0; cols];
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for row in &self.rows {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    line.push_str(&format!("{cell:<w$}  ", w = widths[i]));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// Whether `c` must not reach a terminal raw: C0 and C1 controls, DEL, and the Unicode
/// characters that reorder or hide text (bidirectional embeddings, overrides and isolates,
/// zero-width marks).
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every unsafe character (see [`is_unsafe`]) written as an escape: `\x1b` below
/// 0x100, `\u{202e}` above; a backslash is kept as is.
pub fn escape_controls(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !is_unsafe(c) {
            out.push(c);
        } else if (c as u32) < 0x100 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Prints text output (tables, `-o name`) on stdout, each line's control characters escaped
/// (the line breaks kept).
pub fn print_text(text: &str) -> anyhow::Result<()> {
    let safe: Vec<std::borrow::Cow<'_, str>> = text.split('\n').map(escape_controls).collect();
    print_stdout(&safe.join("\n"))
}

/// `-o name` lines: `pod/NAMESPACE/NAME` for each `namespace/name`, in order, each once.
pub fn pod_names<'a>(pods: impl IntoIterator<Item = &'a str>) -> String {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = String::new();
    for p in pods {
        if !p.is_empty() && seen.insert(p) {
            out.push_str("pod/");
            out.push_str(p);
            out.push('\n');
        }
    }
    out
}

/// `n` and the noun, singular for one: `count(1, "node")` is `1 node`, `count(3, "node")`
/// `3 nodes`; nouns ending in s, x, ch or sh take `es` (`2 batches`, `3 classes`).
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else if ["s", "x", "ch", "sh"].iter().any(|end| noun.ends_with(end)) {
        format!("{n} {noun}es")
    } else {
        format!("{n} {noun}s")
    }
}

/// Prints `value` as JSON or YAML on stdout for a command whose `-o` is a [`ListFormat`]
/// (`table`, `wide` and `name` are the caller's job).
pub fn print_list_document<T: Serialize>(value: &T, format: ListFormat) -> anyhow::Result<()> {
    match format {
        ListFormat::Json => print_document(value, OutputFormat::Json),
        ListFormat::Yaml => print_document(value, OutputFormat::Yaml),
        other => anyhow::bail!("internal: -o {other:?} is printed by the command"),
    }
}

/// Prints `value` as JSON or YAML on stdout (`table` is the caller's job).
pub fn print_document<T: Serialize>(value: &T, format: OutputFormat) -> anyhow::Result<()> {
    let text = match format {
        OutputFormat::Json => {
            let mut s = serde_json::to_string_pretty(value).context("serializing JSON")?;
            s.push('\n');
            s
        }
        OutputFormat::Yaml => serde_saphyr::to_string(value).context("serializing YAML")?,
        OutputFormat::Table => anyhow::bail!("internal: table output is printed by the command"),
    };
    print_stdout(&text)
}

/// Writes to stdout, treating a closed pipe (`kplace … | head`) as success.
pub fn print_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("writing to stdout"),
    }
}
