//! Skills (`filesystem.md`, *Skills*): a skill is a folder with a `SKILL.md` whose frontmatter
//! gives its `name` and `description`. They are found in places searched in order — the project's
//! `.agent/skills/` (a trusted project), the person's own skills folder, the folders the
//! configuration adds — and a name found in an earlier place hides the same name later.
//! `skills_list`, `skill_view` and `skill_manage` work over them; `skill_manage` makes new ones in
//! the person's own place and checks the frontmatter, the name and the size.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::ToolOutput;

/// The most a `SKILL.md` written by `skill_manage` may hold.
pub const MAX_SKILL_BYTES: usize = 64 * 1024;

/// Where a session looks for skills, the most specific first, and where new ones go.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillPlaces {
    pub search: Vec<PathBuf>,
    /// The person's own place (`skill_manage` makes skills here).
    pub own: Option<PathBuf>,
}

/// A skill found in one of the places.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// Its folder.
    pub dir: PathBuf,
}

/// Whether `name` may be given to a new skill: lowercase letters, digits and `-`, starting with
/// a letter or a digit, at most 64 characters.
pub fn valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 64
        && bytes[0].is_ascii_alphanumeric()
        && !bytes[0].is_ascii_uppercase()
        && bytes.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
}

/// A name as it is looked up: without case, `_` and spaces read as `-`.
fn key(name: &str) -> String {
    name.trim().to_lowercase().replace(['_', ' '], "-")
}

/// The frontmatter's `name` and `description`, and the body after it.
pub fn parse(text: &str) -> Result<(String, String, String), &'static str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text.strip_prefix("---").ok_or("SKILL.md must start with a frontmatter block (---)")?;
    let rest = rest.trim_start_matches([' ', '\t']).strip_prefix('\n').ok_or("the frontmatter's first line is ---")?;
    let end = rest.find("\n---").ok_or("the frontmatter is not closed with ---")?;
    let (front, body) = (&rest[..end], &rest[end + 4..]);
    let body = body.split_once('\n').map_or("", |(_, b)| b);
    let field = |key: &str| {
        front.lines().find_map(|line| {
            let (k, v) = line.split_once(':')?;
            (k.trim() == key).then(|| v.trim().trim_matches(['"', '\'']).to_owned())
        })
    };
    let name = field("name").filter(|n| !n.is_empty()).ok_or("the frontmatter has no name")?;
    let description = field("description").filter(|d| !d.is_empty()).ok_or("the frontmatter has no description")?;
    if name.chars().count() > 64 {
        return Err("the name is longer than 64 characters");
    }
    Ok((name, description, body.to_owned()))
}

/// Every skill in the places, the first of each name only, in the order found (each place's
/// folders by name).
pub fn discover(places: &SkillPlaces) -> Vec<Skill> {
    let mut found: Vec<Skill> = Vec::new();
    for place in &places.search {
        let Ok(entries) = std::fs::read_dir(place) else { continue };
        let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
        dirs.sort();
        for dir in dirs {
            let Ok(text) = std::fs::read_to_string(dir.join("SKILL.md")) else { continue };
            let Ok((name, description, _)) = parse(&text) else { continue };
            if !found.iter().any(|s| key(&s.name) == key(&name)) {
                found.push(Skill { name, description: description.replace('\n', " "), dir });
            }
        }
    }
    found
}

/// The skills index the system prompt carries: a line each.
pub fn index(skills: &[Skill]) -> String {
    skills.iter().map(|s| format!("- {}: {}", s.name, s.description)).collect::<Vec<_>>().join("\n")
}

fn find<'a>(skills: &'a [Skill], name: &str) -> Option<&'a Skill> {
    skills.iter().find(|s| key(&s.name) == key(name))
}

fn unknown(skills: &[Skill], name: &str) -> ToolOutput {
    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    ToolOutput::Error(if names.is_empty() {
        format!("There is no skill {name}: no skills are installed.")
    } else {
        format!("There is no skill {name}. The skills: {}.", names.join(", "))
    })
}

/// The note after a change that wrote a skill's `SKILL.md` with a file tool rather than
/// `skill_manage` (`context.md` §5): whether it still reads as a skill, since nothing else checks.
pub fn written_note(places: &SkillPlaces, path: &Path) -> Option<String> {
    if path.file_name()? != "SKILL.md" {
        return None;
    }
    let dir = path.parent()?;
    let place = dir.parent()?;
    let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    if !places.search.iter().any(|p| real(p) == real(place)) {
        return None;
    }
    let folder = dir.file_name()?.to_string_lossy().into_owned();
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => return Some(format!("(The skill file of {folder} cannot be read back: {e}.)")),
    };
    Some(match parse(&text) {
        Ok((name, _, _)) if !valid_name(&key(&name)) => format!(
            "(The skill file of {folder} names it {name:?}, which is not a skill name: lowercase letters, digits and -, at most 64.)"
        ),
        Ok((name, _, _)) => format!("(The skill {name} reads well: skill_view loads it.)"),
        Err(e) => format!("(The skill file of {folder} is no longer a skill — {e}; skill_manage writes a valid one.)"),
    })
}

/// `skills_list`: the skills there are, one line each.
pub fn skills_list(places: &SkillPlaces, _args: &Value) -> ToolOutput {
    let skills = discover(places);
    if skills.is_empty() {
        return ToolOutput::Text("No skills are installed.".into());
    }
    ToolOutput::Text(index(&skills))
}

/// `skill_view`: a skill's `SKILL.md`, or another file of its folder.
pub fn skill_view(places: &SkillPlaces, args: &Value) -> ToolOutput {
    let skills = discover(places);
    let text = |k: &str| args.get(k).and_then(Value::as_str).map(str::trim).unwrap_or_default();
    let Some(skill) = find(&skills, text("name")) else { return unknown(&skills, text("name")) };
    view(skill, text("file"))
}

/// `skill_manage`: creates, changes or deletes one of the person's own skills.
pub fn skill_manage(places: &SkillPlaces, args: &Value) -> ToolOutput {
    manage(places, &discover(places), args)
}

/// A skill's `SKILL.md`, or another file of its folder, with the folder's other files named.
fn view(skill: &Skill, file: &str) -> ToolOutput {
    let wanted = if file.is_empty() { "SKILL.md" } else { file };
    let path = skill.dir.join(wanted);
    // Only files inside the skill's own folder.
    let inside = std::fs::canonicalize(&path).ok().zip(std::fs::canonicalize(&skill.dir).ok());
    if !inside.is_some_and(|(p, d)| p.starts_with(d)) {
        return ToolOutput::Error(format!("The skill {} has no file {wanted}.", skill.name));
    }
    match std::fs::read_to_string(&path) {
        Ok(body) => {
            let mut others: Vec<String> = walk(&skill.dir)
                .into_iter()
                .filter_map(|p| p.strip_prefix(&skill.dir).ok().map(|r| r.to_string_lossy().into_owned()))
                .filter(|r| r != wanted)
                .collect();
            others.sort();
            let mut out = format!("[skill {} · {wanted}]\n{}", skill.name, body.trim_end());
            if !others.is_empty() {
                out.push_str(&format!("\n\n(Its other files, for skill_view's file: {}.)", others.join(", ")));
            }
            ToolOutput::Text(out)
        }
        Err(e) => ToolOutput::Error(format!("{wanted} of the skill {} cannot be read: {e}", skill.name)),
    }
}

/// The files below a folder (a skill's few), at most 200.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if out.len() < 200 {
                out.push(path);
            }
        }
    }
    out
}

/// `skill_manage`: `create` a skill in the person's own place, `update` one's description or
/// instructions, `delete` one of the person's own.
fn manage(places: &SkillPlaces, skills: &[Skill], args: &Value) -> ToolOutput {
    let text = |k: &str| args.get(k).and_then(Value::as_str).map(str::trim).unwrap_or_default();
    let name = text("name");
    let Some(own) = &places.own else {
        return ToolOutput::Error("This session has no skills folder of the person's to write to.".into());
    };
    match text("action") {
        "create" => {
            if !valid_name(name) {
                return ToolOutput::Error(format!(
                    "{name:?} cannot name a skill: lowercase letters, digits and -, starting with a letter or digit, at most 64."
                ));
            }
            if let Some(existing) = find(skills, name) {
                return ToolOutput::Error(format!(
                    "A skill {} exists already ({}): update it, or choose another name.",
                    existing.name,
                    existing.dir.display()
                ));
            }
            write_skill(&own.join(name), name, text("description"), text("instructions"), "Created")
        }
        "update" => {
            let Some(skill) = find(skills, name) else { return unknown(skills, name) };
            let current = std::fs::read_to_string(skill.dir.join("SKILL.md")).unwrap_or_default();
            let (_, description, body) = parse(&current).unwrap_or_default();
            let description = match text("description") {
                "" => description,
                d => d.to_owned(),
            };
            let body = match text("instructions") {
                "" => body,
                b => b.to_owned(),
            };
            write_skill(&skill.dir, &skill.name, &description, &body, "Updated")
        }
        "delete" => {
            let Some(skill) = find(skills, name) else { return unknown(skills, name) };
            if !skill.dir.starts_with(own) {
                return ToolOutput::Error(format!(
                    "The skill {} is not the person's own ({}): only those are deleted here.",
                    skill.name,
                    skill.dir.display()
                ));
            }
            match std::fs::remove_dir_all(&skill.dir) {
                Ok(()) => ToolOutput::Text(format!("Deleted the skill {}.", skill.name)),
                Err(e) => ToolOutput::Error(format!("The skill {} could not be deleted: {e}", skill.name)),
            }
        }
        other => ToolOutput::Error(format!("`action` is create, update or delete, not {other:?}.")),
    }
}

fn write_skill(dir: &Path, name: &str, description: &str, instructions: &str, done: &str) -> ToolOutput {
    if description.is_empty() || description.contains('\n') {
        return ToolOutput::Error("`description` is required: one line saying when to use the skill.".into());
    }
    if instructions.trim().is_empty() {
        return ToolOutput::Error("`instructions` is required: what to do when the skill is used.".into());
    }
    let text = format!("---\nname: {name}\ndescription: {description}\n---\n{}\n", instructions.trim_end());
    if text.len() > MAX_SKILL_BYTES {
        return ToolOutput::Error(format!(
            "That SKILL.md would be {} bytes; a skill holds at most {MAX_SKILL_BYTES}. Move detail into files beside it.",
            text.len()
        ));
    }
    let written = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(dir.join("SKILL.md"), &text));
    match written {
        Ok(()) => ToolOutput::Text(format!("{done} the skill {name} ({}).", dir.join("SKILL.md").display())),
        Err(e) => ToolOutput::Error(format!("The skill {name} could not be written: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn skill(place: &Path, dir: &str, name: &str, description: &str) {
        std::fs::create_dir_all(place.join(dir)).unwrap();
        std::fs::write(
            place.join(dir).join("SKILL.md"),
            format!("---\nname: {name}\ndescription: {description}\n---\nDo it well.\n"),
        )
        .unwrap();
    }

    #[test]
    fn names_follow_the_agent_skills_rule() {
        assert!(valid_name("release-notes") && valid_name("2fa") && valid_name(&"a".repeat(64)));
        assert!(!valid_name("-x") && !valid_name("Release") && !valid_name("a_b") && !valid_name(&"a".repeat(65)));
        assert!(!valid_name(""));
    }

    #[test]
    fn an_earlier_place_hides_a_later_skill_of_the_same_name() {
        let dir = tempfile::tempdir().unwrap();
        let (project, own) = (dir.path().join("project"), dir.path().join("own"));
        skill(&project, "release", "release", "Use when cutting a release of this project.");
        skill(&own, "release", "Release", "Use when releasing anything.");
        skill(&own, "notes", "notes", "Use when writing notes.");
        std::fs::create_dir_all(own.join("broken")).unwrap();
        std::fs::write(own.join("broken/SKILL.md"), "no frontmatter").unwrap();
        let places = SkillPlaces { search: vec![project.clone(), own.clone()], own: Some(own) };
        let found = discover(&places);
        let names: Vec<&str> = found.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["release", "notes"]);
        assert!(found[0].dir.starts_with(&project));
        let ToolOutput::Text(viewed) = skill_view(&places, &json!({"name": "RELEASE"})) else { panic!() };
        assert!(viewed.starts_with("[skill release · SKILL.md]\n---\nname: release"), "{viewed}");
        let outside = skill_view(&places, &json!({"name": "notes", "file": "../release/SKILL.md"}));
        assert!(outside.is_error());
    }

    #[test]
    fn skill_manage_creates_updates_and_deletes_the_persons_own() {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join("own");
        let places = SkillPlaces { search: vec![own.clone()], own: Some(own.clone()) };
        let bad = skill_manage(&places, &json!({"action": "create", "name": "Bad Name"}));
        assert!(bad.is_error());
        let made = skill_manage(
            &places,
            &json!({"action": "create", "name": "deploy", "description": "Use when deploying.", "instructions": "Run make deploy."}),
        );
        assert!(!made.is_error(), "{made:?}");
        let again = skill_manage(
            &places,
            &json!({"action": "create", "name": "deploy", "description": "x", "instructions": "y"}),
        );
        assert!(again.is_error());
        skill_manage(&places, &json!({"action": "update", "name": "deploy", "instructions": "Run make ship."}));
        let text = std::fs::read_to_string(own.join("deploy/SKILL.md")).unwrap();
        assert_eq!(text, "---\nname: deploy\ndescription: Use when deploying.\n---\nRun make ship.\n");
        let huge = "x".repeat(MAX_SKILL_BYTES);
        assert!(skill_manage(&places, &json!({"action": "update", "name": "deploy", "instructions": huge})).is_error());
        skill_manage(&places, &json!({"action": "delete", "name": "deploy"}));
        assert!(!own.join("deploy").exists());
    }
}
