//! Indexing a base: its folders walked (ignore files obeyed, hidden files left out), each text file
//! read once and skipped when its content hash is what was indexed; a changed one cut into pieces
//! by tokens (`lembas_chunking`: 480, overlap 64) and its pieces embedded — in batches across
//! files, each text once. A piece the model refuses is cut in two (again if need be), so nothing
//! is dropped; a model that is down leaves the pieces found by words only, to be embedded by the
//! next reindex.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use sha2::{Digest, Sha256};

use crate::embed::{BATCH, EmbedError, Embedder};
use crate::index::{self, Piece};
use crate::{IndexReport, KbError};

/// Tokens in a piece, and repeated from the one before (`filesystem.md` *Indexing, by tokens*).
pub const PIECE_TOKENS: usize = 480;
pub const OVERLAP_TOKENS: usize = 64;
/// A file larger than this is not indexed (and said).
pub const MAX_FILE_BYTES: u64 = 4 << 20;
/// A piece is not cut smaller than this many characters for a model that refuses it.
const MIN_SPLIT_CHARS: usize = 16;

/// A file read and cut, waiting for its pieces' vectors.
struct Pending {
    path: String,
    hash: String,
    pieces: Vec<Piece>,
}

pub(crate) struct Indexer<'a> {
    pub db: &'a mut Connection,
    pub base: &'a str,
    pub embedder: Option<&'a Embedder>,
    pub report: IndexReport,
    pending: Vec<Pending>,
    /// Why embedding stopped (the model is down): the rest is indexed by words only.
    down: Option<String>,
    /// The embedder's own tokenizer, where its server has one: what pieces are counted by.
    counting: Option<crate::tokens::ModelTokens>,
}

/// Why a place is not indexed: what the person's credentials and lembas' own files are.
pub const KEPT_OUT: &str = "credentials or lembas' own files: never indexed";

impl<'a> Indexer<'a> {
    pub fn new(db: &'a mut Connection, base: &'a str, embedder: Option<&'a Embedder>) -> Indexer<'a> {
        Indexer { db, base, embedder, report: IndexReport::default(), pending: Vec::new(), down: None, counting: None }
    }

    /// Indexes every file under `roots`, and takes out what is no longer there.
    pub async fn run(
        mut self,
        roots: &[PathBuf],
        kept_out: std::sync::Arc<Vec<PathBuf>>,
    ) -> Result<IndexReport, KbError> {
        if let Some(embedder) = self.embedder {
            self.counting = embedder.tokenizer().await;
            self.report.counted_by_model = self.counting.is_some();
        }
        let mut seen = std::collections::HashSet::new();
        // What the walk left out for being, or holding, credentials or lembas' own files.
        let left_out: std::sync::Arc<std::sync::Mutex<Vec<String>>> = std::sync::Arc::default();
        for root in roots {
            let (kept, left) = (kept_out.clone(), left_out.clone());
            let walk = ignore::WalkBuilder::new(root)
                .hidden(true)
                .follow_links(false)
                .require_git(false)
                .filter_entry(move |entry| {
                    let out = kept.iter().any(|place| entry.path().starts_with(place));
                    if out && let Ok(mut left) = left.lock() {
                        left.push(entry.path().display().to_string());
                    }
                    !out
                })
                .build();
            if kept_out.iter().any(|place| root.starts_with(place)) {
                left_out.lock().expect("left out").push(root.display().to_string());
                continue;
            }
            for entry in walk.flatten() {
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    continue;
                }
                let path = entry.path().display().to_string();
                seen.insert(path.clone());
                self.file(entry.path(), path).await?;
            }
        }
        self.flush().await?;
        for path in std::mem::take(&mut *left_out.lock().expect("left out")) {
            self.report.skipped.push((path, KEPT_OUT.to_owned()));
        }
        for gone in index::files_of(self.db, self.base)? {
            if !seen.contains(&gone) {
                index::drop_file(self.db, self.base, Some(&gone))?;
                self.report.removed += 1;
            }
        }
        let model = self.embedder.map(|e| e.model.as_str());
        let (files, pieces, embedded) = index::counts(self.db, self.base, model)?;
        (self.report.files, self.report.pieces, self.report.embedded) = (files, pieces, embedded);
        self.report.embedder_down = self.down;
        Ok(self.report)
    }

    /// One file: skipped when unchanged (and embedded), else read, cut and queued.
    async fn file(&mut self, path: &Path, key: String) -> Result<(), KbError> {
        let bytes = match std::fs::metadata(path) {
            Ok(meta) if meta.len() > MAX_FILE_BYTES => {
                self.report.skipped.push((key, format!("larger than {} MiB", MAX_FILE_BYTES >> 20)));
                return Ok(());
            }
            Ok(_) => std::fs::read(path),
            Err(e) => Err(e),
        };
        let bytes = match bytes {
            Ok(bytes) => bytes,
            // Gone between the walk and the read, or unreadable: said, and its old pieces go.
            Err(e) => {
                index::drop_file(self.db, self.base, Some(&key))?;
                self.report.skipped.push((key, e.to_string()));
                return Ok(());
            }
        };
        let Some(text) = as_text(&bytes) else {
            self.report.skipped.push((key, "not text".into()));
            return Ok(());
        };
        let hash = hex::encode(Sha256::digest(&bytes));
        if index::file_hash(self.db, self.base, &key)?.as_deref() == Some(hash.as_str()) && !self.wants_vectors(&key)? {
            self.report.unchanged += 1;
            return Ok(());
        }
        self.report.indexed += 1;
        let pieces = match &self.counting {
            Some(counting) => cut_counted(text, counting).await,
            None => cut(text),
        };
        self.pending.push(Pending { path: key, hash, pieces });
        if self.pending.iter().map(|p| p.pieces.len()).sum::<usize>() >= BATCH {
            self.flush().await?;
        }
        Ok(())
    }

    /// Whether an unchanged file still has pieces without vectors (the model was down before).
    fn wants_vectors(&self, path: &str) -> Result<bool, KbError> {
        let (Some(embedder), None) = (self.embedder, &self.down) else { return Ok(false) };
        let mut statement = self.db.prepare(
            "SELECT 1 FROM pieces p WHERE p.base = ?1 AND p.path = ?2
             AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.hash = p.hash AND v.model = ?3) LIMIT 1",
        )?;
        Ok(statement.exists(rusqlite::params![self.base, path, embedder.model])?)
    }

    /// Embeds what the queued files' pieces need — in batches across the files — and keeps the
    /// files.
    async fn flush(&mut self) -> Result<(), KbError> {
        let mut pending = std::mem::take(&mut self.pending);
        if let Some(embedder) = self.embedder.filter(|_| self.down.is_none()) {
            let all: Vec<Owned> = pending
                .iter_mut()
                .enumerate()
                .flat_map(|(i, f)| std::mem::take(&mut f.pieces).into_iter().map(move |p| (i, p)))
                .collect();
            for (i, piece) in self.embed_pieces(embedder, all).await? {
                pending[i].pieces.push(piece);
            }
            for file in &mut pending {
                file.pieces.sort_by_key(|p| (p.line_from, p.line_to));
            }
        }
        for file in pending {
            index::put_file(self.db, self.base, &file.path, &file.hash, &file.pieces)?;
        }
        Ok(())
    }

    /// Vectors for `pieces` that have none, in batches; a refused piece cut in two until the
    /// model takes it. The pieces as they are to be kept, each with its file.
    async fn embed_pieces(&mut self, embedder: &Embedder, pieces: Vec<Owned>) -> Result<Vec<Owned>, KbError> {
        let mut kept = Vec::with_capacity(pieces.len());
        let mut todo: VecDeque<Owned> = pieces.into();
        while !todo.is_empty() {
            let mut batch = Vec::new();
            while let Some(owned) = todo.pop_front() {
                // Known by its text's hash (the same text anywhere is embedded once). A twin in
                // this batch goes along: if the model refuses the one, the other is cut too.
                if index::has_vector(self.db, &owned.1.hash, &embedder.model)? {
                    kept.push(owned);
                } else {
                    batch.push(owned);
                    if batch.len() == BATCH {
                        break;
                    }
                }
            }
            if batch.is_empty() {
                break;
            }
            let texts: Vec<String> = batch.iter().map(|(_, p)| p.text.clone()).collect();
            self.report.embed_calls += 1;
            match embedder.embed(&texts).await {
                Ok(vectors) => {
                    let keyed: Vec<(String, Vec<f32>)> =
                        batch.iter().map(|(_, p)| p.hash.clone()).zip(vectors).collect();
                    index::put_vectors(self.db, &embedder.model, &keyed)?;
                    kept.extend(batch);
                }
                Err(EmbedError::Refused(_)) if batch.len() > 1 => {
                    // Which one: the first alone, the rest batched again.
                    for owned in batch.into_iter().rev() {
                        todo.push_front(owned);
                    }
                    let single = todo.pop_front().expect("a piece");
                    self.one(embedder, single, &mut todo, &mut kept).await?;
                }
                Err(EmbedError::Refused(why)) => {
                    let owned = batch.pop().expect("a piece");
                    self.refused(owned, &why, &mut todo, &mut kept);
                }
                Err(down @ EmbedError::Down { .. }) => {
                    self.down = Some(down.to_string());
                    kept.extend(batch);
                    kept.extend(todo.drain(..));
                }
            }
        }
        Ok(kept)
    }

    /// One piece alone: kept with its vector, cut in two when refused, or left for later.
    async fn one(
        &mut self,
        embedder: &Embedder,
        owned: Owned,
        todo: &mut VecDeque<Owned>,
        kept: &mut Vec<Owned>,
    ) -> Result<(), KbError> {
        self.report.embed_calls += 1;
        match embedder.embed(std::slice::from_ref(&owned.1.text)).await {
            Ok(mut vectors) => {
                index::put_vectors(self.db, &embedder.model, &[(owned.1.hash.clone(), vectors.remove(0))])?;
                kept.push(owned);
            }
            Err(EmbedError::Refused(why)) => self.refused(owned, &why, todo, kept),
            Err(down) => {
                self.down = Some(down.to_string());
                kept.push(owned);
            }
        }
        Ok(())
    }

    /// A piece the model would not take: its two halves go back to be embedded; one too small to
    /// cut is kept for words alone (and said).
    fn refused(&mut self, (file, piece): Owned, why: &str, todo: &mut VecDeque<Owned>, kept: &mut Vec<Owned>) {
        match halves(&piece) {
            Some((first, second)) => {
                self.report.split += 1;
                todo.push_front((file, second));
                todo.push_front((file, first));
            }
            None => {
                self.report.skipped.push((piece.text.chars().take(40).collect(), format!("not embedded: {why}")));
                kept.push((file, piece));
            }
        }
    }
}

/// A piece with the queued file it belongs to.
type Owned = (usize, Piece);

/// The file's text, when it is text: UTF-8 with no NUL byte.
fn as_text(bytes: &[u8]) -> Option<&str> {
    if bytes.iter().take(8192).any(|b| *b == 0) {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

fn piece(text: &str, line_from: usize) -> Piece {
    Piece {
        line_from,
        line_to: line_from + text.matches('\n').count(),
        hash: hex::encode(Sha256::digest(text.as_bytes())),
        text: text.to_owned(),
    }
}

/// A text cut into pieces by tokens (the byte estimate: `filesystem.md`'s stand-in where the
/// model does not say how it counts), each with the lines it spans.
pub fn cut(text: &str) -> Vec<Piece> {
    cut_by(&text.replace("\r\n", "\n"), &lembas_chunking::ByteEstimate, PIECE_TOKENS)
}

/// A text cut by the embedder's own count of its tokens (the byte estimate where the server did
/// not answer), pieces at most as long as the model takes.
async fn cut_counted(text: &str, counting: &crate::tokens::ModelTokens) -> Vec<Piece> {
    let normal = text.replace("\r\n", "\n");
    // The chunker counts the text trimmed: its tokens are laid on the same characters.
    match counting.count(normal.trim()).await {
        Some(counted) => cut_by(&normal, &counted, counting.size),
        None => cut_by(&normal, &lembas_chunking::ByteEstimate, PIECE_TOKENS),
    }
}

/// `normal` (line breaks already `\n`) cut by `tokenizer` into pieces of at most `size` tokens.
fn cut_by(normal: &str, tokenizer: &impl lembas_chunking::Tokenizer, size: usize) -> Vec<Piece> {
    let mut cursor = 0;
    lembas_chunking::chunk(normal, size, OVERLAP_TOKENS, tokenizer)
        .into_iter()
        .map(|text| {
            let at = normal[cursor..].find(&text).map(|i| i + cursor).or_else(|| normal.find(&text)).unwrap_or(cursor);
            cursor = at + text.chars().next().map_or(1, char::len_utf8);
            piece(&text, normal[..at].matches('\n').count() + 1)
        })
        .collect()
}

/// A piece cut in two near its middle: at a line break, else a space, else a character.
fn halves(whole: &Piece) -> Option<(Piece, Piece)> {
    let text = &whole.text;
    if text.chars().count() < 2 * MIN_SPLIT_CHARS {
        return None;
    }
    let middle = text.char_indices().nth(text.chars().count() / 2).map_or(0, |(i, _)| i);
    let near = |c: char| {
        let before = text[..middle].rfind(c);
        let after = text[middle..].find(c).map(|i| i + middle);
        match (before, after) {
            (Some(b), Some(a)) => Some(if middle - b <= a - middle { b } else { a }),
            (b, a) => b.or(a),
        }
    };
    let at = near('\n').or_else(|| near(' ')).filter(|&at| at > 0 && at < text.len()).unwrap_or(middle);
    let (first, second) = text.split_at(at);
    let (first, second) = (first.trim_end(), second.trim_start());
    if first.is_empty() || second.is_empty() {
        return None;
    }
    let second_from = whole.line_from + text[..at].matches('\n').count() + usize::from(text[at..].starts_with('\n'));
    Some((piece(first, whole.line_from), piece(second, second_from)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_say_the_lines_they_span() {
        let text: String =
            (1..=400).map(|i| format!("Line {i} of the manual says something worth finding.\n")).collect();
        let pieces = cut(&text);
        assert!(pieces.len() > 5, "{}", pieces.len());
        assert_eq!(pieces[0].line_from, 1);
        for piece in &pieces {
            // An overlap may begin inside a line (tokens, not lines, are counted): the piece's
            // first line is the end of the line it names.
            let first_line = piece.text.lines().next().unwrap();
            let line = format!("Line {} of the manual says something worth finding.", piece.line_from);
            assert!(line.ends_with(first_line), "{first_line:?} in {line:?}");
            assert_eq!(piece.line_to - piece.line_from + 1, piece.text.lines().count());
        }
        assert_eq!(pieces.last().unwrap().line_to, 400);
    }

    #[test]
    fn a_refused_piece_is_cut_in_two_at_a_line_break_and_keeps_its_lines() {
        let whole = piece("alpha one\nalpha two\nbeta three\nbeta four", 10);
        let (first, second) = halves(&whole).unwrap();
        assert_eq!((first.text.as_str(), first.line_from, first.line_to), ("alpha one\nalpha two", 10, 11));
        assert_eq!((second.text.as_str(), second.line_from, second.line_to), ("beta three\nbeta four", 12, 13));
        assert!(halves(&piece("short", 1)).is_none());
        assert_eq!(as_text(b"a\0b"), None);
        assert_eq!(as_text(b"plain"), Some("plain"));
    }
}
