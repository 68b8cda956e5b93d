//! Printing: aligned text tables, and JSON/YAML documents on stdout.

use std::io::Write;

use anyhow::Context;
use serde::Serialize;

use super::OutputFormat;

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

    /// Appends a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
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
