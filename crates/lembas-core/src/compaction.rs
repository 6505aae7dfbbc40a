//! Compaction (`context.md` §7): the summary is asked for as the next turn of the same
//! conversation; the history then starts afresh from it, with the table of reads it covers.
//!
//! Where even that request does not fit the window — a small local window that one step's
//! results filled, or a server restarted with a smaller window — the summary is asked for in the
//! template's other form: the instructions (no tools: the summary needs none), then one message
//! holding the earlier summary and as much of the conversation as fits, the newest last (the
//! person's first words kept). It loses the middle of a long
//! conversation, which is why it is only the fallback; a refusal the server would have to give
//! loses all of it.

use lembas_model::{CancellationToken, Message, WireMessage};
use lembas_progress::Phase;
use lembas_spec::render;

use crate::phase::Phases;
use crate::prompt::{compaction_ask, text};
use crate::room::{Ask, Room};
use crate::session::Session;
use crate::session::history::Entry;
use crate::{DoneReason, EngineError, Event, now_ms};

/// The most of a transcript one message may take, as a share of its room: one long result must
/// not crowd out the rest.
const ONE_MESSAGE_SHARE: usize = 3;

impl Session {
    /// Whether the last request filled the window to the compaction share. With the window
    /// unknown it never is: compaction then waits for the server's own refusal for length.
    pub(crate) fn window_is_full(&self) -> bool {
        self.window().is_some_and(|w| self.state.last_input as f64 >= self.cfg.compact_at * w as f64)
    }

    /// Before a step's request: where the window has no room for it, a main session compacts
    /// first; a subagent, which does not compact (`subagents.md` §9), ends its turn with what
    /// it has. Compaction that still leaves no room ends the turn saying so.
    pub(crate) async fn make_room(
        &mut self,
        cancel: &CancellationToken,
        phases: &mut Phases,
    ) -> Result<Option<(DoneReason, String)>, EngineError> {
        if self.window().is_none() {
            return Ok(None);
        }
        match self.next_step_room() {
            Room::Reply(_) => return Ok(None),
            // Reckoned without a count of the server's behind it (a session's first request, the
            // first after a compaction): while a reply fits it is sent, and its answer says how
            // full the window really is — a template that leaves the tool list out reads far
            // fewer tokens than the bytes sent, and a guess must not compact a half-full window.
            Room::Tight(_) if self.state.counted.is_none() => return Ok(None),
            Room::Tight(_) | Room::None { .. } => {}
        }
        if self.role.is_subagent() {
            self.stopped_by = Some("context");
            let text = self.wrap_up("context", cancel, phases).await?;
            return Ok(Some((DoneReason::Limit, text)));
        }
        self.compact_with(cancel, phases).await?;
        match self.next_step_room() {
            Room::None { window, prompt } => Err(EngineError::Window(self.no_room(window, prompt))),
            Room::Reply(_) | Room::Tight(_) => Ok(None),
        }
    }

    /// Compacts now (the person's `/compact`).
    pub async fn compact(&mut self, cancel: &CancellationToken) -> Result<(), EngineError> {
        let mut phases = crate::phase::Phases::new(self.events.clone());
        let result = self.compact_with(cancel, &mut phases).await;
        phases.clear();
        result
    }

    /// Asks for the summary and starts the history afresh from it; the system prompt is made
    /// again, saying what stands now.
    pub(crate) async fn compact_with(
        &mut self,
        cancel: &CancellationToken,
        phases: &mut Phases,
    ) -> Result<(), EngineError> {
        phases.set(Phase::Compacting);
        let mut messages = self.request_messages();
        messages.push(Message::user(compaction_ask()).to_wire(false));
        let prompt = self.request_tokens(crate::counted::Size::of(&messages, &self.tools));
        let mut tools = self.tools.clone();
        if let Room::None { .. } = self.room(prompt, Ask::Summary) {
            // The summary needs no tools: their room goes to the conversation.
            messages = self.transcript_request(1.0);
            tools = std::sync::Arc::new(Vec::new());
        }
        let reply = self.send_summary_ask(messages, tools, cancel, phases).await?;
        let summary = reply.text.trim().to_owned();
        if summary.is_empty() {
            return Err(EngineError::Compaction(
                "the model gave an empty summary; the conversation was kept as it was".into(),
            ));
        }
        let table = self.state.ledger.compact();
        let mut content = render(text("tasks/summary.md"), &[("summary", &summary)]);
        if !table.is_empty() {
            content.push_str("\n\n");
            content.push_str(&table);
        }
        self.history = vec![Entry { summary: true, ..Entry::user(content, true) }];
        self.sent.changed("a compaction");
        let tools_before = self.tools.len();
        let refitted = self.refit_to_a_smaller_window();
        self.remake_prompt(None);
        self.state.last_input = 0;
        self.state.counted = None;
        let stored: Vec<_> = self.history.iter().map(Entry::stored).collect();
        self.cfg.store.replace_history(&self.id, &stored, &self.state_value(), &self.system_prompt, now_ms())?;
        if self.tools.len() != tools_before {
            self.save_prefix()?;
        }
        self.emit(Event::Compacted { summary, table });
        if let Some(message) = refitted {
            self.emit(Event::Notice { message });
        }
        Ok(())
    }

    /// Sends the summary's ask. Refused for its length (text its server counts more densely
    /// than estimated: hashes, minified code, another script), it is asked again in the
    /// transcript form with half the room, then a quarter, the window the refusal states
    /// learnt.
    async fn send_summary_ask(
        &mut self,
        mut messages: Vec<WireMessage>,
        mut tools: std::sync::Arc<Vec<lembas_model::ToolSchema>>,
        cancel: &CancellationToken,
        phases: &mut Phases,
    ) -> Result<lembas_model::Reply, EngineError> {
        let mut shares = [0.5, 0.25].into_iter();
        loop {
            match self.send(messages, tools, Ask::Summary, cancel, phases).await {
                Err(EngineError::Model(lembas_model::ModelError::Rejected { message, .. }))
                    if lembas_model::refused_for_length(&message)
                        && let Some(share) = shares.next() =>
                {
                    if let Some(window) = lembas_model::window_in_refusal(&message) {
                        self.state.learned_window = Some(window);
                    }
                    messages = self.transcript_request(share);
                    tools = std::sync::Arc::new(Vec::new());
                }
                other => return other,
            }
        }
    }

    /// The summary's request in the transcript form: the system prompt, then the ask with the
    /// earlier summary and the conversation cut to what the window holds.
    ///
    /// `share` of the room the window leaves is given to the transcript (less after a refusal).
    fn transcript_request(&self, share: f64) -> Vec<WireMessage> {
        let system = lembas_model::system_wire(&self.system_prompt);
        let window = self.window().unwrap_or(0);
        let fixed = system.get().len() + text("tasks/compact.md").len() + 256;
        let room_tokens = window.saturating_sub(self.tokens_of(fixed)).saturating_sub(Session::summary_room(window));
        // Back from tokens to bytes of text, with room for the escapes its wire form adds.
        let room = (room_tokens as f64 * self.bytes_per_token() * 0.8 * share) as usize;
        let (previous, conversation) = match self.history.split_first() {
            Some((first, rest)) if first.summary => (message_text(&first.message), rest),
            _ => (String::new(), &self.history[..]),
        };
        let previous_room = room / 4;
        let previous = cut_to(&previous, previous_room);
        let transcript = transcript_within(conversation, room.saturating_sub(previous.len()));
        let previous = match previous.is_empty() {
            true => String::new(),
            false => format!("The summary made before these messages:\n\n{previous}"),
        };
        let ask = render(
            text("tasks/compact.md"),
            &[("transcript", &format!("The conversation:\n\n{transcript}")), ("previous_summary", &previous)],
        );
        vec![system, Message::user(ask.trim_end()).to_wire(false)]
    }
}

/// A message as a transcript shows it.
fn message_text(message: &Message) -> String {
    match message {
        Message::System { content } => content.clone(),
        Message::User { content, .. } => format!("[user]\n{content}"),
        Message::Assistant { content, tool_calls, .. } => {
            let mut out = format!("[assistant]\n{content}");
            for call in tool_calls {
                out.push_str(&format!("\n(called {} {})", call.name, call.arguments));
            }
            out
        }
        Message::Tool { content, .. } => format!("[tool result]\n{content}"),
    }
}

/// `text` cut to at most `room` bytes, at a character's boundary, marked where it was cut.
fn cut_to(text: &str, room: usize) -> String {
    if text.len() <= room {
        return text.to_owned();
    }
    const MARK: &str = " […cut]";
    let mut end = room.saturating_sub(MARK.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{MARK}", &text[..end])
}

/// The conversation as text within `room` bytes: the person's first message (up to a quarter
/// of the room), then the newest messages that fit, each at most a third of the room; what was
/// left between them is counted.
fn transcript_within(entries: &[Entry], room: usize) -> String {
    let first = entries.first().filter(|e| matches!(e.message, Message::User { .. }));
    let head = first.map(|e| cut_to(&message_text(&e.message), room / 4)).unwrap_or_default();
    let rest = &entries[usize::from(first.is_some())..];
    let mut left = room.saturating_sub(head.len());
    let mut newest: Vec<String> = Vec::new();
    for entry in rest.iter().rev() {
        let shown = cut_to(&message_text(&entry.message), room / ONE_MESSAGE_SHARE);
        if shown.len() + 2 > left {
            break;
        }
        left -= shown.len() + 2;
        newest.push(shown);
    }
    let skipped = rest.len() - newest.len();
    let mut parts: Vec<String> = Vec::new();
    if !head.is_empty() {
        parts.push(head);
    }
    if skipped > 0 {
        parts.push(format!("[{skipped} messages left out here to fit the window]"));
    }
    parts.extend(newest.into_iter().rev());
    parts.join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> Entry {
        Entry::user(text.to_owned(), true)
    }

    fn result(text: &str) -> Entry {
        Entry::of(Message::Tool { tool_call_id: "c".into(), content: text.to_owned() })
    }

    #[test]
    fn a_transcript_keeps_the_first_words_and_the_newest_and_counts_the_middle() {
        let big = "a".repeat(900);
        let entries =
            vec![user("fix the parser"), result(&big), result(&big), result(&big), result("old"), result("newest")];
        let text = transcript_within(&entries, 120);
        assert!(text.starts_with("[user]\nfix the parser"), "{text}");
        assert!(text.contains("[2 messages left out here to fit the window]"), "{text}");
        assert!(text.contains("a […cut]\n\n[tool result]\nold\n\n[tool result]\nnewest"), "{text}");
        assert!(text.len() <= 120 + 64, "{}", text.len());
    }

    #[test]
    fn a_long_message_is_cut_at_a_character() {
        let cut = cut_to(&"é".repeat(100), 21);
        assert!(cut.ends_with(" […cut]") && cut.len() <= 21, "{cut}");
    }
}
