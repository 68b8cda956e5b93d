//! The fast YAML reader: the block-style YAML that `kubectl get -o yaml`, PyYAML and
//! `kplace gen` write, turned into JSON text piece by piece on all cores and typed by the fast
//! JSON reader ([`fast_json::prepare_unit`]), as `sigs.k8s.io/yaml` turns YAML into JSON before
//! the API machinery decodes it.
//!
//! Input: the text of a YAML stream. A quick pass over its lines finds the documents and, in a
//! `List`, the entries of its `items` sequence; each piece is then turned into JSON on its own
//! thread. The subset read: block mappings and sequences (compact `- key: value` entries too),
//! plain, single- and double-quoted scalars on one line, literal block scalars (`|`, `|-`,
//! `|+`), the empty flow collections `{}` and `[]`, comments and `---` markers. Plain scalars
//! are typed as serde-saphyr types them for the general reader (YAML 1.1 booleans such as `yes`
//! and `off`, `~` and `null`, decimal integers; `0123` and `1_000` stay strings).
//!
//! Output: the file's [`Prepared`] objects, or `None` for anything outside the subset (anchors,
//! aliases, tags, directives, flow collections with content, multi-line plain or quoted
//! scalars, folded scalars, tabs, floats and other number forms, keys that are not strings,
//! merge keys, empty documents) or any object the fast JSON reader does not take: the caller
//! then reads the file with the general reader, which words every error.

use std::borrow::Cow;
use std::path::Path;

use serde_json::Value;

use super::Strictness;
use super::fast_json::{self, Unit};
use super::object::{self, Prepared};
use crate::json::StrictValue;
use crate::snapshot::Source;

/// An entry of a `List`'s `items`: its text and the line its node starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    start: usize,
    end: usize,
    line: u64,
}

/// The `items` of a `List` document: the byte range from the `items:` line to the end of its
/// last entry, and the entries.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ListPlan {
    key_start: usize,
    items_end: usize,
    entries: Vec<Entry>,
}

/// A document of the stream: its text (after any `---` line), the line of its root node, and
/// its `items` when they can be read apart.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DocPlan {
    start: usize,
    end: usize,
    line: u64,
    list: Option<ListPlan>,
}

/// Where the line scan is within a document's top-level `items:` value.
enum Items {
    /// No `items:` key seen yet.
    Before,
    /// After the `items:` line: a sequence at this indentation (`None` until its first entry).
    In { key_start: usize, indent: Option<usize>, entries: Vec<Entry> },
    /// Read: the list plan, or `None` when `items` is not a block sequence.
    Done(Option<ListPlan>),
}

fn blank_or_comment(rest: &[u8]) -> bool {
    let t = rest.trim_ascii_start();
    t.is_empty() || t[0] == b'#'
}

/// `- ` with something after it on the line (not a comment).
fn dash_entry(rest: &[u8]) -> Option<bool> {
    if rest.first() != Some(&b'-') || rest.get(1).is_some_and(|&c| c != b' ') {
        return Some(false);
    }
    // A bare `-` (its node on the next lines) is left to the general reader.
    if blank_or_comment(&rest[1..]) { None } else { Some(true) }
}

/// The documents of a text; `None` when it is not one the reader takes (see the module docs).
fn scan(text: &str) -> Option<Vec<DocPlan>> {
    let b = text.as_bytes();
    let mut docs = Vec::new();
    let mut doc_start = 0;
    let mut explicit = false;
    let mut root: Option<u64> = None;
    let mut items = Items::Before;
    let finish = |docs: &mut Vec<DocPlan>,
                  start: usize,
                  end: usize,
                  explicit: bool,
                  root: Option<u64>,
                  items: Items|
     -> Option<()> {
        let Some(line) = root else {
            // Comments alone are no document; an empty document after a marker is left to the
            // general reader.
            return (!explicit).then_some(());
        };
        let list = match items {
            Items::Before | Items::Done(None) | Items::In { indent: None, .. } => None,
            Items::Done(plan) => plan,
            Items::In { key_start, entries, .. } => {
                Some(ListPlan { key_start, items_end: end, entries })
            }
        };
        let list = list.map(|mut l| {
            let n = l.entries.len();
            for i in 0..n {
                l.entries[i].end = if i + 1 < n { l.entries[i + 1].start } else { l.items_end };
            }
            l
        });
        docs.push(DocPlan { start, end, line, list });
        Some(())
    };
    let mut pos = 0;
    let mut n = 0u64;
    while pos < b.len() {
        n += 1;
        let nl = memchr::memchr(b'\n', &b[pos..]).map_or(b.len(), |i| pos + i);
        let next = (nl + 1).min(b.len());
        let line = &b[pos..nl];
        if line.starts_with(b"---") && line.get(3).is_none_or(|&c| c == b' ') {
            if !blank_or_comment(&line[3..]) {
                return None;
            }
            let done = std::mem::replace(&mut items, Items::Before);
            finish(&mut docs, doc_start, pos, explicit, root, done)?;
            doc_start = next;
            explicit = true;
            root = None;
            pos = next;
            continue;
        }
        if line.starts_with(b"...") || line.first() == Some(&b'%') {
            return None;
        }
        let indent = line.iter().take_while(|&&c| c == b' ').count();
        let rest = &line[indent..];
        if rest.is_empty() || rest[0] == b'#' {
            pos = next;
            continue;
        }
        if root.is_none() {
            if indent != 0 {
                return None;
            }
            root = Some(n);
        }
        // Within `items`, or ending them.
        if let Items::In { key_start, indent: seq, entries } = &mut items {
            match *seq {
                None => match dash_entry(rest)? {
                    true => {
                        *seq = Some(indent);
                        entries.push(Entry { start: pos, end: 0, line: n });
                        pos = next;
                        continue;
                    }
                    // A value that is not a block sequence: the document is read whole.
                    false => items = Items::Done(None),
                },
                Some(k) => {
                    if indent > k {
                        pos = next;
                        continue;
                    }
                    if indent == k && dash_entry(rest)? {
                        entries.push(Entry { start: pos, end: 0, line: n });
                        pos = next;
                        continue;
                    }
                    if indent != 0 {
                        return None;
                    }
                    let plan = ListPlan {
                        key_start: *key_start,
                        items_end: pos,
                        entries: std::mem::take(entries),
                    };
                    items = Items::Done(Some(plan));
                }
            }
        }
        if indent == 0
            && let Some(after) = rest.strip_prefix(b"items:")
            && blank_or_comment(after)
        {
            match items {
                Items::Before => {
                    items = Items::In { key_start: pos, indent: None, entries: vec![] }
                }
                // `items` twice: left to the general reader.
                _ => return None,
            }
        }
        pos = next;
    }
    finish(&mut docs, doc_start, b.len(), explicit, root, items)?;
    Some(docs)
}

/// Whether every character may stand in the subset's text: printable (YAML's `c-printable`,
/// less tabs and carriage returns), no byte-order mark, no NEL or Unicode line separators.
fn printable(text: &str) -> bool {
    let b = text.as_bytes();
    if b.iter().all(|&c| (0x20..0x7f).contains(&c) || c == b'\n') {
        return true;
    }
    text.chars().all(|c| match c {
        '\n' | ' '..='~' => true,
        '\u{0}'..='\u{a0}' => c == '\u{a0}',
        '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}' => false,
        _ => true,
    })
}

/// How serde-saphyr types a plain scalar for a `serde_json::Value` (its `deserialize_any`,
/// with the options of [`super::yaml_options`]).
#[derive(Debug, Clone, PartialEq)]
enum Plain {
    Null,
    Bool(bool),
    /// A decimal integer, as JSON writes it.
    Int(String),
    Str,
}

/// The type of a plain scalar; `None` for the forms left to the general reader (floats,
/// `0x`/`0o`/`0b` integers, integers past 64 bits, `.inf` and `.nan`).
fn plain_type(t: &str) -> Option<Plain> {
    if matches!(t, "" | "~" | "null" | "Null" | "NULL") {
        return Some(Plain::Null);
    }
    let b = t.as_bytes();
    let unsigned = t.strip_prefix(['+', '-']).unwrap_or(t);
    let first = unsigned.as_bytes().first().copied();
    if !first.is_some_and(|c| c.is_ascii_digit() || c == b'.') {
        // Letters first: a YAML 1.1 boolean or a string (Rust's float parser takes `inf`
        // and `nan`, which serde-saphyr keeps as strings).
        if b.len() <= 5 {
            for (words, value) in
                [(["true", "yes", "y", "on"], true), (["false", "no", "n", "off"], false)]
            {
                if words.iter().any(|w| t.eq_ignore_ascii_case(w)) {
                    return Some(Plain::Bool(value));
                }
            }
        }
        return Some(Plain::Str);
    }
    let digits = unsigned.as_bytes();
    // `0123` and `1_000` are strings (`leading_zero_numbers_as_strings`,
    // `underscored_numbers_as_strings`).
    if (digits.len() > 1 && digits[0] == b'0' && digits.iter().all(u8::is_ascii_digit))
        || t.contains('_')
    {
        return Some(Plain::Str);
    }
    if digits.iter().all(u8::is_ascii_digit) && !digits.is_empty() {
        if t.starts_with('-') {
            return t.parse::<i64>().ok().map(|v| Plain::Int(v.to_string()));
        }
        return unsigned.parse::<u64>().ok().map(|v| Plain::Int(v.to_string()));
    }
    // `0x10`, `0o17`, `0b101` are integers (`0b947cad-…` is a string).
    if digits.len() > 2 && digits[0] == b'0' {
        let radix = match digits[1] {
            b'x' | b'X' => 16,
            b'o' | b'O' => 8,
            b'b' | b'B' => 2,
            _ => 0,
        };
        if radix > 0 && digits[2..].iter().all(|&c| char::from(c).is_digit(radix)) {
            return None;
        }
    }
    if matches!(unsigned, ".nan" | ".NaN" | ".NAN" | ".inf" | ".Inf" | ".INF") {
        return None;
    }
    if t.parse::<f64>().is_ok() {
        return None;
    }
    Some(Plain::Str)
}

/// `s` as a JSON string.
fn write_str(out: &mut String, s: &str) {
    out.push('"');
    let b = s.as_bytes();
    let mut from = 0;
    for (i, &c) in b.iter().enumerate() {
        let escape = match c {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\t' => "\\t",
            b'\r' => "\\r",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[from..i]);
        if escape.is_empty() {
            out.push_str(&format!("\\u{c:04x}"));
        } else {
            out.push_str(escape);
        }
        from = i + 1;
    }
    out.push_str(&s[from..]);
    out.push('"');
}

/// Block scalar chomping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chomp {
    Clip,
    Strip,
    Keep,
}

/// A scalar at the start of a node: a mapping key, or a value.
enum Key<'a> {
    /// Not a key: a scalar value.
    No,
    /// A key (its text) and the index after its `:`.
    Yes(Cow<'a, str>, usize),
}

/// The YAML-to-JSON conversion of one piece of the text. Between nodes, `pos` is at the start
/// of a line.
struct Conv<'a> {
    text: &'a str,
    b: &'a [u8],
    end: usize,
    pos: usize,
    out: String,
}

impl<'a> Conv<'a> {
    fn line_end(&self, from: usize) -> usize {
        memchr::memchr(b'\n', &self.b[from..self.end]).map_or(self.end, |i| from + i)
    }

    /// Moves past the line ending at `le`.
    fn next_line(&mut self, le: usize) {
        self.pos = (le + 1).min(self.end);
    }

    /// The next line with content, as (its start, its indentation); blank and comment lines
    /// are skipped.
    fn peek(&mut self) -> Option<(usize, usize)> {
        while self.pos < self.end {
            let start = self.pos;
            let mut i = start;
            while i < self.end && self.b[i] == b' ' {
                i += 1;
            }
            if i < self.end && self.b[i] != b'\n' && self.b[i] != b'#' {
                return Some((start, i - start));
            }
            let le = self.line_end(i);
            self.next_line(le);
        }
        None
    }

    fn is_dash(&self, at: usize) -> bool {
        self.b[at] == b'-' && self.b.get(at + 1).is_none_or(|&c| c == b' ' || c == b'\n')
    }

    /// After a scalar: only spaces and a comment may follow on its line.
    fn end_of_line(&mut self, mut i: usize, le: usize) -> Option<()> {
        let spaced = i < le && self.b[i] == b' ';
        while i < le && self.b[i] == b' ' {
            i += 1;
        }
        if i < le && !(self.b[i] == b'#' && spaced) {
            return None;
        }
        self.next_line(le);
        Some(())
    }

    /// A block node whose first line starts at `ls`, indented by `indent`.
    fn block_node(&mut self, ls: usize, indent: usize) -> Option<()> {
        let at = ls + indent;
        if self.is_dash(at) { self.block_seq(indent, at) } else { self.block_map(indent, at) }
    }

    /// A block mapping at column `col`, its first key at `at`.
    fn block_map(&mut self, col: usize, mut at: usize) -> Option<()> {
        self.out.push('{');
        loop {
            let le = self.line_end(at);
            let Key::Yes(key, after) = self.key(at, le)? else { return None };
            write_str(&mut self.out, &key);
            self.out.push(':');
            self.value_after_key(col, after, le)?;
            match self.peek() {
                Some((ls, indent)) if indent == col => at = ls + indent,
                Some((_, indent)) if indent > col => return None,
                _ => break,
            }
            self.out.push(',');
        }
        self.out.push('}');
        Some(())
    }

    /// A block sequence at column `col`, its first `-` at `at`.
    fn block_seq(&mut self, col: usize, mut at: usize) -> Option<()> {
        self.out.push('[');
        loop {
            self.seq_entry(col, at)?;
            match self.peek() {
                Some((ls, indent)) if indent == col && self.is_dash(ls + indent) => {
                    at = ls + indent;
                }
                Some((_, indent)) if indent > col => return None,
                _ => break,
            }
            self.out.push(',');
        }
        self.out.push(']');
        Some(())
    }

    /// The node of a sequence entry whose `-` is at `at`, in column `col`.
    fn seq_entry(&mut self, col: usize, at: usize) -> Option<()> {
        let le = self.line_end(at);
        let mut i = at + 1;
        while i < le && self.b[i] == b' ' {
            i += 1;
        }
        if i == le || self.b[i] == b'#' {
            self.next_line(le);
            match self.peek() {
                Some((ls, indent)) if indent > col => return self.block_node(ls, indent),
                _ => self.out.push_str("null"),
            }
            return Some(());
        }
        let line_start = at - col;
        if self.is_dash(i) {
            self.block_seq(i - line_start, i)
        } else if let Key::Yes(..) = self.key(i, le)? {
            self.block_map(i - line_start, i)
        } else {
            self.inline(col, i, le)
        }
    }

    /// The value of a mapping key at column `col`, from `i` (after the `:`) on its line.
    fn value_after_key(&mut self, col: usize, mut i: usize, le: usize) -> Option<()> {
        while i < le && self.b[i] == b' ' {
            i += 1;
        }
        if i < le && self.b[i] != b'#' {
            return self.inline(col, i, le);
        }
        self.next_line(le);
        match self.peek() {
            Some((ls, indent)) if indent > col => self.block_node(ls, indent),
            Some((ls, indent)) if indent == col && self.is_dash(ls + indent) => {
                self.block_seq(indent, ls + indent)
            }
            _ => {
                self.out.push_str("null");
                Some(())
            }
        }
    }

    /// Whether the scalar at `i` is a mapping key (`None`: outside the subset).
    fn key(&self, i: usize, le: usize) -> Option<Key<'a>> {
        let b = self.b;
        let (text, mut j) = match b[i] {
            b'"' => {
                let (s, j) = self.double_quoted(i, le)?;
                (s, j)
            }
            b'\'' => {
                let (s, j) = self.single_quoted(i, le)?;
                (s, j)
            }
            b'[' | b'{' | b']' | b'}' | b',' | b'#' | b'&' | b'*' | b'!' | b'|' | b'>' | b'%'
            | b'@' | b'`' => return Some(Key::No),
            b'?' | b':' | b'-' if b.get(i + 1).is_none_or(|&c| c == b' ' || c == b'\n') => {
                return if b[i] == b'-' { Some(Key::No) } else { None };
            }
            _ => {
                let line = &b[i..le];
                let mut from = 0;
                loop {
                    let Some(c) = memchr::memchr2(b':', b'#', &line[from..]).map(|c| from + c)
                    else {
                        return Some(Key::No);
                    };
                    if line[c] == b'#' {
                        if line[c - 1] == b' ' {
                            return Some(Key::No);
                        }
                    } else if line.get(c + 1).is_none_or(|&n| n == b' ') {
                        let key = self.text[i..i + c].trim_end_matches(' ');
                        // A key that would not be a string, or a merge key.
                        if plain_type(key)? != Plain::Str || key == "<<" {
                            return None;
                        }
                        return Some(Key::Yes(Cow::Borrowed(key), i + c + 1));
                    }
                    from = c + 1;
                }
            }
        };
        while j < le && b[j] == b' ' {
            j += 1;
        }
        if j < le && b[j] == b':' && b.get(j + 1).is_none_or(|&c| c == b' ' || c == b'\n') {
            return Some(Key::Yes(text, j + 1));
        }
        Some(Key::No)
    }

    /// A scalar or empty flow collection starting at `i` on its line, the value of a node at
    /// column `col`.
    fn inline(&mut self, col: usize, i: usize, le: usize) -> Option<()> {
        let b = self.b;
        match b[i] {
            b'"' => {
                let (s, j) = self.double_quoted(i, le)?;
                write_str(&mut self.out, &s);
                self.end_of_line(j, le)
            }
            b'\'' => {
                let (s, j) = self.single_quoted(i, le)?;
                write_str(&mut self.out, &s);
                self.end_of_line(j, le)
            }
            b'|' => self.literal(col, i, le),
            open @ (b'[' | b'{') => {
                let close = if open == b'[' { b']' } else { b'}' };
                if b.get(i + 1) != Some(&close) {
                    return None;
                }
                self.out.push_str(if open == b'[' { "[]" } else { "{}" });
                self.end_of_line(i + 2, le)
            }
            b']' | b'}' | b',' | b'#' | b'&' | b'*' | b'!' | b'>' | b'%' | b'@' | b'`' => None,
            b'?' | b':' | b'-' if b.get(i + 1).is_none_or(|&c| c == b' ' || c == b'\n') => None,
            _ => {
                // A plain scalar: to a comment or the end of the line.
                let line = &b[i..le];
                let mut end = line.len();
                let mut from = 0;
                while let Some(c) = memchr::memchr(b'#', &line[from..]).map(|c| from + c) {
                    if line[c - 1] == b' ' {
                        end = c;
                        break;
                    }
                    from = c + 1;
                }
                let t = self.text[i..i + end].trim_end_matches(' ');
                if t.ends_with(':') || memchr::memmem::find(t.as_bytes(), b": ").is_some() {
                    return None;
                }
                match plain_type(t)? {
                    Plain::Null => self.out.push_str("null"),
                    Plain::Bool(v) => self.out.push_str(if v { "true" } else { "false" }),
                    Plain::Int(v) => self.out.push_str(&v),
                    Plain::Str => write_str(&mut self.out, t),
                }
                self.next_line(le);
                Some(())
            }
        }
    }

    /// A double-quoted scalar on one line: its value and the index after its closing quote.
    fn double_quoted(&self, i: usize, le: usize) -> Option<(Cow<'a, str>, usize)> {
        let b = self.b;
        let mut j = i + 1;
        let mut owned: Option<String> = None;
        let mut from = j;
        loop {
            let k = j + memchr::memchr2(b'"', b'\\', &b[j..le])?;
            if b[k] == b'"' {
                let value = match owned {
                    None => Cow::Borrowed(&self.text[from..k]),
                    Some(mut s) => {
                        s.push_str(&self.text[from..k]);
                        Cow::Owned(s)
                    }
                };
                return Some((value, k + 1));
            }
            let s = owned.get_or_insert_with(String::new);
            s.push_str(&self.text[from..k]);
            let e = *b.get(k + 1).filter(|_| k + 1 < le)?;
            let hex = |n: usize| -> Option<char> {
                let digits = self.text.get(k + 2..k + 2 + n).filter(|_| k + 2 + n <= le)?;
                if !digits.bytes().all(|c| c.is_ascii_hexdigit()) {
                    return None;
                }
                char::from_u32(u32::from_str_radix(digits, 16).ok()?)
            };
            let (c, len) = match e {
                b'0' => ('\0', 2),
                b'a' => ('\u{7}', 2),
                b'b' => ('\u{8}', 2),
                b't' => ('\t', 2),
                b'n' => ('\n', 2),
                b'v' => ('\u{b}', 2),
                b'f' => ('\u{c}', 2),
                b'r' => ('\r', 2),
                b'e' => ('\u{1b}', 2),
                b' ' => (' ', 2),
                b'"' => ('"', 2),
                b'/' => ('/', 2),
                b'\\' => ('\\', 2),
                b'N' => ('\u{85}', 2),
                b'_' => ('\u{a0}', 2),
                b'L' => ('\u{2028}', 2),
                b'P' => ('\u{2029}', 2),
                b'x' => (hex(2)?, 4),
                b'u' => (hex(4)?, 6),
                b'U' => (hex(8)?, 10),
                _ => return None,
            };
            s.push(c);
            j = k + len;
            from = j;
        }
    }

    /// A single-quoted scalar on one line: its value and the index after its closing quote.
    fn single_quoted(&self, i: usize, le: usize) -> Option<(Cow<'a, str>, usize)> {
        let b = self.b;
        let mut j = i + 1;
        let mut owned: Option<String> = None;
        loop {
            let k = j + memchr::memchr(b'\'', &b[j..le])?;
            if b.get(k + 1) == Some(&b'\'') && k + 1 < le {
                owned.get_or_insert_with(String::new).push_str(&self.text[j..=k]);
                j = k + 2;
                continue;
            }
            let value = match owned {
                None => Cow::Borrowed(&self.text[j..k]),
                Some(mut s) => {
                    s.push_str(&self.text[j..k]);
                    Cow::Owned(s)
                }
            };
            return Some((value, k + 1));
        }
    }

    /// A literal block scalar (`|`, `|-`, `|+`) of a node at column `col`.
    fn literal(&mut self, col: usize, i: usize, le: usize) -> Option<()> {
        let b = self.b;
        let mut j = i + 1;
        let chomp = match b.get(j).filter(|_| j < le) {
            Some(b'-') => Chomp::Strip,
            Some(b'+') => Chomp::Keep,
            _ => Chomp::Clip,
        };
        if chomp != Chomp::Clip {
            j += 1;
        }
        if j < le && b[j] != b' ' {
            return None;
        }
        self.end_of_line(j, le)?;
        let mut indent: Option<usize> = None;
        let mut leading_blank = 0;
        let mut blanks = 0;
        let mut value = String::new();
        while self.pos < self.end {
            let ls = self.pos;
            let le = self.line_end(ls);
            if le == self.end {
                // The last line of the text without its line break: left to the general reader.
                return None;
            }
            let spaces = b[ls..le].iter().take_while(|&&c| c == b' ').count();
            let blank = ls + spaces == le;
            let m = match indent {
                None if blank => {
                    leading_blank = leading_blank.max(spaces);
                    blanks += 1;
                    self.next_line(le);
                    continue;
                }
                None => {
                    if spaces <= col || leading_blank > spaces {
                        return None;
                    }
                    indent = Some(spaces);
                    spaces
                }
                Some(m) => m,
            };
            if blank && spaces <= m {
                blanks += 1;
            } else if spaces < m {
                break;
            } else {
                for _ in 0..blanks {
                    value.push('\n');
                }
                blanks = 0;
                value.push_str(&self.text[ls + m..le]);
                value.push('\n');
            }
            self.next_line(le);
        }
        indent?;
        match chomp {
            Chomp::Clip => {}
            Chomp::Strip => {
                value.pop();
            }
            Chomp::Keep if blanks > 0 => return None,
            Chomp::Keep => {}
        }
        write_str(&mut self.out, &value);
        Some(())
    }
}

/// What a piece of the text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Root {
    /// A document: a block mapping at column 0.
    Map,
    /// An entry of a block sequence.
    Entry,
}

/// The JSON of `text[start..end]`, or `None` outside the subset.
fn to_json(text: &str, start: usize, end: usize, root: Root) -> Option<String> {
    if !printable(&text[start..end]) {
        return None;
    }
    let mut conv = Conv { text, b: text.as_bytes(), end, pos: start, out: String::new() };
    conv.out.reserve(end - start);
    let (ls, indent) = conv.peek()?;
    match root {
        Root::Map if indent == 0 => conv.block_map(0, ls)?,
        Root::Map => return None,
        Root::Entry if conv.is_dash(ls + indent) => conv.seq_entry(indent, ls + indent)?,
        Root::Entry => return None,
    }
    if conv.peek().is_some() {
        return None;
    }
    Some(conv.out)
}

/// One piece to read: its text and what it is.
struct Piece<'t> {
    start: usize,
    end: usize,
    root: Root,
    source: Source,
    list: Option<(Option<&'t str>, &'t str)>,
}

/// See the module documentation.
pub(super) fn prepare(file: &Path, text: &str, strictness: Strictness) -> Option<Vec<Prepared>> {
    let docs = scan(text)?;
    if docs.is_empty() {
        return None;
    }
    // The lists' own fields, read first (they are small): is it a List, and of what kind?
    let mut heads = Vec::with_capacity(docs.len());
    for doc in &docs {
        let Some(list) = &doc.list else {
            heads.push(None);
            continue;
        };
        let head =
            format!("{}{}", &text[doc.start..list.key_start], &text[list.items_end..doc.end]);
        let json = to_json(&head, 0, head.len(), Root::Map)?;
        let head = serde_json::from_str::<StrictValue>(&json).ok()?.0;
        let api_version = head.get("apiVersion").and_then(Value::as_str)?.to_string();
        let kind = head.get("kind").and_then(Value::as_str)?.to_string();
        if api_version.is_empty() || !object::is_list(&kind, true) || head.get("items").is_some() {
            return None;
        }
        heads.push(Some((api_version, kind)));
    }
    let mut pieces = Vec::new();
    for (d, (doc, head)) in docs.iter().zip(&heads).enumerate() {
        let source =
            Source { file: file.to_path_buf(), document: d, item: None, line: Some(doc.line) };
        match (head, &doc.list) {
            (Some((api_version, kind)), Some(list)) => {
                let item_kind = kind.strip_suffix("List").filter(|k| !k.is_empty());
                for (i, e) in list.entries.iter().enumerate() {
                    pieces.push(Piece {
                        start: e.start,
                        end: e.end,
                        root: Root::Entry,
                        source: Source { item: Some(i), line: Some(e.line), ..source.clone() },
                        list: Some((item_kind, api_version.as_str())),
                    });
                }
            }
            _ => pieces.push(Piece {
                start: doc.start,
                end: doc.end,
                root: Root::Map,
                source,
                list: None,
            }),
        }
    }
    let prepared = object::map_in_order(pieces, |p| {
        let json = to_json(text, p.start, p.end, p.root)?;
        fast_json::prepare_unit(Unit { text: &json, source: p.source, list: p.list }, strictness)
    });
    let prepared: Vec<Prepared> =
        prepared.into_iter().collect::<Option<Vec<_>>>()?.into_iter().flatten().collect();
    if prepared.iter().any(Prepared::is_error) {
        return None;
    }
    Some(prepared)
}

#[cfg(test)]
mod tests;
