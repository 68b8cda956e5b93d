//! Reading a large YAML file on all cores: the text is cut at top-level boundaries (document
//! markers `---`, and the entries of a `List`'s `items` sequence written at column 0, as
//! `kubectl get -o yaml` writes them) and the pieces are parsed apart, each with serde-saphyr
//! exactly as the whole file would be, their lines shifted back to the file's.
//!
//! Input: the text of a YAML file. Output: the documents as the whole-file parse gives them
//! (each with its line, and a `List`'s item lines), or `None` when cutting is not provably the
//! same: anchors or aliases (which may cross a cut), directives, `...` markers, tabs at the
//! start of a line, a layout this cut does not know, or any piece that does not parse alone.
//! The caller then parses the whole file, whose errors give the file's own lines.

use rayon::prelude::*;
use serde_json::Value;

use super::{Items, RawDoc, yaml_options};

/// Pieces are about this large, so that each core gets several.
const PIECE_BYTES: usize = 256 * 1024;

/// A document of the file as the whole-file parse gives it.
pub(super) struct Doc {
    pub(super) value: Value,
    /// 1-based line of the document's node (0 when unknown).
    pub(super) line: u64,
    pub(super) item_lines: Vec<u64>,
}

/// A byte range of the text and its first line (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
    line: u64,
}

/// What a piece is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    /// Whole documents.
    Docs(Span),
    /// A `List` document cut apart: its other keys (`head` and `tail` put together) and runs of
    /// its `items` entries.
    List { head: Span, tail: Span, items: Vec<Span> },
}

/// Whether cutting cannot change what the text means: no anchor or alias (a `&` or `*`
/// starting a token), no directive (`%` at column 0), no `...` marker, no tab at the start of
/// a line.
fn cuttable(text: &str) -> bool {
    let b = text.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        let line_start = i == 0 || b[i - 1] == b'\n';
        match c {
            b'&' | b'*'
                if i == 0
                    || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b'\r' | b'[' | b'{' | b',') =>
            {
                return false;
            }
            b'%' | b'\t' if line_start => return false,
            b'.' if line_start && b[i..].starts_with(b"...") => return false,
            _ => {}
        }
    }
    true
}

/// The lines of `text[start..end]`: (start, end without the newline, 1-based number).
fn lines(
    text: &str,
    start: usize,
    end: usize,
    first: u64,
) -> impl Iterator<Item = (usize, usize, u64)> {
    let mut at = start;
    let mut n = first;
    std::iter::from_fn(move || {
        if at >= end {
            return None;
        }
        let rest = &text.as_bytes()[at..end];
        let len = rest.iter().position(|&c| c == b'\n').map_or(rest.len(), |p| p + 1);
        let line = (at, at + len, n);
        at += len;
        n += 1;
        Some(line)
    })
}

fn is_marker(line: &[u8]) -> bool {
    line.starts_with(b"---")
        && line.get(3).is_none_or(|c| matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
}

/// Cuts the text into pieces; `None` when it cannot be cut.
fn cut(text: &str) -> Option<Vec<Piece>> {
    let b = text.as_bytes();
    // Documents: from a marker line (or the start) to the next marker line.
    let mut docs = Vec::new();
    let mut current = Span { start: 0, end: 0, line: 1 };
    for (start, end, n) in lines(text, 0, text.len(), 1) {
        if is_marker(&b[start..end]) && start > 0 {
            current.end = start;
            docs.push(current);
            current = Span { start, end, line: n };
        }
        current.end = end;
    }
    current.end = text.len();
    docs.push(current);

    let mut pieces = Vec::new();
    let mut run: Option<Span> = None;
    let flush = |run: &mut Option<Span>, pieces: &mut Vec<Piece>| {
        if let Some(r) = run.take() {
            pieces.push(Piece::Docs(r));
        }
    };
    for doc in docs {
        match list_pieces(text, doc)? {
            Some(list) => {
                flush(&mut run, &mut pieces);
                pieces.push(list);
            }
            None => {
                let r = run.get_or_insert(Span { end: doc.start, ..doc });
                r.end = doc.end;
                if r.end - r.start >= PIECE_BYTES {
                    flush(&mut run, &mut pieces);
                }
            }
        }
    }
    flush(&mut run, &mut pieces);
    Some(pieces)
}

/// A document with an `items:` key at column 0 followed by entries at column 0, cut into its
/// other keys and runs of entries. `Some(None)`: not such a document; `None`: not cuttable.
fn list_pieces(text: &str, doc: Span) -> Option<Option<Piece>> {
    let b = text.as_bytes();
    let mut all = lines(text, doc.start, doc.end, doc.line).peekable();
    let mut items_key = None;
    for (start, end, n) in all.by_ref() {
        let line = &b[start..end];
        if line.trim_ascii_end() == b"items:" {
            items_key = Some((start, end, n));
            break;
        }
    }
    let Some((key_start, key_end, _)) = items_key else { return Some(None) };
    let mut entries: Vec<Span> = Vec::new();
    let mut tail_start = doc.end;
    let mut tail_line = 0;
    for (start, end, n) in all {
        let line = &b[start..end];
        let first = line.first().copied().unwrap_or(b'\n');
        match first {
            b' ' | b'#' | b'\r' | b'\n' => {
                if let Some(e) = entries.last_mut() {
                    e.end = end;
                } else if first == b' ' {
                    // An indented sequence or a value on the next line: not cut.
                    return Some(None);
                }
            }
            b'-' if line.get(1).is_none_or(|c| matches!(c, b' ' | b'\r' | b'\n')) => {
                entries.push(Span { start, end, line: n });
            }
            b'-' => return None,
            _ => {
                tail_start = start;
                tail_line = n;
                break;
            }
        }
    }
    if entries.is_empty() {
        return Some(None);
    }
    let items_start = entries[0].start;
    // Lines between `items:` and the first entry are blank or comments.
    if text
        .get(key_end..items_start)?
        .lines()
        .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
    {
        return None;
    }
    let mut runs: Vec<Span> = Vec::new();
    for e in entries {
        match runs.last_mut() {
            Some(r) if r.end - r.start < PIECE_BYTES => r.end = e.end,
            _ => runs.push(e),
        }
    }
    let head = Span { start: doc.start, end: key_start, line: doc.line };
    let tail = Span { start: tail_start, end: doc.end, line: tail_line };
    Some(Some(Piece::List { head, tail, items: runs }))
}

/// The error-free parse of one piece.
enum Parsed {
    Docs(Vec<Doc>),
    List { head: Doc, items: Vec<(Value, u64)> },
}

fn shift(line: u64, by: u64) -> u64 {
    if line > 0 { line + by } else { 0 }
}

fn parse_docs(text: &str, line: u64) -> Option<Vec<Doc>> {
    let docs: Vec<serde_saphyr::Spanned<RawDoc>> =
        serde_saphyr::from_multiple_with_options(text, yaml_options(text.len())).ok()?;
    Some(
        docs.into_iter()
            .map(|d| Doc {
                line: shift(d.referenced.line(), line - 1),
                item_lines: d.value.item_lines.iter().map(|&l| shift(l, line - 1)).collect(),
                value: d.value.value,
            })
            .collect(),
    )
}

fn parse_piece(text: &str, piece: &Piece) -> Option<Parsed> {
    match piece {
        Piece::Docs(s) => parse_docs(text.get(s.start..s.end)?, s.line).map(Parsed::Docs),
        Piece::List { head, tail, items } => {
            // The head and the tail, joined: the document without its `items`. Its node must
            // start in the head, so that its line is the file's.
            let joined =
                format!("{}{}", text.get(head.start..head.end)?, text.get(tail.start..tail.end)?);
            let mut docs = parse_docs(&joined, head.line)?;
            let head_lines = text.get(head.start..head.end)?.matches('\n').count() as u64;
            if docs.len() != 1
                || docs[0].line == 0
                || docs[0].line >= head.line + head_lines
                || docs[0].value.get("items").is_some()
                || !docs[0].value.is_object()
            {
                return None;
            }
            let head_doc = docs.pop()?;
            let mut all = Vec::new();
            for run in items {
                let part = text.get(run.start..run.end)?;
                let parsed: serde_saphyr::Spanned<Items> =
                    serde_saphyr::from_str_with_options(part, yaml_options(part.len())).ok()?;
                let Value::Array(values) = parsed.value.value else { return None };
                if values.len() != parsed.value.lines.len() {
                    return None;
                }
                all.extend(
                    values
                        .into_iter()
                        .zip(parsed.value.lines)
                        .map(|(v, l)| (v, shift(l, run.line - 1))),
                );
            }
            Some(Parsed::List { head: head_doc, items: all })
        }
    }
}

/// The documents of `text` parsed on all cores, or `None` (see the module documentation).
pub(super) fn parse(text: &str) -> Option<Vec<Doc>> {
    if text.len() < 2 * PIECE_BYTES || !cuttable(text) {
        return None;
    }
    let pieces = cut(text)?;
    let parsed: Option<Vec<Parsed>> = pieces.par_iter().map(|p| parse_piece(text, p)).collect();
    let mut docs = Vec::new();
    for p in parsed? {
        match p {
            Parsed::Docs(d) => docs.extend(d),
            Parsed::List { mut head, items } => {
                let (values, lines): (Vec<Value>, Vec<u64>) = items.into_iter().unzip();
                head.value.as_object_mut()?.insert("items".to_string(), Value::Array(values));
                head.item_lines = lines;
                docs.push(head);
            }
        }
    }
    Some(docs)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documents of the whole-file parse, as `(line, item lines, value)`.
    fn whole(text: &str) -> Vec<(u64, Vec<u64>, Value)> {
        let docs: Vec<serde_saphyr::Spanned<RawDoc>> =
            serde_saphyr::from_multiple_with_options(text, yaml_options(text.len())).unwrap();
        docs.into_iter().map(|d| (d.referenced.line(), d.value.item_lines, d.value.value)).collect()
    }

    fn pod(i: usize, indent: &str) -> String {
        format!(
            "{indent}apiVersion: v1\n{indent}kind: Pod\n{indent}metadata:\n{indent}  name: p{i}\n\
             {indent}  annotations: {{note: \"a - b --- c\"}}\n{indent}spec:\n\
             {indent}  containers:\n{indent}  - name: c\n{indent}    args: [\"x\", 'y']\n\
             {indent}    command:\n{indent}    - |\n{indent}      echo {i}\n{indent}      - not an item\n"
        )
    }

    #[test]
    fn cut_pieces_parse_as_the_whole_file() {
        let n = 3000;
        let stream: String = (0..n).map(|i| format!("---\n# pod {i}\n{}", pod(i, ""))).collect();
        let list_entries: String =
            (0..n).map(|i| pod(i, "  ").replacen("  apiVersion", "- apiVersion", 1)).collect();
        let list = format!(
            "apiVersion: v1\nitems:\n{list_entries}# after the items\nkind: List\nmetadata:\n  resourceVersion: \"\"\n"
        );
        let both = format!("{stream}---\n{list}---\n{}", pod(0, ""));
        for (name, text) in [("a document stream", &stream), ("a List", &list), ("both", &both)] {
            assert!(text.len() > 2 * PIECE_BYTES, "{name}: large enough to be cut");
            let got = parse(text).unwrap_or_else(|| panic!("{name}: not cut"));
            let got: Vec<_> = got.into_iter().map(|d| (d.line, d.item_lines, d.value)).collect();
            assert_eq!(got, whole(text), "{name}");
        }
    }

    #[test]
    fn texts_that_cutting_could_change_are_not_cut() {
        let big = "---\na: b\n".repeat(PIECE_BYTES / 4);
        let cases = [
            ("an anchor", format!("x: &a {{k: v}}\n{big}y: *a\n")),
            ("a directive", format!("%YAML 1.2\n{big}")),
            ("a document end marker", format!("{big}...\n")),
            ("a tab starting a line", format!("{big}\tx: 1\n")),
            ("a small file", "a: b\n".to_string()),
        ];
        for (name, text) in cases {
            assert!(parse(&text).is_none(), "{name}");
        }
        // A piece that does not parse alone gives up the cut.
        let broken = format!("{big}---\nx: \"unclosed\n---\ny: 1\n");
        assert!(parse(&broken).is_none());
    }
}
