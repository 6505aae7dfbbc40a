//! Skills through the real binary: a trusted project's `.agent/skills/` and the person's own are
//! in the prompt's index; an untrusted project's are not read.

mod common;

use common::{Env, stderr};
use lembas_testkit::{FakeServer, Scripted};

fn skill(dir: &std::path::Path, name: &str, description: &str) {
    std::fs::create_dir_all(dir.join(name)).unwrap();
    std::fs::write(
        dir.join(name).join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\nSteps.\n"),
    )
    .unwrap();
}

#[tokio::test]
async fn a_trusted_projects_skills_and_the_persons_own_are_offered() {
    let server = FakeServer::start(vec![Scripted::text("One."), Scripted::text("Two.")]).await;
    let env = Env::new();
    env.login(&server).await;
    skill(&env.project.join(".agent/skills"), "deploy", "Use when deploying this project.");
    // The person's own place is under the data folder of LEMBAS_HOME.
    let own = env.home.join("data/skills");
    skill(&own, "review", "Use when reviewing a change.");

    let out = env.run(&["run", "hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.run(&["trust"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = env.run(&["run", "hi again"]).await;
    assert!(out.status.success(), "{}", stderr(&out));

    let requests = server.chat_requests();
    let untrusted = requests[0]["messages"][0]["content"].as_str().unwrap();
    assert!(untrusted.contains("- review: Use when reviewing a change."), "{untrusted}");
    assert!(!untrusted.contains("deploy"), "an untrusted project's skills are not read");
    let trusted = requests[1]["messages"][0]["content"].as_str().unwrap();
    assert!(trusted.contains("- deploy: Use when deploying this project.\n- review:"), "{trusted}");
}
