//! The notes as a front end is told of them: which there are (`NoteInfo`), one's text, the
//! passages a search found (`NoteHit`) — what `/notes` asks with [`NotesAsk`] and is answered
//! with [`NotesSaid`].

/// Whose a note is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// This project's.
    Project,
    /// The person's, in every project.
    Personal,
}

impl Scope {
    pub fn parse(word: &str) -> Result<Scope, String> {
        match word {
            "project" => Ok(Scope::Project),
            "personal" => Ok(Scope::Personal),
            other => Err(format!("scope {other:?} is not project or personal")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::Personal => "personal",
        }
    }
}

/// One note, as a list shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NoteInfo {
    pub name: String,
    pub scope: Scope,
    pub title: String,
    pub bytes: u64,
    /// When it last changed, in milliseconds since 1970.
    pub changed_ms: u64,
}

/// A passage of a note that a search found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NoteHit {
    pub name: String,
    pub scope: Scope,
    /// Its lines, from 1.
    pub from: usize,
    pub to: usize,
    pub text: String,
}

/// What a front end asks of the notes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "ask", rename_all = "snake_case")]
pub enum NotesAsk {
    List,
    Show {
        name: String,
    },
    Search {
        words: String,
    },
    /// The project's task list (`.lembas/tasks.md`): read, or changed by the person.
    Tasks {
        tasks: TasksAsk,
    },
    /// The project's decision log: the list, or one decision by id.
    Decisions {
        id: Option<String>,
    },
    /// The person's knowledge bases: the list, or a search of them.
    Knowledge {
        search: Option<String>,
    },
    /// The person's memory on their LLeMbas server: shown, or one entry changed.
    Memory {
        change: Option<MemoryChange>,
    },
}

/// What the person changes in their memory (`/memory`), by an entry's number as it was shown.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "do", rename_all = "snake_case")]
pub enum MemoryChange {
    Add { text: String },
    Change { entry: usize, text: String },
    Forget { entry: usize },
}

/// What the person asks of the project's tasks.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "do", rename_all = "snake_case")]
pub enum TasksAsk {
    /// Open and doing; with `all`, every one.
    List {
        all: bool,
    },
    Show {
        id: String,
    },
    Add {
        title: String,
    },
    /// A task's state set (`doing`, `done`, `dropped`, `open`).
    Set {
        id: String,
        state: String,
    },
}

/// The notes' answer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "said", rename_all = "snake_case")]
pub enum NotesSaid {
    Listed {
        notes: Vec<NoteInfo>,
    },
    Shown {
        note: NoteInfo,
        text: String,
    },
    Found {
        query: String,
        hits: Vec<NoteHit>,
    },
    /// The project's tasks or decisions, as the files' own lines say them.
    Text {
        text: String,
    },
    /// A note that is not there, or notes that cannot be kept here: why, in a sentence.
    Failed {
        reason: String,
    },
}
