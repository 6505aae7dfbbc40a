//! `/schedule`: the LLeMbas server's schedules as the terminal shows them — the list, one made
//! from the person's words to run here, paused, resumed, run now, deleted, and a schedule's runs.
//! A schedule is named by its number in the last list (or its id).

use lembas_protocol::Mode;
use lembas_protocol::schedules::{Schedule, ScheduleAsk, ScheduleRun, ScheduleSaid, error_text};

/// What `/schedule [new WORDS | pause N | resume N | run N | runs N | delete N]` asks, given the
/// schedules last listed; an error says how to write it.
pub(crate) fn ask(arg: &str, listed: &[Schedule], cwd: &str, mode: Mode) -> Result<ScheduleAsk, String> {
    let arg = arg.trim();
    let (verb, rest) = arg.split_once(char::is_whitespace).map_or((arg, ""), |(v, r)| (v, r.trim()));
    let id = || named(rest, listed);
    Ok(match verb {
        "" => ScheduleAsk::List,
        "new" | "add" | "create" if rest.is_empty() => {
            return Err("Say when and what: /schedule new every day at 09:00 check the build".into());
        }
        "new" | "add" | "create" => ScheduleAsk::Create { words: rest.to_owned(), cwd: cwd.to_owned(), mode },
        "pause" => ScheduleAsk::Pause { id: id()? },
        "resume" => ScheduleAsk::Resume { id: id()? },
        "run" => ScheduleAsk::Run { id: id()? },
        "runs" => ScheduleAsk::Runs { id: id()? },
        "delete" | "remove" => ScheduleAsk::Delete { id: id()? },
        other => {
            return Err(format!(
                "/schedule does not know {other:?}: /schedule lists; new WORDS makes one; pause, resume, run, runs and delete take its number"
            ));
        }
    })
}

/// The schedule `word` names: a number in the last list, or an id.
fn named(word: &str, listed: &[Schedule]) -> Result<String, String> {
    if word.is_empty() {
        return Err("Which one? Give its number in /schedule's list.".into());
    }
    match word.parse::<usize>() {
        Ok(n) => listed.get(n.wrapping_sub(1)).map(|s| s.id.clone()).ok_or_else(|| match listed.len() {
            0 => "List the schedules first with /schedule, then name one by its number.".to_owned(),
            many => format!("There is no schedule {n}: the list has {many}."),
        }),
        Err(_) => Ok(word.to_owned()),
    }
}

/// The answer, as a notice.
pub(crate) fn said(said: &ScheduleSaid) -> String {
    match said {
        ScheduleSaid::Listed(list) if list.is_empty() => {
            "No schedules yet. /schedule new every day at 09:00 check the build makes one that runs here.".into()
        }
        ScheduleSaid::Listed(list) => {
            let mut lines =
                vec!["Schedules (/schedule new WORDS makes one; pause, resume, run, runs, delete N):".to_owned()];
            lines.extend(list.iter().enumerate().map(|(i, s)| line(i + 1, s)));
            lines.join("\n")
        }
        ScheduleSaid::Created { schedule, compiled, note } => {
            let mut lines = vec![format!("Made: {}", schedule.title)];
            if let Some(description) = &compiled.description {
                lines.push(format!(
                    "  {description}{}",
                    compiled.timezone.as_ref().map(|z| format!(" ({z})")).unwrap_or_default()
                ));
            }
            if !compiled.next_runs.is_empty() {
                let next: Vec<String> = compiled.next_runs.iter().take(3).map(|t| when(t)).collect();
                lines.push(format!("  next: {}", next.join(", ")));
            }
            if let Some(on) = &schedule.runs_on {
                lines.push(format!(
                    "  runs on {} in {} ({} mode)",
                    on.device_name.as_deref().unwrap_or("this computer"),
                    on.cwd.as_deref().unwrap_or("?"),
                    on.mode.as_deref().unwrap_or("edit")
                ));
            }
            // Said apart: what the person may need to do here.
            lines.extend(note.iter().map(|n| format!("\n{n}")));
            lines.join("\n")
        }
        ScheduleSaid::NotUnderstood { reason } => {
            format!("The server could not make a schedule of that: {reason} Say when, e.g. every day at 09:00 …")
        }
        ScheduleSaid::Done { what, title } => format!("{what}: \"{title}\"."),
        ScheduleSaid::Runs { title, runs } if runs.is_empty() => format!("\"{title}\" has not run yet."),
        ScheduleSaid::Runs { title, runs } => {
            let mut lines = vec![format!("Runs of \"{title}\", newest last:")];
            lines.extend(runs.iter().map(run_line));
            lines.join("\n")
        }
        ScheduleSaid::Failed { reason } => reason.clone(),
    }
}

fn line(n: usize, schedule: &Schedule) -> String {
    let state = if schedule.running {
        "running"
    } else if schedule.enabled {
        "on"
    } else {
        "paused"
    };
    let mut parts = vec![format!("{n}. {} [{state}]", schedule.title)];
    if let Some(description) = &schedule.description {
        parts.push(description.clone());
    }
    if let (true, Some(next)) = (schedule.enabled, &schedule.next_run) {
        parts.push(format!("next {}", when(next)));
    }
    if let Some(last) = &schedule.last_run {
        let error = last.error.as_ref().and_then(error_text).map(|e| format!(" ({e})")).unwrap_or_default();
        parts.push(format!("last {}{error}", last.status));
    }
    match (&schedule.runs_on, &schedule.watch) {
        (Some(on), _) => parts.push(format!(
            "on {}{}",
            on.device_name.as_deref().or(on.device.as_deref()).unwrap_or("a computer"),
            on.cwd.as_ref().map(|c| format!(" in {c}")).unwrap_or_default()
        )),
        (None, _) => parts.push("on the server".into()),
    }
    if schedule.watch.as_ref().is_some_and(|w| !w.is_null()) {
        parts.push("watches".into());
    }
    parts.join(" · ")
}

fn run_line(run: &ScheduleRun) -> String {
    let at = run.started_at.as_deref().or(run.due_at.as_deref()).map(when).unwrap_or_default();
    let mut line = format!("- {at} {}", run.status);
    if let Some(model) = run.model_name() {
        line.push_str(&format!(" · {model}"));
    }
    if let Some(error) = run.error.as_ref().and_then(error_text) {
        line.push_str(&format!(" · {error}"));
    } else if let Some(preview) = run.preview.as_deref().filter(|p| !p.is_empty()) {
        let preview: String = preview.lines().next().unwrap_or_default().chars().take(80).collect();
        line.push_str(&format!(" · {preview}"));
    }
    line
}

/// A server time as a person reads it: `2026-12-06T09:00:00Z` → `2026-12-06 09:00 UTC`.
fn when(time: &str) -> String {
    match time.strip_suffix('Z').and_then(|t| t.split_once('T')) {
        Some((day, clock)) => format!("{day} {} UTC", clock.get(..5).unwrap_or(clock)),
        None => time.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed() -> Vec<Schedule> {
        vec![Schedule { id: "sch_1".into(), title: "Build".into(), enabled: true, ..Schedule::default() }]
    }

    #[test]
    fn the_command_line_names_a_schedule_by_its_number_or_id() {
        let ask = |arg: &str| ask(arg, &listed(), "/w", Mode::Edit);
        assert_eq!(ask(""), Ok(ScheduleAsk::List));
        assert_eq!(ask("pause 1"), Ok(ScheduleAsk::Pause { id: "sch_1".into() }));
        assert_eq!(ask("runs sch_9"), Ok(ScheduleAsk::Runs { id: "sch_9".into() }));
        assert_eq!(
            ask("new every hour tidy"),
            Ok(ScheduleAsk::Create { words: "every hour tidy".into(), cwd: "/w".into(), mode: Mode::Edit })
        );
        assert!(ask("run 2").unwrap_err().contains("no schedule 2"));
        assert!(ask("new").unwrap_err().contains("Say when"));
        assert!(ask("frobnicate 1").unwrap_err().contains("does not know"));
        assert!(super::ask("run 1", &[], "/w", Mode::Edit).unwrap_err().contains("List the schedules first"));
    }

    #[test]
    fn the_list_says_state_next_last_and_where_each_runs() {
        let mut schedule = listed().remove(0);
        schedule.next_run = Some("2026-12-06T09:00:00Z".into());
        schedule.description = Some("Every day at 09:00".into());
        schedule.runs_on = Some(lembas_protocol::schedules::RunsOn {
            device_name: Some("laptop".into()),
            cwd: Some("/w/app".into()),
            ..Default::default()
        });
        schedule.last_run = Some(lembas_protocol::schedules::LastRun {
            status: "failed".into(),
            error: Some(serde_json::json!({ "text": "no model" })),
            ..Default::default()
        });
        let shown = said(&ScheduleSaid::Listed(vec![schedule]));
        assert!(
            shown.ends_with(
                "1. Build [on] · Every day at 09:00 · next 2026-12-06 09:00 UTC · last failed (no model) · on laptop in /w/app"
            ),
            "{shown}"
        );
    }
}
