//! Knowledge bases: folders of documents the person adds (`lembas kb add NAME PATH…`), cut into
//! pieces by tokens (`filesystem.md` *Indexing, by tokens*), indexed by words (SQLite's FTS5)
//! and by meaning (the configured embedding model's vectors), and searched with both, fused by
//! reciprocal rank — so a question finds a passage that shares none of its words, and an exact
//! identifier is found where embeddings blur it. With no embedding model, search is by words
//! alone and says so.
//!
//! The bases (name → folders) are kept in `bases.json`; the index in `index.db` beside it. Both
//! in lembas' data folder, owned by this crate, which the engine uses.

mod embed;
mod index;
mod indexer;
mod search;
mod tokens;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use embed::{EmbedError, Embedder};
pub use indexer::{MAX_FILE_BYTES, OVERLAP_TOKENS, PIECE_TOKENS, cut};
pub use search::{Found, Hit, How};

/// Why the knowledge bases could not do what was asked, in words for the person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KbError {
    #[error("{0}")]
    Refused(String),
    #[error("{0}: {1}")]
    Io(String, String),
    #[error("the knowledge index: {0}")]
    Db(String),
    #[error("the knowledge index is damaged ({0})")]
    Damaged(String),
}

impl From<rusqlite::Error> for KbError {
    fn from(e: rusqlite::Error) -> Self {
        KbError::Db(e.to_string())
    }
}

/// What an index run did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct IndexReport {
    /// Files read and cut anew (new or changed).
    pub indexed: u64,
    /// Files whose content was as indexed.
    pub unchanged: u64,
    /// Files no longer there, taken out.
    pub removed: u64,
    /// Requests made to the embedding model.
    pub embed_calls: u64,
    /// Pieces the model refused and that were cut in two.
    pub split: u64,
    /// What was left out, and why (binary, too large, gone).
    pub skipped: Vec<(String, String)>,
    /// The base now: files, pieces, pieces with a vector.
    pub files: u64,
    pub pieces: u64,
    pub embedded: u64,
    /// The embedding model did not answer: the rest is found by words until a reindex.
    pub embedder_down: Option<String>,
    /// The index was damaged and made anew.
    pub rebuilt: bool,
    /// Pieces were counted by the embedder's own tokenizer (its server's `/tokenize`), not the
    /// byte estimate.
    pub counted_by_model: bool,
}

/// A base as listed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BaseInfo {
    pub name: String,
    pub paths: Vec<PathBuf>,
    pub files: u64,
    pub pieces: u64,
    /// Pieces with a vector from the configured model.
    pub embedded: u64,
}

/// The person's knowledge bases on this machine.
#[derive(Debug, Clone)]
pub struct Knowledge {
    dir: PathBuf,
    pub embedder: Option<Embedder>,
    /// The index's whole-file check has run (once: a search must not read every page).
    checked: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Places never indexed nor read, whatever folder the person names: the person's
    /// credentials and lembas' own folders ([`Knowledge::keeping_out`]), on their real paths.
    kept_out: std::sync::Arc<Vec<PathBuf>>,
}

impl Knowledge {
    /// The bases kept in `dir` (lembas' data folder's `knowledge/`), embedded with `embedder`.
    pub fn new(dir: PathBuf, embedder: Option<Embedder>) -> Knowledge {
        Knowledge { dir, embedder, checked: std::sync::Arc::default(), kept_out: std::sync::Arc::default() }
    }

    /// Never indexes nor reads anything in `places` (the person's credentials, lembas' own
    /// configuration and data): a base of a folder that holds one leaves it out, and says so.
    pub fn keeping_out(mut self, places: impl IntoIterator<Item = PathBuf>) -> Knowledge {
        let mut kept = Vec::new();
        for place in places {
            if let Ok(real) = std::fs::canonicalize(&place)
                && real != place
            {
                kept.push(real);
            }
            kept.push(place);
        }
        self.kept_out = std::sync::Arc::new(kept);
        self
    }

    /// Whether `path` (real) is, or is in, a place kept out.
    fn is_kept_out(&self, path: &Path) -> bool {
        self.kept_out.iter().any(|place| path.starts_with(place))
    }

    fn bases_file(&self) -> PathBuf {
        self.dir.join("bases.json")
    }

    /// The bases: name → folders.
    pub fn bases(&self) -> Result<BTreeMap<String, Vec<PathBuf>>, KbError> {
        match std::fs::read_to_string(self.bases_file()) {
            Ok(text) => serde_json::from_str(&text)
                .map_err(|e| KbError::Refused(format!("{}: {e}", self.bases_file().display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(e) => Err(KbError::Io(self.bases_file().display().to_string(), e.to_string())),
        }
    }

    /// Whether any base is there (the tools are offered only then).
    pub fn any(&self) -> bool {
        self.bases().is_ok_and(|b| !b.is_empty())
    }

    fn save_bases(&self, bases: &BTreeMap<String, Vec<PathBuf>>) -> Result<(), KbError> {
        let io = |e: std::io::Error| KbError::Io(self.dir.display().to_string(), e.to_string());
        std::fs::create_dir_all(&self.dir).map_err(io)?;
        let text = serde_json::to_string_pretty(bases).expect("bases serialize");
        lembas_sys::write_whole(&self.bases_file(), text.as_bytes()).map_err(io)
    }

    fn open(&self) -> Result<(rusqlite::Connection, bool), KbError> {
        let check = !self.checked.swap(true, std::sync::atomic::Ordering::SeqCst);
        index::open(&self.dir.join("index.db"), check)
    }

    /// Adds a base of `paths` (folders or files, each on its real path) and indexes it; a base of
    /// that name gets the paths added.
    pub async fn add(&self, name: &str, paths: &[PathBuf]) -> Result<IndexReport, KbError> {
        let name = base_name(name)?;
        let mut real = Vec::new();
        for path in paths {
            let found =
                std::fs::canonicalize(path).map_err(|e| KbError::Refused(format!("{}: {e}", path.display())))?;
            real.push(found);
        }
        let mut bases = self.bases()?;
        let kept = bases.entry(name.clone()).or_default();
        for path in real {
            if !kept.contains(&path) {
                kept.push(path);
            }
        }
        self.save_bases(&bases)?;
        self.reindex(&name).await
    }

    /// Takes a base out, with its index.
    pub fn remove(&self, name: &str) -> Result<(), KbError> {
        let mut bases = self.bases()?;
        if bases.remove(name).is_none() {
            return Err(KbError::Refused(format!("There is no knowledge base {name:?}.")));
        }
        self.save_bases(&bases)?;
        let (db, _) = self.open()?;
        index::drop_file(&db, name, None)
    }

    /// Indexes a base again: changed files cut and embedded anew, unchanged ones left (their
    /// missing vectors made), gone ones taken out.
    pub async fn reindex(&self, name: &str) -> Result<IndexReport, KbError> {
        let bases = self.bases()?;
        let roots = bases.get(name).ok_or_else(|| KbError::Refused(format!("There is no knowledge base {name:?}.")))?;
        let (mut db, rebuilt) = self.open()?;
        let mut report =
            indexer::Indexer::new(&mut db, name, self.embedder.as_ref()).run(roots, self.kept_out.clone()).await?;
        report.rebuilt = rebuilt;
        Ok(report)
    }

    /// The bases with what each holds.
    pub fn list(&self) -> Result<Vec<BaseInfo>, KbError> {
        let (db, _) = self.open()?;
        let model = self.embedder.as_ref().map(|e| e.model.as_str());
        self.bases()?
            .into_iter()
            .map(|(name, paths)| {
                let (files, pieces, embedded) = index::counts(&db, &name, model)?;
                Ok(BaseInfo { name, paths, files, pieces, embedded })
            })
            .collect()
    }

    /// The pieces that best answer `query`, by meaning and by words, from `bases` (all when
    /// empty).
    pub async fn search(&self, query: &str, bases: &[String], limit: usize) -> Result<Found, KbError> {
        let known = self.bases()?;
        if let Some(unknown) = bases.iter().find(|b| !known.contains_key(*b)) {
            let names: Vec<&str> = known.keys().map(String::as_str).collect();
            return Err(KbError::Refused(format!(
                "There is no knowledge base {unknown:?}; there are: {}.",
                names.join(", ")
            )));
        }
        let within: Vec<String> = if bases.is_empty() { known.keys().cloned().collect() } else { bases.to_vec() };
        // The model first: the index is not held while the network answers.
        let meaning_of = match &self.embedder {
            Some(embedder) if !query.trim().is_empty() => {
                Some((embedder.model.as_str(), search::query_vector(embedder, query).await))
            }
            _ => None,
        };
        let (db, rebuilt) = self.open()?;
        let mut found = search::search(&db, meaning_of, query, &within, limit)?;
        if rebuilt {
            found.note = Some(
                "The knowledge index was damaged and has been made anew: lembas kb reindex fills it again.".into(),
            );
        }
        Ok(found)
    }

    /// Lines `from..=to` (1-based; all when not given) of a file a base holds, as it is now.
    pub fn get(&self, base: &str, path: &str, from: Option<usize>, to: Option<usize>) -> Result<String, KbError> {
        let (db, _) = self.open()?;
        if index::file_hash(&db, base, path)?.is_none() {
            return Err(KbError::Refused(format!("{path} is not in the knowledge base {base:?}.")));
        }
        // Read on its real path, and only where it was indexed: a file since replaced by a link
        // (to a key, say) is not read through — lembas reads it itself, outside any sandbox.
        let gone = |e: String| KbError::Io(path.to_owned(), format!("{e} (lembas kb reindex {base} takes it out)"));
        let real = std::fs::canonicalize(path).map_err(|e| gone(e.to_string()))?;
        let roots = self.bases()?.remove(base).unwrap_or_default();
        if real != Path::new(path) || self.is_kept_out(&real) || !roots.iter().any(|r| real.starts_with(r)) {
            return Err(KbError::Refused(format!(
                "{path} is no longer the file that was indexed (it leads to {}): not read.",
                real.display()
            )));
        }
        let text = std::fs::read_to_string(&real).map_err(|e| gone(e.to_string()))?;
        let from = from.unwrap_or(1).max(1);
        let lines: Vec<&str> = text.lines().collect();
        let to = to.unwrap_or(lines.len()).min(lines.len()).min(from + 1999);
        if from > lines.len() {
            return Err(KbError::Refused(format!("{path} has {} lines.", lines.len())));
        }
        Ok(lines[from - 1..to].join("\n"))
    }
}

/// A base's name: letters, digits, `-` and `_`.
fn base_name(name: &str) -> Result<String, KbError> {
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '-' || c == '_') {
        return Err(KbError::Refused(format!("{name:?} is not a base name: use letters, digits, - and _.")));
    }
    Ok(name.to_owned())
}
