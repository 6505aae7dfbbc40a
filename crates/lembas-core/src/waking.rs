//! What wakes a session between the person's turns: background jobs that end (their notes
//! come as a turn of their own, `machine` marked) and, when nobody comes back later, the wait
//! for them to finish before the session closes.

use lembas_model::CancellationToken;
use lembas_spec::{loop_spec, render};

use crate::session::Session;
use crate::{DoneReason, Event};

impl Session {
    /// After a prompt, with nobody to come back later: waits for the jobs still running, then
    /// lets their notes wake the session as a turn of its own — until no job runs. Answers how
    /// the last such turn ended, if there was one.
    /// Jobs still running after `limit` are stopped, and a notice says so.
    pub async fn settle(&mut self, cancel: &CancellationToken, limit: std::time::Duration) -> Option<DoneReason> {
        let mut last = None;
        let deadline = tokio::time::Instant::now() + limit;
        let team = self.leads_team().map(|seat| seat.hub.clone());
        loop {
            // Subagents of the team still at work, with nothing for the main agent yet.
            let team_busy = || team.as_ref().is_some_and(|hub| hub.active() && !hub.has_mail());
            loop {
                let mut notified = std::pin::pin!(team.as_ref().map(|hub| hub.changed.notified()));
                crate::session::team::watch_changes(notified.as_mut());
                if !(self.jobs.any_running() || team_busy()) || cancel.is_cancelled() {
                    break;
                }
                tokio::select! {
                    () = self.jobs.wait_change(std::time::Duration::from_secs(1)) => {}
                    () = crate::session::team::changed(notified.as_mut()) => {}
                    () = cancel.cancelled() => {}
                    () = tokio::time::sleep_until(deadline) => {
                        let running = self.jobs.running_count();
                        self.jobs.stop_all();
                        if let Some(hub) = &team {
                            hub.stop_all();
                        }
                        self.emit(crate::Event::Notice {
                            message: format!(
                                "{running} job{} still running after {} s {} stopped (lembas run --job-wait sets how long to wait).",
                                if running == 1 { "" } else { "s" },
                                limit.as_secs(),
                                if running == 1 { "was" } else { "were" },
                            ),
                        });
                        return last;
                    }
                }
            }
            let Some(note) = self.job_notes() else { return last };
            if cancel.is_cancelled() {
                return last;
            }
            last = Some(self.turn(&note, &[], true, cancel).await.0);
        }
    }

    /// For a front end that stays open between turns: resolves when a background job has ended
    /// and its note waits; never while no job runs. Follow it with [`Session::deliver_job_notes`].
    pub async fn job_ended(&self) {
        let team = self.leads_team().map(|seat| seat.hub.clone());
        let jobs_changed = self.jobs.changes();
        loop {
            let mut notified = std::pin::pin!(team.as_ref().map(|hub| hub.changed.notified()));
            crate::session::team::watch_changes(notified.as_mut());
            // Listening before looking, as for the team: a job that ends (or starts) between the
            // look and the wait still wakes it.
            let job_changed = jobs_changed.notified();
            tokio::pin!(job_changed);
            job_changed.as_mut().enable();
            if team.as_ref().is_some_and(|hub| hub.has_mail()) || self.jobs.has_ended() {
                return;
            }
            tokio::select! {
                () = &mut job_changed => {}
                () = crate::session::team::changed(notified.as_mut()) => {}
            }
        }
    }

    /// Lets the notes of jobs that ended wake the session as a turn of its own; `None` when no
    /// note waits.
    pub async fn deliver_job_notes(&mut self, cancel: &CancellationToken) -> Option<DoneReason> {
        let note = self.job_notes()?;
        Some(self.turn(&note, &[], true, cancel).await.0)
    }

    /// Tells the front ends how many jobs run, when that changed since it was last told.
    pub(crate) fn report_jobs(&self) {
        let now = (self.jobs.running_count(), self.jobs.running_agents());
        let told = std::mem::replace(&mut *self.jobs_told.lock().expect("jobs told"), now);
        if told != now {
            self.emit(Event::Jobs { running: now.0, subagents: now.1 });
        }
    }

    /// The note for jobs that ended since the last one, with its mark (`loop.json` `jobs`).
    pub(crate) fn job_notes(&self) -> Option<String> {
        let mail = self.leads_team().and_then(|seat| seat.hub.take_mail());
        let jobs = self.ended_jobs_note();
        match (jobs, mail) {
            (Some(jobs), Some(mail)) => Some(format!("{jobs}\n\n{mail}")),
            (jobs, mail) => jobs.or(mail),
        }
    }

    /// The note for jobs that ended since the last one.
    fn ended_jobs_note(&self) -> Option<String> {
        let ended = self.jobs.take_ended();
        self.report_jobs();
        if ended.is_empty() {
            return None;
        }
        let marks = &loop_spec().jobs.marks;
        let bodies: Vec<String> = ended
            .iter()
            .map(|job| {
                let after = lembas_tools::elapsed_text(job.after);
                if let Some(report) = &job.report {
                    return render(
                        &marks.report_body,
                        &[("job", &job.id), ("what", &job.command), ("elapsed", &after), ("report", report)],
                    );
                }
                match job.state {
                    lembas_tools::JobState::Exited(code) => render(
                        &marks.finished_body,
                        &[("job", &job.id), ("what", &job.command), ("code", &code.to_string()), ("elapsed", &after)],
                    ),
                    _ => render(&marks.killed_body, &[("job", &job.id), ("what", &job.command), ("elapsed", &after)]),
                }
            })
            .collect();
        // Each job's note as the model reads it, for a front end that marks the job read.
        for (job, body) in ended.iter().zip(&bodies) {
            self.emit(Event::JobNote { job_id: job.id.clone(), text: body.clone() });
        }
        Some(format!("{}\n{}", marks.finished, bodies.join("\n")))
    }
}
