//! Aligned text columns exactly as kubectl prints them: Go's `text/tabwriter` with kubectl's
//! settings (`printers.GetNewTabWriter`: minimum cell width 6, padding 3, padded with spaces).
//!
//! Text is cut into lines and each line into cells at tabs. A cell ended by a tab belongs to
//! a column; the text after a line's last tab does not and is written as is. A column spans a
//! block of consecutive lines that all have a cell in it, and is as wide as its widest cell
//! plus the padding, but at least the minimum width. Widths count characters, not bytes.

/// kubectl's minimum cell width, padding included.
pub const KUBECTL_MIN_WIDTH: usize = 6;
/// kubectl's padding after the widest cell of a column.
pub const KUBECTL_PADDING: usize = 3;

/// Collects tab-separated lines and lays them out in columns (Go's `tabwriter.Writer`).
///
/// ```
/// use kclient_examples::TabWriter;
///
/// let mut w = TabWriter::kubectl();
/// w.line(["NAME", "KIND"]);
/// w.line(["pods", "Pod"]);
/// assert_eq!(w.finish(), "NAME   KIND\npods   Pod\n");
/// ```
#[derive(Debug, Clone)]
pub struct TabWriter {
    min_width: usize,
    padding: usize,
    lines: Vec<Vec<String>>,
    /// Text written by [`write_str`](Self::write_str) after its last newline: the start of a
    /// line not ended yet.
    pending: String,
}

impl TabWriter {
    /// A writer with kubectl's settings.
    pub fn kubectl() -> Self {
        TabWriter::new(KUBECTL_MIN_WIDTH, KUBECTL_PADDING)
    }

    /// A writer padding every column cell to at least `min_width` characters, and to the
    /// widest cell of its column plus `padding`.
    pub fn new(min_width: usize, padding: usize) -> Self {
        TabWriter {
            min_width,
            padding,
            lines: Vec::new(),
            pending: String::new(),
        }
    }

    /// Adds one line: the cells as if joined with tabs and ended with a newline.
    pub fn line<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        let mut cells: Vec<String> = cells.into_iter().map(Into::into).collect();
        if !self.pending.is_empty() {
            // The cells continue the line `write_str` started.
            let text = format!("{}\n", cells.join("\t"));
            self.write_str(&text);
            return;
        }
        if cells.is_empty() {
            cells.push(String::new());
        }
        self.lines.push(cells);
    }

    /// Adds text as Go's writer would receive it: lines end at `\n`, cells at `\t`, and a
    /// line may be written in several pieces (`"a\t"` then `"b\n"` is one line of two cells).
    pub fn write_str(&mut self, text: &str) {
        self.pending.push_str(text);
        while let Some(end) = self.pending.find('\n') {
            let line: Vec<String> = self.pending[..end].split('\t').map(str::to_owned).collect();
            self.pending.drain(..=end);
            self.lines.push(line);
        }
    }

    /// The laid-out text, every line ended by a newline (a last line that was not is ended
    /// here).
    pub fn finish(mut self) -> String {
        if !self.pending.is_empty() {
            let last = std::mem::take(&mut self.pending);
            self.lines
                .push(last.split('\t').map(str::to_owned).collect());
        }
        let mut out = String::new();
        let mut widths = Vec::new();
        self.format(&mut out, &mut widths, 0, self.lines.len());
        out
    }

    /// Lays out lines `line0..line1` given the widths of the columns already fixed, the way
    /// Go's `Writer.format` does: each run of lines with a cell in the next column becomes a
    /// block with its own width for that column.
    fn format(&self, out: &mut String, widths: &mut Vec<usize>, mut line0: usize, line1: usize) {
        let column = widths.len();
        let mut this = line0;
        while this < line1 {
            if column + 1 >= self.lines[this].len() {
                this += 1;
                continue;
            }
            // A block of lines with a cell in this column starts here.
            self.write_lines(out, widths, line0, this);
            line0 = this;
            let mut width = self.min_width;
            while this < line1 && column + 1 < self.lines[this].len() {
                let cell = self.lines[this][column].chars().count();
                width = width.max(cell + self.padding);
                this += 1;
            }
            widths.push(width);
            self.format(out, widths, line0, this);
            widths.pop();
            line0 = this;
        }
        self.write_lines(out, widths, line0, line1);
    }

    fn write_lines(&self, out: &mut String, widths: &[usize], line0: usize, line1: usize) {
        for line in &self.lines[line0..line1] {
            for (j, cell) in line.iter().enumerate() {
                out.push_str(cell);
                if let Some(&width) = widths.get(j)
                    && j + 1 < line.len()
                {
                    let used = cell.chars().count();
                    out.extend(std::iter::repeat_n(' ', width.saturating_sub(used)));
                }
            }
            out.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_take_the_widest_cell_plus_padding_and_the_last_cell_is_not_padded() {
        let mut w = TabWriter::kubectl();
        w.write_str("NAME\tSHORTNAMES\tKIND\n");
        w.write_str("bindings\t\tBinding\n");
        w.write_str("configmaps\tcm\tConfigMap\n");
        assert_eq!(
            w.finish(),
            "NAME         SHORTNAMES   KIND\n\
             bindings                  Binding\n\
             configmaps   cm           ConfigMap\n"
        );
    }

    #[test]
    fn short_columns_get_the_minimum_width_and_an_empty_last_cell_leaves_trailing_padding() {
        let mut w = TabWriter::kubectl();
        w.line(["a", "b", ""]);
        w.line(["c", "dd", "x"]);
        assert_eq!(w.finish(), "a     b     \nc     dd    x\n");
    }

    #[test]
    fn lines_without_tabs_pass_through_and_split_blocks() {
        let mut w = TabWriter::new(0, 1);
        w.write_str("aaaa\tb\nplain\nc\td\n");
        assert_eq!(w.finish(), "aaaa b\nplain\nc d\n");
    }

    #[test]
    fn write_str_keeps_empty_lines_and_joins_pieces_of_a_line() {
        // An empty line, written on its own, is a line (it ends the block above it).
        let mut w = TabWriter::new(0, 1);
        w.write_str("aaaa\tb\n");
        w.write_str("\n");
        w.write_str("c\td\n");
        assert_eq!(w.finish(), "aaaa b\n\nc d\n");

        // A line written in pieces is one line; nothing written is nothing.
        let mut w = TabWriter::new(0, 1);
        w.write_str("");
        w.write_str("aaaa\t");
        w.write_str("b\nc\t");
        w.line(["d", "e"]);
        assert_eq!(w.finish(), "aaaa b\nc    d e\n");
        assert_eq!(TabWriter::new(0, 1).finish(), "");
        let mut w = TabWriter::new(0, 1);
        w.write_str("");
        assert_eq!(w.finish(), "");
    }

    #[test]
    fn widths_count_characters() {
        let mut w = TabWriter::new(0, 1);
        w.line(["é", "x"]);
        w.line(["ab", "y"]);
        assert_eq!(w.finish(), "é  x\nab y\n");
    }
}
