//! Source files, spans and diagnostics: errors are data, rendered at the edge
//! in the `FILE:LINE:COL: error: MESSAGE` form that LANGUAGE.md fixes.

use std::fmt::Write;

/// A byte range in the one source file being compiled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start: start as u32, end: end as u32 }
    }
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

/// The text of a source file with its line starts, for locating spans.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    line_starts: Vec<usize>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let mut line_starts = vec![0];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i + 1);
            }
        }
        SourceFile { name: name.into(), text, line_starts }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: u32) -> (usize, usize) {
        let mut offset = (offset as usize).min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let col = self.text[start..offset].chars().count() + 1;
        (line + 1, col)
    }

    fn line_text(&self, line: usize) -> &str {
        let start = self.line_starts[line - 1];
        let end = self.line_starts.get(line).copied().unwrap_or(self.text.len());
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }

    /// `FILE:LINE:COL`, the prefix of diagnostics and of run-time error messages.
    pub fn location(&self, span: Span) -> String {
        let (l, c) = self.line_col(span.start);
        format!("{}:{}:{}", self.name, l, c)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
    Note,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// One diagnostic: a message at a primary span, secondary labels and notes.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub span: Span,
    pub labels: Vec<(Span, String)>,
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Error, message: message.into(), span, labels: vec![], notes: vec![] }
    }
    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic { severity: Severity::Warning, message: message.into(), span, labels: vec![], notes: vec![] }
    }
    pub fn with_label(mut self, span: Span, text: impl Into<String>) -> Diagnostic {
        self.labels.push((span, text.into()));
        self
    }
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// Renders as `FILE:LINE:COL: error: MESSAGE`, the source line, a caret
    /// line under the span, then each label and note.
    pub fn render(&self, file: &SourceFile) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}: {}: {}", file.location(self.span), self.severity.name(), self.message);
        render_snippet(&mut out, file, self.span, None);
        for (span, text) in &self.labels {
            let _ = writeln!(out, "{}: note: {}", file.location(*span), text);
            render_snippet(&mut out, file, *span, None);
        }
        for n in &self.notes {
            let _ = writeln!(out, "  = note: {}", n);
        }
        out
    }
}

/// Source lines longer than this are shown as a window around the span.
const SNIPPET_CHARS: usize = 160;

fn render_snippet(out: &mut String, file: &SourceFile, span: Span, label: Option<&str>) {
    if file.text.is_empty() {
        return;
    }
    let (line, col) = file.line_col(span.start);
    let text = file.line_text(line);
    let (end_line, end_col) = file.line_col(span.end.max(span.start));
    let len = text.chars().count();
    // The shown line drops its `\r`: a span at or after one (the end of a
    // file that ends in `\r`) is shown just past the line's last character.
    let (col, end_col) = (col.min(len + 1), end_col.min(len + 1));
    let mut width = if end_line == line { end_col.saturating_sub(col).max(1) } else { len.saturating_sub(col - 1).max(1) };
    // A long line (a generated program's) is shown around the span only.
    let (mut shown, mut col) = (text.replace('\t', " "), col);
    if len > SNIPPET_CHARS {
        let from = (col - 1).saturating_sub(SNIPPET_CHARS / 4).min(len - SNIPPET_CHARS);
        let to = from + SNIPPET_CHARS;
        let cut: String = shown.chars().skip(from).take(SNIPPET_CHARS).collect();
        let (pre, post) = (if from > 0 { "…" } else { "" }, if to < len { "…" } else { "" });
        shown = format!("{}{}{}", pre, cut, post);
        // The caret ends with the window.
        width = width.min((to + 1).saturating_sub(col)).max(1);
        col = col - from + pre.chars().count();
    }
    let gutter = format!("{}", line);
    let _ = writeln!(out, "{} | {}", gutter, shown);
    let _ = writeln!(
        out,
        "{} | {}{}{}",
        " ".repeat(gutter.len()),
        " ".repeat(col - 1),
        "^".repeat(width),
        label.map(|l| format!(" {}", l)).unwrap_or_default()
    );
}

/// Renders a list of diagnostics.
pub fn render_all(diags: &[Diagnostic], file: &SourceFile) -> String {
    diags.iter().map(|d| d.render(file)).collect()
}

impl Diagnostic {
    /// One JSON object on one line (`--error-format=json`, for editors):
    /// `file`, `severity`, `message`, the primary `span` (1-based `line`,
    /// `column`, `end_line`, `end_column`, and byte offsets), `labels`
    /// (each a span and its `message`) and `notes`.
    pub fn to_json(&self, file: &SourceFile) -> String {
        let span = |s: Span| {
            let (line, column) = file.line_col(s.start);
            let (end_line, end_column) = file.line_col(s.end.max(s.start));
            serde_json::json!({"line": line, "column": column, "end_line": end_line, "end_column": end_column, "start": s.start, "end": s.end})
        };
        serde_json::json!({
            "file": file.name,
            "severity": self.severity.name(),
            "message": self.message,
            "span": span(self.span),
            "labels": self.labels.iter().map(|(s, m)| serde_json::json!({"span": span(*s), "message": m})).collect::<Vec<_>>(),
            "notes": self.notes,
        })
        .to_string()
    }
}

/// The candidate closest to a misspelt `name`, for "did you mean": within
/// an edit distance of a third of the name's length (at least 1), the
/// nearest first, ties to the earliest candidate.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| (strsim::damerau_levenshtein(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_location_line_and_caret() {
        let f = SourceFile::new("a.acc", "fn f() -> i64 {\n  1 + true\n}\n");
        let d = Diagnostic::error(Span::new(22, 26), "mismatched types");
        assert_eq!(d.render(&f), "a.acc:2:7: error: mismatched types\n2 |   1 + true\n  |       ^^^^\n");
    }

    #[test]
    fn long_lines_show_a_window_around_the_span() {
        let line = format!("let a = {}bad{};", "x + ".repeat(100), " + y".repeat(100));
        let f = SourceFile::new("a.acc", line.clone());
        let at = line.find("bad").unwrap();
        let d = Diagnostic::error(Span::new(at, at + 3), "unknown");
        let out = d.render(&f);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], format!("a.acc:1:{}: error: unknown", at + 1));
        assert!(lines[1].starts_with("1 | …") && lines[1].ends_with('…'), "{}", lines[1]);
        assert_eq!(lines[1].chars().count(), "1 | ".len() + SNIPPET_CHARS + 2);
        // The caret is under `bad`, however the line was cut.
        let caret = lines[2].find('^').unwrap();
        assert_eq!(lines[1].chars().skip(caret).take(3).collect::<String>(), "bad");
        assert_eq!(lines[2].trim_end().len() - caret, 3);
        // At the line's end the window ends there too.
        let end = line.len() - 1;
        let out = Diagnostic::error(Span::new(end, end + 1), "x").render(&f);
        assert!(out.lines().nth(1).unwrap().ends_with(" + y;"), "{}", out);
        assert!(out.lines().nth(2).unwrap().ends_with('^'));
    }

    #[test]
    fn spans_inside_a_character_do_not_panic() {
        let f = SourceFile::new("a.acc", "x = \u{fffd}1");
        let d = Diagnostic::error(Span::new(5, 6), "bad");
        assert!(d.render(&f).starts_with("a.acc:1:5: error: bad"));
    }

    #[test]
    fn a_span_after_a_final_carriage_return_is_shown_at_the_line_end() {
        // Found by `make fuzz` (parse): the end of a file ending in `\r`,
        // on a line long enough to be cut, overflowed the caret's width.
        let line = format!("fn f() {{ {}", "x ".repeat(100));
        for text in [format!("{}\r", line), "a\r".to_string()] {
            let f = SourceFile::new("a.acc", text.clone());
            let at = text.len();
            let out = Diagnostic::error(Span::new(at, at), "expected '}'").render(&f);
            let lines: Vec<&str> = out.lines().collect();
            let shown = lines[1].chars().count();
            assert_eq!(lines[2].chars().count(), shown + 1, "{}", out);
            assert!(lines[2].ends_with(" ^"), "{}", out);
        }
    }

    #[test]
    fn json_form() {
        let f = SourceFile::new("a.acc", "fn f() -> i64 {\n  1 + \"x\"\n}\n");
        let d = Diagnostic::warning(Span::new(22, 25), "say \"hi\"").with_note("n");
        assert_eq!(
            d.to_json(&f),
            r#"{"file":"a.acc","labels":[],"message":"say \"hi\"","notes":["n"],"severity":"warning","span":{"column":7,"end":25,"end_column":10,"end_line":2,"line":2,"start":22}}"#
        );
    }

    #[test]
    fn did_you_mean() {
        assert_eq!(closest("fodl", ["map", "fold", "filter"]), Some("fold"));
        assert_eq!(closest("xs", ["ys", "zs"]), Some("ys"));
        assert_eq!(closest("banana", ["map", "fold"]), None);
    }
}
