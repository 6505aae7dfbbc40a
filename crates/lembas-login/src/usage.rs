//! The month's use on a LLeMbas server (`GET /v1/usage`, `acp.md` *The HTTP API*): tokens and
//! what they cost, in each currency on its own — never added across currencies.

use std::collections::BTreeMap;

use lembas_config::{Login, LoginKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What the month (and this device) used, as the server counts it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MonthUsage {
    /// Where the month began, as the server says it.
    pub from: Option<String>,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// The month's cost in each currency its use was priced in (empty: nothing priced).
    pub cost_by_currency: BTreeMap<String, f64>,
    pub device_tokens_in: u64,
    pub device_tokens_out: u64,
}

impl MonthUsage {
    /// Reads the server's answer; `None` when it is not a usage answer at all.
    pub fn from_json(body: &Value) -> Option<MonthUsage> {
        let month = body.get("month")?;
        let n = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
        let cost_by_currency = month
            .get("cost_by_currency")
            .and_then(Value::as_object)
            .map(|costs| costs.iter().filter_map(|(c, v)| Some((c.clone(), v.as_f64()?))).collect())
            .unwrap_or_default();
        let device = body.get("device").cloned().unwrap_or(Value::Null);
        Some(MonthUsage {
            from: month.get("from").and_then(Value::as_str).map(str::to_owned),
            tokens_in: n(month, "tokens_in"),
            tokens_out: n(month, "tokens_out"),
            cost_by_currency,
            device_tokens_in: n(&device, "tokens_in"),
            device_tokens_out: n(&device, "tokens_out"),
        })
    }

    /// The month's cost as the status bar shows it (`€2.00 · $0.75`), or `None` when nothing
    /// was priced.
    pub fn cost_text(&self) -> Option<String> {
        let parts: Vec<String> = self
            .cost_by_currency
            .iter()
            .map(|(currency, amount)| match currency.to_ascii_uppercase().as_str() {
                "EUR" => format!("€{amount:.2}"),
                "USD" => format!("${amount:.2}"),
                "GBP" => format!("£{amount:.2}"),
                "JPY" => format!("¥{amount:.0}"),
                other => format!("{amount:.2} {other}"),
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join(" · "))
    }
}

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
