//! Running case files and reporting what came.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::runner;

/// A case whose answer was not the expected one (or that could not run).
#[derive(Debug, Clone)]
pub struct CaseFailure {
    /// The case's `about`, or `case N` (1-based).
    pub name: String,
    pub expected: Value,
    /// What came, or why nothing could.
    pub got: Result<Value, String>,
}

/// How one file went.
#[derive(Debug, Clone)]
pub enum Outcome {
    Ran {
        passed: usize,
        failures: Vec<CaseFailure>,
    },
    /// The file's area has no runner.
    NoRunner,
    /// The file could not be read as a case file.
    Unreadable(String),
}

#[derive(Debug, Clone)]
pub struct FileReport {
    pub path: PathBuf,
    pub area: String,
    pub outcome: Outcome,
}

impl FileReport {
    pub fn passed(&self) -> usize {
        match &self.outcome {
            Outcome::Ran { passed, .. } => *passed,
            _ => 0,
        }
    }

    pub fn failed(&self) -> usize {
        match &self.outcome {
            Outcome::Ran { failures, .. } => failures.len(),
            _ => 0,
        }
    }

    /// Whether the file counts against the run: a failed case, no runner, or unreadable.
    pub fn is_bad(&self) -> bool {
        !matches!(&self.outcome, Outcome::Ran { failures, .. } if failures.is_empty())
    }
}

impl fmt::Display for FileReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.outcome {
            Outcome::NoRunner => write!(f, "{}: no runner", self.area),
            Outcome::Unreadable(why) => write!(f, "{}: cannot read {}: {why}", self.area, self.path.display()),
            Outcome::Ran { passed, failures } => {
                write!(f, "{}: {passed} passed, {} failed", self.area, failures.len())?;
                for failure in failures {
                    write!(f, "\n  {}\n    expected: {}", failure.name, failure.expected)?;
                    match &failure.got {
                        Ok(value) => write!(f, "\n    got:      {value}")?,
                        Err(why) => write!(f, "\n    error:    {why}")?,
                    }
                }
                Ok(())
            }
        }
    }
}

/// Runs every case of one file.
pub fn run_file(path: &Path) -> FileReport {
    let area = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let outcome = match read_cases(path) {
        Err(why) => Outcome::Unreadable(why),
        Ok(cases) => match runner(&area) {
            None => Outcome::NoRunner,
            Some(run) => {
                let mut passed = 0;
                let mut failures = Vec::new();
                for (index, case) in cases.iter().enumerate() {
                    let expected = case.get("expect").cloned().unwrap_or(Value::Null);
                    let got = catch_unwind(AssertUnwindSafe(|| run(case))).unwrap_or_else(|panic| {
                        let msg = panic
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                            .unwrap_or_else(|| "the runner panicked".to_owned());
                        Err(format!("panicked: {msg}"))
                    });
                    if got.as_ref() == Ok(&expected) {
                        passed += 1;
                    } else {
                        let name = case
                            .get("about")
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                            .unwrap_or_else(|| format!("case {}", index + 1));
                        failures.push(CaseFailure { name, expected, got });
                    }
                }
                Outcome::Ran { passed, failures }
            }
        },
    };
    FileReport { path: path.to_path_buf(), area, outcome }
}

fn read_cases(path: &Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let file: Value = serde_json::from_str(&text).map_err(|e| format!("not JSON: {e}"))?;
    file.get("cases").and_then(Value::as_array).cloned().ok_or_else(|| "no \"cases\" list".to_owned())
}

/// Runs every case file named: a file as it is, a folder's `*.json` files in name order.
pub fn run_paths(paths: &[PathBuf]) -> Result<Vec<FileReport>, String> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| format!("{}: {e}", path.display()))?
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "json"))
                .collect();
            found.sort();
            files.extend(found);
        } else if path.is_file() {
            files.push(path.clone());
        } else {
            return Err(format!("{}: no such file or folder", path.display()));
        }
    }
    Ok(files.iter().map(|f| run_file(f)).collect())
}
