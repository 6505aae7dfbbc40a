//! `lembas login`, `lembas logout`, `lembas models`.

use std::io::{IsTerminal, Read};

use lembas_config::Login;
use lembas_login::{LoginError, done_line, error_line, login_token, login_url};

use crate::cli::{LoginArgs, exit};
use crate::{Failure, setup};

fn read_secret(what: &str) -> Result<String, Failure> {
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|e| Failure::new(exit::LOGIN, format!("cannot read the {what} from stdin: {e}")))?;
    let secret = text.trim().to_owned();
    if secret.is_empty() {
        return Err(Failure::new(exit::LOGIN, format!("no {what} on stdin")));
    }
    Ok(secret)
}

pub async fn login(args: LoginArgs) -> Result<u8, Failure> {
    let home = setup::home()?;
    let previous = Login::load(&home).ok().flatten();
    let result: Result<Login, LoginError> = if args.token_stdin {
        let token = read_secret("token")?;
        login_token(args.server.as_deref().unwrap_or_default(), &token).await
    } else {
        let found;
        let url = match args.url.as_deref().or(args.server.as_deref()) {
            Some(url) => url,
            None => {
                found = local_server().await?;
                &found
            }
        };
        let key =
            if args.key_stdin { Some(read_secret("API key")?) } else { lembas_sys::handed::var("LEMBAS_API_KEY") };
        let json = args.json;
        login_url(url, key, &mut |code| {
            let link = code.verification_uri_complete.as_deref().unwrap_or(&code.verification_uri);
            let text = format!("To sign in, open {link} and enter the code {}. Waiting…", code.user_code);
            if json || !std::io::stderr().is_terminal() {
                eprintln!("{text}");
            } else {
                eprintln!("\n{text}\n");
            }
        })
        .await
    };
    match result {
        Ok(login) => {
            login.save(&home).map_err(|e| Failure::new(exit::LOGIN, e.to_string()))?;
            if args.json {
                out!("{}", done_line(&login, previous.as_ref()));
            } else {
                let model = login.default_model().map(|m| m.id.clone()).unwrap_or_default();
                out!("Logged in to {} ({}; default {model}).", login.server, crate::count(login.models.len(), "model"));
            }
            Ok(exit::OK)
        }
        Err(e) if args.json => {
            out!("{}", error_line(&e));
            Ok(exit::LOGIN)
        }
        Err(e) => Err(Failure::new(exit::LOGIN, e.to_string())),
    }
}

/// `lembas login` with no URL: a model server on this machine, offered to the person (taken at
/// once with nobody at the terminal), or why there is none.
async fn local_server() -> Result<String, Failure> {
    let candidates = lembas_login::local_candidates(std::env::var("LEMBAS_LOCAL_SERVERS").ok().as_deref());
    let found = lembas_login::find_local(&candidates, std::time::Duration::from_millis(700)).await;
    let Some(first) = found.first() else {
        let tried: Vec<String> = candidates.iter().map(|(name, url)| format!("{name} {url}")).collect();
        return Err(Failure::new(
            exit::USAGE,
            format!(
                "no model server found on this machine (looked for {}): start one, or name yours: lembas login URL",
                tried.join(", ")
            ),
        ));
    };
    let models = crate::count(first.models, "model");
    if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        let others: Vec<String> = found[1..].iter().map(|f| format!("{} {}", f.name, f.url)).collect();
        if !others.is_empty() {
            eprintln!("Also running here: {}.", others.join(", "));
        }
        eprint!("Found {} at {} ({models}). Log in to it? [Y/n] ", first.name, first.url);
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer).map_err(|e| Failure::new(exit::USAGE, e.to_string()))?;
        if answer.trim().to_lowercase().starts_with('n') {
            return Err(Failure::new(exit::USAGE, "name the server: lembas login URL"));
        }
    } else {
        eprintln!("lembas: no URL given; found {} at {} ({models}), and logging in to it", first.name, first.url);
    }
    Ok(first.url.clone())
}

pub fn logout() -> Result<u8, Failure> {
    let home = setup::home()?;
    let removed = Login::remove(&home).map_err(|e| Failure::new(exit::FAILED, e.to_string()))?;
    out!("{}", if removed { "Logged out." } else { "Not logged in." });
    Ok(exit::OK)
}

pub async fn models(refresh: bool, json: bool) -> Result<u8, Failure> {
    let home = setup::home()?;
    let mut login = setup::login(&home)?;
    if refresh {
        let key = login.secret.clone().or_else(|| lembas_sys::handed::var("LEMBAS_API_KEY"));
        let catalog = lembas_model::catalog::list_models(&login.base_url, key.as_deref()).await?;
        login.models = catalog.models;
        login.llama_cpp = catalog.llama_cpp;
        login.embedders = catalog.embedders;
        login.save(&home).map_err(|e| Failure::new(exit::FAILED, e.to_string()))?;
    }
    if json {
        // Each model as the login keeps it, with the effort levels it offers worked out.
        let models: Vec<serde_json::Value> = login
            .models
            .iter()
            .map(|m| {
                let mut value = serde_json::to_value(m).unwrap_or_default();
                value["levels"] = serde_json::json!(m.levels());
                value
            })
            .collect();
        out!("{}", serde_json::to_string(&models)?);
        return Ok(exit::OK);
    }
    let default = login.default_model().map(|m| m.id.clone());
    for m in &login.models {
        let context = m.context.map_or_else(|| "context unknown".to_owned(), |c| format!("{c} tokens"));
        let mark = if Some(&m.id) == default.as_ref() { " (default)" } else { "" };
        out!("{}{mark}  {context}  levels: {}", m.display_name(), m.levels().join(", "));
    }
    Ok(exit::OK)
}
