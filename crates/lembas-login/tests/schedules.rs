//! `/schedule`'s questions to a LLeMbas server's `/api/v2/schedules`, with the device's token.

use lembas_login::{login_token, schedules};
use lembas_protocol::Mode;
use lembas_protocol::schedules::{ScheduleAsk, ScheduleSaid};
use lembas_testkit::{FakeServer, Llembas};

#[tokio::test]
async fn a_schedule_is_made_here_listed_paused_resumed_run_and_deleted() {
    let server = FakeServer::start(vec![]).await;
    server.set_llembas(Llembas::default());
    let login = login_token(&server.url(), "lmb_test_token").await.unwrap();

    let create = |words: &str| ScheduleAsk::Create { words: words.into(), cwd: "/w/app".into(), mode: Mode::Auto };
    let said = schedules(&login, create("every day at 09:00 check the build")).await;
    let ScheduleSaid::Created { schedule, compiled, .. } = said else { panic!("{said:?}") };
    assert_eq!(schedule.title, "check the build");
    assert_eq!(compiled.description.as_deref(), Some("Every day at 09:00"));
    let kept = server.schedules();
    assert_eq!(kept[0]["runs_on"]["cwd"], "/w/app");
    assert_eq!(kept[0]["runs_on"]["mode"], "auto");
    assert_eq!(kept[0]["instruction"], "check the build");
    let made = server.recorded().into_iter().find(|r| r.method == "POST" && r.path == "/api/v2/schedules").unwrap();
    assert_eq!(made.authorization.as_deref(), Some("Bearer lmb_test_token"));

    let said = schedules(&login, create("now and then, maybe")).await;
    assert_eq!(said, ScheduleSaid::NotUnderstood { reason: "I could not tell when it should run.".into() });

    let ScheduleSaid::Listed(listed) = schedules(&login, ScheduleAsk::List).await else { panic!() };
    assert_eq!(listed.len(), 1);
    let id = listed[0].id.clone();
    assert!(listed[0].enabled);

    let said = schedules(&login, ScheduleAsk::Pause { id: id.clone() }).await;
    assert_eq!(said, ScheduleSaid::Done { what: "Paused", title: "check the build".into() });
    assert_eq!(server.schedules()[0]["enabled"], false);
    schedules(&login, ScheduleAsk::Resume { id: id.clone() }).await;
    assert_eq!(server.schedules()[0]["enabled"], true);

    let said = schedules(&login, ScheduleAsk::Run { id: id.clone() }).await;
    assert_eq!(said, ScheduleSaid::Done { what: "Started", title: "check the build".into() });
    let ScheduleSaid::Runs { runs, .. } = schedules(&login, ScheduleAsk::Runs { id: id.clone() }).await else {
        panic!()
    };
    assert_eq!((runs.len(), runs[0].status.as_str()), (1, "ok"));
    assert_eq!(runs[0].model_name(), Some("fake-model"));

    schedules(&login, ScheduleAsk::Delete { id: id.clone() }).await;
    assert!(server.schedules().is_empty());
    let ScheduleSaid::Failed { reason } = schedules(&login, ScheduleAsk::Pause { id }).await else { panic!() };
    assert!(reason.contains("no such schedule"), "{reason}");
}

#[tokio::test]
async fn an_older_server_or_a_plain_login_is_said_plainly() {
    let server = FakeServer::start(vec![]).await;
    server.set_llembas(Llembas::default());
    let login = login_token(&server.url(), "lmb_test_token").await.unwrap();
    server.schedules_older(true);
    let ScheduleSaid::Failed { reason } = schedules(&login, ScheduleAsk::List).await else { panic!() };
    assert!(reason.contains("older than LLeMbas 3.5"), "{reason}");

    let plain = lembas_config::Login { kind: lembas_config::LoginKind::OpenAi, ..login };
    let ScheduleSaid::Failed { reason } = schedules(&plain, ScheduleAsk::List).await else { panic!() };
    assert!(reason.contains("log in to one"), "{reason}");
}
