//! `@path` mentions as a client completes them (`acp.md` `_lembas/files/search`): the files under
//! the session's working folder whose paths hold what was typed, walked afresh each time off the
//! session's task, so a file made a moment ago is found and a turn is never held up.

use std::path::PathBuf;
use std::sync::Arc;

use lembas_protocol::{Event, SubmissionId};

use crate::sink::EventSink;

/// The most paths one answer carries.
const MOST: usize = 200;

/// Answers `asked` on `events` with the files under `root` (leaving out `private` folders) that
/// match `query`, at most `limit`.
pub(crate) async fn answer(
    root: PathBuf,
    private: Arc<[PathBuf]>,
    query: String,
    limit: usize,
    events: EventSink,
    asked: SubmissionId,
) {
    let limit = limit.clamp(1, MOST);
    let walked = {
        let root = root.clone();
        tokio::task::spawn_blocking(move || lembas_tools::find_files(&root, &private, &query, limit)).await
    };
    let event = match walked {
        Ok(files) => Event::FilesFound { root: root.display().to_string(), files },
        Err(e) => Event::Error { message: format!("the files could not be listed: {e}") },
    };
    let _ = events.answer(&asked, event);
}
