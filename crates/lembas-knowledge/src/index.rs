//! The index, in an SQLite file of its own: each base's files (by content hash, so an unchanged
//! file is not read again), their pieces with the lines they came from, a full-text index of the
//! pieces (FTS5), and the pieces' vectors keyed by the piece's content hash and the model — so
//! the same text is embedded once, whichever file or base holds it. A file that is not a sound
//! SQLite database is set aside and the index made anew (the bases themselves are kept apart, in
//! `bases.json`, so nothing the person added is lost with it).

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use crate::KbError;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS files(
    base TEXT NOT NULL, path TEXT NOT NULL, hash TEXT NOT NULL,
    PRIMARY KEY(base, path));
CREATE TABLE IF NOT EXISTS pieces(
    id INTEGER PRIMARY KEY, base TEXT NOT NULL, path TEXT NOT NULL, ord INTEGER NOT NULL,
    line_from INTEGER NOT NULL, line_to INTEGER NOT NULL, hash TEXT NOT NULL, text TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS pieces_file ON pieces(base, path);
CREATE INDEX IF NOT EXISTS pieces_hash ON pieces(hash);
CREATE VIRTUAL TABLE IF NOT EXISTS pieces_fts USING fts5(text, content='pieces', content_rowid='id');
CREATE TRIGGER IF NOT EXISTS pieces_in AFTER INSERT ON pieces BEGIN
    INSERT INTO pieces_fts(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER IF NOT EXISTS pieces_out AFTER DELETE ON pieces BEGIN
    INSERT INTO pieces_fts(pieces_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TABLE IF NOT EXISTS vectors(
    hash TEXT NOT NULL, model TEXT NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY(hash, model));
";

/// A piece to keep: where it came from and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    pub line_from: usize,
    pub line_to: usize,
    pub hash: String,
    pub text: String,
}

/// Opens the index at `path`, made anew when the file there is damaged; whether it was. With
/// `check`, SQLite's own check of the whole file runs too (it reads every page: the first open
/// of a process does it; a file that is not a database at all fails any open).
pub fn open(path: &Path, check: bool) -> Result<(Connection, bool), KbError> {
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder).map_err(|e| KbError::Io(folder.display().to_string(), e.to_string()))?;
    }
    match try_open(path, check) {
        Ok(db) => Ok((db, false)),
        Err(_) => {
            // Set aside, not deleted: someone may want to look at it.
            let aside = path.with_extension("db.damaged");
            let _ = std::fs::rename(path, &aside);
            for extra in ["db-wal", "db-shm"] {
                let _ = std::fs::remove_file(path.with_extension(extra));
            }
            Ok((try_open(path, false)?, true))
        }
    }
}

fn try_open(path: &Path, check: bool) -> Result<Connection, KbError> {
    let db = Connection::open(path)?;
    db.busy_timeout(std::time::Duration::from_secs(10))?;
    db.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")?;
    if check {
        let sound: String = db.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
        if sound != "ok" {
            return Err(KbError::Damaged(sound));
        }
    }
    db.execute_batch(SCHEMA)?;
    Ok(db)
}

/// The content hash a file was last indexed with.
pub fn file_hash(db: &Connection, base: &str, path: &str) -> Result<Option<String>, KbError> {
    Ok(db
        .query_row("SELECT hash FROM files WHERE base = ?1 AND path = ?2", params![base, path], |r| r.get(0))
        .optional()?)
}

/// The files of a base as indexed.
pub fn files_of(db: &Connection, base: &str) -> Result<Vec<String>, KbError> {
    let mut statement = db.prepare("SELECT path FROM files WHERE base = ?1")?;
    let paths = statement.query_map([base], |r| r.get(0))?.collect::<Result<_, _>>()?;
    Ok(paths)
}

/// A file's pieces, replacing what it had, and its hash — in one transaction, so a killed
/// process leaves the file as it was indexed before or after, never half.
pub fn put_file(db: &mut Connection, base: &str, path: &str, hash: &str, pieces: &[Piece]) -> Result<(), KbError> {
    let tx = db.transaction()?;
    tx.execute("DELETE FROM pieces WHERE base = ?1 AND path = ?2", params![base, path])?;
    {
        let mut insert = tx.prepare(
            "INSERT INTO pieces(base, path, ord, line_from, line_to, hash, text) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for (ord, piece) in pieces.iter().enumerate() {
            insert.execute(params![
                base,
                path,
                ord as i64,
                piece.line_from as i64,
                piece.line_to as i64,
                piece.hash,
                piece.text
            ])?;
        }
    }
    tx.execute(
        "INSERT INTO files(base, path, hash) VALUES (?1, ?2, ?3) ON CONFLICT(base, path) DO UPDATE SET hash = ?3",
        params![base, path, hash],
    )?;
    tx.commit()?;
    Ok(())
}

/// Takes a file (or, with no path, a whole base) out of the index.
pub fn drop_file(db: &Connection, base: &str, path: Option<&str>) -> Result<(), KbError> {
    match path {
        Some(path) => {
            db.execute("DELETE FROM pieces WHERE base = ?1 AND path = ?2", params![base, path])?;
            db.execute("DELETE FROM files WHERE base = ?1 AND path = ?2", params![base, path])?;
        }
        None => {
            db.execute("DELETE FROM pieces WHERE base = ?1", [base])?;
            db.execute("DELETE FROM files WHERE base = ?1", [base])?;
        }
    }
    Ok(())
}

pub fn has_vector(db: &Connection, hash: &str, model: &str) -> Result<bool, KbError> {
    Ok(db
        .query_row("SELECT 1 FROM vectors WHERE hash = ?1 AND model = ?2", params![hash, model], |_| Ok(()))
        .optional()?
        .is_some())
}

pub fn put_vectors(db: &mut Connection, model: &str, vectors: &[(String, Vec<f32>)]) -> Result<(), KbError> {
    let tx = db.transaction()?;
    {
        let mut insert = tx.prepare("INSERT OR REPLACE INTO vectors(hash, model, vector) VALUES (?1, ?2, ?3)")?;
        for (hash, vector) in vectors {
            insert.execute(params![hash, model, crate::embed::to_blob(vector)])?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// How much a base holds: files, pieces, and pieces with a vector from `model`.
pub fn counts(db: &Connection, base: &str, model: Option<&str>) -> Result<(u64, u64, u64), KbError> {
    let files = db.query_row("SELECT COUNT(*) FROM files WHERE base = ?1", [base], |r| r.get::<_, i64>(0))?;
    let pieces = db.query_row("SELECT COUNT(*) FROM pieces WHERE base = ?1", [base], |r| r.get::<_, i64>(0))?;
    let embedded = match model {
        Some(model) => db.query_row(
            "SELECT COUNT(*) FROM pieces p WHERE p.base = ?1 AND EXISTS (SELECT 1 FROM vectors v WHERE v.hash = p.hash AND v.model = ?2)",
            params![base, model],
            |r| r.get::<_, i64>(0),
        )?,
        None => 0,
    };
    Ok((files as u64, pieces as u64, embedded as u64))
}
