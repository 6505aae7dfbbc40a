//! What a session asks, put to the editor as `session/request_permission`: an approval with
//! its options, a plan approved into a mode or sent back, a question with options as one option
//! per answer. The answer goes back through the host.

use agent_client_protocol::v1::schema::{
    ContentBlock, PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, TextContent, ToolCallContent, ToolCallUpdate, ToolCallUpdateFields,
};
use lembas_client::SessionHandle;
use lembas_protocol::{Answer, Approval, ApprovalRequest, Ask, Command, Mode, PlanVerdict, card};

use crate::Slot;
use crate::peer::Peer;
use crate::scheduled::Admitted;

/// How long what a session asks waits for the client, and for which scheduled run it asks.
#[derive(Debug, Clone, Default)]
pub(crate) struct Waits {
    /// On the link: how long the server has to answer an approval (`remote.approval_timeout`).
    pub timeout: Option<std::time::Duration>,
    /// A scheduled run's: its approvals wait its own wait, and nobody answers its questions.
    pub scheduled: Option<Admitted>,
    /// A terminal's shared session: the person may answer there too (`patient`).
    pub patient: bool,
    /// The plan as the session last said it, the structure beside a plan's text on
    /// `_lembas/plan` (capability `plan_state`).
    pub plan: Option<lembas_protocol::Plan>,
}

impl Waits {
    fn limit(&self) -> Option<std::time::Duration> {
        match &self.scheduled {
            Some(run) => Some(std::time::Duration::from_secs(run.wait_s)),
            None => self.timeout,
        }
    }

    /// What the model reads when nobody answered in time.
    fn unanswered(&self, waited: std::time::Duration) -> String {
        match &self.scheduled {
            Some(run) => run.unanswered(),
            None => {
                format!("Nobody answered this approval within {} seconds, so it counts as denied.", waited.as_secs())
            }
        }
    }
}

/// An approval put to the editor as `session/request_permission`. On the link an answer that does
/// not come within the wait is a denial, and the client is told the card is settled; asked on a
/// link that dropped, it is asked again on the next one within the same wait.
async fn request_permission(peer: &Peer, session_id: &str, request: ApprovalRequest, waits: &Waits) -> Approval {
    let call_id = request.call_id.clone();
    let title = match &request.agent {
        // Asked under the subagent's task call: the title says whose call it is.
        Some(agent) => format!("{agent}: {} {}", request.tool, request.title),
        None => format!("{} {}", request.tool, request.title),
    };
    // The spec's card (`lembas_protocol::card`): an editor picks by kind, a LLeMbas client by id.
    let mut options = vec![PermissionOption::new(card::ONCE, "Allow once", PermissionOptionKind::AllowOnce)];
    if !request.once_only {
        options.push(PermissionOption::new(card::SESSION, "Allow for this session", PermissionOptionKind::AllowAlways));
    }
    options.push(PermissionOption::new(card::DENY, "Deny", PermissionOptionKind::RejectOnce));
    let runs_command = request.runs_command;
    let mut asked = RequestPermissionRequest::new(
        session_id.to_owned(),
        ToolCallUpdate::new(request.call_id, ToolCallUpdateFields::new().title(title)),
        options,
    );
    // A team subagent's call nobody in the tree could allow: which one (`acp.md`, capability
    // `tree`); a scheduled run's: which run, and how long it waits. An editor that does not know
    // them reads the title.
    let mut said = serde_json::Map::new();
    // Why it is asked, and what "for this session" would allow from now on.
    said.insert("reason".into(), request.reason.clone().into());
    if let Some(always) = &request.session_allows {
        said.insert("always".into(), always.clone().into());
    }
    if let Some(job) = &request.job {
        said.insert("job".into(), serde_json::json!(job));
    }
    if let Some(subagent) = &request.subagent {
        said.insert("subagent".into(), serde_json::json!(subagent));
    }
    if let Some(run) = &waits.scheduled {
        said.insert("scheduled".into(), run.on_permission());
    }
    if waits.patient {
        said.insert("patient".into(), true.into());
    }
    let mut meta = serde_json::Map::new();
    meta.insert("lembas".into(), said.into());
    asked = asked.meta(meta);
    let answered = match waits.limit() {
        Some(limit) => match tokio::time::timeout(limit, ask_until_answered(peer, asked)).await {
            Ok(answered) => Ok(answered),
            Err(_) => {
                settled_unanswered(peer, session_id, &call_id);
                return Approval::Deny { feedback: Some(waits.unanswered(limit)) };
            }
        },
        None => match peer.now().1 {
            Some(cx) => cx.send_request(asked).block_task().await,
            None => Err(agent_client_protocol::Error::internal_error()),
        },
    };
    match answered {
        Ok(answer) => match answer.outcome {
            // `_meta.lembas` beside the outcome (as the spec places it), or on the selection.
            RequestPermissionOutcome::Selected(selected) => {
                let said = [answer.meta.as_ref(), selected.meta.as_ref()]
                    .into_iter()
                    .flatten()
                    .find_map(|meta| meta.get("lembas"))
                    .cloned();
                card::answer(&selected.option_id.0, said.as_ref(), runs_command)
            }
            _ => Approval::Deny { feedback: None },
        },
        Err(_) => Approval::Deny { feedback: Some("the editor did not answer".into()) },
    }
}

/// `asked` put to the client there is, and again to the next one whenever the link it was put
/// on drops before an answer came; the caller bounds the wait.
async fn ask_until_answered(peer: &Peer, asked: RequestPermissionRequest) -> RequestPermissionResponse {
    let mut generation = peer.now().0;
    loop {
        let (now, cx) = match peer.now() {
            (now, Some(cx)) => (now, cx),
            _ => peer.next_after(generation).await,
        };
        generation = now;
        tokio::select! {
            answered = cx.send_request(asked.clone()).block_task() => match answered {
                Ok(answer) => return answer,
                // The request died with its link: the next link is asked.
                Err(_) => { peer.next_after(generation).await; }
            },
            () = peer.left(generation) => {}
        }
    }
}

/// A choice put to the editor as `session/request_permission` under the call `call_id`: the
/// option the person picked, by id, or `None` (dismissed, cancelled, no answer).
async fn pick(
    peer: &Peer,
    session_id: &str,
    call_id: &str,
    title: String,
    content: Option<String>,
    options: Vec<PermissionOption>,
) -> Option<String> {
    let mut fields = ToolCallUpdateFields::new().title(title);
    if let Some(content) = content {
        fields = fields.content(vec![ToolCallContent::from(ContentBlock::Text(TextContent::new(content)))]);
    }
    let asked =
        RequestPermissionRequest::new(session_id.to_owned(), ToolCallUpdate::new(call_id.to_owned(), fields), options);
    let cx = peer.now().1?;
    match cx.send_request(asked).block_task().await {
        Ok(answer) => match answer.outcome {
            RequestPermissionOutcome::Selected(selected) => Some(selected.option_id.0.to_string()),
            _ => None,
        },
        Err(_) => None,
    }
}

/// The modes a plan may be carried out in, as the editor offers them: approve-and-go options.
const PLAN_MODES: [Mode; 3] = [Mode::Edit, Mode::Auto, Mode::Manual];

/// What the session asks, put to the editor; the answer goes back through the host. A plan is
/// approved into a mode the person picks, or sent back; a question with options offers one
/// option per answer; a question without options cannot be put as a permission request, and
/// the model is told it could not be asked.
pub(crate) async fn ask_client(
    peer: Peer,
    session_id: String,
    handle: SessionHandle,
    id: u64,
    ask: Ask,
    waits: Waits,
    asking: Asking,
) {
    let answer = answer_of(&peer, &session_id, id, ask, &waits).await;
    // No longer being asked, before the answer's own `Answered` comes back.
    asking.lock().expect("asking").remove(&id);
    handle.send(Command::Answer { id, answer });
}

/// What the session's asks wait on the client, by ask id: the asking task and its call.
pub(crate) type Asking =
    std::sync::Arc<std::sync::Mutex<std::collections::HashMap<u64, (tokio::task::AbortHandle, String)>>>;

/// The call id the client knows an ask by (`toolCallId` of its permission request).
pub(crate) fn call_id(id: u64, ask: &Ask) -> String {
    match ask {
        Ask::Approval(request) => request.call_id.clone(),
        Ask::Plan { call_id, .. } => call_id.clone(),
        Ask::Show(showing) => showing.call_id.clone(),
        Ask::Question(_) => format!("question_{id}"),
    }
}

/// The client's answer to what the session asks.
async fn answer_of(peer: &Peer, session_id: &str, id: u64, ask: Ask, waits: &Waits) -> Answer {
    match ask {
        Ask::Approval(request) => Answer::Approval(request_permission(peer, session_id, request, waits).await),
        // A scheduled run has nobody to answer a question or approve a plan: the session hears
        // so, as it does with nobody there.
        Ask::Question(_) if waits.scheduled.is_some() => Answer::Unasked,
        Ask::Plan { .. } if waits.scheduled.is_some() => Answer::Plan(PlanVerdict::Declined {
            feedback: Some(
                "Nobody is at this scheduled run to approve a plan: stop here and say that the plan waits.".into(),
            ),
        }),
        Ask::Plan { call_id, plan } => Answer::Plan(plan_verdict(peer, session_id, &call_id, &plan, waits).await),
        Ask::Show(showing) => show(peer, session_id, showing).await,
        Ask::Question(question) => reply(peer, session_id, id, &question, waits).await,
    }
}

/// What came of asking a client itself (`_lembas/question`, `_lembas/plan`).
enum Itself {
    Answered(serde_json::Value),
    /// Nobody answered within the wait (or nobody is there to ask).
    Unanswered,
    /// The client does not know the method: it is asked the older way.
    NotSpoken,
}

/// Puts `method` to a client of protocol 2 or later, within the wait; a client that answers
/// method-not-found is read as protocol 1 from then on.
async fn ask_itself(peer: &Peer, method: &str, params: serde_json::Value, waits: &Waits) -> Itself {
    let Some(cx) = peer.now().1 else { return Itself::Unanswered };
    let Ok(request) = agent_client_protocol::UntypedMessage::new(method, params) else { return Itself::NotSpoken };
    let sent = cx.send_request(request).block_task();
    let answered = match waits.limit() {
        Some(limit) => match tokio::time::timeout(limit, sent).await {
            Ok(answered) => answered,
            Err(_) => return Itself::Unanswered,
        },
        None => sent.await,
    };
    match answered {
        Ok(answer) => Itself::Answered(serde_json::to_value(answer).unwrap_or_default()),
        Err(e) if e.code == agent_client_protocol::ErrorCode::METHOD_NOT_FOUND => {
            peer.asks_itself_not();
            Itself::NotSpoken
        }
        Err(_) => Itself::Unanswered,
    }
}

/// Tells a client of lembas' protocol that a card nobody answered in time is settled.
fn settled_unanswered(peer: &Peer, session_id: &str, call_id: &str) {
    let params =
        serde_json::json!({ "sessionId": session_id, "toolCallId": call_id, "outcome": "denied", "reason": "timeout" });
    if let (Some(cx), Ok(settled)) =
        (peer.now().1, agent_client_protocol::UntypedMessage::new("_lembas/permission/settled", params))
    {
        let _ = cx.send_notification(settled);
    }
}

/// `pick` within the wait: `None` also when nobody answered in time (the card is then settled).
async fn pick_within(
    peer: &Peer,
    session_id: &str,
    call_id: &str,
    card: (String, Option<String>, Vec<PermissionOption>),
    waits: &Waits,
) -> Option<String> {
    let (title, content, options) = card;
    let picking = pick(peer, session_id, call_id, title, content, options);
    match waits.limit() {
        Some(limit) => match tokio::time::timeout(limit, picking).await {
            Ok(picked) => picked,
            Err(_) => {
                settled_unanswered(peer, session_id, call_id);
                None
            }
        },
        None => picking.await,
    }
}

/// A plan put to the client: `_lembas/plan` to a client of protocol 2 or later, else a
/// permission card with one approve-and-go option per mode. Nobody answering within the wait
/// keeps the agent planning, told why.
async fn plan_verdict(peer: &Peer, session_id: &str, call_id: &str, plan: &str, waits: &Waits) -> PlanVerdict {
    let unanswered = || PlanVerdict::Declined {
        feedback: Some(format!(
            "Nobody answered the plan within {} seconds: stop here and say that the plan waits for the person.",
            waits.limit().map_or(0, |l| l.as_secs())
        )),
    };
    if peer.asks_itself() {
        let params = card::plan_params(session_id, call_id, plan, waits.plan.as_ref(), &PLAN_MODES, waits.patient);
        match ask_itself(peer, card::PLAN, params, waits).await {
            Itself::Answered(answer) => return card::plan_answer(&answer),
            Itself::Unanswered => {
                settled_unanswered(peer, session_id, call_id);
                return unanswered();
            }
            Itself::NotSpoken => {}
        }
    }
    let mut options: Vec<PermissionOption> = PLAN_MODES
        .iter()
        .map(|m| {
            let kind =
                if *m == Mode::Auto { PermissionOptionKind::AllowAlways } else { PermissionOptionKind::AllowOnce };
            PermissionOption::new(format!("approve_{m}"), format!("Approve the plan, then {m} mode"), kind)
        })
        .collect();
    options.push(PermissionOption::new("keep_planning", "Keep planning", PermissionOptionKind::RejectOnce));
    // The rendered plan's first line names it ("Plan: …").
    let title = plan.lines().next().unwrap_or("Plan").to_owned();
    let Some(picked) = pick_within(peer, session_id, call_id, (title, Some(plan.to_owned()), options), waits).await
    else {
        return if waits.limit().is_some() { unanswered() } else { PlanVerdict::Declined { feedback: None } };
    };
    match picked.strip_prefix("approve_").and_then(Mode::parse) {
        Some(mode) => PlanVerdict::Approved { mode: Some(mode) },
        None => PlanVerdict::Declined { feedback: None },
    }
}

/// A question put to the client: `_lembas/question` to a client of protocol 2 or later (with
/// options or without: the person may answer in their own words), else a permission card with
/// one option per answer — a question without options cannot be put so, and is not asked.
async fn reply(peer: &Peer, session_id: &str, id: u64, question: &lembas_protocol::Question, waits: &Waits) -> Answer {
    let call_id = format!("question_{id}");
    if peer.asks_itself() {
        let params = card::question_params(session_id, &call_id, question, waits.patient);
        match ask_itself(peer, card::QUESTION, params, waits).await {
            Itself::Answered(answer) => return Answer::Reply { words: card::question_answer(&answer) },
            Itself::Unanswered => {
                settled_unanswered(peer, session_id, &call_id);
                return Answer::Reply { words: None };
            }
            Itself::NotSpoken => {}
        }
    }
    if question.options.is_empty() {
        return Answer::Unasked;
    }
    let mut options: Vec<PermissionOption> = question
        .options
        .iter()
        .enumerate()
        .map(|(i, o)| PermissionOption::new(format!("option_{i}"), o.clone(), PermissionOptionKind::AllowOnce))
        .collect();
    options.push(PermissionOption::new("no_answer", "Don't answer", PermissionOptionKind::RejectOnce));
    let card = (question.question.clone(), None, options);
    let picked = pick_within(peer, session_id, &call_id, card, waits).await;
    let words = picked
        .as_deref()
        .and_then(|p| p.strip_prefix("option_"))
        .and_then(|i| i.parse::<usize>().ok())
        .and_then(|i| question.options.get(i).cloned());
    Answer::Reply { words }
}

/// How long the viewer has to say whether it showed a file.
const SHOWING: std::time::Duration = std::time::Duration::from_secs(30);

/// A file put in the client's viewer (`_lembas/show`); its answer says whether it was shown.
async fn show(peer: &Peer, session_id: &str, showing: lembas_protocol::Showing) -> Answer {
    let not_shown = |reason: &str| Answer::Shown { shown: false, reason: Some(reason.to_owned()) };
    let Some(cx) = peer.now().1 else { return not_shown("nobody is connected to show it to") };
    let mut params = serde_json::json!({
        "sessionId": session_id,
        "toolCallId": showing.call_id,
        "path": showing.path,
        "kind": showing.kind,
        "text": showing.text,
    });
    if let Some(language) = &showing.language {
        params["language"] = language.clone().into();
    }
    if let Some(line) = showing.line {
        params["line"] = line.into();
    }
    let Ok(request) = agent_client_protocol::UntypedMessage::new("_lembas/show", params) else {
        return not_shown("it could not be sent");
    };
    match tokio::time::timeout(SHOWING, cx.send_request(request).block_task()).await {
        Ok(Ok(answer)) => {
            let answer: serde_json::Value = serde_json::to_value(answer).unwrap_or_default();
            let shown = answer["shown"].as_bool().unwrap_or(false);
            let reason = answer["reason"].as_str().map(str::to_owned);
            Answer::Shown { shown, reason: reason.or_else(|| (!shown).then(|| "the viewer did not show it".into())) }
        }
        Ok(Err(e)) => not_shown(&format!("the viewer refused it ({})", e.message)),
        Err(_) => not_shown("the viewer did not answer"),
    }
}

impl Slot {
    /// Puts what the session asks to the client, remembering the asking so it can be taken back.
    pub(crate) fn ask(
        &self,
        peer: &Peer,
        session: &str,
        id: u64,
        ask: &lembas_protocol::Ask,
        timeout: Option<std::time::Duration>,
    ) {
        let waits = Waits {
            timeout: if self.patient { None } else { timeout },
            scheduled: self.scheduled.lock().expect("scheduled").clone(),
            patient: self.patient,
            plan: self.plan.lock().expect("plan").clone(),
        };
        let call = call_id(id, ask);
        let asking = tokio::spawn(ask_client(
            peer.clone(),
            session.to_owned(),
            self.handle.clone(),
            id,
            ask.clone(),
            waits,
            self.asking.clone(),
        ));
        self.asking.lock().expect("asking").insert(id, (asking.abort_handle(), call));
    }

    /// Ask `id` was answered or given up: if the client still has it, it is taken back and the
    /// client told the card is settled (a lembas client; an editor's card is answered in vain).
    pub(crate) fn taken_back(&self, peer: &Peer, session: &str, id: u64) {
        let Some((asking, call)) = self.asking.lock().expect("asking").remove(&id) else { return };
        asking.abort();
        let params = serde_json::json!({ "sessionId": session, "toolCallId": call, "outcome": "answered", "reason": "elsewhere" });
        if let (Some(cx), Ok(settled)) =
            (peer.now().1, agent_client_protocol::UntypedMessage::new("_lembas/permission/settled", params))
        {
            let _ = cx.send_notification(settled);
        }
    }
}
