//! A small window: the first request — instructions and tools — takes at most half of the
//! model's window, so a local model with 4k–16k tokens can be used at all and still has room to
//! work. What is offered is decided once, as a main session is made (the prefix then stays as it
//! is for the whole session): the team goes first, then subagents, then the tools a session
//! rarely needs, then all but the core (files, commands, recall). The person is told once what
//! was left out and that a larger window brings it back. Where even the smallest offer does not
//! fit, the session says so, with the window it needs, before anything is sent.

use crate::session::{Session, WindowFit};

/// What the smallest offer keeps: reading, changing and finding files, running commands, and
/// recall of a result the cap cut (4k windows: about 2,000 tokens with the instructions).
const CORE: [&str; 8] = ["read", "edit", "write", "glob", "grep", "list", "bash", "recall"];

/// A tool a session can do without when room is short: it has other ways or is seldom used (its
/// handler says so).
fn rarely_needed(name: &str) -> bool {
    crate::handlers::handler(name).spare
}

impl Session {
    /// The first request's instructions and tools, in tokens for this model.
    fn prefix_tokens(&self) -> u64 {
        let tools = lembas_model::tools_text(&self.tools);
        self.cfg.model.tokens_in(self.system_prompt.len() + tools.len())
    }

    /// Leaves out of a new main session's offer what a small window has no room for (see the
    /// module's note). Returns what it left out, if anything.
    pub(crate) fn fit_the_window(&mut self) -> Option<WindowFit> {
        let window = self.window()?;
        let half = window / 2;
        let mut left_out: Vec<String> = Vec::new();
        let def = |name: &str| lembas_spec::tool(name);
        loop {
            let tokens = self.prefix_tokens();
            if tokens <= half {
                return (!left_out.is_empty()).then_some(WindowFit {
                    window,
                    left_out,
                    first_request: tokens,
                    too_small: false,
                });
            }
            let mut tools = self.tools.as_ref().clone();
            if let crate::session::Role::Main { team: team @ Some(_), .. } = &mut self.role {
                tools.retain(|t| def(&t.name).is_none_or(|d| !d.requires.iter().any(|r| r == "team")));
                *team = None;
                left_out.push("the team".into());
            } else if crate::handlers::offers(&tools, "task") {
                tools.retain(|t| def(&t.name).is_none_or(|d| !d.starts_a_subagent()));
                left_out.push("subagents".into());
            } else if tools.iter().any(|t| rarely_needed(&t.name)) {
                tools.retain(|t| !rarely_needed(&t.name));
                left_out.push("notes, skills, tasks, decisions, session search, multiedit, apply_patch, images, the web and job input".into());
            } else if tools.iter().any(|t| !CORE.contains(&t.name.as_str())) {
                // The last step: the file tools, commands and recall, which any task needs.
                let (core, rest): (Vec<_>, Vec<_>) = tools.into_iter().partition(|t| CORE.contains(&t.name.as_str()));
                tools = core;
                left_out.push(rest.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", "));
            } else {
                return Some(WindowFit { window, left_out, first_request: tokens, too_small: true });
            }
            self.tools = std::sync::Arc::new(tools);
            self.remake_prompt(None);
        }
    }

    /// After a compaction, where the window has turned out smaller than the one the offer was
    /// fitted to (a server started again with a smaller `-c`, learnt from its refusal): the offer
    /// is fitted again to it — the prefix starts afresh at a compaction anyway. A session that
    /// leads a team keeps its offer (its members may be at work). Returns what the person is
    /// told, where something more was left out.
    pub(crate) fn refit_to_a_smaller_window(&mut self) -> Option<String> {
        if self.role.is_subagent() || self.leads_team().is_some() {
            return None;
        }
        let window = self.window()?;
        let fitted_to =
            self.state.offer.as_ref().map(|o| o.window).or(self.cfg.model.context.or(self.cfg.context_window));
        if fitted_to.is_some_and(|w| w <= window) {
            return None;
        }
        let earlier = self.state.offer.take().map(|o| o.left_out).unwrap_or_default();
        let fit = self.fit_the_window();
        let told = fit.as_ref().map(|fit| fit.told(self.cfg.model.display_name()));
        let first_request = self.prefix_tokens();
        let mut fit = fit.unwrap_or(WindowFit { window, left_out: Vec::new(), first_request, too_small: false });
        fit.left_out.splice(0..0, earlier);
        self.state.offer = (!fit.left_out.is_empty() || fit.too_small).then_some(fit);
        told
    }

    /// Whether the session may send its first request: `Err` with what to tell the person when
    /// its window is too small for even the smallest offer.
    pub(crate) fn window_room(&self) -> Result<(), String> {
        match &self.state.offer {
            Some(offer) if offer.too_small => Err(format!(
                "{}'s context window ({} tokens) is too small for lembas: its instructions and tools take about {} tokens, which must be at most half the window — a window of {} tokens or more is needed. Nothing was sent. Start the server with a larger window ({}), or choose another model.",
                self.cfg.model.display_name(),
                offer.window,
                offer.first_request,
                offer.first_request * 2,
                crate::session::larger_window(offer.first_request * 2)
            )),
            _ => Ok(()),
        }
    }
}
