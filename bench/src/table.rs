//! The one table: a row per figure, a column per contender, and each
//! peer's figure as a ratio to wasmwire's.

use std::fmt::Write;

use crate::contender::Kind;

/// How a figure is shown.
#[derive(Debug, Clone, Copy)]
pub enum Unit {
    /// Seconds, shown in µs.
    Micros,
    /// Seconds, shown in ms.
    Millis,
    /// Per second.
    Rate,
    /// Bytes, shown in MiB.
    MiB,
    /// A plain ratio.
    Times,
}

impl Unit {
    fn show(self, value: f64) -> String {
        match self {
            Unit::Micros => format!("{:.1} µs", value * 1e6),
            Unit::Millis => format!("{:.2} ms", value * 1e3),
            Unit::Rate => format!("{value:.0}/s"),
            Unit::MiB => format!("{:.2} MiB", value / f64::from(1 << 20)),
            Unit::Times => format!("{value:.2}x"),
        }
    }
}

/// One row.
#[derive(Debug)]
pub struct Row {
    /// What is measured, and whether lower or higher is better.
    pub figure: String,
    /// How values are shown.
    pub unit: Unit,
    /// A value per contender (`None`: does not apply, or was not run).
    pub values: Vec<Option<f64>>,
}

/// The table.
#[derive(Debug)]
pub struct Table {
    kinds: Vec<Kind>,
    /// Rows of text, before the figures: (what, a cell per contender).
    descriptions: Vec<(String, Vec<String>)>,
    rows: Vec<Row>,
}

impl Table {
    /// An empty table with a column per contender.
    pub fn new(kinds: Vec<Kind>) -> Self {
        Table {
            kinds,
            descriptions: Vec::new(),
            rows: Vec::new(),
        }
    }

    /// Adds a row of text (printed before the figures).
    pub fn describe(&mut self, what: &str, cells: Vec<String>) {
        self.descriptions.push((what.to_string(), cells));
    }

    /// Adds a row.
    pub fn push(&mut self, row: Row) {
        self.rows.push(row);
    }

    /// The table as Markdown: the first column is wasmwire's, and every
    /// other cell carries its ratio to wasmwire's value (`x wasm`).
    pub fn markdown(&self) -> String {
        let wasm = self.kinds.iter().position(|k| *k == Kind::Wasm);
        let mut out = String::new();
        let _ = write!(out, "| figure |");
        for kind in &self.kinds {
            let _ = write!(out, " {} |", kind.name());
        }
        let _ = write!(out, "\n|---|");
        for _ in &self.kinds {
            let _ = write!(out, "---:|");
        }
        out.push('\n');
        for (what, cells) in &self.descriptions {
            let _ = write!(out, "| {what} |");
            for cell in cells {
                let _ = write!(out, " {cell} |");
            }
            out.push('\n');
        }
        for row in &self.rows {
            let _ = write!(out, "| {} |", row.figure);
            let base = wasm.and_then(|w| row.values.get(w).copied().flatten());
            for (i, value) in row.values.iter().enumerate() {
                let cell = match (value, base) {
                    (None, _) => "n/a".to_string(),
                    (Some(v), Some(b)) if Some(i) != wasm && !matches!(row.unit, Unit::Times) => {
                        format!("{} ({:.1}x wasm)", row.unit.show(*v), v / b)
                    }
                    (Some(v), _) => row.unit.show(*v),
                };
                let _ = write!(out, " {cell} |");
            }
            out.push('\n');
        }
        out
    }
}
