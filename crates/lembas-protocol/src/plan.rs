//! The plan (`plan_write`, `plan_update`, `plan_submit`): one structure per session — title,
//! summary, findings, objectives, phases of tasks with a status each — with ids given by lembas,
//! never by the model. The former `todo` is converted to one phase called "Work".

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A task's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Todo,
    Doing,
    Done,
    Dropped,
}

impl Status {
    fn parse(word: &str) -> Option<Status> {
        match word {
            "todo" | "pending" => Some(Status::Todo),
            "doing" | "in_progress" => Some(Status::Doing),
            "done" | "completed" => Some(Status::Done),
            "dropped" | "cancelled" => Some(Status::Dropped),
            _ => None,
        }
    }

    fn mark(self) -> &'static str {
        match self {
            Status::Todo => "[ ]",
            Status::Doing => "[~]",
            Status::Done => "[x]",
            Status::Dropped => "[-]",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    pub id: String,
    pub text: String,
    pub status: Status,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanPhase {
    pub id: String,
    pub title: String,
    pub tasks: Vec<Task>,
}

/// The session's plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub title: String,
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub findings: Vec<String>,
    #[serde(default)]
    pub objectives: Vec<String>,
    pub phases: Vec<PlanPhase>,
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

impl Plan {
    /// A plan from `plan_write`'s arguments (or the former `todo`'s `todos`).
    pub fn from_args(args: &Value) -> Result<Plan, String> {
        if let Some(todos) = args.get("todos").and_then(Value::as_array) {
            let tasks = todos
                .iter()
                .map(|t| {
                    let text = t.get("content").or_else(|| t.get("text")).and_then(Value::as_str).unwrap_or_default();
                    let status = t.get("status").and_then(Value::as_str).unwrap_or("pending");
                    serde_json::json!({ "text": text, "status": status })
                })
                .collect();
            let converted =
                serde_json::json!({ "title": "Work", "phases": [{ "title": "Work", "tasks": Value::Array(tasks) }] });
            return Plan::from_args(&converted);
        }
        let title =
            args.get("title").and_then(Value::as_str).filter(|t| !t.trim().is_empty()).ok_or("`title` is required.")?;
        let phases = args
            .get("phases")
            .and_then(Value::as_array)
            .filter(|p| !p.is_empty())
            .ok_or("`phases` must list at least one phase.")?;
        let mut plan = Plan {
            title: title.to_owned(),
            summary: args.get("summary").and_then(Value::as_str).unwrap_or_default().to_owned(),
            findings: strings(args.get("findings")),
            objectives: strings(args.get("objectives")),
            phases: Vec::new(),
        };
        for (p, phase) in phases.iter().enumerate() {
            let phase_id = (p + 1).to_string();
            let mut tasks = Vec::new();
            for (t, task) in phase.get("tasks").and_then(Value::as_array).into_iter().flatten().enumerate() {
                let text = task
                    .get("text")
                    .and_then(Value::as_str)
                    .ok_or_else(|| format!("Task {} of phase {phase_id} has no `text`.", t + 1))?;
                let word = task.get("status").and_then(Value::as_str).unwrap_or("todo");
                let status = Status::parse(word)
                    .ok_or_else(|| format!("{word:?} is not a status: use todo, doing, done or dropped."))?;
                tasks.push(Task { id: format!("{phase_id}.{}", t + 1), text: text.to_owned(), status });
            }
            let title = phase.get("title").and_then(Value::as_str).unwrap_or("Phase").to_owned();
            plan.phases.push(PlanPhase { id: phase_id, title, tasks });
        }
        Ok(plan)
    }

    /// `plan_update`: statuses by task id, and findings to add.
    pub fn update(&mut self, args: &Value) -> Result<(), String> {
        let mut changes = Vec::new();
        for change in args.get("tasks").and_then(Value::as_array).into_iter().flatten() {
            let id = change.get("id").and_then(Value::as_str).ok_or("Each task change needs an `id`.")?;
            let word = change.get("status").and_then(Value::as_str).ok_or("Each task change needs a `status`.")?;
            let status = Status::parse(word)
                .ok_or_else(|| format!("{word:?} is not a status: use todo, doing, done or dropped."))?;
            if !self.phases.iter().any(|p| p.tasks.iter().any(|t| t.id == id)) {
                let ids: Vec<&str> = self.phases.iter().flat_map(|p| p.tasks.iter().map(|t| t.id.as_str())).collect();
                return Err(format!(
                    "No task {id} in the plan; its tasks are {}. Nothing was changed.",
                    ids.join(", ")
                ));
            }
            changes.push((id.to_owned(), status));
        }
        for (id, status) in changes {
            for task in self.phases.iter_mut().flat_map(|p| p.tasks.iter_mut()).filter(|t| t.id == id) {
                task.status = status;
            }
        }
        self.findings.extend(strings(args.get("findings")));
        Ok(())
    }

    /// The plan as the model and a terminal read it, with its ids.
    pub fn render(&self) -> String {
        let mut out = format!("Plan: {}", self.title);
        if !self.summary.trim().is_empty() {
            out.push_str(&format!("\n{}", self.summary.trim()));
        }
        for (heading, items) in [("Objectives", &self.objectives), ("Findings", &self.findings)] {
            if !items.is_empty() {
                out.push_str(&format!("\n\n{heading}:"));
                items.iter().for_each(|i| out.push_str(&format!("\n- {i}")));
            }
        }
        for phase in &self.phases {
            out.push_str(&format!("\n\n{}. {}", phase.id, phase.title));
            for task in &phase.tasks {
                out.push_str(&format!("\n   {} {} {}", task.status.mark(), task.id, task.text));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_are_given_by_lembas_and_statuses_update() {
        let mut plan = Plan::from_args(&json!({"title": "Fix", "phases": [
            {"title": "Look", "tasks": [{"text": "read parser", "status": "done"}, {"text": "find bug"}]},
            {"title": "Mend", "tasks": [{"text": "patch", "id": "ignored"}]}
        ]}))
        .unwrap();
        assert_eq!(plan.phases[1].tasks[0].id, "2.1");
        plan.update(&json!({"tasks": [{"id": "1.2", "status": "doing"}], "findings": ["off by one"]})).unwrap();
        assert_eq!(
            plan.render(),
            "Plan: Fix\n\nFindings:\n- off by one\n\n1. Look\n   [x] 1.1 read parser\n   [~] 1.2 find bug\n\n2. Mend\n   [ ] 2.1 patch"
        );
        assert!(plan.update(&json!({"tasks": [{"id": "9.9", "status": "done"}]})).unwrap_err().contains("No task 9.9"));
    }

    #[test]
    fn todo_becomes_one_phase_called_work() {
        let plan = Plan::from_args(&json!({"todos": [
            {"content": "a", "status": "pending"}, {"content": "b", "status": "in_progress"},
            {"content": "c", "status": "completed"}, {"content": "d", "status": "cancelled"}
        ]}))
        .unwrap();
        assert_eq!(plan.phases.len(), 1);
        assert_eq!(plan.phases[0].title, "Work");
        let statuses: Vec<Status> = plan.phases[0].tasks.iter().map(|t| t.status).collect();
        assert_eq!(statuses, [Status::Todo, Status::Doing, Status::Done, Status::Dropped]);
    }
}
