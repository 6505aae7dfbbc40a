//! The month's use on a LLeMbas server (`GET /v1/usage`, `acp.md` *The HTTP API*): tokens and
//! what they cost, in each currency on its own — never added across currencies.

use lembas_config::{Login, LoginKind};

pub use lembas_protocol::MonthUsage;

/// The month's use for a LLeMbas login; `None` for a plain model server, or when the server has
/// no usage to give (a 404, an instance without it) or cannot be reached — the status bar then
/// shows nothing rather than a guess.
pub async fn month_usage(login: &Login) -> Option<MonthUsage> {
    if login.kind != LoginKind::Llembas {
        return None;
    }
    let url = format!("{}/usage", login.base_url.trim_end_matches('/'));
    let mut request = lembas_model::catalog::http().get(&url);
    if let Some(token) = &login.secret {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    MonthUsage::from_json(&response.json().await.ok()?)
}

/// What an account's personalization says for the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Personalization {
    /// The personality's name (`default` for none).
    pub personality: String,
    /// The person's own personality text (`custom`).
    pub custom: Option<String>,
    /// The person's own instructions, for every conversation.
    pub instructions: Option<String>,
}

/// The account's personalization on a LLeMbas instance (`GET /v1/me/personalization`), when it
/// is there, available and on.
pub async fn personalization(login: &Login) -> Option<Personalization> {
    if login.kind != LoginKind::Llembas {
        return None;
    }
    let url = format!("{}/v1/me/personalization", login.server.trim_end_matches('/'));
    let mut request = lembas_model::catalog::http().get(&url).timeout(std::time::Duration::from_secs(5));
    if let Some(token) = &login.secret {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let body: serde_json::Value = response.json().await.ok()?;
    if body["enabled"] != true || body["available"] != true {
        return None;
    }
    let text = |key: &str| body[key].as_str().map(str::trim).filter(|t| !t.is_empty()).map(str::to_owned);
    Some(Personalization {
        personality: text("personality").unwrap_or_else(|| "default".to_owned()),
        custom: text("personality_custom"),
        instructions: text("instructions"),
    })
}

/// Keeps a personality chosen here on the instance (a partial `PUT`, `enabled: true`); why not,
/// in words.
pub async fn put_personality(login: &Login, name: &str) -> Result<(), String> {
    let url = format!("{}/v1/me/personalization", login.server.trim_end_matches('/'));
    let mut request = lembas_model::catalog::http()
        .put(&url)
        .timeout(std::time::Duration::from_secs(10))
        .json(&serde_json::json!({ "enabled": true, "personality": name }));
    if let Some(token) = &login.secret {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.map_err(|e| format!("cannot reach {}: {e}", login.server))?;
    match response.status().as_u16() {
        200..=299 => Ok(()),
        403 => Err(format!("{} does not keep personalization for this account or device", login.server)),
        code => Err(format!("{} answered {code}", login.server)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_currency_is_shown_on_its_own() {
        let usage = MonthUsage::from_json(&json!({
            "month": {"from": "2026-12-01", "tokens_in": 1200, "tokens_out": 300, "cost_money": null,
                      "cost_by_currency": {"EUR": 2.0, "USD": 0.75}},
            "device": {"tokens_in": 100, "tokens_out": 20}, "currency": "EUR", "unit": "money"
        }))
        .unwrap();
        assert_eq!(usage.cost_text().as_deref(), Some("€2.00 · $0.75"));
        assert_eq!((usage.tokens_in, usage.device_tokens_out), (1200, 20));
        let nothing = MonthUsage::from_json(&json!({"month": {"cost_by_currency": {}}})).unwrap();
        assert_eq!(nothing.cost_text(), None);
        let other = MonthUsage { cost_by_currency: [("CHF".to_owned(), 1.5)].into(), ..Default::default() };
        assert_eq!(other.cost_text().as_deref(), Some("1.50 CHF"));
        assert!(MonthUsage::from_json(&json!({"error": "x"})).is_none());
    }
}
