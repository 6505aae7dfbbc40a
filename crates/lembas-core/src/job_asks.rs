//! The session's background jobs as its front ends see and steer them (`acp.md`, capability
//! `jobs`): the list, a job's output from any offset, the person's stop and message, a subagent
//! job's transcript — answered at once, during a turn too — and the `job` event each time a
//! job starts, has news (at most four a second per job) or ends.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use lembas_protocol::jobs::{JobAsk, JobChange, JobInfo, JobSaid, JobStatus};
use lembas_protocol::{Event, SubmissionId};
use lembas_tools::Jobs;
use tokio_util::sync::CancellationToken;

use crate::session::subagent::{ParkedAgents, wake};
use crate::sink::EventSink;
use lembas_tools::ToolOutput;

/// How often a job's news is said at most (`acp.md`: four times a second per job).
const NEWS_EVERY: Duration = Duration::from_millis(250);

/// Answers `ask` for the submission `asked` on `events`: a [`JobSaid`], or an error in words.
pub(crate) async fn answer(jobs: Jobs, parked: ParkedAgents, events: EventSink, asked: SubmissionId, ask: JobAsk) {
    let said = match ask {
        JobAsk::List => Ok(JobSaid::Listed { jobs: jobs.infos() }),
        JobAsk::Output { id, offset, limit } => jobs.read_for_person(&id, offset, limit).map(JobSaid::Output),
        JobAsk::Stop { id } => jobs.stop_for_person(&id).await.map(|job| JobSaid::Stopped { job }),
        JobAsk::Send { id, text } => send(&jobs, &parked, &id, &text).await,
        JobAsk::Transcript { id } => jobs.agent_session(&id).map(|(job, session)| JobSaid::Transcript { job, session }),
    };
    let event = match said {
        Ok(said) => Event::JobSaid { said },
        Err(message) => Event::Error { message },
    };
    let _ = events.answer(&asked, event);
}

/// The person's words to job `id`: a line to a command's input, a message to a subagent — one
/// whose report is in is woken with it, as the model's `job_send` would.
async fn send(jobs: &Jobs, parked: &ParkedAgents, id: &str, text: &str) -> Result<JobSaid, String> {
    let info = jobs.info(id).ok_or_else(|| format!("No job {id} in this session."))?;
    let message = match info.kind {
        lembas_protocol::jobs::JobKind::Subagent => format!("[The person, to you:]\n{text}"),
        lembas_protocol::jobs::JobKind::Command => text.to_owned(),
    };
    let words = match wake(parked, jobs, id, &message) {
        Some(ToolOutput::Text(words) | ToolOutput::Error(words)) => Ok(words),
        _ => jobs.send(id, &message).await,
    }?;
    let job = jobs.info(id).unwrap_or(info);
    Ok(JobSaid::Sent { job, words })
}

/// Says a `job` event each time one of `jobs` starts, has news or ends, until `closed`; news of
/// one job at most every [`NEWS_EVERY`]. Quiet while no job runs.
pub(crate) async fn watch(jobs: Jobs, events: EventSink, closed: CancellationToken) {
    let mut told: HashMap<String, (JobInfo, Instant)> = HashMap::new();
    let changes = jobs.changes();
    loop {
        // Listening before looking: a change between the two still wakes the wait.
        let changed = changes.notified();
        tokio::pin!(changed);
        changed.as_mut().enable();
        for job in jobs.infos() {
            let Some(change) = change_of(told.get(&job.id), &job) else { continue };
            told.insert(job.id.clone(), (job.clone(), Instant::now()));
            if events.send(Event::Job { state: change, job }).is_err() {
                return;
            }
        }
        // While a job runs its output is looked at a few times a second; otherwise only a
        // change (a job started, ended, was stopped) wakes this.
        let running = jobs.any_running();
        tokio::select! {
            () = closed.cancelled() => return,
            () = &mut changed => {}
            () = tokio::time::sleep(NEWS_EVERY), if running => {}
        }
    }
}

/// What `job` is news of against what was told last (`None`: nothing to tell yet).
fn change_of(last: Option<&(JobInfo, Instant)>, job: &JobInfo) -> Option<JobChange> {
    let Some((was, when)) = last else {
        return Some(if job.state == JobStatus::Running { JobChange::Start } else { JobChange::End });
    };
    if was.state == JobStatus::Running && job.state != JobStatus::Running {
        return Some(JobChange::End);
    }
    if was.state != JobStatus::Running && job.state == JobStatus::Running {
        // Woken by a message: it runs again.
        return Some(JobChange::Start);
    }
    (job.state == JobStatus::Running && was != job && when.elapsed() >= NEWS_EVERY).then_some(JobChange::Update)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lembas_protocol::jobs::JobKind;

    fn job(state: JobStatus, unread: u64) -> JobInfo {
        JobInfo {
            id: "job1".into(),
            kind: JobKind::Command,
            state,
            description: "make".into(),
            command: Some("make".into()),
            agent: None,
            model: None,
            started: 1,
            ended: None,
            exit: None,
            unread,
            steps: None,
            tools: None,
            owner_job_id: None,
        }
    }

    #[test]
    fn a_job_is_told_when_it_starts_has_news_no_faster_than_four_a_second_and_ends() {
        let running = job(JobStatus::Running, 0);
        assert_eq!(change_of(None, &running), Some(JobChange::Start));
        let just_now = (running.clone(), Instant::now());
        assert_eq!(change_of(Some(&just_now), &job(JobStatus::Running, 10)), None, "too soon for news");
        assert_eq!(change_of(Some(&just_now), &running), None, "nothing new");
        let a_while_ago = (running.clone(), Instant::now() - NEWS_EVERY);
        assert_eq!(change_of(Some(&a_while_ago), &job(JobStatus::Running, 10)), Some(JobChange::Update));
        assert_eq!(
            change_of(Some(&just_now), &job(JobStatus::Done, 10)),
            Some(JobChange::End),
            "an end is never held back"
        );
        let ended = (job(JobStatus::Done, 0), Instant::now());
        assert_eq!(change_of(Some(&ended), &job(JobStatus::Done, 0)), None);
        assert_eq!(change_of(Some(&ended), &running), Some(JobChange::Start), "woken again");
    }
}
